//! The long-running scorer on streams of rendered frames: each settled state
//! reported once with the score the truth gives it, frames in motion never
//! reported, a covered board lost and found again, a hand over the board
//! (moving, or held still) never reported as the board's state, a lamp's glare
//! the empty board showed taken as the board's own until the image there
//! changes, and the `watch` command on a real video file (OpenCV's MJPEG AVI
//! writer and reader).
//!
//! The frames are rendered from fixture 33 (a HoleyBoard, eight washers, one
//! in a cup): state A is the scene as committed, state B the same scene with
//! the washer in the cup taken out (red's 3 points gone).

use boardcall::board::Board;
use boardcall::calls::FoulLine;
use boardcall::camera::Camera;
use boardcall::detect::DetectorConfig;
use boardcall::frame::{Frame, StreamFrame};
use boardcall::piece::Team;
use boardcall::render::scene::LoadedScene;
use boardcall::render::Scene;
use boardcall::score::RoundScoring;
use boardcall::watch::{PoseStart, WatchConfig, WatchEvent, Watcher};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

const SCENE: &str = "fixtures/scenes/33-holeyboard-plain";
/// The washer lying in a cup in state A.
const IN_THE_CUP: &str = "red#2";
/// The stream's nominal frame rate.
const FPS: f64 = 10.0;

/// A rendered state: its frame and the points each side scores in it (the truth's).
struct State {
    frame: Frame,
    points: serde_json::Value,
}

struct Stream {
    board: Board,
    camera: Camera,
    a: State,
    b: State,
    /// The board covered (a blank frame).
    covered: Frame,
    /// Where the washer in the cup is in the image (pixels).
    cup_px: (f64, f64),
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn render_state(ls: &LoadedScene, name: &str) -> State {
    let frame = render_state_frame(ls, name);
    let truth = boardcall::render::truth::truth_for(ls, "image.png");
    let points = truth.round_score.expect("round score")["holeyboard"]["rounds"][0]["points"].clone();
    State { frame, points }
}

/// Rendered once for all tests (about a second a frame).
fn stream() -> &'static Stream {
    static STREAM: OnceLock<Stream> = OnceLock::new();
    STREAM.get_or_init(|| {
        let ls = Scene::load(&root().join(SCENE).join("scene.json")).expect("fixture scene");
        let a = render_state(&ls, "a");
        let mut without = ls.clone();
        without.scene.pieces.retain(|p| p.id.to_string() != IN_THE_CUP);
        assert_eq!(without.scene.pieces.len() + 1, ls.scene.pieces.len(), "{IN_THE_CUP} is in the scene");
        let b = render_state(&without, "b");
        assert_ne!(a.points, b.points, "the two states score differently");
        let covered = Frame::from_mat(
            opencv::core::Mat::new_rows_cols_with_default(
                ls.scene.camera.intrinsics.image_height as i32,
                ls.scene.camera.intrinsics.image_width as i32,
                opencv::core::CV_8UC3,
                opencv::core::Scalar::new(40.0, 60.0, 90.0, 0.0),
            )
            .expect("blank frame"),
        )
        .expect("frame");
        let truth = boardcall::render::truth::truth_for(&ls, "image.png");
        let cup = truth.pieces.iter().find(|p| p.id.to_string() == IN_THE_CUP).expect("the washer in the cup").image_centre.expect("in view");
        Stream { board: ls.board.clone(), camera: ls.scene.camera.intrinsics, a, b, covered, cup_px: (cup.u, cup.v) }
    })
}

/// Frame `base` with a hand (skin-coloured palm and four fingers) over the
/// washer in the cup and an arm reaching in from the frame's right edge,
/// `shift` pixels to the left of its first place.
fn with_hand(s: &Stream, base: &Frame, shift: i32) -> Frame {
    use opencv::core::{Point, Scalar, Size, Vector};
    use opencv::imgproc;
    let mut img = base.image().clone();
    let (cx, cy) = (s.cup_px.0 as i32 - shift, s.cup_px.1 as i32);
    let w = s.camera.image_width as i32;
    let skin = Scalar::new(120.0, 150.0, 205.0, 0.0); // BGR
    let arm: Vector<Point> = [(cx - 70, cy - 60), (cx + 40, cy - 80), (w + 10, cy - 150), (w + 10, cy + 40), (cx + 40, cy + 70), (cx - 60, cy + 60)]
        .into_iter()
        .map(|(x, y)| Point::new(x, y))
        .collect();
    let mut polys: Vector<Vector<Point>> = Vector::new();
    polys.push(arm);
    imgproc::fill_poly_def(&mut img, &polys, skin).expect("draw the arm");
    for k in 0..4 {
        let centre = Point::new(cx - 85, cy - 45 + 30 * k);
        imgproc::ellipse_def(&mut img, centre, Size::new(45, 11), 0.0, 0.0, 360.0, skin).expect("draw a finger");
    }
    Frame::from_mat(img).expect("frame")
}

