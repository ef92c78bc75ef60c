//! Camera calibration from photos of a chessboard or ChArUco target: OpenCV's corner finding and `calibrateCamera`, with per-view errors.
//!
//! The chessboard path follows OpenCV's own calibration sample step for step
//! (`findChessboardCorners` with adaptive threshold and normalisation,
//! `cornerSubPix` in an 11x11 window, `calibrateCamera`), so it reproduces
//! OpenCV's reference results. The ChArUco path uses the contrib `aruco`
//! module (`detectMarkers`, `interpolateCornersCharuco`,
//! `calibrateCameraCharuco`). A view where the pattern is not found is kept in
//! the report and skipped, never fatal.
//!
//! Before calibrating, the view set is checked for the two degenerate cases
//! `calibrateCamera` does not refuse by itself: near-duplicate views (dropped
//! with a note if enough distinct views remain) and a target whose plane
//! orientation hardly varies across the views (refused). Images larger than
//! [`SEARCH_MAX_SIDE`] are searched for a chessboard at a reduced scale and the
//! corners refined at full resolution, so a view without the pattern costs a
//! fraction of a second at any size.

use crate::camera::{Camera, CameraError};
use crate::frame::{Frame, FrameError};
use opencv::aruco;
use opencv::core::{FileStorage, FileStorageTrait, FileStorageTraitConst, Mat, Point2f, Point3f, Ptr, Size, TermCriteria, TermCriteria_Type, Vector};
use opencv::prelude::*;
use opencv::{calib3d, imgproc};
use serde::Serialize;
use std::path::Path;
use std::str::FromStr;

/// OpenCV needs at least this many views with the pattern found; fewer cannot
/// separate focal length from distance (and its sample refuses below 3 too).
pub const MIN_VIEWS: usize = 3;
/// `cornerSubPix`'s half window, 11 px (a 23x23 window): OpenCV's calibration
/// sample passes `Size(11, 11)`, and its reference results depend on it.
const SUBPIX_HALF_WINDOW: i32 = 11;
/// `cornerSubPix` stops after 30 iterations or a move below 0.1 px (the sample's criteria).
const SUBPIX_MAX_ITER: i32 = 30;
const SUBPIX_EPS: f64 = 0.1;
/// A ChArUco view needs this many interpolated corners to constrain a pose
/// (OpenCV's own minimum for `calibrateCameraCharuco` per view is 4; 6 keeps
/// nearly collinear corner sets out).
const MIN_CHARUCO_CORNERS: usize = 6;
/// A ChArUco view's corners must spread at least this many squares (standard
/// deviation across their narrowest direction): a row of corners fixes no plane.
const MIN_CHARUCO_SPREAD_SQUARES: f64 = 0.25;
/// OpenCV's `findChessboardCorners` refuses patterns with fewer than 3 inner
/// corners a side ("Both width and height of the pattern should have bigger than 2").
pub const MIN_CHESSBOARD_SIDE: u32 = 3;
/// The largest pattern side (chessboard inner corners, ChArUco squares): at the
/// search scale (longest side <= [`SEARCH_MAX_SIDE`] px) a square of a wider
/// pattern would be under ~10 px, too small to find, and OpenCV's ChArUco
/// board set-up is quadratic in the square count (a 1000x1000 board never finished).
pub const MAX_PATTERN_SIDE: u32 = 100;
/// Images whose longest side is above this are searched for a chessboard at a
/// reduced scale (the corner search costs ~6 s on a 1920x1080 noise image at
/// full size, 0.09 s at 1024x576); corners are then refined at full resolution.
pub const SEARCH_MAX_SIDE: u32 = 1024;
/// Two views whose corners lie on average within this distance of each other
/// are the same view (a repeated photo, a still video frame): a board moved on
/// purpose moves its corners tens of pixels; the same pose shot twice differs
/// by sensor noise, ~0.1 px.
pub const DUPLICATE_MAX_MEAN_PX: f64 = 2.0;
/// The target's plane orientation must vary by at least this angle across the
/// used views (largest angle between two views' plane normals). Parallel
/// planes cannot separate focal length from distance (Zhang's degenerate
/// case) and read under 1 degree apart; OpenCV's own four ChArUco tutorial
/// photos, the least varied real set at hand, read 5.5 degrees and calibrate
/// to within 1 % of OpenCV's result.
pub const MIN_TILT_SPREAD_DEG: f64 = 3.0;

