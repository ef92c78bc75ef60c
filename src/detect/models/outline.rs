//! Shape before colour: round outlines of a piece's size that no piece found
//! accounts for (a pale cap on a board of nearly its hue, a washer of a colour no
//! one gave, a piece whose colour joined a rail's of its team's colour) are found
//! by shape and verified as crisp circles unlike the board round them; one faced
//! in a team's paint is measured as that team's piece, the rest reported
//! unexplained: the frame needs review, the piece is never silently dropped.

use crate::detect::proposals::{self, MIN_PIECE_SEPARATION};
use crate::detect::verify::{Ctx, MAX_RADIUS_ERROR_MM};
use crate::detect::{Detections, Unexplained};
use crate::geom::{BoardPoint, Footprint};

/// A round outline found by shape is a piece's if its fitted radius is the
/// piece's within this (mm): the verification's own radius tolerance.
const OUTLINE_RADIUS_TOLERANCE_MM: f64 = MAX_RADIUS_ERROR_MM;
/// ... and its edges lie within this (pixels, RMS) of the circle: a piece's
/// outline is a crisp edge (0.1-0.25 px on the fixtures, colour asked or not),
/// while edges picked from wood grain or a texture round a circle scatter by
/// about a pixel (0.8-1.1 px on the fixtures' boards). The colour-asked fit's
/// limit ([`crate::detect::verify::MAX_FIT_RMS_PX`]) trusts the paint inside;
/// this one has no paint to trust.
const OUTLINE_MAX_RMS_PX: f64 = 0.5;
/// ... and edges answer at least this share of the probes in view: a piece's
/// outline (its side against the board, its shadow) shows all round, while
/// wood grain, a print or a shadow's edge make arcs at most.
const OUTLINE_MIN_EDGE_SHARE: f64 = 0.8;
/// ... and what lies inside it differs from the board round it: the mean
/// colour (saturation-weighted hue vector and value, 0..1 each) on the piece's
/// face and in a ring 1.4-1.8 radii out, both at the face's height (the ring
/// then sees the board past the piece's side), differ by at least this. A pale
/// cap on wood of nearly its hue differs by ~0.2 (its value and hue); wood
/// grain or a painted field against itself, by a few hundredths.
const OUTLINE_MIN_CONTRAST: f64 = 0.1;
/// Where the board round an outline is looked at (fractions of its radius).
const AROUND: [f64; 3] = [1.4, 1.6, 1.8];
/// The colour samples: this many angles round each ring.
const CONTRAST_ANGLES: usize = 24;

/// The pieces the teams' colours propose, verified ([`super::find_by_colour`]), then the round outlines of radius
/// `radius_mm` that none of them accounts for ([`account_for_outlines`]); the outlines' circle search (a Hough
/// transform over the whole grid) runs on another core meanwhile.
pub(super) fn colour_then_outlines(cx: &Ctx, out: &mut Detections, radius_mm: f64, top_z_mm: f64, face: &[f64]) {
    let (circles, ()) = rayon::join(|| proposals::circles_of_radius(cx, radius_mm, &[proposals::VALUE]), || super::find_by_colour(cx, out));
    account_for_outlines(cx, out, circles, radius_mm, top_z_mm, face);
}

