//! Test videos of whole games: a game script played on a scene (pieces sliding in
//! and stopping, knocks that move or remove other pieces, a hand passing over the
//! board, the camera knocked, the board cleared between rounds), rendered frame by frame, with the
//! truth event log (`docs/events.md`) and the log a correct reading of the video
//! writes (the same, with the planted ambiguities merged and marked for review).
//!
//! Each distinct board state is rendered once and repeated while it is still, so a
//! whole game costs a few dozen renders. Cameras are downscaled ([`GameScript::scale`])
//! to keep the renders and the tests that read them fast.

use crate::board::Board;
use crate::calls::PieceCall;
use crate::camera::{Camera, CameraPose};
use crate::geom::BoardPoint3;
use crate::piece::PieceId;
use crate::render::scene::{piece_thickness, LoadedScene, PieceSpec};
use crate::game::ambiguous_reason;
use crate::rules::{Event, EventLog, PieceState, Rules};
use opencv::core::Mat;
use opencv::prelude::*;
use std::collections::BTreeMap;

/// The videos' frame rate: low, so a game is a few hundred frames, and still
/// above what the watcher needs (a state settles over 3 scored frames).
pub const VIDEO_FPS: f64 = 10.0;

/// Frames of motion per throw: the piece on its way in (and what it knocks).
pub const SLIDE_FRAMES: usize = 2;

/// Frames a state stays still after a throw: the watcher's 3 agreeing frames and
/// room either side (a resumed run starts after the last event and must see the
/// state settle before the next throw moves it).
pub const STILL_FRAMES: usize = 6;

/// Frames a hand spends over the board (reaching in, moving, leaving).
pub const HAND_FRAMES: usize = 4;

/// How far (mm, towards the thrower) a sliding piece is first seen from where it stops.
pub const SLIDE_FROM_MM: f64 = 450.0;

/// A piece at rest must be this far (pixels, at the scene's size) inside the frame:
/// a piece cut by the frame's edge is not what these videos test.
pub const IN_VIEW_MARGIN_PX: f64 = 10.0;

/// What happens to another piece when a throw hits it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Knock {
    /// Pushed to a new place (same piece, new position, height, tilt).
    To(PieceSpec),
    /// Knocked off the board (out of view).
    Off(PieceId),
}

/// One step of a game.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    /// `thrower` throws `piece`: it slides in and stops where `piece` says; `knocks`
    /// happen as it arrives. Sjoelen: a disc of the sub-turn (no event until [`Step::SubTurnEnd`]).
    Throw { thrower: String, piece: PieceSpec, knocks: Vec<Knock> },
    /// Several throws with no settled state between them: the planted ambiguity. The
    /// truth has one event each; a correct reading writes one event marked for review.
    Together { throws: Vec<(String, PieceSpec)> },
    /// One throw of several pieces at once (Crazy Eight's opening four weights): they
    /// slide in together; one event, no ambiguity.
    Volley { thrower: String, pieces: Vec<PieceSpec> },
    /// The camera is knocked: from here on the frames are seen from `pose`. Nothing on
    /// the board changes; a correct reading follows the new pose and writes no event.
    Nudge { pose: CameraPose },
    /// A hand passes over the board; nothing changes.
    Hand,
    /// The round is over: a hand over the board, then the board empty.
    Clear,
    /// Sjoelen: the sub-turn of `thrower` ends; the discs in compartments stand (the
    /// event), the loose ones are collected (all of them when `last`: the turn is over).
    SubTurnEnd { thrower: String, last: bool },
}

/// A whole game to render: the scene it is played on (its pieces are ignored), the
/// camera's downscale, and the log header (rules, first, players, start scores).
#[derive(Debug, Clone)]
pub struct GameScript {
    pub scene: LoadedScene,
    /// The camera's image size relative to the scene's (0.5: half width and height).
    pub scale: f64,
    pub header: EventLog,
    pub steps: Vec<Step>,
}

/// A rendered game.
pub struct GameVideo {
    pub board: Board,
    /// The (downscaled) camera the frames were rendered with, and its pose at the
    /// start (a [`Step::Nudge`] moves it).
    pub camera: Camera,
    pub pose: CameraPose,
    pub fps: f64,
    /// The frames, 8-bit BGR as a camera delivers them.
    pub frames: Vec<Mat>,
    /// What happened: one event per throw (per sub-turn in sjoelen).
    pub truth: EventLog,
    /// What a correct reading of the video writes: the truth, with each planted
    /// ambiguity one event marked for review.
    pub expected: EventLog,
}

