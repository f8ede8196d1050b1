"""Scoring one model on a release split: the partition's corpus is encoded once and serves all three relations.

MTEB treats each relation as its own task and re-encodes the shared corpus three times; here the corpus
embeddings are computed once per (model, prompt, corpus) and cached on disk, so a second run of the same model
encodes only what changed. Search is exact (inner product over L2-normalised vectors, i.e. cosine; see
:mod:`ratio_bench.retrieval.search`).
"""

from __future__ import annotations

import time
import zlib
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from ratio_bench.core.relations import RELATIONS
from ratio_bench.dataset.release import DatasetError, Release
from ratio_bench.evaluation.entry.model_meta import EncodeStats, ModelMeta, measure, reset_peak_memory
from ratio_bench.evaluation.scoring.metrics import DEFAULT_KS, evaluate_run
from ratio_bench.retrieval.cache import EmbeddingCache
from ratio_bench.retrieval.registry import ModelSetup
from ratio_bench.retrieval.retriever import Retriever, load_retriever

TOP_K = 100


class Queries(NamedTuple):
    """One relation's queries of a split, aligned: each query's id, text and gold candidate id."""

    ids: list[str]
    texts: list[str]
    golds: list[str]


@dataclass
class SplitData:
    corpus_ids: list[str]
    corpus_texts: list[str]
    corpus_roles: list[str]  # which relation's gold, or which distractor category
    queries: dict[str, Queries]  # relation -> its queries
    manifest: dict[str, Any]


def load_split(root: str | Path | Release, split: str, relations: Sequence[str] = RELATIONS) -> SplitData:
    """Corpus and queries of one split of a release folder (as written by ``ratio dataset build``)."""
    release = root if isinstance(root, Release) else Release.open(root)
    if split not in release.all_splits:
        raise DatasetError(
            f"{release.shown}: no split {split!r}; this release's splits are {', '.join(release.all_splits)}",
            value=release.root,
        )
    corpus = release.corpus(split, ["id", "text", "role"])
    if not corpus.num_rows:
        raise DatasetError(
            f"{release.shown}: split {split!r} has no corpus; choose another --split", value=release.root
        )
    queries = {}
    for rel in relations:
        q = release.queries(rel, split, ["query_id", "query", "gold_id"])
        queries[rel] = Queries(*(q.column(c).to_pylist() for c in ("query_id", "query", "gold_id")))
    if split == "silver" and not any(q.ids for q in queries.values()):
        raise DatasetError(
            f"{release.shown}: no silver split yet; build it with `ratio judge silver --dataset {release.root} ...`",
            value=release.root,
        )
    return SplitData(
        *(corpus.column(c).to_pylist() for c in ("id", "text", "role")), queries, release.manifest
    )


def sample_queries(data: SplitData, n: int, seed: int) -> SplitData:
    """``n`` queries per relation drawn with ``seed`` (all of a relation that has fewer), for a fast look.

    The corpus stays whole: it is the retrieval task's candidate pool, and a smaller pool would make every
    query easier, so a sample's scores estimate the full ones. Each relation draws from its own stream
    (seed, relation name), so ``--relations broaden`` samples the same Broaden queries as all three."""
    queries = {}
    for rel, q in data.queries.items():
        rng = np.random.default_rng([seed, zlib.crc32(rel.encode())])
        keep = np.sort(rng.choice(len(q.ids), size=min(n, len(q.ids)), replace=False))
        queries[rel] = Queries(*([column[i] for i in keep] for column in q))
    return replace(data, queries=queries)


@dataclass
class ScoreResult:
    model: str
    metrics: dict[str, dict[str, float]]  # relation -> metric -> value in [0, 1]
    n_queries: dict[str, int]
    seconds: float
    encode_calls: int = 0  # text lists encoded (cache misses; a chunked corpus counts once)
    cache_hits: int = 0
    texts_encoded: int = 0  # texts the cache did not hold
    runs: dict[str, dict[str, list[str]]] = field(default_factory=dict, repr=False)
    run_scores: dict[str, dict[str, list[float]]] = field(
        default_factory=dict, repr=False
    )  # aligned with runs
    # relation -> query id -> the gold's rank in the run (1-based; 0: not in the top 100): with one gold per query
    # every metric is a function of it, so the entry keeps these for the bootstrap (evaluation.uncertainty)
    gold_ranks: dict[str, dict[str, int]] = field(default_factory=dict, repr=False)
    model_meta: ModelMeta | None = (
        None  # the model's shape, card facts and measured cost (evaluation.model_meta)
    )


