//! The board model locate fits: every edge the board shows (rules-fixed features and the maker's construction), its construction dimensions and what hides what.

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
    /// Whether the rules fix the edge (the surface's outline, lines, holes, the
    /// partitions' and gate bar's feet). The rest is the maker's construction
    /// (gutters, rails, walls, the gate bar's height), taken at its nominal size:
    /// it proposes starting poses and hides what it would hide, and is never
    /// fitted nor decides the verdict.
    pub fixed: bool,
    /// For an edge of an upright face (a gate bar block's front, a wall's inner
    /// side): the step across the face to its opposite edge, board mm (down from
    /// a top edge, up from a foot). Seen edge-on, such a face shows neither edge
    /// reliably (`MIN_FACE_PX`).
    pub face_across_mm: Option<[f64; 3]>,
    /// The construction parameter that is the face's height ([`BoardModel::params`]):
    /// the step across the face scales with its fitted value. `None`: the face's
    /// height is fixed at `face_across_mm`.
    pub face_param: Option<usize>,
    /// For the foot of an upright face of unknown height (a partition's side, the
    /// gate bar's front): the face's outward horizontal normal `[x, y]`. The foot
    /// shows only to a camera on that side; from the other side the face itself,
    /// however high it is, stands between.
    pub facing: Option<[f64; 2]>,
    /// How the edge moves with the construction parameters ([`BoardModel::params`]):
    /// empty for the rules-fixed features.
    pub moves: Vec<EdgeMove>,
    /// For an edge of a painted line: the step across the line to its other edge, board mm. A line imaged
    /// narrower than the blur's reach is read at its middle (`THIN_LINE_PX`).
    pub line_across_mm: Option<[f64; 3]>,
}

impl ModelEdge {
    /// Whether the edge is the foot of an upright face (where the surface meets a
    /// wall, a partition or the gate bar): an inside corner.
    pub fn is_foot(&self) -> bool {
        self.face_across_mm.is_some_and(|d| d[2] > 0.0)
    }

    /// Whether the edge runs across the board (more across it than along it), or is a hole's rim: an edge that
    /// says where the board lies along its length.
    pub fn runs_across(&self) -> bool {
        match self.shape {
            EdgeShape::Segment { a, b } => (b.x_mm - a.x_mm).abs() > (b.y_mm - a.y_mm).abs(),
            EdgeShape::Circle { .. } => true,
        }
    }

    /// Whether the edge is part of the playing surface's outline where nothing
    /// stands on it: the surface ends there and the image shows what lies beyond.
    pub fn is_open_outline(&self) -> bool {
        self.fixed && !self.identifying && self.face_across_mm.is_none()
    }
}

/// A construction dimension the maker chooses (a gutter's width, a wall's
/// height): fitted with the pose from its nominal value within its range, and
/// held near the nominal value by a weak prior where the view does not show it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ConstructionParam {
    pub name: &'static str,
    pub nominal_mm: f64,
    pub min_mm: f64,
    pub max_mm: f64,
    /// Another parameter (its index in [`BoardModel::params`]) this one never
    /// exceeds: a part built between others stands no higher than they do.
    pub at_most: Option<usize>,
}

impl ConstructionParam {
    /// The dimension's key in a pose file's `construction` map and the JSON report: its name in snake case, in mm
    /// (`wall_height_mm`).
    pub fn key(&self) -> String {
        format!("{}_mm", self.name.replace(' ', "_"))
    }

    /// The prior's standard deviation: an eighth of the range, so the prior is
    /// negligible against any edge that shows the dimension and decides it where none does.
    pub(super) fn prior_sigma_mm(&self) -> f64 {
        0.125 * (self.max_mm - self.min_mm)
    }
}

/// How an edge's endpoints `a`, `b` move per millimetre of one construction parameter, board mm.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct EdgeMove {
    pub param: usize,
    pub a: [f64; 3],
    pub b: [f64; 3],
}

/// Most construction parameters a board model has (sizes the fit's fixed arrays).
pub const MAX_PARAMS: usize = 6;
/// Unknowns of the fit: the pose's six and the construction's.
pub(super) const MAX_UNKNOWNS: usize = 6 + MAX_PARAMS;

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
    /// The construction dimensions fitted with the pose (at most [`MAX_PARAMS`]).
    pub params: Vec<ConstructionParam>,
    /// For each edge that is the foot of an upright face, the top edge of that
    /// face (the foot moved across the face), if the model has it.
    pub tops_of_feet: Vec<Option<usize>>,
}

