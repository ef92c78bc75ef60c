//! Hole hypotheses: on a washer board whose sides show no straight edge (light
//! wood on a light floor), poses read from two of its holes instead. A hole's
//! rim is a circle of known size on the surface: its image is an ellipse whose
//! axes give the local scale and tilt, and a second hole gives the direction of
//! the board's axis.

use super::*;

/// An ellipse is fitted to an edge contour of at least this many pixels (a
/// hole 100 mm across spans 40 px or more at the resolutions boards are seen at).
const MIN_CONTOUR_PX: usize = 24;
/// A hole's image: semi-axes within this range (px) ...
const MIN_SEMI_AXIS_PX: f64 = 6.0;
/// ... the major semi-axis at most this fraction of the image's smaller side ...
const MAX_SEMI_AXIS_SHARE: f64 = 0.25;
/// ... and no flatter than this (minor over major: a circle seen 75 degrees
/// from overhead, [`MAX_TILT_DEG`], is a quarter as wide as it is long).
const MIN_AXIS_RATIO: f64 = 0.25;
/// A contour point lies on the ellipse within this share of its size: a rim's
/// edge traces its ellipse to a pixel or two.
const MAX_ELLIPSE_RESIDUAL: f64 = 0.04;
/// The contour's points on the ellipse cover at least this share of its
/// circumference (pieces and glare break a rim's edge; a short arc fits any
/// ellipse), counted in [`TRACE_BINS`] equal angles.
const MIN_ARC_SHARE: f64 = 0.5;
const TRACE_BINS: usize = 36;
/// Refits of an ellipse to the contour's points on it: a rim's contour joined
/// by the cup's inner shading edges moves the first fit by a few pixels.
const ELLIPSE_REFITS: usize = 2;
/// Ellipses whose centres are within this share of their size of each other,
/// and of about one size, are one rim (its inner and outer edge).
const SAME_ELLIPSE_SHARE: f64 = 0.3;
/// At most this many ellipses, the best traced first: each pair of them and
/// each pair of holes is a hypothesis.
const MAX_ELLIPSES: usize = 12;
/// Two ellipses can be two neighbouring holes of one board only if their
/// sizes (major semi-axes) are within this factor (perspective over a hole's
/// spacing: a camera as close as the spacing sees them 1.5 times apart).
const MAX_SIZE_RATIO: f64 = 1.5;
/// Holes are read in pairs of neighbours: no further apart than this factor
/// of the nearer one's nearest neighbour (a grid's diagonal is 1.41 times its side).
const NEIGHBOUR_FACTOR: f64 = 1.5;
/// The image distance between two holes' centres must be within this factor
/// of what the ellipses' scale says (the foreshortening along the board is
/// between the minor and the major axis's).
const DISTANCE_SLACK: f64 = 1.5;
/// A hypothesis's correspondences (centres and rim points through the local
/// affine) must fit its pose to this share of the ellipses' size: the affine
/// view of a rim is a first-order approximation.
const MAX_PNP_RESIDUAL_SHARE: f64 = 0.25;

/// An ellipse in the undistorted image: centre, semi-axes (major, minor, px)
/// and the major axis's direction (unit).
#[derive(Debug, Clone, Copy)]
pub(super) struct ImageEllipse {
    pub(super) centre: [f64; 2],
    pub(super) axes: [f64; 2],
    pub(super) major: [f64; 2],
    /// The share of its circumference its contour traces.
    pub(super) traced: f64,
}

