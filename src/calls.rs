//! Geometric calls: pure functions from a piece's footprint (or pose) and a board to
//! the referee's call, with the signed margin to the boundary that decides it.
//!
//! # Margins
//!
//! Every call names its *decisive boundary*: of the boundaries whose crossing would
//! change the call, the one nearest the piece. `margin_mm` is the signed distance by
//! which the piece has **crossed** that boundary in the direction the boundary's
//! name implies (past a line towards the target, over an edge, into a hole, below
//! the surface, clear of a partition): positive means crossed, negative means short
//! of it. The call changes exactly where the margin passes through zero, and
//! `towards` is the board direction in which moving the piece increases the margin
//! (for boundaries that a move in the board plane can cross).
//!
//! A piece touching a line belongs to the lower zone: crossing requires a strictly
//! positive margin ("you should be able to see some wood between the line and the
//! weight").

use crate::board::{Board, GateFace, Hole, Layout, Shuffleboard, Sjoelbak, Surface, WasherBoard};
use crate::geom::{BoardPoint, BoardPoint3, Direction, Footprint};
use serde::{Deserialize, Serialize};

/// A washer whose high edge rises no more than this above its low edge is lying
/// flat: two washer thicknesses, so a washer lying across one or two others on
/// the cup bottom is still `in`; anything steeper is propped on the rim or wall.
pub const FLAT_RISE_MAX_MM: f64 = 6.4;

/// Which designated foul line counts for `zone1` / `short` on a shuffleboard.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FoulLine {
    /// The foul line on the target side (the usual choice).
    #[default]
    Long,
    /// The foul line on the thrower's side.
    Short,
}

/// The line, edge or rim that decides a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "boundary")]
pub enum Boundary {
    /// The 3-line's target-side edge, crossed by the footprint's far edge.
    TreyLine,
    /// The 2-line's target-side edge.
    DeuceLine,
    /// The designated foul line's target-side edge.
    FoulLine,
    /// The target end of the surface, crossed by the footprint's edge (a hanger).
    EndOverhang,
    /// A long side of the surface, crossed by the footprint's edge (with an end overhang: a corner hanger).
    SideOverhang,
    /// An edge of the surface crossed by the piece's centre (it falls off).
    SurfaceEdge,
    /// A hole's rim, crossed by the washer's centre.
    HoleRim { hole: usize },
    /// Lying flat: the washer's rise (high edge over low edge) below [`FLAT_RISE_MAX_MM`].
    Flatness { hole: usize },
    /// The gate bar's front face, crossed by the disc's far edge.
    GateFront,
    /// The gate bar's back (compartment-side) face, crossed by the disc's far edge: a board whose discs count
    /// only once wholly past the bar ([`crate::board::GateFace::Back`]).
    GateBack,
    /// The face of a partition between compartments, cleared by the disc's edge.
    Partition { partition: usize },
}

/// The call for one shuffleboard weight.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ShuffleCall {
    /// Its centre is off the playing surface.
    Off,
    /// On the surface but not entirely past the designated foul line.
    Short,
    Zone1,
    Zone2,
    Zone3,
    /// Hanging over the target end.
    Hanger,
    /// Hanging over the target end and a side.
    CornerHanger,
}

impl ShuffleCall {
    pub fn name(self) -> &'static str {
        match self {
            ShuffleCall::Off => "off",
            ShuffleCall::Short => "short",
            ShuffleCall::Zone1 => "zone1",
            ShuffleCall::Zone2 => "zone2",
            ShuffleCall::Zone3 => "zone3",
            ShuffleCall::Hanger => "hanger",
            ShuffleCall::CornerHanger => "corner_hanger",
        }
    }
}

/// The call for one washer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "call")]
pub enum WasherCall {
    /// Lying flat in the cup of hole `hole` (index into the board's holes).
    In { hole: usize },
    /// In hole `hole` but propped against the rim, not flat on the bottom.
    Leaner { hole: usize },
    /// On the board surface.
    OnBoard,
    /// Off the board.
    Off,
}

/// The call for one sjoelen disc.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "call")]
pub enum SjoelCall {
    /// Entirely past the gate front, between the walls of compartment `compartment`
    /// (index into the board's compartments, ascending `x`).
    Compartment { compartment: usize },
    /// Not counting: short of the gate, half through it, or on a partition.
    None,
}

/// A call with its decisive boundary and signed margin.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Measured<C> {
    pub call: C,
    pub boundary: Boundary,
    pub margin_mm: f64,
    /// The board direction in which moving the piece increases the margin; `None`
    /// for boundaries crossed by a change of height or tilt rather than position.
    pub towards: Option<Direction>,
}

