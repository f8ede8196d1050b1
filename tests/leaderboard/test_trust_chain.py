"""Issue 43, the trust chain's second pass, as a hostile user tries it on the loopback Hub: one root of trust (the
keys at the results repository's main), records bound to the FINISHED request, strict JSON, listings unique by
key, fail closed (never down), admission that merges only what it reviewed. In process, as test_provenance.py."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

import pytest
from huggingface_hub import CommitOperationAdd
from tests.leaderboard.conftest import KEEPER, REQUESTS, RESULTS, TOKEN, USER, trusted_workers
from tests.leaderboard.test_provenance import (
    SHA,
    as_keeper,  # noqa: F401 - the autouse fixture: this process writes the queue as the maintainers do
    marks,
    publish,
    queue,
    release_entry,
    request,
)

from ratio_bench.leaderboard import hub
from ratio_bench.leaderboard.board import load_board_from_repo, verify
from ratio_bench.leaderboard.hub import LeaderboardError, RepoRef
from ratio_bench.leaderboard.provenance import (
    MAX_TRUSTED,
    PROVENANCE,
    TRUSTED_SCHEMA,
    TRUSTED_WORKERS,
    generate_key,
    parse_trusted,
)
from ratio_bench.leaderboard.requests import now_utc, read_queue, stamp

ROW = "org/tiny:generic"
FOLDER = f"org/tiny/{SHA}/generic"


def _verified_row(board, release: Path) -> str:
    req = request("org/tiny", SHA)
    queue(req)
    folder = publish(board, release, req, release_entry(ROW, release))
    assert marks()[ROW][0] == "verified"
    return folder


def _marks_at(revision: str) -> dict[str, tuple[str, str]]:
    b = load_board_from_repo(RepoRef(RESULTS, revision, "--from"), REQUESTS)
    return {e.label: (e.provenance.status, e.provenance.detail) for r in b.releases for e in r.entries}


def _resign(board, folder: str, key, **changes) -> dict[str, bytes]:
    """The folder's provenance record with ``changes``, signed again by ``key``."""
    record = json.loads(board.files(RESULTS)[f"{folder}/{PROVENANCE}"])
    return {f"{folder}/{PROVENANCE}": json.dumps(key.sign({**record, **changes})).encode()}


# --- 1. one root of trust ------------------------------------------------------------------------------------


def test_a_pull_request_cannot_verify_itself(hub_env, small_release, tmp_path):
    """The issue's case 1: mallory's pull request on the results repository lists her own key and re-signs better
    figures with it. Read at refs/pr/N (or at its head commit) it used to come out verified."""
    folder = _verified_row(hub_env, small_release)
    mine = generate_key(tmp_path / "mallory.key")
    better = json.dumps(release_entry(ROW, small_release, rank=1, submitter="mallory")).encode()
    from ratio_bench.leaderboard.provenance import sha256

    record = json.loads(hub_env.files(RESULTS)[f"{folder}/{PROVENANCE}"])
    record["entries"]["test.json"] = sha256(better)
    files = {
        f"{folder}/test.json": better,
        f"{folder}/{PROVENANCE}": json.dumps(mine.sign(record)).encode(),
        TRUSTED_WORKERS: trusted_workers(hub_env.key, mine),
    }
    pr = hub_env.api(TOKEN).create_commit(
        RESULTS, [CommitOperationAdd(p, d) for p, d in files.items()], commit_message="better",
        repo_type="dataset", create_pr=True,
    )  # fmt: skip
    status, why = _marks_at(f"refs/pr/{pr.pr_num}")[ROW]
    assert status == "self-reported" and "is a pull request" in why, why
    head = hub.head(RESULTS, "dataset", f"refs/pr/{pr.pr_num}")
    status, why = _marks_at(head)[ROW]
    assert status == "self-reported" and "not a commit of main" in why, why
    (report,) = verify(folder, RepoRef(RESULTS, f"refs/pr/{pr.pr_num}", "--results"), REQUESTS)
    assert not report.verified and "is a pull request" in "\n".join(report.lines())
    from ratio_bench.leaderboard.hub_results import repo_results

    exported = repo_results(RepoRef(RESULTS, f"refs/pr/{pr.pr_num}", "--results"), REQUESTS)
    assert not [
        r for r in exported.results if r.verified
    ]  # export-mteb and eval-results see nothing verified
    assert marks()[ROW][0] == "verified"  # main is untouched


