//! From settled states to a game: which pieces a settled state adds (throws), moves
//! or removes (knocks), who threw, when a round ends and the board is cleared, and the
//! rules engine run over the event log after every event.

use super::{ambiguous_reason, CallMargin, MatchConfig, MatchError, MatchEvent, MATCH_STILL_MM};
use crate::board::Board;
use crate::geom::BoardPoint;
use crate::piece::{PieceId, PieceKind, Team};
use crate::rules::{play, CallName, Event, EventLog, GameConfig, GameState, PieceState, Rules, Status};
use crate::score::{FrameReport, PieceReport};
use std::collections::BTreeMap;

/// A piece the tracker knows: where it is and its state as the log gives it.
#[derive(Debug, Clone)]
struct Known {
    team: Option<Team>,
    kind: PieceKind,
    at: BoardPoint,
    /// `None`: on view but listed in no event (a washer on the ground, a loose disc).
    state: Option<PieceState>,
}

/// The game followed from settled states: the log written so far and the board as
/// the log leaves it. Built from a log (empty for a new match, a journal's when resumed),
/// so everything it keeps besides the log follows from the log.
pub struct Tracker {
    config: GameConfig,
    board: Board,
    log: EventLog,
    state: GameState,
    known: BTreeMap<PieceId, Known>,
    /// Pieces thrown (or sub-turns ended, in sjoelen) this round.
    thrown: usize,
    /// The round is complete: the next change must clear the board.
    waiting_clear: bool,
    /// Sjoelen: discs added since the last sub-turn event.
    added: bool,
    /// The next number per team (discs: `None`) for a new piece this round.
    next_number: BTreeMap<Option<Team>, u32>,
    /// Loose discs seen so far (their stand-in numbers).
    next_loose: u32,
    /// Sjoelen: why the latest settled state with discs in view, whose reading of them the next
    /// sub-turn event lists, is in doubt as a whole ([`frame_doubt`]).
    doubt: Option<String>,
    /// Pieces listed in a hole or compartment that went from view since the last event while the board
    /// was not cleared ([`Tracker::forget`]).
    vanished: Vec<PieceId>,
}

/// Sjoelen discs not (yet) in a compartment are numbered above this: disc numbers
/// are given in the order discs are first listed (in a compartment), so a journal
/// resumed after the loose discs were collected numbers the next disc as the
/// uninterrupted run did. Far above the most discs a turn has (32).
const LOOSE_DISC_BASE: u32 = 1000;

impl Tracker {
    /// A tracker continuing `log` (no events: a new match). The log must be one the
    /// rules engine accepts (its last event may be marked for review).
    pub fn new(cfg: &MatchConfig, board: &Board, log: EventLog) -> Result<Tracker, MatchError> {
        let config = cfg.game_config()?;
        let state = play(&config, board, &log)?;
        let mut t = Tracker {
            config,
            board: board.clone(),
            log,
            state,
            known: BTreeMap::new(),
            thrown: 0,
            waiting_clear: false,
            added: false,
            next_number: BTreeMap::new(),
            next_loose: 0,
            doubt: None,
            vanished: Vec::new(),
        };
        t.replay();
        Ok(t)
    }

    /// The tracker's bookkeeping from the log alone: the pieces of the last event, the
    /// throws of the round in progress, whether the round is complete.
    fn replay(&mut self) {
        let per_round = self.round_size();
        let mut thrown = 0usize;
        let mut ended = false;
        let mut seen: Vec<PieceId> = Vec::new();
        for (i, e) in self.log.events.iter().enumerate() {
            if ended {
                thrown = 0;
                seen.clear();
            }
            let new: Vec<PieceId> = e.pieces.iter().map(|p| p.piece).filter(|p| !seen.contains(p)).collect();
            thrown += if self.sjoelen() { 1 } else { new.len().max(e.throws.len()).max(1) };
            seen.extend(new);
            ended = if self.sjoelen() { thrown == per_round } else { self.ends_round(i, thrown) };
        }
        self.thrown = if ended && self.sjoelen() { 0 } else { thrown };
        self.waiting_clear = ended && !self.sjoelen();
        self.known.clear();
        self.next_number.clear();
        if let Some(last) = self.log.events.last() {
            for p in &last.pieces {
                let kind = match p.call {
                    CallName::In | CallName::Leaner | CallName::OnBoard => PieceKind::Washer,
                    CallName::Compartment | CallName::None => PieceKind::Disc,
                    _ => PieceKind::Weight,
                };
                let at = p.at.unwrap_or(BoardPoint::new(f64::NAN, f64::NAN));
                self.known.insert(p.piece, Known { team: p.piece.team, kind, at, state: Some(p.clone()) });
            }
        }
        if !self.waiting_clear {
            for id in &seen {
                let n = self.next_number.entry(id.team).or_insert(1);
                *n = (*n).max(id.number + 1);
            }
        }
    }

