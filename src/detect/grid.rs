//! The metric colour grid: board cells at the pieces' top height, projected once
//! per camera pose and sampled per frame, and the mask operations proposals are
//! made of (opening, labelling, a blob's spread, splitting a blob into pieces).

use super::colour::bgr_to_hsv_in_place;
use crate::board::{Board, Layout};
use crate::camera::{Camera, CameraPose};
use crate::geom::{BoardPoint, BoardPoint3, Footprint, PixelPoint};
use crate::measure::{BilinearTap, ColourView};
use image::{GrayImage, Luma};
use imageproc::distance_transform::Norm;
use imageproc::morphology::open;
use imageproc::region_labelling::{connected_components, Connectivity};
use rayon::prelude::*;

/// The colour grid is sampled in square tiles of this many cells a side (see
/// [`Grid::gather`]): 32 cells of 2 mm span ~60-100 pixels on the bench
/// frames, a few hundred cache lines, which stay in the core's cache.
const GATHER_TILE: usize = 32;

/// The candidate grid: board cells at the pieces' top height and where they appear.
pub(super) struct Grid {
    pub x0: f64,
    pub y0: f64,
    pub step: f64,
    pub cols: u32,
    pub rows: u32,
    /// Image position of each cell (row-major); NaN where out of view.
    pub pixels: Vec<[f32; 2]>,
    /// Where each cell's colour is read in a frame of the camera's size (the
    /// bilinear sample at its image position, worked out once per pose).
    taps: Vec<BilinearTap>,
}

impl Grid {
    /// Whether cells (column, row) lie wholly in view: none on the grid's border
    /// or beside a cell out of the camera's view. A blob cut off by either has no
    /// known size: a rail or a cloth running out of view breaks into piece-sized
    /// pieces there.
    pub fn wholly_in_view(&self, cells: &[(f64, f64)]) -> bool {
        let (cols, rows) = (self.cols as i64, self.rows as i64);
        cells.iter().all(|&(c, r)| {
            let (c, r) = (c as i64, r as i64);
            c > 0 && r > 0 && c < cols - 1 && r < rows - 1 && [(-1, 0), (1, 0), (0, -1), (0, 1)].iter().all(|(dc, dr)| !self.pixels[((r + dr) * cols + c + dc) as usize][0].is_nan())
        })
    }

    /// The cells of `step` mm over `board` (and a margin round it) at height `z`,
    /// projected by `camera` from `pose`, cropped to the rows and columns in view.
    pub fn new(board: &Board, camera: &Camera, pose: &CameraPose, step: f64, z: f64) -> Grid {
        // The surface plus a margin for pieces in the gutters, hanging off, or on
        // the ground beside a washer board (seen from above at the surface's
        // height, their images lie further out still).
        let margin = match board.layout {
            Layout::Washer(_) => 300.0,
            _ => 120.0,
        };
        let (x0, x1) = (-board.surface.half_width() - margin, board.surface.half_width() + margin);
        let (y0, y1) = (-margin, board.surface.length_mm + margin);
        let cols = ((x1 - x0) / step).ceil() as u32;
        let rows = ((y1 - y0) / step).ceil() as u32;
        let (w, h) = (camera.image_width as f64, camera.image_height as f64);
        let mut pixels = Vec::with_capacity((cols * rows) as usize);
        for r in 0..rows {
            for c in 0..cols {
                let p = BoardPoint3::new(x0 + (c as f64 + 0.5) * step, y0 + (r as f64 + 0.5) * step, z);
                let px = pose.project(camera, p).filter(|q| q.u >= 0.0 && q.v >= 0.0 && q.u <= w - 1.0 && q.v <= h - 1.0);
                pixels.push(px.map_or([f32::NAN; 2], |q| [q.u as f32, q.v as f32]));
            }
        }
        // Keep only the rows and columns that have a cell in view: an end camera
        // sees a fraction of a long board.
        let visible = |i: usize| !pixels[i][0].is_nan();
        let (mut c_lo, mut c_hi, mut r_lo, mut r_hi) = (u32::MAX, 0, u32::MAX, 0);
        for i in (0..pixels.len()).filter(|&i| visible(i)) {
            let (c, r) = (i as u32 % cols, i as u32 / cols);
            (c_lo, c_hi, r_lo, r_hi) = (c_lo.min(c), c_hi.max(c), r_lo.min(r), r_hi.max(r));
        }
        if c_lo > c_hi {
            return Grid { x0, y0, step, cols: 0, rows: 0, pixels: Vec::new(), taps: Vec::new() };
        }
        let (new_cols, new_rows) = (c_hi - c_lo + 1, r_hi - r_lo + 1);
        let mut cropped = Vec::with_capacity((new_cols * new_rows) as usize);
        for r in r_lo..=r_hi {
            let start = (r * cols + c_lo) as usize;
            cropped.extend_from_slice(&pixels[start..start + new_cols as usize]);
        }
        let (width, height) = (camera.image_width as usize, camera.image_height as usize);
        let taps = cropped
            .iter()
            .map(|px| if px[0].is_nan() { BilinearTap::OUT_OF_VIEW } else { BilinearTap::new(width, height, PixelPoint::new(px[0] as f64, px[1] as f64)) })
            .collect();
        Grid {
            x0: x0 + c_lo as f64 * step,
            y0: y0 + r_lo as f64 * step,
            step,
            cols: new_cols,
            rows: new_rows,
            pixels: cropped,
            taps,
        }
    }

