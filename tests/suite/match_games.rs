//! Whole games read from rendered videos by `boardcall::game`: for each video the
//! written event log equals the expected reading (the truth, with the planted
//! ambiguity one event marked for review) and the final game state is the truth's.

use crate::games;

use boardcall::board::Board;
use boardcall::frame::{Frame, StreamFrame};
use boardcall::game::{Match, MatchConfig, MatchEvent, Tracker};
use boardcall::render::video::{game_logs, render_game, GameScript, GameVideo};
use boardcall::watch::{EmptyBoard, PoseStart, WatchConfig, WatchEvent, Watcher};
use std::sync::OnceLock;
use boardcall::rules::{play, EventLog, GameConfig, GameState, Rules, Status};

fn config(log: &EventLog) -> (GameConfig, Board) {
    let rules: Rules = log.rules.as_deref().expect("rules").parse().expect("rules");
    let opts: Vec<String> = if rules == Rules::Sjoelen { vec!["turns=1".into()] } else { vec![] };
    (GameConfig::with_options(rules, &opts).expect("options"), Board::load(rules.default_board()).expect("board"))
}

fn played(log: &EventLog) -> GameState {
    let (cfg, board) = config(log);
    play(&cfg, &board, log).expect("a valid log")
}

/// The scripts' truth logs are whole games by the rules engine (cheap: no rendering).
#[test]
fn the_scripts_are_whole_games() {
    let status = |s: GameScript| {
        let (truth, expected) = game_logs(&s).expect("plan");
        let st = played(&truth);
        assert!(expected.events.iter().all(|e| e.review.is_none()), "nothing planted");
        (st.status, st.rounds.len())
    };
    assert_eq!(status(games::holeyboard()), (Status::Won, 2));
    assert_eq!(status(games::knock_off()), (Status::Won, 3));
    assert_eq!(status(games::yocu(false)), (Status::InProgress, 1));
    assert_eq!(status(games::sjoelen()), (Status::Won, 1));
    assert_eq!(status(games::crazy_eight()), (Status::InProgress, 1));
}

/// A weight's measured position against the truth's (`at`, used to order weights by
/// depth): detection at 640x480 places a resting piece within about a millimetre; 5 mm
/// still orders any two weights the scripts place (at least 15 mm apart in depth).
const AT_TOLERANCE_MM: f64 = 5.0;

fn match_config(log: &EventLog) -> MatchConfig {
    let (cfg, _) = config(log);
    MatchConfig {
        rules: cfg.rules,
        options: if cfg.rules == Rules::Sjoelen { vec!["turns=1".into()] } else { vec![] },
        board: cfg.rules.default_board().into(),
        first: log.first.clone(),
        players: log.players.clone(),
        start_scores: log.start_scores.clone(),
    }
}

/// Reads a video with the library's match (pose known, no journal): the log written.
fn read_video(v: &GameVideo, header: &EventLog) -> EventLog {
    resume_video(v, &match_config(header).header_log(), header)
}

/// Reads a video as `match --resume` does after a crash with `so_far` in the journal:
/// the tracker rebuilt from the log, the frames up to its last event's skipped.
fn resume_video(v: &GameVideo, so_far: &EventLog, header: &EventLog) -> EventLog {
    resume_video_recalling(v, so_far, header, None)
}

/// [`resume_video`] with the empty board the run before kept beside its journal, as `match --resume` recalls it.
fn resume_video_recalling(v: &GameVideo, so_far: &EventLog, header: &EventLog, empty: Option<EmptyBoard>) -> EventLog {
    let cfg = match_config(header);
    let mut watcher = Watcher::new(&v.board, &v.camera, PoseStart::Trusted(v.pose), Default::default(), boardcall::calls::FoulLine::Long, None, WatchConfig::default())
        .expect("watcher");
    if let Some(e) = empty {
        watcher.recall_empty_board(e);
    }
    let tracker = Tracker::new(&cfg, &v.board, so_far.clone()).expect("tracker");
    let mut m = Match::new(watcher, tracker, None, boardcall::game::resume_frame(so_far));
    for (i, f) in v.frames.iter().enumerate() {
        let sf = StreamFrame { index: i as u64, time_s: i as f64 / v.fps, frame: Frame::from_mat(f.clone()).expect("frame") };
        m.push(&sf).expect("push");
    }
    m.tracker().log().clone()
}

