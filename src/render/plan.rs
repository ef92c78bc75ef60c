//! The camera planner (`boardcall plan`): for a scene's camera, the resolution in
//! mm per pixel along and across the board at every line, hole and gate, and
//! which parts of the playing surface fall outside the frame.

use crate::board::Layout;
use crate::camera::{Camera, CameraPose};
use crate::geom::{BoardPoint3, PixelPoint};
use crate::render::scene::LoadedScene;
use serde::Serialize;

/// The step for the finite differences that give mm per pixel: 1 mm is far
/// below the scale on which a lens's magnification changes.
const RESOLUTION_STEP_MM: f64 = 1.0;
/// Spacing of the surface samples for the out-of-frame map.
const COVERAGE_STEP_MM: f64 = 10.0;

/// The resolution at one named place on the board.
#[derive(Debug, Clone, Serialize)]
pub struct FeatureResolution {
    pub name: String,
    pub at: BoardPoint3,
    pub in_frame: bool,
    /// Where it is imaged (also just outside the frame), if within the lens's field.
    pub pixel: Option<PixelPoint>,
    /// Board mm per image pixel for a step along the board (`y`), and across it (`x`);
    /// `None` beyond the lens's field.
    pub mm_per_px_along: Option<f64>,
    pub mm_per_px_across: Option<f64>,
}

/// A band of the surface across its full width, by how much of it is in frame.
#[derive(Debug, Clone, Serialize)]
pub struct Band {
    pub y_from_mm: f64,
    pub y_to_mm: f64,
    /// `in_frame`, `partly_in_frame` or `out_of_frame`.
    pub coverage: &'static str,
}

/// The planner's report.
#[derive(Debug, Clone, Serialize)]
pub struct Plan {
    pub board: String,
    pub image_width: u32,
    pub image_height: u32,
    pub camera_centre: BoardPoint3,
    pub tilt_deg: f64,
    pub features: Vec<FeatureResolution>,
    /// Fraction of the playing surface's area that projects inside the image.
    pub surface_in_frame_fraction: f64,
    pub bands: Vec<Band>,
    /// Named features whose point lies outside the image.
    pub out_of_frame: Vec<String>,
}

/// The pixel where the camera images `p`, if `p` lies in front of the camera and
/// within the field of view the lens model covers (no further from the axis than
/// the image's border): beyond it a distortion polynomial can fold points back
/// into the frame, so they get no pixel.
pub fn project_in_field(cam: &Camera, pose: &CameraPose, p: BoardPoint3) -> Option<PixelPoint> {
    let c = pose.to_camera(p);
    if c[2] <= 0.0 {
        return None;
    }
    let (w, h) = (cam.image_width as f64, cam.image_height as f64);
    let r_limit = [(-0.5, -0.5), (w - 0.5, -0.5), (-0.5, h - 0.5), (w - 0.5, h - 0.5), (w / 2.0, -0.5), (w / 2.0, h - 0.5), (-0.5, h / 2.0), (w - 0.5, h / 2.0)]
        .iter()
        .filter_map(|&(u, v)| cam.normalise(PixelPoint::new(u, v)))
        .map(|(x, y)| x.hypot(y))
        .fold(0.0, f64::max);
    if (c[0] / c[2]).hypot(c[1] / c[2]) > r_limit {
        return None;
    }
    cam.project_camera_point(c)
}

/// The pixel where the camera images `p`, if it lands inside the image `margin_px`
/// clear of the border (see [`project_in_field`]).
pub fn pixel_in_frame(cam: &Camera, pose: &CameraPose, p: BoardPoint3, margin_px: f64) -> Option<PixelPoint> {
    let px = project_in_field(cam, pose, p)?;
    let (w, h) = (cam.image_width as f64, cam.image_height as f64);
    let lo = -0.5 + margin_px;
    (px.u >= lo && px.v >= lo && px.u <= w - 0.5 - margin_px && px.v <= h - 0.5 - margin_px).then_some(px)
}

