//! Camera and pose files: OpenCV FileStorage (YAML, XML, JSON) as OpenCV's calibration tools, ROS's camera_info
//! files and `boardcall calibrate` write them, read with every value checked at the boundary, and written as text
//! in memory so that the caller can write the file atomically.

use super::{cv, BrownConrady, Camera, CameraError, CameraPose, Distortion, LensModel, CAMERA_MATRIX_ZERO_TOL};
use opencv::core::{FileNode, FileStorage, FileStorageTrait, FileStorageTraitConst, FileNodeTraitConst, FileStorage_Mode, Mat};
use opencv::prelude::*;
use std::path::Path;

/// A pose file's camera must be within 100 m of the board origin: no overhead camera is further from the board it
/// scores, and a larger distance is a unit mistake (micrometres for millimetres).
pub const MAX_CAMERA_DISTANCE_MM: f64 = 100_000.0;
/// A pose file's `rvec` is an axis-angle vector: OpenCV writes it at most pi long; longer than a full turn is not
/// a rotation any tool writes.
pub const MAX_RVEC_NORM: f64 = std::f64::consts::TAU;
/// OpenCV reads YAML only with its header line; a plain YAML file is read again with this in front.
const YAML_HEADER: &str = "%YAML:1.0\n";
/// The names a `distortion_model` key may have: OpenCV's interactive calibration / ROS / Kalibr spellings.
const BROWN_NAMES: [&str; 4] = ["brown", "plumb_bob", "rational_polynomial", "radtan"];
const FISHEYE_NAMES: [&str; 3] = ["fisheye", "equidistant", "kannala_brandt"];

pub(super) fn field(path: &Path, key: &str, problem: impl Into<String>) -> CameraError {
    CameraError::Field { path: path.to_path_buf(), key: key.to_string(), problem: problem.into() }
}

/// The values of any OpenCV matrix as `f64`, row by row (channels interleaved).
pub(super) fn mat_values(m: &Mat) -> Result<Vec<f64>, CameraError> {
    if m.empty() {
        return Ok(Vec::new());
    }
    let mut d = Mat::default();
    cv("matrix values", m.convert_to_def(&mut d, opencv::core::CV_64F))?;
    let d = cv("matrix values", d.reshape(1, 1))?.try_clone().map_err(|source| CameraError::OpenCv { context: "matrix values".into(), source })?;
    Ok(cv("matrix values", d.data_typed::<f64>())?.to_vec())
}

/// Checks the structure of a camera matrix (9 values, row-major): no skew, the last row `0 0 1`.
pub(super) fn check_camera_matrix(k: &[f64]) -> Result<(), String> {
    if k.len() != 9 {
        return Err(format!("has {} values; a camera matrix is 3x3", k.len()));
    }
    let tol = CAMERA_MATRIX_ZERO_TOL * k[0].abs().max(1.0);
    for (i, want) in [(1, 0.0), (3, 0.0), (6, 0.0), (7, 0.0), (8, 1.0)] {
        if !((k[i] - want).abs() <= tol) {
            let what = if i == 1 { " (skew: this camera model has none)" } else { "" };
            return Err(format!("element [{}][{}] = {} must be {want}{what}", i / 3, i % 3, k[i]));
        }
    }
    Ok(())
}

/// A Brown-Conrady lens from OpenCV's 4, 5, 8, 12 or 14 coefficients; the thin-prism and tilted-sensor terms of
/// 12 and 14 must be zero.
pub(super) fn brown_from_coefficients(d: &[f64]) -> Result<Distortion, String> {
    if ![4, 5, 8, 12, 14].contains(&d.len()) {
        return Err(format!("has {} values; OpenCV's model has 4, 5, 8, 12 or 14 (k1 k2 p1 p2 [k3 [k4 k5 k6 [s1..s4 [tauX tauY]]]])", d.len()));
    }
    const EXTRA: [(&str, &str); 6] = [
        ("s1", "thin-prism"),
        ("s2", "thin-prism"),
        ("s3", "thin-prism"),
        ("s4", "thin-prism"),
        ("tauX", "tilted-sensor"),
        ("tauY", "tilted-sensor"),
    ];
    for (i, v) in d.iter().enumerate().skip(8) {
        if *v != 0.0 {
            let (name, kind) = EXTRA[i - 8];
            return Err(format!(
                "has the {kind} coefficient {name} = {v} (value {} of {}): boardcall models k1..k6, p1, p2 only; recalibrate \
                 without CALIB_THIN_PRISM_MODEL / CALIB_TILTED_MODEL",
                i + 1,
                d.len()
            ));
        }
    }
    let c = |i: usize| d.get(i).copied().unwrap_or(0.0);
    Ok(Distortion::Brown(BrownConrady { k1: c(0), k2: c(1), p1: c(2), p2: c(3), k3: c(4), k4: c(5), k5: c(6), k6: c(7) }))
}

