//! The camera model: OpenCV's pinhole intrinsics with a lens model (Brown-Conrady with OpenCV's rational terms,
//! or OpenCV's fisheye: [`lens`]), the camera's pose in the board frame, projection and back-projection at any
//! height, the checks every camera passes, and the OpenCV FileStorage files for both ([`files`]).
//!
//! Conventions are OpenCV's: a board point `X` maps to camera coordinates
//! `R X + t` (`x` right, `y` down, `z` forward), then to normalised coordinates,
//! distortion, and pixels through the camera matrix. Pixel coordinates follow
//! OpenCV too: the centre of pixel (0, 0) is at (0, 0). The [`PixelPoint`] type
//! carries them.

pub mod files;
pub mod lens;

pub use lens::{BrownConrady, Distortion, KannalaBrandt, LensModel};

use crate::geom::{BoardPoint, BoardPoint3, PixelPoint};
use opencv::core::Mat;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The longest image side accepted: 8K UHD (7680 px), the largest frame a video camera delivers. The remap tables
/// of one camera take 9 bytes a pixel (two `f32` maps and a mask: 300 MB at 8K); a larger size is a typo.
pub const MAX_IMAGE_LONG_SIDE: u32 = 7680;
/// The shortest side's limit, of 8K UHD (7680x4320) turned either way.
pub const MAX_IMAGE_SHORT_SIDE: u32 = 4320;
/// The smallest image side accepted: below a few pixels no board can be seen, and 0 or 1 is a placeholder.
pub const MIN_IMAGE_SIDE: u32 = 8;
/// Focal lengths below 1 px would put the whole hemisphere inside a pixel or two: a unit mistake.
pub const MIN_FOCAL_PX: f64 = 1.0;
/// Focal lengths above 100 image sides are a field of view under 0.6 degrees: no lens that shows a board.
pub const MAX_FOCAL_IMAGE_SIDES: f64 = 100.0;
/// The principal point may lie this fraction of the image's width (height) outside it: a crop of a larger sensor
/// moves it off-centre, but further out it is a swapped or mis-scaled value.
pub const PRINCIPAL_POINT_SLACK: f64 = 0.25;
/// The camera matrix's skew and other off-diagonal terms must be zero (this model has no skew) to within this
/// fraction of the focal length: OpenCV's `calibrateCamera` writes exact zeros.
const CAMERA_MATRIX_ZERO_TOL: f64 = 1e-9;

/// Which kind of file a [`CameraError`] is about: the messages name it, so that a bad pose file given beside a
/// good camera file is not reported as the camera's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileKind {
    /// A camera file (intrinsics and lens: `calibrate`, `setup`).
    Camera,
    /// A pose file (`rvec`, `tvec`: `locate -o`, `setup`).
    Pose,
}

impl std::fmt::Display for FileKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            FileKind::Camera => "camera file",
            FileKind::Pose => "pose file",
        })
    }
}

/// Errors reading, writing or using a camera or pose file.
#[derive(Debug, thiserror::Error)]
pub enum CameraError {
    #[error("cannot open {file} {path}")]
    Open { file: FileKind, path: PathBuf },
    /// A field that is missing, malformed or out of range. `path` is empty for a camera built in memory (from
    /// OpenCV matrices); `key` is empty when the problem is the file as a whole.
    #[error("{}", field_message(*file, path, key, problem))]
    Field { file: FileKind, path: PathBuf, key: String, problem: String },
    #[error("OpenCV error in {context}: {source}")]
    OpenCv { context: String, source: opencv::Error },
    #[error(transparent)]
    Write {
        #[from]
        source: crate::files::OutputError,
    },
}

impl CameraError {
    /// The same error, said of a pose file: the pose readers share the camera files' parsing.
    pub(crate) fn in_pose_file(self) -> CameraError {
        match self {
            CameraError::Open { path, .. } => CameraError::Open { file: FileKind::Pose, path },
            CameraError::Field { path, key, problem, .. } => CameraError::Field { file: FileKind::Pose, path, key, problem },
            other => other,
        }
    }
}

fn field_message(file: FileKind, path: &Path, key: &str, problem: &str) -> String {
    let place = if path.as_os_str().is_empty() {
        match file {
            FileKind::Camera => "camera".to_string(),
            FileKind::Pose => "pose".to_string(),
        }
    } else {
        format!("{file} {}", path.display())
    };
    if key.is_empty() {
        format!("{place}: {problem}")
    } else {
        format!("{place}: `{key}` {problem}")
    }
}

fn cv<T>(context: &str, r: opencv::Result<T>) -> Result<T, CameraError> {
    r.map_err(|source| CameraError::OpenCv { context: context.to_string(), source })
}

