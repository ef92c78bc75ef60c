//! The automatic search: the frame's lines and hole rims, the hypotheses they give, their refinement a batch at a time, the re-fits of the best reading, and the choice between readings; and how far apart two poses put the board.

use super::*;

impl Locator {
    /// Finds the board automatically.
    pub fn run(&mut self, und: &Undistorted) -> Result<BoardPose, LocateError> {
        self.last_candidate = None;
        let cam = und.camera;
        let (w, h) = (cam.image_width as f64, cam.image_height as f64);
        let min_len = MIN_SEGMENT_FRACTION * w.min(h);
        self.blur(und)?;
        // The lines (and a washer board's holes' rims, from the same edges) and the
        // gradients, with the edge map made of them for ranking the hypotheses, are
        // read from the same derivatives of the blurred frame, independently: side by
        // side (the lines take the longer).
        derivatives(&self.blurred, &mut self.dx, &mut self.dy)?;
        let Locator { line_finder, keep, dx, dy, grad, edge_map, cfg, .. } = self;
        let (lines, ellipses) = std::thread::scope(|scope| {
            let found = scope.spawn(|| -> Result<_, LocateError> {
                let lines = line_finder.find(und, (dx, dy), keep, min_len, cfg.line_levels)?;
                let ellipses = match line_finder.full_edges() {
                    Some(edges) => holes::find_ellipses(edges)?,
                    None => Vec::new(),
                };
                Ok((lines, ellipses))
            });
            gradients(dx, dy, keep, grad)?;
            edge_map.build(grad);
            found.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic))
        })?;
        // A washer board's holes give poses of their own, where its sides show no line.
        let pairings = holes::pairings(&ellipses, &self.holes);
        let starts = holes::distinct(self.in_parallel(&pairings, |me, _, p| p.start(&cam, &ellipses, &me.holes)).into_iter().flatten());
        let from_holes = holes::hole_poses(self.in_parallel(&starts, |me, _, f| f.solve(&cam, &ellipses, &me.holes)));
        let most = lines.segments.len().max(lines.traced.len());
        if most < 3 && from_holes.is_empty() {
            return Err(LocateError::NotFound { reason: format!("only {most} straight edges in the image; the board's sides and an end or line are needed") });
        }
        let hyps = self.hypotheses(&cam, &lines.segments, &from_holes, true);
        self.lines = lines.segments;
        // Refine the best distinct hypotheses a batch at a time, until one passes
        // the verdict: a frame whose first hypotheses are all wrong readings (the
        // lines' score favours long straight edges off the board) gets further ones.
        let mut tried: Vec<CameraPose> = Vec::new();
        let mut seen = StartsSeen::default();
        let refined = self.refine_batches(&cam, &hyps, &mut tried, &mut seen);
        let (mut good, mut bad) = self.passing(&cam, refined, &mut seen);
        // None passes: the hypotheses of the traced lines, which keep whole the long edges that Hough breaks
        // ([`LineFinder`]), a search of their own (not mixed with the segments': where both find an edge they find
        // it a pixel apart, and the readings the segments' search reaches are its own). Only then, so that a frame
        // the segments locate costs nothing more, and is read as before.
        if good.is_empty() && !lines.traced.is_empty() {
            let hyps = self.hypotheses(&cam, &lines.traced, &[], false);
            let refined = self.refine_batches(&cam, &hyps, &mut tried, &mut seen);
            let (more_good, more_bad) = self.passing(&cam, refined, &mut seen);
            good = more_good;
            bad.extend(more_bad);
            bad.sort_by(|a, b| b.score.total_cmp(&a.score));
        }
        if tried.is_empty() {
            return Err(LocateError::NotFound {
                reason: format!(
                    "no arrangement of the {} straight edges found fits the board's sides and a line across it (an end, a painted line, a gate bar or a wall across the board must show as a straight edge at least {min_len:.0} px long: an end the colour of what lies beyond it, or one broken by pieces or partitions, does not)",
                    self.lines.len().max(lines.traced.len())
                ),
            });
        }
        let Some(first) = good.first() else {
            let Some(r) = bad.first() else {
                return Err(LocateError::NotFound { reason: "no hypothesis converged onto the board's edges".into() });
            };
            self.last_candidate = Some(r.pose);
            self.last_construction = r.construction.clone();
            return Err(self.check(r).expect_err("a rejected candidate fails a check"));
        };
        self.last_candidate = Some(first.pose);
        self.last_construction = first.construction.clone();
        // The near readings the search may have missed, then the reading the image supports.
        let (first, first_cons) = (first.pose, first.construction.clone());
        good.extend(self.shifted_refits(&cam, (&first, &first_cons), &mut seen));
        good.sort_by(|a, b| b.score.total_cmp(&a.score));
        let best = self.choose(&cam, good)?;
        self.last_candidate = Some(best.pose);
        self.last_construction = best.construction.clone();
        // A reading that confirms a partition's or the gate bar's foot where the face above it shows no top has read a
        // shadow's edge for the foot (own scene 22 under one hard light, its partitions' shadows 5 mm wide): not the
        // board. Asked of the chosen reading only: while a reading's construction is still being fitted its tops can
        // lie at the wrong height, and such a reading is a right start.
        if let Some(why) = &best.foot_without_top {
            return Err(LocateError::NotFound { reason: format!("the best fit reads a shadow's edge as a face's foot: {why} (the board read shifted, or the face hidden)") });
        }
        Ok(self.board_pose(&cam, best))
    }

    /// The best distinct of `hyps` refined a batch at a time ([`STARTS_PER_BATCH`], at most [`MAX_START_BATCHES`])
    /// until one passes the verdict; each start is added to `tried`.
    fn refine_batches(&mut self, cam: &Camera, hyps: &[hypotheses::Hypothesis], tried: &mut Vec<CameraPose>, seen: &mut StartsSeen) -> Vec<Refined> {
        let mut refined: Vec<Refined> = Vec::new();
        for _ in 0..MAX_START_BATCHES {
            let starts = self.pick_starts(cam, hyps, tried);
            if starts.is_empty() {
                break;
            }
            tried.extend(&starts);
            refined.extend(self.refine_starts(cam, &starts, seen));
            if refined.iter().any(|r| self.check(r).is_ok()) {
                break;
            }
        }
        refined
    }

    /// `refined` split into the fits that pass every check on their own (they compete) and the rest (they only
    /// explain a refusal), each best-scoring first; where none passes and the best took an outline of the
    /// construction further out for the surface's sides, its re-fits inward join those that pass.
    fn passing(&mut self, cam: &Camera, mut refined: Vec<Refined>, seen: &mut StartsSeen) -> (Vec<Refined>, Vec<Refined>) {
        refined.sort_by(|a, b| b.score.total_cmp(&a.score));
        let (mut good, bad): (Vec<Refined>, Vec<Refined>) = refined.into_iter().partition(|r| self.check(r).is_ok());
        if good.is_empty() {
            if let Some(r) = bad.first().filter(|r| r.sides_outside_surface) {
                let (pose, at) = (r.pose, r.identified_at);
                good.extend(self.inward_refits(cam, &pose, at, seen));
            }
        }
        (good, bad)
    }

    /// The next batch of hypotheses to refine: the best-scoring ones that are
    /// distinct from each other and from those `tried`, a few for every reading
    /// of the cross line first (the best overall score alone can favour a board
    /// read back to front: fewer model edges in view, all matched).
    fn pick_starts(&self, cam: &Camera, hyps: &[hypotheses::Hypothesis], tried: &[CameraPose]) -> Vec<CameraPose> {
        let mut starts: Vec<CameraPose> = Vec::new();
        let mut per_reading = vec![0usize; hyps.iter().map(|h| h.2 + 1).max().unwrap_or(0)];
        for pass in 0..2 {
            for (_, p, yi) in hyps {
                if starts.len() >= STARTS_PER_BATCH {
                    break;
                }
                if pass == 0 && per_reading[*yi] >= STARTS_PER_READING {
                    continue;
                }
                if starts.iter().chain(tried).all(|q| self.image_distance(cam, p, q) > SAME_POSE_PX) {
                    starts.push(*p);
                    per_reading[*yi] += 1;
                }
            }
        }
        starts
    }

    /// Largest image distance between where two poses put the surface points
    /// that the first pose sees, px (infinite if it sees none), in the image
    /// of the distortion-free camera `cam`.
    pub fn image_distance(&self, cam: &Camera, a: &CameraPose, b: &CameraPose) -> f64 {
        let (w, h) = (cam.image_width as f64, cam.image_height as f64);
        let mut worst = f64::NEG_INFINITY;
        for p in &self.probe_points {
            let Some(pa) = project(cam, a.to_camera(BoardPoint3::new(p[0], p[1], p[2]))) else { continue };
            if !(pa[0] >= 0.0 && pa[1] >= 0.0 && pa[0] < w && pa[1] < h) {
                continue;
            }
            let d = project(cam, b.to_camera(BoardPoint3::new(p[0], p[1], p[2]))).map_or(f64::INFINITY, |pb| (pa[0] - pb[0]).hypot(pa[1] - pb[1]));
            worst = worst.max(d);
        }
        if worst == f64::NEG_INFINITY {
            f64::INFINITY
        } else {
            worst
        }
    }

    /// Largest distance on the board's surface between the points pose `a` images
    /// (those of [`Locator::image_distance`]'s probes it sees) and where pose `b`
    /// puts the same pixels, mm (0 if `a` sees none; a pixel whose ray `b` does not
    /// bring down onto the surface is left out: `b` is then no near reading of `a`).
    pub(super) fn board_disagreement_mm(&self, cam: &Camera, a: &CameraPose, b: &CameraPose) -> f64 {
        self.probe_points
            .iter()
            .filter_map(|p| {
                let q = BoardPoint3::new(p[0], p[1], p[2]);
                let px = a.project(cam, q).filter(|x| cam.contains(*x))?;
                b.back_project(cam, px, p[2]).map(|on| (on.x_mm - p[0]).hypot(on.y_mm - p[1]))
            })
            .fold(0.0, f64::max)
    }
}
