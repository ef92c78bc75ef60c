//! A shuffleboard weight's cap learned from a frame: where the set-up does not
//! give the cap's radius, the weights' own outlines measure it (every weight of
//! a set has the same cap), and the frame is read again with it.

use super::Detections;
use crate::board::Board;
use crate::piece::{PieceKind, MIN_CAP_RADIUS_MM};

/// A cap is learned from at least this many weights on the surface that agree,
/// and more than half of those seen: one weight's outline could be a chipped or
/// odd cap (or one fitted on a neighbour's edge); two that agree are the set's.
pub const MIN_WEIGHTS: usize = 2;
/// The weights' free outline radii must all lie this close (mm) to their
/// median, or within [`MIN_RING_PX`] of a pixel where a weight is seen
/// coarser: one set's caps fit to a few tenths of a mm where sharp; a weight
/// fitted on its ring or a neighbour's edge lies millimetres off.
pub const MAX_DISAGREEMENT_MM: f64 = 1.0;
/// The ring seen round a learned cap must also be at least this many pixels
/// wide: a free outline fit's radius runs small by up to a third of a pixel
/// where the outline is blurred or a few pixels across (this project's
/// fisheye renders, 6 mm a pixel at the frame's edge: full-top caps fitted
/// 0.2-0.35 px small).
pub const MIN_RING_PX: f64 = 0.5;

/// The cap radius (mm) the weights found in `out` agree on, if they show a cap
/// narrower than the body by more than [`super::CAP_RING_MIN_MM`]; `None`
/// when they show the whole top, disagree, or are too few. `top_z_mm`: the
/// weights' top (weights lower down lie in the gutter, measured at another height).
pub(super) fn learned_cap(board: &Board, out: &Detections, top_z_mm: f64) -> Option<f64> {
    let body = board.piece().radius_mm;
    // More weights of a team than a round throws: something else is read as
    // weights, and its outlines say nothing of the caps.
    let most = crate::piece::Team::ALL.iter().map(|t| out.pieces.iter().filter(|d| d.team == Some(*t)).count()).max().unwrap_or(0);
    if most > board.pieces_a_side() {
        return None;
    }
    let weights: Vec<(f64, f64)> = out
        .pieces
        .iter()
        .filter(|d| d.kind == PieceKind::Weight && (d.top_z_mm - top_z_mm).abs() < 1e-6)
        .filter_map(|d| d.outline_radius_mm.map(|r| (r, d.mm_per_px)))
        .filter(|(r, px)| r.is_finite() && px.is_finite())
        .collect();
    if weights.len() < MIN_WEIGHTS {
        return None;
    }
    let all = median(weights.iter().map(|w| w.0).collect());
    let agree: Vec<(f64, f64)> = weights.iter().copied().filter(|(r, px)| (r - all).abs() <= MAX_DISAGREEMENT_MM.max(MIN_RING_PX * px)).collect();
    if agree.len() < MIN_WEIGHTS || 2 * agree.len() <= weights.len() {
        return None;
    }
    let radius = median(agree.iter().map(|w| w.0).collect());
    let mm_per_px = median(agree.iter().map(|w| w.1).collect());
    let ring = body - radius;
    (ring > super::CAP_RING_MIN_MM && ring > MIN_RING_PX * mm_per_px && radius >= MIN_CAP_RADIUS_MM).then_some(radius)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::detect::{Detection, MeasuredBy};
    use crate::geom::{BoardPoint, Footprint};

    fn weight(r: f64, top: f64) -> Detection {
        Detection {
            kind: PieceKind::Weight,
            team: Some(crate::piece::Team::Red),
            footprint: Footprint::new(BoardPoint::new(0.0, 100.0), 29.37),
            top_z_mm: top,
            tilt_deg: 0.0,
            sigma_mm: 0.2,
            fit_rms_mm: 0.1,
            edges_found: 70,
            probes: 72,
            mm_per_px: 1.0,
            doubt: None,
            measured_by: MeasuredBy::Outline,
            outline_radius_mm: Some(r),
        }
    }

    fn learned(radii: &[(f64, f64)]) -> Option<f64> {
        let board = Board::load("shuffleboard-22ft").unwrap();
        let out = Detections { pieces: radii.iter().map(|&(r, z)| weight(r, z)).collect(), ..Default::default() };
        learned_cap(&board, &out, 25.0)
    }

    #[test]
    fn weights_agreeing_on_a_smaller_cap_teach_it() {
        let cap = learned(&[(25.4, 25.0), (25.7, 25.0), (25.5, 25.0)]).expect("a cap");
        assert!((cap - 25.5).abs() < 1e-9, "{cap}");
    }

    #[test]
    fn whole_tops_one_weight_or_disagreement_teach_nothing() {
        assert_eq!(learned(&[(29.3, 25.0), (29.5, 25.0)]), None, "the whole top");
        assert_eq!(learned(&[(24.0, 25.0)]), None, "one weight");
        assert_eq!(learned(&[(22.0, 25.0), (26.0, 25.0)]), None, "disagreeing");
        // One odd weight among agreeing ones is left out.
        let cap = learned(&[(25.4, 25.0), (25.6, 25.0), (27.9, 25.0)]).expect("the two that agree");
        assert!((cap - 25.5).abs() < 1e-9, "{cap}");
        // A ring under half a pixel wide is blur (here 1.5 mm at 6 mm a pixel).
        let board = Board::load("shuffleboard-22ft").unwrap();
        let mut tiny = Detections { pieces: vec![weight(27.9, 25.0), weight(27.8, 25.0)], ..Default::default() };
        tiny.pieces.iter_mut().for_each(|d| d.mm_per_px = 6.0);
        assert_eq!(learned_cap(&board, &tiny, 25.0), None, "blur");
        // A weight in the gutter (measured lower) does not count.
        assert_eq!(learned(&[(24.0, 25.0), (24.1, 25.0 - 38.1)]), None, "one on the surface");
    }
}
