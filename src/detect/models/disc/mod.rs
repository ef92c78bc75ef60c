//! The sjoelen disc: pale wood told from the board by its outline, a circle of
//! the disc's size; on the board's surface, on a partition's top, or on a stack
//! of discs where flat on the surface it would cross a partition or a wall (then
//! in doubt: the discs under it are hidden), or where a disc lies partly under it
//! (its outline's edges split between two circles of a disc's size, or a crescent
//! of one beside its rim: [`crate::detect::split`]). Discs the circle search misses
//! (against a wall, a partition, the gate bar or another disc, or washed out by
//! glare) are searched for in the pale colour left over, where a disc may count
//! (in the compartments and the gate, not deep in the field).

use super::{PieceModel, Rest, RestHeight};
use crate::board::{PieceSize, Sjoelbak};
use crate::detect::proposals::{self, MIN_PIECE_SEPARATION, UNACCOUNTED_AREA_FRACTION};
use crate::detect::sight::Occluders;
use crate::detect::verify::{Ctx, PieceShape};
use crate::detect::split;
use crate::detect::{DetectError, Detection, Detections, Unexplained};
use crate::geom::{BoardPoint, Footprint};
use crate::measure::{CircleFit, FitConfig, MIN_EDGE_POINTS};

mod pile;
mod recovery;
mod stacks;

/// A disc whose centre lies further than this many radii past the gate bar's front lies wholly in the field,
/// clear of the gate by a radius (a disc touching the gate's front has its centre one radius past it; the second
/// radius takes in the pose's and the fit's few millimetres): it counts for nothing (the rules count the discs
/// that have passed the gate's front completely, and the jury returns the rest for the next sub-turn). The costly
/// searches for discs the circle search missed (recovery, discs on stacks) look only nearer, where a disc counts
/// or may, and only there is pale colour no disc explains a review. (Sjoelbak bench frame: recovery over the
/// field's glare and two stack searches on the field's grain were two thirds of the score path, and found
/// nothing; own scenes 16-18: 15-30 discs' worth of the field's glare flagged every frame.)
const FIELD_CLEARANCE_RADII: f64 = 2.0;
/// A disc fitted flat on the surface whose outline crosses a partition or a
/// wall by more than this (mm) cannot lie there: the outline fit's error is a
/// few tenths of a millimetre and a board's build a millimetre at most. It
/// rests on something: another disc (a stack) or the partition. The same
/// error bounds how far beyond a partition's top a disc lying flat on it may
/// seem to have its centre.
const SOLID_OVERLAP_MM: f64 = 1.0;
/// Sigmas of the camera pose's error allowed to a disc seeming to cross a
/// partition or a wall: three, as a call is reviewed within three of its sigmas
/// (`score::REVIEW_SIGMAS`).
const OVERLAP_POSE_SIGMAS: f64 = 3.0;
/// Discs under a stacked one tried: one or two (a pile of three in a
/// compartment is the most the fixtures and the rules' examples show).
const MAX_DISCS_BELOW: usize = 2;
/// The heights (mm) a partition's top may stand above the playing surface: a
/// disc measured on one is placed within them. Boards' partitions stand some
/// 15-30 mm (a disc is 10-13 mm thick and must not ride over one).
const PARTITION_HEIGHT_MM: (f64, f64) = (10.0, 60.0);

/// Edges this near (mm) a partition, a wall or the gate bar are their faces' (wood, as the discs are), not a
/// disc's: a face 20-30 mm high seen obliquely lies a few millimetres beside its foot at a disc's height.
const SOLID_FACE_MARGIN_MM: f64 = 5.0;

/// A circle proposal that neither one disc nor two explain: where the circle search put it, and, where its
/// one-disc fit was refused only for an uneven face ([`DetectError::UnevenFace`]), that fit's centre and the reason.
struct LeftOutline {
    proposal: BoardPoint,
    uneven: Option<(BoardPoint, String)>,
}