/// Ellipses traced by the closed or nearly closed contours of an edge image:
/// the rims of holes, best traced first.
pub(super) fn find_ellipses(edges: &Mat) -> Result<Vec<ImageEllipse>, LocateError> {
    if edges.empty() {
        return Ok(Vec::new());
    }
    let mut contours: Vector<Vector<opencv::core::Point>> = Vector::new();
    cv("contours", imgproc::find_contours_def(edges, &mut contours, imgproc::RETR_LIST, imgproc::CHAIN_APPROX_NONE))?;
    let max_axis = MAX_SEMI_AXIS_SHARE * f64::from(edges.rows().min(edges.cols()));
    let mut found: Vec<ImageEllipse> = Vec::new();
    for c in contours.iter().filter(|c| c.len() >= MIN_CONTOUR_PX) {
        // A rim's contour spans its ellipse's width and height: a long thin run of grain does not.
        let b = cv("boundingRect", imgproc::bounding_rect(&c))?;
        let (short, long) = (f64::from(b.width.min(b.height)), f64::from(b.width.max(b.height)));
        if short < 2.0 * MIN_SEMI_AXIS_PX || long > 2.0 * max_axis || short < MIN_AXIS_RATIO * long {
            continue;
        }
        let mut points: Vector<opencv::core::Point> = c.clone();
        let mut traced = None;
        // The rim's edge joins the cup's inner shading edges in one contour: the
        // ellipse is refitted to the points on it, twice.
        for _ in 0..=ELLIPSE_REFITS {
            if points.len() < 6 {
                break;
            }
            let r = cv("fitEllipse", imgproc::fit_ellipse(&points))?;
            let Some(e) = ellipse_of(&r) else { break };
            let (a, b) = (e.axes[0], e.axes[1]);
            if !(b >= MIN_SEMI_AXIS_PX && a <= max_axis && b >= MIN_AXIS_RATIO * a) {
                break;
            }
            let mut bins = [false; TRACE_BINS];
            let on: Vector<opencv::core::Point> = c
                .iter()
                .filter(|p| {
                    let (dx, dy) = (f64::from(p.x) - e.centre[0], f64::from(p.y) - e.centre[1]);
                    let (u, v) = (dx * e.major[0] + dy * e.major[1], -dx * e.major[1] + dy * e.major[0]);
                    let near = (((u / a).powi(2) + (v / b).powi(2)).sqrt() - 1.0).abs() <= MAX_ELLIPSE_RESIDUAL;
                    if near {
                        let t = (v / b).atan2(u / a).rem_euclid(std::f64::consts::TAU);
                        bins[((t / std::f64::consts::TAU * TRACE_BINS as f64) as usize).min(TRACE_BINS - 1)] = true;
                    }
                    near
                })
                .collect();
            traced = Some(ImageEllipse { traced: bins.iter().filter(|b| **b).count() as f64 / TRACE_BINS as f64, ..e });
            points = on;
        }
        if let Some(e) = traced.filter(|e| e.traced >= MIN_ARC_SHARE) {
            found.push(e);
        }
    }
    found.sort_by(|p, q| q.traced.total_cmp(&p.traced).then(q.axes[0].total_cmp(&p.axes[0])));
    let mut kept: Vec<ImageEllipse> = Vec::new();
    for e in found {
        let same = kept.iter().any(|k| {
            let d = (k.centre[0] - e.centre[0]).hypot(k.centre[1] - e.centre[1]);
            d < SAME_ELLIPSE_SHARE * k.axes[0] && (k.axes[0] / e.axes[0]).max(e.axes[0] / k.axes[0]) < 1.0 + SAME_ELLIPSE_SHARE
        });
        if !same {
            kept.push(e);
        }
        if kept.len() == MAX_ELLIPSES {
            break;
        }
    }
    Ok(kept)
}

/// An OpenCV rotated rectangle as an ellipse (its share traced unknown: 0).
fn ellipse_of(r: &opencv::core::RotatedRect) -> Option<ImageEllipse> {
    let (w, h) = (f64::from(r.size.width) / 2.0, f64::from(r.size.height) / 2.0);
    if !(w > 0.0 && h > 0.0) {
        return None;
    }
    // OpenCV's angle is the width axis's, in degrees.
    let t = f64::from(r.angle).to_radians();
    let major = if w >= h { [t.cos(), t.sin()] } else { [-t.sin(), t.cos()] };
    Some(ImageEllipse { centre: [f64::from(r.center.x), f64::from(r.center.y)], axes: [w.max(h), w.min(h)], major, traced: 0.0 })
}

/// A hole of the board: its centre on the surface and its radius (mm).
#[derive(Debug, Clone, Copy)]
pub(super) struct BoardHole {
    pub(super) centre: [f64; 2],
    pub(super) radius_mm: f64,
}

/// One reading of two ellipses as two holes: ellipse `e1` is hole `h1`, `e2`
/// is `h2`, and the board seen directly (`handed` 1) or mirrored (-1: which of
/// the two the camera's view is, an ellipse does not say).
#[derive(Debug, Clone, Copy)]
pub(super) struct Pairing {
    e1: ImageEllipse,
    e2: ImageEllipse,
    h1: BoardHole,
    h2: BoardHole,
    handed: f64,
}

