"""Scoring retrievers on Ratio: loading a split, metrics, MTEB tasks, the spec's analyses, leaderboard results.

The committed files written from the relation records (the submission schema's relation lists, the mteb task
file) are rendered by :mod:`.generated` (``make generate``).

The retrievers themselves (model registry, dense encoder, BM25, exact search, embedding cache) live in
:mod:`ratio_bench.retrieval`, shared with training and the search service.
"""
