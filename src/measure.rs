//! Measurement: the sub-pixel outline of a circle lying in a horizontal plane (a
//! weight's cap, a washer, a disc's top face) fitted in board millimetres at its
//! real height, with the uncertainty of its centre.
//!
//! The fit never works on a flat homography: each probe point is a board point at
//! the piece's real height, projected through the full camera model (pose and
//! distortion) and sampled in the raw frame. The edge found along a radial probe
//! is therefore already a board point at that height, and the circle fitted to
//! those points is the footprint (a weight's cap lies straight above its base).

use crate::camera::{Camera, CameraPose};
use crate::geom::{BoardPoint, BoardPoint3, Footprint, PixelPoint};
use serde::{Deserialize, Serialize};

/// Below this colour difference (0-255 RGB distance) between the two ends of a
/// probe there is no edge to find: 8 is ~3 sigma of the sensor noise of a
/// well-exposed frame, so weaker "edges" are mostly noise.
pub const MIN_EDGE_CONTRAST: f32 = 8.0;

/// Probe points whose residual exceeds this many robust standard deviations
/// (from the median absolute deviation) are outliers: glare, a neighbour's
/// shadow, a chip in the paint.
pub const OUTLIER_SIGMAS: f64 = 3.0;

/// The residual spread is floored at this (mm) when flagging outliers, so a
/// near-perfect fit does not reject points for differences of hundredths of a mm.
const MIN_RESIDUAL_SPREAD_MM: f64 = 0.05;

/// A fit needs edges on at least this fraction of its probes: below it the
/// outline is mostly hidden (a hand, another piece) and the fit is not trusted.
pub const MIN_INLIER_FRACTION: f64 = 0.5;

/// Line-of-sight checks along one probe (plus its far end).
const VISIBILITY_CHECKS: usize = 8;

/// How far inside an edge (pixels) its inside colour is taken: past the
/// edge's blur (about a pixel) and the JPEG fringe beside it.
const INSIDE_CHECK_PX: f64 = 1.5;

/// Fewest edge points a fit is made from: an arc of a dozen points spread over
/// a visible part of the outline still fixes a centre when the radius is known.
pub const MIN_EDGE_POINTS: usize = 12;

/// Errors of the measurement stage.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum MeasureError {
    #[error("only {found} of {probes} probes found an edge around ({x_mm:.1}, {y_mm:.1}) mm: the outline is hidden or absent")]
    TooFewEdges { found: usize, probes: usize, x_mm: f64, y_mm: f64 },
    #[error("image buffer of {len} bytes does not hold {width}x{height} 3-channel pixels")]
    BadImage { len: usize, width: usize, height: usize },
}

/// A borrowed 8-bit 3-channel image, row-major, no padding. The channel order
/// is the caller's (frames are BGR): the outline fit only compares colours.
#[derive(Clone, Copy)]
pub struct ColourView<'a> {
    width: usize,
    height: usize,
    data: &'a [u8],
}

impl<'a> ColourView<'a> {
    pub fn new(width: usize, height: usize, data: &'a [u8]) -> Result<Self, MeasureError> {
        if data.len() != width * height * 3 {
            return Err(MeasureError::BadImage { len: data.len(), width, height });
        }
        Ok(ColourView { width, height, data })
    }

    pub fn width(&self) -> usize {
        self.width
    }

    pub fn height(&self) -> usize {
        self.height
    }

    /// Bilinear sample at a pixel position (OpenCV convention: pixel centres at
    /// integers); `None` outside the image.
    #[inline]
    pub fn sample(&self, p: PixelPoint) -> Option<[f32; 3]> {
        let (x0, y0, right, down, fx, fy) = bilinear_corner(self.width, self.height, p)?;
        Some(self.blend((y0 * self.width + x0) * 3, right * 3, down * self.width * 3, fx, fy))
    }

    /// The bilinear sample a tap made for this view's size describes: the same
    /// value as [`ColourView::sample`] at the tap's position, `None` for a tap
    /// out of view.
    ///
    /// # Panics
    /// If the tap was made for a larger image.
    #[inline]
    pub fn read(&self, t: &BilinearTap) -> Option<[f32; 3]> {
        if t.fx.is_nan() {
            return None;
        }
        let (right, down) = ((t.edges & 1) as usize * 3, (t.edges >> 1) as usize * self.width * 3);
        Some(self.blend(t.pixel as usize * 3, right, down, t.fx, t.fy))
    }

