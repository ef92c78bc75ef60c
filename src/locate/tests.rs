//! Tests of the locate stage's shared pieces: how far apart two fits put the board, the phantom-line check, the pose
//! three lines give, lines merged across pyramid levels, the pool keeping order, the board models' features and
//! points files; and [`line_through`], the image line other modules' tests draw.

use super::*;

fn cam() -> Camera {
    Camera { image_width: 1280, image_height: 960, fx: 1000.0, fy: 1000.0, cx: 640.0, cy: 480.0, distortion: Default::default() }
}

/// The image line through `p` and `q`, its segments spanning them.
pub(super) fn line_through(p: [f64; 2], q: [f64; 2]) -> ImageLine {
    let d = [q[0] - p[0], q[1] - p[1]];
    let n = d[0].hypot(d[1]);
    let (a, b) = (-d[1] / n, d[0] / n);
    let along = |x: [f64; 2]| x[0] * b - x[1] * a;
    let (t0, t1) = (along(p), along(q));
    ImageLine { l: [a, b, -(a * p[0] + b * p[1])], support_px: n, span: [t0.min(t1), t0.max(t1)] }
}

/// Two poses of the same reading a few millimetres apart along the board disagree by that much on its
/// surface; a pose that sees none of the board's probes, by nothing.
#[test]
fn fits_a_few_millimetres_apart_disagree_by_that_much() {
    let (c, loc) = (cam(), Locator::new(&Board::load("sjoelbak").unwrap(), LocateConfig::default()));
    let pose = CameraPose::look_at(BoardPoint3::new(-80.0, 200.0, 900.0), BoardPoint3::new(0.0, 250.0, 0.0), [0.0, 1.0, 0.0]).unwrap();
    // Board point X imaged where `pose` images X + (0, 4, 0): the board 4 mm along itself.
    let t = pose.translation;
    let r = pose.rotation;
    let shifted = CameraPose { rotation: r, translation: [t[0] + 4.0 * r[0][1], t[1] + 4.0 * r[1][1], t[2] + 4.0 * r[2][1]] };
    let d = loc.board_disagreement_mm(&c, &pose, &shifted);
    assert!((d - 4.0).abs() < 1e-6, "{d} mm");
    assert!(loc.board_disagreement_mm(&c, &pose, &pose) < 1e-9);
    let away = CameraPose::look_at(BoardPoint3::new(0.0, 250.0, -900.0), BoardPoint3::new(0.0, 250.0, -1800.0), [0.0, 1.0, 0.0]).unwrap();
    assert!(loc.board_disagreement_mm(&c, &away, &pose) < 1e-9);
}

/// An image line that a reading puts right across the shuffleboard's line-free middle marks that reading (it
/// would leave the line unexplained); one it puts on a painted line, or only part way across, does not.
#[test]
fn a_line_across_the_clear_middle_marks_the_reading() {
    let c = cam();
    let mut loc = Locator::new(&Board::load("shuffleboard-22ft").unwrap(), LocateConfig::default());
    let (y0, y1) = loc.model.clear_spans_mm.iter().copied().max_by(|a, b| (a.1 - a.0).total_cmp(&(b.1 - b.0))).expect("a clear span");
    let hw = loc.model.ladders[0].half_width_mm;
    let middle = (y0 + y1) / 2.0;
    let pose = CameraPose::look_at(BoardPoint3::new(0.0, middle, 1500.0), BoardPoint3::new(0.0, middle, 0.0), [0.0, 1.0, 0.0]).unwrap();
    let image = |x: f64, y: f64| pose.project(&c, BoardPoint3::new(x, y, 0.0)).map(|p| [p.u, p.v]).unwrap();
    let across = |y: f64, share: f64| line_through(image(-share * hw, y), image(share * hw, y));
    loc.lines = vec![across(middle, 0.9)];
    assert!(loc.line_in_clear_span(&c, &pose));
    // Only part of the way across: a piece's edge, a shadow.
    loc.lines = vec![across(middle, 0.25)];
    assert!(!loc.line_in_clear_span(&c, &pose));
    // Along the board, or outside every clear span.
    loc.lines = vec![line_through(image(0.0, middle - 200.0), image(0.0, middle + 200.0))];
    assert!(!loc.line_in_clear_span(&c, &pose));
    let lined = loc.model.ladders[0].cross_lines_mm.iter().copied().find(|y| !loc.model.clear_spans_mm.iter().any(|s| *y > s.0 && *y < s.1)).expect("a painted line");
    let at_line = CameraPose::look_at(BoardPoint3::new(0.0, lined, 1500.0), BoardPoint3::new(0.0, lined, 0.0), [0.0, 1.0, 0.0]).unwrap();
    let p = |x: f64| at_line.project(&c, BoardPoint3::new(x, lined, 0.0)).map(|p| [p.u, p.v]).unwrap();
    loc.lines = vec![line_through(p(-0.9 * hw), p(0.9 * hw))];
    assert!(!loc.line_in_clear_span(&c, &at_line));
}

