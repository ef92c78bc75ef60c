//! The camera set-up's refinement: the focal length and radial distortion that make the board's edges fit best.
//!
//! Each trial camera undistorts every frame, each frame's pose is refit to the board's edges
//! ([`crate::locate::Locator::edge_fit`]), and the trial's cost is the truncated edge residual per model edge
//! sample over all frames. One unknown at a time (log focal length, then the first radial coefficient, then the
//! focal length again), over a coarse grid and then a fine one, with a parabola through the fine grid's lowest points
//! for the minimum and its curvature: the standard deviation is `sqrt(sigma^2 / a)` for a cost `a (x - x*)^2`
//! above its minimum and a per-sample residual variance `sigma^2`, holding the other unknowns fixed (so it
//! understates what their correlation adds). The samples along one edge are not independent (they share its
//! blur, its shading, and whatever the maker or the model got wrong about it), so each edge counts as one
//! measurement: the variance is scaled by samples per confirmed edge.

use super::joint::{features as bowl_features, fit_bowl, Unknown};
use super::SetupError;
use crate::board::Board;
use crate::camera::{BrownConrady, Camera, CameraPose, Distortion, KannalaBrandt, LensModel};
use crate::frame::Frame;
use crate::locate::{LocateConfig, Locator};
use crate::undistort::Undistorter;

/// One unknown's search: a coarse grid `centre +- coarse_half` in `coarse_step`s, then a fine grid of
/// [`FINE_POINTS`] in `fine_step`s around the coarse grid's best.
#[derive(Debug, Clone, Copy)]
struct Search {
    name: &'static str,
    coarse_half: f64,
    coarse_step: f64,
    fine_step: f64,
}

/// Least share of the cost's variation around the minimum that the parabola must explain: below it the trials
/// jump (a pose refit that lost some edges), and its minimum and curvature mean nothing.
pub(super) const MIN_BOWL_R2: f64 = 0.8;
/// The joint bowl's grid spacing, in fine steps: wide enough that the cost's small jumps (samples crossing the
/// inlier distance) do not swamp its curvature.
const JOINT_STEPS: f64 = 3.0;
/// Fine steps the search may walk on past its grid while the lowest trial is at an end.
const MAX_FINE_WALK: usize = 12;
/// Fine trials around the lowest that the parabola goes through.
const BOWL_POINTS: usize = 5;
/// Points of the fine grid (odd: centred on the coarse best).
const FINE_POINTS: usize = 7;

/// Log focal length: +-20 % in 5 % steps, then 1 % steps. The start (typed points or the best of the automatic
/// ladder) is within a few per cent; the coarse grid also catches a ladder step's 40 %.
const FOCAL: Search = Search { name: "focal length", coarse_half: 0.2, coarse_step: 0.05, fine_step: 0.01 };
/// Brown k1: barrel and pincushion lenses of webcams and phones (|k1| up to 0.3 at r = 1). Only the first radial
/// coefficient: one view of a board does not separate k2 from k1 (they trade off over the radii the board covers).
const BROWN_K1: Search = Search { name: "k1", coarse_half: 0.3, coarse_step: 0.05, fine_step: 0.01 };
/// Kannala-Brandt k1: near-equidistant fisheyes deviate by a few per cent at the edge of the field.
const FISHEYE_K1: Search = Search { name: "k1", coarse_half: 0.1, coarse_step: 0.025, fine_step: 0.005 };

/// The unknowns [`param`] numbers past the focal length (0) and the radial coefficients (1, 2): the principal point.
pub(super) const PRINCIPAL_X: usize = 3;
pub(super) const PRINCIPAL_Y: usize = 4;

