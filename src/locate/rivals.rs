//! Choosing between readings of the image: the near readings a board of free-height upright faces allows (re-fits from the best shifted along the board, and with the heights started across their range), the image evidence that decides between two readings, and the ambiguity refusal.

use super::*;

/// Shifts of the best reading along the board, mm, from which it is re-fitted
/// with the construction reset to nominal. An upright face of free height
/// (a sjoelbak's walls, partitions, gate bar) seen at a slant lets a pose
/// shifted by about the face's image height fit its top where the truth has the
/// foot, with the heights changed: on the fixtures 13-25 mm along the board. The
/// two readings are separate optima of the fit (the one never drifts into the
/// other), so the search must try both; a start within ~10 mm of either converges to it.
/// So one start 20 mm to each side reaches a reading 10-30 mm away, and the best's own
/// pose those within 10 mm. (Starts at 10 and 30 mm as well, 12 re-fits for these 4,
/// gave every located pose on the own, varied and external sets the same.) Along the
/// board only: the same shifts across it (2 more re-fits) changed no located pose on
/// the own, varied and external sets, nor on 40 sjoelbak views with the camera moved
/// 250 mm and 400 mm to either side of the own and varied scenes' (where the side
/// walls' and partitions' tops lie furthest from their feet in the image).
const SHIFTS_MM: [f64; 2] = [-20.0, 20.0];

/// Where the heights of the upright faces (walls, partitions, a gate bar) start
/// in the re-fits of the best reading from its own pose, as fractions of the
/// way from nominal to the end of each height's range (positive: towards
/// `max_mm`, negative: towards `min_mm`), all heights together. The wide fit
/// trades the pose against a face's height (both move the face's top in the
/// image) and stops in the optimum nearest its start: a sjoelbak walled 87 mm
/// high, started at the nominal 50 mm, stops at 58 mm with the pose 5.6 mm along
/// the board (varied scene 18), while started at the true pose and heights it
/// stays there. Starts a third of the range apart above nominal and halfway
/// below it leave no maker's height further than about a sixth of its range
/// (~25 mm for a wall) from one.
const HEIGHT_STARTS: [f64; 3] = [-0.5, 1.0 / 3.0, 2.0 / 3.0];

/// How much nearer the camera a reading that took an outline of the construction beside the surface (a gutter's
/// or rail's far edge, a frame's) for the surface's sides puts the board, as the ratio of that outline's width to
/// the surface's: the re-fits of such a reading start with the camera this much further away. A shuffleboard's
/// gutters (50-110 mm a side on a 508 mm surface) and rails span 1.2-1.6; a washer board's frame or a sjoelbak's
/// walls less. Starts this far apart converge to the nearer true reading (a start within ~10 % of the scale does).
const INWARD_SCALES: [f64; 5] = [1.1, 1.2, 1.3, 1.45, 1.6];

/// The disagreement of two fits of the same reading that both pass every check
/// is taken as this many of the pose's sigmas: the coverage a located pose's
/// sigma is held to (its error within three sigmas).
const OPTIMA_SPREAD_SIGMAS: f64 = 3.0;

impl Locator {
    /// Whether the board has rules-fixed edges at the foot of an upright face of
    /// free height: the boards whose readings the shifted re-fits tell apart.
    pub(super) fn has_upright_feet(&self) -> bool {
        self.model.edges.iter().any(|e| e.fixed && e.is_foot() && e.facing.is_some())
    }