#[derive(Clone, Copy)]
struct Candidate {
    boundary: Boundary,
    crossing: f64,
    towards: Option<Direction>,
}

fn decisive<C>(call: C, candidates: &[Candidate]) -> Measured<C> {
    let c = candidates
        .iter()
        .min_by(|a, b| a.crossing.abs().total_cmp(&b.crossing.abs()))
        .copied()
        .expect("every call has at least one boundary");
    Measured { call, boundary: c.boundary, margin_mm: c.crossing, towards: c.towards }
}

/// The sign of `x` as the direction across the board (`+x` for zero).
fn side_of(x: f64) -> Direction {
    if x < 0.0 {
        Direction::MINUS_X
    } else {
        Direction::PLUS_X
    }
}

/// How far a centre has crossed the nearest surface edge (positive: off the surface),
/// with the direction that increases it.
fn centre_edge_crossing(surface: &Surface, c: BoardPoint) -> Candidate {
    let edges = [
        (-c.y_mm, Direction::TOWARDS_TARGET),
        (c.y_mm - surface.length_mm, Direction::TOWARDS_THROWER),
        (c.x_mm.abs() - surface.half_width(), side_of(c.x_mm)),
    ];
    // Off the surface: the largest crossing decides (all must be undone to come back).
    // On it: the nearest edge (the largest, i.e. least negative, crossing) decides.
    let (crossing, dir) = edges.into_iter().max_by(|a, b| a.0.total_cmp(&b.0)).expect("three edges");
    Candidate { boundary: Boundary::SurfaceEdge, crossing, towards: Some(dir) }
}

/// The call for a shuffleboard weight with footprint `fp`.
pub fn shuffle_call(board: &Board, geometry: &Shuffleboard, fp: Footprint, foul: FoulLine) -> Measured<ShuffleCall> {
    let surface = &board.surface;
    let (c, r) = (fp.centre, fp.radius_mm);
    let edge = centre_edge_crossing(surface, c);
    if edge.crossing > 0.0 {
        return decisive(ShuffleCall::Off, &[edge]);
    }
    let end = Candidate { boundary: Boundary::EndOverhang, crossing: r - c.y_mm, towards: Some(Direction::TOWARDS_TARGET) };
    let side = Candidate {
        boundary: Boundary::SideOverhang,
        crossing: c.x_mm.abs() + r - surface.half_width(),
        towards: Some(side_of(c.x_mm)),
    };
    let line = |boundary, y: f64| Candidate { boundary, crossing: y - (c.y_mm + r), towards: Some(Direction::TOWARDS_TARGET) };
    let trey = line(Boundary::TreyLine, geometry.lines.trey_line_mm);
    let deuce = line(Boundary::DeuceLine, geometry.lines.deuce_line_mm);
    let foul_y = match foul {
        FoulLine::Long => geometry.lines.long_foul_line_mm,
        FoulLine::Short => geometry.lines.short_foul_line_mm,
    };
    let foul = line(Boundary::FoulLine, foul_y);

    if end.crossing > 0.0 {
        if side.crossing > 0.0 {
            decisive(ShuffleCall::CornerHanger, &[end, side, edge])
        } else {
            decisive(ShuffleCall::Hanger, &[end, side, edge])
        }
    } else if trey.crossing > 0.0 {
        decisive(ShuffleCall::Zone3, &[trey, end, edge])
    } else if deuce.crossing > 0.0 {
        decisive(ShuffleCall::Zone2, &[deuce, trey, edge])
    } else if foul.crossing > 0.0 {
        decisive(ShuffleCall::Zone1, &[foul, deuce, edge])
    } else {
        decisive(ShuffleCall::Short, &[foul, edge])
    }
}

/// A washer's resting pose: the centre of the washer (mid-thickness) in the board
/// frame, and its tilt from horizontal.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct WasherPose {
    pub centre: BoardPoint3,
    pub tilt_deg: f64,
}

impl WasherPose {
    /// A washer lying flat at height `z_mm` of its underside.
    pub fn flat(x_mm: f64, y_mm: f64, underside_z_mm: f64, thickness_mm: f64) -> Self {
        WasherPose { centre: BoardPoint3::new(x_mm, y_mm, underside_z_mm + thickness_mm / 2.0), tilt_deg: 0.0 }
    }

    /// How far its high edge rises above its low edge.
    pub fn rise_mm(&self, w: &WasherBoard) -> f64 {
        w.washer_outer_diameter_mm * self.tilt_deg.to_radians().sin().abs()
    }

