//! A washer leaning in a hole (its underside resting on the rim where its edge
//! crosses it, its low edge down in the cup): found by the leaning pose whose
//! projected top outline best separates the team's colour inside from other
//! colours outside, then placed by its top face's edges.

use crate::board::{Hole, WasherBoard};
use crate::detect::colour::bgr_to_hsv;
use crate::detect::verify::Ctx;
use crate::detect::ColourClass;
use crate::geom::BoardPoint3;
use crate::measure::edge_on_segment;
use serde::{Deserialize, Serialize};

/// Standard uncertainty (mm) of a leaner's centre from the pose search alone
/// (where its edges do not place it, [`fit_to_edges`]): the RMS of the
/// fixtures' 13 leaners' placement errors by the search was 0.91 mm (worst
/// 1.5 mm), rounded up.
pub const LEANER_POSE_SIGMA_MM: f64 = 1.0;
/// A leaning washer's pose found by [`measure_leaner`].
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct LeanerFit {
    /// The washer's centre (mid-thickness) in the board frame.
    pub centre: BoardPoint3,
    pub tilt_deg: f64,
    /// Mean (team colour inside - outside) along the outline, -1..1.
    pub score: f64,
    /// Standard uncertainty (mm) of the centre in plan.
    pub sigma_mm: f64,
}

/// Leaning poses searched: directions of the rise round the hole (10 degrees
/// apart), tilts (5 degrees apart over what a washer propped on a rim takes),
/// and how far into the hole its centre lies.
const LEANER_AZIMUTHS: usize = 36;
const LEANER_TILTS: usize = 5;
const LEANER_TILT_MIN_DEG: f64 = 15.0;
const LEANER_TILT_MAX_DEG: f64 = 35.0;
const LEANER_REACHES: usize = 6;
/// A leaner's centre lies inside the rim (over the hole, or it would lie on
/// the board rather than tip in); a washer propped on the rim has it barely
/// inside. This much (mm) keeps the posed underside off the rim's edge.
const LEANER_RIM_CLEARANCE_MM: f64 = 1.0;
/// Points round the outline, and how far inside / outside it each is sampled.
const LEANER_OUTLINE_POINTS: usize = 72;
/// The fine search's steps each way from the last best (a fifth of the last
/// step each), and how many times it is refined.
const LEANER_FINE: i32 = 2;
const LEANER_REFINE_LEVELS: usize = 2;
const LEANER_PROBE_MM: f64 = 3.0;
/// The last refinement's probes, closer to the outline (mm): at 3 mm every
/// pose within ~3 mm of the true one scores the same.
const LEANER_CLOSE_PROBE_MM: f64 = 1.0;
/// The last refinement's steps each way (a tenth of a coarse step each).
const LEANER_LAST_STEPS: i32 = 4;
/// The last refinement's tilt step (degrees), over the whole range.
const LEANER_LAST_TILT_STEP_DEG: f64 = 1.0;
/// Below this outline score (team colour inside, none outside, on average) no
/// leaning pose explains the hole: the flat fit stands, with the model's doubt.
const LEANER_MIN_SCORE: f64 = 0.5;