/// The written log against the expected one: the same events, throwers, review marks
/// and pieces with the same calls, holes, compartments and values; weights where the truth puts them.
fn assert_same_log(got: &EventLog, want: &EventLog) {
    assert_eq!((&got.rules, &got.first, &got.players, &got.start_scores), (&want.rules, &want.first, &want.players, &want.start_scores));
    let brief = |l: &EventLog| -> Vec<String> {
        l.events
            .iter()
            .map(|e| {
                let pieces: Vec<String> = e.pieces.iter().map(|p| format!("{}:{:?}:{:?}:{:?}:{:?}", p.piece, p.call, p.hole, p.compartment, p.value)).collect();
                format!("{} [{}] review={:?}", e.thrower, pieces.join(" "), e.review)
            })
            .collect()
    };
    assert_eq!(brief(got), brief(want), "the written log differs from the expected reading");
    for (g, w) in got.events.iter().zip(&want.events) {
        for (gp, wp) in g.pieces.iter().zip(&w.pieces) {
            if let (Some(a), Some(b)) = (gp.at, wp.at) {
                assert!(a.distance(b) <= AT_TOLERANCE_MM, "{}: at {a:?}, truth {b:?}", gp.piece);
            }
        }
    }
}

fn threads() -> usize {
    std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1)
}

macro_rules! video {
    ($name:ident, $script:expr) => {
        fn $name() -> &'static (GameVideo, EventLog) {
            static V: OnceLock<(GameVideo, EventLog)> = OnceLock::new();
            V.get_or_init(|| {
                let v = render_game(&$script, threads()).expect("render");
                let got = read_video(&v, &v.truth);
                (v, got)
            })
        }
    };
}

video!(holeyboard, games::holeyboard());
video!(knock_off, games::knock_off());
video!(yocu, games::yocu(false));
video!(yocu_planted, games::yocu(true));
video!(sjoelen, games::sjoelen());
video!(sjoelen_small, games::sjoelen_at(games::SCALE));

fn assert_final_state(got: &EventLog, truth: &EventLog) {
    let (g, t) = (played(got), played(truth));
    assert_eq!((g.status, &g.winner, &g.scores, g.rounds.len()), (t.status, &t.winner, &t.scores, t.rounds.len()));
}

#[test]
fn a_holeyboard_game_is_followed_to_its_end() {
    let (v, got) = holeyboard();
    assert_same_log(got, &v.expected);
    assert_final_state(got, &v.truth);
    assert_eq!(played(got).status, Status::Won);
}

#[test]
fn a_knock_off_game_of_three_rounds_is_followed_to_its_end() {
    let (v, got) = knock_off();
    assert_same_log(got, &v.expected);
    assert_final_state(got, &v.truth);
    let s = played(got);
    assert_eq!((s.status, s.rounds.len()), (Status::Won, 3));
}

#[test]
fn a_yocu_round_with_a_knock_in_is_scored() {
    let (v, got) = yocu();
    assert_same_log(got, &v.expected);
    assert_final_state(got, &v.truth);
    // The knock-in: red#2, on the board after its throw, is in the 3 at the round's end.
    let last = got.events.last().expect("events");
    let red2 = last.pieces.iter().find(|p| p.piece.to_string() == "red#2").expect("red#2");
    assert_eq!((red2.hole, red2.value), (Some(1), Some(3)));
}

#[test]
fn a_sjoelen_turn_is_scored_sub_turn_by_sub_turn() {
    let (v, got) = sjoelen();
    assert_same_log(got, &v.expected);
    assert_final_state(got, &v.truth);
    assert_eq!(got.events.len(), 3, "three sub-turns");
}

/// The same turn seen at half the size: no disc's outline there tells a pile from one disc, so every frame's counts
/// are in doubt (`FrameReport::doubts`) and every sub-turn's event is held for review with that reason, never
/// scored as if the count were sure.
#[test]
fn a_sjoelen_turn_seen_too_coarsely_to_tell_piles_is_held_for_review() {
    let (v, got) = sjoelen_small();
    assert_eq!(got.events.len(), v.expected.events.len(), "the same sub-turns are read");
    for (i, e) in got.events.iter().enumerate() {
        assert!(e.review.as_deref().is_some_and(|r| r.contains("may lie on others this view cannot see")), "event {i}: {:?}", e.review);
    }
    assert_eq!(played(got).status, Status::NeedsReview);
}

#[test]
fn two_pieces_arriving_together_are_marked_for_review_and_an_amendment_settles_it() {
    let (v, got) = yocu_planted();
    assert_same_log(got, &v.expected);
    let marked: Vec<usize> = got.events.iter().enumerate().filter(|(_, e)| e.review.is_some()).map(|(i, _)| i).collect();
    let planted: Vec<usize> = v.expected.events.iter().enumerate().filter(|(_, e)| e.review.is_some()).map(|(i, _)| i).collect();
    assert_eq!(marked, planted);
    assert_eq!(planted.len(), 1);
    // Not scored past the marked event: the round stands open, never guessed.
    let s = played(got);
    assert_eq!(s.status, Status::NeedsReview);
    assert_eq!(s.review.as_ref().and_then(|r| r.event), Some(planted[0]));
    // The operator's amendment: the marked event replaced by the two throws it was.
    let mut amended = got.clone();
    let k = planted[0];
    let truth_pair = v.truth.events[k..k + 2].to_vec();
    amended.events.splice(k..k + 1, truth_pair);
    assert_final_state(&amended, &v.truth);
}

