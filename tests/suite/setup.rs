//! `boardcall setup` on rendered frames from known cameras, no chessboard: the focal length and the board's
//! reprojection against the truth, automatically and from four typed points, and refusals where a frame cannot
//! fix the camera.

use crate::common;
use boardcall::board::Board;
use boardcall::camera::{Camera, CameraPose, LensModel};
use boardcall::fixture::Fixture;
use boardcall::frame::Frame;
use boardcall::geom::{BoardPoint3, PixelPoint};
use boardcall::locate::{BoardModel, Correspondence};
use boardcall::setup::{self, CameraSetup, SetupConfig, SetupError};
use std::path::Path;

/// The bars: automatic set-up within 2 % of the true focal length and 1 px of the board's true image;
/// from four typed points, 5 % and 2 px.
const AUTO_FOCAL: f64 = 0.02;
const AUTO_PX: f64 = 1.0;
const POINTS_FOCAL: f64 = 0.05;
const POINTS_PX: f64 = 2.0;

fn fixture(dir: &str) -> (Fixture, Board, Frame) {
    let (f, frame, board) = common::scene_at(Path::new(dir));
    (f, board, frame)
}

/// The board's key points (surface corners, line ends, hole centres) the true camera sees in the frame.
fn visible(board: &Board, cam: &Camera, pose: &CameraPose) -> Vec<(BoardPoint3, PixelPoint)> {
    BoardModel::new(board)
        .key_points
        .iter()
        .filter_map(|(_, p)| {
            let px = pose.project(cam, *p)?;
            let inside = px.u >= 0.0 && px.v >= 0.0 && px.u <= cam.image_width as f64 - 1.0 && px.v <= cam.image_height as f64 - 1.0;
            inside.then_some((*p, px))
        })
        .collect()
}

/// The largest distance between where the truth and the set-up put the visible key points, px.
fn board_error_px(board: &Board, truth_cam: &Camera, truth: &CameraPose, est: &CameraSetup) -> f64 {
    visible(board, truth_cam, truth)
        .into_iter()
        .map(|(p, px)| est.poses[0].pose.project(&est.camera, p).map_or(f64::INFINITY, |q| q.distance(px)))
        .fold(0.0, f64::max)
}

/// Four surface points a user would type: of the visible key points on the surface, the four spanning the largest
/// quadrilateral in the image, at whole pixels (as read off an image viewer).
fn typed_points(board: &Board, cam: &Camera, pose: &CameraPose) -> Vec<Correspondence> {
    let pts: Vec<(BoardPoint3, PixelPoint)> = visible(board, cam, pose).into_iter().filter(|(p, _)| p.z_mm.abs() < 1e-9).collect();
    let tri = |a: PixelPoint, b: PixelPoint, c: PixelPoint| ((b.u - a.u) * (c.v - a.v) - (c.u - a.u) * (b.v - a.v)).abs() / 2.0;
    let mut best = (0.0, [0usize; 4]);
    let n = pts.len();
    for i in 0..n {
        for j in i + 1..n {
            for k in j + 1..n {
                for l in k + 1..n {
                    let [a, b, c, d] = [i, j, k, l].map(|x| pts[x].1);
                    // The convex hull of four points: half the sum of the four triangles' areas bounds it tightly enough to rank.
                    let area = (tri(a, b, c) + tri(a, c, d) + tri(a, b, d) + tri(b, c, d)) / 2.0;
                    if area > best.0 {
                        best = (area, [i, j, k, l]);
                    }
                }
            }
        }
    }
    assert!(best.0 > 0.0, "four key points in view");
    best.1.iter().map(|&i| Correspondence { board: pts[i].0, pixel: PixelPoint::new(pts[i].1.u.round(), pts[i].1.v.round()) }).collect()
}

fn check(dir: &str, cfg: SetupConfig, typed: bool, max_focal: f64, max_px: f64) {
    let (f, board, frame) = fixture(dir);
    let (cam, truth) = (f.camera, f.truth.camera.pose());
    let points = typed.then(|| typed_points(&board, &cam, &truth));
    let est = setup::setup(&board, std::slice::from_ref(&frame), points.as_deref(), &cfg).unwrap();
    let focal_err = (est.camera.fx - cam.fx).abs() / cam.fx;
    let px = board_error_px(&board, &cam, &truth, &est);
    assert!(focal_err <= max_focal, "{dir}: fx {:.1} vs true {:.1} ({:.2} %)", est.camera.fx, cam.fx, 100.0 * focal_err);
    assert!(px <= max_px, "{dir}: the board reprojects {px:.2} px from its true image");
    assert!(est.focal_sigma_px > 0.0 && est.focal_sigma_px.is_finite(), "{dir}: sigma {}", est.focal_sigma_px);
}