/// Reports the round outlines of radius `radius_mm`, face at `top_z_mm`, on
/// the playing surface, that no piece found (and no colour already reported)
/// accounts for: `circles`, those of that radius in the grid's brightness
/// ([`proposals::circles_of_radius`]), each verified by an outline fit of that size asking
/// no colour inside, crisp, answered all round, and unlike the board round it
/// where the piece's paint shows (`face`: fractions of the radius).
///
/// The circle search depends on the frame alone, not on the pieces found: a model runs it beside its colour
/// proposals' verification ([`colour_then_outlines`]).
pub(super) fn account_for_outlines(cx: &Ctx, out: &mut Detections, circles: Vec<BoardPoint>, radius_mm: f64, top_z_mm: f64, face: &[f64]) {
    let r = radius_mm;
    let accounted = |out: &Detections, c: BoardPoint| {
        let reach = r * MIN_PIECE_SEPARATION;
        out.pieces.iter().any(|d| d.footprint.centre.distance(c) < reach) || out.unexplained.iter().any(|u| u.centre.distance(c) < reach)
    };
    // Only on the playing surface: a piece off it scores nothing whatever its colour.
    let surface = &cx.geo.board.surface;
    for c in circles {
        if !surface.contains(c) || accounted(out, c) {
            continue;
        }
        let Ok(fit) = cx.fit_any_colour(Footprint::new(c, r), top_z_mm) else { continue };
        let round = (fit.footprint.radius_mm - r).abs() <= OUTLINE_RADIUS_TOLERANCE_MM
            && fit.rms_mm <= OUTLINE_MAX_RMS_PX * fit.mm_per_px
            && fit.inliers as f64 >= OUTLINE_MIN_EDGE_SHARE * fit.probes as f64;
        let f = fit.footprint.centre;
        if !round || !surface.contains(f) || accounted(out, f) || contrast(cx, f, r, top_z_mm, face) < OUTLINE_MIN_CONTRAST {
            continue;
        }
        // A crisp round outline whose face is a team's paint is that team's piece, which the colour blobs did
        // not give (its colour joined a region of the team's colour larger than pieces: a rail, a print):
        // measured as any piece of the team is.
        if let Some(k) = team_of_face(cx, f, r, top_z_mm, face) {
            let team = cx.teams[k].team;
            if let Some(d) = cx.measure(Footprint::new(f, r), Some(team), k).ok().filter(|d| d.doubt.is_none() && d.footprint.centre.distance(f) < r) {
                out.pieces.push(d);
                continue;
            }
        }
        let kind = cx.geo.shape.kind;
        let what = kind.name();
        out.unexplained.push(Unexplained {
            kind,
            team: None,
            centre: f,
            area_mm2: std::f64::consts::PI * r * r,
            reason: format!(
                "a round outline of a {what}'s size at ({:.0}, {:.0}) mm that no team's colour explains: a piece of another \
                 colour, or paler? give the teams' colours (--team, a pieces file)",
                f.x_mm,
                f.y_mm
            ),
        });
    }
}

/// The team whose colour most of the face rings `face` (fractions of radius `r`) round `c` at height `top` have,
/// if one has at least [`FACE_TEAM_SHARE`] of the samples in view.
fn team_of_face(cx: &Ctx, c: BoardPoint, r: f64, top: f64, face: &[f64]) -> Option<usize> {
    let mut counts = vec![0usize; cx.teams.len()];
    let mut seen = 0usize;
    for hsv in ring_colours(cx, c, r, top, face) {
        seen += 1;
        for (n, team) in counts.iter_mut().zip(cx.teams) {
            *n += usize::from(team.colour.contains(hsv));
        }
    }
    let (k, &n) = counts.iter().enumerate().max_by_key(|(_, n)| **n)?;
    (seen > 0 && n as f64 >= FACE_TEAM_SHARE * seen as f64).then_some(k)
}

/// A face is a team's paint where this share of its samples has the team's colour: a cap's print, glare and
/// shading take a few tenths at most.
const FACE_TEAM_SHARE: f64 = 0.6;

/// How far the mean colour on the rings `face` (fractions of radius `r`) round
/// `c` at height `top` lies from that of the rings [`AROUND`] at the same
/// height (see [`OUTLINE_MIN_CONTRAST`]); zero where either is out of view.
fn contrast(cx: &Ctx, c: BoardPoint, r: f64, top: f64, face: &[f64]) -> f64 {
    let mean = |fractions: &[f64]| -> Option<[f64; 3]> {
        let (mut sum, mut n) = ([0.0; 3], 0usize);
        for [h, s, v] in ring_colours(cx, c, r, top, fractions) {
            let (h, s, v) = ((h as f64).to_radians(), s as f64, v as f64);
            sum = [sum[0] + s * h.cos(), sum[1] + s * h.sin(), sum[2] + v];
            n += 1;
        }
        (n > 0).then(|| sum.map(|x| x / n as f64))
    };
    match (mean(face), mean(&AROUND)) {
        (Some(a), Some(b)) => ((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2) + (a[2] - b[2]).powi(2)).sqrt(),
        _ => 0.0,
    }
}

/// The colours (HSV) in view on the rings `fractions` (of radius `r`) round `c` at height `top`,
/// [`CONTRAST_ANGLES`] a ring.
fn ring_colours<'a>(cx: &'a Ctx, c: BoardPoint, r: f64, top: f64, fractions: &'a [f64]) -> impl Iterator<Item = [f32; 3]> + 'a {
    fractions.iter().flat_map(move |&k_r| {
        (0..CONTRAST_ANGLES).filter_map(move |k| {
            let t = std::f64::consts::TAU * k as f64 / CONTRAST_ANGLES as f64;
            cx.hsv_at(BoardPoint::new(c.x_mm + k_r * r * t.cos(), c.y_mm + k_r * r * t.sin()).at_height(top))
        })
    })
}
