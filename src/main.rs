//! The `boardcall` command line: thin wiring from arguments to the library's stages.
//!
//! Exit codes (also in `boardcall --help` and README.md), from the library's one failure table
//! ([`boardcall::failure`]): 0 success; 1 unexpected internal error; 2 command-line usage error (also an output that
//! would overwrite an input); 3 invalid input (unreadable, malformed or out-of-limits board, events, image, video,
//! camera, pose, points, scene or fixture file); 4 refused: no trustworthy result (the board or calibration pattern not
//! found, a poor fit, a frame that cannot be read honestly); 5 an output could not be written.

mod cli_match;

use anyhow::{Context, Result};
use boardcall::board::{self, Board};
use boardcall::calls::{self, FoulLine};
use boardcall::geom::BoardPoint3;
use boardcall::files::{check_outputs, write_atomic, Role};
use clap::{Parser, Subcommand};
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
use cli_camera::{run_calibrate, run_locate, run_rectify, run_setup, LensArg};

const EXIT_CODES: &str = "Exit codes:
  0  success
  1  unexpected internal error
  2  command-line usage error
  3  invalid input: an unreadable, malformed or out-of-limits board, events, image, video, camera, pose, points,
     scene or fixture file (or a camera device that cannot be opened)
  4  refused: no trustworthy result (the board or calibration pattern not found, a poor or ambiguous fit, a given
     pose the frame does not confirm, a frame too dark, washed out, grey-scale, damaged or out of focus)
  5  an output file could not be written (an output that would overwrite an input is a usage error, 2)";

#[derive(Parser)]
#[command(name = "boardcall", version, about = "Scores table games from an overhead camera, to the millimetre.", after_help = EXIT_CODES)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Score one frame: locate the board (or use --pose), detect and measure every piece, call it,
    /// and score the round with the rules engine. JSON on stdout (docs/report-format.md).
    #[command(after_help = "Example: boardcall score fixtures/scenes/00-shuffleboard-22ft-plain/image.jpg --board shuffleboard-22ft \\\n           --game knock-off --camera fixtures/scenes/00-shuffleboard-22ft-plain/camera.yaml")]
    Score {
        /// The frame (PNG, JPEG, ...), as the camera took it.
        image: std::path::PathBuf,
        /// A built-in board name, NAME@VARIANT, or a board file.
        #[arg(long)]
        board: String,
        #[command(flatten)]
        round: RoundArgs,
        /// The camera file (OpenCV FileStorage YAML, from `boardcall calibrate`).
        #[arg(long)]
        camera: std::path::PathBuf,
        /// A pose file (from `boardcall locate -o`) for a fixed camera; default: locate the board in this frame.
        /// The pose is checked against the frame's board edges first (a moved camera or a covered board refuses).
        #[arg(long)]
        pose: Option<std::path::PathBuf>,
        /// With --pose: use it without checking it against the frame (fastest; only for a rigid mount with a clear view).
        #[arg(long, requires = "pose")]
        trust_pose: bool,
        /// Pretty-print the JSON (default: one line).
        #[arg(long)]
        json: bool,
        /// Draw every footprint with its call and margin on the frame, to this PNG.
        #[arg(long)]
        annotate: Option<std::path::PathBuf>,
        /// Classical detection only: no hole-state model correcting washer calls.
        #[arg(long)]
        no_model: bool,
        #[command(flatten)]
        teams: TeamArgs,
        /// Write the teams' colours the frame was read with (given, or learned from it) to this
        /// pieces file (docs/pieces.md), to give with --pieces for the next frames of this set-up.
        #[arg(long, value_name = "FILE")]
        save_pieces: Option<std::path::PathBuf>,
    },
    /// Review pictures of close calls: for each, the top-down metric crop around the piece and the
    /// decisive line, rim or edge, the fitted footprint over the real pixels, the gap in mm with its
    /// uncertainty and the verdict (PNG), plus a JSON record of the same (docs/review.md).
    #[command(after_help = "Example: boardcall review fixtures/scenes/07-shuffleboard-22ft-line_edge/image.jpg --board shuffleboard-22ft \\\n           --camera fixtures/scenes/07-shuffleboard-22ft-line_edge/camera.yaml --all-close -o review.png\n\
