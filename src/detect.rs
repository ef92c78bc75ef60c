//! Detection: finds every weight, washer and disc in a frame, tells its team, and
//! measures its footprint at its real height (the `Detections` stage).
//!
//! Two steps. Candidates come from a metric grid over the board at the height of
//! the pieces' top faces: each grid cell is projected once per camera pose
//! (kept while the pose is reused) and sampled per frame; cells are classified by
//! colour and grouped into blobs, and a blob's area says how many pieces it
//! holds. Each candidate is then measured by [`crate::measure::fit_circle`] at the
//! piece's real height, in the raw frame, to sub-pixel precision.

use crate::board::{Board, Layout};
use crate::camera::{Camera, CameraPose};
use crate::geom::{BoardPoint, BoardPoint3, Footprint, PixelPoint};
use crate::measure::{fit_circle_scoped, BilinearTap, ColourView, FitConfig, MeasureError, ProbeScope};
use crate::piece::{PieceKind, Team};
use crate::render::raycast::World;
use image::{GrayImage, Luma};
use imageproc::distance_transform::Norm;
use imageproc::morphology::open;
use imageproc::region_labelling::{connected_components, Connectivity};
use serde::{Deserialize, Serialize};

/// Errors of the detection stage.
#[derive(Debug, thiserror::Error)]
pub enum DetectError {
    #[error("the frame is {got_width}x{got_height} but the camera is {want_width}x{want_height}")]
    FrameSize { got_width: usize, got_height: usize, want_width: u32, want_height: u32 },
    #[error("no part of the board is in view of this camera pose")]
    BoardNotInView,
    #[error("no piece at ({x_mm:.1}, {y_mm:.1}) mm: {reason}")]
    NotAPiece { x_mm: f64, y_mm: f64, reason: String },
    #[error(transparent)]
    Measure(#[from] MeasureError),
    #[error("detector configuration: `{field}` {problem}")]
    Config { field: &'static str, problem: String },
}

/// A colour class in HSV: hue window (degrees), minimum saturation and value (0..1).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ColourClass {
    pub hue_deg: f32,
    pub hue_tolerance_deg: f32,
    pub min_saturation: f32,
    pub min_value: f32,
    /// Upper bound on saturation (0..1), for pale pieces such as wooden discs.
    pub max_saturation: f32,
}

impl ColourClass {
    /// Sets each cell of `mask` to 255 where the colour (`h`, `s`, `v`, one
    /// array per component) belongs to the class and to 0 elsewhere: the test
    /// of [`ColourClass::contains`], cell for cell. With the class's hue in
    /// 0..=360 a hue difference lies within one turn and needs no `fmod`, and
    /// the loop runs as vector code.
    fn mark(&self, h: &[f32], s: &[f32], v: &[f32], mask: &mut [u8]) {
        let cells = h.iter().zip(s).zip(v).zip(mask);
        if !(0.0..=360.0).contains(&self.hue_deg) {
            for (((h, s), v), m) in cells {
                *m = if self.contains([*h, *s, *v]) { 255 } else { 0 };
            }
            return;
        }
        for (((h, s), v), m) in cells {
            // Both hues in 0..=360: `dh.rem_euclid(360.0)` is `dh`, or `dh + 360`
            // below zero, except at +-360 where it is +-0; the nearer way round
            // (below) is 0 for both.
            let dh = *h - self.hue_deg;
            let dh = if dh < 0.0 { dh + 360.0 } else { dh };
            let dh = dh.min(360.0 - dh);
            let inside = (dh <= self.hue_tolerance_deg) & (*s >= self.min_saturation) & (*s <= self.max_saturation) & (*v >= self.min_value);
            *m = if inside { 255 } else { 0 };
        }
    }

    /// Whether an HSV colour belongs to the class.
    pub fn contains(&self, hsv: [f32; 3]) -> bool {
        let dh = rem_euclid_near(hsv[0] - self.hue_deg, 360.0);
        let dh = dh.min(360.0 - dh);
        dh <= self.hue_tolerance_deg && hsv[1] >= self.min_saturation && hsv[1] <= self.max_saturation && hsv[2] >= self.min_value
    }
}

/// A team's colour.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct TeamColour {
    pub team: Team,
    pub colour: ColourClass,
}

/// The detector's settings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DetectorConfig {
    /// Team colours of weights and washers (defaults: red and blue).
    pub teams: Vec<TeamColour>,
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
}

fn hole_model_on() -> bool {
    true
}

/// Red caps: hue 0 +- 15 degrees. Lacquered wood sits at 20-40 degrees in every
/// fixture light (measured over the rendered set), so 15 keeps a 5 degree gap;
/// lit caps measure saturation 0.45-0.8, the floor leaves room for glare.
pub const RED: ColourClass =
    ColourClass { hue_deg: 0.0, hue_tolerance_deg: 15.0, min_saturation: 0.35, min_value: 0.12, max_saturation: 1.0 };
/// Blue caps: a wide hue window (blue drifts to cyan in daylight and to purple
/// under tungsten); nothing else on a board is blue. Caps in bright, warm
/// light measure saturation down to 0.33 in the fixtures; the board's dark
/// slate gutters, the only other bluish surface, stay under 0.2.
pub const BLUE: ColourClass =
    ColourClass { hue_deg: 225.0, hue_tolerance_deg: 35.0, min_saturation: 0.25, min_value: 0.10, max_saturation: 1.0 };
/// Pieces told from the board by being paler and brighter than it (sjoelen's
/// light-wood discs on a lacquered board): thresholds relative to the board's
/// median saturation and value in the same frame, so they follow the light.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct PaleClass {
    /// Least paleness, `value / board's value - saturation / board's saturation`.
    pub min_paleness: f32,
    /// Least `value / board's value`.
    pub min_value_ratio: f32,
}

impl PaleClass {
    /// Whether a colour is pale against a board of median saturation `s_med` and value `v_med`.
    pub fn contains(&self, hsv: [f32; 3], s_med: f32, v_med: f32) -> bool {
        let (s, v) = (hsv[1] / s_med.max(f32::EPSILON), hsv[2] / v_med.max(f32::EPSILON));
        v >= self.min_value_ratio && v - s >= self.min_paleness
    }
}

/// Over the twelve sjoelen fixtures' lights, discs measure 0.33-0.76 of the
/// board's saturation and 1.14-1.52 of its value, and their paleness (value
/// ratio minus saturation ratio) is at least 0.37 at the 1st percentile of
/// their pixels; unlit board wood reaches 0.37 only at its 99.9th (glare goes
/// far above: it is told from discs by the outline fit, not by colour).
pub const DISC: PaleClass = PaleClass { min_paleness: 0.3, min_value_ratio: 1.05 };

impl Default for DetectorConfig {
    fn default() -> Self {
        DetectorConfig {
            teams: vec![TeamColour { team: Team::Red, colour: RED }, TeamColour { team: Team::Blue, colour: BLUE }],
            disc: DISC,
            // 2 mm cells put ~680 cells in a weight's cap and ~530 in a disc: blob
            // areas count pieces to within a few percent.
            grid_mm: 2.0,
            fit: FitConfig::default(),
            hole_model: true,
        }
    }
}

/// The colour grid is sampled in square tiles of this many cells a side (see
/// [`Detector::detect`]): 32 cells of 2 mm span ~60-100 pixels on the bench
/// frames, a few hundred cache lines, which stay in the core's cache.
const GATHER_TILE: usize = 32;

/// A blob whose area is below this fraction of one piece is noise (glare
/// fringes, a chip of paint), not a piece.
pub const MIN_PIECE_AREA_FRACTION: f64 = 0.35;
/// A blob whose area is this far (as a fraction of one piece) from a whole
/// number of pieces is not explained as pieces: flagged for review.
pub const AREA_MISMATCH_FRACTION: f64 = 0.4;
/// Colour runs narrower than twice this (mm) are removed before grouping: a
/// painted stripe (6.35 mm) of a team's colour, chalk marks, glare fringes.
/// Every piece is far wider (weights 58.7, washers 63.5, discs 52 mm).
pub const THIN_RUN_MM: f64 = 4.0;
/// A blob's spread across its narrowest direction, as a fraction of one
/// piece's (r / 2 for a disc), below which it cannot be pieces.
pub const MIN_BLOB_WIDTH_FRACTION: f64 = 0.6;
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
/// Canny's upper threshold in HoughCircles on the 8-bit brightness grid: a
/// disc's rim against the board is 30-80 levels; grain and glare speckle,
/// smoothed, stay below.
const HOUGH_CANNY_HIGH: f64 = 40.0;
/// Votes a circle needs, as a fraction of its circumference in cells: a disc
/// half hidden by a wall or the gate bar still shows more than this.
const HOUGH_VOTES_FRACTION: f64 = 0.25;
/// Disc recovery (see [`Detector::recover_discs`]): fits start on a lattice
/// over a leftover blob this fraction of a radius apart (the fit converges
/// from about a radius away; the lattice keeps every start within half that).
const RECOVERY_START_SPACING: f64 = 0.5;
/// At most this many starts per leftover blob (a glare patch many discs in
/// area would otherwise cost a fit per lattice point).
const MAX_RECOVERY_STARTS: usize = 24;
/// Recovery starts are first chosen at least this fraction of a radius apart
/// (the fit converges from about a radius away): a glare blob many discs in
/// area is then covered by the capped starts, not just its middle.
const RECOVERY_START_GAP: f64 = 1.0;
/// Recovery probes each outline point with this many samples each side along
/// the circle (see `FitConfig::arc_samples`): a pale disc's rim against glare
/// is ~20 levels, about the glare grain's per-pixel noise, and averaging three
/// pixels lets the fit find it (the circle search and the first fits keep
/// single samples, whose edges are sharpest on clean rims).
const RECOVERY_ARC_SAMPLES: usize = 1;
/// Rounds of recovery: each finds at most one disc (the detections found so
/// far then hide outline for the next).
const MAX_RECOVERY_ROUNDS: usize = 4;
/// Two flat discs' centres are at least a diameter apart; a little less
/// allows for the fits' error (fraction of a radius).
const MIN_DISC_SEPARATION: f64 = 1.6;
/// A leaner found only by its pose (neither a flat outline nor a ring on the
/// cup's floor explained the colour) must explain the colour nearly
/// perfectly: the fixtures' leaners score 1.0 (the score is the mean of
/// inside-minus-outside team colour round its outline, -1..1).
const FALLBACK_LEANER_MIN_SCORE: f64 = 0.9;
/// Standard uncertainty (mm) of a leaner's centre from the pose search: the
/// RMS of the fixtures' 13 leaners' placement errors is 0.91 mm (worst 1.5 mm),
/// rounded up.
pub const LEANER_POSE_SIGMA_MM: f64 = 1.0;
/// A leaning washer's pose found by [`Detector::measure_leaner`].
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct LeanerFit {
    /// The washer's centre (mid-thickness) in the board frame.
    pub centre: BoardPoint3,
    pub tilt_deg: f64,
    /// Mean (team colour inside - outside) along the outline, -1..1.
    pub score: f64,
}

/// Leaning poses searched: directions of the rise round the hole (10 degrees
/// apart), tilts (5 degrees apart over what a washer propped on a rim takes),
/// and how far into the hole its centre lies.
const LEANER_AZIMUTHS: usize = 36;
const LEANER_TILTS: usize = 5;
const LEANER_TILT_MIN_DEG: f64 = 15.0;
const LEANER_TILT_MAX_DEG: f64 = 35.0;
const LEANER_REACHES: usize = 6;
/// A leaner's centre lies inside the rim (over the hole, or it would lie on
/// the board rather than tip in); a washer propped on the rim has it barely
/// inside. This much (mm) keeps the posed underside off the rim's edge.
const LEANER_RIM_CLEARANCE_MM: f64 = 1.0;
/// Points round the outline, and how far inside / outside it each is sampled.
const LEANER_OUTLINE_POINTS: usize = 72;
/// The fine search's steps each way from the last best (a fifth of the last
/// step each), and how many times it is refined.
const LEANER_FINE: i32 = 2;
const LEANER_REFINE_LEVELS: usize = 2;
const LEANER_PROBE_MM: f64 = 3.0;
/// The last refinement's probes, closer to the outline (mm): at 3 mm every
/// pose within ~3 mm of the true one scores the same.
const LEANER_CLOSE_PROBE_MM: f64 = 1.0;
/// The last refinement's steps each way (a tenth of a coarse step each).
const LEANER_LAST_STEPS: i32 = 4;
/// The last refinement's tilt step (degrees), over the whole range.
const LEANER_LAST_TILT_STEP_DEG: f64 = 1.0;
/// Below this outline score (team colour inside, none outside, on average) no
/// leaning pose explains the hole: the flat fit stands, with the model's doubt.
const LEANER_MIN_SCORE: f64 = 0.5;