fn watcher(s: &Stream, cfg: WatchConfig) -> Watcher {
    let game = RoundScoring { rules: "holeyboard".parse().expect("game"), options: Vec::new(), first: Team::Red };
    Watcher::new(&s.board, &s.camera, PoseStart::Locate, DetectorConfig::default(), FoulLine::Long, Some(game), cfg).expect("watcher")
}

/// Runs frames through a watcher; every event with the frame it came at.
fn run(w: &mut Watcher, frames: &[&Frame]) -> Vec<WatchEvent> {
    frames
        .iter()
        .enumerate()
        .flat_map(|(i, f)| {
            let sf = StreamFrame { index: i as u64, time_s: i as f64 / FPS, frame: (*f).clone() };
            w.push(&sf).expect("push")
        })
        .collect()
}

fn settled_points(events: &[WatchEvent]) -> Vec<(u64, serde_json::Value)> {
    events
        .iter()
        .filter_map(|e| match e {
            WatchEvent::Settled { frame, report, .. } => {
                assert!(!report.needs_review, "frame {frame} needs review: {:?}", report.review_reasons);
                Some((*frame, report.score.as_ref().expect("round score")["rounds"][0]["points"].clone()))
            }
            _ => None,
        })
        .collect()
}

#[test]
fn each_settled_state_is_reported_once_with_its_score() {
    let s = stream();
    let mut w = watcher(s, WatchConfig::default());
    let frames = [&s.a.frame, &s.a.frame, &s.a.frame, &s.a.frame, &s.b.frame, &s.b.frame, &s.b.frame, &s.b.frame, &s.b.frame];
    let events = run(&mut w, &frames);
    assert!(matches!(events.first(), Some(WatchEvent::BoardFound { frame: 0, .. })), "{events:?}");
    // Settled after SETTLE_FRAMES agreeing frames: A at its third frame, B at its third (frame 6).
    assert_eq!(settled_points(&events), vec![(2, s.a.points.clone()), (6, s.b.points.clone())]);
    assert!(!events.iter().any(|e| matches!(e, WatchEvent::BoardLost { .. } | WatchEvent::Unscored { .. })), "{events:?}");
}

#[test]
fn frames_in_motion_are_not_reported() {
    let s = stream();
    let mut w = watcher(s, WatchConfig::default());
    // The state changes every frame: nothing ever settles.
    let frames = [&s.a.frame, &s.b.frame, &s.a.frame, &s.b.frame, &s.a.frame, &s.b.frame];
    let events = run(&mut w, &frames);
    assert!(settled_points(&events).is_empty(), "{events:?}");
    // Once it stops changing, it is reported.
    let mut w = watcher(s, WatchConfig { settle_frames: 2, ..WatchConfig::default() });
    let events = run(&mut w, &[&s.a.frame, &s.b.frame, &s.a.frame, &s.a.frame]);
    assert_eq!(settled_points(&events), vec![(3, s.a.points.clone())]);
}

#[test]
fn a_covered_board_is_lost_then_found_and_an_unchanged_state_not_repeated() {
    let s = stream();
    // Check the pose on every frame; retry at once when the board is gone.
    let cfg = WatchConfig { recheck_s: 0.0, relocate_s: 0.0, ..WatchConfig::default() };
    let mut w = watcher(s, cfg);
    let a = &s.a.frame;
    let frames = [a, a, a, &s.covered, &s.covered, a, a, a, a];
    let events = run(&mut w, &frames);
    // Lost once at the first covered frame (not again at the second), found again at
    // the next clear one; state A settles again after it but is not reported twice.
    assert_eq!(kinds(&events), vec![("found", 0), ("settled", 2), ("lost", 3), ("found", 5)]);
}

