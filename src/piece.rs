//! The pieces the games are played with: weights, washers and discs, and their teams.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// A shuffleboard weight's coloured cap is at least this wide (mm radius): a
/// smaller disc of colour is no cap a maker fits.
pub const MIN_CAP_RADIUS_MM: f64 = 10.0;

/// A colour class in HSV: hue window (degrees), minimum saturation and value (0..1).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ColourClass {
    pub hue_deg: f32,
    pub hue_tolerance_deg: f32,
    pub min_saturation: f32,
    pub min_value: f32,
    /// Upper bound on saturation (0..1), for pale pieces such as wooden discs.
    pub max_saturation: f32,
}

/// A team's colour: the colour model its pieces are told by (see `docs/pieces.md`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct TeamColour {
    pub team: Team,
    pub colour: ColourClass,
}

/// Each team once, every colour class finite and in range.
pub fn check_teams(teams: &[TeamColour]) -> Result<(), String> {
    if teams.is_empty() {
        return Err("no teams".into());
    }
    for (i, t) in teams.iter().enumerate() {
        if teams[..i].iter().any(|u| u.team == t.team) {
            return Err(format!("team {:?} given twice", t.team));
        }
        let c = t.colour;
        let unit = |v: f32| (0.0..=1.0).contains(&v);
        if !((0.0..=360.0).contains(&c.hue_deg) && (0.0..=180.0).contains(&c.hue_tolerance_deg)) {
            return Err(format!("{:?}: hue {} +- {} degrees is not a hue window (0..360, +- 0..180)", t.team, c.hue_deg, c.hue_tolerance_deg));
        }
        if !(unit(c.min_saturation) && unit(c.max_saturation) && unit(c.min_value) && c.min_saturation <= c.max_saturation) {
            return Err(format!("{:?}: saturation and value bounds must lie in 0..1, the minimum below the maximum", t.team));
        }
    }
    Ok(())
}

/// Which side a piece belongs to. The names are the default cap or washer colours;
/// a game's colour configuration maps whatever colours are really used onto these.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Team {
    Red,
    Blue,
}

impl Team {
    pub const ALL: [Team; 2] = [Team::Red, Team::Blue];

    pub fn other(self) -> Team {
        match self {
            Team::Red => Team::Blue,
            Team::Blue => Team::Red,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Team::Red => "red",
            Team::Blue => "blue",
        }
    }
}

impl fmt::Display for Team {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Team {
    type Err = PieceParseError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "red" => Ok(Team::Red),
            "blue" => Ok(Team::Blue),
            _ => Err(PieceParseError::UnknownTeam { team: s.to_string() }),
        }
    }
}

/// The kind of a piece.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PieceKind {
    /// A table-shuffleboard weight (puck): a steel cylinder with a coloured cap.
    Weight,
    /// A washer for the washer-toss boards: a flat annulus.
    Washer,
    /// A sjoelen disc: a light wooden disc, no team.
    Disc,
}

impl PieceKind {
    /// The kind as the reports name it (`weight`, `washer`, `disc`).
    pub fn name(self) -> &'static str {
        match self {
            PieceKind::Weight => "weight",
            PieceKind::Washer => "washer",
            PieceKind::Disc => "disc",
        }
    }
}

/// A piece's identity within a round: its team (none for sjoelen discs) and number,
/// written `red#2`, `blue#4`, or `disc#17`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PieceId {
    pub team: Option<Team>,
    pub number: u32,
}

impl PieceId {
    pub const fn of_team(team: Team, number: u32) -> Self {
        Self { team: Some(team), number }
    }

    pub const fn disc(number: u32) -> Self {
        Self { team: None, number }
    }
}

impl fmt::Display for PieceId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.team {
            Some(t) => write!(f, "{t}#{}", self.number),
            None => write!(f, "disc#{}", self.number),
        }
    }
}

/// Why a piece identifier could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PieceParseError {
    #[error("unknown team `{team}` (expected `red` or `blue`)")]
    UnknownTeam { team: String },
    #[error("`{id}` is not a piece id (expected TEAM#N such as `red#2`, or `disc#N`)")]
    Malformed { id: String },
}

impl FromStr for PieceId {
    type Err = PieceParseError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let malformed = || PieceParseError::Malformed { id: s.to_string() };
        let (who, num) = s.split_once('#').ok_or_else(malformed)?;
        let number: u32 = num.parse().map_err(|_| malformed())?;
        if who == "disc" {
            Ok(PieceId::disc(number))
        } else {
            Ok(PieceId::of_team(who.parse()?, number))
        }
    }
}

impl Serialize for PieceId {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for PieceId {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn piece_ids_round_trip_through_text() {
        for id in [PieceId::of_team(Team::Red, 2), PieceId::of_team(Team::Blue, 4), PieceId::disc(17)] {
            let text = id.to_string();
            assert_eq!(text.parse::<PieceId>().unwrap(), id);
        }
    }

    #[test]
    fn malformed_piece_ids_are_rejected_with_the_text() {
        assert_eq!(
            "green#1".parse::<PieceId>(),
            Err(PieceParseError::UnknownTeam { team: "green".into() })
        );
        assert_eq!("red2".parse::<PieceId>(), Err(PieceParseError::Malformed { id: "red2".into() }));
        assert_eq!("red#x".parse::<PieceId>(), Err(PieceParseError::Malformed { id: "red#x".into() }));
    }
}