/// The readings of every pair of ellipses as two neighbouring holes whose
/// sizes and spacing agree with the ellipses' (see [`Pairing::start`]).
pub(super) fn pairings(ellipses: &[ImageEllipse], holes: &[BoardHole]) -> Vec<Pairing> {
    let apart = |a: &BoardHole, b: &BoardHole| (b.centre[0] - a.centre[0]).hypot(b.centre[1] - a.centre[1]);
    // Neighbouring holes only: any two in view include a pair of neighbours, and a grid of nine holes has 72 ordered pairs.
    let nearest: Vec<f64> =
        holes.iter().enumerate().map(|(i, a)| holes.iter().enumerate().filter(|(j, _)| *j != i).map(|(_, b)| apart(a, b)).fold(f64::INFINITY, f64::min)).collect();
    let pairs: Vec<(usize, usize)> = (0..holes.len())
        .flat_map(|i| (0..holes.len()).map(move |j| (i, j)))
        .filter(|&(i, j)| i != j && apart(&holes[i], &holes[j]) <= NEIGHBOUR_FACTOR * nearest[i].min(nearest[j]))
        .collect();
    let mut out = Vec::new();
    for (n1, e1) in ellipses.iter().enumerate() {
        // Each unordered pair of ellipses once: the ordered pairs of holes read it both ways.
        for e2 in &ellipses[n1 + 1..] {
            let ratio = e1.axes[0] / e2.axes[0];
            if !(1.0 / MAX_SIZE_RATIO..=MAX_SIZE_RATIO).contains(&ratio) {
                continue;
            }
            let image_d = (e2.centre[0] - e1.centre[0]).hypot(e2.centre[1] - e1.centre[1]);
            for &(i, j) in &pairs {
                let (h1, h2) = (holes[i], holes[j]);
                let board_d = apart(&h1, &h2);
                // px per mm along the board: between the minor and the major axis's scale.
                let (lo, hi) = (e1.axes[1].min(e2.axes[1]) / h1.radius_mm, e1.axes[0].max(e2.axes[0]) / h1.radius_mm);
                if image_d < lo * board_d / DISTANCE_SLACK || image_d > hi * board_d * DISTANCE_SLACK {
                    continue;
                }
                out.extend([1.0, -1.0].map(|handed| Pairing { e1: *e1, e2: *e2, h1, h2, handed }));
            }
        }
    }
    out
}

impl Pairing {
    /// The pose that puts the holes at the ellipses: the local affine view of
    /// each rim (its axes, turned so that the board's direction from `h1` to
    /// `h2` points from `e1` to `e2`) gives rim points, solved with the centres
    /// by `solvePnP`. `None` where no such pose looks down on the board or the
    /// points do not fit it.
    ///
    /// Which holes the pose brings onto which ellipses is read at once
    /// ([`HoleFit::matched`]); [`distinct`] keeps one pairing per matching, and
    /// [`HoleFit::solve`] solves the pose again from every matched hole.
    pub(super) fn start(&self, cam: &Camera, ellipses: &[ImageEllipse], holes: &[BoardHole]) -> Option<HoleFit> {
        let k = cam.camera_matrix_mat().ok()?;
        let pose = pose_from_pair(cam, &k, (&self.e1, &self.h1), (&self.e2, &self.h2), self.handed)?;
        let axis = (self.h1.centre, self.h2.centre);
        let collinear = holes.iter().all(|h| on_line(h.centre, axis));
        let matched = rim_correspondences(cam, &pose, ellipses, holes).map_or(Vec::new(), |c| c.1);
        Some(HoleFit { pose, matched, collinear, axis, solve: true })
    }
}

/// A pose read from the holes: which holes it brings onto which ellipses
/// (hole and ellipse indices, in the holes' order; empty under two), and
/// whether the board's holes all lie on one line, `axis`, through the pair's.
#[derive(Debug, Clone)]
pub(super) struct HoleFit {
    pose: CameraPose,
    matched: Vec<(usize, usize)>,
    collinear: bool,
    axis: ([f64; 2], [f64; 2]),
    /// Whether [`HoleFit::solve`] solves it again ([`distinct`]).
    solve: bool,
}

impl HoleFit {
    /// The pose solved again from every hole it brings onto an ellipse (see
    /// [`with_every_hole`]). On a board whose holes lie on one line, two rims
    /// and the rolls about it ([`hole_poses`]) fix the pose; elsewhere a third
    /// hole off the pair's line fixes the tilt, and a pose that brings none
    /// onto a rim is kept as the pair gave it.
    pub(super) fn solve(&self, cam: &Camera, ellipses: &[ImageEllipse], holes: &[BoardHole]) -> HoleFit {
        let min_holes = if self.collinear { 2 } else { 3 };
        if !self.solve || self.matched.len() < min_holes {
            return self.clone();
        }
        let Ok(k) = cam.camera_matrix_mat() else { return self.clone() };
        let (pose, matched) = with_every_hole(cam, &k, self.pose, ellipses, holes, min_holes);
        HoleFit { pose, matched, ..self.clone() }
    }
}

/// At most this many matchings are solved again from their rims (a
/// millisecond each), those of the most holes first: a nine-hole board's
/// thousand pairings hold hundreds of matchings, most of them a washer's rim
/// read as a hole's; the board's own reading brings the most holes onto rims.
const MAX_SOLVED: usize = 24;

