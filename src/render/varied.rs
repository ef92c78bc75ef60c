//! The varied fixture set (`boardcall fixtures generate --varied`): a second recipe
//! whose tables are built as differently as real ones are. Per scene, every
//! construction quantity the rules leave to the maker is drawn (gutter width and
//! depth, rails, walls, the gate bar's build, the floor below), and the look varies
//! (rail and wall colours, tiled floors, planks, painted surfaces, printed numbers and
//! logos); cameras see the whole board or only its scoring end, through Brown-Conrady
//! or fisheye lenses. Like the committed set, everything is drawn from PCG-64 seeded
//! per fixture, so the set regenerates byte for byte from its seed.

use crate::board::{Board, ConstructionKeys, GateBar, Layout};
use crate::calls::FoulLine;
use crate::camera::Distortion;
use crate::geom::BoardPoint3;
use crate::render::generate::{
    draw_appearance, draw_effects, jittered_camera, lerp3, nearest_framing, place_lights, region_to_see, render_planned, shuffle_pieces, sjoel_pieces, washer_pieces, Case,
    GenerateConfig, LookFrom, Planned,
};
use crate::render::scene::{CameraSpec, FloorLook, Mark, PieceSpec, PoseSpec, Print, Scene, WeightLook, MIN_CAP_RADIUS_MM, SCENE_FORMAT};
use crate::render::teams::TeamPair;
use crate::render::shade::{hash, DIGIT_GAP, DIGIT_WIDTH, ROUNDEL_BAR_HALF_LENGTH};
use crate::render::truth::Truth;
use crate::render::RenderError;
use rand::{RngExt, SeedableRng};
use rand_pcg::Pcg64;
use std::path::Path;

/// The seed of the committed varied set (`fixtures/README.md`).
pub const VARIED_SEED: u64 = 20261113;
/// Where the committed varied set lives, relative to the repository root.
pub const VARIED_DIR: &str = "fixtures/varied";

/// How much of the board a camera frames.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum View {
    /// The whole board and its construction.
    Whole,
    /// Only the scoring end: a shuffleboard's last 1.5 to 2 m with its 3-, 2- and 1-zones;
    /// a sjoelbak's compartments, gate and a little of the field.
    End,
}

/// The lens model a scene's camera has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lens {
    Brown,
    Fisheye,
}

impl View {
    pub fn tag(self) -> &'static str {
        match self {
            View::Whole => "whole",
            View::End => "end",
        }
    }
}

impl Lens {
    pub fn tag(self) -> &'static str {
        match self {
            Lens::Brown => "brown",
            Lens::Fisheye => "fisheye",
        }
    }
}

