//! Unit tests of board files: the built-ins, round trips, variants, and refusals naming the key.

use super::*;

fn assert_close(a: f64, b: f64) {
    // Board numbers are decimal literals; 1e-9 mm only absorbs float rounding.
    assert!((a - b).abs() < 1e-9, "{a} != {b}");
}

#[test]
fn builtins_load_and_carry_the_reference_numbers() {
    let boards = builtins();
    assert_eq!(boards.len(), 5);
    let sb = Board::load("shuffleboard-22ft").unwrap();
    assert_close(sb.surface.width_mm, 508.0);
    assert_close(sb.surface.length_mm, 6299.2);
    let s = sb.shuffleboard().unwrap();
    assert_close(s.lines.trey_line_mm, 152.4);
    assert_close(s.lines.deuce_line_mm, 304.8);
    assert_close(s.lines.long_foul_line_mm, 1828.8);
    assert_close(s.lines.short_foul_line_mm, 4464.05);
    assert_close(s.line_width_mm, 6.35);
    assert_close(s.weight_diameter_mm, 58.74);
    assert_close(s.weight_height_mm, 25.0);

    let sj = Board::load("sjoelbak").unwrap();
    let s = sj.sjoelbak().unwrap();
    let values: Vec<(f64, u32)> = s.compartments.iter().map(|c| (c.x_mm, c.value)).collect();
    assert_eq!(values, vec![(-150.0, 1), (-50.0, 4), (50.0, 3), (150.0, 2)]);
    assert_close(s.gate_front_mm, 120.0);
    assert_close(s.gate_back_mm, 100.0);
    assert_close(s.disc_diameter_mm, 52.0);
    assert_eq!(s.partitions(), vec![-100.0, 0.0, 100.0]);

    let hb = Board::load("holeyboard").unwrap();
    let w = hb.washer().unwrap();
    let holes: Vec<(f64, u32)> = w.holes.iter().map(|h| (h.y_mm, h.value)).collect();
    assert_eq!(holes, vec![(203.2, 5), (508.0, 3), (812.8, 1)]);
    assert_close(w.cup_depth_mm, 76.0);

    let y4 = Board::load("yocu-4").unwrap();
    let holes: Vec<(f64, u32)> = y4.washer().unwrap().holes.iter().map(|h| (h.y_mm, h.value)).collect();
    assert_eq!(holes, vec![(254.0, 5), (584.2, 3), (914.4, 2), (1244.6, 1)]);

    let y9 = Board::load("yocu-9").unwrap();
    let w = y9.washer().unwrap();
    assert_eq!(w.holes.len(), 9);
    let total: u32 = w.holes.iter().map(|h| h.value).sum();
    assert_eq!(total, 2 * (5 + 4 + 2 + 1) + 3);
    assert!(w.holes.iter().all(|h| (h.diameter_mm - 88.9).abs() < 1e-9));
}

#[test]
fn boards_round_trip_through_toml() {
    for b in builtins() {
        let again = Board::from_toml(&b.to_toml(), "round trip").unwrap();
        assert_eq!(again, b);
    }
}

#[test]
fn variants_change_length_and_lines() {
    let b = Board::load("shuffleboard-22ft@12ft").unwrap();
    assert_eq!(b.variant.as_deref(), Some("12ft"));
    assert!(b.surface.length_mm < 6299.2);
    let err = Board::load("shuffleboard-22ft@7ft").unwrap_err().to_string();
    assert!(err.contains("no variant `7ft`"), "{err}");
}

fn edit(name: &str, from: &str, to: &str) -> Result<Board, BoardError> {
    let text = builtin_text(name).unwrap();
    assert!(text.contains(from), "fixture text `{from}` not in {name}");
    Board::from_toml(&text.replacen(from, to, 1), "edited")
}

#[test]
fn negative_sizes_are_rejected_naming_the_key() {
    let e = edit("holeyboard", "width_mm = 406.4", "width_mm = -406.4").unwrap_err().to_string();
    assert!(e.contains("surface.width_mm") && e.contains("a length from"), "{e}");
}

#[test]
fn sizes_beyond_physical_limits_are_rejected_naming_the_key() {
    for (from, to, key) in [
        ("length_mm = 6299.2", "length_mm = 1e9", "surface.length_mm"),
        ("length_mm = 6299.2", "length_mm = nan", "surface.length_mm"),
        ("width_mm = 508.0", "width_mm = 1e9", "surface.width_mm"),
        ("gutter_depth_mm = 38.1", "gutter_depth_mm = 5e3", "construction.gutter_depth_mm"),
        ("weight_diameter_mm = 58.74", "weight_diameter_mm = 5000.0", "shuffleboard.weight_diameter_mm"),
    ] {
        let e = edit("shuffleboard-22ft", from, to).unwrap_err().to_string();
        assert!(e.contains(key), "{to}: {e}");
    }
    let e = edit("holeyboard", "value = 5", "value = 4000000000").unwrap_err().to_string();
    assert!(e.contains(".value"), "{e}");
}