def test_a_key_removed_from_main_is_revoked_at_every_revision(hub_env, small_release):
    _verified_row(hub_env, small_release)
    old = hub.head(RESULTS, "dataset")
    assert _marks_at(old)[ROW][0] == "verified"
    hub.commit(RESULTS, "dataset", {TRUSTED_WORKERS: trusted_workers()}, "revoke the worker's key")
    for revision in (None, old):  # today's listing judges the old revision too
        status, why = (_marks_at(revision) if revision else marks())[ROW]
        assert status == "self-reported" and f"not in {TRUSTED_WORKERS}" in why, why


# --- 3. records bound to the queue ------------------------------------------------------------------------


def test_a_record_of_an_earlier_attempt_is_not_the_finished_run(hub_env, small_release):
    """Signed at attempt 1; the queue says the request FINISHED at attempt 3 (a re-run replaced it)."""
    from dataclasses import replace

    req = replace(request("org/tiny", SHA), attempts=1)
    queue(req)
    publish(hub_env, small_release, req, release_entry(ROW, small_release))
    assert marks()[ROW][0] == "verified"
    queue(replace(req, attempts=3))
    status, why = marks()[ROW]
    assert status == "self-reported" and "signed at attempt 1" in why and "attempt 3" in why, why


def test_a_record_signed_after_the_request_finished_is_not_its_run(hub_env, small_release):
    early = request("org/tiny", SHA).ended("FINISHED", now_utc() - timedelta(hours=2), result=FOLDER)
    queue(early)
    publish(hub_env, small_release, early, release_entry(ROW, small_release))  # signed now, 2 hours after
    status, why = marks()[ROW]
    assert status == "self-reported" and "after the request FINISHED" in why, why


def test_a_record_naming_a_key_twice_or_two_key_ids_is_refused(hub_env, small_release, tmp_path):
    folder = _verified_row(hub_env, small_release)
    signed = hub_env.files(RESULTS)[f"{folder}/{PROVENANCE}"]
    # a duplicate key: a person reading the file sees the first "setup", the parser used to keep the last
    doubled = signed.replace(b"{", b'{"setup": "recommended", ', 1)
    hub.commit(RESULTS, "dataset", {f"{folder}/{PROVENANCE}": doubled}, "two setups")
    status, why = marks()[ROW]
    assert status == "self-reported" and "duplicate key" in why and "'setup'" in why, why
    # signature.key_id is not covered by the signature: one that differs from the record's key_id is refused
    other = generate_key(tmp_path / "other.key")
    record = json.loads(signed)
    record["signature"]["key_id"] = other.key_id
    hub.commit(RESULTS, "dataset", {f"{folder}/{PROVENANCE}": json.dumps(record).encode()}, "other id")
    status, why = marks()[ROW]
    assert status == "self-reported" and "signature.key_id is not the record's key_id" in why, why


def test_a_request_with_a_duplicate_key_is_refused_at_admission(hub_env, monkeypatch):
    from ratio_bench.leaderboard.admission import admit

    doc = json.dumps({
        "schema": "ratio-leaderboard-request/1", "model": "org/m", "revision": "main", "sha": SHA,
        "setup": "generic", "prompts": {"query": "", "document": ""}, "precision": "float32",
        "submitter": "ada", "submitted_at": stamp(now_utc()), "status": "PENDING", "attempts": 0,
    })  # fmt: skip
    # a person reading it sees ada's request; the parser used to keep the last value, the pull request's author
    body = doc.replace('"submitter": "ada"', f'"submitter": "ada", "submitter": "{USER}"').encode()
    pr = hub_env.api(TOKEN).create_commit(
        REQUESTS, [CommitOperationAdd(f"org/m/{SHA}_generic.json", body)], commit_message="submit",
        repo_type="dataset", create_pr=True,
    )  # fmt: skip
    (verdict,) = admit(REQUESTS, 10**9, lambda line: None)
    assert verdict.num == pr.pr_num and not verdict.admitted and "duplicate key" in verdict.reason