/// Measures a washer leaning in hole `hole` (its underside resting on the
/// rim, its low edge down in the cup): a search over the leaning poses, each
/// scored by how well its projected top outline separates the team's colour
/// inside from other colours outside, then the pose fitted to its top face's
/// edges ([`fit_to_edges`]). A flat outline fit places a tilted washer tens of
/// mm off; this places its centre where it is.
pub(super) fn measure_leaner(cx: &Ctx, w: &WasherBoard, hole: usize, class: ColourClass) -> Option<LeanerFit> {
    let h = w.holes[hole];
    let r = cx.geo.shape.radius_mm;
    let teamness = |p: BoardPoint3| -> Option<f64> {
        if !cx.sees(p) {
            return None;
        }
        cx.hsv_at(p).map(|hsv| if class.contains(hsv) { 1.0 } else { 0.0 })
    };
    // The outline's points' directions round the face, the same for every pose.
    let dirs: [(f64, f64); LEANER_OUTLINE_POINTS] = std::array::from_fn(|k| (std::f64::consts::TAU * k as f64 / LEANER_OUTLINE_POINTS as f64).sin_cos());
    // The pose from (rise direction, tilt, centre's distance from the hole's centre).
    let score_at = |a: f64, tilt: f64, d: f64, probe: f64| -> Option<LeanerFit> {
        let f = LeaningFace::new(w, &h, a, tilt, d);
        let (mut score, mut n_seen) = (0.0, 0);
        for &dir in &dirs {
            // A point counts where both its sides are seen: the outer one is not looked at where the inner is hidden.
            let Some(i) = teamness(f.at_dir(r - probe, dir)) else { continue };
            if let Some(o) = teamness(f.at_dir(r + probe, dir)) {
                score += i - o;
                n_seen += 1;
            }
        }
        (n_seen >= LEANER_OUTLINE_POINTS / 3).then(|| LeanerFit { centre: f.centre, tilt_deg: tilt, score: score / n_seen as f64, sigma_mm: LEANER_POSE_SIGMA_MM })
    };
    let score_of = |a: f64, tilt: f64, d: f64| score_at(a, tilt, d, LEANER_PROBE_MM);
    let reach = |tilt: f64| ((h.radius() - r * tilt.to_radians().cos()).max(0.0), h.radius() - LEANER_RIM_CLEARANCE_MM);
    let better = |best: &mut Option<(LeanerFit, f64, f64)>, fit: Option<LeanerFit>, a: f64, d: f64| {
        if let Some(f) = fit {
            if best.as_ref().is_none_or(|b| f.score > b.0.score) {
                *best = Some((f, a, d));
            }
        }
    };
    // Each stage's poses are scored on the machine's cores and taken in the order listed, as one after the other
    // would: the best is the first of the highest score.
    let scored = |poses: &[(f64, f64, f64)], probe: f64| crate::parallel::map_in_order(poses, |_: &mut (), &(a, tilt, d)| score_at(a, tilt, d, probe));
    // Coarse: the whole range of leaning poses.
    let mut poses = Vec::with_capacity(LEANER_AZIMUTHS * LEANER_TILTS * LEANER_REACHES);
    for ai in 0..LEANER_AZIMUTHS {
        let a = std::f64::consts::TAU * ai as f64 / LEANER_AZIMUTHS as f64;
        for ti in 0..LEANER_TILTS {
            let tilt = LEANER_TILT_MIN_DEG + (LEANER_TILT_MAX_DEG - LEANER_TILT_MIN_DEG) * ti as f64 / (LEANER_TILTS - 1) as f64;
            let (d_lo, d_hi) = reach(tilt);
            for di in 0..LEANER_REACHES {
                poses.push((a, tilt, d_lo + (d_hi - d_lo) * di as f64 / (LEANER_REACHES - 1) as f64));
            }
        }
    }
    let mut best: Option<(LeanerFit, f64, f64)> = None;
    for (&(a, _, d), fit) in poses.iter().zip(scored(&poses, LEANER_PROBE_MM)) {
        better(&mut best, fit, a, d);
    }
    // Finer: a fifth of the last step each way, around the last best, for
    // each level of refinement.
    let (coarse, a0, d0) = best?;
    let (mut da, mut dt) = (std::f64::consts::TAU / LEANER_AZIMUTHS as f64, (LEANER_TILT_MAX_DEG - LEANER_TILT_MIN_DEG) / (LEANER_TILTS - 1) as f64);
    let mut dd = (reach(coarse.tilt_deg).1 - reach(coarse.tilt_deg).0) / (LEANER_REACHES - 1) as f64;
    let mut fine = Some((coarse, a0, d0));
    for _ in 0..LEANER_REFINE_LEVELS {
        let (centre, a0, d0) = fine.expect("set above");
        poses.clear();
        for i in -LEANER_FINE..=LEANER_FINE {
            for j in -LEANER_FINE..=LEANER_FINE {
                for k in -LEANER_FINE..=LEANER_FINE {
                    let step = |n: i32, size: f64| n as f64 * size / (2 * LEANER_FINE + 1) as f64;
                    let (a, tilt, d) = (a0 + step(i, da), centre.tilt_deg + step(j, dt), d0 + step(k, dd));
                    if (LEANER_TILT_MIN_DEG..=LEANER_TILT_MAX_DEG).contains(&tilt) && d <= reach(tilt).1 {
                        poses.push((a, tilt, d));
                    }
                }
            }
        }
        for (&(a, _, d), fit) in poses.iter().zip(scored(&poses, LEANER_PROBE_MM)) {
            better(&mut fine, fit, a, d);
        }
        let shrink = (2 * LEANER_FINE + 1) as f64;
        (da, dt, dd) = (da / shrink, dt / shrink, dd / shrink);
    }
    // Last: the outline's probes closer in, where a pose off by a millimetre
    // already misses; the mean of the poses that score best, up to 0.4 of
    // a coarse step each way, is the pose.
    let (coarse_best, a1, d1) = fine?;
    let mut tied: Vec<(f64, f64, f64, f64)> = Vec::new();
    let mut top = f64::NEG_INFINITY;
    // Azimuth and reach in steps of a tenth of a coarse step, four each way.
    let (da, dd) = (da * 25.0 / 10.0, dd * 25.0 / 10.0);
    // The tilt over its whole range: the outline's foreshortening (cos tilt)
    // is a few percent between tilts, which the 3 mm probes do not see.
    let tilts = ((LEANER_TILT_MAX_DEG - LEANER_TILT_MIN_DEG) / LEANER_LAST_TILT_STEP_DEG).round() as i32;
    poses.clear();
    for i in -LEANER_LAST_STEPS..=LEANER_LAST_STEPS {
        for j in 0..=tilts {
            for k in -LEANER_LAST_STEPS..=LEANER_LAST_STEPS {
                let step = |n: i32, size: f64| n as f64 * size;
                let (a, tilt, d) = (a1 + step(i, da), LEANER_TILT_MIN_DEG + step(j, LEANER_LAST_TILT_STEP_DEG), d1 + step(k, dd));
                // (As `continue` unless in range: a NaN reach is kept, as before.)
                if (LEANER_TILT_MIN_DEG..=LEANER_TILT_MAX_DEG).contains(&tilt) && !(d > reach(tilt).1) {
                    poses.push((a, tilt, d));
                }
            }
        }
    }
    for (&(a, tilt, d), f) in poses.iter().zip(scored(&poses, LEANER_CLOSE_PROBE_MM)) {
        let Some(f) = f else { continue };
        if f.score > top + 1e-12 {
            (top, tied) = (f.score, Vec::new());
        }
        if (f.score - top).abs() <= 1e-12 {
            tied.push((a, tilt, d, f.score));
        }
    }
    let searched = ((a1, coarse_best.tilt_deg, d1), coarse_best);
    let (pose, fit) = if tied.is_empty() {
        searched
    } else {
        let m = |f: fn(&(f64, f64, f64, f64)) -> f64| tied.iter().map(f).sum::<f64>() / tied.len() as f64;
        let (a, tilt, d) = (m(|t| t.0), m(|t| t.1), m(|t| t.2));
        score_of(a, tilt, d).map_or(searched, |f| ((a, tilt, d), LeanerFit { score: f.score.max(coarse_best.score), ..f }))
    };
    if fit.score < LEANER_MIN_SCORE {
        return None;
    }
    // The search places the pose to a millimetre or two; the outline's own edges place it.
    Some(match fit_to_edges(cx, w, &h, class, pose) {
        Some(((a, tilt, d), sigma_mm)) => LeanerFit { centre: LeaningFace::new(w, &h, a, tilt, d).centre, tilt_deg: tilt, sigma_mm, ..fit },
        None => fit,
    })
}

