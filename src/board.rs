//! Board models: the TOML board file, its validation, and the five built-in boards.
//!
//! The format is documented in `docs/board-format.md`. All lengths are board
//! millimetres in the one board frame (see [`crate::geom`]).

use crate::geom::BoardPoint;
use crate::piece::PieceKind;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The board-file format version this build reads and writes.
pub const FORMAT_VERSION: u32 = 1;

/// Two holes closer than this (rim to rim) are rejected: the wood between them
/// could not hold a cup wall. Real boards keep several centimetres.
pub const MIN_WOOD_BETWEEN_HOLES_MM: f64 = 5.0;

/// The longest playing surface accepted: 20 m. The longest regulation table (22 ft shuffleboard) is 6.7 m; beyond a
/// few times that a number is a typo (or an attack), and every stage sizes buffers by the board.
pub const MAX_BOARD_LENGTH_MM: f64 = 20_000.0;
/// The widest playing surface accepted: 2 m (a shuffleboard is ~0.5 m wide, a washer board or sjoelbak less).
pub const MAX_BOARD_WIDTH_MM: f64 = 2_000.0;
/// The deepest or tallest construction accepted (gutter, cup, stand, wall, a piece's height): 1 m.
pub const MAX_HEIGHT_MM: f64 = 1_000.0;
/// The smallest length accepted for any dimension: a tenth of a millimetre (below it a number is not a measurement).
pub const MIN_LENGTH_MM: f64 = 0.1;
/// At most this many holes or compartments (the largest real board, YOCU's 9-hole side, has 9).
pub const MAX_TARGETS: usize = 64;
/// The most points a hole or compartment may be worth (real boards: 1 to 5): keeps every score far from overflow.
pub const MAX_VALUE: u32 = 1_000;

/// The built-in boards, compiled into the binary from `calibration/boards/`.
pub const BUILTIN: [(&str, &str); 5] = [
    ("shuffleboard-22ft", include_str!("../calibration/boards/shuffleboard-22ft.toml")),
    ("sjoelbak", include_str!("../calibration/boards/sjoelbak.toml")),
    ("holeyboard", include_str!("../calibration/boards/holeyboard.toml")),
    ("yocu-4", include_str!("../calibration/boards/yocu-4.toml")),
    ("yocu-9", include_str!("../calibration/boards/yocu-9.toml")),
];

/// Everything that can be wrong with a board name or file.
#[derive(Debug, thiserror::Error)]
pub enum BoardError {
    #[error("unknown board `{name}`: not a built-in board ({known}) nor a readable file")]
    Unknown { name: String, known: String },
    #[error("cannot read board file {path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    #[error("board file {origin}: {message}")]
    Syntax { origin: String, message: String },
    #[error("board file {origin}: `{key}` {problem}")]
    Invalid { origin: String, key: String, problem: String },
    #[error("board `{board}` has no variant `{variant}` (known: {known})")]
    UnknownVariant { board: String, variant: String, known: String },
}

/// The family of a board: which calls and which games apply.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BoardKind {
    Shuffleboard,
    Sjoelbak,
    Washer,
}

/// The playing surface: a rectangle from `y = 0` (target end) to `y = length_mm`,
/// `x` from `-width_mm / 2` to `width_mm / 2`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Surface {
    pub width_mm: f64,
    pub length_mm: f64,
}

impl Surface {
    pub fn half_width(&self) -> f64 {
        self.width_mm / 2.0
    }