/// Errors making a game video.
#[derive(Debug, thiserror::Error)]
pub enum VideoError {
    #[error("game script: {problem}")]
    Script { problem: String },
    #[error("OpenCV, {context}: {source}")]
    OpenCv { context: String, source: opencv::Error },
}

fn cv(context: &str) -> impl Fn(opencv::Error) -> VideoError + '_ {
    move |source| VideoError::OpenCv { context: context.to_string(), source }
}

/// The camera `cam` with its image scaled by `s` (the same lens, fewer pixels).
pub fn scaled_camera(cam: &Camera, s: f64) -> Camera {
    let mut c = *cam;
    c.image_width = (cam.image_width as f64 * s).round() as u32;
    c.image_height = (cam.image_height as f64 * s).round() as u32;
    c.fx = cam.fx * s;
    c.fy = cam.fy * s;
    // OpenCV's pixel centres: pixel i covers [i - 0.5, i + 0.5].
    c.cx = (cam.cx + 0.5) * s - 0.5;
    c.cy = (cam.cy + 0.5) * s - 0.5;
    c
}

/// A piece's state as the event log gives it, from its true call; `None` when it
/// is off the board (not listed) or, in sjoelen, not in a compartment.
pub fn piece_state(board: &Board, ls: &LoadedScene, p: &PieceSpec) -> Option<PieceState> {
    let (call, value) = crate::render::truth::call_piece(board, ls.scene.foul_line, p)?;
    let s = match call {
        PieceCall::Shuffleboard(m) if m.call == crate::calls::ShuffleCall::Off => return None,
        PieceCall::Shuffleboard(m) => PieceState::weight(p.id, m.call).at(p.x_mm, p.y_mm),
        PieceCall::Washer(m) if m.call == crate::calls::WasherCall::Off => return None,
        PieceCall::Washer(m) => PieceState::washer(p.id, m.call),
        PieceCall::Sjoelen(m) if m.call == crate::calls::SjoelCall::None => return None,
        PieceCall::Sjoelen(m) => PieceState::disc(p.id, m.call),
    };
    Some(match value {
        Some(v) => s.value(v),
        None => s,
    })
}

/// Where the frames come from: a board state (indexed into the rendered states) and
/// how far a hand has reached in, if one is over the board.
#[derive(Debug, Clone, Copy)]
struct FramePlan {
    state: usize,
    hand: Option<usize>,
}

/// A distinct picture to render: the pieces in view, seen from `pose`.
struct StatePlan {
    pieces: Vec<PieceSpec>,
    pose: CameraPose,
}

/// `pose` knocked by a small turn of the camera about its own centre (`rvec`, radians,
/// in the camera's frame) and a shift of it (`shift_mm`, in the camera's frame).
pub fn nudged(pose: &CameraPose, rvec: [f64; 3], shift_mm: [f64; 3]) -> CameraPose {
    let d = crate::camera::rotation_from_rvec(rvec);
    let r = pose.rotation;
    let t = pose.translation;
    let mut rotation = [[0.0; 3]; 3];
    let mut translation = [0.0; 3];
    for i in 0..3 {
        for j in 0..3 {
            rotation[i][j] = (0..3).map(|k| d[i][k] * r[k][j]).sum();
        }
        translation[i] = (0..3).map(|k| d[i][k] * t[k]).sum::<f64>() + shift_mm[i];
    }
    CameraPose { rotation, translation }
}

struct Builder<'a> {
    script: &'a GameScript,
    /// The distinct states to render.
    states: Vec<StatePlan>,
    /// Where the camera is now.
    pose: CameraPose,
    frames: Vec<FramePlan>,
    board: BTreeMap<PieceId, PieceSpec>,
    truth: Vec<Event>,
    expected: Vec<Event>,
}

