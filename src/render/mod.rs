//! The scene renderer: draws the image a real overhead camera would take of a
//! board and its pieces (ray casting through the real camera model), with exact
//! ground truth; also the camera planner and the fixture-set generators (the
//! committed recipe, [`generate`], and the varied tables, [`varied`]).
//!
//! Flow: [`scene::Scene`] (JSON) -> [`scene::LoadedScene`] (validated) ->
//! [`shade::render_linear`] (linear light) -> [`effects::develop`] (8-bit image)
//! and [`truth::truth_for`] (the truth beside it).

pub mod effects;
pub mod generate;
pub mod plan;
pub mod raycast;
pub mod scene;
pub mod shade;
pub mod teams;
pub mod truth;
pub mod varied;
pub mod video;

pub use scene::{LoadedScene, Scene, SceneError};

use crate::camera::CameraError;
use image::RgbImage;

/// Everything that can go wrong rendering a scene to files.
#[derive(Debug, thiserror::Error)]
pub enum RenderError {
    #[error(transparent)]
    Scene(#[from] SceneError),
    #[error(transparent)]
    Image(#[from] effects::ImageWriteError),
    #[error("writing the camera file: {0}")]
    Camera(#[from] CameraError),
    #[error("cannot write {path}: {source}")]
    Io { path: std::path::PathBuf, source: std::io::Error },
}

/// Renders a validated scene to the 8-bit image its camera would deliver, on up
/// to `threads` threads (the bytes do not depend on the thread count).
pub fn render(ls: &LoadedScene, threads: usize) -> RgbImage {
    let linear = shade::render_linear(ls, threads);
    effects::develop(&linear, &ls.scene.effects, ls.scene.seed)
}
