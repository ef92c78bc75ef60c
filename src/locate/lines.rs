//! Straight image lines (found at one or more pyramid levels) and the closed-form pose hypotheses read from two sides and a cross line.

use super::*;
use opencv::core::Vec4f;
use opencv::ximgproc::{self, FastLineDetectorTrait};

/// Most pyramid levels lines are found at (each half the previous one's size).
const MAX_LINE_LEVELS: u32 = 4;
/// `HoughLinesP`'s largest gap within one segment, px of its level.
const HOUGH_MAX_GAP_PX: f64 = 3.0;

/// Largest distance of an edge pixel from the line being traced along its chain
/// (OpenCV `FastLineDetector`), px: a diagonal pixel, OpenCV's own default. A long
/// edge whose Canny trace wanders a pixel either way (wood grain beside it) stays one
/// line; a corner or a curve ends it.
const TRACE_MAX_DEVIATION_PX: f32 = std::f32::consts::SQRT_2;

/// A frame's long straight lines, two ways from the same Canny edges ([`LineFinder::find`]).
pub(super) struct FoundLines {
    /// `HoughLinesP` segments at each pyramid level, merged: the search's lines.
    pub(super) segments: Vec<ImageLine>,
    /// The edge chains at full resolution traced into straight lines (`FastLineDetector`), merged: searched where
    /// the segments' hypotheses give no reading that passes the verdict ([`Locator::run`]).
    pub(super) traced: Vec<ImageLine>,
}

/// Finds a frame's long straight lines, at one or more pyramid levels
/// ([`LocateConfig::line_levels`]). At full resolution fine texture crossing a
/// long edge (wood grain, a floor's joints) pulls the edge's Canny trace a pixel
/// or two aside wherever it meets it, and `HoughLinesP`, following a one-pixel
/// corridor, breaks the edge into pieces too short to count; at half resolution
/// the texture is blurred away and the step between two surfaces remains. Thin
/// painted lines and short edges are found at full resolution. The full
/// resolution's edges are also traced chain by chain (OpenCV's `FastLineDetector`),
/// which follows such an edge through its pixel of waviness: varied scenes 00 and
/// 02 (a wood surface against a grey gutter) have their long sides only that way.
/// Owns its scratch images.
#[derive(Default)]
pub(super) struct LineFinder {
    level: Mat,
    next: Mat,
    blurred: Mat,
    edges: Mat,
    valid: Mat,
    keep: Mat,
    masked: Mat,
    segments: Vector<Vec4i>,
    /// Whether to keep the full-resolution level's edges (boards with holes).
    keep_full_edges: bool,
    /// The full-resolution level's edges (clear of the fill), for the hole rims' ellipses.
    edges_full: Mat,
    /// Each segment found, in full-image pixels, with its pyramid level.
    found: Vec<([f64; 4], u32)>,
    /// The full-resolution edges' chains traced into segments, px (the tracer's output).
    traced: Vector<Vec4f>,
    /// Those of them at least the minimum length, as [`LineFinder::found`]'s (level 0).
    traced_found: Vec<([f64; 4], u32)>,
}

impl LineFinder {
    /// A line finder; `keep_full_edges`: keep the full-resolution level's edges
    /// after each search ([`LineFinder::full_edges`]).
    pub(super) fn new(keep_full_edges: bool) -> LineFinder {
        LineFinder { keep_full_edges, ..LineFinder::default() }
    }

    /// The last search's full-resolution edges (clear of the fill), if kept.
    pub(super) fn full_edges(&self) -> Option<&Mat> {
        self.keep_full_edges.then_some(&self.edges_full)
    }

