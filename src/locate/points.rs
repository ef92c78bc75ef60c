//! The pose from hand-picked points (`--points`): reading the points file and solvePnP.

use super::*;

// ---------------------------------------------------------------------------
// Manual points.

/// A known board point and where it is in the raw (distorted) frame.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Correspondence {
    pub board: BoardPoint3,
    pub pixel: PixelPoint,
}

/// The most points a points file may hold: they are typed or clicked by hand (4 to a few dozen).
pub const MAX_POINTS: usize = 1000;
/// The largest coordinate (board mm) or pixel position in a points file: 100 m, or a 100k-pixel image.
pub const MAX_POINT_VALUE: f64 = 100_000.0;

/// Reads a points file: one point per line, `x_mm, y_mm, u, v` (a point on the
/// surface) or `x_mm, y_mm, z_mm, u, v`, separated by commas or whitespace;
/// `#` starts a comment; a first line that is not numbers is a header. Pixels
/// are in the raw frame, OpenCV's convention (pixel centres at integers).
pub fn read_points(path: &Path) -> Result<Vec<Correspondence>, LocateError> {
    let text = std::fs::read_to_string(path).map_err(|source| LocateError::PointsIo { path: path.to_path_buf(), source })?;
    let mut out = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = raw.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let fields: Vec<&str> = line.split(|c: char| c == ',' || c.is_whitespace()).filter(|s| !s.is_empty()).collect();
        let nums: Result<Vec<f64>, _> = fields.iter().map(|f| f.parse::<f64>()).collect();
        let bad = |problem: String| LocateError::PointsFile { path: path.to_path_buf(), line: i + 1, problem };
        let nums = match nums {
            Ok(n) => n,
            Err(_) if out.is_empty() && fields.iter().all(|f| f.parse::<f64>().is_err()) => continue,
            Err(_) => return Err(bad(format!("`{line}` is not numbers"))),
        };
        if nums.iter().any(|v| !v.is_finite() || v.abs() > MAX_POINT_VALUE) {
            return Err(bad(format!("values must be finite and within {MAX_POINT_VALUE} (mm or pixels)")));
        }
        if out.len() == MAX_POINTS {
            return Err(bad(format!("more than {MAX_POINTS} points: typed points are a handful")));
        }
        let c = match nums.as_slice() {
            [x, y, u, v] => Correspondence { board: BoardPoint3::new(*x, *y, 0.0), pixel: PixelPoint::new(*u, *v) },
            [x, y, z, u, v] => Correspondence { board: BoardPoint3::new(*x, *y, *z), pixel: PixelPoint::new(*u, *v) },
            _ => return Err(bad(format!("expected `x_mm, y_mm, u, v` or `x_mm, y_mm, z_mm, u, v`, got {} values", nums.len()))),
        };
        out.push(c);
    }
    Ok(out)
}