/// Shuffleboard gutters from 50 to 110 mm wide and 20 to 60 mm deep: the span of
/// commercial tables' alleys (no regulation).
const GUTTER_WIDTH_MM: (f64, f64) = (50.0, 110.0);
const GUTTER_DEPTH_MM: (f64, f64) = (20.0, 60.0);
/// Rail heights above the surface, by style: near flush, low, standard, tall, cushioned bank.
const RAIL_HEIGHTS_MM: [f64; 5] = [8.0, 20.0, 35.0, 55.0, 75.0];
const RAIL_WIDTH_MM: (f64, f64) = (40.0, 110.0);
/// Each style's rail or wall height varies by this much either way (mm): no two makers agree.
const RAIL_JITTER_MM: f64 = 3.0;
const WALL_JITTER_MM: f64 = 4.0;
/// The table's body reaches this far below the gutter floor (mm): a trough's bottom board and frame.
const BODY_BELOW_GUTTER_MM: (f64, f64) = (40.0, 110.0);
/// A shuffleboard stands on legs: the room floor 650 to 800 mm below its surface (table heights).
const SHUFFLE_FLOOR_DEPTH_MM: (f64, f64) = (650.0, 800.0);
/// Sjoelbak wall heights above the surface, by style: low rim, standard, high, boxed.
const WALL_HEIGHTS_MM: [f64; 4] = [35.0, 50.0, 70.0, 90.0];
const WALL_THICKNESS_MM: (f64, f64) = (10.0, 25.0);
const FLOOR_BOARD_MM: (f64, f64) = (12.0, 25.0);
/// Partitions from 12 mm up (a disc can still come to rest on one) to 30 mm (or the wall).
const PARTITION_HEIGHT_MM: (f64, f64) = (12.0, 30.0);
/// A bridged gate bar's tunnels clear a disc by at least this much (mm), and leave at least
/// this much bar above them.
const TUNNEL_CLEARANCE_MM: f64 = 6.0;
const BRIDGE_MIN_MM: f64 = 8.0;
/// The floor 80 to 200 mm below the surface of a washer board (its box) or of a sjoelbak on feet.
const FLOOR_DEPTH_MM: (f64, f64) = (80.0, 200.0);
/// A shuffleboard end view frames the last 1.5 to 2 m of the board.
const END_VIEW_LENGTH_MM: (f64, f64) = (1500.0, 2000.0);
/// A sjoelbak end view frames the field this far beyond the gate bar's front.
const SJOEL_END_BEYOND_GATE_MM: (f64, f64) = (80.0, 200.0);
/// In a sjoelbak end view, discs on the field lie within this distance of the gate's front.
const SJOEL_END_FIELD_MM: f64 = 70.0;
/// In a whole sjoelbak view, discs lie anywhere on the first metre of the field.
const SJOEL_WHOLE_FIELD_MM: f64 = 1000.0;
/// Camera tilt from straight down, degrees: as the committed set, a little more for fisheyes
/// (a wide lens is mounted closer and at more of an angle).
const MAX_TILT_BROWN_DEG: f64 = 28.0;
const MAX_TILT_FISHEYE_DEG: f64 = 35.0;
/// A region of interest longer than this (relative to its width) is framed along the image's
/// long side, within this many radians.
const LONG_REGION_ASPECT: f64 = 1.6;
const LONG_REGION_YAW_JITTER: f64 = 0.2;
/// Fisheye focal lengths, in image widths: a 120 to 150 degree diagonal field.
const FISHEYE_FOCAL: (f64, f64) = (0.38, 0.55);
/// Floor tiles: side, grout width (mm) and tile-to-tile brightness variation: domestic and bar floors.
const FLOOR_TILE_MM: (f64, f64) = (150.0, 600.0);
const FLOOR_GROUT_MM: (f64, f64) = (2.0, 8.0);
const FLOOR_TILE_VARIATION: (f64, f64) = (0.03, 0.2);
/// Planks of a glued-up top (mm).
const PLANK_WIDTH_MM: (f64, f64) = (60.0, 140.0);
/// How often each look option is drawn: painted frames, coloured gutters, tiled floors,
/// painted washer-board tops, plank tops.
const P_FRAME_COLOUR: f64 = 0.5;
const P_GUTTER_COLOUR: f64 = 0.5;
const P_TILED_FLOOR: f64 = 0.7;
const P_PAINTED_TOP: f64 = 0.4;
const P_PLANKS: f64 = 0.3;
/// Prints, by board: how often each is painted and its size (mm; a number's height, a
/// roundel's diameter): a zone's number on a shuffleboard and a logo mid-table; a logo on a
/// sjoelbak's field; each hole's value beside it and a logo on a washer board.
const P_ZONE_NUMBER: f64 = 0.5;
const ZONE_NUMBER_MM: (f64, f64) = (50.0, 110.0);
const P_SHUFFLE_ROUNDEL: f64 = 0.3;
const SHUFFLE_ROUNDEL_MM: (f64, f64) = (120.0, 240.0);
const P_SJOEL_ROUNDEL: f64 = 0.6;
const SJOEL_ROUNDEL_MM: (f64, f64) = (100.0, 220.0);
const P_HOLE_NUMBERS: f64 = 0.6;
const HOLE_NUMBER_MM: (f64, f64) = (45.0, 80.0);
const P_WASHER_ROUNDEL: f64 = 0.4;
const WASHER_ROUNDEL_MM: (f64, f64) = (80.0, 160.0);
/// Shuffleboard weights as they are made ([`WeightLook`]), on this share of the shuffleboards: a coloured cap
/// this fraction of the body's radius (a 2-inch cap on a 2-5/16-inch weight is 0.86; the rest of the top a chrome
/// ring), a digit printed on it on this share of them, white or black. Drawn from a stream of their own
/// ([`WEIGHT_LOOK_STREAM`]), so that every other draw of the set is as it was before weights were drawn.
const P_WEIGHT_LOOK: f64 = 0.7;
const CAP_FRACTION: (f64, f64) = (0.72, 0.95);
const P_CAP_NUMBER: f64 = 0.6;
const CAP_PRINTS: [[f64; 3]; 2] = [[0.85, 0.85, 0.82], [0.03, 0.03, 0.03]];
/// Mixed into a fixture's seed for the weights' look.
const WEIGHT_LOOK_STREAM: u64 = 0x5745_4947_4854; // "WEIGHT"
/// Most prints read upright for the thrower; the rest for someone at the target end.
const P_FACING_THROWER: f64 = 0.7;
/// A print keeps this far (mm) from every line, rim and edge.
const PRINT_CLEARANCE_MM: f64 = 12.0;