    /// Whether event `i` of the log, `thrown` pieces into its round, ends the round (or,
    /// in Horse Collar, Baseball and Crazy Eight, the player's turn): the board is cleared
    /// after it. The rules engine decides where it scores the log (a round scored, the
    /// turn passed on: a Crazy Eight turn may end after its first throw, a YOCU bonus toss
    /// lengthens a round); past an event held for review, where the engine scores
    /// nothing, the round's throws are counted.
    fn ends_round(&self, i: usize, thrown: usize) -> bool {
        let scored = match (self.state.status, &self.state.review) {
            (Status::NeedsReview, Some(r)) => r.event.unwrap_or(0),
            (Status::NeedsReview, None) => 0,
            _ => self.log.events.len(),
        };
        if i >= scored {
            return thrown >= self.round_size();
        }
        if self.state.rounds.iter().any(|r| r.events[1] == i) {
            return true;
        }
        if self.config.rules.team_colours() {
            return false;
        }
        let events = &self.log.events;
        let next = events.get(i + 1).map(|e| &e.thrower).or(self.state.up_next.as_ref());
        next.is_some_and(|n| *n != events[i].thrower)
    }

    fn sjoelen(&self) -> bool {
        self.config.rules == Rules::Sjoelen
    }

    /// Pieces a round throws before the board is cleared (sjoelen: sub-turns a turn
    /// has). In Horse Collar, Baseball and Crazy Eight the board is cleared after each
    /// player's turn of all eight weights.
    fn round_size(&self) -> usize {
        match self.config.rules {
            Rules::KnockOff | Rules::TapAndDraw | Rules::Yocu4 | Rules::Yocu9 | Rules::HorseCollar | Rules::Baseball | Rules::CrazyEight => 8,
            Rules::HoleyBoard => 6,
            Rules::Sjoelen => crate::rules::sjoelen::SUB_TURNS as usize,
        }
    }

    pub fn log(&self) -> &EventLog {
        &self.log
    }

    pub fn state(&self) -> &GameState {
        &self.state
    }

    /// Who throws next, as the rules engine orders the game (`GameState::up_next`:
    /// nobody once the game is over, while a review holds the scoring, or when the
    /// game names no first team), and nobody while the round is complete and the
    /// board is still to be cleared.
    pub fn up_next(&self) -> Option<String> {
        self.state.up_next.clone().filter(|_| !self.waiting_clear)
    }

    /// The round is complete and its board not yet seen cleared.
    pub fn waiting_clear(&self) -> bool {
        self.waiting_clear
    }

    /// Throws (sjoelen: sub-turns) in so far this round.
    pub fn thrown_this_round(&self) -> usize {
        self.thrown
    }

    /// Whether the game is over (won, or a sjoelen match complete).
    pub fn over(&self) -> bool {
        matches!(self.state.status, Status::Won | Status::Tied)
    }

