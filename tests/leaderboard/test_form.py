"""The served submission form as a hostile page would try it: other origins, other Hosts, no CSRF token, frames,
floods, and a name typed instead of a signed-in user. The app runs in-process against the loopback Hub."""

from __future__ import annotations

import json
import re
import threading
import time
import urllib.request

import pytest
from fastapi.testclient import TestClient
from tests.leaderboard.conftest import REQUESTS, RESULTS, TOKEN

SITE = "testserver"  # TestClient's Host
ORIGIN = f"http://{SITE}"
BOB = "hf_bob_fixture_token_0123456789"


def form_client(limits=None) -> tuple[TestClient, object]:
    """(client, live board) of a server taking submissions, its address the TestClient's."""
    from ratio_bench.leaderboard.board import LiveBoard
    from ratio_bench.leaderboard.form import FormLimits
    from ratio_bench.leaderboard.hub import RepoRef
    from ratio_bench.serve.app import create_app
    from ratio_bench.serve.guard import SiteAddress

    live = LiveBoard(
        RepoRef.parse(RESULTS, "--from"),
        REQUESTS,
        refresh_s=3600,
        allow_submissions=True,
        limits=limits or FormLimits(),
    )
    app = create_app(None, live_board=live, site=SiteAddress(frozenset({SITE})))
    return TestClient(app, headers={"Origin": ORIGIN}), live


def signed_form(client: TestClient, token: str = TOKEN, **fields: str) -> dict[str, str]:
    """The form as the page gives it to this client (its CSRF token; the session cookie is in the client)."""
    page = client.get("/leaderboard")
    csrf = re.search(r'name="csrf" value="([0-9a-f]{64})"', page.text)
    assert csrf, "the page's form carries no CSRF token"
    return {"csrf": csrf.group(1), "token": token, "setup": "none", **fields}


def _queued(board) -> list[str]:
    """The request files proposed so far (each submission is a pull request on the requests repo)."""
    return sorted(f for pr in board.pull_requests() for f in pr["files"])


@pytest.mark.parametrize(
    "headers",
    [
        {"Origin": "http://evil.example"},
        {"Origin": "null"},  # a sandboxed frame or a data: page
        {"Origin": "http://testserver.evil.example"},
        {"Origin": "", "Referer": "http://evil.example/leaderboard"},
    ],
)
def test_a_post_from_another_origin_is_refused(hub_env, tiny_models, headers):
    hub_env.publish("org/tiny", tiny_models["good"])
    client, _ = form_client()
    form = signed_form(client, model="org/tiny")
    if headers.get("Origin") == "":
        client.headers.pop("Origin")
        headers = {k: v for k, v in headers.items() if k != "Origin"}
    refused = client.post("/leaderboard/submit", data=form, headers=headers)
    assert refused.status_code == 403 and "Origin" in refused.text
    assert _queued(hub_env) == []


def test_a_post_naming_no_page_is_refused_and_the_referer_of_our_page_is_enough(hub_env, tiny_models):
    sha = hub_env.publish("org/tiny", tiny_models["good"])
    client, _ = form_client()
    form = signed_form(client, model="org/tiny")
    client.headers.pop("Origin")
    assert client.post("/leaderboard/submit", data=form).status_code == 403  # neither Origin nor Referer
    ok = client.post("/leaderboard/submit", data=form, headers={"Referer": f"{ORIGIN}/leaderboard"})
    assert ok.status_code == 200 and _queued(hub_env) == [f"org/tiny/{sha}_none.json"]


@pytest.mark.parametrize("host", ["evil.example", "evil.example:8000", "127.0.0.1:8000", ""])
def test_a_request_for_another_host_is_refused(hub_env, tiny_models, host):
    """DNS rebinding: a page of evil.example whose name now resolves to this server reads and posts as if
    same-origin; its requests still say Host: evil.example."""
    hub_env.publish("org/tiny", tiny_models["good"])
    client, _ = form_client()
    form = signed_form(client, model="org/tiny")
    page = client.get("/leaderboard", headers={"Host": host})
    assert page.status_code == 421 and "csrf" not in page.text
    refused = client.post(
        "/leaderboard/submit", data=form, headers={"Host": host, "Origin": f"http://{host}"}
    )
    assert refused.status_code == 421 and _queued(hub_env) == []


