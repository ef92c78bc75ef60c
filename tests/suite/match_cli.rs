//! The `boardcall match` command on a rendered video file (a YOCU round, MJPEG AVI):
//! the journal and event log it writes, a journal never overwritten, amendments, and
//! the journal that loses nothing: one game killed (`kill -9`) at 20 seeded random moments,
//! resumed after each, or its last line torn at 20 seeded random bytes and resumed, the
//! finished journal is byte for byte the uninterrupted run's.

use crate::common;
use crate::games;

use boardcall::render::video::{render_game, GameVideo};
use boardcall::rules::{EventLog, GameConfig, Rules};
use rand::{RngExt, SeedableRng};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;

/// The kill points' seed (any fixed number: the test is the same on every run).
const SEED: u64 = 20261124;
/// Kill and tear points per test.
const POINTS: usize = 20;
/// A run is killed at most this long (s) after its journal reached its kill point's events: a few frames of the
/// video's processing, less than the frames between two of its events.
const KILL_AFTER_S: f64 = 0.3;
/// A run that has not reached its kill point after this long (s) is killed anyway (it would have stopped).
const KILL_WAIT_LIMIT_S: u64 = 120;

struct Files {
    /// Kept for the test binary's life.
    _dir: common::Scratch,
    video: PathBuf,
    camera: PathBuf,
    pose: PathBuf,
    truth: EventLog,
    expected: EventLog,
}

fn files() -> &'static Files {
    static F: OnceLock<Files> = OnceLock::new();
    F.get_or_init(|| {
        let threads = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
        let v: GameVideo = render_game(&games::yocu(false), threads).expect("render");
        let dir = common::scratch("match_cli", "video");
        let (video, camera, pose) = (dir.join("yocu.avi"), dir.join("camera.yaml"), dir.join("pose.yaml"));
        v.write_avi(&video).expect("write the video");
        v.camera.save(&camera, &[]).expect("camera file");
        v.pose.save(&pose, &[]).expect("pose file");
        Files { _dir: dir, video, camera, pose, truth: v.truth.clone(), expected: v.expected.clone() }
    })
}

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_boardcall"))
}

/// `boardcall match` on the video with the pose known, and `extra` arguments.
fn match_cmd(extra: &[&str]) -> Command {
    let f = files();
    let mut c = bin();
    c.arg("match").arg(&f.video).arg("--camera").arg(&f.camera).arg("--pose").arg(&f.pose).arg("--trust-pose");
    c.args(extra);
    c
}

fn start_args(journal: &Path) -> Vec<String> {
    ["--board", "yocu-4", "--game", "yocu-4", "--first", "red", "--journal"].iter().map(|s| s.to_string()).chain([journal.display().to_string()]).collect()
}

fn run(mut c: Command) -> Output {
    c.output().expect("run boardcall")
}

fn journal_log(path: &Path) -> EventLog {
    boardcall::game::JournalContents::read(path).expect("journal").log()
}

fn score(log: &EventLog) -> serde_json::Value {
    let board = boardcall::board::Board::load("yocu-4").unwrap();
    let state = boardcall::rules::play(&GameConfig::new(Rules::Yocu4), &board, log).expect("scores");
    serde_json::json!({"scores": state.scores, "status": state.status, "rounds": state.rounds.len()})
}

/// The uninterrupted run (with every post-processing output), once.
struct Whole {
    journal: Vec<u8>,
    out: Output,
    dir: common::Scratch,
}

fn whole() -> &'static Whole {
    static R: OnceLock<Whole> = OnceLock::new();
    R.get_or_init(|| {
        let dir = common::scratch("match_cli", "whole");
        let j = dir.join("game.jsonl");
        let mut c = match_cmd(&[]);
        c.args(start_args(&j)).arg("--events").arg(dir.join("events.json"));
        c.arg("--timeline").arg(dir.join("timeline.json")).arg("--timeline-csv").arg(dir.join("timeline.csv"));
        c.arg("--annotated-video").arg(dir.join("annotated.avi"));
        let out = run(c);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        // The event log kept beside the journal is the journal's.
        let kept = EventLog::from_json(&std::fs::read_to_string(dir.join("events.json")).expect("events file")).expect("an event log");
        assert_eq!(kept, journal_log(&j));
        Whole { journal: std::fs::read(&j).expect("journal"), out, dir }
    })
}

