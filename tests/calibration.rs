//! Calibration on OpenCV's 13 real chessboard photos against OpenCV's own reference result, and a synthetic ChArUco calibration.

use boardcall::calibrate::{CalibrateConfig, Calibrator, Pattern};
use boardcall::camera::{Camera, CameraPose, Distortion};
use boardcall::frame::Frame;
use boardcall::geom::BoardPoint3;
use std::path::{Path, PathBuf};

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/opencv-chessboard").join(name)
}

const PHOTOS: [&str; 13] = [
    "left01.jpg", "left02.jpg", "left03.jpg", "left04.jpg", "left05.jpg", "left06.jpg", "left07.jpg", "left08.jpg",
    "left09.jpg", "left11.jpg", "left12.jpg", "left13.jpg", "left14.jpg",
];

/// The bar: fx, fy within 0.5 % of OpenCV's reference, cx, cy within 2 px, RMS <= 0.40 px.
const FOCAL_REL_TOL: f64 = 0.005;
const CENTRE_TOL_PX: f64 = 2.0;
const MAX_RMS_PX: f64 = 0.40;

fn calibrate_reference_photos() -> boardcall::calibrate::Calibration {
    // The reference's settings: 9x6 inner corners, 25 mm squares, fixed aspect ratio 1.
    let pattern: Pattern = "chessboard:9x6:25".parse().unwrap();
    let cfg = CalibrateConfig { fix_aspect_ratio: true, ..Default::default() };
    let mut cal = Calibrator::new(pattern, cfg).unwrap();
    for name in PHOTOS {
        let frame = Frame::load(&data(name)).unwrap();
        cal.add_view(name, &frame).unwrap();
    }
    cal.calibrate().unwrap()
}

