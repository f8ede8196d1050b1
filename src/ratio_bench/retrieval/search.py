"""Exact inner-product search: faiss's flat index, or a chunked torch matmul + top-k on a GPU without faiss-gpu.

Exactness matters for a benchmark (approximate indexes change the numbers with their parameters); at the
spec's 404k-candidate test corpus a flat index is still cheap (see benchmarks/search.py). The backend is chosen
by what is installed: faiss on its GPUs (faiss-gpu), else torch on CUDA, else faiss on the CPU. Both give the
same ranking up to float rounding; ties are broken by the lower corpus index.
"""

from __future__ import annotations

import importlib.util

import numpy as np

from ratio_bench.core import extras

torch = extras.lazy("torch")
# faiss-cpu is a dependency, but a CUDA machine may carry only torch (no faiss wheel for its platform)
faiss = extras.lazy("faiss") if importlib.util.find_spec("faiss") is not None else None

BACKENDS = ("auto", "faiss", "torch")
CPU_BUDGET_BYTES = 1 << 30  # torch on the CPU: corpus block plus one score block
GPU_MEMORY_SHARE = 0.5  # torch on a GPU: share of the free memory a search may take


def exact_search(
    corpus: np.ndarray,
    queries: np.ndarray,
    k: int,
    chunk: int = 4096,
    backend: str = "auto",
    device: str | None = None,
    max_bytes: int | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Top-``k`` corpus rows by inner product for each query: (scores, indices), both (n_queries, k).

    Inputs must be L2-normalised by the caller for cosine similarity. ``chunk`` queries are searched at a
    time. ``backend`` forces ``faiss`` or ``torch``; ``device`` (torch only, default CUDA when available)
    and ``max_bytes`` (torch only: the memory one corpus block and its score block may take; the corpus is
    split into blocks and their top-k merged when it does not fit) exist mainly to test the torch path on a CPU.
    """
    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {BACKENDS}, not {backend!r}")
    corpus = np.ascontiguousarray(corpus, dtype=np.float32)
    queries = np.ascontiguousarray(queries, dtype=np.float32)
    k = min(k, corpus.shape[0])
    if k == 0 or queries.shape[0] == 0:
        return np.empty((queries.shape[0], k), dtype=np.float32), np.empty(
            (queries.shape[0], k), dtype=np.int64
        )
    if backend == "auto":
        backend = "torch" if not _faiss_has_gpu() and _torch_has_cuda() else "faiss"
    if backend == "torch":
        return _torch_search(corpus, queries, k, chunk, device, max_bytes)
    return _faiss_search(corpus, queries, k, chunk)


def _faiss_has_gpu() -> bool:
    """Whether faiss can search on a GPU (False without faiss: a CUDA machine then searches with torch)."""
    return faiss is not None and hasattr(faiss, "get_num_gpus") and faiss.get_num_gpus() > 0


def _torch_has_cuda() -> bool:
    return torch.cuda.is_available()


def _faiss_search(
    corpus: np.ndarray, queries: np.ndarray, k: int, chunk: int
) -> tuple[np.ndarray, np.ndarray]:
    """A flat inner-product index, on all of faiss's GPUs when it has any.

    faiss's heaps return equal scores in no documented order (often the higher index first), so each row is
    re-sorted by (score descending, index ascending).
    """
    if faiss is None:
        raise ImportError("exact search on the CPU needs faiss: pip install faiss-cpu")

    index = faiss.IndexFlatIP(corpus.shape[1])
    if _faiss_has_gpu():
        index = faiss.index_cpu_to_all_gpus(index)
    index.add(corpus)
    scores = np.empty((queries.shape[0], k), dtype=np.float32)
    ids = np.empty((queries.shape[0], k), dtype=np.int64)
    for start in range(0, queries.shape[0], chunk):
        scores[start : start + chunk], ids[start : start + chunk] = index.search(
            queries[start : start + chunk], k
        )
    order = np.lexsort((ids, -scores), axis=-1)
    return np.take_along_axis(scores, order, axis=1), np.take_along_axis(ids, order, axis=1)


def _torch_search(
    corpus: np.ndarray, queries: np.ndarray, k: int, chunk: int, device: str | None, max_bytes: int | None
) -> tuple[np.ndarray, np.ndarray]:
    """``torch.topk`` over query-chunk x corpus-block score matrices; blocks' top-k merged in corpus order.

    Each block's top-k is put in corpus order before a stable descending sort merges it with the running
    top-k (whose rows all come earlier in the corpus), so equal scores keep the lower corpus index.
    """

    dev = torch.device(device or ("cuda" if torch.cuda.is_available() else "cpu"))
    n, dim = corpus.shape
    if max_bytes is None:
        max_bytes = (
            int(torch.cuda.mem_get_info(dev)[0] * GPU_MEMORY_SHARE)
            if dev.type == "cuda"
            else CPU_BUDGET_BYTES
        )
    chunk = max(1, min(chunk, queries.shape[0]))
    block = max(k, min(n, max_bytes // (4 * (dim + chunk))))  # a corpus row and its score column, float32
    best_scores = torch.full((queries.shape[0], 0), float("-inf"), device=dev)
    best_ids = torch.zeros((queries.shape[0], 0), dtype=torch.int64, device=dev)
    q_all = torch.tensor(queries, device=dev)  # a copy: cached vectors are read-only maps
    for b_start in range(0, n, block):
        c = torch.tensor(corpus[b_start : b_start + block], device=dev)
        kb = min(k, c.shape[0])
        scores_b, ids_b = [], []
        for q_start in range(0, queries.shape[0], chunk):
            s, i = torch.topk(q_all[q_start : q_start + chunk] @ c.T, kb, dim=1)
            i, order = torch.sort(i, dim=1)  # corpus order, for the tie rule of the merge
            scores_b.append(torch.gather(s, 1, order))
            ids_b.append(i + b_start)
        cand_scores = torch.cat([best_scores, torch.cat(scores_b)], dim=1)
        cand_ids = torch.cat([best_ids, torch.cat(ids_b)], dim=1)
        best_scores, order = torch.sort(cand_scores, dim=1, descending=True, stable=True)
        best_scores, best_ids = best_scores[:, :k], torch.gather(cand_ids, 1, order[:, :k])
        del c
    return best_scores.cpu().numpy(), best_ids.cpu().numpy()
