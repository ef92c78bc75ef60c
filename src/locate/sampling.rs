//! Image gradients and the model sampled along its projected edges: where each sample finds its image edge.

use super::*;
use wide::{f32x8, i16x8, i32x8};

// ---------------------------------------------------------------------------
// Image gradients.

/// Colour gradient images as plain arrays (levels per px, one pair per BGR
/// channel), read with bilinear interpolation. Each lookup answers with the
/// channel of strongest response: wood against a grey floor of the same
/// brightness still differs strongly in red. The six planes are interleaved
/// per pixel (`[gx_b, gy_b, gx_g, gy_g, gx_r, gy_r]`): a lookup reads four
/// neighbouring entries instead of four places in each of six planes, which
/// made the pose search memory-bound. They are held as the 3x3 Sobel's raw
/// sums, whole numbers within +-1020 for an 8-bit image: 12 bytes a pixel
/// instead of 24 (the frame-sized array is the largest of the pose search),
/// and each converted to levels per pixel ([`SOBEL_TO_LEVELS`]) exactly.
#[derive(Default)]
pub(super) struct Gradients {
    pub(super) w: usize,
    pub(super) h: usize,
    /// The six planes of each of the `w` x `h` pixels, row by row, and one pixel more, zero.
    pub(super) g: Vec<[i16; 6]>,
}

/// The planes [`Gradients::along_within`] reads from one row, from its pixel's first: the pixel's six, its right
/// neighbour's six, and two more (unused, so that the neighbour's run is eight lanes too).
const RUN_PLANES: usize = 14;

/// A 3x3 Sobel sum is 8 x the per-pixel derivative; multiplying by a power of
/// two is exact, so the levels read are those of a float Sobel scaled by 1/8.
/// (It must stay a power of two: [`Gradients::along`] scales once, after
/// interpolating.)
pub(super) const SOBEL_TO_LEVELS: f32 = 1.0 / 8.0;

/// The widest crease read as one foot, px between its two flanks: the
/// blur's and the Sobel's reach either side of a line a pixel or two wide.
pub(super) const CREASE_MAX_PX: f64 = 4.0;
/// The crease's profile is read every this many px: the gradient of the
/// blurred frame varies smoothly over a pixel, so the opposite flank is found to
/// a pixel and the sign change between two reads a pixel apart is interpolated.
const CREASE_STEP_PX: f64 = 1.0;
/// A crease's second flank is at least this fraction of the first's strength.
pub(super) const CREASE_BALANCE: f32 = 0.5;
/// The mean profile across a faint edge is read this far either side of the model, px.
const MEAN_PROFILE_REACH_PX: f64 = 3.0;
/// A faint edge shows on average when its mean gradient peaks at least this
/// high, levels per px: half the least a single sample counts
/// ([`EDGE_MIN_GRADIENT`]), several times what sensor noise and texture leave in
/// a mean over an edge's samples (well under one level).
const MEAN_EDGE_MIN_GRADIENT: f32 = 0.5 * EDGE_MIN_GRADIENT;
/// The mean profile's reads each side of its middle, and in all.
const MEAN_PROFILE_K: usize = (MEAN_PROFILE_REACH_PX / SEARCH_STEP_PX) as usize;
const MEAN_PROFILE_LEN: usize = 2 * MEAN_PROFILE_K + 1;

/// The longest edge search, in samples each side ([`SEARCH_SCHEDULE_PX`]'s
/// widest range at [`SEARCH_STEP_PX`], plus the peak test's neighbour).
pub(super) const MAX_SEARCH_SAMPLES: usize = 2 * (16.0 / SEARCH_STEP_PX) as usize + 3;

impl Gradients {
    /// Zero gradients for a `w` x `h` frame, ready to be filled, with the pixel past its end that
    /// [`Gradients::along`] reads.
    pub(super) fn zero(&mut self, w: usize, h: usize) {
        self.w = w;
        self.h = h;
        self.g.clear();
        self.g.resize(w * h + 1, [0; 6]);
    }

    /// Whether `p` can be read (its bilinear neighbours are in the image).
    fn holds(&self, p: [f64; 2]) -> bool {
        p[0] >= 0.0 && p[1] >= 0.0 && p[0] < (self.w - 1) as f64 && p[1] < (self.h - 1) as f64
    }

    /// Signed gradient along `n` at `p`, of the channel with the largest magnitude.
    pub(super) fn along(&self, p: [f64; 2], n: [f64; 2]) -> Option<f32> {
        self.holds(p).then(|| self.along_within(p, [n[0] as f32, n[1] as f32]))
    }

