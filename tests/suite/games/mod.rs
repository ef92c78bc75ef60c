//! The game scripts the match tests render: a HoleyBoard game to its end, a Knock
//! Off game of three rounds, a YOCU round with a knock-in (and a planted ambiguity),
//! a sjoelen turn, a Crazy Eight frame with the camera knocked mid-turn. Every piece rests well clear of its call's boundaries (the tests
//! check the reading of whole games, not close calls).
#![allow(dead_code)]

use boardcall::piece::{PieceId, PieceKind};
use boardcall::render::scene::{LoadedScene, PieceSpec};
use boardcall::render::video::{nudged, GameScript, Knock, Step};
use boardcall::render::Scene;
use boardcall::rules::EventLog;
use std::path::PathBuf;

/// The videos' cameras at half the fixtures' 1280x960: 640x480.
pub const SCALE: f64 = 0.5;
/// The sjoelen turn's camera at the fixtures' full 1280x960 (see [`sjoelen`]).
pub const SJOELEN_SCALE: f64 = 1.0;

/// A washer's centre lying flat on a cup's floor: the cup's depth (76 mm) less half a
/// washer's thickness (3.2 mm).
const IN_CUP_Z_MM: f64 = -74.4;

pub fn scene(name: &str) -> LoadedScene {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/scenes").join(name).join("scene.json");
    let mut ls = Scene::load(&path).expect("fixture scene");
    ls.scene.pieces.clear();
    // One ray a pixel: a quarter of the fixtures' cost; the pieces are still measured
    // well at 640x480 (the tests check calls far from their boundaries).
    ls.scene.supersample = 1;
    ls
}

fn piece(id: &str, kind: PieceKind, x_mm: f64, y_mm: f64) -> PieceSpec {
    let id: PieceId = id.parse().expect("piece id");
    PieceSpec { id, kind, x_mm, y_mm, z_mm: None, tilt_deg: 0.0, tilt_towards_deg: 0.0 }
}

fn washer(id: &str, x_mm: f64, y_mm: f64) -> PieceSpec {
    piece(id, PieceKind::Washer, x_mm, y_mm)
}

/// A washer flat on the floor of the cup whose centre is at `(x_mm, y_mm)`, a little off centre.
fn in_cup(id: &str, x_mm: f64, y_mm: f64) -> PieceSpec {
    PieceSpec { z_mm: Some(IN_CUP_Z_MM), ..washer(id, x_mm + 6.0, y_mm - 5.0) }
}

fn weight(id: &str, x_mm: f64, y_mm: f64) -> PieceSpec {
    piece(id, PieceKind::Weight, x_mm, y_mm)
}

fn disc(n: u32, x_mm: f64, y_mm: f64) -> PieceSpec {
    piece(&format!("disc#{n}"), PieceKind::Disc, x_mm, y_mm)
}

fn throw(thrower: &str, piece: PieceSpec) -> Step {
    Step::Throw { thrower: thrower.into(), piece, knocks: Vec::new() }
}

fn knock(thrower: &str, piece: PieceSpec, knocks: Vec<Knock>) -> Step {
    Step::Throw { thrower: thrower.into(), piece, knocks }
}

fn header(rules: &str, first: Option<&str>, start: &[(&str, i64)]) -> EventLog {
    let mut h = EventLog::new(rules);
    h.first = first.map(str::to_string);
    h.start_scores = start.iter().map(|(k, v)| (k.to_string(), *v)).collect();
    h
}

