//! The learned component: a small classifier of each washer-board hole's state
//! (which team has a leaner in it, how many flat washers of each team lie in its
//! cup) from a rectified top-down patch, run with tract from the committed ONNX
//! model (`models/hole_state.onnx`), and the rule that lets it correct washer
//! detections the outline fits alone get wrong.
//!
//! The patch is sampled the way every other stage looks at the board: board
//! points (a square grid around the hole, at the surface and at the cup bottom)
//! are projected through the full camera model into the raw frame (once per
//! camera pose, `patch`), so the same
//! hole gives the same patch from any camera. Colours are divided by the wood
//! around the hole (per channel, median), which takes out the light's colour and
//! level. `models/README.md` says how the model was trained and how well it does.

mod patch;
pub mod training;

pub use patch::{hole_patch, PatchTaps};

use crate::board::{Board, Layout, WasherBoard};
use crate::detect::{Detection, Detections, MeasuredBy};
use crate::geom::{BoardPoint, Footprint};
use crate::measure::ColourView;
use crate::piece::{PieceKind, Team};
use serde::{Deserialize, Serialize};
use std::sync::{Arc, OnceLock};
use tract_onnx::prelude::*;

/// Patch side in samples. 32 samples over 1.6 hole diameters is ~5 mm a sample
/// on a 4 in hole: a washer (63.5 mm) spans a dozen, enough to see its shape and
/// whether it lies flat, small enough to keep the model under a megabyte.
pub const PATCH_SIDE: usize = 32;
/// The patch covers this many hole diameters, centred on the hole: the rim, the
/// wood around it (the colour reference) and a leaner's raised edge.
pub const PATCH_SPAN_DIAMETERS: f64 = 1.6;
/// Sample levels: the surface, and the top of a washer flat on the cup bottom.
pub const PATCH_LEVELS: usize = 2;
/// Colour channels per sample (B, G, R: the frame's order).
pub const PATCH_CHANNELS: usize = 3;
/// Length of one patch's feature vector: `[level][row][column][channel]`.
pub const PATCH_FEATURES: usize = PATCH_LEVELS * PATCH_SIDE * PATCH_SIDE * PATCH_CHANNELS;
/// Each sample averages this many points per axis across its cell, so the patch
/// does not alias the finer image (1-3 mm a pixel on the fixtures' cameras).
const SUBSAMPLES: usize = 2;
/// Surface samples further than this (in hole diameters) from the hole's centre
/// lie on the wood beyond the rim (at 0.5) and a leaner's reach over it: their
/// per-channel median is the colour reference.
pub const REFERENCE_RING_DIAMETERS: f64 = 0.62;
/// A hole with more than this fraction of its patch out of the frame is not
/// classified (its state is unknown rather than guessed).
pub const MAX_OUT_OF_FRAME_FRACTION: f64 = 0.1;
/// Log colour ratios are clipped to this: beyond it a sample is glare or shadow,
/// and the model should not see it as a stronger colour.
const MAX_LOG_RATIO: f32 = 3.0;
/// Added to both sides of a colour ratio (8-bit levels): keeps dark samples'
/// ratios from exploding on sensor noise.
const RATIO_FLOOR: f32 = 4.0;

/// The model's outputs, in order: independent probabilities (sigmoids).
pub const OUTPUTS: [&str; 6] = ["red_leaner", "blue_leaner", "red_flat_1", "red_flat_2", "blue_flat_1", "blue_flat_2"];

/// The model committed with the crate.
pub const EMBEDDED_MODEL: &[u8] = include_bytes!("../models/hole_state.onnx");

