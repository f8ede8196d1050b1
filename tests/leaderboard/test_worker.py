"""The worker's faults, for real: a model that cannot encode, a worker SIGKILLed mid-scoring, two workers racing."""

from __future__ import annotations

import json
import os
import signal
import threading
import time
from pathlib import Path

import pytest
from tests.leaderboard.conftest import REQUESTS, RESULTS

from ratio_bench.leaderboard.requests import now_utc, parse_time


def _entries(board) -> list[str]:
    return sorted(p for p in board.files(RESULTS) if p.endswith("/test.json"))


def _children(pid: int) -> list[int]:
    found = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    return [int(c) for c in found]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    stat = Path(f"/proc/{pid}/stat").read_text() if Path(f"/proc/{pid}/stat").exists() else ""
    return " Z " not in stat  # a zombie has ended


@pytest.mark.slow  # make test-all (make test stays near 10 minutes)
def test_a_model_that_fails_to_encode_is_failed_and_the_queue_goes_on(board, tiny_models, small_release):
    broken = board.publish("org/broken", tiny_models["encode-fails"])
    good = board.publish("org/tiny", tiny_models["good"])
    assert board.submit("org/broken").code == 0  # loads and passes every check: only encoding shows it
    assert board.submit("org/tiny").code == 0
    work = board.worker(small_release, "--once")
    assert work.code == 0, work.err
    requests = board.requests()
    failed = requests[f"org/broken/{broken}_generic.json"]
    assert failed["status"] == "FAILED" and failed["reason"].startswith("IndexError: index out of range")
    assert "\n" not in failed["reason"] and "Traceback" not in failed["reason"]
    assert requests[f"org/tiny/{good}_generic.json"]["status"] == "FINISHED"
    assert _entries(board) == [f"org/tiny/{good}/generic/test.json"]
    assert "org/broken" in work.err and "FAILED (IndexError" in work.err


@pytest.mark.slow  # ~25 s (waits out a lease); make test-all runs it
def test_a_worker_killed_mid_scoring_is_taken_over_after_its_lease(board, tiny_models, small_release):
    sha = board.publish("org/tiny", tiny_models["good"])
    assert board.submit("org/tiny").code == 0 and board.admit().code == 0
    path = f"org/tiny/{sha}_generic.json"
    board.hub.state.holds["model.safetensors"] = threading.Event()  # the job's download stays in flight
    first = board.start_worker(small_release, "--once", "--worker-id", "w1", "--lease", "15")
    try:
        board.wait_for(lambda: board.hub.state.waiting["model.safetensors"] > 0)
        (job,) = _children(first.pid)
        assert board.requests()[path]["status"] == "RUNNING"
        first.send_signal(signal.SIGKILL)
        first.wait(10)
    finally:
        board.hub.state.holds.pop("model.safetensors").set()
    board.wait_for(lambda: not _alive(job), timeout=10)  # the job died with its worker
    left = board.requests()[path]
    assert (left["status"], left["worker"], left["attempts"]) == ("RUNNING", "w1", 1) and _entries(
        board
    ) == []

    early = board.worker(small_release, "--once", "--worker-id", "w2")
    assert early.code == 0 and "0 request(s) handled" in early.err  # the lease still holds
    # the lease is on the Hub's clock, which it tells in whole seconds
    time.sleep(max(0.0, (parse_time(left["lease_expires"]) - now_utc()).total_seconds()) + 1.2)
    second = board.worker(small_release, "--once", "--worker-id", "w2")
    assert second.code == 0, second.err
    done = board.requests()[path]
    assert (done["status"], done["worker"], done["attempts"]) == ("FINISHED", "w2", 2)
    assert _entries(board) == [f"org/tiny/{sha}/generic/test.json"]
    provenance = json.loads(board.files(RESULTS)[f"org/tiny/{sha}/generic/provenance.json"])
    assert provenance["worker"] == "w2" and provenance["request"]["attempt"] == 2


@pytest.mark.slow  # ~11 s (two worker processes); make test-all runs it
def test_two_workers_racing_on_one_queue_score_every_request_once(board, tiny_models, small_release):
    sha = board.publish("org/a", tiny_models["good"])
    for setup in ("none", "generic"):
        assert board.submit("org/a", "--setup", setup).code == 0
    assert board.admit().code == 0
    oldest = next(p for p in board.requests() if p.endswith("_none.json"))
    board.hub.state.holds[oldest] = threading.Event()  # both read the queue at the same commit, then race
    workers = [board.start_worker(small_release, "--once", "--worker-id", w, home=w) for w in ("w1", "w2")]
    try:
        board.wait_for(lambda: board.hub.state.waiting[oldest] >= 2)
    finally:
        board.hub.state.holds.pop(oldest).set()
    logs = [w.communicate(timeout=120)[1] for w in workers]
    assert [w.returncode for w in workers] == [0, 0], logs
    assert board.hub.state.conflicts >= 1  # one claim was refused: its parent was no longer the head
    requests = board.requests()
    assert {r["status"] for r in requests.values()} == {"FINISHED"}
    assert all(r["attempts"] == 1 for r in requests.values())
    claimed = [line for log in logs for line in log.splitlines() if ": claimed by " in line]
    assert len(claimed) == 2, logs  # every request claimed once, by one worker or the other
    assert _entries(board) == [f"org/a/{sha}/generic/test.json", f"org/a/{sha}/none/test.json"]


def test_a_request_out_of_attempts_is_failed_not_claimed(board, small_release):
    sha = "b" * 40
    path = f"org/gone/{sha}_generic.json"
    request = {
        "schema": "ratio-leaderboard-request/1", "model": "org/gone", "revision": "main", "sha": sha,
        "setup": "generic", "prompts": {"query": "query: ", "document": "document: "}, "precision": "float32",
        "submitter": "bob", "submitted_at": "2000-01-01T00:00:00Z", "status": "RUNNING", "attempts": 3,
        "worker": "w9", "lease_expires": "2000-01-01T01:00:00Z", "started_at": "2000-01-01T00:00:00Z",
    }  # fmt: skip
    board.hub.state.commit(f"datasets/{REQUESTS}", "main", {path: json.dumps(request).encode()})
    work = board.worker(small_release, "--once")
    assert work.code == 0, work.err
    done = board.requests()[path]
    assert (done["status"], done["attempts"]) == ("FAILED", 3) and "no result after 3 attempts" in done[
        "reason"
    ]
    assert "claimed" not in work.err and _entries(board) == []