    /// The board point at the centre of cell (`c`, `r`) (fractions of cells allowed).
    pub fn cell_centre(&self, c: f64, r: f64) -> BoardPoint {
        BoardPoint::new(self.x0 + (c + 0.5) * self.step, self.y0 + (r + 0.5) * self.step)
    }

    /// Each cell's colour in `frame` as hue, saturation and value, one array
    /// each (NaN where out of view): one bilinear sample at its centre's image.
    /// (Four samples a cell apart were tried: slower, and no better on the fixtures.)
    pub fn gather(&self, frame: &ColourView, hsv: &mut [Vec<f32>; 3]) {
        let [h, s, v] = hsv;
        let n = self.taps.len();
        for c in [&mut *h, &mut *s, &mut *v] {
            c.resize(n, 0.0);
        }
        // Tile by tile: a grid row runs obliquely across the image rows, and
        // read row by row each cell's pixels lie on other cache lines than its
        // neighbour's; a tile's cells share theirs. Each band of tiles is one
        // task on rayon's pool (the bands write disjoint cells).
        let cols = self.cols as usize;
        if cols == 0 {
            return;
        }
        let band = GATHER_TILE * cols;
        h.par_chunks_mut(band).zip(s.par_chunks_mut(band)).zip(v.par_chunks_mut(band)).enumerate().for_each(|(b, ((h, s), v))| {
            let first = b * band;
            let rows = h.len() / cols;
            for c0 in (0..cols).step_by(GATHER_TILE) {
                for r in 0..rows {
                    for c in c0..(c0 + GATHER_TILE).min(cols) {
                        let i = r * cols + c;
                        [h[i], s[i], v[i]] = frame.read(&self.taps[first + i]).unwrap_or([f32::NAN; 3]);
                    }
                }
            }
            bgr_to_hsv_in_place(h, s, v);
        });
    }