/// A washer's top face in a leaning pose: propped on the rim of a hole (see
/// [`WasherBoard::propped_centre_z`]), rising along direction `a` (radians,
/// board frame) by `tilt` (degrees), its centre `d` mm from the hole's centre
/// in plan along the rise.
struct LeaningFace {
    /// The washer's centre (mid-thickness).
    centre: BoardPoint3,
    /// The top face's centre, and its axes: `u` along the rise, `v` across it, `n` its normal.
    top: [f64; 3],
    u: [f64; 3],
    v: [f64; 3],
    n: [f64; 3],
}

impl LeaningFace {
    fn new(w: &WasherBoard, h: &Hole, a: f64, tilt: f64, d: f64) -> LeaningFace {
        let tr = tilt.to_radians();
        let centre = BoardPoint3::new(h.x_mm + d * a.cos(), h.y_mm + d * a.sin(), w.propped_centre_z(h, d, tilt));
        let n = [-tr.sin() * a.cos(), -tr.sin() * a.sin(), tr.cos()];
        let u = [tr.cos() * a.cos(), tr.cos() * a.sin(), tr.sin()];
        let v = [-a.sin(), a.cos(), 0.0];
        let half = w.washer_thickness_mm / 2.0;
        let top = [centre.x_mm + n[0] * half, centre.y_mm + n[1] * half, centre.z_mm + n[2] * half];
        LeaningFace { centre, top, u, v, n }
    }

