//! How well a fitted pose is known: its covariance from the edge samples' information (independent noise) or clustered by model edge (each edge's own error shared by its samples), the board-point error it implies, and re-fits without its weakly confirmed features: their spread, or the re-fit the rest agree with better.

use super::*;

/// `invert` returns the inverse condition number for SVD (of the information
/// equilibrated by its diagonal); below this the features leave a direction of
/// motion unconstrained.
const MIN_RCOND: f64 = 1e-10;

/// A rules-fixed feature (a side, an end, a line, a hole's rim) confirmed by
/// under this share of its samples is weak evidence: an edge with little
/// contrast whose search may have settled on texture beside it (external y4_00:
/// a pale board's far end against a floor whose wood grain runs parallel to it,
/// 40 % confirmed, read on a grain line 4-5 px out and tilting the whole pose).
/// Half: a feature seen well is confirmed over most of its length.
const WEAK_FEATURE_SHARE: f64 = 0.5;
/// A rules-fixed feature whose inliers scatter about it by more than this, px
/// RMS, is weak evidence too: a sharp step's edge is found within ~0.35 px
/// (the fixtures' right poses, pieces and shadows on the board), while a ramp
/// or a bevel (a slab's face, a rounded edge) spreads its gradient over
/// several pixels and pulls the pose by a fraction of its width (varied 09: a
/// side read on a slab-face ramp, 0.65 px RMS over 352 samples).
const ROUGH_FEATURE_RMS_PX: f64 = 0.45;
/// A feature needs this many samples to be re-fitted without: a stub at the
/// image's border moves nothing.
const WEAK_FEATURE_MIN_SAMPLES: usize = 20;

/// A weak feature bends the pose when the re-fit without it raises the share of the other rules-fixed features'
/// samples that confirm by at least this (3 percentage points): read on texture beside its edge it pulls the pose
/// off the rest (external y4_00: a far end read on a floor grain line 4-5 px out, the rest confirmed on 73 % of
/// their samples with it, 80 % without), while leaving out a feature that is right moves the rest's share by about
/// a point or less either way (y4_00's holes: 0.6 points at most; external sj_01's ends: 1). The same gain decides
/// between two fits of one reading ([`Locator::rules_fixed_fit`]).
pub(super) const BENDING_GAIN: f64 = 0.03;