/// A model output at or above this probability is taken as seen.
pub const SEEN_P: f32 = 0.5;
/// A correction made at or above this probability (and agreeing with the
/// geometry) is not flagged for review: on the held-out split, the 79 % of holes
/// whose every output was this sure had their whole state right in 93 %, the
/// rest in 59 % (`models/README.md`): below it a person should look.
pub const CONFIDENT_P: f32 = 0.9;
/// A washer the detector did not find is added only when the model is at least
/// this sure of it: a guess of a hole's contents without an outline behind it
/// is worse than a miss (on the fixtures, additions at p 0.5-0.9 were mostly a
/// red washer in a dark cup taken for blue, or one washer taken for two).
pub const ADD_P: f32 = CONFIDENT_P;
/// A model output below this says "certainly not": a detection it contradicts
/// is flagged for review.
pub const ABSENT_P: f32 = 0.1;
/// The most washers lying flat one on another in a cup.
const STACK_MAX: usize = 3;
/// A flat outline's fitted height is within this of where it rests (mm): the
/// rest heights a washer can take are a washer's thickness (3.2 mm) apart.
const FLAT_HEIGHT_TOLERANCE_MM: f64 = 1.0;

/// A washer the model calls a leaner gets this tilt: the middle of the range of
/// a washer propped on a rim (10-40 degrees), far past the 6.4 mm flatness rise
/// (3 degrees). The model says *that* it leans, not by how much.
pub const MODEL_LEANER_TILT_DEG: f64 = 20.0;
/// Detections whose centre is this far outside a hole's rim (mm) may still be a
/// washer leaning in it: a tilted washer's top outline, fitted as a flat circle,
/// lands off its true centre by up to a third of its radius.
pub const LEANER_REACH_MM: f64 = 12.0;

/// Errors of the model stage.
#[derive(Debug, thiserror::Error)]
pub enum ModelError {
    #[error("the hole-state model cannot be loaded: {reason}")]
    Load { reason: String },
    #[error("the hole-state model failed to run: {reason}")]
    Run { reason: String },
    #[error("the hole-state model gives {got} outputs per hole, this build reads {want}")]
    Outputs { got: usize, want: usize },
}

/// What the model says about one hole.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct HoleState {
    /// Index into the board's holes.
    pub hole: usize,
    /// Probability that a washer of each team (red, blue) leans in the hole.
    pub leaner: [f32; 2],
    /// Probability of at least one flat washer of each team in the cup.
    pub flat_one: [f32; 2],
    /// Probability of at least two flat washers of each team in the cup.
    pub flat_two: [f32; 2],
}

impl HoleState {
    /// From the model's six outputs (in [`OUTPUTS`] order).
    pub fn from_outputs(hole: usize, p: &[f32]) -> HoleState {
        HoleState { hole, leaner: [p[0], p[1]], flat_one: [p[2], p[4]], flat_two: [p[3], p[5]] }
    }

    /// The number of flat washers of a team the model sees in the cup (0, 1 or 2+).
    pub fn flat_count(&self, team: Team) -> usize {
        let t = team_index(team);
        usize::from(self.flat_one[t] >= SEEN_P) + usize::from(self.flat_one[t] >= SEEN_P && self.flat_two[t] >= SEEN_P)
    }
}

fn team_index(team: Team) -> usize {
    match team {
        Team::Red => 0,
        Team::Blue => 1,
    }
}

type Plan = Arc<TypedRunnableModel>;

/// tract's hand-written AVX-512 / AVX2 matrix kernels return without
/// `vzeroupper`, leaving the vector registers' upper halves dirty; every SSE
/// instruction of this crate's code (built for baseline x86-64) afterwards pays
/// a merge with them until something clears them. Measured on the yocu-9 bench
/// frame: the next frame's `detect` took 44 ms instead of 31 ms. Clearing the
/// upper halves after each model run restores the full speed; it changes no
/// value (the upper halves are dead once the run has returned).
fn clear_upper_vector_state() {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx") {
        // SAFETY: the CPU has AVX (checked just above), which is all
        // `zero_upper_halves` requires.
        unsafe { zero_upper_halves() }
    }
}

/// `vzeroupper`: zeroes the upper halves of the vector registers.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx")]
fn zero_upper_halves() {
    std::arch::x86_64::_mm256_zeroupper();
}

/// The committed model, parsed and optimised once per process.
static EMBEDDED: OnceLock<Result<Plan, String>> = OnceLock::new();