Without --piece or --all-close: the calls flagged for review. The JSON record goes to --record (default: OUTPUT with .json).")]
    Review {
        /// The frame (PNG, JPEG, ...), as the camera took it.
        image: std::path::PathBuf,
        /// A built-in board name, NAME@VARIANT, or a board file.
        #[arg(long)]
        board: String,
        /// The camera file (OpenCV FileStorage YAML).
        #[arg(long)]
        camera: std::path::PathBuf,
        /// A pose file (from `boardcall locate -o`); default: locate the board in this frame.
        #[arg(long)]
        pose: Option<std::path::PathBuf>,
        /// The game (decides the designated foul line through its options).
        #[arg(long)]
        game: Option<String>,
        /// Game options, as for `boardcall game` (repeatable).
        #[arg(long = "option", value_name = "KEY=VALUE")]
        options: Vec<String>,
        /// Shuffleboard without --game: the designated foul line.
        #[arg(long, value_enum, default_value = "long")]
        foul_line: FoulArg,
        /// Review this piece (e.g. red#2), whatever its margin.
        #[arg(long, conflicts_with = "all_close")]
        piece: Option<String>,
        /// Review every flagged call and every call within --within mm of its boundary.
        #[arg(long)]
        all_close: bool,
        /// With --all-close: the margin (mm) under which a call counts as close.
        #[arg(long, allow_hyphen_values = true, default_value_t = boardcall::review::CLOSE_MARGIN_MM, value_parser = non_negative)]
        within: f64,
        /// Board mm per pixel of the crops.
        #[arg(long, allow_hyphen_values = true, default_value_t = boardcall::review::DEFAULT_MM_PER_PX, value_parser = positive)]
        mm_per_px: f64,
        /// The picture to write (PNG).
        #[arg(short, long)]
        output: std::path::PathBuf,
        /// The JSON record to write (default: OUTPUT with the extension .json).
        #[arg(long)]
        record: Option<std::path::PathBuf>,
    },
    /// Score a video file or a live camera: locate the board once (or use --pose) and re-check it, and print
    /// each settled state of the board once, as JSON lines (docs/watch.md).
    #[command(after_help = "Example: boardcall watch match.mp4 --board shuffleboard-22ft --camera camera.yaml --game knock-off --every 5\n\
         boardcall watch camera:0 --board yocu-9 --camera camera.yaml --pose pose.yaml --game yocu-9\n\
