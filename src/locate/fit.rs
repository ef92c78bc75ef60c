//! The moving-edges fit: robust Gauss-Newton over the pose and the construction's dimensions, and the pose's uncertainty.

use super::*;
use rayon::prelude::*;

/// The fewest samples whose edge searches make one task for another core: a
/// few hundred reads of the gradients, well above the cost of handing a task over.
const MIN_SAMPLES_A_TASK: usize = 32;

impl Locator {
    /// Moving-edges refinement from `start` over the whole schedule, then the
    /// verdict's measurements; `None` if it loses the board.
    pub(super) fn refine(&mut self, cam: &Camera, start: Fit) -> Option<Refined> {
        let mut samples = std::mem::take(&mut self.samples);
        let r = self.fit(&mut samples, cam, start, &SEARCH_SCHEDULE_PX, ITERATIONS_PER_RANGE).and_then(|f| self.verdict(&mut samples, cam, f));
        self.samples = samples;
        r
    }

    /// Refines each of `starts` through the schedule and measures it for the
    /// verdict, except one that has met a start already refined after the wide
    /// stages (the same pose within [`SAME_POSE_PX`], the same construction, the
    /// same edge polarities learned): it would end in the same pose.
    pub(super) fn refine_starts(&mut self, cam: &Camera, starts: &[CameraPose], seen: &mut StartsSeen) -> Vec<Refined> {
        let fits: Vec<Fit> = starts.iter().map(|p| Fit::start(*p, &self.model)).collect();
        self.refine_fits(cam, &fits, seen, None)
    }

    /// [`Locator::refine_starts`] from fits already started (a pose with its
    /// construction and polarities). Re-fits of a reading that passed every
    /// check (`lead`: its pose and construction) that cannot take its lead are
    /// not refined past the wide stages ([`Locator::cannot_lead`]); a batch of
    /// the search's starts (no `lead`) is refined the best-matching first, and
    /// those that cannot take the lead from them are not
    /// ([`Locator::finish_leading_first`]).
    pub(super) fn refine_fits(&mut self, cam: &Camera, starts: &[Fit], seen: &mut StartsSeen, lead: Option<(&CameraPose, &[f64])>) -> Vec<Refined> {
        let wide = self.in_parallel(starts, |me, samples, f| me.fit(samples, cam, f.clone(), &SEARCH_SCHEDULE_PX[..WIDE_STAGES], ITERATIONS_PER_RANGE));
        // Decided in the starts' order, as one after the other would.
        let mut survivors = Vec::new();
        for f in wide.into_iter().flatten() {
            let same = |m: &Fit| {
                m.polarity == f.polarity
                    && m.cons.iter().zip(&f.cons).all(|(a, b)| (a - b).abs() <= SAME_CONSTRUCTION_MM)
                    && self.image_distance(cam, &f.pose, &m.pose) <= SAME_POSE_PX
            };
            if seen.met.iter().any(same) {
                continue;
            }
            seen.met.push(f.clone());
            survivors.push(f);
        }
        if let Some(lead) = lead {
            let matches = self.edge_matches(cam, &survivors);
            let hopeless = self.cannot_lead(cam, lead, &survivors, &matches);
            survivors = survivors.into_iter().zip(hopeless).filter(|(_, h)| !h).map(|(f, _)| f).collect();
        }
        // A start whose reading puts one of the image's straight lines right across a stretch of the surface with
        // nothing across it would be refused for it once refined ([`Locator::phantom_line`]): refined last, only
        // if no other start passes every check (the shuffleboard's line-free middle read where its end is).
        let (later, first): (Vec<Fit>, Vec<Fit>) = survivors.into_iter().partition(|f| self.line_in_clear_span(cam, &f.pose));
        let mut refined = if lead.is_some() { self.finish(cam, &first).into_iter().flatten().collect() } else { self.finish_leading_first(cam, &first) };
        if !later.is_empty() && !refined.iter().any(|r| self.check(r).is_ok()) {
            refined.extend(self.finish(cam, &later).into_iter().flatten());
        }
        refined
    }

