//! Team colours as data: the teams' colour models given (a hue, or a sample point
//! in the frame), saved and read as a pieces file, or learned from a frame (pieces
//! are blobs of a known size: their colours are clustered); and the safety net
//! for colour no team explains, which makes the frame need review instead of
//! being dropped.

use super::grid::{blobs_of, open_in_place, set_cells};
use super::proposals::{Blob, COVER_SLACK, THIN_RUN_MM};
use super::verify::Ctx;
use super::{ColourClass, DetectError, Detections, TeamColour, Unexplained, BLUE, RED};
use crate::measure::ColourView;
use crate::piece::Team;
use image::GrayImage;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// Colour at least this saturated is a piece's paint or the board's lacquer
/// (told apart by hue); glare, shadow, chalk and the painted black lines stay
/// below. The standard classes' floors are 0.25 (blue) and 0.35 (red).
const PAINT_MIN_SATURATION: f32 = 0.3;
/// Paint darker than this (value, 0..1) is shadow: the standard classes' floors are 0.10-0.12.
const PAINT_MIN_VALUE: f32 = 0.12;
/// A team's hue at least this saturated, but below the team's own floor, is
/// pale paint of that hue: a cap washed out by light or made pale (seen at
/// 0.20-0.35 on renders we did not draw). A grey surface's hue noise and a
/// cool light's tint on pale wood stay below it. Such paint, piece-sized and
/// not accounted for by a piece, makes the frame need review: it is never
/// scored as a piece by its colour alone, and never silently dropped.
pub(super) const PALE_PAINT_MIN_SATURATION: f32 = 0.15;
/// Pale paint is paint in the light, at least this bright (value): colour as
/// unsaturated and darker is a shadow or a hole's inside lit by a cool sky
/// (own renders: 0.15-0.35 at 0.20 saturation), not a piece.
pub(super) const PALE_PAINT_MIN_VALUE: f32 = 0.5;
/// A hue within this many degrees of the board's own (its surface cells'
/// saturation-weighted mean hue) is the board: lacquered wood varies by
/// 10-15 degrees over its grain and under the fixtures' lights.
const BOARD_HUE_MARGIN_DEG: f32 = 20.0;
/// The board's hue is the mean over every this-many-th grid cell (a prime, so
/// that the cells taken do not line up with the grid's rows): thousands of
/// cells of a surface of tens to hundreds of thousands tell its mean hue to a
/// fraction of a degree, at a small part of the cost of them all.
const BOARD_HUE_STRIDE: usize = 29;
/// A piece-sized blob of a team's hue, down to the pale floor, that no piece
/// found accounts for is left to the team's own accounting if at least this
/// share of it lies in the team's mask (a piece the team's colour sees but
/// could not fit). Less, and the team's mask sees it in fragments (pale paint
/// straddling the team's saturation floor, the thin fragments opened away): a
/// pale piece. A piece of the team's full colour misses its mask only at its
/// rim's blur, some tenth of its cells.
const TEAM_MASK_SHARE: f64 = 0.5;
/// Colour no team explains of at least this many pieces' worth makes the frame
/// need review: half a piece is more than a shadow's tint or a found piece's
/// fringe (both removed first) leave.
const FOREIGN_MIN_PIECES: f64 = 0.5;
/// Blobs of more than this many pieces' worth are not learned from (a cloth,
/// a colour cast): four pieces touching is the most a blob of pieces holds.
const LEARN_MAX_PIECES: f64 = 4.5;
/// Two learned colours closer in hue than this (degrees) are one team's.
const MIN_TEAM_HUE_SEPARATION_DEG: f32 = 30.0;
/// A learned colour's hue window: the 90th percentile of its cells' hue
/// deviations plus this slack (degrees) ...
const LEARN_HUE_SLACK_DEG: f32 = 5.0;
/// ... within these bounds (the standard red's window is 15, blue's 35) ...
const LEARN_MIN_HUE_TOLERANCE_DEG: f32 = 12.0;
const LEARN_MAX_HUE_TOLERANCE_DEG: f32 = 35.0;
/// ... and this far (degrees) short of the board's hue.
const LEARN_BOARD_GAP_DEG: f32 = 10.0;
/// A learned colour's saturation floor: this fraction of its cells' 10th
/// percentile (shade and glare on a cap lower it), within the bounds below.
const LEARN_SATURATION_FRACTION: f32 = 0.7;
const LEARN_MIN_SATURATION: f32 = PALE_PAINT_MIN_SATURATION;
/// The board's own cells in a learned colour's window may cover at most this
/// many pieces' worth (scattered: grain and light put some board at any hue
/// near its own; the opening removes them): the colour's saturation floor
/// rises above the rest of them by the gap, when at least [`LEARN_MIN_KEPT`]
/// of the pieces' cells clear it.
const BOARD_MIX_MAX_PIECES: f64 = 0.25;
const BOARD_SATURATION_GAP: f32 = 0.02;
const LEARN_MIN_KEPT: f64 = 0.7;
/// A learned colour further than this (degrees) from the standard hue of the
/// team it is named after is named by a guess: the frame needs review.
const LEARN_NAME_MAX_DEG: f32 = 60.0;
/// A sampled colour (`--team red=U,V`): the median of this many pixels a side
/// round the point, the window [`GIVEN_HUE_TOLERANCE_DEG`] and the floors
/// below as fractions of the sample's saturation and value.
const SAMPLE_SIDE_PX: i64 = 5;
/// A given hue's window (degrees) when none is given: the spread of one paint
/// over a cap's shading, as the standard red's 15 degrees plus room for a
/// camera's white balance.
const GIVEN_HUE_TOLERANCE_DEG: f32 = 20.0;
const SAMPLE_SATURATION_FRACTION: f32 = 0.6;
const SAMPLE_VALUE_FRACTION: f32 = 0.4;