Events (one JSON object a line): board_found, pose_moved, board_lost, settled (with the frame's report as `score` gives it), unscored, end.")]
    Watch {
        /// A video file (any format OpenCV's back ends read), or `camera:N` for camera device N.
        source: String,
        /// A built-in board name, NAME@VARIANT, or a board file.
        #[arg(long)]
        board: String,
        /// The camera file (OpenCV FileStorage YAML, from `boardcall calibrate`); the stream's frames must have its size.
        #[arg(long)]
        camera: std::path::PathBuf,
        #[command(flatten)]
        round: RoundArgs,
        /// A pose file (from `boardcall locate -o`): checked against the first frame instead of a search from scratch.
        #[arg(long)]
        pose: Option<std::path::PathBuf>,
        /// With --pose: never check it (a rigid mount with a clear view; a moved camera goes unnoticed).
        #[arg(long, requires = "pose")]
        trust_pose: bool,
        /// Score every n-th frame, or `auto`: about 6 scored frames a second of the stream's frame rate (every 5th at 30 fps).
        #[arg(long, default_value = "auto")]
        every: boardcall::watch::Every,
        /// Scored frames in a row that must agree (same pieces, calls, places) before a state is reported.
        #[arg(long, default_value_t = boardcall::watch::SETTLE_FRAMES)]
        settle: usize,
        /// A piece moving less than this (mm) between scored frames is at rest.
        #[arg(long, allow_hyphen_values = true, default_value_t = boardcall::watch::STILL_MM, value_parser = positive)]
        still_mm: f64,
        /// Seconds of stream time between checks of the pose against the frame.
        #[arg(long, allow_hyphen_values = true, default_value_t = boardcall::watch::RECHECK_SECONDS, value_parser = positive)]
        recheck_s: f64,
        /// Classical detection only: no hole-state model correcting washer calls.
        #[arg(long)]
        no_model: bool,
        /// Also draw each settled state's footprints, calls and margins on its frame, to
        /// DIR/frame-NNNNNN.png (NNNNNN: the frame's index): the evidence beside each report.
        #[arg(long, value_name = "DIR")]
        annotate: Option<std::path::PathBuf>,
        #[command(flatten)]
        teams: TeamArgs,
    },
    /// Follow a whole game from a video file or a live camera: settled states read as throws and knocks, the
    /// rules engine run round after round, every event journaled (flushed and synced) before it is printed
    /// as a JSON line (docs/match.md). --resume continues after a crash; --amend fixes an event marked for review.
    #[command(after_help = "Example: boardcall match game.mp4 --board holeyboard --camera camera.yaml --game holeyboard --journal game.jsonl\n\
         boardcall match game.mp4 --camera camera.yaml --resume game.jsonl\n\
         boardcall match --amend game.jsonl --event 7 --with fixed.json\n\
Events (one JSON object a line): throw (the event-log entry), round_over, cleared, game_over, ignored, watch, end.")]
    Match(cli_match::MatchArgs),
    /// Evaluate the pipeline on every fixture in a folder laid out as fixtures/ is (image, truth, camera file),
    /// or as the external renders are (`truth.json` holding `camera_pose`): percent correct round score (PCS),
    /// footprint error, per-call confusion, confident-wrong calls, time per frame.
    Eval {
        /// The folder of fixtures (searched recursively).
        dir: std::path::PathBuf,
        /// Where the camera pose comes from: found by `locate` (as in real use), or the truth (detector only).
        #[arg(long, value_enum, default_value = "locate")]
        pose: PoseArg,
        /// Print the full report, fixture by fixture, as JSON.
        #[arg(long)]
        json: bool,
        /// Classical detection only: no hole-state model correcting washer calls (to compare).
        #[arg(long)]
        no_model: bool,
    },
    /// Measure localisation alone: locate the board with no hint in every scene under DIR
    /// (this project's fixtures, or scenes with `truth.json` holding `camera_pose`) and
    /// compare with the true pose: corner error (px), board-position error against the
    /// reported sigma, time.
    #[command(name = "eval-locate")]
    EvalLocate {
        /// The folder of scenes (searched recursively).
        dir: std::path::PathBuf,
        /// Print the full report as JSON.
        #[arg(long)]
        json: bool,
        /// Write a picture per scene into this folder: the located (or best refused)
        /// model, green where the image confirms it, red where not; the truth in blue.
        #[arg(long)]
        overlays: Option<std::path::PathBuf>,
        /// Image pyramid levels the search finds straight lines at (1: the frame
        /// only; 2: also at half resolution, where texture breaks fewer edges).
        /// For measuring the search; the default is the library's.
        #[arg(long, default_value_t = boardcall::locate::LocateConfig::default().line_levels, value_parser = clap::value_parser!(u32).range(1..=4))]
        line_levels: u32,
    },
    /// List the built-in boards.
    Boards,
    /// Score a whole game from an event log (JSON, see docs/events.md): the result after
    /// every round, who throws first next, the winner or "in progress", with the reason
    /// for every non-obvious ruling.
    #[command(after_help = "Games: knock-off, tap-and-draw, horse-collar, baseball, crazy-eight, holeyboard, yocu-4, yocu-9, sjoelen.\n\
Options per game: docs/rules.md.\n\
Example: boardcall game --rules holeyboard --option skunk=off --events fixtures/events/holeyboard.json")]
    Game {
        /// The game's rules.
        #[arg(long)]
        rules: String,
        /// A rules option KEY=VALUE (repeatable), e.g. target=21, foul_line=long, corner=13.
        #[arg(long = "option", value_name = "KEY=VALUE")]
        options: Vec<String>,
        /// The event log (JSON).
        #[arg(long)]
        events: std::path::PathBuf,
    },
    /// Render a scene file to the image an overhead camera would take, with its ground truth.
    #[command(after_help = "Example: boardcall render fixtures/scenes/40-holeyboard-plain/scene.json -o image.png --truth truth.json")]
    Render {
        /// The scene file (JSON; format in fixtures/README.md).
        scene: std::path::PathBuf,
        /// The image to write: .png or .jpg.
        #[arg(short, long)]
        output: std::path::PathBuf,
        /// Also write the ground truth here (JSON), and camera.yaml (OpenCV) beside it.
        #[arg(long)]
        truth: Option<std::path::PathBuf>,
        /// Threads to render with (the image does not depend on it; default: all cores).
        #[arg(long)]
        threads: Option<usize>,
    },
    /// Camera planner: mm per pixel along and across the board at each line and hole, and what is out of frame (JSON).
    #[command(after_help = "Example: boardcall plan fixtures/scenes/00-shuffleboard-22ft-plain/scene.json")]
    Plan {
        /// The scene file giving the board and camera.
        scene: std::path::PathBuf,
    },
    /// The rendered regression fixture set.
    Fixtures {
        #[command(subcommand)]
        action: FixturesAction,
    },
    /// Calibrate a camera from photos of a chessboard or ChArUco target (OpenCV): writes
    /// OpenCV FileStorage YAML; prints the per-view reprojection errors (JSON).
    #[command(after_help = "Example: boardcall calibrate --pattern chessboard:9x6:25 --fix-aspect-ratio fixtures/opencv-chessboard/left*.jpg -o camera.yaml\n\
Patterns: chessboard:COLSxROWS:SQUARE_MM (3 to 100 inner corners a side), charuco:COLSxROWS:SQUARE_MM:MARKER_MM[:DICT_6X6_250]
(3 to 100 squares a side). Refused (exit 4): fewer than 3 distinct views, repeated views, too little tilt between views.")]
    Calibrate {
        /// The calibration target.
        #[arg(long)]
        pattern: String,
        /// Photos of the target (views where it is not found are reported and skipped).
        #[arg(required = true)]
        images: Vec<std::path::PathBuf>,
        /// The camera file to write (OpenCV FileStorage YAML).
        #[arg(short, long)]
        output: std::path::PathBuf,
        /// OpenCV CALIB_FIX_ASPECT_RATIO: keep fx / fy = 1.
        #[arg(long)]
        fix_aspect_ratio: bool,
        /// OpenCV CALIB_ZERO_TANGENT_DIST: no tangential distortion.
        #[arg(long)]
        zero_tangent: bool,
        /// OpenCV CALIB_FIX_K3: k3 = 0.
        #[arg(long)]
        fix_k3: bool,
    },
    /// Find the camera's pose relative to the board from the board's own edges (or from
    /// hand-picked points); prints the pose and its evidence (JSON).
    #[command(after_help = "Example: boardcall locate image.jpg --board shuffleboard-22ft --camera camera.yaml -o pose.yaml\n\
Points file (--points): one point per line, `x_mm, y_mm, u, v` or `x_mm, y_mm, z_mm, u, v`, raw-image pixels.\n\
Exit code 4 when the board is not found or the fit is poor.")]
    Locate {
        /// The camera image.
        image: std::path::PathBuf,
        /// A built-in board name, NAME@VARIANT, or a board file.
        #[arg(long)]
        board: String,
        /// The camera file (OpenCV FileStorage YAML).
        #[arg(long)]
        camera: std::path::PathBuf,
        /// Write the pose here (OpenCV FileStorage YAML: rvec, tvec in board mm).
        #[arg(short, long)]
        output: Option<std::path::PathBuf>,
        /// Use four or more known board points and their image positions instead of automatic search.
        #[arg(long)]
        points: Option<std::path::PathBuf>,
        /// Write the undistorted image with the fitted board model drawn on it (PNG).
        #[arg(long)]
        overlay: Option<std::path::PathBuf>,
    },
    /// Set up a camera from the board itself (no chessboard): estimate the focal length, radial distortion and pose
    /// from one or more frames of the board, automatically or from four or more typed points; writes camera.yaml,
    /// pose.yaml (pose-N.yaml for several frames) and overlay.png into the output folder and prints the estimate
    /// with its uncertainty (JSON). See docs/camera.md.
    #[command(after_help = "Example: boardcall setup frame.jpg --board holeyboard -o setup/\n\
           boardcall setup frame.jpg --board sjoelbak --points corners.txt --lens fisheye -o setup/\n\
Assumes square pixels, the principal point at the image centre and no tangential distortion (said in the output).\n\
Exit code 4 when the frames do not constrain the camera or the board is not confirmed.")]
    Setup {
        /// Frames of the board from this camera (one is enough when the board is seen at a slant).
        #[arg(required = true)]
        images: Vec<std::path::PathBuf>,
        /// A built-in board name, NAME@VARIANT, or a board file.
        #[arg(long)]
        board: String,
        /// Four or more known board points and their image positions in the (single) frame, as `locate --points`.
        #[arg(long)]
        points: Option<std::path::PathBuf>,
        /// The lens model of the camera written.
        #[arg(long, value_enum, default_value_t = LensArg::Brown)]
        lens: LensArg,
        /// Estimate the focal length only (no radial distortion; a fisheye stays equidistant).
        #[arg(long)]
        no_distortion: bool,
        /// The focal length in pixels when it is known, held instead of estimated: the lens's focal length over the
        /// sensor's width times the image's width (a phone's 4.67 mm over 6.27 mm at 1000 px: 745). Needed for a
        /// board seen square on, whose view cannot fix it.
        #[arg(long, allow_hyphen_values = true, value_parser = positive)]
        focal_px: Option<f64>,
        /// The folder to write camera.yaml, pose.yaml and overlay.png into (created if missing).
        #[arg(short, long)]
        output: std::path::PathBuf,
    },
    /// The top-down metric view of the board plane (target end at the bottom).
    #[command(after_help = "Example: boardcall rectify image.jpg --board holeyboard --camera camera.yaml --pose pose.yaml -o top.png --mm-per-px 1")]
    Rectify {
        /// The camera image.
        image: std::path::PathBuf,
        /// A built-in board name, NAME@VARIANT, or a board file.
        #[arg(long)]
        board: String,
        /// The camera file (OpenCV FileStorage YAML).
        #[arg(long)]
        camera: std::path::PathBuf,
        /// The pose (from `boardcall locate -o`); without it the board is located automatically.
        #[arg(long)]
        pose: Option<std::path::PathBuf>,
        /// The top view to write (PNG).
        #[arg(short, long)]
        output: std::path::PathBuf,
        /// Board millimetres per output pixel.
        #[arg(long, allow_hyphen_values = true, default_value_t = 1.0, value_parser = positive)]
        mm_per_px: f64,
        /// Board plane shown around the playing surface, mm.
        #[arg(long, allow_hyphen_values = true, default_value_t = 100.0, value_parser = non_negative)]
        margin: f64,
        /// Height of the plane drawn, mm (e.g. -76 for a washer cup's bottom).
        #[arg(long, allow_hyphen_values = true, default_value_t = 0.0, value_parser = finite)]
        height: f64,
    },
    /// Inspect a board.
    Board {
        #[command(subcommand)]
        action: BoardAction,
    },
    /// Call one piece placed by hand: its call, value and margin as JSON.
    ///
    /// Shuffleboard weights and sjoelen discs are placed by their footprint
    /// centre; washers by their centre, height and tilt.
    #[command(after_help = "Example: boardcall call --board shuffleboard-22ft --x 0 --y 120")]
    Call {
        /// A built-in board name (see `boardcall boards`), NAME@VARIANT, or a board file.
        #[arg(long)]
        board: String,
        /// Centre across the board, in board mm.
        #[arg(long, allow_hyphen_values = true, value_parser = finite)]
        x: f64,
        /// Centre along the board from the target end, in board mm.
        #[arg(long, allow_hyphen_values = true, value_parser = finite)]
        y: f64,
        /// Footprint radius in mm (default: the board's piece); at most half the board's width.
        #[arg(long, allow_hyphen_values = true, value_parser = positive)]
        radius: Option<f64>,
        /// Shuffleboard: the designated foul line.
        #[arg(long, value_enum, default_value = "long")]
        foul_line: FoulArg,
        /// Washers: height of the washer's centre above the surface, mm (negative in a cup).
        #[arg(long, allow_hyphen_values = true, default_value_t = 1.6, value_parser = finite)]
        z: f64,
        /// Washers: tilt from horizontal, degrees (0 to 90).
        #[arg(long, allow_hyphen_values = true, default_value_t = 0.0, value_parser = tilt_deg)]
        tilt: f64,
    },
}

