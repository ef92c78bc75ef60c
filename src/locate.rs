//! Stage `Undistorted -> BoardPose`: the camera's full 3D pose relative to the board, found from the board's own edges, lines and hole rims, or from hand-picked points.
//!
//! Automatic localisation, in four steps:
//! 1. **Lines.** Canny edges and `HoughLinesP` segments on the undistorted
//!    image, merged into long straight lines.
//! 2. **Hypotheses.** Every ordered pair of long lines is tried as the two long
//!    sides of the playing surface (`x = +w/2`, `x = -w/2`) and every other line as
//!    one of the board's cross lines (the end edges, a shuffleboard's stripe
//!    edges, a sjoelbak's gate bar): with the camera's intrinsics, two parallel
//!    sides a known distance apart and one cross line at a known `y` fix the
//!    pose in closed form. Each pose is scored by how much of the whole board
//!    model it projects onto image edges.
//! 3. **Refinement.** The best hypotheses are refined by model-based edge
//!    tracking ("moving edges"): points sampled along every projected model
//!    edge (surface outline, stripe edges, hole rims, and the construction
//!    around the surface: walls, partitions, gutters, rails) search along their normal
//!    for the image edge, and Gauss-Newton with Tukey weights minimises the
//!    normal distances over the six pose parameters, with a shrinking search range.
//! 4. **Verification.** The refined pose must match a large share of the
//!    visible model at sub-pixel residuals, constrain every board point to
//!    ([`LocateConfig::max_position_sigma_mm`]), and beat every other
//!    hypothesis clearly (a symmetric view is refused as ambiguous).
//!
//! The board model's features at `z = 0` are the surface edges and markings;
//! the pose is a full [`CameraPose`], so later stages project points at any height.

use crate::board::{Board, Layout};
use crate::camera::{Camera, CameraError, CameraPose, Rotation};
use crate::frame::{Frame, FrameError, Undistorted};
use crate::geom::{BoardPoint3, PixelPoint};
use opencv::core::{Mat, Point2d, Point3d, Scalar, Size, Vec4i, Vector, BORDER_DEFAULT, CV_16S};
use opencv::prelude::*;
use opencv::{calib3d, imgproc};
use serde::Serialize;
use std::path::{Path, PathBuf};

/// Errors of the localisation stage. [`LocateError::is_refusal`] separates "no
/// trustworthy pose in this image" from bad input.
#[derive(Debug, thiserror::Error)]
pub enum LocateError {
    #[error("board not found: {reason}")]
    NotFound { reason: String },
    #[error("the fit is poor: {reason}")]
    PoorFit { reason: String },
    #[error("the pose is ambiguous: two different poses fit almost equally well (scores {best:.0} and {second:.0}); {hint}")]
    Ambiguous { best: f64, second: f64, hint: String },
    #[error("the given pose does not fit this frame: {reason} (was the camera moved, or the board covered?)")]
    GivenPoseRejected { reason: String },
    #[error("need at least {needed} points with distinct positions, got {got}")]
    TooFewPoints { got: usize, needed: usize },
    #[error("points file {path}, line {line}: {problem}")]
    PointsFile { path: PathBuf, line: usize, problem: String },
    #[error("cannot read points file {path}: {source}")]
    PointsIo { path: PathBuf, source: std::io::Error },
    #[error("{source}")]
    Frame {
        #[from]
        source: FrameError,
    },
    #[error("{source}")]
    Camera {
        #[from]
        source: CameraError,
    },
    #[error("OpenCV error in {context}: {source}")]
    OpenCv { context: String, source: opencv::Error },
}

impl LocateError {
    /// Whether this is a refusal (the board is not found, the fit is poor or
    /// ambiguous) rather than an input or internal error.
    pub fn is_refusal(&self) -> bool {
        matches!(
            self,
            LocateError::NotFound { .. } | LocateError::PoorFit { .. } | LocateError::Ambiguous { .. } | LocateError::GivenPoseRejected { .. }
        )
    }
}

fn cv<T>(context: &str, r: opencv::Result<T>) -> Result<T, LocateError> {
    r.map_err(|source| LocateError::OpenCv { context: context.to_string(), source })
}

// ---------------------------------------------------------------------------
// Thresholds.

/// Gaussian pre-blur (px) before gradients: suppresses sensor noise and JPEG
/// blocking while leaving a step edge's peak unbiased.
const BLUR_SIGMA_PX: f64 = 1.0;
/// Smallest gradient (8-bit levels per px, along the edge normal) that counts as
/// an edge. A board edge or painted line (>= 30 levels of contrast) peaks above 8
/// after the pre-blur; sensor noise after it stays near 1.
const EDGE_MIN_GRADIENT: f32 = 4.0;
/// Canny thresholds in OpenCV's 3x3-Sobel units (8 x levels per px).
const CANNY_LOW: f64 = 8.0 * 4.0;
const CANNY_HIGH: f64 = 8.0 * 10.0;
/// Hough segments shorter than this fraction of the image's smaller side are
/// texture, not board edges.
const MIN_SEGMENT_FRACTION: f64 = 0.06;
/// Segments within this angle and distance are one line.
const MERGE_ANGLE_RAD: f64 = 1.5 * std::f64::consts::PI / 180.0;
const MERGE_DIST_PX: f64 = 2.5;
/// How many of the longest lines are tried as the surface's long sides, and as
/// cross lines. A tiled floor or a rail brings dozens of long lines; the cheap
/// [`spans_between`] test keeps the combinations that are scored few.
const SIDE_CANDIDATES: usize = 30;
const CROSS_CANDIDATES: usize = 60;
/// Samples of a construction edge, at the hypothesis score's spacing, for it to
/// count in the score where at least half of them hit (a few stray hits are chance).
const HYPOTHESIS_AGREE_SAMPLES: usize = 5;
/// Hypotheses refined in one batch.
const STARTS_PER_BATCH: usize = 14;
/// Batches tried before the frame is refused: a frame whose first hypotheses all
/// fail the verdict costs at most this many times a typical one.
const MAX_START_BATCHES: usize = 3;
/// Of a batch, at most this many per model cross line the image line is read as (first pass).
const STARTS_PER_READING: usize = 2;
/// Model sampling steps along projected edges, px: coarse for scoring
/// hypotheses, fine for refinement and the final verdict.
const SCORE_STEP_PX: f64 = 8.0;
const REFINE_STEP_PX: f64 = 3.0;
/// Sampling step while the search range is still wide (the pose is a few px off
/// and only needs to come closer), px.
const COARSE_REFINE_STEP_PX: f64 = 6.0;
/// Search ranges at least this wide use the coarse step, px.
const COARSE_RANGE_PX: f64 = 6.0;
/// Hypothesis scoring accepts an edge this far from the projected model, px.
const SCORE_REACH_PX: f64 = 2.0;
/// The refinement's search ranges along the normal, px: wide enough for the
/// closed-form start (Hough lines, a few px off), then shrinking to reject
/// neighbouring edges.
const SEARCH_SCHEDULE_PX: [f64; 5] = [16.0, 10.0, 6.0, 3.5, 2.5];
const ITERATIONS_PER_RANGE: usize = 6;
/// Step of the search along the normal, px (the peak is then refined by a parabola).
const SEARCH_STEP_PX: f64 = 0.5;
/// Among edges in the search window, those at least this fraction of the
/// strongest are candidates, and the nearest wins (a stripe's far edge is as
/// strong as its near one).
const NEAREST_PEAK_RATIO: f32 = 0.5;
/// Tukey's constant for 95 % efficiency under Gaussian noise.
const TUKEY_C: f64 = 4.685;
/// The Tukey scale never drops below this, px (an edge is never located better
/// than ~0.1 px; below 0.5 px the estimator would discard good samples).
const MIN_ROBUST_SCALE_PX: f64 = 0.5;
/// The Tukey scale is never below this fraction of the search range. While the
/// range is wide the pose is still several px off, mostly far from where the
/// lines that started it were found: a scale from the residuals' median (the
/// near parts, already matched) treats the far parts' samples as outliers and
/// the pose crawls a fraction of a px per iteration, stopping short in a wrong
/// optimum (a sjoelbak's walls read a wall's thickness off). On the fixtures a
/// sjoelbak start 23 px off still stops 11 px short at 0.5 and converges from 0.6
/// to 1.0.
const MIN_ROBUST_SCALE_OF_RANGE: f64 = 0.75;
/// The Gauss-Newton step's damping, as a fraction of each parameter's own
/// curvature (the normal matrix's diagonal: Marquardt's scaling). Rotations (px
/// per radian) and translations (px per mm) differ in scale by about the camera
/// distance squared: a damping taken from the whole trace is the rotations' and
/// weighs 0.06 % to 80 % of the translations' own curvature on the fixtures, the
/// more the farther the camera. It held the weakly constrained combination of a
/// sideways shift and a tilt (nearly the same image from far away) where the
/// closed-form start put it: a yocu-9 seen from 3.4 m stopped with the camera
/// 44 mm sideways, 1.35 mm off on the board. The weakest direction of any
/// fixture's final fit has an equilibrated curvature of ~3e-5 (that view); this
/// slows it by ~4 % a step. A direction nothing constrains has no gradient along
/// it either, and the step solves by SVD, so it still stays put.
const RELATIVE_DAMPING: f64 = 1e-6;
/// Samples closer than this to the image border are skipped (the gradient
/// there is clipped by the undistortion's black border).
const BORDER_MARGIN_PX: f64 = 4.0;
/// Points closer to the camera's plane than this (mm) are not projected.
const NEAR_MM: f64 = 10.0;
/// The final verdict: a sample is an inlier when the image edge is within this of the model, px.
const INLIER_PX: f64 = 1.0;
/// An upright face narrower than this in the image (twice the pre-blur sigma)
/// is seen edge-on: the blur merges its top and its foot into one line, where
/// the gradient shows no shade of the face, only the top against the surface
/// beyond it, often the same wood in the same light (a gate bar block with the
/// camera right over its front). Its edges' samples neither confirm nor deny the
/// board in the identification test; counted, one unreliable line weighs twice.
const MIN_FACE_PX: f64 = 2.0 * BLUR_SIGMA_PX;
/// An overhead camera sees the board from within this angle of straight down;
/// beyond it a hypothesis is a grazing, degenerate fit (the whole model on one line).
const MAX_TILT_DEG: f64 = 75.0;
/// Poses whose visible board points are imaged within this of each other are the same hypothesis, px.
const SAME_POSE_PX: f64 = 3.0;
/// A second pose is a rival (an ambiguity) only when it images the board this far from the best, px;
/// closer, it is the same pose caught in a poorer local optimum.
const DIFFERENT_POSE_PX: f64 = 10.0;
/// Spacing of the surface points used to compare poses, mm.
const PROBE_SPACING_MM: f64 = 50.0;
/// Cell size of the grid on which two poses' image evidence is compared, px: an
/// edge point one pose explains counts as explained by the other when it falls
/// in the same or a neighbouring cell (within 2-4 px, well under
/// [`DIFFERENT_POSE_PX`], so that rivals are told apart, and above the inlier
/// distance, so that one edge found by both counts once).
const EVIDENCE_CELL_PX: f64 = 2.0;
/// A rival explains nothing the best does not (it is no other reading of the
/// image, only a poorer fit of part of it) when the edge samples only the best
/// explains outnumber those only the rival explains by this factor ...
const DOMINANCE_FACTOR: f64 = 2.0;
/// ... and are at least this many (a stretch of edge some 15 samples x 3 px long:
/// a few stray pixels never decide).
const DOMINANCE_MIN_SAMPLES: usize = 15;

/// Thresholds of the verdict.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct LocateConfig {
    /// Least fraction of the visible model's edge samples that must land on an image edge.
    pub min_coverage: f64,
    /// Largest RMS normal distance of the inlier samples, px.
    pub max_rms_px: f64,
    /// Largest predicted standard error of any visible board point, mm
    /// (catches poses the visible features leave unconstrained).
    pub max_position_sigma_mm: f64,
    /// A second, different pose scoring at least this fraction of the best makes the view ambiguous.
    pub ambiguity_ratio: f64,
    /// Least number of inlier edge samples.
    pub min_inliers: usize,
    /// Largest RMS reprojection error of hand-picked points (`--points`), px.
    pub max_points_rms_px: f64,
}

impl Default for LocateConfig {
    fn default() -> Self {
        LocateConfig {
            // Pieces, glare and worn paint hide part of the board; a wrong pose
            // matches texture at well under 30 %.
            // A wrong pose caught on neighbouring edges can reach ~50 %; right
            // poses on the fixtures (pieces, shadows, glare) match >= 74 %.
            min_coverage: 0.6,
            // A right pose fits within ~0.35 px RMS even with pieces on the board;
            // a pose caught on a neighbouring edge fits ~0.5 px.
            max_rms_px: 0.45,
            max_position_sigma_mm: 1.0,
            ambiguity_ratio: 0.85,
            min_inliers: 60,
            // Hand-clicked points are good to a couple of pixels; a wrong
            // correspondence is off by tens.
            max_points_rms_px: 4.0,
        }
    }
}

// ---------------------------------------------------------------------------
// The board model.

/// The shape of one model edge, in board mm.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum EdgeShape {
    Segment { a: BoardPoint3, b: BoardPoint3 },
    Circle { centre: BoardPoint3, radius_mm: f64 },
}

/// One visible edge of the board model.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ModelEdge {
    pub name: String,
    pub shape: EdgeShape,
    /// Whether the edge tells the board's ends apart (a line, a hole, the gate
    /// bar); the bare outline looks the same turned round.
    pub identifying: bool,
    /// Whether the rules fix the edge (the surface's outline, lines, holes, the
    /// partitions' and gate bar's feet). The rest is the maker's construction
    /// (gutters, rails, walls, the gate bar's height), taken at its nominal size:
    /// it proposes starting poses and hides what it would hide, and is never
    /// fitted nor decides the verdict.
    pub fixed: bool,
    /// For an edge of an upright face (a gate bar block's front, a wall's inner
    /// side): the step across the face to its opposite edge, board mm (down from
    /// a top edge, up from a foot). Seen edge-on, such a face shows neither edge
    /// reliably (`MIN_FACE_PX`).
    pub face_across_mm: Option<[f64; 3]>,
    /// For the foot of an upright face of unknown height (a partition's side, the
    /// gate bar's front): the face's outward horizontal normal `[x, y]`. The foot
    /// shows only to a camera on that side; from the other side the face itself,
    /// however high it is, stands between.
    pub facing: Option<[f64; 2]>,
    /// How the edge moves with the construction parameters ([`BoardModel::params`]):
    /// empty for the rules-fixed features.
    pub moves: Vec<EdgeMove>,
}

/// A construction dimension the maker chooses (a gutter's width, a wall's
/// height): fitted with the pose from its nominal value within its range, and
/// held near the nominal value by a weak prior where the view does not show it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ConstructionParam {
    pub name: &'static str,
    pub nominal_mm: f64,
    pub min_mm: f64,
    pub max_mm: f64,
}

impl ConstructionParam {
    /// The prior's standard deviation: an eighth of the range, so the prior is
    /// negligible against any edge that shows the dimension and decides it where none does.
    fn prior_sigma_mm(&self) -> f64 {
        0.125 * (self.max_mm - self.min_mm)
    }
}

/// How an edge's endpoints `a`, `b` move per millimetre of one construction parameter, board mm.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct EdgeMove {
    pub param: usize,
    pub a: [f64; 3],
    pub b: [f64; 3],
}

