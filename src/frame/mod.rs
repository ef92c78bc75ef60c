//! The pipeline's first two stages: a raw camera [`Frame`] and its [`Undistorted`] image with the ideal camera.
//!
//! A frame is an 8-bit BGR image exactly as the camera delivered it (lens
//! distortion included). An undistorted image is that frame resampled through
//! [`crate::undistort::Undistorter`]: a pinhole image whose camera has zero
//! distortion, so straight board edges are straight and projection is a plain
//! `K [R | t]`. Both carry OpenCV `Mat`s; their serialised form is a PNG
//! ([`Frame::save_png`], [`Undistorted::save_png`]) plus, for the undistorted
//! image, its camera (serde).

pub mod decode;
pub mod jpeg_scan;
pub mod quality;

use crate::camera::Camera;
use opencv::core::{Mat, Vector};
use opencv::prelude::*;
use opencv::{imgcodecs, imgproc};
use std::path::{Path, PathBuf};

/// Everything that can be wrong with an image file or an image handed to a stage.
#[derive(Debug, thiserror::Error)]
pub enum FrameError {
    #[error("image file {path} does not exist")]
    Missing { path: PathBuf },
    #[error("cannot read image file {path}: {source}")]
    Unreadable { path: PathBuf, source: std::io::Error },
    #[error("image file {path} is not a readable image (corrupt or unsupported format)")]
    Corrupt { path: PathBuf },
    #[error("image file {path} is damaged ({reason}): refused rather than scored from a partial picture")]
    Damaged { path: PathBuf, reason: String },
    #[error("{}image of {width}x{height} px is beyond the limits (sides up to {} px, at most {} pixels: 8K)",
        path.as_ref().map(|p| format!("{}: ", p.display())).unwrap_or_default(), decode::MAX_FRAME_SIDE, decode::MAX_FRAME_PIXELS)]
    TooLarge { path: Option<PathBuf>, width: u64, height: u64 },
    #[error("the image is empty or not 8-bit grey/BGR/BGRA (type {cv_type}, {width}x{height})")]
    Format { cv_type: i32, width: i32, height: i32 },
    #[error("the image is {got_width}x{got_height} but the camera was calibrated at {want_width}x{want_height}")]
    SizeMismatch { got_width: u32, got_height: u32, want_width: u32, want_height: u32 },
    #[error("cannot write image {path}")]
    Write { path: PathBuf },
    #[error(transparent)]
    Output {
        #[from]
        source: crate::files::OutputError,
    },
    #[error("OpenCV error in {context}: {source}")]
    OpenCv { context: String, source: opencv::Error },
    #[error("cannot open video source `{source_name}`: {reason}")]
    VideoSource { source_name: String, reason: String },
    #[error("{source}")]
    Camera {
        #[from]
        source: crate::camera::CameraError,
    },
}

pub(crate) fn cv<T>(context: &str, r: opencv::Result<T>) -> Result<T, FrameError> {
    r.map_err(|source| FrameError::OpenCv { context: context.to_string(), source })
}

/// A raw camera frame: 8-bit, 3-channel BGR, as the camera delivered it.
#[derive(Debug, Clone)]
pub struct Frame {
    image: Mat,
    source: Option<PathBuf>,
}

impl Frame {
    /// Reads an image file (PNG, JPEG, ... anything OpenCV's imgcodecs reads). A JPEG or PNG is first checked whole
    /// ([`decode::check_file`]: its size within 8K from the header, every byte decoded strictly), so a truncated or
    /// damaged file is refused rather than scored from a grey-filled picture.
    pub fn load(path: &Path) -> Result<Frame, FrameError> {
        if !path.exists() {
            return Err(FrameError::Missing { path: path.to_path_buf() });
        }
        // Read the bytes ourselves so an unreadable file is an I/O error, not "corrupt".
        let unreadable = |source| FrameError::Unreadable { path: path.to_path_buf(), source };
        let len = std::fs::metadata(path).map_err(unreadable)?.len();
        if len > decode::MAX_FILE_BYTES {
            return Err(FrameError::Unreadable {
                path: path.to_path_buf(),
                source: std::io::Error::other(format!("{len} bytes is no camera frame (at most {} MiB)", decode::MAX_FILE_BYTES >> 20)),
            });
        }
        let bytes = std::fs::read(path).map_err(unreadable)?;
        Frame::from_bytes(&bytes, path)
    }

