//! The live scoreboard page of `boardcall match --serve`: the match loop publishes a typed
//! [`Snapshot`] (scores per side, round, whose throw, the event list with review flags,
//! the last settled state annotated, each close call's review picture), and a small HTTP
//! server (axum on its own tokio runtime thread, so the match loop stays synchronous)
//! serves it to browsers: the page (`page.html`, `page.js`, `page.css`, all in the binary:
//! no internet needed), the state as server-sent events, and the pictures (`docs/match.md`).
//!
//! [`Scoreboard`] is the match's side: it keeps the snapshot and the pictures and hands
//! each new version to the server through a `tokio::sync::watch` channel (the server always
//! serves the latest; a slow browser skips versions, never the last).

mod pictures;

pub use pictures::{annotated_jpeg, close_call_pictures, ClosePicture};

use crate::game::{MatchEvent, Tracker};
use crate::rules::Status;
use axum::extract::{Path, State};
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use serde::Serialize;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use tokio::sync::watch;

/// The page, its script and its style sheet, served as they are.
const PAGE_HTML: &str = include_str!("page.html");
const PAGE_JS: &str = include_str!("page.js");
const PAGE_CSS: &str = include_str!("page.css");

/// The name of the server-sent event that carries a [`Snapshot`] (`event: state`).
pub const SSE_EVENT: &str = "state";

/// Close calls: a call within this many mm of its boundary gets a review picture even
/// when the camera is sure (as `boardcall review --all-close`), besides every call
/// flagged for review.
pub const CLOSE_CALL_MM: f64 = crate::review::CLOSE_MARGIN_MM;

/// A close call already pictured is drawn again only when its margin changed by more
/// than this (mm): a piece knocked, not the measurement's noise (0.1-0.5 mm at rest).
pub const REDRAW_MM: f64 = 1.0;

/// Errors of the scoreboard server.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error("--serve {addr}: not a loopback address; the page would be open to the network (add --serve-public to mean it)")]
    NotLoopback { addr: SocketAddr },
    #[error("--serve {addr}: cannot listen there: {source}")]
    Bind { addr: SocketAddr, source: std::io::Error },
    #[error("the scoreboard server could not start: {source}")]
    Start { source: std::io::Error },
    #[error("scoreboard picture, OpenCV {context}: {source}")]
    Picture { context: &'static str, source: opencv::Error },
    #[error(transparent)]
    Review(#[from] crate::review::ReviewError),
}

/// One side's total.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SideScore {
    pub side: String,
    pub points: i64,
}

/// The last settled state's annotated picture.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FrameInfo {
    /// The frame index the state was read at, and its time in the stream.
    pub frame: u64,
    pub time_s: f64,
    /// Where the JPEG is (`/frame.jpg?v=N`: a new address per picture).
    pub url: String,
}

/// A piece's call in an event row.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CallRow {
    pub piece: String,
    pub call: String,
    /// `None` for an event read back from the journal (a resumed match): the log keeps no margins.
    pub margin_mm: Option<f64>,
    /// The call is flagged for review (within 3 sigma of its boundary, or in doubt).
    pub review: bool,
    /// The close call's review picture (`/review/N.png`), when it has one.
    pub picture: Option<String>,
}

/// One row of the event list: what `match` printed, in words.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EventRow {
    /// The row's number, from 0.
    pub n: usize,
    /// `throw`, `round_over`, `cleared`, `game_over`, `ignored`, `watch`.
    pub kind: String,
    pub frame: Option<u64>,
    pub time_s: Option<f64>,
    /// What happened, in words (e.g. `red threw red#2`, `round 1: red 3, blue 0`).
    pub text: String,
    /// Throws: why the event is marked for review, if it is.
    pub review: Option<String>,
    /// Throws: every piece's call and margin.
    pub calls: Vec<CallRow>,
}