/// The standard teams' colours (the defaults).
pub fn standard_teams() -> Vec<TeamColour> {
    vec![TeamColour { team: Team::Red, colour: RED }, TeamColour { team: Team::Blue, colour: BLUE }]
}

/// Where the teams' colour models came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum TeamsSource {
    /// The standard red and blue.
    #[default]
    Standard,
    /// Given: on the command line, in a pieces file or in the board file.
    Given,
    /// Learned from a frame's piece-sized colour blobs.
    Learned,
}

/// A pieces file: the teams' colour models (JSON, docs/pieces.md).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PiecesFile {
    pub format: u32,
    pub teams: Vec<TeamColour>,
    /// Shuffleboard weights with a coloured cap smaller than the body: its radius (mm).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub weight_cap_radius_mm: Option<f64>,
    /// How far such a cap's face lies below the body's top (mm): measured once
    /// with a ruler, it takes the cap height's uncertainty out of every call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub weight_cap_recess_mm: Option<f64>,
}

/// No weight's cap is wider than this (mm radius; the regulation weight is 29.4 mm):
/// the detector also holds it to the board's weight.
const MAX_CAP_RADIUS_MM: f64 = 40.0;

/// No cap lies deeper in its weight than this (mm; the regulation weight is 25 mm
/// high): the detector also holds it to the board's weight.
const MAX_CAP_RECESS_FILE_MM: f64 = 40.0;

/// The pieces file format this build writes and reads.
pub const PIECES_FORMAT: u32 = 1;

impl PiecesFile {
    /// Reads and checks a pieces file.
    pub fn load(path: &Path) -> Result<PiecesFile, DetectError> {
        let bad = |problem: String| DetectError::PiecesFile { path: path.to_path_buf(), problem };
        let text = std::fs::read_to_string(path).map_err(|e| bad(e.to_string()))?;
        let file: PiecesFile = serde_json::from_str(&text).map_err(|e| bad(e.to_string()))?;
        if file.format != PIECES_FORMAT {
            return Err(bad(format!("format {} is not {PIECES_FORMAT}", file.format)));
        }
        check_teams(&file.teams).map_err(bad)?;
        if let Some(cap) = file.weight_cap_radius_mm.filter(|c| !(crate::piece::MIN_CAP_RADIUS_MM..=MAX_CAP_RADIUS_MM).contains(c)) {
            return Err(bad(format!("weight_cap_radius_mm {cap} is not a cap's radius ({}..={MAX_CAP_RADIUS_MM} mm)", crate::piece::MIN_CAP_RADIUS_MM)));
        }
        if let Some(recess) = file.weight_cap_recess_mm.filter(|r| !(0.0..MAX_CAP_RECESS_FILE_MM).contains(r)) {
            return Err(bad(format!("weight_cap_recess_mm {recess} is not a cap's depth in its weight (0..{MAX_CAP_RECESS_FILE_MM} mm)")));
        }
        Ok(file)
    }

    /// The file's JSON text.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_default() + "\n"
    }
}

pub use crate::piece::check_teams;

/// A team's colour as given on the command line: `NAME=H<hue>[:<tolerance>]`
/// (degrees) or `NAME=U,V` (a pixel of the frame on one of its pieces).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum TeamSpec {
    Hue { team: Team, hue_deg: f32, tolerance_deg: f32 },
    Sample { team: Team, u: f64, v: f64 },
}

