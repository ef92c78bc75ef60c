//! Table shuffleboard games: Knock Off, Tap & Draw, Horse Collar, Baseball and Crazy Eight
//! (rule text 004, and 002 for Horse Collar), scored from weight calls.

use super::events::{read_event, Event, PieceRules};
use super::{
    first_team, sides, start_scores, EventLog, GameConfig, GameState, PartialRound, RoundScore, Rules, RulesError,
    Ruling, Scores,
};
use crate::board::{Board, Shuffleboard};
use crate::calls::{self, FoulLine, ShuffleCall};
use crate::geom::{BoardPoint, Footprint};
use crate::piece::{PieceId, Team};
use std::cmp::Ordering;
use std::collections::BTreeMap;

/// Two weights in the same zone whose centres differ in depth by less than this cannot be
/// ordered with confidence: half the project's millimetre measuring target.
pub const DEPTH_TIE_MM: f64 = 0.5;

/// Weights per colour.
pub const WEIGHTS_PER_COLOUR: u32 = 4;

/// A weight's state as the engine uses it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Weight {
    pub call: ShuffleCall,
    /// The call as given in the log, when the engine re-judged it against the designated
    /// foul line from the weight's position.
    pub given: Option<ShuffleCall>,
    pub at: Option<BoardPoint>,
    /// In a painted 5 zone (9-ft bank board).
    pub five_zone: bool,
}

impl Weight {
    pub const OFF: Weight = Weight { call: ShuffleCall::Off, given: None, at: None, five_zone: false };

    pub fn new(call: ShuffleCall) -> Self {
        Weight { call, ..Weight::OFF }
    }

    pub fn at(mut self, x_mm: f64, y_mm: f64) -> Self {
        self.at = Some(BoardPoint::new(x_mm, y_mm));
        self
    }

    /// On the board and past the designated foul line.
    pub fn in_play(&self) -> bool {
        !matches!(self.call, ShuffleCall::Off | ShuffleCall::Short)
    }

    /// Knock Off / Tap & Draw / Crazy Eight points: 1, 2, 3, hanger (end or corner) 4.
    pub fn knock_off_points(&self) -> i64 {
        match self.call {
            ShuffleCall::Off | ShuffleCall::Short => 0,
            ShuffleCall::Zone1 => 1,
            ShuffleCall::Zone2 => 2,
            ShuffleCall::Zone3 => 3,
            ShuffleCall::Hanger | ShuffleCall::CornerHanger => 4,
        }
    }
}

/// Whether `a` lies deeper (nearer the target end) than `b`: by zone first, then by
/// position. `Err` says why the calls cannot tell.
pub fn deeper(a: (PieceId, &Weight), b: (PieceId, &Weight)) -> Result<Ordering, String> {
    let (ra, rb) = (a.1.knock_off_points(), b.1.knock_off_points());
    if ra != rb {
        return Ok(ra.cmp(&rb));
    }
    let zone = a.1.call.name();
    match (a.1.at, b.1.at) {
        (Some(pa), Some(pb)) => {
            let d = pb.y_mm - pa.y_mm;
            if d.abs() < DEPTH_TIE_MM {
                Err(format!(
                    "{} and {} ({zone}) are within {DEPTH_TIE_MM} mm in depth ({:.2} vs {:.2} mm): too close to call",
                    a.0, b.0, pa.y_mm, pb.y_mm
                ))
            } else {
                Ok(if d > 0.0 { Ordering::Greater } else { Ordering::Less })
            }
        }
        _ => Err(format!("{} and {} are both {zone}: their positions (`at`) are needed to tell which is deeper", a.0, b.0)),
    }
}

