//! The committed fixture set (`boardcall fixtures generate`): a fixed recipe of
//! scenes over all five boards, plain and hard cases, with camera, lens, light
//! and appearance drawn from PCG-64 seeded per fixture, so the set regenerates
//! byte for byte from its seed.

use crate::board::{Board, Layout};
use crate::calls::FoulLine;
use crate::camera::{Camera, Distortion};
use crate::fixture;
use crate::geom::{BoardPoint3, PixelPoint};
use crate::piece::{PieceId, PieceKind, Team};
use crate::render::plan::pixel_in_frame;
use crate::render::raycast::washer_ground_z;
use crate::render::scene::{
    piece_radius, piece_thickness, Appearance, CameraSpec, Effects, Light, LoadedScene, PieceSpec, PoseSpec, Scene, SCENE_FORMAT,
};
use crate::render::shade::hash;
use crate::render::truth::{cap_edge_points, Truth};
use crate::render::RenderError;
use rand::{RngExt, SeedableRng};
use rand_pcg::Pcg64;
use std::path::Path;

/// The seed of the committed set (`fixtures/README.md`).
pub const DEFAULT_SEED: u64 = 20240611;
/// Image size of the committed set.
pub const DEFAULT_WIDTH: u32 = 1280;
pub const DEFAULT_HEIGHT: u32 = 960;
/// Every piece's top outline stays at least this many pixels inside the frame.
pub(crate) const FRAME_MARGIN_PX: f64 = 24.0;
/// Pieces placed at random keep at least this much air between them (mm), so
/// that only the `touching` case has pieces in contact.
const MIN_GAP_MM: f64 = 2.0;
/// Discs on the field lie no further than this from the back wall: the committed set's
/// cameras frame the gate and the field just beyond it.
const SJOEL_FIELD_FAR_MM: f64 = 560.0;
/// Two `touching` weights: their footprints 0.05 mm apart, closer than any
/// camera resolves, without the solids intersecting.
const TOUCH_GAP_MM: f64 = 0.05;

/// The situations the set covers; all but `Plain` are hard cases.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Case {
    Plain,
    /// A weight within 0.5 to 3 mm (either side) of a line's edge.
    LineEdge,
    /// A weight hanging over the end by 0.3 to 3 mm, and one short of it by as little.
    Hanger,
    CornerHanger,
    /// Weights fallen into the gutter (side or end).
    Gutter,
    /// Two weights in contact.
    Touching,
    /// Washers propped tilted against a hole's rim.
    Leaner,
    TwoInHole,
    /// A washer whose centre lies within 3 mm of a rim.
    OnRim,
    /// A disc half through a gate opening.
    GateHalf,
    /// A disc resting on a partition.
    OnPartition,
}

impl Case {
    pub fn tag(self) -> &'static str {
        match self {
            Case::Plain => "plain",
            Case::LineEdge => "line_edge",
            Case::Hanger => "hanger",
            Case::CornerHanger => "corner_hanger",
            Case::Gutter => "gutter",
            Case::Touching => "touching",
            Case::Leaner => "leaner",
            Case::TwoInHole => "two_in_hole",
            Case::OnRim => "on_rim",
            Case::GateHalf => "gate_half",
            Case::OnPartition => "on_partition",
        }
    }
}

/// The recipe: which board and case each fixture shows, in order.
pub fn recipe() -> Vec<(&'static str, Case)> {
    use Case::*;
    let mut out = Vec::new();
    let shuffle = [Plain, Plain, Plain, Plain, Plain, LineEdge, LineEdge, LineEdge, Hanger, Hanger, CornerHanger, CornerHanger, Gutter, Gutter, Touching, Touching];
    out.extend(shuffle.iter().map(|c| ("shuffleboard-22ft", *c)));
    let sjoel = [Plain, Plain, Plain, Plain, Plain, Plain, GateHalf, GateHalf, GateHalf, OnPartition, OnPartition, OnPartition];
    out.extend(sjoel.iter().map(|c| ("sjoelbak", *c)));
    let washer = [Plain, Plain, Plain, Plain, Plain, Plain, Leaner, Leaner, TwoInHole, TwoInHole, OnRim, OnRim];
    for board in ["holeyboard", "yocu-4", "yocu-9"] {
        out.extend(washer.iter().map(|c| (board, *c)));
    }
    out
}

/// Settings of a generated set.
#[derive(Debug, Clone, Copy)]
pub struct GenerateConfig {
    pub seed: u64,
    pub width: u32,
    pub height: u32,
    /// Samples per pixel axis.
    pub supersample: u32,
}

