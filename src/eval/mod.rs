//! Evaluation: runs the pipeline over every fixture in a folder laid out as
//! `fixtures/` is and measures it against the truth: calls, footprints, review
//! flags and time. The yardstick for every change to the vision stages.

use crate::board::Board;
use crate::calls::FoulLine;
use crate::detect::{DetectorConfig, Detections};
use crate::fixture::Fixture;
use crate::frame::Frame;
use crate::geom::BoardPoint;
use crate::locate::{locate_frame, LocateConfig};
use crate::measure::ColourView;
use crate::score::{call_pieces, PieceReport};
use opencv::prelude::MatTraitConstManual;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

pub mod locate;

/// A detection within this distance (mm) of a truth piece of the same team is
/// that piece: far more than any measurement error, far less than the 52 mm
/// smallest distance between two pieces' centres.
pub const MATCH_RADIUS_MM: f64 = 20.0;

/// Where the camera pose comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PoseSource {
    /// Found by `locate` from the image (what a user's run does).
    Locate,
    /// Taken from the truth: isolates the detector from localisation.
    Truth,
}

/// Errors that stop an evaluation as a whole (a single fixture's failure is a result).
#[derive(Debug, thiserror::Error)]
pub enum EvalError {
    #[error(transparent)]
    Fixture(#[from] crate::fixture::FixtureError),
    #[error("no fixtures under {dir}")]
    Empty { dir: PathBuf },
}

/// One piece compared with its truth.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PieceOutcome {
    pub id: String,
    pub truth_call: String,
    /// `missed` when not detected.
    pub call: String,
    pub footprint_error_mm: Option<f64>,
    pub truth_margin_mm: f64,
    /// Our margin and its standard uncertainty (absent when missed).
    pub margin_mm: Option<f64>,
    pub sigma_mm: Option<f64>,
    pub review: bool,
    /// Placed at a height nothing fixes, measured from its size (the ground
    /// beside a washer board): judged by whether its sigma covers its error,
    /// not counted in the footprint error's statistics.
    #[serde(default)]
    pub height_measured: bool,
}

/// One fixture's result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FixtureOutcome {
    pub name: String,
    pub board: String,
    /// Why the pipeline gave no calls (refused to locate, unreadable image...), if it did not.
    pub error: Option<String>,
    pub pieces: Vec<PieceOutcome>,
    /// Detections that match no truth piece.
    pub extra: Vec<PieceReport>,
    /// Colour found that the detector could not explain as pieces.
    pub unexplained: Vec<crate::detect::Unexplained>,
    /// Every call right and nothing extra.
    pub all_calls_right: bool,
    /// The round's score (by the rules engine, the board's usual game) from the
    /// truth and from our calls.
    pub truth_score: Option<serde_json::Value>,
    pub score: Option<serde_json::Value>,
    /// Our round score equals the truth's.
    pub score_right: bool,
    /// The frame was flagged as needing review.
    pub needs_review: bool,
    /// Every truth piece's margin exceeds one pixel of the image there: no
    /// call in the frame is closer than the camera can resolve (the pairs the
    /// issue's PCS bar is measured on).
    #[serde(default)]
    pub clear_margins: bool,
    pub seconds: f64,
}

/// The whole evaluation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EvalReport {
    pub fixtures: usize,
    pub pose: PoseSource,
    /// Percent of fixtures whose round score is correct.
    pub pcs_percent: f64,
    /// The same over the fixtures whose every margin exceeds one pixel
    /// ([`FixtureOutcome::clear_margins`]), and how many those are.
    #[serde(default)]
    pub pcs_clear_percent: f64,
    #[serde(default)]
    pub clear_fixtures: usize,
    /// Fixtures whose round score is wrong and that were not flagged for
    /// review: a confidently wrong round (a piece missed unseen, a stack's
    /// hidden piece) even where no call is confidently wrong.
    #[serde(default)]
    pub confident_wrong_rounds: usize,
    /// Over pieces at heights the board fixes.
    pub footprint_error_mm: Stats,
    /// Pieces placed at a measured height: how many, and how many of their
    /// errors are within three of their reported sigmas.
    pub measured_height: SigmaCover,
    /// Truth call -> our call -> count.
    pub confusion: BTreeMap<String, BTreeMap<String, usize>>,
    /// Wrong calls not flagged for review, and extra pieces not flagged.
    pub confident_wrong: usize,
    pub refused: usize,
    pub mean_seconds_per_frame: f64,
    pub results: Vec<FixtureOutcome>,
}

