//! The washer of washer boards (HoleyBoard, YOCU): a ring that rests on the
//! surface, flat on a cup's floor (seen through the hole's opening), leaning on
//! a hole's rim, or on the ground beside the board. Its rest height comes from
//! its outline's apparent size and where its line of sight can reach.

use super::explain::colour_explained;
use super::{found_already, leaner, outline, stack, Partial, PieceModel, Rest, RestHeight, AREA_MISMATCH_FRACTION, MIN_PIECE_AREA_FRACTION};
use crate::board::{PieceSize, WasherBoard};
use crate::detect::proposals::Blob;
use crate::detect::sight::PieceSolid;
use crate::detect::verify::{Ctx, PieceShape};
use crate::detect::{DetectError, Detection, Detections, MeasuredBy, Unexplained};
use crate::geom::{BoardPoint, BoardPoint3, Footprint};
use crate::measure::CircleFit;
use crate::piece::Team;

/// A washer seen down a cup may show only this fraction of its area (the rim
/// hides the rest from an oblique camera); less is treated as noise.
const MIN_CUP_AREA_FRACTION: f64 = 0.1;
/// Starting places tried round a cup's floor for a washer in it.
const CUP_START_ANGLES: usize = 8;
/// A cup washer's fitted centre may lie this far (mm) beyond where the cup's
/// wall would stop it: the fit's own error on a half-hidden outline.
const CUP_REACH_SLACK_MM: f64 = 3.0;
/// A leaner found only by its pose (neither a flat outline nor a ring on the
/// cup's floor explained the colour) must explain the colour nearly
/// perfectly: the fixtures' leaners score 1.0 (the score is the mean of
/// inside-minus-outside team colour round its outline, -1..1).
const FALLBACK_LEANER_MIN_SCORE: f64 = 0.9;
/// The deepest the ground beside a washer board is taken to lie below its
/// surface (mm): a board standing on a table (about 0.75 m) with the washer
/// fallen to the floor under it. The shallowest is the cup's depth: the box
/// holds its cups.
const MAX_GROUND_DEPTH_MM: f64 = 1000.0;
/// An outline fitted at the surface lies flat there when its top is within this (mm) of a washer's top on the
/// surface: the rest heights a washer is fitted at are the surface, a cup's floor (76 mm lower) and the ground, so
/// any slack far under their spacing tells them apart.
const FLAT_HEIGHT_SLACK_MM: f64 = 0.5;
/// Of two readings of a washer in a hole, the leaning one replaces the flat one when its errors (colour it leaves
/// unexplained, pieces where there is none) are at least this share of the colour seen fewer. Measured on the own,
/// varied and external renders: a leaner read flat on the cup's floor leaves 0.14-0.31 of the colour more in error
/// than its leaning pose; a washer lying flat there at most 0.03 more than the best leaning pose (a washer tilted
/// 15 degrees looks much like one lying flat), most of them less.
const CLEARLY_BETTER_EXPLAINED: f64 = 0.1;
/// A right reading itself leaves some of the colour in error (its outline's blur, the washer's side): measured on the
/// own, varied and external renders, 0.05-0.14 of it for washers flat on a cup's floor, 0.12-0.18 for leaners in their
/// leaning poses. A leaning reading is clearly better ([`CLEARLY_BETTER_EXPLAINED`]) than the flat one only where the
/// flat one leaves that margin more in error than the least of these; below this the leaning pose is not searched
/// (its search is most of a washer board's detection time). Leaners read flat there left 0.30-0.43 in error.
const LEANING_SEARCH_MIN_ERROR: f64 = CLEARLY_BETTER_EXPLAINED + 0.05;
/// Where the leaning reading is better by less than [`CLEARLY_BETTER_EXPLAINED`] but by this much or more, neither
/// reading is clearly right: the flat one stands, in doubt.
const BETTER_EXPLAINED_IN_DOUBT: f64 = 0.05;

pub(super) struct WasherModel {
    shape: PieceShape,
    w: WasherBoard,
}

impl WasherModel {
    pub fn new(p: PieceSize, w: &WasherBoard) -> WasherModel {
        let shape = PieceShape { kind: p.kind, radius_mm: p.radius_mm, smallest_outline_mm: p.radius_mm, footprint_radius_mm: p.radius_mm, top_z_mm: p.thickness_mm, team_coloured: true, side_mm: p.thickness_mm };
        WasherModel { shape, w: w.clone() }
    }

