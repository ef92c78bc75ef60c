//! HoleyBoard (Columbus 1.5 rules, rule text 000): three washers a side, holes worth
//! 1/3/5, cancellation by equal hole, exactly 21 only on your own third throw.

use super::events::{read_event, Event, PieceRules};
use super::{first_team, sides, start_scores, EventLog, GameConfig, GameState, PartialRound, RoundScore, RulesError, Ruling, Scores};
use crate::board::{Board, WasherBoard};
use crate::calls::WasherCall;
use crate::piece::{PieceId, Team};
use std::collections::BTreeMap;

pub const WASHERS_PER_TEAM: u32 = 3;
/// The winning score.
pub const TARGET: i64 = 21;
/// 11-0 is a skunk.
pub const SKUNK: i64 = 11;

/// Washer calls of every piece thrown so far.
pub type WasherState = BTreeMap<PieceId, WasherCall>;

/// Reads washers for the washer games: the call, its hole against the board, and the
/// transitions a washer can make (a washer flat in a cup stays there).
pub(crate) struct WasherReader<'a> {
    pub geometry: &'a WasherBoard,
    pub per_team: u32,
}

impl WasherReader<'_> {
    pub fn parse(&self, p: &super::PieceState) -> Result<WasherCall, String> {
        let call = p.washer_call()?;
        if let WasherCall::In { hole } | WasherCall::Leaner { hole } = call {
            let h = self
                .geometry
                .holes
                .get(hole)
                .ok_or_else(|| format!("hole {hole} does not exist (the board has {} holes)", self.geometry.holes.len()))?;
            if let Some(v) = p.value {
                if v != h.value {
                    return Err(format!("value {v} but hole {hole} is worth {}", h.value));
                }
            }
        } else if p.value.is_some() {
            return Err("`value` only for a washer in a hole".into());
        }
        Ok(call)
    }

    pub fn read(
        &self,
        idx: usize,
        ev: &Event,
        before: &WasherState,
        may_throw: &dyn Fn(PieceId) -> bool,
        extra: u32,
    ) -> Result<(WasherState, Vec<PieceId>), RulesError> {
        let max = self.per_team + extra;
        let known = |p: PieceId| match p.team {
            Some(_) if (1..=max).contains(&p.number) => Ok(()),
            _ => Err(format!("the washers now are red#1..red#{max} and blue#1..blue#{max}")),
        };
        let parse = |p: &super::PieceState| self.parse(p);
        let rules = PieceRules {
            known: &known,
            may_throw,
            max_new: 1,
            parse: &parse,
            off: WasherCall::Off,
            is_off: &|c: &WasherCall| *c == WasherCall::Off,
        };
        let read = read_event(idx, ev, before, &rules)?;
        for (p, was) in before {
            let now = read.after[p];
            let ok = match (was, now) {
                (WasherCall::In { hole: a }, WasherCall::In { hole: b } | WasherCall::Leaner { hole: b }) => *a == b,
                (WasherCall::In { .. }, _) => false,
                _ => true,
            };
            if !ok {
                return Err(RulesError::Inconsistent {
                    event: idx,
                    piece: p.to_string(),
                    problem: format!("was flat in a hole ({was:?}) but is now {now:?}: a washer in a cup stays there"),
                });
            }
        }
        Ok((read.after, read.thrown))
    }
}

/// Whether a washer counts as in a hole, and which.
fn hole_of(call: WasherCall, leaner_in: bool) -> Option<usize> {
    match call {
        WasherCall::In { hole } => Some(hole),
        WasherCall::Leaner { hole } if leaner_in => Some(hole),
        _ => None,
    }
}

/// Points each team has on the board (red, blue): washers in holes, equal holes cancelled
/// washer by washer.
pub fn points(state: &WasherState, values: &[u32], leaner_in: bool) -> [i64; 2] {
    let mut counts = vec![[0i64; 2]; values.len()];
    for (p, c) in state {
        if let (Some(h), Some(t)) = (hole_of(*c, leaner_in), p.team) {
            if let Some(slot) = counts.get_mut(h) {
                slot[t as usize] += 1;
            }
        }
    }
    let mut out = [0i64; 2];
    for (h, [r, b]) in counts.into_iter().enumerate() {
        let m = r.min(b);
        out[0] += (r - m) * i64::from(values[h]);
        out[1] += (b - m) * i64::from(values[h]);
    }
    out
}

/// One throw of the round as the engine saw it.
#[derive(Debug, Clone)]
struct Throw {
    team: Team,
    washer: Option<PieceId>,
    bounced: bool,
    after: WasherState,
}