impl Default for GenerateConfig {
    fn default() -> Self {
        GenerateConfig { seed: DEFAULT_SEED, width: DEFAULT_WIDTH, height: DEFAULT_HEIGHT, supersample: 2 }
    }
}

/// One planned fixture: its folder name and scene.
#[derive(Debug, Clone)]
pub struct Planned {
    pub name: String,
    pub scene: LoadedScene,
}

struct Placer<'a> {
    board: &'a Board,
    pieces: Vec<PieceSpec>,
    next: [u32; 3],
}

impl<'a> Placer<'a> {
    fn id(&mut self, kind: PieceKind, team: Option<Team>) -> PieceId {
        let slot = match team {
            Some(Team::Red) => 0,
            Some(Team::Blue) => 1,
            None => 2,
        };
        self.next[slot] += 1;
        match team {
            Some(t) => PieceId::of_team(t, self.next[slot]),
            None => {
                debug_assert_eq!(kind, PieceKind::Disc);
                PieceId::disc(self.next[slot])
            }
        }
    }

    /// Whether a piece at `(x, y, z)` keeps `gap` from every placed piece at a similar height.
    fn clear(&self, kind: PieceKind, x: f64, y: f64, z: f64, gap: f64) -> bool {
        let r = piece_radius(self.board, kind).unwrap_or(0.0);
        let h = piece_thickness(self.board, kind).unwrap_or(0.0);
        self.pieces.iter().all(|p| {
            let c = p.centre(h);
            let levels_apart = (c.z_mm - z).abs() > h + 1.0;
            levels_apart || (c.x_mm - x).hypot(c.y_mm - y) >= 2.0 * r + gap
        })
    }

    fn push(&mut self, kind: PieceKind, team: Option<Team>, x: f64, y: f64, z: Option<f64>, tilt: f64, towards: f64) {
        let id = self.id(kind, team);
        self.pieces.push(PieceSpec { id, kind, x_mm: x, y_mm: y, z_mm: z, tilt_deg: tilt, tilt_towards_deg: towards });
    }

    /// Tries up to 200 random spots from `spot` and places the first one clear of the others.
    fn scatter(&mut self, rng: &mut Pcg64, kind: PieceKind, team: Option<Team>, spot: &mut dyn FnMut(&mut Pcg64) -> (f64, f64, Option<f64>)) {
        let h = piece_thickness(self.board, kind).unwrap_or(0.0);
        for _ in 0..200 {
            let (x, y, z) = spot(rng);
            if self.clear(kind, x, y, z.unwrap_or(h / 2.0), MIN_GAP_MM) {
                self.push(kind, team, x, y, z, 0.0, 0.0);
                return;
            }
        }
    }
}

fn team_for(i: usize) -> Team {
    if i % 2 == 0 {
        Team::Red
    } else {
        Team::Blue
    }
}

