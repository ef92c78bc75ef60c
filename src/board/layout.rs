//! The board's layout by family: what the rules fix (surface lines, holes, compartments,
//! gate, pieces), each with the construction its maker chose around it.

use super::construction::{ShuffleboardConstruction, SjoelbakConstruction, WasherConstruction};
use crate::geom::BoardPoint;
use crate::piece::PieceKind;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The lines of a table shuffleboard. Each value is the `y` of a stripe's edge
/// nearer the target end; the stripe extends `line_width_mm` away from the target.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ShuffleLines {
    pub trey_line_mm: f64,
    pub deuce_line_mm: f64,
    pub long_foul_line_mm: f64,
    pub short_foul_line_mm: f64,
}

/// A shorter table (9 to 16 ft) described in the same file.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ShuffleVariant {
    pub length_mm: f64,
    #[serde(flatten)]
    pub lines: ShuffleLines,
}

/// Table shuffleboard geometry.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Shuffleboard {
    pub line_width_mm: f64,
    #[serde(flatten)]
    pub lines: ShuffleLines,
    pub weight_diameter_mm: f64,
    pub weight_height_mm: f64,
    /// Shorter tables, by name (e.g. `12ft`); select with [`super::Board::with_variant`].
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub variants: BTreeMap<String, ShuffleVariant>,
    /// Gutters, rails, the table's body and the floor below.
    pub construction: ShuffleboardConstruction,
}

/// One compartment of a sjoelbak.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Compartment {
    /// Centre of the compartment across the board.
    pub x_mm: f64,
    /// Points for a disc in it.
    pub value: u32,
}

/// The gate bar's face a disc must have passed entirely to count (rule 003 says "the front side of the gate bar",
/// which readers take either way).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GateFace {
    /// The player-side face (`gate_front_mm`): a disc under the bar that does not reach it counts, as a gate
    /// stopper shoved along that face would not move it (the reference board's reading, boards.md).
    #[default]
    Front,
    /// The compartment-side face (`gate_back_mm`): only a disc wholly past the bar, into its compartment, counts
    /// ("completely through the gate").
    Back,
}

/// Sjoelbak geometry.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Sjoelbak {
    /// Ordered by `x`, ascending; partitions stand midway between neighbours.
    pub compartments: Vec<Compartment>,
    pub partition_width_mm: f64,
    /// The gate bar occupies `gate_back_mm <= y <= gate_front_mm`.
    pub gate_back_mm: f64,
    pub gate_front_mm: f64,
    /// Width of each gate opening, centred on its compartment.
    pub gate_opening_mm: f64,
    /// The face a disc must have passed entirely to count.
    pub counts_past: GateFace,
    pub disc_diameter_mm: f64,
    pub disc_thickness_mm: f64,
    /// Walls, floor board, partitions' height, the gate bar's build, the floor below.
    pub construction: SjoelbakConstruction,
}

impl Sjoelbak {
    /// The `y` of the face a disc must have passed entirely to count ([`Sjoelbak::counts_past`]).
    pub fn counting_face_mm(&self) -> f64 {
        match self.counts_past {
            GateFace::Front => self.gate_front_mm,
            GateFace::Back => self.gate_back_mm,
        }
    }

    /// The `x` of every partition's centre line, ascending.
    pub fn partitions(&self) -> Vec<f64> {
        self.compartments.windows(2).map(|w| (w[0].x_mm + w[1].x_mm) / 2.0).collect()
    }

    /// The gate openings' edges across the board, `(left, right)` per compartment, ascending.
    pub fn openings(&self) -> Vec<(f64, f64)> {
        self.compartments.iter().map(|c| (c.x_mm - self.gate_opening_mm / 2.0, c.x_mm + self.gate_opening_mm / 2.0)).collect()
    }
}

/// One hole of a washer board.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Hole {
    pub x_mm: f64,
    pub y_mm: f64,
    pub diameter_mm: f64,
    pub value: u32,
}