impl Builder<'_> {
    fn push_state(&mut self, pieces: Vec<PieceSpec>, count: usize) {
        self.states.push(StatePlan { pieces, pose: self.pose });
        let state = self.states.len() - 1;
        self.frames.extend((0..count).map(|_| FramePlan { state, hand: None }));
    }

    fn still(&mut self, count: usize) {
        let pieces = self.board.values().copied().collect();
        self.push_state(pieces, count);
    }

    fn hand(&mut self) {
        let pieces = self.board.values().copied().collect();
        self.states.push(StatePlan { pieces, pose: self.pose });
        let state = self.states.len() - 1;
        self.frames.extend((0..HAND_FRAMES).map(|k| FramePlan { state, hand: Some(k) }));
    }

    /// The frames of pieces sliding in from the thrower's side and stopping (knocked
    /// pieces moving with them), then the board still with them in place.
    fn slide(&mut self, arriving: &[PieceSpec], knocks: &[Knock]) -> Result<(), VideoError> {
        let ls = &self.script.scene;
        let resting = arriving.iter().chain(knocks.iter().filter_map(|k| match k {
            Knock::To(p) => Some(p),
            Knock::Off(_) => None,
        }));
        for p in resting {
            let edge = crate::render::truth::cap_edge_points(&ls.board, p, 16);
            let cam = ls.scene.camera.intrinsics;
            if edge.is_empty() || !edge.iter().all(|q| crate::render::plan::pixel_in_frame(&cam, &self.pose, *q, IN_VIEW_MARGIN_PX).is_some()) {
                return Err(VideoError::Script { problem: format!("{} comes to rest out of the camera's view", p.id) });
            }
        }
        for k in 0..SLIDE_FRAMES {
            // Fraction of the way still to go: 1 at the first frame, small at the last.
            let left = 1.0 - (k + 1) as f64 / (SLIDE_FRAMES + 1) as f64;
            let mut pieces: BTreeMap<PieceId, PieceSpec> = self.board.clone();
            for p in arriving {
                let h = piece_thickness(&ls.board, p.kind).unwrap_or(0.0);
                let mut moving = *p;
                moving.y_mm += SLIDE_FROM_MM * left;
                // On the surface while it slides; it drops into a cup or tilts as it stops.
                moving.z_mm = Some(h / 2.0);
                moving.tilt_deg = 0.0;
                pieces.insert(p.id, moving);
            }
            // Knocked pieces start moving over the last frame of the slide.
            if k + 1 == SLIDE_FRAMES {
                for kn in knocks {
                    match kn {
                        Knock::To(to) => {
                            let from = self.board.get(&to.id).ok_or_else(|| VideoError::Script {
                                problem: format!("{} is knocked but not on the board", to.id),
                            })?;
                            let mut mid = *to;
                            mid.x_mm = (from.x_mm + to.x_mm) / 2.0;
                            mid.y_mm = (from.y_mm + to.y_mm) / 2.0;
                            mid.z_mm = from.z_mm;
                            pieces.insert(to.id, mid);
                        }
                        Knock::Off(id) => {
                            pieces.remove(id);
                        }
                    }
                }
            }
            self.push_state(pieces.into_values().collect(), 1);
        }
        for p in arriving {
            self.board.insert(p.id, *p);
        }
        for kn in knocks {
            match kn {
                Knock::To(to) => {
                    self.board.insert(to.id, *to);
                }
                Knock::Off(id) => {
                    self.board.remove(id);
                }
            }
        }
        self.still(STILL_FRAMES);
        Ok(())
    }

    /// The board's state as an event: every listed piece with its true call.
    fn event(&self, thrower: &str) -> Event {
        let ls = &self.script.scene;
        let pieces = self.board.values().filter_map(|p| piece_state(&ls.board, ls, p)).collect();
        Event {
            thrower: thrower.to_string(),
            throws: Vec::new(),
            bounced: false,
            frame: None,
            note: None,
            time_s: None,
            review: None,
            pieces,
        }
    }

    fn step(&mut self, step: &Step) -> Result<(), VideoError> {
        let sjoelen = self.script.header.rules.as_deref() == Some(Rules::Sjoelen.name());
        match step {
            Step::Throw { thrower, piece, knocks } => {
                self.slide(&[*piece], knocks)?;
                if !sjoelen {
                    let e = self.event(thrower);
                    self.truth.push(e.clone());
                    self.expected.push(e);
                }
            }
            Step::Together { throws } => {
                if sjoelen || throws.len() < 2 {
                    return Err(VideoError::Script { problem: "`Together` needs two or more throws, and no sjoelen".into() });
                }
                for (thrower, p) in throws {
                    self.board.insert(p.id, *p);
                    let e = self.event(thrower);
                    self.truth.push(e);
                }
                for (_, p) in throws {
                    self.board.remove(&p.id);
                }
                let arriving: Vec<PieceSpec> = throws.iter().map(|(_, p)| *p).collect();
                self.slide(&arriving, &[])?;
                let mut e = self.event(&throws[0].0);
                e.review = Some(ambiguous_reason(throws.iter().map(|(_, p)| p.id)));
                self.expected.push(e);
            }
            Step::Volley { thrower, pieces } => {
                if sjoelen || pieces.len() < 2 {
                    return Err(VideoError::Script { problem: "`Volley` needs two or more pieces, and no sjoelen".into() });
                }
                self.slide(pieces, &[])?;
                let e = self.event(thrower);
                self.truth.push(e.clone());
                self.expected.push(e);
            }
            Step::Nudge { pose } => {
                self.pose = *pose;
                self.still(STILL_FRAMES);
            }
            Step::Hand => {
                self.hand();
                self.still(STILL_FRAMES);
            }
            Step::Clear => {
                self.hand();
                self.board.clear();
                self.still(STILL_FRAMES);
            }
            Step::SubTurnEnd { thrower, last } => {
                let e = self.event(thrower);
                self.truth.push(e.clone());
                self.expected.push(e);
                self.hand();
                let ls = &self.script.scene;
                if *last {
                    self.board.clear();
                } else {
                    self.board.retain(|_, p| piece_state(&ls.board, ls, p).is_some());
                }
                self.still(STILL_FRAMES);
            }
        }
        Ok(())
    }
}

