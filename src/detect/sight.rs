//! Lines of sight for detection: whether the camera sees a board point, past the
//! board's own solids ([`crate::board::Solids`]: the surface slab with its cups'
//! openings, gutters, rails, walls, gate bar, partitions) and pieces already found
//! (flat pieces as cylinders or rings). Detection does not depend on the renderer:
//! this is the board's solid model, intersected for occlusion only.

use crate::board::solids::{box_span, RAY_EPSILON_MM};
use crate::board::{Board, Layout, Solids};
use crate::geom::{BoardPoint3, Footprint};
use crate::piece::PieceKind;

/// A 3-vector in the board frame (mm) or a direction.
type V3 = [f64; 3];


/// An axis-aligned box, hit only from outside; its top face may have holes
/// (a washer board's cups) that let rays through.
#[derive(Debug, Clone)]
struct Block {
    min: V3,
    max: V3,
    /// Openings in the top face: centre `x`, `y` and radius (mm).
    holes: Vec<(f64, f64, f64)>,
}

/// The inside of a cup under a hole: its wall and its bottom.
#[derive(Debug, Clone, Copy)]
struct CupInside {
    min: V3,
    max: V3,
    cx: f64,
    cy: f64,
    r: f64,
    depth: f64,
}

/// A piece as a solid: a cylinder (a weight's body, a disc) or a ring (a
/// washer), lying flat (its axis vertical) or tilted (a washer leaning in a hole).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct PieceSolid {
    /// Its centre, half way through its thickness.
    pub centre: BoardPoint3,
    pub r_out: f64,
    pub r_in: f64,
    pub half_height: f64,
    /// The frame its faces lie in: two unit vectors along them, then their normal (the axis).
    frame: [V3; 3],
}

/// The frame of a piece lying flat.
const FLAT: [V3; 3] = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]];

impl PieceSolid {
    /// A piece of `kind` on `board` lying flat with footprint `fp` and its top face at `top_z` (mm).
    pub fn on(board: &Board, kind: PieceKind, fp: Footprint, top_z: f64) -> PieceSolid {
        let (r_out, r_in, half_height) = PieceSolid::size(board, kind);
        PieceSolid { centre: fp.centre.at_height(top_z - half_height), r_out, r_in, half_height, frame: FLAT }
    }

    /// A piece of `kind` on `board` with its centre (half way through it) at
    /// `centre`, tilted by `tilt_deg` so that its faces rise towards azimuth
    /// `rise_rad` (from the board's x axis).
    pub fn tilted(board: &Board, kind: PieceKind, centre: BoardPoint3, tilt_deg: f64, rise_rad: f64) -> PieceSolid {
        let (r_out, r_in, half_height) = PieceSolid::size(board, kind);
        let (t, (sa, ca)) = (tilt_deg.to_radians(), rise_rad.sin_cos());
        let frame = [[t.cos() * ca, t.cos() * sa, t.sin()], [-sa, ca, 0.0], [-t.sin() * ca, -t.sin() * sa, t.cos()]];
        PieceSolid { centre, r_out, r_in, half_height, frame }
    }

    /// Outer radius, inner radius (a washer's hole, else 0) and half thickness (mm).
    fn size(board: &Board, kind: PieceKind) -> (f64, f64, f64) {
        let size = board.piece();
        let r_in = match (&board.layout, kind) {
            (Layout::Washer(w), PieceKind::Washer) => w.washer_inner_diameter_mm / 2.0,
            _ => 0.0,
        };
        (size.radius_mm, r_in, size.thickness_mm / 2.0)
    }

    /// A board-frame vector in the piece's frame.
    fn local(&self, v: V3) -> V3 {
        if self.frame == FLAT {
            return v;
        }
        let dot = |a: V3| a[0] * v[0] + a[1] * v[1] + a[2] * v[2];
        [dot(self.frame[0]), dot(self.frame[1]), dot(self.frame[2])]
    }

