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

/// Disc recovery: fits start on a lattice over a leftover blob this fraction
/// of a radius apart (the fit converges from about a radius away; the lattice
/// keeps every start within half that).
const RECOVERY_START_SPACING: f64 = 0.5;
/// At most this many starts per leftover blob (a glare patch many discs in
/// area would otherwise cost a fit per lattice point).
const MAX_RECOVERY_STARTS: usize = 24;
/// Recovery starts are first chosen at least this fraction of a radius apart
/// (the fit converges from about a radius away): a glare blob many discs in
/// area is then covered by the capped starts, not just its middle.
const RECOVERY_START_GAP: f64 = 1.0;
/// Recovery probes each outline point with this many samples each side along
/// the circle (see `FitConfig::arc_samples`): a pale disc's rim against glare
/// is ~20 levels, about the glare grain's per-pixel noise, and averaging three
/// pixels lets the fit find it (the circle search and the first fits keep
/// single samples, whose edges are sharpest on clean rims).
const RECOVERY_ARC_SAMPLES: usize = 1;
/// An upper disc of a stack is searched for this many radii round the outline the circle search proposed: both
/// discs' rims scatter that outline, and its centre may lie between them, up to a radius from either (external sj_03:
/// a disc on another 14 mm off, proposed 12 mm from where it is seen).
const STACK_START_REACH: f64 = 1.0;
/// A disc found on a stack from a start round the outline proposed (not from its centre) shows edges on at least
/// this share of the probes round its rim that the camera sees: it is the top of the pile, its rim seen whole
/// (external sj_03's: 64 and 72 of 72). An outline fitted a disc's thickness high from such a start that shows less
/// is something else's (own varied renders: a printed roundel in the field, 44 of 72; the gate bar's tunnel in a
/// fisheye's view, 24 of 72). From the proposal's centre none is asked: where the upper rim passes over the lower
/// disc, wood over wood, it may show little (own renders: 48 of 72).
const STACK_TOP_EDGE_SHARE: f64 = 0.75;
/// A disc whose centre lies further than this many radii past the gate bar's front lies wholly in the field,
/// clear of the gate by a radius (a disc touching the gate's front has its centre one radius past it; the second
/// radius takes in the pose's and the fit's few millimetres): it counts for nothing (the rules count the discs
/// that have passed the gate's front completely, and the jury returns the rest for the next sub-turn). The costly
/// searches for discs the circle search missed (recovery, discs on stacks) look only nearer: where a disc counts
/// or may. (Sjoelbak bench frame: recovery over the field's glare and two stack searches on the field's grain
/// were two thirds of the score path, and found nothing.)
const FIELD_CLEARANCE_RADII: f64 = 2.0;
/// Rounds of recovery: each finds at most one disc (the detections found so
/// far then hide outline for the next).
const MAX_RECOVERY_ROUNDS: usize = 4;
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

