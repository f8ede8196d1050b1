"""Ratio results in the Hub's own formats: ``eval.yaml`` for the dataset repo, ``.eval_results/*.yaml`` for models.

The Hub (https://huggingface.co/docs/hub/eval-results; the field list in
https://github.com/huggingface/hub-docs/blob/main/eval_results.yaml) turns a dataset repo with an ``eval.yaml`` at
its root (``name``, ``description``, ``evaluation_framework``, ``tasks[]`` of ``id`` with optional ``config`` and
``split``) into a benchmark with one leaderboard per task, and shows on a model's page each item of its
``.eval_results/*.yaml`` files: ``dataset.id`` (the benchmark repo), ``dataset.task_id`` (a task of its
``eval.yaml``), ``dataset.revision``, ``value``, ``date``, ``source.url``/``name``/``user`` and ``notes``.
``huggingface_hub.EvalResultEntry`` is the record, and its serialiser writes the items.

Ratio's tasks are mteb tasks, so the names follow mteb's own (``AbsTask.push_eval_to_hub`` and
``TaskResult._to_hf_benchmark_result``): ``evaluation_framework: mteb``, the task id ``RatioAddress`` for a
task's own split (``test``; ``RatioAddressMini`` for ``mini``) and ``RatioAddress_address_test_2026_03`` for a
dated snapshot, and values are the main score (MRR@10) times 100. A result that mteb itself pushes for these tasks
lands on the same leaderboards.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any

import yaml

from ratio_bench.core import extras
from ratio_bench.core.errors import RatioError
from ratio_bench.core.relations import BY_NAME, RELATIONS
from ratio_bench.core.snapshots import is_snapshot
from ratio_bench.core.yamlio import YAMLLimitError, load_yaml, yaml_problem
from ratio_bench.evaluation.entry.record import Entry

huggingface_hub = extras.lazy("huggingface_hub")

EVAL_RESULTS_FOLDER = ".eval_results"  # huggingface_hub.constants.EVAL_RESULTS_FOLDER
EVAL_FILE = "eval.yaml"
FRAMEWORK = "mteb"  # a framework the Hub lists (huggingface.js packages/tasks/src/eval.ts)
MINI_SPLIT = "mini"
MAIN_SCORE = "mrr_at_10"
DEFAULT_SETUP = "generic"  # its file is ratio_<relation>.yaml; another setup's ratio_<relation>_<setup>.yaml
MAX_EVAL_BYTES = 256 * 1024
REPO_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,95}/[A-Za-z0-9][A-Za-z0-9._-]{0,95}$")
TASK_KEYS = {"id", "config", "split"}
EVAL_KEYS = {"name", "description", "evaluation_framework", "tasks"}
RESULT_KEYS = {"dataset", "value", "verifyToken", "date", "source", "notes"}
DATASET_KEYS = {"id", "task_id", "revision"}
SOURCE_KEYS = {"url", "name", "user", "org"}


class HubEvalError(RatioError):
    """An ``eval.yaml`` or ``.eval_results`` file that is not in the Hub's format (file, item and field named)."""


@dataclass(frozen=True)
class BenchmarkTask:
    """One task of the dataset's ``eval.yaml`` (one leaderboard on the Hub): a relation's split."""

    id: str
    config: str
    split: str


@dataclass(frozen=True)
class ResultSource:
    """Where a model's scores come from: the scored model and commit, the prompt setup, and the verified result
    folder the files link to (``url``), with the time it was scored."""

    model: str
    revision: str
    setup: str
    url: str
    scored_at: str | None = None
    user: str | None = None


def task_id(relation: str, split: str) -> str:
    """mteb's name of a relation's split as a Hub task: the task itself for its own split, else task_subset_split."""
    name = BY_NAME[relation].task_name
    if split == "test":
        return name
    if split == MINI_SPLIT:
        return f"{name}Mini"
    return f"{name}_{relation}_{split}"


def benchmark_tasks(manifest: dict[str, Any]) -> list[BenchmarkTask]:
    """The Hub tasks of a release: per relation with test queries, its test split, its mini split if any and each
    dated test snapshot with queries of that relation (from the manifest's row counts)."""
    rows = manifest.get("rows") if isinstance(manifest.get("rows"), dict) else {}
    tasks = []
    for relation in RELATIONS:
        counts = rows.get(relation) if isinstance(rows.get(relation), dict) else {}
        if not counts.get("test"):
            continue
        splits = ["test", *([MINI_SPLIT] if counts.get(MINI_SPLIT) else [])]
        splits += sorted(s for s in counts if is_snapshot(s) and counts[s])
        tasks += [BenchmarkTask(task_id(relation, s), relation, s) for s in splits]
    return tasks