#[test]
fn holes_off_the_board_are_rejected() {
    let e = edit("holeyboard", "y_mm = 203.2", "y_mm = 20.0").unwrap_err().to_string();
    assert!(e.contains("washer.holes[0]") && e.contains("off the board"), "{e}");
}

#[test]
fn overlapping_holes_are_rejected() {
    let e = edit("holeyboard", "y_mm = 508.0", "y_mm = 260.0").unwrap_err().to_string();
    assert!(e.contains("washer.holes[1]") && e.contains("overlaps hole 0"), "{e}");
}

#[test]
fn unknown_keys_are_rejected_naming_the_key() {
    let e = edit("sjoelbak", "[surface]", "[surface]\ncolour = \"oak\"").unwrap_err().to_string();
    assert!(e.contains("colour"), "{e}");
}

#[test]
fn lines_out_of_order_are_rejected() {
    let e = edit("shuffleboard-22ft", "deuce_line_mm = 304.8", "deuce_line_mm = 100.0")
        .unwrap_err()
        .to_string();
    assert!(e.contains("shuffleboard.deuce_line_mm"), "{e}");
}

#[test]
fn a_section_of_the_wrong_kind_is_rejected() {
    let e = edit("sjoelbak", "kind = \"sjoelbak\"", "kind = \"washer\"").unwrap_err().to_string();
    assert!(e.contains("sjoelbak") && e.contains("does not belong"), "{e}");
}

#[test]
fn unknown_names_list_the_builtins() {
    let e = Board::load("no-such-board").unwrap_err().to_string();
    assert!(e.contains("yocu-9") && e.contains("no-such-board"), "{e}");
}

/// The lowest height (mm) of a propped washer's underside above the rim, over the rim's points under it, by brute
/// force: every rim point (a tenth of a degree apart) under the washer's underside, the gap between them.
fn underside_gap_over_rim(w: &WasherBoard, h: &Hole, d: f64, tilt_deg: f64) -> f64 {
    let (r, th, t) = (w.washer_outer_diameter_mm / 2.0, w.washer_thickness_mm, tilt_deg.to_radians());
    let z = w.propped_centre_z(h, d, tilt_deg);
    // The underside's centre and the rise's direction (+x here): the normal leans back against the rise.
    let (ux, uz) = (d + th / 2.0 * t.sin(), z - th / 2.0 * t.cos());
    (0..3600)
        .filter_map(|k| {
            let a = (k as f64 / 10.0).to_radians();
            let (px, py) = (h.radius() * a.cos(), h.radius() * a.sin());
            // In the underside's plane: along the rise (foreshortened in plan), across it.
            let along = (px - ux) / t.cos();
            (along * along + py * py <= r * r).then(|| uz + (px - ux) * t.tan())
        })
        .fold(f64::INFINITY, f64::min)
}

#[test]
fn a_propped_washer_bridges_the_rim_where_its_edge_crosses_it() {
    let b = Board::load("holeyboard").unwrap();
    let w = b.washer().unwrap();
    let h = Hole { x_mm: 0.0, y_mm: 0.0, ..w.holes[0] };
    let r = w.washer_outer_diameter_mm / 2.0;
    for tilt in [15.0, 25.9, 31.4, 38.7, 45.0] {
        let reach = h.radius() - r * f64::to_radians(tilt).cos();
        for k in 1..=8 {
            let d = reach + (h.radius() - 1.0 - reach) * k as f64 / 8.0;
            // Resting on the rim: no rim point above the underside, one touching it. A tenth of a degree of rim is
            // 0.09 mm of arc, under which the underside rises by less than 0.05 mm at these tilts.
            let gap = underside_gap_over_rim(w, &h, d, tilt);
            assert!(gap.abs() < 0.05, "tilt {tilt} d {d}: the underside {gap} mm over the rim");
        }
    }
    // A washer whose edge just reaches the rim rests on it along the rise: the plain wedge. Its underside's edge
    // reaches the rim when its centre, shifted along the rise by the half thickness's lean, lies r cos(tilt) in.
    let (tilt, th) = (25.0f64.to_radians(), w.washer_thickness_mm);
    let d = h.radius() - r * tilt.cos() - th / 2.0 * tilt.sin() + 1e-6;
    let wedge = -(h.radius() - d) * tilt.tan() + th / 2.0 / tilt.cos();
    assert!((w.propped_centre_z(&h, d, 25.0) - wedge).abs() < 0.01);
}
