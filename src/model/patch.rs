//! The hole patches the model reads: where each sample of a washer board's hole patches lies in the frame, worked
//! out once per camera pose as bilinear taps, and the normalised patch a frame gives through them.

use super::{MAX_LOG_RATIO, MAX_OUT_OF_FRAME_FRACTION, PATCH_CHANNELS, PATCH_FEATURES, PATCH_LEVELS, PATCH_SIDE, PATCH_SPAN_DIAMETERS, RATIO_FLOOR, REFERENCE_RING_DIAMETERS, SUBSAMPLES};
use crate::board::{Board, Layout, WasherBoard};
use crate::camera::{Camera, CameraPose};
use crate::geom::BoardPoint3;
use crate::measure::{BilinearTap, ColourView};

/// Points read per patch: [`SUBSAMPLES`] x [`SUBSAMPLES`] for each sample of each level.
const TAPS_PER_PATCH: usize = PATCH_LEVELS * PATCH_SIDE * PATCH_SIDE * SUBSAMPLES * SUBSAMPLES;

/// Where every hole's patch is read in a frame of one camera from one pose: the
/// patch's board points projected through the full camera model once, each kept
/// as the bilinear tap of its image (a washer board's patches are 8,192 points a
/// hole, the same every frame of a fixed camera).
#[derive(Debug, Clone)]
pub struct PatchTaps {
    /// Per hole, its patch's taps in the patch's order (level, row, column, then
    /// the sample's points row by row); empty on boards without holes.
    holes: Vec<Vec<BilinearTap>>,
}

impl PatchTaps {
    /// The taps of every hole of `board` (none on other boards), centred on the holes.
    pub fn new(camera: &Camera, pose: &CameraPose, board: &Board) -> PatchTaps {
        let holes = match &board.layout {
            Layout::Washer(w) => (0..w.holes.len()).map(|hole| hole_taps(camera, pose, w, hole, (0.0, 0.0))).collect(),
            _ => Vec::new(),
        };
        PatchTaps { holes }
    }

    /// Hole `hole`'s patch in `frame` (a frame of the camera the taps were made for), as the model's input;
    /// `None` when too much of it is out of the frame.
    ///
    /// # Panics
    /// If `frame` is smaller than the camera's image.
    pub fn patch(&self, frame: &ColourView, w: &WasherBoard, hole: usize) -> Option<Vec<f32>> {
        patch_from(frame, self.holes.get(hole)?, w, hole)
    }
}

/// The rectified patch of hole `hole`, as the model's input, centred `offset`
/// from the hole's centre (zero at run time; training jitters it to cover pose
/// error). `None` when too much of it is out of the frame. The same patch as
/// [`PatchTaps::patch`] reads, its taps made for this one call.
pub fn hole_patch(frame: &ColourView, camera: &Camera, pose: &CameraPose, w: &WasherBoard, hole: usize, offset: (f64, f64)) -> Option<Vec<f32>> {
    if hole >= w.holes.len() {
        return None;
    }
    patch_from(frame, &hole_taps(camera, pose, w, hole, offset), w, hole)
}

/// The taps of hole `hole`'s patch centred `offset` from it: each point's image
/// through the camera model, out of view where it does not project into the
/// frame (a point on its last row or column included).
fn hole_taps(camera: &Camera, pose: &CameraPose, w: &WasherBoard, hole: usize, offset: (f64, f64)) -> Vec<BilinearTap> {
    let h = &w.holes[hole];
    let (cx, cy) = (h.x_mm + offset.0, h.y_mm + offset.1);
    let span = PATCH_SPAN_DIAMETERS * h.diameter_mm;
    let step = span / PATCH_SIDE as f64;
    let levels = [0.0, -w.cup_depth_mm + w.washer_thickness_mm];
    let (width, height) = (camera.image_width as usize, camera.image_height as usize);
    let (fw, fh) = (camera.image_width as f64, camera.image_height as f64);
    let mut taps = Vec::with_capacity(TAPS_PER_PATCH);
    for &z in &levels {
        for row in 0..PATCH_SIDE {
            for col in 0..PATCH_SIDE {
                for sy in 0..SUBSAMPLES {
                    for sx in 0..SUBSAMPLES {
                        let x = cx - span / 2.0 + (col as f64 + (sx as f64 + 0.5) / SUBSAMPLES as f64) * step;
                        let y = cy - span / 2.0 + (row as f64 + (sy as f64 + 0.5) / SUBSAMPLES as f64) * step;
                        let px = pose.project(camera, BoardPoint3::new(x, y, z)).filter(|p| p.u >= 0.0 && p.v >= 0.0 && p.u <= fw - 1.0 && p.v <= fh - 1.0);
                        taps.push(px.map_or(BilinearTap::OUT_OF_VIEW, |p| BilinearTap::new(width, height, p)));
                    }
                }
            }
        }
    }
    taps
}

