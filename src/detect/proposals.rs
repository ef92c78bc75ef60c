//! Proposals: where might a piece be. Blobs of a team's colour on the metric grid
//! (their area says how many pieces they may hold), circles of the piece's size in
//! the grid's brightness and saturation (sjoelen discs), and colour left over once the verified
//! pieces are accounted for. A proposal decides nothing: verification does.

use super::grid::{blobs_of, minor_spread, set_cells, split_blob, Grid};
use super::verify::Ctx;
use super::{Detections, Unexplained};
use crate::geom::{BoardPoint, Footprint};
use crate::piece::Team;
use image::GrayImage;

/// Colour runs narrower than twice this (mm) are removed before grouping: a
/// painted stripe (6.35 mm) of a team's colour, chalk marks, glare fringes.
/// Every piece is far wider (weights 58.7, washers 63.5, discs 52 mm).
pub const THIN_RUN_MM: f64 = 4.0;
/// A blob's spread across its narrowest direction, as a fraction of one
/// piece's (r / 2 for a disc), below which it cannot be pieces.
pub const MIN_BLOB_WIDTH_FRACTION: f64 = 0.6;
/// A detection accounts for the colour within this factor of its radius (its
/// side, shadow fringe and the grid's blur lie just outside the outline).
pub(super) const COVER_SLACK: f64 = 1.25;
/// Unaccounted colour of at least this fraction of a piece's area (and not a
/// thin run) makes the frame need review: a quarter of a piece is more than
/// glare fringes or a shadow's tint leave, and less than a half-hidden piece.
pub(super) const UNACCOUNTED_AREA_FRACTION: f64 = 0.25;
/// A team's colour over more of the view than this many of its pieces cover is not pieces: no game puts more than 30
/// of a kind in play (sjoelen's discs; a team has 4 weights or 5 washers). A colour cast, a cloth of the team's
/// colour, or a damaged frame: the colour is reported as unexplained (review) instead of fitted blob by blob, which
/// would also take a fit for every piece-sized part of it.
pub(super) const MAX_PIECES_OF_ONE_COLOUR: f64 = 40.0;
/// A blob of one team's colour larger than this many pieces' worth is not pieces: a team throws at most five
/// pieces a round (4 weights, 3 to 5 washers), so all of one team touching is five pieces' worth and their shadow
/// fringes a quarter more ([`COVER_SLACK`]). More is a rail, a gutter, a cloth or a print of the team's colour
/// (tables come in every colour), and fitting its piece-sized parts as pieces would only find what is not there.
pub(super) const MAX_PIECES_IN_ONE_BLOB: f64 = 8.0;
/// Canny's upper threshold in HoughCircles on the 8-bit brightness grid: a
/// painted or pale disc's rim against the board is 30-80 levels, but unpainted
/// wood on a wooden board under soft light shows ~15-25 levels, and only on
/// its shadowed side. A proposal decides nothing (each is verified by an
/// outline fit of the disc's size), so the search errs towards proposing.
const HOUGH_CANNY_HIGH: f64 = 20.0;
/// Votes a circle needs, as a fraction of its circumference in cells: a disc
/// half hidden by a wall or the gate bar, whose rim shows against the board on
/// one side only (wood on wood: the lit side matches the board), still shows
/// more than this.
const HOUGH_VOTES_FRACTION: f64 = 0.15;
/// Votes of a faint circle ([`faint_circles`]): under a proposal's [`HOUGH_VOTES_FRACTION`], as the rim of a disc
/// in a shadow shows (external sj_00: a disc in the gate bar's shadow beside another, which no proposal found, is
/// found at 0.10), and as the board's grain shows too (the same frame: two more, on bare wood). So a faint circle
/// is never counted: one the outline fit accepts only makes the frame need review.
pub(super) const FAINT_VOTES_FRACTION: f64 = 0.10;
/// Circle proposals closer than this fraction of a radius are one circle
/// (the Hough transform's minimum distance): a disc on another shows its whole
/// outline and the lower one an arc, their centres a third of a radius apart
/// or more in a pile.
const STACKED_PROPOSAL_SEPARATION: f64 = 0.5;
/// Two flat pieces' centres are at least a diameter apart; a little less
/// allows for the fits' error (fraction of a radius).
pub(super) const MIN_PIECE_SEPARATION: f64 = 1.6;

