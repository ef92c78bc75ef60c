//! The board file as written on disk (TOML, `docs/board-format.md`): its sections, the
//! older places of construction keys still read (`[shuffleboard] gutter_width_mm`, ...),
//! and the conversion to and from a [`Board`].

use super::construction::{Construction, ConstructionKeys, ConstructionProblem};
use super::layout::{Compartment, GateFace, Hole, Layout, ShuffleLines, ShuffleVariant, Shuffleboard, Sjoelbak, WasherBoard};
use super::{Board, BoardError, BoardKind, Surface, FORMAT_VERSION};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The `[shuffleboard]` section.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct ShuffleboardSection {
    line_width_mm: f64,
    #[serde(flatten)]
    lines: ShuffleLines,
    /// Older files' place for `construction.gutter_width_mm` (still read).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    gutter_width_mm: Option<f64>,
    /// Older files' place for `construction.gutter_depth_mm` (still read).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    gutter_depth_mm: Option<f64>,
    weight_diameter_mm: f64,
    weight_height_mm: f64,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    variants: BTreeMap<String, ShuffleVariant>,
}

fn is_front(f: &GateFace) -> bool {
    *f == GateFace::Front
}

/// The `[sjoelbak]` section.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct SjoelbakSection {
    compartments: Vec<Compartment>,
    partition_width_mm: f64,
    gate_back_mm: f64,
    gate_front_mm: f64,
    gate_opening_mm: f64,
    /// The face a disc must pass to count: `front` (the default) or `back`.
    #[serde(default, skip_serializing_if = "is_front")]
    counts_past: GateFace,
    /// Older files' place for `construction.wall_height_mm` (still read).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    wall_height_mm: Option<f64>,
    disc_diameter_mm: f64,
    disc_thickness_mm: f64,
}

/// The `[washer]` section.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct WasherSection {
    holes: Vec<Hole>,
    cup_depth_mm: f64,
    washer_outer_diameter_mm: f64,
    washer_inner_diameter_mm: f64,
    washer_thickness_mm: f64,
    /// Older files' place for `construction.stand_height_mm` (still read).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    stand_height_mm: Option<f64>,
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
    shuffleboard: Option<ShuffleboardSection>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    sjoelbak: Option<SjoelbakSection>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    washer: Option<WasherSection>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    construction: Option<ConstructionKeys>,
    /// The teams' colour models (docs/pieces.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    teams: Option<Vec<crate::piece::TeamColour>>,
}

/// Parses board-file text into a board whose layout is not yet validated (the
/// construction is: the section its keys came from is known only here).
pub(super) fn parse(text: &str, origin: &str) -> Result<Board, BoardError> {
    let syntax = |e: toml::de::Error| BoardError::Syntax { origin: origin.to_string(), message: e.to_string() };
    check_shuffleboard_keys(&toml::from_str::<toml::Table>(text).map_err(syntax)?, origin)?;
    let file: BoardFile = toml::from_str(text).map_err(syntax)?;
    file.into_board(origin)
}

