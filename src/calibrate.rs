//! Camera calibration from photos of a chessboard or ChArUco target: OpenCV's corner finding and `calibrateCamera`, with per-view errors.
//!
//! The chessboard path follows OpenCV's own calibration sample step for step
//! (`findChessboardCorners` with adaptive threshold and normalisation,
//! `cornerSubPix` in an 11x11 window, `calibrateCamera`), so it reproduces
//! OpenCV's reference results. The ChArUco path uses the contrib `aruco`
//! module (`detectMarkers`, `interpolateCornersCharuco`,
//! `calibrateCameraCharuco`). A view where the pattern is not found is kept in
//! the report and skipped, never fatal.

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

/// Errors of the calibration stage.
#[derive(Debug, thiserror::Error)]
pub enum CalibrateError {
    #[error("bad pattern `{spec}`: {problem} (expected chessboard:COLSxROWS:SQUARE_MM or charuco:COLSxROWS:SQUARE_MM:MARKER_MM[:DICT])")]
    Pattern { spec: String, problem: String },
    #[error("the pattern was found in {found} view(s); calibration needs at least {needed}")]
    TooFewViews { found: usize, needed: usize },
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

/// The predefined ArUco dictionaries by their OpenCV names.
const DICTIONARIES: [(&str, i32); 21] = [
    ("DICT_4X4_50", aruco::DICT_4X4_50),
    ("DICT_4X4_100", aruco::DICT_4X4_100),
    ("DICT_4X4_250", aruco::DICT_4X4_250),
    ("DICT_4X4_1000", aruco::DICT_4X4_1000),
    ("DICT_5X5_50", aruco::DICT_5X5_50),
    ("DICT_5X5_100", aruco::DICT_5X5_100),
    ("DICT_5X5_250", aruco::DICT_5X5_250),
    ("DICT_5X5_1000", aruco::DICT_5X5_1000),
    ("DICT_6X6_50", aruco::DICT_6X6_50),
    ("DICT_6X6_100", aruco::DICT_6X6_100),
    ("DICT_6X6_250", aruco::DICT_6X6_250),
    ("DICT_6X6_1000", aruco::DICT_6X6_1000),
    ("DICT_7X7_50", aruco::DICT_7X7_50),
    ("DICT_7X7_100", aruco::DICT_7X7_100),
    ("DICT_7X7_250", aruco::DICT_7X7_250),
    ("DICT_7X7_1000", aruco::DICT_7X7_1000),
    ("DICT_ARUCO_ORIGINAL", aruco::DICT_ARUCO_ORIGINAL),
    ("DICT_APRILTAG_16h5", aruco::DICT_APRILTAG_16h5),
    ("DICT_APRILTAG_25h9", aruco::DICT_APRILTAG_25h9),
    ("DICT_APRILTAG_36h10", aruco::DICT_APRILTAG_36h10),
    ("DICT_APRILTAG_36h11", aruco::DICT_APRILTAG_36h11),
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
                if cols < 2 || rows < 2 {
                    return Err(bad("a chessboard needs at least 2x2 inner corners"));
                }
                Ok(Pattern::Chessboard { cols, rows, square_mm: length(sq, "SQUARE_MM")? })
            }
            ["charuco", g, sq, mk, rest @ ..] if rest.len() <= 1 => {
                let (squares_x, squares_y) = grid(g)?;
                if squares_x < 2 || squares_y < 2 {
                    return Err(bad("a ChArUco board needs at least 2x2 squares"));
                }
                let (square_mm, marker_mm) = (length(sq, "SQUARE_MM")?, length(mk, "MARKER_MM")?);
                if marker_mm >= square_mm {
                    return Err(bad("the marker must be smaller than the square"));
                }
                let dictionary = rest.first().copied().unwrap_or(DEFAULT_DICTIONARY).to_string();
                if !DICTIONARIES.iter().any(|(n, _)| *n == dictionary) {
                    return Err(bad(&format!(
                        "unknown dictionary `{dictionary}` (known: {})",
                        DICTIONARIES.iter().map(|(n, _)| *n).collect::<Vec<_>>().join(", ")
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
        let name = path.to_str().ok_or_else(|| CameraError::Open { path: path.to_path_buf() })?;
        let mut fs = cv("append to camera file", FileStorage::new_def(name, opencv::core::FileStorage_Mode::APPEND as i32))?;
        if !cv("append to camera file", fs.is_opened())? {
            return Err(CameraError::Open { path: path.to_path_buf() }.into());
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
                let id = DICTIONARIES.iter().find(|(n, _)| n == dictionary).map(|(_, i)| *i).ok_or_else(|| {
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
            Ok(obs) => {
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
        let found = cv("findChessboardCorners", calib3d::find_chessboard_corners(&self.gray, size, &mut corners, flags))?;
        if !found {
            return Ok(Err(format!("no {cols}x{rows} chessboard found")));
        }
        let criteria = cv(
            "criteria",
            TermCriteria::new((TermCriteria_Type::EPS as i32) | (TermCriteria_Type::COUNT as i32), SUBPIX_MAX_ITER, SUBPIX_EPS),
        )?;
        cv(
            "cornerSubPix",
            imgproc::corner_sub_pix(
                &self.gray,
                &mut corners,
                Size::new(SUBPIX_HALF_WINDOW, SUBPIX_HALF_WINDOW),
                Size::new(-1, -1),
                criteria,
            ),
        )?;
        let object: Vector<Point3f> = (0..rows)
            .flat_map(|r| (0..cols).map(move |c| Point3f::new(c as f32 * square_mm as f32, r as f32 * square_mm as f32, 0.0)))
            .collect();
        Ok(Ok(Observation { object, image: corners, ids: Vector::new() }))
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
        Ok(Ok(Observation { object, image: corners, ids }))
    }

    /// The views seen so far.
    pub fn views(&self) -> &[ViewReport] {
        &self.views
    }

    /// Calibrates from every view where the pattern was found.
    pub fn calibrate(&self) -> Result<Calibration, CalibrateError> {
        let found = self.observations.len();
        if found < MIN_VIEWS {
            return Err(CalibrateError::TooFewViews { found, needed: MIN_VIEWS });
        }
        let (w, h) = self.size.expect("views were added");
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
        let rms = match &self.pattern {
            Pattern::Chessboard { .. } => {
                let obj: Vector<Vector<Point3f>> = self.observations.iter().map(|o| o.object.clone()).collect();
                let img: Vector<Vector<Point2f>> = self.observations.iter().map(|o| o.image.clone()).collect();
                cv(
                    "calibrateCamera",
                    calib3d::calibrate_camera_extended(
                        &obj, &img, size, &mut k, &mut d, &mut rvecs, &mut tvecs, &mut sd_in, &mut sd_ex, &mut per_view,
                        self.cfg.flags(), criteria,
                    ),
                )?
            }
            Pattern::Charuco { .. } => {
                let (board, _) = self.charuco.as_ref().expect("a ChArUco pattern has its board");
                let corners: Vector<Vector<Point2f>> = self.observations.iter().map(|o| o.image.clone()).collect();
                let ids: Vector<Vector<i32>> = self.observations.iter().map(|o| o.ids.clone()).collect();
                cv(
                    "calibrateCameraCharuco",
                    aruco::calibrate_camera_charuco_extended(
                        &corners, &ids, board, size, &mut k, &mut d, &mut rvecs, &mut tvecs, &mut sd_in, &mut sd_ex,
                        &mut per_view, self.cfg.flags(), criteria,
                    ),
                )?
            }
        };
        let camera = Camera::from_mats(w, h, &k, &d)?;
        let mut views = self.views.clone();
        let mut i = 0;
        for v in views.iter_mut().filter(|v| v.used) {
            v.reprojection_error_px = Some(cv("per-view errors", per_view.at::<f64>(i).copied())?);
            i += 1;
        }
        Ok(Calibration { camera, pattern: self.pattern.clone(), config: self.cfg, rms_px: rms, views })
    }
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
            ("chessboard:1x6:25", "2x2"),
            ("charuco:5x7:40:50", "smaller"),
            ("charuco:5x7:40:30:DICT_NOPE", "unknown dictionary"),
            ("circles:4x11:20", "kind"),
        ] {
            let e = spec.parse::<Pattern>().unwrap_err().to_string();
            assert!(e.contains(needle), "{spec}: {e}");
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
