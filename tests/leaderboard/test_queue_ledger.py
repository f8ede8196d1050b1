"""The queue as the maintainers' ledger (issue 35): submitters open pull requests, admission re-checks them, and
order, leases and trust come from the Hub's commit history and clock, never from fields a submitter wrote or
from a worker's clock. In process against the loopback Hub (fast); the CLI flow is in test_flow.py."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from huggingface_hub import CommitOperationAdd
from tests.leaderboard.conftest import KEEPER, KEEPER_TOKEN, REQUESTS, TOKEN, USER

from ratio_bench.leaderboard import requests as requests_mod
from ratio_bench.leaderboard import worker as worker_mod
from ratio_bench.leaderboard.admission import admit
from ratio_bench.leaderboard.hub import LeaderboardError
from ratio_bench.leaderboard.ledger import hub_time
from ratio_bench.leaderboard.requests import now_utc, read_queue, stamp
from ratio_bench.leaderboard.submit import MAX_PARAMETERS, submit
from ratio_bench.leaderboard.worker import claim

MALLORY_TOKEN, MALLORY = "hf_mallory_token", "mallory"


def _doc(model: str, sha: str, **fields) -> dict:
    return {
        "schema": "ratio-leaderboard-request/1", "model": model, "revision": "main", "sha": sha,
        "setup": "generic", "prompts": {"query": "query: ", "document": "document: "}, "precision": "float32",
        "submitter": USER, "submitted_at": stamp(now_utc()), "status": "PENDING", "attempts": 0,
        **fields,
    }  # fmt: skip


def _path(model: str, sha: str, setup: str = "generic") -> str:
    return f"{model}/{sha}_{setup}.json"


def _as(monkeypatch, token: str) -> None:
    monkeypatch.setenv("HF_TOKEN", token)


@pytest.fixture
def ledger_board(hub_env):
    """The board with a policy: keeper is the maintainer and the worker; mallory has a token and nothing else."""
    hub_env.hub.state.add_user(MALLORY_TOKEN, MALLORY)
    hub_env.set_policy(maintainers=[KEEPER], workers=[KEEPER])
    return hub_env


def _pr(board, token: str, files: dict[str, bytes], title: str = "Submit") -> int:
    info = board.api(token).create_commit(
        REQUESTS,
        [CommitOperationAdd(p, d) for p, d in files.items()],
        commit_message=title,
        repo_type="dataset",
        create_pr=True,
    )
    return info.pr_num


def _admit():
    return admit(REQUESTS, MAX_PARAMETERS, lambda line: None)


def _claim(log=None):
    return claim(REQUESTS, "w2", 3600, log or (lambda line: None))


def test_submitted_at_1970_does_not_jump_the_queue(ledger_board, monkeypatch):
    first, late = "a" * 40, "b" * 40
    ledger_board.keeper_commit({_path("org/first", first): json.dumps(_doc("org/first", first)).encode()})
    forged = _doc("org/late", late, submitted_at="1970-01-01T00:00:00Z")
    ledger_board.keeper_commit({_path("org/late", late): json.dumps(forged).encode()})  # admitted later
    _as(monkeypatch, KEEPER_TOKEN)
    claimed = _claim()
    assert claimed is not None and claimed.model == "org/first"  # the Hub's admission order, not the field


def test_a_pull_request_of_1000_requests_is_refused_whole(ledger_board, monkeypatch):
    files = {
        _path(f"org/m{i}", f"{i:040x}"): json.dumps(_doc(f"org/m{i}", f"{i:040x}")).encode()
        for i in range(1000)
    }
    num = _pr(ledger_board, TOKEN, files)
    _as(monkeypatch, KEEPER_TOKEN)
    (verdict,) = _admit()
    assert (verdict.num, verdict.admitted) == (num, False)
    assert "exactly one request file; this one changes 1,000 files" in verdict.reason
    (pr,) = ledger_board.pull_requests()
    assert pr["status"] == "closed" and pr["comments"][-1].startswith(
        "Refused: a pull request adds exactly one"
    )
    assert ledger_board.requests() == {} and _claim() is None  # no worker time spent on any of them


def test_a_non_maintainer_cannot_push_to_the_queue(ledger_board):
    from huggingface_hub.errors import HfHubHTTPError

    with pytest.raises(HfHubHTTPError) as refused:
        ledger_board.api(MALLORY_TOKEN).upload_file(
            path_or_fileobj=b"{}", path_in_repo="org/x/y.json", repo_id=REQUESTS, repo_type="dataset"
        )
    assert refused.value.response.status_code == 403 and ledger_board.requests() == {}


def test_running_until_2999_by_a_non_worker_has_no_effect(ledger_board, monkeypatch):
    sha = "c" * 40
    path = _path("org/victim", sha)
    ledger_board.keeper_commit({path: json.dumps(_doc("org/victim", sha)).encode()})  # admitted, PENDING
    frozen = _doc("org/victim", sha, status="RUNNING", attempts=1, worker="mallory-box",
                  lease_expires="2999-01-01T00:00:00Z", started_at="2026-01-01T00:00:00Z")  # fmt: skip
    ledger_board.keeper_commit(
        {path: json.dumps(frozen).encode()}, author=MALLORY
    )  # a collaborator, unlisted
    _as(monkeypatch, KEEPER_TOKEN)
    queue = read_queue(REQUESTS)
    assert queue.find(path).status == "PENDING"  # the last version a maintainer or worker wrote
    claimed = _claim()
    assert claimed is not None and claimed.path == path and claimed.attempts == 1
    # the same rewrite as a pull request: admission refuses it
    num = _pr(ledger_board, MALLORY_TOKEN, {path: json.dumps(frozen).encode()})
    (verdict,) = _admit()
    assert verdict.num == num and not verdict.admitted and "already RUNNING in the queue" in verdict.reason


def test_a_planted_running_request_does_not_block_the_owners_submission(
    ledger_board, tiny_models, monkeypatch
):
    sha = ledger_board.publish("org/tiny", tiny_models["good"])
    path = _path("org/tiny", sha)
    planted = _doc("org/tiny", sha, status="RUNNING", attempts=1, worker="x", lease_expires="2999-01-01T00:00:00Z",
                   submitter=MALLORY)  # fmt: skip
    ledger_board.keeper_commit({path: json.dumps(planted).encode()}, author=MALLORY)
    sub = submit("org/tiny", None, "generic", REQUESTS)  # as alice: not "already RUNNING"
    assert sub.path == path and sub.request.submitter == USER
    _as(monkeypatch, KEEPER_TOKEN)
    (verdict,) = _admit()
    assert verdict.admitted, verdict.reason
    request = ledger_board.requests()[path]
    assert (request["status"], request["submitter"]) == ("PENDING", USER)
    assert _claim().path == path


def test_a_forged_finished_request_cannot_enter(ledger_board, tiny_models, monkeypatch):
    sha = ledger_board.publish("org/tiny", tiny_models["good"])
    path = _path("org/tiny", sha)
    forged = _doc("org/tiny", sha, status="FINISHED", attempts=1, worker="gpu-1", result="org/famous/abc/generic",
                  finished_at="2026-01-01T00:00:00Z")  # fmt: skip
    num = _pr(ledger_board, TOKEN, {path: json.dumps(forged).encode()})
    _as(monkeypatch, KEEPER_TOKEN)
    (verdict,) = _admit()
    assert verdict.num == num and not verdict.admitted
    assert "only a new PENDING request" in verdict.reason and ledger_board.requests() == {}
    ledger_board.keeper_commit({path: json.dumps(forged).encode()}, author=MALLORY)  # straight onto main
    queue = read_queue(REQUESTS)
    assert queue.find(path) is None and "not a maintainer or worker: ignored" in dict(queue.rejected)[path]


def test_a_worker_whose_clock_runs_two_hours_ahead_does_not_reclaim(ledger_board, monkeypatch):
    sha = "d" * 40
    path = _path("org/busy", sha)
    _as(monkeypatch, KEEPER_TOKEN)
    now = hub_time(REQUESTS)
    running = _doc("org/busy", sha, status="RUNNING", attempts=1, worker="w1", started_at=stamp(now),
                   lease_expires=stamp(now + timedelta(hours=1)))  # fmt: skip
    ledger_board.keeper_commit({path: json.dumps(running).encode()})
    ahead = now + timedelta(hours=2)
    monkeypatch.setattr(requests_mod, "now_utc", lambda: ahead)
    monkeypatch.setattr(worker_mod, "now_utc", lambda: ahead)
    assert _claim() is None  # the lease holds on the Hub's clock
    real = ledger_board.hub.state.clock
    ledger_board.hub.state.clock = lambda: real() + timedelta(hours=1, minutes=1)  # the Hub's time passes it
    taken = _claim()
    assert taken is not None and (taken.path, taken.attempts, taken.worker) == (path, 2, "w2")


def test_submitter_limits_pending_and_per_day(ledger_board, tiny_models, monkeypatch):
    shas = {name: ledger_board.publish(f"{USER}/{name}", tiny_models["good"]) for name in ("a", "b")}
    ledger_board.set_policy(maintainers=[KEEPER], workers=[KEEPER], max_pending=1, max_per_day=5)
    for setup in ("generic", "none"):
        submit(f"{USER}/a", None, setup, REQUESTS)
    _as(monkeypatch, KEEPER_TOKEN)
    first, second = _admit()
    assert first.admitted and not second.admitted
    assert "1 requests pending or running, the limit is 1" in second.reason
    ledger_board.set_policy(maintainers=[KEEPER], workers=[KEEPER], max_pending=9, max_per_day=1)
    _as(monkeypatch, TOKEN)
    submit(f"{USER}/b", None, "none", REQUESTS)
    _as(monkeypatch, KEEPER_TOKEN)
    (third,) = _admit()
    assert not third.admitted and "1 requests admitted in the last 24 hours, the limit is 1" in third.reason
    assert sorted(ledger_board.requests()) == [_path(f"{USER}/a", shas["a"])]


def test_one_job_per_set_of_weights(ledger_board, tiny_models, monkeypatch):
    ledger_board.publish("org/original", tiny_models["good"])
    ledger_board.publish("other/copy", tiny_models["good"])  # the same weights under another name
    submit("org/original", None, "generic", REQUESTS)
    submit("other/copy", None, "generic", REQUESTS)
    submit("other/copy", None, "none", REQUESTS)  # another setup is another job
    _as(monkeypatch, KEEPER_TOKEN)
    original, copy, other_setup = _admit()
    assert original.admitted and other_setup.admitted
    assert not copy.admitted and "the same weights are queued already as org/original@" in copy.reason


def test_opt_out_list_of_model_authors(ledger_board, tiny_models, monkeypatch):
    sha = ledger_board.publish("shy/model", tiny_models["good"])
    ledger_board.keeper_commit({"opt_out.json": json.dumps({"authors": ["shy"]}).encode()})
    with pytest.raises(LeaderboardError, match="its author asked not to be scored"):
        submit("shy/model", None, "generic", REQUESTS)
    path = _path("shy/model", sha)
    _pr(ledger_board, TOKEN, {path: json.dumps(_doc("shy/model", sha, parameters=1)).encode()})  # by hand
    _as(monkeypatch, KEEPER_TOKEN)
    (verdict,) = _admit()
    assert not verdict.admitted and "its author shy asked not to be scored (opt_out.json)" in verdict.reason


def test_the_submitter_is_the_pull_requests_author(ledger_board, tiny_models, monkeypatch):
    sha = ledger_board.publish("org/tiny", tiny_models["good"])
    path = _path("org/tiny", sha)
    _pr(ledger_board, MALLORY_TOKEN, {path: json.dumps(_doc("org/tiny", sha, submitter=USER)).encode()})
    _as(monkeypatch, KEEPER_TOKEN)
    (verdict,) = _admit()
    assert not verdict.admitted and f"field submitter '{USER}' is not the pull request's author mallory" in (
        verdict.reason
    )


def test_a_submitted_at_that_is_not_when_the_pull_request_was_opened_is_refused(ledger_board, monkeypatch):
    sha = "e" * 40
    doc = _doc("org/old", sha, submitted_at="1970-01-01T00:00:00Z")
    num = _pr(ledger_board, TOKEN, {_path("org/old", sha): json.dumps(doc).encode()})
    _as(monkeypatch, KEEPER_TOKEN)
    (verdict,) = _admit()
    assert verdict.num == num and not verdict.admitted
    assert "field submitted_at 1970-01-01T00:00:00Z is not when the pull request was opened" in verdict.reason


def test_two_admissions_at_once_decide_each_pull_request_once(ledger_board, monkeypatch):
    from ratio_bench.leaderboard import ledger

    sha = "f" * 40
    _pr(ledger_board, TOKEN, {_path("org/m", sha): json.dumps(_doc("org/m", sha)).encode()})
    _as(monkeypatch, KEEPER_TOKEN)
    stale = ledger.pull_requests(REQUESTS)  # what a second admission read before the first one decided
    (first,) = _admit()
    monkeypatch.setattr(ledger, "pull_requests", lambda repo_id: stale)
    (second,) = _admit()  # no error: it reports the pull request as decided elsewhere and goes on
    assert second.reason == "decided by another admission meanwhile" and not second.admitted
    (pr,) = ledger_board.pull_requests()
    assert pr["status"] == "closed" and len(pr["comments"]) == 1  # closed once, by the first admission
