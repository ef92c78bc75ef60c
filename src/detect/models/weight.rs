//! The shuffleboard weight: a chrome body whose coloured cap (the whole top, or a
//! smaller disc with a chrome ring round it and a number printed on it) is
//! measured at the cap's height; on the surface, or in the gutter, at a depth
//! measured from the cap's outline's size (how deep a gutter is built is the
//! maker's choice). The cap and the body are concentric: the cap's
//! outline places the body, whose footprint the calls use. A cap narrower than
//! the body is set into it, its face at the body's top or below: where the
//! set-up does not say how far below, that height is uncertain and so is the
//! footprint, along the line of sight.

use super::{outline, uniform_sigma_mm, PieceModel, Rest, RestHeight};
use crate::board::{PieceSize, Shuffleboard, GUTTER_DEPTH_RANGE_MM};
use crate::detect::verify::{Ctx, PieceShape};
use crate::detect::{DetectError, Detections};
use crate::geom::Footprint;
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

/// Where a weight's paint is looked at inside its outline (fractions of the
/// body's radius): the cap's middle, inside the smallest cap a set-up takes.
const CAP_MIDDLE: [f64; 4] = [0.1, 0.25, 0.4, 0.5];

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
            // The outline is the cap's; the side below the body's rim is chrome.
            side_mm: 0.0,
        };
        // A recess not given is anywhere from none to the most: its middle, with
        // the standard deviation of a uniform spread.
        let ringed = outline < body - CAP_RING_MIN_MM;
        let (face_z_mm, face_sigma_mm) = match (ringed, cap.recess_mm) {
            (false, _) => (p.thickness_mm, None),
            (true, Some(r)) => (p.thickness_mm - r, None),
            (true, None) => (p.thickness_mm - MAX_CAP_RECESS_MM / 2.0, Some(uniform_sigma_mm(MAX_CAP_RECESS_MM))),
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

impl PieceModel for WeightModel {
    fn shape(&self) -> PieceShape {
        self.shape
    }

    /// Proposals by the teams' colours, then round outlines of a body's size
    /// that no colour explained (the cap's middle inside, clear of a chrome ring).
    fn find(&self, cx: &Ctx, out: &mut Detections) {
        outline::colour_then_outlines(cx, out, self.shape.footprint_radius_mm, self.shape.top_z_mm, &CAP_MIDDLE);
    }

    /// The cap's outline, seen at the grid's height (the body's top), is
    /// measured again at the cap face's height; a weight off the surface lies
    /// in the gutter and is measured there ([`WeightModel::in_gutter`]).
    fn rest(&self, cx: &Ctx, fit: CircleFit, class: usize) -> Result<Rest, DetectError> {
        let (top, surface) = (self.shape.top_z_mm, &cx.geo.board.surface);
        let at = |fit: &CircleFit, from: f64, z: f64| fit_at(cx, fit, from, z, class);
        let face = self.face_z_mm;
        let fit = if (face - top).abs() > f64::EPSILON { at(&fit, top, face).unwrap_or(fit) } else { fit };
        let rest = |z: f64, fit: CircleFit| Rest { z_mm: z, fit, height: self.height() };
        if surface.contains(fit.footprint.centre) {
            return Ok(rest(face, fit));
        }
        let low = face - self.gutter_depth_mm;
        match at(&fit, face, low) {
            Some(again) if !surface.contains(again.footprint.centre) => Ok(self.in_gutter(cx, again, low, class)),
            _ => Ok(rest(face, fit)),
        }
    }
}

impl WeightModel {
    /// A weight in the gutter, its cap's outline `fit` at the board's gutter depth (`low`: the face's height
    /// there): how deep a gutter is built is the maker's choice, so the face's height is measured from the outline's
    /// size ([`Ctx::height_from_size`]) and the weight measured there, its uncertainty the measurement's (and the
    /// cap's recess's, where not given). A size no gutter in [`GUTTER_DEPTH_RANGE_MM`] gives, one known less well
    /// than the range, or no outline at the measured height: at the board's depth, uncertain by the range's
    /// spread. (Varied 08: a gutter 55.8 mm deep read at the nominal 38.1 placed its weights 4.6-5.3 mm off with a
    /// sigma of 0.1 mm.)
    fn in_gutter(&self, cx: &Ctx, fit: CircleFit, low: f64, class: usize) -> Rest {
        let (measured, sigma_mm) = cx.height_from_size(&fit, self.shape.radius_mm);
        let face = self.face_z_mm;
        let sigma_mm = sigma_mm.hypot(self.face_sigma_mm.unwrap_or(0.0));
        let built = (face - GUTTER_DEPTH_RANGE_MM.1)..=(face - GUTTER_DEPTH_RANGE_MM.0);
        let spread = uniform_sigma_mm(GUTTER_DEPTH_RANGE_MM.1 - GUTTER_DEPTH_RANGE_MM.0);
        let refit = || fit_at(cx, &fit, low, measured, class).filter(|f| !cx.geo.board.surface.contains(f.footprint.centre));
        match (built.contains(&measured) && sigma_mm < spread).then(refit).flatten() {
            Some(f) => Rest { z_mm: measured, fit: f, height: RestHeight::FromSize { sigma_mm } },
            // A size no gutter is built to (the outline cut by the gutter's wall, a cap of another size), a size that
            // says less than the range does, or no outline there: at the board's depth, anywhere in the range built.
            None => Rest { z_mm: low, fit, height: RestHeight::Uncertain { sigma_mm: spread } },
        }
    }
}

/// The outline `fit` (fitted at height `from`) fitted again at height `z`, started where the line of sight through
/// its centre meets that height.
fn fit_at(cx: &Ctx, fit: &CircleFit, from: f64, z: f64, class: usize) -> Option<CircleFit> {
    let start = cx.along_sight(fit.footprint.centre.at_height(from), z)?;
    cx.fit(Footprint::new(start, fit.footprint.radius_mm), z, class).ok()
}