pub(super) struct DiscModel {
    shape: PieceShape,
    /// Partitions' centres across the board (mm), their half width plus a disc's radius, their half width, and the
    /// height of a disc on one of the board's nominal height (where one is first tried).
    partitions: Vec<f64>,
    partition_reach_mm: f64,
    half_partition_mm: f64,
    on_partition_z_mm: f64,
    /// Partitions stand in the compartments, `y` below this (the gate bar's back).
    compartments_end_mm: f64,
    /// The gate bar's player-side face.
    gate_front_mm: f64,
    /// The gate's openings across the board, `(left, right)` (mm): the bar stands between them.
    openings: Vec<(f64, f64)>,
    /// The walls' inner faces, this far (mm) either side of the centre line.
    half_width_mm: f64,
    /// How far (mm) a disc flat on the surface may seem to cross a partition or a wall and still be taken to
    /// touch it: the fit's and the board's error ([`SOLID_OVERLAP_MM`]) and three of the pose's sigmas (a pose
    /// that far off moves the disc that far against the board's solids).
    overlap_tolerance_mm: f64,
}

impl DiscModel {
    /// The model of a sjoelbak's discs, seen with a camera pose that places a point on the board within
    /// `pose_sigma_mm` (standard uncertainty).
    pub fn new(p: PieceSize, s: &Sjoelbak, board_half_width: f64, pose_sigma_mm: f64) -> DiscModel {
        let shape = PieceShape { kind: p.kind, radius_mm: p.radius_mm, smallest_outline_mm: p.radius_mm, footprint_radius_mm: p.radius_mm, top_z_mm: p.thickness_mm, team_coloured: false, side_mm: p.thickness_mm };
        DiscModel {
            shape,
            partitions: s.partitions(),
            partition_reach_mm: s.partition_width_mm / 2.0 + p.radius_mm,
            half_partition_mm: s.partition_width_mm / 2.0,
            on_partition_z_mm: s.construction.partition_height_mm + s.disc_thickness_mm,
            compartments_end_mm: s.gate_back_mm,
            gate_front_mm: s.gate_front_mm,
            openings: s.openings(),
            half_width_mm: board_half_width,
            overlap_tolerance_mm: SOLID_OVERLAP_MM + OVERLAP_POSE_SIGMAS * pose_sigma_mm.max(0.0),
        }
    }

    /// How far (mm) a disc flat on the surface at `c` would cross into a
    /// partition or a wall, and which; `None` where it is clear of both.
    fn into_solid(&self, c: BoardPoint) -> Option<(f64, &'static str)> {
        let r = self.shape.radius_mm;
        let wall = c.x_mm.abs() + r - self.half_width_mm;
        let partition = if c.y_mm < self.compartments_end_mm {
            self.partitions.iter().map(|p| self.partition_reach_mm - (c.x_mm - p).abs()).fold(f64::NEG_INFINITY, f64::max)
        } else {
            f64::NEG_INFINITY
        };
        let (by, what) = if wall >= partition { (wall, "a wall") } else { (partition, "a partition") };
        (by > self.overlap_tolerance_mm).then_some((by, what))
    }

    /// Whether a board point lies on or within [`SOLID_FACE_MARGIN_MM`] of a partition, a wall or the gate bar.
    fn by_solid(&self, p: BoardPoint) -> bool {
        p.x_mm.abs() > self.half_width_mm - SOLID_FACE_MARGIN_MM || self.on_partition_or_gate_bar(p, SOLID_FACE_MARGIN_MM)
    }

    /// Whether a board point lies on a partition's or the gate bar's footprint grown by `margin_mm`.
    fn on_partition_or_gate_bar(&self, p: BoardPoint, margin_mm: f64) -> bool {
        let m = margin_mm;
        let on_partition = p.y_mm < self.compartments_end_mm + m && self.partitions.iter().any(|q| (p.x_mm - q).abs() < self.half_partition_mm + m);
        // The bar stands between the openings: a disc passing through one lies on the surface there.
        let in_opening = self.openings.iter().any(|&(l, r)| p.x_mm > l + m && p.x_mm < r - m);
        let on_gate_bar = p.y_mm > self.compartments_end_mm - m && p.y_mm < self.gate_front_mm + m && !in_opening;
        on_partition || on_gate_bar
    }