    /// The fine stages and the verdict's measurements of each of `fits` (after
    /// the wide stages), in their order: `None` where one loses the board.
    fn finish(&self, cam: &Camera, fits: &[Fit]) -> Vec<Option<Refined>> {
        self.in_parallel(fits, |me, samples, f| me.fit(samples, cam, f.clone(), &SEARCH_SCHEDULE_PX[WIDE_STAGES..], ITERATIONS_PER_RANGE).and_then(|f| me.verdict(samples, cam, f)))
    }

    /// [`Locator::finish`] of `fits`, the [`LEADING_WAVE`] whose edges match best
    /// ([`Locator::edge_match`]) first: where one of them passes every check,
    /// the rest that cannot take the lead from the best of those that pass (by
    /// the whole model's score, as [`Locator::choose`] ranks) are not refined
    /// ([`Locator::cannot_lead`]). The refined are returned in `fits`' order.
    fn finish_leading_first(&self, cam: &Camera, fits: &[Fit]) -> Vec<Refined> {
        if fits.len() <= LEADING_WAVE {
            return self.finish(cam, fits).into_iter().flatten().collect();
        }
        let matches = self.edge_matches(cam, fits);
        let mut order: Vec<usize> = (0..fits.len()).collect();
        // Best match first; a start's order decides between equal matches.
        order.sort_by(|&a, &b| matches[b].unwrap_or(f64::NEG_INFINITY).total_cmp(&matches[a].unwrap_or(f64::NEG_INFINITY)));
        let (wave, rest) = order.split_at(LEADING_WAVE);
        let pick = |ids: &[usize]| -> Vec<Fit> { ids.iter().map(|&i| fits[i].clone()).collect() };
        let mut results: Vec<Option<Refined>> = (0..fits.len()).map(|_| None).collect();
        for (&i, r) in wave.iter().zip(self.finish(cam, &pick(wave))) {
            results[i] = r;
        }
        let lead = wave.iter().filter_map(|&i| results[i].as_ref()).filter(|r| self.check(r).is_ok()).max_by(|a, b| a.whole_score.total_cmp(&b.whole_score));
        let rest: Vec<usize> = match lead {
            Some(lead) => {
                let rest_matches: Vec<Option<f64>> = rest.iter().map(|&i| matches[i]).collect();
                let hopeless = self.cannot_lead(cam, (&lead.pose, &lead.construction), &pick(rest), &rest_matches);
                rest.iter().zip(hopeless).filter(|(_, h)| !h).map(|(&i, _)| i).collect()
            }
            None => rest.to_vec(),
        };
        for (&i, r) in rest.iter().zip(self.finish(cam, &pick(&rest))) {
            results[i] = r;
        }
        results.into_iter().flatten().collect()
    }

    /// [`Locator::edge_match`] of each of `fits`, at its pose and construction.
    fn edge_matches(&self, cam: &Camera, fits: &[Fit]) -> Vec<Option<f64>> {
        self.in_parallel(fits, |me, samples, f| me.edge_match(samples, cam, &f.pose, &f.cons))
    }

    /// Which of `fits` (after the wide stages, their edges matching as
    /// `matches` says: [`Locator::edge_match`]) cannot take the lead from the
    /// reading `lead` (its pose and construction): those imaging the board
    /// further than [`DIFFERENT_POSE_PX`] from it (another reading, not the same
    /// one in a poorer optimum, whose spread the pose's sigma takes in) whose
    /// edges match under [`LEAD_MATCH_SHARE`] of the lead's.
    fn cannot_lead(&self, cam: &Camera, (pose, cons): (&CameraPose, &[f64]), fits: &[Fit], matches: &[Option<f64>]) -> Vec<bool> {
        let far: Vec<bool> = fits.iter().map(|f| self.image_distance(cam, pose, &f.pose) > DIFFERENT_POSE_PX).collect();
        if !far.contains(&true) {
            return far;
        }
        let Some(bar) = self.edge_match(&mut Vec::new(), cam, pose, cons) else { return vec![false; fits.len()] };
        far.iter().zip(matches).map(|(&far, m)| far && m.is_none_or(|m| m < LEAD_MATCH_SHARE * bar)).collect()
    }

