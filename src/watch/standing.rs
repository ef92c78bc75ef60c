//! The board's own patches: colour no piece explains that the empty board showed (a lamp's glare on wood of the
//! discs' colour, a stain), told apart from a piece hidden in it by the image, which must be as the empty board's
//! there wherever no piece was found.
//!
//! A sjoelbak or a washer board under a lamp can show a standing patch of the pieces' colour where no piece lies.
//! Read from one frame it must be reviewed (a piece may be hidden in it), and a match would hold every event for
//! it. A stream shows the empty board between turns and rounds: a patch it showed there, in a frame whose image
//! is unchanged round the patch since (to the motion test's grey levels, in every block no piece found now
//! covers, once the camera's drift in exposure is taken out), holds nothing a piece could be. A piece in the patch that its outline did not reveal changes the
//! image there and keeps the patch unexplained.

use super::{MOTION_BLOCK_PX, MOTION_GREY_LEVELS};
use crate::camera::{Camera, CameraPose};
use crate::detect::Unexplained;
use crate::geom::BoardPoint;
use crate::score::FrameReport;
use serde::{Deserialize, Serialize};

/// A patch may be one the empty board showed where it is no larger than that by more than this share: the same
/// light on the same wood gives the same patch to a few mm² (own scene 16's glare: 15,544 and 15,540 mm² in two
/// frames, a disc lying outside it in one). What a piece adds to it the image comparison catches, whatever the
/// area: this only keeps a patch of another make from being matched.
const AREA_SLACK: f64 = 0.1;

/// Blocks whose centre lies within this many piece radii of a piece found are left out of the comparison: the
/// piece, its side and its shadow changed them, and the piece is accounted for.
const FOUND_REACH_RADII: f64 = 2.0;

/// What the last settled empty board showed: each motion block's mean grey level and the patches no piece
/// explained, and the pose it was seen from (blocks are image places: another pose makes them another board's).
/// Kept beside a match's journal so that a resumed match has it (`boardcall match --resume`, docs/match.md).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EmptyBoard {
    pub pose: CameraPose,
    /// The frame's size the blocks were taken on, and the blocks' side (pixels).
    pub image_width: u32,
    pub image_height: u32,
    pub block_px: i32,
    /// Row by row, as [`super::block_means`] gives them.
    pub blocks: Vec<f32>,
    pub patches: Vec<Unexplained>,
}

impl EmptyBoard {
    /// The empty board of a settled report with no pieces, its frame's block means `blocks`, seen from `pose` by `camera`.
    pub(super) fn of(report: &FrameReport, blocks: &[f32], pose: &CameraPose, camera: &Camera) -> Option<EmptyBoard> {
        let patches = report.unexplained.iter().chain(&report.standing).cloned().collect();
        report.pieces.is_empty().then(|| EmptyBoard {
            pose: *pose,
            image_width: camera.image_width,
            image_height: camera.image_height,
            block_px: MOTION_BLOCK_PX,
            blocks: blocks.to_vec(),
            patches,
        })
    }

    /// Whether its blocks are those of a frame of `camera`'s size (every block mean a finite grey level).
    pub(super) fn fits(&self, camera: &Camera) -> bool {
        let (cols, rows) = (camera.image_width as i32 / MOTION_BLOCK_PX, camera.image_height as i32 / MOTION_BLOCK_PX);
        (self.image_width, self.image_height, self.block_px) == (camera.image_width, camera.image_height, MOTION_BLOCK_PX)
            && self.blocks.len() == (cols * rows) as usize
            && self.blocks.iter().all(|b| b.is_finite())
    }
}

/// The camera's exposure is measured on at least this many blocks of bare board (else taken as unchanged): a
/// median over fewer would follow what lies on a few of them.
const MIN_EXPOSURE_BLOCKS: usize = 16;

/// Blocks darker than this (grey levels) on the empty board do not measure the exposure: a ratio of small means
/// is mostly noise.
const MIN_EXPOSURE_LEVEL: f32 = 16.0;

/// The brightest a block's mean can be: a block this bright on the empty board may have been clipped, brighter
/// than its mean says.
const BRIGHTEST_LEVEL: f32 = 255.0;

