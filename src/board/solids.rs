//! The board's solids in 3D: axis-aligned boxes (surface slab, gutter trough, rails,
//! walls, gate bar, partitions), the cups under a washer board's holes, and the floor
//! plane, built from the layout and its construction. The renderer's world
//! (`render::raycast::World`) is built from them; each box says whether the rules fix
//! its footprint or the maker chose it, so a consumer can tell reliable edges from
//! construction that varies from table to table.

use super::construction::GateBar;
use super::{Board, Layout};
use serde::Serialize;

/// What a box is part of (its material and role).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Part {
    /// The slab whose top face is the playing surface (`z = 0`), with its sides and underside.
    Surface,
    /// A shuffleboard's gutter trough: its top face is the gutter floor.
    Gutter,
    /// A shuffleboard's rail beyond the gutters.
    Rail,
    /// A sjoelbak's side or back wall.
    Wall,
    /// A sjoelbak's gate bar (a block between openings, or the bridge over them).
    GateBar,
    /// A sjoelbak's partition between compartments.
    Partition,
}

/// Who decides where a solid is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ShapedBy {
    /// Its footprint (`x`, `y` extent) is fixed by the rules (the playing surface, the gate bar
    /// between its openings, the partitions, the cups); heights and depths below or above the
    /// surface are still the construction's.
    Rules,
    /// Placed and sized by the maker (gutters, rails, walls): varies from table to table.
    Construction,
}

/// An axis-aligned box, in board mm: `min` and `max` corners `[x, y, z]`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct SolidBox {
    pub part: Part,
    pub shaped_by: ShapedBy,
    pub min: [f64; 3],
    pub max: [f64; 3],
    /// Whether the box's top face has the [`Solids::cups`]' openings cut out of it.
    pub cut_by_cups: bool,
}

/// The cup under a washer board's hole: a cylinder open at the surface, `depth_mm` deep.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Cup {
    /// The hole's index in the board's list.
    pub hole: usize,
    pub x_mm: f64,
    pub y_mm: f64,
    pub radius_mm: f64,
    pub depth_mm: f64,
}

impl Cup {
    /// The box the cup occupies.
    pub fn bounds(&self) -> ([f64; 3], [f64; 3]) {
        let r = self.radius_mm;
        ([self.x_mm - r, self.y_mm - r, -self.depth_mm], [self.x_mm + r, self.y_mm + r, 0.0])
    }
}

/// Every solid of a board, in a fixed order (the renderer's shapes follow it).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Solids {
    pub boxes: Vec<SolidBox>,
    pub cups: Vec<Cup>,
    /// The height of the floor (or table, or ground) the board stands on: an unbounded
    /// horizontal plane, below every box.
    pub floor_z_mm: f64,
}

fn solid(part: Part, shaped_by: ShapedBy, min: [f64; 3], max: [f64; 3]) -> SolidBox {
    SolidBox { part, shaped_by, min, max, cut_by_cups: false }
}