    /// The cells whose centre lies within `radius_mm` of `centre` (`<=`), as (column, row), row by row.
    pub fn cells_within(&self, centre: BoardPoint, radius_mm: f64) -> impl Iterator<Item = (u32, u32)> + '_ {
        let g = self;
        let r = radius_mm;
        let (c0, c1) = (((centre.x_mm - r - g.x0) / g.step).floor().max(0.0) as u32, ((centre.x_mm + r - g.x0) / g.step).ceil() as u32);
        let (r0, r1) = (((centre.y_mm - r - g.y0) / g.step).floor().max(0.0) as u32, ((centre.y_mm + r - g.y0) / g.step).ceil() as u32);
        (r0..r1.min(g.rows))
            .flat_map(move |row| (c0..c1.min(g.cols)).map(move |col| (col, row)))
            .filter(move |&(col, row)| g.cell_centre(col as f64, row as f64).distance_squared(centre) <= r * r)
    }

    /// The fraction of cells within 85 % of a footprint's radius that are set
    /// in `mask` (cells out of view are not counted).
    pub fn fill_fraction(&self, mask: &GrayImage, fp: Footprint) -> f64 {
        let (mut inside, mut hit) = (0usize, 0usize);
        for (col, row) in self.cells_within(fp.centre, 0.85 * fp.radius_mm) {
            if self.pixels[(row * self.cols + col) as usize][0].is_nan() {
                continue;
            }
            inside += 1;
            if mask.get_pixel(col, row)[0] > 0 {
                hit += 1;
            }
        }
        if inside == 0 { 0.0 } else { hit as f64 / inside as f64 }
    }

    /// The centre of a blob of cells (column, row), on the board.
    pub fn blob_centre(&self, blob: &[(f64, f64)]) -> BoardPoint {
        let (sx, sy) = blob.iter().fold((0.0, 0.0), |a, p| (a.0 + p.0, a.1 + p.1));
        self.cell_centre(sx / blob.len() as f64, sy / blob.len() as f64)
    }

    /// Whether any cell is in view.
    pub fn in_view(&self) -> bool {
        self.pixels.iter().any(|p| !p[0].is_nan())
    }
}


/// A morphological opening with a disc of radius `k` cells, in place (OpenCV's
/// vectorised morphology: a separable square would open diagonal stripes less).
pub(super) fn open_in_place(mask: &mut GrayImage, k: i32) {
    use opencv::core::{Mat, Size};
    use opencv::imgproc;
    let (w, h) = (mask.width() as i32, mask.height() as i32);
    let opened = (|| -> opencv::Result<Vec<u8>> {
        let src = Mat::new_rows_cols_with_data(h, w, mask.as_raw())?;
        let kernel = imgproc::get_structuring_element_def(imgproc::MORPH_ELLIPSE, Size::new(2 * k + 1, 2 * k + 1))?;
        let mut dst = Mat::default();
        imgproc::morphology_ex_def(&src, &mut dst, imgproc::MORPH_OPEN, &kernel)?;
        Ok(opencv::prelude::MatTraitConstManual::data_bytes(&dst)?.to_vec())
    })();
    match opened {
        Ok(bytes) => mask.copy_from_slice(&bytes),
        // OpenCV cannot fail on a valid 8-bit image; keep imageproc as the fallback.
        Err(_) => *mask = open(mask, Norm::L2, k.clamp(1, 255) as u8),
    }
}

/// The indices of a mask's set cells, in raster order. Masks are mostly empty:
/// runs of empty cells are skipped eight at a time.
pub(super) fn set_cells(mask: &GrayImage) -> impl Iterator<Item = usize> + '_ {
    let raw = mask.as_raw();
    raw.chunks(8).enumerate().filter(|(_, chunk)| chunk.iter().any(|&v| v > 0)).flat_map(|(k, chunk)| {
        chunk.iter().enumerate().filter(|(_, v)| **v > 0).map(move |(j, _)| 8 * k + j)
    })
}

