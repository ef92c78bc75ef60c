//! Disputed-call review: for each close call, the picture a referee shows the players (top-down metric crops, fitted footprint, decisive boundary, gap with its uncertainty, verdict) and a JSON record of the same.
//!
//! Each close call gets one panel:
//!
//! - a header with the verdict, the gap in mm with its standard uncertainty
//!   ("clears the 3-line by 1.4 +/- 0.3 mm: 3 points"), and how many standard
//!   uncertainties the gap is;
//! - two top-down, metric, undistorted crops of the same board rectangle
//!   (sampled from the raw frame through the full camera model, like
//!   [`crate::rectify`], at [`DEFAULT_MM_PER_PX`]): the *piece view*
//!   rectified at the piece's measured top height, where the piece's outline is
//!   a true circle, and the *board view* rectified at the playing surface
//!   (`z = 0`), where the painted lines, rims and edges are true. Both crops map
//!   board `x, y` to the same pixel, so the fitted footprint, the decisive
//!   boundary and the gap are drawn at the same place in both: each view shows
//!   one of them over its own real pixels (parallax moves the other);
//! - a legend.
//!
//! Boundaries, footprints and gaps are drawn in plan (board `x, y`): the gap
//! drawn is exactly the call's margin ([`Decisive::from`] to [`Decisive::to`]).

use crate::board::{Board, Layout};
use crate::calls::{Boundary, FoulLine, FLAT_RISE_MAX_MM};
use crate::camera::{Camera, CameraPose};
use crate::detect::{DetectError, DetectorConfig};
use crate::frame::{cv, Frame, FrameError};
use crate::geom::{BoardPoint, Footprint, PixelPoint};
use crate::measure::{fit_circle, ColourView, FitConfig};
use crate::piece::PieceId;
use crate::rectify::TopViewGeometry;
use crate::score::{PieceReport, PoseInput, PoseReport, ScoreError, REVIEW_SIGMAS};
use opencv::core::{Mat, Point, Rect, Scalar, Vector, BORDER_CONSTANT, CV_32FC1, CV_8UC3};
use opencv::imgproc;
use opencv::prelude::*;
use serde::Serialize;

mod draw;
use draw::{draw_panel, stack};

/// `--all-close` reviews every call within this many mm of its boundary,
/// flagged or not: 5 mm is about what players can see by eye from the throwing
/// end, so closer calls are the ones argued about even when the camera is sure.
pub const CLOSE_MARGIN_MM: f64 = 5.0;

/// Board mm per crop pixel: 0.12 mm/px shows a 1 mm gap as 8 px, while a
/// weight and its line (~90 mm) still fit a 760 px view.
pub const DEFAULT_MM_PER_PX: f64 = 0.12;

/// Board shown around the piece and the gap in each crop (mm): enough to see
/// the line or rim run on both sides of the piece.
pub const CONTEXT_MM: f64 = 12.0;

/// A crop never exceeds this many pixels a side: a larger region (a washer
/// far from the rim that decides it) is shown at a coarser scale instead.
pub const MAX_VIEW_PX: f64 = 760.0;

/// The review-record format version.
pub const REVIEW_FORMAT: u32 = 1;

/// Errors of the review stage.
#[derive(Debug, thiserror::Error)]
pub enum ReviewError {
    /// Not transparent, so the locate error stays in the error chain (`main` maps a refusal to exit code 4).
    #[error("locating the board")]
    Locate { source: crate::locate::LocateError },
    #[error(transparent)]
    Score(ScoreError),
    #[error(transparent)]
    Detect(#[from] DetectError),
    #[error(transparent)]
    Frame(#[from] FrameError),
    #[error("no piece {id} in this frame; pieces seen: {seen}")]
    NoSuchPiece { id: PieceId, seen: String },
    #[error("mm per pixel must be positive and finite, got {mm_per_px}")]
    Scale { mm_per_px: f64 },
}

/// Which calls get a picture.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Selection {
    /// Calls flagged for review (within [`REVIEW_SIGMAS`] of the boundary, or in doubt).
    Flagged,
    /// Flagged calls and every call within `within_mm` of its boundary.
    AllClose { within_mm: f64 },
    /// One piece, whatever its margin.
    Piece(PieceId),
}

impl Selection {
    /// Whether `p` is selected.
    pub fn picks(&self, p: &PieceReport) -> bool {
        match *self {
            Selection::Flagged => p.review,
            Selection::AllClose { within_mm } => p.review || p.margin_mm.abs() < within_mm,
            Selection::Piece(id) => p.id == id,
        }
    }

