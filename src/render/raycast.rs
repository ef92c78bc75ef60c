//! The renderer's 3D scene and analytic ray intersection: the board's solids
//! ([`crate::board::Solids`]: slabs with holes, cups, gutters, rails, walls, gate bar,
//! partitions, the floor) and every piece as a solid (a weight or disc is a cylinder,
//! a washer an annular prism), in board millimetres.

use crate::board::{Board, Layout, Part};
use crate::piece::PieceKind;
use crate::render::scene::{piece_radius, piece_thickness, PieceSpec};

/// A 3-vector in the board frame (mm) or a direction.
pub type V3 = [f64; 3];

pub use crate::board::solids::RAY_EPSILON_MM;
use crate::board::solids::box_span;

/// Where a washer lying flat on the ground beside its board has its centre.
pub fn washer_ground_z(w: &crate::board::WasherBoard) -> f64 {
    -w.construction.stand_height_mm + w.washer_thickness_mm / 2.0
}

/// What a ray hit: the surface's material and identity.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Surface {
    /// The playing surface (wood, with painted lines on a shuffleboard).
    BoardTop,
    /// The vertical faces and underside of the board.
    BoardEdge,
    Gutter,
    Rail,
    Floor,
    CupWall { hole: usize },
    CupBottom { hole: usize },
    Wall,
    GateBar,
    Partition,
    /// A piece's top face (a weight's coloured cap); `piece` indexes the scene's pieces.
    PieceTop { piece: usize },
    PieceSide { piece: usize },
    PieceBottom { piece: usize },
    /// A washer's inner hole wall.
    PieceInner { piece: usize },
}

/// A ray's first intersection.
#[derive(Debug, Clone, Copy)]
pub struct Hit {
    pub t: f64,
    pub point: V3,
    /// Unit normal facing the ray's side.
    pub normal: V3,
    pub surface: Surface,
}

#[derive(Debug, Clone, Copy)]
struct Aabb {
    min: V3,
    max: V3,
}

impl Aabb {
    /// The ray's parameter interval inside the box ([`box_span`]).
    #[inline]
    fn span(&self, o: V3, inv: V3, t_max: f64) -> Option<(f64, f64, usize, bool)> {
        box_span(self.min, self.max, o, inv, t_max).map(|b| (b.t_in, b.t_out, b.axis, b.low_face))
    }
}

/// A solid of revolution about its axis: an annular prism (`r_in = 0` for a solid cylinder).
#[derive(Debug, Clone, Copy)]
struct Ring {
    piece: usize,
    centre: V3,
    /// Rows are the local axes (u, v, axis) in board coordinates.
    frame: [V3; 3],
    r_out: f64,
    r_in: f64,
    half_h: f64,
}

#[derive(Debug, Clone)]
enum Shape {
    /// A box hit only from outside; a top face with holes lets rays through them.
    Block { b: Aabb, top: Surface, side: Surface, holes: Vec<(f64, f64, f64)> },
    /// The inside of a hole's cup: wall and bottom.
    Cup { b: Aabb, hole: usize, cx: f64, cy: f64, r: f64, depth: f64 },
    /// A horizontal plane seen from above.
    Plane { z: f64, surface: Surface },
    Piece { b: Aabb, ring: Ring },
}

/// The whole scene's geometry.
#[derive(Debug, Clone)]
pub struct World {
    shapes: Vec<Shape>,
    grid: ShadowGrid,
}

/// Cell size of the grid that finds a shadow ray's possible occluders: a ray
/// rising to the highest top (tens of mm) crosses one to a few cells.
const SHADOW_CELL_MM: f64 = 50.0;
/// The grid never exceeds this many cells a side (a 50 m room).
const SHADOW_GRID_MAX_CELLS: usize = 1000;

/// The bounded shapes by the `xy` cells their boxes overlap.
#[derive(Debug, Clone)]
struct ShadowGrid {
    x0: f64,
    y0: f64,
    cx: f64,
    cy: f64,
    nx: usize,
    ny: usize,
    cells: Vec<Vec<u32>>,
    /// The highest top of any bounded shape: above it a rising ray meets nothing.
    top: f64,
}