impl std::str::FromStr for TeamSpec {
    type Err = String;
    fn from_str(s: &str) -> Result<TeamSpec, String> {
        let (name, what) = s.split_once('=').ok_or_else(|| format!("`{s}`: expected NAME=H<hue>[:<tolerance>] or NAME=U,V"))?;
        let team: Team = serde_json::from_value(serde_json::Value::String(name.trim().to_lowercase()))
            .map_err(|_| format!("`{name}` is not a team (red or blue)"))?;
        let num = |t: &str| t.trim().parse::<f64>().ok().filter(|v| v.is_finite()).ok_or_else(|| format!("`{t}` is not a number"));
        if let Some(h) = what.strip_prefix(['H', 'h']) {
            let (hue, tol) = match h.split_once(':') {
                Some((a, b)) => (num(a)?, num(b)?),
                None => (num(h)?, GIVEN_HUE_TOLERANCE_DEG as f64),
            };
            if !(0.0..=360.0).contains(&hue) || !(1.0..=90.0).contains(&tol) {
                return Err(format!("`{what}`: the hue must lie in 0..360 and its tolerance in 1..90 degrees"));
            }
            return Ok(TeamSpec::Hue { team, hue_deg: hue as f32, tolerance_deg: tol as f32 });
        }
        let (u, v) = what.split_once(',').ok_or_else(|| format!("`{what}`: expected H<hue>[:<tolerance>] or U,V (pixels)"))?;
        Ok(TeamSpec::Sample { team, u: num(u)?, v: num(v)? })
    }
}

impl TeamSpec {
    /// The team it names.
    pub fn team(&self) -> Team {
        match self {
            TeamSpec::Hue { team, .. } | TeamSpec::Sample { team, .. } => *team,
        }
    }

    /// The colour model it gives: a hue window, or the colour sampled round a
    /// pixel of `frame` (the raw frame the detector reads).
    pub fn resolve(&self, frame: &ColourView) -> Result<TeamColour, DetectError> {
        match *self {
            TeamSpec::Hue { team, hue_deg, tolerance_deg } => Ok(TeamColour {
                team,
                colour: ColourClass { hue_deg, hue_tolerance_deg: tolerance_deg, min_saturation: BLUE.min_saturation, min_value: BLUE.min_value, max_saturation: 1.0 },
            }),
            TeamSpec::Sample { team, u, v } => {
                let bad = |problem: String| DetectError::TeamSample { u, v, problem };
                let (w, h) = (frame.width() as f64, frame.height() as f64);
                if !(0.0..w).contains(&u) || !(0.0..h).contains(&v) {
                    return Err(bad(format!("outside the {w}x{h} frame")));
                }
                let half = SAMPLE_SIDE_PX / 2;
                let mut hsv: Vec<[f32; 3]> = Vec::new();
                for dy in -half..=half {
                    for dx in -half..=half {
                        let p = crate::geom::PixelPoint::new(u + dx as f64, v + dy as f64);
                        hsv.extend(frame.sample(p).map(super::bgr_to_hsv));
                    }
                }
                let sat = median(hsv.iter().map(|c| c[1]).collect());
                let val = median(hsv.iter().map(|c| c[2]).collect());
                let hue = circular_mean(hsv.iter().map(|c| (c[0], c[1])));
                let (Some(sat), Some(val), Some(hue)) = (sat, val, hue) else { return Err(bad("no pixel in view".into())) };
                if sat < PAINT_MIN_SATURATION || val < PAINT_MIN_VALUE {
                    return Err(bad(format!("the colour there is grey or dark (saturation {sat:.2}, value {val:.2}): not a piece's paint")));
                }
                let colour = ColourClass {
                    hue_deg: hue,
                    hue_tolerance_deg: GIVEN_HUE_TOLERANCE_DEG,
                    min_saturation: (SAMPLE_SATURATION_FRACTION * sat).clamp(LEARN_MIN_SATURATION, RED.min_saturation),
                    min_value: (SAMPLE_VALUE_FRACTION * val).min(RED.min_value),
                    max_saturation: 1.0,
                };
                Ok(TeamColour { team, colour })
            }
        }
    }
}

/// The area (mm^2) of a team's colour over which it is a cast, not pieces.
pub(super) fn cast_area(geo: &super::verify::Geometry) -> f64 {
    super::proposals::MAX_PIECES_OF_ONE_COLOUR * std::f64::consts::PI * geo.shape.radius_mm.powi(2)
}

/// The board's own hue: the saturation-weighted circular mean of the hues of
/// the grid cells on its surface (`None` with none in view or no colour).
pub(super) fn board_hue(cx: &Ctx) -> Option<f32> {
    let ([h, s, _], seen) = (cx.hsv, &cx.geo.surface_cells);
    let cells = (0..h.len()).step_by(BOARD_HUE_STRIDE).filter(|&i| !h[i].is_nan() && seen[i]);
    circular_mean(cells.map(|i| (h[i], s[i])))
}

