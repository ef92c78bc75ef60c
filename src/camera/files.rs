//! Camera and pose files: OpenCV FileStorage (YAML, XML, JSON) as OpenCV's calibration tools, ROS's camera_info
//! files and `boardcall calibrate` write them, read with every value checked at the boundary, and written as text
//! in memory so that the caller can write the file atomically.

use super::{cv, BrownConrady, Camera, CameraError, CameraPose, FittedConstruction, Distortion, FileKind, LensModel, PoseFile, CAMERA_MATRIX_ZERO_TOL};
use opencv::core::{FileNode, FileNode_MAP, FileStorage, FileStorageTrait, FileStorageTraitConst, FileNodeTraitConst, FileStorage_Mode, Mat};
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
    CameraError::Field { file: FileKind::Camera, path: path.to_path_buf(), key: key.to_string(), problem: problem.into() }
}

/// The values of any OpenCV matrix as `f64`, row by row (channels interleaved).
pub(super) fn mat_values(m: &Mat) -> Result<Vec<f64>, CameraError> {
    if m.empty() {
        return Ok(Vec::new());
    }
    let mut d = Mat::default();
    cv("matrix values", m.convert_to_def(&mut d, opencv::core::CV_64F))?;
    let d = cv("matrix values", cv("matrix values", d.reshape(1, 1))?.try_clone())?;
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
        return Err(format!(
            "has {} values; OpenCV's model has 4, 5, 8, 12 or 14 (k1 k2 p1 p2 [k3 [k4 k5 k6 [s1..s4 [tauX tauY]]]])",
            d.len()
        ));
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
        return Err(CameraError::Open { file: FileKind::Camera, path: path.to_path_buf() });
    }
    if let Some(name) = path.to_str() {
        // OpenCV raises on malformed files; the text is tried below.
        if let Ok(fs) = FileStorage::new_def(name, FileStorage_Mode::READ as i32) {
            if fs.is_opened().unwrap_or(false) {
                return Ok(fs);
            }
        }
    }
    let bytes = std::fs::read(path).map_err(|_| CameraError::Open { file: FileKind::Camera, path: path.to_path_buf() })?;
    let text = String::from_utf8(bytes).map_err(|_| field(path, "", "is not OpenCV FileStorage YAML/XML/JSON: not even UTF-8 text"))?;
    let first = match open_text(&text, 1) {
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
    // Line numbers: the body starts where the text's first non-blank line is.
    let skipped = text[..text.len() - body.len()].matches('\n').count() as i64;
    open_text(&format!("{YAML_HEADER}{body}"), skipped).map_err(|e| {
        field(path, "", format!("is not OpenCV FileStorage YAML/XML/JSON: {e} (read as YAML without OpenCV's `%YAML:1.0` header)"))
    })
}

/// Opens text as FileStorage; the text's line 1 is the file's `first_line` (0 for a header added in front).
fn open_text(text: &str, first_line: i64) -> Result<FileStorage, String> {
    let mode = FileStorage_Mode::READ as i32 | FileStorage_Mode::MEMORY as i32;
    let fs = FileStorage::new(text, mode, "").map_err(|e| opencv_reason(&e, first_line))?;
    if !fs.is_opened().unwrap_or(false) {
        return Err("OpenCV could not open it".into());
    }
    Ok(fs)
}

/// The reason in an OpenCV exception, without its source location. A parse error of text read from memory comes
/// as `<parser> in function '<text>(<line>): <message>'`: that is `line N: <message>`, lines counted from
/// `first_line`.
fn opencv_reason(e: &opencv::Error, first_line: i64) -> String {
    let m = e.message.trim();
    let rest = m.find("error: (").and_then(|i| m[i..].find(") ").map(|j| &m[i + j + 2..])).unwrap_or(m);
    let Some((what, quoted)) = rest.split_once(" in function '") else {
        return rest.to_string();
    };
    let quoted = quoted.strip_suffix('\'').unwrap_or(quoted);
    if let Some(close) = quoted.rfind("): ") {
        if let Some(line) = quoted[..close].rfind('(').and_then(|open| quoted[open + 1..close].parse::<i64>().ok()) {
            return format!("line {}: {}", line - 1 + first_line, &quoted[close + 3..]);
        }
    }
    what.to_string()
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
                    format!(
                        "`{name}` is not a model boardcall knows: one of {} (Brown-Conrady) or {} (fisheye)",
                        BROWN_NAMES.join(", "),
                        FISHEYE_NAMES.join(", ")
                    ),
                ));
            }
        }
    };
    let flagged = match node(fs, "fisheye_model")? {
        None => None,
        Some(n) => {
            let flag = if cv("fisheye_model", n.is_int())? { Some(cv("fisheye_model", n.to_i32())?) } else { None };
            match flag {
                Some(0) => Some(LensModel::Brown),
                Some(1) => Some(LensModel::Fisheye),
                _ => return Err(field(path, "fisheye_model", "must be 0 or 1")),
            }
        }
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
    cam.check().map_err(|e| field(path, e.field.file_key(), e.file_problem()))?;
    Ok(cam)
}

