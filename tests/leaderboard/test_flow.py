"""Submit -> worker -> results repo -> board, against the loopback Hub, and the submission checks."""

from __future__ import annotations

import json
import socket

import pytest
from tests.helpers.cli import assert_user_error
from tests.leaderboard.conftest import REQUESTS, RESULTS, USER


def test_submit_worker_results_board(board, tiny_models, small_release, tmp_path):
    sha = board.publish("org/tiny", tiny_models["good"])
    sub = board.submit("org/tiny", "--setup", "generic", "--training-cutoff", "2024-06-30")
    assert sub.code == 0, sub.err
    path = f"org/tiny/{sha}_generic.json"
    assert path in sub.out and f"org/tiny@{sha[:12]}" in sub.out and "pull request #1" in sub.out
    assert board.requests() == {}  # a pull request, not the queue
    assert [(p["author"], p["status"], p["files"]) for p in board.pull_requests()] == [(USER, "open", [path])]
    admitted = board.admit()
    assert admitted.code == 0 and "1 admitted, 0 refused" in admitted.out, admitted.err
    assert board.pull_requests()[0]["status"] == "merged"
    request = board.requests()[path]
    assert (request["status"], request["sha"], request["submitter"]) == ("PENDING", sha, USER)
    assert request["training_cutoff"] == "2024-06-30"
    assert request["prompts"] == {"query": "query: ", "document": "document: "} and request["parameters"] > 0

    work = board.worker(small_release, "--once", "--worker-id", "w1")
    assert work.code == 0, work.err
    request = board.requests()[path]
    folder = f"org/tiny/{sha}/generic"
    assert (request["status"], request["result"], request["worker"]) == ("FINISHED", folder, "w1")
    results = board.files(RESULTS)
    entry = json.loads(results[f"{folder}/test.json"])
    assert entry["model"] == "org/tiny:generic" and entry["split"] == "test"
    assert entry["training_data_cutoff"] == "2024-06-30"
    assert entry["training_data_cutoff_source"].startswith("stated by the submitter")
    assert set(entry["results"]) and all(0 <= m["mrr_at_10"] <= 1 for m in entry["results"].values())
    assert (
        f"{folder}/mteb/test/RatioAddress.json" in results and f"{folder}/runs/test/manifest.json" in results
    )
    provenance = json.loads(results[f"{folder}/provenance.json"])
    assert (provenance["worker"], provenance["sha"], provenance["request"]["path"]) == ("w1", sha, path)
    assert provenance["key_id"] == board.key.key_id and provenance["signature"]["algorithm"] == "ed25519"
    # nothing of the worker's machine is published: no local path, host name or Hub cache path
    # (the host name as a value or as the old ``HOST-PID`` worker id: a short name such as "vm" also occurs by
    # chance inside a base64 signature, so it is not searched for as a bare substring)
    host = socket.gethostname()
    local = [
        str(tmp_path),
        str(small_release),
        str(small_release.resolve()),
        f"{host}-",
        f'"{host}"',
        "/tmp/",
    ]
    for name, data in results.items():
        text = data.decode("utf-8", "replace")
        assert not [m for m in local if m in text], (name, [m for m in local if m in text])

    # a hand-contributed entry beside it, with the very same figures: self-reported, ranked apart
    board.api().upload_file(
        path_or_fileobj=json.dumps({**entry, "model": "someone-else"}).encode(),
        path_in_repo="self-reported/someone-else.json",
        repo_id=RESULTS,
        repo_type="dataset",
    )
    md, page = tmp_path / "board.md", tmp_path / "board.html"
    shown = board.ratio(
        "leaderboard", "--from", RESULTS, "--requests", REQUESTS, "--markdown", md, "--html", page
    )
    assert shown.code == 0, shown.err
    text = md.read_text(encoding="utf-8")
    verified, apart = text.split("\n## ")[1:3]
    assert verified.splitlines()[0].endswith("· verified") and "self-reported" in apart.splitlines()[0]
    main = verified.split("\n### ")[0]
    row = next(line for line in main.splitlines() if "org/tiny" in line)
    assert (
        row.startswith("| 1 | ")
        and f"verified \\(worker w-{board.key.key_id[:6]}, org/tiny@{sha[:12]}; submitted by {USER}, not"
        in row
    )
    assert "someone-else" not in verified and "someone-else" in apart
    assert "=1" not in text.split("\n### ")[0]  # never tied beside the verified row
    assert "superseded" not in text
    assert "FINISHED" in text and f"results\\: {folder}" in text  # the queue
    html = page.read_text(encoding="utf-8")
    assert 'id="filter-provenance"' in html and 'data-provenance="verified"' in html
    assert 'data-provenance="self-reported"' in html

    # anyone can check the verdict, step by step
    checked = board.ratio(
        "leaderboard", "verify", "org/tiny:generic", "--results", RESULTS, "--requests", REQUESTS
    )
    assert checked.code == 0, checked.err
    assert f"{folder}: VERIFIED" in checked.out and "FAIL" not in checked.out
    for step in (
        "key listed",
        "signature",
        "names this folder",
        "request FINISHED",
        "hash test.json",
        "entry test.json",
    ):
        assert f"ok   {step}" in checked.out, checked.out
    # without the requests repository nothing is verified
    alone = board.ratio("leaderboard", "--from", RESULTS, "--markdown", md)
    assert alone.code == 0 and "· verified" not in md.read_text(encoding="utf-8")

    again = board.submit("org/tiny", "--setup", "generic")
    assert_user_error(again, "already FINISHED", path, folder)


