//! An oriented edge map: for every pixel, which edge directions lie within reach, so that a hypothesis's sample is tested with one byte.
//!
//! Scoring a pose hypothesis asks of each of its model samples whether an image
//! edge of about the sample's direction lies within [`SCORE_REACH_PX`] along its
//! normal. [`Gradients::search`] answers that exactly but reads a dozen
//! bilinear lookups in a frame-sized array, which made the hypothesis search
//! memory-bound (about 0.5 us a sample, a million samples a frame). Here the
//! edges are found once per frame (the strongest channel's gradient, thinned
//! across the edge as Canny does, without its hysteresis), and each edge pixel
//! marks, in the pixels within reach of it, the bit of its own direction and of
//! the two neighbouring directions: a sample then costs one byte and one bit.
//! It ranks hypotheses; the ones worth it are then scored exactly.

use super::*;

/// Edge directions (of the normal, modulo half a turn) are told apart in this
/// many bins of 22.5 degrees; a sample accepts its own bin and both neighbours,
/// so an edge within 22.5-45 degrees of the model's direction counts, as a
/// gradient's projection on the sample's normal does in the exact search
/// (where a strong edge counts up to ~70 degrees off: this map is the stricter).
pub(super) const DIRECTION_BINS: usize = 8;

/// Pixels marked around an edge pixel: those whose centres lie within the
/// reach, plus half a pixel for the rounding of the sample's position.
const MARK_RADIUS_PX: f64 = SCORE_REACH_PX + 0.5;

#[derive(Default)]
pub(super) struct EdgeMap {
    w: usize,
    h: usize,
    bits: Vec<u8>,
    /// Scratch: the strongest channel's squared gradient, raw Sobel units.
    mag2: Vec<u32>,
}

/// The channel of largest gradient at a pixel: its squared magnitude and components, raw Sobel units.
fn strongest(g: &[i16; 6]) -> (u32, i32, i32) {
    let mut best = (0u32, 0i32, 0i32);
    for c in 0..3 {
        let (x, y) = (g[2 * c] as i32, g[2 * c + 1] as i32);
        let m = (x * x + y * y) as u32;
        if m > best.0 {
            best = (m, x, y);
        }
    }
    best
}

/// The direction bin of a normal (or gradient) `(x, y)`, modulo half a turn.
fn direction_bin(x: f64, y: f64) -> usize {
    let a = y.atan2(x).rem_euclid(std::f64::consts::PI);
    ((a / std::f64::consts::PI * DIRECTION_BINS as f64) as usize).min(DIRECTION_BINS - 1)
}

impl EdgeMap {
    /// Builds the map from the gradients of the current frame.
    pub(super) fn build(&mut self, grad: &Gradients) {
        let (w, h) = (grad.w, grad.h);
        self.w = w;
        self.h = h;
        self.mag2.clear();
        self.mag2.resize(w * h, 0);
        for (m, g) in self.mag2.iter_mut().zip(&grad.g) {
            *m = strongest(g).0;
        }
        // The exact search's threshold in raw Sobel units, squared.
        let min_raw = EDGE_MIN_GRADIENT / SOBEL_TO_LEVELS;
        let min2 = (min_raw * min_raw) as u32;
        let r = MARK_RADIUS_PX.floor() as isize;
        let disc: Vec<(isize, isize)> =
            (-r..=r).flat_map(|dy| (-r..=r).map(move |dx| (dx, dy))).filter(|&(dx, dy)| ((dx * dx + dy * dy) as f64) <= MARK_RADIUS_PX * MARK_RADIUS_PX).collect();
        self.bits.clear();
        self.bits.resize(w * h, 0);
        for y in 1..h.saturating_sub(1) {
            for x in 1..w.saturating_sub(1) {
                let i = y * w + x;
                let m = self.mag2[i];
                if m < min2 {
                    continue;
                }
                // Thin across the edge: a maximum along the gradient's direction
                // (the nearer of the four pixel directions), as Canny does.
                let (_, gx, gy) = strongest(&grad.g[i]);
                let b = direction_bin(gx as f64, gy as f64);
                let (dx, dy): (isize, isize) = match (b * 4 + DIRECTION_BINS / 2) / DIRECTION_BINS % 4 {
                    0 => (1, 0),
                    1 => (1, 1),
                    2 => (0, 1),
                    _ => (-1, 1),
                };
                let before = self.mag2[(i as isize - dy * w as isize - dx) as usize];
                let after = self.mag2[(i as isize + dy * w as isize + dx) as usize];
                if m < before || m <= after {
                    continue;
                }
                let mark = (1u8 << b) | (1u8 << ((b + 1) % DIRECTION_BINS)) | (1u8 << ((b + DIRECTION_BINS - 1) % DIRECTION_BINS));
                for &(ox, oy) in &disc {
                    let (px, py) = (x as isize + ox, y as isize + oy);
                    if px >= 0 && py >= 0 && (px as usize) < w && (py as usize) < h {
                        self.bits[py as usize * w + px as usize] |= mark;
                    }
                }
            }
        }
    }

