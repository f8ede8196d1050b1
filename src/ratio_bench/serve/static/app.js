// Ratio inspiration search page. Every text from the index or the user is set with textContent, never parsed
// as HTML, so nothing in a candidate sentence can become markup.
"use strict";

const $ = (id) => document.getElementById(id);

function el(tag, text, cls) {
  const node = document.createElement(tag);
  if (text !== undefined && text !== null) node.textContent = text;
  if (cls) node.className = cls;
  return node;
}

function showError(message) {
  const box = $("error");
  box.textContent = message;
  box.hidden = !message;
}

function provenance(hit) {
  const parts = [hit.title, hit.venue, hit.date, hit.section].filter((p) => p);
  const line = el("div", null, "provenance");
  const paper = hit.url && hit.url.startsWith("https://") ? el("a", hit.paper_id) : el("span", hit.paper_id);
  if (paper.tagName === "A") {
    paper.href = hit.url;
    paper.rel = "noopener noreferrer";
    paper.target = "_blank";
  }
  line.append(paper);
  if (parts.length) line.append(el("span", " \u00b7 " + parts.join(" \u00b7 ")));
  return line;
}

// One column per move of the index, titled by the move and glossed as /api/health says (the relations are defined
// once, in ratio_bench.core.relations; the page hard-codes none).
function buildColumns(moves, glosses) {
  const section = $("results");
  section.replaceChildren();
  for (const move of moves) {
    const column = el("div", null, "column");
    column.dataset.move = move;
    column.append(el("h2", move.charAt(0).toUpperCase() + move.slice(1)), el("p", glosses[move] || "", "muted"), el("ol"));
    section.append(column);
  }
}

function render(results) {
  if (!document.querySelector(".column")) buildColumns(Object.keys(results), {});  // the health call failed
  for (const column of document.querySelectorAll(".column")) {
    const list = column.querySelector("ol");
    list.replaceChildren();
    const hits = results[column.dataset.move];
    column.hidden = hits === undefined;
    for (const hit of hits || []) {
      const item = el("li", null, "hit");
      item.dataset.rank = hit.rank;
      item.append(el("p", hit.text, "text"), provenance(hit), el("span", hit.score.toFixed(3), "score"));
      if (hit.role) item.append(el("span", "mined as " + hit.role.replace("_", " "), "role"));
      list.append(item);
    }
  }
}

async function search(event) {
  event.preventDefault();
  const text = $("query").value;
  if (!text.trim()) {
    render({});
    showError("Type a sentence to search for: the query is empty.");
    return;
  }
  showError("");
  linkTo(text);
  $("status").textContent = "Searching\u2026";
  try {
    const response = await fetch("/api/search", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ text: text, k: Number($("k").value) || 10, role_prior: $("role-prior").checked }),
    });
    const body = await response.json();
    if (!response.ok) {
      showError(body.error || "The search failed (" + response.status + ").");
      render({});
    } else {
      render(body.results);
      $("prior-note").textContent = body.role_prior
        ? "Role prior on: sentences this release mined as each move's gold come first."
        : "";
      $("prior-note").hidden = !body.role_prior;
    }
  } catch (err) {
    showError("The server did not answer: " + err);
  } finally {
    $("status").textContent = "";
  }
}

async function loadInfo() {
  try {
    const info = await (await fetch("/api/health")).json();
    const source = info.source.release
      ? "release " + info.source.release.name + " " + info.source.release.version + ", split " + info.source.release.split
      : "your papers";
    const models = Object.entries(info.models).map(([move, name]) => move + ": " + name).join(", ");
    $("index-info").textContent =
      info.candidates.toLocaleString() + " candidate sentences from " + source + " (" + models + "; " + info.search + " search)" +
      (info.titles ? "" : ". Paper titles are not in this index (ratio index --corpus-meta adds them).");
    $("index-notice").textContent = info.notice ? "Not move-aware: " + info.notice + "." : "";
    $("index-notice").hidden = !info.notice;
    buildColumns(info.moves, info.move_glosses || {});
    $("role-prior-control").hidden = !info.role_prior;
    $("query").maxLength = info.max_chars;
    $("k").max = info.max_k;
  } catch (err) {
    $("index-info").textContent = "The index information could not be loaded: " + err;
  }
}

// A shareable link: /?text=...&k=... fills the form and runs the search; each search puts its text in the
// address bar (history.replaceState, no reload), so the link of what is on the screen can be copied.
function fromLink() {
  const params = new URLSearchParams(window.location.search);
  const text = params.get("text");
  const k = Number(params.get("k"));
  if (Number.isInteger(k) && k >= 1) $("k").value = String(Math.min(k, Number($("k").max) || 100));
  if (text === null || !text.trim()) return;
  $("query").value = text.slice(0, $("query").maxLength > 0 ? $("query").maxLength : 2000);
  search(new Event("submit"));
}

function linkTo(text) {
  const params = new URLSearchParams({ text: text, k: $("k").value });
  window.history.replaceState(null, "", window.location.pathname + "?" + params.toString());
}

document.addEventListener("DOMContentLoaded", () => {
  $("search-form").addEventListener("submit", search);
  loadInfo().then(fromLink);  // the columns first, then a linked search
});
