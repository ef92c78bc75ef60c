//! A board's construction as data: the `[construction]` section read, validated and
//! refused naming the key; the older layout keys still setting it; the nominal values
//! being the renderer's old constants; and the solids following the construction.

use boardcall::board::{Board, BoardError, Construction, ConstructionKeys, GateBar, Part, BUILTIN};

/// Board numbers are decimal literals: 1e-9 mm only absorbs float rounding.
const EXACT_MM: f64 = 1e-9;

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < EXACT_MM
}

fn builtin(name: &str) -> &'static str {
    BUILTIN.iter().find(|(n, _)| *n == name).map(|(_, t)| *t).unwrap()
}

/// The built-in board's text with its whole `[construction]` section replaced by `section`.
fn with_section(name: &str, section: &str) -> String {
    let text = builtin(name);
    let start = text.find("[construction]").expect("the built-ins have a [construction] section");
    let rest = &text[start + "[construction]".len()..];
    // The section ends at the next table header (or the end of the file).
    let end = rest.find("\n[").map_or(text.len(), |i| start + "[construction]".len() + i + 1);
    format!("{}{}\n{}", &text[..start], section, &text[end..])
}

fn load(text: &str) -> Result<Board, BoardError> {
    Board::from_toml(text, "test.toml")
}

fn err(text: &str) -> String {
    load(text).unwrap_err().to_string()
}

#[test]
fn the_nominal_construction_is_the_renderers_old_constants() {
    // Before construction was data: gutters 76.2 x 38.1, rails 70 wide and 20 high, the table
    // 120 deep, the floor 760 down; sjoelbak walls 50 high and 15 thick, floor board 20,
    // partitions 20, gate bar in blocks; washer boards 100 above the ground.
    let Construction::Shuffleboard(s) = Board::load("shuffleboard-22ft").unwrap().construction() else { panic!() };
    assert!(close(s.gutter_width_mm, 76.2) && close(s.gutter_depth_mm, 38.1));
    assert!(close(s.rail_width_mm, 70.0) && close(s.rail_height_mm, 20.0));
    assert!(close(s.table_depth_mm, 120.0) && close(s.floor_depth_mm, 760.0));
    let Construction::Sjoelbak(j) = Board::load("sjoelbak").unwrap().construction() else { panic!() };
    assert!(close(j.wall_height_mm, 50.0) && close(j.wall_thickness_mm, 15.0));
    assert!(close(j.floor_board_thickness_mm, 20.0) && close(j.partition_height_mm, 20.0) && close(j.floor_depth_mm, 20.0));
    assert_eq!(j.gate_bar, GateBar::Blocks);
    for name in ["holeyboard", "yocu-4", "yocu-9"] {
        let Construction::Washer(w) = Board::load(name).unwrap().construction() else { panic!() };
        assert!(close(w.stand_height_mm, 100.0), "{name}");
    }
    // A file that says nothing about its construction gets the same values.
    for name in ["shuffleboard-22ft", "sjoelbak", "holeyboard"] {
        let bare = load(&with_section(name, "")).unwrap();
        assert_eq!(bare, Board::load(name).unwrap(), "{name}");
        assert_eq!(bare.construction(), Construction::nominal(bare.kind()), "{name}");
    }
}

#[test]
fn a_construction_section_sets_the_solids() {
    let text = with_section("shuffleboard-22ft", "[construction]\ngutter_width_mm = 95.0\nrail_height_mm = 42.0\nfloor_depth_mm = 200.0\n");
    let b = load(&text).unwrap();
    let Construction::Shuffleboard(c) = b.construction() else { panic!() };
    assert!(close(c.gutter_width_mm, 95.0) && close(c.rail_height_mm, 42.0) && close(c.floor_depth_mm, 200.0));
    // Keys not given keep their nominal values.
    assert!(close(c.gutter_depth_mm, 38.1) && close(c.rail_width_mm, 70.0));
    let solids = b.solids();
    let gutter = solids.of(Part::Gutter).next().unwrap();
    assert!(close(gutter.max[0], 254.0 + 95.0), "{gutter:?}");
    assert!(solids.of(Part::Rail).all(|r| close(r.max[2], 42.0)));
    assert!(close(solids.floor_z_mm, -200.0));
    // And it round-trips through the file format.
    assert_eq!(load(&b.to_toml()).unwrap(), b);

    let text = with_section("sjoelbak", "[construction]\ngate_bar = \"bridged\"\ngate_tunnel_height_mm = 26.0\nwall_height_mm = 70.0\n");
    let b = load(&text).unwrap();
    let bridge = b.solids().of(Part::GateBar).find(|g| close(g.max[0] - g.min[0], 400.0)).copied().expect("one bar across the width");
    assert!(close(bridge.min[2], 26.0) && close(bridge.max[2], 70.0), "{bridge:?}");
    assert_eq!(load(&b.to_toml()).unwrap(), b);
}

