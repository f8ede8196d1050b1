"""``ratio cache info`` and ``ratio cache prune``: the parsers of the embedding cache's size report and clean-up
(their handlers are in ``retrieval/commands.py``)."""

from __future__ import annotations

import argparse
from pathlib import Path


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("cache", help="the embedding cache: size report (info) and clean-up (prune)")
    verbs = p.add_subparsers(dest="cache_command", required=True)
    for name, func, text in (
        ("info", "ratio_bench.retrieval.commands:cmd_info", "vectors, bytes and models held"),
        (
            "prune",
            "ratio_bench.retrieval.commands:cmd_prune",
            "compact (drop duplicates, torn tails, old files), optionally to a size or without a model",
        ),
    ):
        q = verbs.add_parser(name, help=text)
        q.add_argument("--cache-dir", type=Path, help="embedding cache (default: ~/.cache/ratio/embeddings)")
        q.set_defaults(func=func)
        if name == "prune":
            q.add_argument("--max-size", metavar="SIZE", help="keep the newest vectors that fit (e.g. 2G)")
            q.add_argument(
                "--drop-model",
                action="append",
                metavar="TAG",
                help="drop a model's vectors (its tag from info)",
            )