    /// The height of its highest point.
    pub fn top_mm(&self, w: &WasherBoard) -> f64 {
        let t = self.tilt_deg.to_radians();
        self.centre.z_mm + w.washer_outer_diameter_mm / 2.0 * t.sin().abs() + w.washer_thickness_mm / 2.0 * t.cos().abs()
    }
}

/// The call for a washer in pose `pose` on a washer board.
pub fn washer_call(board: &Board, geometry: &WasherBoard, pose: WasherPose) -> Measured<WasherCall> {
    let c = pose.centre.on_plane();
    let edge = centre_edge_crossing(&board.surface, c);
    if edge.crossing > 0.0 {
        return decisive(WasherCall::Off, &[edge]);
    }
    let rim = |i: usize, h: &Hole| Candidate {
        boundary: Boundary::HoleRim { hole: i },
        crossing: h.radius() - c.distance(h.centre()),
        towards: Some(Direction::between(c, h.centre())),
    };
    let inside = geometry.holes.iter().enumerate().find(|(_, h)| c.distance(h.centre()) < h.radius());
    match inside {
        Some((i, h)) => {
            let rim = rim(i, h);
            // A flat washer whose centre is over a hole has fallen to the cup
            // bottom (or onto washers there): flatness alone decides in vs leaner.
            let flat = Candidate {
                boundary: Boundary::Flatness { hole: i },
                crossing: FLAT_RISE_MAX_MM - pose.rise_mm(geometry),
                towards: None,
            };
            if flat.crossing > 0.0 {
                decisive(WasherCall::In { hole: i }, &[flat, rim])
            } else {
                decisive(WasherCall::Leaner { hole: i }, &[flat, rim])
            }
        }
        None => {
            let mut candidates: Vec<Candidate> = geometry.holes.iter().enumerate().map(|(i, h)| rim(i, h)).collect();
            candidates.push(edge);
            decisive(WasherCall::OnBoard, &candidates)
        }
    }
}

/// A disc tilted by more than this (degrees) is propped on something: a
/// partition it overlaps holds it up. Below it the disc lies flat (a fit's
/// tilt of a flat disc is a few tenths of a degree at most).
pub const DISC_FLAT_TILT_MAX_DEG: f64 = 2.0;

/// Whether a disc tilted by `tilt_deg` lies flat ([`DISC_FLAT_TILT_MAX_DEG`]): flat, it rests on a partition only by
/// its centre; tilted, by its edge.
pub fn disc_lies_flat(tilt_deg: f64) -> bool {
    tilt_deg.abs() <= DISC_FLAT_TILT_MAX_DEG
}

/// The call for a sjoelen disc with footprint `fp`, tilted by `tilt_deg`.
///
/// Past the gate a disc is in the compartment its centre is in, unless it rests
/// on a partition (rule 003: a disc that "remains on one of the partition
/// walls" does not count). A flat disc rests on a partition only with its
/// centre over the partition's top (beside it, it would tip off): a flat disc
/// beside a partition lies on the floor, touching the partition or not, and its
/// margin is how far its centre is from the top's edge. A tilted disc that
/// overlaps a partition is propped on it.
pub fn sjoel_call(geometry: &Sjoelbak, fp: Footprint, tilt_deg: f64) -> Measured<SjoelCall> {
    let (c, r) = (fp.centre, fp.radius_mm);
    let gate = Candidate {
        boundary: match geometry.counts_past {
            GateFace::Front => Boundary::GateFront,
            GateFace::Back => Boundary::GateBack,
        },
        crossing: geometry.counting_face_mm() - (c.y_mm + r),
        towards: Some(Direction::TOWARDS_TARGET),
    };
    if gate.crossing <= 0.0 {
        return decisive(SjoelCall::None, &[gate]);
    }
    let half = geometry.partition_width_mm / 2.0;
    // How far beyond the partition's top a disc's centre may lie and still rest on it.
    let reach = if disc_lies_flat(tilt_deg) { 0.0 } else { r };
    let partitions: Vec<Candidate> = geometry
        .partitions()
        .into_iter()
        .enumerate()
        .map(|(i, p)| Candidate {
            boundary: Boundary::Partition { partition: i },
            crossing: (c.x_mm - p).abs() - (half + reach),
            towards: Some(side_of(c.x_mm - p)),
        })
        .collect();
    if let Some(on) = partitions.iter().find(|p| p.crossing < 0.0) {
        // Past the gate but on a partition: only sliding off the partition counts it.
        return decisive(SjoelCall::None, &[*on]);
    }
    let compartment = geometry.partitions().iter().filter(|p| c.x_mm > **p).count();
    let mut candidates = partitions;
    candidates.push(gate);
    decisive(SjoelCall::Compartment { compartment }, &candidates)
}

