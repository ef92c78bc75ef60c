//! Camera set-up from the board itself: the intrinsics (focal length, radial distortion) and the pose, estimated
//! from the board's known geometry in one or more frames, for a user with no chessboard (`docs/camera.md`).
//!
//! Two starts, one refinement.
//!
//! - **Typed points** (`--points`, as `locate` takes them; four or more): for each trial focal length the points
//!   give a pose (OpenCV's `solvePnP`), and the focal length whose pose reprojects the points best is the start
//!   ([`points::focal_from_points`]). Four points on the board plane leave two residual degrees of freedom, enough
//!   for the one unknown of a camera with square pixels and its principal point at the centre.
//! - **Automatic**: the board is located ([`crate::locate::Locator::run`]) under a ladder of focal-length guesses
//!   ([`focal_guesses`]), and the confirmed fit whose edges fit best is the start.
//!
//! - **A focal length given** ([`SetupConfig::focal_px`], from the lens's specification): held, not estimated;
//!   with typed points and no distortion to estimate, the points' pose is the result (their residual its
//!   uncertainty) and the board's edges are not used, so a board built unlike its file is set up too.
//!
//! The refinement ([`refine::Refiner`]) then adjusts the focal length and the lens's first radial coefficient against
//! the board's own edges (its outline, lines and holes must come out where the rules put them, straight lines
//! straight): for each trial camera every frame's pose is refit to its edges, and the camera that leaves the
//! smallest edge residual wins. The uncertainty comes from the residual's curvature at its minimum. A frame that
//! does not constrain the focal length (a board seen square on, where a nearer camera with a wider lens looks the
//! same) is refused, as is a final pose that `locate`'s own verdict does not confirm.
//!
//! With several frames, the focal length, the radial coefficient and the principal point are then refined together
//! ([`joint`]): views of the board at different slants tell the principal point from the pose, as views of a planar
//! target do in a chessboard calibration.
//!
//! What is assumed, and said so in the output: square pixels, no tangential distortion, and, from one frame (or
//! frames that do not fix it), the principal point at the image centre (a single view of a plane cannot tell it
//! apart from the pose).

pub mod joint;
pub mod points;
pub mod refine;
pub mod start;

use crate::board::Board;
use crate::calibrate::DUPLICATE_MAX_MEAN_PX;
use crate::camera::{Camera, CameraError, CameraPose, Distortion, KannalaBrandt, LensModel};
use crate::frame::{Frame, FrameError};
use crate::locate::{locate_from_points, BoardPose, Correspondence, LocateConfig, LocateError, Locator};
use crate::undistort::Undistorter;
use serde::Serialize;
pub use start::focal_guesses;
use start::{automatic_start, Ladder};

/// The assumption a set-up makes of the principal point unless several frames fix it.
const PRINCIPAL_POINT_ASSUMED: &str = "principal point at the image centre";

/// Largest relative standard deviation of the focal length that is accepted: beyond it the frames do not
/// constrain the lens (a board seen square on, or too little of it in view).
pub const MAX_RELATIVE_FOCAL_SIGMA: f64 = 0.02;