    /// Decodes an image file's bytes (as [`Frame::load`] does after reading them); `path` names it in errors and
    /// becomes the frame's source.
    pub fn from_bytes(bytes: &[u8], path: &Path) -> Result<Frame, FrameError> {
        decode::check_file(bytes, path)?;
        let buf: Vector<u8> = Vector::from_slice(bytes);
        let image = imgcodecs::imdecode(&buf, imgcodecs::IMREAD_COLOR)
            .ok()
            .filter(|m| !m.empty())
            .ok_or_else(|| FrameError::Corrupt { path: path.to_path_buf() })?;
        decode::check_size(Some(path), image.cols() as u64, image.rows() as u64)?;
        Ok(Frame { image, source: Some(path.to_path_buf()) })
    }

    /// Wraps an in-memory image (8-bit grey, BGR or BGRA; stored as BGR) of at most 8K.
    pub fn from_mat(image: Mat) -> Result<Frame, FrameError> {
        if !image.empty() {
            decode::check_size(None, image.cols() as u64, image.rows() as u64)?;
        }
        Ok(Frame { image: to_bgr(image)?, source: None })
    }

    /// The BGR image.
    pub fn image(&self) -> &Mat {
        &self.image
    }

    /// The file the frame came from, if any.
    pub fn source(&self) -> Option<&Path> {
        self.source.as_deref()
    }

    pub fn width(&self) -> u32 {
        self.image.cols() as u32
    }

    pub fn height(&self) -> u32 {
        self.image.rows() as u32
    }

    /// Fails unless the frame has the camera's calibrated size.
    pub fn check_size(&self, camera: &Camera) -> Result<(), FrameError> {
        if (self.width(), self.height()) != camera.size() {
            return Err(FrameError::SizeMismatch {
                got_width: self.width(),
                got_height: self.height(),
                want_width: camera.image_width,
                want_height: camera.image_height,
            });
        }
        Ok(())
    }

    /// Writes the frame as PNG (lossless).
    pub fn save_png(&self, path: &Path) -> Result<(), FrameError> {
        write_png(&self.image, path)
    }

    /// Resamples the frame through remap tables built for `camera` (bilinear;
    /// pixels with no source are black): undistortion and top views alike.
    pub fn remap(&self, camera: &Camera, map_x: &Mat, map_y: &Mat) -> Result<Mat, FrameError> {
        self.check_size(camera)?;
        let mut out = Mat::default();
        let black = opencv::core::Scalar::all(0.0);
        cv(
            "remap",
            imgproc::remap(&self.image, &mut out, map_x, map_y, imgproc::INTER_LINEAR, opencv::core::BORDER_CONSTANT, black),
        )?;
        Ok(out)
    }
}

/// Frames one after another from a video file or a live camera (OpenCV's
/// videoio), each with its index and time in the stream.
pub struct FrameSource {
    capture: opencv::videoio::VideoCapture,
    name: String,
    /// A camera: times are wall-clock seconds since opening.
    live: bool,
    fps: f64,
    opened: std::time::Instant,
    next_index: u64,
}

/// One frame of a stream.
pub struct StreamFrame {
    /// Its place in the stream, from 0.
    pub index: u64,
    /// Seconds from the stream's start: from the frame rate for a file, the
    /// wall clock for a camera.
    pub time_s: f64,
    pub frame: Frame,
}

