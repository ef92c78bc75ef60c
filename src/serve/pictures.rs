//! The scoreboard's pictures: the last settled state annotated (JPEG) and one review
//! picture (PNG) per close call, drawn by [`crate::score::annotate`] and
//! [`crate::review::review_report`] from the match's settled report.

use super::{ServeError, CLOSE_CALL_MM};
use crate::board::Board;
use crate::calls::FoulLine;
use crate::camera::{Camera, CameraPose};
use crate::detect::DetectorConfig;
use crate::frame::Frame;
use crate::review::{review_report, ReviewConfig, Selection};
use crate::rules::Event;
use crate::score::FrameReport;
use opencv::core::{Mat, Rect, Vector};
use opencv::imgcodecs;
use opencv::prelude::*;

/// JPEG quality of the annotated frame: small enough to send every settled state.
const JPEG_QUALITY: i32 = 85;

/// A close call's review picture, named as the event log names the piece.
#[derive(Debug, Clone)]
pub struct ClosePicture {
    pub piece: String,
    pub gap: String,
    pub verdict: String,
    pub png: Vec<u8>,
}

fn cv<T>(context: &'static str, r: opencv::Result<T>) -> Result<T, ServeError> {
    r.map_err(|source| ServeError::Picture { context, source })
}

fn pose_of(report: &FrameReport) -> CameraPose {
    CameraPose::from_rvec_tvec(report.pose.rvec, report.pose.tvec)
}

fn encode(ext: &str, img: &Mat, params: &[i32]) -> Result<Vec<u8>, ServeError> {
    let mut buf = Vector::<u8>::new();
    let ok = cv("encoding a picture", imgcodecs::imencode(ext, img, &mut buf, &Vector::from_slice(params)))?;
    if !ok {
        return Err(ServeError::Picture { context: "encoding a picture", source: opencv::Error::new(opencv::core::StsError, "imencode refused the picture") });
    }
    Ok(buf.to_vec())
}

/// The settled state's frame with every piece's footprint, call and margin drawn, as JPEG.
pub fn annotated_jpeg(frame: &Frame, camera: &Camera, board: &Board, report: &FrameReport) -> Result<Vec<u8>, ServeError> {
    let img = crate::score::annotate(frame, camera, &pose_of(report), board, report).map_err(|e| ServeError::Review(crate::review::ReviewError::Score(e)))?;
    encode(".jpg", &img, &[imgcodecs::IMWRITE_JPEG_QUALITY, JPEG_QUALITY])
}

/// The review picture of each close call of a settled state (flagged for review, or
/// within [`CLOSE_CALL_MM`] of its boundary): one PNG per call, each piece named as
/// `entry` (the event the state was journaled as) names the piece at its place.
pub fn close_call_pictures(
    frame: &Frame,
    camera: &Camera,
    board: &Board,
    report: &FrameReport,
    detector: DetectorConfig,
    foul: FoulLine,
    entry: &Event,
) -> Result<Vec<ClosePicture>, ServeError> {
    let selection = Selection::AllClose { within_mm: CLOSE_CALL_MM };
    if !report.pieces.iter().any(|p| selection.picks(p)) {
        return Ok(Vec::new());
    }
    let review = review_report(frame, board, camera, &pose_of(report), report, detector, foul, selection, &ReviewConfig::default())?;
    let Some(picture) = review.picture else { return Ok(Vec::new()) };
    let width = picture.cols();
    let mut out = Vec::new();
    for item in &review.record.items {
        let [first, end] = item.picture_rows;
        let rows = (end as i32).min(picture.rows()) - first as i32;
        if rows <= 0 {
            continue;
        }
        let panel = cv("cropping a review panel", picture.roi(Rect::new(0, first as i32, width, rows)))?;
        let panel = cv("copying a review panel", panel.try_clone())?;
        // The log's name for the piece at this place (the detector numbers pieces its own way).
        let at = crate::geom::BoardPoint::new(item.piece.x_mm, item.piece.y_mm);
        let piece = entry
            .pieces
            .iter()
            .filter_map(|s| s.at.map(|a| (a.distance(at), s.piece)))
            .filter(|(d, _)| *d <= crate::game::MATCH_STILL_MM)
            .min_by(|a, b| a.0.total_cmp(&b.0))
            .map_or_else(|| item.piece.id.to_string(), |(_, id)| id.to_string());
        out.push(ClosePicture { piece, gap: item.gap.clone(), verdict: item.verdict.clone(), png: encode(".png", &panel, &[])? });
    }
    Ok(out)
}