/// Errors of the camera set-up.
#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    #[error("no frames given")]
    NoFrames,
    #[error("frame {index} is {got_width}x{got_height}, the first is {want_width}x{want_height}: all frames must come from one camera")]
    FrameSizes { index: usize, got_width: u32, got_height: u32, want_width: u32, want_height: u32 },
    #[error("the focal length given ({focal_px} px) is not a real camera's for {width}x{height} frames: {problem}")]
    FocalLength { focal_px: f64, width: u32, height: u32, problem: String },
    #[error("typed points are for one frame; {frames} frames were given")]
    PointsNeedOneFrame { frames: usize },
    #[error("the points do not fix the focal length: {reason}")]
    PointsUnconstrained { reason: String },
    #[error("the board was not found in frame {index} with any focal length from {min_fov_deg:.0} to {max_fov_deg:.0} degrees wide: {reason}")]
    BoardNotFound { index: usize, min_fov_deg: f64, max_fov_deg: f64, reason: String },
    #[error("the frames do not constrain the {what}: {reason}")]
    Unconstrained { what: &'static str, reason: String },
    #[error("frame {index} repeats the view of frame {same_as} (the playing surface's corners {mean_px:.2} px apart on average): the same view twice is one measurement, not two")]
    RepeatedView { index: usize, same_as: usize, mean_px: f64 },
    #[error("refused after leaving out {}", left_out_list(left_out))]
    AfterLeavingOut {
        left_out: Vec<FrameLeftOut>,
        #[source]
        source: Box<SetupError>,
    },
    #[error("the set-up camera's pose is not confirmed by frame {index}")]
    NotConfirmed {
        index: usize,
        #[source]
        source: LocateError,
    },
    #[error(transparent)]
    Locate(#[from] LocateError),
    #[error(transparent)]
    Frame(#[from] FrameError),
    #[error(transparent)]
    Camera(#[from] CameraError),
}

impl SetupError {
    /// Whether the frames were read but give no trustworthy camera (exit code 4), rather than bad input.
    pub fn is_refusal(&self) -> bool {
        match self {
            SetupError::PointsUnconstrained { .. } | SetupError::BoardNotFound { .. } | SetupError::Unconstrained { .. } | SetupError::NotConfirmed { .. } | SetupError::RepeatedView { .. } => true,
            SetupError::AfterLeavingOut { source, .. } => source.is_refusal(),
            SetupError::Locate(e) => e.is_refusal(),
            _ => false,
        }
    }
}

/// What the set-up estimates.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SetupConfig {
    /// The lens model of the camera written.
    pub lens: LensModel,
    /// Estimate radial distortion (the first radial coefficient, Brown's or Kannala-Brandt's k1); otherwise none
    /// (Brown) or the plain equidistant fisheye.
    pub distortion: bool,
    /// The focal length, px, when the user knows it (a phone's or webcam's specification: focal length over
    /// sensor width times image width): held, not estimated. Needed where the view cannot fix it (a board seen
    /// square on).
    pub focal_px: Option<f64>,
    /// How the frames' poses are fitted, and the verdict applied to the final pose in every frame. The set-up
    /// fits every pose with each edge sample weighed alike, whatever `weigh_edges_alike` says (see
    /// [`setup_with_progress`]).
    pub locate: LocateConfig,
}

impl Default for SetupConfig {
    fn default() -> Self {
        SetupConfig { lens: LensModel::Brown, distortion: true, focal_px: None, locate: LocateConfig::default() }
    }
}

/// How the estimate started.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SetupStart {
    Points,
    Automatic,
}

/// The set-up's result: the camera, each frame's pose, and how well they are known.
#[derive(Debug, Clone, Serialize)]
pub struct CameraSetup {
    pub start: SetupStart,
    pub lens: LensModel,
    #[serde(serialize_with = "serialise_camera")]
    pub camera: Camera,
    /// One standard deviation of the focal length, px.
    pub focal_sigma_px: f64,
    /// One standard deviation of each estimated distortion coefficient (in the order of `distortion`).
    pub distortion_sigma: Vec<f64>,
    /// One standard deviation of the principal point's `cx` and `cy`, px, where several frames fixed it; `None`
    /// (null) where it is assumed at the image centre (one frame, or frames that do not fix it).
    pub principal_point_sigma_px: Option<[f64; 2]>,
    /// The frames the estimate used (indices into those given), in order: every one, unless some were left out.
    pub frames_used: Vec<usize>,
    /// Frames left out, with the reason: where several frames were given, one in which the board is not found or
    /// not confirmed is left out and the set-up made from the rest (as a calibration leaves out a view without its
    /// pattern), rather than refused.
    pub frames_left_out: Vec<FrameLeftOut>,
    /// Per frame used (`frames_used`): the pose found with the set-up camera, as `locate` reports it.
    pub poses: Vec<BoardPose>,
    /// Mean truncated edge residual per model edge sample at the estimate, px^2 (a missed sample counts 1); not a
    /// number (null in JSON) when the edges were not used (typed points with the focal length given, no distortion).
    pub edge_cost_px2: f64,
    /// What the estimate assumes rather than measures.
    pub assumptions: Vec<String>,
}

/// A frame the set-up left out, and why.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FrameLeftOut {
    pub index: usize,
    pub reason: String,
}

