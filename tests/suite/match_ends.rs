//! A match on two ends, a camera each (`boardcall match END_A END_B`): a rendered Knock
//! Off game of three rounds is split over two videos in step, rounds 1 and 3 at the first
//! end and round 2 at the second, each video showing its board empty while play is at the
//! other end (but for a weight set down on the second end's board and taken away during
//! round 1: not the game's). Neither video alone holds the game; read together, the
//! journal's log is the truth's, round after round, and the game is won as the truth says;
//! resumed at either end, the journal is the uninterrupted run's.

use crate::common;
use crate::games;

use boardcall::render::video::{render_game, GameScript, GameVideo};
use boardcall::rules::{play, EventLog, GameConfig, Rules, Status};
use opencv::core::Mat;
use std::process::Command;

/// Steps per round in `games::knock_off` (eight throws and the clearing).
const ROUND_STEPS: usize = 9;

/// A frame of a round's video with its first weight at rest: after the empty board's and
/// the slide's frames, in the middle of its still ones (`render::video`).
const STRAY_FRAME: usize = boardcall::render::video::STILL_FRAMES + boardcall::render::video::SLIDE_FRAMES + 3;

fn round(s: &GameScript, r: usize) -> GameScript {
    GameScript { steps: s.steps[r * ROUND_STEPS..(r + 1) * ROUND_STEPS].to_vec(), ..s.clone() }
}

/// A video of `parts` in order, each either a round's frames or as many frames of the empty board.
fn video(like: &GameVideo, parts: Vec<Vec<Mat>>) -> GameVideo {
    GameVideo {
        board: like.board.clone(),
        camera: like.camera.clone(),
        pose: like.pose,
        fps: like.fps,
        frames: parts.concat(),
        truth: like.truth.clone(),
        expected: like.expected.clone(),
    }
}

fn brief(l: &EventLog) -> Vec<String> {
    l.events
        .iter()
        .map(|e| {
            let pieces: Vec<String> = e.pieces.iter().map(|p| format!("{}:{:?}", p.piece, p.call)).collect();
            format!("{} [{}] review={:?}", e.thrower, pieces.join(" "), e.review)
        })
        .collect()
}

#[test]
fn a_knock_off_game_is_followed_across_both_ends() {
    let threads = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
    let script = games::knock_off();
    assert_eq!(script.steps.len(), 3 * ROUND_STEPS);
    let rounds: Vec<GameVideo> = (0..3).map(|r| render_game(&round(&script, r), threads).expect("render")).collect();
    let empty = rounds[0].frames[0].clone();
    let blank = |v: &GameVideo| vec![empty.clone(); v.frames.len()];
    let end_a = video(&rounds[0], vec![rounds[0].frames.clone(), blank(&rounds[1]), rounds[2].frames.clone()]);
    // While round 1 is played at the first end, a weight is set down on the second end's
    // board and taken away again: settled states of an end not in play, never the game's.
    let stray = rounds[2].frames[STRAY_FRAME].clone();
    let third = rounds[0].frames.len() / 3;
    let round1_at_b = [vec![empty.clone(); third], vec![stray; third], vec![empty.clone(); rounds[0].frames.len() - 2 * third]].concat();
    let end_b = video(&rounds[0], vec![round1_at_b, rounds[1].frames.clone(), blank(&rounds[2])]);
    let truth = EventLog { events: rounds.iter().flat_map(|v| v.truth.events.clone()).collect(), ..script.header.clone() };
    let board = boardcall::board::Board::load("shuffleboard-22ft").expect("board");
    let want = play(&GameConfig::new(Rules::KnockOff), &board, &truth).expect("the script is a game");
    assert_eq!((want.status, want.rounds.len()), (Status::Won, 3));

    let dir = common::scratch("match_ends", "knock_off");
    let (a, b, camera, pose, journal) = (dir.join("end-a.avi"), dir.join("end-b.avi"), dir.join("camera.yaml"), dir.join("pose.yaml"), dir.join("game.jsonl"));
    end_a.write_avi(&a).expect("video a");
    end_b.write_avi(&b).expect("video b");
    end_a.camera.save(&camera, &[]).expect("camera file");
    end_a.pose.save(&pose, &[]).expect("pose file");
    let both_ends = || {
        let mut c = Command::new(env!("CARGO_BIN_EXE_boardcall"));
        c.arg("match").arg(&a).arg(&b).arg("--camera").arg(&camera).arg("--pose").arg(&pose).arg("--pose-b").arg(&pose).arg("--trust-pose");
        c
    };
    let out = both_ends()
        .args(["--board", "shuffleboard-22ft", "--game", "knock-off", "--first", "red", "--start-score", "red=9", "--start-score", "blue=11", "--journal"])
        .arg(&journal)
        .output()
        .expect("run boardcall");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}\n{stdout}", String::from_utf8_lossy(&out.stderr));
    let got = boardcall::game::JournalContents::read(&journal).expect("journal").log();
    assert_eq!(brief(&got), brief(&truth), "the log read from both ends");
    let g = play(&GameConfig::new(Rules::KnockOff), &board, &got).expect("scores");
    assert_eq!((g.status, &g.winner, &g.scores, g.rounds.len()), (want.status, &want.winner, &want.scores, 3));
    assert_eq!(stdout.matches("\"event\":\"cleared\"").count(), 2, "play moved end after rounds 1 and 2");

    // Resumed from the journal cut after round 1's last throw (its board not yet cleared: play
    // still at the first end) and after round 2's second throw (at the second end), the
    // finished journal is the uninterrupted one's.
    let whole = std::fs::read(&journal).expect("journal");
    let lines: Vec<&[u8]> = whole.split_inclusive(|c| *c == b'\n').collect();
    for events in [8, 10] {
        let cut = dir.join(format!("cut-{events}.jsonl"));
        std::fs::write(&cut, lines[..1 + events].concat()).expect("cut journal");
        let out = both_ends().arg("--resume").arg(&cut).output().expect("resume");
        assert!(out.status.success(), "resumed after {events} events: {}", String::from_utf8_lossy(&out.stderr));
        assert!(std::fs::read(&cut).expect("resumed journal") == whole, "resumed after {events} events: the journal differs");
    }
}

/// Sjoelen is played on one board, and the player games' turns are not tied to ends: two
/// sources are refused (usage, exit 2) before anything is written.
#[test]
fn sjoelen_and_the_player_games_take_one_source() {
    for (board, game) in [("sjoelbak", "sjoelen"), ("shuffleboard-22ft", "horse-collar"), ("shuffleboard-22ft", "crazy-eight")] {
        let dir = common::scratch("match_ends", game);
        let journal = dir.join("j.jsonl");
        let out = Command::new(env!("CARGO_BIN_EXE_boardcall"))
            .arg("match")
            .arg(dir.join("a.avi"))
            .arg(dir.join("b.avi"))
            .arg("--camera")
            .arg(dir.join("c.yaml"))
            .args(["--board", board, "--game", game, "--players", "anna,bram", "--journal"])
            .arg(&journal)
            .output()
            .expect("run boardcall");
        assert_eq!(out.status.code(), Some(2), "{game}: {}", String::from_utf8_lossy(&out.stderr));
        assert!(String::from_utf8_lossy(&out.stderr).contains("one source"), "{game}: {}", String::from_utf8_lossy(&out.stderr));
        assert!(!journal.exists(), "{game}");
    }
}