/// How much brighter the frame is than the empty board, where the board lies bare in both (on the surface, clear
/// of the pieces found and of every patch, the empty board's and the frame's): the median ratio of their block
/// means, or 1 where too few blocks tell ([`MIN_EXPOSURE_BLOCKS`]). A camera's exposure and white balance drift
/// between an empty board and a later frame (a webcam's automatic exposure follows the players' clothes): a gain
/// on the light, the same ratio of grey levels everywhere (the sRGB curve is a power law) but where clipped.
fn exposure(empty: &EmptyBoard, report: &FrameReport, blocks: &[f32], block_points: &[Option<BoardPoint>], clear: &dyn Fn(BoardPoint) -> bool, r: f64) -> f32 {
    let patches: Vec<&Unexplained> = empty.patches.iter().chain(&report.unexplained).collect();
    let mut ratios: Vec<f32> = block_points
        .iter()
        .zip(blocks.iter().zip(&empty.blocks))
        .filter(|(p, (_, then))| **then >= MIN_EXPOSURE_LEVEL && **then < BRIGHTEST_LEVEL && p.is_some_and(|p| clear(p) && patches.iter().all(|u| p.distance(u.centre) > u.radius_mm() + r)))
        .map(|(_, (now, then))| now / then)
        .filter(|k| k.is_finite())
        .collect();
    if ratios.len() < MIN_EXPOSURE_BLOCKS {
        return 1.0;
    }
    let mid = ratios.len() / 2;
    *ratios.select_nth_unstable_by(mid, f32::total_cmp).1
}

