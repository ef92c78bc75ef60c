//! Rules engine: scores whole games from an event log of calls, round by round, with the
//! reason for every non-obvious ruling.
//!
//! The engine is pure: it takes an [`EventLog`] (after every throw, shot or sub-turn, the
//! call of every piece on the board, see `docs/events.md`), a [`GameConfig`] (which rules
//! and which options) and the [`Board`] the calls refer to, and returns a [`GameState`]:
//! the [`RoundScore`] of every finished round, the totals, who throws first next, and the
//! winner or "in progress". Bad input is a [`RulesError`] naming the event; a situation
//! the calls cannot decide (two weights in the same zone without positions) stops the
//! game with status `needs_review` instead of a confident guess.
//!
//! One file per game family: [`shuffleboard`] (Knock Off, Tap & Draw, Horse Collar,
//! Baseball, Crazy Eight), [`holeyboard`], [`yocu`] (4- and 9-hole sides), [`sjoelen`].

pub mod events;
pub mod holeyboard;
pub mod shuffleboard;
pub mod sjoelen;
pub mod yocu;

pub use events::{CallName, Event, EventLog, LogBuilder, PieceState, EVENTS_FORMAT};

use crate::board::{Board, BoardKind};
use serde::ser::SerializeMap;
use serde::{Deserialize, Serialize, Serializer};
use std::fmt;
use std::str::FromStr;

/// The games the engine scores.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Rules {
    KnockOff,
    TapAndDraw,
    HorseCollar,
    Baseball,
    CrazyEight,
    #[serde(rename = "holeyboard")]
    HoleyBoard,
    #[serde(rename = "yocu-4")]
    Yocu4,
    #[serde(rename = "yocu-9")]
    Yocu9,
    Sjoelen,
}

