//! Small 3D and projection helpers of the pose fit.

use super::*;

// ---------------------------------------------------------------------------
// Small geometry.

/// A 3-vector OpenCV returned (`solvePnP`'s rvec or tvec: 3x1 or 1x3, f32 or
/// f64) as `[f64; 3]`.
pub(super) fn vec3_of(m: &Mat) -> opencv::Result<[f64; 3]> {
    let mut f = Mat::default();
    m.convert_to_def(&mut f, opencv::core::CV_64F)?;
    let f = f.reshape(1, 3)?;
    Ok([0, 1, 2].map(|i| f.at_2d::<f64>(i, 0).copied().unwrap_or(f64::NAN)))
}

/// The product `a b` of two 3x3 matrices.
pub(super) fn mul3(a: &Rotation, b: &Rotation) -> Rotation {
    std::array::from_fn(|i| std::array::from_fn(|j| (0..3).map(|k| a[i][k] * b[k][j]).sum()))
}

pub(super) fn dot3(a: [f64; 3], b: [f64; 3]) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

pub(super) fn cross3(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]
}

pub(super) fn unit3(v: [f64; 3]) -> Option<[f64; 3]> {
    let n = dot3(v, v).sqrt();
    (n > 1e-12 && n.is_finite()).then(|| [v[0] / n, v[1] / n, v[2] / n])
}

pub(super) fn scale3(v: [f64; 3], s: f64) -> [f64; 3] {
    [v[0] * s, v[1] * s, v[2] * s]
}

pub(super) fn sub3(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}

pub(super) fn pt(p: BoardPoint3) -> [f64; 3] {
    [p.x_mm, p.y_mm, p.z_mm]
}

/// Pinhole projection of a camera-frame point (the undistorted image's camera).
pub(super) fn project(cam: &Camera, x: [f64; 3]) -> Option<[f64; 2]> {
    (x[2] > NEAR_MM).then(|| [cam.fx * x[0] / x[2] + cam.cx, cam.fy * x[1] / x[2] + cam.cy])
}

/// The pose after a small motion: rotation `w` (axis-angle) about the camera
/// centre then translation `dt`, both in camera coordinates.
pub(super) fn perturbed(pose: &CameraPose, d: &[f64; 6]) -> CameraPose {
    let dr = crate::camera::rotation_from_rvec([d[0], d[1], d[2]]);
    let r = mul3(&dr, &pose.rotation);
    let t0 = pose.translation;
    let t = [0, 1, 2].map(|i| dot3(dr[i], t0) + d[3 + i]);
    CameraPose { rotation: r, translation: t }
}

/// `d p / d (w, t)` for the camera-frame point `x` (2 rows of 6).
pub(super) fn projection_jacobian(cam: &Camera, x: [f64; 3]) -> [[f64; 6]; 2] {
    let (iz, x0, x1) = (1.0 / x[2], x[0], x[1]);
    // d p / d X
    let du = [cam.fx * iz, 0.0, -cam.fx * x0 * iz * iz];
    let dv = [0.0, cam.fy * iz, -cam.fy * x1 * iz * iz];
    // d X / d w = -[X]x ; d X / d t = I
    let dxdw = [[0.0, x[2], -x[1]], [-x[2], 0.0, x[0]], [x[1], -x[0], 0.0]];
    let mut out = [[0.0; 6]; 2];
    for (row, g) in [du, dv].iter().enumerate() {
        for j in 0..3 {
            out[row][j] = (0..3).map(|k| g[k] * dxdw[k][j]).sum();
            out[row][3 + j] = g[j];
        }
    }
    out
}

#[cfg(test)]
/// Largest distance between the board points seen by two poses, over a grid of the surface, mm.
pub(super) fn pose_distance(a: &CameraPose, b: &CameraPose, points: &[[f64; 3]]) -> f64 {
    // Compare where each pose puts the camera-frame points: equivalently,
    // how far apart the two poses map the same board points in space.
    points
        .iter()
        .map(|p| {
            let bp = BoardPoint3::new(p[0], p[1], p[2]);
            let (x, y) = (a.to_camera(bp), b.to_camera(bp));
            dot3(sub3(x, y), sub3(x, y)).sqrt()
        })
        .fold(0.0, f64::max)
}