def score(
    setup: ModelSetup,
    data: SplitData,
    cache: EmbeddingCache | None = None,
    batch_size: int = 64,
    ks: Sequence[int] = DEFAULT_KS,
    keep_runs: bool = False,
    pools: dict[str, np.ndarray] | None = None,
) -> ScoreResult:
    """Load ``setup`` and score it on every relation of ``data`` (several splits: :mod:`.engine`, which loads
    the model once for all of them)."""
    cache = cache or EmbeddingCache()
    start = time.perf_counter()
    reset_peak_memory()  # the entry's peak memory is this run's
    retriever = load_retriever(setup, cache, batch_size)
    result = rank(retriever, setup.name, data, cache, ks, keep_runs, pools)
    return replace(result, seconds=time.perf_counter() - start, model_meta=measured_meta(setup, retriever))


def rank(
    retriever: Retriever,
    name: str,
    data: SplitData,
    cache: EmbeddingCache | None,
    ks: Sequence[int] = DEFAULT_KS,
    keep_runs: bool = False,
    pools: dict[str, np.ndarray] | None = None,
) -> ScoreResult:
    """Score a loaded ``retriever`` on every relation of ``data``.

    ``cache``: the one the retriever encodes into, whose counts the result reports; None for a retriever
    without one (training validation: weights that change every step are never cached).

    ``pools`` optionally restricts a relation's candidates to some corpus rows (oracle operation filtering);
    dense models then search a subset of the cached corpus embeddings, so nothing is encoded again.
    """
    start = time.perf_counter()
    top_k = max(max(ks), 1)
    runs: dict[str, dict[str, list[str]]] = {}
    run_scores: dict[str, dict[str, list[float]]] = {}
    counts = (
        (lambda: (cache.misses, cache.hits, cache.texts_encoded))
        if cache is not None
        else (lambda: (0, 0, 0))
    )
    misses_before, hits_before, texts_before = counts()
    retriever.index(data.corpus_ids, data.corpus_texts)
    for rel, q in data.queries.items():
        if not q.ids:
            continue
        rows = None if pools is None else pools[rel]
        sc, idx = retriever.search(rel, q.ids, q.texts, top_k, rows)
        runs[rel] = {qid: [data.corpus_ids[j] for j in row] for qid, row in zip(q.ids, idx, strict=True)}
        run_scores[rel] = {qid: [float(x) for x in row] for qid, row in zip(q.ids, sc, strict=True)}
    result = result_of_runs(name, runs, data.queries, ks)
    return replace(
        result,
        seconds=time.perf_counter() - start,
        encode_calls=counts()[0] - misses_before,
        cache_hits=counts()[1] - hits_before,
        texts_encoded=counts()[2] - texts_before,
        runs=runs if keep_runs else {},
        run_scores=run_scores if keep_runs else {},
    )


def measured_meta(setup: ModelSetup, retriever: object) -> ModelMeta:
    """The run's ``model_meta``: a dense retriever's loaded model and what its encoder did in this run."""
    encoder = getattr(retriever, "encoder", None)  # BM25 has none
    stats = EncodeStats(encoder.texts_encoded, encoder.encode_seconds) if encoder is not None else None
    cutoff = setup.cutoff.date.isoformat() if setup.cutoff and setup.cutoff.date else None
    return measure(encoder.model if encoder is not None else None, stats, setup.path, cutoff)


def result_of_runs(
    model: str,
    runs: dict[str, dict[str, list[str]]],
    queries: dict[str, Queries],
    ks: Sequence[int] = DEFAULT_KS,
) -> ScoreResult:
    """Runs (relation -> query id -> ranked candidate ids) against the mined gold: each relation's metrics,
    query count and the gold's rank per query (timing, cache counts and the runs themselves are the caller's)."""
    metrics, counts, ranks = {}, {}, {}
    for rel, (qids, _, golds) in queries.items():
        counts[rel] = len(qids)
        if qids:
            metrics[rel] = evaluate_run(runs[rel], {q: {g} for q, g in zip(qids, golds, strict=True)}, ks)
            ranks[rel] = {q: gold_rank(runs[rel].get(q, []), g) for q, g in zip(qids, golds, strict=True)}
    return ScoreResult(model, metrics, counts, 0.0, gold_ranks=ranks)


def gold_rank(ranked: Sequence[str], gold: str) -> int:
    """Where ``gold`` is in ``ranked`` (1-based), 0 when it was not retrieved."""
    try:
        return ranked.index(gold) + 1
    except ValueError:
        return 0