/// The empty board the match tests' sjoelen video shows before its first throw, as a journaled `match` keeps it
/// beside its journal: the video read until the file is written.
fn sjoelen_kept_empty_board(v: &GameVideo, header: &EventLog) -> EmptyBoard {
    let dir = crate::common::scratch("match-games", "sjoelen-kept");
    let path = dir.join("journal.jsonl");
    let cfg = match_config(header);
    let journal = boardcall::game::Journal::create(&path, &boardcall::game::JournalHeader::of(&cfg)).expect("journal");
    let watcher = Watcher::new(&v.board, &v.camera, PoseStart::Trusted(v.pose), Default::default(), boardcall::calls::FoulLine::Long, None, WatchConfig::default())
        .expect("watcher");
    let mut m = Match::new(watcher, Tracker::new(&cfg, &v.board, cfg.header_log()).expect("tracker"), Some(journal), 0);
    for (i, f) in v.frames.iter().enumerate() {
        let sf = StreamFrame { index: i as u64, time_s: i as f64 / v.fps, frame: Frame::from_mat(f.clone()).expect("frame") };
        m.push(&sf).expect("push");
        if let Some(Some(e)) = boardcall::game::read_empty_boards(&path).expect("the kept empty boards read").into_iter().next() {
            assert!(m.tracker().log().events.is_empty(), "the empty board is kept before the first event");
            return e;
        }
    }
    panic!("no empty board was kept beside the journal");
}

/// Resumed after any sub-turn with the empty board the run before kept beside its journal, the log is the
/// uninterrupted one: scene 16's glare is told for the board's own as before (`watch::standing`). Resumed with
/// none (a journal from before, the file lost), each sub-turn read after the resume point is held for review for
/// that patch, with the discs and calls of the uninterrupted reading.
#[test]
fn resumed_after_any_sjoelen_sub_turn_the_log_is_the_uninterrupted_one() {
    let (v, got) = sjoelen();
    let header = EventLog { events: Vec::new(), ..got.clone() };
    let empty = sjoelen_kept_empty_board(v, &header);
    for k in 1..got.events.len() {
        let so_far = EventLog { events: got.events[..k].to_vec(), ..header.clone() };
        assert_eq!(&resume_video_recalling(v, &so_far, &header, Some(empty.clone())), got, "resumed after event {}", k - 1);
    }
    let k = 1;
    let so_far = EventLog { events: got.events[..k].to_vec(), ..header.clone() };
    let resumed = resume_video(v, &so_far, &header);
    assert_eq!(resumed.events.len(), got.events.len());
    assert_eq!(resumed.events[..k], got.events[..k]);
    for (i, (r, g)) in resumed.events.iter().zip(&got.events).enumerate().skip(k) {
        assert_eq!(r.pieces, g.pieces, "event {i}");
        assert!(r.review.as_deref().is_some_and(|why| why.contains("colour no piece explains")), "event {i}: {:?}", r.review);
    }
}

/// Crazy Eight read with the pose given (checked, not trusted), as a mounted camera runs:
/// the opening four weights are one throw, the turn that keeps only three ends at once,
/// and the camera knocked mid-turn is followed (`pose_moved`), so every later call is
/// still where the truth puts it.
#[test]
fn a_crazy_eight_frame_is_followed_through_a_knocked_camera() {
    let v = render_game(&games::crazy_eight(), threads()).expect("render");
    let cfg = match_config(&v.truth);
    let watcher = Watcher::new(&v.board, &v.camera, PoseStart::Given(boardcall::locate::GivenPose::new(v.pose)), Default::default(), boardcall::calls::FoulLine::Long, None, WatchConfig::default())
        .expect("watcher");
    let tracker = Tracker::new(&cfg, &v.board, cfg.header_log()).expect("tracker");
    let mut m = Match::new(watcher, tracker, None, 0);
    let mut moved = 0;
    for (i, f) in v.frames.iter().enumerate() {
        let sf = StreamFrame { index: i as u64, time_s: i as f64 / v.fps, frame: Frame::from_mat(f.clone()).expect("frame") };
        for e in m.push(&sf).expect("push") {
            if let MatchEvent::Watch { what, .. } = &e {
                match what.as_ref() {
                    WatchEvent::PoseMoved { .. } => moved += 1,
                    WatchEvent::BoardLost { reason, .. } => panic!("frame {i}: board lost: {reason}"),
                    _ => {}
                }
            }
        }
    }
    let got = m.tracker().log();
    assert_same_log(got, &v.expected);
    assert_final_state(got, &v.truth);
    assert!(moved >= 1, "the knocked camera was not followed");
    let s = played(got);
    assert_eq!(s.rounds[0].points.get("ann"), 5);
    assert_eq!(s.rounds[0].points.get("bob"), 0);
    assert_eq!(got.events.len(), 6, "ann's volley and four knocks, bob's volley");
}
