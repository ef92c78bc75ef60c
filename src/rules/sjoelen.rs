//! Sjoelen (S 240 competition rules, rule text 003): 30 discs, 3 sub-turns a turn with the
//! discs in compartments kept, 20 a full set and the rest at gate value, extra discs for
//! 148 after one or two sub-turns, 10 turns a match.

use super::{sides, EventLog, GameConfig, GameState, PartialRound, RoundScore, RulesError, Ruling, Scores, Status};
use crate::board::Board;
use crate::calls::SjoelCall;
use std::collections::BTreeSet;

/// Discs a turn starts with.
pub const DISCS: u32 = 30;
/// Sub-turns in a turn.
pub const SUB_TURNS: u32 = 3;
/// The score that earns extra discs after the first (2 discs) or second (1 disc) sub-turn.
pub const EXTRA_DISC_SCORE: i64 = 148;
/// The most discs a turn can have: 30 and 2 extra.
pub const MAX_DISCS: u32 = DISCS + 2;

/// A full set (one disc in every compartment) counts double the sum of the gate values
/// (20 on the standard 1-2-3-4 board); the rest count their gate's value.
pub fn score(counts: &[u32], values: &[u32]) -> i64 {
    let sets = i64::from(counts.iter().copied().min().unwrap_or(0));
    let set_value: i64 = 2 * values.iter().map(|v| i64::from(*v)).sum::<i64>();
    let rest: i64 = counts.iter().zip(values).map(|(c, v)| (i64::from(*c) - sets) * i64::from(*v)).sum();
    sets * set_value + rest
}

/// A turn in progress.
#[derive(Debug, Clone)]
struct Turn {
    player: String,
    sub_turns: u32,
    counts: Vec<u32>,
    allowed: u32,
    extras: bool,
}

pub(crate) fn start(config: &GameConfig, board: &Board, log: &EventLog) -> Result<GameState, RulesError> {
    let sides = sides(config.rules, log, 1)?;
    if !log.start_scores.is_empty() {
        return Err(RulesError::Header { problem: "sjoelen logs start from the first turn: no `start_scores`".into() });
    }
    if log.first.as_ref().is_some_and(|f| *f != sides[0]) {
        return Err(RulesError::Header { problem: format!("`first` must be the first of `players` (`{}`)", sides[0]) });
    }
    Ok(GameState::start(config, board, Scores::zeros(&sides), Some(sides[0].clone())))
}

