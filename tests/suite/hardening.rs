//! Every bad input of the hardening issue as a named test: a clear error with the documented exit code (README), or a
//! refusal with the reason, never a panic, a hang, a confident score from a damaged frame, or a lost file.
//!
//! Exit codes: 2 usage, 3 invalid input, 4 refused (no trustworthy result), 5 output not written.

use crate::common;
use common::Scratch;
use boardcall::board::Board;
use boardcall::calls::FoulLine;
use boardcall::detect::DetectorConfig;
use boardcall::fixture::Fixture;
use boardcall::frame::Frame;
use boardcall::score::{score_frame, PoseInput, ScoreError};
use opencv::core::{Mat, Scalar, Vector};
use opencv::prelude::*;
use opencv::{imgcodecs, imgproc};
use std::path::{Path, PathBuf};
use std::process::Command;

const SHUFFLE: &str = "05-shuffleboard-22ft-line_edge";
const WASHER: &str = "40-yocu-4-plain";

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn fixture(name: &str) -> Fixture {
    Fixture::load(&root().join("fixtures/scenes").join(name)).unwrap()
}

/// A scratch folder of this test's own.
fn scratch(test: &str) -> Scratch {
    common::scratch("hardening", test)
}

/// Runs the binary; its exit code and standard error.
fn run(args: &[&str]) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_boardcall")).args(args).output().unwrap();
    (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stderr).into_owned())
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// The fixture's true pose, saved as a pose file in `dir`.
fn pose_file(f: &Fixture, dir: &Path) -> PathBuf {
    let path = dir.join("pose.yaml");
    f.truth.camera.pose().save(&path, &[]).unwrap();
    path
}


/// Scores a frame with the fixture's true pose trusted (no check against the frame: only the frame's own honesty
/// stands between a bad frame and a score).
fn score_trusted(f: &Fixture, frame: &Frame) -> Result<boardcall::score::FrameReport, ScoreError> {
    let board = Board::load(&f.truth.board).unwrap();
    score_frame(frame, &board, &f.camera, PoseInput::Trusted(f.truth.camera.pose()), DetectorConfig::default(), FoulLine::Long).map(|(r, _)| r)
}

fn load(f: &Fixture) -> Frame {
    Frame::load(&f.image_path()).unwrap()
}

/// The frame with `op` applied to its image.
fn altered(frame: &Frame, op: impl Fn(&Mat, &mut Mat)) -> Frame {
    let mut out = Mat::default();
    op(frame.image(), &mut out);
    Frame::from_mat(out).unwrap()
}


fn refused_for(e: &ScoreError, why: &str) -> bool {
    matches!(e, ScoreError::Unreadable { reasons } if reasons.iter().any(|r| r.contains(why)))
}

mod frames {
    use super::*;

    #[test]
    fn a_jpeg_truncated_at_62_percent_is_refused() {
        let f = fixture(SHUFFLE);
        let dir = scratch("truncated-jpeg");
        let bytes = std::fs::read(f.image_path()).unwrap();
        let cut = dir.join("cut.jpg");
        std::fs::write(&cut, &bytes[..bytes.len() * 62 / 100]).unwrap();
        let (code, err) = run(&["score", s(&cut), "--board", &f.truth.board, "--camera", s(&f.dir.join("camera.yaml")), "--game", "knock-off"]);
        assert_eq!(code, 3, "{err}");
        assert!(err.contains("damaged"), "{err}");
        // Cut just before the end-of-image marker: the picture is complete but the file is not.
        std::fs::write(&cut, &bytes[..bytes.len() - 2]).unwrap();
        assert!(Frame::load(&cut).is_err());
    }

