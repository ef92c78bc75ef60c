//! Every worked example in the rule texts (`../shared/rules/`, copied rules in
//! `docs/rules.md`) as a named test, plus each option and the bad-input errors.
//!
//! Logs are built throw by throw with [`LogBuilder`]: each throw names only the pieces
//! that moved; the builder writes the full board state after it, as the vision stages do.

use boardcall::board::Board;
use boardcall::calls::{ShuffleCall, SjoelCall, WasherCall};
use boardcall::piece::PieceId;
use boardcall::rules::{play, EventLog, GameConfig, GameState, LogBuilder, PieceState, RulesError, Status};

// ---------------------------------------------------------------- helpers

fn id(text: &str) -> PieceId {
    text.parse().expect("piece id literal")
}

fn run(rules: &str, options: &[&str], log: &EventLog) -> Result<GameState, RulesError> {
    let config = GameConfig::with_options(rules.parse()?, options)?;
    let board = Board::load(log.board.as_deref().unwrap_or(config.rules.default_board())).expect("built-in board");
    play(&config, &board, log)
}

fn game(rules: &str, options: &[&str], log: &EventLog) -> GameState {
    run(rules, options, log).unwrap_or_else(|e| panic!("{rules}: {e}"))
}

fn score(g: &GameState, side: &str) -> i64 {
    g.scores.get(side)
}

/// Every ruling of every round, and the game's, as text.
fn rulings(g: &GameState) -> String {
    let mut all: Vec<String> = g.rounds.iter().flat_map(|r| r.rulings.iter().map(|x| x.reason.clone())).collect();
    all.extend(g.rulings.iter().map(|x| x.reason.clone()));
    if let Some(c) = &g.current_round {
        all.extend(c.rulings.iter().map(|x| x.reason.clone()));
    }
    all.join(" | ")
}

fn assert_ruling(g: &GameState, text: &str) {
    let all = rulings(g);
    assert!(all.contains(text), "no ruling containing `{text}` in: {all}");
}

// Shuffleboard weights.
fn wt(piece: &str, call: ShuffleCall) -> PieceState {
    PieceState::weight(id(piece), call)
}
/// A weight in `call` with its centre at depth `y` mm (x = 0).
fn wy(piece: &str, call: ShuffleCall, y: f64) -> PieceState {
    wt(piece, call).at(0.0, y)
}
fn woff(piece: &str) -> PieceState {
    wt(piece, ShuffleCall::Off)
}

// Washers. HoleyBoard holes: 0 is the 5, 1 the 3, 2 the 1.
fn hole(piece: &str, hole: usize) -> PieceState {
    PieceState::washer(id(piece), WasherCall::In { hole })
}
fn leaner(piece: &str, hole: usize) -> PieceState {
    PieceState::washer(id(piece), WasherCall::Leaner { hole })
}
fn on_board(piece: &str) -> PieceState {
    PieceState::washer(id(piece), WasherCall::OnBoard)
}
fn off(piece: &str) -> PieceState {
    PieceState::washer(id(piece), WasherCall::Off)
}
const H5: usize = 0;
const H3: usize = 1;
const H1: usize = 2;

/// A HoleyBoard round: each team's three throws as the washer's resulting state plus
/// anything it moved. `red` throws first unless `first` says otherwise.
fn holey(first: &str, start: (i64, i64)) -> LogBuilder {
    LogBuilder::new("holeyboard").first(first).start_score("red", start.0).start_score("blue", start.1)
}

/// A throw that went straight off the board (its washer never seen).
fn miss(b: &mut LogBuilder, team: &str, piece: &str) {
    b.throw_named(team, &[id(piece)], &[]);
}

// ---------------------------------------------------------------- HoleyBoard (000)

#[test]
fn holeyboard_example_knocking_in_an_opponents_washer_gives_them_the_points_and_you_throw_first() {
    // "Player B knocks Player A's washer in a hole. Player A receives the points, but
    // Player B has to throw first the next round."
    let mut b = holey("red", (0, 0));
    b.throw("red", &[on_board("red#1")]);
    miss(&mut b, "red", "red#2");
    miss(&mut b, "red", "red#3");
    b.throw("blue", &[on_board("blue#1"), hole("red#1", H3)]);
    miss(&mut b, "blue", "blue#2");
    miss(&mut b, "blue", "blue#3");
    let g = game("holeyboard", &[], &b.build());
    assert_eq!((score(&g, "red"), score(&g, "blue")), (3, 0));
    assert_eq!(g.next_first.as_deref(), Some("blue"));
    assert_ruling(&g, "blue knocked red#1 into the 3 hole");
}

#[test]
fn holeyboard_example_a_five_cancels_a_five() {
    let mut b = holey("red", (0, 0));
    b.throw("red", &[hole("red#1", H5)]);
    miss(&mut b, "red", "red#2");
    miss(&mut b, "red", "red#3");
    b.throw("blue", &[hole("blue#1", H5)]);
    miss(&mut b, "blue", "blue#2");
    miss(&mut b, "blue", "blue#3");
    let g = game("holeyboard", &[], &b.build());
    assert_eq!((score(&g, "red"), score(&g, "blue")), (0, 0));
}

#[test]
fn holeyboard_example_a_three_and_two_ones_do_not_cancel_a_five() {
    // "If Player B would hit a 3 and two 1's, then the score would be 5 - 5."
    let mut b = holey("red", (0, 0));
    b.throw("red", &[hole("red#1", H5)]);
    miss(&mut b, "red", "red#2");
    miss(&mut b, "red", "red#3");
    b.throw("blue", &[hole("blue#1", H3)]);
    b.throw("blue", &[hole("blue#2", H1)]);
    b.throw("blue", &[hole("blue#3", H1)]);
    let g = game("holeyboard", &[], &b.build());
    assert_eq!((score(&g, "red"), score(&g, "blue")), (5, 5));
}

#[test]
fn holeyboard_example_third_washer_knocks_the_second_in_for_21() {
    // "Player B goes second and has 18 ... the third washer knocks the second washer in
    // the 3 point hole and then the third washer goes flying off the board. Player B has 21."
    let mut b = holey("red", (0, 18));
    miss(&mut b, "red", "red#1");
    miss(&mut b, "red", "red#2");
    miss(&mut b, "red", "red#3");
    miss(&mut b, "blue", "blue#1");
    b.throw("blue", &[on_board("blue#2")]);
    b.throw_named("blue", &[id("blue#3")], &[hole("blue#2", H3)]);
    let g = game("holeyboard", &[], &b.build());
    assert_eq!(g.status, Status::Won);
    assert_eq!(g.winner.as_deref(), Some("blue"));
    assert_eq!(score(&g, "blue"), 21);
    assert_ruling(&g, "blue reached 21 on the third throw");
}

#[test]
fn holeyboard_example_given_21_by_the_opponent_goes_back_to_18() {
    // "Player A goes first with 18 points ... Player B knocks Player A's washer in the 3
    // point hole. Player A would go back to 18 points."
    let mut b = holey("red", (18, 0));
    b.throw("red", &[on_board("red#1")]);
    miss(&mut b, "red", "red#2");
    miss(&mut b, "red", "red#3");
    b.throw("blue", &[on_board("blue#1"), hole("red#1", H3)]);
    miss(&mut b, "blue", "blue#2");
    miss(&mut b, "blue", "blue#3");
    let g = game("holeyboard", &[], &b.build());
    assert_eq!(g.status, Status::InProgress);
    assert_eq!(score(&g, "red"), 18);
    assert_ruling(&g, "red was given 21 by the opponent knocking a washer in: back to 18");
}

#[test]
fn holeyboard_example_knocking_the_opponent_over_21() {
    // "It is possible to knock your opponent's washers in and have them go over 21."
    let mut b = holey("red", (14, 0));
    b.throw("red", &[hole("red#1", H3)]);
    b.throw("red", &[on_board("red#2")]);
    miss(&mut b, "red", "red#3");
    b.throw("blue", &[on_board("blue#1"), hole("red#2", H5)]);
    miss(&mut b, "blue", "blue#2");
    miss(&mut b, "blue", "blue#3");
    let g = game("holeyboard", &[], &b.build());
    assert_eq!(score(&g, "red"), 14 - 8);
    assert_ruling(&g, "red went over 21");
}

#[test]
fn holeyboard_example_skunk_by_sticking_the_vic() {
    // "Player A has 11 and sticks last washer. Player B misses all three throws and
    // Player A wins the game." (11 reached with the first washer from 8.)
    let mut b = holey("red", (8, 0));
    b.throw("red", &[hole("red#1", H3)]);
    miss(&mut b, "red", "red#2");
    b.throw("red", &[on_board("red#3")]);
    miss(&mut b, "blue", "blue#1");
    miss(&mut b, "blue", "blue#2");
    miss(&mut b, "blue", "blue#3");
    let g = game("holeyboard", &[], &b.build());
    assert_eq!(g.winner.as_deref(), Some("red"));
    assert_eq!((score(&g, "red"), score(&g, "blue")), (11, 0));
    assert_ruling(&g, "red wins by skunk, 11-0");
}

#[test]
fn holeyboard_example_eleven_without_sticking_plays_on_to_21() {
    // "Player A has 11 but does not stick the last washer; he/she still has 11 and must play to 21."
    let mut b = holey("red", (8, 0));
    b.throw("red", &[hole("red#1", H3)]);
    miss(&mut b, "red", "red#2");
    miss(&mut b, "red", "red#3");
    miss(&mut b, "blue", "blue#1");
    miss(&mut b, "blue", "blue#2");
    miss(&mut b, "blue", "blue#3");
    let g = game("holeyboard", &[], &b.build());
    assert_eq!(g.status, Status::InProgress);
    assert_eq!(score(&g, "red"), 11);
    assert_ruling(&g, "no skunk, red has 11 and plays on to 21");
}