/// The image of a top edge of the construction across the board (a sjoelbak's gate bar, 50 mm up) read on the
/// surface lies beyond the bar, in the stretch the surface has no line: it is the model's own line, not a
/// phantom. A line there on the surface itself, further out, still marks the reading.
#[test]
fn a_raised_top_edge_of_the_construction_is_no_phantom_line() {
    let c = cam();
    let board = Board::load("sjoelbak").unwrap();
    let s = board.sjoelbak().unwrap();
    let (gf, wh) = (s.gate_front_mm, s.construction.wall_height_mm);
    let mut loc = Locator::new(&board, LocateConfig::default());
    let hw = loc.model.ladders[0].half_width_mm;
    // 600 mm up, 400 mm behind the bar: its top front edge is read on the surface 400 * 50 / 550 mm (36 mm)
    // beyond the bar, past the clear span's margin.
    let eye = gf - 400.0;
    let pose = CameraPose::look_at(BoardPoint3::new(0.0, eye, 600.0), BoardPoint3::new(0.0, gf + 100.0, 0.0), [0.0, 1.0, 0.0]).unwrap();
    let image = |x: f64, y: f64, z: f64| pose.project(&c, BoardPoint3::new(x, y, z)).map(|p| [p.u, p.v]).unwrap();
    let read_on_surface = eye + (gf - eye) * 600.0 / (600.0 - wh);
    assert!(loc.model.clear_spans_mm.iter().any(|&(y0, y1)| read_on_surface > y0 && read_on_surface < y1), "{read_on_surface} mm lies in a clear span");
    loc.lines = vec![line_through(image(-0.9 * hw, gf, wh), image(0.9 * hw, gf, wh))];
    assert!(!loc.line_in_clear_span(&c, &pose));
    let further = read_on_surface + 40.0;
    loc.lines = vec![line_through(image(-0.9 * hw, further, 0.0), image(0.9 * hw, further, 0.0))];
    assert!(loc.line_in_clear_span(&c, &pose));
}

/// The closed form recovers an exact pose from exact lines.
#[test]
fn three_lines_give_the_pose() {
    let c = cam();
    let truth = CameraPose::look_at(BoardPoint3::new(80.0, -600.0, 1500.0), BoardPoint3::new(0.0, 500.0, 0.0), [0.0, 1.0, 0.0]).unwrap();
    let px = |x: f64, y: f64| {
        let p = project(&c, truth.to_camera(BoardPoint3::new(x, y, 0.0))).unwrap();
        p
    };
    let hw = 254.0;
    let a = line_through(px(hw, 0.0), px(hw, 1000.0));
    let b = line_through(px(-hw, 0.0), px(-hw, 1000.0));
    let cr = line_through(px(-hw, 304.8), px(hw, 304.8));
    let got = pose_from_lines(&c, &a, &b, &cr, hw, 304.8, 0.0).unwrap();
    let probe = [[0.0, 0.0, 0.0], [200.0, 1500.0, 0.0], [-254.0, 300.0, 25.0]];
    assert!(pose_distance(&got, &truth, &probe) < 1e-6, "{got:?} vs {truth:?}");
    // Swapping the sides gives the board turned round, a different pose.
    let other = pose_from_lines(&c, &b, &a, &cr, hw, 304.8, 0.0).unwrap();
    // The same lines read as a plane 50 mm up give the pose 50 mm lower.
    let up = pose_from_lines(&c, &a, &b, &cr, hw, 304.8, 50.0).unwrap();
    let lifted = [[0.0, 0.0, 50.0], [200.0, 1500.0, 50.0]];
    let flat = [[0.0, 0.0, 0.0], [200.0, 1500.0, 0.0]];
    for (l, f) in lifted.iter().zip(&flat) {
        let (x, y) = (up.to_camera(BoardPoint3::new(l[0], l[1], l[2])), truth.to_camera(BoardPoint3::new(f[0], f[1], f[2])));
        assert!(dot3(sub3(x, y), sub3(x, y)).sqrt() < 1e-6);
    }
    assert!(pose_distance(&other, &truth, &probe) > 100.0);
}

