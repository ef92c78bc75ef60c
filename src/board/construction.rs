//! The board's construction: what its maker chose and the rules leave open (gutter
//! width and depth, rails, walls, the gate bar's build, how far below the surface the
//! floor lies), per layout, with the nominal values every built-in board uses.
//!
//! A board file's optional `[construction]` section, and a scene's `construction`
//! override, are a [`ConstructionKeys`]: any subset of the keys of the board's kind,
//! applied over what the board already has ([`Construction::apply`]).

use super::{BoardError, BoardKind, MAX_HEIGHT_MM, MIN_LENGTH_MM};
use serde::{Deserialize, Serialize};

/// Nominal shuffleboard gutter ("alley") width beside the long sides and beyond the ends: 3 in (chosen: no source).
pub const NOMINAL_GUTTER_WIDTH_MM: f64 = 76.2;
/// Nominal depth of the gutter floor below the playing surface: 1.5 in (chosen: no source).
pub const NOMINAL_GUTTER_DEPTH_MM: f64 = 38.1;
/// The depths a shuffleboard's gutter floor is built at, from a shallow trough to a deep one (tables sold and
/// home-built: 10-120 mm below the surface): where a table's own is measured (locate, a weight in the gutter).
pub const GUTTER_DEPTH_RANGE_MM: (f64, f64) = (10.0, 120.0);
/// Nominal shuffleboard rail width beyond the gutters (chosen: no source).
pub const NOMINAL_RAIL_WIDTH_MM: f64 = 70.0;
/// Nominal height of the rails' tops above the playing surface (chosen: no source).
pub const NOMINAL_RAIL_HEIGHT_MM: f64 = 20.0;
/// Nominal depth of the table's body (surface slab, gutter trough, rails) below the surface (chosen: no source).
pub const NOMINAL_TABLE_DEPTH_MM: f64 = 120.0;
/// Nominal room floor below a shuffleboard's surface: a typical 30 in table height.
pub const NOMINAL_SHUFFLE_FLOOR_DEPTH_MM: f64 = 760.0;
/// Nominal sjoelbak wall height above the playing surface (chosen: no source).
pub const NOMINAL_WALL_HEIGHT_MM: f64 = 50.0;
/// Nominal sjoelbak wall thickness (chosen: no source).
pub const NOMINAL_WALL_THICKNESS_MM: f64 = 15.0;
/// Nominal thickness of the sjoelbak's floor board, the playing surface's slab (chosen: no source).
pub const NOMINAL_FLOOR_BOARD_THICKNESS_MM: f64 = 20.0;
/// Nominal height of the low partitions between compartments, that a disc can come to rest on (chosen: no source).
pub const NOMINAL_PARTITION_HEIGHT_MM: f64 = 20.0;
/// Nominal height of the tunnels under a bridged gate bar: a disc (13 mm) passes with room (chosen: no source).
pub const NOMINAL_GATE_TUNNEL_HEIGHT_MM: f64 = 30.0;
/// Nominal washer-board box frame: the surface stands this high above the ground, deep enough for 76 mm cups
/// (chosen: no source).
pub const NOMINAL_STAND_HEIGHT_MM: f64 = 100.0;

/// How a sjoelbak's gate bar is built.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GateBar {
    /// Separate blocks between the openings, as high as the walls: the openings are open full height.
    #[default]
    Blocks,
    /// One bar spanning the whole width at the walls' height, the openings tunnels under it
    /// `gate_tunnel_height_mm` high.
    Bridged,
}

/// A table shuffleboard's construction.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ShuffleboardConstruction {
    /// Width of the gutter beside each long side and beyond each end.
    pub gutter_width_mm: f64,
    /// How far the gutter floor lies below the playing surface.
    pub gutter_depth_mm: f64,
    /// Width of the rails beyond the gutters.
    pub rail_width_mm: f64,
    /// Height of the rails' tops above the playing surface.
    pub rail_height_mm: f64,
    /// How far the table's body (surface slab, gutter trough, rails) reaches below the surface.
    pub table_depth_mm: f64,
    /// How far below the playing surface the room floor lies.
    pub floor_depth_mm: f64,
}

impl Default for ShuffleboardConstruction {
    fn default() -> Self {
        ShuffleboardConstruction {
            gutter_width_mm: NOMINAL_GUTTER_WIDTH_MM,
            gutter_depth_mm: NOMINAL_GUTTER_DEPTH_MM,
            rail_width_mm: NOMINAL_RAIL_WIDTH_MM,
            rail_height_mm: NOMINAL_RAIL_HEIGHT_MM,
            table_depth_mm: NOMINAL_TABLE_DEPTH_MM,
            floor_depth_mm: NOMINAL_SHUFFLE_FLOOR_DEPTH_MM,
        }
    }
}