    #[test]
    fn a_truncated_png_is_refused() {
        let f = fixture(SHUFFLE);
        let dir = scratch("truncated-png");
        let mut buf = Vector::<u8>::new();
        imgcodecs::imencode_def(".png", load(&f).image(), &mut buf).unwrap();
        let cut = dir.join("cut.png");
        std::fs::write(&cut, &buf.as_slice()[..buf.len() * 62 / 100]).unwrap();
        assert!(matches!(Frame::load(&cut), Err(boardcall::frame::FrameError::Damaged { .. })));
    }

    #[test]
    fn a_jpeg_with_damaged_data_is_refused() {
        let f = fixture(SHUFFLE);
        let dir = scratch("damaged-jpeg");
        let mut bytes = std::fs::read(f.image_path()).unwrap();
        // A marker in the middle of the entropy-coded data: a decoder that tolerates it resynchronises and paints
        // the rest of the picture from the wrong place.
        let mid = bytes.len() / 2;
        bytes[mid] = 0xFF;
        bytes[mid + 1] = 0xC4;
        let bad = dir.join("bad.jpg");
        std::fs::write(&bad, &bytes).unwrap();
        let e = Frame::load(&bad).unwrap_err();
        assert!(matches!(e, boardcall::frame::FrameError::Damaged { .. } | boardcall::frame::FrameError::Corrupt { .. }), "{e}");
    }

    #[test]
    fn a_decode_partly_filled_with_grey_is_refused() {
        let f = fixture(SHUFFLE);
        let frame = altered(&load(&f), |src, out| {
            *out = src.clone();
            let h = out.rows();
            let mut band = Mat::roi_mut(out, opencv::core::Rect::new(0, h * 6 / 10, out.cols(), h - h * 6 / 10)).unwrap();
            band.set_to_def(&Scalar::all(128.0)).unwrap();
        });
        let e = score_trusted(&f, &frame).unwrap_err();
        assert!(refused_for(&e, "partial"), "{e}");
    }

    #[test]
    fn a_grey_scale_frame_is_refused_where_teams_are_told_by_colour() {
        for name in [SHUFFLE, WASHER] {
            let f = fixture(name);
            let frame = altered(&load(&f), |src, out| {
                let mut g = Mat::default();
                imgproc::cvt_color_def(src, &mut g, imgproc::COLOR_BGR2GRAY).unwrap();
                imgproc::cvt_color_def(&g, out, imgproc::COLOR_GRAY2BGR).unwrap();
            });
            let e = score_trusted(&f, &frame).unwrap_err();
            assert!(refused_for(&e, "no colour"), "{name}: {e}");
        }
        // Through the command line, a grey-scale PNG file: refused, exit 4.
        let f = fixture(SHUFFLE);
        let dir = scratch("grey");
        let grey = dir.join("grey.png");
        let mut g = Mat::default();
        imgproc::cvt_color_def(load(&f).image(), &mut g, imgproc::COLOR_BGR2GRAY).unwrap();
        imgcodecs::imwrite_def(s(&grey), &g).unwrap();
        let pose = pose_file(&f, &dir);
        let (code, err) = run(&[
            "score", s(&grey), "--board", &f.truth.board, "--camera", s(&f.dir.join("camera.yaml")), "--pose", s(&pose), "--trust-pose",
        ]);
        assert_eq!(code, 4, "{err}");
        assert!(err.contains("no colour"), "{err}");
    }

    #[test]
    fn a_black_frame_with_a_trusted_pose_is_refused() {
        let f = fixture(SHUFFLE);
        let frame = altered(&load(&f), |src, out| {
            *out = Mat::new_rows_cols_with_default(src.rows(), src.cols(), src.typ(), Scalar::all(2.0)).unwrap();
        });
        assert!(refused_for(&score_trusted(&f, &frame).unwrap_err(), "too dark"));
    }

    #[test]
    fn a_washed_out_frame_is_refused() {
        let f = fixture(WASHER);
        // Exposure pushed 4x: most of the frame clips white.
        let frame = altered(&load(&f), |src, out| src.convert_to(out, -1, 4.0, 0.0).unwrap());
        let e = score_trusted(&f, &frame).unwrap_err();
        assert!(refused_for(&e, "washed out"), "{e}");
    }

