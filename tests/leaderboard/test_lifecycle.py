"""A submission's life on the loopback Hub, as its submitter lives it: the request's pull request, admission, its
place in the queue and the estimated wait, the run, the worker's comment on the pull request, the model repo's
eval-results pull request linking back, the board row (marked when the submitter is not the model's author), and
the entry's reproduce command giving the verified figures exactly; then a model that fails, an infrastructure
error that is retried, and one that persists (put back, no attempt spent)."""

from __future__ import annotations

import errno
import json
import shlex

import pytest
from tests.helpers.cli import run_ratio
from tests.leaderboard.conftest import KEEPER_TOKEN, REQUESTS, RESULTS, USER

from ratio_bench.leaderboard.failures import INFRASTRUCTURE, MODEL, classify
from ratio_bench.leaderboard.requests import Queue, Request
from ratio_bench.leaderboard.waiting import Wait, wait_for


def _timed(board, minutes: int) -> None:
    """A job the queue already ran (a maintainer's ledger entry): ``minutes`` long, by worker w0."""
    done = Request("org/old", "main", "e" * 40, "generic", "", "", "float32", "bob", "2026-01-01T00:00:00Z",
                   status="FINISHED", attempts=1, worker="w0", started_at="2026-01-01T10:00:00Z",
                   finished_at=f"2026-01-01T10:{minutes:02d}:00Z", result=f"org/old/{'e' * 40}/generic")  # fmt: skip
    board.keeper_commit({done.path: done.to_json()})


def _comments(board, repo: str, num: int, kind: str = "datasets") -> list[str]:
    [d] = [d for d in board.hub.state.discussions[f"{kind}/{repo}"] if d["num"] == num]
    return [e["data"]["latest"]["raw"] for e in d["events"] if e["type"] == "comment"]


@pytest.mark.slow  # make test-all (make test stays near 10 minutes)
def test_a_submissions_whole_life(board, tiny_models, small_release, tmp_path):
    from ratio_bench.dataset.release import Release

    _timed(board, 10)
    sha = board.publish("org/tiny", tiny_models["good"])
    sub = board.submit("org/tiny", "--setup", "generic")
    assert sub.code == 0, sub.err
    # submit: the pull request, then where it would stand and the wait (one 10-minute job timed, one worker)
    assert "pull request #1" in sub.out
    assert "once admitted: position 1 (0 pending ahead, 0 running); about 10 min until its result" in sub.out
    assert board.admit().code == 0
    md = tmp_path / "queue.md"
    shown = board.ratio("leaderboard", "--from", RESULTS, "--requests", REQUESTS, "--markdown", md)
    queue_text = md.read_text(encoding="utf-8")
    assert shown.code == 0 and "position 1 \\(0 pending ahead" in queue_text, queue_text
    assert f"{USER} \\(not the model's author\\)" in queue_text  # alice submitted org's model

    # the release as a Hub dataset at a commit: eval results name a benchmark only when the worker scored it
    # there (issue 43: a local folder's results name no benchmark and no dataset commit)
    board.api().create_repo("ratio-bench/ratio", repo_type="dataset", exist_ok=True)
    board.api().upload_folder(repo_id="ratio-bench/ratio", folder_path=small_release, repo_type="dataset")
    work = board.worker("ratio-bench/ratio", "--once", "--worker-id", "w1")
    assert work.code == 0, work.err
    folder = f"org/tiny/{sha}/generic"
    assert board.requests()[f"org/tiny/{sha}_generic.json"]["status"] == "FINISHED"
    # the worker's comment on the request's pull request: outcome, result folder, eval-results PR, reproduce
    finished = _comments(board, REQUESTS, 1)[-1]
    assert finished.startswith(f"Finished: org/tiny@{sha[:12]}:generic was scored by w1 (attempt 1)")
    assert f"/datasets/{RESULTS}/tree/main/{folder}" in finished and "test MRR@10: address" in finished
    [model_pr] = board.api().get_repo_discussions("org/tiny")
    assert model_pr.is_pull_request and f"/org/tiny/discussions/{model_pr.num}" in finished
    opening = board.api().get_discussion_details("org/tiny", model_pr.num).events[0].content
    assert f"/datasets/{REQUESTS}/discussions/1" in opening  # ...which links back to the request
    assert ".eval_results/ratio_address.yaml" in board.api().list_repo_files(
        "org/tiny", revision=f"refs/pr/{model_pr.num}"
    )
    # the board row: verified, and says whose submission it was
    md = tmp_path / "board.md"
    assert board.ratio("leaderboard", "--from", RESULTS, "--requests", REQUESTS, "--markdown", md).code == 0
    rows = [line.replace("\\", "") for line in md.read_text(encoding="utf-8").splitlines()]
    row = next(line for line in rows if "org/tiny:generic" in line and "verified" in line)
    assert f"submitted by {USER}, not the model's author" in row, row

    # the entry's one command, run here on the same release, gives the verified figures exactly
    entry = json.loads(board.files(RESULTS)[f"{folder}/test.json"])
    release = Release.open(small_release)
    expected = (
        f"ratio leaderboard reproduce org/tiny@{sha} --setup generic --split test "
        f"--dataset {release.name}@{release.version}"
    )
    assert entry["reproduce"] == expected and f"`{expected}`" in finished
    out = tmp_path / "again.json"
    again = run_ratio(
        *shlex.split(entry["reproduce"])[1:], "--out", out, env=board.env, cwd=small_release.parent
    )
    assert again.code == 0, again.err
    mine = json.loads(out.read_text(encoding="utf-8"))
    assert mine["results"] == entry["results"] and mine["per_query"] == entry["per_query"]
    assert mine["n_queries"] == entry["n_queries"] and "MRR@10: address" in again.out


