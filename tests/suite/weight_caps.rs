//! Weights as they are made (issue 14, item 2): a coloured cap smaller than the
//! chrome body, a number printed on it; the footprint is the body's. A zone-3
//! weight 1 mm over the trey line, rendered with a small cap (its face at the
//! body's top), must be called zone 3 with the cap given (its radius, and that
//! it is not set into the body), and never confidently otherwise without it:
//! then the cap's radius is learned from the frame's two weights.
use crate::common;
use boardcall::board::{Board, Layout};
use boardcall::calls::{shuffle_call, FoulLine};
use boardcall::camera::CameraPose;
use boardcall::detect::DetectorConfig;
use boardcall::frame::Frame;
use boardcall::geom::{BoardPoint, Footprint};
use boardcall::piece::{PieceId, PieceKind, Team};
use boardcall::render::scene::{PieceSpec, WeightLook};
use boardcall::render::Scene;
use boardcall::score::{score_frame, FrameReport, PoseInput};
use std::path::Path;
use std::sync::OnceLock;

/// A committed scene whose camera sees the target end (its trey line among them).
const FIXTURE: &str = "00-shuffleboard-22ft-plain";
/// A cap of 22 mm radius on a 29.4 mm body: a 7 mm chrome ring, as common weights have.
const CAP_RADIUS_MM: f64 = 22.0;
/// How far over the trey line (mm) the weight lies.
const OVER_MM: f64 = 1.0;
/// The measured margin's tolerance (mm): the committed set's footprint errors
/// reach 0.7 mm at the 95th percentile; a 1 mm margin must keep its sign.
const MARGIN_TOLERANCE_MM: f64 = 0.6;

struct Rendered {
    frame: Frame,
    camera: boardcall::camera::Camera,
    pose: CameraPose,
    board: Board,
    /// The weight's true footprint.
    truth: Footprint,
}

/// The scene with its pieces replaced by one red weight 1 mm over the trey line and a
/// blue one in zone 1, both with small caps numbered "7" (once for all tests).
fn rendered() -> &'static Rendered {
    static R: OnceLock<Rendered> = OnceLock::new();
    R.get_or_init(|| {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/scenes").join(FIXTURE);
        let mut ls = Scene::load(&dir.join("scene.json")).unwrap();
        let Layout::Shuffleboard(s) = &ls.board.layout else { panic!("a shuffleboard scene") };
        let r = ls.board.piece().radius_mm;
        let truth = Footprint::new(BoardPoint::new(-60.0, s.lines.trey_line_mm - r - OVER_MM), r);
        let weight = |team, n, at: BoardPoint| PieceSpec {
            id: PieceId::of_team(team, n),
            kind: PieceKind::Weight,
            x_mm: at.x_mm,
            y_mm: at.y_mm,
            z_mm: None,
            tilt_deg: 0.0,
            tilt_towards_deg: 0.0,
        };
        ls.scene.pieces = vec![weight(Team::Red, 1, truth.centre), weight(Team::Blue, 1, BoardPoint::new(80.0, s.lines.deuce_line_mm + 150.0))];
        ls.scene.appearance.weight_look = Some(WeightLook { cap_radius_mm: CAP_RADIUS_MM, cap_number: Some("7".into()), cap_print_colour: [0.85, 0.85, 0.82] });
        let img = boardcall::render::render(&ls, 2);
        let scratch = common::scratch("weight_caps", "render");
        let path = scratch.join("image.png");
        img.save(&path).unwrap();
        let camera = boardcall::fixture::Fixture::load(&dir).unwrap().camera;
        Rendered { frame: Frame::load(&path).unwrap(), camera, pose: ls.pose, board: ls.board.clone(), truth }
    })
}

fn score(cfg: DetectorConfig) -> FrameReport {
    let r = rendered();
    score_frame(&r.frame, &r.board, &r.camera, PoseInput::Trusted(r.pose), cfg, FoulLine::Long).unwrap().0
}

#[test]
fn the_scene_is_a_zone_3_weight_one_millimetre_over_the_line() {
    let r = rendered();
    let Layout::Shuffleboard(s) = &r.board.layout else { unreachable!() };
    let call = shuffle_call(&r.board, s, r.truth, FoulLine::Long);
    assert_eq!(call.call.name(), "zone3");
    assert!((call.margin_mm - OVER_MM).abs() < 1e-9, "{call:?}");
}

#[test]
fn a_small_capped_weight_over_the_line_is_called_zone_3_with_the_cap_given() {
    let r = rendered();
    let report = score(DetectorConfig { weight_cap_radius_mm: Some(CAP_RADIUS_MM), weight_cap_recess_mm: Some(0.0), ..Default::default() });
    let red: Vec<_> = report.pieces.iter().filter(|p| p.team == Some(Team::Red)).collect();
    assert_eq!(red.len(), 1, "{:?}", report.pieces);
    let p = red[0];
    assert_eq!(p.call, "zone3", "{p:?}");
    assert!((p.margin_mm - OVER_MM).abs() < MARGIN_TOLERANCE_MM, "{p:?}");
    // The footprint is the body's, centred where the body is.
    assert!((p.x_mm - r.truth.centre.x_mm).hypot(p.y_mm - r.truth.centre.y_mm) < MARGIN_TOLERANCE_MM, "{p:?}");
    assert!(p.doubt.is_none(), "{p:?}");
    assert_eq!(report.pieces.len(), 2, "{:?}", report.pieces);
}

