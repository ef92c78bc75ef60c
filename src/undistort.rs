//! Stage `Frame -> Undistorted`: removes lens distortion with remap tables computed once per camera and reused for every frame.

use crate::camera::{Camera, Distortion};
use crate::frame::{cv, Frame, FrameError, Undistorted};
use crate::geom::PixelPoint;
use opencv::core::{Mat, Scalar, Size, CV_32FC1};
use opencv::prelude::*;
use opencv::calib3d;

/// A fisheye's undistorted (pinhole) image ends at most this far off axis: beyond 75 degrees a pinhole image
/// stretches the fisheye's pixels 15-fold (1 / cos^2), and at 90 degrees it is infinitely wide.
pub const MAX_PINHOLE_HALF_FIELD_DEG: f64 = 75.0;

/// A fisheye's undistorted image keeps all four ends of the frame's axes in view by default: a whole board
/// seen through a wide lens reaches the frame's sides, and the narrower framing (0) lost what lay there (varied
/// 13: a sjoelbak's compartments and gate lay beyond the undistorted image's edge, leaving locate only the far
/// end's broken line to read the board's length from). The middle is then seen a little coarser than the raw
/// frame has it; the pose's fit measures edges in the undistorted image either way (varied fisheye views: the
/// located poses' errors within 3 sigma on all 11 located, 10 before).
pub const FISHEYE_ALPHA: f64 = 1.0;

/// How the undistorted image is framed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct UndistortConfig {
    /// Brown-Conrady lenses: `None` keeps the calibrated camera matrix (same focal length and centre, zero
    /// distortion): the image keeps its scale at the centre and loses some of the stretched corners. `Some(alpha)`
    /// uses OpenCV's `getOptimalNewCameraMatrix` (0: only valid pixels, 1: every source pixel kept).
    ///
    /// Fisheye lenses: the calibrated camera matrix would show only the middle of the field (the tests' 180
    /// degree lens at the same focal length keeps the central 72 % of the width and 81 % of the height), so the
    /// focal length is always chosen anew, the principal point and aspect kept: `alpha` 0 is the largest focal length at which
    /// the ends of the image axes through the principal point still come from inside the frame (no fill along
    /// the axes; the frame's corners are lost), 1 the smallest at which all four axis ends of the frame are in
    /// view (fill beyond the nearer edges), and values between interpolate, as OpenCV's
    /// `fisheye::estimateNewCameraMatrixForUndistortRectify` does with its `balance`. Axis ends further than
    /// [`MAX_PINHOLE_HALF_FIELD_DEG`] off axis count as at that angle. `None` is [`FISHEYE_ALPHA`].
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

/// The focal lengths of a fisheye's undistorted image (see [`UndistortConfig::alpha`]).
fn fisheye_focal(camera: &Camera, alpha: f64) -> Result<(f64, f64), FrameError> {
    let (w, h) = (camera.image_width as f64, camera.image_height as f64);
    let max_tan = MAX_PINHOLE_HALF_FIELD_DEG.to_radians().tan();
    // Each axis end: its raw pixel, its pixel offset from the principal point, and which normalised coordinate.
    let ends = [
        (PixelPoint::new(0.0, camera.cy), camera.cx, 0),
        (PixelPoint::new(w - 1.0, camera.cy), w - 1.0 - camera.cx, 0),
        (PixelPoint::new(camera.cx, 0.0), camera.cy, 1),
        (PixelPoint::new(camera.cx, h - 1.0), h - 1.0 - camera.cy, 1),
    ];
    // The focal length (in fx units) that puts each axis end's ray on the matching edge of the undistorted image.
    let mut f = Vec::with_capacity(4);
    for (px, offset, axis) in ends {
        let n = camera.normalise(px).map_or(max_tan, |(x, y)| if axis == 0 { x.abs() } else { y.abs() }.min(max_tan));
        if offset > 0.0 && n > 0.0 {
            f.push(if axis == 0 { offset / n } else { offset / n * camera.fx / camera.fy });
        }
    }
    let (lo, hi) = f.iter().fold((f64::INFINITY, 0.0f64), |(lo, hi), v| (lo.min(*v), hi.max(*v)));
    if !(lo.is_finite() && hi > 0.0) {
        return Err(FrameError::Camera {
            source: crate::camera::CameraError::Field {
                file: crate::camera::FileKind::Camera,
                path: Default::default(),
                key: "camera_matrix".into(),
                problem: "puts the principal point on the image border: no undistorted view can be framed".into(),
            },
        });
    }
    let a = alpha.clamp(0.0, 1.0);
    let fx = a * lo + (1.0 - a) * hi;
    Ok((fx, fx * camera.fy / camera.fx))
}

