"""Scoring retrievers on Ratio: loading a split, metrics, MTEB tasks, the spec's analyses, leaderboard results.

The retrievers themselves (model registry, dense encoder, BM25, exact search, embedding cache) live in
:mod:`ratio_bench.retrieval`, shared with training and the search service.
"""