/// HoleyBoard (holes 5/3/1 at y = 203.2, 508, 812.8 mm), resumed at red 13, blue 12;
/// two rounds (red's 21 with its last washer), a hand passing over the board, knocks that push and knock off.
pub fn holeyboard() -> GameScript {
    let (h5, h3) = (203.2, 508.0);
    let steps = vec![
        throw("red", in_cup("red#1", 0.0, h5)),
        throw("red", washer("red#2", -120.0, 400.0)),
        Step::Hand,
        throw("red", washer("red#3", 110.0, 680.0)),
        throw("blue", in_cup("blue#1", 0.0, h3)),
        knock("blue", washer("blue#2", -105.0, 440.0), vec![Knock::To(washer("red#2", -130.0, 330.0))]),
        knock("blue", washer("blue#3", 95.0, 720.0), vec![Knock::Off("red#3".parse().unwrap())]),
        Step::Clear,
        throw("blue", washer("blue#1", -120.0, 620.0)),
        throw("blue", washer("blue#2", 130.0, 900.0)),
        throw("blue", washer("blue#3", -110.0, 250.0)),
        throw("red", washer("red#1", -20.0, 990.0)),
        throw("red", washer("red#2", 120.0, 300.0)),
        throw("red", in_cup("red#3", 0.0, h3)),
        Step::Clear,
    ];
    GameScript { scene: scene("33-holeyboard-plain"), scale: SCALE, header: header("holeyboard", Some("red"), &[("red", 13), ("blue", 12)]), steps }
}

/// Knock Off on the 22-ft board's target end (trey line 152.4, deuce line 304.8 mm), from
/// red 9, blue 8, three rounds of eight shots with knock-offs.
pub fn knock_off() -> GameScript {
    let round = |r: u32| -> Vec<Step> {
        // Each round the first team alternates; the engine says who, the script follows it.
        let (a, b) = if r == 2 { ("blue", "red") } else { ("red", "blue") };
        let dx = 10.0 * r as f64;
        vec![
            throw(a, weight(&format!("{a}#1"), -120.0 + dx, 450.0)),
            throw(b, weight(&format!("{b}#1"), 100.0 - dx, 220.0)),
            knock(a, weight(&format!("{a}#2"), 90.0 - dx, 240.0), vec![Knock::Off(format!("{b}#1").parse().unwrap())]),
            throw(b, weight(&format!("{b}#2"), -60.0 + dx, 600.0)),
            throw(a, weight(&format!("{a}#3"), 20.0, 80.0 + dx)),
            knock(b, weight(&format!("{b}#3"), 30.0, 95.0 + dx), vec![Knock::Off(format!("{a}#3").parse().unwrap())]),
            throw(a, weight(&format!("{a}#4"), -150.0, 380.0)),
            throw(b, weight(&format!("{b}#4"), 160.0 - dx, 500.0)),
            Step::Clear,
        ]
    };
    let steps = (1..=3).flat_map(round).collect();
    GameScript { scene: scene("03-shuffleboard-22ft-plain"), scale: SCALE, header: header("knock-off", Some("red"), &[("red", 9), ("blue", 11)]), steps }
}

/// A YOCU-4 round (holes 5/3/2/1 at y = 254, 584.2, 914.4, 1244.6 mm): blue's last washer
/// knocks red's into the 3 (no two washers share a cup); red's third and fourth arrive together when
/// `planted` (numbered, as `match` numbers pieces arriving together, from the target end).
pub fn yocu(planted: bool) -> GameScript {
    let (h5, h3, h2, h1) = (254.0, 584.2, 914.4, 1244.6);
    let mut steps = vec![throw("red", in_cup("red#1", 0.0, h2)), throw("red", washer("red#2", 20.0, 650.0))];
    if planted {
        steps.push(Step::Together { throws: vec![("red".into(), in_cup("red#3", 0.0, h5)), ("red".into(), washer("red#4", -150.0, 1100.0))] });
    } else {
        steps.push(throw("red", in_cup("red#3", 0.0, h5)));
        steps.push(throw("red", washer("red#4", -150.0, 1100.0)));
    }
    steps.extend([
        throw("blue", washer("blue#1", 160.0, 800.0)),
        throw("blue", in_cup("blue#2", 0.0, h1)),
        throw("blue", washer("blue#3", -170.0, 420.0)),
        knock("blue", washer("blue#4", 40.0, 700.0), vec![Knock::To(in_cup("red#2", 0.0, h3))]),
        Step::Clear,
    ]);
    GameScript { scene: scene("40-yocu-4-plain"), scale: SCALE, header: header("yocu-4", Some("red"), &[]), steps }
}