/// Each foot's top: the edge whose endpoints are the foot's moved across its face
/// (either way round), at the nominal construction.
fn tops_of_feet(edges: &[ModelEdge]) -> Vec<Option<usize>> {
    let near = |p: BoardPoint3, q: [f64; 3]| (p.x_mm - q[0]).abs() < 1e-6 && (p.y_mm - q[1]).abs() < 1e-6 && (p.z_mm - q[2]).abs() < 1e-6;
    let shift = |p: BoardPoint3, d: [f64; 3]| [p.x_mm + d[0], p.y_mm + d[1], p.z_mm + d[2]];
    edges
        .iter()
        .map(|foot| {
            let (EdgeShape::Segment { a, b }, Some(d)) = (foot.shape, foot.face_across_mm.filter(|_| foot.is_foot())) else { return None };
            let (ta, tb) = (shift(a, d), shift(b, d));
            edges.iter().position(|e| match e.shape {
                EdgeShape::Segment { a: ea, b: eb } => e.face_across_mm.is_some_and(|u| u[2] < 0.0) && ((near(ea, ta) && near(eb, tb)) || (near(ea, tb) && near(eb, ta))),
                EdgeShape::Circle { .. } => false,
            })
        })
        .collect()
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

/// The move of an edge from `a` to `b` per mm of `param`: each endpoint by its own step.
pub(super) fn mv(param: usize, a: [f64; 3], b: [f64; 3]) -> EdgeMove {
    EdgeMove { param, a, b }
}

/// The four sides of the horizontal rectangle `lo..hi` at height `z`, as
/// construction edges: the rectangle grows outward by a millimetre per
/// millimetre of each `grow` parameter and rises with each `rise` parameter
/// (with the given sign).
pub(super) fn box_edges(edges: &mut Vec<ModelEdge>, name: &str, lo: [f64; 2], hi: [f64; 2], z: f64, grow: &[usize], rise: &[(usize, f64)]) {
    let p = |x: f64, y: f64| BoardPoint3::new(x, y, z);
    let centre = [0.5 * (lo[0] + hi[0]), 0.5 * (lo[1] + hi[1])];
    let out = |q: BoardPoint3| [(q.x_mm - centre[0]).signum(), (q.y_mm - centre[1]).signum(), 0.0];
    for (side, a, b) in [
        ("+x", p(hi[0], lo[1]), p(hi[0], hi[1])),
        ("-x", p(lo[0], hi[1]), p(lo[0], lo[1])),
        ("target end", p(lo[0], lo[1]), p(hi[0], lo[1])),
        ("far end", p(hi[0], hi[1]), p(lo[0], hi[1])),
    ] {
        let mut moves: Vec<EdgeMove> = grow.iter().map(|&k| mv(k, out(a), out(b))).collect();
        moves.extend(rise.iter().map(|&(k, f)| mv(k, [0.0, 0.0, f], [0.0, 0.0, f])));
        edges.push(ModelEdge {
            name: format!("{name} {side}"),
            shape: EdgeShape::Segment { a, b },
            identifying: false,
            fixed: false,
            face_across_mm: None,
            face_param: None,
            facing: None,
            moves,
            line_across_mm: None,
        });
    }
}

impl BoardModel {
    pub fn new(board: &Board) -> BoardModel {
        let hw = board.surface.half_width();
        let len = board.surface.length_mm;
        let p = |x: f64, y: f64| BoardPoint3::new(x, y, 0.0);
        let p3 = |x: f64, y: f64, z: f64| BoardPoint3::new(x, y, z);
        let seg = |name: &str, a: BoardPoint3, b: BoardPoint3| ModelEdge { name: name.to_string(), shape: EdgeShape::Segment { a, b }, identifying: true, fixed: true, face_across_mm: None, face_param: None, facing: None, moves: Vec::new(), line_across_mm: None };
        let outline = |name: &str, a: BoardPoint3, b: BoardPoint3| ModelEdge { identifying: false, ..seg(name, a, b) };
        let mut edges = vec![
            outline("side +x", p(hw, 0.0), p(hw, len)),
            outline("side -x", p(-hw, len), p(-hw, 0.0)),
            outline("target end", p(-hw, 0.0), p(hw, 0.0)),
            outline("far end", p(hw, len), p(-hw, len)),
        ];
        let mut ladders = Vec::new();
        let mut params = Vec::new();
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
                    for (edge, yy, across) in [("near", y, s.line_width_mm), ("far", y + s.line_width_mm, -s.line_width_mm)] {
                        edges.push(ModelEdge { line_across_mm: Some([0.0, across, 0.0]), ..seg(&format!("{name} {edge} edge"), p(-hw, yy), p(hw, yy)) });
                        cross.push(yy);
                    }
                    key_points.push((format!("{name} +x end"), p(hw, y)));
                    key_points.push((format!("{name} -x end"), p(-hw, y)));
                }
                ladders.push(Ladder { z_mm: 0.0, half_width_mm: hw, cross_lines_mm: cross });
                // The table at its nominal build: the surface slab, the gutter trough
                // `d` deep and `g` wide all round, rails beyond it `rh` above the surface.
                let (g, d) = (s.construction.gutter_width_mm, s.construction.gutter_depth_mm);
                let (rw, rh, bottom) = (s.construction.rail_width_mm, s.construction.rail_height_mm, -s.construction.table_depth_mm);
                let (x0, x1) = (hw + g, hw + g + rw);
                occluders.push(Occluder { min: [-hw, 0.0, bottom], max: [hw, len, 0.0] });
                occluders.push(Occluder { min: [x0, -g - rw, bottom], max: [x1, len + g + rw, rh] });
                occluders.push(Occluder { min: [-x1, -g - rw, bottom], max: [-x0, len + g + rw, rh] });
                occluders.push(Occluder { min: [-x0, -g - rw, bottom], max: [x0, -g, rh] });
                occluders.push(Occluder { min: [-x0, len + g, bottom], max: [x0, len + g + rw, rh] });
                // Fitted with the pose: every table has its own (ranges: tables sold and
                // home-built, from a shallow 40 mm trough to a 130 mm one, rails flush to high).
                let (pg, pd, prw, prh) = (0, 1, 2, 3);
                params.push(ConstructionParam { name: "gutter width", nominal_mm: g, min_mm: 40.0, max_mm: 130.0, at_most: None });
                params.push(ConstructionParam { name: "gutter depth", nominal_mm: d, min_mm: crate::board::GUTTER_DEPTH_RANGE_MM.0, max_mm: crate::board::GUTTER_DEPTH_RANGE_MM.1, at_most: None });
                params.push(ConstructionParam { name: "rail width", nominal_mm: rw, min_mm: 20.0, max_mm: 160.0, at_most: None });
                params.push(ConstructionParam { name: "rail height", nominal_mm: rh, min_mm: 0.0, max_mm: 120.0, at_most: None });
                box_edges(&mut edges, "surface slab foot", [-hw, 0.0], [hw, len], -d, &[], &[(pd, -1.0)]);
                box_edges(&mut edges, "rail inner top", [-x0, -g], [x0, len + g], rh, &[pg], &[(prh, 1.0)]);
                box_edges(&mut edges, "rail inner foot", [-x0, -g], [x0, len + g], -d, &[pg], &[(pd, -1.0)]);
                box_edges(&mut edges, "rail outer top", [-x1, -g - rw], [x1, len + g + rw], rh, &[pg, prw], &[(prh, 1.0)]);
            }
            Layout::Sjoelbak(s) => {
                // The walls at their nominal build.
                let wh = s.construction.wall_height_mm;
                let (t, fl) = (s.construction.wall_thickness_mm, s.construction.floor_board_thickness_mm);
                let built = |name: &str, a: BoardPoint3, b: BoardPoint3, moves: Vec<EdgeMove>| ModelEdge { identifying: false, fixed: false, moves, ..seg(name, a, b) };
                // Fitted with the pose (ranges: toy boxes to heavy club boards). The
                // partitions and the gate bar are built in between the walls and stand no
                // higher than they do (`board::Construction` gives the gate bar the walls'
                // height; partitions are low enough for a disc to rest on): a bar fitted
                // above the walls is the fit trading its height against the pose (a
                // bridged bar read 143 mm high behind 58 mm walls, varied scene 18).
                let (pwh, pt, pfl, pph, pgh) = (0, 1, 2, 3, 4);
                params.push(ConstructionParam { name: "wall height", nominal_mm: wh, min_mm: 10.0, max_mm: 150.0, at_most: None });
                params.push(ConstructionParam { name: "wall thickness", nominal_mm: t, min_mm: 5.0, max_mm: 60.0, at_most: None });
                params.push(ConstructionParam { name: "floor board thickness", nominal_mm: fl, min_mm: 0.0, max_mm: 80.0, at_most: None });
                params.push(ConstructionParam { name: "partition height", nominal_mm: s.construction.partition_height_mm, min_mm: 3.0, max_mm: 60.0, at_most: Some(pwh) });
                params.push(ConstructionParam { name: "gate bar height", nominal_mm: wh, min_mm: 10.0, max_mm: 150.0, at_most: Some(pwh) });
                let (up, down) = ([0.0, 0.0, 1.0], [0.0, 0.0, -1.0]);
                let rise = |k: usize| vec![mv(k, up, up)];
                // The surface's sides and back end are the feet of the walls' inner faces.
                for e in edges.iter_mut().take(3) {
                    e.face_across_mm = Some([0.0, 0.0, wh]);
                    e.face_param = Some(pwh);
                }
                let wall_top = |e: ModelEdge| ModelEdge { face_across_mm: Some([0.0, 0.0, -wh]), face_param: Some(pwh), ..e };
                edges.push(wall_top(built("side +x wall top", p3(hw, 0.0, wh), p3(hw, len, wh), rise(pwh))));
                edges.push(wall_top(built("side -x wall top", p3(-hw, len, wh), p3(-hw, 0.0, wh), rise(pwh))));
                edges.push(wall_top(built("back wall top", p3(-hw, 0.0, wh), p3(hw, 0.0, wh), rise(pwh))));
                for sx in [1.0, -1.0] {
                    let (xo, ys) = (sx * (hw + t), if sx > 0.0 { [-t, len] } else { [len, -t] });
                    let thick = |y: f64| [sx, if y < 0.0 { -1.0 } else { 0.0 }, 0.0];
                    let side = if sx > 0.0 { "+x" } else { "-x" };
                    let (a, b) = (thick(ys[0]), thick(ys[1]));
                    edges.push(built(&format!("side {side} wall outer top"), p3(xo, ys[0], wh), p3(xo, ys[1], wh), vec![mv(pt, a, b), mv(pwh, up, up)]));
                    edges.push(built(&format!("side {side} wall outer foot"), p3(xo, ys[0], -fl), p3(xo, ys[1], -fl), vec![mv(pt, a, b), mv(pfl, down, down)]));
                }
                let (back_a, back_b) = ([1.0, -1.0, 0.0], [-1.0, -1.0, 0.0]);
                edges.push(built("back wall outer top", p3(hw + t, -t, wh), p3(-hw - t, -t, wh), vec![mv(pt, back_a, back_b), mv(pwh, up, up)]));
                edges.push(built("back wall outer foot", p3(hw + t, -t, -fl), p3(-hw - t, -t, -fl), vec![mv(pt, back_a, back_b), mv(pfl, down, down)]));
                edges.push(built("far end foot", p3(-hw - t, len, -fl), p3(hw + t, len, -fl), vec![mv(pt, [-1.0, 0.0, 0.0], [1.0, 0.0, 0.0]), mv(pfl, down, down)]));
                for (x, outer) in [(hw, false), (hw + t, true), (-hw, false), (-hw - t, true)] {
                    let mut moves = vec![mv(pfl, down, [0.0; 3]), mv(pwh, [0.0; 3], up)];
                    if outer {
                        moves.push(mv(pt, [x.signum(), 0.0, 0.0], [x.signum(), 0.0, 0.0]));
                    }
                    edges.push(built(&format!("wall end at x = {x}"), p3(x, len, -fl), p3(x, len, wh), moves));
                }
                for x in [hw, -hw] {
                    let xo = x + t * x.signum();
                    edges.push(built(&format!("wall end top at x = {x}"), p3(x, len, wh), p3(xo, len, wh), vec![mv(pwh, up, up), mv(pt, [0.0; 3], [x.signum(), 0.0, 0.0])]));
                }
                // Where the side walls' inner faces meet the back wall's: upright from the surface's back corners (fixed
                // by the rules) to the walls' top. The pose along the board is read there too when the back wall's
                // foot lies in its own shadow, dark on dark, and its top is of a height the maker chose (real
                // sjoelbak photo 153016: read without them, the back wall's top for its foot, 26 mm off).
                for x in [hw, -hw] {
                    edges.push(built(&format!("back inner corner at x = {x}"), p3(x, 0.0, 0.0), p3(x, 0.0, wh), vec![mv(pwh, [0.0; 3], up)]));
                }
                for x in [hw + t, -hw - t] {
                    let out = [x.signum(), -1.0, 0.0];
                    edges.push(built(&format!("back corner at x = {x}"), p3(x, -t, -fl), p3(x, -t, wh), vec![mv(pt, out, out), mv(pfl, down, [0.0; 3]), mv(pwh, [0.0; 3], up)]));
                }
                occluders.push(Occluder { min: [-hw, 0.0, -fl], max: [hw, len, 0.0] });
                occluders.push(Occluder { min: [hw, -t, -fl], max: [hw + t, len, wh] });
                occluders.push(Occluder { min: [-hw - t, -t, -fl], max: [-hw, len, wh] });
                occluders.push(Occluder { min: [-hw - t, -t, -fl], max: [hw + t, 0.0, wh] });
                let ph = s.construction.partition_height_mm;
                for x in s.partitions() {
                    let half = s.partition_width_mm / 2.0;
                    occluders.push(Occluder { min: [x - half, 0.0, 0.0], max: [x + half, s.gate_back_mm, ph] });
                    for xx in [x - half, x + half] {
                        edges.push(ModelEdge { identifying: true, face_across_mm: Some([0.0, 0.0, -ph]), face_param: Some(pph), ..built(&format!("partition top at x = {xx}"), p3(xx, 0.0, ph), p3(xx, s.gate_back_mm, ph), rise(pph)) });
                    }
                }
                ladders.push(Ladder { z_mm: wh, half_width_mm: hw, cross_lines_mm: vec![0.0, s.gate_back_mm, s.gate_front_mm] });
                ladders.push(Ladder { z_mm: wh, half_width_mm: hw + t, cross_lines_mm: vec![-t] });
                ladders.push(Ladder { z_mm: -fl, half_width_mm: hw + t, cross_lines_mm: vec![-t, len] });
                // The partitions' feet: what the rules fix of them is where they stand.
                let half = s.partition_width_mm / 2.0;
                for x in s.partitions() {
                    for (xx, out) in [(x - half, -1.0), (x + half, 1.0)] {
                        edges.push(ModelEdge {
                            facing: Some([out, 0.0]),
                            face_across_mm: Some([0.0, 0.0, s.construction.partition_height_mm]),
                            face_param: Some(pph),
                            ..seg(&format!("partition foot at x = {xx}"), p(xx, 0.0), p(xx, s.gate_back_mm))
                        });
                    }
                }
                // The gate bar's feet: its front and back faces between the openings and the
                // openings' sides, all on the surface. How it is built above (blocks, a bridged
                // bar, its height) is the maker's choice.
                let (gb, gf) = (s.gate_back_mm, s.gate_front_mm);
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
                    let down = Some([0.0, 0.0, -wh]);
                    edges.push(ModelEdge { face_across_mm: down, face_param: Some(pgh), identifying: true, ..built(&format!("gate bar {i} front top"), p3(x1, gf, wh), p3(x0, gf, wh), rise(pgh)) });
                    edges.push(ModelEdge { face_across_mm: down, face_param: Some(pgh), identifying: true, ..built(&format!("gate bar {i} back top"), p3(x0, gb, wh), p3(x1, gb, wh), rise(pgh)) });
                    let face = Some([0.0, 0.0, wh]);
                    edges.push(ModelEdge { facing: Some([0.0, 1.0]), face_across_mm: face, face_param: Some(pgh), ..seg(&format!("gate bar {i} front foot"), p(x1, gf), p(x0, gf)) });
                    edges.push(ModelEdge { facing: Some([0.0, -1.0]), face_across_mm: face, face_param: Some(pgh), ..seg(&format!("gate bar {i} back foot"), p(x0, gb), p(x1, gb)) });
                    for (x, out) in [(x0, -1.0), (x1, 1.0)] {
                        if x.abs() < hw - 1e-9 {
                            edges.push(ModelEdge { facing: Some([out, 0.0]), face_across_mm: face, face_param: Some(pgh), ..seg(&format!("gate bar {i} foot at x = {x}"), p(x, gb), p(x, gf)) });
                            edges.push(ModelEdge { face_across_mm: down, face_param: Some(pgh), identifying: true, ..built(&format!("gate bar {i} top end at x = {x}"), p3(x, gb, wh), p3(x, gf, wh), rise(pgh)) });
                        }
                    }
                }
                for c in &s.compartments {
                    key_points.push((format!("gate {} centre", c.value), p(c.x_mm, gf)));
                }
                ladders.push(Ladder { z_mm: 0.0, half_width_mm: hw, cross_lines_mm: vec![0.0, gb, gf, len] });
            }
            Layout::Washer(w) => {
                for h in &w.holes {
                    blocked.push((h.y_mm - h.radius(), h.y_mm + h.radius()));
                    let name = format!("hole {} at ({}, {})", h.value, h.x_mm, h.y_mm);
                    edges.push(ModelEdge { name: format!("{name} rim"), shape: EdgeShape::Circle { centre: p(h.x_mm, h.y_mm), radius_mm: h.radius() }, identifying: true, fixed: true, face_across_mm: None, face_param: None, facing: None, moves: Vec::new(), line_across_mm: None });
                    key_points.push((format!("{name} centre"), p(h.x_mm, h.y_mm)));
                }
                ladders.push(Ladder { z_mm: 0.0, half_width_mm: hw, cross_lines_mm: vec![0.0, len] });
            }
        }
        debug_assert!(params.len() <= MAX_PARAMS);
        let tops_of_feet = tops_of_feet(&edges);
        BoardModel { edges, ladders, occluders, key_points, clear_spans_mm: clear_spans(len, blocked), params, tops_of_feet }
    }

    /// Segment `a`-`b` of `edge` with the construction parameters `cons` mm off
    /// their nominal values (missing entries count as nominal).
    pub(super) fn segment_at(edge: &ModelEdge, a: BoardPoint3, b: BoardPoint3, cons: &[f64]) -> (BoardPoint3, BoardPoint3) {
        let (mut a, mut b) = (pt(a), pt(b));
        for m in &edge.moves {
            let c = cons.get(m.param).copied().unwrap_or(0.0);
            for i in 0..3 {
                a[i] += c * m.a[i];
                b[i] += c * m.b[i];
            }
        }
        (BoardPoint3::new(a[0], a[1], a[2]), BoardPoint3::new(b[0], b[1], b[2]))
    }

    /// The board's boxes as seen from a camera at `eye`, for testing many points ([`Occlusion::hides`]).
    pub(super) fn occlusion_from(&self, eye: [f64; 3]) -> Occlusion {
        let boxes = self
            .occluders
            .iter()
            .map(|b| {
                let lo = [0, 1, 2].map(|a| b.min[a] + OCCLUDER_SHRINK_MM);
                let hi = [0, 1, 2].map(|a| b.max[a] - OCCLUDER_SHRINK_MM);
                // A sight line from a point below `below[a]` (or above `above[a]`) to the eye misses the box: the
                // eye lies beyond that face too. Infinite where the eye lies within the slab.
                let below = [0, 1, 2].map(|a| if eye[a] < lo[a] { lo[a] } else { f64::NEG_INFINITY });
                let above = [0, 1, 2].map(|a| if eye[a] > hi[a] { hi[a] } else { f64::INFINITY });
                OccluderFromEye { lo, hi, below, above }
            })
            .collect();
        Occlusion { eye, boxes }
    }
}

