//! The scene file: a versioned JSON description of what the renderer draws (board,
//! pieces, camera, lights, appearance, image effects), with validation that names
//! the offending field.
//!
//! Every length is board millimetres in the one board frame (`docs/board-format.md`).

use crate::board::{Board, BoardError, ConstructionKeys};
use crate::calls::FoulLine;
use crate::camera::{Camera, CameraPose};
use crate::geom::BoardPoint3;
use crate::piece::{PieceId, PieceKind};
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The scene-file format version this build reads and writes.
pub const SCENE_FORMAT: u32 = 1;

/// Most samples per pixel axis: 8 x 8 = 64 samples already resolves edges to ~1/64 px.
pub const MAX_SUPERSAMPLE: u32 = 8;
/// A tilt of 90 degrees or more would stand the piece on its edge or upside down.
pub const MAX_TILT_DEG: f64 = 89.0;
/// Pieces further than this from the board origin are certainly a typo (metres, not mm).
pub const MAX_COORDINATE_MM: f64 = 100_000.0;
/// At most this many prints on a surface: real boards carry a few numbers and a logo.
pub const MAX_PRINTS: usize = 32;
/// A printed number has at most this many digits (a board's values and a year fit).
pub const MAX_PRINT_DIGITS: usize = 4;
/// A print is from 1 cm to 1 m across: painted marks a camera could see, on a board at most 2 m wide.
pub const PRINT_SIZE_MM: (f64, f64) = (10.0, 1000.0);
/// Floor tiles from 2 cm (mosaic) to 2 m (slabs) a side; grout at most 50 mm and narrower than a tile.
pub const FLOOR_TILE_MM: (f64, f64) = (20.0, 2000.0);
pub const MAX_GROUT_MM: f64 = 50.0;
/// Planks from 2 cm to 1 m wide (a surface is at most 2 m wide).
pub const PLANK_WIDTH_MM: (f64, f64) = (20.0, 1000.0);

/// Everything that can be wrong with a scene file.
#[derive(Debug, thiserror::Error)]
pub enum SceneError {
    #[error("cannot read scene file {path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    #[error("scene {origin}: malformed JSON at line {line}, column {column}: {message}")]
    Syntax { origin: String, line: usize, column: usize, message: String },
    #[error("scene {origin}: format {found} is not supported (this build reads format {SCENE_FORMAT})")]
    Format { origin: String, found: u32 },
    #[error("scene {origin}: board: {source}")]
    Board { origin: String, source: BoardError },
    #[error("scene {origin}: `{field}` {problem}")]
    Invalid { origin: String, field: String, problem: String },
}

/// Where the camera is: either looking from a position at a target, or OpenCV's
/// `rvec`/`tvec` (board point `X` maps to camera coordinates `R(rvec) X + tvec`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum PoseSpec {
    LookAt {
        position: BoardPoint3,
        target: BoardPoint3,
        /// The board direction that should point up in the image.
        up: [f64; 3],
    },
    RvecTvec { rvec: [f64; 3], tvec: [f64; 3] },
}

impl PoseSpec {
    /// The pose, or `None` when `up` is parallel to the viewing direction.
    pub fn resolve(&self) -> Option<CameraPose> {
        match *self {
            PoseSpec::LookAt { position, target, up } => CameraPose::look_at(position, target, up),
            PoseSpec::RvecTvec { rvec, tvec } => Some(CameraPose::from_rvec_tvec(rvec, tvec)),
        }
    }
}

/// The camera: intrinsics and distortion (OpenCV's model) and its pose.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CameraSpec {
    pub intrinsics: Camera,
    pub pose: PoseSpec,
}

/// One piece. `x_mm`, `y_mm`, `z_mm` place the piece's centre (on its axis, at
/// mid-thickness), so `x_mm, y_mm` is the footprint centre the calls use; `z_mm`
/// defaults to resting flat on the playing surface (half the piece's thickness).
/// A tilted piece rises by `tilt_deg` towards the board direction `tilt_towards_deg`
/// (degrees from `+x` towards `+y`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PieceSpec {
    pub id: PieceId,
    pub kind: PieceKind,
    pub x_mm: f64,
    pub y_mm: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub z_mm: Option<f64>,
    #[serde(default)]
    pub tilt_deg: f64,
    #[serde(default)]
    pub tilt_towards_deg: f64,
}

