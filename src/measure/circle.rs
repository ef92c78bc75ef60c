//! Circles fitted to an outline's edge points: least squares on the geometric distance with robust outlier
//! rejection, and how well the points fix the centre.

use super::OUTLIER_SIGMAS;
use crate::camera::CameraPose;
use crate::geom::{BoardPoint, BoardPoint3};

/// The residual spread is floored at this (mm) when flagging outliers, so a
/// near-perfect fit does not reject points for differences of hundredths of a mm.
const MIN_RESIDUAL_SPREAD_MM: f64 = 0.05;

/// Rounds of fitting, then choosing each edge's rim or foot and its inliers again: a handful settles both (the
/// fit's passes re-probe about each result besides).
const MAX_ROUNDS: usize = 4;

/// What an edge point probed in a piece's plane may be: the rim there, or the foot of the piece's upright side seen
/// past the rim (the same line of sight carried down the side's height, [`SideView`]).
#[derive(Debug, Clone, Copy)]
pub(super) struct Seen {
    pub rim: BoardPoint,
    pub foot: Option<BoardPoint>,
}

impl Seen {
    /// Which of the two a circle about `c` of radius `r` explains: the foot where it lies nearer the circle and on
    /// the half of it that faces the camera (whose foot on the board is `camera_xy`), where alone the side is seen.
    fn nearest(&self, c: BoardPoint, r: f64, camera_xy: BoardPoint) -> BoardPoint {
        match self.foot {
            Some(f) if faces(f, c, camera_xy) && (f.distance(c) - r).abs() < (self.rim.distance(c) - r).abs() => f,
            _ => self.rim,
        }
    }
}

/// Whether `p` lies on the side of `c` towards `camera_xy`.
fn faces(p: BoardPoint, c: BoardPoint, camera_xy: BoardPoint) -> bool {
    (p.x_mm - c.x_mm) * (camera_xy.x_mm - c.x_mm) + (p.y_mm - c.y_mm) * (camera_xy.y_mm - c.y_mm) > 0.0
}

/// A camera's lines of sight through a piece's plane (at `height`) down to the foot of its upright side (`side` mm
/// lower): a point of the side's foot seen just past the rim is found by a probe in the plane where its line of
/// sight crosses it, nearer the camera than the foot itself.
pub(super) struct SideView {
    camera: BoardPoint3,
    height: f64,
    side: f64,
    /// The camera's foot on the board.
    pub camera_xy: BoardPoint,
}

impl SideView {
    pub fn new(pose: &CameraPose, height: f64, side: f64) -> SideView {
        let camera = pose.centre();
        SideView { camera, height, side, camera_xy: BoardPoint::new(camera.x_mm, camera.y_mm) }
    }

    /// The edge point `at` (in the plane) as the rim, or as the side's foot where the piece has a side and the
    /// camera looks down on the plane.
    pub fn seen(&self, at: BoardPoint) -> Seen {
        let above = self.camera.z_mm - self.height;
        let foot = (self.side > 0.0 && above > self.side).then(|| {
            let t = (above + self.side) / above;
            BoardPoint::new(self.camera.x_mm + t * (at.x_mm - self.camera.x_mm), self.camera.y_mm + t * (at.y_mm - self.camera.y_mm))
        });
        Seen { rim: at, foot }
    }
}

/// A least-squares circle (geometric distance, Gauss-Newton) with iterative
/// outlier rejection, each edge point taken as its rim or as the side's foot,
/// whichever the circle explains ([`Seen::nearest`]). Returns the centre, the
/// radius, the inlier mask and each point as the circle explains it.
/// `prior`: the start is itself a fit (a refinement pass), so outliers are
/// first rejected about it: where glare or grain scatters many of the new
/// edges, a fit to all of them would be pulled off the outline and the spread
/// taken about it would keep the scattered ones.
pub(super) fn robust_circle(
    seen: &[Seen],
    c0: BoardPoint,
    r0: f64,
    fixed_radius: Option<f64>,
    prior: bool,
    camera_xy: BoardPoint,
) -> (BoardPoint, f64, Vec<bool>, Vec<BoardPoint>) {
    let (mut c, mut r) = (c0, fixed_radius.unwrap_or(r0));
    // Each point is its rim or its foot, two fixed points: the same points are the same choice of each.
    let explained = |c: BoardPoint, r: f64| -> Vec<BoardPoint> { seen.iter().map(|s| s.nearest(c, r, camera_xy)).collect() };
    let inliers = |pts: &[BoardPoint], c: BoardPoint, r: f64| -> Vec<bool> {
        let residuals: Vec<f64> = pts.iter().map(|p| p.distance(c) - r).collect();
        let mut abs: Vec<f64> = residuals.iter().map(|e| e.abs()).collect();
        abs.sort_by(f64::total_cmp);
        // 1.4826 * MAD estimates the standard deviation of normal residuals.
        let spread = (1.4826 * abs[abs.len() / 2]).max(MIN_RESIDUAL_SPREAD_MM);
        residuals.iter().map(|e| e.abs() <= OUTLIER_SIGMAS * spread).collect()
    };
    let mut pts = explained(c, r);
    let mut mask = if prior { inliers(&pts, c, r) } else { vec![true; pts.len()] };
    for _ in 0..MAX_ROUNDS {
        let chosen: Vec<BoardPoint> = pts.iter().zip(&mask).filter(|(_, k)| **k).map(|(p, _)| *p).collect();
        (c, r) = geometric_circle(&chosen, c, r, fixed_radius);
        let new_pts = explained(c, r);
        let new_mask = inliers(&new_pts, c, r);
        let settled = new_mask == mask && new_pts == pts;
        (mask, pts) = (new_mask, new_pts);
        if settled {
            break;
        }
    }
    (c, r, mask, pts)
}

