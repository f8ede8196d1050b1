"""A small dated release from a sample of ../shared/corpus (arXiv abstracts, six months), for the custody tests."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from tests.helpers.dataset import write_config

ARXIV = "arxiv_abstracts_2025_2026.parquet"
MONTHS = ("2025-04", "2025-05", "2025-06", "2025-07", "2025-08", "2025-09")
PER_MONTH = 150
SNAPSHOTS = {
    "period": "month",
    "start": "2025-07-01",
    "end": "2025-09-30",
    "min_queries": 1,
    "pool_size": 120,
}
SPLITS = {
    "train": {"end": "2025-05-31"},
    "validation": {"start": "2025-06-01", "end": "2025-06-30"},
    "test": {"start": "2025-07-01"},
}


def corpus_sample(shared: Path, out: Path, months: tuple[str, ...] = MONTHS) -> Path:
    """The first PER_MONTH abstracts of each month (by id), written as one Parquet file of the corpus schema."""
    table = pq.read_table(shared / ARXIV)
    month = pc.utf8_slice_codeunits(table.column("date"), 0, 7)
    parts = []
    for m in months:
        rows = table.filter(pc.equal(month, m))
        parts.append(rows.take(pc.sort_indices(rows, [("id", "ascending")])).slice(0, PER_MONTH))
    out.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.concat_tables(parts), out)
    return out


def sample_config(root: Path, corpus: Path, **overrides) -> Path:
    """A build config over the sample: train to May, validation June, test (monthly snapshots) July-September."""
    return write_config(
        root / "cfg.yaml", corpus, root / "work", splits=SPLITS, snapshots=SNAPSHOTS, **overrides
    )
