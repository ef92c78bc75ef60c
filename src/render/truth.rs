//! Ground truth for a rendered scene: every piece's footprint, pose, call and
//! margin (from [`crate::calls`]), and the camera's pose, as written to `truth.json`.

use crate::board::{Board, BoardKind, Construction, Layout};
use crate::calls::{self, FoulLine};
use crate::geom::{BoardPoint3, Footprint, PixelPoint};
use crate::piece::{PieceId, PieceKind, Team};
use crate::render::plan::pixel_in_frame;
use crate::render::scene::{piece_radius, piece_thickness, LoadedScene, PieceSpec};
use serde::{Deserialize, Serialize};

/// The truth-file format version this build writes.
pub const TRUTH_FORMAT: u32 = 1;

pub use crate::calls::PieceCall;

/// Where a piece is in 3D.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct PoseTruth {
    /// The piece's centre (on its axis, mid-thickness).
    pub centre: BoardPoint3,
    /// Height of its lowest and highest points.
    pub bottom_z_mm: f64,
    pub top_z_mm: f64,
    pub tilt_deg: f64,
    pub tilt_towards_deg: f64,
}

/// One piece's truth.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct PieceTruth {
    pub id: PieceId,
    pub kind: PieceKind,
    pub team: Option<Team>,
    /// Centre and radius seen from straight above (the calls' input).
    pub footprint: Footprint,
    pub pose: PoseTruth,
    pub call: PieceCall,
    /// Points of the hole or compartment it is in (washers and discs), if any.
    pub value: Option<u32>,
    /// Where the centre of its top face appears in the image (OpenCV pixel convention).
    pub image_centre: Option<PixelPoint>,
    /// Whether its whole top outline projects inside the image.
    pub in_frame: bool,
    /// The share of its top face the camera sees past the board's solids and the other pieces (a washer on the
    /// floor behind the board's end, one under another in a cup): as the external renders' own `visible_fraction`
    /// (of its pixels), a piece more than half hidden need not be found. Written only where under 1.
    #[serde(default = "all_visible", skip_serializing_if = "is_all_visible")]
    pub visible_fraction: f64,
}

/// A piece more than this fraction visible is "in view": the external set's own criterion for the pieces a
/// detector must find ("more than half visible"), and this project's for its own renders.
pub const IN_VIEW_FRACTION: f64 = 0.5;

impl PieceTruth {
    /// Whether a detector must find the piece: its whole top outline in the frame and more than half of it seen
    /// ([`IN_VIEW_FRACTION`]). Any other piece need not be found; found, it is measured as any other (`eval`).
    pub fn must_be_found(&self) -> bool {
        self.in_frame && self.visible_fraction > IN_VIEW_FRACTION
    }
}

fn all_visible() -> f64 {
    1.0
}

fn is_all_visible(v: &f64) -> bool {
    *v >= 1.0
}

/// A point on a piece's top face is tested from this far (mm) along its line of sight towards the camera: clear of
/// its own surface.
const SIGHT_CLEARANCE_MM: f64 = 0.5;

/// The share of `points` whose line of sight to the camera at `eye` nothing in `world` blocks.
fn seen_share(world: &crate::render::raycast::World, eye: BoardPoint3, points: &[BoardPoint3]) -> f64 {
    if points.is_empty() {
        return 0.0;
    }
    let seen = points
        .iter()
        .filter(|q| {
            let d = [eye.x_mm - q.x_mm, eye.y_mm - q.y_mm, eye.z_mm - q.z_mm];
            let n = (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]).sqrt();
            if !(n > SIGHT_CLEARANCE_MM) {
                return false;
            }
            let d = [d[0] / n, d[1] / n, d[2] / n];
            let o = [q.x_mm + d[0] * SIGHT_CLEARANCE_MM, q.y_mm + d[1] * SIGHT_CLEARANCE_MM, q.z_mm + d[2] * SIGHT_CLEARANCE_MM];
            !world.occluded(o, d, n - SIGHT_CLEARANCE_MM)
        })
        .count();
    seen as f64 / points.len() as f64
}

/// The camera's pose in the board frame.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CameraTruth {
    /// OpenCV `rvec`/`tvec`: board point `X` maps to `R(rvec) X + tvec` (mm).
    pub rvec: [f64; 3],
    pub tvec: [f64; 3],
    pub centre: BoardPoint3,
    /// Angle of the optical axis from straight down.
    pub tilt_deg: f64,
    /// The intrinsics file beside the truth.
    pub intrinsics_file: String,
}

