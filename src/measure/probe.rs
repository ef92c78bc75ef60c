//! The radial probes of an outline fit: colour profiles across the expected outline, sampled along board lines at
//! the piece's height through the full camera model, and the first strong change of colour on each.

use super::{px_per_mm, ColourView, EdgePoint, FitConfig, ProbeScope, MIN_EDGE_CONTRAST};
use crate::camera::{Camera, CameraPose};
use crate::geom::{BoardPoint, BoardPoint3, PixelPoint};

/// Line-of-sight checks along one probe (plus its far end).
const VISIBILITY_CHECKS: usize = 8;

/// How far inside an edge (pixels) its inside colour is taken: past the
/// edge's blur (about a pixel) and the JPEG fringe beside it.
const INSIDE_CHECK_PX: f64 = 1.5;

/// Probes radial lines and returns one edge point per probe that finds an edge.
#[allow(clippy::too_many_arguments)]
pub(super) fn probe_edges(
    image: &ColourView,
    camera: &Camera,
    pose: &CameraPose,
    centre: BoardPoint,
    radius: f64,
    height: f64,
    cfg: &FitConfig,
    scope: &ProbeScope,
) -> (Vec<EdgePoint>, usize, f64) {
    let scale = px_per_mm(camera, pose, centre.at_height(height)).unwrap_or(1.0).max(1e-3);
    let step_mm = cfg.step_px / scale;
    let (r0, r1) = ((radius - cfg.band_mm).max(radius * 0.2), radius + cfg.band_mm);
    let samples = ((r1 - r0) / step_mm).ceil().max(4.0);
    // A probe longer than the frame's diagonal cannot lie in the frame: the lens model maps that place of the board
    // out of all proportion (far outside the view, where a distortion polynomial explodes). No edge is read there,
    // and no such probe is allocated.
    let diagonal_px = (image.width() as f64).hypot(image.height() as f64);
    if !(samples * cfg.step_px <= diagonal_px) {
        return (Vec::new(), 0, 1.0 / scale);
    }
    let n = samples as usize;
    let run = |ks: std::ops::Range<usize>| probe_run(image, camera, pose, centre.at_height(height), (r0, r1, n), scale, cfg, scope, ks);
    // The probes are independent: each half of them is a task on rayon's pool.
    let half = cfg.probes / 2;
    let ((mut edges, seen), (rest, seen_rest)) = rayon::join(|| run(0..half), || run(half..cfg.probes));
    edges.extend(rest);
    (edges, seen + seen_rest, 1.0 / scale)
}

