//! The automatic start of a set-up: every frame located under a ladder of focal-length guesses, and the guess whose
//! fits confirm and fit the board's edges best, the camera the refinement starts from.

use super::{centred_camera, SetupConfig, SetupError};
use crate::board::Board;
use crate::camera::{Camera, CameraPose, LensModel};
use crate::frame::{Frame, Undistorted};
use crate::locate::{LocateError, Locator};
use crate::undistort::Undistorter;
use std::collections::hash_map::{Entry, HashMap};

/// The automatic start's ladder of focal-length guesses, as multiples of the image width: (first, last, ratio).
///
/// Brown lenses: from 0.3 (about 118 degrees across the width) to about 2.3 (25 degrees), the range of webcams,
/// phone and action cameras over a board, in 25 % steps: `locate` finds a board seen through a mildly distorted
/// lens from a focal length some 15 % off, so one guess is always near enough.
pub const BROWN_GUESSES: (f64, f64, f64) = (0.3, 2.3, 1.25);
/// Fisheye lenses: from 0.25 (an equidistant fisheye's 229 degrees across the width; the frame's corners beyond
/// its circle) to 1.0, in 4 % steps: a fisheye's focal length is also its distortion, and a few per cent off
/// bends the board's straight edges past what `locate`'s straight-line search accepts.
pub const FISHEYE_GUESSES: (f64, f64, f64) = (0.25, 1.0, 1.04);
/// The ladder stops this many guesses after its best fit, when that is confirmed in half the frames or more and none
/// of them is confirmed in more or fits better.
const GUESSES_PAST_BEST: usize = 3;

/// The automatic start's focal-length guesses for a lens model, px for an image `width` px wide.
pub fn focal_guesses(lens: LensModel, width: u32) -> Vec<f64> {
    let (first, last, ratio) = match lens {
        LensModel::Brown => BROWN_GUESSES,
        LensModel::Fisheye => FISHEYE_GUESSES,
    };
    let mut out = Vec::new();
    let mut k = first;
    while k <= last * (1.0 + 1e-9) {
        out.push(k * width as f64);
        k *= ratio;
    }
    out
}

/// What locating one frame under one focal-length guess gave.
#[derive(Debug)]
struct FrameAtGuess {
    /// Why `locate` refused the board, if it did (its message).
    refusal: Option<String>,
    /// Refused as ambiguous: two readings that fit alike start no refinement.
    ambiguous: bool,
    /// The edge fit from the confirmed pose or the best candidate: its pose and its score (inlier edge samples
    /// times their share of the samples in view).
    fit: Option<(CameraPose, f64)>,
}

/// The frames' readings under the guesses tried so far, by the frame's index among those given and the guess.
///
/// A frame's reading under a guess does not depend on the other frames, so a set-up made again without a frame it
/// left out reads the others' from here instead of locating them again (the ladder was most of a set-up's time:
/// `fixtures/setup/holeyboard-fisheye` with its frame 3 left out ran it twice over).
#[derive(Debug, Default)]
pub struct Ladder {
    read: HashMap<(usize, u64), FrameAtGuess>,
}

/// Locates the board in one undistorted frame and fits its edges from the confirmed pose or, refused, the best
/// candidate: a guess a few per cent off leaves the board's edges a little bent or stretched, and locate's verdict
/// may refuse the right pose for it, whose fit may still start the refinement (the refined camera's result faces
/// the verdict again).
fn read_frame(locator: &mut Locator, u: &Undistorted) -> Result<FrameAtGuess, SetupError> {
    let (start, refusal, ambiguous) = match locator.run(u) {
        Ok(bp) => (Some(bp.pose), None, false),
        Err(e) if e.is_refusal() => {
            // Two readings of the board that fit alike are no camera a few per cent off: refining the leading one
            // would only pick it (real sjoelbak photo 153016, its focal length given: the back wall's top edge read
            // as its foot, 37 px off, then set up with a sigma of 0.9 mm).
            let ambiguous = matches!(e, LocateError::Ambiguous { .. });
            (if ambiguous { None } else { locator.last_candidate() }, Some(e.to_string()), ambiguous)
        }
        Err(e) => return Err(e.into()),
    };
    let fit = match start {
        Some(pose) => locator.edge_fit(u, pose)?.map(|fit| (fit.pose, (fit.inliers * fit.inliers) as f64 / fit.samples.max(1) as f64)),
        None => None,
    };
    Ok(FrameAtGuess { refusal, ambiguous, fit })
}