/// A detection accounts for the colour within this factor of its radius (its
/// side, shadow fringe and the grid's blur lie just outside the outline).
const COVER_SLACK: f64 = 1.25;
/// Unaccounted colour of at least this fraction of a piece's area (and not a
/// thin run) makes the frame need review: a quarter of a piece is more than
/// glare fringes or a shadow's tint leave, and less than a half-hidden piece.
const UNACCOUNTED_AREA_FRACTION: f64 = 0.25;

/// A team's colour over more of the view than this many of its pieces cover is not pieces: no game puts more than 30
/// of a kind in play (sjoelen's discs; a team has 4 weights or 5 washers). A colour cast, a cloth of the team's
/// colour, or a damaged frame: the colour is reported as unexplained (review) instead of fitted blob by blob, which
/// would also take a fit for every piece-sized part of it.
const MAX_PIECES_OF_ONE_COLOUR: f64 = 40.0;
/// A washer seen down a cup may show only this fraction of its area (the rim
/// hides the rest from an oblique camera); less is treated as noise.
const MIN_CUP_AREA_FRACTION: f64 = 0.1;
/// Colour this far (mm) outside a hole's rim still counts as seen through its
/// opening: the parallax of a washer 76 mm down.
const OPENING_MARGIN_MM: f64 = 10.0;
/// Starting places tried round a cup's floor for a washer in it.
const CUP_START_ANGLES: usize = 8;
/// A cup washer's fitted centre may lie this far (mm) beyond where the cup's
/// wall would stop it: the fit's own error on a half-hidden outline.
const CUP_REACH_SLACK_MM: f64 = 3.0;
/// The cup-floor colour template ([`Detector::cup_template`]): ring and
/// outside points at this many angles, set this far (mm) in from the ring's
/// edges (clear of the edges' blur at the floor's ~2 mm pixels).
const CUP_TEMPLATE_ANGLES: usize = 36;
/// The template's lattice (mm), for the floor's samples and the centres tried.
const CUP_TEMPLATE_CELL_MM: f64 = 0.5;
const CUP_TEMPLATE_INSET_MM: f64 = 2.5;
/// At least this fraction of the ring's points must show the team's colour:
/// a washer a rim hides but for a sliver is not placed by colour.
const CUP_TEMPLATE_MIN_HITS: f64 = 0.15;
/// Of the ring's points in view, at least this fraction must show the team's
/// colour: a washer flat on the floor matches 88-100 % in the fixtures, while
/// a leaner's colour seen through the opening matches 40 % at its best.
const CUP_TEMPLATE_MIN_MATCH: f64 = 0.8;
/// Standard uncertainty (mm) of a washer placed by the template: a ring
/// point's spacing round a partly hidden outline (the fixtures' template
/// placements are within 0.3-2.6 mm).
const CUP_TEMPLATE_SIGMA_MM: f64 = 2.0;
/// A fitted radius further than this from the piece's real radius means the
/// outline is not that piece at that height (mm).
pub const MAX_RADIUS_ERROR_MM: f64 = 2.5;

/// Two washers overlapping on a cup's floor: which lies on the other is told by
/// the colour where their rings overlap, sampled on this lattice (mm)...
const STACK_LATTICE_MM: f64 = 1.0;
/// ... from at least this many points in view on both rings (a lens narrower
/// than a few mm, or hidden by the rim, tells nothing) ...
const STACK_MIN_POINTS: usize = 12;
/// ... of which this share must have the one team's colour (the rest is edge
/// blur, shadow and the other team's colour seen at a ring's margin).
const STACK_MAJORITY: f64 = 0.75;
/// The lower of two stacked washers shows a short arc of its outline: its
/// refit probes this many times as densely, so that the arc holds the
/// dozen edge points a fit needs ([`crate::measure::MIN_EDGE_POINTS`]); the
/// centre's uncertainty follows from the arc's span, however dense.
const STACK_LOWER_PROBE_FACTOR: usize = 2;

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

/// The detection stage's output.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct Detections {
    pub pieces: Vec<Detection>,
    pub unexplained: Vec<Unexplained>,
}

/// Colour left over once the detections are accounted for.
struct Leftover {
    centre: BoardPoint,
    area_mm2: f64,
    /// The blob's cells' centres, at the grid's height.
    cells: Vec<BoardPoint>,
}

/// What the board's pieces look like.
#[derive(Debug, Clone, Copy)]
struct PieceShape {
    kind: PieceKind,
    radius_mm: f64,
    top_z_mm: f64,
}

fn piece_shape(board: &Board) -> PieceShape {
    let p = board.piece();
    PieceShape { kind: p.kind, radius_mm: p.radius_mm, top_z_mm: p.thickness_mm }
}

/// The candidate grid: board cells at the pieces' top height and where they appear.
struct Grid {
    x0: f64,
    y0: f64,
    step: f64,
    cols: u32,
    rows: u32,
    /// Image position of each cell (row-major); NaN where out of view.
    pixels: Vec<[f32; 2]>,
    /// Where each cell's colour is read in a frame of the camera's size (the
    /// bilinear sample at its image position, worked out once per pose).
    taps: Vec<BilinearTap>,
}

impl Grid {
    fn new(board: &Board, camera: &Camera, pose: &CameraPose, step: f64, z: f64) -> Grid {
        // The surface plus a margin for pieces in the gutters, hanging off, or on
        // the ground beside a washer board (seen from above at the surface's
        // height, their images lie further out still).
        let margin = match board.layout {
            Layout::Washer(_) => 300.0,
            _ => 120.0,
        };
        let (x0, x1) = (-board.surface.half_width() - margin, board.surface.half_width() + margin);
        let (y0, y1) = (-margin, board.surface.length_mm + margin);
        let cols = ((x1 - x0) / step).ceil() as u32;
        let rows = ((y1 - y0) / step).ceil() as u32;
        let (w, h) = (camera.image_width as f64, camera.image_height as f64);
        let mut pixels = Vec::with_capacity((cols * rows) as usize);
        for r in 0..rows {
            for c in 0..cols {
                let p = BoardPoint3::new(x0 + (c as f64 + 0.5) * step, y0 + (r as f64 + 0.5) * step, z);
                let px = pose.project(camera, p).filter(|q| q.u >= 0.0 && q.v >= 0.0 && q.u <= w - 1.0 && q.v <= h - 1.0);
                pixels.push(px.map_or([f32::NAN; 2], |q| [q.u as f32, q.v as f32]));
            }
        }
        // Keep only the rows and columns that have a cell in view: an end camera
        // sees a fraction of a long board.
        let visible = |i: usize| !pixels[i][0].is_nan();
        let (mut c_lo, mut c_hi, mut r_lo, mut r_hi) = (u32::MAX, 0, u32::MAX, 0);
        for i in (0..pixels.len()).filter(|&i| visible(i)) {
            let (c, r) = (i as u32 % cols, i as u32 / cols);
            (c_lo, c_hi, r_lo, r_hi) = (c_lo.min(c), c_hi.max(c), r_lo.min(r), r_hi.max(r));
        }
        if c_lo > c_hi {
            return Grid { x0, y0, step, cols: 0, rows: 0, pixels: Vec::new(), taps: Vec::new() };
        }
        let (new_cols, new_rows) = (c_hi - c_lo + 1, r_hi - r_lo + 1);
        let mut cropped = Vec::with_capacity((new_cols * new_rows) as usize);
        for r in r_lo..=r_hi {
            let start = (r * cols + c_lo) as usize;
            cropped.extend_from_slice(&pixels[start..start + new_cols as usize]);
        }
        let (width, height) = (camera.image_width as usize, camera.image_height as usize);
        let taps = cropped
            .iter()
            .map(|px| if px[0].is_nan() { BilinearTap::OUT_OF_VIEW } else { BilinearTap::new(width, height, PixelPoint::new(px[0] as f64, px[1] as f64)) })
            .collect();
        Grid {
            x0: x0 + c_lo as f64 * step,
            y0: y0 + r_lo as f64 * step,
            step,
            cols: new_cols,
            rows: new_rows,
            pixels: cropped,
            taps,
        }
    }

    fn cell_centre(&self, c: f64, r: f64) -> BoardPoint {
        BoardPoint::new(self.x0 + (c + 0.5) * self.step, self.y0 + (r + 0.5) * self.step)
    }
}

/// BGR (8-bit) to HSV with hue in degrees and saturation, value in 0..1.
///
/// Written without branches (the three hue candidates are all computed and
/// one is chosen), so that the colour grid's pass over every cell of every
/// frame runs as vector code: a cell's colour decides which candidate, and
/// branching on it mispredicts at every piece's edge and in the sensor noise.
#[inline]
pub fn bgr_to_hsv(bgr: [f32; 3]) -> [f32; 3] {
    let (b, g, r) = (bgr[0] / 255.0, bgr[1] / 255.0, bgr[2] / 255.0);
    let max = r.max(g).max(b);
    let min = r.min(g).min(b);
    let d = max - min;
    // Where red is the largest, |g - b| <= d: the ratio lies in [-1, 1], and
    // its `rem_euclid(6.0)` is itself, or itself + 6 below zero.
    let from_red = (g - b) / d;
    let from_red = if from_red < 0.0 { from_red + 6.0 } else { from_red };
    let (h_red, h_green, h_blue) = (60.0 * from_red, 60.0 * ((b - r) / d + 2.0), 60.0 * ((r - g) / d + 4.0));
    let h = if d <= f32::EPSILON {
        0.0
    } else if max == r {
        h_red
    } else if max == g {
        h_green
    } else {
        h_blue
    };
    let s = if max <= f32::EPSILON { 0.0 } else { d / max };
    [h, s, max]
}

/// [`bgr_to_hsv`] over a grid's cells in place, one array per channel: B, G,
/// R in; H, S, V out.
fn bgr_to_hsv_in_place(c0: &mut [f32], c1: &mut [f32], c2: &mut [f32]) {
    for ((x, y), z) in c0.iter_mut().zip(c1.iter_mut()).zip(c2.iter_mut()) {
        [*x, *y, *z] = bgr_to_hsv([*x, *y, *z]);
    }
}

/// `x.rem_euclid(m)` for `m > 0`, bit for bit, without the library's `fmod`
/// where `x` lies within one period of zero (every hue and hue difference):
/// the colour grid classifies every cell of every frame.
#[inline]
fn rem_euclid_near(x: f32, m: f32) -> f32 {
    if (0.0..m).contains(&x) {
        x
    } else if x < 0.0 && x > -m {
        x + m
    } else {
        x.rem_euclid(m)
    }
}

/// The detector: its configuration, the board and camera it works for, and the
/// scratch buffers it reuses from frame to frame.
pub struct Detector {
    cfg: DetectorConfig,
    board: Board,
    camera: Camera,
    pose: CameraPose,
    shape: PieceShape,
    grid: Grid,
    /// The board's solids (walls, gate bar, partitions, cups): what can hide
    /// part of a piece from the camera.
    solids: World,
    /// One mask per colour class, reused across frames.
    masks: Vec<GrayImage>,
    /// Each grid cell's colour in the current frame: hue, saturation and
    /// value, one array each (NaN where out of view).
    hsv: [Vec<f32>; 3],
}

impl Detector {
    /// A detector for `board` seen by `camera` from `pose`. Precomputes the
    /// candidate grid's projection, so build it once per camera pose.
    pub fn new(cfg: DetectorConfig, board: &Board, camera: &Camera, pose: &CameraPose) -> Result<Detector, DetectError> {
        if !(cfg.grid_mm > 0.2 && cfg.grid_mm <= 10.0) {
            return Err(DetectError::Config { field: "grid_mm", problem: format!("must be in (0.2, 10] mm, got {}", cfg.grid_mm) });
        }
        if cfg.fit.probes < 8 {
            return Err(DetectError::Config { field: "fit.probes", problem: "needs at least 8 probes".into() });
        }
        let shape = piece_shape(board);
        let grid = Grid::new(board, camera, pose, cfg.grid_mm, shape.top_z_mm);
        if grid.pixels.iter().all(|p| p[0].is_nan()) {
            return Err(DetectError::BoardNotInView);
        }
        let classes = if shape.kind == PieceKind::Disc { 1 } else { cfg.teams.len() };
        let masks = (0..classes).map(|_| GrayImage::new(grid.cols, grid.rows)).collect();
        let solids = World::build(board, &[]);
        Ok(Detector { cfg, board: board.clone(), camera: *camera, pose: *pose, shape, grid, solids, masks, hsv: Default::default() })
    }