    /// [`Gradients::along`] at a point known to be readable ([`Gradients::holds`]),
    /// the normal already in single precision: the edge search's inner loop,
    /// which checks its run's two ends once.
    #[inline]
    fn along_within(&self, p: [f64; 2], [nu, nv]: [f32; 2]) -> f32 {
        // Truncated through i32, exact for any image's coordinates, and far
        // cheaper to convert both ways than usize on x86-64.
        let (iu, iv) = (p[0] as i32, p[1] as i32);
        let (fu, fv) = ((p[0] - iu as f64) as f32, (p[1] - iv as f64) as f32);
        let i = iv as usize * self.w + iu as usize;
        // The pixel and its right neighbour, and the two below them, as two runs of the planes: each neighbour's
        // six and the next two (read but unused, so that each is eight lanes, computed together), one bounds
        // check a row. The array holds a pixel past the frame for the last one's two ([`Gradients::g`]).
        let planes = self.g.as_flattened();
        let (top, bot) = (6 * i, 6 * (i + self.w));
        let (Some(top), Some(bot)) = (planes.get(top..top + RUN_PLANES), planes.get(bot..bot + RUN_PLANES)) else { return 0.0 };
        let lanes = |run: &[i16]| -> f32x8 {
            let run: [i16; 8] = std::array::from_fn(|k| run[k]);
            f32x8::from_i32x8(i32x8::from_i16x8(i16x8::new(run)))
        };
        let (a, b, c, d) = (lanes(&top[..8]), lanes(&top[6..]), lanes(&bot[..8]), lanes(&bot[6..]));
        // Interpolated in the Sobel's raw units and converted to levels once: the factor is a power of two, so
        // every product and sum is the levels' own scaled exactly, and the strongest channel the same. (Each
        // lane's products and sums are rounded as plain f32 arithmetic's, in the same order: no fused multiply-add.)
        let (u0, u1) = (f32x8::splat(1.0 - fu), f32x8::splat(fu));
        let l = ((a * u0 + b * u1) * f32x8::splat(1.0 - fv) + (c * u0 + d * u1) * f32x8::splat(fv)).to_array();
        let mut best = 0.0f32;
        for c in 0..3 {
            let g = l[2 * c] * nu + l[2 * c + 1] * nv;
            if g.abs() > best.abs() {
                best = g;
            }
        }
        best * SOBEL_TO_LEVELS
    }

    /// Asks the processor to fetch the two runs [`Gradients::along_within`] reads at `p` into the cache, without
    /// waiting: a search reads a run of points whose rows are mostly out of the cache (the frame's array is tens of
    /// megabytes), each read waiting on its fetch when made one after the other. A hint only: no value changes.
    #[inline]
    fn prefetch(&self, p: [f64; 2]) {
        #[cfg(target_arch = "x86_64")]
        {
            use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
            let i = p[1] as i32 as usize * self.w + p[0] as i32 as usize;
            let planes = self.g.as_flattened().as_ptr();
            // The pixel's run and the one below it: each run's first and last plane name its one or two cache lines.
            for row in [i, i + self.w] {
                let (first, last) = (planes.wrapping_add(6 * row), planes.wrapping_add(6 * row + RUN_PLANES - 1));
                // SAFETY: a prefetch reads nothing the program sees and never faults, whatever the address (SSE is in
                // every x86-64 processor).
                unsafe {
                    _mm_prefetch::<_MM_HINT_T0>(first.cast());
                    _mm_prefetch::<_MM_HINT_T0>(last.cast());
                }
            }
        }
        // Elsewhere nothing is asked for: the reads wait on their fetches as before.
        #[cfg(not(target_arch = "x86_64"))]
        let _ = p;
    }

    /// The step in brightness across the normal through `p` from `off - reach` to
    /// `off + reach` px along `n` (the gradient summed every pixel), in levels;
    /// `None` where that stretch leaves the image.
    pub(super) fn step_across(&self, p: [f64; 2], n: [f64; 2], off: f64, reach: f64) -> Option<f32> {
        let k = reach.round() as i32;
        let mut sum = 0.0f32;
        for i in -k..=k {
            let o = off + i as f64;
            sum += self.along([p[0] + o * n[0], p[1] + o * n[1]], n)?;
        }
        Some(sum)
    }