    fn describe(&self) -> String {
        match self {
            Selection::Flagged => format!("calls flagged for review (within {REVIEW_SIGMAS} sigma, or in doubt)"),
            Selection::AllClose { within_mm } => format!("flagged calls and calls within {within_mm} mm of their boundary"),
            Selection::Piece(id) => format!("piece {id}"),
        }
    }
}

/// How review pictures are drawn.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ReviewConfig {
    /// Board mm per crop pixel (a large crop is coarsened to fit [`MAX_VIEW_PX`]).
    pub mm_per_px: f64,
    /// Board shown around the piece and the gap (mm).
    pub context_mm: f64,
}

impl Default for ReviewConfig {
    fn default() -> Self {
        ReviewConfig { mm_per_px: DEFAULT_MM_PER_PX, context_mm: CONTEXT_MM }
    }
}

/// The drawn form of a decisive boundary, in plan (board `x, y`, at `z = 0`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "snake_case", tag = "shape")]
pub enum BoundaryShape {
    /// A straight line or edge through `a` and `b`.
    Line { a: BoardPoint, b: BoardPoint },
    /// A hole's rim.
    Circle { centre: BoardPoint, radius_mm: f64 },
    /// Decided by height or tilt, not by position (a washer's flatness).
    NotInPlan,
}

/// Where a call's decisive boundary is and which gap decides it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Decisive {
    /// What a referee calls it: "the 3-line", "the end of the board", "hole 2's rim".
    pub name: String,
    pub shape: BoundaryShape,
    /// The point of the piece the margin is measured from (its edge, or its centre).
    pub from: BoardPoint,
    /// The nearest point of the boundary: `|to - from|` is `|margin|`.
    pub to: BoardPoint,
    /// Whether the margin is measured from the piece's centre (rims, falling off) rather than its edge.
    pub from_centre: bool,
}

/// Lines and edges are drawn this far beyond any crop (mm): long enough to cross it.
const LINE_REACH_MM: f64 = 10_000.0;