fn serialise_camera<S: serde::Serializer>(c: &Camera, s: S) -> Result<S::Ok, S::Error> {
    use serde::ser::SerializeStruct;
    let mut st = s.serialize_struct("Camera", 7)?;
    st.serialize_field("image_width", &c.image_width)?;
    st.serialize_field("image_height", &c.image_height)?;
    st.serialize_field("fx", &c.fx)?;
    st.serialize_field("fy", &c.fy)?;
    st.serialize_field("cx", &c.cx)?;
    st.serialize_field("cy", &c.cy)?;
    st.serialize_field("distortion", &c.distortion.named_coefficients().into_iter().collect::<std::collections::BTreeMap<_, _>>())?;
    st.end()
}

/// A camera of the given size and lens with square pixels, the principal point at the centre and focal length `f`.
pub fn centred_camera(width: u32, height: u32, f: f64, lens: LensModel) -> Camera {
    let distortion = match lens {
        LensModel::Brown => Distortion::NONE,
        LensModel::Fisheye => Distortion::Fisheye(KannalaBrandt::default()),
    };
    Camera { image_width: width, image_height: height, fx: f, fy: f, cx: (width as f64 - 1.0) / 2.0, cy: (height as f64 - 1.0) / 2.0, distortion }
}

/// Sets up a camera from frames of `board`; `points` (for a single frame) replace the automatic start.
pub fn setup(board: &Board, frames: &[Frame], points: Option<&[Correspondence]>, cfg: &SetupConfig) -> Result<CameraSetup, SetupError> {
    setup_with_progress(board, frames, points, cfg, &|_| {})
}

/// [`setup`], telling `progress` what it does as it starts each stage (the command line's progress line: a set-up
/// from several frames takes tens of seconds).
pub fn setup_with_progress(board: &Board, frames: &[Frame], points: Option<&[Correspondence]>, cfg: &SetupConfig, progress: &dyn Fn(&str)) -> Result<CameraSetup, SetupError> {
    // Every pose the set-up fits weighs each edge sample alike: its trials compare cameras by the residual per
    // sample, and the poses it refits (and confirms) minimise that same sum, so the cost's bowl is the one the
    // fits descend ([`LocateConfig::weigh_edges_alike`]).
    let cfg = &SetupConfig { locate: LocateConfig { weigh_edges_alike: false, ..cfg.locate }, ..*cfg };
    let mut used: Vec<usize> = (0..frames.len()).collect();
    let mut left_out = Vec::new();
    let mut ladder = Ladder::default();
    loop {
        let chosen: Vec<Frame> = used.iter().map(|&i| frames[i].clone()).collect();
        match setup_frames(board, &chosen, &used, points, cfg, progress, &mut ladder) {
            Ok(mut est) => {
                est.frames_used = used;
                est.frames_left_out = left_out;
                return Ok(est);
            }
            // Of several frames, one the board is not found or confirmed in is left out, the rest set up again.
            Err(e) => {
                let e = renumbered(e, &used);
                match frame_at_fault(&e).and_then(|index| used.iter().position(|&i| i == index)) {
                    Some(k) if used.len() > 1 => {
                        let index = used.remove(k);
                        progress(&format!("frame {index} left out ({e}); setting up from the other {}", used.len()));
                        left_out.push(FrameLeftOut { index, reason: with_causes(&e) });
                    }
                    // Refused with frames left out before: the refusal says which, and why.
                    _ if !left_out.is_empty() => return Err(SetupError::AfterLeavingOut { left_out, source: Box::new(e) }),
                    _ => return Err(e),
                }
            }
        }
    }
}

/// The frames left out, each with its reason: "frame 3 (...), frame 1 (...)".
fn left_out_list(left_out: &[FrameLeftOut]) -> String {
    left_out.iter().map(|f| format!("frame {} ({})", f.index, f.reason)).collect::<Vec<_>>().join(", ")
}

