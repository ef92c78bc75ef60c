//! The `Calls` stage: turns detections into referee's calls with their margins,
//! uncertainties and review flags, and gathers them into the frame's report.

use crate::board::{Board, Layout};
use crate::calls::{self, Boundary, FoulLine, WasherPose};
use crate::detect::Detections;
use crate::geom::Footprint;
use crate::piece::{PieceId, PieceKind, Team};
use serde::{Deserialize, Serialize};

/// A call is flagged for review when its margin is within this many standard
/// uncertainties of the boundary: at 3 sigma a normal measurement error flips
/// fewer than 0.14 % of unflagged calls.
pub const REVIEW_SIGMAS: f64 = 3.0;

/// Uncertainty no measurement goes below (mm): the board itself is only known
/// to this precision (paint edges, line placement, board flatness).
pub const SIGMA_FLOOR_MM: f64 = 0.1;

/// One piece's call, as reported.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PieceReport {
    pub id: PieceId,
    pub kind: PieceKind,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub team: Option<Team>,
    pub x_mm: f64,
    pub y_mm: f64,
    /// The call's name: `off short zone1 zone2 zone3 hanger corner_hanger` (shuffleboard),
    /// `in leaner on_board off` (washers), `compartment none` (sjoelen).
    pub call: String,
    /// Points of the zone, hole or compartment, where the call has one.
    pub value: Option<u32>,
    /// The hole (washers) or compartment (sjoelen) index, where the call has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub place: Option<usize>,
    pub boundary: Boundary,
    pub margin_mm: f64,
    pub sigma_mm: f64,
    /// The margin is within [`REVIEW_SIGMAS`] sigma of the boundary, or the detection is in doubt.
    pub review: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub doubt: Option<String>,
}

/// Points of a shuffleboard zone (the common 1/2/3 scale; hangers count by game).
fn shuffle_value(call: calls::ShuffleCall) -> Option<u32> {
    use calls::ShuffleCall::*;
    match call {
        Zone1 => Some(1),
        Zone2 => Some(2),
        Zone3 => Some(3),
        Hanger | CornerHanger | Off | Short => None,
    }
}

/// Calls every detected piece. `pose_sigma_mm` is the camera pose's contribution
/// to each footprint's uncertainty (from the localisation's residuals).
pub fn call_detections(board: &Board, detections: &Detections, foul: FoulLine, pose_sigma_mm: f64) -> Vec<PieceReport> {
    let mut numbers: std::collections::BTreeMap<Option<Team>, u32> = Default::default();
    let mut out = Vec::with_capacity(detections.pieces.len());
    let mut order: Vec<usize> = (0..detections.pieces.len()).collect();
    // Number pieces from the target end outwards, per team: stable, readable ids.
    order.sort_by(|&a, &b| {
        let (pa, pb) = (&detections.pieces[a].footprint.centre, &detections.pieces[b].footprint.centre);
        pa.y_mm.total_cmp(&pb.y_mm).then(pa.x_mm.total_cmp(&pb.x_mm))
    });
    for i in order {
        let d = &detections.pieces[i];
        let n = numbers.entry(d.team).or_insert(0);
        *n += 1;
        let id = match d.team {
            Some(t) => PieceId::of_team(t, *n),
            None => PieceId::disc(*n),
        };
        let sigma = (d.sigma_mm.powi(2) + pose_sigma_mm.powi(2) + SIGMA_FLOOR_MM.powi(2)).sqrt();
        let fp = d.footprint;
        let (call, value, place, boundary, margin) = call_one(board, fp, d.top_z_mm, d.tilt_deg, foul);
        let review = margin.abs() < REVIEW_SIGMAS * sigma || d.doubt.is_some();
        out.push(PieceReport {
            id,
            kind: d.kind,
            team: d.team,
            x_mm: fp.centre.x_mm,
            y_mm: fp.centre.y_mm,
            call,
            value,
            place,
            boundary,
            margin_mm: margin,
            sigma_mm: sigma,
            review,
            doubt: d.doubt.clone(),
        });
    }
    out
}

/// The call of one footprint on `board`: name, value, hole/compartment, boundary, margin.
fn call_one(board: &Board, fp: Footprint, top_z: f64, tilt_deg: f64, foul: FoulLine) -> (String, Option<u32>, Option<usize>, Boundary, f64) {
    match &board.layout {
        Layout::Shuffleboard(s) => {
            let m = calls::shuffle_call(board, s, fp, foul);
            (m.call.name().to_string(), shuffle_value(m.call), None, m.boundary, m.margin_mm)
        }
        Layout::Sjoelbak(s) => {
            let m = calls::sjoel_call(s, fp);
            match m.call {
                calls::SjoelCall::Compartment { compartment } => {
                    ("compartment".into(), Some(s.compartments[compartment].value), Some(compartment), m.boundary, m.margin_mm)
                }
                calls::SjoelCall::None => ("none".into(), None, None, m.boundary, m.margin_mm),
            }
        }
        Layout::Washer(w) => {
            let centre_z = top_z - w.washer_thickness_mm / 2.0;
            let pose = WasherPose { centre: fp.centre.at_height(centre_z), tilt_deg };
            let m = calls::washer_call(board, w, pose);
            match m.call {
                calls::WasherCall::In { hole } => ("in".into(), Some(w.holes[hole].value), Some(hole), m.boundary, m.margin_mm),
                calls::WasherCall::Leaner { hole } => {
                    ("leaner".into(), Some(w.holes[hole].value), Some(hole), m.boundary, m.margin_mm)
                }
                calls::WasherCall::OnBoard => ("on_board".into(), None, None, m.boundary, m.margin_mm),
                calls::WasherCall::Off => ("off".into(), None, None, m.boundary, m.margin_mm),
            }
        }
    }
}
