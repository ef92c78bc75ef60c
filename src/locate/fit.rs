//! The moving-edges fit: robust Gauss-Newton over the pose and the construction's dimensions, and the pose's uncertainty.

use super::*;

impl Locator {
    /// Moving-edges refinement from `start` over the whole schedule, then the
    /// verdict's measurements; `None` if it loses the board.
    pub(super) fn refine(&mut self, cam: &Camera, start: CameraPose) -> Option<Refined> {
        let fit = self.fit(cam, Fit::start(start, &self.model), &SEARCH_SCHEDULE_PX, ITERATIONS_PER_RANGE)?;
        self.verdict(cam, fit)
    }

    /// Refines each of `starts` through the schedule and measures it for the
    /// verdict, except one that has met a start already refined after the wide
    /// stages (the same pose within [`SAME_POSE_PX`], the same construction, the
    /// same edge polarities learned): it would end in the same pose.
    pub(super) fn refine_starts(&mut self, cam: &Camera, starts: &[CameraPose], seen: &mut StartsSeen) -> Vec<Refined> {
        let mut out = Vec::new();
        for &p in starts {
            let Some(f) = self.fit(cam, Fit::start(p, &self.model), &SEARCH_SCHEDULE_PX[..WIDE_STAGES], ITERATIONS_PER_RANGE) else { continue };
            let same = |m: &Fit| {
                m.polarity == f.polarity
                    && m.cons.iter().zip(&f.cons).all(|(a, b)| (a - b).abs() <= SAME_CONSTRUCTION_MM)
                    && self.image_distance(cam, &f.pose, &m.pose) <= SAME_POSE_PX
            };
            if seen.met.iter().any(same) {
                continue;
            }
            seen.met.push(f.clone());
            if let Some(r) = self.fit(cam, f, &SEARCH_SCHEDULE_PX[WIDE_STAGES..], ITERATIONS_PER_RANGE).and_then(|f| self.verdict(cam, f)) {
                out.push(r);
            }
        }
        out
    }

    /// Moving-edges refinement of `fit` through the search ranges `schedule`
    /// (px, widest first), at most `iterations` steps per range; `None` if it
    /// loses the board. Edge polarities are learned after the first range of a
    /// fit that has not learned them yet.
    pub(super) fn fit(&mut self, cam: &Camera, mut fit: Fit, schedule: &[f64], iterations: usize) -> Option<Fit> {
        let n_edges = self.model.edges.len();
        let mut samples = std::mem::take(&mut self.samples);
        let mut found: Vec<Option<(f64, f32)>> = Vec::new();
        // The construction's dimensions (mm off nominal) are fitted with the pose:
        // at a wrong nominal size its edges would pull the pose by the difference.
        let params = &self.model.params;
        let Fit { pose, cons, polarity, polarity_learned } = &mut fit;
        for &range in schedule {
            let (step_px, search_step_px) = if range >= COARSE_RANGE_PX { (COARSE_REFINE_STEP_PX, COARSE_SEARCH_STEP_PX) } else { (REFINE_STEP_PX, SEARCH_STEP_PX) };
            for _it in 0..iterations {
                sample_model(&self.model, pose, cam, step_px, cons, &mut samples);
                found.clear();
                found.extend(samples.iter().map(|s| self.grad.search_stepped(s.p, s.n, s.window(range), polarity[s.edge], search_step_px)));
                let Some(step) = gauss_newton_step(cam, &self.model, pose, &samples, &found, range, cons) else {
                    self.samples = samples;
                    return None;
                };
                *pose = perturbed(pose, &step.delta);
                let before = cons.clone();
                for (c, d) in cons.iter_mut().zip(&step.cons) {
                    *c += d;
                }
                clamp_construction(params, cons);
                let cons_moved = cons.iter().zip(&before).map(|(a, b)| (a - b).abs()).fold(0.0f64, f64::max);
                let moved = step.delta[..3].iter().map(|v| v * v).sum::<f64>().sqrt() * 1000.0 + step.delta[3..].iter().map(|v| v * v).sum::<f64>().sqrt();
                if (moved < 1e-3 && cons_moved < 1e-3) || (range >= COARSE_RANGE_PX && step.motion_px < SETTLED_COARSE_PX) {
                    break;
                }
            }
            if !*polarity_learned {
                *polarity_learned = true;
                // Learn each edge's polarity from its matches (a dark stripe's two
                // edges have opposite signs, a hole is darker than the wood, ...).
                let mut sum = vec![(0.0f64, 0usize); n_edges];
                for (s, f) in samples.iter().zip(&found) {
                    if let Some((off, g)) = f {
                        if off.abs() <= range {
                            sum[s.edge].0 += g.signum() as f64;
                            sum[s.edge].1 += 1;
                        }
                    }
                }
                for (e, (s, c)) in sum.iter().enumerate() {
                    if *c > 0 && s.abs() > 0.5 * *c as f64 {
                        polarity[e] = s.signum() as f32;
                    }
                }
            }
        }
        self.samples = samples;
        Some(fit)
    }

}

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