/// Plans a validated scene's camera over its board.
pub fn plan(ls: &LoadedScene) -> Plan {
    let cam = ls.scene.camera.intrinsics;
    let project = |p: BoardPoint3| pixel_in_frame(&cam, &ls.pose, p, 0.0);
    let b = &ls.board;
    let hw = b.surface.half_width();
    let mut points: Vec<(String, BoardPoint3)> = Vec::new();
    let across = |name: &str, y: f64, z: f64, pts: &mut Vec<(String, BoardPoint3)>| {
        for (side, x) in [("left edge", -hw), ("centre", 0.0), ("right edge", hw)] {
            pts.push((format!("{name} ({side})"), BoardPoint3::new(x, y, z)));
        }
    };
    across("target end", 0.0, 0.0, &mut points);
    match &b.layout {
        Layout::Shuffleboard(s) => {
            for (name, y) in [
                ("3-line", s.lines.trey_line_mm),
                ("2-line", s.lines.deuce_line_mm),
                ("long foul line", s.lines.long_foul_line_mm),
                ("short foul line", s.lines.short_foul_line_mm),
            ] {
                across(name, y, 0.0, &mut points);
            }
        }
        Layout::Washer(wb) => {
            for (i, hole) in wb.holes.iter().enumerate() {
                let name = format!("hole {i} ({} points)", hole.value);
                points.push((format!("{name} rim centre"), BoardPoint3::new(hole.x_mm, hole.y_mm, 0.0)));
                points.push((format!("{name} cup bottom"), BoardPoint3::new(hole.x_mm, hole.y_mm, -wb.cup_depth_mm)));
            }
        }
        Layout::Sjoelbak(s) => {
            for c in &s.compartments {
                points.push((format!("gate {} front", c.value), BoardPoint3::new(c.x_mm, s.gate_front_mm, 0.0)));
                points.push((format!("compartment {}", c.value), BoardPoint3::new(c.x_mm, s.gate_back_mm / 2.0, 0.0)));
            }
        }
    }
    across("far end", b.surface.length_mm, 0.0, &mut points);
    let scale = |p: BoardPoint3, q: BoardPoint3| -> Option<f64> {
        let (a, b) = (project_in_field(&cam, &ls.pose, p)?, project_in_field(&cam, &ls.pose, q)?);
        let d = a.distance(b);
        (d > 0.0).then(|| RESOLUTION_STEP_MM / d)
    };
    let mut out_of_frame = Vec::new();
    let features = points
        .into_iter()
        .map(|(name, p)| {
            let px = project(p);
            if px.is_none() {
                out_of_frame.push(name.clone());
            }
            let along = scale(p, BoardPoint3::new(p.x_mm, p.y_mm + RESOLUTION_STEP_MM, p.z_mm));
            let acr = scale(p, BoardPoint3::new(p.x_mm + RESOLUTION_STEP_MM, p.y_mm, p.z_mm));
            FeatureResolution {
                name,
                at: p,
                in_frame: px.is_some(),
                pixel: project_in_field(&cam, &ls.pose, p),
                mm_per_px_along: along,
                mm_per_px_across: acr,
            }
        })
        .collect();
    // Coverage of the surface, band by band along the board.
    let nx = ((b.surface.width_mm / COVERAGE_STEP_MM).ceil() as usize).max(1);
    let ny = ((b.surface.length_mm / COVERAGE_STEP_MM).ceil() as usize).max(1);
    let (mut total, mut seen) = (0usize, 0usize);
    let mut bands: Vec<Band> = Vec::new();
    for j in 0..ny {
        let y0 = j as f64 * COVERAGE_STEP_MM;
        let y = (y0 + COVERAGE_STEP_MM / 2.0).min(b.surface.length_mm);
        let row_seen = (0..nx)
            .filter(|i| {
                let x = -hw + (*i as f64 + 0.5) * b.surface.width_mm / nx as f64;
                project(BoardPoint3::new(x, y, 0.0)).is_some()
            })
            .count();
        total += nx;
        seen += row_seen;
        let coverage = match row_seen {
            0 => "out_of_frame",
            n if n == nx => "in_frame",
            _ => "partly_in_frame",
        };
        let y1 = (y0 + COVERAGE_STEP_MM).min(b.surface.length_mm);
        match bands.last_mut() {
            Some(last) if last.coverage == coverage => last.y_to_mm = y1,
            _ => bands.push(Band { y_from_mm: y0, y_to_mm: y1, coverage }),
        }
    }
    let fwd = ls.pose.rotation[2];
    Plan {
        board: b.name.clone(),
        image_width: cam.image_width,
        image_height: cam.image_height,
        camera_centre: ls.pose.centre(),
        tilt_deg: (-fwd[2]).clamp(-1.0, 1.0).acos().to_degrees(),
        features,
        surface_in_frame_fraction: seen as f64 / total as f64,
        bands,
        out_of_frame,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::camera::{Camera, Distortion};
    use crate::render::scene::{Appearance, CameraSpec, Effects, PoseSpec, Scene, SCENE_FORMAT};

    fn overhead(board: &str, height: f64, target_y: f64) -> LoadedScene {
        Scene {
            format: SCENE_FORMAT,
            board: board.into(),
            foul_line: Default::default(),
            construction: None,
            camera: CameraSpec {
                intrinsics: Camera { image_width: 1000, image_height: 800, fx: 1000.0, fy: 1000.0, cx: 499.5, cy: 399.5, distortion: Distortion::default() },
                pose: PoseSpec::LookAt {
                    position: BoardPoint3::new(0.0, target_y, height),
                    target: BoardPoint3::new(0.0, target_y, 0.0),
                    up: [0.0, -1.0, 0.0],
                },
            },
            pieces: vec![],
            lights: vec![],
            appearance: Appearance::default(),
            effects: Effects::default(),
            supersample: 1,
            seed: 0,
            tags: vec![],
        }
        .validate("test")
        .unwrap()
    }

    #[test]
    fn an_overhead_pinhole_camera_has_height_over_focal_mm_per_pixel() {
        let p = plan(&overhead("shuffleboard-22ft", 2000.0, 300.0));
        let trey = p.features.iter().find(|f| f.name == "3-line (centre)").unwrap();
        // Straight down from 2 m with f = 1000 px: 2 mm per pixel, both ways (to float noise).
        assert!((trey.mm_per_px_along.unwrap() - 2.0).abs() < 1e-3, "{trey:?}");
        assert!((trey.mm_per_px_across.unwrap() - 2.0).abs() < 1e-3, "{trey:?}");
        assert!(trey.in_frame);
        // The frame is 2 m x 1.6 m around y = 300: the foul lines and far end are out of frame.
        assert!(p.out_of_frame.iter().any(|n| n.starts_with("long foul line")));
        assert!(p.out_of_frame.iter().any(|n| n.starts_with("far end")));
        // 6 m away along the board is far outside the lens's field: no resolution is claimed there.
        let far = p.features.iter().find(|f| f.name == "far end (centre)").unwrap();
        assert!(far.mm_per_px_along.is_none() && far.pixel.is_none(), "{far:?}");
        assert!(p.bands.first().unwrap().coverage == "in_frame" && p.bands.last().unwrap().coverage == "out_of_frame");
        assert!(p.surface_in_frame_fraction > 0.1 && p.surface_in_frame_fraction < 0.3, "{}", p.surface_in_frame_fraction);
    }

    #[test]
    fn a_cup_bottom_is_finer_than_its_rim_seen_from_above() {
        let p = plan(&overhead("holeyboard", 2500.0, 600.0));
        let rim = p.features.iter().find(|f| f.name == "hole 1 (3 points) rim centre").unwrap();
        let bottom = p.features.iter().find(|f| f.name == "hole 1 (3 points) cup bottom").unwrap();
        // 76 mm further from the camera: coarser by (2500 + 76) / 2500.
        let ratio = bottom.mm_per_px_along.unwrap() / rim.mm_per_px_along.unwrap();
        assert!((ratio - 2576.0 / 2500.0).abs() < 1e-3, "{ratio}");
        assert!(p.out_of_frame.is_empty(), "{:?}", p.out_of_frame);
    }
}