    /// Whether a point lies on the surface (edges included).
    pub fn contains(&self, p: BoardPoint) -> bool {
        p.x_mm.abs() <= self.half_width() && (0.0..=self.length_mm).contains(&p.y_mm)
    }
}

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
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Shuffleboard {
    pub line_width_mm: f64,
    #[serde(flatten)]
    pub lines: ShuffleLines,
    /// Width of the gutter ("alley") beside each long side and beyond each end.
    pub gutter_width_mm: f64,
    /// How far the gutter floor lies below the playing surface.
    pub gutter_depth_mm: f64,
    pub weight_diameter_mm: f64,
    pub weight_height_mm: f64,
    /// Shorter tables, by name (e.g. `12ft`); select with [`Board::with_variant`].
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub variants: BTreeMap<String, ShuffleVariant>,
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

/// Sjoelbak geometry.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Sjoelbak {
    /// Ordered by `x`, ascending; partitions stand midway between neighbours.
    pub compartments: Vec<Compartment>,
    pub partition_width_mm: f64,
    /// The gate bar occupies `gate_back_mm <= y <= gate_front_mm`.
    pub gate_back_mm: f64,
    pub gate_front_mm: f64,
    /// Width of each gate opening, centred on its compartment.
    pub gate_opening_mm: f64,
    pub wall_height_mm: f64,
    pub disc_diameter_mm: f64,
    pub disc_thickness_mm: f64,
}

impl Sjoelbak {
    /// The `x` of every partition's centre line, ascending.
    pub fn partitions(&self) -> Vec<f64> {
        self.compartments.windows(2).map(|w| (w[0].x_mm + w[1].x_mm) / 2.0).collect()
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
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WasherBoard {
    pub holes: Vec<Hole>,
    pub cup_depth_mm: f64,
    pub washer_outer_diameter_mm: f64,
    pub washer_inner_diameter_mm: f64,
    pub washer_thickness_mm: f64,
    /// How high the playing surface stands above the ground it lies on: where a
    /// washer that misses the board comes to rest (`z = -stand_height_mm`).
    #[serde(default = "default_stand_height")]
    pub stand_height_mm: f64,
}

/// A washer board's box frame, deep enough for its 76 mm cups (chosen: no source).
fn default_stand_height() -> f64 {
    100.0
}

/// The board file as written on disk.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct BoardFile {
    format: u32,
    name: String,
    kind: BoardKind,
    #[serde(default)]
    description: String,
    surface: Surface,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    shuffleboard: Option<Shuffleboard>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    sjoelbak: Option<Sjoelbak>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    washer: Option<WasherBoard>,
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

/// A validated board.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Board {
    pub name: String,
    pub description: String,
    /// The shorter-table variant in use, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub variant: Option<String>,
    pub surface: Surface,
    pub layout: Layout,
}

impl Board {
    /// A built-in board by name, or a board file by path. `NAME@VARIANT` selects a
    /// shuffleboard variant (e.g. `shuffleboard-22ft@12ft`).
    pub fn load(spec: &str) -> Result<Board, BoardError> {
        let (base, variant) = match spec.rsplit_once('@') {
            Some((b, v)) if !Path::new(spec).exists() => (b, Some(v)),
            _ => (spec, None),
        };
        let board = if let Some(text) = builtin_text(base) {
            Board::from_toml(text, &format!("built-in `{base}`"))?
        } else if Path::new(base).is_file() {
            Board::from_path(Path::new(base))?
        } else {
            return Err(BoardError::Unknown {
                name: base.to_string(),
                known: BUILTIN.iter().map(|(n, _)| *n).collect::<Vec<_>>().join(", "),
            });
        };
        match variant {
            Some(v) => board.with_variant(v),
            None => Ok(board),
        }
    }

    /// Reads and validates a board file.
    pub fn from_path(path: &Path) -> Result<Board, BoardError> {
        let text = std::fs::read_to_string(path)
            .map_err(|source| BoardError::Io { path: path.to_path_buf(), source })?;
        Board::from_toml(&text, &path.display().to_string())
    }

    /// Parses and validates board-file text; `origin` names it in error messages.
    pub fn from_toml(text: &str, origin: &str) -> Result<Board, BoardError> {
        let syntax = |e: toml::de::Error| BoardError::Syntax { origin: origin.to_string(), message: e.to_string() };
        check_shuffleboard_keys(&toml::from_str::<toml::Table>(text).map_err(syntax)?, origin)?;
        let file: BoardFile = toml::from_str(text).map_err(syntax)?;
        let board = file.into_board(origin)?;
        board.validate(origin)?;
        Ok(board)
    }

