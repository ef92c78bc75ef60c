//! The board model locate fits: every edge the board shows (surface outline, lines, holes, and the construction around it) and what hides what.

use super::*;

// ---------------------------------------------------------------------------
// The board model.

/// The shape of one model edge, in board mm.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum EdgeShape {
    Segment { a: BoardPoint3, b: BoardPoint3 },
    Circle { centre: BoardPoint3, radius_mm: f64 },
}

/// One visible edge of the board model.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ModelEdge {
    pub name: String,
    pub shape: EdgeShape,
    /// Whether the edge tells the board's ends apart (a line, a hole, the gate
    /// bar); the bare outline looks the same turned round.
    pub identifying: bool,
    /// For an edge of an upright face (a gate bar block's front, a wall's inner
    /// side): the step across the face to its opposite edge, board mm (down from
    /// a top edge, up from a foot). Seen edge-on, such a face shows neither edge
    /// reliably (`MIN_FACE_PX`).
    pub face_across_mm: Option<[f64; 3]>,
}

/// A family of straight edges in one horizontal plane: two long sides
/// `x = +-half_width` and cross lines at known `y`. Any two sides and one cross
/// line of a family fix the pose in closed form.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Ladder {
    pub z_mm: f64,
    pub half_width_mm: f64,
    pub cross_lines_mm: Vec<f64>,
}

/// An axis-aligned box of the board that hides what is behind it (walls, gate bar), board mm.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Occluder {
    pub min: [f64; 3],
    pub max: [f64; 3],
}

/// What the localiser looks for on one board.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BoardModel {
    pub edges: Vec<ModelEdge>,
    pub ladders: Vec<Ladder>,
    pub occluders: Vec<Occluder>,
    /// Named points for checking a pose: surface corners, line ends, hole centres.
    pub key_points: Vec<(String, BoardPoint3)>,
    /// Stretches of `y` where the surface has nothing across it: a straight image
    /// edge across the board there means the pose is wrong (the board read back to front).
    pub clear_spans_mm: Vec<(f64, f64)>,
}

/// Clearance kept around every modelled feature when looking for unexplained lines, mm.
pub(super) const CLEAR_MARGIN_MM: f64 = 8.0;

/// The parts of `0..len` at least [`CLEAR_MARGIN_MM`] from every blocked interval.
pub(super) fn clear_spans(len: f64, mut blocked: Vec<(f64, f64)>) -> Vec<(f64, f64)> {
    blocked.push((f64::NEG_INFINITY, 0.0));
    blocked.push((len, f64::INFINITY));
    blocked.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut out = Vec::new();
    let mut at = f64::NEG_INFINITY;
    for (a, b) in blocked {
        let (lo, hi) = (at + CLEAR_MARGIN_MM, a - CLEAR_MARGIN_MM);
        if hi > lo && lo.is_finite() {
            out.push((lo, hi));
        }
        at = at.max(b);
    }
    out
}

// The board's construction beyond the playing surface (walls, floor board,
// partitions, gutters, rails) is the board's `Construction` (`crate::board`), at its
// nominal values unless the board file's `[construction]` says otherwise. Their edges are strong image edges right beside the surface's own: left
// out of the model, the moving-edges search latches onto them (a wall's outer top
// edge read as its inner one puts the camera 4 % too close). They are outline edges
// (symmetric, not identifying) and their solids hide what is behind them.

/// The four sides of the horizontal rectangle `lo..hi` at height `z`, as outline edges.
pub(super) fn box_edges(edges: &mut Vec<ModelEdge>, name: &str, lo: [f64; 2], hi: [f64; 2], z: f64) {
    let p = |x: f64, y: f64| BoardPoint3::new(x, y, z);
    for (side, a, b) in [
        ("+x", p(hi[0], lo[1]), p(hi[0], hi[1])),
        ("-x", p(lo[0], hi[1]), p(lo[0], lo[1])),
        ("target end", p(lo[0], lo[1]), p(hi[0], lo[1])),
        ("far end", p(hi[0], hi[1]), p(lo[0], hi[1])),
    ] {
        edges.push(ModelEdge { name: format!("{name} {side}"), shape: EdgeShape::Segment { a, b }, identifying: false, face_across_mm: None });
    }
}

