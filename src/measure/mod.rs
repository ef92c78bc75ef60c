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
use crate::geom::{BoardPoint, BoardPoint3, Footprint};
use serde::{Deserialize, Serialize};

mod circle;
mod probe;
mod sample;

use circle::{centre_variance_axis, robust_circle, Seen, SideView};
use probe::probe_edges;
pub use probe::edge_on_segment;
pub use sample::{BilinearTap, ColourView};

/// Below this colour difference (0-255 RGB distance) between the two ends of a
/// probe there is no edge to find: 8 is ~3 sigma of the sensor noise of a
/// well-exposed frame, so weaker "edges" are mostly noise.
pub const MIN_EDGE_CONTRAST: f32 = 8.0;

/// Probe points whose residual exceeds this many robust standard deviations
/// (from the median absolute deviation) are outliers: glare, a neighbour's
/// shadow, a chip in the paint.
pub const OUTLIER_SIGMAS: f64 = 3.0;

/// A fit needs edges on at least this fraction of its probes: below it the
/// outline is mostly hidden (a hand, another piece) and the fit is not trusted.
pub const MIN_INLIER_FRACTION: f64 = 0.5;

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
    /// Each probe read from its outer end inwards: the outline is then the first
    /// strong change coming in from what lies beyond (the far rim of a disc's
    /// crescent past the shadow another disc lying on it casts on it), not going out.
    #[serde(default)]
    pub from_outside: bool,
}