/// One pairing's start for each matching of holes to ellipses (pairings that
/// bring the same holes onto the same ellipses are solved to the same pose;
/// starts that match under two holes are all kept), those of the most holes
/// first; only the first [`MAX_SOLVED`] are solved again.
pub(super) fn distinct(starts: impl IntoIterator<Item = HoleFit>) -> Vec<HoleFit> {
    let mut out: Vec<HoleFit> = Vec::new();
    for f in starts {
        if f.matched.is_empty() || !out.iter().any(|o| o.matched == f.matched) {
            out.push(f);
        }
    }
    out.sort_by_key(|f| std::cmp::Reverse(f.matched.len()));
    for (i, f) in out.iter_mut().enumerate() {
        f.solve = i < MAX_SOLVED;
    }
    out
}

/// The poses the holes give: each fit's, rolled about the holes' line where
/// the board's holes lie on one ([`rolls`]).
pub(super) fn hole_poses(fits: impl IntoIterator<Item = HoleFit>) -> Vec<CameraPose> {
    let mut out = Vec::new();
    for f in fits {
        if f.collinear {
            out.extend(rolls(&f.pose, f.axis.0, f.axis.1));
        } else {
            out.push(f.pose);
        }
    }
    out
}

/// Whether board point `p` lies within a millimetre of the line through `line`'s two points.
fn on_line(p: [f64; 2], (a, b): ([f64; 2], [f64; 2])) -> bool {
    let (dx, dy) = (b[0] - a[0], b[1] - a[1]);
    ((p[0] - a[0]) * dy - (p[1] - a[1]) * dx).abs() <= dx.hypot(dy)
}

/// Rolls of a pose about the line through its holes, degrees: a step the
/// ranking tells apart at the board's sides, and as far as a rim seen nearly
/// round leaves the tilt (external hb_02: 11 degrees off, its third rim half
/// under a washer).
const ROLL_STEP_DEG: f64 = 2.0;
const MAX_ROLL_DEG: f64 = 16.0;

/// Holes on one line fix the pose but for its roll about that line, which
/// only the rims' roundness tells, weakly: `pose`, and `pose` rolled about the
/// board line through `a` and `b` by every [`ROLL_STEP_DEG`] up to
/// [`MAX_ROLL_DEG`] either way. The holes stay where they are in the image; the
/// ranking reads the roll off the board's outline.
fn rolls(pose: &CameraPose, a: [f64; 2], b: [f64; 2]) -> Vec<CameraPose> {
    let Some(dir) = unit3([b[0] - a[0], b[1] - a[1], 0.0]) else { return vec![*pose] };
    let steps = (MAX_ROLL_DEG / ROLL_STEP_DEG).round() as i32;
    (-steps..=steps).map(|i| rolled(pose, [a[0], a[1], 0.0], dir, (f64::from(i) * ROLL_STEP_DEG).to_radians())).collect()
}

/// `pose` with the board turned by `angle` (radians) about the board axis
/// `dir` (unit) through board point `c`: board point `X` is seen where `pose`
/// sees `Q (X - c) + c`.
fn rolled(pose: &CameraPose, c: [f64; 3], dir: [f64; 3], angle: f64) -> CameraPose {
    let q = crate::camera::rotation_from_rvec(scale3(dir, angle));
    let r = &pose.rotation;
    let dc = sub3(c, q.map(|row| dot3(row, c)));
    CameraPose { rotation: mul3(r, &q), translation: std::array::from_fn(|i| pose.translation[i] + dot3(r[i], dc)) }
}

/// Rounds of [`with_every_hole`]'s matching and solving.
const HOLE_ROUNDS: usize = 4;
/// Points taken round each matched rim.
const RIM_POINTS: usize = 12;
/// A round that moves no rim point by more than this (px) ends the rounds.
const SETTLED_RIM_PX: f64 = 0.05;