/// The principal point is estimated from this many frames up: one view of a plane cannot tell it from the pose.
pub const MIN_FRAMES_FOR_PRINCIPAL_POINT: usize = 2;
/// The joint refinement's trials move the principal point this far (px) either way: a few pixels, against the tens a
/// lens may sit off its sensor's centre, and enough that the cost's curvature shows over its trial-to-trial jitter.
const PRINCIPAL_SPACING_PX: f64 = 6.0;
/// An estimated principal point is kept only within this share of the image's width and height of its centre (a
/// real lens's sits within a few per cent) and known to this share of the image's width (one sigma); otherwise the
/// frames do not fix it, and the centre is assumed as for one frame.
const MAX_PRINCIPAL_OFFSET: f64 = 0.1;
const MAX_PRINCIPAL_SIGMA: f64 = 0.01;

/// The principal point is estimated only where two of the frames see the board at slants at least this far apart
/// (degrees between the board's normal in the two cameras' frames): views of a plane from one direction cannot tell
/// it from the pose, however many (the same frame given twice "fixed" it to 7 px and moved the focal length 3 %),
/// and calibration targets are turned by tens of degrees between views. The fixtures' three views: 16-52 degrees apart.
const MIN_SLANT_SPREAD_DEG: f64 = 10.0;

/// The largest angle (degrees) between the board's normal as two of `poses` see it.
fn slant_spread_deg(poses: &[CameraPose]) -> f64 {
    let normal = |p: &CameraPose| [p.rotation[0][2], p.rotation[1][2], p.rotation[2][2]];
    let mut widest = 0.0f64;
    for (i, a) in poses.iter().enumerate() {
        for b in &poses[i + 1..] {
            let (u, v) = (normal(a), normal(b));
            let cos = (u[0] * v[0] + u[1] * v[1] + u[2] * v[2]).clamp(-1.0, 1.0);
            widest = widest.max(cos.acos().to_degrees());
        }
    }
    widest
}

/// Whether an estimated principal point (with its sigmas, px) is one to keep: see [`MAX_PRINCIPAL_OFFSET`].
fn plausible_principal_point(cam: &Camera, sigmas: &[f64]) -> bool {
    let (w, h) = (cam.image_width as f64, cam.image_height as f64);
    let near = (cam.cx - (w - 1.0) / 2.0).abs() <= MAX_PRINCIPAL_OFFSET * w && (cam.cy - (h - 1.0) / 2.0).abs() <= MAX_PRINCIPAL_OFFSET * h;
    near && sigmas.iter().all(|s| s.is_finite() && *s <= MAX_PRINCIPAL_SIGMA * w)
}

/// The refinement's result.
#[derive(Debug, Clone)]
pub struct Estimate {
    pub camera: Camera,
    pub poses: Vec<CameraPose>,
    pub focal_sigma_px: f64,
    pub distortion_sigma: Vec<f64>,
    /// One standard deviation of the principal point's `cx` and `cy`, px, where it was estimated (several frames).
    pub principal_point_sigma_px: Option<[f64; 2]>,
    pub mean_cost_px2: f64,
}

/// Owns the locator and the frames' refit poses while trial cameras are compared.
pub struct Refiner<'a> {
    frames: &'a [Frame],
    lens: LensModel,
    locator: Locator,
    /// Told what the refinement is doing, as it starts each search (a command line's progress line).
    progress: &'a dyn Fn(&str),
}

/// A trial's measurement.
#[derive(Debug, Clone)]
pub(super) struct Trial {
    /// Truncated cost per sample, px^2 (infinite if a frame lost the board).
    pub cost: f64,
    /// Inlier residual variance per sample, px^2.
    pub sigma2: f64,
    /// Total samples.
    pub samples: usize,
    /// Confirmed edges over all frames.
    pub edges: usize,
    pub poses: Vec<CameraPose>,
}

impl Trial {
    /// What one unit of per-sample cost curvature is worth in variance: the inlier residual variance per sample,
    /// each edge one measurement (its samples share its blur and shading), over the samples.
    pub fn variance_scale(&self) -> f64 {
        let per_edge = self.samples as f64 / self.edges.max(1) as f64;
        self.sigma2 * per_edge / self.samples.max(1) as f64
    }
}