    /// Whether an edge of about the direction of the normal whose [`direction_mask`] is `mask` lies within reach of
    /// `p` (the mask taken apart: the samples of one straight edge share their normal, and it costs an arc tangent).
    pub(super) fn hit_mask(&self, p: [f64; 2], mask: u8) -> bool {
        let (x, y) = (p[0].round(), p[1].round());
        if !(x >= 0.0 && y >= 0.0 && (x as usize) < self.w && (y as usize) < self.h) {
            return false;
        }
        self.bits[y as usize * self.w + x as usize] & mask != 0
    }
}

/// The bit of the map's bytes that marks edges of about the direction of normal `n` ([`EdgeMap::hit_mask`]).
pub(super) fn direction_mask(n: [f64; 2]) -> u8 {
    1u8 << direction_bin(n[0], n[1])
}

/// [`direction_mask`] of one sample after another, kept while the normal stays the same: a straight edge's samples
/// all have one (its image is straight), a circle's each its own.
#[derive(Default)]
pub(super) struct MaskOfLast {
    last: Option<([f64; 2], u8)>,
}

impl MaskOfLast {
    pub(super) fn of(&mut self, n: [f64; 2]) -> u8 {
        match self.last {
            // The same two numbers, so the same mask: nothing is rounded or compared within a tolerance.
            Some((m, mask)) if m[0].to_bits() == n[0].to_bits() && m[1].to_bits() == n[1].to_bits() => mask,
            _ => {
                let mask = direction_mask(n);
                self.last = Some((n, mask));
                mask
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    impl EdgeMap {
        fn hit(&self, p: [f64; 2], n: [f64; 2]) -> bool {
            self.hit_mask(p, direction_mask(n))
        }
    }

    /// A vertical step edge: samples on it with a horizontal normal hit within
    /// the reach and not beyond; a sample whose normal runs along the edge misses.
    #[test]
    fn a_step_edge_is_hit_within_reach_in_its_direction() {
        let (w, h) = (40usize, 30usize);
        let mut grad = Gradients::default();
        grad.zero(w, h);
        // A blurred step at x = 20 in the red channel: Sobel x sums peaking there.
        for y in 0..h {
            for (x, v) in [(18usize, 80i16), (19, 240), (20, 400), (21, 240), (22, 80)] {
                grad.g[y * w + x][4] = v;
            }
        }
        let mut map = EdgeMap::default();
        map.build(&grad);
        let n = [1.0, 0.0];
        assert!(map.hit([20.0, 15.0], n));
        assert!(map.hit([20.0 + SCORE_REACH_PX, 15.0], n));
        assert!(map.hit([20.0 - SCORE_REACH_PX, 15.0], n));
        assert!(!map.hit([20.0 + SCORE_REACH_PX + 1.5, 15.0], n));
        assert!(!map.hit([20.0, 15.0], [0.0, 1.0]), "an edge across the sample's normal is no match");
        // 20 degrees off still matches; the sign of the normal does not matter.
        let a = 20f64.to_radians();
        assert!(map.hit([20.0, 15.0], [-a.cos(), -a.sin()]));
    }
}