    /// The top of a washer flat on a cup's floor.
    fn floor_top(&self) -> f64 {
        -self.w.cup_depth_mm + self.w.washer_thickness_mm
    }

    /// The top of a washer flat on the ground the board stands on, as the
    /// board's construction gives it (the nominal stand height unless its file
    /// states one): where a partly hidden washer beside the board is looked for.
    fn ground_top(&self) -> f64 {
        -self.w.construction.stand_height_mm + self.w.washer_thickness_mm
    }

    /// The height of a washer's top on the ground, from an outline `fit` of it
    /// at another height: the rules fix nothing below the surface, so the
    /// ground's depth is measured from the outline's size
    /// ([`Ctx::height_from_size`]), not assumed. Returns the height (within
    /// the depths the ground can lie at) and its standard uncertainty.
    fn ground_from_size(&self, cx: &Ctx, fit: &CircleFit) -> (f64, f64) {
        let (z, sigma_z) = cx.height_from_size(fit, self.shape.radius_mm);
        let t = self.w.washer_thickness_mm;
        (z.clamp(t - MAX_GROUND_DEPTH_MM, t - self.w.cup_depth_mm), sigma_z)
    }

    /// Finds a washer lying flat on the floor of hole `hole`'s cup, starting near
    /// `near`. Its outline is partly hidden by the rim, so rather than trust one
    /// start, fits start from a ring of places over the cup's floor (a washer's
    /// centre lies within hole radius - washer radius of the hole's centre) and
    /// the best-supported fit is kept; failing that, it is placed by its colour.
    fn cup_search(&self, cx: &Ctx, hole: usize, near: BoardPoint, class: usize) -> Result<CircleFit, DetectError> {
        let h = self.w.holes[hole];
        let reach = (h.radius() - self.shape.radius_mm).max(0.0);
        let starts = std::iter::once(near).chain(ring_of_starts(h.centre(), 0.6 * reach));
        cx.best_fit(starts, self.floor_top(), class, |f| f.footprint.centre.distance(h.centre()) <= reach + CUP_REACH_SLACK_MM)
            .or_else(|| stack::cup_template(cx, &self.w, hole, class))
            .ok_or_else(|| DetectError::NotAPiece {
                x_mm: near.x_mm,
                y_mm: near.y_mm,
                reason: format!("washer colour down hole {hole}, but no washer fits it on the cup's floor"),
            })
    }

    /// A washer seen only through hole `hole`'s opening: measured on the cup floor.
    fn measure_cup(&self, cx: &Ctx, hole: usize, near: BoardPoint, team: Option<Team>, class: usize) -> Result<Detection, DetectError> {
        let start = cx.along_sight(near.at_height(self.shape.top_z_mm), self.floor_top()).unwrap_or(near);
        let fit = self.cup_search(cx, hole, start, class)?;
        cx.finish(fit, self.floor_top(), team, class)
    }

    /// A washer on the ground beside the board seen only in part (the board's
    /// side hides the rest), from colour seen near `near` at the grid's height:
    /// fits on the ground from a ring of starts round where that line of sight
    /// meets the ground, over the probes the camera can see; the best-supported
    /// fit that lies clear of the board is kept.
    fn measure_ground(&self, cx: &Ctx, near: BoardPoint, team: Option<Team>, class: usize) -> Result<Detection, DetectError> {
        let ground_top = self.ground_top();
        let centre = cx.along_sight(near.at_height(self.shape.top_z_mm), ground_top).unwrap_or(near);
        let surface = &cx.geo.board.surface;
        let fit = cx
            .best_fit(ring_of_starts(centre, 0.5 * self.shape.radius_mm), ground_top, class, |f| !surface.contains(f.footprint.centre))
            .ok_or_else(|| DetectError::NotAPiece {
                x_mm: near.x_mm,
                y_mm: near.y_mm,
                reason: "washer colour beside the board, but no washer outline fits on the ground there".to_string(),
            })?;
        let (z, sigma_z) = self.ground_from_size(cx, &fit);
        let start = cx.along_sight(fit.footprint.centre.at_height(ground_top), z).unwrap_or(fit.footprint.centre);
        let fit = cx.fit(Footprint::new(start, self.shape.radius_mm), z, class).unwrap_or(fit);
        let z = fit.height_mm;
        Ok(cx.at_measured_height(cx.finish(fit, z, team, class)?, sigma_z))
    }
}