impl<'a> Refiner<'a> {
    /// A refiner of `frames` of `board` whose poses are fitted as `locate` says.
    pub fn new(board: &Board, frames: &'a [Frame], lens: LensModel, locate: LocateConfig) -> Refiner<'a> {
        Refiner { frames, lens, locator: Locator::new(board, locate), progress: &|_| {} }
    }

    /// The refiner, telling `progress` what it does as it starts each search.
    pub fn with_progress(self, progress: &'a dyn Fn(&str)) -> Refiner<'a> {
        Refiner { progress, ..self }
    }

    /// Tells the progress callback what the refinement does now.
    pub(super) fn report(&self, what: &str) {
        (self.progress)(what)
    }

    /// The lens model the trial cameras take.
    pub(super) fn lens(&self) -> LensModel {
        self.lens
    }

    /// Refines `camera` and the frames' `poses` (one per frame); with `focal_given` the camera's focal length is
    /// held (the user's) and only the distortion, if asked for, and the poses are refined.
    pub fn run(&mut self, camera: Camera, poses: Vec<CameraPose>, distortion: bool, focal_given: bool) -> Result<Estimate, SetupError> {
        let mut cam = camera;
        let mut poses = poses;
        let k1 = match self.lens {
            LensModel::Brown => BROWN_K1,
            LensModel::Fisheye => FISHEYE_K1,
        };
        let schedule: Vec<(usize, Search)> = match (focal_given, distortion) {
            (false, false) => vec![(0, FOCAL)],
            (false, true) => vec![(0, FOCAL), (1, k1), (0, FOCAL)],
            (true, true) => vec![(1, k1)],
            (true, false) => Vec::new(),
        };
        let mut sigmas = [f64::NAN; 3];
        let mut last = None;
        for (i, (which, search)) in schedule.iter().enumerate() {
            // The last focal pass only polishes: its fine grid alone.
            let fine_only = i > 0 && *which == 0;
            self.report(&format!("refining the {} ({} of {})", search.name, i + 1, schedule.len()));
            let (best, sigma, trial) = self.line_search(&cam, &poses, *which, *search, fine_only)?;
            cam = with_param(&cam, *which, best, self.lens);
            poses = trial.poses.clone();
            sigmas[*which] = sigma;
            last = Some(trial);
        }
        let trial = match last {
            Some(t) => t,
            // Nothing to estimate: the poses alone are refit to the edges.
            None => self.trial_camera(&cam, &cam, &poses)?,
        };
        if !trial.cost.is_finite() {
            return Err(SetupError::Unconstrained { what: "pose", reason: "the board's edges were lost with the given camera".into() });
        }
        poses = trial.poses.clone();
        let mut trial = trial;
        // Several frames fix the principal point too, and every unknown is then refined together.
        let mut principal_point_sigma_px = None;
        if self.frames.len() >= MIN_FRAMES_FOR_PRINCIPAL_POINT && slant_spread_deg(&poses) >= MIN_SLANT_SPREAD_DEG && !focal_given {
            let mut unknowns = vec![Unknown { which: 0, spacing: JOINT_STEPS * FOCAL.fine_step }];
            if distortion {
                unknowns.push(Unknown { which: 1, spacing: JOINT_STEPS * k1.fine_step });
            }
            unknowns.push(Unknown { which: PRINCIPAL_X, spacing: PRINCIPAL_SPACING_PX });
            unknowns.push(Unknown { which: PRINCIPAL_Y, spacing: PRINCIPAL_SPACING_PX });
            let what = if distortion { "focal length, k1 and principal point" } else { "focal length and principal point" };
            self.report(&format!("refining the {what} together over {} frames", self.frames.len()));
            let joint = self.joint(&cam, &poses, &unknowns);
            if let Some(j) = joint.ok().filter(|j| plausible_principal_point(&j.camera, &j.sigmas[j.sigmas.len() - 2..])) {
                let n = j.sigmas.len();
                sigmas[0] = j.sigmas[0];
                if distortion {
                    sigmas[1] = j.sigmas[1];
                }
                principal_point_sigma_px = Some([j.sigmas[n - 2], j.sigmas[n - 1]]);
                cam = j.camera;
                poses = j.poses;
                trial = j.trial;
            }
        }
        if focal_given {
            let distortion_sigma = if distortion { vec![sigmas[1]] } else { Vec::new() };
            return Ok(Estimate { camera: cam, poses, focal_sigma_px: 0.0, distortion_sigma, principal_point_sigma_px: None, mean_cost_px2: trial.cost });
        }
        if distortion && principal_point_sigma_px.is_none() {
            // The focal length and k1 trade off (a fisheye's especially: both stretch the image outwards), and
            // each line search held the other fixed: the joint bowl gives their marginal uncertainties.
            let (sf, sk) = self.joint_sigmas(&cam, &poses, [JOINT_STEPS * FOCAL.fine_step, JOINT_STEPS * k1.fine_step])?;
            sigmas[0] = sigmas[0].max(sf);
            sigmas[1] = sigmas[1].max(sk);
        }
        let focal_sigma_px = sigmas[0] * cam.fx;
        if !(focal_sigma_px <= super::MAX_RELATIVE_FOCAL_SIGMA * cam.fx) {
            return Err(SetupError::Unconstrained {
                what: "focal length",
                reason: format!(
                    "its uncertainty is {:.1} % (limit {:.0} %): show the board at a slant, or more of it, or type points",
                    100.0 * focal_sigma_px / cam.fx,
                    100.0 * super::MAX_RELATIVE_FOCAL_SIGMA
                ),
            });
        }
        let distortion_sigma = if distortion { vec![sigmas[1]] } else { Vec::new() };
        Ok(Estimate { camera: cam, poses, focal_sigma_px, distortion_sigma, principal_point_sigma_px, mean_cost_px2: trial.cost })
    }

    /// Marginal standard deviations of the log focal length and k1 from a quadratic fitted to the cost on a 3 x 3
    /// grid of `steps` around `cam` (each trial refit from the centre's fit), each edge one measurement.
    fn joint_sigmas(&mut self, cam: &Camera, poses: &[CameraPose], steps: [f64; 2]) -> Result<(f64, f64), SetupError> {
        let centre = [param(cam, 0), param(cam, 1)];
        let mut rows: Vec<(Vec<f64>, f64)> = Vec::with_capacity(9);
        let mut at_centre = None;
        for i in -1i32..=1 {
            for j in -1i32..=1 {
                let (u, v) = (i as f64 * steps[0], j as f64 * steps[1]);
                let c = with_param(&with_param(cam, 0, centre[0] + u, self.lens), 1, centre[1] + v, self.lens);
                let t = self.trial_camera(cam, &c, poses)?;
                if !t.cost.is_finite() {
                    return Err(SetupError::Unconstrained { what: "focal length", reason: "the board's edges are lost next to the best camera".into() });
                }
                if i == 0 && j == 0 {
                    at_centre = Some(t.clone());
                }
                // In steps: the quadratic's coordinates, as the joint refinement's bowl takes them.
                rows.push((bowl_features(&[f64::from(i), f64::from(j)]), t.cost));
            }
        }
        let t = at_centre.expect("the grid has a centre");
        let Some((bowl, _)) = fit_bowl(&rows, 2) else {
            return Err(SetupError::Unconstrained { what: "focal length", reason: "the trials around the best camera do not fix a bowl".into() });
        };
        let Some(sigmas) = bowl.sigmas(t.variance_scale()) else {
            return Err(SetupError::Unconstrained {
                what: "focal length",
                reason: "the focal length and k1 trade off along a valley of equal fit: the frames do not tell them apart".into(),
            });
        };
        Ok((sigmas[0] * steps[0], sigmas[1] * steps[1]))
    }

    /// Minimises the cost over unknown `which` (0: log focal length, 1: k1, 2: k2), the others held.
    /// Returns the best value (log f for the focal length), its standard deviation and the trial there.
    fn line_search(&mut self, cam: &Camera, poses: &[CameraPose], which: usize, s: Search, fine_only: bool) -> Result<(f64, f64, Trial), SetupError> {
        let x0 = param(cam, which);
        let mut coarse_best = x0;
        // The camera and poses the fine grid starts from: the coarse best's own fit.
        let mut start: (Camera, Vec<CameraPose>) = (*cam, poses.to_vec());
        // Every trial of this search: (value, cost).
        let mut seen: Vec<(f64, f64)> = Vec::new();
        if !fine_only {
            let n = (s.coarse_half / s.coarse_step).round() as usize;
            let trials = self.sweep(cam, poses, which, x0, s.coarse_step, n)?;
            let best = trials.iter().map(|(x, t)| (t.cost, *x)).fold((f64::INFINITY, x0), |b, c| if c.0 < b.0 { c } else { b });
            seen.extend(trials.iter().map(|(x, t)| (*x, t.cost)));
            if !best.0.is_finite() {
                return Err(SetupError::Unconstrained { what: s.name, reason: "the board's edges were lost at every trial value".into() });
            }
            if (best.1 - x0).abs() > s.coarse_half - s.coarse_step / 2.0 {
                return Err(SetupError::Unconstrained {
                    what: s.name,
                    reason: format!("the best trial lies at the end of the range searched ({} {:.3})", s.name, shown(which, best.1)),
                });
            }
            coarse_best = best.1;
            if let Some((_, t)) = trials.iter().find(|(x, _)| *x == best.1) {
                start = (with_param(cam, which, best.1, self.lens), t.poses.clone());
            }
        }
        let half = (FINE_POINTS / 2) as usize;
        let mut fine = self.sweep(&start.0, &start.1, which, coarse_best, s.fine_step, half)?;
        // Walk on while the fine grid's lowest trial is at one of its ends: each step refit from its neighbour.
        for _ in 0..MAX_FINE_WALK {
            let lowest = (0..fine.len()).min_by(|&a, &b| fine[a].1.cost.total_cmp(&fine[b].1.cost)).expect("not empty");
            let (end, dir) = if lowest == 0 { (0, -1.0) } else if lowest == fine.len() - 1 { (fine.len() - 1, 1.0) } else { break };
            let (x_end, t_end) = (fine[end].0, fine[end].1.clone());
            let x = x_end + dir * s.fine_step;
            let t = self.trial(&with_param(cam, which, x_end, self.lens), &t_end.poses, which, x)?;
            if dir < 0.0 {
                fine.insert(0, (x, t));
            } else {
                fine.push((x, t));
            }
        }
        // The parabola goes through the fine trials around the lowest: the truncated cost is a bowl only near its
        // minimum (further out, edges leave the inlier distance and it levels off).
        let lowest = (0..fine.len()).min_by(|&a, &b| fine[a].1.cost.total_cmp(&fine[b].1.cost)).expect("not empty");
        let lo_i = lowest.saturating_sub(BOWL_POINTS / 2).min(fine.len().saturating_sub(BOWL_POINTS));
        let bowl = &fine[lo_i..(lo_i + BOWL_POINTS).min(fine.len())];
        seen.extend(fine.iter().map(|(x, t)| (*x, t.cost)));
        let (xs, costs): (Vec<f64>, Vec<f64>) = bowl.iter().map(|(x, t)| (*x, t.cost)).unzip();
        let best_fit = (with_param(cam, which, fine[lowest].0, self.lens), fine[lowest].1.poses.clone());
        let (x_star, curvature, r2) = parabola_minimum(&xs, &costs).ok_or_else(|| SetupError::Unconstrained {
            what: s.name,
            reason: format!("the edge residual does not rise on either side of the best {} (it is flat there)", s.name),
        })?;
        if r2 < MIN_BOWL_R2 {
            return Err(SetupError::Unconstrained {
                what: s.name,
                reason: format!(
                    "the edge residual is no smooth bowl around the best {} (a parabola explains {:.0} % of it): the fit jumps between poses there",
                    s.name,
                    100.0 * r2
                ),
            });
        }
        let (lo, hi) = xs.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), x| (lo.min(*x), hi.max(*x)));
        // The minimum must lie inside the fine grid: beyond it the parabola is extrapolated.
        let x_star = x_star.clamp(lo, hi);
        let t = self.trial(&best_fit.0, &best_fit.1, which, x_star)?;
        // Cost per sample a (x - x*)^2: the summed cost rises by samples * a, against per-sample variance sigma^2,
        // scaled by the samples per edge (each edge one independent measurement).
        let sigma = (t.variance_scale() / curvature).sqrt();
        Ok((x_star, sigma, t))
    }

