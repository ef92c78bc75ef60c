//! The event log: after every throw, shot or sub-turn, the call of every piece on the
//! board and who threw. Versioned JSON, documented field by field in `docs/events.md`.
//!
//! A piece's state is its call (the names of [`ShuffleCall`], [`WasherCall`] and
//! [`SjoelCall`] in `crate::calls`), plus the hole or compartment index the call
//! refers to, and optionally its position in board millimetres and its value.

use super::RulesError;
use crate::calls::{ShuffleCall, SjoelCall, WasherCall};
use crate::geom::BoardPoint;
use crate::piece::PieceId;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The event-log format version this build reads and writes.
pub const EVENTS_FORMAT: u32 = 1;

/// A whole game's events.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EventLog {
    /// Always [`EVENTS_FORMAT`].
    pub format: u32,
    /// The game the log records (checked against the game being scored, if given).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rules: Option<String>,
    /// The board the calls refer to: a built-in name, `NAME@VARIANT` or a board file
    /// (default: the game's usual board).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub board: Option<String>,
    /// Players in playing order (Horse Collar, Baseball, Crazy Eight, Sjoelen); for the
    /// colour games it may be omitted or must be `red` and `blue`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub players: Vec<String>,
    /// Colour games: the team throwing first in round 1 (in Knock Off, the team without
    /// the hammer).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first: Option<String>,
    /// Totals before the first event, to resume a game in progress (default all 0).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub start_scores: BTreeMap<String, i64>,
    pub events: Vec<Event>,
}

/// One throw, shot or sub-turn and the board after it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Event {
    /// Who threw: `red`/`blue` in the colour games, else a player from `players`.
    pub thrower: String,
    /// The pieces thrown by this event, if known (one; four for Crazy Eight's first
    /// throw). When omitted, the pieces appearing for the first time are the thrown ones.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub throws: Vec<PieceId>,
    /// HoleyBoard: the washer hit the floor before the board; the throw is used up and
    /// the board reset to before it (`pieces` is ignored).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub bounced: bool,
    /// The video frame the state was read from, if any (informational).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub frame: Option<u64>,
    /// Free text, e.g. who the player of a team was (informational).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// Seconds from the video's start at which the state was read (informational).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_s: Option<f64>,
    /// Why the state could not be read unambiguously (two pieces arrived between settled
    /// states, a piece hidden): the game is scored only up to this event until an operator
    /// amends it (`boardcall match --amend`). Never a guess.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub review: Option<String>,
    /// Every piece on the board after the event. A piece thrown earlier and not listed
    /// is off the board; a piece not yet thrown must not be listed.
    #[serde(default)]
    pub pieces: Vec<PieceState>,
}

/// The names of every call, across the three board families.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CallName {
    /// Weights and washers: off the board.
    Off,
    Short,
    Zone1,
    Zone2,
    Zone3,
    Hanger,
    CornerHanger,
    In,
    Leaner,
    OnBoard,
    Compartment,
    /// Sjoelen discs: not in a compartment.
    None,
}

/// One piece's state after an event.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PieceState {
    /// `red#2`, `blue#4`, `disc#17`.
    pub piece: PieceId,
    pub call: CallName,
    /// Washers `in` or `leaner`: the hole's index in the board's `holes`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hole: Option<usize>,
    /// Discs `compartment`: the compartment's index in the board's `compartments`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compartment: Option<usize>,
    /// The footprint centre in board mm; decides depth between weights in one zone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at: Option<BoardPoint>,
    /// Washers and discs: the hole's or compartment's value (checked against the board).
    /// Weights: the number painted on the zone when a board has more than 1/2/3 (only
    /// `5`, the 9-ft bank board's 5 zone, with call `zone3`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<u32>,
}

impl PieceState {
    fn bare(piece: PieceId, call: CallName) -> Self {
        PieceState { piece, call, hole: None, compartment: None, at: None, value: None }
    }

    /// A weight with a shuffleboard call.
    pub fn weight(piece: PieceId, call: ShuffleCall) -> Self {
        let name = match call {
            ShuffleCall::Off => CallName::Off,
            ShuffleCall::Short => CallName::Short,
            ShuffleCall::Zone1 => CallName::Zone1,
            ShuffleCall::Zone2 => CallName::Zone2,
            ShuffleCall::Zone3 => CallName::Zone3,
            ShuffleCall::Hanger => CallName::Hanger,
            ShuffleCall::CornerHanger => CallName::CornerHanger,
        };
        Self::bare(piece, name)
    }

