//! The team-colours fixture set (`boardcall fixtures generate --teams`): the
//! varied set's tables and looks with the teams' pieces painted in eight colour
//! pairs (the standard red and blue, violet, yellow, green and teal teams, a pale
//! pair and two pairs of near hues), and for the pairs a user would have to name
//! (near hues, pale paint) the pieces file their set-up would hold.

use crate::detect::{ColourClass, PiecesFile, TeamColour, PIECES_FORMAT};
use crate::fixture::PIECES_FILE;
use crate::piece::Team;
use crate::render::generate::{render_planned, Case, GenerateConfig, Planned};
use crate::render::truth::Truth;
use crate::render::varied::{plan_rows, Lens, View};
use crate::render::RenderError;
use std::path::Path;

/// The seed of the committed team-colours set (`fixtures/README.md`).
pub const TEAMS_SEED: u64 = 20261206;

/// Two teams' paint (linear albedo, as the renderer's [`crate::render::scene::Appearance`]
/// holds it): the pieces named `red#n` are painted `red`, those named `blue#n` `blue`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TeamPair {
    /// Names the pair in the fixture's folder and tags.
    pub name: &'static str,
    pub red: [f64; 3],
    pub blue: [f64; 3],
    /// Whether a user names the colours (a pieces file): hues closer than the
    /// detector learns apart, or paint too pale to learn from a frame.
    pub given: bool,
}

/// The pairs. Hues are those of the paint in sRGB (degrees), saturation 0..1:
/// - red 0 / blue 224: the standard pair;
/// - crimson 339 / violet 264: the real photos' reds and violet-blues;
/// - yellow 50 / purple 282; green 128 / pink 330; teal 178 / magenta 309;
/// - pale pink 349 / pale sky 216, both at saturation 0.27 (given, windows of
///   35 degrees: a pale paint's hue drifts with the light);
/// - red 0 / magenta 318 and blue 224 / violet 262: near hues, 38-42 degrees
///   apart (given, windows of 15-17 degrees).
///
/// No orange: on a wooden board it is the board's own hue.
pub const TEAM_PAIRS: [TeamPair; 8] = [
    TeamPair { name: "red_blue", red: [0.62, 0.03, 0.03], blue: [0.02, 0.08, 0.55], given: false },
    TeamPair { name: "crimson_violet", red: [0.60, 0.02, 0.12], blue: [0.16, 0.04, 0.55], given: false },
    TeamPair { name: "yellow_purple", red: [0.72, 0.52, 0.02], blue: [0.28, 0.03, 0.48], given: false },
    TeamPair { name: "pink_green", red: [0.75, 0.05, 0.30], blue: [0.03, 0.32, 0.05], given: false },
    TeamPair { name: "magenta_teal", red: [0.55, 0.03, 0.42], blue: [0.02, 0.36, 0.34], given: false },
    TeamPair { name: "pale_pink_sky", red: [0.80, 0.40, 0.46], blue: [0.40, 0.55, 0.82], given: true },
    TeamPair { name: "red_magenta", red: [0.62, 0.03, 0.03], blue: [0.55, 0.02, 0.40], given: true },
    TeamPair { name: "blue_violet", red: [0.02, 0.08, 0.55], blue: [0.17, 0.05, 0.58], given: true },
];

/// A given hue's window (degrees either side): half the gap between the pair's
/// hues less this margin (the paint's spread under the fixtures' lights) ...
const GIVEN_GAP_MARGIN_DEG: f32 = 4.0;
/// ... and at most this: a pale paint's hue drifts with the light's tint (the
/// pale pink, painted at 349, reads at 4-13 degrees under warm light).
const GIVEN_MAX_TOLERANCE_DEG: f32 = 35.0;
/// A given colour's saturation floor, as a fraction of the paint's own: shading
/// and glare wash a cap out by up to half.
const GIVEN_SATURATION_FRACTION: f32 = 0.45;
/// The floor of a pale colour's brightness (value): pale paint is pale in the
/// light, and as unsaturated but darker is a shadow.
const PALE_MIN_VALUE: f32 = 0.5;
/// The floor of a full colour's brightness (value), as the standard blue's.
const PAINT_MIN_VALUE: f32 = 0.10;
/// Paint this unsaturated or less is pale.
const PALE_SATURATION: f32 = 0.35;

/// The set's scenes: each pair on a shuffleboard's end (weights) and on a washer
/// board (the three boards in turn), one scene in three through a fisheye.
pub fn recipe() -> Vec<(&'static str, Case, View, Lens, Option<&'static TeamPair>)> {
    let washers = ["holeyboard", "yocu-4", "yocu-9"];
    let mut rows = Vec::new();
    for (i, pair) in TEAM_PAIRS.iter().enumerate() {
        rows.push(("shuffleboard-22ft", Case::Plain, View::End, Some(pair)));
        rows.push((washers[i % washers.len()], Case::Plain, View::Whole, Some(pair)));
    }
    rows.into_iter().enumerate().map(|(i, (b, c, v, p))| (b, c, v, if i % 3 == 1 { Lens::Fisheye } else { Lens::Brown }, p)).collect()
}

