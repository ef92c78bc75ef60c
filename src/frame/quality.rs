//! Whether a frame can be read honestly at all: too dark, washed out, without colour where teams are told by colour,
//! a partial decode filled with one colour, or far out of focus. Such a frame is refused with the reason, never scored.
//!
//! The measures are cheap image statistics over a sampling lattice of the whole frame; each threshold is set far from
//! where any usable frame lies (the fixtures, the external renders and the real photos of the test set are all well
//! inside), so only frames nobody could score are refused.

use super::{cv, Frame, FrameError};
use opencv::prelude::*;
use serde::Serialize;

/// Every `SAMPLE_STEP`-th pixel of every `SAMPLE_STEP`-th row is measured: 1/16 of a frame, 130,000 samples of a
/// 1080p one, enough for stable percentiles (against every second pixel of every second row, the measures of the
/// five bench frames, varied fixture 31 and the 8 real photos moved by at most 2 grey levels, 0.02 % of the pixels
/// and 4 levels of sharpness, all far from a threshold), in 43 % of the instructions with the tear check (BENCHMARKS.md,
/// twenty-ninth session).
const SAMPLE_STEP: usize = 4;
/// Too dark: 99 % of the frame below this grey level (of 255). A dim but usable frame still has its lit surface and
/// lines well above it; a lens cap or a dark room has almost nothing.
const DARK_P99_LEVEL: u8 = 24;
/// Washed out: more than this fraction of the frame clipped white in every channel. Glare on a varnished board clips a
/// few percent; a frame more than half white has lost the lines and pieces.
const CLIPPED_FRACTION: f64 = 0.5;
/// A channel value at or above this is clipped.
const CLIPPED_LEVEL: u8 = 250;
/// A pixel has colour when its channels spread by more than this (of 255): JPEG chroma noise of a grey scene stays
/// under ~6, a pale piece or a tinted board is well over.
const CHROMA_LEVEL: u8 = 14;
/// No colour: fewer than this fraction of the frame's pixels have colour (a monochrome camera, a grey-scale file). A
/// board's pieces alone cover far more than this of any frame that shows them.
const MIN_COLOUR_FRACTION: f64 = 0.0005;
/// A partial decode: at least this many full rows at the bottom of exactly one colour that is neither black (letterbox
/// bars) nor clipped white. Sensor noise makes a natural image's rows never exactly uniform.
const FILL_MIN_ROWS: usize = 8;
/// Far out of focus: the 99.5th percentile of the 4-neighbour Laplacian's magnitude (grey levels) below this. Every
/// board has painted lines, rims or walls whose edges in a focused frame give tens of levels; a lens far out of focus
/// spreads each edge over many pixels and brings it to a few.
const MIN_SHARPNESS: f64 = 6.0;

/// What the frame's statistics say.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Quality {
    /// 99th percentile of the grey level.
    pub p99_level: u8,
    /// Fraction of pixels clipped white.
    pub clipped_fraction: f64,
    /// Fraction of pixels with colour.
    pub colour_fraction: f64,
    /// Rows at the bottom filled with one colour.
    pub fill_rows: usize,
    /// 99.5th percentile of |Laplacian|, grey levels.
    pub sharpness: f64,
    /// The largest fraction of a row of 8x8 JPEG blocks' boundary across which the colour steps abruptly (a step that
    /// the rows on either side do not share): a damaged JPEG stream whose codes still decode shifts the colour of
    /// every block after the damage, which tears the picture along block boundaries.
    pub block_tear: f64,
}