fn load_plan(bytes: &[u8]) -> Result<Plan, ModelError> {
    let load = |e: TractError| ModelError::Load { reason: format!("{e:#}") };
    let model = tract_onnx::onnx()
        .model_for_read(&mut std::io::Cursor::new(bytes))
        .map_err(load)?
        .with_input_fact(0, f32::fact([1, PATCH_FEATURES]).into())
        .map_err(load)?
        .into_optimized()
        .map_err(load)?
        .into_runnable()
        .map_err(load)?;
    Ok(model)
}

/// The hole-state classifier: the runnable model and its input buffer.
pub struct HoleClassifier {
    plan: Plan,
}

impl HoleClassifier {
    /// A classifier from an ONNX model's bytes (input `[1, PATCH_FEATURES]` f32;
    /// its last output `[1, 6]` f32 probabilities in [`OUTPUTS`] order).
    pub fn new(onnx: &[u8]) -> Result<HoleClassifier, ModelError> {
        Ok(HoleClassifier { plan: load_plan(onnx)? })
    }

    /// The model committed with the crate (parsed once per process).
    pub fn embedded() -> Result<HoleClassifier, ModelError> {
        let plan = EMBEDDED.get_or_init(|| load_plan(EMBEDDED_MODEL).map_err(|e| e.to_string()));
        match plan {
            Ok(p) => Ok(HoleClassifier { plan: p.clone() }),
            Err(reason) => Err(ModelError::Load { reason: reason.clone() }),
        }
    }

    /// The model's six probabilities for one patch.
    pub fn predict(&mut self, patch: &[f32]) -> Result<[f32; 6], ModelError> {
        let run = |e: TractError| ModelError::Run { reason: format!("{e:#}") };
        let input = Tensor::from_shape(&[1, PATCH_FEATURES], patch).map_err(run)?;
        let out = self.plan.run(tvec!(input.into()));
        clear_upper_vector_state();
        let out = out.map_err(run)?;
        let last = out.last().ok_or(ModelError::Outputs { got: 0, want: OUTPUTS.len() })?;
        let p = last.to_plain_array_view::<f32>().map_err(run)?;
        let p = p.as_slice().ok_or_else(|| ModelError::Run { reason: "the output is not contiguous".into() })?;
        if p.len() != OUTPUTS.len() {
            return Err(ModelError::Outputs { got: p.len(), want: OUTPUTS.len() });
        }
        let mut out = [0.0; 6];
        out.copy_from_slice(p);
        Ok(out)
    }

    /// Every hole's state on a washer board, its patches read where `taps` (made for
    /// this board and the frame's camera and pose) say (holes mostly out of the frame
    /// are left out); nothing on other boards.
    pub fn classify(&mut self, frame: &ColourView, taps: &PatchTaps, board: &Board) -> Result<Vec<HoleState>, ModelError> {
        let Layout::Washer(w) = &board.layout else {
            return Ok(Vec::new());
        };
        let mut out = Vec::with_capacity(w.holes.len());
        for hole in 0..w.holes.len() {
            if let Some(patch) = taps.patch(frame, w, hole) {
                out.push(HoleState::from_outputs(hole, &self.predict(&patch)?));
            }
        }
        Ok(out)
    }
}