/// A light: a disc of radius `radius_mm` facing the board (0 = a point light and
/// hard shadows; larger = softer shadows), of colour temperature `kelvin`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Light {
    pub position: BoardPoint3,
    /// Irradiance on a surface facing the light at 1 m, relative (1.0 = a well-lit board).
    pub intensity: f64,
    #[serde(default)]
    pub radius_mm: f64,
    #[serde(default = "default_kelvin")]
    pub kelvin: f64,
}

fn default_kelvin() -> f64 {
    5000.0
}

/// Surface appearance: colours are linear RGB in 0..1.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Appearance {
    /// Seeds the procedural wood grain and paint wear.
    pub texture_seed: u64,
    pub wood_colour: [f64; 3],
    /// Depth of the grain's light/dark banding, 0..1.
    pub wood_grain: f64,
    /// Spacing of the grain's growth rings across the board, mm.
    pub grain_spacing_mm: f64,
    pub line_colour: [f64; 3],
    /// Fraction of the painted lines worn back to wood, 0..1.
    pub paint_wear: f64,
    pub red_colour: [f64; 3],
    pub blue_colour: [f64; 3],
    pub disc_colour: [f64; 3],
    /// Strength of the lacquer's mirror-like highlight (glare), 0..1.
    pub specular: f64,
    /// Blinn-Phong exponent of the highlight: larger = a smaller, sharper glare spot.
    pub shininess: f64,
    /// Light from everywhere (room, sky), relative to a light's intensity.
    pub ambient: f64,
    /// Brightness multiplier before the sensor (1 = nominal).
    pub exposure: f64,
    /// The camera's white balance, kelvin: lights of another temperature leave a tint.
    pub white_balance_kelvin: f64,
    /// The shuffleboard's rails, the sjoelbak's walls and gate bar: painted or another wood
    /// (`None`: the surface's wood, darker).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rail_colour: Option<[f64; 3]>,
    /// The shuffleboard's gutter floor (`None`: near black).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gutter_colour: Option<[f64; 3]>,
    /// The floor the board stands on (`None`: plain grey concrete).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub floor: Option<FloorLook>,
    /// A painted playing surface (`None`: lacquered wood); the grain shows faintly through.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub surface_paint: Option<[f64; 3]>,
    /// The surface glued from planks this wide (across the board), each its own tone, with
    /// fine seams along the board (`None`: one piece of wood).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub plank_width_mm: Option<f64>,
    /// Numbers and logos painted on the playing surface.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub prints: Vec<Print>,
    /// How the shuffleboard weights are made (`None`: the whole top is the team's colour).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub weight_look: Option<WeightLook>,
}

/// A shuffleboard weight as weights are made: a chrome body whose top holds a
/// coloured cap smaller than the body (a chrome ring round it), with a number
/// printed on the cap.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WeightLook {
    /// The coloured cap's radius (mm), at most the body's.
    pub cap_radius_mm: f64,
    /// Digits printed on the cap's centre (`None`: a plain cap), as block numerals.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cap_number: Option<String>,
    /// The printed number's colour (linear RGB).
    #[serde(default = "print_white")]
    pub cap_print_colour: [f64; 3],
}

fn print_white() -> [f64; 3] {
    [0.85, 0.85, 0.82]
}

pub use crate::piece::MIN_CAP_RADIUS_MM;

/// A floor of square tiles with grout lines between them.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FloorLook {
    /// The tiles' mean colour.
    pub colour: [f64; 3],
    /// How much one tile's brightness differs from the next, 0..1.
    pub variation: f64,
    /// Tile side, mm.
    pub tile_mm: f64,
    /// Width of the grout lines, mm (0 = none, a plain floor).
    pub grout_mm: f64,
    pub grout_colour: [f64; 3],
    /// The tiles' rows turned from the board's `x` axis, degrees.
    pub angle_deg: f64,
}

/// What a print shows.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum Mark {
    /// Digits (`0`-`9`, at most [`MAX_PRINT_DIGITS`]), as block numerals `size_mm` high.
    Number(String),
    /// A roundel: a ring `size_mm` across with a bar through it.
    Roundel,
}

