"""``ratio segment`` and ``ratio corpus``: the corpus stage from the command line."""

from __future__ import annotations

import argparse
import re
import sys
import time
from pathlib import Path

from tqdm import tqdm

from ratio_bench.core.io import RejectLog, write_json
from ratio_bench.core.shards import ShardWriter
from ratio_bench.corpus.options import add_reader_options, reader_settings
from ratio_bench.corpus.pipeline import paper_row, segment_papers
from ratio_bench.corpus.readers import PaperReader
from ratio_bench.corpus.records import PAPER_SCHEMA
from ratio_bench.corpus.segmenters import get_segmenter


def cmd_segment(args: argparse.Namespace) -> int:
    """stdin paragraphs (blank-line separated) -> one sentence per line, verbatim."""

    spans = get_segmenter(args.segmenter)
    text = sys.stdin.read()
    out = sys.stdout
    for para in re.split(r"\n[ \t]*\n", text):
        for a, b in spans(para):
            out.write(" ".join(para[a:b].split("\n")) + "\n")
    return 0


def cmd_corpus_stats(args: argparse.Namespace) -> int:
    start = time.perf_counter()
    with RejectLog(args.rejects) as rejects:
        reader = PaperReader(reader_settings(args), rejects=rejects)
        for i, _ in enumerate(tqdm(segment_papers(reader, args.paths), unit=" papers", disable=args.quiet)):
            if args.limit and i + 1 >= args.limit:
                break
    seconds = time.perf_counter() - start
    reader.report.print(seconds=seconds)
    if args.json:
        write_json(args.json, {**reader.report.as_dict(), "seconds": round(seconds, 2)})
    if args.rejects:
        print(f"rejects: {args.rejects}")
    return 0


def cmd_corpus_export(args: argparse.Namespace) -> int:
    """Write the corpus stage's output (one row per paper, paragraphs with sentences) as Parquet."""

    writer = ShardWriter(args.out, PAPER_SCHEMA, rows_per_group=2_000)
    try:
        with RejectLog(args.rejects) as rejects:
            reader = PaperReader(reader_settings(args), rejects=rejects)
            for seg in tqdm(segment_papers(reader, args.paths), unit=" papers", disable=args.quiet):
                writer.extend([paper_row(seg)])
    except BaseException:
        writer.abort()
        raise
    writer.close()
    print(f"{writer.count:,} papers -> {args.out}")
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    corpus = sub.add_parser("corpus", help="corpus stage: stats, export, segment").add_subparsers(
        dest="corpus_command", required=True
    )
    p = corpus.add_parser("segment", help="split stdin paragraphs into sentences, one per line (verbatim)")
    p.add_argument("--segmenter", default="ratio", help="ratio (default), blingfire, pysbd or syntok")
    p.set_defaults(func=cmd_segment)

    p = corpus.add_parser("stats", help="read, section and segment a corpus; print the stage report")
    p.add_argument("paths", nargs="+", type=Path, help="corpus files or folders")
    add_reader_options(p)
    p.add_argument("--rejects", type=Path, help="write one JSON line per rejected or flagged record here")
    p.add_argument("--json", type=Path, help="also write the report as JSON")
    p.add_argument("--limit", type=int, default=0, help="stop after N papers (0: all)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=cmd_corpus_stats)

    p = corpus.add_parser("export", help="write normalised, sectioned, segmented papers as Parquet")
    p.add_argument("paths", nargs="+", type=Path, help="corpus files or folders")
    p.add_argument(
        "--out", type=Path, required=True, help="Parquet file (schema: corpus.records.PAPER_SCHEMA)"
    )
    p.add_argument("--rejects", type=Path, help="write one JSON line per rejected or flagged record here")
    p.add_argument("--quiet", action="store_true")
    add_reader_options(p)
    p.set_defaults(func=cmd_corpus_export)
