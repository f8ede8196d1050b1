"""``ratio mine``: the mining stage from the command line."""

from __future__ import annotations

import argparse
from pathlib import Path

from ratio_bench.corpus.options import add_reader_options
from ratio_bench.mining.run import EXECUTORS
from ratio_bench.mining.units import TASK_BYTES


def register(sub: argparse._SubParsersAction) -> None:
    stage = sub.add_parser("mine", help="mining stage: run, stats").add_subparsers(
        dest="mine_command", required=True
    )
    p = stage.add_parser("run", help="mine (query, marker, gold) tuples and distractors from a corpus")
    p.add_argument("--corpus", nargs="+", type=Path, required=True, help="corpus files or folders")
    p.add_argument("--out", type=Path, required=True, help="output folder (resumable)")
    p.add_argument(
        "--workers",
        type=int,
        default=None,
        help="tasks at once (default: one per core here; on a cluster, all)",
    )
    p.add_argument(
        "--task-mb",
        type=float,
        default=TASK_BYTES / 2**20,
        help="group small files and row groups into tasks of about this many MB on disk (default %(default)s)",
    )
    p.add_argument("--executor", choices=EXECUTORS, default="local", help="datatrove executor")
    p.add_argument(
        "--executor-option",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="extra executor argument, e.g. partition=cpu time=02:00:00 (slurm)",
    )
    p.add_argument("--lexicon", type=Path, help="lexicon folder (default: lexicon/v1)")
    p.add_argument("--keep-case", action="store_true", help="also keep cased query/gold columns")
    p.add_argument("--no-lowercase", action="store_true", help="do not lower-case query and gold")
    p.add_argument("--quiet", action="store_true", help="no progress bars")
    p.add_argument("--verbose", action="store_true", help="show datatrove's logs")
    add_reader_options(p)
    p.set_defaults(func="ratio_bench.mining.commands:cmd_mine")

    p = stage.add_parser("stats", help="merge per-task statistics of a mining run into stats.json")
    p.add_argument("out", type=Path)
    p.set_defaults(func="ratio_bench.mining.commands:cmd_mine_stats")
