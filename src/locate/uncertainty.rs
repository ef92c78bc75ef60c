//! How well a fitted pose is known: its covariance from the edge samples' information (independent noise) or clustered by model edge (each edge's own error shared by its samples), and the board-point error it implies.

use super::*;

/// The pose's information with the construction parameters marginalised out
/// (the Schur complement `A_pp - A_pc A_cc^-1 A_cp` of the fit's `J^T J`): what
/// the edges say of the pose whatever the construction's dimensions.
pub(super) fn marginal_pose_information(jtj: &[[f64; MAX_UNKNOWNS]; MAX_UNKNOWNS], k: usize) -> Option<[[f64; 6]; 6]> {
    let mut info = [[0.0f64; 6]; 6];
    for i in 0..6 {
        info[i][..6].copy_from_slice(&jtj[i][..6]);
    }
    if k == 0 {
        return Some(info);
    }
    let acc: Vec<Vec<f64>> = (0..k).map(|i| jtj[6 + i][6..6 + k].to_vec()).collect();
    let mut inv = Mat::default();
    let am = Mat::from_slice_2d(&acc).ok()?;
    opencv::core::invert(&am, &mut inv, opencv::core::DECOMP_SVD).ok()?;
    for i in 0..6 {
        for j in 0..6 {
            let mut v = 0.0;
            for p in 0..k {
                for q in 0..k {
                    v += jtj[i][6 + p] * inv.at_2d::<f64>(p as i32, q as i32).copied().ok()? * jtj[6 + q][j];
                }
            }
            info[i][j] -= v;
        }
    }
    Some(info)
}

/// The largest predicted standard error (mm, in the board plane) of the visible
/// model points, from the pose covariance `sigma^2 (J^T J)^-1`.
pub(super) fn position_sigma(cam: &Camera, pose: &CameraPose, jtj: &[[f64; 6]; 6], sigma_px: f64, samples: &[Sample]) -> f64 {
    covariance_from_information(jtj, sigma_px).map_or(f64::INFINITY, |cov| worst_point_sigma(cam, pose, &cov, samples))
}

/// The pose's covariance from its information `jtj` (6x6) and the samples'
/// independent noise `sigma_px`; `None` when the information leaves a direction
/// of motion unconstrained.
fn covariance_from_information(jtj: &[[f64; 6]; 6], sigma_px: f64) -> Option<[[f64; 6]; 6]> {
    // Rotations (px per radian) and translations (px per mm) differ by ~1e6:
    // equilibrate before judging the conditioning.
    let d: Vec<f64> = (0..6).map(|i| jtj[i][i].max(1e-300).sqrt()).collect();
    let mut scaled = [[0.0f64; 6]; 6];
    for i in 0..6 {
        for j in 0..6 {
            scaled[i][j] = jtj[i][j] / (d[i] * d[j]);
        }
    }
    let am = Mat::from_slice_2d(&scaled).ok()?;
    let mut inv = Mat::default();
    let rcond = opencv::core::invert(&am, &mut inv, opencv::core::DECOMP_SVD).ok()?;
    // `invert` returns the inverse condition number for SVD; below this the
    // features leave a direction of motion unconstrained.
    const MIN_RCOND: f64 = 1e-10;
    if !(rcond > MIN_RCOND) {
        return None;
    }
    let mut cov = [[0.0f64; 6]; 6];
    for (i, row) in cov.iter_mut().enumerate() {
        for (j, v) in row.iter_mut().enumerate() {
            *v = inv.at_2d::<f64>(i as i32, j as i32).copied().unwrap_or(f64::NAN) / (d[i] * d[j]) * sigma_px * sigma_px;
        }
    }
    Some(cov)
}

/// The standard error of the worst of `samples`' board points, mm (the major
/// axis of its board-plane error ellipse), for the pose covariance `cov`.
pub(super) fn worst_point_sigma(cam: &Camera, pose: &CameraPose, cov: &[[f64; 6]; 6], samples: &[Sample]) -> f64 {
    let step = (samples.len() / 200).max(1);
    let mut worst = 0.0f64;
    for s in samples.iter().step_by(step) {
        let jp = projection_jacobian(cam, s.xc);
        // Image covariance of this point.
        let mut c = [[0.0f64; 2]; 2];
        for a in 0..2 {
            for b in 0..2 {
                c[a][b] = (0..6).map(|p| (0..6).map(|q| jp[a][p] * cov[p][q] * jp[b][q]).sum::<f64>()).sum();
            }
        }
        // The board-plane Jacobian d p / d (x, y) at this point: columns R e_x, R e_y through dp/dX.
        let r = pose.rotation;
        let (iz, x) = (1.0 / s.xc[2], s.xc);
        let dp = |col: usize| {
            let d = [r[0][col], r[1][col], r[2][col]];
            [cam.fx * (d[0] * iz - x[0] * d[2] * iz * iz), cam.fy * (d[1] * iz - x[1] * d[2] * iz * iz)]
        };
        let (ax, ay) = (dp(0), dp(1));
        let det = ax[0] * ay[1] - ay[0] * ax[1];
        if det.abs() < 1e-12 {
            continue;
        }
        // M = A^-1 maps image offsets to board offsets.
        let m = [[ay[1] / det, -ay[0] / det], [-ax[1] / det, ax[0] / det]];
        let mut b = [[0.0f64; 2]; 2];
        for i in 0..2 {
            for j in 0..2 {
                b[i][j] = (0..2).map(|k| (0..2).map(|l| m[i][k] * c[k][l] * m[j][l]).sum::<f64>()).sum();
            }
        }
        let tr = b[0][0] + b[1][1];
        let det_b = b[0][0] * b[1][1] - b[0][1] * b[1][0];
        let lmax = 0.5 * tr + (0.25 * tr * tr - det_b).max(0.0).sqrt();
        worst = worst.max(lmax.max(0.0).sqrt());
    }
    worst
}

