"""Corpus files and their raw records: which files a path names, their record schema, and their rows.

This is the only layer that touches a corpus file's bytes, and it never lets an arbitrary exception out:

* a row that cannot be a record (a JSONL line that is not JSON, JSON that is not an object, a Parquet row with
  a string that is not UTF-8) is yielded as a :class:`BadRecord` with a reason, so the reader counts it as read and rejected;
* a file that cannot be read at all or any further (empty, truncated or not Parquet, bad gzip, no permission)
  raises :class:`CorpusFileError` with a reason, which the reader records as a rejected file and moves on from
  (or, with ``--strict``, lets through as the run's one-line error).
"""

from __future__ import annotations

import gzip
import json
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from ratio_bench.core.errors import RatioError

_PARQUET_BATCH = 64
# What reading a damaged file raises: I/O errors (including gzip.BadGzipFile), a gzip stream cut short, a bad
# deflate block, and every Arrow error (a missing footer, a corrupt page, a file that is not Parquet).
_READ_ERRORS = (OSError, EOFError, zlib.error, pa.ArrowException)
STRICT_HINT = "fix or remove it (without --strict it is logged to the rejects file and skipped)"


class CorpusPathError(RatioError, FileNotFoundError):
    """A corpus path given on the command line or in a config that does not exist."""


class CorpusFileError(RatioError):
    """A corpus file that cannot be read (any further); ``reason`` is its rejects-file reason."""

    def __init__(self, path: Path, reason: str, detail: str):
        self.path, self.reason, self.detail = path, reason, detail
        super().__init__(f"{path}: {detail}; {STRICT_HINT}")


class CorpusFormatError(CorpusFileError, ValueError):
    """A file whose record schema cannot be determined from its fields."""

    def __init__(self, path: Path, detail: str):
        self.path, self.reason, self.detail = path, "file_unknown_format", detail
        RatioError.__init__(self, f"{path}: {detail}; pass --format shared or --format s2orc")


@dataclass(frozen=True, slots=True)
class BadRecord:
    """A row that is not a record at all; ``record_id`` locates it (``line:N``)."""

    record_id: str
    reason: str
    detail: str


def corpus_files(paths: Iterable[str | Path]) -> list[Path]:
    """Expand folders into their corpus files (``*.parquet``, ``*.jsonl``, ``*.jsonl.gz``, ``*.json``), sorted."""
    out: list[Path] = []
    for p in map(Path, paths):
        if p.is_dir():
            out.extend(sorted(f for f in p.iterdir() if _is_corpus_file(f)))
        elif p.exists():
            out.append(p)
        else:
            raise CorpusPathError(f"corpus path not found: {p} (check --corpus or the corpus PATH arguments)")
    return out


def _is_corpus_file(p: Path) -> bool:
    return p.is_file() and (p.suffix in {".parquet", ".jsonl", ".json"} or p.name.endswith(".jsonl.gz"))


def format_of_keys(keys: Iterable[str]) -> str | None:
    """``s2orc`` or ``shared`` from a record's (or a Parquet file's) field names; None when neither fits.

    A shared-schema record needs only one of ``id`` and ``text`` to be recognised: one lacking the other is
    then rejected for that (``missing_id``, ``no_text``) rather than taking its whole file down.
    """
    keys = set(keys)
    if "pdf_parse" in keys or "corpusid" in keys:
        return "s2orc"
    if keys & {"id", "text"}:
        return "shared"
    return None


def _unknown_format(path: Path, keys: Iterable[str]) -> CorpusFormatError:
    return CorpusFormatError(path, f"cannot detect the corpus format from fields {sorted(keys)}")


def detect_format(path: Path) -> str:
    """``shared`` or ``s2orc``, from Parquet column names or the first JSON object of a JSONL file."""
    if path.suffix == ".parquet":
        names = _parquet(path, lambda: pq.read_schema(path).names)
        fmt = format_of_keys(names)
        if fmt is None:
            raise _unknown_format(path, names)
        return fmt
    for rec in iter_raw_records(path):
        if isinstance(rec, dict):
            keys = [k for k in rec if not k.startswith("__")]
            fmt = format_of_keys(keys)
            if fmt is None:
                raise _unknown_format(path, keys)
            return fmt
    raise CorpusFormatError(path, "no JSON object found to detect the format")


def _parquet(path: Path, read):
    """Run ``read`` on a Parquet file, turning the errors of a damaged file into :class:`CorpusFileError`."""
    _check_not_empty(path)
    try:
        return read()
    except _READ_ERRORS as e:
        raise CorpusFileError(path, "file_unreadable", f"not a readable Parquet file ({_describe(e)})") from e