    /// Detects and measures every piece in a BGR frame.
    pub fn detect(&mut self, frame: &ColourView) -> Result<Detections, DetectError> {
        if frame.width() != self.camera.image_width as usize || frame.height() != self.camera.image_height as usize {
            return Err(DetectError::FrameSize {
                got_width: frame.width(),
                got_height: frame.height(),
                want_width: self.camera.image_width,
                want_height: self.camera.image_height,
            });
        }
        for m in &mut self.masks {
            m.fill(0);
        }
        // Each cell's colour: one bilinear sample at its centre's image. (Four
        // samples a cell apart were tried: slower, and no better on the fixtures.)
        let [h, s, v] = &mut self.hsv;
        let n = self.grid.taps.len();
        for c in [&mut *h, &mut *s, &mut *v] {
            c.resize(n, 0.0);
        }
        // Tile by tile: a grid row runs obliquely across the image rows, and
        // read row by row each cell's pixels lie on other cache lines than its
        // neighbour's; a tile's cells share theirs.
        let (cols, rows) = (self.grid.cols as usize, self.grid.rows as usize);
        for r0 in (0..rows).step_by(GATHER_TILE) {
            for c0 in (0..cols).step_by(GATHER_TILE) {
                for r in r0..(r0 + GATHER_TILE).min(rows) {
                    for i in r * cols + c0..r * cols + (c0 + GATHER_TILE).min(cols) {
                        [h[i], s[i], v[i]] = frame.read(&self.grid.taps[i]).unwrap_or([f32::NAN; 3]);
                    }
                }
            }
        }
        bgr_to_hsv_in_place(h, s, v);
        let teams: Vec<Option<Team>> = if self.shape.kind == PieceKind::Disc {
            // The board's own colour: cells on the playing surface only.
            let g = &self.grid;
            let on_board = (0..h.len()).filter(|&i| !h[i].is_nan() && self.board.surface.contains(g.cell_centre((i as u32 % g.cols) as f64, (i as u32 / g.cols) as f64)));
            let (s_med, v_med) = median_saturation_value(on_board.map(|i| (s[i], v[i])));
            let pale = self.cfg.disc;
            let mask: &mut [u8] = &mut self.masks[0];
            for (((h, s), v), m) in h.iter().zip(s.iter()).zip(v.iter()).zip(mask) {
                if !h.is_nan() && pale.contains([*h, *s, *v], s_med, v_med) {
                    *m = 255;
                }
            }
            vec![None]
        } else {
            for (t, mask) in self.cfg.teams.iter().zip(&mut self.masks) {
                t.colour.mark(h, s, v, mask);
            }
            self.cfg.teams.iter().map(|t| Some(t.team)).collect()
        };
        let k_cells = (THIN_RUN_MM / self.grid.step).ceil().clamp(1.0, 255.0) as i32;
        for m in &mut self.masks {
            open_in_place(m, k_cells);
        }
        let mut out = Detections::default();
        if self.shape.kind == PieceKind::Disc {
            // Pale wood on wood under glare makes colour blobs unreliable; a
            // disc's circular edge of known size is not: find circles first.
            self.detect_discs(frame, &mut out);
            self.recover_discs(frame, &mut out);
            self.account_for_colour(0, None, &mut out);
            return Ok(out);
        }
        let piece_area = std::f64::consts::PI * self.shape.radius_mm.powi(2);
        let mut flooded = vec![false; teams.len()];
        for (k, team) in teams.iter().enumerate() {
            let area = set_cells(&self.masks[k]).count() as f64 * self.grid.step * self.grid.step;
            if area > MAX_PIECES_OF_ONE_COLOUR * piece_area {
                flooded[k] = true;
                out.unexplained.push(Unexplained {
                    kind: self.shape.kind,
                    team: *team,
                    centre: self.grid.cell_centre(self.grid.cols as f64 / 2.0, self.grid.rows as f64 / 2.0),
                    area_mm2: area,
                    reason: format!(
                        "{:.0} pieces' worth of this team's colour, more than any game puts in play: a colour cast, a cloth \
                         or a damaged frame; not read as pieces",
                        area / piece_area
                    ),
                });
                continue;
            }
            self.detect_class(frame, k, *team, &mut out);
        }
        self.settle_cups(frame, &mut out);
        for (k, team) in teams.iter().enumerate().filter(|(k, _)| !flooded[*k]) {
            self.account_for_colour(k, *team, &mut out);
        }
        Ok(out)
    }

    /// The safety net: colour of a piece that no detection (and no unexplained
    /// entry already) accounts for is reported as unexplained, so a piece the
    /// detector missed makes the frame need review instead of silently not
    /// counting. Each detection covers the cells of its footprint as the grid
    /// sees it (a piece down a cup or on the ground appears where its line of
    /// sight meets the grid's height).
    fn account_for_colour(&self, class: usize, team: Option<Team>, out: &mut Detections) {
        let piece_area = std::f64::consts::PI * self.shape.radius_mm.powi(2);
        for blob in self.leftover_blobs(class, team, out) {
            out.unexplained.push(Unexplained {
                kind: self.shape.kind,
                team,
                centre: blob.centre,
                area_mm2: blob.area_mm2,
                reason: format!("{:.2} pieces' worth of the colour that no piece accounts for", blob.area_mm2 / piece_area),
            });
        }
    }

    /// Blobs of class `class` that no detection of `team` (and no unexplained
    /// entry) covers, of at least [`UNACCOUNTED_AREA_FRACTION`] of a piece and
    /// not thin runs.
    fn leftover_blobs(&self, class: usize, team: Option<Team>, out: &Detections) -> Vec<Leftover> {
        let g = &self.grid;
        let grid_z = self.shape.top_z_mm;
        let covers: Vec<Footprint> = out
            .pieces
            .iter()
            .filter(|d| d.team == team)
            .map(|d| {
                let c = self.along_sight(d.footprint.centre.at_height(d.top_z_mm), grid_z).unwrap_or(d.footprint.centre);
                Footprint::new(c, d.footprint.radius_mm * COVER_SLACK)
            })
            .chain(out.unexplained.iter().filter(|u| u.team == team).map(|u| Footprint::new(u.centre, self.shape.radius_mm * COVER_SLACK)))
            .collect();
        let mut left = self.masks[class].clone();
        let (cols, cells): (usize, &mut [u8]) = (g.cols as usize, &mut left);
        for i in set_cells(&self.masks[class]) {
            if covers.iter().any(|f| g.cell_centre((i % cols) as f64, (i / cols) as f64).distance(f.centre) < f.radius_mm) {
                cells[i] = 0;
            }
        }
        let piece_area = std::f64::consts::PI * self.shape.radius_mm.powi(2);
        blobs_of(&left)
            .into_iter()
            .filter_map(|blob| {
                let area = blob.len() as f64 * g.step * g.step;
                let thin = minor_spread(&blob) * g.step < MIN_BLOB_WIDTH_FRACTION * self.shape.radius_mm / 2.0;
                (area >= UNACCOUNTED_AREA_FRACTION * piece_area && !thin).then(|| {
                    let (sx, sy) = blob.iter().fold((0.0, 0.0), |a, p| (a.0 + p.0, a.1 + p.1));
                    let centre = g.cell_centre(sx / blob.len() as f64, sy / blob.len() as f64);
                    Leftover { centre, area_mm2: area, cells: blob.iter().map(|&(c, r)| g.cell_centre(c, r)).collect() }
                })
            })
            .collect()
    }

    fn detect_class(&self, frame: &ColourView, k: usize, team: Option<Team>, out: &mut Detections) {
        let cell_area = self.grid.step * self.grid.step;
        let piece_area = std::f64::consts::PI * self.shape.radius_mm.powi(2);
        for blob in &blobs_of(&self.masks[k]) {
            let area = blob.len() as f64 * cell_area;
            let pieces = area / piece_area;
            let (sx, sy) = blob.iter().fold((0.0, 0.0), |a, p| (a.0 + p.0, a.1 + p.1));
            let blob_centre = self.grid.cell_centre(sx / blob.len() as f64, sy / blob.len() as f64);
            let minor_mm = minor_spread(blob) * self.grid.step;
            let thin = minor_mm < MIN_BLOB_WIDTH_FRACTION * self.shape.radius_mm / 2.0;
            // A washer down a cup shows only what the rim leaves in view: a
            // crescent or part of a disc in the hole's opening.
            if let Some(hole) = self.hole_opening(blob_centre).filter(|_| thin || pieces < 1.0 - AREA_MISMATCH_FRACTION) {
                if pieces >= MIN_CUP_AREA_FRACTION {
                    match self.measure_cup(frame, hole, blob_centre, team, k) {
                        // Colour of one washer seen in two parts (split by its own hole or a neighbour).
                        Ok(d) if found_already(out, &d, self.shape.radius_mm) => {}
                        Ok(d) => out.pieces.push(d),
                        Err(e) => match self.in_hole_instead(frame, blob_centre, team, k) {
                            Some(d) => out.pieces.push(d),
                            None => out.unexplained.push(Unexplained {
                                kind: self.shape.kind,
                                team,
                                centre: blob_centre,
                                area_mm2: area,
                                reason: e.to_string(),
                            }),
                        },
                    }
                }
                continue;
            }
            if pieces < MIN_PIECE_AREA_FRACTION {
                continue;
            }
            // A washer on the ground beyond the board, partly hidden by the
            // board's side: only part of it shows, beside the board.
            if self.board.washer().is_some() && !self.board.surface.contains(blob_centre) && (thin || pieces < 1.0 - AREA_MISMATCH_FRACTION) {
                match self.measure_ground(frame, blob_centre, team, k) {
                    Ok(d) if found_already(out, &d, self.shape.radius_mm) => {}
                    Ok(d) => out.pieces.push(d),
                    Err(e) => out.unexplained.push(Unexplained { kind: self.shape.kind, team, centre: blob_centre, area_mm2: area, reason: e.to_string() }),
                }
                continue;
            }
            if thin {
                out.unexplained.push(Unexplained {
                    kind: self.shape.kind,
                    team,
                    centre: blob_centre,
                    area_mm2: area,
                    reason: format!("a thin run of the colour ({minor_mm:.1} mm across): not a piece"),
                });
                continue;
            }
            let n = pieces.round().max(1.0) as usize;
            let centres = split_blob(blob, n);
            let mut fitted = 0;
            for (cc, cr) in centres {
                let start = Footprint::new(self.grid.cell_centre(cc, cr), self.shape.radius_mm);
                match self.measure(frame, start, team, k) {
                    // Two starts in one blob whose fits converge on one piece:
                    // the blob's area is not explained by the pieces found.
                    Ok(d) if found_already(out, &d, self.shape.radius_mm) => {
                        out.unexplained.push(Unexplained {
                            kind: self.shape.kind,
                            team,
                            centre: start.centre,
                            area_mm2: area / n as f64,
                            reason: format!("the colour holds {pieces:.2} pieces' worth, but its fits converge on fewer pieces"),
                        });
                    }
                    Ok(d) => {
                        out.pieces.push(d);
                        fitted += 1;
                    }
                    Err(_) if let Some(d) = self.in_hole_instead(frame, start.centre, team, k) => {
                        out.pieces.push(d);
                        fitted += 1;
                    }
                    Err(e) => out.unexplained.push(Unexplained {
                        kind: self.shape.kind,
                        team,
                        centre: start.centre,
                        area_mm2: area / n as f64,
                        reason: e.to_string(),
                    }),
                }
            }
            if (pieces - n as f64).abs() > AREA_MISMATCH_FRACTION && fitted > 0 {
                out.unexplained.push(Unexplained {
                    kind: self.shape.kind,
                    team,
                    centre: blob_centre,
                    area_mm2: area,
                    reason: format!("colour area of {pieces:.2} pieces is not a whole number of pieces"),
                });
            }
        }
    }

