//! The typed-points start of the camera set-up: the focal length whose pose reprojects the user's points best.

use super::{centred_camera, SetupError};
use crate::board::Board;
use crate::camera::{Camera, CameraPose, LensModel};
use crate::locate::{locate_from_points, Correspondence, LocateConfig};

/// The trial focal lengths span this range of multiples of the image width (fields of view from ~170 degrees
/// of a fisheye down to ~7 degrees of a long lens); the grid is geometric with [`GRID_STEPS`] steps.
const FOCAL_RANGE: (f64, f64) = (0.15, 8.0);
const GRID_STEPS: usize = 80;
/// Golden-section steps after the grid: each shrinks the bracket by 0.618, 40 of them far below a pixel.
const GOLDEN_STEPS: usize = 40;
/// The points must prefer their focal length clearly: at a quarter off it (either way) the reprojection must be
/// at least this much worse than at the best, px RMS, or the view does not fix it (a board seen square on).
const MIN_FOCAL_CONTRAST_PX: f64 = 0.5;

/// The start of the set-up from typed points: a centred camera of the chosen lens with the best focal length,
/// and its pose.
pub fn focal_from_points(board: &Board, width: u32, height: u32, points: &[Correspondence], lens: LensModel) -> Result<(Camera, CameraPose), SetupError> {
    let loose = LocateConfig { max_points_rms_px: f64::INFINITY, ..LocateConfig::default() };
    let rms_at = |f: f64| -> Result<f64, SetupError> {
        let cam = centred_camera(width, height, f, lens);
        match locate_from_points_at(board, &cam, points, &loose) {
            Ok(r) => Ok(r),
            // A trial focal length at which the points give no pose in front of the camera is simply a bad one.
            Err(SetupError::PointsUnconstrained { .. }) => Ok(f64::INFINITY),
            Err(e) => Err(e),
        }
    };
    let w = width as f64;
    let (lo, hi) = (FOCAL_RANGE.0.ln(), FOCAL_RANGE.1.ln());
    let grid: Vec<f64> = (0..=GRID_STEPS).map(|i| w * (lo + (hi - lo) * i as f64 / GRID_STEPS as f64).exp()).collect();
    let mut values = Vec::with_capacity(grid.len());
    for &f in &grid {
        values.push(rms_at(f)?);
    }
    let best = (0..grid.len()).min_by(|&a, &b| values[a].total_cmp(&values[b])).expect("the grid is not empty");
    if !values[best].is_finite() {
        return Err(SetupError::PointsUnconstrained { reason: "no focal length puts the points in front of the camera".into() });
    }
    if best == 0 || best == grid.len() - 1 {
        return Err(SetupError::PointsUnconstrained {
            reason: format!("the best focal length lies at the end of the range tried ({:.0} px; the board seen square on?)", grid[best]),
        });
    }
    // Golden-section search in log f inside the bracket of the grid's best.
    let (mut a, mut b) = (grid[best - 1].ln(), grid[best + 1].ln());
    let g = (5f64.sqrt() - 1.0) / 2.0;
    let (mut c, mut d) = (b - g * (b - a), a + g * (b - a));
    let (mut fc, mut fd) = (rms_at(c.exp())?, rms_at(d.exp())?);
    for _ in 0..GOLDEN_STEPS {
        if fc < fd {
            (b, d, fd) = (d, c, fc);
            c = b - g * (b - a);
            fc = rms_at(c.exp())?;
        } else {
            (a, c, fc) = (c, d, fd);
            d = a + g * (b - a);
            fd = rms_at(d.exp())?;
        }
    }
    let f = ((a + b) / 2.0).exp();
    let at_best = rms_at(f)?;
    let contrast = rms_at(f * 0.75)?.min(rms_at(f * 1.25)?) - at_best;
    if !(contrast >= MIN_FOCAL_CONTRAST_PX) {
        return Err(SetupError::PointsUnconstrained {
            reason: format!(
                "a focal length a quarter off fits the points within {contrast:.2} px of the best ({at_best:.2} px RMS): type points spread over more of the board, seen at a slant"
            ),
        });
    }
    pose_from_points(board, centred_camera(width, height, f, lens), points)
        .map_err(|e| SetupError::PointsUnconstrained { reason: format!("at the best focal length ({f:.0} px): {e}") })
}

/// The start of the set-up from typed points with the camera known (a focal length given): the points' pose (a
/// poor fit is `locate`'s refusal, naming the worst points).
pub fn pose_from_points(board: &Board, camera: Camera, points: &[Correspondence]) -> Result<(Camera, CameraPose), SetupError> {
    let pose = locate_from_points(board, &camera, points, &LocateConfig::default())?.pose;
    Ok((camera, pose))
}

/// The points' RMS reprojection error with their best pose for camera `cam`, px.
fn locate_from_points_at(board: &Board, cam: &Camera, points: &[Correspondence], cfg: &LocateConfig) -> Result<f64, SetupError> {
    match locate_from_points(board, cam, points, cfg) {
        Ok(bp) => Ok(bp.reprojection_rms_px),
        Err(e) if e.is_refusal() => Err(SetupError::PointsUnconstrained { reason: e.to_string() }),
        Err(e) => Err(e.into()),
    }
}
