//! Sjoelen discs found by their outline, not their colour (issue 14, item 3): the
//! circle search proposes freely (wood on wood shows a rim of only ~15-25 grey
//! levels), so what it proposes must be verified. An empty sjoelbak seen at half the
//! fixtures' resolution with one ray a pixel (the noisiest frames the test videos
//! make) holds no disc.
use crate::common;
use boardcall::calls::FoulLine;
use boardcall::detect::DetectorConfig;
use boardcall::frame::Frame;
use boardcall::render::video::scaled_camera;
use boardcall::render::Scene;
use boardcall::score::{score_frame, PoseInput};
use std::path::Path;

/// `ls` rendered, written to a scratch file named for `tag`, read back as a frame and scored on `board` with the
/// scene's camera and true pose.
fn rendered_and_scored(ls: &boardcall::render::scene::LoadedScene, board: &boardcall::board::Board, tag: &str) -> boardcall::score::FrameReport {
    let img = boardcall::render::render(ls, 2);
    let scratch = common::scratch("discs", tag);
    let path = scratch.join("image.png");
    img.save(&path).expect("write the frame");
    let frame = Frame::load(&path).expect("frame");
    score_frame(&frame, board, &ls.scene.camera.intrinsics, PoseInput::Trusted(ls.pose), DetectorConfig::default(), FoulLine::Long).expect("scored").0
}

#[test]
fn an_empty_sjoelbak_in_a_noisy_low_resolution_frame_holds_no_disc() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/scenes/16-sjoelbak-plain");
    let mut ls = Scene::load(&dir.join("scene.json")).expect("scene");
    ls.scene.pieces.clear();
    ls.scene.supersample = 1;
    let camera = scaled_camera(&ls.scene.camera.intrinsics, 0.5);
    ls.scene.camera.intrinsics = camera;
    let report = rendered_and_scored(&ls, &ls.board, "empty");
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
    (rendered_and_scored(&ls, &ls.board, tag), thickness)
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

/// A disc lying on another offset by 14-18 mm in compartments 2 and 3, a few degrees from under the camera: the upper disc's
/// rim fits as one disc lying flat (3.7 mm off along the line of sight, sigma 0.3 mm), the lower one shows a
/// crescent beside it, but the upper's shadow across the lower's face scatters the lower's own outline fit. Before,
/// one disc was read, flat and unflagged: a count one short, confidently. Now the crescent, read coming in from the
/// board past that shadow, puts the disc read in doubt (review), unless both discs are read.
#[test]
fn a_disc_on_another_read_as_one_is_in_doubt() {
    use boardcall::geom::BoardPoint;
    // Compartment 2, and compartment 3 with the upper disc 18 mm towards the gate.
    let stacks = [(BoardPoint::new(-33.7, 42.0), BoardPoint::new(-46.8, 35.9)), (BoardPoint::new(43.9, 44.6), BoardPoint::new(55.0, 58.8))];
    for (n, (lower, upper)) in stacks.into_iter().enumerate() {
        let (report, _) = stack_scored(lower, upper, &format!("stack-shadowed-{n}"));
        // A disc read within a radius of either disc is a reading of the stack.
        let radius = 26.0;
        let read: Vec<_> = report.pieces.iter().filter(|p| [lower, upper].iter().any(|d| BoardPoint::new(p.x_mm, p.y_mm).distance(*d) < radius)).collect();
        assert!(!read.is_empty(), "the stack: {:?}", report.pieces);
        assert!(read.len() == 2 || read.iter().all(|p| p.review), "one disc of two read, not in doubt: {read:?}");
    }
}