/// One robust Gauss-Newton step on the normal residuals, for the pose and the
/// construction parameters (`cons`: their current offsets from nominal, held
/// there by each parameter's prior).
pub(super) fn gauss_newton_step(cam: &Camera, model: &BoardModel, pose: &CameraPose, samples: &[Sample], found: &[Option<(f64, f32)>], range: f64, cons: &[f64]) -> Option<Step> {
    let residuals: Vec<f64> = found.iter().flatten().map(|f| f.0).collect();
    if residuals.len() < 12 {
        return None;
    }
    let mut abs: Vec<f64> = residuals.iter().map(|r| r.abs()).collect();
    abs.sort_by(f64::total_cmp);
    let mad = abs[abs.len() / 2] * 1.4826;
    let c = (TUKEY_C * mad).max(TUKEY_C * MIN_ROBUST_SCALE_PX).max(MIN_ROBUST_SCALE_OF_RANGE * range).min(range);
    let n = 6 + model.params.len();
    let mut a = vec![vec![0.0f64; n]; n];
    let mut g = vec![0.0f64; n];
    // Each used sample's Jacobian row, to measure the step's motion by.
    let mut rows: Vec<[f64; MAX_UNKNOWNS]> = Vec::with_capacity(samples.len());
    for (s, f) in samples.iter().zip(found) {
        let Some((r, _)) = f else { continue };
        let u = r / c;
        if u.abs() >= 1.0 {
            continue;
        }
        let w = (1.0 - u * u) * (1.0 - u * u);
        let j = normal_jacobian(cam, model, pose, s);
        rows.push(j);
        for p in 0..n {
            g[p] += w * j[p] * r;
            for q in 0..n {
                a[p][q] += w * j[p] * j[q];
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
    for (i, row) in a.iter_mut().enumerate() {
        row[i] *= 1.0 + RELATIVE_DAMPING;
    }
    let am = Mat::from_slice_2d(&a).ok()?;
    let gm = Mat::from_slice_2d(&[g]).ok()?.t().ok()?.to_mat().ok()?;
    let mut x = Mat::default();
    if !opencv::core::solve(&am, &gm, &mut x, opencv::core::DECOMP_SVD).ok()? {
        return None;
    }
    let mut step = Step { delta: [0.0; 6], cons: [0.0; MAX_PARAMS], motion_px: 0.0 };
    let mut xs = vec![0.0f64; n];
    for i in 0..n {
        let v = *x.at_2d::<f64>(i as i32, 0).ok()?;
        if !v.is_finite() {
            return None;
        }
        xs[i] = v;
        if i < 6 {
            step.delta[i] = v;
        } else {
            step.cons[i - 6] = v;
        }
    }
    step.motion_px = rows.iter().map(|j| (0..n).map(|p| j[p] * xs[p]).sum::<f64>().abs()).fold(0.0, f64::max);
    Some(step)
}

/// The pose's information with the construction parameters marginalised out
/// (the Schur complement `A_pp - A_pc A_cc^-1 A_cp` of the fit's `J^T J`): what
/// the edges say of the pose whatever the construction's dimensions.
pub(super) fn marginal_pose_information(jtj: &[[f64; MAX_UNKNOWNS]; MAX_UNKNOWNS], k: usize) -> Option<[[f64; 6]; 6]> {
    let mut info = [[0.0f64; 6]; 6];
    for i in 0..6 {
        info[i][..6].copy_from_slice(&jtj[i][..6]);
    }
    if k == 0 {
        return Some(info);
    }
    let acc: Vec<Vec<f64>> = (0..k).map(|i| jtj[6 + i][6..6 + k].to_vec()).collect();
    let mut inv = Mat::default();
    let am = Mat::from_slice_2d(&acc).ok()?;
    opencv::core::invert(&am, &mut inv, opencv::core::DECOMP_SVD).ok()?;
    for i in 0..6 {
        for j in 0..6 {
            let mut v = 0.0;
            for p in 0..k {
                for q in 0..k {
                    v += jtj[i][6 + p] * inv.at_2d::<f64>(p as i32, q as i32).copied().ok()? * jtj[6 + q][j];
                }
            }
            info[i][j] -= v;
        }
    }
    Some(info)
}

/// The largest predicted standard error (mm, in the board plane) of the visible
/// model points, from the pose covariance `sigma^2 (J^T J)^-1`.
pub(super) fn position_sigma(cam: &Camera, pose: &CameraPose, jtj: &[[f64; 6]; 6], sigma_px: f64, samples: &[Sample]) -> f64 {
    // Rotations (px per radian) and translations (px per mm) differ by ~1e6:
    // equilibrate before judging the conditioning.
    let d: Vec<f64> = (0..6).map(|i| jtj[i][i].max(1e-300).sqrt()).collect();
    let mut scaled = [[0.0f64; 6]; 6];
    for i in 0..6 {
        for j in 0..6 {
            scaled[i][j] = jtj[i][j] / (d[i] * d[j]);
        }
    }
    let Ok(am) = Mat::from_slice_2d(&scaled) else { return f64::INFINITY };
    let mut inv = Mat::default();
    let Ok(rcond) = opencv::core::invert(&am, &mut inv, opencv::core::DECOMP_SVD) else { return f64::INFINITY };
    // `invert` returns the inverse condition number for SVD; below this the
    // features leave a direction of motion unconstrained.
    const MIN_RCOND: f64 = 1e-10;
    if !(rcond > MIN_RCOND) {
        return f64::INFINITY;
    }
    let mut cov = [[0.0f64; 6]; 6];
    for (i, row) in cov.iter_mut().enumerate() {
        for (j, v) in row.iter_mut().enumerate() {
            *v = inv.at_2d::<f64>(i as i32, j as i32).copied().unwrap_or(f64::NAN) / (d[i] * d[j]) * sigma_px * sigma_px;
        }
    }
    let step = (samples.len() / 200).max(1);
    let mut worst = 0.0f64;
    for s in samples.iter().step_by(step) {
        let jp = projection_jacobian(cam, s.xc);
        // Image covariance of this point.
        let mut c = [[0.0f64; 2]; 2];
        for a in 0..2 {
            for b in 0..2 {
                c[a][b] = (0..6).map(|p| (0..6).map(|q| jp[a][p] * cov[p][q] * jp[b][q]).sum::<f64>()).sum();
            }
        }
        // The board-plane Jacobian d p / d (x, y) at this point: columns R e_x, R e_y through dp/dX.
        let r = pose.rotation;
        let (iz, x) = (1.0 / s.xc[2], s.xc);
        let dp = |col: usize| {
            let d = [r[0][col], r[1][col], r[2][col]];
            [cam.fx * (d[0] * iz - x[0] * d[2] * iz * iz), cam.fy * (d[1] * iz - x[1] * d[2] * iz * iz)]
        };
        let (ax, ay) = (dp(0), dp(1));
        let det = ax[0] * ay[1] - ay[0] * ax[1];
        if det.abs() < 1e-12 {
            continue;
        }
        // M = A^-1 maps image offsets to board offsets.
        let m = [[ay[1] / det, -ay[0] / det], [-ax[1] / det, ax[0] / det]];
        let mut b = [[0.0f64; 2]; 2];
        for i in 0..2 {
            for j in 0..2 {
                b[i][j] = (0..2).map(|k| (0..2).map(|l| m[i][k] * c[k][l] * m[j][l]).sum::<f64>()).sum();
            }
        }
        let tr = b[0][0] + b[1][1];
        let det_b = b[0][0] * b[1][1] - b[0][1] * b[1][0];
        let lmax = 0.5 * tr + (0.25 * tr * tr - det_b).max(0.0).sqrt();
        worst = worst.max(lmax.max(0.0).sqrt());
    }
    worst
}