/// Errors of the calibration stage.
#[derive(Debug, thiserror::Error)]
pub enum CalibrateError {
    #[error(
        "bad pattern `{spec}`: {problem} (expected chessboard:COLSxROWS:SQUARE_MM, 3 to 100 inner corners a side, or \
         charuco:COLSxROWS:SQUARE_MM:MARKER_MM[:DICT], up to 100 squares a side)"
    )]
    Pattern { spec: String, problem: String },
    #[error("the pattern was found in {found} view(s); calibration needs at least {needed}")]
    TooFewViews { found: usize, needed: usize },
    #[error(
        "only {distinct} distinct view(s): {duplicates} near-duplicate view(s) dropped (corners within {max_mean_px} px on \
         average of an earlier view: {names}); calibration needs at least {needed} different views of the target"
    )]
    DuplicateViews { distinct: usize, duplicates: usize, names: String, max_mean_px: f64, needed: usize },
    #[error(
        "the target's tilt varies by only {spread_deg:.1} degrees across the {views} views; calibration needs at least \
         {needed_deg} degrees (photograph the target tilted in different directions)"
    )]
    TooLittleTilt { spread_deg: f64, needed_deg: f64, views: usize },
    #[error("calibration failed on these views: {reason}")]
    Unsolvable { reason: String },
    #[error("view {view} is {got_width}x{got_height} but earlier views are {want_width}x{want_height}")]
    SizeMismatch { view: String, got_width: u32, got_height: u32, want_width: u32, want_height: u32 },
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

fn cv<T>(context: &str, r: opencv::Result<T>) -> Result<T, CalibrateError> {
    r.map_err(|source| CalibrateError::OpenCv { context: context.to_string(), source })
}

/// A calibration target.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Pattern {
    /// A chessboard with `cols x rows` inner corners.
    Chessboard { cols: u32, rows: u32, square_mm: f64 },
    /// A ChArUco board of `squares_x x squares_y` squares with ArUco markers
    /// from a predefined dictionary (e.g. `DICT_5X5_100`).
    Charuco { squares_x: u32, squares_y: u32, square_mm: f64, marker_mm: f64, dictionary: String },
}

/// The predefined ArUco dictionaries by their OpenCV names, with their marker
/// counts (a ChArUco board needs one marker per white square).
const DICTIONARIES: [(&str, i32, u32); 21] = [
    ("DICT_4X4_50", aruco::DICT_4X4_50, 50),
    ("DICT_4X4_100", aruco::DICT_4X4_100, 100),
    ("DICT_4X4_250", aruco::DICT_4X4_250, 250),
    ("DICT_4X4_1000", aruco::DICT_4X4_1000, 1000),
    ("DICT_5X5_50", aruco::DICT_5X5_50, 50),
    ("DICT_5X5_100", aruco::DICT_5X5_100, 100),
    ("DICT_5X5_250", aruco::DICT_5X5_250, 250),
    ("DICT_5X5_1000", aruco::DICT_5X5_1000, 1000),
    ("DICT_6X6_50", aruco::DICT_6X6_50, 50),
    ("DICT_6X6_100", aruco::DICT_6X6_100, 100),
    ("DICT_6X6_250", aruco::DICT_6X6_250, 250),
    ("DICT_6X6_1000", aruco::DICT_6X6_1000, 1000),
    ("DICT_7X7_50", aruco::DICT_7X7_50, 50),
    ("DICT_7X7_100", aruco::DICT_7X7_100, 100),
    ("DICT_7X7_250", aruco::DICT_7X7_250, 250),
    ("DICT_7X7_1000", aruco::DICT_7X7_1000, 1000),
    ("DICT_ARUCO_ORIGINAL", aruco::DICT_ARUCO_ORIGINAL, 1024),
    ("DICT_APRILTAG_16h5", aruco::DICT_APRILTAG_16h5, 30),
    ("DICT_APRILTAG_25h9", aruco::DICT_APRILTAG_25h9, 35),
    ("DICT_APRILTAG_36h10", aruco::DICT_APRILTAG_36h10, 2320),
    ("DICT_APRILTAG_36h11", aruco::DICT_APRILTAG_36h11, 587),
];

/// The dictionary a ChArUco pattern uses when none is named (OpenCV's tutorial default).
pub const DEFAULT_DICTIONARY: &str = "DICT_6X6_250";

impl FromStr for Pattern {
    type Err = CalibrateError;

