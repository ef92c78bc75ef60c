//! A washer leaning in a hole (its underside propped on the rim, its low edge
//! down in the cup): placed by the leaning pose whose projected top outline
//! best separates the team's colour inside from other colours outside.

use crate::board::WasherBoard;
use crate::detect::verify::Ctx;
use crate::detect::ColourClass;
use crate::geom::BoardPoint3;
use serde::{Deserialize, Serialize};

/// Standard uncertainty (mm) of a leaner's centre from the pose search: the
/// RMS of the fixtures' 13 leaners' placement errors is 0.91 mm (worst 1.5 mm),
/// rounded up.
pub const LEANER_POSE_SIGMA_MM: f64 = 1.0;
/// A leaning washer's pose found by [`measure_leaner`].
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct LeanerFit {
    /// The washer's centre (mid-thickness) in the board frame.
    pub centre: BoardPoint3,
    pub tilt_deg: f64,
    /// Mean (team colour inside - outside) along the outline, -1..1.
    pub score: f64,
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

/// Measures a washer leaning in hole `hole` (its underside propped on the
/// rim, its low edge down in the cup): a search over the leaning poses, each
/// scored by how well its projected top outline separates the team's colour
/// inside from other colours outside. A flat outline fit places a tilted
/// washer tens of mm off; this places its centre where it is.
pub(super) fn measure_leaner(cx: &Ctx, w: &WasherBoard, hole: usize, class: ColourClass) -> Option<LeanerFit> {
    let h = w.holes[hole];
    let (r, th) = (cx.geo.shape.radius_mm, w.washer_thickness_mm);
    let teamness = |p: BoardPoint3| -> Option<f64> {
        if !cx.sees(p) {
            return None;
        }
        cx.hsv_at(p).map(|hsv| if class.contains(hsv) { 1.0 } else { 0.0 })
    };
    // The pose from (rise direction, tilt, centre's distance from the hole's centre).
    let score_at = |a: f64, tilt: f64, d: f64, probe: f64| -> Option<LeanerFit> {
        let tr = tilt.to_radians();
        // Its underside passes through the rim's edge along the rise.
        let under = -(h.radius() - d) * tr.tan();
        let cz = under + th / 2.0 / tr.cos();
        let centre = BoardPoint3::new(h.x_mm + d * a.cos(), h.y_mm + d * a.sin(), cz);
        // The top face's frame: u along the rise, v across it, n its normal.
        let n = [-tr.sin() * a.cos(), -tr.sin() * a.sin(), tr.cos()];
        let u = [tr.cos() * a.cos(), tr.cos() * a.sin(), tr.sin()];
        let v = [-a.sin(), a.cos(), 0.0];
        let top = [centre.x_mm + n[0] * th / 2.0, centre.y_mm + n[1] * th / 2.0, centre.z_mm + n[2] * th / 2.0];
        let at = |rho: f64, phi: f64| {
            let (s, c) = phi.sin_cos();
            BoardPoint3::new(
                top[0] + rho * (c * u[0] + s * v[0]),
                top[1] + rho * (c * u[1] + s * v[1]),
                top[2] + rho * (c * u[2] + s * v[2]),
            )
        };
        let (mut score, mut n_seen) = (0.0, 0);
        for k in 0..LEANER_OUTLINE_POINTS {
            let phi = std::f64::consts::TAU * k as f64 / LEANER_OUTLINE_POINTS as f64;
            if let (Some(i), Some(o)) = (teamness(at(r - probe, phi)), teamness(at(r + probe, phi))) {
                score += i - o;
                n_seen += 1;
            }
        }
        (n_seen >= LEANER_OUTLINE_POINTS / 3).then(|| LeanerFit { centre, tilt_deg: tilt, score: score / n_seen as f64 })
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
    // Coarse: the whole range of leaning poses.
    let mut best: Option<(LeanerFit, f64, f64)> = None;
    for ai in 0..LEANER_AZIMUTHS {
        let a = std::f64::consts::TAU * ai as f64 / LEANER_AZIMUTHS as f64;
        for ti in 0..LEANER_TILTS {
            let tilt = LEANER_TILT_MIN_DEG + (LEANER_TILT_MAX_DEG - LEANER_TILT_MIN_DEG) * ti as f64 / (LEANER_TILTS - 1) as f64;
            let (d_lo, d_hi) = reach(tilt);
            for di in 0..LEANER_REACHES {
                let d = d_lo + (d_hi - d_lo) * di as f64 / (LEANER_REACHES - 1) as f64;
                better(&mut best, score_of(a, tilt, d), a, d);
            }
        }
    }
    // Finer: a fifth of the last step each way, around the last best, for
    // each level of refinement.
    let (coarse, a0, d0) = best?;
    let (mut da, mut dt) = (std::f64::consts::TAU / LEANER_AZIMUTHS as f64, (LEANER_TILT_MAX_DEG - LEANER_TILT_MIN_DEG) / (LEANER_TILTS - 1) as f64);
    let mut dd = (reach(coarse.tilt_deg).1 - reach(coarse.tilt_deg).0) / (LEANER_REACHES - 1) as f64;
    let mut fine = Some((coarse, a0, d0));
    for _ in 0..LEANER_REFINE_LEVELS {
        let (centre, a0, d0) = fine.expect("set above");
        for i in -LEANER_FINE..=LEANER_FINE {
            for j in -LEANER_FINE..=LEANER_FINE {
                for k in -LEANER_FINE..=LEANER_FINE {
                    let step = |n: i32, size: f64| n as f64 * size / (2 * LEANER_FINE + 1) as f64;
                    let (a, tilt, d) = (a0 + step(i, da), centre.tilt_deg + step(j, dt), d0 + step(k, dd));
                    if (LEANER_TILT_MIN_DEG..=LEANER_TILT_MAX_DEG).contains(&tilt) && d <= reach(tilt).1 {
                        better(&mut fine, score_of(a, tilt, d), a, d);
                    }
                }
            }
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
    for i in -LEANER_LAST_STEPS..=LEANER_LAST_STEPS {
        for j in 0..=tilts {
            for k in -LEANER_LAST_STEPS..=LEANER_LAST_STEPS {
                let step = |n: i32, size: f64| n as f64 * size;
                let (a, tilt, d) = (a1 + step(i, da), LEANER_TILT_MIN_DEG + step(j, LEANER_LAST_TILT_STEP_DEG), d1 + step(k, dd));
                if !(LEANER_TILT_MIN_DEG..=LEANER_TILT_MAX_DEG).contains(&tilt) || d > reach(tilt).1 {
                    continue;
                }
                let Some(f) = score_at(a, tilt, d, LEANER_CLOSE_PROBE_MM) else { continue };
                if f.score > top + 1e-12 {
                    (top, tied) = (f.score, Vec::new());
                }
                if (f.score - top).abs() <= 1e-12 {
                    tied.push((a, tilt, d, f.score));
                }
            }
        }
    }
    let best = if tied.is_empty() {
        Some(coarse_best)
    } else {
        let m = |f: fn(&(f64, f64, f64, f64)) -> f64| tied.iter().map(f).sum::<f64>() / tied.len() as f64;
        let (a, tilt, d) = (m(|t| t.0), m(|t| t.1), m(|t| t.2));
        score_of(a, tilt, d).map(|f| LeanerFit { score: f.score.max(coarse_best.score), ..f }).or(Some(coarse_best))
    };
    best.filter(|b| b.score >= LEANER_MIN_SCORE)
}