/// Most construction parameters a board model has (sizes the fit's fixed arrays).
pub const MAX_PARAMS: usize = 6;
/// Unknowns of the fit: the pose's six and the construction's.
const MAX_UNKNOWNS: usize = 6 + MAX_PARAMS;

/// A family of straight edges in one horizontal plane: two long sides
/// `x = +-half_width` and cross lines at known `y`. Any two sides and one cross
/// line of a family fix the pose in closed form.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Ladder {
    pub z_mm: f64,
    pub half_width_mm: f64,
    pub cross_lines_mm: Vec<f64>,
}

/// An axis-aligned box of the board that hides what is behind it (walls, gate bar), board mm.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Occluder {
    pub min: [f64; 3],
    pub max: [f64; 3],
}

/// What the localiser looks for on one board.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BoardModel {
    pub edges: Vec<ModelEdge>,
    pub ladders: Vec<Ladder>,
    pub occluders: Vec<Occluder>,
    /// Named points for checking a pose: surface corners, line ends, hole centres.
    pub key_points: Vec<(String, BoardPoint3)>,
    /// Stretches of `y` where the surface has nothing across it: a straight image
    /// edge across the board there means the pose is wrong (the board read back to front).
    pub clear_spans_mm: Vec<(f64, f64)>,
    /// The construction dimensions fitted with the pose (at most [`MAX_PARAMS`]).
    pub params: Vec<ConstructionParam>,
}

/// Clearance kept around every modelled feature when looking for unexplained lines, mm.
const CLEAR_MARGIN_MM: f64 = 8.0;

/// The parts of `0..len` at least [`CLEAR_MARGIN_MM`] from every blocked interval.
fn clear_spans(len: f64, mut blocked: Vec<(f64, f64)>) -> Vec<(f64, f64)> {
    blocked.push((f64::NEG_INFINITY, 0.0));
    blocked.push((len, f64::INFINITY));
    blocked.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut out = Vec::new();
    let mut at = f64::NEG_INFINITY;
    for (a, b) in blocked {
        let (lo, hi) = (at + CLEAR_MARGIN_MM, a - CLEAR_MARGIN_MM);
        if hi > lo && lo.is_finite() {
            out.push((lo, hi));
        }
        at = at.max(b);
    }
    out
}

// The board's construction beyond the playing surface (walls, floor board,
// partitions, gutters, rails) is the board's `Construction` (`crate::board`), at its
// nominal values unless the board file's `[construction]` says otherwise. Their edges are strong image edges right beside the surface's own: left
// out of the model, the moving-edges search latches onto them (a wall's outer top
// edge read as its inner one puts the camera 4 % too close). They are outline edges
// (symmetric, not identifying) and their solids hide what is behind them.

/// The move of an edge from `a` to `b` per mm of `param`: each endpoint by its own step.
fn mv(param: usize, a: [f64; 3], b: [f64; 3]) -> EdgeMove {
    EdgeMove { param, a, b }
}

/// The four sides of the horizontal rectangle `lo..hi` at height `z`, as
/// construction edges: the rectangle grows outward by a millimetre per
/// millimetre of each `grow` parameter and rises with each `rise` parameter
/// (with the given sign).
fn box_edges(edges: &mut Vec<ModelEdge>, name: &str, lo: [f64; 2], hi: [f64; 2], z: f64, grow: &[usize], rise: &[(usize, f64)]) {
    let p = |x: f64, y: f64| BoardPoint3::new(x, y, z);
    let centre = [0.5 * (lo[0] + hi[0]), 0.5 * (lo[1] + hi[1])];
    let out = |q: BoardPoint3| [(q.x_mm - centre[0]).signum(), (q.y_mm - centre[1]).signum(), 0.0];
    for (side, a, b) in [
        ("+x", p(hi[0], lo[1]), p(hi[0], hi[1])),
        ("-x", p(lo[0], hi[1]), p(lo[0], lo[1])),
        ("target end", p(lo[0], lo[1]), p(hi[0], lo[1])),
        ("far end", p(hi[0], hi[1]), p(lo[0], hi[1])),
    ] {
        let mut moves: Vec<EdgeMove> = grow.iter().map(|&k| mv(k, out(a), out(b))).collect();
        moves.extend(rise.iter().map(|&(k, f)| mv(k, [0.0, 0.0, f], [0.0, 0.0, f])));
        edges.push(ModelEdge {
            name: format!("{name} {side}"),
            shape: EdgeShape::Segment { a, b },
            identifying: false,
            fixed: false,
            face_across_mm: None,
            facing: None,
            moves,
        });
    }
}

impl BoardModel {
    pub fn new(board: &Board) -> BoardModel {
        let hw = board.surface.half_width();
        let len = board.surface.length_mm;
        let p = |x: f64, y: f64| BoardPoint3::new(x, y, 0.0);
        let p3 = |x: f64, y: f64, z: f64| BoardPoint3::new(x, y, z);
        let seg = |name: &str, a: BoardPoint3, b: BoardPoint3| ModelEdge { name: name.to_string(), shape: EdgeShape::Segment { a, b }, identifying: true, fixed: true, face_across_mm: None, facing: None, moves: Vec::new() };
        let outline = |name: &str, a: BoardPoint3, b: BoardPoint3| ModelEdge { identifying: false, ..seg(name, a, b) };
        let mut edges = vec![
            outline("side +x", p(hw, 0.0), p(hw, len)),
            outline("side -x", p(-hw, len), p(-hw, 0.0)),
            outline("target end", p(-hw, 0.0), p(hw, 0.0)),
            outline("far end", p(hw, len), p(-hw, len)),
        ];
        let mut ladders = Vec::new();
        let mut params = Vec::new();
        let mut occluders = Vec::new();
        let mut blocked: Vec<(f64, f64)> = Vec::new();
        let mut key_points = vec![
            ("target end +x corner".to_string(), p(hw, 0.0)),
            ("target end -x corner".to_string(), p(-hw, 0.0)),
            ("far end +x corner".to_string(), p(hw, len)),
            ("far end -x corner".to_string(), p(-hw, len)),
        ];
        match &board.layout {
            Layout::Shuffleboard(s) => {
                let l = s.lines;
                let mut cross = vec![0.0, len];
                for (name, y) in [("trey line", l.trey_line_mm), ("deuce line", l.deuce_line_mm), ("long foul line", l.long_foul_line_mm), ("short foul line", l.short_foul_line_mm)] {
                    // A centre foul line shared by both is drawn once.
                    if name == "short foul line" && (y - l.long_foul_line_mm).abs() < 1e-9 {
                        continue;
                    }
                    blocked.push((y, y + s.line_width_mm));
                    for (edge, yy) in [("near", y), ("far", y + s.line_width_mm)] {
                        edges.push(seg(&format!("{name} {edge} edge"), p(-hw, yy), p(hw, yy)));
                        cross.push(yy);
                    }
                    key_points.push((format!("{name} +x end"), p(hw, y)));
                    key_points.push((format!("{name} -x end"), p(-hw, y)));
                }
                ladders.push(Ladder { z_mm: 0.0, half_width_mm: hw, cross_lines_mm: cross });
                // The table at its nominal build: the surface slab, the gutter trough
                // `d` deep and `g` wide all round, rails beyond it `rh` above the surface.
                let (g, d) = (s.construction.gutter_width_mm, s.construction.gutter_depth_mm);
                let (rw, rh, bottom) = (s.construction.rail_width_mm, s.construction.rail_height_mm, -s.construction.table_depth_mm);
                let (x0, x1) = (hw + g, hw + g + rw);
                occluders.push(Occluder { min: [-hw, 0.0, bottom], max: [hw, len, 0.0] });
                occluders.push(Occluder { min: [x0, -g - rw, bottom], max: [x1, len + g + rw, rh] });
                occluders.push(Occluder { min: [-x1, -g - rw, bottom], max: [-x0, len + g + rw, rh] });
                occluders.push(Occluder { min: [-x0, -g - rw, bottom], max: [x0, -g, rh] });
                occluders.push(Occluder { min: [-x0, len + g, bottom], max: [x0, len + g + rw, rh] });
                // Fitted with the pose: every table has its own (ranges: tables sold and
                // home-built, from a shallow 40 mm trough to a 130 mm one, rails flush to high).
                let (pg, pd, prw, prh) = (0, 1, 2, 3);
                params.push(ConstructionParam { name: "gutter width", nominal_mm: g, min_mm: 40.0, max_mm: 130.0 });
                params.push(ConstructionParam { name: "gutter depth", nominal_mm: d, min_mm: 10.0, max_mm: 120.0 });
                params.push(ConstructionParam { name: "rail width", nominal_mm: rw, min_mm: 20.0, max_mm: 160.0 });
                params.push(ConstructionParam { name: "rail height", nominal_mm: rh, min_mm: 0.0, max_mm: 120.0 });
                box_edges(&mut edges, "surface slab foot", [-hw, 0.0], [hw, len], -d, &[], &[(pd, -1.0)]);
                box_edges(&mut edges, "rail inner top", [-x0, -g], [x0, len + g], rh, &[pg], &[(prh, 1.0)]);
                box_edges(&mut edges, "rail inner foot", [-x0, -g], [x0, len + g], -d, &[pg], &[(pd, -1.0)]);
                box_edges(&mut edges, "rail outer top", [-x1, -g - rw], [x1, len + g + rw], rh, &[pg, prw], &[(prh, 1.0)]);
            }
            Layout::Sjoelbak(s) => {
                // The walls at their nominal build.
                let wh = s.construction.wall_height_mm;
                let (t, fl) = (s.construction.wall_thickness_mm, s.construction.floor_board_thickness_mm);
                let built = |name: &str, a: BoardPoint3, b: BoardPoint3, moves: Vec<EdgeMove>| ModelEdge { identifying: false, fixed: false, moves, ..seg(name, a, b) };
                // Fitted with the pose (ranges: toy boxes to heavy club boards).
                let (pwh, pt, pfl, pph, pgh) = (0, 1, 2, 3, 4);
                params.push(ConstructionParam { name: "wall height", nominal_mm: wh, min_mm: 10.0, max_mm: 150.0 });
                params.push(ConstructionParam { name: "wall thickness", nominal_mm: t, min_mm: 5.0, max_mm: 60.0 });
                params.push(ConstructionParam { name: "floor board thickness", nominal_mm: fl, min_mm: 0.0, max_mm: 80.0 });
                params.push(ConstructionParam { name: "partition height", nominal_mm: s.construction.partition_height_mm, min_mm: 3.0, max_mm: 60.0 });
                params.push(ConstructionParam { name: "gate bar height", nominal_mm: wh, min_mm: 10.0, max_mm: 150.0 });
                let (up, down) = ([0.0, 0.0, 1.0], [0.0, 0.0, -1.0]);
                let rise = |k: usize| vec![mv(k, up, up)];
                // The surface's sides and back end are the feet of the walls' inner faces.
                for e in edges.iter_mut().take(3) {
                    e.face_across_mm = Some([0.0, 0.0, wh]);
                }
                edges.push(built("side +x wall top", p3(hw, 0.0, wh), p3(hw, len, wh), rise(pwh)));
                edges.push(built("side -x wall top", p3(-hw, len, wh), p3(-hw, 0.0, wh), rise(pwh)));
                edges.push(ModelEdge { face_across_mm: Some([0.0, 0.0, -wh]), ..built("back wall top", p3(-hw, 0.0, wh), p3(hw, 0.0, wh), rise(pwh)) });
                for sx in [1.0, -1.0] {
                    let (xo, ys) = (sx * (hw + t), if sx > 0.0 { [-t, len] } else { [len, -t] });
                    let thick = |y: f64| [sx, if y < 0.0 { -1.0 } else { 0.0 }, 0.0];
                    let side = if sx > 0.0 { "+x" } else { "-x" };
                    let (a, b) = (thick(ys[0]), thick(ys[1]));
                    edges.push(built(&format!("side {side} wall outer top"), p3(xo, ys[0], wh), p3(xo, ys[1], wh), vec![mv(pt, a, b), mv(pwh, up, up)]));
                    edges.push(built(&format!("side {side} wall outer foot"), p3(xo, ys[0], -fl), p3(xo, ys[1], -fl), vec![mv(pt, a, b), mv(pfl, down, down)]));
                }
                let (back_a, back_b) = ([1.0, -1.0, 0.0], [-1.0, -1.0, 0.0]);
                edges.push(built("back wall outer top", p3(hw + t, -t, wh), p3(-hw - t, -t, wh), vec![mv(pt, back_a, back_b), mv(pwh, up, up)]));
                edges.push(built("back wall outer foot", p3(hw + t, -t, -fl), p3(-hw - t, -t, -fl), vec![mv(pt, back_a, back_b), mv(pfl, down, down)]));
                edges.push(built("far end foot", p3(-hw - t, len, -fl), p3(hw + t, len, -fl), vec![mv(pt, [-1.0, 0.0, 0.0], [1.0, 0.0, 0.0]), mv(pfl, down, down)]));
                for (x, outer) in [(hw, false), (hw + t, true), (-hw, false), (-hw - t, true)] {
                    let mut moves = vec![mv(pfl, down, [0.0; 3]), mv(pwh, [0.0; 3], up)];
                    if outer {
                        moves.push(mv(pt, [x.signum(), 0.0, 0.0], [x.signum(), 0.0, 0.0]));
                    }
                    edges.push(built(&format!("wall end at x = {x}"), p3(x, len, -fl), p3(x, len, wh), moves));
                }
                for x in [hw, -hw] {
                    let xo = x + t * x.signum();
                    edges.push(built(&format!("wall end top at x = {x}"), p3(x, len, wh), p3(xo, len, wh), vec![mv(pwh, up, up), mv(pt, [0.0; 3], [x.signum(), 0.0, 0.0])]));
                }
                for x in [hw + t, -hw - t] {
                    let out = [x.signum(), -1.0, 0.0];
                    edges.push(built(&format!("back corner at x = {x}"), p3(x, -t, -fl), p3(x, -t, wh), vec![mv(pt, out, out), mv(pfl, down, [0.0; 3]), mv(pwh, [0.0; 3], up)]));
                }
                occluders.push(Occluder { min: [-hw, 0.0, -fl], max: [hw, len, 0.0] });
                occluders.push(Occluder { min: [hw, -t, -fl], max: [hw + t, len, wh] });
                occluders.push(Occluder { min: [-hw - t, -t, -fl], max: [-hw, len, wh] });
                occluders.push(Occluder { min: [-hw - t, -t, -fl], max: [hw + t, 0.0, wh] });
                let ph = s.construction.partition_height_mm;
                for x in s.partitions() {
                    let half = s.partition_width_mm / 2.0;
                    occluders.push(Occluder { min: [x - half, 0.0, 0.0], max: [x + half, s.gate_back_mm, ph] });
                    for xx in [x - half, x + half] {
                        edges.push(ModelEdge { identifying: true, ..built(&format!("partition top at x = {xx}"), p3(xx, 0.0, ph), p3(xx, s.gate_back_mm, ph), rise(pph)) });
                    }
                }
                ladders.push(Ladder { z_mm: wh, half_width_mm: hw, cross_lines_mm: vec![0.0, s.gate_back_mm, s.gate_front_mm] });
                ladders.push(Ladder { z_mm: wh, half_width_mm: hw + t, cross_lines_mm: vec![-t] });
                ladders.push(Ladder { z_mm: -fl, half_width_mm: hw + t, cross_lines_mm: vec![-t, len] });
                // The partitions' feet: what the rules fix of them is where they stand.
                let half = s.partition_width_mm / 2.0;
                for x in s.partitions() {
                    for (xx, out) in [(x - half, -1.0), (x + half, 1.0)] {
                        edges.push(ModelEdge {
                            facing: Some([out, 0.0]),
                            face_across_mm: Some([0.0, 0.0, s.construction.partition_height_mm]),
                            ..seg(&format!("partition foot at x = {xx}"), p(xx, 0.0), p(xx, s.gate_back_mm))
                        });
                    }
                }
                // The gate bar's feet: its front and back faces between the openings and the
                // openings' sides, all on the surface. How it is built above (blocks, a bridged
                // bar, its height) is the maker's choice.
                let (gb, gf) = (s.gate_back_mm, s.gate_front_mm);
                blocked.push((0.0, gf));
                let mut xs = vec![-hw];
                for c in &s.compartments {
                    xs.push(c.x_mm - s.gate_opening_mm / 2.0);
                    xs.push(c.x_mm + s.gate_opening_mm / 2.0);
                }
                xs.push(hw);
                for (i, w) in xs.chunks(2).enumerate() {
                    let (x0, x1) = (w[0], w[1]);
                    if x1 <= x0 {
                        continue;
                    }
                    occluders.push(Occluder { min: [x0, gb, 0.0], max: [x1, gf, wh] });
                    let down = Some([0.0, 0.0, -wh]);
                    edges.push(ModelEdge { face_across_mm: down, identifying: true, ..built(&format!("gate bar {i} front top"), p3(x1, gf, wh), p3(x0, gf, wh), rise(pgh)) });
                    edges.push(ModelEdge { face_across_mm: down, identifying: true, ..built(&format!("gate bar {i} back top"), p3(x0, gb, wh), p3(x1, gb, wh), rise(pgh)) });
                    let face = Some([0.0, 0.0, wh]);
                    edges.push(ModelEdge { facing: Some([0.0, 1.0]), face_across_mm: face, ..seg(&format!("gate bar {i} front foot"), p(x1, gf), p(x0, gf)) });
                    edges.push(ModelEdge { facing: Some([0.0, -1.0]), face_across_mm: face, ..seg(&format!("gate bar {i} back foot"), p(x0, gb), p(x1, gb)) });
                    for (x, out) in [(x0, -1.0), (x1, 1.0)] {
                        if x.abs() < hw - 1e-9 {
                            edges.push(ModelEdge { facing: Some([out, 0.0]), face_across_mm: face, ..seg(&format!("gate bar {i} foot at x = {x}"), p(x, gb), p(x, gf)) });
                            edges.push(ModelEdge { face_across_mm: down, identifying: true, ..built(&format!("gate bar {i} top end at x = {x}"), p3(x, gb, wh), p3(x, gf, wh), rise(pgh)) });
                        }
                    }
                }
                for c in &s.compartments {
                    key_points.push((format!("gate {} centre", c.value), p(c.x_mm, gf)));
                }
                ladders.push(Ladder { z_mm: 0.0, half_width_mm: hw, cross_lines_mm: vec![0.0, gb, gf, len] });
            }
            Layout::Washer(w) => {
                for h in &w.holes {
                    blocked.push((h.y_mm - h.radius(), h.y_mm + h.radius()));
                    let name = format!("hole {} at ({}, {})", h.value, h.x_mm, h.y_mm);
                    edges.push(ModelEdge { name: format!("{name} rim"), shape: EdgeShape::Circle { centre: p(h.x_mm, h.y_mm), radius_mm: h.radius() }, identifying: true, fixed: true, face_across_mm: None, facing: None, moves: Vec::new() });
                    key_points.push((format!("{name} centre"), p(h.x_mm, h.y_mm)));
                }
                ladders.push(Ladder { z_mm: 0.0, half_width_mm: hw, cross_lines_mm: vec![0.0, len] });
            }
        }
        debug_assert!(params.len() <= MAX_PARAMS);
        BoardModel { edges, ladders, occluders, key_points, clear_spans_mm: clear_spans(len, blocked), params }
    }

