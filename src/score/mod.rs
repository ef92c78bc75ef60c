//! The `Calls` stage: turns detections into referee's calls with their margins,
//! uncertainties and review flags, and gathers them into the frame's report.

use crate::board::{Board, Layout};
use crate::calls::{self, Boundary, FoulLine};
use crate::detect::{DetectError, Detections, Detector, DetectorConfig, MeasuredBy};
use crate::measure::ColourView;
use crate::geom::{BoardPoint, Footprint};
use crate::piece::{PieceId, PieceKind, Team};
use serde::{Deserialize, Serialize};

mod washers;
use washers::{drop_contradicted_cup_washers, drop_floor_washers_leaners_explain, model_only_to_review, place_cup_washers, place_leaners};

/// A call is flagged for review when its margin is within this many standard
/// uncertainties of the boundary: at 3 sigma a normal measurement error flips
/// fewer than 0.14 % of unflagged calls.
pub const REVIEW_SIGMAS: f64 = 3.0;

/// Uncertainty no measurement goes below (mm): the board itself is only known
/// to this precision (paint edges, line placement, board flatness).
pub const SIGMA_FLOOR_MM: f64 = 0.1;

/// A piece's outline is placed in the image with a bias its scatter does not
/// show, px: light from one side, a bevel's highlight, a shadow at the foot, the
/// blur and JPEG shift its edges unevenly round it, and so its centre (the
/// fit's own sigma falls as 1/sqrt of its edges and says nothing of this).
/// Footprint errors with the true pose, in pixels at the piece: own renders
/// median 0.08, 90th percentile 0.31; varied median 0.11, p90 0.49; external
/// median 0.49 (where discs on hidden stacks add their own). A quarter pixel,
/// the sub-pixel edge's error the radius allows for too
/// (`detect::verify::RADIUS_BIAS_PX`): with it, the true-pose footprints within
/// three sigmas rise on the varied set from 91 % to 98 %, and a whole-board
/// view at 5 mm a pixel no longer claims a weight's place to 0.13 mm.
pub const EDGE_BIAS_PX: f64 = 0.25;

/// A washer's outline is its 3.2 mm edge and the shadow beside it, which bias
/// the fitted outline by a few tenths of a mm in a direction that depends on
/// the light: measured on the fixtures, |error| of washer margins has p95
/// 0.47-0.69 mm where weights and discs have 0.07-0.12 mm. This standard
/// uncertainty is added for washers so that 3 sigma covers it.
pub const WASHER_OUTLINE_SIGMA_MM: f64 = 0.3;

/// One piece's call, as reported.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PieceReport {
    pub id: PieceId,
    pub kind: PieceKind,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub team: Option<Team>,
    pub x_mm: f64,
    pub y_mm: f64,
    /// The height of its top face as measured (on the surface, in a gutter or
    /// cup, on the ground, on a partition), and its tilt (a leaner).
    pub top_z_mm: f64,
    pub tilt_deg: f64,
    /// What its position was measured from (its outline; a washer's colour on
    /// a cup's floor; a leaning pose; the hole model alone).
    #[serde(default)]
    pub measured_by: MeasuredBy,
    /// The call's name: `off short zone1 zone2 zone3 hanger corner_hanger` (shuffleboard),
    /// `in leaner on_board off` (washers), `compartment none` (sjoelen).
    pub call: String,
    /// Points of the zone, hole or compartment, where the call has one.
    pub value: Option<u32>,
    /// The hole (washers) or compartment (sjoelen) index, where the call has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub place: Option<usize>,
    pub boundary: Boundary,
    pub margin_mm: f64,
    pub sigma_mm: f64,
    /// The margin is within [`REVIEW_SIGMAS`] sigma of the boundary, or the detection is in doubt.
    pub review: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub doubt: Option<String>,
}

/// Calls every detected piece ([`call_detections`]) and sets aside, as unexplained, the surplus of a side's
/// pieces in doubt over what the game has ([`set_aside_doubtful_extras`]): the pieces a frame's score counts.
pub fn call_pieces(board: &Board, detections: &mut Detections, foul: FoulLine, pose_sigma_mm: f64) -> Vec<PieceReport> {
    let mut pieces = call_detections(board, detections, foul, pose_sigma_mm);
    set_aside_doubtful_extras(&mut pieces, &mut detections.unexplained, board.pieces_a_side());
    pieces
}