/// A number or logo painted on the playing surface, worn like the lines.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Print {
    pub mark: Mark,
    /// Its centre on the surface.
    pub x_mm: f64,
    pub y_mm: f64,
    /// A number's height, or a roundel's outer diameter.
    pub size_mm: f64,
    /// Turned from reading along `+x` (upright towards `+y`), degrees.
    pub angle_deg: f64,
    pub colour: [f64; 3],
}

impl Default for Appearance {
    fn default() -> Self {
        Appearance {
            texture_seed: 1,
            wood_colour: [0.52, 0.30, 0.14],
            wood_grain: 0.35,
            grain_spacing_mm: 9.0,
            line_colour: [0.02, 0.02, 0.02],
            paint_wear: 0.1,
            red_colour: [0.62, 0.03, 0.03],
            blue_colour: [0.02, 0.08, 0.55],
            disc_colour: [0.78, 0.62, 0.40],
            specular: 0.25,
            shininess: 300.0,
            ambient: 0.25,
            exposure: 1.0,
            white_balance_kelvin: 5000.0,
            rail_colour: None,
            gutter_colour: None,
            floor: None,
            surface_paint: None,
            plank_width_mm: None,
            prints: Vec::new(),
            weight_look: None,
        }
    }
}

/// What the sensor and encoder do to the rendered light.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Effects {
    /// Read noise, standard deviation in 8-bit levels.
    pub read_noise: f64,
    /// Shot noise: variance in 8-bit levels per level of signal.
    pub shot_noise: f64,
    /// Gaussian lens/motion blur, pixels (0 = none).
    pub blur_sigma_px: f64,
    /// Brightness at the image corners relative to the centre (1 = no vignetting).
    pub vignetting: f64,
    /// JPEG quality when writing `.jpg` (1..100).
    pub jpeg_quality: u8,
}

impl Default for Effects {
    fn default() -> Self {
        Effects { read_noise: 1.5, shot_noise: 0.08, blur_sigma_px: 0.0, vignetting: 0.9, jpeg_quality: 90 }
    }
}

impl Effects {
    /// No noise, blur or vignetting: the exact rendered light (for measurement tests).
    pub fn clean() -> Self {
        Effects { read_noise: 0.0, shot_noise: 0.0, blur_sigma_px: 0.0, vignetting: 1.0, jpeg_quality: 100 }
    }
}

fn default_supersample() -> u32 {
    2
}

/// A scene as written in a scene file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scene {
    pub format: u32,
    /// A built-in board name, `NAME@VARIANT`, or a board file path.
    pub board: String,
    /// Shuffleboard only: the designated foul line for the truth's calls.
    #[serde(default)]
    pub foul_line: FoulLine,
    /// The table's construction where it differs from the board file's (a 95 mm gutter,
    /// a bridged gate bar): any of the keys of the board's `[construction]` section.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub construction: Option<ConstructionKeys>,
    pub camera: CameraSpec,
    pub pieces: Vec<PieceSpec>,
    /// Empty: one soft light above the board's target end.
    #[serde(default)]
    pub lights: Vec<Light>,
    #[serde(default)]
    pub appearance: Appearance,
    #[serde(default)]
    pub effects: Effects,
    /// Samples per pixel along each axis (2 = 4 samples per pixel).
    #[serde(default = "default_supersample")]
    pub supersample: u32,
    /// Seeds the sensor noise (the scene is otherwise fully described by the file).
    #[serde(default)]
    pub seed: u64,
    /// Free labels (e.g. the hard cases a fixture shows).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<String>,
}

/// A validated scene: the file, its board, and the resolved camera pose.
#[derive(Debug, Clone)]
pub struct LoadedScene {
    pub scene: Scene,
    pub board: Board,
    pub pose: CameraPose,
}

/// The thickness (height) of a piece of `kind` on `board`, or `None` if the kind
/// is not played on that board.
pub fn piece_thickness(board: &Board, kind: PieceKind) -> Option<f64> {
    Some(board.piece()).filter(|p| p.kind == kind).map(|p| p.thickness_mm)
}

/// The outer radius of a piece of `kind` on `board`.
pub fn piece_radius(board: &Board, kind: PieceKind) -> Option<f64> {
    Some(board.piece()).filter(|p| p.kind == kind).map(|p| p.radius_mm)
}

impl PieceSpec {
    /// The height of the piece's centre: `z_mm`, or resting flat on the surface.
    pub fn centre_z(&self, thickness_mm: f64) -> f64 {
        self.z_mm.unwrap_or(thickness_mm / 2.0)
    }

