"""Verified results in the Hub's formats: the dataset's eval.yaml, each model's .eval_results files (content and
validation), and the pull request that proposes them to the model repository."""

from __future__ import annotations

import json

import pytest
import yaml
from tests.helpers.results_repo import DATASET_SHA, SCORED_AT, SHA, publish, self_reported, worker_folder
from tests.leaderboard.conftest import REQUESTS, RESULTS

from ratio_bench.evaluation.entry import hub_eval
from ratio_bench.evaluation.entry.hub_eval import HubEvalError

MANIFEST = {
    "name": "ratio",
    "version": "1.0",
    "rows": {
        "address": {"train": 9, "test": 3, "test_2026_05": 2, "test_2026_06": 1},
        "broaden": {"train": 4},
        "specify": {"test": 2, "mini": 1},
    },
}
BENCHMARK = "ratio-bench/ratio"


def test_eval_yaml_names_one_task_per_relation_split_in_mtebs_naming():
    data = hub_eval.eval_yaml(MANIFEST)
    doc = yaml.safe_load(data)
    assert doc["evaluation_framework"] == "mteb" and doc["name"] == "Ratio"
    assert [(t["id"], t["config"], t["split"]) for t in doc["tasks"]] == [
        ("RatioAddress", "address", "test"),
        ("RatioAddress_address_test_2026_05", "address", "test_2026_05"),
        ("RatioAddress_address_test_2026_06", "address", "test_2026_06"),
        ("RatioSpecify", "specify", "test"),
        ("RatioSpecifyMini", "specify", "mini"),
    ]  # broaden has no test queries in this release: no task
    from mteb._hf_integration.eval_model import (
        HFEvalMeta,
    )  # mteb's own model of the file (extra fields refused)

    assert HFEvalMeta.model_validate(doc).tasks[0].id == "RatioAddress"


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("name: R\ndescription: d\ntasks: [{id: a}]\n", "field evaluation_framework"),
        (
            "name: R\ndescription: d\nevaluation_framework: mteb\ntasks: [{id: a}, {id: a}]\n",
            "id a appears twice",
        ),
        (
            "name: R\ndescription: d\nevaluation_framework: mteb\ntasks: [{id: a, metric: x}]\n",
            "unknown field metric",
        ),
        ("- just a list\n", "expected a mapping"),
    ],
)
def test_a_bad_eval_yaml_names_its_problem(text, problem):
    with pytest.raises(HubEvalError, match=problem):
        hub_eval.validate_eval_yaml(text.encode(), "eval.yaml")


def test_the_hub_docs_examples_validate_and_bad_items_are_refused():
    minimal = b"- dataset:\n    id: Idavidrein/gpqa\n    task_id: gpqa_diamond\n  value: 0.412\n"
    [entry] = hub_eval.validate_eval_results(minimal, "gpqa.yaml")
    assert (entry.dataset_id, entry.task_id, entry.value) == ("Idavidrein/gpqa", "gpqa_diamond", 0.412)
    tasks = hub_eval.benchmark_tasks(MANIFEST)
    item = {"dataset": {"id": BENCHMARK, "task_id": "RatioAddress"}, "value": 41.5, "date": "2026-01-15",
            "source": {"url": "https://hub/x", "name": "run"}}  # fmt: skip
    hub_eval.validate_eval_results(yaml.safe_dump([item]).encode(), "f.yaml", tasks, BENCHMARK)
    bad = {
        "no task of the benchmark": {**item, "dataset": {"id": BENCHMARK, "task_id": "RatioBroaden"}},
        "is not the benchmark": {**item, "dataset": {"id": "other/bench", "task_id": "RatioAddress"}},
        "field value: expected a finite number": {**item, "value": float("nan")},
        "field date": {**item, "date": "last week"},
        "source.url: expected an http": {**item, "source": {"url": "javascript:alert(1)"}},
        "unknown field score": {**item, "score": 1},
    }
    for problem, wrong in bad.items():
        with pytest.raises(HubEvalError, match=problem):
            hub_eval.validate_eval_results(yaml.safe_dump([wrong]).encode(), "f.yaml", tasks, BENCHMARK)
    with pytest.raises(HubEvalError, match="field value"):
        hub_eval.validate_eval_results(b"- dataset: {id: a/b, task_id: t}\n", "f.yaml")


def _publish_results(board, *more: dict[str, bytes]) -> None:
    files = worker_folder(board.key, "org/m", "generic", {"test": {"address": [1, 2, 0], "specify": [1, 1]},
                          "test_2026_06": {"address": [2]}, "silver": {"address": [1]}})  # fmt: skip
    files |= worker_folder(board.key, "org/m", "none", {"test": {"address": [3, 3, 3]}})
    publish(board, RESULTS, files, *more)


