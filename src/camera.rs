//! The camera model: OpenCV's pinhole intrinsics with Brown-Conrady distortion
//! (k1 k2 p1 p2 k3), the camera's pose in the board frame, projection and
//! back-projection at any height, and the OpenCV FileStorage YAML files for both.
//!
//! Conventions are OpenCV's: a board point `X` maps to camera coordinates
//! `R X + t` (`x` right, `y` down, `z` forward), then to normalised coordinates,
//! distortion, and pixels through the camera matrix. Pixel coordinates follow
//! OpenCV too: the centre of pixel (0, 0) is at (0, 0). The [`PixelPoint`] type
//! carries them.

use crate::geom::{BoardPoint, BoardPoint3, PixelPoint};
use opencv::core::{FileStorage, FileStorageTrait, FileStorageTraitConst, FileNodeTraitConst, Mat, MatTraitConst};
use opencv::prelude::*;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// Undistortion stops when a Newton step moves the normalised point by less than
/// this: 1e-14 is ~1e-11 px at any focal length a real camera has.
const UNDISTORT_STEP_TOL: f64 = 1e-14;
/// Newton converges in a handful of steps inside the image; this bounds the loop
/// where the distortion polynomial folds back (far outside the calibrated field).
const UNDISTORT_MAX_ITER: usize = 50;

/// Errors reading, writing or using a camera or pose file.
#[derive(Debug, thiserror::Error)]
pub enum CameraError {
    #[error("cannot open camera file {path}")]
    Open { path: PathBuf },
    #[error("camera file {path}: `{key}` {problem}")]
    Field { path: PathBuf, key: String, problem: String },
    #[error("OpenCV error in {context}: {source}")]
    OpenCv { context: String, source: opencv::Error },
}

fn cv<T>(context: &str, r: opencv::Result<T>) -> Result<T, CameraError> {
    r.map_err(|source| CameraError::OpenCv { context: context.to_string(), source })
}

/// Brown-Conrady distortion coefficients in OpenCV's order.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, Default)]
pub struct Distortion {
    pub k1: f64,
    pub k2: f64,
    pub p1: f64,
    pub p2: f64,
    pub k3: f64,
}

impl Distortion {
    pub fn as_array(&self) -> [f64; 5] {
        [self.k1, self.k2, self.p1, self.p2, self.k3]
    }

    /// Applies the distortion to a normalised point.
    #[inline]
    pub fn distort(&self, x: f64, y: f64) -> (f64, f64) {
        let r2 = x * x + y * y;
        let radial = 1.0 + r2 * (self.k1 + r2 * (self.k2 + r2 * self.k3));
        let xd = x * radial + 2.0 * self.p1 * x * y + self.p2 * (r2 + 2.0 * x * x);
        let yd = y * radial + self.p1 * (r2 + 2.0 * y * y) + 2.0 * self.p2 * x * y;
        (xd, yd)
    }

    /// The Jacobian of [`Distortion::distort`] at `(x, y)`: `[[dxd/dx, dxd/dy], [dyd/dx, dyd/dy]]`.
    fn jacobian(&self, x: f64, y: f64) -> [[f64; 2]; 2] {
        let r2 = x * x + y * y;
        let radial = 1.0 + r2 * (self.k1 + r2 * (self.k2 + r2 * self.k3));
        let dradial_dr2 = self.k1 + r2 * (2.0 * self.k2 + 3.0 * r2 * self.k3);
        let (dr2x, dr2y) = (2.0 * x, 2.0 * y);
        let dxd_dx = radial + x * dradial_dr2 * dr2x + 2.0 * self.p1 * y + self.p2 * (dr2x + 4.0 * x);
        let dxd_dy = x * dradial_dr2 * dr2y + 2.0 * self.p1 * x + self.p2 * dr2y;
        let dyd_dx = y * dradial_dr2 * dr2x + self.p1 * dr2x + 2.0 * self.p2 * y;
        let dyd_dy = radial + y * dradial_dr2 * dr2y + self.p1 * (dr2y + 4.0 * y) + 2.0 * self.p2 * x;
        [[dxd_dx, dxd_dy], [dyd_dx, dyd_dy]]
    }