    /// `chessboard:9x6:25` (inner corners, square side in mm) or
    /// `charuco:5x7:40:30[:DICT_6X6_250]` (squares, square and marker side in mm).
    fn from_str(spec: &str) -> Result<Pattern, CalibrateError> {
        let bad = |problem: &str| CalibrateError::Pattern { spec: spec.to_string(), problem: problem.to_string() };
        let parts: Vec<&str> = spec.split(':').collect();
        let grid = |s: &str| -> Result<(u32, u32), CalibrateError> {
            let (a, b) = s.split_once(['x', 'X']).ok_or_else(|| bad("the grid must be COLSxROWS"))?;
            let a: u32 = a.trim().parse().map_err(|_| bad("COLS is not a whole number"))?;
            let b: u32 = b.trim().parse().map_err(|_| bad("ROWS is not a whole number"))?;
            Ok((a, b))
        };
        let length = |s: &str, what: &str| -> Result<f64, CalibrateError> {
            s.trim()
                .parse::<f64>()
                .ok()
                .filter(|v| v.is_finite() && *v > 0.0)
                .ok_or_else(|| bad(&format!("{what} must be a positive number of mm")))
        };
        match parts.as_slice() {
            ["chessboard", g, sq] => {
                let (cols, rows) = grid(g)?;
                if cols < MIN_CHESSBOARD_SIDE || rows < MIN_CHESSBOARD_SIDE {
                    return Err(bad("a chessboard needs at least 3x3 inner corners (OpenCV cannot find smaller ones)"));
                }
                if cols > MAX_PATTERN_SIDE || rows > MAX_PATTERN_SIDE {
                    return Err(bad(&format!("at most {MAX_PATTERN_SIDE} inner corners a side")));
                }
                Ok(Pattern::Chessboard { cols, rows, square_mm: length(sq, "SQUARE_MM")? })
            }
            ["charuco", g, sq, mk, rest @ ..] if rest.len() <= 1 => {
                let (squares_x, squares_y) = grid(g)?;
                // Two squares a side put every inner corner on one line; fewer than
                // MIN_CHARUCO_CORNERS inner corners can never make a usable view.
                if squares_x < 3 || squares_y < 3 || (squares_x - 1) * (squares_y - 1) < MIN_CHARUCO_CORNERS as u32 {
                    return Err(bad(&format!(
                        "a ChArUco board needs at least 3 squares a side and {MIN_CHARUCO_CORNERS} inner corners \
                         (3x4 squares or more)"
                    )));
                }
                if squares_x > MAX_PATTERN_SIDE || squares_y > MAX_PATTERN_SIDE {
                    return Err(bad(&format!("at most {MAX_PATTERN_SIDE} squares a side")));
                }
                let (square_mm, marker_mm) = (length(sq, "SQUARE_MM")?, length(mk, "MARKER_MM")?);
                if marker_mm >= square_mm {
                    return Err(bad("the marker must be smaller than the square"));
                }
                let dictionary = rest.first().copied().unwrap_or(DEFAULT_DICTIONARY).to_string();
                let Some(&(_, _, size)) = DICTIONARIES.iter().find(|(n, _, _)| *n == dictionary) else {
                    return Err(bad(&format!(
                        "unknown dictionary `{dictionary}` (known: {})",
                        DICTIONARIES.iter().map(|(n, _, _)| *n).collect::<Vec<_>>().join(", ")
                    )));
                };
                // OpenCV puts a marker on every other square and numbers them from 0.
                let markers = squares_x * squares_y / 2;
                if markers > size {
                    return Err(bad(&format!(
                        "a {squares_x}x{squares_y} board needs {markers} markers but {dictionary} has {size}"
                    )));
                }
                Ok(Pattern::Charuco { squares_x, squares_y, square_mm, marker_mm, dictionary })
            }
            [kind, ..] if *kind != "chessboard" && *kind != "charuco" => Err(bad("the kind must be `chessboard` or `charuco`")),
            _ => Err(bad("wrong number of `:`-separated fields")),
        }
    }
}

/// Options matching OpenCV's calibration flags.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct CalibrateConfig {
    /// `CALIB_FIX_ASPECT_RATIO`: keep `fx / fy` at [`CalibrateConfig::aspect_ratio`].
    pub fix_aspect_ratio: bool,
    /// The `fx / fy` kept by `fix_aspect_ratio` (square pixels: 1).
    pub aspect_ratio: f64,
    /// `CALIB_ZERO_TANGENT_DIST`: p1 = p2 = 0.
    pub zero_tangent: bool,
    /// `CALIB_FIX_K3`: k3 = 0.
    pub fix_k3: bool,
    /// `CALIB_FIX_PRINCIPAL_POINT`: the principal point stays at the image centre.
    pub fix_principal_point: bool,
}

impl Default for CalibrateConfig {
    fn default() -> Self {
        CalibrateConfig { fix_aspect_ratio: false, aspect_ratio: 1.0, zero_tangent: false, fix_k3: false, fix_principal_point: false }
    }
}

impl CalibrateConfig {
    /// The OpenCV flag word.
    pub fn flags(&self) -> i32 {
        let mut f = 0;
        if self.fix_aspect_ratio {
            f |= calib3d::CALIB_FIX_ASPECT_RATIO;
        }
        if self.zero_tangent {
            f |= calib3d::CALIB_ZERO_TANGENT_DIST;
        }
        if self.fix_k3 {
            f |= calib3d::CALIB_FIX_K3;
        }
        if self.fix_principal_point {
            f |= calib3d::CALIB_FIX_PRINCIPAL_POINT;
        }
        f
    }
}

/// What happened to one view.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ViewReport {
    pub name: String,
    /// Pattern corners found (0 when the pattern was not found).
    pub corners: usize,
    /// Whether the view was used in the calibration.
    pub used: bool,
    /// RMS reprojection error of this view's corners after calibration, px.
    pub reprojection_error_px: Option<f64>,
    /// Why the view was not used.
    pub rejected: Option<String>,
}

/// The result of a calibration.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Calibration {
    pub camera: Camera,
    pub pattern: Pattern,
    pub config: CalibrateConfig,
    /// RMS reprojection error over all corners of all used views, px
    /// (OpenCV's `avg_reprojection_error`).
    pub rms_px: f64,
    /// The largest angle between two used views' target planes, degrees
    /// (at least [`MIN_TILT_SPREAD_DEG`]).
    pub tilt_spread_deg: f64,
    /// Every view in the order given, used or not.
    pub views: Vec<ViewReport>,
}