/// Twelve stacks of two discs across the four compartments, the upper one offset 10-18 mm in every direction (as the
/// external renders pile them), each rendered alone and scored with the true pose: never a confident miscount. Each
/// stack is read as two discs, or what is read of it is in doubt (how many are read both where they lie is
/// printed). (Before: four of them read as one disc lying flat, unflagged, the upper disc lost
/// as the lower's outline seen at another height; now the upper's rim, fitted whole a disc's thickness higher from
/// starts round the scattered outline, is read where it shows apart from the lower's.)
#[test]
fn no_stack_of_two_discs_is_read_as_one_confidently() {
    use boardcall::geom::BoardPoint;
    let p = BoardPoint::new;
    let stacks = [
        (p(-155.6, 49.8), p(-160.1, 58.7)),
        (p(-149.4, 45.5), p(-136.9, 51.6)),
        (p(-149.9, 40.6), p(-133.1, 47.0)),
        (p(-56.9, 41.4), p(-66.0, 45.4)),
        (p(-44.8, 41.9), p(-57.2, 48.3)),
        (p(-48.0, 54.2), p(-44.9, 72.0)),
        (p(48.3, 54.6), p(39.5, 50.0)),
        (p(55.7, 44.3), p(69.1, 48.4)),
        (p(43.9, 44.6), p(55.0, 58.8)),
        (p(144.9, 48.7), p(148.9, 39.6)),
        (p(148.0, 48.2), p(139.0, 37.5)),
        (p(143.0, 43.1), p(159.6, 50.0)),
    ];
    let mut whole = 0;
    for (n, (lower, upper)) in stacks.into_iter().enumerate() {
        let (report, thickness) = stack_scored(lower, upper, &format!("stack-grid-{n}"));
        // A disc read within a radius of either disc is a reading of the stack.
        let radius = 26.0;
        let read: Vec<_> = report.pieces.iter().filter(|q| [lower, upper].iter().any(|d| BoardPoint::new(q.x_mm, q.y_mm).distance(*d) < radius)).collect();
        assert!(read.len() == 2 || (!read.is_empty() && read.iter().all(|q| q.review)), "stack {n}: lower {lower:?}, upper {upper:?}, read {read:?}");
        // Both where they lie: each within three of its sigmas, the upper one a disc's thickness higher.
        let at = |d: BoardPoint, top_z: f64| read.iter().any(|q| BoardPoint::new(q.x_mm, q.y_mm).distance(d) <= 3.0 * q.sigma_mm && (q.top_z_mm - top_z).abs() < 0.5);
        whole += usize::from(read.len() == 2 && at(lower, thickness) && at(upper, 2.0 * thickness));
    }
    eprintln!("{whole} of {} stacks read as both their discs where they lie", stacks.len());
}

/// Wood grain is no disc: varied scene 13 (a sjoelbak of pale wood whose grain runs along it, under a lamp's glare,
/// through a fisheye lens) scored with its true pose. Outline fits drew circles from the grain (nine "discs", one
/// between two real ones in compartment 4, scored); with no colour to fill, a disc's outline must face its centre,
/// and a straight texture's edges do so only where the grain crosses the circle square on. Every disc read in a
/// compartment is a real one, where it lies.
#[test]
fn wood_grain_under_glare_is_no_disc() {
    use boardcall::piece::PieceKind;
    // Own renders place a disc to a fraction of a millimetre; 3 mm tells a disc read where one lies from another.
    const PLACED_WITHIN_MM: f64 = 3.0;
    let (f, report) = fixture_with_true_pose("varied", "13-sjoelbak-plain-whole-fisheye");
    let in_compartments: Vec<_> = report.pieces.iter().filter(|p| p.kind == PieceKind::Disc && p.call == "compartment").collect();
    for p in &in_compartments {
        let nearest = f.truth.pieces.iter().map(|t| (t.footprint.centre.x_mm - p.x_mm).hypot(t.footprint.centre.y_mm - p.y_mm)).fold(f64::INFINITY, f64::min);
        assert!(nearest < PLACED_WITHIN_MM, "a disc read at ({:.1}, {:.1}) mm where none lies: {:?}", p.x_mm, p.y_mm, report.pieces);
    }
    let truly_in = f.truth.pieces.iter().filter(|t| t.call.name() == "compartment").count();
    assert_eq!(in_compartments.len(), truly_in, "{:?}", report.pieces);
}

