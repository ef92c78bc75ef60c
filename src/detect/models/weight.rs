//! The shuffleboard weight: a chrome body whose coloured cap (the whole top, or a
//! smaller disc with a chrome ring round it and a number printed on it) is
//! measured at the cap's height; on the surface, or one gutter's depth lower
//! when it lies in the gutter. The cap and the body are concentric: the cap's
//! outline places the body, whose footprint the calls use. A cap narrower than
//! the body is set into it, its face at the body's top or below: where the
//! set-up does not say how far below, that height is uncertain and so is the
//! footprint, along the line of sight.

use super::{PieceModel, Rest, RestHeight};
use crate::board::{PieceSize, Shuffleboard};
use crate::detect::proposals::{self, MIN_PIECE_SEPARATION};
use crate::detect::verify::{Ctx, PieceShape, MAX_RADIUS_ERROR_MM};
use crate::detect::{DetectError, Detections, Unexplained};
use crate::geom::{BoardPoint, Footprint};
use crate::measure::CircleFit;

/// A cap not given may be smaller than the body: the first outline fit reaches
/// in to this fraction of the body's radius (23.5 mm on the regulation weight;
/// a smaller cap is given in the set-up), no further, so that its probes start
/// outside a number printed on a cap's middle.
pub const UNKNOWN_CAP_MIN_FRACTION: f64 = 0.8;
/// A cap narrower than the body by more than this (mm) has a chrome ring round
/// it, and may be set below the ring's top; within it, it is the whole top (its
/// outline's radius scatters by a few tenths of a mm).
pub const CAP_RING_MIN_MM: f64 = 1.0;
/// How far below the body's top a cap set into it may lie when the set-up does
/// not say (mm): a fifth of the regulation weight's 25 mm; deeper, the ring
/// would hide the cap's edge from the oblique views boards are watched from.
pub const MAX_CAP_RECESS_MM: f64 = 5.0;

/// What the set-up says of the weights' caps.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct WeightCap {
    /// The cap's radius (mm); `None`: not given (the whole top, or learned from a frame).
    pub radius_mm: Option<f64>,
    /// How far the cap's face lies below the body's top (mm); `None`: not given.
    pub recess_mm: Option<f64>,
}

pub(super) struct WeightModel {
    shape: PieceShape,
    gutter_depth_mm: f64,
    /// The cap face's height and, where not given, its standard uncertainty.
    face_z_mm: f64,
    face_sigma_mm: Option<f64>,
}

impl WeightModel {
    pub fn new(p: PieceSize, s: &Shuffleboard, cap: WeightCap) -> WeightModel {
        let body = p.radius_mm;
        let outline = cap.radius_mm.unwrap_or(body);
        let smallest = if cap.radius_mm.is_some() { outline } else { UNKNOWN_CAP_MIN_FRACTION * body };
        let shape = PieceShape {
            kind: p.kind,
            radius_mm: outline,
            smallest_outline_mm: smallest,
            footprint_radius_mm: body,
            top_z_mm: p.thickness_mm,
            team_coloured: true,
        };
        // A recess not given is anywhere from none to the most: its middle, with
        // the standard deviation of a uniform spread.
        let ringed = outline < body - CAP_RING_MIN_MM;
        let (face_z_mm, face_sigma_mm) = match (ringed, cap.recess_mm) {
            (false, _) => (p.thickness_mm, None),
            (true, Some(r)) => (p.thickness_mm - r, None),
            (true, None) => (p.thickness_mm - MAX_CAP_RECESS_MM / 2.0, Some(MAX_CAP_RECESS_MM / 12f64.sqrt())),
        };
        WeightModel { shape, gutter_depth_mm: s.construction.gutter_depth_mm, face_z_mm, face_sigma_mm }
    }

    fn height(&self) -> RestHeight {
        match self.face_sigma_mm {
            Some(sigma_mm) => RestHeight::Uncertain { sigma_mm },
            None => RestHeight::Fixed,
        }
    }
}

/// A round outline found by shape is a weight's body if its fitted radius is
/// the body's within this (mm): the verification's own radius tolerance.
const OUTLINE_RADIUS_TOLERANCE_MM: f64 = MAX_RADIUS_ERROR_MM;
/// ... and its edges lie within this (pixels, RMS) of the circle: a piece's
/// outline is a crisp edge (0.1-0.25 px on the fixtures, colour asked or not),
/// while edges picked from wood grain or a texture round a circle scatter by
/// about a pixel (0.8-1.1 px on the fixtures' boards). The colour-asked fit's
/// limit ([`crate::detect::verify::MAX_FIT_RMS_PX`]) trusts the paint inside; this one has no paint to trust.
const OUTLINE_MAX_RMS_PX: f64 = 0.5;
/// ... and edges answer at least this share of the probes in view: a body's
/// outline (chrome against the board, its shadow) shows all round, while wood
/// grain, a print or a shadow's edge make arcs at most.
const OUTLINE_MIN_EDGE_SHARE: f64 = 0.8;
/// ... and what lies inside it differs from the board round it: the mean
/// colour (saturation-weighted hue vector and value, 0..1 each) inside half the
/// radius and in a ring 1.4-1.8 radii out, both at the cap's height (the ring
/// then sees the board past the piece's side), differ by at least
/// this. A pale cap on wood of nearly its hue differs by ~0.2 (its value and
/// hue); wood grain or a painted field against itself, by a few hundredths.
const OUTLINE_MIN_CONTRAST: f64 = 0.1;
/// The colour samples: this many angles round each ring.
const CONTRAST_ANGLES: usize = 24;