/// A sjoelbak's construction.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SjoelbakConstruction {
    /// Height of the side and back walls above the playing surface (and of the gate bar).
    pub wall_height_mm: f64,
    pub wall_thickness_mm: f64,
    /// Thickness of the floor board whose top is the playing surface.
    pub floor_board_thickness_mm: f64,
    /// Height of the partitions between compartments.
    pub partition_height_mm: f64,
    pub gate_bar: GateBar,
    /// Height of the tunnels under a [`GateBar::Bridged`] bar (unused with [`GateBar::Blocks`]).
    pub gate_tunnel_height_mm: f64,
    /// How far below the playing surface the floor (or table) the sjoelbak stands on lies:
    /// the floor board's thickness when it lies flat, more on feet or trestles.
    pub floor_depth_mm: f64,
}

impl Default for SjoelbakConstruction {
    fn default() -> Self {
        SjoelbakConstruction {
            wall_height_mm: NOMINAL_WALL_HEIGHT_MM,
            wall_thickness_mm: NOMINAL_WALL_THICKNESS_MM,
            floor_board_thickness_mm: NOMINAL_FLOOR_BOARD_THICKNESS_MM,
            partition_height_mm: NOMINAL_PARTITION_HEIGHT_MM,
            gate_bar: GateBar::Blocks,
            gate_tunnel_height_mm: NOMINAL_GATE_TUNNEL_HEIGHT_MM,
            floor_depth_mm: NOMINAL_FLOOR_BOARD_THICKNESS_MM,
        }
    }
}

/// A washer board's construction: a closed box standing on the ground.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WasherConstruction {
    /// How high the playing surface stands above the ground it lies on: the box's depth, and
    /// where a washer that misses the board comes to rest (`z = -stand_height_mm`).
    pub stand_height_mm: f64,
}

impl Default for WasherConstruction {
    fn default() -> Self {
        WasherConstruction { stand_height_mm: NOMINAL_STAND_HEIGHT_MM }
    }
}

/// A board's construction, by family (the same family as its layout).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum Construction {
    Shuffleboard(ShuffleboardConstruction),
    Sjoelbak(SjoelbakConstruction),
    Washer(WasherConstruction),
}

/// Some of a construction's keys, as a board file's `[construction]` section or a scene's
/// `construction` override gives them: each present key replaces the value it names.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConstructionKeys {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gutter_width_mm: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gutter_depth_mm: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rail_width_mm: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rail_height_mm: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub table_depth_mm: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wall_height_mm: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wall_thickness_mm: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub floor_board_thickness_mm: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partition_height_mm: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gate_bar: Option<GateBar>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gate_tunnel_height_mm: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stand_height_mm: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub floor_depth_mm: Option<f64>,
}

/// The keys of each kind's construction, as named in files.
const SHUFFLEBOARD_KEYS: [&str; 6] =
    ["gutter_width_mm", "gutter_depth_mm", "rail_width_mm", "rail_height_mm", "table_depth_mm", "floor_depth_mm"];
const SJOELBAK_KEYS: [&str; 7] = [
    "wall_height_mm",
    "wall_thickness_mm",
    "floor_board_thickness_mm",
    "partition_height_mm",
    "gate_bar",
    "gate_tunnel_height_mm",
    "floor_depth_mm",
];
const WASHER_KEYS: [&str; 1] = ["stand_height_mm"];

impl ConstructionKeys {
    /// The keys that are present, by name.
    pub(super) fn present(&self) -> Vec<&'static str> {
        let numbers = [
            ("gutter_width_mm", self.gutter_width_mm),
            ("gutter_depth_mm", self.gutter_depth_mm),
            ("rail_width_mm", self.rail_width_mm),
            ("rail_height_mm", self.rail_height_mm),
            ("table_depth_mm", self.table_depth_mm),
            ("wall_height_mm", self.wall_height_mm),
            ("wall_thickness_mm", self.wall_thickness_mm),
            ("floor_board_thickness_mm", self.floor_board_thickness_mm),
            ("partition_height_mm", self.partition_height_mm),
            ("gate_tunnel_height_mm", self.gate_tunnel_height_mm),
            ("stand_height_mm", self.stand_height_mm),
            ("floor_depth_mm", self.floor_depth_mm),
        ];
        let mut out: Vec<&'static str> = numbers.iter().filter(|(_, v)| v.is_some()).map(|(k, _)| *k).collect();
        if self.gate_bar.is_some() {
            out.push("gate_bar");
        }
        out
    }

    /// Every key of `c`, so that applying the result to any construction of its kind gives `c`.
    pub fn of(c: &Construction) -> ConstructionKeys {
        match *c {
            Construction::Shuffleboard(s) => ConstructionKeys {
                gutter_width_mm: Some(s.gutter_width_mm),
                gutter_depth_mm: Some(s.gutter_depth_mm),
                rail_width_mm: Some(s.rail_width_mm),
                rail_height_mm: Some(s.rail_height_mm),
                table_depth_mm: Some(s.table_depth_mm),
                floor_depth_mm: Some(s.floor_depth_mm),
                ..Default::default()
            },
            Construction::Sjoelbak(s) => ConstructionKeys {
                wall_height_mm: Some(s.wall_height_mm),
                wall_thickness_mm: Some(s.wall_thickness_mm),
                floor_board_thickness_mm: Some(s.floor_board_thickness_mm),
                partition_height_mm: Some(s.partition_height_mm),
                gate_bar: Some(s.gate_bar),
                gate_tunnel_height_mm: Some(s.gate_tunnel_height_mm),
                floor_depth_mm: Some(s.floor_depth_mm),
                ..Default::default()
            },
            Construction::Washer(w) => {
                ConstructionKeys { stand_height_mm: Some(w.stand_height_mm), ..Default::default() }
            }
        }
    }
}