/// For each of `report`'s unexplained patches, whether it is the empty board's own: a patch of the same kind and
/// team the empty board showed holds its centre and is not larger (by [`AREA_SLACK`]), and every motion block
/// round either (within their reach and a piece's radius `piece_radius_mm`; `block_points`: each block's centre
/// on the surface, `None` off it) that no piece found covers has the grey level it had then (`blocks`: this
/// frame's means), the camera's drift in exposure since taken out ([`exposure`]), at least one of them round the
/// patch itself.
pub(super) fn standing(empty: &EmptyBoard, report: &FrameReport, blocks: &[f32], block_points: &[Option<BoardPoint>], piece_radius_mm: f64) -> Vec<bool> {
    if report.unexplained.is_empty() {
        return Vec::new();
    }
    let r = piece_radius_mm;
    let pieces: Vec<BoardPoint> = report.pieces.iter().map(|p| BoardPoint::new(p.x_mm, p.y_mm)).collect();
    let clear = |p: BoardPoint| pieces.iter().all(|q| q.distance(p) > FOUND_REACH_RADII * r);
    let gain = exposure(empty, report, blocks, block_points, &clear, r);
    report
        .unexplained
        .iter()
        .map(|u| {
            let shown = empty.patches.iter().find(|b| b.kind == u.kind && b.team == u.team && u.centre.distance(b.centre) <= b.radius_mm() && u.area_mm2 <= b.area_mm2 * (1.0 + AREA_SLACK));
            let Some(b) = shown else { return false };
            let (mut compared, mut own) = (0usize, 0usize);
            for (i, p) in block_points.iter().enumerate() {
                let Some(p) = *p else { continue };
                let round_own = p.distance(u.centre) <= u.radius_mm() + r;
                if !(round_own || p.distance(b.centre) <= b.radius_mm() + r) || !clear(p) {
                    continue;
                }
                let (Some(now), Some(then)) = (blocks.get(i), empty.blocks.get(i)) else { return false };
                if (now - (gain * then).min(BRIGHTEST_LEVEL)).abs() > MOTION_GREY_LEVELS {
                    return false;
                }
                compared += 1;
                own += usize::from(round_own);
            }
            compared > 0 && own > 0
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::piece::PieceKind;
    use crate::score::{PieceReport, PoseReport};

    const R: f64 = 15.0;

    /// Blocks every 10 mm on a 40 x 40 grid of the surface (x, y from 0 to 390 mm), all at grey level 100.
    fn grid() -> (Vec<Option<BoardPoint>>, Vec<f32>) {
        let points = (0..1600).map(|i| Some(BoardPoint::new((i % 40) as f64 * 10.0, (i / 40) as f64 * 10.0))).collect();
        (points, vec![100.0; 1600])
    }

    fn patch(x: f64, y: f64, area: f64) -> Unexplained {
        Unexplained { kind: PieceKind::Disc, team: None, centre: BoardPoint::new(x, y), area_mm2: area, reason: "glare".into() }
    }

    fn disc(x_mm: f64, y_mm: f64) -> PieceReport {
        crate::score::test_disc(x_mm, y_mm, Some(0))
    }

    fn report(pieces: Vec<PieceReport>, unexplained: Vec<Unexplained>) -> FrameReport {
        FrameReport {
            format: crate::score::REPORT_FORMAT,
            image: None,
            board: "sjoelbak".into(),
            pose: PoseReport::trusted(&crate::camera::CameraPose::from_rvec_tvec([0.0; 3], [0.0, 0.0, 1000.0])),
            pieces,
            needs_review: !unexplained.is_empty(),
            unexplained,
            teams: vec![],
            teams_source: Default::default(),
            weight_cap: None,
            score: None,
            review_reasons: vec![],
            doubts: vec![],
            standing: vec![],
        }
    }

    /// The empty board showed a glare patch of 5,000 mm² (reach 40 mm) at (200, 200).
    fn empty() -> EmptyBoard {
        let (_, blocks) = grid();
        let pose = CameraPose::from_rvec_tvec([0.0; 3], [0.0, 0.0, 1000.0]);
        EmptyBoard { pose, image_width: 640, image_height: 640, block_px: MOTION_BLOCK_PX, blocks, patches: vec![patch(200.0, 200.0, 5000.0)] }
    }

    /// Sets the blocks within `radius` of (`x`, `y`) to `level`.
    fn paint(points: &[Option<BoardPoint>], blocks: &mut [f32], x: f64, y: f64, radius: f64, level: f32) {
        for (b, p) in blocks.iter_mut().zip(points) {
            if p.is_some_and(|p| p.distance(BoardPoint::new(x, y)) <= radius) {
                *b = level;
            }
        }
    }

    #[test]
    fn the_empty_boards_patch_in_an_unchanged_image_is_standing() {
        let (points, mut blocks) = grid();
        // A disc found far from the patch: its blocks changed, the patch's did not.
        paint(&points, &mut blocks, 50.0, 50.0, 20.0, 180.0);
        let now = report(vec![disc(50.0, 50.0)], vec![patch(201.0, 198.0, 5010.0)]);
        assert_eq!(standing(&empty(), &now, &blocks, &points, R), [true]);
    }

    #[test]
    fn a_change_in_the_patch_where_no_piece_was_found_keeps_it_unexplained() {
        let (points, mut blocks) = grid();
        // Something in the glare no outline found: one block 4 levels darker (the motion test's limit is 3).
        paint(&points, &mut blocks, 220.0, 210.0, 1.0, 96.0);
        let now = report(vec![], vec![patch(200.0, 200.0, 5000.0)]);
        assert_eq!(standing(&empty(), &now, &blocks, &points, R), [false]);
        // Just beside it, a piece's radius beyond the patch's reach: still compared.
        let (points, mut blocks) = grid();
        paint(&points, &mut blocks, 250.0, 200.0, 1.0, 90.0);
        assert_eq!(standing(&empty(), &now, &blocks, &points, R), [false]);
    }

    #[test]
    fn a_drift_in_the_cameras_exposure_is_taken_out_and_a_change_in_the_patch_still_seen() {
        let (points, blocks) = grid();
        // The whole frame 8 % darker (the glare's blocks too), 7 levels at 100 ...
        let mut darker: Vec<f32> = blocks.iter().map(|b| 0.92 * b).collect();
        let now = report(vec![], vec![patch(200.0, 200.0, 5000.0)]);
        assert_eq!(standing(&empty(), &now, &darker, &points, R), [true]);
        // ... and a block in the glare 4 levels darker still.
        paint(&points, &mut darker, 220.0, 210.0, 1.0, 88.0);
        assert_eq!(standing(&empty(), &now, &darker, &points, R), [false]);
        // Only the blocks within 60 mm of the patch's centre on the surface: the bare board round the patch too small
        // to tell the exposure by, taken as unchanged.
        let small: Vec<Option<BoardPoint>> = points.iter().map(|p| p.filter(|p| p.distance(BoardPoint::new(200.0, 200.0)) < 60.0)).collect();
        let darker: Vec<f32> = blocks.iter().map(|b| 0.92 * b).collect();
        assert_eq!(standing(&empty(), &now, &darker, &small, R), [false]);
        assert_eq!(standing(&empty(), &now, &blocks, &small, R), [true]);
    }

    #[test]
    fn a_piece_found_in_the_patch_is_accounted_for_and_the_rest_compared() {
        let (points, mut blocks) = grid();
        // A disc found in the glare: its blocks (and its shadow's) changed; the patch round it smaller.
        paint(&points, &mut blocks, 210.0, 200.0, 25.0, 60.0);
        let found = report(vec![disc(210.0, 200.0)], vec![patch(195.0, 200.0, 4300.0)]);
        assert_eq!(standing(&empty(), &found, &blocks, &points, R), [true]);
        // The same change with no piece found there: a piece hidden in the glare.
        let missed = report(vec![], vec![patch(195.0, 200.0, 4300.0)]);
        assert_eq!(standing(&empty(), &missed, &blocks, &points, R), [false]);
    }

    #[test]
    fn a_patch_the_empty_board_did_not_show_is_not_standing() {
        let (points, blocks) = grid();
        for (u, why) in [
            (patch(260.0, 200.0, 5000.0), "its centre outside the empty board's patch"),
            (patch(200.0, 200.0, 5600.0), "larger than the empty board's patch"),
            (Unexplained { team: Some(crate::piece::Team::Red), ..patch(200.0, 200.0, 5000.0) }, "of a team's colour"),
            (Unexplained { kind: PieceKind::Washer, ..patch(200.0, 200.0, 5000.0) }, "of another kind of piece"),
        ] {
            assert_eq!(standing(&empty(), &report(vec![], vec![u]), &blocks, &points, R), [false], "{why}");
        }
        // With every block round the patch covered by pieces found, nothing of it is seen unchanged.
        let covered: Vec<PieceReport> = [(180.0, 180.0), (220.0, 180.0), (180.0, 220.0), (220.0, 220.0), (200.0, 200.0)].iter().map(|&(x, y)| disc(x, y)).collect();
        let small = report(covered, vec![patch(200.0, 200.0, 100.0)]);
        let tiny = EmptyBoard { patches: vec![patch(200.0, 200.0, 100.0)], ..empty() };
        assert_eq!(standing(&tiny, &small, &blocks, &points, R), [false]);
    }

    #[test]
    fn only_an_empty_boards_report_makes_one_and_only_for_its_cameras_frames() {
        let (_, blocks) = grid();
        let pose = CameraPose::from_rvec_tvec([0.0; 3], [0.0, 0.0, 1000.0]);
        let camera = Camera { image_width: 640, image_height: 640, fx: 800.0, fy: 800.0, cx: 320.0, cy: 320.0, distortion: crate::camera::Distortion::NONE };
        assert!(EmptyBoard::of(&report(vec![disc(50.0, 50.0)], vec![]), &blocks, &pose, &camera).is_none());
        let e = EmptyBoard::of(&report(vec![], vec![patch(200.0, 200.0, 5000.0)]), &blocks, &pose, &camera).expect("an empty board");
        assert_eq!(e.patches.len(), 1);
        // 640 / 16 = 40 blocks a side: the grid's 1,600.
        assert!(e.fits(&camera));
        let wider = Camera { image_width: 656, ..camera };
        assert!(!e.fits(&wider));
        let torn = EmptyBoard { blocks: blocks[..1599].to_vec(), ..e.clone() };
        assert!(!torn.fits(&camera));
        let nan = EmptyBoard { blocks: blocks.iter().enumerate().map(|(i, b)| if i == 7 { f32::NAN } else { *b }).collect(), ..e };
        assert!(!nan.fits(&camera));
    }
}