impl CameraTruth {
    /// The true pose (`rvec`, `tvec`).
    pub fn pose(&self) -> crate::camera::CameraPose {
        crate::camera::CameraPose::from_rvec_tvec(self.rvec, self.tvec)
    }
}

/// The truth written beside an image.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Truth {
    pub format: u32,
    pub board: String,
    pub board_kind: BoardKind,
    /// The construction the scene was rendered with, when it overrides the board file's
    /// (the whole construction, not only the keys it overrides).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub construction: Option<Construction>,
    pub image: String,
    pub image_width: u32,
    pub image_height: u32,
    pub camera: CameraTruth,
    /// Shuffleboard: the foul line the calls used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub foul_line: Option<FoulLine>,
    pub pieces: Vec<PieceTruth>,
    /// The expected round score of every game played on this board, by game
    /// name, from the rules engine as `boardcall score` gives it (red threw
    /// first; `null` for a game whose round a single frame cannot decide).
    pub round_score: Option<serde_json::Value>,
    pub tags: Vec<String>,
    pub seed: u64,
}

/// A piece's call on `board` by the foundation's call functions, and its value.
pub fn call_piece(board: &Board, foul: FoulLine, p: &PieceSpec) -> Option<(PieceCall, Option<u32>)> {
    let r = piece_radius(board, p.kind)?;
    let h = piece_thickness(board, p.kind)?;
    let call = calls::call_piece(board, p.centre(h), r, p.tilt_deg, foul);
    Some((call, call.value(board).filter(|_| call.place().is_some())))
}

/// Points on a piece's top outline (the cap edge), in the board frame.
pub fn cap_edge_points(board: &Board, p: &PieceSpec, count: usize) -> Vec<BoardPoint3> {
    piece_radius(board, p.kind).map_or_else(Vec::new, |r| top_circle(board, p, r, count))
}

/// `count` points round the circle of radius `radius` about the centre of a piece's top face, in its plane.
fn top_circle(board: &Board, p: &PieceSpec, radius: f64, count: usize) -> Vec<BoardPoint3> {
    let Some(h) = piece_thickness(board, p.kind) else {
        return Vec::new();
    };
    let c = p.centre(h);
    let f = crate::render::raycast::frame_for_axis(p.axis());
    let top = [c.x_mm + f[2][0] * h / 2.0, c.y_mm + f[2][1] * h / 2.0, c.z_mm + f[2][2] * h / 2.0];
    (0..count)
        .map(|i| {
            let a = std::f64::consts::TAU * i as f64 / count as f64;
            let (s, co) = a.sin_cos();
            BoardPoint3::new(
                top[0] + radius * (co * f[0][0] + s * f[1][0]),
                top[1] + radius * (co * f[0][1] + s * f[1][1]),
                top[2] + radius * (co * f[0][2] + s * f[1][2]),
            )
        })
        .collect()
}

/// Points spread evenly over a piece's top face (a washer's ring round its hole): [`FACE_RINGS`] circles between its
/// hole (or its centre) and its rim, each with points in proportion to its length, [`RIM_POINTS`] on the outermost.
fn top_face_points(board: &Board, p: &PieceSpec) -> Vec<BoardPoint3> {
    let Some(r) = piece_radius(board, p.kind) else {
        return Vec::new();
    };
    let inner = match (p.kind, board.washer()) {
        (PieceKind::Washer, Some(w)) => w.washer_inner_diameter_mm / 2.0,
        _ => 0.0,
    };
    (0..FACE_RINGS)
        .flat_map(|k| {
            let rho = inner + (r - inner) * (k as f64 + 0.5) / FACE_RINGS as f64;
            top_circle(board, p, rho, ((RIM_POINTS as f64 * rho / r).round() as usize).max(4))
        })
        .collect()
}

/// A piece's top face is sampled on this many circles for its visibility ...
const FACE_RINGS: usize = 4;
/// ... with this many points on the outermost (one every 10 degrees).
const RIM_POINTS: usize = 36;

