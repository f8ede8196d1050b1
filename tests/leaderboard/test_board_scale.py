"""A board that scales: the served page rendered once per change of its inputs, a results repository read in one
parallel download (with the same entries as the old one-download-per-file path), and the download's caps."""

from __future__ import annotations

import hashlib
import json
import threading
import time

import pytest
from fastapi.testclient import TestClient
from tests.helpers.entries import ranked_entry
from tests.helpers.results_repo import self_reported, worker_folder
from tests.leaderboard.conftest import REQUESTS, RESULTS

from ratio_bench.evaluation.board.page_cache import PageCache


def test_one_render_per_key_even_for_concurrent_requests():
    cache, key, started = PageCache(check_s=0), ["a"], threading.Event()

    def render():
        started.set()
        time.sleep(0.2)
        return f"page {key[0]}"

    pages = []
    threads = [
        threading.Thread(target=lambda: pages.append(cache.page(lambda: key[0], render))) for _ in range(4)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert pages == ["page a"] * 4 and cache.renders == 1  # three waited for the one render
    assert cache.page(lambda: key[0], render) == "page a" and cache.renders == 1
    key[0] = "b"
    assert cache.page(lambda: key[0], render) == "page b" and cache.renders == 2
    cache.invalidate()
    assert cache.page(lambda: key[0], render) == "page b" and cache.renders == 3


def test_the_key_is_looked_up_at_most_every_check_s():
    looked = []
    cache = PageCache(check_s=3600)
    for _ in range(5):
        cache.page(lambda: looked.append(1) or "k", lambda: "page")
    assert len(looked) == 1 and cache.renders == 1


def test_the_results_folder_page_is_rendered_again_only_when_a_file_changes(tmp_path, monkeypatch):
    from ratio_bench.serve import app as app_module
    from ratio_bench.serve.app import create_app

    (tmp_path / "a.json").write_text(
        json.dumps(ranked_entry("model-a", {"address": [1, 2]})), encoding="utf-8"
    )
    renders = []
    real = app_module.leaderboard_html  # the renderer the app calls
    monkeypatch.setattr(app_module, "leaderboard_html", lambda *a, **k: renders.append(1) or real(*a, **k))
    with TestClient(create_app(None, results=tmp_path)) as c:
        first, second = c.get("/leaderboard").text, c.get("/leaderboard").text
        assert first == second and "model-a" in first and len(renders) == 1
        (tmp_path / "b.json").write_text(
            json.dumps(ranked_entry("model-b", {"address": [2, 1]})), encoding="utf-8"
        )
        time.sleep(1.05)  # the folder is looked at again after a second
        assert "model-b" in c.get("/leaderboard").text and len(renders) == 2


def _repo(board):
    files = worker_folder(board.key, "org/m", "generic", {"test": {"address": [1, 2, 3]}}) | self_reported()
    files["org/m/runs/test/run.json"] = b"{}"  # saved runs stay on the Hub
    files["big/entry.json"] = b" " * 1_000_001  # over the entry cap: listed, rejected, never downloaded
    board.hub.state.commit(f"datasets/{RESULTS}", "main", files)


def test_a_repo_read_in_one_download_gives_the_boards_entries_of_the_per_file_read(hub_env):
    from ratio_bench.leaderboard import hub
    from ratio_bench.leaderboard.board import RepoReader, load_board_from_repo

    _repo(hub_env)
    ref = hub.RepoRef(RESULTS, None, "--from")
    bulk, one_by_one = load_board_from_repo(ref, REQUESTS), load_board_from_repo(ref, REQUESTS, bulk=False)
    assert [(e.model, e.provenance) for r in bulk.releases for e in r.entries] == [
        (e.model, e.provenance) for r in one_by_one.releases for e in r.entries
    ]
    assert bulk.rejected == one_by_one.rejected and "big/entry.json" in [r.source for r in bulk.rejected]
    assert [e.model for r in bulk.releases for e in r.entries] == ["my model"]
    local = RepoReader.open(ref, None).local
    got = sorted(p.relative_to(local).as_posix() for p in local.rglob("*") if p.is_file())
    assert "org/m/runs/test/run.json" not in got and "big/entry.json" not in got
    assert "hand/entry.json" in got and "trusted_workers.json" in got


def test_a_repo_over_the_download_cap_is_refused_in_one_line(hub_env, monkeypatch):
    from ratio_bench.leaderboard import hub
    from ratio_bench.leaderboard.board import load_board_from_repo

    _repo(hub_env)
    monkeypatch.setattr(hub, "MAX_BULK_BYTES", 1000)
    with pytest.raises(hub.LeaderboardError, match="bytes to read, over the 1,000-byte limit"):
        load_board_from_repo(hub.RepoRef(RESULTS, None, "--from"))


def test_the_live_board_renders_again_only_when_a_head_moves(hub_env):
    from ratio_bench.leaderboard.board import LiveBoard
    from ratio_bench.leaderboard.hub import RepoRef

    live = LiveBoard(RepoRef.parse(RESULTS, "--from"), REQUESTS, refresh_s=3600, check_s=0)
    first = live.page()
    assert live.page() == first and live.cache.renders == 1
    hub_env.hub.state.commit(f"datasets/{RESULTS}", "main", self_reported("new model"))
    assert "new model" in live.page() and live.cache.renders == 2


def test_an_entry_checked_once_is_not_checked_again_but_a_bad_one_always_is():
    from ratio_bench.evaluation.scoring.results import SubmissionError
    from ratio_bench.leaderboard.board import parse_checked

    good = json.dumps(ranked_entry("m", {"address": [1, 3]})).encode()
    from ratio_bench.evaluation.entry.record import Entry

    assert parse_checked(good) is parse_checked(good)  # the record checked once, shared (it is frozen)
    assert parse_checked(good) == Entry.from_json(json.loads(good))
    bad = json.dumps(ranked_entry("m", {"address": [1]}) | {"n_queries": {"address": 0}}).encode()
    for _ in range(2):
        with pytest.raises(SubmissionError):
            parse_checked(bad)


def _measured(model: str, hardware: str) -> dict[str, bytes]:
    from ratio_bench.evaluation.entry.model_meta import ModelMeta

    meta = ModelMeta(hardware=hardware, throughput_texts_per_s=10.0).to_json()
    fingerprint = hashlib.sha256(model.encode()).hexdigest()
    entry = ranked_entry(model, {"address": [1, 2]}, model_fingerprint=fingerprint, model_meta=meta)
    return {f"hand/{model}.json": json.dumps(entry).encode()}


def test_the_served_board_keeps_one_hardware_class_and_refuses_an_unknown_one(hub_env):
    from ratio_bench.leaderboard.board import LiveBoard
    from ratio_bench.leaderboard.hub import RepoRef
    from ratio_bench.serve.app import create_app

    files = _measured("cpu-model", "cpu-2core-x86_64") | _measured("gpu-model", "NVIDIA H100")
    hub_env.hub.state.commit(f"datasets/{RESULTS}", "main", files)
    live = LiveBoard(RepoRef.parse(RESULTS, "--from"), REQUESTS, refresh_s=3600, check_s=0)
    with TestClient(create_app(None, live_board=live)) as c:
        whole = c.get("/leaderboard").text
        assert "cpu-model" in whole and "gpu-model" in whole and "Model and cost" not in whole
        assert '<a href="?hardware=NVIDIA%20H100">NVIDIA H100</a>' in whole
        gpu = c.get("/leaderboard", params={"hardware": "NVIDIA H100"})
        assert gpu.status_code == 200 and "gpu-model" in gpu.text and "cpu-model" not in gpu.text
        assert "<strong>NVIDIA H100</strong>" in gpu.text
        assert c.get("/leaderboard", params={"hardware": "NVIDIA H100"}).text == gpu.text
        bad = c.get("/leaderboard", params={"hardware": "<TPU>"})
        assert bad.status_code == 400 and "no entry was measured on it" in bad.json()["error"]
        assert "\n" not in bad.json()["error"] and set(live._pages) == {"NVIDIA H100"}


def test_the_queue_is_read_in_one_download_not_one_per_request(hub_env, monkeypatch):
    from tests.helpers.results_repo import publish

    from ratio_bench.leaderboard import hub
    from ratio_bench.leaderboard.board import load_board_from_repo

    for i in range(3):
        publish(
            hub_env,
            RESULTS,
            worker_folder(hub_env.key, f"org/m{i}", "generic", {"test": {"address": [1, 2]}}),
        )
    single, bulk = [], []
    real_small, real_files = hub.read_small, hub.download_files
    monkeypatch.setattr(hub, "read_small", lambda *a, **k: single.append(a[-1]) or real_small(*a, **k))
    monkeypatch.setattr(hub, "download_files", lambda *a, **k: bulk.append(a[0]) or real_files(*a, **k))
    board = load_board_from_repo(hub.RepoRef(RESULTS, None, "--from"), REQUESTS)
    assert [e.provenance.status for r in board.releases for e in r.entries] == ["verified"] * 3
    assert REQUESTS in bulk and not [p for p in single if p.endswith(".json") and "/" in p]
