"""``ratio segment`` and ``ratio corpus``: the corpus stage from the command line."""

from __future__ import annotations

import argparse
from pathlib import Path

from ratio_bench.corpus.options import add_reader_options


def register(sub: argparse._SubParsersAction) -> None:
    corpus = sub.add_parser("corpus", help="corpus stage: stats, export, segment").add_subparsers(
        dest="corpus_command", required=True
    )
    p = corpus.add_parser("segment", help="split stdin paragraphs into sentences, one per line (verbatim)")
    p.add_argument("--segmenter", default="ratio", help="ratio (default), blingfire, pysbd or syntok")
    p.set_defaults(func="ratio_bench.corpus.commands:cmd_segment")

    p = corpus.add_parser("stats", help="read, section and segment a corpus; print the stage report")
    p.add_argument("paths", nargs="+", type=Path, help="corpus files or folders")
    add_reader_options(p)
    p.add_argument("--rejects", type=Path, help="write one JSON line per rejected or flagged record here")
    p.add_argument("--json", type=Path, help="also write the report as JSON")
    p.add_argument("--limit", type=int, default=0, help="stop after N papers (0: all)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func="ratio_bench.corpus.commands:cmd_corpus_stats")

    p = corpus.add_parser("export", help="write normalised, sectioned, segmented papers as Parquet")
    p.add_argument("paths", nargs="+", type=Path, help="corpus files or folders")
    p.add_argument(
        "--out", type=Path, required=True, help="Parquet file (schema: corpus.records.PAPER_SCHEMA)"
    )
    p.add_argument("--rejects", type=Path, help="write one JSON line per rejected or flagged record here")
    p.add_argument("--quiet", action="store_true")
    add_reader_options(p)
    p.set_defaults(func="ratio_bench.corpus.commands:cmd_corpus_export")
