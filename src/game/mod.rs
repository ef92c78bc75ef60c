//! Whole games from a camera: the settled states of [`crate::watch`] read as throws and
//! knocks, the rules engine run round after round (`RoundScore -> GameState`), every event
//! written to an append-only journal before it is reported (`docs/match.md`).
//!
//! [`tracker`]: settled states to events (who threw, which pieces a throw moved or
//! removed, the round's end, the board cleared); a state it cannot read unambiguously
//! (several pieces arrived between two settled states, colour no piece explains, a frame
//! whose reading as a whole is in doubt) is an event marked for review, never a guess. [`journal`]: the journal that loses nothing
//! (each line flushed and synced; a torn last line dropped on resume; amendments
//! appended). [`Match`]: the watcher, the tracker and the journal together, frame by frame.

pub mod journal;
pub mod timeline;
pub mod tracker;

pub use journal::{empty_boards_path, read_empty_boards, Journal, JournalContents, JournalHeader, JOURNAL_FORMAT};
pub use timeline::{Timeline, TimelineRow};
pub use tracker::Tracker;

use crate::frame::StreamFrame;
use crate::rules::{Event, EventLog, GameConfig, RoundScore, Rules, RulesError, Scores, Status};
use crate::watch::{WatchError, WatchEvent, Watcher};
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// A piece found within this distance (mm) of where the log left it, with the same
/// call, has not moved: far above a resting piece's measurement noise (0.1-0.5 mm,
/// see `watch::STILL_MM`), well below any knock worth the name (a piece's radius is
/// 29-32 mm), so a nudged piece is followed as moved, not lost and thrown anew.
pub const MATCH_STILL_MM: f64 = 15.0;

/// The game a match plays: rules, options, the event log's header fields.
#[derive(Debug, Clone, PartialEq)]
pub struct MatchConfig {
    pub rules: Rules,
    /// `KEY=VALUE`, as for `boardcall game`.
    pub options: Vec<String>,
    /// The board as named on the command line (`NAME`, `NAME@VARIANT`, a file).
    pub board: String,
    /// Colour games: the team throwing first in round 1.
    pub first: Option<String>,
    /// Sjoelen (and named-player games): the players in order.
    pub players: Vec<String>,
    /// Totals before the first event (a game resumed from paper).
    pub start_scores: BTreeMap<String, i64>,
}

impl MatchConfig {
    pub fn game_config(&self) -> Result<GameConfig, RulesError> {
        GameConfig::with_options(self.rules, &self.options)
    }

    /// The event log's header, with no events.
    pub fn header_log(&self) -> EventLog {
        let mut log = EventLog::new(self.rules.name());
        log.board = Some(self.board.clone());
        log.first = self.first.clone();
        log.players = self.players.clone();
        log.start_scores = self.start_scores.clone();
        log
    }
}

/// What the match reports, one JSON object a line (`docs/match.md`).
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum MatchEvent {
    /// An event of the log (a throw, a sjoelen sub-turn), journaled before it is reported;
    /// `index` is its place in the log's `events`.
    Throw { index: usize, entry: Box<Event>, calls: Vec<CallMargin> },
    /// A round (sjoelen: a turn) was scored.
    RoundOver { frame: u64, time_s: f64, round: Box<RoundScore> },
    /// The board was cleared after a complete round.
    Cleared { frame: u64, time_s: f64 },
    /// The game is over.
    GameOver { frame: u64, time_s: f64, status: Status, winner: Option<String>, scores: Scores },
    /// A settled state that is not a throw (pieces moved with none thrown).
    Ignored { frame: u64, time_s: f64, reason: String },
    /// What the watcher of end `end` (0: the first source) said about its stream
    /// (board found, lost, frames unscored); not journaled.
    Watch { end: usize, what: Box<WatchEvent> },
}

/// A piece's call and signed margin as measured in the settled state (the margin the
/// event log does not keep).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CallMargin {
    pub piece: crate::piece::PieceId,
    pub call: String,
    pub margin_mm: f64,
    /// The call is within 3 sigma of its boundary (or the detection in doubt).
    pub review: bool,
}

