//! Verification: does a piece of this kind, at this height and pose, explain the
//! image? Outline fits at a given height over the probes the camera can see, the
//! checks a fit must pass to be a piece (edge scatter, colour fill, radius), and
//! the geometry of lines of sight the piece models share.

use super::grid::Grid;
use super::models::{PieceModel, RestHeight};
use super::sight::{PieceSolid, Occluders, Sight};
use super::{bgr_to_hsv, ColourClass, DetectError, Detection, MeasuredBy, TeamColour};
use crate::board::Board;
use crate::camera::{Camera, CameraPose};
use crate::geom::{BoardPoint, BoardPoint3, Footprint, PixelPoint};
use crate::measure::{fit_circle_scoped, probe_outline, CircleFit, ColourView, EdgePoint, FitConfig, MeasureError, ProbeScope};
use crate::piece::{PieceKind, Team};
use image::GrayImage;

/// Of the grid cells inside a fitted footprint (within 85 % of its radius),
/// at least this fraction must have the piece's colour: a fit that found an
/// outline around something else (a hand, a line crossing) is no piece.
pub const MIN_FILL_FRACTION: f64 = 0.6;
/// A real outline fits its circle to a fraction of a pixel (sub-pixel edges,
/// JPEG and noise included); an "outline" found in glare or grain scatters by
/// several pixels. Above this RMS (in pixels at the piece) it is no piece.
pub const MAX_FIT_RMS_PX: f64 = 1.5;
/// Lines of sight are tested from this far along them (mm): the point itself
/// lies on a surface that must not count as blocking it.
pub const RIM_CLEARANCE_MM: f64 = 1.5;
/// A fitted radius further than this from the piece's real radius means the
/// outline is not that piece at that height (mm).
pub const MAX_RADIUS_ERROR_MM: f64 = 2.5;
/// An outline's fitted radius carries a bias its scatter does not show (the
/// edge's blur, JPEG, the sub-pixel edge model), the same all round so that it
/// leaves the centre alone: taken as a quarter of a pixel, the sub-pixel edge
/// placement's error on the committed fixtures.
const RADIUS_BIAS_PX: f64 = 0.25;
/// A piece tilted more than this (degrees) is taken as leaning: a flat piece's
/// fitted tilt is zero, a leaner's 10-40 degrees.
const LEANING_DEG: f64 = 1.0;
/// Colour this far (mm) outside a hole's rim still counts as seen through its
/// opening: the parallax of a washer 76 mm down.
const OPENING_MARGIN_MM: f64 = 10.0;
/// An outline's edge faces its circle's centre when the image's colour
/// gradient there lies within this (degrees) of the radial direction: a real
/// outline's colour changes across it, whatever the pieces' contrast, while a
/// straight texture's edges (wood grain, the stripes of a print) face the way
/// the texture runs, crossing a circle's radius square on only where it meets
/// the grain square on.
const RADIAL_TOLERANCE_DEG: f64 = 30.0;
/// A piece told by its outline alone (a disc: no colour to fill) must have at
/// least this share of its outline's edges facing its centre. Discs, own and
/// external renders, wood on wood at a few hundredths of contrast included:
/// 0.71 or more; circles an outline fit drew from wood grain (sjoelbak boards
/// of pale wood under glare): 0.46-0.88, most under 0.65. Under a third of a
/// straight texture's edges face a circle's centre where the probes cross it
/// evenly; a fit picks its inliers where they do.
const MIN_RADIAL_SHARE: f64 = 0.65;
/// A piece told by its outline alone encloses one flat face, evenly lit: the brightness just inside its rim
/// ([`INSIDE_FACE_PX`] in) varies round it by at most this share of the step at the rim (the median absolute
/// deviation of the inside brightnesses from their median, against the edges' median contrast).
/// Discs measured 0.006-0.08 on the own and varied renders and 0.01-0.09 on the real sjoelbak photos (wood grain,
/// glare and shading included: the median ignores a shadow over less than half the rim). Outlines fitted where no
/// disc lies measured 0.01-0.33: those whose inside takes in the board, a partition's or the gate bar's face and
/// their shadows 0.2 and more (circles before the gate bar, across a partition, on a stack's crescent; varied 13,
/// 15 and 17 had four such phantoms scored), while a printed circle or the floor beyond the walls looks like one
/// face and is left to the other checks.
const MAX_INSIDE_SPREAD: f64 = 0.2;
/// How far inside an outline's edges (pixels) its face's colour is read: past the edge's blur and a JPEG fringe.
const INSIDE_FACE_PX: f64 = 2.0;
/// The colour gradient is taken from samples this far (pixels) either side of
/// an edge point: the edge's own blur, not its neighbours'.
const GRADIENT_STEP_PX: f64 = 1.0;