#[test]
fn holeyboard_example_cancelled_eleven_keeps_the_chance_to_skunk() {
    // "If Player A does not stick last washer but Player B cancels the 1, then Player A
    // has 10 and still has a chance to skunk."
    let mut b = holey("red", (10, 0));
    b.throw("red", &[hole("red#1", H1)]);
    miss(&mut b, "red", "red#2");
    miss(&mut b, "red", "red#3");
    b.throw("blue", &[hole("blue#1", H1)]);
    miss(&mut b, "blue", "blue#2");
    miss(&mut b, "blue", "blue#3");
    let g = game("holeyboard", &[], &b.build());
    assert_eq!((score(&g, "red"), score(&g, "blue")), (10, 0));
    assert_eq!(g.status, Status::InProgress);
}

#[test]
fn holeyboard_example_first_round_skunk_is_over_when_the_opponent_scores() {
    // "Player A throws a five and two threes during the first round for a possible skunk.
    // Player B throws a one and avoids the skunk. The score is now 11-1."
    let mut b = holey("red", (0, 0));
    b.throw("red", &[hole("red#1", H5)]);
    b.throw("red", &[hole("red#2", H3)]);
    b.throw("red", &[hole("red#3", H3)]);
    b.throw("blue", &[hole("blue#1", H1)]);
    miss(&mut b, "blue", "blue#2");
    miss(&mut b, "blue", "blue#3");
    let g = game("holeyboard", &[], &b.build());
    assert_eq!((score(&g, "red"), score(&g, "blue")), (11, 1));
    assert_eq!(g.status, Status::InProgress);
    assert_ruling(&g, "skunk over: blue scored");
}

#[test]
fn holeyboard_example_first_round_skunk_with_a_five_and_two_threes() {
    // "A FIRST ROUND SKUNK happens when a Player gets an 11-0 score in the first round."
    let mut b = holey("red", (0, 0));
    b.throw("red", &[hole("red#1", H5)]);
    b.throw("red", &[hole("red#2", H3)]);
    b.throw("red", &[hole("red#3", H3)]);
    for p in ["blue#1", "blue#2", "blue#3"] {
        miss(&mut b, "blue", p);
    }
    let g = game("holeyboard", &[], &b.build());
    assert_eq!(g.winner.as_deref(), Some("red"));
    // Option: skunks only in the first round; in round 2 the same 11-0 plays on.
    let g = game("holeyboard", &["skunk=off"], &b.build());
    assert_eq!(g.status, Status::InProgress);
}

#[test]
fn holeyboard_option_skunk_first_round_only() {
    // Round 1: nobody scores. Round 2: red reaches 11-0 on the third throw.
    let mut b = holey("red", (0, 0));
    for p in ["red#1", "red#2", "red#3"] {
        miss(&mut b, "red", p);
    }
    for p in ["blue#1", "blue#2", "blue#3"] {
        miss(&mut b, "blue", p);
    }
    b.clear();
    b.throw("red", &[hole("red#1", H5)]);
    b.throw("red", &[hole("red#2", H3)]);
    b.throw("red", &[hole("red#3", H3)]);
    for p in ["blue#1", "blue#2", "blue#3"] {
        miss(&mut b, "blue", p);
    }
    assert_eq!(game("holeyboard", &[], &b.build()).winner.as_deref(), Some("red"));
    let g = game("holeyboard", &["skunk=first_round"], &b.build());
    assert_eq!(g.status, Status::InProgress);
    assert_eq!(score(&g, "red"), 11);
}

#[test]
fn holeyboard_example_going_over_21_subtracts_the_round_from_15_to_8() {
    // "Player A has 15 points. Player A throws two 3's and accidentally throws a 1 ...
    // a score of 8 (15-7=8.)"
    let mut b = holey("red", (15, 0));
    b.throw("red", &[hole("red#1", H3)]);
    b.throw("red", &[hole("red#2", H3)]);
    b.throw("red", &[hole("red#3", H1)]);
    for p in ["blue#1", "blue#2", "blue#3"] {
        miss(&mut b, "blue", p);
    }
    let g = game("holeyboard", &[], &b.build());
    assert_eq!(score(&g, "red"), 8);
    assert_ruling(&g, "15 - 7 = 8");
}

#[test]
fn holeyboard_example_cancelling_a_three_of_an_over_21_round_gives_19() {
    // "Player B throws a 3 and cancels Player A's 3. Player A's score would be 19 (22-3=19.)"
    let mut b = holey("red", (15, 0));
    b.throw("red", &[hole("red#1", H3)]);
    b.throw("red", &[hole("red#2", H3)]);
    b.throw("red", &[hole("red#3", H1)]);
    b.throw("blue", &[hole("blue#1", H3)]);
    miss(&mut b, "blue", "blue#2");
    miss(&mut b, "blue", "blue#3");
    let g = game("holeyboard", &[], &b.build());
    assert_eq!((score(&g, "red"), score(&g, "blue")), (19, 0));
}

#[test]
fn holeyboard_example_cancelled_back_to_21_returns_to_15() {
    // "Player B throws a 1 and cancels Player A's 1 giving them a score of 21. Player A
    // would go back to his original score from that round (15)."
    let mut b = holey("red", (15, 0));
    b.throw("red", &[hole("red#1", H3)]);
    b.throw("red", &[hole("red#2", H3)]);
    b.throw("red", &[hole("red#3", H1)]);
    b.throw("blue", &[hole("blue#1", H1)]);
    miss(&mut b, "blue", "blue#2");
    miss(&mut b, "blue", "blue#3");
    let g = game("holeyboard", &[], &b.build());
    assert_eq!(score(&g, "red"), 15);
    assert_eq!(g.status, Status::InProgress);
    assert_ruling(&g, "red was cancelled back to 21: back to 15");
}

#[test]
fn holeyboard_example_each_throw_after_going_over_pushes_back_from_20_to_10() {
    // "Player A has 20 and hits a 5, he/she will drop to 15 ... hits another 5, knocking
    // them back five more points to 10."
    let mut b = holey("red", (20, 0));
    b.throw("red", &[hole("red#1", H5)]);
    b.throw("red", &[hole("red#2", H5)]);
    miss(&mut b, "red", "red#3");
    for p in ["blue#1", "blue#2", "blue#3"] {
        miss(&mut b, "blue", p);
    }
    let g = game("holeyboard", &[], &b.build());
    assert_eq!(score(&g, "red"), 10);
}

#[test]
fn holeyboard_example_no_tie_cancel_then_win_with_two_threes() {
    // "Player A has 18 points; he throws in three 1s for the possible win. Player B has 15
    // points and throws a 1; canceling A's victory and follows it up with two 3's for the win."
    let mut b = holey("red", (18, 15));
    b.throw("red", &[hole("red#1", H1)]);
    b.throw("red", &[hole("red#2", H1)]);
    b.throw("red", &[hole("red#3", H1)]);
    b.throw("blue", &[hole("blue#1", H1)]);
    b.throw("blue", &[hole("blue#2", H3)]);
    b.throw("blue", &[hole("blue#3", H3)]);
    let g = game("holeyboard", &[], &b.build());
    assert_eq!(g.winner.as_deref(), Some("blue"));
    assert_eq!((score(&g, "red"), score(&g, "blue")), (20, 21));
}

#[test]
fn holeyboard_example_no_tie_knock_off_the_vic_then_win() {
    // "Player A has 18 points; he throws a 3 and then Sticks the Vic for the possible win.
    // Player B ... knocking off player 1's VIC, canceling A's victory and follows it up
    // with two 3's for the win."
    //
    // As written the example conflicts with cancellation: A's 3 lies in the 3 hole, so
    // B's first 3 cancels it. The test scores B's 6 as a 5 and a 1 (the example's intent),
    // then checks the literal two 3s by the cancellation rule.
    let mut b = holey("red", (18, 15));
    b.throw("red", &[hole("red#1", H3)]);
    miss(&mut b, "red", "red#2");
    b.throw("red", &[on_board("red#3")]);
    b.throw("blue", &[on_board("blue#1"), off("red#3")]);
    let mut literal = b.clone();
    b.throw("blue", &[hole("blue#2", H5)]);
    b.throw("blue", &[hole("blue#3", H1)]);
    let g = game("holeyboard", &[], &b.build());
    assert_eq!(g.winner.as_deref(), Some("blue"));
    assert_eq!(score(&g, "red"), 18);
    assert_ruling(&g, "red's stick the vic (red#3) was knocked off: win cancelled: back to 18");
    literal.throw("blue", &[hole("blue#2", H3)]);
    literal.throw("blue", &[hole("blue#3", H3)]);
    let g = game("holeyboard", &[], &literal.build());
    assert_eq!(g.status, Status::InProgress);
    assert_eq!((score(&g, "red"), score(&g, "blue")), (18, 18));
}

#[test]
fn holeyboard_example_you_cannot_win_on_a_cancelled_throw() {
    // "Player B has 15 points; he throws two 3s for 21 and then throws a 1, canceling
    // player A's win. Player B's score goes back to 15. Player A's score goes to 20."
    let mut b = holey("red", (18, 15));
    b.throw("red", &[hole("red#1", H1)]);
    b.throw("red", &[hole("red#2", H1)]);
    b.throw("red", &[hole("red#3", H1)]);
    b.throw("blue", &[hole("blue#1", H3)]);
    b.throw("blue", &[hole("blue#2", H3)]);
    b.throw("blue", &[hole("blue#3", H1)]);
    let g = game("holeyboard", &[], &b.build());
    assert_eq!(g.status, Status::InProgress);
    assert_eq!((score(&g, "red"), score(&g, "blue")), (20, 15));
    assert_ruling(&g, "a cancelling throw is no stick the vic");
}