impl Rules {
    pub const ALL: [Rules; 9] = [
        Rules::KnockOff,
        Rules::TapAndDraw,
        Rules::HorseCollar,
        Rules::Baseball,
        Rules::CrazyEight,
        Rules::HoleyBoard,
        Rules::Yocu4,
        Rules::Yocu9,
        Rules::Sjoelen,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Rules::KnockOff => "knock-off",
            Rules::TapAndDraw => "tap-and-draw",
            Rules::HorseCollar => "horse-collar",
            Rules::Baseball => "baseball",
            Rules::CrazyEight => "crazy-eight",
            Rules::HoleyBoard => "holeyboard",
            Rules::Yocu4 => "yocu-4",
            Rules::Yocu9 => "yocu-9",
            Rules::Sjoelen => "sjoelen",
        }
    }

    /// The built-in board used when the event log names none.
    pub fn default_board(self) -> &'static str {
        match self {
            Rules::KnockOff | Rules::TapAndDraw | Rules::HorseCollar | Rules::Baseball | Rules::CrazyEight => {
                "shuffleboard-22ft"
            }
            Rules::HoleyBoard => "holeyboard",
            Rules::Yocu4 => "yocu-4",
            Rules::Yocu9 => "yocu-9",
            Rules::Sjoelen => "sjoelbak",
        }
    }

    /// The board family the game is played on.
    pub fn board_kind(self) -> BoardKind {
        match self {
            Rules::HoleyBoard | Rules::Yocu4 | Rules::Yocu9 => BoardKind::Washer,
            Rules::Sjoelen => BoardKind::Sjoelbak,
            _ => BoardKind::Shuffleboard,
        }
    }

    /// Whether the sides are the two colours (`red`, `blue`) rather than named players.
    pub fn team_colours(self) -> bool {
        matches!(self, Rules::KnockOff | Rules::TapAndDraw | Rules::HoleyBoard | Rules::Yocu4 | Rules::Yocu9)
    }

    /// The options this game accepts, with their values and defaults.
    pub fn options(self) -> &'static [OptionSpec] {
        const TARGET_15: OptionSpec = OptionSpec {
            key: "target",
            values: OptionValues::Number { min: 1, max: 1000 },
            default: "15",
            help: "points that win the game",
        };
        const FOUL: OptionSpec = OptionSpec {
            key: "foul_line",
            values: OptionValues::Choice(&["short", "long"]),
            default: "short",
            help: "designated foul line a weight must clear to be in play",
        };
        const CORNER: OptionSpec = OptionSpec {
            key: "corner",
            values: OptionValues::Choice(&["26", "13"]),
            default: "26",
            help: "points for a corner hanger (house rule: 13, as an end hanger)",
        };
        const FIVE: OptionSpec = OptionSpec {
            key: "five_zone",
            values: OptionValues::Choice(&["trey", "five"]),
            default: "trey",
            help: "a weight in a board's painted 5 zone (9-ft bank board) counts as the trey, or 5",
        };
        const HICKEY: OptionSpec = OptionSpec {
            key: "hickey",
            values: OptionValues::Choice(&["off", "on"]),
            default: "off",
            help: "count a hickey for every scoreless turn",
        };
        match self {
            Rules::KnockOff | Rules::TapAndDraw => &[TARGET_15, FOUL],
            Rules::HorseCollar => &[
                OptionSpec { key: "target", values: OptionValues::Number { min: 1, max: 10_000 }, default: "51", help: "points that end the game" },
                FOUL,
                CORNER,
                FIVE,
                HICKEY,
            ],
            Rules::Baseball => &[
                OptionSpec { key: "innings", values: OptionValues::Number { min: 1, max: 100 }, default: "9", help: "innings (frames) in a game" },
                FOUL,
                CORNER,
                FIVE,
                HICKEY,
            ],
            Rules::CrazyEight => &[TARGET_15, HICKEY],
            Rules::HoleyBoard => &[
                OptionSpec {
                    key: "skunk",
                    values: OptionValues::Choice(&["any_round", "first_round", "off"]),
                    default: "any_round",
                    help: "when 11-0 wins: at the end of any round, only the first round, or never",
                },
                OptionSpec {
                    key: "leaner",
                    values: OptionValues::Choice(&["in", "out"]),
                    default: "in",
                    help: "a washer tilted in a hole counts as in it, or not until it lies flat",
                },
                OptionSpec {
                    key: "throw_off",
                    values: OptionValues::Choice(&["required", "lenient"]),
                    default: "required",
                    help: "21 with the first washer: the second must be thrown off the board, or must merely not score",
                },
                OptionSpec {
                    key: "below_zero",
                    values: OptionValues::Choice(&["allowed", "floor"]),
                    default: "allowed",
                    help: "going over 21 may take the score below zero, or stops at zero",
                },
            ],
            Rules::Yocu4 | Rules::Yocu9 => &[
                OptionSpec { key: "bust_to", values: OptionValues::Number { min: 0, max: 20 }, default: "13", help: "score a team goes back to when it goes over 21" },
                OptionSpec {
                    key: "bonus_toss",
                    values: OptionValues::Choice(&["on", "off"]),
                    default: "on",
                    help: "a player with all 4 washers flat in gets a bonus toss right after the fourth",
                },
            ],
            Rules::Sjoelen => &[OptionSpec {
                key: "turns",
                values: OptionValues::Number { min: 1, max: 100 },
                default: "10",
                help: "turns per player in a match",
            }],
        }
    }
}

impl fmt::Display for Rules {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Rules {
    type Err = RulesError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Rules::ALL.into_iter().find(|r| r.name() == s).ok_or_else(|| RulesError::UnknownRules {
            name: s.to_string(),
            known: Rules::ALL.iter().map(|r| r.name()).collect::<Vec<_>>().join(", "),
        })
    }
}

/// One option a game accepts.
#[derive(Debug, Clone, Copy)]
pub struct OptionSpec {
    pub key: &'static str,
    pub values: OptionValues,
    pub default: &'static str,
    pub help: &'static str,
}

