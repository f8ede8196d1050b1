"""Training and validation data of one relation, read from a release folder (as written by ``ratio dataset build``).

Train pairs come from ``data/<relation>/train-*.parquet``; validation reuses the scorer's reader
(:func:`ratio_bench.evaluation.scoring.evaluate.load_split`), so a model is selected on exactly the queries and the
full shared candidate corpus it would be scored on. The test split is never opened here.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow.compute as pc

from ratio_bench.core import cutoffs
from ratio_bench.core.cutoffs import Cutoff
from ratio_bench.dataset.release import DatasetError, Release
from ratio_bench.evaluation.scoring.evaluate import SplitData, load_split, sample_queries

TRAIN_COLUMNS = ["query_id", "query", "gold_id", "gold", "paper_id"]


@dataclass
class TrainPairs:
    query_ids: list[str]
    queries: list[str]
    gold_ids: list[str]
    golds: list[str]
    paper_ids: list[str]
    available: int  # pairs in the release before any cap

    def __len__(self) -> int:
        return len(self.queries)


@dataclass(frozen=True)
class DatasetInfo:
    path: str
    name: str
    version: str
    manifest_sha256: str

    def as_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "name": self.name,
            "version": self.version,
            "manifest_sha256": self.manifest_sha256,
        }


def dataset_info(root: str | Path) -> DatasetInfo:
    """Name, version and manifest hash of a release: the identity a summary records."""
    release = Release.open(root)
    return DatasetInfo(str(release.root), release.name, release.version, release.manifest_sha256)


def train_partition_cutoff(root: str | Path, relations: Sequence[str]) -> Cutoff:
    """The last day of the train partition a model learns from: the build config's ``splits.train.end`` as the
    manifest records it, else the latest ``work_date_end`` of the train queries of ``relations`` (a release
    built without an end date), else unknown (a release without work dates)."""
    release = Release.open(root)
    what = f"{release.name} {release.version}".strip()
    splits = release.config.get("splits")
    train = splits.get("train") if isinstance(splits, dict) else None
    end = train.get("end") if isinstance(train, dict) else None
    if end is not None:
        try:
            day = dt.date.fromisoformat(str(end))
        except ValueError:
            raise DatasetError(
                f"{release.shown}: manifest field config.splits.train.end {str(end)[:40]!r} is not a date; "
                "rebuild the release with `ratio dataset build`",
                value=release.root,
            ) from None
        return Cutoff(day, f"train partition end of {what} (config.splits.train.end)")
    try:
        ends = [
            pc.max(release.queries(rel, "train", ["work_date_end"]).column(0)).as_py() for rel in relations
        ]
    except (
        DatasetError
    ):  # shards without work dates (a hand-made release): nothing says when its papers are from
        ends = []
    ends = [e for e in ends if e is not None]
    if not ends:
        return cutoffs.unknown(f"{what} records no train partition end and no work dates")
    return Cutoff(
        max(ends), f"latest work_date_end of the train queries of {what} (no partition end recorded)"
    )


def load_train_pairs(root: str | Path, relation: str, cap: int | None = None, seed: int = 13) -> TrainPairs:
    """The relation's train pairs; with ``cap``, a seeded uniform sample of that many (in file order)."""
    release = Release.open(root)
    table = release.queries(relation, "train", TRAIN_COLUMNS)
    if not table.num_rows:
        raise DatasetError(
            f"{release.shown}: no train split for {relation} (data/{relation}/train-*.parquet)",
            value=release.root,
        )
    cols = {c: table.column(c).to_pylist() for c in TRAIN_COLUMNS}
    n = len(cols["query"])
    if cap is not None and cap < n:
        keep = np.sort(np.random.default_rng(seed).choice(n, size=cap, replace=False))
        cols = {c: [v[i] for i in keep] for c, v in cols.items()}
    return TrainPairs(cols["query_id"], cols["query"], cols["gold_id"], cols["gold"], cols["paper_id"], n)


def load_validation(
    root: str | Path,
    relation: str | Sequence[str],
    sample: dict[str, int] | None = None,
    seed: int = 13,
) -> SplitData:
    """The validation queries of ``relation`` (or of several) and the partition's whole candidate corpus; with
    ``sample`` (a config's ``validation_sample``), ``queries`` seeded queries per relation and, if given, a
    pool of ``candidates``: every sampled query's gold plus seeded others."""
    relations = [relation] if isinstance(relation, str) else list(relation)
    data = load_split(root, "validation", relations)
    for rel in relations:
        if not data.queries[rel].ids:
            raise DatasetError(f"{root}: no validation queries for {rel}; model selection needs them")
    if sample:
        data = sample_queries(data, sample["queries"], seed)
        if "candidates" in sample:
            data = _sample_pool(data, sample["candidates"], seed)
    return data


def _sample_pool(data: SplitData, size: int, seed: int) -> SplitData:
    """The golds of ``data``'s queries and seeded other candidates, ``size`` in all (more if the golds are
    more), in corpus order: every query can still find its gold."""
    golds = {g for q in data.queries.values() for g in q.golds}
    keep = np.array([i for i, c in enumerate(data.corpus_ids) if c in golds], dtype=np.int64)
    others = np.setdiff1d(np.arange(len(data.corpus_ids)), keep)
    extra = np.random.default_rng(seed).choice(
        others, size=max(0, min(size - len(keep), len(others))), replace=False
    )
    rows = np.sort(np.concatenate([keep, extra])).tolist()
    return replace(
        data,
        corpus_ids=[data.corpus_ids[i] for i in rows],
        corpus_texts=[data.corpus_texts[i] for i in rows],
        corpus_roles=[data.corpus_roles[i] for i in rows],
    )