/// Edge points within this (px, at the disc) of a circle's rim lie on it when an outline's edges are split between
/// two discs: a clean rim's edges scatter a few tenths of a pixel, a neighbour's rim lies pixels away.
const SPLIT_TOLERANCE_PX: f64 = 1.0;
/// Each of two discs in one outline must hold at least this many of its edge points (of 72 probes): a disc lying
/// under another shows a crescent, a third of its rim at the least the fixtures and renders show.
const MIN_SPLIT_POINTS: usize = 8;
/// Two circles whose centres lie nearer than this fraction of a radius are one outline's scatter, not two discs.
const MIN_SPLIT_OFFSET: f64 = 0.3;
/// The ring probed round a disc for one under it starts this far (px) outside its rim: clear of the rim's own
/// blur and shadow.
const UNDER_RING_GAP_PX: f64 = 2.0;
/// The discs' wood is sampled on a ring this fraction of a radius round a disc's centre (clear of its rim), the
/// board's on one this far out (beyond a disc under it, which lies within a diameter), each the median of this
/// many samples (a partition or a wall on part of the outer ring does not move it).
const UNDER_WOOD_RING: f64 = 0.6;
const UNDER_BOARD_RING: f64 = 2.3;
const COLOUR_RING_SAMPLES: usize = 24;
/// The circle through a disc's crescent holds at least this share of the edges found in the ring round the disc
/// above it (and at least [`MIN_EDGE_POINTS`]): the crescent is where the ring's edges are, while the board's grain
/// leaves edges all round, a third of them at most on any one circle (the fixtures' and renders' discs alone).
const UNDER_MIN_SHARE: f64 = 0.5;
/// Edges this near (mm) a partition, a wall or the gate bar are their faces' (wood, as the discs are), not a
/// disc's: a face 20-30 mm high seen obliquely lies a few millimetres beside its foot at a disc's height.
const SOLID_FACE_MARGIN_MM: f64 = 5.0;
/// The ring round a disc is probed at this step (px): it only proposes where a disc under it may lie (within
/// [`SPLIT_TOLERANCE_PX`] of its rim), and the lower disc's own fit measures it at the fits' finer step.
const UNDER_RING_STEP_PX: f64 = 1.0;

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
        let shape = PieceShape { kind: p.kind, radius_mm: p.radius_mm, smallest_outline_mm: p.radius_mm, footprint_radius_mm: p.radius_mm, top_z_mm: p.thickness_mm, team_coloured: false };
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

    /// Whether a disc could lie at `c` and be seen there: on the board's
    /// surface inside its walls (a disc beyond them is off the board and
    /// counts for nothing, and what lies there, a table of the discs' own
    /// wood, is none of the game's), not on the footprint of the gate bar or a
    /// partition, whose own wood shows there, and with the camera's line of
    /// sight to its top clear of the board's solids.
    fn may_lie(&self, cx: &Ctx, c: BoardPoint) -> bool {
        self.within_walls(c) && !self.on_partition_or_gate_bar(c, 0.0) && cx.sees(c.at_height(self.shape.top_z_mm))
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

    /// Two discs in the outline about `centre` that no one circle explains (its edges scatter about the best
    /// one): the edge points split between the two circles of a disc's size that hold the most of them
    /// ([`split::two_circles`]). Overlapping, the one showing more of its rim lies on the other, a disc's thickness
    /// higher (a stack: flagged in `settle`), and hides part of the lower one's outline; apart, both lie flat.
    /// Each is kept only if its own outline fit passes the piece checks, and a stack only if both do. Returns
    /// where the upper disc of a stack not kept lies (the circle that shows more of its rim): a better start for
    /// [`DiscModel::on_a_stack`] than the outline's proposal, which both discs' outlines scatter.
    fn split_pair(&self, cx: &Ctx, centre: BoardPoint, out: &mut Detections) -> Option<BoardPoint> {
        let (r, z) = (self.shape.radius_mm, self.shape.top_z_mm);
        let px_per_mm = crate::measure::px_per_mm(&cx.geo.camera, &cx.geo.pose, centre.at_height(z))?;
        let edges: Vec<BoardPoint> = cx.outline_edges(Footprint::new(centre, r), z).iter().map(|e| e.at).collect();
        let pair = split::two_circles(&edges, r, SPLIT_TOLERANCE_PX / px_per_mm, MIN_SPLIT_OFFSET * r, MIN_SPLIT_POINTS)?;
        let (first, second) = (pair.first.0, pair.second.0);
        let taken = |d: &Detection, out: &Detections| out.pieces.iter().any(|p| self.collide(p, d));
        if first.distance(second) >= MIN_PIECE_SEPARATION * r {
            // Side by side: each measured as any disc is.
            for c in [first, second] {
                if let Some(d) = cx.measure(Footprint::new(c, r), None, 0).ok().filter(|d| d.doubt.is_none() && !taken(d, out)) {
                    out.pieces.push(d);
                }
            }
            return None;
        }
        // One on the other. Both must show: a disc's rim fitted a disc's thickness too high lands beside the disc
        // (along the line of sight), and only the lower disc's own outline says that there is one under it.
        let Some((upper, lower)) = self.stack(cx, first, second) else { return Some(first) };
        if !taken(&upper, out) && !taken(&lower, out) {
            out.pieces.push(upper);
            out.pieces.push(lower);
        }
        None
    }

    /// A disc whose outline at the surface's height no one or two discs explain, measured at the heights of
    /// discs lying on others (its rim seen whole, the discs under it hidden): the lowest height whose fit passes the
    /// piece checks without doubt, if any, clear of the partitions, walls and gate bar (a disc over the bar would
    /// lie on it, not on discs), fitted from the outline's centre or, failing that, from starts round it
    /// ([`STACK_TOP_EDGE_SHARE`]); unless a disc found already explains the same outline in the image (seen on the
    /// grid within [`MIN_SPLIT_OFFSET`] of a radius of it, as two circles of one outline are: one disc's outline fits
    /// at more than one height; a disc lying on one found, offset by more, shows its own rim beside the lower one's).
    /// Flagged as a stack in `settle`. Its sigma takes in a disc's thickness of height along the line of sight.
    /// (External sj_03: a disc on one that shows a sliver, its outline at the surface's height scattered by the lower
    /// one's, was missed; found from a start round the outline, 1.4 mm off, sigma 5.4 mm. Own renders: a disc on
    /// another offset by 11 mm, neither read before, the upper one now read 0.1 mm off, sigma 3 mm; three stacks of
    /// the twelve of `discs::no_stack_of_two_discs_is_read_as_one_confidently`, the upper disc dropped as the lower
    /// one's outline seen a disc higher, now read.)
    fn on_a_stack(&self, cx: &Ctx, centre: BoardPoint, out: &mut Detections) {
        let (r, z) = (self.shape.radius_mm, self.shape.top_z_mm);
        // A disc on discs lies clear of the partitions and walls, and not over the gate bar (it would lie on it).
        let clear = |d: &Detection| self.into_solid(d.footprint.centre).is_none() && !self.on_partition_or_gate_bar(d.footprint.centre, 0.0);
        let heights = || (1..=MAX_DISCS_BELOW).map(|below| z * (below + 1) as f64);
        // From the outline's centre, the lowest height that fits; failing that, from starts round it (both discs'
        // rims scatter the outline the circle search proposed), where a fit found must show the rim of the top of a
        // pile: nothing lies over it (but where a partition or a wall hides it from the camera, where no probe looks).
        let whole = |d: &Detection| d.edges_found as f64 >= STACK_TOP_EDGE_SHARE * d.probes as f64;
        let support = |d: &Detection| d.fit_rms_mm / d.edges_found.max(1) as f64;
        let around = starts_round(centre, r);
        let found = heights().find_map(|high| self.rim_at(cx, centre, high).filter(clear)).or_else(|| {
            heights().find_map(|high| {
                let fits = crate::parallel::map_in_order(&around, |_: &mut (), s| self.rim_at(cx, *s, high).filter(|d| clear(d) && whole(d)));
                fits.into_iter().flatten().min_by(|a, b| support(a).total_cmp(&support(b)))
            })
        });
        if let Some(d) = found {
            // The outline fitted may be the stack's silhouette, its side down to the lower disc's foot seen past
            // the rim: the centre is known along the line of sight only to a disc's thickness in height.
            let d = cx.widened_for_height(d, z);
            let seen = cx.seen_on_grid(&d);
            if !out.pieces.iter().any(|p| self.collide(p, &d) || cx.seen_on_grid(p).distance(seen) < MIN_SPLIT_OFFSET * r) {
                out.pieces.push(d);
            }
        }
    }

    /// The disc whose rim, fitted at the discs' height, lies about `seen`, measured with its top at `high` (its rim
    /// seen whole there): `None` unless that fit passes the piece checks without doubt.
    fn rim_at(&self, cx: &Ctx, seen: BoardPoint, high: f64) -> Option<Detection> {
        let start = cx.along_sight(seen.at_height(self.shape.top_z_mm), high).unwrap_or(seen);
        cx.fit(Footprint::new(start, self.shape.radius_mm), high, 0).map_err(DetectError::from).and_then(|f| cx.finish(f, high, None, 0)).ok().filter(|d| d.doubt.is_none())
    }

    /// A disc lying on another: the upper one, whose rim fitted at the discs' height lies about `upper_at`,
    /// measured a disc's thickness higher (its rim is seen whole), and the lower one about `lower_at`, measured
    /// with the upper hiding part of its outline; `None` unless the upper's fit passes the piece checks without
    /// doubt and the lower's passes them, seen in the image beside the upper (at least [`MIN_SPLIT_OFFSET`] of a
    /// radius from it, as two circles of one outline are): a lower fit that slid under the upper has fitted the
    /// upper's own outline at the lower height (external sj_03: a second disc 1.6 mm from the upper one, the real
    /// lower one 16 mm away, mostly hidden).
    fn stack(&self, cx: &Ctx, upper_at: BoardPoint, lower_at: BoardPoint) -> Option<(Detection, Detection)> {
        let (r, z) = (self.shape.radius_mm, self.shape.top_z_mm);
        let upper = self.rim_at(cx, upper_at, 2.0 * z)?;
        let hiding = Occluders::new(vec![cx.occluder(&upper)]);
        let lower = cx.hidden_by(&hiding).measure(Footprint::new(lower_at, r), None, 0).ok()?;
        (cx.seen_on_grid(&lower).distance(cx.seen_on_grid(&upper)) >= MIN_SPLIT_OFFSET * r).then_some((upper, lower))
    }

    /// Discs lying partly under one found (a stack): a disc's rim seen whole fits one circle however much of
    /// another disc it covers, and the lower disc shows as a crescent just outside it. Round each disc found flat in
    /// the compartments or the gate, the ring from its rim out to a diameter from its centre (a disc rests on
    /// another only with its centre over it) is probed for edges with the discs' wood inside
    /// ([`Ctx::outline_edges_with`], read coming in from the board: the lower disc's rim, past the shadow the upper
    /// one casts across the lower's face beside its rim, the stronger change going out), and the circle of a disc's
    /// size through the most of them, its centre within a radius, is a disc under it if it holds enough of them
    /// ([`UNDER_MIN_SHARE`]) and its own outline fit, the upper disc hiding part of it, passes. The upper disc is then
    /// measured again a disc's thickness higher (flagged as a stack in `settle`). Where that fit does not pass, the
    /// crescent still puts the disc found in doubt: a disc may lie under it. The discs found from index `from` on
    /// are looked under.
    fn look_under(&self, cx: &Ctx, out: &mut Detections, from: usize) {
        let (r, z) = (self.shape.radius_mm, self.shape.top_z_mm);
        let found = out.pieces.len();
        for i in from..found {
            let d = &out.pieces[i];
            let c = d.footprint.centre;
            // A disc already in a stack (another found over or under it) is not looked under again.
            let stacked = out.pieces.iter().enumerate().any(|(j, p)| j != i && p.footprint.centre.distance(c) < r);
            if !self.lies_flat(d) || c.y_mm > self.gate_front_mm + r || stacked {
                continue;
            }
            let Some(px_per_mm) = crate::measure::px_per_mm(&cx.geo.camera, &cx.geo.pose, c.at_height(z)) else { continue };
            // A disc rests on another only with its centre over it: the lower one's rim lies within a diameter.
            let (inner, outer) = (r + UNDER_RING_GAP_PX / px_per_mm, 2.0 * r);
            // An edge of the lower disc has the discs' wood inside it, nearer their colour than the board's.
            let (Some(wood), Some(board)) = (cx.ring_colour(c, UNDER_WOOD_RING * r, z, COLOUR_RING_SAMPLES), cx.ring_colour(c, UNDER_BOARD_RING * r, 0.0, COLOUR_RING_SAMPLES)) else { continue };
            let apart = |a: [f32; 3], b: [f32; 3]| (0..3).map(|k| (a[k] - b[k]).powi(2)).sum::<f32>();
            let like_wood = |bgr: [f32; 3]| apart(bgr, wood) < apart(bgr, board);
            let cfg = FitConfig { band_mm: (outer - inner) / 2.0, step_px: UNDER_RING_STEP_PX, from_outside: true, ..cx.fit_cfg };
            let tol = SPLIT_TOLERANCE_PX / px_per_mm;
            // Wood that is no other disc: the disc's own side, which an oblique camera sees past its top's rim (out
            // to its foot's circle), and the partitions', walls' and gate bar's faces.
            let foot = cx.along_sight(c.at_height(0.0), z).unwrap_or(c);
            let edges: Vec<BoardPoint> = cx
                .outline_edges_with(Footprint::new(c, (inner + outer) / 2.0), z, &cfg, &like_wood)
                .iter()
                .map(|e| e.at)
                .filter(|e| (e.distance(foot) - r).abs() > tol && !self.by_solid(*e))
                .collect();
            if edges.len() < MIN_EDGE_POINTS {
                continue;
            }
            let near = |k: BoardPoint| (MIN_SPLIT_OFFSET * r..r).contains(&k.distance(c)) && k.distance(foot) >= MIN_SPLIT_OFFSET * r;
            // A crescent explains the ring's edges where it lies; the board's grain scatters them about.
            let crescent = |b: &(BoardPoint, usize)| b.1 >= MIN_EDGE_POINTS && b.1 as f64 >= UNDER_MIN_SHARE * edges.len() as f64;
            let Some((lower_at, _)) = split::best_circle(&edges, r, tol, near).filter(crescent) else { continue };
            let Some((upper, lower)) = self.stack(cx, c, lower_at) else {
                // A disc's rim beside it that its own outline fit does not confirm (the upper's shadow across the
                // lower's face, wood on wood): a disc may lie under this one, which would then be read flat
                // a disc's thickness low. Never a confident count or place (own renders: a disc on another offset
                // by 14 mm in compartment 2, read as one disc lying flat, 3.7 mm off, sigma 0.3 mm).
                if !out.pieces.iter().enumerate().any(|(j, p)| j != i && p.footprint.centre.distance(lower_at) < r) {
                    out.pieces[i].add_doubt(format!("a crescent of a disc's rim beside it at ({:.0}, {:.0}) mm: a disc may lie under it, partly hidden", lower_at.x_mm, lower_at.y_mm));
                }
                continue;
            };
            // The lower disc lies beside the upper one's centre (not under it: that is the upper's own outline at
            // another height) and is no disc already found.
            let offset = lower.footprint.centre.distance(upper.footprint.centre);
            let elsewhere = out.pieces.iter().enumerate().any(|(j, p)| j != i && (p.footprint.centre.distance(lower.footprint.centre) < r || self.collide(p, &lower)));
            if lower.doubt.is_none() && offset >= MIN_SPLIT_OFFSET * r && !elsewhere {
                out.pieces[i] = upper;
                out.pieces.push(lower);
            }
        }
    }

    /// A disc whose rim shows too faintly for a proposal (in a shadow, half under the gate bar) may still be where a
    /// disc counts: faint circles there ([`proposals::faint_circles`]) that no disc found explains and that the
    /// outline fit accepts as a disc make the frame need review. They are never counted: the board's grain makes
    /// such circles too (external sj_00, with the true pose: a disc in the gate bar's shadow, missed, and two on bare
    /// wood; before, only the field's glare flagged that frame, whose score the missed disc makes wrong).
    fn flag_faint_circles(&self, cx: &Ctx, proposed: &[BoardPoint], out: &mut Detections) {
        let r = self.shape.radius_mm;
        let faint: Vec<BoardPoint> = proposals::faint_circles(cx, proposed, self.gate_front_mm + r + self.overlap_tolerance_mm)
            .into_iter()
            .filter(|&c| self.may_count(c) && self.may_lie(cx, c))
            .filter(|&c| !out.pieces.iter().any(|d| cx.seen_on_grid(d).distance(c) < r) && !out.unexplained.iter().any(|u| u.centre.distance(c) < r))
            .collect();
        let fits = crate::parallel::map_in_order(&faint, |_: &mut (), c| cx.measure(Footprint::new(*c, r), None, 0).ok().filter(|d| d.doubt.is_none()));
        for d in fits.into_iter().flatten() {
            let at = d.footprint.centre;
            if out.pieces.iter().any(|p| self.collide(p, &d)) || out.unexplained.iter().any(|u| u.centre.distance(at) < r) {
                continue;
            }
            out.unexplained.push(Unexplained {
                kind: self.shape.kind,
                team: None,
                centre: at,
                area_mm2: std::f64::consts::PI * r * r,
                reason: "a faint circle of a disc's size that the outline fit accepts, too weak in the image to count: a disc in a shadow, or the board's grain".into(),
            });
        }
    }

    /// Discs the circle search missed where a disc may count ([`DiscModel::may_count`]): each pale blob there that
    /// no disc accounts for is searched for one, from starts spread over the blob, by an outline fit
    /// over the probes the camera can see (the discs found so far hide outline
    /// too); the best-supported fit that passes the piece checks and explains
    /// enough of the blob is kept. Repeated while it finds discs.
    fn recover(&self, cx: &Ctx, out: &mut Detections) {
        let r = self.shape.radius_mm;
        // The discs left to find are those whose rim glare washes out: their
        // outline is probed with the noise averaged along it.
        let fit_cfg = FitConfig { arc_samples: RECOVERY_ARC_SAMPLES, ..cx.fit_cfg };
        for _ in 0..MAX_RECOVERY_ROUNDS {
            let hiding = Occluders::new(out.pieces.iter().map(|d| cx.occluder(d)).collect());
            let rc = Ctx { fit_cfg, ..cx.hidden_by(&hiding) };
            let found = proposals::leftover_blobs(&rc, 0, None, out, &|c| self.may_count(c), &[]).into_iter().find_map(|blob| {
                let cells = blob.points(&rc.geo.grid);
                let explains = |d: &Detection| {
                    let seen = rc.seen_on_grid(d);
                    cells.iter().filter(|c| c.distance(seen) < r).count() as f64 * rc.geo.grid.step * rc.geo.grid.step
                };
                let piece_area = std::f64::consts::PI * r * r;
                // The starts' fits on the machine's cores, their results in the starts' order.
                let starts = recovery_starts(blob.centre, &cells, r);
                crate::parallel::map_in_order(&starts, |_: &mut (), s| rc.measure(Footprint::new(*s, r), None, 0).ok())
                    .into_iter()
                    .flatten()
                    .filter(|d| d.doubt.is_none())
                    .filter(|d| explains(d) >= UNACCOUNTED_AREA_FRACTION * piece_area)
                    .filter(|d| !out.pieces.iter().any(|p| self.collide(p, d)))
                    .min_by(|a, b| (a.fit_rms_mm / a.edges_found as f64).total_cmp(&(b.fit_rms_mm / b.edges_found as f64)))
            });
            match found {
                Some(d) => out.pieces.push(d),
                None => break,
            }
        }
    }
}