def test_a_post_without_the_pages_token_is_refused(hub_env, tiny_models):
    hub_env.publish("org/tiny", tiny_models["good"])
    client, _ = form_client()
    form = signed_form(client, model="org/tiny")
    for bad in (
        {**form, "csrf": ""},
        {k: v for k, v in form.items() if k != "csrf"},
        {**form, "csrf": "0" * 64},
    ):
        refused = client.post("/leaderboard/submit", data=bad)
        assert refused.status_code == 403 and "token is missing or stale" in refused.text
    other, _ = form_client()  # another server's token (another key), and this token without its cookie
    assert other.post("/leaderboard/submit", data=signed_form(other) | form).status_code == 403
    client.cookies.clear()
    assert client.post("/leaderboard/submit", data=form).status_code == 403
    assert _queued(hub_env) == []


def test_the_session_cookie_is_http_only_and_same_site_strict(hub_env):
    client, _ = form_client()
    cookie = client.get("/leaderboard").headers["set-cookie"]
    assert "ratio_session=" in cookie and "HttpOnly" in cookie and "SameSite=strict" in cookie


def test_no_page_can_be_framed(hub_env):
    client, _ = form_client()
    responses = [
        client.get("/leaderboard"),
        client.get("/", follow_redirects=False),
        client.get("/api/health"),
        client.get("/docs"),
        client.get("/no-such-page"),
        client.post("/leaderboard/submit", data={}),
    ]
    for r in responses:
        assert "frame-ancestors 'none'" in r.headers["content-security-policy"], r.url
        assert r.headers["x-frame-options"] == "DENY"
    assert (
        "default-src 'none'" in responses[0].headers["content-security-policy"]
    )  # the page's own policy kept


def test_submissions_are_rate_limited_per_client(hub_env):
    client, _ = form_client()
    codes = [
        client.post("/leaderboard/submit", data=signed_form(client, token="x", model="org/tiny")).status_code
        for _ in range(7)
    ]
    assert codes[:5] == [422] * 5 and codes[5:] == [429, 429]  # bad tokens count too: no guessing at speed
    limited = client.post("/leaderboard/submit", data=signed_form(client, model="org/tiny"))
    assert "at most 5 submissions a minute from one address" in limited.text
    assert limited.headers["retry-after"] == "60"


def test_the_same_weights_again_and_again_are_refused_after_the_first(hub_env, tiny_models):
    """The same weights under three names, submitted in a burst: one is queued, the rest wait their turn."""
    from ratio_bench.leaderboard.form import FormLimits, Limit, SlidingWindow

    names = ["org/tiny", "org/tiny-copy", "org/tiny-again"]
    shas = [hub_env.publish(name, tiny_models["good"]) for name in names]
    roomy = FormLimits(per_client=SlidingWindow(Limit(100, 60, "submissions a minute from one address")))
    client, _ = form_client(roomy)
    results = [client.post("/leaderboard/submit", data=signed_form(client, model=n)) for n in names * 2]
    assert [r.status_code for r in results] == [200] + [429] * 5
    assert "at most 1 submission a minute per Hub user" in results[1].text
    assert _queued(hub_env) == [f"org/tiny/{shas[0]}_none.json"]


def test_the_submitter_is_the_signed_in_user_never_a_typed_name(hub_env, tiny_models, monkeypatch):
    """A typed name is ignored; no token, or a token the Hub does not accept, queues nothing; the request is
    written with the user's token, never the server's (HF_TOKEN of this process)."""
    import huggingface_hub

    sha = hub_env.publish("org/tiny", tiny_models["good"])
    hub_env.hub.state.add_user(BOB, "bob")
    used = []
    create_commit = huggingface_hub.HfApi.create_commit
    monkeypatch.setattr(
        huggingface_hub.HfApi,
        "create_commit",
        lambda self, *a, **k: used.append(self.token) or create_commit(self, *a, **k),
    )
    client, _ = form_client()
    for token in ("", "not a token"):
        form = signed_form(client, token=token, model="org/tiny", submitter="mallory")
        refused = client.post("/leaderboard/submit", data=form)
        assert refused.status_code == 422 and "Hub token" in refused.text
    form = signed_form(client, token=BOB, model="org/tiny", submitter="mallory")
    queued = client.post("/leaderboard/submit", data=form)
    assert queued.status_code == 200 and BOB not in queued.text
    (pr,) = hub_env.pull_requests()  # proposed as bob, with bob's token
    assert pr["author"] == "bob" and pr["files"] == [f"org/tiny/{sha}_none.json"]
    assert hub_env.admit().code == 0
    request = hub_env.requests()[f"org/tiny/{sha}_none.json"]
    assert request["submitter"] == "bob" and "mallory" not in str(request)
    assert used and set(used) == {BOB}
    assert 'name="submitter"' not in client.get("/leaderboard").text


