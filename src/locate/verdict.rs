//! Whether a fitted pose is the board: coverage, the features that must confirm, ambiguity evidence, the checks and their reasons.

use super::*;

/// The image edge points `a` explains that `b` does not, and those `b` explains that `a` does not.
pub(super) fn evidence_difference(a: &[[f64; 2]], b: &[[f64; 2]]) -> (usize, usize) {
    use std::collections::HashSet;
    let cell = |p: &[f64; 2]| ((p[0] / EVIDENCE_CELL_PX).floor() as i64, (p[1] / EVIDENCE_CELL_PX).floor() as i64);
    let grid = |pts: &[[f64; 2]]| pts.iter().map(cell).collect::<HashSet<_>>();
    let only = |pts: &[[f64; 2]], other: &HashSet<(i64, i64)>| {
        pts.iter()
            .filter(|p| {
                let (x, y) = cell(p);
                !(-1..=1).any(|dx| (-1..=1).any(|dy| other.contains(&(x + dx, y + dy))))
            })
            .count()
    };
    (only(a, &grid(b)), only(b, &grid(a)))
}

/// The share of the surface's sides in view where the surface is what lies just inside them
/// ([`Locator::surface_inside_share`]) below which a pose's sides are not the surface's: on the fixtures and
/// renders, right readings measure 0.8 and more, readings on a gutter's or rail's outline 0.5 and less.
pub(super) const MIN_SURFACE_INSIDE: f64 = 0.6;

/// The surface-inside checks compare colours this far (px) either side of the outline: just off the edge, past
/// its blur ...
const STRIP_PX: f64 = 3.0 * BLUR_SIGMA_PX;
/// An end of a board with painted stripes is the surface's end where what lies beyond differs from the surface
/// further in by at least this much more than what lies just inside (8-bit colour, Euclidean), past the widest
/// stripe. Measured: varied 01's whole 22 ft table read from its short foul line as its far end confirms 25 of 25
/// samples with no step asked (inside 3 px from the end, beyond 5 px, the interior sample 16 px in: the light's
/// gradient alone makes the inside nearer) and 8 % with 5; every located and given-back pose of the own, varied
/// and external sets is unchanged with up to 15.
const END_STEP_MIN_LEVELS: f64 = 8.0;
/// ... with the surface's this far (mm) inside it: far enough in to be past any gutter, rail or wall band a wrong
/// pose could take for the edge, near enough to share its light; less than a quarter of the narrowest board.
const INTERIOR_MM: f64 = 60.0;

/// A reading whose sides' lines run on past its walled target end, finding an edge on this share of a line's
/// samples or more, has not read the board's end ([`Locator::sides_run_on_share`]): past the back wall of right
/// readings a line found one on at most 0.16 of its samples (own, varied and external sjoelbak scenes and two
/// fresh varied seeds, read with a temporary trace: a floor tile's edge, grain), past a gate bar read as the back
/// wall on all of them (the regression test's refusal names the share).
const MAX_RUN_ON_SHARE: f64 = 0.5;
/// The sides' lines carried on past a walled target end are sampled from this far beyond it (mm): past the
/// thickest back wall the construction's range allows (60 mm) and a margin for the pose.
const RUN_ON_FROM_MM: f64 = 80.0;
/// ... to this far beyond it (mm): a stretch as long as a sjoelbak's compartments, which a reading shifted by them
/// (a gate bar taken for the back wall) finds the field's walls along.
const RUN_ON_TO_MM: f64 = 230.0;

/// A painted line shows along most of its length; pieces cover at most a few tenths of a row: a straight edge over
/// this share of the surface's width is a line across it.
const PHANTOM_ROW_FRACTION: f64 = 0.6;

/// A feature confirms where at least this share of its samples in view found their edge within the inlier distance
/// ([`INLIER_PX`]): the verdict's identifying features, a construction edge counted where it agrees, the edges across
/// the board that pin the pose along it, and the evidence compared between rival readings.
const CONFIRMED_COVERAGE: f64 = 0.3;

/// A face's top seen at length shows somewhere when at least this share of its samples find their edge: a tenth,
/// a third of [`CONFIRMED_COVERAGE`]. An upright face's top edge (a partition's, the gate bar's) is a step between its
/// lit top and its side or what lies beyond, and at the fitted height it shows along most of its length wherever its
/// foot does; a reading whose foot confirms under a top found on none or a few of its samples has taken a shadow's
/// edge beside the face for the foot (own scene 22: 0 of 54 and 0 of 57 over two partitions' confirmed feet).
const TOP_SHOWN_MIN_SHARE: f64 = 0.1;

/// Edges seen over at least this many samples are seen at length: a feature that does not confirm over as many is
/// evidence against a reading (fewer are too short a stretch to tell).
pub(super) const SEEN_AT_LENGTH: usize = 20;

/// A rules-fixed foot (`per`: each model edge's samples, inliers and squared offsets) that confirms below a face
/// whose top, seen at length, shows nowhere ([`TOP_SHOWN_MIN_SHARE`]), described. Only the tops that tell the board
/// apart (a partition's, the gate bar's): a wall's top is of whatever shape the maker chose (rounded, flush with a
/// frame) and may show no edge at all.
pub(super) fn foot_without_top(model: &BoardModel, per: &[(usize, usize, f64)]) -> Option<String> {
    let shown = |p: (usize, usize, f64)| p.1 as f64 >= TOP_SHOWN_MIN_SHARE * p.0 as f64;
    model.tops_of_feet.iter().enumerate().find_map(|(i, top)| {
        let j = (*top).filter(|&j| model.edges[j].identifying)?;
        let (foot, top) = (per[i], per[j]);
        (foot.1 > 0 && confirms(foot.0, foot.1) && top.0 >= SEEN_AT_LENGTH && !shown(top))
            .then(|| format!("the {} confirms on {} of {} samples, but the top of its face on {} of {}", model.edges[i].name, foot.1, foot.0, top.1, top.0))
    })
}