/// The decisive boundary of a reported call and the gap that decides it.
pub fn decisive(board: &Board, p: &PieceReport, radius_mm: f64, foul: FoulLine) -> Decisive {
    let c = BoardPoint::new(p.x_mm, p.y_mm);
    let r = radius_mm;
    let half = board.surface.half_width();
    let across = |y: f64| BoundaryShape::Line { a: BoardPoint::new(-half, y), b: BoardPoint::new(half, y) };
    let along = |x: f64| BoundaryShape::Line { a: BoardPoint::new(x, -LINE_REACH_MM), b: BoardPoint::new(x, LINE_REACH_MM) };
    let side = if c.x_mm < 0.0 { -1.0 } else { 1.0 };
    let line_at = |name: &str, y: f64| Decisive {
        name: name.into(),
        shape: across(y),
        from: BoardPoint::new(c.x_mm, c.y_mm + r),
        to: BoardPoint::new(c.x_mm, y),
        from_centre: false,
    };
    match (p.boundary, &board.layout) {
        (Boundary::TreyLine, Layout::Shuffleboard(s)) => line_at("the 3-line", s.lines.trey_line_mm),
        (Boundary::DeuceLine, Layout::Shuffleboard(s)) => line_at("the 2-line", s.lines.deuce_line_mm),
        (Boundary::FoulLine, Layout::Shuffleboard(s)) => match foul {
            FoulLine::Long => line_at("the foul line", s.lines.long_foul_line_mm),
            FoulLine::Short => line_at("the foul line", s.lines.short_foul_line_mm),
        },
        (Boundary::GateFront, Layout::Sjoelbak(s)) => line_at("the gate", s.gate_front_mm),
        (Boundary::GateBack, Layout::Sjoelbak(s)) => line_at("the gate bar's back", s.gate_back_mm),
        (Boundary::EndOverhang, _) => Decisive {
            name: "the end of the board".into(),
            shape: across(0.0),
            from: BoardPoint::new(c.x_mm, c.y_mm - r),
            to: BoardPoint::new(c.x_mm, 0.0),
            from_centre: false,
        },
        (Boundary::SideOverhang, _) => Decisive {
            name: "the side of the board".into(),
            shape: along(side * half),
            from: BoardPoint::new(c.x_mm + side * r, c.y_mm),
            to: BoardPoint::new(side * half, c.y_mm),
            from_centre: false,
        },
        (Boundary::Partition { partition }, Layout::Sjoelbak(s)) => {
            let x = s.partitions().get(partition).copied().unwrap_or(0.0);
            let side = if c.x_mm < x { -1.0 } else { 1.0 };
            let face = x + side * s.partition_width_mm / 2.0;
            // A flat disc rests on a partition by its centre, a tilted one by its edge (calls::sjoel_call).
            let flat = crate::calls::disc_lies_flat(p.tilt_deg);
            Decisive {
                name: format!("partition {}", partition + 1),
                shape: along(face),
                from: BoardPoint::new(if flat { c.x_mm } else { c.x_mm - side * r }, c.y_mm),
                to: BoardPoint::new(face, c.y_mm),
                from_centre: flat,
            }
        }
        (Boundary::HoleRim { hole }, Layout::Washer(w)) if hole < w.holes.len() => {
            let h = &w.holes[hole];
            let hc = h.centre();
            let d = c.distance(hc);
            // A centre exactly over the hole's centre: any radius is the nearest.
            let (ux, uy) = if d > 1e-9 { ((c.x_mm - hc.x_mm) / d, (c.y_mm - hc.y_mm) / d) } else { (1.0, 0.0) };
            Decisive {
                name: format!("hole {}'s rim", hole + 1),
                shape: BoundaryShape::Circle { centre: hc, radius_mm: h.radius() },
                from: c,
                to: BoardPoint::new(hc.x_mm + h.radius() * ux, hc.y_mm + h.radius() * uy),
                from_centre: true,
            }
        }
        (Boundary::Flatness { hole }, _) => Decisive {
            name: format!("lying flat in hole {}", hole + 1),
            shape: BoundaryShape::NotInPlan,
            from: c,
            to: c,
            from_centre: true,
        },
        // The surface edge the centre is nearest to (or furthest past), as calls.rs decides it.
        _ => {
            let len = board.surface.length_mm;
            let edges = [
                (-c.y_mm, "the end of the board", across(0.0), BoardPoint::new(c.x_mm, 0.0)),
                (c.y_mm - len, "the thrower's end", across(len), BoardPoint::new(c.x_mm, len)),
                (c.x_mm.abs() - half, "the side of the board", along(side * half), BoardPoint::new(side * half, c.y_mm)),
            ];
            let (_, name, shape, to) = edges.into_iter().max_by(|a, b| a.0.total_cmp(&b.0)).expect("three edges");
            Decisive { name: name.into(), shape, from: c, to, from_centre: true }
        }
    }
}

/// The referee's words for the gap: "clears the 3-line by 1.4 +/- 0.3 mm".
pub fn gap_text(p: &PieceReport, d: &Decisive) -> String {
    let (g, s) = (p.margin_mm.abs(), p.sigma_mm);
    let by = format!("{g:.1} +/- {s:.1} mm");
    let crossed = p.margin_mm > 0.0;
    let n = &d.name;
    match p.boundary {
        Boundary::TreyLine | Boundary::DeuceLine | Boundary::FoulLine => {
            if crossed {
                format!("clears {n} by {by}")
            } else {
                format!("on {n}: {by} short of clearing it")
            }
        }
        Boundary::EndOverhang | Boundary::SideOverhang => {
            if crossed {
                format!("hangs over {n} by {by}")
            } else {
                format!("{by} short of hanging over {n}")
            }
        }
        Boundary::SurfaceEdge => {
            if crossed {
                format!("centre is {by} past {n}")
            } else {
                format!("centre is {by} inside {n}")
            }
        }
        Boundary::HoleRim { .. } => {
            if crossed {
                format!("centre is {by} inside {n}")
            } else {
                format!("centre is {by} outside {n}")
            }
        }
        Boundary::Flatness { .. } => {
            let rise = FLAT_RISE_MAX_MM - p.margin_mm;
            if crossed {
                format!("lies flat: rises {rise:.1} mm, {by} under the {FLAT_RISE_MAX_MM} mm rise of a leaner")
            } else {
                format!("rises {rise:.1} mm: tilted by {by} over the {FLAT_RISE_MAX_MM} mm limit")
            }
        }
        Boundary::GateFront | Boundary::GateBack => {
            if crossed {
                format!("entirely past {n} by {by}")
            } else {
                format!("{by} short of clearing {n}")
            }
        }
        Boundary::Partition { .. } => {
            if crossed {
                format!("clear of {n} by {by}")
            } else {
                format!("on {n}: {by} short of clearing it")
            }
        }
    }
}