pub(crate) fn shuffle_pieces(board: &Board, case: Case, rng: &mut Pcg64) -> Vec<PieceSpec> {
    let s = board.shuffleboard().expect("a shuffleboard");
    let (hw, r, g, h) = (board.surface.half_width(), s.weight_diameter_mm / 2.0, s.construction.gutter_width_mm, s.weight_height_mm);
    let gutter_z = -s.construction.gutter_depth_mm + h / 2.0;
    let mut pl = Placer { board, pieces: Vec::new(), next: [0; 3] };
    let mut t = rng.random_range(0..2usize);
    let mut team = || {
        t += 1;
        team_for(t)
    };
    match case {
        Case::Plain => {}
        Case::LineEdge => {
            for _ in 0..rng.random_range(1..=2) {
                let line = if rng.random_bool(0.5) { s.lines.trey_line_mm } else { s.lines.deuce_line_mm };
                let m = rng.random_range(0.5..3.0) * if rng.random_bool(0.5) { 1.0 } else { -1.0 };
                let x = rng.random_range(-hw + r + 5.0..hw - r - 5.0);
                let (tm, y) = (team(), line - r - m);
                if pl.clear(PieceKind::Weight, x, y, h / 2.0, MIN_GAP_MM) {
                    pl.push(PieceKind::Weight, Some(tm), x, y, None, 0.0, 0.0);
                }
            }
        }
        Case::Hanger => {
            let x = rng.random_range(-150.0..-30.0);
            let tm = team();
            pl.push(PieceKind::Weight, Some(tm), x, r - rng.random_range(0.3..3.0), None, 0.0, 0.0);
            let x = rng.random_range(30.0..150.0);
            let tm = team();
            pl.push(PieceKind::Weight, Some(tm), x, r + rng.random_range(0.3..3.0), None, 0.0, 0.0);
        }
        Case::CornerHanger => {
            let side = if rng.random_bool(0.5) { 1.0 } else { -1.0 };
            let over = rng.random_range(1.0..15.0);
            let tm = team();
            pl.push(PieceKind::Weight, Some(tm), side * (hw - r + over), r - rng.random_range(1.0..15.0), None, 0.0, 0.0);
        }
        Case::Gutter => {
            for _ in 0..rng.random_range(1..=2) {
                let tm = team();
                if rng.random_bool(0.6) {
                    let side = if rng.random_bool(0.5) { 1.0 } else { -1.0 };
                    let x = side * (hw + g / 2.0 + rng.random_range(-5.0..5.0));
                    pl.scatter(rng, PieceKind::Weight, Some(tm), &mut |rng| (x, rng.random_range(60.0..700.0), Some(gutter_z)));
                } else {
                    pl.scatter(rng, PieceKind::Weight, Some(tm), &mut |rng| (rng.random_range(-hw..hw), -g / 2.0 + rng.random_range(-5.0..5.0), Some(gutter_z)));
                }
            }
        }
        Case::Touching => {
            let (x, y) = (rng.random_range(-120.0..120.0), rng.random_range(r + 10.0..400.0));
            let a = rng.random_range(0.0..std::f64::consts::TAU);
            let d = 2.0 * r + TOUCH_GAP_MM;
            let (x2, y2) = (x + d * a.cos(), y + d * a.sin());
            let (x2, y2) = (x2.clamp(-hw + r, hw - r), y2.max(r));
            let (dx, dy) = (x2 - x, y2 - y);
            // Clamping may have moved the second weight: keep the contact exact.
            let k = d / dx.hypot(dy);
            let (ta, tb) = (team(), team());
            pl.push(PieceKind::Weight, Some(ta), x, y, None, 0.0, 0.0);
            pl.push(PieceKind::Weight, Some(tb), x + dx * k, y + dy * k, None, 0.0, 0.0);
        }
        other => unreachable!("{other:?} is not a shuffleboard case"),
    }
    // The rest of the round: up to 8 weights in all, spread over the scoring end.
    let total = rng.random_range(3..=8usize).max(pl.pieces.len());
    while pl.pieces.len() < total {
        let before = pl.pieces.len();
        let tm = team();
        pl.scatter(rng, PieceKind::Weight, Some(tm), &mut |rng| {
            (rng.random_range(-hw + r..hw - r), rng.random_range(r + 0.5..800.0), None)
        });
        if pl.pieces.len() == before {
            break;
        }
    }
    pl.pieces
}

