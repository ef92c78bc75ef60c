//! Helpers shared by the integration tests.

use boardcall::board::Board;
use boardcall::calls::FoulLine;
use boardcall::detect::DetectorConfig;
use boardcall::fixture::Fixture;
use boardcall::frame::Frame;
use boardcall::score::{score_frame, FrameReport, PoseInput};
use std::path::Path;

/// A scratch folder removed when the test ends (kept as a path for the calls that take one).
pub struct Scratch(tempfile::TempDir);

impl std::ops::Deref for Scratch {
    type Target = Path;
    fn deref(&self) -> &Path {
        self.0.path()
    }
}

/// A scratch folder named after its test file (`suite`) and test, in the system's temporary folder.
pub fn scratch(suite: &str, test: &str) -> Scratch {
    Scratch(tempfile::Builder::new().prefix(&format!("boardcall-{suite}-{test}-")).tempdir().expect("a scratch folder"))
}

/// A scene's fixture, frame and board, by its folder relative to the repository root.
pub fn scene_at(rel: &Path) -> (Fixture, Frame, Board) {
    let f = Fixture::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)).unwrap();
    let frame = Frame::load(&f.image_path()).unwrap();
    let board = Board::load(&f.truth.board).unwrap();
    (f, frame, board)
}

/// A scene (its folder relative to the repository root) scored with its true pose and the default detector: the
/// fixture, its board and the report.
pub fn scored_with_true_pose(rel: &Path) -> (Fixture, Board, FrameReport) {
    let (f, frame, board) = scene_at(rel);
    let report = score_frame(&frame, &board, &f.camera, PoseInput::Trusted(f.truth.camera.pose()), DetectorConfig::default(), FoulLine::Long).expect("scored").0;
    (f, board, report)
}