/// Plays the script without rendering it: the frames' plan and both logs.
fn plan(script: &GameScript) -> Result<Builder<'_>, VideoError> {
    if !(script.scale.is_finite() && script.scale > 0.0 && script.scale <= 1.0) {
        return Err(VideoError::Script { problem: format!("scale must be in (0, 1], got {}", script.scale) });
    }
    let mut b = Builder {
        script,
        states: Vec::new(),
        pose: script.scene.pose,
        frames: Vec::new(),
        board: BTreeMap::new(),
        truth: Vec::new(),
        expected: Vec::new(),
    };
    // The empty board first: the pose is found and the board settles before the first throw.
    b.still(STILL_FRAMES);
    for step in &script.steps {
        b.step(step)?;
    }
    Ok(b)
}

/// The truth log and the expected reading of a script's video, without rendering it.
pub fn game_logs(script: &GameScript) -> Result<(EventLog, EventLog), VideoError> {
    let b = plan(script)?;
    let log = |events: Vec<Event>| EventLog { events, ..script.header.clone() };
    Ok((log(b.truth), log(b.expected)))
}

/// Renders a game on up to `threads` threads.
pub fn render_game(script: &GameScript, threads: usize) -> Result<GameVideo, VideoError> {
    let b = plan(script)?;
    let mut ls = script.scene.clone();
    let camera = scaled_camera(&ls.scene.camera.intrinsics, script.scale);
    ls.scene.camera.intrinsics = camera;
    let images: Vec<Mat> = b
        .states
        .iter()
        .map(|plan| {
            let mut state = ls.clone();
            state.scene.pieces = plan.pieces.clone();
            state.pose = plan.pose;
            bgr_mat(&crate::render::render(&state, threads))
        })
        .collect::<Result<_, _>>()?;
    let hand_at = hand_anchor(&ls, &camera);
    let frames = b
        .frames
        .iter()
        .map(|f| match f.hand {
            None => Ok(images[f.state].clone()),
            Some(k) => with_hand(&images[f.state], hand_at, k, script.scale),
        })
        .collect::<Result<Vec<Mat>, VideoError>>()?;
    let log = |events: Vec<Event>| EventLog { events, ..script.header.clone() };
    Ok(GameVideo { board: ls.board.clone(), camera, pose: ls.pose, fps: VIDEO_FPS, frames, truth: log(b.truth), expected: log(b.expected) })
}