/// The 8-connected blobs of a mask's set cells: each blob's cells as
/// (column, row) in raster order, the blobs in the raster order of their first
/// cells (as `imageproc`'s labelling numbers them). Labelled by OpenCV, whose
/// labelling is several times faster; its own numbering is not used.
pub(super) fn blobs_of(mask: &GrayImage) -> Vec<Vec<(f64, f64)>> {
    use opencv::core::{Mat, CV_32S};
    let (w, h) = (mask.width() as usize, mask.height() as usize);
    let mut blobs: Vec<Vec<(f64, f64)>> = Vec::new();
    let labelled = (|| -> opencv::Result<bool> {
        let src = Mat::new_rows_cols_with_data(h as i32, w as i32, mask.as_raw())?;
        let mut labels = Mat::default();
        let n = opencv::imgproc::connected_components(&src, &mut labels, 8, CV_32S)?;
        let labels = opencv::prelude::MatTraitConstManual::data_typed::<i32>(&labels)?;
        if labels.len() != w * h {
            return Ok(false);
        }
        // OpenCV's label -> 1 + the blob's index in first-cell order (0: not yet seen).
        let mut order = vec![0usize; n.max(1) as usize];
        for i in set_cells(mask) {
            let Some(slot) = usize::try_from(labels[i]).ok().filter(|&l| l > 0).and_then(|l| order.get_mut(l)) else { return Ok(false) };
            if *slot == 0 {
                blobs.push(Vec::new());
                *slot = blobs.len();
            }
            blobs[*slot - 1].push(((i % w) as f64, (i / w) as f64));
        }
        Ok(true)
    })();
    match labelled {
        Ok(true) => {}
        // OpenCV cannot fail on a valid 8-bit image; keep imageproc as the fallback.
        _ => {
            blobs.clear();
            let labels = connected_components(mask, Connectivity::Eight, Luma([0u8]));
            for (c, r, l) in labels.enumerate_pixels() {
                let l = l[0] as usize;
                if l > 0 {
                    if l > blobs.len() {
                        blobs.resize(l, Vec::new());
                    }
                    blobs[l - 1].push((c as f64, r as f64));
                }
            }
        }
    }
    blobs
}

/// The median saturation and value over cells in view (their saturation and value).
pub(super) fn median_saturation_value(cells: impl Iterator<Item = (f32, f32)>) -> (f32, f32) {
    let (mut s, mut v): (Vec<f32>, Vec<f32>) = cells.unzip();
    if s.is_empty() {
        return (0.0, 1.0);
    }
    let mid = s.len() / 2;
    let (_, ms, _) = s.select_nth_unstable_by(mid, f32::total_cmp);
    let ms = *ms;
    let (_, mv, _) = v.select_nth_unstable_by(mid, f32::total_cmp);
    (ms, *mv)
}

/// The standard deviation of a blob's cells along its narrowest direction (cells).
pub(super) fn minor_spread(cells: &[(f64, f64)]) -> f64 {
    let n = cells.len() as f64;
    let (mx, my) = cells.iter().fold((0.0, 0.0), |a, p| (a.0 + p.0 / n, a.1 + p.1 / n));
    let (mut sxx, mut syy, mut sxy) = (0.0, 0.0, 0.0);
    for (x, y) in cells {
        sxx += (x - mx).powi(2) / n;
        syy += (y - my).powi(2) / n;
        sxy += (x - mx) * (y - my) / n;
    }
    let half_trace = (sxx + syy) / 2.0;
    let det = sxx * syy - sxy * sxy;
    (half_trace - (half_trace * half_trace - det).max(0.0).sqrt()).max(0.0).sqrt()
}

