//! Whether a refined pose is the board: the features that must confirm, the checks and their reasons.

use super::*;

impl Locator {
    /// The first `y` in the model's clear spans where the image shows a straight
    /// edge right across the visible surface.
    pub(super) fn phantom_line(&self, cam: &Camera, pose: &CameraPose) -> Option<f64> {
        // Rows this far apart on the board, samples this far apart in the image.
        const ROW_STEP_MM: f64 = 2.0;
        const SAMPLE_STEP_PX: f64 = 4.0;
        // A painted line shows along most of its length; pieces cover at most a
        // few tenths of a row.
        const MIN_ROW_FRACTION: f64 = 0.6;
        const MIN_ROW_SAMPLES: usize = 20;
        // Rows stay clear of the side edges and walls.
        const SIDE_CLEARANCE_MM: f64 = 20.0;
        let (w, h) = (cam.image_width as f64, cam.image_height as f64);
        let hw = self.model.ladders.first().map_or(0.0, |l| l.half_width_mm) - SIDE_CLEARANCE_MM;
        if hw <= 0.0 {
            return None;
        }
        for &(y0, y1) in &self.model.clear_spans_mm {
            let mut y = y0;
            while y <= y1 {
                let (a, b) = (pose.to_camera(BoardPoint3::new(-hw, y, 0.0)), pose.to_camera(BoardPoint3::new(hw, y, 0.0)));
                if let (Some(pa), Some(pb)) = (project(cam, a), project(cam, b)) {
                    let len = (pb[0] - pa[0]).hypot(pb[1] - pa[1]);
                    let n = (len / SAMPLE_STEP_PX).floor() as usize;
                    let (mut seen, mut hits) = (0usize, 0usize);
                    for i in 0..=n {
                        let x = -hw + 2.0 * hw * i as f64 / n.max(1) as f64;
                        let Some(p) = project(cam, pose.to_camera(BoardPoint3::new(x, y, 0.0))) else { continue };
                        if !inside(p, w, h) {
                            continue;
                        }
                        let Some(q) = project(cam, pose.to_camera(BoardPoint3::new(x, y + 1.0, 0.0))) else { continue };
                        let d = [q[0] - p[0], q[1] - p[1]];
                        let l = d[0].hypot(d[1]);
                        if l < 1e-9 {
                            continue;
                        }
                        seen += 1;
                        if self.grad.search(p, [d[0] / l, d[1] / l], 1.0, 0.0).is_some() {
                            hits += 1;
                        }
                    }
                    if seen >= MIN_ROW_SAMPLES && hits as f64 >= MIN_ROW_FRACTION * seen as f64 {
                        return Some(y);
                    }
                }
                y += ROW_STEP_MM;
            }
        }
        None
    }

    /// The checks a pose must pass on its own.
    pub(super) fn check(&self, best: &Refined) -> Result<(), LocateError> {
        let cfg = &self.cfg;
        if -best.pose.rotation[2][2] < MAX_TILT_DEG.to_radians().cos() {
            return Err(LocateError::NotFound { reason: format!("the best fit sees the board edge-on (more than {MAX_TILT_DEG} degrees from overhead)") });
        }
        if best.inliers < cfg.min_inliers || best.coverage < cfg.min_coverage {
            return Err(LocateError::NotFound {
                reason: format!(
                    "the best fit matches {:.0} % of the visible board edges ({} samples; needs {:.0} % and {})",
                    best.coverage * 100.0,
                    best.inliers,
                    cfg.min_coverage * 100.0,
                    cfg.min_inliers
                ),
            });
        }
        if !best.identified {
            return Err(LocateError::NotFound {
                reason: "the board's outline fits but its lines, holes or gate bar do not confirm it (absent, hidden, or the pose is wrong)".into(),
            });
        }
        if let Some(y) = best.phantom_line_mm {
            return Err(LocateError::NotFound {
                reason: format!("the best fit leaves a straight line across the board unexplained (at y = {y:.0} mm, where the board has none)"),
            });
        }
        if best.rms_px > cfg.max_rms_px {
            return Err(LocateError::PoorFit { reason: format!("edge residual {:.2} px RMS exceeds {:.2} px", best.rms_px, cfg.max_rms_px) });
        }
        if !(best.sigma_mm <= cfg.max_position_sigma_mm) {
            return Err(LocateError::PoorFit {
                reason: format!(
                    "the visible features leave board points uncertain by {:.1} mm (limit {:.1} mm): too little of the board is in view",
                    best.sigma_mm, cfg.max_position_sigma_mm
                ),
            });
        }
        Ok(())
    }

}

/// Whether sample `s` of edge `e` lies on an upright face seen edge-on: one
/// narrower in the image than [`MIN_FACE_PX`] at the sample.
pub(super) fn on_edge_on_face(e: &ModelEdge, pose: &CameraPose, cam: &Camera, s: &Sample) -> bool {
    let Some(across) = e.face_across_mm else { return false };
    // Back to board coordinates, then across the face and into the image again.
    let r = pose.rotation;
    let d = sub3(s.xc, pose.translation);
    let x = [0, 1, 2].map(|j| r[0][j] * d[0] + r[1][j] * d[1] + r[2][j] * d[2]);
    let far = BoardPoint3::new(x[0] + across[0], x[1] + across[1], x[2] + across[2]);
    project(cam, pose.to_camera(far)).is_some_and(|q| (s.n[0] * (q[0] - s.p[0]) + s.n[1] * (q[1] - s.p[1])).abs() < MIN_FACE_PX)
}
