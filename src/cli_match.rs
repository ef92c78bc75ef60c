//! The `boardcall match` command (part of the binary): a whole game from a video or a
//! camera, journaled as it goes, resumed after a crash, amended by an operator.

use anyhow::{bail, Context, Result};
use boardcall::board::Board;
use boardcall::files::{check_outputs, write_atomic, Role};
use boardcall::game::{check_header, config_of, resume_frame, Journal, JournalContents, JournalHeader, Match, MatchConfig, MatchEvent, Timeline, Tracker};
use boardcall::rules::{Event, EventLog};
use boardcall::serve::Scoreboard;
use std::path::{Path, PathBuf};

/// `boardcall match`'s arguments.
#[derive(clap::Args)]
pub struct MatchArgs {
    /// A video file (any format OpenCV's back ends read), `camera:N` for camera device N, or a stream URL
    /// OpenCV opens (rtsp://, http://).
    #[arg(required_unless_present = "amend")]
    pub source: Option<String>,
    /// A match on two ends, a camera each (shuffleboard alternates ends): the second end's source, read in step
    /// with SOURCE (frame i of each is the same moment). Rounds alternate ends, SOURCE's end playing round 1.
    #[arg(conflicts_with_all = ["amend", "annotated_video"])]
    pub source_b: Option<String>,
    /// A built-in board name, NAME@VARIANT, or a board file (default with --resume: the journal's).
    #[arg(long)]
    pub board: Option<String>,
    /// The camera file (OpenCV FileStorage YAML); the stream's frames must have its size.
    #[arg(long, required_unless_present = "amend")]
    pub camera: Option<PathBuf>,
    /// The game: knock-off, tap-and-draw, horse-collar, baseball, crazy-eight, holeyboard, yocu-4, yocu-9, sjoelen (default with --resume: the journal's).
    #[arg(long)]
    pub game: Option<String>,
    /// Game options, as for `boardcall game` (repeatable).
    #[arg(long = "option", value_name = "KEY=VALUE")]
    pub options: Vec<String>,
    /// Colour games: the team throwing first in round 1.
    #[arg(long, default_value = "red")]
    pub first: String,
    /// Horse Collar, Baseball, Crazy Eight and sjoelen: the players in order, comma-separated.
    #[arg(long, value_delimiter = ',')]
    pub players: Vec<String>,
    /// Totals before the first throw, to take over a game in progress (repeatable).
    #[arg(long = "start-score", value_name = "SIDE=POINTS")]
    pub start_scores: Vec<String>,
    /// A pose file (from `boardcall locate -o`), checked against the first frame.
    #[arg(long)]
    pub pose: Option<PathBuf>,
    /// With a second end (SOURCE_B): its camera file (default: --camera's).
    #[arg(long, requires = "source_b")]
    pub camera_b: Option<PathBuf>,
    /// With a second end (SOURCE_B): its pose file (with --trust-pose, trusted as --pose is; default: located).
    #[arg(long, requires = "source_b")]
    pub pose_b: Option<PathBuf>,
    /// With --pose: never check it (a rigid mount with a clear view).
    #[arg(long, requires = "pose")]
    pub trust_pose: bool,
    /// Score every n-th frame, or `auto`: about 6 scored frames a second of the stream's frame rate (every 5th at 30 fps).
    #[arg(long, default_value = "auto")]
    pub every: boardcall::watch::Every,
    /// Scored frames in a row that must agree before a state counts as settled.
    #[arg(long, default_value_t = boardcall::watch::SETTLE_FRAMES)]
    pub settle: usize,
    /// Classical detection only: no hole-state model correcting washer calls.
    #[arg(long)]
    pub no_model: bool,
    /// The journal to start (append-only; never overwritten: an existing file is refused).
    #[arg(long, conflicts_with_all = ["resume", "amend"])]
    pub journal: Option<PathBuf>,
    /// Continue the match of this journal after a crash or restart (same source, from the frame after its last event).
    #[arg(long, conflicts_with = "amend")]
    pub resume: Option<PathBuf>,
    /// Also keep the event log (docs/events.md) in this file, rewritten whole after every event.
    #[arg(long)]
    pub events: Option<PathBuf>,
    /// Post-processing: the scored timeline as JSON (time, event, calls and margins, scores; docs/match.md).
    #[arg(long, value_name = "FILE")]
    pub timeline: Option<PathBuf>,
    /// Post-processing: the scored timeline as CSV (the same rows; columns in docs/match.md).
    #[arg(long, value_name = "FILE")]
    pub timeline_csv: Option<PathBuf>,
    /// Post-processing: every frame again as an MJPEG AVI with the last settled state's calls and margins and
    /// the running score drawn on it (not with --resume: the video starts at the stream's first frame).
    #[arg(long, value_name = "FILE.avi", conflicts_with = "resume")]
    pub annotated_video: Option<PathBuf>,
    /// Serve the live scoreboard page at ADDR (IP:PORT, e.g. 127.0.0.1:8080; port 0 takes any free port): the
    /// address is printed on stderr. Loopback only unless --serve-public (docs/match.md).
    #[arg(long, value_name = "ADDR", conflicts_with = "amend")]
    pub serve: Option<std::net::SocketAddr>,
    /// With --serve: allow an address other than loopback (the page is then open to the network).
    #[arg(long, requires = "serve")]
    pub serve_public: bool,
    /// With --serve: keep serving the final state this many seconds after the match ends.
    #[arg(long, value_name = "SECONDS", requires = "serve", default_value_t = 0)]
    pub serve_linger: u64,
    /// Read a video file at its own frame rate, as a camera would deliver it (a replay, e.g. on the page).
    #[arg(long)]
    pub realtime: bool,
    /// Amend a journal's event marked for review: with --event N (the `index` of a `throw` line) and --with FILE.
    #[arg(long, requires_all = ["event", "with"])]
    pub amend: Option<PathBuf>,
    /// The event (index in the event log) an amendment replaces.
    #[arg(long, requires = "amend")]
    pub event: Option<usize>,
    /// A JSON file: an array of events (docs/events.md) replacing the amended one.
    #[arg(long, requires = "amend")]
    pub with: Option<PathBuf>,
}

