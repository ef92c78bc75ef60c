//! The review's pictures: each close call's panel (the top-down crop with the fitted footprint, the decisive boundary and the gap drawn over it, a detail, the verdict and its confidence in words) and the panels stacked into one image.

use super::*;

// Colours (BGR) chosen to survive a washed-out projector: saturated yellow,
// cyan and magenta, and white, each drawn over a black outline.
const YELLOW: (f64, f64, f64) = (0.0, 235.0, 255.0);
const CYAN: (f64, f64, f64) = (255.0, 235.0, 0.0);
const MAGENTA: (f64, f64, f64) = (255.0, 60.0, 255.0);
const WHITE: (f64, f64, f64) = (255.0, 255.0, 255.0);
const AMBER: (f64, f64, f64) = (0.0, 170.0, 255.0);
const GREEN: (f64, f64, f64) = (90.0, 235.0, 90.0);
const BAND: (f64, f64, f64) = (28.0, 22.0, 18.0);

fn bgr(c: (f64, f64, f64)) -> Scalar {
    Scalar::new(c.0, c.1, c.2, 0.0)
}

const FONT: i32 = imgproc::FONT_HERSHEY_DUPLEX;
/// Sub-pixel drawing: coordinates carry this many fractional bits.
const SHIFT: i32 = 4;

fn fixed(p: PixelPoint) -> Point {
    let k = f64::from(1 << SHIFT);
    Point::new((p.u * k).round() as i32, (p.v * k).round() as i32)
}

/// Text with a black outline, top-left anchored at `at` (the text's cap line); returns its width.
fn text(img: &mut Mat, s: &str, at: Point, scale: f64, colour: (f64, f64, f64), thick: i32) -> Result<i32, FrameError> {
    let mut base = 0;
    let size = cv("text", imgproc::get_text_size(s, FONT, scale, thick, &mut base))?;
    let org = Point::new(at.x, at.y + size.height);
    cv("text", imgproc::put_text(img, s, org, FONT, scale, bgr((0.0, 0.0, 0.0)), thick + 5, imgproc::LINE_AA, false))?;
    cv("text", imgproc::put_text(img, s, org, FONT, scale, bgr(colour), thick, imgproc::LINE_AA, false))?;
    Ok(size.width)
}

fn seg(img: &mut Mat, a: PixelPoint, b: PixelPoint, colour: (f64, f64, f64), thick: i32) -> Result<(), FrameError> {
    cv("draw", imgproc::line(img, fixed(a), fixed(b), bgr((0.0, 0.0, 0.0)), thick + 3, imgproc::LINE_AA, SHIFT))?;
    cv("draw", imgproc::line(img, fixed(a), fixed(b), bgr(colour), thick, imgproc::LINE_AA, SHIFT))
}

/// A circle as a polyline of ~3 px chords (OpenCV's own circle shows facets at the detail's radii of thousands of px).
fn ring(img: &mut Mat, c: PixelPoint, r_px: f64, colour: (f64, f64, f64), thick: i32) -> Result<(), FrameError> {
    let n = ((std::f64::consts::TAU * r_px / 3.0).ceil() as usize).clamp(72, 20_000);
    let pts: Vector<Point> = (0..n)
        .map(|k| {
            let t = std::f64::consts::TAU * k as f64 / n as f64;
            fixed(PixelPoint::new(c.u + r_px * t.cos(), c.v + r_px * t.sin()))
        })
        .collect();
    let mut polys: Vector<Vector<Point>> = Vector::new();
    polys.push(pts);
    cv("draw", imgproc::polylines(img, &polys, true, bgr((0.0, 0.0, 0.0)), thick + 3, imgproc::LINE_AA, SHIFT))?;
    cv("draw", imgproc::polylines(img, &polys, true, bgr(colour), thick, imgproc::LINE_AA, SHIFT))
}