/// Two rims seen nearly round (a camera near overhead) leave the board's tilt
/// loose: a pose from them puts holes further along the board tens of pixels
/// off (external y4_00: 35 px two holes on). Each round brings every hole the
/// pose puts within its own image radius of an ellipse of its size onto that
/// ellipse: its rim points, projected by the pose, are moved radially onto the
/// ellipse, and the pose is solved from every matched rim's points (`solvePnP`,
/// planar, then Levenberg-Marquardt). With three holes or more the rims far
/// apart fix the tilt. The pose as it was if fewer than `min_holes` holes
/// match; and which holes matched which ellipses (hole and ellipse indices).
fn with_every_hole(cam: &Camera, k: &Mat, start: CameraPose, ellipses: &[ImageEllipse], holes: &[BoardHole], min_holes: usize) -> (CameraPose, Vec<(usize, usize)>) {
    let mut pose = start;
    let mut matched = Vec::new();
    for _ in 0..HOLE_ROUNDS {
        let Some((points, now)) = rim_correspondences(cam, &pose, ellipses, holes).filter(|c| c.1.len() >= min_holes) else { break };
        let Some(next) = solve_planar(k, &points) else { break };
        let moved = points
            .iter()
            .filter_map(|(p, _)| Some((pose.project(cam, *p)?, next.project(cam, *p)?)))
            .map(|(a, b)| (a.u - b.u).hypot(a.v - b.v))
            .fold(0.0f64, f64::max);
        // Looking down on the board, from above it.
        if -next.rotation[2][2] < MAX_TILT_DEG.to_radians().cos() || next.centre().z_mm <= 0.0 {
            break;
        }
        pose = next;
        matched = now;
        if moved < SETTLED_RIM_PX {
            break;
        }
    }
    (pose, matched)
}

/// The rim points of every hole `pose` brings onto an ellipse of its size
/// (its centre within its image radius of the ellipse's, each ellipse one
/// hole's), each moved radially onto its ellipse, and which holes matched
/// which ellipses; `None` under two holes.
fn rim_correspondences(cam: &Camera, pose: &CameraPose, ellipses: &[ImageEllipse], holes: &[BoardHole]) -> Option<(Vec<RimPoint>, Vec<(usize, usize)>)> {
    let mut used = vec![false; ellipses.len()];
    let mut points = Vec::new();
    let mut matched = Vec::new();
    for (hi, h) in holes.iter().enumerate() {
        let rim: Vec<(BoardPoint3, PixelPoint)> = (0..RIM_POINTS)
            .filter_map(|i| {
                let t = std::f64::consts::TAU * i as f64 / RIM_POINTS as f64;
                let b = BoardPoint3::new(h.centre[0] + h.radius_mm * t.cos(), h.centre[1] + h.radius_mm * t.sin(), 0.0);
                Some((b, pose.project(cam, b)?))
            })
            .collect();
        if rim.len() < RIM_POINTS {
            continue;
        }
        let n = rim.len() as f64;
        let c = [rim.iter().map(|r| r.1.u).sum::<f64>() / n, rim.iter().map(|r| r.1.v).sum::<f64>() / n];
        let radius = rim.iter().map(|r| (r.1.u - c[0]).hypot(r.1.v - c[1])).fold(0.0f64, f64::max);
        let best = ellipses
            .iter()
            .enumerate()
            .filter(|(i, e)| !used[*i] && (1.0 / MAX_SIZE_RATIO..=MAX_SIZE_RATIO).contains(&(e.axes[0] / radius)))
            .map(|(i, e)| (i, (e.centre[0] - c[0]).hypot(e.centre[1] - c[1])))
            .filter(|(_, d)| *d < radius)
            .min_by(|a, b| a.1.total_cmp(&b.1));
        let Some((i, _)) = best else { continue };
        used[i] = true;
        matched.push((hi, i));
        let e = &ellipses[i];
        for (b, p) in &rim {
            // The projected rim point moved along the ray from the ellipse's centre onto the ellipse.
            let (dx, dy) = (p.u - e.centre[0], p.v - e.centre[1]);
            let (u, v) = (dx * e.major[0] + dy * e.major[1], -dx * e.major[1] + dy * e.major[0]);
            let rho = ((u / e.axes[0]).powi(2) + (v / e.axes[1]).powi(2)).sqrt();
            if !(rho > 1e-9) {
                continue;
            }
            points.push((*b, [e.centre[0] + dx / rho, e.centre[1] + dy / rho]));
        }
    }
    (matched.len() >= 2).then_some((points, matched))
}

/// A rim point on the board and where it is seen (px, the undistorted image).
type RimPoint = (BoardPoint3, [f64; 2]);

/// The pose of planar board points (`z = 0`) seen where `points` say in the distortion-free camera `k`.
fn solve_planar(k: &Mat, points: &[RimPoint]) -> Option<CameraPose> {
    let obj: Vector<Point3d> = points.iter().map(|(b, _)| Point3d::new(b.x_mm, b.y_mm, b.z_mm)).collect();
    let img: Vector<Point2d> = points.iter().map(|(_, p)| Point2d::new(p[0], p[1])).collect();
    let (mut rvec, mut tvec) = (Mat::default(), Mat::default());
    if !calib3d::solve_pnp(&obj, &img, k, &Mat::default(), &mut rvec, &mut tvec, false, calib3d::SOLVEPNP_IPPE).ok()? {
        return None;
    }
    calib3d::solve_pnp_refine_lm_def(&obj, &img, k, &Mat::default(), &mut rvec, &mut tvec).ok()?;
    Some(CameraPose::from_rvec_tvec(vec3_of(&rvec).ok()?, vec3_of(&tvec).ok()?))
}

