"""Corpus-stage throughput (read, section, clean blocks, segment) per source file, on one core.

Usage: python benchmarks/corpus_throughput.py [--corpus ../shared/corpus] [--mb 40]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

from ratio_bench.corpus.pipeline import segment_papers
from ratio_bench.corpus.readers import PaperReader, corpus_files


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", type=Path, default=Path("../shared/corpus"))
    ap.add_argument("--mb", type=float, default=40.0, help="stop each file after about this many MB (0: all)")
    args = ap.parse_args()
    t = Table(title="Corpus stage throughput (one core)")
    for col in ("file", "papers", "MB", "seconds", "MB/s", "sentences/s"):
        t.add_column(col, justify="left" if col == "file" else "right")
    total_mb = total_s = 0.0
    for f in corpus_files([args.corpus]):
        reader = PaperReader()
        counts = reader.report[f.name]
        start = time.perf_counter()
        for _ in segment_papers(reader, [f]):
            if args.mb and counts.raw_bytes >= args.mb * 1e6:
                break
        secs = time.perf_counter() - start
        mb = counts.raw_bytes / 1e6
        total_mb, total_s = total_mb + mb, total_s + secs
        t.add_row(
            f.name,
            f"{counts.papers_read:,}",
            f"{mb:.1f}",
            f"{secs:.1f}",
            f"{mb / secs:.2f}",
            f"{counts.sentences / secs:,.0f}",
        )
    t.add_row("all", "", f"{total_mb:.1f}", f"{total_s:.1f}", f"{total_mb / total_s:.2f}", "")
    Console().print(t)


if __name__ == "__main__":
    main()
