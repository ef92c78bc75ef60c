//! Shading and the pixel loop: per-pixel rays through the real camera model
//! (distortion inverted per sample), materials with procedural wood grain and
//! worn paint, lights with hard or soft shadows, lacquer glare, colour
//! temperature and exposure; the result is linear light per pixel.

use crate::board::Layout;
use crate::geom::PixelPoint;
use crate::piece::{PieceKind, Team};
use crate::render::raycast::{frame_for_axis, Surface, World, V3, RAY_EPSILON_MM};
use crate::render::scene::{piece_thickness, FloorLook, Light, LoadedScene, Mark, Print, MAX_PRINT_DIGITS};

/// A number printed on a weight's cap is this fraction of the cap's radius high (two digits fit across it).
const CAP_NUMBER_HEIGHT: f64 = 0.8;
/// Rays are followed this far at most (mm): well beyond any room.
const FAR_MM: f64 = 1e7;
/// Light falls off with the square of distance, normalised to this distance (1 m).
const LIGHT_REFERENCE_MM: f64 = 1000.0;
/// Shadow rays start this far off the surface along its normal, clear of
/// self-intersection yet far below anything a pixel resolves.
const SHADOW_OFFSET_MM: f64 = 1e-3;
/// Steel is a metal: its highlight is tinted by its own colour and much stronger.
const STEEL_SPECULAR: f64 = 0.9;
const STEEL_SHININESS: f64 = 60.0;
/// Highlights whose lobe falls below exp(-13.8) = 1e-6 are skipped: far below one
/// 8-bit level even for the sharpest lobe's normalisation (~60).
const SPECULAR_CUTOFF: f64 = 13.8;
/// Points on the unit disc that sample an area light's face (a Fibonacci spiral:
/// evenly spread); each sample picks one by hash.
const DISC_POINTS: usize = 64;
/// A weight's steel body (linear RGB).
pub const STEEL_ALBEDO: [f64; 3] = [0.55, 0.56, 0.58];
/// Painted caps and washers: a satin finish.
const PAINT_SPECULAR: f64 = 0.12;
const PAINT_SHININESS: f64 = 40.0;

/// One plank's tone differs from the mean by up to this fraction (either way): glued-up
/// tops show visibly different boards, not different woods.
const PLANK_TONE: f64 = 0.12;
/// A plank seam: this wide (mm) and this much darker, a fine glue line.
const PLANK_SEAM_MM: f64 = 0.6;
const PLANK_SEAM_SHADE: f64 = 0.55;
/// How much of the wood's grain shows through paint (the rest is the paint's own colour).
const PAINT_GRAIN_SHOW: f64 = 0.12;
/// A painted rail or wall keeps this much of the wood's tone variation (brush marks, wear).
const FRAME_GRAIN_SHOW: f64 = 0.15;
/// Block numerals: width and stroke as fractions of the height, and the gap between digits.
pub(crate) const DIGIT_WIDTH: f64 = 0.58;
const DIGIT_STROKE: f64 = 0.16;
pub(crate) const DIGIT_GAP: f64 = 0.22;
/// Roundel logo: the ring's inner radius and the bar's half height and half length, as
/// fractions of the outer diameter.
const ROUNDEL_INNER: f64 = 0.34;
const ROUNDEL_BAR_HALF_HEIGHT: f64 = 0.09;
pub(crate) const ROUNDEL_BAR_HALF_LENGTH: f64 = 0.62;
/// Which of the seven segments (a top, b top right, c bottom right, d bottom, e bottom
/// left, f top left, g middle; bit 0 = a) each digit lights.
const SEGMENTS: [u8; 10] = [0x3F, 0x06, 0x5B, 0x4F, 0x66, 0x6D, 0x7D, 0x07, 0x7F, 0x6F];