impl Locator {
    /// The weakly confirmed ([`WEAK_FEATURE_SHARE`]) or rough ([`ROUGH_FEATURE_RMS_PX`]) rules-fixed features of
    /// `best` (with enough samples to move it), and `best`'s count of the features that confirm it.
    fn weak_features<'a>(&self, best: &'a Refined) -> (Vec<&'a str>, usize) {
        let confirming = best.features.iter().filter(|f| f.fixed && f.inliers > 0).count();
        let weak = best
            .features
            .iter()
            .filter(|f| f.fixed && f.samples >= WEAK_FEATURE_MIN_SAMPLES && ((f.inliers as f64) < WEAK_FEATURE_SHARE * f.samples as f64 || f.rms_px > ROUGH_FEATURE_RMS_PX))
            .map(|f| f.feature.as_str())
            .collect();
        (weak, confirming)
    }

    /// `best`'s re-fits each leaving out one of `weak`, started at `best` and run through the fine stages; `None`
    /// where a re-fit loses the board without the feature.
    fn refits_without(&self, cam: &Camera, best: &Refined, weak: &[&str]) -> Vec<Option<Fit>> {
        let start = Fit { pose: best.pose, cons: best.construction.clone(), polarity: best.polarity.clone() };
        self.in_parallel(weak, |me, samples, name| me.fit_without(samples, cam, start.clone(), &SEARCH_SCHEDULE_PX[WIDE_STAGES..], ITERATIONS_PER_RANGE, Some(name)))
    }

    /// `best`, or the re-fit without the weak feature that bends it ([`BENDING_GAIN`]) where that re-fit passes
    /// the whole verdict (of the weak features whose re-fit raises the rest's confirmed share the most), and the
    /// spread of the board's position over the re-fits without its weak features
    /// ([`Locator::weak_feature_spread_mm`]). The left-out feature still counts in that re-fit's verdict: it is
    /// measured at the pose the rest gives, not taken off the board.
    pub(super) fn unbent(&self, cam: &Camera, best: Refined) -> (Refined, f64) {
        let (weak, confirming) = self.weak_features(&best);
        if weak.is_empty() {
            return (best, 0.0);
        }
        let refits = self.refits_without(cam, &best, &weak);
        let verdicts = self.in_parallel(&refits, |me, samples, fit| fit.clone().and_then(|f| me.verdict(samples, cam, f)));
        let chosen = weak
            .iter()
            .zip(verdicts)
            .filter_map(|(name, v)| v.map(|v| (v.fixed_share(Some(name)) - best.fixed_share(Some(name)), v)))
            .filter(|(gain, v)| *gain >= BENDING_GAIN && self.check(v).is_ok())
            .max_by(|a, b| a.0.total_cmp(&b.0));
        match chosen {
            Some((_, unbent)) => {
                let spread = self.weak_feature_spread_mm(cam, &unbent);
                (unbent, spread)
            }
            None => {
                let spread = self.spread_of(cam, &best, confirming, refits);
                (best, spread)
            }
        }
    }

    /// The spread of the board's position over re-fits each leaving out one of
    /// the weakly confirmed ([`WEAK_FEATURE_SHARE`]) or rough
    /// ([`ROUGH_FEATURE_RMS_PX`]) rules-fixed features, mm: a
    /// delete-one-feature jackknife, `sqrt((n - 1) / n * sum d_i^2)` over the `n`
    /// rules-fixed features that confirm the pose, `d_i` the largest move of a
    /// visible board point ([`Locator::board_disagreement_mm`]) when feature `i`
    /// is left out (taken as 0 for the well-confirmed ones: re-fitting without
    /// them costs time and moves little). The covariance of the edge samples
    /// ([`clustered_pose_covariance`]) says how well the features agree with the
    /// pose they pulled to; where one weak feature bends it, only leaving it out
    /// shows by how much. Each re-fit starts at `best` and runs the fine stages.
    pub(super) fn weak_feature_spread_mm(&self, cam: &Camera, best: &Refined) -> f64 {
        let (weak, confirming) = self.weak_features(best);
        if weak.is_empty() {
            return 0.0;
        }
        let refits = self.refits_without(cam, best, &weak);
        self.spread_of(cam, best, confirming, refits)
    }

    /// The jackknife of [`Locator::weak_feature_spread_mm`] over `refits` of `best`, which `confirming`
    /// rules-fixed features confirm.
    fn spread_of(&self, cam: &Camera, best: &Refined, confirming: usize, refits: Vec<Option<Fit>>) -> f64 {
        if confirming < 2 {
            return 0.0;
        }
        // A re-fit that loses the board without the feature says nothing of the spread (the rest cannot pin it).
        let moves = refits.into_iter().flatten().map(|f| self.board_disagreement_mm(cam, &best.pose, &f.pose));
        let n = confirming as f64;
        ((n - 1.0) / n * moves.map(|d| d * d).sum::<f64>()).sqrt()
    }
}

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
    let inv = equilibrated_inverse(jtj, 6)?;
    Some(std::array::from_fn(|i| std::array::from_fn(|j| inv[i][j] * sigma_px * sigma_px)))
}