/// Whether a cell's colour is paint that is not the board's.
fn paint(hsv: [f32; 3], board: Option<f32>) -> bool {
    hsv[1] >= PAINT_MIN_SATURATION && hsv[2] >= PAINT_MIN_VALUE && board.is_none_or(|b| hue_distance(hsv[0], b) > BOARD_HUE_MARGIN_DEG)
}

/// Whether a cell's colour may be a piece's paint, pale paint included (pieces
/// washed out by the light or made pale): paint, or colour of at least the pale
/// floors away from the board's hue. What the teams' colours are learned from.
fn piece_paint(hsv: [f32; 3], board: Option<f32>) -> bool {
    let pale = hsv[1] >= PALE_PAINT_MIN_SATURATION && hsv[2] >= PALE_PAINT_MIN_VALUE;
    paint(hsv, board) || (pale && board.is_none_or(|b| hue_distance(hsv[0], b) > BOARD_HUE_MARGIN_DEG))
}

/// Paint no team's colour explains, on the playing surface, in `mask` (opened
/// like the teams' masks): of no team's hue, or of a team's hue but paler than
/// its floor (down to [`PALE_PAINT_MIN_SATURATION`]) or, saturated, darker than
/// its floor; whether there is any (most frames have none: the opening and the
/// blobs are then skipped).
pub(super) fn mark_foreign(cx: &Ctx, board: Option<f32>, mask: &mut GrayImage) -> bool {
    let ([h, s, v], seen) = (cx.hsv, &cx.geo.surface_cells);
    // Every cell of every frame: written without branches (as the teams' own
    // masks are) so that it runs as vector code. A NaN hue (out of view) fails
    // the saturation test; an unknown board hue (NaN) leaves every hue away from it.
    let b = board.unwrap_or(f32::NAN);
    let windows: Vec<(f32, f32, f32)> = cx.teams.iter().map(|t| (t.colour.hue_deg, t.colour.hue_tolerance_deg, t.colour.min_value)).collect();
    let near = |a: f32, c: f32| {
        let d = (a - c).abs();
        d.min(360.0 - d)
    };
    // Whether each cell's hue is a team's: team by team over all cells (a loop over the teams inside the loop over
    // the cells kept the compiler from vectorising it).
    let mut team_hue = vec![false; mask.len()];
    // And whether it is of a team's hue but darker than that team's floor (a pale
    // colour's, raised against shadow, above a saturated piece in the shade).
    let mut team_dark = vec![false; mask.len()];
    for &(c, tol, floor) in &windows {
        for ((t, d), (&hh, &vv)) in team_hue.iter_mut().zip(team_dark.iter_mut()).zip(h.iter().zip(v.iter())) {
            let of_team = near(hh, c) <= tol;
            *t |= of_team;
            *d |= of_team & (vv < floor);
        }
    }
    for ((((m, &in_team), &dark), &seen), ((&hh, &ss), &vv)) in mask.iter_mut().zip(&team_hue).zip(&team_dark).zip(seen.iter()).zip(h.iter().zip(s.iter()).zip(v.iter())) {
        let off_board = !(near(hh, b) <= BOARD_HUE_MARGIN_DEG);
        // A team's hue down to the pale floor, its own colour included: a pale
        // piece's cells straddle the team's floor. Blobs mostly of the team's
        // own colour are left to the team's accounting (`unexplained_colour`).
        let paler = (ss >= PALE_PAINT_MIN_SATURATION) & (vv >= PALE_PAINT_MIN_VALUE) & in_team;
        let other = (ss >= PAINT_MIN_SATURATION) & !in_team;
        // Paint of a team's hue in a shade its colour's floor leaves out.
        let darker = (ss >= PAINT_MIN_SATURATION) & dark;
        let foreign = seen & (vv >= PAINT_MIN_VALUE) & off_board & (other | paler | darker);
        *m = if foreign { 255 } else { 0 };
    }
    if !mask.iter().any(|&m| m > 0) {
        return false;
    }
    open_in_place(mask, (THIN_RUN_MM / cx.geo.grid.step).ceil().clamp(1.0, 255.0) as i32);
    true
}