/// A disc on a partition seen at a few millimetres a pixel: varied scene 17 (a whole sjoelbak, partitions 19.5 mm
/// high, the disc at (101.7, 68.2) mm on the one between compartments 2 and 3) scored with its true pose. Its
/// outline's size says its height to within 17 mm, less than the range partitions are built to: measured so, it
/// was placed 15 mm off; at the board's partition height, uncertain by that range, it lies within a millimetre.
#[test]
fn a_disc_on_a_partition_too_far_to_measure_its_height_is_placed_at_the_boards_and_its_sigma_covers_it() {
    use boardcall::score::REVIEW_SIGMAS;
    // The outline fits to a fraction of a pixel (3 mm here); a partition built 0.5 mm lower than the board's moves it
    // a fraction of a millimetre along the line of sight.
    const PLACED_WITHIN_MM: f64 = 2.0;
    let (f, report) = fixture_with_true_pose("varied", "17-sjoelbak-on_partition-whole-brown");
    let truth = f.truth.pieces.iter().find(|t| t.pose.top_z_mm > 20.0).expect("the disc on the partition").footprint.centre;
    let p = report
        .pieces
        .iter()
        .min_by(|a, b| (a.x_mm - truth.x_mm).hypot(a.y_mm - truth.y_mm).total_cmp(&(b.x_mm - truth.x_mm).hypot(b.y_mm - truth.y_mm)))
        .expect("discs read");
    let error = (p.x_mm - truth.x_mm).hypot(p.y_mm - truth.y_mm);
    assert!(error < PLACED_WITHIN_MM && error <= REVIEW_SIGMAS * p.sigma_mm, "error {error:.1} mm, sigma {:.1} mm: {p:?}", p.sigma_mm);
    assert_eq!(p.call, "none", "a disc on a partition does not count: {p:?}");
}

/// A committed scene of `fixtures/DIR` (`scenes` or `varied`) scored with its true pose: the fixture and the report.
fn fixture_with_true_pose(dir: &str, name: &str) -> (boardcall::fixture::Fixture, boardcall::score::FrameReport) {
    let (f, _, report) = common::scored_with_true_pose(&Path::new("fixtures").join(dir).join(name));
    (f, report)
}

/// A circle too faint to propose a disc (a disc in a shadow, or the board's grain) that the outline fit accepts,
/// where a disc would count, makes the frame need review and is never counted: varied scene 15 (bare wood in the
/// compartments and the gate) scored with its true pose. Its counts are the truth's, and each faint circle flagged
/// lies in the compartments or the gate, or touching its front (the gate's front at 120 mm, a disc's radius 26 mm,
/// the pose's and fit's few mm).
#[test]
fn a_faint_circle_where_a_disc_counts_is_a_review_never_a_disc() {
    let (f, report) = fixture_with_true_pose("varied", "15-sjoelbak-gate_half-whole-brown");
    let faint: Vec<_> = report.unexplained.iter().filter(|u| u.reason.contains("faint circle")).collect();
    assert!(!faint.is_empty(), "{:?}", report.unexplained);
    assert!(report.needs_review);
    for u in &faint {
        assert!(u.centre.y_mm < 120.0 + 26.0 + 5.0, "a faint circle flagged in the field: {u:?}");
    }
    let read = report.pieces.iter().filter(|p| p.call == "compartment").count();
    let truly_in = f.truth.pieces.iter().filter(|t| t.call.name() == "compartment").count();
    assert_eq!(read, truly_in, "{:?}", report.pieces);
}

