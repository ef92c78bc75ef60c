//! The match journal: append-only JSON lines, each written whole, flushed and synced to
//! disk before the event is reported, so a crash or `kill -9` loses no reported event.
//!
//! Line 1 is the header (the game, the board, the options, the log's header fields);
//! then one line per event (`{"n": N, "event": {...}}`, `N` counting event lines from 0)
//! and amendments (`{"amend": N, "events": [...]}`: event line `N` replaced by these).
//! A last line without its newline was torn by a crash while it was written: it was
//! never reported, and is dropped (the file cut back to the last newline) when the
//! journal is resumed. Any other line that does not read is an error, never skipped.

use super::MatchError;
use crate::rules::{Event, EventLog};
use crate::watch::EmptyBoard;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

/// The journal format version this build reads and writes.
pub const JOURNAL_FORMAT: u32 = 1;

/// A journal longer than this (bytes) is refused rather than read: a whole match of
/// any game is a few hundred events of a few kB each, far below it.
pub const MAX_JOURNAL_BYTES: u64 = 256 * 1024 * 1024;

/// The journal's first line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JournalHeader {
    /// Always [`JOURNAL_FORMAT`].
    pub journal: u32,
    pub rules: String,
    pub board: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub options: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub players: Vec<String>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub start_scores: BTreeMap<String, i64>,
}