/// Writes one JSON line to standard output (a closed pipe ends the program quietly).
fn emit(value: &impl serde::Serialize) -> Result<()> {
    use std::io::Write;
    let line = serde_json::to_string(value)?;
    if let Err(e) = writeln!(std::io::stdout().lock(), "{line}") {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            std::process::exit(0);
        }
        return Err(e.into());
    }
    Ok(())
}

fn match_config(a: &MatchArgs, game: &str, board: &str) -> Result<MatchConfig> {
    let rules: boardcall::rules::Rules = game.parse()?;
    let mut start_scores = std::collections::BTreeMap::new();
    for s in &a.start_scores {
        let (side, points) = s.split_once('=').with_context(|| format!("--start-score `{s}` is not SIDE=POINTS"))?;
        let points: i64 = points.trim().parse().with_context(|| format!("--start-score `{s}`: POINTS is not a whole number"))?;
        start_scores.insert(side.trim().to_string(), points);
    }
    Ok(MatchConfig {
        rules,
        options: a.options.clone(),
        board: board.to_string(),
        first: rules.team_colours().then(|| a.first.clone()),
        players: a.players.clone(),
        start_scores,
    })
}

pub fn run(a: MatchArgs, detector: boardcall::detect::DetectorConfig) -> Result<()> {
    if let Some(journal) = &a.amend {
        return amend(journal, a.event.expect("clap requires --event"), a.with.as_deref().expect("clap requires --with"));
    }
    // The page's server first: a refused or busy address stops the command before anything is written.
    let mut page = match a.serve {
        Some(addr) => {
            let p = Scoreboard::serve(addr, a.serve_public)?;
            eprintln!("boardcall: scoreboard at http://{}/", p.addr());
            Some(p)
        }
        None => None,
    };
    let source = a.source.clone().expect("clap requires SOURCE");
    let camera_path = a.camera.clone().expect("clap requires --camera");
    let (journal, contents, cfg) = match (&a.journal, &a.resume) {
        (Some(path), None) => {
            let game = a.game.as_deref().context("--game is required to start a match")?;
            let board = a.board.as_deref().context("--board is required to start a match")?;
            let cfg = match_config(&a, game, board)?;
            one_board_one_source(&a, &cfg)?;
            // The log's header is checked by the rules engine before the journal is started.
            boardcall::rules::play(&cfg.game_config()?, &Board::load(&cfg.board)?, &cfg.header_log())?;
            let kept = boardcall::game::empty_boards_path(path);
            check_outputs(&inputs(&a, &source, &camera_path), &outputs(&a, Some(path), Some(&kept)))?;
            (Journal::create(path, &JournalHeader::of(&cfg))?, None, cfg)
        }
        (None, Some(path)) => {
            let kept = boardcall::game::empty_boards_path(path);
            check_outputs(&inputs(&a, &source, &camera_path), &outputs(&a, Some(path), Some(&kept)))?;
            let (j, contents) = Journal::resume(path)?;
            let mut cfg = config_of(&contents.header)?;
            if a.game.is_some() || a.board.is_some() || !a.options.is_empty() {
                let given = match_config(&a, a.game.as_deref().unwrap_or(&contents.header.rules), a.board.as_deref().unwrap_or(&contents.header.board))?;
                let given = MatchConfig { options: if a.options.is_empty() { cfg.options.clone() } else { given.options }, ..given };
                check_header(path, &contents.header, &given)?;
                cfg.options = given.options;
            }
            if contents.torn_bytes > 0 {
                eprintln!("boardcall: {}: dropped a torn last line ({} bytes, never reported)", path.display(), contents.torn_bytes);
            }
            one_board_one_source(&a, &cfg)?;
            (j, Some(contents), cfg)
        }
        _ => bail!("name a new journal with --journal FILE, or continue one with --resume FILE"),
    };
    let board = Board::load(&cfg.board)?;
    let log = contents.as_ref().map_or_else(|| cfg.header_log(), JournalContents::log);
    let resume_from = resume_frame(&log);
    let tracker = Tracker::new(&cfg, &board, log)?;
    let cam = boardcall::camera::Camera::load(&camera_path)?;
    let pose_start = |pose: Option<&Path>| -> Result<boardcall::watch::PoseStart> {
        Ok(match pose {
            Some(p) if a.trust_pose => boardcall::watch::PoseStart::Trusted(boardcall::camera::CameraPose::load(p)?),
            Some(p) => boardcall::watch::PoseStart::Given(boardcall::camera::PoseFile::load(p)?.into()),
            None => boardcall::watch::PoseStart::Locate,
        })
    };
    let start = pose_start(a.pose.as_deref())?;
    let mut streams = vec![boardcall::frame::FrameSource::open(&source)?];
    if let Some(b) = &a.source_b {
        streams.push(boardcall::frame::FrameSource::open(b)?);
    }
    let wcfg = |end: usize| boardcall::watch::WatchConfig { every: a.every.frames(streams[end].fps()), settle_frames: a.settle, ..Default::default() };
    let foul = match cfg.game_config()?.get("foul_line") {
        "long" => boardcall::calls::FoulLine::Long,
        "short" => boardcall::calls::FoulLine::Short,
        _ => boardcall::calls::FoulLine::Long,
    };
    let mut watchers = vec![boardcall::watch::Watcher::new(&board, &cam, start, detector.clone(), foul, None, wcfg(0))?];
    let mut cams = vec![cam.clone()];
    if a.source_b.is_some() {
        let cam_b = match &a.camera_b {
            Some(p) => boardcall::camera::Camera::load(p)?,
            None => cam.clone(),
        };
        watchers.push(boardcall::watch::Watcher::new(&board, &cam_b, pose_start(a.pose_b.as_deref())?, detector.clone(), foul, None, wcfg(1))?);
        cams.push(cam_b);
    }
    if let Some(path) = &a.resume {
        // The empty boards the run before saw: the board's own patches of colour are told by them again. Without
        // them (an unreadable file), such patches hold events until the board is next seen empty.
        match boardcall::game::read_empty_boards(path) {
            Ok(ends) => {
                for (w, e) in watchers.iter_mut().zip(ends) {
                    if let Some(e) = e {
                        w.recall_empty_board(e);
                    }
                }
            }
            Err(e) => eprintln!("boardcall: {e}: not used; colour no piece explains holds events until the board is next seen empty"),
        }
    }
    if resume_from > 0 {
        eprintln!("boardcall: resuming after frame {} ({} events in the journal)", resume_from - 1, tracker.log().events.len());
    }
    if tracker.over() {
        emit(&serde_json::json!({"event": "end", "frames": 0, "state": tracker.state()}))?;
        return Ok(());
    }
    let sides: Vec<String> = m_sides(&tracker);
    let mut timeline = Timeline::default();
    let mut m = Match::with_ends(watchers, tracker, Some(journal), resume_from);
    let progress = progress_bar(streams[0].frame_count());
    let mut video = match &a.annotated_video {
        Some(path) => Some(AnnotatedVideo::open(path, &cam, streams[0].fps())?),
        None => None,
    };
    if let Some(p) = page.as_mut() {
        p.record_logged(m.tracker().log());
        p.set_game(m.tracker());
        p.publish();
    }
    let mut page_frame: Option<u64> = None;
    let fps = streams[0].fps();
    let pace = a.realtime.then(|| (std::time::Instant::now(), if fps > 0.0 { fps } else { 30.0 }));
    let decode_all = video.is_some();
    let mut each = |m: &Match, end: usize, f: Option<&boardcall::frame::StreamFrame>, index: u64, events: Vec<MatchEvent>| -> Result<()> {
        if let (Some((t0, fps)), 0) = (pace, end) {
            let due = t0 + std::time::Duration::from_secs_f64(index as f64 / fps);
            std::thread::sleep(due.saturating_duration_since(std::time::Instant::now()));
        }
        if let Some(p) = page.as_mut() {
            // Pictures of the end in play only (another end's frame shows a board not in play).
            let f = f.filter(|_| end == m.active_end() || !events.is_empty());
            let changed = update_page(p, &mut page_frame, m, f, &events, &PageContext { cam: &cams[end], board: &board, detector: &detector, foul });
            if changed {
                p.set_game(m.tracker());
                p.publish();
            }
        }
        for e in events {
            if let (MatchEvent::Throw { .. }, Some(out)) = (&e, &a.events) {
                write_atomic(out, (m.tracker().log().to_json() + "\n").as_bytes())?;
            }
            timeline.record(&e, m.tracker().state());
            progress.suspend(|| emit(&e))?;
        }
        if let (Some(v), Some(f)) = (video.as_mut(), f) {
            v.write(&f.frame, &cam, &board, m.last_report(), m.tracker())?;
        }
        progress.set_position(index + 1);
        Ok(())
    };
    let frames = m.run_ends(&mut streams, decode_all, &mut each)?;
    progress.finish_and_clear();
    if let Some(v) = video {
        v.finish()?;
    }
    if let Some(path) = &a.timeline {
        write_atomic(path, timeline.to_json().as_bytes())?;
    }
    if let Some(path) = &a.timeline_csv {
        write_atomic(path, &timeline.to_csv(&sides).context("writing the timeline's CSV")?)?;
    }
    if let Some(p) = page.as_mut() {
        p.set_game(m.tracker());
        p.finish();
        p.publish();
    }
    emit(&serde_json::json!({"event": "end", "frames": frames, "state": m.tracker().state()}))?;
    if let (Some(p), true) = (&page, a.serve_linger > 0) {
        eprintln!("boardcall: the match is over; serving its final state at http://{}/ for {} s", p.addr(), a.serve_linger);
        std::thread::sleep(std::time::Duration::from_secs(a.serve_linger));
    }
    Ok(())
}