    /// The long straight lines of `und` (`derivs`: the 3x3 Sobel derivatives
    /// along x and y of its full-resolution image pre-blurred by
    /// [`BLUR_SIGMA_PX`], [`derivatives`]; `keep` where that is clear of the
    /// undistortion's fill: [`clear_of_fill`]), best supported first: segments at
    /// least `min_len_px` long at each of the first `levels` levels (at least
    /// one, at most [`MAX_LINE_LEVELS`]), in full-image pixels, merged; and
    /// apart from them the full resolution's edge chains traced into lines at
    /// least as long, merged likewise.
    pub(super) fn find(&mut self, und: &Undistorted, (dx, dy): (&Mat, &Mat), keep: &Mat, min_len_px: f64, levels: u32) -> Result<FoundLines, LocateError> {
        self.found.clear();
        self.traced_found.clear();
        for level in 0..levels.clamp(1, MAX_LINE_LEVELS) {
            // Level 0 is the frame itself; each further level halves the previous one.
            if level == 1 {
                cv("pyramid", imgproc::pyr_down_def(&und.image, &mut self.level))?;
            } else if level > 1 {
                cv("pyramid", imgproc::pyr_down_def(&self.level, &mut self.next))?;
                std::mem::swap(&mut self.level, &mut self.next);
            }
            let scale = f64::from(1u32 << level);
            // The same blur and thresholds at every level: a step edge of a given
            // contrast peaks at the same gradient in its level's pixels.
            //
            // OpenCV's Canny takes the strongest channel's gradient of a colour image; at full resolution from
            // the derivatives the gradients are made of (the same 3x3 Sobel sums of the blurred frame, the border
            // replicated as Canny's own are), not computed twice.
            if level == 0 {
                cv("canny", imgproc::canny_derivative(dx, dy, &mut self.edges, CANNY_LOW, CANNY_HIGH, true))?;
            } else {
                cv("blur", imgproc::gaussian_blur(&self.level, &mut self.blurred, Size::new(0, 0), BLUR_SIGMA_PX, BLUR_SIGMA_PX, BORDER_DEFAULT))?;
                cv("canny", imgproc::canny(&self.blurred, &mut self.edges, CANNY_LOW, CANNY_HIGH, 3, true))?;
            }
            // Edges near the undistortion's fill are its border, not the board: the
            // frame's own margin at level 0, the valid pixels resized and cleared by the
            // margin at that scale plus the level's own blur further down.
            if level > 0 {
                if und.valid.empty() {
                    self.valid = Mat::default();
                } else {
                    let size = Size::new(self.edges.cols(), self.edges.rows());
                    cv("mask", imgproc::resize(&und.valid, &mut self.valid, size, 0.0, 0.0, imgproc::INTER_NEAREST))?;
                }
                clear_of_fill(&self.valid, (BORDER_MARGIN_PX + 3.0 * BLUR_SIGMA_PX) / scale + 3.0 * BLUR_SIGMA_PX, &mut self.keep)?;
            }
            let mask = if level == 0 { keep } else { &self.keep };
            if !mask.empty() {
                cv("mask edges", opencv::core::bitwise_and_def(&self.edges, mask, &mut self.masked))?;
                std::mem::swap(&mut self.edges, &mut self.masked);
            }
            if level == 0 && self.keep_full_edges {
                cv("edges", self.edges.copy_to(&mut self.edges_full))?;
            }
            let len = min_len_px / scale;
            hough_segments(&self.edges, len, &mut self.segments)?;
            // A pixel of a pyramid level is centred on full-image pixel `scale * x`.
            self.found.extend(self.segments.iter().map(|s| ([s[0], s[1], s[2], s[3]].map(|v| f64::from(v) * scale), level)));
            if level == 0 {
                // Last at this level: the tracer clears the edge pixels it has traced.
                trace_segments(&mut self.edges, min_len_px, &mut self.traced, &mut self.traced_found)?;
            }
        }
        let merged = |found: &[([f64; 4], u32)]| {
            let mut lines = merge_segments(found);
            lines.sort_by(|a, b| b.support_px.total_cmp(&a.support_px));
            lines
        };
        Ok(FoundLines { segments: merged(&self.found), traced: merged(&self.traced_found) })
    }
}

/// The straight segments of `edges` at least `min_len_px` long, in `edges`' own pixels, into `out`
/// (`HoughLinesP`: a pixel and half a degree of resolution, a segment voted for by half its length, gaps up to
/// [`HOUGH_MAX_GAP_PX`] bridged).
fn hough_segments(edges: &Mat, min_len_px: f64, out: &mut Vector<Vec4i>) -> Result<(), LocateError> {
    cv("hough", imgproc::hough_lines_p(edges, out, 1.0, std::f64::consts::PI / 360.0, (min_len_px / 2.0) as i32, min_len_px, HOUGH_MAX_GAP_PX))
}

