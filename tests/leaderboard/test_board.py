"""The board and queue pages: hostile request text escaped, the live page of ``ratio serve`` and its form."""

from __future__ import annotations

import json

from tests.leaderboard.conftest import REQUESTS, RESULTS, USER

HOSTILE = '<script>alert("x")</script> **bold** | [link](javascript:alert(1))'


def _request(model: str, sha: str, **fields) -> dict:
    return {
        "schema": "ratio-leaderboard-request/1", "model": model, "revision": "main", "sha": sha,
        "setup": "generic", "prompts": {"query": "", "document": ""}, "precision": "float32",
        "submitter": "bob", "submitted_at": "2026-01-01T00:00:00Z", "status": "PENDING", "attempts": 0,
        **fields,
    }  # fmt: skip


def test_hostile_request_text_is_escaped_on_the_pages(board, tmp_path):
    sha = "a" * 40
    board.hub.state.commit(
        f"datasets/{REQUESTS}",
        "main",
        {
            f"org/m/{sha}_generic.json": json.dumps(
                _request("org/m", sha, status="FAILED", submitter=HOSTILE[:100], reason=HOSTILE)
            ).encode(),
            "evil/<img src=x onerror=alert(1)>.json": json.dumps(_request(HOSTILE, sha)).encode(),
        },
    )
    md, page = tmp_path / "board.md", tmp_path / "board.html"
    shown = board.ratio(
        "leaderboard", "--from", RESULTS, "--requests", REQUESTS, "--markdown", md, "--html", page
    )
    assert shown.code == 0, shown.err
    html, text = page.read_text(encoding="utf-8"), md.read_text(encoding="utf-8")
    assert "<script>alert" not in html and "<img src=x" not in html
    assert (
        "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;" in html
        and "&lt;img src=x onerror=alert(1)&gt;" in html
    )
    assert "field model: expected a Hub repository id" in html  # the hand-written request rejects itself only
    assert (
        "<script>" not in text
        and "<img" not in text
        and "**bold**" not in text
        and "](javascript" not in text
    )
    queue = [line for line in text.splitlines() if line.startswith("| FAILED")]
    assert len(queue) == 1 and queue[0].count(" | ") == 5  # the pipe in the text is no cell boundary


def test_the_live_board_serves_the_queue_and_takes_submissions_through_the_same_checks(hub_env, tiny_models):
    from tests.leaderboard.test_form import form_client, signed_form

    sha = hub_env.publish("org/tiny", tiny_models["good"])
    hub_env.publish("org/remote", tiny_models["remote-code"])
    client, _ = form_client()
    assert client.get("/", follow_redirects=False).headers["location"] == "/leaderboard"
    page = client.get("/leaderboard")
    assert page.status_code == 200 and "form-action 'self'" in page.headers["content-security-policy"]
    assert 'action="/leaderboard/submit"' in page.text and "PENDING" not in page.text

    form = signed_form(client, model="org/tiny", setup="none")
    queued = client.post("/leaderboard/submit", data=form)
    assert queued.status_code == 200 and f"org/tiny/{sha}_none.json" in queued.text
    (pr,) = hub_env.pull_requests()  # a pull request by the signed-in user (whoami of the pasted token)
    assert pr["author"] == USER and pr["files"] == [f"org/tiny/{sha}_none.json"]
    client, _ = form_client()  # a fresh server (its own rate limits): the queue's own checks still hold
    again = client.post("/leaderboard/submit", data=signed_form(client, model="org/tiny", setup="none"))
    assert again.status_code == 422 and "already proposed by you in pull request #1" in again.text
    assert hub_env.admit().code == 0
    assert hub_env.requests()[f"org/tiny/{sha}_none.json"]["submitter"] == USER
    client, _ = form_client()  # admitted: the queue on the page shows it
    assert "PENDING" in client.get("/leaderboard").text
    client, _ = form_client()
    refused = client.post("/leaderboard/submit", data=signed_form(client, model="org/remote", setup="none"))
    assert refused.status_code == 422 and "runs its own code" in refused.text
    assert client.post("/api/search", json={"text": "x"}).status_code in (404, 405)  # no index: no search
