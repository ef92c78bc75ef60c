//! The `boardcall` command line: thin wiring from arguments to the library's stages.
//!
//! Exit codes (also in `boardcall --help` and README.md), from the library's one failure table
//! ([`boardcall::failure`]): 0 success; 1 unexpected internal error; 2 command-line usage error (also an output that
//! would overwrite an input); 3 invalid input (unreadable, malformed or out-of-limits board, events, image, video,
//! camera, pose, points, scene or fixture file); 4 refused: no trustworthy result (the board or calibration pattern not
//! found, a poor fit, a frame that cannot be read honestly); 5 an output could not be written.

mod cli_args;
mod cli_match;

use anyhow::{Context, Result};
use boardcall::board::{self, Board};
use boardcall::calls::{self, FoulLine};
use boardcall::geom::BoardPoint3;
use boardcall::files::{check_outputs, write_atomic, Role};
use cli_args::*;
use clap::Parser;
use serde_json::json;
use std::process::ExitCode;

/// Writes a line to standard output; a closed pipe (`boardcall ... | head`) ends
/// the program quietly instead of panicking.
macro_rules! say {
    ($($arg:tt)*) => {{
        use std::io::Write;
        if let Err(e) = writeln!(std::io::stdout().lock(), $($arg)*) {
            if e.kind() == std::io::ErrorKind::BrokenPipe {
                std::process::exit(0);
            }
            return Err(e.into());
        }
    }};
}

/// As [`say!`] without the newline.
macro_rules! say_raw {
    ($($arg:tt)*) => {{
        use std::io::Write;
        if let Err(e) = write!(std::io::stdout().lock(), $($arg)*) {
            if e.kind() == std::io::ErrorKind::BrokenPipe {
                std::process::exit(0);
            }
            return Err(e.into());
        }
    }};
}

// After the macros: the camera commands print with `say!`.
mod cli_camera;
use cli_camera::{run_calibrate, run_locate, run_rectify, run_setup};

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("boardcall: error: {err:#}");
            ExitCode::from(exit_code(&err))
        }
    }
}

/// Maps an error to the documented exit code: the first error in its chain the library's failure table knows
/// ([`boardcall::failure::classify`]); anything else is an internal error.
fn exit_code(err: &anyhow::Error) -> u8 {
    err.chain().find_map(boardcall::failure::classify).unwrap_or(boardcall::failure::Failure::Internal).exit_code()
}

/// The board argument as an input file, when it names one (not a built-in board).
fn board_file(spec: &str) -> Option<&std::path::Path> {
    let p = std::path::Path::new(spec);
    p.is_file().then_some(p)
}

/// Writes `path` atomically through a writer that takes a path (OpenCV FileStorage files): to a temporary file renamed
/// into place ([`boardcall::files::write_with`]); a failed write is an error.
fn save_atomically<E: std::fmt::Display>(path: &std::path::Path, save: impl FnOnce(&std::path::Path) -> Result<(), E>) -> Result<()> {
    boardcall::files::write_with(path, |tmp| save(tmp).map_err(|e| std::io::Error::other(e.to_string())))?;
    Ok(())
}

/// The detector's settings, with or without the hole-state model (`--no-model`).
fn detector_config(no_model: bool) -> boardcall::detect::DetectorConfig {
    boardcall::detect::DetectorConfig { hole_model: !no_model, ..Default::default() }
}