@pytest.mark.slow  # ~60-110 s (five jobs, two retried); make test-all runs it
def test_a_failed_model_a_retried_outage_and_a_persistent_one(board, tiny_models, small_release):
    broken = board.publish("org/broken", tiny_models["encode-fails"])
    tiny = board.publish("org/tiny", tiny_models["good"])
    down = board.publish("org/down", tiny_models["good"])
    for model, setup in (("org/broken", "generic"), ("org/tiny", "generic"), ("org/down", "none")):
        assert board.submit(model, "--setup", setup).code == 0
    assert board.admit().code == 0
    board.hub.state.faults["org/tiny/model.safetensors"] = 1  # one 503: a retry gets through
    board.hub.state.faults["org/down/model.safetensors"] = 1000  # the Hub stays down for this one
    work = board.worker(
        small_release, "--once", "--infra-retries", "2", "--retry-backoff", "0.1", timeout=400
    )
    assert work.code == 0, work.err
    requests = board.requests()

    failed = requests[f"org/broken/{broken}_generic.json"]  # the model's error: FAILED, its reason on its PR
    assert failed["status"] == "FAILED" and failed["reason"].startswith("IndexError")
    assert _comments(board, REQUESTS, 1)[-1].startswith(
        f"Failed: org/broken@{broken[:12]}:generic: IndexError"
    )
    assert "fix it and submit again" in _comments(board, REQUESTS, 1)[-1]

    done = requests[f"org/tiny/{tiny}_generic.json"]  # the outage once: retried in the same attempt
    assert (done["status"], done["attempts"]) == ("FINISHED", 1)
    assert "org/tiny" in work.err and "infrastructure error" in work.err and "retry 1/1" in work.err
    assert _comments(board, REQUESTS, 2)[-1].startswith("Finished:")

    back = requests[f"org/down/{down}_none.json"]  # the outage persists: back in the queue, no attempt spent
    assert (back["status"], back["attempts"], back["worker"]) == ("PENDING", 0, None)
    assert back["reason"].startswith("infrastructure error, retried later") and "503" in back["reason"]
    assert _comments(board, REQUESTS, 3)[-1].startswith(f"Delayed: org/down@{down[:12]}:none")
    assert "does not count against its attempts" in _comments(board, REQUESTS, 3)[-1]


@pytest.mark.parametrize(
    ("exc", "kind"),
    [
        (OSError(errno.ENOSPC, "No space left on device"), INFRASTRUCTURE),
        (ConnectionResetError("reset by peer"), INFRASTRUCTURE),
        (TimeoutError("read timed out"), INFRASTRUCTURE),
        (IndexError("index out of range in self"), MODEL),
        (FileNotFoundError(errno.ENOENT, "no tokenizer.json"), MODEL),
        (ValueError("non-finite embeddings"), MODEL),
    ],
)
def test_failures_are_classed(exc, kind):
    assert classify(exc) == kind