    /// Bilinear interpolation between the pixel at byte offset `at`, the one
    /// `right` bytes on and the two `down` bytes below them.
    #[inline(always)]
    fn blend(&self, at: usize, right: usize, down: usize, fx: f32, fy: f32) -> [f32; 3] {
        let px = |i: usize| [self.data[i] as f32, self.data[i + 1] as f32, self.data[i + 2] as f32];
        let (a, b, c, d) = (px(at), px(at + right), px(at + down), px(at + down + right));
        let mut out = [0.0; 3];
        for k in 0..3 {
            let top = a[k] + (b[k] - a[k]) * fx;
            let bottom = c[k] + (d[k] - c[k]) * fx;
            out[k] = top + (bottom - top) * fy;
        }
        out
    }
}

/// The top-left pixel of a bilinear sample at `p` in a `width` x `height`
/// image, whether it has a neighbour on its right and below (1) or lies on the
/// last column or row (0), and the weights; `None` outside the image.
#[inline]
fn bilinear_corner(width: usize, height: usize, p: PixelPoint) -> Option<(usize, usize, usize, usize, f32, f32)> {
    let (u, v) = (p.u, p.v);
    if !(u >= 0.0 && v >= 0.0 && u <= (width - 1) as f64 && v <= (height - 1) as f64) {
        return None;
    }
    // Both are at least 0, where truncation is `floor` (without its library call).
    let (x0, y0) = (u as usize, v as usize);
    let (x1, y1) = ((x0 + 1).min(width - 1), (y0 + 1).min(height - 1));
    let (fx, fy) = ((u - x0 as f64) as f32, (v - y0 as f64) as f32);
    Some((x0, y0, x1 - x0, y1 - y0, fx, fy))
}

/// Where a bilinear sample reads a 3-channel image of a given size: its
/// top-left pixel and weights. A position sampled in every frame (a detector's
/// grid cell) is turned into a tap once, and read per frame with
/// [`ColourView::read`]; 16 bytes, as a grid holds hundreds of thousands.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BilinearTap {
    /// Index of the top-left pixel.
    pixel: u32,
    /// Bit 0: it has a neighbour on its right; bit 1: below (not on the
    /// image's last column, row).
    edges: u32,
    /// The weights; NaN for a position out of view.
    fx: f32,
    fy: f32,
}

impl BilinearTap {
    /// A position out of view: [`ColourView::read`] gives `None`.
    pub const OUT_OF_VIEW: BilinearTap = BilinearTap { pixel: 0, edges: 0, fx: f32::NAN, fy: f32::NAN };

    /// The tap of a pixel position in a `width` x `height` image;
    /// [`BilinearTap::OUT_OF_VIEW`] outside it (and in an image of over 2^32
    /// pixels, whose indices a tap does not hold).
    pub fn new(width: usize, height: usize, p: PixelPoint) -> BilinearTap {
        let Some((x0, y0, right, down, fx, fy)) = bilinear_corner(width, height, p) else { return Self::OUT_OF_VIEW };
        match u32::try_from(y0 * width + x0) {
            Ok(pixel) => BilinearTap { pixel, edges: (right | down << 1) as u32, fx, fy },
            Err(_) => Self::OUT_OF_VIEW,
        }
    }
}

/// How an outline is probed.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct FitConfig {
    /// Radial probes around the circle.
    pub probes: usize,
    /// How far inside and outside the expected radius each probe reaches (mm).
    pub band_mm: f64,
    /// Probe sampling step, in pixels of the image at that spot.
    pub step_px: f64,
    /// Refinement passes (each re-centres the probes on the last fit).
    pub passes: usize,
    /// Samples each side of every probe point, [`ARC_SAMPLE_SPACING_PX`] apart
    /// along the circle through it, averaged into its colour: each averages
    /// per-pixel noise by sqrt(1 + 2 n). 0 (the default) samples the point alone.
    #[serde(default)]
    pub arc_samples: usize,
}

impl Default for FitConfig {
    fn default() -> Self {
        // 72 probes (every 5 degrees) give enough edge points that losing a third
        // to glare or a neighbour still leaves a well-conditioned fit; a 7 mm band
        // covers the candidate stage's placement error; quarter-pixel steps keep the
        // linear interpolation of the crossing well below the noise.
        FitConfig { probes: 72, band_mm: 7.0, step_px: 0.25, passes: 3, arc_samples: 0 }
    }
}

/// One edge point found on a probe.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct EdgePoint {
    pub at: BoardPoint,
    pub contrast: f32,
}

/// A circle fitted to an outline at a known height.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CircleFit {
    pub footprint: Footprint,
    pub height_mm: f64,
    /// Root-mean-square distance of the inlier edge points from the circle (mm).
    pub rms_mm: f64,
    /// Standard uncertainty of the centre from the fit alone (mm).
    pub centre_sigma_mm: f64,
    pub inliers: usize,
    pub probes: usize,
    /// Size of one image pixel on the plane at the piece (mm), averaged over the outline.
    pub mm_per_px: f64,
    /// The inlier edge points, for evidence pictures.
    pub edges: Vec<EdgePoint>,
}