/// Whether the point `(u, v)` (in units of the digit's height, origin at its bottom
/// left) is on the block numeral `digit`.
fn on_digit(digit: u8, u: f64, v: f64) -> bool {
    let (w, s) = (DIGIT_WIDTH, DIGIT_STROKE);
    if !(0.0..=w).contains(&u) || !(0.0..=1.0).contains(&v) {
        return false;
    }
    let lit = SEGMENTS[digit as usize];
    let seg = |bit: u8, inside: bool| lit & (1 << bit) != 0 && inside;
    seg(0, v >= 1.0 - s)
        || seg(3, v <= s)
        || seg(6, (v - 0.5).abs() <= s / 2.0)
        || seg(5, u <= s && v >= 0.5)
        || seg(4, u <= s && v <= 0.5)
        || seg(1, u >= w - s && v >= 0.5)
        || seg(2, u >= w - s && v <= 0.5)
}

/// Whether the surface point `(x, y)` lies on the print.
fn on_print(p: &Print, x: f64, y: f64) -> bool {
    let (dx, dy) = (x - p.x_mm, y - p.y_mm);
    // Everything of a print lies within the longest numeral string's length from its centre.
    let reach = p.size_mm * MAX_PRINT_DIGITS as f64 * (DIGIT_WIDTH + DIGIT_GAP);
    if dx * dx + dy * dy > reach * reach {
        return false;
    }
    let (sa, ca) = p.angle_deg.to_radians().sin_cos();
    let (u, v) = (dx * ca + dy * sa, -dx * sa + dy * ca);
    match &p.mark {
        Mark::Roundel => {
            let r = u.hypot(v) / p.size_mm;
            (ROUNDEL_INNER..=0.5).contains(&r)
                || (v.abs() / p.size_mm <= ROUNDEL_BAR_HALF_HEIGHT && u.abs() / p.size_mm <= ROUNDEL_BAR_HALF_LENGTH)
        }
        Mark::Number(text) => {
            let h = p.size_mm;
            let n = text.len() as f64;
            let total = n * DIGIT_WIDTH + (n - 1.0) * DIGIT_GAP;
            let (uu, vv) = (u / h + total / 2.0, v / h + 0.5);
            text.bytes().enumerate().any(|(i, b)| on_digit(b - b'0', uu - i as f64 * (DIGIT_WIDTH + DIGIT_GAP), vv))
        }
    }
}

/// The rendered light: linear RGB per pixel, row-major.
#[derive(Debug, Clone)]
pub struct LinearImage {
    pub width: u32,
    pub height: u32,
    pub pixels: Vec<[f32; 3]>,
}