/// What the scoreboard's pictures are drawn with.
struct PageContext<'a> {
    cam: &'a boardcall::camera::Camera,
    board: &'a Board,
    detector: &'a boardcall::detect::DetectorConfig,
    foul: boardcall::calls::FoulLine,
}

/// Brings the scoreboard page up to date with one frame's events (and, at a new settled
/// state, its annotated picture and its close calls' review pictures); returns whether
/// anything changed. A picture that cannot be drawn is said on stderr: the match goes on.
fn update_page(p: &mut Scoreboard, seen: &mut Option<u64>, m: &Match, f: Option<&boardcall::frame::StreamFrame>, events: &[MatchEvent], c: &PageContext) -> bool {
    let mut changed = false;
    let settled = m.last_settled_frame();
    if let (Some(f), Some(report), true) = (f, m.last_report(), settled != *seen) {
        *seen = settled;
        match boardcall::serve::annotated_jpeg(&f.frame, c.cam, c.board, report) {
            Ok(jpeg) => p.set_frame(f.index, f.time_s, jpeg),
            Err(e) => eprintln!("boardcall: scoreboard: {e}"),
        }
        changed = true;
    }
    for e in events {
        let row = p.record(e);
        if let (MatchEvent::Throw { entry, .. }, Some(f), Some(report), true) = (e, f, m.last_report(), p.link_pictures(row)) {
            match boardcall::serve::close_call_pictures(&f.frame, c.cam, c.board, report, c.detector.clone(), c.foul, entry) {
                Ok(pictures) => p.add_reviews(row, pictures),
                Err(e) => eprintln!("boardcall: scoreboard: review pictures: {e}"),
            }
        }
        changed = true;
    }
    changed
}