    /// Re-fits `best` from its own pose with the heights of the upright faces
    /// started across their range ([`HEIGHT_STARTS`]), and from starts shifted
    /// along the board (`y`, [`SHIFTS_MM`]) with the construction at nominal,
    /// returning those that pass every check on their own. A re-fit
    /// that meets, after the wide stages, a fit the search refined already
    /// (`seen`) or another re-fit is not refined again ([`Locator::refine_fits`]):
    /// it would end where that one did; nor is one that cannot take the lead from
    /// `best` (fitted with the construction `cons`: [`Locator::cannot_lead`]).
    pub(super) fn shifted_refits(&mut self, cam: &Camera, (best, cons): (&CameraPose, &[f64]), seen: &mut StartsSeen) -> Vec<Refined> {
        if !self.has_upright_feet() {
            return Vec::new();
        }
        let mut starts = self.height_starts(best);
        for &s in &SHIFTS_MM {
            // Board point X is imaged where `best` images X + delta, delta = (0, s, 0).
            let r = best.rotation;
            let t = best.translation;
            let start = CameraPose { rotation: r, translation: [0, 1, 2].map(|i| t[i] + r[i][1] * s) };
            starts.push(Fit::start(start, &self.model));
        }
        let refits = self.refine_fits(cam, &starts, seen, Some((best, cons)));
        refits.into_iter().filter(|r| self.check(r).is_ok()).collect()
    }

    /// Fits started at `pose` with the heights of the upright faces (walls, partitions, a gate bar) across their
    /// range ([`HEIGHT_STARTS`]), all heights together, the rest of the construction at nominal.
    pub(super) fn height_starts(&self, pose: &CameraPose) -> Vec<Fit> {
        let heights: Vec<usize> = (0..self.model.params.len()).filter(|k| self.model.edges.iter().any(|e| e.face_param == Some(*k))).collect();
        HEIGHT_STARTS
            .iter()
            .map(|&f| {
                let mut start = Fit::start(*pose, &self.model);
                for &k in &heights {
                    let p = &self.model.params[k];
                    start.cons[k] = f * if f > 0.0 { p.max_mm - p.nominal_mm } else { p.nominal_mm - p.min_mm };
                }
                clamp_construction(&self.model.params, &mut start.cons);
                start
            })
            .collect()
    }

    /// Re-fits of a reading whose sides have a band of something other than the surface just inside them (the
    /// surface-inside check failed): the sides were read on an outline of the construction further out, and the
    /// board seems nearer than it is, while its lines, holes or openings (`identified_at`: where they confirm it,
    /// image px) are matched. The starts move the camera away along its line of sight to the board point seen
    /// there (without one, to the middle of the board in view) by each of [`INWARD_SCALES`], the construction at
    /// nominal: the lines stay put while the sides move in. Those that pass every check on their own are
    /// returned. Only tried when no reading passes: it costs a re-fit a scale.
    pub(super) fn inward_refits(&mut self, cam: &Camera, pose: &CameraPose, identified_at: Option<[f64; 2]>, seen: &mut StartsSeen) -> Vec<Refined> {
        let (w, h) = (cam.image_width as f64, cam.image_height as f64);
        let on_board = identified_at.and_then(|p| pose.back_project(cam, PixelPoint::new(p[0], p[1]), 0.0));
        let anchor = match on_board {
            Some(b) => [b.x_mm, b.y_mm, 0.0],
            None => {
                let in_view: Vec<[f64; 3]> = self
                    .probe_points
                    .iter()
                    .filter(|p| project(cam, pose.to_camera(BoardPoint3::new(p[0], p[1], p[2]))).is_some_and(|q| inside(q, w, h)))
                    .copied()
                    .collect();
                if in_view.is_empty() {
                    return Vec::new();
                }
                let n = in_view.len() as f64;
                in_view.iter().fold([0.0; 3], |a, p| [a[0] + p[0] / n, a[1] + p[1] / n, a[2] + p[2] / n])
            }
        };
        let c = pose.to_camera(BoardPoint3::new(anchor[0], anchor[1], anchor[2]));
        let t = pose.translation;
        let starts: Vec<Fit> = INWARD_SCALES
            .iter()
            .map(|&k| {
                // The anchor seen in the same direction, k times as far: R X + t' = k (R X + t).
                let moved = [0, 1, 2].map(|i| t[i] + (k - 1.0) * c[i]);
                Fit::start(CameraPose { rotation: pose.rotation, translation: moved }, &self.model)
            })
            .collect();
        let refits = self.refine_fits(cam, &starts, seen, None);
        refits.into_iter().filter(|r| self.check(r).is_ok()).collect()
    }