    /// Reads one settled state; returns what it meant for the game. An event in the
    /// result (`MatchEvent::Throw`) has been added to the log: the caller journals it.
    pub fn settled(&mut self, frame: u64, time_s: f64, report: &FrameReport) -> Vec<MatchEvent> {
        if self.over() {
            return Vec::new();
        }
        let pieces: Vec<&PieceReport> = report.pieces.iter().collect();
        if self.waiting_clear {
            if pieces.is_empty() {
                self.waiting_clear = false;
                self.thrown = 0;
                self.known.clear();
                self.next_number.clear();
                self.vanished.clear();
                return vec![MatchEvent::Cleared { frame, time_s }];
            }
            return Vec::new();
        }
        if self.sjoelen() {
            return self.sjoelen_state(frame, time_s, report);
        }
        let m = self.assign(&pieces);
        if m.new.is_empty() {
            if m.moved.is_empty() && m.gone.is_empty() {
                return Vec::new();
            }
            // The board as it now is: the next event lists it so.
            self.forget(&m.gone);
            for (id, p) in &m.moved {
                self.known.insert(*id, known_of(p, *id));
            }
            return vec![MatchEvent::Ignored { frame, time_s, reason: "pieces moved or went with no piece thrown".into() }];
        }
        // The board after the throw: every piece in view with its id.
        let ambiguous = (m.new.len() > 1 && !self.crazy_eight_opening(&m.new)).then(|| ambiguous_reason(m.new.iter().map(|(id, _)| *id)));
        let thrower = self.thrower(&m.new);
        self.forget(&m.gone);
        let review = match (ambiguous, self.held_because(frame_doubt(report))) {
            (Some(a), Some(b)) => Some(format!("{a}; {b}")),
            (a, b) => a.or(b),
        };
        for (id, p) in m.moved.iter().chain(m.kept.iter()).chain(m.new.iter()) {
            self.known.insert(*id, known_of(p, *id));
        }
        self.thrown += m.new.len();
        let mut event = self.event(&thrower, frame, time_s, review);
        // The pieces this event threw, by name (the page's and timeline's event rows).
        event.throws = m.new.iter().map(|(id, _)| *id).collect();
        event.throws.sort();
        let calls = m.calls();
        self.push(event, calls, frame, time_s)
    }

    /// Sjoelen: discs add up during a sub-turn; the sub-turn's event comes when its loose
    /// discs are collected, or (the turn's last) when the board is cleared.
    fn sjoelen_state(&mut self, frame: u64, time_s: f64, report: &FrameReport) -> Vec<MatchEvent> {
        let pieces: Vec<&PieceReport> = report.pieces.iter().collect();
        let had_loose = self.known.values().any(|k| k.state.is_none());
        let m = self.assign(&pieces);
        let player = self.state.up_next.clone().unwrap_or_default();
        if pieces.is_empty() {
            // Cleared: the turn's last sub-turn, if discs came since the last event. Its discs are as the last
            // settled state with discs in view read them, in doubt where that reading was.
            let out = if self.added {
                let doubt = self.doubt.take();
                let review = self.held_because(doubt);
                let e = self.event(&player, frame, time_s, review);
                self.push(e, Vec::new(), frame, time_s)
            } else {
                Vec::new()
            };
            self.known.clear();
            self.next_number.clear();
            self.added = false;
            self.thrown = 0;
            self.doubt = None;
            self.vanished.clear();
            return out;
        }
        self.doubt = frame_doubt(report);
        self.forget(&m.gone);
        for (id, p) in m.moved.iter().chain(m.kept.iter()).chain(m.new.iter()) {
            self.known.insert(*id, known_of(p, *id));
        }
        if !m.new.is_empty() || !m.moved.is_empty() {
            self.added = true;
        }
        let loose_now = self.known.values().any(|k| k.state.is_none());
        if had_loose && !loose_now && m.new.is_empty() && self.added {
            self.added = false;
            self.thrown += 1;
            let doubt = self.doubt.take();
            let review = self.held_because(doubt);
            let e = self.event(&player, frame, time_s, review);
            let calls = m.calls();
            return self.push(e, calls, frame, time_s);
        }
        Vec::new()
    }

    /// Drops the pieces `gone` from the board as known, noting those listed in a hole or a compartment: a washer in
    /// a cup or leaning on its rim, a disc in a compartment, stays there (another landing on it hides it, or the
    /// frame missed it), where a weight or a washer on the board is knocked off.
    fn forget(&mut self, gone: &[PieceId]) {
        for id in gone {
            if self.known.remove(id).is_some_and(|k| k.state.is_some_and(|s| s.hole.or(s.compartment).is_some())) {
                self.vanished.push(*id);
            }
        }
    }

