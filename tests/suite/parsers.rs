//! Property tests for every parser: whatever the text, an error or a valid value, never a panic. Random text and
//! random edits of real files (the edits reach deeper than random text, past the syntax into the values).

use boardcall::board::Board;
use proptest::prelude::*;
use std::path::Path;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// A real file's text with one span replaced by `insert` (a structural or numeric token, or random text).
fn edited(text: &str, at: usize, cut: usize, insert: &str) -> String {
    let mut b: Vec<char> = text.chars().collect();
    let at = at % (b.len() + 1);
    let end = (at + cut).min(b.len());
    b.splice(at..end, insert.chars());
    b.into_iter().collect()
}

fn token() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("NaN".to_string()),
        Just("inf".to_string()),
        Just("-1e308".to_string()),
        Just("1e300".to_string()),
        Just("9223372036854775807".to_string()),
        Just("-0".to_string()),
        Just("\"".to_string()),
        Just("[".to_string()),
        Just("}".to_string()),
        Just("null".to_string()),
        "[ -~]{0,12}",
        "\\PC{0,6}",
    ]
}

fn board_text() -> String {
    std::fs::read_to_string(root().join("calibration/boards/holeyboard.toml")).unwrap()
}

fn events_text() -> String {
    std::fs::read_to_string(root().join("fixtures/events/holeyboard.json")).unwrap()
}

fn scene_text() -> String {
    std::fs::read_to_string(root().join("fixtures/scenes/40-yocu-4-plain/scene.json")).unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn board_files_parse_or_fail_cleanly(text in "\\PC{0,200}", at in 0usize..4000, cut in 0usize..20, insert in token()) {
        let _ = Board::from_toml(&text, "random");
        if let Ok(b) = Board::from_toml(&edited(&board_text(), at, cut, &insert), "edited") {
            // A board that validates round-trips and stays within the limits.
            prop_assert!(Board::from_toml(&b.to_toml(), "round trip").is_ok());
            prop_assert!(b.surface.length_mm <= boardcall::board::MAX_BOARD_LENGTH_MM);
        }
    }

    #[test]
    fn event_logs_parse_or_fail_cleanly(text in "\\PC{0,200}", at in 0usize..2000, cut in 0usize..20, insert in token()) {
        let _ = boardcall::rules::EventLog::from_json(&text);
        if let Ok(log) = boardcall::rules::EventLog::from_json(&edited(&events_text(), at, cut, &insert)) {
            let config = boardcall::rules::GameConfig::with_options(boardcall::rules::Rules::HoleyBoard, &[] as &[String]).unwrap();
            let _ = boardcall::rules::play(&config, &Board::load("holeyboard").unwrap(), &log);
        }
    }

    #[test]
    fn scenes_parse_or_fail_cleanly(text in "\\PC{0,200}", at in 0usize..6000, cut in 0usize..20, insert in token()) {
        let _ = boardcall::render::Scene::from_json(&text, "random");
        if let Ok(s) = boardcall::render::Scene::from_json(&edited(&scene_text(), at, cut, &insert), "edited") {
            let _ = s.validate("edited");
        }
    }

    #[test]
    fn names_and_options_parse_or_fail_cleanly(text in "\\PC{0,40}", key in "[a-z_]{0,12}", value in "\\PC{0,12}") {
        let _ = text.parse::<boardcall::piece::PieceId>();
        let _ = text.parse::<boardcall::piece::Team>();
        let _ = text.parse::<boardcall::rules::Rules>();
        let _ = text.parse::<boardcall::calibrate::Pattern>();
        let _ = Board::load(&text);
        for rules in boardcall::rules::Rules::ALL {
            let _ = boardcall::rules::GameConfig::with_options(rules, &[format!("{key}={value}"), text.clone()]);
        }
    }

    #[test]
    fn points_files_parse_or_fail_cleanly(text in "\\PC{0,300}") {
        let dir = std::env::temp_dir().join(format!("boardcall-parsers-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(format!("points-{}.csv", text.len()));
        std::fs::write(&path, &text).unwrap();
        if let Ok(points) = boardcall::locate::read_points(&path) {
            prop_assert!(points.iter().all(|p| p.board.x_mm.is_finite() && p.pixel.u.is_finite()));
        }
    }
}