/// A blob of one colour on the grid.
pub(super) struct Blob {
    /// Its cells (column, row).
    pub cells: Vec<(f64, f64)>,
    pub centre: BoardPoint,
    pub area_mm2: f64,
    /// Its area in pieces' worth.
    pub pieces: f64,
    /// Its spread across its narrowest direction (mm).
    pub minor_mm: f64,
    /// Too narrow to be pieces (a stripe, a crescent, a sliver).
    pub thin: bool,
}

impl Blob {
    /// The blob of `cells`, for pieces of radius `radius_mm`.
    pub fn of(grid: &Grid, cells: Vec<(f64, f64)>, radius_mm: f64) -> Blob {
        let area_mm2 = cells.len() as f64 * grid.step * grid.step;
        let minor_mm = minor_spread(&cells) * grid.step;
        Blob {
            centre: grid.blob_centre(&cells),
            pieces: area_mm2 / (std::f64::consts::PI * radius_mm * radius_mm),
            thin: minor_mm < MIN_BLOB_WIDTH_FRACTION * radius_mm / 2.0,
            area_mm2,
            minor_mm,
            cells,
        }
    }

    /// Where the pieces of a blob of `n` pieces' worth start their fits (k-means over its cells).
    pub fn starts(&self, grid: &Grid, n: usize) -> Vec<BoardPoint> {
        split_blob(&self.cells, n).into_iter().map(|(c, r)| grid.cell_centre(c, r)).collect()
    }

    /// Its cells' centres on the board.
    pub fn points(&self, grid: &Grid) -> Vec<BoardPoint> {
        self.cells.iter().map(|&(c, r)| grid.cell_centre(c, r)).collect()
    }
}

/// The blobs of a colour mask.
pub(super) fn colour_blobs(cx: &Ctx, class: usize) -> Vec<Blob> {
    let (g, r) = (&cx.geo.grid, cx.geo.shape.radius_mm);
    blobs_of(&cx.masks[class]).into_iter().map(|cells| Blob::of(g, cells, r)).collect()
}

/// A colour over more of the view than any game's pieces cover (its blobs of a piece's scale together, `blobs`):
/// reported as unexplained (and `true`) instead of proposed blob by blob.
pub(super) fn flooded(cx: &Ctx, blobs: &[Blob], team: Option<Team>, out: &mut Detections) -> bool {
    let (g, shape) = (&cx.geo.grid, cx.geo.shape);
    let piece_area = std::f64::consts::PI * shape.radius_mm.powi(2);
    let area: f64 = blobs.iter().map(|b| b.area_mm2).sum();
    if area <= MAX_PIECES_OF_ONE_COLOUR * piece_area {
        return false;
    }
    out.unexplained.push(Unexplained {
        kind: shape.kind,
        team,
        centre: g.cell_centre(g.cols as f64 / 2.0, g.rows as f64 / 2.0),
        area_mm2: area,
        reason: format!(
            "{:.0} pieces' worth of this team's colour, more than any game puts in play: a colour cast, a cloth \
             or a damaged frame; not read as pieces",
            area / piece_area
        ),
    });
    true
}

/// How far inside a hole's rim (mm) a region's cells are taken to be seen through the opening: the blur and the
/// grid's sampling carry the board's paint a cell or two over the rim's image.
const OPENING_MARGIN_MM: f64 = 3.0;