/// A close call's review picture.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ReviewInfo {
    /// Its number: the picture is `/review/{id}.png`.
    pub id: usize,
    /// The piece (as the event log names it).
    pub piece: String,
    /// The event row (`n`) whose state it was drawn from.
    pub row: usize,
    /// The call and its signed margin when the picture was drawn.
    pub call: String,
    pub margin_mm: f64,
    /// e.g. "clears the 2-line by 3.1 +/- 0.4 mm".
    pub gap: String,
    /// e.g. "2 points".
    pub verdict: String,
    pub url: String,
}

/// What the page shows: the whole scoreboard, sent whole with every update.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Snapshot {
    /// Counts the updates from 1 (0: nothing yet).
    pub seq: u64,
    /// The game (`knock-off`, ...) and board.
    pub game: String,
    pub board: String,
    /// The round in play (the last round once the game is over).
    pub round: u32,
    /// `waiting`, `in_progress`, `won`, `tied`, `needs_review`.
    pub status: String,
    pub winner: Option<String>,
    /// Totals per side, in the game's order.
    pub scores: Vec<SideScore>,
    /// Who throws next (`None`: between rounds, game over, or held for review).
    pub up_next: Option<String>,
    /// Throws (sjoelen: sub-turns) in so far this round.
    pub throws_this_round: usize,
    /// Why the game needs review, when it does.
    pub needs_review: Option<String>,
    pub frame: Option<FrameInfo>,
    pub events: Vec<EventRow>,
    pub reviews: Vec<ReviewInfo>,
    /// The match has ended (game over, or the stream ended): no update follows.
    pub finished: bool,
}

/// One published version: the snapshot as JSON and the pictures it points to.
#[derive(Debug, Default)]
struct Published {
    json: String,
    finished: bool,
    frame_jpeg: Option<Arc<Vec<u8>>>,
    reviews: Vec<Arc<Vec<u8>>>,
}

/// The match's side of the scoreboard: builds the snapshot and publishes it to the server.
pub struct Scoreboard {
    snapshot: Snapshot,
    frame_jpeg: Option<Arc<Vec<u8>>>,
    reviews: Vec<Arc<Vec<u8>>>,
    tx: watch::Sender<Arc<Published>>,
    addr: SocketAddr,
}

impl Scoreboard {
    /// Starts the server on `addr` (port 0: any free port; [`Scoreboard::addr`] says which).
    /// A non-loopback address is refused unless `public`.
    pub fn serve(addr: SocketAddr, public: bool) -> Result<Scoreboard, ServeError> {
        if !addr.ip().is_loopback() && !public {
            return Err(ServeError::NotLoopback { addr });
        }
        let snapshot = Snapshot {
            seq: 0,
            game: String::new(),
            board: String::new(),
            round: 1,
            status: "waiting".into(),
            winner: None,
            scores: Vec::new(),
            up_next: None,
            throws_this_round: 0,
            needs_review: None,
            frame: None,
            events: Vec::new(),
            reviews: Vec::new(),
            finished: false,
        };
        let first = Published { json: to_json(&snapshot), ..Default::default() };
        let (tx, rx) = watch::channel(Arc::new(first));
        let listener = std::net::TcpListener::bind(addr).map_err(|source| ServeError::Bind { addr, source })?;
        listener.set_nonblocking(true).map_err(|source| ServeError::Start { source })?;
        let bound = listener.local_addr().map_err(|source| ServeError::Start { source })?;
        let runtime = tokio::runtime::Builder::new_current_thread().enable_io().enable_time().build().map_err(|source| ServeError::Start { source })?;
        let app = router(rx);
        std::thread::Builder::new()
            .name("boardcall-serve".into())
            .spawn(move || {
                runtime.block_on(async move {
                    let served = match tokio::net::TcpListener::from_std(listener) {
                        Ok(l) => axum::serve(l, app).await,
                        Err(e) => Err(e),
                    };
                    if let Err(e) = served {
                        eprintln!("boardcall: the scoreboard server stopped: {e}");
                    }
                })
            })
            .map_err(|source| ServeError::Start { source })?;
        Ok(Scoreboard { snapshot, frame_jpeg: None, reviews: Vec::new(), tx, addr: bound })
    }