#[test]
fn the_older_layout_keys_still_set_the_construction() {
    // A board file from before `[construction]`: the chosen values in the layout sections.
    let shuffle = with_section("shuffleboard-22ft", "").replace("weight_height_mm = 25.0", "weight_height_mm = 25.0\ngutter_width_mm = 88.0\ngutter_depth_mm = 30.0");
    let Construction::Shuffleboard(c) = load(&shuffle).unwrap().construction() else { panic!() };
    assert!(close(c.gutter_width_mm, 88.0) && close(c.gutter_depth_mm, 30.0), "{c:?}");
    let sjoel = with_section("sjoelbak", "").replace("disc_thickness_mm = 13.0", "disc_thickness_mm = 13.0\nwall_height_mm = 64.0");
    let Construction::Sjoelbak(c) = load(&sjoel).unwrap().construction() else { panic!() };
    assert!(close(c.wall_height_mm, 64.0), "{c:?}");
    let washer = with_section("holeyboard", "").replace("washer_thickness_mm = 3.2", "washer_thickness_mm = 3.2\nstand_height_mm = 150.0");
    let Construction::Washer(c) = load(&washer).unwrap().construction() else { panic!() };
    assert!(close(c.stand_height_mm, 150.0), "{c:?}");
    // A bad value is named where it was written.
    let e = err(&shuffle.replace("gutter_depth_mm = 30.0", "gutter_depth_mm = 5000.0"));
    assert!(e.contains("`shuffleboard.gutter_depth_mm`"), "{e}");
    // Given in both places, the key is refused rather than one silently winning.
    let both = with_section("sjoelbak", "[construction]\nwall_height_mm = 60.0\n").replace("disc_thickness_mm = 13.0", "disc_thickness_mm = 13.0\nwall_height_mm = 64.0");
    let e = err(&both);
    assert!(e.contains("construction.wall_height_mm") && e.contains("give it once"), "{e}");
}

#[test]
fn bad_construction_keys_are_refused_naming_the_key() {
    let cases = [
        // An unknown key.
        ("shuffleboard-22ft", "[construction]\ngutter_wdth_mm = 80.0\n", "gutter_wdth_mm"),
        // A key of another kind of board.
        ("shuffleboard-22ft", "[construction]\nwall_height_mm = 50.0\n", "construction.wall_height_mm"),
        ("holeyboard", "[construction]\ngate_bar = \"bridged\"\n", "construction.gate_bar"),
        // Out of the limits of every length.
        ("shuffleboard-22ft", "[construction]\nrail_height_mm = 5000.0\n", "construction.rail_height_mm"),
        ("shuffleboard-22ft", "[construction]\ngutter_width_mm = nan\n", "construction.gutter_width_mm"),
        ("shuffleboard-22ft", "[construction]\nrail_width_mm = -70.0\n", "construction.rail_width_mm"),
        ("sjoelbak", "[construction]\nwall_thickness_mm = 0.0\n", "construction.wall_thickness_mm"),
        // Parts in an order no one could build.
        ("shuffleboard-22ft", "[construction]\ngutter_depth_mm = 130.0\n", "construction.gutter_depth_mm"),
        ("shuffleboard-22ft", "[construction]\nfloor_depth_mm = 100.0\n", "construction.floor_depth_mm"),
        ("sjoelbak", "[construction]\npartition_height_mm = 60.0\n", "construction.partition_height_mm"),
        ("sjoelbak", "[construction]\nfloor_depth_mm = 10.0\n", "construction.floor_depth_mm"),
        ("sjoelbak", "[construction]\ngate_bar = \"bridged\"\ngate_tunnel_height_mm = 10.0\n", "construction.gate_tunnel_height_mm"),
        ("sjoelbak", "[construction]\ngate_bar = \"bridged\"\ngate_tunnel_height_mm = 55.0\n", "construction.gate_tunnel_height_mm"),
        ("holeyboard", "[construction]\nstand_height_mm = 50.0\n", "construction.stand_height_mm"),
        // A gate bar built neither way.
        ("sjoelbak", "[construction]\ngate_bar = \"arched\"\n", "arched"),
    ];
    for (board, section, key) in cases {
        let e = err(&with_section(board, section));
        assert!(e.contains(key), "{board} {section:?}: {e}");
    }
    // The same value is fine where it is buildable (the tunnel check is the bridged bar's only).
    load(&with_section("sjoelbak", "[construction]\ngate_tunnel_height_mm = 10.0\n")).unwrap();
}

#[test]
fn an_override_replaces_only_its_keys_and_is_checked() {
    let b = Board::load("sjoelbak").unwrap();
    let keys = ConstructionKeys { wall_height_mm: Some(80.0), ..Default::default() };
    let Construction::Sjoelbak(c) = b.with_construction(&keys).unwrap().construction() else { panic!() };
    assert!(close(c.wall_height_mm, 80.0) && close(c.partition_height_mm, 20.0));
    let bad = ConstructionKeys { rail_height_mm: Some(30.0), ..Default::default() };
    let e = b.with_construction(&bad).unwrap_err();
    assert_eq!(e.key, "rail_height_mm");
    let low = ConstructionKeys { wall_height_mm: Some(15.0), ..Default::default() };
    assert_eq!(b.with_construction(&low).unwrap_err().key, "partition_height_mm");
}
