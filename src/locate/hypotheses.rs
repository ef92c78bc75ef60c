//! Pose hypotheses: every arrangement of image lines as the surface's two long sides and one cross line gives a pose in closed form; each is ranked by how much of the board, and of its identifying lines, holes and gate bar, it projects onto image edges.
//!
//! A frame's few dozen long lines make a thousand or more hypotheses. Each is
//! first ranked on the oriented edge map ([`super::edgemap::EdgeMap`]: one byte a sample), and
//! only the best of every reading of the cross line are then scored exactly
//! (the gradient searched along each sample's normal), which is what the
//! refinement's starts are picked by.

use super::*;

/// Model sampling step of the first ranking, px: twice the exact score's
/// ([`SCORE_STEP_PX`]); a hypothesis projects some 5,000-10,000 px of edges.
const RANK_STEP_PX: f64 = 2.0 * SCORE_STEP_PX;
/// Hypotheses scored exactly: the best ranked overall ...
const EXACT_OVERALL: usize = 24;
/// ... and the best ranked of each reading of the cross line (which model
/// cross line the image line is read as), at least: the refinement takes up to
/// [`STARTS_PER_READING`] distinct starts per reading a batch, for up to
/// [`MAX_START_BATCHES`] batches, and near-copies of one pose (the same lines
/// read a pixel apart) rank side by side.
const EXACT_PER_READING: usize = 2 * STARTS_PER_READING * MAX_START_BATCHES;

/// A hypothesis: its score, its pose, and its reading: which model cross line the image line was read as, or (one past them) the holes.
pub(super) type Hypothesis = (f64, CameraPose, usize);

/// Below this share of [`MIN_IDENTIFYING_COVERAGE`], a hypothesis's score is
/// weighed by this floor: those whose lines, holes or gate bar are not in view
/// or not yet met keep their order by the outline among themselves, below every
/// one whose identifying features the image shows (a start a few pixels off
/// can still be pulled onto its lines by the refinement).
const UNIDENTIFIED_WEIGHT: f64 = 0.05;

/// The score of one hypothesis's samples, `hit` telling which found an edge:
/// matched samples squared over samples counted, weighed by how much of the
/// verdict's demand on the identifying features (lines, holes, gate bar: at
/// least [`MIN_IDENTIFYING_COVERAGE`] of their samples matched) the samples
/// meet, down to [`UNIDENTIFIED_WEIGHT`]. An outline alone is matched as well by
/// a floor's tiles or a table's frame as by the board (external y4_01: every
/// start refined was a tile reading, none of them with a hole). The
/// rules-fixed features count; a construction edge (nominal here) only where at
/// least half of its `agree_samples` or more agree, never against. `None` if
/// nothing counts.
fn score(model: &BoardModel, samples: &[Sample], agree_samples: usize, mut hit: impl FnMut(&Sample) -> bool) -> Option<f64> {
    // (samples, hits) of each model edge.
    let mut tally = vec![(0usize, 0usize); model.edges.len()];
    for s in samples {
        tally[s.edge].0 += 1;
        tally[s.edge].1 += usize::from(hit(s));
    }
    let (mut n, mut hits, mut id_n, mut id_hits) = (0usize, 0usize, 0usize, 0usize);
    for (e, t) in model.edges.iter().zip(tally.iter()) {
        if !(e.fixed || (t.0 >= agree_samples && t.1 * 2 >= t.0)) {
            continue;
        }
        n += t.0;
        hits += t.1;
        if e.identifying {
            id_n += t.0;
            id_hits += t.1;
        }
    }
    if n == 0 {
        return None;
    }
    let id_share = if id_n == 0 { 0.0 } else { id_hits as f64 / id_n as f64 };
    let weight = (id_share / MIN_IDENTIFYING_COVERAGE).clamp(UNIDENTIFIED_WEIGHT, 1.0);
    Some(hits as f64 * hits as f64 / n as f64 * weight)
}

impl Locator {
    /// How well the image's edges match the board that `pose` images with the
    /// construction `cons` (mm off nominal): the hypotheses' exact [`score`], every
    /// sample's gradient searched within [`SCORE_REACH_PX`] either way. `None` if
    /// nothing counts.
    pub(super) fn edge_match(&self, samples: &mut Vec<Sample>, cam: &Camera, pose: &CameraPose, cons: &[f64]) -> Option<f64> {
        sample_places(&self.model, pose, cam, SCORE_STEP_PX, cons, samples);
        score(&self.model, samples, HYPOTHESIS_AGREE_SAMPLES, |s| self.grad.search(s.p, s.n, SCORE_REACH_PX, 0.0).is_some())
    }

