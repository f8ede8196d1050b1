"""Writing an assembly's tables as the release's Parquet shards (the layout :mod:`.contract` declares)."""

from __future__ import annotations

import math
from pathlib import Path

from ratio_bench.core.relations import RELATIONS
from ratio_bench.dataset.assemble import Assembly, sql_str

ROWS_PER_SHARD = 500_000
WORK_COLUMNS = "work_id, work_date_start, work_date_end"  # the work's routing date (see the card's schema)
QUERY_COLUMNS = f"""query_id, query, gold_id, gold, relation, marker, marker_stage, paper_id, date_raw AS date,
    date_start, date_end, venue, section, section_category, {WORK_COLUMNS}"""
CORPUS_COLUMNS = f"id, text, paper_id, date, date_start, date_end, role, {WORK_COLUMNS}"
QRELS_COLUMNS = """query_id AS "query-id", gold_id AS "corpus-id", CAST(1 AS INTEGER) AS score"""
QUERIES_COLUMNS = "query_id AS id, query AS text"  # the columns mteb's stock loader reads
WORKS_GLOB = "reports/works-*.parquet"  # one per version: the placed works of the corpus files it read


def works_file(version_index: int) -> str:
    return f"reports/works-{version_index:03d}.parquet"


def _copy(
    asm: Assembly, select: str, order: str, folder: Path, split: str, rows_per_shard: int
) -> list[Path]:
    """Write ``select`` as ordered shards; an empty split writes nothing (and is left out of the YAML)."""
    n = asm.con.execute(f"SELECT count(*) FROM ({select})").fetchone()[0]
    if n == 0:
        return []
    shards = max(1, math.ceil(n / rows_per_shard))
    folder.mkdir(parents=True, exist_ok=True)
    out = []
    for i in range(shards):
        path = folder / f"{split}-{i:05d}-of-{shards:05d}.parquet"
        page = f"LIMIT {rows_per_shard} OFFSET {i * rows_per_shard}" if shards > 1 else ""
        asm.con.execute(
            f"COPY (SELECT * FROM ({select}) ORDER BY {order} {page}) TO {sql_str(path)} "
            "(FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE 100000)"
        )
        out.append(path)
    return out


def write_data(
    asm: Assembly, root: Path, rows_per_shard: int = ROWS_PER_SHARD, splits: list[str] | None = None
) -> dict[str, dict[str, int]]:
    """Write every config's splits (default: all of the assembly's) under ``root/data``; returns row counts per
    config and split."""
    splits = asm.splits if splits is None else splits
    counts: dict[str, dict[str, int]] = {}
    asm.con.execute("SET threads=1")  # one writer thread: identical bytes on every rebuild
    for rel in RELATIONS:
        for part in splits:
            where = f"FROM queries WHERE relation = '{rel}' AND partition = '{part}'"
            _copy(
                asm, f"SELECT {QUERY_COLUMNS} {where}", "query_id", root / "data" / rel, part, rows_per_shard
            )
            for config, columns, order in (
                ("qrels", QRELS_COLUMNS, '"query-id"'),
                ("queries", QUERIES_COLUMNS, "id"),
            ):
                folder = root / "data" / f"{rel}-{config}"
                _copy(asm, f"SELECT {columns} {where}", order, folder, part, rows_per_shard)
            n = asm.con.execute(f"SELECT count(*) {where}").fetchone()[0]
            for config in (rel, f"{rel}-qrels", f"{rel}-queries"):
                counts.setdefault(config, {})[part] = n
    for part in splits:
        select = f"SELECT {CORPUS_COLUMNS} FROM candidates WHERE partition = '{part}'"
        _copy(asm, select, "id", root / "data" / "corpus", part, rows_per_shard)
        counts.setdefault("corpus", {})[part] = asm.con.execute(
            f"SELECT count(*) FROM ({select})"
        ).fetchone()[0]
    return counts


def write_works(asm: Assembly, path: Path, exclude: list[Path] | tuple[Path, ...] = ()) -> None:
    """Every placed work of the corpus the assembly read (its ``work_id``) up to the end of its last snapshot, not
    only those sampled into the release: a later ``ratio dataset append`` needs them to keep a new file's copy of
    an already public work (an arXiv version of an earlier conference paper) out of the new snapshots, as a rebuild
    would date the work by that copy. Works dated after the last snapshot are left out: their period is still to
    be cut, so their rows, given again with the next files, belong in it. A withheld split's works are left out
    too (they are in the custody folder's own index), and those of ``exclude`` (an earlier version's)."""
    periods = asm.report.get("snapshots", {}).get("periods", {})
    until = max((p["end"] for p in periods.values()), default=None)
    closed = f"AND work_date_start <= DATE {sql_str(until)}" if until else ""
    held = asm.con.execute(
        "SELECT count(*) FROM duckdb_tables() WHERE table_name = 'withheld_works'"
    ).fetchone()[0]
    if held:  # a withheld split's works are in custody (custody.WORKS), not in the public index
        closed += " AND work_id NOT IN (SELECT work_id FROM withheld_works)"
    if exclude:  # works an earlier version withheld (an append: the custody folder's works index)
        files = ", ".join(sql_str(f) for f in exclude)
        closed += f" AND work_id NOT IN (SELECT work_id FROM read_parquet([{files}]))"
    path.parent.mkdir(parents=True, exist_ok=True)
    asm.con.execute("SET threads=1")  # identical bytes on every rebuild
    asm.con.execute(
        f"COPY (SELECT DISTINCT work_id FROM paper_part WHERE partition IS NOT NULL {closed} ORDER BY work_id) "
        f"TO {sql_str(path)} (FORMAT parquet, COMPRESSION zstd)"
    )
