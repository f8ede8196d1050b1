"""Custody on the loopback Hub: a private custody repo, a submission scored on the withheld split by a worker
(aggregate figures only, signed with the test entry), the board's withheld column and view, verify's custody
steps, and after the embargo the withheld score reproduced to the digit."""

from __future__ import annotations

import json
import shutil

import pytest
from tests.helpers.cli import assert_user_error, run_ratio
from tests.helpers.corpus import write_jsonl
from tests.helpers.dataset import SNAPSHOTS, snapshot_records, write_config
from tests.leaderboard.conftest import KEEPER_TOKEN, REQUESTS, RESULTS, TOKEN

from ratio_bench.dataset.custody import Custody, custody_path
from ratio_bench.dataset.release import Release
from ratio_bench.evaluation.entry.record import Entry, withheld_doc
from ratio_bench.leaderboard.job import withheld_block

WITHHELD = "test_2022_02"


@pytest.fixture(scope="module")
def withholding(tmp_path_factory):
    """The snapshot release with its newest snapshot (2022-02) withheld into ratio.custody."""
    root = tmp_path_factory.mktemp("withholding")
    (root / "corpus").mkdir()
    write_jsonl(root / "corpus" / "a.jsonl", snapshot_records())
    cfg = write_config(root / "cfg.yaml", root / "corpus", root / "work", snapshots=SNAPSHOTS,
                       custody={"withhold": "newest", "embargo_days": 30})  # fmt: skip
    run = run_ratio("dataset", "build", "--config", cfg, "--out", root / "ratio", "--quiet")
    assert run.code == 0, run.err
    return root / "ratio"


def test_init_makes_a_private_custody_repo_only_its_writers_read(board, withholding):
    from huggingface_hub.errors import RepositoryNotFoundError

    run = board.ratio("leaderboard", "init", "board", env=board.keeper_env)
    assert run.code == 0, run.err
    assert "board/custody: " in run.out and "ratio dataset publish-custody" in run.out
    assert board.api(KEEPER_TOKEN).repo_info("board/custody", repo_type="dataset").private is True
    sent = board.ratio("dataset", "publish-custody", custody_path(withholding), "--repo-id", "board/custody",
                       env=board.keeper_env)  # fmt: skip
    assert sent.code == 0, sent.err
    keeper = board.api(KEEPER_TOKEN).list_repo_files("board/custody", repo_type="dataset")
    assert f"data/address/{WITHHELD}-00000-of-00001.parquet" in keeper
    with pytest.raises(RepositoryNotFoundError):  # a submitter's token: the repo is not there for it
        board.api(TOKEN).list_repo_files("board/custody", repo_type="dataset")
    with pytest.raises(RepositoryNotFoundError):
        board.api(TOKEN).hf_hub_download("board/custody", "manifest.json", repo_type="dataset")
    # a custody folder never goes to a repository anyone can read
    refused = board.ratio("dataset", "publish-custody", custody_path(withholding), "--repo-id", RESULTS,
                          env=board.keeper_env)  # fmt: skip
    assert_user_error(refused, f"--repo-id {RESULTS}", "not a private repository")