/// Knock Off scoring of a final board: the team with the deepest weight scores every
/// weight of its own deeper than the opponent's deepest. `Ok(None)`: nobody scores.
/// `Err` is the reason the calls cannot decide.
pub fn knock_off_round(board: &BTreeMap<PieceId, Weight>) -> Result<Option<(Team, i64, Vec<PieceId>)>, String> {
    let counting: Vec<(PieceId, &Weight)> = board.iter().filter(|(_, w)| w.in_play()).map(|(p, w)| (*p, w)).collect();
    for team in Team::ALL {
        let mine = counting.iter().filter(|(p, _)| p.team == Some(team));
        let theirs: Vec<_> = counting.iter().filter(|(p, _)| p.team != Some(team)).collect();
        let mut points = 0;
        let mut scored = Vec::new();
        for a in mine {
            let mut undecided = None;
            let mut beaten = false;
            for b in &theirs {
                match deeper(*a, **b) {
                    Ok(Ordering::Greater) => {}
                    Ok(_) => beaten = true,
                    Err(why) => undecided = Some(why),
                }
            }
            if beaten {
                continue;
            }
            if let Some(why) = undecided {
                return Err(why);
            }
            points += a.1.knock_off_points();
            scored.push(a.0);
        }
        if points > 0 {
            return Ok(Some((team, points, scored)));
        }
    }
    Ok(None)
}

/// Horse Collar options that change a turn's count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HorseCollarCount {
    pub corner_points: i64,
    pub five_zone_is_five: bool,
}

/// Horse Collar scoring of one side's 8 weights: nothing unless no weight is short of the
/// foul line and at least one is in the trey or hanging; then 1/2/3, hanger 13, corner 26.
pub fn horse_collar_turn(board: &BTreeMap<PieceId, Weight>, count: HorseCollarCount, rulings: &mut Vec<String>) -> i64 {
    let short: Vec<String> =
        board.iter().filter(|(_, w)| w.call == ShuffleCall::Short).map(|(p, _)| p.to_string()).collect();
    if !short.is_empty() {
        rulings.push(format!("{} short of the designated foul line: no score", short.join(", ")));
        return 0;
    }
    let mut total = 0;
    let mut trey_or_more = false;
    for (p, w) in board {
        let v = match w.call {
            ShuffleCall::Off | ShuffleCall::Short => 0,
            ShuffleCall::Zone1 => 1,
            ShuffleCall::Zone2 => 2,
            ShuffleCall::Zone3 if w.five_zone && count.five_zone_is_five => 5,
            ShuffleCall::Zone3 => {
                if w.five_zone {
                    rulings.push(format!("{p} in the 5 zone counts as the trey (9-ft bank board)"));
                }
                3
            }
            ShuffleCall::Hanger => 13,
            ShuffleCall::CornerHanger => {
                if count.corner_points != 26 {
                    rulings.push(format!("{p} corner hanger counts {} (house rule)", count.corner_points));
                }
                count.corner_points
            }
        };
        trey_or_more |= v >= 3;
        total += v;
    }
    if !trey_or_more {
        if total > 0 {
            rulings.push(format!("no weight in the trey or hanging: no score ({total} points on the board do not count)"));
        }
        return 0;
    }
    total
}

fn foul_line(config: &GameConfig) -> FoulLine {
    match (config.rules, config.get("foul_line")) {
        (Rules::CrazyEight, _) => FoulLine::Long,
        (_, "long") => FoulLine::Long,
        _ => FoulLine::Short,
    }
}

fn foul_name(f: FoulLine) -> &'static str {
    match f {
        FoulLine::Long => "long",
        FoulLine::Short => "short",
    }
}

/// The most points one side scores in a turn: every weight on the board (four of each colour in the solo games) at
/// the corner hanger's 26.
const MOST_TURN_POINTS: i64 = 2 * WEIGHTS_PER_COLOUR as i64 * 26;

/// The scores a game in progress can have: below the target (reaching it ends the game); in Baseball, what the
/// innings allow.
fn score_range(config: &GameConfig) -> std::ops::RangeInclusive<i64> {
    match config.rules {
        Rules::Baseball => 0..=i64::from(config.number("innings")) * MOST_TURN_POINTS,
        _ => 0..=i64::from(config.number("target")).saturating_sub(1),
    }
}