/// Fits the outline of a circle lying in the plane `z = height_mm`, starting from
/// `start` (centre and expected radius). `fixed_radius` holds the radius at the
/// expected value (a rigid piece of known size): only the centre is fitted.
pub fn fit_circle(
    image: &ColourView,
    camera: &Camera,
    pose: &CameraPose,
    start: Footprint,
    height_mm: f64,
    fixed_radius: bool,
    cfg: &FitConfig,
) -> Result<CircleFit, MeasureError> {
    fit_circle_scoped(image, camera, pose, start, height_mm, fixed_radius, cfg, &ProbeScope::ALL)
}

/// Which probes and edges an outline fit uses.
#[derive(Clone, Copy)]
pub struct ProbeScope<'a> {
    /// Every point of a probe must satisfy this (the camera's line of sight to
    /// it is clear: a washer in a cup is partly hidden by the hole's rim).
    pub visible: &'a dyn Fn(BoardPoint3) -> bool,
    /// The colour just inside an edge (BGR, as sampled) must satisfy this: the
    /// piece's own colour, so that where a piece of another team lies over it
    /// (two washers in one cup) the other's outline is not taken for its own.
    pub inside: &'a dyn Fn([f32; 3]) -> bool,
}

impl ProbeScope<'static> {
    /// Every probe, every edge.
    pub const ALL: ProbeScope<'static> = ProbeScope { visible: &|_| true, inside: &|_| true };
}

/// [`fit_circle`] over the probes and edges `scope` admits.
#[allow(clippy::too_many_arguments)]
pub fn fit_circle_scoped(
    image: &ColourView,
    camera: &Camera,
    pose: &CameraPose,
    start: Footprint,
    height_mm: f64,
    fixed_radius: bool,
    cfg: &FitConfig,
    scope: &ProbeScope,
) -> Result<CircleFit, MeasureError> {
    let mut centre = start.centre;
    let mut radius = start.radius_mm;
    let mut last = None;
    for _ in 0..cfg.passes.max(1) {
        let (edges, seen, mm_per_px) = probe_edges(image, camera, pose, centre, start.radius_mm, height_mm, cfg, scope);
        // Edges are required on a share of the probes the camera can see at all.
        let min_found = ((seen as f64 * MIN_INLIER_FRACTION).ceil() as usize).max(MIN_EDGE_POINTS);
        if edges.len() < min_found {
            return Err(MeasureError::TooFewEdges {
                found: edges.len(),
                probes: cfg.probes,
                x_mm: centre.x_mm,
                y_mm: centre.y_mm,
            });
        }
        let pts: Vec<BoardPoint> = edges.iter().map(|e| e.at).collect();
        let fixed = fixed_radius.then_some(start.radius_mm);
        let (c, r, inlier_mask) = robust_circle(&pts, centre, radius, fixed, last.is_some());
        let inliers: Vec<EdgePoint> = edges.iter().zip(&inlier_mask).filter(|(_, k)| **k).map(|(e, _)| *e).collect();
        if inliers.len() < min_found {
            return Err(MeasureError::TooFewEdges { found: inliers.len(), probes: cfg.probes, x_mm: c.x_mm, y_mm: c.y_mm });
        }
        let rms = (inliers.iter().map(|e| (e.at.distance(c) - r).powi(2)).sum::<f64>() / inliers.len() as f64).sqrt();
        // The centre's covariance is s^2 (J^T J)^-1 from residual spread s (one
        // fewer dof with a free radius). Its largest axis is the uncertainty:
        // for n points evenly round a circle both are 2 s^2 / n, but an arc
        // fixes the centre far worse along its chord than across it.
        let dof = if fixed_radius { 2.0 } else { 3.0 };
        let spread = rms * (inliers.len() as f64 / (inliers.len() as f64 - dof).max(1.0)).sqrt();
        let inlier_pts: Vec<BoardPoint> = inliers.iter().map(|e| e.at).collect();
        let centre_sigma_mm = spread * centre_variance_axis(&inlier_pts, c, fixed_radius).sqrt();
        centre = c;
        radius = r;
        last = Some(CircleFit {
            footprint: Footprint::new(c, r),
            height_mm,
            rms_mm: rms,
            centre_sigma_mm,
            inliers: inliers.len(),
            probes: cfg.probes,
            mm_per_px,
            edges: inliers,
        });
    }
    Ok(last.expect("at least one pass"))
}

