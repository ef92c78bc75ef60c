//! Colour models of the pieces: classifying colours by a team's HSV class (the
//! class itself is data, [`crate::piece::ColourClass`]), the pale look of
//! sjoelen discs relative to the board, and the HSV conversion the colour grid
//! runs over every cell of every frame.

pub use crate::piece::{ColourClass, TeamColour};
use serde::{Deserialize, Serialize};

impl ColourClass {
    /// Sets each cell of `mask` to 255 where the colour (`h`, `s`, `v`, one
    /// array per component) belongs to the class and to 0 elsewhere: the test
    /// of [`ColourClass::contains`], cell for cell. With the class's hue in
    /// 0..=360 a hue difference lies within one turn and needs no `fmod`, and
    /// the loop runs as vector code.
    pub(super) fn mark(&self, h: &[f32], s: &[f32], v: &[f32], mask: &mut [u8]) {
        let cells = h.iter().zip(s).zip(v).zip(mask);
        if !(0.0..=360.0).contains(&self.hue_deg) {
            for (((h, s), v), m) in cells {
                *m = if self.contains([*h, *s, *v]) { 255 } else { 0 };
            }
            return;
        }
        for (((h, s), v), m) in cells {
            // Both hues in 0..=360: `dh.rem_euclid(360.0)` is `dh`, or `dh + 360`
            // below zero, except at +-360 where it is +-0; the nearer way round
            // (below) is 0 for both.
            let dh = *h - self.hue_deg;
            let dh = if dh < 0.0 { dh + 360.0 } else { dh };
            let dh = dh.min(360.0 - dh);
            let inside = (dh <= self.hue_tolerance_deg) & (*s >= self.min_saturation) & (*s <= self.max_saturation) & (*v >= self.min_value);
            *m = if inside { 255 } else { 0 };
        }
    }

    /// Whether an HSV colour belongs to the class.
    pub fn contains(&self, hsv: [f32; 3]) -> bool {
        let dh = rem_euclid_near(hsv[0] - self.hue_deg, 360.0);
        let dh = dh.min(360.0 - dh);
        dh <= self.hue_tolerance_deg && hsv[1] >= self.min_saturation && hsv[1] <= self.max_saturation && hsv[2] >= self.min_value
    }
}

/// Red caps: hue 0 +- 15 degrees. Lacquered wood sits at 20-40 degrees in every
/// fixture light (measured over the rendered set), so 15 keeps a 5 degree gap;
/// lit caps measure saturation 0.45-0.8, the floor leaves room for glare.
pub const RED: ColourClass =
    ColourClass { hue_deg: 0.0, hue_tolerance_deg: 15.0, min_saturation: 0.35, min_value: 0.12, max_saturation: 1.0 };
/// Blue caps: a wide hue window (blue drifts to cyan in daylight and to purple
/// under tungsten); nothing else on a board is blue. Caps in bright, warm
/// light measure saturation down to 0.33 in the fixtures; the board's dark
/// slate gutters, the only other bluish surface, stay under 0.2.
pub const BLUE: ColourClass =
    ColourClass { hue_deg: 225.0, hue_tolerance_deg: 35.0, min_saturation: 0.25, min_value: 0.10, max_saturation: 1.0 };
/// Pieces told from the board by being paler and brighter than it (sjoelen's
/// light-wood discs on a lacquered board): thresholds relative to the board's
/// median saturation and value in the same frame, so they follow the light.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct PaleClass {
    /// Least paleness, `value / board's value - saturation / board's saturation`.
    pub min_paleness: f32,
    /// Least `value / board's value`.
    pub min_value_ratio: f32,
}

impl PaleClass {
    /// Whether a colour is pale against a board of median saturation `s_med` and value `v_med`.
    pub fn contains(&self, hsv: [f32; 3], s_med: f32, v_med: f32) -> bool {
        let (s, v) = (hsv[1] / s_med.max(f32::EPSILON), hsv[2] / v_med.max(f32::EPSILON));
        v >= self.min_value_ratio && v - s >= self.min_paleness
    }
}

