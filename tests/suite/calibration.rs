//! Calibration on OpenCV's real chessboard and ChArUco photos against OpenCV's own reference results, synthetic ChArUco
//! and chessboard views, and the refusals: degenerate view sets, patterns OpenCV cannot use, bounded search time.

use boardcall::calibrate::{CalibrateConfig, CalibrateError, Calibrator, Pattern};
use boardcall::camera::{Camera, CameraPose, Distortion};
use boardcall::frame::Frame;
use boardcall::geom::BoardPoint3;
use std::path::{Path, PathBuf};

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/opencv-chessboard").join(name)
}

fn charuco_data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/opencv-charuco").join(name)
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

/// Issue 12 item 5, problem 1: the same photo given three times "succeeded" (fx 817, fy 772, k1 -0.67).
#[test]
fn the_same_photo_three_times_is_refused_as_duplicates() {
    let mut cal = Calibrator::new("chessboard:9x6:25".parse().unwrap(), CalibrateConfig::default()).unwrap();
    let frame = Frame::load(&data("left01.jpg")).unwrap();
    for name in ["a.jpg", "b.jpg", "c.jpg"] {
        assert!(cal.add_view(name, &frame).unwrap());
    }
    match cal.calibrate() {
        Err(CalibrateError::DuplicateViews { distinct, duplicates, names, .. }) => {
            assert_eq!((distinct, duplicates), (1, 2));
            assert_eq!(names, "b.jpg, c.jpg");
        }
        other => panic!("expected a refusal for duplicates, got {other:?}"),
    }
}

/// Duplicates are dropped with a note when enough distinct views remain; the
/// result is the one without them (OpenCV's reference).
#[test]
fn duplicates_are_dropped_when_enough_distinct_views_remain() {
    let reference = Camera::load(&data("left_intrinsics.yml")).unwrap();
    let cfg = CalibrateConfig { fix_aspect_ratio: true, ..Default::default() };
    let mut cal = Calibrator::new("chessboard:9x6:25".parse().unwrap(), cfg).unwrap();
    for name in PHOTOS {
        cal.add_view(name, &Frame::load(&data(name)).unwrap()).unwrap();
    }
    cal.add_view("left01-again.jpg", &Frame::load(&data("left01.jpg")).unwrap()).unwrap();
    let got = cal.calibrate().unwrap();
    assert_eq!(got.views.iter().filter(|v| v.used).count(), 13);
    let again = got.views.iter().find(|v| v.name == "left01-again.jpg").unwrap();
    assert!(!again.used && again.reprojection_error_px.is_none());
    let why = again.rejected.as_deref().unwrap();
    assert!(why.contains("near-duplicate of left01.jpg"), "{why}");
    assert!(((got.camera.fx - reference.fx) / reference.fx).abs() < FOCAL_REL_TOL, "fx {}", got.camera.fx);
    eprintln!("tilt spread of OpenCV's 13 photos: {:.1} degrees", got.tilt_spread_deg);
}

/// A chessboard drawn through a known camera (principal point at the image centre) at a pose.
fn render_chessboard(cam: &Camera, pose: &CameraPose, cols: u32, rows: u32, square: f64) -> opencv::core::Mat {
    use opencv::prelude::*;
    let (w, h) = (cam.image_width as i32, cam.image_height as i32);
    let mut img = opencv::core::Mat::new_rows_cols_with_default(h, w, opencv::core::CV_8UC3, opencv::core::Scalar::all(255.0)).unwrap();
    // Squares from -1 to cols (a white margin beyond): inner corners at 0..cols-1 squares.
    for v in 0..h {
        for u in 0..w {
            let px = boardcall::geom::PixelPoint::new(u as f64, v as f64);
            if let Some(b) = pose.back_project(cam, px, 0.0) {
                let (i, j) = ((b.x_mm / square).floor() as i64, (b.y_mm / square).floor() as i64);
                if (-1..cols as i64).contains(&i) && (-1..rows as i64).contains(&j) && (i + j).rem_euclid(2) == 0 {
                    *img.at_2d_mut::<opencv::core::Vec3b>(v, u).unwrap() = opencv::core::Vec3b::from([30, 30, 30]);
                }
            }
        }
    }
    img
}

