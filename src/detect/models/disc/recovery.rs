//! Discs the circle search missed, where a disc may count: recovered from the pale colour left over, and faint
//! circles the outline fit accepts flagged for review.

use super::*;

/// Disc recovery: fits start on a lattice over a leftover blob this fraction
/// of a radius apart (the fit converges from about a radius away; the lattice
/// keeps every start within half that).
pub(super) const RECOVERY_START_SPACING: f64 = 0.5;
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
/// Rounds of recovery: each finds at most one disc (the detections found so
/// far then hide outline for the next).
const MAX_RECOVERY_ROUNDS: usize = 4;

impl DiscModel {
    /// A disc whose rim shows too faintly for a proposal (in a shadow, half under the gate bar) may still be where a
    /// disc counts: faint circles there ([`proposals::faint_circles`]) that no disc found explains and that the
    /// outline fit accepts as a disc make the frame need review. They are never counted: the board's grain makes
    /// such circles too (external sj_00, with the true pose: a disc in the gate bar's shadow, missed, and two on bare
    /// wood; before, only the field's glare flagged that frame, whose score the missed disc makes wrong).
    /// A circle is looked at where a disc may rest ([`DiscModel::may_rest`]), whether or not the camera sees its
    /// middle: the fit has found its outline, and a disc half under a gate bar that may be bridged (the build is not
    /// known) has its middle out of sight (external sj_03, the true pose: a disc in the gate, 54 % of it seen, its
    /// outline fitted 3 mm from where it is, was dropped for its hidden middle and missed unflagged).
    pub(super) fn flag_faint_circles(&self, cx: &Ctx, proposed: &[BoardPoint], out: &mut Detections) {
        let r = self.shape.radius_mm;
        let faint: Vec<BoardPoint> = proposals::faint_circles(cx, proposed, self.gate_front_mm + r + self.overlap_tolerance_mm)
            .into_iter()
            .filter(|&c| self.may_count(c) && self.may_rest(c))
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
    pub(super) fn recover(&self, cx: &Ctx, out: &mut Detections) {
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