def eval_yaml(manifest: dict[str, Any]) -> bytes:
    """The dataset repo's ``eval.yaml`` for a release, validated before it is returned."""

    tasks = benchmark_tasks(manifest)
    if not tasks:
        raise HubEvalError(
            f"{manifest.get('name')} {manifest.get('version')}: no test queries, no benchmark task"
        )
    doc = {
        "name": "Ratio",
        "description": (
            "Ratio (Retrieval Across Typed Ideation Operations): given a sentence from a scientific paper, "
            "retrieve a sentence from other papers that addresses its problem (Address), restates it more "
            "generally (Broaden) or instantiates it (Specify). One leaderboard per move on the test split, on "
            "its mini sample and on each dated test snapshot; scores are MRR@10 x 100, computed by the mteb "
            f"tasks RatioAddress, RatioBroaden and RatioSpecify. Release {manifest.get('version')}."
        ),
        "evaluation_framework": FRAMEWORK,
        "tasks": [{"id": t.id, "config": t.config, "split": t.split} for t in tasks],
    }
    data = yaml.safe_dump(doc, sort_keys=False, allow_unicode=True, width=110).encode("utf-8")
    validate_eval_yaml(data, EVAL_FILE)
    return data


def eval_results_files(
    entries: list[Entry], dataset_id: str, dataset_revision: str | None, source: ResultSource,
    tasks: list[BenchmarkTask],
) -> dict[str, bytes]:  # fmt: skip
    """``.eval_results/ratio_<relation>[_<setup>].yaml`` per relation scored by ``entries`` (one model and
    setup, one entry per split); an entry's split without a task in ``tasks`` (train, silver) is left out.
    Every file is validated against the Hub's format and ``tasks`` before it is returned."""

    known = {t.id for t in tasks}
    files = {}
    for relation in RELATIONS:
        items = []
        for entry in sorted(entries, key=lambda e: e.split):
            metrics = entry.results.get(relation)
            if metrics is None or task_id(relation, entry.split) not in known:
                continue
            items.append(
                huggingface_hub.EvalResultEntry(
                    dataset_id=dataset_id,
                    task_id=task_id(relation, entry.split),
                    value=round(100 * metrics[MAIN_SCORE], 4),
                    dataset_revision=dataset_revision,
                    date=source.scored_at,
                    source_url=source.url,
                    source_name="Ratio leaderboard, verified run",
                    source_user=source.user,
                    notes=f"setup {source.setup}; {source.model}@{source.revision[:12]}; "
                    f"{entry.queries(relation) or 0} queries; MRR@10 x 100",
                )
            )
        if items:
            path = f"{EVAL_RESULTS_FOLDER}/{results_file_name(relation, source.setup)}"
            files[path] = yaml.safe_dump(
                huggingface_hub.eval_result_entries_to_yaml(items), sort_keys=False
            ).encode("utf-8")
            validate_eval_results(files[path], path, tasks, dataset_id)
    return files


def results_file_name(relation: str, setup: str) -> str:
    return f"ratio_{relation}.yaml" if setup == DEFAULT_SETUP else f"ratio_{relation}_{setup}.yaml"


def _load(data: bytes, where: str) -> Any:
    if len(data) > MAX_EVAL_BYTES:
        raise HubEvalError(f"{where}: {len(data):,} bytes, over the {MAX_EVAL_BYTES:,}-byte limit")
    try:
        return load_yaml(data.decode("utf-8"))
    except UnicodeDecodeError:
        raise HubEvalError(f"{where}: not UTF-8 text") from None
    except YAMLLimitError as e:
        raise HubEvalError(f"{where}: {e.problem}") from None
    except yaml.YAMLError as e:
        raise HubEvalError(f"{where}: not YAML ({yaml_problem(e)})") from None


def _text(doc: dict[str, Any], key: str, where: str, required: bool = True, limit: int = 2000) -> str | None:
    value = doc.get(key)
    if value is None and not required:
        return None
    if not isinstance(value, str) or not value.strip() or len(value) > limit:
        raise HubEvalError(f"{where}: field {key}: expected text of 1 to {limit} characters")
    return value