/// The call in a referee's words: "3 points", "hanger", "in hole 2: 3 points".
pub fn verdict_text(p: &PieceReport) -> String {
    let pts = |v: u32| if v == 1 { "1 point".to_string() } else { format!("{v} points") };
    let place = p.place.map(|k| k + 1).unwrap_or(0);
    match (p.call.as_str(), p.value) {
        ("zone1" | "zone2" | "zone3", Some(v)) => pts(v),
        ("hanger", _) => "hanger".into(),
        ("corner_hanger", _) => "corner hanger".into(),
        ("short", _) => "short: no points".into(),
        ("off", _) => "off: no points".into(),
        ("in", Some(v)) => format!("in hole {place}: {}", pts(v)),
        ("leaner", Some(v)) => format!("leaner in hole {place} ({} if in)", pts(v)),
        ("on_board", _) => "on the board".into(),
        ("compartment", Some(v)) => format!("compartment {place}: {}", pts(v)),
        ("none", _) => "does not count".into(),
        (other, Some(v)) => format!("{other}: {}", pts(v)),
        (other, None) => other.replace('_', " "),
    }
}

/// How sure the camera is, in words.
pub fn confidence_text(p: &PieceReport) -> String {
    let k = p.margin_mm.abs() / p.sigma_mm.max(f64::MIN_POSITIVE);
    match &p.doubt {
        Some(d) => format!("IN DOUBT ({d}): the referee decides"),
        None if k >= REVIEW_SIGMAS => format!("{k:.1} sigma from the boundary: the call stands"),
        None => format!("only {k:.1} sigma from the boundary: too close for the camera, the referee decides"),
    }
}

/// One reviewed call, as recorded in the JSON beside the picture.
#[derive(Debug, Clone, Serialize)]
pub struct ReviewItem {
    pub piece: PieceReport,
    /// The height the piece view is rectified at: the piece's measured top (mm).
    pub top_z_mm: f64,
    pub decisive: Decisive,
    /// e.g. "clears the 3-line by 1.4 +/- 0.3 mm".
    pub gap: String,
    /// e.g. "3 points".
    pub verdict: String,
    /// The margin in standard uncertainties.
    pub sigmas: f64,
    pub confidence: String,
    /// The crops' board rectangle and scale (both views share it).
    pub view: TopViewGeometry,
    /// Edge points of the re-measured outline drawn in the piece view.
    pub edge_points: Vec<BoardPoint>,
    /// Rows of the picture this panel occupies, `[first, end)`.
    pub picture_rows: [u32; 2],
}

/// The JSON record of a review.
#[derive(Debug, Clone, Serialize)]
pub struct ReviewRecord {
    pub format: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub image: Option<String>,
    pub board: String,
    pub pose: PoseReport,
    pub selection: String,
    pub items: Vec<ReviewItem>,
    pub config: ReviewConfig,
}

/// A review: its record and the picture (`None` when no call was selected).
pub struct Review {
    pub record: ReviewRecord,
    pub picture: Option<Mat>,
}

/// Scores `frame` as `boardcall score` does and draws a review panel for every selected call.
#[allow(clippy::too_many_arguments)]
pub fn review_frame(
    frame: &Frame,
    board: &Board,
    camera: &Camera,
    pose: PoseInput,
    detector: DetectorConfig,
    foul: FoulLine,
    selection: Selection,
    cfg: &ReviewConfig,
) -> Result<Review, ReviewError> {
    if !(cfg.mm_per_px.is_finite() && cfg.mm_per_px > 0.0) {
        return Err(ReviewError::Scale { mm_per_px: cfg.mm_per_px });
    }
    let (report, camera_pose) = crate::score::score_frame(frame, board, camera, pose, detector.clone(), foul).map_err(|e| match e {
        ScoreError::Locate(source) => ReviewError::Locate { source },
        other => ReviewError::Score(other),
    })?;
    review_report(frame, board, camera, &camera_pose, &report, detector, foul, selection, cfg)
}

