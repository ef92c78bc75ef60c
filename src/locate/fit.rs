//! The moving-edges refinement (robust Gauss-Newton over the pose), its verdict measurements and the pose's uncertainty.

use super::*;

impl Locator {
    /// Moving-edges refinement from `start`; `None` if it loses the board.
    pub(super) fn refine(&mut self, cam: &Camera, start: CameraPose) -> Option<Refined> {
        let n_edges = self.model.edges.len();
        let mut pose = start;
        let mut polarity = vec![0.0f32; n_edges];
        let mut samples = std::mem::take(&mut self.samples);
        let mut found: Vec<Option<(f64, f32)>> = Vec::new();
        for (stage, &range) in SEARCH_SCHEDULE_PX.iter().enumerate() {
            let step_px = if range >= COARSE_RANGE_PX { COARSE_REFINE_STEP_PX } else { REFINE_STEP_PX };
            for _ in 0..ITERATIONS_PER_RANGE {
                sample_model(&self.model, &pose, cam, step_px, &mut samples);
                found.clear();
                found.extend(samples.iter().map(|s| self.grad.search(s.p, s.n, range, polarity[s.edge])));
                let Some(step) = gauss_newton_step(cam, &samples, &found, range) else {
                    self.samples = samples;
                    return None;
                };
                pose = perturbed(&pose, &step.delta);
                let moved = step.delta[..3].iter().map(|v| v * v).sum::<f64>().sqrt() * 1000.0 + step.delta[3..].iter().map(|v| v * v).sum::<f64>().sqrt();
                if moved < 1e-3 {
                    break;
                }
            }
            if stage == 0 {
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
        // The verdict's measurements at the final pose.
        sample_model(&self.model, &pose, cam, REFINE_STEP_PX, &mut samples);
        let total = samples.len();
        let mut per: Vec<(usize, usize, f64)> = vec![(0, 0, 0.0); n_edges];
        // (samples, inliers) of the identifying edges that can tell: not on a face seen edge-on.
        let mut per_id: Vec<(usize, usize)> = vec![(0, 0); n_edges];
        let (mut inl, mut ss) = (0usize, 0.0f64);
        let mut jtj = [[0.0f64; 6]; 6];
        for s in &samples {
            per[s.edge].0 += 1;
            let edge = &self.model.edges[s.edge];
            let judged = edge.identifying && !on_edge_on_face(edge, &pose, cam, s);
            per_id[s.edge].0 += usize::from(judged);
            if let Some((off, _)) = self.grad.search(s.p, s.n, INLIER_PX * 2.0, polarity[s.edge]) {
                if off.abs() <= INLIER_PX {
                    per_id[s.edge].1 += usize::from(judged);
                    inl += 1;
                    ss += off * off;
                    per[s.edge].1 += 1;
                    per[s.edge].2 += off * off;
                    let j = normal_jacobian(cam, s);
                    for a in 0..6 {
                        for b in 0..6 {
                            jtj[a][b] += j[a] * j[b];
                        }
                    }
                }
            }
        }
        if total == 0 || inl < 6 {
            self.samples = samples;
            return None;
        }
        let rms = (ss / inl as f64).sqrt();
        let coverage = inl as f64 / total as f64;
        let sigma_mm = position_sigma(cam, &pose, &jtj, rms.max(0.05), &samples);
        self.samples = samples;
        let features = self
            .model
            .edges
            .iter()
            .zip(&per)
            .filter(|(_, p)| p.0 > 0)
            .map(|(e, p)| FeatureFit {
                feature: e.name.clone(),
                samples: p.0,
                inliers: p.1,
                rms_px: if p.1 > 0 { (p.2 / p.1 as f64).sqrt() } else { f64::NAN },
            })
            .collect();
        let phantom_line_mm = self.phantom_line(cam, &pose);
        // The identifying features must be seen over a fair stretch and mostly
        // match, and nearly every one seen at length must be confirmed: a wrong
        // pose can still fit the long outline and a few gate-bar edges, never all.
        // (Samples on a face seen edge-on are left out: [`MIN_FACE_PX`].)
        const MIN_IDENTIFYING_INLIERS: usize = 15;
        const MIN_IDENTIFYING_COVERAGE: f64 = 0.5;
        const SEEN_AT_LENGTH: usize = 20;
        const CONFIRMED_COVERAGE: f64 = 0.3;
        const MIN_CONFIRMED_SHARE: f64 = 0.75;
        let ids: Vec<&(usize, usize)> = self.model.edges.iter().zip(&per_id).filter(|(e, _)| e.identifying).map(|(_, p)| p).collect();
        let (id_samples, id_inliers) = ids.iter().fold((0usize, 0usize), |(s, i), p| (s + p.0, i + p.1));
        let long: Vec<_> = ids.iter().filter(|p| p.0 >= SEEN_AT_LENGTH).collect();
        let confirmed = long.iter().filter(|p| p.1 as f64 >= CONFIRMED_COVERAGE * p.0 as f64).count();
        let identified = id_inliers >= MIN_IDENTIFYING_INLIERS
            && id_inliers as f64 >= MIN_IDENTIFYING_COVERAGE * id_samples as f64
            && confirmed as f64 >= MIN_CONFIRMED_SHARE * long.len() as f64;
        Some(Refined { pose, score: inl as f64 * coverage, coverage, rms_px: rms, inliers: inl, sigma_mm, features, phantom_line_mm, identified })
    }
}

/// `d r / d pose` of a sample's normal residual `r = n . (q - p)`, as `n . dp/dpose`.
pub(super) fn normal_jacobian(cam: &Camera, s: &Sample) -> [f64; 6] {
    let jp = projection_jacobian(cam, s.xc);
    let mut j = [0.0; 6];
    for k in 0..6 {
        j[k] = s.n[0] * jp[0][k] + s.n[1] * jp[1][k];
    }
    j
}

pub(super) struct Step {
    pub(super) delta: [f64; 6],
}

/// One robust Gauss-Newton step on the normal residuals.
pub(super) fn gauss_newton_step(cam: &Camera, samples: &[Sample], found: &[Option<(f64, f32)>], range: f64) -> Option<Step> {
    let residuals: Vec<f64> = found.iter().flatten().map(|f| f.0).collect();
    if residuals.len() < 12 {
        return None;
    }
    let mut abs: Vec<f64> = residuals.iter().map(|r| r.abs()).collect();
    abs.sort_by(f64::total_cmp);
    let mad = abs[abs.len() / 2] * 1.4826;
    let c = (TUKEY_C * mad).max(TUKEY_C * MIN_ROBUST_SCALE_PX).max(MIN_ROBUST_SCALE_OF_RANGE * range).min(range);
    let mut a = [[0.0f64; 6]; 6];
    let mut g = [0.0f64; 6];
    for (s, f) in samples.iter().zip(found) {
        let Some((r, _)) = f else { continue };
        let u = r / c;
        if u.abs() >= 1.0 {
            continue;
        }
        let w = (1.0 - u * u) * (1.0 - u * u);
        let j = normal_jacobian(cam, s);
        for p in 0..6 {
            g[p] += w * j[p] * r;
            for q in 0..6 {
                a[p][q] += w * j[p] * j[q];
            }
        }
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
    let mut delta = [0.0; 6];
    for (i, d) in delta.iter_mut().enumerate() {
        *d = *x.at_2d::<f64>(i as i32, 0).ok()?;
    }
    delta.iter().all(|d| d.is_finite()).then_some(Step { delta })
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
