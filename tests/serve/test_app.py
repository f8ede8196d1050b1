import json
import re
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from ratio_bench.core.relations import RELATION_SPECS
from ratio_bench.serve.app import MAX_BODY_BYTES, create_app
from ratio_bench.serve.search import MAX_QUERY_CHARS

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def client(searcher):
    with TestClient(create_app(searcher)) as c:
        yield c


def test_health(client):
    body = client.get("/api/health").json()
    assert body["status"] == "ok" and body["moves"] == ["address", "broaden", "specify"]
    assert body["move_glosses"] == {
        r.name: r.headline for r in RELATION_SPECS
    }  # the page's columns, from one place
    assert body["candidates"] == 8 and body["search"] == "exact" and body["max_chars"] == MAX_QUERY_CHARS
    assert body["models"] == {m: "bm25:unigram" for m in body["moves"]}
    assert body["move_aware"] is False and "topical, not move-specific" in body["notice"]


def test_search_answers_every_move_by_default(client):
    r = client.post("/api/search", json={"text": "outlier activation channels in quantised models", "k": 2})
    assert r.status_code == 200
    body = r.json()
    assert body["query"].startswith("outlier") and set(body["results"]) == {"address", "broaden", "specify"}
    hits = body["results"]["broaden"]
    assert [h["rank"] for h in hits] == [1, 2] and hits[0]["score"] >= hits[1]["score"]
    assert hits[0]["paper_id"] == "lab/notes-7" and hits[0]["url"] is None
    assert set(hits[0]) == {
        "rank",
        "score",
        "id",
        "text",
        "paper_id",
        "title",
        "date",
        "venue",
        "section",
        "role",
        "url",
    }
    assert hits[0]["role"] is None and body["role_prior"] is False  # own papers: no mined roles, no prior


def test_moves_subset_and_default_k(client):
    body = client.post("/api/search", json={"text": "graph networks oversmooth", "moves": ["address"]}).json()
    assert list(body["results"]) == ["address"] and len(body["results"]["address"]) == 8  # k=10, 8 candidates


@pytest.mark.parametrize(
    ("payload", "culprit"),
    [
        ({"text": ""}, "text is empty"),
        ({"text": "   "}, "text is empty"),
        ({"text": "x" * (MAX_QUERY_CHARS + 1)}, "text"),
        ({"text": "ok", "k": 0}, "k"),
        ({"text": "ok", "k": 101}, "k"),
        ({"text": "ok", "k": "ten"}, "k"),
        ({"text": "ok", "moves": ["expand"]}, "unknown move 'expand'"),
        ({"k": 3}, "text"),
        ({"text": "ok", "colour": "red"}, "colour"),
    ],
)
def test_client_errors_are_4xx_with_one_error_message(client, payload, culprit):
    r = client.post("/api/search", json=payload)
    assert r.status_code == 422
    assert list(r.json()) == ["error"] and culprit in r.json()["error"]


def test_malformed_json_and_unknown_routes_have_the_same_shape(client):
    r = client.post("/api/search", content=b"{not json", headers={"content-type": "application/json"})
    assert r.status_code == 422 and "error" in r.json()
    r = client.get("/api/nothing")
    assert r.status_code == 404 and r.json() == {"error": "Not Found"}
    assert client.get("/api/search").status_code == 405


def test_the_page_and_its_assets_are_served_by_the_app_alone(client):
    page = client.get("/")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    columns = '<section id="results" class="columns"></section>'  # filled from /api/health by the script
    assert columns in page.text
    assert not any(r.name in page.text.lower() for r in RELATION_SPECS)  # the page hard-codes no relation
    assets = re.findall(r'(?:src|href)="([^"]+)"', page.text)
    assert assets and all(a.startswith("/") for a in assets)  # nothing from another host
    for asset in assets:
        assert client.get(asset).status_code == 200, asset
    script = client.get("/static/app.js").text
    assert "innerHTML" not in script and "textContent" in script


def test_openapi_and_docs(client):
    spec = client.get("/openapi.json").json()
    assert {"/api/search", "/api/health"} <= set(spec["paths"])
    for page in ("/docs", "/redoc"):  # offline: the endpoints in plain HTML, nothing from a CDN
        answer = client.get(page)
        assert answer.status_code == 200 and "/api/search" in answer.text and "--docs-assets" in answer.text
        assert (
            "cdn" not in answer.text.lower() and "<script" not in answer.text and "https:" not in answer.text
        )