/// Whether a feature with `samples` in view, `inliers` of them on their edge, confirms ([`CONFIRMED_COVERAGE`]).
pub(super) fn confirms(samples: usize, inliers: usize) -> bool {
    inliers as f64 >= CONFIRMED_COVERAGE * samples as f64
}

impl Refined {
    /// The share of the rules-fixed features' samples that confirm this fit, the feature named `left_out` (if
    /// any) not counted.
    pub(super) fn fixed_share(&self, left_out: Option<&str>) -> f64 {
        let (samples, inliers) = self
            .features
            .iter()
            .filter(|f| f.fixed && Some(f.feature.as_str()) != left_out)
            .fold((0usize, 0usize), |(s, i), f| (s + f.samples, i + f.inliers));
        inliers as f64 / samples.max(1) as f64
    }
}

impl Locator {
    /// The first `y` in the model's clear spans where the image shows a straight
    /// edge right across the visible surface.
    pub(super) fn phantom_line(&self, cam: &Camera, pose: &CameraPose, cons: &[f64]) -> Option<f64> {
        // Rows this far apart on the board, samples this far apart in the image.
        const ROW_STEP_MM: f64 = 2.0;
        const SAMPLE_STEP_PX: f64 = 4.0;
        const MIN_ROW_SAMPLES: usize = 20;
        // Rows stay clear of the side edges and walls.
        const SIDE_CLEARANCE_MM: f64 = 20.0;
        // Rows stay this far (px) from the span's ends too: a painted line's gradient (the blur and the Sobel)
        // reaches about this far beside it, wider than the span's margin in mm where a pixel is several mm.
        const FEATURE_REACH_PX: f64 = 4.0;
        let (w, h) = (cam.image_width as f64, cam.image_height as f64);
        let hw = self.model.ladders.first().map_or(0.0, |l| l.half_width_mm) - SIDE_CLEARANCE_MM;
        if hw <= 0.0 {
            return None;
        }
        // The visible samples of one row: image point and the normal across the row.
        let mut row: Vec<([f64; 2], [f64; 2])> = Vec::new();
        let raised = self.raised_edges_on_surface(cam, pose, cons);
        for &(y0, y1) in &self.model.clear_spans_mm {
            let mut y = y0;
            while y <= y1 {
                if raised.iter().any(|&(a, b)| y >= a && y <= b) {
                    y += ROW_STEP_MM;
                    continue;
                }
                let px_per_mm = match (project(cam, pose.to_camera(BoardPoint3::new(0.0, y, 0.0))), project(cam, pose.to_camera(BoardPoint3::new(0.0, y + 1.0, 0.0)))) {
                    (Some(p), Some(q)) => (q[0] - p[0]).hypot(q[1] - p[1]),
                    _ => 0.0,
                };
                if (y - y0).min(y1 - y) * px_per_mm < FEATURE_REACH_PX {
                    y += ROW_STEP_MM;
                    continue;
                }
                let (a, b) = (pose.to_camera(BoardPoint3::new(-hw, y, 0.0)), pose.to_camera(BoardPoint3::new(hw, y, 0.0)));
                let ends = (project(cam, a), project(cam, b));
                // Only the samples of the row's part in the image can be seen.
                let in_view = if let (Some(pa), Some(pb)) = ends { clip_to_image(pa, pb, w, h).map(|s| (pa, pb, s)) } else { None };
                if let Some((pa, pb, (s0, s1))) = in_view {
                    let len = (pb[0] - pa[0]).hypot(pb[1] - pa[1]);
                    let n = (len / SAMPLE_STEP_PX).floor() as usize;
                    // The image parameters back to the row's own (the samples are even along it).
                    let along = |s: f64| (s / b[2]) / ((1.0 - s) / a[2] + s / b[2]);
                    let first = ((along(s0) * n as f64).floor() as usize).saturating_sub(1);
                    let last = ((along(s1) * n as f64).ceil() as usize + 1).min(n);
                    row.clear();
                    for i in first..=last {
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
                        row.push((p, [d[0] / l, d[1] / l]));
                    }
                    if row.len() >= MIN_ROW_SAMPLES && self.mostly_on_edges(&row, PHANTOM_ROW_FRACTION) {
                        return Some(y);
                    }
                }
                y += ROW_STEP_MM;
            }
        }
        None
    }

    /// Where the construction's edges across the board that stand above or below the surface (a bridged gate bar's
    /// or a wall's top) are imaged, as stretches of the surface's `y` (mm) read at its height with `pose`, each
    /// widened by [`CLEAR_MARGIN_MM`]: the model has those lines, wherever they fall on the surface's image (real
    /// sjoelbak photo 153016: the gate bar's top front edge, 34 mm up, is imaged where the surface is 12 mm past
    /// the bar, and the right reading was refused for "a line where the board has none"). `cons`: the
    /// construction's offsets from nominal (the fit's; none: nominal).
    fn raised_edges_on_surface(&self, cam: &Camera, pose: &CameraPose, cons: &[f64]) -> Vec<(f64, f64)> {
        self.model
            .edges
            .iter()
            .filter(|e| !e.fixed)
            .filter_map(|e| {
                let EdgeShape::Segment { a, b } = e.shape else { return None };
                let (a, b) = BoardModel::segment_at(e, a, b, cons);
                if !e.runs_across() || (a.z_mm.abs() < 1e-9 && b.z_mm.abs() < 1e-9) {
                    return None;
                }
                let on_surface = |q: BoardPoint3| pose.project(cam, q).and_then(|px| pose.back_project(cam, px, 0.0)).map(|s| s.y_mm);
                let (ya, yb) = (on_surface(a)?, on_surface(b)?);
                Some((ya.min(yb) - CLEAR_MARGIN_MM, ya.max(yb) + CLEAR_MARGIN_MM))
            })
            .collect()
    }