pub(crate) fn washer_pieces(board: &Board, case: Case, rng: &mut Pcg64) -> Vec<PieceSpec> {
    let w = board.washer().expect("a washer board");
    let (hw, len) = (board.surface.half_width(), board.surface.length_mm);
    let (r, th) = (w.washer_outer_diameter_mm / 2.0, w.washer_thickness_mm);
    let bottom_z = -w.cup_depth_mm + th / 2.0;
    let mut pl = Placer { board, pieces: Vec::new(), next: [0; 3] };
    let mut t = rng.random_range(0..2usize);
    let mut team = || {
        t += 1;
        team_for(t)
    };
    let holes = w.holes.clone();
    // A washer propped on the rim of hole `hole`, its centre `d` from the hole's centre.
    let leaner = |pl: &mut Placer, tm: Team, hole: usize, d: f64, tilt: f64, a: f64| {
        let hl = holes[hole];
        let (x, y) = (hl.x_mm + d * a.cos(), hl.y_mm + d * a.sin());
        // Its underside rests on the rim where its edge crosses it.
        let z = w.propped_centre_z(&hl, d, tilt);
        pl.push(PieceKind::Washer, Some(tm), x, y, Some(z), tilt, a.to_degrees());
    };
    match case {
        Case::Plain => {}
        Case::Leaner => {
            for _ in 0..rng.random_range(1..=2) {
                let hole = rng.random_range(0..holes.len());
                if pl.pieces.iter().any(|p| (p.x_mm - holes[hole].x_mm).hypot(p.y_mm - holes[hole].y_mm) < holes[hole].radius() + r) {
                    continue;
                }
                let rh = holes[hole].radius();
                let tilt = rng.random_range(15.0..35.0);
                // Far enough in that the washer reaches over the rim.
                let d = rng.random_range((rh - r * 0.8 * f64::cos(f64::to_radians(tilt))).max(0.0)..rh - 4.0);
                let tm = team();
                leaner(&mut pl, tm, hole, d, tilt, rng.random_range(0.0..std::f64::consts::TAU));
            }
        }
        Case::TwoInHole => {
            let hole = rng.random_range(0..holes.len());
            let hl = holes[hole];
            let room = hl.radius() - r - 0.5;
            let a = rng.random_range(0.0..std::f64::consts::TAU);
            let off = rng.random_range(0.0..room);
            let (ta, tb) = (team(), team());
            pl.push(PieceKind::Washer, Some(ta), hl.x_mm + off * a.cos(), hl.y_mm + off * a.sin(), Some(bottom_z), 0.0, 0.0);
            // The second lies across the first, its low side on the cup bottom: tilted by the first's thickness.
            let tilt = (th / (2.0 * r)).asin().to_degrees();
            let off2 = rng.random_range(0.0..room);
            let a2 = a + std::f64::consts::PI + rng.random_range(-0.8..0.8);
            pl.push(PieceKind::Washer, Some(tb), hl.x_mm + off2 * a2.cos(), hl.y_mm + off2 * a2.sin(), Some(bottom_z + th / 2.0 + 0.2), tilt, a.to_degrees());
        }
        Case::OnRim => {
            let hole = rng.random_range(0..holes.len());
            let rh = holes[hole].radius();
            let a = rng.random_range(0.0..std::f64::consts::TAU);
            let d = rh + rng.random_range(0.3..3.0) * if rng.random_bool(0.5) { 1.0 } else { -1.0 };
            let tm = team();
            if d > rh {
                // Centre on the wood: lying flat, overhanging the hole.
                let hl = holes[hole];
                pl.push(PieceKind::Washer, Some(tm), hl.x_mm + d * a.cos(), hl.y_mm + d * a.sin(), None, 0.0, 0.0);
            } else {
                leaner(&mut pl, tm, hole, d, rng.random_range(12.0..25.0), a + std::f64::consts::PI);
            }
        }
        other => unreachable!("{other:?} is not a washer case"),
    }
    let total = rng.random_range(4..=8usize).max(pl.pieces.len());
    let mut guard = 0;
    while pl.pieces.len() < total && guard < 50 {
        guard += 1;
        let tm = team();
        let roll: f64 = rng.random();
        if roll < 0.25 {
            // Flat in a cup.
            let hl = holes[rng.random_range(0..holes.len())];
            let taken = pl.pieces.iter().any(|p| (p.x_mm - hl.x_mm).hypot(p.y_mm - hl.y_mm) < hl.radius() + r);
            if !taken {
                let (a, off) = (rng.random_range(0.0..std::f64::consts::TAU), rng.random_range(0.0..hl.radius() - r - 0.5));
                pl.push(PieceKind::Washer, Some(tm), hl.x_mm + off * a.cos(), hl.y_mm + off * a.sin(), Some(bottom_z), 0.0, 0.0);
            }
        } else if roll < 0.35 {
            // Off the far end, on the ground.
            let z = washer_ground_z(w);
            pl.scatter(rng, PieceKind::Washer, Some(tm), &mut |rng| (rng.random_range(-hw..hw), len + rng.random_range(r + 20.0..r + 150.0), Some(z)));
        } else {
            let holes = &holes;
            pl.scatter(rng, PieceKind::Washer, Some(tm), &mut |rng| loop {
                let (x, y) = (rng.random_range(-hw + r..hw - r), rng.random_range(r..len - r));
                if holes.iter().all(|h| (x - h.x_mm).hypot(y - h.y_mm) > h.radius() + r + 1.0) {
                    break (x, y, None);
                }
            });
        }
    }
    pl.pieces
}