/// Piece-sized blobs of `foreign` colour (see [`mark_foreign`]) that no piece
/// found (of any team) accounts for: each is unexplained, with its hue.
pub(super) fn unexplained_colour(cx: &Ctx, foreign: &GrayImage, out: &Detections) -> Vec<Unexplained> {
    let (g, shape) = (&cx.geo.grid, cx.geo.shape);
    let covers: Vec<(crate::geom::BoardPoint, f64)> =
        out.pieces.iter().map(|d| (cx.seen_on_grid(d), d.footprint.radius_mm * super::proposals::COVER_SLACK)).collect();
    let mut left = foreign.clone();
    let cols = g.cols as usize;
    for i in set_cells(foreign) {
        let c = g.cell_centre((i % cols) as f64, (i / cols) as f64);
        if covers.iter().any(|(p, r)| c.distance_squared(*p) < r * r) {
            left.as_mut()[i] = 0;
        }
    }
    blobs_of(&left)
        .into_iter()
        // Sized by the smallest coloured outline a piece may show (a weight's cap).
        .map(|cells| Blob::of(g, cells, shape.smallest_outline_mm))
        .filter(|b| b.pieces >= FOREIGN_MIN_PIECES && !b.thin)
        .filter_map(|b| {
            let hue = blob_hue(cx, &b).unwrap_or(f32::NAN);
            let sat = blob_median(cx, &b, 1);
            let class = cx.teams.iter().position(|t| hue_distance(hue, t.colour.hue_deg) <= t.colour.hue_tolerance_deg);
            let paler = class.map(|k| &cx.teams[k]);
            let what = match (class, paler) {
                // Mostly in the team's own mask: its accounting reports it.
                (Some(k), _) if blob_share_in(cx, &b, &cx.masks[k]) >= TEAM_MASK_SHARE => return None,
                (_, Some(t)) if sat >= t.colour.min_saturation => {
                    let value = blob_median(cx, &b, 2);
                    format!("of team {:?}'s hue ({hue:.0} degrees) but darker than its colour allows (value {value:.2}, its floor {:.2}): a piece in shade?", t.team, t.colour.min_value)
                }
                (_, Some(t)) => format!("of team {:?}'s hue ({hue:.0} degrees) but paler than its colour allows (saturation {sat:.2}): a pale piece?", t.team),
                (_, None) => format!("of a colour no team's colour explains (hue {hue:.0} degrees): a piece of another colour?"),
            };
            Some(Unexplained {
                kind: shape.kind,
                team: paler.map(|t| t.team),
                centre: b.centre,
                area_mm2: b.area_mm2,
                reason: format!("{:.2} pieces' worth {what} give the teams' colours (--team, a pieces file)", b.pieces),
            })
        })
        .collect()
}

/// The teams' colours learned from a frame, with what makes them doubtful.
pub(super) struct Learned {
    pub teams: Vec<TeamColour>,
    pub doubts: Vec<String>,
}