/// A fisheye lens from `cv::fisheye`'s 4 coefficients.
pub(super) fn fisheye_from_coefficients(d: &[f64]) -> Result<Distortion, String> {
    match d {
        [k1, k2, k3, k4] => Ok(Distortion::fisheye(*k1, *k2, *k3, *k4)),
        _ => Err(format!("has {} values; the fisheye model has 4 (k1 k2 k3 k4)", d.len())),
    }
}

/// Opens a FileStorage file for reading: as OpenCV reads it, or for a plain YAML file (no `%YAML:1.0` header,
/// written by hand or by another tool) again with the header in front; else says why it is not readable.
pub(super) fn open_storage(path: &Path) -> Result<FileStorage, CameraError> {
    if !path.is_file() {
        return Err(CameraError::Open { path: path.to_path_buf() });
    }
    if let Some(name) = path.to_str() {
        // OpenCV raises on malformed files; the text is tried below.
        if let Ok(fs) = FileStorage::new_def(name, FileStorage_Mode::READ as i32) {
            if fs.is_opened().unwrap_or(false) {
                return Ok(fs);
            }
        }
    }
    let bytes = std::fs::read(path).map_err(|_| CameraError::Open { path: path.to_path_buf() })?;
    let text = String::from_utf8(bytes).map_err(|_| field(path, "", "is not OpenCV FileStorage YAML/XML/JSON: not even UTF-8 text"))?;
    let first = match open_text(&text) {
        Ok(fs) => return Ok(fs),
        Err(e) => e,
    };
    let body = text.trim_start_matches('\u{feff}').trim_start();
    if body.is_empty() {
        return Err(field(path, "", "is empty"));
    }
    if ["%YAML", "<?xml", "{"].iter().any(|s| body.starts_with(s)) {
        return Err(field(path, "", format!("is not OpenCV FileStorage YAML/XML/JSON: {first}")));
    }
    open_text(&format!("{YAML_HEADER}{body}")).map_err(|e| {
        field(path, "", format!("is not OpenCV FileStorage YAML/XML/JSON: {e} (read as YAML, a `%YAML:1.0` line added in front)"))
    })
}

fn open_text(text: &str) -> Result<FileStorage, String> {
    let fs = FileStorage::new(text, FileStorage_Mode::READ as i32 | FileStorage_Mode::MEMORY as i32, "").map_err(|e| opencv_reason(&e))?;
    if !fs.is_opened().unwrap_or(false) {
        return Err("OpenCV could not open it".into());
    }
    Ok(fs)
}

/// The reason in an OpenCV exception, without its source location.
fn opencv_reason(e: &opencv::Error) -> String {
    let m = e.message.trim();
    let m = m.split_once(") ").filter(|(head, _)| head.contains("error: (")).map_or(m, |(_, rest)| rest);
    m.trim_end_matches(|c| c != '\'').strip_suffix('\'').and_then(|s| s.rsplit_once(" in function '")).map_or(m, |(r, _)| r).to_string()
}

/// A key's node, or `None` when the key is absent.
fn node(fs: &FileStorage, key: &str) -> Result<Option<FileNode>, CameraError> {
    let n = cv(key, fs.get(key))?;
    Ok((!cv(key, n.empty())? && !cv(key, n.is_none())?).then_some(n))
}

fn read_size(fs: &FileStorage, path: &Path, key: &str) -> Result<u32, CameraError> {
    let n = node(fs, key)?.ok_or_else(|| field(path, key, "is missing"))?;
    let v = if cv(key, n.is_int())? {
        cv(key, n.to_i32())? as f64
    } else if cv(key, n.is_real())? {
        cv(key, n.to_f64())?
    } else {
        return Err(field(path, key, "is not a number"));
    };
    if !(v.fract() == 0.0 && v >= 1.0 && v <= u32::MAX as f64) {
        return Err(field(path, key, format!("= {v}: an image side is a positive whole number of pixels")));
    }
    Ok(v as u32)
}

