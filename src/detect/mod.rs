//! Detection: finds every weight, washer and disc in a frame, tells its team, and
//! measures its footprint at its real height (the `Detections` stage).
//!
//! Two steps, apart. **Proposals** ([`proposals`]) say where a piece might be:
//! blobs of a team's colour on a metric grid over the board at the height of the
//! pieces' top faces (each grid cell projected once per camera pose and sampled
//! per frame; a blob's area says how many pieces it may hold), or circles of the
//! piece's size (sjoelen discs). **Verification** ([`verify`]) asks whether a
//! piece of this kind, at one of the heights where it can rest, explains the
//! image there: an outline fit by [`crate::measure::fit_circle_scoped`] in the
//! raw frame, to sub-pixel precision, over the probes the camera can see past the
//! board's solids ([`sight`], from [`crate::board::Solids`]). What differs between
//! pieces lives in one **piece model** per kind ([`models`]: weight, washer,
//! disc) behind one interface: the piece's look and size, the heights it rests
//! at, the cases seen only in part, and what is settled once all are verified.

mod caps;
mod colour;
mod grid;
mod models;
mod proposals;
mod sight;
mod split;
mod teams;
mod verify;

pub use colour::{bgr_to_hsv, ColourClass, PaleClass, TeamColour, BLUE, DISC, RED};
pub use models::{LeanerFit, WeightCap, AREA_MISMATCH_FRACTION, CAP_RING_MIN_MM, LEANER_POSE_SIGMA_MM, MAX_CAP_RECESS_MM, MIN_PIECE_AREA_FRACTION};
pub use proposals::{MIN_BLOB_WIDTH_FRACTION, THIN_RUN_MM};
pub use teams::{check_teams, hue_distance, standard_teams, PiecesFile, TeamSpec, TeamsSource, PIECES_FORMAT};
pub use verify::{MAX_FIT_RMS_PX, MAX_RADIUS_ERROR_MM, MIN_FILL_FRACTION, RIM_CLEARANCE_MM};

use crate::board::Board;
use crate::camera::{Camera, CameraPose};
use crate::geom::{BoardPoint, Footprint};
use crate::measure::{ColourView, FitConfig, MeasureError};
use crate::piece::{PieceKind, Team, MIN_CAP_RADIUS_MM};
use grid::{median_saturation_value, open_in_place, Grid};
use image::GrayImage;
use models::PieceModel;
use serde::{Deserialize, Serialize};
use verify::{Ctx, Geometry};