    /// `f` of every item, in the items' order, computed on rayon's pool (as many
    /// threads as the machine has cores), each run of items a thread takes with
    /// its own sample scratch ([`crate::parallel::map_in_order`]). The
    /// refinements of different starts share nothing but the frame's gradients,
    /// read only.
    pub(super) fn in_parallel<T: Sync, R: Send>(&self, items: &[T], f: impl Fn(&Locator, &mut Vec<Sample>, &T) -> R + Sync) -> Vec<R> {
        crate::parallel::map_in_order(items, |samples: &mut Vec<Sample>, t| f(self, samples, t))
    }

    /// The image edge of sample `s` along its normal within `window` (px), read
    /// every `step` px, of the sign `polarity` (0: either): offset and signed
    /// strength. Once the search reads finely (the wide stages need only come
    /// near it), a painted line imaged narrower than [`THIN_LINE_PX`], and an
    /// upright face's foot whose learned sign finds one flank of a crease, are
    /// read at the crease's middle ([`Gradients::crease_centre`]).
    pub(super) fn edge_of(&self, s: &Sample, window: (f64, f64), polarity: f32, step: f64) -> Option<(f64, f32)> {
        let found = self.grad.search_stepped(s.p, s.n, window, polarity, step)?;
        if step >= COARSE_SEARCH_STEP_PX {
            return Some(found);
        }
        let (off, g) = found;
        if s.line_px.abs() < THIN_LINE_PX {
            // A painted line narrower than the blur's reach: its flanks' gradients overlap and each peak lies
            // outward of its edge, while the line's middle (where the gradient changes sign) stays sharp. The
            // edge is half the line's width from it, and its sign that of the flank on its side of the middle.
            let centre = self.grad.crease_centre(s.p, s.n, off, g);
            if centre == off {
                return Some(found);
            }
            let own_side = (off - centre) * s.line_px < 0.0;
            return Some((centre - 0.5 * s.line_px, if own_side { g } else { -g }));
        }
        if polarity != 0.0 && self.model.edges[s.edge].is_foot() {
            return Some((self.grad.crease_centre(s.p, s.n, off, g), g));
        }
        Some(found)
    }

    /// Each painted line imaged thinner than [`THIN_LINE_PX`] that its samples miss one by one (a whole table at
    /// several mm a pixel: one faint crease a pixel wide, each flank under the least gradient a sample counts), seen
    /// at length ([`verdict::SEEN_AT_LENGTH`]) and not confirmed sample by sample ([`verdict::confirms`]), is read
    /// from its samples' profiles taken together ([`Gradients::thin_line_on_average`]): where it shows within
    /// `reach` px, each of its samples whose own search found nothing (`found`, in the samples' order) takes the
    /// edge found so. The line then pulls the fit and counts in the verdict as the line it is, not as a feature
    /// missing (varied 01, a fisheye's whole 22 ft table: its trey and deuce lines found by 2-3 of their 30 samples
    /// each, 29-30 so).
    pub(super) fn thin_lines_on_average(&self, samples: &[Sample], found: &mut [Option<(f64, f32)>], reach: f64) {
        for (e, edge) in self.model.edges.iter().enumerate() {
            if edge.line_across_mm.is_none() {
                continue;
            }
            let of_edge = || samples.iter().zip(found.iter()).filter(|(s, _)| s.edge == e);
            let (n, hits, width) = of_edge().fold((0usize, 0usize, 0.0), |(n, h, w), (s, f)| (n + 1, h + usize::from(f.is_some_and(|f| f.0.abs() <= reach)), w + s.line_px.abs()));
            if n < verdict::SEEN_AT_LENGTH || width / n as f64 >= THIN_LINE_PX || verdict::confirms(n, hits) {
                continue;
            }
            let Some(together) = self.grad.thin_line_on_average(samples.iter().filter(|s| s.edge == e)).filter(|m| m.0.abs() <= reach) else { continue };
            for (s, f) in samples.iter().zip(found.iter_mut()) {
                if s.edge == e && f.is_none() {
                    *f = Some(together);
                }
            }
        }
    }