/// Draws a review panel for every selected call of a frame already scored (`report`,
/// read from `frame` with `camera_pose`): what [`review_frame`] does after scoring, for a
/// caller that has the report (a match's settled state).
#[allow(clippy::too_many_arguments)]
pub fn review_report(
    frame: &Frame,
    board: &Board,
    camera: &Camera,
    camera_pose: &CameraPose,
    report: &crate::score::FrameReport,
    detector: DetectorConfig,
    foul: FoulLine,
    selection: Selection,
    cfg: &ReviewConfig,
) -> Result<Review, ReviewError> {
    if !(cfg.mm_per_px.is_finite() && cfg.mm_per_px > 0.0) {
        return Err(ReviewError::Scale { mm_per_px: cfg.mm_per_px });
    }
    let camera_pose = *camera_pose;
    if let Selection::Piece(id) = selection {
        if !report.pieces.iter().any(|p| p.id == id) {
            let seen: Vec<String> = report.pieces.iter().map(|p| p.id.to_string()).collect();
            return Err(ReviewError::NoSuchPiece { id, seen: if seen.is_empty() { "none".into() } else { seen.join(", ") } });
        }
    }
    let bytes = cv("frame bytes", frame.image().data_bytes())?;
    let view = ColourView::new(frame.width() as usize, frame.height() as usize, bytes).map_err(DetectError::Measure)?;
    // The report has each piece's footprint, not its height: the detection
    // stage's own measurement (same frame, same pose, same model corrections,
    // deterministic) gives the top height.
    let detections = crate::score::detect_pieces(&view, board, camera, &camera_pose, detector.clone()).map_err(ReviewError::Score)?;
    let (radius, default_top) = piece_size(board);
    let mut items = Vec::new();
    let mut panels = Vec::new();
    for p in report.pieces.iter().filter(|p| selection.picks(p)) {
        let top_z = detections
            .pieces
            .iter()
            .find(|d| (d.footprint.centre.x_mm - p.x_mm).abs() < 1e-6 && (d.footprint.centre.y_mm - p.y_mm).abs() < 1e-6)
            .map_or(default_top, |d| d.top_z_mm);
        let dec = decisive(board, p, radius, foul);
        let centre = BoardPoint::new(p.x_mm, p.y_mm);
        // The outline's edge points, re-measured at the top height with the radius held (as the detector does).
        let edges = fit_circle(&view, camera, &camera_pose, Footprint::new(centre, radius), top_z, true, &FitConfig { passes: 1, ..detector.fit })
            .map(|f| f.edges.iter().map(|e| e.at).collect())
            .unwrap_or_default();
        let geometry = crop_geometry(Footprint::new(centre, radius), &dec, top_z, cfg);
        let item = ReviewItem {
            piece: p.clone(),
            top_z_mm: top_z,
            gap: gap_text(p, &dec),
            verdict: verdict_text(p),
            sigmas: p.margin_mm.abs() / p.sigma_mm.max(f64::MIN_POSITIVE),
            confidence: confidence_text(p),
            decisive: dec,
            view: geometry,
            edge_points: edges,
            picture_rows: [0, 0],
        };
        panels.push(draw_panel(frame, camera, &camera_pose, board, &item, radius)?);
        items.push(item);
    }
    let picture = if panels.is_empty() { None } else { Some(stack(&panels, &mut items)?) };
    let record = ReviewRecord {
        format: REVIEW_FORMAT,
        image: report.image.clone(),
        board: report.board.clone(),
        pose: report.pose.clone(),
        selection: selection.describe(),
        items,
        config: *cfg,
    };
    Ok(Review { record, picture })
}

/// The board's piece radius and the height of its top face on the surface.
fn piece_size(board: &Board) -> (f64, f64) {
    let p = board.piece();
    (p.radius_mm, p.thickness_mm)
}