/// Errors of the detection stage.
#[derive(Debug, thiserror::Error)]
pub enum DetectError {
    #[error("the frame is {got_width}x{got_height} but the camera is {want_width}x{want_height}")]
    FrameSize { got_width: usize, got_height: usize, want_width: u32, want_height: u32 },
    #[error("no part of the board is in view of this camera pose")]
    BoardNotInView,
    #[error("no piece at ({x_mm:.1}, {y_mm:.1}) mm: {reason}")]
    NotAPiece { x_mm: f64, y_mm: f64, reason: String },
    /// A crisp round outline of the piece's size whose inside is no one evenly lit face: a piece half in a
    /// shadow, or an outline the board's own structure drew (see `verify::MAX_INSIDE_SPREAD`).
    #[error("no piece at ({x_mm:.1}, {y_mm:.1}) mm: the brightness inside the outline varies by {percent:.0} % of its edges' contrast (no one evenly lit face)")]
    UnevenFace { x_mm: f64, y_mm: f64, percent: f64 },
    #[error(transparent)]
    Measure(#[from] MeasureError),
    #[error("detector configuration: `{field}` {problem}")]
    Config { field: &'static str, problem: String },
    #[error("pieces file {path}: {problem}")]
    PiecesFile { path: std::path::PathBuf, problem: String },
    #[error("team colour sample at pixel ({u}, {v}): {problem}")]
    TeamSample { u: f64, v: f64, problem: String },
}

/// The detector's settings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DetectorConfig {
    /// Team colours of weights and washers (defaults: the standard red and blue).
    pub teams: Vec<TeamColour>,
    /// Where `teams` came from: the standard colours are learned again from a
    /// frame with piece-sized colour no team explains; given ones are kept.
    #[serde(default)]
    pub teams_source: TeamsSource,
    /// The look of sjoelen discs (light wood) relative to the board.
    pub disc: PaleClass,
    /// Candidate grid spacing on the board (mm).
    pub grid_mm: f64,
    /// Outline fitting.
    pub fit: FitConfig,
    /// Washer boards: let the learned hole-state model ([`crate::model`]) correct
    /// the washer calls (leaners, washers missed in cups); off for the classical path.
    #[serde(default = "hole_model_on")]
    pub hole_model: bool,
    /// Shuffleboard weights whose coloured cap is smaller than the chrome body:
    /// the cap's radius (mm); `None`: the cap is the whole top.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub weight_cap_radius_mm: Option<f64>,
    /// How far a weight's cap smaller than the body lies below the body's top
    /// (mm); `None`: not known (anywhere up to [`MAX_CAP_RECESS_MM`], which
    /// widens the footprints' uncertainty along the line of sight).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub weight_cap_recess_mm: Option<f64>,
    /// How well the camera pose is known: the standard uncertainty (mm) it gives a
    /// place on the board (a located pose's or typed points' `position_sigma_mm`;
    /// 0 for a pose taken as exact). A piece measured overlapping the board's
    /// solids by no more than the pose allows is taken to touch them.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub pose_sigma_mm: f64,
}

fn is_zero(v: &f64) -> bool {
    *v == 0.0
}

impl DetectorConfig {
    /// These settings with the teams' colours a pieces file gives, and the weight
    /// caps where it states them (`score --pieces`, a fixture's `pieces.json`).
    pub fn with_pieces(self, file: &PiecesFile) -> DetectorConfig {
        DetectorConfig {
            teams: file.teams.clone(),
            teams_source: TeamsSource::Given,
            weight_cap_radius_mm: file.weight_cap_radius_mm.or(self.weight_cap_radius_mm),
            weight_cap_recess_mm: file.weight_cap_recess_mm.or(self.weight_cap_recess_mm),
            ..self
        }
    }

    /// What the set-up says of a weight's cap.
    pub fn weight_cap(&self) -> WeightCap {
        WeightCap { radius_mm: self.weight_cap_radius_mm, recess_mm: self.weight_cap_recess_mm }
    }
}

fn hole_model_on() -> bool {
    true
}

impl Default for DetectorConfig {
    fn default() -> Self {
        DetectorConfig {
            teams: standard_teams(),
            teams_source: TeamsSource::Standard,
            disc: DISC,
            // 2 mm cells put ~680 cells in a weight's cap and ~530 in a disc: blob
            // areas count pieces to within a few percent.
            grid_mm: 2.0,
            fit: FitConfig::default(),
            hole_model: true,
            weight_cap_radius_mm: None,
            weight_cap_recess_mm: None,
            pose_sigma_mm: 0.0,
        }
    }
}

/// One detected piece.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Detection {
    pub kind: PieceKind,
    pub team: Option<Team>,
    pub footprint: Footprint,
    /// The height at which its outline was measured (its top face).
    pub top_z_mm: f64,
    /// Tilt of its top face from horizontal (a leaning washer), degrees.
    pub tilt_deg: f64,
    /// Standard uncertainty of the footprint centre (mm), from the fit.
    pub sigma_mm: f64,
    pub fit_rms_mm: f64,
    pub edges_found: usize,
    pub probes: usize,
    /// Image resolution at the piece (mm per pixel).
    pub mm_per_px: f64,
    /// Why this detection should be checked by a person, if it should.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub doubt: Option<String>,
    /// What placed it.
    #[serde(default)]
    pub measured_by: MeasuredBy,
    /// The radius its outline fitted with the radius free (mm), before its
    /// known size was held: a weight's cap, learned from it where not given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outline_radius_mm: Option<f64>,
}

