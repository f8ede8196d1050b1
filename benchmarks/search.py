"""Exact search cost vs corpus size on this machine (random 768-d vectors), projected to the spec's test split.

Usage: python benchmarks/search.py [--sizes 10000 100000 400000] [--queries 2000] [--backend auto|faiss|torch]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from rich.console import Console
from rich.table import Table

from ratio_bench.retrieval.search import BACKENDS, exact_search

SPEC_TEST_CANDIDATES = 404_371
SPEC_TEST_QUERIES = 109_509  # all three relations (Table 1)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000, 400_000])
    ap.add_argument("--queries", type=int, default=2000)
    ap.add_argument("--dim", type=int, default=768)
    ap.add_argument(
        "--backend", choices=BACKENDS, default="auto", help="faiss, torch, or whichever is faster here"
    )
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    q = rng.standard_normal((args.queries, args.dim), dtype=np.float32)
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    t = Table(
        title=f"Exact inner-product search, top-100, {args.queries} queries x {args.dim}-d (backend {args.backend})"
    )
    for col in ("corpus", "seconds", "ms / query", "queries / s"):
        t.add_column(col, justify="right")
    per_query = {}
    for n in args.sizes:
        c = rng.standard_normal((n, args.dim), dtype=np.float32)
        c /= np.linalg.norm(c, axis=1, keepdims=True)
        start = time.perf_counter()
        exact_search(c, q, k=100, backend=args.backend)
        secs = time.perf_counter() - start
        per_query[n] = secs / args.queries
        t.add_row(f"{n:,}", f"{secs:.2f}", f"{1000 * per_query[n]:.2f}", f"{args.queries / secs:,.0f}")
    Console().print(t)
    largest = max(per_query)
    proj = per_query[largest] * SPEC_TEST_CANDIDATES / largest * SPEC_TEST_QUERIES
    Console().print(
        f"projection: {SPEC_TEST_QUERIES:,} test queries against {SPEC_TEST_CANDIDATES:,} candidates "
        f"~ {proj / 60:.1f} min on this machine (linear in corpus size from the {largest:,} run)"
    )


if __name__ == "__main__":
    main()