    /// The address the server listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The snapshot as it stands (published or not).
    pub fn snapshot(&self) -> &Snapshot {
        &self.snapshot
    }

    /// Takes the game's state from the tracker: the game and board, totals, round, status,
    /// whose throw.
    pub fn set_game(&mut self, t: &Tracker) {
        let s = t.state();
        let s_ = &mut self.snapshot;
        s_.game = s.rules.name().to_string();
        s_.board = s.board.clone();
        s_.scores = s.scores.0.iter().map(|(side, points)| SideScore { side: side.clone(), points: *points }).collect();
        let over = matches!(s.status, Status::Won | Status::Tied);
        s_.round = if over { (s.rounds.len() as u32).max(1) } else { s.next_round() };
        s_.status = status_name(s.status);
        s_.winner = s.winner.clone();
        s_.up_next = t.up_next();
        s_.throws_this_round = t.thrown_this_round();
        s_.needs_review = s.review.as_ref().map(|r| r.reason.clone());
    }

    /// Adds one of the match's events to the event list; returns its row number.
    pub fn record(&mut self, e: &MatchEvent) -> usize {
        let n = self.snapshot.events.len();
        let row = row_of(n, e);
        self.snapshot.events.push(row);
        n
    }

    /// Adds the events of a log read back from a journal (a resumed match), as rows of the
    /// event list: the pieces' calls, without margins (the log keeps none).
    pub fn record_logged(&mut self, log: &crate::rules::EventLog) {
        for (index, e) in log.events.iter().enumerate() {
            let n = self.snapshot.events.len();
            let calls = e
                .pieces
                .iter()
                .map(|p| CallRow {
                    piece: p.piece.to_string(),
                    call: serde_json::to_value(p.call).ok().and_then(|v| v.as_str().map(str::to_string)).unwrap_or_default(),
                    margin_mm: None,
                    review: false,
                    picture: None,
                })
                .collect();
            self.snapshot.events.push(EventRow {
                n,
                kind: "throw".into(),
                frame: e.frame,
                time_s: e.time_s,
                text: format!("event {index}: {} threw (from the journal)", e.thrower),
                review: e.review.clone(),
                calls,
            });
        }
    }

    /// The last settled state's annotated picture (JPEG bytes).
    pub fn set_frame(&mut self, frame: u64, time_s: f64, jpeg: Vec<u8>) {
        self.frame_jpeg = Some(Arc::new(jpeg));
        self.snapshot.frame = Some(FrameInfo { frame, time_s, url: format!("/frame.jpg?v={frame}") });
    }

    /// Links event row `row`'s close calls to the pictures already drawn of the same piece
    /// with the same call, within [`REDRAW_MM`] (a piece that stayed put keeps its picture);
    /// returns whether a close call is left without one (its pictures are to be drawn).
    pub fn link_pictures(&mut self, row: usize) -> bool {
        let Some(r) = self.snapshot.events.get_mut(row) else { return false };
        let mut missing = false;
        for c in r.calls.iter_mut() {
            let Some(margin) = c.margin_mm.filter(|m| c.review || m.abs() < CLOSE_CALL_MM) else { continue };
            let same = self.snapshot.reviews.iter().rev().find(|v| v.piece == c.piece && v.call == c.call && (v.margin_mm - margin).abs() <= REDRAW_MM);
            match same {
                Some(v) => c.picture = Some(v.url.clone()),
                None => missing = true,
            }
        }
        missing
    }