/// The numbers of a matrix-valued key: an `!!opencv-matrix`, a ROS-style `rows`/`cols`/`data` map, or a plain list.
fn read_numbers(fs: &FileStorage, path: &Path, key: &str) -> Result<Vec<f64>, CameraError> {
    let n = node(fs, key)?.ok_or_else(|| field(path, key, "is missing"))?;
    let not_matrix = || field(path, key, "is not a matrix (an !!opencv-matrix, a map of rows, cols and data, or a list of numbers)");
    let seq_numbers = |s: &FileNode| -> Result<Vec<f64>, CameraError> {
        (0..cv(key, s.size())?)
            .map(|i| {
                let e = cv(key, s.at(i as i32))?;
                if cv(key, e.is_int())? || cv(key, e.is_real())? {
                    cv(key, e.to_f64())
                } else {
                    Err(field(path, key, format!("value {} is not a number", i + 1)))
                }
            })
            .collect()
    };
    if cv(key, n.is_seq())? {
        return seq_numbers(&n);
    }
    if !cv(key, n.is_map())? {
        return Err(not_matrix());
    }
    // OpenCV's own matrices (any element type, base64 too) through OpenCV's reader.
    if let Ok(m) = n.mat() {
        if !m.empty() {
            return mat_values(&m);
        }
    }
    let data = cv(key, n.get("data"))?;
    if !cv(key, data.is_seq())? {
        return Err(not_matrix());
    }
    let values = seq_numbers(&data)?;
    let dim = |name: &str| -> Result<Option<usize>, CameraError> {
        let d = cv(key, n.get(name))?;
        if cv(key, d.empty())? || cv(key, d.is_none())? {
            return Ok(None);
        }
        let v = if cv(key, d.is_int())? { cv(key, d.to_i32())? } else { -1 };
        usize::try_from(v).map(Some).map_err(|_| field(path, key, format!("`{name}` is not a non-negative integer")))
    };
    if let (Some(r), Some(c)) = (dim("rows")?, dim("cols")?) {
        if r * c != values.len() {
            return Err(field(path, key, format!("is {r}x{c} but has {} values", values.len())));
        }
    }
    Ok(values)
}

/// The lens model a file names: `distortion_model` (a name, as OpenCV's interactive calibration and ROS write
/// it) or OpenCV's calibration tutorial's `fisheye_model: 1`; Brown-Conrady when neither is there.
fn read_model(fs: &FileStorage, path: &Path) -> Result<LensModel, CameraError> {
    let named = match node(fs, "distortion_model")? {
        None => None,
        Some(n) => {
            let name = if cv("distortion_model", n.is_string())? { cv("distortion_model", n.to_string())? } else { String::new() };
            let lower = name.trim().to_ascii_lowercase();
            if BROWN_NAMES.contains(&lower.as_str()) {
                Some(LensModel::Brown)
            } else if FISHEYE_NAMES.contains(&lower.as_str()) {
                Some(LensModel::Fisheye)
            } else {
                return Err(field(
                    path,
                    "distortion_model",
                    format!("`{name}` is not a model boardcall knows: one of {} (Brown-Conrady) or {} (fisheye)", BROWN_NAMES.join(", "), FISHEYE_NAMES.join(", ")),
                ));
            }
        }
    };
    let flagged = match node(fs, "fisheye_model")? {
        None => None,
        Some(n) => match (cv("fisheye_model", n.is_int())?).then(|| n.to_i32()).transpose().map_err(|source| CameraError::OpenCv { context: "fisheye_model".into(), source })? {
            Some(0) => Some(LensModel::Brown),
            Some(1) => Some(LensModel::Fisheye),
            _ => return Err(field(path, "fisheye_model", "must be 0 or 1")),
        },
    };
    match (named, flagged) {
        (Some(a), Some(b)) if a != b => {
            Err(field(path, "fisheye_model", format!("contradicts `distortion_model` ({} against {})", b.name(), a.name())))
        }
        (a, b) => Ok(a.or(b).unwrap_or_default()),
    }
}

/// Reads and checks a camera file ([`Camera::load`]).
pub(super) fn load_camera(path: &Path) -> Result<Camera, CameraError> {
    let fs = open_storage(path)?;
    let (w, h) = (read_size(&fs, path, "image_width")?, read_size(&fs, path, "image_height")?);
    let k = read_numbers(&fs, path, "camera_matrix")?;
    check_camera_matrix(&k).map_err(|p| field(path, "camera_matrix", p))?;
    let model = read_model(&fs, path)?;
    let d = read_numbers(&fs, path, "distortion_coefficients")?;
    let distortion = match model {
        LensModel::Brown => brown_from_coefficients(&d),
        LensModel::Fisheye => fisheye_from_coefficients(&d),
    }
    .map_err(|p| field(path, "distortion_coefficients", p))?;
    let cam = Camera { image_width: w, image_height: h, fx: k[0], fy: k[4], cx: k[2], cy: k[5], distortion };
    cam.check().map_err(|e| field(path, e.field.file_key(), e.to_string()))?;
    Ok(cam)
}

