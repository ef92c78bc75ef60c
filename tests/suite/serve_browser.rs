//! The live scoreboard page (`boardcall match --serve`) in a real browser: a rendered
//! Knock Off round (one close call on the deuce line) is replayed at its frame rate
//! while headless Chromium loads the page; the page, which holds no score of its own,
//! is filled by the server-sent events as the game goes on, and when the game is over
//! its DOM shows each side's final score, the winner, and the close call's review link.
//! Chromium is Debian's `chromium` package (`scripts/setup.sh` installs it): its absence
//! fails the test, it is never skipped.

use crate::common;
use crate::games;

use boardcall::render::video::{render_game, GameScript, Step};
use boardcall::rules::{play, EventLog, GameConfig, Rules, Status};
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

const CHROMIUM: &str = "/usr/bin/chromium";

/// The replay's frame rate: slow enough that the browser, started with the match, is on
/// the page well before the game ends (about 25 s of video), so it sees the game go on.
/// (At 5 fps, 15 s of video, a fresh clone's run once saw headless Chromium reach the page
/// only after the game was over, the machine busy: one update.)
const REPLAY_FPS: f64 = 3.0;

/// The deuce line (mm from the target end) and the close call's margin past it (mm): a
/// call within `serve::CLOSE_CALL_MM` gets a review picture; 3 mm is far above the
/// measurement's error at 640x480 (about a millimetre), so the call itself is sure.
const DEUCE_LINE_MM: f64 = 304.8;
const CLOSE_MARGIN_MM: f64 = 3.0;

/// One Knock Off round from blue 13 (target 15): blue's weight in the 3 wins it. Red's
/// second weight stops `CLOSE_MARGIN_MM` past the deuce line: the close call.
fn script() -> GameScript {
    let mut s = games::knock_off();
    let radius = boardcall::board::Board::load("shuffleboard-22ft").expect("board").piece().radius_mm;
    s.steps.truncate(8);
    for step in &mut s.steps {
        if let Step::Throw { piece, .. } = step {
            if piece.id.to_string() == "red#2" {
                piece.y_mm = DEUCE_LINE_MM - radius - CLOSE_MARGIN_MM;
            }
        }
    }
    s.header.start_scores = [("red".to_string(), 9), ("blue".to_string(), 13)].into_iter().collect();
    s
}

fn chromium() -> &'static str {
    assert!(
        Path::new(CHROMIUM).exists(),
        "this test drives headless Chromium at {CHROMIUM}, which is missing: run `bash scripts/setup.sh` \
         (it installs Debian's `chromium` package) or `apt-get install chromium`"
    );
    CHROMIUM
}

/// A plain HTTP/1.0 GET (the server closes the connection after the response): status line and body.
fn get(addr: &str, path: &str) -> (String, Vec<u8>) {
    let mut s = std::net::TcpStream::connect(addr).expect("connect to the scoreboard");
    s.set_read_timeout(Some(Duration::from_secs(20))).expect("timeout");
    write!(s, "GET {path} HTTP/1.0\r\nHost: {addr}\r\n\r\n").expect("request");
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).expect("response");
    let split = raw.windows(4).position(|w| w == b"\r\n\r\n").expect("headers end");
    let head = String::from_utf8_lossy(&raw[..split]).to_string();
    (head.lines().next().unwrap_or_default().to_string(), raw[split + 4..].to_vec())
}

/// Kills a child process when dropped (the match lingers; a failed assertion must not leave it).
struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Runs headless Chromium on `url` and returns the DOM it dumps. `--virtual-time-budget`
/// makes it wait while the page's requests are open: the event stream stays open until
/// the match is over, so the DOM is dumped after the last update.
fn dump_dom(url: &str, profile: &Path) -> String {
    let child = Command::new(chromium())
        .args(["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--virtual-time-budget=5000", "--dump-dom"])
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg(url)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start chromium");
    let mut child = Killed(child);
    let mut out = child.0.stdout.take().expect("stdout");
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut dom = String::new();
        let _ = out.read_to_string(&mut dom);
        let _ = tx.send(dom);
    });
    rx.recv_timeout(Duration::from_secs(120)).expect("chromium dumped no DOM within 120 s")
}