    /// Moving-edges refinement of `fit` through the search ranges `schedule`
    /// (px, widest first), at most `iterations` steps per range; `None` if it
    /// loses the board. Edge polarities are learned after the first range in
    /// which each edge has a clear sign. `samples` is the caller's scratch (one
    /// per run of fits a thread takes: [`Locator::in_parallel`]).
    pub(super) fn fit(&self, samples: &mut Vec<Sample>, cam: &Camera, fit: Fit, schedule: &[f64], iterations: usize) -> Option<Fit> {
        self.fit_without(samples, cam, fit, schedule, iterations, None)
    }

    /// [`Locator::fit`] with the model's feature named `left_out` (all its edges) taking no part: what the
    /// rest of the board says of the pose ([`Locator::weak_feature_spread_mm`]).
    pub(super) fn fit_without(&self, samples: &mut Vec<Sample>, cam: &Camera, mut fit: Fit, schedule: &[f64], iterations: usize, left_out: Option<&str>) -> Option<Fit> {
        let n_edges = self.model.edges.len();
        // Once the search is narrow, the pose is taken from the rules-fixed edges
        // alone and the construction's edges only size the construction: where the
        // maker's build differs from the model's (a rail's rounded top, a gutter's
        // other profile), they would pull the pose off the surface's own outline
        // and lines (external sb_02: refined from the true pose, the camera came 23
        // mm closer, the trey line and the end 1-2 px off, refused). In the wide
        // stages they keep the search off their strong edges. A board of upright
        // faces of free height (a sjoelbak) keeps them: its rules-fixed edges are
        // the faces' feet, often in the faces' shadow or seen edge-on.
        let upright_feet = self.has_upright_feet();
        let mut found: Vec<Option<(f64, f32)>> = Vec::new();
        // The construction's dimensions (mm off nominal) are fitted with the pose:
        // at a wrong nominal size its edges would pull the pose by the difference.
        let params = &self.model.params;
        let Fit { pose, cons, polarity } = &mut fit;
        for (stage, &range) in schedule.iter().enumerate() {
            // A fine stage the schedule narrows after need only leave the pose well within the next range.
            let settled_px = if range >= COARSE_RANGE_PX { SETTLED_COARSE_PX } else if stage + 1 < schedule.len() { SETTLED_FINE_PX } else { 0.0 };
            let (step_px, search_step_px) = if range >= COARSE_RANGE_PX { (COARSE_REFINE_STEP_PX, COARSE_SEARCH_STEP_PX) } else { (REFINE_STEP_PX, SEARCH_STEP_PX) };
            for _ in 0..iterations {
                sample_model(&self.model, pose, cam, step_px, cons, samples);
                if let Some(name) = left_out {
                    samples.retain(|s| self.model.edges[s.edge].name != name);
                }
                // The edge searches, most of a fit's work, shared with any core idle (the fit is often the only
                // one left running); in the samples' order.
                samples.par_iter().with_min_len(MIN_SAMPLES_A_TASK).map(|s| self.edge_of(s, s.window(range), polarity[s.edge], search_step_px)).collect_into_vec(&mut found);
                // Once the search reads finely (as [`Locator::edge_of`] reads a thin line's crease).
                if search_step_px < COARSE_SEARCH_STEP_PX {
                    self.thin_lines_on_average(samples, &mut found, range);
                }
                let pose_from_fixed = range < COARSE_RANGE_PX && !upright_feet;
                let step = gauss_newton_step(cam, &self.model, pose, samples, &found, range, cons, pose_from_fixed, self.cfg.weigh_edges_alike)?;
                *pose = perturbed(pose, &step.delta);
                let before = cons.clone();
                for (c, d) in cons.iter_mut().zip(&step.cons) {
                    *c += d;
                }
                clamp_construction(params, cons);
                let cons_moved = cons.iter().zip(&before).map(|(a, b)| (a - b).abs()).fold(0.0f64, f64::max);
                let moved = step.delta[..3].iter().map(|v| v * v).sum::<f64>().sqrt() * 1000.0 + step.delta[3..].iter().map(|v| v * v).sum::<f64>().sqrt();
                if (moved < 1e-3 && cons_moved < 1e-3) || step.motion_px < settled_px {
                    break;
                }
            }
            // Learn each edge's polarity from its matches (a dark stripe's two edges
            // have opposite signs, a hole is darker than the wood, ...): every edge
            // after the first range, and one that had no clear sign then (out of
            // view from the start, or matched both ways) after a later range that
            // gives it one. Left unknown, an edge takes the nearest peak of either
            // sign to the end: external hb_02's far end, out of view at its start,
            // was read 2 px in, on the inner flank of its bevel's highlight.
            let mut sum = vec![(0.0f64, 0usize); n_edges];
            for (s, f) in samples.iter().zip(&found) {
                let Some((off, g)) = f else { continue };
                if off.abs() > range || polarity[s.edge] != 0.0 {
                    continue;
                }
                // The surface's open outline is where the surface gives way to what
                // lies beyond: its sign is that of the step from the one to the other,
                // not of the nearest flank (a rounded or bevelled top edge catches the
                // light as a thin bright line just inside the outline).
                let step = self.model.edges[s.edge].is_open_outline().then(|| self.grad.step_across(s.p, s.n, *off, OUTLINE_STEP_REACH_PX)).flatten();
                let sign = step.filter(|d| d.abs() >= OUTLINE_MIN_STEP).unwrap_or(*g);
                sum[s.edge].0 += sign.signum() as f64;
                sum[s.edge].1 += 1;
            }
            for (e, (s, c)) in sum.iter().enumerate() {
                if *c > 0 && s.abs() > 0.5 * *c as f64 {
                    polarity[e] = s.signum() as f32;
                }
            }
        }
        Some(fit)
    }

}

