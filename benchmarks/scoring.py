"""Shared-corpus scoring vs plain MTEB: encode calls and wall time for all three relations of a split.

`ratio score` encodes the partition's corpus once (and caches it); MTEB runs each relation as its own task and
encodes the corpus again for each. Usage:
    python benchmarks/scoring.py [--dataset ratio] [--split test] [--model all-MiniLM-L6-v2]

On a 2-core CPU with MiniLM (~40 texts/s) the dev test split costs ~22 min cold for ratio and ~1 h for mteb.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from rich.console import Console

from ratio_bench.evaluation.scoring.evaluate import load_split, score
from ratio_bench.retrieval.cache import EmbeddingCache
from ratio_bench.retrieval.encoder import DenseEncoder
from ratio_bench.retrieval.registry import resolve


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--dataset", type=Path, default=Path("ratio"))
    ap.add_argument("--split", default="test")
    ap.add_argument("--model", default="all-MiniLM-L6-v2")
    args = ap.parse_args()
    console = Console()
    setup = resolve(args.model)
    data = load_split(args.dataset, args.split)
    n_queries = sum(len(q[0]) for q in data.queries.values())
    counted = {"texts": 0}
    real_encode = DenseEncoder.encode

    def counting(self, texts, prompt, role="document", progress=None):  # DenseEncoder.encode's signature
        counted["texts"] += len(texts)
        return real_encode(self, texts, prompt, role, progress)

    DenseEncoder.encode = counting
    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        first = score(setup, data, cache=EmbeddingCache(Path(tmp)))
        cold = time.perf_counter() - start
        texts_cold = counted["texts"]
        start = time.perf_counter()
        score(setup, data, cache=EmbeddingCache(Path(tmp)))
        warm = time.perf_counter() - start
    console.print(
        f"ratio score, cold cache: {cold:.1f} s, {first.encode_calls} encode calls, {texts_cold:,} texts "
        f"encoded (corpus {len(data.corpus_ids):,} once + {n_queries:,} queries)"
    )
    console.print(f"ratio score, warm cache: {warm:.1f} s, {counted['texts'] - texts_cold:,} texts encoded")
    from ratio_bench.evaluation.scoring.mteb_tasks import score_with_mteb

    start = time.perf_counter()
    theirs = score_with_mteb(setup, args.dataset, args.split, ["address", "broaden", "specify"])
    mteb_secs = time.perf_counter() - start
    console.print(
        f"mteb.evaluate, three tasks: {mteb_secs:.1f} s, corpus encoded 3 times "
        f"({3 * len(data.corpus_ids):,} corpus texts); corpus-side ratio {mteb_secs / cold:.2f}x wall"
    )
    worst = max(
        abs(first.metrics[r][k] - theirs.metrics[r][k])
        for r in first.metrics
        for k in first.metrics[r]
        if k in theirs.metrics[r]
    )
    console.print(f"largest metric difference ratio vs mteb: {worst:.2e}")


if __name__ == "__main__":
    main()