/// The `<tr data-side=SIDE ...>...</tr>` row of the scores table in a DOM dump.
fn score_row<'a>(dom: &'a str, side: &str) -> &'a str {
    let at = dom.find(&format!("<tr data-side=\"{side}\"")).unwrap_or_else(|| panic!("no score row for {side} in the page:\n{dom}"));
    let end = dom[at..].find("</tr>").expect("row end");
    &dom[at..at + end]
}

#[test]
fn the_scoreboard_page_follows_a_game_live_in_a_browser() {
    chromium();
    let threads = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
    let s = script();
    let mut v = render_game(&s, threads).expect("render");
    let truth: EventLog = v.truth.clone();
    let board = boardcall::board::Board::load("shuffleboard-22ft").expect("board");
    let want = play(&GameConfig::new(Rules::KnockOff), &board, &truth).expect("the script is a game");
    assert_eq!((want.status, want.rounds.len()), (Status::Won, 1), "the script is one round that ends the game");

    let dir = common::scratch("serve_browser", "game");
    let (video, camera, pose, journal) = (dir.join("game.avi"), dir.join("camera.yaml"), dir.join("pose.yaml"), dir.join("game.jsonl"));
    v.fps = REPLAY_FPS;
    v.write_avi(&video).expect("video");
    v.camera.save(&camera, &[]).expect("camera file");
    v.pose.save(&pose, &[]).expect("pose file");

    let started = Instant::now();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_boardcall"));
    cmd.arg("match").arg(&video).arg("--camera").arg(&camera).arg("--pose").arg(&pose).arg("--trust-pose");
    cmd.args(["--board", "shuffleboard-22ft", "--game", "knock-off", "--first", "red", "--start-score", "red=9", "--start-score", "blue=13"]);
    cmd.arg("--journal").arg(&journal);
    cmd.args(["--serve", "127.0.0.1:0", "--serve-linger", "300", "--realtime"]);
    let child = cmd.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().expect("start boardcall match");
    let mut m = Killed(child);

    // The bound address, from stderr; the rest of stderr and stdout collected as they come.
    let (addr_tx, addr_rx) = mpsc::channel::<String>();
    let stderr = m.0.stderr.take().expect("stderr");
    let err_log = std::thread::spawn(move || {
        let mut all = String::new();
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if let Some(url) = line.strip_prefix("boardcall: scoreboard at http://") {
                let _ = addr_tx.send(url.trim_end_matches('/').to_string());
            }
            all.push_str(&line);
            all.push('\n');
        }
        all
    });
    let stdout = m.0.stdout.take().expect("stdout");
    let (line_tx, line_rx) = mpsc::channel::<String>();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            let _ = line_tx.send(line);
        }
    });
    let addr = match addr_rx.recv_timeout(Duration::from_secs(60)) {
        Ok(a) => a,
        Err(_) => {
            drop(m);
            panic!("boardcall printed no scoreboard address; stderr:\n{}", err_log.join().unwrap_or_default());
        }
    };

    // The page itself holds no score: what the browser shows comes from the events.
    let (status, html) = get(&addr, "/");
    assert!(status.contains("200"), "GET /: {status}");
    let html = String::from_utf8_lossy(&html).to_string();
    assert!(html.contains("<tbody></tbody>") && html.contains("/page.js"), "the page as served:\n{html}");
    let (status, _) = get(&addr, "/review/99.png");
    assert!(status.contains("404"), "GET /review/99.png: {status}");

    // The browser loads the page while the game is played, and stays until it is over.
    let profile = dir.join("chromium-profile");
    let dom = dump_dom(&format!("http://{addr}/"), &profile);
    let elapsed = started.elapsed();
    let lines: Vec<String> = line_rx.try_iter().collect();
    assert!(lines.iter().any(|l| l.contains("\"event\":\"game_over\"")), "the match ended the game; stdout:\n{}", lines.join("\n"));

    // Updated live: several snapshots arrived over the event stream, the last says it is over.
    let updates: u64 = dom
        .split("data-updates=\"")
        .nth(1)
        .and_then(|r| r.split('"').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no update count in the page:\n{dom}"));
    assert!(updates >= 2, "the page saw the game go on ({updates} updates; browser done after {elapsed:?}):\n{dom}");
    assert!(dom.contains("match over"), "the page knows the match is over:\n{dom}");
    // The right final score per side, as text.
    for (side, points) in &want.scores.0 {
        let row = score_row(&dom, side);
        assert!(row.contains(&format!("<th scope=\"row\">{side}</th>")) && row.contains(&format!("<td class=\"points\">{points}</td>")), "{side} {points}: {row}");
    }
    let winner = want.winner.clone().expect("a winner");
    assert!(score_row(&dom, &winner).contains("class=\"winner\""), "the winner marked");
    assert!(dom.contains(&format!("won: {winner} wins")), "the status in words:\n{dom}");
    // The close call's review picture, linked from its call.
    assert!(dom.contains("href=\"/review/0.png\"") && dom.contains("review red#2"), "the close call's review link:\n{dom}");
    assert!(dom.contains("/frame.jpg?v="), "the last settled state's picture:\n{dom}");

    // What the links point to.
    let (status, png) = get(&addr, "/review/0.png");
    assert!(status.contains("200") && png.starts_with(b"\x89PNG"), "GET /review/0.png: {status}");
    let (status, jpeg) = get(&addr, "/frame.jpg");
    assert!(status.contains("200") && jpeg.starts_with(&[0xFF, 0xD8]), "GET /frame.jpg: {status}");
    let (_, json) = get(&addr, "/state.json");
    let state: serde_json::Value = serde_json::from_slice(&json).expect("state.json");
    assert_eq!(state["finished"], true);
    assert_eq!(state["status"], "won");
    // One picture for the close call: the events after it, red#2 unmoved, link the same one.
    let reviews = state["reviews"].as_array().expect("reviews");
    assert_eq!((reviews.len(), &reviews[0]["piece"]), (1, &serde_json::json!("red#2")), "{reviews:?}");
    let links: Vec<&serde_json::Value> =
        state["events"].as_array().expect("events").iter().flat_map(|e| e["calls"].as_array().into_iter().flatten()).filter(|c| c["piece"] == "red#2").map(|c| &c["picture"]).collect();
    assert!(links.len() >= 2 && links.iter().all(|l| *l == "/review/0.png"), "{links:?}");
    let scores: Vec<(String, i64)> =
        state["scores"].as_array().expect("scores").iter().map(|s| (s["side"].as_str().unwrap_or("").to_string(), s["points"].as_i64().unwrap_or(-1))).collect();
    assert_eq!(scores, want.scores.0);

    // What a person sees: a screenshot of the finished page (kept in Cargo's test folder to look at).
    let shot = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("serve_browser-page.png");
    let _ = std::fs::remove_file(&shot);
    let status = Command::new(chromium())
        .args(["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--virtual-time-budget=5000", "--window-size=1280,1400"])
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg(format!("--screenshot={}", shot.display()))
        .arg(format!("http://{addr}/"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .expect("chromium screenshot");
    assert!(status.success(), "chromium --screenshot: {status}");
    let img = image::open(&shot).expect("the screenshot is a picture");
    assert_eq!((img.width(), img.height()), (1280, 1400));
}

/// An address off the loopback is refused unless meant (`--serve-public`), before anything is written.
#[test]
fn a_public_address_must_be_asked_for() {
    let dir = common::scratch("serve_browser", "public");
    let journal: PathBuf = dir.join("j.jsonl");
    let out = Command::new(env!("CARGO_BIN_EXE_boardcall"))
        .arg("match")
        .arg(dir.join("none.avi"))
        .arg("--camera")
        .arg(dir.join("none.yaml"))
        .args(["--board", "yocu-4", "--game", "yocu-4", "--serve", "0.0.0.0:0", "--journal"])
        .arg(&journal)
        .output()
        .expect("run boardcall");
    assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--serve-public"));
    assert!(!journal.exists(), "nothing written");
}