#[cfg(test)]
impl Detection {
    /// A piece as a clean outline fit measures it (60 of 64 edges, 0.1 mm RMS, sigma 0.2 mm at 1.5 mm a pixel), for
    /// unit tests of what is made of detections.
    pub(crate) fn clean_outline(kind: PieceKind, team: Option<Team>, footprint: Footprint, top_z_mm: f64) -> Detection {
        Detection {
            kind,
            team,
            footprint,
            top_z_mm,
            tilt_deg: 0.0,
            sigma_mm: 0.2,
            fit_rms_mm: 0.1,
            edges_found: 60,
            probes: 64,
            mm_per_px: 1.5,
            doubt: None,
            measured_by: MeasuredBy::Outline,
            outline_radius_mm: None,
        }
    }
}

/// What a detection's position was measured from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MeasuredBy {
    /// Its outline's edges, fitted to sub-pixel precision.
    #[default]
    Outline,
    /// A washer on a cup's floor, by the team's colour seen there (its
    /// outline hidden by the rim or a washer over it).
    FloorColour,
    /// A leaning washer, by the leaning pose that explains its colour.
    LeaningPose,
    /// Seen only by the learned hole-state model: placed at the hole's centre.
    HoleModel,
    /// Its outline, at a height nothing fixes (the ground beside a washer
    /// board) measured from the outline's apparent size; its sigma includes
    /// that height's uncertainty along the line of sight.
    HeightFromSize,
    /// A disc hidden in a pile: counted from the height of the pile's top (its size and its side) and placed under it (in
    /// doubt: where in the pile it lies, the image does not show).
    PileTop,
}

impl MeasuredBy {
    /// What placed a fit: a cup-floor colour placement has no edges; a fit
    /// that found its outline (also one refining such a placement) has.
    fn of_fit(f: &crate::measure::CircleFit) -> MeasuredBy {
        if f.probes == 0 {
            MeasuredBy::FloorColour
        } else {
            MeasuredBy::Outline
        }
    }
}

impl Detection {
    /// Adds `why` to what puts it in doubt (after any reason already given).
    pub(crate) fn add_doubt(&mut self, why: String) {
        self.doubt = Some(match self.doubt.take() {
            Some(was) => format!("{was}; {why}"),
            None => why,
        });
    }

    /// Takes a new measurement of its centre (its radius kept), with the
    /// standard uncertainty `sigma_mm`.
    fn take(&mut self, f: &crate::measure::CircleFit, sigma_mm: f64) {
        self.footprint = Footprint::new(f.footprint.centre, self.footprint.radius_mm);
        self.sigma_mm = sigma_mm;
        (self.fit_rms_mm, self.edges_found, self.probes, self.mm_per_px) = (f.rms_mm, f.inliers, f.probes, f.mm_per_px);
        self.measured_by = MeasuredBy::of_fit(f);
    }
}

/// Something of a piece's colour that is not explained as pieces.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Unexplained {
    pub kind: PieceKind,
    pub team: Option<Team>,
    pub centre: BoardPoint,
    pub area_mm2: f64,
    pub reason: String,
}

impl Unexplained {
    /// The radius of a disc of its area, mm (0 for a place with no area given: a cup's floor).
    pub fn radius_mm(&self) -> f64 {
        (self.area_mm2.max(0.0) / std::f64::consts::PI).sqrt()
    }
}

/// The detection stage's output.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct Detections {
    pub pieces: Vec<Detection>,
    pub unexplained: Vec<Unexplained>,
    /// Why the frame's pieces as a whole are in doubt, beyond any one piece's (a view that cannot tell a pile of
    /// discs from one disc): each makes the frame need review.
    #[serde(default)]
    pub doubts: Vec<String>,
}

/// The detector: its configuration, the board and camera it works for, its
/// piece model, and the scratch buffers it reuses from frame to frame.
pub struct Detector {
    cfg: DetectorConfig,
    geo: Geometry,
    model: Box<dyn PieceModel>,
    /// One mask per colour class (the teams', or the discs' pale look), reused across frames.
    masks: Vec<GrayImage>,
    /// Each grid cell's colour in the current frame: hue, saturation and
    /// value, one array each (NaN where out of view).
    hsv: [Vec<f32>; 3],
    /// Paint of no team's colour on the surface, this frame.
    foreign: GrayImage,
    /// Why the teams' colours learned from a frame are in doubt.
    team_doubts: Vec<String>,
    /// Whether learning the teams' colours was tried (once per detector: a
    /// fixed camera's frames show the same pieces).
    learning_tried: bool,
    /// Whether the weights' cap radius was learned from a frame (the set-up gave none).
    cap_learned: bool,
}