#[derive(Debug, Clone, Copy)]
struct Options {
    leaner_in: bool,
    throw_off_required: bool,
    floor: bool,
    skunk: Skunk,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Skunk {
    AnyRound,
    FirstRound,
    Off,
}

/// How one team's round ended.
#[derive(Debug, Clone)]
struct Judged {
    score: i64,
    /// A valid 21 (win) or 11 (skunk, if the opponent ends the round on 0).
    claim: Option<i64>,
    rulings: Vec<String>,
}

pub(crate) fn start(config: &GameConfig, board: &Board, log: &EventLog) -> Result<GameState, RulesError> {
    let sides = sides(config.rules, log, 2)?;
    let first = first_team(log)?;
    Ok(GameState::start(config, board, start_scores(&sides, log, score_range(config, board))?, Some(first.name().into())))
}

pub(crate) fn run(config: &GameConfig, board: &Board, log: &EventLog, state: &mut GameState) -> Result<(), RulesError> {
    let geometry = board.washer().ok_or_else(|| RulesError::Board {
        board: board.name.clone(),
        rules: config.rules.name(),
        problem: "not a washer board".into(),
    })?;
    let values: Vec<u32> = geometry.holes.iter().map(|h| h.value).collect();
    let opts = Options {
        leaner_in: config.get("leaner") == "in",
        throw_off_required: config.get("throw_off") == "required",
        floor: config.get("below_zero") == "floor",
        skunk: match config.get("skunk") {
            "first_round" => Skunk::FirstRound,
            "off" => Skunk::Off,
            _ => Skunk::AnyRound,
        },
    };
    let reader = WasherReader { geometry, per_team: WASHERS_PER_TEAM };
    let mut first = first_team(log)?;
    let mut before = WasherState::new();
    let mut throws: Vec<Throw> = Vec::new();
    let mut rulings: Vec<Ruling> = Vec::new();
    let mut round_start = 0;
    for (idx, ev) in log.events.iter().enumerate() {
        state.check_not_over(idx)?;
        if throws.is_empty() {
            round_start = idx;
            before.clear();
            rulings.clear();
        }
        let expected = holeyboard_thrower(throws.len(), first);
        let team = match ev.thrower.parse::<Team>() {
            Ok(t) if t == expected => t,
            _ => return Err(RulesError::WrongThrower { event: idx, expected: expected.name().into(), found: ev.thrower.clone() }),
        };
        let may = |p: PieceId| p.team == Some(team);
        let throw = if ev.bounced {
            let mut after = before.clone();
            let mut washer = None;
            for t in &ev.throws {
                if t.team != Some(team) || !(1..=WASHERS_PER_TEAM).contains(&t.number) || before.contains_key(t) {
                    return Err(RulesError::UnknownPiece {
                        event: idx,
                        piece: t.to_string(),
                        problem: format!("not a washer {team} can throw now"),
                    });
                }
                after.insert(*t, WasherCall::Off);
                washer = Some(*t);
            }
            rulings.push(Ruling::at(idx, format!("{team}'s throw bounced off the floor: it does not count, the washer is removed and the board reset")));
            Throw { team, washer, bounced: true, after }
        } else {
            let (after, thrown) = reader.read(idx, ev, &before, &may, 0)?;
            for (p, c) in &after {
                let was_in = before.get(p).and_then(|b| hole_of(*b, opts.leaner_in));
                if let (Some(h), None, Some(owner)) = (hole_of(*c, opts.leaner_in), was_in, p.team) {
                    if owner != team && before.contains_key(p) {
                        rulings.push(Ruling::at(idx, format!("{team} knocked {p} into the {} hole: the points are {owner}'s", values[h])));
                    }
                }
            }
            Throw { team, washer: thrown.first().copied(), bounced: false, after }
        };
        before = throw.after.clone();
        throws.push(throw);
        if throws.len() < 2 * WASHERS_PER_TEAM as usize {
            state.current_round = Some(PartialRound { round: state.next_round(), events: throws.len(), rulings: rulings.clone() });
            continue;
        }
        // All six washers thrown: score the round.
        let round_no = state.next_round();
        let skunk_on = match opts.skunk {
            Skunk::AnyRound => true,
            Skunk::FirstRound => round_no == 1,
            Skunk::Off => false,
        };
        let fin = &throws[throws.len() - 1].after;
        let judge = |t: Team| judge(t, state.scores.get(t.name()), &throws, fin, &values, opts, skunk_on);
        let (mut ja, mut jb) = (judge(first), judge(first.other()));
        let (a, b) = (first, first.other());
        let mut winner = None;
        if ja.claim == Some(TARGET) {
            winner = Some(a);
            if jb.claim == Some(TARGET) {
                jb.score = state.scores.get(b.name());
                jb.rulings.push(format!("{b}'s 21 does not count: {a}'s win stood (it must be cancelled first): back to {}", jb.score));
            }
        } else if jb.claim == Some(TARGET) {
            winner = Some(b);
        } else {
            let (sa, sb) = (ja.score, jb.score);
            for (x, jx, other_score) in [(a, &mut ja, sb), (b, &mut jb, sa)] {
                if jx.claim == Some(SKUNK) {
                    if other_score == 0 {
                        winner = Some(x);
                        jx.rulings.push(format!("{x} wins by skunk, 11-0"));
                    } else {
                        jx.rulings.push(format!("skunk over: {} scored, {x} plays on to 21", x.other()));
                    }
                }
            }
        }
        for j in [&ja, &jb] {
            for r in &j.rulings {
                rulings.push(Ruling::at(idx, r.clone()));
            }
        }
        let mut points = Scores::zeros(&["red".into(), "blue".into()]);
        let mut scores = state.scores.clone();
        for (t, j) in [(a, &ja), (b, &jb)] {
            points.set(t.name(), j.score - state.scores.get(t.name()));
            scores.set(t.name(), j.score);
        }
        // The player that scores last, cancels a score or knocks in a washer throws first next.
        let mut next = first;
        let mut prev = WasherState::new();
        for t in &throws {
            if !t.bounced {
                let newly_in = t.after.iter().any(|(p, c)| {
                    hole_of(*c, opts.leaner_in).is_some() && prev.get(p).and_then(|b| hole_of(*b, opts.leaner_in)).is_none()
                });
                if newly_in {
                    next = t.team;
                }
            }
            prev = t.after.clone();
        }
        if next != first {
            rulings.push(Ruling::at(idx, format!("{next} put the last washer in a hole: {next} throws first next round")));
        }
        let round = RoundScore {
            round: round_no,
            events: [round_start, idx],
            first: first.name().into(),
            points,
            scores,
            next_first: Some(next.name().into()),
            rulings: std::mem::take(&mut rulings),
        };
        state.push_round(round);
        if let Some(w) = winner {
            state.win(w.name());
        }
        first = next;
        throws.clear();
    }
    state.up_next = Some(holeyboard_thrower(throws.len(), first).name().into());
    Ok(())
}

/// Who throws after `n` throws of a HoleyBoard round: the first team's three washers,
/// then the other's.
fn holeyboard_thrower(n: usize, first: Team) -> Team {
    if n < WASHERS_PER_TEAM as usize {
        first
    } else {
        first.other()
    }
}

/// The scores a game in progress can have: up to 20 (21 wins); below zero only by going over 21 with
/// `below_zero=allowed`. Going over from `s` with `p` points (s + p > 21) leaves s - p, lowest at s = 22 - P for the
/// most points P a team can score in a round, so 22 - 2P; from there no further bust is possible (it would need more
/// than P points).
fn score_range(config: &GameConfig, board: &Board) -> std::ops::RangeInclusive<i64> {
    let top = board.washer().and_then(|w| w.holes.iter().map(|h| i64::from(h.value)).max()).unwrap_or(0);
    let most = i64::from(WASHERS_PER_TEAM) * top;
    let lowest = if config.get("below_zero") == "floor" { 0 } else { (TARGET + 1 - 2 * most).min(0) };
    lowest..=TARGET - 1
}

/// Judges one team's round: its new score and whether it validly reached 21 (or 11).
fn judge(
    x: Team,
    start: i64,
    throws: &[Throw],
    fin: &WasherState,
    values: &[u32],
    opts: Options,
    skunk_on: bool,
) -> Judged {
    let pts = |s: &WasherState| points(s, values, opts.leaner_in)[x as usize];
    let p = pts(fin);
    let total = start + p;
    let mut rulings = Vec::new();
    if total > TARGET {
        let mut score = start - p;
        let floor = opts.floor && score < 0;
        if floor {
            score = 0;
        }
        rulings.push(format!(
            "{x} went over 21 ({start} + {p} = {total}): {start} - {p} = {}{}",
            start - p,
            if floor { ", floored at 0" } else { "" }
        ));
        return Judged { score, claim: None, rulings };
    }
    let own: Vec<&Throw> = throws.iter().filter(|t| t.team == x).collect();
    for mark in [TARGET, SKUNK] {
        if total != mark || (mark == SKUNK && !skunk_on) {
            continue;
        }
        return match own_path(x, start, mark, p, &own, fin, &pts, opts) {
            Ok(how) => {
                rulings.push(format!("{x} reached {mark} {how}"));
                Judged { score: total, claim: Some(mark), rulings }
            }
            Err(why) if mark == TARGET => {
                rulings.push(format!("{why}: back to {start}"));
                Judged { score: start, claim: None, rulings }
            }
            Err(why) => {
                rulings.push(format!("{why}: no skunk, {x} has 11 and plays on to 21"));
                Judged { score: total, claim: None, rulings }
            }
        };
    }
    Judged { score: total, claim: None, rulings }
}

/// Whether team `x` reached `mark` on its own third throw (scoring it or sticking the vic).
#[allow(clippy::too_many_arguments)]
fn own_path(
    x: Team,
    start: i64,
    mark: i64,
    p: i64,
    own: &[&Throw],
    fin: &WasherState,
    pts: &dyn Fn(&WasherState) -> i64,
    opts: Options,
) -> Result<&'static str, String> {
    let need = mark - start;
    let r: Vec<i64> = own.iter().map(|t| pts(&t.after)).collect();
    let r3 = r[2];
    if p != r3 {
        return Err(if p > r3 {
            format!("{x} was given {mark} by the opponent knocking a washer in")
        } else {
            format!("{x} was cancelled back to {mark}")
        });
    }
    if r3 == need && r[1] != need {
        return Ok("on the third throw");
    }
    // Reached before the third throw: Stick the Vic.
    let j = if r[0] == need { 1 } else { 2 };
    if j == 1 && opts.throw_off_required {
        let second = &own[1];
        let thrown_off = second.bounced || second.washer.map_or(true, |w| second.after.get(&w) == Some(&WasherCall::Off));
        if !thrown_off {
            return Err(format!("stick the vic failed: {x} had {mark} after the first washer but did not throw the second off"));
        }
    }
    let third = &own[2];
    let Some(w) = third.washer.filter(|_| !third.bounced) else {
        return Err("stick the vic failed: the last washer did not stick".to_string());
    };
    match third.after.get(&w) {
        Some(WasherCall::OnBoard) => {}
        Some(WasherCall::In { .. } | WasherCall::Leaner { .. }) => {
            return Err("stick the vic failed: the last washer went in a hole (a cancelling throw is no stick the vic)".to_string())
        }
        _ => return Err("stick the vic failed: the last washer did not stick".to_string()),
    }
    if fin.get(&w) != Some(&WasherCall::OnBoard) {
        return Err(format!("{x}'s stick the vic ({w}) was knocked off: win cancelled"));
    }
    Ok("and stuck the vic")
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn swap(s: &WasherState) -> WasherState {
        s.iter().map(|(p, c)| (PieceId { team: p.team.map(Team::other), number: p.number }, *c)).collect()
    }

