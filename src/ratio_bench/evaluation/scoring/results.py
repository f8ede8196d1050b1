"""Result files: our leaderboard format (validated against ``eval/submission.schema.json``) and MTEB's.

A leaderboard entry records the model setup, the release it was scored on (name, version and manifest
checksum, so numbers from different builds are never mixed) and per-relation metrics in [0, 1]. Entries from
other parties are untrusted: :func:`validate_submission` checks them, including what JSON Schema cannot say
(Python's ``json`` reads ``NaN`` and ``Infinity``, which compare as neither below 0 nor above 1).

An entry also keeps ``per_query``: per relation, the gold's rank for each query (aligned to the sorted query
ids, whose SHA-256 it records). That is the data, not a conclusion: the confidence intervals and paired tests of
:mod:`ratio_bench.evaluation.scoring.uncertainty` are computed from it wherever a figure is shown, so the bootstrap's
settings live in one place, a submission cannot carry intervals its ranks do not support, and changing the
number of resamples needs no re-scoring.
"""

from __future__ import annotations

import hashlib
import json
import re
from importlib.metadata import version
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ratio_bench import __version__
from ratio_bench.core import cutoffs
from ratio_bench.core.cutoffs import Cutoff
from ratio_bench.core.errors import RatioError, UsageError
from ratio_bench.core.relations import RELATION_SPECS
from ratio_bench.core.snapshots import is_snapshot
from ratio_bench.dataset.release import manifest_sha256, split_hashes
from ratio_bench.evaluation.entry.record import (  # noqa: F401 - MAIN_SCORE and SubmissionError re-exported
    MAIN_SCORE,
    Dataset,
    Entry,
    Judged,
    PerQuery,
    Sample,
    SubmissionError,
    TrainedFrom,
)
from ratio_bench.retrieval.adapters import QueryAdapters
from ratio_bench.retrieval.encoder import PRECISION
from ratio_bench.retrieval.registry import fingerprint, training_summary

if TYPE_CHECKING:  # scoring pulls numpy and faiss; validating a submission should not
    from ratio_bench.evaluation.scoring.evaluate import ScoreResult
    from ratio_bench.retrieval.registry import ModelSetup

TASK_NAMES = {r.name: r.task_name for r in RELATION_SPECS}
# The metrics every table shows (key in ``results``, column label); the schema requires them.
TABLE_METRICS = (
    ("recall_at_1", "R@1"),
    ("recall_at_10", "R@10"),
    ("mrr_at_10", "M@10"),
    ("mrr_at_100", "M@100"),
)


def leaderboard_entry(
    result: ScoreResult,
    manifest: dict[str, Any],
    split: str,
    tuned_for: str | None = None,
    judged: dict[str, Any] | None = None,
    sample: Sample | None = None,
    *,
    identity: dict[str, Any] | None = None,
    submitter: str | None = None,
    cutoff: Cutoff | None = None,
    candidates: int | None = None,
    hub: str | None = None,
) -> Entry:
    """``tuned_for``: the relation a fine-tuned model was trained for (recorded, and shown next to its name).
    ``judged``: per relation, the run's figures against the release's judged pool at scoring time
    (``evaluation.pool.judged_scores``); the ranking stays on the mined gold. ``sample``: the queries were a
    seeded sample (``ratio score --sample``); such an entry is never ranked (see :func:`validate_submission`).
    ``identity``: what :func:`model_identity` says of the model (its weights' fingerprint, the training config it
    came from), so a card and the board can tell two models of one name apart; ``submitter``: who scored it
    (optional); ``cutoff``: the model's training-data cut-off (recorded with its source, and on a test snapshot
    whether the score is ``clean``: true, false, or null when the cut-off is unknown); ``candidates``: the
    split's pool size (``n_candidates``: the pictures name it); ``hub``: ``ORG/NAME@<sha>`` of a release read from
    the Hub (``dataset.hub``). No clock time: the same model on the same release gives the same bytes (the board orders
    re-scored entries by their file's modification time).

    The record is built here from our own run, so it is not read back through :meth:`Entry.from_json`'s checks
    (a ``--sample`` entry, which those refuse for the board, is a valid run); :meth:`Entry.to_json` writes it."""
    ident = dict(identity or {})
    trained = ident.pop("trained_from", None)
    meta = getattr(result, "model_meta", None)  # a result made without scoring has none
    clean = cutoff is not None and is_snapshot(split)
    return Entry(
        model=result.model,
        dataset=_dataset(manifest, split, hub),
        split=split,
        results={rel: {k: round(v, 6) for k, v in m.items()} for rel, m in result.metrics.items()},
        code_version=__version__,
        n_queries=dict(result.n_queries),
        **ident,  # model_fingerprint and precision (a key the record lacks is a TypeError, not dropped)
        trained_from=TrainedFrom(**trained) if trained else None,
        **(cutoff.fields() if cutoff else {}),
        clean=cutoffs.is_clean(cutoff, split) if clean else None,
        clean_recorded=clean,
        per_query=per_query(result.gold_ranks) if result.gold_ranks else {},
        n_candidates=candidates or None,
        submitter=submitter or None,
        tuned_for=tuned_for or None,
        judged={rel: Judged(**block) for rel, block in (judged or {}).items()},
        sample=sample,
        model_meta=meta,
        model_meta_nulls=tuple(k for k, v in meta.to_json().items() if v is None) if meta is not None else (),
    )