impl Quality {
    /// Measures a frame.
    pub fn measure(frame: &Frame) -> Result<Quality, FrameError> {
        let img = frame.image();
        let (w, h) = (img.cols() as usize, img.rows() as usize);
        let data = cv("frame bytes", img.data_bytes())?;
        let step = cv("frame step", img.step1_def()).map(|s| s * img.elem_size1())?;
        let rows = Rows { data, step, w, h };
        let mut hist = [0u64; 256];
        let (mut clipped, mut coloured, mut n) = (0u64, 0u64, 0u64);
        let mut lap_hist = vec![0u64; 4 * 255 + 1];
        for y in (0..h).step_by(SAMPLE_STEP) {
            let row = rows.row(y);
            // The Laplacian needs the rows above and below; the frame's first and last rows have none.
            let around = (y > 0 && y + 1 < h).then(|| (rows.row(y - 1), rows.row(y + 1)));
            for x in (0..w).step_by(SAMPLE_STEP) {
                let p = &row[3 * x..3 * x + 3];
                let g = grey(p);
                hist[g as usize] += 1;
                let (lo, hi) = (p[0].min(p[1]).min(p[2]), p[0].max(p[1]).max(p[2]));
                clipped += u64::from(lo >= CLIPPED_LEVEL);
                coloured += u64::from(hi - lo > CHROMA_LEVEL);
                n += 1;
                if let Some((above, below)) = around.filter(|_| x > 0 && x + 1 < w) {
                    let at = |r: &[u8], x: usize| i32::from(grey(&r[3 * x..3 * x + 3]));
                    let lap = 4 * i32::from(g) - at(row, x - 1) - at(row, x + 1) - at(above, x) - at(below, x);
                    lap_hist[lap.unsigned_abs().min(4 * 255) as usize] += 1;
                }
            }
        }
        let percentile = |hist: &[u64], q: f64| -> usize {
            let total: u64 = hist.iter().sum();
            let want = (q * total as f64).ceil() as u64;
            let mut acc = 0;
            for (i, c) in hist.iter().enumerate() {
                acc += c;
                if acc >= want.max(1) {
                    return i;
                }
            }
            hist.len() - 1
        };
        let n = n.max(1) as f64;
        Ok(Quality {
            p99_level: percentile(&hist, 0.99) as u8,
            clipped_fraction: clipped as f64 / n,
            colour_fraction: coloured as f64 / n,
            fill_rows: fill_rows(&rows),
            sharpness: percentile(&lap_hist, 0.995) as f64,
            block_tear: block_tear(&rows),
        })
    }

    /// Why the frame cannot be read honestly (empty when it can). `needs_colour`: the board's teams are told apart
    /// by colour (shuffleboard weights, washers), so a frame without colour cannot be scored.
    pub fn problems(&self, needs_colour: bool) -> Vec<String> {
        let mut out = Vec::new();
        if self.p99_level < DARK_P99_LEVEL {
            out.push(format!("the frame is too dark to read (99 % of it below grey level {})", self.p99_level + 1));
        }
        if self.clipped_fraction > CLIPPED_FRACTION {
            out.push(format!("the frame is washed out ({:.0} % clipped white)", 100.0 * self.clipped_fraction));
        }
        if needs_colour && self.colour_fraction < MIN_COLOUR_FRACTION {
            out.push("the frame has no colour (grey-scale): the teams, told apart by colour, cannot be read".into());
        }
        if self.fill_rows >= FILL_MIN_ROWS {
            out.push(format!("the bottom {} rows are filled with one colour: a partial or damaged decode", self.fill_rows));
        }
        if self.sharpness < MIN_SHARPNESS {
            out.push(format!("the frame is far out of focus (edge sharpness {:.1}, at least {MIN_SHARPNESS} expected)", self.sharpness));
        }
        out
    }

    /// Why the frame, though readable, should be looked at by a person before its score stands (empty when not).
    pub fn doubts(&self) -> Vec<String> {
        let mut out = Vec::new();
        if self.block_tear > TEAR_REVIEW_FRACTION {
            out.push(format!(
                "the picture is torn along JPEG block rows over {:.0} % of its width: a damaged file that still decodes?",
                100.0 * self.block_tear
            ));
        }
        out
    }
}

/// A frame torn over more than this fraction of its width along JPEG block rows needs review (see `block_tear`):
/// undamaged frames measure at most 0.12 (rendered fixtures, external renders, OpenCV's photos) and 0.40 (a real
/// phone photo with a sharp partition edge on a block boundary); fuzzed files whose damage still decodes, 0.75 to 1 in
/// most cases. A review, not a refusal: a scene edge could in principle tear as much.
const TEAR_REVIEW_FRACTION: f64 = 0.6;

