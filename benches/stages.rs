//! Pipeline speed per stage on 1920x1080 frames (issue 7), one thread: undistort,
//! locate from scratch, detect with a known pose (detector built once), one
//! outline fit, a leaning washer's pose search in a hole (washer boards), the
//! rules engine on an event log, the whole `score` path with the camera and pose
//! reused, and one frame of a watched stream. Targets: the `score` path <= 10 ms per frame with
//! the pose reused, `locate` from scratch <= 300 ms (issue 13; issue 7's older aim was 100 ms).
//! Figures: BENCHMARKS.md.
//!
//! The frames are rendered at start-up from the committed scenes in
//! `fixtures/bench/` (1920x1080 re-framings of fixtures 07, 52, 16, 28 and 40:
//! every board), so the repo
//! holds no large images; the renderer is deterministic, so every run times
//! the same pixels.

use boardcall::board::Board;
use boardcall::calls::FoulLine;
use boardcall::camera::{Camera, CameraPose};
use boardcall::detect::{Detector, DetectorConfig};
use boardcall::frame::Frame;
use boardcall::geom::Footprint;
use boardcall::measure::{fit_circle, ColourView, FitConfig};
use boardcall::render::truth::truth_for;
use boardcall::score::{score_frame, PoseInput, PoseReport, Session};
use criterion::{criterion_group, criterion_main, Criterion};
use opencv::prelude::MatTraitConstManual;
use std::hint::black_box;
use std::path::Path;
use std::time::Duration;

/// One benchmark frame: the decoded image, its board, camera and true pose.
struct Bench {
    name: &'static str,
    board: Board,
    camera: Camera,
    pose: CameraPose,
    frame: Frame,
    /// A piece's true footprint and top height, for the single-fit bench.
    piece: (Footprint, f64),
    /// On a washer board, a hole with a washer down its cup and that washer's team: the leaning-pose search's
    /// subject (the detector searches a washer read flat on a cup's floor that way where the colour leaves doubt).
    cup: Option<(usize, boardcall::piece::Team)>,
}

/// Renders `fixtures/bench/NAME/scene.json` (all cores: start-up only) and decodes it as `boardcall score` would.
fn load(name: &'static str) -> Bench {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/bench").join(name);
    let ls = boardcall::render::Scene::load(&dir.join("scene.json")).expect("bench scene is valid");
    let threads = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
    let img = boardcall::render::render(&ls, threads);
    // Through a PNG file, so the frame is exactly what `boardcall score IMAGE` decodes.
    let path = std::env::temp_dir().join(format!("boardcall-bench-{name}-{}.png", std::process::id()));
    img.save(&path).expect("write the bench frame");
    let frame = Frame::load(&path).expect("decode the bench frame");
    let _ = std::fs::remove_file(&path);
    let truth = truth_for(&ls, "image.png");
    let board = Board::load(&ls.scene.board).expect("bench board");
    let camera = ls.scene.camera.intrinsics;
    let pose = CameraPose::from_rvec_tvec(truth.camera.rvec, truth.camera.tvec);
    // A piece lying flat on the playing surface, in view: the single-fit bench's subject.
    let p = truth
        .pieces
        .iter()
        .find(|p| p.pose.bottom_z_mm.abs() < 1e-6 && p.pose.tilt_deg.abs() < 1e-6 && p.in_frame)
        .expect("bench scene has a piece flat on the surface, in view");
    let cup = board.washer().and_then(|w| {
        truth.pieces.iter().filter(|p| p.pose.bottom_z_mm < 0.0).find_map(|p| Some((w.hole_enclosing(p.footprint.centre)?, p.team?)))
    });
    Bench { name, board, camera, pose, frame, piece: (p.footprint, p.pose.top_z_mm), cup }
}

fn view(frame: &Frame) -> ColourView<'_> {
    let bytes = frame.image().data_bytes().expect("continuous BGR frame");
    ColourView::new(frame.width() as usize, frame.height() as usize, bytes).expect("3-channel frame")
}

/// Short measurements: `cargo bench` stays under a few minutes and the test-mode
/// run of `cargo test --all-targets` runs each function once.
fn group<'a>(c: &'a mut Criterion, name: &str, seconds: u64) -> criterion::BenchmarkGroup<'a, criterion::measurement::WallTime> {
    let mut g = c.benchmark_group(name);
    g.sample_size(10).warm_up_time(Duration::from_millis(500)).measurement_time(Duration::from_secs(seconds));
    g
}