/// Problem 1's second half: views that differ only by where the board is, not
/// how it is turned, cannot give the focal length and are refused; the same
/// renderer with the board tilted differently per view calibrates.
#[test]
fn views_of_one_plane_orientation_are_refused() {
    let truth = Camera {
        image_width: 640,
        image_height: 480,
        fx: 600.0,
        fy: 600.0,
        cx: 319.5,
        cy: 239.5,
        distortion: Distortion::NONE,
    };
    let (cols, rows, square) = (9, 6, 25.0);
    let cfg = CalibrateConfig { zero_tangent: true, fix_k3: true, ..Default::default() };
    let calibrate = |poses: &[([f64; 3], [f64; 3])]| {
        let mut cal = Calibrator::new(format!("chessboard:{cols}x{rows}:{square}").parse().unwrap(), cfg).unwrap();
        for (i, (r, t)) in poses.iter().enumerate() {
            let img = render_chessboard(&truth, &CameraPose::from_rvec_tvec(*r, *t), cols, rows, square);
            assert!(cal.add_view(&format!("view{i}"), &Frame::from_mat(img).unwrap()).unwrap(), "view {i}");
        }
        cal.calibrate()
    };
    // One orientation (tilted 15 degrees), the board moved about and nearer.
    let tilt = [0.26, 0.0, 0.0];
    let parallel = [(tilt, [-120.0, -80.0, 500.0]), (tilt, [-60.0, -40.0, 430.0]), (tilt, [-140.0, -20.0, 560.0]), (tilt, [-80.0, -90.0, 470.0])];
    match calibrate(&parallel) {
        Err(CalibrateError::TooLittleTilt { spread_deg, views, .. }) => {
            assert_eq!(views, 4);
            eprintln!("parallel views: tilt spread {spread_deg:.3} degrees");
            assert!(spread_deg < 1.0, "parallel planes read {spread_deg} degrees apart");
        }
        other => panic!("expected a refusal for parallel views, got {other:?}"),
    }
    // The same positions with the board turned differently in each view.
    let varied = [
        ([0.26, 0.0, 0.0], [-120.0, -80.0, 500.0]),
        ([-0.2, 0.25, 0.0], [-60.0, -40.0, 430.0]),
        ([0.1, -0.3, 0.1], [-140.0, -20.0, 560.0]),
        ([-0.25, -0.1, -0.1], [-80.0, -90.0, 470.0]),
    ];
    let got = calibrate(&varied).unwrap();
    assert!(got.tilt_spread_deg > 20.0, "{}", got.tilt_spread_deg);
    assert!(((got.camera.fx - truth.fx) / truth.fx).abs() < 0.02, "fx {}", got.camera.fx);
}

/// Deterministic uniform noise (xorshift), BGR.
fn noise(width: i32, height: i32) -> opencv::core::Mat {
    use opencv::prelude::*;
    let mut m = opencv::core::Mat::new_rows_cols_with_default(height, width, opencv::core::CV_8UC3, opencv::core::Scalar::all(0.0)).unwrap();
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    for b in m.data_bytes_mut().unwrap() {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        *b = (x >> 24) as u8;
    }
    m
}

/// Problem 2: a 1920x1080 noise image took ~6 s per view for a chessboard (the
/// search ran at full size); it is now searched at 1024x576 and rejected fast.
/// The ChArUco search is bounded too.
#[test]
fn a_noise_image_is_rejected_in_well_under_a_few_seconds() {
    /// Generous for a busy shared machine: measured ~0.2 s (chessboard) and ~0.3 s (ChArUco) when idle.
    const BUDGET_S: f64 = 2.0;
    let frame = Frame::from_mat(noise(1920, 1080)).unwrap();
    for spec in ["chessboard:9x6:25", "chessboard:100x100:5", "charuco:5x7:40:20"] {
        let mut cal = Calibrator::new(spec.parse().unwrap(), CalibrateConfig::default()).unwrap();
        let t = std::time::Instant::now();
        assert!(!cal.add_view("noise", &frame).unwrap(), "{spec}");
        let s = t.elapsed().as_secs_f64();
        eprintln!("{spec}: noise view rejected in {s:.3} s");
        assert!(s < BUDGET_S, "{spec}: {s} s");
    }
}