def _dataset(manifest: dict[str, Any], split: str, hub: str | None) -> Dataset:
    """The release build scored: ``split_sha256`` (the scored split's files) and ``split_hashes`` (every
    split's) when the manifest lists the split; a snapshot's hash survives an append, so the board can show the
    entry under the newer version too."""
    hashes = split_hashes(manifest)
    listed = split in hashes
    return Dataset(
        manifest["name"],
        manifest["version"],
        manifest_sha256(manifest),
        hashes[split] if listed else None,
        hashes if listed else None,
        hub or None,
    )


def per_query(gold_ranks: dict[str, dict[str, int]]) -> dict[str, PerQuery]:
    """Each relation's gold ranks in the order of its sorted query ids, with those ids' hash: two entries on
    the same queries carry the same hash, and their i-th ranks are one query's (the paired test's alignment),
    without the entry naming the queries (a few bytes per query)."""
    out = {}
    for rel, ranks in gold_ranks.items():
        ids = sorted(ranks)
        out[rel] = PerQuery(query_ids_sha256(ids), tuple(ranks[q] for q in ids))
    return out


def query_ids_sha256(ids: list[str]) -> str:
    """SHA-256 of the sorted query ids, one per line (UTF-8)."""
    return hashlib.sha256("\n".join(sorted(ids)).encode("utf-8")).hexdigest()


SUBMITTER = re.compile(r"[A-Za-z0-9._@+-]+( [A-Za-z0-9._@+()-]+)*")  # the schema's pattern


def check_submitter(name: str | None) -> None:
    """Refuse a ``--submitter`` the schema would reject, before minutes of scoring."""
    if name is not None and (len(name) > 100 or not SUBMITTER.fullmatch(name)):
        raise UsageError(
            f"--submitter {name!r}: use up to 100 letters, digits, spaces and ._@+- (e.g. --submitter 'Ada Lovelace')"
        )


def model_fingerprint(folder: str | Path) -> str:
    """A model folder's fingerprint as entries record it: its card (README.md) left out, since a card
    re-rendered with the model's results must not change the model it names."""

    return fingerprint(folder, ignore=frozenset({"README.md"}))


def model_identity(setup: ModelSetup) -> dict[str, Any]:
    """``model_fingerprint`` (the weights folder's, as the embedding cache keys it) and ``precision`` (the dtype
    its weights were loaded in: the scorer's choice, never the folder's) for a model in a folder, and
    ``trained_from`` (config file and its sha256) for a ``ratio train`` model; nothing for built-in BM25, whose
    name is its identity."""

    if not setup.path:
        return {}

    identity: dict[str, Any] = {"model_fingerprint": model_fingerprint(setup.path), "precision": PRECISION}
    tuned = training_summary(Path(setup.path).resolve())
    config = tuned[1].get("config") if tuned else None
    if isinstance(config, dict) and config.get("file") and config.get("sha256"):
        identity["trained_from"] = {"config": Path(config["file"]).name, "config_sha256": config["sha256"]}
    if setup.adapters:  # the base weights with per-move query adapters: another model, so another fingerprint
        adapters = QueryAdapters.load(setup.adapters).sha256
        identity["model_fingerprint"] = hashlib.sha256(
            f"{identity['model_fingerprint']}\nadapters {adapters}".encode()
        ).hexdigest()
    return identity


def is_results_file(path: Path) -> bool:
    """Whether ``path`` holds one of our results documents (a leaderboard entry or an MTEB task result), the
    only JSON files ``ratio score --out`` may replace. Anything else, unreadable or not JSON, is the user's."""
    try:
        doc = json.loads(path.read_bytes())
    except (OSError, ValueError):
        return False
    if not isinstance(doc, dict):
        return False
    entry = {"schema_version", "model", "dataset", "results", "main_score"} <= doc.keys()
    mteb = {"task_name", "scores", "dataset_revision"} <= doc.keys() and doc.get(
        "task_name"
    ) in TASK_NAMES.values()
    return entry or mteb


def check_results_path(path: Path) -> None:
    """Refuse to write results over a file that is not ours (before any scoring, and again when writing)."""
    if path.is_dir():
        raise RatioError(f"{path}: is a folder; give a file name such as results.json", value=path)
    if (path.exists() or path.is_symlink()) and not is_results_file(path):
        raise RatioError(
            f"{path}: exists and is not a Ratio results file; nothing was overwritten. Choose another "
            "path, or remove that file yourself",
            value=path,
        )


def entry_label(entry: Entry) -> str:
    """An entry's row name (:attr:`Entry.label`)."""
    return entry.label


def mteb_results(result: ScoreResult, manifest: dict[str, Any], split: str) -> dict[str, dict[str, Any]]:
    """One MTEB-style result document per relation task (``task_name``, ``scores[split]``, ``main_score``)."""
    out = {}
    for rel, metrics in result.metrics.items():
        scores = {k: round(v, 6) for k, v in metrics.items()}
        out[TASK_NAMES[rel]] = {
            "dataset_revision": manifest["version"],
            "task_name": TASK_NAMES[rel],
            "mteb_version": _mteb_version(),
            "scores": {
                split: [
                    {
                        **scores,
                        "main_score": scores[MAIN_SCORE],
                        "hf_subset": "default",
                        "languages": ["eng-Latn"],
                    }
                ]
            },
            "evaluation_time": round(result.seconds, 3),
            "kg_co2_emissions": None,
        }
    return out


def _mteb_version() -> str | None:
    try:
        return version("mteb")
    except Exception:  # noqa: BLE001 - mteb is optional for scoring
        return None


def validate_submission(doc: Any) -> Entry:
    """Check an (untrusted) leaderboard entry document and return its record (:meth:`Entry.from_json`: the
    schema's bounds and the cross-field rules); raises SubmissionError with the path."""
    return Entry.from_json(doc)