/// Deterministic hash of integers to 64 bits (SplitMix64's finaliser).
#[inline]
pub(crate) fn hash(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

#[inline]
fn unit_float(h: u64) -> f64 {
    (h >> 11) as f64 / (1u64 << 53) as f64
}

/// Smooth value noise on a 2D lattice, in 0..1.
fn value_noise(seed: u64, x: f64, y: f64) -> f64 {
    let (xi, yi) = (x.floor(), y.floor());
    let (fx, fy) = (x - xi, y - yi);
    let (sx, sy) = (fx * fx * (3.0 - 2.0 * fx), fy * fy * (3.0 - 2.0 * fy));
    let corner = |dx: i64, dy: i64| {
        let k = (xi as i64 + dx) as u64 ^ ((yi as i64 + dy) as u64).wrapping_mul(0x5851_F42D_4C95_7F2D);
        unit_float(hash(k ^ seed))
    };
    let (a, b, c, d) = (corner(0, 0), corner(1, 0), corner(0, 1), corner(1, 1));
    let top = a + (b - a) * sx;
    let bottom = c + (d - c) * sx;
    top + (bottom - top) * sy
}

fn fbm(seed: u64, x: f64, y: f64, octaves: u32) -> f64 {
    let (mut sum, mut amp, mut f, mut norm) = (0.0, 1.0, 1.0, 0.0);
    for o in 0..octaves {
        sum += amp * value_noise(seed.wrapping_add(o as u64 * 7919), x * f, y * f);
        norm += amp;
        amp *= 0.5;
        f *= 2.0;
    }
    sum / norm
}

/// RGB of a black body at `kelvin`, green normalised to 1 (Tanner Helland's fit).
pub fn kelvin_rgb(kelvin: f64) -> [f64; 3] {
    let t = kelvin / 100.0;
    let r = if t <= 66.0 { 255.0 } else { 329.698_727_446 * (t - 60.0).powf(-0.133_204_759_2) };
    let g = if t <= 66.0 { 99.470_802_586_1 * t.ln() - 161.119_568_166_1 } else { 288.122_169_528_3 * (t - 60.0).powf(-0.075_514_849_2) };
    let b = if t >= 66.0 {
        255.0
    } else if t <= 19.0 {
        0.0
    } else {
        138.517_731_223_1 * (t - 10.0).ln() - 305.044_792_730_7
    };
    let lin = |v: f64| {
        let c = (v / 255.0).clamp(0.0, 1.0);
        if c <= 0.04045 {
            c / 12.92
        } else {
            ((c + 0.055) / 1.055).powf(2.4)
        }
    };
    let (r, g, b) = (lin(r), lin(g).max(1e-3), lin(b));
    [r / g, 1.0, b / g]
}

/// The material at a hit: albedo, highlight strength and sharpness, and whether
/// the highlight takes the surface's colour (metal).
struct Material {
    albedo: [f64; 3],
    specular: f64,
    shininess: f64,
    metal: bool,
}

/// Precomputed per-scene shading state.
pub(crate) struct Shader<'a> {
    ls: &'a LoadedScene,
    world: World,
    lights: Vec<Light>,
    light_rgb: Vec<[f64; 3]>,
    seed: u64,
    /// Painted stripes `(y_from, y_to)` on a shuffleboard.
    stripes: Vec<(f64, f64)>,
    /// Each hole's `(x, y, r, depth)` for the cups' ambient light.
    holes: Vec<(f64, f64, f64, f64)>,
    /// Each piece's local frame and centre (for textures that follow the piece).
    frames: Vec<[V3; 3]>,
    centres: Vec<V3>,
    disc_points: Vec<(f64, f64)>,
}

/// The light used when a scene names none: one soft light above the middle of
/// the camera's view, 1.6 m up.
pub fn default_lights(ls: &LoadedScene) -> Vec<Light> {
    let c = ls.pose.centre();
    vec![Light {
        position: crate::geom::BoardPoint3::new(c.x_mm + 150.0, c.y_mm - 100.0, 1600.0),
        intensity: 1.0,
        radius_mm: 150.0,
        kelvin: 5000.0,
    }]
}

impl<'a> Shader<'a> {
    pub(crate) fn new(ls: &'a LoadedScene) -> Self {
        let scene = &ls.scene;
        let world = World::build(&ls.board, &scene.pieces);
        let lights = if scene.lights.is_empty() { default_lights(ls) } else { scene.lights.clone() };
        let wb = kelvin_rgb(scene.appearance.white_balance_kelvin);
        let light_rgb = lights
            .iter()
            .map(|l| {
                let c = kelvin_rgb(l.kelvin);
                [c[0] / wb[0], c[1] / wb[1], c[2] / wb[2]]
            })
            .collect();
        let stripes = match &ls.board.layout {
            Layout::Shuffleboard(s) => [s.lines.trey_line_mm, s.lines.deuce_line_mm, s.lines.long_foul_line_mm, s.lines.short_foul_line_mm]
                .iter()
                .map(|y| (*y, y + s.line_width_mm))
                .collect(),
            _ => Vec::new(),
        };
        let holes = match &ls.board.layout {
            Layout::Washer(w) => w.holes.iter().map(|h| (h.x_mm, h.y_mm, h.radius(), w.cup_depth_mm)).collect(),
            _ => Vec::new(),
        };
        let frames = scene.pieces.iter().map(|p| frame_for_axis(p.axis())).collect();
        let centres = scene
            .pieces
            .iter()
            .map(|p| {
                let c = p.centre(piece_thickness(&ls.board, p.kind).unwrap_or(0.0));
                [c.x_mm, c.y_mm, c.z_mm]
            })
            .collect();
        let golden = std::f64::consts::PI * (3.0 - 5f64.sqrt());
        let disc_points = (0..DISC_POINTS)
            .map(|k| {
                let (r, th) = (((k as f64 + 0.5) / DISC_POINTS as f64).sqrt(), golden * k as f64);
                (r * th.cos(), r * th.sin())
            })
            .collect();
        Shader { ls, world, lights, light_rgb, seed: scene.appearance.texture_seed, stripes, holes, frames, centres, disc_points }
    }