/// Learns the teams' colours from the frame: blobs of paint (not the board's
/// hue) of one to a few pieces' worth are the pieces; their hues are clustered
/// into at most as many colours as there are teams, each becoming a colour
/// class as wide as its cells' hues spread (short of the board's hue), named
/// after the standard team whose hue is nearest. Teams no colour is learned
/// for keep `standard`'s class. `None` where no piece-sized paint is in view.
pub(super) fn learn(cx: &Ctx, board: Option<f32>, standard: &[TeamColour]) -> Option<Learned> {
    let (g, [h, s, v]) = (&cx.geo.grid, cx.hsv);
    let mut mask = GrayImage::new(g.cols, g.rows);
    for (i, m) in mask.iter_mut().enumerate() {
        if !h[i].is_nan() && piece_paint([h[i], s[i], v[i]], board) {
            *m = 255;
        }
    }
    let thin_cells = (THIN_RUN_MM / g.step).ceil().clamp(1.0, 255.0) as i32;
    open_in_place(&mut mask, thin_cells);
    // Colour in blobs no larger than a few pieces: the pieces' (and what is cut
    // off or seen in part: a washer deep in a cup, a weight at the view's edge).
    let pieces_sized: Vec<Blob> =
        blobs_of(&mask).into_iter().map(|cells| Blob::of(g, cells, cx.geo.shape.radius_mm)).filter(|b| b.pieces <= LEARN_MAX_PIECES).collect();
    // Learned from: those seen whole, of at least half a piece and not thin.
    let blobs: Vec<&Blob> = pieces_sized.iter().filter(|b| b.pieces >= FOREIGN_MIN_PIECES && !b.thin && g.wholly_in_view(&b.cells)).collect();
    let hues: Vec<(f32, f64)> = blobs.iter().filter_map(|b| Some((blob_hue(cx, b)?, b.area_mm2))).collect();
    let centres = cluster_hues(&hues, standard.len().min(2));
    if centres.is_empty() {
        return None;
    }
    // Each blob's cells go to the nearest colour.
    let mut members: Vec<Vec<[f32; 3]>> = vec![Vec::new(); centres.len()];
    let cols = g.cols as usize;
    for b in &blobs {
        let Some(hue) = blob_hue(cx, b) else { continue };
        let k = nearest(&centres, hue);
        members[k].extend(b.cells.iter().map(|&(c, r)| {
            let i = r as usize * cols + c as usize;
            [h[i], s[i], v[i]]
        }));
    }
    // Everything else in view (the board, its sides and surroundings): the
    // cells outside every piece-sized blob and its fringe (a piece's rim, side
    // and shadow tint lie just outside the blob the opening left, in the piece's
    // own colour: they are no part of the board). A piece seen in part (a
    // washer's crescent in a cup) is not learned from, and is no board either.
    let in_blob = {
        let mut m = GrayImage::new(g.cols, g.rows);
        for b in &pieces_sized {
            for &(c, r) in &b.cells {
                m.put_pixel(c as u32, r as u32, image::Luma([255]));
            }
        }
        let fringe = ((COVER_SLACK - 1.0) * cx.geo.shape.radius_mm / g.step).ceil().clamp(1.0, 255.0) as u8;
        imageproc::morphology::dilate(&m, imageproc::distance_transform::Norm::LInf, fringe).into_raw().into_iter().map(|v| v > 0).collect::<Vec<bool>>()
    };
    // Cells a team's colour marks already (a number printed on the board in a team's paint, which the standard
    // colour reads as well) are no board the learned colour would newly take in.
    let marked = |i: usize| cx.masks.iter().any(|m| m.as_raw()[i] > 0);
    let board_cell: Vec<bool> = (0..h.len()).map(|i| !h[i].is_nan() && !in_blob[i] && !marked(i)).collect();
    let names = name_colours(&centres, standard);
    let mut teams = standard.to_vec();
    let mut doubts = Vec::new();
    for (k, &hue) in centres.iter().enumerate() {
        let cells = &members[k];
        let mut dev: Vec<f32> = cells.iter().map(|c| hue_distance(c[0], hue)).collect();
        dev.sort_by(f32::total_cmp);
        let p90 = dev.get(dev.len() * 9 / 10).copied().unwrap_or(0.0);
        let mut tol = (p90 + LEARN_HUE_SLACK_DEG).clamp(LEARN_MIN_HUE_TOLERANCE_DEG, LEARN_MAX_HUE_TOLERANCE_DEG);
        if let Some(b) = board {
            tol = tol.min(hue_distance(hue, b) - LEARN_BOARD_GAP_DEG).max(1.0);
        }
        let mut sats: Vec<f32> = cells.iter().filter(|c| hue_distance(c[0], hue) <= tol).map(|c| c[1]).collect();
        sats.sort_by(f32::total_cmp);
        let p10 = sats.get(sats.len() / 10).copied().unwrap_or(PAINT_MIN_SATURATION);
        let mut min_saturation = (LEARN_SATURATION_FRACTION * p10).clamp(LEARN_MIN_SATURATION, RED.min_saturation);
        // The board's own cells of this hue must stay out: the floor rises
        // above their saturation, if the pieces' cells mostly clear it.
        // Only board cells the learned colour would mark in blobs: its mask is opened as every colour's is, and
        // a painted line of the team's hue (dark red lines on a board read with red pieces) is a thin run that
        // never becomes one.
        let mut window = GrayImage::new(g.cols, g.rows);
        for (i, m) in window.iter_mut().enumerate() {
            if board_cell[i] && hue_distance(h[i], hue) <= tol && v[i] >= BLUE.min_value && s[i] >= min_saturation {
                *m = 255;
            }
        }
        open_in_place(&mut window, thin_cells);
        let mut board_sats: Vec<f32> = set_cells(&window).map(|i| s[i]).collect();
        board_sats.sort_by(f32::total_cmp);
        let allowed = (BOARD_MIX_MAX_PIECES * std::f64::consts::PI * cx.geo.shape.radius_mm.powi(2) / (g.step * g.step)) as usize;
        if board_sats.len() > allowed {
            let above = board_sats[board_sats.len() - 1 - allowed] + BOARD_SATURATION_GAP;
            let kept = sats.iter().filter(|&&x| x >= above).count() as f64 / sats.len().max(1) as f64;
            if kept < LEARN_MIN_KEPT {
                doubts.push(format!(
                    "the colour learned at hue {hue:.0} degrees is the board's too (its saturation does not set the pieces apart): \
                     not used; give the teams' colours (--team)"
                ));
                continue;
            }
            min_saturation = min_saturation.max(above);
        }
        // A pale colour is pale paint in the light: as unsaturated and darker is shadow.
        let min_value = if min_saturation < PAINT_MIN_SATURATION { PALE_PAINT_MIN_VALUE } else { BLUE.min_value };
        let colour = ColourClass { hue_deg: hue, hue_tolerance_deg: tol, min_saturation, min_value, max_saturation: 1.0 };
        let team = names[k];
        if let Some(t) = teams.iter_mut().find(|t| t.team == team) {
            let off = hue_distance(hue, t.colour.hue_deg);
            if off > LEARN_NAME_MAX_DEG {
                doubts.push(format!(
                    "the colour learned at hue {hue:.0} degrees is named {team:?} only by being nearest its standard hue \
                     ({off:.0} degrees away): give the teams' colours (--team) to be sure"
                ));
            }
            t.colour = colour;
        }
    }
    Some(Learned { teams, doubts })
}

