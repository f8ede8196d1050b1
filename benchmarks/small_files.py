"""Many small files (issue 49, item 5): `ratio mine run` on a folder of one-paper Parquet files, with each file
its own task on one worker (what `ratio mine` did before tasks grouped units: ``--task-mb 1e-6 --workers 1``)
and with today's defaults (units grouped up to 8 MB per task, one worker per core).

The files are made by the library's scale generator (ratio_bench.corpus.scale) from a seeded sample of the
shared corpus's full texts, outside the repository. Prints a table; writes --json. Usage:
    python benchmarks/small_files.py [--corpus ../shared/corpus] [--data /work/scale-data/small]
        [--files 4000] [--before-files 1000]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
from pathlib import Path

import pyarrow.parquet as pq

sys.path.insert(0, str(Path(__file__).resolve().parent))
from measure import file_count, run_measured  # noqa: E402
from ratio_bench.corpus.scale import ScaleSpec, base_sample, write_scaled  # noqa: E402


def make_files(corpus: Path, data: Path, files: int, seed: int = 0) -> Path:
    """``files`` one-paper files: a sample of files/4 full texts, four recombined copies of each."""
    folder = data / f"one-paper-{files}"
    if folder.is_dir() and len(list(folder.glob("*.parquet"))) == files:
        return folder
    shutil.rmtree(folder, ignore_errors=True)
    base = base_sample([corpus], files // 4, seed=seed)
    write_scaled(base, ScaleSpec(factor=4, seed=seed, papers_per_file=1, row_group_papers=1), folder)
    return folder


def subset(folder: Path, n: int) -> Path:
    """The first ``n`` files of ``folder``, as links in a sibling folder."""
    out = folder.with_name(f"{folder.name}-first{n}")
    if not out.is_dir():
        out.mkdir()
        for f in sorted(folder.glob("*.parquet"))[:n]:
            os.link(f, out / f.name)
    return out


def mine(corpus: Path, out: Path, *flags: str) -> dict:
    shutil.rmtree(out, ignore_errors=True)
    cmd = [
        sys.executable,
        "-m",
        "ratio_bench.cli",
        "mine",
        "run",
        "--corpus",
        str(corpus),
        "--out",
        str(out),
        "--quiet",
        *flags,
    ]
    m = run_measured(cmd)
    if m.returncode:
        raise SystemExit(m.output[-3000:])
    stats = json.loads((out / "stats.json").read_text())
    return {
        "files": len(list(corpus.glob("*.parquet"))),
        "flags": " ".join(flags) or "(defaults)",
        "wall_s": round(m.wall_s, 1),
        "peak_rss_mb": round(m.peak_rss_mb),
        "tasks": stats["tasks_planned"],
        "output_files": file_count(out),
        "pairs": sum(stats["tuples"].values()),
        "papers_per_s": round(len(list(corpus.glob("*.parquet"))) / m.wall_s, 1),
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", type=Path, default=Path("../shared/corpus"))
    ap.add_argument("--data", type=Path, default=Path("/work/scale-data/small"))
    ap.add_argument("--files", type=int, default=4000)
    ap.add_argument("--before-files", type=int, default=1000, help="the per-file run on the first N files")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    args.data.mkdir(parents=True, exist_ok=True)
    folder = make_files(args.corpus, args.data, args.files)
    print(
        f"{args.files} one-paper files in {folder} ({sum(f.stat().st_size for f in folder.iterdir()) / 1e6:.0f} MB,"
        f" {sum(pq.ParquetFile(f).metadata.num_rows for f in sorted(folder.iterdir())[:1])} paper each)"
    )
    small = subset(folder, args.before_files)
    rows = [
        mine(small, args.data / "out-before-small", "--task-mb", "1e-6", "--workers", "1"),
        mine(small, args.data / "out-after-small"),
        mine(folder, args.data / "out-after"),
    ]
    cores = len(os.sched_getaffinity(0))
    print(f"machine: {cores} cores available; load average {os.getloadavg()[0]:.1f} at the end")
    head = ["files", "flags", "wall_s", "peak_rss_mb", "tasks", "output_files", "pairs", "papers_per_s"]
    print(" | ".join(head))
    for r in rows:
        print(" | ".join(str(r[h]) for h in head))
    if args.json:
        args.json.write_text(json.dumps({"cores": cores, "runs": rows}, indent=2) + "\n")


if __name__ == "__main__":
    main()
