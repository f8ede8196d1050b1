"""``ratio leaderboard export-mteb``: verified entries in MTEB's results-repository layout, read back by mteb."""

from __future__ import annotations

import json
import math

import pytest

pytest.importorskip("mteb")

from mteb import ResultCache  # noqa: E402
from tests.helpers.entries import ranked_entry  # noqa: E402
from tests.helpers.results_repo import SHA, publish, self_reported, worker_folder  # noqa: E402
from tests.leaderboard.conftest import REQUESTS, RESULTS  # noqa: E402

from ratio_bench.evaluation.scoring import mteb_tasks
from ratio_bench.leaderboard.hub import LeaderboardError  # noqa: E402
from ratio_bench.leaderboard.mteb_export import export_mteb  # noqa: E402

SAVED = {"test": {"address": [1, 2, 0, 5], "specify": [3, 1]}, "test_2026_06": {"address": [2, 1]}}
GENERIC = {"test": {"address": [1, 1, 1, 0]}}


def _publish(board, *more):
    files = worker_folder(board.key, "org/m", "saved", SAVED) | worker_folder(
        board.key, "org/m", "generic", GENERIC
    )
    publish(board, RESULTS, files, *more)


def _read_back(out, relations_splits):
    """mteb's own loader over the exported folder, validating each result against the task and its splits."""
    tasks = [
        mteb_tasks.ratio_tasks([relation], splits=splits)[0] for relation, splits in relations_splits.items()
    ]
    return ResultCache(out).load_results(
        tasks=tasks, include_remote=False, validate_and_filter=True, load_experiments="match_name"
    )


def test_verified_entries_are_exported_in_mtebs_layout_and_read_back_with_the_same_scores(board, tmp_path):
    _publish(board, self_reported())
    out = tmp_path / "results-repo"
    alone = board.ratio("leaderboard", "export-mteb", "--results", RESULTS, "--out", out)
    assert alone.code == 1 and "without the queue nothing is verified" in alone.err
    assert "give the requests repository with --requests" in alone.err
    run = board.ratio(
        "leaderboard", "export-mteb", "--results", RESULTS, "--requests", REQUESTS, "--out", out
    )
    assert run.code == 0, run.err
    model_dir = out / "results" / "org__m" / SHA
    assert sorted(p.relative_to(model_dir).as_posix() for p in model_dir.rglob("*.json")) == [
        "RatioAddress.json", "RatioSpecify.json", "experiments/ratio_setup_generic/RatioAddress.json",
        "experiments/ratio_setup_generic/model_meta.json", "model_meta.json",
    ]  # fmt: skip
    assert sorted(p.name for p in (out / "results").iterdir()) == [
        "org__m"
    ]  # the self-reported entry stays out
    meta = json.loads((model_dir / "model_meta.json").read_text(encoding="utf-8"))
    assert (meta["name"], meta["revision"], meta["reference"]) == (
        "org/m",
        SHA,
        "https://huggingface.co/org/m",
    )

    loaded = _read_back(out, {"address": ["test", "test_2026_06"], "specify": ["test"]})
    runs = {(m.model_name, m.model_revision, m.experiment_name): m for m in loaded.model_results}
    assert set(runs) == {("org/m", SHA, None), ("org/m", SHA, "ratio_setup_generic")}
    expected = {
        (setup, split): ranked_entry(f"org/m:{setup}", by_relation, split=split)["results"]
        for setup, splits in (("saved", SAVED), ("generic", GENERIC))
        for split, by_relation in splits.items()
    }
    for experiment, setup in ((None, "saved"), ("ratio_setup_generic", "generic")):
        for task_result in runs[("org/m", SHA, experiment)].task_results:
            relation = task_result.task_name.removeprefix("Ratio").lower()
            for split, [scores] in task_result.scores.items():
                if (setup, split) not in expected:  # mteb marks a split the run lacks as missing
                    assert math.isnan(scores["main_score"])
                    continue
                ours = expected[(setup, split)][relation]
                assert scores["hf_subset"] == relation and scores["main_score"] == ours["mrr_at_10"]
                assert {k: scores[k] for k in ours} == ours


def test_self_reported_entries_only_when_asked(hub_env, tmp_path):
    _publish(hub_env, self_reported())
    done = export_mteb(RESULTS, tmp_path / "out", include_self_reported=True, requests=REQUESTS)
    mine = [m for m in done if m.name == "self-reported/my-model"]
    assert [(m.revision, m.experiment, m.tasks) for m in mine] == [("f" * 12, None, ("RatioAddress",))]
    loaded = _read_back(tmp_path / "out", {"address": ["test"]})
    assert "self-reported/my-model" in {m.model_name for m in loaded.model_results}


def test_a_local_folder_proves_nothing_and_several_releases_need_a_choice(tmp_path):
    folder = tmp_path / "entries"
    folder.mkdir()
    (folder / "a.json").write_text(json.dumps(ranked_entry("a", {"address": [1]})), encoding="utf-8")
    with pytest.raises(LeaderboardError, match="--include-self-reported"):
        export_mteb(str(folder), tmp_path / "out")
    other = ranked_entry("b", {"address": [2]})
    other["dataset"] |= {"version": "2.0", "manifest_sha256": "e" * 64}
    (folder / "b.json").write_text(json.dumps(other), encoding="utf-8")
    with pytest.raises(LeaderboardError, match=r"several releases \(1.0, 2.0\); choose one with --release"):
        export_mteb(str(folder), tmp_path / "out", include_self_reported=True)
    [only] = export_mteb(str(folder), tmp_path / "out", include_self_reported=True, release="2.0")
    assert only.name == "self-reported/b"
    with pytest.raises(LeaderboardError, match="is a file; give a folder"):
        export_mteb(str(folder), folder / "a.json", include_self_reported=True, release="2.0")
