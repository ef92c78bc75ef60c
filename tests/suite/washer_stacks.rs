//! Two washers in one cup (issue 14, item 4). Of one team, the colour cannot tell
//! them apart, so the lower one is placed by what of its ring shows past the
//! upper one, and where too little shows to place it the frame needs review,
//! never a silent miss; a lower one whose paint shows paler than its team's colour
//! is placed by that paler paint, in doubt. The committed two-in-a-hole scene (a red
//! washer under a blue one in hole 1) re-rendered with both washers red, or with a
//! pale red, scored with the true pose.
use crate::common;
use boardcall::board::Board;
use boardcall::calls::FoulLine;
use boardcall::detect::DetectorConfig;
use boardcall::fixture::Fixture;
use boardcall::frame::Frame;
use boardcall::geom::BoardPoint;
use boardcall::piece::Team;
use boardcall::render::{LoadedScene, Scene};
use boardcall::score::{score_frame, FrameReport, PoseInput};
use std::path::Path;

const FIXTURE: &str = "36-holeyboard-two_in_hole";
/// A washer placed by its outline is within a millimetre of the truth on the
/// committed set (the lower of a stack, fitted on the arc that shows, the least
/// sure of them); further than this it is another piece.
const SAME_PIECE_MM: f64 = 2.0;

/// The committed scene, `edit`ed, rendered and scored with the true pose; with where its pieces lie, by id.
fn scored(tag: &str, edit: impl Fn(&mut LoadedScene)) -> (FrameReport, impl Fn(&str) -> BoardPoint) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/scenes").join(FIXTURE);
    let mut ls = Scene::load(&dir.join("scene.json")).unwrap();
    edit(&mut ls);
    let placed: Vec<(String, BoardPoint)> = ls.scene.pieces.iter().map(|p| (p.id.to_string(), BoardPoint::new(p.x_mm, p.y_mm))).collect();
    let at = move |id: &str| placed.iter().find(|p| p.0 == id).map(|p| p.1).unwrap();
    let scratch = common::scratch("washer_stacks", tag);
    let path = scratch.join("image.png");
    boardcall::render::render(&ls, 2).save(&path).unwrap();
    let f = Fixture::load(&dir).unwrap();
    let board = Board::load(&f.truth.board).unwrap();
    let pose = f.truth.camera.pose();
    let frame = Frame::load(&path).unwrap();
    let report = score_frame(&frame, &board, &f.camera, PoseInput::Trusted(pose), DetectorConfig::default(), FoulLine::Long).unwrap().0;
    (report, at)
}

/// Hole 1's upper washer (blue#1) made red (red#2) and the red washer on the board (red#2) made blue (blue#1),
/// three a side as HoleyBoard is played: both washers in hole 1 red, red#1 under red#2.
fn both_red_in_hole_1(ls: &mut LoadedScene) {
    for p in &mut ls.scene.pieces {
        p.id = match p.id.to_string().as_str() {
            "blue#1" => "red#2".parse().unwrap(),
            "red#2" => "blue#1".parse().unwrap(),
            _ => p.id,
        };
    }
}

/// Red's washers called in, and the holes' worth of them.
fn red_in(report: &FrameReport) -> (usize, u32) {
    let ins: Vec<_> = report.pieces.iter().filter(|p| p.team == Some(Team::Red) && p.call == "in").collect();
    (ins.len(), ins.iter().filter_map(|p| p.value).sum())
}

#[test]
fn the_lower_of_two_washers_of_one_team_in_a_cup_is_placed_and_counted() {
    let (report, at) = scored("placed", both_red_in_hole_1);
    for c in [at("red#1"), at("red#2")] {
        let found = report.pieces.iter().find(|p| p.team == Some(Team::Red) && (p.x_mm - c.x_mm).hypot(p.y_mm - c.y_mm) < SAME_PIECE_MM);
        let p = found.unwrap_or_else(|| panic!("the washer at ({:.1}, {:.1}) not read: {:?}", c.x_mm, c.y_mm, report.pieces));
        assert_eq!(p.call, "in", "{p:?}");
    }
    // 5 (hole 0) + 3 + 3 (both in hole 1).
    assert_eq!(red_in(&report), (3, 11), "{:?}", report.pieces);
    assert!(!report.needs_review, "{:?}", report.review_reasons);
}