/// How a frame's pieces are scored as a round: shared by `score` and `watch`.
#[derive(clap::Args)]
struct RoundArgs {
    /// The game whose round to score (knock-off, tap-and-draw, horse-collar, baseball,
    /// crazy-eight, holeyboard, yocu-4, yocu-9, sjoelen); without it only the calls are given.
    #[arg(long)]
    game: Option<String>,
    /// Game options, as for `boardcall game` (repeatable).
    #[arg(long = "option", value_name = "KEY=VALUE")]
    options: Vec<String>,
    /// Knock Off, Tap & Draw, washer games: the team that threw first this round.
    #[arg(long, default_value = "red")]
    first: String,
    /// Shuffleboard without --game: the designated foul line (with a game, its `foul_line` option decides).
    #[arg(long, value_enum, default_value = "long")]
    foul_line: FoulArg,
}

impl RoundArgs {
    /// The foul line the calls use: the game's, else --foul-line.
    fn foul(&self) -> Result<FoulLine> {
        game_foul_line(self.game.as_deref(), &self.options, self.foul_line)
    }

    /// The round scoring, when a game was named.
    fn scoring(&self) -> Result<Option<boardcall::score::RoundScoring>> {
        let Some(game) = self.game.as_deref() else { return Ok(None) };
        Ok(Some(boardcall::score::RoundScoring { rules: game.parse()?, options: self.options.clone(), first: self.first.parse()? }))
    }
}

