//! The hole-state model's training set (`boardcall fixtures training-set`):
//! washer-board scenes planned by the fixture generator's recipe, the varied
//! set's domain-randomised one (fisheye lenses, printed marks, tiled floors,
//! other light and paint), or both in turn, under other seeds than the
//! committed sets', with extra hole states added (leaners, flat washers, two in
//! a cup, washers on the rim outside), rendered, JPEG-encoded as the fixtures
//! are, and cut into labelled hole patches by the same [`super::hole_patch`]
//! the run time uses. Everything is drawn from PCG-64 seeded from the set's
//! seed, so the set regenerates exactly.

use super::{hole_patch, PATCH_FEATURES};
use crate::board::{Board, Layout};
use crate::calls::WasherCall;
use crate::measure::ColourView;
use crate::piece::{PieceId, PieceKind, Team};
use crate::render::generate::{plan_set, GenerateConfig, DEFAULT_SEED};
use crate::render::varied::VARIED_SEED;
use crate::render::plan::pixel_in_frame;
use crate::render::scene::PieceSpec;
use crate::render::shade::hash;
use crate::render::truth::{cap_edge_points, truth_for, PieceCall};
use crate::render::RenderError;
use rand::{RngExt, SeedableRng};
use rand_pcg::Pcg64;
use std::io::Write;
use std::path::{Path, PathBuf};

/// A free hole (no piece near it) gets an added state with this probability:
/// the fixture recipe alone has too few leaners and doubles to learn from.
const ADD_STATE_P: f64 = 0.6;
/// Patches are cut this far (mm, uniform in x and y) off the hole's centre, so
/// the model tolerates a located pose's error (~1 mm on the fixtures).
const JITTER_MM: f64 = 2.0;
/// Added pieces keep this many pixels inside the frame, as the recipe's do.
const FRAME_MARGIN_PX: f64 = 24.0;
/// Added pieces keep this much air (mm) from other pieces at their height.
const GAP_MM: f64 = 2.0;

/// Errors writing a training set.
#[derive(Debug, thiserror::Error)]
pub enum TrainingError {
    #[error(transparent)]
    Render(#[from] RenderError),
    #[error("JPEG round trip of scene {scene}: {source}")]
    Image { scene: String, source: image::ImageError },
    #[error("cannot write {path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
}

/// Which scene recipe a training set draws its washer-board scenes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TrainingRecipe {
    /// The fixture generator's (`fixtures generate`): brown lenses, plain boards.
    Fixtures,
    /// The varied set's (`fixtures generate --varied`): fisheye lenses, printed marks on the board, tiled floors,
    /// harder light: the looks the model meets on tables nobody here drew.
    Varied,
    /// Each in turn, a round of one then a round of the other.
    Both,
}

impl TrainingRecipe {
    /// The recipe round `round` draws from: `Both` takes the other two in turn.
    fn of_round(self, round: u64) -> TrainingRecipe {
        match self {
            TrainingRecipe::Both if round % 2 == 0 => TrainingRecipe::Fixtures,
            TrainingRecipe::Both => TrainingRecipe::Varied,
            one => one,
        }
    }

    /// Its name in `labels.csv`.
    fn name(self) -> &'static str {
        match self {
            TrainingRecipe::Fixtures => "fixtures",
            TrainingRecipe::Varied => "varied",
            TrainingRecipe::Both => "both",
        }
    }

    /// The scenes its recipe plans under `gen`'s seed (`Both` is split into rounds first: [`TrainingRecipe::of_round`]).
    fn plan(self, gen: &GenerateConfig) -> Result<Vec<crate::render::generate::Planned>, RenderError> {
        match self {
            TrainingRecipe::Varied => crate::render::varied::plan_set(gen),
            _ => plan_set(gen),
        }
    }
}

/// Settings of a training set.
#[derive(Debug, Clone, Copy)]
pub struct TrainingConfig {
    pub seed: u64,
    pub recipe: TrainingRecipe,
    /// Washer-board scenes to render.
    pub scenes: usize,
    /// Samples per pixel axis (the fixtures use 2).
    pub supersample: u32,
    pub threads: usize,
}