#[test]
fn a_lower_washer_mostly_hidden_is_placed_or_makes_the_frame_need_review() {
    // The upper washer moved to lie flat 8 mm off the lower one: a crescent narrower than the
    // half ring a washer is placed by (10.3 mm) past the upper's outline as measured, which
    // a fit pulled towards the lower one's colour may still leave. Nearer than about 7 mm
    // (this camera, 1.3 m up) the lower washer is not seen at all: a limit, not tested.
    let (report, _) = scored("hidden", |ls| {
        both_red_in_hole_1(ls);
        let lower = ls.scene.pieces.iter().find(|p| p.id.to_string() == "red#1").map(|p| (p.x_mm, p.y_mm)).unwrap();
        let upper = ls.scene.pieces.iter_mut().find(|p| p.id.to_string() == "red#2").unwrap();
        (upper.x_mm, upper.y_mm, upper.tilt_deg) = (lower.0 + 8.0, lower.1, 0.0);
    });
    let (n, _) = red_in(&report);
    assert!(n == 3 || report.needs_review, "a lower washer missed without review: {:?}", report.pieces);
    assert!(n <= 3, "{:?}", report.pieces);
}

/// A red washer under a blue one in hole 1 (the committed scene as it is), its red a pale one: sRGB (0.90, 0.55,
/// 0.52), in the cup's light below the red team's saturation floor (0.35), as the lower of two red washers in a
/// HoleyBoard cup shows on an external render (hb_00: saturation 0.25-0.32). The blue one is found by its
/// outline; the red paint past it is placed by the ring template in the paler paint of red's hue, in doubt. Before,
/// the red washer was missed without a word and the round went wrong with no review (blue 3, red 5; truth red 5).
#[test]
fn a_pale_washer_under_another_in_a_cup_is_placed_and_flagged() {
    /// The scene's red as linear light: sRGB (0.90, 0.55, 0.52).
    const PALE_RED: [f64; 3] = [0.7874, 0.2633, 0.2330];
    let (report, at) = scored("pale_lower", |ls| ls.scene.appearance.red_colour = PALE_RED);
    // Placed by the template: within its lattice and ring spacing of the truth (stated sigma 2 mm).
    const PLACED_WITHIN_MM: f64 = 6.0;
    let lower = at("red#1");
    let found = report.pieces.iter().find(|p| p.team == Some(Team::Red) && (p.x_mm - lower.x_mm).hypot(p.y_mm - lower.y_mm) < PLACED_WITHIN_MM);
    let p = found.unwrap_or_else(|| panic!("the red washer under the blue one not read: {:?} {:?}", report.pieces, report.review_reasons));
    assert_eq!(p.call, "in", "{p:?}");
    assert!(p.review && p.doubt.as_deref().is_some_and(|d| d.contains("paler")), "{p:?}");
    // 5 (hole 0) + 3 (hole 1) for red, 3 (hole 1) for blue: the round is red's by 5, as the truth has it.
    assert_eq!(red_in(&report), (2, 8), "{:?}", report.pieces);
    let blue_in: Vec<Option<u32>> = report.pieces.iter().filter(|p| p.team == Some(Team::Blue) && p.call == "in").map(|p| p.value).collect();
    assert_eq!(blue_in, [Some(3)], "{:?}", report.pieces);
}

/// A committed scene of `fixtures/varied` scored with its true pose: the fixture, its board and the report.
fn varied_with_true_pose(name: &str) -> (Fixture, Board, FrameReport) {
    common::scored_with_true_pose(&Path::new("fixtures/varied").join(name))
}