    /// Whether one of the frame's straight image lines ([`Locator::run`]'s) lies, read with `pose`, right across
    /// the surface (over [`PHANTOM_ROW_FRACTION`] of its width, nearly square to the sides) within one of the
    /// model's clear spans: the cheap test, from lines already found, of what [`Locator::phantom_line`] scans the
    /// gradients for.
    pub(super) fn line_in_clear_span(&self, cam: &Camera, pose: &CameraPose) -> bool {
        // Across the board: its ends apart along the board by at most this share of their distance across.
        const SQUARE_SLOPE: f64 = 0.05;
        let hw = self.model.ladders.first().map_or(0.0, |l| l.half_width_mm);
        if hw <= 0.0 || self.model.clear_spans_mm.is_empty() {
            return false;
        }
        let raised = self.raised_edges_on_surface(cam, pose, &[]);
        self.lines.iter().any(|line| {
            let d = [line.l[1], -line.l[0]];
            let foot = [-line.l[2] * line.l[0], -line.l[2] * line.l[1]];
            let end = |t: f64| pose.back_project(cam, PixelPoint::new(foot[0] + t * d[0], foot[1] + t * d[1]), 0.0);
            let (Some(a), Some(b)) = (end(line.span[0]), end(line.span[1])) else { return false };
            let (across, along) = ((b.x_mm - a.x_mm).abs(), (b.y_mm - a.y_mm).abs());
            let y = (a.y_mm + b.y_mm) / 2.0;
            let on_surface = a.x_mm.abs() <= hw && b.x_mm.abs() <= hw;
            on_surface
                && across >= PHANTOM_ROW_FRACTION * 2.0 * hw
                && along <= SQUARE_SLOPE * across
                && self.model.clear_spans_mm.iter().any(|&(y0, y1)| y > y0 && y < y1)
                && !raised.iter().any(|&(y0, y1)| y >= y0 && y <= y1)
        })
    }

    /// Whether at least `fraction` of the image points `row` (each with the
    /// normal it is searched along) lie on an edge within a pixel; decided as
    /// soon as more have missed than that leaves room for.
    fn mostly_on_edges(&self, row: &[([f64; 2], [f64; 2])], fraction: f64) -> bool {
        let needed = (fraction * row.len() as f64).ceil() as usize;
        let (mut hits, mut misses) = (0usize, 0usize);
        for (p, n) in row {
            if self.grad.search(*p, *n, 1.0, 0.0).is_some() {
                hits += 1;
            } else {
                misses += 1;
                if misses > row.len() - needed {
                    return false;
                }
            }
        }
        hits >= needed
    }

    /// Share of the surface's long sides in view where the surface is what lies
    /// just inside the edge. The rules fix the surface and where it ends; around it
    /// each maker builds differently (gutters, rails, walls), and those outlines run
    /// parallel to the sides. A pose caught on one of them has a band of gutter,
    /// rail or wall just inside its "side" instead of the surface further in.
    /// Each sample compares the colour [`STRIP_PX`] inside and outside the edge
    /// with the surface's colour [`INTERIOR_MM`] further in: the inside must be the
    /// nearer. `None` when the sides are not seen at length.
    pub(super) fn surface_inside_share(&self, cam: &Camera, pose: &CameraPose) -> Option<f64> {
        const MIN_SAMPLES: usize = 20;
        let Some(ladder) = self.model.ladders.first() else { return None };
        let hw = ladder.half_width_mm;
        let len = self.model.key_points.iter().map(|(_, p)| p.y_mm).fold(0.0f64, f64::max);
        // Each side's foot of a wall is judged on its own: a pose that reads a wall's
        // top as its foot has the wall's face just inside that side, and the other
        // side (seen from across the board, its foot against the surface) must not
        // carry it. Sides that are no wall's foot are judged together.
        let wall_feet = self.model.edges.iter().take(2).all(|e| e.is_foot());
        let (mut seen, mut inside_nearer) = (0usize, 0usize);
        let mut worst_side: Option<f64> = None;
        let occlusion = self.model.occlusion_from(pt(pose.centre()));
        let rows = (len / PROBE_SPACING_MM * 4.0).ceil().max(1.0) as usize;
        for sign in [1.0, -1.0] {
            let (seen0, nearer0) = (seen, inside_nearer);
            for i in 0..=rows {
                let y = len * i as f64 / rows as f64;
                // A foot the wall itself hides (seen from outside) shows nothing of it.
                if wall_feet && occlusion.hides([sign * hw, y, 0.0]) {
                    continue;
                }
                let Some(nearer) = self.inside_is_nearer(cam, pose, BoardPoint3::new(sign * hw, y, 0.0), BoardPoint3::new(sign * (hw - INTERIOR_MM), y, 0.0)) else { continue };
                seen += 1;
                inside_nearer += usize::from(nearer);
            }
            let (n, k) = (seen - seen0, inside_nearer - nearer0);
            if wall_feet && n >= MIN_SAMPLES {
                let share = k as f64 / n as f64;
                worst_side = Some(worst_side.map_or(share, |w: f64| w.min(share)));
            }
        }
        if worst_side.is_some() {
            return worst_side;
        }
        (seen >= MIN_SAMPLES).then(|| inside_nearer as f64 / seen as f64)
    }

    /// At the surface's outline point `edge`: whether what lies [`STRIP_PX`] inside it (towards `interior`, the
    /// surface [`INTERIOR_MM`] further in) is nearer the colour at `interior` than what lies as far outside.
    /// `None` where the two points image too close together or a colour is out of view.
    fn inside_is_nearer(&self, cam: &Camera, pose: &CameraPose, edge: BoardPoint3, interior: BoardPoint3) -> Option<bool> {
        self.inside_is_nearer_past(cam, pose, edge, interior, 0.0)
    }