    /// The point of the top face's plane `rho` mm from its centre, `phi` radians round from the rise.
    fn at(&self, rho: f64, phi: f64) -> BoardPoint3 {
        self.at_dir(rho, phi.sin_cos())
    }

    /// [`LeaningFace::at`] the angle whose `(sin, cos)` is given.
    fn at_dir(&self, rho: f64, (s, c): (f64, f64)) -> BoardPoint3 {
        let k = |i: usize| self.top[i] + rho * (c * self.u[i] + s * self.v[i]);
        BoardPoint3::new(k(0), k(1), k(2))
    }

    /// How far (mm) from the top face's centre the ray from `origin` along `dir` meets its plane; `None` for a ray
    /// along the plane.
    fn radius_of(&self, origin: BoardPoint3, dir: [f64; 3]) -> Option<f64> {
        let o = [origin.x_mm, origin.y_mm, origin.z_mm];
        let along = (0..3).map(|i| dir[i] * self.n[i]).sum::<f64>();
        if along.abs() < 1e-9 {
            return None;
        }
        let t = (0..3).map(|i| (self.top[i] - o[i]) * self.n[i]).sum::<f64>() / along;
        Some((0..3).map(|i| (o[i] + t * dir[i] - self.top[i]).powi(2)).sum::<f64>().sqrt())
    }
}

/// Rounds of the edge fit: the outline's edges probed about the last pose, the pose fitted to them.
const EDGE_ROUNDS: usize = 3;
/// The probes across the outline reach this far (mm) each side of it in the first round (the search's pose is a
/// millimetre or two off, [`LEANER_POSE_SIGMA_MM`]) and this far in the later ones.
const EDGE_BAND_MM: f64 = 4.0;
const EDGE_LATER_BAND_MM: f64 = 2.0;
/// Probe samples along the segment's image (px): as an outline fit's own probes.
const EDGE_STEP_PX: f64 = 0.25;
/// Gauss-Newton steps per round, and the step (in the parameters' units: radians, radians, mm) under which it has
/// converged.
const EDGE_GN_STEPS: usize = 10;
const EDGE_GN_CONVERGED: f64 = 1e-6;
/// An edge whose residual exceeds this many robust sigmas (1.4826 times the median absolute residual) of them all, and
/// [`EDGE_MIN_OUTLIER_PX`] at least, belongs to something else (the rim's shadow, a neighbour): dropped.
const EDGE_OUTLIER_SIGMAS: f64 = 3.0;
const EDGE_MIN_OUTLIER_PX: f64 = 0.5;
/// Edges kept at least this many (of [`LEANER_OUTLINE_POINTS`]): the low side is down in the cup, behind the rim,
/// and a quarter of the outline, on the high side, still fixes the three parameters.
const EDGE_MIN_POINTS: usize = LEANER_OUTLINE_POINTS / 4;
/// The fitted pose is kept only within these tilts (degrees): a washer propped on a rim lies at some 10-60 degrees.
const EDGE_TILT_RANGE_DEG: (f64, f64) = (5.0, 60.0);
/// What the fit's own scatter does not hold, as a standard uncertainty (mm) of the centre added to the fit's: the
/// edges' bias where the washer's side, facing the camera, shows beside its top's rim (own renders: the rim read up
/// to 1.5 px inside there, which moves a fit's centre by tenths of a millimetre to a millimetre and a half along the
/// rise). With it, every leaner of the own, varied and external renders lies within three of its reported sigmas.
const EDGE_MODEL_SIGMA_MM: f64 = 0.4;

