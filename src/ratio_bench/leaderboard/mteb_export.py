"""``ratio leaderboard export-mteb``: leaderboard entries in the layout of MTEB's results repository.

MTEB keeps every score in https://github.com/embeddings-benchmark/results as
``results/<model name, "/" as "__">/<revision>/<TaskName>.json`` (a ``TaskResult``) beside ``model_meta.json``
(a ``ModelMeta``); a run with other settings of the same model goes to ``.../<revision>/experiments/<name>/``.
Both are built here with mteb's own classes and written where mteb's ``ResultCache`` puts them, so the export of a
results repository is one folder to open a pull request with, and mteb reads it back as it reads its own.

Only verified entries are exported unless asked otherwise (:func:`ratio_bench.leaderboard.hub_results.is_verified`
decides). A worker's entry names the Hub model, its commit and its prompt setup: the ``saved`` setup (the model's
own prompts, what mteb runs by default) is the revision's main result; ``none``, ``generic`` and ``recommended``
are experiments ``ratio_setup_<setup>``. A self-reported entry keeps its own model name, with its weights'
fingerprint as its revision. The scores are Ratio's (which agree with mteb's, see ``ratio score --via mteb``); the
entry's split names the ``eval_splits`` (test, mini, a dated snapshot).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, get_args

from ratio_bench.core import extras
from ratio_bench.core.io import atomic_open, atomic_path
from ratio_bench.core.snapshots import is_snapshot
from ratio_bench.evaluation.board.leaderboard import load_board
from ratio_bench.evaluation.entry.model_meta import ModelMeta
from ratio_bench.evaluation.entry.record import Entry
from ratio_bench.evaluation.scoring.results import MAIN_SCORE
from ratio_bench.leaderboard.hub import LeaderboardError, RepoRef
from ratio_bench.leaderboard.hub_results import RepoResult, is_verified, repo_results

EXPORTED_SPLITS = (
    "test",
    "mini",
)  # and every dated test snapshot; train, validation and silver are no benchmark
DEFAULT_SETUP = "saved"  # the revision's main result; any other setup is an experiment
NO_REVISION = "no_revision_available"  # mteb's name for an unknown revision
SELF_REPORTED_ORG = "self-reported"  # mteb names models ORG/NAME; an entry's free-form name goes under this
HUB_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,95}/[A-Za-z0-9][A-Za-z0-9._-]{0,95}$")
# An entry's model_meta (the worker's measured model columns) -> ModelMeta's fields.
MODEL_FIELDS = {
    "parameters": "n_parameters",
    "embedding_dim": "embed_dim",
    "max_tokens": "max_tokens",
}


@dataclass(frozen=True)
class ExportedModel:
    name: str
    revision: str
    experiment: str | None
    tasks: tuple[str, ...]
    folder: Path


def load_results(source: str, requests: str | None = None) -> list[RepoResult]:
    """The entries of ``source``: a folder or file of entries (never verified: a local file proves nothing) or a
    results repository ``OWNER/NAME[@REV]`` on the Hub (marked by the board's checks against the queue
    ``requests``; without it nothing is verified)."""
    if Path(source).exists():
        board = load_board(Path(source))
        return [RepoResult("", e, e.model, None, None) for r in board.releases for e in r.entries]
    return list(repo_results(RepoRef.parse(source, "--results"), requests).results)


def chosen(
    results: list[RepoResult], include_self_reported: bool, release: str | None, where: str,
    requests: str | None = None,
) -> list[RepoResult]:  # fmt: skip
    """The entries to export: verified (or all), one release version, benchmark splits only, no carried copies."""
    picked = [
        r for r in results
        if (include_self_reported or is_verified(r.entry)) and r.entry.scored_on is None
        and (r.entry.split in EXPORTED_SPLITS or is_snapshot(r.entry.split))
    ]  # fmt: skip
    if not picked:
        how = (
            "give the requests repository with --requests (without it nothing is verified)"
            if requests is None and not Path(where).exists()
            else "a local folder has none: give the results repository OWNER/NAME and --requests"
        )
        raise LeaderboardError(
            f"--results {where}: no verified entries on a test split to export ({how}; or add "
            "--include-self-reported)"
        )
    versions = sorted({r.entry.dataset.version for r in picked})
    if release is None and len(versions) > 1:
        raise LeaderboardError(
            f"--results {where}: entries of several releases ({', '.join(versions)}); choose one with --release"
        )
    release = release or versions[0]
    if release not in versions:
        raise LeaderboardError(f"--release {release}: no such release among {', '.join(versions)}")
    return [r for r in picked if r.entry.dataset.version == release]


def model_meta(result: RepoResult):
    """mteb's ``ModelMeta`` of the model an entry scored (what the entry knows of it; the rest unknown)."""
    ModelMeta = extras.load("mteb.models.model_meta").ModelMeta

    entry, setup = result.entry, result.setup
    revision = result.revision or (entry.model_fingerprint or "")[:12] or NO_REVISION
    known = model_facts(entry)
    return ModelMeta(
        loader=None, name=mteb_model_name(result.model), revision=revision, release_date=None, languages=None,
        n_parameters=known.get("n_parameters"), memory_usage_mb=known.get("memory_usage_mb"),
        max_tokens=known.get("max_tokens"), embed_dim=known.get("embed_dim"), license=known.get("license"),
        open_weights=True if result.revision else None, adapted_from=known.get("adapted_from"),
        public_training_code=None, public_training_data=None, framework=["Sentence Transformers"],
        reference=f"https://huggingface.co/{result.model}" if result.revision else None,
        similarity_fn_name=None, use_instructions=None if setup is None else setup != "none",
        training_datasets=None,
        experiment_kwargs={"ratio_setup": setup} if setup not in (None, DEFAULT_SETUP) else None,
    )  # fmt: skip


