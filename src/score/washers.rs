//! The hole-state model's washer corrections checked against geometry: a washer the model calls leaning gets its
//! leaning pose measured (or, where none explains the hole, the outline decides); a washer the model places flat in a
//! cup is placed by the cup search, and dropped where the cup's floor contradicts it; what only the model sees is
//! review.

use super::*;

/// Washers called leaners (tilted) get their leaning pose measured: a flat
/// outline fit places a tilted washer tens of mm off its centre. Where no
/// leaning pose explains the hole, geometry decides between the model and the
/// outline: a clean outline fitted flat where a washer rests (on the board
/// with its centre outside the rim, or flat in the cup) is a washer lying
/// there, and is called so, flagged; otherwise the leaner stays, its centre
/// brought inside the rim.
pub(super) fn place_leaners(det: &Detector, view: &ColourView, board: &Board, detections: &mut Detections) {
    let Some(w) = board.washer() else { return };
    // Those the detector measured leaning are placed already.
    for d in detections.pieces.iter_mut().filter(|d| d.tilt_deg.abs() > 1.0 && d.measured_by != MeasuredBy::LeaningPose) {
        let (Some(team), Some(hole)) = (
            d.team,
            w.holes
                .iter()
                .enumerate()
                .min_by(|a, b| a.1.centre().distance(d.footprint.centre).total_cmp(&b.1.centre().distance(d.footprint.centre)))
                .map(|(i, _)| i),
        ) else {
            continue;
        };
        if let Some(fit) = det.measure_leaner(view, hole, team) {
            d.footprint = Footprint::new(fit.centre.on_plane(), d.footprint.radius_mm);
            d.top_z_mm = fit.centre.z_mm + w.washer_thickness_mm / 2.0;
            d.tilt_deg = fit.tilt_deg;
            d.measured_by = MeasuredBy::LeaningPose;
            d.sigma_mm = fit.sigma_mm;
            continue;
        }
        no_leaning_pose(d, &w.holes[hole], w);
    }
}

/// A washer placed on a cup's floor by its team's colour there ([`MeasuredBy::FloorColour`]), in a hole where a
/// washer of its team was measured leaning: the leaner's low edge down in the cup shows that colour too. It is placed
/// again with the leaner (and every other piece found) hiding what it covers; where too little of its colour then
/// shows, the colour was the leaner's and the washer is dropped. (Own render 46: a leaner in the 1-hole, its low
/// edge read as a second washer of its team flat in the cup, which scored 2 for it.)
pub(super) fn drop_floor_washers_leaners_explain(det: &Detector, view: &ColourView, board: &Board, detections: &mut Detections) {
    let Some(w) = board.washer() else { return };
    let hole_of = |d: &crate::detect::Detection| w.hole_enclosing(d.footprint.centre);
    let leaning: Vec<(Team, usize)> =
        detections.pieces.iter().filter(|d| d.measured_by == MeasuredBy::LeaningPose).filter_map(|d| Some((d.team?, hole_of(d)?))).collect();
    let explained: Vec<bool> = (0..detections.pieces.len())
        .map(|i| {
            let d = &detections.pieces[i];
            let (Some(team), Some(hole)) = (d.team, hole_of(d)) else { return false };
            if d.measured_by != MeasuredBy::FloorColour || !leaning.contains(&(team, hole)) {
                return false;
            }
            let over: Vec<crate::detect::Detection> = detections.pieces.iter().enumerate().filter(|(j, _)| *j != i).map(|(_, p)| p.clone()).collect();
            det.place_on_cup_floor(view, hole, team, &over).is_none()
        })
        .collect();
    detections.pieces = std::mem::take(&mut detections.pieces).into_iter().zip(explained).filter(|(_, gone)| !gone).map(|(d, _)| d).collect();
}

/// A washer the model calls a leaner in hole `h` of board `w` where no leaning
/// pose explains the hole: see [`place_leaners`].
fn no_leaning_pose(d: &mut crate::detect::Detection, h: &crate::board::Hole, w: &crate::board::WasherBoard) {
    if d.measured_by != MeasuredBy::Outline {
        return;
    }
    let dist = d.footprint.centre.distance(h.centre());
    // The doubts the hole model left on the outline (`crate::model::refine_washers`).
    let said = |what: &str| d.doubt.as_deref().is_some_and(|why| why.contains(what));
    let over_the_rim = said(crate::model::OVER_THE_RIM) && dist >= h.radius();
    // The model's doubt on the outline, and where the outline lies flat instead.
    let flat = if said(crate::model::FLAT_IN_CUP) {
        Some((crate::model::FLAT_IN_CUP, "in the cup"))
    } else if over_the_rim && crate::model::fits_flat_on_board(w, d.top_z_mm) {
        Some((crate::model::OVER_THE_RIM, "on the board beside it"))
    } else {
        None
    };
    if let Some((doubt, place)) = flat {
        d.tilt_deg = 0.0;
        let called = format!("hole model calls a leaner, but no leaning pose explains the hole and the outline fits flat {place}: called flat");
        d.doubt = Some(d.doubt.take().unwrap_or_default().replace(doubt, &called));
    } else if over_the_rim {
        // The model's leaner, its centre inside the rim (a leaner's lies over the hole).
        let k = (h.radius() - 1.0) / dist;
        let c = d.footprint.centre;
        d.footprint = Footprint::new(BoardPoint::new(h.x_mm + (c.x_mm - h.x_mm) * k, h.y_mm + (c.y_mm - h.y_mm) * k), d.footprint.radius_mm);
    }
}