/// Settings of the team-colours set: as the committed set's, with its own seed.
pub fn default_config() -> GenerateConfig {
    GenerateConfig { seed: TEAMS_SEED, ..GenerateConfig::default() }
}

/// The set's scenes, planned (not rendered), in the recipe's order.
pub fn plan_set(cfg: &GenerateConfig) -> Result<Vec<Planned>, RenderError> {
    plan_rows(cfg, recipe())
}

/// Renders the set into `out_dir/<name>/`, on `threads` threads, each given pair's
/// pieces file beside its scene; returns each truth.
pub fn generate(cfg: &GenerateConfig, out_dir: &Path, threads: usize, progress: impl FnMut(&str)) -> Result<Vec<Truth>, RenderError> {
    let rows = recipe();
    let planned = plan_set(cfg)?;
    let names: Vec<String> = planned.iter().map(|p| p.name.clone()).collect();
    let truths = render_planned(planned, out_dir, threads, progress)?;
    for (name, (.., pair)) in names.iter().zip(&rows) {
        if let Some(pair) = pair.filter(|p| p.given) {
            let path = out_dir.join(name).join(PIECES_FILE);
            crate::files::write_atomic(&path, pieces_file(pair).to_json().as_bytes())
                .map_err(|e| RenderError::Io { path, source: std::io::Error::other(e.to_string()) })?;
        }
    }
    Ok(truths)
}

/// The pieces file a user of this pair would give: each team's paint hue, a window
/// narrower than the pair's gap, and floors below its saturation and brightness.
pub fn pieces_file(pair: &TeamPair) -> PiecesFile {
    let hsv = |albedo: [f64; 3]| {
        let [r, g, b] = albedo.map(|c| 255.0 * crate::render::effects::tone(c) as f32);
        crate::detect::bgr_to_hsv([b, g, r])
    };
    let gap = crate::detect::hue_distance(hsv(pair.red)[0], hsv(pair.blue)[0]);
    let tolerance = (gap / 2.0 - GIVEN_GAP_MARGIN_DEG).min(GIVEN_MAX_TOLERANCE_DEG);
    let colour = |albedo: [f64; 3]| {
        let [h, s, _] = hsv(albedo);
        let pale = s < PALE_SATURATION;
        ColourClass {
            hue_deg: h,
            hue_tolerance_deg: tolerance,
            min_saturation: GIVEN_SATURATION_FRACTION * s,
            min_value: if pale { PALE_MIN_VALUE } else { PAINT_MIN_VALUE },
            max_saturation: 1.0,
        }
    };
    PiecesFile {
        format: PIECES_FORMAT,
        teams: vec![TeamColour { team: Team::Red, colour: colour(pair.red) }, TeamColour { team: Team::Blue, colour: colour(pair.blue) }],
        weight_cap_radius_mm: None,
        weight_cap_recess_mm: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pairs_are_eight_distinct_with_pale_and_near_hues_named_by_the_user() {
        assert!(TEAM_PAIRS.len() >= 8);
        let hues: Vec<[f32; 2]> = TEAM_PAIRS.iter().map(|p| pieces_file(p).teams.iter().map(|t| t.colour.hue_deg).collect::<Vec<_>>().try_into().unwrap()).collect();
        for (pair, [a, b]) in TEAM_PAIRS.iter().zip(&hues) {
            let gap = crate::detect::hue_distance(*a, *b);
            // A given pair's windows never overlap; a learned pair lies further apart than the detector's merge distance.
            if pair.given {
                let tolerance = pieces_file(pair).teams[0].colour.hue_tolerance_deg;
                assert!(gap > 2.0 * tolerance && tolerance >= 10.0, "{}: {gap} {tolerance}", pair.name);
            } else {
                assert!(gap > 60.0, "{}: {gap}", pair.name);
            }
        }
        assert!(TEAM_PAIRS.iter().any(|p| pieces_file(p).teams.iter().all(|t| t.colour.min_value >= PALE_MIN_VALUE)), "a pale pair");
        assert!(TEAM_PAIRS.iter().filter(|p| p.given).count() >= 2);
        let files: Vec<PiecesFile> = TEAM_PAIRS.iter().map(pieces_file).collect();
        for f in &files {
            crate::detect::check_teams(&f.teams).unwrap();
        }
    }

    #[test]
    fn the_recipe_shows_every_pair_on_weights_and_on_washers() {
        let rows = recipe();
        for pair in &TEAM_PAIRS {
            let boards: Vec<&str> = rows.iter().filter(|r| r.4.is_some_and(|p| p.name == pair.name)).map(|r| r.0).collect();
            assert!(boards.contains(&"shuffleboard-22ft") && boards.iter().any(|b| b.starts_with("yocu") || *b == "holeyboard"), "{}: {boards:?}", pair.name);
        }
    }
}