    /// Segment `a`-`b` of `edge` with the construction parameters `cons` mm off
    /// their nominal values (missing entries count as nominal).
    fn segment_at(edge: &ModelEdge, a: BoardPoint3, b: BoardPoint3, cons: &[f64]) -> (BoardPoint3, BoardPoint3) {
        let (mut a, mut b) = (pt(a), pt(b));
        for m in &edge.moves {
            let c = cons.get(m.param).copied().unwrap_or(0.0);
            for i in 0..3 {
                a[i] += c * m.a[i];
                b[i] += c * m.b[i];
            }
        }
        (BoardPoint3::new(a[0], a[1], a[2]), BoardPoint3::new(b[0], b[1], b[2]))
    }

    /// Whether the board itself hides board point `x` from a camera at `eye`.
    fn hidden(&self, x: [f64; 3], eye: [f64; 3]) -> bool {
        // Boxes shrink by this much so an edge lying on a box's own face is not hidden by it.
        const SHRINK_MM: f64 = 0.25;
        let d = sub3(eye, x);
        self.occluders.iter().any(|b| {
            let (mut t0, mut t1) = (0.0f64, 1.0f64);
            for a in 0..3 {
                let (lo, hi) = (b.min[a] + SHRINK_MM, b.max[a] - SHRINK_MM);
                if d[a].abs() < 1e-12 {
                    if x[a] < lo || x[a] > hi {
                        return false;
                    }
                } else {
                    let (mut n, mut f) = ((lo - x[a]) / d[a], (hi - x[a]) / d[a]);
                    if n > f {
                        std::mem::swap(&mut n, &mut f);
                    }
                    t0 = t0.max(n);
                    t1 = t1.min(f);
                }
            }
            t0 < t1
        })
    }
}

// ---------------------------------------------------------------------------
// The result.

/// How a pose was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LocateMethod {
    /// From the board's own edges.
    Automatic,
    /// From hand-picked point correspondences (`--points`).
    Points,
}

/// How well one model feature fits.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FeatureFit {
    pub feature: String,
    /// Samples of the feature inside the image.
    pub samples: usize,
    /// Of those, samples that found their image edge within the inlier distance.
    pub inliers: usize,
    /// RMS normal distance of the inliers, px.
    pub rms_px: f64,
    /// Whether the rules fix the feature ([`ModelEdge::fixed`]). Only those are
    /// fitted and decide the verdict; a construction feature (at its nominal size)
    /// is listed to show whether this table is built like that.
    pub fixed: bool,
}

/// The stage's output: the camera pose in the board frame and the evidence for it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BoardPose {
    pub board: String,
    pub pose: CameraPose,
    pub method: LocateMethod,
    /// RMS reprojection error of the features used, px: normal distances of the
    /// edge samples (automatic) or point distances (points).
    pub reprojection_rms_px: f64,
    /// Fraction of the visible model's edge samples matched (automatic only).
    pub coverage: f64,
    /// Predicted standard error of the worst visible board point, mm (automatic only).
    pub position_sigma_mm: f64,
    pub features: Vec<FeatureFit>,
}

impl BoardPose {
    /// Writes the pose ([`CameraPose::save`]) with its quality numbers.
    pub fn save(&self, path: &Path) -> Result<(), LocateError> {
        self.pose.save(
            path,
            &[
                ("reprojection_rms_px", self.reprojection_rms_px),
                ("coverage", self.coverage),
                ("position_sigma_mm", self.position_sigma_mm),
            ],
        )?;
        Ok(())
    }
}

// ---------------------------------------------------------------------------
// Small geometry.

fn dot3(a: [f64; 3], b: [f64; 3]) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

fn cross3(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]
}

fn unit3(v: [f64; 3]) -> Option<[f64; 3]> {
    let n = dot3(v, v).sqrt();
    (n > 1e-12 && n.is_finite()).then(|| [v[0] / n, v[1] / n, v[2] / n])
}

fn scale3(v: [f64; 3], s: f64) -> [f64; 3] {
    [v[0] * s, v[1] * s, v[2] * s]
}

fn sub3(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}

fn pt(p: BoardPoint3) -> [f64; 3] {
    [p.x_mm, p.y_mm, p.z_mm]
}

/// Pinhole projection of a camera-frame point (the undistorted image's camera).
fn project(cam: &Camera, x: [f64; 3]) -> Option<[f64; 2]> {
    (x[2] > NEAR_MM).then(|| [cam.fx * x[0] / x[2] + cam.cx, cam.fy * x[1] / x[2] + cam.cy])
}

/// The pose after a small motion: rotation `w` (axis-angle) about the camera
/// centre then translation `dt`, both in camera coordinates.
fn perturbed(pose: &CameraPose, d: &[f64; 6]) -> CameraPose {
    let dr = crate::camera::rotation_from_rvec([d[0], d[1], d[2]]);
    let mut r: Rotation = [[0.0; 3]; 3];
    for i in 0..3 {
        for j in 0..3 {
            r[i][j] = (0..3).map(|k| dr[i][k] * pose.rotation[k][j]).sum();
        }
    }
    let t0 = pose.translation;
    let t = [0, 1, 2].map(|i| dot3(dr[i], t0) + d[3 + i]);
    CameraPose { rotation: r, translation: t }
}

/// `d p / d (w, t)` for the camera-frame point `x` (2 rows of 6).
fn projection_jacobian(cam: &Camera, x: [f64; 3]) -> [[f64; 6]; 2] {
    let (iz, x0, x1) = (1.0 / x[2], x[0], x[1]);
    // d p / d X
    let du = [cam.fx * iz, 0.0, -cam.fx * x0 * iz * iz];
    let dv = [0.0, cam.fy * iz, -cam.fy * x1 * iz * iz];
    // d X / d w = -[X]x ; d X / d t = I
    let dxdw = [[0.0, x[2], -x[1]], [-x[2], 0.0, x[0]], [x[1], -x[0], 0.0]];
    let mut out = [[0.0; 6]; 2];
    for (row, g) in [du, dv].iter().enumerate() {
        for j in 0..3 {
            out[row][j] = (0..3).map(|k| g[k] * dxdw[k][j]).sum();
            out[row][3 + j] = g[j];
        }
    }
    out
}

#[cfg(test)]
/// Largest distance between the board points seen by two poses, over a grid of the surface, mm.
fn pose_distance(a: &CameraPose, b: &CameraPose, points: &[[f64; 3]]) -> f64 {
    // Compare where each pose puts the camera-frame points: equivalently,
    // how far apart the two poses map the same board points in space.
    points
        .iter()
        .map(|p| {
            let bp = BoardPoint3::new(p[0], p[1], p[2]);
            let (x, y) = (a.to_camera(bp), b.to_camera(bp));
            dot3(sub3(x, y), sub3(x, y)).sqrt()
        })
        .fold(0.0, f64::max)
}

// ---------------------------------------------------------------------------
// Image gradients.

/// Colour gradient images as plain arrays (levels per px, one pair per BGR
/// channel), read with bilinear interpolation. Each lookup answers with the
/// channel of strongest response: wood against a grey floor of the same
/// brightness still differs strongly in red. The six planes are interleaved
/// per pixel (`[gx_b, gy_b, gx_g, gy_g, gx_r, gy_r]`): a lookup reads four
/// neighbouring entries instead of four places in each of six planes, which
/// made the pose search memory-bound. They are held as the 3x3 Sobel's raw
/// sums, whole numbers within +-1020 for an 8-bit image: 12 bytes a pixel
/// instead of 24 (the frame-sized array is the largest of the pose search),
/// and each converted to levels per pixel ([`SOBEL_TO_LEVELS`]) exactly.
#[derive(Default)]
struct Gradients {
    w: usize,
    h: usize,
    g: Vec<[i16; 6]>,
}

/// A 3x3 Sobel sum is 8 x the per-pixel derivative; multiplying by a power of
/// two is exact, so the levels read are those of a float Sobel scaled by 1/8.
const SOBEL_TO_LEVELS: f32 = 1.0 / 8.0;

/// The longest edge search, in samples each side ([`SEARCH_SCHEDULE_PX`]'s
/// widest range at [`SEARCH_STEP_PX`], plus the peak test's neighbour).
const MAX_SEARCH_SAMPLES: usize = 2 * (16.0 / SEARCH_STEP_PX) as usize + 3;

impl Gradients {
    /// Signed gradient along `n` at `p`, of the channel with the largest magnitude.
    fn along(&self, p: [f64; 2], n: [f64; 2]) -> Option<f32> {
        let (u, v) = (p[0], p[1]);
        if !(u >= 0.0 && v >= 0.0 && u < (self.w - 1) as f64 && v < (self.h - 1) as f64) {
            return None;
        }
        let (iu, iv) = (u as usize, v as usize);
        let (fu, fv) = ((u - iu as f64) as f32, (v - iv as f64) as f32);
        let i = iv * self.w + iu;
        let (a, b, c, d) = (&self.g[i], &self.g[i + 1], &self.g[i + self.w], &self.g[i + self.w + 1]);
        let level = |x: i16| x as f32 * SOBEL_TO_LEVELS;
        let lerp = |k: usize| {
            let top = level(a[k]) * (1.0 - fu) + level(b[k]) * fu;
            let bot = level(c[k]) * (1.0 - fu) + level(d[k]) * fu;
            top * (1.0 - fv) + bot * fv
        };
        let mut best = 0.0f32;
        for c in 0..3 {
            let g = lerp(2 * c) * n[0] as f32 + lerp(2 * c + 1) * n[1] as f32;
            if g.abs() > best.abs() {
                best = g;
            }
        }
        Some(best)
    }

    /// The image edge along the normal through `p`: offset (px, along `n`) and
    /// signed strength. `polarity` 0 accepts either sign.
    fn search(&self, p: [f64; 2], n: [f64; 2], range: f64, polarity: f32) -> Option<(f64, f32)> {
        let k = (range / SEARCH_STEP_PX).ceil() as i32;
        let len = (2 * k + 3) as usize;
        if len > MAX_SEARCH_SAMPLES {
            return None;
        }
        let (mut vals, mut raw) = ([0.0f32; MAX_SEARCH_SAMPLES], [0.0f32; MAX_SEARCH_SAMPLES]);
        for (j, i) in (-(k + 1)..=(k + 1)).enumerate() {
            let s = i as f64 * SEARCH_STEP_PX;
            let g = self.along([p[0] + s * n[0], p[1] + s * n[1]], n)?;
            raw[j] = g;
            vals[j] = if polarity == 0.0 { g.abs() } else { g * polarity };
        }
        let vals = &vals[..len];
        let strongest = vals[1..vals.len() - 1].iter().cloned().fold(f32::MIN, f32::max);
        if strongest < EDGE_MIN_GRADIENT {
            return None;
        }
        let mut best: Option<(f64, f32)> = None;
        for i in 1..vals.len() - 1 {
            let (a, b, c) = (vals[i - 1], vals[i], vals[i + 1]);
            if b < EDGE_MIN_GRADIENT || b < NEAREST_PEAK_RATIO * strongest || b < a || b < c {
                continue;
            }
            let denom = a - 2.0 * b + c;
            let frac = if denom < 0.0 { (0.5 * (a - c) / denom) as f64 } else { 0.0 };
            let off = ((i as i32 - (k + 1)) as f64 + frac.clamp(-0.5, 0.5)) * SEARCH_STEP_PX;
            if off.abs() > range {
                continue;
            }
            if best.map_or(true, |(o, _)| off.abs() < o.abs()) {
                best = Some((off, raw[i]));
            }
        }
        best
    }
}

// ---------------------------------------------------------------------------
// Sampling the projected model.

#[derive(Debug, Clone, Copy)]
struct Sample {
    edge: usize,
    /// Where along a segment edge the sample lies (0 at `a`, 1 at `b`, in 3D).
    t: f64,
    /// Camera-frame point.
    xc: [f64; 3],
    p: [f64; 2],
    n: [f64; 2],
}