    /// Every hypothesis from `lines` (longest first) and the poses read from
    /// the holes (`from_holes`, a reading of their own beside the cross line's),
    /// the best scored exactly, best first; with `sides_alone`, where no three
    /// lines give a pose, the sides alone do ([`Locator::side_poses`]).
    pub(super) fn hypotheses(&mut self, cam: &Camera, lines: &[ImageLine], from_holes: &[CameraPose], sides_alone: bool) -> Vec<Hypothesis> {
        // Built with the frame's gradients ([`Locator::run`]).
        let map = std::mem::take(&mut self.edge_map);
        // Every pose the lines give, with the reading of its cross line.
        let mut poses: Vec<(CameraPose, usize)> = Vec::new();
        self.poses_from_lines(cam, lines, &mut poses);
        // Where no line across the board gives a pose (an end the colour of the floor beyond it, a gate bar's and
        // compartments' edges broken into pieces shorter than a line), the sides alone give the board up to its roll
        // about them and where it lies along them: both are searched, as a reading of their own.
        // The holes' poses are a reading of their own, after every cross line's: each
        // reading keeps its best scored exactly and refined, whatever the lines'
        // hypotheses score (a floor's tiles can outscore a pose from the holes, which a
        // near-overhead view leaves a few degrees off until refined: external y4_01).
        // The sides' poses, one after it.
        let hole_reading = self.model.ladders.iter().map(|l| l.cross_lines_mm.len()).max().unwrap_or(0);
        let sides_only = sides_alone && poses.is_empty() && from_holes.is_empty();
        if sides_only {
            poses.extend(self.side_poses(cam, lines).into_iter().map(|p| (p, hole_reading + 1)));
        }
        poses.extend(from_holes.iter().map(|p| (*p, hole_reading)));
        let rank_step = if sides_only { SIDE_RANK_STEP_PX } else { RANK_STEP_PX };
        // Ranked on the edge map (the machine's cores sharing the poses).
        let rank_agree = (HYPOTHESIS_AGREE_SAMPLES as f64 * SCORE_STEP_PX / rank_step).ceil() as usize;
        let map_score = |me: &Locator, samples: &mut Vec<Sample>, (pose, yi): &(CameraPose, usize)| {
            sample_places(&me.model, pose, cam, rank_step, &[], samples);
            let mut masks = edgemap::MaskOfLast::default();
            score(&me.model, samples, rank_agree, |s| map.hit_mask(s.p, masks.of(s.n))).map(|s| (s, *pose, *yi))
        };
        let mut ranked: Vec<Hypothesis> = self.in_parallel(&poses, map_score).into_iter().flatten().collect();
        self.edge_map = map;
        ranked.sort_by(|a, b| b.0.total_cmp(&a.0));
        let readings = ranked.iter().map(|h| h.2 + 1).max().unwrap_or(0);
        let mut per_reading = vec![0usize; readings];
        let mut kept: Vec<(CameraPose, usize)> = Vec::new();
        for (rank, (_, pose, yi)) in ranked.into_iter().enumerate() {
            if rank < EXACT_OVERALL || per_reading[yi] < EXACT_PER_READING {
                kept.push((pose, yi));
            }
            per_reading[yi] += 1;
        }
        // The best of each reading scored exactly.
        let exact_score = |me: &Locator, samples: &mut Vec<Sample>, (pose, yi): &(CameraPose, usize)| me.edge_match(samples, cam, pose, &[]).map(|s| (s, *pose, *yi));
        let mut hyps: Vec<Hypothesis> = self.in_parallel(&kept, exact_score).into_iter().flatten().collect();
        hyps.sort_by(|a, b| b.0.total_cmp(&a.0));
        hyps
    }