    /// Inverts [`Distortion::distort`] by Newton's method; `None` where it does not
    /// converge (outside the region where the model is invertible).
    pub fn undistort(&self, xd: f64, yd: f64) -> Option<(f64, f64)> {
        let (mut x, mut y) = (xd, yd);
        for _ in 0..UNDISTORT_MAX_ITER {
            let (fx, fy) = self.distort(x, y);
            let (ex, ey) = (fx - xd, fy - yd);
            let [[a, b], [c, d]] = self.jacobian(x, y);
            let det = a * d - b * c;
            if !det.is_finite() || det.abs() < 1e-12 {
                return None;
            }
            let sx = (d * ex - b * ey) / det;
            let sy = (-c * ex + a * ey) / det;
            x -= sx;
            y -= sy;
            if sx.hypot(sy) < UNDISTORT_STEP_TOL {
                let (fx, fy) = self.distort(x, y);
                return ((fx - xd).hypot(fy - yd) < 1e-10).then_some((x, y));
            }
        }
        None
    }
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

    /// The normalised, undistorted image coordinates (`x/z`, `y/z`) of a pixel.
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

    /// The camera matrix as an OpenCV 3x3 `CV_64F` matrix.
    pub fn camera_matrix_mat(&self) -> Result<Mat, CameraError> {
        cv("camera matrix", Mat::from_slice_2d(&[[self.fx, 0.0, self.cx], [0.0, self.fy, self.cy], [0.0, 0.0, 1.0]]))
    }

    /// The distortion coefficients as an OpenCV 1x5 `CV_64F` matrix.
    pub fn dist_coeffs_mat(&self) -> Result<Mat, CameraError> {
        cv("distortion", Mat::from_slice_2d(&[self.distortion.as_array()]))
    }

    /// Builds a camera from OpenCV matrices (3x3 camera matrix, 4 to 14 distortion
    /// coefficients of which the first five are used).
    pub fn from_mats(width: u32, height: u32, k: &Mat, dist: &Mat) -> Result<Camera, CameraError> {
        let at = |m: &Mat, r: i32, c: i32| cv("camera matrix", m.at_2d::<f64>(r, c).copied());
        let d: Vec<f64> = {
            let n = dist.total() as i32;
            let flat = cv("distortion", dist.reshape(1, 1))?;
            (0..n).map(|i| cv("distortion", flat.at_2d::<f64>(0, i).copied())).collect::<Result<_, _>>()?
        };
        let coeff = |i: usize| d.get(i).copied().unwrap_or(0.0);
        Ok(Camera {
            image_width: width,
            image_height: height,
            fx: at(k, 0, 0)?,
            fy: at(k, 1, 1)?,
            cx: at(k, 0, 2)?,
            cy: at(k, 1, 2)?,
            distortion: Distortion { k1: coeff(0), k2: coeff(1), p1: coeff(2), p2: coeff(3), k3: coeff(4) },
        })
    }

    /// Reads an OpenCV FileStorage file (YAML, XML or JSON) with `camera_matrix`,
    /// `distortion_coefficients`, `image_width` and `image_height`, as written by
    /// OpenCV's calibration sample and by `boardcall calibrate`.
    pub fn load(path: &Path) -> Result<Camera, CameraError> {
        let field = |key: &str, problem: &str| CameraError::Field {
            path: path.to_path_buf(),
            key: key.to_string(),
            problem: problem.to_string(),
        };
        let name = path.to_str().ok_or_else(|| field("path", "is not UTF-8"))?;
        if !path.is_file() {
            return Err(CameraError::Open { path: path.to_path_buf() });
        }
        // OpenCV raises on malformed files; that is an unreadable file to the user.
        let fs = FileStorage::new_def(name, opencv::core::FileStorage_Mode::READ as i32)
            .map_err(|_| CameraError::Open { path: path.to_path_buf() })?;
        if !cv("open", fs.is_opened())? {
            return Err(CameraError::Open { path: path.to_path_buf() });
        }
        let int = |key: &str| -> Result<u32, CameraError> {
            let node = cv(key, fs.get(key))?;
            if cv(key, node.empty())? || !cv(key, node.is_int())? {
                return Err(field(key, "is missing or not an integer"));
            }
            let v = cv(key, node.to_i32())?;
            u32::try_from(v).ok().filter(|v| *v > 0).ok_or_else(|| field(key, "must be positive"))
        };
        let mat = |key: &str, min: usize| -> Result<Mat, CameraError> {
            let node = cv(key, fs.get(key))?;
            if cv(key, node.empty())? {
                return Err(field(key, "is missing"));
            }
            let m = cv(key, node.mat()).map_err(|_| field(key, "is not an !!opencv-matrix"))?;
            if m.total() < min {
                return Err(field(key, &format!("needs at least {min} values")));
            }
            let mut out = Mat::default();
            cv(key, m.convert_to_def(&mut out, opencv::core::CV_64F))?;
            Ok(out)
        };
        let k = mat("camera_matrix", 9)?;
        if k.rows() != 3 || k.cols() != 3 {
            return Err(field("camera_matrix", "must be 3x3"));
        }
        let d = mat("distortion_coefficients", 4)?;
        let cam = Camera::from_mats(int("image_width")?, int("image_height")?, &k, &d)?;
        let sane = [cam.fx, cam.fy].iter().all(|f| f.is_finite() && *f > 0.0)
            && cam.distortion.as_array().iter().all(|c| c.is_finite());
        if !sane {
            return Err(field("camera_matrix", "has a non-positive focal length or non-finite values"));
        }
        Ok(cam)
    }

