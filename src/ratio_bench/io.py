"""Small I/O helpers shared by every stage: atomic writes and the rejects log.

Every output is first written next to its destination and renamed into place, so a crash never leaves a
half-written file that a resumed run would mistake for a finished one.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import sys
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike) -> Iterator[Path]:
    """Yield a temporary path in the destination folder; rename it onto ``path`` on success.

    The temporary file is created 0666 filtered by the umask, like any file a program opens, so outputs are not
    left private (``mkstemp`` would make them 0600).
    """
    dest = Path(path)
    dest.parent.mkdir(parents=True, exist_ok=True)
    fh, tmp = _create_temp_beside(dest)
    fh.close()
    try:
        yield Path(tmp)
        os.replace(tmp, dest)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


@contextlib.contextmanager
def atomic_open(path: str | os.PathLike, mode: str = "w", **kwargs: Any) -> Iterator[IO]:
    """Open a temporary file for writing that replaces ``path`` only when the block succeeds."""
    with atomic_path(path) as tmp, open(tmp, mode, **kwargs) as fh:
        yield fh


def write_json(path: str | os.PathLike, obj: Any) -> None:
    """Write ``obj`` as sorted, indented JSON, atomically (stable bytes for reproducible builds)."""
    with atomic_open(path, "w", encoding="utf-8") as fh:
        json.dump(obj, fh, indent=2, sort_keys=True, ensure_ascii=False)
        fh.write("\n")


class RejectLog:
    """Counts every skipped or flagged record by reason and, optionally, writes one JSON line per record.

    ``action`` is ``"dropped"`` when the record is gone from the output and ``"flagged"`` when it was kept
    with an explicit marker (for example a date of unknown precision). Nothing is skipped silently: the
    counts end up in every stage's report.

    The file is written as ``.<name>.<random>.tmp`` next to ``path`` and renamed into place by :meth:`close`;
    a block that fails removes it instead (:meth:`abort`), so a rejects file is never half a run's. The
    temporary file is created with mode 0666 filtered by the umask (``mkstemp`` would make it 0600), so the
    finished file has the same permissions as every other output.
    """

    def __init__(self, path: str | os.PathLike | None = None):
        self.counts: Counter[tuple[str, str]] = Counter()
        self._path = Path(path) if path is not None else None
        self._fh: IO | None = None
        self._tmp: Path | None = None
        if self._path is not None:
            self._path.parent.mkdir(parents=True, exist_ok=True)
            self._fh, self._tmp = _create_temp_beside(self._path)

    def add(
        self, source: str, record_id: str | None, reason: str, action: str = "dropped", **extra: Any
    ) -> None:
        self.counts[(reason, action)] += 1
        if self._fh is not None:
            row = {"source": source, "record_id": record_id, "reason": reason, "action": action, **extra}
            self._fh.write(json.dumps(row, ensure_ascii=False, sort_keys=True) + "\n")

    def by_reason(self, action: str | None = None) -> dict[str, int]:
        out: Counter[str] = Counter()
        for (reason, act), n in self.counts.items():
            if action is None or act == action:
                out[reason] += n
        return dict(sorted(out.items()))

    def close(self) -> None:
        """Finish the log: the file appears at its final path only once complete."""
        if self._fh is not None:
            self._fh.close()
            os.replace(self._tmp, self._path)
            self._fh = None

    def abort(self) -> None:
        """Drop the unfinished log (safe to call again, or after :meth:`close`)."""
        if self._fh is not None:
            self._fh.close()
            self._fh = None
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self._tmp)

    def __enter__(self) -> RejectLog:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, *exc: object) -> None:
        if exc_type is None:
            self.close()
        else:
            self.abort()


def _create_temp_beside(dest: Path) -> tuple[IO, Path]:
    """A new, exclusively created ``.<name>.<random>.tmp`` next to ``dest``, opened for UTF-8 text."""
    while True:
        tmp = dest.with_name(f".{dest.name}.{secrets.token_hex(4)}.tmp")
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        except FileExistsError:
            continue
        return os.fdopen(fd, "w", encoding="utf-8"), tmp


def sum_nested(dicts: list[dict[str, Any]]) -> dict[str, Any]:
    """Sum nested dicts of numbers key by key (how per-task statistics are merged)."""
    out: dict[str, Any] = {}
    for d in dicts:
        for k, v in d.items():
            if isinstance(v, dict):
                out[k] = sum_nested([out.get(k, {}), v])
            elif isinstance(v, (int, float)) and not isinstance(v, bool):
                out[k] = out.get(k, 0) + v
            else:
                out.setdefault(k, v)
    return dict(sorted(out.items()))


def report_console():
    """A rich console for reports: the terminal's width, or wide enough for tables when piped to a file."""
    from rich.console import Console

    return Console() if sys.stdout.isatty() else Console(width=200)


def refuse_foreign_output(
    path: Path, is_ours: Callable[[Path], bool], what: str, flag: str = "--out"
) -> None:
    """Stop before a command replaces ``path`` unless it is absent, empty, or an artefact of ours of this kind.

    Commands that write a folder build it beside ``path`` and swap it in, which removes what was there; this is
    the check that makes that safe: a user's folder (or ``.``, a parent of the working directory, the home
    folder) is never replaced.
    """
    from ratio_bench.errors import RatioError

    target = path.resolve()
    cwd = Path.cwd().resolve()
    if target == Path.home().resolve() or target == cwd or target in cwd.parents:
        raise RatioError(
            f"{flag} {path}: refusing to replace {target} (the home folder, . or a parent of it); pass a new folder"
        )
    if target.exists() and not target.is_dir():
        raise RatioError(f"{flag} {path}: exists and is not a folder; pass a new folder")
    if target.is_dir() and any(target.iterdir()) and not is_ours(target):
        raise RatioError(
            f"{flag} {path}: the folder is not empty and is not a {what}, so it would be replaced; "
            "pass a new or empty folder"
        )