/// A step across a block boundary counts as a tear when it exceeds this (sum over the three channels, grey levels)...
const TEAR_STEP_LEVELS: i32 = 24;
/// ... and this many times the steps between the rows beside it (an edge in the scene is blurred over several rows;
/// a tear is a step of one row with flat colour on both sides).
const TEAR_STEP_RATIO: i32 = 3;

/// How torn the picture is along JPEG block rows: the largest fraction of the width torn at one block-row boundary
/// (rows 8k-1 | 8k) or at the next one or two below it, but not at both. A damaged stream shifts the colour of every
/// block from the damage on: the damaged row of blocks tears at its top from the damage to the right edge and at its
/// bottom from the left edge to the damage, so the two tears together span the width. An edge in the scene that
/// happens to lie on a block boundary tears at one boundary only (over its own length), and the two edges of a strip
/// (a partition) over the same columns at both.
fn block_tear(rows: &Rows) -> f64 {
    let (h, w) = (rows.h, rows.w);
    let diff = |a: &[u8], b: &[u8]| -> i32 { (0..3).map(|c| (i32::from(a[c]) - i32::from(b[c])).abs()).sum() };
    let torn: Vec<Vec<bool>> = (8..h.saturating_sub(1))
        .step_by(8)
        .map(|y| {
            let pixels = |r: usize| rows.row(r).chunks_exact(3);
            pixels(y - 2)
                .zip(pixels(y - 1))
                .zip(pixels(y).zip(pixels(y + 1)))
                .map(|((above2, above), (below, below2))| {
                    let step = diff(above, below);
                    step > TEAR_STEP_LEVELS && step > TEAR_STEP_RATIO * (diff(above2, above).max(diff(below, below2)) + 2)
                })
                .collect()
        })
        .collect();
    let mut worst = 0.0f64;
    for (k, top) in torn.iter().enumerate() {
        for bottom in torn.iter().skip(k + 1).take(2) {
            let apart = top.iter().zip(bottom).filter(|(a, b)| a != b).count();
            worst = worst.max(apart as f64 / w.max(1) as f64);
        }
    }
    worst
}

/// Rows at the bottom of one exact colour, other than black and clipped white.
fn fill_rows(rows: &Rows) -> usize {
    let (h, w) = (rows.h, rows.w);
    if h == 0 || w == 0 {
        return 0;
    }
    let last = rows.row(h - 1);
    let fill = &last[..3];
    if fill.iter().all(|&c| c == 0) || fill.iter().all(|&c| c >= CLIPPED_LEVEL) {
        return 0;
    }
    (0..h).rev().take_while(|&y| rows.row(y).chunks_exact(3).all(|p| p == fill)).count()
}

/// A BGR frame's bytes, row by row.
struct Rows<'a> {
    data: &'a [u8],
    /// Bytes from one row's start to the next's.
    step: usize,
    w: usize,
    h: usize,
}

impl Rows<'_> {
    /// Row `y`'s pixels, three bytes each.
    fn row(&self, y: usize) -> &[u8] {
        &self.data[y * self.step..y * self.step + 3 * self.w]
    }
}

/// A BGR pixel's grey level (BT.601 weights in 8-bit fixed point).
#[inline]
fn grey(p: &[u8]) -> u8 {
    ((u32::from(p[0]) * 29 + u32::from(p[1]) * 150 + u32::from(p[2]) * 77) >> 8) as u8
}

#[cfg(test)]
mod tests {
    use super::*;
    use opencv::core::{Mat, Scalar, CV_8UC3};

    fn frame_of(f: impl Fn(usize, usize) -> [u8; 3], w: usize, h: usize) -> Frame {
        let mut m = Mat::new_rows_cols_with_default(h as i32, w as i32, CV_8UC3, Scalar::all(0.0)).unwrap();
        let d = m.data_bytes_mut().unwrap();
        for y in 0..h {
            for x in 0..w {
                d[3 * (y * w + x)..3 * (y * w + x) + 3].copy_from_slice(&f(x, y));
            }
        }
        Frame::from_mat(m).unwrap()
    }