    /// [`Locator::inside_is_nearer`], with what lies beyond read `past_mm` further out on the board: past a painted
    /// stripe the edge may lie on.
    fn inside_is_nearer_past(&self, cam: &Camera, pose: &CameraPose, edge: BoardPoint3, interior: BoardPoint3, past_mm: f64) -> Option<bool> {
        let (w, h) = (cam.image_width as f64, cam.image_height as f64);
        let colour = |p: [f64; 2]| -> Option<[f64; 3]> {
            if !inside(p, w, h) {
                return None;
            }
            let v = self.blurred.at_2d::<opencv::core::Vec3b>(p[1].round() as i32, p[0].round() as i32).ok()?;
            Some([v[0] as f64, v[1] as f64, v[2] as f64])
        };
        let dist = |a: [f64; 3], b: [f64; 3]| ((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2) + (a[2] - b[2]).powi(2)).sqrt();
        let (e, f) = (project(cam, pose.to_camera(edge))?, project(cam, pose.to_camera(interior))?);
        let d = [f[0] - e[0], f[1] - e[1]];
        let l = d[0].hypot(d[1]);
        if l < 2.0 * STRIP_PX {
            return None;
        }
        let n = [d[0] / l, d[1] / l];
        let at = |k: f64| colour([e[0] + k * n[0], e[1] + k * n[1]]);
        // Past a stripe (its width as imaged there, px, away from the interior on the board), what lies beyond must
        // differ by a step in colour, not only by being a few pixels further from the interior sample (a light's
        // gradient over the surface makes the nearer sample the nearer colour).
        let (past_px, step) = if past_mm > 0.0 {
            let k = past_mm / INTERIOR_MM;
            let away = BoardPoint3::new(edge.x_mm - (interior.x_mm - edge.x_mm) * k, edge.y_mm - (interior.y_mm - edge.y_mm) * k, edge.z_mm);
            (project(cam, pose.to_camera(away)).map_or(0.0, |q| (q[0] - e[0]).hypot(q[1] - e[1])), END_STEP_MIN_LEVELS)
        } else {
            (0.0, 0.0)
        };
        let (cin, cout, cfar) = (at(STRIP_PX)?, at(-(STRIP_PX + past_px))?, colour(f)?);
        Some(dist(cin, cfar) + step < dist(cout, cfar))
    }

    /// Where the surface's target end is the foot of a wall (a sjoelbak's back wall): of the lines of its two sides,
    /// at the surface and at the walls' fitted top, carried on past that wall (from [`RUN_ON_FROM_MM`] to
    /// [`RUN_ON_TO_MM`] beyond the end, past the thickest wall any maker builds), the largest share of samples that
    /// find an edge along the line within the score's reach, and how many samples that line had in view. The sides
    /// end with the surface, which the rules fix: nothing of the board runs on past its back wall, while a reading
    /// that took another bar across the board for the back wall (a bridged gate bar, the compartments read back to
    /// front with the field behind them: a fresh varied table, seed 7002's scene 12) finds the walls of the field
    /// running on where its board has ended. `None` where the target end stands against no wall or no line past
    /// it is in view at length ([`SEEN_AT_LENGTH`]).
    pub(super) fn sides_run_on_share(&self, cam: &Camera, pose: &CameraPose, cons: &[f64]) -> Option<(f64, usize)> {
        const SAMPLE_STEP_MM: f64 = 4.0;
        let (target_end, ladder) = (self.model.edges.get(2)?, self.model.ladders.first()?);
        if target_end.name != "target end" || !target_end.is_foot() {
            return None;
        }
        let hw = ladder.half_width_mm;
        // The back wall's face at its fitted height: the walls' tops' lines run on too.
        let top = face_step(&self.model, target_end, cons).map_or(0.0, |d| d[2]);
        let (w, h) = (cam.image_width as f64, cam.image_height as f64);
        let mut best: Option<(f64, usize)> = None;
        for sign in [1.0, -1.0] {
            for z in [0.0, top] {
                let (mut seen, mut hits) = (0usize, 0usize);
                let mut y = -RUN_ON_FROM_MM;
                while y >= -RUN_ON_TO_MM {
                    let at = BoardPoint3::new(sign * hw, y, z);
                    let across = BoardPoint3::new(sign * (hw - 1.0), y, z);
                    y -= SAMPLE_STEP_MM;
                    let (Some(p), Some(q)) = (project(cam, pose.to_camera(at)), project(cam, pose.to_camera(across))) else { continue };
                    if !inside(p, w, h) {
                        continue;
                    }
                    let l = (q[0] - p[0]).hypot(q[1] - p[1]);
                    if l < 1e-9 {
                        continue;
                    }
                    seen += 1;
                    hits += usize::from(self.grad.search(p, [(q[0] - p[0]) / l, (q[1] - p[1]) / l], SCORE_REACH_PX, 0.0).is_some());
                }
                if seen >= SEEN_AT_LENGTH {
                    let share = hits as f64 / seen as f64;
                    if best.is_none_or(|(b, _)| share > b) {
                        best = Some((share, seen));
                    }
                }
            }
        }
        best
    }