/// Errors that stop a match.
#[derive(Debug, thiserror::Error)]
pub enum MatchError {
    #[error(transparent)]
    Rules(#[from] RulesError),
    #[error(transparent)]
    Watch(#[from] WatchError),
    #[error("journal {path} exists: resume it with --resume, or name a new one (a journal is never overwritten)")]
    JournalExists { path: PathBuf },
    #[error("journal {path}: {problem}")]
    Journal { path: PathBuf, problem: String },
    #[error("journal {path}: {source}")]
    JournalIo { path: PathBuf, source: std::io::Error },
    #[error("journal {path} is for {field} `{journal}`, not `{given}`")]
    Mismatch { path: PathBuf, field: &'static str, journal: String, given: String },
    #[error("amendment: {problem}")]
    Amend { problem: String },
    #[error("{problem}")]
    Ends { problem: String },
}

/// A match in progress: the watcher over the stream (one per end when each end has its
/// camera), the tracker over its settled states, and the journal every event is written
/// to before it is reported.
pub struct Match {
    /// One watcher per end; rounds alternate ends, the first end playing round 1.
    watchers: Vec<Watcher>,
    /// The end whose board is in play: only its settled states are read as the game.
    active: usize,
    tracker: Tracker,
    journal: Option<Journal>,
    /// Frames before this one were read before a resume: skipped unscored.
    resume_from: u64,
    /// Per end, the empty boards its watcher had seen when they were last kept beside the journal.
    empties_kept: Vec<u64>,
    /// The last settled state's report (for drawing on the frames after it).
    last: Option<Box<crate::score::FrameReport>>,
    /// The frame index the last settled state was reported at.
    last_frame: Option<u64>,
}

impl Match {
    /// A match over `watcher`'s stream continuing `tracker`'s log, journaling to
    /// `journal` (none: nothing is written), skipping frames before `resume_from`.
    pub fn new(watcher: Watcher, tracker: Tracker, journal: Option<Journal>, resume_from: u64) -> Match {
        Match::with_ends(vec![watcher], tracker, journal, resume_from)
    }

    /// A match played on several ends, a camera (a watcher) each, the streams read in
    /// step (frame `i` of every end is the same moment): rounds alternate ends, the first
    /// watcher's end playing round 1, and the game moves to the next end once the board in
    /// play is seen cleared after a complete round. The other ends are watched all along
    /// (their board known when play comes to them) but their states are not the game's.
    /// The end in play follows from the log (a resumed match goes on at the right end).
    pub fn with_ends(watchers: Vec<Watcher>, tracker: Tracker, journal: Option<Journal>, resume_from: u64) -> Match {
        let active = end_in_play(&tracker, watchers.len());
        let empties_kept = watchers.iter().map(Watcher::empty_boards_seen).collect();
        Match { watchers, active, tracker, journal, resume_from, empties_kept, last: None, last_frame: None }
    }

    /// How many ends (cameras) the match is played on.
    pub fn ends(&self) -> usize {
        self.watchers.len()
    }

    /// The end whose board is in play (0: the first source's).
    pub fn active_end(&self) -> usize {
        self.active
    }

    /// The last settled state's report, if any.
    pub fn last_report(&self) -> Option<&crate::score::FrameReport> {
        self.last.as_deref()
    }

    /// The frame index at which the last settled state was reported, if any: a caller
    /// sees a new settled state when it changes.
    pub fn last_settled_frame(&self) -> Option<u64> {
        self.last_frame
    }

    pub fn tracker(&self) -> &Tracker {
        &self.tracker
    }

    /// Whether the frame of this index is looked at (after the resume point, every
    /// `every`-th): the others may be skipped undecoded.
    pub fn wants(&self, index: u64) -> bool {
        index >= self.resume_from && self.watchers.iter().all(|w| w.wants(index))
    }

    /// Reads a whole stream (every frame it wants decoded, the others skipped),
    /// calling `each` with every frame read and what it meant; stops at the game's end.
    /// `decode_all`: every frame is decoded and handed to `each` (to draw on it).
    pub fn run<E: From<MatchError>>(
        &mut self,
        stream: &mut crate::frame::FrameSource,
        decode_all: bool,
        mut each: impl FnMut(&Match, Option<&StreamFrame>, u64, Vec<MatchEvent>) -> Result<(), E>,
    ) -> Result<u64, E> {
        self.run_ends(std::slice::from_mut(stream), decode_all, |m, _, f, index, events| each(m, f, index, events))
    }

    /// Reads one stream per end in step (frame `i` of each, end by end; every frame it
    /// wants decoded, the others skipped), calling `each` with the end, the frame and what
    /// it meant; stops at the game's end or when every stream has ended. `decode_all`:
    /// every frame is decoded and handed to `each`, to the streams' end.
    pub fn run_ends<E: From<MatchError>>(
        &mut self,
        streams: &mut [crate::frame::FrameSource],
        decode_all: bool,
        mut each: impl FnMut(&Match, usize, Option<&StreamFrame>, u64, Vec<MatchEvent>) -> Result<(), E>,
    ) -> Result<u64, E> {
        let mut frames = 0u64;
        let mut live = vec![true; streams.len()];
        while live.iter().any(|l| *l) {
            for (end, stream) in streams.iter_mut().enumerate() {
                if !live[end] {
                    continue;
                }
                let index = stream.next_index();
                if !decode_all && !self.wants(index) {
                    match stream.skip_frame().map_err(|e| MatchError::from(WatchError::from(e)))? {
                        Some(i) => {
                            frames = frames.max(i + 1);
                            each(self, end, None, i, Vec::new())?;
                        }
                        None => live[end] = false,
                    }
                    continue;
                }
                let Some(f) = stream.next_frame().map_err(|e| MatchError::from(WatchError::from(e)))? else {
                    live[end] = false;
                    continue;
                };
                let events = self.push_end(end, &f)?;
                frames = frames.max(f.index + 1);
                each(self, end, Some(&f), f.index, events)?;
                if self.tracker.over() && !decode_all {
                    return Ok(frames);
                }
            }
        }
        Ok(frames)
    }

    /// Takes the stream's next frame; returns what it meant. Every `Throw` returned is
    /// already in the journal, flushed and synced.
    pub fn push(&mut self, f: &StreamFrame) -> Result<Vec<MatchEvent>, MatchError> {
        self.push_end(self.active, f)
    }

    /// Takes end `end`'s next frame; returns what it meant (nothing of the game unless
    /// the end is in play). A `Cleared` board moves play to the next end.
    pub fn push_end(&mut self, end: usize, f: &StreamFrame) -> Result<Vec<MatchEvent>, MatchError> {
        if f.index < self.resume_from {
            return Ok(Vec::new());
        }
        let mut out = Vec::new();
        let Some(watcher) = self.watchers.get_mut(end) else { return Ok(out) };
        let events = watcher.push(f)?;
        // A new empty board is kept beside the journal before anything read with it is written.
        if let (Some(j), Some(kept)) = (self.journal.as_ref(), self.empties_kept.get_mut(end)) {
            if watcher.empty_boards_seen() != *kept {
                *kept = watcher.empty_boards_seen();
                j.keep_empty_boards(&self.watchers.iter().map(Watcher::empty_board).collect::<Vec<_>>())?;
            }
        }
        for w in events {
            match &w {
                // The board of an end not in play: watched, not the game.
                WatchEvent::Settled { .. } if end != self.active => {}
                WatchEvent::Settled { frame, time_s, report } => {
                    self.last = Some(report.clone());
                    self.last_frame = Some(*frame);
                    for e in self.tracker.settled(*frame, *time_s, report) {
                        if let (MatchEvent::Throw { entry, .. }, Some(j)) = (&e, self.journal.as_mut()) {
                            j.append_event(entry)?;
                        }
                        if matches!(e, MatchEvent::Cleared { .. }) {
                            self.active = (self.active + 1) % self.watchers.len();
                        }
                        out.push(e);
                    }
                }
                _ => out.push(MatchEvent::Watch { end, what: Box::new(w) }),
            }
        }
        Ok(out)
    }
}

/// The end in play for a tracker's log on `ends` ends: rounds alternate ends, and a
/// complete round not yet cleared is still at its own end.
fn end_in_play(tracker: &Tracker, ends: usize) -> usize {
    let rounds = tracker.state().rounds.len();
    let moved = if tracker.waiting_clear() { rounds.saturating_sub(1) } else { rounds };
    moved % ends.max(1)
}

/// The review reason of an event where several pieces arrived between two settled
/// states (also the expected reading of `render::video`'s planted ambiguities).
pub fn ambiguous_reason(ids: impl Iterator<Item = crate::piece::PieceId>) -> String {
    let ids: Vec<String> = ids.map(|p| p.to_string()).collect();
    format!("{} pieces arrived between settled states ({}): which throw did what cannot be told", ids.len(), ids.join(", "))
}

/// Where a journaled match resumes: the frame after its last event's.
pub fn resume_frame(log: &EventLog) -> u64 {
    log.events.iter().rev().find_map(|e| e.frame).map_or(0, |f| f + 1)
}

/// Checks that a journal's header is the game the command line names.
pub fn check_header(path: &std::path::Path, header: &JournalHeader, cfg: &MatchConfig) -> Result<(), MatchError> {
    let mismatch = |field: &'static str, journal: String, given: String| MatchError::Mismatch { path: path.to_path_buf(), field, journal, given };
    if header.rules != cfg.rules.name() {
        return Err(mismatch("game", header.rules.clone(), cfg.rules.name().into()));
    }
    if header.board != cfg.board {
        return Err(mismatch("board", header.board.clone(), cfg.board.clone()));
    }
    if header.options != cfg.options {
        return Err(mismatch("options", header.options.join(" "), cfg.options.join(" ")));
    }
    Ok(())
}

/// The match configuration a journal's header records.
pub fn config_of(header: &JournalHeader) -> Result<MatchConfig, MatchError> {
    Ok(MatchConfig {
        rules: header.rules.parse()?,
        options: header.options.clone(),
        board: header.board.clone(),
        first: header.first.clone(),
        players: header.players.clone(),
        start_scores: header.start_scores.clone(),
    })
}