    /// The gradient profile across the edge of each of `samples` (of one straight edge): read every
    /// [`SEARCH_STEP_PX`] from `-MEAN_PROFILE_REACH_PX` to `+MEAN_PROFILE_REACH_PX` along the sample's normal about the
    /// point `shift` px along it from the sample (0: the edge itself), for the samples whose whole stretch is in the
    /// image, each given to `each`.
    fn profiles<'a>(&self, samples: impl Iterator<Item = &'a Sample>, shift: impl Fn(&Sample) -> f64, mut each: impl FnMut(&[f32; MEAN_PROFILE_LEN])) {
        for s in samples {
            let mut profile = [0.0f32; MEAN_PROFILE_LEN];
            let at = shift(s);
            let read = profile.iter_mut().enumerate().all(|(i, v)| {
                let o = at + (i as f64 - MEAN_PROFILE_K as f64) * SEARCH_STEP_PX;
                self.along([s.p[0] + o * s.n[0], s.p[1] + o * s.n[1]], s.n).map(|g| *v = g).is_some()
            });
            if read {
                each(&profile);
            }
        }
    }

    /// [`Gradients::profiles`] averaged; `None` where no sample's whole stretch is in the image.
    fn mean_profile<'a>(&self, samples: impl Iterator<Item = &'a Sample>, shift: impl Fn(&Sample) -> f64) -> Option<[f32; MEAN_PROFILE_LEN]> {
        let (mut sum, mut count) = ([0.0f32; MEAN_PROFILE_LEN], 0usize);
        self.profiles(samples, shift, |p| {
            sum.iter_mut().zip(p).for_each(|(a, b)| *a += b);
            count += 1;
        });
        (count > 0).then(|| sum.map(|v| v / count as f32))
    }

    /// [`Gradients::profiles`]' median read by read: a piece lying across a few of the samples (a weight on a
    /// line) moves it no more than the noise does, where its outline's gradient, many times a faint line's, would
    /// take over a mean. `None` where no sample's whole stretch is in the image.
    fn median_profile<'a>(&self, samples: impl Iterator<Item = &'a Sample>, shift: impl Fn(&Sample) -> f64) -> Option<[f32; MEAN_PROFILE_LEN]> {
        let mut all: Vec<[f32; MEAN_PROFILE_LEN]> = Vec::new();
        self.profiles(samples, shift, |p| all.push(*p));
        if all.is_empty() {
            return None;
        }
        let mut column = vec![0.0f32; all.len()];
        Some(std::array::from_fn(|i| {
            column.iter_mut().zip(&all).for_each(|(c, p)| *c = p[i]);
            let mid = column.len() / 2;
            *column.select_nth_unstable_by(mid, f32::total_cmp).1
        }))
    }

    /// Whether `samples` (of one straight edge), their gradient profiles across
    /// the edge averaged, show one edge within [`INLIER_PX`] of the model: the
    /// strongest of the mean profile within [`MEAN_PROFILE_REACH_PX`], at least
    /// [`MEAN_EDGE_MIN_GRADIENT`]. An edge too faint to show sample by sample (a
    /// pale board's end on a pale floor) shows so, where the texture either side
    /// averages out.
    pub(super) fn shows_on_average<'a>(&self, samples: impl Iterator<Item = &'a Sample>) -> bool {
        let Some(mean) = self.mean_profile(samples, |_| 0.0) else { return false };
        let (at, peak) = mean.iter().enumerate().map(|(i, v)| (i, v.abs())).fold((0, 0.0f32), |best, x| if x.1 > best.1 { x } else { best });
        peak >= MEAN_EDGE_MIN_GRADIENT && ((at as f64 - MEAN_PROFILE_K as f64) * SEARCH_STEP_PX).abs() <= INLIER_PX
    }

    /// Where the samples of one edge of a painted line imaged narrower than [`THIN_LINE_PX`] (all on the same side of
    /// it) find their edge on average. A thin line is one crease in the image, not two steps (its flanks' gradients
    /// overlap), so their median profile ([`Gradients::median_profile`]: a piece lying on the line moves it no
    /// more than noise) about the line's middle (half [`Sample::line_px`] from the edge) must hold two
    /// flanks of opposite sign within [`CREASE_MAX_PX`] of each other, each at least [`MEAN_EDGE_MIN_GRADIENT`]
    /// (the strongest read, and the strongest of the other sign near it); the sign change between them (anywhere
    /// within [`MEAN_PROFILE_REACH_PX`]) is the line's middle, and the edge lies half the width from it. A
    /// line too faint to show sample by sample (a whole table at several mm a pixel, the line a pixel wide and of a
    /// few levels' contrast) shows so; wood grain runs along a board, across its lines. Returns the edge's offset (px
    /// along the samples' normals) from where they lie, and the median flank on the edge's side (its signed strength),
    /// as one sample's search gives them ([`super::Locator::edge_of`]); `None` where the profile shows no crease.
    pub(super) fn thin_line_on_average<'a>(&self, samples: impl Iterator<Item = &'a Sample>) -> Option<(f64, f32)> {
        let mut line_px = 0.0;
        let profile = self.median_profile(samples.inspect(|s| line_px = s.line_px), |s| 0.5 * s.line_px)?;
        let k = MEAN_PROFILE_K;
        // The strongest read is one flank; the other, of the opposite sign, the strongest within a crease's width of
        // it (the line's width and the blur's either side: CREASE_MAX_PX).
        let strongest = |reads: std::ops::Range<usize>, sign: f32| reads.filter(|&i| profile[i] * sign > 0.0).max_by(|&a, &b| profile[a].abs().total_cmp(&profile[b].abs()));
        let first = (0..MEAN_PROFILE_LEN).filter(|&i| profile[i] != 0.0).max_by(|&a, &b| profile[a].abs().total_cmp(&profile[b].abs()))?;
        let width = (CREASE_MAX_PX / SEARCH_STEP_PX) as usize;
        let second = strongest(first.saturating_sub(width)..(first + width + 1).min(MEAN_PROFILE_LEN), -profile[first].signum())?;
        let (i, j) = (first.min(second), first.max(second));
        let (a, b) = (profile[i], profile[j]);
        if a.abs() < MEAN_EDGE_MIN_GRADIENT || b.abs() < MEAN_EDGE_MIN_GRADIENT {
            return None;
        }
        // The sign change between the flanks, interpolated between the two reads it lies between: the line's middle,
        // read about the samples' own middle (half the width along each normal), so that the edge lies as far off.
        let m = (i..j).find(|&m| profile[m].signum() != profile[m + 1].signum() || profile[m + 1] == 0.0)?;
        let at = m as f64 + (profile[m] / (profile[m] - profile[m + 1])) as f64;
        // The edge lies on the middle's side its partner does not: before it (the lower reads) when the line's
        // other edge lies ahead along the normal.
        Some(((at - k as f64) * SEARCH_STEP_PX, if line_px > 0.0 { a } else { b }))
    }

    /// Where the edge found at `off` (signed strength `g`) lies if it is one flank
    /// of a crease: an upright face's foot, where the surface meets the face, is
    /// often darkest right in the corner (the light the corner's two sides shade
    /// from each other), so that the image shows a thin dark line with the foot at
    /// its middle, not a step. Then a flank of the opposite sign and comparable
    /// strength lies within [`CREASE_MAX_PX`] and the foot is where the gradient
    /// changes sign between the two. `off` itself otherwise.
    pub(super) fn crease_centre(&self, p: [f64; 2], n: [f64; 2], off: f64, g: f32) -> f64 {
        const K: usize = (CREASE_MAX_PX / CREASE_STEP_PX) as usize;
        // The gradient from `off - CREASE_MAX_PX` to `off + CREASE_MAX_PX` (and a neighbour
        // each way), signed so that the flank found is positive; `None` off the image.
        let mut v = [0.0f32; 2 * K + 3];
        for (i, slot) in v.iter_mut().enumerate() {
            let o = off + (i as f64 - (K + 1) as f64) * CREASE_STEP_PX;
            let Some(x) = self.along([p[0] + o * n[0], p[1] + o * n[1]], n) else { return off };
            *slot = x * g.signum();
        }
        let centre = K + 1;
        // The nearest opposite flank: a local minimum of the signed gradient, nearly as strong.
        let Some(j) = (1..v.len() - 1).filter(|&i| i != centre && v[i] <= v[i - 1] && v[i] <= v[i + 1] && -v[i] >= CREASE_BALANCE * g.abs()).min_by_key(|&i| i.abs_diff(centre)) else {
            return off;
        };
        // The sign change between the two flanks, interpolated.
        let dir: isize = if j > centre { 1 } else { -1 };
        let mut i = centre;
        while i != j {
            let k = i.wrapping_add_signed(dir);
            let (a, b) = (v[i], v[k]);
            if a > 0.0 && b <= 0.0 {
                let at = i as f64 + dir as f64 * (a / (a - b)) as f64;
                return off + (at - centre as f64) * CREASE_STEP_PX;
            }
            i = k;
        }
        off
    }

    /// The image edge along the normal through `p`: offset (px, along `n`) and
    /// signed strength. `polarity` 0 accepts either sign.
    pub(super) fn search(&self, p: [f64; 2], n: [f64; 2], range: f64, polarity: f32) -> Option<(f64, f32)> {
        self.search_in(p, n, (-range, range), polarity)
    }

    /// [`Gradients::search`] over the offsets `lo..=hi` along `n` only, px.
    pub(super) fn search_in(&self, p: [f64; 2], n: [f64; 2], window: (f64, f64), polarity: f32) -> Option<(f64, f32)> {
        self.search_stepped(p, n, window, polarity, SEARCH_STEP_PX)
    }

    /// [`Gradients::search_in`] reading the gradient every `step` px along the
    /// normal (at least [`SEARCH_STEP_PX`]); the peak is refined by a parabola
    /// through its neighbours either way.
    pub(super) fn search_stepped(&self, p: [f64; 2], n: [f64; 2], (lo, hi): (f64, f64), polarity: f32, step: f64) -> Option<(f64, f32)> {
        let step = step.max(SEARCH_STEP_PX);
        let range = lo.abs().max(hi.abs());
        let k = (range / step).ceil() as i32;
        let len = (2 * k + 3) as usize;
        if len > MAX_SEARCH_SAMPLES {
            return None;
        }
        // The whole reach must lie in the image (it is a straight run: its two
        // ends tell), even where the window is one side of it only.
        let reach = (k + 1) as f64 * step;
        if !self.holds([p[0] - reach * n[0], p[1] - reach * n[1]]) || !self.holds([p[0] + reach * n[0], p[1] + reach * n[1]]) {
            return None;
        }
        // Read only where a peak within the window, or its neighbour, can lie. Every
        // point of the run lies between its two ends (rounding is monotonic), so
        // in the image.
        let first = ((lo / step).floor() as i32 - 1).max(-(k + 1));
        let last = ((hi / step).ceil() as i32 + 1).min(k + 1);
        let (j0, j1) = ((first + k + 1) as usize, (last + k + 1) as usize);
        let (mut vals, mut raw) = ([0.0f32; MAX_SEARCH_SAMPLES], [0.0f32; MAX_SEARCH_SAMPLES]);
        let nf = [n[0] as f32, n[1] as f32];
        // Every read's fetch asked for first, so that they overlap (the reads themselves are independent).
        for i in first..=last {
            let s = i as f64 * step;
            self.prefetch([p[0] + s * n[0], p[1] + s * n[1]]);
        }
        for i in first..=last {
            let j = (i + k + 1) as usize;
            let s = i as f64 * step;
            let g = self.along_within([p[0] + s * n[0], p[1] + s * n[1]], nf);
            raw[j] = g;
            vals[j] = if polarity == 0.0 { g.abs() } else { g * polarity };
        }
        let vals = &vals[..len];
        // A peak needs both neighbours read, and one at the run's first or last
        // read lies outside the window (they are a step beyond it): the reads
        // strictly between them are all there is to test.
        let inner = (j0 + 1).max(1)..=j1.saturating_sub(1).min(len - 2);
        let within = |i: usize| {
            let off = (i as i32 - (k + 1)) as f64 * step;
            off >= lo - 0.5 * step && off <= hi + 0.5 * step
        };
        // The offsets grow with the index: the window's reads are one run, found from its two ends.
        let (mut wa, mut wb) = (*inner.start(), *inner.end());
        while wa <= wb && !within(wa) {
            wa += 1;
        }
        while wb >= wa && !within(wb) {
            wb -= 1;
        }
        let strongest = vals.get(wa..=wb).unwrap_or(&[]).iter().fold(f32::MIN, |m, &v| m.max(v));
        if strongest < EDGE_MIN_GRADIENT {
            return None;
        }
        let mut best: Option<(f64, f32)> = None;
        for i in inner {
            let (a, b, c) = (vals[i - 1], vals[i], vals[i + 1]);
            if b < EDGE_MIN_GRADIENT || b < NEAREST_PEAK_RATIO * strongest || b < a || b < c {
                continue;
            }
            let denom = a - 2.0 * b + c;
            let frac = if denom < 0.0 { (0.5 * (a - c) / denom) as f64 } else { 0.0 };
            let off = ((i as i32 - (k + 1)) as f64 + frac.clamp(-0.5, 0.5)) * step;
            if off < lo || off > hi {
                continue;
            }
            if best.map_or(true, |(o, _)| off.abs() < o.abs()) {
                best = Some((off, raw[i]));
            }
        }
        best
    }
}

