//! No assumed floor (issue 14, item 6): a washer on the ground beside a washer
//! board lies at a depth the rules do not fix. A YOCU box rendered standing
//! 160 mm high (the built-in board's nominal is 100 mm) with a washer fallen
//! beside it: read with the built-in board, the washer is called `off` without
//! review, placed at the height its size measures, and its reported sigma covers
//! its real error. A shuffleboard's gutter is as deep as its maker built it: weights
//! in a gutter deeper than the built-in board's are `off` with a sigma that covers
//! where they lie.
use crate::common;
use boardcall::board::ConstructionKeys;
use boardcall::calls::FoulLine;
use boardcall::detect::{DetectorConfig, MeasuredBy};
use boardcall::frame::Frame;
use boardcall::geom::BoardPoint;
use boardcall::render::Scene;
use boardcall::score::{score_frame, PoseInput, REVIEW_SIGMAS};
use std::path::Path;

/// A committed YOCU scene with one red washer (`red#1`) on the ground beyond the board's far end.
const FIXTURE: &str = "41-yocu-4-plain";
/// How high the rendered box stands (mm): 60 mm more than the built-in board says.
const STAND_MM: f64 = 160.0;
/// The measured height is worth something: its sigma stays below this (mm).
/// An unmeasured depth (anywhere from the cups' 76 mm to a metre) would be
/// hundreds of mm along this camera's line of sight.
const MAX_HONEST_SIGMA_MM: f64 = 40.0;

#[test]
fn a_washer_on_a_deeper_ground_is_off_and_its_sigma_covers_its_error() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/scenes").join(FIXTURE);
    let text = std::fs::read_to_string(dir.join("scene.json")).expect("scene");
    let mut scene = Scene::from_json(&text, FIXTURE).expect("scene parses");
    scene.construction = Some(ConstructionKeys { stand_height_mm: Some(STAND_MM), ..Default::default() });
    let washer = scene.pieces.iter_mut().find(|p| p.id.to_string() == "red#1").expect("red#1 in the scene");
    // Flat on the ground: its centre half a washer's thickness up.
    washer.z_mm = Some(-STAND_MM + 1.6);
    let truth = BoardPoint::new(washer.x_mm, washer.y_mm);
    let ls = scene.validate(FIXTURE).expect("valid scene");
    let img = boardcall::render::render(&ls, 2);
    let scratch = common::scratch("ground_height", "deep");
    let path = scratch.join("image.png");
    img.save(&path).expect("write the frame");
    let camera = boardcall::fixture::Fixture::load(&dir).expect("fixture").camera;
    let board = boardcall::board::Board::load("yocu-4").expect("built-in board");
    let frame = Frame::load(&path).expect("frame");
    let (report, _) = score_frame(&frame, &board, &camera, PoseInput::Trusted(ls.pose), DetectorConfig::default(), FoulLine::Long).expect("scored");
    let p = report
        .pieces
        .iter()
        .filter(|p| p.call == "off")
        .min_by(|a, b| BoardPoint::new(a.x_mm, a.y_mm).distance(truth).total_cmp(&BoardPoint::new(b.x_mm, b.y_mm).distance(truth)))
        .unwrap_or_else(|| panic!("no washer called off: {:?}", report.pieces));
    let error = BoardPoint::new(p.x_mm, p.y_mm).distance(truth);
    assert_eq!(p.measured_by, MeasuredBy::HeightFromSize, "{p:?}");
    assert!(!p.review, "its height puts it off the board, wherever on the ground: {p:?}");
    assert!(error <= REVIEW_SIGMAS * p.sigma_mm, "error {error:.1} mm beyond {REVIEW_SIGMAS} sigma ({:.1} mm): {p:?}", p.sigma_mm);
    assert!(p.sigma_mm < MAX_HONEST_SIGMA_MM, "{p:?}");
    // Its height is measured, not the board's nominal 100 mm: its top lies well below that.
    assert!(p.top_z_mm < -120.0, "top at {:.1} mm: {p:?}", p.top_z_mm);
}

/// Varied scene 08 (a 22 ft table whose gutters are 55.8 mm deep; the built-in board says 38.1) with two weights in
/// the gutter, scored with its true pose: each is called `off` and its reported sigma covers its real error (read at
/// the built-in depth it lay 4.6-5.3 mm off with a sigma of 0.1 mm).
#[test]
fn weights_in_a_deeper_gutter_are_off_and_their_sigma_covers_their_error() {
    let (f, _, report) = common::scored_with_true_pose(Path::new("fixtures/varied/08-shuffleboard-22ft-gutter-end-brown"));
    let in_gutter: Vec<_> = f.truth.pieces.iter().filter(|t| t.pose.top_z_mm < 0.0).collect();
    assert_eq!(in_gutter.len(), 2, "the fixture's two weights in the gutter");
    for t in in_gutter {
        let c = t.footprint.centre;
        let near = |p: &&boardcall::score::PieceReport| BoardPoint::new(p.x_mm, p.y_mm).distance(c);
        let p = report.pieces.iter().filter(|p| p.team == t.team).min_by(|a, b| near(a).total_cmp(&near(b))).unwrap_or_else(|| panic!("{} not read: {:?}", t.id, report.pieces));
        let error = BoardPoint::new(p.x_mm, p.y_mm).distance(c);
        assert_eq!(p.call, "off", "{p:?}");
        assert!(error <= REVIEW_SIGMAS * p.sigma_mm, "{}: error {error:.1} mm beyond {REVIEW_SIGMAS} sigma ({:.1} mm): {p:?}", t.id, p.sigma_mm);
    }
}