pub(crate) fn start(config: &GameConfig, board: &Board, log: &EventLog) -> Result<GameState, RulesError> {
    let sides = sides(config.rules, log, 2)?;
    let first = if config.rules.team_colours() {
        first_team(log)?.name().to_string()
    } else {
        if let Some(f) = &log.first {
            if *f != sides[0] {
                return Err(RulesError::Header {
                    problem: format!("`first` is `{f}` but the playing order in `players` starts with `{}`", sides[0]),
                });
            }
        }
        sides[0].clone()
    };
    let mut state = GameState::start(config, board, start_scores(&sides, log, score_range(config))?, Some(first));
    if config.get("hickey") == "on" {
        state.hickeys = Some(Scores::zeros(&sides));
    }
    Ok(state)
}

/// Reads weights, re-judging zone1/short against the designated foul line from positions.
struct Reader<'a> {
    board: &'a Board,
    geometry: &'a Shuffleboard,
    foul: FoulLine,
}

impl Reader<'_> {
    fn parse(&self, p: &super::PieceState) -> Result<Weight, String> {
        let call = p.shuffle_call()?;
        let mut w = Weight { call, given: None, at: p.at, five_zone: p.value == Some(5) };
        if let (ShuffleCall::Zone1 | ShuffleCall::Short, Some(at)) = (call, p.at) {
            let fp = Footprint::new(at, self.geometry.weight_diameter_mm / 2.0);
            let m = calls::shuffle_call(self.board, self.geometry, fp, self.foul);
            if matches!(m.call, ShuffleCall::Zone1 | ShuffleCall::Short) && m.call != call {
                w.given = Some(call);
                w.call = m.call;
            }
        }
        Ok(w)
    }

    fn read(
        &self,
        idx: usize,
        ev: &Event,
        before: &BTreeMap<PieceId, Weight>,
        may_throw: &dyn Fn(PieceId) -> bool,
        max_new: usize,
        rulings: &mut Vec<Ruling>,
    ) -> Result<(BTreeMap<PieceId, Weight>, Vec<PieceId>), RulesError> {
        if ev.bounced {
            return Err(RulesError::BadCall { event: idx, piece: "event".into(), problem: "`bounced` is a HoleyBoard rule".into() });
        }
        let known = |p: PieceId| match p.team {
            Some(_) if (1..=WEIGHTS_PER_COLOUR).contains(&p.number) => Ok(()),
            _ => Err(format!("the weights are red#1..red#{n} and blue#1..blue#{n}", n = WEIGHTS_PER_COLOUR)),
        };
        let parse = |p: &super::PieceState| self.parse(p);
        let rules = PieceRules {
            known: &known,
            may_throw,
            max_new,
            parse: &parse,
            off: Weight::OFF,
            is_off: &|w: &Weight| w.call == ShuffleCall::Off,
        };
        let read = read_event(idx, ev, before, &rules)?;
        for (p, w) in &read.after {
            if let Some(given) = w.given {
                let moved = before.get(p).map_or(true, |b| b.call != w.call || b.at != w.at);
                if moved {
                    rulings.push(Ruling::at(
                        idx,
                        format!(
                            "{p} called {} but its position puts it {} against the {} foul line",
                            given.name(),
                            w.call.name(),
                            foul_name(self.foul)
                        ),
                    ));
                }
            }
        }
        Ok((read.after, read.thrown))
    }
}

pub(crate) fn run(config: &GameConfig, board: &Board, log: &EventLog, state: &mut GameState) -> Result<(), RulesError> {
    let geometry = board.shuffleboard().ok_or_else(|| RulesError::Board {
        board: board.name.clone(),
        rules: config.rules.name(),
        problem: "not a shuffleboard".into(),
    })?;
    let reader = Reader { board, geometry, foul: foul_line(config) };
    match config.rules {
        Rules::KnockOff | Rules::TapAndDraw => knock_off(config, &reader, log, state),
        _ => frames(config, &reader, log, state),
    }
}

fn team_of(idx: usize, ev: &Event, expected: Team) -> Result<Team, RulesError> {
    match ev.thrower.parse::<Team>() {
        Ok(t) if t == expected => Ok(t),
        _ => Err(RulesError::WrongThrower { event: idx, expected: expected.name().into(), found: ev.thrower.clone() }),
    }
}