/// An RGB image as an 8-bit BGR matrix (OpenCV's order).
fn bgr_mat(img: &image::RgbImage) -> Result<Mat, VideoError> {
    let (w, h) = (img.width() as i32, img.height() as i32);
    let rgb = Mat::new_rows_cols_with_data(h, w * 3, img.as_raw()).map_err(cv("frame"))?;
    let rgb = rgb.reshape(3, h).map_err(cv("frame"))?;
    let mut bgr = Mat::default();
    opencv::imgproc::cvt_color_def(&rgb, &mut bgr, opencv::imgproc::COLOR_RGB2BGR).map_err(cv("frame"))?;
    Ok(bgr)
}

/// Where the hand reaches: the middle of the board's surface, in the image.
fn hand_anchor(ls: &LoadedScene, camera: &Camera) -> (i32, i32) {
    let s = &ls.board.surface;
    let mid = BoardPoint3::new(0.0, s.length_mm / 2.0, 0.0);
    let px = ls.pose.project(camera, mid).map(|p| (p.u, p.v)).unwrap_or((camera.image_width as f64 / 2.0, camera.image_height as f64 / 2.0));
    (
        (px.0.clamp(0.0, camera.image_width as f64 - 1.0)) as i32,
        (px.1.clamp(0.0, camera.image_height as f64 - 1.0)) as i32,
    )
}

/// A hand (palm and four fingers, skin-coloured) and an arm reaching in from the
/// frame's right edge towards `at`, `k` steps into its pass (each step moves it).
fn with_hand(base: &Mat, at: (i32, i32), k: usize, scale: f64) -> Result<Mat, VideoError> {
    use opencv::core::{Point, Scalar, Size, Vector};
    use opencv::imgproc;
    let mut img = base.clone();
    let u = |v: f64| (v * scale * 2.0).round() as i32;
    // The hand sweeps across by a fifth of its size each step.
    let (cx, cy) = (at.0 - u(20.0) * k as i32, at.1 + u(10.0) * k as i32);
    let w = img.cols();
    let skin = Scalar::new(120.0, 150.0, 205.0, 0.0); // BGR
    let arm: Vector<Point> = [(cx - u(70.0), cy - u(60.0)), (cx + u(40.0), cy - u(80.0)), (w + 10, cy - u(150.0)), (w + 10, cy + u(40.0)), (cx + u(40.0), cy + u(70.0)), (cx - u(60.0), cy + u(60.0))]
        .into_iter()
        .map(|(x, y)| Point::new(x, y))
        .collect();
    let mut polys: Vector<Vector<Point>> = Vector::new();
    polys.push(arm);
    imgproc::fill_poly_def(&mut img, &polys, skin).map_err(cv("hand"))?;
    for f in 0..4 {
        let centre = Point::new(cx - u(85.0), cy - u(45.0) + u(30.0) * f);
        imgproc::ellipse_def(&mut img, centre, Size::new(u(45.0), u(11.0)), 0.0, 0.0, 360.0, skin).map_err(cv("hand"))?;
    }
    Ok(img)
}

impl GameVideo {
    /// Writes the frames as an MJPEG AVI (OpenCV's own writer: no codec library needed).
    pub fn write_avi(&self, path: &std::path::Path) -> Result<(), VideoError> {
        use opencv::videoio::{VideoWriter, VideoWriterTrait, VideoWriterTraitConst};
        let size = opencv::core::Size::new(self.camera.image_width as i32, self.camera.image_height as i32);
        let fourcc = VideoWriter::fourcc('M', 'J', 'P', 'G').map_err(cv("fourcc"))?;
        let name = path.to_str().ok_or_else(|| VideoError::Script { problem: format!("{} is not UTF-8", path.display()) })?;
        let mut writer = VideoWriter::new_with_backend(name, opencv::videoio::CAP_OPENCV_MJPEG, fourcc, self.fps, size, true)
            .map_err(cv("video writer"))?;
        if !writer.is_opened().map_err(cv("video writer"))? {
            return Err(VideoError::Script { problem: format!("OpenCV cannot write {}", path.display()) });
        }
        for f in &self.frames {
            writer.write(f).map_err(cv("video frame"))?;
        }
        writer.release().map_err(cv("video writer"))?;
        Ok(())
    }
}