def test_verified_entries_become_eval_results_files_linking_their_folder(hub_env):
    from ratio_bench.leaderboard.hub import RepoRef
    from ratio_bench.leaderboard.hub_results import eval_results_for, repo_results

    edited = worker_folder(hub_env.key, "org/edited", "generic", {"test": {"address": [1]}})
    path = f"org/edited/{SHA}/generic/test.json"
    edited[path] = (
        edited[path].replace(b'"model"', b'"model"', 1).replace(b"1.0", b"1.00")
    )  # no longer vouched
    _publish_results(hub_env, self_reported(), edited)
    assert not [
        r for r in repo_results(RepoRef.parse(RESULTS, "--results")).results if r.verified
    ]  # no queue
    results = repo_results(RepoRef.parse(RESULTS, "--results"), REQUESTS)
    [model] = eval_results_for(results, BENCHMARK, hub_eval.benchmark_tasks(MANIFEST))
    assert (model.model, model.revision) == ("org/m", SHA)  # not the self-reported or the edited entry
    assert sorted(model.files) == [
        ".eval_results/ratio_address.yaml", ".eval_results/ratio_address_none.yaml",
        ".eval_results/ratio_specify.yaml",
    ]  # fmt: skip
    items = yaml.safe_load(model.files[".eval_results/ratio_address.yaml"])
    assert [(i["dataset"]["task_id"], i["value"]) for i in items] == [
        ("RatioAddress", 50.0),  # MRR@10 of ranks 1, 2 and none, x 100
        ("RatioAddress_address_test_2026_06", 50.0),
    ]  # silver is no benchmark task: left out
    first = items[0]
    assert first["dataset"] == {"id": BENCHMARK, "task_id": "RatioAddress", "revision": DATASET_SHA}
    assert first["date"] == SCORED_AT and "setup generic" in first["notes"]
    assert (
        first["source"]["url"]
        == f"{hub_env.hub.url}/datasets/{RESULTS}/tree/{results.commit}/org/m/{SHA}/generic"
    )
    none = yaml.safe_load(model.files[".eval_results/ratio_address_none.yaml"])
    assert none[0]["value"] == pytest.approx(100 / 3, abs=1e-4) and "setup none" in none[0]["notes"]


def test_eval_results_command_writes_the_files_for_review(board, tmp_path):
    from tests.helpers.dataset import build_snapshots, snapshot_records

    release = tmp_path / "ratio"
    build_snapshots(tmp_path, snapshot_records(), release)
    _publish_results(board)
    out = tmp_path / "hub"
    alone = board.ratio(
        "leaderboard", "eval-results", "--results", RESULTS, "--dataset", release, "--out", out
    )
    assert alone.code == 0 and "0 model commit(s)" in alone.out and "nothing is verified" in alone.err
    run = board.ratio("leaderboard", "eval-results", "--results", RESULTS, "--requests", REQUESTS,
                      "--dataset", release, "--out", out)  # fmt: skip
    assert run.code == 0, run.err
    assert "1 model commit(s)" in run.out
    tasks = hub_eval.validate_eval_yaml((out / "eval.yaml").read_bytes())
    ids = [
        t.id for t in tasks
    ]  # the test task, its mini task (every release has a mini split), each snapshot's
    assert ids[0] == "RatioAddress" and {"RatioAddressMini", "RatioAddress_address_test_2022_01"} <= set(ids)
    written = sorted(p.name for p in (out / "org/m" / SHA / ".eval_results").iterdir())
    assert written == ["ratio_address.yaml", "ratio_address_none.yaml", "ratio_specify.yaml"]


def test_a_pull_request_proposes_the_files_to_the_model_repo(hub_env):
    from ratio_bench.leaderboard.hub_results import open_eval_results_pr

    api = hub_env.api()
    api.create_repo("org/m")
    commit = api.upload_file(path_or_fileobj=b"{}", path_in_repo="config.json", repo_id="org/m").oid
    files = {".eval_results/ratio_address.yaml": yaml.safe_dump(
        [{"dataset": {"id": BENCHMARK, "task_id": "RatioAddress"}, "value": 50.0}]).encode()}  # fmt: skip
    opened = open_eval_results_pr("org/m", commit, files, results_link="https://example.org/run")
    assert opened.num is not None and f"/org/m/discussions/{opened.num}" in opened.url
    proposed = api.list_repo_files("org/m", revision=f"refs/pr/{opened.num}")
    assert ".eval_results/ratio_address.yaml" in proposed
    assert ".eval_results/ratio_address.yaml" not in api.list_repo_files("org/m")  # main is the authors' call
    [pr] = list(api.get_repo_discussions("org/m"))
    assert pr.is_pull_request and commit[:12] in pr.title


def test_a_pull_request_refuses_files_outside_eval_results(hub_env):
    from ratio_bench.leaderboard.hub import LeaderboardError
    from ratio_bench.leaderboard.hub_results import open_eval_results_pr

    with pytest.raises(LeaderboardError, match="not a file of .eval_results/"):
        open_eval_results_pr("org/m", SHA, {"README.md": b"hi"})
    with pytest.raises(HubEvalError, match="expected a list"):
        open_eval_results_pr("org/m", SHA, {".eval_results/x.yaml": json.dumps({"value": 1}).encode()})


def test_the_workers_one_call_proposes_a_models_verified_results(hub_env, tmp_path):
    from tests.helpers.dataset import build_snapshots, snapshot_records

    from ratio_bench.leaderboard.hub_results import propose_eval_results

    api = hub_env.api()
    api.create_repo("org/m")
    release = tmp_path / "ratio"
    build_snapshots(tmp_path, snapshot_records(), release)
    _publish_results(hub_env)
    assert propose_eval_results(RESULTS, "org/other", SHA, release, requests=REQUESTS) is None  # none for it
    opened = propose_eval_results(
        RESULTS, "org/m", SHA, release, requests=REQUESTS, request_link="https://q/1"
    )
    proposed = api.list_repo_files("org/m", revision=f"refs/pr/{opened.num}")
    assert {".eval_results/ratio_address.yaml", ".eval_results/ratio_specify.yaml"} <= set(proposed)
    opening = api.get_discussion_details("org/m", opened.num).events[0].content
    assert "the submission: https://q/1" in opening and f"/datasets/{RESULTS}/tree/" in opening