impl Calibration {
    /// Writes the camera in OpenCV's FileStorage YAML ([`Camera::save`]) plus
    /// `avg_reprojection_error`, `nframes`, `flags` and the per-view errors
    /// (`per_view_reprojection_errors`, views in `view_names`), as OpenCV's
    /// calibration sample writes them.
    pub fn save(&self, path: &Path) -> Result<(), CalibrateError> {
        let used: Vec<&ViewReport> = self.views.iter().filter(|v| v.used).collect();
        self.camera.save(
            path,
            &[("avg_reprojection_error", self.rms_px), ("nframes", used.len() as f64), ("flags", self.config.flags() as f64)],
        )?;
        let name = path.to_str().ok_or_else(|| CameraError::Open { file: crate::camera::FileKind::Camera, path: path.to_path_buf() })?;
        let mut fs = cv("append to camera file", FileStorage::new_def(name, opencv::core::FileStorage_Mode::APPEND as i32))?;
        if !cv("append to camera file", fs.is_opened())? {
            return Err(CameraError::Open { file: crate::camera::FileKind::Camera, path: path.to_path_buf() }.into());
        }
        let errors: Vec<[f64; 1]> = used.iter().map(|v| [v.reprojection_error_px.unwrap_or(f64::NAN)]).collect();
        let m = cv("per-view errors", Mat::from_slice_2d(&errors))?;
        cv("write", opencv::core::write_mat(&mut fs, "per_view_reprojection_errors", &m))?;
        cv("write", fs.start_write_struct_def("view_names", opencv::core::FileNode_SEQ))?;
        for v in &used {
            cv("write", opencv::core::write_str(&mut fs, "", &v.name))?;
        }
        cv("write", fs.end_write_struct())?;
        cv("write", fs.release())
    }
}

/// One view's pattern observations.
struct Observation {
    object: Vector<Point3f>,
    image: Vector<Point2f>,
    /// ChArUco corner ids (empty for a chessboard).
    ids: Vector<i32>,
    /// The index of its view in `Calibrator::views`.
    view: usize,
}

/// Collects views, then calibrates. Owns its grey scratch image and, for
/// ChArUco, the board and dictionary.
pub struct Calibrator {
    pattern: Pattern,
    cfg: CalibrateConfig,
    size: Option<(u32, u32)>,
    views: Vec<ViewReport>,
    observations: Vec<Observation>,
    gray: Mat,
    charuco: Option<(Ptr<aruco::CharucoBoard>, Ptr<aruco::Dictionary>)>,
}

impl Calibrator {
    pub fn new(pattern: Pattern, cfg: CalibrateConfig) -> Result<Calibrator, CalibrateError> {
        let charuco = match &pattern {
            Pattern::Chessboard { .. } => None,
            Pattern::Charuco { squares_x, squares_y, square_mm, marker_mm, dictionary } => {
                let id = DICTIONARIES.iter().find(|(n, _, _)| n == dictionary).map(|(_, i, _)| *i).ok_or_else(|| {
                    CalibrateError::Pattern { spec: dictionary.clone(), problem: "unknown dictionary".into() }
                })?;
                let dict = cv("ArUco dictionary", aruco::get_predefined_dictionary_i32(id))?;
                let board = cv(
                    "ChArUco board",
                    aruco::CharucoBoard::create(*squares_x as i32, *squares_y as i32, *square_mm as f32, *marker_mm as f32, &dict),
                )?;
                Some((board, dict))
            }
        };
        Ok(Calibrator { pattern, cfg, size: None, views: Vec::new(), observations: Vec::new(), gray: Mat::default(), charuco })
    }

    /// Looks for the pattern in one view. Returns whether it was found; a view
    /// without the pattern is recorded as rejected, not an error.
    pub fn add_view(&mut self, name: &str, frame: &Frame) -> Result<bool, CalibrateError> {
        let (w, h) = (frame.width(), frame.height());
        match self.size {
            Some((sw, sh)) if (sw, sh) != (w, h) => {
                return Err(CalibrateError::SizeMismatch {
                    view: name.to_string(),
                    got_width: w,
                    got_height: h,
                    want_width: sw,
                    want_height: sh,
                })
            }
            _ => self.size = Some((w, h)),
        }
        cv("grey conversion", imgproc::cvt_color_def(frame.image(), &mut self.gray, imgproc::COLOR_BGR2GRAY))?;
        let found = match &self.pattern {
            Pattern::Chessboard { cols, rows, square_mm } => self.find_chessboard(*cols, *rows, *square_mm)?,
            Pattern::Charuco { .. } => self.find_charuco()?,
        };
        let report = match found {
            Ok(mut obs) => {
                obs.view = self.views.len();
                let n = obs.image.len();
                self.observations.push(obs);
                ViewReport { name: name.to_string(), corners: n, used: true, reprojection_error_px: None, rejected: None }
            }
            Err(why) => ViewReport { name: name.to_string(), corners: 0, used: false, reprojection_error_px: None, rejected: Some(why) },
        };
        let used = report.used;
        self.views.push(report);
        Ok(used)
    }