    /// Whether the segment from `a` to `b` meets the piece.
    pub fn meets(&self, a: BoardPoint3, b: BoardPoint3) -> bool {
        let d = [b.x_mm - a.x_mm, b.y_mm - a.y_mm, b.z_mm - a.z_mm];
        let len = (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]).sqrt();
        len > 0.0 && self.hit([a.x_mm, a.y_mm, a.z_mm], d.map(|v| v / len), len)
    }

    /// Whether the ray `o + t d` meets the piece at `RAY_EPSILON_MM < t < t_max`.
    fn hit(&self, o: V3, d: V3, t_max: f64) -> bool {
        let c = [self.centre.x_mm, self.centre.y_mm, self.centre.z_mm];
        // The box round the sphere round the piece, whatever its tilt.
        let e = self.r_out + self.half_height;
        let inv = [1.0 / d[0], 1.0 / d[1], 1.0 / d[2]];
        if span([c[0] - e, c[1] - e, c[2] - e], [c[0] + e, c[1] + e, c[2] + e], o, inv, t_max).is_none() {
            return false;
        }
        let lo = self.local([o[0] - c[0], o[1] - c[1], o[2] - c[2]]);
        let d = self.local(d);
        let inside = |t: f64| t > RAY_EPSILON_MM && t < t_max;
        // Top and bottom faces (rings between the inner and outer radius).
        if d[2].abs() > 1e-15 {
            for z in [self.half_height, -self.half_height] {
                let t = (z - lo[2]) / d[2];
                let (x, y) = (lo[0] + t * d[0], lo[1] + t * d[1]);
                let r2 = x * x + y * y;
                if r2 <= self.r_out * self.r_out && r2 >= self.r_in * self.r_in && inside(t) {
                    return true;
                }
            }
        }
        let a = d[0] * d[0] + d[1] * d[1];
        if a > 1e-18 {
            let bq = lo[0] * d[0] + lo[1] * d[1];
            let c0 = lo[0] * lo[0] + lo[1] * lo[1];
            // The outer wall from outside (near root), the inner from inside its hole (far root).
            let walls = [(self.r_out, -1.0), (self.r_in, 1.0)];
            for (r, root) in walls.into_iter().filter(|(r, _)| *r > 0.0) {
                let disc = bq * bq - a * (c0 - r * r);
                if disc >= 0.0 {
                    let t = (-bq + root * disc.sqrt()) / a;
                    if (lo[2] + t * d[2]).abs() <= self.half_height && inside(t) {
                        return true;
                    }
                }
            }
        }
        false
    }

    /// The corners of the box round the piece.
    fn min(&self) -> V3 {
        let (c, e) = (self.centre, self.r_out + self.half_height);
        [c.x_mm - e, c.y_mm - e, c.z_mm - e]
    }

    fn max(&self) -> V3 {
        let (c, e) = (self.centre, self.r_out + self.half_height);
        [c.x_mm + e, c.y_mm + e, c.z_mm + e]
    }

    /// The highest point of the box round the piece (mm).
    fn top(&self) -> f64 {
        self.max()[2]
    }
}

/// Pieces found that hide outline of the piece measured, with their highest top.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Occluders {
    pieces: Vec<PieceSolid>,
    top: f64,
}

/// No occluding pieces.
pub(super) static NO_OCCLUDERS: Occluders = Occluders { pieces: Vec::new(), top: f64::NEG_INFINITY };

impl Occluders {
    pub fn new(pieces: Vec<PieceSolid>) -> Occluders {
        let top = pieces.iter().map(PieceSolid::top).fold(f64::NEG_INFINITY, f64::max);
        Occluders { pieces, top }
    }
}

/// The board's solids as occluders.
#[derive(Debug, Clone)]
pub(super) struct Sight {
    blocks: Vec<Block>,
    cups: Vec<CupInside>,
    /// The floor the board stands on: only a falling ray meets it.
    floor_z: f64,
    /// The highest top of any solid.
    top: f64,
}

impl Sight {
    /// The sight past `board`'s solids, and past what its build may hold that
    /// the board does not state ([`Solids::possibly_hiding`]).
    pub fn new(board: &Board) -> Sight {
        Sight::of(&Solids::possibly_hiding(board))
    }

    fn of(solids: &Solids) -> Sight {
        let holes: Vec<(f64, f64, f64)> = solids.cups.iter().map(|c| (c.x_mm, c.y_mm, c.radius_mm)).collect();
        let blocks = solids
            .boxes
            .iter()
            .map(|b| Block { min: b.min, max: b.max, holes: if b.cut_by_cups { holes.clone() } else { Vec::new() } })
            .collect();
        let cups = solids
            .cups
            .iter()
            .map(|c| {
                let (min, max) = c.bounds();
                CupInside { min, max, cx: c.x_mm, cy: c.y_mm, r: c.radius_mm, depth: c.depth_mm }
            })
            .collect();
        Sight { blocks, cups, floor_z: solids.floor_z_mm, top: solids.top_z_mm() }
    }