// ---------------------------------------------------------------------------
// Sampling the projected model.

#[derive(Debug, Clone, Copy)]
pub(super) struct Sample {
    pub(super) edge: usize,
    /// Where along a segment edge the sample lies (0 at `a`, 1 at `b`, in 3D).
    pub(super) t: f64,
    /// Camera-frame point.
    pub(super) xc: [f64; 3],
    pub(super) p: [f64; 2],
    pub(super) n: [f64; 2],
    /// For an edge of an upright face: where the face's other edge (its top from
    /// a foot, its foot from a top) is imaged, as a signed offset along `n`, px,
    /// at the fitted height. NaN for other edges.
    pub(super) partner_px: f64,
    /// For an edge of a painted line: where the line's other edge is imaged, as a signed offset along `n`, px.
    /// NaN for other edges.
    pub(super) line_px: f64,
}

impl Sample {
    /// The stretch of the normal (offsets from, to; px) in which this sample looks
    /// for its image edge, at most `range` either way. A face's two edges are
    /// the face's image height apart; where that is within the search, the foot
    /// would latch onto the top (or the top onto the foot) whenever its own edge
    /// is faint (a foot in its face's shadow), and the fit would trade the pose
    /// against the face's height. Each looks only on its own side of the midpoint.
    pub(super) fn window(&self, range: f64) -> (f64, f64) {
        let q = self.partner_px;
        if q.is_nan() {
            (-range, range)
        } else if q > 0.0 {
            (-range, range.min(0.5 * q))
        } else {
            (-range.min(-0.5 * q), range)
        }
    }
}