/// The patch `taps` (one hole's, see [`hole_taps`]) read in `frame`: each sample the mean of its points in view,
/// then every channel divided by the wood round the hole (its median on the surface level's outer samples), as
/// clipped log ratios; `None` when too many samples have no point in view.
fn patch_from(frame: &ColourView, taps: &[BilinearTap], w: &WasherBoard, hole: usize) -> Option<Vec<f32>> {
    let h = w.holes.get(hole)?;
    let span = PATCH_SPAN_DIAMETERS * h.diameter_mm;
    let step = span / PATCH_SIDE as f64;
    let per_sample = SUBSAMPLES * SUBSAMPLES;
    let mut raw = vec![f32::NAN; PATCH_FEATURES];
    let mut missing = 0usize;
    for (s, points) in taps.chunks_exact(per_sample).enumerate() {
        let mut acc = [0.0f32; 3];
        let mut n = 0.0f32;
        for c in points.iter().filter_map(|t| frame.read(t)) {
            for k in 0..3 {
                acc[k] += c[k];
            }
            n += 1.0;
        }
        let i = s * PATCH_CHANNELS;
        if n > 0.0 {
            for k in 0..3 {
                raw[i + k] = acc[k] / n;
            }
        } else {
            missing += 1;
        }
    }
    if missing as f64 > MAX_OUT_OF_FRAME_FRACTION * (PATCH_LEVELS * PATCH_SIDE * PATCH_SIDE) as f64 {
        return None;
    }
    // The wood around the hole, per channel: the surface level's outer samples.
    let mut reference = [0.0f32; 3];
    for (k, r) in reference.iter_mut().enumerate() {
        let mut ring: Vec<f32> = (0..PATCH_SIDE * PATCH_SIDE)
            .filter(|i| {
                let (row, col) = (i / PATCH_SIDE, i % PATCH_SIDE);
                let dx = (col as f64 + 0.5) * step - span / 2.0;
                let dy = (row as f64 + 0.5) * step - span / 2.0;
                dx.hypot(dy) > REFERENCE_RING_DIAMETERS * h.diameter_mm
            })
            .map(|i| raw[i * PATCH_CHANNELS + k])
            .filter(|v| !v.is_nan())
            .collect();
        if ring.is_empty() {
            return None;
        }
        let mid = ring.len() / 2;
        *r = *ring.select_nth_unstable_by(mid, f32::total_cmp).1;
    }
    for (i, v) in raw.iter_mut().enumerate() {
        let k = i % PATCH_CHANNELS;
        // Out of the frame: "like the wood", the least informative value.
        *v = if v.is_nan() { 0.0 } else { ((*v + RATIO_FLOOR) / (reference[k] + RATIO_FLOOR)).ln().clamp(-MAX_LOG_RATIO, MAX_LOG_RATIO) };
    }
    Some(raw)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::ColourView;

    /// Each sample of a hole's patch read through the taps made once is the mean of its points sampled straight
    /// from the frame (projected through the camera model, bilinear) within float rounding, and the patch is
    /// the same from every hole's taps as from one call's.
    #[test]
    fn the_taps_made_once_read_what_projecting_each_point_would() {
        let (ls, bgr) = super::super::tests::rendered_holeyboard();
        let cam = ls.scene.camera.intrinsics;
        let view = ColourView::new(cam.image_width as usize, cam.image_height as usize, &bgr).unwrap();
        let Layout::Washer(w) = &ls.board.layout else { panic!("a washer board") };
        let taps = PatchTaps::new(&cam, &ls.pose, &ls.board);
        assert_eq!(taps.holes.len(), w.holes.len());
        for (hole, h) in w.holes.iter().enumerate() {
            let span = PATCH_SPAN_DIAMETERS * h.diameter_mm;
            let step = span / PATCH_SIDE as f64;
            let levels = [0.0, -w.cup_depth_mm + w.washer_thickness_mm];
            let mut checked = 0;
            for (s, points) in taps.holes[hole].chunks_exact(SUBSAMPLES * SUBSAMPLES).enumerate() {
                let (level, row, col) = (s / (PATCH_SIDE * PATCH_SIDE), s / PATCH_SIDE % PATCH_SIDE, s % PATCH_SIDE);
                let mut direct = Vec::new();
                for sy in 0..SUBSAMPLES {
                    for sx in 0..SUBSAMPLES {
                        let x = h.x_mm - span / 2.0 + (col as f64 + (sx as f64 + 0.5) / SUBSAMPLES as f64) * step;
                        let y = h.y_mm - span / 2.0 + (row as f64 + (sy as f64 + 0.5) / SUBSAMPLES as f64) * step;
                        direct.extend(ls.pose.project(&cam, BoardPoint3::new(x, y, levels[level])).and_then(|p| view.sample(p)));
                    }
                }
                let tapped: Vec<[f32; 3]> = points.iter().filter_map(|t| view.read(t)).collect();
                assert_eq!(tapped.len(), direct.len(), "hole {hole} sample {s}");
                for (a, b) in tapped.iter().zip(&direct) {
                    // Both are one bilinear blend of the same four pixels: equal but for float rounding.
                    assert!(a.iter().zip(b).all(|(a, b)| (a - b).abs() < 1e-3), "hole {hole} sample {s}: {a:?} vs {b:?}");
                }
                checked += tapped.len();
            }
            assert!(checked > TAPS_PER_PATCH / 2, "hole {hole}: {checked} points in view");
            let once = taps.patch(&view, w, hole).expect("in view");
            let per_call = hole_patch(&view, &cam, &ls.pose, w, hole, (0.0, 0.0)).expect("in view");
            assert!(once.iter().zip(&per_call).all(|(a, b)| (a - b).abs() < 1e-6));
        }
        assert!(taps.patch(&view, w, w.holes.len()).is_none(), "no such hole");
    }
}