    /// Whether the segment from `p` to `eye` is clear of the board's solids and of
    /// `pieces`, starting `clearance` mm along it (the surface `p` lies on must
    /// not count as blocking it).
    pub fn clear(&self, p: BoardPoint3, eye: BoardPoint3, clearance: f64, pieces: &Occluders) -> bool {
        let d = [eye.x_mm - p.x_mm, eye.y_mm - p.y_mm, eye.z_mm - p.z_mm];
        let len = (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]).sqrt();
        let d = [d[0] / len, d[1] / len, d[2] / len];
        let o = [p.x_mm + d[0] * clearance, p.y_mm + d[1] * clearance, p.z_mm + d[2] * clearance];
        !self.blocked(o, d, len, pieces)
    }

    /// Whether anything blocks the ray `o + t d` (`d` unit) before `t_max`.
    fn blocked(&self, o: V3, d: V3, t_max: f64, pieces: &Occluders) -> bool {
        let inv = [1.0 / d[0], 1.0 / d[1], 1.0 / d[2]];
        if d[2] < 0.0 && o[2] > self.floor_z {
            let t = (self.floor_z - o[2]) / d[2];
            if t > RAY_EPSILON_MM && t < t_max {
                return true;
            }
        }
        // A rising ray meets only what it passes below the highest top: the
        // solids whose plan overlaps its plan up to there (and none lying
        // wholly below its origin).
        let reach = if d[2] > 0.0 {
            let top = self.top.max(pieces.top);
            let t_end = t_max.min((top - o[2]) / d[2]);
            if t_end <= 0.0 {
                return false;
            }
            let (ex, ey) = (o[0] + d[0] * t_end, o[1] + d[1] * t_end);
            [o[0].min(ex), o[1].min(ey), o[0].max(ex), o[1].max(ey)]
        } else {
            [f64::NEG_INFINITY, f64::NEG_INFINITY, f64::INFINITY, f64::INFINITY]
        };
        let near = |min: V3, max: V3| !(d[2] > 0.0 && max[2] < o[2]) && min[0] <= reach[2] && max[0] >= reach[0] && min[1] <= reach[3] && max[1] >= reach[1];
        for b in self.blocks.iter().filter(|b| near(b.min, b.max)) {
            if let Some((t0, axis, low)) = span(b.min, b.max, o, inv, t_max) {
                // Only entering hits count: a ray starting inside leaves it.
                if t0 <= RAY_EPSILON_MM {
                    continue;
                }
                let p = [o[0] + d[0] * t0, o[1] + d[1] * t0];
                let through_hole = axis == 2 && !low && b.holes.iter().any(|&(cx, cy, r)| (p[0] - cx).powi(2) + (p[1] - cy).powi(2) < r * r);
                if !through_hole {
                    return true;
                }
            }
        }
        for c in self.cups.iter().filter(|c| near(c.min, c.max)) {
            if span(c.min, c.max, o, inv, t_max).is_some() && cup_hit(c, o, d, t_max) {
                return true;
            }
        }
        pieces.pieces.iter().filter(|p| near(p.min(), p.max())).any(|p| p.hit(o, d, t_max))
    }
}

/// Whether a ray meets a cup's bottom (falling) or its wall from inside.
fn cup_hit(c: &CupInside, o: V3, d: V3, t_max: f64) -> bool {
    let mut limit = t_max;
    if d[2] < 0.0 {
        let t = (-c.depth - o[2]) / d[2];
        if t > RAY_EPSILON_MM && t < t_max {
            let p = [o[0] + d[0] * t, o[1] + d[1] * t];
            if (p[0] - c.cx).powi(2) + (p[1] - c.cy).powi(2) <= c.r * c.r {
                limit = t;
            }
        }
    }
    if limit < t_max {
        return true;
    }
    let (ox, oy) = (o[0] - c.cx, o[1] - c.cy);
    let a = d[0] * d[0] + d[1] * d[1];
    if a > 1e-18 {
        let bq = ox * d[0] + oy * d[1];
        let cq = ox * ox + oy * oy - c.r * c.r;
        let disc = bq * bq - a * cq;
        if disc >= 0.0 {
            // The inner wall: the far root of the cylinder.
            let t = (-bq + disc.sqrt()) / a;
            let z = o[2] + d[2] * t;
            if t > RAY_EPSILON_MM && t < limit && z <= 0.0 && z >= -c.depth {
                return true;
            }
        }
    }
    false
}