/// Which value of a camera a check refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CameraField {
    ImageWidth,
    ImageHeight,
    Fx,
    Fy,
    Cx,
    Cy,
    /// A distortion coefficient, by its name in the model (`k1`, `p2`, ...).
    Distortion(&'static str),
}

impl CameraField {
    /// The key in an OpenCV camera file that holds the value.
    pub fn file_key(self) -> &'static str {
        match self {
            CameraField::ImageWidth => "image_width",
            CameraField::ImageHeight => "image_height",
            CameraField::Fx | CameraField::Fy | CameraField::Cx | CameraField::Cy => "camera_matrix",
            CameraField::Distortion(_) => "distortion_coefficients",
        }
    }

    /// The value's name in [`Camera`] (and so in scene JSON): `fx`, `distortion.k1`, ...
    pub fn name(self) -> String {
        match self {
            CameraField::ImageWidth => "image_width".into(),
            CameraField::ImageHeight => "image_height".into(),
            CameraField::Fx => "fx".into(),
            CameraField::Fy => "fy".into(),
            CameraField::Cx => "cx".into(),
            CameraField::Cy => "cy".into(),
            CameraField::Distortion(k) => format!("distortion.{k}"),
        }
    }
}

impl InvalidCamera {
    /// The problem as said of the camera file's key ([`CameraField::file_key`]): naming the value inside it
    /// (`cx = NaN: ...` of `camera_matrix`).
    pub fn file_problem(&self) -> String {
        match self.field {
            CameraField::ImageWidth | CameraField::ImageHeight => self.problem.clone(),
            CameraField::Distortion(k) => format!("{k} {}", self.problem),
            f => format!("{} {}", f.name(), self.problem),
        }
    }
}

/// A camera value outside what any real camera has.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{} {problem}", field.name())]
pub struct InvalidCamera {
    pub field: CameraField,
    pub problem: String,
}

/// A calibrated camera: image size, camera matrix and distortion.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Camera {
    pub image_width: u32,
    pub image_height: u32,
    pub fx: f64,
    pub fy: f64,
    pub cx: f64,
    pub cy: f64,
    pub distortion: Distortion,
}

impl Camera {
    /// Projects a point in camera coordinates; `None` if it is not in front of the camera.
    #[inline]
    pub fn project_camera_point(&self, p: [f64; 3]) -> Option<PixelPoint> {
        if p[2] <= 0.0 {
            return None;
        }
        let (xd, yd) = self.distortion.distort(p[0] / p[2], p[1] / p[2]);
        Some(PixelPoint::new(self.fx * xd + self.cx, self.fy * yd + self.cy))
    }

    /// The normalised, undistorted image coordinates (`x/z`, `y/z`) of a pixel; `None` where the lens model is
    /// not invertible (it folds back, or a fisheye's ray is 90 degrees or more off axis).
    pub fn normalise(&self, px: PixelPoint) -> Option<(f64, f64)> {
        self.distortion.undistort((px.u - self.cx) / self.fx, (px.v - self.cy) / self.fy)
    }

    /// The pixel at normalised coordinates without distortion (an ideal pinhole camera).
    pub fn pinhole_pixel(&self, x: f64, y: f64) -> PixelPoint {
        PixelPoint::new(self.fx * x + self.cx, self.fy * y + self.cy)
    }

    /// Pixel size of the image.
    pub fn size(&self) -> (u32, u32) {
        (self.image_width, self.image_height)
    }

    /// Whether pixel `p` lies in the image: `0 <= u < width`, `0 <= v < height`
    /// (a point a bilinear read needs both neighbours of asks one pixel less).
    pub fn contains(&self, p: PixelPoint) -> bool {
        p.u >= 0.0 && p.v >= 0.0 && p.u < self.image_width as f64 && p.v < self.image_height as f64
    }

    /// The camera matrix as an OpenCV 3x3 `CV_64F` matrix.
    pub fn camera_matrix_mat(&self) -> Result<Mat, CameraError> {
        cv("camera matrix", Mat::from_slice_2d(&[[self.fx, 0.0, self.cx], [0.0, self.fy, self.cy], [0.0, 0.0, 1.0]]))
    }

    /// The Brown-Conrady coefficients as an OpenCV 1x5 (1x8 when rational) `CV_64F` matrix, for `calib3d`'s
    /// functions (`projectPoints`, `solvePnP`, `initUndistortRectifyMap`, ...). A fisheye camera is refused:
    /// those functions would read its k1..k4 as k1 k2 p1 p2; see [`Camera::fisheye_coeffs_mat`].
    pub fn dist_coeffs_mat(&self) -> Result<Mat, CameraError> {
        match self.distortion {
            Distortion::Brown(b) => cv("distortion", Mat::from_slice_2d(&[b.coefficients()])),
            Distortion::Fisheye(_) => Err(self.wrong_model("calib3d's Brown-Conrady functions")),
        }
    }

