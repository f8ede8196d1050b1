"""Ratio as mteb sees it: the benchmark object, and the contributed task file against the checks mteb's own test
suite runs on every task (tests/test_tasks/test_metadata.py and test_task_quality.py in embeddings-benchmark/mteb):
metadata filled and valid, no remote code, descriptive statistics committed, and those statistics free of
empty splits, very short texts, duplicates, qrels outside the corpus and train/test leakage."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

pytest.importorskip("mteb")

from mteb import Benchmark  # noqa: E402
from mteb.abstasks import AbsTask  # noqa: E402
from mteb.abstasks.task_metadata import TaskMetadata  # noqa: E402

from ratio_bench.core.relations import RELATIONS  # noqa: E402
from ratio_bench.evaluation.scoring import mteb_tasks

MTEB_DIR = Path(__file__).resolve().parents[3] / "eval" / "mteb"
STATS = MTEB_DIR / "descriptive_stats"
DUPLICATE_TOLERANCE = 0.01  # mteb's _DUPLICATE_RATIO_TOLERANCE


def _task_file():
    spec = importlib.util.spec_from_file_location("ratio_retrieval", MTEB_DIR / "ratio_retrieval.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _file_tasks() -> list[type[AbsTask]]:
    module = _task_file()
    return [
        v
        for v in vars(module).values()
        if isinstance(v, type) and issubclass(v, AbsTask) and v.__module__ == module.__name__
    ]


@pytest.fixture
def stats_in_place(monkeypatch):
    """mteb reads a task's statistics from its own package folder; point it at the committed ones, as if the
    task file and its statistics were merged there."""
    monkeypatch.setattr(
        TaskMetadata,
        "descriptive_stat_path",
        property(lambda meta: STATS / str(meta.type) / f"{meta.name}.json"),
    )


def test_the_benchmark_lists_the_tasks_their_mini_and_latest_snapshot_versions():
    bench = mteb_tasks.ratio_benchmark()
    assert isinstance(bench, Benchmark) and bench.name == "Ratio"
    names = [t.metadata.name for t in bench.tasks]
    tasks = [f"Ratio{r.capitalize()}" for r in RELATIONS]
    assert names == tasks + [f"{t}Mini" for t in tasks] + [f"{t}Latest" for t in tasks]
    by_name = {t.metadata.name: t for t in bench.tasks}
    assert by_name["RatioAddressMini"].metadata.eval_splits == ["mini"]
    assert by_name["RatioBroadenLatest"].metadata.eval_splits == [mteb_tasks.LATEST_SNAPSHOTS["broaden"]]
    assert by_name["RatioSpecifyMini"].metadata.hf_subsets == ["specify"]  # the same configs, another split
    assert mteb_tasks.RatioAddressLatest is type(by_name["RatioAddressLatest"])


def test_a_release_gets_its_own_latest_snapshots_and_mini_tasks_only_where_it_has_them(tmp_path, monkeypatch):
    from tests.helpers.dataset import build_snapshots, snapshot_records

    root = tmp_path / "ratio"
    build_snapshots(tmp_path, snapshot_records(), root)
    tasks = mteb_tasks.benchmark_tasks(root)
    assert [(t.metadata.name, t.metadata.eval_splits) for t in tasks] == [
        ("RatioAddress", ["test"]),
        ("RatioSpecify", ["test"]),
        ("RatioAddressMini", ["mini"]),
        ("RatioAddressLatest", ["test_2022_02"]),
        ("RatioSpecifyMini", ["mini"]),
        ("RatioSpecifyLatest", ["test_2022_01"]),
    ]  # every release has a mini split; broaden has no queries: no broaden task
    assert {t.metadata.dataset["path"] for t in tasks} == {str(root)}
    assert mteb_tasks.RatioAddress.metadata.dataset == mteb_tasks.HUB_DATASET  # the classes are left alone
    # a relation the published release has no snapshot of (a new one): its Latest task on the release's own
    monkeypatch.delitem(mteb_tasks.LATEST_TASKS, "specify")
    latest = [t for t in mteb_tasks.benchmark_tasks(root) if t.metadata.name == "RatioSpecifyLatest"]
    assert [(t.metadata.eval_splits, t.metadata.hf_subsets) for t in latest] == [
        (["test_2022_01"], ["specify"])
    ]


def test_the_task_file_holds_the_package_tasks_and_benchmark():
    module = _task_file()
    for cls in [
        *mteb_tasks.TASKS.values(),
        *mteb_tasks.MINI_TASKS.values(),
        *mteb_tasks.LATEST_TASKS.values(),
    ]:
        assert getattr(module, cls.__qualname__).metadata.model_dump() == cls.metadata.model_dump()
    assert [t.metadata.name for t in module.RATIO.tasks] == [
        t.metadata.name for t in mteb_tasks.ratio_benchmark().tasks
    ]  # the Mini tasks included


def test_every_task_of_the_file_passes_mtebs_metadata_checks(stats_in_place):
    tasks = _file_tasks()
    assert len(tasks) == 9
    for cls in tasks:
        task = cls()
        task.metadata._validate_metadata()
        assert task.metadata.is_filled(), task.metadata.name
        assert task.metadata.dataset.get("trust_remote_code", False) is False
        assert task.metadata.descriptive_stats is not None, f"{task.metadata.name}: no descriptive statistics"
        assert task.metadata.n_samples is not None
        assert set(task.metadata.descriptive_stats) == set(task.metadata.eval_splits)


def _quality_problems(name: str, split: str, stats: dict) -> list[str]:
    """The checks of mteb's test_task_quality.py that apply to a text retrieval task."""
    problems = []
    if stats["num_samples"] == 0:
        problems.append("empty split")
    for field, expected in (("documents", stats["num_documents"]), ("queries", stats["num_queries"])):
        text = stats[f"{field}_text_statistics"]
        if not text["min_text_length"] > 3:
            problems.append(f"short text in {field}")
        if text["unique_texts"] < expected * (1 - DUPLICATE_TOLERANCE) or text["unique_texts"] > expected:
            problems.append(f"duplicates in {field}: {text['unique_texts']} unique of {expected}")
    docs = stats["relevant_docs_statistics"]
    if docs["min_relevant_docs_per_query"] == 0:
        problems.append("queries without relevant documents")
    if docs["unique_relevant_docs"] > stats["num_documents"]:
        problems.append("qrels outside the corpus")
    if stats.get("samples_in_train"):
        problems.append("train/test leakage")
    return [f"{name} ({split}): {p}" for p in problems]


def test_the_committed_statistics_pass_mtebs_quality_checks(stats_in_place):
    problems = []
    for cls in _file_tasks():
        for split, stats in cls.metadata.descriptive_stats.items():
            problems += _quality_problems(cls.metadata.name, split, stats)
            for subset, sub in stats.get("hf_subset_descriptive_stats", {}).items():
                problems += _quality_problems(f"{cls.metadata.name} [{subset}]", split, sub)
    assert problems == []


def test_descriptive_statistics_are_computed_by_mteb_into_our_folder(small_release, tmp_path):
    written = mteb_tasks.write_descriptive_stats(small_release, tmp_path / "stats")
    assert [p.relative_to(tmp_path / "stats").as_posix() for p in written] == [
        "Retrieval/RatioAddress.json",
        "Retrieval/RatioAddressMini.json",
    ]
    stats = json.loads(written[0].read_text(encoding="utf-8"))["test"]
    assert (stats["num_queries"], stats["num_documents"]) == (2, 3)  # the small release's test split
    assert not any(
        Path(mteb_tasks.__file__).parents[4].glob("**/descriptive_stats/Retrieval/RatioAddress.json.tmp")
    )