/// Two ends are followed where rounds alternate ends (the colour games): a second source
/// is refused for sjoelen (one board) and the player games (their turns are not tied to ends here).
fn one_board_one_source(a: &MatchArgs, cfg: &MatchConfig) -> Result<()> {
    if a.source_b.is_none() || cfg.rules.team_colours() {
        return Ok(());
    }
    let problem = if cfg.rules == boardcall::rules::Rules::Sjoelen {
        "sjoelen is played on one board: give one source, not two".to_string()
    } else {
        format!("{} is followed from one source (two ends are followed for the team games, whose rounds alternate ends)", cfg.rules.name())
    };
    Err(boardcall::game::MatchError::Ends { problem }.into())
}

/// The game's sides, in order (the score columns of the CSV).
fn m_sides(t: &Tracker) -> Vec<String> {
    t.state().scores.0.iter().map(|(s, _)| s.clone()).collect()
}

/// A progress bar over a video file's frames on standard error, only when standard
/// error is a terminal (hidden otherwise: a log file or a pipe gets no bar).
fn progress_bar(frames: Option<u64>) -> indicatif::ProgressBar {
    use std::io::IsTerminal;
    match frames {
        Some(n) if std::io::stderr().is_terminal() => {
            let bar = indicatif::ProgressBar::new(n);
            if let Ok(style) = indicatif::ProgressStyle::with_template("{bar:40} {pos}/{len} frames ({per_sec}, {eta} left)") {
                bar.set_style(style);
            }
            bar
        }
        _ => indicatif::ProgressBar::hidden(),
    }
}

