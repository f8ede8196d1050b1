"""Bootstrap intervals of one entry: the rank-histogram draw of ``evaluation.uncertainty`` vs resampling queries.

An entry of 8,000 queries, 6 metrics and 1,000 resamples: ``uncertainty.intervals`` draws each resample's rank
histogram (resamples x 101 ranks, whatever the number of queries); ``scipy.stats.bootstrap`` (percentile)
resamples the 8,000 queries per metric, and a plain Python loop does so one resample at a time. Usage:
    python benchmarks/bootstrap.py [--queries 8000] [--resamples 1000]
"""

from __future__ import annotations

import argparse
import random
import time

import numpy as np
from rich.console import Console
from scipy.stats import bootstrap

from ratio_bench.evaluation.entry.ranks import gold_rank_metric
from ratio_bench.evaluation.scoring import uncertainty

METRICS = ["mrr_at_10", "ndcg_at_10", "recall_at_1", "recall_at_10", "map_at_10", "mrr_at_100"]


def naive(ranks: list[int], resamples: int, seed: int) -> dict[str, tuple[float, float]]:
    """The textbook loop: draw n queries with replacement, average each metric, sort, read the percentiles."""
    rng, n, out = random.Random(seed), len(ranks), {}
    values = {m: [gold_rank_metric(m, r) for r in ranks] for m in METRICS}
    means: dict[str, list[float]] = {m: [] for m in METRICS}
    for _ in range(resamples):
        picks = [rng.randrange(n) for _ in range(n)]
        for m in METRICS:
            means[m].append(sum(values[m][i] for i in picks) / n)
    for m, ms in means.items():
        ms.sort()
        out[m] = (ms[int(0.025 * resamples)], ms[int(0.975 * resamples) - 1])
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--queries", type=int, default=8000)
    ap.add_argument("--resamples", type=int, default=1000)
    args = ap.parse_args()
    ranks = (
        np.random.default_rng(0).choice(101, size=args.queries, p=np.r_[0.3, np.full(100, 0.007)]).tolist()
    )
    entry = {"per_query": {"broaden": {"query_ids_sha256": "0" * 64, "gold_rank": ranks}}}
    settings = uncertainty.Bootstrap(resamples=args.resamples)
    start = time.perf_counter()
    ours = uncertainty.intervals(entry, "broaden", METRICS, settings)
    ours_s = time.perf_counter() - start
    start = time.perf_counter()
    for m in METRICS:
        values = np.array([gold_rank_metric(m, r) for r in ranks])
        bootstrap((values,), np.mean, n_resamples=args.resamples, method="percentile", rng=0)
    scipy_s = time.perf_counter() - start
    start = time.perf_counter()
    theirs = naive(ranks, args.resamples, 0)
    naive_s = time.perf_counter() - start
    console = Console()
    console.print(
        f"{args.queries:,} queries x {len(METRICS)} metrics x {args.resamples:,} resamples: rank histogram "
        f"{ours_s:.3f} s | scipy.stats.bootstrap (percentile) {scipy_s:.3f} s | Python loop {naive_s:.1f} s "
        f"({naive_s / ours_s:,.0f}x)"
    )
    m = "mrr_at_10"
    console.print(
        f"MRR@10 interval: rank histogram [{ours[m].low:.4f}, {ours[m].high:.4f}] | "
        f"Python loop [{theirs[m][0]:.4f}, {theirs[m][1]:.4f}]"
    )


if __name__ == "__main__":
    main()