/// The straight stretches of `edges`' chains at least `min_len_px` long (OpenCV's `FastLineDetector` on the edges
/// themselves: aperture 0, no Canny of its own, its thresholds unused but asserted positive), each within
/// [`TRACE_MAX_DEVIATION_PX`] of its chain, added to `out` (level 0); `scratch`: the detector's output. The detector
/// clears the pixels it traces from `edges`, in place.
fn trace_segments(edges: &mut Mat, min_len_px: f64, scratch: &mut Vector<Vec4f>, out: &mut Vec<([f64; 4], u32)>) -> Result<(), LocateError> {
    let min_len = (min_len_px.floor() as i32).max(1);
    let mut tracer = cv("trace", ximgproc::create_fast_line_detector(min_len, TRACE_MAX_DEVIATION_PX, CANNY_LOW, CANNY_HIGH, 0, false))?;
    cv("trace", tracer.detect(&*edges, scratch))?;
    let long = |s: &[f64; 4]| (s[2] - s[0]).hypot(s[3] - s[1]) >= min_len_px;
    out.extend(scratch.iter().map(|s| ([s[0], s[1], s[2], s[3]].map(f64::from), 0)).filter(|(s, _)| long(s)));
    Ok(())
}

// ---------------------------------------------------------------------------
// Lines and closed-form hypotheses.

/// A straight image line `a u + b v + c = 0` with `a^2 + b^2 = 1`, and its support.
#[derive(Debug, Clone, Copy)]
pub(super) struct ImageLine {
    pub(super) l: [f64; 3],
    pub(super) support_px: f64,
    /// The extent of its segments along the line's direction `(l[1], -l[0])`, px.
    pub(super) span: [f64; 2],
}

impl ImageLine {
    /// The position of image point `p` along the line's direction, px.
    pub(super) fn along(&self, p: [f64; 2]) -> f64 {
        p[0] * self.l[1] - p[1] * self.l[0]
    }

    /// The intersection with another line; `None` if (nearly) parallel.
    pub(super) fn meet(&self, other: &ImageLine) -> Option<[f64; 2]> {
        let p = cross3(self.l, other.l);
        (p[2].abs() > 1e-12).then(|| [p[0] / p[2], p[1] / p[2]])
    }
}

/// How far a cross line's segments may run past the sides it spans, as a share
/// of the distance between them (plus [`CROSS_OVERRUN_PX`]): painted lines,
/// ends and gate-bar feet stop at the surface's edges, while floor tiles, table
/// edges and rails run on.
pub(super) const CROSS_OVERRUN_SHARE: f64 = 0.1;
pub(super) const CROSS_OVERRUN_PX: f64 = 6.0;
/// A cross line must show over this share of the distance between the sides
/// (pieces and glare hide the rest).
pub(super) const CROSS_MIN_SHARE: f64 = 0.3;
/// The sides' segments must come within this share of the distance between the
/// sides of where the cross line meets them (a side may be hidden in part).
pub(super) const SIDE_REACH_SHARE: f64 = 1.0;

/// Whether `cross` could be a line across the surface between sides `a` and `b`
/// in the image: it spans most of the way from one to the other and no further,
/// and both sides reach it.
pub(super) fn spans_between(a: &ImageLine, b: &ImageLine, cross: &ImageLine) -> bool {
    let (Some(pa), Some(pb)) = (cross.meet(a), cross.meet(b)) else { return false };
    let width = (pa[0] - pb[0]).hypot(pa[1] - pb[1]);
    if !(width > 2.0 * CROSS_OVERRUN_PX) {
        return false;
    }
    let (ta, tb) = (cross.along(pa), cross.along(pb));
    let (lo, hi) = (ta.min(tb), ta.max(tb));
    let slack = CROSS_OVERRUN_SHARE * width + CROSS_OVERRUN_PX;
    let [c0, c1] = cross.span;
    if c0 < lo - slack || c1 > hi + slack || (c1.min(hi) - c0.max(lo)) < CROSS_MIN_SHARE * width {
        return false;
    }
    let reach = SIDE_REACH_SHARE * width;
    let near = |side: &ImageLine, p: [f64; 2]| {
        let t = side.along(p);
        t >= side.span[0] - reach && t <= side.span[1] + reach
    };
    near(a, pa) || near(b, pb)
}