fn stages(c: &mut Criterion) {
    // One thread, as the targets are stated (OpenCV would otherwise use both cores in remap).
    opencv::core::set_num_threads(1).expect("OpenCV threads");
    let benches = [
        load("shuffleboard-1920x1080"),
        load("yocu-9-1920x1080"),
        load("sjoelbak-1920x1080"),
        load("holeyboard-1920x1080"),
        load("yocu-4-1920x1080"),
    ];

    let mut g = group(c, "undistort_1920x1080", 2);
    for b in &benches {
        let mut und = boardcall::undistort::Undistorter::new(b.camera, Default::default()).expect("undistorter");
        g.bench_function(b.name, |x| x.iter(|| und.run(black_box(&b.frame)).expect("undistort")));
    }
    g.finish();

    // What every scored frame pays to be read honestly (dark, washed out, grey-scale, partial, out of focus), and
    // what a frame file pays to be checked whole (strict decode and the walk of its JPEG codes) before OpenCV decodes it.
    let mut g = group(c, "frame_checks_1920x1080", 2);
    for b in &benches {
        g.bench_function(format!("{}/quality", b.name), |x| {
            x.iter(|| boardcall::frame::quality::Quality::measure(black_box(&b.frame)).expect("quality"))
        });
        let mut jpeg = opencv::core::Vector::<u8>::new();
        opencv::imgcodecs::imencode_def(".jpg", b.frame.image(), &mut jpeg).expect("encode");
        let bytes = jpeg.as_slice().to_vec();
        g.bench_function(format!("{}/load_jpeg_checked", b.name), |x| {
            x.iter(|| Frame::from_bytes(black_box(&bytes), std::path::Path::new("bench.jpg")).expect("load"))
        });
        g.bench_function(format!("{}/jpeg_code_walk", b.name), |x| x.iter(|| boardcall::frame::jpeg_scan::check(black_box(&bytes)).expect("whole")));
    }
    g.finish();

    let mut g = group(c, "locate_from_scratch_1920x1080", 5);
    for b in &benches {
        g.bench_function(b.name, |x| {
            x.iter(|| boardcall::locate::locate_frame(&b.board, &b.camera, black_box(&b.frame), Default::default()).expect("board located"))
        });
    }
    g.finish();

    let mut g = group(c, "detect_known_pose_1920x1080", 2);
    for b in &benches {
        let mut det = Detector::new(DetectorConfig::default(), &b.board, &b.camera, &b.pose).expect("detector");
        let v = view(&b.frame);
        g.bench_function(b.name, |x| x.iter(|| det.detect(black_box(&v)).expect("detect")));
    }
    g.finish();

    // Building the detector: once per camera pose (its candidate grid's projection).
    let mut g = group(c, "detector_new_per_pose", 2);
    for b in &benches {
        g.bench_function(b.name, |x| {
            x.iter(|| Detector::new(DetectorConfig::default(), &b.board, &b.camera, black_box(&b.pose)).expect("detector"))
        });
    }
    g.finish();

    let mut g = group(c, "measure_one_fit_circle", 2);
    for b in &benches {
        let v = view(&b.frame);
        let (fp, top) = b.piece;
        let cfg = FitConfig::default();
        g.bench_function(b.name, |x| {
            x.iter(|| fit_circle(black_box(&v), &b.camera, &b.pose, fp, top, false, &cfg).expect("fit"))
        });
    }
    g.finish();

    // The search over a leaning washer's poses in a hole (some 3,000 poses, each an outline's 144 lines of sight),
    // on the washer boards' frames.
    let mut g = group(c, "leaner_search_1920x1080", 2);
    for b in &benches {
        let Some((hole, team)) = b.cup else { continue };
        let det = Detector::new(DetectorConfig::default(), &b.board, &b.camera, &b.pose).expect("detector");
        let v = view(&b.frame);
        g.bench_function(b.name, |x| x.iter(|| det.measure_leaner(black_box(&v), hole, team)));
    }
    g.finish();

    let mut g = group(c, "rules_play_event_log", 2);
    for game in ["knock-off", "holeyboard", "sjoelen"] {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/events").join(format!("{game}.json"));
        let text = std::fs::read_to_string(&path).expect("event log");
        let log = boardcall::rules::EventLog::from_json(&text).expect("valid log");
        let config = boardcall::rules::GameConfig::with_options(game.parse().expect("game"), &[] as &[String]).expect("config");
        let board = Board::load(log.board.as_deref().unwrap_or(config.rules.default_board())).expect("board");
        g.bench_function(game, |x| x.iter(|| boardcall::rules::play(&config, &board, black_box(&log)).expect("play")));
    }
    g.finish();

    // The whole per-frame path of a fixed camera, as `boardcall watch` runs it
    // between pose checks: the frame is decoded, the pose and the scoring
    // session (detector with its per-pose grid, hole-state model on washer
    // boards) are reused; detect, measure, call and build the frame's report.
    let mut g = group(c, "score_pose_reused_1920x1080", 2);
    for b in &benches {
        let mut session = Session::new(&b.board, &b.camera, &b.pose, DetectorConfig::default()).expect("session");
        let pose = PoseReport::trusted(&b.pose);
        g.bench_function(b.name, |x| x.iter(|| session.report(black_box(&b.frame), pose.clone(), FoulLine::Long).expect("report")));
    }
    g.finish();

    // One frame of a live stream (`boardcall watch` with a trusted pose): the
    // session's report plus the motion check and the comparison with the
    // previous frame's state.
    let mut g = group(c, "watch_per_frame_1920x1080", 2);
    for b in &benches {
        use boardcall::watch::{PoseStart, WatchConfig, Watcher};
        let mut w = Watcher::new(&b.board, &b.camera, PoseStart::Trusted(b.pose), DetectorConfig::default(), FoulLine::Long, None, WatchConfig::default())
            .expect("watcher");
        let mut f = boardcall::frame::StreamFrame { index: 0, time_s: 0.0, frame: b.frame.clone() };
        g.bench_function(b.name, |x| {
            x.iter(|| {
                // The next frame of a 30 fps stream (the same pixels: a board at rest).
                f.index += 1;
                f.time_s = f.index as f64 / 30.0;
                w.push(black_box(&f)).expect("push")
            })
        });
    }
    g.finish();

    // `score_frame` with a given pose as the library offers it today: it builds
    // the detector (and its grid) on every call.
    let mut g = group(c, "score_frame_given_pose_1920x1080", 2);
    for b in &benches {
        g.bench_function(b.name, |x| {
            x.iter(|| {
                score_frame(black_box(&b.frame), &b.board, &b.camera, PoseInput::Given(boardcall::locate::GivenPose::new(b.pose)), DetectorConfig::default(), FoulLine::Long)
                    .expect("score")
            })
        });
    }
    g.finish();
}

criterion_group!(benches, stages);
criterion_main!(benches);