/// Where [`DiscModel::on_a_stack`]'s fits start round an outline's centre (not on it): a lattice
/// [`RECOVERY_START_SPACING`] of a radius apart within [`STACK_START_REACH`] of a radius of it (the fit converges from
/// about a radius away).
fn starts_round(centre: BoardPoint, r: f64) -> Vec<BoardPoint> {
    let spacing = RECOVERY_START_SPACING * r;
    let n = (STACK_START_REACH / RECOVERY_START_SPACING).floor() as i32;
    let mut starts = Vec::new();
    for i in -n..=n {
        for j in -n..=n {
            let s = BoardPoint::new(centre.x_mm + i as f64 * spacing, centre.y_mm + j as f64 * spacing);
            if (i, j) != (0, 0) && s.distance(centre) <= STACK_START_REACH * r + 1e-9 {
                starts.push(s);
            }
        }
    }
    starts
}

/// Where recovery fits start over a leftover blob: its centre, then a lattice
/// over its cells half a radius apart, those whose disc would hold the most of
/// the blob first, spread a radius apart first (a blob of many pieces' worth,
/// a glare patch, holds a disc's worth round most of its starts: a disc at its
/// edge gets a start too), at most [`MAX_RECOVERY_STARTS`].
fn recovery_starts(centre: BoardPoint, cells: &[BoardPoint], r: f64) -> Vec<BoardPoint> {
    // A glare patch is tens of discs in area: thousands of cells and hundreds of lattice points. Each lattice point
    // is kept once (by its index) and counts only the cells in the squares round it, so the cost grows with the
    // blob's area, not with its area squared.
    let spacing = RECOVERY_START_SPACING * r;
    let mut starts = vec![centre];
    let mut on_lattice = std::collections::HashSet::new();
    for c in cells {
        let (i, j) = ((c.x_mm / spacing).round(), (c.y_mm / spacing).round());
        let s = BoardPoint::new(i * RECOVERY_START_SPACING * r, j * RECOVERY_START_SPACING * r);
        if s.distance(centre) >= 1e-6 && on_lattice.insert((i as i64, j as i64)) {
            starts.push(s);
        }
    }
    let cells_near = Near::new(cells.iter().copied(), r);
    let held = |s: &BoardPoint| cells_near.within(*s, r).count();
    starts[1..].sort_by_cached_key(|s| std::cmp::Reverse(held(s)));
    let gap = RECOVERY_START_GAP * r;
    let mut spread_near = Near::new(std::iter::once(starts[0]), gap);
    let (mut spread, mut rest): (Vec<BoardPoint>, Vec<BoardPoint>) = (vec![starts[0]], Vec::new());
    for s in starts.into_iter().skip(1) {
        if spread_near.within(s, gap).next().is_some() {
            rest.push(s);
        } else {
            spread.push(s);
            spread_near.insert(s);
        }
    }
    spread.extend(rest);
    spread.truncate(MAX_RECOVERY_STARTS);
    spread
}