    /// Whether disc `d` would overlap disc `p` at one height: two discs at one height cannot (their centres are a
    /// diameter apart, less the fits' error); one on a partition or a stack can lie over one beside it.
    fn collide(&self, p: &Detection, d: &Detection) -> bool {
        p.footprint.centre.distance(d.footprint.centre) < MIN_PIECE_SEPARATION * self.shape.radius_mm && (p.top_z_mm - d.top_z_mm).abs() < self.shape.top_z_mm
    }

    /// Whether a disc's centre at `c` lies over a partition's top, as one lying flat on it must (beside it, the
    /// disc would tip off), within the fit's error.
    fn over_partition_top(&self, c: BoardPoint) -> bool {
        c.y_mm < self.compartments_end_mm && self.partitions.iter().any(|p| (c.x_mm - p).abs() <= self.half_partition_mm + SOLID_OVERLAP_MM)
    }

    /// Whether a disc could lie at `c` and be seen there: it may rest there ([`DiscModel::may_rest`]) and the
    /// camera's line of sight to its top is clear of the board's solids.
    fn may_lie(&self, cx: &Ctx, c: BoardPoint) -> bool {
        self.may_rest(c) && cx.sees(c.at_height(self.shape.top_z_mm))
    }

    /// Whether a disc could rest at `c` on the surface: inside its walls (a disc beyond them is off the board
    /// and counts for nothing, and what lies there, a table of the discs' own wood, is none of the game's) and
    /// not on the footprint of the gate bar or a partition, whose own wood shows there. Whether the camera sees it
    /// is another matter: part of a disc may lie under a bridged gate bar.
    fn may_rest(&self, c: BoardPoint) -> bool {
        self.within_walls(c) && !self.on_partition_or_gate_bar(c, 0.0)
    }

    /// Whether a disc about board point `c` may count: it lies inside the walls, in the compartments or the gate,
    /// or in the field no further than [`FIELD_CLEARANCE_RADII`] past the gate's front (it may touch the gate).
    /// Beyond, in the field, a disc counts for nothing.
    fn may_count(&self, c: BoardPoint) -> bool {
        self.within_walls(c) && c.y_mm < self.gate_front_mm + FIELD_CLEARANCE_RADII * self.shape.radius_mm
    }

    /// What the board says of the discs' places. An outline fitted flat on the
    /// surface with its centre beyond a wall, which no stack of discs explains
    /// ([`PieceModel::rest`] tried), is no disc on the board: it is reported as
    /// unexplained (the frame needs review), never scored. One fitted flat across a
    /// partition or a wall with its centre inside them is in doubt: it rests on
    /// something (another disc, or tilted against the partition or the wall), its
    /// place uncertain. So is a disc resting on another (its height is a stack's,
    /// the discs under it partly or wholly hidden), and so are two fitted flat
    /// closer than a diameter ([`DiscModel::overlap_with_flat`]).
    fn settle_rests(&self, out: &mut Detections) {
        let z = self.shape.top_z_mm;
        // The discs read flat on the surface inside the walls: no two of them can overlap.
        let flat: Vec<BoardPoint> = out.pieces.iter().filter(|d| self.lies_flat(d) && self.within_walls(d.footprint.centre)).map(|d| d.footprint.centre).collect();
        let mut kept = Vec::with_capacity(out.pieces.len());
        for mut d in std::mem::take(&mut out.pieces) {
            if d.kind != self.shape.kind {
                kept.push(d);
                continue;
            }
            let c = d.footprint.centre;
            let why = if self.lies_flat(&d) {
                match self.into_solid(c) {
                    Some((by, what)) if !self.within_walls(c) => {
                        out.unexplained.push(Unexplained {
                            kind: self.shape.kind,
                            team: None,
                            centre: c,
                            area_mm2: std::f64::consts::PI * self.shape.radius_mm * self.shape.radius_mm,
                            reason: format!("a disc's outline centred beyond a wall, that flat on the surface would cross {what} by {by:.1} mm and that no stack of discs explains: no disc on the board"),
                        });
                        continue;
                    }
                    Some((by, what)) => Some(format!("fitted flat on the surface it would cross {what} by {by:.1} mm: it rests on something (another disc?), its place is uncertain")),
                    None => self.overlap_with_flat(c, &flat).map(|by| {
                        format!("fitted flat on the surface it would overlap another disc read flat by {by:.1} mm: one rests on the other (a stack, read flat), their places uncertain")
                    }),
                }
            } else if !self.over_partition_top(c) {
                let below = ((d.top_z_mm - z) / z).round();
                Some(format!("it rests on {below:.0} other disc(s): a stack, the discs under it partly or wholly hidden"))
            } else {
                None
            };
            if let Some(why) = why {
                d.add_doubt(why);
            }
            kept.push(d);
        }
        out.pieces = kept;
    }

