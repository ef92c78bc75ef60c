//! Two pieces of one size in one outline: the edge points an outline fit found, split between the two circles of
//! the pieces' known radius that hold the most of them (a disc lying on another, two pieces touching).
//!
//! Every pair of edge points a diameter or less apart lies on two circles of the radius; the circle on which the
//! most points lie (within a tolerance) is the first piece, and the same search over the points it leaves is the
//! second. Deterministic (every pair is tried: an outline fit's 72 probes make at most 2,556 pairs).

use crate::geom::BoardPoint;

/// Pairs of points closer than this fraction of the radius are not used: the circles through them turn with the
/// points' noise.
const MIN_PAIR_SPAN: f64 = 0.3;

/// Two circles of one radius and the edge points on each.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TwoCircles {
    /// The circle holding the most points, and how many it holds.
    pub first: (BoardPoint, usize),
    /// The circle holding the most of the points the first leaves, and how many.
    pub second: (BoardPoint, usize),
}

/// The circle of radius `r` through the most of `points` (within `tol_mm` of its rim) whose centre `allowed`
/// admits, and how many it holds; `None` with fewer than two points.
pub fn best_circle(points: &[BoardPoint], r: f64, tol_mm: f64, allowed: impl Fn(BoardPoint) -> bool) -> Option<(BoardPoint, usize)> {
    let mut best: Option<(BoardPoint, usize)> = None;
    // Within `tol_mm` of the rim, by squared distances (no square root per point and circle).
    let (inner, outer) = ((r - tol_mm).max(0.0).powi(2), (r + tol_mm).powi(2));
    let on_rim = |p: BoardPoint, c: BoardPoint| (inner..=outer).contains(&((p.x_mm - c.x_mm).powi(2) + (p.y_mm - c.y_mm).powi(2)));
    for (i, a) in points.iter().enumerate() {
        for b in &points[i + 1..] {
            let half = a.distance(*b) / 2.0;
            if half < MIN_PAIR_SPAN * r / 2.0 || half > r {
                continue;
            }
            let m = BoardPoint::new((a.x_mm + b.x_mm) / 2.0, (a.y_mm + b.y_mm) / 2.0);
            let h = (r * r - half * half).max(0.0).sqrt();
            // The unit normal to the chord.
            let n = ((a.y_mm - b.y_mm) / (2.0 * half), (b.x_mm - a.x_mm) / (2.0 * half));
            for side in [1.0, -1.0] {
                let c = BoardPoint::new(m.x_mm + side * h * n.0, m.y_mm + side * h * n.1);
                if !allowed(c) {
                    continue;
                }
                let held = points.iter().filter(|p| on_rim(**p, c)).count();
                if best.is_none_or(|(_, k)| held > k) {
                    best = Some((c, held));
                }
            }
        }
    }
    best
}

/// The two circles of radius `r` that hold the most of `points`, their centres at least `min_apart_mm` apart,
/// each holding at least `min_points`; `None` where the points do not make two.
pub fn two_circles(points: &[BoardPoint], r: f64, tol_mm: f64, min_apart_mm: f64, min_points: usize) -> Option<TwoCircles> {
    let first = best_circle(points, r, tol_mm, |_| true).filter(|f| f.1 >= min_points)?;
    let rest: Vec<BoardPoint> = points.iter().copied().filter(|p| (p.distance(first.0) - r).abs() > tol_mm).collect();
    let second = best_circle(&rest, r, tol_mm, |c| c.distance(first.0) >= min_apart_mm).filter(|s| s.1 >= min_points)?;
    Some(TwoCircles { first, second })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Points on the arc of a circle from `from` to `to` degrees, `n` of them, with a small deterministic wobble.
    fn arc(c: BoardPoint, r: f64, from: f64, to: f64, n: usize) -> Vec<BoardPoint> {
        (0..n)
            .map(|k| {
                let t = (from + (to - from) * k as f64 / (n - 1) as f64).to_radians();
                let wobble = 0.1 * ((k * 7919) % 5) as f64 / 4.0 - 0.05;
                BoardPoint::new(c.x_mm + (r + wobble) * t.cos(), c.y_mm + (r + wobble) * t.sin())
            })
            .collect()
    }

    #[test]
    fn a_disc_on_another_splits_into_both() {
        // The upper disc's whole rim but where it is low against the lower (300 degrees), the lower's crescent.
        let (upper, lower, r) = (BoardPoint::new(164.0, 61.0), BoardPoint::new(154.0, 46.0), 15.0);
        let mut pts = arc(upper, r, -80.0, 220.0, 50);
        pts.extend(arc(lower, r, 150.0, 330.0, 20).into_iter().filter(|p| p.distance(upper) > r + 1.0));
        let tc = two_circles(&pts, r, 0.5, 0.3 * r, 8).expect("two circles");
        assert!(tc.first.0.distance(upper) < 0.3, "{:?}", tc.first);
        assert!(tc.second.0.distance(lower) < 0.3, "{:?}", tc.second);
    }

    #[test]
    fn one_outline_is_not_two() {
        let pts = arc(BoardPoint::new(0.0, 0.0), 15.0, 0.0, 355.0, 72);
        assert_eq!(two_circles(&pts, 15.0, 0.5, 4.5, 8), None);
    }
}