/// Calls every detected piece. `pose_sigma_mm` is the camera pose's contribution
/// to each footprint's uncertainty (from the localisation's residuals).
pub fn call_detections(board: &Board, detections: &Detections, foul: FoulLine, pose_sigma_mm: f64) -> Vec<PieceReport> {
    let mut numbers: std::collections::BTreeMap<Option<Team>, u32> = Default::default();
    let mut out = Vec::with_capacity(detections.pieces.len());
    let mut order: Vec<usize> = (0..detections.pieces.len()).collect();
    // Number pieces from the target end outwards, per team: stable, readable ids.
    order.sort_by(|&a, &b| {
        let (pa, pb) = (&detections.pieces[a].footprint.centre, &detections.pieces[b].footprint.centre);
        pa.y_mm.total_cmp(&pb.y_mm).then(pa.x_mm.total_cmp(&pb.x_mm))
    });
    for i in order {
        let d = &detections.pieces[i];
        let n = numbers.entry(d.team).or_insert(0);
        *n += 1;
        let id = match d.team {
            Some(t) => PieceId::of_team(t, *n),
            None => PieceId::disc(*n),
        };
        let outline = if d.kind == PieceKind::Washer { WASHER_OUTLINE_SIGMA_MM } else { 0.0 };
        let edge_bias = if d.mm_per_px.is_finite() { EDGE_BIAS_PX * d.mm_per_px } else { 0.0 };
        let sigma = (d.sigma_mm.powi(2) + pose_sigma_mm.powi(2) + SIGMA_FLOOR_MM.powi(2) + outline.powi(2) + edge_bias.powi(2)).sqrt();
        let fp = d.footprint;
        let (call, value, place, boundary, margin) = call_one(board, fp, d.top_z_mm, d.tilt_deg, foul);
        // A piece on the ground beside the board is off by its height, which
        // its size measured far below the surface: its place on the ground,
        // however uncertain, does not decide its call.
        let off_by_height = d.measured_by == MeasuredBy::HeightFromSize && !board.surface.contains(fp.centre);
        let review = (margin.abs() < REVIEW_SIGMAS * sigma && !off_by_height) || d.doubt.is_some();
        out.push(PieceReport {
            id,
            kind: d.kind,
            team: d.team,
            x_mm: fp.centre.x_mm,
            y_mm: fp.centre.y_mm,
            top_z_mm: d.top_z_mm,
            tilt_deg: d.tilt_deg,
            measured_by: d.measured_by,
            call,
            value,
            place,
            boundary,
            margin_mm: margin,
            sigma_mm: sigma,
            review,
            doubt: d.doubt.clone(),
        });
    }
    out
}

/// The call of one footprint on `board`: name, value, hole/compartment, boundary, margin.
fn call_one(board: &Board, fp: Footprint, top_z: f64, tilt_deg: f64, foul: FoulLine) -> (String, Option<u32>, Option<usize>, Boundary, f64) {
    // Washers are called on their pose: the centre at mid-thickness below the top.
    let centre_z = top_z - board.washer().map_or(0.0, |w| w.washer_thickness_mm / 2.0);
    let c = calls::call_piece(board, fp.centre.at_height(centre_z), fp.radius_mm, tilt_deg, foul);
    (c.name().to_string(), c.value(board), c.place(), c.boundary(), c.margin_mm())
}

/// The report format version (`docs/report-format.md`).
pub const REPORT_FORMAT: u32 = 1;

