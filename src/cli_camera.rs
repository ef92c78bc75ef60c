//! The camera commands of the binary: `calibrate`, `locate`, `setup` and `rectify`, each from its files to
//! its outputs (part of the binary: errors as `anyhow`, exit codes from `main`).

use super::{board_file, save_atomically};
use anyhow::Result;
use boardcall::board::Board;
use boardcall::files::{check_outputs, Role};

pub(super) fn run_calibrate(pattern: &str, images: &[std::path::PathBuf], output: &std::path::Path, cfg: boardcall::calibrate::CalibrateConfig) -> Result<()> {
    use boardcall::calibrate::{Calibrator, Pattern};
    let inputs: Vec<Role> = images.iter().map(|p| Role::new(p, "calibration photo")).collect();
    check_outputs(&inputs, &[Role::new(output, "--output")])?;
    let pattern: Pattern = pattern.parse()?;
    let mut cal = Calibrator::new(pattern, cfg)?;
    for path in images {
        let frame = boardcall::frame::Frame::load(path)?;
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| path.display().to_string());
        if !cal.add_view(&name, &frame)? {
            eprintln!("boardcall: {name}: pattern not found, view skipped");
        }
    }
    let result = cal.calibrate()?;
    save_atomically(output, |tmp| result.save(tmp))?;
    say!("{}", serde_json::to_string_pretty(&result)?);
    Ok(())
}

pub(super) fn run_locate(
    image: &std::path::Path,
    board: &str,
    camera: &std::path::Path,
    output: Option<&std::path::Path>,
    points: Option<&std::path::Path>,
    overlay: Option<&std::path::Path>,
) -> Result<()> {
    use boardcall::locate::{self, LocateConfig, Locator};
    let mut inputs = vec![Role::new(image, "frame"), Role::new(camera, "camera file")];
    inputs.extend(points.map(|p| Role::new(p, "points file")));
    inputs.extend(board_file(board).map(|p| Role::new(p, "board file")));
    let mut outputs: Vec<Role> = output.map(|p| Role::new(p, "--output")).into_iter().collect();
    outputs.extend(overlay.map(|p| Role::new(p, "--overlay")));
    check_outputs(&inputs, &outputs)?;
    let board = Board::load(board)?;
    let cam = boardcall::camera::Camera::load(camera)?;
    let frame = boardcall::frame::Frame::load(image)?;
    let mut und = boardcall::undistort::Undistorter::new(cam, Default::default())?;
    let u = und.run(&frame)?;
    let mut locator = Locator::new(&board, LocateConfig::default());
    let found = match points {
        Some(p) => locate::read_points(p).and_then(|pts| locate::locate_from_points(&board, &cam, &pts, &LocateConfig::default())),
        None => locator.run(&u),
    };
    // The overlay shows the best candidate even when it is refused: the evidence for the refusal.
    let shown = found.as_ref().map(|p| p.pose).ok().or_else(|| locator.last_candidate());
    if let Some(path) = overlay {
        match shown {
            Some(shown) => boardcall::frame::write_png(&locator.overlay(&u, &shown)?, path)?,
            None => u.save_png(path)?,
        }
    }
    let pose = found?;
    if let Some(path) = output {
        pose.save(path)?;
    }
    say!("{}", serde_json::to_string_pretty(&pose)?);
    Ok(())
}

/// The lens models `setup` can estimate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(super) enum LensArg {
    Brown,
    Fisheye,
}