    /// Why the event now written is held for review, if it is: `doubt`, that of the state its pieces were read from
    /// ([`frame_doubt`]), and the pieces listed in a hole or compartment that went from view since the last event
    /// ([`Tracker::forget`]: one under another, or missed; the count may be short), which the next event does not
    /// repeat.
    fn held_because(&mut self, doubt: Option<String>) -> Option<String> {
        let mut why: Vec<String> = doubt.into_iter().collect();
        if !self.vanished.is_empty() {
            let names: Vec<String> = self.vanished.iter().map(|id| id.to_string()).collect();
            why.push(format!("{} listed in a hole or compartment and no longer seen, the board not cleared: under another piece, or missed", names.join(", ")));
            self.vanished.clear();
        }
        (!why.is_empty()).then(|| why.join("; "))
    }

    /// Adds the event to the log and scores the game again. An event the rules engine
    /// refuses is kept, marked for review with the engine's reason.
    fn push(&mut self, mut event: Event, calls: Vec<CallMargin>, frame: u64, time_s: f64) -> Vec<MatchEvent> {
        let rounds_before = self.state.rounds.len();
        self.log.events.push(event.clone());
        let state = match play(&self.config, &self.board, &self.log) {
            Ok(s) => s,
            Err(e) => {
                event.review = Some(format!("the rules engine refuses this state: {e}"));
                *self.log.events.last_mut().expect("just pushed") = event.clone();
                play(&self.config, &self.board, &self.log).unwrap_or_else(|_| self.state.clone())
            }
        };
        self.state = state;
        let index = self.log.events.len() - 1;
        let mut out = vec![MatchEvent::Throw { index, entry: Box::new(event), calls }];
        if self.sjoelen() {
            if self.thrown >= self.round_size() {
                self.thrown = 0;
            }
        } else if self.ends_round(index, self.thrown) {
            self.waiting_clear = true;
        }
        for r in &self.state.rounds[rounds_before.min(self.state.rounds.len())..] {
            out.push(MatchEvent::RoundOver { frame, time_s, round: Box::new(r.clone()) });
        }
        if self.over() {
            out.push(MatchEvent::GameOver {
                frame,
                time_s,
                status: self.state.status,
                winner: self.state.winner.clone(),
                scores: self.state.scores.clone(),
            });
        }
        out
    }

    /// Who threw the new pieces: their team in the colour games (a piece of the team
    /// whose turn it is not is then refused by the rules engine: a review, not a
    /// guess), the player whose turn it is otherwise.
    fn thrower(&self, new: &[(PieceId, &PieceReport)]) -> String {
        match new.first().and_then(|(id, _)| id.team) {
            Some(t) if self.config.rules.team_colours() => t.name().to_string(),
            // While a review holds the scoring the engine names nobody: the turn goes on.
            _ => self.state.up_next.clone().or_else(|| self.log.events.last().map(|e| e.thrower.clone())).unwrap_or_default(),
        }
    }

    /// Crazy Eight opens each turn with four weights of one colour thrown at once:
    /// up to four new weights of one team as a turn's first event are that throw,
    /// not an ambiguity.
    fn crazy_eight_opening(&self, new: &[(PieceId, &PieceReport)]) -> bool {
        let team = new.first().and_then(|(id, _)| id.team);
        self.config.rules == Rules::CrazyEight
            && self.thrown == 0
            && new.len() <= crate::rules::shuffleboard::WEIGHTS_PER_COLOUR as usize
            && team.is_some()
            && new.iter().all(|(id, _)| id.team == team)
    }

    fn event(&self, thrower: &str, frame: u64, time_s: f64, review: Option<String>) -> Event {
        Event {
            thrower: thrower.to_string(),
            throws: Vec::new(),
            bounced: false,
            frame: Some(frame),
            note: None,
            time_s: Some(time_s),
            review,
            pieces: self.known.values().filter_map(|k| k.state.clone()).collect(),
        }
    }

