//! YOCU (rule text 001): four washers a player on the 4-hole (1/2/3/5) or 9-hole (rows
//! 1-5) side; leaners 1, washer-by-washer cancellation, -1 a washer off the board, exactly
//! 21 after the round, over is a bust to 13, honours, a bonus toss for four flat in.

use super::holeyboard::{WasherReader, WasherState};
use super::{first_team, sides, start_scores, EventLog, GameConfig, GameState, PartialRound, RoundScore, RulesError, Ruling, Scores};
use crate::board::Board;
use crate::calls::WasherCall;
use crate::piece::{PieceId, Team};

pub const WASHERS_PER_PLAYER: u32 = 4;
/// The winning score, exactly, after a round.
pub const TARGET: i64 = 21;

/// One team's round count.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct YocuCount {
    /// Points of washers flat in, after cancellation.
    pub flat: i64,
    /// Leaners: 1 each, never cancelled.
    pub leaners: i64,
    /// Washers thrown and now off the board: -1 each.
    pub off: i64,
}

impl YocuCount {
    pub fn net(&self) -> i64 {
        self.flat + self.leaners - self.off
    }
}

/// The round count of both teams (red, blue) from the final state; `thrown` is how many
/// washers each team threw (those never seen on the board went straight off).
pub fn count(state: &WasherState, values: &[u32], thrown: [i64; 2]) -> [YocuCount; 2] {
    let mut flat = vec![[0i64; 2]; values.len()];
    let mut out = [YocuCount::default(); 2];
    let mut seen = [0i64; 2];
    for (p, c) in state {
        let Some(t) = p.team else { continue };
        let t = t as usize;
        match c {
            WasherCall::In { hole } => {
                if let Some(slot) = flat.get_mut(*hole) {
                    slot[t] += 1;
                }
                seen[t] += 1;
            }
            WasherCall::Leaner { .. } => {
                out[t].leaners += 1;
                seen[t] += 1;
            }
            WasherCall::OnBoard => seen[t] += 1,
            WasherCall::Off => {}
        }
    }
    for (h, [r, b]) in flat.into_iter().enumerate() {
        let m = r.min(b);
        out[0].flat += (r - m) * i64::from(values[h]);
        out[1].flat += (b - m) * i64::from(values[h]);
    }
    for t in 0..2 {
        out[t].off = (thrown[t] - seen[t]).max(0);
    }
    out
}

/// A team's score after a round: never below 0, over 21 is a bust to `bust_to`.
pub fn next_score(start: i64, net: i64, bust_to: i64) -> (i64, bool) {
    let s = start + net;
    if s > TARGET {
        (bust_to, true)
    } else {
        (s.max(0), false)
    }
}

/// A game in progress is at 0 to 20: never below 0, 21 wins, over 21 busts back.
pub(crate) fn start(config: &GameConfig, board: &Board, log: &EventLog) -> Result<GameState, RulesError> {
    let sides = sides(config.rules, log, 2)?;
    let first = first_team(log)?;
    Ok(GameState::start(config, board, start_scores(&sides, log, 0..=TARGET - 1)?, Some(first.name().into())))
}

