//! The long-running scorer: frames from a video file or a live camera, the
//! board located once and its pose re-checked now and then, and every settled
//! state of the board scored and reported once.
//!
//! A throw is a few seconds of motion between long still spells. Scoring every
//! frame and printing every report would flood a referee's screen with the
//! calls of weights still sliding; instead the watcher scores every `every`-th
//! frame and reports a state only once it has *settled*: the same pieces with
//! the same calls, none moved more than [`WatchConfig::still_mm`], over
//! [`WatchConfig::settle_frames`] scored frames in a row, with no motion over
//! the board between them (a hand is never perfectly still). A settled state is
//! reported once, as a `settled` event carrying the frame's full report
//! (`docs/report-format.md`), once the pose has been checked against that
//! frame (a hand held still or a cloth over the board hides the board's lines
//! or holes, and refuses); the next report comes when the board settles into a
//! different state.
//!
//! The pose is the one expensive stage (`locate`, 0.3-4 s). It is found once
//! (or taken from a pose file), checked against the frame's board edges every
//! [`WatchConfig::recheck_s`] seconds of stream time (a camera knocked out of
//! place, a board covered over: `board_lost`, and no scoring until it is found
//! again), and followed when the camera has drifted (`pose_moved`). Between
//! checks each scored frame costs the detector and the calls alone
//! ([`crate::score::Session`]). Events are documented in `docs/watch.md`.

use crate::board::Board;
use crate::calls::FoulLine;
use crate::camera::{Camera, CameraPose, FittedConstruction};
use crate::detect::DetectorConfig;
use crate::frame::{FrameError, StreamFrame};
use crate::geom::BoardPoint;
use crate::locate::{BoardPose, GivenPose, LocateConfig, Locator};
use crate::piece::{PieceKind, Team};
use crate::score::{FrameReport, PoseReport, RoundScoring, ScoreError, Session};
use crate::undistort::{UndistortConfig, Undistorter};
use serde::{Deserialize, Serialize};

mod standing;
pub use standing::EmptyBoard;

/// A state counts as settled after this many scored frames agree: one frame
/// can catch a weight stopped for an instant at the end of a bounce; three in
/// a row (a tenth of a second or more at any frame rate) cannot.
pub const SETTLE_FRAMES: usize = 3;

/// A piece that moved less than this (mm) between scored frames is at rest: a
/// resting piece's position varies from frame to frame by its measurement
/// noise (standard uncertainty 0.1-0.5 mm, leaners 1 mm), a sliding one by far
/// more.
pub const STILL_MM: f64 = 2.0;

/// Seconds of stream time between checks of the pose against the frame: a
/// check costs one refinement of `locate` (150-300 ms), so a few a minute cost
/// little and catch a knocked camera before many throws are scored from it.
pub const RECHECK_SECONDS: f64 = 10.0;

/// Seconds of stream time between attempts to find a board not in view: a
/// search from scratch takes up to seconds.
pub const RELOCATE_SECONDS: f64 = 2.0;

/// A checked pose that moves the board's image (the surface points in view)
/// by more than this (pixels) is adopted, and the detector rebuilt for it:
/// half a pixel is well above the check's own noise (~0.1 px) and below what
/// biases a measurement visibly.
pub const POSE_MOVED_PX: f64 = 0.5;

/// Motion is measured on blocks of this many pixels a side: the mean grey
/// level of a 16x16 block moves by ~0.3 levels with sensor noise (sigma ~3
/// levels, averaged over 256 pixels and differenced), by tens where a hand or
/// a piece moves through it.
pub const MOTION_BLOCK_PX: i32 = 16;

/// A block whose mean grey level changed by more than this between scored
/// frames holds motion: ten times the noise above, above the frame-to-frame
/// flicker of video compression (a level or two), far below a hand's change.
pub const MOTION_GREY_LEVELS: f32 = 3.0;

/// Motion counts within this distance (mm) of the playing surface: a hand
/// reaching in, a washer settling on the ground beside the board; players
/// moving further away do not keep the board from settling.
pub const MOTION_MARGIN_MM: f64 = 150.0;

/// Scored frames a second that `--every auto` aims at: three agreeing scored frames
/// then settle a state in half a second, well inside the seconds a thrown piece rests
/// before the next throw, and a 1080p stream at 30 fps (every 5th frame) is read at
/// over 3x real time on one core (BENCHMARKS.md, `match`).
pub const AUTO_SCORED_PER_SECOND: f64 = 6.0;

