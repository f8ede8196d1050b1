"""The retrieval pieces inspiration search is built on, imported here and nowhere else in ``serve``.

Model resolution, the dense encoder, BM25, exact search and the embedding cache belong to the benchmark's
scoring code; keeping every import of them in this one module means a move of that code is a few lines here.
"""

from __future__ import annotations

from ratio_bench.evaluation.bm25 import BM25Retriever
from ratio_bench.evaluation.cache import EmbeddingCache
from ratio_bench.evaluation.evaluate import DenseEncoder
from ratio_bench.evaluation.models import ModelSetup, ModelUnavailableError, fingerprint, resolve
from ratio_bench.evaluation.search import exact_search

__all__ = [
    "BM25Retriever",
    "DenseEncoder",
    "EmbeddingCache",
    "ModelSetup",
    "ModelUnavailableError",
    "exact_search",
    "fingerprint",
    "resolve",
]