    /// Of the candidates that pass every check, the reading the image supports.
    /// Fits that image the board within [`SAME_POSE_PX`] of each other are one
    /// reading, its construction fitted from different starts: the fit whose
    /// construction explains the most of the board as built stands for it (the
    /// pose reported is another of its fits only where that one confirms the
    /// rules-fixed features clearly better: [`Locator::rules_fixed_fit`]). The
    /// readings are ranked by the same measure (the whole model, the construction
    /// at its fitted size): the score over the rules-fixed features alone is
    /// matched as well by a pose shifted along the board with its heights changed
    /// (own scenes 18 and 24 and varied 18: the true reading explains 1.5-2.4
    /// times the whole model the shifted one does, with a rules-fixed score up to
    /// 12 % lower). A different pose whose image evidence clearly contains what the
    /// leader explains and more (the edge points only it explains outnumber those
    /// only the leader explains by [`DOMINANCE_FACTOR`]) takes the lead all the
    /// same. Then a different pose that scores nearly as well on the rules-fixed
    /// features, on them alone and on the whole model, and is not clearly
    /// dominated makes the view ambiguous.
    pub(super) fn choose(&self, cam: &Camera, good: Vec<Refined>) -> Result<Refined, LocateError> {
        let mut by_whole = good;
        by_whole.sort_by(|a, b| b.whole_score.total_cmp(&a.whole_score));
        // Each reading's fits, the one explaining the most of the board as built first: it stands for the reading.
        let mut readings: Vec<Vec<Refined>> = Vec::new();
        for r in by_whole {
            match readings.iter_mut().find(|fits| self.image_distance(cam, &fits[0].pose, &r.pose) <= SAME_POSE_PX) {
                Some(fits) => fits.push(r),
                None => readings.push(vec![r]),
            }
        }
        let mut lead = 0;
        for i in 1..readings.len() {
            let (leader, other) = (&readings[lead][0], &readings[i][0]);
            if self.image_distance(cam, &leader.pose, &other.pose) <= DIFFERENT_POSE_PX {
                continue;
            }
            let (lead_only, other_only) = evidence_difference(&leader.evidence, &other.evidence);
            let dominates = other_only >= DOMINANCE_MIN_SAMPLES && other_only as f64 >= DOMINANCE_FACTOR * lead_only as f64;
            if dominates || self.cfg.ambiguity_ratio * other.whole_score > leader.whole_score {
                lead = i;
            }
        }
        let (mut best, displaced) = Self::rules_fixed_fit(readings.swap_remove(lead));
        let mut good: Vec<Refined> = readings.into_iter().map(|mut fits| fits.swap_remove(0)).chain(displaced).collect();
        // The same reading's other fits (different starts, poorer optima) pass every check too: the pose is known
        // no better than they disagree.
        let spread = good
            .iter()
            .filter(|r| self.image_distance(cam, &best.pose, &r.pose) <= DIFFERENT_POSE_PX)
            .map(|r| self.board_disagreement_mm(cam, &best.pose, &r.pose))
            .fold(0.0f64, f64::max);
        best.sigma_mm = best.sigma_mm.max(spread / OPTIMA_SPREAD_SIGMAS);
        // A different pose that also passes and scores nearly as well: refuse rather than guess.
        // A rival whose support is (nearly) a subset of the best's explains nothing
        // the best does not: a poorer fit of part of the image, not another reading.
        good.sort_by(|a, b| b.score.total_cmp(&a.score));
        for second in good.iter().filter(|r| self.image_distance(cam, &best.pose, &r.pose) > DIFFERENT_POSE_PX) {
            let (best_only, second_only) = evidence_difference(&best.evidence, &second.evidence);
            let dominated = best_only >= DOMINANCE_MIN_SAMPLES && best_only as f64 >= DOMINANCE_FACTOR * second_only as f64;
            let close = |a: f64, b: f64| a >= self.cfg.ambiguity_ratio * b;
            if !dominated && close(second.score, best.score) && close(second.fixed_score, best.fixed_score) && close(second.whole_score, best.whole_score) {
                return Err(LocateError::Ambiguous {
                    best: best.score,
                    second: second.score,
                    hint: "the visible part of the board looks the same both ways round; include an end or a distinguishing line".into(),
                });
            }
        }
        Ok(best)
    }