impl JournalHeader {
    pub fn of(cfg: &super::MatchConfig) -> JournalHeader {
        JournalHeader {
            journal: JOURNAL_FORMAT,
            rules: cfg.rules.name().to_string(),
            board: cfg.board.clone(),
            options: cfg.options.clone(),
            first: cfg.first.clone(),
            players: cfg.players.clone(),
            start_scores: cfg.start_scores.clone(),
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct EventLine {
    n: usize,
    event: Event,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct AmendLine {
    amend: usize,
    events: Vec<Event>,
}

/// What a journal holds.
#[derive(Debug, Clone, PartialEq)]
pub struct JournalContents {
    pub header: JournalHeader,
    /// The event lines, in order (`n` = index).
    pub events: Vec<Event>,
    /// Amendments in order: event line `n` replaced by the events given.
    pub amendments: Vec<(usize, Vec<Event>)>,
    /// Bytes of a torn last line found at the end (dropped on resume).
    pub torn_bytes: usize,
}

impl JournalContents {
    /// The event log: the header's fields and the events, each amended event replaced
    /// by its last amendment's events.
    pub fn log(&self) -> EventLog {
        let mut log = EventLog::new(&self.header.rules);
        log.board = Some(self.header.board.clone());
        log.first = self.header.first.clone();
        log.players = self.header.players.clone();
        log.start_scores = self.header.start_scores.clone();
        let mut replaced: BTreeMap<usize, &Vec<Event>> = BTreeMap::new();
        for (n, events) in &self.amendments {
            replaced.insert(*n, events);
        }
        for (n, e) in self.events.iter().enumerate() {
            match replaced.get(&n) {
                Some(events) => log.events.extend(events.iter().cloned()),
                None => log.events.push(e.clone()),
            }
        }
        log
    }

    /// Reads a journal's text; `path` names it in errors.
    pub fn parse(path: &Path, text: &str) -> Result<JournalContents, MatchError> {
        let bad = |problem: String| MatchError::Journal { path: path.to_path_buf(), problem };
        // Everything after the last newline was torn by a crash mid-write.
        let whole = text.rfind('\n').map_or(0, |i| i + 1);
        let torn_bytes = text.len() - whole;
        let mut lines = text[..whole].lines().enumerate();
        let header: JournalHeader = match lines.next() {
            Some((_, l)) => serde_json::from_str(l).map_err(|e| bad(format!("line 1 is not a journal header: {e}")))?,
            None => return Err(bad("no header line (the journal was never started, or torn before its first line ended)".into())),
        };
        if header.journal != JOURNAL_FORMAT {
            return Err(bad(format!("journal format {} is not supported (this build reads format {JOURNAL_FORMAT})", header.journal)));
        }
        let mut events = Vec::new();
        let mut amendments = Vec::new();
        for (i, l) in lines {
            let v: serde_json::Value = serde_json::from_str(l).map_err(|e| bad(format!("line {} is not JSON: {e}", i + 1)))?;
            if v.get("amend").is_some() {
                let a: AmendLine = serde_json::from_value(v).map_err(|e| bad(format!("line {}: {e}", i + 1)))?;
                if a.amend >= events.len() {
                    return Err(bad(format!("line {} amends event {} but only {} precede it", i + 1, a.amend, events.len())));
                }
                amendments.push((a.amend, a.events));
            } else {
                let e: EventLine = serde_json::from_value(v).map_err(|e| bad(format!("line {}: {e}", i + 1)))?;
                if e.n != events.len() {
                    return Err(bad(format!("line {} is event {} but event {} was expected (a line lost or repeated)", i + 1, e.n, events.len())));
                }
                events.push(e.event);
            }
        }
        Ok(JournalContents { header, events, amendments, torn_bytes })
    }

    /// Reads a journal file (without changing it).
    pub fn read(path: &Path) -> Result<JournalContents, MatchError> {
        let io = |source| MatchError::JournalIo { path: path.to_path_buf(), source };
        let len = std::fs::metadata(path).map_err(io)?.len();
        if len > MAX_JOURNAL_BYTES {
            return Err(MatchError::Journal { path: path.to_path_buf(), problem: format!("{len} bytes, over the {MAX_JOURNAL_BYTES}-byte limit") });
        }
        let bytes = std::fs::read(path).map_err(io)?;
        let text = String::from_utf8(bytes).map_err(|e| MatchError::Journal { path: path.to_path_buf(), problem: format!("not UTF-8 text: {e}") })?;
        JournalContents::parse(path, &text)
    }
}

/// An open journal, appending.
pub struct Journal {
    path: PathBuf,
    file: File,
    /// The next event line's `n`.
    next: usize,
}

impl Journal {
    /// Starts a new journal with its header; an existing file is never overwritten.
    pub fn create(path: &Path, header: &JournalHeader) -> Result<Journal, MatchError> {
        let file = OpenOptions::new().append(true).create_new(true).open(path).map_err(|source| {
            if source.kind() == std::io::ErrorKind::AlreadyExists {
                MatchError::JournalExists { path: path.to_path_buf() }
            } else {
                MatchError::JournalIo { path: path.to_path_buf(), source }
            }
        })?;
        let mut j = Journal { path: path.to_path_buf(), file, next: 0 };
        j.write_line(&serde_json::to_string(header).expect("a header always serialises"))?;
        sync_parent(path);
        Ok(j)
    }

    /// Opens a journal to continue it: its contents, with a torn last line cut off the file.
    pub fn resume(path: &Path) -> Result<(Journal, JournalContents), MatchError> {
        let contents = JournalContents::read(path)?;
        let io = |source| MatchError::JournalIo { path: path.to_path_buf(), source };
        let file = OpenOptions::new().append(true).open(path).map_err(io)?;
        if contents.torn_bytes > 0 {
            let len = file.metadata().map_err(io)?.len();
            file.set_len(len - contents.torn_bytes as u64).map_err(io)?;
            file.sync_all().map_err(io)?;
        }
        let next = contents.events.len();
        Ok((Journal { path: path.to_path_buf(), file, next }, contents))
    }

    /// Appends an event, flushed and synced before returning.
    pub fn append_event(&mut self, event: &Event) -> Result<usize, MatchError> {
        let n = self.next;
        let line = serde_json::to_string(&EventLine { n, event: event.clone() }).expect("an event always serialises");
        self.write_line(&line)?;
        self.next += 1;
        Ok(n)
    }

    /// Appends an amendment of event line `n`, flushed and synced before returning.
    pub fn append_amendment(&mut self, n: usize, events: &[Event]) -> Result<(), MatchError> {
        if n >= self.next {
            return Err(MatchError::Amend { problem: format!("event {n} is not in the journal (it has {} events)", self.next) });
        }
        let line = serde_json::to_string(&AmendLine { amend: n, events: events.to_vec() }).expect("an amendment always serialises");
        self.write_line(&line)
    }

    /// Keeps each end's last empty board beside the journal ([`empty_boards_path`]), the file replaced whole
    /// (written, synced, renamed): a match resumed from the journal tells the board's own patches of colour by
    /// them as the uninterrupted run did (`watch::EmptyBoard`).
    pub fn keep_empty_boards(&self, ends: &[Option<&EmptyBoard>]) -> Result<(), MatchError> {
        let file = EmptyBoardsFile { format: EMPTY_BOARDS_FORMAT, ends: ends.iter().map(|e| e.cloned()).collect() };
        let bytes = serde_json::to_vec(&file).expect("empty boards always serialise");
        let path = empty_boards_path(&self.path);
        crate::files::write_atomic(&path, &bytes).map_err(|e| MatchError::Journal { path, problem: e.to_string() })
    }

    /// One line in one write, then synced: a crash leaves it whole or torn at the end.
    fn write_line(&mut self, line: &str) -> Result<(), MatchError> {
        let io = |source| MatchError::JournalIo { path: self.path.clone(), source };
        let mut buf = Vec::with_capacity(line.len() + 1);
        buf.extend_from_slice(line.as_bytes());
        buf.push(b'\n');
        self.file.write_all(&buf).map_err(io)?;
        self.file.flush().map_err(io)?;
        self.file.sync_data().map_err(io)
    }
}

/// The format version of the empty boards kept beside a journal ([`Journal::keep_empty_boards`]).
pub const EMPTY_BOARDS_FORMAT: u32 = 1;

/// A file of kept empty boards larger than this (bytes) is refused rather than read: one end's board of an 8K
/// frame is 130,000 block means, a few MB as JSON.
const MAX_EMPTY_BOARDS_BYTES: u64 = 64 * 1024 * 1024;

/// The empty boards a match's watchers saw last, one per end, kept beside its journal.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct EmptyBoardsFile {
    format: u32,
    ends: Vec<Option<EmptyBoard>>,
}

/// Where the empty boards of the match journaled at `journal` are kept: `JOURNAL.empty-boards.json` beside it.
pub fn empty_boards_path(journal: &Path) -> PathBuf {
    let mut name = journal.as_os_str().to_owned();
    name.push(".empty-boards.json");
    PathBuf::from(name)
}

/// The empty boards kept beside the journal at `journal` ([`Journal::keep_empty_boards`]), one per end (`None`
/// where an end has none); no ends where none were kept.
pub fn read_empty_boards(journal: &Path) -> Result<Vec<Option<EmptyBoard>>, MatchError> {
    let path = empty_boards_path(journal);
    let problem = |problem: String| MatchError::Journal { path: path.clone(), problem };
    let size = match std::fs::metadata(&path) {
        Ok(m) => m.len(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(source) => return Err(MatchError::JournalIo { path, source }),
    };
    if size > MAX_EMPTY_BOARDS_BYTES {
        return Err(problem(format!("{size} bytes, more than the {MAX_EMPTY_BOARDS_BYTES} an empty boards file can be")));
    }
    let text = std::fs::read_to_string(&path).map_err(|source| MatchError::JournalIo { path: path.clone(), source })?;
    let file: EmptyBoardsFile = serde_json::from_str(&text).map_err(|e| problem(format!("not an empty boards file: {e}")))?;
    if file.format != EMPTY_BOARDS_FORMAT {
        return Err(problem(format!("format {}, this build reads {EMPTY_BOARDS_FORMAT}", file.format)));
    }
    Ok(file.ends)
}

/// Syncs the folder holding a new file, so the file's name survives a power cut too
/// (best effort: not every file system lets a folder be opened to sync).
fn sync_parent(path: &Path) {
    let parent = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    if let Ok(dir) = File::open(parent) {
        let _ = dir.sync_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header() -> JournalHeader {
        JournalHeader {
            journal: JOURNAL_FORMAT,
            rules: "holeyboard".into(),
            board: "holeyboard".into(),
            options: vec![],
            first: Some("red".into()),
            players: vec![],
            start_scores: BTreeMap::new(),
        }
    }

    fn event(thrower: &str, frame: u64) -> Event {
        serde_json::from_value(serde_json::json!({"thrower": thrower, "frame": frame, "pieces": []})).unwrap()
    }

    #[test]
    fn a_torn_last_line_is_dropped_and_the_next_append_follows_the_last_whole_one() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("j.jsonl");
        let mut j = Journal::create(&p, &header()).unwrap();
        j.append_event(&event("red", 3)).unwrap();
        j.append_event(&event("blue", 9)).unwrap();
        drop(j);
        let whole = std::fs::read(&p).unwrap();
        // Cut inside the last line (a crash mid-write).
        let cut = whole.len() - 7;
        std::fs::write(&p, &whole[..cut]).unwrap();
        let (mut j, c) = Journal::resume(&p).unwrap();
        assert_eq!(c.events.len(), 1, "the torn event is dropped");
        assert!(c.torn_bytes > 0);
        j.append_event(&event("blue", 10)).unwrap();
        drop(j);
        let c = JournalContents::read(&p).unwrap();
        assert_eq!(c.torn_bytes, 0, "the file was cut back before the append");
        assert_eq!(c.events.iter().map(|e| e.frame).collect::<Vec<_>>(), vec![Some(3), Some(10)]);
    }

    #[test]
    fn a_journal_is_never_overwritten_and_a_bad_line_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("j.jsonl");
        Journal::create(&p, &header()).unwrap();
        assert!(matches!(Journal::create(&p, &header()), Err(MatchError::JournalExists { .. })));
        let head = std::fs::read_to_string(&p).unwrap();
        for (body, why) in [
            ("garbage\n", "not JSON"),
            ("{\"n\": 1, \"event\": {\"thrower\": \"red\"}}\n", "event 1"),
            ("{\"amend\": 0, \"events\": []}\n", "amends event 0"),
            ("{\"n\": 0, \"event\": {\"thrower\": \"red\", \"bogus\": 1}}\n", "bogus"),
        ] {
            std::fs::write(&p, format!("{head}{body}")).unwrap();
            let e = JournalContents::read(&p).unwrap_err().to_string();
            assert!(e.contains(why), "{body}: {e}");
        }
        std::fs::write(&p, "").unwrap();
        assert!(JournalContents::read(&p).unwrap_err().to_string().contains("no header"));
    }

    #[test]
    fn an_amendment_replaces_its_event_in_the_log() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("j.jsonl");
        let mut j = Journal::create(&p, &header()).unwrap();
        j.append_event(&event("red", 1)).unwrap();
        j.append_event(&event("red", 2)).unwrap();
        j.append_amendment(0, &[event("red", 5), event("blue", 6)]).unwrap();
        assert!(j.append_amendment(2, &[]).is_err(), "no event 2 yet");
        let log = JournalContents::read(&p).unwrap().log();
        assert_eq!(log.events.iter().map(|e| e.frame).collect::<Vec<_>>(), vec![Some(5), Some(6), Some(2)]);
    }

    #[test]
    fn the_empty_boards_kept_beside_a_journal_read_back_and_garbage_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("j.jsonl");
        let j = Journal::create(&p, &header()).unwrap();
        assert!(read_empty_boards(&p).unwrap().is_empty(), "none kept yet");
        let board = EmptyBoard {
            pose: crate::camera::CameraPose::from_rvec_tvec([0.1, 0.0, 0.0], [0.0, 0.0, 1000.0]),
            image_width: 32,
            image_height: 16,
            block_px: crate::watch::MOTION_BLOCK_PX,
            blocks: vec![12.5, 200.25],
            patches: vec![],
        };
        j.keep_empty_boards(&[None, Some(&board)]).unwrap();
        assert_eq!(read_empty_boards(&p).unwrap(), vec![None, Some(board)]);
        let kept = empty_boards_path(&p);
        assert_eq!(kept, dir.path().join("j.jsonl.empty-boards.json"));
        std::fs::write(&kept, "{\"format\": 1, \"ends\": [{\"pose\": 3}]}").unwrap();
        let e = read_empty_boards(&p).unwrap_err().to_string();
        assert!(e.contains("empty-boards.json") && e.contains("not an empty boards file"), "{e}");
        std::fs::write(&kept, "{\"format\": 9, \"ends\": []}").unwrap();
        assert!(read_empty_boards(&p).unwrap_err().to_string().contains("format 9"));
    }
}
