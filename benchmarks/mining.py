"""Mining benchmark: end-to-end `ratio mine` throughput (one file and every full-text file), a naive baseline,
memory at 1x/4x input, 2 workers.

Prints figures; asserts nothing. Usage:
    python benchmarks/mining.py [--corpus ../shared/corpus] [--file neurips_2025_fulltext.parquet]
                                [--baseline-papers 150] [--profile]
"""

from __future__ import annotations

import argparse
import cProfile
import io
import os
import pstats
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pyarrow.parquet as pq
from rich.console import Console
from rich.table import Table

from ratio_bench.lexicon import Lexicon


def mine_subprocess(inputs: list[Path], out: Path, workers: int = 1) -> tuple[float, float, float]:
    """Run `ratio mine` in a fresh process: (wall seconds, MB of raw text, peak RSS MB of the process tree)."""
    cmd = [
        sys.executable,
        "-m",
        "ratio_bench.cli",
        "mine",
        "--corpus",
        *map(str, inputs),
        "--out",
        str(out),
        "--workers",
        str(workers),
        "--quiet",
    ]
    code = (
        "import resource, subprocess, sys, json, time\n"
        "t = time.perf_counter(); subprocess.run(sys.argv[1:], check=True, stdout=subprocess.DEVNULL)\n"
        "w = time.perf_counter() - t\n"
        "print(json.dumps([w, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss]))\n"
    )
    res = subprocess.run([sys.executable, "-c", code, *cmd], check=True, capture_output=True, text=True)
    import json

    wall, rss_kb = json.loads(res.stdout.strip().splitlines()[-1])
    stats = json.loads((out / "stats.json").read_text())
    return wall, stats["corpus"]["total"]["raw_bytes"] / 1e6, rss_kb / 1024


def baseline(texts: list[str], lexicon: Lexicon) -> tuple[float, int]:
    """The straightforward way: pysbd sentences, one regular expression alternating over all markers."""
    import pysbd

    seg = pysbd.Segmenter(language="en", clean=False)
    markers = sorted(lexicon.entries, key=len, reverse=True)
    pattern = re.compile(r"^(?:" + "|".join(re.escape(m) for m in markers) + r"),", re.IGNORECASE)
    hits = 0
    for text in texts:
        for para in re.split(r"\n\s*\n", text):
            sentences = seg.segment(para)
            for prev, cur in zip(sentences, sentences[1:], strict=False):
                if pattern.match(cur.strip()) and prev:
                    hits += 1
    return 0.0, hits


def fulltext_files(corpus: Path) -> list[Path]:
    """Corpus files whose records are mostly full texts (the ``kind`` column), not abstracts."""
    out = []
    for f in sorted(corpus.glob("*.parquet")):
        kinds = pq.read_table(f, columns=["kind"]).column("kind").to_pylist()
        if sum(k == "fulltext" for k in kinds) * 2 > len(kinds):
            out.append(f)
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", type=Path, default=Path("../shared/corpus"))
    ap.add_argument("--file", default="neurips_2025_fulltext.parquet")
    ap.add_argument("--baseline-papers", type=int, default=150)
    ap.add_argument("--profile", action="store_true", help="also print where the time goes (cProfile)")
    ap.add_argument(
        "--skip-scale", action="store_true", help="skip the all-full-text, 4x memory and 2-worker runs"
    )
    args = ap.parse_args()
    src = args.corpus / args.file
    console = Console()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        # 1. end to end on the whole file, output written
        wall, mb, rss = mine_subprocess([src], tmp / "full")
        rows.append((f"ratio mine --workers 1 ({args.file})", mb, wall, rss))
        # 2. same input for both: the first N papers
        table = pq.read_table(src).slice(0, args.baseline_papers)
        sub = tmp / "subset.parquet"
        pq.write_table(table, sub)
        w_sub, mb_sub, _ = mine_subprocess([sub], tmp / "sub")
        start = time.perf_counter()
        _, hits = baseline(table.column("text").to_pylist(), Lexicon.load())
        w_base = time.perf_counter() - start
        rows.append((f"ratio mine, first {args.baseline_papers} papers", mb_sub, w_sub, None))
        rows.append(
            (
                f"baseline pysbd + one regex, same {args.baseline_papers} papers (writes nothing)",
                mb_sub,
                w_base,
                None,
            )
        )
        if not args.skip_scale:
            # 3. every full-text file of the corpus together (the target is stated for real full text)
            full = fulltext_files(args.corpus)
            wf, mbf, rssf = mine_subprocess(full, tmp / "fulltext")
            rows.append((f"ratio mine --workers 1, all {len(full)} full-text files", mbf, wf, rssf))
            # 4. memory flat in corpus size: 1x vs 4x (four copies of the file under other names)
            four = tmp / "x4"
            four.mkdir()
            for i in range(4):
                os.link(src, four / f"copy{i}_{args.file}") if os.stat(src).st_dev == os.stat(
                    tmp
                ).st_dev else shutil.copy(src, four / f"copy{i}_{args.file}")
            w4, mb4, rss4 = mine_subprocess([four], tmp / "m4")
            rows.append(("ratio mine --workers 1, 4x input", mb4, w4, rss4))
            w42, mb42, rss42 = mine_subprocess([four], tmp / "m4w2", workers=2)
            rows.append(("ratio mine --workers 2, 4x input", mb42, w42, rss42))
    t = Table(title="Mining throughput (one process unless stated; wall clock, includes start-up)")
    for col in ("run", "MB", "seconds", "MB/s", "peak RSS MB"):
        t.add_column(col, justify="left" if col == "run" else "right")
    for name, mb_, w, r in rows:
        t.add_row(name, f"{mb_:.1f}", f"{w:.1f}", f"{mb_ / w:.2f}", f"{r:.0f}" if r else "-")
    console.print(t)
    console.print(
        f"speed-up over the baseline on the same input: {w_base / w_sub:.1f}x (baseline found {hits:,} "
        f"marker-initial sentence pairs)"
    )
    if args.profile:
        profile(src, console)


def profile(src: Path, console: Console) -> None:
    """Where one task's time goes, by function (cumulative and own time)."""
    from ratio_bench.mining.step import MineUnits, MiningSettings
    from ratio_bench.mining.units import plan_units

    unit = plan_units([src])[0]
    with tempfile.TemporaryDirectory() as tmp:
        step = MineUnits([unit], tmp, MiningSettings(progress=False))
        prof = cProfile.Profile()
        prof.runcall(step.run, None, 0, 1)
    buf = io.StringIO()
    pstats.Stats(prof, stream=buf).sort_stats("tottime").print_stats(15)
    console.print(buf.getvalue())


if __name__ == "__main__":
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    main()
