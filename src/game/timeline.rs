//! The scored timeline of a recorded match: one row per match event (throw, round
//! over, board cleared, game over) with its time, the calls and margins of a throw,
//! and the totals after it; written as JSON or CSV (columns in `docs/match.md`).

use super::{CallMargin, MatchEvent};
use crate::rules::{GameState, Scores, Status};
use serde::Serialize;

/// One row of the timeline.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TimelineRow {
    /// Seconds from the video's start.
    pub time_s: f64,
    pub frame: u64,
    /// `throw`, `round_over`, `cleared` or `game_over`.
    pub event: &'static str,
    /// Throws: the event's index in the event log.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub index: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub thrower: Option<String>,
    /// Throws: every piece's call and signed margin (mm) as measured.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub calls: Vec<CallMargin>,
    /// The round being played (1-based; sjoelen: the turn).
    pub round: u32,
    /// Totals after the event (finished rounds only: a round counts once it is over).
    pub scores: Scores,
    pub status: Status,
    /// Why the event is marked for review, if it is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub review: Option<String>,
}

/// The timeline so far.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Timeline {
    pub rows: Vec<TimelineRow>,
}

/// The CSV's fixed columns; one `score_SIDE` column per side follows them.
pub const CSV_COLUMNS: [&str; 8] = ["time_s", "frame", "event", "index", "thrower", "calls", "round", "status"];

impl Timeline {
    /// Adds the row of a match event, with the game's state after it (`watch` and
    /// `ignored` events are not part of the timeline).
    pub fn record(&mut self, e: &MatchEvent, state: &GameState) {
        let round = match state.status {
            Status::InProgress | Status::NeedsReview => state.next_round(),
            _ => state.rounds.len() as u32,
        };
        let row = |time_s: f64, frame: u64, event: &'static str| TimelineRow {
            time_s,
            frame,
            event,
            index: None,
            thrower: None,
            calls: Vec::new(),
            round,
            scores: state.scores.clone(),
            status: state.status,
            review: None,
        };
        let r = match e {
            MatchEvent::Throw { index, entry, calls } => TimelineRow {
                index: Some(*index),
                thrower: Some(entry.thrower.clone()),
                calls: calls.clone(),
                review: entry.review.clone(),
                ..row(entry.time_s.unwrap_or(0.0), entry.frame.unwrap_or(0), "throw")
            },
            MatchEvent::RoundOver { frame, time_s, round: r } => TimelineRow { round: r.round, ..row(*time_s, *frame, "round_over") },
            MatchEvent::Cleared { frame, time_s } => row(*time_s, *frame, "cleared"),
            MatchEvent::GameOver { frame, time_s, .. } => row(*time_s, *frame, "game_over"),
            MatchEvent::Ignored { .. } | MatchEvent::Watch { .. } => return,
        };
        self.rows.push(r);
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("a timeline always serialises") + "\n"
    }

    /// The timeline as CSV: [`CSV_COLUMNS`], then `score_SIDE` per side (in the game's
    /// order) and `review`; calls as `piece=call(+margin mm)` joined by `; `.
    pub fn to_csv(&self, sides: &[String]) -> Result<Vec<u8>, csv::Error> {
        let mut w = csv::Writer::from_writer(Vec::new());
        let mut head: Vec<String> = CSV_COLUMNS.iter().map(|c| c.to_string()).collect();
        head.extend(sides.iter().map(|s| format!("score_{s}")));
        head.push("review".into());
        w.write_record(&head)?;
        for r in &self.rows {
            let calls: Vec<String> = r.calls.iter().map(|c| format!("{}={}({:+.1} mm)", c.piece, c.call, c.margin_mm)).collect();
            let status = serde_json::to_value(r.status).ok().and_then(|v| v.as_str().map(str::to_string)).unwrap_or_default();
            let mut rec = vec![
                format!("{:.3}", r.time_s),
                r.frame.to_string(),
                r.event.to_string(),
                r.index.map(|i| i.to_string()).unwrap_or_default(),
                r.thrower.clone().unwrap_or_default(),
                calls.join("; "),
                r.round.to_string(),
                status,
            ];
            rec.extend(sides.iter().map(|s| r.scores.get(s).to_string()));
            rec.push(r.review.clone().unwrap_or_default());
            w.write_record(&rec)?;
        }
        w.into_inner().map_err(|e| csv::Error::from(e.into_error()))
    }
}