/// One sjoelen turn (compartments 1/4/3/2 at x = -150, -50, 50, 150 mm) of three sub-turns:
/// discs into compartments, one left loose each time and collected. Discs are numbered in
/// the order they are first listed in a compartment (as `match` numbers them); the loose
/// ones, never listed, take numbers no listed disc has.
pub fn sjoelen() -> GameScript {
    sjoelen_at(SJOELEN_SCALE)
}

/// [`sjoelen`] with its camera at `scale` of the fixtures' 1280x960.
pub fn sjoelen_at(scale: f64) -> GameScript {
    let (y_in, y_loose) = (45.0, 300.0);
    let a = "anna";
    let steps = vec![
        throw(a, disc(1, -150.0, y_in)),
        throw(a, disc(2, 50.0, y_in)),
        throw(a, disc(29, -100.0, y_loose + 20.0)),
        Step::SubTurnEnd { thrower: a.into(), last: false },
        throw(a, disc(3, -50.0, y_in)),
        throw(a, disc(30, -80.0, y_loose)),
        Step::SubTurnEnd { thrower: a.into(), last: false },
        throw(a, disc(4, 150.0, y_in)),
        Step::SubTurnEnd { thrower: a.into(), last: true },
    ];
    let mut h = header("sjoelen", None, &[]);
    h.players = vec![a.into()];
    // At the fixtures' full size: at half, no disc's outline tells a pile from one disc (every frame's counts in
    // doubt, every sub-turn held for review). Scene 16's hard light leaves a patch of disc colour by the gate, 7
    // discs' worth, in every frame: the empty board shows it before the first throw, and the watcher takes it as
    // the board's own wherever the image round it is as it was then (`watch::standing`); disc 2 rests beside it.
    GameScript { scene: scene("16-sjoelbak-plain"), scale, header: h, steps }
}

/// A Crazy Eight frame on the 22-ft board's target end (trey line 152.4, deuce line
/// 304.8 mm; the long foul line at 1828.8 mm is behind every piece): ann's four red
/// weights all stay and her four blue ones knock each off (blue scores 1 + 2 + 1 + 1);
/// the camera is knocked mid-turn; bob's opening leaves only three weights on the board
/// (the fourth went into the gutter), which ends his turn with no score. Weights thrown
/// together are numbered from the target end, as `match` numbers them.
pub fn crazy_eight() -> GameScript {
    let sc = scene("03-shuffleboard-22ft-plain");
    let off = |id: &str| Knock::Off(id.parse().unwrap());
    let (a, b) = ("ann", "bob");
    // About 0.6 deg of tilt and a few millimetres: tens of millimetres on the board if not followed.
    let knocked = nudged(&sc.pose, [0.008, -0.006, 0.003], [4.0, -3.0, 0.0]);
    let steps = vec![
        Step::Volley {
            thrower: a.into(),
            pieces: vec![weight("red#1", 60.0, 250.0), weight("red#2", -120.0, 400.0), weight("red#3", 140.0, 480.0), weight("red#4", -30.0, 560.0)],
        },
        knock(a, weight("blue#1", -110.0, 375.0), vec![off("red#2")]),
        knock(a, weight("blue#2", 75.0, 225.0), vec![off("red#1")]),
        Step::Nudge { pose: knocked },
        knock(a, weight("blue#3", -40.0, 530.0), vec![off("red#4")]),
        knock(a, weight("blue#4", 125.0, 465.0), vec![off("red#3")]),
        Step::Clear,
        Step::Volley { thrower: b.into(), pieces: vec![weight("red#1", 0.0, 200.0), weight("red#2", -50.0, 350.0), weight("red#3", 100.0, 450.0)] },
        Step::Clear,
    ];
    let mut h = header("crazy-eight", None, &[]);
    h.players = vec![a.into(), b.into()];
    GameScript { scene: sc, scale: SCALE, header: h, steps }
}
