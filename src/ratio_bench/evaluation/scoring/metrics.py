"""Retrieval metrics computed from ranked lists and relevance judgments.

Ratio's mined splits have one gold per query, where Recall@k equals Accuracy@k and Hit-Rate@k, Precision@k is
Recall@k / k and MAP@k equals MRR@k (spec appendix C); the functions below are written for any number of
relevant documents so that judge-based evaluation (several accepted candidates per query) uses the same code.
Values are fractions in [0, 1]; tables multiply by 100.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from ratio_bench.evaluation.entry.ranks import gold_rank_metric  # noqa: F401 - scoring's own name for it

DEFAULT_KS = (1, 3, 5, 10, 20, 100)

# The metrics of a query that can have several relevant candidates (judged qrels), with their short labels.
SET_METRICS = (("hit_rate", "HR"), ("precision", "P"), ("ndcg", "nDCG"), ("mrr", "MRR"), ("map", "MAP"))
# How a judge's prompts combine into relevance: hard = every prompt accepts, soft = any does.
AGREEMENTS = ("hard", "soft")


def query_metrics(
    ranked: Sequence[str], relevant: set[str] | frozenset[str], ks: Sequence[int]
) -> dict[str, float]:
    """Metrics of one query: recall, precision, hit rate, MRR, MAP and nDCG at each k."""
    out: dict[str, float] = {}
    hits_at: list[int] = []
    first_hit = None
    n_rel = len(relevant)
    ap_sum = 0.0
    dcg = 0.0
    hits = 0
    max_k = max(ks)
    aps: dict[int, float] = {}
    dcgs: dict[int, float] = {}
    for i, doc in enumerate(ranked[:max_k], start=1):
        if doc in relevant:
            hits += 1
            if first_hit is None:
                first_hit = i
            ap_sum += hits / i
            dcg += 1.0 / math.log2(i + 1)
        hits_at.append(hits)
        if i in ks:
            aps[i], dcgs[i] = ap_sum, dcg
    for k in ks:
        h = hits_at[min(k, len(hits_at)) - 1] if hits_at else 0
        ap = aps.get(k, ap_sum)
        d = dcgs.get(k, dcg)
        ideal = sum(1.0 / math.log2(i + 1) for i in range(1, min(k, n_rel) + 1))
        out[f"recall_at_{k}"] = h / n_rel if n_rel else 0.0
        out[f"precision_at_{k}"] = h / k
        out[f"hit_rate_at_{k}"] = 1.0 if h else 0.0
        out[f"mrr_at_{k}"] = 1.0 / first_hit if first_hit is not None and first_hit <= k else 0.0
        out[f"map_at_{k}"] = ap / min(k, n_rel) if n_rel else 0.0
        out[f"ndcg_at_{k}"] = d / ideal if ideal else 0.0
    return out


def evaluate_run(
    run: Mapping[str, Sequence[str]],
    qrels: Mapping[str, set[str] | frozenset[str]],
    ks: Sequence[int] = DEFAULT_KS,
) -> dict[str, float]:
    """Mean of :func:`query_metrics` over every judged query (a query missing from ``run`` scores zero)."""
    if not qrels:
        raise ValueError("no judged queries to evaluate")
    total: dict[str, float] = {}
    for qid, relevant in qrels.items():
        for name, value in query_metrics(run.get(qid, ()), relevant, ks).items():
            total[name] = total.get(name, 0.0) + value
    return {name: value / len(qrels) for name, value in sorted(total.items())}