    /// The playing surface's wood: one piece, or planks of their own tones with seams.
    fn surface_wood(&self, x: f64, y: f64) -> [f64; 3] {
        let Some(w) = self.ls.scene.appearance.plank_width_mm else {
            return self.wood(x, y, 1.0);
        };
        let plank = (x / w).floor();
        let tone = 1.0 + PLANK_TONE * (2.0 * unit_float(hash(self.seed ^ 0xF6 ^ (plank as i64 as u64))) - 1.0);
        let across = x - plank * w;
        let seam = if across < PLANK_SEAM_MM || across > w - PLANK_SEAM_MM { PLANK_SEAM_SHADE } else { 1.0 };
        // Each plank's grain is its own: shifted along the grain's phase by the plank's index.
        self.wood(x + plank * 37.3, y + plank * 1811.0, tone * seam)
    }

    fn wood(&self, x: f64, y: f64, tint: f64) -> [f64; 3] {
        let a = &self.ls.scene.appearance;
        // Growth rings run along the board, wandering slowly; fine fibres on top.
        let wander = 6.0 * fbm(self.seed ^ 0xA1, x * 0.004, y * 0.0007, 3);
        let phase = (x + wander * a.grain_spacing_mm) / a.grain_spacing_mm;
        // A smooth periodic ring profile (0 between rings, 1 at their middle) without trigonometry.
        let f = phase - phase.floor();
        let ring = 16.0 * (f * (1.0 - f)).powi(2);
        let fibre = value_noise(self.seed ^ 0xB2, x * 0.8, y * 0.02);
        let blotch = fbm(self.seed ^ 0xC3, x * 0.01, y * 0.004, 2);
        let k = 1.0 - a.wood_grain * (0.55 * ring + 0.25 * fibre + 0.2 * blotch);
        [a.wood_colour[0] * k * tint, a.wood_colour[1] * k * tint, a.wood_colour[2] * k * tint]
    }

    /// Paint of colour `paint` over wood whose colour is `wood`: `show` of the wood's tone
    /// variation (relative to the scene's mean wood colour) shows through.
    fn painted(&self, paint: [f64; 3], wood: [f64; 3], show: f64) -> [f64; 3] {
        let mean = self.ls.scene.appearance.wood_colour;
        let tone = if mean[1] > 0.0 { wood[1] / mean[1] } else { 1.0 };
        let k = 1.0 - show + show * tone;
        [paint[0] * k, paint[1] * k, paint[2] * k]
    }

    /// A tiled floor at board point `(x, y)`: each tile its own brightness, grout between.
    fn tiled_floor(&self, f: &FloorLook, x: f64, y: f64) -> [f64; 3] {
        let (sa, ca) = f.angle_deg.to_radians().sin_cos();
        let (u, v) = (x * ca + y * sa, -x * sa + y * ca);
        let (i, j) = ((u / f.tile_mm).floor(), (v / f.tile_mm).floor());
        let (fu, fv) = (u - i * f.tile_mm, v - j * f.tile_mm);
        if fu < f.grout_mm || fv < f.grout_mm {
            return f.grout_colour;
        }
        let tile = hash(self.seed ^ 0x7A ^ (i as i64 as u64).wrapping_mul(0x9E37_79B9) ^ (j as i64 as u64).wrapping_mul(0x85EB_CA6B));
        let tone = 1.0 + f.variation * (2.0 * unit_float(tile) - 1.0);
        let mottle = 0.9 + 0.2 * fbm(self.seed ^ 0xE5, x * 0.02, y * 0.02, 3);
        [f.colour[0] * tone * mottle, f.colour[1] * tone * mottle, f.colour[2] * tone * mottle]
    }

