//! The top-down metric view of the board plane: every output pixel is a board point, sampled from the raw frame through the camera and its pose.
//!
//! The view is drawn the way `docs/board-format.md` draws the board: target
//! end at the bottom, `x` to the right, `y` up. It samples the raw (distorted)
//! frame directly with one remap table built from [`CameraPose::project`], so
//! there is no second resampling through an undistorted image; the table is
//! built once per camera and pose and reused for every frame.

use crate::board::Board;
use crate::camera::{Camera, CameraPose};
use crate::frame::{cv, Frame, FrameError};
use crate::geom::{BoardPoint, PixelPoint};
use opencv::core::{Mat, Scalar, CV_32FC1};
use opencv::prelude::*;
use serde::Serialize;

/// A top view larger than this many pixels would need over a gigabyte of
/// tables; at 1 mm/px the longest board (6.3 m x 0.5 m plus margins) is ~4.4 Mpx.
pub const MAX_OUTPUT_PIXELS: u64 = 60_000_000;

/// Errors of the rectification stage.
#[derive(Debug, thiserror::Error)]
pub enum RectifyError {
    #[error("mm per pixel must be positive and finite, got {mm_per_px}")]
    Scale { mm_per_px: f64 },
    #[error("the top view would be {width}x{height} px (over {MAX_OUTPUT_PIXELS} px): use a larger --mm-per-px")]
    TooLarge { width: u64, height: u64 },
    #[error("no part of the board plane is visible from this pose")]
    NotVisible,
    #[error("{source}")]
    Frame {
        #[from]
        source: FrameError,
    },
}

/// What the top view covers and at what scale.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct RectifyConfig {
    /// Board millimetres per output pixel.
    pub mm_per_px: f64,
    /// Extra board plane shown around the playing surface (gutters, walls), mm.
    pub margin_mm: f64,
    /// Height of the plane drawn, mm (0: the playing surface; -76: a washer cup's bottom).
    pub height_mm: f64,
    /// Crop to the part of the plane the camera sees (a long board seen from one end).
    pub crop_to_view: bool,
}

impl Default for RectifyConfig {
    fn default() -> Self {
        // 100 mm shows a shuffleboard's gutters (76 mm) and a sjoelbak's walls.
        RectifyConfig { mm_per_px: 1.0, margin_mm: 100.0, height_mm: 0.0, crop_to_view: true }
    }
}

/// The board-plane rectangle a top view shows and its pixel grid.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct TopViewGeometry {
    pub width_px: u32,
    pub height_px: u32,
    pub mm_per_px: f64,
    /// Board `x` of the centre of the left column of pixels.
    pub x_min_mm: f64,
    /// Board `y` of the centre of the top row of pixels (the far end: `y` grows upwards).
    pub y_max_mm: f64,
    pub height_mm: f64,
}

impl TopViewGeometry {
    /// The board point at the centre of output pixel (`col`, `row`) (OpenCV convention: integer = pixel centre).
    pub fn board_point(&self, px: PixelPoint) -> BoardPoint {
        BoardPoint::new(self.x_min_mm + px.u * self.mm_per_px, self.y_max_mm - px.v * self.mm_per_px)
    }

    /// The output pixel of a board point.
    pub fn pixel(&self, p: BoardPoint) -> PixelPoint {
        PixelPoint::new((p.x_mm - self.x_min_mm) / self.mm_per_px, (self.y_max_mm - p.y_mm) / self.mm_per_px)
    }
}

/// A rectified top view of one frame.
#[derive(Debug, Clone)]
pub struct TopView {
    /// 8-bit BGR; pixels the camera does not see are black.
    pub image: Mat,
    pub geometry: TopViewGeometry,
}

/// Owns the remap tables of one camera, pose and region.
pub struct Rectifier {
    camera: Camera,
    geometry: TopViewGeometry,
    map_x: Mat,
    map_y: Mat,
}

/// The visible part of the plane is found by sampling the image border this densely (per side).
const BORDER_SAMPLES: usize = 64;

