"""A metric of one query from its gold's rank alone.

Ratio's mined queries have one gold each, so every metric of a query is a function of that gold's rank: an entry
keeps one rank per query instead of its run, a board re-derives an entry's figures from those ranks, and the
bootstrap resamples ranks. It lives with the entry (below scoring) because the entry record checks its own
figures with it.
"""

from __future__ import annotations

import math
from functools import lru_cache


@lru_cache(maxsize=1 << 16)  # pure; a board checks a thousand entries' ranks against their figures
def gold_rank_metric(name: str, rank: int) -> float:
    """Metric ``name`` (``mrr_at_10``...) of a query with one gold candidate at ``rank`` (1-based; 0: not
    retrieved). With one gold per query every metric is a function of that rank alone (``scoring.metrics.query_metrics``
    gives the same numbers), which is why an entry can keep one rank per query instead of its run, and the
    bootstrap (``scoring.uncertainty``) can resample ranks instead of queries."""
    kind, _, k_text = name.rpartition("_at_")
    k = int(k_text)
    hit = 1 <= rank <= k
    if kind in ("recall", "hit_rate"):
        return 1.0 if hit else 0.0
    if kind == "precision":
        return 1.0 / k if hit else 0.0
    if kind in ("mrr", "map"):
        return 1.0 / rank if hit else 0.0
    if kind == "ndcg":
        return 1.0 / math.log2(rank + 1) if hit else 0.0
    raise ValueError(f"unknown metric {name!r}")