/// The part of the image segment `pa`-`pb` within [`inside`]'s bounds, as
/// parameters `(s0, s1)` along it (0 at `pa`, 1 at `pb`); `None` if none of it is.
pub(super) fn clip_to_image(pa: [f64; 2], pb: [f64; 2], w: f64, h: f64) -> Option<(f64, f64)> {
    let d = [pb[0] - pa[0], pb[1] - pa[1]];
    // Liang-Barsky on s in [0, 1].
    let (mut s0, mut s1) = (0.0f64, 1.0f64);
    let lims = [(-d[0], pa[0] - BORDER_MARGIN_PX), (d[0], w - 1.0 - BORDER_MARGIN_PX - pa[0]), (-d[1], pa[1] - BORDER_MARGIN_PX), (d[1], h - 1.0 - BORDER_MARGIN_PX - pa[1])];
    for (p, q) in lims {
        if p.abs() < 1e-12 {
            if q < 0.0 {
                return None;
            }
        } else {
            let r = q / p;
            if p < 0.0 {
                s0 = s0.max(r);
            } else {
                s1 = s1.min(r);
            }
        }
    }
    (s1 >= s0).then_some((s0, s1))
}

pub(super) fn inside(p: [f64; 2], w: f64, h: f64) -> bool {
    p[0] >= BORDER_MARGIN_PX && p[1] >= BORDER_MARGIN_PX && p[0] <= w - 1.0 - BORDER_MARGIN_PX && p[1] <= h - 1.0 - BORDER_MARGIN_PX
}

/// Points along every model edge, `step` px apart in the image, with their image normals.
/// `cons`: the construction parameters' offsets from nominal, mm (empty: nominal).
pub(super) fn sample_model(model: &BoardModel, pose: &CameraPose, cam: &Camera, step: f64, cons: &[f64], out: &mut Vec<Sample>) {
    sample_visible(model, pose, cam, step, cons, out, Offsets::Across);
}