def model_facts(entry: Entry) -> dict[str, Any]:
    """ModelMeta's fields from an entry's ``model_meta`` (validated with the entry): parameters, embedding size,
    max tokens, the weights' memory, the licence when it is one mteb knows, the base model as ``adapted_from``
    when it is one Hub id (the measured throughput and peak memory have no field in mteb's ModelMeta)."""
    meta = entry.model_meta or ModelMeta()
    doc = meta.to_json()
    known = {field: doc[key] for key, field in MODEL_FIELDS.items() if doc.get(key) is not None}
    if meta.parameters:  # mteb's figure: the float32 weights' size, as it computes it for its own models
        known["memory_usage_mb"] = round(meta.parameters * 4 / 2**20)
    if meta.license and meta.license.lower() in mteb_licenses():
        known["license"] = meta.license.lower()
    if meta.base_model and HUB_ID.match(meta.base_model):
        known["adapted_from"] = meta.base_model
    return known


def mteb_licenses() -> frozenset[str]:
    """The licence ids mteb's ``ModelMeta`` accepts (it refuses any other text that is not a URL)."""

    ModelMeta = extras.load("mteb.models.model_meta").ModelMeta

    found: set[str] = set()
    pending = [ModelMeta.model_fields["license"].annotation]
    while pending:
        for arg in get_args(pending.pop()):
            if isinstance(arg, str):
                found.add(arg)
            else:
                pending.append(arg)
    return frozenset(found)


def mteb_model_name(model: str) -> str:
    """``ORG/NAME`` as mteb requires: a Hub id as it is, any other name as ``self-reported/<name, slugged>``."""
    if HUB_ID.match(model):
        return model
    return f"{SELF_REPORTED_ORG}/" + (re.sub(r"[^A-Za-z0-9._-]+", "-", model).strip("-.")[:96] or "model")


def task_results(group: list[RepoResult]) -> list[Any]:
    """One mteb ``TaskResult`` per relation of one model run's entries, each split an mteb split."""
    TaskResult = extras.load("mteb").TaskResult  # noqa: N806 - the eval extra
    mteb_tasks = extras.load("ratio_bench.evaluation.scoring.mteb_tasks")
    by_relation: dict[str, dict[str, dict[str, dict[str, float]]]] = {}
    for result in group:
        for relation, metrics in result.entry.results.items():
            splits = by_relation.setdefault(relation, {})
            if result.entry.split in splits:
                raise LeaderboardError(
                    f"{result.model}: two entries for {relation} on {result.entry.split} "
                    f"({result.path or result.entry.model}); keep one"
                )
            splits[result.entry.split] = {relation: {**metrics, "main_score": metrics[MAIN_SCORE]}}
    out = []
    for relation, scores in sorted(by_relation.items()):
        task = mteb_tasks.TASKS[relation]()
        version = group[0].entry.dataset.version
        task.metadata = task.metadata.model_copy(
            update={
                "dataset": {"path": mteb_tasks.HUB_DATASET["path"], "revision": version},
                "eval_splits": sorted(scores),
            }
        )
        out.append(TaskResult.from_task_results(task, scores, evaluation_time=None))
    return out


def export_mteb(
    source: str, out: Path, *, include_self_reported: bool = False, release: str | None = None,
    requests: str | None = None,
) -> list[ExportedModel]:  # fmt: skip
    """Write the chosen entries of ``source`` under ``out/results/`` in MTEB's layout; returns what was written.
    ``requests``: the queue whose FINISHED requests make a results repository's entries verified."""
    ResultCache = extras.load("mteb").ResultCache

    if out.exists() and not out.is_dir():
        raise LeaderboardError(
            f"--out {out}: is a file; give a folder (a checkout of MTEB's results repository)"
        )
    groups: dict[tuple[str, str | None, str | None], list[RepoResult]] = {}
    for result in chosen(load_results(source, requests), include_self_reported, release, source, requests):
        groups.setdefault((result.model, result.revision, result.setup), []).append(result)
    cache = ResultCache(out)
    exported = []
    for _, group in sorted(groups.items(), key=lambda kv: tuple(map(str, kv[0]))):
        meta = model_meta(group[0])
        written = []
        for task_result in task_results(group):
            path = cache.get_task_result_path(task_result.task_name, meta)
            path.parent.mkdir(parents=True, exist_ok=True)
            with atomic_path(path) as tmp:
                task_result.to_disk(tmp)
            written.append(task_result.task_name)
        with atomic_open(path.parent / "model_meta.json") as fh:
            json.dump(meta.to_dict(), fh, default=str, indent=4)
        exported.append(
            ExportedModel(meta.name, meta.revision, meta.experiment_name, tuple(written), path.parent)
        )
    return exported
