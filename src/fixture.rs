//! The fixture folder layout (see `fixtures/README.md`): one folder per scene with
//! its image, `truth.json`, `camera.yaml` (OpenCV FileStorage) and `scene.json`;
//! reading, writing, and listing every fixture under any folder laid out that way.

use crate::camera::{Camera, CameraError};
use crate::render::effects::write_image;
use crate::render::scene::{LoadedScene, Scene, SceneError};
use crate::render::truth::{truth_for, Truth};
use crate::render::RenderError;
use image::RgbImage;
use std::path::{Path, PathBuf};

/// The truth file in a fixture folder; its presence makes a folder a fixture.
pub const TRUTH_FILE: &str = "truth.json";
/// The intrinsics and distortion, OpenCV FileStorage YAML.
pub const CAMERA_FILE: &str = "camera.yaml";
/// The scene the image was rendered from (optional for fixtures made otherwise).
pub const SCENE_FILE: &str = "scene.json";
/// The image name the generator uses (the truth's `image` field is authoritative).
pub const IMAGE_FILE: &str = "image.jpg";

/// Everything that can be wrong with a fixture folder.
#[derive(Debug, thiserror::Error)]
pub enum FixtureError {
    #[error("cannot read {path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    #[error("truth file {path}: {message}")]
    Truth { path: PathBuf, message: String },
    #[error("fixture {dir}: camera file: {source}")]
    Camera { dir: PathBuf, source: CameraError },
    #[error("fixture {dir}: {source}")]
    Scene { dir: PathBuf, source: SceneError },
    #[error("fixture {dir}: cannot read image {path}: {source}")]
    Image { dir: PathBuf, path: PathBuf, source: image::ImageError },
}

/// One fixture: where it is, its truth and its camera.
#[derive(Debug, Clone)]
pub struct Fixture {
    pub dir: PathBuf,
    pub truth: Truth,
    pub camera: Camera,
}

impl Fixture {
    /// Reads a fixture folder's truth and camera file.
    pub fn load(dir: &Path) -> Result<Fixture, FixtureError> {
        let path = dir.join(TRUTH_FILE);
        let text = std::fs::read_to_string(&path).map_err(|source| FixtureError::Io { path: path.clone(), source })?;
        let truth: Truth = serde_json::from_str(&text).map_err(|e| FixtureError::Truth { path: path.clone(), message: e.to_string() })?;
        if truth.format != crate::render::truth::TRUTH_FORMAT {
            return Err(FixtureError::Truth { path, message: format!("format {} is not supported", truth.format) });
        }
        let camera = Camera::load(&dir.join(&truth.camera.intrinsics_file))
            .map_err(|source| FixtureError::Camera { dir: dir.to_path_buf(), source })?;
        Ok(Fixture { dir: dir.to_path_buf(), truth, camera })
    }

    /// The image file.
    pub fn image_path(&self) -> PathBuf {
        self.dir.join(&self.truth.image)
    }

    /// Decodes the image.
    pub fn image(&self) -> Result<RgbImage, FixtureError> {
        let path = self.image_path();
        image::open(&path)
            .map(|i| i.to_rgb8())
            .map_err(|source| FixtureError::Image { dir: self.dir.clone(), path, source })
    }

    /// The scene the image was rendered from, validated.
    pub fn scene(&self) -> Result<LoadedScene, FixtureError> {
        Scene::load(&self.dir.join(SCENE_FILE)).map_err(|source| FixtureError::Scene { dir: self.dir.clone(), source })
    }
}

/// Writes a fixture folder: the image (PNG or JPEG by `image_file`'s extension),
/// its truth, the camera file and the scene. Returns the truth.
pub fn write(dir: &Path, ls: &LoadedScene, image: &RgbImage, image_file: &str) -> Result<Truth, RenderError> {
    let io = |path: PathBuf| move |source| RenderError::Io { path, source };
    std::fs::create_dir_all(dir).map_err(io(dir.to_path_buf()))?;
    write_image(image, &dir.join(image_file), ls.scene.effects.jpeg_quality)?;
    let truth = truth_for(ls, image_file);
    let text = serde_json::to_string_pretty(&truth).expect("truth always serialises") + "\n";
    // Every file written whole or not at all (a stopped generation never leaves a half-written fixture).
    let atomic = |path: PathBuf, bytes: &[u8]| {
        crate::files::write_atomic(&path, bytes).map_err(|e| RenderError::Io { path, source: std::io::Error::other(e.to_string()) })
    };
    atomic(dir.join(TRUTH_FILE), text.as_bytes())?;
    ls.scene.camera.intrinsics.save(&dir.join(CAMERA_FILE), &[])?;
    atomic(dir.join(SCENE_FILE), ls.scene.to_json().as_bytes())?;
    Ok(truth)
}

/// Every fixture folder under `root` (itself included), sorted by path.
pub fn list(root: &Path) -> Result<Vec<PathBuf>, FixtureError> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    // Symlinked fixture folders are followed (a user's selection of scenes is often a folder of links);
    // each real folder is visited once, so a link cycle cannot loop.
    let mut seen = std::collections::HashSet::new();
    while let Some(dir) = stack.pop() {
        if !seen.insert(std::fs::canonicalize(&dir).unwrap_or_else(|_| dir.clone())) {
            continue;
        }
        if dir.join(TRUTH_FILE).is_file() {
            out.push(dir.clone());
        }
        let entries = std::fs::read_dir(&dir).map_err(|source| FixtureError::Io { path: dir.clone(), source })?;
        for e in entries {
            let e = e.map_err(|source| FixtureError::Io { path: dir.clone(), source })?;
            if e.path().is_dir() {
                stack.push(e.path());
            }
        }
    }
    out.sort();
    Ok(out)
}