    /// Matches a settled state's pieces to the pieces known: the same team and kind
    /// within [`MATCH_STILL_MM`] is the same piece unmoved; of the rest, each known
    /// piece takes the nearest unmatched piece of its team (moved: knocked), and what
    /// is left over is new (thrown) or gone (knocked off).
    fn assign<'r>(&mut self, pieces: &[&'r PieceReport]) -> Assignment<'r> {
        let mut free: Vec<bool> = vec![true; pieces.len()];
        let mut kept = Vec::new();
        let mut moved = Vec::new();
        let mut gone = Vec::new();
        let mut unmatched: Vec<PieceId> = Vec::new();
        for (id, k) in &self.known {
            let near = nearest(pieces, &free, k, Some(MATCH_STILL_MM));
            match near {
                Some(i) if call_same(k, pieces[i]) => {
                    free[i] = false;
                    kept.push((*id, pieces[i]));
                }
                Some(i) => {
                    free[i] = false;
                    moved.push((*id, pieces[i]));
                }
                None => unmatched.push(*id),
            }
        }
        for id in unmatched {
            let k = &self.known[&id];
            match nearest(pieces, &free, k, None) {
                Some(i) => {
                    free[i] = false;
                    moved.push((id, pieces[i]));
                }
                None => gone.push(id),
            }
        }
        let mut new = Vec::new();
        for (_, p) in pieces.iter().enumerate().filter(|(i, _)| free[*i]) {
            let id = match p.team {
                Some(t) => PieceId::of_team(t, self.next(Some(t))),
                // A loose disc is listed in no event: a stand-in number until it is.
                None if state_of(p, PieceId::disc(0)).is_none() => {
                    self.next_loose += 1;
                    PieceId::disc(LOOSE_DISC_BASE + self.next_loose)
                }
                None => PieceId::disc(self.next(None)),
            };
            new.push((id, *p));
        }
        // A loose disc pushed into a compartment is listed from now on: its real number.
        for (id, p) in kept.iter_mut().chain(moved.iter_mut()) {
            if id.team.is_none() && id.number > LOOSE_DISC_BASE && state_of(p, *id).is_some() {
                self.known.remove(id);
                *id = PieceId::disc(self.next(None));
            }
        }
        Assignment { kept, moved, gone, new }
    }

    /// The next number for a new piece of `team` (discs: `None`) this round.
    fn next(&mut self, team: Option<Team>) -> u32 {
        let n = self.next_number.entry(team).or_insert(1);
        *n += 1;
        *n - 1
    }
}