impl ShadowGrid {
    fn build(shapes: &[Shape]) -> ShadowGrid {
        let boxes: Vec<(usize, Aabb)> = shapes
            .iter()
            .enumerate()
            .filter_map(|(i, s)| match s {
                Shape::Block { b, .. } | Shape::Cup { b, .. } | Shape::Piece { b, .. } => Some((i, *b)),
                Shape::Plane { .. } => None,
            })
            .collect();
        let mut lo = [f64::INFINITY; 3];
        let mut hi = [f64::NEG_INFINITY; 3];
        for (_, b) in &boxes {
            for a in 0..3 {
                lo[a] = lo[a].min(b.min[a]);
                hi[a] = hi[a].max(b.max[a]);
            }
        }
        if boxes.is_empty() {
            return ShadowGrid { x0: 0.0, y0: 0.0, cx: 1.0, cy: 1.0, nx: 0, ny: 0, cells: Vec::new(), top: f64::NEG_INFINITY };
        }
        let size = |extent: f64| SHADOW_CELL_MM.max(extent / SHADOW_GRID_MAX_CELLS as f64);
        let (cx, cy) = (size(hi[0] - lo[0]), size(hi[1] - lo[1]));
        let count = |extent: f64, cell: f64| ((extent / cell).ceil() as usize).clamp(1, SHADOW_GRID_MAX_CELLS);
        let (nx, ny) = (count(hi[0] - lo[0], cx), count(hi[1] - lo[1], cy));
        let mut g = ShadowGrid { x0: lo[0], y0: lo[1], cx, cy, nx, ny, cells: vec![Vec::new(); nx * ny], top: hi[2] };
        for (i, b) in boxes {
            let (ix0, ix1) = g.range_x(b.min[0], b.max[0]);
            let (iy0, iy1) = g.range_y(b.min[1], b.max[1]);
            for iy in iy0..=iy1 {
                for ix in ix0..=ix1 {
                    g.cells[iy * nx + ix].push(i as u32);
                }
            }
        }
        g
    }

    /// The cells `a..=b` span along an axis starting at `origin` with `n` cells of `size`.
    fn span(a: f64, b: f64, origin: f64, size: f64, n: usize) -> (usize, usize) {
        let at = |v: f64| (((v - origin) / size).floor().max(0.0) as usize).min(n - 1);
        (at(a), at(b))
    }

    fn range_x(&self, a: f64, b: f64) -> (usize, usize) {
        Self::span(a, b, self.x0, self.cx, self.nx)
    }

    fn range_y(&self, a: f64, b: f64) -> (usize, usize) {
        Self::span(a, b, self.y0, self.cy, self.ny)
    }
}

#[inline]
fn dot(a: V3, b: V3) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

#[inline]
fn sub(a: V3, b: V3) -> V3 {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}

#[inline]
fn at(o: V3, d: V3, t: f64) -> V3 {
    [o[0] + d[0] * t, o[1] + d[1] * t, o[2] + d[2] * t]
}

fn cross(a: V3, b: V3) -> V3 {
    [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]
}

fn unit(v: V3) -> V3 {
    let n = dot(v, v).sqrt();
    [v[0] / n, v[1] / n, v[2] / n]
}

/// The local frame of a piece whose top-face normal is `axis`.
pub(crate) fn frame_for_axis(axis: V3) -> [V3; 3] {
    let helper = if axis[0].abs() < 0.9 { [1.0, 0.0, 0.0] } else { [0.0, 1.0, 0.0] };
    let u = unit(cross(helper, axis));
    let v = cross(axis, u);
    [u, v, axis]
}

