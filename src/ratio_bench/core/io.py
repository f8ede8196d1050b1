"""Small I/O helpers shared by every stage: atomic writes and the rejects log.

Every output is first written next to its destination and renamed into place, so a crash never leaves a
half-written file that a resumed run would mistake for a finished one.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
import secrets
import shutil
import socket
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, Any

from rich.console import Console

from ratio_bench.core.errors import RatioError

MANIFEST = "manifest.json"


def _umask() -> int:
    """The process umask (reading it means setting it; it is restored at once)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


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


def sum_nested(dicts: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """Sum nested dicts of numbers key by key (how per-task statistics are merged), keys sorted at every level.

    Each dict is added into one accumulator in place, so merging n task files costs their total size, not
    n times the (growing) merged size: a corpus of 5,000 files has 5,000 per-file entries under every task.
    Numbers add up; any other value keeps its first occurrence.
    """
    out: dict[str, Any] = {}
    for d in dicts:
        _add_into(out, d)
    return _sorted_keys(out)


def _add_into(acc: dict[str, Any], d: dict[str, Any]) -> None:
    for k, v in d.items():
        if isinstance(v, dict):
            _add_into(acc.setdefault(k, {}), v)
        elif isinstance(v, int | float) and not isinstance(v, bool):
            acc[k] = acc.get(k, 0) + v
        else:
            acc.setdefault(k, v)


def _sorted_keys(d: dict[str, Any]) -> dict[str, Any]:
    return {k: _sorted_keys(v) if isinstance(v, dict) else v for k, v in sorted(d.items())}


def report_console(stderr: bool = False):
    """A rich console for reports: the terminal's width, or wide enough for tables when piped to a file;
    ``stderr``: on stderr (a command whose stdout is JSON)."""

    stream = sys.stderr if stderr else sys.stdout
    return Console(stderr=stderr) if stream.isatty() else Console(width=200, stderr=stderr)


class OutputDirError(RatioError):
    """An output folder that must not be replaced (it is not ours, or it holds the user's working tree)."""


class FileTooLargeError(RatioError):
    """A file from a folder we may not have written is larger than any such file Ratio writes."""


MAX_MANIFEST_BYTES = 64 * 1024 * 1024  # a release manifest at S2ORC scale (thousands of shards) is a few MB


def read_json_file(path: str | os.PathLike, limit: int = MAX_MANIFEST_BYTES) -> Any:
    """Parse a JSON file (manifest, pool, summary) after checking its size, so a planted giant is never read."""
    path = Path(path)
    size = path.stat().st_size
    if size > limit:
        raise FileTooLargeError(
            f"{path}: {size:,} bytes, over the {limit:,}-byte limit for this file; it is not one Ratio wrote"
        )
    return json.loads(path.read_bytes())


def read_manifest(folder: str | os.PathLike) -> dict[str, Any] | None:
    """The ``manifest.json`` of a Ratio artefact folder, or None when there is none or it is not a JSON object."""
    try:
        data = read_json_file(Path(folder) / MANIFEST)
    except (OSError, ValueError, RecursionError):  # RecursionError: JSON nested too deeply to read
        return None
    return data if isinstance(data, dict) else None


def artefact_kind(folder: str | os.PathLike) -> str | None:
    """What Ratio wrote ``folder`` as (its manifest's ``kind``); None when it is not a Ratio artefact."""
    manifest = read_manifest(folder)
    return None if manifest is None else manifest_kind(manifest)


def manifest_kind(manifest: dict[str, Any]) -> str | None:
    """The ``kind`` a manifest declares; releases from before manifests carried one, by their fields."""
    kind = manifest.get("kind")
    if kind is None and {"rows", "files", "lexicon_sha256"} <= manifest.keys():
        return "release"
    return kind if isinstance(kind, str) else None


def manifest_files(manifest: dict[str, Any]) -> set[str] | None:
    """The files (relative paths) an artefact's manifest says it consists of, besides the manifest itself.

    Releases record ``{path: sha256}``, other artefacts a list of paths; None when the manifest lists none.
    """
    files = manifest.get("files")
    if isinstance(files, dict | list):
        return {f for f in files if isinstance(f, str)}
    return None


def folder_files(folder: Path) -> list[str]:
    """Every entry of ``folder`` that is not a directory (files and symlinks, never followed), relative, sorted."""
    out = []
    for top, dirs, files in os.walk(folder):
        base = Path(top).relative_to(folder)
        links = [d for d in dirs if (Path(top) / d).is_symlink()]
        out += [(base / f).as_posix() for f in (*files, *links)]
    return sorted(out)


def _under(rel: str, keep: tuple[str, ...]) -> bool:
    return any(rel == k or rel.startswith(f"{k}/") for k in keep)


def foreign_files(folder: Path, keep: tuple[str, ...] = ()) -> list[str]:
    """Files in the artefact ``folder`` that its manifest does not list and no ``keep`` sub-folder holds.

    Replacing the folder would delete them, so they are the user's until shown otherwise; an artefact whose
    manifest lists no files (written before manifests did) owns nothing but its manifest.
    """
    manifest = read_manifest(folder) or {}
    owned = (manifest_files(manifest) or set()) | {MANIFEST}
    return [f for f in folder_files(folder) if f not in owned and not _under(f, keep)]


def prepare_output_dir(path: str | os.PathLike, kind: str, keep: tuple[str, ...] = ()) -> Path:
    """Check that ``path`` may be replaced by a new artefact of ``kind``; return it resolved.

    Nothing of the user's is ever deleted: a folder is replaceable only when it is missing, empty, or a Ratio
    artefact of the same kind (by its manifest) holding only the files its manifest lists and those under the
    ``keep`` sub-folders (which :func:`staged_dir` carries over). The working folder, its parents, the home
    folder and ``/`` are refused even when they qualify, since swapping them away would pull the ground from
    under the user.
    """
    out = Path(path).expanduser().resolve()
    cwd, home = Path.cwd().resolve(), Path.home().resolve()
    shown = str(path)
    if out == cwd or out in cwd.parents:
        raise OutputDirError(
            f"{shown}: is the working folder or one of its parents; give a new folder", value=path
        )
    if out == home or out in home.parents:
        raise OutputDirError(
            f"{shown}: is the home folder or one of its parents; give a new folder", value=path
        )
    if out.exists() and not out.is_dir():
        raise OutputDirError(f"{shown}: is a file, not a folder; give a new folder", value=path)
    if out.is_dir() and any(out.iterdir()):
        found = artefact_kind(out)
        if found != kind:
            what = f"a Ratio {found}" if found else f"not a Ratio {kind} (no Ratio {MANIFEST})"
            raise OutputDirError(
                f"{shown}: folder exists and is {what}; nothing was changed. Give a new folder, "
                "or move this one away yourself",
                value=path,
            )
        foreign = foreign_files(out, keep)
        if foreign:
            shown_files = ", ".join(foreign[:5]) + (
                f" and {len(foreign) - 5} more" if len(foreign) > 5 else ""
            )
            raise OutputDirError(
                f"{shown}: holds files that are not the {kind}'s own (not in its {MANIFEST}): {shown_files}; "
                "replacing it would delete them, so nothing was changed. Move them away, or give a new folder",
                value=path,
            )
    return out


STAGE_SUFFIX = ".building"


def _stage_pattern(out: Path) -> re.Pattern[str]:
    """The names ``tempfile.mkdtemp`` gives :func:`staged_dir`'s staging folders of ``out`` (8 random chars)."""
    return re.compile(re.escape(f".{out.name}.") + r"[a-z0-9_]{8}" + re.escape(STAGE_SUFFIX))


def _lock(folder: Path) -> int:
    """An open descriptor of ``folder`` holding an exclusive ``flock`` (raises BlockingIOError when held)."""
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BaseException:
        os.close(fd)
        raise
    return fd


class FolderLockedError(OutputDirError):
    """Another run holds the write lock of an artefact folder (see :func:`folder_lock`)."""


LOCK_SUFFIX = ".lock"
_MAX_HOLDER_BYTES = 4096
_HELD: dict[tuple[str, int], list[int]] = {}  # (lock file, thread) -> [descriptor, depth]
_HELD_GUARD = threading.Lock()


def lock_file(out: Path) -> Path:
    """The lock file of the artefact folder ``out``: beside it (``.<name>.lock``), since the folder itself is
    swapped away by :func:`staged_dir` and a lock inside it would go with it."""
    return out.parent / f".{out.name}{LOCK_SUFFIX}"


def _holder_text(fd: int) -> str:
    """Who holds a lock, from what it wrote into the lock file (bounded, each value made one printable line)."""
    try:
        info = json.loads(os.pread(fd, _MAX_HOLDER_BYTES, 0) or b"{}")
    except (OSError, ValueError, RecursionError):
        info = None
    if not isinstance(info, dict) or not info:
        return "a run that has not said who it is yet"

    def one(key: str) -> str:
        text = str(info.get(key, "?"))[:160]
        return "".join(c if c.isprintable() else "?" for c in text)

    return f"pid {one('pid')} on {one('host')} (`{one('command')}`, since {one('started')})"


def _try_lock(lock: Path) -> tuple[int | None, str]:
    """(descriptor holding an exclusive ``flock`` on the file now at ``lock``, previous holder text) or (None,
    holder text) when another process holds it. A file left by a killed run is not locked (the kernel drops a
    dead process's ``flock``), so it is taken over: stale locks need no clean-up."""
    fd = os.open(lock, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o666)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = _holder_text(fd)
        os.close(fd)
        return None, holder
    try:
        here = os.stat(lock, follow_symlinks=False)
        mine = os.fstat(fd)
        same = (here.st_ino, here.st_dev) == (mine.st_ino, mine.st_dev)
    except FileNotFoundError:
        same = False
    if not same:  # the holder released and removed it between our open and flock: try the new file
        os.close(fd)
        return _try_lock(lock)
    previous = _holder_text(fd) if os.fstat(fd).st_size else ""
    return fd, previous


def _claim(fd: int, command: str) -> None:
    """Write who holds the lock into it, for the run that is refused to name."""
    info = {
        "pid": os.getpid(),
        "host": socket.gethostname(),
        "command": command,
        "started": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()),
    }
    os.ftruncate(fd, 0)
    os.pwrite(fd, json.dumps(info).encode(), 0)