    #[test]
    fn a_frame_far_out_of_focus_is_refused() {
        let f = fixture(SHUFFLE);
        let frame = altered(&load(&f), |src, out| {
            imgproc::gaussian_blur_def(src, out, opencv::core::Size::new(0, 0), 12.0).unwrap();
        });
        let e = score_trusted(&f, &frame).unwrap_err();
        assert!(refused_for(&e, "out of focus"), "{e}");
    }

    #[test]
    fn a_slightly_soft_frame_is_still_scored() {
        // The refusals must not touch usable frames: a little softer than the fixtures, same calls.
        for name in [SHUFFLE, WASHER] {
            let f = fixture(name);
            let sharp = score_trusted(&f, &load(&f)).unwrap();
            let soft = altered(&load(&f), |src, out| {
                imgproc::gaussian_blur_def(src, out, opencv::core::Size::new(0, 0), 1.0).unwrap();
            });
            let soft = score_trusted(&f, &soft).unwrap();
            let calls = |r: &boardcall::score::FrameReport| r.pieces.iter().map(|p| format!("{} {}", p.id, p.call)).collect::<Vec<_>>();
            assert_eq!(calls(&sharp), calls(&soft), "{name}");
        }
    }

    /// A PNG whose header claims `w` x `h` pixels, with a valid CRC and no image data.
    fn png_header_only(w: u32, h: u32) -> Vec<u8> {
        fn crc32(bytes: &[u8]) -> u32 {
            let mut c = 0xFFFF_FFFFu32;
            for &b in bytes {
                c ^= u32::from(b);
                for _ in 0..8 {
                    c = if c & 1 != 0 { 0xEDB8_8320 ^ (c >> 1) } else { c >> 1 };
                }
            }
            !c
        }
        let mut ihdr = b"IHDR".to_vec();
        ihdr.extend_from_slice(&w.to_be_bytes());
        ihdr.extend_from_slice(&h.to_be_bytes());
        ihdr.extend_from_slice(&[8, 2, 0, 0, 0]);
        let mut out = b"\x89PNG\r\n\x1a\n".to_vec();
        out.extend_from_slice(&13u32.to_be_bytes());
        out.extend_from_slice(&ihdr);
        out.extend_from_slice(&crc32(&ihdr).to_be_bytes());
        out
    }

    #[test]
    fn a_frame_beyond_8k_is_refused_before_it_is_decoded() {
        let dir = scratch("huge");
        let huge = dir.join("huge.png");
        std::fs::write(&huge, png_header_only(20_000, 20_000)).unwrap();
        let t = std::time::Instant::now();
        let e = Frame::load(&huge).unwrap_err();
        assert!(matches!(e, boardcall::frame::FrameError::TooLarge { .. }), "{e}");
        assert!(t.elapsed().as_secs_f64() < 1.0, "refused from the header, not after decoding");
        let f = fixture(SHUFFLE);
        let (code, err) = run(&["score", s(&huge), "--board", &f.truth.board, "--camera", s(&f.dir.join("camera.yaml"))]);
        assert_eq!(code, 3, "{err}");
    }

    #[test]
    fn a_frame_of_the_wrong_size_is_invalid_input_in_every_command() {
        let f = fixture(SHUFFLE);
        let other = fixture(WASHER);
        let cam = s(&f.dir.join("camera.yaml")).to_string();
        let img = other.image_path();
        for args in [
            vec!["score", s(&img), "--board", &f.truth.board, "--camera", &cam],
            vec!["locate", s(&img), "--board", &f.truth.board, "--camera", &cam],
        ] {
            let (code, err) = run(&args);
            if (f.camera.image_width, f.camera.image_height) != (other.camera.image_width, other.camera.image_height) {
                assert_eq!(code, 3, "{args:?}: {err}");
            }
        }
    }
}