/// How a shuffleboard's weights are made, or `None` (the whole top the team's colour): see [`P_WEIGHT_LOOK`].
fn draw_weight_look(board: &Board, rng: &mut Pcg64) -> Option<WeightLook> {
    if !rng.random_bool(P_WEIGHT_LOOK) {
        return None;
    }
    let body = board.piece().radius_mm;
    let cap_radius_mm = (range(rng, CAP_FRACTION) * body).max(MIN_CAP_RADIUS_MM);
    let cap_number = rng.random_bool(P_CAP_NUMBER).then(|| rng.random_range(1..=8u32).to_string());
    Some(WeightLook { cap_radius_mm, cap_number, cap_print_colour: pick(rng, &CAP_PRINTS) })
}

/// The varied recipe: which board, case, view and lens each fixture shows, in order. The
/// cases follow the committed recipe's mix, about two thirds of its size.
pub fn recipe() -> Vec<(&'static str, Case, View, Lens)> {
    use Case::*;
    let mut out = Vec::new();
    let shuffle = [Plain, Plain, Plain, Plain, LineEdge, LineEdge, Hanger, CornerHanger, Gutter, Gutter, Touching];
    for (i, c) in shuffle.iter().enumerate() {
        // One whole-table view in four: the rest are end views.
        let view = if i % 4 == 1 { View::Whole } else { View::End };
        out.push(("shuffleboard-22ft", *c, view));
    }
    let sjoel = [Plain, Plain, Plain, Plain, GateHalf, GateHalf, OnPartition, OnPartition];
    for (i, c) in sjoel.iter().enumerate() {
        out.push(("sjoelbak", *c, if i % 2 == 0 { View::Whole } else { View::End }));
    }
    let washer = [Plain, Plain, Plain, Leaner, Leaner, TwoInHole, OnRim];
    for board in ["holeyboard", "yocu-4", "yocu-9"] {
        out.extend(washer.iter().map(|c| (board, *c, View::Whole)));
    }
    // One scene in three through a fisheye.
    out.into_iter().enumerate().map(|(i, (b, c, v))| (b, c, v, if i % 3 == 1 { Lens::Fisheye } else { Lens::Brown })).collect()
}

/// Settings of the varied set: as the committed set's, with its own seed.
pub fn default_config() -> GenerateConfig {
    GenerateConfig { seed: VARIED_SEED, ..GenerateConfig::default() }
}

fn range(rng: &mut Pcg64, r: (f64, f64)) -> f64 {
    rng.random_range(r.0..r.1)
}