#[test]
fn real_photos_reproduce_opencvs_reference_calibration() {
    let reference = Camera::load(&data("left_intrinsics.yml")).unwrap();
    let got = calibrate_reference_photos();
    let c = got.camera;
    eprintln!(
        "fx {:.3} (ref {:.3}) fy {:.3} (ref {:.3}) cx {:.3} (ref {:.3}) cy {:.3} (ref {:.3}) rms {:.4} px",
        c.fx, reference.fx, c.fy, reference.fy, c.cx, reference.cx, c.cy, reference.cy, got.rms_px
    );
    assert_eq!(got.views.iter().filter(|v| v.used).count(), 13, "the pattern is in every photo: {:?}", got.views);
    assert!(((c.fx - reference.fx) / reference.fx).abs() < FOCAL_REL_TOL, "fx {} vs {}", c.fx, reference.fx);
    assert!(((c.fy - reference.fy) / reference.fy).abs() < FOCAL_REL_TOL, "fy {} vs {}", c.fy, reference.fy);
    assert!((c.cx - reference.cx).abs() < CENTRE_TOL_PX, "cx {} vs {}", c.cx, reference.cx);
    assert!((c.cy - reference.cy).abs() < CENTRE_TOL_PX, "cy {} vs {}", c.cy, reference.cy);
    assert!(got.rms_px <= MAX_RMS_PX, "rms {}", got.rms_px);
    // Fixed aspect ratio 1 keeps fx == fy up to float rounding.
    assert!((c.fx - c.fy).abs() < 1e-9);
    for v in &got.views {
        let e = v.reprojection_error_px.expect("every used view has an error");
        // left02 is OpenCV's worst view at 1.18 px; nothing is worse than 1.5 px.
        assert!(e > 0.0 && e < 1.5, "{}: {e}", v.name);
    }

    // The written file loads back in our loader (and is OpenCV FileStorage) with the extras.
    let dir = std::env::temp_dir().join(format!("boardcall-calib-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("camera.yaml");
    got.save(&path).unwrap();
    let back = Camera::load(&path).unwrap();
    assert_eq!(back, c);
    let text = std::fs::read_to_string(&path).unwrap();
    for key in ["avg_reprojection_error", "per_view_reprojection_errors", "view_names", "left14.jpg", "!!opencv-matrix"] {
        assert!(text.contains(key), "{key} missing from\n{text}");
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn views_without_the_pattern_are_reported_not_fatal() {
    let pattern: Pattern = "chessboard:9x6:25".parse().unwrap();
    let mut cal = Calibrator::new(pattern, CalibrateConfig::default()).unwrap();
    // A wrong-sized pattern (7x7) is not in any photo.
    let mut wrong = Calibrator::new("chessboard:7x7:25".parse().unwrap(), CalibrateConfig::default()).unwrap();
    for name in &PHOTOS[..4] {
        let f = Frame::load(&data(name)).unwrap();
        assert!(cal.add_view(name, &f).unwrap());
        assert!(!wrong.add_view(name, &f).unwrap());
    }
    // A blank grey frame: the pattern is not there.
    let blank = opencv::core::Mat::new_rows_cols_with_default(480, 640, opencv::core::CV_8UC3, opencv::core::Scalar::all(128.0)).unwrap();
    assert!(!cal.add_view("blank", &Frame::from_mat(blank).unwrap()).unwrap());
    let got = cal.calibrate().unwrap();
    let blank = got.views.iter().find(|v| v.name == "blank").unwrap();
    assert!(!blank.used && blank.rejected.as_deref().unwrap().contains("no 9x6 chessboard"));
    assert_eq!(got.views.iter().filter(|v| v.used).count(), 4);
    let e = wrong.calibrate().unwrap_err().to_string();
    assert!(e.contains("found in 0 view"), "{e}");
}

#[test]
fn zero_tangent_and_fixed_k3_are_honoured() {
    let pattern: Pattern = "chessboard:9x6:25".parse().unwrap();
    let cfg = CalibrateConfig { zero_tangent: true, fix_k3: true, ..Default::default() };
    let mut cal = Calibrator::new(pattern, cfg).unwrap();
    for name in PHOTOS {
        cal.add_view(name, &Frame::load(&data(name)).unwrap()).unwrap();
    }
    let got = cal.calibrate().unwrap();
    let d = got.camera.distortion.as_brown().expect("calibrateCamera fits OpenCV's standard model");
    // Fixed parameters stay exactly at their initial zero.
    assert_eq!((d.p1, d.p2, d.k3), (0.0, 0.0, 0.0));
    assert!(d.k1 < -0.1, "the lens's strong barrel distortion is still found: {d:?}");
}

/// A ChArUco board drawn by OpenCV, seen through a known camera from several
/// poses (rendered by inverse-mapping each image pixel onto the board plane):
/// calibration recovers the camera.
#[test]
fn charuco_views_recover_a_known_camera() {
    use opencv::aruco;
    use opencv::core::{Mat, Size};
    use opencv::prelude::*;

    let (sx, sy, square, marker) = (7, 5, 40.0f64, 30.0f64);
    let pattern: Pattern = format!("charuco:{sx}x{sy}:{square}:{marker}:DICT_6X6_250").parse().unwrap();
    // The board image at 4 px per mm... too large; 2 px/mm is plenty for 640x480 views.
    let px_per_mm = 2.0;
    let dict = aruco::get_predefined_dictionary_i32(aruco::DICT_6X6_250).unwrap();
    let mut board = aruco::CharucoBoard::create(sx, sy, square as f32, marker as f32, &dict).unwrap();
    let (bw, bh) = ((sx as f64 * square * px_per_mm) as i32, (sy as f64 * square * px_per_mm) as i32);
    let mut art = Mat::default();
    board.draw(Size::new(bw, bh), &mut art, 0, 1).unwrap();

    let truth = Camera {
        image_width: 640,
        image_height: 480,
        fx: 600.0,
        fy: 600.0,
        cx: 322.0,
        cy: 238.0,
        distortion: Distortion::brown(-0.12, 0.05, 0.0, 0.0, 0.0),
    };
    let centre = BoardPoint3::new(sx as f64 * square / 2.0, sy as f64 * square / 2.0, 0.0);
    let cfg = CalibrateConfig { zero_tangent: true, fix_k3: true, ..Default::default() };
    let mut cal = Calibrator::new(pattern, cfg).unwrap();
    // ChArUco's board frame has y down the drawn image; any proper pose works.
    let eyes = [(-150.0, -100.0, -450.0), (150.0, -80.0, -420.0), (0.0, 160.0, -480.0), (-120.0, 140.0, -400.0), (60.0, 0.0, -380.0), (200.0, 150.0, -500.0)];
    for (i, (ex, ey, ez)) in eyes.iter().enumerate() {
        let eye = BoardPoint3::new(centre.x_mm + ex, centre.y_mm + ey, *ez);
        let pose = CameraPose::look_at(eye, centre, [0.0, -1.0, 0.0]).unwrap();
        let mut img = Mat::new_rows_cols_with_default(480, 640, opencv::core::CV_8UC1, opencv::core::Scalar::all(255.0)).unwrap();
        for v in 0..480 {
            for u in 0..640 {
                let px = boardcall::geom::PixelPoint::new(u as f64, v as f64);
                if let Some(b) = pose.back_project(&truth, px, 0.0) {
                    let (c, r) = ((b.x_mm * px_per_mm).round() as i32, (b.y_mm * px_per_mm).round() as i32);
                    if (0..bw).contains(&c) && (0..bh).contains(&r) {
                        *img.at_2d_mut::<u8>(v, u).unwrap() = *art.at_2d::<u8>(r, c).unwrap();
                    }
                }
            }
        }
        let found = cal.add_view(&format!("view{i}"), &Frame::from_mat(img).unwrap()).unwrap();
        assert!(found, "view {i}: {:?}", cal.views().last());
    }
    let got = cal.calibrate().unwrap();
    let c = got.camera;
    eprintln!("charuco: {c:?} rms {}", got.rms_px);
    // Nearest-neighbour rendering leaves ~0.3 px corner noise; 2 % on focal length
    // and 5 px on the centre are what six such views determine.
    assert!(((c.fx - truth.fx) / truth.fx).abs() < 0.02, "fx {}", c.fx);
    assert!((c.cx - truth.cx).abs() < 5.0 && (c.cy - truth.cy).abs() < 5.0, "{c:?}");
    assert!((c.distortion.as_brown().unwrap().k1 - truth.distortion.as_brown().unwrap().k1).abs() < 0.05, "{:?}", c.distortion);
    assert!(got.rms_px < 1.0, "rms {}", got.rms_px);
}
