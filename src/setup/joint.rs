//! The camera set-up's joint refinement: every unknown of the camera at once (the focal length, the radial
//! distortion and, from several frames, the principal point), by Newton steps on a quadratic fitted to the edge
//! residual around the estimate.
//!
//! The line searches of [`super::refine`] move one unknown at a time, each with the others held. That finds the
//! minimum of unknowns that hardly interact, but the focal length, a fisheye's k1 and the principal point all move
//! the board's image in similar ways, and along such a valley one unknown at a time stops short. Here the cost is
//! measured on a small design round the estimate (each unknown one trial spacing either way, and every pair together
//! both ways: `1 + 2n + n(n-1)` trials for `n` unknowns), a quadratic fitted to it by least squares, and the camera
//! moved to the quadratic's minimum (a Newton step, at most [`MAX_STEP_SPACINGS`] spacings in any unknown, halved
//! while it does not lower the cost). The last quadratic's curvature gives every unknown's marginal uncertainty,
//! their correlations included, as `joint_sigmas` does for the focal length and k1 of a single frame.
//!
//! One view of a plane cannot tell the principal point from the pose; several views at different slants can (as in
//! Zhang's calibration from views of a planar target), so the principal point is an unknown only with several frames.

use super::refine::{param, solve_dyn, with_param, Refiner, Trial, MIN_BOWL_R2};
use super::SetupError;
use crate::camera::{Camera, CameraPose};

/// One unknown of the joint refinement: which ([`param`]'s numbering) and its trials' spacing about the estimate.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Unknown {
    pub which: usize,
    pub spacing: f64,
}

/// The joint refinement's result: the camera, each frame's pose, each unknown's standard deviation (in
/// [`param`]'s units, in the order the unknowns were given) and the trial at the estimate.
#[derive(Debug, Clone)]
pub(super) struct JointEstimate {
    pub camera: Camera,
    pub poses: Vec<CameraPose>,
    pub sigmas: Vec<f64>,
    pub trial: Trial,
}

/// At most this many Newton steps: from the line searches' estimate two or three reach the minimum within a
/// quarter spacing; more means the cost is no bowl there.
const MAX_NEWTON_STEPS: usize = 5;
/// A Newton step moves no unknown further than this many spacings: the quadratic was fitted over one spacing either
/// side, and far beyond its design it is extrapolated.
const MAX_STEP_SPACINGS: f64 = 2.0;
/// The estimate has converged when a Newton step would move every unknown less than this many spacings: the cost
/// varies there by a sixteenth of its change over a spacing, about its own trial-to-trial jitter.
const CONVERGED_SPACINGS: f64 = 0.25;
/// A step that does not lower the cost is halved this many times before the estimate is taken as the minimum.
const STEP_HALVINGS: usize = 2;

/// A quadratic fitted to the cost over a design, in coordinates of trial spacings about its centre.
pub(super) struct Bowl {
    /// The gradient and the Hessian of the cost per sample (px^2 per spacing, per spacing squared).
    gradient: Vec<f64>,
    hessian: Vec<Vec<f64>>,
}

impl Bowl {
    /// The Newton step to the quadratic's minimum, in spacings; `None` unless the Hessian is positive definite (a
    /// valley or a saddle: the frames do not tell these unknowns apart).
    fn newton(&self) -> Option<Vec<f64>> {
        let inverse = inverse(&self.hessian)?;
        positive_definite(&self.hessian).then(|| (0..self.gradient.len()).map(|i| -(0..self.gradient.len()).map(|j| inverse[i][j] * self.gradient[j]).sum::<f64>()).collect())
    }

    /// Each unknown's marginal standard deviation, in spacings, for a per-sample cost whose unit curvature is worth
    /// `variance_scale` ([`Trial::variance_scale`]).
    pub(super) fn sigmas(&self, variance_scale: f64) -> Option<Vec<f64>> {
        let inverse = inverse(&self.hessian)?;
        positive_definite(&self.hessian).then(|| (0..inverse.len()).map(|i| (variance_scale * inverse[i][i]).sqrt()).collect())
    }
}

