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
        sample_model(&self.model, pose, cam, SCORE_STEP_PX, cons, samples);
        score(&self.model, samples, HYPOTHESIS_AGREE_SAMPLES, |s| self.grad.search(s.p, s.n, SCORE_REACH_PX, 0.0).is_some())
    }

    /// Every hypothesis from `lines` (longest first) and the poses read from
    /// the holes (`from_holes`, a reading of their own beside the cross line's),
    /// the best scored exactly, best first.
    pub(super) fn hypotheses(&mut self, cam: &Camera, lines: &[ImageLine], from_holes: &[CameraPose]) -> Vec<Hypothesis> {
        // Built with the frame's gradients ([`Locator::run`]).
        let map = std::mem::take(&mut self.edge_map);
        let rank_agree = (HYPOTHESIS_AGREE_SAMPLES as f64 * SCORE_STEP_PX / RANK_STEP_PX).ceil() as usize;
        let sides = &lines[..lines.len().min(SIDE_CANDIDATES)];
        let crosses = &lines[..lines.len().min(CROSS_CANDIDATES)];
        // Every pose the lines give, with the reading of its cross line.
        let mut poses: Vec<(CameraPose, usize)> = Vec::new();
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
        // The holes' poses are a reading of their own, after every cross line's: each
        // reading keeps its best scored exactly and refined, whatever the lines'
        // hypotheses score (a floor's tiles can outscore a pose from the holes, which a
        // near-overhead view leaves a few degrees off until refined: external y4_01).
        let hole_reading = self.model.ladders.iter().map(|l| l.cross_lines_mm.len()).max().unwrap_or(0);
        poses.extend(from_holes.iter().map(|p| (*p, hole_reading)));
        // Ranked on the edge map (the machine's cores sharing the poses).
        let map_score = |me: &Locator, samples: &mut Vec<Sample>, (pose, yi): &(CameraPose, usize)| {
            sample_model(&me.model, pose, cam, RANK_STEP_PX, &[], samples);
            score(&me.model, samples, rank_agree, |s| map.hit(s.p, s.n)).map(|s| (s, *pose, *yi))
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
}
