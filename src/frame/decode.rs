//! Checks an image file before it becomes a frame: its size from the header (an absurd frame is refused before any
//! pixel is allocated) and the whole file decoded strictly (a truncated or damaged file is refused, where OpenCV's
//! decoder only warns on stderr and fills the missing part with grey).

use super::FrameError;
use std::path::Path;

/// The widest and tallest frame accepted: 8K (8192 px covers 8K UHD's 7680 and DCI 8K's 8192). No board camera
/// delivers more, and each stage keeps a few frame-sized buffers (an 8-bit BGR 8K frame is ~100 MB).
pub const MAX_FRAME_SIDE: u32 = 8192;
/// The most pixels accepted: 8K UHD (7680 x 4320, 33 MP).
pub const MAX_FRAME_PIXELS: u64 = 7680 * 4320;
/// The largest image file read: an 8K PNG of noise is ~100 MB; anything far beyond is not a camera frame.
pub const MAX_FILE_BYTES: u64 = 512 << 20;

/// The container, told by its signature (the file name's extension is not trusted).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Container {
    Jpeg,
    Png,
    /// Anything else OpenCV may read (BMP, TIFF, WebP, ...): checked by size after decoding only.
    Other,
}

pub(crate) fn container(bytes: &[u8]) -> Container {
    if bytes.starts_with(&[0xFF, 0xD8, 0xFF]) {
        Container::Jpeg
    } else if bytes.starts_with(b"\x89PNG\r\n\x1a\n") {
        Container::Png
    } else {
        Container::Other
    }
}

/// Fails unless `width` x `height` is within the frame limits.
pub fn check_size(path: Option<&Path>, width: u64, height: u64) -> Result<(), FrameError> {
    if width == 0 || height == 0 || width > u64::from(MAX_FRAME_SIDE) || height > u64::from(MAX_FRAME_SIDE) || width * height > MAX_FRAME_PIXELS {
        return Err(FrameError::TooLarge { path: path.map(Path::to_path_buf), width, height });
    }
    Ok(())
}

/// Checks a JPEG or PNG file completely: header size within the limits, then a strict decode of every byte.
pub(crate) fn check_file(bytes: &[u8], path: &Path) -> Result<(), FrameError> {
    let damaged = |reason: String| FrameError::Damaged { path: path.to_path_buf(), reason };
    match container(bytes) {
        Container::Jpeg => {
            use zune_core::bytestream::ZCursor;
            use zune_core::options::DecoderOptions;
            // The decoder's own limits at JPEG's largest; ours are checked from the header before any pixel is decoded.
            let options = DecoderOptions::default().set_strict_mode(true).set_max_width(usize::from(u16::MAX)).set_max_height(usize::from(u16::MAX));
            let mut decoder = zune_jpeg::JpegDecoder::new_with_options(ZCursor::new(bytes), options);
            decoder.decode_headers().map_err(|_| FrameError::Corrupt { path: path.to_path_buf() })?;
            let info = decoder.info().ok_or_else(|| damaged("no frame header".into()))?;
            check_size(Some(path), info.width as u64, info.height as u64)?;
            decoder.decode().map_err(|e| damaged(e.to_string()))?;
            // The decoder above conceals a stream that decodes to the wrong pixels (a run of data lost or repeated);
            // walking the codes finds it.
            super::jpeg_scan::check(bytes).map_err(damaged)?;
            if !ends_with_eoi(bytes) {
                return Err(damaged("the file ends before the JPEG end-of-image marker (truncated)".into()));
            }
        }
        Container::Png => {
            use image::ImageDecoder;
            // The size from the IHDR chunk, which the format puts first (bytes 16..24), before the decoder reads on.
            if bytes.len() >= 24 && &bytes[12..16] == b"IHDR" {
                let w = u32::from_be_bytes([bytes[16], bytes[17], bytes[18], bytes[19]]);
                let h = u32::from_be_bytes([bytes[20], bytes[21], bytes[22], bytes[23]]);
                check_size(Some(path), u64::from(w), u64::from(h))?;
            }
            let decoder =
                image::codecs::png::PngDecoder::new(std::io::Cursor::new(bytes)).map_err(|_| FrameError::Corrupt { path: path.to_path_buf() })?;
            let (w, h) = decoder.dimensions();
            check_size(Some(path), u64::from(w), u64::from(h))?;
            let mut buf = vec![0u8; usize::try_from(decoder.total_bytes()).map_err(|_| damaged("absurd size".into()))?];
            decoder.read_image(&mut buf).map_err(|e| damaged(e.to_string()))?;
        }
        Container::Other => {}
    }
    Ok(())
}

/// Whether the JPEG's last marker is end-of-image (`FF D9`), allowing trailing padding of zero or 0xFF bytes that some
/// cameras and tools append.
fn ends_with_eoi(bytes: &[u8]) -> bool {
    let end = bytes.iter().rposition(|&b| b != 0x00 && b != 0xFF).map_or(0, |i| i + 1);
    // The last non-padding byte is D9, preceded by FF.
    end >= 2 && bytes[end - 1] == 0xD9 && bytes[end - 2] == 0xFF
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_end_of_image_marker_is_found_with_or_without_padding() {
        assert!(ends_with_eoi(&[0xFF, 0xD8, 1, 2, 0xFF, 0xD9]));
        assert!(ends_with_eoi(&[0xFF, 0xD8, 1, 2, 0xFF, 0xD9, 0, 0, 0]));
        assert!(!ends_with_eoi(&[0xFF, 0xD8, 1, 2, 3, 4]));
        assert!(!ends_with_eoi(&[0xD9]));
    }

    #[test]
    fn sizes_beyond_8k_are_refused() {
        assert!(check_size(None, 1920, 1080).is_ok());
        assert!(check_size(None, 7680, 4320).is_ok());
        assert!(matches!(check_size(None, 20_000, 20_000), Err(FrameError::TooLarge { .. })));
        assert!(check_size(None, 8192, 8192).is_err(), "each side within 8192 but 67 MP");
        assert!(check_size(None, 0, 10).is_err());
    }
}