#[derive(Subcommand)]
enum BoardAction {
    /// Print a board's geometry as JSON in the board frame (mm).
    Show {
        /// A built-in board name, NAME@VARIANT, or a board file.
        name: String,
        /// Print the board file (TOML) instead, e.g. to start a custom board.
        #[arg(long)]
        toml: bool,
    },
}

#[derive(Subcommand)]
enum FixturesAction {
    /// Render the fixture set (fixed recipe, seeded): one folder per scene under OUTPUT.
    #[command(
        after_help = "The committed sets: boardcall fixtures generate --seed 20240611 -o fixtures/scenes\n                   boardcall fixtures generate --varied --seed 20261113 -o fixtures/varied"
    )]
    Generate {
        /// The varied recipe: tables built differently (gutters, rails, walls, gate bars, floors, prints),
        /// whole-board and end views, Brown and fisheye lenses (fixtures/README.md).
        #[arg(long)]
        varied: bool,
        /// The set's seed (default: 20240611, or 20261113 with --varied).
        #[arg(long)]
        seed: Option<u64>,
        #[arg(short, long)]
        output: std::path::PathBuf,
        /// Threads to render with (the images do not depend on it; default: all cores).
        #[arg(long)]
        threads: Option<usize>,
    },
    /// List the fixture folders under a folder.
    List { dir: std::path::PathBuf },
    /// Rewrite every fixture's truth under a folder from its scene, the images kept (after a change in what the
    /// call functions say of a scene; `cargo test --test render` checks committed truth against them).
    #[command(hide = true)]
    Retruth { dir: std::path::PathBuf },
    /// Render the hole-state model's training set: patches.npy + labels.csv (models/README.md).
    #[command(hide = true)]
    TrainingSet {
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Washer-board scenes to render.
        #[arg(long)]
        count: usize,
        #[arg(short, long)]
        output: std::path::PathBuf,
        /// Samples per pixel axis (the fixtures use 2).
        #[arg(long, default_value_t = 2)]
        supersample: u32,
        /// Threads to render with (default: all cores).
        #[arg(long)]
        threads: Option<usize>,
    },
}