impl Rectifier {
    pub fn new(camera: Camera, pose: CameraPose, board: &Board, cfg: RectifyConfig) -> Result<Rectifier, RectifyError> {
        if !(cfg.mm_per_px.is_finite() && cfg.mm_per_px > 0.0) {
            return Err(RectifyError::Scale { mm_per_px: cfg.mm_per_px });
        }
        let half = board.surface.half_width() + cfg.margin_mm;
        let (mut x0, mut x1, mut y0, mut y1) = (-half, half, -cfg.margin_mm, board.surface.length_mm + cfg.margin_mm);
        if cfg.crop_to_view {
            // The plane points seen along the image border (and the centre) bound the view.
            let (w, h) = (camera.image_width as f64, camera.image_height as f64);
            let mut seen: Vec<BoardPoint> = Vec::new();
            for i in 0..=BORDER_SAMPLES {
                let f = i as f64 / BORDER_SAMPLES as f64;
                for px in [
                    PixelPoint::new(f * (w - 1.0), 0.0),
                    PixelPoint::new(f * (w - 1.0), h - 1.0),
                    PixelPoint::new(0.0, f * (h - 1.0)),
                    PixelPoint::new(w - 1.0, f * (h - 1.0)),
                ] {
                    seen.extend(pose.back_project(&camera, px, cfg.height_mm));
                }
            }
            // A border ray that misses the plane (looking over the horizon) leaves the view unbounded that way.
            let complete = seen.len() == 4 * (BORDER_SAMPLES + 1);
            if seen.is_empty() {
                return Err(RectifyError::NotVisible);
            }
            if complete {
                let (mut a, mut b, mut c, mut d) = (f64::MAX, f64::MIN, f64::MAX, f64::MIN);
                for p in &seen {
                    a = a.min(p.x_mm);
                    b = b.max(p.x_mm);
                    c = c.min(p.y_mm);
                    d = d.max(p.y_mm);
                }
                x0 = x0.max(a);
                x1 = x1.min(b);
                y0 = y0.max(c);
                y1 = y1.min(d);
            }
            if x0 >= x1 || y0 >= y1 {
                return Err(RectifyError::NotVisible);
            }
        }
        let width = ((x1 - x0) / cfg.mm_per_px).floor() as u64 + 1;
        let height = ((y1 - y0) / cfg.mm_per_px).floor() as u64 + 1;
        if width * height > MAX_OUTPUT_PIXELS {
            return Err(RectifyError::TooLarge { width, height });
        }
        let geometry = TopViewGeometry {
            width_px: width as u32,
            height_px: height as u32,
            mm_per_px: cfg.mm_per_px,
            x_min_mm: x0,
            y_max_mm: y1,
            height_mm: cfg.height_mm,
        };
        let mut map_x = cv("map", Mat::new_rows_cols_with_default(height as i32, width as i32, CV_32FC1, Scalar::all(-1.0)))?;
        let mut map_y = cv("map", Mat::new_rows_cols_with_default(height as i32, width as i32, CV_32FC1, Scalar::all(-1.0)))?;
        {
            let mx = cv("map", map_x.data_typed_mut::<f32>())?;
            let my = cv("map", map_y.data_typed_mut::<f32>())?;
            for r in 0..height as usize {
                for c in 0..width as usize {
                    let b = geometry.board_point(PixelPoint::new(c as f64, r as f64));
                    if let Some(px) = pose.project(&camera, b.at_height(cfg.height_mm)) {
                        mx[r * width as usize + c] = px.u as f32;
                        my[r * width as usize + c] = px.v as f32;
                    }
                }
            }
        }
        Ok(Rectifier { camera, geometry, map_x, map_y })
    }

    pub fn geometry(&self) -> &TopViewGeometry {
        &self.geometry
    }

