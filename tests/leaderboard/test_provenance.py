"""Verified means verified: what a worker signs, what the board accepts as verified, and what it ranks.

Folders are published with the worker's own code (:func:`worker.result_files`, signing included) on the loopback
Hub, with requests written into the queue as the maintainers' ledger would hold them; the board is read in
process (:func:`board.load_board_from_repo`), as ``ratio serve`` reads it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.helpers.entries import ranking
from tests.leaderboard.conftest import KEEPER_TOKEN, REQUESTS, RESULTS, trusted_workers

from ratio_bench.evaluation.board.ranks import ranked
from ratio_bench.evaluation.board.render.markdown import leaderboard_markdown
from ratio_bench.evaluation.scoring.evaluate import Queries, result_of_runs
from ratio_bench.evaluation.scoring.results import entry_label, leaderboard_entry
from ratio_bench.leaderboard import hub, worker
from ratio_bench.leaderboard.board import load_board_from_repo, verify
from ratio_bench.leaderboard.provenance import TRUSTED_WORKERS, WorkerKey, generate_key
from ratio_bench.leaderboard.requests import Request, now_utc, read_queue, stamp, write_request

FINGERPRINT = "f" * 64


@pytest.fixture(autouse=True)
def as_keeper(request, monkeypatch):
    """This process writes the queue as the maintainers' ledger and a worker do (only they write its main)."""
    if "hub_env" in request.fixturenames:
        request.getfixturevalue("hub_env")  # after it has made this process alice's client
        monkeypatch.setenv("HF_TOKEN", KEEPER_TOKEN)


def release_entry(model: str, release: Path, rank: int = 1, split: str = "test", **extra) -> dict:
    """``model``'s entry on ``release``'s real queries, every gold at ``rank``."""
    from ratio_bench.dataset.release import Release

    opened = Release.open(release)
    runs, queries = {}, {}
    for rel in opened.relations:
        table = opened.queries(rel, split, ["query_id", "gold_id"])
        ids, golds = table.column("query_id").to_pylist(), table.column("gold_id").to_pylist()
        runs[rel] = {q: ranking(g, rank) for q, g in zip(ids, golds, strict=True)}
        queries[rel] = Queries(ids, [""] * len(ids), golds)
    return {
        **leaderboard_entry(result_of_runs(model, runs, queries), opened.manifest, split).to_json(),
        **extra,
    }


def request(
    model: str, sha: str, setup: str = "generic", status: str = "FINISHED", result: str | None = None
):
    new = Request(model, "main", sha, setup, "", "", "float32", "alice", stamp(now_utc()))
    if status == "FINISHED":
        return new.ended("FINISHED", now_utc(), result=result or f"{model}/{sha}/{setup}")
    return new if status == "PENDING" else new.claimed("w1", now_utc(), 3600)


def queue(req: Request) -> None:
    write_request(REQUESTS, req, hub.head(REQUESTS, "dataset"), f"ledger: {req.label}")


def options(release: Path, key: WorkerKey | None) -> worker.WorkerOptions:
    return worker.WorkerOptions(REQUESTS, RESULTS, release, "local release", "w1", key=key)


def job_out(tmp: Path, entry: dict) -> Path:
    out = tmp / f"out-{len(list(tmp.glob('out-*')))}"
    (out / "runs").mkdir(parents=True)
    (out / "test.json").write_text(json.dumps(entry), encoding="utf-8")
    (out / "job.json").write_text(json.dumps({"seconds": {"test": 1.0}, "n_queries": {}}), encoding="utf-8")
    return out


def publish(board, release: Path, req: Request, entry: dict, key: WorkerKey | None = None) -> str:
    """The worker's folder for ``req`` (signed with ``key``, default the trusted one) committed to the results."""
    folder, files = worker.result_files(req, options(release, key or board.key), job_out(board.home, entry))
    hub.commit(RESULTS, "dataset", files, f"Scores of {req.label}")
    return folder


def marks(requests: str | None = REQUESTS) -> dict[str, tuple[str, str]]:
    """(status, detail) per row name of the board, and the board."""
    b = load_board_from_repo(hub.RepoRef(RESULTS, None, "--from"), requests)
    return {e.label: (e.provenance.status, e.provenance.detail) for r in b.releases for e in r.entries}