/// How many errors a reported sigma covers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct SigmaCover {
    pub count: usize,
    /// Errors within [`crate::score::REVIEW_SIGMAS`] of their sigma.
    pub within: usize,
}

/// Median, 95th percentile and maximum.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct Stats {
    pub count: usize,
    pub median: f64,
    pub p95: f64,
    pub max: f64,
}

impl Stats {
    pub fn of(values: &[f64]) -> Stats {
        if values.is_empty() {
            return Stats::default();
        }
        let mut v = values.to_vec();
        v.sort_by(f64::total_cmp);
        let at = |q: f64| v[((v.len() - 1) as f64 * q).round() as usize];
        Stats { count: v.len(), median: at(0.5), p95: at(0.95), max: v[v.len() - 1] }
    }
}

/// Runs one fixture through frame -> pose -> detections -> calls.
pub fn run_fixture(fx: &Fixture, pose_source: PoseSource, detector: &DetectorConfig) -> FixtureOutcome {
    let started = Instant::now();
    let name = fx.dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let mut out = FixtureOutcome {
        name,
        board: fx.truth.board.clone(),
        error: None,
        pieces: Vec::new(),
        extra: Vec::new(),
        unexplained: Vec::new(),
        all_calls_right: false,
        truth_score: None,
        score: None,
        score_right: false,
        needs_review: false,
        clear_margins: clear_margins(fx),
        seconds: 0.0,
    };
    let result = (|| -> Result<(Vec<PieceReport>, Detections), String> {
        let board = Board::load(&fx.truth.board).map_err(|e| e.to_string())?;
        let frame = Frame::load(&fx.image_path()).map_err(|e| e.to_string())?;
        frame.check_size(&fx.camera).map_err(|e| e.to_string())?;
        let (pose, pose_sigma) = match pose_source {
            PoseSource::Truth => (fx.truth.camera.pose(), 0.0),
            PoseSource::Locate => {
                let bp = locate_frame(&board, &fx.camera, &frame, LocateConfig::default()).map_err(|e| e.to_string())?;
                (bp.pose, bp.position_sigma_mm)
            }
        };
        let bytes = frame.image().data_bytes().map_err(|e| e.to_string())?;
        let view = ColourView::new(frame.width() as usize, frame.height() as usize, bytes).map_err(|e| e.to_string())?;
        let mut detections = crate::score::detect_pieces(&view, &board, &fx.camera, &pose, fx.pieces.as_ref().map_or_else(|| detector.clone(), |p| detector.clone().with_pieces(p))).map_err(|e| e.to_string())?;
        let foul = fx.truth.foul_line.unwrap_or(FoulLine::Long);
        Ok((call_pieces(&board, &mut detections, foul, pose_sigma), detections))
    })();
    out.seconds = started.elapsed().as_secs_f64();
    let (reports, detections) = match result {
        Ok(r) => r,
        Err(e) => {
            out.error = Some(e);
            out.needs_review = true;
            return out;
        }
    };
    let mut used = vec![false; reports.len()];
    // The nearest unused report of a truth piece's team and kind within MATCH_RADIUS_MM.
    let nearest = |used: &[bool], t: &crate::render::truth::PieceTruth| {
        reports
            .iter()
            .enumerate()
            .filter(|(i, r)| !used[*i] && r.team == t.team && r.kind == t.kind)
            .map(|(i, r)| (i, BoardPoint::new(r.x_mm, r.y_mm).distance(t.footprint.centre)))
            .filter(|(_, d)| *d < MATCH_RADIUS_MM)
            .min_by(|a, b| a.1.total_cmp(&b.1))
    };
    // Every piece wholly in the frame is measured where it is found; one more than half hidden (past the board's
    // solids or under another piece) need not be found, and is not missed where it is not.
    for t in fx.truth.pieces.iter().filter(|p| p.in_frame) {
        let truth_call = t.call.name().to_string();
        let best = nearest(&used, t);
        if best.is_none() && !t.must_be_found() {
            continue;
        }
        let outcome = match best {
            Some((i, d)) => {
                used[i] = true;
                let r = &reports[i];
                PieceOutcome {
                    id: t.id.to_string(),
                    truth_call,
                    call: r.call.clone(),
                    footprint_error_mm: Some(d),
                    truth_margin_mm: t.call.margin_mm(),
                    margin_mm: Some(r.margin_mm),
                    sigma_mm: Some(r.sigma_mm),
                    review: r.review,
                    height_measured: r.measured_by == crate::detect::MeasuredBy::HeightFromSize,
                }
            }
            None => PieceOutcome {
                id: t.id.to_string(),
                truth_call,
                call: "missed".into(),
                footprint_error_mm: None,
                truth_margin_mm: t.call.margin_mm(),
                margin_mm: None,
                sigma_mm: None,
                review: false,
                height_measured: false,
            },
        };
        out.pieces.push(outcome);
    }
    // A piece cut by the frame's edge need not be found, but a detection of it is no extra piece.
    for t in fx.truth.pieces.iter().filter(|p| !p.in_frame) {
        if let Some((i, _)) = nearest(&used, t) {
            used[i] = true;
        }
    }
    let board = Board::load(&fx.truth.board).ok();
    if let Some(board) = &board {
        out.truth_score = round_points(board, &crate::render::truth::as_reports(&fx.truth.pieces));
        out.score = round_points(board, &reports);
        out.score_right = out.truth_score.is_some() && out.truth_score == out.score;
    }
    out.extra = reports.iter().zip(&used).filter(|(_, u)| !**u).map(|(r, _)| r.clone()).collect();
    out.all_calls_right = out.pieces.iter().all(|p| p.call == p.truth_call) && out.extra.is_empty();
    out.needs_review = reports.iter().any(|r| r.review) || !detections.unexplained.is_empty();
    out.unexplained = detections.unexplained;
    out
}