    /// Adds the close calls' pictures of event row `row` (those of calls not linked yet
    /// by [`Scoreboard::link_pictures`]), and links them from its calls.
    pub fn add_reviews(&mut self, row: usize, pictures: Vec<ClosePicture>) {
        for p in pictures {
            let call = self.snapshot.events.get(row).and_then(|r| r.calls.iter().find(|c| c.piece == p.piece));
            let Some((call, margin_mm)) = call.filter(|c| c.picture.is_none()).and_then(|c| Some((c.call.clone(), c.margin_mm?))) else { continue };
            let id = self.reviews.len();
            let url = format!("/review/{id}.png");
            if let Some(r) = self.snapshot.events.get_mut(row) {
                if let Some(c) = r.calls.iter_mut().find(|c| c.piece == p.piece) {
                    c.picture = Some(url.clone());
                }
            }
            self.snapshot.reviews.push(ReviewInfo { id, piece: p.piece, row, call, margin_mm, gap: p.gap, verdict: p.verdict, url });
            self.reviews.push(Arc::new(p.png));
        }
    }

    /// Marks the match over: the update after this is the last.
    pub fn finish(&mut self) {
        self.snapshot.finished = true;
    }

    /// Sends the snapshot as it stands to the server (a new version for every page).
    pub fn publish(&mut self) {
        self.snapshot.seq += 1;
        let p = Published {
            json: to_json(&self.snapshot),
            finished: self.snapshot.finished,
            frame_jpeg: self.frame_jpeg.clone(),
            reviews: self.reviews.clone(),
        };
        // No page open is no error: the latest version waits for the next one.
        self.tx.send_replace(Arc::new(p));
    }
}

fn to_json(s: &Snapshot) -> String {
    // A snapshot is plain data (strings, numbers, vectors): it always serialises.
    serde_json::to_string(s).unwrap_or_else(|e| format!("{{\"error\":\"{e}\"}}"))
}

fn status_name(s: Status) -> String {
    serde_json::to_value(s).ok().and_then(|v| v.as_str().map(str::to_string)).unwrap_or_default()
}

fn totals(scores: &crate::rules::Scores) -> String {
    scores.0.iter().map(|(side, v)| format!("{side} {v}")).collect::<Vec<_>>().join(", ")
}

/// A match event as a row of the page's event list.
fn row_of(n: usize, e: &MatchEvent) -> EventRow {
    let row = |kind: &str, frame: Option<u64>, time_s: Option<f64>, text: String| EventRow {
        n,
        kind: kind.into(),
        frame,
        time_s,
        text,
        review: None,
        calls: Vec::new(),
    };
    match e {
        MatchEvent::Throw { index, entry, calls } => {
            let thrown: Vec<String> = if entry.throws.is_empty() {
                Vec::new()
            } else {
                entry.throws.iter().map(|p| p.to_string()).collect()
            };
            let text = if thrown.is_empty() { format!("event {index}: {} threw", entry.thrower) } else { format!("event {index}: {} threw {}", entry.thrower, thrown.join(", ")) };
            EventRow {
                review: entry.review.clone(),
                calls: calls
                    .iter()
                    .map(|c| CallRow { piece: c.piece.to_string(), call: c.call.clone(), margin_mm: Some(c.margin_mm), review: c.review, picture: None })
                    .collect(),
                ..row("throw", entry.frame, entry.time_s, text)
            }
        }
        MatchEvent::RoundOver { frame, time_s, round } => {
            row("round_over", Some(*frame), Some(*time_s), format!("round {} over: {} this round; totals {}", round.round, totals(&round.points), totals(&round.scores)))
        }
        MatchEvent::Cleared { frame, time_s } => row("cleared", Some(*frame), Some(*time_s), "board cleared".into()),
        MatchEvent::GameOver { frame, time_s, status, winner, scores } => {
            let who = winner.as_deref().map_or_else(|| status_name(*status).replace('_', " "), |w| format!("{w} wins"));
            row("game_over", Some(*frame), Some(*time_s), format!("game over: {who} ({})", totals(scores)))
        }
        MatchEvent::Ignored { frame, time_s, reason } => row("ignored", Some(*frame), Some(*time_s), format!("ignored: {reason}")),
        MatchEvent::Watch { what, .. } => {
            let v = serde_json::to_value(what.as_ref()).unwrap_or_default();
            let name = v.get("event").and_then(|x| x.as_str()).unwrap_or("watch").replace('_', " ");
            let reason = v.get("reason").and_then(|x| x.as_str()).map(|r| format!(": {r}")).unwrap_or_default();
            let frame = v.get("frame").and_then(|x| x.as_u64());
            let time_s = v.get("time_s").and_then(|x| x.as_f64());
            row("watch", frame, time_s, format!("{name}{reason}"))
        }
    }
}