    /// Trials at `x0 + i step` for `i` in `-n..=n`, each refit from its neighbour's fit on the side of `x0`
    /// (continuation: the poses follow the camera smoothly, where every trial started from `poses` would lose
    /// the board a few steps out). Returns them in order of `x`.
    fn sweep(&mut self, cam: &Camera, poses: &[CameraPose], which: usize, x0: f64, step: f64, n: usize) -> Result<Vec<(f64, Trial)>, SetupError> {
        let centre = self.trial(cam, poses, which, x0)?;
        let mut out = vec![(x0, centre.clone())];
        for dir in [1.0, -1.0] {
            let (mut from_cam, mut from_poses) = if centre.cost.is_finite() { (with_param(cam, which, x0, self.lens), centre.poses.clone()) } else { (*cam, poses.to_vec()) };
            for i in 1..=n {
                let x = x0 + dir * i as f64 * step;
                let t = self.trial(&from_cam, &from_poses, which, x)?;
                if t.cost.is_finite() {
                    from_cam = with_param(cam, which, x, self.lens);
                    from_poses = t.poses.clone();
                }
                out.push((x, t));
            }
        }
        out.sort_by(|a, b| a.0.total_cmp(&b.0));
        Ok(out)
    }

    /// The cost of the camera with unknown `which` set to `x`, each frame's pose refit from `poses`.
    fn trial(&mut self, cam: &Camera, poses: &[CameraPose], which: usize, x: f64) -> Result<Trial, SetupError> {
        let trial_cam = with_param(cam, which, x, self.lens);
        self.trial_camera(cam, &trial_cam, poses)
    }

