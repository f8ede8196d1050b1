"""Work units: the pieces of a corpus that tasks process independently (a Parquet row group or a JSONL file).

Row groups make the unit small enough to keep memory flat and progress fine-grained whatever the file sizes,
and they are stable: the same inputs always give the same plan, so task ``k`` always writes the same shard.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path

import pyarrow.parquet as pq

from ratio_bench.corpus.readers import corpus_files


@dataclass(frozen=True)
class WorkUnit:
    path: str
    row_group: int | None  # None: the whole file
    rows: int | None  # records in the unit, when known up front (for progress bars)
    size: int  # bytes on disk of the file (for the plan's fingerprint)

    @property
    def label(self) -> str:
        name = Path(self.path).name
        return name if self.row_group is None else f"{name}#rg{self.row_group}"

    def as_dict(self) -> dict:
        return asdict(self)


def plan_units(paths: list[str | Path]) -> list[WorkUnit]:
    units: list[WorkUnit] = []
    for f in corpus_files(paths):
        size = f.stat().st_size
        if f.suffix == ".parquet":
            meta = pq.ParquetFile(f).metadata
            units.extend(
                WorkUnit(str(f.resolve()), i, meta.row_group(i).num_rows, size)
                for i in range(meta.num_row_groups)
            )
        else:
            units.append(WorkUnit(str(f.resolve()), None, None, size))
    return units