def _keys(doc: Any, allowed: set[str], where: str) -> dict[str, Any]:
    if not isinstance(doc, dict):
        raise HubEvalError(f"{where}: expected a mapping")
    unknown = sorted(map(str, set(doc) - allowed))
    if unknown:
        raise HubEvalError(
            f"{where}: unknown field {unknown[0]} (the format has {', '.join(sorted(allowed))})"
        )
    return doc


def validate_eval_yaml(data: bytes, where: str = EVAL_FILE) -> list[BenchmarkTask]:
    """The tasks of an ``eval.yaml`` in the Hub's format (required name, description, evaluation_framework and
    tasks; each task an id, optional config and split); a HubEvalError names the first problem."""
    doc = _keys(_load(data, where), EVAL_KEYS, where)
    for key in ("name", "description", "evaluation_framework"):
        _text(doc, key, where)
    if not isinstance(doc.get("tasks"), list) or not doc["tasks"]:
        raise HubEvalError(f"{where}: field tasks: expected a list of tasks")
    tasks, seen = [], set()
    for i, item in enumerate(doc["tasks"]):
        at = f"{where}: tasks[{i}]"
        item = _keys(item, TASK_KEYS, at)
        tid = _text(item, "id", at, limit=200)
        if tid in seen:
            raise HubEvalError(f"{at}: id {tid} appears twice")
        seen.add(tid)
        config = _text(item, "config", at, required=False, limit=200) or "default"
        tasks.append(
            BenchmarkTask(tid, config, _text(item, "split", at, required=False, limit=200) or "test")
        )
    return tasks


def validate_eval_results(
    data: bytes, where: str, tasks: list[BenchmarkTask] | None = None, dataset_id: str | None = None
) -> list[Any]:
    """The items of a ``.eval_results/*.yaml`` file as ``huggingface_hub.EvalResultEntry`` records, after the
    checks the format states (a list; dataset.id a repo id, dataset.task_id, a finite value; a date in ISO-8601;
    source.url an http(s) link when there is a source) and, given ``tasks``, that every task id is one of them."""

    doc = _load(data, where)
    if not isinstance(doc, list) or not doc:
        raise HubEvalError(f"{where}: expected a list of results")
    for i, item in enumerate(doc):
        _check_result(item, f"{where}: item {i}", tasks, dataset_id)
    return huggingface_hub.parse_eval_result_entries(doc)


def _check_result(item: Any, at: str, tasks: list[BenchmarkTask] | None, dataset_id: str | None) -> None:
    item = _keys(item, RESULT_KEYS, at)
    dataset = _keys(item.get("dataset"), DATASET_KEYS, f"{at}: dataset")
    if not isinstance(dataset.get("id"), str) or not REPO_ID.match(dataset["id"]):
        raise HubEvalError(f"{at}: field dataset.id: expected a Hub dataset id OWNER/NAME")
    if dataset_id is not None and dataset["id"] != dataset_id:
        raise HubEvalError(f"{at}: field dataset.id: {dataset['id']} is not the benchmark {dataset_id}")
    task = _text(dataset, "task_id", f"{at}: dataset", limit=200)
    if tasks is not None and task not in {t.id for t in tasks}:
        raise HubEvalError(f"{at}: field dataset.task_id: {task} is no task of the benchmark's {EVAL_FILE}")
    _text(dataset, "revision", f"{at}: dataset", required=False, limit=200)
    value = item.get("value")
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise HubEvalError(f"{at}: field value: expected a finite number")
    if "date" in item:
        _check_date(item["date"], at)
    if "source" in item:
        source = _keys(item["source"], SOURCE_KEYS, f"{at}: source")
        url = _text(source, "url", f"{at}: source", limit=2000)
        if not url.startswith(("https://", "http://")):
            raise HubEvalError(f"{at}: field source.url: expected an http(s) link")
        for key in ("name", "user", "org"):
            _text(source, key, f"{at}: source", required=False, limit=200)
    _text(item, "notes", at, required=False, limit=500)


def _check_date(value: Any, at: str) -> None:
    """ISO-8601 date or date-time (YAML may already have read an unquoted one as a date)."""
    if isinstance(value, (date, datetime)):
        return
    try:
        datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except ValueError:
        raise HubEvalError(f"{at}: field date: expected an ISO-8601 date or date-time") from None