    fn material(&self, s: Surface, p: V3) -> Material {
        let a = &self.ls.scene.appearance;
        let plain = |albedo: [f64; 3]| Material { albedo, specular: 0.02, shininess: 10.0, metal: false };
        match s {
            Surface::BoardTop => {
                let mut albedo = self.surface_wood(p[0], p[1]);
                if let Some(paint) = a.surface_paint {
                    albedo = self.painted(paint, albedo, PAINT_GRAIN_SHOW);
                }
                let worn = || fbm(self.seed ^ 0xD4, p[0] * 0.25, p[1] * 0.6, 3) < a.paint_wear;
                if self.stripes.iter().any(|(y0, y1)| p[1] >= *y0 && p[1] < *y1) {
                    if !worn() {
                        albedo = a.line_colour;
                    }
                } else if let Some(print) = a.prints.iter().find(|q| on_print(q, p[0], p[1])) {
                    if !worn() {
                        albedo = print.colour;
                    }
                }
                Material { albedo, specular: a.specular, shininess: a.shininess, metal: false }
            }
            Surface::Wall | Surface::GateBar if a.rail_colour.is_some() => {
                let albedo = self.painted(a.rail_colour.unwrap_or_default(), self.wood(p[0] + p[2] * 3.0, p[1], 0.75), FRAME_GRAIN_SHOW);
                Material { albedo, specular: a.specular * 0.5, shininess: a.shininess * 0.5, metal: false }
            }
            Surface::BoardEdge | Surface::Wall | Surface::GateBar | Surface::Partition => {
                let albedo = self.wood(p[0] + p[2] * 3.0, p[1], 0.75);
                Material { albedo, specular: a.specular * 0.5, shininess: a.shininess * 0.5, metal: false }
            }
            Surface::Rail => match a.rail_colour {
                Some(c) => plain(self.painted(c, self.wood(p[0] * 0.5, p[1], 0.45), FRAME_GRAIN_SHOW)),
                None => plain(self.wood(p[0] * 0.5, p[1], 0.45)),
            },
            Surface::Gutter => plain(a.gutter_colour.unwrap_or([0.035, 0.035, 0.04])),
            Surface::Floor => match &a.floor {
                Some(f) => plain(self.tiled_floor(f, p[0], p[1])),
                None => {
                    let n = fbm(self.seed ^ 0xE5, p[0] * 0.01, p[1] * 0.01, 3);
                    plain([0.16 * (0.8 + 0.4 * n), 0.16 * (0.8 + 0.4 * n), 0.15 * (0.8 + 0.4 * n)])
                }
            },
            Surface::CupWall { .. } => plain([0.045, 0.045, 0.05]),
            Surface::CupBottom { .. } => plain([0.07, 0.065, 0.06]),
            Surface::PieceTop { piece } | Surface::PieceSide { piece } | Surface::PieceBottom { piece } | Surface::PieceInner { piece } => {
                let spec = &self.ls.scene.pieces[piece];
                let team = |t: Option<Team>| match t {
                    Some(Team::Blue) => a.blue_colour,
                    _ => a.red_colour,
                };
                match spec.kind {
                    PieceKind::Weight => {
                        let paint = |albedo| Material { albedo, specular: PAINT_SPECULAR, shininess: PAINT_SHININESS, metal: false };
                        let steel = Material { albedo: STEEL_ALBEDO, specular: STEEL_SPECULAR, shininess: STEEL_SHININESS, metal: true };
                        match (s, &a.weight_look) {
                            (Surface::PieceTop { .. }, None) => paint(team(spec.id.team)),
                            (Surface::PieceTop { .. }, Some(look)) => {
                                // Where on the top face: across it from the piece's axis.
                                let (f, c) = (&self.frames[piece], self.centres[piece]);
                                let rel = [p[0] - c[0], p[1] - c[1], p[2] - c[2]];
                                let (u, v) = (rel[0] * f[0][0] + rel[1] * f[0][1] + rel[2] * f[0][2], rel[0] * f[1][0] + rel[1] * f[1][1] + rel[2] * f[1][2]);
                                let number = look.cap_number.as_ref().map(|text| Print {
                                    mark: Mark::Number(text.clone()),
                                    x_mm: 0.0,
                                    y_mm: 0.0,
                                    size_mm: CAP_NUMBER_HEIGHT * look.cap_radius_mm,
                                    angle_deg: 0.0,
                                    colour: look.cap_print_colour,
                                });
                                if u.hypot(v) > look.cap_radius_mm {
                                    steel
                                } else if let Some(n) = number.filter(|n| on_print(n, u, v)) {
                                    paint(n.colour)
                                } else {
                                    paint(team(spec.id.team))
                                }
                            }
                            _ => steel,
                        }
                    }
                    PieceKind::Washer => Material { albedo: team(spec.id.team), specular: PAINT_SPECULAR, shininess: PAINT_SHININESS, metal: false },
                    PieceKind::Disc => {
                        // Turned wood: faint concentric rings about the disc's axis.
                        let f = &self.frames[piece];
                        let c = self.centres[piece];
                        let rel = [p[0] - c[0], p[1] - c[1], p[2] - c[2]];
                        let (u, v) = (rel[0] * f[0][0] + rel[1] * f[0][1] + rel[2] * f[0][2], rel[0] * f[1][0] + rel[1] * f[1][1] + rel[2] * f[1][2]);
                        let r = u.hypot(v);
                        let k = 1.0 - 0.08 * (0.5 + 0.5 * (r * 1.3).sin()) * a.wood_grain.min(1.0) * 2.0;
                        let d = a.disc_colour;
                        Material { albedo: [d[0] * k, d[1] * k, d[2] * k], specular: 0.05, shininess: 20.0, metal: false }
                    }
                }
            }
        }
    }