    /// The board as board-file TOML (round-trips through [`Board::from_toml`]).
    pub fn to_toml(&self) -> String {
        let (mut shuffleboard, mut sjoelbak, mut washer) = (None, None, None);
        let kind = match &self.layout {
            Layout::Shuffleboard(s) => {
                shuffleboard = Some(s.clone());
                BoardKind::Shuffleboard
            }
            Layout::Sjoelbak(s) => {
                sjoelbak = Some(s.clone());
                BoardKind::Sjoelbak
            }
            Layout::Washer(w) => {
                washer = Some(w.clone());
                BoardKind::Washer
            }
        };
        let file = BoardFile {
            format: FORMAT_VERSION,
            name: self.name.clone(),
            kind,
            description: self.description.clone(),
            surface: self.surface,
            shuffleboard,
            sjoelbak,
            washer,
        };
        toml::to_string_pretty(&file).expect("a board always serialises")
    }

    /// The pieces played on this board: their kind and size.
    pub fn piece(&self) -> PieceSize {
        match &self.layout {
            Layout::Shuffleboard(s) => {
                PieceSize { kind: PieceKind::Weight, radius_mm: s.weight_diameter_mm / 2.0, thickness_mm: s.weight_height_mm }
            }
            Layout::Sjoelbak(s) => {
                PieceSize { kind: PieceKind::Disc, radius_mm: s.disc_diameter_mm / 2.0, thickness_mm: s.disc_thickness_mm }
            }
            Layout::Washer(w) => PieceSize {
                kind: PieceKind::Washer,
                radius_mm: w.washer_outer_diameter_mm / 2.0,
                thickness_mm: w.washer_thickness_mm,
            },
        }
    }

    pub fn kind(&self) -> BoardKind {
        match self.layout {
            Layout::Shuffleboard(_) => BoardKind::Shuffleboard,
            Layout::Sjoelbak(_) => BoardKind::Sjoelbak,
            Layout::Washer(_) => BoardKind::Washer,
        }
    }

    pub fn shuffleboard(&self) -> Option<&Shuffleboard> {
        match &self.layout {
            Layout::Shuffleboard(s) => Some(s),
            _ => None,
        }
    }

    pub fn sjoelbak(&self) -> Option<&Sjoelbak> {
        match &self.layout {
            Layout::Sjoelbak(s) => Some(s),
            _ => None,
        }
    }

    pub fn washer(&self) -> Option<&WasherBoard> {
        match &self.layout {
            Layout::Washer(w) => Some(w),
            _ => None,
        }
    }

    /// The same board with a shorter-table variant's length and lines.
    pub fn with_variant(&self, variant: &str) -> Result<Board, BoardError> {
        let unknown = |known: String| BoardError::UnknownVariant {
            board: self.name.clone(),
            variant: variant.to_string(),
            known,
        };
        let Layout::Shuffleboard(s) = &self.layout else {
            return Err(unknown("none: only shuffleboards have variants".into()));
        };
        let v = s
            .variants
            .get(variant)
            .ok_or_else(|| unknown(s.variants.keys().cloned().collect::<Vec<_>>().join(", ")))?;
        let mut out = self.clone();
        out.variant = Some(variant.to_string());
        out.surface.length_mm = v.length_mm;
        if let Layout::Shuffleboard(s) = &mut out.layout {
            s.lines = v.lines;
        }
        Ok(out)
    }

