"""The search page's shareable link: ``/?text=...&k=...`` fills the form and runs the search at once, and each
search writes its text into the address bar. The page's own script (as the app serves it) runs under Node with
the few DOM objects it touches, its ``fetch`` answered by the real API through FastAPI's TestClient."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest
from fastapi.testclient import TestClient

from ratio_bench.serve.app import create_app

NODE = shutil.which("node")
DRIVER = r"""
const fs = require("fs");
const [script, search, answer] = [fs.readFileSync(0, "utf8"), process.argv[1], JSON.parse(process.argv[2])];
const nodes = {};
const node = (id) => nodes[id] || (nodes[id] = {id, value: "", textContent: "", hidden: false, maxLength: 2000, dataset: {},
  max: "100", append() {}, replaceChildren() {}, addEventListener() {}, querySelector: () => node(id + "-ol")});
node("k").value = "10";
const listeners = {}, calls = [], urls = [];
global.document = {getElementById: node, createElement: () => node("x" + Math.random()), querySelector: node,
  querySelectorAll: () => ["address", "broaden", "specify"].map((m) => Object.assign(node(m), {dataset: {move: m}})),
  addEventListener: (name, f) => { listeners[name] = f; }};
global.window = {location: {search, pathname: "/"}, history: {replaceState: (s, t, url) => urls.push(url)}};
global.Event = class { constructor(type) { this.type = type; } preventDefault() {} };
global.fetch = async (url, options) => {
  calls.push({url, body: options && options.body ? JSON.parse(options.body) : null});
  const reply = url === "/api/search" ? answer.search : answer.health;
  return {ok: true, status: 200, json: async () => reply};
};
eval(script);
listeners.DOMContentLoaded();
setTimeout(() => console.log(JSON.stringify({calls, urls, query: node("query").value, k: node("k").value,
  error: node("error").textContent})), 50);
"""


def _run_page(script: str, search: str, answer: dict) -> dict:
    done = subprocess.run([NODE, "-e", DRIVER, search, json.dumps(answer)], input=script, capture_output=True,
                          text=True, timeout=60)  # fmt: skip
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.mark.skipif(NODE is None, reason="node is not installed")
def test_a_link_with_text_fills_the_form_and_searches(searcher):
    with TestClient(create_app(searcher)) as client:
        script = client.get("/static/app.js").text
        text = "graph networks collapse node features"
        answer = {
            "health": client.get("/api/health").json(),
            "search": client.post("/api/search", json={"text": text, "k": 3}).json(),
        }
    assert answer["search"]["results"]  # the real API's answer, which the page renders
    page = _run_page(script, "?text=graph+networks+collapse+node+features&k=3", answer)
    assert page["query"] == text and page["k"] == "3" and page["error"] == ""
    searches = [c for c in page["calls"] if c["url"] == "/api/search"]
    assert searches == [{"url": "/api/search", "body": {"text": text, "k": 3}}]  # run at once, no click
    assert page["urls"] == ["/?text=graph+networks+collapse+node+features&k=3"]  # the link of what is shown

    plain = _run_page(script, "", answer)  # no link: nothing is searched, nothing typed for the user
    assert plain["query"] == "" and not [c for c in plain["calls"] if c["url"] == "/api/search"]
    blank = _run_page(script, "?text=+++&k=-4", answer)
    assert blank["k"] == "10" and not [c for c in blank["calls"] if c["url"] == "/api/search"]