/// The values an option accepts.
#[derive(Debug, Clone, Copy)]
pub enum OptionValues {
    Choice(&'static [&'static str]),
    Number { min: u32, max: u32 },
}

impl OptionValues {
    fn describe(&self) -> String {
        match self {
            OptionValues::Choice(c) => format!("one of {}", c.join(", ")),
            OptionValues::Number { min, max } => format!("a whole number from {min} to {max}"),
        }
    }

    fn accepts(&self, v: &str) -> bool {
        match self {
            OptionValues::Choice(c) => c.contains(&v),
            OptionValues::Number { min, max } => v.parse::<u32>().is_ok_and(|n| (*min..=*max).contains(&n)),
        }
    }
}

/// A game and its options, validated; every option has its effective value.
#[derive(Debug, Clone, PartialEq)]
pub struct GameConfig {
    pub rules: Rules,
    options: Vec<(&'static str, String)>,
}

impl GameConfig {
    /// The game with every option at its default.
    pub fn new(rules: Rules) -> Self {
        GameConfig { rules, options: rules.options().iter().map(|o| (o.key, o.default.to_string())).collect() }
    }

    /// The game with `KEY=VALUE` options applied over the defaults.
    pub fn with_options<S: AsRef<str>>(rules: Rules, options: &[S]) -> Result<Self, RulesError> {
        let mut cfg = GameConfig::new(rules);
        for text in options {
            let text = text.as_ref();
            let (k, v) = text.split_once('=').ok_or_else(|| RulesError::OptionSyntax { text: text.to_string() })?;
            cfg.set(k.trim(), v.trim())?;
        }
        Ok(cfg)
    }

    /// Sets one option.
    pub fn set(&mut self, key: &str, value: &str) -> Result<(), RulesError> {
        let spec = self.rules.options().iter().find(|o| o.key == key).ok_or_else(|| RulesError::UnknownOption {
            rules: self.rules.name(),
            key: key.to_string(),
            known: self.rules.options().iter().map(|o| o.key).collect::<Vec<_>>().join(", "),
        })?;
        if !spec.values.accepts(value) {
            return Err(RulesError::BadOptionValue {
                key: key.to_string(),
                value: value.to_string(),
                expected: spec.values.describe(),
            });
        }
        for (k, v) in &mut self.options {
            if *k == key {
                *v = value.to_string();
            }
        }
        Ok(())
    }

    /// An option's effective value (every key of the game has one).
    pub fn get(&self, key: &str) -> &str {
        self.options.iter().find(|(k, _)| *k == key).map(|(_, v)| v.as_str()).unwrap_or("")
    }

    /// A numeric option's value (validated on `set`).
    pub fn number(&self, key: &str) -> u32 {
        self.get(key).parse().unwrap_or(0)
    }

