//! Board validation: every length, count and value within the limits of
//! `docs/input-limits.md`, lines in order, holes and compartments that fit.

use super::layout::{Layout, ShuffleLines};
use super::{Board, BoardError, MAX_BOARD_LENGTH_MM, MAX_BOARD_WIDTH_MM, MAX_HEIGHT_MM, MAX_TARGETS, MAX_VALUE, MIN_LENGTH_MM, MIN_WOOD_BETWEEN_HOLES_MM};

impl Board {
    pub(super) fn validate(&self, origin: &str) -> Result<(), BoardError> {
        let bad = |key: &str, problem: String| BoardError::Invalid {
            origin: origin.to_string(),
            key: key.to_string(),
            problem,
        };
        // Every length: finite, at least MIN_LENGTH_MM, at most `max`.
        let within = |key: &str, v: f64, max: f64| -> Result<(), BoardError> {
            if v.is_finite() && (MIN_LENGTH_MM..=max).contains(&v) {
                Ok(())
            } else {
                Err(bad(key, format!("must be a length from {MIN_LENGTH_MM} to {max} mm, got {v}")))
            }
        };
        let positive = |key: &str, v: f64| within(key, v, MAX_HEIGHT_MM);
        let finite = |key: &str, v: f64| -> Result<(), BoardError> {
            if v.is_finite() {
                Ok(())
            } else {
                Err(bad(key, format!("must be a finite number, got {v}")))
            }
        };
        // A piece is smaller than the board it is played on.
        let piece = |key: &str, d: f64| -> Result<(), BoardError> {
            positive(key, d)?;
            if d >= self.surface.width_mm {
                return Err(bad(key, format!("a piece {d} mm across does not fit a board {} mm wide", self.surface.width_mm)));
            }
            Ok(())
        };
        let value = |key: &str, v: u32| -> Result<(), BoardError> {
            if v <= MAX_VALUE {
                Ok(())
            } else {
                Err(bad(key, format!("must be at most {MAX_VALUE} points, got {v}")))
            }
        };
        within("surface.width_mm", self.surface.width_mm, MAX_BOARD_WIDTH_MM)?;
        within("surface.length_mm", self.surface.length_mm, MAX_BOARD_LENGTH_MM)?;
        match &self.layout {
            Layout::Shuffleboard(s) => {
                positive("shuffleboard.line_width_mm", s.line_width_mm)?;
                piece("shuffleboard.weight_diameter_mm", s.weight_diameter_mm)?;
                positive("shuffleboard.weight_height_mm", s.weight_height_mm)?;
                validate_lines(&s.lines, self.surface.length_mm, s.line_width_mm, "shuffleboard", &bad)?;
                for (name, v) in &s.variants {
                    let key = format!("shuffleboard.variants.{name}");
                    within(&format!("{key}.length_mm"), v.length_mm, self.surface.length_mm)?;
                    validate_lines(&v.lines, v.length_mm, s.line_width_mm, &key, &bad)?;
                }
            }
            Layout::Sjoelbak(s) => {
                positive("sjoelbak.partition_width_mm", s.partition_width_mm)?;
                positive("sjoelbak.gate_opening_mm", s.gate_opening_mm)?;
                piece("sjoelbak.disc_diameter_mm", s.disc_diameter_mm)?;
                positive("sjoelbak.disc_thickness_mm", s.disc_thickness_mm)?;
                if !(s.gate_back_mm > 0.0 && s.gate_front_mm > s.gate_back_mm) {
                    return Err(bad(
                        "sjoelbak.gate_front_mm",
                        format!(
                            "must lie beyond gate_back_mm ({}) which must be positive, got {}",
                            s.gate_back_mm, s.gate_front_mm
                        ),
                    ));
                }
                if s.gate_front_mm >= self.surface.length_mm {
                    return Err(bad("sjoelbak.gate_front_mm", "lies off the board".into()));
                }
                if s.compartments.is_empty() || s.compartments.len() > MAX_TARGETS {
                    return Err(bad("sjoelbak.compartments", format!("needs 1 to {MAX_TARGETS} compartments, got {}", s.compartments.len())));
                }
                finite("sjoelbak.gate_back_mm", s.gate_back_mm)?;
                finite("sjoelbak.gate_front_mm", s.gate_front_mm)?;
                let half = self.surface.half_width();
                for (i, c) in s.compartments.iter().enumerate() {
                    value(&format!("sjoelbak.compartments[{i}].value"), c.value)?;
                    if !(c.x_mm.abs() < half) {
                        return Err(bad(&format!("sjoelbak.compartments[{i}].x_mm"), "lies off the board".into()));
                    }
                }
                for (i, w) in s.compartments.windows(2).enumerate() {
                    let gap = w[1].x_mm - w[0].x_mm;
                    if gap <= s.partition_width_mm + s.disc_diameter_mm {
                        return Err(bad(
                            &format!("sjoelbak.compartments[{}].x_mm", i + 1),
                            format!(
                                "must exceed the previous compartment's by more than a partition and a disc ({} mm), got {gap}",
                                s.partition_width_mm + s.disc_diameter_mm
                            ),
                        ));
                    }
                    let opening_edge = w[0].x_mm + s.gate_opening_mm / 2.0;
                    if opening_edge >= w[1].x_mm - s.gate_opening_mm / 2.0 {
                        return Err(bad("sjoelbak.gate_opening_mm", "gate openings overlap".into()));
                    }
                }
            }
            Layout::Washer(w) => {
                positive("washer.cup_depth_mm", w.cup_depth_mm)?;
                piece("washer.washer_outer_diameter_mm", w.washer_outer_diameter_mm)?;
                positive("washer.washer_inner_diameter_mm", w.washer_inner_diameter_mm)?;
                positive("washer.washer_thickness_mm", w.washer_thickness_mm)?;
                if w.washer_inner_diameter_mm >= w.washer_outer_diameter_mm {
                    return Err(bad(
                        "washer.washer_inner_diameter_mm",
                        "must be smaller than washer_outer_diameter_mm".into(),
                    ));
                }
                if w.holes.is_empty() || w.holes.len() > MAX_TARGETS {
                    return Err(bad("washer.holes", format!("needs 1 to {MAX_TARGETS} holes, got {}", w.holes.len())));
                }
                for (i, h) in w.holes.iter().enumerate() {
                    let key = format!("washer.holes[{i}]");
                    positive(&format!("{key}.diameter_mm"), h.diameter_mm)?;
                    value(&format!("{key}.value"), h.value)?;
                    if h.diameter_mm <= w.washer_outer_diameter_mm {
                        return Err(bad(
                            &format!("{key}.diameter_mm"),
                            "must be larger than the washer, or no washer could go in".into(),
                        ));
                    }
                    let inside = h.x_mm.abs() + h.radius() < self.surface.half_width()
                        && h.y_mm - h.radius() > 0.0
                        && h.y_mm + h.radius() < self.surface.length_mm;
                    if !inside {
                        return Err(bad(
                            &key,
                            format!("hole at ({}, {}) reaches off the board", h.x_mm, h.y_mm),
                        ));
                    }
                    for (j, g) in w.holes.iter().enumerate().take(i) {
                        let wood = h.centre().distance(g.centre()) - h.radius() - g.radius();
                        if wood < MIN_WOOD_BETWEEN_HOLES_MM {
                            return Err(bad(
                                &key,
                                format!(
                                    "overlaps hole {j} (rims {wood:.1} mm apart, need at least {MIN_WOOD_BETWEEN_HOLES_MM} mm)"
                                ),
                            ));
                        }
                    }
                }
            }
        }
        Ok(())
    }
}

fn validate_lines(
    l: &ShuffleLines,
    length: f64,
    line_width: f64,
    key: &str,
    bad: &dyn Fn(&str, String) -> BoardError,
) -> Result<(), BoardError> {
    let order = [
        ("trey_line_mm", l.trey_line_mm),
        ("deuce_line_mm", l.deuce_line_mm),
        ("long_foul_line_mm", l.long_foul_line_mm),
        ("short_foul_line_mm", l.short_foul_line_mm),
    ];
    let mut previous = 0.0;
    for (name, y) in order {
        // Foul lines may coincide (a single centre foul line on short tables).
        let coincide_ok = name == "short_foul_line_mm";
        if !(y.is_finite() && (y > previous || (coincide_ok && y >= previous))) {
            return Err(bad(
                &format!("{key}.{name}"),
                format!("must lie beyond the previous line at {previous} mm, got {y}"),
            ));
        }
        previous = y;
    }
    if l.short_foul_line_mm + line_width > length {
        return Err(bad(&format!("{key}.short_foul_line_mm"), format!("lies off the {length} mm surface")));
    }
    Ok(())
}