fn inside(p: [f64; 2], w: f64, h: f64) -> bool {
    p[0] >= BORDER_MARGIN_PX && p[1] >= BORDER_MARGIN_PX && p[0] <= w - 1.0 - BORDER_MARGIN_PX && p[1] <= h - 1.0 - BORDER_MARGIN_PX
}

/// Points along every model edge, `step` px apart in the image, with their image normals.
/// `cons`: the construction parameters' offsets from nominal, mm (empty: nominal).
fn sample_model(model: &BoardModel, pose: &CameraPose, cam: &Camera, step: f64, cons: &[f64], out: &mut Vec<Sample>) {
    out.clear();
    sample_edges(model, pose, cam, step, cons, out);
    let eye = pose.centre();
    out.retain(|s| {
        let e = &model.edges[s.edge];
        let (Some(n), EdgeShape::Segment { a, .. }) = (e.facing, e.shape) else { return true };
        n[0] * (eye.x_mm - a.x_mm) + n[1] * (eye.y_mm - a.y_mm) > 0.0
    });
    if !model.occluders.is_empty() {
        // Back to board coordinates to test the ray to the camera against the board's own boxes.
        let eye = pt(pose.centre());
        let r = pose.rotation;
        let t = pose.translation;
        out.retain(|s| {
            let d = sub3(s.xc, t);
            let x = [0, 1, 2].map(|j| r[0][j] * d[0] + r[1][j] * d[1] + r[2][j] * d[2]);
            !model.hidden(x, eye)
        });
    }
}

fn sample_edges(model: &BoardModel, pose: &CameraPose, cam: &Camera, step: f64, cons: &[f64], out: &mut Vec<Sample>) {
    let (w, h) = (cam.image_width as f64, cam.image_height as f64);
    for (ei, e) in model.edges.iter().enumerate() {
        match e.shape {
            EdgeShape::Segment { a, b } => {
                let (a, b) = BoardModel::segment_at(e, a, b, cons);
                let (mut ac, mut bc) = (pose.to_camera(a), pose.to_camera(b));
                // Clip to the part in front of the camera.
                if ac[2] <= NEAR_MM && bc[2] <= NEAR_MM {
                    continue;
                }
                let clip = |p: [f64; 3], q: [f64; 3]| {
                    let t = (NEAR_MM * 1.01 - p[2]) / (q[2] - p[2]);
                    [p[0] + t * (q[0] - p[0]), p[1] + t * (q[1] - p[1]), p[2] + t * (q[2] - p[2])]
                };
                if ac[2] <= NEAR_MM {
                    ac = clip(ac, bc);
                } else if bc[2] <= NEAR_MM {
                    bc = clip(bc, ac);
                }
                let (Some(pa), Some(pb)) = (project(cam, ac), project(cam, bc)) else { continue };
                let d = [pb[0] - pa[0], pb[1] - pa[1]];
                let len = d[0].hypot(d[1]);
                if len < 1.0 {
                    continue;
                }
                let n = [-d[1] / len, d[0] / len];
                // Clip the image segment to the image (Liang-Barsky on s in [0, 1]).
                let (mut s0, mut s1) = (0.0f64, 1.0f64);
                let lims = [(-d[0], pa[0] - BORDER_MARGIN_PX), (d[0], w - 1.0 - BORDER_MARGIN_PX - pa[0]), (-d[1], pa[1] - BORDER_MARGIN_PX), (d[1], h - 1.0 - BORDER_MARGIN_PX - pa[1])];
                let mut visible = true;
                for (pp, q) in lims {
                    if pp.abs() < 1e-12 {
                        if q < 0.0 {
                            visible = false;
                        }
                    } else {
                        let r = q / pp;
                        if pp < 0.0 {
                            s0 = s0.max(r);
                        } else {
                            s1 = s1.min(r);
                        }
                    }
                }
                if !visible || s1 <= s0 {
                    continue;
                }
                let count = ((s1 - s0) * len / step).floor() as usize;
                for i in 0..=count {
                    let s = s0 + (s1 - s0) * (i as f64 + 0.5) / (count as f64 + 1.0);
                    // Perspective-correct: the 3D parameter of image parameter s.
                    let t = (s / bc[2]) / ((1.0 - s) / ac[2] + s / bc[2]);
                    let xc = [ac[0] + t * (bc[0] - ac[0]), ac[1] + t * (bc[1] - ac[1]), ac[2] + t * (bc[2] - ac[2])];
                    if let Some(p) = project(cam, xc) {
                        if inside(p, w, h) {
                            // The 3D parameter along the unclipped segment.
                            let (a0, b0) = (pose.to_camera(a), pose.to_camera(b));
                            let d3 = sub3(b0, a0);
                            let t3 = dot3(sub3(xc, a0), d3) / dot3(d3, d3).max(1e-12);
                            out.push(Sample { edge: ei, t: t3, xc, p, n });
                        }
                    }
                }
            }
            EdgeShape::Circle { centre, radius_mm } => {
                let cc = pose.to_camera(centre);
                let Some(pc) = project(cam, cc) else { continue };
                let circumference_px = std::f64::consts::TAU * radius_mm * cam.fx / cc[2];
                let count = ((circumference_px / step).ceil() as usize).clamp(16, 4096);
                for i in 0..count {
                    let th = std::f64::consts::TAU * i as f64 / count as f64;
                    let (s, c) = th.sin_cos();
                    let x = BoardPoint3::new(centre.x_mm + radius_mm * c, centre.y_mm + radius_mm * s, centre.z_mm);
                    let xt = BoardPoint3::new(x.x_mm - 0.5 * s, x.y_mm + 0.5 * c, x.z_mm);
                    let xc = pose.to_camera(x);
                    let (Some(p), Some(q)) = (project(cam, xc), project(cam, pose.to_camera(xt))) else { continue };
                    let d = [q[0] - p[0], q[1] - p[1]];
                    let len = d[0].hypot(d[1]);
                    if len < 1e-9 || !inside(p, w, h) {
                        continue;
                    }
                    let mut n = [-d[1] / len, d[0] / len];
                    // Outward normal, so a dark hole has one polarity all round.
                    if n[0] * (p[0] - pc[0]) + n[1] * (p[1] - pc[1]) < 0.0 {
                        n = [-n[0], -n[1]];
                    }
                    out.push(Sample { edge: ei, t: 0.0, xc, p, n });
                }
            }
        }
    }
}

// ---------------------------------------------------------------------------
// Lines and closed-form hypotheses.

/// A straight image line `a u + b v + c = 0` with `a^2 + b^2 = 1`, and its support.
#[derive(Debug, Clone, Copy)]
struct ImageLine {
    l: [f64; 3],
    support_px: f64,
    /// The extent of its segments along the line's direction `(l[1], -l[0])`, px.
    span: [f64; 2],
}

impl ImageLine {
    /// The position of image point `p` along the line's direction, px.
    fn along(&self, p: [f64; 2]) -> f64 {
        p[0] * self.l[1] - p[1] * self.l[0]
    }

    /// The intersection with another line; `None` if (nearly) parallel.
    fn meet(&self, other: &ImageLine) -> Option<[f64; 2]> {
        let p = cross3(self.l, other.l);
        (p[2].abs() > 1e-12).then(|| [p[0] / p[2], p[1] / p[2]])
    }
}

/// How far a cross line's segments may run past the sides it spans, as a share
/// of the distance between them (plus [`CROSS_OVERRUN_PX`]): painted lines,
/// ends and gate-bar feet stop at the surface's edges, while floor tiles, table
/// edges and rails run on.
const CROSS_OVERRUN_SHARE: f64 = 0.1;
const CROSS_OVERRUN_PX: f64 = 6.0;
/// A cross line must show over this share of the distance between the sides
/// (pieces and glare hide the rest).
const CROSS_MIN_SHARE: f64 = 0.3;
/// The sides' segments must come within this share of the distance between the
/// sides of where the cross line meets them (a side may be hidden in part).
const SIDE_REACH_SHARE: f64 = 1.0;

/// Whether `cross` could be a line across the surface between sides `a` and `b`
/// in the image: it spans most of the way from one to the other and no further,
/// and both sides reach it.
fn spans_between(a: &ImageLine, b: &ImageLine, cross: &ImageLine) -> bool {
    let (Some(pa), Some(pb)) = (cross.meet(a), cross.meet(b)) else { return false };
    let width = (pa[0] - pb[0]).hypot(pa[1] - pb[1]);
    if !(width > 2.0 * CROSS_OVERRUN_PX) {
        return false;
    }
    let (ta, tb) = (cross.along(pa), cross.along(pb));
    let (lo, hi) = (ta.min(tb), ta.max(tb));
    let slack = CROSS_OVERRUN_SHARE * width + CROSS_OVERRUN_PX;
    let [c0, c1] = cross.span;
    if c0 < lo - slack || c1 > hi + slack || (c1.min(hi) - c0.max(lo)) < CROSS_MIN_SHARE * width {
        return false;
    }
    let reach = SIDE_REACH_SHARE * width;
    let near = |side: &ImageLine, p: [f64; 2]| {
        let t = side.along(p);
        t >= side.span[0] - reach && t <= side.span[1] + reach
    };
    near(a, pa) || near(b, pb)
}

fn merge_segments(segs: &[[f64; 4]]) -> Vec<ImageLine> {
    // Sort by length so each cluster is seeded by its longest segment.
    let mut order: Vec<usize> = (0..segs.len()).collect();
    let seg_len = |s: &[f64; 4]| (s[2] - s[0]).hypot(s[3] - s[1]);
    order.sort_by(|&i, &j| seg_len(&segs[j]).total_cmp(&seg_len(&segs[i])));
    let mut clusters: Vec<(ImageLine, Vec<usize>)> = Vec::new();
    for &i in &order {
        let s = segs[i];
        let len = seg_len(&s);
        let (dx, dy) = ((s[2] - s[0]) / len, (s[3] - s[1]) / len);
        let mut joined = false;
        for (line, members) in clusters.iter_mut() {
            let (a, b) = (line.l[0], line.l[1]);
            let cos = (a * dy - b * dx).abs(); // |direction . line direction|
            let d0 = (a * s[0] + b * s[1] + line.l[2]).abs();
            let d1 = (a * s[2] + b * s[3] + line.l[2]).abs();
            if cos > MERGE_ANGLE_RAD.cos() && d0 < MERGE_DIST_PX && d1 < MERGE_DIST_PX {
                members.push(i);
                line.support_px += len;
                joined = true;
                break;
            }
        }
        if !joined {
            let l = [-dy, dx, -(-dy * s[0] + dx * s[1])];
            clusters.push((ImageLine { l, support_px: len, span: [0.0, 0.0] }, vec![i]));
        }
    }
    // Refit each cluster to its segments' endpoints and midpoints, weighted by length.
    clusters
        .into_iter()
        .map(|(line, members)| {
            let mut pts: Vec<([f64; 2], f64)> = Vec::new();
            for &i in &members {
                let s = segs[i];
                let w = seg_len(&s);
                for t in [0.0, 0.5, 1.0] {
                    pts.push(([s[0] + t * (s[2] - s[0]), s[1] + t * (s[3] - s[1])], w));
                }
            }
            let sw: f64 = pts.iter().map(|p| p.1).sum();
            let mu = [pts.iter().map(|p| p.0[0] * p.1).sum::<f64>() / sw, pts.iter().map(|p| p.0[1] * p.1).sum::<f64>() / sw];
            let (mut sxx, mut sxy, mut syy) = (0.0, 0.0, 0.0);
            for (p, w) in &pts {
                let (x, y) = (p[0] - mu[0], p[1] - mu[1]);
                sxx += w * x * x;
                sxy += w * x * y;
                syy += w * y * y;
            }
            // The normal is the eigenvector of the smaller eigenvalue of the scatter.
            let th = 0.5 * (2.0 * sxy).atan2(sxx - syy);
            let (dx, dy) = (th.cos(), th.sin());
            let (a, b) = (-dy, dx);
            let along = |p: [f64; 2]| p[0] * b - p[1] * a;
            let ts = members.iter().flat_map(|&i| [along([segs[i][0], segs[i][1]]), along([segs[i][2], segs[i][3]])]);
            let span = ts.fold([f64::INFINITY, f64::NEG_INFINITY], |s, t| [s[0].min(t), s[1].max(t)]);
            ImageLine { l: [a, b, -(a * mu[0] + b * mu[1])], support_px: line.support_px, span }
        })
        .collect()
}

/// The pose that puts `side_pos` at `x = +hw`, `side_neg` at `x = -hw` and
/// `cross` at `y = y_c`, all in the plane at height `z`, if one exists in front of the camera.
fn pose_from_lines(cam: &Camera, side_pos: &ImageLine, side_neg: &ImageLine, cross: &ImageLine, hw: f64, y_c: f64, z: f64) -> Option<CameraPose> {
    // Back-projected plane normals n = K^T l.
    let kt = |l: [f64; 3]| [cam.fx * l[0], cam.fy * l[1], cam.cx * l[0] + cam.cy * l[1] + l[2]];
    let (na, nb, nc) = (kt(side_pos.l), kt(side_neg.l), kt(cross.l));
    let dy = unit3(cross3(na, nb))?;
    let mut dx = unit3(cross3(nc, dy))?;
    // The rays to the two corners on the cross line.
    let ray = |l1: [f64; 3], l2: [f64; 3]| -> Option<[f64; 3]> {
        let p = cross3(l1, l2);
        if p[2].abs() < 1e-12 {
            return None;
        }
        let (u, v) = (p[0] / p[2], p[1] / p[2]);
        Some([(u - cam.cx) / cam.fx, (v - cam.cy) / cam.fy, 1.0])
    };
    let ra = ray(side_pos.l, cross.l)?;
    let rb = ray(side_neg.l, cross.l)?;
    // s_a ra - s_b rb = 2 hw dx (least squares in s_a, s_b).
    let solve = |dx: [f64; 3]| -> (f64, f64) {
        let rhs = scale3(dx, 2.0 * hw);
        let (a11, a12, a22) = (dot3(ra, ra), -dot3(ra, rb), dot3(rb, rb));
        let (b1, b2) = (dot3(ra, rhs), -dot3(rb, rhs));
        let det = a11 * a22 - a12 * a12;
        ((a22 * b1 - a12 * b2) / det, (a11 * b2 - a12 * b1) / det)
    };
    let (mut sa, mut sb) = solve(dx);
    if sa < 0.0 && sb < 0.0 {
        dx = scale3(dx, -1.0);
        (sa, sb) = solve(dx);
    }
    if !(sa > 0.0 && sb > 0.0) || !sa.is_finite() {
        return None;
    }
    let pa = scale3(ra, sa);
    let mut dy = dy;
    let mut dz = cross3(dx, dy);
    // The camera (the origin) is above the board: on the +z side of the plane.
    if dot3(scale3(pa, -1.0), dz) < 0.0 {
        dy = scale3(dy, -1.0);
        dz = cross3(dx, dy);
    }
    let dz = unit3(dz)?;
    // The fitted directions are orthogonal by construction; re-orthonormalise dy.
    let dy = cross3(dz, dx);
    let rotation = [[dx[0], dy[0], dz[0]], [dx[1], dy[1], dz[1]], [dx[2], dy[2], dz[2]]];
    // The ladder's plane is z = `z`: the board origin lies `z` below it.
    let t = sub3(sub3(sub3(pa, scale3(dx, hw)), scale3(dy, y_c)), scale3(dz, z));
    Some(CameraPose { rotation, translation: t })
}

// ---------------------------------------------------------------------------
// The localiser.