/// Discs for a sjoelbak `case`: in the compartments, in the gates, and on the field as far
/// as `field_far_mm` from the back wall.
pub(crate) fn sjoel_pieces(board: &Board, case: Case, rng: &mut Pcg64, field_far_mm: f64) -> Vec<PieceSpec> {
    let s = board.sjoelbak().expect("a sjoelbak");
    let (hw, r, th) = (board.surface.half_width(), s.disc_diameter_mm / 2.0, s.disc_thickness_mm);
    let mut pl = Placer { board, pieces: Vec::new(), next: [0; 3] };
    let partitions = s.partitions();
    let half_wall = s.partition_width_mm / 2.0;
    match case {
        Case::Plain => {}
        Case::GateHalf => {
            for _ in 0..rng.random_range(1..=2) {
                let c = s.compartments[rng.random_range(0..s.compartments.len())];
                let play = (s.gate_opening_mm / 2.0 - r - 0.5).max(0.0);
                let x = c.x_mm + rng.random_range(-play..=play);
                pl.scatter(rng, PieceKind::Disc, None, &mut |rng| (x, rng.random_range(s.gate_front_mm - r + 3.0..s.gate_front_mm + r - 3.0), None));
            }
        }
        Case::OnPartition => {
            let p = partitions[rng.random_range(0..partitions.len())];
            let x = p + rng.random_range(-half_wall..half_wall);
            let y = rng.random_range(r + 2.0..s.gate_back_mm - r - 2.0);
            pl.push(PieceKind::Disc, None, x, y, Some(s.construction.partition_height_mm + th / 2.0), 0.0, 0.0);
        }
        other => unreachable!("{other:?} is not a sjoelbak case"),
    }
    let total = rng.random_range(4..=10usize).max(pl.pieces.len());
    let mut guard = 0;
    while pl.pieces.len() < total && guard < 60 {
        guard += 1;
        if rng.random_bool(0.5) {
            // In a compartment, clear of the partitions and walls.
            let i = rng.random_range(0..s.compartments.len());
            let lo = if i == 0 { -hw } else { partitions[i - 1] + half_wall };
            let hi = if i + 1 == s.compartments.len() { hw } else { partitions[i] - half_wall };
            if hi - lo < 2.0 * r + 1.0 {
                continue;
            }
            pl.scatter(rng, PieceKind::Disc, None, &mut |rng| {
                (rng.random_range(lo + r + 0.5..hi - r - 0.5), rng.random_range(r + 0.5..s.gate_back_mm - r - 0.5), None)
            });
        } else {
            pl.scatter(rng, PieceKind::Disc, None, &mut |rng| {
                (rng.random_range(-hw + r + 1.0..hw - r - 1.0), rng.random_range(s.gate_front_mm + r + 2.0..field_far_mm), None)
            });
        }
    }
    pl.pieces
}

/// Lens, pose and framing: a camera that sees every piece and the region of interest.
fn place_camera(board: &Board, pieces: &[PieceSpec], cfg: &GenerateConfig, rng: &mut Pcg64) -> CameraSpec {
    let (w, h) = (cfg.width, cfg.height);
    let hw = board.surface.half_width();
    // Region of interest on the board plane: the scoring end (or the whole board for washers).
    let (x0, x1, y0, y1) = match &board.layout {
        Layout::Shuffleboard(s) => (-hw - s.construction.gutter_width_mm, hw + s.construction.gutter_width_mm, -s.construction.gutter_width_mm, s.lines.deuce_line_mm + 150.0),
        Layout::Washer(_) => (-hw, hw, 0.0, board.surface.length_mm),
        Layout::Sjoelbak(s) => {
            let t = s.construction.wall_thickness_mm;
            (-hw - t, hw + t, -t, s.gate_front_mm + 200.0)
        }
    };
    let ([x0, x1, y0, y1], must_see) = region_to_see(board, pieces, [x0, x1, y0, y1]);
    let target = BoardPoint3::new((x0 + x1) / 2.0, (y0 + y1) / 2.0, 0.0);
    let tilt = rng.random_range(0.0f64..25.0).to_radians();
    let azimuth = rng.random_range(0.0..std::f64::consts::TAU);
    let yaw = rng.random_range(0.0..std::f64::consts::TAU);
    let k1 = rng.random_range(-0.25..0.05);
    let k2 = if k1 < 0.0 { -k1 * rng.random_range(0.1..0.5) } else { 0.0 };
    let (p1, p2) = (rng.random_range(-0.001..0.001), rng.random_range(-0.001..0.001));
    let distortion = Distortion::brown(k1, k2, p1, p2, 0.0);
    let fx = rng.random_range(0.85..1.2) * w as f64;
    let cam = jittered_camera(rng, w, h, fx, distortion);
    let span = (x1 - x0).hypot(y1 - y0) / 2.0;
    let look = LookFrom { target, tilt, azimuth, yaw, span };
    nearest_framing(cam, &look, &must_see, 0.3, 400).expect("a camera 800 times further away sees everything")
}