    pub fn options(&self) -> &[(&'static str, String)] {
        &self.options
    }
}

/// Everything that can be wrong with a game's input.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RulesError {
    #[error("unknown rules `{name}` (known: {known})")]
    UnknownRules { name: String, known: String },
    #[error("option `{text}` is not KEY=VALUE")]
    OptionSyntax { text: String },
    #[error("{rules} has no option `{key}` (options: {known})")]
    UnknownOption { rules: &'static str, key: String, known: String },
    #[error("option `{key}={value}`: expected {expected}")]
    BadOptionValue { key: String, value: String, expected: String },
    #[error("event log is not valid JSON for this format: {message}")]
    Json { message: String },
    #[error("event log format {found} is not supported (this build reads format {expected})")]
    Format { found: u32, expected: u32 },
    #[error("event log is for `{log}` but the game is `{game}`")]
    RulesMismatch { log: String, game: &'static str },
    #[error("event log header: {problem}")]
    Header { problem: String },
    #[error("board `{board}` cannot be used for {rules}: {problem}")]
    Board { board: String, rules: &'static str, problem: String },
    #[error("event {event}: unknown piece {piece}: {problem}")]
    UnknownPiece { event: usize, piece: String, problem: String },
    #[error("event {event}: {piece} is listed more than once (a piece in two places)")]
    DuplicatePiece { event: usize, piece: String },
    #[error("event {event}: thrown by `{found}` but it is {expected}'s turn")]
    WrongThrower { event: usize, expected: String, found: String },
    #[error("event {event}: {problem}")]
    TooManyPieces { event: usize, problem: String },
    #[error("event {event}: {piece}: {problem}")]
    BadCall { event: usize, piece: String, problem: String },
    #[error("event {event}: {piece}: {problem}")]
    Inconsistent { event: usize, piece: String, problem: String },
    #[error("event {event}: the game was already over ({winner} won)")]
    AfterGameOver { event: usize, winner: String },
    /// Not an input error: the calls cannot decide. [`play`] turns it into status `needs_review`.
    #[error("event {event}: needs review: {reason}")]
    NeedsReview { event: usize, reason: String },
}

/// Why a round went the way it did, for every non-obvious ruling.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Ruling {
    /// The event (index into the log's `events`) the ruling is about, if one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub event: Option<usize>,
    pub reason: String,
}

impl Ruling {
    pub fn at(event: usize, reason: impl Into<String>) -> Self {
        Ruling { event: Some(event), reason: reason.into() }
    }
    pub fn general(reason: impl Into<String>) -> Self {
        Ruling { event: None, reason: reason.into() }
    }
}

/// Points or totals per side, in the game's side order; serialised as a JSON object.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Scores(pub Vec<(String, i64)>);

impl Scores {
    pub fn zeros(sides: &[String]) -> Self {
        Scores(sides.iter().map(|s| (s.clone(), 0)).collect())
    }
    pub fn get(&self, side: &str) -> i64 {
        self.0.iter().find(|(s, _)| s == side).map(|(_, v)| *v).unwrap_or(0)
    }
    pub fn set(&mut self, side: &str, value: i64) {
        match self.0.iter_mut().find(|(s, _)| s == side) {
            Some((_, v)) => *v = value,
            None => self.0.push((side.to_string(), value)),
        }
    }
    /// Adds points; totals saturate instead of wrapping (inputs are range-checked, so this never binds in a game).
    pub fn add(&mut self, side: &str, value: i64) {
        let v = self.get(side);
        self.set(side, v.saturating_add(value));
    }
}

impl Serialize for Scores {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(self.0.len()))?;
        for (k, v) in &self.0 {
            m.serialize_entry(k, v)?;
        }
        m.end()
    }
}

/// The result of one finished round (frame, inning, turn).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RoundScore {
    /// 1-based round number.
    pub round: u32,
    /// The first and last event of the round (indices into the log's `events`).
    pub events: [usize; 2],
    /// Who threw first this round.
    pub first: String,
    /// Points scored this round, per side (negative for YOCU misses, HoleyBoard busts).
    pub points: Scores,
    /// Totals after the round.
    pub scores: Scores,
    /// Who throws first next round (`None` once the game is over).
    pub next_first: Option<String>,
    pub rulings: Vec<Ruling>,
}

/// Where the game stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    InProgress,
    Won,
    /// Sjoelen only: the match is complete and the best totals are equal.
    Tied,
    /// The calls cannot decide a round (see `review`); rounds before it stand.
    NeedsReview,
}

/// A round that has started but not finished.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PartialRound {
    pub round: u32,
    /// Events of the round so far.
    pub events: usize,
    pub rulings: Vec<Ruling>,
}

