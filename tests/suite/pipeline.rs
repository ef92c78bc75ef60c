//! Regression tests of the whole vision pipeline on the committed fixture set.
//!
//! Every fixture runs through frame -> detections -> calls -> round score with
//! the camera pose taken from the truth (localisation has its own tests in
//! `tests/suite/locate.rs`). What comes out is compared with two references:
//!
//! - the truth: every fixture's calls and round score must match it (and any
//!   fixture listed in the golden file as `right` going wrong is named as a
//!   regression);
//! - the golden file `fixtures/golden/pipeline.json`: the calls and score of
//!   every fixture as of the last accepted change, so that any change in
//!   behaviour shows up and is either fixed or accepted by regenerating with
//!   `REGENERATE=1 cargo test --release --test suite pipeline::`.

use boardcall::detect::DetectorConfig;
use boardcall::eval::{evaluate, EvalReport, PoseSource};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;

/// What is compared of one fixture: each truth piece's call as we made it, the
/// extra pieces we saw, and the round score. Footprint errors are not compared
/// to the bit, only bounded below.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Golden {
    calls: Vec<String>,
    extra: Vec<String>,
    score: Option<serde_json::Value>,
    right: bool,
    /// The largest footprint error among the correctly called pieces at
    /// heights the board fixes, mm (a washer on the ground, at a measured
    /// height, is held to its sigma instead).
    max_error_mm: f64,
}

/// Golden footprint errors are compared with this slack (mm): a different JPEG
/// decoder or float rounding moves sub-pixel edges by hundredths of a mm; a real
/// regression moves them by far more.
const ERROR_SLACK_MM: f64 = 0.25;

impl Golden {
    /// Everything but the footprint error, which is compared with slack.
    fn same_calls(&self, other: &Golden) -> bool {
        self.calls == other.calls && self.extra == other.extra && self.score == other.score && self.right == other.right
    }
}

fn golden_of(report: &EvalReport) -> BTreeMap<String, Golden> {
    report
        .results
        .iter()
        .map(|r| {
            let calls = r.pieces.iter().map(|p| format!("{} {} -> {}", p.id, p.truth_call, p.call)).collect();
            let extra = r.extra.iter().map(|e| format!("{} {}", e.id, e.call)).collect();
            let max_error_mm = r
                .pieces
                .iter()
                .filter(|p| p.call == p.truth_call && !p.height_measured)
                .filter_map(|p| p.footprint_error_mm)
                .fold(0.0f64, f64::max);
            let max_error_mm = (max_error_mm * 100.0).ceil() / 100.0;
            (r.name.clone(), Golden { calls, extra, score: r.score.clone(), right: r.all_calls_right && r.score_right, max_error_mm })
        })
        .collect()
}

#[test]
fn the_fixture_set_scores_as_accepted() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let report = evaluate(&root.join("fixtures/scenes"), PoseSource::Truth, &DetectorConfig::default()).unwrap();
    assert!(report.fixtures >= 60, "the fixture set has {} fixtures", report.fixtures);
    let now = golden_of(&report);
    let path = root.join("fixtures/golden/pipeline.json");
    if std::env::var_os("REGENERATE").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, serde_json::to_string_pretty(&now).unwrap() + "\n").unwrap();
        eprintln!("regenerated {}", path.display());
        return;
    }
    let text = std::fs::read_to_string(&path).expect("golden file (make it with REGENERATE=1)");
    let accepted: BTreeMap<String, Golden> = serde_json::from_str(&text).unwrap();
    let mut problems = Vec::new();
    for (name, was) in &accepted {
        match now.get(name) {
            None => problems.push(format!("{name}: fixture missing")),
            Some(is) if was.right && !is.right => problems.push(format!("{name}: was right, now {is:?}")),
            Some(is) if !is.same_calls(was) => problems.push(format!("{name}: changed from {was:?} to {is:?}")),
            Some(is) if is.max_error_mm > was.max_error_mm + ERROR_SLACK_MM => {
                problems.push(format!("{name}: footprint error grew from {} to {} mm", was.max_error_mm, is.max_error_mm))
            }
            _ => {}
        }
    }
    for name in now.keys().filter(|n| !accepted.contains_key(*n)) {
        problems.push(format!("{name}: new fixture, not in the golden file"));
    }
    assert!(problems.is_empty(), "{} regressions:\n{}", problems.len(), problems.join("\n"));
    // The bar: every fixture's calls and round score match its truth.
    let wrong: Vec<&String> = now.iter().filter(|(_, g)| !g.right).map(|(n, _)| n).collect();
    assert!(wrong.is_empty(), "calls or score not as the truth: {wrong:?}");
    // Measured as the bar is put (PCS over the frames whose every margin exceeds a pixel;
    // no wrong round without review); most of the set's frames are such.
    assert!(report.clear_fixtures * 4 >= report.fixtures * 3, "{} of {} fixtures with every margin over a pixel", report.clear_fixtures, report.fixtures);
    assert!(report.pcs_clear_percent > 99.0, "{:.1} %", report.pcs_clear_percent);
    assert_eq!(report.confident_wrong_rounds, 0);
}