    /// The cost of `trial_cam`, each frame's pose refit from `poses` (which belong to `cam`).
    pub(super) fn trial_camera(&mut self, cam: &Camera, trial_cam: &Camera, poses: &[CameraPose]) -> Result<Trial, SetupError> {
        let trial_cam = *trial_cam;
        if trial_cam.check().is_err() {
            return Ok(Trial { cost: f64::INFINITY, sigma2: f64::NAN, samples: 0, edges: 0, poses: poses.to_vec() });
        }
        let mut und = Undistorter::new(trial_cam, Default::default())?;
        let scale = trial_cam.fx / cam.fx;
        let (mut cost, mut samples, mut inlier_ss, mut inliers, mut edges) = (0.0, 0usize, 0.0, 0usize, 0usize);
        let mut out = Vec::with_capacity(poses.len());
        for (frame, pose) in self.frames.iter().zip(poses) {
            let u = und.run(frame)?;
            // A longer lens sees the same picture from further away: the board moves out along the rays.
            let start = CameraPose { translation: pose.translation.map(|t| t * scale), ..*pose };
            let Some(fit) = self.locator.edge_fit(&u, start)? else {
                return Ok(Trial { cost: f64::INFINITY, sigma2: f64::NAN, samples: 0, edges: 0, poses: poses.to_vec() });
            };
            cost += fit.truncated_cost_px2;
            samples += fit.samples;
            inliers += fit.inliers;
            edges += fit.edges;
            inlier_ss += fit.truncated_cost_px2 - (fit.samples - fit.inliers) as f64;
            out.push(fit.pose);
        }
        Ok(Trial { cost: cost / samples.max(1) as f64, sigma2: inlier_ss / inliers.max(1) as f64, samples, edges, poses: out })
    }
}

