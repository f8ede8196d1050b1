"""The handlers of ``ratio cache info`` and ``ratio cache prune`` (``retrieval.cli`` builds their parsers and names
these as strings, so ``--help`` and argument errors open no cache)."""

from __future__ import annotations

import argparse
import re

from ratio_bench.core.errors import UsageError
from ratio_bench.core.io import report_console
from ratio_bench.retrieval.cache import EmbeddingCache

UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}


def parse_size(text: str) -> int:
    """``500M``, ``2G``, ``0``: bytes (binary units), or one line naming the flag."""
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([KMGT]?)i?B?\s*", text, re.IGNORECASE)
    if not match:
        raise UsageError(f"--max-size {text!r}: give a size such as 500M or 2G")
    return int(float(match[1]) * UNITS[match[2].upper()])


def _size(n: int) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:,} {unit}" if unit == "B" else f"{n:,.1f} {unit}"
        n /= 1024
    return str(n)


def _print_info(label: str, info) -> None:
    report_console().print(
        f"{label}{info.root}: {info.vectors:,} vectors ({info.records:,} index records), "
        f"{_size(info.total_bytes)} (shards {_size(info.shard_bytes)}, index {_size(info.index_bytes)}, "
        f"old per-list files {_size(info.legacy_bytes)})"
        + "".join(f"\n  model {tag}: {n:,} vectors" for tag, n in sorted(info.per_model.items()))
    )


def cmd_info(args: argparse.Namespace) -> int:
    _print_info("", EmbeddingCache(args.cache_dir).info())
    return 0


def cmd_prune(args: argparse.Namespace) -> int:
    max_bytes = parse_size(args.max_size) if args.max_size is not None else None
    before, after = EmbeddingCache(args.cache_dir).prune(max_bytes, args.drop_model or ())
    _print_info("before: ", before)
    _print_info("after:  ", after)
    return 0