    /// How much of the room's ambient light reaches a point (cups and gutters see less sky).
    fn ambient_visibility(&self, s: Surface, p: V3) -> f64 {
        match s {
            Surface::CupWall { hole } | Surface::CupBottom { hole } => {
                let (_, _, r, _) = self.holes[hole];
                let below = -p[2];
                r * r / (r * r + below * below)
            }
            Surface::Gutter => 0.5,
            Surface::PieceTop { .. } | Surface::PieceSide { .. } | Surface::PieceBottom { .. } | Surface::PieceInner { .. } if p[2] < -1.0 => {
                // A piece down in a cup sees the sky only through the hole.
                let r = self.holes.iter().map(|h| h.2).fold(50.0, f64::max);
                r * r / (r * r + p[2] * p[2])
            }
            _ => 1.0,
        }
    }

    /// Linear RGB seen along the ray `o + t d`; `sample` decorrelates soft-shadow samples.
    pub(crate) fn radiance(&self, o: V3, d: V3, sample: u64, among: &[usize]) -> [f64; 3] {
        let Some(hit) = self.world.intersect_among(o, d, FAR_MM, Some(among)) else {
            return [0.02, 0.02, 0.02];
        };
        let a = &self.ls.scene.appearance;
        let m = self.material(hit.surface, hit.point);
        let n = hit.normal;
        let p = [
            hit.point[0] + n[0] * SHADOW_OFFSET_MM,
            hit.point[1] + n[1] * SHADOW_OFFSET_MM,
            hit.point[2] + n[2] * SHADOW_OFFSET_MM,
        ];
        let view = [-d[0], -d[1], -d[2]];
        let amb = a.ambient * self.ambient_visibility(hit.surface, hit.point);
        let mut out = [m.albedo[0] * amb, m.albedo[1] * amb, m.albedo[2] * amb];
        for (i, l) in self.lights.iter().enumerate() {
            let mut lp = [l.position.x_mm, l.position.y_mm, l.position.z_mm];
            if l.radius_mm > 0.0 {
                // A point on the light's disc, drawn per sample and light.
                let (dx, dy) = self.disc_points[(hash(sample ^ ((i as u64) << 56)) % DISC_POINTS as u64) as usize];
                lp[0] += l.radius_mm * dx;
                lp[1] += l.radius_mm * dy;
            }
            let to = [lp[0] - p[0], lp[1] - p[1], lp[2] - p[2]];
            let dist = (to[0] * to[0] + to[1] * to[1] + to[2] * to[2]).sqrt();
            let ldir = [to[0] / dist, to[1] / dist, to[2] / dist];
            let ndotl = n[0] * ldir[0] + n[1] * ldir[1] + n[2] * ldir[2];
            if ndotl <= 0.0 || self.world.occluded(p, ldir, dist - RAY_EPSILON_MM) {
                continue;
            }
            let e = l.intensity * (LIGHT_REFERENCE_MM / dist).powi(2);
            let c = self.light_rgb[i];
            // The highlight is the light's mirror image: taken from the light's centre with
            // the lobe widened by the light's angular size (a Blinn-Phong lobe is about
            // sqrt(2 / n) wide; widths add in quadrature), so the glare is smooth, not
            // sampled by the few shadow samples.
            let lc = [l.position.x_mm - p[0], l.position.y_mm - p[1], l.position.z_mm - p[2]];
            let lc_dist = (lc[0] * lc[0] + lc[1] * lc[1] + lc[2] * lc[2]).sqrt();
            let hv = {
                let h = [lc[0] / lc_dist + view[0], lc[1] / lc_dist + view[1], lc[2] / lc_dist + view[2]];
                let hn = (h[0] * h[0] + h[1] * h[1] + h[2] * h[2]).sqrt();
                [h[0] / hn, h[1] / hn, h[2] / hn]
            };
            let angular = l.radius_mm / lc_dist;
            let shininess = 1.0 / (1.0 / m.shininess + angular * angular / 8.0);
            let ndoth = (n[0] * hv[0] + n[1] * hv[1] + n[2] * hv[2]).max(0.0);
            // Energy-normalised Blinn-Phong lobe: a sharp lobe is a small, bright glare spot.
            // Since ln(c) <= c - 1, c^n <= exp(-n (1 - c)): below 1e-6 the lobe is skipped.
            let spec = if shininess * (1.0 - ndoth) > SPECULAR_CUTOFF {
                0.0
            } else {
                m.specular * ndoth.powf(shininess) * (shininess + 8.0) / (8.0 * std::f64::consts::PI) * ndotl
            };
            for k in 0..3 {
                let tint = if m.metal { m.albedo[k] } else { 1.0 };
                out[k] += e * c[k] * (m.albedo[k] * ndotl * (1.0 - m.specular * 0.5) + spec * tint);
            }
        }
        let x = a.exposure;
        [out[0] * x, out[1] * x, out[2] * x]
    }
}