fn pick<T: Copy>(rng: &mut Pcg64, options: &[T]) -> T {
    options[rng.random_range(0..options.len())]
}

/// A gutter that must hold a weight lying flat (the `gutter` case) is this much wider than one.
const GUTTER_PLAY_MM: f64 = 6.0;

/// Every construction quantity the rules leave open, drawn for one table showing `case`.
fn draw_construction(board: &Board, case: Case, rng: &mut Pcg64) -> ConstructionKeys {
    match &board.layout {
        Layout::Shuffleboard(s) => {
            let gutter_depth = range(rng, GUTTER_DEPTH_MM);
            let narrowest = if case == Case::Gutter { GUTTER_WIDTH_MM.0.max(s.weight_diameter_mm + GUTTER_PLAY_MM) } else { GUTTER_WIDTH_MM.0 };
            ConstructionKeys {
                gutter_width_mm: Some(rng.random_range(narrowest..GUTTER_WIDTH_MM.1)),
                gutter_depth_mm: Some(gutter_depth),
                rail_width_mm: Some(range(rng, RAIL_WIDTH_MM)),
                rail_height_mm: Some(pick(rng, &RAIL_HEIGHTS_MM) + rng.random_range(-RAIL_JITTER_MM..RAIL_JITTER_MM)),
                table_depth_mm: Some(gutter_depth + range(rng, BODY_BELOW_GUTTER_MM)),
                floor_depth_mm: Some(range(rng, SHUFFLE_FLOOR_DEPTH_MM)),
                ..Default::default()
            }
        }
        Layout::Sjoelbak(s) => {
            let wall = pick(rng, &WALL_HEIGHTS_MM) + rng.random_range(-WALL_JITTER_MM..WALL_JITTER_MM);
            let board_mm = range(rng, FLOOR_BOARD_MM);
            let gate_bar = if rng.random_bool(0.5) { GateBar::Bridged } else { GateBar::Blocks };
            let tunnel_lo = s.disc_thickness_mm + TUNNEL_CLEARANCE_MM;
            let tunnel_hi = (wall - BRIDGE_MIN_MM).max(tunnel_lo + 1.0);
            let tunnel = rng.random_range(tunnel_lo..tunnel_hi);
            // Half lie flat on their floor board, half stand on feet or trestles.
            let floor = if rng.random_bool(0.5) { board_mm } else { range(rng, FLOOR_DEPTH_MM) };
            ConstructionKeys {
                wall_height_mm: Some(wall),
                wall_thickness_mm: Some(range(rng, WALL_THICKNESS_MM)),
                floor_board_thickness_mm: Some(board_mm),
                partition_height_mm: Some(rng.random_range(PARTITION_HEIGHT_MM.0..PARTITION_HEIGHT_MM.1.min(wall))),
                gate_bar: Some(gate_bar),
                gate_tunnel_height_mm: Some(tunnel),
                floor_depth_mm: Some(floor),
                ..Default::default()
            }
        }
        Layout::Washer(_) => ConstructionKeys { stand_height_mm: Some(range(rng, FLOOR_DEPTH_MM)), ..Default::default() },
    }
}

/// Painted rails and walls: black, dark green, oxblood, navy, cream, pale natural wood.
const FRAME_COLOURS: [[f64; 3]; 6] =
    [[0.02, 0.02, 0.02], [0.03, 0.10, 0.04], [0.20, 0.03, 0.02], [0.02, 0.04, 0.14], [0.62, 0.58, 0.46], [0.55, 0.38, 0.20]];