fn uninterrupted() -> (&'static Vec<u8>, &'static Output) {
    let w = whole();
    (&w.journal, &w.out)
}

#[test]
fn post_processing_writes_the_scored_timeline_and_the_annotated_video() {
    let w = whole();
    let truth = score(&files().truth);
    let t: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(w.dir.join("timeline.json")).unwrap()).unwrap();
    let rows = t["rows"].as_array().unwrap();
    let kinds: Vec<&str> = rows.iter().map(|r| r["event"].as_str().unwrap()).collect();
    let throws = files().expected.events.len();
    assert_eq!(kinds.iter().filter(|k| **k == "throw").count(), throws);
    assert_eq!(kinds[throws..], ["round_over", "cleared"]);
    assert_eq!(rows[throws]["scores"], truth["scores"]);
    // Every throw row has every piece's call and margin, times in order.
    for (i, r) in rows[..throws].iter().enumerate() {
        assert_eq!(r["calls"].as_array().unwrap().len(), files().expected.events[i].pieces.len(), "row {i}");
    }
    let times: Vec<f64> = rows.iter().map(|r| r["time_s"].as_f64().unwrap()).collect();
    assert!(times.windows(2).all(|p| p[0] <= p[1]), "{times:?}");
    // The CSV: the same rows, a score column per side.
    let csv = std::fs::read_to_string(w.dir.join("timeline.csv")).unwrap();
    let mut lines = csv.lines();
    assert_eq!(lines.next(), Some("time_s,frame,event,index,thrower,calls,round,status,score_red,score_blue,review"));
    assert_eq!(lines.count(), rows.len());
    // The annotated video: every frame of the source, at its size, drawn on.
    let mut src = boardcall::frame::FrameSource::open(files().video.to_str().unwrap()).unwrap();
    let mut ann = boardcall::frame::FrameSource::open(w.dir.join("annotated.avi").to_str().unwrap()).unwrap();
    assert_eq!(ann.frame_count(), src.frame_count());
    let (mut n, mut drawn) = (0, 0);
    while let (Some(a), Some(b)) = (src.next_frame().unwrap(), ann.next_frame().unwrap()) {
        assert_eq!((a.frame.width(), a.frame.height()), (b.frame.width(), b.frame.height()));
        let mut diff = opencv::core::Mat::default();
        opencv::core::absdiff(a.frame.image(), b.frame.image(), &mut diff).unwrap();
        let mut grey = opencv::core::Mat::default();
        opencv::imgproc::cvt_color_def(&diff, &mut grey, opencv::imgproc::COLOR_BGR2GRAY).unwrap();
        // Pixels changed well beyond MJPEG's re-encoding noise (a few levels): the banner and outlines.
        let mut mask = opencv::core::Mat::default();
        opencv::imgproc::threshold(&grey, &mut mask, ANNOTATION_LEVELS, 255.0, opencv::imgproc::THRESH_BINARY).unwrap();
        if opencv::core::count_non_zero(&mask).unwrap() > ANNOTATION_PIXELS {
            drawn += 1;
        }
        n += 1;
    }
    assert_eq!(drawn, n, "every frame carries the banner");
}

/// A pixel changed by more than this (grey levels) was drawn on: MJPEG re-encoding
/// moves pixels by a few levels, white text on a board by a hundred or more.
const ANNOTATION_LEVELS: f64 = 60.0;
/// The banner's text alone covers a few thousand pixels at 640x480.
const ANNOTATION_PIXELS: i32 = 500;

#[test]
fn the_match_command_journals_the_round_as_the_truth_reads() {
    let (bytes, out) = uninterrupted();
    let dir = common::scratch("match_cli", "read");
    let j = dir.join("game.jsonl");
    std::fs::write(&j, bytes).unwrap();
    let log = journal_log(&j);
    let brief = |l: &EventLog| l.events.iter().map(|e| (e.thrower.clone(), e.pieces.iter().map(|p| (p.piece, p.call, p.hole)).collect::<Vec<_>>())).collect::<Vec<_>>();
    assert_eq!(brief(&log), brief(&files().expected));
    assert_eq!(score(&log), score(&files().truth));
    // Stdout: one JSON object a line, a `throw` per event, the round scored, `end` last with the game state.
    let lines: Vec<serde_json::Value> = String::from_utf8_lossy(&out.stdout).lines().map(|l| serde_json::from_str(l).expect("JSON line")).collect();
    let kinds: Vec<&str> = lines.iter().map(|l| l["event"].as_str().unwrap()).collect();
    assert_eq!(kinds.iter().filter(|k| **k == "throw").count(), log.events.len());
    assert!(kinds.contains(&"round_over") && kinds.contains(&"cleared"), "{kinds:?}");
    assert_eq!(kinds.last(), Some(&"end"));
    assert_eq!(lines.last().unwrap()["state"]["scores"], score(&files().truth)["scores"]);
}