/// Knock Off and Tap & Draw: 8 alternating shots a round; one team scores.
fn knock_off(config: &GameConfig, reader: &Reader<'_>, log: &EventLog, state: &mut GameState) -> Result<(), RulesError> {
    let tap = config.rules == Rules::TapAndDraw;
    let target = i64::from(config.number("target"));
    let mut first: Team = first_team(log)?;
    let mut before: BTreeMap<PieceId, Weight> = BTreeMap::new();
    let mut rulings: Vec<Ruling> = Vec::new();
    let (mut n, mut round_start) = (0usize, 0usize);
    for (idx, ev) in log.events.iter().enumerate() {
        state.check_not_over(idx)?;
        if n == 0 {
            round_start = idx;
            before.clear();
            rulings.clear();
        }
        let shooter = team_of(idx, ev, knock_off_shooter(n, first))?;
        let may = |p: PieceId| p.team == Some(shooter);
        let (mut after, thrown) = reader.read(idx, ev, &before, &may, 1, &mut rulings)?;
        if tap {
            tap_and_draw_fouls(idx, shooter, thrown.first().copied(), &before, &mut after, &mut rulings);
        }
        before = after;
        n += 1;
        state.current_round = Some(PartialRound { round: state.next_round(), events: n, rulings: rulings.clone() });
        if n < 2 * WEIGHTS_PER_COLOUR as usize {
            continue;
        }
        n = 0;
        let outcome = knock_off_round(&before).map_err(|reason| RulesError::NeedsReview { event: idx, reason })?;
        let mut points = Scores::zeros(&["red".into(), "blue".into()]);
        let mut scores = state.scores.clone();
        let next = match &outcome {
            Some((team, p, pieces)) => {
                points.set(team.name(), *p);
                scores.add(team.name(), *p);
                let list: Vec<String> = pieces.iter().map(|p| p.to_string()).collect();
                rulings.push(Ruling::at(idx, format!("{team} has the deepest weight: {} score {p}", list.join(", "))));
                if tap {
                    team.other()
                } else {
                    *team
                }
            }
            None => {
                rulings.push(Ruling::at(idx, format!("no score: the hammer passes, {} shoots first", first.other())));
                first.other()
            }
        };
        let round = RoundScore {
            round: state.next_round(),
            events: [round_start, idx],
            first: first.name().into(),
            points,
            scores: scores.clone(),
            next_first: Some(next.name().into()),
            rulings: std::mem::take(&mut rulings),
        };
        state.push_round(round);
        if let Some((team, _, _)) = outcome {
            if scores.get(team.name()) >= target {
                state.win(team.name());
            }
        }
        first = next;
    }
    state.up_next = Some(knock_off_shooter(n, first).name().into());
    Ok(())
}

/// Who shoots the `n`-th shot (0-based) of a Knock Off or Tap & Draw round: the teams
/// alternate from the round's first.
fn knock_off_shooter(n: usize, first: Team) -> Team {
    if n.is_multiple_of(2) {
        first
    } else {
        first.other()
    }
}