    /// A sharp, coloured test card: grey noise with a red and a blue square and sharp bars.
    fn card(x: usize, y: usize) -> [u8; 3] {
        let noise = ((x * 7919 + y * 104_729) % 23) as u8;
        if (40..80).contains(&x) && (40..80).contains(&y) {
            [30, 30, 200]
        } else if (120..160).contains(&x) && (40..80).contains(&y) {
            [200, 40, 30]
        } else if (x / 8) % 2 == 0 {
            [170 + noise, 170 + noise, 170 + noise]
        } else {
            [60 + noise, 60 + noise, 60 + noise]
        }
    }

    #[test]
    fn a_good_frame_has_no_problem() {
        let q = Quality::measure(&frame_of(card, 200, 120)).unwrap();
        assert!(q.problems(true).is_empty(), "{q:?}: {:?}", q.problems(true));
    }

    #[test]
    fn a_black_frame_is_too_dark() {
        let q = Quality::measure(&frame_of(|_, _| [3, 3, 3], 200, 120)).unwrap();
        assert!(q.problems(false).iter().any(|p| p.contains("too dark")), "{q:?}");
    }

    #[test]
    fn a_white_frame_is_washed_out() {
        let q = Quality::measure(&frame_of(|x, y| if x % 16 < 2 { card(x, y) } else { [255, 255, 255] }, 200, 120)).unwrap();
        assert!(q.problems(false).iter().any(|p| p.contains("washed out")), "{q:?}");
    }

    #[test]
    fn a_grey_frame_has_no_colour_only_where_colour_is_needed() {
        let grey = |x, y| {
            let g = card(x, y)[1];
            [g, g, g]
        };
        let q = Quality::measure(&frame_of(grey, 200, 120)).unwrap();
        assert!(q.problems(true).iter().any(|p| p.contains("no colour")), "{q:?}");
        assert!(q.problems(false).is_empty(), "sjoelen discs are not told by colour: {q:?}");
    }

    #[test]
    fn a_bottom_band_of_one_colour_is_a_partial_decode_but_black_bars_are_not() {
        let filled = |x, y| if y >= 100 { [128, 128, 128] } else { card(x, y) };
        let q = Quality::measure(&frame_of(filled, 200, 120)).unwrap();
        assert_eq!(q.fill_rows, 20);
        assert!(q.problems(true).iter().any(|p| p.contains("partial")), "{q:?}");
        let letterbox = |x, y| if y >= 100 { [0, 0, 0] } else { card(x, y) };
        assert!(Quality::measure(&frame_of(letterbox, 200, 120)).unwrap().problems(true).is_empty());
    }

    #[test]
    fn a_smooth_frame_is_out_of_focus() {
        // Gentle gradients and colour, but no edge anywhere.
        let smooth = |x: usize, y: usize| [(60 + x / 2) as u8, (80 + y / 2) as u8, 150];
        let q = Quality::measure(&frame_of(smooth, 200, 120)).unwrap();
        assert!(q.problems(true).iter().any(|p| p.contains("out of focus")), "{q:?}");
    }

    #[test]
    fn a_colour_shift_from_a_block_on_tears_the_picture_but_an_edge_does_not() {
        // From block (x 96, row 48) on, every block's colour shifted, as a damaged DC code does.
        let base = |x: usize, y: usize| [(60 + x / 2 + (x + 2 * y) % 3) as u8, (80 + y / 2) as u8, 150];
        let shifted = |x: usize, y: usize| {
            let p = base(x, y);
            if (y / 8 > 6) || (y / 8 == 6 && x >= 96) {
                [p[0].saturating_add(40), p[1], p[2].saturating_sub(30)]
            } else {
                p
            }
        };
        let q = Quality::measure(&frame_of(shifted, 200, 120)).unwrap();
        assert!(q.block_tear > TEAR_REVIEW_FRACTION, "{q:?}");
        assert!(!q.doubts().is_empty());
        // A sharp edge in the scene on a block boundary, over half the width: torn there only, not enough for review.
        let edge = |x: usize, y: usize| if y >= 56 && x < 100 { [40, 40, 40] } else { base(x, y) };
        let q = Quality::measure(&frame_of(edge, 200, 120)).unwrap();
        assert!(q.block_tear < TEAR_REVIEW_FRACTION, "{q:?}");
    }
}