fn dot(img: &mut Mat, c: PixelPoint, r_px: i32, colour: (f64, f64, f64)) -> Result<(), FrameError> {
    let k = 1 << SHIFT;
    cv("draw", imgproc::circle(img, fixed(c), (r_px + 1) * k, bgr((0.0, 0.0, 0.0)), -1, imgproc::LINE_AA, SHIFT))?;
    cv("draw", imgproc::circle(img, fixed(c), r_px * k, bgr(colour), -1, imgproc::LINE_AA, SHIFT))
}

/// Draws the boundary, footprint, edge points and the gap on one crop.
fn draw_overlays(img: &mut Mat, item: &ReviewItem, g: &TopViewGeometry, radius: f64, edges: bool, label: bool) -> Result<(), FrameError> {
    let px = |b: BoardPoint| g.pixel(b);
    match item.decisive.shape {
        BoundaryShape::Line { a, b } => seg(img, px(a), px(b), CYAN, 3)?,
        BoundaryShape::Circle { centre, radius_mm } => ring(img, px(centre), radius_mm / g.mm_per_px, CYAN, 3)?,
        BoundaryShape::NotInPlan => {}
    }
    let centre = BoardPoint::new(item.piece.x_mm, item.piece.y_mm);
    ring(img, px(centre), radius / g.mm_per_px, YELLOW, 2)?;
    dot(img, px(centre), 3, YELLOW)?;
    if edges {
        for e in &item.edge_points {
            dot(img, px(*e), 3, MAGENTA)?;
        }
    }
    let (from, to) = (px(item.decisive.from), px(item.decisive.to));
    if from.distance(to) > 0.5 {
        // The gap: a white bar between the piece's deciding point and the boundary, with end ticks.
        let (dx, dy) = ((to.u - from.u) / from.distance(to), (to.v - from.v) / from.distance(to));
        let tick = 14.0;
        for q in [from, to] {
            seg(img, PixelPoint::new(q.u - dy * tick, q.v + dx * tick), PixelPoint::new(q.u + dy * tick, q.v - dx * tick), WHITE, 2)?;
        }
        seg(img, from, to, WHITE, 2)?;
    }
    if label {
        // The gap's size beside it, on the piece's side of the boundary so the line stays clear.
        let c = px(BoardPoint::new(item.piece.x_mm, item.piece.y_mm));
        let at = if item.decisive.from_centre {
            // Measured from the centre: beside the gap, across it, clear of the centre dot.
            let d = from.distance(to).max(1e-9);
            let (mut pu, mut pv) = (-(to.v - from.v) / d, (to.u - from.u) / d);
            if d < 1e-6 {
                (pu, pv) = (1.0, 0.0);
            }
            if pu < 0.0 {
                (pu, pv) = (-pu, -pv);
            }
            PixelPoint::new(from.u + pu * 40.0 + 10.0, from.v + pv * 40.0 + 10.0)
        } else {
            let d = c.distance(to).max(1e-9);
            let inward = ((c.u - to.u) / d, (c.v - to.v) / d);
            // A gap across the view (a side or partition): the label ends before the piece's edge.
            let shift = if inward.0 < -0.5 { -LABEL_WIDTH_PX } else { 24.0 };
            PixelPoint::new(to.u + inward.0 * 48.0 + shift, to.v + inward.1 * 48.0 - 14.0)
        };
        let label = format!("gap {:.1} mm", item.piece.margin_mm.abs());
        let at = Point::new((at.u as i32).clamp(4, (g.width_px as i32 - 220).max(4)), (at.v as i32).clamp(70, (g.height_px as i32 - 80).max(70)));
        text(img, &label, at, 0.9, WHITE, 2)?;
    }
    Ok(())
}

/// Room left for the gap's label ("gap 12.3 mm" at scale 0.9).
const LABEL_WIDTH_PX: f64 = 200.0;