mod outputs {
    use super::*;

    #[test]
    fn annotating_over_the_input_frame_is_refused_and_the_frame_kept() {
        let f = fixture(WASHER);
        let dir = scratch("annotate-input");
        let frame = dir.join("frame.jpg");
        std::fs::copy(f.image_path(), &frame).unwrap();
        let before = std::fs::read(&frame).unwrap();
        let (code, err) = run(&["score", s(&frame), "--board", &f.truth.board, "--camera", s(&f.dir.join("camera.yaml")), "--annotate", s(&frame)]);
        assert_eq!(code, 2, "{err}");
        assert!(err.contains("refusing to overwrite"), "{err}");
        assert_eq!(std::fs::read(&frame).unwrap(), before, "the input frame is untouched");
    }

    #[test]
    fn a_pose_written_over_the_camera_file_is_refused() {
        let f = fixture(WASHER);
        let dir = scratch("pose-over-camera");
        let cam = dir.join("camera.yaml");
        std::fs::copy(f.dir.join("camera.yaml"), &cam).unwrap();
        let before = std::fs::read(&cam).unwrap();
        let (code, err) = run(&["locate", s(&f.image_path()), "--board", &f.truth.board, "--camera", s(&cam), "-o", s(&cam)]);
        assert_eq!(code, 2, "{err}");
        assert_eq!(std::fs::read(&cam).unwrap(), before);
    }

    #[test]
    fn a_write_that_fails_is_an_error() {
        let f = fixture(WASHER);
        let dir = scratch("write-fails");
        let cam = s(&f.dir.join("camera.yaml")).to_string();
        let img = f.image_path();
        if Path::new("/dev/full").exists() {
            let (code, err) = run(&["locate", s(&img), "--board", &f.truth.board, "--camera", &cam, "-o", "/dev/full"]);
            assert_eq!(code, 5, "{err}");
        }
        let missing = dir.join("no-such-folder").join("pose.yaml");
        let (code, err) = run(&["locate", s(&img), "--board", &f.truth.board, "--camera", &cam, "-o", s(&missing)]);
        assert_eq!(code, 5, "{err}");
        let (code, err) = run(&["render", s(&f.dir.join("scene.json")), "-o", s(&dir.join("no-such-folder").join("x.png"))]);
        assert_eq!(code, 5, "{err}");
    }

    #[test]
    fn an_unknown_image_format_is_a_usage_error() {
        let f = fixture(WASHER);
        let dir = scratch("render-bmp");
        let (code, err) = run(&["render", s(&f.dir.join("scene.json")), "-o", s(&dir.join("x.bmp"))]);
        assert_eq!(code, 2, "{err}");
    }
}

mod numbers {
    use super::*;

    #[test]
    fn call_refuses_numbers_that_are_not_finite() {
        for args in [
            ["--x", "NaN", "--y", "100"],
            ["--x", "0", "--y", "inf"],
            ["--x", "0", "--y", "-inf"],
        ] {
            let mut all = vec!["call", "--board", "shuffleboard-22ft"];
            all.extend(args);
            let (code, err) = run(&all);
            assert_eq!(code, 2, "{args:?}: {err}");
            assert!(err.contains("finite"), "{err}");
        }
        let (code, err) = run(&["call", "--board", "holeyboard", "--x", "0", "--y", "100", "--tilt", "NaN"]);
        assert_eq!(code, 2, "{err}");
        let (code, err) = run(&["call", "--board", "sjoelbak", "--x", "NaN", "--y", "100"]);
        assert_eq!(code, 2, "{err}");
    }