/// The truth for a validated scene whose image is written as `image_file`.
pub fn truth_for(ls: &LoadedScene, image_file: &str) -> Truth {
    let cam = ls.scene.camera.intrinsics;
    let world = crate::render::raycast::World::build(&ls.board, &ls.scene.pieces);
    let eye = ls.pose.centre();
    let pieces = ls
        .scene
        .pieces
        .iter()
        .filter_map(|p| {
            let (call, value) = call_piece(&ls.board, ls.scene.foul_line, p)?;
            let r = piece_radius(&ls.board, p.kind)?;
            let h = piece_thickness(&ls.board, p.kind)?;
            let c = p.centre(h);
            let t = p.tilt_deg.to_radians();
            let reach = r * t.sin() + h / 2.0 * t.cos();
            let axis = p.axis();
            let top = BoardPoint3::new(c.x_mm + axis[0] * h / 2.0, c.y_mm + axis[1] * h / 2.0, c.z_mm + axis[2] * h / 2.0);
            let image_centre = ls.pose.project(&cam, top);
            let in_frame = cap_edge_points(&ls.board, p, 16).iter().all(|q| pixel_in_frame(&cam, &ls.pose, *q, 0.0).is_some());
            let visible_fraction = seen_share(&world, eye, &top_face_points(&ls.board, p));
            Some(PieceTruth {
                id: p.id,
                kind: p.kind,
                team: p.id.team,
                footprint: Footprint::new(c.on_plane(), r),
                pose: PoseTruth {
                    centre: c,
                    bottom_z_mm: c.z_mm - reach,
                    top_z_mm: c.z_mm + reach,
                    tilt_deg: p.tilt_deg,
                    tilt_towards_deg: p.tilt_towards_deg,
                },
                call,
                value,
                image_centre,
                in_frame,
                visible_fraction,
            })
        })
        .collect::<Vec<PieceTruth>>();
    let reports = as_reports(&pieces);
    let round_score: serde_json::Map<String, serde_json::Value> = crate::rules::Rules::ALL
        .iter()
        .filter(|r| r.board_kind() == ls.board.kind() && (ls.board.kind() != crate::board::BoardKind::Washer || r.default_board() == ls.board.name))
        .map(|r| {
            let v = crate::score::score_round(*r, &[], &ls.board, Team::Red, &reports).unwrap_or(serde_json::Value::Null);
            (r.name().to_string(), v)
        })
        .collect();
    let fwd = ls.pose.rotation[2];
    Truth {
        format: TRUTH_FORMAT,
        board: ls.scene.board.clone(),
        board_kind: ls.board.kind(),
        construction: ls.scene.construction.is_some().then(|| ls.board.construction()),
        image: image_file.to_string(),
        image_width: cam.image_width,
        image_height: cam.image_height,
        camera: CameraTruth {
            rvec: ls.pose.rvec(),
            tvec: ls.pose.translation,
            centre: ls.pose.centre(),
            tilt_deg: (-fwd[2]).clamp(-1.0, 1.0).acos().to_degrees(),
            intrinsics_file: crate::fixture::CAMERA_FILE.to_string(),
        },
        foul_line: matches!(ls.board.layout, Layout::Shuffleboard(_)).then_some(ls.scene.foul_line),
        pieces,
        round_score: Some(serde_json::Value::Object(round_score)),
        tags: ls.scene.tags.clone(),
        seed: ls.scene.seed,
    }
}

/// The truth's pieces as the calls stage reports pieces (numbered the same way:
/// per team from the target end), so the rules engine can score them.
pub fn as_reports(truth: &[PieceTruth]) -> Vec<crate::score::PieceReport> {
    let mut out = Vec::new();
    let mut numbers: std::collections::BTreeMap<Option<crate::piece::Team>, u32> = std::collections::BTreeMap::new();
    let mut pieces: Vec<&PieceTruth> = truth.iter().collect();
    pieces.sort_by(|a, b| a.footprint.centre.y_mm.total_cmp(&b.footprint.centre.y_mm).then(a.footprint.centre.x_mm.total_cmp(&b.footprint.centre.x_mm)));
    for p in pieces {
        let n = numbers.entry(p.team).or_insert(0);
        *n += 1;
        let id = match p.team {
            Some(t) => crate::piece::PieceId::of_team(t, *n),
            None => crate::piece::PieceId::disc(*n),
        };
        let (boundary, margin, place) = (p.call.boundary(), p.call.margin_mm(), p.call.place());
        out.push(crate::score::PieceReport {
            id,
            kind: p.kind,
            team: p.team,
            x_mm: p.footprint.centre.x_mm,
            y_mm: p.footprint.centre.y_mm,
            top_z_mm: p.pose.top_z_mm,
            tilt_deg: p.pose.tilt_deg,
            measured_by: Default::default(),
            call: p.call.name().to_string(),
            value: p.value,
            place,
            boundary,
            margin_mm: margin,
            sigma_mm: 0.0,
            review: false,
            doubt: None,
        });
    }
    out
}

