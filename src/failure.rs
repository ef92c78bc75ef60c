//! What kind of failure each library error is: the one table the binary's exit codes come from.
//!
//! Every error type of the library is classified here by an exhaustive `match`, so a new variant cannot be added
//! without saying what kind of failure it is. `main` maps the classes to exit codes (README, `boardcall --help`).

use std::error::Error;

/// The kinds of failure a user can tell apart by the exit code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Failure {
    /// A bug or an environment fault (OpenCV failing where it should not, the embedded model unloadable).
    Internal,
    /// The command line is wrong: an unknown name, a value out of range, an output that would overwrite an input.
    Usage,
    /// An input file (board, events, scene, image, video, camera, pose, points) is unreadable, malformed or out of
    /// its physical limits.
    Input,
    /// The input is well-formed but gives no trustworthy result: the board (or the calibration target) not found,
    /// a poor or ambiguous fit, a frame that cannot be read honestly, a degenerate view set.
    Refused,
    /// An output file could not be written.
    Output,
}

impl Failure {
    /// The process exit code of this class of failure.
    pub fn exit_code(self) -> u8 {
        match self {
            Failure::Internal => 1,
            Failure::Usage => 2,
            Failure::Input => 3,
            Failure::Refused => 4,
            Failure::Output => 5,
        }
    }
}