/// Board points in squares of a side `reach`, for the points within `reach` of another without testing all.
struct Near {
    side: f64,
    squares: std::collections::HashMap<(i64, i64), Vec<BoardPoint>>,
}

impl Near {
    fn new(points: impl IntoIterator<Item = BoardPoint>, reach: f64) -> Near {
        let mut near = Near { side: reach, squares: std::collections::HashMap::new() };
        for p in points {
            near.insert(p);
        }
        near
    }

    fn square(&self, p: BoardPoint) -> (i64, i64) {
        ((p.x_mm / self.side).floor() as i64, (p.y_mm / self.side).floor() as i64)
    }

    fn insert(&mut self, p: BoardPoint) {
        let key = self.square(p);
        self.squares.entry(key).or_default().push(p);
    }

    /// The points nearer `p` than `d` (at most the side): all lie in the 3 x 3 squares round `p`'s.
    fn within(&self, p: BoardPoint, d: f64) -> impl Iterator<Item = &BoardPoint> + '_ {
        debug_assert!(d <= self.side);
        let (i, j) = self.square(p);
        (i - 1..=i + 1)
            .flat_map(move |a| (j - 1..=j + 1).map(move |b| (a, b)))
            .filter_map(|k| self.squares.get(&k))
            .flatten()
            .filter(move |q| q.distance(p) < d)
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
        // a disc half in a shadow: the frame needs review, the disc is never silently dropped.
        for (at, why) in unexplained_outlines.into_iter().filter_map(|left| left.uneven) {
            let explained = out.pieces.iter().any(|d| cx.seen_on_grid(d).distance(at) < self.shape.radius_mm) || out.unexplained.iter().any(|u| u.centre.distance(at) < self.shape.radius_mm);
            if !explained && self.may_lie(cx, at) {
                let area_mm2 = std::f64::consts::PI * self.shape.radius_mm * self.shape.radius_mm;
                out.unexplained.push(Unexplained { kind: self.shape.kind, team: None, centre: at, area_mm2, reason: format!("{why}: a disc in a shadow, or none") });
            }
        }
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