/// Probes `ks` of [`probe_edges`] (of `cfg.probes` evenly round `centre`, at its height, each from radius `r0` to
/// `r1` in `n` steps): their edge points, in the probes' order, and how many of them were seen whole.
#[allow(clippy::too_many_arguments)]
fn probe_run(
    image: &ColourView,
    camera: &Camera,
    pose: &CameraPose,
    centre: BoardPoint3,
    (r0, r1, n): (f64, f64, usize),
    scale: f64,
    cfg: &FitConfig,
    scope: &ProbeScope,
    ks: std::ops::Range<usize>,
) -> (Vec<EdgePoint>, usize) {
    let visibility_stride = (n / VISIBILITY_CHECKS).max(1);
    let mut edges = Vec::with_capacity(ks.len());
    let mut seen = 0;
    let mut profile: Vec<[f32; 3]> = Vec::with_capacity(n + 1);
    // Each probe point's colour is averaged over its track and its arc neighbours' (see below): `tracks`
    // parallel curves, their pixels projected exactly every `stride` samples and linearly between.
    let half = cfg.arc_samples as i32;
    let tracks = 2 * half as usize + 1;
    let stride = ((PROJECT_EVERY_PX / cfg.step_px).floor() as usize).max(1);
    let mut pixels: Vec<Option<PixelPoint>> = vec![None; tracks * (n + 1)];
    for k in ks {
        let theta = std::f64::consts::TAU * k as f64 / cfg.probes as f64;
        let (s, c) = theta.sin_cos();
        // Sample `i` of track `j`: the probe point at radius r, or (the colour across the probe, averaged along a
        // short arc at the same radius: per-pixel noise averages out, a circular edge does not blur; on a
        // straight tangent the side samples would lie further out and pull the edge inwards) the point
        // ARC_SAMPLE_SPACING_PX along the circle through it.
        let radius_at = |i: usize| r0 + (r1 - r0) * i as f64 / n as f64;
        let point = |i: usize, j: i32| {
            let r = radius_at(i);
            let (sj, cj) = if j == 0 { (s, c) } else { (theta + j as f64 * ARC_SAMPLE_SPACING_PX / scale / r).sin_cos() };
            BoardPoint3::new(centre.x_mm + r * cj, centre.y_mm + r * sj, centre.z_mm)
        };
        for j in -half..=half {
            let track = &mut pixels[(j + half) as usize * (n + 1)..((j + half) as usize + 1) * (n + 1)];
            project_track(camera, pose, stride, &|i| point(i, j), track);
        }
        profile.clear();
        let mut ok = true;
        for i in 0..=n {
            let p = point(i, 0);
            // Occluders (a rim, a wall) are far larger than the probe's
            // spacing: a handful of checks along it finds them.
            if (i % visibility_stride == 0 || i == n) && !(scope.visible)(p) {
                ok = false;
                break;
            }
            let acc = if tracks == 1 {
                // The point alone.
                pixels[i].and_then(|px| image.sample(px))
            } else {
                (0..tracks).try_fold([0.0f32; 3], |mut a, j| {
                    let rgb = image.sample(pixels[j * (n + 1) + i]?)?;
                    for k in 0..3 {
                        a[k] += rgb[k] / tracks as f32;
                    }
                    Some(a)
                })
            };
            match acc {
                Some(rgb) => profile.push(rgb),
                None => {
                    ok = false;
                    break;
                }
            }
        }
        if !ok {
            continue;
        }
        seen += 1;
        if cfg.from_outside {
            profile.reverse();
            let settle = (INSIDE_CHECK_PX / cfg.step_px).round() as usize;
            if let Some((t, contrast)) = edge_coming_in(&profile, settle, scope.inside) {
                let r = r1 - (r1 - r0) * t / n as f64;
                edges.push(EdgePoint { at: BoardPoint::new(centre.x_mm + r * c, centre.y_mm + r * s), contrast });
            }
            continue;
        }
        if let Some((t, contrast)) = edge_going_out(&profile, cfg.step_px, scope.inside) {
            let r = r0 + (r1 - r0) * t / n as f64;
            edges.push(EdgePoint { at: BoardPoint::new(centre.x_mm + r * c, centre.y_mm + r * s), contrast });
        }
    }
    (edges, seen)
}

/// The outline on a profile read outwards (samples `step_px` apart): the first strong change going outwards, unless
/// the piece's colour (which `inside` accepts) ended before it: a weaker change nearer in is then the outline (a pale
/// cap's rim just inside the dark gutter's edge, which is the stronger change). Its sub-sample position and contrast.
fn edge_going_out(profile: &[[f32; 3]], step_px: f64, inside: &dyn Fn([f32; 3]) -> bool) -> Option<(f64, f32)> {
    let mut end = profile.len();
    while let Some((t, contrast)) = edge_crossing(&profile[..end]) {
        let before = (t - INSIDE_CHECK_PX / step_px).round().max(0.0) as usize;
        if inside(profile[before.min(end - 1)]) {
            return Some((t, contrast));
        }
        end = t.floor() as usize;
        if end < MIN_PROFILE_SAMPLES {
            break;
        }
    }
    None
}

/// The outline crossing the board segment `from` -> `to` (any direction, e.g. across a tilted piece's rim, the
/// piece's colour, which `inside` accepts, at `from`): the segment's image sampled every `step_px`, and the outline
/// found as an outline fit's probes find it going outwards. Returns how far along the segment it lies (0..1) and
/// its contrast; `None` if the segment leaves the frame or holds no such change.
#[allow(clippy::too_many_arguments)]
pub fn edge_on_segment(
    image: &ColourView,
    camera: &Camera,
    pose: &CameraPose,
    from: BoardPoint3,
    to: BoardPoint3,
    step_px: f64,
    inside: &dyn Fn([f32; 3]) -> bool,
) -> Option<(f64, f32)> {
    let (a, b) = (pose.project(camera, from)?, pose.project(camera, to)?);
    let n = (a.distance(b) / step_px).ceil().max(4.0) as usize;
    let at = |i: usize| {
        let f = i as f64 / n as f64;
        BoardPoint3::new(from.x_mm + (to.x_mm - from.x_mm) * f, from.y_mm + (to.y_mm - from.y_mm) * f, from.z_mm + (to.z_mm - from.z_mm) * f)
    };
    let profile = (0..=n).map(|i| pose.project(camera, at(i)).and_then(|px| image.sample(px))).collect::<Option<Vec<_>>>()?;
    edge_going_out(&profile, a.distance(b) / n as f64, inside).map(|(t, contrast)| (t / n as f64, contrast))
}

