"""Exact inner-product search with faiss: a GPU index when one is available, chunked queries on CPU.

Exactness matters for a benchmark (approximate indexes change the numbers with their parameters); at the
spec's 404k-candidate test corpus a flat index is still cheap (see benchmarks/search.py).
"""

from __future__ import annotations

import numpy as np


def _gpu_available(faiss) -> bool:
    return hasattr(faiss, "get_num_gpus") and faiss.get_num_gpus() > 0


def exact_search(
    corpus: np.ndarray, queries: np.ndarray, k: int, chunk: int = 4096, use_gpu: bool | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Top-``k`` corpus rows by inner product for each query: (scores, indices), both (n_queries, k).

    Inputs must be float32 and, for cosine similarity, L2-normalised by the caller. Ties are broken by the
    lower corpus index (faiss's flat index keeps insertion order), so results are deterministic.
    """
    import faiss

    corpus = np.ascontiguousarray(corpus, dtype=np.float32)
    queries = np.ascontiguousarray(queries, dtype=np.float32)
    k = min(k, corpus.shape[0])
    index = faiss.IndexFlatIP(corpus.shape[1])
    if use_gpu is None:
        use_gpu = _gpu_available(faiss)
    if use_gpu:
        index = faiss.index_cpu_to_all_gpus(index)
    index.add(corpus)
    scores = np.empty((queries.shape[0], k), dtype=np.float32)
    ids = np.empty((queries.shape[0], k), dtype=np.int64)
    for start in range(0, queries.shape[0], chunk):
        s, i = index.search(queries[start : start + chunk], k)
        scores[start : start + chunk], ids[start : start + chunk] = s, i
    return scores, ids