/// The board rectangle a panel's crops show: the piece, the gap, and context around them.
pub fn crop_geometry(fp: Footprint, d: &Decisive, height_mm: f64, cfg: &ReviewConfig) -> TopViewGeometry {
    let c = fp.centre;
    let r = fp.radius_mm;
    let (mut x0, mut x1, mut y0, mut y1) = (c.x_mm - r, c.x_mm + r, c.y_mm - r, c.y_mm + r);
    for q in [d.from, d.to] {
        (x0, x1, y0, y1) = (x0.min(q.x_mm), x1.max(q.x_mm), y0.min(q.y_mm), y1.max(q.y_mm));
    }
    let m = cfg.context_mm;
    let (x0, x1, y0, y1) = (x0 - m, x1 + m, y0 - m, y1 + m);
    let extent = (x1 - x0).max(y1 - y0);
    let mm_per_px = cfg.mm_per_px.max(extent / MAX_VIEW_PX);
    TopViewGeometry {
        width_px: ((x1 - x0) / mm_per_px).ceil() as u32 + 1,
        height_px: ((y1 - y0) / mm_per_px).ceil() as u32 + 1,
        mm_per_px,
        x_min_mm: x0,
        y_max_mm: y1,
        height_mm,
    }
}

/// The detail crop: the gap and this much board around it along the boundary (mm).
pub const DETAIL_WIDTH_MM: f64 = 12.0;

/// The detail crop's rectangle: [`DETAIL_WIDTH_MM`] wide (or the gap plus 8 mm), 0.6 as tall,
/// centred on the gap, as many pixels wide as the main view.
fn detail_geometry(item: &ReviewItem) -> TopViewGeometry {
    let (a, b) = (item.decisive.from, item.decisive.to);
    let mid = BoardPoint::new((a.x_mm + b.x_mm) / 2.0, (a.y_mm + b.y_mm) / 2.0);
    let w_mm = DETAIL_WIDTH_MM.max(a.distance(b) / 0.6 + 8.0);
    let h_mm = 0.6 * w_mm;
    let mm_per_px = w_mm / item.view.width_px as f64;
    TopViewGeometry {
        width_px: (w_mm / mm_per_px).round() as u32,
        height_px: (h_mm / mm_per_px).round() as u32,
        mm_per_px,
        x_min_mm: mid.x_mm - w_mm / 2.0,
        y_max_mm: mid.y_mm + h_mm / 2.0,
        height_mm: item.top_z_mm,
    }
}