@contextlib.contextmanager
def folder_lock(
    path: str | os.PathLike, command: str, wait_s: float = 0.0, wait_flag: str | None = None
) -> Iterator[Path]:
    """Hold the write lock of the artefact folder ``path`` for the block: one writer per folder, from reading
    it to the swap (``ratio dataset build`` into it, ``append``, ``ratio judge silver``), so no run swaps over
    another's result. ``command`` says who holds it (shown to a refused run).

    Another holder: wait up to ``wait_s`` seconds (polling; Ctrl-C ends the wait), then :class:`FolderLockedError`
    naming the holder (and ``wait_flag``, the command's option that waits, when it has one). The lock is an ``flock`` on :func:`lock_file`, which the kernel releases when its process
    dies, so a killed run's lock is stale by construction and taken over (with a note). Re-entrant within one
    thread (``staged_dir`` takes it again inside a command that holds it).
    """
    out = Path(path).expanduser().resolve()
    lock = lock_file(out)
    key = (str(lock), threading.get_ident())
    with _HELD_GUARD:
        held = _HELD.get(key)
        if held is not None:
            held[1] += 1
    if held is not None:
        try:
            yield out
        finally:
            held[1] -= 1
        return
    out.parent.mkdir(parents=True, exist_ok=True)
    deadline = time.monotonic() + max(wait_s, 0.0)
    while True:
        fd, holder = _try_lock(lock)
        if fd is not None or time.monotonic() >= deadline:
            break
        time.sleep(min(0.2, max(deadline - time.monotonic(), 0.01)))
    if fd is None:
        raise FolderLockedError(
            f"{path}: another run is writing it: {holder}; nothing was changed. Run again when it has finished"
            + (f" (waited {wait_s:g} s)" if wait_s > 0 else f" (or give {wait_flag})" if wait_flag else ""),
            value=path,
        )
    if holder:
        print(
            f"ratio: {path}: took over the lock of a run that ended without releasing it ({holder})",
            file=sys.stderr,
        )
    _claim(fd, command)
    with _HELD_GUARD:
        _HELD[key] = [fd, 1]
    try:
        yield out
    finally:
        with _HELD_GUARD:
            del _HELD[key]
        with contextlib.suppress(FileNotFoundError):
            os.unlink(lock)  # while still holding it; a waiter on the old file sees it is gone and retries
        os.close(fd)


