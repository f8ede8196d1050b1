"""Assembly benchmark: time and peak memory of de-duplication, partitioning and pool building.

Runs the assembly (not the mining) on synthetic mining shards of growing size, each in a fresh process, and
projects the cost to the spec's scale (Table 6: 13.8M training candidates, about 17M mined rows in all).
Usage: python benchmarks/assembly.py [--sizes 500000 2000000]
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import yaml
from rich.console import Console
from rich.table import Table

from ratio_bench.mining.schema import DISTRACTOR_SCHEMA, PAIR_SCHEMA

SPEC_ROWS = 13_787_834 + 3_017_476  # Table 6 training candidates + all mined pairs
WORDS = [f"w{i}" for i in range(5000)]


def synth(folder: Path, rows: int, seed: int = 0) -> None:
    """``rows`` mined rows (1 in 5 a pair, like the spec's 20% golds) over ``rows // 20`` papers."""
    import datetime as dt

    rng = random.Random(seed)
    papers = max(1, rows // 20)
    for kind, schema, share in (("pairs", PAIR_SCHEMA, 0.2), ("distractors", DISTRACTOR_SCHEMA, 0.8)):
        (folder / kind).mkdir(parents=True)
        n = int(rows * share)
        for shard in range(max(1, n // 250_000)):
            m = min(250_000, n - shard * 250_000)
            cols: dict[str, list] = {f.name: [None] * m for f in schema}
            for i in range(m):
                p = rng.randrange(papers)
                day = dt.date(2015, 1, 1) + dt.timedelta(days=p % 4200)
                text = " ".join(rng.choices(WORDS, k=18))
                cols["paper_id"][i] = f"p{p}"
                cols["title"][i] = f"title of paper {p} " * 2
                cols["date_raw"][i], cols["date_start"][i], cols["date_end"][i] = day.isoformat(), day, day
                cols["date_precision"][i], cols["source_file"][i], cols["marker"][i] = "day", "synthetic", "m"
                cols["paragraph_index"][i], cols["sentence_index"][i] = i % 50, i % 7
                if kind == "pairs":
                    cols["relation"][i] = rng.choice(("address", "broaden", "specify"))
                    cols["query"][i], cols["gold"][i] = " ".join(rng.choices(WORDS, k=18)), text
                else:
                    cols["category"][i], cols["text"][i] = "common_irrelevant", text
            pq.write_table(pa.table(cols, schema=schema), folder / kind / f"{shard:05d}.parquet")


RUN = """
import json, resource, sys, time
from pathlib import Path
from ratio_bench.dataset.config import load_config
from ratio_bench.dataset.assemble import assemble
cfg = load_config(sys.argv[1]); t = time.perf_counter()
asm = assemble(cfg, Path(sys.argv[2]), Path(sys.argv[3]))
print(json.dumps({"seconds": time.perf_counter() - t, "queries": asm.report["pairs_unique_placed"],
                  "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", type=int, nargs="+", default=[500_000, 2_000_000])
    args = ap.parse_args()
    cfg = {
        "release": {"name": "bench", "version": "0"},
        "corpus": {"paths": ["."]},
        "lexicon": str(Path(__file__).resolve().parents[1] / "lexicon" / "v1"),
        "seed": 1,
        "splits": {
            "train": {"end": "2024-06-30"},
            "validation": {"start": "2024-07-01", "end": "2024-12-31"},
            "test": {"start": "2025-01-01"},
        },
    }
    t = Table(title="Assembly cost (synthetic mined rows; fresh process each; DuckDB memory_limit 4GB)")
    for col in ("mined rows", "seconds", "peak RSS MB", "s per M rows"):
        t.add_column(col, justify="right")
    per_m = []
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        (tmp / "cfg.yaml").write_text(yaml.safe_dump(cfg))
        for n in args.sizes:
            mined = tmp / f"m{n}"
            synth(mined, n)
            res = subprocess.run(
                [sys.executable, "-c", RUN, str(tmp / "cfg.yaml"), str(mined), str(tmp / f"t{n}")],
                check=True,
                capture_output=True,
                text=True,
                cwd=tmp,
            )
            r = json.loads(res.stdout.strip().splitlines()[-1])
            per_m.append(r["seconds"] / (n / 1e6))
            t.add_row(f"{n:,}", f"{r['seconds']:.1f}", f"{r['rss_mb']:.0f}", f"{per_m[-1]:.1f}")
    Console().print(t)
    Console().print(
        f"projection for the spec's scale ({SPEC_ROWS / 1e6:.1f}M mined rows): about "
        f"{per_m[-1] * SPEC_ROWS / 1e6 / 60:.0f} min on this machine at the largest size's rate; memory "
        f"is bounded by DuckDB's memory_limit (it spills to temp_directory)"
    )


if __name__ == "__main__":
    main()
