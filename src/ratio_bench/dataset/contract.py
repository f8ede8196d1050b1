"""The release contract: what a Hub-ready release folder holds, for everyone who reads one (no DuckDB here).

Parquet shards per config and split, declared in the README's YAML header; :mod:`ratio_bench.dataset.layout` (writing; the contract it follows is :mod:`ratio_bench.dataset.contract`)
writes them from an assembly, :mod:`ratio_bench.dataset.release` reads them.

Configs: ``address``, ``broaden``, ``specify`` (queries with their gold; splits train/validation/test), ``corpus``
(the candidate pool of each partition, shared by the three relations), and MTEB's three tables per relation, named
as mteb's stock ``RetrievalDatasetLoader`` looks for them (subset ``<relation>``): ``<relation>-queries`` (id,
text), ``<relation>-qrels`` (query-id / corpus-id / score) and ``<relation>-corpus``, which the card points at
``corpus``'s own shards, so the corpus has one copy however it is loaded.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from fnmatch import fnmatch
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from ratio_bench.core.relations import RELATIONS
from ratio_bench.core.snapshots import parse_split

PARTITIONS = ("train", "validation", "test")  # the temporal partitions, in time order
KIND = "release"  # manifest kind: what Release.open accepts and a rebuild may replace
JUDGMENTS = (
    "judgments"  # silver verdicts (release files) and, by default, the judged pool (not release files)
)
KEEP = (
    JUDGMENTS,
)  # what a rebuild or a silver run carries over from the release it replaces, if not its own
SILVER = "silver"
# A small seeded slice of test (NanoBEIR-style: queries per relation, one pool), for a look in a minute on a CPU;
# its own pool under ``corpus/mini`` (cut in ``dataset/assemble.py: _mini``).
MINI = "mini"
SPLITS = (*PARTITIONS, SILVER)  # the silver split is a judged subset of test and retrieves from test's corpus


def corpus_split(split: str) -> str:
    """The ``corpus`` split a query split retrieves from (a snapshot retrieves from its own pool)."""
    return "test" if split == SILVER else split


def ordered_splits(snapshots: Iterable[str] = ()) -> tuple[str, ...]:
    """A release's splits in reading order: the partitions, mini, the snapshots in time order, silver.

    Snapshots are not fixed: a release has those its manifest lists (an append adds more); names that are no
    snapshot name (:func:`ratio_bench.core.snapshots.parse_split`) are ignored.
    """
    periods = sorted((p, s) for s in set(snapshots) if (p := parse_split(s)) is not None)
    return (*PARTITIONS, MINI, *(s for _, s in periods), SILVER)


def count_splits(counts: dict[str, dict[str, int]]) -> tuple[str, ...]:
    """The splits of a release's row counts (``manifest["rows"]``), snapshots included."""
    return ordered_splits(s for splits in counts.values() for s in splits)


def split_sha256(files: dict[str, str], split: str) -> str:
    """One split's identity: SHA-256 over the sorted (path, file SHA-256) pairs of its shards in every config.

    A snapshot keeps it across appends (its files never change), so a score on it stays comparable; silver's
    queries are its own, its corpus test's (both count, as a score depends on both).
    """
    h = hashlib.sha256()
    for path in sorted(files):
        parts = path.split("/")
        own = corpus_split(split) if len(parts) == 3 and parts[1] == "corpus" else split
        if len(parts) == 3 and parts[0] == "data" and parts[2].startswith(f"{own}-"):
            h.update(f"{path}\t{files[path]}\n".encode())
    return h.hexdigest()


_STR, _DATE = pa.string(), pa.date32()
QUERY_SCHEMA = pa.schema(
    [(c, _STR) for c in ("query_id", "query", "gold_id", "gold", "relation", "marker", "marker_stage")]
    + [("paper_id", _STR), ("date", _STR), ("date_start", _DATE), ("date_end", _DATE)]
    + [(c, _STR) for c in ("venue", "section", "section_category")]
    + [("work_id", _STR), ("work_date_start", _DATE), ("work_date_end", _DATE)]
)
CORPUS_SCHEMA = pa.schema(
    [(c, _STR) for c in ("id", "text", "paper_id", "date")]
    + [("date_start", _DATE), ("date_end", _DATE), ("role", _STR)]
    + [("work_id", _STR), ("work_date_start", _DATE), ("work_date_end", _DATE)]
)
QRELS_SCHEMA = pa.schema([("query-id", _STR), ("corpus-id", _STR), ("score", pa.int32())])
QUERIES_SCHEMA = pa.schema([("id", _STR), ("text", _STR)])


