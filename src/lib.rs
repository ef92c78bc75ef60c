//! boardcall: scores table games from an overhead camera, to the millimetre.
//!
//! The pipeline is a one-way flow of typed stages (see `ARCHITECTURE.md`):
//! `Frame -> Undistorted -> BoardPose -> Detections -> Calls -> RoundScore -> GameState`.
//! This crate's foundation is the board model ([`board`]), the typed board frame
//! ([`geom`]), the pieces ([`piece`]) and the geometric calls ([`calls`]).

pub mod board;
pub mod calibrate;
pub mod calls;
pub mod fixture;
pub mod camera;
pub mod detect;
pub mod eval;
pub mod failure;
pub mod files;
pub mod frame;
pub mod game;
pub mod geom;
pub mod locate;
pub mod measure;
pub mod model;
pub mod parallel;
pub mod piece;
pub mod rectify;
pub mod review;
pub mod rules;
pub mod score;
pub mod serve;
pub mod setup;
pub mod render;
pub mod undistort;
pub mod watch;
