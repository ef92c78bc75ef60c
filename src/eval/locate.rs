//! Evaluation of the `Undistorted -> BoardPose` stage alone: locates the board
//! in every scene of a folder with no hint and compares the pose with the true one
//! where it matters (the image positions of the board's corners and the board
//! positions of what the camera sees), and the reported uncertainty with the error.
//!
//! Reads two layouts of a scene folder: this project's fixtures (`truth.json`
//! format 1, `camera.yaml`) and the external renders' (`truth.json` with
//! `camera_pose.R_board_to_cam` and `t_mm`, `camera.yaml`, `image.jpg`).

use crate::board::Board;
use crate::camera::{Camera, CameraPose};
use crate::frame::Frame;
use crate::geom::{BoardPoint3, PixelPoint};
use crate::locate::{LocateConfig, Locator};
use crate::undistort::{UndistortConfig, Undistorter};
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// A located corner this far (px) from the true pose's projection misses (issue 13's bar).
pub const MAX_CORNER_ERROR_PX: f64 = 1.5;
/// Board points are compared on a grid this fine, mm: fine enough that the worst
/// visible point is within a few mm of a grid point on every board.
const GRID_STEP_MM: f64 = 25.0;
/// The reported sigma covers the error when the error is at most this many sigmas.
pub const SIGMA_COVERAGE: f64 = 3.0;

/// A camera a little off a scene's true one (`eval-locate --camera-off`): how the search copes with a calibration
/// that is not exact, as every real one is. The focal lengths are scaled by `1 + focal_percent / 100` and the
/// principal point moved by `principal_px`; the lens's distortion is kept.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct CameraOffset {
    pub focal_percent: f64,
    pub principal_px: [f64; 2],
}

impl CameraOffset {
    /// `cam` this far off.
    pub fn apply(&self, cam: &Camera) -> Camera {
        let scale = 1.0 + self.focal_percent / 100.0;
        Camera { fx: cam.fx * scale, fy: cam.fy * scale, cx: cam.cx + self.principal_px[0], cy: cam.cy + self.principal_px[1], ..*cam }
    }
}

impl std::str::FromStr for CameraOffset {
    type Err = String;

    /// `F,DX,DY`: the focal length's change in per cent, the principal point's move in px (e.g. `0.5,0,0`, `0,4,-4`).
    fn from_str(text: &str) -> Result<CameraOffset, String> {
        let parts: Vec<f64> = text.split(',').map(|v| v.trim().parse::<f64>()).collect::<Result<_, _>>().map_err(|e| format!("{text:?}: {e}"))?;
        match parts[..] {
            [f, dx, dy] if parts.iter().all(|v| v.is_finite()) && f.abs() < 50.0 && dx.abs() < 1000.0 && dy.abs() < 1000.0 => Ok(CameraOffset { focal_percent: f, principal_px: [dx, dy] }),
            _ => Err(format!("{text:?}: expected F,DX,DY (focal length change in per cent, under 50; principal point move in px, under 1000)")),
        }
    }
}

/// A scene's truth as far as localisation needs it.
#[derive(Debug, Clone)]
pub struct LocateScene {
    pub dir: PathBuf,
    pub board: Board,
    pub camera: Camera,
    pub image: PathBuf,
    pub pose: CameraPose,
}