/// Boxes shrink by this much so an edge lying on a box's own face is not hidden by it, mm.
const OCCLUDER_SHRINK_MM: f64 = 0.25;

/// The board's own boxes ([`BoardModel::occluders`], shrunk by [`OCCLUDER_SHRINK_MM`]) from one eye: what
/// depends on the eye alone is worked out once for the many model samples a pose tests.
pub(super) struct Occlusion {
    eye: [f64; 3],
    boxes: Vec<OccluderFromEye>,
}

struct OccluderFromEye {
    lo: [f64; 3],
    hi: [f64; 3],
    below: [f64; 3],
    above: [f64; 3],
}

impl Occlusion {
    /// Whether a box hides board point `x` from the eye.
    pub(super) fn hides(&self, x: [f64; 3]) -> bool {
        let eye = self.eye;
        let d = sub3(eye, x);
        self.boxes.iter().any(|b| {
            // The sight line from `x` to the eye wholly to one side of a slab of the box misses it: most boxes, most
            // samples (a wall beside the sample and the eye), told without a division.
            if (0..3).any(|a| x[a] < b.below[a] || x[a] > b.above[a]) {
                return false;
            }
            let (mut t0, mut t1) = (0.0f64, 1.0f64);
            for a in 0..3 {
                let (lo, hi) = (b.lo[a], b.hi[a]);
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