    /// Of one reading's fits (within [`SAME_POSE_PX`] of each other, the one explaining the most of the board as
    /// built first), the fit reported: the first, unless another's rules-fixed features confirm on at least
    /// [`BENDING_GAIN`] more of their samples, then the one that confirms them best; and the first, where it was
    /// passed over (its disagreement then widens the pose's sigma). The construction's free dimensions help choose
    /// the reading, never overrule the rules-fixed features within it: external sj_01, a pale sjoelbak, has two fits
    /// 2.7 px apart, one taking 145 mm walls (the range's end) and explaining 18 % more of the whole model with its
    /// far end confirmed on half its samples, the other, 0.5 px from the truth, confirming the rules-fixed features
    /// on 96 % of their samples against 85 %; on the other fixtures and renders, two fits of one reading differ by
    /// under 1.5 points.
    fn rules_fixed_fit(mut fits: Vec<Refined>) -> (Refined, Option<Refined>) {
        let first = fits[0].fixed_share(None);
        let better = (1..fits.len())
            .map(|k| (k, fits[k].fixed_share(None)))
            .filter(|(_, share)| *share >= first + BENDING_GAIN)
            .max_by(|a, b| a.1.total_cmp(&b.1))
            .map(|(k, _)| k);
        match better {
            Some(k) => {
                let chosen = fits.swap_remove(k);
                (chosen, Some(fits.swap_remove(0)))
            }
            None => (fits.swap_remove(0), None),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fit whose rules-fixed features confirm on `inliers` of 100 samples each (a side and an end), and whose
    /// whole model (a wall top of free height) explains `whole`.
    fn fit(inliers: [usize; 2], whole: f64) -> Refined {
        let feature = |name: &str, inliers: usize, fixed: bool| FeatureFit { feature: name.into(), samples: 100, inliers, rms_px: 0.3, fixed };
        let features = vec![feature("side +x", inliers[0], true), feature("far end", inliers[1], true), feature("side +x wall top", 90, false)];
        let pose = CameraPose { rotation: [[1.0, 0.0, 0.0], [0.0, -1.0, 0.0], [0.0, 0.0, -1.0]], translation: [0.0, 0.0, 2000.0] };
        Refined {
            pose,
            construction: vec![0.0],
            polarity: vec![0.0; 3],
            score: whole,
            fixed_score: whole,
            whole_score: whole,
            coverage: 1.0,
            rms_px: 0.3,
            inliers: inliers[0] + inliers[1] + 90,
            sigma_mm: 0.5,
            conditioning_sigma_mm: 0.5,
            features,
            phantom_line_mm: None,
            unconfirmed: None,
            sides_outside_surface: false,
            foot_without_top: None,
            identified_at: None,
            evidence: Vec::new(),
        }
    }

    /// Within one reading, a fit whose free construction explains more of the whole model does not overrule one
    /// that confirms the rules-fixed features clearly better; a difference of a point or so leaves the first.
    #[test]
    fn within_a_reading_the_rules_fixed_features_decide_the_fit() {
        // The whole model's favourite reads the far end on half its samples; the other confirms it all along.
        let (chosen, displaced) = Locator::rules_fixed_fit(vec![fit([100, 50], 1175.0), fit([98, 95], 995.0)]);
        assert!((chosen.whole_score - 995.0).abs() < 1e-9, "chose the fit explaining {}", chosen.whole_score);
        assert!(displaced.is_some_and(|d| (d.whole_score - 1175.0).abs() < 1e-9), "the passed-over fit widens the sigma");
        // Two points better (under BENDING_GAIN): the fit explaining the most of the board stands.
        let (chosen, displaced) = Locator::rules_fixed_fit(vec![fit([95, 90], 1175.0), fit([97, 92], 995.0)]);
        assert!((chosen.whole_score - 1175.0).abs() < 1e-9 && displaced.is_none());
        // A reading of one fit is that fit.
        let (chosen, displaced) = Locator::rules_fixed_fit(vec![fit([60, 50], 700.0)]);
        assert!((chosen.whole_score - 700.0).abs() < 1e-9 && displaced.is_none());
    }
}