/// Reads and checks a pose file ([`CameraPose::load`]).
pub(super) fn load_pose(path: &Path) -> Result<CameraPose, CameraError> {
    open_storage(path).and_then(|fs| pose_in(&fs, path)).map_err(CameraError::in_pose_file)
}

/// A pose file's pose ([`load_pose`]) and the `position_sigma_mm` it records (written by `locate -o` and `setup`):
/// `None` when the file has none or records it as unknown (not a number); an error when it is negative.
pub(super) fn load_pose_recorded(path: &Path) -> Result<(CameraPose, Option<f64>), CameraError> {
    load_pose_file(path).map(|f| (f.pose, f.position_sigma_mm))
}

/// A pose file whole ([`PoseFile::load`]): the pose, its recorded `position_sigma_mm` ([`load_pose_recorded`]) and
/// the `construction` map `locate -o` writes (empty when the file has none).
pub(super) fn load_pose_file(path: &Path) -> Result<PoseFile, CameraError> {
    let read = || -> Result<PoseFile, CameraError> {
        let fs = open_storage(path)?;
        Ok(PoseFile { pose: pose_in(&fs, path)?, position_sigma_mm: pose_sigma_in(&fs, path)?, construction: construction_in(&fs, path)? })
    };
    read().map_err(CameraError::in_pose_file)
}

/// A construction dimension in a pose file is at most this, mm: a wall, rail or gutter metres across is a unit
/// mistake, not a table.
const MAX_CONSTRUCTION_MM: f64 = 2_000.0;

/// The `construction` map of an opened pose file `fs` read from `path`: each key a dimension's name, each value a
/// finite number of mm from 0 to [`MAX_CONSTRUCTION_MM`].
fn construction_in(fs: &FileStorage, path: &Path) -> Result<FittedConstruction, CameraError> {
    const KEY: &str = "construction";
    let Some(n) = node(fs, KEY)? else { return Ok(FittedConstruction::new()) };
    if !cv(KEY, n.is_map())? {
        return Err(field(path, KEY, "is not a map of dimensions (name: mm)"));
    }
    let mut out = FittedConstruction::new();
    for name in cv(KEY, n.keys())? {
        let v = cv(KEY, n.get(&name))?;
        let at = format!("{KEY}.{name}");
        if !(cv(KEY, v.is_real())? || cv(KEY, v.is_int())?) {
            return Err(field(path, &at, "is not a number"));
        }
        let mm = cv(KEY, v.to_f64())?;
        if !(mm.is_finite() && (0.0..=MAX_CONSTRUCTION_MM).contains(&mm)) {
            return Err(field(path, &at, format!("= {mm}: a dimension of the board's construction is from 0 to {MAX_CONSTRUCTION_MM} mm")));
        }
        out.insert(name, mm);
    }
    Ok(out)
}