/// The image of the board points `point(0..track.len())`, which lie along a smooth curve: projected exactly every
/// `stride` points and linearly between (exactly where a neighbouring node is behind the camera).
pub(super) fn project_track(camera: &Camera, pose: &CameraPose, stride: usize, point: &dyn Fn(usize) -> BoardPoint3, track: &mut [Option<PixelPoint>]) {
    let Some(first) = track.first_mut() else { return };
    *first = pose.project(camera, point(0));
    let n = track.len() - 1;
    let mut a = 0;
    while a < n {
        // Each node is projected once: a segment's start is the last one's end.
        let b = (a + stride.max(1)).min(n);
        let (pa, pb) = (track[a], pose.project(camera, point(b)));
        track[b] = pb;
        for (i, slot) in track.iter_mut().enumerate().take(b).skip(a + 1) {
            let t = (i - a) as f64 / (b - a) as f64;
            *slot = match (pa, pb) {
                (Some(pa), Some(pb)) => Some(PixelPoint::new(pa.u + t * (pb.u - pa.u), pa.v + t * (pb.v - pa.v))),
                _ => pose.project(camera, point(i)),
            };
        }
        a = b;
    }
}

/// Spacing (pixels) of a probe point's arc samples (see [`FitConfig::arc_samples`]):
/// one pixel, so that each holds a different pixel's noise.
const ARC_SAMPLE_SPACING_PX: f64 = 1.0;
/// A probe's samples are projected into the image exactly this far apart (px) and linearly between: over a
/// stretch that short a probe's image bends by a few thousandths of a pixel at most (the perspective's and the
/// lens's curvature; 0.0032 px in a strongly distorting Brown lens's corner, 0.0035 px in a fisheye's: the test
/// `measure::tests::a_probe_projected_every_few_pixels_lands_where_each_sample_would`), far
/// under an edge's own placement error (tenths of a pixel), and the projections were a third of a fit's time.
pub(super) const PROJECT_EVERY_PX: f64 = 4.0;

/// Where the inside's colour begins coming in from a profile's outer end
/// (`profile` read from it inwards): the first sample from which the next
/// `settle` as well have the inside's colour (past the edge's blur), less half a
/// sample, and the contrast between the outer end's colour and the inside's
/// there; `None` if the inside's colour never begins or differs from the outer
/// end's by less than [`MIN_EDGE_CONTRAST`]. A change to any other colour on
/// the way in (a shadow on the board, or on the inside by the edge of what lies
/// over it) is passed, whatever its strength: where the inside ends matters,
/// not the strongest change.
fn edge_coming_in(profile: &[[f32; 3]], settle: usize, inside: &dyn Fn([f32; 3]) -> bool) -> Option<(f64, f32)> {
    let m = END_SAMPLES.min(profile.len() / 4).max(1);
    let outside = mean_colour(&profile[..m]);
    let j = (m..profile.len().saturating_sub(settle)).find(|&j| profile[j..=j + settle].iter().all(|c| inside(*c)))?;
    let contrast = colour_distance(&profile[j + settle], &outside);
    (contrast >= MIN_EDGE_CONTRAST).then_some((j as f64 - 0.5, contrast))
}

/// The mean colour of `samples`.
fn mean_colour(samples: &[[f32; 3]]) -> [f32; 3] {
    let mut a = [0.0f32; 3];
    for p in samples {
        for k in 0..3 {
            a[k] += p[k] / samples.len() as f32;
        }
    }
    a
}