impl PieceModel for WasherModel {
    fn shape(&self) -> PieceShape {
        self.shape
    }

    /// Finds a washer's real height from its outline's apparent size: an outline
    /// fitted at an assumed height comes out scaled by the ratio of the two
    /// heights' distances from the camera. The washer rests at one of the
    /// heights where a washer can rest and be seen there: on the surface; flat
    /// in a cup (on the bottom, or on washers there) if that line of sight
    /// meets a cup's floor; on the ground the board stands on if it meets the
    /// ground beside the board (not under it). Of those, the one nearest the
    /// size's estimate is taken.
    fn rest(&self, cx: &Ctx, first: CircleFit, class: usize) -> Result<Rest, DetectError> {
        let r = self.shape.radius_mm;
        let cam_z = cx.geo.pose.centre().z_mm;
        let surface_top = self.shape.top_z_mm;
        // The apparent size says roughly how far down the washer is; sub-pixel
        // edges make it good to ~1 % of the camera height, which tells the
        // surface from a cup bottom 76 mm lower but is no measurement of height.
        let z_est = cam_z - (cam_z - surface_top) * r / first.footprint.radius_mm;
        let seen = first.footprint.centre.at_height(surface_top);
        // A washer on another one in a cup lies 3.2 mm higher than on the
        // bottom, a parallax of about a millimetre at the cup's centre, which
        // no call depends on.
        let bottom_top = self.floor_top();
        let in_cup = cx.along_sight(seen, bottom_top).and_then(|c| self.w.hole_enclosing(c).map(|hole| (hole, c)));
        let (ground_top, ground_sigma) = self.ground_from_size(cx, &first);
        let on_ground = cx.along_sight(seen, ground_top).filter(|c| !cx.geo.board.surface.contains(*c));
        enum Resting {
            Surface,
            Cup(usize, BoardPoint),
            Ground(BoardPoint),
        }
        let mut rests = vec![(surface_top, Resting::Surface)];
        rests.extend(in_cup.map(|(hole, c)| (bottom_top, Resting::Cup(hole, c))));
        rests.extend(on_ground.map(|c| (ground_top, Resting::Ground(c))));
        let nearest = rests.into_iter().min_by(|a, b| (a.0 - z_est).abs().total_cmp(&(b.0 - z_est).abs()));
        match nearest.map(|(_, rest)| rest) {
            Some(Resting::Cup(hole, c)) => Ok(Rest::fixed(bottom_top, self.cup_search(cx, hole, c, class)?)),
            Some(Resting::Ground(c)) => match cx.fit(Footprint::new(c, r), ground_top, class) {
                Ok(fit) => Ok(Rest { z_mm: ground_top, fit, height: RestHeight::FromSize { sigma_mm: ground_sigma } }),
                Err(_) => Ok(Rest::fixed(surface_top, first)),
            },
            Some(Resting::Surface) | None => Ok(Rest::fixed(surface_top, first)),
        }
    }

    /// A washer down a cup shows only what the rim leaves in view (a crescent
    /// or part of a disc in the hole's opening); one on the ground beyond the
    /// board, partly hidden by the board's side, only the part beside it.
    fn partial(&self, cx: &Ctx, blob: &Blob, team: Option<Team>, class: usize, out: &mut Detections) -> Partial {
        let in_part = blob.thin || blob.pieces < 1.0 - AREA_MISMATCH_FRACTION;
        let unexplained = |reason: String| Unexplained { kind: self.shape.kind, team, centre: blob.centre, area_mm2: blob.area_mm2, reason };
        if let Some(hole) = cx.hole_opening(blob.centre).filter(|_| in_part) {
            if blob.pieces >= MIN_CUP_AREA_FRACTION {
                match self.measure_cup(cx, hole, blob.centre, team, class) {
                    // Colour of one washer seen in two parts (split by its own hole or a neighbour).
                    Ok(d) if found_already(out, &d, self.shape.radius_mm) => {}
                    Ok(d) => out.pieces.push(d),
                    Err(e) => match self.instead(cx, blob.centre, team, class) {
                        Some(d) => out.pieces.push(d),
                        None => out.unexplained.push(unexplained(e.to_string())),
                    },
                }
            }
            return Partial::Done;
        }
        if blob.pieces < MIN_PIECE_AREA_FRACTION || cx.geo.board.surface.contains(blob.centre) || !in_part {
            return Partial::NotMine;
        }
        match self.measure_ground(cx, blob.centre, team, class) {
            Ok(d) if found_already(out, &d, self.shape.radius_mm) => {}
            Ok(d) => out.pieces.push(d),
            Err(e) => out.unexplained.push(unexplained(e.to_string())),
        }
        Partial::Done
    }