/// Whether every piece of a fixture's truth (in view or not: each counts in
/// the round) lies further from its decisive boundary than one pixel of the
/// image at its footprint, seen by the true pose.
fn clear_margins(fx: &Fixture) -> bool {
    let pose = fx.truth.camera.pose();
    fx.truth.pieces.iter().all(|t| {
        let at = t.footprint.centre.at_height(0.0);
        crate::measure::px_per_mm(&fx.camera, &pose, at).is_some_and(|px_per_mm| t.call.margin_mm().abs() * px_per_mm > 1.0)
    })
}

/// The game a fixture's round is scored by: the board's usual game.
pub fn usual_game(board: &Board) -> crate::rules::Rules {
    use crate::rules::Rules;
    match board.layout {
        crate::board::Layout::Shuffleboard(_) => Rules::KnockOff,
        crate::board::Layout::Sjoelbak(_) => Rules::Sjoelen,
        crate::board::Layout::Washer(_) => match board.name.as_str() {
            "yocu-4" => Rules::Yocu4,
            "yocu-9" => Rules::Yocu9,
            _ => Rules::HoleyBoard,
        },
    }
}

/// The numbers of a round's score (points per side, or the sjoelen score),
/// without the rulings' wording, which names pieces by number.
pub fn round_points(board: &Board, pieces: &[PieceReport]) -> Option<serde_json::Value> {
    let game = usual_game(board);
    let v = crate::score::score_round(game, &[], board, crate::piece::Team::Red, pieces).ok()?;
    match game {
        crate::rules::Rules::Sjoelen => Some(serde_json::json!({ "score": v["score"], "counts": v["counts"] })),
        _ => Some(v["rounds"].get(0).map(|r| r["points"].clone()).unwrap_or_else(|| v["current_round"].clone())),
    }
}