impl Detector {
    /// A detector for `board` seen by `camera` from `pose`. Precomputes the
    /// candidate grid's projection, so build it once per camera pose.
    pub fn new(mut cfg: DetectorConfig, board: &Board, camera: &Camera, pose: &CameraPose) -> Result<Detector, DetectError> {
        if !(cfg.grid_mm > 0.2 && cfg.grid_mm <= 10.0) {
            return Err(DetectError::Config { field: "grid_mm", problem: format!("must be in (0.2, 10] mm, got {}", cfg.grid_mm) });
        }
        if cfg.fit.probes < 8 {
            return Err(DetectError::Config { field: "fit.probes", problem: "needs at least 8 probes".into() });
        }
        if let Some(cap) = cfg.weight_cap_radius_mm {
            let body = board.piece().radius_mm;
            if !(MIN_CAP_RADIUS_MM..=body).contains(&cap) {
                let problem = format!("must be {MIN_CAP_RADIUS_MM}..={body} mm (the weight's radius), got {cap}");
                return Err(DetectError::Config { field: "weight_cap_radius_mm", problem });
            }
        }
        if let Some(recess) = cfg.weight_cap_recess_mm {
            let height = board.piece().thickness_mm;
            if !(0.0..height).contains(&recess) {
                let problem = format!("must be 0..{height} mm (the weight's height), got {recess}");
                return Err(DetectError::Config { field: "weight_cap_recess_mm", problem });
            }
        }
        let model = models::model_for(board, cfg.weight_cap(), cfg.pose_sigma_mm);
        let shape = model.shape();
        let grid = Grid::new(board, camera, pose, cfg.grid_mm, shape.top_z_mm);
        if !grid.in_view() {
            return Err(DetectError::BoardNotInView);
        }
        // A board file's teams stand in for the standard colours (given ones win).
        if let (TeamsSource::Standard, Some(teams)) = (cfg.teams_source, &board.teams) {
            (cfg.teams, cfg.teams_source) = (teams.clone(), TeamsSource::Given);
        }
        let classes = if shape.team_coloured { cfg.teams.len() } else { 1 };
        let masks = (0..classes).map(|_| GrayImage::new(grid.cols, grid.rows)).collect();
        if shape.team_coloured {
            check_teams(&cfg.teams).map_err(|problem| DetectError::Config { field: "teams", problem })?;
        }
        let foreign = GrayImage::new(grid.cols, grid.rows);
        let geo = Geometry::new(board, camera, pose, shape, grid);
        Ok(Detector { cfg, geo, model, masks, hsv: Default::default(), foreign, team_doubts: Vec::new(), learning_tried: false, cap_learned: false })
    }

    /// Detects and measures every piece in a BGR frame.
    pub fn detect(&mut self, frame: &ColourView) -> Result<Detections, DetectError> {
        let cam = &self.geo.camera;
        if frame.width() != cam.image_width as usize || frame.height() != cam.image_height as usize {
            return Err(DetectError::FrameSize {
                got_width: frame.width(),
                got_height: frame.height(),
                want_width: cam.image_width,
                want_height: cam.image_height,
            });
        }
        self.geo.grid.gather(frame, &mut self.hsv);
        self.mark_colours();
        let mut out = self.find(frame);
        if !self.geo.shape.team_coloured {
            return Ok(out);
        }
        // Weights whose outlines agree on a cap smaller than the body, with no
        // cap given: the frame is read again with that cap (below).
        out = self.with_learned_cap(frame, out);
        // Piece-sized paint no team's colour explains: with the standard
        // colours, the teams' colours are learned from this frame and the
        // frame read again; what is still unexplained needs review.
        let mut strays = self.stray_colour(frame, &out);
        if !strays.is_empty() && self.cfg.teams_source == TeamsSource::Standard && !self.learning_tried {
            self.learning_tried = true;
            let cx = self.context(frame);
            if let Some(learned) = teams::learn(&cx, teams::board_hue(&cx), &self.cfg.teams) {
                let standard = std::mem::replace(&mut self.cfg.teams, learned.teams);
                self.mark_colours();
                let again = self.find(frame);
                let still = self.stray_colour(frame, &again);
                // The learned colours stand if they explain more of the paint
                // and read no more colour as a cast than the standard ones.
                let casts = |d: &Detections| d.unexplained.iter().filter(|u| u.area_mm2 > teams::cast_area(&self.geo)).count();
                if still.len() < strays.len() && casts(&again) <= casts(&out) {
                    (self.cfg.teams_source, self.team_doubts) = (TeamsSource::Learned, learned.doubts);
                    // The weights the learned colours find may show the cap the first reading could not.
                    let again = self.with_learned_cap(frame, again);
                    let still = self.stray_colour(frame, &again);
                    (out, strays) = (again, still);
                } else {
                    self.cfg.teams = standard;
                    self.mark_colours();
                }
            }
        }
        out.unexplained.extend(strays);
        Ok(out)
    }