/// Over the twelve sjoelen fixtures' lights, discs measure 0.33-0.76 of the
/// board's saturation and 1.14-1.52 of its value, and their paleness (value
/// ratio minus saturation ratio) is at least 0.37 at the 1st percentile of
/// their pixels; unlit board wood reaches 0.37 only at its 99.9th (glare goes
/// far above: it is told from discs by the outline fit, not by colour).
pub const DISC: PaleClass = PaleClass { min_paleness: 0.3, min_value_ratio: 1.05 };

/// BGR (8-bit) to HSV with hue in degrees and saturation, value in 0..1.
///
/// Written without branches (the three hue candidates are all computed and
/// one is chosen), so that the colour grid's pass over every cell of every
/// frame runs as vector code: a cell's colour decides which candidate, and
/// branching on it mispredicts at every piece's edge and in the sensor noise.
#[inline]
pub fn bgr_to_hsv(bgr: [f32; 3]) -> [f32; 3] {
    let (b, g, r) = (bgr[0] / 255.0, bgr[1] / 255.0, bgr[2] / 255.0);
    let max = r.max(g).max(b);
    let min = r.min(g).min(b);
    let d = max - min;
    // Where red is the largest, |g - b| <= d: the ratio lies in [-1, 1], and
    // its `rem_euclid(6.0)` is itself, or itself + 6 below zero.
    let from_red = (g - b) / d;
    let from_red = if from_red < 0.0 { from_red + 6.0 } else { from_red };
    let (h_red, h_green, h_blue) = (60.0 * from_red, 60.0 * ((b - r) / d + 2.0), 60.0 * ((r - g) / d + 4.0));
    let h = if d <= f32::EPSILON {
        0.0
    } else if max == r {
        h_red
    } else if max == g {
        h_green
    } else {
        h_blue
    };
    let s = if max <= f32::EPSILON { 0.0 } else { d / max };
    [h, s, max]
}

/// [`bgr_to_hsv`] over a grid's cells in place, one array per channel: B, G,
/// R in; H, S, V out.
pub(super) fn bgr_to_hsv_in_place(c0: &mut [f32], c1: &mut [f32], c2: &mut [f32]) {
    for ((x, y), z) in c0.iter_mut().zip(c1.iter_mut()).zip(c2.iter_mut()) {
        [*x, *y, *z] = bgr_to_hsv([*x, *y, *z]);
    }
}

/// `x.rem_euclid(m)` for `m > 0`, bit for bit, without the library's `fmod`
/// where `x` lies within one period of zero (every hue and hue difference):
/// the colour grid classifies every cell of every frame.
#[inline]
fn rem_euclid_near(x: f32, m: f32) -> f32 {
    if (0.0..m).contains(&x) {
        x
    } else if x < 0.0 && x > -m {
        x + m
    } else {
        x.rem_euclid(m)
    }
}