    /// Discs: circles of the disc's size in the grid's brightness image (a
    /// metric top-down view at the discs' top height), each measured by an
    /// outline fit; colour decides nothing but the fill check.
    fn detect_discs(&self, frame: &ColourView, out: &mut Detections) {
        use opencv::core::{Mat, Size, Vec3f, Vector};
        use opencv::imgproc;
        let g = &self.grid;
        let grey: Vec<u8> = self.hsv[2].iter().map(|v| if v.is_nan() { 0 } else { (v * 255.0).round() as u8 }).collect();
        let found = (|| -> opencv::Result<Vec<(f64, f64)>> {
            let img = Mat::new_rows_cols_with_data(g.rows as i32, g.cols as i32, &grey)?;
            let mut smooth = Mat::default();
            imgproc::gaussian_blur_def(&img, &mut smooth, Size::new(5, 5), 1.2)?;
            let mut circles: Vector<Vec3f> = Vector::new();
            let r_cells = self.shape.radius_mm / g.step;
            imgproc::hough_circles(
                &smooth,
                &mut circles,
                imgproc::HOUGH_GRADIENT,
                1.0,
                // Two discs' centres are at least a diameter apart, less a little for tilt.
                MIN_DISC_SEPARATION * r_cells,
                HOUGH_CANNY_HIGH,
                HOUGH_VOTES_FRACTION * std::f64::consts::TAU * r_cells,
                (r_cells * 0.85).floor() as i32,
                (r_cells * 1.15).ceil() as i32,
            )?;
            Ok(circles.iter().map(|c| (c[0] as f64 - 0.5, c[1] as f64 - 0.5)).collect())
        })()
        .unwrap_or_default();
        for (cc, cr) in found {
            let start = Footprint::new(g.cell_centre(cc, cr), self.shape.radius_mm);
            let m = self.measure(frame, start, None, 0);
            match m {
                Ok(d) => {
                    if !out.pieces.iter().any(|p| p.footprint.centre.distance(d.footprint.centre) < self.shape.radius_mm) {
                        out.pieces.push(d);
                    }
                }
                Err(DetectError::NotAPiece { .. }) | Err(DetectError::Measure(_)) => {}
                Err(e) => out.unexplained.push(Unexplained {
                    kind: self.shape.kind,
                    team: None,
                    centre: start.centre,
                    area_mm2: 0.0,
                    reason: e.to_string(),
                }),
            }
        }
    }

    /// Discs the circle search missed: a disc against a wall, a partition, the
    /// gate bar or another disc shows only part of its outline, and glare can
    /// wash out the rest. Each pale blob no disc accounts for is searched for
    /// one, from starts spread over the blob, by an outline fit over the probes
    /// the camera can see (the discs found so far hide outline too); the
    /// best-supported fit that passes the piece checks and explains enough of
    /// the blob is kept. Repeated while it finds discs.
    fn recover_discs(&mut self, frame: &ColourView, out: &mut Detections) {
        let r = self.shape.radius_mm;
        let board_only = std::mem::replace(&mut self.solids, World::build(&self.board, &[]));
        // The discs left to find are those whose rim glare washes out: their
        // outline is probed with the noise averaged along it.
        let fit = self.cfg.fit;
        self.cfg.fit.arc_samples = RECOVERY_ARC_SAMPLES;
        for _ in 0..MAX_RECOVERY_ROUNDS {
            let specs: Vec<crate::render::scene::PieceSpec> = out.pieces.iter().enumerate().map(|(i, d)| self.occluder(d, i)).collect();
            self.solids = World::build(&self.board, &specs);
            let mut found = false;
            for blob in self.leftover_blobs(0, None, out) {
                let cell_area = self.grid.step * self.grid.step;
                // Starts: the blob's centre and a lattice over its cells, half a radius apart.
                let mut starts = vec![blob.centre];
                for c in &blob.cells {
                    let snap = |v: f64| (v / (RECOVERY_START_SPACING * r)).round() * RECOVERY_START_SPACING * r;
                    let s = BoardPoint::new(snap(c.x_mm), snap(c.y_mm));
                    if !starts.iter().any(|t| t.distance(s) < 1e-6) {
                        starts.push(s);
                    }
                }
                // The starts whose disc would hold the most of the blob first.
                let held = |s: &BoardPoint| blob.cells.iter().filter(|c| c.distance(*s) < r).count();
                starts[1..].sort_by_cached_key(|s| std::cmp::Reverse(held(s)));
                // A blob of many pieces' worth (a glare patch) holds a disc's worth
                // round most of its starts: spread them over it, a radius apart
                // first, so that a disc at its edge gets a start too.
                let (mut spread, mut rest): (Vec<BoardPoint>, Vec<BoardPoint>) = (vec![starts[0]], Vec::new());
                for s in starts.into_iter().skip(1) {
                    if spread.iter().any(|t| t.distance(s) < RECOVERY_START_GAP * r) {
                        rest.push(s);
                    } else {
                        spread.push(s);
                    }
                }
                spread.extend(rest);
                let mut starts = spread;
                starts.truncate(MAX_RECOVERY_STARTS);
                let explains = |d: &Detection| {
                    let seen = self.along_sight(d.footprint.centre.at_height(d.top_z_mm), self.shape.top_z_mm).unwrap_or(d.footprint.centre);
                    blob.cells.iter().filter(|c| c.distance(seen) < r).count() as f64 * cell_area
                };
                let piece_area = std::f64::consts::PI * r * r;
                let best = starts
                    .into_iter()
                    .filter_map(|s| self.measure(frame, Footprint::new(s, r), None, 0).ok())
                    .filter(|d| d.doubt.is_none())
                    .filter(|d| explains(d) >= UNACCOUNTED_AREA_FRACTION * piece_area)
                    // Two discs at one height cannot overlap; one on a partition can lie over one beside it.
                    .filter(|d| {
                        !out.pieces.iter().any(|p| {
                            p.footprint.centre.distance(d.footprint.centre) < MIN_DISC_SEPARATION * r
                                && (p.top_z_mm - d.top_z_mm).abs() < self.shape.top_z_mm
                        })
                    })
                    .min_by(|a, b| (a.fit_rms_mm / a.edges_found as f64).total_cmp(&(b.fit_rms_mm / b.edges_found as f64)));
                if let Some(d) = best {
                    out.pieces.push(d);
                    found = true;
                    break;
                }
            }
            if !found {
                break;
            }
        }
        self.solids = board_only;
        self.cfg.fit = fit;
    }

    /// Measures one candidate at the piece's real top height.
    fn measure(&self, frame: &ColourView, start: Footprint, team: Option<Team>, class: usize) -> Result<Detection, DetectError> {
        let mut z = self.shape.top_z_mm;
        let mut fit = self.fit(frame, start, z, class)?;
        match &self.board.layout {
            // A weight off the surface lies in the gutter, lower by the gutter's
            // depth: measure it again at that height.
            Layout::Shuffleboard(s) => {
                if !self.board.surface.contains(fit.footprint.centre) {
                    let low = z - s.construction.gutter_depth_mm;
                    // The same image outline, one gutter's depth lower.
                    let start = self.along_sight(fit.footprint.centre.at_height(z), low).unwrap_or(fit.footprint.centre);
                    if let Ok(again) = self.fit(frame, Footprint::new(start, fit.footprint.radius_mm), low, class) {
                        if !self.board.surface.contains(again.footprint.centre) {
                            (z, fit) = (low, again);
                        }
                    }
                }
            }
            Layout::Washer(w) => {
                (z, fit) = self.washer_height(frame, w, fit, class)?;
            }
            // A disc resting on a partition lies on its top, higher by the
            // partition's height: where the outline overlaps a partition, the
            // height whose fitted radius is the disc's own is the real one.
            Layout::Sjoelbak(s) => {
                let half = s.partition_width_mm / 2.0 + self.shape.radius_mm;
                if s.partitions().iter().any(|p| (fit.footprint.centre.x_mm - p).abs() < half) {
                    let high = s.construction.partition_height_mm + s.disc_thickness_mm;
                    let start = self.along_sight(fit.footprint.centre.at_height(z), high).unwrap_or(fit.footprint.centre);
                    if let Ok(up) = self.fit(frame, Footprint::new(start, fit.footprint.radius_mm), high, class) {
                        let r = self.shape.radius_mm;
                        if (up.footprint.radius_mm - r).abs() < (fit.footprint.radius_mm - r).abs() {
                            (z, fit) = (high, up);
                        }
                    }
                }
            }
        }
        self.finish(frame, fit, z, team, class)
    }

    /// Checks a fit is a piece, then measures its centre with the radius held.
    fn finish(
        &self,
        frame: &ColourView,
        fit: crate::measure::CircleFit,
        z: f64,
        team: Option<Team>,
        class: usize,
    ) -> Result<Detection, DetectError> {
        if fit.rms_mm > MAX_FIT_RMS_PX * fit.mm_per_px {
            return Err(DetectError::NotAPiece {
                x_mm: fit.footprint.centre.x_mm,
                y_mm: fit.footprint.centre.y_mm,
                reason: format!("edges scatter {:.1} px about the best circle", fit.rms_mm / fit.mm_per_px),
            });
        }
        // The colour grid lies at the surface pieces' height: it checks only
        // those, and not discs, whose pale wood it tells from glare poorly.
        let checkable = (z - self.shape.top_z_mm).abs() < 1e-9 && self.shape.kind != PieceKind::Disc;
        let fill = if checkable { self.fill_fraction(class, fit.footprint) } else { 1.0 };
        if fill < MIN_FILL_FRACTION {
            return Err(DetectError::NotAPiece {
                x_mm: fit.footprint.centre.x_mm,
                y_mm: fit.footprint.centre.y_mm,
                reason: format!("only {:.0} % of the outline's inside has the piece's colour", 100.0 * fill),
            });
        }
        let radius_error = fit.footprint.radius_mm - self.shape.radius_mm;
        let doubt = (radius_error.abs() > MAX_RADIUS_ERROR_MM).then(|| {
            format!("outline radius {:.1} mm, expected {:.1} mm", fit.footprint.radius_mm, self.shape.radius_mm)
        });
        // The piece is rigid and of known size: its centre is best estimated with the radius held.
        let held = self
            .fit_with(frame, Footprint::new(fit.footprint.centre, self.shape.radius_mm), z, true, &FitConfig { passes: 1, ..self.cfg.fit }, class)
            .unwrap_or(fit.clone());
        Ok(Detection {
            kind: self.shape.kind,
            team,
            footprint: Footprint::new(held.footprint.centre, self.shape.radius_mm),
            top_z_mm: z,
            tilt_deg: 0.0,
            sigma_mm: held.centre_sigma_mm,
            fit_rms_mm: held.rms_mm,
            edges_found: held.inliers,
            probes: held.probes,
            mm_per_px: held.mm_per_px,
            doubt,
            measured_by: MeasuredBy::of_fit(&held),
        })
    }
}