#[test]
fn holeyboard_example_throw_off_two_and_win_with_a_one() {
    // "If you have 20 points and only need a one to win, you can THROW OFF the first two
    // washers and aim the third for the one hole, avoiding the need for Sticking the Vic."
    let mut b = holey("red", (20, 0));
    miss(&mut b, "red", "red#1");
    miss(&mut b, "red", "red#2");
    b.throw("red", &[hole("red#3", H1)]);
    for p in ["blue#1", "blue#2", "blue#3"] {
        miss(&mut b, "blue", p);
    }
    let g = game("holeyboard", &[], &b.build());
    assert_eq!(g.winner.as_deref(), Some("red"));
}

#[test]
fn holeyboard_example_stick_the_vic_fails_back_to_18() {
    // 21 with the first washer, second thrown off, the last washer does not stick.
    let mut b = holey("red", (18, 0));
    b.throw("red", &[hole("red#1", H3)]);
    miss(&mut b, "red", "red#2");
    miss(&mut b, "red", "red#3");
    for p in ["blue#1", "blue#2", "blue#3"] {
        miss(&mut b, "blue", p);
    }
    let g = game("holeyboard", &[], &b.build());
    assert_eq!(score(&g, "red"), 18);
    assert_ruling(&g, "stick the vic failed: the last washer did not stick: back to 18");
}

#[test]
fn holeyboard_example_stick_the_vic_with_the_second_washer_not_thrown_off_fails() {
    // "... still has two washers left, they must throw off the second washer and the last
    // washer ... has to stick."
    let mut b = holey("red", (18, 0));
    b.throw("red", &[hole("red#1", H3)]);
    b.throw("red", &[on_board("red#2")]);
    b.throw("red", &[on_board("red#3")]);
    for p in ["blue#1", "blue#2", "blue#3"] {
        miss(&mut b, "blue", p);
    }
    let g = game("holeyboard", &[], &b.build());
    assert_eq!(score(&g, "red"), 18);
    assert_ruling(&g, "did not throw the second off");
    // Option: the second washer merely must not score.
    let g = game("holeyboard", &["throw_off=lenient"], &b.build());
    assert_eq!(g.winner.as_deref(), Some("red"));
}

#[test]
fn holeyboard_example_stick_the_vic_with_one_washer_left_wins() {
    // "If a Player has successfully scored exactly 21 points and only has one washer left,
    // that washer must stick the vic."
    let mut b = holey("red", (15, 0));
    b.throw("red", &[hole("red#1", H3)]);
    b.throw("red", &[hole("red#2", H3)]);
    b.throw("red", &[on_board("red#3")]);
    for p in ["blue#1", "blue#2", "blue#3"] {
        miss(&mut b, "blue", p);
    }
    let g = game("holeyboard", &[], &b.build());
    assert_eq!(g.winner.as_deref(), Some("red"));
    assert_ruling(&g, "red reached 21 and stuck the vic");
}

#[test]
fn holeyboard_example_the_first_throwers_win_stands_unless_cancelled() {
    // "You must cancel the opponent's win first before attempting your own win."
    let mut b = holey("red", (18, 18));
    b.throw("red", &[hole("red#1", H1)]);
    b.throw("red", &[hole("red#2", H1)]);
    b.throw("red", &[hole("red#3", H1)]);
    miss(&mut b, "blue", "blue#1");
    miss(&mut b, "blue", "blue#2");
    b.throw("blue", &[hole("blue#3", H3)]);
    let g = game("holeyboard", &[], &b.build());
    assert_eq!(g.winner.as_deref(), Some("red"));
    assert_eq!(score(&g, "blue"), 18);
    assert_ruling(&g, "blue's 21 does not count");
}

#[test]
fn holeyboard_example_bounced_throw_is_removed_and_the_board_reset() {
    // "Any throw that hits the floor first and bounces on the board does not count and
    // should be removed ... Any action caused by a bounced washer should be reset."
    let mut b = holey("red", (0, 0));
    b.throw("red", &[hole("red#1", H3)]);
    b.throw("red", &[on_board("red#2")]);
    // The bounced washer knocked red#2 into the 5: reset, so the log's state is ignored.
    b.throw_named("red", &[id("red#3")], &[hole("red#2", H5)]);
    let mut log = b.build();
    log.events[2].bounced = true;
    let mut b2 = holey("red", (0, 0));
    b2.throw("red", &[hole("red#1", H3)]);
    b2.throw("red", &[on_board("red#2")]);
    b2.throw_named("red", &[id("red#3")], &[]);
    for p in ["blue#1", "blue#2", "blue#3"] {
        miss(&mut b2, "blue", p);
    }
    log.events.extend(b2.build().events[3..].iter().cloned());
    let g = game("holeyboard", &[], &log);
    assert_eq!(score(&g, "red"), 3);
    assert_ruling(&g, "bounced off the floor");
}

#[test]
fn holeyboard_example_no_score_until_all_washers_are_thrown() {
    let mut b = holey("red", (0, 0));
    b.throw("red", &[hole("red#1", H5)]);
    b.throw("red", &[hole("red#2", H5)]);
    b.throw("red", &[hole("red#3", H5)]);
    b.throw("blue", &[hole("blue#1", H1)]);
    let g = game("holeyboard", &[], &b.build());
    assert!(g.rounds.is_empty());
    assert_eq!((score(&g, "red"), score(&g, "blue")), (0, 0));
    assert_eq!(g.status, Status::InProgress);
    assert_eq!(g.current_round.as_ref().map(|c| c.events), Some(4));
}

#[test]
fn holeyboard_option_leaner_counts_in_or_out() {
    let mut b = holey("red", (0, 0));
    b.throw("red", &[leaner("red#1", H5)]);
    miss(&mut b, "red", "red#2");
    miss(&mut b, "red", "red#3");
    for p in ["blue#1", "blue#2", "blue#3"] {
        miss(&mut b, "blue", p);
    }
    assert_eq!(score(&game("holeyboard", &[], &b.build()), "red"), 5);
    assert_eq!(score(&game("holeyboard", &["leaner=out"], &b.build()), "red"), 0);
}

#[test]
fn holeyboard_option_below_zero() {
    // From 7, three 5s make 22: 7 - 15 = -8, or 0 with the floor.
    let mut b = holey("red", (7, 0));
    for p in ["red#1", "red#2", "red#3"] {
        b.throw("red", &[hole(p, H5)]);
    }
    for p in ["blue#1", "blue#2", "blue#3"] {
        miss(&mut b, "blue", p);
    }
    assert_eq!(score(&game("holeyboard", &[], &b.build()), "red"), -8);
    assert_eq!(score(&game("holeyboard", &["below_zero=floor"], &b.build()), "red"), 0);
}

#[test]
fn holeyboard_who_throws_first_follows_the_last_washer_in() {
    // Red scores, blue misses: red threw the last washer in, red throws first again.
    let mut b = holey("red", (0, 0));
    b.throw("red", &[hole("red#1", H1)]);
    miss(&mut b, "red", "red#2");
    miss(&mut b, "red", "red#3");
    for p in ["blue#1", "blue#2", "blue#3"] {
        miss(&mut b, "blue", p);
    }
    b.clear();
    // Round 2 must then start with red; blue throwing first is an error.
    let mut wrong = b.clone();
    wrong.throw("blue", &[hole("blue#1", H1)]);
    let e = run("holeyboard", &[], &wrong.build()).unwrap_err();
    assert!(matches!(e, RulesError::WrongThrower { event: 6, .. }), "{e}");
    let g = game("holeyboard", &[], &b.build());
    assert_eq!(g.next_first.as_deref(), Some("red"));
}

// ---------------------------------------------------------------- YOCU (001)

// yocu-4 holes: 0 is the 5, 1 the 3, 2 the 2, 3 the 1.
const Y5: usize = 0;
const Y3: usize = 1;
const Y2: usize = 2;
const Y1: usize = 3;

fn yocu(first: &str, start: (i64, i64)) -> LogBuilder {
    LogBuilder::new("yocu-4").first(first).start_score("red", start.0).start_score("blue", start.1)
}

/// Four throws by `team`, each putting the named washer in the given state.
fn four(b: &mut LogBuilder, team: &str, states: [Option<PieceState>; 4]) {
    for (i, s) in states.into_iter().enumerate() {
        let piece = format!("{team}#{}", i + 1);
        match s {
            Some(s) => b.throw(team, &[s]),
            None => b.throw_named(team, &[id(&piece)], &[]),
        };
    }
}

fn ob(piece: &str) -> Option<PieceState> {
    Some(on_board(piece))
}

#[test]
fn yocu_example_two_against_one_in_a_hole_keeps_one() {
    // "if Team A throws 2 washers into a hole and Team B tosses 1 washer into the same hole
    // ... Team A still gets to keep the points for the one washer still remaining."
    let mut b = yocu("red", (0, 0));
    four(&mut b, "red", [Some(hole("red#1", Y3)), Some(hole("red#2", Y3)), ob("red#3"), ob("red#4")]);
    four(&mut b, "blue", [Some(hole("blue#1", Y3)), ob("blue#2"), ob("blue#3"), ob("blue#4")]);
    let g = game("yocu-4", &[], &b.build());
    assert_eq!((score(&g, "red"), score(&g, "blue")), (3, 0));
    assert_ruling(&g, "red 2, blue 1 flat in: 1 of each cancelled");
}