/// An error's message followed by its causes', as the command line prints an error.
fn with_causes(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        text.push_str(": ");
        text.push_str(&c.to_string());
        cause = c.source();
    }
    text
}

/// Which frame a refusal is about, if it is about one.
fn frame_at_fault(e: &SetupError) -> Option<usize> {
    match e {
        SetupError::BoardNotFound { index, .. } | SetupError::NotConfirmed { index, .. } | SetupError::RepeatedView { index, .. } => Some(*index),
        _ => None,
    }
}

/// `e` with a frame's index among the frames set up (`used`) turned back into its index among those given.
fn renumbered(e: SetupError, used: &[usize]) -> SetupError {
    let given = |i: usize| used.get(i).copied().unwrap_or(i);
    match e {
        SetupError::BoardNotFound { index, min_fov_deg, max_fov_deg, reason } => SetupError::BoardNotFound { index: given(index), min_fov_deg, max_fov_deg, reason },
        SetupError::NotConfirmed { index, source } => SetupError::NotConfirmed { index: given(index), source },
        SetupError::RepeatedView { index, same_as, mean_px } => SetupError::RepeatedView { index: given(index), same_as: given(same_as), mean_px },
        SetupError::FrameSizes { index, got_width, got_height, want_width, want_height } => SetupError::FrameSizes { index: given(index), got_width, got_height, want_width, want_height },
        e => e,
    }
}