/// What the board's pieces look like to the detector.
#[derive(Debug, Clone, Copy)]
pub(super) struct PieceShape {
    pub kind: PieceKind,
    /// The radius of the outline it is seen and measured by: a weight's coloured
    /// cap (its body's, or smaller), a washer's or disc's rim.
    pub radius_mm: f64,
    /// The smallest outline it may show (mm): its radius, or less where the
    /// outline's size is not known (a weight's cap not given).
    pub smallest_outline_mm: f64,
    /// The radius of its footprint (a weight's body): what the calls use.
    pub footprint_radius_mm: f64,
    /// The height of its top face above what it rests on.
    pub top_z_mm: f64,
    /// Whether a team colour tells the piece (weights, washers); discs are told by their outline.
    pub team_coloured: bool,
    /// How far its upright side reaches down from the outline measured, where the side looks like the face inside
    /// the outline (a disc's wood, a washer's paint all over): seen past the rim on the camera's side, down to its
    /// foot, the outline found there may be the foot's ([`ProbeScope::side_mm`]). 0 where the outline is no rim
    /// of a side of its look (a weight's coloured cap on its chrome body).
    pub side_mm: f64,
}

/// What stays fixed while the camera pose is reused: the board, the camera, the
/// candidate grid and the board's solids.
pub(super) struct Geometry {
    pub board: Board,
    pub camera: Camera,
    pub pose: CameraPose,
    pub shape: PieceShape,
    pub grid: Grid,
    pub sight: Sight,
    /// Per grid cell: whether its line of sight meets the playing surface
    /// (within it, not a gutter, rail or the floor beyond its edge).
    pub surface_cells: Vec<bool>,
}

impl Geometry {
    pub fn new(board: &Board, camera: &Camera, pose: &CameraPose, shape: PieceShape, grid: Grid) -> Geometry {
        let (surface, eye) = (&board.surface, pose.centre());
        let cols = grid.cols as usize;
        let surface_cells = (0..grid.pixels.len())
            .map(|i| {
                let c = grid.cell_centre((i % cols) as f64, (i / cols) as f64);
                // The cell (at the pieces' top height) seen along its line of sight down to z = 0.
                let s = shape.top_z_mm / (eye.z_mm - shape.top_z_mm).max(1e-9);
                let down = BoardPoint::new(c.x_mm + s * (c.x_mm - eye.x_mm), c.y_mm + s * (c.y_mm - eye.y_mm));
                !grid.pixels[i][0].is_nan() && surface.contains(c) && surface.contains(down)
            })
            .collect();
        Geometry { board: board.clone(), camera: *camera, pose: *pose, shape, grid, sight: Sight::new(board), surface_cells }
    }
}

/// One frame's verification context: the geometry, the frame, its colour masks
/// (one per team, or the pale mask of discs), the piece model, and the pieces
/// that hide outline (found pieces over or beside the one measured).
#[derive(Clone, Copy)]
pub(super) struct Ctx<'a> {
    pub geo: &'a Geometry,
    pub model: &'a dyn PieceModel,
    pub teams: &'a [TeamColour],
    pub fit_cfg: FitConfig,
    pub frame: &'a ColourView<'a>,
    pub masks: &'a [GrayImage],
    /// Each grid cell's hue, saturation and value in this frame.
    pub hsv: &'a [Vec<f32>; 3],
    pub occluders: &'a Occluders,
}