impl FrameSource {
    /// Opens `spec`: `camera:N` (or just `N`) is camera device N; a URL
    /// (`rtsp://`, `http://`, ...) a network stream OpenCV's back ends open (timed
    /// by the wall clock, as a camera); anything else a video file (any container
    /// and codec OpenCV's back ends read).
    pub fn open(spec: &str) -> Result<FrameSource, FrameError> {
        use opencv::videoio::{VideoCapture, VideoCaptureTraitConst, CAP_ANY, CAP_PROP_FPS};
        let fail = |reason: String| FrameError::VideoSource { source_name: spec.to_string(), reason };
        let device = spec.strip_prefix("camera:").unwrap_or(spec).parse::<i32>().ok();
        let url = device.is_none() && spec.contains("://");
        let capture = match device {
            Some(n) => VideoCapture::new(n, CAP_ANY).map_err(|e| fail(e.to_string()))?,
            None if url => VideoCapture::from_file(spec, CAP_ANY).map_err(|e| fail(e.to_string()))?,
            None => {
                if !Path::new(spec).exists() {
                    return Err(fail("no such file".into()));
                }
                // OpenCV's own MJPEG AVI reader first: it skips a frame (`grab`) without
                // decoding it (FFmpeg's decodes every frame it grabs, ~11 ms at 1920x1080);
                // anything it does not read goes to the other back ends.
                let own = VideoCapture::from_file(spec, opencv::videoio::CAP_OPENCV_MJPEG).ok().filter(|c| c.is_opened().unwrap_or(false));
                match own {
                    Some(c) => c,
                    None => VideoCapture::from_file(spec, CAP_ANY).map_err(|e| fail(e.to_string()))?,
                }
            }
        };
        if !capture.is_opened().map_err(|e| fail(e.to_string()))? {
            let why = match (device, url) {
                (Some(_), _) => "no such camera, or it is busy",
                (None, true) => "the stream cannot be opened (address, network, or a protocol OpenCV's back ends lack)",
                (None, false) => "not a video OpenCV can read",
            };
            return Err(fail(why.into()));
        }
        let fps = capture.get(CAP_PROP_FPS).unwrap_or(0.0);
        Ok(FrameSource { capture, name: spec.to_string(), live: device.is_some() || url, fps, opened: std::time::Instant::now(), next_index: 0 })
    }

    /// The number of frames of a video file, as its container says (`None` for a
    /// camera or stream, or a container that does not say).
    pub fn frame_count(&self) -> Option<u64> {
        use opencv::videoio::{VideoCaptureTraitConst, CAP_PROP_FRAME_COUNT};
        if self.live {
            return None;
        }
        let n = self.capture.get(CAP_PROP_FRAME_COUNT).ok()?;
        (n.is_finite() && n >= 1.0).then_some(n as u64)
    }

    /// The stream's frame rate as its container or driver reports it (0 if unknown).
    pub fn fps(&self) -> f64 {
        self.fps
    }

    /// The index the next frame will have.
    pub fn next_index(&self) -> u64 {
        self.next_index
    }

    /// Moves past the next frame without decoding it (OpenCV's `grab` alone): a
    /// frame that will not be scored costs the container's read, not the decode.
    /// Its index, or `None` at the end of the stream.
    pub fn skip_frame(&mut self) -> Result<Option<u64>, FrameError> {
        use opencv::videoio::VideoCaptureTrait;
        let more = self.capture.grab().map_err(|source| FrameError::OpenCv { context: format!("reading {}", self.name), source })?;
        if !more {
            return Ok(None);
        }
        let index = self.next_index;
        self.next_index += 1;
        Ok(Some(index))
    }

    /// The next frame, or `None` at the end of the stream.
    pub fn next_frame(&mut self) -> Result<Option<StreamFrame>, FrameError> {
        use opencv::videoio::VideoCaptureTrait;
        let mut image = Mat::default();
        let more = self.capture.read(&mut image).map_err(|source| FrameError::OpenCv { context: format!("reading {}", self.name), source })?;
        if !more || image.empty() {
            return Ok(None);
        }
        let index = self.next_index;
        self.next_index += 1;
        let time_s = if self.live || self.fps <= 0.0 { self.opened.elapsed().as_secs_f64() } else { index as f64 / self.fps };
        Ok(Some(StreamFrame { index, time_s, frame: Frame::from_mat(image)? }))
    }
}