def clean_stale_stages(out: Path) -> list[str]:
    """Remove staging folders of ``out`` left by killed runs; returns their names.

    Only folders that are ours are touched: named exactly as :func:`staged_dir` names them, owned by this user,
    and not locked (a running build holds a ``flock`` on its staging folder until the swap).
    """
    pattern, removed = _stage_pattern(out), []
    if not out.parent.is_dir():
        return removed
    for entry in sorted(out.parent.iterdir()):
        if not pattern.fullmatch(entry.name) or entry.is_symlink() or not entry.is_dir():
            continue
        if entry.stat().st_uid != os.getuid():
            continue
        try:
            fd = _lock(entry)
        except (BlockingIOError, OSError):
            continue  # in use by another run (or gone meanwhile)
        try:
            shutil.rmtree(entry)
            removed.append(entry.name)
        finally:
            os.close(fd)
    return removed


def _carry_over(out: Path, stage: Path, keep: tuple[str, ...]) -> None:
    """Hard-link (copy where links are not possible) ``out``'s files under ``keep`` that its manifest does
    not list into ``stage``: the user's files there outlive the swap, and a kill before it leaves them in
    place."""
    owned = manifest_files(read_manifest(out) or {}) or set()
    for rel in folder_files(out):
        if not _under(rel, keep) or rel in owned:
            continue
        src, dst = out / rel, stage / rel
        if dst.exists() or dst.is_symlink():
            raise OutputDirError(f"{out}: {rel} would be replaced by the new artefact's own; move it away")
        link_or_copy(src, dst, follow_symlinks=False)