/// `region` (`[x0, x1, y0, y1]` on the board plane, mm) grown to hold every piece's
/// top outline, and the points a camera must see: those outlines and the grown region's corners.
pub(crate) fn region_to_see(board: &Board, pieces: &[PieceSpec], region: [f64; 4]) -> ([f64; 4], Vec<BoardPoint3>) {
    let [mut x0, mut x1, mut y0, mut y1] = region;
    let mut must_see: Vec<BoardPoint3> = Vec::new();
    for p in pieces {
        for q in cap_edge_points(board, p, 12) {
            x0 = x0.min(q.x_mm);
            x1 = x1.max(q.x_mm);
            y0 = y0.min(q.y_mm);
            y1 = y1.max(q.y_mm);
            must_see.push(q);
        }
    }
    for (x, y) in [(x0, y0), (x1, y0), (x0, y1), (x1, y1)] {
        must_see.push(BoardPoint3::new(x, y, 0.0));
    }
    ([x0, x1, y0, y1], must_see)
}

/// A `w` x `h` camera with lens `distortion` and focal length `fx` (widened until every
/// image corner has a ray), `fy` within 0.2 % of it and the principal point within 15 px
/// of the centre, as a calibrated real camera has them.
pub(crate) fn jittered_camera(rng: &mut Pcg64, w: u32, h: u32, mut fx: f64, distortion: Distortion) -> Camera {
    let invertible = |fx: f64| {
        let cam = Camera { image_width: w, image_height: h, fx, fy: fx, cx: (w as f64 - 1.0) / 2.0, cy: (h as f64 - 1.0) / 2.0, distortion };
        [(-0.5, -0.5), (w as f64, -0.5), (-0.5, h as f64), (w as f64, h as f64)].iter().all(|&(u, v)| cam.normalise(PixelPoint::new(u, v)).is_some())
    };
    while !invertible(fx) {
        fx *= 1.05;
    }
    Camera {
        image_width: w,
        image_height: h,
        fx,
        fy: fx * rng.random_range(0.998..1.002),
        cx: (w as f64 - 1.0) / 2.0 + rng.random_range(-15.0..15.0),
        cy: (h as f64 - 1.0) / 2.0 + rng.random_range(-15.0..15.0),
        distortion,
    }
}

/// Where a camera looks from: at `target`, tilted `tilt` from straight down towards
/// `azimuth`, turned `yaw` about its axis (radians); `span`: the half-diagonal of the
/// region to frame, mm.
pub(crate) struct LookFrom {
    pub target: BoardPoint3,
    pub tilt: f64,
    pub azimuth: f64,
    pub yaw: f64,
    pub span: f64,
}

/// The tightest framing that keeps every point of `must_see` in view: from `start` times
/// the distance at which the region's half-diagonal fills half the image height, 2 %
/// further each step, at most `steps` steps.
pub(crate) fn nearest_framing(cam: Camera, view: &LookFrom, must_see: &[BoardPoint3], start: f64, steps: usize) -> Option<CameraSpec> {
    let LookFrom { target, tilt, azimuth, yaw, span } = *view;
    let mut dist = start * span * cam.fx / (cam.image_height as f64 / 2.0);
    for _ in 0..steps {
        let position = BoardPoint3::new(
            target.x_mm + dist * tilt.sin() * azimuth.cos(),
            target.y_mm + dist * tilt.sin() * azimuth.sin(),
            dist * tilt.cos(),
        );
        let pose = PoseSpec::LookAt { position, target, up: [yaw.cos(), yaw.sin(), 0.0] };
        let p = pose.resolve().expect("a camera tilted short of horizontal is never looking along a horizontal up");
        if must_see.iter().all(|q| pixel_in_frame(&cam, &p, *q, FRAME_MARGIN_PX).is_some()) {
            return Some(CameraSpec { intrinsics: cam, pose });
        }
        dist *= 1.02;
    }
    None
}

pub(crate) fn lerp3(a: [f64; 3], b: [f64; 3], t: f64) -> [f64; 3] {
    [a[0] + (b[0] - a[0]) * t, a[1] + (b[1] - a[1]) * t, a[2] + (b[2] - a[2]) * t]
}

/// Lights: hard (one small lamp) or soft (two broad ones), aimed to light the
/// board at a typical irradiance.
pub(crate) fn place_lights(target: BoardPoint3, rng: &mut Pcg64, hard: bool) -> Vec<Light> {
    let kelvin = rng.random_range(2800.0..6500.0);
    let count = if hard { 1 } else { 2 };
    (0..count)
        .map(|_| {
            let a = rng.random_range(0.0..std::f64::consts::TAU);
            let off = rng.random_range(0.0..900.0);
            let z = rng.random_range(1200.0..2600.0);
            let position = BoardPoint3::new(target.x_mm + off * a.cos(), target.y_mm + off * a.sin(), z);
            let d2 = (off * off + z * z) / 1e6;
            let share = if hard { 1.0 } else { 0.55 };
            Light {
                position,
                intensity: share * rng.random_range(0.5..0.8) * d2,
                radius_mm: if hard { rng.random_range(0.0..15.0) } else { rng.random_range(200.0..450.0) },
                kelvin: kelvin + rng.random_range(-200.0..200.0),
            }
        })
        .collect()
}