#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hsv_of_primary_colours() {
        let close = |a: [f32; 3], b: [f32; 3]| a.iter().zip(b).all(|(x, y)| (x - y).abs() < 1e-4);
        assert!(close(bgr_to_hsv([0.0, 0.0, 255.0]), [0.0, 1.0, 1.0]));
        assert!(close(bgr_to_hsv([255.0, 0.0, 0.0]), [240.0, 1.0, 1.0]));
        assert!(close(bgr_to_hsv([0.0, 255.0, 0.0]), [120.0, 1.0, 1.0]));
        assert!(close(bgr_to_hsv([128.0, 128.0, 128.0]), [0.0, 0.0, 128.0 / 255.0]));
    }

    /// The branching HSV conversion the branch-free one replaced.
    fn branching_hsv(bgr: [f32; 3]) -> [f32; 3] {
        let (b, g, r) = (bgr[0] / 255.0, bgr[1] / 255.0, bgr[2] / 255.0);
        let max = r.max(g).max(b);
        let min = r.min(g).min(b);
        let d = max - min;
        let h = if d <= f32::EPSILON {
            0.0
        } else if max == r {
            60.0 * ((g - b) / d).rem_euclid(6.0)
        } else if max == g {
            60.0 * ((b - r) / d + 2.0)
        } else {
            60.0 * ((r - g) / d + 4.0)
        };
        let s = if max <= f32::EPSILON { 0.0 } else { d / max };
        [h, s, max]
    }

    /// Bilinear samples are 8-bit levels blended by f32 weights: levels and
    /// fractions of them, over the whole range and at the ties between channels.
    fn sample_levels() -> Vec<f32> {
        let mut v: Vec<f32> = (0..=255).step_by(3).map(|l| l as f32).collect();
        v.extend([0.3, 1.0 / 3.0, 17.25, 17.250002, 99.99, 128.5, 254.75, 254.99998, 255.0]);
        v
    }

    #[test]
    fn branch_free_hsv_is_the_branching_one_bit_for_bit() {
        let levels = sample_levels();
        let (mut h, mut s, mut v) = (Vec::new(), Vec::new(), Vec::new());
        for &b in &levels {
            for &g in &levels {
                for &r in &levels {
                    let want = branching_hsv([b, g, r]);
                    let got = bgr_to_hsv([b, g, r]);
                    assert_eq!(got.map(f32::to_bits), want.map(f32::to_bits), "bgr {b} {g} {r}: {got:?} vs {want:?}");
                    h.push(b);
                    s.push(g);
                    v.push(r);
                }
            }
        }
        // The grid's in-place pass too, and out-of-view cells stay NaN.
        for c in [&mut h, &mut s, &mut v] {
            c.push(f32::NAN);
        }
        let (b, g, r) = (h.clone(), s.clone(), v.clone());
        bgr_to_hsv_in_place(&mut h, &mut s, &mut v);
        for i in 0..b.len() - 1 {
            assert_eq!([h[i], s[i], v[i]].map(f32::to_bits), branching_hsv([b[i], g[i], r[i]]).map(f32::to_bits));
        }
        assert!(h[b.len() - 1].is_nan() && s[b.len() - 1].is_nan() && v[b.len() - 1].is_nan());
    }

    #[test]
    fn class_marks_are_its_contains() {
        // Hues round the whole turn, the ends and the window edges of the classes below.
        let mut hues: Vec<f32> = (0..=3600).map(|k| k as f32 / 10.0).collect();
        hues.extend([f32::NAN, 1e-6, 359.99997, 15.000001, 14.999999, 189.99998, 260.00003]);
        let sv = [0.0, 0.1, 0.25, 0.35, 0.3500001, 0.9, 1.0, f32::NAN];
        let (mut h, mut s, mut v) = (Vec::new(), Vec::new(), Vec::new());
        for &hue in &hues {
            for &sat in &sv {
                for &val in &sv {
                    h.push(hue);
                    s.push(sat);
                    v.push(val);
                }
            }
        }
        let classes = [
            RED,
            BLUE,
            ColourClass { hue_deg: 360.0, ..RED },
            ColourClass { hue_deg: 180.0, hue_tolerance_deg: 180.0, ..BLUE },
            ColourClass { hue_deg: 0.0, hue_tolerance_deg: -0.0, ..RED },
            // Outside 0..=360: the general path.
            ColourClass { hue_deg: -20.0, ..RED },
            ColourClass { hue_deg: 725.0, ..BLUE },
        ];
        for c in classes {
            let mut mask = vec![7u8; h.len()];
            c.mark(&h, &s, &v, &mut mask);
            for i in 0..h.len() {
                let want = if c.contains([h[i], s[i], v[i]]) { 255 } else { 0 };
                assert_eq!(mask[i], want, "{c:?} at hsv {} {} {}", h[i], s[i], v[i]);
            }
        }
    }
}