/// The result of refining one pose.
/// A pose being fitted with the construction's dimensions and the edges' polarities.
#[derive(Clone)]
struct Fit {
    pose: CameraPose,
    /// The construction parameters' offsets from nominal, mm ([`BoardModel::params`]).
    cons: Vec<f64>,
    /// Per model edge: the sign of its image gradient across it, 0 if not known.
    polarity: Vec<f32>,
    polarity_learned: bool,
}

impl Fit {
    fn start(pose: CameraPose, model: &BoardModel) -> Fit {
        Fit { pose, cons: vec![0.0; model.params.len()], polarity: vec![0.0; model.edges.len()], polarity_learned: false }
    }
}

struct Refined {
    pose: CameraPose,
    /// The construction parameters' offsets from nominal, mm ([`BoardModel::params`]).
    construction: Vec<f64>,
    /// Inlier count times coverage: the score hypotheses are ranked by.
    score: f64,
    /// The same over the rules-fixed features alone: what a rival pose must match
    /// to make the frame ambiguous (a free construction dimension can make a
    /// shifted pose fit a wall or bar top as well as the true one).
    fixed_score: f64,
    coverage: f64,
    rms_px: f64,
    inliers: usize,
    sigma_mm: f64,
    features: Vec<FeatureFit>,
    /// `y` of a straight line across the board that the model does not have.
    phantom_line_mm: Option<f64>,
    /// Why the features that tell the board apart do not confirm it, if they do not.
    unconfirmed: Option<String>,
    /// The image edge points the fit explains (each inlier sample where its edge
    /// was found), px: what a rival pose is compared on.
    evidence: Vec<[f64; 2]>,
}

/// The image edge points `a` explains that `b` does not, and those `b` explains that `a` does not.
fn evidence_difference(a: &[[f64; 2]], b: &[[f64; 2]]) -> (usize, usize) {
    use std::collections::HashSet;
    let cell = |p: &[f64; 2]| ((p[0] / EVIDENCE_CELL_PX).floor() as i64, (p[1] / EVIDENCE_CELL_PX).floor() as i64);
    let grid = |pts: &[[f64; 2]]| pts.iter().map(cell).collect::<HashSet<_>>();
    let only = |pts: &[[f64; 2]], other: &HashSet<(i64, i64)>| {
        pts.iter()
            .filter(|p| {
                let (x, y) = cell(p);
                !(-1..=1).any(|dx| (-1..=1).any(|dy| other.contains(&(x + dx, y + dy))))
            })
            .count()
    };
    (only(a, &grid(b)), only(b, &grid(a)))
}

/// How well the board's edges fit an image at a refined pose ([`Locator::edge_fit`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EdgeFit {
    pub pose: CameraPose,
    /// Model edge samples inside the image.
    pub samples: usize,
    /// Of those, samples within the inlier distance of their image edge.
    pub inliers: usize,
    /// Model edges with at least one inlier.
    pub edges: usize,
    /// Each sample's squared distance to its image edge, capped at the inlier
    /// distance's square (a missed sample costs the cap), summed, px^2.
    pub truncated_cost_px2: f64,
}

impl EdgeFit {
    /// The cost per sample, px^2.
    pub fn mean_cost_px2(&self) -> f64 {
        self.truncated_cost_px2 / self.samples.max(1) as f64
    }
}

/// Finds the board in undistorted images. Owns its image scratch buffers.
pub struct Locator {
    board_name: String,
    model: BoardModel,
    cfg: LocateConfig,
    blurred: Mat,
    sobel: Mat,
    edges: Mat,
    grad: Gradients,
    samples: Vec<Sample>,
    /// Points on the surface used to compare poses.
    probe_points: Vec<[f64; 3]>,
    /// The best pose of the last run, refused or not (for overlays showing why).
    last_candidate: Option<CameraPose>,
    /// The construction fitted with it (offsets from nominal, mm), for the overlay.
    last_construction: Vec<f64>,
}

impl Locator {
    pub fn new(board: &Board, cfg: LocateConfig) -> Locator {
        let model = BoardModel::new(board);
        let hw = board.surface.half_width();
        let len = board.surface.length_mm;
        let rows = (len / PROBE_SPACING_MM).ceil() as usize;
        let probe_points = (0..=rows)
            .flat_map(|i| {
                let y = len * i as f64 / rows as f64;
                [[-hw, y, 0.0], [0.0, y, 0.0], [hw, y, 0.0]]
            })
            .collect();
        Locator {
            board_name: board.name.clone(),
            model,
            cfg,
            blurred: Mat::default(),
            sobel: Mat::default(),
            edges: Mat::default(),
            grad: Gradients::default(),
            samples: Vec::new(),
            probe_points,
            last_candidate: None,
            last_construction: Vec::new(),
        }
    }

    pub fn model(&self) -> &BoardModel {
        &self.model
    }

    /// The best pose the last run considered, even if it was refused.
    pub fn last_candidate(&self) -> Option<CameraPose> {
        self.last_candidate
    }

    fn prepare(&mut self, und: &Undistorted) -> Result<(), LocateError> {
        cv("blur", imgproc::gaussian_blur(&und.image, &mut self.blurred, Size::new(0, 0), BLUR_SIGMA_PX, BLUR_SIGMA_PX, BORDER_DEFAULT))?;
        let (w, h) = (self.blurred.cols() as usize, self.blurred.rows() as usize);
        self.grad.w = w;
        self.grad.h = h;
        // Pixels near the undistortion's fill: their gradients are the fill's border, not the board.
        let mut keep = Mat::default();
        if !und.valid.empty() {
            let r = (BORDER_MARGIN_PX + 3.0 * BLUR_SIGMA_PX).ceil() as i32;
            let k = cv("kernel", imgproc::get_structuring_element_def(imgproc::MORPH_RECT, Size::new(2 * r + 1, 2 * r + 1)))?;
            cv("erode", imgproc::erode(&und.valid, &mut keep, &k, opencv::core::Point::new(-1, -1), 1, opencv::core::BORDER_CONSTANT, Scalar::all(0.0)))?;
        }
        let mask: Option<&[u8]> = if keep.empty() { None } else { Some(cv("mask", keep.data_typed::<u8>())?) };
        let mut channels: Vector<Mat> = Vector::new();
        cv("split", opencv::core::split(&self.blurred, &mut channels))?;
        self.grad.g.clear();
        self.grad.g.resize(w * h, [0; 6]);
        for c in 0..3 {
            let ch = cv("split", channels.get(c))?;
            for (dx, dy) in [(1, 0), (0, 1)] {
                // The raw 3x3 Sobel sums of the 8-bit channel: exact in 16 bits.
                cv("sobel", imgproc::sobel(&ch, &mut self.sobel, CV_16S, dx, dy, 3, 1.0, 0.0, BORDER_DEFAULT))?;
                let data = cv("sobel", self.sobel.data_typed::<i16>())?;
                let plane = 2 * c + dy as usize;
                for (i, (dst, g)) in self.grad.g.iter_mut().zip(data).enumerate() {
                    dst[plane] = if mask.is_some_and(|m| m[i] == 0) { 0 } else { *g };
                }
            }
        }
        // OpenCV's Canny takes the strongest channel's gradient of a colour image.
        cv("canny", imgproc::canny(&self.blurred, &mut self.edges, CANNY_LOW, CANNY_HIGH, 3, true))?;
        if !keep.empty() {
            let mut masked = Mat::default();
            cv("mask edges", opencv::core::bitwise_and_def(&self.edges, &keep, &mut masked))?;
            self.edges = masked;
        }
        Ok(())
    }

    /// Finds the board automatically.
    pub fn run(&mut self, und: &Undistorted) -> Result<BoardPose, LocateError> {
        self.last_candidate = None;
        self.prepare(und)?;
        let cam = und.camera;
        let (w, h) = (cam.image_width as f64, cam.image_height as f64);
        let mut segs: Vector<Vec4i> = Vector::new();
        let min_len = MIN_SEGMENT_FRACTION * w.min(h);
        cv("hough", imgproc::hough_lines_p(&self.edges, &mut segs, 1.0, std::f64::consts::PI / 360.0, (min_len / 2.0) as i32, min_len, 3.0))?;
        let segs: Vec<[f64; 4]> = segs.iter().map(|s| [s[0] as f64, s[1] as f64, s[2] as f64, s[3] as f64]).collect();
        let mut lines = merge_segments(&segs);
        lines.sort_by(|a, b| b.support_px.total_cmp(&a.support_px));
        if lines.len() < 3 {
            return Err(LocateError::NotFound { reason: format!("only {} straight edges in the image; the board's sides and an end or line are needed", lines.len()) });
        }
        // Score every hypothesis.
        // (score, pose, which model cross line the image line was read as)
        let mut hyps: Vec<(f64, CameraPose, usize)> = Vec::new();
        let sides = &lines[..lines.len().min(SIDE_CANDIDATES)];
        let crosses = &lines[..lines.len().min(CROSS_CANDIDATES)];
        let mut samples = std::mem::take(&mut self.samples);
        let mut tally: Vec<(usize, usize)> = Vec::new();
        for ladder in &self.model.ladders {
            for (i, a) in sides.iter().enumerate() {
                for (j, b) in sides.iter().enumerate() {
                    if i == j {
                        continue;
                    }
                    for (k, c) in crosses.iter().enumerate() {
                        if k == i || k == j || !spans_between(a, b, c) {
                            continue;
                        }
                        for (yi, &y) in ladder.cross_lines_mm.iter().enumerate() {
                            let Some(pose) = pose_from_lines(&cam, a, b, c, ladder.half_width_mm, y, ladder.z_mm) else { continue };
                            // The board normal in camera coordinates is the rotation's third column;
                            // looking down on the board it points back at the camera (-z).
                            if -pose.rotation[2][2] < MAX_TILT_DEG.to_radians().cos() {
                                continue;
                            }
                            sample_model(&self.model, &pose, &cam, SCORE_STEP_PX, &[], &mut samples);
                            if samples.is_empty() {
                                continue;
                            }
                            // The fixed features count; the construction's edges (nominal
                            // here) only where they agree, never against.
                            tally.clear();
                            tally.resize(self.model.edges.len(), (0, 0));
                            for s in &samples {
                                let hit = self.grad.search(s.p, s.n, SCORE_REACH_PX, 0.0).is_some();
                                tally[s.edge].0 += 1;
                                tally[s.edge].1 += usize::from(hit);
                            }
                            let (n, hits) = self.model.edges.iter().zip(&tally).filter(|(e, t)| e.fixed || (t.0 >= HYPOTHESIS_AGREE_SAMPLES && t.1 * 2 >= t.0)).fold((0usize, 0usize), |(n, h), (_, t)| (n + t.0, h + t.1));
                            if n == 0 {
                                continue;
                            }
                            let score = hits as f64 * hits as f64 / n as f64;
                            hyps.push((score, pose, yi));
                        }
                    }
                }
            }
        }
        self.samples = samples;
        hyps.sort_by(|a, b| b.0.total_cmp(&a.0));
        // Refine the best distinct hypotheses a batch at a time, until one passes
        // the verdict: a frame whose first hypotheses are all wrong readings (the
        // lines' score favours long straight edges off the board) gets further ones.
        let mut tried: Vec<CameraPose> = Vec::new();
        let mut refined: Vec<Refined> = Vec::new();
        for _ in 0..MAX_START_BATCHES {
            let starts = self.pick_starts(&cam, &hyps, &tried);
            if starts.is_empty() {
                break;
            }
            tried.extend(&starts);
            for p in starts {
                if let Some(r) = self.fit(&cam, Fit::start(p, &self.model), &SEARCH_SCHEDULE_PX, ITERATIONS_PER_RANGE).and_then(|f| self.verdict(&cam, f)) {
                    refined.push(r);
                }
            }
            if refined.iter().any(|r| self.check(r).is_ok()) {
                break;
            }
        }
        if tried.is_empty() {
            return Err(LocateError::NotFound { reason: "no arrangement of the straight edges fits the board's sides and cross lines".into() });
        }
        refined.sort_by(|a, b| b.score.total_cmp(&a.score));
        // Candidates that pass every check on their own compete; the rest only explain a refusal.
        let (good, bad): (Vec<Refined>, Vec<Refined>) = refined.into_iter().partition(|r| self.check(r).is_ok());
        let Some(best) = good.first() else {
            let Some(r) = bad.first() else {
                return Err(LocateError::NotFound { reason: "no hypothesis converged onto the board's edges".into() });
            };
            self.last_candidate = Some(r.pose);
            self.last_construction = r.construction.clone();
            return Err(self.check(r).expect_err("a rejected candidate fails a check"));
        };
        self.last_candidate = Some(best.pose);
        self.last_construction = best.construction.clone();
        // A different pose that also passes and scores nearly as well: refuse rather than guess.
        // A rival whose support is (nearly) a subset of the best's explains nothing
        // the best does not: a poorer fit of part of the image, not another reading.
        if let Some(second) = good.iter().skip(1).find(|r| self.image_distance(&cam, &best.pose, &r.pose) > DIFFERENT_POSE_PX) {
            let (best_only, second_only) = evidence_difference(&best.evidence, &second.evidence);
            let dominated = best_only >= DOMINANCE_MIN_SAMPLES && best_only as f64 >= DOMINANCE_FACTOR * second_only as f64;
            if !dominated && second.score >= self.cfg.ambiguity_ratio * best.score && second.fixed_score >= self.cfg.ambiguity_ratio * best.fixed_score {
                return Err(LocateError::Ambiguous {
                    best: best.score,
                    second: second.score,
                    hint: "the visible part of the board looks the same both ways round; include an end or a distinguishing line".into(),
                });
            }
        }
        let best = good.into_iter().next().expect("checked above");
        Ok(self.board_pose(best))
    }

    /// The next batch of hypotheses to refine: the best-scoring ones that are
    /// distinct from each other and from those `tried`, a few for every reading
    /// of the cross line first (the best overall score alone can favour a board
    /// read back to front: fewer model edges in view, all matched).
    fn pick_starts(&self, cam: &Camera, hyps: &[(f64, CameraPose, usize)], tried: &[CameraPose]) -> Vec<CameraPose> {
        let mut starts: Vec<CameraPose> = Vec::new();
        let mut per_reading = vec![0usize; self.model.ladders.iter().map(|l| l.cross_lines_mm.len()).max().unwrap_or(0)];
        for pass in 0..2 {
            for (_, p, yi) in hyps {
                if starts.len() >= STARTS_PER_BATCH {
                    break;
                }
                if pass == 0 && per_reading[*yi] >= STARTS_PER_READING {
                    continue;
                }
                if starts.iter().chain(tried).all(|q| self.image_distance(cam, p, q) > SAME_POSE_PX) {
                    starts.push(*p);
                    per_reading[*yi] += 1;
                }
            }
        }
        starts
    }

    /// Largest image distance between where two poses put the surface points
    /// that the first pose sees, px (infinite if it sees none), in the image
    /// of the distortion-free camera `cam`.
    pub fn image_distance(&self, cam: &Camera, a: &CameraPose, b: &CameraPose) -> f64 {
        let (w, h) = (cam.image_width as f64, cam.image_height as f64);
        let mut worst = f64::NEG_INFINITY;
        for p in &self.probe_points {
            let Some(pa) = project(cam, a.to_camera(BoardPoint3::new(p[0], p[1], p[2]))) else { continue };
            if !(pa[0] >= 0.0 && pa[1] >= 0.0 && pa[0] < w && pa[1] < h) {
                continue;
            }
            let d = project(cam, b.to_camera(BoardPoint3::new(p[0], p[1], p[2]))).map_or(f64::INFINITY, |pb| (pa[0] - pb[0]).hypot(pa[1] - pb[1]));
            worst = worst.max(d);
        }
        if worst == f64::NEG_INFINITY {
            f64::INFINITY
        } else {
            worst
        }
    }