def test_a_key_listed_twice_keeps_its_first_name_and_the_cap_warns(tmp_path):
    key = generate_key(tmp_path / "k.key")
    first, grander = key.listing("gpu-1", "ada"), key.listing("official-reference-gpu", "mallory")
    trusted, notes = parse_trusted(
        json.dumps({"schema": TRUSTED_SCHEMA, "workers": [first, grander]}).encode()
    )
    assert trusted[key.key_id].name == "gpu-1"
    assert any("listed already as 'gpu-1'" in n for n in notes), notes
    many = [first] * (MAX_TRUSTED + 1)
    _, notes = parse_trusted(json.dumps({"schema": TRUSTED_SCHEMA, "workers": many}).encode())
    assert any(f"over the cap of {MAX_TRUSTED:,}" in n for n in notes), notes[-1:]


# --- 4. fail closed, not down ---------------------------------------------------------------------------


def test_a_malformed_policy_makes_rows_self_reported_and_admission_refuses_to_act(hub_env, small_release):
    from ratio_bench.leaderboard.admission import admit

    _verified_row(hub_env, small_release)
    hub_env.keeper_commit({"policy.json": b'{"schema": "ratio-queue-policy/1", "maintainers": ['})
    status, why = marks()[ROW]  # the board is still read (it used to exit 1, the served board 502)
    assert status == "self-reported" and "policy.json" in why, why
    assert "policy.json" in dict(read_queue(REQUESTS).rejected)[f"org/tiny/{SHA}_generic.json"]
    hub_env.api(TOKEN).create_commit(
        REQUESTS, [CommitOperationAdd(f"org/m/{SHA}_none.json", b"{}")], commit_message="submit",
        repo_type="dataset", create_pr=True,
    )  # fmt: skip
    with pytest.raises(LeaderboardError, match="policy.json.*nothing done"):
        admit(REQUESTS, 10**9, lambda line: None)
    assert [pr["status"] for pr in hub_env.pull_requests()] == ["open"]


def test_an_unreadable_key_listing_says_so_on_every_row(hub_env, small_release):
    _verified_row(hub_env, small_release)
    hub.commit(RESULTS, "dataset", {TRUSTED_WORKERS: b"\xff\xfe not json"}, "broken")
    status, why = marks()[ROW]
    assert status == "self-reported" and "unreadable" in why and "no worker is trusted" in why, why


# --- 2. admission merges exactly what it reviewed -----------------------------------------------------------


def _victim_and_submission(board, tiny_models) -> tuple[str, str]:
    """A FINISHED request of another user on main, and alice's valid pull request; (victim path, alice's path)."""
    board.set_policy(maintainers=[KEEPER], workers=[KEEPER])
    victim = request("org/victim", "e" * 40)
    queue(victim)
    board.publish("org/tiny", tiny_models["good"])
    from ratio_bench.leaderboard.submit import submit

    with hub.as_user(TOKEN):
        sub = submit("org/tiny", None, "generic", REQUESTS)
    return victim.path, sub.path


def _push_to_pr(board, num: int, victim: str) -> None:
    """Mallory's move between review and merge: the policy made hers, another user's request deleted."""
    from huggingface_hub import CommitOperationDelete

    grab = json.dumps(
        {"schema": "ratio-queue-policy/1", "maintainers": [USER], "max_pending": 100000}
    ).encode()
    board.api(TOKEN).create_commit(
        REQUESTS, [CommitOperationAdd("policy.json", grab), CommitOperationDelete(victim)],
        commit_message="more", repo_type="dataset", revision=f"refs/pr/{num}",
    )  # fmt: skip


def test_a_push_after_review_is_not_merged(hub_env, tiny_models, monkeypatch):
    from ratio_bench.leaderboard import admission

    victim, _ = _victim_and_submission(hub_env, tiny_models)
    check_model = admission._check_model

    def pushed_meanwhile(r, req):  # the push lands while the model is being checked
        check_model(r, req)
        _push_to_pr(hub_env, 1, victim)

    monkeypatch.setattr(admission, "_check_model", pushed_meanwhile)
    (verdict,) = admission.admit(REQUESTS, 10**9, lambda line: None)
    assert not verdict.admitted and "changed after it was reviewed" in verdict.reason
    (pr,) = hub_env.pull_requests()
    assert pr["status"] == "closed" and pr["comments"][-1].startswith(
        "Refused: it changed after it was reviewed"
    )
    main = hub_env.files(REQUESTS)
    assert victim in main and json.loads(main["policy.json"])["maintainers"] == [KEEPER]