/// The pose from four or more hand-picked correspondences (raw frame pixels,
/// through the camera's distortion): OpenCV's `solvePnP` (IPPE for points on the
/// surface, SQPnP otherwise) refined by Levenberg-Marquardt.
pub fn locate_from_points(board: &Board, camera: &Camera, points: &[Correspondence], cfg: &LocateConfig) -> Result<BoardPose, LocateError> {
    let mut distinct: Vec<&Correspondence> = Vec::new();
    for p in points {
        let same = distinct.iter().any(|q| {
            let d = sub3(pt(q.board), pt(p.board));
            dot3(d, d).sqrt() < 1.0
        });
        if !same {
            distinct.push(p);
        }
    }
    if distinct.len() < 4 {
        return Err(LocateError::TooFewPoints { got: distinct.len(), needed: 4 });
    }
    let obj: Vector<Point3d> = points.iter().map(|c| Point3d::new(c.board.x_mm, c.board.y_mm, c.board.z_mm)).collect();
    let k = camera.camera_matrix_mat()?;
    // OpenCV's solvePnP knows Brown's coefficients only: a fisheye's points are first undistorted through our own
    // model to the pinhole pixels of the same K, and solved with no distortion.
    let (img, d): (Vector<Point2d>, Mat) = if camera.distortion.as_fisheye().is_some() {
        let pinhole = |c: &Correspondence| camera.normalise(c.pixel).map(|(x, y)| camera.pinhole_pixel(x, y));
        let img = points
            .iter()
            .map(|c| pinhole(c).map(|p| Point2d::new(p.u, p.v)))
            .collect::<Option<Vector<Point2d>>>()
            .ok_or_else(|| LocateError::PoorFit { reason: "a point lies outside the fisheye lens's field of view".into() })?;
        (img, Mat::default())
    } else {
        (points.iter().map(|c| Point2d::new(c.pixel.u, c.pixel.v)).collect(), camera.dist_coeffs_mat()?)
    };
    let planar = points.iter().all(|c| c.board.z_mm.abs() < 1e-9);
    let method = if planar { calib3d::SOLVEPNP_IPPE } else { calib3d::SOLVEPNP_SQPNP };
    let (mut rvec, mut tvec) = (Mat::default(), Mat::default());
    let ok = cv("solvePnP", calib3d::solve_pnp(&obj, &img, &k, &d, &mut rvec, &mut tvec, false, method))?;
    if !ok {
        return Err(LocateError::PoorFit { reason: "solvePnP found no pose for these points".into() });
    }
    cv("solvePnPRefineLM", calib3d::solve_pnp_refine_lm_def(&obj, &img, &k, &d, &mut rvec, &mut tvec))?;
    let pose = CameraPose::from_rvec_tvec(cv("pose", vec3_of(&rvec))?, cv("pose", vec3_of(&tvec))?);
    let mut ss = 0.0;
    let mut features = Vec::new();
    for c in points {
        let e = pose.project(camera, c.board).map_or(f64::INFINITY, |p| p.distance(c.pixel));
        ss += e * e;
        features.push(FeatureFit {
            feature: format!("point ({}, {}, {})", c.board.x_mm, c.board.y_mm, c.board.z_mm),
            samples: 1,
            inliers: usize::from(e <= cfg.max_points_rms_px),
            rms_px: e,
            fixed: true,
        });
    }
    let rms = (ss / points.len() as f64).sqrt();
    if !(rms <= cfg.max_points_rms_px) {
        return Err(LocateError::PoorFit {
            reason: format!(
                "the points reproject with {rms:.2} px RMS (limit {:.1} px): a point is mistyped or mismatched (worst: {})",
                cfg.max_points_rms_px,
                worst_points(&features)
            ),
        });
    }
    if pose.centre().z_mm <= 0.0 {
        return Err(LocateError::PoorFit { reason: "the points put the camera below the board".into() });
    }
    Ok(BoardPose {
        board: board.name.clone(),
        pose,
        method: LocateMethod::Points,
        reprojection_rms_px: rms,
        coverage: f64::NAN,
        position_sigma_mm: points_position_sigma(camera, &pose, points, ss),
        features,
        construction: FittedConstruction::new(),
    })
}

/// A point typed or clicked by eye is good to about this (px) at best: the
/// floor of the points' noise when their residual is smaller (four points
/// leave only two residual degrees of freedom, and exact ones none).
const MIN_TYPED_POINT_SIGMA_PX: f64 = 1.0;

/// The pose's contribution to a footprint's uncertainty (mm), from the typed
/// points: their noise (the residual `ss` over its degrees of freedom, at
/// least [`MIN_TYPED_POINT_SIGMA_PX`]) through the pose's information from
/// them, worst over the board at the points (pieces lie among them: the
/// corners of the area that matters are what a user types).
fn points_position_sigma(camera: &Camera, pose: &CameraPose, points: &[Correspondence], ss: f64) -> f64 {
    let dof = (2 * points.len()).saturating_sub(6);
    let noise = if dof > 0 { (ss / dof as f64).sqrt() } else { 0.0 };
    let sigma_px = noise.max(MIN_TYPED_POINT_SIGMA_PX);
    let mut jtj = [[0.0f64; 6]; 6];
    let mut samples = Vec::with_capacity(points.len());
    for c in points {
        let xc = pose.to_camera(c.board);
        if xc[2] <= 0.0 {
            return f64::INFINITY;
        }
        let j = projection_jacobian(camera, xc);
        for row in &j {
            for a in 0..6 {
                for b in 0..6 {
                    jtj[a][b] += row[a] * row[b];
                }
            }
        }
        samples.push(Sample { edge: 0, t: 0.0, xc, p: [c.pixel.u, c.pixel.v], n: [0.0, 0.0], partner_px: f64::NAN, line_px: f64::NAN });
    }
    position_sigma(camera, pose, &jtj, sigma_px, &samples)
}

/// The points that reproject worst, for the user to check first: at most three, each with its error (px).
fn worst_points(features: &[FeatureFit]) -> String {
    let mut by_error: Vec<&FeatureFit> = features.iter().collect();
    by_error.sort_by(|a, b| b.rms_px.total_cmp(&a.rms_px));
    by_error.iter().take(3).map(|f| format!("{} off by {:.1} px", f.feature, f.rms_px)).collect::<Vec<_>>().join(", ")
}