    /// The stage's output for an accepted refinement.
    fn board_pose(&self, best: Refined) -> BoardPose {
        BoardPose {
            board: self.board_name.clone(),
            pose: best.pose,
            method: LocateMethod::Automatic,
            reprojection_rms_px: best.rms_px,
            coverage: best.coverage,
            position_sigma_mm: best.sigma_mm,
            features: best.features,
        }
    }

    /// Refines `start` against this image's edges and measures the fit, with
    /// no verdict: for comparing trial cameras (`crate::setup`), where a poor
    /// trial must still be measured. `None` if the refinement loses the board.
    pub fn edge_fit(&mut self, und: &Undistorted, start: CameraPose) -> Result<Option<EdgeFit>, LocateError> {
        self.prepare(und)?;
        let cam = und.camera;
        Ok(self.refine(&cam, start).map(|r| {
            let (samples, inliers, inlier_ss) = r.features.iter().fold((0usize, 0usize, 0.0f64), |(s, i, ss), f| {
                (s + f.samples, i + f.inliers, ss + if f.inliers > 0 { f.inliers as f64 * f.rms_px * f.rms_px } else { 0.0 })
            });
            let edges = r.features.iter().filter(|f| f.inliers > 0).count();
            EdgeFit { pose: r.pose, samples, inliers, edges, truncated_cost_px2: inlier_ss + (samples - inliers) as f64 * INLIER_PX * INLIER_PX }
        }))
    }

    /// Refines a known approximate pose (e.g. the previous frame's, or one from
    /// `--points`) against this image's edges and applies the same verdict.
    pub fn refine_from(&mut self, und: &Undistorted, start: CameraPose) -> Result<BoardPose, LocateError> {
        self.prepare(und)?;
        let cam = und.camera;
        let Some(best) = self.refine(&cam, start) else {
            return Err(LocateError::GivenPoseRejected { reason: "the board's edges are not near where it puts them".into() });
        };
        self.last_candidate = Some(best.pose);
        self.last_construction = best.construction.clone();
        // The given pose was what failed, not a search: say so, with what disagreed.
        self.check(&best).map_err(|e| match e {
            LocateError::NotFound { reason } | LocateError::PoorFit { reason } => LocateError::GivenPoseRejected { reason },
            other => other,
        })?;
        Ok(self.board_pose(best))
    }

    /// The undistorted image with the model projected by `pose`: green where an
    /// image edge confirms the model (within the inlier distance), red where not.
    pub fn overlay(&mut self, und: &Undistorted, pose: &CameraPose) -> Result<Mat, LocateError> {
        self.prepare(und)?;
        let mut img = und.image.clone();
        let mut samples = std::mem::take(&mut self.samples);
        let cons = self.last_construction.clone();
        sample_model(&self.model, pose, &und.camera, 2.0, &cons, &mut samples);
        for s in &samples {
            let ok = self.grad.search(s.p, s.n, INLIER_PX * 2.0, 0.0).is_some_and(|(o, _)| o.abs() <= INLIER_PX);
            let colour = if ok { opencv::core::Scalar::new(0.0, 255.0, 0.0, 0.0) } else { opencv::core::Scalar::new(0.0, 0.0, 255.0, 0.0) };
            let c = opencv::core::Point::new(s.p[0].round() as i32, s.p[1].round() as i32);
            cv("overlay", imgproc::circle(&mut img, c, 1, colour, -1, imgproc::LINE_8, 0))?;
        }
        self.samples = samples;
        Ok(img)
    }

    /// The first `y` in the model's clear spans where the image shows a straight
    /// edge right across the visible surface.
    fn phantom_line(&self, cam: &Camera, pose: &CameraPose) -> Option<f64> {
        // Rows this far apart on the board, samples this far apart in the image.
        const ROW_STEP_MM: f64 = 2.0;
        const SAMPLE_STEP_PX: f64 = 4.0;
        // A painted line shows along most of its length; pieces cover at most a
        // few tenths of a row.
        const MIN_ROW_FRACTION: f64 = 0.6;
        const MIN_ROW_SAMPLES: usize = 20;
        // Rows stay clear of the side edges and walls.
        const SIDE_CLEARANCE_MM: f64 = 20.0;
        let (w, h) = (cam.image_width as f64, cam.image_height as f64);
        let hw = self.model.ladders.first().map_or(0.0, |l| l.half_width_mm) - SIDE_CLEARANCE_MM;
        if hw <= 0.0 {
            return None;
        }
        for &(y0, y1) in &self.model.clear_spans_mm {
            let mut y = y0;
            while y <= y1 {
                let (a, b) = (pose.to_camera(BoardPoint3::new(-hw, y, 0.0)), pose.to_camera(BoardPoint3::new(hw, y, 0.0)));
                if let (Some(pa), Some(pb)) = (project(cam, a), project(cam, b)) {
                    let len = (pb[0] - pa[0]).hypot(pb[1] - pa[1]);
                    let n = (len / SAMPLE_STEP_PX).floor() as usize;
                    let (mut seen, mut hits) = (0usize, 0usize);
                    for i in 0..=n {
                        let x = -hw + 2.0 * hw * i as f64 / n.max(1) as f64;
                        let Some(p) = project(cam, pose.to_camera(BoardPoint3::new(x, y, 0.0))) else { continue };
                        if !inside(p, w, h) {
                            continue;
                        }
                        let Some(q) = project(cam, pose.to_camera(BoardPoint3::new(x, y + 1.0, 0.0))) else { continue };
                        let d = [q[0] - p[0], q[1] - p[1]];
                        let l = d[0].hypot(d[1]);
                        if l < 1e-9 {
                            continue;
                        }
                        seen += 1;
                        if self.grad.search(p, [d[0] / l, d[1] / l], 1.0, 0.0).is_some() {
                            hits += 1;
                        }
                    }
                    if seen >= MIN_ROW_SAMPLES && hits as f64 >= MIN_ROW_FRACTION * seen as f64 {
                        return Some(y);
                    }
                }
                y += ROW_STEP_MM;
            }
        }
        None
    }

    /// Share of the surface's long sides in view where the surface is what lies
    /// just inside the edge. The rules fix the surface and where it ends; around it
    /// each maker builds differently (gutters, rails, walls), and those outlines run
    /// parallel to the sides. A pose caught on one of them has a band of gutter,
    /// rail or wall just inside its "side" instead of the surface further in.
    /// Each sample compares the colour [`STRIP_PX`] inside and outside the edge
    /// with the surface's colour [`INTERIOR_MM`] further in: the inside must be the
    /// nearer. `None` when the sides are not seen at length.
    fn surface_inside_share(&self, cam: &Camera, pose: &CameraPose) -> Option<f64> {
        // Just off the edge, past its blur.
        const STRIP_PX: f64 = 3.0 * BLUR_SIGMA_PX;
        // Far enough in to be past any gutter, rail or wall band a wrong pose could
        // take for the edge, near enough to share its light; less than a quarter of
        // the narrowest board.
        const INTERIOR_MM: f64 = 60.0;
        const MIN_SAMPLES: usize = 20;
        let Some(ladder) = self.model.ladders.first() else { return None };
        let hw = ladder.half_width_mm;
        let (w, h) = (cam.image_width as f64, cam.image_height as f64);
        let len = self.model.key_points.iter().map(|(_, p)| p.y_mm).fold(0.0f64, f64::max);
        let colour = |p: [f64; 2]| -> Option<[f64; 3]> {
            if !inside(p, w, h) {
                return None;
            }
            let v = self.blurred.at_2d::<opencv::core::Vec3b>(p[1].round() as i32, p[0].round() as i32).ok()?;
            Some([v[0] as f64, v[1] as f64, v[2] as f64])
        };
        let dist = |a: [f64; 3], b: [f64; 3]| ((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2) + (a[2] - b[2]).powi(2)).sqrt();
        let (mut seen, mut inside_nearer) = (0usize, 0usize);
        let rows = (len / PROBE_SPACING_MM * 4.0).ceil().max(1.0) as usize;
        for sign in [1.0, -1.0] {
            for i in 0..=rows {
                let y = len * i as f64 / rows as f64;
                let edge = project(cam, pose.to_camera(BoardPoint3::new(sign * hw, y, 0.0)));
                let far = project(cam, pose.to_camera(BoardPoint3::new(sign * (hw - INTERIOR_MM), y, 0.0)));
                let (Some(e), Some(f)) = (edge, far) else { continue };
                let d = [f[0] - e[0], f[1] - e[1]];
                let l = d[0].hypot(d[1]);
                if l < 2.0 * STRIP_PX {
                    continue;
                }
                let n = [d[0] / l, d[1] / l];
                let at = |k: f64| colour([e[0] + k * n[0], e[1] + k * n[1]]);
                let (Some(cin), Some(cout), Some(cfar)) = (at(STRIP_PX), at(-STRIP_PX), colour(f)) else { continue };
                seen += 1;
                inside_nearer += usize::from(dist(cin, cfar) < dist(cout, cfar));
            }
        }
        (seen >= MIN_SAMPLES).then(|| inside_nearer as f64 / seen as f64)
    }

    /// The checks a pose must pass on its own.
    fn check(&self, best: &Refined) -> Result<(), LocateError> {
        let cfg = &self.cfg;
        if -best.pose.rotation[2][2] < MAX_TILT_DEG.to_radians().cos() {
            return Err(LocateError::NotFound { reason: format!("the best fit sees the board edge-on (more than {MAX_TILT_DEG} degrees from overhead)") });
        }
        if best.inliers < cfg.min_inliers || best.coverage < cfg.min_coverage {
            return Err(LocateError::NotFound {
                reason: format!(
                    "the best fit matches {:.0} % of the visible board edges ({} samples; needs {:.0} % and {})",
                    best.coverage * 100.0,
                    best.inliers,
                    cfg.min_coverage * 100.0,
                    cfg.min_inliers
                ),
            });
        }
        if let Some(why) = &best.unconfirmed {
            return Err(LocateError::NotFound { reason: format!("the board's outline fits but {why} (absent, hidden, or the pose is wrong)") });
        }
        if let Some(y) = best.phantom_line_mm {
            return Err(LocateError::NotFound {
                reason: format!("the best fit leaves a straight line across the board unexplained (at y = {y:.0} mm, where the board has none)"),
            });
        }
        if best.rms_px > cfg.max_rms_px {
            return Err(LocateError::PoorFit { reason: format!("edge residual {:.2} px RMS exceeds {:.2} px", best.rms_px, cfg.max_rms_px) });
        }
        if !(best.sigma_mm <= cfg.max_position_sigma_mm) {
            return Err(LocateError::PoorFit {
                reason: format!(
                    "the visible features leave board points uncertain by {:.1} mm (limit {:.1} mm): too little of the board is in view",
                    best.sigma_mm, cfg.max_position_sigma_mm
                ),
            });
        }
        Ok(())
    }

    /// Moving-edges refinement from `start` over the whole schedule, then the
    /// verdict's measurements; `None` if it loses the board.
    fn refine(&mut self, cam: &Camera, start: CameraPose) -> Option<Refined> {
        let fit = self.fit(cam, Fit::start(start, &self.model), &SEARCH_SCHEDULE_PX, ITERATIONS_PER_RANGE)?;
        self.verdict(cam, fit)
    }

    /// Moving-edges refinement of `fit` through the search ranges `schedule`
    /// (px, widest first), at most `iterations` steps per range; `None` if it
    /// loses the board. Edge polarities are learned after the first range of a
    /// fit that has not learned them yet.
    fn fit(&mut self, cam: &Camera, mut fit: Fit, schedule: &[f64], iterations: usize) -> Option<Fit> {
        let n_edges = self.model.edges.len();
        let mut samples = std::mem::take(&mut self.samples);
        let mut found: Vec<Option<(f64, f32)>> = Vec::new();
        // The construction's dimensions (mm off nominal) are fitted with the pose:
        // at a wrong nominal size its edges would pull the pose by the difference.
        let params = &self.model.params;
        let Fit { pose, cons, polarity, polarity_learned } = &mut fit;
        for &range in schedule {
            let step_px = if range >= COARSE_RANGE_PX { COARSE_REFINE_STEP_PX } else { REFINE_STEP_PX };
            for _ in 0..iterations {
                sample_model(&self.model, pose, cam, step_px, cons, &mut samples);
                found.clear();
                found.extend(samples.iter().map(|s| self.grad.search(s.p, s.n, range, polarity[s.edge])));
                let Some(step) = gauss_newton_step(cam, &self.model, pose, &samples, &found, range, cons) else {
                    self.samples = samples;
                    return None;
                };
                *pose = perturbed(pose, &step.delta);
                let mut cons_moved = 0.0f64;
                for (i, (c, p)) in cons.iter_mut().zip(params).enumerate() {
                    let next = (*c + step.cons[i]).clamp(p.min_mm - p.nominal_mm, p.max_mm - p.nominal_mm);
                    cons_moved = cons_moved.max((next - *c).abs());
                    *c = next;
                }
                let moved = step.delta[..3].iter().map(|v| v * v).sum::<f64>().sqrt() * 1000.0 + step.delta[3..].iter().map(|v| v * v).sum::<f64>().sqrt();
                if moved < 1e-3 && cons_moved < 1e-3 {
                    break;
                }
            }
            if !*polarity_learned {
                *polarity_learned = true;
                // Learn each edge's polarity from its matches (a dark stripe's two
                // edges have opposite signs, a hole is darker than the wood, ...).
                let mut sum = vec![(0.0f64, 0usize); n_edges];
                for (s, f) in samples.iter().zip(&found) {
                    if let Some((off, g)) = f {
                        if off.abs() <= range {
                            sum[s.edge].0 += g.signum() as f64;
                            sum[s.edge].1 += 1;
                        }
                    }
                }
                for (e, (s, c)) in sum.iter().enumerate() {
                    if *c > 0 && s.abs() > 0.5 * *c as f64 {
                        polarity[e] = s.signum() as f32;
                    }
                }
            }
        }
        self.samples = samples;
        Some(fit)
    }