/// Samples the raw frame for a top-down crop at `g.height_mm` (bilinear; black where unseen).
pub fn rectify_crop(frame: &Frame, camera: &Camera, pose: &CameraPose, g: &TopViewGeometry) -> Result<Mat, FrameError> {
    let (w, h) = (g.width_px as i32, g.height_px as i32);
    let mut map_x = cv("map", Mat::new_rows_cols_with_default(h, w, CV_32FC1, Scalar::all(-1.0)))?;
    let mut map_y = cv("map", Mat::new_rows_cols_with_default(h, w, CV_32FC1, Scalar::all(-1.0)))?;
    {
        let mx = cv("map", map_x.data_typed_mut::<f32>())?;
        let my = cv("map", map_y.data_typed_mut::<f32>())?;
        for r in 0..h as usize {
            for c in 0..w as usize {
                let b = g.board_point(PixelPoint::new(c as f64, r as f64));
                if let Some(px) = pose.project(camera, b.at_height(g.height_mm)) {
                    mx[r * w as usize + c] = px.u as f32;
                    my[r * w as usize + c] = px.v as f32;
                }
            }
        }
    }
    let mut out = Mat::default();
    cv("remap", imgproc::remap(frame.image(), &mut out, &map_x, &map_y, imgproc::INTER_LINEAR, BORDER_CONSTANT, Scalar::all(0.0)))?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::calls;
    use crate::piece::PieceKind;
    use proptest::prelude::*;

    /// Gap ends are sums, differences and square roots of mm values of up to ~2000 mm:
    /// 1e-6 mm absorbs float rounding only.
    const TOL: f64 = 1e-6;

    fn report(board: &Board, fp: Footprint, foul: FoulLine) -> PieceReport {
        let (call, value, boundary, margin) = match &board.layout {
            Layout::Shuffleboard(s) => {
                let m = calls::shuffle_call(board, s, fp, foul);
                (m.call.name().to_string(), None, m.boundary, m.margin_mm)
            }
            Layout::Sjoelbak(s) => {
                let m = calls::sjoel_call(s, fp, 0.0);
                ("compartment".to_string(), None, m.boundary, m.margin_mm)
            }
            Layout::Washer(w) => {
                let m = calls::washer_call(board, w, calls::WasherPose::flat(fp.centre.x_mm, fp.centre.y_mm, 0.0, w.washer_thickness_mm));
                ("on_board".to_string(), None, m.boundary, m.margin_mm)
            }
        };
        PieceReport {
            id: PieceId::of_team(crate::piece::Team::Red, 1),
            kind: PieceKind::Weight,
            team: Some(crate::piece::Team::Red),
            x_mm: fp.centre.x_mm,
            y_mm: fp.centre.y_mm,
            top_z_mm: board.piece().thickness_mm,
            tilt_deg: 0.0,
            measured_by: Default::default(),
            call,
            value,
            place: None,
            boundary,
            margin_mm: margin,
            sigma_mm: 0.2,
            review: false,
            doubt: None,
        }
    }

    fn check_gap(board: &Board, x: f64, y: f64, foul: FoulLine) -> Result<(), TestCaseError> {
        let (r, _) = piece_size(board);
        let p = report(board, Footprint::new(BoardPoint::new(x, y), r), foul);
        let d = decisive(board, &p, r, foul);
        // The drawn gap is the call's margin (flatness is decided by tilt: no gap in plan).
        if d.shape == BoundaryShape::NotInPlan {
            prop_assert!(matches!(p.boundary, Boundary::Flatness { .. }) && d.from == d.to, "{p:?} {d:?}");
        } else {
            prop_assert!((d.from.distance(d.to) - p.margin_mm.abs()).abs() < TOL, "{p:?} {d:?}");
        }
        // The gap ends on the drawn boundary.
        match d.shape {
            BoundaryShape::Line { a, b } => {
                let cross = (b.x_mm - a.x_mm) * (d.to.y_mm - a.y_mm) - (b.y_mm - a.y_mm) * (d.to.x_mm - a.x_mm);
                prop_assert!(cross.abs() / a.distance(b) < TOL, "{d:?}");
            }
            BoundaryShape::Circle { centre, radius_mm } => prop_assert!((d.to.distance(centre) - radius_mm).abs() < TOL),
            BoundaryShape::NotInPlan => {}
        }
        Ok(())
    }

    proptest! {
        /// Every shuffleboard call's drawn gap has the length of its margin and ends on its boundary.
        #[test]
        fn shuffleboard_gap_is_the_margin(x in -300.0f64..300.0, y in -40.0f64..2000.0, short in any::<bool>()) {
            let b = Board::load("shuffleboard-22ft").unwrap();
            check_gap(&b, x, y, if short { FoulLine::Short } else { FoulLine::Long })?;
        }

        /// The same on a sjoelbak (gate and partitions) and a washer board (rims, edges).
        #[test]
        fn sjoelbak_and_washer_gaps_are_the_margin(x in -250.0f64..250.0, y in -20.0f64..1000.0) {
            for name in ["sjoelbak", "holeyboard", "yocu-9"] {
                let b = Board::load(name).unwrap();
                check_gap(&b, x, y, FoulLine::Long)?;
            }
        }
    }

    #[test]
    fn words_follow_the_margin_sign() {
        let b = Board::load("shuffleboard-22ft").unwrap();
        let s = b.shuffleboard().unwrap().clone();
        let r = s.weight_diameter_mm / 2.0;
        // Clear of the 3-line by 1.4 mm.
        let mut p = report(&b, Footprint::new(BoardPoint::new(0.0, s.lines.trey_line_mm - 1.4 - r), r), FoulLine::Long);
        p.value = Some(3);
        p.sigma_mm = 0.3;
        let d = decisive(&b, &p, r, FoulLine::Long);
        assert_eq!(format!("{}: {}", gap_text(&p, &d), verdict_text(&p)), "clears the 3-line by 1.4 +/- 0.3 mm: 3 points");
        assert!(confidence_text(&p).contains("4.7 sigma"), "{}", confidence_text(&p));
        // On it by 0.5 mm: zone 2, and too close to be sure at 0.3 mm.
        let mut p = report(&b, Footprint::new(BoardPoint::new(0.0, s.lines.trey_line_mm + 0.5 - r), r), FoulLine::Long);
        p.value = Some(2);
        p.sigma_mm = 0.3;
        let d = decisive(&b, &p, r, FoulLine::Long);
        assert_eq!(gap_text(&p, &d), "on the 3-line: 0.5 +/- 0.3 mm short of clearing it");
        assert_eq!(verdict_text(&p), "2 points");
        assert!(confidence_text(&p).starts_with("only 1.7 sigma"), "{}", confidence_text(&p));
    }

    #[test]
    fn selection_picks_flagged_close_or_named_pieces() {
        let b = Board::load("shuffleboard-22ft").unwrap();
        let r = 29.37;
        let near = report(&b, Footprint::new(BoardPoint::new(0.0, 152.4 - 2.0 - r), r), FoulLine::Long);
        let far = report(&b, Footprint::new(BoardPoint::new(0.0, 100.0), r), FoulLine::Long);
        assert!(!Selection::Flagged.picks(&near));
        assert!(Selection::AllClose { within_mm: CLOSE_MARGIN_MM }.picks(&near));
        assert!(!Selection::AllClose { within_mm: CLOSE_MARGIN_MM }.picks(&far));
        let flagged = PieceReport { review: true, ..far.clone() };
        assert!(Selection::Flagged.picks(&flagged));
        assert!(Selection::Piece(far.id).picks(&far));
    }

    /// A close line call from a rendered fixture (truth pose): one panel, the
    /// piece view shows the weight's own colour inside the fitted footprint and
    /// the board's wood outside it, and the gap recorded is the report's margin.
    #[test]
    fn fixture_close_call_gets_a_panel_over_the_real_piece() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/scenes/07-shuffleboard-22ft-line_edge");
        let fx = crate::fixture::Fixture::load(&dir).unwrap();
        let board = Board::load(&fx.truth.board).unwrap();
        let frame = Frame::load(&fx.image_path()).unwrap();
        let pose = fx.truth.camera.pose();
        let review = review_frame(
            &frame,
            &board,
            &fx.camera,
            PoseInput::Given(crate::locate::GivenPose::new(pose)),
            DetectorConfig::default(),
            FoulLine::Long,
            Selection::AllClose { within_mm: CLOSE_MARGIN_MM },
            &ReviewConfig::default(),
        )
        .unwrap();
        assert!(!review.record.items.is_empty(), "fixture 07 has line calls within 5 mm");
        let pic = review.picture.expect("a picture for a selected call");
        let last = review.record.items.last().unwrap();
        assert_eq!(last.picture_rows[1] as i32, pic.rows());
        for item in &review.record.items {
            assert!(item.piece.margin_mm.abs() < CLOSE_MARGIN_MM || item.piece.review);
            assert!((item.decisive.from.distance(item.decisive.to) - item.piece.margin_mm.abs()).abs() < TOL);
            assert!(item.edge_points.len() >= crate::measure::MIN_EDGE_POINTS, "{}", item.edge_points.len());
            // Rectified at the cap's height, the cap fills the fitted circle: its
            // centre has the team's hue, and a point 8 mm outside it does not.
            let g = TopViewGeometry { height_mm: item.top_z_mm, ..item.view };
            let crop = rectify_crop(&frame, &fx.camera, &pose, &g).unwrap();
            let c = BoardPoint::new(item.piece.x_mm, item.piece.y_mm);
            let hue_at = |b: BoardPoint| {
                let px = g.pixel(b);
                let v = crop.at_2d::<opencv::core::Vec3b>(px.v.round() as i32, px.u.round() as i32).unwrap();
                crate::detect::bgr_to_hsv([v[0] as f32, v[1] as f32, v[2] as f32])
            };
            let team_hue = match item.piece.team { Some(crate::piece::Team::Red) => 0.0, _ => 225.0 };
            let hue_off = |h: [f32; 3]| { let d = (h[0] - team_hue).rem_euclid(360.0); d.min(360.0 - d) };
            // Team hue windows of the detector (15 and 35 degrees) with room for the JPEG's chroma noise.
            assert!(hue_off(hue_at(c)) < 40.0, "centre {:?}", hue_at(c));
            let outside = BoardPoint::new(c.x_mm + 29.37 + 8.0, c.y_mm);
            assert!(hue_off(hue_at(outside)) > 10.0 || hue_at(outside)[1] < 0.35, "outside {:?}", hue_at(outside));
        }
    }
}