impl Detector {
    /// Washers of two teams overlapping on one cup's floor lie one on the
    /// other: the colour where their rings overlap says which is on top. The
    /// upper one rests between flat on the lower (one washer's thickness up)
    /// and tilted from the floor onto it: it is measured again half a
    /// thickness up, and the parallax of the other half enters its
    /// uncertainty. The lower one is measured again with the upper one as
    /// an occluder, so that the upper's edges (its outline, its own hole
    /// with the lower's colour inside) are not taken for the lower's; where
    /// too little of its outline shows, it is placed by its colour on the
    /// floor ([`Detector::cup_template`]). Washers of one team cannot be told
    /// apart this way and are left as measured.
    fn settle_cups(&mut self, frame: &ColourView, out: &mut Detections) {
        let Some(w) = self.board.washer().cloned() else { return };
        let (r, t) = (self.shape.radius_mm, w.washer_thickness_mm);
        let floor_top = -w.cup_depth_mm + t;
        let on_floor = |d: &Detection| (d.top_z_mm - floor_top).abs() < 1e-6 && d.tilt_deg.abs() <= 1.0 && d.team.is_some();
        // over[i]: the washers lying on washer i.
        let mut over: Vec<Vec<usize>> = vec![Vec::new(); out.pieces.len()];
        for h in &w.holes {
            let cup: Vec<usize> =
                (0..out.pieces.len()).filter(|&i| on_floor(&out.pieces[i]) && out.pieces[i].footprint.centre.distance(h.centre()) < h.radius()).collect();
            for (n, &a) in cup.iter().enumerate() {
                for &b in &cup[n + 1..] {
                    let (da, db) = (&out.pieces[a], &out.pieces[b]);
                    if da.team == db.team || da.footprint.centre.distance(db.footprint.centre) >= 2.0 * r {
                        continue;
                    }
                    match self.upper_of(frame, da, db, &w) {
                        Some(true) => over[b].push(a),
                        Some(false) => over[a].push(b),
                        None => {}
                    }
                }
            }
        }
        if over.iter().all(Vec::is_empty) {
            return;
        }
        // The upper ones first, half a thickness up.
        let lifted: Vec<usize> = (0..out.pieces.len()).filter(|&i| over.iter().any(|o| o.contains(&i))).collect();
        let z_up = floor_top + t / 2.0;
        // Its rest height is anywhere in [floor_top, floor_top + t]: the standard
        // deviation of a uniform spread over one thickness.
        let height_sigma = t / 12f64.sqrt();
        for &i in &lifted {
            let d = &out.pieces[i];
            let class = self.class_of(d.team);
            let start = self.along_sight(d.footprint.centre.at_height(d.top_z_mm), z_up).unwrap_or(d.footprint.centre);
            let parallax = height_sigma * self.sideways_per_height(start.at_height(z_up));
            let fit = self.fit_with(frame, Footprint::new(start, r), z_up, true, &self.cfg.fit, class).ok();
            let d = &mut out.pieces[i];
            d.top_z_mm = z_up;
            match fit {
                Some(f) => d.take(&f, f.centre_sigma_mm.hypot(parallax)),
                // The same image position, half a thickness higher.
                None => {
                    d.footprint = Footprint::new(start, r);
                    d.sigma_mm = d.sigma_mm.hypot(parallax);
                }
            }
        }
        // Then the lower ones, with the upper ones as occluders.
        let board_only = std::mem::replace(&mut self.solids, World::build(&self.board, &[]));
        for i in (0..out.pieces.len()).filter(|&i| !over[i].is_empty()) {
            let specs: Vec<crate::render::scene::PieceSpec> = over[i].iter().map(|&j| self.occluder(&out.pieces[j], j)).collect();
            self.solids = World::build(&self.board, &specs);
            let d = &out.pieces[i];
            let class = self.class_of(d.team);
            let hole = self.hole_under(d.footprint.centre, &w);
            let dense = FitConfig { probes: STACK_LOWER_PROBE_FACTOR * self.cfg.fit.probes, ..self.cfg.fit };
            let placed = self
                .fit_with(frame, Footprint::new(d.footprint.centre, r), floor_top, true, &dense, class)
                .ok()
                .or_else(|| hole.and_then(|h| self.cup_template(frame, &w, h, class)));
            if let Some(f) = placed {
                out.pieces[i].take(&f, f.centre_sigma_mm);
            }
        }
        self.solids = board_only;
    }

    /// Of two washers overlapping on a cup's floor, whether `a` lies on `b`
    /// (`Some(false)`: `b` on `a`), by the team colour seen where their rings
    /// overlap (clear of both washers' holes, through which the lower shows,
    /// and of their edges' blur); `None` where too little of it is in view or
    /// neither colour clearly holds it.
    fn upper_of(&self, frame: &ColourView, a: &Detection, b: &Detection, w: &crate::board::WasherBoard) -> Option<bool> {
        let (r, r_in) = (self.shape.radius_mm, w.washer_inner_diameter_mm / 2.0);
        let z = -w.cup_depth_mm + w.washer_thickness_mm;
        let (ca, cb) = (a.footprint.centre, b.footprint.centre);
        let on_ring = |p: BoardPoint, c: BoardPoint| (r_in + CUP_TEMPLATE_INSET_MM..r - CUP_TEMPLATE_INSET_MM).contains(&p.distance(c));
        let (colour_a, colour_b) = (self.cfg.teams[self.class_of(a.team)].colour, self.cfg.teams[self.class_of(b.team)].colour);
        let n = (r / STACK_LATTICE_MM).ceil() as i32;
        let mid = BoardPoint::new((ca.x_mm + cb.x_mm) / 2.0, (ca.y_mm + cb.y_mm) / 2.0);
        let (mut na, mut nb, mut seen) = (0usize, 0usize, 0usize);
        for dy in -n..=n {
            for dx in -n..=n {
                let p = BoardPoint::new(mid.x_mm + dx as f64 * STACK_LATTICE_MM, mid.y_mm + dy as f64 * STACK_LATTICE_MM);
                if !on_ring(p, ca) || !on_ring(p, cb) || !self.sees(p.at_height(z)) {
                    continue;
                }
                let Some(hsv) = self.pose.project(&self.camera, p.at_height(z)).and_then(|px| frame.sample(px)).map(bgr_to_hsv) else { continue };
                seen += 1;
                na += colour_a.contains(hsv) as usize;
                nb += colour_b.contains(hsv) as usize;
            }
        }
        if seen < STACK_MIN_POINTS {
            return None;
        }
        let share = |k: usize| k as f64 >= STACK_MAJORITY * seen as f64;
        if share(na) {
            Some(true)
        } else if share(nb) {
            Some(false)
        } else {
            None
        }
    }

    /// A found piece as a solid of the line-of-sight model (numbered `n`),
    /// lying flat with its top where it was measured: what hides the outline
    /// of a piece beneath or beside it.
    fn occluder(&self, d: &Detection, n: usize) -> crate::render::scene::PieceSpec {
        let number = n as u32 + 1;
        crate::render::scene::PieceSpec {
            id: d.team.map_or(crate::piece::PieceId::disc(number), |t| crate::piece::PieceId::of_team(t, number)),
            kind: d.kind,
            x_mm: d.footprint.centre.x_mm,
            y_mm: d.footprint.centre.y_mm,
            // A piece resting on the surface has its top at its thickness: its centre is half that below the top.
            z_mm: Some(d.top_z_mm - self.shape.top_z_mm / 2.0),
            tilt_deg: 0.0,
            tilt_towards_deg: 0.0,
        }
    }

    /// The colour class of a team (the first for discs, which have none).
    fn class_of(&self, team: Option<Team>) -> usize {
        team.and_then(|t| self.cfg.teams.iter().position(|c| c.team == t)).unwrap_or(0)
    }

    /// How far (mm, sideways) a point's image moves per mm of height error:
    /// its horizontal distance from the camera over its depth below it.
    fn sideways_per_height(&self, p: BoardPoint3) -> f64 {
        let c = self.pose.centre();
        (c.x_mm - p.x_mm).hypot(c.y_mm - p.y_mm) / (c.z_mm - p.z_mm).max(1.0)
    }

    /// Finds a washer's real height from its outline's apparent size: an outline
    /// fitted at an assumed height comes out scaled by the ratio of the two
    /// heights' distances from the camera. The washer rests at one of the
    /// heights where a washer can rest and be seen there: on the surface; flat
    /// in a cup (on the bottom, or on washers there) if that line of sight
    /// meets a cup's floor; on the ground the board stands on if it meets the
    /// ground beside the board (not under it). Of those, the one nearest the
    /// size's estimate is taken.
    fn washer_height(
        &self,
        frame: &ColourView,
        w: &crate::board::WasherBoard,
        first: crate::measure::CircleFit,
        class: usize,
    ) -> Result<(f64, crate::measure::CircleFit), DetectError> {
        let r = self.shape.radius_mm;
        let cam_z = self.pose.centre().z_mm;
        let surface_top = self.shape.top_z_mm;
        // The apparent size says roughly how far down the washer is; sub-pixel
        // edges make it good to ~1 % of the camera height, which tells the
        // surface from a cup bottom 76 mm lower but is no measurement of height.
        let z_est = cam_z - (cam_z - surface_top) * r / first.footprint.radius_mm;
        let seen = first.footprint.centre.at_height(surface_top);
        // A washer on another one in a cup lies 3.2 mm higher than on the
        // bottom, a parallax of about a millimetre at the cup's centre, which
        // no call depends on.
        let bottom_top = -w.cup_depth_mm + w.washer_thickness_mm;
        let in_cup = self.along_sight(seen, bottom_top).and_then(|c| self.hole_under(c, w).map(|hole| (hole, c)));
        let ground_top = -w.construction.stand_height_mm + w.washer_thickness_mm;
        let on_ground = self.along_sight(seen, ground_top).filter(|c| !self.board.surface.contains(*c));
        enum Rest {
            Surface,
            Cup(usize, BoardPoint),
            Ground(BoardPoint),
        }
        let mut rests = vec![(surface_top, Rest::Surface)];
        rests.extend(in_cup.map(|(hole, c)| (bottom_top, Rest::Cup(hole, c))));
        rests.extend(on_ground.map(|c| (ground_top, Rest::Ground(c))));
        let nearest = rests.into_iter().min_by(|a, b| (a.0 - z_est).abs().total_cmp(&(b.0 - z_est).abs()));
        match nearest.map(|(_, rest)| rest) {
            Some(Rest::Cup(hole, c)) => Ok((bottom_top, self.cup_search(frame, w, hole, c, class)?)),
            Some(Rest::Ground(c)) => Ok((ground_top, self.fit(frame, Footprint::new(c, r), ground_top, class).unwrap_or(first))),
            Some(Rest::Surface) | None => Ok((surface_top, first)),
        }
    }

    /// Finds a washer lying flat on the floor of hole `hole`'s cup, starting near
    /// `near`. Its outline is partly hidden by the rim, so rather than trust one
    /// start, fits start from a ring of places over the cup's floor (a washer's
    /// centre lies within hole radius - washer radius of the hole's centre) and
    /// the best-supported fit is kept.
    fn cup_search(
        &self,
        frame: &ColourView,
        w: &crate::board::WasherBoard,
        hole: usize,
        near: BoardPoint,
        class: usize,
    ) -> Result<crate::measure::CircleFit, DetectError> {
        let r = self.shape.radius_mm;
        let bottom_top = -w.cup_depth_mm + w.washer_thickness_mm;
        let h = w.holes[hole];
        let reach = (h.radius() - r).max(0.0);
        let starts = std::iter::once(near).chain(ring_of_starts(h.centre(), 0.6 * reach));
        self.best_fit(frame, starts, bottom_top, class, |f| f.footprint.centre.distance(h.centre()) <= reach + CUP_REACH_SLACK_MM)
            .or_else(|| self.cup_template(frame, w, hole, class))
            .ok_or_else(|| DetectError::NotAPiece {
                x_mm: near.x_mm,
                y_mm: near.y_mm,
                reason: format!("washer colour down hole {hole}, but no washer fits it on the cup's floor"),
            })
    }

    /// Places a washer of `team` that lies flat on hole `hole`'s floor by the
    /// team's colour there (see [`Detector::cup_template`]): its centre and
    /// standard uncertainty, or `None` where too little of it shows.
    pub fn place_on_cup_floor(&self, frame: &ColourView, hole: usize, team: Team) -> Option<(BoardPoint, f64)> {
        let w = self.board.washer()?;
        let class = self.cfg.teams.iter().position(|t| t.team == team)?;
        let fit = self.cup_template(frame, w, hole, class)?;
        Some((fit.footprint.centre, fit.centre_sigma_mm))
    }