impl Undistorter {
    /// Precomputes the tables (`initUndistortRectifyMap`, or `fisheye::initUndistortRectifyMap` for a fisheye;
    /// 32-bit float maps: no fixed-point quantisation of the sample positions).
    pub fn new(camera: Camera, cfg: UndistortConfig) -> Result<Undistorter, FrameError> {
        let k = camera.camera_matrix_mat()?;
        let size = Size::new(camera.image_width as i32, camera.image_height as i32);
        let (mut map_x, mut map_y) = (Mat::default(), Mat::default());
        let new_k = match camera.distortion {
            Distortion::Brown(_) => {
                let d = camera.dist_coeffs_mat()?;
                let new_k = match cfg.alpha {
                    None => k.clone(),
                    Some(alpha) => cv(
                        "getOptimalNewCameraMatrix",
                        calib3d::get_optimal_new_camera_matrix(&k, &d, size, alpha, size, None, false),
                    )?,
                };
                cv(
                    "initUndistortRectifyMap",
                    calib3d::init_undistort_rectify_map(&k, &d, &Mat::default(), &new_k, size, CV_32FC1, &mut map_x, &mut map_y),
                )?;
                new_k
            }
            Distortion::Fisheye(_) => {
                let d = camera.fisheye_coeffs_mat()?;
                let (fx, fy) = fisheye_focal(&camera, cfg.alpha.unwrap_or(FISHEYE_ALPHA))?;
                let new_k = Camera { fx, fy, distortion: Distortion::NONE, ..camera }.camera_matrix_mat()?;
                cv(
                    "fisheye::initUndistortRectifyMap",
                    calib3d::fisheye_init_undistort_rectify_map(&k, &d, &Mat::default(), &new_k, size, CV_32FC1, &mut map_x, &mut map_y),
                )?;
                new_k
            }
        };
        let at = |r, c| cv("new camera matrix", new_k.at_2d::<f64>(r, c).copied());
        let ideal = Camera {
            fx: at(0, 0)?,
            fy: at(1, 1)?,
            cx: at(0, 2)?,
            cy: at(1, 2)?,
            distortion: Distortion::NONE,
            ..camera
        };
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
    use opencv::imgproc;
    use opencv::core::{Point, Scalar, CV_8UC3};

    fn reference_camera() -> Camera {
        Camera::load(std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/opencv-chessboard/left_intrinsics.yml")))
            .unwrap()
    }

    /// A strong fisheye (Kannala-Brandt coefficients of an equidistant lens) whose image corners are 90 degrees
    /// off axis: a ~180 degree diagonal field.
    fn fisheye_camera() -> Camera {
        let lens = crate::camera::KannalaBrandt { k1: -0.013, k2: -0.0084, k3: 0.0039, k4: -0.0008 };
        let f = 800.0 / (std::f64::consts::FRAC_PI_2 * (1.0 - 0.013 * 2.4674 - 0.0084 * 6.0881 + 0.0039 * 15.022 - 0.0008 * 37.065));
        Camera { image_width: 1280, image_height: 960, fx: f, fy: f * 1.001, cx: 642.5, cy: 477.5, distortion: Distortion::Fisheye(lens) }
    }

    /// Draws a 5x5 white block at the raw pixel of each normalised point, undistorts, and returns the largest
    /// distance between the undistorted blob's centroid and the ideal camera's pinhole pixel of the block's centre.
    fn dot_error(cam: Camera, points: &[(f64, f64)]) -> f64 {
        let mut und = Undistorter::new(cam, UndistortConfig::default()).unwrap();
        let (w, h) = (cam.image_width as i32, cam.image_height as i32);
        let mut worst = 0.0f64;
        for &(x, y) in points {
            let src = cam.project_camera_point([x, y, 1.0]).unwrap();
            let mut img = Mat::new_rows_cols_with_default(h, w, CV_8UC3, Scalar::all(0.0)).unwrap();
            // A 5x5 block centred on the rounded source pixel.
            let (cu, cv_) = (src.u.round() as i32, src.v.round() as i32);
            let (a, b) = (Point::new(cu - 2, cv_ - 2), Point::new(cu + 2, cv_ + 2));
            imgproc::rectangle_points(&mut img, a, b, Scalar::all(255.0), -1, imgproc::LINE_8, 0).unwrap();
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
            worst = worst.max(centroid.distance(want));
        }
        worst
    }

    /// A white dot drawn at a distorted pixel lands, after undistortion, at the
    /// ideal camera's pinhole projection of the same ray.
    #[test]
    fn a_dot_moves_to_its_pinhole_position() {
        // The blob is resampled and slightly warped: its centroid within 0.3 px.
        let e = dot_error(reference_camera(), &[(-0.45, -0.3), (0.4, 0.35), (0.0, 0.0)]);
        assert!(e < 0.3, "{e} px");
    }

    /// The same through a fisheye's tables (`fisheye::initUndistortRectifyMap`), out to 58 degrees off axis,
    /// where the pinhole view magnifies the block 3.6-fold radially: still within 0.3 px (measured 0.11 px).
    #[test]
    fn a_dot_moves_to_its_pinhole_position_through_a_fisheye() {
        let e = dot_error(fisheye_camera(), &[(-1.2, -0.8), (1.5, 0.6), (0.3, -1.1), (0.0, 0.0)]);
        eprintln!("fisheye dot: worst centroid error {e:.3} px");
        assert!(e < 0.3, "{e} px");
    }

    /// OpenCV's fisheye remap tables and this crate's fisheye model agree: every undistorted pixel samples the
    /// raw pixel that `Camera::project_camera_point` gives for its ray, to 5e-4 px (the maps are `f32`, ~1e-4 px
    /// at 1280 px, and OpenCV's table evaluates the same polynomial in double; measured 6e-5 px).
    #[test]
    fn fisheye_tables_agree_with_the_lens_model() {
        let cam = fisheye_camera();
        let und = Undistorter::new(cam, UndistortConfig::default()).unwrap();
        let ideal = *und.ideal_camera();
        let mut worst = 0.0f64;
        for v in (0..960).step_by(37) {
            for u in (0..1280).step_by(41) {
                let (x, y) = ideal.normalise(PixelPoint::new(u as f64, v as f64)).unwrap();
                let want = cam.project_camera_point([x, y, 1.0]).unwrap();
                let got = PixelPoint::new(*und.map_x.at_2d::<f32>(v, u).unwrap() as f64, *und.map_y.at_2d::<f32>(v, u).unwrap() as f64);
                worst = worst.max(got.distance(want));
            }
        }
        eprintln!("fisheye tables vs model: worst {worst:.2e} px");
        assert!(worst < 5e-4, "{worst} px");
    }

    /// The framings of a fisheye: alpha 0 makes the ideal camera wider than the calibrated one, every pixel along
    /// the axes through the principal point has a source, and the axis end that limits the view comes from the
    /// frame's edge (within 1 px); alpha 1, the default, brings all four axis ends into view, with fill beyond the
    /// nearer edges (for this 4:3 frame, above and below).
    #[test]
    fn a_fisheye_is_framed_to_its_axes() {
        let cam = fisheye_camera();
        let und = Undistorter::new(cam, UndistortConfig { alpha: Some(0.0) }).unwrap();
        let ideal = *und.ideal_camera();
        eprintln!("fisheye framing: calibrated fx {:.1}, ideal fx {:.1} (alpha 0)", cam.fx, ideal.fx);
        assert!(ideal.fx < 0.8 * cam.fx, "{} vs {}", ideal.fx, cam.fx);
        assert!((ideal.cx - cam.cx).abs() < 1e-12 && (ideal.fy / ideal.fx - cam.fy / cam.fx).abs() < 1e-12);
        let m = und.valid_mask();
        let (row, col) = (cam.cy.round() as i32, cam.cx.round() as i32);
        assert!((0..1280).all(|u| *m.at_2d::<u8>(row, u).unwrap() == 255));
        assert!((0..960).all(|v| *m.at_2d::<u8>(v, col).unwrap() == 255));
        let ends = [
            *und.map_x.at_2d::<f32>(row, 0).unwrap() as f64,
            1279.0 - *und.map_x.at_2d::<f32>(row, 1279).unwrap() as f64,
            *und.map_y.at_2d::<f32>(0, col).unwrap() as f64,
            959.0 - *und.map_y.at_2d::<f32>(959, col).unwrap() as f64,
        ];
        assert!(ends.iter().fold(f64::INFINITY, |a, b| a.min(*b)) < 1.0, "{ends:?}");
        let wide = Undistorter::new(cam, UndistortConfig::default()).unwrap();
        let explicit = Undistorter::new(cam, UndistortConfig { alpha: Some(1.0) }).unwrap();
        assert!((wide.ideal_camera().fx - explicit.ideal_camera().fx).abs() < 1e-9, "the default is alpha 1");
        assert!(wide.ideal_camera().fx < ideal.fx);
        assert_eq!(*wide.valid_mask().at_2d::<u8>(0, col).unwrap(), 0);
        assert_eq!(*wide.valid_mask().at_2d::<u8>(row, 0).unwrap(), 255);
        assert_eq!(*wide.valid_mask().at_2d::<u8>(row, col).unwrap(), 255);
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