/// Errors reading a scene folder.
#[derive(Debug, thiserror::Error)]
pub enum SceneError {
    #[error("cannot read {path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    #[error("{path}: {message}")]
    Truth { path: PathBuf, message: String },
    #[error(transparent)]
    Board(#[from] crate::board::BoardError),
    #[error(transparent)]
    Camera(#[from] crate::camera::CameraError),
    #[error(transparent)]
    Fixture(#[from] crate::fixture::FixtureError),
}

impl LocateScene {
    /// Reads a scene folder of either layout (`fixture::Fixture::load`).
    pub fn load(dir: &Path) -> Result<LocateScene, SceneError> {
        let fx = crate::fixture::Fixture::load(dir)?;
        let pose = fx.truth.camera.pose();
        let board = Board::load(&fx.truth.board)?;
        Ok(LocateScene { dir: dir.to_path_buf(), board, camera: fx.camera, image: dir.join(&fx.truth.image), pose })
    }
}

/// One scene's result.
#[derive(Debug, Clone, Serialize)]
pub struct LocateOutcome {
    pub scene: String,
    pub board: String,
    /// `located`, `refused` (the stage said no) or `error` (the scene could not be run).
    pub status: String,
    /// The refusal's or error's message.
    pub reason: Option<String>,
    /// Surface corners the true pose puts in the image.
    pub corners_in_view: usize,
    /// Largest image distance between where the true and the located pose put
    /// those corners (or, with none in view, the visible ends of the surface's
    /// sides), raw-image px.
    pub corner_error_px: Option<f64>,
    /// Largest board-plane error over the visible surface: a pixel of a true
    /// surface point back-projected with the located pose, mm.
    pub position_error_mm: Option<f64>,
    pub position_sigma_mm: Option<f64>,
    pub time_ms: f64,
    /// A located pose given back on its own frame, as a fixed camera's later frames give it (`score --pose`, with
    /// the construction fitted with it): `confirmed` or `refused`; absent where the board was not located.
    pub given_back: Option<String>,
    /// How far that check moved the pose: the largest distance of the surface points in view between the located
    /// and the confirmed pose, undistorted px; absent unless confirmed.
    pub given_back_moved_px: Option<f64>,
}

impl LocateOutcome {
    /// A scene not (yet) run: status `error`, nothing measured.
    fn unmeasured(scene: String, board: String, reason: Option<String>) -> LocateOutcome {
        LocateOutcome {
            scene,
            board,
            status: "error".into(),
            reason,
            corners_in_view: 0,
            corner_error_px: None,
            position_error_mm: None,
            position_sigma_mm: None,
            time_ms: 0.0,
            given_back: None,
            given_back_moved_px: None,
        }
    }

    /// Located with every corner within [`MAX_CORNER_ERROR_PX`].
    pub fn passes(&self) -> bool {
        self.status == "located" && self.corner_error_px.is_some_and(|e| e <= MAX_CORNER_ERROR_PX)
    }
    /// The reported sigma covers the measured error.
    pub fn sigma_covers(&self) -> Option<bool> {
        Some(self.position_error_mm? <= SIGMA_COVERAGE * self.position_sigma_mm?)
    }
}

fn in_image(cam: &Camera, p: PixelPoint) -> bool {
    p.u >= 0.0 && p.v >= 0.0 && p.u <= cam.image_width as f64 - 1.0 && p.v <= cam.image_height as f64 - 1.0
}

/// The surface points compared: its corners in view, else the visible ends of its long sides.
fn corner_points(board: &Board, cam: &Camera, truth: &CameraPose) -> (usize, Vec<BoardPoint3>) {
    let (hw, len) = (board.surface.half_width(), board.surface.length_mm);
    let corners: Vec<BoardPoint3> = board
        .surface
        .corners()
        .into_iter()
        .filter(|p| truth.project(cam, *p).is_some_and(|q| in_image(cam, q)))
        .collect();
    if !corners.is_empty() {
        return (corners.len(), corners);
    }
    let mut ends = Vec::new();
    for x in [-hw, hw] {
        let seen: Vec<f64> = grid(len).filter(|&y| truth.project(cam, BoardPoint3::new(x, y, 0.0)).is_some_and(|q| in_image(cam, q))).collect();
        if let (Some(a), Some(b)) = (seen.first(), seen.last()) {
            ends.push(BoardPoint3::new(x, *a, 0.0));
            ends.push(BoardPoint3::new(x, *b, 0.0));
        }
    }
    (0, ends)
}

fn grid(len: f64) -> impl Iterator<Item = f64> {
    let n = (len / GRID_STEP_MM).ceil() as usize;
    (0..=n).map(move |i| len * i as f64 / n as f64)
}

/// Compares a located pose with the truth: (corner error px, position error mm).
pub fn pose_errors(board: &Board, cam: &Camera, truth: &CameraPose, found: &CameraPose) -> (Option<f64>, Option<f64>) {
    pose_errors_with(board, (cam, truth), (cam, found))
}

/// [`pose_errors`] of a pose `found` with a camera of its own (`eval-locate --camera-off`): what the true camera and
/// pose image against where the found camera and pose put it.
pub fn pose_errors_with(board: &Board, (cam, truth): (&Camera, &CameraPose), (found_cam, found): (&Camera, &CameraPose)) -> (Option<f64>, Option<f64>) {
    let (_, points) = corner_points(board, cam, truth);
    let corner = points
        .iter()
        .map(|p| match (truth.project(cam, *p), found.project(found_cam, *p)) {
            (Some(a), Some(b)) => (a.u - b.u).hypot(a.v - b.v),
            _ => f64::INFINITY,
        })
        .reduce(f64::max);
    let hw = board.surface.half_width();
    let xs = grid(2.0 * hw).map(|x| x - hw).collect::<Vec<_>>();
    let mut worst: Option<f64> = None;
    for y in grid(board.surface.length_mm) {
        for &x in &xs {
            let p = BoardPoint3::new(x, y, 0.0);
            let Some(px) = truth.project(cam, p).filter(|q| in_image(cam, *q)) else { continue };
            let e = found.back_project(found_cam, px, 0.0).map_or(f64::INFINITY, |b| (b.x_mm - x).hypot(b.y_mm - y));
            worst = Some(worst.map_or(e, |w: f64| w.max(e)));
        }
    }
    (corner, worst)
}

/// Locates the board in one scene; with `overlay`, writes there the undistorted
/// frame with the located (or best refused) pose's model, green where the image
/// confirms it and red where not, and the true surface outline and lines in blue.
pub fn run_scene(scene: &LocateScene, cfg: &LocateConfig, overlay: Option<&Path>) -> LocateOutcome {
    run_scene_off(scene, cfg, overlay, None)
}

/// [`run_scene`] with the scene's camera `off` as given ([`CameraOffset`]): the board is located with that camera,
/// and its errors are where that camera and the located pose put what the true camera and pose image.
pub fn run_scene_off(scene: &LocateScene, cfg: &LocateConfig, overlay: Option<&Path>, off: Option<CameraOffset>) -> LocateOutcome {
    let camera = off.map_or(scene.camera, |o| o.apply(&scene.camera));
    let name = scene.dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let mut out = LocateOutcome::unmeasured(name, scene.board.name.clone(), None);
    out.corners_in_view = corner_points(&scene.board, &scene.camera, &scene.pose).0;
    let frame = match Frame::load(&scene.image) {
        Ok(f) => f,
        Err(e) => {
            out.reason = Some(e.to_string());
            return out;
        }
    };
    let start = Instant::now();
    let mut locator = Locator::new(&scene.board, cfg.clone());
    let und = match Undistorter::new(camera, UndistortConfig::default()).and_then(|mut u| u.run(&frame)) {
        Ok(u) => u,
        Err(e) => {
            out.reason = Some(e.to_string());
            return out;
        }
    };
    let result = locator.run(&und);
    out.time_ms = start.elapsed().as_secs_f64() * 1e3;
    if let Some(path) = overlay {
        let shown = result.as_ref().ok().map(|b| b.pose).or(locator.last_candidate());
        let truth = TrueView { camera: &scene.camera, pose: &scene.pose, located_with: &camera };
        if let Err(e) = write_overlay(&mut locator, &und, shown, &truth, path) {
            out.reason = Some(format!("overlay not written: {e}"));
        }
    }
    match result {
        Ok(bp) => {
            let (c, p) = pose_errors_with(&scene.board, (&scene.camera, &scene.pose), (&camera, &bp.pose));
            out.status = "located".into();
            out.corner_error_px = c;
            out.position_error_mm = p;
            out.position_sigma_mm = Some(bp.position_sigma_mm);
            // The fixed camera's workflow: the pose written (`locate -o`) and given back for the same frame.
            match Locator::new(&scene.board, cfg.clone()).refine_from(&und, &bp.given()) {
                Ok(again) => {
                    out.given_back = Some("confirmed".into());
                    out.given_back_moved_px = Some(locator.image_distance(&und.camera, &bp.pose, &again.pose));
                }
                Err(e) => {
                    out.given_back = Some("refused".into());
                    out.reason.get_or_insert_with(|| format!("given back: {e}"));
                }
            }
        }
        Err(e) => {
            out.status = if e.is_refusal() { "refused".into() } else { "error".into() };
            out.reason = Some(e.to_string());
        }
    }
    out
}

/// The true camera and pose of a scene, and the camera the board was located with (the true one, or one a little
/// off: `eval-locate --camera-off`).
struct TrueView<'a> {
    camera: &'a Camera,
    pose: &'a CameraPose,
    located_with: &'a Camera,
}

impl TrueView<'_> {
    /// Where a board point lies in the undistorted image (of ideal camera `ideal`) that the camera the board was
    /// located with makes of the raw frame: the true camera images the point in the raw frame, and that camera
    /// undistorts the pixel. Where the board was located with the true camera, this is the true pose's projection
    /// through `ideal`.
    fn in_undistorted(&self, ideal: &Camera, p: BoardPoint3) -> Option<PixelPoint> {
        let raw = self.pose.project(self.camera, p)?;
        let (x, y) = self.located_with.normalise(raw)?;
        Some(ideal.pinhole_pixel(x, y))
    }
}

/// The undistorted frame with `shown`'s model checked against the image and the truth's outline, drawn where the
/// true camera and pose image it.
fn write_overlay(locator: &mut Locator, und: &crate::frame::Undistorted, shown: Option<CameraPose>, truth: &TrueView, path: &Path) -> Result<(), crate::locate::LocateError> {
    use opencv::core::{Point, Scalar};
    use opencv::imgproc;
    let mut img = match shown {
        Some(p) => locator.overlay(und, &p)?,
        None => und.image.clone(),
    };
    let cam = &und.camera;
    let blue = Scalar::new(255.0, 64.0, 0.0, 0.0);
    for edge in &locator.model().edges {
        let crate::locate::EdgeShape::Segment { a, b } = edge.shape else { continue };
        if a.z_mm != 0.0 || b.z_mm != 0.0 {
            continue;
        }
        let (Some(pa), Some(pb)) = (truth.in_undistorted(cam, a), truth.in_undistorted(cam, b)) else { continue };
        let pt = |p: PixelPoint| Point::new(p.u.round() as i32, p.v.round() as i32);
        imgproc::line(&mut img, pt(pa), pt(pb), blue, 1, imgproc::LINE_AA, 0).map_err(|source| crate::locate::LocateError::OpenCv { context: "overlay".into(), source })?;
    }
    crate::frame::write_png(&img, path)?;
    Ok(())
}

/// The whole folder's result.
#[derive(Debug, Clone, Serialize)]
pub struct LocateReport {
    pub scenes: Vec<LocateOutcome>,
    pub located: usize,
    /// Located with every corner within [`MAX_CORNER_ERROR_PX`].
    pub within_bar: usize,
    /// Located scenes whose error is at most [`SIGMA_COVERAGE`] reported sigmas.
    pub sigma_covered: usize,
    /// Located scenes whose pose, given back on their own frame, is confirmed ([`LocateOutcome::given_back`]).
    pub given_back_confirmed: usize,
    pub median_time_ms: f64,
    pub max_time_ms: f64,
    /// The camera offset every scene was located with (`--camera-off`); absent with the scenes' own cameras.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub camera_off: Option<CameraOffset>,
}

/// Locates every scene under `dir` (either layout), with a progress line per scene on `progress`.
/// With `overlays`, writes one picture per scene there, named after the scene (see [`run_scene`]).
/// With `off`, every scene is located with its camera that far off ([`run_scene_off`]).
pub fn evaluate_locate(dir: &Path, cfg: &LocateConfig, overlays: Option<&Path>, off: Option<CameraOffset>, mut progress: impl FnMut(&LocateOutcome)) -> Result<LocateReport, super::EvalError> {
    let dirs = crate::fixture::list(dir)?;
    if dirs.is_empty() {
        return Err(super::EvalError::Empty { dir: dir.to_path_buf() });
    }
    let mut scenes = Vec::with_capacity(dirs.len());
    for d in &dirs {
        let outcome = match LocateScene::load(d) {
            Ok(scene) => {
                let name = d.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "scene".into());
                let path = overlays.map(|o| o.join(format!("{name}.png")));
                run_scene_off(&scene, cfg, path.as_deref(), off)
            }
            Err(e) => LocateOutcome::unmeasured(d.display().to_string(), String::new(), Some(e.to_string())),
        };
        progress(&outcome);
        scenes.push(outcome);
    }
    let mut times: Vec<f64> = scenes.iter().filter(|s| s.status != "error").map(|s| s.time_ms).collect();
    times.sort_by(f64::total_cmp);
    Ok(LocateReport {
        located: scenes.iter().filter(|s| s.status == "located").count(),
        within_bar: scenes.iter().filter(|s| s.passes()).count(),
        sigma_covered: scenes.iter().filter(|s| s.sigma_covers() == Some(true)).count(),
        given_back_confirmed: scenes.iter().filter(|s| s.given_back.as_deref() == Some("confirmed")).count(),
        median_time_ms: times.get(times.len() / 2).copied().unwrap_or(0.0),
        max_time_ms: times.last().copied().unwrap_or(0.0),
        camera_off: off,
        scenes,
    })
}