    /// A washer with a washer call.
    pub fn washer(piece: PieceId, call: WasherCall) -> Self {
        match call {
            WasherCall::In { hole } => PieceState { hole: Some(hole), ..Self::bare(piece, CallName::In) },
            WasherCall::Leaner { hole } => PieceState { hole: Some(hole), ..Self::bare(piece, CallName::Leaner) },
            WasherCall::OnBoard => Self::bare(piece, CallName::OnBoard),
            WasherCall::Off => Self::bare(piece, CallName::Off),
        }
    }

    /// A sjoelen disc with its call.
    pub fn disc(piece: PieceId, call: SjoelCall) -> Self {
        match call {
            SjoelCall::Compartment { compartment } => {
                PieceState { compartment: Some(compartment), ..Self::bare(piece, CallName::Compartment) }
            }
            SjoelCall::None => Self::bare(piece, CallName::None),
        }
    }

    /// The same state with a position.
    pub fn at(mut self, x_mm: f64, y_mm: f64) -> Self {
        self.at = Some(BoardPoint::new(x_mm, y_mm));
        self
    }

    /// The same state with a value.
    pub fn value(mut self, value: u32) -> Self {
        self.value = Some(value);
        self
    }

    fn no_index(&self, family: &str) -> Result<(), String> {
        if self.hole.is_some() || self.compartment.is_some() {
            return Err(format!("a {family} call takes no `hole` or `compartment`"));
        }
        Ok(())
    }

    /// The shuffleboard call, or why this is not one.
    pub fn shuffle_call(&self) -> Result<ShuffleCall, String> {
        self.no_index("weight")?;
        let call = match self.call {
            CallName::Off => ShuffleCall::Off,
            CallName::Short => ShuffleCall::Short,
            CallName::Zone1 => ShuffleCall::Zone1,
            CallName::Zone2 => ShuffleCall::Zone2,
            CallName::Zone3 => ShuffleCall::Zone3,
            CallName::Hanger => ShuffleCall::Hanger,
            CallName::CornerHanger => ShuffleCall::CornerHanger,
            other => {
                return Err(format!(
                    "`{}` is not a weight call (off, short, zone1, zone2, zone3, hanger, corner_hanger)",
                    call_text(other)
                ))
            }
        };
        match (self.value, call) {
            (None, _) | (Some(5), ShuffleCall::Zone3) => Ok(call),
            (Some(v), _) => Err(format!(
                "a weight's `value` names a painted 5 zone (value 5 with call zone3), got value {v} with {}",
                call.name()
            )),
        }
    }

    /// The washer call, or why this is not one.
    pub fn washer_call(&self) -> Result<WasherCall, String> {
        if self.compartment.is_some() {
            return Err("a washer call takes no `compartment`".into());
        }
        let hole = || self.hole.ok_or_else(|| format!("call `{}` needs `hole`", call_text(self.call)));
        let call = match self.call {
            CallName::In => WasherCall::In { hole: hole()? },
            CallName::Leaner => WasherCall::Leaner { hole: hole()? },
            CallName::OnBoard | CallName::Off if self.hole.is_some() => {
                return Err(format!("call `{}` takes no `hole`", call_text(self.call)))
            }
            CallName::OnBoard => WasherCall::OnBoard,
            CallName::Off => WasherCall::Off,
            other => return Err(format!("`{}` is not a washer call (in, leaner, on_board, off)", call_text(other))),
        };
        Ok(call)
    }

    /// The sjoelen call, or why this is not one.
    pub fn sjoel_call(&self) -> Result<SjoelCall, String> {
        if self.hole.is_some() {
            return Err("a disc call takes no `hole`".into());
        }
        match self.call {
            CallName::Compartment => Ok(SjoelCall::Compartment {
                compartment: self.compartment.ok_or("call `compartment` needs `compartment`")?,
            }),
            CallName::None if self.compartment.is_none() => Ok(SjoelCall::None),
            CallName::None => Err("call `none` takes no `compartment`".into()),
            other => Err(format!("`{}` is not a disc call (compartment, none)", call_text(other))),
        }
    }
}