/// How far apart two colours are (Euclidean, in the samples' units).
fn colour_distance(p: &[f32; 3], q: &[f32; 3]) -> f32 {
    ((p[0] - q[0]).powi(2) + (p[1] - q[1]).powi(2) + (p[2] - q[2]).powi(2)).sqrt()
}

/// A change of colour of at least this fraction of the profile's largest is
/// an edge; the first such, going outwards, is the outline.
const STRONG_CHANGE_FRACTION: f32 = 0.5;
/// Samples past the first strong change over which its level is taken: a
/// pixel and a half at quarter-pixel steps, enough for the edge's blur.
const PLATEAU_SAMPLES: usize = 6;
/// Samples at each end of a profile that set its inside and outside colours.
const END_SAMPLES: usize = 6;
/// A profile cut short before a change that is not the outline is searched
/// again if at least this long: the inside's samples and a change's plateau.
const MIN_PROFILE_SAMPLES: usize = END_SAMPLES + PLATEAU_SAMPLES;

/// The sub-sample position where a profile leaves its inside colour: the half-way
/// crossing of the first strong change of colour, going outwards.
fn edge_crossing(profile: &[[f32; 3]]) -> Option<(f64, f32)> {
    let m = END_SAMPLES.min(profile.len() / 4).max(1);
    let inside = mean_colour(&profile[..m]);
    // How far each sample's colour is from the inside colour. The outline is
    // the first strong change going outwards: beyond a cap's rim an oblique
    // camera sees the weight's side before the board, and a 50 % crossing
    // between the two ends would land between them.
    let dist: Vec<f32> = profile.iter().map(|p| colour_distance(p, &inside)).collect();
    let max = dist.iter().copied().fold(0.0f32, f32::max);
    if max < MIN_EDGE_CONTRAST {
        return None;
    }
    let j = dist.iter().position(|d| *d >= STRONG_CHANGE_FRACTION * max)?;
    // The level just past the change, and the half-way crossing before it.
    let plateau = dist[j..(j + PLATEAU_SAMPLES).min(dist.len())].iter().copied().fold(0.0f32, f32::max);
    let contrast = plateau;
    if contrast < MIN_EDGE_CONTRAST {
        return None;
    }
    let half = plateau / 2.0;
    let i = (1..=j).rev().find(|&i| dist[i - 1] < half && dist[i] >= half)?;
    let t = (i - 1) as f64 + ((half - dist[i - 1]) / (dist[i] - dist[i - 1])) as f64;
    Some((t, contrast))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A profile read from the board inwards, in runs of (colour, samples).
    fn profile(runs: &[([f32; 3], usize)]) -> Vec<[f32; 3]> {
        runs.iter().flat_map(|&(c, n)| std::iter::repeat_n(c, n)).collect()
    }

    /// Coming in from the board, the edge is where the inside's colour begins, past a darker shadow on the way however
    /// strong (the shadow an upper disc casts beside itself), and nowhere where it never begins.
    #[test]
    fn coming_in_the_edge_is_where_the_inside_begins_past_a_shadow() {
        let (board, shadow, wood) = ([120.0, 135.0, 150.0], [50.0, 60.0, 70.0], [180.0, 190.0, 198.0]);
        let is_wood = |c: [f32; 3]| (c[0] - wood[0]).abs() < 20.0;
        let (t, contrast) = edge_coming_in(&profile(&[(board, 8), (shadow, 4), (wood, 10)]), 2, &is_wood).expect("an edge");
        assert!((t - 11.5).abs() < 1e-9, "{t}");
        assert!(contrast > MIN_EDGE_CONTRAST);
        // The shadow after the wood (the upper disc's, across the lower's face) does not move it.
        let (t, _) = edge_coming_in(&profile(&[(board, 8), (wood, 6), (shadow, 4), (wood, 6)]), 2, &is_wood).expect("an edge");
        assert!((t - 7.5).abs() < 1e-9, "{t}");
        assert!(edge_coming_in(&profile(&[(board, 8), (shadow, 12)]), 2, &is_wood).is_none());
        // Wood for less than the blur's reach is no edge.
        assert!(edge_coming_in(&profile(&[(board, 8), (wood, 2), (shadow, 10)]), 2, &is_wood).is_none());
    }
}