type Rx = watch::Receiver<Arc<Published>>;

fn router(rx: Rx) -> Router {
    Router::new()
        .route("/", get(|| async { asset("text/html; charset=utf-8", PAGE_HTML) }))
        .route("/page.js", get(|| async { asset("text/javascript; charset=utf-8", PAGE_JS) }))
        .route("/page.css", get(|| async { asset("text/css; charset=utf-8", PAGE_CSS) }))
        .route("/state.json", get(state_json))
        .route("/events", get(events))
        .route("/frame.jpg", get(frame_jpg))
        .route("/review/{file}", get(review_png))
        .with_state(rx)
}

fn asset(content_type: &'static str, body: &'static str) -> Response {
    ([(header::CONTENT_TYPE, content_type)], body).into_response()
}

fn no_store(content_type: &'static str, body: impl IntoResponse) -> Response {
    ([(header::CONTENT_TYPE, HeaderValue::from_static(content_type)), (header::CACHE_CONTROL, HeaderValue::from_static("no-store"))], body).into_response()
}

async fn state_json(State(rx): State<Rx>) -> Response {
    let json = rx.borrow().json.clone();
    no_store("application/json", json)
}

async fn frame_jpg(State(rx): State<Rx>) -> Response {
    let jpeg = rx.borrow().frame_jpeg.clone();
    match jpeg {
        Some(b) => no_store("image/jpeg", b.as_ref().clone()),
        None => (StatusCode::NOT_FOUND, "no settled state yet\n").into_response(),
    }
}

async fn review_png(State(rx): State<Rx>, Path(file): Path<String>) -> Response {
    let id = file.strip_suffix(".png").and_then(|n| n.parse::<usize>().ok());
    let png = id.and_then(|i| rx.borrow().reviews.get(i).cloned());
    match png {
        Some(b) => ([(header::CONTENT_TYPE, "image/png")], b.as_ref().clone()).into_response(),
        None => (StatusCode::NOT_FOUND, "no such review picture\n").into_response(),
    }
}