/// A piece's call, by board family, with its decisive boundary and margin.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PieceCall {
    Shuffleboard(Measured<ShuffleCall>),
    Washer(Measured<WasherCall>),
    Sjoelen(Measured<SjoelCall>),
}

impl PieceCall {
    /// The call's name as reports give it: `off short zone1 zone2 zone3 hanger
    /// corner_hanger`, `in leaner on_board off`, `compartment none`.
    pub fn name(&self) -> &'static str {
        match self {
            PieceCall::Shuffleboard(m) => m.call.name(),
            PieceCall::Washer(m) => match m.call {
                WasherCall::In { .. } => "in",
                WasherCall::Leaner { .. } => "leaner",
                WasherCall::OnBoard => "on_board",
                WasherCall::Off => "off",
            },
            PieceCall::Sjoelen(m) => match m.call {
                SjoelCall::Compartment { .. } => "compartment",
                SjoelCall::None => "none",
            },
        }
    }

    pub fn margin_mm(&self) -> f64 {
        match self {
            PieceCall::Shuffleboard(m) => m.margin_mm,
            PieceCall::Washer(m) => m.margin_mm,
            PieceCall::Sjoelen(m) => m.margin_mm,
        }
    }

    pub fn boundary(&self) -> Boundary {
        match self {
            PieceCall::Shuffleboard(m) => m.boundary,
            PieceCall::Washer(m) => m.boundary,
            PieceCall::Sjoelen(m) => m.boundary,
        }
    }

    /// The hole (washers) or compartment (discs) the piece counts in, if any.
    pub fn place(&self) -> Option<usize> {
        match self {
            PieceCall::Washer(m) => match m.call {
                WasherCall::In { hole } | WasherCall::Leaner { hole } => Some(hole),
                _ => None,
            },
            PieceCall::Sjoelen(m) => match m.call {
                SjoelCall::Compartment { compartment } => Some(compartment),
                SjoelCall::None => None,
            },
            PieceCall::Shuffleboard(_) => None,
        }
    }

    /// The points of the zone (1/2/3; hangers count by game), hole or compartment.
    pub fn value(&self, board: &Board) -> Option<u32> {
        match (self, &board.layout) {
            (PieceCall::Shuffleboard(m), _) => match m.call {
                ShuffleCall::Zone1 => Some(1),
                ShuffleCall::Zone2 => Some(2),
                ShuffleCall::Zone3 => Some(3),
                _ => None,
            },
            (PieceCall::Washer(_), Layout::Washer(w)) => self.place().map(|h| w.holes[h].value),
            (PieceCall::Sjoelen(_), Layout::Sjoelbak(s)) => self.place().map(|c| s.compartments[c].value),
            _ => None,
        }
    }
}