    /// How far (mm) a disc flat on the surface at `c` would overlap the nearest of the discs read flat at `flat`
    /// (itself among them), beyond what both fits' and the pose's error allow ([`DiscModel::overlap_tolerance_mm`],
    /// once for each disc); `None` where it overlaps none so far. Two discs lying flat are a diameter apart at
    /// least: a disc lying on another, seen from a camera off to its side, reads flat some millimetres along the
    /// line of sight, over the disc it rests on.
    fn overlap_with_flat(&self, c: BoardPoint, flat: &[BoardPoint]) -> Option<f64> {
        let diameter = 2.0 * self.shape.radius_mm;
        let by = flat.iter().map(|q| q.distance(c)).filter(|&d| d > 1e-6).map(|d| diameter - d).fold(f64::NEG_INFINITY, f64::max);
        (by > 2.0 * self.overlap_tolerance_mm).then_some(by)
    }

    /// Whether `d` is one of these discs fitted lying flat on the surface (at a disc's height).
    fn lies_flat(&self, d: &Detection) -> bool {
        d.kind == self.shape.kind && (d.top_z_mm - self.shape.top_z_mm).abs() < 1e-6
    }

    /// Whether a board point lies inside the side and back walls' inner faces.
    fn within_walls(&self, p: BoardPoint) -> bool {
        p.x_mm.abs() < self.half_width_mm && p.y_mm > 0.0
    }

    /// Circles of the disc's size, each of `proposed` verified by an outline fit; colour
    /// decides nothing but the fill check. A proposal whose outline fits a
    /// circle of another size is no disc (the search proposes freely: wood
    /// grain and shading make circles too); a disc it misses that way is left
    /// to recovery.
    ///
    /// Returns the proposals whose outline neither one disc nor two explain: tried on a stack
    /// ([`DiscModel::on_a_stack`]) once every disc lying flat is found.
    fn verify_circles(&self, cx: &Ctx, proposed: &[BoardPoint], out: &mut Detections) -> Vec<LeftOutline> {
        let r = self.shape.radius_mm;
        let mut unexplained_outlines = Vec::new();
        for &centre in proposed {
            let start = Footprint::new(centre, r);
            match cx.measure(start, None, 0) {
                Ok(d) if d.doubt.is_some() => {}
                Ok(d) => {
                    if !out.pieces.iter().any(|p| p.footprint.centre.distance(d.footprint.centre) < r) {
                        out.pieces.push(d);
                    }
                }
                // An outline that is no one disc may be two: one lying on another, or two touching.
                Err(e @ (DetectError::NotAPiece { .. } | DetectError::UnevenFace { .. })) => {
                    let before = out.pieces.len();
                    let upper_at = self.split_pair(cx, centre, out);
                    if out.pieces.len() == before {
                        let uneven = match e {
                            DetectError::UnevenFace { x_mm, y_mm, .. } => Some((BoardPoint::new(x_mm, y_mm), e.to_string())),
                            _ => None,
                        };
                        unexplained_outlines.push(LeftOutline { proposal: upper_at.unwrap_or(centre), uneven });
                    }
                }
                Err(DetectError::Measure(_)) => {}
                Err(e) => out.unexplained.push(Unexplained { kind: self.shape.kind, team: None, centre, area_mm2: 0.0, reason: e.to_string() }),
            }
        }
        unexplained_outlines
    }

}

impl PieceModel for DiscModel {
    fn shape(&self) -> PieceShape {
        self.shape
    }