/// The washer `id` of the fixture's truth, read where it lies on a cup's floor (within a few mm: the template's
/// lattice and ring spacing place a partly hidden washer so, its stated sigma 2 mm) with its true call.
fn read_on_the_cups_floor<'r>(f: &Fixture, report: &'r FrameReport, id: &str) -> &'r boardcall::score::PieceReport {
    const PLACED_WITHIN_MM: f64 = 5.0;
    let truth = f.truth.pieces.iter().find(|t| t.id.to_string() == id).unwrap();
    let c = truth.footprint.centre;
    let read = report.pieces.iter().find(|p| p.team == truth.team && (p.x_mm - c.x_mm).hypot(p.y_mm - c.y_mm) < PLACED_WITHIN_MM);
    let p = read.unwrap_or_else(|| panic!("{id} not read: {:?} {:?}", report.pieces, report.review_reasons));
    assert_eq!(p.call, truth.call.name());
    p
}

/// The learned hole model proposes, the image decides: varied scene 34 (a yocu-9 board through a fisheye lens,
/// no washer in any cup). The model trained on the fixture generator's recipe alone claimed a washer lying flat in
/// 12 of its empty cups; where the cup's floor shows in view and holds none of the claimed team's paint, the claim
/// is dropped; where too little of the floor shows to tell (the far rows, seen at a slant), it stays for review.
/// (The model retrained on domain-randomised scenes claims none there: the check itself is tested on its own below,
/// `a_cups_floor_in_view_tells_an_empty_cup_from_one_holding_a_washer`.)
#[test]
fn flat_washers_only_the_hole_model_sees_in_cups_the_image_shows_empty_are_dropped() {
    let (f, board, report) = varied_with_true_pose("34-yocu-9-plain-whole-fisheye");
    let holes = board.washer().unwrap().holes.clone();
    let in_cup = |p: BoardPoint| holes.iter().any(|h| h.centre().distance(p) < h.radius());
    assert!(f.truth.pieces.iter().all(|t| !in_cup(t.footprint.centre)), "the scene's cups are empty");
    let flat_claims = report.unexplained.iter().filter(|u| u.reason.contains("hole model only (a flat washer")).count();
    // 12 claimed before; the floors of the nearer eight show empty.
    assert!(flat_claims <= 4, "{flat_claims} flat washers claimed by the model alone: {:?}", report.review_reasons);
    // Nothing is scored in an empty cup.
    assert!(report.pieces.iter().all(|p| !in_cup(BoardPoint::new(p.x_mm, p.y_mm))), "{:?}", report.pieces);
}

/// What drops a flat washer only the hole model claims, whatever model makes the claim: the cup's floor in view
/// showing none of the team's paint (`Detector::cup_floor_shows_none`). Varied 34's empty cups through a fisheye:
/// the floors of the five in the frame's middle show, and show neither team's paint; the four at its slanted edge
/// show too little to tell, and stay unknown (a claim there stays for review); varied 26's hole 0, whose floor holds
/// blue#1 (half in the cup's shadow), shows blue.
#[test]
fn a_cups_floor_in_view_tells_an_empty_cup_from_one_holding_a_washer() {
    use boardcall::detect::Detector;
    use boardcall::measure::ColourView;
    use opencv::prelude::MatTraitConstManual;
    let detector_and_view = |name: &str| {
        let (f, frame, board) = common::scene_at(&Path::new("fixtures/varied").join(name));
        let pose = f.truth.camera.pose();
        let det = Detector::new(DetectorConfig::default(), &board, &f.camera, &pose).unwrap();
        let bytes = frame.image().data_bytes().unwrap().to_vec();
        (det, board, frame.width() as usize, frame.height() as usize, bytes)
    };
    let (det, board, w, h, bytes) = detector_and_view("34-yocu-9-plain-whole-fisheye");
    let view = ColourView::new(w, h, &bytes).unwrap();
    let holes = board.washer().unwrap().holes.len();
    let empty: Vec<(usize, Team)> = (0..holes).flat_map(|hole| [(hole, Team::Red), (hole, Team::Blue)]).filter(|&(hole, t)| det.cup_floor_shows_none(&view, hole, t, &[])).collect();
    // Holes 3-7 (numbered from 1) show their floors; 1, 2, 8 and 9 lie at the frame's slanted edge, where the frame
    // names them for review instead ("sees its cup's floor so obliquely ... a whole washer may lie there").
    let seen: Vec<usize> = (2..=6).collect();
    assert!(seen.iter().all(|h| empty.contains(&(*h, Team::Red)) && empty.contains(&(*h, Team::Blue))), "{empty:?}");
    assert!(empty.iter().all(|(h, _)| seen.contains(h)), "a cup seen at a slant taken for empty: {empty:?}");
    let (det, _, w, h, bytes) = detector_and_view("26-yocu-4-plain-whole-brown");
    let view = ColourView::new(w, h, &bytes).unwrap();
    assert!(!det.cup_floor_shows_none(&view, 0, Team::Blue, &[]), "blue#1 lies on hole 0's floor");
}