/// What was written.
#[derive(Debug, Clone, Default)]
pub struct TrainingSummary {
    pub scenes: usize,
    pub patches: usize,
    pub leaners: usize,
    pub flat: usize,
    pub doubles: usize,
}

/// One hole's truth: per team (red, blue), washers leaning in it and lying flat in its cup.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct HoleLabel {
    pub leaners: [u32; 2],
    pub flat: [u32; 2],
}

fn slot(team: Team) -> usize {
    match team {
        Team::Red => 0,
        Team::Blue => 1,
    }
}

/// Adds random hole states to a planned washer scene's free holes.
fn add_hole_states(board: &Board, pieces: &mut Vec<PieceSpec>, cam: &crate::camera::Camera, pose: &crate::camera::CameraPose, rng: &mut Pcg64) {
    let w = board.washer().expect("a washer board");
    let (r, th) = (w.washer_outer_diameter_mm / 2.0, w.washer_thickness_mm);
    let bottom_z = -w.cup_depth_mm + th / 2.0;
    let mut next = [0u32; 2];
    for p in pieces.iter() {
        if let Some(t) = p.id.team {
            next[slot(t)] = next[slot(t)].max(p.id.number);
        }
    }
    let mut id = |t: Team| {
        next[slot(t)] += 1;
        PieceId::of_team(t, next[slot(t)])
    };
    let team = |rng: &mut Pcg64| if rng.random_bool(0.5) { Team::Red } else { Team::Blue };
    let spec = |id: PieceId, x: f64, y: f64, z: Option<f64>, tilt: f64, towards: f64| PieceSpec {
        id,
        kind: PieceKind::Washer,
        x_mm: x,
        y_mm: y,
        z_mm: z,
        tilt_deg: tilt,
        tilt_towards_deg: towards,
    };
    for hl in w.holes.clone() {
        let rh = hl.radius();
        let taken = pieces.iter().any(|p| (p.x_mm - hl.x_mm).hypot(p.y_mm - hl.y_mm) < rh + r + 1.0);
        if taken || !rng.random_bool(ADD_STATE_P) {
            continue;
        }
        let mut group = Vec::new();
        let flat = |rng: &mut Pcg64, id: PieceId| {
            let (a, off) = (rng.random_range(0.0..std::f64::consts::TAU), rng.random_range(0.0..rh - r - 0.5));
            spec(id, hl.x_mm + off * a.cos(), hl.y_mm + off * a.sin(), Some(bottom_z), 0.0, 0.0)
        };
        // The fixture generator's leaner: propped on the rim, rising towards `a`.
        let leaner = |rng: &mut Pcg64, id: PieceId| {
            let tilt: f64 = rng.random_range(10.0..40.0);
            let tr = tilt.to_radians();
            let d = rng.random_range((rh - r * 0.8 * tr.cos()).max(0.0)..rh - 3.0);
            let a = rng.random_range(0.0..std::f64::consts::TAU);
            let z = w.propped_centre_z(&hl, d, tilt);
            spec(id, hl.x_mm + d * a.cos(), hl.y_mm + d * a.sin(), Some(z), tilt, a.to_degrees())
        };
        let roll: f64 = rng.random();
        if roll < 0.35 {
            let t = team(rng);
            group.push(leaner(rng, id(t)));
        } else if roll < 0.6 {
            let t = team(rng);
            group.push(flat(rng, id(t)));
        } else if roll < 0.8 {
            // Two in the cup, the second across the first (teams drawn independently).
            let (ta, tb) = (team(rng), team(rng));
            let first = flat(rng, id(ta));
            let a = rng.random_range(0.0..std::f64::consts::TAU);
            let off = rng.random_range(0.0..rh - r - 0.5);
            let tilt = (th / (2.0 * r)).asin().to_degrees();
            let second = spec(id(tb), hl.x_mm + off * a.cos(), hl.y_mm + off * a.sin(), Some(bottom_z + th / 2.0 + 0.2), tilt, (a + std::f64::consts::PI).to_degrees());
            group.extend([first, second]);
        } else if roll < 0.9 {
            let (ta, tb) = (team(rng), team(rng));
            group.push(flat(rng, id(ta)));
            group.push(leaner(rng, id(tb)));
        } else {
            // Flat on the wood, overhanging the rim: no washer in the hole.
            let a = rng.random_range(0.0..std::f64::consts::TAU);
            let d = rh + rng.random_range(0.3..10.0);
            let t = team(rng);
            group.push(spec(id(t), hl.x_mm + d * a.cos(), hl.y_mm + d * a.sin(), None, 0.0, 0.0));
        }
        let surface_clear = group.iter().all(|g| {
            pieces.iter().filter(|p| p.z_mm.map_or(true, |z| z > -th)).all(|p| (p.x_mm - g.x_mm).hypot(p.y_mm - g.y_mm) >= 2.0 * r + GAP_MM)
        });
        let in_frame = group.iter().all(|g| cap_edge_points(board, g, 12).iter().all(|q| pixel_in_frame(cam, pose, *q, FRAME_MARGIN_PX).is_some()));
        if surface_clear && in_frame {
            pieces.extend(group);
        }
    }
}