impl<'a> Ctx<'a> {
    /// The same context with `occluders` hiding outline.
    pub fn hidden_by<'b>(&self, occluders: &'b Occluders) -> Ctx<'b>
    where
        'a: 'b,
    {
        Ctx { occluders, ..*self }
    }

    /// The colour class of colour mask `class`.
    pub fn colour(&self, class: usize) -> Option<ColourClass> {
        self.teams.get(class).map(|t| t.colour)
    }

    /// The colour mask of a team (the first for discs, which have none).
    pub fn class_of(&self, team: Option<Team>) -> usize {
        team.and_then(|t| self.teams.iter().position(|c| c.team == t)).unwrap_or(0)
    }

    /// A found piece as an occluder, lying flat with its top where it was measured.
    pub fn occluder(&self, d: &Detection) -> PieceSolid {
        let b = &self.geo.board;
        // A washer leaning in a hole rises away from the hole's centre, towards the rim it is propped on.
        let hole = b.washer().filter(|_| d.tilt_deg.abs() > LEANING_DEG).and_then(|w| {
            w.holes.iter().min_by(|a, b| a.centre().distance(d.footprint.centre).total_cmp(&b.centre().distance(d.footprint.centre)))
        });
        match hole {
            Some(h) => {
                let (c, half) = (d.footprint.centre, b.piece().thickness_mm / 2.0);
                let rise = (c.y_mm - h.y_mm).atan2(c.x_mm - h.x_mm);
                PieceSolid::tilted(b, d.kind, c.at_height(d.top_z_mm - half), d.tilt_deg, rise)
            }
            None => PieceSolid::on(b, d.kind, d.footprint, d.top_z_mm),
        }
    }

    /// Measures one candidate: a free outline fit at the top height, the rest
    /// height the piece model finds for it, then the piece checks.
    pub fn measure(&self, start: Footprint, team: Option<Team>, class: usize) -> Result<Detection, DetectError> {
        // A piece whose outline may be smaller than its size (a weight's cap
        // not given) is first looked for from its smallest outline up.
        let s = self.geo.shape;
        let reach = (s.radius_mm - s.smallest_outline_mm).max(0.0) / 2.0;
        let first = Footprint::new(start.centre, start.radius_mm - reach);
        let cfg = FitConfig { band_mm: self.fit_cfg.band_mm + reach, ..self.fit_cfg };
        let fit = self.fit_with(first, s.top_z_mm, false, &cfg, class)?;
        let rest = self.model.rest(self, fit, class)?;
        let d = self.finish(rest.fit, rest.z_mm, team, class)?;
        Ok(match rest.height {
            RestHeight::Fixed => d,
            RestHeight::FromSize { sigma_mm } => self.at_measured_height(d, sigma_mm),
            RestHeight::Uncertain { sigma_mm } => self.widened_for_height(d, sigma_mm),
        })
    }

    /// A detection at a height nothing fixes, measured with standard
    /// uncertainty `height_sigma_mm` from its outline's size.
    pub fn at_measured_height(&self, d: Detection, height_sigma_mm: f64) -> Detection {
        Detection { measured_by: MeasuredBy::HeightFromSize, ..self.widened_for_height(d, height_sigma_mm) }
    }

    /// A detection whose height has standard uncertainty `height_sigma_mm`:
    /// its footprint moves along the line of sight with the height, so its
    /// uncertainty grows by that much.
    pub fn widened_for_height(&self, mut d: Detection, height_sigma_mm: f64) -> Detection {
        let along = self.sideways_per_height(d.footprint.centre.at_height(d.top_z_mm)) * height_sigma_mm;
        d.sigma_mm = d.sigma_mm.hypot(along);
        d
    }

    /// Checks a fit is a piece, then measures its centre with the radius held.
    pub fn finish(&self, fit: CircleFit, z: f64, team: Option<Team>, class: usize) -> Result<Detection, DetectError> {
        let shape = self.geo.shape;
        if fit.rms_mm > MAX_FIT_RMS_PX * fit.mm_per_px {
            return Err(DetectError::NotAPiece {
                x_mm: fit.footprint.centre.x_mm,
                y_mm: fit.footprint.centre.y_mm,
                reason: format!("edges scatter {:.1} px about the best circle", fit.rms_mm / fit.mm_per_px),
            });
        }
        // The colour grid lies at the surface pieces' height: it checks only
        // those, and not discs, whose pale wood it tells from glare poorly.
        let checkable = (z - shape.top_z_mm).abs() < 1e-9 && shape.team_coloured;
        let fill = if checkable { self.geo.grid.fill_fraction(&self.masks[class], fit.footprint) } else { 1.0 };
        if fill < MIN_FILL_FRACTION {
            return Err(DetectError::NotAPiece {
                x_mm: fit.footprint.centre.x_mm,
                y_mm: fit.footprint.centre.y_mm,
                reason: format!("only {:.0} % of the outline's inside has the piece's colour", 100.0 * fill),
            });
        }
        // With no colour to fill, the outline's edges must be a round outline's, facing its centre.
        let facing = if shape.team_coloured { 1.0 } else { self.facing_centre(&fit) };
        if facing < MIN_RADIAL_SHARE {
            return Err(DetectError::NotAPiece {
                x_mm: fit.footprint.centre.x_mm,
                y_mm: fit.footprint.centre.y_mm,
                reason: format!("only {:.0} % of the outline's edges face its centre (a texture's, not a piece's)", 100.0 * facing),
            });
        }
        let spread = if shape.team_coloured { 0.0 } else { self.inside_spread(&fit) };
        if spread > MAX_INSIDE_SPREAD {
            return Err(DetectError::UnevenFace { x_mm: fit.footprint.centre.x_mm, y_mm: fit.footprint.centre.y_mm, percent: 100.0 * spread });
        }
        let radius_error = fit.footprint.radius_mm - shape.radius_mm;
        let doubt = (radius_error.abs() > MAX_RADIUS_ERROR_MM)
            .then(|| format!("outline radius {:.1} mm, expected {:.1} mm", fit.footprint.radius_mm, shape.radius_mm));
        // The piece is rigid and of known size: its centre is best estimated with the radius held.
        let held = self.centre_fit(Footprint::new(fit.footprint.centre, shape.radius_mm), z, class).unwrap_or(fit.clone());
        Ok(Detection {
            kind: shape.kind,
            team,
            footprint: Footprint::new(held.footprint.centre, shape.footprint_radius_mm),
            top_z_mm: z,
            tilt_deg: 0.0,
            sigma_mm: held.centre_sigma_mm,
            fit_rms_mm: held.rms_mm,
            edges_found: held.inliers,
            probes: held.probes,
            mm_per_px: held.mm_per_px,
            doubt,
            measured_by: MeasuredBy::of_fit(&held),
            outline_radius_mm: Some(fit.footprint.radius_mm),
        })
    }

    /// How much the brightness just inside a fit's edges ([`INSIDE_FACE_PX`] in, at the fit's height) varies
    /// round it, as a share of the edges' contrast: the median absolute deviation of those brightnesses (the mean
    /// of the three channels) from their median, over the median of the edges' contrasts (see
    /// [`MAX_INSIDE_SPREAD`]); infinite with no colour read.
    fn inside_spread(&self, fit: &CircleFit) -> f64 {
        let (camera, pose, c) = (&self.geo.camera, &self.geo.pose, fit.footprint.centre);
        let inside: Vec<f32> = fit
            .edges
            .iter()
            .filter_map(|e| {
                let d = e.at.distance(c).max(1e-9);
                let k = INSIDE_FACE_PX * fit.mm_per_px / d;
                let p = BoardPoint::new(e.at.x_mm - (e.at.x_mm - c.x_mm) * k, e.at.y_mm - (e.at.y_mm - c.y_mm) * k);
                let bgr = pose.project(camera, p.at_height(fit.height_mm)).and_then(|px| self.frame.sample(px))?;
                Some((bgr[0] + bgr[1] + bgr[2]) / 3.0)
            })
            .collect();
        let median = super::teams::median;
        let (Some(step), Some(mid)) = (median(fit.edges.iter().map(|e| e.contrast).collect()), median(inside.clone())) else { return f64::INFINITY };
        median(inside.iter().map(|v| (v - mid).abs()).collect()).map_or(f64::INFINITY, |a| a as f64 / step.max(f32::EPSILON) as f64)
    }

    /// The share of a fit's edges whose colour gradient faces its centre (see [`RADIAL_TOLERANCE_DEG`]): the
    /// gradient's orientation is the colour structure tensor's main axis at the edge's pixel, the radial direction
    /// the image of a short step outwards there; zero with no edge in the frame.
    pub fn facing_centre(&self, fit: &CircleFit) -> f64 {
        let (camera, pose, c) = (&self.geo.camera, &self.geo.pose, fit.footprint.centre);
        let at = |p: BoardPoint| pose.project(camera, p.at_height(fit.height_mm));
        let min_cos = RADIAL_TOLERANCE_DEG.to_radians().cos();
        let (mut seen, mut facing) = (0usize, 0usize);
        for e in &fit.edges {
            let d = e.at.distance(c).max(1e-9);
            // A pixel's step along the radius, inwards and outwards.
            let (dx, dy) = ((e.at.x_mm - c.x_mm) / d * fit.mm_per_px, (e.at.y_mm - c.y_mm) / d * fit.mm_per_px);
            let (inner, outer) = (BoardPoint::new(e.at.x_mm - dx, e.at.y_mm - dy), BoardPoint::new(e.at.x_mm + dx, e.at.y_mm + dy));
            let (Some(p), Some(inner), Some(outer)) = (at(e.at), at(inner), at(outer)) else { continue };
            let Some(tensor) = colour_structure(self.frame, p) else { continue };
            seen += 1;
            // The tensor's main axis, and how far it lies from the radial direction (either way along it).
            let axis = 0.5 * (2.0 * tensor[2]).atan2(tensor[0] - tensor[1]);
            let (ru, rv) = (outer.u - inner.u, outer.v - inner.v);
            let cos = (axis.cos() * ru + axis.sin() * rv).abs() / ru.hypot(rv).max(1e-9);
            facing += usize::from(cos >= min_cos);
        }
        if seen == 0 {
            0.0
        } else {
            facing as f64 / seen as f64
        }
    }

    /// The height of the top of a piece whose outline radius is `radius_mm`, from a free-radius `fit` of it at
    /// another height, where the rules fix no height (the ground beside a washer board, a partition's top): an
    /// outline fitted at height `h0` to a piece whose top is at `z` comes out scaled by `(cam_z - h0) / (cam_z -
    /// z)`, and its radius's uncertainty (scatter and [`RADIUS_BIAS_PX`]) gives the height's. Returns the height
    /// and its standard uncertainty (mm).
    pub fn height_from_size(&self, fit: &CircleFit, radius_mm: f64) -> (f64, f64) {
        self.height_of_outline(fit.footprint.radius_mm, fit.height_mm, fit.rms_mm, fit.inliers, fit.mm_per_px, radius_mm)
    }

    /// The least standard uncertainty (mm) of a height measured from the size of an outline of radius `radius_mm`
    /// whose top lies at `top` (on the board, at its height): the radius's bias alone ([`RADIUS_BIAS_PX`]), however
    /// many edges find it. `None` where the camera does not see the point.
    pub fn height_from_size_floor_mm(&self, top: BoardPoint3, radius_mm: f64) -> Option<f64> {
        let px_per_mm = crate::measure::px_per_mm(&self.geo.camera, &self.geo.pose, top)?;
        // An outline of the piece's own size at its height, its edges without scatter.
        Some(self.height_of_outline(radius_mm, top.z_mm, 0.0, 1, 1.0 / px_per_mm, radius_mm).1)
    }

    /// [`Ctx::height_from_size`] of a piece detected at its height `top_z_mm` ([`Ctx::finish`]): the free-radius
    /// outline's radius it kept, with the scatter of its centre fit (the free fit's is not kept, so the sigma is
    /// rough: a screen for measuring again); `None` where the free radius was not kept.
    pub fn height_from_outline(&self, d: &Detection, radius_mm: f64) -> Option<(f64, f64)> {
        Some(self.height_of_outline(d.outline_radius_mm?, d.top_z_mm, d.fit_rms_mm, d.edges_found, d.mm_per_px, radius_mm))
    }

    /// The height of a piece's top whose outline, fitted at `height_mm`, came out `r_fit` (mm) across its edges'
    /// RMS `rms_mm` over `inliers` edge points at `mm_per_px`, the piece's radius being `radius_mm`: the height
    /// and its standard uncertainty (mm).
    fn height_of_outline(&self, r_fit: f64, height_mm: f64, rms_mm: f64, inliers: usize, mm_per_px: f64, radius_mm: f64) -> (f64, f64) {
        let r_fit = r_fit.max(1e-6);
        let distance = self.geo.pose.centre().z_mm - height_mm;
        let z = self.geo.pose.centre().z_mm - distance * radius_mm / r_fit;
        let scatter = rms_mm / (inliers as f64 / 2.0).max(1.0).sqrt();
        let sigma_r = scatter.hypot(RADIUS_BIAS_PX * mm_per_px);
        (z, distance * radius_mm / (r_fit * r_fit) * sigma_r)
    }

    /// A free-radius outline fit at height `z` of a piece of colour class `class`.
    pub fn fit(&self, start: Footprint, z: f64, class: usize) -> Result<CircleFit, MeasureError> {
        self.fit_with(start, z, false, &self.fit_cfg, class)
    }

    /// An outline fit over the probes the camera can see, on edges with the
    /// piece's colour inside: a team's colour for weights and washers (discs
    /// are told by their outline alone).
    pub fn fit_with(&self, start: Footprint, z: f64, fixed_radius: bool, cfg: &FitConfig, class: usize) -> Result<CircleFit, MeasureError> {
        self.fit_inside(start, z, fixed_radius, cfg, self.piece_colour(class), 0.0)
    }

    /// The colour an outline fit asks inside the edges of a piece of colour class `class`: its team's for weights
    /// and washers, none for discs (told by their outline alone).
    fn piece_colour(&self, class: usize) -> Option<ColourClass> {
        if self.geo.shape.team_coloured {
            self.colour(class)
        } else {
            None
        }
    }

    /// The centre of a piece of its size whose outline lies about `start` at height `z`, its radius held (one pass
    /// from a fit's centre): each edge taken as its top's rim or as its side's foot, whichever the circle explains
    /// ([`PieceShape::side_mm`]). Only here, with the outline already verified as the piece's: a free fit, given both,
    /// could explain a shadow's edge or a neighbour's as a foot.
    fn centre_fit(&self, start: Footprint, z: f64, class: usize) -> Result<CircleFit, MeasureError> {
        self.fit_inside(start, z, true, &FitConfig { passes: 1, ..self.fit_cfg }, self.piece_colour(class), self.geo.shape.side_mm)
    }

    /// An outline fit over the probes the camera can see, with no colour asked
    /// of its inside: a round outline whatever its paint.
    pub fn fit_any_colour(&self, start: Footprint, z: f64) -> Result<CircleFit, MeasureError> {
        self.fit_inside(start, z, false, &self.fit_cfg, None, 0.0)
    }

    /// An outline fit over the probes the camera can see, on edges with
    /// `colour` inside (any, with none), of a piece whose side reaches `side_mm` below it.
    fn fit_inside(&self, start: Footprint, z: f64, fixed_radius: bool, cfg: &FitConfig, colour: Option<ColourClass>, side_mm: f64) -> Result<CircleFit, MeasureError> {
        let inside = |bgr: [f32; 3]| colour.is_none_or(|c| c.contains(bgr_to_hsv(bgr)));
        let visible = |p: BoardPoint3| self.sees(p);
        let g = self.geo;
        let scope = ProbeScope { visible: &visible, inside: &inside, side_mm };
        fit_circle_scoped(self.frame, &g.camera, &g.pose, start, z, fixed_radius, cfg, &scope)
    }

    /// The edge points an outline fit's probes find about `start` at height `z` (any colour inside), over the
    /// probes the camera can see: one pass, none fitted.
    pub fn outline_edges(&self, start: Footprint, z: f64) -> Vec<EdgePoint> {
        self.outline_edges_with(start, z, &self.fit_cfg, &|_| true)
    }

    /// [`Ctx::outline_edges`] with the probes `cfg` describes (a ring of another width), on edges whose inside
    /// colour (BGR, as sampled) `inside` accepts.
    pub fn outline_edges_with(&self, start: Footprint, z: f64, cfg: &FitConfig, inside: &(dyn Fn([f32; 3]) -> bool + Sync)) -> Vec<EdgePoint> {
        let visible = |p: BoardPoint3| self.sees(p);
        let g = self.geo;
        probe_outline(self.frame, &g.camera, &g.pose, start, z, cfg, &ProbeScope { visible: &visible, inside, side_mm: 0.0 })
    }

    /// The median colour (BGR, per channel) of `n` points round a circle at height `z`, of those in the frame.
    pub fn ring_colour(&self, centre: BoardPoint, radius_mm: f64, z: f64, n: usize) -> Option<[f32; 3]> {
        let seen: Vec<[f32; 3]> = (0..n)
            .filter_map(|k| {
                let t = std::f64::consts::TAU * k as f64 / n as f64;
                let p = BoardPoint3::new(centre.x_mm + radius_mm * t.cos(), centre.y_mm + radius_mm * t.sin(), z);
                self.geo.pose.project(&self.geo.camera, p).and_then(|px| self.frame.sample(px))
            })
            .collect();
        let channel = |k: usize| super::teams::median(seen.iter().map(|c| c[k]).collect());
        Some([channel(0)?, channel(1)?, channel(2)?])
    }

    /// Of free-radius fits at height `z` from each start, the best supported
    /// (least RMS per edge point) of those `keep` accepts.
    pub fn best_fit(&self, starts: impl Iterator<Item = BoardPoint>, z: f64, class: usize, keep: impl Fn(&CircleFit) -> bool) -> Option<CircleFit> {
        let r = self.geo.shape.radius_mm;
        starts
            .filter_map(|s| self.fit(Footprint::new(s, r), z, class).ok())
            .filter(|f| keep(f))
            .min_by(|a, b| (a.rms_mm / a.inliers as f64).total_cmp(&(b.rms_mm / b.inliers as f64)))
    }

    /// Whether the camera's line of sight to a point is clear of the board's
    /// solids (a cup's rim, a sjoelbak's walls, gate bar and partitions) and of
    /// the occluding pieces.
    pub fn sees(&self, p: BoardPoint3) -> bool {
        self.geo.sight.clear(p, self.geo.pose.centre(), RIM_CLEARANCE_MM, self.occluders)
    }

    /// The HSV colour of the frame at a board point, if it is in the frame.
    pub fn hsv_at(&self, p: BoardPoint3) -> Option<[f32; 3]> {
        self.geo.pose.project(&self.geo.camera, p).and_then(|px| self.frame.sample(px)).map(bgr_to_hsv)
    }

    /// Image resolution at a point (mm per pixel), NaN where it does not project.
    pub fn mm_per_px(&self, p: BoardPoint3) -> f64 {
        crate::measure::px_per_mm(&self.geo.camera, &self.geo.pose, p).map_or(f64::NAN, |s| 1.0 / s)
    }

    /// Where the camera's line of sight through board point `p` meets the plane
    /// `z = height`: the same image point, at another height.
    pub fn along_sight(&self, p: BoardPoint3, height: f64) -> Option<BoardPoint> {
        let c = self.geo.pose.centre();
        let dz = p.z_mm - c.z_mm;
        if dz.abs() < 1e-9 {
            return None;
        }
        let s = (height - c.z_mm) / dz;
        (s > 0.0).then(|| BoardPoint::new(c.x_mm + s * (p.x_mm - c.x_mm), c.y_mm + s * (p.y_mm - c.y_mm)))
    }

    /// Where a piece's top, seen along the line of sight, appears on the grid's plane.
    pub fn seen_on_grid(&self, d: &Detection) -> BoardPoint {
        self.along_sight(d.footprint.centre.at_height(d.top_z_mm), self.geo.shape.top_z_mm).unwrap_or(d.footprint.centre)
    }

    /// How far (mm, sideways) a point's image moves per mm of height error:
    /// its horizontal distance from the camera over its depth below it.
    pub fn sideways_per_height(&self, p: BoardPoint3) -> f64 {
        let c = self.geo.pose.centre();
        (c.x_mm - p.x_mm).hypot(c.y_mm - p.y_mm) / (c.z_mm - p.z_mm).max(1.0)
    }

    /// The hole whose opening (seen at the surface) holds a point, with a margin
    /// for the parallax of a washer seen down the cup.
    pub fn hole_opening(&self, p: BoardPoint) -> Option<usize> {
        let w = self.geo.board.washer()?;
        w.holes.iter().position(|h| p.distance(h.centre()) < h.radius() + OPENING_MARGIN_MM)
    }
}

/// The colour structure tensor `[gx.gx, gy.gy, gx.gy]` (summed over the three channels) of the frame at pixel
/// `p`, from central differences [`GRADIENT_STEP_PX`] either side; `None` near the frame's edge.
fn colour_structure(frame: &ColourView, p: PixelPoint) -> Option<[f64; 3]> {
    let h = GRADIENT_STEP_PX;
    let at = |du: f64, dv: f64| frame.sample(PixelPoint::new(p.u + du, p.v + dv));
    let (right, left, below, above) = (at(h, 0.0)?, at(-h, 0.0)?, at(0.0, h)?, at(0.0, -h)?);
    let mut t = [0.0; 3];
    for k in 0..3 {
        let (gu, gv) = ((right[k] - left[k]) as f64, (below[k] - above[k]) as f64);
        t[0] += gu * gu;
        t[1] += gv * gv;
        t[2] += gu * gv;
    }
    Some(t)
}