    fn validate(&self, origin: &str) -> Result<(), BoardError> {
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
                positive("shuffleboard.gutter_width_mm", s.gutter_width_mm)?;
                positive("shuffleboard.gutter_depth_mm", s.gutter_depth_mm)?;
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
                positive("sjoelbak.wall_height_mm", s.wall_height_mm)?;
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
                positive("washer.stand_height_mm", w.stand_height_mm)?;
                if !(w.stand_height_mm >= w.cup_depth_mm) {
                    return Err(bad(
                        "washer.stand_height_mm",
                        format!("must be at least the cup depth ({} mm), got {}", w.cup_depth_mm, w.stand_height_mm),
                    ));
                }
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

impl BoardFile {
    fn into_board(self, origin: &str) -> Result<Board, BoardError> {
        let bad = |key: &str, problem: &str| BoardError::Invalid {
            origin: origin.to_string(),
            key: key.to_string(),
            problem: problem.to_string(),
        };
        if self.format != FORMAT_VERSION {
            return Err(bad("format", &format!("is {}, this build reads format {FORMAT_VERSION}", self.format)));
        }
        let sections =
            [("shuffleboard", self.shuffleboard.is_some()), ("sjoelbak", self.sjoelbak.is_some()), ("washer", self.washer.is_some())];
        let wanted = match self.kind {
            BoardKind::Shuffleboard => "shuffleboard",
            BoardKind::Sjoelbak => "sjoelbak",
            BoardKind::Washer => "washer",
        };
        for (name, present) in sections {
            if present && name != wanted {
                return Err(bad(name, &format!("section does not belong on a board of kind `{wanted}`")));
            }
        }
        let layout = match self.kind {
            BoardKind::Shuffleboard => Layout::Shuffleboard(
                self.shuffleboard.ok_or_else(|| bad("shuffleboard", "section is missing"))?,
            ),
            BoardKind::Sjoelbak => {
                let mut s = self.sjoelbak.ok_or_else(|| bad("sjoelbak", "section is missing"))?;
                s.compartments.sort_by(|a, b| a.x_mm.total_cmp(&b.x_mm));
                Layout::Sjoelbak(s)
            }
            BoardKind::Washer => Layout::Washer(self.washer.ok_or_else(|| bad("washer", "section is missing"))?),
        };
        Ok(Board { name: self.name, description: self.description, variant: None, surface: self.surface, layout })
    }
}

/// The `[shuffleboard]` section and its variants take their line positions flattened in, where serde cannot name an
/// unknown key (a misspelt `trey_lin_mm` would be reported as a missing `trey_line_mm`): their keys are checked here.
fn check_shuffleboard_keys(file: &toml::Table, origin: &str) -> Result<(), BoardError> {
    const LINES: [&str; 4] = ["trey_line_mm", "deuce_line_mm", "long_foul_line_mm", "short_foul_line_mm"];
    const OWN: [&str; 7] =
        ["line_width_mm", "gutter_width_mm", "gutter_depth_mm", "weight_diameter_mm", "weight_height_mm", "variants", "length_mm"];
    let unknown = |key: String, known: &[&str]| BoardError::Invalid {
        origin: origin.to_string(),
        key,
        problem: format!("is not a known key (known: {})", known.join(", ")),
    };
    let Some(toml::Value::Table(section)) = file.get("shuffleboard") else { return Ok(()) };
    let known: Vec<&str> = LINES.iter().chain(&OWN[..6]).copied().collect();
    if let Some(k) = section.keys().find(|k| !known.contains(&k.as_str())) {
        return Err(unknown(format!("shuffleboard.{k}"), &known));
    }
    if let Some(toml::Value::Table(variants)) = section.get("variants") {
        let known: Vec<&str> = LINES.iter().chain(&OWN[6..]).copied().collect();
        for (name, v) in variants {
            if let toml::Value::Table(v) = v {
                if let Some(k) = v.keys().find(|k| !known.contains(&k.as_str())) {
                    return Err(unknown(format!("shuffleboard.variants.{name}.{k}"), &known));
                }
            }
        }
    }
    Ok(())
}

fn builtin_text(name: &str) -> Option<&'static str> {
    BUILTIN.iter().find(|(n, _)| *n == name).map(|(_, t)| *t)
}

/// Every built-in board, validated.
pub fn builtins() -> Vec<Board> {
    BUILTIN
        .iter()
        .map(|(name, text)| {
            Board::from_toml(text, &format!("built-in `{name}`")).expect("built-in boards are valid (tested)")
        })
        .collect()
}

#[cfg(test)]
mod tests {
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
            ("gutter_depth_mm = 38.1", "gutter_depth_mm = 5e3", "shuffleboard.gutter_depth_mm"),
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
}
