"""Streaming, atomic Parquet shard writer: bounded memory, and no partial file ever at the final path."""

from __future__ import annotations

from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from ratio_bench.core.io import atomic_path


class ShardWriter:
    """Buffers rows and flushes them as row groups; the file appears at ``path`` only on :meth:`close`.

    Each row group is converted and written by one background thread while the caller keeps mining: the
    conversion from Python rows holds the GIL, but Arrow's encoding and compression release it, so that part
    overlaps the caller's work. At most one group is in flight, so memory stays bounded, and groups are written
    in order, so the file is byte-for-byte the same as a synchronous write. A failed write is raised by the next
    :meth:`extend` or by :meth:`close`, and ``close`` then removes the partial file itself.
    """

    def __init__(self, path: Path, schema: pa.Schema, rows_per_group: int = 20_000):
        self.path = path
        self.schema = schema
        self.rows_per_group = rows_per_group
        self.rows: list[dict[str, Any]] = []
        self.count = 0
        self._ctx = atomic_path(path)
        self._tmp = self._ctx.__enter__()
        self._writer = pq.ParquetWriter(self._tmp, schema, compression="zstd")
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="shard-writer")
        self._pending: Future[None] | None = None
        self._done = False

    def extend(self, rows: list[dict[str, Any]]) -> None:
        self.rows.extend(rows)
        if len(self.rows) >= self.rows_per_group:
            self._flush()

    def _write(self, rows: list[dict[str, Any]]) -> None:
        self._writer.write_table(pa.Table.from_pylist(rows, schema=self.schema))

    def _wait(self) -> None:
        if self._pending is not None:
            pending, self._pending = self._pending, None
            pending.result()  # re-raises a failed write here, in the caller's thread

    def _flush(self) -> None:
        self._wait()
        if self.rows:
            rows, self.rows = self.rows, []
            self.count += len(rows)
            self._pending = self._pool.submit(self._write, rows)

    def close(self) -> None:
        try:
            self._flush()
            self._wait()
        except BaseException:
            self.abort()
            raise
        self._pool.shutdown()
        self._writer.close()
        self._ctx.__exit__(None, None, None)
        self._done = True

    def abort(self) -> None:
        """Stop writing and remove the partial file (safe to call again, or after a failed close)."""
        if self._done:
            return
        self._done = True
        self._pool.shutdown(wait=True, cancel_futures=True)
        self._pending = None
        self._writer.close()
        self._ctx.__exit__(RuntimeError, RuntimeError("aborted"), None)