/// The automatic start: each frame (`ids`: their indices among those given, the keys of `ladder`) located under the
/// ladder of focal-length guesses; of the guesses that give every frame a fit (confirmed or the best candidate),
/// the one confirmed in the most frames, and among those the best-fitting.
pub(super) fn automatic_start(board: &Board, frames: &[Frame], ids: &[usize], cfg: &SetupConfig, progress: &dyn Fn(&str), ladder: &mut Ladder) -> Result<(Camera, Vec<CameraPose>), SetupError> {
    let (w, h) = (frames[0].width(), frames[0].height());
    let fov = |f: f64| 2.0 * (0.5 * w as f64 / f).atan().to_degrees();
    let guesses = match cfg.focal_px {
        Some(f) => vec![f],
        None => focal_guesses(cfg.lens, w),
    };
    let mut locator = Locator::new(board, cfg.locate);
    // (frames confirmed in, score, camera, poses): a guess whose fits locate confirms in more frames beats one it
    // confirms in fewer; among equals the larger score wins (inlier edge samples times their share of the samples
    // in view, as locate ranks its own candidates: a per-sample residual alone favours a fit that sees little).
    // Counting the frames, not asking for all of them, stops the ladder where a frame the board is not confirmed in
    // at any guess (one to be left out) would otherwise run it to its end: the fisheye set's frames 0-2 alone, 22
    // guesses of 36, the same start.
    let mut best: Option<(usize, f64, Camera, Vec<CameraPose>)> = None;
    let mut since_best = 0usize;
    let mut last_reason = String::from("no focal length tried");
    let mut unfound = 0usize;
    for (k, &f) in guesses.iter().enumerate() {
        if best.as_ref().is_some_and(|b| b.0 > 0 && 2 * b.0 >= frames.len()) && since_best >= GUESSES_PAST_BEST {
            break;
        }
        progress(&format!("looking for the board with a lens {:.0} degrees wide (guess {} of at most {})", fov(f), k + 1, guesses.len()));
        since_best += 1;
        let camera = centred_camera(w, h, f, cfg.lens);
        // Made when a frame is first read under this guess.
        let mut und: Option<Undistorter> = None;
        let mut poses = Vec::with_capacity(frames.len());
        let mut score = 0.0;
        let mut confirmed = 0usize;
        for (index, (frame, &id)) in frames.iter().zip(ids).enumerate() {
            let at = match ladder.read.entry((id, f.to_bits())) {
                Entry::Occupied(read) => read.into_mut(),
                Entry::Vacant(slot) => {
                    let und = match &mut und {
                        Some(und) => und,
                        None => und.insert(Undistorter::new(camera, Default::default())?),
                    };
                    slot.insert(read_frame(&mut locator, &und.run(frame)?)?)
                }
            };
            if let Some(reason) = &at.refusal {
                last_reason = format!("at {:.0} degrees: {reason}", fov(f));
                unfound = index;
            } else {
                confirmed += 1;
            }
            if at.ambiguous {
                break;
            }
            let Some((pose, s)) = at.fit else { break };
            score += s;
            poses.push(pose);
        }
        let better = |b: &(usize, f64, Camera, Vec<CameraPose>)| (confirmed, score) > (b.0, b.1);
        if poses.len() == frames.len() && best.as_ref().is_none_or(better) {
            best = Some((confirmed, score, camera, poses));
            since_best = 0;
        }
    }
    let Some((_, _, camera, poses)) = best else {
        return Err(SetupError::BoardNotFound {
            index: unfound,
            min_fov_deg: fov(guesses[guesses.len() - 1]),
            max_fov_deg: fov(guesses[0]),
            reason: last_reason,
        });
    };
    Ok((camera, poses))
}
