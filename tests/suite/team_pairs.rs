//! The team-colours fixture set (`fixtures/teams`, issue 14, item 8): eight colour
//! pairs on shuffleboards and washer boards, read with the true pose. Colours the
//! detector cannot learn (pale, near hues) come with the pieces file a user
//! would give; the rest are learned from each frame.
use boardcall::board::Board;
use boardcall::calls::FoulLine;
use boardcall::detect::{hue_distance, DetectorConfig, TeamsSource};
use boardcall::eval::{run_fixture, PoseSource};
use boardcall::fixture::{list, Fixture, PIECES_FILE, SCENE_FILE};
use boardcall::frame::Frame;
use boardcall::render::teams::{self, pieces_file, TEAM_PAIRS};
use boardcall::score::{score_frame, FrameReport, PoseInput};
use std::path::{Path, PathBuf};

/// A footprint further than this (mm) from the truth is another piece (pieces
/// are ~60 mm across; the set's worst placement with the true pose is 1.7 mm).
const SAME_PIECE_MM: f64 = 5.0;
/// A learned colour's window holds the paint's hue with this much to spare
/// (degrees): the rendered caps spread a few degrees round it under the scenes'
/// lights and JPEG's chroma.
const PAINT_SPREAD_DEG: f32 = 5.0;
/// A piece on the floor beside the board is placed at the height its size
/// gives (the floor's is unknown): within this (mm) of the truth is the same
/// piece (measured: 11-22 mm on the external renders' floors).
const SAME_PIECE_OFF_BOARD_MM: f64 = 40.0;

fn set() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/teams")
}

fn fixture(name: &str) -> Fixture {
    let dir = std::fs::read_dir(set()).unwrap().map(|e| e.unwrap().path()).find(|p| p.file_name().unwrap().to_string_lossy().starts_with(name));
    Fixture::load(&dir.unwrap_or_else(|| panic!("no fixture {name}"))).unwrap()
}

/// Scores a fixture with its true pose and the detector's defaults (the colours learned).
fn score(f: &Fixture) -> FrameReport {
    let frame = Frame::load(&f.image_path()).unwrap();
    let board = Board::load(&f.truth.board).unwrap();
    let pose = f.truth.camera.pose();
    score_frame(&frame, &board, &f.camera, PoseInput::Trusted(pose), DetectorConfig::default(), FoulLine::Long).unwrap().0
}

/// Every true piece is reported with its team, at its place, with its call.
fn every_piece_read(f: &Fixture, report: &FrameReport) {
    for t in &f.truth.pieces {
        let c = t.footprint.centre;
        let near = if t.call.name() == "off" { SAME_PIECE_OFF_BOARD_MM } else { SAME_PIECE_MM };
        let read = report.pieces.iter().any(|p| p.team == t.team && (p.x_mm - c.x_mm).hypot(p.y_mm - c.y_mm) < near && p.call == t.call.name());
        assert!(read, "{}: {} not read: {:?} {:?}", f.dir.display(), t.id, report.pieces, report.review_reasons);
    }
}

#[test]
fn the_set_holds_every_pair_and_a_pieces_file_where_the_user_names_the_colours() {
    let fixtures = list(&set()).unwrap();
    assert_eq!(fixtures.len(), 2 * TEAM_PAIRS.len());
    for pair in &TEAM_PAIRS {
        let of_pair: Vec<&PathBuf> = fixtures.iter().filter(|d| d.to_string_lossy().ends_with(&format!("-{}", pair.name))).collect();
        assert_eq!(of_pair.len(), 2, "{}", pair.name);
        for dir in of_pair {
            let f = Fixture::load(dir).unwrap();
            match pair.given {
                true => assert_eq!(f.pieces.as_ref(), Some(&pieces_file(pair)), "{}", dir.display()),
                false => assert!(f.pieces.is_none() && !dir.join(PIECES_FILE).exists(), "{}", dir.display()),
            }
        }
    }
}

#[test]
fn the_committed_set_is_the_recipe_output() {
    let planned = teams::plan_set(&teams::default_config()).unwrap();
    let committed = list(&set()).unwrap();
    assert_eq!(committed.len(), planned.len());
    for (p, dir) in planned.iter().zip(&committed) {
        assert_eq!(dir.file_name().unwrap().to_str().unwrap(), p.name);
        let scene = std::fs::read_to_string(dir.join(SCENE_FILE)).unwrap();
        assert_eq!(scene, p.scene.scene.to_json(), "{}", p.name);
    }
}