impl Refiner<'_> {
    /// Refines `unknowns` of `camera` together from `poses` (one per frame), as the module says.
    pub(super) fn joint(&mut self, camera: &Camera, poses: &[CameraPose], unknowns: &[Unknown]) -> Result<JointEstimate, SetupError> {
        let lost = || SetupError::Unconstrained { what: "camera", reason: "the board's edges were lost with the camera the line searches found".into() };
        let mut cam = *camera;
        let mut centre = self.trial_camera(&cam, &cam, poses)?;
        if !centre.cost.is_finite() {
            return Err(lost());
        }
        for _ in 0..MAX_NEWTON_STEPS {
            let bowl = self.bowl(&cam, &centre, unknowns)?;
            let step = bowl.newton().ok_or_else(valley)?;
            let longest = step.iter().fold(0.0f64, |a, v| a.max(v.abs()));
            let step: Vec<f64> = if longest > MAX_STEP_SPACINGS { step.iter().map(|v| v * MAX_STEP_SPACINGS / longest).collect() } else { step };
            // The step, halved while it does not lower the cost.
            let mut moved = None;
            let mut f = 1.0;
            for _ in 0..=STEP_HALVINGS {
                let c = moved_camera(&cam, unknowns, &step, f, self.lens());
                let t = self.trial_camera(&cam, &c, &centre.poses)?;
                if t.cost < centre.cost {
                    moved = Some((c, t));
                    break;
                }
                f /= 2.0;
            }
            let Some((c, t)) = moved else { return self.finish(cam, centre, &bowl, unknowns) };
            cam = c;
            centre = t;
            if longest * f < CONVERGED_SPACINGS {
                return self.finish(cam, centre, &bowl, unknowns);
            }
        }
        // Still moving after every step: the last point's own bowl says how well it is known.
        let bowl = self.bowl(&cam, &centre, unknowns)?;
        self.finish(cam, centre, &bowl, unknowns)
    }

    /// The estimate `cam` with the trial there and the sigmas `bowl` gives (its curvature varies little over the last
    /// step, which was under a spacing or taken from its own centre).
    fn finish(&self, cam: Camera, trial: Trial, bowl: &Bowl, unknowns: &[Unknown]) -> Result<JointEstimate, SetupError> {
        let sigmas = bowl.sigmas(trial.variance_scale()).ok_or_else(valley)?;
        let sigmas = sigmas.iter().zip(unknowns).map(|(s, u)| s * u.spacing).collect();
        Ok(JointEstimate { camera: cam, poses: trial.poses.clone(), sigmas, trial })
    }

    /// The quadratic through the cost on the design about `cam` (whose trial is `centre`), each trial's poses refit
    /// from the centre's.
    fn bowl(&mut self, cam: &Camera, centre: &Trial, unknowns: &[Unknown]) -> Result<Bowl, SetupError> {
        let n = unknowns.len();
        let design = design(n);
        let mut rows: Vec<(Vec<f64>, f64)> = Vec::with_capacity(design.len());
        for v in &design {
            let cost = if v.iter().all(|x| *x == 0.0) {
                centre.cost
            } else {
                self.trial_camera(cam, &moved_camera(cam, unknowns, v, 1.0, self.lens()), &centre.poses)?.cost
            };
            if !cost.is_finite() {
                return Err(SetupError::Unconstrained { what: "camera", reason: "the board's edges are lost next to the best camera".into() });
            }
            rows.push((features(v), cost));
        }
        let (bowl, r2) = fit_bowl(&rows, n).ok_or_else(valley)?;
        // The least share of the cost's variation the quadratic must explain, as for the line searches' parabola.
        if r2 < MIN_BOWL_R2 {
            return Err(SetupError::Unconstrained {
                what: "camera",
                reason: format!("the edge residual round the best camera is no smooth bowl (a quadratic explains {:.0} % of it): the fit jumps between poses there", 100.0 * r2),
            });
        }
        Ok(bowl)
    }
}

/// The least-squares quadratic through `rows` (each a design point's [`features`] and its cost) in `n` unknowns, and
/// the share of the cost's variation over them that it explains; `None` if the design does not fix it.
pub(super) fn fit_bowl(rows: &[(Vec<f64>, f64)], n: usize) -> Option<(Bowl, f64)> {
    let k = rows.first()?.0.len();
    let mut m = vec![vec![0.0f64; k]; k];
    let mut r = vec![0.0f64; k];
    for (row, y) in rows {
        for a in 0..k {
            for b in 0..k {
                m[a][b] += row[a] * row[b];
            }
            r[a] += row[a] * y;
        }
    }
    let q = solve_dyn(m, r)?;
    let mean = rows.iter().map(|(_, y)| y).sum::<f64>() / rows.len() as f64;
    let total: f64 = rows.iter().map(|(_, y)| (y - mean).powi(2)).sum();
    let resid: f64 = rows.iter().map(|(f, y)| (y - f.iter().zip(&q).map(|(a, b)| a * b).sum::<f64>()).powi(2)).sum();
    let r2 = if total > 0.0 { 1.0 - resid / total } else { 0.0 };
    // Features: 1, v_i, v_i^2, v_i v_j (i < j).
    let gradient = q[1..=n].to_vec();
    let mut hessian = vec![vec![0.0f64; n]; n];
    for i in 0..n {
        hessian[i][i] = 2.0 * q[1 + n + i];
    }
    let mut at = 1 + 2 * n;
    for i in 0..n {
        for j in i + 1..n {
            hessian[i][j] = q[at];
            hessian[j][i] = q[at];
            at += 1;
        }
    }
    Some((Bowl { gradient, hessian }, r2))
}

fn valley() -> SetupError {
    SetupError::Unconstrained { what: "camera", reason: "its unknowns trade off along a valley of equal fit: the frames do not tell them apart".into() }
}