/// The learned model proposes, geometry decides: a washer the hole model alone
/// sees (no outline, no colour on the cup's floor placed it) is not scored; it
/// is reported unexplained, so the frame needs review.
pub(super) fn model_only_to_review(board: &Board, detections: &mut Detections) {
    let area_mm2 = std::f64::consts::PI * board.piece().radius_mm.powi(2);
    let (seen, kept): (Vec<_>, Vec<_>) = detections.pieces.drain(..).partition(|d| d.measured_by == MeasuredBy::HoleModel);
    detections.pieces = kept;
    detections.unexplained.extend(seen.into_iter().map(|d| crate::detect::Unexplained {
        kind: d.kind,
        team: d.team,
        centre: d.footprint.centre,
        area_mm2,
        reason: d.doubt.unwrap_or_else(|| "seen by the hole model only".to_string()) + ": not scored",
    }));
}

/// Washers the hole model alone saw flat in a cup (placed at the hole's
/// centre) are placed by their colour on the cup's floor where enough shows
/// past the pieces measured over it (a leaner's low edge in the cup is the
/// leaner's colour, not another washer's).
pub(super) fn place_cup_washers(det: &Detector, view: &ColourView, board: &Board, detections: &mut Detections) {
    let Some(w) = board.washer() else { return };
    let measured: Vec<crate::detect::Detection> = detections.pieces.iter().filter(|d| d.measured_by != MeasuredBy::HoleModel).cloned().collect();
    for d in detections.pieces.iter_mut() {
        let Some((team, hole)) = flat_cup_claim(w, d) else { continue };
        if let Some((centre, sigma)) = det.place_on_cup_floor(view, hole, team, &measured) {
            d.footprint = Footprint::new(centre, d.footprint.radius_mm);
            d.sigma_mm = sigma;
            d.measured_by = MeasuredBy::FloorColour;
        }
    }
}

/// Washers the hole model alone saw flat in a cup where the cup's floor in view shows none of their team's paint:
/// the learned model proposes, the image decides ([`Detector::cup_floor_shows_none`]); such a claim is dropped.
/// Claims the floor cannot check (a leaner, a floor mostly hidden) stay for review.
pub(super) fn drop_contradicted_cup_washers(det: &Detector, view: &ColourView, board: &Board, detections: &mut Detections) {
    let Some(w) = board.washer() else { return };
    let measured: Vec<crate::detect::Detection> = detections.pieces.iter().filter(|d| d.measured_by != MeasuredBy::HoleModel).cloned().collect();
    detections.pieces.retain(|d| flat_cup_claim(w, d).is_none_or(|(team, hole)| !det.cup_floor_shows_none(view, hole, team, &measured)));
}

/// A washer only the hole model sees lying flat in a cup: its team and the hole.
fn flat_cup_claim(w: &crate::board::WasherBoard, d: &crate::detect::Detection) -> Option<(Team, usize)> {
    if d.measured_by != MeasuredBy::HoleModel || d.tilt_deg.abs() > 1.0 {
        return None;
    }
    Some((d.team?, w.hole_enclosing(d.footprint.centre)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn without_a_leaning_pose_a_flat_outline_beside_the_hole_stays_flat() {
        let board = Board::load("holeyboard").unwrap();
        let w = board.washer().unwrap();
        let h = w.holes[0];
        let th = w.washer_thickness_mm;
        let model_leaner = |x: f64, top_z: f64| {
            let mut d = crate::detect::Detection::clean_outline(PieceKind::Washer, Some(Team::Red), Footprint::new(BoardPoint::new(x, h.y_mm), 31.75), top_z);
            d.tilt_deg = crate::model::MODEL_LEANER_TILT_DEG;
            d.doubt = Some(crate::model::OVER_THE_RIM.to_string());
            d
        };
        // A clean outline fitted flat on the board, its centre 4 mm outside the rim: a washer lying there.
        let mut beside = model_leaner(h.x_mm + h.radius() + 4.0, th);
        no_leaning_pose(&mut beside, &h, w);
        assert!(beside.tilt_deg.abs() < 1e-9, "{beside:?}");
        assert!((beside.footprint.centre.x_mm - (h.x_mm + h.radius() + 4.0)).abs() < 1e-9, "{beside:?}");
        assert!(beside.doubt.as_deref().unwrap().contains("called flat"), "{beside:?}");
        // Fitted lower than the surface (a tilted outline's fit): the model's leaner, brought inside the rim.
        let mut low = model_leaner(h.x_mm + h.radius() + 4.0, th - 3.0);
        no_leaning_pose(&mut low, &h, w);
        assert!(low.tilt_deg > 1.0, "{low:?}");
        assert!(low.footprint.centre.distance(h.centre()) < h.radius(), "{low:?}");
        // Fitted flat in the cup, on a washer lying there: flat, in.
        let mut in_cup = model_leaner(h.x_mm + 3.0, -w.cup_depth_mm + 2.0 * th);
        in_cup.doubt = Some(crate::model::FLAT_IN_CUP.to_string());
        no_leaning_pose(&mut in_cup, &h, w);
        assert!(in_cup.tilt_deg.abs() < 1e-9 && in_cup.doubt.as_deref().unwrap().contains("called flat"), "{in_cup:?}");
    }
}