fn call_text(c: CallName) -> String {
    serde_json::to_value(c).ok().and_then(|v| v.as_str().map(str::to_string)).unwrap_or_default()
}

impl EventLog {
    /// An empty log for `rules`.
    pub fn new(rules: &str) -> Self {
        EventLog {
            format: EVENTS_FORMAT,
            rules: Some(rules.to_string()),
            board: None,
            players: Vec::new(),
            first: None,
            start_scores: BTreeMap::new(),
            events: Vec::new(),
        }
    }

    /// Parses a log; malformed JSON or unknown fields are [`RulesError::Json`].
    pub fn from_json(text: &str) -> Result<Self, RulesError> {
        let log: EventLog = serde_json::from_str(text).map_err(|e| RulesError::Json { message: e.to_string() })?;
        if log.format != EVENTS_FORMAT {
            return Err(RulesError::Format { found: log.format, expected: EVENTS_FORMAT });
        }
        Ok(log)
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("an event log always serialises")
    }
}

/// Builds a log throw by throw from changes: it keeps the board state, so each throw
/// names only the pieces that moved. Used by tests, fixtures and docs; the vision stages
/// write whole states directly.
#[derive(Debug, Clone)]
pub struct LogBuilder {
    log: EventLog,
    board: BTreeMap<PieceId, PieceState>,
}

impl LogBuilder {
    pub fn new(rules: &str) -> Self {
        LogBuilder { log: EventLog::new(rules), board: BTreeMap::new() }
    }

    pub fn first(mut self, side: &str) -> Self {
        self.log.first = Some(side.to_string());
        self
    }

    pub fn players(mut self, players: &[&str]) -> Self {
        self.log.players = players.iter().map(|p| p.to_string()).collect();
        self
    }

    pub fn board(mut self, board: &str) -> Self {
        self.log.board = Some(board.to_string());
        self
    }

    pub fn start_score(mut self, side: &str, score: i64) -> Self {
        self.log.start_scores.insert(side.to_string(), score);
        self
    }

    /// Clears the board: the next throw starts a new round (or side's turn).
    pub fn clear(&mut self) -> &mut Self {
        self.board.clear();
        self
    }

    /// A throw by `thrower` after which the pieces in `changes` are in their new state
    /// (a piece going `off` is dropped from the listing); every other piece stays.
    pub fn throw(&mut self, thrower: &str, changes: &[PieceState]) -> &mut Self {
        self.push(thrower, changes, Vec::new(), false)
    }

    /// A throw naming the thrown pieces explicitly (needed when they went straight off).
    pub fn throw_named(&mut self, thrower: &str, throws: &[PieceId], changes: &[PieceState]) -> &mut Self {
        self.push(thrower, changes, throws.to_vec(), false)
    }

    /// A HoleyBoard throw that bounced off the floor: the board is left as it was.
    pub fn bounced(&mut self, thrower: &str, throws: &[PieceId]) -> &mut Self {
        let pieces = self.board.values().cloned().collect();
        self.log.events.push(Event {
            thrower: thrower.to_string(),
            throws: throws.to_vec(),
            bounced: true,
            frame: None,
            note: None,
            time_s: None,
            review: None,
            pieces,
        });
        self
    }

    fn push(&mut self, thrower: &str, changes: &[PieceState], throws: Vec<PieceId>, bounced: bool) -> &mut Self {
        for c in changes {
            if c.call == CallName::Off {
                self.board.remove(&c.piece);
            } else {
                self.board.insert(c.piece, c.clone());
            }
        }
        self.log.events.push(Event {
            thrower: thrower.to_string(),
            throws,
            bounced,
            frame: None,
            note: None,
            time_s: None,
            review: None,
            pieces: self.board.values().cloned().collect(),
        });
        self
    }

    /// The log so far.
    pub fn log(&self) -> &EventLog {
        &self.log
    }

    pub fn build(&self) -> EventLog {
        self.log.clone()
    }
}

/// An event's pieces read against the state before it.
pub(crate) struct Read<C> {
    /// Every piece thrown so far (this event's included) and its call; pieces thrown
    /// earlier and not listed are `off`.
    pub after: BTreeMap<PieceId, C>,
    /// The pieces this event threw (from `throws`, else those appearing first now).
    pub thrown: Vec<PieceId>,
}