/// The local affine map of a rim (board mm to image px, 2x2, row-major): the
/// ellipse's axes scaled by the hole's radius, turned (or, with `handed` -1,
/// mirrored) so that board direction `along` maps onto image direction `to`.
fn rim_affine(e: &ImageEllipse, radius_mm: f64, along: [f64; 2], to: [f64; 2], handed: f64) -> Option<[[f64; 2]; 2]> {
    let (u, v) = (e.major, [-e.major[1], e.major[0]]);
    let (sa, sb) = (e.axes[0] / radius_mm, e.axes[1] / radius_mm);
    // M = sa u u^T + sb v v^T, and its inverse.
    let m = |s: [f64; 2]| [[s[0] * u[0] * u[0] + s[1] * v[0] * v[0], s[0] * u[0] * u[1] + s[1] * v[0] * v[1]], [s[0] * u[1] * u[0] + s[1] * v[1] * v[0], s[0] * u[1] * u[1] + s[1] * v[1] * v[1]]];
    let (mm, minv) = (m([sa, sb]), m([1.0 / sa, 1.0 / sb]));
    // Q maps `along` to the direction w = M^-1 to (normalised).
    let w = [minv[0][0] * to[0] + minv[0][1] * to[1], minv[1][0] * to[0] + minv[1][1] * to[1]];
    let wl = w[0].hypot(w[1]);
    let al = along[0].hypot(along[1]);
    if !(wl > 1e-12 && al > 1e-12) {
        return None;
    }
    let (w, a) = ([w[0] / wl, w[1] / wl], [along[0] / al, along[1] / al]);
    // A rotation by the angle from a to w; or the mirror across their bisector.
    let q = if handed > 0.0 {
        let (c, s) = (a[0] * w[0] + a[1] * w[1], a[0] * w[1] - a[1] * w[0]);
        [[c, -s], [s, c]]
    } else {
        let (b0, b1) = (a[0] + w[0], a[1] + w[1]);
        let bl = b0.hypot(b1);
        let b = if bl > 1e-9 { [b0 / bl, b1 / bl] } else { [-a[1], a[0]] };
        [[2.0 * b[0] * b[0] - 1.0, 2.0 * b[0] * b[1]], [2.0 * b[0] * b[1], 2.0 * b[1] * b[1] - 1.0]]
    };
    Some([
        [mm[0][0] * q[0][0] + mm[0][1] * q[1][0], mm[0][0] * q[0][1] + mm[0][1] * q[1][1]],
        [mm[1][0] * q[0][0] + mm[1][1] * q[1][0], mm[1][0] * q[0][1] + mm[1][1] * q[1][1]],
    ])
}