/// The edge points one pass of an outline fit's probes finds about `start` at `height_mm`, none fitted: for a
/// caller that explains them by more than one circle (two pieces whose outlines meet).
#[allow(clippy::too_many_arguments)]
pub fn probe_outline(
    image: &ColourView,
    camera: &Camera,
    pose: &CameraPose,
    start: Footprint,
    height_mm: f64,
    cfg: &FitConfig,
    scope: &ProbeScope,
) -> Vec<EdgePoint> {
    probe_edges(image, camera, pose, start.centre, start.radius_mm, height_mm, cfg, scope).0
}

/// Pixels per mm of the image at a board point, along `x` and `y` (mean of the two).
pub fn px_per_mm(camera: &Camera, pose: &CameraPose, at: BoardPoint3) -> Option<f64> {
    let p = pose.project(camera, at)?;
    let px = pose.project(camera, BoardPoint3::new(at.x_mm + 1.0, at.y_mm, at.z_mm))?;
    let py = pose.project(camera, BoardPoint3::new(at.x_mm, at.y_mm + 1.0, at.z_mm))?;
    Some((p.distance(px) + p.distance(py)) / 2.0)
}

/// Probes radial lines and returns one edge point per probe that finds an edge.
#[allow(clippy::too_many_arguments)]
fn probe_edges(
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
    let n = ((r1 - r0) / step_mm).ceil().max(4.0) as usize;
    let visibility_stride = (n / VISIBILITY_CHECKS).max(1);
    let mut edges = Vec::with_capacity(cfg.probes);
    let mut seen = 0;
    let mut profile: Vec<[f32; 3]> = Vec::with_capacity(n + 1);
    // Each probe point's colour is averaged over its track and its arc neighbours' (see below): `tracks`
    // parallel curves, their pixels projected exactly every `stride` samples and linearly between.
    let half = cfg.arc_samples as i32;
    let tracks = 2 * half as usize + 1;
    let stride = ((PROJECT_EVERY_PX / cfg.step_px).floor() as usize).max(1);
    let mut pixels: Vec<Option<PixelPoint>> = vec![None; tracks * (n + 1)];
    for k in 0..cfg.probes {
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
            BoardPoint3::new(centre.x_mm + r * cj, centre.y_mm + r * sj, height)
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
            let acc = (0..tracks).try_fold([0.0f32; 3], |mut a, j| {
                let rgb = image.sample(pixels[j * (n + 1) + i]?)?;
                for k in 0..3 {
                    a[k] += rgb[k] / tracks as f32;
                }
                Some(a)
            });
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
        // The first strong change going outwards, unless the piece's colour
        // ended before it: a weaker change nearer in is then the outline (a
        // pale cap's rim just inside the dark gutter's edge, which is the
        // stronger change).
        let mut end = profile.len();
        while let Some((t, contrast)) = edge_crossing(&profile[..end]) {
            let inside = (t - INSIDE_CHECK_PX / cfg.step_px).round().max(0.0) as usize;
            if (scope.inside)(profile[inside.min(end - 1)]) {
                let r = r0 + (r1 - r0) * t / n as f64;
                edges.push(EdgePoint { at: BoardPoint::new(centre.x_mm + r * c, centre.y_mm + r * s), contrast });
                break;
            }
            end = t.floor() as usize;
            if end < MIN_PROFILE_SAMPLES {
                break;
            }
        }
    }
    (edges, seen, 1.0 / scale)
}