/// A sjoelbak built unlike its board file (varied fixture 11: walls 70 mm high where the file says 50), seen whole
/// and still: found in the first frame and checked on every frame after it, it is never lost. Checked from the
/// nominal build, the refit of the session's own pose slid to a reading whose gate bar does not confirm, and the
/// board was "lost" at every check and found again from scratch; the check now starts from the construction
/// fitted with the pose.
#[test]
fn a_board_built_unlike_its_file_is_not_lost_when_its_pose_is_checked() {
    let dir = root().join("fixtures/varied/11-sjoelbak-plain-whole-brown");
    let fx = boardcall::fixture::Fixture::load(&dir).expect("fixture");
    let board = Board::load(&fx.truth.board).expect("board");
    let frame = Frame::load(&fx.image_path()).expect("frame");
    let cfg = WatchConfig { recheck_s: 0.0, relocate_s: 0.0, settle_frames: 2, ..WatchConfig::default() };
    let mut w = Watcher::new(&board, &fx.camera, PoseStart::Locate, DetectorConfig::default(), FoulLine::Long, None, cfg).expect("watcher");
    let frames = [&frame, &frame, &frame, &frame];
    let events = run(&mut w, &frames);
    assert_eq!(kinds(&events), vec![("found", 0), ("settled", 1)], "{events:?}");
}

/// Each event as (kind, frame).
fn kinds(events: &[WatchEvent]) -> Vec<(&'static str, u64)> {
    events
        .iter()
        .map(|e| match e {
            WatchEvent::BoardFound { frame, .. } => ("found", *frame),
            WatchEvent::PoseMoved { frame, .. } => ("moved", *frame),
            WatchEvent::BoardLost { frame, .. } => ("lost", *frame),
            WatchEvent::Settled { frame, .. } => ("settled", *frame),
            WatchEvent::Unscored { frame, .. } => ("unscored", *frame),
            WatchEvent::End { frames, .. } => ("end", *frames),
        })
        .collect()
}

#[test]
fn a_hand_moving_over_the_board_is_never_reported() {
    let s = stream();
    let mut w = watcher(s, WatchConfig::default());
    let a = &s.a.frame;
    // The hand hides the washer in the cup (red's 3 points) while it moves.
    let hands: Vec<Frame> = (0..4).map(|k| with_hand(s, a, 4 * k)).collect();
    let frames = [a, a, a, &hands[0], &hands[1], &hands[2], &hands[3], a, a, a];
    let events = run(&mut w, &frames);
    // A is reported; nothing while the hand moves; A again once it is gone is not new.
    assert_eq!(kinds(&events), vec![("found", 0), ("settled", 2)], "{events:?}");
}

#[test]
fn a_still_hand_over_the_board_is_refused_not_scored() {
    let s = stream();
    let mut w = watcher(s, WatchConfig { relocate_s: 0.0, ..WatchConfig::default() });
    let a = &s.a.frame;
    let hand = with_hand(s, a, 0);
    let frames = [a, a, a, &hand, &hand, &hand, &hand, a, a, a, a];
    let events = run(&mut w, &frames);
    // The hand held still settles a state without the washer in the cup; the board
    // check before it is reported finds the hole hidden: lost, found again once the
    // hand is gone, and A (unchanged) not reported twice.
    assert_eq!(kinds(&events), vec![("found", 0), ("settled", 2), ("lost", 5), ("found", 7)], "{events:?}");
}