    #[test]
    fn call_refuses_a_negative_or_oversized_radius() {
        let (code, err) = run(&["call", "--board", "shuffleboard-22ft", "--x", "0", "--y", "100", "--radius", "-5"]);
        assert_eq!(code, 2, "{err}");
        assert!(err.contains("must be positive"), "a negative radius is a bad value, not an unknown argument: {err}");
        let (code, err) = run(&["call", "--board", "shuffleboard-22ft", "--x", "0", "--y", "100", "--radius", "5000"]);
        assert_eq!(code, 2, "{err}");
    }

    fn board_with(dir: &Path, name: &str, from: &str, to: &str) -> PathBuf {
        let text = Board::load("shuffleboard-22ft").unwrap().to_toml();
        assert!(text.contains(from), "{from}");
        let path = dir.join(name);
        std::fs::write(&path, text.replacen(from, to, 1)).unwrap();
        path
    }

    #[test]
    fn a_board_beyond_physical_limits_is_refused_at_once() {
        let dir = scratch("board-limits");
        for (name, to) in [
            ("e300.toml", "length_mm = 1e300"),
            ("e12.toml", "length_mm = 1e12"),
            ("e9.toml", "length_mm = 1e9"),
            ("nan.toml", "length_mm = nan"),
        ] {
            let board = board_with(&dir, name, "length_mm = 6299.2", to);
            let t = std::time::Instant::now();
            let (code, err) = run(&["call", "--board", s(&board), "--x", "0", "--y", "100"]);
            assert_eq!(code, 3, "{name}: {err}");
            assert!(err.contains("surface.length_mm"), "the field is named: {err}");
            assert!(t.elapsed().as_secs_f64() < 10.0);
        }
        let wide = board_with(&dir, "wide.toml", "width_mm = 508.0", "width_mm = 1e9");
        let (code, err) = run(&["board", "show", s(&wide)]);
        assert_eq!(code, 3, "{err}");
    }

    #[test]
    fn a_piece_larger_than_the_board_is_refused() {
        let dir = scratch("huge-piece");
        let board = board_with(&dir, "big-weight.toml", "weight_diameter_mm = 58.74", "weight_diameter_mm = 5000.0");
        let (code, err) = run(&["board", "show", s(&board)]);
        assert_eq!(code, 3, "{err}");
        assert!(err.contains("weight_diameter_mm"), "{err}");
    }