    fn find_chessboard(&mut self, cols: u32, rows: u32, square_mm: f64) -> Result<Result<Observation, String>, CalibrateError> {
        let size = Size::new(cols as i32, rows as i32);
        let mut corners: Vector<Point2f> = Vector::new();
        let flags = calib3d::CALIB_CB_ADAPTIVE_THRESH | calib3d::CALIB_CB_NORMALIZE_IMAGE | calib3d::CALIB_CB_FAST_CHECK;
        let (w, h) = (self.gray.cols(), self.gray.rows());
        let longest = w.max(h) as u32;
        let criteria = cv(
            "criteria",
            TermCriteria::new((TermCriteria_Type::EPS as i32) | (TermCriteria_Type::COUNT as i32), SUBPIX_MAX_ITER, SUBPIX_EPS),
        )?;
        let sample_window = Size::new(SUBPIX_HALF_WINDOW, SUBPIX_HALF_WINDOW);
        if longest <= SEARCH_MAX_SIDE {
            // OpenCV's sample exactly: search and refine at full resolution.
            let found = cv("findChessboardCorners", calib3d::find_chessboard_corners(&self.gray, size, &mut corners, flags))?;
            if !found {
                return Ok(Err(format!("no {cols}x{rows} chessboard found")));
            }
            cv("cornerSubPix", imgproc::corner_sub_pix(&self.gray, &mut corners, sample_window, Size::new(-1, -1), criteria))?;
        } else {
            // Search (and refine as the sample does) at a reduced scale, then
            // refine the scaled-up corners at full resolution.
            let scale = SEARCH_MAX_SIDE as f64 / longest as f64;
            let small_size = Size::new(((w as f64 * scale).round() as i32).max(1), ((h as f64 * scale).round() as i32).max(1));
            let mut small = Mat::default();
            cv("resize", imgproc::resize(&self.gray, &mut small, small_size, 0.0, 0.0, imgproc::INTER_AREA))?;
            let found = cv("findChessboardCorners", calib3d::find_chessboard_corners(&small, size, &mut corners, flags))?;
            if !found {
                return Ok(Err(format!("no {cols}x{rows} chessboard found (searched at {}x{})", small_size.width, small_size.height)));
            }
            cv("cornerSubPix", imgproc::corner_sub_pix(&small, &mut corners, sample_window, Size::new(-1, -1), criteria))?;
            let (sx, sy) = (small_size.width as f32 / w as f32, small_size.height as f32 / h as f32);
            // Pixel centres: `resize` maps full-resolution x to (x + 0.5) * s - 0.5.
            corners = corners.iter().map(|p| Point2f::new((p.x + 0.5) / sx - 0.5, (p.y + 0.5) / sy - 0.5)).collect();
            // The sample's window as it covered the search image, never reaching the neighbouring corners.
            let spacing = min_corner_spacing(&corners, cols as usize);
            let half = (SUBPIX_HALF_WINDOW as f32 / sx).round().min((spacing / 2.0).floor() - 1.0).max(2.0) as i32;
            cv(
                "cornerSubPix",
                imgproc::corner_sub_pix(&self.gray, &mut corners, Size::new(half, half), Size::new(-1, -1), criteria),
            )?;
        }
        let object: Vector<Point3f> = (0..rows)
            .flat_map(|r| (0..cols).map(move |c| Point3f::new(c as f32 * square_mm as f32, r as f32 * square_mm as f32, 0.0)))
            .collect();
        Ok(Ok(Observation { object, image: corners, ids: Vector::new(), view: 0 }))
    }

    fn find_charuco(&mut self) -> Result<Result<Observation, String>, CalibrateError> {
        let (board, dict) = self.charuco.as_ref().expect("a ChArUco pattern has its board");
        let mut marker_corners: Vector<Vector<Point2f>> = Vector::new();
        let mut marker_ids: Vector<i32> = Vector::new();
        cv("detectMarkers", aruco::detect_markers_def(&self.gray, dict, &mut marker_corners, &mut marker_ids))?;
        if marker_ids.is_empty() {
            return Ok(Err("no ArUco markers found".into()));
        }
        let mut corners: Vector<Point2f> = Vector::new();
        let mut ids: Vector<i32> = Vector::new();
        cv(
            "interpolateCornersCharuco",
            aruco::interpolate_corners_charuco_def(&marker_corners, &marker_ids, &self.gray, board, &mut corners, &mut ids),
        )?;
        if corners.len() < MIN_CHARUCO_CORNERS {
            return Ok(Err(format!("only {} ChArUco corners found, need {MIN_CHARUCO_CORNERS}", corners.len())));
        }
        let all = board.chessboard_corners();
        let object: Vector<Point3f> = ids.iter().map(|i| all.get(i as usize)).collect::<opencv::Result<_>>().map_err(|source| {
            CalibrateError::OpenCv { context: "ChArUco corner ids".into(), source }
        })?;
        // Corners along one line fix no plane (calibrateCamera's initialisation fails on them).
        let Pattern::Charuco { square_mm, .. } = &self.pattern else { unreachable!("a ChArUco view") };
        if narrowest_spread(&object) < MIN_CHARUCO_SPREAD_SQUARES * square_mm {
            return Ok(Err(format!("the {} ChArUco corners found lie along one line", corners.len())));
        }
        Ok(Ok(Observation { object, image: corners, ids, view: 0 }))
    }