@pytest.mark.slow  # ~33 s (submit, admit, a worker scoring public and withheld splits); make test-all runs it
def test_a_submission_scored_on_the_withheld_split_end_to_end(board, tiny_models, withholding, tmp_path):
    release = tmp_path / "ratio"
    shutil.copytree(withholding, release)
    shutil.copytree(custody_path(withholding), tmp_path / "ratio.custody")
    assert board.ratio("leaderboard", "init", "board", env=board.keeper_env).code == 0
    sent = board.ratio("dataset", "publish-custody", tmp_path / "ratio.custody", "--repo-id", "board/custody",
                       env=board.keeper_env)  # fmt: skip
    assert sent.code == 0, sent.err
    sha = board.publish("org/tiny", tiny_models["good"])
    assert board.submit("org/tiny", "--setup", "generic").code == 0
    work = board.worker(release, "--once", "--worker-id", "w1", "--custody", "board/custody")
    assert work.code == 0, work.err
    folder = f"org/tiny/{sha}/generic"
    results = board.files(RESULTS)
    assert f"{folder}/test.json" in results, work.err
    test = json.loads(results[f"{folder}/test.json"])
    held = test["withheld"]
    record = Release.open(release).manifest["withheld"][WITHHELD]
    assert held["split"] == WITHHELD and held["split_sha256"] == record["sha256"]
    assert held["n_queries"] == {"address": 2} and held["n_candidates"] == 8
    low, high = held["interval"]["address"]
    assert low <= held["results"]["address"]["mrr_at_10"] <= high
    assert set(held) == {"split", "split_sha256", "results", "n_queries", "interval", "n_candidates"}
    provenance = json.loads(results[f"{folder}/provenance.json"])
    assert "test.json" in provenance["entries"]  # the withheld figures are signed with the test entry
    # nothing per-query of the withheld split left custody: no file of it, no withheld text or id anywhere
    assert not [p for p in results if WITHHELD in p]
    texts, ids = Custody.open(tmp_path / "ratio.custody").texts()
    blob = b"\n".join(results.values()).decode("utf-8", errors="ignore")
    assert [t for t in texts | ids if t in blob] == []
    # the board: a withheld column, and a view ranked by it, for verified entries only
    self_reported = dict(test, model="someone/else:generic")
    self_reported.pop("reproduce", None)
    board.api().upload_file(path_or_fileobj=json.dumps(self_reported).encode(), repo_id=RESULTS,
                            repo_type="dataset", path_in_repo="someone/else/test.json")  # fmt: skip
    md = tmp_path / "board.md"
    shown = board.ratio("leaderboard", "--from", RESULTS, "--requests", REQUESTS, "--markdown", md)
    assert shown.code == 0, shown.err
    text = md.read_text(encoding="utf-8").replace("\\", "")
    assert "withheld M@10" in text and "### Withheld split" in text
    view = text.split("### Withheld split")[1].split("\n#")[0]
    few = "\u2020"  # two withheld queries: the dagger of a figure on fewer than 30
    figure = f"{100 * held['results']['address']['mrr_at_10']:.1f}{few} [{100 * low:.1f}-{100 * high:.1f}]"
    assert f"| 1 | org/tiny:generic | {figure} (n=2, {WITHHELD}) |" in view, view
    assert "someone/else" not in view  # a self-reported entry's withheld figures: never shown or ranked
    other_row = next(line for line in text.splitlines() if "someone/else:generic" in line)
    assert WITHHELD not in other_row
    # verify names the custody checks
    verify = board.ratio("leaderboard", "verify", f"org/tiny@{sha}:generic", "--results", RESULTS,
                         "--requests", REQUESTS)  # fmt: skip
    assert verify.code == 0, verify.out + verify.err
    for step in (f"ok   custody: test.json withheld {WITHHELD}: figures signed with the entry",
                 "ok   custody: no per-query data: no run, mteb file or ranks of test_2022_02",
                 "ok   custody: reproducible after the embargo"):  # fmt: skip
        assert step in verify.out, verify.out

    # after the embargo: the split goes public as a new version, and the withheld score reproduces to the digit
    released = run_ratio("dataset", "release-withheld", "--dataset", release, "--version", "0.0.2-test")
    assert released.code == 0, released.err
    out = tmp_path / "again.json"
    again = run_ratio("leaderboard", "reproduce", f"org/tiny@{sha}", "--setup", "generic", "--split", WITHHELD,
                      "--dataset", release, "--out", out, env=board.env)  # fmt: skip
    assert again.code == 0, again.err
    mine = json.loads(out.read_text(encoding="utf-8"))
    assert mine["results"] == held["results"]
    assert {r: mine["n_queries"][r] for r in mine["results"]} == held["n_queries"]
    assert mine["dataset"]["split_sha256"] == held["split_sha256"]
    assert (
        withheld_doc(withheld_block(Entry.from_json(mine))) == held
    )  # the interval too, from the public ranks
    print(
        f"withheld {WITHHELD}: custody {held['results']['address']} == released {mine['results']['address']}"
    )


@pytest.mark.slow  # ~15 s (a queued request, then two refused workers); make test-all runs it
def test_a_token_that_cannot_read_the_custody_repo_is_refused_before_any_claim(
    board, tiny_models, withholding
):
    """After a rotation (the old token revoked, or a worker given a token without read access), the worker stops
    at start-up with one line naming --custody; nothing in the queue changes."""
    assert board.ratio("leaderboard", "init", "board", env=board.keeper_env).code == 0
    board.publish("org/tiny", tiny_models["good"])
    assert board.submit("org/tiny", "--setup", "generic").code == 0
    assert board.admit().code == 0
    before = board.requests()
    run = board.ratio(
        "leaderboard",
        "worker",
        "--requests",
        REQUESTS,
        "--results",
        RESULTS,
        "--dataset",
        withholding,
        "--custody",
        "board/custody",
        "--once",
        env=board.env,
    )  # alice's token
    assert_user_error(run, "--custody board/custody")
    assert board.requests() == before
    # a custody folder of another release is refused the same way
    other = run_ratio(
        "leaderboard",
        "worker",
        "--requests",
        REQUESTS,
        "--results",
        RESULTS,
        "--dataset",
        withholding,
        "--custody",
        withholding,
        "--once",
        env=board.keeper_env,
    )
    assert_user_error(other, str(withholding))