/// The annotated copy of the stream: each frame with the last settled state's
/// footprints, calls and margins, and a banner with the round and the totals.
struct AnnotatedVideo {
    writer: opencv::videoio::VideoWriter,
    path: PathBuf,
}

impl AnnotatedVideo {
    fn open(path: &Path, cam: &boardcall::camera::Camera, fps: f64) -> Result<AnnotatedVideo> {
        use opencv::videoio::{VideoWriter, VideoWriterTraitConst};
        let size = opencv::core::Size::new(cam.image_width as i32, cam.image_height as i32);
        let fourcc = VideoWriter::fourcc('M', 'J', 'P', 'G')?;
        let name = path.to_str().with_context(|| format!("{} is not UTF-8", path.display()))?;
        // A stream that does not say its rate is written at 30 frames a second.
        let fps = if fps > 0.0 { fps } else { 30.0 };
        let writer = VideoWriter::new_with_backend(name, opencv::videoio::CAP_OPENCV_MJPEG, fourcc, fps, size, true)?;
        if !writer.is_opened()? {
            return Err(boardcall::files::OutputError::Write { path: path.to_path_buf(), source: std::io::Error::other("OpenCV cannot write this file") }.into());
        }
        Ok(AnnotatedVideo { writer, path: path.to_path_buf() })
    }