pub(crate) fn run(config: &GameConfig, board: &Board, log: &EventLog, state: &mut GameState) -> Result<(), RulesError> {
    let geometry = board.washer().ok_or_else(|| RulesError::Board {
        board: board.name.clone(),
        rules: config.rules.name(),
        problem: "not a washer board".into(),
    })?;
    let values: Vec<u32> = geometry.holes.iter().map(|h| h.value).collect();
    let bust_to = i64::from(config.number("bust_to"));
    let bonus_on = config.get("bonus_toss") == "on";
    let reader = WasherReader { geometry, per_team: WASHERS_PER_PLAYER };
    let mut first = first_team(log)?;
    let mut before = WasherState::new();
    let mut thrown = [0i64; 2];
    let mut bonus = [false; 2];
    let mut rulings: Vec<Ruling> = Vec::new();
    let mut round_start = 0;
    let mut events = 0usize;
    for (idx, ev) in log.events.iter().enumerate() {
        state.check_not_over(idx)?;
        if events == 0 {
            round_start = idx;
            before.clear();
            thrown = [0; 2];
            bonus = [false; 2];
            rulings.clear();
        }
        let expected = yocu_thrower(first, &thrown, &bonus);
        let team = match ev.thrower.parse::<Team>() {
            Ok(t) if t == expected => t,
            _ => return Err(RulesError::WrongThrower { event: idx, expected: expected.name().into(), found: ev.thrower.clone() }),
        };
        if ev.bounced {
            return Err(RulesError::BadCall { event: idx, piece: "event".into(), problem: "`bounced` is a HoleyBoard rule".into() });
        }
        let own_bonus = bonus[team as usize];
        let may = |p: PieceId| p.team == Some(team) && (p.number <= WASHERS_PER_PLAYER || own_bonus);
        let (after, _) = reader.read(idx, ev, &before, &may, u32::from(bonus_on))?;
        before = after;
        thrown[team as usize] += 1;
        events += 1;
        if thrown[team as usize] == i64::from(WASHERS_PER_PLAYER) && bonus_on {
            let flat_in = before
                .iter()
                .filter(|(p, c)| p.team == Some(team) && matches!(c, WasherCall::In { .. }))
                .count();
            if flat_in == WASHERS_PER_PLAYER as usize {
                bonus[team as usize] = true;
                rulings.push(Ruling::at(idx, format!("{team} has all 4 washers flat in: a bonus toss")));
            }
        }
        let done = thrown[first.other() as usize] >= quota(first.other(), &bonus);
        if !done {
            state.current_round = Some(PartialRound { round: state.next_round(), events, rulings: rulings.clone() });
            continue;
        }
        events = 0;
        let counts = count(&before, &values, thrown);
        let mut points = Scores::zeros(&["red".into(), "blue".into()]);
        let mut scores = state.scores.clone();
        let mut net = [0i64; 2];
        let mut busted = [false; 2];
        for t in Team::ALL {
            let c = counts[t as usize];
            let start = state.scores.get(t.name());
            let (s, bust) = next_score(start, c.net(), bust_to);
            net[t as usize] = c.net();
            busted[t as usize] = bust;
            if c.leaners > 0 {
                rulings.push(Ruling::at(idx, format!("{t}: {} leaner(s), 1 point each", c.leaners)));
            }
            if c.off > 0 {
                rulings.push(Ruling::at(idx, format!("{t}: {} washer(s) off the board, -1 each", c.off)));
            }
            if bust {
                rulings.push(Ruling::at(idx, format!("{t} busts ({start} + {} = {}): back to {bust_to} and loses the round", c.net(), start + c.net())));
            } else if start + c.net() < 0 {
                rulings.push(Ruling::at(idx, format!("{t} cannot go below 0")));
            }
            points.set(t.name(), s - start);
            scores.set(t.name(), s);
        }
        for (h, v) in values.iter().enumerate() {
            let n = |t: Team| before.iter().filter(|(p, c)| p.team == Some(t) && **c == WasherCall::In { hole: h }).count();
            let (r, b) = (n(Team::Red), n(Team::Blue));
            if r > 0 && b > 0 {
                rulings.push(Ruling::at(
                    idx,
                    format!("hole {h} ({v}): red {r}, blue {b} flat in: {} of each cancelled", r.min(b)),
                ));
            }
        }
        // Honours: the most points this round without busting throws first next round.
        let honours = match (busted, net[0].cmp(&net[1])) {
            ([true, true], _) => None,
            ([true, false], _) => Some(Team::Blue),
            ([false, true], _) => Some(Team::Red),
            (_, std::cmp::Ordering::Greater) => Some(Team::Red),
            (_, std::cmp::Ordering::Less) => Some(Team::Blue),
            _ => None,
        };
        let next = honours.unwrap_or(first);
        if honours.is_none() {
            rulings.push(Ruling::at(idx, format!("no honours this round: {first} throws first again")));
        }
        let at21: Vec<Team> = Team::ALL.into_iter().filter(|t| scores.get(t.name()) == TARGET).collect();
        let winner = match at21.as_slice() {
            [t] => Some(*t),
            [_, _] => match honours {
                Some(h) => {
                    rulings.push(Ruling::at(idx, format!("both teams at exactly 21: {h} wins on honours (more points this round)")));
                    Some(h)
                }
                None => {
                    return Err(RulesError::NeedsReview {
                        event: idx,
                        reason: "both teams at exactly 21 with equal points this round: the rules do not say who wins".into(),
                    })
                }
            },
            _ => None,
        };
        let round = RoundScore {
            round: state.next_round(),
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
    }
    let (thrown, bonus) = if events == 0 { ([0; 2], [false; 2]) } else { (thrown, bonus) };
    state.up_next = Some(yocu_thrower(first, &thrown, &bonus).name().into());
    Ok(())
}

/// The washers team `t` throws this round: four, five with a bonus toss.
fn quota(t: Team, bonus: &[bool; 2]) -> i64 {
    i64::from(WASHERS_PER_PLAYER) + i64::from(bonus[t as usize])
}

/// Who throws next in a YOCU round: the first team until it has thrown its quota, then the other.
fn yocu_thrower(first: Team, thrown: &[i64; 2], bonus: &[bool; 2]) -> Team {
    if thrown[first as usize] < quota(first, bonus) {
        first
    } else {
        first.other()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn states() -> impl Strategy<Value = WasherState> {
        proptest::collection::vec((0u8..4, 0usize..4), 8).prop_map(|v| {
            v.into_iter()
                .enumerate()
                .map(|(i, (k, hole))| {
                    let team = if i < 4 { Team::Red } else { Team::Blue };
                    let call = match k {
                        0 => WasherCall::In { hole },
                        1 => WasherCall::Leaner { hole },
                        2 => WasherCall::OnBoard,
                        _ => WasherCall::Off,
                    };
                    (PieceId::of_team(team, (i % 4) as u32 + 1), call)
                })
                .collect()
        })
    }

    proptest! {
        #[test]
        fn cancellation_is_symmetric_between_teams(s in states()) {
            let values = [5, 3, 2, 1];
            let swapped: WasherState =
                s.iter().map(|(p, c)| (PieceId { team: p.team.map(Team::other), number: p.number }, *c)).collect();
            let [r, b] = count(&s, &values, [4, 4]);
            let [r2, b2] = count(&swapped, &values, [4, 4]);
            prop_assert_eq!((r, b), (b2, r2));
        }

        #[test]
        fn scores_never_go_below_zero_nor_above_21(s in states(), start_r in 0i64..=21, start_b in 0i64..=21, bust_to in 0i64..=20) {
            let [r, b] = count(&s, &[5, 3, 2, 1], [4, 4]);
            for (start, c) in [(start_r, r), (start_b, b)] {
                let (score, _) = next_score(start, c.net(), bust_to);
                prop_assert!((0..=TARGET).contains(&score), "{} from {} and {:?}", score, start, c);
            }
        }

        #[test]
        fn leaners_are_never_cancelled(s in states()) {
            let [r, b] = count(&s, &[5, 3, 2, 1], [4, 4]);
            let leaners = |t: Team| s.iter().filter(|(p, c)| p.team == Some(t) && matches!(c, WasherCall::Leaner { .. })).count() as i64;
            prop_assert_eq!(r.leaners, leaners(Team::Red));
            prop_assert_eq!(b.leaners, leaners(Team::Blue));
        }
    }
}