#[test]
fn a_brown_lens_is_set_up_from_a_holeyboard_frame_alone() {
    check("fixtures/scenes/33-holeyboard-plain", SetupConfig::default(), false, AUTO_FOCAL, AUTO_PX);
}

#[test]
fn a_brown_lens_is_set_up_from_four_typed_points() {
    check("fixtures/scenes/33-holeyboard-plain", SetupConfig::default(), true, POINTS_FOCAL, POINTS_PX);
}


#[test]
fn points_seen_square_on_do_not_fix_the_focal_length() {
    let (_, board, frame) = fixture("fixtures/scenes/33-holeyboard-plain");
    // A board seen square on maps to the image by a similarity: every focal length explains it (from its own distance).
    let pts: Vec<Correspondence> = [(-300.0, 100.0), (300.0, 100.0), (300.0, 900.0), (-300.0, 900.0)]
        .iter()
        .map(|&(x, y)| Correspondence { board: BoardPoint3::new(x, y, 0.0), pixel: PixelPoint::new(640.0 + 0.4 * x, 100.0 + 0.4 * y) })
        .collect();
    let err = setup::setup(&board, std::slice::from_ref(&frame), Some(&pts), &SetupConfig::default()).unwrap_err();
    assert!(matches!(err, SetupError::PointsUnconstrained { .. }), "{err}");
    assert!(err.is_refusal());
}

#[test]
fn typed_points_need_exactly_one_frame() {
    let (f, board, frame) = fixture("fixtures/scenes/33-holeyboard-plain");
    let pts = typed_points(&board, &f.camera, &f.truth.camera.pose());
    let err = setup::setup(&board, &[frame.clone(), frame], Some(&pts), &SetupConfig::default()).unwrap_err();
    assert!(matches!(err, SetupError::PointsNeedOneFrame { frames: 2 }), "{err}");
    assert!(matches!(setup::setup(&board, &[], None, &SetupConfig::default()).unwrap_err(), SetupError::NoFrames));
}

/// A fisheye's focal length and k1 trade off along a valley that one frame of a board does not close (measured:
/// the joint fit refuses); its focal length alone, the lens taken as equidistant, is set up from typed points.
#[test]
fn an_equidistant_fisheye_is_set_up_from_four_typed_points() {
    let cfg = SetupConfig { lens: LensModel::Fisheye, distortion: false, ..SetupConfig::default() };
    check("fixtures/varied/19-holeyboard-plain-whole-fisheye", cfg, true, POINTS_FOCAL, POINTS_PX);
}

/// Frames of one camera from several places (`fixtures/setup/NAME/frame-N`, those numbered `given`): the set-up
/// camera against the true one (the focal length, the principal point against its sigmas) and every frame used's
/// board against its true image. Returns the set-up.
fn check_frames(set: &str, given: &[usize], cfg: SetupConfig, max_focal: f64, max_px: f64) -> CameraSetup {
    let loaded: Vec<(Fixture, Board, Frame)> = given.iter().map(|i| fixture(&format!("fixtures/setup/{set}/frame-{i}"))).collect();
    let frames: Vec<Frame> = loaded.iter().map(|(_, _, f)| f.clone()).collect();
    let (board, cam) = (&loaded[0].1, loaded[0].0.camera);
    let est = setup::setup(board, &frames, None, &cfg).unwrap();
    let focal_err = (est.camera.fx - cam.fx).abs() / cam.fx;
    assert!(focal_err <= max_focal, "{set}: fx {:.1} vs true {:.1} ({:.2} %)", est.camera.fx, cam.fx, 100.0 * focal_err);
    // Three frames at different slants fix the principal point: measured, and said so.
    let [sx, sy] = est.principal_point_sigma_px.expect("the principal point estimated from three frames");
    assert!(sx > 0.0 && sy > 0.0 && sx.is_finite() && sy.is_finite(), "{set}: sigmas {sx} {sy}");
    // Within three of its sigmas, and at least a pixel (the frames' own edges are good to a few tenths).
    let (dx, dy) = (est.camera.cx - cam.cx, est.camera.cy - cam.cy);
    assert!(dx.abs() <= (3.0 * sx).max(1.0) && dy.abs() <= (3.0 * sy).max(1.0), "{set}: principal point off by ({dx:.1}, {dy:.1}) px, sigmas ({sx:.1}, {sy:.1})");
    assert!(est.assumptions.iter().any(|a| a.contains("principal point estimated from 3 frames")), "{:?}", est.assumptions);
    assert!(!est.assumptions.iter().any(|a| a.contains("principal point at the image centre")), "{:?}", est.assumptions);
    assert_eq!(est.poses.len(), est.frames_used.len());
    for (pose, &k) in est.poses.iter().zip(&est.frames_used) {
        let (f, board, _) = &loaded[k];
        let px = visible(board, &cam, &f.truth.camera.pose())
            .into_iter()
            .map(|(p, px)| pose.pose.project(&est.camera, p).map_or(f64::INFINITY, |q| q.distance(px)))
            .fold(0.0, f64::max);
        // The figures docs/camera.md quotes (`-- --nocapture`).
        eprintln!("{set} frame {}: the board within {px:.2} px of its true image", given[k]);
        assert!(px <= max_px, "{set} frame {}: the board reprojects {px:.2} px from its true image", given[k]);
    }
    eprintln!(
        "{set}: fx {:.2} vs true {:.2} ({:+.2} %), principal point ({:.1}, {:.1}) vs true ({:.1}, {:.1}), sigmas ({sx:.1}, {sy:.1}) px",
        est.camera.fx,
        cam.fx,
        100.0 * (est.camera.fx - cam.fx) / cam.fx,
        est.camera.cx,
        est.camera.cy,
        cam.cx,
        cam.cy
    );
    est
}

