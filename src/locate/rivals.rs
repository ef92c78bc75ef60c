//! Choosing between readings of the image: the near readings a board of free-height upright faces allows (re-fits from the best shifted along the board), the image evidence that decides between two readings, and the ambiguity refusal.

use super::*;

/// Shifts of the best reading along the board, mm, from which it is re-fitted
/// with the construction reset to nominal. An upright face of free height
/// (a sjoelbak's walls, partitions, gate bar) seen at a slant lets a pose
/// shifted by about the face's image height fit its top where the truth has the
/// foot, with the heights changed: on the fixtures 13-25 mm along the board. The
/// two readings are separate optima of the fit (the one never drifts into the
/// other), so the search must try both; a start within ~10 mm of either converges to it.
const SHIFTS_MM: [f64; 6] = [-30.0, -20.0, -10.0, 10.0, 20.0, 30.0];

impl Locator {
    /// Whether the board has rules-fixed edges at the foot of an upright face of
    /// free height: the boards whose readings the shifted re-fits tell apart.
    fn has_upright_feet(&self) -> bool {
        self.model.edges.iter().any(|e| e.fixed && e.face_across_mm.is_some_and(|d| d[2] > 0.0) && e.facing.is_some())
    }

    /// Re-fits `best` from starts shifted along the board (`y`) and across it
    /// (`x`), returning those that pass every check on their own.
    pub(super) fn shifted_refits(&mut self, cam: &Camera, best: &CameraPose) -> Vec<Refined> {
        if !self.has_upright_feet() {
            return Vec::new();
        }
        let mut out = Vec::new();
        for axis in [1usize, 0] {
            for &s in &SHIFTS_MM {
                // Board point X is imaged where `best` images X + delta.
                let mut delta = [0.0; 3];
                delta[axis] = s;
                let r = best.rotation;
                let t = best.translation;
                let rd = [0, 1, 2].map(|i| r[i][0] * delta[0] + r[i][1] * delta[1] + r[i][2] * delta[2]);
                let start = CameraPose { rotation: r, translation: [t[0] + rd[0], t[1] + rd[1], t[2] + rd[2]] };
                if let Some(r) = self.fit(cam, Fit::start(start, &self.model), &SEARCH_SCHEDULE_PX, ITERATIONS_PER_RANGE).and_then(|f| self.verdict(cam, f)) {
                    if self.check(&r).is_ok() {
                        out.push(r);
                    }
                }
            }
        }
        out
    }

    /// Of the candidates that pass every check (sorted best score first), the
    /// reading the image supports: a different pose whose image evidence clearly
    /// contains what the leader explains and more (the edge points only it explains
    /// outnumber those only the leader explains by [`DOMINANCE_FACTOR`]) takes the
    /// lead, whatever the scores say (the score counts the rules-fixed features,
    /// which a shifted reading with its heights changed can match as well). Then a
    /// different pose that scores nearly as well and is not clearly dominated makes
    /// the view ambiguous.
    pub(super) fn choose(&self, cam: &Camera, good: Vec<Refined>) -> Result<Refined, LocateError> {
        let mut good = good;
        let mut lead = 0;
        for i in 1..good.len() {
            if self.image_distance(cam, &good[lead].pose, &good[i].pose) <= DIFFERENT_POSE_PX {
                continue;
            }
            let (lead_only, other_only) = evidence_difference(&good[lead].evidence, &good[i].evidence);
            let dominates = other_only >= DOMINANCE_MIN_SAMPLES && other_only as f64 >= DOMINANCE_FACTOR * lead_only as f64;
            if dominates || self.cfg.ambiguity_ratio * good[i].whole_score > good[lead].whole_score {
                lead = i;
            }
        }
        let best = good.swap_remove(lead);
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
}