    /// The fisheye coefficients (k1..k4) as an OpenCV 1x4 `CV_64F` matrix, for `calib3d::fisheye_*`.
    /// A Brown-Conrady camera is refused.
    pub fn fisheye_coeffs_mat(&self) -> Result<Mat, CameraError> {
        match self.distortion {
            Distortion::Fisheye(f) => cv("distortion", Mat::from_slice_2d(&[f.coefficients()])),
            Distortion::Brown(_) => Err(self.wrong_model("calib3d's fisheye functions")),
        }
    }

    fn wrong_model(&self, what: &str) -> CameraError {
        CameraError::Field {
            file: FileKind::Camera,
            path: PathBuf::new(),
            key: "distortion_model".into(),
            problem: format!("is {}, which {what} do not take", self.distortion.model().name()),
        }
    }

    /// Builds a Brown-Conrady camera from OpenCV matrices (3x3 camera matrix; 4, 5, 8, 12 or 14 distortion
    /// coefficients, as `calibrateCamera` returns them). The thin-prism (s1..s4) and tilted-sensor (tauX, tauY)
    /// terms of 12 and 14 coefficients are not modelled: they must be zero. The camera is checked
    /// ([`Camera::check`]).
    pub fn from_mats(width: u32, height: u32, k: &Mat, dist: &Mat) -> Result<Camera, CameraError> {
        let (k, d) = (files::mat_values(k)?, files::mat_values(dist)?);
        let distortion =
            files::brown_from_coefficients(&d).map_err(|problem| files::field(Path::new(""), "distortion_coefficients", problem))?;
        Camera::from_parts(width, height, &k, distortion)
    }

    /// Builds a fisheye camera from OpenCV matrices (3x3 camera matrix, the 4 coefficients of `cv::fisheye`).
    pub fn from_fisheye_mats(width: u32, height: u32, k: &Mat, dist: &Mat) -> Result<Camera, CameraError> {
        let (k, d) = (files::mat_values(k)?, files::mat_values(dist)?);
        let distortion =
            files::fisheye_from_coefficients(&d).map_err(|problem| files::field(Path::new(""), "distortion_coefficients", problem))?;
        Camera::from_parts(width, height, &k, distortion)
    }

    fn from_parts(width: u32, height: u32, k: &[f64], distortion: Distortion) -> Result<Camera, CameraError> {
        let no_path = Path::new("");
        files::check_camera_matrix(k).map_err(|problem| files::field(no_path, "camera_matrix", problem))?;
        let cam = Camera { image_width: width, image_height: height, fx: k[0], fy: k[4], cx: k[2], cy: k[5], distortion };
        cam.check().map_err(|e| files::field(no_path, e.field.file_key(), e.file_problem()))?;
        Ok(cam)
    }

    /// Checks that every value is one a real camera can have: finite numbers; an image of
    /// [`MIN_IMAGE_SIDE`]..=8K ([`MAX_IMAGE_LONG_SIDE`] x [`MAX_IMAGE_SHORT_SIDE`], either way round); focal
    /// lengths of [`MIN_FOCAL_PX`] to [`MAX_FOCAL_IMAGE_SIDES`] image sides; the principal point inside the image
    /// or at most [`PRINCIPAL_POINT_SLACK`] of its size outside; finite distortion coefficients.
    pub fn check(&self) -> Result<(), InvalidCamera> {
        let bad = |field: CameraField, problem: String| Err(InvalidCamera { field, problem });
        let (w, h) = (self.image_width, self.image_height);
        for (field, side) in [(CameraField::ImageWidth, w), (CameraField::ImageHeight, h)] {
            if side < MIN_IMAGE_SIDE || side > MAX_IMAGE_LONG_SIDE {
                return bad(field, format!("= {side} px: an image side must be {MIN_IMAGE_SIDE}..={MAX_IMAGE_LONG_SIDE} px"));
            }
        }
        if w.min(h) > MAX_IMAGE_SHORT_SIDE {
            let field = if w <= h { CameraField::ImageWidth } else { CameraField::ImageHeight };
            return bad(field, format!("{w}x{h} is larger than 8K ({MAX_IMAGE_LONG_SIDE}x{MAX_IMAGE_SHORT_SIDE})"));
        }
        let max_focal = MAX_FOCAL_IMAGE_SIDES * w.max(h) as f64;
        for (field, f) in [(CameraField::Fx, self.fx), (CameraField::Fy, self.fy)] {
            if !(f.is_finite() && (MIN_FOCAL_PX..=max_focal).contains(&f)) {
                return bad(field, format!("= {f}: a focal length must be {MIN_FOCAL_PX}..={max_focal} px for a {w}x{h} image"));
            }
        }
        for (field, c, side) in [(CameraField::Cx, self.cx, w as f64), (CameraField::Cy, self.cy, h as f64)] {
            let (lo, hi) = (-PRINCIPAL_POINT_SLACK * side, (1.0 + PRINCIPAL_POINT_SLACK) * side);
            if !(c.is_finite() && (lo..=hi).contains(&c)) {
                let within = format!("{lo}..={hi} px (the image, {PRINCIPAL_POINT_SLACK} of it either side)");
                return bad(field, format!("= {c}: the principal point must lie within {within}"));
            }
        }
        for (name, k) in self.distortion.named_coefficients() {
            if !k.is_finite() {
                return bad(CameraField::Distortion(name), format!("= {k}: distortion coefficients must be finite"));
            }
        }
        Ok(())
    }

