"""Vector indexes for serving: exact (a flat inner-product index kept in memory) or approximate (faiss HNSW/IVF).

Scoring stays exact (``exact_search``); a search service answers one query at a time and may trade a little
recall for speed on a large corpus. How much is measured when the index is built: recall@10 of the approximate
index against exact search, and the per-query speed-up, over a fixed sample of the corpus's own sentences
encoded as queries (each query's own sentence is left out of both lists, so the trivial match does not count).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from ratio_bench.core import extras
from ratio_bench.core.errors import RatioError
from ratio_bench.retrieval.search import exact_search
from ratio_bench.serve.options import ANN_KINDS

faiss = extras.lazy("faiss")

HNSW_M, HNSW_EF_CONSTRUCTION, HNSW_EF_SEARCH = 32, 80, 64
IVF_NPROBE = 32
RECALL_K = 10
SAMPLE_QUERIES = 200


def ann_params(kind: str, n: int) -> dict[str, int]:
    """The settings an index of ``kind`` over ``n`` vectors is built and searched with (kept in the manifest)."""
    if kind == "hnsw":
        return {"M": HNSW_M, "efConstruction": HNSW_EF_CONSTRUCTION, "efSearch": HNSW_EF_SEARCH}
    if kind == "ivf":
        nlist = max(1, min(n // 39, int(4 * np.sqrt(n))))  # faiss wants >= 39 training points per list
        return {"nlist": nlist, "nprobe": min(IVF_NPROBE, nlist)}
    raise ValueError(f"unknown ANN kind {kind!r}; choose from {ANN_KINDS}")


def flat_index(vectors: np.ndarray):
    """Exact inner-product index held in memory (built once per server, not once per query)."""

    index = faiss.IndexFlatIP(vectors.shape[1])
    index.add(np.ascontiguousarray(vectors, dtype=np.float32))
    return index


def build_ann(vectors: np.ndarray, kind: str):
    """An approximate inner-product index of ``kind`` over L2-normalised ``vectors``."""

    x = np.ascontiguousarray(vectors, dtype=np.float32)
    params = ann_params(kind, x.shape[0])
    if kind == "hnsw":
        index = faiss.IndexHNSWFlat(x.shape[1], params["M"], faiss.METRIC_INNER_PRODUCT)
        index.hnsw.efConstruction = params["efConstruction"]
        index.add(x)
    else:
        quantizer = faiss.IndexFlatIP(x.shape[1])
        index = faiss.IndexIVFFlat(quantizer, x.shape[1], params["nlist"], faiss.METRIC_INNER_PRODUCT)
        index.train(x)
        index.add(x)
    configure(index, kind)
    return index


def configure(index, kind: str) -> None:
    """Search-time settings, which faiss does not store in the index file."""
    if kind == "hnsw":
        index.hnsw.efSearch = HNSW_EF_SEARCH
    elif kind == "ivf":
        index.nprobe = min(IVF_NPROBE, index.nlist)


def save(index, path) -> None:
    faiss.write_index(index, str(path))


def load(path, kind: str, shape: tuple[int, int]):
    """The ANN file of an index whose vectors have ``shape``; a damaged or mismatched file is one error line."""

    try:
        index = faiss.read_index(str(path))
    except RuntimeError as e:  # faiss's message spans lines: keep its last statement
        reason = " ".join(str(e).rsplit("Error: ", 1)[-1].split())
        raise RatioError(
            f"{path}: not a readable faiss index ({reason}); rebuild the index with `ratio index`"
        ) from e
    if (index.ntotal, index.d) != tuple(shape):
        raise RatioError(
            f"{path}: {index.ntotal} vectors of dimension {index.d}, the index has {shape[0]} of {shape[1]}; "
            "rebuild the index with `ratio index`"
        )
    configure(index, kind)
    return index


def sample_rows(n: int, size: int = SAMPLE_QUERIES) -> np.ndarray:
    """A fixed sample of row numbers (the same for the same corpus size)."""
    return np.sort(np.random.default_rng(0).choice(n, size=min(size, n), replace=False))


@dataclass
class AnnReport:
    kind: str
    recall_at_10: float
    build_s: float
    exact_ms: float  # per query, one at a time
    ann_ms: float

    @property
    def speedup(self) -> float:
        return self.exact_ms / self.ann_ms if self.ann_ms else float("inf")


def per_query_ms(index, queries: np.ndarray, k: int) -> float:
    start = time.perf_counter()
    for q in queries:
        index.search(q[None, :], k)
    return 1000 * (time.perf_counter() - start) / max(len(queries), 1)


def _without_self(ids: np.ndarray, rows: np.ndarray, k: int) -> list[set[int]]:
    return [set([int(i) for i in row if i != own and i >= 0][:k]) for row, own in zip(ids, rows, strict=True)]


def measure(vectors: np.ndarray, ann, kind: str, build_s: float, queries: np.ndarray, rows: np.ndarray):
    """Recall@10 of ``ann`` against exact search and the per-query times of both, on ``queries``.

    ``rows`` are the corpus rows the queries were taken from (their own sentence is excluded from both lists).
    """
    _, exact_ids = exact_search(vectors, queries, RECALL_K + 1)
    _, ann_ids = ann.search(np.ascontiguousarray(queries, dtype=np.float32), RECALL_K + 1)
    truth, found = _without_self(exact_ids, rows, RECALL_K), _without_self(ann_ids, rows, RECALL_K)
    recall = float(np.mean([len(t & f) / len(t) for t, f in zip(truth, found, strict=True) if t]))
    flat = flat_index(vectors)
    return AnnReport(
        kind,
        recall,
        build_s,
        per_query_ms(flat, queries, RECALL_K),
        per_query_ms(ann, queries, RECALL_K),
    )