/// Per hole, what lies in it by the truth's calls; `None` for holes with a
/// piece in them that is not wholly in the frame (their state is not seen).
fn hole_labels(truth: &crate::render::truth::Truth, holes: usize) -> Vec<Option<HoleLabel>> {
    let mut out = vec![Some(HoleLabel::default()); holes];
    for p in &truth.pieces {
        let (PieceCall::Washer(m), Some(team)) = (&p.call, p.team) else { continue };
        let (hole, leaner) = match m.call {
            WasherCall::In { hole } => (hole, false),
            WasherCall::Leaner { hole } => (hole, true),
            _ => continue,
        };
        if !p.in_frame {
            out[hole] = None;
        }
        if let Some(l) = &mut out[hole] {
            if leaner {
                l.leaners[slot(team)] += 1;
            } else {
                l.flat[slot(team)] += 1;
            }
        }
    }
    out
}

/// Writes an `.npy` file (format 1.0) of little-endian f32 rows.
fn write_npy(path: &Path, rows: usize, cols: usize, data: &[f32]) -> std::io::Result<()> {
    let mut header = format!("{{'descr': '<f4', 'fortran_order': False, 'shape': ({rows}, {cols}), }}");
    // Magic (6) + version (2) + length (2) + header + newline, padded to 64 bytes.
    while (10 + header.len() + 1) % 64 != 0 {
        header.push(' ');
    }
    header.push('\n');
    let mut f = std::io::BufWriter::new(std::fs::File::create(path)?);
    f.write_all(b"\x93NUMPY\x01\x00")?;
    f.write_all(&(header.len() as u16).to_le_bytes())?;
    f.write_all(header.as_bytes())?;
    for v in data {
        f.write_all(&v.to_le_bytes())?;
    }
    f.flush()
}