    /// A washer on a cup's floor whose outline the rim (or a washer over it)
    /// hides too much to fit: placed where the washer's ring best covers the
    /// team's colour seen on the floor and its surroundings show none. The cup
    /// floor is sampled once on a half-millimetre lattice (line of sight and
    /// colour); every centre the cup allows is scored by the points of its
    /// ring in view that have the team's colour, less those that have not,
    /// less the team-coloured points in view just outside it. The position's
    /// uncertainty is [`CUP_TEMPLATE_SIGMA_MM`].
    fn cup_template(&self, frame: &ColourView, w: &crate::board::WasherBoard, hole: usize, class: usize) -> Option<crate::measure::CircleFit> {
        let colour = self.cfg.teams.get(class)?.colour;
        let (r, r_in) = (self.shape.radius_mm, w.washer_inner_diameter_mm / 2.0);
        let bottom_top = -w.cup_depth_mm + w.washer_thickness_mm;
        let h = w.holes[hole];
        let reach = (h.radius() - r).max(0.0);
        // The floor lattice, cells of CUP_TEMPLATE_CELL_MM over the hole: true = the team's colour
        // in view, false = in view and not, None = hidden (by the rim, or by
        // another team's washer over it).
        let cell = CUP_TEMPLATE_CELL_MM;
        let half = (h.radius() / cell).ceil() as i32 + 1;
        let side = (2 * half + 1) as usize;
        let floor: Vec<Option<bool>> = (0..side * side)
            .map(|i| {
                let (dx, dy) = ((i % side) as i32 - half, (i / side) as i32 - half);
                let p = BoardPoint3::new(h.x_mm + dx as f64 * cell, h.y_mm + dy as f64 * cell, bottom_top);
                if (dx as f64).hypot(dy as f64) * cell > h.radius() || !self.sees(p) {
                    return None;
                }
                let px = self.pose.project(&self.camera, p)?;
                let hsv = bgr_to_hsv(frame.sample(px)?);
                // Another team's washer over this one hides it there.
                let other = self.cfg.teams.iter().enumerate().any(|(k, t)| k != class && t.colour.contains(hsv));
                (!other).then(|| colour.contains(hsv))
            })
            .collect();
        let at = |x: f64, y: f64| -> Option<bool> {
            let (dx, dy) = (((x - h.x_mm) / cell).round() as i32, ((y - h.y_mm) / cell).round() as i32);
            if dx.abs() > half || dy.abs() > half {
                return None;
            }
            floor[((dy + half) as usize) * side + (dx + half) as usize]
        };
        // Ring points (on the washer, between its hole and its edge) and points
        // just outside its edge, as offsets from its centre.
        let ring: Vec<(f64, f64)> = (0..CUP_TEMPLATE_ANGLES)
            .flat_map(|k| {
                let t = std::f64::consts::TAU * k as f64 / CUP_TEMPLATE_ANGLES as f64;
                [r_in + CUP_TEMPLATE_INSET_MM, (r_in + r) / 2.0, r - CUP_TEMPLATE_INSET_MM].map(|rho| (rho * t.cos(), rho * t.sin()))
            })
            .collect();
        let outside: Vec<(f64, f64)> = (0..CUP_TEMPLATE_ANGLES)
            .map(|k| {
                let t = std::f64::consts::TAU * k as f64 / CUP_TEMPLATE_ANGLES as f64;
                ((r + CUP_TEMPLATE_INSET_MM) * t.cos(), (r + CUP_TEMPLATE_INSET_MM) * t.sin())
            })
            .collect();
        // Every centre of the best score; their mean is the answer (a ring half
        // hidden scores the same over a small patch of centres).
        let mut best: Option<(i32, Vec<(usize, usize, BoardPoint)>)> = None;
        let n = (reach / cell).floor() as i32;
        for dy in -n..=n {
            for dx in -n..=n {
                if (dx as f64).hypot(dy as f64) * cell > reach {
                    continue;
                }
                let c = BoardPoint::new(h.x_mm + dx as f64 * cell, h.y_mm + dy as f64 * cell);
                let seen: Vec<Option<bool>> = ring.iter().map(|o| at(c.x_mm + o.0, c.y_mm + o.1)).collect();
                let hits = seen.iter().filter(|v| **v == Some(true)).count();
                let misses = seen.iter().filter(|v| **v == Some(false)).count();
                let stray = outside.iter().filter(|o| at(c.x_mm + o.0, c.y_mm + o.1) == Some(true)).count();
                let score = hits as i32 - misses as i32 - stray as i32;
                match &mut best {
                    Some((s, at)) if *s == score => at.push((hits, misses, c)),
                    Some((s, _)) if *s > score => {}
                    _ => best = Some((score, vec![(hits, misses, c)])),
                }
            }
        }
        let (_, tied) = best?;
        let hits = tied.iter().map(|t| t.0).min()?;
        let misses = tied.iter().map(|t| t.1).max()?;
        let centre = BoardPoint::new(
            tied.iter().map(|t| t.2.x_mm).sum::<f64>() / tied.len() as f64,
            tied.iter().map(|t| t.2.y_mm).sum::<f64>() / tied.len() as f64,
        );
        if (hits as f64) < CUP_TEMPLATE_MIN_HITS * ring.len() as f64 || (hits as f64) < CUP_TEMPLATE_MIN_MATCH * (hits + misses) as f64 {
            return None;
        }
        let mm_per_px = crate::measure::px_per_mm(&self.camera, &self.pose, centre.at_height(bottom_top)).map_or(f64::NAN, |s| 1.0 / s);
        Some(crate::measure::CircleFit {
            footprint: Footprint::new(centre, r),
            height_mm: bottom_top,
            rms_mm: 0.0,
            centre_sigma_mm: CUP_TEMPLATE_SIGMA_MM,
            inliers: 0,
            probes: 0,
            mm_per_px,
            edges: Vec::new(),
        })
    }

    /// A washer on the ground beside a washer board seen only in part (the
    /// board's side hides the rest), from colour seen near `near` at the grid's
    /// height: fits on the ground from a ring of starts round where that line
    /// of sight meets the ground, over the probes the camera can see; the
    /// best-supported fit that lies clear of the board is kept.
    fn measure_ground(&self, frame: &ColourView, near: BoardPoint, team: Option<Team>, class: usize) -> Result<Detection, DetectError> {
        let w = self.board.washer().expect("the ground is measured on washer boards");
        let r = self.shape.radius_mm;
        let ground_top = -w.construction.stand_height_mm + w.washer_thickness_mm;
        let centre = self.along_sight(near.at_height(self.shape.top_z_mm), ground_top).unwrap_or(near);
        // Clear of the board: the footprint's centre lies beyond the surface's edge.
        let fit = self
            .best_fit(frame, ring_of_starts(centre, 0.5 * r), ground_top, class, |f| !self.board.surface.contains(f.footprint.centre))
            .ok_or_else(|| DetectError::NotAPiece {
                x_mm: near.x_mm,
                y_mm: near.y_mm,
                reason: "washer colour beside the board, but no washer outline fits on the ground there".to_string(),
            })?;
        self.finish(frame, fit, ground_top, team, class)
    }

    /// Of free-radius fits at height `z` from each start, the best supported
    /// (least RMS per edge point) of those `keep` accepts.
    fn best_fit(
        &self,
        frame: &ColourView,
        starts: impl Iterator<Item = BoardPoint>,
        z: f64,
        class: usize,
        keep: impl Fn(&crate::measure::CircleFit) -> bool,
    ) -> Option<crate::measure::CircleFit> {
        let r = self.shape.radius_mm;
        starts
            .filter_map(|s| self.fit(frame, Footprint::new(s, r), z, class).ok())
            .filter(|f| keep(f))
            .min_by(|a, b| (a.rms_mm / a.inliers as f64).total_cmp(&(b.rms_mm / b.inliers as f64)))
    }

    /// A washer seen only through hole `hole`'s opening: measured on the cup floor.
    fn measure_cup(&self, frame: &ColourView, hole: usize, near: BoardPoint, team: Option<Team>, class: usize) -> Result<Detection, DetectError> {
        let w = self.board.washer().expect("holes are on washer boards");
        let bottom_top = -w.cup_depth_mm + w.washer_thickness_mm;
        let start = self.along_sight(near.at_height(self.shape.top_z_mm), bottom_top).unwrap_or(near);
        let fit = self.cup_search(frame, w, hole, start, class)?;
        self.finish(frame, fit, bottom_top, team, class)
    }

    /// The hole whose opening (seen at the surface) holds a point, with a margin
    /// for the parallax of a washer seen down the cup.
    fn hole_opening(&self, p: BoardPoint) -> Option<usize> {
        let w = self.board.washer()?;
        w.holes.iter().position(|h| p.distance(h.centre()) < h.radius() + OPENING_MARGIN_MM)
    }

    /// Where the camera's line of sight through board point `p` meets the plane
    /// `z = height`: the same image point, at another height.
    fn along_sight(&self, p: BoardPoint3, height: f64) -> Option<BoardPoint> {
        let c = self.pose.centre();
        let dz = p.z_mm - c.z_mm;
        if dz.abs() < 1e-9 {
            return None;
        }
        let s = (height - c.z_mm) / dz;
        (s > 0.0).then(|| BoardPoint::new(c.x_mm + s * (p.x_mm - c.x_mm), c.y_mm + s * (p.y_mm - c.y_mm)))
    }