def test_docs_from_local_assets(searcher, tmp_path):
    for name in ("swagger-ui-bundle.js", "swagger-ui.css", "redoc.standalone.js"):
        (tmp_path / name).write_text("/* local */")
    with TestClient(create_app(searcher, docs_assets=tmp_path)) as c:
        assert "/docs-assets/swagger-ui-bundle.js" in c.get("/docs").text and "cdn" not in c.get("/docs").text
        assert "/docs-assets/redoc.standalone.js" in c.get("/redoc").text
        assert c.get("/docs-assets/swagger-ui.css").text == "/* local */"


def test_uvicorn_serves_concurrent_clients_the_same_answers(live_server):
    import asyncio

    import httpx

    async def ask_many() -> list[dict]:
        async with httpx.AsyncClient(base_url=live_server, timeout=30) as c:
            texts = ["graph networks oversmooth", "federated gradient leakage"] * 10
            replies = await asyncio.gather(*(c.post("/api/search", json={"text": t, "k": 3}) for t in texts))
        assert all(r.status_code == 200 for r in replies)
        return [r.json() for r in replies]

    bodies = asyncio.run(ask_many())
    assert all(b == bodies[i % 2] for i, b in enumerate(bodies))
    assert bodies[1]["results"]["address"][0]["paper_id"] == "iclr26/AbCdEfGh12"


def test_leaderboard_page_is_served_from_the_results_folder(searcher):
    results = REPO / "eval" / "results"
    with TestClient(create_app(searcher)) as c:
        missing = c.get("/leaderboard")  # only with a results folder, and the reply says how to get one
        assert missing.status_code == 404 and "--results DIR" in missing.json()["error"]
    with TestClient(create_app(searcher, results=results)) as c:
        page = c.get("/leaderboard")
    assert page.status_code == 200 and "default-src" in page.headers["content-security-policy"]
    entries = [p for p in results.glob("*.json")]
    assert entries and page.text.count("<tr") >= len(entries)
    assert "https://" not in page.text and "http://" not in page.text


def test_a_body_over_the_limit_is_refused_by_its_length(client):
    r = client.post(
        "/api/search",
        content=b'{"text": "' + b"x" * (4 * MAX_BODY_BYTES) + b'"}',
        headers={"content-type": "application/json"},
    )
    assert r.status_code == 413 and r.json() == {
        "error": "request body over 65,536 bytes; a search request is a few KiB"
    }
    assert (
        client.post("/api/search", json={"text": "x" * MAX_QUERY_CHARS}).status_code == 200
    )  # the largest query


def test_a_chunked_body_is_refused_while_it_is_read(searcher):
    import anyio
    import httpx

    chunk, sent = 4096, []

    async def endless():
        while len(sent) < 10_000:  # 40 MB, if it were all read
            sent.append(chunk)
            yield b" " * chunk

    async def post() -> httpx.Response:
        transport = httpx.ASGITransport(create_app(searcher))
        async with httpx.AsyncClient(transport=transport, base_url="http://ratio") as http:
            return await http.post(
                "/api/search", content=endless(), headers={"content-type": "application/json"}
            )

    r = anyio.run(post)
    assert r.request.headers["transfer-encoding"] == "chunked" and "content-length" not in r.request.headers
    assert r.status_code == 413 and "request body over" in r.json()["error"]
    assert sum(sent) <= MAX_BODY_BYTES + chunk  # refused at the chunk that passed the limit


def test_served_leaderboard_keeps_a_release_when_one_entry_forges_its_name(searcher, tmp_path):
    real = json.loads(sorted((REPO / "eval" / "results").glob("*.json"))[0].read_text())
    real.pop("judged", None)  # one table row per entry
    for i in range(16):
        (tmp_path / f"real-{i:02d}.json").write_text(json.dumps(real | {"model": f"m{i}"}))
    forged = real | {"model": "forged", "dataset": real["dataset"] | {"name": "renamed"}}
    (tmp_path / "000-forged.json").write_text(json.dumps(forged))
    with TestClient(create_app(searcher, results=tmp_path)) as c:
        page = c.get("/leaderboard").text
    assert page.count("<tr data-split=") == 2 * 16 and "000-forged.json" in page  # main and address boards
