//! The shuffleboard weight: a chrome body whose coloured cap (the whole top, or a
//! smaller disc with a chrome ring round it and a number printed on it) is
//! measured at the weight's height; on the surface, or one gutter's depth lower
//! when it lies in the gutter. The cap and the body are concentric: the cap's
//! outline places the body, whose footprint the calls use.

use super::{PieceModel, Rest};
use crate::board::{PieceSize, Shuffleboard};
use crate::detect::verify::{Ctx, PieceShape};
use crate::detect::DetectError;
use crate::geom::Footprint;
use crate::measure::CircleFit;

pub(super) struct WeightModel {
    shape: PieceShape,
    gutter_depth_mm: f64,
}

impl WeightModel {
    /// `cap_radius_mm`: the coloured cap's radius where it is smaller than the body.
    pub fn new(p: PieceSize, s: &Shuffleboard, cap_radius_mm: Option<f64>) -> WeightModel {
        let outline = cap_radius_mm.unwrap_or(p.radius_mm);
        let shape = PieceShape { kind: p.kind, radius_mm: outline, footprint_radius_mm: p.radius_mm, top_z_mm: p.thickness_mm, team_coloured: true };
        WeightModel { shape, gutter_depth_mm: s.construction.gutter_depth_mm }
    }
}

impl PieceModel for WeightModel {
    fn shape(&self) -> PieceShape {
        self.shape
    }

    /// A weight off the surface lies in the gutter, lower by the gutter's
    /// depth: the same image outline is measured again at that height.
    fn rest(&self, cx: &Ctx, fit: CircleFit, class: usize) -> Result<Rest, DetectError> {
        let (z, surface) = (self.shape.top_z_mm, &cx.geo.board.surface);
        if surface.contains(fit.footprint.centre) {
            return Ok(Rest::fixed(z, fit));
        }
        let low = z - self.gutter_depth_mm;
        let start = cx.along_sight(fit.footprint.centre.at_height(z), low).unwrap_or(fit.footprint.centre);
        match cx.fit(Footprint::new(start, fit.footprint.radius_mm), low, class) {
            Ok(again) if !surface.contains(again.footprint.centre) => Ok(Rest::fixed(low, again)),
            _ => Ok(Rest::fixed(z, fit)),
        }
    }
}
