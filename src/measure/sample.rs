//! Bilinear colour samples of the raw frame at sub-pixel positions: a borrowed view of its bytes, and taps (a
//! sample's pixel and weights) made once for positions read every frame.

use super::MeasureError;
use crate::geom::PixelPoint;

/// A borrowed 8-bit 3-channel image, row-major, no padding. The channel order
/// is the caller's (frames are BGR): the outline fit only compares colours.
#[derive(Clone, Copy)]
pub struct ColourView<'a> {
    width: usize,
    height: usize,
    data: &'a [u8],
}

impl<'a> ColourView<'a> {
    pub fn new(width: usize, height: usize, data: &'a [u8]) -> Result<Self, MeasureError> {
        if data.len() != width * height * 3 {
            return Err(MeasureError::BadImage { len: data.len(), width, height });
        }
        Ok(ColourView { width, height, data })
    }

    pub fn width(&self) -> usize {
        self.width
    }

    pub fn height(&self) -> usize {
        self.height
    }

    /// Bilinear sample at a pixel position (OpenCV convention: pixel centres at
    /// integers); `None` outside the image.
    #[inline(always)]
    pub fn sample(&self, p: PixelPoint) -> Option<[f32; 3]> {
        let (x0, y0, right, down, fx, fy) = bilinear_corner(self.width, self.height, p)?;
        Some(self.blend((y0 * self.width + x0) * 3, right * 3, down * self.width * 3, fx, fy))
    }

    /// The bilinear sample a tap made for this view's size describes: the same
    /// value as [`ColourView::sample`] at the tap's position, `None` for a tap
    /// out of view.
    ///
    /// # Panics
    /// If the tap was made for a larger image.
    #[inline]
    pub fn read(&self, t: &BilinearTap) -> Option<[f32; 3]> {
        if t.fx.is_nan() {
            return None;
        }
        let (right, down) = ((t.edges & 1) as usize * 3, (t.edges >> 1) as usize * self.width * 3);
        Some(self.blend(t.pixel as usize * 3, right, down, t.fx, t.fy))
    }

    /// Bilinear interpolation between the pixel at byte offset `at`, the one
    /// `right` bytes on and the two `down` bytes below them.
    #[inline(always)]
    fn blend(&self, at: usize, right: usize, down: usize, fx: f32, fy: f32) -> [f32; 3] {
        // The two rows' pixel pairs as slices, each of a known length: one bounds check a row, not one a byte.
        let pair = |start: usize| -> (&[u8; 3], &[u8; 3]) {
            let row = &self.data[start..start + right + 3];
            (row[..3].try_into().expect("3 bytes"), row[right..].try_into().expect("3 bytes"))
        };
        let ((a, b), (c, d)) = (pair(at), pair(at + down));
        let mut out = [0.0; 3];
        for k in 0..3 {
            let (a, b, c, d) = (f32::from(a[k]), f32::from(b[k]), f32::from(c[k]), f32::from(d[k]));
            let top = a + (b - a) * fx;
            let bottom = c + (d - c) * fx;
            out[k] = top + (bottom - top) * fy;
        }
        out
    }
}

/// The top-left pixel of a bilinear sample at `p` in a `width` x `height`
/// image, whether it has a neighbour on its right and below (1) or lies on the
/// last column or row (0), and the weights; `None` outside the image.
#[inline]
fn bilinear_corner(width: usize, height: usize, p: PixelPoint) -> Option<(usize, usize, usize, usize, f32, f32)> {
    let (u, v) = (p.u, p.v);
    if !(u >= 0.0 && v >= 0.0 && u <= (width - 1) as f64 && v <= (height - 1) as f64) {
        return None;
    }
    // Both are at least 0, where truncation is `floor` (without its library call).
    let (x0, y0) = (u as usize, v as usize);
    let (x1, y1) = ((x0 + 1).min(width - 1), (y0 + 1).min(height - 1));
    let (fx, fy) = ((u - x0 as f64) as f32, (v - y0 as f64) as f32);
    Some((x0, y0, x1 - x0, y1 - y0, fx, fy))
}

/// Where a bilinear sample reads a 3-channel image of a given size: its
/// top-left pixel and weights. A position sampled in every frame (a detector's
/// grid cell) is turned into a tap once, and read per frame with
/// [`ColourView::read`]; 16 bytes, as a grid holds hundreds of thousands.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BilinearTap {
    /// Index of the top-left pixel.
    pixel: u32,
    /// Bit 0: it has a neighbour on its right; bit 1: below (not on the
    /// image's last column, row).
    edges: u32,
    /// The weights; NaN for a position out of view.
    fx: f32,
    fy: f32,
}

impl BilinearTap {
    /// A position out of view: [`ColourView::read`] gives `None`.
    pub const OUT_OF_VIEW: BilinearTap = BilinearTap { pixel: 0, edges: 0, fx: f32::NAN, fy: f32::NAN };

    /// The tap of a pixel position in a `width` x `height` image;
    /// [`BilinearTap::OUT_OF_VIEW`] outside it (and in an image of over 2^32
    /// pixels, whose indices a tap does not hold).
    pub fn new(width: usize, height: usize, p: PixelPoint) -> BilinearTap {
        let Some((x0, y0, right, down, fx, fy)) = bilinear_corner(width, height, p) else { return Self::OUT_OF_VIEW };
        match u32::try_from(y0 * width + x0) {
            Ok(pixel) => BilinearTap { pixel, edges: (right | down << 1) as u32, fx, fy },
            Err(_) => Self::OUT_OF_VIEW,
        }
    }
}