def test_a_merge_that_changed_more_than_was_reviewed_is_reverted(hub_env, tiny_models, monkeypatch):
    """The push lands after the head check, just before the merge (the Hub's merge takes no expected head): the
    merge commit is compared with the review and reverted."""
    from ratio_bench.leaderboard import admission

    victim, path = _victim_and_submission(hub_env, tiny_models)
    api = hub.api()
    merge = type(api).merge_pull_request

    def late_push(self, *args, **kwargs):
        _push_to_pr(hub_env, 1, victim)
        return merge(self, *args, **kwargs)

    monkeypatch.setattr(type(api), "merge_pull_request", late_push)
    (verdict,) = admission.admit(REQUESTS, 10**9, lambda line: None)
    assert not verdict.admitted and "reverted" in verdict.reason and "policy.json" in verdict.reason
    main = hub_env.files(REQUESTS)
    assert victim in main and path not in main
    assert json.loads(main["policy.json"])["maintainers"] == [KEEPER]
    assert hub_env.pull_requests()[0]["comments"][-1].startswith("Reverted:")
    assert read_queue(REQUESTS).find(victim).status == "FINISHED"


def test_junk_pull_requests_past_the_authors_cap_are_closed_before_any_review(hub_env, monkeypatch):
    from ratio_bench.leaderboard import admission

    hub_env.set_policy(maintainers=[KEEPER], workers=[KEEPER], max_open=3)
    for i in range(12):
        hub_env.api(TOKEN).create_commit(
            REQUESTS, [CommitOperationAdd(f"junk/{i}.json", b"{}")], commit_message=f"junk {i}",
            repo_type="dataset", create_pr=True,
        )  # fmt: skip
    reads, changes = [], []
    read, diff = admission.read_queue, admission.ledger.pull_request_changes
    monkeypatch.setattr(admission, "read_queue", lambda repo: reads.append(repo) or read(repo))
    monkeypatch.setattr(admission.ledger, "pull_request_changes", lambda *a: changes.append(a[1]) or diff(*a))
    verdicts = admission.admit(REQUESTS, 10**9, lambda line: None)
    assert len(verdicts) == 12 and not any(v.admitted for v in verdicts)
    assert changes == [1, 2, 3]  # only the author's first 3 are reviewed
    assert all("more than 3 pull requests open" in v.reason for v in verdicts[3:])
    assert len(reads) == 1  # the queue is read once: nothing was merged, main did not move
    assert {pr["status"] for pr in hub_env.pull_requests()} == {"closed"}


# --- repositories that say what they are -------------------------------------------------------------------


def test_admission_submit_and_the_worker_refuse_the_wrong_repository(hub_env, small_release, tiny_models):
    from ratio_bench.leaderboard import worker
    from ratio_bench.leaderboard.admission import admit
    from ratio_bench.leaderboard.submit import submit

    hub_env.publish("org/tiny", tiny_models["good"])
    with pytest.raises(LeaderboardError, match="results repository, not a queue"):
        admit(RESULTS, 10**9, lambda line: None)
    with pytest.raises(LeaderboardError, match="results repository, not a queue"):
        submit("org/tiny", None, "generic", RESULTS)
    same = worker.WorkerOptions(RESULTS, RESULTS, small_release, "local", "w1", key=hub_env.key)
    with pytest.raises(LeaderboardError, match="both name"):
        worker.preflight(same, lambda line: None)
    hub_env.set_policy(maintainers=[KEEPER])
    swapped = worker.WorkerOptions(RESULTS, REQUESTS, small_release, "local", "w1", key=hub_env.key)
    with pytest.raises(LeaderboardError, match="it holds policy.json, so it is a queue"):
        worker.preflight(swapped, lambda line: None)


def test_a_worker_warns_at_start_when_its_key_is_not_listed(hub_env, small_release, tmp_path):
    from ratio_bench.leaderboard import worker

    said = []
    listed = worker.WorkerOptions(REQUESTS, RESULTS, small_release, "local", "w1", key=hub_env.key)
    worker.preflight(listed, said.append)
    assert said == []
    stranger = generate_key(tmp_path / "stranger.key")
    worker.preflight(
        worker.WorkerOptions(REQUESTS, RESULTS, small_release, "local", "w1", key=stranger), said.append
    )
    assert len(said) == 1 and f"key {stranger.key_id} is not listed" in said[0] and "self-reported" in said[0]


# --- keys, verify -------------------------------------------------------------------------------------------