pub(crate) fn run(config: &GameConfig, board: &Board, log: &EventLog, state: &mut GameState) -> Result<(), RulesError> {
    let geometry = board.sjoelbak().ok_or_else(|| RulesError::Board {
        board: board.name.clone(),
        rules: config.rules.name(),
        problem: "not a sjoelbak".into(),
    })?;
    let values: Vec<u32> = geometry.compartments.iter().map(|c| c.value).collect();
    let turns = config.number("turns");
    let players: Vec<String> = state.scores.0.iter().map(|(p, _)| p.clone()).collect();
    let mut k = 0usize;
    let mut turn: Option<Turn> = None;
    let mut round_start = 0usize;
    let mut points = Scores::zeros(&players);
    let mut rulings: Vec<Ruling> = Vec::new();
    for (idx, ev) in log.events.iter().enumerate() {
        if state.status != Status::InProgress {
            return Err(RulesError::AfterGameOver {
                event: idx,
                winner: state.winner.clone().unwrap_or_else(|| "the match is complete, tied".into()),
            });
        }
        if ev.bounced || !ev.throws.is_empty() {
            return Err(RulesError::BadCall {
                event: idx,
                piece: "event".into(),
                problem: "sjoelen sub-turns take no `bounced` or `throws`".into(),
            });
        }
        let expected = &players[k];
        if ev.thrower != *expected {
            return Err(RulesError::WrongThrower { event: idx, expected: expected.clone(), found: ev.thrower.clone() });
        }
        let t = turn.get_or_insert_with(|| Turn {
            player: expected.clone(),
            sub_turns: 0,
            counts: vec![0; values.len()],
            allowed: DISCS,
            extras: false,
        });
        // Read the discs in compartments.
        let mut seen = BTreeSet::new();
        let mut counts = vec![0u32; values.len()];
        let mut too_many = None;
        for p in &ev.pieces {
            if p.piece.team.is_some() || p.piece.number == 0 || p.piece.number > MAX_DISCS {
                return Err(RulesError::UnknownPiece {
                    event: idx,
                    piece: p.piece.to_string(),
                    problem: format!("sjoelen discs are disc#1..disc#{DISCS} (disc#{} and disc#{MAX_DISCS} when extra discs are earned)", DISCS + 1),
                });
            }
            let call = p.sjoel_call().map_err(|problem| RulesError::BadCall { event: idx, piece: p.piece.to_string(), problem })?;
            if !seen.insert(p.piece) {
                return Err(RulesError::DuplicatePiece { event: idx, piece: p.piece.to_string() });
            }
            if p.piece.number > t.allowed {
                too_many = Some(format!("{} is beyond the {} discs of this turn", p.piece, t.allowed));
            }
            if let SjoelCall::Compartment { compartment } = call {
                let v = values.get(compartment).ok_or_else(|| RulesError::BadCall {
                    event: idx,
                    piece: p.piece.to_string(),
                    problem: format!("compartment {compartment} does not exist (the board has {})", values.len()),
                })?;
                if let Some(given) = p.value {
                    if given != *v {
                        return Err(RulesError::BadCall {
                            event: idx,
                            piece: p.piece.to_string(),
                            problem: format!("value {given} but compartment {compartment} is worth {v}"),
                        });
                    }
                }
                counts[compartment] += 1;
            } else if p.value.is_some() {
                return Err(RulesError::BadCall { event: idx, piece: p.piece.to_string(), problem: "`value` only for a disc in a compartment".into() });
            }
        }
        let total: u32 = counts.iter().sum();
        if total > t.allowed {
            too_many = Some(format!("{total} discs in the compartments but the turn has {}", t.allowed));
        }
        if let Some(why) = too_many {
            rulings.push(Ruling::at(idx, format!("{}: played with more than {} discs ({why}): the turn is cancelled and must be played again", t.player, t.allowed)));
            turn = None;
            state.current_round = Some(PartialRound { round: state.next_round(), events: idx + 1 - round_start, rulings: rulings.clone() });
            continue;
        }
        for (c, (now, was)) in counts.iter().zip(&t.counts).enumerate() {
            if now < was {
                return Err(RulesError::Inconsistent {
                    event: idx,
                    piece: format!("compartment {c}"),
                    problem: format!("held {was} discs after the previous sub-turn but {now} now: discs in a compartment stay"),
                });
            }
        }
        t.counts = counts;
        t.sub_turns += 1;
        let s = score(&t.counts, &values);
        if s == EXTRA_DISC_SCORE && !t.extras && t.sub_turns <= 2 {
            let extra = 3 - t.sub_turns;
            t.allowed += extra;
            t.extras = true;
            rulings.push(Ruling::at(idx, format!("{}: 148 after {} sub-turn(s): {extra} extra disc(s)", t.player, t.sub_turns)));
        }
        let all_in = total == t.allowed;
        if t.sub_turns < SUB_TURNS && !all_in {
            state.current_round = Some(PartialRound { round: state.next_round(), events: idx + 1 - round_start, rulings: rulings.clone() });
            continue;
        }
        if all_in && t.sub_turns < SUB_TURNS {
            rulings.push(Ruling::at(idx, format!("{}: every disc is in after sub-turn {}: the turn is complete", t.player, t.sub_turns)));
        }
        let player = t.player.clone();
        turn = None;
        points.set(&player, s);
        k += 1;
        if k < players.len() {
            state.current_round = Some(PartialRound { round: state.next_round(), events: idx + 1 - round_start, rulings: rulings.clone() });
            continue;
        }
        k = 0;
        let mut scores = state.scores.clone();
        for (p, v) in &points.0 {
            scores.add(p, *v);
        }
        let round_no = state.next_round();
        let round = RoundScore {
            round: round_no,
            events: [round_start, idx],
            first: players[0].clone(),
            points: std::mem::replace(&mut points, Scores::zeros(&players)),
            scores: scores.clone(),
            next_first: Some(players[0].clone()),
            rulings: std::mem::take(&mut rulings),
        };
        state.push_round(round);
        round_start = idx + 1;
        if round_no >= turns {
            let best = scores.0.iter().map(|(_, v)| *v).max().unwrap_or(0);
            let top: Vec<&String> = scores.0.iter().filter(|(_, v)| *v == best).map(|(p, _)| p).collect();
            if let Some(r) = state.rounds.last_mut() {
                r.next_first = None;
            }
            state.next_first = None;
            if top.len() == 1 {
                state.win(top[0]);
            } else {
                state.status = Status::Tied;
                state.rulings.push(Ruling::general(format!(
                    "match complete: {} tied at {best}",
                    top.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(" and ")
                )));
            }
        }
    }
    state.up_next = Some(players[k].clone());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Counts by taking away full sets one at a time, then the loose discs.
    fn brute_force(counts: &[u32], values: &[u32]) -> i64 {
        let mut c = counts.to_vec();
        let mut total = 0i64;
        while c.iter().all(|n| *n > 0) {
            for (n, v) in c.iter_mut().zip(values) {
                *n -= 1;
                total += 2 * i64::from(*v);
            }
        }
        total + c.iter().zip(values).map(|(n, v)| i64::from(*n) * i64::from(*v)).sum::<i64>()
    }

    proptest! {
        #[test]
        fn score_formula_equals_a_brute_force_count(counts in proptest::collection::vec(0u32..=32, 4)) {
            let values = [1, 4, 3, 2];
            prop_assert_eq!(score(&counts, &values), brute_force(&counts, &values));
        }

        #[test]
        fn thirty_discs_score_at_most_148_and_32_at_most_156(counts in proptest::collection::vec(0u32..=32, 4)) {
            let values = [1, 4, 3, 2];
            let n: u32 = counts.iter().sum();
            let s = score(&counts, &values);
            if n <= DISCS {
                prop_assert!(s <= EXTRA_DISC_SCORE);
            }
            if n <= MAX_DISCS {
                prop_assert!(s <= 160);
            }
        }
    }

    #[test]
    fn the_maximum_with_two_extra_discs_after_148_is_156() {
        // 148 with 30 discs is only seven sets and two discs in the 4; two more discs
        // can add at most 8 (in the 4) since a new set needs three more discs.
        let values = [1, 4, 3, 2];
        let base = [7u32, 9, 7, 7];
        assert_eq!(score(&base, &values), 148);
        let mut best = 0;
        for i in 0..4 {
            for j in 0..4 {
                let mut c = base;
                c[i] += 1;
                c[j] += 1;
                best = best.max(score(&c, &values));
            }
        }
        assert_eq!(best, 156);
    }
}