/// Evaluates every fixture under `dir`.
pub fn evaluate(dir: &Path, pose: PoseSource, detector: &DetectorConfig) -> Result<EvalReport, EvalError> {
    let dirs = crate::fixture::list(dir)?;
    if dirs.is_empty() {
        return Err(EvalError::Empty { dir: dir.to_path_buf() });
    }
    let mut results = Vec::with_capacity(dirs.len());
    for d in &dirs {
        let fx = Fixture::load(d)?;
        results.push(run_fixture(&fx, pose, detector));
    }
    Ok(summarise(results, pose))
}

/// Aggregates fixture outcomes into the report.
pub fn summarise(results: Vec<FixtureOutcome>, pose: PoseSource) -> EvalReport {
    let mut confusion: BTreeMap<String, BTreeMap<String, usize>> = BTreeMap::new();
    let mut errors = Vec::new();
    let mut measured_height = SigmaCover::default();
    let mut confident_wrong = 0;
    for r in &results {
        for p in &r.pieces {
            *confusion.entry(p.truth_call.clone()).or_default().entry(p.call.clone()).or_default() += 1;
            match (p.height_measured, p.footprint_error_mm, p.sigma_mm) {
                (true, Some(e), Some(s)) => {
                    measured_height.count += 1;
                    measured_height.within += usize::from(e <= crate::score::REVIEW_SIGMAS * s);
                }
                _ => errors.extend(p.footprint_error_mm),
            }
            if p.call != p.truth_call && !p.review && !r.needs_review {
                confident_wrong += 1;
            }
        }
        for e in &r.extra {
            *confusion.entry("none (extra)".into()).or_default().entry(e.call.clone()).or_default() += 1;
            if !e.review && !r.needs_review {
                confident_wrong += 1;
            }
        }
    }
    let n = results.len().max(1) as f64;
    let clear: Vec<&FixtureOutcome> = results.iter().filter(|r| r.clear_margins).collect();
    EvalReport {
        fixtures: results.len(),
        pose,
        pcs_percent: 100.0 * results.iter().filter(|r| r.score_right).count() as f64 / n,
        pcs_clear_percent: 100.0 * clear.iter().filter(|r| r.score_right).count() as f64 / clear.len().max(1) as f64,
        clear_fixtures: clear.len(),
        confident_wrong_rounds: results.iter().filter(|r| r.error.is_none() && !r.score_right && !r.needs_review).count(),
        footprint_error_mm: Stats::of(&errors),
        measured_height,
        confusion,
        confident_wrong,
        refused: results.iter().filter(|r| r.error.is_some()).count(),
        mean_seconds_per_frame: results.iter().map(|r| r.seconds).sum::<f64>() / n,
        results,
    }
}