/// An undistorted image and the ideal (distortion-free) camera that took it.
#[derive(Debug, Clone)]
pub struct Undistorted {
    /// 8-bit BGR, `camera.image_width` x `camera.image_height`.
    pub image: Mat,
    /// Pinhole intrinsics with zero distortion: project with this camera to land on `image`.
    pub camera: Camera,
    /// 8-bit mask, 255 where the pixel was sampled from inside the raw frame
    /// (the rest is fill, whose border is no edge of anything); empty = all valid.
    pub valid: Mat,
}

impl Undistorted {
    /// The image as 8-bit grey.
    pub fn gray(&self) -> Result<Mat, FrameError> {
        let mut g = Mat::default();
        cv("grey conversion", imgproc::cvt_color_def(&self.image, &mut g, imgproc::COLOR_BGR2GRAY))?;
        Ok(g)
    }

    /// Writes the image as PNG (lossless).
    pub fn save_png(&self, path: &Path) -> Result<(), FrameError> {
        write_png(&self.image, path)
    }
}

/// Converts an 8-bit grey/BGR/BGRA image to BGR; anything else is a format error.
pub(crate) fn to_bgr(image: Mat) -> Result<Mat, FrameError> {
    let bad = |m: &Mat| FrameError::Format { cv_type: m.typ(), width: m.cols(), height: m.rows() };
    if image.empty() || image.depth() != opencv::core::CV_8U {
        return Err(bad(&image));
    }
    let code = match image.channels() {
        3 => return Ok(image),
        1 => imgproc::COLOR_GRAY2BGR,
        4 => imgproc::COLOR_BGRA2BGR,
        _ => return Err(bad(&image)),
    };
    let mut out = Mat::default();
    cv("colour conversion", imgproc::cvt_color_def(&image, &mut out, code))?;
    Ok(out)
}

/// Writes an 8-bit image as PNG, atomically ([`crate::files::write_atomic`]): encoded in memory, then written to a
/// temporary file renamed into place; a failed write is an error.
pub fn write_png(image: &Mat, path: &Path) -> Result<(), FrameError> {
    let mut buf = Vector::<u8>::new();
    let ok = imgcodecs::imencode_def(".png", image, &mut buf).map_err(|_| FrameError::Write { path: path.to_path_buf() })?;
    if !ok {
        return Err(FrameError::Write { path: path.to_path_buf() });
    }
    crate::files::write_atomic(path, buf.as_slice())?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(name: &str) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/opencv-chessboard").join(name)
    }

    #[test]
    fn a_real_photo_loads_as_bgr() {
        let f = Frame::load(&fixture("left01.jpg")).unwrap();
        assert_eq!((f.width(), f.height()), (640, 480));
        assert_eq!(f.image().channels(), 3);
    }

    #[test]
    fn missing_and_corrupt_files_are_distinct_clear_errors() {
        assert!(matches!(Frame::load(&fixture("no-such.jpg")), Err(FrameError::Missing { .. })));
        let dir = std::env::temp_dir().join(format!("boardcall-frame-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let bad = dir.join("bad.png");
        std::fs::write(&bad, b"\x89PNG\r\n\x1a\nnot really a png").unwrap();
        let e = Frame::load(&bad).unwrap_err();
        assert!(matches!(e, FrameError::Corrupt { .. }), "{e}");
        assert!(e.to_string().contains("bad.png"));
        std::fs::remove_dir_all(&dir).ok();
    }

    #[test]
    fn a_float_image_is_refused() {
        let m = Mat::new_rows_cols_with_default(4, 4, opencv::core::CV_32FC1, 0.0.into()).unwrap();
        assert!(matches!(Frame::from_mat(m), Err(FrameError::Format { .. })));
    }
}