SHA, OTHER = "a" * 40, "b" * 40


def test_a_forged_provenance_record_is_self_reported(hub_env, small_release):
    """The issue's case: evil/forged at an invented commit, all-rank-1 figures, a provenance.json naming the folder,
    model, setup and the entry's hash (what the board trusted before). Nobody signed it: self-reported."""
    import hashlib

    entry = release_entry("evil/forged:generic", small_release)
    data = json.dumps(entry).encode()
    record = {"schema": "ratio-leaderboard-provenance/1", "worker": "gpu-1", "model": "evil/forged", "sha": SHA,
              "setup": "generic", "entries": {"test.json": hashlib.sha256(data).hexdigest()}}  # fmt: skip
    folder = f"evil/forged/{SHA}/generic"
    hub.commit(RESULTS, "dataset", {f"{folder}/test.json": data,
                                    f"{folder}/provenance.json": json.dumps(record).encode()}, "forged")  # fmt: skip
    queue(request("evil/forged", SHA))  # even with a FINISHED request beside it
    status, why = marks()["evil/forged:generic"]
    assert status == "self-reported" and "not a signed record" in why


def test_a_signature_by_an_unlisted_key_is_self_reported(hub_env, small_release, tmp_path):
    stranger = generate_key(tmp_path / "stranger.key")
    req = request("org/tiny", SHA)
    queue(req)
    publish(hub_env, small_release, req, release_entry("org/tiny:generic", small_release), key=stranger)
    status, why = marks()["org/tiny:generic"]
    assert status == "self-reported" and f"key {stranger.key_id} is not in {TRUSTED_WORKERS}" in why
    # listing it (a maintainer's commit) is what makes it trusted
    hub.commit(RESULTS, "dataset", {TRUSTED_WORKERS: trusted_workers(hub_env.key, stranger)}, "trust")
    assert marks()["org/tiny:generic"][0] == "verified"


@pytest.mark.parametrize("state", ["missing", "PENDING", "RUNNING", "elsewhere", "no requests repo"])
def test_a_valid_signature_without_a_finished_request_naming_the_folder_is_self_reported(
    hub_env, small_release, state
):
    req = request("org/tiny", SHA)
    if state in ("PENDING", "RUNNING"):
        queue(request("org/tiny", SHA, status=state))
    elif state == "elsewhere":  # FINISHED, but its result is another folder
        queue(request("org/tiny", SHA, result=f"org/tiny/{OTHER}/generic"))
    publish(hub_env, small_release, req, release_entry("org/tiny:generic", small_release))
    status, why = marks(None if state == "no requests repo" else REQUESTS)["org/tiny:generic"]
    assert status == "self-reported" and why.startswith("request FINISHED"), why
    expected = {"missing": "has no request", "PENDING": "is PENDING", "RUNNING": "is RUNNING",
                "elsewhere": f"with result org/tiny/{OTHER}/generic", "no requests repo": "nothing can be verified"}  # fmt: skip
    assert expected[state] in why


def test_an_entry_changed_after_signing_is_self_reported_and_verify_says_why(hub_env, small_release, capsys):
    req = request("org/tiny", SHA)
    queue(req)
    folder = publish(hub_env, small_release, req, release_entry("org/tiny:generic", small_release))
    assert marks()["org/tiny:generic"][0] == "verified"
    better = release_entry(
        "org/tiny:generic", small_release, rank=1, submitter="me"
    )  # other bytes, valid figures
    hub.commit(RESULTS, "dataset", {f"{folder}/test.json": json.dumps(better).encode()}, "edit")
    status, why = marks()["org/tiny:generic"]
    assert status == "self-reported" and "changed after signing" in why
    (report,) = verify(folder, hub.RepoRef(RESULTS, None, "--results"), REQUESTS)
    lines = report.lines()
    assert not report.verified and lines[0] == f"{folder}: SELF-REPORTED"
    assert any(line.startswith("  FAIL hash test.json") for line in lines), lines
    assert any(line.startswith("  ok   request FINISHED") for line in lines), lines