/// Renders the set and writes `patches.npy` (`[N, PATCH_FEATURES]` f32) and
/// `labels.csv` (one row per patch, same order) into `out_dir`.
pub fn write_training_set(cfg: &TrainingConfig, out_dir: &Path, mut progress: impl FnMut(&str)) -> Result<TrainingSummary, TrainingError> {
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source| TrainingError::Io { path, source }
    };
    std::fs::create_dir_all(out_dir).map_err(io(out_dir))?;
    let mut patches: Vec<f32> = Vec::new();
    let mut csv = String::from("scene,name,recipe,board,hole,red_leaners,blue_leaners,red_flat,blue_flat,jitter_x_mm,jitter_y_mm\n");
    let mut sum = TrainingSummary::default();
    for round in 0u64.. {
        if sum.scenes >= cfg.scenes {
            break;
        }
        let set_seed = hash(cfg.seed ^ hash(round));
        let recipe = cfg.recipe.of_round(round);
        // Never a committed set's own scenes: the fixtures measure the model.
        if set_seed == DEFAULT_SEED || set_seed == VARIED_SEED {
            continue;
        }
        let gen = GenerateConfig { seed: set_seed, supersample: cfg.supersample, ..Default::default() };
        for planned in recipe.plan(&gen)? {
            if sum.scenes >= cfg.scenes {
                break;
            }
            if !matches!(planned.scene.board.layout, Layout::Washer(_)) {
                continue;
            }
            let mut rng = Pcg64::seed_from_u64(hash(set_seed ^ hash(sum.scenes as u64 + 1)));
            let mut scene = planned.scene.scene.clone();
            add_hole_states(&planned.scene.board, &mut scene.pieces, &scene.camera.intrinsics, &planned.scene.pose, &mut rng);
            let name = format!("{round:03}-{}", planned.name);
            let ls = scene.validate(&name).map_err(RenderError::from)?;
            let img = crate::render::render(&ls, cfg.threads);
            // The fixtures are JPEGs: train on the same artefacts.
            let mut jpeg = Vec::new();
            let encode = image::codecs::jpeg::JpegEncoder::new_with_quality(&mut jpeg, ls.scene.effects.jpeg_quality);
            img.write_with_encoder(encode).map_err(|source| TrainingError::Image { scene: name.clone(), source })?;
            let decoded = image::load_from_memory_with_format(&jpeg, image::ImageFormat::Jpeg)
                .map_err(|source| TrainingError::Image { scene: name.clone(), source })?
                .to_rgb8();
            let mut bgr = decoded.into_raw();
            for px in bgr.chunks_mut(3) {
                px.swap(0, 2);
            }
            let cam = ls.scene.camera.intrinsics;
            let view = ColourView::new(cam.image_width as usize, cam.image_height as usize, &bgr).expect("a rendered image matches its camera");
            let truth = truth_for(&ls, "image.jpg");
            let w = ls.board.washer().expect("a washer board");
            for (hole, label) in hole_labels(&truth, w.holes.len()).into_iter().enumerate() {
                let Some(label) = label else { continue };
                let jitter = (rng.random_range(-JITTER_MM..JITTER_MM), rng.random_range(-JITTER_MM..JITTER_MM));
                let Some(patch) = hole_patch(&view, &cam, &ls.pose, w, hole, jitter) else { continue };
                debug_assert_eq!(patch.len(), PATCH_FEATURES);
                patches.extend_from_slice(&patch);
                csv.push_str(&format!(
                    "{},{},{},{},{},{},{},{},{},{:.3},{:.3}\n",
                    sum.scenes, name, recipe.name(), ls.scene.board, hole, label.leaners[0], label.leaners[1], label.flat[0], label.flat[1], jitter.0, jitter.1
                ));
                sum.patches += 1;
                sum.leaners += (label.leaners[0] + label.leaners[1] > 0) as usize;
                sum.flat += (label.flat[0] + label.flat[1] > 0) as usize;
                sum.doubles += (label.flat[0] + label.flat[1] >= 2) as usize;
            }
            sum.scenes += 1;
            progress(&name);
        }
    }
    let npy = out_dir.join("patches.npy");
    write_npy(&npy, sum.patches, PATCH_FEATURES, &patches).map_err(io(&npy))?;
    let labels = out_dir.join("labels.csv");
    std::fs::write(&labels, csv).map_err(io(&labels))?;
    Ok(sum)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `both` takes the fixture generator's recipe and the varied one in turn, a round each; the others, one.
    #[test]
    fn both_recipes_take_turns_a_round_each() {
        use TrainingRecipe::{Both, Fixtures, Varied};
        let both: Vec<TrainingRecipe> = (0..4).map(|r| Both.of_round(r)).collect();
        assert_eq!(both, [Fixtures, Varied, Fixtures, Varied]);
        assert!((0..4).all(|r| Varied.of_round(r) == Varied && Fixtures.of_round(r) == Fixtures));
        assert_eq!([Fixtures.name(), Varied.name()], ["fixtures", "varied"]);
    }

    #[test]
    fn npy_header_is_aligned_and_readable() {
        let dir = std::env::temp_dir().join(format!("boardcall-npy-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("a.npy");
        write_npy(&path, 2, 3, &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]).unwrap();
        let bytes = std::fs::read(&path).unwrap();
        let header_len = u16::from_le_bytes([bytes[8], bytes[9]]) as usize;
        assert_eq!((10 + header_len) % 64, 0);
        let header = std::str::from_utf8(&bytes[10..10 + header_len]).unwrap();
        assert!(header.contains("'shape': (2, 3)") && header.ends_with('\n'), "{header}");
        assert_eq!(bytes.len(), 10 + header_len + 6 * 4);
        let last = f32::from_le_bytes(bytes[bytes.len() - 4..].try_into().unwrap());
        assert!((last - 6.0).abs() < f32::EPSILON);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