/// How far either side of an outline's edge the step across it is measured, px:
/// past a bevel's highlight (a pixel or two) and the blur's reach.
const OUTLINE_STEP_REACH_PX: f64 = 4.0;
/// The least step across an outline, levels, that decides its sign: the
/// contrast of an edge that just counts ([`EDGE_MIN_GRADIENT`] at its steepest
/// after the blur). Where the surface and what lies beyond are as bright, the
/// nearest flank's sign is all there is.
const OUTLINE_MIN_STEP: f32 = 2.5 * EDGE_MIN_GRADIENT;

/// Where a search's starts refined to the end stood after the wide stages.
#[derive(Default)]
pub(super) struct StartsSeen {
    met: Vec<Fit>,
}

/// Two fits whose construction dimensions agree within this, mm (and whose pose
/// and learned edge polarities agree) go on alike.
const SAME_CONSTRUCTION_MM: f64 = 1.0;

/// Keeps the construction's offsets from nominal (`cons`, mm) within each
/// parameter's range, and a part built between others no higher than they stand
/// ([`ConstructionParam::at_most`]).
pub(super) fn clamp_construction(params: &[ConstructionParam], cons: &mut [f64]) {
    for (c, p) in cons.iter_mut().zip(params) {
        *c = c.clamp(p.min_mm - p.nominal_mm, p.max_mm - p.nominal_mm);
    }
    for (i, p) in params.iter().enumerate() {
        if let Some(k) = p.at_most {
            let cap = params[k].nominal_mm + cons[k] - p.nominal_mm;
            cons[i] = cons[i].min(cap).max(p.min_mm - p.nominal_mm);
        }
    }
}

