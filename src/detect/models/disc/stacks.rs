//! Discs on discs: one outline split between two discs, a disc looked for a disc's thickness higher where no
//! one disc explains an outline, and the crescent of a disc partly under one found.

use super::recovery::RECOVERY_START_SPACING;
use super::*;

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
/// The ring round a disc is probed at this step (px): it only proposes where a disc under it may lie (within
/// [`SPLIT_TOLERANCE_PX`] of its rim), and the lower disc's own fit measures it at the fits' finer step.
const UNDER_RING_STEP_PX: f64 = 1.0;

impl DiscModel {
    /// Two discs in the outline about `centre` that no one circle explains (its edges scatter about the best
    /// one): the edge points split between the two circles of a disc's size that hold the most of them
    /// ([`split::two_circles`]). Overlapping, the one showing more of its rim lies on the other, a disc's thickness
    /// higher (a stack: flagged in `settle`), and hides part of the lower one's outline; apart, both lie flat.
    /// Each is kept only if its own outline fit passes the piece checks, and a stack only if both do. Returns
    /// where the upper disc of a stack not kept lies (the circle that shows more of its rim): a better start for
    /// [`DiscModel::on_a_stack`] than the outline's proposal, which both discs' outlines scatter.
    pub(super) fn split_pair(&self, cx: &Ctx, centre: BoardPoint, out: &mut Detections) -> Option<BoardPoint> {
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
    pub(super) fn on_a_stack(&self, cx: &Ctx, centre: BoardPoint, out: &mut Detections) {
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
    pub(super) fn rim_at(&self, cx: &Ctx, seen: BoardPoint, high: f64) -> Option<Detection> {
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
    pub(super) fn stack(&self, cx: &Ctx, upper_at: BoardPoint, lower_at: BoardPoint) -> Option<(Detection, Detection)> {
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
    pub(super) fn look_under(&self, cx: &Ctx, out: &mut Detections, from: usize) {
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