impl World {
    /// The board's geometry and every piece of the scene.
    pub fn build(board: &Board, pieces: &[PieceSpec]) -> World {
        let mut shapes = Vec::new();
        let solids = board.solids();
        let holes: Vec<(f64, f64, f64)> = solids.cups.iter().map(|c| (c.x_mm, c.y_mm, c.radius_mm)).collect();
        for b in &solids.boxes {
            let (top, side) = match b.part {
                Part::Surface => (Surface::BoardTop, Surface::BoardEdge),
                Part::Gutter => (Surface::Gutter, Surface::Gutter),
                Part::Rail => (Surface::Rail, Surface::Rail),
                Part::Wall => (Surface::Wall, Surface::Wall),
                Part::GateBar => (Surface::GateBar, Surface::GateBar),
                Part::Partition => (Surface::Partition, Surface::Partition),
            };
            let holes = if b.cut_by_cups { holes.clone() } else { Vec::new() };
            shapes.push(Shape::Block { b: Aabb { min: b.min, max: b.max }, top, side, holes });
        }
        for c in &solids.cups {
            let (min, max) = c.bounds();
            shapes.push(Shape::Cup { b: Aabb { min, max }, hole: c.hole, cx: c.x_mm, cy: c.y_mm, r: c.radius_mm, depth: c.depth_mm });
        }
        shapes.push(Shape::Plane { z: solids.floor_z_mm, surface: Surface::Floor });
        for (i, p) in pieces.iter().enumerate() {
            let (Some(h), Some(r)) = (piece_thickness(board, p.kind), piece_radius(board, p.kind)) else {
                continue;
            };
            let r_in = match (&board.layout, p.kind) {
                (Layout::Washer(w), PieceKind::Washer) => w.washer_inner_diameter_mm / 2.0,
                _ => 0.0,
            };
            let c = p.centre(h);
            let centre = [c.x_mm, c.y_mm, c.z_mm];
            let ring = Ring { piece: i, centre, frame: frame_for_axis(p.axis()), r_out: r, r_in, half_h: h / 2.0 };
            let e = r + h / 2.0;
            let b = Aabb { min: [centre[0] - e, centre[1] - e, centre[2] - e], max: [centre[0] + e, centre[1] + e, centre[2] + e] };
            shapes.push(Shape::Piece { b, ring });
        }
        let grid = ShadowGrid::build(&shapes);
        World { shapes, grid }
    }

    /// The first surface along the ray `o + t d` (`d` unit) with `RAY_EPSILON_MM < t < t_max`.
    pub fn intersect(&self, o: V3, d: V3, t_max: f64) -> Option<Hit> {
        self.intersect_among(o, d, t_max, None)
    }

    /// Each shape's bounds as seen by a camera: the box `[x0, y0, x1, y1]` in normalised
    /// (undistorted pinhole) image coordinates that contains its image, or `None` when
    /// it has no such box (it reaches behind the camera, or is unbounded). Rays from the
    /// camera centre through points outside a shape's box cannot meet the shape: a
    /// pinhole maps the convex hull of the box's corners onto the hull of their images.
    pub fn view_bounds(&self, pose: &crate::camera::CameraPose) -> Vec<Option<[f64; 4]>> {
        self.shapes
            .iter()
            .map(|s| {
                let b = match s {
                    Shape::Cup { b, .. } | Shape::Piece { b, .. } | Shape::Block { b, .. } => b,
                    Shape::Plane { .. } => return None,
                };
                let mut out = [f64::INFINITY, f64::INFINITY, f64::NEG_INFINITY, f64::NEG_INFINITY];
                for k in 0..8 {
                    let c = [
                        if k & 1 == 0 { b.min[0] } else { b.max[0] },
                        if k & 2 == 0 { b.min[1] } else { b.max[1] },
                        if k & 4 == 0 { b.min[2] } else { b.max[2] },
                    ];
                    let q = pose.to_camera(crate::geom::BoardPoint3::new(c[0], c[1], c[2]));
                    if q[2] <= 1.0 {
                        return None;
                    }
                    let (x, y) = (q[0] / q[2], q[1] / q[2]);
                    out = [out[0].min(x), out[1].min(y), out[2].max(x), out[3].max(y)];
                }
                Some(out)
            })
            .collect()
    }

    /// The indices of the shapes a ray through any normalised point in `area`
    /// (`[x0, y0, x1, y1]`) might meet, given [`World::view_bounds`].
    pub fn candidates(bounds: &[Option<[f64; 4]>], area: [f64; 4], out: &mut Vec<usize>) {
        out.clear();
        out.extend(bounds.iter().enumerate().filter_map(|(i, b)| match b {
            Some(b) => (b[0] <= area[2] && b[2] >= area[0] && b[1] <= area[3] && b[3] >= area[1]).then_some(i),
            None => Some(i),
        }));
    }

    /// As [`World::intersect`], over the shapes `among` only (all if `None`).
    pub fn intersect_among(&self, o: V3, d: V3, t_max: f64, among: Option<&[usize]>) -> Option<Hit> {
        let inv = [1.0 / d[0], 1.0 / d[1], 1.0 / d[2]];
        let mut best: Option<Hit> = None;
        let mut limit = t_max;
        let all: &mut dyn Iterator<Item = &Shape> = match among {
            Some(ids) => &mut ids.iter().map(|&i| &self.shapes[i]),
            None => &mut self.shapes.iter(),
        };
        for s in all {
            if let Some(h) = shape_hit(s, o, d, inv, limit) {
                limit = h.t;
                best = Some(h);
            }
        }
        best.map(|mut h| {
            if dot(h.normal, d) > 0.0 {
                h.normal = [-h.normal[0], -h.normal[1], -h.normal[2]];
            }
            h
        })
    }