/// Own scene 16 (a sjoelbak under a hard lamp whose glare on the wood reads as 7 discs' worth of disc colour by the
/// gate) watched with its true pose: the empty board, then one disc thrown into compartment 1 away from the glare
/// (the camera's exposure drifted 6 % down meanwhile), then a mark in the glare that no outline explains (a smudge of 8 pixels, darker by 40 levels: what a disc hidden
/// there would change at least). The empty board is reported with its patch for review; with the disc, the patch,
/// in an image unchanged round it, is the board's own (`standing`) and the state needs no review; with the mark it
/// is unexplained again and the state needs review.
#[test]
fn a_lamps_glare_seen_on_the_empty_board_holds_nothing_until_the_image_there_changes() {
    use boardcall::geom::{BoardPoint, BoardPoint3};
    use opencv::prelude::{MatExprTraitConst, MatTraitConst};
    let dir = root().join("fixtures/scenes/16-sjoelbak-plain");
    let mut ls = Scene::load(&dir.join("scene.json")).expect("fixture scene");
    let first = ls.scene.pieces[0].clone();
    ls.scene.pieces.clear();
    let empty = render_state_frame(&ls, "glare-empty");
    ls.scene.pieces = vec![boardcall::render::scene::PieceSpec { x_mm: -150.0, y_mm: 45.0, ..first }];
    let disc = render_state_frame(&ls, "glare-disc");
    // The camera's exposure drifted 6 % down since the empty board (a webcam's automatic exposure).
    let mut dimmer = opencv::core::Mat::default();
    disc.image().convert_to(&mut dimmer, -1, 0.94, 0.0).expect("dim");
    let disc = Frame::from_mat(dimmer).expect("frame");
    let camera = ls.scene.camera.intrinsics;
    let mut w = Watcher::new(&ls.board, &camera, PoseStart::Trusted(ls.pose), DetectorConfig::default(), FoulLine::Long, None, WatchConfig::default())
        .expect("watcher");
    let settled = |events: Vec<WatchEvent>| -> Vec<boardcall::score::FrameReport> {
        events.into_iter().filter_map(|e| if let WatchEvent::Settled { report, .. } = e { Some(*report) } else { None }).collect()
    };
    let push_all = |w: &mut Watcher, frames: &[&Frame], from: u64| -> Vec<WatchEvent> {
        frames.iter().enumerate().flat_map(|(i, f)| w.push(&StreamFrame { index: from + i as u64, time_s: (from + i as u64) as f64 / FPS, frame: (*f).clone() }).expect("push")).collect()
    };
    let on_empty = settled(push_all(&mut w, &[&empty; 4], 0));
    assert_eq!(on_empty.len(), 1, "the empty board settles once");
    let e = &on_empty[0];
    assert!(e.pieces.is_empty() && e.needs_review, "{:?}", e.review_reasons);
    let glare = e.unexplained.iter().max_by(|a, b| a.area_mm2.total_cmp(&b.area_mm2)).expect("the lamp's glare reads as disc colour");
    let glare_centre = BoardPoint::new(glare.centre.x_mm, glare.centre.y_mm);
    let with_disc = settled(push_all(&mut w, &[&disc; 4], 4));
    assert_eq!(with_disc.len(), 1, "the thrown disc settles once");
    let d = &with_disc[0];
    assert_eq!(d.pieces.len(), 1, "{:?}", d.pieces);
    assert!(d.unexplained.is_empty() && !d.standing.is_empty(), "unexplained {:?}, standing {:?}", d.unexplained, d.standing);
    assert!(!d.needs_review, "{:?}", d.review_reasons);
    // A smudge in the glare, a third of a patch's reach from its centre.
    let reach = (glare.area_mm2 / std::f64::consts::PI).sqrt();
    let at = BoardPoint3::new(glare_centre.x_mm + reach / 3.0, glare_centre.y_mm, 0.0);
    let px = ls.pose.project(&camera, at).expect("the glare is in view");
    let mut img = disc.image().clone();
    let mut spot = opencv::core::Mat::default();
    opencv::core::subtract_def(&img, &opencv::core::Scalar::all(40.0), &mut spot).expect("darken");
    let mut mask = opencv::core::Mat::zeros(img.rows(), img.cols(), opencv::core::CV_8UC1).expect("mask").to_mat().expect("mask");
    opencv::imgproc::circle(&mut mask, opencv::core::Point::new(px.u.round() as i32, px.v.round() as i32), 8, opencv::core::Scalar::all(255.0), -1, opencv::imgproc::LINE_8, 0).expect("spot");
    spot.copy_to_masked(&mut img, &mask).expect("smudge");
    let smudged = Frame::from_mat(img).expect("frame");
    let with_smudge = settled(push_all(&mut w, &[&smudged; 4], 8));
    assert_eq!(with_smudge.len(), 1, "the smudged board settles once");
    let m = &with_smudge[0];
    assert!(m.standing.is_empty() && !m.unexplained.is_empty() && m.needs_review, "unexplained {:?}, standing {:?}", m.unexplained, m.standing);
}