/// A scale bar of `mm` at the crop's bottom right.
fn scale_bar(img: &mut Mat, g: &TopViewGeometry, mm: f64) -> Result<(), FrameError> {
    let len = mm / g.mm_per_px;
    let (x1, y) = (g.width_px as f64 - 20.0, g.height_px as f64 - 22.0);
    let a = PixelPoint::new(x1 - len, y);
    seg(img, a, PixelPoint::new(x1, y), WHITE, 3)?;
    text(img, &format!("{mm} mm"), Point::new((x1 - len) as i32, (y - 40.0) as i32), 0.7, WHITE, 2)?;
    Ok(())
}

fn band(width: i32, height: i32) -> Result<Mat, FrameError> {
    cv("band", Mat::new_rows_cols_with_default(height, width, CV_8UC3, bgr(BAND)))
}

fn paste(dst: &mut Mat, src: &Mat, x: i32, y: i32) -> Result<(), FrameError> {
    let mut roi = cv("paste", dst.roi_mut(Rect::new(x, y, src.cols(), src.rows())))?;
    cv("paste", src.copy_to(&mut roi))
}

/// One panel: header, the two views side by side, legend.
pub(super) fn draw_panel(frame: &Frame, camera: &Camera, pose: &CameraPose, board: &Board, item: &ReviewItem, radius: f64) -> Result<Mat, FrameError> {
    let g = item.view;
    let piece_view_g = TopViewGeometry { height_mm: item.top_z_mm, ..g };
    let board_view_g = TopViewGeometry { height_mm: 0.0, ..g };
    let mut piece_view = rectify_crop(frame, camera, pose, &piece_view_g)?;
    let mut board_view = rectify_crop(frame, camera, pose, &board_view_g)?;
    draw_overlays(&mut piece_view, item, &g, radius, true, true)?;
    draw_overlays(&mut board_view, item, &g, radius, false, true)?;
    // The detail: the gap magnified, in both views, under them.
    let dg = detail_geometry(item);
    let zoom = g.mm_per_px / dg.mm_per_px;
    let mut piece_detail = rectify_crop(frame, camera, pose, &TopViewGeometry { height_mm: item.top_z_mm, ..dg })?;
    let mut board_detail = rectify_crop(frame, camera, pose, &TopViewGeometry { height_mm: 0.0, ..dg })?;
    draw_overlays(&mut piece_detail, item, &dg, radius, true, false)?;
    draw_overlays(&mut board_detail, item, &dg, radius, false, false)?;
    for d in [&mut piece_detail, &mut board_detail] {
        text(d, &format!("DETAIL x{zoom:.0}: the gap"), Point::new(12, 12), 0.8, WHITE, 2)?;
        scale_bar(d, &dg, 2.0)?;
    }
    let thing = item.piece.kind.name();
    let board_true = match item.decisive.shape {
        BoundaryShape::Line { .. } => "the board's lines and edges are true here",
        BoundaryShape::Circle { .. } => "the hole's rim is true here",
        BoundaryShape::NotInPlan => "the board's surface is true here",
    };
    text(&mut piece_view, &format!("PIECE VIEW at z = {:.1} mm", item.top_z_mm), Point::new(12, 12), 0.8, WHITE, 2)?;
    text(&mut piece_view, &format!("the {thing}'s top is a true circle here"), Point::new(12, 46), 0.65, YELLOW, 2)?;
    text(&mut board_view, "BOARD VIEW at z = 0 mm", Point::new(12, 12), 0.8, WHITE, 2)?;
    text(&mut board_view, board_true, Point::new(12, 46), 0.65, CYAN, 2)?;
    scale_bar(&mut piece_view, &g, 10.0)?;
    scale_bar(&mut board_view, &g, 10.0)?;

    let pad = 16;
    let (vw, vh) = (g.width_px as i32, g.height_px as i32);
    let width = (2 * vw + 3 * pad).max(1280);
    let header_h = 190;
    let legend_h = 200;
    let dh = piece_detail.rows();
    let mut panel = band(width, header_h + vh + pad + dh + legend_h + 2 * pad)?;
    // Header: who, verdict, gap, confidence.
    let p = &item.piece;
    let headline = format!("{}: {}", p.id, item.verdict.to_uppercase());
    text(&mut panel, &headline, Point::new(pad, 14), 1.6, YELLOW, 3)?;
    text(&mut panel, &format!("{}: {}", item.gap, item.verdict), Point::new(pad, 80), 1.05, WHITE, 2)?;
    let sure = item.sigmas >= REVIEW_SIGMAS && p.doubt.is_none();
    text(&mut panel, &item.confidence, Point::new(pad, 132), 0.85, if sure { GREEN } else { AMBER }, 2)?;
    // Views.
    let left = (width - 2 * vw - pad) / 2;
    paste(&mut panel, &piece_view, left, header_h)?;
    paste(&mut panel, &board_view, left + vw + pad, header_h)?;
    paste(&mut panel, &piece_detail, left, header_h + vh + pad)?;
    paste(&mut panel, &board_detail, left + vw + pad, header_h + vh + pad)?;
    // Legend.
    let y0 = header_h + vh + pad + dh + pad + 6;
    let sw = |panel: &mut Mat, y: i32, colour, what: &str| -> Result<(), FrameError> {
        let a = PixelPoint::new(pad as f64 + 4.0, y as f64 + 14.0);
        seg(panel, a, PixelPoint::new(a.u + 46.0, a.v), colour, 4)?;
        text(panel, what, Point::new(pad + 66, y), 0.72, WHITE, 2)?;
        Ok(())
    };
    let n_edges = item.edge_points.len();
    sw(&mut panel, y0, YELLOW, &format!("fitted footprint of the {thing} (centre dot); magenta dots: the {n_edges} outline edge points it was fitted to"))?;
    let from = if item.decisive.from_centre { "its centre" } else { "its nearest edge" };
    sw(&mut panel, y0 + 38, CYAN, &format!("decisive boundary: {}, where it lies on the board", item.decisive.name))?;
    sw(&mut panel, y0 + 76, WHITE, &format!("the gap that decides the call, from the {thing}'s {}", from.trim_start_matches("its ")))?;
    let sigma_note = format!(
        "+/- is one standard uncertainty ({:.2} mm: outline fit, camera pose, board tolerance). Flagged below {REVIEW_SIGMAS} sigma.",
        p.sigma_mm
    );
    text(&mut panel, &sigma_note, Point::new(pad, y0 + 118), 0.62, WHITE, 1)?;
    let scale_note = format!("Top-down, undistorted, {:.2} mm per pixel; board {}; piece at ({:.1}, {:.1}) mm.", g.mm_per_px, board.name, p.x_mm, p.y_mm);
    text(&mut panel, &scale_note, Point::new(pad, y0 + 148), 0.62, WHITE, 1)?;
    Ok(panel)
}

/// Stacks panels into one picture (padded to the widest) and records each panel's rows.
pub(super) fn stack(panels: &[Mat], items: &mut [ReviewItem]) -> Result<Mat, FrameError> {
    let width = panels.iter().map(|m| m.cols()).max().unwrap_or(1);
    let gap = 10;
    let height: i32 = panels.iter().map(|m| m.rows()).sum::<i32>() + gap * (panels.len() as i32 - 1);
    let mut out = cv("stack", Mat::new_rows_cols_with_default(height, width, CV_8UC3, Scalar::all(0.0)))?;
    let mut y = 0;
    for (m, item) in panels.iter().zip(items.iter_mut()) {
        let mut padded = band(width, m.rows())?;
        paste(&mut padded, m, 0, 0)?;
        paste(&mut out, &padded, 0, y)?;
        item.picture_rows = [y as u32, (y + m.rows()) as u32];
        y += m.rows() + gap;
    }
    Ok(out)
}