/// A settled state read against the pieces known.
struct Assignment<'r> {
    kept: Vec<(PieceId, &'r PieceReport)>,
    moved: Vec<(PieceId, &'r PieceReport)>,
    gone: Vec<PieceId>,
    new: Vec<(PieceId, &'r PieceReport)>,
}

impl Assignment<'_> {
    /// Every piece's call and margin, by id.
    fn calls(&self) -> Vec<CallMargin> {
        let mut v: Vec<CallMargin> = self
            .kept
            .iter()
            .chain(&self.moved)
            .chain(&self.new)
            .map(|(id, p)| CallMargin { piece: *id, call: p.call.clone(), margin_mm: (p.margin_mm * 10.0).round() / 10.0, review: p.review })
            .collect();
        v.sort_by_key(|c| c.piece);
        v
    }
}

/// Why a settled state's reading as a whole is in doubt, if it is: colour no piece explains (a piece may be
/// hidden), or the frame's own doubts (`FrameReport::doubts`: a damaged picture, piles of discs the view cannot see
/// under, more pieces of a side than the game has). An event read from it is held for review: its pieces may be
/// more, or others, than those listed. A single call close to its line is not this: the event's calls carry it.
fn frame_doubt(report: &FrameReport) -> Option<String> {
    let mut why: Vec<String> = Vec::new();
    if !report.unexplained.is_empty() {
        why.push(format!("{} patch(es) of colour no piece explains: a piece may be hidden", report.unexplained.len()));
    }
    why.extend(report.doubts.iter().cloned());
    (!why.is_empty()).then(|| why.join("; "))
}

/// The nearest free piece of `k`'s team and kind, within `within` mm if given.
fn nearest(pieces: &[&PieceReport], free: &[bool], k: &Known, within: Option<f64>) -> Option<usize> {
    pieces
        .iter()
        .enumerate()
        .filter(|(i, p)| free[*i] && p.team == k.team && p.kind == k.kind)
        .map(|(i, p)| (i, distance(k.at, p)))
        .filter(|(_, d)| within.is_none_or(|w| *d <= w))
        .min_by(|a, b| a.1.total_cmp(&b.1))
        .map(|(i, _)| i)
}

/// Distance from a known place to a reported piece; a place the log did not record
/// (NaN) matches any piece of the team, farther than any real distance.
fn distance(at: BoardPoint, p: &PieceReport) -> f64 {
    let d = at.distance(BoardPoint::new(p.x_mm, p.y_mm));
    if d.is_nan() {
        f64::MAX / 2.0
    } else {
        d
    }
}

fn call_same(k: &Known, p: &PieceReport) -> bool {
    match &k.state {
        Some(s) => serde_json::to_value(s.call).ok().and_then(|v| v.as_str().map(|c| c == p.call)).unwrap_or(false) && s.hole.or(s.compartment) == p.place,
        None => state_of(p, PieceId::disc(0)).is_none(),
    }
}

fn known_of(p: &PieceReport, id: PieceId) -> Known {
    Known { team: p.team, kind: p.kind, at: BoardPoint::new(p.x_mm, p.y_mm), state: state_of(p, id) }
}

/// A reported piece as the event log lists it (`None`: listed in no event: off the
/// board, or a disc not in a compartment). Positions are rounded to 0.1 mm.
pub fn state_of(p: &PieceReport, id: PieceId) -> Option<PieceState> {
    let call: CallName = serde_json::from_value(serde_json::Value::String(p.call.clone())).ok()?;
    if matches!(call, CallName::Off | CallName::None) {
        return None;
    }
    let round = |v: f64| (v * 10.0).round() / 10.0;
    let mut s = PieceState { piece: id, call, hole: None, compartment: None, at: Some(BoardPoint::new(round(p.x_mm), round(p.y_mm))), value: None };
    match p.kind {
        PieceKind::Weight => {}
        PieceKind::Washer => {
            s.hole = p.place;
            s.value = p.value.filter(|_| p.place.is_some());
        }
        PieceKind::Disc => {
            s.compartment = p.place;
            s.value = p.value.filter(|_| p.place.is_some());
        }
    }
    Some(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(name: &str) -> EventLog {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/events").join(format!("{name}.json"));
        serde_json::from_str(&std::fs::read_to_string(path).expect("fixture")).expect("event log")
    }

    fn disc(x_mm: f64, y_mm: f64, compartment: Option<usize>) -> PieceReport {
        crate::score::test_disc(x_mm, y_mm, compartment)
    }

    fn settled_state(pieces: Vec<PieceReport>, doubts: &[&str]) -> FrameReport {
        FrameReport {
            format: crate::score::REPORT_FORMAT,
            image: None,
            board: "sjoelbak".into(),
            pose: crate::score::PoseReport::trusted(&crate::camera::CameraPose::from_rvec_tvec([0.0; 3], [0.0, 0.0, 1000.0])),
            pieces,
            unexplained: vec![],
            teams: vec![],
            teams_source: Default::default(),
            weight_cap: None,
            score: None,
            needs_review: !doubts.is_empty(),
            review_reasons: doubts.iter().map(|d| d.to_string()).collect(),
            doubts: doubts.iter().map(|d| d.to_string()).collect(),
            standing: vec![],
        }
    }

    /// A tracker at the start of a sjoelen match (the fixture game's players).
    fn sjoelen_tracker() -> Tracker {
        let log = fixture("sjoelen");
        let cfg = MatchConfig { rules: Rules::Sjoelen, options: Vec::new(), board: "sjoelbak".into(), first: None, players: log.players.clone(), start_scores: BTreeMap::new() };
        let board = Board::load("sjoelbak").expect("board");
        Tracker::new(&cfg, &board, EventLog { events: Vec::new(), ..log }).expect("tracker")
    }

    /// The review of each event `t` writes from the settled states `states`, in order.
    fn reviews_of(t: &mut Tracker, states: impl Iterator<Item = FrameReport>) -> Vec<Option<String>> {
        let mut reviews = Vec::new();
        for (k, state) in states.enumerate() {
            for e in t.settled(k as u64, k as f64, &state) {
                if let MatchEvent::Throw { entry, .. } = e {
                    reviews.push(entry.review);
                }
            }
        }
        reviews
    }

    /// The review each sub-turn event of a sjoelen turn is marked with, the settled states' doubts as given: a disc
    /// thrown into the field, then collected into the 1-point compartment (the sub-turn's event); a second thrown
    /// straight into the 3-point one and the board seen so twice; then cleared (the turn's last event, its discs as the last
    /// state with discs in view read them).
    fn sjoelen_reviews(doubts: [&[&str]; 5]) -> Vec<Option<String>> {
        let mut t = sjoelen_tracker();
        let (field, first, second) = (disc(0.0, 900.0, None), disc(-150.0, 40.0, Some(0)), disc(50.0, 40.0, Some(2)));
        let states = [vec![field], vec![first.clone()], vec![first.clone(), second.clone()], vec![first, second], vec![]];
        reviews_of(&mut t, states.into_iter().zip(doubts).map(|(pieces, d)| settled_state(pieces, d)))
    }

    /// A settled state whose reading as a whole is in doubt (here piles of discs the view cannot see under) holds
    /// for review the sub-turn event whose discs it lists: the one made from it, and the turn's last, made when the
    /// board is cleared from the discs the last state with discs in view read. A doubt in a state the event's discs
    /// were not read from (the field's, before the disc was collected; one the board was seen again after) holds
    /// nothing.
    #[test]
    fn a_sjoelen_sub_turn_read_from_a_frame_in_doubt_is_held_for_review() {
        let pile = "the discs counted may lie on others this view cannot see";
        let clear = sjoelen_reviews([&[], &[], &[], &[], &[]]);
        assert_eq!(clear, vec![None, None], "two events (one collected, one cleared), none held");
        let collected = sjoelen_reviews([&[], &[pile], &[], &[], &[]]);
        assert!(collected[0].as_deref().is_some_and(|r| r.contains(pile)), "{collected:?}");
        assert_eq!(collected[1], None);
        let cleared = sjoelen_reviews([&[], &[], &[], &[pile], &[]]);
        assert_eq!(cleared[0], None);
        assert!(cleared[1].as_deref().is_some_and(|r| r.contains(pile)), "{cleared:?}");
        assert_eq!(sjoelen_reviews([&[pile], &[], &[], &[], &[]]), clear, "the field's state, read again once the disc is collected");
        assert_eq!(sjoelen_reviews([&[], &[], &[pile], &[], &[]]), clear, "a state read again with no doubt before the board is cleared");
    }

    /// A disc listed in a compartment that goes from view while the board is not cleared (a disc thrown onto it hides
    /// it, or the frame missed it) holds the next sub-turn's event for review, naming it: the count may be short. A
    /// loose disc collected from the field goes from view too, and holds nothing.
    #[test]
    fn a_disc_in_a_compartment_gone_from_view_holds_the_sub_turn_for_review() {
        let mut t = sjoelen_tracker();
        let (field, first, second) = (disc(0.0, 900.0, None), disc(-150.0, 40.0, Some(0)), disc(50.0, 40.0, Some(2)));
        // The first disc collected into the 1-point compartment (an event, nothing held); the second thrown into the
        // 3-point one; the first then gone from view; the board cleared.
        let states = [vec![field], vec![first.clone()], vec![first, second.clone()], vec![second], vec![]];
        let reviews = reviews_of(&mut t, states.into_iter().map(|pieces| settled_state(pieces, &[])));
        assert_eq!(reviews.len(), 2, "{reviews:?}");
        assert_eq!(reviews[0], None, "the loose disc collected");
        assert!(reviews[1].as_deref().is_some_and(|r| r.contains("disc#1") && r.contains("no longer seen")), "{reviews:?}");
    }

    /// The same on a washer board: a red washer in a cup, then (red's four thrown) a blue one landing on it, which
    /// hides it: the blue throw's event is held, naming the red washer.
    #[test]
    fn a_washer_in_a_cup_gone_from_view_holds_the_next_throw_for_review() {
        let cfg = MatchConfig { rules: Rules::Yocu4, options: Vec::new(), board: "yocu-4".into(), first: Some("red".into()), players: Vec::new(), start_scores: BTreeMap::new() };
        let board = Board::load("yocu-4").expect("board");
        let holes = &board.washer().expect("washer board").holes;
        let mut t = Tracker::new(&cfg, &board, EventLog { first: Some("red".into()), ..EventLog::new("yocu-4") }).expect("tracker");
        let washer = |id: &str, x_mm: f64, y_mm: f64| {
            let id: PieceId = id.parse().unwrap();
            let hole = holes.iter().position(|h| h.centre().distance(BoardPoint::new(x_mm, y_mm)) < h.diameter_mm / 2.0);
            PieceReport {
                id,
                kind: PieceKind::Washer,
                team: id.team,
                call: if hole.is_some() { "in" } else { "on_board" }.into(),
                value: hole.map(|h| holes[h].value),
                place: hole,
                ..disc(x_mm, y_mm, None)
            }
        };
        let (h, others) = (holes[1].centre(), [(150.0, 100.0), (-150.0, 700.0), (150.0, 1500.0)]);
        let mut states: Vec<Vec<PieceReport>> = vec![vec![washer("red#1", h.x_mm, h.y_mm)]];
        for (k, (x, y)) in others.iter().enumerate() {
            let mut next = states.last().expect("a state").clone();
            next.push(washer(&format!("red#{}", k + 2), *x, *y));
            states.push(next);
        }
        let mut last = states.last().expect("a state").clone();
        last.retain(|p| p.id.to_string() != "red#1");
        last.push(washer("blue#1", h.x_mm + 3.0, h.y_mm - 2.0));
        states.push(last);
        let reviews = reviews_of(&mut t, states.into_iter().map(|pieces| settled_state(pieces, &[])));
        assert_eq!(reviews.len(), 5, "{reviews:?}");
        assert!(reviews[..4].iter().all(Option::is_none), "{reviews:?}");
        assert!(reviews[4].as_deref().is_some_and(|r| r.contains("red#1") && r.contains("no longer seen")), "{reviews:?}");
    }

    /// Over every prefix of every game's whole log, `up_next` names the thrower of the
    /// log's next event, or nobody only where the board is to be cleared or the game is over.
    #[test]
    fn up_next_is_the_next_events_thrower() {
        for (name, board) in [
            ("knock-off", "shuffleboard-22ft"),
            ("tap-and-draw", "shuffleboard-22ft"),
            ("horse-collar", "shuffleboard-22ft"),
            ("baseball", "shuffleboard-22ft"),
            ("crazy-eight", "shuffleboard-22ft"),
            ("holeyboard", "holeyboard"),
            ("yocu-4", "yocu-4"),
            ("yocu-9", "yocu-9"),
            ("sjoelen", "sjoelbak"),
        ] {
            let log = fixture(name);
            let rules: Rules = name.parse().expect("rules");
            let cfg = MatchConfig {
                rules,
                options: Vec::new(),
                board: log.board.clone().unwrap_or_else(|| board.into()),
                first: log.first.clone(),
                players: log.players.clone(),
                start_scores: log.start_scores.clone(),
            };
            let board = Board::load(&cfg.board).expect("board");
            let full = Tracker::new(&cfg, &board, log.clone()).expect("tracker");
            // Where the board is cleared, nobody is named until it is seen empty: after a
            // round in the colour games, after each player's turn in the others.
            let ends: Vec<usize> = full.state().rounds.iter().map(|r| r.events[1] + 1).collect();
            let turn_end = |k: usize| k > 0 && log.events.get(k).is_some_and(|e| e.thrower != log.events[k - 1].thrower);
            let cleared = |k: usize| if rules.team_colours() { ends.contains(&k) } else { turn_end(k) };
            let mut named = 0;
            for k in 0..=log.events.len() {
                let prefix = EventLog { events: log.events[..k].to_vec(), ..log.clone() };
                let t = Tracker::new(&cfg, &board, prefix).expect("tracker");
                match (t.up_next(), log.events.get(k)) {
                    (Some(who), Some(next)) => {
                        assert_eq!(who, next.thrower, "{name}: after {k} events");
                        named += 1;
                    }
                    (None, next) => assert!(t.over() || cleared(k) || next.is_none(), "{name}: nobody named after {k} events"),
                    (Some(who), None) => assert!(!t.over(), "{name}: {who} named after the game"),
                }
            }
            assert!(named > 0, "{name}: nobody named");
        }
    }
}
