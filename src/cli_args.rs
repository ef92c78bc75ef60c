//! The command line's arguments: the subcommands and their options (clap), the value checks they share, and the
//! options shared between commands (a round's scoring, the teams' colours).

use crate::cli_camera::LensArg;
use crate::game_foul_line;
use anyhow::Result;
use boardcall::calls::FoulLine;
use clap::{Parser, Subcommand};

pub(crate) const EXIT_CODES: &str = "Exit codes:
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
pub(crate) struct Cli {
    #[command(subcommand)]
    pub(crate) command: Command,
}

#[derive(Subcommand)]
pub(crate) enum Command {
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
        /// Draw every footprint with its call and margin, and each patch of colour no piece explains (magenta), on the frame, to this PNG.
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
    Match(crate::cli_match::MatchArgs),
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
        /// Locate with each scene's camera this far off, as `F,DX,DY`: the focal length changed by F per cent, the
        /// principal point moved by DX, DY px (a calibration is never exact). Errors are measured against what the
        /// true camera images. For measuring how the search copes; e.g. `0.5,0,0` or `0,4,-4`.
        #[arg(long, value_name = "F,DX,DY", allow_hyphen_values = true)]
        camera_off: Option<boardcall::eval::locate::CameraOffset>,
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
pub(crate) struct RoundArgs {
    /// The game whose round to score (knock-off, tap-and-draw, horse-collar, baseball,
    /// crazy-eight, holeyboard, yocu-4, yocu-9, sjoelen); without it only the calls are given.
    #[arg(long)]
    pub(crate) game: Option<String>,
    /// Game options, as for `boardcall game` (repeatable).
    #[arg(long = "option", value_name = "KEY=VALUE")]
    pub(crate) options: Vec<String>,
    /// Knock Off, Tap & Draw, washer games: the team that threw first this round.
    #[arg(long, default_value = "red")]
    pub(crate) first: String,
    /// Shuffleboard without --game: the designated foul line (with a game, its `foul_line` option decides).
    #[arg(long, value_enum, default_value = "long")]
    pub(crate) foul_line: FoulArg,
}

impl RoundArgs {
    /// The foul line the calls use: the game's, else --foul-line.
    pub(crate) fn foul(&self) -> Result<FoulLine> {
        game_foul_line(self.game.as_deref(), &self.options, self.foul_line)
    }

