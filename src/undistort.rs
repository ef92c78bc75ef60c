//! Stage `Frame -> Undistorted`: removes lens distortion with remap tables computed once per camera and reused for every frame.

use crate::camera::{Camera, Distortion};
use crate::frame::{cv, Frame, FrameError, Undistorted};
use opencv::core::{Mat, Scalar, Size, CV_32FC1};
use opencv::prelude::*;
use opencv::calib3d;

/// How the undistorted image is framed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct UndistortConfig {
    /// `None` keeps the calibrated camera matrix (same focal length and centre,
    /// zero distortion): the image keeps its scale at the centre and loses some
    /// of the stretched corners. `Some(alpha)` uses OpenCV's
    /// `getOptimalNewCameraMatrix` (0: only valid pixels, 1: every source pixel kept).
    pub alpha: Option<f64>,
}

impl Default for UndistortConfig {
    fn default() -> Self {
        UndistortConfig { alpha: None }
    }
}

/// Owns the remap tables of one camera; [`Undistorter::run`] reuses them (and
/// the output buffer) for every frame.
pub struct Undistorter {
    camera: Camera,
    ideal: Camera,
    map_x: Mat,
    map_y: Mat,
    valid: Mat,
}

impl Undistorter {
    /// Precomputes the tables (`initUndistortRectifyMap`, 32-bit float maps: no
    /// fixed-point quantisation of the sample positions).
    pub fn new(camera: Camera, cfg: UndistortConfig) -> Result<Undistorter, FrameError> {
        let k = camera.camera_matrix_mat()?;
        let d = camera.dist_coeffs_mat()?;
        let size = Size::new(camera.image_width as i32, camera.image_height as i32);
        let new_k = match cfg.alpha {
            None => k.clone(),
            Some(alpha) => cv(
                "getOptimalNewCameraMatrix",
                calib3d::get_optimal_new_camera_matrix(&k, &d, size, alpha, size, None, false),
            )?,
        };
        let at = |r, c| cv("new camera matrix", new_k.at_2d::<f64>(r, c).copied());
        let ideal = Camera {
            fx: at(0, 0)?,
            fy: at(1, 1)?,
            cx: at(0, 2)?,
            cy: at(1, 2)?,
            distortion: Distortion::default(),
            ..camera
        };
        let (mut map_x, mut map_y) = (Mat::default(), Mat::default());
        cv(
            "initUndistortRectifyMap",
            calib3d::init_undistort_rectify_map(&k, &d, &Mat::default(), &new_k, size, CV_32FC1, &mut map_x, &mut map_y),
        )?;
        // Valid where the whole bilinear footprint lies inside the raw frame.
        let mut valid = cv("mask", Mat::new_rows_cols_with_default(size.height, size.width, opencv::core::CV_8UC1, Scalar::all(0.0)))?;
        {
            let (mx, my) = (cv("map", map_x.data_typed::<f32>())?, cv("map", map_y.data_typed::<f32>())?);
            let (w, h) = (size.width as f32, size.height as f32);
            let out = cv("mask", valid.data_typed_mut::<u8>())?;
            for (i, o) in out.iter_mut().enumerate() {
                if mx[i] >= 0.0 && my[i] >= 0.0 && mx[i] <= w - 1.0 && my[i] <= h - 1.0 {
                    *o = 255;
                }
            }
        }
        Ok(Undistorter { camera, ideal, map_x, map_y, valid })
    }

    /// The calibrated (distorting) camera this undistorter was built for.
    pub fn camera(&self) -> &Camera {
        &self.camera
    }

    /// 255 where undistorted pixels come from inside the raw frame.
    pub fn valid_mask(&self) -> &Mat {
        &self.valid
    }

    /// The ideal pinhole camera of the undistorted images.
    pub fn ideal_camera(&self) -> &Camera {
        &self.ideal
    }

    /// Undistorts one frame (bilinear resampling; pixels with no source are black).
    pub fn run(&mut self, frame: &Frame) -> Result<Undistorted, FrameError> {
        let image = frame.remap(&self.camera, &self.map_x, &self.map_y)?;
        Ok(Undistorted { image, camera: self.ideal, valid: self.valid.clone() })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geom::PixelPoint;
    use opencv::imgproc;
    use opencv::core::{Point, Scalar, CV_8UC3};

    fn reference_camera() -> Camera {
        Camera::load(std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/opencv-chessboard/left_intrinsics.yml")))
            .unwrap()
    }

    /// A white dot drawn at a distorted pixel lands, after undistortion, at the
    /// ideal camera's pinhole projection of the same ray.
    #[test]
    fn a_dot_moves_to_its_pinhole_position() {
        let cam = reference_camera();
        let mut und = Undistorter::new(cam, UndistortConfig::default()).unwrap();
        for (x, y) in [(-0.45, -0.3), (0.4, 0.35), (0.0, 0.0)] {
            let src = cam.project_camera_point([x, y, 1.0]).unwrap();
            let mut img = Mat::new_rows_cols_with_default(480, 640, CV_8UC3, Scalar::all(0.0)).unwrap();
            // A 5x5 block centred on the rounded source pixel.
            let (cu, cv_) = (src.u.round() as i32, src.v.round() as i32);
            imgproc::rectangle_points(&mut img, Point::new(cu - 2, cv_ - 2), Point::new(cu + 2, cv_ + 2), Scalar::all(255.0), -1, imgproc::LINE_8, 0)
                .unwrap();
            let frame = Frame::from_mat(img).unwrap();
            let out = und.run(&frame).unwrap();
            // Centroid of the undistorted blob.
            let gray = out.gray().unwrap();
            let (mut s, mut su, mut sv) = (0.0, 0.0, 0.0);
            for r in 0..gray.rows() {
                for c in 0..gray.cols() {
                    let w = *gray.at_2d::<u8>(r, c).unwrap() as f64;
                    s += w;
                    su += w * c as f64;
                    sv += w * r as f64;
                }
            }
            let centroid = PixelPoint::new(su / s, sv / s);
            // Where the block's centre (the rounded pixel) should land.
            let (xn, yn) = cam.normalise(PixelPoint::new(cu as f64, cv_ as f64)).unwrap();
            let want = out.camera.pinhole_pixel(xn, yn);
            // The blob is resampled and slightly warped: its centroid within 0.3 px.
            assert!(centroid.distance(want) < 0.3, "{centroid:?} vs {want:?}");
        }
    }

    #[test]
    fn the_wrong_frame_size_is_refused() {
        let mut und = Undistorter::new(reference_camera(), UndistortConfig::default()).unwrap();
        let img = Mat::new_rows_cols_with_default(100, 100, CV_8UC3, Scalar::all(0.0)).unwrap();
        let e = und.run(&Frame::from_mat(img).unwrap()).unwrap_err();
        assert!(matches!(e, FrameError::SizeMismatch { .. }), "{e}");
    }

    #[test]
    fn alpha_one_keeps_every_source_pixel() {
        let cam = reference_camera();
        let und = Undistorter::new(cam, UndistortConfig { alpha: Some(1.0) }).unwrap();
        // With strong barrel distortion, keeping every pixel shrinks the focal length.
        assert!(und.ideal_camera().fx < cam.fx);
        assert_eq!(und.ideal_camera().distortion, Distortion::default());
        // Keeping every source pixel leaves fill in the corners of a barrel-distorted image.
        let m = und.valid_mask();
        assert_eq!(*m.at_2d::<u8>(0, 0).unwrap(), 0);
        assert_eq!(*m.at_2d::<u8>(240, 320).unwrap(), 255);
    }
}