/// Lets the hole states correct a washer board's detections, hole by hole and
/// team by team:
/// - a leaner seen by the model: the team's washer in (or leaning over) the
///   hole is re-called a leaner (tilted); if the detector found none and the
///   model is [`ADD_P`] sure, one is added at the hole, flagged for review;
/// - more flat washers of a team seen in the cup than detected there, at
///   [`ADD_P`] or more: the missing ones are added on the cup bottom at the
///   hole's centre (the call does not depend on where in the cup), flagged for
///   review;
/// - a detected washer in a cup where the model is sure there is none of its
///   team: flagged for review.
///
/// A correction the model is less than [`CONFIDENT_P`] sure of, or that the
/// geometry contradicts (a leaner where the outline fitted flat on the cup
/// bottom), is flagged for review. Only the teams in `known` are corrected: those
/// whose paint the model was trained on ([`trained_teams`]).
pub fn refine_washers(board: &Board, states: &[HoleState], known: &[Team], detections: &mut Detections) {
    let Layout::Washer(w) = &board.layout else {
        return;
    };
    let r = w.washer_outer_diameter_mm / 2.0;
    let bottom_top = -w.cup_depth_mm + w.washer_thickness_mm;
    let surface_top = w.washer_thickness_mm;
    let flat_in_cup = |top_z: f64| fits_flat_in_cup(w, top_z);
    for s in states {
        let Some(h) = w.holes.get(s.hole) else { continue };
        for team in Team::ALL.into_iter().filter(|t| known.contains(t)) {
            let t = team_index(team);
            let is_team = |d: &Detection| d.kind == PieceKind::Washer && d.team == Some(team);
            let inside = |d: &Detection| d.footprint.centre.distance(h.centre()) < h.radius();
            // Leaner: the team's washer nearest the hole, preferring one measured
            // at the surface (a flat washer cannot rest there over a hole).
            let p_lean = s.leaner[t];
            // A leaner of the team the geometry measured at this hole (its leaning pose) is the one the model sees.
            let measured_leaning = || {
                detections.pieces.iter().any(|d| is_team(d) && d.measured_by == MeasuredBy::LeaningPose && d.footprint.centre.distance(h.centre()) < h.radius() + LEANER_REACH_MM)
            };
            if p_lean >= SEEN_P && !measured_leaning() {
                let candidate = detections
                    .pieces
                    .iter()
                    .enumerate()
                    .filter(|(_, d)| is_team(d) && d.tilt_deg.abs() < MODEL_LEANER_TILT_DEG / 2.0)
                    .map(|(i, d)| (i, d.footprint.centre.distance(h.centre()), flat_in_cup(d.top_z_mm)))
                    .filter(|(_, dist, _)| *dist < h.radius() + LEANER_REACH_MM)
                    .min_by(|a, b| a.2.cmp(&b.2).then(a.1.total_cmp(&b.1)));
                match candidate {
                    Some((i, dist, flat)) => {
                        let d = &mut detections.pieces[i];
                        d.tilt_deg = MODEL_LEANER_TILT_DEG;
                        let mut why = Vec::new();
                        if p_lean < CONFIDENT_P {
                            why.push(format!("hole model: leaner at p = {p_lean:.2}"));
                        }
                        if flat {
                            why.push(FLAT_IN_CUP.to_string());
                        }
                        if dist >= h.radius() {
                            // Its outline fit lies over the rim: a leaner's centre is in the
                            // hole; its leaning pose, or the lack of one, decides
                            // (`score::place_leaners`).
                            why.push(OVER_THE_RIM.to_string());
                        }
                        add_doubt(d, why);
                    }
                    None if p_lean >= ADD_P => {
                        detections.pieces.push(model_only(team, h.centre(), r, surface_top, MODEL_LEANER_TILT_DEG, h.radius() / 2.0, p_lean, "a leaner"))
                    }
                    None => {}
                }
            }
            // Flat washers in the cup.
            let want = s.flat_count(team);
            let have: Vec<usize> = detections
                .pieces
                .iter()
                .enumerate()
                .filter(|(_, d)| is_team(d) && inside(d) && d.tilt_deg.abs() < MODEL_LEANER_TILT_DEG / 2.0)
                .map(|(i, _)| i)
                .collect();
            for k in have.len()..want {
                let p = if k >= 1 { s.flat_two[t] } else { s.flat_one[t] };
                if p < ADD_P {
                    break;
                }
                let sigma = (h.radius() - r).max(1.0);
                detections.pieces.push(model_only(team, h.centre(), r, bottom_top, 0.0, sigma, p, "a flat washer in the cup"));
            }
            if s.flat_one[t] < ABSENT_P && s.leaner[t] < ABSENT_P {
                for &i in &have {
                    add_doubt(
                        &mut detections.pieces[i],
                        vec![format!("hole model sees no {team:?} washer in this hole (p = {:.2})", s.flat_one[t].max(s.leaner[t])).to_lowercase()],
                    );
                }
            }
        }
    }
}

