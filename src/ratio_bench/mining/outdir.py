"""The mining output folder: one local run at a time, and no leftovers of a killed one.

Every output is written as ``.<name>.<random>.tmp`` next to ``<name>`` and renamed into place
(:func:`ratio_bench.core.io.atomic_path`, :class:`ratio_bench.core.io.RejectLog`). A run killed with SIGKILL cannot remove
its temporary files, so the next run does: each task removes the temporary files of its own shards before it
writes them (safe on every executor, since one task owns its shard names), and a local run removes those of
the folder's own files (``plan.json``, ``stats.json``). Only names of that pattern in the folders the run
writes are touched. A local run holds a POSIX lock on ``.lock`` while it runs, so a second run on the same
folder is refused instead of having its temporary files removed under it; the kernel releases the lock when
the process ends, SIGKILL included (and a lock is not inherited by the processes it forks).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Iterator
from pathlib import Path

from ratio_bench.core.errors import RatioError

SHARD_DIRS = {"pairs": "parquet", "distractors": "parquet", "rejects": "jsonl", "stats": "json"}
ROOT_FILES = ("plan.json", "stats.json")


class FolderBusyError(RatioError):
    """Another ``ratio mine`` is writing into the same output folder."""


def shard_paths(out_dir: Path, rank: int) -> dict[str, Path]:
    """Task ``rank``'s output files, by folder (``pairs/00003.parquet``, ...)."""
    return {sub: out_dir / sub / f"{rank:05d}.{ext}" for sub, ext in SHARD_DIRS.items()}


def remove_stale_temps(final_paths: list[Path]) -> list[Path]:
    """Remove the temporary files left beside ``final_paths`` by a killed writer; returns what was removed."""
    removed = []
    for path in final_paths:
        if not path.parent.is_dir():
            continue
        for tmp in path.parent.glob(f".{path.name}.*.tmp"):
            with contextlib.suppress(FileNotFoundError):
                tmp.unlink()
                removed.append(tmp)
    return removed


@contextlib.contextmanager
def exclusive(out_dir: Path) -> Iterator[None]:
    """Hold the folder's lock for a local run; refuse when another process holds it."""
    out_dir.mkdir(parents=True, exist_ok=True)
    fd = os.open(out_dir / ".lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o666)
    try:
        try:
            fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as e:
            raise FolderBusyError(
                f"{out_dir} is being written by another ratio mine; wait for it, or use another output folder"
            ) from e
        yield
    finally:
        os.close(fd)