    pub fn centre(&self, thickness_mm: f64) -> BoardPoint3 {
        BoardPoint3::new(self.x_mm, self.y_mm, self.centre_z(thickness_mm))
    }

    /// The piece's axis (unit normal of its top face) in the board frame.
    pub fn axis(&self) -> [f64; 3] {
        let (t, a) = (self.tilt_deg.to_radians(), self.tilt_towards_deg.to_radians());
        [-t.sin() * a.cos(), -t.sin() * a.sin(), t.cos()]
    }
}

impl Scene {
    /// Reads and validates a scene file.
    pub fn load(path: &Path) -> Result<LoadedScene, SceneError> {
        let text = std::fs::read_to_string(path).map_err(|source| SceneError::Io { path: path.to_path_buf(), source })?;
        let origin = path.display().to_string();
        let scene = Scene::from_json(&text, &origin)?;
        // A board file named relative to the scene resolves beside it.
        let board_spec = match path.parent() {
            Some(dir) if !scene.board.contains('@') && dir.join(&scene.board).is_file() => {
                dir.join(&scene.board).display().to_string()
            }
            _ => scene.board.clone(),
        };
        scene.validate_with(&origin, &board_spec)
    }

    /// Parses scene JSON without validating it against its board.
    pub fn from_json(text: &str, origin: &str) -> Result<Scene, SceneError> {
        // Check the version first, so an old or future file says so rather than
        // failing on a field it does not know.
        if let Ok(v) = serde_json::from_str::<serde_json::Value>(text) {
            if let Some(f) = v.get("format").and_then(|f| f.as_u64()) {
                if f != SCENE_FORMAT as u64 {
                    return Err(SceneError::Format { origin: origin.to_string(), found: f as u32 });
                }
            }
        }
        serde_json::from_str(text).map_err(|e| SceneError::Syntax {
            origin: origin.to_string(),
            line: e.line(),
            column: e.column(),
            message: e.to_string(),
        })
    }

    /// Validates the scene against its board (loaded by name with [`Board::load`]).
    pub fn validate(self, origin: &str) -> Result<LoadedScene, SceneError> {
        let spec = self.board.clone();
        self.validate_with(origin, &spec)
    }