@pytest.mark.slow  # make test-all (make test stays near 10 minutes)
def test_submission_checks_refuse_before_queuing(board, tiny_models):
    board.publish("org/remote", tiny_models["remote-code"])
    board.publish("org/tiny", tiny_models["good"])
    refused = board.submit("org/remote")
    assert_user_error(refused, "org/remote@", "runs its own code", "auto_map", "never runs")
    assert_user_error(board.submit("org/missing"), "org/missing", "no such repository")
    assert_user_error(board.submit("org/tiny", "--revision", "v9"), "--revision v9", "no such revision")
    assert_user_error(board.submit("org/tiny", "--setup", "saved"), "--setup saved", "generic, none")
    assert_user_error(board.submit("org/tiny", "--max-params", "1000"), "parameters, over the cap of 1,000")
    assert board.requests() == {}  # nothing was queued
    assert not (tiny_models["remote-code"].parent / "remote-code-ran").exists()


@pytest.mark.slow  # ~25-60 s (a worker scores test and three snapshots); make test-all runs it
def test_a_worker_scores_every_snapshot_as_a_verified_entry(board, tiny_models, tmp_path):
    """On a release with test snapshots, the job scores test and each snapshot; the provenance binds them all,
    so each snapshot score is verified on the board (and marked clean against the submitter's cut-off)."""
    from tests.helpers.dataset import build_snapshots, snapshot_records

    from ratio_bench.dataset.release import Release

    release = tmp_path / "snap-release"
    build_snapshots(tmp_path / "snap-work", snapshot_records(), release)
    snapshots = list(Release.open(release).snapshots)
    sha = board.publish("org/tiny", tiny_models["good"])
    assert board.submit("org/tiny", "--setup", "generic", "--training-cutoff", "2022-01-31").code == 0
    work = board.worker(release, "--once", "--worker-id", "w1")
    assert work.code == 0, work.err
    folder = f"org/tiny/{sha}/generic"
    results = board.files(RESULTS)
    provenance = json.loads(results[f"{folder}/provenance.json"])
    assert sorted(provenance["entries"]) == sorted(f"{s}.json" for s in ["test", *snapshots])
    clean = {s: json.loads(results[f"{folder}/{s}.json"])["clean"] for s in snapshots}
    assert clean == {s: s != "test_2022_01" for s in snapshots}  # January holds the cut-off
    md = tmp_path / "board.md"
    assert board.ratio("leaderboard", "--from", RESULTS, "--markdown", md).code == 0
    rows = [
        line
        for line in md.read_text(encoding="utf-8").split("\n### ")[0].splitlines()
        if "test\\_2022" in line
    ]
    assert len(rows) == len(snapshots) and all("verified" in row for row in rows), rows