/// Gutter floors: black, green felt, grey, dark wood.
const GUTTER_COLOURS: [[f64; 3]; 4] = [[0.02, 0.02, 0.02], [0.03, 0.12, 0.05], [0.18, 0.18, 0.18], [0.16, 0.08, 0.03]];
/// Floor tiles: terracotta, light grey, beige, slate; grout light or dark.
const TILE_COLOURS: [[f64; 3]; 4] = [[0.42, 0.17, 0.08], [0.45, 0.45, 0.44], [0.55, 0.47, 0.34], [0.08, 0.09, 0.10]];
const GROUT_COLOURS: [[f64; 3]; 2] = [[0.60, 0.58, 0.54], [0.06, 0.06, 0.06]];
/// Painted washer-board tops: white, black, blue, green, yellow.
const SURFACE_PAINTS: [[f64; 3]; 5] = [[0.70, 0.70, 0.68], [0.03, 0.03, 0.03], [0.04, 0.10, 0.35], [0.05, 0.25, 0.08], [0.65, 0.50, 0.05]];
/// Print colours: black, white, red, blue, gold.
const PRINT_COLOURS: [[f64; 3]; 5] = [[0.02, 0.02, 0.02], [0.75, 0.75, 0.72], [0.55, 0.03, 0.03], [0.03, 0.06, 0.45], [0.60, 0.42, 0.06]];

/// The half extents `(across, along)` of a print in its own frame (mm).
fn print_half_extent(p: &Print) -> (f64, f64) {
    match &p.mark {
        Mark::Number(t) => {
            let n = t.len() as f64;
            ((n * DIGIT_WIDTH + (n - 1.0) * DIGIT_GAP) * p.size_mm / 2.0, p.size_mm / 2.0)
        }
        Mark::Roundel => (ROUNDEL_BAR_HALF_LENGTH * p.size_mm, 0.5 * p.size_mm),
    }
}

/// Prints on the playing surface, clear of lines, rims, partitions and edges: a zone's
/// number on a shuffleboard, a logo on a sjoelbak's field, hole values and a logo on a washer board.
fn draw_prints(board: &Board, rng: &mut Pcg64) -> Vec<Print> {
    let hw = board.surface.half_width();
    let mut out = Vec::new();
    // Upright for the thrower (reading along -x, upright towards -y), or for someone at the target end.
    let facing = |rng: &mut Pcg64| if rng.random_bool(P_FACING_THROWER) { 180.0 } else { 0.0 };
    let colour = |rng: &mut Pcg64| pick(rng, &PRINT_COLOURS);
    let fits_across = |p: &Print| p.x_mm.abs() + print_half_extent(p).0 + PRINT_CLEARANCE_MM < hw;
    match &board.layout {
        Layout::Shuffleboard(s) => {
            let l = s.lines;
            let zones = [("3", 0.0, l.trey_line_mm), ("2", l.trey_line_mm + s.line_width_mm, l.deuce_line_mm), ("1", l.deuce_line_mm + s.line_width_mm, l.long_foul_line_mm)];
            for (text, y0, y1) in zones {
                if !rng.random_bool(P_ZONE_NUMBER) {
                    continue;
                }
                let size = rng.random_range(ZONE_NUMBER_MM.0..(y1 - y0 - 2.0 * PRINT_CLEARANCE_MM).min(ZONE_NUMBER_MM.1));
                let y = if text == "1" { rng.random_range(y0 + 100.0..y0 + 400.0) } else { (y0 + y1) / 2.0 };
                let p = Print {
                    mark: Mark::Number(text.into()),
                    x_mm: rng.random_range(-hw * 0.6..hw * 0.6),
                    y_mm: y,
                    size_mm: size,
                    angle_deg: facing(rng),
                    colour: colour(rng),
                };
                if fits_across(&p) {
                    out.push(p);
                }
            }
            if rng.random_bool(P_SHUFFLE_ROUNDEL) {
                let p = Print {
                    mark: Mark::Roundel,
                    x_mm: 0.0,
                    y_mm: rng.random_range(l.deuce_line_mm + 250.0..l.long_foul_line_mm - 250.0),
                    size_mm: range(rng, SHUFFLE_ROUNDEL_MM),
                    angle_deg: facing(rng),
                    colour: colour(rng),
                };
                out.push(p);
            }
        }
        Layout::Sjoelbak(s) => {
            if rng.random_bool(P_SJOEL_ROUNDEL) {
                out.push(Print {
                    mark: Mark::Roundel,
                    x_mm: 0.0,
                    y_mm: rng.random_range(s.gate_front_mm + 500.0..board.surface.length_mm - 400.0),
                    size_mm: range(rng, SJOEL_ROUNDEL_MM),
                    angle_deg: facing(rng),
                    colour: colour(rng),
                });
            }
        }
        Layout::Washer(w) => {
            let clear_of_holes = |p: &Print| {
                let (a, b) = print_half_extent(p);
                let reach = a.hypot(b);
                let inside = p.y_mm - reach > PRINT_CLEARANCE_MM && p.y_mm + reach < board.surface.length_mm - PRINT_CLEARANCE_MM;
                inside && w.holes.iter().all(|h| (p.x_mm - h.x_mm).hypot(p.y_mm - h.y_mm) > h.radius() + reach + PRINT_CLEARANCE_MM)
            };
            if rng.random_bool(P_HOLE_NUMBERS) {
                // Each hole's value beside it.
                let size = range(rng, HOLE_NUMBER_MM);
                let side = if rng.random_bool(0.5) { 1.0 } else { -1.0 };
                let angle = facing(rng);
                let c = colour(rng);
                for h in &w.holes {
                    let p = Print {
                        mark: Mark::Number(h.value.to_string()),
                        x_mm: h.x_mm + side * (h.radius() + size * 0.6 + PRINT_CLEARANCE_MM * 2.0),
                        y_mm: h.y_mm,
                        size_mm: size,
                        angle_deg: angle,
                        colour: c,
                    };
                    if fits_across(&p) && clear_of_holes(&p) {
                        out.push(p);
                    }
                }
            }
            if rng.random_bool(P_WASHER_ROUNDEL) {
                let p = Print {
                    mark: Mark::Roundel,
                    x_mm: rng.random_range(-hw * 0.5..hw * 0.5),
                    y_mm: rng.random_range(0.0..board.surface.length_mm),
                    size_mm: range(rng, WASHER_ROUNDEL_MM),
                    angle_deg: facing(rng),
                    colour: colour(rng),
                };
                if fits_across(&p) && clear_of_holes(&p) {
                    out.push(p);
                }
            }
        }
    }
    out
}