    /// The starts as first written: every pair of points tested.
    fn recovery_starts_all_pairs(centre: BoardPoint, cells: &[BoardPoint], r: f64) -> Vec<BoardPoint> {
        let mut starts = vec![centre];
        for c in cells {
            let snap = |v: f64| (v / (RECOVERY_START_SPACING * r)).round() * RECOVERY_START_SPACING * r;
            let s = BoardPoint::new(snap(c.x_mm), snap(c.y_mm));
            if !starts.iter().any(|t| t.distance(s) < 1e-6) {
                starts.push(s);
            }
        }
        let held = |s: &BoardPoint| cells.iter().filter(|c| c.distance(*s) < r).count();
        starts[1..].sort_by_cached_key(|s| std::cmp::Reverse(held(s)));
        let (mut spread, mut rest): (Vec<BoardPoint>, Vec<BoardPoint>) = (vec![starts[0]], Vec::new());
        for s in starts.into_iter().skip(1) {
            if spread.iter().any(|t| t.distance(s) < RECOVERY_START_GAP * r) {
                rest.push(s);
            } else {
                spread.push(s);
            }
        }
        spread.extend(rest);
        spread.truncate(MAX_RECOVERY_STARTS);
        spread
    }

    #[test]
    fn recovery_starts_are_those_of_the_all_pairs_test() {
        // A glare patch's blob on the 2 mm grid: an ellipse with a bite out of it, off the board's axes, and a small one.
        let ellipse = |cx: f64, cy: f64, a: f64, b: f64| -> Vec<BoardPoint> {
            let mut cells = Vec::new();
            for i in -60..=60 {
                for j in -60..=60 {
                    let (x, y) = (cx + 2.0 * i as f64 + 1.0, cy + 2.0 * j as f64 + 1.0);
                    let inside = ((x - cx) / a).powi(2) + ((y - cy) / b).powi(2) < 1.0;
                    let bite = (x - cx - a * 0.6).hypot(y - cy) < a * 0.3;
                    if inside && !bite {
                        cells.push(BoardPoint::new(x, y));
                    }
                }
            }
            cells
        };
        for (cells, r) in [(ellipse(-123.4, 567.8, 110.0, 70.0), 15.0), (ellipse(40.0, -20.0, 20.0, 16.0), 15.0), (ellipse(3.0, 900.0, 100.0, 90.0), 26.0)] {
            let n = cells.len() as f64;
            let centre = BoardPoint::new(cells.iter().map(|c| c.x_mm).sum::<f64>() / n, cells.iter().map(|c| c.y_mm).sum::<f64>() / n);
            let fast = recovery_starts(centre, &cells, r);
            assert!(fast.len() > 1, "{}", fast.len());
            assert_eq!(fast.len(), recovery_starts_all_pairs(centre, &cells, r).len());
            for (a, b) in fast.iter().zip(recovery_starts_all_pairs(centre, &cells, r)) {
                assert!(a.distance(b) < 1e-9, "{a:?} {b:?}");
            }
        }
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
            unexplained: vec![],
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
        let mut d = Detections { pieces: vec![disc(-133.9, 28.2, 13.0), disc(-158.2, 49.3, 13.0), disc(-150.0, 95.0, 26.0)], unexplained: vec![] };
        m.settle_rests(&mut d);
        for p in &d.pieces[..2] {
            assert!(p.doubt.as_deref().unwrap_or_default().contains("overlap another disc read flat by 19.8 mm"), "{p:?}");
        }
        // Side by side, touching (a diameter apart, and the fits' error closer): both lie flat. A disc on a stack
        // over one of them is at another height.
        let mut d = Detections { pieces: vec![disc(-150.0, 40.0, 13.0), disc(-150.0, 91.0, 13.0), disc(-150.0, 60.0, 26.0)], unexplained: vec![] };
        m.settle_rests(&mut d);
        assert!(d.pieces[..2].iter().all(|p| p.doubt.is_none()), "{:?}", d.pieces);
        // A pose known less well allows more: 6 mm of overlap is 3 sigmas of a 0.7 mm pose, for each disc.
        let board = Board::load("sjoelbak").unwrap();
        let loose = DiscModel::new(board.piece(), board.sjoelbak().unwrap(), board.surface.half_width(), 0.7);
        let mut d = Detections { pieces: vec![disc(-150.0, 40.0, 13.0), disc(-150.0, 86.0, 13.0)], unexplained: vec![] };
        loose.settle_rests(&mut d);
        assert!(d.pieces.iter().all(|p| p.doubt.is_none()), "{:?}", d.pieces);
        m.settle_rests(&mut d);
        assert!(d.pieces.iter().all(|p| p.doubt.is_some()), "{:?}", d.pieces);
    }
}