impl Solids {
    /// The solids of `board` from its layout and construction.
    pub fn build(board: &Board) -> Solids {
        let (hw, len) = (board.surface.half_width(), board.surface.length_mm);
        let mut boxes = Vec::new();
        let mut cups = Vec::new();
        let floor_z_mm = match &board.layout {
            Layout::Shuffleboard(s) => {
                let c = &s.construction;
                let (g, d) = (c.gutter_width_mm, c.gutter_depth_mm);
                let bottom = -c.table_depth_mm;
                boxes.push(solid(Part::Surface, ShapedBy::Rules, [-hw, 0.0, bottom], [hw, len, 0.0]));
                boxes.push(solid(Part::Gutter, ShapedBy::Construction, [-hw - g, -g, bottom], [hw + g, len + g, -d]));
                let (rw, rh) = (c.rail_width_mm, c.rail_height_mm);
                let (x0, x1) = (hw + g, hw + g + rw);
                let rail = |min, max| solid(Part::Rail, ShapedBy::Construction, min, max);
                boxes.push(rail([x0, -g - rw, bottom], [x1, len + g + rw, rh]));
                boxes.push(rail([-x1, -g - rw, bottom], [-x0, len + g + rw, rh]));
                boxes.push(rail([-x0, -g - rw, bottom], [x0, -g, rh]));
                boxes.push(rail([-x0, len + g, bottom], [x0, len + g + rw, rh]));
                -c.floor_depth_mm
            }
            Layout::Washer(w) => {
                let stand = w.construction.stand_height_mm;
                boxes.push(SolidBox { cut_by_cups: true, ..solid(Part::Surface, ShapedBy::Rules, [-hw, 0.0, -stand], [hw, len, 0.0]) });
                for (i, h) in w.holes.iter().enumerate() {
                    cups.push(Cup { hole: i, x_mm: h.x_mm, y_mm: h.y_mm, radius_mm: h.radius(), depth_mm: w.cup_depth_mm });
                }
                -stand
            }
            Layout::Sjoelbak(s) => {
                let c = &s.construction;
                let (t, fl, wh) = (c.wall_thickness_mm, c.floor_board_thickness_mm, c.wall_height_mm);
                boxes.push(solid(Part::Surface, ShapedBy::Rules, [-hw, 0.0, -fl], [hw, len, 0.0]));
                let wall = |min, max| solid(Part::Wall, ShapedBy::Construction, min, max);
                boxes.push(wall([hw, -t, -fl], [hw + t, len, wh]));
                boxes.push(wall([-hw - t, -t, -fl], [-hw, len, wh]));
                boxes.push(wall([-hw, -t, -fl], [hw, 0.0, wh]));
                // The gate bar between its openings: as high as the walls (blocks), or up to the
                // tunnels' height under one bar spanning the width (bridged).
                let between_top = match c.gate_bar {
                    GateBar::Blocks => wh,
                    GateBar::Bridged => c.gate_tunnel_height_mm,
                };
                let mut edges = vec![-hw];
                for (left, right) in s.openings() {
                    edges.push(left);
                    edges.push(right);
                }
                edges.push(hw);
                for pair in edges.chunks(2) {
                    if pair[1] > pair[0] {
                        boxes.push(solid(Part::GateBar, ShapedBy::Rules, [pair[0], s.gate_back_mm, 0.0], [pair[1], s.gate_front_mm, between_top]));
                    }
                }
                if c.gate_bar == GateBar::Bridged {
                    boxes.push(solid(
                        Part::GateBar,
                        ShapedBy::Rules,
                        [-hw, s.gate_back_mm, c.gate_tunnel_height_mm],
                        [hw, s.gate_front_mm, wh],
                    ));
                }
                let half = s.partition_width_mm / 2.0;
                for p in s.partitions() {
                    boxes.push(solid(Part::Partition, ShapedBy::Rules, [p - half, 0.0, 0.0], [p + half, s.gate_back_mm, c.partition_height_mm]));
                }
                -c.floor_depth_mm
            }
        };
        Solids { boxes, cups, floor_z_mm }
    }

    /// The solids a camera may find in its way on `board` when its build is not
    /// known for certain: [`Solids::build`]'s, plus, where the build leaves a
    /// volume open that another common build fills, that volume. A sjoelbak whose
    /// gate bar is built as blocks may as well be bridged over its openings (the
    /// rules fix the openings, not the bar above them): a bridge from a disc's
    /// thickness (no lower one lets a disc pass) up to the walls' height is added
    /// over each opening, so that a detector does not count on seeing through it.
    /// A bridged bar's own tunnels are already in the build.
    pub fn possibly_hiding(board: &Board) -> Solids {
        let mut solids = Solids::build(board);
        if let Layout::Sjoelbak(s) = &board.layout {
            if s.construction.gate_bar == GateBar::Blocks {
                let (low, high) = (s.disc_thickness_mm, s.construction.wall_height_mm);
                for (left, right) in s.openings() {
                    solids.boxes.push(solid(Part::GateBar, ShapedBy::Construction, [left, s.gate_back_mm, low], [right, s.gate_front_mm, high]));
                }
            }
        }
        solids
    }

    /// The boxes that are part of `part`.
    pub fn of(&self, part: Part) -> impl Iterator<Item = &SolidBox> {
        self.boxes.iter().filter(move |b| b.part == part)
    }