    /// The verdict's measurements at a fitted pose: coverage, inliers, sigma,
    /// per-feature fits and whether the ends are told apart.
    fn verdict(&mut self, cam: &Camera, fit: Fit) -> Option<Refined> {
        let n_edges = self.model.edges.len();
        let params = &self.model.params;
        let Fit { pose, cons, polarity, .. } = fit;
        let mut samples = std::mem::take(&mut self.samples);
        // The verdict's measurements at the final pose, over the fixed features.
        sample_model(&self.model, &pose, cam, REFINE_STEP_PX, &cons, &mut samples);
        // Samples on a face seen edge-on are left out: there the face's two edges
        // are one in the image, and either may be the one found ([`MIN_FACE_PX`]).
        samples.retain(|s| !on_edge_on_face(&self.model.edges[s.edge], &pose, cam, s));
        let total = samples.iter().filter(|s| self.model.edges[s.edge].fixed).count();
        let mut per: Vec<(usize, usize, f64)> = vec![(0, 0, 0.0); n_edges];
        // (samples, inliers) of the identifying edges that can tell: not on a face seen edge-on.
        let mut per_id: Vec<(usize, usize)> = vec![(0, 0); n_edges];
        let (mut inl, mut ss) = (0usize, 0.0f64);
        let mut evidence = Vec::new();
        // The information of every inlier (construction edges too: fitted, they
        // constrain the pose as much as their dimensions leave free).
        let unknowns = 6 + params.len();
        let mut jtj = [[0.0f64; MAX_UNKNOWNS]; MAX_UNKNOWNS];
        // The information of the rules-fixed identifying features alone (lines, holes,
        // gate openings): whether they pin the pose without the outline.
        let mut jtj_id = [[0.0f64; 6]; 6];
        for s in &samples {
            per[s.edge].0 += 1;
            let edge = &self.model.edges[s.edge];
            let judged = edge.identifying;
            per_id[s.edge].0 += usize::from(judged);
            let Some((off, _)) = self.grad.search(s.p, s.n, INLIER_PX * 2.0, polarity[s.edge]) else { continue };
            if off.abs() > INLIER_PX {
                continue;
            }
            per_id[s.edge].1 += usize::from(judged);
            evidence.push([s.p[0] + off * s.n[0], s.p[1] + off * s.n[1]]);
            per[s.edge].1 += 1;
            per[s.edge].2 += off * off;
            if edge.fixed {
                inl += 1;
                ss += off * off;
            }
            let j = normal_jacobian(cam, &self.model, &pose, s);
            for a in 0..unknowns {
                for b in 0..unknowns {
                    jtj[a][b] += j[a] * j[b];
                }
            }
            if edge.fixed && edge.identifying {
                for a in 0..6 {
                    for b in 0..6 {
                        jtj_id[a][b] += j[a] * j[b];
                    }
                }
            }
        }
        for (i, p) in params.iter().enumerate() {
            jtj[6 + i][6 + i] += 1.0 / p.prior_sigma_mm().powi(2);
        }
        if total == 0 || inl < 6 {
            self.samples = samples;
            return None;
        }
        let rms = (ss / inl as f64).sqrt();
        // Construction edges count where they agree (seen at length and confirmed),
        // never against: another maker's build is no evidence against the pose.
        let (agree_samples, agree_inliers) = self
            .model
            .edges
            .iter()
            .zip(&per)
            .filter(|(e, p)| !e.fixed && p.0 >= SEEN_AT_LENGTH && p.1 as f64 >= CONFIRMED_COVERAGE * p.0 as f64)
            .fold((0usize, 0usize), |(s, i), (_, p)| (s + p.0, i + p.1));
        let coverage = (inl + agree_inliers) as f64 / (total + agree_samples) as f64;
        samples.retain(|s| self.model.edges[s.edge].fixed);
        let sigma_mm = match marginal_pose_information(&jtj, params.len()) {
            Some(info) => position_sigma(cam, &pose, &info, rms.max(0.05), &samples),
            None => f64::INFINITY,
        };
        let identifying_sigma_mm = position_sigma(cam, &pose, &jtj_id, rms.max(0.05), &samples);
        self.samples = samples;
        let features = self
            .model
            .edges
            .iter()
            .zip(&per)
            .filter(|(_, p)| p.0 > 0)
            .map(|(e, p)| FeatureFit {
                feature: e.name.clone(),
                samples: p.0,
                inliers: p.1,
                rms_px: if p.1 > 0 { (p.2 / p.1 as f64).sqrt() } else { f64::NAN },
                fixed: e.fixed,
            })
            .collect();
        let phantom_line_mm = self.phantom_line(cam, &pose);
        // The identifying features must be seen over a fair stretch and mostly
        // match, and nearly every one seen at length must be confirmed: a wrong
        // pose can still fit the long outline and a few gate-bar edges, never all.
        // (Samples on a face seen edge-on are left out: [`MIN_FACE_PX`].)
        const MIN_IDENTIFYING_INLIERS: usize = 15;
        const MIN_IDENTIFYING_COVERAGE: f64 = 0.5;
        const SEEN_AT_LENGTH: usize = 20;
        const CONFIRMED_COVERAGE: f64 = 0.3;
        const MIN_CONFIRMED_SHARE: f64 = 0.75;
        // A construction edge (at its nominal size) helps where it agrees and is
        // left out where it does not: another maker's build must not veto.
        // A foot of an upright face (a partition's, the gate bar's) may lie in its
        // face's own shadow, dark on dark: it counts in the coverage, and is not
        // one of the features that must each confirm.
        let foot = |e: &ModelEdge| e.face_across_mm.is_some_and(|d| d[2] > 0.0);
        let ids: Vec<(&ModelEdge, &(usize, usize))> = self
            .model
            .edges
            .iter()
            .zip(&per_id)
            .filter(|(e, p)| e.identifying && (e.fixed || (p.0 >= SEEN_AT_LENGTH && p.1 as f64 >= CONFIRMED_COVERAGE * p.0 as f64)))
            .collect();
        let (id_samples, id_inliers) = ids.iter().fold((0usize, 0usize), |(s, i), (_, p)| (s + p.0, i + p.1));
        let long: Vec<_> = ids.iter().filter(|(e, p)| p.0 >= SEEN_AT_LENGTH && !foot(e)).map(|(_, p)| p).collect();
        let confirmed = long.iter().filter(|p| p.1 as f64 >= CONFIRMED_COVERAGE * p.0 as f64).count();
        // The surface's own outline is the strongest feature in view: each side or
        // end seen at length must show (a pose stretched along the board fits the
        // sides and the lines near one end, never an end edge where there is none),
        // unless the lines, holes and openings alone pin the pose as tightly as the
        // verdict asks of the whole fit (a pale board's end on a pale floor shows no
        // edge, and its holes still leave no doubt).
        // (The foot of a wall may lie in the wall's own shadow: not required.)
        let unshown_outline = self
            .model
            .edges
            .iter()
            .zip(&per)
            .filter(|(e, p)| e.fixed && !e.identifying && e.face_across_mm.is_none() && p.0 >= SEEN_AT_LENGTH)
            .find(|(_, p)| (p.1 as f64) < CONFIRMED_COVERAGE * p.0 as f64);
        const MIN_SURFACE_INSIDE: f64 = 0.6;
        // A dimension of an identifying feature (a partition's or the gate bar's
        // height) that the fit drove to the end of the range real tables span is
        // using its freedom to explain something else (a pose shifted by a
        // compartment, wall tops read as the sides): the fit is not confirmed. (A
        // dimension no identifying edge shows, such as a gutter's unseen depth, may
        // drift to its range end harmlessly.)
        const PINNED_MM: f64 = 0.5;
        let pinned = params.iter().zip(&cons).enumerate().find(|(i, (p, c))| {
            let v = p.nominal_mm + **c;
            let identifying = self.model.edges.iter().any(|e| e.identifying && e.moves.iter().any(|m| m.param == *i));
            identifying && p.max_mm > p.min_mm + 2.0 * PINNED_MM && (v <= p.min_mm + PINNED_MM || v >= p.max_mm - PINNED_MM)
        }).map(|(_, pc)| pc);
        let surface_share = self.surface_inside_share(cam, &pose);
        let unconfirmed = if let Some((p, c)) = pinned {
            Some(format!("its {} fits only at the end of the range tables span ({:.1} mm, range {:.0}-{:.0} mm)", p.name, p.nominal_mm + c, p.min_mm, p.max_mm))
        } else if let Some(share) = surface_share.filter(|s| *s < MIN_SURFACE_INSIDE) {
            Some(format!("only {:.0} % of the surface inside the fitted outline looks like the playing surface (needs {:.0} %)", share * 100.0, MIN_SURFACE_INSIDE * 100.0))
        } else if id_inliers < MIN_IDENTIFYING_INLIERS {
            Some(format!("its lines, holes or gate bar are not in view where the fit puts them ({id_inliers} edge samples confirm; needs {MIN_IDENTIFYING_INLIERS})"))
        } else if (id_inliers as f64) < MIN_IDENTIFYING_COVERAGE * id_samples as f64 {
            Some(format!(
                "only {:.0} % of its lines', holes' and gate bar's edge samples confirm (needs {:.0} %)",
                100.0 * id_inliers as f64 / id_samples.max(1) as f64,
                MIN_IDENTIFYING_COVERAGE * 100.0
            ))
        } else if (confirmed as f64) < MIN_CONFIRMED_SHARE * long.len() as f64 {
            let missing: Vec<&str> = ids.iter().filter(|(e, p)| p.0 >= SEEN_AT_LENGTH && !foot(e) && (p.1 as f64) < CONFIRMED_COVERAGE * p.0 as f64).map(|(e, _)| e.name.as_str()).take(3).collect();
            Some(format!("only {confirmed} of the {} lines, holes and gate-bar edges in view confirm (not: {})", long.len(), missing.join(", ")))
        } else if let Some((e, p)) = unshown_outline.filter(|_| !(identifying_sigma_mm <= self.cfg.max_position_sigma_mm)) {
            Some(format!("the {} shows no edge where the fit puts it ({} of {} samples) and the lines and holes alone do not pin the pose", e.name, p.1, p.0))
        } else {
            None
        };
        Some(Refined { pose, construction: cons, fixed_score: inl as f64 * inl as f64 / total as f64, score: inl as f64 * coverage, coverage, rms_px: rms, inliers: inl, sigma_mm, features, phantom_line_mm, unconfirmed, evidence })
    }
}

/// Whether sample `s` of edge `e` lies on an upright face seen edge-on: one
/// narrower in the image than [`MIN_FACE_PX`] at the sample.
fn on_edge_on_face(e: &ModelEdge, pose: &CameraPose, cam: &Camera, s: &Sample) -> bool {
    let Some(across) = e.face_across_mm else { return false };
    // Back to board coordinates, then across the face and into the image again.
    let r = pose.rotation;
    let d = sub3(s.xc, pose.translation);
    let x = [0, 1, 2].map(|j| r[0][j] * d[0] + r[1][j] * d[1] + r[2][j] * d[2]);
    let far = BoardPoint3::new(x[0] + across[0], x[1] + across[1], x[2] + across[2]);
    project(cam, pose.to_camera(far)).is_some_and(|q| (s.n[0] * (q[0] - s.p[0]) + s.n[1] * (q[1] - s.p[1])).abs() < MIN_FACE_PX)
}

/// `d r / d (pose, construction)` of a sample's normal residual `r = n . (q - p)`,
/// as `n . dp/d(...)`: six pose columns, then one per construction parameter.
fn normal_jacobian(cam: &Camera, model: &BoardModel, pose: &CameraPose, s: &Sample) -> [f64; MAX_UNKNOWNS] {
    let jp = projection_jacobian(cam, s.xc);
    let mut j = [0.0; MAX_UNKNOWNS];
    for k in 0..6 {
        j[k] = s.n[0] * jp[0][k] + s.n[1] * jp[1][k];
    }
    let (iz, x, r) = (1.0 / s.xc[2], s.xc, pose.rotation);
    for m in &model.edges[s.edge].moves {
        // The board-frame motion of this point per mm, into the camera frame, then the image.
        let v: [f64; 3] = [0, 1, 2].map(|i| m.a[i] + s.t * (m.b[i] - m.a[i]));
        let vc: [f64; 3] = [0, 1, 2].map(|i| dot3(r[i], v));
        let du = cam.fx * (vc[0] * iz - x[0] * vc[2] * iz * iz);
        let dv = cam.fy * (vc[1] * iz - x[1] * vc[2] * iz * iz);
        j[6 + m.param] += s.n[0] * du + s.n[1] * dv;
    }
    j
}

struct Step {
    delta: [f64; 6],
    /// Change of each construction parameter, mm.
    cons: [f64; MAX_PARAMS],
}

/// One robust Gauss-Newton step on the normal residuals, for the pose and the
/// construction parameters (`cons`: their current offsets from nominal, held
/// there by each parameter's prior).
fn gauss_newton_step(cam: &Camera, model: &BoardModel, pose: &CameraPose, samples: &[Sample], found: &[Option<(f64, f32)>], range: f64, cons: &[f64]) -> Option<Step> {
    let residuals: Vec<f64> = found.iter().flatten().map(|f| f.0).collect();
    if residuals.len() < 12 {
        return None;
    }
    let mut abs: Vec<f64> = residuals.iter().map(|r| r.abs()).collect();
    abs.sort_by(f64::total_cmp);
    let mad = abs[abs.len() / 2] * 1.4826;
    let c = (TUKEY_C * mad).max(TUKEY_C * MIN_ROBUST_SCALE_PX).max(MIN_ROBUST_SCALE_OF_RANGE * range).min(range);
    let n = 6 + model.params.len();
    let mut a = vec![vec![0.0f64; n]; n];
    let mut g = vec![0.0f64; n];
    for (s, f) in samples.iter().zip(found) {
        let Some((r, _)) = f else { continue };
        let u = r / c;
        if u.abs() >= 1.0 {
            continue;
        }
        let w = (1.0 - u * u) * (1.0 - u * u);
        let j = normal_jacobian(cam, model, pose, s);
        for p in 0..n {
            g[p] += w * j[p] * r;
            for q in 0..n {
                a[p][q] += w * j[p] * j[q];
            }
        }
    }
    // Each construction parameter's prior pulls it back towards nominal.
    for (i, p) in model.params.iter().enumerate() {
        let inv_var = 1.0 / p.prior_sigma_mm().powi(2);
        a[6 + i][6 + i] += inv_var;
        g[6 + i] -= inv_var * cons.get(i).copied().unwrap_or(0.0);
    }
    // A touch of damping keeps unconstrained directions (e.g. along a lone pair
    // of sides) still: relative to each parameter's own curvature ([`RELATIVE_DAMPING`]).
    for (i, row) in a.iter_mut().enumerate() {
        row[i] *= 1.0 + RELATIVE_DAMPING;
    }
    let am = Mat::from_slice_2d(&a).ok()?;
    let gm = Mat::from_slice_2d(&[g]).ok()?.t().ok()?.to_mat().ok()?;
    let mut x = Mat::default();
    if !opencv::core::solve(&am, &gm, &mut x, opencv::core::DECOMP_SVD).ok()? {
        return None;
    }
    let mut step = Step { delta: [0.0; 6], cons: [0.0; MAX_PARAMS] };
    for i in 0..n {
        let v = *x.at_2d::<f64>(i as i32, 0).ok()?;
        if !v.is_finite() {
            return None;
        }
        if i < 6 {
            step.delta[i] = v;
        } else {
            step.cons[i - 6] = v;
        }
    }
    Some(step)
}

/// The pose's information with the construction parameters marginalised out
/// (the Schur complement `A_pp - A_pc A_cc^-1 A_cp` of the fit's `J^T J`): what
/// the edges say of the pose whatever the construction's dimensions.
fn marginal_pose_information(jtj: &[[f64; MAX_UNKNOWNS]; MAX_UNKNOWNS], k: usize) -> Option<[[f64; 6]; 6]> {
    let mut info = [[0.0f64; 6]; 6];
    for i in 0..6 {
        info[i][..6].copy_from_slice(&jtj[i][..6]);
    }
    if k == 0 {
        return Some(info);
    }
    let acc: Vec<Vec<f64>> = (0..k).map(|i| jtj[6 + i][6..6 + k].to_vec()).collect();
    let mut inv = Mat::default();
    let am = Mat::from_slice_2d(&acc).ok()?;
    opencv::core::invert(&am, &mut inv, opencv::core::DECOMP_SVD).ok()?;
    for i in 0..6 {
        for j in 0..6 {
            let mut v = 0.0;
            for p in 0..k {
                for q in 0..k {
                    v += jtj[i][6 + p] * inv.at_2d::<f64>(p as i32, q as i32).copied().ok()? * jtj[6 + q][j];
                }
            }
            info[i][j] -= v;
        }
    }
    Some(info)
}