def test_a_key_file_readable_by_others_or_not_a_file_is_refused_in_one_line(tmp_path):
    import os
    import threading

    from ratio_bench.leaderboard.provenance import ProvenanceError, load_key

    path = tmp_path / "worker.key"
    generate_key(path)
    path.chmod(0o644)
    with pytest.raises(ProvenanceError, match=r"readable by others \(mode 0644\).*chmod 600"):
        load_key(path)
    fifo = tmp_path / "fifo.key"
    os.mkfifo(fifo)
    outcome = []

    def load() -> None:
        try:
            load_key(fifo)
        except ProvenanceError as e:
            outcome.append(str(e))

    reader = threading.Thread(target=load, daemon=True)
    reader.start()
    reader.join(10)
    if reader.is_alive():  # it would wait for a writer for ever: let it go so the test can end
        with open(fifo, "wb"):
            pass
        reader.join(10)
        pytest.fail("load_key waited on a FIFO")
    assert outcome and "not a regular file" in outcome[0]


def test_verify_cuts_a_long_row_name_and_reports_a_too_big_signed_file(hub_env, small_release, tmp_path):
    from ratio_bench.core.errors import UsageError
    from ratio_bench.leaderboard.provenance import MAX_HASHED_BYTES, sha256

    folder = _verified_row(hub_env, small_release)
    results = RepoRef(RESULTS, None, "--results")
    with pytest.raises(UsageError) as named:
        verify("org/" + "x" * 5000 + ":generic", results, REQUESTS)
    assert len(str(named.value)) < 600 and "5,012 characters" in str(named.value)
    local = tmp_path / "download" / folder
    for path, data in hub_env.files(RESULTS).items():
        if path.startswith(folder + "/"):
            (local / path[len(folder) + 1 :]).parent.mkdir(parents=True, exist_ok=True)
            (local / path[len(folder) + 1 :]).write_bytes(data)
    (local / "runs").mkdir(exist_ok=True)
    with open(local / "runs" / "big.bin", "wb") as fh:  # 2 GB, sparse: nothing is written
        fh.truncate(2 << 30)
    record = json.loads((local / PROVENANCE).read_bytes())
    record["files"]["runs/big.bin"] = sha256(b"")
    (local / PROVENANCE).write_text(json.dumps(hub_env.key.sign(record)))
    (report,) = verify(str(local), results, REQUESTS)
    line = next(line for line in report.lines() if "hash runs/big.bin" in line)
    assert f"over the {MAX_HASHED_BYTES:,} bytes" in line and "missing" not in line, line


# --- eval results name the benchmark scored -------------------------------------------------------------------


def test_eval_results_only_for_the_benchmark_scored_at_its_commit(hub_env, small_release):
    """A worker that scored a local release used to propose results naming the official benchmark, with the
    release's version as its revision."""
    from ratio_bench.dataset.release import Release
    from ratio_bench.evaluation.entry import hub_eval
    from ratio_bench.leaderboard.hub_results import eval_results_for, repo_results

    _verified_row(hub_env, small_release)  # the worker's record names "local release"
    tasks = hub_eval.benchmark_tasks(Release.open(small_release).manifest)
    results = repo_results(RepoRef(RESULTS, None, "--results"), REQUESTS)
    assert [r for r in results.results if r.verified]
    assert eval_results_for(results, "ratio-bench/ratio", tasks) == []
    dataset = "ratio-bench/ratio@" + "d" * 40
    hub.commit(RESULTS, "dataset", _resign(hub_env, FOLDER, hub_env.key, dataset=dataset), "hub dataset")
    results = repo_results(RepoRef(RESULTS, None, "--results"), REQUESTS)
    (found,) = eval_results_for(results, "ratio-bench/ratio", tasks)
    item = next(iter(found.files.values()))
    assert b"revision: " + b"d" * 40 in item
    assert eval_results_for(results, "other/benchmark", tasks) == []


def test_the_queue_policy_is_read_at_main_whatever_revision_is_read(hub_env):
    """Who may write the queue is read at main's head even when another revision is read."""
    hub_env.set_policy(maintainers=[KEEPER], workers=[KEEPER])
    old = hub.head(REQUESTS, "dataset")
    hub_env.keeper_commit({"policy.json": b"{}"})  # no schema: not a queue's policy
    assert "schema" in (read_queue(REQUESTS, old).problem or "")