/// `d r / d (pose, construction)` of a sample's normal residual `r = n . (q - p)`,
/// as `n . dp/d(...)`: six pose columns, then one per construction parameter.
pub(super) fn normal_jacobian(cam: &Camera, model: &BoardModel, pose: &CameraPose, s: &Sample) -> [f64; MAX_UNKNOWNS] {
    let jp = projection_jacobian(cam, s.xc);
    let mut j = [0.0; MAX_UNKNOWNS];
    for k in 0..6 {
        j[k] = s.n[0] * jp[0][k] + s.n[1] * jp[1][k];
    }
    let (iz, x, r) = (1.0 / s.xc[2], s.xc, pose.rotation);
    for m in &model.edges[s.edge].moves {
        // The board-frame motion of this point per mm, into the camera frame, then the image.
        let v: [f64; 3] = [0, 1, 2].map(|i| m.a[i] + s.t * (m.b[i] - m.a[i]));
        let vc: [f64; 3] = [0, 1, 2].map(|i| dot3(r[i], v));
        let du = cam.fx * (vc[0] * iz - x[0] * vc[2] * iz * iz);
        let dv = cam.fy * (vc[1] * iz - x[1] * vc[2] * iz * iz);
        j[6 + m.param] += s.n[0] * du + s.n[1] * dv;
    }
    j
}

pub(super) struct Step {
    pub(super) delta: [f64; 6],
    /// Change of each construction parameter, mm.
    pub(super) cons: [f64; MAX_PARAMS],
    /// How far the step moves the model's edges in the image, px: the largest
    /// predicted change of a sample's normal residual (of those it was fitted to).
    pub(super) motion_px: f64,
}

/// Each model edge's weight per sample in a fine step: the mean number of samples an edge found its image edge
/// on, over its own. The samples along one edge are not independent measurements: they share its blur, its
/// shading and whatever the maker built otherwise than the model, so an edge long in the image would otherwise
/// outweigh a short one many times over (a side's 500 samples against a hole rim's 92) with its own error.
/// Weighed as one measurement each (the samples' total weight unchanged), the edges in view fix the pose together:
/// the located poses' corner error fell from 0.42 to 0.28 px (median) on the external renders, 0.15 to 0.12 px on
/// the own scenes and 0.26 to 0.20 px (mean) on the varied ones. One frame lost: external y4_00, a washer board
/// whose ends show no step, only a shadow's line a few pixels beyond them; its far end, read at that line, now
/// pulls as hard as a hole rim (1.8 -> 5.1 px, within its reported sigma, its washers' calls flagged for review).
/// (The pose's uncertainty counts each edge as one measurement too:
/// [`super::uncertainty::clustered_pose_covariance`].)
fn edge_weights(edges: usize, samples: &[Sample], found: &[Option<(f64, f32)>]) -> Vec<f64> {
    let mut n = vec![0usize; edges];
    for (s, f) in samples.iter().zip(found) {
        if f.is_some() {
            n[s.edge] += 1;
        }
    }
    let seen = n.iter().filter(|&&k| k > 0).count().max(1);
    let mean = n.iter().sum::<usize>() as f64 / seen as f64;
    n.iter().map(|&k| if k > 0 { mean / k as f64 } else { 0.0 }).collect()
}