/// Segments (each with its pyramid level) merged into lines: those within
/// [`MERGE_ANGLE_RAD`] and [`MERGE_DIST_PX`] of a cluster's longest segment are
/// one line. A line lies where its finest level's segments put it (a coarser
/// level's pixel is twice as wide, its edges less exact); its support is its
/// best level's total length (an edge found at two levels is one edge, not
/// twice as long) and its extent that of all its segments.
pub(super) fn merge_segments(segs: &[([f64; 4], u32)]) -> Vec<ImageLine> {
    // Sort by length so each cluster is seeded by its longest segment.
    let mut order: Vec<usize> = (0..segs.len()).collect();
    let seg_len = |s: &[f64; 4]| (s[2] - s[0]).hypot(s[3] - s[1]);
    order.sort_by(|&i, &j| seg_len(&segs[j].0).total_cmp(&seg_len(&segs[i].0)));
    let mut clusters: Vec<([f64; 3], Vec<usize>)> = Vec::new();
    for &i in &order {
        let s = segs[i].0;
        let len = seg_len(&s);
        let (dx, dy) = ((s[2] - s[0]) / len, (s[3] - s[1]) / len);
        let joined = clusters.iter_mut().find(|(l, _)| {
            let cos = (l[0] * dy - l[1] * dx).abs(); // |direction . line direction|
            let d0 = (l[0] * s[0] + l[1] * s[1] + l[2]).abs();
            let d1 = (l[0] * s[2] + l[1] * s[3] + l[2]).abs();
            cos > MERGE_ANGLE_RAD.cos() && d0 < MERGE_DIST_PX && d1 < MERGE_DIST_PX
        });
        match joined {
            Some((_, members)) => members.push(i),
            None => clusters.push(([-dy, dx, -(-dy * s[0] + dx * s[1])], vec![i])),
        }
    }
    clusters
        .into_iter()
        .map(|(_, members)| {
            // Refit to the finest level's segments' endpoints and midpoints, weighted by length.
            let finest = members.iter().map(|&i| segs[i].1).min().unwrap_or(0);
            let mut pts: Vec<([f64; 2], f64)> = Vec::new();
            for &i in members.iter().filter(|&&i| segs[i].1 == finest) {
                let s = segs[i].0;
                let w = seg_len(&s);
                for t in [0.0, 0.5, 1.0] {
                    pts.push(([s[0] + t * (s[2] - s[0]), s[1] + t * (s[3] - s[1])], w));
                }
            }
            let sw: f64 = pts.iter().map(|p| p.1).sum();
            let mu = [pts.iter().map(|p| p.0[0] * p.1).sum::<f64>() / sw, pts.iter().map(|p| p.0[1] * p.1).sum::<f64>() / sw];
            let (mut sxx, mut sxy, mut syy) = (0.0, 0.0, 0.0);
            for (p, w) in &pts {
                let (x, y) = (p[0] - mu[0], p[1] - mu[1]);
                sxx += w * x * x;
                sxy += w * x * y;
                syy += w * y * y;
            }
            // The normal is the eigenvector of the smaller eigenvalue of the scatter.
            let th = 0.5 * (2.0 * sxy).atan2(sxx - syy);
            let (dx, dy) = (th.cos(), th.sin());
            let (a, b) = (-dy, dx);
            let along = |p: [f64; 2]| p[0] * b - p[1] * a;
            let ts = members.iter().flat_map(|&i| [along([segs[i].0[0], segs[i].0[1]]), along([segs[i].0[2], segs[i].0[3]])]);
            let span = ts.fold([f64::INFINITY, f64::NEG_INFINITY], |s, t| [s[0].min(t), s[1].max(t)]);
            let mut per_level: Vec<f64> = Vec::new();
            for &i in &members {
                let level = segs[i].1 as usize;
                if per_level.len() <= level {
                    per_level.resize(level + 1, 0.0);
                }
                per_level[level] += seg_len(&segs[i].0);
            }
            let support_px = per_level.into_iter().fold(0.0, f64::max);
            ImageLine { l: [a, b, -(a * mu[0] + b * mu[1])], support_px, span }
        })
        .collect()
}

/// The normal `K^T l` of the plane through the camera and the image line `l` (camera coordinates).
pub(super) fn line_plane(cam: &Camera, l: [f64; 3]) -> [f64; 3] {
    [cam.fx * l[0], cam.fy * l[1], cam.cx * l[0] + cam.cy * l[1] + l[2]]
}