#[test]
fn yocu_example_two_against_two_cancels_all_four() {
    let mut b = yocu("red", (0, 0));
    four(&mut b, "red", [Some(hole("red#1", Y3)), Some(hole("red#2", Y3)), ob("red#3"), ob("red#4")]);
    four(&mut b, "blue", [Some(hole("blue#1", Y3)), Some(hole("blue#2", Y3)), ob("blue#3"), ob("blue#4")]);
    let g = game("yocu-4", &[], &b.build());
    assert_eq!((score(&g, "red"), score(&g, "blue")), (0, 0));
}

#[test]
fn yocu_example_two_against_three_the_third_scores() {
    let mut b = yocu("red", (0, 0));
    four(&mut b, "red", [Some(hole("red#1", Y3)), Some(hole("red#2", Y3)), ob("red#3"), ob("red#4")]);
    four(&mut b, "blue", [Some(hole("blue#1", Y3)), Some(hole("blue#2", Y3)), Some(hole("blue#3", Y3)), ob("blue#4")]);
    let g = game("yocu-4", &[], &b.build());
    assert_eq!((score(&g, "red"), score(&g, "blue")), (0, 3));
}

#[test]
fn yocu_example_leaners_count_1_and_are_never_cancelled() {
    // "If a washer is leaning into a hole ... it is a LEANER and worth only one point" and
    // "The 'cancel' rule does not apply to leaners".
    let mut b = yocu("red", (0, 0));
    four(&mut b, "red", [Some(leaner("red#1", Y5)), ob("red#2"), ob("red#3"), ob("red#4")]);
    four(&mut b, "blue", [Some(leaner("blue#1", Y5)), ob("blue#2"), ob("blue#3"), ob("blue#4")]);
    let g = game("yocu-4", &[], &b.build());
    assert_eq!((score(&g, "red"), score(&g, "blue")), (1, 1));
}

#[test]
fn yocu_example_stacked_leaners_count_1_each() {
    // "If multiple washers lay on top of each other, all leaning into the hole, they are ALL
    // worth 1 point each."
    let mut b = yocu("red", (0, 0));
    four(
        &mut b,
        "red",
        [Some(leaner("red#1", Y2)), Some(leaner("red#2", Y2)), Some(leaner("red#3", Y2)), ob("red#4")],
    );
    four(&mut b, "blue", [ob("blue#1"), ob("blue#2"), ob("blue#3"), ob("blue#4")]);
    let g = game("yocu-4", &[], &b.build());
    assert_eq!(score(&g, "red"), 3);
}

#[test]
fn yocu_example_a_miss_costs_1_and_scores_never_go_below_0() {
    // "If a washer misses the board or slides/rolls off, 1 point is deducted" and
    // "Teams can not go below 0 points."
    let mut b = yocu("red", (2, 0));
    four(&mut b, "red", [None, None, None, ob("red#4")]);
    four(&mut b, "blue", [None, ob("blue#2"), ob("blue#3"), ob("blue#4")]);
    let g = game("yocu-4", &[], &b.build());
    assert_eq!((score(&g, "red"), score(&g, "blue")), (0, 0));
    assert_ruling(&g, "red: 3 washer(s) off the board, -1 each");
    assert_ruling(&g, "blue cannot go below 0");
}

#[test]
fn yocu_example_knocking_off_an_opponents_washer_costs_them_1() {
    // "Team B can attempt to knock off washers left on the board from Team A, causing
    // team A to lose 1 point."
    let mut b = yocu("red", (5, 5));
    four(&mut b, "red", [ob("red#1"), ob("red#2"), ob("red#3"), ob("red#4")]);
    b.throw("blue", &[on_board("blue#1"), off("red#1")]);
    b.throw("blue", &[on_board("blue#2")]);
    b.throw("blue", &[on_board("blue#3")]);
    b.throw("blue", &[on_board("blue#4")]);
    let g = game("yocu-4", &[], &b.build());
    assert_eq!((score(&g, "red"), score(&g, "blue")), (4, 5));
}

#[test]
fn yocu_example_a_washer_knocked_into_a_hole_scores_for_its_owner() {
    // "Any washer left on the board can be knocked into any hole by any other washer and
    // the points will be awarded to whichever team the washer in the hole belongs to."
    let mut b = yocu("red", (0, 0));
    four(&mut b, "red", [ob("red#1"), ob("red#2"), ob("red#3"), ob("red#4")]);
    b.throw("blue", &[on_board("blue#1"), hole("red#1", Y5)]);
    b.throw("blue", &[on_board("blue#2")]);
    b.throw("blue", &[on_board("blue#3")]);
    b.throw("blue", &[on_board("blue#4")]);
    let g = game("yocu-4", &[], &b.build());
    assert_eq!((score(&g, "red"), score(&g, "blue")), (5, 0));
    assert_eq!(g.next_first.as_deref(), Some("red"), "red has honours");
}

#[test]
fn yocu_example_over_21_is_a_bust_to_13_and_loses_the_round() {
    let mut b = yocu("red", (18, 10));
    four(&mut b, "red", [Some(hole("red#1", Y5)), ob("red#2"), ob("red#3"), ob("red#4")]);
    four(&mut b, "blue", [Some(hole("blue#1", Y1)), ob("blue#2"), ob("blue#3"), ob("blue#4")]);
    let g = game("yocu-4", &[], &b.build());
    assert_eq!((score(&g, "red"), score(&g, "blue")), (13, 11));
    assert_eq!(g.next_first.as_deref(), Some("blue"), "the busting team loses the round: honours to blue");
    assert_ruling(&g, "red busts");
    let g = game("yocu-4", &["bust_to=10"], &b.build());
    assert_eq!(score(&g, "red"), 10);
}

#[test]
fn yocu_example_exactly_21_after_the_round_wins() {
    let mut b = yocu("red", (18, 0));
    four(&mut b, "red", [Some(hole("red#1", Y3)), ob("red#2"), ob("red#3"), ob("red#4")]);
    four(&mut b, "blue", [ob("blue#1"), ob("blue#2"), ob("blue#3"), ob("blue#4")]);
    let g = game("yocu-4", &[], &b.build());
    assert_eq!(g.winner.as_deref(), Some("red"));
}

#[test]
fn yocu_example_all_8_washers_must_be_thrown() {
    // "All 8 washers must have been thrown to finish the game."
    let mut b = yocu("red", (18, 0));
    four(&mut b, "red", [Some(hole("red#1", Y3)), ob("red#2"), ob("red#3"), ob("red#4")]);
    b.throw("blue", &[on_board("blue#1")]);
    let g = game("yocu-4", &[], &b.build());
    assert_eq!(g.status, Status::InProgress);
    assert_eq!(score(&g, "red"), 18);
}

#[test]
fn yocu_example_honours_the_higher_round_throws_first() {
    let mut b = yocu("red", (0, 0));
    four(&mut b, "red", [Some(hole("red#1", Y1)), ob("red#2"), ob("red#3"), ob("red#4")]);
    four(&mut b, "blue", [Some(hole("blue#1", Y2)), ob("blue#2"), ob("blue#3"), ob("blue#4")]);
    let g = game("yocu-4", &[], &b.build());
    assert_eq!(g.next_first.as_deref(), Some("blue"));
}

#[test]
fn yocu_example_four_flat_in_earns_a_bonus_toss() {
    // "If a player makes all 4 washers in one round they receive an extra 'bonus toss'."
    let mut b = yocu("red", (0, 0));
    four(&mut b, "red", [Some(hole("red#1", Y1)), Some(hole("red#2", Y1)), Some(hole("red#3", Y2)), Some(hole("red#4", Y1))]);
    b.throw("red", &[hole("red#5", Y2)]);
    four(&mut b, "blue", [ob("blue#1"), ob("blue#2"), ob("blue#3"), ob("blue#4")]);
    let g = game("yocu-4", &[], &b.build());
    assert_eq!(score(&g, "red"), 1 + 1 + 2 + 1 + 2);
    assert_ruling(&g, "red has all 4 washers flat in: a bonus toss");
    // Without the bonus toss option the fifth red throw is out of turn.
    let e = run("yocu-4", &["bonus_toss=off"], &b.build()).unwrap_err();
    assert!(matches!(e, RulesError::WrongThrower { event: 4, .. }), "{e}");
}

#[test]
fn yocu_example_leaners_do_not_earn_a_bonus_toss() {
    // "This rule does not apply to Leaners."
    let mut b = yocu("red", (0, 0));
    four(&mut b, "red", [Some(hole("red#1", Y1)), Some(hole("red#2", Y1)), Some(hole("red#3", Y2)), Some(leaner("red#4", Y1))]);
    b.throw("red", &[hole("red#5", Y2)]);
    let e = run("yocu-4", &[], &b.build()).unwrap_err();
    assert!(matches!(e, RulesError::WrongThrower { event: 4, .. }), "{e}");
}

#[test]
fn yocu_9_hole_side_scores_by_row_and_cancels_by_hole() {
    // yocu-9 holes are listed row by row: let the test find the holes by value.
    let board = Board::load("yocu-9").unwrap();
    let holes = &board.washer().unwrap().holes;
    let of = |v: u32| -> Vec<usize> { holes.iter().enumerate().filter(|(_, h)| h.value == v).map(|(i, _)| i).collect() };
    let (fives, four_) = (of(5), of(4));
    assert_eq!(fives.len(), 2);
    let mut b = LogBuilder::new("yocu-9").first("red");
    four(&mut b, "red", [Some(hole("red#1", fives[0])), Some(hole("red#2", four_[0])), ob("red#3"), ob("red#4")]);
    // Blue in the other 5 hole: same row, different hole, no cancellation.
    four(&mut b, "blue", [Some(hole("blue#1", fives[1])), Some(hole("blue#2", four_[0])), ob("blue#3"), ob("blue#4")]);
    let g = game("yocu-9", &[], &b.build());
    assert_eq!((score(&g, "red"), score(&g, "blue")), (5, 5));
}

