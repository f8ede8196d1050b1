"""Work units: the pieces of a corpus that tasks process independently (a Parquet row group or a JSONL file).

Row groups make the unit small enough to keep memory flat and progress fine-grained whatever the file sizes,
and they are stable: the same inputs always give the same plan, so task ``k`` always writes the same shard.
Each unit carries its file's fingerprint (:mod:`ratio_bench.mining.fingerprint`), so a plan says which bytes
it was made from, not only which paths.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path

import pyarrow.parquet as pq

from ratio_bench.corpus.sources import CorpusFileError, corpus_files, parquet_metadata
from ratio_bench.mining.fingerprint import file_fingerprint


@dataclass(frozen=True)
class WorkUnit:
    path: str
    row_group: int | None  # None: the whole file
    rows: int | None  # records in the unit, when known up front (for progress bars)
    size: int  # bytes on disk of the file
    mtime_ns: int  # the file's modification time
    digest: str  # the file's content digest (sampled; see mining.fingerprint)

    @property
    def label(self) -> str:
        name = Path(self.path).name
        return name if self.row_group is None else f"{name}#rg{self.row_group}"

    def as_dict(self) -> dict:
        return asdict(self)


def plan_units(paths: list[str | Path], strict: bool = False) -> list[WorkUnit]:
    """The units of every corpus file under ``paths``.

    A Parquet file whose footer cannot be read becomes one whole-file unit, so the task that reads it records
    it as a rejected file; with ``strict`` it is an error here, before any task runs.
    """
    units: list[WorkUnit] = []
    for f in corpus_files(paths):
        fp = file_fingerprint(f)
        path = str(f.resolve())
        meta: pq.FileMetaData | None = None
        if f.suffix == ".parquet":
            try:
                meta = parquet_metadata(f)
            except CorpusFileError:
                if strict:
                    raise
        if meta is None:
            units.append(WorkUnit(path, None, None, **fp))
        else:
            units.extend(
                WorkUnit(path, i, meta.row_group(i).num_rows, **fp) for i in range(meta.num_row_groups)
            )
    return units