def test_a_clean_mark_from_a_cut_off_the_submitter_typed_says_so():
    """A submitter-typed cut-off of 1900-01-01 marks every snapshot clean; the mark says whose claim it is."""
    from types import SimpleNamespace

    from tests.helpers.entries import ranked_entry

    from ratio_bench.evaluation.board.cells import split_text
    from ratio_bench.evaluation.board.leaderboard import parse_entry
    from ratio_bench.evaluation.board.view import COLUMNS
    from ratio_bench.leaderboard.job import SUBMITTER

    (cutoff_column,) = [c for c in COLUMNS if c.name == "training_cutoff"]

    def shown(source: str) -> tuple[str, str]:
        doc = ranked_entry("org/m:generic", {"address": [1]}, split="test_2026_05",
                           training_data_cutoff="1900-01-01", training_data_cutoff_source=source,
                           model_meta={"training_cutoff": "1900-01-01"})  # fmt: skip
        entry = parse_entry(json.dumps(doc).encode())
        return split_text(entry), cutoff_column.text(SimpleNamespace(entry=entry))

    assert shown(SUBMITTER) == (
        "test_2026_05 (clean by the cut-off 1900-01-01 the submitter stated)",
        "1900-01-01 (submitter's claim)",
    )
    assert shown("the model card") == ("test_2026_05 (clean)", "1900-01-01")


def test_the_maintainers_list_and_revoke_worker_keys_with_one_command(board, tmp_path):
    """Issue 45: ``ratio leaderboard workers add|remove|list`` instead of an inline upload; duplicates refused,
    ``added_by`` the signed-in maintainer, the file's history on main the record."""
    from tests.helpers.cli import assert_user_error

    key = generate_key(tmp_path / "gpu-2.key")
    line = json.dumps(key.listing("gpu-2", "typed-by-anyone"))

    def workers(*args: str):
        return board.ratio("leaderboard", "workers", *args, "--results", RESULTS, env=board.keeper_env)

    added = workers("add", line)
    assert added.code == 0, added.err
    listing = json.loads(board.files(RESULTS)[TRUSTED_WORKERS])
    assert listing["schema"] == TRUSTED_SCHEMA and listing["workers"][-1]["added_by"] == KEEPER
    assert_user_error(workers("add", line), "listed already as 'gpu-2'")
    other = generate_key(tmp_path / "other.key")
    assert_user_error(
        workers("add", other.public_key, "--name", "gpu-2"), "another key is listed under that name"
    )
    shown = workers("list")
    assert shown.code == 0 and f"{key.key_id}  gpu-2  (added by {KEEPER})" in shown.out
    assert f"List worker key {key.key_id} (gpu-2) by {KEEPER}" in shown.out and f"by {KEEPER}:" in shown.out
    assert workers("remove", key.key_id).code == 0
    assert key.key_id not in board.files(RESULTS)[TRUSTED_WORKERS].decode()
    assert_user_error(workers("remove", key.key_id), "not listed")
    assert board.key.key_id in board.files(RESULTS)[TRUSTED_WORKERS].decode()  # the others stay


def test_an_entry_naming_a_key_twice_is_rejected_not_read_as_its_last_value():
    from tests.helpers.entries import ranked_entry

    from ratio_bench.evaluation.board.leaderboard import parse_entry
    from ratio_bench.evaluation.entry.record import SubmissionError

    data = json.dumps(ranked_entry("org/m:generic", {"address": [1]})).encode()
    with pytest.raises(SubmissionError, match="duplicate key 'model'"):
        parse_entry(data.replace(b"{", b'{"model": "famous/model:generic", ', 1))


def test_a_workers_admission_round_is_bounded_so_a_flood_never_holds_up_its_claims(hub_env):
    from ratio_bench.leaderboard import admission

    hub_env.set_policy(maintainers=[KEEPER], workers=[KEEPER], max_open=50)
    for i in range(6):
        hub_env.api(TOKEN).create_commit(
            REQUESTS, [CommitOperationAdd(f"junk/{i}.json", b"{}")], commit_message=f"junk {i}",
            repo_type="dataset", create_pr=True,
        )  # fmt: skip
    said = []
    verdicts = admission.admit(REQUESTS, 10**9, said.append, max_reviews=2)
    assert [v.num for v in verdicts] == [1, 2] and "#3 and later: left open for the next round" in said[-1]
    assert [pr["status"] for pr in hub_env.pull_requests()] == ["closed"] * 2 + ["open"] * 4