    #[test]
    fn plan_on_an_absurdly_wide_board_is_refused_not_hung() {
        let f = fixture(SHUFFLE);
        let dir = scratch("plan-wide");
        let board = board_with(&dir, "wide.toml", "width_mm = 508.0", "width_mm = 1e9");
        let mut scene: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(f.dir.join("scene.json")).unwrap()).unwrap();
        scene["board"] = serde_json::Value::String(s(&board).to_string());
        let path = dir.join("scene.json");
        std::fs::write(&path, scene.to_string()).unwrap();
        let t = std::time::Instant::now();
        let (code, err) = run(&["plan", s(&path)]);
        assert_eq!(code, 3, "{err}");
        assert!(t.elapsed().as_secs_f64() < 10.0);
    }

    #[test]
    fn an_unknown_key_in_a_board_file_is_named_as_unknown() {
        let dir = scratch("unknown-key");
        let board = board_with(&dir, "typo.toml", "trey_line_mm = 152.4\ndeuce", "trey_lin_mm = 152.4\ndeuce");
        let (code, err) = run(&["board", "show", s(&board)]);
        assert_eq!(code, 3, "{err}");
        assert!(err.contains("trey_lin_mm") && err.contains("not a known key"), "{err}");
    }

    fn game_with_start(dir: &Path, rules: &str, red: &str, options: &[&str]) -> (i32, String) {
        let log = format!(r#"{{"format": 1, "rules": "{rules}", "first": "red", "start_scores": {{"red": {red}}}, "events": []}}"#);
        let path = dir.join(format!("{rules}-{red}.json"));
        std::fs::write(&path, log).unwrap();
        let mut args = vec!["game", "--rules", rules, "--events", s(&path)];
        for o in options {
            args.extend(["--option", o]);
        }
        let out = Command::new(env!("CARGO_BIN_EXE_boardcall")).args(&args).output().unwrap();
        (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stderr).into_owned())
    }

    #[test]
    fn start_scores_a_game_cannot_have_are_refused() {
        let dir = scratch("start-scores");
        // Near i64::MAX: once wrapped to a negative total.
        assert_eq!(game_with_start(&dir, "knock-off", "9223372036854775800", &[]).0, 3);
        assert_eq!(game_with_start(&dir, "knock-off", "15", &[]).0, 3, "15 has already won");
        assert_eq!(game_with_start(&dir, "knock-off", "14", &[]).0, 0);
        assert_eq!(game_with_start(&dir, "holeyboard", "99", &[]).0, 3);
        // HoleyBoard below zero: going over 21 from 7 with all three washers in the 5-hole leaves 7 - 15 = -8, the
        // lowest score the rules reach; -7 is reachable, -9 is not, and with `below_zero=floor` nothing below 0 is.
        assert_eq!(game_with_start(&dir, "holeyboard", "-7", &[]).0, 0);
        assert_eq!(game_with_start(&dir, "holeyboard", "-9", &[]).0, 3);
        assert_eq!(game_with_start(&dir, "holeyboard", "-7", &["below_zero=floor"]).0, 3);
        assert_eq!(game_with_start(&dir, "yocu-4", "21", &[]).0, 3);
        assert_eq!(game_with_start(&dir, "yocu-4", "-1", &[]).0, 3);
    }

    #[test]
    fn eval_of_an_empty_folder_is_invalid_input() {
        let dir = scratch("eval-empty");
        let (code, err) = run(&["eval", s(&dir)]);
        assert_eq!(code, 3, "{err}");
    }
}

mod poses {
    use super::*;

    #[test]
    fn a_given_pose_the_frame_does_not_confirm_says_so() {
        let f = fixture(WASHER);
        let dir = scratch("given-pose");
        let mut pose = f.truth.camera.pose();
        // The camera knocked 80 mm sideways.
        pose.translation[0] += 80.0;
        let path = dir.join("moved.yaml");
        pose.save(&path, &[]).unwrap();
        let (code, err) = run(&["score", s(&f.image_path()), "--board", &f.truth.board, "--camera", s(&f.dir.join("camera.yaml")), "--pose", s(&path)]);
        assert_eq!(code, 4, "{err}");
        assert!(err.contains("given pose"), "the refusal names the given pose as what failed: {err}");
    }
}

mod whole_files {
    use super::*;

    fn jpegs_under(dir: &Path, out: &mut Vec<PathBuf>) {
        for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                jpegs_under(&p, out);
            } else if p.extension().is_some_and(|x| x.eq_ignore_ascii_case("jpg") || x.eq_ignore_ascii_case("jpeg")) {
                out.push(p);
            }
        }
    }

    /// The strict checks refuse no whole file: every JPEG of the fixtures (rendered and real photos), and of any
    /// folder named in `BOARDCALL_EXTRA_JPEGS` (e.g. the shared real photos), walks whole and loads.
    #[test]
    fn every_whole_jpeg_is_accepted() {
        let mut files = Vec::new();
        jpegs_under(&root().join("fixtures"), &mut files);
        if let Some(extra) = std::env::var_os("BOARDCALL_EXTRA_JPEGS") {
            jpegs_under(Path::new(&extra), &mut files);
        }
        assert!(files.len() > 60, "{} files", files.len());
        for p in &files {
            let bytes = std::fs::read(p).unwrap();
            assert_eq!(boardcall::frame::jpeg_scan::check(&bytes), Ok(()), "{}", p.display());
            assert!(Frame::load(p).is_ok(), "{}", p.display());
        }
        eprintln!("{} whole JPEG files accepted", files.len());
    }
}