/// The inverse of the leading `n` x `n` block of a symmetric information
/// matrix, inverted equilibrated by its diagonal (rotations, px per radian, and
/// translations, px per mm, differ by ~1e6); `None` when it leaves a direction
/// of motion unconstrained ([`MIN_RCOND`]).
fn equilibrated_inverse<const N: usize>(a: &[[f64; N]; N], n: usize) -> Option<Vec<Vec<f64>>> {
    let d: Vec<f64> = (0..n).map(|i| a[i][i].max(1e-300).sqrt()).collect();
    let scaled: Vec<Vec<f64>> = (0..n).map(|i| (0..n).map(|j| a[i][j] / (d[i] * d[j])).collect()).collect();
    let am = Mat::from_slice_2d(&scaled).ok()?;
    let mut inv = Mat::default();
    let rcond = opencv::core::invert(&am, &mut inv, opencv::core::DECOMP_SVD).ok()?;
    if !(rcond > MIN_RCOND) {
        return None;
    }
    (0..n).map(|i| (0..n).map(|j| inv.at_2d::<f64>(i as i32, j as i32).ok().map(|v| v / (d[i] * d[j]))).collect()).collect()
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
#[derive(Clone, Copy, Default)]
pub(super) struct EdgeSums {
    pub(super) score: [f64; MAX_UNKNOWNS],
    pub(super) jacobian: [f64; MAX_UNKNOWNS],
    /// How far the whole edge may lie from where the model puts it, beyond [`EDGE_BIAS_FLOOR_PX`], px: where
    /// the pose rests on the construction ([`CONSTRUCTION_EDGE_BIAS_MM`] imaged), else none.
    pub(super) model_bias_px: f64,
}

/// How far an edge of the construction (a wall's or a gate bar's top, a gutter's edge) may lie from where the
/// construction model puts it at its fitted dimensions, mm, one sign along the whole edge: the model gives the
/// walls one height and one thickness and every edge a sharp corner, while a maker rounds or chamfers a top edge
/// (a few mm), builds the back wall or the bar heavier than the sides, or sets a wall a few mm out. Counted where
/// no rules-fixed edge across the board confirms the pose (the place along the board then rests on the
/// construction's edges: real sjoelbak photo 154021, read 27 px along the board from its typed corners with a
/// sigma of 0.3 mm); elsewhere the rules-fixed edges hold the pose and the construction's only sizes itself.
pub(super) const CONSTRUCTION_EDGE_BIAS_MM: f64 = 3.0;

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
    let ainv = equilibrated_inverse(jtj, n)?;
    // Each edge's score through A^-1: its pull on the pose; and the pull of the
    // edge moved whole by the floor of an edge's location error.
    let through = |g: &[f64; MAX_UNKNOWNS]| -> [f64; 6] { std::array::from_fn(|i| (0..n).map(|j| ainv[i][j] * g[j]).sum()) };
    let mut cov = [[0.0f64; 6]; 6];
    for e in edges {
        let (pull, whole) = (through(&e.score), through(&e.jacobian));
        for i in 0..6 {
            for j in 0..6 {
                cov[i][j] += scale * pull[i] * pull[j] + (EDGE_BIAS_FLOOR_PX.powi(2) + e.model_bias_px.powi(2)) * whole[i] * whole[j];
            }
        }
    }
    cov.iter().flatten().all(|v| v.is_finite()).then_some(cov)
}