/// Tap & Draw fouls after one shot by `shooter` with weight `shot`: knocking an opponent's
/// weight off returns it to its earlier position, removes the shooting weight, and returns
/// the shooter's own weights that it advanced to a higher scoring area. Own weights knocked
/// off stay off; opponent weights tapped forward stay.
pub fn tap_and_draw_fouls(
    idx: usize,
    shooter: Team,
    shot: Option<PieceId>,
    before: &BTreeMap<PieceId, Weight>,
    after: &mut BTreeMap<PieceId, Weight>,
    rulings: &mut Vec<Ruling>,
) {
    let on = |w: &Weight| w.call != ShuffleCall::Off;
    let knocked_off = |team: Option<Team>| -> Vec<PieceId> {
        before
            .iter()
            .filter(|(p, w)| p.team == team && on(w) && after.get(p).is_some_and(|a| !on(a)))
            .map(|(p, _)| *p)
            .collect()
    };
    let own_off = knocked_off(Some(shooter));
    if !own_off.is_empty() {
        let list: Vec<String> = own_off.iter().map(|p| p.to_string()).collect();
        rulings.push(Ruling::at(idx, format!("{} knocked off by its own team: stays out of play", list.join(", "))));
    }
    let theirs_off = knocked_off(Some(shooter.other()));
    if theirs_off.is_empty() {
        return;
    }
    let mut actions = Vec::new();
    for p in &theirs_off {
        let w = before[p];
        after.insert(*p, w);
        actions.push(format!("{p} goes back to {}", describe(&w)));
    }
    let advanced: Vec<PieceId> = before
        .iter()
        .filter(|(p, w)| {
            p.team == Some(shooter)
                && Some(**p) != shot
                && after.get(p).is_some_and(|a| a.knock_off_points() > w.knock_off_points())
        })
        .map(|(p, _)| *p)
        .collect();
    for p in advanced {
        let w = before[&p];
        after.insert(p, w);
        actions.push(format!("{p} (advanced) goes back to {}", describe(&w)));
    }
    match shot {
        Some(s) if after.get(&s).is_some_and(on) => {
            after.insert(s, Weight::OFF);
            actions.push(format!("shooting weight {s} is removed"));
        }
        Some(s) => actions.push(format!("shooting weight {s} is already off")),
        None => {}
    }
    let list: Vec<String> = theirs_off.iter().map(|p| p.to_string()).collect();
    rulings.push(Ruling::at(idx, format!("{shooter} knocked off {}: {}", list.join(", "), actions.join("; "))));
}

fn describe(w: &Weight) -> String {
    match w.at {
        Some(p) => format!("{} at x = {:.1}, y = {:.1} mm", w.call.name(), p.x_mm, p.y_mm),
        None => w.call.name().to_string(),
    }
}