/// The region of interest on the board plane `(x0, x1, y0, y1)` a view frames.
fn view_region(board: &Board, view: View, rng: &mut Pcg64) -> (f64, f64, f64, f64) {
    let (hw, len) = (board.surface.half_width(), board.surface.length_mm);
    match (&board.layout, view) {
        (Layout::Shuffleboard(s), View::End) => {
            let g = s.construction.gutter_width_mm;
            (-hw - g, hw + g, -g, range(rng, END_VIEW_LENGTH_MM))
        }
        (Layout::Shuffleboard(s), View::Whole) => {
            let g = s.construction.gutter_width_mm;
            (-hw - g, hw + g, -g, len + g)
        }
        (Layout::Sjoelbak(s), View::End) => {
            let t = s.construction.wall_thickness_mm;
            (-hw - t, hw + t, -t, s.gate_front_mm + range(rng, SJOEL_END_BEYOND_GATE_MM))
        }
        (Layout::Sjoelbak(s), View::Whole) => {
            let t = s.construction.wall_thickness_mm;
            (-hw - t, hw + t, -t, len)
        }
        (Layout::Washer(_), _) => (-hw, hw, 0.0, len),
    }
}

/// Lens, pose and framing: a camera that sees every piece and the view's region.
fn place_camera(board: &Board, pieces: &[PieceSpec], view: View, lens: Lens, cfg: &GenerateConfig, rng: &mut Pcg64) -> CameraSpec {
    let (w, h) = (cfg.width, cfg.height);
    let (x0, x1, y0, y1) = view_region(board, view, rng);
    let ([x0, x1, y0, y1], must_see) = region_to_see(board, pieces, [x0, x1, y0, y1]);
    let target = BoardPoint3::new((x0 + x1) / 2.0, (y0 + y1) / 2.0, 0.0);
    let max_tilt = if lens == Lens::Fisheye { MAX_TILT_FISHEYE_DEG } else { MAX_TILT_BROWN_DEG };
    let tilt = rng.random_range(0.0..max_tilt).to_radians();
    let azimuth = rng.random_range(0.0..std::f64::consts::TAU);
    // `up` is the board direction shown up in the image: a long region lies along the image's width.
    let yaw = if (y1 - y0) > LONG_REGION_ASPECT * (x1 - x0) {
        let flip = if rng.random_bool(0.5) { std::f64::consts::PI } else { 0.0 };
        flip + rng.random_range(-LONG_REGION_YAW_JITTER..LONG_REGION_YAW_JITTER)
    } else {
        rng.random_range(0.0..std::f64::consts::TAU)
    };
    let (distortion, fx) = match lens {
        Lens::Brown => {
            let k1 = rng.random_range(-0.25..0.05);
            let k2 = if k1 < 0.0 { -k1 * rng.random_range(0.1..0.5) } else { 0.0 };
            let (p1, p2) = (rng.random_range(-0.001..0.001), rng.random_range(-0.001..0.001));
            (Distortion::brown(k1, k2, p1, p2, 0.0), rng.random_range(0.75..1.2) * w as f64)
        }
        Lens::Fisheye => {
            let k = [rng.random_range(-0.04..0.04), rng.random_range(-0.01..0.01), rng.random_range(-0.002..0.002), rng.random_range(-0.0005..0.0005)];
            (Distortion::fisheye(k[0], k[1], k[2], k[3]), range(rng, FISHEYE_FOCAL) * w as f64)
        }
    };
    let cam = jittered_camera(rng, w, h, fx, distortion);
    let span = (x1 - x0).hypot(y1 - y0) / 2.0;
    let look = LookFrom { target, tilt, azimuth, yaw, span };
    // From well inside (a fisheye's corners reach far) to just far enough.
    nearest_framing(cam, &look, &must_see, 0.2, 600).expect("a camera 140000 times further away sees everything")
}