/// Gauss-Newton on the geometric distance `|p - c| - r`.
fn geometric_circle(pts: &[BoardPoint], c0: BoardPoint, r0: f64, fixed_radius: Option<f64>) -> (BoardPoint, f64) {
    let (mut cx, mut cy, mut r) = (c0.x_mm, c0.y_mm, fixed_radius.unwrap_or(r0));
    for _ in 0..20 {
        // Normal equations J^T J d = -J^T e for parameters (cx, cy[, r]).
        let mut jtj = [[0.0f64; 3]; 3];
        let mut jte = [0.0f64; 3];
        let c = BoardPoint::new(cx, cy);
        for p in pts {
            let (dx, dy) = (p.x_mm - cx, p.y_mm - cy);
            let dist = p.distance(c).max(1e-12);
            let e = dist - r;
            let j = [-dx / dist, -dy / dist, -1.0];
            for a in 0..3 {
                jte[a] += j[a] * e;
                for b in 0..3 {
                    jtj[a][b] += j[a] * j[b];
                }
            }
        }
        let n = if fixed_radius.is_some() { 2 } else { 3 };
        let Some(step) = solve(&jtj, &jte, n) else { break };
        cx -= step[0];
        cy -= step[1];
        if n == 3 {
            r -= step[2];
        }
        if step[0].hypot(step[1]) < 1e-9 {
            break;
        }
    }
    (BoardPoint::new(cx, cy), r)
}

/// The largest eigenvalue of the centre block of `(J^T J)^-1` for a circle
/// through `pts` about `c` (the centre's variance per unit residual variance,
/// along its worst direction); infinite where the points do not fix it.
pub(super) fn centre_variance_axis(pts: &[BoardPoint], c: BoardPoint, fixed_radius: bool) -> f64 {
    let mut jtj = [[0.0f64; 3]; 3];
    for p in pts {
        let (dx, dy) = (p.x_mm - c.x_mm, p.y_mm - c.y_mm);
        let dist = p.distance(c).max(1e-12);
        let j = [-dx / dist, -dy / dist, -1.0];
        for a in 0..3 {
            for b in 0..3 {
                jtj[a][b] += j[a] * j[b];
            }
        }
    }
    let n = if fixed_radius { 2 } else { 3 };
    let (Some(col_x), Some(col_y)) = (solve(&jtj, &[1.0, 0.0, 0.0], n), solve(&jtj, &[0.0, 1.0, 0.0], n)) else {
        return f64::INFINITY;
    };
    // Eigenvalues of the symmetric 2x2 block [[a, b], [b, d]].
    let (a, b, d) = (col_x[0], (col_x[1] + col_y[0]) / 2.0, col_y[1]);
    (a + d) / 2.0 + (((a - d) / 2.0).powi(2) + b * b).sqrt()
}

/// Solves the leading `n` x `n` block of `a x = b` by Gaussian elimination.
fn solve(a: &[[f64; 3]; 3], b: &[f64; 3], n: usize) -> Option<[f64; 3]> {
    let mut m = [[0.0f64; 4]; 3];
    for i in 0..n {
        m[i][..n].copy_from_slice(&a[i][..n]);
        m[i][3] = b[i];
    }
    for col in 0..n {
        let piv = (col..n).max_by(|&x, &y| m[x][col].abs().total_cmp(&m[y][col].abs()))?;
        if m[piv][col].abs() < 1e-12 {
            return None;
        }
        m.swap(col, piv);
        for row in 0..n {
            if row != col {
                let f = m[row][col] / m[col][col];
                for k in col..4 {
                    m[row][k] -= f * m[col][k];
                }
            }
        }
    }
    let mut x = [0.0; 3];
    for i in 0..n {
        x[i] = m[i][3] / m[i][i];
    }
    Some(x)
}