/// Unknown `which` of a camera: 0 the log focal length, 1 and 2 the first two radial coefficients, 3 and 4 the
/// principal point (px).
pub(super) fn param(cam: &Camera, which: usize) -> f64 {
    match (which, cam.distortion) {
        (0, _) => cam.fx.ln(),
        (PRINCIPAL_X, _) => cam.cx,
        (PRINCIPAL_Y, _) => cam.cy,
        (1, Distortion::Brown(b)) => b.k1,
        (2, Distortion::Brown(b)) => b.k2,
        (1, Distortion::Fisheye(k)) => k.k1,
        (2, Distortion::Fisheye(k)) => k.k2,
        _ => f64::NAN,
    }
}

/// A value for messages: the focal length in px, a coefficient as it is.
fn shown(which: usize, x: f64) -> f64 {
    if which == 0 {
        x.exp()
    } else {
        x
    }
}

/// `cam` with unknown `which` set to `x` (square pixels kept).
pub(super) fn with_param(cam: &Camera, which: usize, x: f64, lens: LensModel) -> Camera {
    let mut c = *cam;
    match which {
        0 => {
            c.fx = x.exp();
            c.fy = x.exp();
        }
        PRINCIPAL_X => c.cx = x,
        PRINCIPAL_Y => c.cy = x,
        _ => {
            c.distortion = match (lens, c.distortion) {
                (LensModel::Brown, Distortion::Brown(b)) => Distortion::Brown(if which == 1 { BrownConrady { k1: x, ..b } } else { BrownConrady { k2: x, ..b } }),
                (LensModel::Fisheye, Distortion::Fisheye(k)) => Distortion::Fisheye(if which == 1 { KannalaBrandt { k1: x, ..k } } else { KannalaBrandt { k2: x, ..k } }),
                (_, d) => d,
            }
        }
    }
    c
}

