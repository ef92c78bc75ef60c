//! Piece models: one per kind of piece (weight, washer, disc) behind one
//! interface. A model says how its pieces look ([`PieceShape`]), where they can
//! rest (the heights an outline is verified at), how its proposals are made and
//! verified, and what it settles once every proposal is verified (stacks in a
//! cup, half-hidden discs). A new piece style or board is a new model or a
//! parameter of one.

mod disc;
mod explain;
mod leaner;
mod outline;
mod stack;
mod washer;
mod weight;

pub use leaner::{LeanerFit, LEANER_POSE_SIGMA_MM};
pub use weight::{WeightCap, CAP_RING_MIN_MM, MAX_CAP_RECESS_MM};

use super::proposals::{self, Blob};
use super::verify::{Ctx, PieceShape};
use super::{DetectError, Detection, Detections, Unexplained};
use crate::board::{Board, Layout};
use crate::geom::{BoardPoint, Footprint};
use crate::measure::CircleFit;
use crate::piece::Team;

/// A blob whose area is below this fraction of one piece is noise (glare
/// fringes, a chip of paint), not a piece.
pub const MIN_PIECE_AREA_FRACTION: f64 = 0.35;
/// A blob whose area is this far (as a fraction of one piece) from a whole
/// number of pieces is not explained as pieces: flagged for review.
pub const AREA_MISMATCH_FRACTION: f64 = 0.4;

/// Where a piece rests: the height its outline is measured at and the fit
/// there, with that height's standard uncertainty where nothing fixes it (the
/// ground beside a washer board, found from the outline's apparent size).
pub(super) struct Rest {
    pub z_mm: f64,
    pub fit: CircleFit,
    pub height: RestHeight,
}

/// How well a rest height is known.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum RestHeight {
    /// The board fixes it (its surface, a cup's floor, a gutter), or the set-up gives it.
    Fixed,
    /// Measured from the outline's apparent size, with this standard uncertainty (mm).
    FromSize { sigma_mm: f64 },
    /// Neither fixed nor measured (a weight's cap set into its body by an
    /// amount not given): this standard uncertainty (mm) about the height taken.
    Uncertain { sigma_mm: f64 },
}

/// The standard uncertainty (mm) of a height known only to lie somewhere in a span `width_mm` wide, every height
/// in it alike: the standard deviation of a uniform spread.
pub(super) fn uniform_sigma_mm(width_mm: f64) -> f64 {
    width_mm / 12f64.sqrt()
}

impl Rest {
    /// At a height the board fixes.
    pub fn fixed(z_mm: f64, fit: CircleFit) -> Rest {
        Rest { z_mm, fit, height: RestHeight::Fixed }
    }
}

/// What a blob of colour a flat fit cannot explain alone turned out to be.
pub(super) enum Partial {
    /// Not the model's case: verify it as whole pieces.
    NotMine,
    /// Handled (a piece found, or the colour reported unexplained, or noise).
    Done,
}

/// One kind of piece: how it looks, where it rests, how it is found.
pub(super) trait PieceModel: Send + Sync {
    /// Its outline's size and height, and whether a team colour tells it.
    fn shape(&self) -> PieceShape;

    /// Proposes and verifies every piece in the frame.
    fn find(&self, cx: &Ctx, out: &mut Detections) {
        find_by_colour(cx, out);
    }

    /// The height the piece rests at, from a free outline fit `fit` at its top
    /// height on the surface: a height where the same image outline is a piece
    /// of its real size and where it can rest (the surface, a gutter, a cup's
    /// floor, a partition's top, the ground), with the fit there.
    fn rest(&self, cx: &Ctx, fit: CircleFit, class: usize) -> Result<Rest, DetectError>;

    /// A colour blob seen only in part (a crescent down a cup, a sliver beside
    /// the board): handled here if the model knows the case.
    fn partial(&self, _cx: &Ctx, _blob: &Blob, _team: Option<Team>, _class: usize, _out: &mut Detections) -> Partial {
        Partial::NotMine
    }

    /// A piece of the colour at `seen` that no flat outline explains, placed
    /// another way (on a cup's floor by its colour, by a leaning pose).
    fn instead(&self, _cx: &Ctx, _seen: BoardPoint, _team: Option<Team>, _class: usize) -> Option<Detection> {
        None
    }

    /// Once every proposal is verified: what the pieces found say about each other.
    fn settle(&self, _cx: &Ctx, _out: &mut Detections) {}
}

/// The model of a board's pieces (`cap`: what the set-up says of a weight's cap; `pose_sigma_mm`: how well the
/// camera pose places a point on the board, [`crate::detect::DetectorConfig::pose_sigma_mm`]).
pub(super) fn model_for(board: &Board, cap: WeightCap, pose_sigma_mm: f64) -> Box<dyn PieceModel> {
    let p = board.piece();
    match &board.layout {
        Layout::Shuffleboard(s) => Box::new(weight::WeightModel::new(p, s, cap)),
        Layout::Washer(w) => Box::new(washer::WasherModel::new(p, w)),
        Layout::Sjoelbak(s) => Box::new(disc::DiscModel::new(p, s, board.surface.half_width(), pose_sigma_mm)),
    }
}