    /// `out` read again with the cap its weights' outlines agree on, where the set-up gives no cap radius and
    /// they show one smaller than the body: the reading with the cap stands if it finds as many pieces and
    /// leaves fewer in doubt (and the cap then stands for the next frames too); otherwise `out` as it was.
    fn with_learned_cap(&mut self, frame: &ColourView, out: Detections) -> Detections {
        if self.cfg.weight_cap_radius_mm.is_some() {
            return out;
        }
        let Some(radius) = caps::learned_cap(&self.geo.board, &out, self.geo.shape.top_z_mm) else { return out };
        let cap = WeightCap { radius_mm: Some(radius), ..self.cfg.weight_cap() };
        let before = (std::mem::replace(&mut self.model, models::model_for(&self.geo.board, cap, self.cfg.pose_sigma_mm)), self.geo.shape);
        self.geo.shape = self.model.shape();
        let again = self.find(frame);
        let in_doubt = |d: &Detections| d.pieces.iter().filter(|p| p.doubt.is_some()).count();
        if again.pieces.len() >= out.pieces.len() && in_doubt(&again) < in_doubt(&out) {
            (self.cfg.weight_cap_radius_mm, self.cap_learned) = (Some(radius), true);
            again
        } else {
            (self.model, self.geo.shape) = before;
            out
        }
    }

    /// Proposals and verification by the piece model, over this frame's masks.
    fn find(&self, frame: &ColourView) -> Detections {
        let mut out = Detections::default();
        self.model.find(&self.context(frame), &mut out);
        out
    }

    /// Piece-sized paint of no team's colour that no piece found accounts for.
    fn stray_colour(&mut self, frame: &ColourView, out: &Detections) -> Vec<Unexplained> {
        let mut foreign = std::mem::take(&mut self.foreign);
        let strays = {
            let cx = self.context(frame);
            let board = teams::board_hue(&cx);
            if teams::mark_foreign(&cx, board, &mut foreign) { teams::unexplained_colour(&cx, &foreign, out) } else { Vec::new() }
        };
        self.foreign = foreign;
        strays
    }

    /// The teams' colour models in use (learned ones once learned), and where they came from.
    pub fn teams(&self) -> (&[TeamColour], TeamsSource) {
        (&self.cfg.teams, self.cfg.teams_source)
    }

    /// What the detector takes of a weight's cap (given, or its radius learned
    /// from a frame), and whether its radius was learned.
    pub fn weight_cap(&self) -> (WeightCap, bool) {
        (self.cfg.weight_cap(), self.cap_learned)
    }

    /// Why the teams' colours learned from a frame are in doubt (empty when not learned or sure).
    pub fn team_doubts(&self) -> &[String] {
        &self.team_doubts
    }

