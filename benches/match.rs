//! `match` speed on a 1920x1080 video at 30 fps with the pose known, one thread: the
//! whole path (MJPEG decode, motion check, detection of every scored frame, the
//! tracker and the rules engine), scoring every frame and every 3rd and 5th (the
//! frames not scored are skipped undecoded).
//! Target: >= 3x real time at 30 fps (<= 11.1 ms a frame). Figures: BENCHMARKS.md.
//!
//! The video is rendered at start-up (a YOCU-9 half round on the committed 1920x1080
//! bench scene `fixtures/bench/yocu-9-1920x1080`, one ray a pixel) and written as
//! an MJPEG AVI, as a camera recording would be read back.

use boardcall::frame::FrameSource;
use boardcall::game::{Match, MatchConfig, Tracker};
use boardcall::piece::{PieceId, PieceKind};
use boardcall::render::scene::PieceSpec;
use boardcall::render::video::{render_game, GameScript, Step};
use boardcall::rules::{EventLog, Rules};
use boardcall::watch::{PoseStart, WatchConfig, Watcher};
use criterion::{criterion_group, criterion_main, Criterion};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The recorded video's frame rate: a common camera's.
const FPS: f64 = 30.0;
/// Each still frame of the script's 10 fps video is shown this many times at 30 fps.
const REPEAT: usize = 3;

fn washer(id: &str, x_mm: f64, y_mm: f64, z_mm: Option<f64>) -> PieceSpec {
    PieceSpec { id: id.parse::<PieceId>().unwrap(), kind: PieceKind::Washer, x_mm, y_mm, z_mm, tilt_deg: 0.0, tilt_towards_deg: 0.0 }
}

struct Video {
    path: PathBuf,
    frames: usize,
    v: boardcall::render::video::GameVideo,
}

fn video() -> Video {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/bench/yocu-9-1920x1080");
    let mut ls = boardcall::render::Scene::load(&dir.join("scene.json")).expect("bench scene");
    ls.scene.pieces.clear();
    ls.scene.supersample = 1;
    let mut header = EventLog::new("yocu-9");
    header.first = Some("red".into());
    let throw = |t: &str, p: PieceSpec| Step::Throw { thrower: t.into(), piece: p, knocks: vec![] };
    let steps = vec![
        // A washer flat on the floor of the 3 (cup 76 mm deep, washer 3.2 mm thick).
        throw("red", washer("red#1", 6.0, 730.0, Some(-74.4))),
        throw("red", washer("red#2", 150.0, 820.0, None)),
        Step::Hand,
        throw("red", washer("red#3", -160.0, 620.0, None)),
        throw("red", washer("red#4", 40.0, 1150.0, None)),
    ];
    let script = GameScript { scene: ls, scale: 1.0, header, steps };
    let threads = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
    let mut v = render_game(&script, threads).expect("render the bench video");
    // The script's still spells are 10 fps: each still frame shown 3 times makes them a
    // 30 fps recording's (the frames of motion stay single: a quick slide).
    let same = |a: &opencv::core::Mat, b: &opencv::core::Mat| opencv::core::norm2_def(a, b).expect("norm") == 0.0;
    let n = v.frames.len();
    let still: Vec<bool> = (0..n).map(|i| (i > 0 && same(&v.frames[i], &v.frames[i - 1])) || (i + 1 < n && same(&v.frames[i], &v.frames[i + 1]))).collect();
    v.frames = v.frames.iter().zip(&still).flat_map(|(f, s)| std::iter::repeat_n(f.clone(), if *s { REPEAT } else { 1 })).collect();
    v.fps = FPS;
    let path = std::env::temp_dir().join(format!("boardcall-bench-match-{}.avi", std::process::id()));
    v.write_avi(&path).expect("write the bench video");
    Video { path, frames: v.frames.len(), v }
}

/// A match ready to read the video from its start (set-up: not timed; it is once per match).
fn start(video: &Video, every: u64) -> (Match, FrameSource) {
    let cfg = MatchConfig {
        rules: Rules::Yocu9,
        options: vec![],
        board: "yocu-9".into(),
        first: Some("red".into()),
        players: vec![],
        start_scores: Default::default(),
    };
    let wcfg = WatchConfig { every, ..WatchConfig::default() };
    let watcher = Watcher::new(&video.v.board, &video.v.camera, PoseStart::Trusted(video.v.pose), Default::default(), boardcall::calls::FoulLine::Long, None, wcfg)
        .expect("watcher");
    let tracker = Tracker::new(&cfg, &video.v.board, cfg.header_log()).expect("tracker");
    let m = Match::new(watcher, tracker, None, 0);
    let src = FrameSource::open(video.path.to_str().unwrap()).expect("open the video");
    (m, src)
}

/// The whole video through the match; the events written (checked, so a broken run is not timed as fast).
fn run((mut m, mut src): (Match, FrameSource)) -> usize {
    m.run(&mut src, false, |_, _, _, _| Ok::<(), boardcall::game::MatchError>(())).expect("match");
    m.tracker().log().events.len()
}

fn bench(c: &mut Criterion) {
    opencv::core::set_num_threads(1).expect("OpenCV threads");
    let video = video();
    let expected = video.v.expected.events.len();
    let mut g = c.benchmark_group(format!("match_1920x1080_{}_frames", video.frames));
    g.sample_size(10).warm_up_time(Duration::from_millis(500)).measurement_time(Duration::from_secs(10));
    let t = std::time::Instant::now();
    std::hint::black_box(start(&video, 1));
    eprintln!("match set-up (undistort tables, detector grid, hole model): {:.0} ms", t.elapsed().as_secs_f64() * 1e3);
    // `--every auto` at the video's 30 fps is one of these (5): the default's figure.
    let auto = boardcall::watch::Every::Auto.frames(FPS);
    eprintln!("--every auto at {FPS} fps scores every {auto}th frame");
    for every in [1u64, 3, 5, 6] {
        g.bench_function(format!("every_{every}"), |b| {
            b.iter_batched(
                || start(&video, every),
                |m| {
                    let n = run(m);
                    assert_eq!(n, expected, "the match read every throw");
                    n
                },
                criterion::BatchSize::PerIteration,
            )
        });
    }
    g.finish();
    let _ = std::fs::remove_file(&video.path);
}

criterion_group!(benches, bench);
criterion_main!(benches);