    /// The poses every two lines of `lines` as a ladder's sides and a third as one of its cross lines give (the
    /// [`SIDE_CANDIDATES`] longest as sides, the [`CROSS_CANDIDATES`] longest as cross lines), each with the reading
    /// of its cross line, added to `poses`.
    fn poses_from_lines(&self, cam: &Camera, lines: &[ImageLine], poses: &mut Vec<(CameraPose, usize)>) {
        let sides = &lines[..lines.len().min(SIDE_CANDIDATES)];
        let crosses = &lines[..lines.len().min(CROSS_CANDIDATES)];
        for ladder in &self.model.ladders {
            for (i, a) in sides.iter().enumerate() {
                for (j, b) in sides.iter().enumerate() {
                    if i == j {
                        continue;
                    }
                    for (k, c) in crosses.iter().enumerate() {
                        if k == i || k == j || !spans_between(a, b, c) {
                            continue;
                        }
                        for (yi, &y) in ladder.cross_lines_mm.iter().enumerate() {
                            let Some(pose) = pose_from_lines(cam, a, b, c, ladder.half_width_mm, y, ladder.z_mm) else { continue };
                            // The board normal in camera coordinates is the rotation's third column;
                            // looking down on the board it points back at the camera (-z).
                            if -pose.rotation[2][2] < MAX_TILT_DEG.to_radians().cos() {
                                continue;
                            }
                            poses.push((pose, yi));
                        }
                    }
                }
            }
        }
    }
}

/// The longest lines tried as the surface's two sides when no line across the board gives a pose
/// ([`Locator::side_poses`]): the sides are among a frame's longest straight edges (with the walls' or rails'), and
/// each pair costs [`SIDE_ROLLS`] rolls times the board's length in slides.
const SIDE_POSE_LINES: usize = 3;
/// The board's roll about its sides, searched either way of the pose that faces the camera, degrees: the views of
/// the fixtures and the external renders lie 3-25 degrees from overhead; and the step, degrees: with it, some start
/// images the board within 10 px on the test's views, which the refinement's wide stages (16 px) take onto it.
const SIDE_ROLL_MAX_DEG: f64 = 45.0;
const SIDE_ROLL_STEP_DEG: f64 = 5.0;
/// The side poses are ranked on the edge map at this sampling step, px: twice [`RANK_STEP_PX`]. They are some
/// 50,000 on a sjoelbak frame, all of one reading; with half the samples each, external sj_03 (its camera 0.5 % or
/// 4 px off, `eval-locate --camera-off`) is located to the same poses in 0.6-0.8 s instead of 1.0-1.3 s.
const SIDE_RANK_STEP_PX: f64 = 2.0 * RANK_STEP_PX;
/// Rolls searched per pair of sides.
const SIDE_ROLLS: usize = (2.0 * SIDE_ROLL_MAX_DEG / SIDE_ROLL_STEP_DEG) as usize + 1;
/// The slide along the sides moves the board by at most this in the image a step, px: the nearest slide then
/// lies within half of it of the board, half the refinement's widest search range ([`SEARCH_SCHEDULE_PX`]).
const SIDE_SLIDE_STEP_PX: f64 = 16.0;