    /// The colour masks of this frame: each team's colour, or (discs) paler
    /// and brighter than the board, with runs thinner than any piece removed.
    fn mark_colours(&mut self) {
        for m in &mut self.masks {
            m.fill(0);
        }
        let [h, s, v] = &self.hsv;
        if self.geo.shape.team_coloured {
            for (t, mask) in self.cfg.teams.iter().zip(&mut self.masks) {
                t.colour.mark(h, s, v, mask);
            }
        } else {
            // The board's own colour: cells on the playing surface only.
            let g = &self.geo.grid;
            let surface = &self.geo.board.surface;
            let on_board = (0..h.len()).filter(|&i| !h[i].is_nan() && surface.contains(g.cell_centre((i as u32 % g.cols) as f64, (i as u32 / g.cols) as f64)));
            let (s_med, v_med) = median_saturation_value(on_board.map(|i| (s[i], v[i])));
            let pale = self.cfg.disc;
            let mask: &mut [u8] = &mut self.masks[0];
            for (((h, s), v), m) in h.iter().zip(s.iter()).zip(v.iter()).zip(mask) {
                if !h.is_nan() && pale.contains([*h, *s, *v], s_med, v_med) {
                    *m = 255;
                }
            }
        }
        let k_cells = (THIN_RUN_MM / self.geo.grid.step).ceil().clamp(1.0, 255.0) as i32;
        for m in &mut self.masks {
            open_in_place(m, k_cells);
        }
    }

    /// The verification context of `frame` (its colour as last detected).
    fn context<'a>(&'a self, frame: &'a ColourView<'a>) -> Ctx<'a> {
        Ctx {
            geo: &self.geo,
            model: self.model.as_ref(),
            teams: &self.cfg.teams,
            fit_cfg: self.cfg.fit,
            frame,
            masks: &self.masks,
            hsv: &self.hsv,
            occluders: &sight::NO_OCCLUDERS,
        }
    }

    /// Measures a washer of `team` leaning in hole `hole` (its underside
    /// propped on the rim, its low edge down in the cup): a search over the
    /// leaning poses, each scored by how well its projected top outline
    /// separates the team's colour inside from other colours outside. `None`
    /// on boards without holes, for a team without a colour, or where no
    /// leaning pose explains the hole.
    pub fn measure_leaner(&self, frame: &ColourView, hole: usize, team: Team) -> Option<LeanerFit> {
        let class = self.cfg.teams.iter().position(|t| t.team == team)?;
        models::measure_leaner(&self.context(frame), hole, class)
    }

    /// Places a washer of `team` that lies flat on hole `hole`'s floor by the
    /// team's colour there, seen past the pieces `over` (a leaner's low edge
    /// down in the cup shows its colour there too): its centre and standard
    /// uncertainty, or `None` where too little of it shows.
    pub fn place_on_cup_floor(&self, frame: &ColourView, hole: usize, team: Team, over: &[Detection]) -> Option<(BoardPoint, f64)> {
        let class = self.cfg.teams.iter().position(|t| t.team == team)?;
        let cx = self.context(frame);
        let hiding = sight::Occluders::new(over.iter().map(|d| cx.occluder(d)).collect());
        let fit = models::place_on_cup_floor(&cx.hidden_by(&hiding), hole, class)?;
        Some((fit.footprint.centre, fit.centre_sigma_mm))
    }

    /// Whether hole `hole`'s floor, seen past the pieces `over`, shows no paint of `team` where a washer lying
    /// flat on it would be seen, over enough of the floor to tell: the image contradicts a flat washer there.
    pub fn cup_floor_shows_none(&self, frame: &ColourView, hole: usize, team: Team, over: &[Detection]) -> bool {
        let Some(class) = self.cfg.teams.iter().position(|t| t.team == team) else { return false };
        let cx = self.context(frame);
        let hiding = sight::Occluders::new(over.iter().map(|d| cx.occluder(d)).collect());
        models::cup_floor_shows_none(&cx.hidden_by(&hiding), hole, class)
    }
}

/// Whether two detections are one piece found twice: centres closer than a
/// fraction of a radius at about one height (two flat pieces cannot overlap so
/// far; a washer on another in a cup lies 3.2 mm higher, and is told from it
/// only by its colour).
pub fn same_piece(a: &Detection, b: &Detection, radius_mm: f64) -> bool {
    a.footprint.centre.distance(b.footprint.centre) < SAME_PIECE_FRACTION * radius_mm && (a.top_z_mm - b.top_z_mm).abs() < SAME_PIECE_HEIGHT_MM
}