def test_a_rejected_token_queues_nothing(hub_env, tiny_models):
    """A token the Hub does not know is answered 401 by the loopback Hub as by the real one (issue 43: it used
    to name any token ``dev-user``, so this test had to fake the refusal)."""
    hub_env.publish("org/tiny", tiny_models["good"])
    client, _ = form_client()
    refused = client.post("/leaderboard/submit", data=signed_form(client, token=BOB, model="org/tiny"))
    assert refused.status_code == 422 and "not accepted by" in refused.text and BOB not in refused.text
    assert _queued(hub_env) == []


def test_the_form_answers_only_its_own_address():
    from ratio_bench.core.errors import UsageError
    from ratio_bench.serve.guard import SiteAddress

    loopback = SiteAddress.for_bind("127.0.0.1", 8000)
    assert loopback.hosts == {"127.0.0.1:8000", "localhost:8000", "[::1]:8000"}
    assert SiteAddress.for_bind("::1", 9).hosts == {"127.0.0.1:9", "localhost:9", "[::1]:9"}
    assert SiteAddress.for_bind("10.0.0.5", 80, ["board.example.org"]).hosts == {
        "10.0.0.5:80",
        "board.example.org",
    }
    with pytest.raises(UsageError, match="--public-host"):
        SiteAddress.for_bind("0.0.0.0", 8000)
    with pytest.raises(UsageError, match="--public-host"):
        SiteAddress.for_bind("127.0.0.1", 8000, ["evil.example/path"])


def test_a_window_slides():
    from ratio_bench.leaderboard.form import Limit, RateLimited, SlidingWindow

    now = [0.0]
    window = SlidingWindow(Limit(2, 10.0, "tries"), clock=lambda: now[0])
    window.hit("a"), window.hit("a"), window.hit("b")
    with pytest.raises(RateLimited, match="try again in 10 s"):
        window.hit("a")
    now[0] = 10.5
    window.hit("a")  # the first two left the window


def _client_seen(config_of, headers: dict[str, str]) -> str:
    """The client address the app sees for one request through a real uvicorn server built by ``config_of``."""
    import uvicorn
    from starlette.applications import Starlette
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    from ratio_bench.serve.launch import listen

    async def who(request):  # what the form's per-client limit keys on: request.client.host
        return JSONResponse({"client": request.client.host if request.client else "unknown"})

    app = Starlette(routes=[Route("/who", who)])
    sock = listen("127.0.0.1", 0)
    server = uvicorn.Server(config_of(app))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        end = time.monotonic() + 20
        while not server.started:
            assert time.monotonic() < end, "uvicorn did not start"
            time.sleep(0.02)
        url = f"http://127.0.0.1:{sock.getsockname()[1]}/who"
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=10) as resp:
            return json.loads(resp.read())["client"]
    finally:
        server.should_exit = True
        thread.join(10)


def test_the_client_is_the_sockets_peer_unless_a_proxy_is_trusted():
    """The issue's case 4: uvicorn trusts X-Forwarded-For from loopback peers by default, so every client behind a
    pass-through proxy on the host could name a new address on each post and pass the per-client limit."""
    from ratio_bench.serve.launch import server_config

    forged = {"X-Forwarded-For": "203.0.113.9"}
    assert _client_seen(lambda app: server_config(app, "warning"), forged) == "127.0.0.1"
    trusting = lambda app: server_config(app, "warning", ["127.0.0.1"])  # noqa: E731 - --trust-proxy 127.0.0.1
    assert _client_seen(trusting, forged) == "203.0.113.9"