// ---------------------------------------------------------------- Knock Off (004)

use ShuffleCall::{CornerHanger, Hanger, Short, Zone1, Zone2, Zone3};

fn knock(first: &str) -> LogBuilder {
    LogBuilder::new("knock-off").first(first)
}

/// Eight alternating shots: `shots[i]` is the state after shot i (the shooter's weight and
/// anything it moved).
fn eight(b: &mut LogBuilder, first: &str, shots: Vec<Vec<PieceState>>) {
    let second = if first == "red" { "blue" } else { "red" };
    assert_eq!(shots.len(), 8);
    for (i, s) in shots.into_iter().enumerate() {
        let team = if i % 2 == 0 { first } else { second };
        let n = i / 2 + 1;
        let piece = format!("{team}#{n}");
        if s.is_empty() {
            b.throw_named(team, &[id(&piece)], &[]);
        } else {
            b.throw(team, &s);
        }
    }
}

#[test]
fn knock_off_example_only_the_team_with_the_deepest_weight_scores() {
    // "Only one team scores in a round. ... All of their weights which are ahead of their
    // opponent's deepest weight are added together."
    let mut b = knock("red");
    eight(
        &mut b,
        "red",
        vec![
            vec![wy("red#1", Zone3, 100.0)],
            vec![wy("blue#1", Zone2, 250.0)],
            vec![wy("red#2", Zone2, 200.0)],
            vec![wy("blue#2", Zone1, 900.0)],
            vec![wy("red#3", Zone1, 1000.0)],
            vec![],
            vec![],
            vec![],
        ],
    );
    let g = game("knock-off", &[], &b.build());
    assert_eq!((score(&g, "red"), score(&g, "blue")), (3 + 2, 0));
    assert_eq!(g.next_first.as_deref(), Some("red"), "the scorer shoots first next round");
}

#[test]
fn knock_off_example_weights_count_1_2_3_and_a_hanger_4() {
    let mut b = knock("blue");
    eight(
        &mut b,
        "blue",
        vec![
            vec![wy("blue#1", Hanger, 20.0)],
            vec![wy("red#1", Zone1, 1500.0)],
            vec![wy("blue#2", Zone3, 100.0)],
            vec![],
            vec![wy("blue#3", Zone2, 280.0)],
            vec![],
            vec![wy("blue#4", Zone1, 500.0)],
            vec![],
        ],
    );
    let g = game("knock-off", &[], &b.build());
    assert_eq!(score(&g, "blue"), 4 + 3 + 2 + 1);
}

#[test]
fn knock_off_a_corner_hanger_is_a_hanger() {
    let mut b = knock("red");
    eight(&mut b, "red", vec![vec![wy("red#1", CornerHanger, 20.0)], vec![], vec![], vec![], vec![], vec![], vec![], vec![]]);
    assert_eq!(score(&game("knock-off", &[], &b.build()), "red"), 4);
}

#[test]
fn knock_off_example_no_score_passes_the_hammer() {
    // "If no points are scored ... the team that had the hammer during the round where no
    // points were scored must shoot first the next round."
    let mut b = knock("red");
    eight(&mut b, "red", vec![vec![]; 8]);
    let g = game("knock-off", &[], &b.build());
    assert_eq!(g.rounds.len(), 1);
    assert_eq!(g.next_first.as_deref(), Some("blue"));
    assert_ruling(&g, "no score: the hammer passes");
}

#[test]
fn knock_off_example_game_to_15_or_21() {
    let mut b = knock("red").start_score("red", 13).start_score("blue", 9);
    eight(&mut b, "red", vec![vec![wy("red#1", Zone3, 90.0)], vec![], vec![], vec![], vec![], vec![], vec![], vec![]]);
    let g = game("knock-off", &[], &b.build());
    assert_eq!((g.status, g.winner.as_deref(), score(&g, "red")), (Status::Won, Some("red"), 16));
    let g = game("knock-off", &["target=21"], &b.build());
    assert_eq!(g.status, Status::InProgress);
}

#[test]
fn knock_off_example_short_or_long_foul_line() {
    // "Short Foul Line": in play past the foul line nearest the shooter; "Long Foul Line":
    // past the one on the opposite end. A weight at y = 3000 mm lies between the two.
    let mut b = knock("red");
    eight(&mut b, "red", vec![vec![wy("red#1", Short, 3000.0)], vec![], vec![], vec![], vec![], vec![], vec![], vec![]]);
    let g = game("knock-off", &[], &b.build());
    assert_eq!(score(&g, "red"), 1, "short foul line (default): in play");
    assert_ruling(&g, "red#1 called short but its position puts it zone1 against the short foul line");
    let g = game("knock-off", &["foul_line=long"], &b.build());
    assert_eq!(score(&g, "red"), 0, "long foul line: short of it");
}

#[test]
fn knock_off_same_zone_without_positions_needs_review() {
    let mut b = knock("red");
    eight(
        &mut b,
        "red",
        vec![vec![wt("red#1", Zone3)], vec![wt("blue#1", Zone3)], vec![], vec![], vec![], vec![], vec![], vec![]],
    );
    let g = game("knock-off", &[], &b.build());
    assert_eq!(g.status, Status::NeedsReview);
    assert!(g.rounds.is_empty());
    assert!(g.review.as_ref().unwrap().reason.contains("positions"));
}

#[test]
fn knock_off_weights_too_close_in_depth_need_review() {
    let mut b = knock("red");
    eight(
        &mut b,
        "red",
        vec![vec![wy("red#1", Zone3, 100.0)], vec![wy("blue#1", Zone3, 100.2)], vec![], vec![], vec![], vec![], vec![], vec![]],
    );
    assert_eq!(game("knock-off", &[], &b.build()).status, Status::NeedsReview);
}

// ---------------------------------------------------------------- Tap & Draw (004)

fn tap() -> LogBuilder {
    LogBuilder::new("tap-and-draw").first("red")
}

#[test]
fn tap_and_draw_example_knocking_your_own_weight_off_it_stays_off() {
    // "If you knock your own Weight off the board, it must remain off and out of play."
    let mut b = tap();
    b.throw("red", &[wy("red#1", Zone2, 250.0)]);
    b.throw("blue", &[wy("blue#1", Zone1, 800.0)]);
    b.throw("red", &[wy("red#2", Zone3, 100.0), woff("red#1")]);
    let g = game("tap-and-draw", &[], &b.build());
    assert_ruling(&g, "red#1 knocked off by its own team: stays out of play");
    // It may not come back in the next shot.
    let mut log = b.build();
    let mut next = log.events[2].clone();
    next.thrower = "blue".into();
    next.pieces.push(wy("red#1", Zone2, 250.0));
    next.pieces.push(wy("blue#2", Zone1, 700.0));
    log.events.push(next);
    let e = run("tap-and-draw", &[], &log).unwrap_err();
    assert!(matches!(e, RulesError::Inconsistent { event: 3, .. }), "{e}");
}

#[test]
fn tap_and_draw_example_knocking_an_opponents_weight_off_replaces_it_and_removes_the_shooter() {
    // "If you knock off your opponent's Weight off the board, your own weight will be
    // removed from play, and your opponent's Weight replaced on the board in its original
    // position."
    let mut b = tap();
    b.throw("red", &[wy("red#1", Zone1, 900.0)]);
    b.throw("blue", &[wy("blue#1", Zone2, 250.0)]);
    b.throw("red", &[wy("red#2", Zone3, 120.0), woff("blue#1")]);
    // Blue's next shot: the board as the players reset it (blue#1 back, red#2 gone).
    b.throw("blue", &[wy("blue#1", Zone2, 250.0), woff("red#2"), wy("blue#2", Zone1, 1200.0)]);
    for s in [
        vec![wy("red#3", Zone1, 1300.0)],
        vec![wy("blue#3", Zone1, 1400.0)],
        vec![wy("red#4", Zone1, 1500.0)],
        vec![wy("blue#4", Zone1, 1600.0)],
    ] {
        let team = if s[0].piece.team == Some(boardcall::piece::Team::Red) { "red" } else { "blue" };
        b.throw(team, &s);
    }
    let g = game("tap-and-draw", &[], &b.build());
    assert_ruling(&g, "red knocked off blue#1: blue#1 goes back to zone2 at x = 0.0, y = 250.0 mm; shooting weight red#2 is removed");
    // Blue's replaced zone-2 weight is the deepest: blue scores it alone.
    assert_eq!((score(&g, "red"), score(&g, "blue")), (0, 2));
    assert_eq!(g.next_first.as_deref(), Some("red"), "the scorer shoots last next round");
}

#[test]
fn tap_and_draw_example_advancing_your_own_weights_in_a_foul_returns_them() {
    // "If you knock your opponent's Weight off the board, and at the same time advance one
    // or more of your own Weights to higher scoring areas, your Weights must be returned to
    // their original positions ... and your shooting Weight must be removed."
    let mut b = tap();
    b.throw("red", &[wy("red#1", Zone1, 400.0)]);
    b.throw("blue", &[wy("blue#1", Zone2, 250.0)]);
    b.throw("red", &[wy("red#2", Zone1, 600.0), wy("red#1", Zone3, 90.0), woff("blue#1")]);
    let g = game("tap-and-draw", &[], &b.build());
    assert_ruling(&g, "red#1 (advanced) goes back to zone1 at x = 0.0, y = 400.0 mm");
    assert_ruling(&g, "shooting weight red#2 is removed");
}