/// The field's pale wood under the lamp is the board's own glare, where a disc counts for nothing: own scene 18
/// (15 discs' worth of it flagged the frame before) scored with its true pose needs no review, its score right.
#[test]
fn glare_in_the_field_needs_no_review() {
    let (f, report) = fixture_with_true_pose("scenes", "18-sjoelbak-plain");
    assert!(report.unexplained.is_empty(), "{:?}", report.unexplained);
    assert!(!report.needs_review, "{:?}", report.review_reasons);
    let read = report.pieces.iter().filter(|p| p.call == "compartment").count();
    let truly_in = f.truth.pieces.iter().filter(|t| t.call.name() == "compartment").count();
    assert_eq!(read, truly_in, "{:?}", report.pieces);
}

/// A disc in a gate opening with part of it under a bridged gate bar (the external renders build the gate so; the
/// detector does not know the build and takes a bar of blocks as possibly bridged): its middle is out of the camera's
/// sight, the outline the camera sees is the rest. Own scene 16's board built with a bridged bar and one disc in
/// compartment 4's opening, seen from the player's side and scored with the true pose: the disc is read, or the
/// frame needs review for a disc's outline there; never missed unflagged (external sj_03's disc at the gate, 54 %
/// seen, was). Before the faint circles were looked at where the camera does not see a disc's middle, this disc was
/// missed unflagged (the same disc 4 mm either way along the board was read).
#[test]
fn a_disc_half_under_a_bridged_gate_bar_is_read_or_flagged() {
    use boardcall::board::{ConstructionKeys, GateBar};
    use boardcall::geom::{BoardPoint, BoardPoint3};
    use boardcall::piece::{PieceId, PieceKind};
    use boardcall::render::scene::{PieceSpec, PoseSpec};
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/scenes/16-sjoelbak-plain");
    // Its centre 8 mm short of the bar's back (100 mm), its rim 18 mm under the bar.
    let at = BoardPoint::new(-50.0, 92.0);
    let mut s = Scene::load(&dir.join("scene.json")).expect("scene").scene;
    s.construction = Some(ConstructionKeys { gate_bar: Some(GateBar::Bridged), gate_tunnel_height_mm: Some(30.0), ..Default::default() });
    s.camera.pose = PoseSpec::LookAt { position: BoardPoint3::new(-40.0, 420.0, 650.0), target: BoardPoint3::new(-40.0, 110.0, 0.0), up: [0.0, -1.0, 0.0] };
    s.pieces = vec![PieceSpec { id: PieceId::disc(1), kind: PieceKind::Disc, x_mm: at.x_mm, y_mm: at.y_mm, z_mm: None, tilt_deg: 0.0, tilt_towards_deg: 0.0 }];
    let ls = s.validate("bridged gate").expect("valid scene");
    // The built-in board, not the scene's: the detector does not know the build.
    let board = boardcall::board::Board::load("sjoelbak").unwrap();
    let report = rendered_and_scored(&ls, &board, "bridged-gate");
    let read = report.pieces.iter().any(|p| BoardPoint::new(p.x_mm, p.y_mm).distance(at) < 26.0);
    let flagged = report.unexplained.iter().any(|u| u.centre.distance(at) < 26.0);
    assert!(read || (flagged && report.needs_review), "missed unflagged: {:?} {:?}", report.pieces, report.unexplained);
}

/// Own scene 22's sjoelbak lit instead by one low light (a window low in the afternoon) at `light`, with little
/// ambient light: each partition, wall and disc casts a shadow longer than a disc is wide. The `discs` lie flat where
/// given; rendered and scored with the true pose.
fn raking_light_scored(light: boardcall::geom::BoardPoint3, discs: &[boardcall::geom::BoardPoint], tag: &str) -> boardcall::score::FrameReport {
    use boardcall::piece::{PieceId, PieceKind};
    use boardcall::render::scene::{Light, PieceSpec};
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/scenes/22-sjoelbak-gate_half");
    let mut ls = Scene::load(&dir.join("scene.json")).expect("scene");
    ls.scene.lights = vec![Light { position: light, intensity: 3.5, radius_mm: 5.0, kelvin: 4500.0 }];
    ls.scene.appearance.ambient = 0.12;
    ls.scene.pieces = discs
        .iter()
        .zip(1..)
        .map(|(at, n)| PieceSpec { id: PieceId::disc(n), kind: PieceKind::Disc, x_mm: at.x_mm, y_mm: at.y_mm, z_mm: None, tilt_deg: 0.0, tilt_towards_deg: 0.0 })
        .collect();
    rendered_and_scored(&ls, &ls.board, tag)
}