/// The bar for every footprint at a height the board fixes: the median
/// error within half a mm, none beyond 2 mm (measured with the truth pose:
/// median 0.09 mm, worst 1.47 mm, a leaner; the worst was 2.6 mm before
/// stacked washers in a cup were measured as a stack). A washer on the ground
/// beside the board lies at a depth the rules leave open, measured from its
/// size (issue 14, item 6): its error must be within three of its sigmas.
const MEDIAN_ERROR_MM: f64 = 0.5;
const MAX_ERROR_MM: f64 = 2.0;

#[test]
fn every_footprint_is_placed_within_the_bar() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let report = evaluate(&root.join("fixtures/scenes"), PoseSource::Truth, &DetectorConfig::default()).unwrap();
    let stats = &report.footprint_error_mm;
    assert!(stats.count >= 300, "only {} pieces matched", stats.count);
    assert!(stats.median <= MEDIAN_ERROR_MM, "median footprint error {:.2} mm", stats.median);
    let far: Vec<String> = report
        .results
        .iter()
        .flat_map(|r| r.pieces.iter().map(move |p| (r, p)))
        .filter(|(_, p)| !p.height_measured && p.footprint_error_mm.is_some_and(|e| e > MAX_ERROR_MM))
        .map(|(r, p)| format!("{} {}: {:.2} mm", r.name, p.id, p.footprint_error_mm.unwrap()))
        .collect();
    assert!(far.is_empty(), "footprints beyond {MAX_ERROR_MM} mm: {far:?}");
    let m = report.measured_height;
    assert!(m.count > 0, "the fixtures have washers on the ground beside the board");
    assert_eq!(m.within, m.count, "pieces at a measured height whose error exceeds 3 sigma");
}

/// A leaner is measured by its leaning pose, not a flat outline: on the
/// fixtures every leaner lies within this of its true centre (measured: at
/// most 1.85 mm, median 0.15 mm; a flat fit of a tilted washer is off by 20 mm
/// and more), and within three of its reported sigmas (its sigma is the edge
/// fit's, which must be honest).
const LEANER_MAX_ERROR_MM: f64 = 2.0;

#[test]
fn leaners_are_called_and_placed() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let report = evaluate(&root.join("fixtures/scenes"), PoseSource::Truth, &DetectorConfig::default()).unwrap();
    let leaners: Vec<_> = report.results.iter().flat_map(|r| r.pieces.iter().filter(|p| p.truth_call == "leaner").map(move |p| (r.name.clone(), p))).collect();
    assert!(leaners.len() >= 10, "the fixture set has {} leaners", leaners.len());
    let called = leaners.iter().filter(|(_, p)| p.call == "leaner").count();
    assert_eq!(called, leaners.len(), "{called} of {} leaners called", leaners.len());
    for (name, p) in leaners.iter().filter(|(_, p)| p.call == "leaner") {
        let e = p.footprint_error_mm.unwrap();
        assert!(e <= LEANER_MAX_ERROR_MM, "{name}: {} placed {e:.1} mm from its centre", p.id);
        let sigma = p.sigma_mm.unwrap();
        assert!(e <= boardcall::score::REVIEW_SIGMAS * sigma, "{name}: {} placed {e:.2} mm from its centre, sigma {sigma:.2} mm", p.id);
    }
}

/// The learned component proposes, geometry decides (issue 14, item 5): without the hole model, the detector alone
/// must tell leaners from washers lying flat. A washer's outline fitted flat on the surface with its centre over a
/// hole cannot rest there and is measured by its leaning pose; one fitted flat on a cup's floor is put against the
/// leaning pose measured in that hole, by which explains the colour seen round the hole. Before, the classical
/// detector called 8 of the 13 fixture leaners `in`, four of them confidently (one 18 mm off); now every leaner is
/// called a leaner and placed as the model path places it, and no call is confidently wrong.
#[test]
fn without_the_hole_model_geometry_tells_the_leaners() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let classical = DetectorConfig { hole_model: false, ..DetectorConfig::default() };
    let report = evaluate(&root.join("fixtures/scenes"), PoseSource::Truth, &classical).unwrap();
    let leaners: Vec<_> = report.results.iter().flat_map(|r| r.pieces.iter().filter(|p| p.truth_call == "leaner").map(move |p| (r.name.clone(), p))).collect();
    assert!(leaners.len() >= 10, "the fixture set has {} leaners", leaners.len());
    let called: Vec<_> = leaners.iter().filter(|(_, p)| p.call == "leaner").collect();
    assert_eq!(called.len(), leaners.len(), "leaners called without the hole model");
    for (name, p) in &called {
        let e = p.footprint_error_mm.unwrap();
        assert!(e <= LEANER_MAX_ERROR_MM, "{name}: {} placed {e:.1} mm from its centre", p.id);
    }
    assert_eq!(report.confident_wrong, 0, "calls confidently wrong without the hole model");
    assert_eq!(report.confident_wrong_rounds, 0);
}