/// Errors that stop a frame from being scored at all.
#[derive(Debug, thiserror::Error)]
pub enum ScoreError {
    #[error(transparent)]
    Frame(#[from] crate::frame::FrameError),
    #[error(transparent)]
    Locate(#[from] crate::locate::LocateError),
    #[error(transparent)]
    Detect(#[from] DetectError),
    #[error(transparent)]
    Camera(#[from] crate::camera::CameraError),
    #[error(transparent)]
    Model(#[from] crate::model::ModelError),
    #[error("the frame is {got_width}x{got_height} but the camera was calibrated at {want_width}x{want_height}")]
    FrameSize { got_width: u32, got_height: u32, want_width: u32, want_height: u32 },
    #[error("the frame cannot be read honestly: {}", reasons.join("; "))]
    Unreadable { reasons: Vec<String> },
}

/// Where the frame's camera pose came from, and how good it is.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PoseReport {
    /// `located` (found from the board's features) or `given` (a pose file).
    pub source: String,
    pub rvec: [f64; 3],
    pub tvec: [f64; 3],
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reprojection_rms_px: Option<f64>,
    /// The pose's contribution to every footprint's uncertainty (mm).
    pub position_sigma_mm: f64,
}

impl PoseReport {
    /// A pose `locate` found (`source` "located") or checked against the frame
    /// ("given"), with its evidence.
    pub fn located(source: &str, bp: &crate::locate::BoardPose) -> PoseReport {
        PoseReport {
            source: source.into(),
            rvec: bp.pose.rvec(),
            tvec: bp.pose.translation,
            reprojection_rms_px: Some(bp.reprojection_rms_px),
            position_sigma_mm: bp.position_sigma_mm,
        }
    }

    /// A pose used without looking at the frame.
    pub fn trusted(p: &crate::camera::CameraPose) -> PoseReport {
        PoseReport { source: "trusted".into(), rvec: p.rvec(), tvec: p.translation, reprojection_rms_px: None, position_sigma_mm: 0.0 }
    }
}

/// Everything `boardcall score` says about one frame.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FrameReport {
    pub format: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub image: Option<String>,
    pub board: String,
    pub pose: PoseReport,
    pub pieces: Vec<PieceReport>,
    /// Colour the detector could not explain as pieces (a hand, a phone, chalk).
    pub unexplained: Vec<crate::detect::Unexplained>,
    /// The round's score from the rules engine, when a game was named.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub score: Option<serde_json::Value>,
    /// The teams' colour models the frame was read with (none for sjoelen),
    /// and where they came from (standard, given, learned from a frame).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub teams: Vec<crate::detect::TeamColour>,
    #[serde(default)]
    pub teams_source: crate::detect::TeamsSource,
    /// Shuffleboard weights whose cap is smaller than the body: the cap the
    /// frame was read with (given, or its radius learned from the weights).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub weight_cap: Option<CapReport>,
    /// True when any call is close to its boundary, anything is unexplained, or
    /// the pieces do not add up: a person should look before the score stands.
    pub needs_review: bool,
    pub review_reasons: Vec<String>,
    /// What puts the frame's reading as a whole in doubt, not one piece's call (each is among
    /// `review_reasons` too): a damaged picture, piles of discs the view cannot see under, more
    /// pieces of a side than the game has. A match holds the event read from such a frame for review.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub doubts: Vec<String>,
    /// Colour no piece explains that the empty board showed at that place, in an image unchanged there since
    /// wherever no piece was found (a lamp's glare, a stain: `boardcall watch` and `match` only, which see the
    /// empty board): not a reason for review, listed here instead of in `unexplained`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub standing: Vec<crate::detect::Unexplained>,
}

/// A sjoelen disc's report for tests: disc 1 at (`x_mm`, `y_mm`), in `compartment` (0-3) or in none, its call clear.
#[cfg(test)]
pub(crate) fn test_disc(x_mm: f64, y_mm: f64, compartment: Option<usize>) -> PieceReport {
    PieceReport {
        id: PieceId::disc(1),
        kind: PieceKind::Disc,
        team: None,
        x_mm,
        y_mm,
        top_z_mm: 13.0,
        tilt_deg: 0.0,
        measured_by: Default::default(),
        call: if compartment.is_some() { "compartment" } else { "none" }.into(),
        value: compartment.map(|c| [1, 4, 3, 2][c]),
        place: compartment,
        boundary: crate::calls::Boundary::GateFront,
        margin_mm: 50.0,
        sigma_mm: 0.2,
        review: false,
        doubt: None,
    }
}

/// The review reason an unexplained patch gives its frame.
fn unexplained_reason(u: &crate::detect::Unexplained) -> String {
    format!("unexplained {:?} colour at ({:.0}, {:.0}) mm: {}", u.kind, u.centre.x_mm, u.centre.y_mm, u.reason)
}

/// A weight's cap as a frame was read with it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct CapReport {
    pub radius_mm: f64,
    /// How far below the body's top its face lies, when given; `null`: not
    /// known, taken as half the most a cap is set in, the footprints'
    /// sigma widened for it.
    pub recess_mm: Option<f64>,
    /// Whether the radius was learned from the frame's weights (not given).
    pub learned: bool,
}

/// The game a frame's pieces are scored as a round of.
#[derive(Debug, Clone)]
pub struct RoundScoring {
    pub rules: crate::rules::Rules,
    /// Game options (`KEY=VALUE`), as for `boardcall game`.
    pub options: Vec<String>,
    /// The team that threw first this round.
    pub first: Team,
}

impl FrameReport {
    /// Moves the unexplained patches `standing` marks (one flag each, in order) to [`FrameReport::standing`]:
    /// the board's own, seen on the empty board. Their review reasons go with them; the frame needs review
    /// still if any other reason is left.
    pub fn set_standing(&mut self, standing: &[bool]) {
        let mut flags = standing.iter().copied();
        let (own, rest): (Vec<_>, Vec<_>) = std::mem::take(&mut self.unexplained).into_iter().partition(|_| flags.next().unwrap_or(false));
        self.unexplained = rest;
        for u in &own {
            let reason = unexplained_reason(u);
            if let Some(i) = self.review_reasons.iter().position(|r| *r == reason) {
                self.review_reasons.remove(i);
            }
        }
        self.needs_review = !self.review_reasons.is_empty();
        self.standing.extend(own);
    }

    /// Adds the round's score by the rules engine ([`score_round`]), or, where
    /// none can be given from this frame, the reason, as a review reason.
    pub fn add_round_score(&mut self, game: &RoundScoring, board: &Board) {
        match score_round(game.rules, &game.options, board, game.first, &self.pieces) {
            Ok(v) => {
                // The rules engine's own doubt (e.g. two weights too close to call who is nearer) is the frame's:
                // the report never says `needs_review: false` over a score that does.
                if v.get("status").and_then(|s| s.as_str()) == Some("needs_review") {
                    self.needs_review = true;
                    let why = v.pointer("/review/reason").and_then(|r| r.as_str()).unwrap_or("the rules engine cannot decide");
                    self.review_reasons.push(format!("round score needs review: {why}"));
                }
                self.score = Some(v);
            }
            Err(why) => {
                self.needs_review = true;
                self.review_reasons.push(format!("no round score: {why}"));
            }
        }
    }
}

/// How the camera pose for a frame is obtained.
pub enum PoseInput {
    /// A pose from a file (e.g. saved by `locate` for a fixed camera, with the
    /// construction measured with it), checked against this frame's board edges
    /// first: a camera knocked out of place or a board covered over refuses
    /// instead of scoring.
    Given(crate::locate::GivenPose),
    /// A pose trusted without looking (fastest; for a rigid mount whose view
    /// is known to be clear).
    Trusted(crate::camera::CameraPose),
    /// A pose trusted without looking, with the uncertainty measured when it
    /// was found (a pose file's `position_sigma_mm`, e.g. from typed points):
    /// every footprint's sigma carries it, so a call closer than the pose is
    /// good for needs review.
    Recorded { pose: crate::camera::CameraPose, position_sigma_mm: f64 },
    /// Found from the frame itself.
    Locate(crate::locate::LocateConfig),
}

/// Scores one frame: pose, detections, calls, and the reasons it needs review.
pub fn score_frame(
    frame: &crate::frame::Frame,
    board: &Board,
    camera: &crate::camera::Camera,
    pose: PoseInput,
    detector: DetectorConfig,
    foul: FoulLine,
) -> Result<(FrameReport, crate::camera::CameraPose), ScoreError> {
    if (frame.width(), frame.height()) != camera.size() {
        return Err(ScoreError::FrameSize {
            got_width: frame.width(),
            got_height: frame.height(),
            want_width: camera.image_width,
            want_height: camera.image_height,
        });
    }
    let (camera_pose, pose_report) = match pose {
        PoseInput::Trusted(p) => (p, PoseReport::trusted(&p)),
        PoseInput::Recorded { pose, position_sigma_mm } => (pose, PoseReport { position_sigma_mm, ..PoseReport::trusted(&pose) }),
        PoseInput::Given(p) => {
            let mut und = crate::undistort::Undistorter::new(*camera, crate::undistort::UndistortConfig::default())?;
            let u = und.run(frame)?;
            let bp = crate::locate::Locator::new(board, crate::locate::LocateConfig::default()).refine_from(&u, &p)?;
            (bp.pose, PoseReport::located("given", &bp))
        }
        PoseInput::Locate(cfg) => {
            let bp = crate::locate::locate_frame(board, camera, frame, cfg)?;
            (bp.pose, PoseReport::located("located", &bp))
        }
    };
    // The detector allows for the pose's uncertainty where it judges a piece against the board's solids.
    let detector = DetectorConfig { pose_sigma_mm: pose_report.position_sigma_mm, ..detector };
    let report = Session::new(board, camera, &camera_pose, detector)?.report(frame, pose_report, foul)?;
    Ok((report, camera_pose))
}

/// The `Detections` stage of one frame: the classical detector, then (washer
/// boards, unless `cfg.hole_model` is off) the learned hole-state model's
/// corrections of the washer calls ([`crate::model::refine_washers`]).
pub fn detect_pieces(
    view: &ColourView,
    board: &Board,
    camera: &crate::camera::Camera,
    pose: &crate::camera::CameraPose,
    cfg: DetectorConfig,
) -> Result<Detections, ScoreError> {
    Session::new(board, camera, pose, cfg)?.detect(view)
}

/// Scoring with one camera pose: the detector (its candidate grid projected
/// for that pose) and, on washer boards, the hole-state model with where its
/// hole patches lie in the frame, built once and reused frame after frame (a
/// fixed camera, a video: [`crate::watch`]).
pub struct Session {
    board: Board,
    camera: crate::camera::Camera,
    pose: crate::camera::CameraPose,
    detector: Detector,
    /// The learned hole-state model, on washer boards unless switched off, and
    /// where its patches are read for this pose.
    model: Option<(crate::model::HoleClassifier, crate::model::PatchTaps)>,
}

impl Session {
    pub fn new(board: &Board, camera: &crate::camera::Camera, pose: &crate::camera::CameraPose, cfg: DetectorConfig) -> Result<Session, ScoreError> {
        let use_model = cfg.hole_model && matches!(board.layout, Layout::Washer(_));
        let model = if use_model { Some((crate::model::HoleClassifier::embedded()?, crate::model::PatchTaps::new(camera, pose, board))) } else { None };
        let detector = Detector::new(cfg, board, camera, pose)?;
        Ok(Session { board: board.clone(), camera: *camera, pose: *pose, detector, model })
    }

    /// The camera pose this session scores with.
    pub fn pose(&self) -> &crate::camera::CameraPose {
        &self.pose
    }

    /// The `Detections` stage of one frame: the classical detector, then (washer
    /// boards, with the model) the learned hole-state model's corrections of the
    /// washer calls ([`crate::model::refine_washers`]).
    pub fn detect(&mut self, view: &ColourView) -> Result<Detections, ScoreError> {
        // The hole states depend on the frame alone: the model runs beside the detector.
        let (detector, board) = (&mut self.detector, &self.board);
        let (detections, states) = rayon::join(|| detector.detect(view), || self.model.as_mut().map(|(model, taps)| model.classify(view, taps, board)));
        let mut detections = detections?;
        if let Some(states) = states {
            let det = &self.detector;
            let states = states?;
            let known = crate::model::trained_teams(det.teams().0);
            crate::model::refine_washers(board, &states, &known, &mut detections);
            place_leaners(det, view, board, &mut detections);
            drop_floor_washers_leaners_explain(det, view, board, &mut detections);
            place_cup_washers(det, view, board, &mut detections);
            drop_contradicted_cup_washers(det, view, board, &mut detections);
            model_only_to_review(board, &mut detections);
            // Two parts of one piece's colour, measured apart and placed by one
            // pose (a leaner's part above the surface and its part in the hole): one piece.
            let r = board.piece().radius_mm;
            let mut kept: Vec<crate::detect::Detection> = Vec::with_capacity(detections.pieces.len());
            for d in detections.pieces.drain(..) {
                if !kept.iter().any(|k| k.team == d.team && crate::detect::same_piece(k, &d, r)) {
                    kept.push(d);
                }
            }
            detections.pieces = kept;
        }
        Ok(detections)
    }

    /// One frame's report: detections, calls, and the reasons it needs review.
    /// `pose` says where this session's pose came from.
    pub fn report(&mut self, frame: &crate::frame::Frame, pose: PoseReport, foul: FoulLine) -> Result<FrameReport, ScoreError> {
        use opencv::prelude::MatTraitConstManual;
        if (frame.width(), frame.height()) != self.camera.size() {
            return Err(ScoreError::FrameSize {
                got_width: frame.width(),
                got_height: frame.height(),
                want_width: self.camera.image_width,
                want_height: self.camera.image_height,
            });
        }
        // Teams on shuffleboards and washer boards are told apart by colour; sjoelen discs are not.
        let needs_colour = !matches!(self.board.layout, Layout::Sjoelbak(_));
        let bytes = frame.image().data_bytes().map_err(|source| crate::frame::FrameError::OpenCv { context: "frame bytes".into(), source })?;
        let view = ColourView::new(frame.width() as usize, frame.height() as usize, bytes).map_err(DetectError::Measure)?;
        // The frame's checks and the detection only read the frame: they run side by side, and a frame the checks
        // find unreadable is refused whatever the detection made of it.
        let (quality, detections) = rayon::join(|| crate::frame::quality::Quality::measure(frame), || self.detect(&view));
        let quality = quality?;
        let problems = quality.problems(needs_colour);
        if !problems.is_empty() {
            return Err(ScoreError::Unreadable { reasons: problems });
        }
        let mut detections = detections?;
        let board = &self.board;
        let pieces = call_pieces(board, &mut detections, foul, pose.position_sigma_mm);
        let mut reasons = quality.doubts();
        // The frame's own doubts (not one piece's): the picture's, the detector's, a side's surplus (below).
        let mut doubts = reasons.clone();
        doubts.extend(detections.doubts.iter().cloned());
        for p in pieces.iter().filter(|p| p.review) {
            reasons.push(match &p.doubt {
                Some(d) => format!("{}: {d}", p.id),
                None => format!("{}: {} by {:+.1} mm, within {REVIEW_SIGMAS} sigma ({:.2} mm)", p.id, p.call, p.margin_mm, p.sigma_mm),
            });
        }
        reasons.extend(detections.unexplained.iter().map(unexplained_reason));
        reasons.extend(detections.doubts.iter().cloned());
        reasons.extend(self.detector.team_doubts().iter().map(|d| format!("team colours: {d}")));
        let (teams, teams_source) = self.detector.teams();
        let teams = if needs_colour { teams.to_vec() } else { Vec::new() };
        let (cap, learned) = self.detector.weight_cap();
        let weight_cap = cap.radius_mm.map(|radius_mm| CapReport { radius_mm, recess_mm: cap.recess_mm, learned });
        {
            let max = board.pieces_a_side();
            for team in [Some(Team::Red), Some(Team::Blue), None] {
                let n = pieces.iter().filter(|p| p.team == team).count();
                if n > max {
                    let why = format!("{n} pieces of one side seen, the game has {max}");
                    reasons.push(why.clone());
                    doubts.push(why);
                }
            }
        }
        let report = FrameReport {
            format: REPORT_FORMAT,
            image: frame.source().map(|p| p.display().to_string()),
            board: board.name.clone(),
            pose,
            pieces,
            unexplained: detections.unexplained,
            teams,
            teams_source,
            weight_cap,
            score: None,
            needs_review: !reasons.is_empty(),
            review_reasons: reasons,
            doubts,
            standing: Vec::new(),
        };
        Ok(report)
    }
}

/// More pieces of one side than the game has (`max`): the surplus is something else read as pieces (a number or
/// logo printed in a team's paint, varied 09: a red "3" fitted as two red weights, their outlines 23-24 mm for a
/// 29.4 mm weight). As many as the surplus of those in doubt (an outline not the piece's size) are set aside, not
/// scored, and listed as unexplained with why; the frame needs review either way (its count is reported). A side
/// with no piece in doubt keeps every piece: nothing says which ones are extra.
fn set_aside_doubtful_extras(pieces: &mut Vec<PieceReport>, unexplained: &mut Vec<crate::detect::Unexplained>, max: usize) {
    for team in [Some(Team::Red), Some(Team::Blue), None] {
        let seen = pieces.iter().filter(|p| p.team == team).count();
        let mut surplus = seen.saturating_sub(max);
        pieces.retain(|p| {
            let Some(doubt) = p.doubt.as_ref().filter(|_| surplus > 0 && p.team == team) else { return true };
            surplus -= 1;
            unexplained.push(crate::detect::Unexplained {
                kind: p.kind,
                team: p.team,
                centre: BoardPoint::new(p.x_mm, p.y_mm),
                area_mm2: 0.0,
                reason: format!("{seen} pieces of one side seen, the game has {max}: {} set aside, not scored ({doubt})", p.id),
            });
            false
        });
    }
}

/// Draws every piece's footprint (its top outline, through the camera model)
/// with its call and margin on a copy of the frame; and each patch of colour no
/// piece explains as a circle of its area at the pieces' top height, marked
/// "unexplained" (what makes the frame need review), or "board's own" where the
/// empty board showed it ([`FrameReport::standing`]).
pub fn annotate(
    frame: &crate::frame::Frame,
    camera: &crate::camera::Camera,
    pose: &crate::camera::CameraPose,
    board: &Board,
    report: &FrameReport,
) -> Result<opencv::core::Mat, ScoreError> {
    use opencv::core::Scalar;
    let mut img = frame.image().clone();
    let piece = board.piece();
    // Green: a clear call; amber: flagged for review; magenta: unexplained; grey: the board's own. All survive a projector.
    let (clear, review) = (Scalar::new(60.0, 220.0, 60.0, 0.0), Scalar::new(0.0, 190.0, 255.0, 0.0));
    let (unexplained, own) = (Scalar::new(255.0, 0.0, 255.0, 0.0), Scalar::new(170.0, 170.0, 170.0, 0.0));
    for p in &report.pieces {
        let text = format!("{} {} {:+.1}mm", p.id, p.call, p.margin_mm);
        let at = crate::geom::BoardPoint::new(p.x_mm, p.y_mm);
        draw_outline(&mut img, camera, pose, (at, piece.radius_mm, p.top_z_mm), if p.review { review } else { clear }, 2, &text)?;
    }
    // A patch is drawn as the circle of its area (one of a piece's size where it has none: a cup's floor).
    let patch_radius = |u: &crate::detect::Unexplained| if u.area_mm2 > 0.0 { u.radius_mm() } else { piece.radius_mm };
    for (patches, colour, label) in [(&report.standing, own, "board's own"), (&report.unexplained, unexplained, "unexplained")] {
        for u in patches {
            draw_outline(&mut img, camera, pose, (u.centre, patch_radius(u), piece.thickness_mm), colour, 1, label)?;
        }
    }
    Ok(img)
}

/// Draws the circle of `radius` mm about `centre` at height `z` mm (`circle`), through the camera model, in
/// `colour` with lines `thickness` px wide, and `text` beside its rightmost point.
fn draw_outline(
    img: &mut opencv::core::Mat,
    camera: &crate::camera::Camera,
    pose: &crate::camera::CameraPose,
    (centre, radius, z): (crate::geom::BoardPoint, f64, f64),
    colour: opencv::core::Scalar,
    thickness: i32,
    text: &str,
) -> Result<(), ScoreError> {
    use opencv::core::{Point, Scalar, Vector};
    use opencv::imgproc;
    let cv = |context: &str, e: opencv::Error| crate::frame::FrameError::OpenCv { context: context.into(), source: e };
    let outline: Vector<Point> = (0..72)
        .filter_map(|k| {
            let t = (k as f64 * 5.0).to_radians();
            let q = crate::geom::BoardPoint3::new(centre.x_mm + radius * t.cos(), centre.y_mm + radius * t.sin(), z);
            pose.project(camera, q).map(|px| Point::new(px.u.round() as i32, px.v.round() as i32))
        })
        .collect();
    let mut polys: Vector<Vector<Point>> = Vector::new();
    polys.push(outline.clone());
    imgproc::polylines(img, &polys, true, colour, thickness, imgproc::LINE_AA, 0).map_err(|e| cv("draw", e))?;
    if let Some(anchor) = outline.iter().max_by_key(|q| q.x) {
        let at = Point::new(anchor.x + 6, anchor.y);
        imgproc::put_text(img, text, at, imgproc::FONT_HERSHEY_SIMPLEX, 0.6, Scalar::new(0.0, 0.0, 0.0, 0.0), 4, imgproc::LINE_AA, false).map_err(|e| cv("draw", e))?;
        imgproc::put_text(img, text, at, imgproc::FONT_HERSHEY_SIMPLEX, 0.6, colour, 2, imgproc::LINE_AA, false).map_err(|e| cv("draw", e))?;
    }
    Ok(())
}

/// Builds the event log of one round from a single frame of its end, for the
/// games whose round is decided by the final position of every piece: the
/// pieces are thrown in the game's order (the side `first` first), each seen
/// piece at its final place, each unseen one off the board. `None` for games
/// whose round spans several frames or players (Horse Collar, Baseball, Crazy
/// Eight, sjoelen): those are scored from an event log with `boardcall game`.
pub fn frame_round_log(rules: crate::rules::Rules, first: Team, pieces: &[PieceReport]) -> Option<crate::rules::EventLog> {
    use crate::rules::{CallName, LogBuilder, PieceState, Rules};
    let (a, b) = (first, first.other());
    let order: Vec<(Team, u32)> = match rules {
        Rules::KnockOff | Rules::TapAndDraw => (1..=4).flat_map(|k| [(a, k), (b, k)]).collect(),
        Rules::HoleyBoard => (1..=3).map(|k| (a, k)).chain((1..=3).map(|k| (b, k))).collect(),
        Rules::Yocu4 | Rules::Yocu9 => (1..=4).map(|k| (a, k)).chain((1..=4).map(|k| (b, k))).collect(),
        Rules::HorseCollar | Rules::Baseball | Rules::CrazyEight | Rules::Sjoelen => return None,
    };
    let mut log = LogBuilder::new(rules.name()).first(a.name());
    for (team, k) in order {
        let id = PieceId::of_team(team, k);
        let state = match pieces.iter().find(|p| p.id == id) {
            Some(p) => {
                let call: CallName = serde_json::from_value(serde_json::Value::String(p.call.clone())).ok()?;
                let mut s = PieceState { piece: id, call, hole: None, compartment: None, at: None, value: None };
                match p.kind {
                    PieceKind::Weight => s.at = Some(crate::geom::BoardPoint::new(p.x_mm, p.y_mm)),
                    PieceKind::Washer => {
                        s.hole = p.place;
                        s.value = p.value.filter(|_| p.place.is_some());
                    }
                    PieceKind::Disc => {}
                }
                s
            }
            None => PieceState { piece: id, call: CallName::Off, hole: None, compartment: None, at: None, value: None },
        };
        log.throw_named(team.name(), &[id], &[state]);
    }
    Some(log.build())
}

/// The round's score from one frame by the rules engine, as JSON (the game
/// state after the round), or why it cannot be given.
pub fn score_round(
    rules: crate::rules::Rules,
    options: &[String],
    board: &Board,
    first: Team,
    pieces: &[PieceReport],
) -> Result<serde_json::Value, String> {
    use crate::rules::Rules;
    let config = crate::rules::GameConfig::with_options(rules, options).map_err(|e| e.to_string())?;
    match rules {
        // One side's turn is one frame: its shooter's points.
        Rules::HorseCollar | Rules::Baseball => {
            use crate::rules::shuffleboard::{horse_collar_turn, HorseCollarCount, Weight};
            let mut weights = std::collections::BTreeMap::new();
            for p in pieces.iter().filter(|p| p.kind == PieceKind::Weight) {
                let call: crate::calls::ShuffleCall =
                    serde_json::from_value(serde_json::Value::String(p.call.clone())).map_err(|e| e.to_string())?;
                weights.insert(p.id, Weight::new(call).at(p.x_mm, p.y_mm));
            }
            let count = HorseCollarCount {
                corner_points: i64::from(config.number("corner")),
                five_zone_is_five: config.get("five_zone") == "five",
            };
            let mut rulings = Vec::new();
            let points = horse_collar_turn(&weights, count, &mut rulings);
            return Ok(serde_json::json!({ "shooter": points, "rulings": rulings }));
        }
        // A sjoelen frame after a sub-turn: the discs in each compartment so far.
        Rules::Sjoelen => {
            let Layout::Sjoelbak(s) = &board.layout else {
                return Err("sjoelen is played on a sjoelbak".into());
            };
            let mut counts = vec![0u32; s.compartments.len()];
            for p in pieces.iter().filter(|p| p.call == "compartment") {
                if let Some(c) = p.place {
                    counts[c] += 1;
                }
            }
            let values: Vec<u32> = s.compartments.iter().map(|c| c.value).collect();
            let score = crate::rules::sjoelen::score(&counts, &values);
            return Ok(serde_json::json!({ "score": score, "counts": counts, "values": values }));
        }
        _ => {}
    }
    let log = frame_round_log(rules, first, pieces).ok_or_else(|| {
        format!("a {} round spans several frames or players: score it from an event log with `boardcall game`", rules.name())
    })?;
    let state = crate::rules::play(&config, board, &log).map_err(|e| e.to_string())?;
    serde_json::to_value(&state).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn weight(id: &str, y_mm: f64) -> PieceReport {
        let id: PieceId = id.parse().unwrap();
        PieceReport {
            id,
            kind: PieceKind::Weight,
            team: id.team,
            x_mm: 0.0,
            y_mm,
            top_z_mm: 25.0,
            tilt_deg: 0.0,
            measured_by: MeasuredBy::Outline,
            call: "zone3".into(),
            value: Some(3),
            place: None,
            boundary: Boundary::TreyLine,
            margin_mm: 40.0,
            sigma_mm: 0.2,
            review: false,
            doubt: None,
        }
    }

    /// A footprint's sigma takes in a quarter pixel of its edges' bias at the
    /// piece: one fit (its own sigma 0.2 mm) 3 mm past the trey line is a clear
    /// call at half a millimetre a pixel, and one to review at 5 mm a pixel.
    #[test]
    fn a_coarser_view_widens_a_footprints_sigma_by_its_pixels() {
        let board = Board::load("shuffleboard-22ft").unwrap();
        let at = |mm_per_px: f64| {
            let fp = Footprint::new(BoardPoint::new(0.0, 120.0), 29.37);
            let d = crate::detect::Detection { mm_per_px, ..crate::detect::Detection::clean_outline(PieceKind::Weight, Some(Team::Red), fp, 25.0) };
            let mut detections = Detections { pieces: vec![d], ..Default::default() };
            call_pieces(&board, &mut detections, FoulLine::Long, 0.0).remove(0)
        };
        let (fine, coarse) = (at(0.5), at(5.0));
        assert!(fine.call == "zone3" && coarse.call == "zone3" && (fine.margin_mm - 3.03).abs() < 0.01, "{fine:?}");
        let expected = |mm_per_px: f64| (0.2f64.powi(2) + SIGMA_FLOOR_MM.powi(2) + (EDGE_BIAS_PX * mm_per_px).powi(2)).sqrt();
        assert!((fine.sigma_mm - expected(0.5)).abs() < 1e-9 && (coarse.sigma_mm - expected(5.0)).abs() < 1e-9, "{} {}", fine.sigma_mm, coarse.sigma_mm);
        assert!(!fine.review && coarse.review, "a 3 mm margin: sigma {:.2} mm clear, {:.2} mm to review", fine.sigma_mm, coarse.sigma_mm);
    }

    /// Patches the empty board showed leave `unexplained` with their review reasons, the frame needing review only
    /// for what is left; the annotated picture draws both kinds where they are, each in its colour.
    #[test]
    fn standing_patches_leave_the_review_and_are_drawn_apart_from_unexplained_ones() {
        use opencv::prelude::*;
        let board = Board::load("sjoelbak").unwrap();
        let patch = |y_mm: f64| crate::detect::Unexplained { kind: PieceKind::Disc, team: None, centre: BoardPoint::new(0.0, y_mm), area_mm2: 5000.0, reason: "glare".into() };
        let (glare, other) = (patch(100.0), patch(-100.0));
        let mut report = FrameReport {
            format: REPORT_FORMAT,
            image: None,
            board: board.name.clone(),
            pose: PoseReport::trusted(&crate::camera::CameraPose::from_rvec_tvec([0.0; 3], [0.0, 0.0, 1000.0])),
            pieces: vec![],
            unexplained: vec![other.clone(), glare.clone()],
            teams: vec![],
            teams_source: Default::default(),
            weight_cap: None,
            score: None,
            needs_review: true,
            review_reasons: vec![unexplained_reason(&other), unexplained_reason(&glare)],
            doubts: vec![],
            standing: vec![],
        };
        report.set_standing(&[false, true]);
        assert_eq!((report.unexplained.clone(), report.standing.clone()), (vec![other.clone()], vec![glare.clone()]));
        assert_eq!(report.review_reasons, vec![unexplained_reason(&other)]);
        assert!(report.needs_review);
        // The camera 1 m from the board's origin, square to it: 0.8 px a mm, a patch's 40 mm reach 32 px.
        let camera = crate::camera::Camera { image_width: 640, image_height: 480, fx: 800.0, fy: 800.0, cx: 320.0, cy: 240.0, distortion: crate::camera::Distortion::NONE };
        let pose = crate::camera::CameraPose::from_rvec_tvec([0.0; 3], [0.0, 0.0, 1000.0]);
        let black = opencv::core::Mat::new_rows_cols_with_default(480, 640, opencv::core::CV_8UC3, opencv::core::Scalar::all(0.0)).unwrap();
        let img = annotate(&crate::frame::Frame::from_mat(black).unwrap(), &camera, &pose, &board, &report).unwrap();
        // Points of a circle of `r` px about (320, `v`) drawn in a colour (of 360).
        let count = |v: f64, r: f64, is: &dyn Fn([u8; 3]) -> bool| {
            let mut n = 0;
            for k in 0..360 {
                let t = (k as f64).to_radians();
                let (x, y) = ((320.0 + r * t.cos()).round() as i32, (v + r * t.sin()).round() as i32);
                // The line is a pixel wide and anti-aliased: any pixel of the 3 x 3 round the circle's point.
                let near = (-1..=1).flat_map(|dy| (-1..=1).map(move |dx| (x + dx, y + dy)));
                n += usize::from(near.into_iter().any(|(x, y)| is(img.at_2d::<opencv::core::Vec3b>(y, x).unwrap().0)));
            }
            n
        };
        let magenta = |p: [u8; 3]| p[0] > 150 && p[2] > 150 && p[1] < 60;
        let grey = |p: [u8; 3]| p.iter().all(|c| (100..=200).contains(c)) && p.iter().max().unwrap() - p.iter().min().unwrap() < 20;
        let reach = (5000.0 / std::f64::consts::PI).sqrt();
        // The patches at y = -100 and 100 mm (their labels to the right, on their own rows), drawn at the pieces' top height.
        let z = board.piece().thickness_mm;
        let v = |y_mm: f64| pose.project(&camera, crate::geom::BoardPoint3::new(0.0, y_mm, z)).unwrap().v;
        let (v_other, v_glare, r) = (v(-100.0), v(100.0), v(100.0 + reach) - v(100.0));
        assert!(count(v_other, r, &magenta) > 340 && count(v_glare, r, &magenta) == 0, "the unexplained patch in magenta");
        assert!(count(v_glare, r, &grey) > 340 && count(v_other, r, &grey) == 0, "the board's own in grey");
    }

    #[test]
    fn a_frame_whose_round_score_needs_review_says_so_itself() {
        // Two Knock Off weights 0.4 mm apart in depth: the rules engine cannot tell which is deeper.
        let board = Board::load("shuffleboard-22ft").unwrap();
        let mut report = FrameReport {
            format: REPORT_FORMAT,
            image: None,
            board: board.name.clone(),
            pose: PoseReport::trusted(&crate::camera::CameraPose::from_rvec_tvec([0.0; 3], [0.0, 0.0, 1000.0])),
            pieces: vec![weight("red#1", 100.0), weight("blue#1", 100.4)],
            unexplained: vec![],
            teams: vec![],
            teams_source: Default::default(),
            weight_cap: None,
            score: None,
            needs_review: false,
            review_reasons: vec![],
            doubts: vec![],
            standing: vec![],
        };
        let game = RoundScoring { rules: crate::rules::Rules::KnockOff, options: vec![], first: Team::Red };
        report.add_round_score(&game, &board);
        let status = report.score.as_ref().and_then(|s| s.get("status")).and_then(|s| s.as_str());
        assert_eq!(status, Some("needs_review"));
        assert!(report.needs_review, "the frame's flag agrees with its round score");
        assert!(report.review_reasons.iter().any(|r| r.contains("too close to call")), "{:?}", report.review_reasons);
    }

    #[test]
    fn a_sides_surplus_of_pieces_in_doubt_is_set_aside_and_the_rest_kept() {
        let doubtful = |id: &str, y: f64| PieceReport { doubt: Some("outline radius 23.0 mm, expected 29.4 mm".into()), review: true, ..weight(id, y) };
        // Six red where the game has four, two of them in doubt (a red "3" printed on the board): those two go.
        let mut pieces: Vec<PieceReport> =
            vec![doubtful("red#1", 60.0), doubtful("red#2", 120.0), weight("red#3", 400.0), weight("red#4", 420.0), weight("red#5", 440.0), weight("red#6", 580.0), weight("blue#1", 90.0)];
        let mut unexplained = Vec::new();
        set_aside_doubtful_extras(&mut pieces, &mut unexplained, 4);
        let ids: Vec<String> = pieces.iter().map(|p| p.id.to_string()).collect();
        assert_eq!(ids, ["red#3", "red#4", "red#5", "red#6", "blue#1"]);
        assert_eq!(unexplained.len(), 2);
        assert!(unexplained.iter().all(|u| u.team == Some(Team::Red) && u.reason.contains("set aside, not scored")), "{unexplained:?}");
        // One too many with two in doubt: only the surplus goes (the first in doubt), the other stays for review.
        let mut pieces = vec![doubtful("blue#1", 60.0), doubtful("blue#2", 120.0), weight("blue#3", 400.0), weight("blue#4", 420.0), weight("blue#5", 440.0)];
        let mut unexplained = Vec::new();
        set_aside_doubtful_extras(&mut pieces, &mut unexplained, 4);
        assert_eq!(pieces.len(), 4);
        assert!(pieces.iter().any(|p| p.id.to_string() == "blue#2"));
        assert_eq!(unexplained.len(), 1);
        // Too many and none in doubt: nothing says which are extra; all kept.
        let mut pieces: Vec<PieceReport> = (1..=5).map(|k| weight(&format!("red#{k}"), 100.0 * k as f64)).collect();
        let mut unexplained = Vec::new();
        set_aside_doubtful_extras(&mut pieces, &mut unexplained, 4);
        assert_eq!(pieces.len(), 5);
        assert!(unexplained.is_empty());
    }
}