/// Reads and checks a pose file ([`CameraPose::load`]).
pub(super) fn load_pose(path: &Path) -> Result<CameraPose, CameraError> {
    let fs = open_storage(path)?;
    let vec3 = |key: &str| -> Result<[f64; 3], CameraError> {
        match read_numbers(&fs, path, key)?.as_slice() {
            [a, b, c] if [a, b, c].iter().all(|v| v.is_finite()) => Ok([*a, *b, *c]),
            [a, b, c] => Err(field(path, key, format!("= [{a}, {b}, {c}]: values must be finite"))),
            v => Err(field(path, key, format!("has {} values; it is a 3-vector", v.len()))),
        }
    };
    let (rvec, tvec) = (vec3("rvec")?, vec3("tvec")?);
    let norm = |v: [f64; 3]| (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt();
    if norm(rvec) > MAX_RVEC_NORM {
        return Err(field(path, "rvec", format!("is {:.3} rad long; an axis-angle rotation is at most a full turn ({MAX_RVEC_NORM:.3})", norm(rvec))));
    }
    // The camera centre is -R^T t: as far from the board origin as t is long.
    if norm(tvec) > MAX_CAMERA_DISTANCE_MM {
        return Err(field(
            path,
            "tvec",
            format!("puts the camera {:.0} mm from the board; at most {MAX_CAMERA_DISTANCE_MM} mm (100 m) is physical (units are mm)", norm(tvec)),
        ));
    }
    Ok(CameraPose::from_rvec_tvec(rvec, tvec))
}

fn memory_writer() -> Result<FileStorage, CameraError> {
    let mode = FileStorage_Mode::WRITE as i32 | FileStorage_Mode::MEMORY as i32 | FileStorage_Mode::FORMAT_YAML as i32;
    let fs = cv("create", FileStorage::new(".yml", mode, ""))?;
    if !cv("create", fs.is_opened())? {
        return Err(field(Path::new(""), "", "OpenCV could not start a FileStorage in memory"));
    }
    Ok(fs)
}

fn column(values: &[f64]) -> Result<Mat, CameraError> {
    let rows: Vec<[f64; 1]> = values.iter().map(|v| [*v]).collect();
    cv("write", Mat::from_slice_2d(&rows))
}

fn finish(mut fs: FileStorage, extra: &[(&str, f64)]) -> Result<String, CameraError> {
    for (key, v) in extra {
        cv("write", opencv::core::write_f64(&mut fs, key, *v))?;
    }
    cv("write", fs.release_and_get_string())
}

/// The camera file's text ([`Camera::to_file_string`]): OpenCV's calibration sample's layout (coefficients as a
/// column), plus `distortion_model` when the lens is not the classic 5-coefficient one.
pub(super) fn camera_text(cam: &Camera, extra: &[(&str, f64)]) -> Result<String, CameraError> {
    let mut fs = memory_writer()?;
    cv("write", opencv::core::write_i32(&mut fs, "image_width", cam.image_width as i32))?;
    cv("write", opencv::core::write_i32(&mut fs, "image_height", cam.image_height as i32))?;
    cv("write", opencv::core::write_mat(&mut fs, "camera_matrix", &cam.camera_matrix_mat()?))?;
    let model = match cam.distortion {
        Distortion::Brown(b) if b.is_rational() => Some("rational_polynomial"),
        Distortion::Brown(_) => None,
        Distortion::Fisheye(_) => Some("fisheye"),
    };
    if let Some(name) = model {
        cv("write", opencv::core::write_str(&mut fs, "distortion_model", name))?;
    }
    cv("write", opencv::core::write_mat(&mut fs, "distortion_coefficients", &column(&cam.distortion.coefficients())?))?;
    finish(fs, extra)
}

/// The pose file's text ([`CameraPose::to_file_string`]).
pub(super) fn pose_text(pose: &CameraPose, extra: &[(&str, f64)]) -> Result<String, CameraError> {
    let mut fs = memory_writer()?;
    cv("write", opencv::core::write_mat(&mut fs, "rvec", &column(&pose.rvec())?))?;
    cv("write", opencv::core::write_mat(&mut fs, "tvec", &column(&pose.translation)?))?;
    finish(fs, extra)
}