/// The hole model is trained on the varied set's domain-randomised recipe too (models/README.md): through a
/// fisheye, a yocu-9's empty cups (varied 34) and those of one whose washers lean in two of its holes (varied 37)
/// are no longer taken for cups holding washers. The model trained on the fixture generator's recipe alone claimed
/// 12 washers there that only it saw (each put the frame in review); this one, none. The scenes' truth and seed were
/// never rendered into its training sets.
#[test]
fn the_hole_model_claims_no_washer_in_empty_cups_through_a_fisheye() {
    for name in ["34-yocu-9-plain-whole-fisheye", "37-yocu-9-leaner-whole-fisheye"] {
        let (_, _, report) = varied_with_true_pose(name);
        let claims: Vec<&String> = report.unexplained.iter().map(|u| &u.reason).filter(|r| r.contains("hole model only")).collect();
        assert!(claims.is_empty(), "{name}: {claims:?}");
    }
}

/// Varied scene 26: a blue washer flat on the floor of a yocu-4 cup, half of it in the cup's own deep shadow (its
/// paint there too dark to tell a colour, value under the team's floor). Such floor samples are neither the washer
/// nor not: the lit half places it. Before, the dark half counted against it, the washer was left to the hole
/// model alone ("not scored") and the round went to red.
#[test]
fn a_washer_half_in_its_cups_shadow_is_placed_on_the_cups_floor() {
    let (f, _, report) = varied_with_true_pose("26-yocu-4-plain-whole-brown");
    read_on_the_cups_floor(&f, &report, "blue#1");
}

/// Varied scene 24: a red washer flat in the 5-hole's cup under a bright lamp, its paint paler than the red team's
/// colour allows (saturation 0.29-0.41 on a 0.35 floor). The team's mask sees it only in fragments, which no
/// proposal keeps, and it was missed without a word (the round scored without it). Paint of the team's hue on the
/// floor of a cup where no washer was found is placed by the ring template in the paler paint, flagged as pale.
#[test]
fn a_pale_washer_in_a_cup_is_placed_and_flagged() {
    let (f, board, report) = varied_with_true_pose("24-holeyboard-two_in_hole-whole-brown");
    let p = read_on_the_cups_floor(&f, &report, "red#3");
    assert!(p.review && p.doubt.as_deref().is_some_and(|d| d.contains("paler")), "{p:?}");
    // Every other cup's paint is explained by the washers found over it: no washer made up elsewhere.
    let holes = board.washer().unwrap().holes.clone();
    let in_cups = |ps: &[_]| -> usize { ps.iter().filter(|&&(x, y): &&(f64, f64)| holes.iter().any(|h| h.centre().distance(BoardPoint::new(x, y)) < h.radius())).count() };
    let found: Vec<(f64, f64)> = report.pieces.iter().map(|p| (p.x_mm, p.y_mm)).collect();
    let truth_in: Vec<(f64, f64)> = f.truth.pieces.iter().map(|t| (t.footprint.centre.x_mm, t.footprint.centre.y_mm)).collect();
    assert_eq!(in_cups(&found), in_cups(&truth_in), "{:?}", report.pieces);
}
