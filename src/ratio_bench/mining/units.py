"""Work units and tasks: the pieces of a corpus that are read one at a time (a Parquet row group or a JSONL
file), and the groups of consecutive units that one datatrove task mines into one set of output shards.

Row groups make the unit small enough to keep memory flat whatever the file sizes, so a large file is split by
its row groups; small files (a collection of parsed PDFs comes one paper per file) are grouped up to a target
size on disk (:func:`group_units`), so that 4,000 one-paper files are a handful of tasks with a handful of output
files each, not 4,000 tasks with 28,000 files. Both are stable: the same inputs and target always give the same
plan, so task ``k`` always writes the same shard. Each unit carries its file's fingerprint
(:mod:`ratio_bench.mining.fingerprint`), so a plan says which bytes it was made from, not only which paths.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path

import pyarrow.parquet as pq

from ratio_bench.corpus.sources import CorpusFileError, corpus_files, parquet_metadata
from ratio_bench.mining.fingerprint import file_fingerprint

# A task mines consecutive units up to this many bytes on disk (compressed Parquet or raw JSONL): large enough
# that per-task costs (a worker start, 7 small files) vanish, small enough that a corpus of a few hundred MB
# still makes tens of tasks for all cores. A unit larger than this is a task of its own.
TASK_BYTES = 8 << 20


@dataclass(frozen=True)
class WorkUnit:
    path: str
    row_group: int | None  # None: the whole file
    rows: int | None  # records in the unit, when known up front (for progress bars)
    size: int  # bytes on disk of the file
    mtime_ns: int  # the file's modification time
    digest: str  # the file's content digest (sampled; see mining.fingerprint)
    nbytes: int = 0  # bytes on disk of the unit itself (a row group's compressed columns; else the file)

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
            units.append(WorkUnit(path, None, None, **fp, nbytes=int(fp["size"])))
        else:
            units.extend(
                WorkUnit(path, i, meta.row_group(i).num_rows, **fp, nbytes=_row_group_bytes(meta, i))
                for i in range(meta.num_row_groups)
            )
    return units


def _row_group_bytes(meta: pq.FileMetaData, i: int) -> int:
    rg = meta.row_group(i)
    return sum(rg.column(c).total_compressed_size for c in range(rg.num_columns))


def group_units(units: list[WorkUnit], target_bytes: int = TASK_BYTES) -> list[tuple[int, int]]:
    """Tasks as ``[start, stop)`` ranges of ``units``: consecutive units while their bytes stay within
    ``target_bytes`` (a unit that alone exceeds it is a task of its own). Consecutive, so a task reads its
    files in corpus order, and a plan is a list of cut points."""
    if target_bytes < 1:
        raise ValueError(f"target_bytes must be positive, got {target_bytes}")
    tasks: list[tuple[int, int]] = []
    start, size = 0, 0
    for i, unit in enumerate(units):
        weight = max(unit.nbytes, 1)
        if i > start and size + weight > target_bytes:
            tasks.append((start, i))
            start, size = i, 0
        size += weight
    if units:
        tasks.append((start, len(units)))
    return tasks