/// `cam` moved by `f` times `step` (in spacings of `unknowns`).
fn moved_camera(cam: &Camera, unknowns: &[Unknown], step: &[f64], f: f64, lens: crate::camera::LensModel) -> Camera {
    unknowns.iter().zip(step).fold(*cam, |c, (u, v)| with_param(&c, u.which, param(cam, u.which) + f * v * u.spacing, lens))
}

/// The design, in spacings: the centre, each unknown alone one spacing either way, and each pair together both ways
/// (`(1, 1)` and `(-1, -1)`), which fixes their cross term.
fn design(n: usize) -> Vec<Vec<f64>> {
    let unit = |i: usize, s: f64| (0..n).map(|k| if k == i { s } else { 0.0 }).collect::<Vec<f64>>();
    let mut out = vec![vec![0.0; n]];
    for i in 0..n {
        out.push(unit(i, 1.0));
        out.push(unit(i, -1.0));
    }
    for i in 0..n {
        for j in i + 1..n {
            for s in [1.0, -1.0] {
                out.push((0..n).map(|k| if k == i || k == j { s } else { 0.0 }).collect());
            }
        }
    }
    out
}

/// A design point's quadratic features: 1, each coordinate, each squared, each pair's product.
pub(super) fn features(v: &[f64]) -> Vec<f64> {
    let n = v.len();
    let mut f = Vec::with_capacity(1 + 2 * n + n * (n - 1) / 2);
    f.push(1.0);
    f.extend_from_slice(v);
    f.extend(v.iter().map(|x| x * x));
    for i in 0..n {
        for j in i + 1..n {
            f.push(v[i] * v[j]);
        }
    }
    f
}

/// The inverse of a square matrix, `None` if it is singular.
fn inverse(m: &[Vec<f64>]) -> Option<Vec<Vec<f64>>> {
    let n = m.len();
    let columns: Option<Vec<Vec<f64>>> = (0..n).map(|j| solve_dyn(m.to_vec(), (0..n).map(|i| if i == j { 1.0 } else { 0.0 }).collect())).collect();
    let columns = columns?;
    Some((0..n).map(|i| (0..n).map(|j| columns[j][i]).collect()).collect())
}

/// Whether a symmetric matrix is positive definite (its Cholesky factorisation exists).
fn positive_definite(m: &[Vec<f64>]) -> bool {
    let n = m.len();
    let mut l = vec![vec![0.0f64; n]; n];
    for i in 0..n {
        for j in 0..=i {
            let s: f64 = (0..j).map(|k| l[i][k] * l[j][k]).sum();
            if i == j {
                let d = m[i][i] - s;
                if !(d > 0.0) {
                    return false;
                }
                l[i][j] = d.sqrt();
            } else {
                l[i][j] = (m[i][j] - s) / l[j][j];
            }
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The design's quadratic fit gives back an exact quadratic's gradient and Hessian, cross terms included, and its
    /// Newton step lands on the minimum.
    #[test]
    fn the_design_fixes_every_term_of_a_quadratic() {
        let h = [[4.0, 1.5, -0.5], [1.5, 3.0, 0.7], [-0.5, 0.7, 2.0]];
        let minimum = [0.3, -0.8, 0.45];
        let cost = |v: &[f64]| {
            let d: Vec<f64> = v.iter().zip(minimum).map(|(a, b)| a - b).collect();
            0.5 * (0..3).map(|i| (0..3).map(|j| d[i] * h[i][j] * d[j]).sum::<f64>()).sum::<f64>() + 2.0
        };
        let design = design(3);
        assert_eq!(design.len(), 1 + 2 * 3 + 3 * 2);
        let rows: Vec<(Vec<f64>, f64)> = design.iter().map(|v| (features(v), cost(v))).collect();
        let (bowl, r2) = fit_bowl(&rows, 3).expect("the design fixes the quadratic");
        // Exact data: only rounding separates the fit from the truth.
        assert!((r2 - 1.0).abs() < 1e-9, "{r2}");
        for i in 0..3 {
            for j in 0..3 {
                assert!((bowl.hessian[i][j] - h[i][j]).abs() < 1e-9, "H[{i}][{j}] {} vs {}", bowl.hessian[i][j], h[i][j]);
            }
        }
        let step = bowl.newton().expect("positive definite");
        for i in 0..3 {
            assert!((step[i] - minimum[i]).abs() < 1e-9, "step {step:?}");
        }
    }

    #[test]
    fn a_valley_or_a_saddle_has_no_newton_step() {
        let valley = Bowl { gradient: vec![0.1, 0.2], hessian: vec![vec![1.0, 1.0], vec![1.0, 1.0]] };
        assert!(valley.newton().is_none());
        let saddle = Bowl { gradient: vec![0.1, 0.2], hessian: vec![vec![1.0, 0.0], vec![0.0, -1.0]] };
        assert!(saddle.newton().is_none());
        assert!(saddle.sigmas(1.0).is_none());
    }
}