    /// For each open end of the surface in view (an outline edge across the board with nothing standing on it),
    /// the share of its samples where what lies just inside the end is nearer the surface's colour further in
    /// than what lies as far beyond it, as [`Locator::surface_inside_share`] reads the sides; the least such share
    /// and the end's name. An end read on a painted line across the surface (a board seen mirrored, the rest of
    /// it taken to lie out of view) has the surface on both sides: about half. `None` when no end is seen at length.
    pub(super) fn end_inside_share(&self, cam: &Camera, pose: &CameraPose) -> Option<(f64, &str)> {
        const MIN_SAMPLES: usize = 10;
        // Samples stay clear of the corners, where the sides' own edges are.
        const CORNER_CLEARANCE_MM: f64 = 30.0;
        const SAMPLES_ACROSS: usize = 24;
        let len = self.model.key_points.iter().map(|(_, p)| p.y_mm).fold(0.0f64, f64::max);
        // What lies beyond an end is read past the widest painted stripe across the board: an end read on a
        // stripe's edge (a whole 22 ft table through a fisheye, read from its short foul line as its far end) would
        // otherwise find the stripe beyond, a pixel or two wide, and take it for the surface ending there.
        let stripe_mm = self.model.edges.iter().filter_map(|e| e.line_across_mm).map(|a| a[1].abs()).fold(0.0f64, f64::max);
        let mut worst: Option<(f64, &str)> = None;
        for e in self.model.edges.iter().filter(|e| e.is_open_outline()) {
            let EdgeShape::Segment { a, b } = e.shape else { continue };
            if (a.y_mm - b.y_mm).abs() > 1e-6 || (b.x_mm - a.x_mm).abs() <= 2.0 * CORNER_CLEARANCE_MM {
                continue;
            }
            // Inward: towards the board's middle along its length.
            let inward = if a.y_mm < len / 2.0 { 1.0 } else { -1.0 };
            let (x0, x1) = (a.x_mm.min(b.x_mm) + CORNER_CLEARANCE_MM, a.x_mm.max(b.x_mm) - CORNER_CLEARANCE_MM);
            let (mut seen, mut nearer) = (0usize, 0usize);
            for i in 0..=SAMPLES_ACROSS {
                let x = x0 + (x1 - x0) * i as f64 / SAMPLES_ACROSS as f64;
                let Some(inside_nearer) = self.inside_is_nearer_past(cam, pose, BoardPoint3::new(x, a.y_mm, 0.0), BoardPoint3::new(x, a.y_mm + inward * INTERIOR_MM, 0.0), stripe_mm) else { continue };
                seen += 1;
                nearer += usize::from(inside_nearer);
            }
            if seen >= MIN_SAMPLES {
                let share = nearer as f64 / seen as f64;
                if worst.is_none_or(|(w, _)| share < w) {
                    worst = Some((share, e.name.as_str()));
                }
            }
        }
        worst
    }

    /// The checks of [`Locator::check`] that come before the straight line
    /// across the board the model does not have: the tilt, how much of the board's
    /// edges show, and the features that must confirm. Only a pose that passes
    /// them is scanned for such a line (the costliest of the measurements).
    fn check_shown(&self, best: &Refined) -> Result<(), LocateError> {
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
        if let Some(why) = &best.unconfirmed {
            return Err(LocateError::NotFound { reason: format!("the board's outline fits but {why} (absent, hidden, or the pose is wrong)") });
        }
        Ok(())
    }

    /// The checks a pose must pass on its own.
    pub(super) fn check(&self, best: &Refined) -> Result<(), LocateError> {
        self.check_shown(best)?;
        let cfg = &self.cfg;
        if let Some(y) = best.phantom_line_mm {
            return Err(LocateError::NotFound {
                reason: format!("the best fit leaves a straight line across the board unexplained (at y = {y:.0} mm, where the board has none)"),
            });
        }
        if best.rms_px > cfg.max_rms_px {
            return Err(LocateError::PoorFit { reason: format!("edge residual {:.2} px RMS exceeds {:.2} px", best.rms_px, cfg.max_rms_px) });
        }
        if !(best.conditioning_sigma_mm <= cfg.max_position_sigma_mm) {
            return Err(LocateError::PoorFit {
                reason: format!(
                    "the visible features leave board points uncertain by {:.1} mm (limit {:.1} mm): too little of the board is in view",
                    best.conditioning_sigma_mm, cfg.max_position_sigma_mm
                ),
            });
        }
        Ok(())
    }