/// The call of a piece on any board: its centre (on its axis, mid-thickness, in
/// the board frame), footprint radius and tilt. Weights and discs are called on
/// their footprint; washers on their pose.
pub fn call_piece(board: &Board, centre: BoardPoint3, radius_mm: f64, tilt_deg: f64, foul: FoulLine) -> PieceCall {
    let fp = Footprint::new(centre.on_plane(), radius_mm);
    match &board.layout {
        Layout::Shuffleboard(s) => PieceCall::Shuffleboard(shuffle_call(board, s, fp, foul)),
        Layout::Washer(w) => PieceCall::Washer(washer_call(board, w, WasherPose { centre, tilt_deg })),
        Layout::Sjoelbak(s) => PieceCall::Sjoelen(sjoel_call(s, fp, tilt_deg)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Margins are sums and differences of decimal millimetre values; 1e-9 mm
    /// absorbs float rounding only.
    const TOL: f64 = 1e-9;

    fn sb() -> (Board, Shuffleboard) {
        let b = Board::load("shuffleboard-22ft").unwrap();
        let s = b.shuffleboard().unwrap().clone();
        (b, s)
    }

    fn weight(x: f64, y: f64) -> Footprint {
        Footprint::new(BoardPoint::new(x, y), 58.74 / 2.0)
    }

    fn check(m: Measured<ShuffleCall>, call: ShuffleCall, boundary: Boundary, margin: f64) {
        assert_eq!(m.call, call, "{m:?}");
        assert_eq!(m.boundary, boundary, "{m:?}");
        assert!((m.margin_mm - margin).abs() < TOL, "margin {} != {margin}: {m:?}", m.margin_mm);
    }

    #[test]
    fn shuffleboard_calls_by_hand() {
        let (b, s) = sb();
        let r = 29.37;
        let call = |x, y| shuffle_call(&b, &s, weight(x, y), FoulLine::Long);
        // Clear of the 3-line by 1.0 mm: y + r = 151.4.
        check(call(0.0, 151.4 - r), ShuffleCall::Zone3, Boundary::TreyLine, 1.0);
        // Touching the 3-line exactly: belongs to the lower zone, margin 0.
        check(call(0.0, 152.4 - r), ShuffleCall::Zone2, Boundary::TreyLine, 0.0);
        // On the 3-line, 0.5 mm short of clearing it.
        check(call(0.0, 152.9 - r), ShuffleCall::Zone2, Boundary::TreyLine, -0.5);
        // Mid zone 2, nearer the 2-line: cleared it by 20 mm.
        check(call(0.0, 284.8 - r), ShuffleCall::Zone2, Boundary::DeuceLine, 20.0);
        // Zone 1 and touching the long foul line.
        check(call(0.0, 400.0), ShuffleCall::Zone1, Boundary::DeuceLine, 304.8 - 400.0 - r);
        // Zone 1 near a side: the side edge (centre falling off) is nearer than any line.
        check(call(10.0, 1000.0), ShuffleCall::Zone1, Boundary::SurfaceEdge, 10.0 - 254.0);
        check(call(10.0, 1828.8 - r), ShuffleCall::Short, Boundary::FoulLine, 0.0);
        check(call(10.0, 1828.8 - r - 2.0), ShuffleCall::Zone1, Boundary::FoulLine, 2.0);
        // Short: on the surface between the foul lines.
        check(call(0.0, 1900.0), ShuffleCall::Short, Boundary::FoulLine, 1828.8 - 1900.0 - r);
        // Hanger: 5 mm over the end.
        check(call(0.0, r - 5.0), ShuffleCall::Hanger, Boundary::EndOverhang, 5.0);
        // Footprint edge exactly on the end: not a hanger, in zone 3.
        check(call(0.0, r), ShuffleCall::Zone3, Boundary::EndOverhang, 0.0);
        // Near-hanger by 0.5 mm.
        check(call(0.0, r + 0.5), ShuffleCall::Zone3, Boundary::EndOverhang, -0.5);
        // Corner hanger: over the end by 10 mm and the side by 3 mm.
        check(call(254.0 - r + 3.0, r - 10.0), ShuffleCall::CornerHanger, Boundary::SideOverhang, 3.0);
        check(call(-(254.0 - r + 3.0), r - 10.0), ShuffleCall::CornerHanger, Boundary::SideOverhang, 3.0);
        // A hanger 2 mm short of the corner.
        check(call(254.0 - r - 2.0, r - 10.0), ShuffleCall::Hanger, Boundary::SideOverhang, -2.0);
        // Off: centre past the end, and in the side gutter.
        check(call(0.0, -4.0), ShuffleCall::Off, Boundary::SurfaceEdge, 4.0);
        check(call(270.0, 100.0), ShuffleCall::Off, Boundary::SurfaceEdge, 16.0);
        // Short foul line designated: y = 3000 is now in zone 1.
        let m = shuffle_call(&b, &s, weight(0.0, 3000.0), FoulLine::Short);
        assert_eq!(m.call, ShuffleCall::Zone1);
    }

    #[test]
    fn shuffle_calls_on_a_short_table_variant_use_its_lines() {
        let b = Board::load("shuffleboard-22ft@12ft").unwrap();
        let s = b.shuffleboard().unwrap().clone();
        let m = shuffle_call(&b, &s, weight(0.0, 1100.0), FoulLine::Long);
        assert_eq!(m.call, ShuffleCall::Zone1);
        let m = shuffle_call(&b, &s, weight(0.0, 1300.0), FoulLine::Long);
        assert_eq!(m.call, ShuffleCall::Short);
        let m = shuffle_call(&b, &s, weight(0.0, 3251.2 + 1.0), FoulLine::Long);
        assert_eq!(m.call, ShuffleCall::Off);
    }

    fn washer_board(name: &str) -> (Board, WasherBoard) {
        let b = Board::load(name).unwrap();
        let w = b.washer().unwrap().clone();
        (b, w)
    }

    #[test]
    fn washer_calls_by_hand_on_every_washer_board() {
        for (name, hole, hole_y, hole_x, hole_r) in [
            ("holeyboard", 1, 508.0, 0.0, 50.8),
            ("yocu-4", 0, 254.0, 0.0, 50.8),
            ("yocu-9", 0, 177.8, -114.3, 44.45),
        ] {
            let (b, w) = washer_board(name);
            // Flat on the cup bottom (76 mm down), 10 mm off the hole centre.
            let flat = WasherPose::flat(hole_x + 10.0, hole_y, -76.0, 3.2);
            let m = washer_call(&b, &w, flat);
            assert_eq!(m.call, WasherCall::In { hole }, "{name}");
            assert_eq!(m.boundary, Boundary::Flatness { hole }, "{name}: rise 0 leaves 6.4 mm");
            assert!((m.margin_mm - FLAT_RISE_MAX_MM).abs() < TOL, "{name}: {m:?}");
            // Leaning against the rim: tilted 20 degrees with its top 2 mm above the surface.
            let t = 20f64.to_radians();
            let top = 63.5 / 2.0 * t.sin() + 3.2 / 2.0 * t.cos();
            let lean = WasherPose { centre: BoardPoint3::new(hole_x, hole_y + 15.0, 2.0 - top), tilt_deg: 20.0 };
            let m = washer_call(&b, &w, lean);
            assert_eq!(m.boundary, Boundary::Flatness { hole }, "{name}");
            assert_eq!(m.call, WasherCall::Leaner { hole }, "{name}");
            assert!((m.margin_mm - (FLAT_RISE_MAX_MM - 63.5 * t.sin())).abs() < TOL, "{name}: {m:?}");
            // On the board, centre 3 mm outside the rim: the rim decides at -3 mm.
            let on = WasherPose::flat(hole_x, hole_y + hole_r + 3.0, 0.0, 3.2);
            let m = washer_call(&b, &w, on);
            assert_eq!(m.call, WasherCall::OnBoard, "{name}");
            assert_eq!(m.boundary, Boundary::HoleRim { hole }, "{name}");
            assert!((m.margin_mm + 3.0).abs() < TOL, "{name}: {m:?}");
            // On the rim: centre 1 mm inside it, propped at 20 degrees: a leaner, decided by the rim.
            let rim = WasherPose { centre: BoardPoint3::new(hole_x, hole_y + hole_r - 1.0, 0.0), tilt_deg: 20.0 };
            let m = washer_call(&b, &w, rim);
            assert_eq!(m.call, WasherCall::Leaner { hole }, "{name}");
            assert_eq!(m.boundary, Boundary::HoleRim { hole }, "{name}: 1 mm from the rim is nearer than flatness");
            assert!((m.margin_mm - 1.0).abs() < TOL, "{name}: {m:?}");
            // Off the far end on the ground.
            let off = WasherPose::flat(0.0, b.surface.length_mm + 40.0, -30.0, 3.2);
            let m = washer_call(&b, &w, off);
            assert_eq!(m.call, WasherCall::Off, "{name}");
            assert!((m.margin_mm - 40.0).abs() < TOL, "{name}: {m:?}");
        }
    }

    #[test]
    fn two_washers_stacked_flat_in_one_hole_are_both_in() {
        let (b, w) = washer_board("holeyboard");
        let lower = WasherPose::flat(5.0, 203.2, -76.0, 3.2);
        let upper = WasherPose { centre: BoardPoint3::new(-12.0, 203.2, -76.0 + 3.2 + 1.6), tilt_deg: 2.0 };
        assert_eq!(washer_call(&b, &w, lower).call, WasherCall::In { hole: 0 });
        assert_eq!(washer_call(&b, &w, upper).call, WasherCall::In { hole: 0 });
    }

    fn sjoel() -> Sjoelbak {
        Board::load("sjoelbak").unwrap().sjoelbak().unwrap().clone()
    }

    fn disc(x: f64, y: f64) -> Footprint {
        Footprint::new(BoardPoint::new(x, y), 26.0)
    }

    #[test]
    fn sjoelen_calls_by_hand() {
        let s = sjoel();
        let value = |m: Measured<SjoelCall>| match m.call {
            SjoelCall::Compartment { compartment } => Some(s.compartments[compartment].value),
            SjoelCall::None => None,
        };
        // Well inside each compartment.
        for (x, v) in [(150.0, 2), (50.0, 3), (-50.0, 4), (-150.0, 1)] {
            let m = sjoel_call(&s, disc(x, 50.0), 0.0);
            assert_eq!(value(m), Some(v), "x = {x}");
            // 94 mm wide inner compartments, 52 mm disc: 21 mm each side; outer ones are wider.
            assert!(m.margin_mm > 20.0, "{m:?}");
        }
        // Half through the gate: does not count; margin to the gate front.
        let m = sjoel_call(&s, disc(50.0, 110.0), 0.0);
        assert_eq!(m.call, SjoelCall::None);
        assert_eq!(m.boundary, Boundary::GateFront);
        assert!((m.margin_mm - (120.0 - 136.0)).abs() < TOL, "{m:?}");
        // Just past the gate front by 0.5 mm.
        let m = sjoel_call(&s, disc(50.0, 120.0 - 26.0 - 0.5), 0.0);
        assert_eq!(value(m), Some(3));
        assert_eq!(m.boundary, Boundary::GateFront);
        assert!((m.margin_mm - 0.5).abs() < TOL, "{m:?}");
        // Flat, centred over the partition at x = 0 (6 mm wide): resting on its top, counts nothing.
        let m = sjoel_call(&s, disc(2.0, 40.0), 0.0);
        assert_eq!(m.call, SjoelCall::None);
        assert_eq!(m.boundary, Boundary::Partition { partition: 1 });
        assert!((m.margin_mm - (2.0 - 3.0)).abs() < TOL, "{m:?}");
        // Tilted and overlapping it: propped on the partition, counts nothing.
        let m = sjoel_call(&s, disc(20.0, 40.0), 20.0);
        assert_eq!(m.call, SjoelCall::None);
        assert_eq!(m.boundary, Boundary::Partition { partition: 1 });
        assert!((m.margin_mm - (20.0 - 29.0)).abs() < TOL, "{m:?}");
        // Flat beside it, touching its face: on the floor of compartment 3, its centre 26 mm from the top's edge.
        let m = sjoel_call(&s, disc(29.0, 40.0), 0.0);
        assert_eq!(value(m), Some(3));
        assert_eq!(m.boundary, Boundary::Partition { partition: 1 });
        assert!((m.margin_mm - 26.0).abs() < TOL, "{m:?}");
        // Flat and measured overlapping its face (a flat disc cannot): the side its centre is on decides.
        let m = sjoel_call(&s, disc(20.0, 40.0), 0.0);
        assert_eq!(value(m), Some(3));
        assert!((m.margin_mm - 17.0).abs() < TOL, "{m:?}");
    }

    /// Rule 003's "passed the front side of the gate bar completely", read either way: a disc under the bar, its far
    /// edge between the bar's faces, counts past the player-side face (the default) and not past the back face.
    #[test]
    fn a_disc_under_the_gate_bar_counts_by_the_face_the_board_names() {
        let front = sjoel();
        let back = Sjoelbak { counts_past: GateFace::Back, ..front.clone() };
        let under = disc(50.0, 110.0 - 26.0);
        let m = sjoel_call(&front, under, 0.0);
        assert!(matches!(m.call, SjoelCall::Compartment { .. }), "{m:?}");
        assert_eq!(m.boundary, Boundary::GateFront);
        assert!((m.margin_mm - 10.0).abs() < TOL, "{m:?}");
        let m = sjoel_call(&back, under, 0.0);
        assert_eq!(m.call, SjoelCall::None);
        assert_eq!(m.boundary, Boundary::GateBack);
        assert!((m.margin_mm + 10.0).abs() < TOL, "{m:?}");
        // Wholly past the back face: in either way.
        let m = sjoel_call(&back, disc(50.0, 100.0 - 26.0 - 2.0), 0.0);
        assert!(matches!(m.call, SjoelCall::Compartment { .. }), "{m:?}");
        assert!((m.margin_mm - 2.0).abs() < TOL, "{m:?}");
        // The key round-trips through a board file, and a file without it keeps the front face.
        let text = r#"
format = 1
name = "club"
kind = "sjoelbak"
[surface]
width_mm = 400.0
length_mm = 2000.0
[sjoelbak]
partition_width_mm = 6.0
gate_back_mm = 100.0
gate_front_mm = 120.0
gate_opening_mm = 60.0
counts_past = "back"
disc_diameter_mm = 52.0
disc_thickness_mm = 13.0
compartments = [{ x_mm = 150.0, value = 2 }, { x_mm = 50.0, value = 3 }, { x_mm = -50.0, value = 4 }, { x_mm = -150.0, value = 1 }]
"#;
        let b = Board::from_toml(text, "test").unwrap();
        assert_eq!(b.sjoelbak().unwrap().counts_past, GateFace::Back);
        let b = Board::from_toml(&text.replace("counts_past = \"back\"\n", ""), "test").unwrap();
        assert_eq!(b.sjoelbak().unwrap().counts_past, GateFace::Front);
    }

    /// Moves `fp` so that its decisive margin becomes `target`.
    fn shifted(fp: Footprint, m_margin: f64, towards: Direction, target: f64) -> Footprint {
        fp.moved(towards, target - m_margin)
    }

    /// Offsets from a boundary at which a flip is checked; far above float noise
    /// (1e-9) and far below any distance between two boundaries on these boards.
    const EPS: f64 = 1e-6;

    proptest! {
        #[test]
        fn shuffle_calls_flip_exactly_at_margin_zero(x in -300.0f64..300.0, y in -40.0f64..6340.0, short in any::<bool>()) {
            let (b, s) = sb();
            let foul = if short { FoulLine::Short } else { FoulLine::Long };
            let fp = weight(x, y);
            let m = shuffle_call(&b, &s, fp, foul);
            // Beyond a corner of the surface no single edge brings the centre back.
            prop_assume!(!((y < 0.0 || y > b.surface.length_mm) && x.abs() > b.surface.half_width()));
            let dir = m.towards.unwrap();
            prop_assume!(m.margin_mm.abs() > 2.0 * EPS);
            let keep = shuffle_call(&b, &s, shifted(fp, m.margin_mm, dir, m.margin_mm.signum() * EPS), foul);
            let flip = shuffle_call(&b, &s, shifted(fp, m.margin_mm, dir, -m.margin_mm.signum() * EPS), foul);
            prop_assert_eq!(keep.call, m.call);
            prop_assert_ne!(flip.call, m.call);
        }

        #[test]
        fn sjoel_calls_flip_exactly_at_margin_zero(x in -174.0f64..174.0, y in 26.0f64..400.0, tilted in proptest::bool::ANY) {
            let s = sjoel();
            let fp = disc(x, y);
            let tilt = if tilted { 20.0 } else { 0.0 };
            let m = sjoel_call(&s, fp, tilt);
            // Before the gate only the gate decides if the disc's column is clear of partitions (a flat disc's
            // centre over a partition's top, a tilted disc's outline over it).
            let reach = 3.0 + if tilted { 26.0 } else { 0.0 };
            let in_partition_column = s.partitions().iter().any(|p| (x - p).abs() < reach);
            prop_assume!(!(m.boundary == Boundary::GateFront && m.margin_mm < 0.0 && in_partition_column));
            prop_assume!(m.margin_mm.abs() > 2.0 * EPS);
            let dir = m.towards.unwrap();
            let keep = sjoel_call(&s, shifted(fp, m.margin_mm, dir, m.margin_mm.signum() * EPS), tilt);
            let flip = sjoel_call(&s, shifted(fp, m.margin_mm, dir, -m.margin_mm.signum() * EPS), tilt);
            prop_assert_eq!(keep.call, m.call);
            prop_assert_ne!(flip.call, m.call);
        }

        #[test]
        fn washer_calls_flip_exactly_at_margin_zero_when_moved(x in -280.0f64..280.0, y in -40.0f64..1760.0, z in -76.0f64..0.0, tilt in 0.0f64..60.0) {
            let (b, w) = washer_board("yocu-9");
            let pose = WasherPose { centre: BoardPoint3::new(x, y, z), tilt_deg: tilt };
            let m = washer_call(&b, &w, pose);
            // Beyond a corner of the surface no single edge brings the centre back.
            prop_assume!(!((y < 0.0 || y > b.surface.length_mm) && x.abs() > b.surface.half_width()));
            prop_assume!(m.margin_mm.abs() > 2.0 * EPS);
            let moved = |target: f64| {
                let mut p = pose;
                match m.towards {
                    Some(dir) => {
                        let c = p.centre.on_plane().moved(dir, target - m.margin_mm);
                        p.centre = c.at_height(p.centre.z_mm);
                    }
                    None => match m.boundary {
                        Boundary::Flatness { .. } => {
                            let rise = FLAT_RISE_MAX_MM - target;
                            p.tilt_deg = (rise / w.washer_outer_diameter_mm).asin().to_degrees();
                        }
                        other => panic!("boundary {other:?} has no direction"),
                    },
                }
                washer_call(&b, &w, p)
            };
            prop_assert_eq!(moved(m.margin_mm.signum() * EPS).call, m.call);
            prop_assert_ne!(moved(-m.margin_mm.signum() * EPS).call, m.call);
        }
    }
}