    /// Reads an OpenCV FileStorage file (YAML, XML or JSON; YAML also without OpenCV's `%YAML:1.0` header) with
    /// `camera_matrix`, `distortion_coefficients`, `image_width` and `image_height`, as written by OpenCV's
    /// calibration samples, ROS's camera_info files and `boardcall calibrate`, and checks every value
    /// (`docs/camera.md`, "Camera files").
    pub fn load(path: &Path) -> Result<Camera, CameraError> {
        files::load_camera(path)
    }

    /// The camera as OpenCV FileStorage YAML text, loadable by OpenCV's own tools; `extra` adds numeric fields
    /// (e.g. `avg_reprojection_error`). For the caller to write atomically.
    pub fn to_file_string(&self, extra: &[(&str, f64)]) -> Result<String, CameraError> {
        files::camera_text(self, extra)
    }

    /// Writes [`Camera::to_file_string`] to `path` atomically ([`crate::files::write_atomic`]); a failed write is an error.
    pub fn save(&self, path: &Path, extra: &[(&str, f64)]) -> Result<(), CameraError> {
        let text = self.to_file_string(extra)?;
        crate::files::write_atomic(path, text.as_bytes())?;
        Ok(())
    }
}

/// The board's construction as measured with a pose: the dimensions the rules leave to the maker (a sjoelbak's wall
/// and gate-bar heights, a shuffleboard's gutter width), in mm by name (`wall_height_mm`). `locate -o` saves them in
/// the pose file, so that a later frame's check of that pose starts from the board as built (docs/camera.md):
/// started from the nominal build, the check of a right pose can slide to another reading, the heights traded for
/// the pose.
pub type FittedConstruction = std::collections::BTreeMap<String, f64>;

/// A pose file as read: the pose, the uncertainty it records, the construction measured with it.
#[derive(Debug, Clone, PartialEq)]
pub struct PoseFile {
    pub pose: CameraPose,
    /// The pose's `position_sigma_mm` (`None` where the file records none, or not a number).
    pub position_sigma_mm: Option<f64>,
    /// The `construction` map (empty where the file has none: a pose from typed points, typed by hand, or an older file).
    pub construction: FittedConstruction,
}

impl PoseFile {
    /// Reads a pose file ([`CameraPose::load`]'s checks), with its `position_sigma_mm` and `construction` map; each
    /// construction value a finite number of mm, at most 2 m.
    pub fn load(path: &Path) -> Result<PoseFile, CameraError> {
        files::load_pose_file(path)
    }

    /// The file's text: the pose, `extra` numbers, `position_sigma_mm` where known, and the construction map.
    pub fn to_file_string(&self, extra: &[(&str, f64)]) -> Result<String, CameraError> {
        let mut numbers = extra.to_vec();
        numbers.extend(self.position_sigma_mm.map(|s| ("position_sigma_mm", s)));
        files::pose_text(&self.pose, &numbers, &self.construction)
    }

    /// Writes [`PoseFile::to_file_string`] to `path` atomically.
    pub fn save(&self, path: &Path, extra: &[(&str, f64)]) -> Result<(), CameraError> {
        crate::files::write_atomic(path, self.to_file_string(extra)?.as_bytes())?;
        Ok(())
    }
}

/// A 3x3 rotation matrix, row-major.
pub type Rotation = [[f64; 3]; 3];

#[inline]
fn mat_vec(r: &Rotation, v: [f64; 3]) -> [f64; 3] {
    [
        r[0][0] * v[0] + r[0][1] * v[1] + r[0][2] * v[2],
        r[1][0] * v[0] + r[1][1] * v[1] + r[1][2] * v[2],
        r[2][0] * v[0] + r[2][1] * v[1] + r[2][2] * v[2],
    ]
}

fn transpose(r: &Rotation) -> Rotation {
    [[r[0][0], r[1][0], r[2][0]], [r[0][1], r[1][1], r[2][1]], [r[0][2], r[1][2], r[2][2]]]
}

fn cross(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]
}