/// Splits a team's blobs into those of a piece's scale and those larger than all of a team's pieces together
/// ([`MAX_PIECES_IN_ONE_BLOB`]: the table's own colour). Such a region reaching onto the playing surface by at
/// least [`UNACCOUNTED_AREA_FRACTION`] of a piece is reported as unexplained: a piece touching it there is not
/// seen. Off the surface (rails, gutters, a cloth round the board) a piece it hides would be off the board, which
/// scores nothing, and the region is left out silently.
///
/// What such a region covers inside a hole's opening is not the table's paint (the surface has a hole there): a
/// washer of the colour down a cup, seen through the opening and joined to a board painted in its team's colour
/// across the rim's image (varied 21: a blue washer in a hole of a blue board). Those cells, [`OPENING_MARGIN_MM`]
/// inside the rim, are split off as blobs of their own and proposed as pieces.
pub(super) fn set_aside_regions(cx: &Ctx, blobs: Vec<Blob>, team: Option<Team>, out: &mut Detections) -> (Vec<Blob>, Vec<Blob>) {
    let (g, shape) = (&cx.geo.grid, cx.geo.shape);
    let piece_area = std::f64::consts::PI * shape.radius_mm.powi(2);
    let (mut pieces, regions): (Vec<Blob>, Vec<Blob>) = blobs.into_iter().partition(|b| b.pieces <= MAX_PIECES_IN_ONE_BLOB);
    let openings: Vec<(BoardPoint, f64)> = cx.geo.board.washer().map_or_else(Vec::new, |w| w.holes.iter().map(|h| (h.centre(), h.diameter_mm / 2.0 - OPENING_MARGIN_MM)).collect());
    let in_opening = |&(c, r): &(f64, f64)| openings.iter().any(|(centre, radius)| g.cell_centre(c, r).distance(*centre) < *radius);
    let regions: Vec<Blob> = if openings.is_empty() {
        regions
    } else {
        regions
            .into_iter()
            .filter_map(|region| {
                let (inside, rest): (Vec<(f64, f64)>, Vec<(f64, f64)>) = region.cells.into_iter().partition(in_opening);
                if !inside.is_empty() {
                    let mut mask = GrayImage::new(g.cols, g.rows);
                    for &(c, r) in &inside {
                        mask.put_pixel(c as u32, r as u32, image::Luma([255]));
                    }
                    pieces.extend(blobs_of(&mask).into_iter().map(|cells| Blob::of(g, cells, shape.radius_mm)));
                }
                (!rest.is_empty()).then(|| Blob::of(g, rest, shape.radius_mm))
            })
            .collect()
    };
    for region in &regions {
        let on_surface = region.cells.iter().filter(|&&(c, r)| cx.geo.surface_cells[r as usize * g.cols as usize + c as usize]).count();
        let area_mm2 = on_surface as f64 * g.step * g.step;
        if area_mm2 >= UNACCOUNTED_AREA_FRACTION * piece_area {
            out.unexplained.push(Unexplained {
                kind: shape.kind,
                team,
                centre: region.centre,
                area_mm2,
                reason: format!(
                    "a region of this team's colour over {:.0} pieces' worth, {:.1} of them on the playing surface: more \
                     than all of a team's pieces together (a print or a cloth of the colour?); a piece touching it is \
                     not seen",
                    region.pieces,
                    area_mm2 / piece_area
                ),
            });
        }
    }
    (pieces, regions)
}

