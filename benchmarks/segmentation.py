"""Segmentation benchmark: boundary P/R/F1 on the gold set and MB/s on real paragraphs, per segmenter.

Usage: python benchmarks/segmentation.py [--corpus ../shared/corpus] [--mb 20]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

from ratio_bench.corpus.readers import PaperReader
from ratio_bench.corpus.segmenters import SEGMENTERS, get_segmenter

ROOT = Path(__file__).resolve().parents[1]
GOLD = ROOT / "tests" / "data" / "segmentation_gold.txt"
sys.path.insert(0, str(ROOT))  # the gold set's scorer lives with the tests that check it
from tests.helpers.segmentation_eval import load_gold, score_segmenter  # noqa: E402


def real_paragraphs(corpus: Path, megabytes: float) -> list[str]:
    """Paragraphs from the full-text files, as the corpus stage hands them to the segmenter."""
    out, size = [], 0
    files = [
        corpus / n
        for n in (
            "neurips_2025_fulltext.parquet",
            "neurips_2023_2024_fulltext.parquet",
            "scisummnet_acl_fulltext.parquet",
        )
    ]
    budget = megabytes * 1e6 / len(files)
    for f in files:
        got = 0
        for paper in PaperReader().read_file(f):
            for p in paper.paragraphs:
                out.append(p.text)
                got += len(p.text.encode())
            if got >= budget:
                break
        size += got
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", type=Path, default=Path("../shared/corpus"))
    ap.add_argument("--mb", type=float, default=12.0, help="MB of real paragraphs to time (pysbd is slow)")
    args = ap.parse_args()
    gold = load_gold(GOLD)
    paragraphs = real_paragraphs(args.corpus, args.mb) if args.corpus.is_dir() else []
    mb = sum(len(p.encode()) for p in paragraphs) / 1e6
    t = Table(
        title=f"Sentence segmentation: {sum(g.n_sentences for g in gold)} gold sentences, "
        f"{mb:.1f} MB of real paragraphs"
    )
    for col in ("segmenter", "precision", "recall", "F1", "MB/s", "sentences"):
        t.add_column(col, justify="left" if col == "segmenter" else "right")
    for name in SEGMENTERS:
        try:
            seg = get_segmenter(name)
        except ImportError as e:
            t.add_row(name, "-", "-", "-", "-", str(e)[:40])
            continue
        s = score_segmenter(seg, gold)
        speed, n = "-", 0
        if paragraphs:
            start = time.perf_counter()
            n = sum(len(seg(p)) for p in paragraphs)
            speed = f"{mb / (time.perf_counter() - start):.2f}"
        t.add_row(name, f"{s.precision:.4f}", f"{s.recall:.4f}", f"{s.f1:.4f}", speed, f"{n:,}")
    Console().print(t)


if __name__ == "__main__":
    main()