def test_a_self_reported_copy_of_the_figures_is_ranked_apart_never_tied_with_verified(hub_env, small_release):
    req = request("org/tiny", SHA)
    queue(req)
    entry = release_entry("org/tiny:generic", small_release)
    publish(hub_env, small_release, req, entry)
    copy = {**entry, "model": "someone-else"}
    hub.commit(RESULTS, "dataset", {"self-reported/copy.json": json.dumps(copy).encode()}, "hand-made")
    board = load_board_from_repo(hub.RepoRef(RESULTS, None, "--from"), REQUESTS)
    verified, apart = board.releases
    assert (verified.provenance, apart.provenance) == ("verified", "self-reported")
    assert [(str(r), entry_label(e)) for r, e in ranked(verified)] == [("1", "org/tiny:generic")]
    assert [(str(r), entry_label(e)) for r, e in ranked(apart)] == [("1", "someone-else")]
    assert "=1" not in leaderboard_markdown(board).split("\n### ")[0]


def test_a_copy_of_the_weights_under_another_repo_takes_nothing_over(hub_env, small_release):
    """The takeover: someone re-uploads org/tiny's weights as aaa/copy (a name that sorts first) and has it
    scored later. Both rows stay verified; the copy is marked as the same weights as the original."""
    original, copy = request("org/tiny", SHA), request("aaa/copy", OTHER)
    queue(original)
    publish(
        hub_env,
        small_release,
        original,
        release_entry("org/tiny:generic", small_release, model_fingerprint=FINGERPRINT),
    )
    queue(copy)
    publish(
        hub_env,
        small_release,
        copy,
        release_entry("aaa/copy:generic", small_release, model_fingerprint=FINGERPRINT),
    )
    board = load_board_from_repo(hub.RepoRef(RESULTS, None, "--from"), REQUESTS)
    rows = {entry_label(e): e for r in board.releases for e in r.entries}
    assert set(rows) == {"org/tiny:generic", "aaa/copy:generic"}
    assert all(e.provenance.status == "verified" for e in rows.values())
    assert (
        rows["aaa/copy:generic"].same_weights_as == "org/tiny"
        and rows["org/tiny:generic"].same_weights_as is None
    )
    assert "superseded" not in board.summary
    assert "same weights as org/tiny" in leaderboard_markdown(board)


def test_one_model_scored_with_two_setups_keeps_both_rows(hub_env, small_release):
    for setup in ("generic", "none"):
        req = request("org/tiny", SHA, setup)
        queue(req)
        publish(
            hub_env,
            small_release,
            req,
            release_entry(f"org/tiny:{setup}", small_release, model_fingerprint=FINGERPRINT),
        )
    rows = marks()
    assert rows.keys() == {"org/tiny:generic", "org/tiny:none"} and {s for s, _ in rows.values()} == {
        "verified"
    }


def test_figures_not_of_the_release_are_rejected_by_the_board_not_ranked(hub_env, small_release):
    """Beside a verified entry (the build's query counts, checked by its worker): a self-reported entry with
    150,000 all-rank-1 queries, and one with n_queries 0 and 100% figures. Each rejects itself only."""
    req = request("org/tiny", SHA)
    queue(req)
    publish(hub_env, small_release, req, release_entry("org/tiny:generic", small_release))
    honest = release_entry("honest", small_release, rank=2)
    many = {**release_entry("many", small_release, rank=1),
            "n_queries": {**honest["n_queries"], "address": 150_000},
            "per_query": {"address": {"query_ids_sha256": "0" * 64, "gold_rank": [1] * 150_000}}}  # fmt: skip
    none = {**many, "model": "none", "n_queries": {**honest["n_queries"], "address": 0}}
    none.pop("per_query")
    hub.commit(
        RESULTS,
        "dataset",
        {f"hand/{e['model']}.json": json.dumps(e).encode() for e in (honest, many, none)},
        "hand",
    )
    board = load_board_from_repo(hub.RepoRef(RESULTS, None, "--from"), REQUESTS)
    assert {entry_label(e) for r in board.releases for e in r.entries} == {"org/tiny:generic", "honest"}
    reasons = {r.source: r.reason for r in board.rejected}
    assert (
        "n_queries/address is 150000, but split test has 2 address queries (by its verified entries)"
        in reasons["hand/many.json"]
    )
    assert "n_queries/address: 0 queries" in reasons["hand/none.json"]


