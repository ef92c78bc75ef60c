//! Board models: the layout the rules fix, the construction its maker chose, the 3D
//! solids built from both, the TOML board file, its validation, and the five built-in boards.
//!
//! The format is documented in `docs/board-format.md`. All lengths are board
//! millimetres in the one board frame (see [`crate::geom`]).
//!
//! - [`layout`]: lines, holes, compartments, gate, pieces ([`Layout`]);
//! - [`construction`]: gutters, rails, walls, the gate bar's build, the floor ([`Construction`]);
//! - [`solids`]: the board's solids as boxes, cups and a floor ([`Solids`]);
//! - `file`: the TOML file; `validate`: its limits.

pub mod construction;
mod file;
pub mod layout;
pub mod solids;
mod validate;

pub use construction::{
    Construction, ConstructionKeys, GUTTER_DEPTH_RANGE_MM, ConstructionProblem, GateBar, ShuffleboardConstruction, SjoelbakConstruction, WasherConstruction,
};
pub use layout::{Compartment, GateFace, Hole, Layout, PieceSize, ShuffleLines, ShuffleVariant, Shuffleboard, Sjoelbak, WasherBoard};
pub use solids::{Cup, Part, ShapedBy, SolidBox, Solids};

use crate::geom::{BoardPoint, BoardPoint3};
use crate::piece::PieceKind;
use serde::{Deserialize, Serialize};
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
    ("shuffleboard-22ft", include_str!("../../calibration/boards/shuffleboard-22ft.toml")),
    ("sjoelbak", include_str!("../../calibration/boards/sjoelbak.toml")),
    ("holeyboard", include_str!("../../calibration/boards/holeyboard.toml")),
    ("yocu-4", include_str!("../../calibration/boards/yocu-4.toml")),
    ("yocu-9", include_str!("../../calibration/boards/yocu-9.toml")),
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

impl BoardKind {
    /// The kind as board files name it (`shuffleboard`, `sjoelbak`, `washer`).
    pub fn name(self) -> &'static str {
        match self {
            BoardKind::Shuffleboard => "shuffleboard",
            BoardKind::Sjoelbak => "sjoelbak",
            BoardKind::Washer => "washer",
        }
    }
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

    /// The surface's four corners, on it: the target end's (`-x`, `+x`), then the far end's.
    pub fn corners(&self) -> [BoardPoint3; 4] {
        let (hw, len) = (self.half_width(), self.length_mm);
        [(-hw, 0.0), (hw, 0.0), (-hw, len), (hw, len)].map(|(x, y)| BoardPoint3::new(x, y, 0.0))
    }

    /// Whether a point lies on the surface (edges included).
    pub fn contains(&self, p: BoardPoint) -> bool {
        p.x_mm.abs() <= self.half_width() && (0.0..=self.length_mm).contains(&p.y_mm)
    }
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
    /// The teams' colour models of the pieces played on it, when its file gives
    /// them (`[[teams]]`, docs/pieces.md); `None`: the standard red and blue.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub teams: Option<Vec<crate::piece::TeamColour>>,
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
        let board = file::parse(text, origin)?;
        board.validate(origin)?;
        Ok(board)
    }

    /// The board as board-file TOML (round-trips through [`Board::from_toml`]); the
    /// construction is written whole in its `[construction]` section.
    pub fn to_toml(&self) -> String {
        file::to_toml(self)
    }

    /// The board's construction (a copy; it lives in the layout, see [`Layout`]).
    pub fn construction(&self) -> Construction {
        match &self.layout {
            Layout::Shuffleboard(s) => Construction::Shuffleboard(s.construction),
            Layout::Sjoelbak(s) => Construction::Sjoelbak(s.construction),
            Layout::Washer(w) => Construction::Washer(w.construction),
        }
    }

    /// The same board with the present `keys` of its construction replaced (a scene's
    /// override), validated; a problem names the key as the file section would.
    pub fn with_construction(&self, keys: &ConstructionKeys) -> Result<Board, ConstructionProblem> {
        let c = self.construction().apply(keys)?;
        let mut out = self.clone();
        match (&mut out.layout, c) {
            (Layout::Shuffleboard(s), Construction::Shuffleboard(c)) => s.construction = c,
            (Layout::Sjoelbak(s), Construction::Sjoelbak(c)) => s.construction = c,
            (Layout::Washer(w), Construction::Washer(c)) => w.construction = c,
            _ => unreachable!("Construction::apply keeps the kind"),
        }
        out.check_construction()?;
        Ok(out)
    }

    /// Whether the construction can be built around this layout ([`Construction::check`]).
    pub(crate) fn check_construction(&self) -> Result<(), ConstructionProblem> {
        let disc = self.sjoelbak().map(|s| s.disc_thickness_mm);
        let cup = self.washer().map(|w| w.cup_depth_mm);
        self.construction().check(disc, cup)
    }

    /// The board's solids (surface slab, gutters, rails, walls, gate bar, partitions, cups, floor).
    pub fn solids(&self) -> Solids {
        Solids::build(self)
    }

    /// The most pieces of one side (one team, or sjoelen's discs) a round puts on it.
    pub fn pieces_a_side(&self) -> usize {
        match self.layout {
            // Four weights a side (eight a player in the solo games, four of each colour).
            Layout::Shuffleboard(_) => 4,
            // Four washers a player a round, a bonus toss possible.
            Layout::Washer(_) => 5,
            // 30 discs, plus up to two bonus discs.
            Layout::Sjoelbak(_) => 32,
        }
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
mod tests;