    /// Team colour in a hole's opening that no flat washer's outline explains:
    /// a washer on the cup's floor whose ring the colour matches, or else one
    /// leaning on the rim, where a leaning pose explains the colour nearly
    /// perfectly.
    fn instead(&self, cx: &Ctx, seen: BoardPoint, team: Option<Team>, class: usize) -> Option<Detection> {
        let hole = cx.hole_opening(seen)?;
        if let Some(fit) = stack::cup_template(cx, &self.w, hole, class) {
            return cx.finish(fit, self.floor_top(), team, class).ok();
        }
        team?;
        let lean = leaner::measure_leaner(cx, &self.w, hole, cx.colour(class)?).filter(|l| l.score >= FALLBACK_LEANER_MIN_SCORE)?;
        Some(self.leaning(cx, team, &lean))
    }

    fn settle(&self, cx: &Ctx, out: &mut Detections) {
        self.lean_what_cannot_lie_flat(cx, out);
        self.flat_or_leaning_in_cups(cx, out);
        stack::settle_cups(cx, &self.w, out);
        self.cups_hiding_a_washer(cx, out);
    }

    /// Proposals by the teams' colours, then round outlines of a washer's size
    /// on the surface that no colour explained (its ring inside, clear of its hole),
    /// then paint left on the floors of cups where no washer was found (pale washers).
    fn find(&self, cx: &Ctx, out: &mut Detections) {
        let r_in = self.w.washer_inner_diameter_mm / 2.0 / self.shape.radius_mm;
        let ring = [0.25 + 0.75 * r_in, 0.5 + 0.5 * r_in, 0.75 + 0.25 * r_in].map(|k| k.min(0.9));
        outline::colour_then_outlines(cx, out, self.shape.radius_mm, self.shape.top_z_mm, &ring);
        stack::pale_washers_in_empty_cups(cx, &self.w, out);
    }
}

impl WasherModel {
    /// A washer of `team` in the leaning pose `lean`.
    fn leaning(&self, cx: &Ctx, team: Option<Team>, lean: &leaner::LeanerFit) -> Detection {
        Detection {
            kind: self.shape.kind,
            team,
            footprint: Footprint::new(lean.centre.on_plane(), self.shape.radius_mm),
            top_z_mm: lean.centre.z_mm + self.w.washer_thickness_mm / 2.0,
            tilt_deg: lean.tilt_deg,
            sigma_mm: lean.sigma_mm,
            fit_rms_mm: f64::NAN,
            edges_found: 0,
            probes: 0,
            mm_per_px: cx.mm_per_px(lean.centre),
            doubt: None,
            measured_by: MeasuredBy::LeaningPose,
            outline_radius_mm: None,
        }
    }