/// The ray's entry into the box `min..max` ([`box_span`]): the entry parameter, the axis of the face it enters by
/// and whether that is the face on the low side.
#[inline]
fn span(min: V3, max: V3, o: V3, inv: V3, t_max: f64) -> Option<(f64, usize, bool)> {
    box_span(min, max, o, inv, t_max).map(|b| (b.t_in, b.axis, b.low_face))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geom::BoardPoint;

    /// A camera high above the board, off to one side.
    fn eye_at(x: f64, y: f64) -> BoardPoint3 {
        BoardPoint3::new(x, y, 1500.0)
    }

    #[test]
    fn a_cup_floor_is_seen_only_through_its_opening() {
        let b = Board::load("holeyboard").unwrap();
        let s = Sight::new(&b);
        let h = b.washer().unwrap().holes[0];
        let floor = -b.washer().unwrap().cup_depth_mm;
        // Straight above the hole's centre the floor is in view; near the rim,
        // seen from far to the other side, the cup's wall hides it.
        assert!(s.clear(h.centre().at_height(floor), eye_at(h.x_mm, h.y_mm), 1.5, &NO_OCCLUDERS));
        let near_rim = BoardPoint::new(h.x_mm + h.radius() - 2.0, h.y_mm).at_height(floor);
        assert!(!s.clear(near_rim, eye_at(h.x_mm + 1500.0, h.y_mm), 1.5, &NO_OCCLUDERS));
        assert!(s.clear(near_rim, eye_at(h.x_mm - 200.0, h.y_mm), 1.5, &NO_OCCLUDERS));
    }

    #[test]
    fn a_flat_piece_hides_what_lies_under_it_and_not_beside_it() {
        let b = Board::load("shuffleboard-22ft").unwrap();
        let s = Sight::new(&b);
        let w = PieceSolid::on(&b, PieceKind::Weight, Footprint::new(BoardPoint::new(0.0, 300.0), 29.35), 25.0);
        let eye = eye_at(0.0, 1300.0);
        // A surface point just behind the weight (away from the camera) is hidden;
        // one just in front of it is not.
        assert!(!s.clear(BoardPoint3::new(0.0, 300.0 - 31.0, 0.0), eye, 1.5, &Occluders::new(vec![w])));
        assert!(s.clear(BoardPoint3::new(0.0, 300.0 + 31.0, 0.0), eye, 1.5, &Occluders::new(vec![w])));
        assert!(s.clear(BoardPoint3::new(0.0, 300.0 - 31.0, 0.0), eye, 1.5, &NO_OCCLUDERS));
        // A gutter floor seen past the rail from the far side is hidden by it.
        let gutter = BoardPoint3::new(b.surface.half_width() + 20.0, 300.0, -38.1);
        assert!(!s.clear(gutter, BoardPoint3::new(-3000.0, 300.0, 300.0), 1.5, &NO_OCCLUDERS));
        assert!(s.clear(gutter, eye_at(b.surface.half_width() + 20.0, 300.0), 1.5, &NO_OCCLUDERS));
    }

    #[test]
    fn a_washer_ring_lets_the_eye_through_its_hole() {
        let b = Board::load("holeyboard").unwrap();
        let s = Sight::new(&b);
        let ring = PieceSolid::on(&b, PieceKind::Washer, Footprint::new(BoardPoint::new(0.0, 700.0), 31.75), 3.2);
        let eye = eye_at(0.0, 700.0);
        assert!(s.clear(BoardPoint3::new(0.0, 700.0, 0.0), eye, 1.5, &Occluders::new(vec![ring])));
        assert!(!s.clear(BoardPoint3::new(20.0, 700.0, 0.0), eye, 1.5, &Occluders::new(vec![ring])));
    }

    #[test]
    fn a_tilted_washer_hides_less_of_the_floor_along_its_tilt() {
        // A washer leaning 40 degrees, rising towards +x, over the board's
        // floor; the camera straight above it. Its shadow along x is
        // foreshortened to r cos 40 = 24.3 mm; across it, it is the full 31.75 mm.
        let b = Board::load("holeyboard").unwrap();
        let s = Sight::new(&b);
        let (x, y) = (0.0, 2000.0);
        let tilted = Occluders::new(vec![PieceSolid::tilted(&b, PieceKind::Washer, BoardPoint3::new(x, y, 40.0), 40.0, 0.0)]);
        let flat = Occluders::new(vec![PieceSolid::on(&b, PieceKind::Washer, Footprint::new(BoardPoint::new(x, y), 31.75), 41.6)]);
        let eye = BoardPoint3::new(x, y, 1500.0);
        let below = |dx: f64, dy: f64| BoardPoint3::new(x + dx, y + dy, 20.0);
        // Under its ring, either way: hidden; through its hole: seen.
        assert!(!s.clear(below(20.0, 0.0), eye, 1.5, &tilted));
        assert!(!s.clear(below(0.0, 28.0), eye, 1.5, &tilted));
        assert!(s.clear(below(0.0, 0.0), eye, 1.5, &tilted));
        // Past its foreshortened reach along the tilt: seen, where the same washer flat hides it.
        assert!(s.clear(below(28.0, 0.0), eye, 1.5, &tilted));
        assert!(!s.clear(below(28.0, 0.0), eye, 1.5, &flat));
    }
}