/// The leaning pose `(a, tilt, d)` fitted to the edges of its top face's outline, probed across it about `start`:
/// least squares of each edge's distance from the top face's centre, where its line of sight meets the face's
/// plane, less the washer's radius (Gauss-Newton, numeric derivatives), the outliers dropped. Returns the pose and
/// the standard uncertainty (mm) of the centre in plan; `None` with too few edges or a pose out of range.
fn fit_to_edges(cx: &Ctx, w: &WasherBoard, h: &Hole, class: ColourClass, start: (f64, f64, f64)) -> Option<((f64, f64, f64), f64)> {
    let (camera, pose) = (&cx.geo.camera, &cx.geo.pose);
    let r = cx.geo.shape.radius_mm;
    let inside = |bgr: [f32; 3]| class.contains(bgr_to_hsv(bgr));
    let mut p = [start.0, start.1.to_radians(), start.2];
    let face = |p: &[f64; 3]| LeaningFace::new(w, h, p[0], p[1].to_degrees(), p[2]);
    let mut sigma = f64::INFINITY;
    for round in 0..EDGE_ROUNDS {
        let f = face(&p);
        let band = if round == 0 { EDGE_BAND_MM } else { EDGE_LATER_BAND_MM };
        // Each edge's line of sight.
        let rays: Vec<(BoardPoint3, [f64; 3])> = (0..LEANER_OUTLINE_POINTS)
            .filter_map(|k| {
                let phi = std::f64::consts::TAU * k as f64 / LEANER_OUTLINE_POINTS as f64;
                let (from, to) = (f.at(r - band, phi), f.at(r + band, phi));
                if !(cx.sees(from) && cx.sees(f.at(r, phi)) && cx.sees(to)) {
                    return None;
                }
                let (t, _) = edge_on_segment(cx.frame, camera, pose, from, to, EDGE_STEP_PX, &inside)?;
                // The camera's line of sight through the edge: from its centre, towards the edge's point.
                let (e, c) = (f.at(r - band + 2.0 * band * t, phi), pose.centre());
                let to = [e.x_mm - c.x_mm, e.y_mm - c.y_mm, e.z_mm - c.z_mm];
                let norm = (to[0] * to[0] + to[1] * to[1] + to[2] * to[2]).sqrt();
                Some((c, to.map(|v| v / norm)))
            })
            .collect();
        let residuals = |p: &[f64; 3], keep: &[bool]| -> Option<Vec<f64>> {
            let f = face(p);
            rays.iter().zip(keep).filter(|(_, k)| **k).map(|(ray, _)| f.radius_of(ray.0, ray.1).map(|rho| rho - r)).collect()
        };
        // The residuals' derivatives by the parameters, numerically: a ten-thousandth of a radian, a thousandth of
        // a millimetre; as three columns.
        let jacobian = |p: &[f64; 3], keep: &[bool], r0: &[f64]| -> Option<[Vec<f64>; 3]> {
            let mut jac = [vec![], vec![], vec![]];
            for (i, st) in [1e-4, 1e-4, 1e-3].iter().enumerate() {
                let mut q = *p;
                q[i] += st;
                jac[i] = residuals(&q, keep)?.iter().zip(r0).map(|(a, b)| (a - b) / st).collect();
            }
            Some(jac)
        };
        let mut keep = vec![true; rays.len()];
        for pass in 0..2 {
            if keep.iter().filter(|k| **k).count() < EDGE_MIN_POINTS {
                return None;
            }
            for _ in 0..EDGE_GN_STEPS {
                let r0 = residuals(&p, &keep)?;
                let jac = jacobian(&p, &keep, &r0)?;
                let delta = normal_step(&jac, &r0)?;
                for i in 0..3 {
                    p[i] -= delta[i];
                }
                if delta.iter().map(|d| d.abs()).fold(0.0, f64::max) < EDGE_GN_CONVERGED {
                    break;
                }
            }
            // After the fit to every edge, the outliers are dropped and the fit made again without them.
            if pass == 0 {
                let f = face(&p);
                let all: Vec<f64> = rays.iter().map(|ray| f.radius_of(ray.0, ray.1).map_or(f64::INFINITY, |rho| (rho - r).abs())).collect();
                let mad = crate::detect::teams::median(all.iter().map(|e| *e as f32).collect()).unwrap_or(0.0) as f64;
                let limit = (EDGE_OUTLIER_SIGMAS * 1.4826 * mad).max(EDGE_MIN_OUTLIER_PX * cx.mm_per_px(f.centre));
                keep = all.iter().map(|e| *e <= limit).collect();
            }
        }
        let tilt = p[1].to_degrees();
        if !(EDGE_TILT_RANGE_DEG.0..=EDGE_TILT_RANGE_DEG.1).contains(&tilt) || !(0.0..h.radius()).contains(&p[2]) {
            return None;
        }
        // The centre's uncertainty in plan from the residuals' scatter: the parameters' covariance carried to
        // (x, y) = hole + d (cos a, sin a), its larger axis.
        let r0 = residuals(&p, &keep)?;
        let n = r0.len();
        let s2 = r0.iter().map(|e| e * e).sum::<f64>() / (n as f64 - 3.0).max(1.0);
        let cov = inverse3(&normal_matrix(&jacobian(&p, &keep, &r0)?))?.map(|row| row.map(|v| v * s2));
        let (a, d) = (p[0], p[2]);
        // d(x, y)/d(a, d): only a and d move the centre in plan.
        let g = [[-d * a.sin(), a.cos()], [d * a.cos(), a.sin()]];
        let c2 = [[cov[0][0], cov[0][2]], [cov[2][0], cov[2][2]]];
        let mut cxy = [[0.0; 2]; 2];
        for i in 0..2 {
            for j in 0..2 {
                cxy[i][j] = (0..2).map(|k| (0..2).map(|l| g[i][k] * c2[k][l] * g[j][l]).sum::<f64>()).sum();
            }
        }
        let (tr, det) = (cxy[0][0] + cxy[1][1], cxy[0][0] * cxy[1][1] - cxy[0][1] * cxy[1][0]);
        let largest = tr / 2.0 + ((tr * tr / 4.0 - det).max(0.0)).sqrt();
        sigma = largest.max(0.0).sqrt().hypot(EDGE_MODEL_SIGMA_MM);
    }
    Some(((p[0], p[1].to_degrees(), p[2]), sigma))
}