/// Places a washer lying flat on hole `hole`'s floor by its team's colour there.
pub(super) fn place_on_cup_floor(cx: &Ctx, hole: usize, class: usize) -> Option<CircleFit> {
    stack::cup_template(cx, cx.geo.board.washer()?, hole, class)
}

/// Whether hole `hole`'s floor in view shows no paint of team `class` where a flat washer would be seen.
pub(super) fn cup_floor_shows_none(cx: &Ctx, hole: usize, class: usize) -> bool {
    cx.geo.board.washer().is_some_and(|w| stack::cup_floor_shows_none(cx, w, hole, class))
}

/// Measures a washer leaning in hole `hole`.
pub(super) fn measure_leaner(cx: &Ctx, hole: usize, class: usize) -> Option<LeanerFit> {
    leaner::measure_leaner(cx, cx.geo.board.washer()?, hole, cx.colour(class)?)
}

/// The team-coloured pieces' proposals and their verification: each team's
/// colour blobs, each verified as the whole number of pieces its area holds
/// (k-means starts), what the model settles, and the colour left unexplained.
pub(super) fn find_by_colour(cx: &Ctx, out: &mut Detections) {
    let teams: Vec<Team> = cx.teams.iter().map(|t| t.team).collect();
    // Per team: its colour's regions larger than pieces, or `None` where the colour floods the view.
    let mut set_aside: Vec<Option<Vec<Blob>>> = Vec::with_capacity(teams.len());
    // Each team's blobs depend on its colour mask alone: labelled on the machine's cores, taken in the teams' order.
    let classes: Vec<usize> = (0..teams.len()).collect();
    let all_blobs = crate::parallel::map_in_order(&classes, |_: &mut (), &k| proposals::colour_blobs(cx, k));
    for ((k, team), blobs) in teams.iter().enumerate().zip(all_blobs) {
        let (blobs, regions) = proposals::set_aside_regions(cx, blobs, Some(*team), out);
        if proposals::flooded(cx, &blobs, Some(*team), out) {
            set_aside.push(None);
            continue;
        }
        for blob in &blobs {
            verify_blob(cx, blob, Some(*team), k, out);
        }
        set_aside.push(Some(regions));
    }
    cx.model.settle(cx, out);
    for (k, team) in teams.iter().enumerate() {
        if let Some(regions) = &set_aside[k] {
            proposals::account_for_colour(cx, k, Some(*team), out, &proposals::anywhere, regions);
        }
    }
}

/// Verifies one colour blob as pieces.
fn verify_blob(cx: &Ctx, blob: &Blob, team: Option<Team>, k: usize, out: &mut Detections) {
    let shape = cx.geo.shape;
    let pieces = blob.pieces;
    let unexplained = |centre: BoardPoint, area_mm2: f64, reason: String| Unexplained { kind: shape.kind, team, centre, area_mm2, reason };
    match cx.model.partial(cx, blob, team, k, out) {
        Partial::Done => return,
        Partial::NotMine => {}
    }
    if pieces < MIN_PIECE_AREA_FRACTION {
        return;
    }
    if blob.thin {
        let reason = format!("a thin run of the colour ({:.1} mm across): not a piece", blob.minor_mm);
        out.unexplained.push(unexplained(blob.centre, blob.area_mm2, reason));
        return;
    }
    let n = pieces.round().max(1.0) as usize;
    let mut fitted = 0;
    for start in blob.starts(&cx.geo.grid, n) {
        let share = blob.area_mm2 / n as f64;
        match cx.measure(Footprint::new(start, shape.radius_mm), team, k) {
            // Two starts in one blob whose fits converge on one piece:
            // the blob's area is not explained by the pieces found.
            Ok(d) if found_already(out, &d, shape.radius_mm) => {
                let reason = format!("the colour holds {pieces:.2} pieces' worth, but its fits converge on fewer pieces");
                out.unexplained.push(unexplained(start, share, reason));
            }
            Ok(d) => {
                out.pieces.push(d);
                fitted += 1;
            }
            Err(_) if let Some(d) = cx.model.instead(cx, start, team, k) => {
                out.pieces.push(d);
                fitted += 1;
            }
            Err(e) => out.unexplained.push(unexplained(start, share, e.to_string())),
        }
    }
    if (pieces - n as f64).abs() > AREA_MISMATCH_FRACTION && fitted > 0 {
        let reason = format!("colour area of {pieces:.2} pieces is not a whole number of pieces");
        out.unexplained.push(unexplained(blob.centre, blob.area_mm2, reason));
    }
}

/// Whether a piece of `d`'s team already found is `d` itself.
pub(super) fn found_already(out: &Detections, d: &Detection, radius_mm: f64) -> bool {
    out.pieces.iter().any(|p| p.team == d.team && super::same_piece(p, d, radius_mm))
}