/// The teams of `teams` whose paint the model was trained on: its training scenes paint the two teams red and blue,
/// with the colour variations of the fixture generator, which the standard colour models ([`crate::detect::RED`],
/// [`crate::detect::BLUE`]) cover. A team whose colour's hue lies outside its standard model's hue window (violet or
/// yellow washers, given or learned from the frame) is paint the model never saw: its outputs for that team mean
/// nothing, and geometry alone reads its washers.
pub fn trained_teams(teams: &[crate::detect::TeamColour]) -> Vec<Team> {
    let standard = crate::detect::standard_teams();
    teams
        .iter()
        .filter(|t| {
            standard.iter().find(|s| s.team == t.team).is_some_and(|s| crate::detect::hue_distance(t.colour.hue_deg, s.colour.hue_deg) <= s.colour.hue_tolerance_deg)
        })
        .map(|t| t.team)
        .collect()
}

/// Whether an outline fitted with its top at `top_z` lies flat in a cup: on
/// its bottom, or on washers lying there (a stack of up to [`STACK_MAX`]),
/// within the fit's height tolerance.
pub fn fits_flat_in_cup(w: &WasherBoard, top_z: f64) -> bool {
    let above = top_z - (-w.cup_depth_mm + w.washer_thickness_mm);
    above > -FLAT_HEIGHT_TOLERANCE_MM && above < (STACK_MAX - 1) as f64 * w.washer_thickness_mm + FLAT_HEIGHT_TOLERANCE_MM
}

/// Whether an outline fitted with its top at `top_z` lies flat on the board's
/// surface, within the fit's height tolerance.
pub fn fits_flat_on_board(w: &WasherBoard, top_z: f64) -> bool {
    (top_z - w.washer_thickness_mm).abs() < FLAT_HEIGHT_TOLERANCE_MM
}

/// The doubt on a washer the model calls a leaner whose flat outline fit lies
/// over the hole's rim, centre outside it: a leaner's top outline fitted flat
/// lands off its centre, and so does a washer flat on the board at the rim.
pub const OVER_THE_RIM: &str = "hole model calls a leaner whose outline fit lies over the rim";

/// The doubt on a washer the model calls a leaner whose outline fits flat in
/// the cup, on its floor or on washers lying there.
pub const FLAT_IN_CUP: &str = "hole model calls a leaner where the outline fits flat in the cup";

/// A washer seen by the hole model only: no outline measured, so always flagged.
fn model_only(team: Team, at: BoardPoint, r: f64, top_z: f64, tilt: f64, sigma: f64, p: f32, what: &str) -> Detection {
    Detection {
        kind: PieceKind::Washer,
        team: Some(team),
        footprint: Footprint::new(at, r),
        top_z_mm: top_z,
        tilt_deg: tilt,
        sigma_mm: sigma,
        fit_rms_mm: 0.0,
        edges_found: 0,
        probes: 0,
        mm_per_px: 0.0,
        doubt: Some(format!("seen by the hole model only ({what}, p = {p:.2}); its outline was not measured")),
        measured_by: MeasuredBy::HoleModel,
        outline_radius_mm: None,
    }
}

