//! Sjoelen discs found by their outline, not their colour (issue 14, item 3): the
//! circle search proposes freely (wood on wood shows a rim of only ~15-25 grey
//! levels), so what it proposes must be verified. An empty sjoelbak seen at half the
//! fixtures' resolution with one ray a pixel (the noisiest frames the test videos
//! make) holds no disc.
mod common;
use boardcall::calls::FoulLine;
use boardcall::detect::DetectorConfig;
use boardcall::frame::Frame;
use boardcall::render::video::scaled_camera;
use boardcall::render::Scene;
use boardcall::score::{score_frame, PoseInput};
use std::path::Path;

#[test]
fn an_empty_sjoelbak_in_a_noisy_low_resolution_frame_holds_no_disc() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/scenes/16-sjoelbak-plain");
    let mut ls = Scene::load(&dir.join("scene.json")).expect("scene");
    ls.scene.pieces.clear();
    ls.scene.supersample = 1;
    let camera = scaled_camera(&ls.scene.camera.intrinsics, 0.5);
    ls.scene.camera.intrinsics = camera;
    let img = boardcall::render::render(&ls, 2);
    let scratch = common::scratch("discs", "empty");
    let path = scratch.join("image.png");
    img.save(&path).expect("write the frame");
    let frame = Frame::load(&path).expect("frame");
    let (report, _) = score_frame(&frame, &ls.board, &camera, PoseInput::Trusted(ls.pose), DetectorConfig::default(), FoulLine::Long).expect("scored");
    assert!(report.pieces.is_empty(), "discs on an empty board: {:?}", report.pieces);
}

/// Own scene 16's board and camera with one disc flat at `lower` and another lying on it at `upper` (its centre a
/// disc and a half up), rendered and scored with the true pose: the report and a disc's thickness.
fn stack_scored(lower: boardcall::geom::BoardPoint, upper: boardcall::geom::BoardPoint, tag: &str) -> (boardcall::score::FrameReport, f64) {
    use boardcall::geom::BoardPoint;
    use boardcall::piece::{PieceId, PieceKind};
    use boardcall::render::scene::PieceSpec;
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/scenes/16-sjoelbak-plain");
    let mut ls = Scene::load(&dir.join("scene.json")).expect("scene");
    let thickness = ls.board.piece().thickness_mm;
    let disc = |n: u32, at: BoardPoint, z_mm: Option<f64>| PieceSpec {
        id: PieceId::disc(n),
        kind: PieceKind::Disc,
        x_mm: at.x_mm,
        y_mm: at.y_mm,
        z_mm,
        tilt_deg: 0.0,
        tilt_towards_deg: 0.0,
    };
    ls.scene.pieces = vec![disc(1, lower, None), disc(2, upper, Some(1.5 * thickness))];
    let img = boardcall::render::render(&ls, 2);
    let scratch = common::scratch("discs", tag);
    let path = scratch.join("image.png");
    img.save(&path).expect("write the frame");
    let frame = Frame::load(&path).expect("frame");
    let camera = ls.scene.camera.intrinsics;
    let (report, _) = score_frame(&frame, &ls.board, &camera, PoseInput::Trusted(ls.pose), DetectorConfig::default(), FoulLine::Long).expect("scored");
    (report, thickness)
}

/// A disc lying on another, offset by two thirds of a radius in compartment 4 (the external renders' stacks): no
/// one circle explains the outline there (its edges scatter about the best one), so the edges are split between
/// two circles of a disc's size. Both discs are found, the upper one a disc's thickness higher, and the frame needs
/// review (the lower disc is partly hidden).
#[test]
fn a_disc_lying_on_another_is_two_discs_and_a_review() {
    use boardcall::geom::BoardPoint;
    let (lower, upper) = (BoardPoint::new(150.0, 45.0), BoardPoint::new(160.0, 59.0));
    let (report, thickness) = stack_scored(lower, upper, "stack");
    assert_eq!(report.pieces.len(), 2, "{:?}", report.pieces);
    // The fits' error on our own renders is a few tenths of a millimetre; the lower disc's crescent fixes its
    // centre less well (a third of its rim hidden): 1 mm.
    let near = |at: BoardPoint, top_z: f64| report.pieces.iter().any(|p| BoardPoint::new(p.x_mm, p.y_mm).distance(at) < 1.0 && (p.top_z_mm - top_z).abs() < 0.5);
    assert!(near(lower, thickness), "the lower disc: {:?}", report.pieces);
    assert!(near(upper, 2.0 * thickness), "the upper disc: {:?}", report.pieces);
    assert!(report.needs_review, "a stack hides part of a disc: {:?}", report.review_reasons);
}

/// A disc lying on another offset by 11 mm (less than half a radius) in compartment 4: the outline at the surface's
/// height scatters (the upper rim and the lower one's crescent), and no two circles of a disc's size split it with
/// both passing (the lower shows too little). Before, neither disc was read (the frame flagged only by the colour
/// left over). Measured a disc's thickness higher the upper rim fits whole: the upper disc is read there, within
/// its sigma (which takes in a disc's thickness of height along the line of sight), and flagged as a stack.
#[test]
fn a_disc_on_another_too_hidden_to_measure_is_read_a_disc_up_and_flagged() {
    use boardcall::geom::BoardPoint;
    let (lower, upper) = (BoardPoint::new(-50.0, 45.0), BoardPoint::new(-56.6, 53.8));
    let (report, thickness) = stack_scored(lower, upper, "stack-hidden");
    let up = report.pieces.iter().find(|p| (p.top_z_mm - 2.0 * thickness).abs() < 0.5).unwrap_or_else(|| panic!("the upper disc: {:?}", report.pieces));
    let off = BoardPoint::new(up.x_mm, up.y_mm).distance(upper);
    // Within 3 sigma: the sigma is the honest one (a disc's thickness of height along the line of sight).
    assert!(off <= 3.0 * up.sigma_mm, "{off:.2} mm off, sigma {:.2} mm: {up:?}", up.sigma_mm);
    assert!(up.review, "a stack hides the disc under it: {up:?}");
    assert!(report.review_reasons.iter().any(|r| r.contains("a stack")), "{:?}", report.review_reasons);
}