/// Under a raking light (elevation 27 degrees from the `-x` side, 34 degrees from the `+x` side), discs lying
/// against a partition, half or more in its long shadow, are still found by their outline and counted in their
/// compartment. Each disc's own shadow, a dark stadium as long as a disc and a half, ends in an arc of a disc's
/// size: it can be read as a second disc (as of this test, against its disc, and the frame then needs review: "one
/// rests on the other"). Never a confident count: any disc reported where none lies makes the frame need review.
#[test]
fn discs_in_long_shadows_are_counted_and_a_discs_own_shadow_never_is() {
    use boardcall::geom::{BoardPoint, BoardPoint3};
    // (disc, the value of its compartment: 1, 4, 3, 2 from -x to +x, each 100 mm wide).
    let west = [(BoardPoint::new(-70.0, 50.0), 4), (BoardPoint::new(30.0, 60.0), 3), (BoardPoint::new(130.0, 45.0), 2)];
    let east = [(BoardPoint::new(-130.0, 50.0), 1), (BoardPoint::new(-30.0, 45.0), 4), (BoardPoint::new(70.0, 55.0), 3), (BoardPoint::new(170.0, 40.0), 2)];
    for (light, discs, tag) in [(BoardPoint3::new(-1400.0, 300.0, 700.0), &west[..], "west"), (BoardPoint3::new(1300.0, -200.0, 900.0), &east[..], "east")] {
        let at: Vec<BoardPoint> = discs.iter().map(|(p, _)| *p).collect();
        let report = raking_light_scored(light, &at, tag);
        let seen = |p: &boardcall::score::PieceReport| BoardPoint::new(p.x_mm, p.y_mm);
        // Our own renders' fits are within a few tenths of a millimetre; a disc whose rim is half in a shadow less
        // well: 1 mm.
        for (p, value) in discs {
            let found = report.pieces.iter().find(|r| seen(r).distance(*p) < 1.0);
            let found = found.unwrap_or_else(|| panic!("{tag}: the disc at {p:?} is missed: {:?}", report.pieces));
            assert_eq!((found.call.as_str(), found.value), ("compartment", Some(*value)), "{tag}: the disc at {p:?}");
        }
        let extra: Vec<_> = report.pieces.iter().filter(|r| at.iter().all(|p| seen(r).distance(*p) >= 1.0)).collect();
        assert!(extra.is_empty() || report.needs_review, "{tag}: discs where none lies, counted with no review: {extra:?}");
    }
}

/// `scene`'s board and camera with a pile of one, two, three and four discs in compartments 1 to 4 (each pile
/// upright, its discs one on another as the jury piles them): the scene, a disc's thickness and the piles' places.
fn piles_scene(scene: &str) -> (boardcall::render::scene::LoadedScene, f64, Vec<(boardcall::geom::BoardPoint, usize)>) {
    use boardcall::geom::BoardPoint;
    use boardcall::piece::{PieceId, PieceKind};
    use boardcall::render::scene::PieceSpec;
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures").join(scene);
    let mut ls = Scene::load(&dir.join("scene.json")).expect("scene");
    let t = ls.board.piece().thickness_mm;
    let piles: Vec<(BoardPoint, usize)> = [(-150.0, 1), (-50.0, 2), (50.0, 3), (150.0, 4)].into_iter().map(|(x, k)| (BoardPoint::new(x, 50.0), k)).collect();
    let mut n = 0;
    ls.scene.pieces = piles
        .iter()
        .flat_map(|&(at, k)| (0..k).map(move |i| (at, i)))
        .map(|(at, i)| {
            n += 1;
            PieceSpec { id: PieceId::disc(n), kind: PieceKind::Disc, x_mm: at.x_mm, y_mm: at.y_mm, z_mm: Some((i as f64 + 0.5) * t), tilt_deg: 0.0, tilt_towards_deg: 0.0 }
        })
        .collect();
    (ls, t, piles)
}

