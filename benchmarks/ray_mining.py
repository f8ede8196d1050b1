"""`ratio mine run` with the local executor and with `--executor ray` (a private cluster Ray starts for the run,
same worker count) on one corpus: wall time, peak RSS of the process tree, and whether the mined rows and
statistics are the same (order-free digests of pairs and distractors; stats.json without its timings).

Usage:
    python benchmarks/ray_mining.py --corpus /work/scale-data/scale-base500-seed0/x16/corpus [--workers 2]
        [--json benchmarks/results/ray-mining-cpu.json]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import sys
import tempfile
from pathlib import Path

import duckdb

sys.path.insert(0, str(Path(__file__).resolve().parent))
from measure import run_measured  # noqa: E402

TIMINGS = {"wall_seconds", "mb_per_second", "task_seconds"}


def digest(folder: Path, sub: str) -> str:
    """sha256 of the folder's rows of ``sub`` in a canonical order (shard layout and row order aside)."""
    rows = duckdb.sql(f"SELECT * FROM read_parquet('{folder / sub}/*.parquet') ORDER BY ALL").fetchall()
    return hashlib.sha256(repr(rows).encode()).hexdigest()


def mine(corpus: Path, out: Path, workers: int, executor: str) -> dict:
    cmd = [sys.executable, "-m", "ratio_bench.cli", "mine", "run", "--corpus", str(corpus), "--out", str(out)]
    m = run_measured([*cmd, "--quiet", "--workers", str(workers), "--executor", executor])
    if m.returncode:
        raise SystemExit(m.output[-3000:])
    stats = json.loads((out / "stats.json").read_text())
    return {
        "executor": executor,
        "workers": workers,
        "wall_s": round(m.wall_s, 1),
        "peak_rss_mb": round(m.peak_rss_mb),
        "tasks": stats["tasks_planned"],
        "tuples": sum(stats["tuples"].values()),
        "pairs_sha256": digest(out, "pairs"),
        "distractors_sha256": digest(out, "distractors"),
        "stats_sha256": hashlib.sha256(
            json.dumps({k: v for k, v in stats.items() if k not in TIMINGS}, sort_keys=True).encode()
        ).hexdigest(),
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", type=Path, required=True)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="ray-mining-", dir=args.corpus.parent))
    try:
        rows = [mine(args.corpus, tmp / ex, args.workers, ex) for ex in ("local", "ray")]
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    same = all(rows[0][k] == rows[1][k] for k in ("pairs_sha256", "distractors_sha256", "stats_sha256"))
    for r in rows:
        print(
            f"{r['executor']:6s} {r['wall_s']:7.1f} s {r['peak_rss_mb']:6d} MB  {r['tasks']} tasks  {r['tuples']:,} tuples"
        )
    print(f"rows and stats identical: {same}")
    if args.json:
        args.json.write_text(
            json.dumps({"corpus": str(args.corpus), "same": same, "runs": rows}, indent=2) + "\n"
        )


if __name__ == "__main__":
    main()