/// The report as a short human-readable summary.
pub fn render_text(r: &EvalReport) -> String {
    use std::fmt::Write;
    let mut s = String::new();
    let f = &r.footprint_error_mm;
    let _ = writeln!(s, "fixtures            {} (pose: {:?})", r.fixtures, r.pose);
    let _ = writeln!(s, "PCS                 {:.1} %", r.pcs_percent);
    let _ = writeln!(s, "PCS, margins > 1 px {:.1} % (of {} fixtures whose every margin exceeds a pixel)", r.pcs_clear_percent, r.clear_fixtures);
    let _ = writeln!(s, "footprint error mm  median {:.3}  p95 {:.3}  max {:.3}  (n = {})", f.median, f.p95, f.max, f.count);
    if r.measured_height.count > 0 {
        let m = r.measured_height;
        let _ = writeln!(s, "measured height     {} pieces (off the board, height from size): error within 3 sigma {}", m.count, m.within);
    }
    let _ = writeln!(s, "confident wrong     {} calls, {} rounds (score wrong, no review)", r.confident_wrong, r.confident_wrong_rounds);
    let _ = writeln!(s, "refused / failed    {}", r.refused);
    let _ = writeln!(s, "time per frame      {:.1} ms", 1000.0 * r.mean_seconds_per_frame);
    let _ = writeln!(s, "confusion (truth -> ours: count)");
    for (t, row) in &r.confusion {
        let cells: Vec<String> = row.iter().map(|(c, n)| format!("{c}: {n}")).collect();
        let _ = writeln!(s, "  {t:<14} {}", cells.join(", "));
    }
    let calls_right = r.results.iter().filter(|x| x.all_calls_right).count();
    let _ = writeln!(s, "all calls right     {calls_right} of {} fixtures", r.fixtures);
    for x in r.results.iter().filter(|x| !x.all_calls_right || !x.score_right) {
        let wrong: Vec<String> = x
            .pieces
            .iter()
            .filter(|p| p.call != p.truth_call)
            .map(|p| format!("{} {}->{}{}", p.id, p.truth_call, p.call, if p.review { " (review)" } else { "" }))
            .chain(x.extra.iter().map(|e| format!("extra {} {}", e.id, e.call)))
            .chain((!x.score_right && x.error.is_none()).then(|| {
                let show = |v: &Option<serde_json::Value>| v.as_ref().map_or("none".to_string(), |v| v.to_string());
                format!("round {} where the truth scores {}", show(&x.score), show(&x.truth_score))
            }))
            .collect();
        let _ = writeln!(s, "  wrong: {}: {}{}", x.name, x.error.clone().unwrap_or_default(), wrong.join("; "));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every key of a JSON value, at every depth, except inside the objects named in `opaque` (documented
    /// elsewhere, or keyed by data: calls, teams).
    fn keys(v: &serde_json::Value, opaque: &[&str], out: &mut Vec<String>) {
        match v {
            serde_json::Value::Object(m) => {
                for (k, x) in m {
                    out.push(k.clone());
                    if !opaque.contains(&k.as_str()) {
                        keys(x, opaque, out);
                    }
                }
            }
            serde_json::Value::Array(a) => a.iter().for_each(|x| keys(x, opaque, out)),
            _ => {}
        }
    }

    /// `docs/eval.md` documents every field `eval --json` and `eval-locate --json` print: each key, at every
    /// depth, appears there as code.
    #[test]
    fn every_field_of_the_measurements_json_is_documented() {
        let doc = include_str!("../../docs/eval.md");
        let piece = PieceOutcome {
            id: "red#1".into(),
            truth_call: "zone3".into(),
            call: "zone2".into(),
            footprint_error_mm: Some(0.4),
            truth_margin_mm: 1.0,
            margin_mm: Some(-0.2),
            sigma_mm: Some(0.5),
            review: true,
            height_measured: false,
        };
        let fixture = FixtureOutcome {
            name: "00".into(),
            board: "shuffleboard-22ft".into(),
            error: None,
            pieces: vec![piece],
            extra: Vec::new(),
            unexplained: Vec::new(),
            all_calls_right: false,
            truth_score: Some(serde_json::json!({ "red": 3 })),
            score: Some(serde_json::json!({ "red": 2 })),
            score_right: false,
            needs_review: true,
            clear_margins: true,
            seconds: 0.1,
        };
        let eval = serde_json::to_value(summarise(vec![fixture], PoseSource::Truth)).unwrap();
        let scene = locate::LocateOutcome {
            scene: "00".into(),
            board: "yocu-4".into(),
            status: "located".into(),
            reason: None,
            corners_in_view: 4,
            corner_error_px: Some(0.2),
            position_error_mm: Some(0.3),
            position_sigma_mm: Some(0.4),
            time_ms: 100.0,
            given_back: Some("confirmed".into()),
            given_back_moved_px: Some(0.01),
        };
        let off = locate::CameraOffset { focal_percent: 0.5, principal_px: [0.0, 0.0] };
        let located = locate::LocateReport { scenes: vec![scene], located: 1, within_bar: 1, sigma_covered: 1, given_back_confirmed: 1, median_time_ms: 100.0, max_time_ms: 100.0, camera_off: Some(off) };
        let located = serde_json::to_value(located).unwrap();
        let mut all = Vec::new();
        // The pieces, scores and unexplained colour are the frame report's (docs/report-format.md); the confusion
        // table is keyed by calls.
        keys(&eval, &["extra", "unexplained", "truth_score", "score", "confusion"], &mut all);
        keys(&located, &[], &mut all);
        let missing: Vec<&String> = all.iter().filter(|k| !doc.contains(&format!("`{k}`"))).collect();
        assert!(missing.is_empty(), "fields not in docs/eval.md: {missing:?}");
        assert!(all.len() > 40, "{} keys: the reports were not walked", all.len());
    }
}