/// The automatic bar for a fisheye (2 % and 1 px), met from three frames of one camera: one frame leaves
/// the focal length and k1 along a valley (`an_equidistant_fisheye_is_set_up_from_four_typed_points`), three at
/// different slants close it, and fix the principal point besides (8.5 px off the centre in this camera).
/// Measured: fx +1.2 %, the principal point within 2 px, the boards within 0.6, 1.0 and 1.0 px.
///
/// Given a fourth frame the board is not confirmed in, the set-up leaves it out, and says so with the reason, rather
/// than refusing: the set's frame 3, whose target end glare hides (`locate` refuses it even with the true camera).
/// The camera is then the other three's (`setup` from frames 0-2 alone writes the same JSON). One test for both:
/// the set-up from four frames sets up from the three again, and a test of them alone cost the suite 30 s more.
#[test]
fn a_fisheye_is_set_up_from_three_frames_and_a_fourth_the_board_is_not_confirmed_in_is_left_out() {
    let est = check_frames("holeyboard-fisheye", &[0, 1, 2, 3], SetupConfig { lens: LensModel::Fisheye, ..SetupConfig::default() }, AUTO_FOCAL, AUTO_PX);
    assert_eq!(est.frames_used, [0, 1, 2]);
    assert_eq!(est.frames_left_out.len(), 1, "{:?}", est.frames_left_out);
    let left = &est.frames_left_out[0];
    assert!(left.index == 3 && left.reason.contains("frame 3"), "{left:?}");
}

/// The same view given twice is one measurement, not two: the repeat is left out, said so, and the camera is the
/// one frame's, its sigma not divided by the square root of two (19.5 px either way; counted twice it was 13.8).
#[test]
fn a_repeated_view_is_left_out_not_counted_twice() {
    let (_, board, frame) = fixture("fixtures/setup/holeyboard-brown/frame-0");
    let once = setup::setup(&board, std::slice::from_ref(&frame), None, &SetupConfig::default()).unwrap();
    let twice = setup::setup(&board, &[frame.clone(), frame], None, &SetupConfig::default()).unwrap();
    assert_eq!(twice.frames_used, [0]);
    assert_eq!(twice.frames_left_out.len(), 1, "{:?}", twice.frames_left_out);
    let left = &twice.frames_left_out[0];
    assert!(left.index == 1 && left.reason.contains("repeats the view of frame 0"), "{left:?}");
    // The same estimate, to rounding.
    assert!((twice.camera.fx - once.camera.fx).abs() < 1e-6 * once.camera.fx, "fx {} vs {}", twice.camera.fx, once.camera.fx);
    assert!((twice.focal_sigma_px - once.focal_sigma_px).abs() < 1e-6 * once.focal_sigma_px, "sigma {} vs {}", twice.focal_sigma_px, once.focal_sigma_px);
}

