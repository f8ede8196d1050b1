"""Streaming, atomic Parquet shard writer: bounded memory, and no partial file ever at the final path."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from ratio_bench.io import atomic_path


class ShardWriter:
    """Buffers rows and flushes them as row groups; the file appears at ``path`` only on :meth:`close`."""

    def __init__(self, path: Path, schema: pa.Schema, rows_per_group: int = 20_000):
        self.path = path
        self.schema = schema
        self.rows_per_group = rows_per_group
        self.rows: list[dict[str, Any]] = []
        self.count = 0
        self._ctx = atomic_path(path)
        self._tmp = self._ctx.__enter__()
        self._writer = pq.ParquetWriter(self._tmp, schema, compression="zstd")

    def extend(self, rows: list[dict[str, Any]]) -> None:
        self.rows.extend(rows)
        if len(self.rows) >= self.rows_per_group:
            self._flush()

    def _flush(self) -> None:
        if self.rows:
            self._writer.write_table(pa.Table.from_pylist(self.rows, schema=self.schema))
            self.count += len(self.rows)
            self.rows = []

    def close(self) -> None:
        self._flush()
        self._writer.close()
        self._ctx.__exit__(None, None, None)

    def abort(self) -> None:
        self._writer.close()
        self._ctx.__exit__(RuntimeError, RuntimeError("aborted"), None)