/// The whole game as scored from the log.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GameState {
    pub rules: Rules,
    pub board: String,
    pub options: EffectiveOptions,
    pub rounds: Vec<RoundScore>,
    pub scores: Scores,
    pub status: Status,
    pub winner: Option<String>,
    /// Who throws (or shoots, or plays) first in the next round.
    pub next_first: Option<String>,
    /// Who the rules expect to throw (shoot, play) the next event: the turn order of
    /// the game as the log leaves it (`None` once the game is over or while it needs
    /// review).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub up_next: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub current_round: Option<PartialRound>,
    /// Scoreless turns per side, when the `hickey` option is on.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hickeys: Option<Scores>,
    /// Why the game needs review, when it does.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub review: Option<Ruling>,
    /// Rulings about the game as a whole (e.g. how a tie was broken).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub rulings: Vec<Ruling>,
}

/// Option values by key, serialised as a JSON object of strings.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct EffectiveOptions(pub Vec<(String, String)>);

impl Serialize for EffectiveOptions {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(self.0.len()))?;
        for (k, v) in &self.0 {
            m.serialize_entry(k, v)?;
        }
        m.end()
    }
}

impl GameState {
    /// A game about to start: no rounds, totals from `start`.
    pub fn start(config: &GameConfig, board: &Board, scores: Scores, first: Option<String>) -> Self {
        GameState {
            rules: config.rules,
            board: match &board.variant {
                Some(v) => format!("{}@{v}", board.name),
                None => board.name.clone(),
            },
            options: EffectiveOptions(config.options().iter().map(|(k, v)| (k.to_string(), v.clone())).collect()),
            rounds: Vec::new(),
            scores,
            status: Status::InProgress,
            winner: None,
            up_next: first.clone(),
            next_first: first,
            current_round: None,
            hickeys: None,
            review: None,
            rulings: Vec::new(),
        }
    }

    /// Records a finished round and moves the totals on.
    pub fn push_round(&mut self, round: RoundScore) {
        self.scores = round.scores.clone();
        self.next_first = round.next_first.clone();
        self.current_round = None;
        self.rounds.push(round);
    }

    /// Ends the game with a winner.
    pub fn win(&mut self, winner: &str) {
        self.status = Status::Won;
        self.winner = Some(winner.to_string());
        self.next_first = None;
        self.up_next = None;
        if let Some(r) = self.rounds.last_mut() {
            r.next_first = None;
        }
    }

    /// The number of the round being played next (1-based).
    pub fn next_round(&self) -> u32 {
        self.rounds.len() as u32 + 1
    }

    /// An error if the game is already won: nothing may follow the winning round.
    pub fn check_not_over(&self, event: usize) -> Result<(), RulesError> {
        match (&self.status, &self.winner) {
            (Status::Won, Some(w)) => Err(RulesError::AfterGameOver { event, winner: w.clone() }),
            _ => Ok(()),
        }
    }
}