    /// Washers whose outline fitted flat on the surface with its centre over a hole's opening: no washer rests so
    /// (its weight over the hole, it tips in), so it is propped on the rim. Its leaning pose is measured; where
    /// none explains the hole, the flat reading stands, in doubt.
    fn lean_what_cannot_lie_flat(&self, cx: &Ctx, out: &mut Detections) {
        let flat_on_surface = |d: &Detection| {
            d.measured_by == MeasuredBy::Outline && d.tilt_deg.abs() <= 1.0 && (d.top_z_mm - self.shape.top_z_mm).abs() < FLAT_HEIGHT_SLACK_MM
        };
        for d in out.pieces.iter_mut().filter(|d| d.team.is_some() && flat_on_surface(d)) {
            let Some(hole) = self.w.hole_enclosing(d.footprint.centre) else { continue };
            let lean = cx.colour(cx.class_of(d.team)).and_then(|class| leaner::measure_leaner(cx, &self.w, hole, class));
            match lean {
                Some(lean) => {
                    let doubt = d.doubt.take();
                    *d = Detection { doubt, ..self.leaning(cx, d.team, &lean) };
                }
                None => d.add_doubt(format!(
                    "outline fitted flat on the surface with its centre over hole {} ({} points), where no washer rests, and no leaning pose explains it",
                    hole + 1,
                    self.w.holes[hole].value
                )),
            }
        }
    }

    /// Washers whose outline fitted flat on a cup's floor: a leaner's top seen past the rim can fit so too (its
    /// low edge down in the cup, its outline's size between the two heights'). Where a leaning pose is measured in
    /// the hole, the two readings are put to the image: each says which lines of sight round the hole end on the
    /// team's colour (with the team's other pieces found; another team's pieces hide what lies under them), and the
    /// one that explains the colour seen clearly better is kept; where neither does, the flat reading stands, in
    /// doubt. A washer placed by the paint on a cup's floor (no outline) is compared only where no other team's
    /// washer lies in its cup: under another's it is a stack's lower one, which the stack's reading places (compared
    /// there, external y9_00's was re-read as a leaner beside itself).
    fn flat_or_leaning_in_cups(&self, cx: &Ctx, out: &mut Detections) {
        let floor_top = self.floor_top();
        for i in 0..out.pieces.len() {
            let d = &out.pieces[i];
            let flat_on_floor = d.tilt_deg.abs() <= 1.0 && (d.top_z_mm - floor_top).abs() < FLAT_HEIGHT_SLACK_MM;
            let Some(hole) = self.w.hole_enclosing(d.footprint.centre).filter(|_| flat_on_floor && d.team.is_some()) else { continue };
            // One placed by the paint on the floor (no outline) is compared only alone in its cup: under another team's
            // washer it is a stack's lower one, which the stack's reading places.
            let shares_cup = || out.pieces.iter().any(|p| p.team != d.team && self.w.hole_enclosing(p.footprint.centre) == Some(hole));
            let compared = match d.measured_by {
                MeasuredBy::Outline => true,
                MeasuredBy::FloorColour => !shares_cup(),
                _ => false,
            };
            if !compared {
                continue;
            }
            let Some(class) = cx.colour(cx.class_of(d.team)) else { continue };
            let solids = |team: bool| -> Vec<PieceSolid> {
                out.pieces.iter().enumerate().filter(|(j, p)| *j != i && (p.team == d.team) == team).map(|(_, p)| cx.occluder(p)).collect()
            };
            let (mates, others) = (solids(true), solids(false));
            let error = |piece: &Detection| {
                let reading: Vec<PieceSolid> = mates.iter().cloned().chain(std::iter::once(cx.occluder(piece))).collect();
                colour_explained(cx, &self.w, hole, class, &reading, &others).error()
            };
            // Where the flat reading explains the colour as well as right readings do, no leaning one can be clearly
            // better: the leaning pose is not searched.
            let Some(flat) = error(d).filter(|e| *e >= LEANING_SEARCH_MIN_ERROR) else { continue };
            let Some(lean) = leaner::measure_leaner(cx, &self.w, hole, class) else { continue };
            let leaning = self.leaning(cx, d.team, &lean);
            let Some(leant) = error(&leaning) else { continue };
            let d = &mut out.pieces[i];
            if flat - leant >= CLEARLY_BETTER_EXPLAINED {
                let doubt = d.doubt.take();
                *d = Detection { doubt, ..leaning };
            } else if flat - leant >= BETTER_EXPLAINED_IN_DOUBT {
                d.add_doubt(format!(
                    "read flat on the cup's floor in hole {}, but a leaning pose explains its colour a little better ({:.0} % against {:.0} % of it in error)",
                    hole + 1,
                    100.0 * leant,
                    100.0 * flat
                ));
            }
        }
    }

