"""``ratio mine``: the mining stage from the command line."""

from __future__ import annotations

import argparse
from pathlib import Path

from ratio_bench.core.errors import UsageError
from ratio_bench.core.io import report_console
from ratio_bench.core.options import parse_assignments, yaml_scalar
from ratio_bench.corpus.options import add_reader_options, reader_settings
from ratio_bench.mining.report import print_mining_report
from ratio_bench.mining.run import EXECUTORS, merge_stats, run_mining
from ratio_bench.mining.step import MiningSettings
from ratio_bench.mining.units import TASK_BYTES


def cmd_mine(args: argparse.Namespace) -> int:
    if args.workers is not None and args.workers < 1:
        raise UsageError(f"--workers must be at least 1, got {args.workers}")
    settings = MiningSettings(
        lexicon_dir=str(args.lexicon) if args.lexicon else None,
        reader=reader_settings(args),
        lowercase=not args.no_lowercase,
        keep_case=args.keep_case,
        progress=not args.quiet,
        task_bytes=_task_bytes(args.task_mb),
    )
    stats = run_mining(
        args.corpus,
        args.out,
        settings,
        workers=args.workers,
        executor=args.executor,
        executor_options=parse_assignments(
            args.executor_option,
            "--executor-option",
            value_type=yaml_scalar,
            example="KEY=VALUE (e.g. partition=cpu)",
        ),
        verbose=args.verbose,
    )
    if stats is None:
        print(f"jobs submitted; when they finish run: ratio mine stats {args.out}")
        return 0
    print_mining_report(stats, report_console())
    return 0


def _task_bytes(mb: float) -> int:
    if not mb > 0:
        raise UsageError(f"--task-mb must be positive, got {mb}")
    return max(1, int(mb * 2**20))


def cmd_mine_stats(args: argparse.Namespace) -> int:
    print_mining_report(merge_stats(args.out), report_console())
    return 0


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
    p.set_defaults(func=cmd_mine)

    p = stage.add_parser("stats", help="merge per-task statistics of a mining run into stats.json")
    p.add_argument("out", type=Path)
    p.set_defaults(func=cmd_mine_stats)