/// Blobs of mask `class` that no detection of `team` (and no unexplained
/// entry) covers, of at least [`UNACCOUNTED_AREA_FRACTION`] of a piece and
/// not thin runs. Each detection covers the cells of its footprint as the
/// grid sees it (a piece down a cup or on the ground appears where its line
/// of sight meets the grid's height).
/// Only cells where `place` holds count: where a piece of the kind can lie and
/// matter to the score (see [`anywhere`]); the cells of regions `set_aside`
/// ([`set_aside_regions`]) do not.
pub(super) fn leftover_blobs(cx: &Ctx, class: usize, team: Option<Team>, out: &Detections, place: &dyn Fn(BoardPoint) -> bool, set_aside: &[Blob]) -> Vec<Blob> {
    let (g, shape) = (&cx.geo.grid, cx.geo.shape);
    let covers: Vec<Footprint> = out
        .pieces
        .iter()
        .filter(|d| d.team == team)
        .map(|d| Footprint::new(cx.seen_on_grid(d), d.footprint.radius_mm * COVER_SLACK))
        .chain(out.unexplained.iter().filter(|u| u.team == team).map(|u| Footprint::new(u.centre, shape.radius_mm * COVER_SLACK)))
        .collect();
    let mut left: GrayImage = cx.masks[class].clone();
    let (cols, cells): (usize, &mut [u8]) = (g.cols as usize, &mut left);
    for &(c, r) in set_aside.iter().flat_map(|b| &b.cells) {
        cells[r as usize * cols + c as usize] = 0;
    }
    for i in set_cells(&cx.masks[class]) {
        let c = g.cell_centre((i % cols) as f64, (i / cols) as f64);
        if cells[i] == 0 || !place(c) || covers.iter().any(|f| c.distance_squared(f.centre) < f.radius_mm * f.radius_mm) {
            cells[i] = 0;
        }
    }
    blobs_of(&left)
        .into_iter()
        .map(|cells| Blob::of(g, cells, shape.radius_mm))
        .filter(|b| b.pieces >= UNACCOUNTED_AREA_FRACTION && !b.thin)
        .collect()
}

/// A place filter that keeps every cell: pieces that can lie anywhere in view
/// (on a board, in its gutters, on the ground beside it) and count or matter there.
pub(super) fn anywhere(_: BoardPoint) -> bool {
    true
}

/// The safety net: colour of a piece that no detection (and no unexplained
/// entry already) accounts for is reported as unexplained, so a piece the
/// detector missed makes the frame need review instead of silently not counting.
pub(super) fn account_for_colour(cx: &Ctx, class: usize, team: Option<Team>, out: &mut Detections, place: &dyn Fn(BoardPoint) -> bool, set_aside: &[Blob]) {
    for blob in leftover_blobs(cx, class, team, out, place, set_aside) {
        out.unexplained.push(Unexplained {
            kind: cx.geo.shape.kind,
            team,
            centre: blob.centre,
            area_mm2: blob.area_mm2,
            reason: format!("{:.2} pieces' worth of the colour that no piece accounts for", blob.pieces),
        });
    }
}

/// Circles of the piece's size in the grid's brightness and saturation
/// images (a metric top-down view at the pieces' top height): where pale
/// pieces of no team colour may be. OpenCV's Hough transform; none where it fails.
pub(super) fn circles(cx: &Ctx) -> Vec<BoardPoint> {
    circles_of_radius(cx, cx.geo.shape.radius_mm, &[VALUE, SATURATION])
}

/// The grid's channels a circle search may look in (indices into
/// [`Ctx::hsv`]). A piece of the board's own material differs from it by
/// whichever the light and the finish give: a sjoelen disc in a compartment's
/// shadow is as dark as the board there and shows in its saturation only, a
/// pale disc in full light in its value. Hue is left out: it is noise where
/// either is pale.
pub(super) const VALUE: usize = 2;
pub(super) const SATURATION: usize = 1;

/// Circles of radius `radius_mm` in the grid's `channels` (see [`circles`]):
/// each channel's circles, those of a later channel only where no earlier
/// one found a circle within [`STACKED_PROPOSAL_SEPARATION`] of a radius. Each
/// channel costs a Hough transform over the whole grid.
pub(super) fn circles_of_radius(cx: &Ctx, radius_mm: f64, channels: &[usize]) -> Vec<BoardPoint> {
    // The channels' transforms are independent: run on the machine's cores, their circles taken in the channels' order.
    let per_channel = crate::parallel::map_in_order(channels, |_: &mut (), &channel| circles_in(cx, channel, radius_mm, HOUGH_VOTES_FRACTION, f64::INFINITY));
    let mut found: Vec<BoardPoint> = Vec::new();
    for circles in per_channel {
        let before = found.len();
        for c in circles {
            if !found[..before].iter().any(|f| f.distance(c) < STACKED_PROPOSAL_SEPARATION * radius_mm) {
                found.push(c);
            }
        }
    }
    found
}