/// Large images: searched at reduced scale, refined at full resolution. OpenCV's
/// 13 photos enlarged 2.5x (1600x1200) calibrate to 2.5x OpenCV's reference.
#[test]
fn large_images_are_searched_at_reduced_scale_and_refined_at_full_resolution() {
    use opencv::core::{Mat, Size};
    let scale = 2.5;
    let reference = Camera::load(&data("left_intrinsics.yml")).unwrap();
    let cfg = CalibrateConfig { fix_aspect_ratio: true, ..Default::default() };
    let mut cal = Calibrator::new("chessboard:9x6:25".parse().unwrap(), cfg).unwrap();
    for name in PHOTOS {
        let small = Frame::load(&data(name)).unwrap();
        let mut big = Mat::default();
        opencv::imgproc::resize(small.image(), &mut big, Size::new(1600, 1200), 0.0, 0.0, opencv::imgproc::INTER_CUBIC).unwrap();
        assert!(cal.add_view(name, &Frame::from_mat(big).unwrap()).unwrap(), "{name}");
    }
    let got = cal.calibrate().unwrap();
    let c = got.camera;
    eprintln!("2.5x photos: fx {:.3} (2.5 x ref {:.3}) cx {:.3} cy {:.3} rms {:.4} px", c.fx, scale * reference.fx, c.cx, c.cy, got.rms_px);
    // 1 %, not 0.5 %: on enlarged photos the refinement window covers a different share of each (blurred) square
    // than the sample's 11 px did at 640x480, and that alone moves fx by -0.58 % (measured on the photos enlarged
    // 1.6x, 1024x768, which are searched at full resolution); enlarged 2.5x and searched at 1024x768: -0.59 %.
    const ENLARGED_FOCAL_REL_TOL: f64 = 0.01;
    assert!(((c.fx - scale * reference.fx) / (scale * reference.fx)).abs() < ENLARGED_FOCAL_REL_TOL, "fx {}", c.fx);
    // Pixel centres: x_big = (x + 0.5) * 2.5 - 0.5.
    assert!((c.cx - ((reference.cx + 0.5) * scale - 0.5)).abs() < scale * CENTRE_TOL_PX, "cx {}", c.cx);
    assert!((c.cy - ((reference.cy + 0.5) * scale - 0.5)).abs() < scale * CENTRE_TOL_PX, "cy {}", c.cy);
    assert!(got.rms_px <= scale * MAX_RMS_PX, "rms {}", got.rms_px);
}

/// Problem 3: `chessboard:2x2` reached OpenCV and came back as a raw
/// "Both width and height of the pattern should have bigger than 2" error; it
/// is refused when parsed, and the smallest accepted board runs without OpenCV errors.
#[test]
fn patterns_opencv_cannot_use_are_refused_when_parsed() {
    for spec in ["chessboard:2x2:25", "chessboard:2x9:25", "charuco:1000x1000:40:20", "charuco:2x2:40:20"] {
        match spec.parse::<Pattern>() {
            Err(CalibrateError::Pattern { problem, .. }) => eprintln!("{spec}: {problem}"),
            other => panic!("{spec}: {other:?}"),
        }
    }
    let mut cal = Calibrator::new("chessboard:3x3:25".parse().unwrap(), CalibrateConfig::default()).unwrap();
    for name in &PHOTOS[..3] {
        // A 9x6 board contains 3x3 corner blocks; whether found or not, no OpenCV error.
        cal.add_view(name, &Frame::load(&data(name)).unwrap()).unwrap();
    }
}

/// Issue 13 item 7: OpenCV's four real ChArUco photos (5x7 squares, 40 / 20 mm,
/// DICT_6X6_250) against the calibration OpenCV's sample computed from them
/// (flags 0, 5 coefficients): fx and fy within 1.5 %.
#[test]
fn real_charuco_photos_reproduce_opencvs_reference_calibration() {
    /// The bar.
    const CHARUCO_FOCAL_REL_TOL: f64 = 0.015;
    let reference = Camera::load(&charuco_data("tutorial_camera_charuco.yml")).unwrap();
    let mut cal = Calibrator::new("charuco:5x7:40:20:DICT_6X6_250".parse().unwrap(), CalibrateConfig::default()).unwrap();
    for name in ["img_00.jpg", "img_01.jpg", "img_02.jpg", "img_03.jpg"] {
        assert!(cal.add_view(name, &Frame::load(&charuco_data(name)).unwrap()).unwrap(), "{name}: {:?}", cal.views().last());
    }
    let got = cal.calibrate().unwrap();
    let c = &got.camera;
    eprintln!(
        "charuco photos: fx {:.3} (ref {:.3}, {:+.2} %) fy {:.3} (ref {:.3}, {:+.2} %) cx {:.2} ({:.2}) cy {:.2} ({:.2}) rms {:.4} px, \
         corners {:?}, tilt spread {:.1} deg",
        c.fx,
        reference.fx,
        100.0 * (c.fx - reference.fx) / reference.fx,
        c.fy,
        reference.fy,
        100.0 * (c.fy - reference.fy) / reference.fy,
        c.cx,
        reference.cx,
        c.cy,
        reference.cy,
        got.rms_px,
        got.views.iter().map(|v| v.corners).collect::<Vec<_>>(),
        got.tilt_spread_deg
    );
    assert_eq!(got.views.iter().filter(|v| v.used).count(), 4);
    assert!(((c.fx - reference.fx) / reference.fx).abs() < CHARUCO_FOCAL_REL_TOL, "fx {} vs {}", c.fx, reference.fx);
    assert!(((c.fy - reference.fy) / reference.fy).abs() < CHARUCO_FOCAL_REL_TOL, "fy {} vs {}", c.fy, reference.fy);
    // OpenCV's sample reports 0.182 px on these photos.
    assert!(got.rms_px < 0.3, "rms {}", got.rms_px);
}
