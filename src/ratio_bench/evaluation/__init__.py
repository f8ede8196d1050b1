"""Scoring retrievers on Ratio: shared-corpus encoding, exact search, metrics, BM25, MTEB tasks, leaderboard."""