    /// The views seen so far.
    pub fn views(&self) -> &[ViewReport] {
        &self.views
    }

    /// Calibrates from every view where the pattern was found, after dropping
    /// near-duplicate views; refuses a view set that is still degenerate.
    pub fn calibrate(&self) -> Result<Calibration, CalibrateError> {
        let found = self.observations.len();
        if found < MIN_VIEWS {
            return Err(CalibrateError::TooFewViews { found, needed: MIN_VIEWS });
        }
        let mut views = self.views.clone();
        let chessboard = matches!(self.pattern, Pattern::Chessboard { .. });
        // Near-duplicates: each view against the views kept before it.
        let mut kept: Vec<&Observation> = Vec::new();
        let mut dropped: Vec<String> = Vec::new();
        for o in &self.observations {
            let twin = kept.iter().find_map(|k| {
                mean_corner_distance(k, o, chessboard).filter(|d| *d < DUPLICATE_MAX_MEAN_PX).map(|d| (k.view, d))
            });
            match twin {
                Some((k, d)) => {
                    let v = &mut views[o.view];
                    v.used = false;
                    v.rejected = Some(format!("near-duplicate of {} (corners {d:.2} px apart on average), dropped", self.views[k].name));
                    dropped.push(v.name.clone());
                }
                None => kept.push(o),
            }
        }
        if kept.len() < MIN_VIEWS {
            return Err(CalibrateError::DuplicateViews {
                distinct: kept.len(),
                duplicates: dropped.len(),
                names: dropped.join(", "),
                max_mean_px: DUPLICATE_MAX_MEAN_PX,
                needed: MIN_VIEWS,
            });
        }
        let (w, h) = self.size.expect("views were added");
        let tilt_spread_deg = tilt_spread_deg(&kept, w, h)?;
        if tilt_spread_deg < MIN_TILT_SPREAD_DEG {
            return Err(CalibrateError::TooLittleTilt { spread_deg: tilt_spread_deg, needed_deg: MIN_TILT_SPREAD_DEG, views: kept.len() });
        }
        let size = Size::new(w as i32, h as i32);
        // OpenCV reads the fixed aspect ratio from the initial camera matrix.
        let mut k = cv("camera matrix", Mat::from_slice_2d(&[[self.cfg.aspect_ratio, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]))?;
        let mut d = Mat::default();
        let (mut rvecs, mut tvecs) = (Vector::<Mat>::new(), Vector::<Mat>::new());
        let (mut sd_in, mut sd_ex, mut per_view) = (Mat::default(), Mat::default(), Mat::default());
        let criteria = cv(
            "criteria",
            TermCriteria::new((TermCriteria_Type::COUNT as i32) + (TermCriteria_Type::EPS as i32), 30, f64::EPSILON),
        )?;
        // What OpenCV's solver refuses here comes from the views themselves (the checks above catch the known cases).
        let unsolvable = |e: opencv::Error| CalibrateError::Unsolvable { reason: e.message };
        let rms = match &self.pattern {
            Pattern::Chessboard { .. } => {
                let obj: Vector<Vector<Point3f>> = kept.iter().map(|o| o.object.clone()).collect();
                let img: Vector<Vector<Point2f>> = kept.iter().map(|o| o.image.clone()).collect();
                calib3d::calibrate_camera_extended(
                    &obj, &img, size, &mut k, &mut d, &mut rvecs, &mut tvecs, &mut sd_in, &mut sd_ex, &mut per_view,
                    self.cfg.flags(), criteria,
                )
                .map_err(unsolvable)?
            }
            Pattern::Charuco { .. } => {
                let (board, _) = self.charuco.as_ref().expect("a ChArUco pattern has its board");
                let corners: Vector<Vector<Point2f>> = kept.iter().map(|o| o.image.clone()).collect();
                let ids: Vector<Vector<i32>> = kept.iter().map(|o| o.ids.clone()).collect();
                aruco::calibrate_camera_charuco_extended(
                    &corners, &ids, board, size, &mut k, &mut d, &mut rvecs, &mut tvecs, &mut sd_in, &mut sd_ex,
                    &mut per_view, self.cfg.flags(), criteria,
                )
                .map_err(unsolvable)?
            }
        };
        let camera = Camera::from_mats(w, h, &k, &d)?;
        let finite = [camera.fx, camera.fy, camera.cx, camera.cy, rms].iter().all(|v| v.is_finite());
        if !finite || camera.fx <= 0.0 || camera.fy <= 0.0 {
            return Err(CalibrateError::Unsolvable {
                reason: format!("no usable camera came out (fx {}, fy {}, rms {rms} px)", camera.fx, camera.fy),
            });
        }
        for (i, o) in kept.iter().enumerate() {
            views[o.view].reprojection_error_px = Some(cv("per-view errors", per_view.at::<f64>(i as i32).copied())?);
        }
        Ok(Calibration { camera, pattern: self.pattern.clone(), config: self.cfg, rms_px: rms, tilt_spread_deg, views })
    }
}

/// The standard deviation of target points across their narrowest direction, mm.
fn narrowest_spread(points: &Vector<Point3f>) -> f64 {
    let n = points.len().max(1) as f64;
    let (mx, my) = points.iter().fold((0.0, 0.0), |(x, y), p| (x + p.x as f64 / n, y + p.y as f64 / n));
    let (mut a, mut b, mut c) = (0.0, 0.0, 0.0);
    for p in points.iter() {
        let (dx, dy) = (p.x as f64 - mx, p.y as f64 - my);
        (a, b, c) = (a + dx * dx / n, b + dx * dy / n, c + dy * dy / n);
    }
    let smallest = (a + c) / 2.0 - (((a - c) / 2.0).powi(2) + b * b).sqrt();
    smallest.max(0.0).sqrt()
}

/// The smallest distance between neighbouring corners of a row-major grid with `cols` corners a row, px.
fn min_corner_spacing(corners: &Vector<Point2f>, cols: usize) -> f32 {
    let p: Vec<Point2f> = corners.to_vec();
    let dist = |a: Point2f, b: Point2f| ((a.x - b.x).powi(2) + (a.y - b.y).powi(2)).sqrt();
    let mut best = f32::INFINITY;
    for i in 0..p.len() {
        if (i + 1) % cols != 0 && i + 1 < p.len() {
            best = best.min(dist(p[i], p[i + 1]));
        }
        if i + cols < p.len() {
            best = best.min(dist(p[i], p[i + cols]));
        }
    }
    best
}

/// The mean image distance between the corners two views share, px; `None`
/// when they share too few corners to be the same view (ChArUco: under half
/// of the smaller view's). A chessboard's corners can come out in reverse
/// order for the same board (its 180-degree symmetry), so both orders count.
fn mean_corner_distance(a: &Observation, b: &Observation, chessboard: bool) -> Option<f64> {
    let mean = |pairs: &mut dyn Iterator<Item = (Point2f, Point2f)>| {
        let (mut sum, mut n) = (0.0f64, 0usize);
        for (p, q) in pairs {
            sum += (((p.x - q.x) as f64).powi(2) + ((p.y - q.y) as f64).powi(2)).sqrt();
            n += 1;
        }
        (n > 0).then(|| sum / n as f64)
    };
    if chessboard {
        if a.image.len() != b.image.len() {
            return None;
        }
        let forward = mean(&mut a.image.iter().zip(b.image.iter()))?;
        let reverse = mean(&mut a.image.iter().zip(b.image.iter().rev()))?;
        return Some(forward.min(reverse));
    }
    let common: Vec<(Point2f, Point2f)> = a
        .ids
        .iter()
        .zip(a.image.iter())
        .filter_map(|(id, p)| b.ids.iter().position(|j| j == id).map(|k| (p, b.image.get(k).expect("ids and corners pair up"))))
        .collect();
    if common.len() * 2 < a.ids.len().min(b.ids.len()) {
        return None;
    }
    mean(&mut common.into_iter())
}

/// The largest angle between two views' target planes, degrees. Each view's
/// plane normal comes from its homography (target plane to image) read with
/// a nominal camera: focal length the image's longest side (a ~53 degree field
/// of view), principal point at the centre. A wrong focal length scales the
/// angles (by up to the ratio of the true to the nominal focal length) but
/// parallel planes read as parallel with any camera.
fn tilt_spread_deg(views: &[&Observation], w: u32, h: u32) -> Result<f64, CalibrateError> {
    let f = w.max(h) as f64;
    let (cx, cy) = ((w as f64 - 1.0) / 2.0, (h as f64 - 1.0) / 2.0);
    let mut normals: Vec<[f64; 3]> = Vec::new();
    for o in views {
        let plane: Vector<Point2f> = o.object.iter().map(|p| Point2f::new(p.x, p.y)).collect();
        let hm = cv("findHomography", calib3d::find_homography(&plane, &o.image, &mut Mat::default(), 0, 3.0))?;
        if hm.rows() != 3 || hm.cols() != 3 {
            continue; // no homography (corners on a line): the view adds no orientation
        }
        let at = |r: i32, c: i32| hm.at_2d::<f64>(r, c).copied();
        // Columns of K^-1 H: the plane's x and y axes in camera coordinates, up to scale.
        let col = |c: i32| -> opencv::Result<[f64; 3]> {
            let (a, b, z) = (at(0, c)?, at(1, c)?, at(2, c)?);
            Ok([(a - cx * z) / f, (b - cy * z) / f, z])
        };
        let (r1, r2) = (cv("homography", col(0))?, cv("homography", col(1))?);
        let n = [r1[1] * r2[2] - r1[2] * r2[1], r1[2] * r2[0] - r1[0] * r2[2], r1[0] * r2[1] - r1[1] * r2[0]];
        let len = (n[0] * n[0] + n[1] * n[1] + n[2] * n[2]).sqrt();
        if len.is_finite() && len > 0.0 {
            // The plane's side facing the camera: normals of one board in one hemisphere.
            let s = if n[2] < 0.0 { -1.0 } else { 1.0 } / len;
            normals.push([n[0] * s, n[1] * s, n[2] * s]);
        }
    }
    let mut spread = 0.0f64;
    for (i, a) in normals.iter().enumerate() {
        for b in &normals[i + 1..] {
            let cos = (a[0] * b[0] + a[1] * b[1] + a[2] * b[2]).clamp(-1.0, 1.0);
            spread = spread.max(cos.acos().to_degrees());
        }
    }
    Ok(spread)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_parse() {
        assert_eq!(
            "chessboard:9x6:25".parse::<Pattern>().unwrap(),
            Pattern::Chessboard { cols: 9, rows: 6, square_mm: 25.0 }
        );
        match "charuco:5x7:40:30".parse::<Pattern>().unwrap() {
            Pattern::Charuco { squares_x: 5, squares_y: 7, dictionary, .. } => assert_eq!(dictionary, DEFAULT_DICTIONARY),
            other => panic!("{other:?}"),
        }
        assert!("charuco:5x7:40:30:DICT_4X4_50".parse::<Pattern>().is_ok());
    }

    #[test]
    fn bad_patterns_name_the_problem() {
        for (spec, needle) in [
            ("chessboard:9x6", "number of"),
            ("chessboard:9by6:25", "COLSxROWS"),
            ("chessboard:9x6:-1", "SQUARE_MM"),
            ("chessboard:1x6:25", "3x3"),
            ("chessboard:2x2:25", "3x3"),
            ("chessboard:3x2:25", "3x3"),
            ("chessboard:101x6:25", "at most 100"),
            ("charuco:1000x1000:40:20", "at most 100"),
            ("charuco:3x3:40:20", "6 inner corners"),
            ("charuco:2x9:40:20", "3 squares a side"),
            ("charuco:20x20:40:20:DICT_6X6_100", "needs 200 markers but DICT_6X6_100 has 100"),
            ("charuco:5x7:40:50", "smaller"),
            ("charuco:5x7:40:30:DICT_NOPE", "unknown dictionary"),
            ("circles:4x11:20", "kind"),
        ] {
            let e = spec.parse::<Pattern>().unwrap_err().to_string();
            assert!(e.contains(needle), "{spec}: {e}");
        }
    }

    #[test]
    fn pattern_limits_are_what_opencv_accepts() {
        // The smallest and largest accepted chessboards, and the boards just past each limit.
        assert!("chessboard:3x3:25".parse::<Pattern>().is_ok());
        assert!("chessboard:100x100:5".parse::<Pattern>().is_ok());
        assert!("charuco:3x4:40:20".parse::<Pattern>().is_ok());
        assert!("charuco:100x20:40:20:DICT_4X4_1000".parse::<Pattern>().is_ok());
        assert!("charuco:100x21:40:20:DICT_4X4_1000".parse::<Pattern>().is_err());
        // The 3x3 minimum is OpenCV's own: 2 corners a side is refused by findChessboardCorners itself.
        let gray = Mat::new_rows_cols_with_default(64, 64, opencv::core::CV_8UC1, opencv::core::Scalar::all(128.0)).unwrap();
        let mut corners: Vector<Point2f> = Vector::new();
        assert!(calib3d::find_chessboard_corners(&gray, Size::new(3, 2), &mut corners, 0).is_err());
        assert!(calib3d::find_chessboard_corners(&gray, Size::new(3, 3), &mut corners, 0).is_ok());
    }

    #[test]
    fn charuco_corners_on_one_line_have_no_spread() {
        let square = 40.0f32;
        let row: Vector<Point3f> = (0..6).map(|i| Point3f::new(i as f32 * square, 2.0 * square, 0.0)).collect();
        let diagonal: Vector<Point3f> = (0..6).map(|i| Point3f::new(i as f32 * square, i as f32 * square, 0.0)).collect();
        let block: Vector<Point3f> = (0..6).map(|i| Point3f::new((i % 3) as f32 * square, (i / 3) as f32 * square, 0.0)).collect();
        let limit = MIN_CHARUCO_SPREAD_SQUARES * square as f64;
        assert!(narrowest_spread(&row) < 1e-3 && narrowest_spread(&diagonal) < 1e-3);
        // Two rows of three: 0.5 squares across the narrow direction, above the limit.
        assert!(narrowest_spread(&block) > limit, "{}", narrowest_spread(&block));
    }

    #[test]
    fn dictionary_sizes_match_opencv() {
        for (name, id, size) in DICTIONARIES {
            let dict = aruco::get_predefined_dictionary_i32(id).unwrap();
            assert_eq!(dict.bytes_list().rows() as u32, size, "{name}");
        }
    }

    #[test]
    fn flags_match_opencv() {
        let cfg = CalibrateConfig { fix_aspect_ratio: true, ..Default::default() };
        // The reference file's `flags: 2`.
        assert_eq!(cfg.flags(), 2);
        let all = CalibrateConfig { fix_aspect_ratio: true, zero_tangent: true, fix_k3: true, ..Default::default() };
        assert_eq!(all.flags(), calib3d::CALIB_FIX_ASPECT_RATIO | calib3d::CALIB_ZERO_TANGENT_DIST | calib3d::CALIB_FIX_K3);
    }
}