/// A set-up refused after frames were left out says which, and why, before the refusal itself: two frames with no
/// board in them (a plain grey wall), the first left out, the second refused, both named.
#[test]
fn a_refusal_after_leaving_out_frames_names_them() {
    let (_, board, _) = fixture("fixtures/setup/holeyboard-brown/frame-0");
    let grey = |level: f64| Frame::from_mat(opencv::core::Mat::new_rows_cols_with_default(960, 1280, opencv::core::CV_8UC3, opencv::core::Scalar::all(level)).unwrap()).unwrap();
    let err = setup::setup(&board, &[grey(128.0), grey(90.0)], None, &SetupConfig::default()).unwrap_err();
    assert!(err.is_refusal(), "{err}");
    let SetupError::AfterLeavingOut { left_out, source } = &err else { panic!("not the refusal after leaving out: {err}") };
    assert_eq!(left_out.len(), 1, "{left_out:?}");
    assert!(left_out[0].index == 0 && left_out[0].reason.contains("frame 0"), "{left_out:?}");
    assert!(matches!(**source, SetupError::BoardNotFound { index: 1, .. }), "{source}");
    let text = err.to_string();
    assert!(text.starts_with("refused after leaving out frame 0 ("), "{text}");
}

/// A Brown lens from three frames: the focal length closer than any one frame gives it (-0.6 %, +1.7 %, +1.8 %
/// alone; +0.3 % together), the principal point measured (9 px off the centre in x in this camera).
#[test]
fn a_brown_lens_is_set_up_from_three_frames() {
    check_frames("holeyboard-brown", &[0, 1, 2], SetupConfig::default(), AUTO_FOCAL, AUTO_PX);
}

/// A known focal length (a phone's or webcam's specification) is held, not estimated: typed points then give the
/// pose alone (as `locate --points`), even for a board seen square on, which could not fix the focal length.
#[test]
fn a_given_focal_length_is_held_and_typed_points_give_the_pose() {
    let (f, board, frame) = fixture("fixtures/scenes/33-holeyboard-plain");
    let (cam, truth) = (f.camera, f.truth.camera.pose());
    let cfg = SetupConfig { distortion: false, focal_px: Some(cam.fx), ..SetupConfig::default() };
    let pts = typed_points(&board, &cam, &truth);
    let est = setup::setup(&board, std::slice::from_ref(&frame), Some(&pts), &cfg).unwrap();
    // Held exactly: the given value is copied, not estimated.
    assert!((est.camera.fx - cam.fx).abs() < 1e-9, "fx {} vs given {}", est.camera.fx, cam.fx);
    assert!(est.focal_sigma_px.abs() < 1e-12);
    assert!(est.assumptions.iter().any(|a| a.contains("focal length given")), "{:?}", est.assumptions);
    // The points are whole pixels, the true lens mildly distorted and its principal point off-centre: the issue's
    // typed-points bar.
    let px = board_error_px(&board, &cam, &truth, &est);
    assert!(px <= POINTS_PX, "the board reprojects {px:.2} px from its true image");
    // Typed points carry their own uncertainty into the pose (at least a pixel each).
    let sigma = est.poses[0].position_sigma_mm;
    assert!(sigma.is_finite() && sigma > 0.0, "sigma {sigma}");

    // Square on (from above: image right along +x, image up along +y): every focal length explains the points, so
    // the given one decides.
    let square: Vec<Correspondence> = [(-300.0, 100.0), (300.0, 100.0), (300.0, 900.0), (-300.0, 900.0)]
        .iter()
        .map(|&(x, y)| Correspondence { board: BoardPoint3::new(x, y, 0.0), pixel: PixelPoint::new(640.0 + 0.4 * x, 500.0 - 0.4 * y) })
        .collect();
    let est = setup::setup(&board, std::slice::from_ref(&frame), Some(&square), &SetupConfig { focal_px: Some(1000.0), ..cfg }).unwrap();
    // 0.4 px per mm at 1000 px focal length: the board 2500 mm from the camera.
    let height = est.poses[0].pose.centre().z_mm;
    assert!((height - 2500.0).abs() < 1.0, "camera {height:.1} mm above the board");

    // A focal length no camera has is refused before anything is fitted with it.
    for absurd in [1e-3, 1e12] {
        let err = setup::setup(&board, std::slice::from_ref(&frame), Some(&pts), &SetupConfig { focal_px: Some(absurd), ..cfg }).unwrap_err();
        assert!(matches!(err, SetupError::FocalLength { .. }), "{absurd}: {err}");
        assert!(!err.is_refusal());
    }
}