/// One line per scene, for the terminal.
pub fn outcome_line(s: &LocateOutcome) -> String {
    let f = |v: Option<f64>, d: usize| v.map_or("-".to_string(), |v| format!("{v:.d$}"));
    format!(
        "{:<40} {:<18} {:<8} corners {} err {:>6} px  pos {:>6} mm  sigma {:>6} mm  {:>6.0} ms{}",
        s.scene,
        s.board,
        s.status,
        s.corners_in_view,
        f(s.corner_error_px, 2),
        f(s.position_error_mm, 2),
        f(s.position_sigma_mm, 2),
        s.time_ms,
        s.reason.as_deref().map(|r| format!("  ({r})")).unwrap_or_default()
    )
}

/// The summary, for the terminal.
pub fn render_text(r: &LocateReport) -> String {
    let n = r.scenes.len();
    let off = r.camera_off.map_or(String::new(), |o| {
        format!(" (every camera off by {:+} % in focal length, ({:+}, {:+}) px in principal point)", o.focal_percent, o.principal_px[0], o.principal_px[1])
    });
    format!(
        "{} scenes{off}: located {}, within {MAX_CORNER_ERROR_PX} px {}, error within {SIGMA_COVERAGE} sigma {} of {} located, confirmed when given back {}; time median {:.0} ms, max {:.0} ms\n",
        n, r.located, r.within_bar, r.sigma_covered, r.located, r.given_back_confirmed, r.median_time_ms, r.max_time_ms
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_camera_offset_is_read_and_applied() {
        let off: CameraOffset = "0.5,4,-4".parse().unwrap();
        let cam = Camera { image_width: 1920, image_height: 1080, fx: 1000.0, fy: 1002.0, cx: 960.0, cy: 540.0, distortion: Default::default() };
        let moved = off.apply(&cam);
        // Tolerance: the products' rounding.
        assert!((moved.fx - 1005.0).abs() < 1e-9 && (moved.fy - 1007.01).abs() < 1e-9, "{moved:?}");
        assert!((moved.cx - 964.0).abs() < 1e-9 && (moved.cy - 536.0).abs() < 1e-9, "{moved:?}");
        for bad in ["", "1,2", "a,0,0", "NaN,0,0", "60,0,0", "0,0,5000", "1,2,3,4"] {
            assert!(bad.parse::<CameraOffset>().is_err(), "{bad:?} accepted");
        }
    }

    #[test]
    fn errors_with_one_camera_are_the_plain_errors() {
        let board = Board::load("yocu-4").unwrap();
        let cam = Camera { image_width: 1280, image_height: 960, fx: 1100.0, fy: 1100.0, cx: 639.5, cy: 479.5, distortion: Default::default() };
        let truth = CameraPose::look_at(BoardPoint3::new(100.0, 300.0, 1800.0), BoardPoint3::new(0.0, 860.0, 0.0), [0.0, 1.0, 0.0]).unwrap();
        let t = truth.translation;
        let found = CameraPose { translation: [t[0] + 2.0, t[1], t[2]], ..truth };
        let (c, p) = pose_errors(&board, &cam, &truth, &found);
        let (c2, p2) = pose_errors_with(&board, (&cam, &truth), (&cam, &found));
        // The same computation either way: equal to rounding.
        let close = |a: Option<f64>, b: Option<f64>| a.zip(b).is_some_and(|(a, b)| (a - b).abs() < 1e-9);
        assert!(close(c, c2) && close(p, p2), "{c:?} {p:?} against {c2:?} {p2:?}");
        // A camera moved by its principal point, with the pose found through it, is measured against the truth.
        let off = CameraOffset { focal_percent: 0.0, principal_px: [4.0, 0.0] }.apply(&cam);
        let (c3, _) = pose_errors_with(&board, (&cam, &truth), (&off, &truth));
        assert!((c3.unwrap() - 4.0).abs() < 1e-6, "{c3:?}");
    }

    /// The overlay's truth is drawn where the true camera images it in the frame, undistorted as the camera the
    /// board was located with undistorts it: with the true camera, the true pose's projection; with a camera whose
    /// principal point is off and no distortion (undistortion is then the identity), the raw pixel itself, not the
    /// projection through the offset camera 4 px away.
    #[test]
    fn the_overlay_draws_the_truth_where_the_true_camera_images_it() {
        let truth = CameraPose::look_at(BoardPoint3::new(100.0, 300.0, 1800.0), BoardPoint3::new(0.0, 860.0, 0.0), [0.0, 1.0, 0.0]).unwrap();
        let plain = Camera { image_width: 1280, image_height: 960, fx: 1100.0, fy: 1100.0, cx: 639.5, cy: 479.5, distortion: Default::default() };
        let lens = crate::camera::lens::BrownConrady { k1: -0.12, k2: 0.03, ..Default::default() };
        let brown = Camera { distortion: crate::camera::Distortion::Brown(lens), ..plain };
        let points = [BoardPoint3::new(0.0, 860.0, 0.0), BoardPoint3::new(-300.0, 200.0, 0.0), BoardPoint3::new(300.0, 1500.0, 0.0)];
        let view = TrueView { camera: &brown, pose: &truth, located_with: &brown };
        for p in points {
            let (a, b) = (view.in_undistorted(&plain, p).unwrap(), truth.project(&plain, p).unwrap());
            // Tolerance: the lens model's iterative inverse, a millionth of a pixel.
            assert!((a.u - b.u).hypot(a.v - b.v) < 1e-4, "{a:?} {b:?}");
        }
        let off = CameraOffset { focal_percent: 0.0, principal_px: [4.0, 0.0] }.apply(&plain);
        let view = TrueView { camera: &plain, pose: &truth, located_with: &off };
        for p in points {
            let (a, raw, through_off) = (view.in_undistorted(&off, p).unwrap(), truth.project(&plain, p).unwrap(), truth.project(&off, p).unwrap());
            assert!((a.u - raw.u).hypot(a.v - raw.v) < 1e-9, "{a:?} {raw:?}");
            assert!(((a.u - through_off.u).abs() - 4.0).abs() < 1e-9, "{a:?} {through_off:?}");
        }
    }
}