/// [`sample_model`] with each sample's place and normal only, its partner's and line's offsets left NaN: what
/// ranking and scoring a pose read ([`Sample::partner_px`] and [`Sample::line_px`] cost a projection each).
pub(super) fn sample_places(model: &BoardModel, pose: &CameraPose, cam: &Camera, step: f64, cons: &[f64], out: &mut Vec<Sample>) {
    sample_visible(model, pose, cam, step, cons, out, Offsets::None);
}

/// Whether the samples carry the offsets of the edges across from them (a face's other edge, a painted line's).
#[derive(Clone, Copy, PartialEq)]
enum Offsets {
    Across,
    None,
}

/// The samples of every model edge that the board's own boxes leave in view.
fn sample_visible(model: &BoardModel, pose: &CameraPose, cam: &Camera, step: f64, cons: &[f64], out: &mut Vec<Sample>, offsets: Offsets) {
    out.clear();
    sample_edges(model, pose, cam, step, cons, out, offsets);
    if !model.occluders.is_empty() {
        // Back to board coordinates to test the ray to the camera against the board's own boxes.
        let occlusion = model.occlusion_from(pt(pose.centre()));
        let r = pose.rotation;
        let t = pose.translation;
        out.retain(|s| {
            let d = sub3(s.xc, t);
            let x = [0, 1, 2].map(|j| r[0][j] * d[0] + r[1][j] * d[1] + r[2][j] * d[2]);
            !occlusion.hides(x)
        });
    }
}

/// The samples of [`sample_model`] before the occlusion test: every edge but
/// those of an upright face turned away from the camera.
fn sample_edges(model: &BoardModel, pose: &CameraPose, cam: &Camera, step: f64, cons: &[f64], out: &mut Vec<Sample>, offsets: Offsets) {
    let (w, h) = (cam.image_width as f64, cam.image_height as f64);
    let eye = pose.centre();
    for (ei, e) in model.edges.iter().enumerate() {
        match e.shape {
            EdgeShape::Segment { a, b } => {
                // An upright face's edge shows only with the camera on the side the face looks to.
                if e.facing.is_some_and(|n| !(n[0] * (eye.x_mm - a.x_mm) + n[1] * (eye.y_mm - a.y_mm) > 0.0)) {
                    continue;
                }
                let (a, b) = BoardModel::segment_at(e, a, b, cons);
                let (mut ac, mut bc) = (pose.to_camera(a), pose.to_camera(b));
                // Clip to the part in front of the camera.
                if ac[2] <= NEAR_MM && bc[2] <= NEAR_MM {
                    continue;
                }
                let clip = |p: [f64; 3], q: [f64; 3]| {
                    let t = (NEAR_MM * 1.01 - p[2]) / (q[2] - p[2]);
                    [p[0] + t * (q[0] - p[0]), p[1] + t * (q[1] - p[1]), p[2] + t * (q[2] - p[2])]
                };
                if ac[2] <= NEAR_MM {
                    ac = clip(ac, bc);
                } else if bc[2] <= NEAR_MM {
                    bc = clip(bc, ac);
                }
                let (Some(pa), Some(pb)) = (project(cam, ac), project(cam, bc)) else { continue };
                let d = [pb[0] - pa[0], pb[1] - pa[1]];
                let len = d[0].hypot(d[1]);
                if len < 1.0 {
                    continue;
                }
                let n = [-d[1] / len, d[0] / len];
                let Some((s0, s1)) = clip_to_image(pa, pb, w, h).filter(|(s0, s1)| s1 > s0) else { continue };
                let count = ((s1 - s0) * len / step).floor() as usize;
                // The unclipped segment in the camera frame, and the step across its face.
                let (a0, b0) = (pose.to_camera(a), pose.to_camera(b));
                let d3 = sub3(b0, a0);
                let face = face_step(model, e, cons);
                for i in 0..=count {
                    let s = s0 + (s1 - s0) * (i as f64 + 0.5) / (count as f64 + 1.0);
                    // Perspective-correct: the 3D parameter of image parameter s.
                    let t = (s / bc[2]) / ((1.0 - s) / ac[2] + s / bc[2]);
                    let xc = [ac[0] + t * (bc[0] - ac[0]), ac[1] + t * (bc[1] - ac[1]), ac[2] + t * (bc[2] - ac[2])];
                    if let Some(p) = project(cam, xc) {
                        if inside(p, w, h) {
                            // The 3D parameter along the unclipped segment.
                            let t3 = dot3(sub3(xc, a0), d3) / dot3(d3, d3).max(1e-12);
                            // Where the edge `d` (board mm) across from this point is imaged: a signed offset along `n`, px.
                            let across_px = |d: [f64; 3]| {
                                let x = [a.x_mm + t3 * (b.x_mm - a.x_mm) + d[0], a.y_mm + t3 * (b.y_mm - a.y_mm) + d[1], a.z_mm + t3 * (b.z_mm - a.z_mm) + d[2]];
                                project(cam, pose.to_camera(BoardPoint3::new(x[0], x[1], x[2]))).map_or(f64::NAN, |q| n[0] * (q[0] - p[0]) + n[1] * (q[1] - p[1]))
                            };
                            // The face's other edge, at the fitted height; the painted line's other edge.
                            let (partner_px, line_px) = if offsets == Offsets::Across { (face.map_or(f64::NAN, across_px), e.line_across_mm.map_or(f64::NAN, across_px)) } else { (f64::NAN, f64::NAN) };
                            out.push(Sample { edge: ei, t: t3, xc, p, n, partner_px, line_px });
                        }
                    }
                }
            }
            EdgeShape::Circle { centre, radius_mm } => {
                let cc = pose.to_camera(centre);
                let Some(pc) = project(cam, cc) else { continue };
                let circumference_px = std::f64::consts::TAU * radius_mm * cam.fx / cc[2];
                let count = ((circumference_px / step).ceil() as usize).clamp(16, 4096);
                for i in 0..count {
                    let th = std::f64::consts::TAU * i as f64 / count as f64;
                    let (s, c) = th.sin_cos();
                    let x = BoardPoint3::new(centre.x_mm + radius_mm * c, centre.y_mm + radius_mm * s, centre.z_mm);
                    let xt = BoardPoint3::new(x.x_mm - 0.5 * s, x.y_mm + 0.5 * c, x.z_mm);
                    let xc = pose.to_camera(x);
                    let (Some(p), Some(q)) = (project(cam, xc), project(cam, pose.to_camera(xt))) else { continue };
                    let d = [q[0] - p[0], q[1] - p[1]];
                    let len = d[0].hypot(d[1]);
                    if len < 1e-9 || !inside(p, w, h) {
                        continue;
                    }
                    let mut n = [-d[1] / len, d[0] / len];
                    // Outward normal, so a dark hole has one polarity all round.
                    if n[0] * (p[0] - pc[0]) + n[1] * (p[1] - pc[1]) < 0.0 {
                        n = [-n[0], -n[1]];
                    }
                    out.push(Sample { edge: ei, t: 0.0, xc, p, n, partner_px: f64::NAN, line_px: f64::NAN });
                }
            }
        }
    }
}