    /// The highest top of any solid (above it a rising ray meets none).
    pub fn top_z_mm(&self) -> f64 {
        self.boxes.iter().map(|b| b.max[2]).fold(0.0, f64::max)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::board::ConstructionKeys;

    #[test]
    fn the_nominal_shuffleboard_has_the_old_rails_and_gutters() {
        let s = Board::load("shuffleboard-22ft").unwrap().solids();
        let rails: Vec<&SolidBox> = s.of(Part::Rail).collect();
        assert_eq!(rails.len(), 4);
        for r in &rails {
            assert!((r.max[2] - 20.0).abs() < 1e-9 && (r.min[2] + 120.0).abs() < 1e-9, "{r:?}");
            assert_eq!(r.shaped_by, ShapedBy::Construction);
        }
        let gutter = s.of(Part::Gutter).next().unwrap();
        assert!((gutter.max[2] + 38.1).abs() < 1e-9 && (gutter.max[0] - (254.0 + 76.2)).abs() < 1e-9, "{gutter:?}");
        assert!((s.floor_z_mm + 760.0).abs() < 1e-9);
        assert_eq!(s.of(Part::Surface).next().unwrap().shaped_by, ShapedBy::Rules);
    }

    #[test]
    fn a_bridged_gate_bar_spans_the_width_over_tunnels() {
        let board = Board::load("sjoelbak").unwrap();
        let blocks: Vec<SolidBox> = board.solids().of(Part::GateBar).copied().collect();
        assert_eq!(blocks.len(), 5, "four openings leave five blocks");
        assert!(blocks.iter().all(|b| (b.max[2] - 50.0).abs() < 1e-9 && b.min[2].abs() < 1e-9));
        let keys = ConstructionKeys { gate_bar: Some(GateBar::Bridged), gate_tunnel_height_mm: Some(28.0), ..Default::default() };
        let bridged = board.with_construction(&keys).unwrap().solids();
        let bars: Vec<&SolidBox> = bridged.of(Part::GateBar).collect();
        assert_eq!(bars.len(), 6);
        let bridge = bars.iter().find(|b| (b.max[0] - b.min[0] - 400.0).abs() < 1e-9).expect("one bar across the width");
        assert!((bridge.min[2] - 28.0).abs() < 1e-9 && (bridge.max[2] - 50.0).abs() < 1e-9, "{bridge:?}");
        assert!(bars.iter().filter(|b| b.max[0] - b.min[0] < 400.0).all(|b| (b.max[2] - 28.0).abs() < 1e-9));
    }

    #[test]
    fn a_blocks_gate_bar_may_hide_what_a_bridge_over_its_openings_would() {
        let board = Board::load("sjoelbak").unwrap();
        let (built, hiding) = (board.solids(), Solids::possibly_hiding(&board));
        let extra: Vec<&SolidBox> = hiding.boxes[built.boxes.len()..].iter().collect();
        assert_eq!(hiding.boxes[..built.boxes.len()], built.boxes[..]);
        assert_eq!(extra.len(), 4, "one possible bridge over each opening");
        for b in &extra {
            assert!((b.max[0] - b.min[0] - 60.0).abs() < 1e-9 && (b.min[2] - 13.0).abs() < 1e-9 && (b.max[2] - 50.0).abs() < 1e-9, "{b:?}");
        }
        let keys = ConstructionKeys { gate_bar: Some(GateBar::Bridged), ..Default::default() };
        let bridged = board.with_construction(&keys).unwrap();
        assert_eq!(Solids::possibly_hiding(&bridged), bridged.solids(), "a bridged bar's tunnels are its own");
        let washer = Board::load("holeyboard").unwrap();
        assert_eq!(Solids::possibly_hiding(&washer), washer.solids());
    }

    #[test]
    fn cups_sit_under_the_holes() {
        let s = Board::load("holeyboard").unwrap().solids();
        assert_eq!(s.cups.len(), 3);
        assert!(s.boxes[0].cut_by_cups);
        let (lo, hi) = s.cups[1].bounds();
        assert!((lo[2] + 76.0).abs() < 1e-9 && hi[2].abs() < 1e-9 && (hi[1] - lo[1] - 101.6).abs() < 1e-9);
        assert!((s.floor_z_mm + 100.0).abs() < 1e-9);
    }
}

/// Hits closer than this to a ray's origin are the surface the ray left (float noise at millimetre scale is
/// ~1e-12 mm; 1e-6 mm is far above it and far below a pixel).
pub const RAY_EPSILON_MM: f64 = 1e-6;

/// Where a ray `o + t d` (given by `inv`, the componentwise `1 / d`) runs through the box `min..max`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BoxSpan {
    /// The entry and exit parameters.
    pub t_in: f64,
    pub t_out: f64,
    /// The axis of the face the ray enters by, and whether that face is on the box's low side.
    pub axis: usize,
    pub low_face: bool,
}

/// The ray's span through the box `min..max` (the slab test), if any part of the ray inside lies beyond
/// [`RAY_EPSILON_MM`] and before `t_max`: the one ray-box query of the renderer and of detection's lines of sight.
#[inline]
pub fn box_span(min: [f64; 3], max: [f64; 3], o: [f64; 3], inv: [f64; 3], t_max: f64) -> Option<BoxSpan> {
    let (mut t0, mut t1) = (f64::NEG_INFINITY, f64::INFINITY);
    let (mut axis, mut low_face) = (0, false);
    for a in 0..3 {
        let (mut near, mut far) = ((min[a] - o[a]) * inv[a], (max[a] - o[a]) * inv[a]);
        let mut low = true;
        if near > far {
            std::mem::swap(&mut near, &mut far);
            low = false;
        }
        // 0 * inf = NaN when the origin lies on a face of a parallel ray: treat as inside.
        if near.is_nan() || far.is_nan() {
            continue;
        }
        if near > t0 {
            (t0, axis, low_face) = (near, a, low);
        }
        if far < t1 {
            t1 = far;
        }
    }
    (t0 <= t1 && t1 > RAY_EPSILON_MM && t0 < t_max).then_some(BoxSpan { t_in: t0, t_out: t1, axis, low_face })
}