    /// Measures a washer leaning in hole `hole` (its underside propped on the
    /// rim, its low edge down in the cup): a search over the leaning poses, each
    /// scored by how well its projected top outline separates the team's colour
    /// inside from other colours outside. A flat outline fit places a tilted
    /// washer tens of mm off; this places its centre where it is.
    pub fn measure_leaner(&self, frame: &ColourView, hole: usize, team: Team) -> Option<LeanerFit> {
        let w = self.board.washer()?;
        let class = self.cfg.teams.iter().find(|t| t.team == team)?.colour;
        let h = w.holes[hole];
        let (r, th) = (self.shape.radius_mm, w.washer_thickness_mm);
        let teamness = |p: BoardPoint3| -> Option<f64> {
            if !self.sees(p) {
                return None;
            }
            let px = self.pose.project(&self.camera, p)?;
            frame.sample(px).map(|bgr| if class.contains(bgr_to_hsv(bgr)) { 1.0 } else { 0.0 })
        };
        // The pose from (rise direction, tilt, centre's distance from the hole's centre).
        let score_at = |a: f64, tilt: f64, d: f64, probe: f64| -> Option<LeanerFit> {
            let tr = tilt.to_radians();
            // Its underside passes through the rim's edge along the rise.
            let under = -(h.radius() - d) * tr.tan();
            let cz = under + th / 2.0 / tr.cos();
            let centre = BoardPoint3::new(h.x_mm + d * a.cos(), h.y_mm + d * a.sin(), cz);
            // The top face's frame: u along the rise, v across it, n its normal.
            let n = [-tr.sin() * a.cos(), -tr.sin() * a.sin(), tr.cos()];
            let u = [tr.cos() * a.cos(), tr.cos() * a.sin(), tr.sin()];
            let v = [-a.sin(), a.cos(), 0.0];
            let top = [centre.x_mm + n[0] * th / 2.0, centre.y_mm + n[1] * th / 2.0, centre.z_mm + n[2] * th / 2.0];
            let at = |rho: f64, phi: f64| {
                let (s, c) = phi.sin_cos();
                BoardPoint3::new(
                    top[0] + rho * (c * u[0] + s * v[0]),
                    top[1] + rho * (c * u[1] + s * v[1]),
                    top[2] + rho * (c * u[2] + s * v[2]),
                )
            };
            let (mut score, mut n_seen) = (0.0, 0);
            for k in 0..LEANER_OUTLINE_POINTS {
                let phi = std::f64::consts::TAU * k as f64 / LEANER_OUTLINE_POINTS as f64;
                if let (Some(i), Some(o)) = (teamness(at(r - probe, phi)), teamness(at(r + probe, phi))) {
                    score += i - o;
                    n_seen += 1;
                }
            }
            (n_seen >= LEANER_OUTLINE_POINTS / 3).then(|| LeanerFit { centre, tilt_deg: tilt, score: score / n_seen as f64 })
        };
        let score_of = |a: f64, tilt: f64, d: f64| score_at(a, tilt, d, LEANER_PROBE_MM);
        let reach = |tilt: f64| ((h.radius() - r * tilt.to_radians().cos()).max(0.0), h.radius() - LEANER_RIM_CLEARANCE_MM);
        let better = |best: &mut Option<(LeanerFit, f64, f64)>, fit: Option<LeanerFit>, a: f64, d: f64| {
            if let Some(f) = fit {
                if best.as_ref().is_none_or(|b| f.score > b.0.score) {
                    *best = Some((f, a, d));
                }
            }
        };
        // Coarse: the whole range of leaning poses.
        let mut best: Option<(LeanerFit, f64, f64)> = None;
        for ai in 0..LEANER_AZIMUTHS {
            let a = std::f64::consts::TAU * ai as f64 / LEANER_AZIMUTHS as f64;
            for ti in 0..LEANER_TILTS {
                let tilt = LEANER_TILT_MIN_DEG + (LEANER_TILT_MAX_DEG - LEANER_TILT_MIN_DEG) * ti as f64 / (LEANER_TILTS - 1) as f64;
                let (d_lo, d_hi) = reach(tilt);
                for di in 0..LEANER_REACHES {
                    let d = d_lo + (d_hi - d_lo) * di as f64 / (LEANER_REACHES - 1) as f64;
                    better(&mut best, score_of(a, tilt, d), a, d);
                }
            }
        }
        // Finer: a fifth of the last step each way, around the last best, for
        // each level of refinement.
        let (coarse, a0, d0) = best?;
        let (mut da, mut dt) = (std::f64::consts::TAU / LEANER_AZIMUTHS as f64, (LEANER_TILT_MAX_DEG - LEANER_TILT_MIN_DEG) / (LEANER_TILTS - 1) as f64);
        let mut dd = (reach(coarse.tilt_deg).1 - reach(coarse.tilt_deg).0) / (LEANER_REACHES - 1) as f64;
        let mut fine = Some((coarse, a0, d0));
        for _ in 0..LEANER_REFINE_LEVELS {
            let (centre, a0, d0) = fine.expect("set above");
            for i in -LEANER_FINE..=LEANER_FINE {
                for j in -LEANER_FINE..=LEANER_FINE {
                    for k in -LEANER_FINE..=LEANER_FINE {
                        let step = |n: i32, size: f64| n as f64 * size / (2 * LEANER_FINE + 1) as f64;
                        let (a, tilt, d) = (a0 + step(i, da), centre.tilt_deg + step(j, dt), d0 + step(k, dd));
                        if (LEANER_TILT_MIN_DEG..=LEANER_TILT_MAX_DEG).contains(&tilt) && d <= reach(tilt).1 {
                            better(&mut fine, score_of(a, tilt, d), a, d);
                        }
                    }
                }
            }
            let shrink = (2 * LEANER_FINE + 1) as f64;
            (da, dt, dd) = (da / shrink, dt / shrink, dd / shrink);
        }
        // Last: the outline's probes closer in, where a pose off by a millimetre
        // already misses; the mean of the poses that score best, up to 0.4 of
        // a coarse step each way, is the pose.
        let (coarse_best, a1, d1) = fine?;
        let mut tied: Vec<(f64, f64, f64, f64)> = Vec::new();
        let mut top = f64::NEG_INFINITY;
        // Azimuth and reach in steps of a tenth of a coarse step, four each way.
        let (da, dd) = (da * 25.0 / 10.0, dd * 25.0 / 10.0);
        // The tilt over its whole range: the outline's foreshortening (cos tilt)
        // is a few percent between tilts, which the 3 mm probes do not see.
        let tilts = ((LEANER_TILT_MAX_DEG - LEANER_TILT_MIN_DEG) / LEANER_LAST_TILT_STEP_DEG).round() as i32;
        for i in -LEANER_LAST_STEPS..=LEANER_LAST_STEPS {
            for j in 0..=tilts {
                for k in -LEANER_LAST_STEPS..=LEANER_LAST_STEPS {
                    let step = |n: i32, size: f64| n as f64 * size;
                    let (a, tilt, d) = (a1 + step(i, da), LEANER_TILT_MIN_DEG + step(j, LEANER_LAST_TILT_STEP_DEG), d1 + step(k, dd));
                    if !(LEANER_TILT_MIN_DEG..=LEANER_TILT_MAX_DEG).contains(&tilt) || d > reach(tilt).1 {
                        continue;
                    }
                    let Some(f) = score_at(a, tilt, d, LEANER_CLOSE_PROBE_MM) else { continue };
                    if f.score > top + 1e-12 {
                        (top, tied) = (f.score, Vec::new());
                    }
                    if (f.score - top).abs() <= 1e-12 {
                        tied.push((a, tilt, d, f.score));
                    }
                }
            }
        }
        let best = if tied.is_empty() {
            Some(coarse_best)
        } else {
            let m = |f: fn(&(f64, f64, f64, f64)) -> f64| tied.iter().map(f).sum::<f64>() / tied.len() as f64;
            let (a, tilt, d) = (m(|t| t.0), m(|t| t.1), m(|t| t.2));
            score_of(a, tilt, d).map(|f| LeanerFit { score: f.score.max(coarse_best.score), ..f }).or(Some(coarse_best))
        };
        best.filter(|b| b.score >= LEANER_MIN_SCORE)
    }

    /// Team colour in a hole's opening that no flat washer's outline explains:
    /// a washer on the cup's floor whose ring the colour matches, or else one
    /// leaning on the rim, where a leaning pose explains the colour nearly
    /// perfectly.
    fn in_hole_instead(&self, frame: &ColourView, seen: BoardPoint, team: Option<Team>, class: usize) -> Option<Detection> {
        let hole = self.hole_opening(seen)?;
        let w = self.board.washer()?;
        if let Some(fit) = self.cup_template(frame, w, hole, class) {
            return self.finish(frame, fit, -w.cup_depth_mm + w.washer_thickness_mm, team, class).ok();
        }
        let lean = self.measure_leaner(frame, hole, team?).filter(|l| l.score >= FALLBACK_LEANER_MIN_SCORE)?;
        let th = self.board.washer().map_or(0.0, |w| w.washer_thickness_mm);
        let mm_per_px = crate::measure::px_per_mm(&self.camera, &self.pose, lean.centre).map_or(f64::NAN, |s| 1.0 / s);
        Some(Detection {
            kind: self.shape.kind,
            team,
            footprint: Footprint::new(lean.centre.on_plane(), self.shape.radius_mm),
            top_z_mm: lean.centre.z_mm + th / 2.0,
            tilt_deg: lean.tilt_deg,
            sigma_mm: LEANER_POSE_SIGMA_MM,
            fit_rms_mm: f64::NAN,
            edges_found: 0,
            probes: 0,
            mm_per_px,
            doubt: None,
            measured_by: MeasuredBy::LeaningPose,
        })
    }

    /// The hole whose rim encloses a point, if any.
    fn hole_under(&self, p: BoardPoint, w: &crate::board::WasherBoard) -> Option<usize> {
        w.holes.iter().position(|h| p.distance(h.centre()) < h.radius())
    }

    /// A free-radius outline fit at height `z` of a piece of colour class `class`.
    fn fit(&self, frame: &ColourView, start: Footprint, z: f64, class: usize) -> Result<crate::measure::CircleFit, MeasureError> {
        self.fit_with(frame, start, z, false, &self.cfg.fit, class)
    }

    /// An outline fit over the probes the camera can see, on edges with the
    /// piece's colour inside: a team's colour for weights and washers (discs
    /// are told by their outline alone).
    fn fit_with(
        &self,
        frame: &ColourView,
        start: Footprint,
        z: f64,
        fixed_radius: bool,
        cfg: &FitConfig,
        class: usize,
    ) -> Result<crate::measure::CircleFit, MeasureError> {
        let colour = (self.shape.kind != PieceKind::Disc).then(|| self.cfg.teams[class].colour);
        let inside = |bgr: [f32; 3]| colour.is_none_or(|c| c.contains(bgr_to_hsv(bgr)));
        let visible = |p: BoardPoint3| self.sees(p);
        fit_circle_scoped(frame, &self.camera, &self.pose, start, z, fixed_radius, cfg, &ProbeScope { visible: &visible, inside: &inside })
    }

    /// Whether the camera's line of sight to a point is clear of the board's
    /// solids (a cup's rim, a sjoelbak's walls, gate bar and partitions).
    fn sees(&self, p: BoardPoint3) -> bool {
        let c = self.pose.centre();
        let d = [c.x_mm - p.x_mm, c.y_mm - p.y_mm, c.z_mm - p.z_mm];
        let len = (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]).sqrt();
        let d = [d[0] / len, d[1] / len, d[2] / len];
        // Start just off the point so the surface it lies on does not block it.
        let o = [p.x_mm + d[0] * RIM_CLEARANCE_MM, p.y_mm + d[1] * RIM_CLEARANCE_MM, p.z_mm + d[2] * RIM_CLEARANCE_MM];
        !self.solids.occluded(o, d, len)
    }

    /// The fraction of grid cells within 85 % of a footprint's radius that have
    /// colour class `class` (cells out of view are not counted).
    fn fill_fraction(&self, class: usize, fp: Footprint) -> f64 {
        let g = &self.grid;
        let r = 0.85 * fp.radius_mm;
        let (c0, c1) = (((fp.centre.x_mm - r - g.x0) / g.step).floor().max(0.0) as u32, ((fp.centre.x_mm + r - g.x0) / g.step).ceil() as u32);
        let (r0, r1) = (((fp.centre.y_mm - r - g.y0) / g.step).floor().max(0.0) as u32, ((fp.centre.y_mm + r - g.y0) / g.step).ceil() as u32);
        let (mut inside, mut hit) = (0usize, 0usize);
        for row in r0..r1.min(g.rows) {
            for col in c0..c1.min(g.cols) {
                if g.cell_centre(col as f64, row as f64).distance(fp.centre) > r || g.pixels[(row * g.cols + col) as usize][0].is_nan() {
                    continue;
                }
                inside += 1;
                if self.masks[class].get_pixel(col, row)[0] > 0 {
                    hit += 1;
                }
            }
        }
        if inside == 0 { 0.0 } else { hit as f64 / inside as f64 }
    }
}

/// Starting places for a search: `centre`, and [`CUP_START_ANGLES`] places
/// round it at `reach`.
fn ring_of_starts(centre: BoardPoint, reach: f64) -> impl Iterator<Item = BoardPoint> {
    std::iter::once(centre).chain((0..CUP_START_ANGLES).map(move |k| {
        let t = std::f64::consts::TAU * k as f64 / CUP_START_ANGLES as f64;
        BoardPoint::new(centre.x_mm + reach * t.cos(), centre.y_mm + reach * t.sin())
    }))
}

/// Whether two detections are one piece found twice: centres closer than a
/// fraction of a radius at about one height (two flat pieces cannot overlap so
/// far; a washer on another in a cup lies 3.2 mm higher, and is told from it
/// only by its colour).
pub fn same_piece(a: &Detection, b: &Detection, radius_mm: f64) -> bool {
    a.footprint.centre.distance(b.footprint.centre) < SAME_PIECE_FRACTION * radius_mm && (a.top_z_mm - b.top_z_mm).abs() < SAME_PIECE_HEIGHT_MM
}

/// Whether a piece of `d`'s team already found is `d` itself.
fn found_already(out: &Detections, d: &Detection, radius_mm: f64) -> bool {
    out.pieces.iter().any(|p| p.team == d.team && same_piece(p, d, radius_mm))
}

/// Centres closer than this fraction of a radius are one piece (two fits of
/// one outline agree to a millimetre or two; two flat pieces side by side are
/// a diameter apart).
const SAME_PIECE_FRACTION: f64 = 0.25;
/// Fits of one piece at heights closer than this (mm) are at one height.
const SAME_PIECE_HEIGHT_MM: f64 = 1.0;

/// A morphological opening with a disc of radius `k` cells, in place (OpenCV's
/// vectorised morphology: a separable square would open diagonal stripes less).
fn open_in_place(mask: &mut GrayImage, k: i32) {
    use opencv::core::{Mat, Size};
    use opencv::imgproc;
    let (w, h) = (mask.width() as i32, mask.height() as i32);
    let opened = (|| -> opencv::Result<Vec<u8>> {
        let src = Mat::new_rows_cols_with_data(h, w, mask.as_raw())?;
        let kernel = imgproc::get_structuring_element_def(imgproc::MORPH_ELLIPSE, Size::new(2 * k + 1, 2 * k + 1))?;
        let mut dst = Mat::default();
        imgproc::morphology_ex_def(&src, &mut dst, imgproc::MORPH_OPEN, &kernel)?;
        Ok(opencv::prelude::MatTraitConstManual::data_bytes(&dst)?.to_vec())
    })();
    match opened {
        Ok(bytes) => mask.copy_from_slice(&bytes),
        // OpenCV cannot fail on a valid 8-bit image; keep imageproc as the fallback.
        Err(_) => *mask = open(mask, Norm::L2, k.clamp(1, 255) as u8),
    }
}

/// The indices of a mask's set cells, in raster order. Masks are mostly empty:
/// runs of empty cells are skipped eight at a time.
fn set_cells(mask: &GrayImage) -> impl Iterator<Item = usize> + '_ {
    let raw = mask.as_raw();
    raw.chunks(8).enumerate().filter(|(_, chunk)| chunk.iter().any(|&v| v > 0)).flat_map(|(k, chunk)| {
        chunk.iter().enumerate().filter(|(_, v)| **v > 0).map(move |(j, _)| 8 * k + j)
    })
}