/// The image of the board points `point(0..track.len())`, which lie along a smooth curve: projected exactly every
/// `stride` points and linearly between (exactly where a neighbouring node is behind the camera).
fn project_track(camera: &Camera, pose: &CameraPose, stride: usize, point: &dyn Fn(usize) -> BoardPoint3, track: &mut [Option<PixelPoint>]) {
    let n = track.len().saturating_sub(1);
    if n == 0 {
        if let Some(t) = track.first_mut() {
            *t = pose.project(camera, point(0));
        }
        return;
    }
    let mut a = 0;
    while a < n {
        let b = (a + stride.max(1)).min(n);
        let (pa, pb) = (pose.project(camera, point(a)), pose.project(camera, point(b)));
        track[a] = pa;
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
/// lens's curvature; 0.003 px in a strongly distorting Brown lens's corner, 0.0006 px at a fisheye's rim), far
/// under an edge's own placement error (tenths of a pixel), and the projections were a third of a fit's time.
const PROJECT_EVERY_PX: f64 = 4.0;

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
    let mean = |s: &[[f32; 3]]| {
        let mut a = [0.0f32; 3];
        for p in s {
            for k in 0..3 {
                a[k] += p[k] / s.len() as f32;
            }
        }
        a
    };
    let inside = mean(&profile[..m]);
    // How far each sample's colour is from the inside colour. The outline is
    // the first strong change going outwards: beyond a cap's rim an oblique
    // camera sees the weight's side before the board, and a 50 % crossing
    // between the two ends would land between them.
    let dist: Vec<f32> = profile
        .iter()
        .map(|p| ((p[0] - inside[0]).powi(2) + (p[1] - inside[1]).powi(2) + (p[2] - inside[2]).powi(2)).sqrt())
        .collect();
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

/// A least-squares circle (geometric distance, Gauss-Newton) with iterative
/// outlier rejection. Returns the centre, the radius and the inlier mask.
/// `prior`: the start is itself a fit (a refinement pass), so outliers are
/// first rejected about it: where glare or grain scatters many of the new
/// edges, a fit to all of them would be pulled off the outline and the spread
/// taken about it would keep the scattered ones.
fn robust_circle(pts: &[BoardPoint], c0: BoardPoint, r0: f64, fixed_radius: Option<f64>, prior: bool) -> (BoardPoint, f64, Vec<bool>) {
    let (mut c, mut r) = (c0, fixed_radius.unwrap_or(r0));
    let inliers = |c: BoardPoint, r: f64| -> Vec<bool> {
        let residuals: Vec<f64> = pts.iter().map(|p| p.distance(c) - r).collect();
        let mut abs: Vec<f64> = residuals.iter().map(|e| e.abs()).collect();
        abs.sort_by(f64::total_cmp);
        // 1.4826 * MAD estimates the standard deviation of normal residuals.
        let spread = (1.4826 * abs[abs.len() / 2]).max(MIN_RESIDUAL_SPREAD_MM);
        residuals.iter().map(|e| e.abs() <= OUTLIER_SIGMAS * spread).collect()
    };
    let mut mask = if prior { inliers(c, r) } else { vec![true; pts.len()] };
    for _ in 0..4 {
        let chosen: Vec<BoardPoint> = pts.iter().zip(&mask).filter(|(_, k)| **k).map(|(p, _)| *p).collect();
        (c, r) = geometric_circle(&chosen, c, r, fixed_radius);
        let new_mask = inliers(c, r);
        if new_mask == mask {
            break;
        }
        mask = new_mask;
    }
    (c, r, mask)
}

/// Gauss-Newton on the geometric distance `|p - c| - r`.
fn geometric_circle(pts: &[BoardPoint], c0: BoardPoint, r0: f64, fixed_radius: Option<f64>) -> (BoardPoint, f64) {
    let (mut cx, mut cy, mut r) = (c0.x_mm, c0.y_mm, fixed_radius.unwrap_or(r0));
    for _ in 0..20 {
        // Normal equations J^T J d = -J^T e for parameters (cx, cy[, r]).
        let mut jtj = [[0.0f64; 3]; 3];
        let mut jte = [0.0f64; 3];
        for p in pts {
            let (dx, dy) = (p.x_mm - cx, p.y_mm - cy);
            let dist = dx.hypot(dy).max(1e-12);
            let e = dist - r;
            let j = [-dx / dist, -dy / dist, -1.0];
            for a in 0..3 {
                jte[a] += j[a] * e;
                for b in 0..3 {
                    jtj[a][b] += j[a] * j[b];
                }
            }
        }
        let n = if fixed_radius.is_some() { 2 } else { 3 };
        let Some(step) = solve(&jtj, &jte, n) else { break };
        cx -= step[0];
        cy -= step[1];
        if n == 3 {
            r -= step[2];
        }
        if step[0].hypot(step[1]) < 1e-9 {
            break;
        }
    }
    (BoardPoint::new(cx, cy), r)
}

/// The largest eigenvalue of the centre block of `(J^T J)^-1` for a circle
/// through `pts` about `c` (the centre's variance per unit residual variance,
/// along its worst direction); infinite where the points do not fix it.
fn centre_variance_axis(pts: &[BoardPoint], c: BoardPoint, fixed_radius: bool) -> f64 {
    let mut jtj = [[0.0f64; 3]; 3];
    for p in pts {
        let (dx, dy) = (p.x_mm - c.x_mm, p.y_mm - c.y_mm);
        let dist = dx.hypot(dy).max(1e-12);
        let j = [-dx / dist, -dy / dist, -1.0];
        for a in 0..3 {
            for b in 0..3 {
                jtj[a][b] += j[a] * j[b];
            }
        }
    }
    let n = if fixed_radius { 2 } else { 3 };
    let (Some(col_x), Some(col_y)) = (solve(&jtj, &[1.0, 0.0, 0.0], n), solve(&jtj, &[0.0, 1.0, 0.0], n)) else {
        return f64::INFINITY;
    };
    // Eigenvalues of the symmetric 2x2 block [[a, b], [b, d]].
    let (a, b, d) = (col_x[0], (col_x[1] + col_y[0]) / 2.0, col_y[1]);
    (a + d) / 2.0 + (((a - d) / 2.0).powi(2) + b * b).sqrt()
}

/// Solves the leading `n` x `n` block of `a x = b` by Gaussian elimination.
fn solve(a: &[[f64; 3]; 3], b: &[f64; 3], n: usize) -> Option<[f64; 3]> {
    let mut m = [[0.0f64; 4]; 3];
    for i in 0..n {
        m[i][..n].copy_from_slice(&a[i][..n]);
        m[i][3] = b[i];
    }
    for col in 0..n {
        let piv = (col..n).max_by(|&x, &y| m[x][col].abs().total_cmp(&m[y][col].abs()))?;
        if m[piv][col].abs() < 1e-12 {
            return None;
        }
        m.swap(col, piv);
        for row in 0..n {
            if row != col {
                let f = m[row][col] / m[col][col];
                for k in col..4 {
                    m[row][k] -= f * m[col][k];
                }
            }
        }
    }
    let mut x = [0.0; 3];
    for i in 0..n {
        x[i] = m[i][3] / m[i][i];
    }
    Some(x)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::camera::Distortion;

    pub(crate) fn test_camera() -> Camera {
        Camera {
            image_width: 1280,
            image_height: 960,
            fx: 1100.0,
            fy: 1100.0,
            cx: 641.3,
            cy: 478.9,
            distortion: Distortion::brown(-0.21, 0.05, 0.0007, -0.0004, 0.0),
        }
    }

    /// An oblique camera (about 20 degrees from vertical) over the target end.
    pub(crate) fn oblique_pose() -> CameraPose {
        CameraPose::look_at(BoardPoint3::new(120.0, 900.0, 1400.0), BoardPoint3::new(0.0, 250.0, 0.0), [0.0, -1.0, 0.0])
            .unwrap()
    }

    /// Draws, by 8x8 supersampling, a red disc of radius `r` lying at height `z`
    /// over a wood-brown plane, seen through `camera` and `pose`: a minimal, exact
    /// test image for the fitter (the full renderer lives in `render`).
    pub(crate) fn draw_disc(camera: &Camera, pose: &CameraPose, centre: BoardPoint, r: f64, z: f64) -> Vec<u8> {
        let (w, h) = (camera.image_width as usize, camera.image_height as usize);
        let mut img = vec![0u8; w * h * 3];
        let (inside, outside) = ([200.0, 30.0, 35.0], [150.0, 110.0, 70.0]);
        let s = 8;
        // Only pixels in the disc's image (plus a margin) need sampling at all.
        let outline: Vec<PixelPoint> = (0..360)
            .filter_map(|k| {
                let t = (k as f64).to_radians();
                pose.project(camera, BoardPoint3::new(centre.x_mm + r * t.cos(), centre.y_mm + r * t.sin(), z))
            })
            .collect();
        let lo_u = outline.iter().map(|p| p.u).fold(f64::INFINITY, f64::min).floor() as i64 - 3;
        let hi_u = outline.iter().map(|p| p.u).fold(f64::NEG_INFINITY, f64::max).ceil() as i64 + 3;
        let lo_v = outline.iter().map(|p| p.v).fold(f64::INFINITY, f64::min).floor() as i64 - 3;
        let hi_v = outline.iter().map(|p| p.v).fold(f64::NEG_INFINITY, f64::max).ceil() as i64 + 3;
        for v in 0..h {
            for u in 0..w {
                let near = (lo_u..=hi_u).contains(&(u as i64)) && (lo_v..=hi_v).contains(&(v as i64));
                if !near {
                    for k in 0..3 {
                        img[(v * w + u) * 3 + k] = outside[k] as u8;
                    }
                    continue;
                }
                let mut acc = [0.0f64; 3];
                for j in 0..s {
                    for i in 0..s {
                        let px = PixelPoint::new(u as f64 - 0.5 + (i as f64 + 0.5) / s as f64, v as f64 - 0.5 + (j as f64 + 0.5) / s as f64);
                        let hit = pose.back_project(camera, px, z).map(|p| p.distance(centre) < r).unwrap_or(false);
                        let c = if hit { inside } else { outside };
                        for k in 0..3 {
                            acc[k] += c[k];
                        }
                    }
                }
                for k in 0..3 {
                    img[(v * w + u) * 3 + k] = (acc[k] / (s * s) as f64).round() as u8;
                }
            }
        }
        img
    }

    #[test]
    fn fits_a_cap_at_its_height_to_a_hundredth_of_a_millimetre() {
        let cam = test_camera();
        let pose = oblique_pose();
        let truth = BoardPoint::new(-37.2, 141.9);
        let img = draw_disc(&cam, &pose, truth, 29.37, 25.0);
        let view = ColourView::new(1280, 960, &img).unwrap();
        // Start 4 mm off, as a coarse candidate would.
        let start = Footprint::new(BoardPoint::new(-34.0, 144.5), 29.37);
        let fit = fit_circle(&view, &cam, &pose, start, 25.0, false, &FitConfig::default()).unwrap();
        // Anti-aliased to 1/64 px and 8-bit quantised: the centre is good to ~0.02 mm here.
        assert!(fit.footprint.centre.distance(truth) < 0.03, "{:?}", fit.footprint);
        assert!((fit.footprint.radius_mm - 29.37).abs() < 0.03, "{:?}", fit.footprint);
        assert_eq!(fit.inliers, 72);
        assert!(fit.centre_sigma_mm < 0.05, "{}", fit.centre_sigma_mm);
    }

    #[test]
    fn fitting_at_the_wrong_height_shifts_the_footprint() {
        // The reason measurement is done in 3D: a flat homography at z = 0 puts an
        // oblique camera's cap several mm away from the weight's real position.
        let cam = test_camera();
        let pose = oblique_pose();
        let truth = BoardPoint::new(60.0, 100.0);
        let img = draw_disc(&cam, &pose, truth, 29.37, 25.0);
        let view = ColourView::new(1280, 960, &img).unwrap();
        let start = Footprint::new(truth, 29.37);
        let wide = FitConfig { band_mm: 15.0, ..FitConfig::default() };
        let flat = fit_circle(&view, &cam, &pose, start, 0.0, false, &wide).unwrap();
        assert!(flat.footprint.centre.distance(truth) > 5.0, "{:?}", flat.footprint);
        let real = fit_circle(&view, &cam, &pose, start, 25.0, false, &wide).unwrap();
        assert!(real.footprint.centre.distance(truth) < 0.03, "{:?}", real.footprint);
    }

    /// A probe's samples projected every [`PROJECT_EVERY_PX`] and linearly between land within a few thousandths
    /// of a pixel of their exact images, through a strongly distorting Brown lens (k1 = -0.21) and a fisheye
    /// alike (the probes of a weight's cap up to the frame's corners, every way round it).
    #[test]
    fn a_probe_projected_every_few_pixels_lands_where_each_sample_would() {
        // A twentieth of the sub-pixel edge's own error (a few tenths of a pixel): the interpolation adds
        // nothing a fit could see. Measured: 0.0032 px in the Brown lens's corner.
        const TOLERANCE_PX: f64 = 5e-3;
        let fisheye = Camera { fx: 560.0, fy: 560.0, distortion: Distortion::Fisheye(crate::camera::lens::KannalaBrandt { k1: 0.04, k2: 0.008, k3: 0.0006, k4: -0.0004 }), ..test_camera() };
        let pose = oblique_pose();
        for camera in [test_camera(), fisheye] {
            let mut worst = 0.0f64;
            for (x, y) in [(0.0, 250.0), (-600.0, -300.0), (680.0, 880.0), (-520.0, 860.0)] {
                for k in 0..12 {
                    let theta = std::f64::consts::TAU * k as f64 / 12.0;
                    let n = 224;
                    let point = |i: usize| {
                        let r = 22.0 + 14.0 * i as f64 / n as f64;
                        BoardPoint3::new(x + r * theta.cos(), y + r * theta.sin(), 25.0)
                    };
                    let (Some(a), Some(b)) = (pose.project(&camera, point(0)), pose.project(&camera, point(n))) else { continue };
                    let in_frame = |p: PixelPoint| p.u >= 0.0 && p.v >= 0.0 && p.u < camera.image_width as f64 && p.v < camera.image_height as f64;
                    assert!(in_frame(a) && in_frame(b), "{a:?} {b:?}");
                    let stride = ((PROJECT_EVERY_PX / (a.distance(b) / n as f64)).floor() as usize).max(1);
                    let mut track = vec![None; n + 1];
                    project_track(&camera, &pose, stride, &point, &mut track);
                    for (i, p) in track.iter().enumerate() {
                        let (Some(p), Some(exact)) = (p, pose.project(&camera, point(i))) else { panic!("sample {i} not projected") };
                        worst = worst.max(p.distance(exact));
                    }
                }
            }
            assert!(worst < TOLERANCE_PX, "{worst} px");
        }
    }

    #[test]
    fn a_missing_outline_is_an_error_not_a_fit() {
        let cam = test_camera();
        let pose = oblique_pose();
        let img = vec![120u8; 1280 * 960 * 3];
        let view = ColourView::new(1280, 960, &img).unwrap();
        let start = Footprint::new(BoardPoint::new(0.0, 200.0), 29.37);
        let e = fit_circle(&view, &cam, &pose, start, 25.0, false, &FitConfig::default()).unwrap_err();
        assert!(matches!(e, MeasureError::TooFewEdges { found: 0, .. }), "{e}");
    }

    #[test]
    fn an_arc_fixes_its_centre_worse_along_its_chord() {
        let c = BoardPoint::new(3.0, -2.0);
        // n points at angles `at` (degrees) on a circle of radius 30 about c.
        let on_circle = |at: &[f64]| -> Vec<BoardPoint> {
            at.iter().map(|t| BoardPoint::new(c.x_mm + 30.0 * t.to_radians().cos(), c.y_mm + 30.0 * t.to_radians().sin())).collect()
        };
        // Evenly round the whole circle: 2 / n on every axis, radius known or not.
        let full: Vec<f64> = (0..36).map(|k| 10.0 * k as f64).collect();
        assert!((centre_variance_axis(&on_circle(&full), c, true) - 2.0 / 36.0).abs() < 1e-9);
        assert!((centre_variance_axis(&on_circle(&full), c, false) - 2.0 / 36.0).abs() < 1e-9);
        // An arc of 60 degrees about 30 degrees, radius known: in axes along and
        // across its middle, J^T J is diagonal (sums of cos^2 and sin^2 of the
        // angles from the middle); the worse axis is the chord's, 1 / sum sin^2.
        let arc: Vec<f64> = (0..=12).map(|k| 5.0 * k as f64).collect();
        let chord = 1.0 / arc.iter().map(|t| (t - 30.0).to_radians().sin().powi(2)).sum::<f64>();
        let v = centre_variance_axis(&on_circle(&arc), c, true);
        assert!((v - chord).abs() < 1e-9 * chord, "{v} vs {chord}");
        assert!(v > 4.0 * 2.0 / arc.len() as f64, "an arc is far worse than the even-circle formula says");
        // Three points all at one place fix nothing.
        assert!(centre_variance_axis(&on_circle(&[40.0, 40.0, 40.0]), c, false).is_infinite());
    }

    #[test]
    fn a_tap_reads_what_sample_does() {
        let (w, h) = (7usize, 5usize);
        let img: Vec<u8> = (0..w * h * 3).map(|i| (i * 37 % 251) as u8).collect();
        let view = ColourView::new(w, h, &img).unwrap();
        let mut at: Vec<PixelPoint> = Vec::new();
        for k in 0..=60 {
            for j in 0..=40 {
                at.push(PixelPoint::new(k as f64 * 0.1 + 0.013, j as f64 * 0.1 + 0.007));
            }
        }
        // The last column and row (no neighbour beyond), the corners, and outside.
        at.extend([(6.0, 4.0), (6.0, 2.5), (3.25, 4.0), (0.0, 0.0), (6.0000001, 1.0), (-0.1, 1.0), (2.0, 4.5), (f64::NAN, 1.0)].map(|(u, v)| PixelPoint::new(u, v)));
        // A tap must read exactly what `sample` reads (the detector's colour
        // masks depend on it to the last bit), so bits are compared.
        for p in at {
            let tap = BilinearTap::new(w, h, p);
            assert_eq!(view.read(&tap).map(|c| c.map(f32::to_bits)), view.sample(p).map(|c| c.map(f32::to_bits)), "{p:?}");
        }
        assert_eq!(view.read(&BilinearTap::OUT_OF_VIEW), None);
        // Between four pixels: a quarter of the way right, half way down.
        let px = |x: usize, y: usize, k: usize| img[(y * w + x) * 3 + k] as f32;
        let want: Vec<f32> = (0..3)
            .map(|k| {
                let top = px(2, 1, k) + (px(3, 1, k) - px(2, 1, k)) * 0.25;
                let bottom = px(2, 2, k) + (px(3, 2, k) - px(2, 2, k)) * 0.25;
                top + (bottom - top) * 0.5
            })
            .collect();
        // Levels to well within a thousandth (the same blend, in f32).
        let close = |a: [f32; 3], b: &[f32]| a.iter().zip(b).all(|(x, y)| (x - y).abs() < 1e-3);
        assert!(close(view.sample(PixelPoint::new(2.25, 1.5)).unwrap(), &want));
        // The last pixel: its own colour, read without stepping past the image.
        assert!(close(view.sample(PixelPoint::new(6.0, 4.0)).unwrap(), &[img[102] as f32, img[103] as f32, img[104] as f32]));
    }

    #[test]
    fn bad_buffers_are_rejected() {
        assert!(matches!(ColourView::new(10, 10, &[0u8; 299]), Err(MeasureError::BadImage { .. })));
    }
}