/// The pose putting hole `hi` at ellipse `e1` and `hj` at `e2` (see [`Pairing::start`]).
fn pose_from_pair(cam: &Camera, k: &Mat, (e1, hi): (&ImageEllipse, &BoardHole), (e2, hj): (&ImageEllipse, &BoardHole), handed: f64) -> Option<CameraPose> {
    let along = [hj.centre[0] - hi.centre[0], hj.centre[1] - hi.centre[1]];
    let to = [e2.centre[0] - e1.centre[0], e2.centre[1] - e1.centre[1]];
    let mut obj: Vector<Point3d> = Vector::new();
    let mut img: Vector<Point2d> = Vector::new();
    for (e, h) in [(e1, hi), (e2, hj)] {
        let a = rim_affine(e, h.radius_mm, along, to, handed)?;
        obj.push(Point3d::new(h.centre[0], h.centre[1], 0.0));
        img.push(Point2d::new(e.centre[0], e.centre[1]));
        for (dx, dy) in [(1.0, 0.0), (-1.0, 0.0), (0.0, 1.0), (0.0, -1.0)] {
            let (bx, by) = (dx * h.radius_mm, dy * h.radius_mm);
            obj.push(Point3d::new(h.centre[0] + bx, h.centre[1] + by, 0.0));
            img.push(Point2d::new(e.centre[0] + a[0][0] * bx + a[0][1] * by, e.centre[1] + a[1][0] * bx + a[1][1] * by));
        }
    }
    let (mut rvec, mut tvec) = (Mat::default(), Mat::default());
    let ok = calib3d::solve_pnp(&obj, &img, k, &Mat::default(), &mut rvec, &mut tvec, false, calib3d::SOLVEPNP_IPPE).ok()?;
    if !ok {
        return None;
    }
    let pose = CameraPose::from_rvec_tvec(vec3_of(&rvec).ok()?, vec3_of(&tvec).ok()?);
    // Looking down on the board, from above it.
    if -pose.rotation[2][2] < MAX_TILT_DEG.to_radians().cos() || pose.centre().z_mm <= 0.0 {
        return None;
    }
    let size = e1.axes[0].max(e2.axes[0]);
    let mut ss = 0.0;
    for (o, i) in obj.iter().zip(img.iter()) {
        let p = pose.project(cam, BoardPoint3::new(o.x, o.y, o.z))?;
        ss += (p.u - i.x).powi(2) + (p.v - i.y).powi(2);
    }
    ((ss / obj.len() as f64).sqrt() <= MAX_PNP_RESIDUAL_SHARE * size).then_some(pose)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::camera::Distortion;

    fn camera() -> Camera {
        Camera { image_width: 1920, image_height: 1080, fx: 1400.0, fy: 1400.0, cx: 960.0, cy: 540.0, distortion: Distortion::NONE }
    }

    /// The ellipse a hole's rim projects to, from points round it fitted by OpenCV.
    fn rim_ellipse(cam: &Camera, pose: &CameraPose, h: &BoardHole) -> ImageEllipse {
        let pts: Vector<opencv::core::Point2f> = (0..72)
            .map(|k| {
                let t = std::f64::consts::TAU * k as f64 / 72.0;
                let p = pose.project(cam, BoardPoint3::new(h.centre[0] + h.radius_mm * t.cos(), h.centre[1] + h.radius_mm * t.sin(), 0.0)).unwrap();
                opencv::core::Point2f::new(p.u as f32, p.v as f32)
            })
            .collect();
        ImageEllipse { traced: 1.0, ..ellipse_of(&imgproc::fit_ellipse(&pts).unwrap()).unwrap() }
    }

    #[test]
    fn a_rim_joined_by_inner_edges_is_read_as_its_ellipse() {
        use opencv::core::{Point, RotatedRect, Scalar, Size2f, CV_8UC1};
        // A rim's edge (semi-axes 40 and 30 px, turned 30 degrees), with a cup's
        // shading edge running from it across the inside, and a straight edge elsewhere.
        let mut edges = Mat::new_rows_cols_with_default(400, 400, CV_8UC1, Scalar::all(0.0)).unwrap();
        let rim = RotatedRect::new(opencv::core::Point2f::new(200.0, 180.0), Size2f::new(80.0, 60.0), 30.0).unwrap();
        imgproc::ellipse_rotated_rect(&mut edges, rim, Scalar::all(255.0), 1, imgproc::LINE_8).unwrap();
        imgproc::line(&mut edges, Point::new(165, 160), Point::new(215, 200), Scalar::all(255.0), 1, imgproc::LINE_8, 0).unwrap();
        imgproc::line(&mut edges, Point::new(20, 350), Point::new(380, 360), Scalar::all(255.0), 1, imgproc::LINE_8, 0).unwrap();
        let found = find_ellipses(&edges).unwrap();
        assert_eq!(found.len(), 1, "{found:?}");
        let e = found[0];
        assert!((e.centre[0] - 200.0).hypot(e.centre[1] - 180.0) < 1.0, "{e:?}");
        assert!((e.axes[0] - 40.0).abs() < 1.0 && (e.axes[1] - 30.0).abs() < 1.0, "{e:?}");
        // The major axis along 30 degrees (either way round).
        assert!((e.major[0] * 30f64.to_radians().cos() + e.major[1] * 30f64.to_radians().sin()).abs() > 0.99, "{e:?}");
    }

    #[test]
    fn two_holes_give_a_pose_near_the_true_one() {
        let cam = camera();
        // A camera 1.2 m up, off to one side and tilted some 30 degrees, over a four-hole board.
        let holes: Vec<BoardHole> = [254.0, 584.2, 914.4, 1244.6].map(|y| BoardHole { centre: [0.0, y], radius_mm: 50.8 }).to_vec();
        let eye = BoardPoint3::new(-500.0, 700.0, 1200.0);
        let truth = CameraPose::look_at(eye, BoardPoint3::new(0.0, 750.0, 0.0), [0.0, 1.0, 0.0]).unwrap();
        let ellipses: Vec<ImageEllipse> = holes.iter().map(|h| rim_ellipse(&cam, &truth, h)).collect();
        let poses: Vec<CameraPose> = hole_poses(pairings(&ellipses[1..3], &holes).iter().filter_map(|p| p.start(&cam, &ellipses[1..3], &holes)));
        assert!(!poses.is_empty());
        // The best of them puts the board's corners within 5 mm of where they are (the rims seen whole: only the affine view of each rim is approximate).
        let corners = [[-254.0, 0.0, 0.0], [254.0, 0.0, 0.0], [-254.0, 1524.0, 0.0], [254.0, 1524.0, 0.0]];
        let best = poses.iter().map(|p| pose_distance(p, &truth, &corners)).fold(f64::INFINITY, f64::min);
        assert!(best < 5.0, "{best} mm");
    }

    /// The four-hole board's surface corners, mm.
    const YOCU4_CORNERS: [[f64; 3]; 4] = [[-254.0, 0.0, 0.0], [254.0, 0.0, 0.0], [-254.0, 1727.2, 0.0], [254.0, 1727.2, 0.0]];

    /// The four-hole board's holes.
    fn yocu4_holes() -> Vec<BoardHole> {
        [254.0, 584.2, 914.4, 1244.6].map(|y| BoardHole { centre: [0.0, y], radius_mm: 50.8 }).to_vec()
    }

    /// Seen from nearly overhead, two rims leave the board's tilt loose: read
    /// a little off, the pair's own pose puts the far corners tens of mm off.
    /// Solved again from every rim in view (and rolled about their line), one
    /// of the poses is within a few (a start the refinement brings home).
    #[test]
    fn every_rim_in_view_fixes_what_a_pair_leaves_loose() {
        let cam = camera();
        let holes = yocu4_holes();
        let truth = CameraPose::look_at(BoardPoint3::new(-150.0, 860.0, 1300.0), BoardPoint3::new(0.0, 860.0, 0.0), [0.0, 1.0, 0.0]).unwrap();
        let mut ellipses: Vec<ImageEllipse> = holes.iter().map(|h| rim_ellipse(&cam, &truth, h)).collect();
        // The second rim read 8 % flatter than it is (a washer over part of it: external y4_00's 42.7 x 38.9 px).
        ellipses[1].axes[1] *= 0.92;
        let k = cam.camera_matrix_mat().unwrap();
        // The pair of the first two holes, read both ways round.
        let pairs: Vec<Pairing> = pairings(&ellipses[..2], &holes).into_iter().filter(|p| p.h1.centre[1] < 600.0 && p.h2.centre[1] < 600.0).collect();
        assert!(!pairs.is_empty());
        let mut pair_only = f64::INFINITY;
        let mut solved = f64::INFINITY;
        for p in &pairs {
            if let Some(pose) = pose_from_pair(&cam, &k, (&p.e1, &p.h1), (&p.e2, &p.h2), p.handed) {
                pair_only = pair_only.min(pose_distance(&pose, &truth, &YOCU4_CORNERS));
            }
            for pose in hole_poses(p.start(&cam, &ellipses, &holes).map(|f| f.solve(&cam, &ellipses, &holes))) {
                solved = solved.min(pose_distance(&pose, &truth, &YOCU4_CORNERS));
            }
        }
        assert!(solved < 5.0 && pair_only > 20.0, "every rim: {solved} mm, the pair alone: {pair_only} mm");
    }

    /// A roll about the holes' line leaves every point on that line where it
    /// was, in the image too, and turns the board's sides about it.
    #[test]
    fn a_roll_about_the_holes_line_keeps_the_holes_in_place() {
        let cam = camera();
        let pose = CameraPose::look_at(BoardPoint3::new(-500.0, 700.0, 1200.0), BoardPoint3::new(0.0, 750.0, 0.0), [0.0, 1.0, 0.0]).unwrap();
        let poses = rolls(&pose, [0.0, 254.0], [0.0, 584.2]);
        assert_eq!(poses.len(), 2 * (MAX_ROLL_DEG / ROLL_STEP_DEG).round() as usize + 1);
        // The middle one is the pose itself.
        assert!(pose_distance(&poses[poses.len() / 2], &pose, &YOCU4_CORNERS) < 1e-9);
        for p in &poses {
            for y in [0.0, 254.0, 914.4, 1727.2] {
                let on_axis = BoardPoint3::new(0.0, y, 0.0);
                let (a, b) = (pose.project(&cam, on_axis).unwrap(), p.project(&cam, on_axis).unwrap());
                assert!((a.u - b.u).hypot(a.v - b.v) < 1e-6, "{a:?} {b:?}");
            }
        }
        // Rolled the furthest (16 degrees), a side's corner, its half-width from the axis, moves the chord 2 w sin(8 deg).
        let side = BoardPoint3::new(254.0, 0.0, 0.0);
        let moved = pose_distance(&poses[0], &pose, &[[side.x_mm, side.y_mm, side.z_mm]]);
        assert!((moved - 2.0 * 254.0 * (8.0f64).to_radians().sin()).abs() < 1e-6, "{moved}");
    }
}