/// Centres closer than this fraction of a radius are one piece (two fits of
/// one outline agree to a millimetre or two; two flat pieces side by side are
/// a diameter apart).
const SAME_PIECE_FRACTION: f64 = 0.25;
/// Fits of one piece at heights closer than this (mm) are at one height.
const SAME_PIECE_HEIGHT_MM: f64 = 1.0;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geom::BoardPoint;
    use crate::measure::tests::{draw_disc, oblique_pose, test_camera};

    #[test]
    fn finds_and_measures_a_red_weight() {
        let board = Board::load("shuffleboard-22ft").unwrap();
        let cam = test_camera();
        let pose = oblique_pose();
        let truth = BoardPoint::new(-37.2, 141.9);
        // draw_disc paints RGB; the detector reads BGR frames.
        let mut img = draw_disc(&cam, &pose, truth, 29.37, 25.0);
        for px in img.chunks_mut(3) {
            px.swap(0, 2);
        }
        let view = ColourView::new(1280, 960, &img).unwrap();
        let mut det = Detector::new(DetectorConfig::default(), &board, &cam, &pose).unwrap();
        let found = det.detect(&view).unwrap();
        assert_eq!(found.pieces.len(), 1, "{found:?}");
        let p = &found.pieces[0];
        assert_eq!(p.team, Some(Team::Red));
        assert!(p.footprint.centre.distance(truth) < 0.05, "{p:?}");
        assert!(found.unexplained.is_empty(), "{:?}", found.unexplained);
    }

    /// A sjoelbak frame of one flat round face of a disc's size (its top at 13 mm) on a plain board, drawn by
    /// 4x4 supersampling: each point of the face takes the colour `face` gives it (BGR).
    fn sjoelbak_frame(cam: &crate::camera::Camera, pose: &crate::camera::CameraPose, centre: BoardPoint, face: &dyn Fn(BoardPoint) -> [f64; 3]) -> Vec<u8> {
        crate::measure::tests::draw_face(cam, pose, centre, 26.0, 13.0, [70.0, 110.0, 150.0], face, 4)
    }

    #[test]
    fn a_disc_is_one_evenly_lit_face_and_a_circle_round_two_tones_is_none() {
        let board = Board::load("sjoelbak").unwrap();
        let cam = crate::camera::Camera { image_width: 640, image_height: 480, fx: 700.0, fy: 700.0, cx: 320.0, cy: 240.0, distortion: crate::camera::Distortion::brown(0.0, 0.0, 0.0, 0.0, 0.0) };
        let pose = crate::camera::CameraPose::look_at(crate::geom::BoardPoint3::new(30.0, 700.0, 900.0), crate::geom::BoardPoint3::new(0.0, 400.0, 0.0), [0.0, -1.0, 0.0]).unwrap();
        let centre = BoardPoint::new(-12.3, 407.6);
        let detect = |img: &[u8]| {
            let view = ColourView::new(640, 480, img).unwrap();
            Detector::new(DetectorConfig::default(), &board, &cam, &pose).unwrap().detect(&view).unwrap()
        };
        let (pale, shade) = ([150.0, 200.0, 225.0], [80.0, 105.0, 120.0]);
        // One face: pale wood, and the same with a wall's shadow over a third of it (the median's reach).
        let even = detect(&sjoelbak_frame(&cam, &pose, centre, &|_| pale));
        let shadowed = detect(&sjoelbak_frame(&cam, &pose, centre, &|p| if p.x_mm < centre.x_mm - 9.0 { shade } else { pale }));
        for (what, found) in [("even", &even), ("a third in shadow", &shadowed)] {
            assert_eq!(found.pieces.len(), 1, "{what}: {found:?}");
            // The fits' own error on a synthetic rim: a few hundredths of a millimetre.
            assert!(found.pieces[0].footprint.centre.distance(centre) < 0.2, "{what}: {:?}", found.pieces[0]);
        }
        // A round outline whose inside is two tones half and half (a print, grain and a shadow's edge): the
        // circle search proposes it and the outline fits, but no one flat face lies inside it.
        let split = detect(&sjoelbak_frame(&cam, &pose, centre, &|p| if p.x_mm < centre.x_mm { shade } else { pale }));
        assert!(split.pieces.is_empty(), "{split:?}");
    }
}