    /// Whether anything blocks the ray before `t_max` (a shadow ray).
    pub fn occluded(&self, o: V3, d: V3, t_max: f64) -> bool {
        let inv = [1.0 / d[0], 1.0 / d[1], 1.0 / d[2]];
        let g = &self.grid;
        if d[2] > 1e-6 && g.nx > 0 {
            // A rising ray can only meet the shapes in the cells it crosses below the highest top.
            let t_end = t_max.min((g.top - o[2]) / d[2]);
            if t_end <= 0.0 {
                return false;
            }
            let (ex, ey) = (o[0] + d[0] * t_end, o[1] + d[1] * t_end);
            let (ix0, ix1) = g.range_x(o[0].min(ex), o[0].max(ex));
            let (iy0, iy1) = g.range_y(o[1].min(ey), o[1].max(ey));
            for iy in iy0..=iy1 {
                for ix in ix0..=ix1 {
                    for &i in &g.cells[iy * g.nx + ix] {
                        let s = &self.shapes[i as usize];
                        let top = match s {
                            Shape::Block { b, .. } | Shape::Cup { b, .. } | Shape::Piece { b, .. } => b.max[2],
                            Shape::Plane { z, .. } => *z,
                        };
                        if top >= o[2] && shape_hit(s, o, d, inv, t_max).is_some() {
                            return true;
                        }
                    }
                }
            }
            return false;
        }
        for s in &self.shapes {
            // A ray going up cannot meet anything lying wholly below its origin.
            let top = match s {
                Shape::Block { b, .. } | Shape::Cup { b, .. } | Shape::Piece { b, .. } => b.max[2],
                Shape::Plane { z, .. } => *z,
            };
            if d[2] > 0.0 && top < o[2] {
                continue;
            }
            if shape_hit(s, o, d, inv, t_max).is_some() {
                return true;
            }
        }
        false
    }
}

fn shape_hit(s: &Shape, o: V3, d: V3, inv: V3, t_max: f64) -> Option<Hit> {
    match s {
        Shape::Block { b, top, side, holes } => {
            let (t0, _t1, axis, low) = b.span(o, inv, t_max)?;
            if t0 <= RAY_EPSILON_MM {
                return None; // starts inside: only entering hits count
            }
            let p = at(o, d, t0);
            let mut n = [0.0; 3];
            n[axis] = if low { -1.0 } else { 1.0 };
            let is_top = axis == 2 && !low;
            if is_top && holes.iter().any(|&(cx, cy, r)| (p[0] - cx).powi(2) + (p[1] - cy).powi(2) < r * r) {
                return None;
            }
            Some(Hit { t: t0, point: p, normal: n, surface: if is_top { *top } else { *side } })
        }
        Shape::Cup { b, hole, cx, cy, r, depth } => {
            b.span(o, inv, t_max)?;
            let mut best: Option<Hit> = None;
            // Bottom.
            if d[2] < 0.0 {
                let t = (-depth - o[2]) / d[2];
                if t > RAY_EPSILON_MM && t < t_max {
                    let p = at(o, d, t);
                    if (p[0] - cx).powi(2) + (p[1] - cy).powi(2) <= r * r {
                        best = Some(Hit { t, point: p, normal: [0.0, 0.0, 1.0], surface: Surface::CupBottom { hole: *hole } });
                    }
                }
            }
            // Inner wall: the far root of the cylinder.
            let (ox, oy) = (o[0] - cx, o[1] - cy);
            let a = d[0] * d[0] + d[1] * d[1];
            if a > 1e-18 {
                let bq = ox * d[0] + oy * d[1];
                let c = ox * ox + oy * oy - r * r;
                let disc = bq * bq - a * c;
                if disc >= 0.0 {
                    let t = (-bq + disc.sqrt()) / a;
                    let limit = best.map_or(t_max, |h| h.t);
                    if t > RAY_EPSILON_MM && t < limit {
                        let p = at(o, d, t);
                        if p[2] <= 0.0 && p[2] >= -depth {
                            let n = [-(p[0] - cx) / r, -(p[1] - cy) / r, 0.0];
                            best = Some(Hit { t, point: p, normal: n, surface: Surface::CupWall { hole: *hole } });
                        }
                    }
                }
            }
            best
        }
        Shape::Plane { z, surface } => {
            if d[2] >= 0.0 || o[2] <= *z {
                return None;
            }
            let t = (z - o[2]) / d[2];
            (t > RAY_EPSILON_MM && t < t_max).then(|| Hit { t, point: at(o, d, t), normal: [0.0, 0.0, 1.0], surface: *surface })
        }
        Shape::Piece { b, ring } => {
            b.span(o, inv, t_max)?;
            ring_hit(ring, o, d, t_max)
        }
    }
}