/// Splits a blob's cells into `n` groups by k-means (farthest-point start) and
/// returns each group's centroid in cell coordinates.
pub(super) fn split_blob(cells: &[(f64, f64)], n: usize) -> Vec<(f64, f64)> {
    let centroid = |pts: &[(f64, f64)]| {
        let (sx, sy) = pts.iter().fold((0.0, 0.0), |a, p| (a.0 + p.0, a.1 + p.1));
        (sx / pts.len() as f64, sy / pts.len() as f64)
    };
    if n <= 1 || cells.len() < n {
        return vec![centroid(cells)];
    }
    let d2 = |a: (f64, f64), b: (f64, f64)| (a.0 - b.0).powi(2) + (a.1 - b.1).powi(2);
    let mut centres = vec![cells[0]];
    while centres.len() < n {
        let far = cells
            .iter()
            .copied()
            .max_by(|a, b| {
                let da = centres.iter().map(|c| d2(*a, *c)).fold(f64::INFINITY, f64::min);
                let db = centres.iter().map(|c| d2(*b, *c)).fold(f64::INFINITY, f64::min);
                da.total_cmp(&db)
            })
            .expect("cells is not empty");
        centres.push(far);
    }
    let mut assign = vec![0usize; cells.len()];
    for _ in 0..30 {
        let mut changed = false;
        for (i, p) in cells.iter().enumerate() {
            let best = (0..n).min_by(|&a, &b| d2(*p, centres[a]).total_cmp(&d2(*p, centres[b]))).expect("n >= 1");
            if best != assign[i] {
                assign[i] = best;
                changed = true;
            }
        }
        for (k, c) in centres.iter_mut().enumerate() {
            let members: Vec<(f64, f64)> = cells.iter().zip(&assign).filter(|(_, a)| **a == k).map(|(p, _)| *p).collect();
            if !members.is_empty() {
                *c = centroid(&members);
            }
        }
        if !changed {
            break;
        }
    }
    centres
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_blob_is_seen_whole_only_clear_of_the_grid_border_and_of_cells_out_of_view() {
        // A 6 x 5 grid whose last column is out of the camera's view.
        let (cols, rows) = (6u32, 5u32);
        let pixels = (0..rows * cols).map(|i| if i % cols == cols - 1 { [f32::NAN; 2] } else { [i as f32, 0.0] }).collect();
        let g = Grid { x0: 0.0, y0: 0.0, step: 2.0, cols, rows, pixels, taps: Vec::new() };
        assert!(g.wholly_in_view(&[(1.0, 1.0), (2.0, 2.0), (3.0, 3.0)]));
        assert!(!g.wholly_in_view(&[(1.0, 1.0), (0.0, 1.0)]), "on the border");
        assert!(!g.wholly_in_view(&[(2.0, 3.0), (2.0, 4.0)]), "on the last row");
        assert!(!g.wholly_in_view(&[(3.0, 2.0), (4.0, 2.0)]), "beside a cell out of view");
    }

    #[test]
    fn blobs_are_numbered_as_imageproc_labels_them() {
        // Speckle and blobs of every shape: a fixed pseudo-random mask.
        let (w, h) = (97u32, 61u32);
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut mask = GrayImage::new(w, h);
        for (x, y, p) in mask.enumerate_pixels_mut() {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let near_blob = ((x as f64 - 30.0).hypot(y as f64 - 20.0) < 12.0) || (x > 60 && y % 17 < 9);
            let threshold = if near_blob { 80 } else { 20 };
            p[0] = if state % 100 < threshold { 255 } else { 0 };
        }
        let labels = connected_components(&mask, Connectivity::Eight, Luma([0u8]));
        let n = labels.pixels().map(|p| p[0]).max().unwrap_or(0) as usize;
        let mut want: Vec<Vec<(f64, f64)>> = vec![Vec::new(); n];
        for (c, r, l) in labels.enumerate_pixels() {
            if l[0] > 0 {
                want[l[0] as usize - 1].push((c as f64, r as f64));
            }
        }
        assert!(n > 50, "the mask holds many blobs ({n})");
        assert_eq!(blobs_of(&mask), want);
    }


    #[test]
    fn k_means_splits_two_touching_blobs() {
        let mut cells = Vec::new();
        for (cx, cy) in [(10.0, 10.0), (24.0, 10.0)] {
            for x in 0..30 {
                for y in 0..30 {
                    let (px, py) = (x as f64, y as f64);
                    if (px - cx as f64).hypot(py - cy as f64) < 7.0 {
                        cells.push((px, py));
                    }
                }
            }
        }
        let mut c = split_blob(&cells, 2);
        c.sort_by(|a, b| a.0.total_cmp(&b.0));
        assert!((c[0].0 - 10.0).abs() < 0.5 && (c[1].0 - 24.0).abs() < 0.5, "{c:?}");
    }
}