/// The pose's information (6x6) from the features that confirm: each feature's own information `per_edge`
/// summed over those `confirmed` says confirm (in the edges' order; the verdict's test). A few hits along a
/// feature that mostly does not show are chance (texture, a shadow), and pin nothing.
pub(super) fn confirmed_information(per_edge: &[[[f64; 6]; 6]], confirmed: impl IntoIterator<Item = bool>) -> [[f64; 6]; 6] {
    let mut info = [[0.0f64; 6]; 6];
    for (add, _) in per_edge.iter().zip(confirmed).filter(|(_, c)| *c) {
        for (row, add) in info.iter_mut().zip(add) {
            row.iter_mut().zip(add).for_each(|(a, b)| *a += b);
        }
    }
    info
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An edge that may lie a model's bias from where the model puts it widens the pose's covariance by the pull of
    /// that edge moved whole by that much; with none, the covariance is the edges' own.
    #[test]
    fn a_model_bias_on_an_edge_widens_the_covariance_by_its_whole_pull() {
        let (jtj, mut sums) = edges(50, &[0.1, -0.2, 0.05, 0.3, -0.1, 0.2, 0.0, -0.3, 0.1, 0.15, -0.05, 0.2]);
        let plain = clustered_pose_covariance(&jtj, 6, &sums).unwrap();
        sums[3].model_bias_px = 2.0;
        let biased = clustered_pose_covariance(&jtj, 6, &sums).unwrap();
        let ainv = equilibrated_inverse(&jtj, 6).unwrap();
        let whole: [f64; 6] = std::array::from_fn(|i| (0..6).map(|j| ainv[i][j] * sums[3].jacobian[j]).sum());
        let expected: [[f64; 6]; 6] = std::array::from_fn(|i| std::array::from_fn(|j| plain[i][j] + 4.0 * whole[i] * whole[j]));
        assert!(close(&biased, &expected, 1e-9));
        assert!(biased[0][0] > plain[0][0]);
    }

    /// A feature found on 7 of its 110 samples adds nothing to what pins the pose; one found on most adds all it has.
    #[test]
    fn only_the_features_that_confirm_pin_the_pose() {
        let info = |v: f64| -> [[f64; 6]; 6] { std::array::from_fn(|i| std::array::from_fn(|j| if i == j { v } else { 0.0 })) };
        // As the verdict tells them (`confirms`, and found on one sample at least).
        let confirm = |(n, hits): (usize, usize)| hits > 0 && confirms(n, hits);
        let got = confirmed_information(&[info(7.0), info(100.0), info(0.0)], [(110, 7), (110, 100), (50, 0)].map(confirm));
        assert!(got.iter().flatten().zip(info(100.0).iter().flatten()).all(|(a, b)| (a - b).abs() < 1e-12), "{got:?}");
        let none = confirmed_information(&[info(7.0)], [(110, 7)].map(confirm));
        assert!(none.iter().flatten().all(|v| v.abs() < 1e-12));
    }

    /// Twelve edges of `per_edge` samples each, all of an edge's samples with
    /// the same Jacobian row and the same offset `offsets[e]` px: the fit's
    /// information and each edge's sums.
    fn edges(per_edge: usize, offsets: &[f64]) -> ([[f64; MAX_UNKNOWNS]; MAX_UNKNOWNS], Vec<EdgeSums>) {
        let mut jtj = [[0.0f64; MAX_UNKNOWNS]; MAX_UNKNOWNS];
        let mut sums = Vec::new();
        for (e, r) in offsets.iter().enumerate() {
            let t = e as f64;
            let mut j = [0.0f64; MAX_UNKNOWNS];
            j[..6].copy_from_slice(&[t.cos(), t.sin(), (2.0 * t).cos(), (2.0 * t).sin(), (3.0 * t).cos(), 1.0]);
            let n = per_edge as f64;
            for a in 0..6 {
                for b in 0..6 {
                    jtj[a][b] += n * j[a] * j[b];
                }
            }
            sums.push(EdgeSums { score: j.map(|v| n * v * r), jacobian: j.map(|v| n * v), model_bias_px: 0.0 });
        }
        (jtj, sums)
    }

    fn close(a: &[[f64; 6]; 6], b: &[[f64; 6]; 6], rel: f64) -> bool {
        let scale = (0..6).map(|i| a[i][i].abs()).fold(0.0, f64::max);
        a.iter().flatten().zip(b.iter().flatten()).all(|(x, y)| (x - y).abs() <= rel * scale)
    }

    /// Errors an edge's samples share do not average away over its samples:
    /// the clustered covariance is the same with ten samples an edge or a
    /// thousand, where independent noise would shrink it a hundredfold.
    #[test]
    fn an_edges_shared_error_does_not_average_away_over_its_samples() {
        let offsets = [0.3, -0.2, 0.1, 0.25, -0.35, 0.05, -0.1, 0.2, -0.15, 0.3, -0.25, 0.1];
        let (few_jtj, few) = edges(10, &offsets);
        let (many_jtj, many) = edges(1000, &offsets);
        let a = clustered_pose_covariance(&few_jtj, 6, &few).unwrap();
        let b = clustered_pose_covariance(&many_jtj, 6, &many).unwrap();
        // Relative tolerance: the two are one formula in different floating-point sums.
        assert!(close(&a, &b, 1e-9), "{a:?}\nvs\n{b:?}");
        let iid_few = covariance_from_information(&std::array::from_fn(|i| std::array::from_fn(|j| few_jtj[i][j])), 0.3).unwrap();
        let iid_many = covariance_from_information(&std::array::from_fn(|i| std::array::from_fn(|j| many_jtj[i][j])), 0.3).unwrap();
        assert!(iid_many[0][0] < 0.02 * iid_few[0][0]);
        assert!(b[0][0] > 10.0 * iid_many[0][0]);
    }

    /// With no residual at all, every edge still carries the floor of shared
    /// error: the covariance is that floor's, never zero.
    #[test]
    fn edges_that_fit_exactly_still_carry_the_floor() {
        let (jtj, sums) = edges(100, &[0.0; 12]);
        let cov = clustered_pose_covariance(&jtj, 6, &sums).unwrap();
        // The floor alone: sigma_b^2 M^-1 for M the information of one sample an edge.
        let floor = covariance_from_information(&std::array::from_fn(|i| std::array::from_fn(|j| jtj[i][j] / 100.0)), EDGE_BIAS_FLOOR_PX).unwrap();
        assert!(close(&cov, &floor, 1e-9), "{cov:?}\nvs\n{floor:?}");
        assert!(cov[5][5] > 0.0);
    }
}