    /// Writes the camera as OpenCV FileStorage YAML, loadable by OpenCV's own tools.
    /// `extra` adds numeric fields (e.g. `avg_reprojection_error`).
    pub fn save(&self, path: &Path, extra: &[(&str, f64)]) -> Result<(), CameraError> {
        let name = path.to_str().ok_or_else(|| CameraError::Open { path: path.to_path_buf() })?;
        let mut fs = cv("create", FileStorage::new_def(name, opencv::core::FileStorage_Mode::WRITE as i32))?;
        if !cv("create", fs.is_opened())? {
            return Err(CameraError::Open { path: path.to_path_buf() });
        }
        cv("write", opencv::core::write_i32(&mut fs, "image_width", self.image_width as i32))?;
        cv("write", opencv::core::write_i32(&mut fs, "image_height", self.image_height as i32))?;
        cv("write", opencv::core::write_mat(&mut fs, "camera_matrix", &self.camera_matrix_mat()?))?;
        // OpenCV's own tools write the coefficients as a 5x1 column.
        let d = cv("write", self.dist_coeffs_mat()?.t().and_then(|t| t.to_mat()))?;
        cv("write", opencv::core::write_mat(&mut fs, "distortion_coefficients", &d))?;
        for (key, v) in extra {
            cv("write", opencv::core::write_f64(&mut fs, key, *v))?;
        }
        cv("write", fs.release())
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

    /// Reads a pose file written by [`CameraPose::save`] (OpenCV FileStorage with
    /// `rvec` and `tvec`, board mm).
    pub fn load(path: &Path) -> Result<CameraPose, CameraError> {
        let name = path.to_str().ok_or_else(|| CameraError::Open { path: path.to_path_buf() })?;
        if !path.is_file() {
            return Err(CameraError::Open { path: path.to_path_buf() });
        }
        let fs = FileStorage::new_def(name, opencv::core::FileStorage_Mode::READ as i32)
            .map_err(|_| CameraError::Open { path: path.to_path_buf() })?;
        let vec3 = |key: &str| -> Result<[f64; 3], CameraError> {
            let bad = || CameraError::Field {
                path: path.to_path_buf(),
                key: key.to_string(),
                problem: "is missing or not a 3-vector !!opencv-matrix".into(),
            };
            let node = cv(key, fs.get(key))?;
            let m = node.mat().map_err(|_| bad())?;
            if m.total() != 3 {
                return Err(bad());
            }
            let mut d = Mat::default();
            cv(key, m.convert_to_def(&mut d, opencv::core::CV_64F))?;
            let d = cv(key, d.reshape(1, 1))?;
            let v = [0, 1, 2].map(|i| d.at_2d::<f64>(0, i).copied().unwrap_or(f64::NAN));
            v.iter().all(|x| x.is_finite()).then_some(v).ok_or_else(bad)
        };
        Ok(CameraPose::from_rvec_tvec(vec3("rvec")?, vec3("tvec")?))
    }

    /// Writes the pose as OpenCV FileStorage (`rvec`, `tvec` in board mm, plus extra numbers).
    pub fn save(&self, path: &Path, extra: &[(&str, f64)]) -> Result<(), CameraError> {
        let name = path.to_str().ok_or_else(|| CameraError::Open { path: path.to_path_buf() })?;
        let mut fs = cv("create", FileStorage::new_def(name, opencv::core::FileStorage_Mode::WRITE as i32))?;
        if !cv("create", fs.is_opened())? {
            return Err(CameraError::Open { path: path.to_path_buf() });
        }
        let r = self.rvec();
        cv("write", opencv::core::write_mat(&mut fs, "rvec", &cv("rvec", Mat::from_slice_2d(&[[r[0]], [r[1]], [r[2]]]))?))?;
        let t = self.translation;
        cv("write", opencv::core::write_mat(&mut fs, "tvec", &cv("tvec", Mat::from_slice_2d(&[[t[0]], [t[1]], [t[2]]]))?))?;
        for (key, v) in extra {
            cv("write", opencv::core::write_f64(&mut fs, key, *v))?;
        }
        cv("write", fs.release())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use opencv::core::{Point3d, Vector};
    use proptest::prelude::*;

    /// OpenCV's reference calibration of its 640x480 chessboard camera (strong
    /// barrel distortion: k1 = -0.266).
    fn opencv_reference_camera() -> Camera {
        Camera {
            image_width: 640,
            image_height: 480,
            fx: 535.91573396163199,
            fy: 535.91573396163199,
            cx: 342.28315473308373,
            cy: 235.57082909788173,
            distortion: Distortion {
                k1: -0.26637260909660682,
                k2: -0.038588898922304653,
                p1: 0.0017831947042852964,
                p2: -0.00028122100441115472,
                k3: 0.23839153080878486,
            },
        }
    }

    fn overhead_pose() -> CameraPose {
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
        for rv in [[0.1, -0.2, 0.3], [2.0, 1.0, -0.5], [0.0, 0.0, 3.1], [3.14159, 0.0, 0.0]] {
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

    #[test]
    fn camera_files_round_trip_and_opencv_reference_loads() {
        let cam = opencv_reference_camera();
        let dir = std::env::temp_dir().join(format!("boardcall-cam-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("camera.yaml");
        cam.save(&path, &[("avg_reprojection_error", 0.39)]).unwrap();
        let back = Camera::load(&path).unwrap();
        assert_eq!(back, cam, "FileStorage writes doubles losslessly");
        let reference = Camera::load(Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/opencv-chessboard/left_intrinsics.yml")))
            .unwrap();
        assert!((reference.fx - cam.fx).abs() < 1e-9 && (reference.distortion.k3 - cam.distortion.k3).abs() < 1e-12);
        let pose = overhead_pose();
        let ppath = dir.join("pose.yaml");
        pose.save(&ppath, &[]).unwrap();
        let pback = CameraPose::load(&ppath).unwrap();
        for i in 0..3 {
            assert!((pback.translation[i] - pose.translation[i]).abs() < 1e-9);
        }
        std::fs::remove_dir_all(&dir).ok();
    }

    #[test]
    fn garbage_camera_files_are_clear_errors() {
        let dir = std::env::temp_dir().join(format!("boardcall-badcam-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("bad.yaml");
        std::fs::write(&path, "%YAML:1.0\n---\nimage_width: 640\nimage_height: 480\n").unwrap();
        let e = Camera::load(&path).unwrap_err().to_string();
        assert!(e.contains("camera_matrix") && e.contains("missing"), "{e}");
        std::fs::write(&path, "{{{{ not yaml").unwrap();
        assert!(matches!(Camera::load(&path), Err(CameraError::Open { .. })));
        assert!(matches!(Camera::load(&dir.join("none.yaml")), Err(CameraError::Open { .. })));
        std::fs::remove_dir_all(&dir).ok();
    }

    proptest! {
        /// Distort then undistort is the identity to 1e-6 px over the whole image,
        /// for the strongly distorted reference camera and the renderer's range of k1.
        #[test]
        fn distort_then_undistort_is_identity(u in 0.0f64..640.0, v in 0.0f64..480.0, k1 in -0.25f64..0.05) {
            for cam in [opencv_reference_camera(), Camera { distortion: Distortion { k1, k2: 0.02, p1: 0.001, p2: -0.0005, k3: 0.0 }, ..opencv_reference_camera() }] {
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