pub(super) fn run_setup(
    images: &[std::path::PathBuf],
    board: &str,
    points: Option<&std::path::Path>,
    lens: LensArg,
    no_distortion: bool,
    focal_px: Option<f64>,
    output: &std::path::Path,
) -> Result<()> {
    use boardcall::setup::{self, SetupConfig};
    let mut inputs: Vec<Role> = images.iter().map(|p| Role::new(p, "frame")).collect();
    inputs.extend(points.map(|p| Role::new(p, "points file")));
    inputs.extend(board_file(board).map(|p| Role::new(p, "board file")));
    let camera_out = output.join("camera.yaml");
    let pose_outs: Vec<std::path::PathBuf> =
        if images.len() == 1 { vec![output.join("pose.yaml")] } else { (0..images.len()).map(|i| output.join(format!("pose-{i}.yaml"))).collect() };
    let overlay_out = output.join("overlay.png");
    let mut outputs = vec![Role::new(&camera_out, "camera.yaml"), Role::new(&overlay_out, "overlay.png")];
    outputs.extend(pose_outs.iter().map(|p| Role::new(p, "pose file")));
    check_outputs(&inputs, &outputs)?;
    let board = Board::load(board)?;
    let frames = images.iter().map(|p| boardcall::frame::Frame::load(p)).collect::<Result<Vec<_>, _>>()?;
    let pts = points.map(boardcall::locate::read_points).transpose()?;
    let lens = match lens {
        LensArg::Brown => boardcall::camera::LensModel::Brown,
        LensArg::Fisheye => boardcall::camera::LensModel::Fisheye,
    };
    let cfg = SetupConfig { lens, distortion: !no_distortion, focal_px, ..SetupConfig::default() };
    // A set-up takes seconds (tens with several frames): a spinner says what it is doing (on a terminal only).
    let spinner = indicatif::ProgressBar::new_spinner();
    if let Ok(style) = indicatif::ProgressStyle::with_template("{spinner} {elapsed} {msg}") {
        spinner.set_style(style);
    }
    spinner.enable_steady_tick(std::time::Duration::from_millis(120));
    let est = setup::setup_with_progress(&board, &frames, pts.as_deref(), &cfg, &|what| spinner.set_message(what.to_string()));
    spinner.finish_and_clear();
    let est = est?;
    std::fs::create_dir_all(output).map_err(|e| anyhow::anyhow!("cannot create {}: {e}", output.display()))?;
    let mut extra = vec![("setup_focal_sigma_px", est.focal_sigma_px)];
    if let Some([sx, sy]) = est.principal_point_sigma_px {
        extra.extend([("setup_cx_sigma_px", sx), ("setup_cy_sigma_px", sy)]);
    }
    est.camera.save(&camera_out, &extra)?;
    // One pose file per frame used (a frame left out has none).
    for (bp, &i) in est.poses.iter().zip(&est.frames_used) {
        bp.save(&pose_outs[i])?;
    }
    for left in &est.frames_left_out {
        eprintln!("boardcall: frame {} ({}) left out: {}", left.index, images[left.index].display(), left.reason);
    }
    // The overlay of the first frame used: the board model drawn with the set-up camera and pose.
    let mut und = boardcall::undistort::Undistorter::new(est.camera, Default::default())?;
    let u = und.run(&frames[est.frames_used[0]])?;
    let mut locator = boardcall::locate::Locator::new(&board, boardcall::locate::LocateConfig::default());
    boardcall::frame::write_png(&locator.overlay(&u, &est.poses[0].pose)?, &overlay_out)?;
    say!("{}", serde_json::to_string_pretty(&est)?);
    Ok(())
}

pub(super) fn run_rectify(
    image: &std::path::Path,
    board: &str,
    camera: &std::path::Path,
    pose: Option<&std::path::Path>,
    output: &std::path::Path,
    cfg: boardcall::rectify::RectifyConfig,
) -> Result<()> {
    let mut inputs = vec![Role::new(image, "frame"), Role::new(camera, "camera file")];
    inputs.extend(pose.map(|p| Role::new(p, "pose file")));
    inputs.extend(board_file(board).map(|p| Role::new(p, "board file")));
    check_outputs(&inputs, &[Role::new(output, "--output")])?;
    let board = Board::load(board)?;
    let cam = boardcall::camera::Camera::load(camera)?;
    let frame = boardcall::frame::Frame::load(image)?;
    let pose = match pose {
        Some(p) => boardcall::camera::CameraPose::load(p)?,
        None => boardcall::locate::locate_frame(&board, &cam, &frame, Default::default())?.pose,
    };
    let mut r = boardcall::rectify::Rectifier::new(cam, pose, &board, cfg)?;
    let top = r.run(&frame)?;
    boardcall::frame::write_png(&top.image, output)?;
    say!("{}", serde_json::to_string_pretty(&top.geometry)?);
    Ok(())
}