/// The board as board-file TOML, every construction key in `[construction]`.
pub(super) fn to_toml(board: &Board) -> String {
    let (mut shuffleboard, mut sjoelbak, mut washer) = (None, None, None);
    match &board.layout {
        Layout::Shuffleboard(s) => {
            shuffleboard = Some(ShuffleboardSection {
                line_width_mm: s.line_width_mm,
                lines: s.lines,
                gutter_width_mm: None,
                gutter_depth_mm: None,
                weight_diameter_mm: s.weight_diameter_mm,
                weight_height_mm: s.weight_height_mm,
                variants: s.variants.clone(),
            })
        }
        Layout::Sjoelbak(s) => {
            sjoelbak = Some(SjoelbakSection {
                compartments: s.compartments.clone(),
                partition_width_mm: s.partition_width_mm,
                gate_back_mm: s.gate_back_mm,
                gate_front_mm: s.gate_front_mm,
                gate_opening_mm: s.gate_opening_mm,
                counts_past: s.counts_past,
                wall_height_mm: None,
                disc_diameter_mm: s.disc_diameter_mm,
                disc_thickness_mm: s.disc_thickness_mm,
            })
        }
        Layout::Washer(w) => {
            washer = Some(WasherSection {
                holes: w.holes.clone(),
                cup_depth_mm: w.cup_depth_mm,
                washer_outer_diameter_mm: w.washer_outer_diameter_mm,
                washer_inner_diameter_mm: w.washer_inner_diameter_mm,
                washer_thickness_mm: w.washer_thickness_mm,
                stand_height_mm: None,
            })
        }
    }
    let file = BoardFile {
        format: FORMAT_VERSION,
        name: board.name.clone(),
        kind: board.kind(),
        description: board.description.clone(),
        surface: board.surface,
        shuffleboard,
        sjoelbak,
        washer,
        construction: Some(ConstructionKeys::of(&board.construction())),
        teams: board.teams.clone(),
    };
    toml::to_string_pretty(&file).expect("a board always serialises")
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
        let wanted = self.kind.name();
        for (name, present) in sections {
            if present && name != wanted {
                return Err(bad(name, &format!("section does not belong on a board of kind `{wanted}`")));
            }
        }
        // The construction keys given in the layout section, where older files put them.
        let legacy = match self.kind {
            BoardKind::Shuffleboard => {
                let s = self.shuffleboard.as_ref().ok_or_else(|| bad("shuffleboard", "section is missing"))?;
                ConstructionKeys { gutter_width_mm: s.gutter_width_mm, gutter_depth_mm: s.gutter_depth_mm, ..Default::default() }
            }
            BoardKind::Sjoelbak => {
                let s = self.sjoelbak.as_ref().ok_or_else(|| bad("sjoelbak", "section is missing"))?;
                ConstructionKeys { wall_height_mm: s.wall_height_mm, ..Default::default() }
            }
            BoardKind::Washer => {
                let w = self.washer.as_ref().ok_or_else(|| bad("washer", "section is missing"))?;
                ConstructionKeys { stand_height_mm: w.stand_height_mm, ..Default::default() }
            }
        };
        let given = self.construction.unwrap_or_default();
        let legacy_keys = legacy.present();
        if let Some(k) = given.present().into_iter().find(|k| legacy_keys.contains(k)) {
            return Err(bad(
                &format!("construction.{k}"),
                &format!("is also given as `{wanted}.{k}` (where older board files put it): give it once"),
            ));
        }
        // Name a problem where its key was written.
        let named = |p: ConstructionProblem| {
            let section = if legacy_keys.contains(&p.key.as_str()) { wanted } else { "construction" };
            p.in_file(origin, section)
        };
        let construction = Construction::nominal(self.kind).apply(&legacy).map_err(named)?.apply(&given).map_err(named)?;
        let layout = match (self.shuffleboard, self.sjoelbak, self.washer, construction) {
            (Some(s), None, None, Construction::Shuffleboard(c)) => Layout::Shuffleboard(Shuffleboard {
                line_width_mm: s.line_width_mm,
                lines: s.lines,
                weight_diameter_mm: s.weight_diameter_mm,
                weight_height_mm: s.weight_height_mm,
                variants: s.variants,
                construction: c,
            }),
            (None, Some(s), None, Construction::Sjoelbak(c)) => {
                let mut compartments = s.compartments;
                compartments.sort_by(|a, b| a.x_mm.total_cmp(&b.x_mm));
                Layout::Sjoelbak(Sjoelbak {
                    compartments,
                    partition_width_mm: s.partition_width_mm,
                    gate_back_mm: s.gate_back_mm,
                    gate_front_mm: s.gate_front_mm,
                    gate_opening_mm: s.gate_opening_mm,
                    counts_past: s.counts_past,
                    disc_diameter_mm: s.disc_diameter_mm,
                    disc_thickness_mm: s.disc_thickness_mm,
                    construction: c,
                })
            }
            (None, None, Some(w), Construction::Washer(c)) => Layout::Washer(WasherBoard {
                holes: w.holes,
                cup_depth_mm: w.cup_depth_mm,
                washer_outer_diameter_mm: w.washer_outer_diameter_mm,
                washer_inner_diameter_mm: w.washer_inner_diameter_mm,
                washer_thickness_mm: w.washer_thickness_mm,
                construction: c,
            }),
            _ => unreachable!("the kind's section is present, no other is, and the construction is of the same kind"),
        };
        if let Some(teams) = &self.teams {
            crate::piece::check_teams(teams).map_err(|p| bad("teams", &p))?;
        }
        let board = Board { name: self.name, description: self.description, variant: None, surface: self.surface, layout, teams: self.teams };
        board.check_construction().map_err(named)?;
        Ok(board)
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