/// The largest predicted standard error (mm, in the board plane) of the visible
/// model points, from the pose covariance `sigma^2 (J^T J)^-1`.
fn position_sigma(cam: &Camera, pose: &CameraPose, jtj: &[[f64; 6]; 6], sigma_px: f64, samples: &[Sample]) -> f64 {
    // Rotations (px per radian) and translations (px per mm) differ by ~1e6:
    // equilibrate before judging the conditioning.
    let d: Vec<f64> = (0..6).map(|i| jtj[i][i].max(1e-300).sqrt()).collect();
    let mut scaled = [[0.0f64; 6]; 6];
    for i in 0..6 {
        for j in 0..6 {
            scaled[i][j] = jtj[i][j] / (d[i] * d[j]);
        }
    }
    let Ok(am) = Mat::from_slice_2d(&scaled) else { return f64::INFINITY };
    let mut inv = Mat::default();
    let Ok(rcond) = opencv::core::invert(&am, &mut inv, opencv::core::DECOMP_SVD) else { return f64::INFINITY };
    // `invert` returns the inverse condition number for SVD; below this the
    // features leave a direction of motion unconstrained.
    const MIN_RCOND: f64 = 1e-10;
    if !(rcond > MIN_RCOND) {
        return f64::INFINITY;
    }
    let mut cov = [[0.0f64; 6]; 6];
    for (i, row) in cov.iter_mut().enumerate() {
        for (j, v) in row.iter_mut().enumerate() {
            *v = inv.at_2d::<f64>(i as i32, j as i32).copied().unwrap_or(f64::NAN) / (d[i] * d[j]) * sigma_px * sigma_px;
        }
    }
    let step = (samples.len() / 200).max(1);
    let mut worst = 0.0f64;
    for s in samples.iter().step_by(step) {
        let jp = projection_jacobian(cam, s.xc);
        // Image covariance of this point.
        let mut c = [[0.0f64; 2]; 2];
        for a in 0..2 {
            for b in 0..2 {
                c[a][b] = (0..6).map(|p| (0..6).map(|q| jp[a][p] * cov[p][q] * jp[b][q]).sum::<f64>()).sum();
            }
        }
        // The board-plane Jacobian d p / d (x, y) at this point: columns R e_x, R e_y through dp/dX.
        let r = pose.rotation;
        let (iz, x) = (1.0 / s.xc[2], s.xc);
        let dp = |col: usize| {
            let d = [r[0][col], r[1][col], r[2][col]];
            [cam.fx * (d[0] * iz - x[0] * d[2] * iz * iz), cam.fy * (d[1] * iz - x[1] * d[2] * iz * iz)]
        };
        let (ax, ay) = (dp(0), dp(1));
        let det = ax[0] * ay[1] - ay[0] * ax[1];
        if det.abs() < 1e-12 {
            continue;
        }
        // M = A^-1 maps image offsets to board offsets.
        let m = [[ay[1] / det, -ay[0] / det], [-ax[1] / det, ax[0] / det]];
        let mut b = [[0.0f64; 2]; 2];
        for i in 0..2 {
            for j in 0..2 {
                b[i][j] = (0..2).map(|k| (0..2).map(|l| m[i][k] * c[k][l] * m[j][l]).sum::<f64>()).sum();
            }
        }
        let tr = b[0][0] + b[1][1];
        let det_b = b[0][0] * b[1][1] - b[0][1] * b[1][0];
        let lmax = 0.5 * tr + (0.25 * tr * tr - det_b).max(0.0).sqrt();
        worst = worst.max(lmax.max(0.0).sqrt());
    }
    worst
}

// ---------------------------------------------------------------------------
// Manual points.

/// A known board point and where it is in the raw (distorted) frame.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Correspondence {
    pub board: BoardPoint3,
    pub pixel: PixelPoint,
}

/// The most points a points file may hold: they are typed or clicked by hand (4 to a few dozen).
pub const MAX_POINTS: usize = 1000;
/// The largest coordinate (board mm) or pixel position in a points file: 100 m, or a 100k-pixel image.
pub const MAX_POINT_VALUE: f64 = 100_000.0;

/// Reads a points file: one point per line, `x_mm, y_mm, u, v` (a point on the
/// surface) or `x_mm, y_mm, z_mm, u, v`, separated by commas or whitespace;
/// `#` starts a comment; a first line that is not numbers is a header. Pixels
/// are in the raw frame, OpenCV's convention (pixel centres at integers).
pub fn read_points(path: &Path) -> Result<Vec<Correspondence>, LocateError> {
    let text = std::fs::read_to_string(path).map_err(|source| LocateError::PointsIo { path: path.to_path_buf(), source })?;
    let mut out = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = raw.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let fields: Vec<&str> = line.split(|c: char| c == ',' || c.is_whitespace()).filter(|s| !s.is_empty()).collect();
        let nums: Result<Vec<f64>, _> = fields.iter().map(|f| f.parse::<f64>()).collect();
        let bad = |problem: String| LocateError::PointsFile { path: path.to_path_buf(), line: i + 1, problem };
        let nums = match nums {
            Ok(n) => n,
            Err(_) if out.is_empty() && fields.iter().all(|f| f.parse::<f64>().is_err()) => continue,
            Err(_) => return Err(bad(format!("`{line}` is not numbers"))),
        };
        if nums.iter().any(|v| !v.is_finite() || v.abs() > MAX_POINT_VALUE) {
            return Err(bad(format!("values must be finite and within {MAX_POINT_VALUE} (mm or pixels)")));
        }
        if out.len() == MAX_POINTS {
            return Err(bad(format!("more than {MAX_POINTS} points: typed points are a handful")));
        }
        let c = match nums.as_slice() {
            [x, y, u, v] => Correspondence { board: BoardPoint3::new(*x, *y, 0.0), pixel: PixelPoint::new(*u, *v) },
            [x, y, z, u, v] => Correspondence { board: BoardPoint3::new(*x, *y, *z), pixel: PixelPoint::new(*u, *v) },
            _ => return Err(bad(format!("expected `x_mm, y_mm, u, v` or `x_mm, y_mm, z_mm, u, v`, got {} values", nums.len()))),
        };
        out.push(c);
    }
    Ok(out)
}

/// The pose from four or more hand-picked correspondences (raw frame pixels,
/// through the camera's distortion): OpenCV's `solvePnP` (IPPE for points on the
/// surface, SQPnP otherwise) refined by Levenberg-Marquardt.
pub fn locate_from_points(board: &Board, camera: &Camera, points: &[Correspondence], cfg: &LocateConfig) -> Result<BoardPose, LocateError> {
    let mut distinct: Vec<&Correspondence> = Vec::new();
    for p in points {
        let same = distinct.iter().any(|q| {
            let d = sub3(pt(q.board), pt(p.board));
            dot3(d, d).sqrt() < 1.0
        });
        if !same {
            distinct.push(p);
        }
    }
    if distinct.len() < 4 {
        return Err(LocateError::TooFewPoints { got: distinct.len(), needed: 4 });
    }
    let obj: Vector<Point3d> = points.iter().map(|c| Point3d::new(c.board.x_mm, c.board.y_mm, c.board.z_mm)).collect();
    let k = camera.camera_matrix_mat()?;
    // OpenCV's solvePnP knows Brown's coefficients only: a fisheye's points are first undistorted through our own
    // model to the pinhole pixels of the same K, and solved with no distortion.
    let (img, d): (Vector<Point2d>, Mat) = if camera.distortion.as_fisheye().is_some() {
        let pinhole = |c: &Correspondence| camera.normalise(c.pixel).map(|(x, y)| camera.pinhole_pixel(x, y));
        let img = points
            .iter()
            .map(|c| pinhole(c).map(|p| Point2d::new(p.u, p.v)))
            .collect::<Option<Vector<Point2d>>>()
            .ok_or_else(|| LocateError::PoorFit { reason: "a point lies outside the fisheye lens's field of view".into() })?;
        (img, Mat::default())
    } else {
        (points.iter().map(|c| Point2d::new(c.pixel.u, c.pixel.v)).collect(), camera.dist_coeffs_mat()?)
    };
    let planar = points.iter().all(|c| c.board.z_mm.abs() < 1e-9);
    let method = if planar { calib3d::SOLVEPNP_IPPE } else { calib3d::SOLVEPNP_SQPNP };
    let (mut rvec, mut tvec) = (Mat::default(), Mat::default());
    let ok = cv("solvePnP", calib3d::solve_pnp(&obj, &img, &k, &d, &mut rvec, &mut tvec, false, method))?;
    if !ok {
        return Err(LocateError::PoorFit { reason: "solvePnP found no pose for these points".into() });
    }
    cv("solvePnPRefineLM", calib3d::solve_pnp_refine_lm_def(&obj, &img, &k, &d, &mut rvec, &mut tvec))?;
    let v = |m: &Mat| -> Result<[f64; 3], LocateError> {
        let mut f = Mat::default();
        cv("pose", m.convert_to_def(&mut f, opencv::core::CV_64F))?;
        let f = cv("pose", f.reshape(1, 3))?;
        Ok([0, 1, 2].map(|i| f.at_2d::<f64>(i, 0).copied().unwrap_or(f64::NAN)))
    };
    let pose = CameraPose::from_rvec_tvec(v(&rvec)?, v(&tvec)?);
    let mut ss = 0.0;
    let mut features = Vec::new();
    for c in points {
        let e = pose.project(camera, c.board).map_or(f64::INFINITY, |p| p.distance(c.pixel));
        ss += e * e;
        features.push(FeatureFit {
            feature: format!("point ({}, {}, {})", c.board.x_mm, c.board.y_mm, c.board.z_mm),
            samples: 1,
            inliers: usize::from(e <= cfg.max_points_rms_px),
            rms_px: e,
            fixed: true,
        });
    }
    let rms = (ss / points.len() as f64).sqrt();
    if !(rms <= cfg.max_points_rms_px) {
        return Err(LocateError::PoorFit {
            reason: format!("the points reproject with {rms:.2} px RMS (limit {:.1} px): a point is mistyped or mismatched", cfg.max_points_rms_px),
        });
    }
    if pose.centre().z_mm <= 0.0 {
        return Err(LocateError::PoorFit { reason: "the points put the camera below the board".into() });
    }
    Ok(BoardPose {
        board: board.name.clone(),
        pose,
        method: LocateMethod::Points,
        reprojection_rms_px: rms,
        coverage: f64::NAN,
        position_sigma_mm: f64::NAN,
        features,
    })
}

/// Convenience for callers holding a raw frame: undistorts it and locates the board.
pub fn locate_frame(board: &Board, camera: &Camera, frame: &Frame, cfg: LocateConfig) -> Result<BoardPose, LocateError> {
    let mut und = crate::undistort::Undistorter::new(*camera, crate::undistort::UndistortConfig::default())?;
    let u = und.run(frame)?;
    Locator::new(board, cfg).run(&u)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cam() -> Camera {
        Camera { image_width: 1280, image_height: 960, fx: 1000.0, fy: 1000.0, cx: 640.0, cy: 480.0, distortion: Default::default() }
    }

    fn line_through(p: [f64; 2], q: [f64; 2]) -> ImageLine {
        let d = [q[0] - p[0], q[1] - p[1]];
        let n = d[0].hypot(d[1]);
        let (a, b) = (-d[1] / n, d[0] / n);
        let along = |x: [f64; 2]| x[0] * b - x[1] * a;
        let (t0, t1) = (along(p), along(q));
        ImageLine { l: [a, b, -(a * p[0] + b * p[1])], support_px: n, span: [t0.min(t1), t0.max(t1)] }
    }

    /// The closed form recovers an exact pose from exact lines.
    #[test]
    fn three_lines_give_the_pose() {
        let c = cam();
        let truth = CameraPose::look_at(BoardPoint3::new(80.0, -600.0, 1500.0), BoardPoint3::new(0.0, 500.0, 0.0), [0.0, 1.0, 0.0]).unwrap();
        let px = |x: f64, y: f64| {
            let p = project(&c, truth.to_camera(BoardPoint3::new(x, y, 0.0))).unwrap();
            p
        };
        let hw = 254.0;
        let a = line_through(px(hw, 0.0), px(hw, 1000.0));
        let b = line_through(px(-hw, 0.0), px(-hw, 1000.0));
        let cr = line_through(px(-hw, 304.8), px(hw, 304.8));
        let got = pose_from_lines(&c, &a, &b, &cr, hw, 304.8, 0.0).unwrap();
        let probe = [[0.0, 0.0, 0.0], [200.0, 1500.0, 0.0], [-254.0, 300.0, 25.0]];
        assert!(pose_distance(&got, &truth, &probe) < 1e-6, "{got:?} vs {truth:?}");
        // Swapping the sides gives the board turned round, a different pose.
        let other = pose_from_lines(&c, &b, &a, &cr, hw, 304.8, 0.0).unwrap();
        // The same lines read as a plane 50 mm up give the pose 50 mm lower.
        let up = pose_from_lines(&c, &a, &b, &cr, hw, 304.8, 50.0).unwrap();
        let lifted = [[0.0, 0.0, 50.0], [200.0, 1500.0, 50.0]];
        let flat = [[0.0, 0.0, 0.0], [200.0, 1500.0, 0.0]];
        for (l, f) in lifted.iter().zip(&flat) {
            let (x, y) = (up.to_camera(BoardPoint3::new(l[0], l[1], l[2])), truth.to_camera(BoardPoint3::new(f[0], f[1], f[2])));
            assert!(dot3(sub3(x, y), sub3(x, y)).sqrt() < 1e-6);
        }
        assert!(pose_distance(&other, &truth, &probe) > 100.0);
    }

    #[test]
    fn models_carry_their_features() {
        let sb = BoardModel::new(&Board::load("shuffleboard-22ft").unwrap());
        // 4 outline edges + 4 stripes x 2 edges + the table's 4 rectangles (slab foot, rail inner top and foot, rail outer top).
        assert_eq!(sb.edges.len(), 28);
        assert!(sb.ladders[0].cross_lines_mm.iter().any(|y| (y - 158.75).abs() < 1e-9));
        let y9 = BoardModel::new(&Board::load("yocu-9").unwrap());
        assert_eq!(y9.edges.iter().filter(|e| matches!(e.shape, EdgeShape::Circle { .. })).count(), 9);
        let sj = BoardModel::new(&Board::load("sjoelbak").unwrap());
        assert_eq!(sj.edges.iter().filter(|e| e.name.contains("front foot")).count(), 5);
        // From straight above the middle, the wall hides its own foot only when seen from outside.
        let inside_eye = [0.0, 500.0, 1500.0];
        let outside_eye = [600.0, 500.0, 300.0];
        assert!(!sj.hidden([200.0, 500.0, 0.0], inside_eye));
        assert!(sj.hidden([200.0, 500.0, 0.0], outside_eye));
        assert!(!sj.hidden([200.0, 500.0, 50.0], outside_eye), "a wall's top edge is a silhouette, never hidden by its own wall");
    }

    #[test]
    fn points_files_parse_with_headers_and_comments() {
        let dir = std::env::temp_dir().join(format!("boardcall-points-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("pts.csv");
        std::fs::write(&p, "x_mm,y_mm,u,v\n# corners\n-254, 0, 100.5, 900\n254 0 1100 905\n0,152.4,25,640,500\n").unwrap();
        let pts = read_points(&p).unwrap();
        assert_eq!(pts.len(), 3);
        assert!((pts[2].board.z_mm - 25.0).abs() < 1e-12);
        std::fs::write(&p, "1,2,3\n").unwrap();
        let e = read_points(&p).unwrap_err().to_string();
        assert!(e.contains("line 1") && e.contains("3 values"), "{e}");
        std::fs::remove_dir_all(&dir).ok();
    }
}
