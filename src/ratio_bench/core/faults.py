"""Faults of the machine, not of our code: a full disk, a read-only folder, a missing permission.

Libraries report these in their own words (``OSError`` with or without a file name, DuckDB's ``IOException``,
SQLite's "database or disk is full", torch's "file write failed"), often with no path at all. ``ratio`` turns
each into the one line a user can act on: the cause, and the output the command was writing when it is known,
or else the outputs named on its command line with the free space left under each.
"""

from __future__ import annotations

import errno
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

_ERRNO_CAUSES = {
    errno.ENOSPC: "no space left on device",
    errno.EDQUOT: "disk quota exceeded",
    errno.EROFS: "read-only file system",
    errno.EACCES: "permission denied",
    errno.EPERM: "operation not permitted",
    errno.EFBIG: "file too large",
    errno.EIO: "input/output error",
    errno.EMFILE: "too many open files",
}
# The same causes as libraries that do not raise OSError word them (DuckDB, SQLite, torch, Arrow).
_TEXT_CAUSES = {
    "no space left on device": "no space left on device",
    "database or disk is full": "no space left on device",
    "disk quota exceeded": "disk quota exceeded",
    "read-only file system": "read-only file system",
    "attempt to write a readonly database": "read-only file system",
}
_FULL = {"no space left on device", "disk quota exceeded"}
# Command-line options that name something the command writes.
OUTPUT_OPTIONS = ("out", "json", "rejects", "cache", "cache_dir", "plot", "work_dir")
_LOW_SPACE = 64 * 1024 * 1024


def _chain(exc: BaseException) -> Iterator[BaseException]:
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        yield exc
        exc = exc.__cause__ or exc.__context__


def _cause(exc: BaseException) -> tuple[str, str | None] | None:
    """(cause, file name or None) when ``exc`` or an exception behind it is a machine fault."""
    for e in _chain(exc):
        if isinstance(e, OSError) and e.errno in _ERRNO_CAUSES:
            name = e.filename
            return _ERRNO_CAUSES[e.errno], os.fsdecode(name) if name is not None else None
        text = str(e).lower()
        for words, cause in _TEXT_CAUSES.items():
            if words in text:
                return cause, None
    return None


def _free_bytes(path: Path) -> int | None:
    """Free space on the disk that holds ``path`` (or would hold it: its nearest existing folder)."""
    for folder in (path, *path.parents):
        if folder.exists():
            try:
                return shutil.disk_usage(folder).free
            except OSError:
                return None
    return None


def _size(n: int) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024:
            return f"{n:.0f} {unit}"
        n /= 1024
    return f"{n:.0f} TB"


_noted: list[tuple[str, Path]] = []


def note_output(label: str, path: str | os.PathLike) -> None:
    """Declare a place a command writes that its command line does not name (a config's ``work_dir``)."""
    _noted.append((label, Path(path)))


def forget_outputs() -> None:
    """Start a command with no noted outputs (``main`` may run several commands in one process)."""
    _noted.clear()


def _outputs(args: Any) -> list[tuple[str, Path]]:
    """Every path on the command line (flags first by name) and every noted output, once each."""
    found: dict[Path, str] = {}
    for name, value in sorted(vars(args).items()) if args is not None else ():
        if isinstance(value, Path) or (name in OUTPUT_OPTIONS and isinstance(value, str) and value):
            found.setdefault(Path(value), f"--{name.replace('_', '-')}")
    for label, path in _noted:
        found.setdefault(path, label)
    return [(label, path) for path, label in found.items()]


def describe(exc: BaseException, args: Any = None) -> str | None:
    """One line for a machine fault behind ``exc``, or None when ``exc`` is something else."""
    found = _cause(exc)
    if found is None:
        return None
    cause, name = found
    full = cause in _FULL
    fix = "free some space or write elsewhere" if full else "check the path's permissions and mount"
    if name:
        return f"{name}: {cause}; {fix}"
    outputs = _outputs(args)
    if full:
        sized = [(flag, path, free) for flag, path in outputs if (free := _free_bytes(path)) is not None]
        low = [x for x in sized if x[2] < _LOW_SPACE]
        if not low:
            temp = Path(tempfile.gettempdir())
            return f"{cause} (the temporary folder {temp} has {_size(_free_bytes(temp) or 0)} free); {fix}"
        where = ", ".join(f"{flag} {path} ({_size(free)} free)" for flag, path, free in low)
        return f"{cause} while writing {where}; {fix}"
    written = [(flag, path) for flag, path in outputs if flag.lstrip("-").replace("-", "_") in OUTPUT_OPTIONS]
    where = ", ".join(f"{flag} {path}" for flag, path in written)
    return f"{cause}{' (outputs: ' + where + ')' if where else ''}; {fix}"
