"""A synthetic corpus whose routing, de-duplication and pools are known exactly."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from tests.helpers.corpus import write_jsonl
from tests.helpers.dataset import SYNTHETIC, records

from ratio_bench.dataset.contract import file_checksums


@pytest.fixture
def dataset_corpus(tmp_path: Path) -> Path:
    folder = tmp_path / "corpus"
    folder.mkdir()
    a, b = records()
    write_jsonl(folder / "a_source.jsonl", a)
    write_jsonl(folder / "b_source.jsonl", b)
    return folder


@pytest.fixture
def silver_release(small_release: Path, tmp_path: Path) -> Path:
    """A copy of the small release whose test queries are replaced by synthetic pairs (schema kept)."""
    root = tmp_path / "release"
    shutil.copytree(small_release, root)
    manifest = json.loads((root / "manifest.json").read_text())
    for rel in ("address", "broaden", "specify"):
        folder = root / "data" / rel
        template = pq.read_table(next((root / "data" / "address").glob("test-*.parquet")))
        rows = []
        for r, marker, n in SYNTHETIC:
            if r != rel:
                continue
            for i in range(n):
                row = dict(template.slice(0, 1).to_pylist()[0])
                row |= {
                    "query_id": f"{rel[0]}-{marker[:6].replace(' ', '_')}-{i:03d}",
                    "query": f"the {rel} query number {i} about {marker} states a clear problem.",
                    "gold_id": f"g-{rel}-{marker[:6]}-{i}",
                    "gold": f"we answer query {i} with a concrete method.",
                    "relation": rel,
                    "marker": marker,
                }
                rows.append(row)
        for f in folder.glob("test-*.parquet"):
            f.unlink()
        pq.write_table(
            pa.Table.from_pylist(rows, schema=template.schema), folder / "test-00000-of-00001.parquet"
        )
        manifest["rows"][rel]["test"] = len(rows)
    manifest["config"].pop("silver", None)
    manifest["files"] = file_checksums(root)  # the new shards are the release's own
    (root / "manifest.json").write_text(json.dumps(manifest))
    return root