    /// Pale wood on wood under glare makes colour blobs unreliable; a disc's
    /// circular edge of known size is not: circles first, then recovery.
    fn find(&self, cx: &Ctx, out: &mut Detections) {
        let proposed = proposals::circles(cx);
        let unexplained_outlines = self.verify_circles(cx, &proposed, out);
        self.look_under(cx, out, 0);
        let verified = out.pieces.len();
        self.recover(cx, out);
        // A disc recovery finds may lie on another as well.
        self.look_under(cx, out, verified);
        // Where a disc may count: one on a stack in the field would count for nothing.
        for left in unexplained_outlines.iter().filter(|left| self.may_count(left.proposal)) {
            self.on_a_stack(cx, left.proposal, out);
        }
        // A crisp outline of a disc's size rejected only for its uneven face, that no disc found explains, may be
        // a disc half in a shadow: the frame needs review, the disc is never silently dropped. As for the faint
        // circles, wherever a disc may rest: the outline was seen, whether or not the camera sees its middle.
        for (at, why) in unexplained_outlines.into_iter().filter_map(|left| left.uneven) {
            let explained = out.pieces.iter().any(|d| cx.seen_on_grid(d).distance(at) < self.shape.radius_mm) || out.unexplained.iter().any(|u| u.centre.distance(at) < self.shape.radius_mm);
            if !explained && self.may_rest(at) {
                let area_mm2 = std::f64::consts::PI * self.shape.radius_mm * self.shape.radius_mm;
                out.unexplained.push(Unexplained { kind: self.shape.kind, team: None, centre: at, area_mm2, reason: format!("{why}: a disc in a shadow, or none") });
            }
        }
        // Discs read flat whose size and side say they top a pile.
        self.read_piles(cx, out);
        self.flag_faint_circles(cx, &proposed, out);
        // Pale colour no disc accounts for, where a disc may count. Further into the field it is the board's own
        // glare in most frames (own scenes 16-18: 15-30 discs' worth), and a disc there counts for nothing.
        proposals::account_for_colour(cx, 0, None, out, &|c| self.may_count(c) && self.may_lie(cx, c), &[]);
        self.settle(cx, out);
    }

    /// What the discs' rests say: see [`DiscModel::settle_rests`].
    fn settle(&self, _cx: &Ctx, out: &mut Detections) {
        self.settle_rests(out);
    }

