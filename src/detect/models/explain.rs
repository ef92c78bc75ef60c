//! How well a reading of the washers at a hole explains the team's colour seen round it: each sample of the image
//! over the hole and its surround is the team's colour or not, and the reading's pieces lie on its line of sight or
//! not. The test between two readings of one washer (flat on the cup's floor, leaning on the rim) by what each says
//! the camera sees.

use crate::board::WasherBoard;
use crate::detect::colour::bgr_to_hsv;
use crate::detect::sight::PieceSolid;
use crate::detect::verify::Ctx;
use crate::detect::ColourClass;
use crate::geom::{BoardPoint, BoardPoint3};

/// The image is sampled through board points this far apart (mm) on the surface's plane: a washer (63.5 mm across)
/// spans some 30 of them each way, ample to tell readings apart that differ by a washer's tilt.
const SAMPLE_STEP_MM: f64 = 2.0;

/// What a reading explains of the team's colour round a hole.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Explained {
    /// Samples of the team's colour.
    pub coloured: usize,
    /// Of those, the ones no piece of the reading lies in front of.
    pub unexplained: usize,
    /// Samples the reading's pieces cover that show another colour.
    pub overreach: usize,
}

impl Explained {
    /// The reading's errors (colour it leaves unexplained, and pieces where the colour is not) as a share of the
    /// team's colour seen; `None` where none is seen.
    pub fn error(&self) -> Option<f64> {
        (self.coloured > 0).then(|| (self.unexplained + self.overreach) as f64 / self.coloured as f64)
    }
}

/// How well `reading` (the team's pieces as solids) explains the colour of `class` seen over hole `hole` and a
/// washer's width round it: every sample's line of sight, from the camera to where it ends (the surface, or down the
/// opening the cup's floor or far wall), meets a piece of the reading or not. A sample whose line of sight meets one
/// of the other pieces found (`others`: another team's) before the reading's shows that piece: it says nothing of
/// the reading. (Lines of sight fall steeply from an overhead camera, so of two pieces on one the higher is met
/// first.) With the hole out of view nothing is seen: no colour, and no [`Explained::error`].
pub(super) fn colour_explained(cx: &Ctx, w: &WasherBoard, hole: usize, class: ColourClass, reading: &[PieceSolid], others: &[PieceSolid]) -> Explained {
    let h = w.holes[hole];
    let eye = cx.geo.pose.centre();
    let reach = h.radius() + w.washer_outer_diameter_mm / 2.0;
    let n = (reach / SAMPLE_STEP_MM).ceil() as i32;
    let mut e = Explained { coloured: 0, unexplained: 0, overreach: 0 };
    for i in -n..=n {
        for j in -n..=n {
            let q = BoardPoint::new(h.x_mm + i as f64 * SAMPLE_STEP_MM, h.y_mm + j as f64 * SAMPLE_STEP_MM);
            if q.distance(h.centre()) > reach {
                continue;
            }
            let Some(bgr) = cx.geo.pose.project(&cx.geo.camera, q.at_height(0.0)).and_then(|px| cx.frame.sample(px)) else { continue };
            let coloured = class.contains(bgr_to_hsv(bgr));
            let end = sight_end(eye, q, h.centre(), h.radius(), w.cup_depth_mm);
            let highest = |pieces: &[PieceSolid]| pieces.iter().filter(|p| p.meets(eye, end)).map(|p| p.centre.z_mm).fold(f64::NEG_INFINITY, f64::max);
            let (ours, theirs) = (highest(reading), highest(others));
            if theirs > ours {
                continue;
            }
            let covered = ours > f64::NEG_INFINITY;
            match (coloured, covered) {
                (true, true) => e.coloured += 1,
                (true, false) => (e.coloured, e.unexplained) = (e.coloured + 1, e.unexplained + 1),
                (false, true) => e.overreach += 1,
                (false, false) => {}
            }
        }
    }
    e
}

/// Where the camera's line of sight through the surface point `q` ends: at `q` on the wood, or, through the opening
/// of a hole of radius `radius` at `centre`, where it meets the cup's floor `depth` below or its far wall first.
fn sight_end(eye: BoardPoint3, q: BoardPoint, centre: BoardPoint, radius: f64, depth: f64) -> BoardPoint3 {
    if q.distance(centre) >= radius || eye.z_mm <= 0.0 {
        return q.at_height(0.0);
    }
    // The ray from q onwards, away from the eye: q + t d, falling one mm a unit of t.
    let d = [(q.x_mm - eye.x_mm) / eye.z_mm, (q.y_mm - eye.y_mm) / eye.z_mm];
    let (ox, oy) = (q.x_mm - centre.x_mm, q.y_mm - centre.y_mm);
    let a = d[0] * d[0] + d[1] * d[1];
    // Where it leaves the cup's cylinder (the far root), if before the floor.
    let wall = if a > 1e-12 {
        let b = ox * d[0] + oy * d[1];
        let c = ox * ox + oy * oy - radius * radius;
        (-b + (b * b - a * c).max(0.0).sqrt()) / a
    } else {
        f64::INFINITY
    };
    let t = wall.min(depth);
    BoardPoint3::new(q.x_mm + t * d[0], q.y_mm + t * d[1], -t)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_of_sight_down_a_hole_ends_on_its_floor_or_far_wall() {
        let (centre, radius, depth) = (BoardPoint::new(0.0, 0.0), 50.0, 76.0);
        // Straight down the middle: the floor.
        let eye = BoardPoint3::new(0.0, 0.0, 1000.0);
        let end = sight_end(eye, BoardPoint::new(0.0, 0.0), centre, radius, depth);
        assert!((end.z_mm + depth).abs() < 1e-9 && end.x_mm.abs() < 1e-9, "{end:?}");
        // On the wood: the point itself.
        let end = sight_end(eye, BoardPoint::new(60.0, 0.0), centre, radius, depth);
        assert!(end.z_mm.abs() < 1e-9 && (end.x_mm - 60.0).abs() < 1e-9, "{end:?}");
        // From far beside, through the opening's far half: the far wall, 40 mm on at 1.01 mm a mm of fall.
        let eye = BoardPoint3::new(-1000.0, 0.0, 1000.0);
        let end = sight_end(eye, BoardPoint::new(10.0, 0.0), centre, radius, depth);
        assert!((end.x_mm - radius).abs() < 1e-9 && end.y_mm.abs() < 1e-9, "{end:?}");
        assert!((end.z_mm + 40.0 / 1.01).abs() < 1e-9, "{end:?}");
    }
}