/// An edge found at two pyramid levels is one line, placed by the finer
/// level's segments and supported by its best level's length, not their sum.
#[test]
fn lines_merge_across_levels_at_the_finer_position() {
    // The fine level's segments lie on y = 100; the coarse level's, 1.5 px off
    // (within the merge distance), twice as long.
    let segs = [([0.0, 100.0, 300.0, 100.0], 0), ([310.0, 100.0, 600.0, 100.0], 0), ([0.0, 101.5, 600.0, 101.5], 1)];
    let lines = merge_segments(&segs);
    assert_eq!(lines.len(), 1);
    let l = &lines[0];
    // |b| y + c = 0 at the fine level's y, to well under the coarse offset.
    let y = -l.l[2] / l.l[1];
    assert!((y - 100.0).abs() < 1e-6, "line at y = {y}");
    assert!((l.support_px - 600.0).abs() < 1e-6, "support {}", l.support_px);
    // A line found at one level keeps the sum of its pieces.
    let one = merge_segments(&[([0.0, 50.0, 200.0, 50.0], 0), ([250.0, 50.0, 400.0, 50.0], 0)]);
    assert_eq!(one.len(), 1);
    assert!((one[0].support_px - 350.0).abs() < 1e-6);
}

/// Work spread over the cores comes back in the items' order, every item once.
#[test]
fn in_parallel_keeps_the_items_order() {
    let loc = Locator::new(&Board::load("holeyboard").unwrap(), LocateConfig::default());
    let items: Vec<usize> = (0..257).collect();
    let out = loc.in_parallel(&items, |_, samples, &i| {
        samples.clear();
        // Uneven work, so that threads finish out of order.
        std::hint::black_box((0..(i % 7) * 1000).fold(0usize, |a, k| a ^ k));
        i
    });
    assert_eq!(out, items);
    assert!(loc.in_parallel(&Vec::<usize>::new(), |_, _, &i| i).is_empty());
}

#[test]
fn models_carry_their_features() {
    let sb = BoardModel::new(&Board::load("shuffleboard-22ft").unwrap());
    // 4 outline edges + 4 stripes x 2 edges + the table's 4 rectangles (slab foot, rail inner top and foot, rail outer top).
    assert_eq!(sb.edges.len(), 28);
    assert!(sb.ladders[0].cross_lines_mm.iter().any(|y| (y - 158.75).abs() < 1e-9));
    let y9 = BoardModel::new(&Board::load("yocu-9").unwrap());
    assert_eq!(y9.edges.iter().filter(|e| matches!(e.shape, EdgeShape::Circle { .. })).count(), 9);
    let sj = BoardModel::new(&Board::load("sjoelbak").unwrap());
    assert_eq!(sj.edges.iter().filter(|e| e.name.contains("front foot")).count(), 5);
    // From straight above the middle, the wall hides its own foot only when seen from outside.
    let inside_eye = [0.0, 500.0, 1500.0];
    let outside_eye = [600.0, 500.0, 300.0];
    assert!(!sj.occlusion_from(inside_eye).hides([200.0, 500.0, 0.0]));
    assert!(sj.occlusion_from(outside_eye).hides([200.0, 500.0, 0.0]));
    assert!(!sj.occlusion_from(outside_eye).hides([200.0, 500.0, 50.0]), "a wall's top edge is a silhouette, never hidden by its own wall");
}

#[test]
fn points_files_parse_with_headers_and_comments() {
    let dir = std::env::temp_dir().join(format!("boardcall-points-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join("pts.csv");
    std::fs::write(&p, "x_mm,y_mm,u,v\n# corners\n-254, 0, 100.5, 900\n254 0 1100 905\n0,152.4,25,640,500\n").unwrap();
    let pts = read_points(&p).unwrap();
    assert_eq!(pts.len(), 3);
    assert!((pts[2].board.z_mm - 25.0).abs() < 1e-12);
    std::fs::write(&p, "1,2,3\n").unwrap();
    let e = read_points(&p).unwrap_err().to_string();
    assert!(e.contains("line 1") && e.contains("3 values"), "{e}");
    std::fs::remove_dir_all(&dir).ok();
}