    /// A disc resting on a partition lies on its top, higher by the
    /// partition's height: where the outline overlaps a partition, the height
    /// whose fitted radius is the disc's own is the real one.
    fn rest(&self, cx: &Ctx, fit: CircleFit, class: usize) -> Result<Rest, DetectError> {
        let (z, r) = (self.shape.top_z_mm, self.shape.radius_mm);
        if self.into_solid(fit.footprint.centre).is_none() {
            return Ok(Rest::fixed(z, fit));
        }
        let refit = |high: f64| {
            let start = cx.along_sight(fit.footprint.centre.at_height(z), high).unwrap_or(fit.footprint.centre);
            cx.fit(Footprint::new(start, fit.footprint.radius_mm), high, class).ok()
        };
        if self.partitions.iter().any(|p| (fit.footprint.centre.x_mm - p).abs() < self.partition_reach_mm) {
            // On a partition of the board's height its outline is nearer the disc's size than on the surface: it
            // rests on the partition. How high a partition stands is the maker's choice, so the height is then
            // measured from the outline's size; flat on the top, the disc's centre lies over it.
            let on_top = refit(self.on_partition_z_mm);
            if on_top.as_ref().is_some_and(|up| (up.footprint.radius_mm - r).abs() < (fit.footprint.radius_mm - r).abs()) {
                let (measured, sigma_mm) = cx.height_from_size(&fit, r);
                // A size known less well than the heights partitions are built to says nothing: the board's own
                // height then, uncertain by that range's spread (varied 17: a disc on a partition 19.5 mm high, seen
                // at a few mm a pixel, its top measured at 70.7 mm, sigma 17 mm: placed 15 mm off; now 0.1 mm).
                let spread = super::uniform_sigma_mm(PARTITION_HEIGHT_MM.1 - PARTITION_HEIGHT_MM.0);
                let (high, height, up) = if sigma_mm < spread {
                    let high = measured.clamp(z + PARTITION_HEIGHT_MM.0, z + PARTITION_HEIGHT_MM.1);
                    (high, RestHeight::FromSize { sigma_mm }, refit(high))
                } else {
                    (self.on_partition_z_mm, RestHeight::Uncertain { sigma_mm: spread }, on_top)
                };
                if let Some(up) = up.filter(|up| self.over_partition_top(up.footprint.centre)) {
                    return Ok(Rest { z_mm: high, fit: up, height });
                }
            }
        }
        // Across a partition or a wall at the surface: on a stack of discs,
        // the lowest whose place there is clear (flagged in `settle`).
        for below in 1..=MAX_DISCS_BELOW {
            let high = z * (below + 1) as f64;
            if let Some(up) = refit(high).filter(|up| self.into_solid(up.footprint.centre).is_none()) {
                return Ok(Rest::fixed(high, up));
            }
        }
        Ok(Rest::fixed(z, fit))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::board::Board;
    use crate::piece::PieceKind;

    fn model() -> DiscModel {
        let board = Board::load("sjoelbak").unwrap();
        DiscModel::new(board.piece(), board.sjoelbak().unwrap(), board.surface.half_width(), 0.0)
    }

    fn disc(x: f64, y: f64, top_z: f64) -> Detection {
        Detection::clean_outline(PieceKind::Disc, None, Footprint::new(BoardPoint::new(x, y), 26.0), top_z)
    }

    #[test]
    fn a_flat_disc_may_touch_a_partition_or_wall_but_not_cross_one() {
        let m = model();
        // Compartment 3 spans x = 3..97 between partitions 6 mm wide at x = 0 and 100.
        assert!(m.into_solid(BoardPoint::new(50.0, 50.0)).is_none());
        // Touching the partition's face (centre 3 + 26 from its middle), within the tolerance.
        assert!(m.into_solid(BoardPoint::new(29.5, 50.0)).is_none());
        let (by, what) = m.into_solid(BoardPoint::new(25.0, 50.0)).unwrap();
        assert!((by - 4.0).abs() < 1e-9 && what == "a partition", "{by} {what}");
        // Against the wall at x = 200.
        let (by, what) = m.into_solid(BoardPoint::new(180.0, 50.0)).unwrap();
        assert!((by - 6.0).abs() < 1e-9 && what == "a wall", "{by} {what}");
        // Partitions stand only in the compartments: on the field the same x is free.
        assert!(m.into_solid(BoardPoint::new(25.0, 800.0)).is_none());
    }

    #[test]
    fn the_gate_bar_stands_between_its_openings() {
        let m = model();
        // The bar occupies 100 <= y <= 120; compartment 3's opening spans x = 20..80.
        assert!(!m.on_partition_or_gate_bar(BoardPoint::new(50.0, 110.0), 0.0), "a disc passing through the opening");
        assert!(m.on_partition_or_gate_bar(BoardPoint::new(100.0, 110.0), 0.0), "the block between two openings");
        // Within the faces' margin of an opening's side, the block's wood.
        assert!(m.on_partition_or_gate_bar(BoardPoint::new(22.0, 110.0), 5.0));
        assert!(!m.on_partition_or_gate_bar(BoardPoint::new(50.0, 110.0), 5.0));
    }

    #[test]
    fn a_pose_known_less_well_allows_a_disc_more_overlap() {
        let board = Board::load("sjoelbak").unwrap();
        // Typed points' pose, 1.3 mm sigma: 4 mm into a partition is the pose's error (1 + 3 x 1.3 = 4.9 mm).
        let m = DiscModel::new(board.piece(), board.sjoelbak().unwrap(), board.surface.half_width(), 1.3);
        assert!(m.into_solid(BoardPoint::new(25.0, 50.0)).is_none());
        let (by, _) = m.into_solid(BoardPoint::new(23.0, 50.0)).unwrap();
        assert!((by - 6.0).abs() < 1e-9, "{by}");
    }

    /// The searches for missed discs look where a disc may count: in the compartments, in the gate, and touching
    /// its front (a centre a radius past it, 26 mm), not deep in the field nor beyond a wall.
    #[test]
    fn missed_discs_are_looked_for_where_a_disc_may_count() {
        let m = model();
        let gate_front = 120.0;
        assert!(m.may_count(BoardPoint::new(-150.0, 40.0)), "in a compartment");
        assert!(m.may_count(BoardPoint::new(0.0, 110.0)), "in the gate");
        assert!(m.may_count(BoardPoint::new(0.0, gate_front + 26.0 + 5.0)), "touching the gate's front, the pose a few mm off");
        assert!(!m.may_count(BoardPoint::new(0.0, gate_front + 60.0)), "clear of the gate, in the field");
        assert!(!m.may_count(BoardPoint::new(0.0, 900.0)), "deep in the field");
        assert!(!m.may_count(BoardPoint::new(260.0, 40.0)), "beyond a wall");
    }

    #[test]
    fn a_disc_across_a_partition_or_on_a_stack_is_in_doubt_and_one_beyond_a_wall_unexplained() {
        let m = model();
        let mut d = Detections {
            pieces: vec![disc(150.0, 50.0, 13.0), disc(25.0, 50.0, 13.0), disc(-150.0, 50.0, 26.0), disc(100.0, 50.0, 33.0), disc(-190.0, -20.0, 13.0), disc(210.0, 60.0, 13.0)],
            ..Default::default()
        };
        m.settle_rests(&mut d);
        assert!(d.pieces[0].doubt.is_none(), "{:?}", d.pieces[0]);
        assert!(d.pieces[1].doubt.as_deref().unwrap_or_default().contains("cross a partition by 4.0 mm"), "{:?}", d.pieces[1]);
        assert!(d.pieces[2].doubt.as_deref().unwrap_or_default().contains("rests on 1 other disc"), "{:?}", d.pieces[2]);
        // On a partition's top (20 mm + the disc's 13): a place the board allows.
        assert!(d.pieces[3].doubt.is_none(), "{:?}", d.pieces[3]);
        // Centred behind the back wall and beyond a side wall: no disc on the board, a review, never scored.
        assert_eq!(d.pieces.len(), 4, "{:?}", d.pieces);
        assert_eq!(d.unexplained.len(), 2, "{:?}", d.unexplained);
        assert!(d.unexplained.iter().all(|u| u.reason.contains("beyond a wall")), "{:?}", d.unexplained);
    }

    #[test]
    fn two_discs_read_flat_closer_than_a_diameter_are_a_stack_in_doubt() {
        let m = model();
        // External sj_02's compartment 1, located: a disc lying on another read flat 32 mm from its neighbour.
        let mut d = Detections { pieces: vec![disc(-133.9, 28.2, 13.0), disc(-158.2, 49.3, 13.0), disc(-150.0, 95.0, 26.0)], ..Default::default() };
        m.settle_rests(&mut d);
        for p in &d.pieces[..2] {
            assert!(p.doubt.as_deref().unwrap_or_default().contains("overlap another disc read flat by 19.8 mm"), "{p:?}");
        }
        // Side by side, touching (a diameter apart, and the fits' error closer): both lie flat. A disc on a stack
        // over one of them is at another height.
        let mut d = Detections { pieces: vec![disc(-150.0, 40.0, 13.0), disc(-150.0, 91.0, 13.0), disc(-150.0, 60.0, 26.0)], ..Default::default() };
        m.settle_rests(&mut d);
        assert!(d.pieces[..2].iter().all(|p| p.doubt.is_none()), "{:?}", d.pieces);
        // A pose known less well allows more: 6 mm of overlap is 3 sigmas of a 0.7 mm pose, for each disc.
        let board = Board::load("sjoelbak").unwrap();
        let loose = DiscModel::new(board.piece(), board.sjoelbak().unwrap(), board.surface.half_width(), 0.7);
        let mut d = Detections { pieces: vec![disc(-150.0, 40.0, 13.0), disc(-150.0, 86.0, 13.0)], ..Default::default() };
        loose.settle_rests(&mut d);
        assert!(d.pieces.iter().all(|p| p.doubt.is_none()), "{:?}", d.pieces);
        m.settle_rests(&mut d);
        assert!(d.pieces.iter().all(|p| p.doubt.is_some()), "{:?}", d.pieces);
    }
}