@pytest.mark.parametrize(
    "bad, reason",
    [
        ({"map_at_10": 1.11}, "map_at_10"),  # what NaN weights gave
        ({"recall_at_100": 2.89}, "recall_at_100"),  # what inf weights gave
        ("zero", "n_queries/address: 0 queries"),
        ("many", "n_queries/address is 150000, but split test has 2 address queries (the release)"),
    ],
)
def test_the_worker_refuses_to_publish_figures_out_of_bounds_or_not_of_the_release(
    hub_env, small_release, monkeypatch, bad, reason
):
    entry = release_entry("org/tiny:generic", small_release)
    if bad == "zero":
        entry = {**entry, "n_queries": {**entry["n_queries"], "address": 0}}
        entry.pop("per_query")
    elif bad == "many":
        entry = {**entry, "n_queries": {**entry["n_queries"], "address": 150_000},
                 "per_query": {"address": {"query_ids_sha256": "0" * 64, "gold_rank": [1] * 150_000}}}  # fmt: skip
    else:
        entry["results"]["address"].update(bad)
        entry.pop("per_query")
    mine = request("org/tiny", SHA, status="RUNNING")
    queue(mine)

    def job(req, opts, out):
        job_out(out.parent, entry).rename(out)
        return None

    monkeypatch.setattr(worker, "run_job", job)
    logged: list[str] = []
    assert worker.process(mine, options(small_release, hub_env.key), logged.append) == "FAILED"
    ended = read_queue(REQUESTS).find(mine.path)
    assert ended.status == "FAILED" and reason in ended.reason and "not published" in ended.reason
    assert not [p for p in hub_env.files(RESULTS) if p.startswith("org/tiny/")]  # nothing published


def test_keygen_writes_the_private_key_once_and_prints_only_its_public_listing(tmp_path):
    from tests.helpers.cli import assert_user_error, run_ratio

    from ratio_bench.leaderboard.provenance import load_key, parse_trusted

    path = tmp_path / "worker.key"
    made = run_ratio("leaderboard", "keygen", "--out", path, "--name", "gpu-1", "--added-by", "ada")
    assert made.code == 0, made.err
    assert path.stat().st_mode & 0o777 == 0o600
    key = load_key(path)
    listing = json.loads(made.out.strip().splitlines()[-1])
    assert listing == {"key_id": key.key_id, "public_key": key.public_key, "name": "gpu-1", "added_by": "ada"}
    trusted, ignored = parse_trusted(
        json.dumps({"schema": "ratio-trusted-workers/1", "workers": [listing]}).encode()
    )
    assert list(trusted) == [key.key_id] and ignored == []
    secret = path.read_text().splitlines()[1]
    assert secret not in made.out + made.err
    assert_user_error(run_ratio("leaderboard", "keygen", "--out", path), f"--out {path}", "never overwritten")
    assert load_key(path).key_id == key.key_id  # untouched


def test_verify_checks_a_downloaded_folder_file_by_file(hub_env, small_release, tmp_path):
    req = request("org/tiny", SHA)
    queue(req)
    folder = publish(hub_env, small_release, req, release_entry("org/tiny:generic", small_release))
    local = tmp_path / "download" / folder
    for path, data in hub_env.files(RESULTS).items():
        if path.startswith(folder + "/"):
            (local / path[len(folder) + 1 :]).parent.mkdir(parents=True, exist_ok=True)
            (local / path[len(folder) + 1 :]).write_bytes(data)
    results = hub.RepoRef(RESULTS, None, "--results")
    (report,) = verify(str(local), results, REQUESTS)
    assert report.verified and report.lines()[0] == f"{folder}: VERIFIED", report.lines()
    (local / "mteb-note.json").write_text("{}")  # an unrelated extra file is named, never verified...
    (report,) = verify(str(local), results, REQUESTS)
    assert report.verified, report.lines()  # ...and does not disown the row (issue 43)
    assert any("unsigned files" in line and "mteb-note.json" in line for line in report.lines())
    (local / "test.json").write_text((local / "test.json").read_text() + " ")
    (report,) = verify(str(local), results, REQUESTS)
    assert not report.verified
    assert any(line.startswith("  FAIL hash test.json") for line in report.lines())