/// The scenes of the varied set, in order, with their folder names.
pub fn plan_set(cfg: &GenerateConfig) -> Result<Vec<Planned>, RenderError> {
    plan_rows(cfg, recipe().into_iter().map(|(board, case, view, lens)| (board, case, view, lens, None)).collect())
}

/// Plans scenes as the varied set does, one per row of board, case, view, lens and
/// (where given) the teams' colours, which are then named in the scene's folder.
pub(crate) fn plan_rows(cfg: &GenerateConfig, rows: Vec<(&'static str, Case, View, Lens, Option<&TeamPair>)>) -> Result<Vec<Planned>, RenderError> {
    let mut out = Vec::new();
    for (i, (board_name, case, view, lens, teams)) in rows.into_iter().enumerate() {
        let mut rng = Pcg64::seed_from_u64(hash(cfg.seed ^ hash(i as u64)));
        let mut name = format!("{i:02}-{board_name}-{}-{}-{}", case.tag(), view.tag(), lens.tag());
        if let Some(pair) = teams {
            name = format!("{name}-{}", pair.name);
        }
        let nominal = Board::load(board_name).map_err(|source| crate::render::SceneError::Board { origin: "varied recipe".into(), source })?;
        let construction = draw_construction(&nominal, case, &mut rng);
        let board = nominal
            .with_construction(&construction)
            .map_err(|p| crate::render::SceneError::Invalid { origin: name.clone(), field: format!("construction.{}", p.key), problem: p.problem })?;
        let pieces = match (&board.layout, view) {
            (Layout::Shuffleboard(_), _) => shuffle_pieces(&board, case, &mut rng),
            (Layout::Washer(_), _) => washer_pieces(&board, case, &mut rng),
            (Layout::Sjoelbak(s), View::End) => sjoel_pieces(&board, case, &mut rng, s.gate_front_mm + SJOEL_END_FIELD_MM),
            (Layout::Sjoelbak(_), View::Whole) => sjoel_pieces(&board, case, &mut rng, SJOEL_WHOLE_FIELD_MM),
        };
        let camera = place_camera(&board, &pieces, view, lens, cfg, &mut rng);
        let hard_light = i % 2 == 0;
        let PoseSpec::LookAt { target, .. } = camera.pose else { unreachable!("the generator places cameras by look-at") };
        let lights = place_lights(target, &mut rng, hard_light);
        let mut appearance = draw_appearance(&board, &lights, hard_light, &mut rng);
        let effects = draw_effects(&mut rng);
        // The construction's look: each option drawn on its own, so the set mixes them.
        let frames = !matches!(board.layout, Layout::Washer(_));
        if frames && rng.random_bool(P_FRAME_COLOUR) {
            appearance.rail_colour = Some(pick(&mut rng, &FRAME_COLOURS));
        }
        if matches!(board.layout, Layout::Shuffleboard(_)) && rng.random_bool(P_GUTTER_COLOUR) {
            appearance.gutter_colour = Some(pick(&mut rng, &GUTTER_COLOURS));
        }
        if rng.random_bool(P_TILED_FLOOR) {
            appearance.floor = Some(FloorLook {
                colour: pick(&mut rng, &TILE_COLOURS),
                variation: range(&mut rng, FLOOR_TILE_VARIATION),
                tile_mm: range(&mut rng, FLOOR_TILE_MM),
                grout_mm: range(&mut rng, FLOOR_GROUT_MM),
                grout_colour: pick(&mut rng, &GROUT_COLOURS),
                angle_deg: rng.random_range(0.0..90.0),
            });
        }
        if matches!(board.layout, Layout::Washer(_)) && rng.random_bool(P_PAINTED_TOP) {
            let paint = pick(&mut rng, &SURFACE_PAINTS);
            // A painted top keeps a little of the lacquered wood's tone.
            appearance.surface_paint = Some(lerp3(paint, appearance.wood_colour, 0.1));
        }
        if rng.random_bool(P_PLANKS) {
            appearance.plank_width_mm = Some(range(&mut rng, PLANK_WIDTH_MM));
        }
        appearance.prints = draw_prints(&board, &mut rng);
        if matches!(board.layout, Layout::Shuffleboard(_)) {
            let mut looks = Pcg64::seed_from_u64(hash(cfg.seed ^ hash(i as u64) ^ WEIGHT_LOOK_STREAM));
            appearance.weight_look = draw_weight_look(&board, &mut looks);
        }
        if let Some(pair) = teams {
            (appearance.red_colour, appearance.blue_colour) = (pair.red, pair.blue);
        }
        let mut tags = vec![case.tag().to_string(), if hard_light { "hard_light" } else { "soft_light" }.to_string()];
        if case != Case::Plain {
            tags.push("hard".into());
        }
        tags.push(format!("view_{}", view.tag()));
        tags.push(format!("lens_{}", lens.tag()));
        if let Some(pair) = teams {
            tags.push(format!("teams_{}", pair.name));
        }
        let scene = Scene {
            format: SCENE_FORMAT,
            board: board_name.to_string(),
            foul_line: FoulLine::Long,
            construction: Some(construction),
            camera,
            pieces,
            lights,
            appearance,
            effects,
            supersample: cfg.supersample,
            seed: rng.random(),
            tags,
        };
        let scene = scene.validate(&name)?;
        out.push(Planned { name, scene });
    }
    Ok(out)
}

/// Renders the varied set into `out_dir/<name>/`, on `threads` threads; returns each truth.
pub fn generate(cfg: &GenerateConfig, out_dir: &Path, threads: usize, progress: impl FnMut(&str)) -> Result<Vec<Truth>, RenderError> {
    render_planned(plan_set(cfg)?, out_dir, threads, progress)
}