/// One set-up from exactly these frames (the frames' indices in its errors are theirs among them; `ids` are their
/// indices among those given, under which `ladder` keeps what the automatic start read in them).
fn setup_frames(board: &Board, frames: &[Frame], ids: &[usize], points: Option<&[Correspondence]>, cfg: &SetupConfig, progress: &dyn Fn(&str), ladder: &mut Ladder) -> Result<CameraSetup, SetupError> {
    let first = frames.first().ok_or(SetupError::NoFrames)?;
    let (w, h) = (first.width(), first.height());
    for (index, f) in frames.iter().enumerate() {
        if (f.width(), f.height()) != (w, h) {
            return Err(SetupError::FrameSizes { index, got_width: f.width(), got_height: f.height(), want_width: w, want_height: h });
        }
    }
    if let Some(f) = cfg.focal_px {
        centred_camera(w, h, f, cfg.lens).check().map_err(|e| SetupError::FocalLength { focal_px: f, width: w, height: h, problem: e.to_string() })?;
    }
    let mut assumptions: Vec<String> = ["square pixels (fx = fy)", PRINCIPAL_POINT_ASSUMED, "no tangential distortion"].map(String::from).into();
    if let Some(f) = cfg.focal_px {
        assumptions.push(format!("the focal length given ({f:.1} px), not estimated: its sigma is not measured"));
    }
    // The radial distortion estimated is the lens model's first coefficient: a lens bending further out by the
    // higher ones is read with k1 taking their part, and the focal length with it (the sigmas do not take that in).
    assumptions.push(
        match (cfg.distortion, cfg.lens) {
            (false, LensModel::Brown) => "no radial distortion",
            (false, LensModel::Fisheye) => "an equidistant fisheye (theta_d = theta)",
            (true, LensModel::Brown) => "radial distortion by k1 alone (k2 = k3 = 0)",
            (true, LensModel::Fisheye) => "the fisheye's distortion by k1 alone (k2 = k3 = k4 = 0)",
        }
        .into(),
    );
    let (start, camera, poses) = match points {
        Some(pts) => {
            if frames.len() != 1 {
                return Err(SetupError::PointsNeedOneFrame { frames: frames.len() });
            }
            if let (Some(f), false) = (cfg.focal_px, cfg.distortion) {
                // Typed points with the camera given: nothing is left to estimate, and the points are the evidence,
                // as for `locate --points` (a board whose build differs from its file's may leave its edges
                // unconfirmed).
                let camera = centred_camera(w, h, f, cfg.lens);
                let bp = locate_from_points(board, &camera, pts, &cfg.locate)?;
                assumptions.push("the pose is the typed points' alone: the board's edges were not used".into());
                return Ok(CameraSetup {
                    start: SetupStart::Points,
                    lens: cfg.lens,
                    camera,
                    focal_sigma_px: 0.0,
                    distortion_sigma: Vec::new(),
                    principal_point_sigma_px: None,
                    frames_used: vec![0],
                    frames_left_out: Vec::new(),
                    poses: vec![bp],
                    edge_cost_px2: f64::NAN,
                    assumptions,
                });
            }
            let (camera, pose) = match cfg.focal_px {
                Some(f) => points::pose_from_points(board, centred_camera(w, h, f, cfg.lens), pts)?,
                None => points::focal_from_points(board, w, h, pts, cfg.lens)?,
            };
            (SetupStart::Points, camera, vec![pose])
        }
        None => {
            let (camera, poses) = automatic_start(board, frames, ids, cfg, progress, ladder)?;
            if let Some((index, same_as, mean_px)) = repeated_view(board, &camera, &poses) {
                return Err(SetupError::RepeatedView { index, same_as, mean_px });
            }
            (SetupStart::Automatic, camera, poses)
        }
    };
    let mut refiner = refine::Refiner::new(board, frames, cfg.lens, cfg.locate).with_progress(progress);
    let est = refiner.run(camera, poses, cfg.distortion, cfg.focal_px.is_some())?;
    if let Some([sx, sy]) = est.principal_point_sigma_px {
        // Several frames fixed the principal point: it is measured, not assumed.
        assumptions.retain(|a| a != PRINCIPAL_POINT_ASSUMED);
        assumptions.push(format!("the principal point estimated from {} frames (sigma {sx:.1}, {sy:.1} px)", frames.len()));
    }
    // The final word is locate's own verdict in every frame, with the set-up camera.
    let mut confirmed = Vec::with_capacity(frames.len());
    let mut locator = Locator::new(board, cfg.locate);
    for (index, (frame, pose)) in frames.iter().zip(&est.poses).enumerate() {
        progress(&format!("confirming the board in frame {} of {}", index + 1, frames.len()));
        let mut und = Undistorter::new(est.camera, Default::default())?;
        let u = und.run(frame)?;
        let bp = locator.refine_from(&u, &crate::locate::GivenPose::new(*pose)).map_err(|source| SetupError::NotConfirmed { index, source })?;
        confirmed.push(bp);
    }
    Ok(CameraSetup {
        start,
        lens: cfg.lens,
        camera: est.camera,
        focal_sigma_px: est.focal_sigma_px,
        distortion_sigma: est.distortion_sigma,
        principal_point_sigma_px: est.principal_point_sigma_px,
        frames_used: (0..frames.len()).collect(),
        frames_left_out: Vec::new(),
        poses: confirmed,
        edge_cost_px2: est.mean_cost_px2,
        assumptions,
    })
}

/// The first frame whose view repeats an earlier one's, `(frame, earlier, mean distance px)`: the corners of the
/// playing surface imaged by `camera` with the two poses less than [`DUPLICATE_MAX_MEAN_PX`] apart on average, as
/// `calibrate` drops a near-duplicate view of its target. The same edges at the same pixels, under the same lens
/// error and the same build, are one measurement, not two independent ones: the same frame given twice divided
/// the focal length's sigma by the square root of two (19.5 -> 13.8 px on `fixtures/setup/holeyboard-brown/frame-0`).
fn repeated_view(board: &Board, camera: &Camera, poses: &[CameraPose]) -> Option<(usize, usize, f64)> {
    let corners = board.surface.corners();
    let mean_apart = |a: &CameraPose, b: &CameraPose| -> Option<f64> {
        let d: Option<Vec<f64>> = corners.iter().map(|&c| Some(a.project(camera, c)?.distance(b.project(camera, c)?))).collect();
        d.map(|d| d.iter().sum::<f64>() / d.len() as f64)
    };
    (1..poses.len()).find_map(|j| (0..j).find_map(|i| mean_apart(&poses[i], &poses[j]).filter(|d| *d < DUPLICATE_MAX_MEAN_PX).map(|d| (j, i, d))))
}