/// A call that is wrong must be flagged: on the whole fixture set, no piece
/// is called wrong (or seen where there is none) in a frame that does not
/// need review.
#[test]
fn no_call_is_confidently_wrong() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let report = evaluate(&root.join("fixtures/scenes"), PoseSource::Truth, &DetectorConfig::default()).unwrap();
    let wrong: Vec<String> = report
        .results
        .iter()
        .filter(|r| !r.needs_review)
        .flat_map(|r| {
            let pieces = r.pieces.iter().filter(|p| !p.review && p.call != p.truth_call).map(move |p| format!("{}: {} {} -> {}", r.name, p.id, p.truth_call, p.call));
            let extra = r.extra.iter().filter(|e| !e.review).map(move |e| format!("{}: extra {} {}", r.name, e.id, e.call));
            pieces.chain(extra).collect::<Vec<_>>()
        })
        .collect();
    assert!(wrong.is_empty(), "confidently wrong:\n{}", wrong.join("\n"));
    assert_eq!(report.confident_wrong, 0);
}

/// The reported sigma is honest: a call is flagged for review within 3 sigma
/// of its boundary, so measured margins must rarely be further than that from
/// the truth. Normal errors exceed 3 sigma 0.3 % of the time; 3 % allows for
/// the small samples per board (38 to 94 margins) without hiding a sigma that
/// is too small (before washers carried their outline's bias, 13-23 % did).
const MAX_BEYOND_3_SIGMA: f64 = 0.03;

#[test]
fn margin_uncertainty_is_honest() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let report = evaluate(&root.join("fixtures/scenes"), PoseSource::Truth, &DetectorConfig::default()).unwrap();
    let mut by_board: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    for r in &report.results {
        // Pieces decided by a tilt or a hole (in, leaner) or off the board have no
        // positional margin worth the name; the rest are measured by position.
        for p in r.pieces.iter().filter(|p| p.call == p.truth_call && !matches!(p.truth_call.as_str(), "in" | "leaner" | "off")) {
            let (Some(m), Some(s)) = (p.margin_mm, p.sigma_mm) else { continue };
            let e = by_board.entry(r.board.clone()).or_default();
            e.0 += 1;
            e.1 += usize::from((m - p.truth_margin_mm).abs() > 3.0 * s);
        }
    }
    for (board, (n, beyond)) in &by_board {
        let frac = *beyond as f64 / *n as f64;
        assert!(frac <= MAX_BEYOND_3_SIGMA, "{board}: {beyond} of {n} margins are more than 3 sigma from the truth");
    }
    assert_eq!(by_board.len(), 5, "every board measured: {by_board:?}");
}

/// The varied set (tables built and lit as we did not tune for, whole-board
/// views at up to 5 mm a pixel, fisheye lenses), true pose: at most this share
/// of footprints may lie beyond 3 reported sigmas of the truth. A normal error
/// would leave 0.3 %; today 1 of 241 (0.4 %), where the fit's sigma alone, with
/// no allowance for its edges' sub-pixel bias, left 8.7 % (`score::EDGE_BIAS_PX`).
const MAX_FOOTPRINTS_BEYOND_3_SIGMA: f64 = 0.03;

#[test]
fn footprint_sigma_covers_the_error_on_the_varied_tables() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let report = evaluate(&root.join("fixtures/varied"), PoseSource::Truth, &DetectorConfig::default()).unwrap();
    let (mut n, mut beyond) = (0usize, Vec::new());
    for r in &report.results {
        for p in &r.pieces {
            let (Some(e), Some(s)) = (p.footprint_error_mm, p.sigma_mm) else { continue };
            n += 1;
            if e > 3.0 * s {
                beyond.push(format!("{} {}: {e:.2} mm, sigma {s:.2} mm", r.name, p.id));
            }
        }
    }
    assert!(n >= 200, "only {n} footprints measured");
    assert!(beyond.len() as f64 <= MAX_FOOTPRINTS_BEYOND_3_SIGMA * n as f64, "{} of {n} footprints beyond 3 sigma: {beyond:?}", beyond.len());
}