/// The 8-connected blobs of a mask's set cells: each blob's cells as
/// (column, row) in raster order, the blobs in the raster order of their first
/// cells (as `imageproc`'s labelling numbers them). Labelled by OpenCV, whose
/// labelling is several times faster; its own numbering is not used.
fn blobs_of(mask: &GrayImage) -> Vec<Vec<(f64, f64)>> {
    use opencv::core::{Mat, CV_32S};
    let (w, h) = (mask.width() as usize, mask.height() as usize);
    let mut blobs: Vec<Vec<(f64, f64)>> = Vec::new();
    let labelled = (|| -> opencv::Result<bool> {
        let src = Mat::new_rows_cols_with_data(h as i32, w as i32, mask.as_raw())?;
        let mut labels = Mat::default();
        let n = opencv::imgproc::connected_components(&src, &mut labels, 8, CV_32S)?;
        let labels = opencv::prelude::MatTraitConstManual::data_typed::<i32>(&labels)?;
        if labels.len() != w * h {
            return Ok(false);
        }
        // OpenCV's label -> 1 + the blob's index in first-cell order (0: not yet seen).
        let mut order = vec![0usize; n.max(1) as usize];
        for i in set_cells(mask) {
            let Some(slot) = usize::try_from(labels[i]).ok().filter(|&l| l > 0).and_then(|l| order.get_mut(l)) else { return Ok(false) };
            if *slot == 0 {
                blobs.push(Vec::new());
                *slot = blobs.len();
            }
            blobs[*slot - 1].push(((i % w) as f64, (i / w) as f64));
        }
        Ok(true)
    })();
    match labelled {
        Ok(true) => {}
        // OpenCV cannot fail on a valid 8-bit image; keep imageproc as the fallback.
        _ => {
            blobs.clear();
            let labels = connected_components(mask, Connectivity::Eight, Luma([0u8]));
            for (c, r, l) in labels.enumerate_pixels() {
                let l = l[0] as usize;
                if l > 0 {
                    if l > blobs.len() {
                        blobs.resize(l, Vec::new());
                    }
                    blobs[l - 1].push((c as f64, r as f64));
                }
            }
        }
    }
    blobs
}

/// The median saturation and value over cells in view (their saturation and value).
fn median_saturation_value(cells: impl Iterator<Item = (f32, f32)>) -> (f32, f32) {
    let (mut s, mut v): (Vec<f32>, Vec<f32>) = cells.unzip();
    if s.is_empty() {
        return (0.0, 1.0);
    }
    let mid = s.len() / 2;
    let (_, ms, _) = s.select_nth_unstable_by(mid, f32::total_cmp);
    let ms = *ms;
    let (_, mv, _) = v.select_nth_unstable_by(mid, f32::total_cmp);
    (ms, *mv)
}

/// The standard deviation of a blob's cells along its narrowest direction (cells).
fn minor_spread(cells: &[(f64, f64)]) -> f64 {
    let n = cells.len() as f64;
    let (mx, my) = cells.iter().fold((0.0, 0.0), |a, p| (a.0 + p.0 / n, a.1 + p.1 / n));
    let (mut sxx, mut syy, mut sxy) = (0.0, 0.0, 0.0);
    for (x, y) in cells {
        sxx += (x - mx).powi(2) / n;
        syy += (y - my).powi(2) / n;
        sxy += (x - mx) * (y - my) / n;
    }
    let half_trace = (sxx + syy) / 2.0;
    let det = sxx * syy - sxy * sxy;
    (half_trace - (half_trace * half_trace - det).max(0.0).sqrt()).max(0.0).sqrt()
}

/// Splits a blob's cells into `n` groups by k-means (farthest-point start) and
/// returns each group's centroid in cell coordinates.
fn split_blob(cells: &[(f64, f64)], n: usize) -> Vec<(f64, f64)> {
    let centroid = |pts: &[(f64, f64)]| {
        let (sx, sy) = pts.iter().fold((0.0, 0.0), |a, p| (a.0 + p.0, a.1 + p.1));
        (sx / pts.len() as f64, sy / pts.len() as f64)
    };
    if n <= 1 || cells.len() < n {
        return vec![centroid(cells)];
    }
    let d2 = |a: (f64, f64), b: (f64, f64)| (a.0 - b.0).powi(2) + (a.1 - b.1).powi(2);
    let mut centres = vec![cells[0]];
    while centres.len() < n {
        let far = cells
            .iter()
            .copied()
            .max_by(|a, b| {
                let da = centres.iter().map(|c| d2(*a, *c)).fold(f64::INFINITY, f64::min);
                let db = centres.iter().map(|c| d2(*b, *c)).fold(f64::INFINITY, f64::min);
                da.total_cmp(&db)
            })
            .expect("cells is not empty");
        centres.push(far);
    }
    let mut assign = vec![0usize; cells.len()];
    for _ in 0..30 {
        let mut changed = false;
        for (i, p) in cells.iter().enumerate() {
            let best = (0..n).min_by(|&a, &b| d2(*p, centres[a]).total_cmp(&d2(*p, centres[b]))).expect("n >= 1");
            if best != assign[i] {
                assign[i] = best;
                changed = true;
            }
        }
        for (k, c) in centres.iter_mut().enumerate() {
            let members: Vec<(f64, f64)> = cells.iter().zip(&assign).filter(|(_, a)| **a == k).map(|(p, _)| *p).collect();
            if !members.is_empty() {
                *c = centroid(&members);
            }
        }
        if !changed {
            break;
        }
    }
    centres
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::tests::{draw_disc, oblique_pose, test_camera};

    #[test]
    fn hsv_of_primary_colours() {
        let close = |a: [f32; 3], b: [f32; 3]| a.iter().zip(b).all(|(x, y)| (x - y).abs() < 1e-4);
        assert!(close(bgr_to_hsv([0.0, 0.0, 255.0]), [0.0, 1.0, 1.0]));
        assert!(close(bgr_to_hsv([255.0, 0.0, 0.0]), [240.0, 1.0, 1.0]));
        assert!(close(bgr_to_hsv([0.0, 255.0, 0.0]), [120.0, 1.0, 1.0]));
        assert!(close(bgr_to_hsv([128.0, 128.0, 128.0]), [0.0, 0.0, 128.0 / 255.0]));
    }

    /// The branching HSV conversion the branch-free one replaced.
    fn branching_hsv(bgr: [f32; 3]) -> [f32; 3] {
        let (b, g, r) = (bgr[0] / 255.0, bgr[1] / 255.0, bgr[2] / 255.0);
        let max = r.max(g).max(b);
        let min = r.min(g).min(b);
        let d = max - min;
        let h = if d <= f32::EPSILON {
            0.0
        } else if max == r {
            60.0 * ((g - b) / d).rem_euclid(6.0)
        } else if max == g {
            60.0 * ((b - r) / d + 2.0)
        } else {
            60.0 * ((r - g) / d + 4.0)
        };
        let s = if max <= f32::EPSILON { 0.0 } else { d / max };
        [h, s, max]
    }

    /// Bilinear samples are 8-bit levels blended by f32 weights: levels and
    /// fractions of them, over the whole range and at the ties between channels.
    fn sample_levels() -> Vec<f32> {
        let mut v: Vec<f32> = (0..=255).step_by(3).map(|l| l as f32).collect();
        v.extend([0.3, 1.0 / 3.0, 17.25, 17.250002, 99.99, 128.5, 254.75, 254.99998, 255.0]);
        v
    }

    #[test]
    fn branch_free_hsv_is_the_branching_one_bit_for_bit() {
        let levels = sample_levels();
        let (mut h, mut s, mut v) = (Vec::new(), Vec::new(), Vec::new());
        for &b in &levels {
            for &g in &levels {
                for &r in &levels {
                    let want = branching_hsv([b, g, r]);
                    let got = bgr_to_hsv([b, g, r]);
                    assert_eq!(got.map(f32::to_bits), want.map(f32::to_bits), "bgr {b} {g} {r}: {got:?} vs {want:?}");
                    h.push(b);
                    s.push(g);
                    v.push(r);
                }
            }
        }
        // The grid's in-place pass too, and out-of-view cells stay NaN.
        for c in [&mut h, &mut s, &mut v] {
            c.push(f32::NAN);
        }
        let (b, g, r) = (h.clone(), s.clone(), v.clone());
        bgr_to_hsv_in_place(&mut h, &mut s, &mut v);
        for i in 0..b.len() - 1 {
            assert_eq!([h[i], s[i], v[i]].map(f32::to_bits), branching_hsv([b[i], g[i], r[i]]).map(f32::to_bits));
        }
        assert!(h[b.len() - 1].is_nan() && s[b.len() - 1].is_nan() && v[b.len() - 1].is_nan());
    }

    #[test]
    fn class_marks_are_its_contains() {
        // Hues round the whole turn, the ends and the window edges of the classes below.
        let mut hues: Vec<f32> = (0..=3600).map(|k| k as f32 / 10.0).collect();
        hues.extend([f32::NAN, 1e-6, 359.99997, 15.000001, 14.999999, 189.99998, 260.00003]);
        let sv = [0.0, 0.1, 0.25, 0.35, 0.3500001, 0.9, 1.0, f32::NAN];
        let (mut h, mut s, mut v) = (Vec::new(), Vec::new(), Vec::new());
        for &hue in &hues {
            for &sat in &sv {
                for &val in &sv {
                    h.push(hue);
                    s.push(sat);
                    v.push(val);
                }
            }
        }
        let classes = [
            RED,
            BLUE,
            ColourClass { hue_deg: 360.0, ..RED },
            ColourClass { hue_deg: 180.0, hue_tolerance_deg: 180.0, ..BLUE },
            ColourClass { hue_deg: 0.0, hue_tolerance_deg: -0.0, ..RED },
            // Outside 0..=360: the general path.
            ColourClass { hue_deg: -20.0, ..RED },
            ColourClass { hue_deg: 725.0, ..BLUE },
        ];
        for c in classes {
            let mut mask = vec![7u8; h.len()];
            c.mark(&h, &s, &v, &mut mask);
            for i in 0..h.len() {
                let want = if c.contains([h[i], s[i], v[i]]) { 255 } else { 0 };
                assert_eq!(mask[i], want, "{c:?} at hsv {} {} {}", h[i], s[i], v[i]);
            }
        }
    }

    #[test]
    fn blobs_are_numbered_as_imageproc_labels_them() {
        // Speckle and blobs of every shape: a fixed pseudo-random mask.
        let (w, h) = (97u32, 61u32);
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut mask = GrayImage::new(w, h);
        for (x, y, p) in mask.enumerate_pixels_mut() {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let near_blob = ((x as f64 - 30.0).hypot(y as f64 - 20.0) < 12.0) || (x > 60 && y % 17 < 9);
            let threshold = if near_blob { 80 } else { 20 };
            p[0] = if state % 100 < threshold { 255 } else { 0 };
        }
        let labels = connected_components(&mask, Connectivity::Eight, Luma([0u8]));
        let n = labels.pixels().map(|p| p[0]).max().unwrap_or(0) as usize;
        let mut want: Vec<Vec<(f64, f64)>> = vec![Vec::new(); n];
        for (c, r, l) in labels.enumerate_pixels() {
            if l[0] > 0 {
                want[l[0] as usize - 1].push((c as f64, r as f64));
            }
        }
        assert!(n > 50, "the mask holds many blobs ({n})");
        assert_eq!(blobs_of(&mask), want);
    }

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

    #[test]
    fn k_means_splits_two_touching_blobs() {
        let mut cells = Vec::new();
        for (cx, cy) in [(10.0, 10.0), (24.0, 10.0)] {
            for x in 0..30 {
                for y in 0..30 {
                    let (px, py) = (x as f64, y as f64);
                    if (px - cx as f64).hypot(py - cy as f64) < 7.0 {
                        cells.push((px, py));
                    }
                }
            }
        }
        let mut c = split_blob(&cells, 2);
        c.sort_by(|a, b| a.0.total_cmp(&b.0));
        assert!((c[0].0 - 10.0).abs() < 0.5 && (c[1].0 - 24.0).abs() < 0.5, "{c:?}");
    }
}