def link_or_copy(src: Path, dst: Path, follow_symlinks: bool = True) -> None:
    """``dst`` as a hard link of ``src`` (a copy where links are impossible: another file system), its folders
    made: an artefact built beside the old one shares the unchanged bytes, and the old one stays whole."""
    dst.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.link(src, dst, follow_symlinks=follow_symlinks)
    except OSError:
        shutil.copy2(src, dst, follow_symlinks=follow_symlinks)


@contextlib.contextmanager
def staged_dir(path: str | os.PathLike, kind: str, keep: tuple[str, ...] = ()) -> Iterator[Path]:
    """:func:`_staged_dir` under the folder's write lock (:func:`folder_lock`; already held by a command that
    read the folder first), so two runs never swap over each other."""
    with (
        folder_lock(path, f"ratio: writing a {kind} to {Path(path).name}"),
        _staged_dir(path, kind, keep) as stage,
    ):
        yield stage


@contextlib.contextmanager
def _staged_dir(path: str | os.PathLike, kind: str, keep: tuple[str, ...] = ()) -> Iterator[Path]:
    """Yield an empty staging folder next to ``path``; on success swap it into place as ``path``.

    The destination is checked with :func:`prepare_output_dir` before and again just before the swap (it may
    have changed during a long build), so ``path`` is always either the previous artefact or the new one; the
    files under the ``keep`` sub-folders that the previous artefact's manifest does not list (the judged pool
    in a release's ``judgments/``) are carried over. The staging folder has a unique hidden name, so no user
    folder is ever reused or deleted; it is removed when the block fails, and it is locked while in use so
    that the next run of the same output removes it (and says so) if this one is killed.
    """
    out = prepare_output_dir(path, kind, keep)
    out.parent.mkdir(parents=True, exist_ok=True)
    stale = clean_stale_stages(out)
    if stale:
        print(
            f"ratio: removed {len(stale)} staging folder(s) of killed runs: {', '.join(stale)}",
            file=sys.stderr,
        )
    stage = Path(tempfile.mkdtemp(prefix=f".{out.name}.", suffix=STAGE_SUFFIX, dir=out.parent))
    lock = _lock(stage)
    os.chmod(stage, 0o777 & ~_umask())  # mkdtemp makes 0700; the artefact gets a normal folder's permissions
    try:
        yield stage
        prepare_output_dir(path, kind, keep)
        old = None
        if out.exists():
            _carry_over(out, stage, keep)
            old = Path(tempfile.mkdtemp(prefix=f".{out.name}.", suffix=".old", dir=out.parent))
            os.replace(out, old)  # onto the empty placeholder: a rename, so the swap stays atomic per step
        try:
            os.replace(stage, out)
        except BaseException:
            if old is not None:
                os.replace(old, out)  # put the previous artefact back
            raise
        if old is not None:
            shutil.rmtree(old)
    except BaseException:
        shutil.rmtree(stage, ignore_errors=True)
        raise
    finally:
        os.close(lock)


def no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """``json.loads``' ``object_pairs_hook`` for untrusted bytes: an object naming one key twice is refused
    (ValueError), since a parser keeps the last value while a person reading the file sees the first."""
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise ValueError(f"duplicate key {key[:40]!r} (an object names it twice)")
        out[key] = value
    return out