/// A finite number (no NaN or infinity).
fn finite(s: &str) -> Result<f64, String> {
    let v: f64 = s.trim().parse().map_err(|_| format!("`{s}` is not a number"))?;
    if v.is_finite() {
        Ok(v)
    } else {
        Err(format!("`{s}` is not a finite number"))
    }
}

/// A finite number above zero.
fn positive(s: &str) -> Result<f64, String> {
    finite(s).and_then(|v| if v > 0.0 { Ok(v) } else { Err(format!("must be positive, got {v}")) })
}

/// A finite number at or above zero.
fn non_negative(s: &str) -> Result<f64, String> {
    finite(s).and_then(|v| if v >= 0.0 { Ok(v) } else { Err(format!("must not be negative, got {v}")) })
}

/// A tilt from horizontal: 0 to 90 degrees.
fn tilt_deg(s: &str) -> Result<f64, String> {
    finite(s).and_then(|v| if (0.0..=90.0).contains(&v) { Ok(v) } else { Err(format!("a tilt is 0 to 90 degrees, got {v}")) })
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum PoseArg {
    Locate,
    Truth,
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum FoulArg {
    Long,
    Short,
}

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

/// The teams' colours: given on the command line or in a pieces file (docs/pieces.md).
#[derive(clap::Args)]
struct TeamArgs {
    /// A team's colour: NAME=H<hue>[:<tolerance>] (degrees; e.g. blue=H270) or NAME=U,V (a pixel
    /// of the frame on one of the team's pieces; `score` only). Repeatable. Teams not given keep the
    /// pieces file's colour or the standard one; without any, the colours are learned from a frame
    /// with piece-sized colour the standard ones do not explain.
    #[arg(long = "team", value_name = "NAME=COLOUR")]
    specs: Vec<boardcall::detect::TeamSpec>,
    /// A pieces file (JSON, docs/pieces.md: from `score --save-pieces`) with the teams' colours.
    #[arg(long, value_name = "FILE")]
    pieces: Option<std::path::PathBuf>,
    /// Shuffleboard weights whose coloured cap is smaller than the chrome body: the cap's
    /// radius in mm (the footprint stays the body's).
    #[arg(long, value_name = "MM")]
    cap_radius_mm: Option<f64>,
    /// Such a cap set into the body: how far its face lies below the body's top, in mm
    /// (without it, anywhere up to 5 mm, which widens every weight's uncertainty).
    #[arg(long, value_name = "MM")]
    cap_recess_mm: Option<f64>,
}

impl TeamArgs {
    /// The detector's settings with these teams' colours (`frame`: where sample points are read).
    fn config(&self, mut cfg: boardcall::detect::DetectorConfig, frame: Option<&boardcall::frame::Frame>) -> Result<boardcall::detect::DetectorConfig> {
        use opencv::prelude::MatTraitConstManual;
        if let Some(path) = &self.pieces {
            let file = boardcall::detect::PiecesFile::load(path)?;
            (cfg.teams, cfg.weight_cap_radius_mm, cfg.weight_cap_recess_mm) = (file.teams, file.weight_cap_radius_mm, file.weight_cap_recess_mm);
            cfg.teams_source = boardcall::detect::TeamsSource::Given;
        }
        if let Some(cap) = self.cap_radius_mm {
            cfg.weight_cap_radius_mm = Some(cap);
        }
        if let Some(recess) = self.cap_recess_mm {
            cfg.weight_cap_recess_mm = Some(recess);
        }
        for spec in &self.specs {
            let given = match (spec, frame) {
                (boardcall::detect::TeamSpec::Sample { .. }, None) => {
                    let problem = "NAME=U,V samples a frame: give it to `score` (with --save-pieces), or give a hue".to_string();
                    return Err(boardcall::detect::DetectError::Config { field: "--team", problem }.into());
                }
                (_, Some(f)) => {
                    let bytes = f.image().data_bytes()?;
                    let view = boardcall::measure::ColourView::new(f.width() as usize, f.height() as usize, bytes)?;
                    spec.resolve(&view)?
                }
                (_, None) => spec.resolve(&boardcall::measure::ColourView::new(0, 0, &[])?)?,
            };
            match cfg.teams.iter_mut().find(|t| t.team == given.team) {
                Some(t) => *t = given,
                None => cfg.teams.push(given),
            }
            cfg.teams_source = boardcall::detect::TeamsSource::Given;
        }
        Ok(cfg)
    }
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
                Some(p) => boardcall::score::PoseInput::Given(boardcall::camera::CameraPose::load(&p)?),
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
                Some(p) => boardcall::score::PoseInput::Given(boardcall::camera::CameraPose::load(&p)?),
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
                Some(p) => PoseStart::Given(boardcall::camera::CameraPose::load(&p)?),
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
        Command::EvalLocate { dir, json, overlays, line_levels } => {
            if let Some(o) = &overlays {
                std::fs::create_dir_all(o).with_context(|| format!("creating {}", o.display()))?;
            }
            let cfg = boardcall::locate::LocateConfig { line_levels, ..Default::default() };
            let report = boardcall::eval::locate::evaluate_locate(&dir, &cfg, overlays.as_deref(), |o| {
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
        Command::Fixtures { action: FixturesAction::Generate { varied, seed, output, threads } } => {
            let threads = threads.unwrap_or_else(cores);
            let progress = |name: &str| eprintln!("rendered {name}");
            let truths = if varied {
                let cfg = boardcall::render::generate::GenerateConfig { seed: seed.unwrap_or(boardcall::render::varied::VARIED_SEED), ..Default::default() };
                boardcall::render::varied::generate(&cfg, &output, threads, progress)?
            } else {
                let cfg = boardcall::render::generate::GenerateConfig { seed: seed.unwrap_or(boardcall::render::generate::DEFAULT_SEED), ..Default::default() };
                boardcall::render::generate::generate(&cfg, &output, threads, progress)?
            };
            say!("{} fixtures written to {}", truths.len(), output.display());
        }
        Command::Fixtures { action: FixturesAction::TrainingSet { seed, count, output, supersample, threads } } => {
            let cfg = boardcall::model::training::TrainingConfig { seed, scenes: count, supersample, threads: threads.unwrap_or_else(cores) };
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
