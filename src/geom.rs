//! Typed coordinates: board millimetres (the one board frame) and image pixels, never mixed.
//!
//! The board frame is defined in `docs/board-format.md`: millimetres, origin at the
//! centre of the target-end edge of the playing surface, `y` along the board towards
//! the thrower, `x` across it (to the thrower's left), `z` up, the surface at `z = 0`.

use serde::{Deserialize, Serialize};

/// A point on the board plane (`z = 0`), in board millimetres.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, Default)]
pub struct BoardPoint {
    pub x_mm: f64,
    pub y_mm: f64,
}

impl BoardPoint {
    pub const fn new(x_mm: f64, y_mm: f64) -> Self {
        Self { x_mm, y_mm }
    }

    /// Euclidean distance in millimetres: the square root of [`BoardPoint::distance_squared`] (`hypot` guards
    /// against overflow past 1e154 mm, a library call on every use; board distances are nowhere near, and a square
    /// root is one instruction).
    #[inline]
    pub fn distance(self, other: BoardPoint) -> f64 {
        self.distance_squared(other).sqrt()
    }

    /// The squared distance (mm^2): compared with a squared radius, the test for every cell of a grid needs no
    /// square root and no `hypot` library call.
    #[inline]
    pub fn distance_squared(self, other: BoardPoint) -> f64 {
        let (dx, dy) = (self.x_mm - other.x_mm, self.y_mm - other.y_mm);
        dx * dx + dy * dy
    }

    /// The point at height `z_mm` above (or below, if negative) this one.
    pub fn at_height(self, z_mm: f64) -> BoardPoint3 {
        BoardPoint3 { x_mm: self.x_mm, y_mm: self.y_mm, z_mm }
    }

    /// This point moved by `d_mm` along the unit direction `dir`.
    pub fn moved(self, dir: Direction, d_mm: f64) -> BoardPoint {
        BoardPoint::new(self.x_mm + dir.dx * d_mm, self.y_mm + dir.dy * d_mm)
    }
}

/// A point in the board's 3D frame, in millimetres (`z` up, the surface at `z = 0`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, Default)]
pub struct BoardPoint3 {
    pub x_mm: f64,
    pub y_mm: f64,
    pub z_mm: f64,
}

impl BoardPoint3 {
    pub const fn new(x_mm: f64, y_mm: f64, z_mm: f64) -> Self {
        Self { x_mm, y_mm, z_mm }
    }

    /// Its projection straight down onto the board plane.
    pub fn on_plane(self) -> BoardPoint {
        BoardPoint::new(self.x_mm, self.y_mm)
    }
}

/// A unit direction in the board plane.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Direction {
    pub dx: f64,
    pub dy: f64,
}

impl Direction {
    /// Towards the target end (`-y`).
    pub const TOWARDS_TARGET: Direction = Direction { dx: 0.0, dy: -1.0 };
    /// Towards the thrower (`+y`).
    pub const TOWARDS_THROWER: Direction = Direction { dx: 0.0, dy: 1.0 };
    pub const PLUS_X: Direction = Direction { dx: 1.0, dy: 0.0 };
    pub const MINUS_X: Direction = Direction { dx: -1.0, dy: 0.0 };

    /// The unit vector from `from` to `to`; `+x` if the two points coincide.
    pub fn between(from: BoardPoint, to: BoardPoint) -> Direction {
        let (dx, dy) = (to.x_mm - from.x_mm, to.y_mm - from.y_mm);
        let n = dx.hypot(dy);
        if n > 0.0 {
            Direction { dx: dx / n, dy: dy / n }
        } else {
            Direction::PLUS_X
        }
    }

    pub fn reversed(self) -> Direction {
        Direction { dx: -self.dx, dy: -self.dy }
    }
}

/// A piece's outline seen from straight above: a circle on the board plane.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Footprint {
    pub centre: BoardPoint,
    pub radius_mm: f64,
}

impl Footprint {
    pub const fn new(centre: BoardPoint, radius_mm: f64) -> Self {
        Self { centre, radius_mm }
    }

    /// The same footprint moved by `d_mm` along `dir`.
    pub fn moved(self, dir: Direction, d_mm: f64) -> Footprint {
        Footprint { centre: self.centre.moved(dir, d_mm), radius_mm: self.radius_mm }
    }
}

/// A point in an image, in pixels (`u` right, `v` down, origin at the top-left
/// pixel's top-left corner, so the centre of pixel (0, 0) is (0.5, 0.5)).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, Default)]
pub struct PixelPoint {
    pub u: f64,
    pub v: f64,
}

impl PixelPoint {
    pub const fn new(u: f64, v: f64) -> Self {
        Self { u, v }
    }

    pub fn distance(self, other: PixelPoint) -> f64 {
        (self.u - other.u).hypot(self.v - other.v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn moving_along_a_direction_moves_by_that_distance() {
        let p = BoardPoint::new(10.0, 20.0);
        let q = BoardPoint::new(13.0, 24.0);
        let dir = Direction::between(p, q);
        let r = p.moved(dir, 5.0);
        assert!(r.distance(q) < 1e-12, "{r:?} vs {q:?}");
    }

    #[test]
    fn coincident_points_give_a_defined_direction() {
        let p = BoardPoint::new(1.0, 1.0);
        let d = Direction::between(p, p);
        assert!((d.dx.hypot(d.dy) - 1.0).abs() < 1e-12);
    }
}