/// `ls` rendered, written to a scratch PNG named for `name` and read back as a frame.
fn render_state_frame(ls: &LoadedScene, name: &str) -> Frame {
    let threads = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
    let img = boardcall::render::render(ls, threads);
    let path = std::env::temp_dir().join(format!("boardcall-watch-{name}-{}.png", std::process::id()));
    img.save(&path).expect("write the frame");
    let frame = Frame::load(&path).expect("decode the frame");
    let _ = std::fs::remove_file(&path);
    frame
}

#[test]
fn bad_settings_and_frames_are_errors() {
    let s = stream();
    let game = None;
    let bad = WatchConfig { every: 0, ..WatchConfig::default() };
    assert!(Watcher::new(&s.board, &s.camera, PoseStart::Locate, DetectorConfig::default(), FoulLine::Long, game, bad).is_err());
    let mut w = watcher(s, WatchConfig::default());
    let small = Frame::from_mat(
        opencv::core::Mat::new_rows_cols_with_default(10, 10, opencv::core::CV_8UC3, opencv::core::Scalar::all(0.0)).expect("mat"),
    )
    .expect("frame");
    let e = w.push(&StreamFrame { index: 0, time_s: 0.0, frame: small }).unwrap_err();
    assert!(e.to_string().contains("10x10"), "{e}");
}

#[test]
fn the_watch_command_reads_a_video_file() {
    use opencv::prelude::*;
    use opencv::videoio::{VideoWriter, VideoWriterTrait};
    let s = stream();
    let dir = std::env::temp_dir().join(format!("boardcall-watch-video-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let video = dir.join("match.avi");
    let size = opencv::core::Size::new(s.camera.image_width as i32, s.camera.image_height as i32);
    // OpenCV's own MJPEG AVI writer: no codec library needed.
    let fourcc = VideoWriter::fourcc('M', 'J', 'P', 'G').expect("fourcc");
    let mut writer = VideoWriter::new_with_backend(video.to_str().expect("path"), opencv::videoio::CAP_OPENCV_MJPEG, fourcc, FPS, size, true)
        .expect("video writer");
    assert!(writer.is_opened().expect("opened"), "OpenCV cannot write {}", video.display());
    for f in [&s.a.frame, &s.a.frame, &s.a.frame, &s.b.frame, &s.b.frame, &s.b.frame] {
        writer.write(f.image()).expect("write a frame");
    }
    writer.release().expect("close the video");
    let camera_file = root().join(SCENE).join("camera.yaml");
    let pictures = dir.join("settled");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_boardcall"))
        .args(["watch", video.to_str().unwrap(), "--board", "holeyboard", "--game", "holeyboard", "--camera", camera_file.to_str().unwrap()])
        .args(["--annotate", pictures.to_str().unwrap()])
        .output()
        .expect("run boardcall watch");
    // One annotated frame per settled state, named by its frame.
    let mut drawn: Vec<String> = std::fs::read_dir(&pictures).map(|d| d.filter_map(|e| e.ok()).map(|e| e.file_name().to_string_lossy().into_owned()).collect()).unwrap_or_default();
    drawn.sort();
    let _ = std::fs::remove_dir_all(&dir);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let lines: Vec<serde_json::Value> =
        String::from_utf8_lossy(&out.stdout).lines().map(|l| serde_json::from_str(l).expect("one JSON object a line")).collect();
    let events: Vec<&str> = lines.iter().map(|l| l["event"].as_str().expect("event")).collect();
    assert_eq!(events, ["board_found", "settled", "settled", "end"], "{lines:?}");
    assert_eq!(lines[1]["report"]["score"]["rounds"][0]["points"], s.a.points);
    assert_eq!(lines[2]["report"]["score"]["rounds"][0]["points"], s.b.points);
    assert_eq!(lines[3]["frames"], 6);
    let settled_at: Vec<String> = lines.iter().filter(|l| l["event"] == "settled").map(|l| format!("frame-{:06}.png", l["frame"].as_u64().unwrap())).collect();
    assert_eq!(drawn, settled_at);
    // A source that cannot be opened is invalid input (exit 3).
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_boardcall"))
        .args(["watch", "no-such-video.avi", "--board", "holeyboard", "--camera", "fixtures/scenes/33-holeyboard-plain/camera.yaml"])
        .current_dir(Path::new(env!("CARGO_MANIFEST_DIR")))
        .output()
        .expect("run boardcall watch");
    assert_eq!(out.status.code(), Some(3), "{}", String::from_utf8_lossy(&out.stderr));
}