fn ring_hit(g: &Ring, o: V3, d: V3, t_max: f64) -> Option<Hit> {
    let rel = sub(o, g.centre);
    let lo = [dot(g.frame[0], rel), dot(g.frame[1], rel), dot(g.frame[2], rel)];
    let ld = [dot(g.frame[0], d), dot(g.frame[1], d), dot(g.frame[2], d)];
    let mut best: Option<(f64, V3, Surface)> = None;
    let consider = |t: f64, n_local: V3, s: Surface, best: &mut Option<(f64, V3, Surface)>| {
        if t > RAY_EPSILON_MM && t < best.map_or(t_max, |b| b.0) {
            *best = Some((t, n_local, s));
        }
    };
    // Top and bottom faces.
    if ld[2].abs() > 1e-15 {
        for (z, n, s) in [
            (g.half_h, 1.0, Surface::PieceTop { piece: g.piece }),
            (-g.half_h, -1.0, Surface::PieceBottom { piece: g.piece }),
        ] {
            let t = (z - lo[2]) / ld[2];
            let (x, y) = (lo[0] + t * ld[0], lo[1] + t * ld[1]);
            let r2 = x * x + y * y;
            if r2 <= g.r_out * g.r_out && r2 >= g.r_in * g.r_in {
                consider(t, [0.0, 0.0, n], s, &mut best);
            }
        }
    }
    let a = ld[0] * ld[0] + ld[1] * ld[1];
    if a > 1e-18 {
        let bq = lo[0] * ld[0] + lo[1] * ld[1];
        let c0 = lo[0] * lo[0] + lo[1] * lo[1];
        // Outer wall: the near root, seen from outside.
        let disc = bq * bq - a * (c0 - g.r_out * g.r_out);
        if disc >= 0.0 {
            let t = (-bq - disc.sqrt()) / a;
            let z = lo[2] + t * ld[2];
            if z.abs() <= g.half_h {
                let (x, y) = (lo[0] + t * ld[0], lo[1] + t * ld[1]);
                consider(t, [x / g.r_out, y / g.r_out, 0.0], Surface::PieceSide { piece: g.piece }, &mut best);
            }
        }
        // Inner wall: the far root, seen from inside the hole.
        if g.r_in > 0.0 {
            let disc = bq * bq - a * (c0 - g.r_in * g.r_in);
            if disc >= 0.0 {
                let t = (-bq + disc.sqrt()) / a;
                let z = lo[2] + t * ld[2];
                if z.abs() <= g.half_h {
                    let (x, y) = (lo[0] + t * ld[0], lo[1] + t * ld[1]);
                    consider(t, [-x / g.r_in, -y / g.r_in, 0.0], Surface::PieceInner { piece: g.piece }, &mut best);
                }
            }
        }
    }
    best.map(|(t, nl, surface)| {
        let f = &g.frame;
        let n = [
            f[0][0] * nl[0] + f[1][0] * nl[1] + f[2][0] * nl[2],
            f[0][1] * nl[0] + f[1][1] * nl[1] + f[2][1] * nl[2],
            f[0][2] * nl[0] + f[1][2] * nl[1] + f[2][2] * nl[2],
        ];
        Hit { t, point: at(o, d, t), normal: n, surface }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::piece::{PieceId, Team};

    fn washer(x: f64, y: f64, z: Option<f64>, tilt: f64) -> PieceSpec {
        PieceSpec { id: PieceId::of_team(Team::Red, 1), kind: PieceKind::Washer, x_mm: x, y_mm: y, z_mm: z, tilt_deg: tilt, tilt_towards_deg: 90.0 }
    }

    const DOWN: V3 = [0.0, 0.0, -1.0];

    #[test]
    fn a_ray_down_a_hole_reaches_the_cup_bottom() {
        let b = Board::load("holeyboard").unwrap();
        let w = World::build(&b, &[]);
        let h = w.intersect([0.0, 203.2, 1000.0], DOWN, 1e9).unwrap();
        assert_eq!(h.surface, Surface::CupBottom { hole: 0 });
        assert!((h.point[2] + 76.0).abs() < 1e-9, "{h:?}");
        let h = w.intersect([0.0, 350.0, 1000.0], DOWN, 1e9).unwrap();
        assert_eq!(h.surface, Surface::BoardTop);
        // A slanted ray entering the hole near its rim meets the cup wall.
        // Enters the hole 40 mm right of its centre and reaches the wall 13.5 mm down.
        let d = unit([0.8, 0.0, -1.0]);
        let h = w.intersect([-760.0, 203.2, 1000.0], d, 1e9).unwrap();
        assert_eq!(h.surface, Surface::CupWall { hole: 0 });
        assert!((h.point[0] - 50.8).abs() < 1e-9 && (h.point[2] + 13.5).abs() < 1e-9, "{h:?}");
        // Shadow rays leave a cup only through its opening.
        assert!(w.occluded([0.0, 203.2 + 40.0, -70.0], unit([0.0, 1.0, 0.3]), 1e9));
        assert!(!w.occluded([0.0, 203.2, -70.0], unit([0.0, 0.1, 1.0]), 1e9));
    }

    #[test]
    fn a_washer_flat_on_the_cup_bottom_shows_its_annulus() {
        let b = Board::load("holeyboard").unwrap();
        let wz = -76.0 + 1.6;
        let w = World::build(&b, &[washer(0.0, 203.2, Some(wz), 0.0)]);
        // Through the washer's hole to the cup bottom, then on its annulus.
        assert_eq!(w.intersect([0.0, 203.2, 1000.0], DOWN, 1e9).unwrap().surface, Surface::CupBottom { hole: 0 });
        let h = w.intersect([20.0, 203.2, 1000.0], DOWN, 1e9).unwrap();
        assert_eq!(h.surface, Surface::PieceTop { piece: 0 });
        assert!((h.point[2] - (wz + 1.6)).abs() < 1e-9);
        assert_eq!(w.intersect([33.0, 203.2, 1000.0], DOWN, 1e9).unwrap().surface, Surface::CupBottom { hole: 0 });
    }

    #[test]
    fn a_tilted_washer_top_is_higher_on_its_rising_side() {
        let b = Board::load("holeyboard").unwrap();
        let w = World::build(&b, &[washer(0.0, 700.0, Some(20.0), 20.0)]);
        let hi = w.intersect([0.0, 720.0, 1000.0], DOWN, 1e9).unwrap();
        let lo = w.intersect([0.0, 680.0, 1000.0], DOWN, 1e9).unwrap();
        let expect = 20.0 * 20f64.to_radians().tan();
        // Top face plane through (0, 700, 20 + 1.6 / cos 20): rises tan(20) per mm towards +y.
        assert!((hi.point[2] - lo.point[2] - 2.0 * expect).abs() < 1e-9, "{hi:?} {lo:?}");
    }

    #[test]
    fn weights_cast_shadows_and_gutters_lie_lower() {
        let b = Board::load("shuffleboard-22ft").unwrap();
        let p = PieceSpec { id: PieceId::of_team(Team::Blue, 1), kind: PieceKind::Weight, x_mm: 0.0, y_mm: 200.0, z_mm: None, tilt_deg: 0.0, tilt_towards_deg: 0.0 };
        let w = World::build(&b, &[p]);
        let top = w.intersect([0.0, 200.0, 1000.0], DOWN, 1e9).unwrap();
        assert_eq!(top.surface, Surface::PieceTop { piece: 0 });
        assert!((top.point[2] - 25.0).abs() < 1e-9);
        assert!(w.occluded([0.0, 200.0 + 35.0, 0.0], unit([0.0, -1.0, 0.2]), 1e9));
        assert!(!w.occluded([0.0, 200.0 + 35.0, 0.0], unit([0.0, 1.0, 0.2]), 1e9));
        let g = w.intersect([280.0, 200.0, 1000.0], DOWN, 1e9).unwrap();
        assert_eq!(g.surface, Surface::Gutter);
        assert!((g.point[2] + 38.1).abs() < 1e-9);
    }
}