    /// Rectifies one raw frame (bilinear sampling).
    pub fn run(&mut self, frame: &Frame) -> Result<TopView, RectifyError> {
        let image = frame.remap(&self.camera, &self.map_x, &self.map_y)?;
        Ok(TopView { image, geometry: self.geometry })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::camera::Distortion;
    use crate::geom::BoardPoint3;
    use opencv::core::CV_8UC3;

    fn camera() -> Camera {
        Camera {
            image_width: 640,
            image_height: 480,
            fx: 500.0,
            fy: 500.0,
            cx: 320.0,
            cy: 240.0,
            distortion: Distortion::brown(-0.2, 0.05, 0.0, 0.0, 0.0),
        }
    }

    /// A frame where every pixel's colour encodes the board point it sees (x in
    /// blue, y in green, 1 level per 2 mm): the top view must show each board
    /// point's own colour at its own place.
    #[test]
    fn each_top_view_pixel_shows_its_own_board_point() {
        let cam = camera();
        let board = Board::load("holeyboard").unwrap();
        let pose = CameraPose::look_at(BoardPoint3::new(0.0, 300.0, 1400.0), BoardPoint3::new(0.0, 300.0, 0.0), [0.0, 1.0, 0.0]).unwrap();
        let mut img = Mat::new_rows_cols_with_default(480, 640, CV_8UC3, Scalar::all(0.0)).unwrap();
        for v in 0..480 {
            for u in 0..640 {
                if let Some(b) = pose.back_project(&cam, PixelPoint::new(u as f64, v as f64), 0.0) {
                    let px = img.at_2d_mut::<opencv::core::Vec3b>(v, u).unwrap();
                    px[0] = ((b.x_mm + 256.0) / 2.0).clamp(0.0, 255.0) as u8;
                    px[1] = (b.y_mm / 4.0).clamp(0.0, 255.0) as u8;
                }
            }
        }
        let frame = Frame::from_mat(img).unwrap();
        let mut r = Rectifier::new(cam, pose, &board, RectifyConfig { mm_per_px: 2.0, ..Default::default() }).unwrap();
        let top = r.run(&frame).unwrap();
        let g = top.geometry;
        assert_eq!(top.image.cols() as u32, g.width_px);
        for p in [BoardPoint::new(-150.0, 100.0), BoardPoint::new(120.0, 500.0), BoardPoint::new(0.0, 300.0)] {
            let px = g.pixel(p);
            let c = top.image.at_2d::<opencv::core::Vec3b>(px.v.round() as i32, px.u.round() as i32).unwrap();
            // Quantisation of the colour code (2 and 4 mm per level) plus 1 px (2 mm) of rounding.
            assert!((c[0] as f64 - (p.x_mm + 256.0) / 2.0).abs() <= 2.5, "{p:?}: {c:?}");
            assert!((c[1] as f64 - p.y_mm / 4.0).abs() <= 2.0, "{p:?}: {c:?}");
        }
        // Target end at the bottom: y decreases down the image.
        assert!(g.pixel(BoardPoint::new(0.0, 0.0)).v > g.pixel(BoardPoint::new(0.0, 500.0)).v);
    }

    #[test]
    fn bad_scales_and_invisible_planes_are_refused() {
        let cam = camera();
        let board = Board::load("holeyboard").unwrap();
        let pose = CameraPose::look_at(BoardPoint3::new(0.0, 300.0, 1400.0), BoardPoint3::new(0.0, 300.0, 0.0), [0.0, 1.0, 0.0]).unwrap();
        assert!(matches!(
            Rectifier::new(cam, pose, &board, RectifyConfig { mm_per_px: 0.0, ..Default::default() }),
            Err(RectifyError::Scale { .. })
        ));
        // Looking straight up: the plane is behind the camera.
        let up = CameraPose::look_at(BoardPoint3::new(0.0, 300.0, 1400.0), BoardPoint3::new(0.0, 300.0, 3000.0), [0.0, 1.0, 0.0]).unwrap();
        assert!(matches!(Rectifier::new(cam, up, &board, RectifyConfig::default()), Err(RectifyError::NotVisible)));
    }
}
