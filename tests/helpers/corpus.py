"""Corpus records in the shared schema and the files they are written to, for tests that read corpora."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

DATA = Path(__file__).resolve().parents[1] / "data"


SHARED_CORPUS = Path(
    os.environ.get("RATIO_SHARED_CORPUS", Path(__file__).resolve().parents[2] / ".." / "shared" / "corpus")
)


SHARED_SCHEMA = pa.schema(
    [(c, pa.string()) for c in ("id", "title", "date", "venue", "kind", "text", "source", "license")]
)


def shared_record(
    id: str, text: str | None, date: str | None = "2024-12", kind: str = "fulltext", **kw
) -> dict:
    return {
        "id": id,
        "title": kw.get("title"),
        "date": date,
        "venue": kw.get("venue", "Fixture Venue"),
        "kind": kind,
        "text": text,
        "source": kw.get("source", "fixture"),
        "license": "CC BY 4.0",
    }


def write_shared_parquet(path: Path, records: list[dict], row_group_size: int | None = None) -> Path:
    pq.write_table(pa.Table.from_pylist(records, schema=SHARED_SCHEMA), path, row_group_size=row_group_size)
    return path


def write_jsonl(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path