#[test]
fn without_the_cap_given_a_small_cap_is_never_called_confidently() {
    let report = score(DetectorConfig::default());
    for p in report.pieces.iter().filter(|p| p.team == Some(Team::Red)) {
        assert!(p.call == "zone3" || p.review || report.needs_review, "{p:?}");
    }
    // The cap's outline is not the body's: the report says which cap it read
    // the frame with, or needs review.
    assert!(report.weight_cap.is_some() || report.needs_review, "{:?}", report.review_reasons);
}

/// A learned cap radius is within this of the cap's (mm): the weights' outlines
/// are 10-15 pixels across in this scene, a fitted radius good to a fraction of one.
const LEARNED_TOLERANCE_MM: f64 = 1.0;

#[test]
fn without_the_cap_given_its_radius_is_learned_from_the_weights() {
    let report = score(DetectorConfig::default());
    let cap = report.weight_cap.unwrap_or_else(|| panic!("no cap learned: {:?}", report.review_reasons));
    assert!(cap.learned, "{cap:?}");
    assert!((cap.radius_mm - CAP_RADIUS_MM).abs() < LEARNED_TOLERANCE_MM, "{cap:?}");
    // Its depth in the body is not known: taken as such, not as the top.
    assert_eq!(cap.recess_mm, None, "{cap:?}");
    assert_eq!(report.pieces.len(), 2, "{:?}", report.pieces);
    // The footprint's uncertainty covers its error.
    let r = rendered();
    for p in report.pieces.iter().filter(|p| p.team == Some(Team::Red)) {
        let error = (p.x_mm - r.truth.centre.x_mm).hypot(p.y_mm - r.truth.centre.y_mm);
        assert!(error <= boardcall::score::REVIEW_SIGMAS * p.sigma_mm, "error {error:.2} mm: {p:?}");
    }
}

#[test]
fn a_cap_is_learned_from_weights_only_the_learned_colours_find() {
    // Weights in magenta (hue 314) and teal (hue 180), which the standard colours do not read: the
    // first reading finds no weight to learn the cap from, the colours are learned from the frame, and the
    // weights they find show the cap. Before, the cap was tried on the first reading only: every weight was
    // read with the body's outline and doubted ("outline radius 22 mm, expected 29.4 mm").
    let r = rendered();
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/scenes").join(FIXTURE);
    let mut ls = Scene::load(&dir.join("scene.json")).unwrap();
    let Layout::Shuffleboard(s) = &ls.board.layout else { panic!("a shuffleboard scene") };
    let weight = |team, n, at: BoardPoint| PieceSpec { id: PieceId::of_team(team, n), kind: PieceKind::Weight, x_mm: at.x_mm, y_mm: at.y_mm, z_mm: None, tilt_deg: 0.0, tilt_towards_deg: 0.0 };
    let (trey, deuce) = (s.lines.trey_line_mm, s.lines.deuce_line_mm);
    ls.scene.pieces = vec![
        weight(Team::Red, 1, r.truth.centre),
        weight(Team::Red, 2, BoardPoint::new(120.0, deuce + 60.0)),
        weight(Team::Blue, 1, BoardPoint::new(80.0, deuce + 150.0)),
        weight(Team::Blue, 2, BoardPoint::new(-120.0, trey + 250.0)),
    ];
    // sRGB (0.75, 0.10, 0.60) and (0.10, 0.70, 0.70), as linear values.
    (ls.scene.appearance.red_colour, ls.scene.appearance.blue_colour) = ([0.522, 0.010, 0.319], [0.010, 0.448, 0.448]);
    ls.scene.appearance.weight_look = Some(WeightLook { cap_radius_mm: CAP_RADIUS_MM, cap_number: Some("7".into()), cap_print_colour: [0.85, 0.85, 0.82] });
    let img = boardcall::render::render(&ls, 2);
    let scratch = common::scratch("weight_caps", "learned-colours");
    let path = scratch.join("image.png");
    img.save(&path).unwrap();
    let frame = Frame::load(&path).unwrap();
    let report = score_frame(&frame, &r.board, &r.camera, PoseInput::Trusted(r.pose), DetectorConfig::default(), FoulLine::Long).unwrap().0;
    assert_eq!(report.teams_source, boardcall::detect::TeamsSource::Learned, "{:?}", report.review_reasons);
    let cap = report.weight_cap.unwrap_or_else(|| panic!("no cap learned: {:?}", report.review_reasons));
    assert!(cap.learned && (cap.radius_mm - CAP_RADIUS_MM).abs() < LEARNED_TOLERANCE_MM, "{cap:?}");
    assert_eq!(report.pieces.len(), 4, "{:?}", report.pieces);
    assert!(report.pieces.iter().all(|p| !p.doubt.as_deref().unwrap_or_default().contains("outline radius")), "{:?}", report.pieces);
}

#[test]
fn an_impossible_cap_is_a_configuration_error() {
    let r = rendered();
    for cap in [2.0, 45.0, f64::NAN] {
        let cfg = DetectorConfig { weight_cap_radius_mm: Some(cap), ..Default::default() };
        assert!(boardcall::detect::Detector::new(cfg, &r.board, &r.camera, &r.pose).is_err(), "{cap}");
    }
}