/// The hue of a blob: its cells' saturation-weighted circular mean.
fn blob_hue(cx: &Ctx, b: &Blob) -> Option<f32> {
    let ([h, s, _], cols) = (cx.hsv, cx.geo.grid.cols as usize);
    circular_mean(b.cells.iter().map(|&(c, r)| {
        let i = r as usize * cols + c as usize;
        (h[i], s[i])
    }))
}

/// The share of a blob's cells set in `mask`.
fn blob_share_in(cx: &Ctx, b: &Blob, mask: &GrayImage) -> f64 {
    let cols = cx.geo.grid.cols as usize;
    let set = b.cells.iter().filter(|&&(c, r)| mask.as_raw()[r as usize * cols + c as usize] > 0).count();
    set as f64 / b.cells.len().max(1) as f64
}

/// The median of a blob's cells in one HSV plane (1: saturation, 2: value).
fn blob_median(cx: &Ctx, b: &Blob, plane: usize) -> f32 {
    let (p, cols) = (&cx.hsv[plane], cx.geo.grid.cols as usize);
    median(b.cells.iter().map(|&(c, r)| p[r as usize * cols + c as usize]).collect()).unwrap_or(f32::NAN)
}

/// At most `k` hue centres of weighted hues (degrees, weight): k-means on the
/// hue circle from the two hues furthest apart; centres closer than
/// [`MIN_TEAM_HUE_SEPARATION_DEG`] merge.
fn cluster_hues(hues: &[(f32, f64)], k: usize) -> Vec<f32> {
    let Some(&(first, _)) = hues.first() else { return Vec::new() };
    let mut centres = vec![first];
    if k >= 2 {
        // The pair furthest apart seeds two clusters.
        let (mut a, mut b, mut far) = (first, first, -1.0);
        for &(x, _) in hues {
            for &(y, _) in hues {
                if hue_distance(x, y) > far {
                    (a, b, far) = (x, y, hue_distance(x, y));
                }
            }
        }
        centres = vec![a, b];
    }
    for _ in 0..20 {
        let next: Vec<f32> = (0..centres.len())
            .map(|c| {
                let mine = hues.iter().filter(|(h, _)| nearest(&centres, *h) == c).map(|&(h, w)| (h, w as f32));
                circular_mean(mine).unwrap_or(centres[c])
            })
            .collect();
        if next == centres {
            break;
        }
        centres = next;
    }
    if centres.len() == 2 && hue_distance(centres[0], centres[1]) < MIN_TEAM_HUE_SEPARATION_DEG {
        centres = vec![circular_mean(hues.iter().map(|&(h, w)| (h, w as f32))).unwrap_or(centres[0])];
    }
    centres
}

/// The team each learned colour is named after: the assignment of distinct
/// teams whose standard hues lie nearest overall.
fn name_colours(centres: &[f32], standard: &[TeamColour]) -> Vec<Team> {
    let cost = |c: f32, t: &TeamColour| hue_distance(c, t.colour.hue_deg);
    match (centres, standard) {
        ([c], _) => vec![standard.iter().min_by(|a, b| cost(*c, a).total_cmp(&cost(*c, b))).map_or(Team::Red, |t| t.team)],
        ([c0, c1], [t0, t1, ..]) => {
            if cost(*c0, t0) + cost(*c1, t1) <= cost(*c0, t1) + cost(*c1, t0) {
                vec![t0.team, t1.team]
            } else {
                vec![t1.team, t0.team]
            }
        }
        _ => standard.iter().map(|t| t.team).take(centres.len()).collect(),
    }
}

fn nearest(centres: &[f32], hue: f32) -> usize {
    (0..centres.len()).min_by(|&a, &b| hue_distance(hue, centres[a]).total_cmp(&hue_distance(hue, centres[b]))).unwrap_or(0)
}

/// The distance between two hues round the circle (degrees, 0..180).
pub fn hue_distance(a: f32, b: f32) -> f32 {
    // Hues lie in 0..=360 (the grid's, the classes' and the means'): the
    // difference is within one turn and needs no `fmod` (every cell, every frame).
    let d = (a - b).abs();
    let d = if d > 360.0 { d.rem_euclid(360.0) } else { d };
    d.min(360.0 - d)
}

