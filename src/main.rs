//! The `boardcall` command line: thin wiring from arguments to the library's stages.
//!
//! Exit codes (also in `boardcall --help` and README.md):
//! 0 success; 1 unexpected internal error; 2 command-line usage error;
//! 3 invalid input (unreadable or malformed board, events, image or camera file).

use anyhow::{Context, Result};
use boardcall::board::{self, Board, BoardError, Layout};
use boardcall::calls::{self, FoulLine, WasherPose};
use boardcall::geom::{BoardPoint, BoardPoint3, Footprint};
use clap::{Parser, Subcommand};
use serde_json::json;
use std::process::ExitCode;

const EXIT_CODES: &str = "Exit codes:
  0  success
  1  unexpected internal error
  2  command-line usage error
  3  invalid input: an unreadable or malformed board, events, image or camera file";

#[derive(Parser)]
#[command(name = "boardcall", version, about = "Scores table games from an overhead camera, to the millimetre.", after_help = EXIT_CODES)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// List the built-in boards.
    Boards,
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
        #[arg(long, allow_hyphen_values = true)]
        x: f64,
        /// Centre along the board from the target end, in board mm.
        #[arg(long, allow_hyphen_values = true)]
        y: f64,
        /// Footprint radius in mm (default: the board's piece).
        #[arg(long)]
        radius: Option<f64>,
        /// Shuffleboard: the designated foul line.
        #[arg(long, value_enum, default_value = "long")]
        foul_line: FoulArg,
        /// Washers: height of the washer's centre above the surface, mm (negative in a cup).
        #[arg(long, allow_hyphen_values = true, default_value_t = 1.6)]
        z: f64,
        /// Washers: tilt from horizontal, degrees.
        #[arg(long, default_value_t = 0.0)]
        tilt: f64,
    },
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

/// Maps a library error to the documented exit code.
fn exit_code(err: &anyhow::Error) -> u8 {
    if err.chain().any(|e| e.is::<BoardError>() || e.is::<serde_json::Error>() || e.is::<std::io::Error>()) {
        3
    } else {
        1
    }
}

fn run(cli: Cli) -> Result<()> {
    match cli.command {
        Command::Boards => {
            for b in board::builtins() {
                let kind = serde_json::to_value(b.kind())?;
                println!("{:<18} {:<13} {}", b.name, kind.as_str().unwrap_or_default(), b.description);
            }
        }
        Command::Board { action: BoardAction::Show { name, toml } } => {
            let b = Board::load(&name)?;
            if toml {
                print!("{}", b.to_toml());
            } else {
                println!("{}", serde_json::to_string_pretty(&b)?);
            }
        }
        Command::Call { board, x, y, radius, foul_line, z, tilt } => {
            let b = Board::load(&board)?;
            let at = BoardPoint::new(x, y);
            let foul = match foul_line {
                FoulArg::Long => FoulLine::Long,
                FoulArg::Short => FoulLine::Short,
            };
            let out = match &b.layout {
                Layout::Shuffleboard(s) => {
                    let fp = Footprint::new(at, radius.unwrap_or(s.weight_diameter_mm / 2.0));
                    let m = calls::shuffle_call(&b, s, fp, foul);
                    json!({ "board": b.name, "piece": "weight", "footprint": fp, "call": m.call, "boundary": m.boundary,
                            "margin_mm": m.margin_mm })
                }
                Layout::Sjoelbak(s) => {
                    let fp = Footprint::new(at, radius.unwrap_or(s.disc_diameter_mm / 2.0));
                    let m = calls::sjoel_call(s, fp);
                    let value = match m.call {
                        calls::SjoelCall::Compartment { compartment } => Some(s.compartments[compartment].value),
                        calls::SjoelCall::None => None,
                    };
                    json!({ "board": b.name, "piece": "disc", "footprint": fp, "call": m.call, "value": value,
                            "boundary": m.boundary, "margin_mm": m.margin_mm })
                }
                Layout::Washer(w) => {
                    let pose = WasherPose { centre: BoardPoint3::new(x, y, z), tilt_deg: tilt };
                    let m = calls::washer_call(&b, w, pose);
                    let value = match m.call {
                        calls::WasherCall::In { hole } | calls::WasherCall::Leaner { hole } => Some(w.holes[hole].value),
                        _ => None,
                    };
                    json!({ "board": b.name, "piece": "washer", "pose": pose, "call": m.call, "hole_value": value,
                            "boundary": m.boundary, "margin_mm": m.margin_mm })
                }
            };
            println!("{}", serde_json::to_string_pretty(&out).context("writing the call")?);
        }
    }
    Ok(())
}