    /// The verdict's measurements at a fitted pose: coverage, inliers, sigma,
    /// per-feature fits and whether the ends are told apart. `samples` is the
    /// caller's scratch.
    pub(super) fn verdict(&self, samples: &mut Vec<Sample>, cam: &Camera, fit: Fit) -> Option<Refined> {
        let n_edges = self.model.edges.len();
        let params = &self.model.params;
        let Fit { pose, cons, polarity, .. } = fit;
        // The verdict's measurements at the final pose, over the fixed features.
        sample_model(&self.model, &pose, cam, REFINE_STEP_PX, &cons, samples);
        // Samples on a face seen edge-on are left out: there the face's two edges
        // are one in the image, and either may be the one found ([`MIN_FACE_PX`]).
        samples.retain(|s| !(s.partner_px.abs() < MIN_FACE_PX));
        let total = samples.iter().filter(|s| self.model.edges[s.edge].fixed).count();
        let mut per: Vec<(usize, usize, f64)> = vec![(0, 0, 0.0); n_edges];
        // (samples, inliers) of the identifying edges that can tell: not on a face seen edge-on.
        let mut per_id: Vec<(usize, usize)> = vec![(0, 0); n_edges];
        let (mut inl, mut ss) = (0usize, 0.0f64);
        let mut evidence = Vec::new();
        // The information of every inlier (construction edges too: fitted, they
        // constrain the pose as much as their dimensions leave free).
        let unknowns = 6 + params.len();
        let mut jtj = [[0.0f64; MAX_UNKNOWNS]; MAX_UNKNOWNS];
        // The information of each rules-fixed identifying feature (lines, holes, gate
        // openings), summed below over those that confirm: whether they pin the pose
        // without the outline.
        let mut jtj_per_id = vec![[[0.0f64; 6]; 6]; n_edges];
        // Each edge's sums over its inliers, for the clustered covariance.
        let mut edge_sums = vec![EdgeSums::default(); n_edges];
        // Each sample's edge, the thin lines its samples miss one by one read on average, as the fit reads them.
        let mut found: Vec<Option<(f64, f32)>> = samples.iter().map(|s| self.edge_of(s, s.window(INLIER_PX * 2.0), polarity[s.edge], SEARCH_STEP_PX)).collect();
        self.thin_lines_on_average(samples, &mut found, INLIER_PX * 2.0);
        for (s, f) in samples.iter().zip(&found) {
            per[s.edge].0 += 1;
            let edge = &self.model.edges[s.edge];
            let judged = edge.identifying;
            per_id[s.edge].0 += usize::from(judged);
            let Some((off, _)) = *f else { continue };
            if off.abs() > INLIER_PX {
                continue;
            }
            per_id[s.edge].1 += usize::from(judged);
            evidence.push((s.edge, [s.p[0] + off * s.n[0], s.p[1] + off * s.n[1]]));
            per[s.edge].1 += 1;
            per[s.edge].2 += off * off;
            if edge.fixed {
                inl += 1;
                ss += off * off;
            }
            let j = normal_jacobian(cam, &self.model, &pose, s);
            if !edge.fixed {
                // The construction's possible bias imaged where this sample lies (summed here, averaged below).
                edge_sums[s.edge].model_bias_px += CONSTRUCTION_EDGE_BIAS_MM * cam.fx / s.xc[2].max(1.0);
            }
            for a in 0..unknowns {
                edge_sums[s.edge].score[a] += j[a] * off;
                edge_sums[s.edge].jacobian[a] += j[a];
                for b in 0..unknowns {
                    jtj[a][b] += j[a] * j[b];
                }
            }
            if edge.fixed && edge.identifying {
                for a in 0..6 {
                    for b in 0..6 {
                        jtj_per_id[s.edge][a][b] += j[a] * j[b];
                    }
                }
            }
        }
        for (i, p) in params.iter().enumerate() {
            jtj[6 + i][6 + i] += 1.0 / p.prior_sigma_mm().powi(2);
        }
        if total == 0 || inl < 6 {
            return None;
        }
        let rms = (ss / inl as f64).sqrt();
        // Construction edges count where they agree (seen at length and confirmed),
        // never against: another maker's build is no evidence against the pose.
        let (agree_samples, agree_inliers) = self
            .model
            .edges
            .iter()
            .zip(&per)
            .filter(|(e, p)| !e.fixed && p.0 >= SEEN_AT_LENGTH && confirms(p.0, p.1))
            .fold((0usize, 0usize), |(s, i), (_, p)| (s + p.0, i + p.1));
        let coverage = (inl + agree_inliers) as f64 / (total + agree_samples) as f64;
        samples.retain(|s| self.model.edges[s.edge].fixed);
        let conditioning_sigma_mm = match marginal_pose_information(&jtj, params.len()) {
            Some(info) => position_sigma(cam, &pose, &info, rms.max(0.05), samples),
            None => f64::INFINITY,
        };
        // Where the board lies along its length is read from the rules-fixed edges across it (an end, a line, a
        // gate bar's foot, a hole's rim). Where none confirms (each wall's and the bar's foot in its own shadow),
        // it rests on the construction's edges, and the pose is known no better than the construction model
        // describes the board as built ([`CONSTRUCTION_EDGE_BIAS_MM`]).
        // An edge across the board confirms on at least this many samples: a gate bar's front foot between two
        // openings has 4-8 in an external render's whole view (sj_00: 5 of 8 found), and two or three hits along
        // an edge that is not there are chance.
        const MIN_ACROSS_INLIERS: usize = 5;
        let pinned_along = self
            .model
            .edges
            .iter()
            .zip(&per)
            .any(|(e, p)| e.fixed && e.runs_across() && p.1 >= MIN_ACROSS_INLIERS && confirms(p.0, p.1));
        let seen: Vec<EdgeSums> = edge_sums
            .into_iter()
            .zip(&per)
            .filter(|(_, p)| p.1 > 0)
            .map(|(e, p)| EdgeSums { model_bias_px: if pinned_along { 0.0 } else { e.model_bias_px / p.1 as f64 }, ..e })
            .collect();
        let clustered_sigma_mm = clustered_pose_covariance(&jtj, unknowns, &seen).map_or(f64::INFINITY, |cov| worst_point_sigma(cam, &pose, &cov, samples));
        let sigma_mm = conditioning_sigma_mm.max(clustered_sigma_mm);
        // A few hits along a feature that mostly does not show are chance (texture, a shadow), not a reading
        // (real sjoelbak photo 153016: 7 of the gate bar's 110 foot samples, all but the partitions' feet along
        // the board, "pinned" the pose along it 10-17 px from where its ends are): only the features that
        // confirm pin the pose.
        let jtj_id = confirmed_information(&jtj_per_id, per.iter().map(|p| p.1 > 0 && confirms(p.0, p.1)));
        let identifying_sigma_mm = position_sigma(cam, &pose, &jtj_id, rms.max(0.05), samples);
        let features = self
            .model
            .edges
            .iter()
            .zip(&per)
            .filter(|(_, p)| p.0 > 0)
            .map(|(e, p)| FeatureFit {
                feature: e.name.clone(),
                samples: p.0,
                inliers: p.1,
                rms_px: if p.1 > 0 { (p.2 / p.1 as f64).sqrt() } else { f64::NAN },
                fixed: e.fixed,
            })
            .collect();
        // The identifying features must be seen over a fair stretch and mostly
        // match, and nearly every one seen at length must be confirmed: a wrong
        // pose can still fit the long outline and a few gate-bar edges, never all.
        // (Samples on a face seen edge-on are left out: [`MIN_FACE_PX`].)
        const MIN_IDENTIFYING_INLIERS: usize = 15;
        const MIN_CONFIRMED_SHARE: f64 = 0.75;
        // A construction edge (at its nominal size) helps where it agrees and is
        // left out where it does not: another maker's build must not veto.
        // A foot of an upright face (a partition's, the gate bar's) may lie in its
        // face's own shadow, dark on dark: it counts in the coverage, and is not
        // one of the features that must each confirm.
        let ids: Vec<(usize, &ModelEdge, &(usize, usize))> = self
            .model
            .edges
            .iter()
            .zip(&per_id)
            .enumerate()
            .filter(|(_, (e, p))| e.identifying && (e.fixed || (p.0 >= SEEN_AT_LENGTH && confirms(p.0, p.1))))
            .map(|(i, (e, p))| (i, e, p))
            .collect();
        let (id_samples, id_inliers) = ids.iter().fold((0usize, 0usize), |(s, i), (_, _, p)| (s + p.0, i + p.1));
        // The rules-fixed ones alone (lines, holes, the partitions' and gate bar's feet):
        // a foot may lie in its face's shadow, one by one, but a reading whose feet
        // nearly all fail is confirmed only by tops of free height, which a pose
        // shifted along the board with the heights changed matches as well (own
        // scene 22: 14 % of its feet's samples; right readings on the fixtures >= 28 %).
        const MIN_FIXED_IDENTIFYING_SHARE: f64 = 0.25;
        let (fixed_id_samples, fixed_id_inliers) = ids.iter().filter(|(_, e, _)| e.fixed).fold((0usize, 0usize), |(s, i), (_, _, p)| (s + p.0, i + p.1));
        // Each identifying edge seen at length, and whether it confirms: where most of its samples find it (a thin
        // painted line's samples find it on average: [`Locator::thin_lines_on_average`]).
        let long: Vec<(&ModelEdge, bool)> = ids.iter().filter(|(_, e, p)| p.0 >= SEEN_AT_LENGTH && !e.is_foot()).map(|(_, e, p)| (*e, confirms(p.0, p.1))).collect();
        let confirmed = long.iter().filter(|(_, c)| *c).count();
        // The surface's own outline is the strongest feature in view: each side or
        // end seen at length must show (a pose stretched along the board fits the
        // sides and the lines near one end, never an end edge where there is none),
        // unless the lines, holes and openings alone pin the pose as tightly as the
        // verdict asks of the whole fit (a pale board's end on a pale floor shows no
        // edge, and its holes still leave no doubt).
        // (The foot of a wall may lie in the wall's own shadow: not required.)
        // An edge too faint to show sample by sample (a pale board's end on a pale
        // floor) still shows in its mean profile along its length, where the
        // texture either side averages out ([`Gradients::shows_on_average`]).
        // An end that shows no edge is no reason to refuse where the other end confirms and so does every painted
        // line across the board in view (some in view): the board's length is then read between them; what lies
        // past the one end (a gutter of the surface's own wood, seen from overhead: varied 01) need not differ from
        // the surface. (A washer board's holes do not stand in for the lines: the camera set-up's trial focal
        // lengths then passed a fisheye's frame whose target end glare hides, read wrong.)
        let seen_lines: Vec<bool> = self.model.edges.iter().zip(&per).filter(|(e, p)| e.line_across_mm.is_some() && p.0 >= SEEN_AT_LENGTH).map(|(_, p)| confirms(p.0, p.1)).collect();
        let lines_confirm = !seen_lines.is_empty() && seen_lines.iter().all(|c| *c);
        let other_end_confirms = |unshown: &ModelEdge| {
            lines_confirm
                && unshown.runs_across()
                && self.model.edges.iter().zip(&per).any(|(e, p)| !std::ptr::eq(e, unshown) && e.is_open_outline() && e.runs_across() && p.0 >= SEEN_AT_LENGTH && confirms(p.0, p.1))
        };
        let unshown_outline = self
            .model
            .edges
            .iter()
            .zip(&per)
            .enumerate()
            .filter(|(_, (e, p))| e.is_open_outline() && p.0 >= SEEN_AT_LENGTH)
            .find(|(i, (e, p))| !confirms(p.0, p.1) && !self.grad.shows_on_average(samples.iter().filter(|s| s.edge == *i)) && !other_end_confirms(e))
            .map(|(_, ep)| ep);
        let surface_share = self.surface_inside_share(cam, &pose);
        let sides_outside_surface = surface_share.is_some_and(|s| s < MIN_SURFACE_INSIDE);
        let unconfirmed = if let Some(share) = surface_share.filter(|s| *s < MIN_SURFACE_INSIDE) {
            Some(format!("only {:.0} % of the surface inside the fitted outline looks like the playing surface (needs {:.0} %)", share * 100.0, MIN_SURFACE_INSIDE * 100.0))
        } else if let Some((share, end)) = self.end_inside_share(cam, &pose).filter(|(s, _)| *s < MIN_SURFACE_INSIDE) {
            Some(format!("the surface seems to go on past the fitted {end}: only {:.0} % of it has the surface just inside and something else beyond (needs {:.0} %)", share * 100.0, MIN_SURFACE_INSIDE * 100.0))
        } else if let Some((share, seen)) = self.sides_run_on_share(cam, &pose, &cons).filter(|(s, _)| *s >= MAX_RUN_ON_SHARE) {
            Some(format!(
                "the board's sides run on past its back wall (an edge along a side's line beyond it on {:.0} % of {seen} samples, at most {:.0} %): another bar across the board read as the back wall?",
                share * 100.0,
                MAX_RUN_ON_SHARE * 100.0
            ))
        } else if id_inliers < MIN_IDENTIFYING_INLIERS {
            Some(format!("its lines, holes or gate bar are not in view where the fit puts them ({id_inliers} edge samples confirm; needs {MIN_IDENTIFYING_INLIERS})"))
        } else if (id_inliers as f64) < MIN_IDENTIFYING_COVERAGE * id_samples as f64 {
            Some(format!(
                "only {:.0} % of its lines', holes' and gate bar's edge samples confirm (needs {:.0} %)",
                100.0 * id_inliers as f64 / id_samples.max(1) as f64,
                MIN_IDENTIFYING_COVERAGE * 100.0
            ))
        } else if fixed_id_samples >= SEEN_AT_LENGTH && (fixed_id_inliers as f64) < MIN_FIXED_IDENTIFYING_SHARE * fixed_id_samples as f64 {
            Some(format!(
                "only {:.0} % of the edge samples of its rules-fixed lines, holes and partition and gate-bar feet confirm (needs {:.0} %; the tops, of a height the maker chose, fit a pose shifted along the board as well: feet in shadow?)",
                100.0 * fixed_id_inliers as f64 / fixed_id_samples as f64,
                MIN_FIXED_IDENTIFYING_SHARE * 100.0
            ))
        } else if (confirmed as f64) < MIN_CONFIRMED_SHARE * long.len() as f64 {
            let missing: Vec<&str> = long.iter().filter(|(_, c)| !c).map(|(e, _)| e.name.as_str()).take(3).collect();
            Some(format!("only {confirmed} of the {} lines, holes and gate-bar edges in view confirm (not: {})", long.len(), missing.join(", ")))
        } else if let Some((e, p)) = unshown_outline.filter(|_| !(identifying_sigma_mm <= self.cfg.max_position_sigma_mm)) {
            Some(format!("the {} shows no edge where the fit puts it ({} of {} samples) and the lines and holes alone do not pin the pose", e.name, p.1, p.0))
        } else {
            None
        };
        // Where the rules-fixed identifying features confirm the pose, on average (image px).
        let anchored: Vec<&[f64; 2]> = evidence.iter().filter(|(e, _)| self.model.edges[*e].identifying && self.model.edges[*e].fixed).map(|(_, p)| p).collect();
        let identified_at = (!anchored.is_empty()).then(|| {
            let n = anchored.len() as f64;
            anchored.iter().fold([0.0, 0.0], |a, p| [a[0] + p[0] / n, a[1] + p[1] / n])
        });
        // The image evidence of the features this pose confirms: a few hits along an
        // edge that mostly does not show are chance (texture, a shadow), not a reading.
        let evidence: Vec<[f64; 2]> = evidence.into_iter().filter(|(e, _)| confirms(per[*e].0, per[*e].1)).map(|(_, p)| p).collect();
        // The whole model, its construction at the fitted size included.
        let (all_samples, all_inliers) = per.iter().fold((0usize, 0usize), |(s, i), p| (s + p.0, i + p.1));
        let whole_score = all_inliers as f64 * all_inliers as f64 / all_samples.max(1) as f64;
        let foot_without_top = foot_without_top(&self.model, &per);
        let mut r = Refined { pose, construction: cons, polarity, whole_score, fixed_score: inl as f64 * inl as f64 / total as f64, score: inl as f64 * coverage, coverage, rms_px: rms, inliers: inl, sigma_mm, conditioning_sigma_mm, features, phantom_line_mm: None, unconfirmed, sides_outside_surface, foot_without_top, identified_at, evidence };
        if self.check_shown(&r).is_ok() {
            r.phantom_line_mm = self.phantom_line(cam, &r.pose, &r.construction);
        }
        Some(r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::board::Board;

    /// Each rules-fixed foot of a sjoelbak's partitions and gate bar is paired with its face's top; a reading whose
    /// foot confirms under a top seen at length and found nowhere has read a shadow's edge for the foot. A top found
    /// on a few samples, one seen over too short a stretch, a foot that does not confirm, and a wall's foot under a
    /// top of the maker's shape say nothing.
    #[test]
    fn a_foot_under_a_top_that_shows_nowhere_is_a_shadow() {
        let model = BoardModel::new(&Board::load("sjoelbak").unwrap());
        let idx = |name: &str| model.edges.iter().position(|e| e.name == name).unwrap_or_else(|| panic!("no edge {name}"));
        let (foot, top) = (idx("partition foot at x = 3"), idx("partition top at x = 3"));
        assert_eq!(model.tops_of_feet[foot], Some(top));
        assert_eq!(model.tops_of_feet[idx("gate bar 2 front foot")], Some(idx("gate bar 2 front top")));
        assert_eq!(model.tops_of_feet[idx("gate bar 1 foot at x = -80")], Some(idx("gate bar 1 top end at x = -80")));
        assert_eq!(model.tops_of_feet[top], None, "a top is no foot");
        let none = vec![(0usize, 0usize, 0.0f64); model.edges.len()];
        let with = |changes: &[(usize, (usize, usize))]| {
            let mut per = none.clone();
            for &(i, (n, k)) in changes {
                per[i] = (n, k, 0.0);
            }
            foot_without_top(&model, &per)
        };
        // Own scene 22's wrong reading: 48 of 54 on the foot, 0 of 54 on the top.
        let why = with(&[(foot, (54, 48)), (top, (54, 0))]).expect("a shadow read as the foot");
        assert!(why.contains("partition foot at x = 3") && why.contains("0 of 54"), "{why}");
        assert!(with(&[(foot, (54, 48)), (top, (54, 9))]).is_none(), "a top found on a sixth of its samples shows");
        assert!(with(&[(foot, (54, 48)), (top, (12, 0))]).is_none(), "a top seen over 12 samples is too short to tell");
        assert!(with(&[(foot, (54, 10)), (top, (54, 0))]).is_none(), "a foot that does not confirm");
        let (side, wall_top) = (idx("side +x"), idx("side +x wall top"));
        assert_eq!(model.tops_of_feet[side], Some(wall_top));
        assert!(with(&[(side, (300, 290)), (wall_top, (300, 0))]).is_none(), "a wall's top is of the maker's shape");
    }
}