/// One model edge's sums over its inlier samples: `sum_i j_i r_i` (its score:
/// how its residuals pull the fit) and `sum_i j_i` (how the fit would follow the
/// whole edge moved by a pixel along its normal).
pub(super) struct EdgeSums {
    pub(super) score: [f64; MAX_UNKNOWNS],
    pub(super) jacobian: [f64; MAX_UNKNOWNS],
}

/// The least error of where an edge lies that its samples share, px (one sign
/// for the whole edge, unknown): no edge is located better than about a tenth
/// of a pixel (the pre-blur's and the Sobel's asymmetry across a shaded or
/// coloured step, the lens's residual), and the part of that error the fitted
/// pose takes up leaves no residual to be measured by.
const EDGE_BIAS_FLOOR_PX: f64 = 0.1;

/// The pose's covariance with the samples' errors clustered by model edge (the
/// "sandwich" `A^-1 B A^-1`, `B` summing each edge's score `sum_i j_i r_i`
/// outer itself): the samples along one edge share its error (the blur's and
/// the shading's bias of where the edge lies, the lens's residual there, how the
/// board is built), which independent noise (`sigma^2 A^-1`) counts as averaged
/// away over hundreds of samples. `jtj`: the fit's information over its
/// `unknowns` (pose first, then the construction, priors included); `edges`:
/// the sums of each edge with inliers (`r`: normal offset, px). With `k` edges
/// and the `unknowns` estimated from them, the scores are scaled by
/// `k / (k - unknowns)` (their spread about a fitted pose is smaller than about
/// the true one; `k` itself with too few edges), and every edge adds the pull of
/// [`EDGE_BIAS_FLOOR_PX`] moving it whole. `None` if `jtj` is singular.
pub(super) fn clustered_pose_covariance(jtj: &[[f64; MAX_UNKNOWNS]; MAX_UNKNOWNS], unknowns: usize, edges: &[EdgeSums]) -> Option<[[f64; 6]; 6]> {
    let n = unknowns;
    let k = edges.len() as f64;
    let scale = k / (k - n as f64).max(1.0);
    // Equilibrate (rotations and translations differ in scale by ~1e6), invert.
    let d: Vec<f64> = (0..n).map(|i| jtj[i][i].max(1e-300).sqrt()).collect();
    let scaled: Vec<Vec<f64>> = (0..n).map(|i| (0..n).map(|j| jtj[i][j] / (d[i] * d[j])).collect()).collect();
    let am = Mat::from_slice_2d(&scaled).ok()?;
    let mut inv = Mat::default();
    let rcond = opencv::core::invert(&am, &mut inv, opencv::core::DECOMP_SVD).ok()?;
    if !(rcond > 1e-10) {
        return None;
    }
    let ainv: Vec<Vec<f64>> = (0..n).map(|i| (0..n).map(|j| inv.at_2d::<f64>(i as i32, j as i32).copied().unwrap_or(f64::NAN) / (d[i] * d[j])).collect()).collect();
    // Each edge's score through A^-1: its pull on the pose; and the pull of the
    // edge moved whole by the floor of an edge's location error.
    let through = |g: &[f64; MAX_UNKNOWNS]| -> [f64; 6] { std::array::from_fn(|i| (0..n).map(|j| ainv[i][j] * g[j]).sum()) };
    let mut cov = [[0.0f64; 6]; 6];
    for e in edges {
        let (pull, whole) = (through(&e.score), through(&e.jacobian));
        for i in 0..6 {
            for j in 0..6 {
                cov[i][j] += scale * pull[i] * pull[j] + EDGE_BIAS_FLOOR_PX * EDGE_BIAS_FLOOR_PX * whole[i] * whole[j];
            }
        }
    }
    cov.iter().flatten().all(|v| v.is_finite()).then_some(cov)
}