/// Renders the scene's linear light, using up to `threads` threads (rows are
/// split between them; the result does not depend on the thread count).
pub fn render_linear(ls: &LoadedScene, threads: usize) -> LinearImage {
    let cam = ls.scene.camera.intrinsics;
    let (w, h) = (cam.image_width as usize, cam.image_height as usize);
    let shader = Shader::new(ls);
    let mut pixels = vec![[0f32; 3]; w * h];
    let threads = threads.clamp(1, h.max(1));
    let rows_per = h.div_ceil(threads);
    std::thread::scope(|scope| {
        for (chunk_index, chunk) in pixels.chunks_mut(rows_per * w).enumerate() {
            let shader = &shader;
            scope.spawn(move || render_rows(ls, shader, chunk_index * rows_per, chunk));
        }
    });
    LinearImage { width: w as u32, height: h as u32, pixels }
}

/// Pixels per tile side for culling shapes against the view.
const TILE_PX: usize = 16;

fn render_rows(ls: &LoadedScene, shader: &Shader, first_row: usize, out: &mut [[f32; 3]]) {
    let cam = ls.scene.camera.intrinsics;
    let w = cam.image_width as usize;
    let rows = out.len() / w;
    let n = ls.scene.supersample as usize;
    let origin = ls.pose.centre();
    let o = [origin.x_mm, origin.y_mm, origin.z_mm];
    let weight = 1.0 / (n * n) as f64;
    // Undistorted normalised coordinates on the grid of pixel centres (one beyond the
    // rows and columns rendered). A sample between centres interpolates bilinearly:
    // the inverse distortion is smooth, and over one pixel its curvature moves a point
    // by ~1e-4 px for the strongest lens the scenes allow (k1 = -0.25).
    let (gw, gh) = (w + 2, rows + 2);
    let mut grid = vec![(f64::NAN, f64::NAN); gw * gh];
    for gy in 0..gh {
        for gx in 0..gw {
            let px = PixelPoint::new(gx as f64 - 1.0, (first_row + gy) as f64 - 1.0);
            grid[gy * gw + gx] = cam.normalise(px).unwrap_or((f64::NAN, f64::NAN));
        }
    }
    let bounds = shader.world.view_bounds(&ls.pose);
    let mut among = Vec::new();
    for ty in (0..rows).step_by(TILE_PX) {
        for tx in (0..w).step_by(TILE_PX) {
            let (y1, x1) = ((ty + TILE_PX).min(rows), (tx + TILE_PX).min(w));
            // The tile's samples lie within the grid points around it.
            let mut area = [f64::INFINITY, f64::INFINITY, f64::NEG_INFINITY, f64::NEG_INFINITY];
            for gy in ty..=y1 + 1 {
                for gx in tx..=x1 + 1 {
                    let (x, y) = grid[gy * gw + gx];
                    if x.is_nan() {
                        area = [f64::NEG_INFINITY, f64::NEG_INFINITY, f64::INFINITY, f64::INFINITY];
                    } else {
                        area = [area[0].min(x), area[1].min(y), area[2].max(x), area[3].max(y)];
                    }
                }
            }
            World::candidates(&bounds, area, &mut among);
            for row in ty..y1 {
                for col in tx..x1 {
                    let mut acc = [0.0f64; 3];
                    let pixel_index = ((first_row + row) * w + col) as u64;
                    for sy in 0..n {
                        for sx in 0..n {
                            // OpenCV's pixel convention: pixel (0, 0) covers -0.5..0.5.
                            let du = (sx as f64 + 0.5) / n as f64 - 0.5;
                            let dv = (sy as f64 + 0.5) / n as f64 - 0.5;
                            let (gx, fx) = if du < 0.0 { (col, du + 1.0) } else { (col + 1, du) };
                            let (gy, fy) = if dv < 0.0 { (row, dv + 1.0) } else { (row + 1, dv) };
                            let g = |x: usize, y: usize| grid[y * gw + x];
                            let (a, b, c, d) = (g(gx, gy), g(gx + 1, gy), g(gx, gy + 1), g(gx + 1, gy + 1));
                            let x = (a.0 * (1.0 - fx) + b.0 * fx) * (1.0 - fy) + (c.0 * (1.0 - fx) + d.0 * fx) * fy;
                            let y = (a.1 * (1.0 - fx) + b.1 * fx) * (1.0 - fy) + (c.1 * (1.0 - fx) + d.1 * fx) * fy;
                            if x.is_nan() || y.is_nan() {
                                continue;
                            }
                            let d = ls.pose.ray_from_normalised(x, y);
                            let sample = hash(pixel_index.wrapping_mul(64) + (sy * n + sx) as u64);
                            let c = shader.radiance(o, d, sample, &among);
                            for k in 0..3 {
                                acc[k] += c[k] * weight;
                            }
                        }
                    }
                    out[row * w + col] = [acc[0] as f32, acc[1] as f32, acc[2] as f32];
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn daylight_is_bluer_than_tungsten() {
        let warm = kelvin_rgb(2700.0);
        let cool = kelvin_rgb(6500.0);
        assert!(warm[0] > warm[2] && cool[2] > warm[2], "{warm:?} {cool:?}");
    }

    #[test]
    fn value_noise_is_continuous_and_bounded() {
        for i in 0..1000 {
            let x = i as f64 * 0.037;
            let a = value_noise(3, x, 1.5);
            let b = value_noise(3, x + 1e-6, 1.5);
            assert!((0.0..=1.0).contains(&a) && (a - b).abs() < 1e-4);
        }
    }
}