fn normalised(v: [f64; 3]) -> [f64; 3] {
    let n = (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt();
    [v[0] / n, v[1] / n, v[2] / n]
}

/// Rodrigues' formula: an axis-angle vector to a rotation matrix.
pub fn rotation_from_rvec(rv: [f64; 3]) -> Rotation {
    let theta = (rv[0] * rv[0] + rv[1] * rv[1] + rv[2] * rv[2]).sqrt();
    if theta < 1e-15 {
        return [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]];
    }
    let k = [rv[0] / theta, rv[1] / theta, rv[2] / theta];
    let (s, c) = theta.sin_cos();
    let v = 1.0 - c;
    [
        [c + k[0] * k[0] * v, k[0] * k[1] * v - k[2] * s, k[0] * k[2] * v + k[1] * s],
        [k[1] * k[0] * v + k[2] * s, c + k[1] * k[1] * v, k[1] * k[2] * v - k[0] * s],
        [k[2] * k[0] * v - k[1] * s, k[2] * k[1] * v + k[0] * s, c + k[2] * k[2] * v],
    ]
}

/// The axis-angle vector of a rotation matrix (inverse of [`rotation_from_rvec`]).
pub fn rvec_from_rotation(r: &Rotation) -> [f64; 3] {
    let cos = ((r[0][0] + r[1][1] + r[2][2] - 1.0) / 2.0).clamp(-1.0, 1.0);
    let theta = cos.acos();
    if theta < 1e-12 {
        return [0.0; 3];
    }
    if std::f64::consts::PI - theta < 1e-3 {
        // Near 180 degrees sin(theta) vanishes: the axis comes from the symmetric
        // part, (R + I) / 2 ~ k k^T, and its sign from the antisymmetric part.
        let i = (0..3).max_by(|&a, &b| r[a][a].total_cmp(&r[b][b])).expect("three axes");
        let mut k = [0.0; 3];
        k[i] = ((r[i][i] + 1.0) / 2.0).max(0.0).sqrt();
        for j in 0..3 {
            if j != i {
                k[j] = (r[i][j] + r[j][i]) / (4.0 * k[i]);
            }
        }
        let mut k = normalised(k);
        let a = [r[2][1] - r[1][2], r[0][2] - r[2][0], r[1][0] - r[0][1]];
        if a[0] * k[0] + a[1] * k[1] + a[2] * k[2] < 0.0 {
            k = [-k[0], -k[1], -k[2]];
        }
        return [k[0] * theta, k[1] * theta, k[2] * theta];
    }
    let s = 2.0 * theta.sin();
    [(r[2][1] - r[1][2]) / s * theta, (r[0][2] - r[2][0]) / s * theta, (r[1][0] - r[0][1]) / s * theta]
}

/// Where the camera is relative to the board: board point `X` has camera
/// coordinates `rotation * X + translation` (all in mm).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct CameraPose {
    pub rotation: Rotation,
    pub translation: [f64; 3],
}

impl CameraPose {
    /// From OpenCV's `rvec` / `tvec` (as returned by `solvePnP`).
    pub fn from_rvec_tvec(rvec: [f64; 3], tvec: [f64; 3]) -> Self {
        CameraPose { rotation: rotation_from_rvec(rvec), translation: tvec }
    }

    pub fn rvec(&self) -> [f64; 3] {
        rvec_from_rotation(&self.rotation)
    }

    /// A camera at `position` (board mm) looking at `target`, with the image's
    /// up direction as close as possible to `up` (a board-frame direction).
    /// `None` if `up` is parallel to the viewing direction.
    pub fn look_at(position: BoardPoint3, target: BoardPoint3, up: [f64; 3]) -> Option<Self> {
        let p = [position.x_mm, position.y_mm, position.z_mm];
        let fwd = normalised([target.x_mm - p[0], target.y_mm - p[1], target.z_mm - p[2]]);
        let right = cross(fwd, up);
        let n = (right[0] * right[0] + right[1] * right[1] + right[2] * right[2]).sqrt();
        if !(n > 1e-9) {
            return None;
        }
        let right = [right[0] / n, right[1] / n, right[2] / n];
        let down = cross(fwd, right);
        // Rows are the camera axes (x right, y down, z forward) in board coordinates.
        let rotation = [right, down, fwd];
        let t = mat_vec(&rotation, p);
        Some(CameraPose { rotation, translation: [-t[0], -t[1], -t[2]] })
    }

    /// The camera centre in the board frame.
    pub fn centre(&self) -> BoardPoint3 {
        let rt = transpose(&self.rotation);
        let c = mat_vec(&rt, self.translation);
        BoardPoint3::new(-c[0], -c[1], -c[2])
    }