    /// The scene as pretty JSON (round-trips through [`Scene::from_json`]).
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("a scene always serialises") + "\n"
    }

    fn validate_with(self, origin: &str, board_spec: &str) -> Result<LoadedScene, SceneError> {
        let bad = |field: &str, problem: String| SceneError::Invalid {
            origin: origin.to_string(),
            field: field.to_string(),
            problem,
        };
        if self.format != SCENE_FORMAT {
            return Err(SceneError::Format { origin: origin.to_string(), found: self.format });
        }
        let board = Board::load(board_spec).map_err(|source| SceneError::Board { origin: origin.to_string(), source })?;
        let board = match &self.construction {
            Some(keys) => board.with_construction(keys).map_err(|p| bad(&format!("construction.{}", p.key), p.problem))?,
            None => board,
        };
        let finite = |field: &str, v: &[f64]| -> Result<(), SceneError> {
            if v.iter().all(|x| x.is_finite() && x.abs() < MAX_COORDINATE_MM) {
                Ok(())
            } else {
                Err(bad(field, format!("must be finite and within {MAX_COORDINATE_MM} mm, got {v:?}")))
            }
        };
        // The same checks as a camera file's (image at most 8K, focal lengths and principal point of a real
        // camera, finite distortion), named by the scene's field.
        if let Err(e) = self.camera.intrinsics.check() {
            return Err(bad(&format!("camera.intrinsics.{}", e.field.name()), e.problem));
        }
        match &self.camera.pose {
            PoseSpec::LookAt { position, target, up } => {
                finite("camera.pose.look_at.position", &[position.x_mm, position.y_mm, position.z_mm])?;
                finite("camera.pose.look_at.target", &[target.x_mm, target.y_mm, target.z_mm])?;
                finite("camera.pose.look_at.up", up)?;
            }
            PoseSpec::RvecTvec { rvec, tvec } => {
                finite("camera.pose.rvec_tvec.rvec", rvec)?;
                finite("camera.pose.rvec_tvec.tvec", tvec)?;
            }
        }
        let pose = self
            .camera
            .pose
            .resolve()
            .ok_or_else(|| bad("camera.pose.look_at.up", "is parallel to the viewing direction".into()))?;
        if !(1..=MAX_SUPERSAMPLE).contains(&self.supersample) {
            return Err(bad("supersample", format!("must be 1..={MAX_SUPERSAMPLE} samples per axis, got {}", self.supersample)));
        }
        let mut ids = BTreeSet::new();
        for (i, p) in self.pieces.iter().enumerate() {
            let field = |name: &str| format!("pieces[{i}].{name}");
            if piece_thickness(&board, p.kind).is_none() {
                return Err(bad(&field("kind"), format!("a {:?} is not played on board `{}`", p.kind, board.name)));
            }
            let needs_team = p.kind != PieceKind::Disc;
            if needs_team != p.id.team.is_some() {
                return Err(bad(
                    &field("id"),
                    format!("`{}`: weights and washers need a team (`red#1`), discs none (`disc#1`)", p.id),
                ));
            }
            if !ids.insert(p.id) {
                return Err(bad(&field("id"), format!("`{}` is used twice", p.id)));
            }
            finite(&field("x_mm"), &[p.x_mm, p.y_mm, p.z_mm.unwrap_or(0.0), p.tilt_towards_deg])?;
            if !(0.0..=MAX_TILT_DEG).contains(&p.tilt_deg) {
                return Err(bad(&field("tilt_deg"), format!("must be 0..={MAX_TILT_DEG} degrees, got {}", p.tilt_deg)));
            }
        }
        for (i, l) in self.lights.iter().enumerate() {
            let field = |name: &str| format!("lights[{i}].{name}");
            finite(&field("position"), &[l.position.x_mm, l.position.y_mm, l.position.z_mm])?;
            if !(l.intensity.is_finite() && l.intensity >= 0.0) {
                return Err(bad(&field("intensity"), format!("must be zero or positive, got {}", l.intensity)));
            }
            if !(l.radius_mm.is_finite() && l.radius_mm >= 0.0) {
                return Err(bad(&field("radius_mm"), format!("must be zero or positive, got {}", l.radius_mm)));
            }
            if !(1000.0..=20000.0).contains(&l.kelvin) {
                return Err(bad(&field("kelvin"), format!("must be 1000..=20000 K, got {}", l.kelvin)));
            }
        }
        let a = &self.appearance;
        for (name, c) in [
            ("wood_colour", a.wood_colour),
            ("line_colour", a.line_colour),
            ("red_colour", a.red_colour),
            ("blue_colour", a.blue_colour),
            ("disc_colour", a.disc_colour),
            ("rail_colour", a.rail_colour.unwrap_or_default()),
            ("gutter_colour", a.gutter_colour.unwrap_or_default()),
            ("surface_paint", a.surface_paint.unwrap_or_default()),
            ("floor.colour", a.floor.map_or([0.0; 3], |f| f.colour)),
            ("floor.grout_colour", a.floor.map_or([0.0; 3], |f| f.grout_colour)),
        ] {
            if !c.iter().all(|v| (0.0..=1.0).contains(v)) {
                return Err(bad(&format!("appearance.{name}"), format!("must be linear RGB in 0..1, got {c:?}")));
            }
        }
        for (name, v, lo, hi) in [
            ("wood_grain", a.wood_grain, 0.0, 1.0),
            ("grain_spacing_mm", a.grain_spacing_mm, 0.5, 1000.0),
            ("paint_wear", a.paint_wear, 0.0, 1.0),
            ("specular", a.specular, 0.0, 1.0),
            ("shininess", a.shininess, 1.0, 100_000.0),
            ("ambient", a.ambient, 0.0, 10.0),
            ("exposure", a.exposure, 0.01, 100.0),
            ("white_balance_kelvin", a.white_balance_kelvin, 1000.0, 20000.0),
        ] {
            if !(lo..=hi).contains(&v) {
                return Err(bad(&format!("appearance.{name}"), format!("must be {lo}..={hi}, got {v}")));
            }
        }
        if let Some(w) = a.plank_width_mm {
            if !(PLANK_WIDTH_MM.0..=PLANK_WIDTH_MM.1).contains(&w) {
                return Err(bad("appearance.plank_width_mm", format!("must be {}..={} mm, got {w}", PLANK_WIDTH_MM.0, PLANK_WIDTH_MM.1)));
            }
        }
        if let Some(f) = &a.floor {
            if !(FLOOR_TILE_MM.0..=FLOOR_TILE_MM.1).contains(&f.tile_mm) {
                return Err(bad("appearance.floor.tile_mm", format!("must be {}..={} mm, got {}", FLOOR_TILE_MM.0, FLOOR_TILE_MM.1, f.tile_mm)));
            }
            if !((0.0..=MAX_GROUT_MM).contains(&f.grout_mm) && f.grout_mm < f.tile_mm) {
                return Err(bad("appearance.floor.grout_mm", format!("must be 0..={MAX_GROUT_MM} mm and narrower than a tile, got {}", f.grout_mm)));
            }
            if !(0.0..=1.0).contains(&f.variation) {
                return Err(bad("appearance.floor.variation", format!("must be 0..=1, got {}", f.variation)));
            }
            finite("appearance.floor.angle_deg", &[f.angle_deg])?;
        }
        if a.prints.len() > MAX_PRINTS {
            return Err(bad("appearance.prints", format!("at most {MAX_PRINTS} prints, got {}", a.prints.len())));
        }
        for (i, p) in a.prints.iter().enumerate() {
            let field = |name: &str| format!("appearance.prints[{i}].{name}");
            finite(&field("x_mm"), &[p.x_mm, p.y_mm, p.angle_deg])?;
            if !(PRINT_SIZE_MM.0..=PRINT_SIZE_MM.1).contains(&p.size_mm) {
                return Err(bad(&field("size_mm"), format!("must be {}..={} mm, got {}", PRINT_SIZE_MM.0, PRINT_SIZE_MM.1, p.size_mm)));
            }
            if !p.colour.iter().all(|v| (0.0..=1.0).contains(v)) {
                return Err(bad(&field("colour"), format!("must be linear RGB in 0..1, got {:?}", p.colour)));
            }
            if let Mark::Number(text) = &p.mark {
                if text.is_empty() || text.len() > MAX_PRINT_DIGITS || !text.bytes().all(|b| b.is_ascii_digit()) {
                    return Err(bad(&field("mark.number"), format!("must be 1 to {MAX_PRINT_DIGITS} digits 0-9, got {text:?}")));
                }
            }
        }
        if let Some(w) = &a.weight_look {
            let body = board.piece().radius_mm;
            if !(MIN_CAP_RADIUS_MM..=body).contains(&w.cap_radius_mm) {
                return Err(bad("appearance.weight_look.cap_radius_mm", format!("must be {MIN_CAP_RADIUS_MM}..={body} mm (the body's radius), got {}", w.cap_radius_mm)));
            }
            if !w.cap_print_colour.iter().all(|v| (0.0..=1.0).contains(v)) {
                return Err(bad("appearance.weight_look.cap_print_colour", format!("must be linear RGB in 0..1, got {:?}", w.cap_print_colour)));
            }
            if let Some(text) = &w.cap_number {
                if text.is_empty() || text.len() > MAX_PRINT_DIGITS || !text.bytes().all(|b| b.is_ascii_digit()) {
                    return Err(bad("appearance.weight_look.cap_number", format!("must be 1 to {MAX_PRINT_DIGITS} digits 0-9, got {text:?}")));
                }
            }
        }
        let e = &self.effects;
        for (name, v, lo, hi) in [
            ("read_noise", e.read_noise, 0.0, 100.0),
            ("shot_noise", e.shot_noise, 0.0, 100.0),
            ("blur_sigma_px", e.blur_sigma_px, 0.0, 50.0),
            ("vignetting", e.vignetting, 0.0, 1.0),
        ] {
            if !(lo..=hi).contains(&v) {
                return Err(bad(&format!("effects.{name}"), format!("must be {lo}..={hi}, got {v}")));
            }
        }
        if !(1..=100).contains(&e.jpeg_quality) {
            return Err(bad("effects.jpeg_quality", format!("must be 1..=100, got {}", e.jpeg_quality)));
        }
        Ok(LoadedScene { scene: self, board, pose })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::camera::Distortion;
    use crate::piece::Team;

    pub(crate) fn example() -> Scene {
        Scene {
            format: SCENE_FORMAT,
            board: "yocu-4".into(),
            foul_line: FoulLine::Long,
            construction: None,
            camera: CameraSpec {
                intrinsics: Camera {
                    image_width: 320,
                    image_height: 240,
                    fx: 300.0,
                    fy: 300.0,
                    cx: 160.0,
                    cy: 120.0,
                    distortion: Distortion::default(),
                },
                pose: PoseSpec::LookAt {
                    position: BoardPoint3::new(0.0, 800.0, 2500.0),
                    target: BoardPoint3::new(0.0, 800.0, 0.0),
                    up: [0.0, -1.0, 0.0],
                },
            },
            pieces: vec![PieceSpec {
                id: PieceId::of_team(Team::Red, 1),
                kind: PieceKind::Washer,
                x_mm: 0.0,
                y_mm: 700.0,
                z_mm: None,
                tilt_deg: 0.0,
                tilt_towards_deg: 0.0,
            }],
            lights: vec![],
            appearance: Appearance::default(),
            effects: Effects::default(),
            supersample: 2,
            seed: 7,
            tags: vec![],
        }
    }

    #[test]
    fn scenes_round_trip_through_json_and_validate() {
        let s = example();
        let back = Scene::from_json(&s.to_json(), "test").unwrap();
        assert_eq!(back, s);
        let loaded = back.validate("test").unwrap();
        assert_eq!(loaded.board.name, "yocu-4");
    }

    #[test]
    fn a_fisheye_scene_round_trips_through_json_and_validates() {
        let mut s = example();
        s.camera.intrinsics.distortion = Distortion::fisheye(-0.013, -0.0084, 0.0039, -0.0008);
        let text = s.to_json();
        assert!(text.contains("\"model\": \"fisheye\""), "{text}");
        let back = Scene::from_json(&text, "test").unwrap();
        assert_eq!(back.to_json(), text, "the fisheye scene reads and writes back byte for byte");
        back.validate("test").unwrap();
    }

    #[test]
    fn malformed_json_names_line_and_column() {
        let e = Scene::from_json("{\n  \"format\": 1,\n  \"board\": }", "bad.json").unwrap_err();
        assert!(matches!(e, SceneError::Syntax { line: 3, .. }), "{e}");
    }

    #[test]
    fn a_future_format_is_named() {
        let text = example().to_json().replace("\"format\": 1", "\"format\": 9");
        let e = Scene::from_json(&text, "f.json").unwrap_err().to_string();
        assert!(e.contains("format 9"), "{e}");
    }

    #[test]
    fn invalid_scenes_name_the_field() {
        let mut s = example();
        s.pieces[0].kind = PieceKind::Weight;
        let e = s.validate("t").unwrap_err().to_string();
        assert!(e.contains("pieces[0].kind"), "{e}");

        let mut s = example();
        s.pieces.push(s.pieces[0]);
        let e = s.validate("t").unwrap_err().to_string();
        assert!(e.contains("pieces[1].id") && e.contains("twice"), "{e}");

        let mut s = example();
        s.pieces[0].tilt_deg = 95.0;
        assert!(s.validate("t").unwrap_err().to_string().contains("tilt_deg"));

        let mut s = example();
        s.camera.intrinsics.fx = -1.0;
        assert!(s.validate("t").unwrap_err().to_string().contains("camera.intrinsics.fx"));

        let mut s = example();
        s.camera.intrinsics.cy = f64::NAN;
        assert!(s.validate("t").unwrap_err().to_string().contains("camera.intrinsics.cy"));

        let mut s = example();
        s.camera.intrinsics.image_width = 16_000;
        assert!(s.validate("t").unwrap_err().to_string().contains("camera.intrinsics.image_width"));

        let mut s = example();
        s.camera.intrinsics.distortion = Distortion::fisheye(0.01, f64::INFINITY, 0.0, 0.0);
        assert!(s.validate("t").unwrap_err().to_string().contains("camera.intrinsics.distortion.k2"));

        let mut s = example();
        s.supersample = 0;
        assert!(s.validate("t").unwrap_err().to_string().contains("supersample"));

        let mut s = example();
        s.board = "no-such-board".into();
        assert!(matches!(s.validate("t"), Err(SceneError::Board { .. })));

        let text = example().to_json().replace("\"supersample\"", "\"supersampel\"");
        let e = Scene::from_json(&text, "t").unwrap_err().to_string();
        assert!(e.contains("supersampel"), "{e}");
    }
}