/// The weighted circular mean of hues (degrees), `None` without weight.
fn circular_mean(hues: impl Iterator<Item = (f32, f32)>) -> Option<f32> {
    let (mut x, mut y, mut w) = (0.0f64, 0.0f64, 0.0f64);
    for (h, wt) in hues.filter(|(h, w)| h.is_finite() && w.is_finite()) {
        let a = (h as f64).to_radians();
        (x, y, w) = (x + wt as f64 * a.cos(), y + wt as f64 * a.sin(), w + wt as f64);
    }
    (w > 0.0 && x.hypot(y) > 1e-9 * w).then(|| (y.atan2(x).to_degrees().rem_euclid(360.0)) as f32)
}

/// The median of the finite values (the upper of the two middle ones), `None` with none.
pub(super) fn median(mut v: Vec<f32>) -> Option<f32> {
    v.retain(|x| x.is_finite());
    v.sort_by(f32::total_cmp);
    v.get(v.len() / 2).copied()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn team_specs_parse_and_refuse_nonsense() {
        assert_eq!("blue=H270".parse::<TeamSpec>(), Ok(TeamSpec::Hue { team: Team::Blue, hue_deg: 270.0, tolerance_deg: GIVEN_HUE_TOLERANCE_DEG }));
        assert_eq!("Red=h342:12".parse::<TeamSpec>(), Ok(TeamSpec::Hue { team: Team::Red, hue_deg: 342.0, tolerance_deg: 12.0 }));
        assert_eq!("red=640.5,480".parse::<TeamSpec>(), Ok(TeamSpec::Sample { team: Team::Red, u: 640.5, v: 480.0 }));
        for bad in ["green=H120", "red", "red=H400", "red=H10:0", "red=Hnan", "red=1,", "blue=H270:200", "red=inf,3"] {
            assert!(bad.parse::<TeamSpec>().is_err(), "{bad}");
        }
    }

    #[test]
    fn hues_cluster_round_the_circle() {
        // Red either side of 0 and violet: two colours, red's mean near 350.
        let hues = [(342.0, 1.0), (355.0, 1.0), (5.0, 1.0), (268.0, 1.0), (272.0, 1.0)];
        let mut c = cluster_hues(&hues, 2);
        c.sort_by(f32::total_cmp);
        assert_eq!(c.len(), 2, "{c:?}");
        // Circular means of the members (tolerance: float rounding of the trigonometry).
        assert!((c[0] - 270.0).abs() < 0.5 && hue_distance(c[1], 354.0) < 0.5, "{c:?}");
        let names = name_colours(&c, &standard_teams());
        assert_eq!(names, vec![Team::Blue, Team::Red]);
        // One colour only: one cluster.
        assert_eq!(cluster_hues(&[(220.0, 1.0), (230.0, 2.0)], 2).len(), 1);
        assert!(cluster_hues(&[], 2).is_empty());
    }

    #[test]
    fn pieces_files_round_trip_and_bad_ones_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("pieces.json");
        let file = PiecesFile { format: PIECES_FORMAT, teams: standard_teams(), weight_cap_radius_mm: Some(22.0), weight_cap_recess_mm: Some(1.5) };
        std::fs::write(&path, file.to_json()).unwrap();
        assert_eq!(PiecesFile::load(&path).unwrap(), file);
        for bad in [
            "{",
            r#"{"format": 1, "teams": []}"#,
            r#"{"format": 2, "teams": []}"#,
            r#"{"format": 1, "teams": [{"team": "red", "colour": {"hue_deg": 0, "hue_tolerance_deg": 10, "min_saturation": 0.3, "min_value": 0.1, "max_saturation": 1}}], "weight_cap_radius_mm": 2}"#,
            r#"{"format": 1, "teams": [{"team": "red", "colour": {"hue_deg": 500, "hue_tolerance_deg": 10, "min_saturation": 0.3, "min_value": 0.1, "max_saturation": 1}}]}"#,
            r#"{"format": 1, "teams": [{"team": "red", "colour": {"hue_deg": 0, "hue_tolerance_deg": 10, "min_saturation": 0.3, "min_value": 0.1, "max_saturation": 1}}, {"team": "red", "colour": {"hue_deg": 0, "hue_tolerance_deg": 10, "min_saturation": 0.3, "min_value": 0.1, "max_saturation": 1}}]}"#,
        ] {
            std::fs::write(&path, bad).unwrap();
            assert!(matches!(PiecesFile::load(&path), Err(DetectError::PiecesFile { .. })), "{bad}");
        }
        assert!(PiecesFile::load(&dir.path().join("missing.json")).is_err());
    }
}