/// The wood, paint, team colours, lacquer and exposure of a generated scene (the committed
/// set's draws, in its order).
pub(crate) fn draw_appearance(board: &Board, lights: &[Light], hard_light: bool, rng: &mut Pcg64) -> Appearance {
    let wood_t = rng.random_range(0.0..1.0);
    let light_wood = [0.62, 0.42, 0.24];
    let dark_wood = if matches!(board.layout, Layout::Sjoelbak(_)) { [0.45, 0.26, 0.12] } else { [0.30, 0.15, 0.06] };
    Appearance {
        texture_seed: rng.random(),
        wood_colour: lerp3(light_wood, dark_wood, wood_t),
        wood_grain: rng.random_range(0.15..0.5),
        grain_spacing_mm: rng.random_range(5.0..15.0),
        line_colour: lerp3([0.02, 0.02, 0.02], [0.10, 0.02, 0.02], rng.random_range(0.0..1.0)),
        paint_wear: rng.random_range(0.0..0.3),
        red_colour: [rng.random_range(0.5..0.7), rng.random_range(0.01..0.05), rng.random_range(0.01..0.05)],
        blue_colour: [rng.random_range(0.01..0.04), rng.random_range(0.05..0.12), rng.random_range(0.4..0.6)],
        disc_colour: lerp3([0.85, 0.72, 0.50], [0.78, 0.60, 0.38], rng.random_range(0.0..1.0)),
        specular: rng.random_range(0.03..0.2),
        shininess: rng.random_range(200.0..1500.0),
        ambient: if hard_light { rng.random_range(0.05..0.12) } else { rng.random_range(0.12..0.22) },
        exposure: rng.random_range(0.85..1.2),
        white_balance_kelvin: lights[0].kelvin + rng.random_range(-600.0..600.0),
        ..Appearance::default()
    }
}

/// The sensor and encoder of a generated scene: noise, sometimes blur, vignetting, JPEG 90.
pub(crate) fn draw_effects(rng: &mut Pcg64) -> Effects {
    Effects {
        read_noise: rng.random_range(0.8..2.5),
        shot_noise: rng.random_range(0.03..0.12),
        blur_sigma_px: if rng.random_bool(0.3) { rng.random_range(0.4..1.0) } else { 0.0 },
        vignetting: rng.random_range(0.75..0.95),
        jpeg_quality: 90,
    }
}

/// The scenes of the set, in order, with their folder names.
pub fn plan_set(cfg: &GenerateConfig) -> Result<Vec<Planned>, RenderError> {
    let mut out = Vec::new();
    for (i, (board_name, case)) in recipe().into_iter().enumerate() {
        let mut rng = Pcg64::seed_from_u64(hash(cfg.seed ^ hash(i as u64)));
        let board = Board::load(board_name).map_err(|source| crate::render::SceneError::Board { origin: "fixture recipe".into(), source })?;
        let pieces = match board.layout {
            Layout::Shuffleboard(_) => shuffle_pieces(&board, case, &mut rng),
            Layout::Washer(_) => washer_pieces(&board, case, &mut rng),
            Layout::Sjoelbak(_) => sjoel_pieces(&board, case, &mut rng, SJOEL_FIELD_FAR_MM),
        };
        let camera = place_camera(&board, &pieces, cfg, &mut rng);
        let hard_light = i % 2 == 0;
        let PoseSpec::LookAt { target, .. } = camera.pose else { unreachable!("the generator places cameras by look-at") };
        let lights = place_lights(target, &mut rng, hard_light);
        let appearance = draw_appearance(&board, &lights, hard_light, &mut rng);
        let effects = draw_effects(&mut rng);
        let mut tags = vec![case.tag().to_string(), if hard_light { "hard_light" } else { "soft_light" }.to_string()];
        if case != Case::Plain {
            tags.push("hard".into());
        }
        let scene = Scene {
            format: SCENE_FORMAT,
            board: board_name.to_string(),
            foul_line: FoulLine::Long,
            construction: None,
            camera,
            pieces,
            lights,
            appearance,
            effects,
            supersample: cfg.supersample,
            seed: rng.random(),
            tags,
        };
        let name = format!("{i:02}-{board_name}-{}", case.tag());
        let scene = scene.validate(&name)?;
        out.push(Planned { name, scene });
    }
    Ok(out)
}

