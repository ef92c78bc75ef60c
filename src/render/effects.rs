//! The camera after the lens: vignetting, the sensor's tone curve and sRGB
//! encoding, optional blur, signal-dependent sensor noise (seeded), and writing
//! PNG or JPEG.

use crate::render::scene::Effects;
use crate::render::shade::LinearImage;
use image::RgbImage;
use rand::SeedableRng;
use rand_distr::{Distribution, StandardNormal};
use rand_pcg::Pcg64;
use std::path::Path;

/// Linear light above this starts to roll off smoothly towards white instead of
/// clipping hard (a camera's highlight shoulder).
const SHOULDER_START: f64 = 0.8;

/// Errors writing an image.
#[derive(Debug, thiserror::Error)]
pub enum ImageWriteError {
    #[error("cannot write image {path}: {source}")]
    Write { path: std::path::PathBuf, source: image::ImageError },
    #[error("cannot write image {path}: unknown extension (use .png, .jpg or .jpeg)")]
    Extension { path: std::path::PathBuf },
    #[error(transparent)]
    Output {
        #[from]
        source: crate::files::OutputError,
    },
}

/// Light (linear, 1 = white) to the 0..1 value the camera encodes: the sensor's
/// tone curve, then sRGB's transfer function.
pub(crate) fn tone(x: f64) -> f64 {
    let x = x.max(0.0);
    let y = if x < SHOULDER_START {
        x
    } else {
        let room = 1.0 - SHOULDER_START;
        SHOULDER_START + room * (1.0 - (-(x - SHOULDER_START) / room).exp())
    };
    // sRGB transfer function.
    if y <= 0.003_130_8 {
        12.92 * y
    } else {
        1.055 * y.powf(1.0 / 2.4) - 0.055
    }
}

/// Turns rendered light into the 8-bit image the camera delivers. The noise is
/// drawn from PCG-64 seeded with `seed`, so the same inputs give the same bytes.
pub fn develop(img: &LinearImage, fx: &Effects, seed: u64) -> RgbImage {
    let (w, h) = (img.width, img.height);
    let (cx, cy) = (w as f64 / 2.0, h as f64 / 2.0);
    let corner2 = cx * cx + cy * cy;
    let mut out = RgbImage::new(w, h);
    for (i, px) in out.pixels_mut().enumerate() {
        let (x, y) = ((i as u32 % w) as f64 + 0.5 - cx, (i as u32 / w) as f64 + 0.5 - cy);
        let falloff = 1.0 - (1.0 - fx.vignetting) * (x * x + y * y) / corner2;
        let l = img.pixels[i];
        for k in 0..3 {
            px[k] = (tone(l[k] as f64 * falloff) * 255.0).round().clamp(0.0, 255.0) as u8;
        }
    }
    if fx.blur_sigma_px > 0.0 {
        out = imageproc::filter::gaussian_blur_f32(&out, fx.blur_sigma_px as f32);
    }
    if fx.read_noise > 0.0 || fx.shot_noise > 0.0 {
        let mut rng = Pcg64::seed_from_u64(seed);
        for px in out.pixels_mut() {
            for k in 0..3 {
                let v = px[k] as f64;
                let sigma = (fx.read_noise * fx.read_noise + fx.shot_noise * v).sqrt();
                let z: f64 = StandardNormal.sample(&mut rng);
                px[k] = (v + sigma * z).round().clamp(0.0, 255.0) as u8;
            }
        }
    }
    out
}

/// Writes an image as PNG or JPEG (`jpeg_quality`) by the path's extension, encoded in memory and written atomically
/// ([`crate::files::write_atomic`]).
pub fn write_image(img: &RgbImage, path: &Path, jpeg_quality: u8) -> Result<(), ImageWriteError> {
    let ext = path.extension().and_then(|e| e.to_str()).map(|e| e.to_ascii_lowercase());
    let err = |source| ImageWriteError::Write { path: path.to_path_buf(), source };
    let mut bytes = Vec::new();
    match ext.as_deref() {
        Some("png") => img.write_to(&mut std::io::Cursor::new(&mut bytes), image::ImageFormat::Png).map_err(err)?,
        Some("jpg") | Some("jpeg") => {
            let enc = image::codecs::jpeg::JpegEncoder::new_with_quality(&mut bytes, jpeg_quality);
            img.write_with_encoder(enc).map_err(err)?
        }
        _ => return Err(ImageWriteError::Extension { path: path.to_path_buf() }),
    }
    crate::files::write_atomic(path, &bytes)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grey(v: f32) -> LinearImage {
        LinearImage { width: 64, height: 48, pixels: vec![[v; 3]; 64 * 48] }
    }

    #[test]
    fn the_tone_curve_is_monotonic_and_reaches_white_smoothly() {
        let mut last = -1.0;
        for i in 0..400 {
            let y = tone(i as f64 * 0.01);
            assert!(y >= last && y <= 1.0 + 1e-12);
            last = y;
        }
        // Mid grey (18% linear) is about 118 in sRGB.
        assert!((tone(0.18) * 255.0 - 117.0).abs() < 2.0);
    }

    #[test]
    fn noise_is_reproducible_and_has_the_asked_spread() {
        let fx = Effects { read_noise: 4.0, shot_noise: 0.0, blur_sigma_px: 0.0, vignetting: 1.0, jpeg_quality: 90 };
        let a = develop(&grey(0.18), &fx, 11);
        let b = develop(&grey(0.18), &fx, 11);
        let c = develop(&grey(0.18), &fx, 12);
        assert_eq!(a, b);
        assert_ne!(a, c);
        let vals: Vec<f64> = a.pixels().map(|p| p[1] as f64).collect();
        let mean = vals.iter().sum::<f64>() / vals.len() as f64;
        let sd = (vals.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / vals.len() as f64).sqrt();
        // 3072 samples: the sample standard deviation is within ~5% of 4 (plus rounding to integers).
        assert!((sd - 4.0).abs() < 0.4, "sd {sd}");
    }

    #[test]
    fn vignetting_darkens_the_corners() {
        let fx = Effects { vignetting: 0.6, ..Effects::clean() };
        let img = develop(&grey(0.3), &fx, 0);
        assert!(img.get_pixel(0, 0)[0] + 20 < img.get_pixel(32, 24)[0]);
    }
}