/// The minimum, the curvature `a` (of `a (x - x*)^2`) and the coefficient of determination of the least-squares
/// parabola through the points `(xs, ys)`; `None` if it opens downwards, or there are fewer than three points or
/// any is not finite.
fn parabola_minimum(xs: &[f64], ys: &[f64]) -> Option<(f64, f64, f64)> {
    if xs.len() < 3 || ys.iter().chain(xs).any(|v| !v.is_finite()) {
        return None;
    }
    let lowest = (0..ys.len()).min_by(|&a, &b| ys[a].total_cmp(&ys[b]))?;
    // Fit y = a u^2 + b u + c with u = x - x_lowest (conditioning).
    let x0 = xs[lowest];
    let mut m = [[0.0f64; 3]; 3];
    let mut r = [0.0f64; 3];
    for (x, y) in xs.iter().zip(ys) {
        let u = x - x0;
        let row = [u * u, u, 1.0];
        for a in 0..3 {
            for b in 0..3 {
                m[a][b] += row[a] * row[b];
            }
            r[a] += row[a] * y;
        }
    }
    let sol = solve(m, r)?;
    let (a, b, c) = (sol[0], sol[1], sol[2]);
    if !(a > 0.0) {
        return None;
    }
    let mean = ys.iter().sum::<f64>() / ys.len() as f64;
    let total: f64 = ys.iter().map(|y| (y - mean).powi(2)).sum();
    let resid: f64 = xs.iter().zip(ys).map(|(x, y)| (y - (a * (x - x0).powi(2) + b * (x - x0) + c)).powi(2)).sum();
    if !(total > 0.0) {
        // A flat cost: no bowl at all.
        return None;
    }
    let r2 = 1.0 - resid / total;
    Some((x0 - b / (2.0 * a), a, r2))
}