#[test]
fn tap_and_draw_example_tapping_an_opponents_weight_forward_it_stays() {
    // "If you tap any of your opponent's Weights, so that they advance, they remain in
    // their better scoring position."
    let mut b = tap();
    b.throw("red", &[wy("red#1", Zone1, 400.0)]);
    b.throw("blue", &[wy("blue#1", Zone1, 500.0), wy("red#1", Zone3, 100.0)]);
    for (team, s) in [
        ("red", wy("red#2", Zone1, 1300.0)),
        ("blue", wy("blue#2", Zone1, 1400.0)),
        ("red", wy("red#3", Zone1, 1500.0)),
        ("blue", wy("blue#3", Zone1, 1600.0)),
        ("red", wy("red#4", Zone1, 1700.0)),
        ("blue", wy("blue#4", Zone1, 1750.0)),
    ] {
        b.throw(team, &[s]);
    }
    let g = game("tap-and-draw", &[], &b.build());
    assert_eq!(score(&g, "red"), 3);
}

// ---------------------------------------------------------------- Horse Collar (002, 004)

fn collar(players: &[&str]) -> LogBuilder {
    LogBuilder::new("horse-collar").players(players)
}

/// One side's turn: eight weights (red#1-4, blue#1-4) ending in `calls` (None: off).
fn turn(b: &mut LogBuilder, side: &str, calls: [Option<ShuffleCall>; 8]) {
    b.clear();
    for (i, c) in calls.into_iter().enumerate() {
        let piece = if i < 4 { format!("red#{}", i + 1) } else { format!("blue#{}", i - 3) };
        match c {
            Some(c) => b.throw(side, &[wt(&piece, c)]),
            None => b.throw_named(side, &[id(&piece)], &[]),
        };
    }
}

const NONE8: [Option<ShuffleCall>; 8] = [None; 8];

#[test]
fn horse_collar_example_a_trey_two_deuces_and_three_ones_score_10() {
    // "if a player or team throws 1 weight worth 3 points and 2 weights worth 2 points and 3
    // weights worth 1 point and all remaining weights on the board are past the designated
    // foul line, the player or team would score 10 points."
    let mut b = collar(&["ann", "bob"]);
    turn(&mut b, "ann", [Some(Zone3), Some(Zone2), Some(Zone2), Some(Zone1), Some(Zone1), Some(Zone1), None, None]);
    turn(&mut b, "bob", NONE8);
    let g = game("horse-collar", &[], &b.build());
    assert_eq!((score(&g, "ann"), score(&g, "bob")), (10, 0));
}

#[test]
fn horse_collar_example_no_weight_in_the_trey_no_score() {
    // "If there are NO weights in this zone, NO SCORE OF ANY KIND CAN BE COUNTED."
    let mut b = collar(&["ann", "bob"]);
    turn(&mut b, "ann", [Some(Zone2), Some(Zone2), Some(Zone2), Some(Zone1), Some(Zone1), None, None, None]);
    turn(&mut b, "bob", NONE8);
    let g = game("horse-collar", &[], &b.build());
    assert_eq!(score(&g, "ann"), 0);
    assert_ruling(&g, "no weight in the trey or hanging: no score");
}

#[test]
fn horse_collar_example_a_weight_short_of_the_foul_line_no_score() {
    // "If a weight remains on the board that is not past the designated foul line, no
    // points can be awarded."
    let mut b = collar(&["ann", "bob"]);
    turn(&mut b, "ann", [Some(Zone3), Some(Hanger), Some(Short), None, None, None, None, None]);
    turn(&mut b, "bob", NONE8);
    let g = game("horse-collar", &[], &b.build());
    assert_eq!(score(&g, "ann"), 0);
    assert_ruling(&g, "ann: red#3 short of the designated foul line: no score");
}

#[test]
fn horse_collar_example_hanger_13_and_corner_hanger_26() {
    let mut b = collar(&["ann", "bob"]);
    turn(&mut b, "ann", [Some(Hanger), Some(CornerHanger), None, None, None, None, None, None]);
    turn(&mut b, "bob", NONE8);
    assert_eq!(score(&game("horse-collar", &[], &b.build()), "ann"), 39);
    // "Some establishments ... may not count the hanging corner any more than a hanger."
    assert_eq!(score(&game("horse-collar", &["corner=13"], &b.build()), "ann"), 26);
}

#[test]
fn horse_collar_example_first_to_51_does_not_win_if_the_hammer_ends_higher() {
    // "scoring 51 points first does not necessarily make that player or team the winner.
    // Every player or team gets to finish each frame and the highest score is the winner."
    let mut b = collar(&["ann", "bob"]).start_score("ann", 45).start_score("bob", 40);
    turn(&mut b, "ann", [Some(Zone3), Some(Zone3), None, None, None, None, None, None]);
    turn(&mut b, "bob", [Some(Hanger), None, None, None, None, None, None, None]);
    let g = game("horse-collar", &[], &b.build());
    assert_eq!((score(&g, "ann"), score(&g, "bob")), (51, 53));
    assert_eq!(g.winner.as_deref(), Some("bob"));
    assert_ruling(&g, "2 sides reached 51: bob has the highest final score");
}

#[test]
fn horse_collar_example_the_game_is_not_over_until_the_hammer_has_shot() {
    // "A game is NOT complete until the player or team which has been shooting last has
    // taken its LAST TURN AT THE BOARD."
    let mut b = collar(&["ann", "bob"]).start_score("ann", 45);
    turn(&mut b, "ann", [Some(Zone3), Some(Zone3), None, None, None, None, None, None]);
    let g = game("horse-collar", &[], &b.build());
    assert_eq!(g.status, Status::InProgress);
    turn(&mut b, "bob", NONE8);
    let g = game("horse-collar", &[], &b.build());
    assert_eq!(g.winner.as_deref(), Some("ann"));
}

#[test]
fn horse_collar_example_the_hammer_reaching_51_wins() {
    let mut b = collar(&["ann", "bob"]).start_score("bob", 48);
    turn(&mut b, "ann", NONE8);
    turn(&mut b, "bob", [Some(Zone3), None, None, None, None, None, None, None]);
    let g = game("horse-collar", &[], &b.build());
    assert_eq!(g.winner.as_deref(), Some("bob"));
}

#[test]
fn horse_collar_tie_over_51_plays_another_frame() {
    let mut b = collar(&["ann", "bob"]).start_score("ann", 48).start_score("bob", 48);
    turn(&mut b, "ann", [Some(Zone3), None, None, None, None, None, None, None]);
    turn(&mut b, "bob", [Some(Zone3), None, None, None, None, None, None, None]);
    let g = game("horse-collar", &[], &b.build());
    assert_eq!(g.status, Status::InProgress);
    assert_ruling(&g, "ann and bob tied at 51: another frame between them");
}

#[test]
fn horse_collar_example_9ft_bank_board_five_zone_counts_as_the_trey() {
    // "On the 9-ft. BANK-SHOT the "5" zone is disregarded and anything in that zone is
    // considered in the trey zone."
    let mut b = collar(&["ann", "bob"]).board("shuffleboard-22ft@9ft");
    b.clear();
    b.throw("ann", &[wy("red#1", Zone3, 60.0).value(5)]);
    for p in ["red#2", "red#3", "red#4", "blue#1", "blue#2", "blue#3", "blue#4"] {
        b.throw_named("ann", &[id(p)], &[]);
    }
    turn(&mut b, "bob", NONE8);
    let g = game("horse-collar", &[], &b.build());
    assert_eq!(score(&g, "ann"), 3);
    assert_ruling(&g, "red#1 in the 5 zone counts as the trey");
    assert_eq!(score(&game("horse-collar", &["five_zone=five"], &b.build()), "ann"), 5);
}

#[test]
fn horse_collar_option_hickey_counts_scoreless_turns() {
    let mut b = collar(&["ann", "bob"]);
    turn(&mut b, "ann", NONE8);
    turn(&mut b, "bob", [Some(Zone3), None, None, None, None, None, None, None]);
    let g = game("horse-collar", &["hickey=on"], &b.build());
    let h = g.hickeys.expect("hickey count on");
    assert_eq!((h.get("ann"), h.get("bob")), (1, 0));
    assert!(game("horse-collar", &[], &b.build()).hickeys.is_none());
}

// ---------------------------------------------------------------- Baseball (004)

#[test]
fn baseball_example_nine_innings_highest_total_wins() {
    // "scores are totaled and a winner named after nine innings (rounds) of play."
    let mut b = LogBuilder::new("baseball").players(&["ann", "bob"]);
    for inning in 0..9 {
        let ann = if inning == 4 { [Some(Hanger), None, None, None, None, None, None, None] } else { NONE8 };
        turn(&mut b, "ann", ann);
        turn(&mut b, "bob", [Some(Zone3), None, None, None, None, None, None, None]);
        if inning == 7 {
            let g = game("baseball", &[], &b.build());
            assert_eq!(g.status, Status::InProgress, "after 8 innings");
        }
    }
    let g = game("baseball", &[], &b.build());
    assert_eq!(g.rounds.len(), 9);
    assert_eq!((score(&g, "ann"), score(&g, "bob")), (13, 27));
    assert_eq!(g.winner.as_deref(), Some("bob"));
    let g = game("baseball", &["innings=5"], &{
        let mut l = b.build();
        l.events.truncate(5 * 16);
        l
    });
    assert_eq!((score(&g, "ann"), score(&g, "bob"), g.winner.as_deref()), (13, 15, Some("bob")));
}

// ---------------------------------------------------------------- Crazy Eight (004)

fn crazy(players: &[&str]) -> LogBuilder {
    LogBuilder::new("crazy-eight").players(players)
}

