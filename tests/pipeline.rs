//! Regression tests of the whole vision pipeline on the committed fixture set.
//!
//! Every fixture runs through frame -> detections -> calls -> round score with
//! the camera pose taken from the truth (localisation has its own tests in
//! `tests/locate.rs`). What comes out is compared with two references:
//!
//! - the truth, for the fixtures the pipeline already gets right (listed in the
//!   golden file as `right`): any of those going wrong fails the test;
//! - the golden file `fixtures/golden/pipeline.json`: the calls and score of
//!   every fixture as of the last accepted change, so that any change in
//!   behaviour shows up and is either fixed or accepted by regenerating with
//!   `REGENERATE=1 cargo test --release --test pipeline`.

use boardcall::detect::DetectorConfig;
use boardcall::eval::{evaluate, EvalReport, PoseSource};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;

/// What is compared of one fixture: each truth piece's call as we made it, the
/// extra pieces we saw, and the round score. Footprint errors are not compared
/// to the bit, only bounded below.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Golden {
    calls: Vec<String>,
    extra: Vec<String>,
    score: Option<serde_json::Value>,
    right: bool,
    /// The largest footprint error among the correctly called pieces, mm.
    max_error_mm: f64,
}

/// Golden footprint errors are compared with this slack (mm): a different JPEG
/// decoder or float rounding moves sub-pixel edges by hundredths of a mm; a real
/// regression moves them by far more.
const ERROR_SLACK_MM: f64 = 0.25;

impl Golden {
    /// Everything but the footprint error, which is compared with slack.
    fn same_calls(&self, other: &Golden) -> bool {
        self.calls == other.calls && self.extra == other.extra && self.score == other.score && self.right == other.right
    }
}

fn golden_of(report: &EvalReport) -> BTreeMap<String, Golden> {
    report
        .results
        .iter()
        .map(|r| {
            let calls = r.pieces.iter().map(|p| format!("{} {} -> {}", p.id, p.truth_call, p.call)).collect();
            let extra = r.extra.iter().map(|e| format!("{} {}", e.id, e.call)).collect();
            let max_error_mm = r
                .pieces
                .iter()
                .filter(|p| p.call == p.truth_call)
                .filter_map(|p| p.footprint_error_mm)
                .fold(0.0f64, f64::max);
            let max_error_mm = (max_error_mm * 100.0).ceil() / 100.0;
            (r.name.clone(), Golden { calls, extra, score: r.score.clone(), right: r.all_calls_right && r.score_right, max_error_mm })
        })
        .collect()
}

#[test]
fn the_fixture_set_scores_as_accepted() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let report = evaluate(&root.join("fixtures/scenes"), PoseSource::Truth, &DetectorConfig::default()).unwrap();
    assert!(report.fixtures >= 60, "the fixture set has {} fixtures", report.fixtures);
    let now = golden_of(&report);
    let path = root.join("fixtures/golden/pipeline.json");
    if std::env::var_os("REGENERATE").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, serde_json::to_string_pretty(&now).unwrap() + "\n").unwrap();
        eprintln!("regenerated {}", path.display());
        return;
    }
    let text = std::fs::read_to_string(&path).expect("golden file (make it with REGENERATE=1)");
    let accepted: BTreeMap<String, Golden> = serde_json::from_str(&text).unwrap();
    let mut problems = Vec::new();
    for (name, was) in &accepted {
        match now.get(name) {
            None => problems.push(format!("{name}: fixture missing")),
            Some(is) if was.right && !is.right => problems.push(format!("{name}: was right, now {is:?}")),
            Some(is) if !is.same_calls(was) => problems.push(format!("{name}: changed from {was:?} to {is:?}")),
            Some(is) if is.max_error_mm > was.max_error_mm + ERROR_SLACK_MM => {
                problems.push(format!("{name}: footprint error grew from {} to {} mm", was.max_error_mm, is.max_error_mm))
            }
            _ => {}
        }
    }
    for name in now.keys().filter(|n| !accepted.contains_key(*n)) {
        problems.push(format!("{name}: new fixture, not in the golden file"));
    }
    assert!(problems.is_empty(), "{} regressions:\n{}", problems.len(), problems.join("\n"));
}