fn run(cli: Cli) -> Result<()> {
    let cores = || std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
    match cli.command {
        Command::Score { image, board, round, camera, pose, trust_pose, json, annotate, no_model, teams, save_pieces } => {
            let mut inputs = vec![Role::new(&image, "frame"), Role::new(&camera, "camera file")];
            inputs.extend(pose.as_deref().map(|p| Role::new(p, "pose file")));
            inputs.extend(board_file(&board).map(|p| Role::new(p, "board file")));
            inputs.extend(teams.pieces.as_deref().map(|p| Role::new(p, "pieces file")));
            let mut outputs: Vec<Role> = annotate.as_deref().map(|p| Role::new(p, "--annotate")).into_iter().collect();
            outputs.extend(save_pieces.as_deref().map(|p| Role::new(p, "--save-pieces")));
            check_outputs(&inputs, &outputs)?;
            let b = Board::load(&board)?;
            let cam = boardcall::camera::Camera::load(&camera)?;
            let frame = boardcall::frame::Frame::load(&image)?;
            let pose_input = match pose {
                Some(p) if trust_pose => {
                    match boardcall::camera::CameraPose::load_recorded(&p)? {
                        (pose, Some(position_sigma_mm)) => boardcall::score::PoseInput::Recorded { pose, position_sigma_mm },
                        (pose, None) => boardcall::score::PoseInput::Trusted(pose),
                    }
                }
                Some(p) => boardcall::score::PoseInput::Given(boardcall::camera::PoseFile::load(&p)?.into()),
                None => boardcall::score::PoseInput::Locate(boardcall::locate::LocateConfig::default()),
            };
            let scoring = round.scoring()?;
            // The game's designated foul line, when it has one, decides zone 1 / short.
            let cfg = teams.config(detector_config(no_model), Some(&frame))?;
            let (mut report, camera_pose) = boardcall::score::score_frame(&frame, &b, &cam, pose_input, cfg, round.foul()?)?;
            if let Some(out) = &save_pieces {
                // The cap as the frame was read with it: given, or its radius learned from the weights.
                let (radius, recess) = report.weight_cap.map_or((None, None), |c| (Some(c.radius_mm), c.recess_mm));
                let file = boardcall::detect::PiecesFile {
                    format: boardcall::detect::PIECES_FORMAT,
                    teams: report.teams.clone(),
                    weight_cap_radius_mm: radius,
                    weight_cap_recess_mm: recess,
                };
                if file.teams.is_empty() {
                    let problem = "sjoelen discs have no team colours to save".to_string();
                    return Err(boardcall::detect::DetectError::Config { field: "--save-pieces", problem }.into());
                }
                write_atomic(out, file.to_json().as_bytes())?;
            }
            if let Some(g) = scoring {
                report.add_round_score(&g, &b);
            }
            if let Some(out) = annotate {
                let img = boardcall::score::annotate(&frame, &cam, &camera_pose, &b, &report)?;
                boardcall::frame::Frame::from_mat(img)?.save_png(&out)?;
            }
            if json {
                say!("{}", serde_json::to_string_pretty(&report)?);
            } else {
                say!("{}", serde_json::to_string(&report)?);
            }
        }
        Command::Review { image, board, camera, pose, game, options, foul_line, piece, all_close, within, mm_per_px, output, record } => {
            let record_path = record.unwrap_or_else(|| output.with_extension("json"));
            let mut inputs = vec![Role::new(&image, "frame"), Role::new(&camera, "camera file")];
            inputs.extend(pose.as_deref().map(|p| Role::new(p, "pose file")));
            inputs.extend(board_file(&board).map(|p| Role::new(p, "board file")));
            check_outputs(&inputs, &[Role::new(&output, "--output"), Role::new(&record_path, "--record")])?;
            let b = Board::load(&board)?;
            let cam = boardcall::camera::Camera::load(&camera)?;
            let frame = boardcall::frame::Frame::load(&image)?;
            let pose_input = match pose {
                Some(p) => boardcall::score::PoseInput::Given(boardcall::camera::PoseFile::load(&p)?.into()),
                None => boardcall::score::PoseInput::Locate(boardcall::locate::LocateConfig::default()),
            };
            let foul = game_foul_line(game.as_deref(), &options, foul_line)?;
            let selection = match (piece, all_close) {
                (Some(id), _) => boardcall::review::Selection::Piece(id.parse()?),
                (None, true) => boardcall::review::Selection::AllClose { within_mm: within },
                (None, false) => boardcall::review::Selection::Flagged,
            };
            let cfg = boardcall::review::ReviewConfig { mm_per_px, ..Default::default() };
            let review = boardcall::review::review_frame(&frame, &b, &cam, pose_input, boardcall::detect::DetectorConfig::default(), foul, selection, &cfg)?;
            write_atomic(&record_path, (serde_json::to_string_pretty(&review.record)? + "\n").as_bytes())?;
            match &review.picture {
                Some(pic) => boardcall::frame::write_png(pic, &output)?,
                None => eprintln!("boardcall: no call matches ({}); no picture written", review.record.selection),
            }
            for item in &review.record.items {
                say!("{}: {}: {} ({})", item.piece.id, item.gap, item.verdict, item.confidence);
            }
        }
        Command::Watch { source, board, camera, round, pose, trust_pose, every, settle, still_mm, recheck_s, no_model, annotate, teams } => {
            use boardcall::watch::{PoseStart, WatchConfig, WatchEvent, Watcher};
            let b = Board::load(&board)?;
            let cam = boardcall::camera::Camera::load(&camera)?;
            let start = match pose {
                Some(p) if trust_pose => PoseStart::Trusted(boardcall::camera::CameraPose::load(&p)?),
                Some(p) => PoseStart::Given(boardcall::camera::PoseFile::load(&p)?.into()),
                None => PoseStart::Locate,
            };
            let mut stream = boardcall::frame::FrameSource::open(&source)?;
            let cfg = WatchConfig { every: every.frames(stream.fps()), settle_frames: settle, still_mm, recheck_s, ..WatchConfig::default() };
            let detector = teams.config(detector_config(no_model), None)?;
            let mut watcher = Watcher::new(&b, &cam, start, detector, round.foul()?, round.scoring()?, cfg)?;
            if let Some(dir) = &annotate {
                std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
            }
            let (mut frames, mut last_time) = (0u64, 0.0f64);
            while let Some(f) = stream.next_frame()? {
                for event in watcher.push(&f)? {
                    if let (Some(dir), WatchEvent::Settled { frame, report, .. }) = (&annotate, &event) {
                        let pose = boardcall::camera::CameraPose::from_rvec_tvec(report.pose.rvec, report.pose.tvec);
                        let img = boardcall::score::annotate(&f.frame, &cam, &pose, &b, report)?;
                        boardcall::frame::write_png(&img, &dir.join(format!("frame-{frame:06}.png")))?;
                    }
                    say!("{}", serde_json::to_string(&event)?);
                }
                (frames, last_time) = (f.index + 1, f.time_s);
            }
            say!("{}", serde_json::to_string(&WatchEvent::End { frames, time_s: last_time })?);
        }
        Command::Match(args) => {
            let detector = detector_config(args.no_model);
            cli_match::run(args, detector)?;
        }
        Command::Eval { dir, pose, json, no_model } => {
            let pose = match pose {
                PoseArg::Locate => boardcall::eval::PoseSource::Locate,
                PoseArg::Truth => boardcall::eval::PoseSource::Truth,
            };
            let report = boardcall::eval::evaluate(&dir, pose, &detector_config(no_model))?;
            if json {
                say!("{}", serde_json::to_string_pretty(&report)?);
            } else {
                say_raw!("{}", boardcall::eval::render_text(&report));
            }
        }
        Command::EvalLocate { dir, json, overlays, line_levels, camera_off } => {
            if let Some(o) = &overlays {
                std::fs::create_dir_all(o).with_context(|| format!("creating {}", o.display()))?;
            }
            let cfg = boardcall::locate::LocateConfig { line_levels, ..Default::default() };
            let report = boardcall::eval::locate::evaluate_locate(&dir, &cfg, overlays.as_deref(), camera_off, |o| {
                if !json {
                    use std::io::Write;
                    // A closed pipe ends the listing; the summary below reports it.
                    let _ = writeln!(std::io::stdout().lock(), "{}", boardcall::eval::locate::outcome_line(o));
                }
            })?;
            if json {
                say!("{}", serde_json::to_string_pretty(&report)?);
            } else {
                say_raw!("{}", boardcall::eval::locate::render_text(&report));
            }
        }
        Command::Game { rules, options, events } => {
            let config = boardcall::rules::GameConfig::with_options(rules.parse()?, &options)?;
            let text = std::fs::read_to_string(&events).with_context(|| format!("reading {}", events.display()))?;
            let log = boardcall::rules::EventLog::from_json(&text).with_context(|| format!("in {}", events.display()))?;
            let board = Board::load(log.board.as_deref().unwrap_or(config.rules.default_board()))?;
            let game = boardcall::rules::play(&config, &board, &log).with_context(|| format!("in {}", events.display()))?;
            say!("{}", serde_json::to_string_pretty(&game)?);
        }
        Command::Render { scene, output, truth, threads } => {
            let camera_out = truth.as_deref().map(|t| t.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(std::path::Path::new(".")).join(boardcall::fixture::CAMERA_FILE));
            let mut outputs = vec![Role::new(&output, "--output")];
            outputs.extend(truth.as_deref().map(|p| Role::new(p, "--truth")));
            outputs.extend(camera_out.as_deref().map(|p| Role::new(p, "the camera file beside --truth")));
            check_outputs(&[Role::new(&scene, "scene file")], &outputs)?;
            let ls = boardcall::render::Scene::load(&scene)?;
            let img = boardcall::render::render(&ls, threads.unwrap_or_else(cores));
            boardcall::render::effects::write_image(&img, &output, ls.scene.effects.jpeg_quality)?;
            if let Some(path) = truth {
                let name = output.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
                let t = boardcall::render::truth::truth_for(&ls, &name);
                write_atomic(&path, (serde_json::to_string_pretty(&t)? + "\n").as_bytes())?;
                if let Some(cam_path) = &camera_out {
                    ls.scene.camera.intrinsics.save(cam_path, &[])?;
                }
            }
        }
        Command::Calibrate { pattern, images, output, fix_aspect_ratio, zero_tangent, fix_k3 } => {
            let cfg = boardcall::calibrate::CalibrateConfig { fix_aspect_ratio, zero_tangent, fix_k3, ..Default::default() };
            run_calibrate(&pattern, &images, &output, cfg)?;
        }
        Command::Setup { images, board, points, lens, no_distortion, focal_px, output } => {
            run_setup(&images, &board, points.as_deref(), lens, no_distortion, focal_px, &output)?;
        }
        Command::Locate { image, board, camera, output, points, overlay } => {
            run_locate(&image, &board, &camera, output.as_deref(), points.as_deref(), overlay.as_deref())?;
        }
        Command::Rectify { image, board, camera, pose, output, mm_per_px, margin, height } => {
            let cfg = boardcall::rectify::RectifyConfig { mm_per_px, margin_mm: margin, height_mm: height, ..Default::default() };
            run_rectify(&image, &board, &camera, pose.as_deref(), &output, cfg)?;
        }
        Command::Plan { scene } => {
            let ls = boardcall::render::Scene::load(&scene)?;
            say!("{}", serde_json::to_string_pretty(&boardcall::render::plan::plan(&ls))?);
        }
        Command::Fixtures { action: FixturesAction::Generate { varied, teams, seed, output, threads } } => {
            let threads = threads.unwrap_or_else(cores);
            let progress = |name: &str| eprintln!("rendered {name}");
            let truths = if teams {
                let mut cfg = boardcall::render::teams::default_config();
                cfg.seed = seed.unwrap_or(cfg.seed);
                boardcall::render::teams::generate(&cfg, &output, threads, progress)?
            } else if varied {
                let cfg = boardcall::render::generate::GenerateConfig { seed: seed.unwrap_or(boardcall::render::varied::VARIED_SEED), ..Default::default() };
                boardcall::render::varied::generate(&cfg, &output, threads, progress)?
            } else {
                let cfg = boardcall::render::generate::GenerateConfig { seed: seed.unwrap_or(boardcall::render::generate::DEFAULT_SEED), ..Default::default() };
                boardcall::render::generate::generate(&cfg, &output, threads, progress)?
            };
            say!("{} fixtures written to {}", truths.len(), output.display());
        }
        Command::Fixtures { action: FixturesAction::TrainingSet { seed, recipe, count, output, supersample, threads } } => {
            let cfg = boardcall::model::training::TrainingConfig { seed, recipe: recipe.into(), scenes: count, supersample, threads: threads.unwrap_or_else(cores) };
            let s = boardcall::model::training::write_training_set(&cfg, &output, |name| eprintln!("rendered {name}"))?;
            say!(
                "{} scenes, {} hole patches ({} with a leaner, {} with flat washers, {} with two or more) written to {}",
                s.scenes,
                s.patches,
                s.leaners,
                s.flat,
                s.doubles,
                output.display()
            );
        }
        Command::Fixtures { action: FixturesAction::Retruth { dir } } => {
            for f in boardcall::fixture::list(&dir)? {
                if boardcall::fixture::rewrite_truth(&f)? {
                    say!("rewrote {}", f.join(boardcall::fixture::TRUTH_FILE).display());
                }
            }
        }
        Command::Fixtures { action: FixturesAction::List { dir } } => {
            for f in boardcall::fixture::list(&dir)? {
                say!("{}", f.display());
            }
        }
        Command::Boards => {
            for b in board::builtins() {
                let kind = serde_json::to_value(b.kind())?;
                say!("{:<18} {:<13} {}", b.name, kind.as_str().unwrap_or_default(), b.description);
            }
        }
        Command::Board { action: BoardAction::Show { name, toml } } => {
            let b = Board::load(&name)?;
            if toml {
                say_raw!("{}", b.to_toml());
            } else {
                say!("{}", serde_json::to_string_pretty(&b)?);
            }
        }
        Command::Call { board, x, y, radius, foul_line, z, tilt } => {
            let b = Board::load(&board)?;
            let piece = b.piece();
            let r = radius.unwrap_or(piece.radius_mm);
            if r > b.surface.width_mm / 2.0 {
                use clap::CommandFactory;
                let msg = format!("--radius {r} mm: a piece is no larger than the board ({} mm wide)", b.surface.width_mm);
                Cli::command().error(clap::error::ErrorKind::ValueValidation, msg).exit();
            }
            let c = calls::call_piece(&b, BoardPoint3::new(x, y, z), r, tilt, game_foul_line(None, &[], foul_line)?);
            let out = json!({
                "board": b.name, "piece": piece.kind, "x_mm": x, "y_mm": y, "radius_mm": r, "call": c.name(),
                "value": c.value(&b), "place": c.place(), "boundary": c.boundary(), "margin_mm": c.margin_mm(),
            });
            say!("{}", serde_json::to_string_pretty(&out).context("writing the call")?);
        }
    }
    Ok(())
}

/// The designated shuffleboard foul line: the game's `foul_line` option when a game is named, else the flag.
fn game_foul_line(game: Option<&str>, options: &[String], flag: FoulArg) -> Result<FoulLine> {
    let rules: Option<boardcall::rules::Rules> = game.map(str::parse).transpose()?;
    let game_foul = rules
        .map(|r| boardcall::rules::GameConfig::with_options(r, options))
        .transpose()?
        .and_then(|c| c.options().iter().find(|(k, _)| *k == "foul_line").map(|(_, v)| v.clone()));
    Ok(match (game_foul.as_deref(), flag) {
        (Some("short"), _) | (None, FoulArg::Short) => FoulLine::Short,
        (Some(_), _) | (None, FoulArg::Long) => FoulLine::Long,
    })
}