def parquet_metadata(path: Path) -> pq.FileMetaData:
    """A Parquet file's footer (row groups and their sizes), or :class:`CorpusFileError`."""
    return _parquet(path, lambda: pq.ParquetFile(path).metadata)


def _check_not_empty(path: Path) -> None:
    try:
        empty = path.stat().st_size == 0
    except OSError as e:
        raise CorpusFileError(path, "file_unreadable", f"cannot read the file ({_describe(e)})") from e
    if empty:
        raise CorpusFileError(path, "file_empty", "empty file (0 bytes)")


def _describe(e: BaseException) -> str:
    text = " ".join(str(e).split())
    return f"{type(e).__name__}: {text[:200]}" if text else type(e).__name__


def iter_raw_records(path: Path, row_group: int | None = None) -> Iterator[dict[str, Any] | BadRecord]:
    """Raw dicts from a Parquet file (optionally one row group) or a JSONL file, and a :class:`BadRecord` for
    each JSONL line that is not a JSON object.

    Each dict carries where it came from: ``__line__`` (JSONL line number) or ``__row__`` (Parquet row index in
    the file), and ``__non_utf8__`` when invalid UTF-8 bytes were replaced. Raises :class:`CorpusFileError`
    when the file cannot be read, possibly after some records (those stay valid).
    """
    _check_not_empty(path)
    try:
        yield from _parquet_rows(path, row_group) if path.suffix == ".parquet" else _jsonl_rows(path)
    except _READ_ERRORS as e:
        what = "cannot read the file" + (f" (row group {row_group})" if row_group is not None else "")
        raise CorpusFileError(path, "file_unreadable", f"{what}: {_describe(e)}") from e


def _parquet_rows(path: Path, row_group: int | None) -> Iterator[dict[str, Any]]:
    pf = _parquet(path, lambda: pq.ParquetFile(path))
    meta = pf.metadata
    row = sum(meta.row_group(i).num_rows for i in range(row_group or 0))
    groups = None if row_group is None else [row_group]
    for batch in pf.iter_batches(batch_size=_PARQUET_BATCH, row_groups=groups):
        try:
            recs: list[dict[str, Any] | BadRecord] = batch.to_pylist()
        except UnicodeDecodeError:  # a writer that skipped validation can store invalid UTF-8 as a string
            recs = [_parquet_row(batch, i, row + i) for i in range(batch.num_rows)]
        for rec in recs:
            if isinstance(rec, dict):
                rec["__row__"] = row
            row += 1
            yield rec


def _parquet_row(batch: pa.RecordBatch, i: int, row: int) -> dict[str, Any] | BadRecord:
    """Row ``i`` of a batch that holds invalid UTF-8 somewhere, or a :class:`BadRecord` naming its column."""
    rec = {}
    for name, column in zip(batch.schema.names, batch.columns, strict=True):
        try:
            rec[name] = column[i].as_py()
        except UnicodeDecodeError as e:
            return BadRecord(
                f"row:{row}", f"invalid_unicode:{name}", f"invalid UTF-8 in a string ({e.reason})"
            )
    return rec


def _open_lines(path: Path) -> Iterator[bytes]:
    opener = gzip.open if path.name.endswith(".gz") else open
    with opener(path, "rb") as fh:
        yield from fh


def _jsonl_rows(path: Path) -> Iterator[dict[str, Any] | BadRecord]:
    for lineno, raw in enumerate(_open_lines(path), start=1):
        if not raw.strip():
            continue
        # A byte-order mark opening the file is an encoding marker, not content.
        encoding = "utf-8-sig" if lineno == 1 else "utf-8"
        try:
            line = raw.decode(encoding)
            bad_bytes = False
        except UnicodeDecodeError:
            line = raw.decode(encoding, errors="replace")
            bad_bytes = True
        try:
            obj = json.loads(line)
        except (json.JSONDecodeError, RecursionError) as e:
            yield BadRecord(f"line:{lineno}", "malformed_json", _describe(e))
            continue
        if not isinstance(obj, dict):
            kind = "null" if obj is None else type(obj).__name__
            yield BadRecord(f"line:{lineno}", "not_an_object", f"a JSON {kind}, not an object")
            continue
        if bad_bytes:
            obj["__non_utf8__"] = True
        obj["__line__"] = lineno
        yield obj