    fn states() -> impl Strategy<Value = WasherState> {
        proptest::collection::vec((0u8..4, 0usize..3), 6).prop_map(|v| {
            v.into_iter()
                .enumerate()
                .map(|(i, (k, hole))| {
                    let team = if i < 3 { Team::Red } else { Team::Blue };
                    let call = match k {
                        0 => WasherCall::In { hole },
                        1 => WasherCall::Leaner { hole },
                        2 => WasherCall::OnBoard,
                        _ => WasherCall::Off,
                    };
                    (PieceId::of_team(team, (i % 3) as u32 + 1), call)
                })
                .collect()
        })
    }

    proptest! {
        #[test]
        fn cancellation_is_symmetric_between_teams(s in states(), leaner_in in any::<bool>()) {
            let values = [5, 3, 1];
            let [r, b] = points(&s, &values, leaner_in);
            let [r2, b2] = points(&swap(&s), &values, leaner_in);
            prop_assert_eq!((r, b), (b2, r2));
            prop_assert!(r >= 0 && b >= 0);
            // Equal holes cancel: in no hole do both teams keep points.
            prop_assert!(r + b <= 2 * 15);
        }
    }

    #[test]
    fn cancellation_is_by_hole_not_by_points() {
        let mut s = WasherState::new();
        s.insert(PieceId::of_team(Team::Red, 1), WasherCall::In { hole: 0 });
        s.insert(PieceId::of_team(Team::Blue, 1), WasherCall::In { hole: 1 });
        s.insert(PieceId::of_team(Team::Blue, 2), WasherCall::In { hole: 2 });
        s.insert(PieceId::of_team(Team::Blue, 3), WasherCall::In { hole: 2 });
        assert_eq!(points(&s, &[5, 3, 1], true), [5, 5]);
    }
}