    /// A board point in camera coordinates (mm).
    #[inline]
    pub fn to_camera(&self, p: BoardPoint3) -> [f64; 3] {
        let v = mat_vec(&self.rotation, [p.x_mm, p.y_mm, p.z_mm]);
        [v[0] + self.translation[0], v[1] + self.translation[1], v[2] + self.translation[2]]
    }

    /// Projects a board point into the image; `None` if it is behind the camera.
    #[inline]
    pub fn project(&self, camera: &Camera, p: BoardPoint3) -> Option<PixelPoint> {
        camera.project_camera_point(self.to_camera(p))
    }

    /// The board-frame ray (origin, unit direction) through a pixel.
    pub fn ray(&self, camera: &Camera, px: PixelPoint) -> Option<(BoardPoint3, [f64; 3])> {
        let (x, y) = camera.normalise(px)?;
        Some((self.centre(), self.ray_from_normalised(x, y)))
    }

    /// The board-frame unit direction of the ray through normalised coordinates.
    pub fn ray_from_normalised(&self, x: f64, y: f64) -> [f64; 3] {
        let rt = transpose(&self.rotation);
        normalised(mat_vec(&rt, [x, y, 1.0]))
    }

    /// Back-projects a pixel onto the horizontal plane `z = height_mm`: the board
    /// point whose image is `px`. `None` if the ray misses the plane (parallel or behind).
    pub fn back_project(&self, camera: &Camera, px: PixelPoint, height_mm: f64) -> Option<BoardPoint> {
        let (o, d) = self.ray(camera, px)?;
        if d[2].abs() < 1e-12 {
            return None;
        }
        let s = (height_mm - o.z_mm) / d[2];
        (s > 0.0).then(|| BoardPoint::new(o.x_mm + s * d[0], o.y_mm + s * d[1]))
    }

    /// Reads a pose file written by [`CameraPose::save`] (OpenCV FileStorage with `rvec` and `tvec`, board mm),
    /// checking both: finite, `rvec` at most a full turn, the camera within [`files::MAX_CAMERA_DISTANCE_MM`].
    pub fn load(path: &Path) -> Result<CameraPose, CameraError> {
        files::load_pose(path)
    }

    /// Reads a pose file as [`CameraPose::load`] does, with the uncertainty it records for the pose
    /// (`position_sigma_mm`, mm: what the pose adds to every footprint's sigma) if it records one.
    pub fn load_recorded(path: &Path) -> Result<(CameraPose, Option<f64>), CameraError> {
        files::load_pose_recorded(path)
    }

    /// The pose as OpenCV FileStorage YAML text (`rvec`, `tvec` in board mm, plus extra numbers), for the caller
    /// to write atomically.
    pub fn to_file_string(&self, extra: &[(&str, f64)]) -> Result<String, CameraError> {
        files::pose_text(self, extra, &FittedConstruction::new())
    }