/// Faint circles of the piece's size ([`FAINT_VOTES_FRACTION`] of their circumference in votes, in the grid's
/// brightness and saturation) whose centres lie below `max_y_mm` along the board, where one would matter: those within
/// [`STACKED_PROPOSAL_SEPARATION`] of a radius of one of the `proposed` circles are left out (they are that one).
/// Only the grid's rows that reach there are transformed.
pub(super) fn faint_circles(cx: &Ctx, proposed: &[BoardPoint], max_y_mm: f64) -> Vec<BoardPoint> {
    let r = cx.geo.shape.radius_mm;
    let per_channel = crate::parallel::map_in_order(&[VALUE, SATURATION], |_: &mut (), &channel| circles_in(cx, channel, r, FAINT_VOTES_FRACTION, max_y_mm));
    let mut found: Vec<BoardPoint> = Vec::new();
    for c in per_channel.into_iter().flatten() {
        let near = |f: &BoardPoint| f.distance(c) < STACKED_PROPOSAL_SEPARATION * r;
        if c.y_mm < max_y_mm && !proposed.iter().any(near) && !found.iter().any(near) {
            found.push(c);
        }
    }
    found
}

/// Cells a circle search's crop of the grid reaches past the circles it looks for: the 5x5 blur's two, the edge
/// detector's one, and one for rounding.
const CROP_MARGIN_CELLS: i64 = 4;

/// Circles of radius `radius_mm` in one channel of the grid, of at least `votes_fraction` of their circumference in
/// votes, over the grid's rows up to one holding a circle centred at `max_y_mm` along the board (infinite: all).
fn circles_in(cx: &Ctx, channel: usize, radius_mm: f64, votes_fraction: f64, max_y_mm: f64) -> Vec<BoardPoint> {
    use opencv::core::{Mat, Size, Vec3f, Vector};
    use opencv::imgproc;
    let g = &cx.geo.grid;
    // Rounded to the nearest level by adding a half and truncating (the channel is 0..1, so never negative): `round`
    // is a library call on the baseline x86-64 target, over every cell of every frame.
    // The rows a circle centred up to `max_y_mm` reaches, with the blur's and the gradient's few cells beyond.
    let rows = if max_y_mm.is_finite() { (((max_y_mm - g.y0) / g.step + radius_mm / g.step).ceil() as i64 + CROP_MARGIN_CELLS).clamp(0, g.rows as i64) as usize } else { g.rows as usize };
    if rows == 0 {
        return Vec::new();
    }
    let cells = rows * g.cols as usize;
    let grey: Vec<u8> = cx.hsv[channel][..cells].iter().map(|v| if v.is_nan() { 0 } else { (v * 255.0 + 0.5) as u8 }).collect();
    let found = (|| -> opencv::Result<Vec<(f64, f64)>> {
        let img = Mat::new_rows_cols_with_data(rows as i32, g.cols as i32, &grey)?;
        let mut smooth = Mat::default();
        imgproc::gaussian_blur_def(&img, &mut smooth, Size::new(5, 5), 1.2)?;
        let mut circles: Vector<Vec3f> = Vector::new();
        let r_cells = radius_mm / g.step;
        imgproc::hough_circles(
            &smooth,
            &mut circles,
            imgproc::HOUGH_GRADIENT,
            1.0,
            // Two discs at one height are at least a diameter apart, but one lying
            // on another may be offset by any amount: circles are kept down to
            // half a radius apart (verification drops the same disc found twice).
            STACKED_PROPOSAL_SEPARATION * r_cells,
            HOUGH_CANNY_HIGH,
            votes_fraction * std::f64::consts::TAU * r_cells,
            (r_cells * 0.85).floor() as i32,
            (r_cells * 1.15).ceil() as i32,
        )?;
        Ok(circles.iter().map(|c| (c[0] as f64 - 0.5, c[1] as f64 - 0.5)).collect())
    })()
    .unwrap_or_default();
    found.into_iter().map(|(c, r)| g.cell_centre(c, r)).collect()
}