/// The first four (red) thrown together, ending in `group` (None: off the board).
fn group(b: &mut LogBuilder, player: &str, group: [Option<ShuffleCall>; 4]) {
    b.clear();
    let pieces: Vec<PieceState> = group
        .iter()
        .enumerate()
        .filter_map(|(i, c)| {
            // Positions consistent with the calls: short weights between the foul lines.
            let y = if *c == Some(Short) { 2500.0 } else { 300.0 + 100.0 * i as f64 };
            c.map(|c| wy(&format!("red#{}", i + 1), c, y))
        })
        .collect();
    let throws: Vec<PieceId> = (1..=4).map(|i| id(&format!("red#{i}"))).collect();
    b.throw_named(player, &throws, &pieces);
}

#[test]
fn crazy_eight_example_first_four_not_all_past_the_long_foul_line_no_score() {
    // "If all 4 weights do not pass the long foul line and stay on the board, no points are
    // scored for that round ... and next player is up."
    let mut b = crazy(&["ann", "bob"]);
    group(&mut b, "ann", [Some(Zone1), Some(Zone2), Some(Short), Some(Zone1)]);
    group(&mut b, "bob", [Some(Zone1), None, Some(Zone1), Some(Zone1)]);
    let g = game("crazy-eight", &["hickey=on"], &b.build());
    assert_eq!(g.rounds.len(), 1);
    assert_eq!((score(&g, "ann"), score(&g, "bob")), (0, 0));
    assert_ruling(&g, "ann: only 3 of the first four stayed past the long foul line: no score");
    assert_eq!(g.hickeys.unwrap().get("bob"), 1);
}

/// The four single shots of the second colour after a full group.
fn second_four(b: &mut LogBuilder, player: &str, shots: Vec<Vec<PieceState>>) {
    for (i, s) in shots.into_iter().enumerate() {
        if s.is_empty() {
            b.throw_named(player, &[id(&format!("blue#{}", i + 1))], &[]);
        } else {
            b.throw(player, &s);
        }
    }
}

#[test]
fn crazy_eight_example_all_knocked_off_and_one_left_scores() {
    // "if a player gets all 4 first weights past the foul line, knocks them all off and has
    // at least one of the final 4 weights left on the board, points are added and count."
    let mut b = crazy(&["ann", "bob"]);
    group(&mut b, "ann", [Some(Zone1), Some(Zone2), Some(Zone1), Some(Zone1)]);
    second_four(
        &mut b,
        "ann",
        vec![
            vec![woff("blue#1"), woff("red#1"), woff("red#2")],
            vec![woff("blue#2"), woff("red#3")],
            vec![wy("blue#3", Zone3, 100.0), woff("red#4")],
            vec![wy("blue#4", Hanger, 20.0)],
        ],
    );
    group(&mut b, "bob", [None, None, None, None]);
    let g = game("crazy-eight", &[], &b.build());
    assert_eq!(score(&g, "ann"), 3 + 4);
}

#[test]
fn crazy_eight_example_first_four_not_all_knocked_off_no_score() {
    // "if a player does get all 4 weights past the foul on first throw, but does not knock
    // them off ... no points are scored"
    let mut b = crazy(&["ann", "bob"]);
    group(&mut b, "ann", [Some(Zone1), Some(Zone2), Some(Zone1), Some(Zone1)]);
    second_four(
        &mut b,
        "ann",
        vec![vec![woff("blue#1"), woff("red#1")], vec![woff("blue#2"), woff("red#3")], vec![wy("blue#3", Zone3, 100.0), woff("red#4")], vec![]],
    );
    group(&mut b, "bob", [None, None, None, None]);
    let g = game("crazy-eight", &[], &b.build());
    assert_eq!(score(&g, "ann"), 0);
    assert_ruling(&g, "ann: red#2 of the first four not knocked off: no score");
}

#[test]
fn crazy_eight_example_all_knocked_off_but_none_of_the_last_four_left_no_score() {
    let mut b = crazy(&["ann", "bob"]);
    group(&mut b, "ann", [Some(Zone1), Some(Zone2), Some(Zone1), Some(Zone1)]);
    second_four(
        &mut b,
        "ann",
        vec![
            vec![woff("red#1"), woff("red#2")],
            vec![woff("red#3")],
            vec![woff("red#4"), wy("blue#3", Short, 2500.0)],
            vec![],
        ],
    );
    group(&mut b, "bob", [None, None, None, None]);
    let g = game("crazy-eight", &[], &b.build());
    assert_eq!(score(&g, "ann"), 0);
    assert_ruling(&g, "ann: none of the last four stayed past the long foul line: no score");
}

#[test]
fn crazy_eight_example_highest_over_the_target_wins_and_ties_replay() {
    // "the highest score that is equal to or greater than the agreed upon game point is
    // declared the winner ... If the last player ties with a prior player, then another
    // round must be played."
    let full = |b: &mut LogBuilder, p: &str, last: ShuffleCall| {
        group(b, p, [Some(Zone1), Some(Zone1), Some(Zone1), Some(Zone1)]);
        second_four(
            b,
            p,
            vec![vec![woff("red#1"), woff("red#2")], vec![woff("red#3"), woff("red#4")], vec![], vec![wy("blue#4", last, 100.0)]],
        );
    };
    let mut b = crazy(&["ann", "bob", "cat"]).start_score("ann", 12).start_score("bob", 12).start_score("cat", 2);
    full(&mut b, "ann", Zone3);
    full(&mut b, "bob", Zone3);
    full(&mut b, "cat", Zone3);
    let g = game("crazy-eight", &[], &b.build());
    assert_eq!(g.status, Status::InProgress);
    assert_ruling(&g, "ann and bob tied at 15: another frame between them");
    assert_eq!(g.next_first.as_deref(), Some("ann"));
    // The tie-break frame is only ann and bob; cat may not shoot.
    full(&mut b, "ann", Zone2);
    full(&mut b, "bob", Hanger);
    let g = game("crazy-eight", &[], &b.build());
    assert_eq!(g.winner.as_deref(), Some("bob"));
    assert_eq!(score(&g, "bob"), 19);
    // With a target of 21 nobody has reached it: the game goes on.
    let g = game("crazy-eight", &["target=21"], &b.build());
    assert_eq!(g.status, Status::InProgress);
}

// ---------------------------------------------------------------- Sjoelen (003)

// Sjoelbak compartments by index (ascending x): 0 is worth 1, 1 worth 4, 2 worth 3, 3 worth 2.
/// Discs in compartments worth 1, 2, 3, 4 (counts), as disc states numbered from 1.
fn discs(by_value: [u32; 4]) -> Vec<PieceState> {
    let index_of_value = [0usize, 3, 2, 1];
    let mut out = Vec::new();
    let mut n = 1;
    for (v, count) in by_value.iter().enumerate() {
        for _ in 0..*count {
            out.push(PieceState::disc(PieceId::disc(n), SjoelCall::Compartment { compartment: index_of_value[v] }));
            n += 1;
        }
    }
    out
}

fn sub_turn(b: &mut LogBuilder, player: &str, by_value: [u32; 4]) {
    b.clear();
    b.throw(player, &discs(by_value));
}

fn sjoel(players: &[&str], turns: &[Vec<[u32; 4]>]) -> EventLog {
    let mut b = LogBuilder::new("sjoelen").players(players);
    for (i, t) in turns.iter().enumerate() {
        for s in t {
            sub_turn(&mut b, players[i % players.len()], *s);
        }
    }
    b.build()
}

#[test]
fn sjoelen_example_one_two_three_discs_in_each_compartment_score_20_40_60() {
    for (n, expected) in [(1, 20), (2, 40), (3, 60)] {
        let log = sjoel(&["ann"], &[vec![[0, 0, 0, 0], [0, 0, 0, 0], [n, n, n, n]]]);
        let g = game("sjoelen", &[], &log);
        assert_eq!(score(&g, "ann"), expected);
    }
}

#[test]
fn sjoelen_example_five_each_plus_one_in_the_4_scores_104() {
    // "Each compartment contains 5 discs plus an extra disc in compartment with value 4.
    // The score is then 100 + 4 = 104 points."
    let log = sjoel(&["ann"], &[vec![[2, 2, 2, 3], [4, 4, 4, 5], [5, 5, 5, 6]]]);
    let g = game("sjoelen", &[], &log);
    assert_eq!(score(&g, "ann"), 104);
    assert_eq!(g.rounds[0].events, [0, 2]);
}

#[test]
fn sjoelen_example_discs_in_compartments_are_kept_between_sub_turns() {
    let log = sjoel(&["ann"], &[vec![[3, 2, 1, 0], [3, 2, 2, 1], [3, 2, 2, 2]]]);
    let g = game("sjoelen", &[], &log);
    assert_eq!(score(&g, "ann"), 2 * 20 + 1, "two full sets and one more disc in the 1");
    // A compartment losing discs between sub-turns is inconsistent.
    let bad = sjoel(&["ann"], &[vec![[3, 2, 1, 0], [2, 2, 2, 1], [3, 2, 2, 2]]]);
    let e = run("sjoelen", &[], &bad).unwrap_err();
    assert!(matches!(e, RulesError::Inconsistent { event: 1, .. }), "{e}");
}

#[test]
fn sjoelen_example_148_after_one_sub_turn_earns_2_extra_discs_and_156_is_the_maximum() {
    // "Do you have 148 points after 1 turn you get 2 extra discs." "The maximum possible
    // score is therefore 156 points."
    let log = sjoel(&["ann"], &[vec![[7, 7, 7, 9], [7, 7, 7, 11]]]);
    let g = game("sjoelen", &[], &log);
    assert_eq!(score(&g, "ann"), 156);
    assert_ruling(&g, "148 after 1 sub-turn(s): 2 extra disc(s)");
    assert_ruling(&g, "every disc is in after sub-turn 2");
}