/// One robust Gauss-Newton step on the normal residuals, for the pose and the
/// construction parameters (`cons`: their current offsets from nominal, held
/// there by each parameter's prior). With `pose_from_fixed`, only the
/// rules-fixed edges move the pose; the construction's edges still size it; and,
/// with `edges_alike` ([`LocateConfig::weigh_edges_alike`]), each edge weighs as
/// one measurement, whatever its length in the image ([`edge_weights`]).
#[allow(clippy::too_many_arguments)]
pub(super) fn gauss_newton_step(cam: &Camera, model: &BoardModel, pose: &CameraPose, samples: &[Sample], found: &[Option<(f64, f32)>], range: f64, cons: &[f64], pose_from_fixed: bool, edges_alike: bool) -> Option<Step> {
    let residuals: Vec<f64> = found.iter().flatten().map(|f| f.0).collect();
    if residuals.len() < 12 {
        return None;
    }
    let mut abs: Vec<f64> = residuals.iter().map(|r| r.abs()).collect();
    let mid = abs.len() / 2;
    let mad = *abs.select_nth_unstable_by(mid, f64::total_cmp).1 * 1.4826;
    let c = (TUKEY_C * mad).max(TUKEY_C * MIN_ROBUST_SCALE_PX).max(MIN_ROBUST_SCALE_OF_RANGE * range).min(range);
    let n = 6 + model.params.len();
    // The normal equations in fixed arrays (`n` <= MAX_UNKNOWNS): the accumulation below, per sample, is the
    // fit's inner loop.
    let mut a = [[0.0f64; MAX_UNKNOWNS]; MAX_UNKNOWNS];
    let mut g = [0.0f64; MAX_UNKNOWNS];
    // Each used sample's Jacobian row, to measure the step's motion by.
    let mut rows: Vec<[f64; MAX_UNKNOWNS]> = Vec::with_capacity(samples.len());
    let per_edge = (pose_from_fixed && edges_alike).then(|| edge_weights(model.edges.len(), samples, found));
    for (s, f) in samples.iter().zip(found) {
        let Some((r, _)) = f else { continue };
        let u = r / c;
        if u.abs() >= 1.0 {
            continue;
        }
        let w = (1.0 - u * u) * (1.0 - u * u) * per_edge.as_ref().map_or(1.0, |e| e[s.edge]);
        let mut j = normal_jacobian(cam, model, pose, s);
        if pose_from_fixed && !model.edges[s.edge].fixed {
            // A construction edge sizes the construction only ([`Locator::fit`]).
            j[..6].iter_mut().for_each(|v| *v = 0.0);
        }
        rows.push(j);
        for ((gp, ap), jp) in g.iter_mut().zip(a.iter_mut()).zip(&j).take(n) {
            *gp += w * jp * r;
            for (apq, jq) in ap.iter_mut().zip(&j).take(n) {
                *apq += w * jp * jq;
            }
        }
    }
    // Each construction parameter's prior pulls it back towards nominal.
    for (i, p) in model.params.iter().enumerate() {
        let inv_var = 1.0 / p.prior_sigma_mm().powi(2);
        a[6 + i][6 + i] += inv_var;
        g[6 + i] -= inv_var * cons.get(i).copied().unwrap_or(0.0);
    }
    // A touch of damping keeps unconstrained directions (e.g. along a lone pair
    // of sides) still: relative to each parameter's own curvature ([`RELATIVE_DAMPING`]).
    for (i, row) in a.iter_mut().enumerate().take(n) {
        row[i] *= 1.0 + RELATIVE_DAMPING;
    }
    let am = Mat::from_slice_2d(&a[..n].iter().map(|row| &row[..n]).collect::<Vec<_>>()).ok()?;
    let gm = Mat::from_slice_2d(&[&g[..n]]).ok()?.t().ok()?.to_mat().ok()?;
    let mut x = Mat::default();
    if !opencv::core::solve(&am, &gm, &mut x, opencv::core::DECOMP_SVD).ok()? {
        return None;
    }
    let mut step = Step { delta: [0.0; 6], cons: [0.0; MAX_PARAMS], motion_px: 0.0 };
    for i in 0..n {
        let v = *x.at_2d::<f64>(i as i32, 0).ok()?;
        if !v.is_finite() {
            return None;
        }
        if i < 6 {
            step.delta[i] = v;
        } else {
            step.cons[i - 6] = v;
        }
    }
    let unknown = |p: usize| if p < 6 { step.delta[p] } else { step.cons[p - 6] };
    step.motion_px = rows.iter().map(|j| (0..n).map(|p| j[p] * unknown(p)).sum::<f64>().abs()).fold(0.0, f64::max);
    Some(step)
}