    /// Cups whose floor the camera sees so obliquely that a whole washer may
    /// lie on it out of sight: unexplained (the frame needs review), whatever
    /// was found in them, since what the camera cannot see it cannot count.
    ///
    /// The camera sees a cup's floor through its opening: the floor's visible
    /// part is the opening moved away from the camera by the parallax of the
    /// cup's depth, `d * h / H` for a camera `H` above the floor and `h` beside
    /// the cup (in plan). A washer lies wholly in the hidden crescent only if it
    /// fits in a crescent that wide: the shift must reach the washer's diameter
    /// (the washer at the floor's far side from the opening's view). Only cups
    /// whose opening is in the frame are looked at (one out of it is no cup the
    /// frame shows).
    fn cups_hiding_a_washer(&self, cx: &Ctx, out: &mut Detections) {
        let (camera, pose) = (&cx.geo.camera, &cx.geo.pose);
        let eye = pose.centre();
        let diameter = self.w.washer_outer_diameter_mm;
        // The washer's top face, what shows of it, lies a washer's thickness above the floor.
        let depth = self.w.cup_depth_mm - self.w.washer_thickness_mm;
        for (i, h) in self.w.holes.iter().enumerate() {
            let in_frame = pose.project(camera, h.centre().at_height(0.0)).is_some_and(|px| camera.contains(px));
            if !in_frame || h.diameter_mm < diameter {
                continue;
            }
            let Some(shift) = floor_parallax_mm(eye, h.centre(), depth) else { continue };
            if shift >= diameter {
                out.unexplained.push(Unexplained {
                    kind: self.shape.kind,
                    team: None,
                    centre: h.centre(),
                    area_mm2: 0.0,
                    reason: format!(
                        "hole {} ({} points): the camera sees its cup's floor so obliquely (moved {shift:.0} mm by the cup's depth, a washer is {diameter:.0} mm across) that a whole washer may lie there out of sight",
                        i + 1,
                        h.value
                    ),
                });
            }
        }
    }
}

/// How far (mm, in plan) the camera at `eye` sees a cup's floor `depth` below
/// the surface moved from the opening at `hole` (away from the camera): the
/// parallax of the depth. `None` for a camera not above the floor.
fn floor_parallax_mm(eye: BoardPoint3, hole: BoardPoint, depth: f64) -> Option<f64> {
    let above = eye.z_mm + depth;
    (above > 0.0).then(|| depth * (eye.x_mm - hole.x_mm).hypot(eye.y_mm - hole.y_mm) / above)
}

/// Starting places for a search: `centre`, and [`CUP_START_ANGLES`] places
/// round it at `reach`.
fn ring_of_starts(centre: BoardPoint, reach: f64) -> impl Iterator<Item = BoardPoint> {
    std::iter::once(centre).chain((0..CUP_START_ANGLES).map(move |k| {
        let t = std::f64::consts::TAU * k as f64 / CUP_START_ANGLES as f64;
        BoardPoint::new(centre.x_mm + reach * t.cos(), centre.y_mm + reach * t.sin())
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cup_seen_from_overhead_shows_its_floor_and_one_seen_from_far_beside_may_hide_a_washer() {
        let (hole, depth, washer) = (BoardPoint::new(0.0, 254.0), 76.0 - 3.2, 63.5);
        // Straight over the cup: no parallax.
        let over = floor_parallax_mm(BoardPoint3::new(0.0, 254.0, 1500.0), hole, depth).unwrap();
        assert!(over.abs() < 1e-9, "{over}");
        // A usual mount, 1.5 m up and 0.6 m along the board: the floor moves 29 mm, under a washer's 63.5.
        let usual = floor_parallax_mm(BoardPoint3::new(0.0, 854.0, 1500.0), hole, depth).unwrap();
        assert!((usual - 72.8 * 600.0 / 1572.8).abs() < 1e-9 && usual < washer, "{usual}");
        // A wide lens 1.2 m beside the cup and 1 m up: 79 mm, room for a whole washer out of sight.
        let beside = floor_parallax_mm(BoardPoint3::new(1200.0, 254.0, 1000.0), hole, depth).unwrap();
        assert!(beside > washer, "{beside}");
        assert!(floor_parallax_mm(BoardPoint3::new(0.0, 0.0, -100.0), hole, depth).is_none());
    }
}