#[test]
fn sjoelen_example_148_after_two_sub_turns_earns_1_extra_disc() {
    let log = sjoel(&["ann"], &[vec![[7, 7, 7, 5], [7, 7, 7, 9], [7, 7, 7, 10]]]);
    let g = game("sjoelen", &[], &log);
    assert_eq!(score(&g, "ann"), 152);
    assert_ruling(&g, "148 after 2 sub-turn(s): 1 extra disc(s)");
}

#[test]
fn sjoelen_example_more_than_30_discs_cancels_the_turn() {
    // "If a game is played with more than 30 discs, the turn is cancelled and must be
    // played again."
    let log = sjoel(&["ann"], &[vec![[8, 8, 8, 7]], vec![[1, 1, 1, 1], [2, 2, 2, 2], [3, 3, 3, 3]]]);
    let g = game("sjoelen", &[], &log);
    assert_ruling(&g, "played with more than 30 discs");
    assert_eq!(score(&g, "ann"), 60);
    assert_eq!(g.rounds.len(), 1);
}

#[test]
fn sjoelen_example_ten_turns_a_match() {
    let turns: Vec<Vec<[u32; 4]>> = (0..20).map(|i| vec![[0; 4], [0; 4], [1 + i % 2, 1, 1, 1]]).collect();
    let log = sjoel(&["ann", "bob"], &turns);
    let g = game("sjoelen", &[], &log);
    assert_eq!(g.rounds.len(), 10);
    assert_eq!((score(&g, "ann"), score(&g, "bob")), (200, 210));
    assert_eq!(g.winner.as_deref(), Some("bob"));
    let nine = sjoel(&["ann", "bob"], &turns[..18]);
    assert_eq!(game("sjoelen", &[], &nine).status, Status::InProgress);
    let g = game("sjoelen", &["turns=1"], &sjoel(&["ann", "bob"], &turns[..2]));
    assert_eq!(g.winner.as_deref(), Some("bob"));
    // An eleventh turn is an error naming the event.
    let eleven = sjoel(&["ann", "bob"], &[turns.clone(), vec![vec![[0; 4]]]].concat());
    let e = run("sjoelen", &[], &eleven).unwrap_err();
    assert!(matches!(e, RulesError::AfterGameOver { event: 60, .. }), "{e}");
}

#[test]
fn sjoelen_equal_totals_after_the_match_are_a_tie() {
    let turns: Vec<Vec<[u32; 4]>> = (0..2).map(|_| vec![[1, 1, 1, 1]; 3]).collect();
    let g = game("sjoelen", &["turns=1"], &sjoel(&["ann", "bob"], &turns));
    assert_eq!(g.status, Status::Tied);
    assert_eq!(g.winner, None);
}

// ---------------------------------------------------------------- bad input

#[test]
fn garbage_json_is_a_json_error() {
    for text in ["{", "not json", r#"{"format": 1, "events": [], "colour": "red"}"#] {
        let e = EventLog::from_json(text).unwrap_err();
        assert!(matches!(e, RulesError::Json { .. }), "{text}: {e}");
    }
    let e = EventLog::from_json(r#"{"format": 2, "events": []}"#).unwrap_err();
    assert_eq!(e, RulesError::Format { found: 2, expected: 1 });
}

#[test]
fn an_unknown_piece_is_an_error_naming_the_event() {
    let mut b = holey("red", (0, 0));
    b.throw("red", &[hole("red#1", H1)]);
    b.throw("red", &[hole("red#4", H1)]);
    let e = run("holeyboard", &[], &b.build()).unwrap_err();
    assert!(matches!(e, RulesError::UnknownPiece { event: 1, .. }), "{e}");
    assert!(e.to_string().contains("event 1") && e.to_string().contains("red#4"), "{e}");
}

#[test]
fn a_washer_in_two_places_is_an_error() {
    let mut log = {
        let mut b = holey("red", (0, 0));
        b.throw("red", &[hole("red#1", H1)]);
        b.build()
    };
    log.events[0].pieces.push(on_board("red#1"));
    let e = run("holeyboard", &[], &log).unwrap_err();
    assert_eq!(e, RulesError::DuplicatePiece { event: 0, piece: "red#1".into() });
}

#[test]
fn a_throw_by_the_wrong_team_is_an_error() {
    let mut b = knock("red");
    b.throw("red", &[wy("red#1", Zone1, 900.0)]);
    b.throw("red", &[wy("red#2", Zone1, 1000.0)]);
    let e = run("knock-off", &[], &b.build()).unwrap_err();
    assert_eq!(e, RulesError::WrongThrower { event: 1, expected: "blue".into(), found: "red".into() });
}

#[test]
fn more_pieces_than_thrown_is_an_error() {
    let mut b = knock("red");
    b.throw("red", &[wy("red#1", Zone1, 900.0), wy("red#2", Zone1, 1000.0)]);
    let e = run("knock-off", &[], &b.build()).unwrap_err();
    assert!(matches!(e, RulesError::TooManyPieces { event: 0, .. }), "{e}");
    // An opponent's piece before it was thrown.
    let mut b = knock("red");
    b.throw("red", &[wy("red#1", Zone1, 900.0), wy("blue#1", Zone1, 1000.0)]);
    let e = run("knock-off", &[], &b.build()).unwrap_err();
    assert!(matches!(e, RulesError::Inconsistent { event: 0, .. }), "{e}");
    // A fifth weight.
    let mut b = knock("red");
    b.throw("red", &[wy("red#5", Zone1, 900.0)]);
    let e = run("knock-off", &[], &b.build()).unwrap_err();
    assert!(matches!(e, RulesError::UnknownPiece { event: 0, .. }), "{e}");
}

#[test]
fn a_washer_leaving_its_cup_is_an_error() {
    let mut b = holey("red", (0, 0));
    b.throw("red", &[hole("red#1", H1)]);
    b.throw("red", &[on_board("red#2"), on_board("red#1")]);
    let e = run("holeyboard", &[], &b.build()).unwrap_err();
    assert!(matches!(e, RulesError::Inconsistent { event: 1, .. }), "{e}");
}

#[test]
fn calls_of_the_wrong_family_and_bad_holes_are_errors() {
    let mut b = holey("red", (0, 0));
    b.throw("red", &[wt("red#1", Zone1)]);
    assert!(matches!(run("holeyboard", &[], &b.build()).unwrap_err(), RulesError::BadCall { event: 0, .. }));
    let mut b = holey("red", (0, 0));
    b.throw("red", &[hole("red#1", 7)]);
    assert!(matches!(run("holeyboard", &[], &b.build()).unwrap_err(), RulesError::BadCall { event: 0, .. }));
    let mut b = holey("red", (0, 0));
    b.throw("red", &[hole("red#1", H1).value(5)]);
    let e = run("holeyboard", &[], &b.build()).unwrap_err();
    assert!(e.to_string().contains("worth 1"), "{e}");
}

#[test]
fn unknown_options_rules_and_values_are_errors() {
    let log = holey("red", (0, 0)).build();
    assert!(matches!(run("holeyboard", &["target=15"], &log).unwrap_err(), RulesError::UnknownOption { .. }));
    assert!(matches!(run("knock-off", &["target=0"], &log).unwrap_err(), RulesError::BadOptionValue { .. }));
    assert!(matches!(run("horse-collar", &["corner=20"], &log).unwrap_err(), RulesError::BadOptionValue { .. }));
    assert!(matches!(run("knock-off", &["target"], &log).unwrap_err(), RulesError::OptionSyntax { .. }));
    assert!(matches!(run("shuffle", &[], &log).unwrap_err(), RulesError::UnknownRules { .. }));
    // A holeyboard log scored as knock-off: named mismatch.
    assert!(matches!(run("knock-off", &[], &log).unwrap_err(), RulesError::RulesMismatch { .. }));
}

#[test]
fn events_after_the_game_is_won_are_an_error() {
    let mut b = holey("red", (20, 0));
    miss(&mut b, "red", "red#1");
    miss(&mut b, "red", "red#2");
    b.throw("red", &[hole("red#3", H1)]);
    for p in ["blue#1", "blue#2", "blue#3"] {
        miss(&mut b, "blue", p);
    }
    b.clear();
    b.throw("red", &[hole("red#1", H1)]);
    let e = run("holeyboard", &[], &b.build()).unwrap_err();
    assert!(matches!(e, RulesError::AfterGameOver { event: 6, .. }), "{e}");
}

#[test]
fn a_missing_header_field_is_an_error() {
    let log = LogBuilder::new("horse-collar").build();
    assert!(matches!(run("horse-collar", &[], &log).unwrap_err(), RulesError::Header { .. }));
    let log = LogBuilder::new("knock-off").build();
    assert!(matches!(run("knock-off", &[], &log).unwrap_err(), RulesError::Header { .. }));
}

// ---------------------------------------------------------------- fixtures

/// Every example log under fixtures/events/ scores without error, and its expected
/// winner (in the file name's sidecar `.expected`) matches.
#[test]
fn every_fixture_event_log_scores() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/events");
    let mut n = 0;
    for entry in std::fs::read_dir(&dir).expect("fixtures/events exists") {
        let path = entry.unwrap().path();
        if path.extension().and_then(|e| e.to_str()) != Some("json") {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        let log = EventLog::from_json(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let rules = log.rules.clone().expect("fixtures name their rules");
        let g = game(&rules, &[], &log);
        let expected = std::fs::read_to_string(path.with_extension("expected")).expect("a .expected file beside the log");
        let got = format!("{:?} {}", g.status, g.winner.as_deref().unwrap_or("-"));
        assert_eq!(got.trim(), expected.trim(), "{}", path.display());
        n += 1;
    }
    assert_eq!(n, 9, "one fixture per game");
}