def config_schema(config: str) -> pa.Schema:
    """The column names and types every shard of ``config`` has (what ``ratio dataset check`` holds a release to)."""
    if config == "corpus":
        return CORPUS_SCHEMA
    if config.endswith("-queries"):
        return QUERIES_SCHEMA
    return QRELS_SCHEMA if config.endswith("-qrels") else QUERY_SCHEMA


def config_names() -> list[str]:
    """The configs with shards of their own, under ``data/<config>/``."""
    return [*RELATIONS, "corpus", *(f"{r}-{t}" for t in ("qrels", "queries") for r in RELATIONS)]


def card_configs(counts: dict[str, dict[str, int]]) -> dict[str, dict[str, str]]:
    """Every config the card declares, with its splits' file patterns (a split without rows is left out).

    Besides :func:`config_names`, ``<relation>-corpus`` has a split for each split of the relation's queries
    and points at the shards of the ``corpus`` split they retrieve from (silver: test's), read with the
    columns of :func:`card_columns`.
    """
    splits = count_splits(counts)
    declared = {
        name: {s: f"data/{name}/{s}-*.parquet" for s in splits if counts.get(name, {}).get(s)}
        for name in config_names()
    }
    for rel in RELATIONS:
        declared[f"{rel}-corpus"] = {
            s: f"data/corpus/{corpus_split(s)}-*.parquet"
            for s in splits
            if counts.get(f"{rel}-queries", {}).get(s) and counts["corpus"].get(corpus_split(s))
        }
    return declared


def card_columns(config: str) -> list[str] | None:
    """The columns a config reads from its shards (None: all). ``<relation>-corpus`` reads id and text only:
    mteb's loader hands every column to its data loader, which cannot batch the date columns."""
    return ["id", "text"] if config.endswith("-corpus") else None


def dataset_info_yaml(root: Path, counts: dict[str, dict[str, int]]) -> str:
    """The ``dataset_info:`` block: split sizes per config (rows, and bytes of the Parquet files).

    Besides documenting sizes, this makes ``datasets``' cache key differ between releases that keep the same
    folder name, so a rebuilt release is never served from the cache of an older one.
    """
    lines = ["dataset_info:"]
    for name, splits in card_configs(counts).items():
        size = sum(p.stat().st_size for pattern in set(splits.values()) for p in root.glob(pattern))
        lines += [f"- config_name: {name}", "  splits:"]
        for part, pattern in splits.items():
            files = sorted(root.glob(pattern))
            rows = sum(pq.ParquetFile(f).metadata.num_rows for f in files)
            lines += [
                f"  - name: {part}",
                f"    num_bytes: {sum(f.stat().st_size for f in files)}",
                f"    num_examples: {rows}",
            ]
        lines += [f"  download_size: {size}"]
    return "\n".join(lines)


def configs_yaml(counts: dict[str, dict[str, int]]) -> str:
    """The ``configs:`` block of the README header that makes ``load_dataset(path, name)`` find the files.

    Empty splits are left out (``datasets`` cannot load a split without rows); the card's tables show them as 0.
    """
    lines = ["configs:"]
    for name, splits in card_configs(counts).items():
        lines += [f"- config_name: {name}"]
        if card_columns(name):
            lines += [f"  columns: [{', '.join(card_columns(name))}]"]
        lines += ["  data_files:"]
        for part, pattern in splits.items():
            lines += [f"  - split: {part}", f"    path: {pattern}"]
    return "\n".join(lines)


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


# The judged pool (evaluation/scoring/pool.py) lives in the release's judgments/ folder by default but is not part of
# the release: it grows with every judged run, so it must change neither the checksums nor the identity that
# results, runs and the pool itself record.
POOL_FILES = ("judgments/pool.json", "judgments/candidates-*.parquet")


def file_checksums(root: Path) -> dict[str, str]:
    """SHA-256 of every file of a release except the manifest that records them and the judged pool."""
    out = {}
    for p in sorted(root.rglob("*")):
        rel = p.relative_to(root).as_posix()
        if p.is_file() and p.name != "manifest.json" and not any(fnmatch(rel, g) for g in POOL_FILES):
            out[rel] = sha256_file(p)
    return out