    /// The round scoring, when a game was named.
    pub(crate) fn scoring(&self) -> Result<Option<boardcall::score::RoundScoring>> {
        let Some(game) = self.game.as_deref() else { return Ok(None) };
        Ok(Some(boardcall::score::RoundScoring { rules: game.parse()?, options: self.options.clone(), first: self.first.parse()? }))
    }
}

#[derive(Subcommand)]
pub(crate) enum BoardAction {
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
pub(crate) enum FixturesAction {
    /// Render the fixture set (fixed recipe, seeded): one folder per scene under OUTPUT.
    #[command(
        after_help = "The committed sets: boardcall fixtures generate --seed 20240611 -o fixtures/scenes\n                   boardcall fixtures generate --varied --seed 20261113 -o fixtures/varied\n                   boardcall fixtures generate --teams --seed 20261206 -o fixtures/teams"
    )]
    Generate {
        /// The varied recipe: tables built differently (gutters, rails, walls, gate bars, floors, prints),
        /// whole-board and end views, Brown and fisheye lenses (fixtures/README.md).
        #[arg(long)]
        varied: bool,
        /// The team-colours recipe: the varied set's tables with the teams painted in eight colour pairs
        /// (violet, yellow, green, teal, pale and near-hue pairs), each with the pieces file a user of a
        /// pair the detector cannot learn would give (fixtures/README.md).
        #[arg(long, conflicts_with = "varied")]
        teams: bool,
        /// The set's seed (default: 20240611, 20261113 with --varied, 20261206 with --teams).
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
    /// call functions say of a scene; `cargo test --test suite render::` checks committed truth against them).
    #[command(hide = true)]
    Retruth { dir: std::path::PathBuf },
    /// Render the hole-state model's training set: patches.npy + labels.csv (models/README.md).
    #[command(hide = true)]
    TrainingSet {
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// The scenes' recipe: the fixture generator's, the varied set's (domain-randomised), or each in turn.
        #[arg(long, value_enum, default_value_t = RecipeArg::Both)]
        recipe: RecipeArg,
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

/// The training set's scene recipe (`boardcall::model::training::TrainingRecipe`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum RecipeArg {
    Fixtures,
    Varied,
    Both,
}

impl From<RecipeArg> for boardcall::model::training::TrainingRecipe {
    fn from(r: RecipeArg) -> Self {
        match r {
            RecipeArg::Fixtures => Self::Fixtures,
            RecipeArg::Varied => Self::Varied,
            RecipeArg::Both => Self::Both,
        }
    }
}

/// A finite number (no NaN or infinity).
pub(crate) fn finite(s: &str) -> Result<f64, String> {
    let v: f64 = s.trim().parse().map_err(|_| format!("`{s}` is not a number"))?;
    if v.is_finite() {
        Ok(v)
    } else {
        Err(format!("`{s}` is not a finite number"))
    }
}

/// A finite number above zero.
pub(crate) fn positive(s: &str) -> Result<f64, String> {
    finite(s).and_then(|v| if v > 0.0 { Ok(v) } else { Err(format!("must be positive, got {v}")) })
}

/// A finite number at or above zero.
pub(crate) fn non_negative(s: &str) -> Result<f64, String> {
    finite(s).and_then(|v| if v >= 0.0 { Ok(v) } else { Err(format!("must not be negative, got {v}")) })
}

/// A tilt from horizontal: 0 to 90 degrees.
pub(crate) fn tilt_deg(s: &str) -> Result<f64, String> {
    finite(s).and_then(|v| if (0.0..=90.0).contains(&v) { Ok(v) } else { Err(format!("a tilt is 0 to 90 degrees, got {v}")) })
}

#[derive(Clone, Copy, clap::ValueEnum)]
pub(crate) enum PoseArg {
    Locate,
    Truth,
}

#[derive(Clone, Copy, clap::ValueEnum)]
pub(crate) enum FoulArg {
    Long,
    Short,
}

/// The teams' colours: given on the command line or in a pieces file (docs/pieces.md).
#[derive(clap::Args)]
pub(crate) struct TeamArgs {
    /// A team's colour: NAME=H<hue>[:<tolerance>] (degrees; e.g. blue=H270) or NAME=U,V (a pixel
    /// of the frame on one of the team's pieces; `score` only). Repeatable. Teams not given keep the
    /// pieces file's colour or the standard one; without any, the colours are learned from a frame
    /// with piece-sized colour the standard ones do not explain.
    #[arg(long = "team", value_name = "NAME=COLOUR")]
    pub(crate) specs: Vec<boardcall::detect::TeamSpec>,
    /// A pieces file (JSON, docs/pieces.md: from `score --save-pieces`) with the teams' colours.
    #[arg(long, value_name = "FILE")]
    pub(crate) pieces: Option<std::path::PathBuf>,
    /// Shuffleboard weights whose coloured cap is smaller than the chrome body: the cap's
    /// radius in mm (the footprint stays the body's).
    #[arg(long, value_name = "MM")]
    pub(crate) cap_radius_mm: Option<f64>,
    /// Such a cap set into the body: how far its face lies below the body's top, in mm
    /// (without it, anywhere up to 5 mm, which widens every weight's uncertainty).
    #[arg(long, value_name = "MM")]
    pub(crate) cap_recess_mm: Option<f64>,
}

impl TeamArgs {
    /// The detector's settings with these teams' colours (`frame`: where sample points are read).
    pub(crate) fn config(&self, mut cfg: boardcall::detect::DetectorConfig, frame: Option<&boardcall::frame::Frame>) -> Result<boardcall::detect::DetectorConfig> {
        use opencv::prelude::MatTraitConstManual;
        if let Some(path) = &self.pieces {
            cfg = cfg.with_pieces(&boardcall::detect::PiecesFile::load(path)?);
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
