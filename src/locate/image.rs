//! The frame as the search reads it: its 3x3 Sobel derivatives, the gradients made of them, and the mask of pixels clear of the undistortion's fill.

use super::*;

/// Where the undistorted frame's pixels (`valid`: non-zero where the frame
/// has them; empty: all of them) are at least `reach_px` clear of the fill
/// around them, into `keep` (empty when `valid` is): edges nearer are the
/// fill's border, not the board.
pub(super) fn clear_of_fill(valid: &Mat, reach_px: f64, keep: &mut Mat) -> Result<(), LocateError> {
    if valid.empty() {
        *keep = Mat::default();
        return Ok(());
    }
    let r = reach_px.ceil() as i32;
    let k = cv("kernel", imgproc::get_structuring_element_def(imgproc::MORPH_RECT, Size::new(2 * r + 1, 2 * r + 1)))?;
    cv("erode", imgproc::erode(valid, keep, &k, opencv::core::Point::new(-1, -1), 1, opencv::core::BORDER_CONSTANT, Scalar::all(0.0)))
}

/// The 3x3 Sobel derivatives of `blurred` (the frame pre-blurred by
/// [`BLUR_SIGMA_PX`]), every channel's raw sums (exact in 16 bits), along x into
/// `dx` and along y into `dy`, the two side by side: what the line finder's
/// Canny reads at full resolution ([`LineFinder::find`]) and the gradients are
/// made of ([`gradients`]). The border is replicated, as Canny's own derivatives
/// take it, so that its edges are those of the frame itself.
pub(super) fn derivatives(blurred: &Mat, dx: &mut Mat, dy: &mut Mat) -> Result<(), LocateError> {
    let sobel = |out: &mut Mat, (ox, oy): (i32, i32)| cv("sobel", imgproc::sobel(blurred, out, CV_16S, ox, oy, 3, 1.0, 0.0, opencv::core::BORDER_REPLICATE));
    std::thread::scope(|scope| {
        let along_y = scope.spawn(|| sobel(dy, (0, 1)));
        sobel(dx, (1, 0))?;
        along_y.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic))
    })
}

/// The gradients (`dx`, `dy`: [`derivatives`]) into `grad`, each pixel's six
/// planes together, zero outside `keep` (if not empty: [`clear_of_fill`]).
pub(super) fn gradients(dx: &Mat, dy: &Mat, keep: &Mat, grad: &mut Gradients) -> Result<(), LocateError> {
    let (w, h) = (dx.cols() as usize, dx.rows() as usize);
    grad.zero(w, h);
    let mask: Option<&[u8]> = if keep.empty() { None } else { Some(cv("mask", keep.data_typed::<u8>())?) };
    // Three channels a pixel ([`Gradients::g`] holds the x and y sums of each channel in turn).
    let (gx, gy) = (cv("sobel", dx.data_typed::<opencv::core::Vec3s>())?, cv("sobel", dy.data_typed::<opencv::core::Vec3s>())?);
    for (i, ((dst, x), y)) in grad.g.iter_mut().zip(gx).zip(gy).enumerate() {
        if mask.is_none_or(|m| m[i] != 0) {
            let (x, y) = (x.0, y.0);
            *dst = [x[0], y[0], x[1], y[1], x[2], y[2]];
        }
    }
    Ok(())
}