/// [`piles_scene`] lit by `light` (position, mm) or the scene's own, rendered and scored with the true pose: the
/// report, a disc's thickness and the piles' places.
fn piles_scored(scene: &str, light: Option<[f64; 3]>, tag: &str) -> (boardcall::score::FrameReport, f64, Vec<(boardcall::geom::BoardPoint, usize)>) {
    let (mut ls, t, piles) = piles_scene(scene);
    if let Some([x, y, z]) = light {
        ls.scene.lights[0].position = boardcall::geom::BoardPoint3::new(x, y, z);
    }
    (rendered_and_scored(&ls, &ls.board, tag), t, piles)
}

/// Piles of discs (the jury piles the discs in fours between sub-turns: the rules, article 2 f) seen from above
/// show their top only: read as one disc lying flat, a pile of four was counted one and placed 13.5 mm off along the
/// line of sight. Its top lies nearer the camera and images larger by as much (here 0.4 mm of radius a disc, the
/// outline fit's radius within 0.05 mm): every disc of each pile is counted, the top measured at its height where
/// it lies, the discs under it reported hidden (in doubt: the frame needs review).
#[test]
fn a_pile_of_discs_is_counted_from_the_size_of_its_top() {
    use boardcall::geom::BoardPoint;
    // Own renders place a disc's top to a few tenths of a millimetre; the piles stand 4-5 px a disc high here.
    const TOP_WITHIN_MM: f64 = 1.0;
    let (report, t, piles) = piles_scored("scenes/16-sjoelbak-plain", None, "piles");
    for (at, k) in &piles {
        let read: Vec<_> = report.pieces.iter().filter(|p| BoardPoint::new(p.x_mm, p.y_mm).distance(*at) < 26.0).collect();
        assert_eq!(read.len(), *k, "the pile of {k} at {at:?}: {read:?}");
        let top = read.iter().max_by(|a, b| a.top_z_mm.total_cmp(&b.top_z_mm)).expect("a top");
        assert!((top.top_z_mm - t * *k as f64).abs() < 0.5 && BoardPoint::new(top.x_mm, top.y_mm).distance(*at) < TOP_WITHIN_MM, "the top of the pile of {k}: {top:?}");
        assert!(read.iter().all(|p| p.call == "compartment"), "{read:?}");
        assert_eq!(read.iter().filter(|p| p.review).count(), if *k > 1 { *k } else { 0 }, "{read:?}");
    }
    assert!(report.needs_review, "discs hidden in piles: {:?}", report.review_reasons);
    // This view tells one disc more by the size: its counts are not put in doubt as a whole.
    assert!(!report.doubts.iter().any(|r| r.contains("this view cannot see")), "{:?}", report.doubts);
}

/// The same piles seen by the same camera at half its resolution: the outline's size no longer tells one disc more
/// (the height it measures is known to twice the camera's height over the radius times a quarter pixel: more than
/// half a disc's thickness), so the frame says its counts may miss discs hidden in piles, rather than count the
/// piles' tops as single discs in silence.
#[test]
fn piles_a_view_cannot_tell_put_its_counts_in_doubt() {
    let (mut ls, _, _) = piles_scene("scenes/16-sjoelbak-plain");
    ls.scene.camera.intrinsics = scaled_camera(&ls.scene.camera.intrinsics, 0.5);
    let report = rendered_and_scored(&ls, &ls.board, "piles-half");
    assert!(report.needs_review, "{:?}", report.review_reasons);
    assert!(report.doubts.iter().any(|r| r.contains("the discs counted may lie on others this view cannot see")), "{:?}", report.doubts);
}