/// JᵀJ of a Jacobian given as its three columns.
fn normal_matrix(jac: &[Vec<f64>; 3]) -> [[f64; 3]; 3] {
    let mut m = [[0.0; 3]; 3];
    for i in 0..3 {
        for j in 0..3 {
            m[i][j] = jac[i].iter().zip(&jac[j]).map(|(a, b)| a * b).sum();
        }
    }
    m
}

/// The Gauss-Newton step (JᵀJ)⁻¹ Jᵀ r; `None` where JᵀJ is singular.
fn normal_step(jac: &[Vec<f64>; 3], res: &[f64]) -> Option<[f64; 3]> {
    let inv = inverse3(&normal_matrix(jac))?;
    let jtr: [f64; 3] = std::array::from_fn(|i| jac[i].iter().zip(res).map(|(a, b)| a * b).sum());
    Some(std::array::from_fn(|i| (0..3).map(|j| inv[i][j] * jtr[j]).sum()))
}

/// The inverse of a 3x3 matrix (OpenCV's, by SVD); `None` where it is singular or OpenCV fails.
fn inverse3(m: &[[f64; 3]; 3]) -> Option<[[f64; 3]; 3]> {
    use opencv::prelude::*;
    let src = opencv::core::Mat::from_slice_2d(m).ok()?;
    let mut inv = opencv::core::Mat::default();
    let conditioning = opencv::core::invert(&src, &mut inv, opencv::core::DECOMP_SVD).ok()?;
    // The reciprocal condition number SVD reports: none below 1e-12 is trusted (0 for a singular matrix).
    if !(conditioning > 1e-12) {
        return None;
    }
    let mut r = [[0.0; 3]; 3];
    for i in 0..3 {
        for j in 0..3 {
            r[i][j] = inv.at_2d::<f64>(i as i32, j as i32).ok().copied().filter(|v| v.is_finite())?;
        }
    }
    Some(r)
}