/// The pose in an opened pose file `fs` read from `path`.
fn pose_in(fs: &FileStorage, path: &Path) -> Result<CameraPose, CameraError> {
    let vec3 = |key: &str| -> Result<[f64; 3], CameraError> {
        match read_numbers(fs, path, key)?.as_slice() {
            [a, b, c] if [a, b, c].iter().all(|v| v.is_finite()) => Ok([*a, *b, *c]),
            [a, b, c] => Err(field(path, key, format!("= [{a}, {b}, {c}]: values must be finite"))),
            v => Err(field(path, key, format!("has {} values; it is a 3-vector", v.len()))),
        }
    };
    let (rvec, tvec) = (vec3("rvec")?, vec3("tvec")?);
    let norm = |v: [f64; 3]| (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt();
    if norm(rvec) > MAX_RVEC_NORM {
        let problem = format!("is {:.3} rad long; an axis-angle rotation is at most a full turn ({MAX_RVEC_NORM:.3})", norm(rvec));
        return Err(field(path, "rvec", problem));
    }
    // The camera centre is -R^T t: as far from the board origin as t is long.
    if norm(tvec) > MAX_CAMERA_DISTANCE_MM {
        return Err(field(
            path,
            "tvec",
            format!(
                "puts the camera {:.0} mm from the board; at most {MAX_CAMERA_DISTANCE_MM} mm (100 m) is physical (units are mm)",
                norm(tvec)
            ),
        ));
    }
    Ok(CameraPose::from_rvec_tvec(rvec, tvec))
}

/// The `position_sigma_mm` an opened pose file `fs` read from `path` records.
fn pose_sigma_in(fs: &FileStorage, path: &Path) -> Result<Option<f64>, CameraError> {
    const KEY: &str = "position_sigma_mm";
    let Some(n) = node(fs, KEY)? else { return Ok(None) };
    if !(cv(KEY, n.is_real())? || cv(KEY, n.is_int())?) {
        return Err(field(path, KEY, "is not a number"));
    }
    let v = cv(KEY, n.to_f64())?;
    if v.is_nan() {
        return Ok(None);
    }
    if v < 0.0 {
        return Err(field(path, KEY, format!("= {v}: a standard deviation is not negative")));
    }
    Ok(Some(v))
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
pub(super) fn pose_text(pose: &CameraPose, extra: &[(&str, f64)], construction: &FittedConstruction) -> Result<String, CameraError> {
    let mut fs = memory_writer()?;
    cv("write", opencv::core::write_mat(&mut fs, "rvec", &column(&pose.rvec())?))?;
    cv("write", opencv::core::write_mat(&mut fs, "tvec", &column(&pose.translation)?))?;
    if !construction.is_empty() {
        cv("write", fs.start_write_struct("construction", FileNode_MAP, ""))?;
        for (name, mm) in construction {
            cv("write", opencv::core::write_f64(&mut fs, name, *mm))?;
        }
        cv("write", fs.end_write_struct())?;
    }
    finish(fs, extra)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::camera::{FittedConstruction, KannalaBrandt};
    use std::path::PathBuf;

    fn fixture(rel: &str) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)
    }

    /// A scratch folder of this test process, removed on drop.
    struct Scratch(PathBuf);

    impl Scratch {
        fn new(name: &str) -> Scratch {
            let dir = std::env::temp_dir().join(format!("boardcall-{name}-{}", std::process::id()));
            std::fs::create_dir_all(&dir).unwrap();
            Scratch(dir)
        }

        fn write(&self, name: &str, text: &str) -> PathBuf {
            let p = self.0.join(name);
            std::fs::write(&p, text).unwrap();
            p
        }
    }

    impl Drop for Scratch {
        fn drop(&mut self) {
            std::fs::remove_dir_all(&self.0).ok();
        }
    }

    /// Whether two cameras agree to 1e-12 relative in every value. FileStorage writes 17 significant digits, so a
    /// round trip is exact in practice; the tolerance is the house rule for floats, far below anything measurable.
    fn same(a: &Camera, b: &Camera) -> bool {
        let close = |x: f64, y: f64| (x - y).abs() <= 1e-12 * x.abs().max(y.abs()).max(1.0);
        let (da, db) = (a.distortion.named_coefficients(), b.distortion.named_coefficients());
        a.size() == b.size()
            && a.distortion.model() == b.distortion.model()
            && [(a.fx, b.fx), (a.fy, b.fy), (a.cx, b.cx), (a.cy, b.cy)].iter().all(|(x, y)| close(*x, *y))
            && da.iter().zip(&db).all(|((_, x), (_, y))| close(*x, *y))
    }

    fn reference() -> Camera {
        Camera::load(&fixture("fixtures/opencv-chessboard/left_intrinsics.yml")).unwrap()
    }

    /// The file-level error of a load, as (key, message).
    fn refusal(path: &Path) -> (String, String) {
        match Camera::load(path) {
            Err(e @ CameraError::Field { .. }) => {
                let CameraError::Field { ref key, .. } = e else { unreachable!() };
                (key.clone(), e.to_string())
            }
            other => panic!("expected a field error, got {other:?}"),
        }
    }

    const PLAIN_ROS: &str = "image_width: 1280
image_height: 960
camera_name: overhead
camera_matrix:
  rows: 3
  cols: 3
  data: [1000.5, 0, 640.25, 0, 1001.0, 480.75, 0, 0, 1]
distortion_model: plumb_bob
distortion_coefficients:
  rows: 1
  cols: 5
  data: [-0.11, 0.037, 0.0001, -0.0003, 0.002]
";

    #[test]
    fn camera_files_round_trip_and_opencv_reference_loads() {
        let dir = Scratch::new("cam");
        let cam = reference();
        assert!((cam.fx - 535.91573396163199).abs() < 1e-9, "{cam:?}");
        let path = dir.0.join("camera.yaml");
        cam.save(&path, &[("avg_reprojection_error", 0.39)]).unwrap();
        assert!(same(&Camera::load(&path).unwrap(), &cam), "FileStorage writes doubles losslessly");
        let pose = CameraPose::look_at(
            crate::geom::BoardPoint3::new(30.0, 400.0, 1800.0),
            crate::geom::BoardPoint3::new(0.0, 300.0, 0.0),
            [0.0, -1.0, 0.0],
        )
        .unwrap();
        let ppath = dir.0.join("pose.yaml");
        pose.save(&ppath, &[("reprojection_rms_px", 0.2)]).unwrap();
        let back = CameraPose::load(&ppath).unwrap();
        // The rotation goes through rvec and back: 1e-9 mm is float noise.
        assert!((0..3).all(|i| (back.translation[i] - pose.translation[i]).abs() < 1e-9));
    }

    /// `to_file_string` writes what the file-based writer wrote: the fixtures' camera files come back byte for byte.
    #[test]
    fn fixture_camera_files_write_back_byte_for_byte() {
        for scene in ["00-shuffleboard-22ft-plain", "05-shuffleboard-22ft-line_edge"] {
            let path = fixture(&format!("fixtures/scenes/{scene}/camera.yaml"));
            let text = std::fs::read_to_string(&path).unwrap();
            assert_eq!(Camera::load(&path).unwrap().to_file_string(&[]).unwrap(), text, "{scene}");
        }
    }

    #[test]
    fn a_nan_principal_point_is_refused() {
        let dir = Scratch::new("nan-cx");
        let cam = Camera { cx: f64::NAN, ..reference() };
        let path = dir.write("nan.yaml", &camera_text(&cam, &[]).unwrap());
        let (key, e) = refusal(&path);
        assert!(key == "camera_matrix" && e.contains("cx") && e.contains("NaN"), "{e}");
        let far = Camera { cy: 480.0 * 1.6, ..reference() };
        let (key, e) = refusal(&dir.write("far.yaml", &camera_text(&far, &[]).unwrap()));
        assert!(key == "camera_matrix" && e.contains("cy"), "{e}");
    }

    #[test]
    fn a_plain_yaml_file_is_accepted() {
        let dir = Scratch::new("plain");
        let cam = Camera::load(&dir.write("ros.yaml", PLAIN_ROS)).unwrap();
        assert_eq!((cam.image_width, cam.image_height), (1280, 960));
        // Decimal literals parse to the nearest double: exact to 1e-12.
        assert!((cam.cx - 640.25).abs() < 1e-12 && (cam.fy - 1001.0).abs() < 1e-12, "{cam:?}");
        assert!((cam.distortion.as_brown().unwrap().k3 - 0.002).abs() < 1e-12);
        // A hand-written file with plain lists and a comment.
        let hand = "# measured by hand\nimage_width: 640\nimage_height: 480\ncamera_matrix: [500, 0, 320, 0, 500, 240, 0, 0, 1]\n\
                    distortion_coefficients: [0.01, 0, 0, 0]\n";
        let cam = Camera::load(&dir.write("hand.yml", hand)).unwrap();
        assert!((cam.distortion.as_brown().unwrap().k1 - 0.01).abs() < 1e-12);
    }

    #[test]
    fn garbage_is_refused_with_the_field_named() {
        let dir = Scratch::new("garbage");
        let (key, e) = refusal(&dir.write("missing.yaml", "%YAML:1.0\n---\nimage_width: 640\nimage_height: 480\n"));
        assert!(key == "camera_matrix" && e.contains("missing"), "{e}");
        let (key, e) = refusal(&dir.write("word.yaml", &PLAIN_ROS.replace("image_width: 1280", "image_width: wide")));
        assert!(key == "image_width" && e.contains("not a number"), "{e}");
        let (key, e) = refusal(&dir.write("text.yaml", &PLAIN_ROS.replace("0.037,", "zero,")));
        assert!(key == "distortion_coefficients" && e.contains("value 2"), "{e}");
        let (key, e) = refusal(&dir.write("skew.yaml", &PLAIN_ROS.replace("1000.5, 0,", "1000.5, 3,")));
        assert!(key == "camera_matrix" && e.contains("skew"), "{e}");
        let (key, e) = refusal(&dir.write("model.yaml", &PLAIN_ROS.replace("plumb_bob", "double_sphere")));
        assert!(key == "distortion_model" && e.contains("double_sphere"), "{e}");
        let (key, e) = refusal(&dir.write("junk.yaml", "{{{{ not yaml"));
        assert!(key.is_empty() && e.contains("not OpenCV FileStorage YAML/XML/JSON"), "{e}");
        let (key, e) = refusal(&dir.write("colons.yaml", "image_width 640\nimage_height: : 480\n"));
        assert!(key.is_empty() && e.contains("not OpenCV FileStorage YAML/XML/JSON"), "{e}");
        let (key, e) = refusal(&dir.write("empty.yaml", "\n"));
        assert!(key.is_empty() && e.contains("empty"), "{e}");
        assert!(matches!(Camera::load(&dir.0.join("none.yaml")), Err(CameraError::Open { .. })));
    }

    /// A bad pose file is reported as the pose file (it is read by the camera files' parser), never as the camera
    /// file given beside it.
    #[test]
    fn a_bad_pose_file_is_named_as_the_pose_file() {
        let dir = Scratch::new("pose");
        for (name, text) in [("junk.yaml", "garbage"), ("nan.yaml", "%YAML:1.0\n---\nrvec: [ .nan, 0, 0 ]\ntvec: [ 0, 0, 1000 ]\n")] {
            let path = dir.write(name, text);
            for e in [CameraPose::load(&path).unwrap_err(), CameraPose::load_recorded(&path).unwrap_err()] {
                let text = e.to_string();
                assert!(matches!(e, CameraError::Field { file: FileKind::Pose, .. }) && text.starts_with("pose file ") && !text.contains("camera file"), "{text}");
            }
        }
        let missing = dir.0.join("none.yaml");
        assert!(matches!(CameraPose::load(&missing), Err(CameraError::Open { file: FileKind::Pose, .. })));
        assert!(CameraPose::load(&missing).unwrap_err().to_string().starts_with("cannot open pose file"));
    }

    #[test]
    fn an_absurd_size_is_refused() {
        let dir = Scratch::new("size");
        let sizes = [("image_width: 1280", "image_width: 100000"), ("image_height: 960", "image_height: 2"), ("image_width: 1280", "image_width: -5")];
        for (from, to) in sizes {
            let (key, e) = refusal(&dir.write("size.yaml", &PLAIN_ROS.replace(from, to)));
            assert!(from.starts_with(&key) && !key.is_empty(), "{key}: {e}");
        }
        // 8K either way round is accepted; larger on both sides is not.
        let (key, e) = refusal(&dir.write("9k.yaml", &PLAIN_ROS.replace("1280", "7680").replace("960", "4400")));
        assert!(key == "image_height" && e.contains("8K"), "{e}");
        let big = PLAIN_ROS.replace("1280", "4320").replace("960", "7680").replace("640.25", "2160").replace("480.75", "3840");
        Camera::load(&dir.write("8k.yaml", &big)).unwrap();
        let (key, e) = refusal(&dir.write("focal.yaml", &PLAIN_ROS.replace("1000.5", "0.5")));
        assert!(key == "camera_matrix" && e.contains("fx"), "{e}");
    }

    #[test]
    fn an_eight_coefficient_rational_file_is_read_with_all_eight() {
        let dir = Scratch::new("rational");
        let text = PLAIN_ROS
            .replace("plumb_bob", "rational_polynomial")
            .replace("cols: 5", "cols: 8")
            .replace("0.002]", "0.002, 0.21, -0.03, 0.004]");
        let cam = Camera::load(&dir.write("r.yaml", &text)).unwrap();
        let b = *cam.distortion.as_brown().unwrap();
        assert!((b.k4 - 0.21).abs() < 1e-12 && (b.k5 + 0.03).abs() < 1e-12 && (b.k6 - 0.004).abs() < 1e-12, "{b:?}");
        // OpenCV's own form (8x1 !!opencv-matrix, no model key) round-trips, naming the model.
        let out = cam.to_file_string(&[]).unwrap();
        assert!(out.contains("distortion_model: rational_polynomial") && out.contains("rows: 8"), "{out}");
        assert!(same(&Camera::load(&dir.write("r2.yaml", &out)).unwrap(), &cam));
    }

    #[test]
    fn extra_coefficients_are_refused_unless_zero() {
        let dir = Scratch::new("tilt");
        let zeros = ", 0.21, -0.03, 0.004, 0, 0, 0, 0, 0, 0]";
        let text = PLAIN_ROS.replace("plumb_bob", "rational_polynomial").replace("cols: 5", "cols: 14");
        let ok = Camera::load(&dir.write("zero.yaml", &text.replace("0.002]", &format!("0.002{zeros}")))).unwrap();
        assert!((ok.distortion.as_brown().unwrap().k6 - 0.004).abs() < 1e-12);
        let tilted = text.replace("0.002]", "0.002, 0.21, -0.03, 0.004, 0, 0, 0, 0, 0.0015, 0]");
        let (key, e) = refusal(&dir.write("tilt.yaml", &tilted));
        assert!(key == "distortion_coefficients" && e.contains("tauX") && e.contains("tilted"), "{e}");
        let prism = text.replace("cols: 14", "cols: 12").replace("0.002]", "0.002, 0.21, -0.03, 0.004, 0, 0.001, 0, 0]");
        let (key, e) = refusal(&dir.write("prism.yaml", &prism));
        assert!(key == "distortion_coefficients" && e.contains("s2"), "{e}");
        let (key, e) = refusal(&dir.write("six.yaml", &PLAIN_ROS.replace("cols: 5", "cols: 6").replace("0.002]", "0.002, 0.1]")));
        assert!(key == "distortion_coefficients" && e.contains("6 values"), "{e}");
    }

    #[test]
    fn a_fisheye_file_round_trips() {
        let dir = Scratch::new("fisheye");
        let cam = Camera {
            distortion: Distortion::Fisheye(KannalaBrandt { k1: -0.013, k2: -0.0084, k3: 0.0039, k4: -0.0008 }),
            ..reference()
        };
        let text = cam.to_file_string(&[("avg_reprojection_error", 0.3)]).unwrap();
        assert!(text.starts_with("%YAML:1.0") && text.contains("distortion_model: fisheye") && text.contains("rows: 4"), "{text}");
        let path = dir.write("fisheye.yaml", &text);
        assert!(same(&Camera::load(&path).unwrap(), &cam));
        cam.save(&path, &[]).unwrap();
        assert!(same(&Camera::load(&path).unwrap(), &cam));
        // OpenCV's calibration tutorial marks a fisheye with `fisheye_model: 1` instead.
        let tutorial = text.replace("distortion_model: fisheye", "fisheye_model: 1");
        assert!(same(&Camera::load(&dir.write("tutorial.yaml", &tutorial)).unwrap(), &cam));
        let both = text.replace("distortion_model: fisheye", "distortion_model: fisheye\nfisheye_model: 0");
        let (key, e) = refusal(&dir.write("both.yaml", &both));
        assert!(key == "fisheye_model" && e.contains("contradicts"), "{e}");
        let (key, e) = refusal(&dir.write("five.yaml", &PLAIN_ROS.replace("plumb_bob", "equidistant")));
        assert!(key == "distortion_coefficients" && e.contains("fisheye model has 4"), "{e}");
    }

    #[test]
    fn pose_files_must_be_finite_and_physical() {
        let dir = Scratch::new("pose");
        let pose = |r: &str, t: &str| format!("%YAML:1.0\n---\nrvec: [{r}]\ntvec: [{t}]\n");
        CameraPose::load(&dir.write("ok.yaml", &pose("0.1, -3.0, 0.2", "10, 400, 1800"))).unwrap();
        let refused = |name: &str, text: String| match CameraPose::load(&dir.write(name, &text)) {
            Err(CameraError::Field { key, problem, .. }) => (key, problem),
            other => panic!("{name}: {other:?}"),
        };
        let (key, p) = refused("nan.yaml", pose("0.1, .nan, 0.2", "10, 400, 1800"));
        assert!(key == "rvec" && p.contains("finite"), "{p}");
        let (key, p) = refused("far.yaml", pose("0.1, 0.1, 0.2", "10, 400, 1.8e6"));
        assert!(key == "tvec" && p.contains("100 m"), "{p}");
        let (key, p) = refused("spin.yaml", pose("0.1, 70, 0.2", "10, 400, 1800"));
        assert!(key == "rvec" && p.contains("full turn"), "{p}");
        let (key, p) = refused("short.yaml", pose("0.1, 0.2", "10, 400, 1800"));
        assert!(key == "rvec" && p.contains("3-vector"), "{p}");
    }

    #[test]
    fn a_pose_files_construction_round_trips_and_garbage_in_it_is_named() {
        let dir = Scratch::new("pose-construction");
        let mut written = PoseFile { pose: CameraPose::from_rvec_tvec([0.1, -3.0, 0.2], [10.0, 400.0, 1800.0]), position_sigma_mm: Some(0.4), construction: FittedConstruction::new() };
        written.construction.insert("wall_height_mm".into(), 68.622024327462);
        written.construction.insert("gate_bar_height_mm".into(), 23.5);
        let path = dir.0.join("pose.yaml");
        written.save(&path, &[("coverage", 0.9)]).unwrap();
        let read = PoseFile::load(&path).unwrap();
        assert_eq!(read.construction.keys().collect::<Vec<_>>(), ["gate_bar_height_mm", "wall_height_mm"]);
        for (k, v) in &written.construction {
            // Written with 17 significant digits: read back to the last bit but one.
            assert!((read.construction[k] - v).abs() <= 1e-12 * v, "{k}: {v} read back as {}", read.construction[k]);
        }
        assert!(read.position_sigma_mm.is_some_and(|s| (s - 0.4).abs() <= 1e-12));
        // A file without one (typed by hand, from typed points, an older `locate`) reads as none.
        let plain = "%YAML:1.0\n---\nrvec: [0.1, -3.0, 0.2]\ntvec: [10, 400, 1800]\n";
        assert!(PoseFile::load(&dir.write("plain.yaml", plain)).unwrap().construction.is_empty());
        let refused = |name: &str, tail: &str| match PoseFile::load(&dir.write(name, &format!("{plain}{tail}"))) {
            Err(CameraError::Field { file: FileKind::Pose, key, problem, .. }) => (key, problem),
            other => panic!("{name}: {other:?}"),
        };
        let (key, p) = refused("list.yaml", "construction: [1, 2]\n");
        assert!(key == "construction" && p.contains("map"), "{p}");
        let (key, p) = refused("word.yaml", "construction:\n   wall_height_mm: tall\n");
        assert!(key == "construction.wall_height_mm" && p.contains("not a number"), "{p}");
        let (key, p) = refused("nan.yaml", "construction:\n   wall_height_mm: .nan\n");
        assert!(key == "construction.wall_height_mm" && p.contains("0 to"), "{p}");
        let (key, p) = refused("negative.yaml", "construction:\n   wall_height_mm: -4\n");
        assert!(key == "construction.wall_height_mm" && p.contains("0 to"), "{p}");
        let (key, _) = refused("metres.yaml", "construction:\n   wall_height_mm: 7.0e4\n");
        assert_eq!(key, "construction.wall_height_mm");
    }

    #[test]
    fn in_memory_cameras_are_checked_too() {
        let k = Mat::from_slice_2d(&[[500.0, 0.0, 320.0], [0.0, 500.0, 240.0], [0.0, 0.0, 1.0]]).unwrap();
        let d8 = Mat::from_slice_2d(&[[0.1, 0.01, 0.0, 0.0, 0.001, 0.2, 0.0, 0.0]]).unwrap();
        let cam = Camera::from_mats(640, 480, &k, &d8).unwrap();
        assert!((cam.distortion.as_brown().unwrap().k4 - 0.2).abs() < 1e-15);
        let e = Camera::from_mats(64_000, 480, &k, &d8).unwrap_err().to_string();
        assert!(e.starts_with("camera: `image_width`"), "{e}");
        let d4 = Mat::from_slice_2d(&[[0.1, 0.01, 0.0, 0.0]]).unwrap();
        let f = Camera::from_fisheye_mats(640, 480, &k, &d4).unwrap();
        assert_eq!(f.distortion.model(), LensModel::Fisheye);
        assert!(f.dist_coeffs_mat().is_err() && cam.fisheye_coeffs_mat().is_err());
    }
}