/// What is wrong with a construction: the key (as named in a file, without its section) and the problem.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("`{key}` {problem}")]
pub struct ConstructionProblem {
    pub key: String,
    pub problem: String,
}

impl Construction {
    /// The nominal construction of a board of `kind`: what the built-in boards use.
    pub fn nominal(kind: BoardKind) -> Construction {
        match kind {
            BoardKind::Shuffleboard => Construction::Shuffleboard(ShuffleboardConstruction::default()),
            BoardKind::Sjoelbak => Construction::Sjoelbak(SjoelbakConstruction::default()),
            BoardKind::Washer => Construction::Washer(WasherConstruction::default()),
        }
    }

    pub fn kind(&self) -> BoardKind {
        match self {
            Construction::Shuffleboard(_) => BoardKind::Shuffleboard,
            Construction::Sjoelbak(_) => BoardKind::Sjoelbak,
            Construction::Washer(_) => BoardKind::Washer,
        }
    }

    /// The keys a construction of this kind has, as named in files.
    pub fn keys(kind: BoardKind) -> &'static [&'static str] {
        match kind {
            BoardKind::Shuffleboard => &SHUFFLEBOARD_KEYS,
            BoardKind::Sjoelbak => &SJOELBAK_KEYS,
            BoardKind::Washer => &WASHER_KEYS,
        }
    }

    /// This construction with the present `keys` replacing its values; a key that belongs to
    /// another kind of board is refused, naming it. The result is not yet validated
    /// (see [`Construction::check`]).
    pub fn apply(&self, keys: &ConstructionKeys) -> Result<Construction, ConstructionProblem> {
        let known = Construction::keys(self.kind());
        if let Some(k) = keys.present().into_iter().find(|k| !known.contains(k)) {
            return Err(ConstructionProblem {
                key: k.to_string(),
                problem: format!("is not a construction key of a {} board (known: {})", self.kind().name(), known.join(", ")),
            });
        }
        let pick = |v: Option<f64>, old: f64| v.unwrap_or(old);
        Ok(match *self {
            Construction::Shuffleboard(s) => Construction::Shuffleboard(ShuffleboardConstruction {
                gutter_width_mm: pick(keys.gutter_width_mm, s.gutter_width_mm),
                gutter_depth_mm: pick(keys.gutter_depth_mm, s.gutter_depth_mm),
                rail_width_mm: pick(keys.rail_width_mm, s.rail_width_mm),
                rail_height_mm: pick(keys.rail_height_mm, s.rail_height_mm),
                table_depth_mm: pick(keys.table_depth_mm, s.table_depth_mm),
                floor_depth_mm: pick(keys.floor_depth_mm, s.floor_depth_mm),
            }),
            Construction::Sjoelbak(s) => Construction::Sjoelbak(SjoelbakConstruction {
                wall_height_mm: pick(keys.wall_height_mm, s.wall_height_mm),
                wall_thickness_mm: pick(keys.wall_thickness_mm, s.wall_thickness_mm),
                floor_board_thickness_mm: pick(keys.floor_board_thickness_mm, s.floor_board_thickness_mm),
                partition_height_mm: pick(keys.partition_height_mm, s.partition_height_mm),
                gate_bar: keys.gate_bar.unwrap_or(s.gate_bar),
                gate_tunnel_height_mm: pick(keys.gate_tunnel_height_mm, s.gate_tunnel_height_mm),
                floor_depth_mm: pick(keys.floor_depth_mm, s.floor_depth_mm),
            }),
            Construction::Washer(w) => {
                Construction::Washer(WasherConstruction { stand_height_mm: pick(keys.stand_height_mm, w.stand_height_mm) })
            }
        })
    }

    /// Whether the construction can be built: every length from [`MIN_LENGTH_MM`] to
    /// [`MAX_HEIGHT_MM`], and the parts in a buildable order (a gutter floor above the
    /// table's underside, the floor below it; partitions no higher than the walls; a
    /// bridged bar's tunnels tall enough for a disc of `disc_thickness_mm` and under the bar).
    /// `cup_depth_mm` is a washer board's cup depth (its box must hold the cups).
    pub fn check(&self, disc_thickness_mm: Option<f64>, cup_depth_mm: Option<f64>) -> Result<(), ConstructionProblem> {
        let bad = |key: &str, problem: String| ConstructionProblem { key: key.to_string(), problem };
        let length = |key: &str, v: f64| -> Result<(), ConstructionProblem> {
            if v.is_finite() && (MIN_LENGTH_MM..=MAX_HEIGHT_MM).contains(&v) {
                Ok(())
            } else {
                Err(bad(key, format!("must be a length from {MIN_LENGTH_MM} to {MAX_HEIGHT_MM} mm, got {v}")))
            }
        };
        match *self {
            Construction::Shuffleboard(s) => {
                length("gutter_width_mm", s.gutter_width_mm)?;
                length("gutter_depth_mm", s.gutter_depth_mm)?;
                length("rail_width_mm", s.rail_width_mm)?;
                length("rail_height_mm", s.rail_height_mm)?;
                length("table_depth_mm", s.table_depth_mm)?;
                length("floor_depth_mm", s.floor_depth_mm)?;
                if s.gutter_depth_mm >= s.table_depth_mm {
                    return Err(bad(
                        "gutter_depth_mm",
                        format!("must be less than the table's depth ({} mm), got {}", s.table_depth_mm, s.gutter_depth_mm),
                    ));
                }
                if s.floor_depth_mm < s.table_depth_mm {
                    return Err(bad(
                        "floor_depth_mm",
                        format!("must be at least the table's depth ({} mm), got {}", s.table_depth_mm, s.floor_depth_mm),
                    ));
                }
            }
            Construction::Sjoelbak(s) => {
                length("wall_height_mm", s.wall_height_mm)?;
                length("wall_thickness_mm", s.wall_thickness_mm)?;
                length("floor_board_thickness_mm", s.floor_board_thickness_mm)?;
                length("partition_height_mm", s.partition_height_mm)?;
                length("gate_tunnel_height_mm", s.gate_tunnel_height_mm)?;
                length("floor_depth_mm", s.floor_depth_mm)?;
                if s.partition_height_mm > s.wall_height_mm {
                    return Err(bad(
                        "partition_height_mm",
                        format!("must be at most the walls' height ({} mm), got {}", s.wall_height_mm, s.partition_height_mm),
                    ));
                }
                if s.floor_depth_mm < s.floor_board_thickness_mm {
                    return Err(bad(
                        "floor_depth_mm",
                        format!(
                            "must be at least the floor board's thickness ({} mm), got {}",
                            s.floor_board_thickness_mm, s.floor_depth_mm
                        ),
                    ));
                }
                if s.gate_bar == GateBar::Bridged {
                    if s.gate_tunnel_height_mm >= s.wall_height_mm {
                        return Err(bad(
                            "gate_tunnel_height_mm",
                            format!("must be below the bar's top ({} mm, the walls' height), got {}", s.wall_height_mm, s.gate_tunnel_height_mm),
                        ));
                    }
                    if let Some(disc) = disc_thickness_mm {
                        if s.gate_tunnel_height_mm <= disc {
                            return Err(bad(
                                "gate_tunnel_height_mm",
                                format!("must exceed a disc's thickness ({disc} mm), or no disc could pass, got {}", s.gate_tunnel_height_mm),
                            ));
                        }
                    }
                }
            }
            Construction::Washer(w) => {
                length("stand_height_mm", w.stand_height_mm)?;
                if let Some(cup) = cup_depth_mm {
                    if !(w.stand_height_mm >= cup) {
                        return Err(bad("stand_height_mm", format!("must be at least the cup depth ({cup} mm), got {}", w.stand_height_mm)));
                    }
                }
            }
        }
        Ok(())
    }
}

impl ConstructionProblem {
    /// The same problem as a board error, the key in the section `section` of the file `origin`.
    pub fn in_file(self, origin: &str, section: &str) -> BoardError {
        BoardError::Invalid { origin: origin.to_string(), key: format!("{section}.{}", self.key), problem: self.problem }
    }
}