def test_a_hub_5xx_behind_a_one_line_error_is_the_infrastructures():
    import httpx
    from huggingface_hub.errors import HfHubHTTPError

    from ratio_bench.leaderboard.hub import LeaderboardError, hub_errors

    def fail(status: int):
        response = httpx.Response(status, request=httpx.Request("GET", "http://hub/x"))
        with hub_errors("org/m"):
            raise HfHubHTTPError(f"{status}", response=response)

    for status, kind in ((503, INFRASTRUCTURE), (504, INFRASTRUCTURE), (403, MODEL)):
        with pytest.raises(LeaderboardError) as caught:
            fail(status)
        assert classify(caught.value) == kind, status


def test_the_wait_is_the_median_job_times_the_queue_ahead_over_the_workers():
    def req(n: int, status: str, worker: str | None = None, minutes: int = 0) -> Request:
        times = {"started_at": "2026-01-01T10:00:00Z", "finished_at": f"2026-01-01T10:{minutes:02d}:00Z"}
        ended = status in ("FINISHED", "FAILED")
        return Request(f"org/m{n}", "main", f"{n:040x}", "generic", "", "", "float32", "bob",
                       "2026-01-01T00:00:00Z", status=status, worker=worker,
                       **(times if ended else {}))  # fmt: skip

    from datetime import UTC, datetime

    from ratio_bench.leaderboard.ledger import Change

    now = datetime(2026, 1, 2, tzinfo=UTC)
    requests = (req(1, "FINISHED", "w1", 4), req(2, "FINISHED", "w2", 8), req(3, "FAILED", "w1", 6),
                req(4, "PENDING"), req(5, "PENDING"))  # fmt: skip
    changes = {
        r.path: Change("c", ("keeper",), datetime(2026, 1, 1, 12, i, tzinfo=UTC))
        for i, r in enumerate(requests)
    }
    queue = Queue("q/r", "s", requests, (), changes)
    second = wait_for(queue, now, requests[4].path)
    assert (second.ahead, second.running, second.typical_s, second.workers) == (1, 0, 360.0, 2)
    assert (
        second.estimate_s == 360.0 and "position 2 (1 pending ahead, 0 running); about 6 min" in second.text()
    )
    assert wait_for(queue, now).ahead == 2  # a request admitted now waits behind both
    assert "no estimate" in Wait(0, 0, None, 1, 0).text()


def test_a_model_whose_author_opted_out_after_admission_is_not_scored(hub_env, monkeypatch):
    from ratio_bench.leaderboard import worker
    from ratio_bench.leaderboard.requests import read_queue

    monkeypatch.setenv("HF_TOKEN", KEEPER_TOKEN)  # the worker's account
    pending = Request("org/m", "main", "a" * 40, "generic", "", "", "float32", USER, "2026-01-01T00:00:00Z")
    hub_env.keeper_commit({pending.path: pending.to_json()})
    hub_env.keeper_commit({"opt_out.json": json.dumps({"authors": ["org"]}).encode()})
    logged: list[str] = []
    assert worker.claim(REQUESTS, "w1", 60, logged.append) is None  # nothing left to score
    ended = read_queue(REQUESTS).find(pending.path)
    assert (
        ended.status == "FAILED"
        and ended.attempts == 0
        and "asked not to be scored (opt_out.json)" in ended.reason
    )


def test_reproduce_names_a_wrong_model_or_release_in_one_line(small_release):
    from tests.helpers.cli import assert_user_error

    from ratio_bench.dataset.release import Release

    release = Release.open(small_release)
    no_sha = run_ratio("leaderboard", "reproduce", "org/m", "--setup", "generic", "--dataset", small_release)
    assert_user_error(no_sha, "org/m", "ORG/NAME@SHA")
    other = f"{release.name}@9.9"
    wrong = run_ratio("leaderboard", "reproduce", f"org/m@{'a' * 40}", "--setup", "generic", "--dataset", other,
                      cwd=small_release.parent)  # fmt: skip
    assert_user_error(wrong, f"--dataset {other}", f"found version {release.version}")