/// The server-sent events: the latest snapshot at once, then each new one; the stream
/// ends after the snapshot that says the match is over (`finished`).
async fn events(State(rx): State<Rx>) -> Sse<impl futures_util::Stream<Item = Result<SseEvent, Infallible>>> {
    let mut rx = rx.clone();
    rx.mark_changed();
    let stream = futures_util::stream::unfold((rx, false), |(mut rx, done)| async move {
        if done || rx.changed().await.is_err() {
            return None;
        }
        let p = rx.borrow_and_update().clone();
        let event = SseEvent::default().event(SSE_EVENT).data(p.json.as_str());
        Some((Ok(event), (rx, p.finished)))
    });
    Sse::new(stream).keep_alive(KeepAlive::default())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::CallMargin;
    use std::io::{Read, Write};

    fn throw(index: usize, margin_mm: f64) -> MatchEvent {
        let entry: crate::rules::Event = serde_json::from_str(r#"{"thrower":"red","frame":10,"time_s":1.0,"pieces":[{"piece":"red#1","call":"zone2"}]}"#).expect("event");
        let calls = vec![CallMargin { piece: "red#1".parse().expect("id"), call: "zone2".into(), margin_mm, review: false }];
        MatchEvent::Throw { index, entry: Box::new(entry), calls }
    }

    fn picture() -> ClosePicture {
        ClosePicture { piece: "red#1".into(), gap: "clears the 2-line by 2.0 mm".into(), verdict: "2 points".into(), png: b"\x89PNG-not-really".to_vec() }
    }

    fn get(addr: SocketAddr, path: &str) -> String {
        let mut s = std::net::TcpStream::connect(addr).expect("connect");
        write!(s, "GET {path} HTTP/1.0\r\nHost: x\r\n\r\n").expect("request");
        let mut out = Vec::new();
        s.read_to_end(&mut out).expect("response");
        String::from_utf8_lossy(&out).into_owned()
    }

    #[test]
    fn a_public_address_is_refused_unless_meant() {
        let addr: SocketAddr = "0.0.0.0:0".parse().expect("addr");
        assert!(matches!(Scoreboard::serve(addr, false), Err(ServeError::NotLoopback { .. })));
    }

    /// A close call gets one picture while it stands; a change past `REDRAW_MM` gets another;
    /// the server serves the latest snapshot and the pictures it names.
    #[test]
    fn close_calls_are_pictured_once_and_served() {
        let mut sb = Scoreboard::serve("127.0.0.1:0".parse().expect("addr"), false).expect("serve");
        let row = sb.record(&throw(0, 2.0));
        assert!(sb.link_pictures(row), "a new close call needs its picture");
        sb.add_reviews(row, vec![picture()]);
        let row = sb.record(&throw(1, 2.3));
        assert!(!sb.link_pictures(row), "the same call, 0.3 mm off: the same picture");
        let row = sb.record(&throw(2, 4.0));
        assert!(sb.link_pictures(row), "moved by 2 mm: a new picture");
        sb.add_reviews(row, vec![picture()]);
        let row = sb.record(&throw(3, 40.0));
        assert!(!sb.link_pictures(row), "not close: no picture");
        let links: Vec<Option<String>> = sb.snapshot().events.iter().map(|e| e.calls[0].picture.clone()).collect();
        assert_eq!(links, [Some("/review/0.png".into()), Some("/review/0.png".into()), Some("/review/1.png".into()), None]);
        assert_eq!(sb.snapshot().events[0].text, "event 0: red threw");
        // A resumed match's events, read back from the journal: calls without margins, never pictured.
        let log: crate::rules::EventLog = serde_json::from_str(r#"{"format":1,"rules":"knock-off","events":[{"thrower":"blue","frame":5,"pieces":[{"piece":"blue#1","call":"zone3"}]}]}"#).expect("log");
        sb.record_logged(&log);
        let row = sb.snapshot().events.len() - 1;
        assert!(!sb.link_pictures(row));
        let r = &sb.snapshot().events[row];
        assert_eq!((r.text.as_str(), r.calls[0].call.as_str(), r.calls[0].margin_mm), ("event 0: blue threw (from the journal)", "zone3", None));
        sb.finish();
        sb.publish();
        let state = get(sb.addr(), "/state.json");
        let body = state.split("\r\n\r\n").nth(1).expect("body");
        let v: serde_json::Value = serde_json::from_str(body).expect("json");
        assert_eq!((v["seq"].as_u64(), v["finished"].as_bool(), v["reviews"].as_array().map(Vec::len)), (Some(1), Some(true), Some(2)));
        assert!(get(sb.addr(), "/review/1.png").contains("PNG-not-really"));
        assert!(get(sb.addr(), "/review/2.png").starts_with("HTTP/1.0 404"));
        assert!(get(sb.addr(), "/review/x.png").starts_with("HTTP/1.0 404"));
        // The event stream: the latest snapshot, then the end (the match is over).
        let events = get(sb.addr(), "/events");
        assert!(events.contains("event: state\ndata: {\"seq\":1,"), "{events}");
    }
}