    /// Writes [`CameraPose::to_file_string`] to `path` atomically ([`crate::files::write_atomic`]); a failed write is an error.
    pub fn save(&self, path: &Path, extra: &[(&str, f64)]) -> Result<(), CameraError> {
        let text = self.to_file_string(extra)?;
        crate::files::write_atomic(path, text.as_bytes())?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use opencv::core::{Point3d, Vector};
    use opencv::prelude::*;
    use proptest::prelude::*;

    /// OpenCV's reference calibration of its 640x480 chessboard camera (strong
    /// barrel distortion: k1 = -0.266).
    pub(crate) fn opencv_reference_camera() -> Camera {
        Camera {
            image_width: 640,
            image_height: 480,
            fx: 535.91573396163199,
            fy: 535.91573396163199,
            cx: 342.28315473308373,
            cy: 235.57082909788173,
            distortion: Distortion::brown(
                -0.26637260909660682,
                -0.038588898922304653,
                0.0017831947042852964,
                -0.00028122100441115472,
                0.23839153080878486,
            ),
        }
    }

    pub(crate) fn overhead_pose() -> CameraPose {
        CameraPose::look_at(BoardPoint3::new(30.0, 400.0, 1800.0), BoardPoint3::new(0.0, 300.0, 0.0), [0.0, -1.0, 0.0])
            .unwrap()
    }

    #[test]
    fn projection_agrees_with_opencv_project_points() {
        let cam = opencv_reference_camera();
        let pose = overhead_pose();
        let pts: Vec<BoardPoint3> = (0..20)
            .map(|i| BoardPoint3::new(-200.0 + 20.0 * i as f64, 100.0 + 25.0 * i as f64, if i % 3 == 0 { 25.0 } else { -76.0 }))
            .collect();
        let obj: Vector<Point3d> = pts.iter().map(|p| Point3d::new(p.x_mm, p.y_mm, p.z_mm)).collect();
        let rv = pose.rvec();
        let rvec = Mat::from_slice_2d(&[[rv[0]], [rv[1]], [rv[2]]]).unwrap();
        let t = pose.translation;
        let tvec = Mat::from_slice_2d(&[[t[0]], [t[1]], [t[2]]]).unwrap();
        let mut img: Vector<opencv::core::Point2d> = Vector::new();
        opencv::calib3d::project_points_def(
            &obj,
            &rvec,
            &tvec,
            &cam.camera_matrix_mat().unwrap(),
            &cam.dist_coeffs_mat().unwrap(),
            &mut img,
        )
        .unwrap();
        for (p, q) in pts.iter().zip(img.iter()) {
            let ours = pose.project(&cam, *p).unwrap();
            // Same formula, same doubles: agreement to 1e-6 px is float noise only.
            assert!(ours.distance(PixelPoint::new(q.x, q.y)) < 1e-6, "{ours:?} vs {q:?}");
        }
    }

    #[test]
    fn rvec_round_trips_and_matches_opencv_rodrigues() {
        // The last is just short of a half turn: the ill-conditioned case of the inverse.
        for rv in [[0.1, -0.2, 0.3], [2.0, 1.0, -0.5], [0.0, 0.0, 3.1], [std::f64::consts::PI - 3e-6, 0.0, 0.0]] {
            let r = rotation_from_rvec(rv);
            let back = rvec_from_rotation(&r);
            let again = rotation_from_rvec(back);
            for i in 0..3 {
                for j in 0..3 {
                    assert!((r[i][j] - again[i][j]).abs() < 1e-9, "{rv:?}");
                }
            }
            let src = Mat::from_slice_2d(&[[rv[0]], [rv[1]], [rv[2]]]).unwrap();
            let mut dst = Mat::default();
            opencv::calib3d::rodrigues_def(&src, &mut dst).unwrap();
            for i in 0..3 {
                for j in 0..3 {
                    let cvv = *dst.at_2d::<f64>(i as i32, j as i32).unwrap();
                    assert!((r[i][j] - cvv).abs() < 1e-12, "{rv:?}");
                }
            }
        }
    }

    /// A strong fisheye (Kannala-Brandt coefficients of an equidistant lens) whose 1280x960 image reaches 90
    /// degrees off axis in its corners: a ~180 degree diagonal field.
    fn fisheye_camera() -> Camera {
        let lens = KannalaBrandt { k1: -0.013, k2: -0.0084, k3: 0.0039, k4: -0.0008 };
        Camera { image_width: 1280, image_height: 960, fx: 538.5, fy: 539.0, cx: 642.5, cy: 477.5, distortion: Distortion::Fisheye(lens) }
    }

    /// The crate's fisheye model against OpenCV's own `fisheye::projectPoints` and `fisheye::undistortPoints` on
    /// 400 random board points (seeded), in view up to 85 degrees off axis.
    #[test]
    fn fisheye_agrees_with_opencv_fisheye() {
        use rand::{RngExt, SeedableRng};
        let cam = fisheye_camera();
        let pose = overhead_pose();
        let mut rng = rand_pcg::Pcg64::seed_from_u64(13);
        let mut pts = Vec::new();
        while pts.len() < 400 {
            // A ray up to 85 degrees off axis, at 500..3000 mm from the camera, as a board point.
            let theta = rng.random_range(0.0f64..85.0).to_radians();
            let (phi, dist) = (rng.random_range(0.0..std::f64::consts::TAU), rng.random_range(500.0..3000.0));
            let c = [dist * theta.sin() * phi.cos(), dist * theta.sin() * phi.sin(), dist * theta.cos()];
            let r = pose.rotation;
            let t = [c[0] - pose.translation[0], c[1] - pose.translation[1], c[2] - pose.translation[2]];
            // X = R^T (c - t)
            let b = [0, 1, 2].map(|j| r[0][j] * t[0] + r[1][j] * t[1] + r[2][j] * t[2]);
            pts.push(BoardPoint3::new(b[0], b[1], b[2]));
        }
        let obj: Vector<Point3d> = pts.iter().map(|p| Point3d::new(p.x_mm, p.y_mm, p.z_mm)).collect();
        let rv = pose.rvec();
        let rvec = Mat::from_slice_2d(&[[rv[0]], [rv[1]], [rv[2]]]).unwrap();
        let t = pose.translation;
        let tvec = Mat::from_slice_2d(&[[t[0]], [t[1]], [t[2]]]).unwrap();
        let (k, d) = (cam.camera_matrix_mat().unwrap(), cam.fisheye_coeffs_mat().unwrap());
        let mut img: Vector<opencv::core::Point2d> = Vector::new();
        opencv::calib3d::fisheye_project_points_vec_def(&obj, &mut img, &rvec, &tvec, &k, &d).unwrap();
        let mut worst_px = 0.0f64;
        for (p, q) in pts.iter().zip(img.iter()) {
            let ours = pose.project(&cam, *p).unwrap();
            worst_px = worst_px.max(ours.distance(PixelPoint::new(q.x, q.y)));
        }
        // Same formula, same doubles (OpenCV goes through Rodrigues' matrix of the same rvec): float noise only.
        assert!(worst_px < 1e-6, "projection differs from fisheye::projectPoints by {worst_px} px");
        let mut und: Vector<opencv::core::Point2d> = Vector::new();
        use opencv::core::{no_array, TermCriteria, TermCriteria_COUNT, TermCriteria_EPS};
        let criteria = TermCriteria::new(TermCriteria_COUNT + TermCriteria_EPS, 100, 1e-15).unwrap();
        opencv::calib3d::fisheye_undistort_points(&img, &mut und, &k, &d, &no_array(), &no_array(), criteria).unwrap();
        let mut worst = 0.0f64;
        for (q, u) in img.iter().zip(und.iter()) {
            let (x, y) = cam.normalise(PixelPoint::new(q.x, q.y)).unwrap();
            // Relative to the ray's normalised radius (up to tan 85 deg = 11.4).
            worst = worst.max((x - u.x).hypot(y - u.y) / x.hypot(y).max(1.0));
        }
        // OpenCV stops its Newton iteration at 1e-15 in theta; both solve the same polynomial.
        assert!(worst < 1e-9, "normalise differs from fisheye::undistortPoints by {worst} (relative)");
        eprintln!("fisheye vs OpenCV: projection {worst_px:.1e} px, undistortion {worst:.1e} relative");
    }

    proptest! {
        /// Project then back-project through the 180 degree fisheye is the identity to 1e-6 mm, over the
        /// board seen from 1.8 m, out to the image's edge.
        #[test]
        fn fisheye_project_then_back_project_is_identity(x in -2500.0f64..2500.0, y in -2000.0f64..2800.0, z in -76.0f64..30.0) {
            let cam = fisheye_camera();
            let pose = overhead_pose();
            let p = BoardPoint3::new(x, y, z);
            let px = pose.project(&cam, p);
            prop_assume!(px.is_some_and(|px| px.u > 0.0 && px.u < 1280.0 && px.v > 0.0 && px.v < 960.0));
            let back = pose.back_project(&cam, px.unwrap(), z).unwrap();
            prop_assert!(back.distance(p.on_plane()) < 1e-6, "{:?} -> {:?}", p, back);
        }

        /// Distort then undistort is the identity over the fisheye's whole image inside 89 degrees off axis.
        #[test]
        fn fisheye_pixels_round_trip(u in 0.0f64..1280.0, v in 0.0f64..960.0) {
            let cam = fisheye_camera();
            let px = PixelPoint::new(u, v);
            if let Some((x, y)) = cam.normalise(px) {
                let again = cam.project_camera_point([x, y, 1.0]).unwrap();
                prop_assert!(again.distance(px) < 1e-6, "{:?} -> {:?}", px, again);
            } else {
                // Only the corners, 90 degrees or more off axis, have no pinhole point.
                prop_assert!((u - cam.cx).hypot((v - cam.cy) * cam.fx / cam.fy) > 0.99 * 800.0, "{:?}", px);
            }
        }

        /// Distort then undistort is the identity to 1e-6 px over the whole image,
        /// for the strongly distorted reference camera and the renderer's range of k1.
        #[test]
        fn distort_then_undistort_is_identity(u in 0.0f64..640.0, v in 0.0f64..480.0, k1 in -0.25f64..0.05) {
            let lens = Distortion::brown(k1, 0.02, 0.001, -0.0005, 0.0);
            for cam in [opencv_reference_camera(), Camera { distortion: lens, ..opencv_reference_camera() }] {
                // A pixel of the distorted image, back to its undistorted normalised point, and forward again.
                let px = PixelPoint::new(u, v);
                let (x, y) = cam.normalise(px).unwrap();
                let again = cam.project_camera_point([x, y, 1.0]).unwrap();
                prop_assert!(again.distance(px) < 1e-6, "{:?} -> {:?}", px, again);
            }
        }

        /// Project then back-project at a given height is the identity to 1e-6 mm.
        #[test]
        fn project_then_back_project_is_identity(x in -250.0f64..250.0, y in 0.0f64..700.0, z in -76.0f64..30.0) {
            let cam = opencv_reference_camera();
            let pose = overhead_pose();
            let p = BoardPoint3::new(x, y, z);
            let px = pose.project(&cam, p).unwrap();
            prop_assume!(px.u > 0.0 && px.u < 640.0 && px.v > 0.0 && px.v < 480.0);
            let back = pose.back_project(&cam, px, z).unwrap();
            prop_assert!(back.distance(p.on_plane()) < 1e-6, "{:?} -> {:?}", p, back);
        }
    }
}