/// The step across edge `e`'s upright face to its other edge, board mm, at the
/// fitted height (`cons`: offsets from nominal); `None` if `e` is no face's edge.
pub(super) fn face_step(model: &BoardModel, e: &ModelEdge, cons: &[f64]) -> Option<[f64; 3]> {
    let across = e.face_across_mm?;
    let Some(k) = e.face_param else { return Some(across) };
    let p = &model.params[k];
    let scale = (p.nominal_mm + cons.get(k).copied().unwrap_or(0.0)) / p.nominal_mm;
    Some(across.map(|v| v * scale))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Gradients of an image that varies across `x` only, as `profile` gives its
    /// intensity (every channel alike), in the Sobel's raw units (8 x levels per px).
    fn across_x(profile: impl Fn(f64) -> f64) -> Gradients {
        let (w, h) = (64usize, 8usize);
        let mut grad = Gradients::default();
        grad.zero(w, h);
        for y in 0..h {
            for x in 0..w {
                let d = (8.0 * (profile(x as f64 + 0.5) - profile(x as f64 - 0.5))).round() as i16;
                grad.g[y * w + x] = [d, 0, d, 0, d, 0];
            }
        }
        grad
    }

    /// [`across_x`] with the profile given row by row (`y`: the row).
    fn across_x_by_row(profile: impl Fn(f64, usize) -> f64) -> Gradients {
        let (w, h) = (64usize, 8usize);
        let mut grad = Gradients::default();
        grad.zero(w, h);
        for y in 0..h {
            for x in 0..w {
                let d = (8.0 * (profile(x as f64 + 0.5, y) - profile(x as f64 - 0.5, y))).round() as i16;
                grad.g[y * w + x] = [d, 0, d, 0, d, 0];
            }
        }
        grad
    }

    fn samples_along_x(x: f64, n: usize) -> Vec<Sample> {
        (0..n).map(|i| Sample { edge: 0, t: 0.0, xc: [0.0, 0.0, 1000.0], p: [x, 1.0 + i as f64 * 0.05], n: [1.0, 0.0], partner_px: f64::NAN, line_px: f64::NAN }).collect()
    }

    /// A foot seen as a thin dark line (the corner darkest): the edge search finds
    /// one flank, the crease its middle, from either flank.
    #[test]
    fn a_crease_is_read_at_its_middle() {
        let x0 = 30.3;
        let grad = across_x(|x| 200.0 - 80.0 * (-(x - x0).powi(2) / (2.0 * 1.2f64.powi(2))).exp());
        let (p, n) = ([28.0, 4.0], [1.0, 0.0]);
        for polarity in [1.0, -1.0] {
            let (off, g) = grad.search(p, n, 6.0, polarity).expect("a flank");
            assert!((p[0] + off - x0).abs() > 0.8, "the flank lies beside the line: {}", p[0] + off);
            let centre = p[0] + grad.crease_centre(p, n, off, g);
            assert!((centre - x0).abs() < 0.15, "crease middle {centre}, line at {x0}");
        }
    }

    /// A plain step has no opposite flank: the edge stays where it was found.
    #[test]
    fn a_step_is_not_a_crease() {
        let x0 = 30.3;
        let grad = across_x(|x| 100.0 + 100.0 / (1.0 + (-(x - x0) / 1.2).exp()));
        let (p, n) = ([28.0, 4.0], [1.0, 0.0]);
        let (off, g) = grad.search(p, n, 6.0, 1.0).expect("the step");
        assert!((grad.crease_centre(p, n, off, g) - off).abs() < 1e-9);
        // (Bilinear reads of a peak pull it a little towards the pixel centres.)
        assert!((p[0] + off - x0).abs() < 0.2, "step found at {}, lies at {x0}", p[0] + off);
    }

    /// A step of 12 levels (3 a pixel at its steepest after the blur, under the
    /// single-sample threshold) shows in the mean profile where it is, not 2 px off,
    /// and a flat stretch shows nothing.
    #[test]
    fn a_faint_edge_shows_on_average() {
        let x0 = 30.3;
        let grad = across_x(|x| 150.0 + 12.0 / (1.0 + (-(x - x0) / 1.0).exp()));
        assert!(grad.search([x0, 4.0], [1.0, 0.0], 2.0, 0.0).is_none(), "too faint for one sample");
        assert!(grad.shows_on_average(samples_along_x(x0, 50).iter()));
        assert!(!grad.shows_on_average(samples_along_x(x0 + 2.0, 50).iter()));
        let flat = across_x(|_| 150.0);
        assert!(!flat.shows_on_average(samples_along_x(x0, 50).iter()));
        assert!(!grad.shows_on_average(std::iter::empty()));
    }

    /// A dark line 1.1 px wide and 6 levels deep, blurred (a whole table's trey line at 5 mm a pixel): each
    /// flank is under the single-sample threshold, and the median profile about the line's middle shows the crease
    /// from either edge's samples, each edge where it lies (the flank on its own side: darkening into the line, then
    /// brightening out of it), also with a strong step (a piece's outline) across 12 of 30. Read 2 px off, the
    /// edge is found 2 px off; a plain step, or nothing, shows no line.
    #[test]
    fn a_faint_thin_line_shows_on_average_as_one_crease() {
        let (x0, width) = (30.3, 1.1);
        let line = |x: f64| 150.0 - 6.0 * (-(x - x0).powi(2) / (2.0 * 1.0f64.powi(2))).exp();
        let grad = across_x(line);
        assert!(grad.search([x0, 4.0], [1.0, 0.0], 3.0, 0.0).is_none(), "too faint for one sample");
        let edge = |x: f64, line_px: f64| samples_along_x(x, 50).into_iter().map(|s| Sample { line_px, ..s }).collect::<Vec<_>>();
        // The near edge (the line's other edge +width along n) and the far one (-width). The profile is read
        // every SEARCH_STEP_PX and its sign change interpolated: within a tenth of a pixel.
        let (near, far) = (x0 - 0.5 * width, x0 + 0.5 * width);
        let (off, g) = grad.thin_line_on_average(edge(near, width).iter()).expect("the near edge");
        assert!(off.abs() < 0.1 && g < 0.0, "near edge: {off:.3} px, flank {g}");
        let (off, g) = grad.thin_line_on_average(edge(far, -width).iter()).expect("the far edge");
        assert!(off.abs() < 0.1 && g > 0.0, "far edge: {off:.3} px, flank {g}");
        let (off, _) = grad.thin_line_on_average(edge(near + 2.0, width).iter()).expect("2 px off the line, within reach");
        assert!((off + 2.0).abs() < 0.1, "read 2 px off: {off:.3} px");
        let step = across_x(|x| 150.0 + 12.0 / (1.0 + (-(x - x0) / 1.0).exp()));
        assert!(step.thin_line_on_average(edge(near, width).iter()).is_none(), "a step is no line");
        assert!(across_x(|_| 150.0).thin_line_on_average(edge(x0, width).iter()).is_none());
        assert!(grad.thin_line_on_average(std::iter::empty()).is_none());
        // A piece's outline (a 60-level step a pixel and a half beside the line) across the first three rows: 12 of
        // 30 samples spread over the rows read it.
        let with_piece = across_x_by_row(|x, y| line(x) + if y < 3 { 60.0 / (1.0 + (-(x - x0 - 1.5) / 0.7).exp()) } else { 0.0 });
        let spread: Vec<Sample> = (0..30).map(|i| Sample { line_px: width, p: [near, 0.2 + 0.25 * i as f64], ..samples_along_x(near, 1)[0] }).collect();
        let (off, _) = with_piece.thin_line_on_average(spread.iter()).expect("the line beside the piece");
        assert!(off.abs() < 0.1, "beside a piece: {off:.3} px");
    }

    /// A bevel's highlight just inside an outline: its inner flank is the nearest
    /// peak and rises, the step across it falls, from the surface to the floor.
    #[test]
    fn the_step_across_a_highlight_is_the_outline_s() {
        let x0 = 30.3;
        let grad = across_x(|x| {
            let edge = 1.0 / (1.0 + (-(x - x0) / 0.7).exp());
            let highlight = 60.0 * (-(x - (x0 - 1.5)).powi(2) / (2.0 * 0.8f64.powi(2))).exp();
            150.0 - 50.0 * edge + highlight
        });
        let (p, n) = ([x0 - 3.0, 4.0], [1.0, 0.0]);
        let (off, g) = grad.search(p, n, 2.0, 0.0).expect("the highlight's inner flank");
        assert!(g > 0.0, "the nearest peak rises: {g}");
        let step = grad.step_across(p, n, off, 4.0).expect("in the image");
        assert!(step < -40.0, "surface to floor: {step}");
    }
}