/// Solves the linear system `m x = r` by Gaussian elimination with partial pivoting; `None` if it is singular.
fn solve<const N: usize>(m: [[f64; N]; N], r: [f64; N]) -> Option<[f64; N]> {
    let x = solve_dyn(m.iter().map(|row| row.to_vec()).collect(), r.to_vec())?;
    x.try_into().ok()
}

/// [`solve`] for a system whose size is known only at run time (`m` square, as long as `r`).
pub(super) fn solve_dyn(mut m: Vec<Vec<f64>>, mut r: Vec<f64>) -> Option<Vec<f64>> {
    let n = r.len();
    if m.len() != n || m.iter().any(|row| row.len() != n) {
        return None;
    }
    let scale = m.iter().flatten().fold(0.0f64, |a, v| a.max(v.abs()));
    for col in 0..n {
        let pivot = (col..n).max_by(|&a, &b| m[a][col].abs().total_cmp(&m[b][col].abs()))?;
        if !(m[pivot][col].abs() > 1e-14 * scale) {
            return None;
        }
        m.swap(col, pivot);
        r.swap(col, pivot);
        for row in 0..n {
            if row != col {
                let f = m[row][col] / m[col][col];
                for k in col..n {
                    m[row][k] -= f * m[col][k];
                }
                r[row] -= f * r[col];
            }
        }
    }
    let x: Vec<f64> = (0..n).map(|i| r[i] / m[i][i]).collect();
    x.iter().all(|v| v.is_finite()).then_some(x)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_parabola_gives_back_its_minimum_and_curvature() {
        let xs: Vec<f64> = (0..7).map(|i| 0.1 * i as f64).collect();
        let ys: Vec<f64> = xs.iter().map(|x| 3.0 * (x - 0.27).powi(2) + 1.5).collect();
        let (x, a, r2) = parabola_minimum(&xs, &ys).expect("opens upwards");
        // Exact data: only rounding separates the fit from the truth.
        assert!((x - 0.27).abs() < 1e-9, "{x}");
        assert!((a - 3.0).abs() < 1e-9, "{a}");
        assert!((r2 - 1.0).abs() < 1e-9, "{r2}");
    }

    #[test]
    fn the_slant_spread_is_the_widest_angle_between_the_boards_normals() {
        let from = |x: f64| CameraPose::look_at(crate::geom::BoardPoint3::new(x, 600.0, 1000.0), crate::geom::BoardPoint3::new(0.0, 600.0, 0.0), [0.0, 1.0, 0.0]).unwrap();
        // Straight above the board's middle and 1000 mm to either side at 1000 mm up: 45 degrees each way.
        let spread = slant_spread_deg(&[from(0.0), from(1000.0), from(-1000.0)]);
        assert!((spread - 90.0).abs() < 1e-6, "{spread}");
        assert!((slant_spread_deg(&[from(0.0), from(1000.0)]) - 45.0).abs() < 1e-6);
        // One place, however many frames: no spread.
        assert!(slant_spread_deg(&[from(250.0), from(250.0)]).abs() < 1e-6);
        assert!(slant_spread_deg(&[from(0.0)]).abs() < 1e-12);
    }

    #[test]
    fn a_flat_or_falling_cost_has_no_minimum() {
        let xs: Vec<f64> = (0..7).map(|i| i as f64).collect();
        assert!(parabola_minimum(&xs, &[1.0; 7]).is_none());
        let falling: Vec<f64> = xs.iter().map(|x| -x * x).collect();
        assert!(parabola_minimum(&xs, &falling).is_none());
    }
}
