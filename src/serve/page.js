// The scoreboard page's script: every update is a whole snapshot (docs/match.md,
// "The scoreboard page") received as a server-sent event `state` from /events; the page
// is redrawn from it. Text goes in with textContent only (names come from the command line).
"use strict";
(function () {
  const $ = (id) => document.getElementById(id);
  const conn = $("connection");
  let updates = 0;
  let finished = false;

  function el(tag, text, cls) {
    const e = document.createElement(tag);
    if (text !== undefined) e.textContent = text;
    if (cls) e.className = cls;
    return e;
  }

  function words(s) {
    return String(s).replace(/_/g, " ");
  }

  function margin(mm) {
    return (mm >= 0 ? "+" : "") + mm.toFixed(1) + " mm";
  }

  function showReview(link, info) {
    const d = $("review-dialog");
    $("review-title").textContent = "Review: " + info.piece;
    $("review-text").textContent = info.gap + " — " + info.verdict;
    const img = $("review-picture");
    img.src = info.url;
    img.alt = "Review picture of " + info.piece + ": " + info.gap;
    if (typeof d.showModal === "function") d.showModal(); else window.location = link.href;
  }

  function renderScores(s) {
    const body = document.querySelector("#scores tbody");
    body.replaceChildren();
    for (const sc of s.scores) {
      const tr = el("tr");
      tr.dataset.side = sc.side;
      if (s.winner === sc.side) tr.className = "winner";
      const th = el("th", sc.side);
      th.scope = "row";
      tr.append(th, el("td", String(sc.points), "points"));
      body.append(tr);
    }
  }

  function renderEvents(s) {
    const reviews = new Map(s.reviews.map((r) => [r.url, r]));
    const list = $("events");
    list.replaceChildren();
    for (const row of s.events.slice().reverse()) {
      const li = el("li", undefined, row.review ? "review" : "");
      li.dataset.kind = row.kind;
      const when = row.time_s === null ? "" : " (" + row.time_s.toFixed(1) + " s)";
      li.append(el("span", row.text + when));
      if (row.review) li.append(el("div", "For review: " + row.review));
      if (row.calls.length) {
        const calls = el("ul", undefined, "calls");
        for (const c of row.calls) {
          const m = c.margin_mm === null ? "" : " (" + margin(c.margin_mm) + ")";
          const item = el("li", c.piece + " " + words(c.call) + m, c.review ? "flagged" : "");
          if (c.picture) {
            const a = el("a", "review " + c.piece, "review-link");
            a.href = c.picture;
            const info = reviews.get(c.picture);
            a.addEventListener("click", (ev) => {
              if (!info) return;
              ev.preventDefault();
              showReview(a, info);
            });
            item.append(" ", a);
          }
          calls.append(item);
        }
        li.append(calls);
      }
      list.append(li);
    }
  }

  function render(s) {
    $("game").textContent = s.game + " on " + s.board;
    renderScores(s);
    $("round").textContent = String(s.round);
    $("up-next").textContent = s.up_next === null ? "–" : s.up_next + " (throw " + (s.throws_this_round + 1) + " of the round)";
    let status = words(s.status);
    if (s.winner) status += ": " + s.winner + " wins";
    $("status").textContent = status;
    const nr = $("needs-review");
    nr.hidden = s.needs_review === null;
    nr.textContent = s.needs_review === null ? "" : "Needs review: " + s.needs_review;
    const img = $("frame");
    if (s.frame) {
      if (img.getAttribute("src") !== s.frame.url) img.src = s.frame.url;
      img.hidden = false;
      $("frame-caption").textContent = "Frame " + s.frame.frame + " (" + s.frame.time_s.toFixed(1) + " s)";
    }
    renderEvents(s);
  }

  const source = new EventSource("/events");
  source.addEventListener("state", (e) => {
    let s;
    try {
      s = JSON.parse(e.data);
    } catch (err) {
      return;
    }
    updates += 1;
    conn.dataset.updates = String(updates);
    conn.dataset.seq = String(s.seq);
    render(s);
    if (s.finished) {
      finished = true;
      source.close();
      conn.textContent = "match over (" + updates + " updates received)";
    } else {
      conn.textContent = "live (" + updates + " updates received)";
    }
  });
  source.addEventListener("error", () => {
    if (!finished) conn.textContent = "connection lost: reconnecting…";
  });
})();