#[test]
fn a_journal_is_never_overwritten_and_a_missing_one_is_not_resumed() {
    let dir = common::scratch("match_cli", "refuse");
    let j = dir.join("game.jsonl");
    std::fs::write(&j, "precious\n").unwrap();
    let mut c = match_cmd(&[]);
    c.args(start_args(&j));
    let out = run(c);
    assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(std::fs::read_to_string(&j).unwrap(), "precious\n");
    let out = run(match_cmd(&["--resume", dir.join("none.jsonl").to_str().unwrap()]));
    assert_eq!(out.status.code(), Some(3), "{}", String::from_utf8_lossy(&out.stderr));
    // A journal that is not one: invalid input, and left as it was.
    let out = run(match_cmd(&["--resume", j.to_str().unwrap()]));
    assert_eq!(out.status.code(), Some(3), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(std::fs::read_to_string(&j).unwrap(), "precious\n");
}

/// Resumes `journal` to the end of the video.
fn resume(journal: &Path) {
    let out = run(match_cmd(&["--resume", journal.to_str().unwrap()]));
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}

/// The journal's bytes as `Journal::resume` leaves them (a torn last line dropped), which must be the start of the
/// uninterrupted run's, ending at a line's end.
fn check_prefix(journal: &Path, whole: &[u8], what: &str) {
    let bytes = std::fs::read(journal).expect("journal");
    let contents = boardcall::game::JournalContents::read(journal).expect("a journal that reads");
    let kept = &bytes[..bytes.len() - contents.torn_bytes];
    assert!(whole.starts_with(kept) && kept.ends_with(b"\n"), "{what}: the journal is not a start of the uninterrupted one");
    assert_eq!(kept.iter().filter(|b| **b == b'\n').count(), 1 + contents.events.len(), "{what}: the header and one line an event");
}

#[test]
fn killed_at_twenty_random_moments_and_resumed_the_journal_is_the_uninterrupted_one() {
    let (whole, _) = uninterrupted();
    let dir = common::scratch("match_cli", "kill");
    // One game killed again and again: each run (the start, then each resume) is killed once its journal holds the
    // next kill point's number of events (the points walk through the game's events, two or three between each two)
    // and then up to KILL_AFTER_S more, at random: at any moment between two events, whatever this machine's speed.
    // Each resume starts from a journal that kills and resumes made.
    let mut rng = rand_pcg::Pcg64::seed_from_u64(SEED);
    let j = dir.join("game.jsonl");
    let all = files().expected.events.len();
    let (mut killed_mid_game, mut furthest) = (0, 0);
    for k in 0..POINTS {
        let mut c = if j.exists() { match_cmd(&["--resume", j.to_str().unwrap()]) } else { match_cmd(&[]) };
        if !j.exists() {
            // Not started yet, or killed before the journal was created: the match is simply started again.
            c.args(start_args(&j));
        }
        c.stdout(Stdio::null()).stderr(Stdio::null());
        let target = k * all / POINTS;
        let mut child = c.spawn().expect("start boardcall");
        // The journal's whole event lines (the header's line not counted), polled while the run goes on.
        let events_now = || std::fs::read(&j).map_or(0, |b| b.iter().filter(|c| **c == b'\n').count().saturating_sub(1));
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(KILL_WAIT_LIMIT_S);
        while child.try_wait().expect("poll the run").is_none() && !(j.exists() && events_now() >= target) && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        std::thread::sleep(std::time::Duration::from_secs_f64(rng.random_range(0.0..KILL_AFTER_S)));
        // SIGKILL: no chance to flush or clean up.
        let _ = child.kill();
        child.wait().expect("reap");
        if j.exists() {
            check_prefix(&j, whole, &format!("kill point {k}"));
            let events = journal_log(&j).events.len();
            furthest = furthest.max(events);
            if events < all {
                killed_mid_game += 1;
            }
        }
    }
    assert!(furthest + 1 >= all, "the kills reached event {furthest} of {all} only: the test did not test the whole game");
    assert!(killed_mid_game >= POINTS / 2, "only {killed_mid_game} kills landed mid-game: the test did not test");
    if j.exists() {
        resume(&j);
    } else {
        let mut c = match_cmd(&[]);
        c.args(start_args(&j));
        assert!(run(c).status.success());
    }
    assert_eq!(&std::fs::read(&j).expect("journal"), whole, "after {POINTS} kills: the resumed journal differs");
}

/// Of the torn journals, one in this many is resumed by the `match` command to the game's end (each a run of the
/// video's rest); every one is read and cut back by the journal's own resume.
const TORN_RESUMED_EVERY: usize = 5;

#[test]
fn a_torn_last_line_is_dropped_never_duplicated() {
    let (whole, _) = uninterrupted();
    let dir = common::scratch("match_cli", "torn");
    let header_end = whole.iter().position(|b| *b == b'\n').unwrap() + 1;
    let mut rng = rand_pcg::Pcg64::seed_from_u64(SEED + 1);
    let mut mid_line = 0;
    for k in 0..POINTS {
        // Cut anywhere after the header: mid-line (torn) or at a line's end.
        let cut = rng.random_range(header_end..whole.len());
        mid_line += usize::from(whole[cut - 1] != b'\n');
        let j = dir.join(format!("game-{k}.jsonl"));
        std::fs::write(&j, &whole[..cut]).unwrap();
        // The torn line is dropped from the file, the whole lines before it kept.
        let (_, contents) = boardcall::game::Journal::resume(&j).expect("a torn journal resumes");
        let kept = std::fs::read(&j).unwrap();
        let line_end = whole[..cut].iter().rposition(|b| *b == b'\n').unwrap() + 1;
        assert_eq!(kept, &whole[..line_end], "cut at byte {cut}: the file after resuming");
        assert_eq!(contents.torn_bytes, cut - line_end, "cut at byte {cut}");
        check_prefix(&j, whole, &format!("cut at byte {cut}"));
        if k % TORN_RESUMED_EVERY == 0 {
            std::fs::write(&j, &whole[..cut]).unwrap();
            resume(&j);
            assert_eq!(&std::fs::read(&j).unwrap(), whole, "cut at byte {cut}");
        }
    }
    assert!(mid_line >= POINTS / 2, "only {mid_line} cuts tore a line: the test did not test");
}

#[test]
fn an_amendment_is_appended_and_rescores_the_game() {
    let (whole, _) = uninterrupted();
    let dir = common::scratch("match_cli", "amend");
    let j = dir.join("game.jsonl");
    std::fs::write(&j, whole).unwrap();
    // The round's last event amended: blue's last washer lies in the 2, not on the board.
    let log = journal_log(&j);
    let last = log.events.len() - 1;
    let mut fixed = log.events[last].clone();
    for p in fixed.pieces.iter_mut().filter(|p| p.piece.to_string() == "blue#4") {
        p.call = boardcall::rules::CallName::In;
        p.hole = Some(2);
        p.value = Some(2);
    }
    let with = dir.join("fixed.json");
    std::fs::write(&with, serde_json::to_string(&vec![fixed.clone()]).unwrap()).unwrap();
    let out = run({
        let mut c = bin();
        c.args(["match", "--amend", j.to_str().unwrap(), "--event", &last.to_string(), "--with", with.to_str().unwrap()]);
        c
    });
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let after = std::fs::read(&j).unwrap();
    assert!(after.starts_with(whole), "the journal is appended to, never rewritten");
    assert_eq!(journal_log(&j).events[last], fixed);
    assert_ne!(score(&journal_log(&j)), score(&log), "blue's 2 points count");
    // An amendment the rules engine refuses is not written.
    std::fs::write(&with, r#"[{"thrower": "blue", "pieces": []}]"#).unwrap();
    let out = run({
        let mut c = bin();
        c.args(["match", "--amend", j.to_str().unwrap(), "--event", "0", "--with", with.to_str().unwrap()]);
        c
    });
    assert_ne!(out.status.code(), Some(0));
    assert_eq!(std::fs::read(&j).unwrap(), after);
}