impl Default for FitConfig {
    fn default() -> Self {
        // 72 probes (every 5 degrees) give enough edge points that losing a third
        // to glare or a neighbour still leaves a well-conditioned fit; a 7 mm band
        // covers the candidate stage's placement error; quarter-pixel steps keep the
        // linear interpolation of the crossing well below the noise.
        FitConfig { probes: 72, band_mm: 7.0, step_px: 0.25, passes: 3, arc_samples: 0, from_outside: false }
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
    pub visible: &'a (dyn Fn(BoardPoint3) -> bool + Sync),
    /// The colour just inside an edge (BGR, as sampled) must satisfy this: the
    /// piece's own colour, so that where a piece of another team lies over it
    /// (two washers in one cup) the other's outline is not taken for its own.
    pub inside: &'a (dyn Fn([f32; 3]) -> bool + Sync),
    /// How far (mm) the piece's upright side reaches below the plane probed: on the half of the outline facing the
    /// camera, the side is seen past the rim down to its foot, and the outline found there may be the foot's
    /// (where the side has the face's colour and tone, the first strong change going out is the foot's on the
    /// board). Each such edge is fitted as whichever of the rim and the foot it lies nearer. 0: no side (a flat
    /// mark, a probe that is no piece's).
    pub side_mm: f64,
}

impl ProbeScope<'static> {
    /// Every probe, every edge, no side.
    pub const ALL: ProbeScope<'static> = ProbeScope { visible: &|_| true, inside: &|_| true, side_mm: 0.0 };
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
        let side = SideView::new(pose, height_mm, scope.side_mm);
        let pts: Vec<Seen> = edges.iter().map(|e| side.seen(e.at)).collect();
        let fixed = fixed_radius.then_some(start.radius_mm);
        let (c, r, inlier_mask, explained) = robust_circle(&pts, centre, radius, fixed, last.is_some(), side.camera_xy);
        let inliers: Vec<EdgePoint> = edges.iter().zip(&inlier_mask).filter(|(_, k)| **k).map(|(e, _)| *e).collect();
        if inliers.len() < min_found {
            return Err(MeasureError::TooFewEdges { found: inliers.len(), probes: cfg.probes, x_mm: c.x_mm, y_mm: c.y_mm });
        }
        // Each inlier where the circle explains it (its rim, or its side's foot seen along the line of sight).
        let inlier_pts: Vec<BoardPoint> = explained.iter().zip(&inlier_mask).filter(|(_, k)| **k).map(|(p, _)| *p).collect();
        let rms = (inlier_pts.iter().map(|p| (p.distance(c) - r).powi(2)).sum::<f64>() / inlier_pts.len() as f64).sqrt();
        // The centre's covariance is s^2 (J^T J)^-1 from residual spread s (one
        // fewer dof with a free radius). Its largest axis is the uncertainty:
        // for n points evenly round a circle both are 2 s^2 / n, but an arc
        // fixes the centre far worse along its chord than across it.
        let dof = if fixed_radius { 2.0 } else { 3.0 };
        let spread = rms * (inliers.len() as f64 / (inliers.len() as f64 - dof).max(1.0)).sqrt();
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

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use super::probe::{project_track, PROJECT_EVERY_PX};
    use crate::geom::PixelPoint;
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
        let (inside, outside) = ([200.0, 30.0, 35.0], [150.0, 110.0, 70.0]);
        draw_face(camera, pose, centre, r, z, outside, &|_| inside, 8)
    }

    /// Draws, by `s`x`s` supersampling, a flat round face of radius `r` at height `z` over a plane of colour
    /// `outside`, seen through `camera` and `pose`: each point of the face takes the colour `face` gives it (three
    /// channels, in the caller's order).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn draw_face(
        camera: &Camera,
        pose: &CameraPose,
        centre: BoardPoint,
        r: f64,
        z: f64,
        outside: [f64; 3],
        face: &dyn Fn(BoardPoint) -> [f64; 3],
        s: usize,
    ) -> Vec<u8> {
        let outline = circle_image(camera, pose, centre, r, &[z]);
        draw_sampled(camera, &outline, outside, s, &|px| pose.back_project(camera, px, z).filter(|p| p.distance(centre) < r).map(face))
    }

    /// The image of the circle of radius `r` about `centre` at each of `heights`, a point a degree.
    fn circle_image(camera: &Camera, pose: &CameraPose, centre: BoardPoint, r: f64, heights: &[f64]) -> Vec<PixelPoint> {
        (0..360)
            .flat_map(|k| {
                let t = (k as f64).to_radians();
                heights.iter().filter_map(move |&z| pose.project(camera, BoardPoint3::new(centre.x_mm + r * t.cos(), centre.y_mm + r * t.sin(), z)))
            })
            .collect()
    }

    /// A `camera`-sized image of `outside` but in the box round `outline` (and 3 px more), where each pixel is the
    /// mean of `s` x `s` samples, each the colour `seen` gives it (`None`: `outside`).
    fn draw_sampled(camera: &Camera, outline: &[PixelPoint], outside: [f64; 3], s: usize, seen: &dyn Fn(PixelPoint) -> Option<[f64; 3]>) -> Vec<u8> {
        let (w, h) = (camera.image_width as usize, camera.image_height as usize);
        let mut img = vec![0u8; w * h * 3];
        // Only pixels in the outline's image (plus a margin) need sampling at all.
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
                        let c = seen(px).unwrap_or(outside);
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

    /// Draws, by 8x8 supersampling, an upright cylinder of radius `r` standing on the plane `z = 0` to height `top`,
    /// one colour all over (a wooden disc: its side looks like its top), over a wood-brown plane: a pixel is the
    /// piece's where its line of sight meets the cylinder at any height (the union of its horizontal slices).
    fn draw_cylinder(camera: &Camera, pose: &CameraPose, centre: BoardPoint, r: f64, top: f64) -> Vec<u8> {
        const SLICES: usize = 64;
        let (piece, ground) = ([190.0, 170.0, 120.0], [90.0, 60.0, 40.0]);
        let outline = circle_image(camera, pose, centre, r, &[0.0, top]);
        let hit = |px: PixelPoint| (0..=SLICES).any(|k| pose.back_project(camera, px, top * k as f64 / SLICES as f64).is_some_and(|p| p.distance(centre) < r));
        draw_sampled(camera, &outline, ground, 8, &|px| hit(px).then_some(piece))
    }

    /// A disc whose side looks like its top shows, on the camera's side, its side down to its foot: the outline seen
    /// there is the foot's. Fitted as the rim alone, the centre is pulled towards the camera; each edge taken as
    /// the rim or the side's foot, whichever the circle explains, it is where the disc lies.
    #[test]
    fn a_disc_whose_side_looks_like_its_top_is_placed_by_its_rim_and_its_foot() {
        let cam = test_camera();
        let pose = oblique_pose();
        let (r, top) = (26.0, 13.0);
        let truth = BoardPoint::new(60.0, 100.0);
        let img = draw_cylinder(&cam, &pose, truth, r, top);
        let view = ColourView::new(1280, 960, &img).unwrap();
        // From 2 mm off, as a verified outline's free fit leaves it.
        let start = Footprint::new(BoardPoint::new(61.5, 101.2), r);
        let fit = |side_mm: f64| {
            let scope = ProbeScope { side_mm, ..ProbeScope::ALL };
            fit_circle_scoped(&view, &cam, &pose, start, top, true, &FitConfig::default(), &scope).unwrap()
        };
        let rim_only = fit(0.0).footprint.centre.distance(truth);
        let with_side = fit(top).footprint.centre.distance(truth);
        // 30 degrees off the vertical here: the side shows 7.5 mm deep in the top's plane, and the rim alone is
        // pulled 3.5 mm towards the camera. Rim and foot: 0.05 mm, the silhouette's two straight flanks (from rim to
        // foot, on neither circle) taken as the nearer of the two; a tenth of a mm bounds it.
        assert!(rim_only > 1.0, "rim only: {rim_only:.3} mm off");
        assert!(with_side < 0.1, "rim and foot: {with_side:.3} mm off");
    }

    /// A probe's samples projected every [`PROJECT_EVERY_PX`] and linearly between land within a few thousandths
    /// of a pixel of their exact images, through a strongly distorting Brown lens (k1 = -0.21) and a fisheye
    /// alike (the probes of a weight's cap up to the frame's corners, every way round it).
    #[test]
    fn a_probe_projected_every_few_pixels_lands_where_each_sample_would() {
        // A twentieth of the sub-pixel edge's own error (a few tenths of a pixel): the interpolation adds
        // nothing a fit could see. Measured (printed with --nocapture): 0.0032 px (Brown), 0.0035 px (fisheye).
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
                    assert!(camera.contains(a) && camera.contains(b), "{a:?} {b:?}");
                    let stride = ((PROJECT_EVERY_PX / (a.distance(b) / n as f64)).floor() as usize).max(1);
                    let mut track = vec![None; n + 1];
                    project_track(&camera, &pose, stride, &point, &mut track);
                    for (i, p) in track.iter().enumerate() {
                        let (Some(p), Some(exact)) = (p, pose.project(&camera, point(i))) else { panic!("sample {i} not projected") };
                        worst = worst.max(p.distance(exact));
                    }
                }
            }
            eprintln!("{}: worst {worst:.4} px", camera.distortion.model().name());
            assert!(worst < TOLERANCE_PX, "{worst} px");
        }
    }

    #[test]
    fn a_segment_across_an_outline_finds_it_where_it_crosses() {
        // The exact disc of radius 29.37 mm at 25 mm high; segments across its rim at its height, from inside to
        // outside, in several directions and lengths: the edge lies where the rim crosses each.
        let (cam, pose) = (test_camera(), oblique_pose());
        let (centre, r, z) = (BoardPoint::new(0.0, 200.0), 29.37, 25.0);
        let img = draw_disc(&cam, &pose, centre, r, z);
        let view = ColourView::new(1280, 960, &img).unwrap();
        // The disc's colour as `draw_disc` paints it (in the order it writes the channels).
        let red = |c: [f32; 3]| ((c[0] - 200.0).powi(2) + (c[1] - 30.0).powi(2) + (c[2] - 35.0).powi(2)).sqrt() < 60.0;
        for (k, (inner, outer)) in [(20.0, 36.0), (25.0, 33.0), (27.0, 40.0)].into_iter().enumerate() {
            let a = 0.7 + 1.9 * k as f64;
            let at = |rho: f64| BoardPoint3::new(centre.x_mm + rho * a.cos(), centre.y_mm + rho * a.sin(), z);
            let (t, contrast) = edge_on_segment(&view, &cam, &pose, at(inner), at(outer), 0.25, &red).expect("an edge");
            let found = inner + (outer - inner) * t;
            // The supersampled edge's own error is hundredths of a pixel; a pixel here is ~0.5 mm: 0.1 mm.
            assert!((found - r).abs() < 0.1, "direction {a:.1} rad: the rim at {found:.3} mm, expected {r}");
            assert!(contrast > MIN_EDGE_CONTRAST, "{contrast}");
        }
        // A segment wholly inside the disc crosses no outline.
        assert!(edge_on_segment(&view, &cam, &pose, BoardPoint3::new(0.0, 190.0, z), BoardPoint3::new(0.0, 210.0, z), 0.25, &red).is_none());
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

    /// A fit asked for where the lens model maps the board out of all proportion reads no edge and says so, instead
    /// of allocating a probe longer than the frame. Here the place lies 300 times further off the axis than in
    /// front of the lens, where the Brown polynomial gives about 10^12 px a mm (a stack's refit on a varied fixture
    /// asked for a 4 TB probe there and aborted the process).
    #[test]
    fn a_probe_longer_than_the_frame_reads_nothing() {
        let cam = test_camera();
        let pose = oblique_pose();
        let img = vec![120u8; 1280 * 960 * 3];
        let view = ColourView::new(1280, 960, &img).unwrap();
        // The board point whose camera coordinates are (300, 0, 1) mm.
        let (eye, d) = (pose.centre(), pose.ray_from_normalised(300.0, 0.0));
        let along = 300.0f64.hypot(1.0);
        let at = BoardPoint3::new(eye.x_mm + along * d[0], eye.y_mm + along * d[1], eye.z_mm + along * d[2]);
        let scale = px_per_mm(&cam, &pose, at).unwrap();
        assert!(scale > 1e9, "{scale} px/mm");
        let start = Footprint::new(BoardPoint::new(at.x_mm, at.y_mm), 29.37);
        let e = fit_circle(&view, &cam, &pose, start, at.z_mm, false, &FitConfig::default()).unwrap_err();
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
