"""The handlers of the ``corpus`` commands (``ratio_bench.corpus.cli`` builds their parsers and names these
handlers as strings; ``cli.handler`` imports this module when one of them runs, so ``--help`` and argument errors
load none of the libraries below)."""

from __future__ import annotations

import argparse
import re
import sys
import time

from tqdm import tqdm

from ratio_bench.core.io import RejectLog, write_json
from ratio_bench.core.shards import ShardWriter
from ratio_bench.corpus.options import reader_settings
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