fn add_doubt(d: &mut Detection, why: Vec<String>) {
    if why.is_empty() {
        return;
    }
    let mut all: Vec<String> = d.doubt.take().into_iter().collect();
    all.extend(why);
    d.doubt = Some(all.join("; "));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::camera::Camera;
    use crate::geom::BoardPoint3;

    #[test]
    fn the_model_corrects_only_teams_of_the_paint_it_was_trained_on() {
        use crate::detect::{ColourClass, TeamColour, BLUE, RED};
        let hue = |c: ColourClass, h: f32| ColourClass { hue_deg: h, ..c };
        let teams = |r: f32, b: f32| vec![TeamColour { team: Team::Red, colour: hue(RED, r) }, TeamColour { team: Team::Blue, colour: hue(BLUE, b) }];
        assert_eq!(trained_teams(&crate::detect::standard_teams()), Team::ALL.to_vec());
        // A crimson at 350 and a blue at 240 learned from a frame are still red and blue paint.
        assert_eq!(trained_teams(&teams(350.0, 240.0)), Team::ALL.to_vec());
        // Yellow and violet washers: paint the model never saw.
        assert!(trained_teams(&teams(50.0, 280.0)).is_empty());
        assert_eq!(trained_teams(&teams(0.0, 280.0)), vec![Team::Red]);
        // A team the model does not know is left as geometry read it: no leaner made of its washer, none added.
        let board = Board::load("yocu-4").unwrap();
        let w = board.washer().unwrap().clone();
        let h = w.holes[0];
        let mut d = Detections { pieces: vec![washer(Team::Blue, h.x_mm, h.y_mm, -76.0 + 3.2)], ..Default::default() };
        let before = d.pieces.clone();
        refine_washers(&board, &[state(0, [0.99, 0.99, 0.99, 0.0, 0.0, 0.0])], &[Team::Red], &mut d);
        let blue: Vec<_> = d.pieces.iter().filter(|p| p.team == Some(Team::Blue)).cloned().collect();
        assert_eq!(blue, before, "the blue washer is left alone");
        assert!(d.pieces.iter().any(|p| p.team == Some(Team::Red)), "the red leaner the model sees is proposed");
    }

    fn washer(team: Team, x: f64, y: f64, top_z: f64) -> Detection {
        Detection::clean_outline(PieceKind::Washer, Some(team), Footprint::new(BoardPoint::new(x, y), 31.75), top_z)
    }

    fn state(hole: usize, p: [f32; 6]) -> HoleState {
        HoleState::from_outputs(hole, &p)
    }

    #[test]
    fn a_confident_leaner_recalls_the_teams_washer_in_the_hole() {
        let board = Board::load("holeyboard").unwrap();
        let h = board.washer().unwrap().holes[0];
        let mut d = Detections { pieces: vec![washer(Team::Blue, h.x_mm + 10.0, h.y_mm, 3.2), washer(Team::Red, 0.0, 1000.0, 3.2)], ..Default::default() };
        refine_washers(&board, &[state(0, [0.01, 0.97, 0.02, 0.0, 0.01, 0.0])], &Team::ALL, &mut d);
        assert_eq!(d.pieces.len(), 2);
        assert!(d.pieces[0].tilt_deg > 10.0 && d.pieces[0].doubt.is_none(), "{:?}", d.pieces[0]);
        assert!(d.pieces[1].tilt_deg.abs() < 1e-9, "the red washer elsewhere is untouched");
        let calls = crate::score::call_detections(&board, &d, crate::calls::FoulLine::Long, 0.0);
        let blue = calls.iter().find(|c| c.team == Some(Team::Blue)).unwrap();
        assert_eq!(blue.call, "leaner");
    }

    #[test]
    fn an_unsure_leaner_on_a_cup_bottom_fit_is_flagged() {
        let board = Board::load("holeyboard").unwrap();
        let h = board.washer().unwrap().holes[1];
        let mut d = Detections { pieces: vec![washer(Team::Red, h.x_mm, h.y_mm, -76.0 + 3.2)], ..Default::default() };
        refine_washers(&board, &[state(1, [0.7, 0.0, 0.3, 0.0, 0.0, 0.0])], &Team::ALL, &mut d);
        let doubt = d.pieces[0].doubt.as_deref().unwrap_or_default();
        assert!(doubt.contains("p = 0.70") && doubt.contains("fits flat in the cup"), "{doubt}");
    }

    #[test]
    fn a_confident_leaner_over_an_outline_flat_on_a_washer_in_the_cup_is_flagged() {
        let board = Board::load("holeyboard").unwrap();
        let h = board.washer().unwrap().holes[1];
        // The outline fitted one washer's thickness above the cup's bottom
        // washer: a washer lying on another, not leaning.
        let mut d = Detections { pieces: vec![washer(Team::Red, h.x_mm, h.y_mm, -76.0 + 2.0 * 3.2)], ..Default::default() };
        refine_washers(&board, &[state(1, [0.97, 0.0, 0.03, 0.0, 0.0, 0.0])], &Team::ALL, &mut d);
        let doubt = d.pieces[0].doubt.as_deref().unwrap_or_default();
        assert!(doubt.contains("fits flat in the cup") && !doubt.contains("p = "), "{doubt}");
    }

    #[test]
    fn missing_flat_washers_are_added_in_the_cup_and_flagged() {
        let board = Board::load("yocu-4").unwrap();
        let h = board.washer().unwrap().holes[2];
        let mut d = Detections { pieces: vec![washer(Team::Red, h.x_mm - 5.0, h.y_mm, -76.0 + 3.2)], ..Default::default() };
        let unsure = {
            let mut d = d.clone();
            // Two red at only p = 0.8: the second is not added (ADD_P), the blue one is.
            refine_washers(&board, &[state(2, [0.0, 0.0, 0.99, 0.8, 0.95, 0.02])], &Team::ALL, &mut d);
            d
        };
        assert_eq!(unsure.pieces.len(), 2, "{:?}", unsure.pieces);
        // One red detected; the model is sure of two red and one blue.
        refine_washers(&board, &[state(2, [0.0, 0.0, 0.99, 0.95, 0.95, 0.02])], &Team::ALL, &mut d);
        assert_eq!(d.pieces.len(), 3, "{:?}", d.pieces);
        let calls = crate::score::call_detections(&board, &d, crate::calls::FoulLine::Long, 0.0);
        assert!(calls.iter().all(|c| c.call == "in" && c.place == Some(2)), "{calls:?}");
        assert_eq!(calls.iter().filter(|c| c.review).count(), 2, "the two added washers need review: {calls:?}");
    }

    #[test]
    fn a_detection_the_model_rules_out_is_flagged_not_removed() {
        let board = Board::load("holeyboard").unwrap();
        let h = board.washer().unwrap().holes[2];
        let mut d = Detections { pieces: vec![washer(Team::Blue, h.x_mm, h.y_mm, -76.0 + 3.2)], ..Default::default() };
        refine_washers(&board, &[state(2, [0.0, 0.02, 0.0, 0.0, 0.03, 0.0])], &Team::ALL, &mut d);
        assert_eq!(d.pieces.len(), 1);
        assert!(d.pieces[0].doubt.as_deref().unwrap_or_default().contains("no blue washer"), "{:?}", d.pieces[0].doubt);
    }

    /// A holeyboard seen from 1.6 m, a red washer leaning in hole 0 and one
    /// flat in the cup of hole 1 (hole 2 empty), rendered with sensor noise.
    pub(super) fn rendered_holeyboard() -> (crate::render::LoadedScene, Vec<u8>) {
        use crate::camera::Distortion;
        use crate::piece::PieceId;
        use crate::render::scene::{CameraSpec, PieceSpec, PoseSpec, Scene, SCENE_FORMAT};
        let board = Board::load("holeyboard").unwrap();
        let w = board.washer().unwrap().clone();
        let (r, th) = (w.washer_outer_diameter_mm / 2.0, w.washer_thickness_mm);
        let (h0, h1) = (w.holes[0], w.holes[1]);
        // The fixture generator's leaner: propped on the rim, rising towards +x.
        let (tilt, d) = (25.0f64, h0.radius() - 12.0);
        let z = w.propped_centre_z(&h0, d, tilt);
        let piece = |n, x, y, z, tilt| PieceSpec {
            id: PieceId::of_team(Team::Red, n),
            kind: PieceKind::Washer,
            x_mm: x,
            y_mm: y,
            z_mm: Some(z),
            tilt_deg: tilt,
            tilt_towards_deg: 0.0,
        };
        let pieces = vec![piece(1, h0.x_mm + d, h0.y_mm, z, tilt), piece(2, h1.x_mm - 8.0, h1.y_mm + 5.0, -w.cup_depth_mm + th / 2.0, 0.0)];
        assert!(r < h0.radius());
        let intrinsics = Camera {
            image_width: 1280,
            image_height: 960,
            fx: 1150.0,
            fy: 1150.0,
            cx: 639.5,
            cy: 479.5,
            distortion: Distortion::brown(-0.08, 0.01, 0.0, 0.0, 0.0),
        };
        let pose = PoseSpec::LookAt {
            position: BoardPoint3::new(120.0, 520.0, 1600.0),
            target: BoardPoint3::new(0.0, 609.6, 0.0),
            up: [1.0, 0.0, 0.0],
        };
        let scene = Scene {
            format: SCENE_FORMAT,
            board: "holeyboard".into(),
            foul_line: Default::default(),
            construction: None,
            camera: CameraSpec { intrinsics, pose },
            pieces,
            lights: Vec::new(),
            appearance: Default::default(),
            effects: Default::default(),
            supersample: 1,
            seed: 11,
            tags: Vec::new(),
        };
        let ls = scene.validate("model test").unwrap();
        let mut bgr = crate::render::render(&ls, 2).into_raw();
        for px in bgr.chunks_mut(3) {
            px.swap(0, 2);
        }
        (ls, bgr)
    }

    #[test]
    fn the_committed_model_tells_a_rendered_leaner_from_a_flat_washer() {
        let (ls, bgr) = rendered_holeyboard();
        let cam = ls.scene.camera.intrinsics;
        let view = ColourView::new(cam.image_width as usize, cam.image_height as usize, &bgr).unwrap();
        let mut model = HoleClassifier::embedded().unwrap();
        let taps = PatchTaps::new(&cam, &ls.pose, &ls.board);
        let states = model.classify(&view, &taps, &ls.board).unwrap();
        assert_eq!(states.len(), 3, "every hole is in view: {states:?}");
        let red = team_index(Team::Red);
        // 0.5 is the decision threshold the run time uses (SEEN_P).
        assert!(states[0].leaner[red] >= SEEN_P && states[0].flat_one[red] < SEEN_P, "hole 0 holds a leaner: {:?}", states[0]);
        assert!(states[1].flat_one[red] >= SEEN_P && states[1].leaner[red] < SEEN_P, "hole 1 holds a flat washer: {:?}", states[1]);
        assert_eq!(states[1].flat_count(Team::Red), 1, "{:?}", states[1]);
        let empty = &states[2];
        assert!(empty.leaner.iter().chain(&empty.flat_one).all(|p| *p < SEEN_P), "hole 2 is empty: {empty:?}");
        // Through the pipeline: the leaner is called a leaner, the flat one in.
        let det = crate::score::detect_pieces(&view, &ls.board, &cam, &ls.pose, crate::detect::DetectorConfig::default()).unwrap();
        let calls = crate::score::call_detections(&ls.board, &det, crate::calls::FoulLine::Long, 0.0);
        let call_in = |hole: usize| calls.iter().filter(|c| c.place == Some(hole)).map(|c| c.call.as_str()).collect::<Vec<_>>();
        assert_eq!(call_in(0), vec!["leaner"], "{calls:?}");
        assert_eq!(call_in(1), vec!["in"], "{calls:?}");
    }

    #[test]
    fn a_model_file_that_is_not_onnx_is_a_load_error() {
        let e = HoleClassifier::new(b"not a model").err().expect("garbage does not load");
        assert!(matches!(e, ModelError::Load { .. }), "{e}");
    }

    #[test]
    fn other_boards_are_left_alone() {
        let board = Board::load("shuffleboard-22ft").unwrap();
        let mut d = Detections { pieces: vec![washer(Team::Red, 0.0, 100.0, 3.2)], ..Default::default() };
        let before = d.clone();
        refine_washers(&board, &[state(0, [1.0; 6])], &Team::ALL, &mut d);
        assert_eq!(d, before);
    }
}