impl WeightModel {
    /// Shape before colour: circles of a weight's body size in the grid's
    /// brightness that no piece found (and no colour already reported)
    /// accounts for, verified by an outline fit of that size asking no colour
    /// inside, are weights no team's colour sees (a pale cap on a board of
    /// nearly its hue): unexplained, and the frame needs review.
    fn account_for_outlines(&self, cx: &Ctx, out: &mut Detections) {
        let body = self.shape.footprint_radius_mm;
        let top = self.shape.top_z_mm;
        for c in proposals::circles_of_radius(cx, body) {
            let near = |p: BoardPoint, reach: f64| p.distance(c) < reach;
            if out.pieces.iter().any(|d| near(d.footprint.centre, body * MIN_PIECE_SEPARATION))
                || out.unexplained.iter().any(|u| near(u.centre, body * MIN_PIECE_SEPARATION))
            {
                continue;
            }
            let Ok(fit) = cx.fit_any_colour(Footprint::new(c, body), top) else { continue };
            let round = (fit.footprint.radius_mm - body).abs() <= OUTLINE_RADIUS_TOLERANCE_MM
                && fit.rms_mm <= OUTLINE_MAX_RMS_PX * fit.mm_per_px
                && fit.inliers as f64 >= OUTLINE_MIN_EDGE_SHARE * fit.probes as f64;
            let f = fit.footprint.centre;
            if !round || contrast(cx, f, body, top) < OUTLINE_MIN_CONTRAST || out.unexplained.iter().any(|u| u.centre.distance(f) < body * MIN_PIECE_SEPARATION) {
                continue;
            }
            out.unexplained.push(Unexplained {
                kind: self.shape.kind,
                team: None,
                centre: f,
                area_mm2: std::f64::consts::PI * body * body,
                reason: format!(
                    "a round outline of a weight's size at ({:.0}, {:.0}) mm that no team's colour explains: a piece of another \
                     colour, or paler? give the teams' colours (--team, a pieces file)",
                    f.x_mm, f.y_mm
                ),
            });
        }
    }
}

/// How far the mean colour inside half of radius `r` round `c` (at height
/// `top`) lies from that of a ring 1.4-1.8 radii out at the same height (see
/// [`OUTLINE_MIN_CONTRAST`]); zero where either is out of view.
fn contrast(cx: &Ctx, c: BoardPoint, r: f64, top: f64) -> f64 {
    let mean = |radii: &[f64], z: f64| -> Option<[f64; 3]> {
        let (mut sum, mut n) = ([0.0; 3], 0usize);
        for &rho in radii {
            for k in 0..CONTRAST_ANGLES {
                let t = std::f64::consts::TAU * k as f64 / CONTRAST_ANGLES as f64;
                let p = BoardPoint::new(c.x_mm + rho * t.cos(), c.y_mm + rho * t.sin()).at_height(z);
                let Some([h, s, v]) = cx.hsv_at(p) else { continue };
                let (h, s, v) = ((h as f64).to_radians(), s as f64, v as f64);
                sum = [sum[0] + s * h.cos(), sum[1] + s * h.sin(), sum[2] + v];
                n += 1;
            }
        }
        (n > 0).then(|| sum.map(|x| x / n as f64))
    };
    let inside = mean(&[0.1 * r, 0.25 * r, 0.4 * r, 0.5 * r], top);
    let around = mean(&[1.4 * r, 1.6 * r, 1.8 * r], top);
    match (inside, around) {
        (Some(a), Some(b)) => ((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2) + (a[2] - b[2]).powi(2)).sqrt(),
        _ => 0.0,
    }
}

impl PieceModel for WeightModel {
    fn shape(&self) -> PieceShape {
        self.shape
    }

    /// Proposals by the teams' colours, then round outlines no colour explained.
    fn find(&self, cx: &Ctx, out: &mut Detections) {
        super::find_by_colour(cx, out);
        self.account_for_outlines(cx, out);
    }

    /// The cap's outline, seen at the grid's height (the body's top), is
    /// measured again at the cap face's height; a weight off the surface lies
    /// in the gutter, lower by the gutter's depth, and is measured there.
    fn rest(&self, cx: &Ctx, fit: CircleFit, class: usize) -> Result<Rest, DetectError> {
        let (top, surface) = (self.shape.top_z_mm, &cx.geo.board.surface);
        let at = |fit: &CircleFit, from: f64, z: f64| -> Option<CircleFit> {
            let start = cx.along_sight(fit.footprint.centre.at_height(from), z)?;
            cx.fit(Footprint::new(start, fit.footprint.radius_mm), z, class).ok()
        };
        let face = self.face_z_mm;
        let fit = if (face - top).abs() > f64::EPSILON { at(&fit, top, face).unwrap_or(fit) } else { fit };
        let rest = |z: f64, fit: CircleFit| Rest { z_mm: z, fit, height: self.height() };
        if surface.contains(fit.footprint.centre) {
            return Ok(rest(face, fit));
        }
        let low = face - self.gutter_depth_mm;
        match at(&fit, face, low) {
            Some(again) if !surface.contains(again.footprint.centre) => Ok(rest(low, again)),
            _ => Ok(rest(face, fit)),
        }
    }
}