impl BoardModel {
    pub fn new(board: &Board) -> BoardModel {
        let hw = board.surface.half_width();
        let len = board.surface.length_mm;
        let p = |x: f64, y: f64| BoardPoint3::new(x, y, 0.0);
        let p3 = |x: f64, y: f64, z: f64| BoardPoint3::new(x, y, z);
        let seg = |name: &str, a: BoardPoint3, b: BoardPoint3| ModelEdge { name: name.to_string(), shape: EdgeShape::Segment { a, b }, identifying: true, face_across_mm: None };
        let outline = |name: &str, a: BoardPoint3, b: BoardPoint3| ModelEdge { identifying: false, ..seg(name, a, b) };
        let mut edges = vec![
            outline("side +x", p(hw, 0.0), p(hw, len)),
            outline("side -x", p(-hw, len), p(-hw, 0.0)),
            outline("target end", p(-hw, 0.0), p(hw, 0.0)),
            outline("far end", p(hw, len), p(-hw, len)),
        ];
        let mut ladders = Vec::new();
        let mut occluders = Vec::new();
        let mut blocked: Vec<(f64, f64)> = Vec::new();
        let mut key_points = vec![
            ("target end +x corner".to_string(), p(hw, 0.0)),
            ("target end -x corner".to_string(), p(-hw, 0.0)),
            ("far end +x corner".to_string(), p(hw, len)),
            ("far end -x corner".to_string(), p(-hw, len)),
        ];
        match &board.layout {
            Layout::Shuffleboard(s) => {
                let l = s.lines;
                let mut cross = vec![0.0, len];
                for (name, y) in [("trey line", l.trey_line_mm), ("deuce line", l.deuce_line_mm), ("long foul line", l.long_foul_line_mm), ("short foul line", l.short_foul_line_mm)] {
                    // A centre foul line shared by both is drawn once.
                    if name == "short foul line" && (y - l.long_foul_line_mm).abs() < 1e-9 {
                        continue;
                    }
                    blocked.push((y, y + s.line_width_mm));
                    for (edge, yy) in [("near", y), ("far", y + s.line_width_mm)] {
                        edges.push(seg(&format!("{name} {edge} edge"), p(-hw, yy), p(hw, yy)));
                        cross.push(yy);
                    }
                    key_points.push((format!("{name} +x end"), p(hw, y)));
                    key_points.push((format!("{name} -x end"), p(-hw, y)));
                }
                ladders.push(Ladder { z_mm: 0.0, half_width_mm: hw, cross_lines_mm: cross });
                // The table: the surface slab, the gutter trough `d` deep and `g` wide
                // all round, and rails beyond it standing `rh` above the surface.
                let (g, d) = (s.construction.gutter_width_mm, s.construction.gutter_depth_mm);
                let (rw, rh, bottom) = (s.construction.rail_width_mm, s.construction.rail_height_mm, -s.construction.table_depth_mm);
                let (x0, x1) = (hw + g, hw + g + rw);
                occluders.push(Occluder { min: [-hw, 0.0, bottom], max: [hw, len, 0.0] });
                occluders.push(Occluder { min: [x0, -g - rw, bottom], max: [x1, len + g + rw, rh] });
                occluders.push(Occluder { min: [-x1, -g - rw, bottom], max: [-x0, len + g + rw, rh] });
                occluders.push(Occluder { min: [-x0, -g - rw, bottom], max: [x0, -g, rh] });
                occluders.push(Occluder { min: [-x0, len + g, bottom], max: [x0, len + g + rw, rh] });
                box_edges(&mut edges, "surface slab foot", [-hw, 0.0], [hw, len], -d);
                box_edges(&mut edges, "rail inner top", [-x0, -g], [x0, len + g], rh);
                box_edges(&mut edges, "rail inner foot", [-x0, -g], [x0, len + g], -d);
                box_edges(&mut edges, "rail outer top", [-x1, -g - rw], [x1, len + g + rw], rh);
            }
            Layout::Sjoelbak(s) => {
                let wh = s.construction.wall_height_mm;
                let (t, fl) = (s.construction.wall_thickness_mm, s.construction.floor_board_thickness_mm);
                edges.push(outline("side +x wall top", p3(hw, 0.0, wh), p3(hw, len, wh)));
                edges.push(outline("side -x wall top", p3(-hw, len, wh), p3(-hw, 0.0, wh)));
                // The top of the back wall's inner face.
                edges.push(ModelEdge { face_across_mm: Some([0.0, 0.0, -wh]), ..seg("back wall top", p3(-hw, 0.0, wh), p3(hw, 0.0, wh)) });
                // The walls' outer top edges and feet, the far end's faces (floor board and wall ends).
                edges.push(outline("side +x wall outer top", p3(hw + t, -t, wh), p3(hw + t, len, wh)));
                edges.push(outline("side -x wall outer top", p3(-hw - t, len, wh), p3(-hw - t, -t, wh)));
                edges.push(outline("back wall outer top", p3(hw + t, -t, wh), p3(-hw - t, -t, wh)));
                edges.push(outline("side +x wall outer foot", p3(hw + t, -t, -fl), p3(hw + t, len, -fl)));
                edges.push(outline("side -x wall outer foot", p3(-hw - t, len, -fl), p3(-hw - t, -t, -fl)));
                edges.push(outline("back wall outer foot", p3(hw + t, -t, -fl), p3(-hw - t, -t, -fl)));
                edges.push(outline("far end foot", p3(-hw - t, len, -fl), p3(hw + t, len, -fl)));
                for x in [hw, hw + t, -hw, -hw - t] {
                    edges.push(outline(&format!("wall end at x = {x}"), p3(x, len, -fl), p3(x, len, wh)));
                }
                for x in [hw, -hw] {
                    let xo = x + t * x.signum();
                    edges.push(outline(&format!("wall end top at x = {x}"), p3(x, len, wh), p3(xo, len, wh)));
                }
                for x in [hw + t, -hw - t] {
                    edges.push(outline(&format!("back corner at x = {x}"), p3(x, -t, -fl), p3(x, -t, wh)));
                }
                occluders.push(Occluder { min: [-hw, 0.0, -fl], max: [hw, len, 0.0] });
                occluders.push(Occluder { min: [hw, -t, -fl], max: [hw + t, len, wh] });
                occluders.push(Occluder { min: [-hw - t, -t, -fl], max: [-hw, len, wh] });
                occluders.push(Occluder { min: [-hw - t, -t, -fl], max: [hw + t, 0.0, wh] });
                // The partitions: low dividers from the back wall to the gate bar.
                let (ph, half) = (s.construction.partition_height_mm, s.partition_width_mm / 2.0);
                for x in s.partitions() {
                    occluders.push(Occluder { min: [x - half, 0.0, 0.0], max: [x + half, s.gate_back_mm, ph] });
                    for xx in [x - half, x + half] {
                        edges.push(outline(&format!("partition top at x = {xx}"), p3(xx, 0.0, ph), p3(xx, s.gate_back_mm, ph)));
                        edges.push(outline(&format!("partition foot at x = {xx}"), p3(xx, 0.0, 0.0), p3(xx, s.gate_back_mm, 0.0)));
                    }
                }
                // The gate bar: blocks between the openings, as high as the walls.
                let (gb, gf) = (s.gate_back_mm, s.gate_front_mm);
                // Compartments, partitions and the gate bar: everything up to the bar's front.
                blocked.push((0.0, gf));
                let mut xs = vec![-hw];
                for c in &s.compartments {
                    xs.push(c.x_mm - s.gate_opening_mm / 2.0);
                    xs.push(c.x_mm + s.gate_opening_mm / 2.0);
                }
                xs.push(hw);
                for (i, w) in xs.chunks(2).enumerate() {
                    let (x0, x1) = (w[0], w[1]);
                    if x1 <= x0 {
                        continue;
                    }
                    occluders.push(Occluder { min: [x0, gb, 0.0], max: [x1, gf, wh] });
                    let (up, down) = (Some([0.0, 0.0, wh]), Some([0.0, 0.0, -wh]));
                    edges.push(ModelEdge { face_across_mm: up, ..seg(&format!("gate bar {i} front foot"), p(x1, gf), p(x0, gf)) });
                    edges.push(ModelEdge { face_across_mm: up, ..seg(&format!("gate bar {i} back foot"), p(x0, gb), p(x1, gb)) });
                    edges.push(ModelEdge { face_across_mm: down, ..seg(&format!("gate bar {i} front top"), p3(x1, gf, wh), p3(x0, gf, wh)) });
                    // Its top face against the surface beyond it: often the same wood in the same light.
                    edges.push(ModelEdge { face_across_mm: down, ..outline(&format!("gate bar {i} back top"), p3(x0, gb, wh), p3(x1, gb, wh)) });
                    for x in [x0, x1] {
                        if x.abs() < hw - 1e-9 {
                            edges.push(ModelEdge { face_across_mm: down, ..seg(&format!("gate bar {i} top end at x = {x}"), p3(x, gb, wh), p3(x, gf, wh)) });
                            edges.push(seg(&format!("gate bar {i} front corner at x = {x}"), p3(x, gf, 0.0), p3(x, gf, wh)));
                        }
                    }
                }
                for c in &s.compartments {
                    key_points.push((format!("gate {} centre", c.value), p(c.x_mm, gf)));
                }
                ladders.push(Ladder { z_mm: 0.0, half_width_mm: hw, cross_lines_mm: vec![0.0, gb, gf, len] });
                ladders.push(Ladder { z_mm: wh, half_width_mm: hw, cross_lines_mm: vec![0.0, gb, gf] });
                // The walls' outer edges, the strongest lines in view (wall against the floor).
                ladders.push(Ladder { z_mm: wh, half_width_mm: hw + t, cross_lines_mm: vec![-t] });
                ladders.push(Ladder { z_mm: -fl, half_width_mm: hw + t, cross_lines_mm: vec![-t, len] });
            }
            Layout::Washer(w) => {
                for h in &w.holes {
                    blocked.push((h.y_mm - h.radius(), h.y_mm + h.radius()));
                    let name = format!("hole {} at ({}, {})", h.value, h.x_mm, h.y_mm);
                    edges.push(ModelEdge { name: format!("{name} rim"), shape: EdgeShape::Circle { centre: p(h.x_mm, h.y_mm), radius_mm: h.radius() }, identifying: true, face_across_mm: None });
                    key_points.push((format!("{name} centre"), p(h.x_mm, h.y_mm)));
                }
                ladders.push(Ladder { z_mm: 0.0, half_width_mm: hw, cross_lines_mm: vec![0.0, len] });
            }
        }
        BoardModel { edges, ladders, occluders, key_points, clear_spans_mm: clear_spans(len, blocked) }
    }

    /// Whether the board itself hides board point `x` from a camera at `eye`.
    pub(super) fn hidden(&self, x: [f64; 3], eye: [f64; 3]) -> bool {
        // Boxes shrink by this much so an edge lying on a box's own face is not hidden by it.
        const SHRINK_MM: f64 = 0.25;
        let d = sub3(eye, x);
        self.occluders.iter().any(|b| {
            let (mut t0, mut t1) = (0.0f64, 1.0f64);
            for a in 0..3 {
                let (lo, hi) = (b.min[a] + SHRINK_MM, b.max[a] - SHRINK_MM);
                if d[a].abs() < 1e-12 {
                    if x[a] < lo || x[a] > hi {
                        return false;
                    }
                } else {
                    let (mut n, mut f) = ((lo - x[a]) / d[a], (hi - x[a]) / d[a]);
                    if n > f {
                        std::mem::swap(&mut n, &mut f);
                    }
                    t0 = t0.max(n);
                    t1 = t1.min(f);
                }
            }
            t0 < t1
        })
    }
}