#[test]
fn no_pair_is_read_confidently_wrong_with_the_true_pose() {
    // Every call right, or the frame flagged for review: a colour pair never
    // loses a round, or a piece on the board, silently. (Known short of that:
    // pieces beside the board, on a floor of unknown height, issue 14 item 6:
    // one of 11-yocu-9's pale washers on the floor, in dim light, is missed
    // unflagged, the round still right.)
    let detector = DetectorConfig::default();
    let mut all_right = 0;
    for dir in list(&set()).unwrap() {
        let out = run_fixture(&Fixture::load(&dir).unwrap(), PoseSource::Truth, &detector);
        assert!(out.error.is_none(), "{}: {:?}", out.name, out.error);
        assert!(out.needs_review || out.score_right, "{}: round wrong and not flagged: {:?}", out.name, out.pieces);
        let wrong_on_board: Vec<_> = out.pieces.iter().filter(|p| p.call != p.truth_call && p.truth_call != "off").collect();
        assert!(out.needs_review || wrong_on_board.is_empty(), "{}: wrong and not flagged: {wrong_on_board:?}", out.name);
        all_right += usize::from(out.all_calls_right && !out.needs_review);
    }
    // Measured: 8 of 16 (fixtures/README.md); the others are flagged for review
    // (a yellow cap on wood, the board's hue; green caps darker than the pale
    // colour learned from the lit ones; oblique cups through a fisheye; pale
    // pieces), but for 11-yocu-9 above.
    assert!(all_right >= 8, "{all_right} of 16 fixtures with every call right and no review");
}

#[test]
fn well_apart_colours_are_learned_from_the_frame() {
    for name in ["02-", "03-", "08-", "09-"] {
        let f = fixture(name);
        let report = score(&f);
        assert_eq!(report.teams_source, TeamsSource::Learned, "{}", f.dir.display());
        let pair = TEAM_PAIRS.iter().find(|p| f.dir.to_string_lossy().ends_with(p.name)).unwrap();
        for (team, want) in pieces_file(pair).teams.iter().map(|t| (t.team, t.colour.hue_deg)) {
            let got = report.teams.iter().find(|t| t.team == team).unwrap().colour;
            let within = got.hue_tolerance_deg - PAINT_SPREAD_DEG;
            assert!(hue_distance(got.hue_deg, want) < within, "{}: {team:?} learned at {got:?}, painted {want}", f.dir.display());
        }
        every_piece_read(&f, &report);
    }
}

#[test]
fn a_rail_of_a_team_colour_running_out_of_view_is_not_learned_as_pieces() {
    // Crimson pieces beside red rails cut off by the view's edge into
    // piece-sized pieces: learned from the rails, the red would miss the crimson.
    let f = fixture("02-");
    every_piece_read(&f, &score(&f));
}

#[test]
fn a_washer_seen_in_part_in_a_cup_is_no_board_of_its_colour() {
    // A violet washer deep in a yocu cup shows a crescent: taken for the board's
    // own violet, it would veto the violet learned from the washers on the board.
    let f = fixture("03-");
    every_piece_read(&f, &score(&f));
}

#[test]
fn caps_darker_than_a_learned_pale_colour_are_flagged_not_dropped() {
    // Green caps under a spot light read at saturation ~0.3: the colour learned
    // from them is pale, held above the shadows' brightness (value 0.5). The
    // green caps in the zones beyond, at saturation ~0.5 but value ~0.4, fall
    // below it; the frame must say so, never score the round without them.
    let f = fixture("06-");
    let report = score(&f);
    assert!(report.needs_review, "{:?}", report.pieces);
    for t in f.truth.pieces.iter().filter(|t| !report.pieces.iter().any(|p| p.team == t.team && (p.x_mm - t.footprint.centre.x_mm).hypot(p.y_mm - t.footprint.centre.y_mm) < SAME_PIECE_MM)) {
        let c = t.footprint.centre;
        let named = report.unexplained.iter().any(|u| (u.centre.x_mm - c.x_mm).hypot(u.centre.y_mm - c.y_mm) < SAME_PIECE_MM && u.reason.contains("darker than its colour allows"));
        assert!(named, "{} neither read nor named: {:?}", t.id, report.review_reasons);
    }
}