/// What a game allows of one event's pieces.
pub(crate) struct PieceRules<'a, C> {
    /// Whether a piece exists in this game (`Err` says why not).
    pub known: &'a dyn Fn(PieceId) -> Result<(), String>,
    /// Whether this event's thrower may throw the piece now.
    pub may_throw: &'a dyn Fn(PieceId) -> bool,
    /// How many pieces the event may throw.
    pub max_new: usize,
    pub parse: &'a dyn Fn(&PieceState) -> Result<C, String>,
    pub off: C,
    pub is_off: &'a dyn Fn(&C) -> bool,
}

/// Reads event `idx` against `before` (the state of every piece thrown earlier), with the
/// checks all games share: unknown or duplicated pieces, pieces appearing before they are
/// thrown, pieces that went off coming back, too many pieces in one throw.
pub(crate) fn read_event<C: Clone>(
    idx: usize,
    ev: &Event,
    before: &BTreeMap<PieceId, C>,
    rules: &PieceRules<'_, C>,
) -> Result<Read<C>, RulesError> {
    let mut listed: BTreeMap<PieceId, C> = BTreeMap::new();
    for p in &ev.pieces {
        (rules.known)(p.piece)
            .map_err(|problem| RulesError::UnknownPiece { event: idx, piece: p.piece.to_string(), problem })?;
        let call = (rules.parse)(p).map_err(|problem| RulesError::BadCall { event: idx, piece: p.piece.to_string(), problem })?;
        if listed.insert(p.piece, call).is_some() {
            return Err(RulesError::DuplicatePiece { event: idx, piece: p.piece.to_string() });
        }
    }
    for t in &ev.throws {
        (rules.known)(*t).map_err(|problem| RulesError::UnknownPiece { event: idx, piece: t.to_string(), problem })?;
        if before.contains_key(t) {
            return Err(RulesError::Inconsistent {
                event: idx,
                piece: t.to_string(),
                problem: "named in `throws` but it was thrown earlier this round".into(),
            });
        }
        if !(rules.may_throw)(*t) {
            return Err(RulesError::Inconsistent {
                event: idx,
                piece: t.to_string(),
                problem: format!("`{}` may not throw this piece now", ev.thrower),
            });
        }
    }
    let mut thrown: Vec<PieceId> = ev.throws.clone();
    thrown.dedup();
    if thrown.len() != ev.throws.len() {
        return Err(RulesError::TooManyPieces { event: idx, problem: "a piece is named twice in `throws`".into() });
    }
    for id in listed.keys() {
        if before.contains_key(id) || thrown.contains(id) {
            continue;
        }
        if !ev.throws.is_empty() {
            return Err(RulesError::Inconsistent {
                event: idx,
                piece: id.to_string(),
                problem: "on the board but neither thrown earlier nor named in `throws`".into(),
            });
        }
        if !(rules.may_throw)(*id) {
            return Err(RulesError::Inconsistent {
                event: idx,
                piece: id.to_string(),
                problem: format!("appears on the board but `{}` may not throw it now (not thrown yet)", ev.thrower),
            });
        }
        thrown.push(*id);
    }
    if thrown.len() > rules.max_new {
        return Err(RulesError::TooManyPieces {
            event: idx,
            problem: format!(
                "{} new pieces ({}) but a throw here sends {}",
                thrown.len(),
                thrown.iter().map(|p| p.to_string()).collect::<Vec<_>>().join(", "),
                rules.max_new
            ),
        });
    }
    let mut after = BTreeMap::new();
    for (id, was) in before {
        let now = listed.get(id).cloned().unwrap_or_else(|| rules.off.clone());
        if (rules.is_off)(was) && !(rules.is_off)(&now) {
            return Err(RulesError::Inconsistent {
                event: idx,
                piece: id.to_string(),
                problem: "is on the board but had gone off (or been removed from play) earlier".into(),
            });
        }
        after.insert(*id, now);
    }
    for id in &thrown {
        after.insert(*id, listed.get(id).cloned().unwrap_or_else(|| rules.off.clone()));
    }
    Ok(Read { after, thrown })
}