/// The pose that puts `side_pos` at `x = +hw`, `side_neg` at `x = -hw` and
/// `cross` at `y = y_c`, all in the plane at height `z`, if one exists in front of the camera.
pub(super) fn pose_from_lines(cam: &Camera, side_pos: &ImageLine, side_neg: &ImageLine, cross: &ImageLine, hw: f64, y_c: f64, z: f64) -> Option<CameraPose> {
    let (na, nb, nc) = (line_plane(cam, side_pos.l), line_plane(cam, side_neg.l), line_plane(cam, cross.l));
    let dy = unit3(cross3(na, nb))?;
    let mut dx = unit3(cross3(nc, dy))?;
    // The rays to the two corners on the cross line.
    let ray = |l1: [f64; 3], l2: [f64; 3]| -> Option<[f64; 3]> {
        let p = cross3(l1, l2);
        if p[2].abs() < 1e-12 {
            return None;
        }
        let (u, v) = (p[0] / p[2], p[1] / p[2]);
        Some([(u - cam.cx) / cam.fx, (v - cam.cy) / cam.fy, 1.0])
    };
    let ra = ray(side_pos.l, cross.l)?;
    let rb = ray(side_neg.l, cross.l)?;
    // s_a ra - s_b rb = 2 hw dx (least squares in s_a, s_b).
    let solve = |dx: [f64; 3]| -> (f64, f64) {
        let rhs = scale3(dx, 2.0 * hw);
        let (a11, a12, a22) = (dot3(ra, ra), -dot3(ra, rb), dot3(rb, rb));
        let (b1, b2) = (dot3(ra, rhs), -dot3(rb, rhs));
        let det = a11 * a22 - a12 * a12;
        ((a22 * b1 - a12 * b2) / det, (a11 * b2 - a12 * b1) / det)
    };
    let (mut sa, mut sb) = solve(dx);
    if sa < 0.0 && sb < 0.0 {
        dx = scale3(dx, -1.0);
        (sa, sb) = solve(dx);
    }
    if !(sa > 0.0 && sb > 0.0) || !sa.is_finite() {
        return None;
    }
    let pa = scale3(ra, sa);
    let mut dy = dy;
    let mut dz = cross3(dx, dy);
    // The camera (the origin) is above the board: on the +z side of the plane.
    if dot3(scale3(pa, -1.0), dz) < 0.0 {
        dy = scale3(dy, -1.0);
        dz = cross3(dx, dy);
    }
    let dz = unit3(dz)?;
    // The fitted directions are orthogonal by construction; re-orthonormalise dy.
    let dy = cross3(dz, dx);
    let rotation = [[dx[0], dy[0], dz[0]], [dx[1], dy[1], dz[1]], [dx[2], dy[2], dz[2]]];
    // The ladder's plane is z = `z`: the board origin lies `z` below it.
    let t = sub3(sub3(sub3(pa, scale3(dx, hw)), scale3(dy, y_c)), scale3(dz, z));
    Some(CameraPose { rotation, translation: t })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A long edge whose pixels step between two rows every few to few tens of pixels (wood grain beside it pulls
    /// its Canny trace so): `HoughLinesP`, with the locator's own settings, finds it only in pieces (none spanning
    /// half of it); traced along its chain it is one line, on the two rows' middle to a tenth of a pixel over its
    /// length.
    #[test]
    fn a_wavy_edge_is_one_traced_line_where_hough_breaks_it() {
        let (w, h) = (640, 200);
        let mut edges = Mat::new_rows_cols_with_default(h, w, opencv::core::CV_8UC1, Scalar::all(0.0)).unwrap();
        let (x0, x1) = (20, 620);
        // Runs on rows 100 and 101 in turn, of irregular lengths.
        let (mut x, mut row) = (x0, 100);
        for run in [7, 23, 13, 31, 5, 17, 29, 11, 37, 19].iter().cycle() {
            for xx in x..(x + run).min(x1) {
                *edges.at_2d_mut::<u8>(row, xx).unwrap() = 255;
            }
            x += run;
            row = 201 - row;
            if x >= x1 {
                break;
            }
        }
        let min_len = 65.0;
        let mut segs = Vector::<Vec4i>::new();
        hough_segments(&edges, min_len, &mut segs).unwrap();
        let longest_hough = segs.iter().map(|s| f64::from(s[2] - s[0]).hypot(f64::from(s[3] - s[1]))).fold(0.0, f64::max);
        assert!(longest_hough < 0.5 * f64::from(x1 - x0), "Hough found {longest_hough:.0} px of it in one piece");
        let (mut scratch, mut found) = (Vector::new(), Vec::new());
        trace_segments(&mut edges, min_len, &mut scratch, &mut found).unwrap();
        let lines = merge_segments(&found);
        let line = lines.iter().max_by(|a, b| a.support_px.total_cmp(&b.support_px)).expect("a line");
        assert!(line.support_px > 0.9 * f64::from(x1 - x0), "traced {:.0} px of {}", line.support_px, x1 - x0);
        // Where the line crosses each end of the edge: between the two rows.
        for x in [f64::from(x0), f64::from(x1)] {
            let y = -(line.l[0] * x + line.l[2]) / line.l[1];
            assert!((y - 100.5).abs() < 0.1, "at x = {x}: y = {y:.3}");
        }
    }
}