impl Hole {
    pub fn centre(&self) -> BoardPoint {
        BoardPoint::new(self.x_mm, self.y_mm)
    }
    pub fn radius(&self) -> f64 {
        self.diameter_mm / 2.0
    }
}

/// Washer-board geometry.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WasherBoard {
    pub holes: Vec<Hole>,
    pub cup_depth_mm: f64,
    pub washer_outer_diameter_mm: f64,
    pub washer_inner_diameter_mm: f64,
    pub washer_thickness_mm: f64,
    /// The box and the ground it stands on.
    pub construction: WasherConstruction,
}

/// Angular steps a rim's arc is scanned in for where a propped washer's edge
/// crosses it, before bisection: a degree, finer than any crossing a washer
/// smaller than its hole makes can hide between two steps.
const RIM_SCAN_STEP_DEG: f64 = 1.0;
/// Bisection halvings of that step: 2^-30 of a degree, far below a micron on
/// any rim.
const RIM_BISECTIONS: usize = 30;

impl WasherBoard {
    /// The hole whose rim encloses a point (in plan), if any.
    pub fn hole_enclosing(&self, p: BoardPoint) -> Option<usize> {
        self.holes.iter().position(|h| p.distance(h.centre()) < h.radius())
    }

    /// The height (mm, board frame) of the centre (mid-thickness) of a washer
    /// propped on the rim of `hole`, tilted by `tilt_deg` and rising away from
    /// the hole's centre, its centre `d_mm` from it (in plan) along the rise.
    ///
    /// The washer rests where its underside first meets the rim: over the
    /// rim's arc under the washer, the underside is lowest at the arc's ends,
    /// where the washer's edge crosses the rim (it bridges the rim there, not
    /// along the rise, where its underside stands highest over it). Only a
    /// washer whose edge just reaches the rim rests on it along the rise. A
    /// washer whose edge does not reach the rim rests on nothing there: the
    /// height returned is then that of one touching the rim along the rise.
    pub fn propped_centre_z(&self, hole: &Hole, d_mm: f64, tilt_deg: f64) -> f64 {
        let (r, th) = (self.washer_outer_diameter_mm / 2.0, self.washer_thickness_mm);
        let (rim, t) = (hole.radius(), tilt_deg.to_radians());
        // The underside's own centre lies past the mid-thickness one along the rise.
        let shift = th / 2.0 * t.sin();
        // In plan the underside's edge is an ellipse: r cos(tilt) along the rise, r across it.
        let outside = |theta: f64| {
            let (along, across) = (rim * theta.cos() - d_mm - shift, rim * theta.sin());
            (along / (r * t.cos())).powi(2) + (across / r).powi(2) > 1.0
        };
        // The arc's end: the first angle from the rise whose rim point lies outside the washer.
        let step = RIM_SCAN_STEP_DEG.to_radians();
        let mut end = 0.0;
        if !outside(0.0) {
            let mut lo = 0.0;
            while lo + step <= std::f64::consts::PI && !outside(lo + step) {
                lo += step;
            }
            let mut hi = (lo + step).min(std::f64::consts::PI);
            for _ in 0..RIM_BISECTIONS {
                let mid = (lo + hi) / 2.0;
                if outside(mid) {
                    hi = mid;
                } else {
                    lo = mid;
                }
            }
            end = lo;
        }
        // The underside rises along the rise by tan(tilt) per mm; it meets the rim at the arc's end.
        let under = -(rim * end.cos() - d_mm) * t.tan();
        under + th / 2.0 / t.cos()
    }
}

/// A board's layout, by family.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Layout {
    Shuffleboard(Shuffleboard),
    Sjoelbak(Sjoelbak),
    Washer(WasherBoard),
}

/// The kind and size of the pieces a board is played with.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct PieceSize {
    pub kind: PieceKind,
    /// Outer radius of the footprint.
    pub radius_mm: f64,
    /// Height of a piece lying flat (its top face above what it rests on).
    pub thickness_mm: f64,
}