/// Scores a whole game from its event log.
///
/// A [`RulesError::NeedsReview`] from a round becomes status `needs_review` with the
/// rounds before it; every other error is returned.
pub fn play(config: &GameConfig, board: &Board, log: &EventLog) -> Result<GameState, RulesError> {
    if log.format != EVENTS_FORMAT {
        return Err(RulesError::Format { found: log.format, expected: EVENTS_FORMAT });
    }
    if let Some(name) = &log.rules {
        if name != config.rules.name() {
            return Err(RulesError::RulesMismatch { log: name.clone(), game: config.rules.name() });
        }
    }
    if board.kind() != config.rules.board_kind() {
        return Err(RulesError::Board {
            board: board.name.clone(),
            rules: config.rules.name(),
            problem: format!("it is a {:?} board, the game needs a {:?} board", board.kind(), config.rules.board_kind())
                .to_lowercase(),
        });
    }
    // An event marked for review stops the game there until it is amended: the
    // events before it are scored, nothing after it is guessed.
    let marked = log.events.iter().enumerate().find_map(|(i, e)| e.review.clone().map(|why| (i, why)));
    let reviewed;
    let log = match &marked {
        Some((idx, _)) => {
            reviewed = EventLog { events: log.events[..*idx].to_vec(), ..log.clone() };
            &reviewed
        }
        None => log,
    };
    let mut state = match config.rules {
        Rules::KnockOff | Rules::TapAndDraw | Rules::HorseCollar | Rules::Baseball | Rules::CrazyEight => {
            shuffleboard::start(config, board, log)?
        }
        Rules::HoleyBoard => holeyboard::start(config, board, log)?,
        Rules::Yocu4 | Rules::Yocu9 => yocu::start(config, board, log)?,
        Rules::Sjoelen => sjoelen::start(config, board, log)?,
    };
    let result = match config.rules {
        Rules::KnockOff | Rules::TapAndDraw | Rules::HorseCollar | Rules::Baseball | Rules::CrazyEight => {
            shuffleboard::run(config, board, log, &mut state)
        }
        Rules::HoleyBoard => holeyboard::run(config, board, log, &mut state),
        Rules::Yocu4 | Rules::Yocu9 => yocu::run(config, board, log, &mut state),
        Rules::Sjoelen => sjoelen::run(config, board, log, &mut state),
    };
    match result {
        Ok(()) => {
            if let (Some((idx, why)), Status::InProgress) = (marked, state.status) {
                state.status = Status::NeedsReview;
                state.review = Some(Ruling::at(idx, format!("event marked for review: {why}")));
            }
            if state.status != Status::InProgress {
                state.up_next = None;
            }
            Ok(state)
        }
        Err(RulesError::NeedsReview { event, reason }) => {
            state.status = Status::NeedsReview;
            state.up_next = None;
            state.review = Some(Ruling::at(event, reason));
            Ok(state)
        }
        Err(e) => Err(e),
    }
}

/// The sides of a game from the log header: `red`/`blue` for colour games, else the
/// declared players (at least `min` of them, distinct).
pub(crate) fn sides(rules: Rules, log: &EventLog, min: usize) -> Result<Vec<String>, RulesError> {
    if rules.team_colours() {
        if !log.players.is_empty() {
            let mut p = log.players.clone();
            p.sort();
            if p != ["blue", "red"] {
                return Err(RulesError::Header {
                    problem: format!("{} is played by the teams `red` and `blue`, not {:?}", rules, log.players),
                });
            }
        }
        return Ok(vec!["red".into(), "blue".into()]);
    }
    if log.players.len() < min {
        return Err(RulesError::Header {
            problem: format!("{rules} needs `players` (at least {min}, in playing order), got {}", log.players.len()),
        });
    }
    for (i, p) in log.players.iter().enumerate() {
        if p.is_empty() || log.players[..i].contains(p) {
            return Err(RulesError::Header { problem: format!("player names must be distinct and non-empty: `{p}`") });
        }
    }
    Ok(log.players.clone())
}

/// Starting totals: zeros, or the header's `start_scores` (to resume a game), each a score the game can be at
/// before it is over (`allowed`, from the game's rules).
pub(crate) fn start_scores(sides: &[String], log: &EventLog, allowed: std::ops::RangeInclusive<i64>) -> Result<Scores, RulesError> {
    let mut s = Scores::zeros(sides);
    for (k, v) in &log.start_scores {
        if !sides.contains(k) {
            return Err(RulesError::Header { problem: format!("start_scores names `{k}`, not a side of this game ({})", sides.join(", ")) });
        }
        if !allowed.contains(v) {
            return Err(RulesError::Header {
                problem: format!(
                    "start_scores: `{k}` = {v} is not a score a game in progress can have (from {} to {})",
                    allowed.start(),
                    allowed.end()
                ),
            });
        }
        s.set(k, *v);
    }
    Ok(s)
}

/// The side throwing first in round 1, for colour games (required in the header).
pub(crate) fn first_team(log: &EventLog) -> Result<crate::piece::Team, RulesError> {
    match log.first.as_deref() {
        Some(f) => f.parse().map_err(|_| RulesError::Header { problem: format!("`first` must be `red` or `blue`, got `{f}`") }),
        None => Err(RulesError::Header { problem: "`first` (the team throwing first in round 1) is required".into() }),
    }
}