    fn write(
        &mut self,
        frame: &boardcall::frame::Frame,
        cam: &boardcall::camera::Camera,
        board: &Board,
        report: Option<&boardcall::score::FrameReport>,
        tracker: &Tracker,
    ) -> Result<()> {
        use opencv::core::{Point, Scalar};
        use opencv::imgproc;
        use opencv::videoio::VideoWriterTrait;
        let mut img = match report {
            Some(r) => {
                let pose = boardcall::camera::CameraPose::from_rvec_tvec(r.pose.rvec, r.pose.tvec);
                boardcall::score::annotate(frame, cam, &pose, board, r)?
            }
            None => frame.image().clone(),
        };
        let s = tracker.state();
        let totals: Vec<String> = s.scores.0.iter().map(|(side, v)| format!("{side} {v}")).collect();
        let status = serde_json::to_value(s.status).ok().and_then(|v| v.as_str().map(str::to_string)).unwrap_or_default();
        let text = format!("round {}  {}  {}", s.next_round().min(s.rounds.len() as u32 + 1), totals.join("  "), status.replace('_', " "));
        let at = Point::new(10, 30);
        imgproc::put_text(&mut img, &text, at, imgproc::FONT_HERSHEY_SIMPLEX, 0.8, Scalar::new(0.0, 0.0, 0.0, 0.0), 5, imgproc::LINE_AA, false)?;
        imgproc::put_text(&mut img, &text, at, imgproc::FONT_HERSHEY_SIMPLEX, 0.8, Scalar::new(255.0, 255.0, 255.0, 0.0), 2, imgproc::LINE_AA, false)?;
        self.writer.write(&img).with_context(|| format!("writing {}", self.path.display()))?;
        Ok(())
    }

    fn finish(mut self) -> Result<()> {
        use opencv::videoio::VideoWriterTrait;
        self.writer.release().with_context(|| format!("closing {}", self.path.display()))?;
        Ok(())
    }
}

fn inputs<'a>(a: &'a MatchArgs, source: &'a str, camera: &'a Path) -> Vec<Role<'a>> {
    let mut v = vec![Role::new(Path::new(source), "source"), Role::new(camera, "camera file")];
    v.extend(a.pose.as_deref().map(|p| Role::new(p, "pose file")));
    v.extend(a.source_b.as_deref().map(|p| Role::new(Path::new(p), "second source")));
    v.extend(a.camera_b.as_deref().map(|p| Role::new(p, "--camera-b")));
    v.extend(a.pose_b.as_deref().map(|p| Role::new(p, "--pose-b")));
    v
}

fn outputs<'a>(a: &'a MatchArgs, journal: Option<&'a Path>, kept: Option<&'a Path>) -> Vec<Role<'a>> {
    let mut v: Vec<Role> = journal.map(|p| Role::new(p, "journal")).into_iter().collect();
    v.extend(kept.map(|p| Role::new(p, "the journal's empty boards")));
    v.extend(a.events.as_deref().map(|p| Role::new(p, "--events")));
    v.extend(a.timeline.as_deref().map(|p| Role::new(p, "--timeline")));
    v.extend(a.timeline_csv.as_deref().map(|p| Role::new(p, "--timeline-csv")));
    v.extend(a.annotated_video.as_deref().map(|p| Role::new(p, "--annotated-video")));
    v
}

/// Replaces event `index` of a journal's log by the events in `with`, after checking the
/// amended log with the rules engine; appended to the journal, never rewritten.
fn amend(path: &Path, index: usize, with: &Path) -> Result<()> {
    let text = std::fs::read_to_string(with).with_context(|| format!("reading {}", with.display()))?;
    let events: Vec<Event> = serde_json::from_str(&text).with_context(|| format!("{}: an array of events (docs/events.md)", with.display()))?;
    let (mut journal, contents) = Journal::resume(path)?;
    // The log's index to the journal's event line: amended lines expand to their replacements.
    let line = line_of(&contents, index).with_context(|| format!("the journal's log has no event {index}"))?;
    let cfg = config_of(&contents.header)?;
    let board = Board::load(&cfg.board)?;
    let mut amended = contents.clone();
    amended.amendments.push((line, events.clone()));
    let log: EventLog = amended.log();
    let state = boardcall::rules::play(&cfg.game_config()?, &board, &log).context("the amended log does not score")?;
    journal.append_amendment(line, &events)?;
    emit(&serde_json::json!({"event": "amended", "index": index, "line": line, "state": state}))?;
    Ok(())
}

/// The journal event line that log event `index` comes from, when it is one line's own
/// event or the first of an amendment's replacements.
fn line_of(c: &JournalContents, index: usize) -> Option<usize> {
    let mut at = 0usize;
    for n in 0..c.events.len() {
        let width = c.amendments.iter().rev().find(|(m, _)| *m == n).map_or(1, |(_, e)| e.len());
        if at == index {
            return Some(n);
        }
        at += width;
    }
    None
}