/// The class of a library error, looked up through its type; `None` for a type this table does not know (the caller
/// then looks further down the error's source chain).
pub fn classify(e: &(dyn Error + 'static)) -> Option<Failure> {
    use crate::*;
    macro_rules! try_as {
        ($($t:ty => $f:expr),* $(,)?) => {
            $(if let Some(x) = e.downcast_ref::<$t>() { return Some($f(x)); })*
        };
    }
    try_as!(
        board::BoardError => |_| Failure::Input,
        camera::CameraError => camera_error,
        frame::FrameError => frame_error,
        files::OutputError => output_error,
        locate::LocateError => locate_error,
        setup::SetupError => setup_error,
        calibrate::CalibrateError => calibrate_error,
        rectify::RectifyError => rectify_error,
        detect::DetectError => detect_error,
        measure::MeasureError => measure_error,
        model::ModelError => |_| Failure::Internal,
        score::ScoreError => score_error,
        review::ReviewError => review_error,
        watch::WatchError => watch_error,
        game::MatchError => match_error,
        serve::ServeError => serve_error,
        render::video::VideoError => |_| Failure::Internal,
        rules::RulesError => rules_error,
        piece::PieceParseError => |_| Failure::Usage,
        eval::EvalError => eval_error,
        fixture::FixtureError => |_| Failure::Input,
        render::RenderError => render_error,
        render::SceneError => |_| Failure::Input,
        render::effects::ImageWriteError => image_write_error,
        model::training::TrainingError => training_error,
        serde_json::Error => |_| Failure::Input,
        std::io::Error => |_| Failure::Input,
    );
    None
}

fn camera_error(e: &crate::camera::CameraError) -> Failure {
    use crate::camera::CameraError as E;
    match e {
        E::Open { .. } | E::Field { .. } => Failure::Input,
        E::OpenCv { .. } => Failure::Internal,
        E::Write { source } => output_error(source),
    }
}

fn frame_error(e: &crate::frame::FrameError) -> Failure {
    use crate::frame::FrameError as E;
    match e {
        E::Missing { .. }
        | E::Unreadable { .. }
        | E::Corrupt { .. }
        | E::Damaged { .. }
        | E::TooLarge { .. }
        | E::Format { .. }
        | E::SizeMismatch { .. }
        | E::VideoSource { .. } => Failure::Input,
        E::Write { .. } => Failure::Output,
        E::Output { source } => output_error(source),
        E::OpenCv { .. } => Failure::Internal,
        E::Camera { source } => camera_error(source),
    }
}

fn output_error(e: &crate::files::OutputError) -> Failure {
    use crate::files::OutputError as E;
    match e {
        E::OverwritesInput { .. } | E::SameOutputTwice { .. } => Failure::Usage,
        E::Write { .. } => Failure::Output,
    }
}

fn locate_error(e: &crate::locate::LocateError) -> Failure {
    use crate::locate::LocateError as E;
    match e {
        E::NotFound { .. } | E::PoorFit { .. } | E::Ambiguous { .. } | E::GivenPoseRejected { .. } => Failure::Refused,
        E::TooFewPoints { .. } | E::PointsFile { .. } | E::PointsIo { .. } | E::UnknownConstruction { .. } => Failure::Input,
        E::Frame { source } => frame_error(source),
        E::Camera { source } => camera_error(source),
        E::OpenCv { .. } => Failure::Internal,
    }
}

fn setup_error(e: &crate::setup::SetupError) -> Failure {
    use crate::setup::SetupError as E;
    match e {
        E::NoFrames | E::PointsNeedOneFrame { .. } | E::FocalLength { .. } => Failure::Usage,
        E::FrameSizes { .. } => Failure::Input,
        E::PointsUnconstrained { .. } | E::BoardNotFound { .. } | E::Unconstrained { .. } | E::NotConfirmed { .. } | E::RepeatedView { .. } => Failure::Refused,
        E::AfterLeavingOut { source, .. } => setup_error(source),
        E::Locate(source) => locate_error(source),
        E::Frame(source) => frame_error(source),
        E::Camera(source) => camera_error(source),
    }
}

fn calibrate_error(e: &crate::calibrate::CalibrateError) -> Failure {
    use crate::calibrate::CalibrateError as E;
    match e {
        E::Pattern { .. } => Failure::Usage,
        E::TooFewViews { .. } | E::DuplicateViews { .. } | E::TooLittleTilt { .. } | E::Unsolvable { .. } => Failure::Refused,
        E::SizeMismatch { .. } => Failure::Input,
        E::Frame { source } => frame_error(source),
        E::Camera { source } => camera_error(source),
        E::OpenCv { .. } => Failure::Internal,
    }
}

fn rectify_error(e: &crate::rectify::RectifyError) -> Failure {
    use crate::rectify::RectifyError as E;
    match e {
        E::Scale { .. } | E::TooLarge { .. } => Failure::Usage,
        E::NotVisible => Failure::Refused,
        E::Frame { source } => frame_error(source),
    }
}

fn detect_error(e: &crate::detect::DetectError) -> Failure {
    use crate::detect::DetectError as E;
    match e {
        E::FrameSize { .. } => Failure::Input,
        E::BoardNotInView | E::NotAPiece { .. } | E::UnevenFace { .. } => Failure::Refused,
        E::Measure(m) => measure_error(m),
        E::Config { .. } | E::TeamSample { .. } => Failure::Usage,
        E::PiecesFile { .. } => Failure::Input,
    }
}

fn measure_error(e: &crate::measure::MeasureError) -> Failure {
    use crate::measure::MeasureError as E;
    match e {
        E::TooFewEdges { .. } => Failure::Refused,
        E::BadImage { .. } => Failure::Internal,
    }
}

fn score_error(e: &crate::score::ScoreError) -> Failure {
    use crate::score::ScoreError as E;
    match e {
        E::Frame(f) => frame_error(f),
        E::Locate(l) => locate_error(l),
        E::Detect(d) => detect_error(d),
        E::Camera(c) => camera_error(c),
        E::Model(_) => Failure::Internal,
        E::FrameSize { .. } => Failure::Input,
        E::Unreadable { .. } => Failure::Refused,
    }
}

fn review_error(e: &crate::review::ReviewError) -> Failure {
    use crate::review::ReviewError as E;
    match e {
        E::Locate { source } => locate_error(source),
        E::Score(s) => score_error(s),
        E::Detect(d) => detect_error(d),
        E::Frame(f) => frame_error(f),
        E::NoSuchPiece { .. } | E::Scale { .. } => Failure::Usage,
    }
}

fn watch_error(e: &crate::watch::WatchError) -> Failure {
    use crate::watch::WatchError as E;
    match e {
        E::Config { .. } => Failure::Usage,
        E::FrameSize { .. } => Failure::Input,
        E::Frame(f) => frame_error(f),
        E::Score(s) => score_error(s),
    }
}

fn serve_error(e: &crate::serve::ServeError) -> Failure {
    use crate::serve::ServeError as E;
    match e {
        E::NotLoopback { .. } | E::Bind { .. } => Failure::Usage,
        E::Start { .. } | E::Picture { .. } => Failure::Internal,
        E::Review(r) => review_error(r),
    }
}

fn match_error(e: &crate::game::MatchError) -> Failure {
    use crate::game::MatchError as E;
    match e {
        E::JournalExists { .. } | E::Mismatch { .. } | E::Amend { .. } | E::Ends { .. } => Failure::Usage,
        E::Rules(r) => rules_error(r),
        E::Watch(w) => watch_error(w),
        E::Journal { .. } => Failure::Input,
        E::JournalIo { source, .. } if source.kind() == std::io::ErrorKind::NotFound => Failure::Input,
        E::JournalIo { .. } => Failure::Output,
    }
}

fn rules_error(e: &crate::rules::RulesError) -> Failure {
    use crate::rules::RulesError as E;
    match e {
        E::UnknownRules { .. } | E::OptionSyntax { .. } | E::UnknownOption { .. } | E::BadOptionValue { .. } => Failure::Usage,
        E::NeedsReview { .. } => Failure::Refused,
        E::Json { .. }
        | E::Format { .. }
        | E::RulesMismatch { .. }
        | E::Header { .. }
        | E::Board { .. }
        | E::UnknownPiece { .. }
        | E::DuplicatePiece { .. }
        | E::WrongThrower { .. }
        | E::TooManyPieces { .. }
        | E::BadCall { .. }
        | E::Inconsistent { .. }
        | E::AfterGameOver { .. } => Failure::Input,
    }
}

fn eval_error(e: &crate::eval::EvalError) -> Failure {
    use crate::eval::EvalError as E;
    match e {
        E::Fixture(_) | E::Empty { .. } => Failure::Input,
    }
}

fn render_error(e: &crate::render::RenderError) -> Failure {
    use crate::render::RenderError as E;
    match e {
        E::Scene(_) => Failure::Input,
        E::Image(i) => image_write_error(i),
        E::Camera(c) => match camera_error(c) {
            // Writing the camera file beside the render: a failure there is an output failure.
            Failure::Input => Failure::Output,
            other => other,
        },
        E::Io { .. } => Failure::Output,
    }
}

fn image_write_error(e: &crate::render::effects::ImageWriteError) -> Failure {
    use crate::render::effects::ImageWriteError as E;
    match e {
        E::Extension { .. } => Failure::Usage,
        E::Write { .. } => Failure::Output,
        E::Output { source } => output_error(source),
    }
}

fn training_error(e: &crate::model::training::TrainingError) -> Failure {
    use crate::model::training::TrainingError as E;
    match e {
        E::Render(r) => render_error(r),
        E::Image { .. } => Failure::Internal,
        E::Io { .. } => Failure::Output,
    }
}

/// The class of an error and everything under it: the first error in its source chain this table knows.
pub fn classify_chain(e: &(dyn Error + 'static)) -> Option<Failure> {
    let mut cur: Option<&(dyn Error + 'static)> = Some(e);
    while let Some(err) = cur {
        if let Some(f) = classify(err) {
            return Some(f);
        }
        cur = err.source();
    }
    None
}