/// A disc's shadow is no pile: lit from beyond the piles (from the player's side of the board, 40 degrees up), each
/// casts its shadow towards the camera, a dark band past its rim as long as a pile's side (a pile told by the band
/// read single discs as piles of two on own scenes 19 and 21). The top's size is the shadow's none: the disc lying
/// alone is not counted as more, and no pile as more discs than it has.
#[test]
fn a_discs_shadow_towards_the_camera_is_no_pile() {
    use boardcall::geom::BoardPoint;
    let (report, _, piles) = piles_scored("scenes/16-sjoelbak-plain", Some([0.0, -1500.0, 1300.0]), "piles-shadow");
    for (at, k) in &piles {
        let read: Vec<_> = report.pieces.iter().filter(|p| BoardPoint::new(p.x_mm, p.y_mm).distance(*at) < 26.0).collect();
        assert!(read.len() <= *k, "the pile of {k} at {at:?}, read as {}: {read:?}", read.len());
        if *k == 1 {
            assert!(read.len() == 1 && read[0].top_z_mm < 14.0, "the disc alone at {at:?}: {read:?}");
        }
    }
}

/// Piles of one to four discs on eight other sjoelbaks of the own and varied sets (their boards, cameras, fisheye
/// lenses and lights): a pile is never counted as more discs than it has, a disc alone never as a pile, and a pile
/// counted whole has the discs under its top flagged. Where its side or its size does not show the pile (a camera
/// nearly over it, a shadow across its side), it is read as fewer discs, and never silently: in doubt, a circle no
/// disc explains, or (own 19 and 24, whose outline sizes cannot tell one disc more) the frame's counts in doubt.
/// Measured: 12 of the 24 piles of two or more counted whole (all three in own 17 and varied 12 and 14; none in own
/// 19 and 24 and varied 16).
#[test]
fn piles_elsewhere_are_never_counted_as_more_discs_than_they_have() {
    use boardcall::geom::BoardPoint;
    // What this measured when it was written: a pile counted whole must stay so (a drop is a regression).
    const WHOLE_AT_LEAST: usize = 12;
    let mut whole = 0;
    for scene in ["scenes/17-sjoelbak-plain", "scenes/19-sjoelbak-plain", "scenes/21-sjoelbak-plain", "scenes/24-sjoelbak-gate_half", "varied/12-sjoelbak-plain-end-brown", "varied/14-sjoelbak-plain-end-brown", "varied/16-sjoelbak-gate_half-end-fisheye", "varied/18-sjoelbak-on_partition-end-brown"] {
        let (report, _, piles) = piles_scored(scene, None, "piles-elsewhere");
        for (at, k) in &piles {
            let read: Vec<_> = report.pieces.iter().filter(|p| BoardPoint::new(p.x_mm, p.y_mm).distance(*at) < 26.0).collect();
            assert!(read.len() <= *k, "{scene}: the pile of {k} at {at:?} read as {}: {read:?}", read.len());
            if *k > 1 && read.len() == *k {
                whole += 1;
                assert!(read.iter().all(|p| p.review), "{scene}: the pile of {k} counted, unflagged: {read:?}");
            }
            // A pile not counted whole is never silently fewer discs: a disc read of it is in doubt, or it is
            // reported as a circle no disc explains, or the frame's counts are in doubt (a view whose outline sizes
            // cannot tell a pile).
            if *k > 1 && read.len() < *k {
                let unseen = report.doubts.iter().any(|r| r.contains("may lie on others this view cannot see"));
                let unexplained = report.unexplained.iter().any(|u| u.centre.distance(*at) < 26.0);
                assert!(unseen || unexplained || read.iter().any(|p| p.review), "{scene}: the pile of {k} read as {} disc(s), unflagged: {read:?} {:?}", read.len(), report.review_reasons);
            }
        }
    }
    eprintln!("{whole} of 24 piles of two or more counted whole");
    assert!(whole >= WHOLE_AT_LEAST, "{whole} of 24 piles counted whole");
}