/// Horse Collar, Baseball and Crazy Eight: every side takes a turn each frame.
fn frames(config: &GameConfig, reader: &Reader<'_>, log: &EventLog, state: &mut GameState) -> Result<(), RulesError> {
    let all_sides: Vec<String> = state.scores.0.iter().map(|(s, _)| s.clone()).collect();
    let count = HorseCollarCount {
        corner_points: if config.get("corner") == "13" { 13 } else { 26 },
        five_zone_is_five: config.get("five_zone") == "five",
    };
    let crazy = config.rules == Rules::CrazyEight;
    let mut frame_sides = all_sides.clone();
    let mut k = 0usize; // whose turn within the frame
    let mut n = 0usize; // events of the current turn
    let mut frame_start = 0usize;
    let mut before: BTreeMap<PieceId, Weight> = BTreeMap::new();
    let mut group: Option<Team> = None;
    let mut rulings: Vec<Ruling> = Vec::new();
    let mut points = Scores::default();
    let mut scores = state.scores.clone();
    for (idx, ev) in log.events.iter().enumerate() {
        state.check_not_over(idx)?;
        if k == 0 && n == 0 {
            frame_start = idx;
            rulings.clear();
            points = Scores::zeros(&frame_sides);
        }
        if n == 0 {
            before.clear();
            group = None;
        }
        let side = &frame_sides[k];
        if ev.thrower != *side {
            return Err(RulesError::WrongThrower { event: idx, expected: side.clone(), found: ev.thrower.clone() });
        }
        let (max_new, may): (usize, Box<dyn Fn(PieceId) -> bool>) = match (crazy, n, group) {
            (true, 0, _) => (WEIGHTS_PER_COLOUR as usize, Box::new(|_| true)),
            (true, _, Some(g)) => (1, Box::new(move |p: PieceId| p.team == Some(g.other()))),
            _ => (1, Box::new(|_| true)),
        };
        let (after, thrown) = reader.read(idx, ev, &before, &*may, max_new, &mut rulings)?;
        before = after;
        n += 1;
        let mut turn_over = None;
        if crazy && n == 1 {
            let colours: Vec<Team> = thrown.iter().filter_map(|p| p.team).collect();
            if colours.windows(2).any(|w| w[0] != w[1]) {
                return Err(RulesError::TooManyPieces {
                    event: idx,
                    problem: "Crazy Eight's first four weights are all one colour".into(),
                });
            }
            group = colours.first().copied();
            let stayed = group.map_or(0, |g| {
                (1..=WEIGHTS_PER_COLOUR).filter(|i| before.get(&PieceId::of_team(g, *i)).is_some_and(|w| w.in_play())).count()
            });
            if stayed < WEIGHTS_PER_COLOUR as usize {
                turn_over = Some((0, format!("{side}: only {stayed} of the first four stayed past the long foul line: no score")));
            }
        } else if crazy && n == 1 + WEIGHTS_PER_COLOUR as usize {
            let g = group.unwrap_or(Team::Red);
            let left: Vec<String> = (1..=WEIGHTS_PER_COLOUR)
                .map(|i| PieceId::of_team(g, i))
                .filter(|p| before.get(p).is_some_and(|w| w.call != ShuffleCall::Off))
                .map(|p| p.to_string())
                .collect();
            let second: i64 =
                before.iter().filter(|(p, _)| p.team == Some(g.other())).map(|(_, w)| w.knock_off_points()).sum();
            turn_over = Some(if !left.is_empty() {
                (0, format!("{side}: {} of the first four not knocked off: no score", left.join(", ")))
            } else if second == 0 {
                (0, format!("{side}: none of the last four stayed past the long foul line: no score"))
            } else {
                (second, String::new())
            });
        } else if !crazy && n == 2 * WEIGHTS_PER_COLOUR as usize {
            let mut why = Vec::new();
            let p = horse_collar_turn(&before, count, &mut why);
            turn_over = Some((p, why.iter().map(|w| format!("{side}: {w}")).collect::<Vec<_>>().join("; ")));
        }
        let Some((p, why)) = turn_over else {
            state.current_round = Some(PartialRound { round: state.next_round(), events: idx + 1 - frame_start, rulings: rulings.clone() });
            continue;
        };
        if !why.is_empty() {
            rulings.push(Ruling::at(idx, why));
        }
        points.set(side, p);
        scores.add(side, p);
        if p == 0 {
            if let Some(h) = &mut state.hickeys {
                h.add(side, 1);
            }
        }
        n = 0;
        k += 1;
        if k < frame_sides.len() {
            state.current_round = Some(PartialRound { round: state.next_round(), events: idx + 1 - frame_start, rulings: rulings.clone() });
            continue;
        }
        k = 0;
        // End of the frame: everyone has had the same number of turns.
        let frame_no = state.next_round();
        let decided = match config.rules {
            Rules::Baseball => frame_no >= config.number("innings"),
            _ => frame_sides.iter().any(|s| scores.get(s) >= i64::from(config.number("target"))),
        };
        let mut winner = None;
        let mut next_sides = frame_sides.clone();
        if decided {
            let best = frame_sides.iter().map(|s| scores.get(s)).max().unwrap_or(0);
            let top: Vec<String> = frame_sides.iter().filter(|s| scores.get(s) == best).cloned().collect();
            if top.len() == 1 {
                winner = Some(top[0].clone());
                let target = i64::from(config.number("target"));
                let reached = frame_sides.iter().filter(|s| scores.get(s) >= target).count();
                if config.rules != Rules::Baseball && reached > 1 {
                    rulings.push(Ruling::at(idx, format!("{} sides reached {target}: {} has the highest final score", reached, top[0])));
                }
            } else {
                rulings.push(Ruling::at(idx, format!("{} tied at {best}: another frame between them", top.join(" and "))));
                next_sides = top;
            }
        }
        let round = RoundScore {
            round: frame_no,
            events: [frame_start, idx],
            first: frame_sides[0].clone(),
            points: points.clone(),
            scores: scores.clone(),
            next_first: Some(next_sides[0].clone()),
            rulings: std::mem::take(&mut rulings),
        };
        state.push_round(round);
        if let Some(w) = winner {
            state.win(&w);
        }
        frame_sides = next_sides;
    }
    state.up_next = Some(frame_sides[k].clone());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn call_of(i: u8) -> ShuffleCall {
        [
            ShuffleCall::Off,
            ShuffleCall::Short,
            ShuffleCall::Zone1,
            ShuffleCall::Zone2,
            ShuffleCall::Zone3,
            ShuffleCall::Hanger,
            ShuffleCall::CornerHanger,
        ][i as usize % 7]
    }

    fn weights() -> impl Strategy<Value = BTreeMap<PieceId, Weight>> {
        // Distinct depths (whole millimetres apart, well over DEPTH_TIE_MM) so every pair is decidable.
        proptest::collection::vec((0u8..7, 0u32..4000), 8).prop_map(|v| {
            let mut m = BTreeMap::new();
            for (i, (c, y)) in v.into_iter().enumerate() {
                let team = if i < 4 { Team::Red } else { Team::Blue };
                // y * 8 + i: distinct whole millimetres for the eight weights.
                let w = Weight::new(call_of(c)).at(0.0, f64::from(y * 8) + i as f64);
                m.insert(PieceId::of_team(team, (i % 4) as u32 + 1), w);
            }
            m
        })
    }

    proptest! {
        #[test]
        fn knock_off_gives_points_to_at_most_one_team(board in weights()) {
            // knock_off_round returns one team or none by construction; check the
            // stronger property: no weight of the other team is deeper than a scored one.
            match knock_off_round(&board) {
                Ok(Some((team, points, scored))) => {
                    prop_assert!(points > 0);
                    for s in &scored {
                        prop_assert_eq!(s.team, Some(team));
                        for (o, w) in board.iter().filter(|(o, w)| o.team == Some(team.other()) && w.in_play()) {
                            prop_assert_eq!(deeper((*s, &board[s]), (*o, w)), Ok(Ordering::Greater));
                        }
                    }
                    // The other team, scored on its own, would get nothing.
                    let other_points: i64 = board
                        .iter()
                        .filter(|(p, w)| p.team == Some(team.other()) && w.in_play())
                        .filter(|(p, w)| board.iter().filter(|(q, v)| q.team == Some(team) && v.in_play())
                            .all(|(q, v)| deeper((**p, w), (*q, v)) == Ok(Ordering::Greater)))
                        .map(|(_, w)| w.knock_off_points())
                        .sum();
                    prop_assert_eq!(other_points, 0);
                }
                Ok(None) => {
                    prop_assert!(board.values().all(|w| !w.in_play()));
                }
                Err(_) => {}
            }
        }

        #[test]
        fn horse_collar_turns_are_never_negative(board in weights(), corner13 in any::<bool>(), five in any::<bool>()) {
            let count = HorseCollarCount { corner_points: if corner13 { 13 } else { 26 }, five_zone_is_five: five };
            let mut why = Vec::new();
            prop_assert!(horse_collar_turn(&board, count, &mut why) >= 0);
        }
    }

    #[test]
    fn same_zone_without_positions_needs_review() {
        let mut b = BTreeMap::new();
        b.insert(PieceId::of_team(Team::Red, 1), Weight::new(ShuffleCall::Zone3));
        b.insert(PieceId::of_team(Team::Blue, 1), Weight::new(ShuffleCall::Zone3));
        let e = knock_off_round(&b).unwrap_err();
        assert!(e.contains("positions"), "{e}");
    }

    #[test]
    fn a_deeper_weight_of_the_other_team_makes_a_same_zone_pair_irrelevant() {
        let mut b = BTreeMap::new();
        b.insert(PieceId::of_team(Team::Red, 1), Weight::new(ShuffleCall::Zone2));
        b.insert(PieceId::of_team(Team::Blue, 1), Weight::new(ShuffleCall::Zone2));
        b.insert(PieceId::of_team(Team::Blue, 2), Weight::new(ShuffleCall::Hanger));
        // While blue#1 may still count (it might be deeper than red#1), the calls cannot decide.
        assert!(knock_off_round(&b).is_err());
        // With a red trey, blue#1 is behind it whatever its depth against red#1: decided.
        b.insert(PieceId::of_team(Team::Red, 2), Weight::new(ShuffleCall::Zone3));
        let (team, points, _) = knock_off_round(&b).unwrap().unwrap();
        assert_eq!((team, points), (Team::Blue, 4));
    }
}