/// Which frames are scored: every n-th, or (`auto`) as many as give about
/// [`AUTO_SCORED_PER_SECOND`] scored frames a second of the stream's frame rate
/// (every frame when the rate is unknown or low).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Every {
    Auto,
    Nth(u64),
}

impl Every {
    /// The n of "every n-th frame" for a stream of `fps` frames a second (0: unknown).
    pub fn frames(self, fps: f64) -> u64 {
        match self {
            Every::Nth(n) => n,
            Every::Auto if fps.is_finite() && fps > 0.0 => ((fps / AUTO_SCORED_PER_SECOND).floor() as u64).max(1),
            Every::Auto => 1,
        }
    }
}

impl std::str::FromStr for Every {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim() {
            "auto" => Ok(Every::Auto),
            t => match t.parse::<u64>() {
                Ok(0) => Err("0: score every n-th frame with n >= 1, or `auto`".into()),
                Ok(n) => Ok(Every::Nth(n)),
                Err(_) => Err(format!("`{t}` is neither a whole number >= 1 nor `auto`")),
            },
        }
    }
}

impl std::fmt::Display for Every {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Every::Auto => f.write_str("auto"),
            Every::Nth(n) => write!(f, "{n}"),
        }
    }
}

/// How the watcher samples and judges the stream.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct WatchConfig {
    /// Score every n-th frame (1 = every frame).
    pub every: u64,
    /// Scored frames in a row that must agree before a state is reported.
    pub settle_frames: usize,
    /// A piece moving less than this (mm) between scored frames is at rest.
    pub still_mm: f64,
    /// Seconds of stream time between checks of the pose against the frame.
    pub recheck_s: f64,
    /// Seconds of stream time between attempts to find the board when it is not in view.
    pub relocate_s: f64,
}

impl Default for WatchConfig {
    fn default() -> Self {
        WatchConfig { every: 1, settle_frames: SETTLE_FRAMES, still_mm: STILL_MM, recheck_s: RECHECK_SECONDS, relocate_s: RELOCATE_SECONDS }
    }
}

/// Where the first pose comes from.
#[derive(Debug, Clone)]
pub enum PoseStart {
    /// Found in the stream's first frames.
    Locate,
    /// A pose file's, checked against the first frame (and found from scratch
    /// if the board is no longer where it says).
    Given(GivenPose),
    /// A pose file's, never checked: a rigid mount whose view is known to be clear.
    Trusted(CameraPose),
}

/// What the watcher reports, one JSON object per line (`docs/watch.md`).
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum WatchEvent {
    /// The board was found (or the given pose confirmed): scoring starts.
    BoardFound { frame: u64, time_s: f64, pose: PoseReport },
    /// A check found the camera moved slightly and the pose was followed.
    PoseMoved { frame: u64, time_s: f64, moved_px: f64, pose: PoseReport },
    /// The board is not where the pose says (camera moved, board covered) or
    /// not found: nothing is scored until it is found again.
    BoardLost { frame: u64, time_s: f64, reason: String },
    /// The board settled into a new state: its full report.
    Settled { frame: u64, time_s: f64, report: Box<FrameReport> },
    /// A frame could not be scored (said once per run of such frames).
    Unscored { frame: u64, time_s: f64, reason: String },
    /// The stream ended after `frames` frames (`time_s`: the last one's time).
    End { frames: u64, time_s: f64 },
}