/// Renders the whole set into `out_dir/<name>/`, on `threads` threads; returns each truth.
pub fn generate(cfg: &GenerateConfig, out_dir: &Path, threads: usize, progress: impl FnMut(&str)) -> Result<Vec<Truth>, RenderError> {
    render_planned(plan_set(cfg)?, out_dir, threads, progress)
}

/// Renders planned scenes into `out_dir/<name>/` (image, truth, camera, scene), on
/// `threads` threads, reporting each name when written; returns each truth.
pub(crate) fn render_planned(planned: Vec<Planned>, out_dir: &Path, threads: usize, mut progress: impl FnMut(&str)) -> Result<Vec<Truth>, RenderError> {
    let mut truths = Vec::new();
    for p in planned {
        let img = crate::render::render(&p.scene, threads);
        truths.push(fixture::write(&out_dir.join(&p.name), &p.scene, &img, fixture::IMAGE_FILE)?);
        progress(&p.name);
    }
    Ok(truths)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::truth::{call_piece, PieceCall};

    #[test]
    fn the_set_is_reproducible_and_covers_the_hard_cases() {
        let cfg = GenerateConfig::default();
        let a = plan_set(&cfg).unwrap();
        let b = plan_set(&cfg).unwrap();
        assert_eq!(a.len(), b.len());
        assert!(a.len() >= 60);
        for (x, y) in a.iter().zip(&b) {
            assert_eq!(x.scene.scene, y.scene.scene, "{}", x.name);
        }
        let hard = a.iter().filter(|p| p.scene.scene.tags.iter().any(|t| t == "hard")).count();
        assert!(hard * 3 >= a.len(), "{hard} hard of {}", a.len());
        for board in ["shuffleboard-22ft", "sjoelbak", "holeyboard", "yocu-4", "yocu-9"] {
            assert!(a.iter().filter(|p| p.scene.scene.board == board).count() >= 10, "{board}");
        }
    }

    #[test]
    fn hard_cases_produce_the_calls_they_are_named_for() {
        use crate::calls::{Boundary, ShuffleCall, SjoelCall, WasherCall};
        let set = plan_set(&GenerateConfig::default()).unwrap();
        for p in &set {
            let ls = &p.scene;
            let calls: Vec<PieceCall> = ls.scene.pieces.iter().map(|s| call_piece(&ls.board, FoulLine::Long, s).unwrap().0).collect();
            let any = |f: &dyn Fn(&PieceCall) -> bool| calls.iter().any(f);
            let ok = match ls.scene.tags[0].as_str() {
                "line_edge" => any(&|c| matches!(c, PieceCall::Shuffleboard(m) if matches!(m.boundary, Boundary::TreyLine | Boundary::DeuceLine) && (0.5..=3.0).contains(&m.margin_mm.abs()))),
                "hanger" => any(&|c| matches!(c, PieceCall::Shuffleboard(m) if m.call == ShuffleCall::Hanger && m.margin_mm <= 3.0))
                    && any(&|c| matches!(c, PieceCall::Shuffleboard(m) if m.call == ShuffleCall::Zone3 && m.boundary == Boundary::EndOverhang && m.margin_mm >= -3.0)),
                "corner_hanger" => any(&|c| matches!(c, PieceCall::Shuffleboard(m) if m.call == ShuffleCall::CornerHanger)),
                "gutter" => any(&|c| matches!(c, PieceCall::Shuffleboard(m) if m.call == ShuffleCall::Off)),
                "leaner" | "on_rim" => any(&|c| matches!(c, PieceCall::Washer(m) if matches!(m.call, WasherCall::Leaner { .. }) || matches!(m.boundary, Boundary::HoleRim { .. }) && m.margin_mm.abs() <= 3.0)),
                "two_in_hole" => {
                    let ins: Vec<_> = calls.iter().filter_map(|c| match c { PieceCall::Washer(m) => match m.call { WasherCall::In { hole } => Some(hole), _ => None }, _ => None }).collect();
                    ins.iter().any(|h| ins.iter().filter(|g| *g == h).count() >= 2)
                }
                "gate_half" => any(&|c| matches!(c, PieceCall::Sjoelen(m) if m.call == SjoelCall::None && m.boundary == Boundary::GateFront && m.margin_mm > -52.0)),
                "on_partition" => any(&|c| matches!(c, PieceCall::Sjoelen(m) if matches!(m.boundary, Boundary::Partition { .. }) && m.margin_mm < 0.0)),
                _ => true,
            };
            assert!(ok, "{} does not show its case: {calls:?}", p.name);
        }
    }
}
