"""The handlers of the ``mining`` commands (``ratio_bench.mining.cli`` builds their parsers and names these
handlers as strings; ``cli.handler`` imports this module when one of them runs, so ``--help`` and argument errors
load none of the libraries below)."""

from __future__ import annotations

import argparse

from ratio_bench.core.errors import UsageError
from ratio_bench.core.io import report_console
from ratio_bench.core.options import parse_assignments, yaml_scalar
from ratio_bench.corpus.options import reader_settings
from ratio_bench.mining.report import print_mining_report
from ratio_bench.mining.run import merge_stats, run_mining
from ratio_bench.mining.step import MiningSettings


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