impl Locator {
    /// Poses from two lines as the surface's sides alone: every ordered pair of the [`SIDE_POSE_LINES`] longest
    /// lines, read as each ladder's sides, gives the board's long axis and, for each roll of the board about it
    /// ([`SIDE_ROLL_STEP_DEG`]), a pose up to where the board lies along its sides, which is stepped over the board's
    /// whole length ([`SIDE_SLIDE_STEP_PX`]). The hypotheses' ranking on the edge map then finds the board's
    /// ends, lines, holes and gate bar, which pin both.
    pub(super) fn side_poses(&self, cam: &Camera, lines: &[ImageLine]) -> Vec<CameraPose> {
        let sides = &lines[..lines.len().min(SIDE_POSE_LINES)];
        let (y_lo, y_hi) = self.model.ladders.iter().flat_map(|l| l.cross_lines_mm.iter().copied()).fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), y| (a.min(y), b.max(y)));
        if !(y_lo < y_hi) {
            return Vec::new();
        }
        // The ray through an image point.
        let ray = |u: f64, v: f64| [(u - cam.cx) / cam.fx, (v - cam.cy) / cam.fy, 1.0];
        // The two ends of a line's segments in the image.
        let ends = |l: &ImageLine| l.span.map(|t| (-l.l[2] * l.l[0] + t * l.l[1], -l.l[2] * l.l[1] - t * l.l[0]));
        let mut poses = Vec::new();
        for ladder in &self.model.ladders {
            let hw = ladder.half_width_mm;
            for (i, a) in sides.iter().enumerate() {
                for (j, b) in sides.iter().enumerate() {
                    if i == j {
                        continue;
                    }
                    let (na, nb) = (line_plane(cam, a.l), line_plane(cam, b.l));
                    let (ends_a, ends_b) = (ends(a), ends(b));
                    // The board's long axis, in camera coordinates: in both sides' planes.
                    let Some(dy) = unit3(cross3(na, nb)) else { continue };
                    // Across the axis within each side's plane: a side's points lie along it from the axis's plane.
                    let (Some(ua), Some(ub)) = (unit3(cross3(dy, na)), unit3(cross3(dy, nb))) else { continue };
                    // The roll that faces the camera most: the board's normal (towards the camera) nearest the
                    // camera's backward axis.
                    const BACK: [f64; 3] = [0.0, 0.0, -1.0];
                    let Some(n0) = unit3(sub3(BACK, scale3(dy, dot3(BACK, dy)))) else { continue };
                    let Some(m0) = unit3(cross3(dy, n0)) else { continue };
                    for k in 0..SIDE_ROLLS {
                        let roll = (-SIDE_ROLL_MAX_DEG + k as f64 * SIDE_ROLL_STEP_DEG).to_radians();
                        let n = [0, 1, 2].map(|c| roll.cos() * n0[c] + roll.sin() * m0[c]);
                        if -n[2] < MAX_TILT_DEG.to_radians().cos() {
                            continue;
                        }
                        // In the sides' plane `n . X = h` (h < 0: the camera on the side `n` points to), the sides
                        // cross the plane through the camera across the axis at `h ua / (n . ua)` and `h ub / (n . ub)`,
                        // 2 hw apart.
                        let (ka, kb) = (dot3(n, ua), dot3(n, ub));
                        if ka.abs() < 1e-9 || kb.abs() < 1e-9 {
                            continue;
                        }
                        let apart = sub3(scale3(ua, 1.0 / ka), scale3(ub, 1.0 / kb));
                        let width = dot3(apart, apart).sqrt();
                        if !(width > 1e-12) {
                            continue;
                        }
                        let h = -2.0 * hw / width;
                        let (pa, pb) = (scale3(ua, h / ka), scale3(ub, h / kb));
                        let Some(dx) = unit3(sub3(pa, pb)) else { continue };
                        let dyb = cross3(n, dx);
                        // Both sides seen in front of the camera, where their segments are.
                        let on_plane = |(u, v): (f64, f64)| {
                            let r = ray(u, v);
                            let lambda = h / dot3(n, r);
                            (lambda > 0.0).then(|| scale3(r, lambda))
                        };
                        let (Some(a0), Some(a1)) = (on_plane(ends_a[0]), on_plane(ends_a[1])) else { continue };
                        if ends_b.iter().any(|e| on_plane(*e).is_none()) {
                            continue;
                        }
                        // The board's origin at the sides' midpoint in the camera's plane across the axis, on the
                        // surface (`z` below the ladder's plane); side `a`'s segments lie from `v0` to `v1` along the
                        // axis from there.
                        let origin = sub3(scale3([pa[0] + pb[0], pa[1] + pb[1], pa[2] + pb[2]], 0.5), scale3(n, ladder.z_mm));
                        let (va, vb) = (dot3(sub3(a0, pa), dyb), dot3(sub3(a1, pa), dyb));
                        let (v0, v1) = (va.min(vb), va.max(vb));
                        // The slide's step: the image's largest scale along side `a` in view, px per mm (the nearer
                        // end's).
                        let scale = [a0, a1].iter().map(|x| cam.fx / x[2]).fold(0.0f64, f64::max);
                        let step_mm = SIDE_SLIDE_STEP_PX / scale;
                        let rotation = [[dx[0], dyb[0], n[0]], [dx[1], dyb[1], n[1]], [dx[2], dyb[2], n[2]]];
                        // The board's y = `s` at the origin: every slide that puts part of the board where side `a`
                        // shows.
                        let (s_lo, s_hi) = (y_lo - v1, y_hi - v0);
                        let slides = ((s_hi - s_lo) / step_mm).ceil() as usize;
                        for m in 0..=slides {
                            let y = s_lo + m as f64 * step_mm;
                            poses.push(CameraPose { rotation, translation: sub3(origin, scale3(dyb, y)) });
                        }
                    }
                }
            }
        }
        poses
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(edge: usize) -> Sample {
        Sample { edge, t: 0.0, xc: [0.0, 0.0, 1000.0], p: [0.0, 0.0], n: [1.0, 0.0], partner_px: f64::NAN, line_px: f64::NAN }
    }

    /// A reading whose outline matches but whose holes do not (a floor's tiles)
    /// ranks far below one matching both, though it matches more samples.
    #[test]
    fn an_outline_without_its_holes_ranks_low() {
        let model = BoardModel::new(&Board::load("yocu-4").unwrap());
        let outline = model.edges.iter().position(|e| e.fixed && !e.identifying).unwrap();
        let hole = model.edges.iter().position(|e| e.fixed && e.identifying).unwrap();
        let samples: Vec<Sample> = std::iter::repeat_n(outline, 100).chain(std::iter::repeat_n(hole, 40)).map(sample).collect();
        // Tiles: the outline matched all along, no hole.
        let tiles = score(&model, &samples, HYPOTHESIS_AGREE_SAMPLES, |s| s.edge == outline).unwrap();
        // The board: 80 % of the outline (pieces hide some), half of its holes' rims.
        let mut k = 0;
        let board = score(&model, &samples, HYPOTHESIS_AGREE_SAMPLES, |s| {
            k += 1;
            if s.edge == outline { k % 5 != 0 } else { k % 2 == 0 }
        })
        .unwrap();
        assert!(board > 5.0 * tiles, "board {board}, tiles {tiles}");
        // Every identifying sample matched saturates at the verdict's demand: the outline decides.
        let all = score(&model, &samples, HYPOTHESIS_AGREE_SAMPLES, |_| true).unwrap();
        assert!((all - 140.0).abs() < 1e-9, "{all}");
    }

    /// The image line through two board points as `pose` images them.
    fn imaged(cam: &Camera, pose: &CameraPose, p: BoardPoint3, q: BoardPoint3) -> ImageLine {
        let (a, b) = (pose.project(cam, p).unwrap(), pose.project(cam, q).unwrap());
        crate::locate::tests::line_through([a.u, a.v], [b.u, b.v])
    }

    /// Project, then search back: for views of a sjoelbak and a shuffleboard from overhead to steeply slanted,
    /// rolled either way, with the board's sides alone in the image, the sides' poses hold one that images the
    /// board within the refinement's widest search range of where it is (the wide stages take it from there).
    #[test]
    fn the_sides_alone_give_a_start_near_the_board() {
        let cam = Camera { image_width: 1280, image_height: 960, fx: 1100.0, fy: 1100.0, cx: 639.5, cy: 479.5, distortion: Default::default() };
        for (board, views) in [
            ("sjoelbak", vec![([0.0, 1000.0, 2600.0], [0.0, 1000.0, 0.0]), ([900.0, 300.0, 2000.0], [0.0, 1100.0, 0.0]), ([-700.0, 1900.0, 1500.0], [0.0, 1300.0, 0.0])]),
            ("shuffleboard-22ft", vec![([400.0, 5200.0, 1800.0], [0.0, 5600.0, 0.0]), ([-300.0, 800.0, 1500.0], [0.0, 600.0, 0.0])]),
        ] {
            let loc = Locator::new(&Board::load(board).unwrap(), LocateConfig::default());
            let ladder = loc.model.ladders.iter().find(|l| l.z_mm == 0.0).unwrap();
            let hw = ladder.half_width_mm;
            for (eye, target) in views {
                let pose = CameraPose::look_at(BoardPoint3::new(eye[0], eye[1], eye[2]), BoardPoint3::new(target[0], target[1], target[2]), [0.0, 1.0, 0.0]).unwrap();
                // The sides' stretches in view, as the line finder would give them (longest first).
                let (y0, y1) = (target[1] - 400.0, target[1] + 400.0);
                let lines = [hw, -hw].map(|x| imaged(&cam, &pose, BoardPoint3::new(x, y0, 0.0), BoardPoint3::new(x, y1, 0.0)));
                let poses = loc.side_poses(&cam, &lines);
                let nearest = poses.iter().map(|p| loc.image_distance(&cam, &pose, p)).fold(f64::INFINITY, f64::min);
                // Tolerance: the widest search range of the refinement, which brings a start this near onto the board.
                assert!(nearest <= SEARCH_SCHEDULE_PX[0], "{board} from {eye:?}: the nearest of {} poses images the board {nearest:.1} px off", poses.len());
            }
        }
    }
}