/// Errors that stop the watch.
#[derive(Debug, thiserror::Error)]
pub enum WatchError {
    #[error("invalid watch setting `{field}`: {problem}")]
    Config { field: &'static str, problem: String },
    #[error("frame {frame} is {got_width}x{got_height} but the camera was calibrated at {want_width}x{want_height}")]
    FrameSize { frame: u64, got_width: u32, got_height: u32, want_width: u32, want_height: u32 },
    #[error(transparent)]
    Frame(#[from] FrameError),
    #[error(transparent)]
    Score(#[from] ScoreError),
}

/// What checking the pose against a frame found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Checked {
    /// The board is where the pose says.
    Same,
    /// The camera drifted; the pose was followed and the session rebuilt.
    Moved,
    /// The board is not there (moved, covered): the session was dropped.
    Lost,
}

/// What a state is judged by: each piece's side, kind, place and call, and
/// how much unexplained colour (a hand, a phone) is in view.
#[derive(Debug, Clone)]
struct State {
    pieces: Vec<(Option<Team>, PieceKind, BoardPoint, String)>,
    unexplained: usize,
}

impl State {
    fn of(report: &FrameReport) -> State {
        State {
            pieces: report.pieces.iter().map(|p| (p.team, p.kind, BoardPoint::new(p.x_mm, p.y_mm), p.call.clone())).collect(),
            unexplained: report.unexplained.len(),
        }
    }

    /// The same pieces, each within `still_mm` of where it was, with the same calls.
    fn same(&self, other: &State, still_mm: f64) -> bool {
        if self.pieces.len() != other.pieces.len() || self.unexplained != other.unexplained {
            return false;
        }
        let mut used = vec![false; other.pieces.len()];
        self.pieces.iter().all(|(team, kind, at, call)| {
            let found = other.pieces.iter().enumerate().position(|(i, (t, k, a, c))| {
                !used[i] && t == team && k == kind && c == call && a.distance(*at) <= still_mm
            });
            found.map(|i| used[i] = true).is_some()
        })
    }
}

/// The watcher: the board, camera and game, the pose and the scoring session
/// built for it, and what the stream has shown so far.
pub struct Watcher {
    board: Board,
    camera: Camera,
    detector: DetectorConfig,
    foul: FoulLine,
    game: Option<RoundScoring>,
    cfg: WatchConfig,
    undistorter: Undistorter,
    locator: Locator,
    /// The pose to try first when the board is not in view (a given pose, the last one known), with its construction.
    hint: Option<GivenPose>,
    /// The construction measured with the session's pose: where its checks start (empty: nominal).
    construction: FittedConstruction,
    trusted: bool,
    session: Option<(Session, PoseReport)>,
    last_check_s: f64,
    last_attempt_s: Option<f64>,
    /// A `board_lost` has been said and the board not found since.
    lost: bool,
    /// An `unscored` has been said for the current run of failing frames.
    unscored: bool,
    previous: Option<State>,
    /// Scored frames in a row agreeing with `previous`, with no motion over the board.
    run: usize,
    reported: Option<State>,
    /// Which motion blocks see the board (for the session's pose).
    board_blocks: Vec<bool>,
    /// Where each motion block's centre lies on the surface (for the session's pose; `None`: off it).
    block_points: Vec<Option<BoardPoint>>,
    /// What the last settled empty board showed (for the session's pose): patches of colour found there again
    /// in an unchanged image are its own ([`standing`]).
    empty: Option<EmptyBoard>,
    /// Empty boards recorded so far ([`Watcher::empty_boards_seen`]).
    empties_seen: u64,
    /// An empty board seen before this watcher started (a resumed match's), taken up by a session whose pose
    /// images the board where its pose did ([`Watcher::recall_empty_board`]).
    recalled: Option<EmptyBoard>,
    /// The last scored frame's block means.
    last_blocks: Option<Vec<f32>>,
}

impl Watcher {
    pub fn new(
        board: &Board,
        camera: &Camera,
        start: PoseStart,
        detector: DetectorConfig,
        foul: FoulLine,
        game: Option<RoundScoring>,
        cfg: WatchConfig,
    ) -> Result<Watcher, WatchError> {
        if cfg.every == 0 {
            return Err(WatchError::Config { field: "every", problem: "must be at least 1".into() });
        }
        if cfg.settle_frames == 0 {
            return Err(WatchError::Config { field: "settle_frames", problem: "must be at least 1".into() });
        }
        for (field, v) in [("still_mm", cfg.still_mm), ("recheck_s", cfg.recheck_s), ("relocate_s", cfg.relocate_s)] {
            if !(v.is_finite() && v >= 0.0) {
                return Err(WatchError::Config { field, problem: format!("must be a non-negative number, got {v}") });
            }
        }
        let (hint, trusted) = match start {
            PoseStart::Locate => (None, false),
            PoseStart::Given(p) => (Some(p), false),
            PoseStart::Trusted(p) => (Some(GivenPose::new(p)), true),
        };
        Ok(Watcher {
            board: board.clone(),
            camera: *camera,
            detector,
            foul,
            game,
            cfg,
            undistorter: Undistorter::new(*camera, UndistortConfig::default())?,
            locator: Locator::new(board, LocateConfig::default()),
            hint,
            construction: FittedConstruction::new(),
            trusted,
            session: None,
            last_check_s: 0.0,
            last_attempt_s: None,
            lost: false,
            unscored: false,
            previous: None,
            run: 0,
            reported: None,
            board_blocks: Vec::new(),
            block_points: Vec::new(),
            empty: None,
            empties_seen: 0,
            recalled: None,
            last_blocks: None,
        })
    }

    /// The last settled empty board this watcher saw, or recalled and took up, with the pose it was seen from.
    pub fn empty_board(&self) -> Option<&EmptyBoard> {
        self.empty.as_ref()
    }

    /// How many settled empty boards this watcher has recorded: a new one is worth keeping beside a journal.
    pub fn empty_boards_seen(&self) -> u64 {
        self.empties_seen
    }

    /// An empty board seen before this watcher started (kept beside a resumed match's journal): taken up by the
    /// first session whose pose images the board within [`POSE_MOVED_PX`] of where its pose did, from a frame of
    /// the camera's size; otherwise forgotten.
    pub fn recall_empty_board(&mut self, empty: EmptyBoard) {
        self.recalled = Some(empty);
    }

    /// Whether the frame of this index will be looked at (every `every`-th): the
    /// others may be skipped undecoded ([`crate::frame::FrameSource::skip_frame`]).
    pub fn wants(&self, index: u64) -> bool {
        index.is_multiple_of(self.cfg.every)
    }

    /// Takes the stream's next frame; returns what it changed.
    pub fn push(&mut self, f: &StreamFrame) -> Result<Vec<WatchEvent>, WatchError> {
        let (frame, time_s) = (f.index, f.time_s);
        if (f.frame.width(), f.frame.height()) != self.camera.size() {
            return Err(WatchError::FrameSize {
                frame,
                got_width: f.frame.width(),
                got_height: f.frame.height(),
                want_width: self.camera.image_width,
                want_height: self.camera.image_height,
            });
        }
        let mut events = Vec::new();
        if !f.index.is_multiple_of(self.cfg.every) {
            return Ok(events);
        }
        match &self.session {
            None => {
                if self.last_attempt_s.is_some_and(|t| time_s - t < self.cfg.relocate_s) {
                    return Ok(events);
                }
                self.last_attempt_s = Some(time_s);
                match self.find_pose(f) {
                    Ok((pose, report)) => {
                        self.start_session(pose, report.clone())?;
                        self.last_check_s = time_s;
                        self.lost = false;
                        events.push(WatchEvent::BoardFound { frame, time_s, pose: report });
                    }
                    Err(reason) => {
                        if !self.lost {
                            self.lost = true;
                            events.push(WatchEvent::BoardLost { frame, time_s, reason });
                        }
                        return Ok(events);
                    }
                }
            }
            Some(_) if !self.trusted && time_s - self.last_check_s >= self.cfg.recheck_s => {
                if self.recheck(f, &mut events)? == Checked::Lost {
                    return Ok(events);
                }
            }
            Some(_) => {}
        }
        let blocks = block_means(&f.frame)?;
        let moving = self.last_blocks.as_ref().is_some_and(|last| {
            last.iter().zip(&blocks).zip(&self.board_blocks).any(|((a, b), on_board)| *on_board && (a - b).abs() > MOTION_GREY_LEVELS)
        });
        self.last_blocks = Some(blocks.clone());
        let Some((session, pose)) = self.session.as_mut() else { return Ok(events) };
        match session.report(&f.frame, pose.clone(), self.foul) {
            Ok(mut report) => {
                self.unscored = false;
                self.set_standing(&mut report, &blocks);
                let state = State::of(&report);
                let same = !moving && self.previous.as_ref().is_some_and(|p| p.same(&state, self.cfg.still_mm));
                self.run = if same { self.run + 1 } else { 1 };
                let new = !self.reported.as_ref().is_some_and(|r| r.same(&state, self.cfg.still_mm));
                self.previous = Some(state.clone());
                if self.run == self.cfg.settle_frames && new {
                    // Before a state is reported, the board is checked to be where the
                    // pose says and in view: a still hand or a cloth over it refuses.
                    if !self.trusted {
                        match self.recheck(f, &mut events)? {
                            Checked::Lost => return Ok(events),
                            Checked::Same => {}
                            // Scored again with the pose followed.
                            Checked::Moved => {
                                let (session, pose) = self.session.as_mut().expect("a moved pose starts a session");
                                report = session.report(&f.frame, pose.clone(), self.foul)?;
                                self.set_standing(&mut report, &blocks);
                                self.previous = Some(State::of(&report));
                                self.run = self.cfg.settle_frames;
                            }
                        }
                    }
                    if let Some(g) = &self.game {
                        report.add_round_score(g, &self.board);
                    }
                    let pose = *self.session.as_ref().expect("a settled state has a session").0.pose();
                    if let Some(empty) = EmptyBoard::of(&report, &blocks, &pose, &self.camera) {
                        // The empty board's patches are its own from here on: this state is remembered as read
                        // with them standing, so the frames after it, read so, are the same state.
                        self.empty = Some(empty);
                        self.empties_seen += 1;
                        let mut own = report.clone();
                        self.set_standing(&mut own, &blocks);
                        self.previous = Some(State::of(&own));
                    }
                    self.reported = self.previous.clone();
                    events.push(WatchEvent::Settled { frame, time_s, report: Box::new(report) });
                }
            }
            Err(e) => {
                self.run = 0;
                self.previous = None;
                if !self.unscored {
                    self.unscored = true;
                    events.push(WatchEvent::Unscored { frame, time_s, reason: e.to_string() });
                }
            }
        }
        Ok(events)
    }

    /// Checks the session's pose against the frame: the board is where it says
    /// (followed, with a `pose_moved` event, if the camera drifted), or it is
    /// not (a `board_lost` event; the session is dropped).
    fn recheck(&mut self, f: &StreamFrame, events: &mut Vec<WatchEvent>) -> Result<Checked, WatchError> {
        let (frame, time_s) = (f.index, f.time_s);
        self.last_check_s = time_s;
        let Some(current) = self.session.as_ref().map(|(s, _)| *s.pose()) else { return Ok(Checked::Lost) };
        let current = GivenPose { pose: current, construction: self.construction.clone() };
        match self.check(f, &current) {
            Ok(bp) => {
                let moved_px = self.locator.image_distance(self.undistorter.ideal_camera(), &current.pose, &bp.pose);
                if moved_px <= POSE_MOVED_PX {
                    return Ok(Checked::Same);
                }
                let report = PoseReport::located("given", &bp);
                self.start_session(bp.given(), report.clone())?;
                events.push(WatchEvent::PoseMoved { frame, time_s, moved_px, pose: report });
                Ok(Checked::Moved)
            }
            Err(reason) => {
                self.lose(current, time_s);
                events.push(WatchEvent::BoardLost { frame, time_s, reason });
                Ok(Checked::Lost)
            }
        }
    }

    /// The pose for a frame with no session: the hint checked against it (a
    /// given pose, the pose before the board was lost), else a search from scratch.
    fn find_pose(&mut self, f: &StreamFrame) -> Result<(GivenPose, PoseReport), String> {
        if let Some(p) = self.hint.clone() {
            if self.trusted {
                let report = PoseReport::trusted(&p.pose);
                return Ok((p, report));
            }
            if let Ok(bp) = self.check(f, &p) {
                return Ok((bp.given(), PoseReport::located("given", &bp)));
            }
        }
        let u = self.undistorter.run(&f.frame).map_err(|e| e.to_string())?;
        let bp = self.locator.run(&u).map_err(|e| e.to_string())?;
        Ok((bp.given(), PoseReport::located("located", &bp)))
    }

    /// The pose `pose` refined against the frame's board edges (from its construction), or why the board is not there.
    fn check(&mut self, f: &StreamFrame, pose: &GivenPose) -> Result<BoardPose, String> {
        let u = self.undistorter.run(&f.frame).map_err(|e| e.to_string())?;
        self.locator.refine_from(&u, pose).map_err(|e| e.to_string())
    }

    /// A session for `given`'s pose; its construction is where the pose's later checks start.
    fn start_session(&mut self, given: GivenPose, report: PoseReport) -> Result<(), WatchError> {
        let detector = DetectorConfig { pose_sigma_mm: report.position_sigma_mm, ..self.detector.clone() };
        let pose = given.pose;
        self.construction = given.construction;
        self.session = Some((Session::new(&self.board, &self.camera, &pose, detector)?, report));
        // A new pose: what was seen before is not comparable.
        self.previous = None;
        self.run = 0;
        // The motion blocks whose centre sees the board (or just beside it).
        let (cols, rows) = (self.camera.image_width as i32 / MOTION_BLOCK_PX, self.camera.image_height as i32 / MOTION_BLOCK_PX);
        let s = &self.board.surface;
        let near = |p: BoardPoint| p.x_mm.abs() <= s.half_width() + MOTION_MARGIN_MM && (-MOTION_MARGIN_MM..=s.length_mm + MOTION_MARGIN_MM).contains(&p.y_mm);
        let surface = |p: &BoardPoint| s.contains(*p);
        let points: Vec<Option<BoardPoint>> = (0..rows * cols)
            .map(|i| {
                let half = MOTION_BLOCK_PX as f64 / 2.0;
                let px = crate::geom::PixelPoint::new(((i % cols) * MOTION_BLOCK_PX) as f64 + half, ((i / cols) * MOTION_BLOCK_PX) as f64 + half);
                pose.back_project(&self.camera, px, 0.0)
            })
            .collect();
        self.board_blocks = points.iter().map(|p| p.is_some_and(near)).collect();
        self.block_points = points.into_iter().map(|p| p.filter(surface)).collect();
        // The empty board seen before is this board's only from where it was seen.
        let seen = self.empty.take().or_else(|| self.recalled.take());
        self.empty = seen.filter(|e| e.fits(&self.camera) && self.locator.image_distance(self.undistorter.ideal_camera(), &e.pose, &pose) <= POSE_MOVED_PX);
        Ok(())
    }

    /// Moves `report`'s patches that the last empty board showed, in an image unchanged round them since
    /// (`blocks`: this frame's block means), to its standing ones ([`standing::standing`]).
    fn set_standing(&self, report: &mut FrameReport, blocks: &[f32]) {
        let Some(empty) = &self.empty else { return };
        let flags = standing::standing(empty, report, blocks, &self.block_points, self.board.piece().radius_mm);
        report.set_standing(&flags);
    }

    /// The board is not where `pose` says: no scoring until it is found again, from `pose` first.
    fn lose(&mut self, pose: GivenPose, time_s: f64) {
        self.hint = Some(pose);
        self.session = None;
        self.lost = true;
        self.last_attempt_s = Some(time_s);
        self.previous = None;
        self.run = 0;
    }

}

/// The frame's mean grey level over blocks of [`MOTION_BLOCK_PX`] (the image's
/// right and bottom remainders left out), row by row.
fn block_means(frame: &crate::frame::Frame) -> Result<Vec<f32>, FrameError> {
    use opencv::core::{Mat, Rect, Size};
    use opencv::prelude::*;
    let cv = |context: &str, source: opencv::Error| FrameError::OpenCv { context: context.into(), source };
    let (cols, rows) = (frame.width() as i32 / MOTION_BLOCK_PX, frame.height() as i32 / MOTION_BLOCK_PX);
    let mut grey = Mat::default();
    opencv::imgproc::cvt_color_def(frame.image(), &mut grey, opencv::imgproc::COLOR_BGR2GRAY).map_err(|e| cv("grey", e))?;
    let whole = Mat::roi(&grey, Rect::new(0, 0, cols * MOTION_BLOCK_PX, rows * MOTION_BLOCK_PX)).map_err(|e| cv("motion blocks", e))?;
    // In floats, so the block means are not rounded to whole levels.
    let mut float = Mat::default();
    whole.convert_to(&mut float, opencv::core::CV_32F, 1.0, 0.0).map_err(|e| cv("motion blocks", e))?;
    let mut small = Mat::default();
    // Area interpolation averages each block exactly when the size divides.
    opencv::imgproc::resize(&float, &mut small, Size::new(cols, rows), 0.0, 0.0, opencv::imgproc::INTER_AREA).map_err(|e| cv("motion blocks", e))?;
    let mut out = Vec::with_capacity((cols * rows) as usize);
    for r in 0..rows {
        for c in 0..cols {
            out.push(*small.at_2d::<f32>(r, c).map_err(|e| cv("motion blocks", e))?);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_auto_scores_about_six_frames_a_second() {
        let auto: Every = "auto".parse().expect("auto");
        assert_eq!(auto, Every::Auto);
        // 30 fps: every 5th (6 a second); 60 fps: every 10th; 25 fps: every 4th (6.25 a second).
        assert_eq!([auto.frames(30.0), auto.frames(60.0), auto.frames(25.0)], [5, 10, 4]);
        // The test videos' 10 fps, a slow webcam, an unknown or broken rate: every frame.
        for fps in [10.0, 5.0, 0.0, -1.0, f64::NAN, f64::INFINITY] {
            assert_eq!(auto.frames(fps), 1, "{fps} fps");
        }
        assert_eq!("3".parse::<Every>().map(|e| e.frames(30.0)), Ok(3));
        for bad in ["0", "-2", "2.5", "often", ""] {
            assert!(bad.parse::<Every>().is_err(), "`{bad}` accepted");
        }
        assert_eq!(Every::Nth(7).to_string(), "7");
    }
}