mod bad_input {
    use boardcall::board::Board;
    use boardcall::detect::DetectorConfig;
    use boardcall::fixture::Fixture;
    use boardcall::frame::{Frame, FrameError};
    use boardcall::locate::LocateConfig;
    use boardcall::score::{score_frame, PoseInput, ScoreError};
    use boardcall::calls::FoulLine;
    use std::path::Path;

    fn fixture(name: &str) -> Fixture {
        Fixture::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/scenes").join(name)).unwrap()
    }

    fn score(f: &Fixture, frame: &Frame, pose: PoseInput) -> Result<boardcall::score::FrameReport, ScoreError> {
        let board = Board::load(&f.truth.board).unwrap();
        score_frame(frame, &board, &f.camera, pose, DetectorConfig::default(), FoulLine::Long).map(|(r, _)| r)
    }

    #[test]
    fn a_corrupt_image_is_a_clear_error() {
        let dir = std::env::temp_dir().join(format!("boardcall-corrupt-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("broken.jpg");
        let good = std::fs::read(fixture("00-shuffleboard-22ft-plain").image_path()).unwrap();
        std::fs::write(&path, &good[..200]).unwrap();
        let e = Frame::load(&path).unwrap_err();
        assert!(matches!(e, FrameError::Corrupt { .. }), "{e}");
        std::fs::remove_dir_all(&dir).ok();
    }

    /// A frame of the right size with no board in it: an even grey floor with noise.
    fn floor_like(f: &Fixture) -> Frame {
        use opencv::core::{Mat, Scalar, CV_8UC3};
        let (w, h) = (f.camera.image_width as i32, f.camera.image_height as i32);
        let mut img = Mat::new_rows_cols_with_default(h, w, CV_8UC3, Scalar::all(95.0)).unwrap();
        let mut noise = Mat::new_rows_cols_with_default(h, w, CV_8UC3, Scalar::all(0.0)).unwrap();
        opencv::core::randn(&mut noise, &Scalar::all(0.0), &Scalar::all(6.0)).unwrap();
        let mut out = Mat::default();
        opencv::core::add_def(&img, &noise, &mut out).unwrap();
        img = out;
        Frame::from_mat(img).unwrap()
    }

    #[test]
    fn a_frame_without_a_board_is_refused_not_scored() {
        let f = fixture("40-yocu-4-plain");
        let e = score(&f, &floor_like(&f), PoseInput::Locate(LocateConfig::default())).unwrap_err();
        assert!(matches!(&e, ScoreError::Locate(l) if l.is_refusal()), "{e}");
    }

    #[test]
    fn a_covered_board_with_a_saved_pose_is_refused_not_scored() {
        // The camera's saved pose is right, but the board is covered (a cloth,
        // the floor): checking the pose against the frame must refuse.
        let f = fixture("00-shuffleboard-22ft-plain");
        let pose = f.truth.camera.pose();
        let e = score(&f, &floor_like(&f), PoseInput::Given(boardcall::locate::GivenPose::new(pose))).unwrap_err();
        assert!(matches!(&e, ScoreError::Locate(l) if l.is_refusal()), "{e}");
    }

    #[test]
    fn a_frame_of_another_board_is_refused_not_scored() {
        // The operator names the wrong board: its outline may fit part of the real
        // board's edges, but its lines, holes or gate bar do not confirm it.
        for (name, wrong) in [
            ("00-shuffleboard-22ft-plain", "holeyboard"),
            ("33-holeyboard-plain", "yocu-9"),
            ("33-holeyboard-plain", "sjoelbak"),
            ("16-sjoelbak-plain", "yocu-4"),
        ] {
            let f = fixture(name);
            let frame = Frame::load(&f.image_path()).unwrap();
            let board = Board::load(wrong).unwrap();
            let e = score_frame(&frame, &board, &f.camera, PoseInput::Locate(LocateConfig::default()), DetectorConfig::default(), FoulLine::Long)
                .map(|(r, _)| r.pieces.len())
                .unwrap_err();
            assert!(matches!(&e, ScoreError::Locate(l) if l.is_refusal()), "{name} as {wrong}: {e}");
        }
    }

    #[test]
    fn a_frame_of_the_wrong_size_is_a_clear_error() {
        let f = fixture("00-shuffleboard-22ft-plain");
        let other = fixture("16-sjoelbak-plain");
        let mut cam_f = f.clone();
        cam_f.camera.image_width += 2;
        let frame = Frame::load(&other.image_path()).unwrap();
        let e = score(&cam_f, &frame, PoseInput::Locate(LocateConfig::default())).unwrap_err();
        assert!(matches!(e, ScoreError::FrameSize { .. }), "{e}");
    }
}
