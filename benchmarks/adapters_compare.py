"""Paired comparison of two ``ratio score --out`` entries on the same queries (training/adapters/README.md).

    python benchmarks/adapters_compare.py BASE.json ADAPTED.json [--metric mrr_at_10]

Prints a Markdown table: per relation the queries, both figures (%), the difference and its paired 95% bootstrap
interval (evaluation/scoring/uncertainty.py: queries resampled together, 1,000 resamples, seed 0) and the p-value.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from ratio_bench.core.relations import RELATIONS
from ratio_bench.evaluation.entry.record import Scored
from ratio_bench.evaluation.scoring.uncertainty import compare, interval


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("base", type=Path)
    parser.add_argument("adapted", type=Path)
    parser.add_argument("--metric", default="mrr_at_10")
    args = parser.parse_args()
    docs = [json.loads(p.read_text(encoding="utf-8")) for p in (args.base, args.adapted)]
    base, adapted = (Scored.of_document(d) for d in docs)
    print(f"| relation | queries | {docs[0]['model']} | {docs[1]['model']} | difference [95% CI] | p |")
    print("|---|---:|---:|---:|---:|---:|")
    for rel in RELATIONS:
        if rel not in base.results or rel not in adapted.results:
            continue
        cells = []
        for entry in (base, adapted):
            figure = entry.results[rel][args.metric]
            ci = interval(entry, rel, args.metric)
            cells.append(f"{100 * figure:.1f}" + (f" [{100 * ci.low:.1f}-{100 * ci.high:.1f}]" if ci else ""))
        c = compare(adapted, base, rel, args.metric)
        diff = (
            f"{100 * c.difference:+.1f} [{100 * c.low:+.1f}, {100 * c.high:+.1f}]"
            if c.reason == ""
            else c.reason
        )
        p = f"{c.p_value:.3f}" if c.p_value is not None else ""
        print(f"| {rel} | {base.n_queries[rel]:,} | {cells[0]} | {cells[1]} | {diff} | {p} |")


if __name__ == "__main__":
    main()
