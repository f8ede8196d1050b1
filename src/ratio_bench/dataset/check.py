"""``ratio dataset check``: hold a release folder to the contract its card states.

The checks are independent reads of the published files (Parquet shards, the card's YAML header, the manifest);
they share no code path with assembly beyond the column contract in :mod:`ratio_bench.dataset.contract`, so a bug
in the build shows up here rather than being repeated. Each check reads its tables through DuckDB (out of core),
and a check that cannot even run on a damaged release counts as failed, with the reason.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
from rich.table import Table

from ratio_bench.core import extras
from ratio_bench.core.errors import RatioError
from ratio_bench.core.io import MANIFEST, report_console
from ratio_bench.core.relations import RELATIONS
from ratio_bench.core.snapshots import is_snapshot, parse_split
from ratio_bench.core.yamlio import load_yaml
from ratio_bench.dataset.assemble import sql_str
from ratio_bench.dataset.config import PARTITIONS, BuildConfig, parse_config
from ratio_bench.dataset.contract import (
    MINI,
    SILVER,
    card_columns,
    card_configs,
    config_names,
    config_schema,
    corpus_split,
    file_checksums,
    split_sha256,
)
from ratio_bench.dataset.release import Release

duckdb = extras.lazy("duckdb")

EXAMPLES = 3  # offending ids shown per failed check
READABLE = "shards readable"


class ReleaseCheckError(RatioError):
    """A release that breaks its own contract (``ratio dataset build`` refuses to put it in place)."""

    def __init__(self, message: str, results: list[CheckResult] | None = None):
        super().__init__(message)
        self.results = results or []


@dataclass(frozen=True)
class CheckResult:
    name: str
    passed: bool
    detail: str


class _ReleaseViews:
    """The release (:class:`~ratio_bench.dataset.release.Release`) as the checks see it: its config and one DuckDB
    view per config, over the shards as they are (the checks judge the schemas themselves)."""

    def __init__(self, root: Path):
        release = Release.open(root)
        self.root = root
        self.release = release
        self.manifest = release.manifest
        self.cfg: BuildConfig = parse_config(
            release.manifest.get("config"), f"{root / MANIFEST}: config", root / MANIFEST, root
        )
        self.con = duckdb.connect()
        self.con.execute("SET threads=2")
        self.files: dict[str, dict[str, list[Path]]] = {
            name: {split: release.shards(name, split) for split in release.splits(name)}
            for name in config_names()
        }
        self.unreadable = _unreadable(
            root, [f for splits in self.files.values() for fs in splits.values() for f in fs]
        )
        if self.unreadable:
            return  # no views: DuckDB would fail on the damaged shard before any check could name it
        for name in config_names():
            parts = [
                f"SELECT *, {sql_str(split)} AS split FROM read_parquet([{', '.join(sql_str(f) for f in fs)}])"
                for split, fs in self.files[name].items()
            ]
            view = " UNION ALL BY NAME ".join(parts) if parts else _empty_view(name)
            self.con.execute(f'CREATE VIEW "{name}" AS {view}')

    def rows(self, sql: str) -> list[tuple]:
        return self.con.execute(sql).fetchall()

    def has_work_columns(self) -> bool:
        """Releases built before work ids and work dates existed lack them (their schema check says so)."""
        for name in (*RELATIONS, "corpus"):
            cols = {c[0] for c in self.con.execute(f'DESCRIBE "{name}"').fetchall()}
            if self.files[name] and not {"work_id", "work_date_start", "work_date_end"} <= cols:
                return False
        return True


def _unreadable(root: Path, shards: list[Path]) -> list[str]:
    """``shard (reason)`` for each shard whose Parquet footer cannot be read (missing, truncated, not Parquet)."""
    bad = []
    for f in shards:
        try:
            pq.read_schema(f)
        except (OSError, pa.ArrowException) as exc:
            bad.append(f"{f.relative_to(root)} ({' '.join(str(exc).split())[:120]})")
    return bad


def _empty_view(config: str) -> str:
    """SQL: no rows, but the config's columns, so that every check also runs on a config without shards."""
    types = {pa.string(): "VARCHAR", pa.date32(): "DATE", pa.int32(): "INTEGER"}
    cols = [f'CAST(NULL AS {types[f.type]}) AS "{f.name}"' for f in config_schema(config)]
    return f"SELECT {', '.join(cols)}, CAST(NULL AS VARCHAR) AS split WHERE false"


def _examples(values: list[Any]) -> str:
    shown = ", ".join(str(v) for v in values[:EXAMPLES])
    return shown + (f" and {len(values) - EXAMPLES:,} more" if len(values) > EXAMPLES else "")


def _checksums(r: _ReleaseViews) -> CheckResult:
    recorded = r.manifest.get("files") or {}
    actual = file_checksums(r.root)
    changed = sorted(f for f in recorded.keys() & actual.keys() if recorded[f] != actual[f])
    missing = sorted(recorded.keys() - actual.keys())
    extra = sorted(actual.keys() - recorded.keys())
    problems = [
        f"{label}: {_examples(files)}"
        for label, files in (("changed", changed), ("missing", missing), ("not in the manifest", extra))
        if files
    ]
    return CheckResult(
        "checksums", not problems, "; ".join(problems) or f"{len(actual):,} files match {MANIFEST}"
    )


def _card_header(root: Path) -> dict[str, Any]:
    text = (root / "README.md").read_text(encoding="utf-8")
    if not text.startswith("---\n"):
        raise ReleaseCheckError("README.md has no YAML header")
    return load_yaml(text[4 : text.index("\n---", 4)]) or {}


def _configs_and_splits(r: _ReleaseViews) -> CheckResult:
    header = _card_header(r.root)
    declared = {
        c["config_name"]: {d["split"]: d["path"] for d in c.get("data_files") or []}
        for c in header["configs"]
    }
    problems = []
    rows = r.manifest.get("rows") or {}
    expected_card = card_configs(rows)
    if sorted(declared) != sorted(expected_card):
        problems.append(f"card declares configs {sorted(declared)}, expected {sorted(expected_card)}")
    for name in config_names():
        for split in PARTITIONS:
            if split not in (rows.get(name) or {}):
                problems.append(f"{name}/{split}: missing from the manifest's row counts")
        for split in r.release.all_splits:
            expected = (rows.get(name) or {}).get(split, 0)
            files = r.files[name].get(split, [])
            got = sum(pq.ParquetFile(f).metadata.num_rows for f in files)
            if got != expected:
                problems.append(f"{name}/{split}: {got:,} rows in the shards, {expected:,} in the manifest")
            if bool(expected) != (split in declared.get(name, {})):
                problems.append(f"{name}/{split}: declared in the card's header iff it has rows, but is not")
    columns = {c["config_name"]: c.get("columns") for c in header["configs"]}
    for name, splits in expected_card.items():
        if name in columns and columns[name] != card_columns(name):
            problems.append(f"{name}: card reads columns {columns[name]}, not {card_columns(name)}")
        for split, pattern in splits.items():
            if name in declared and declared[name].get(split, pattern) != pattern:
                problems.append(f"{name}/{split}: card points at {declared[name][split]}, not {pattern}")
    n = sum(len(fs) for splits in r.files.values() for fs in splits.values())
    return CheckResult(
        "configs and splits", not problems, _examples(problems) or f"{len(declared)} configs, {n} shards"
    )


def _schemas(r: _ReleaseViews) -> CheckResult:
    problems = []
    for name, splits in r.files.items():
        want = config_schema(name)
        for files in splits.values():
            for f in files:
                got = pq.read_schema(f)
                if [(x.name, x.type) for x in got] != [(x.name, x.type) for x in want]:
                    missing = [c for c in want.names if c not in got.names]
                    problems.append(f"{f.relative_to(r.root)}" + (f" lacks {missing}" if missing else ""))
    return CheckResult("schemas", not problems, _examples(problems) or "every shard has its config's columns")


def _golds_in_corpus(r: _ReleaseViews) -> CheckResult:
    bad = []
    for rel in RELATIONS:
        bad += r.rows(f"""
            SELECT '{rel}/' || q.split || ':' || q.query_id FROM "{rel}" q
            LEFT JOIN corpus c ON c.split = CASE WHEN q.split = '{SILVER}' THEN 'test' ELSE q.split END
                              AND c.id = q.gold_id
            WHERE c.text IS DISTINCT FROM q.gold ORDER BY 1""")
    bad_ids = [b[0] for b in bad]
    detail = (
        f"golds missing or altered: {_examples(bad_ids)}"
        if bad_ids
        else "every gold is verbatim in its corpus"
    )
    return CheckResult("golds in their corpus", not bad_ids, detail)


def _qrels(r: _ReleaseViews) -> CheckResult:
    bad = []
    for rel in RELATIONS:
        n = r.rows(f"""SELECT count(*) FROM (
            (SELECT split, query_id, gold_id, 1 FROM "{rel}" EXCEPT ALL
             SELECT split, "query-id", "corpus-id", score FROM "{rel}-qrels")
            UNION ALL
            (SELECT split, "query-id", "corpus-id", score FROM "{rel}-qrels" EXCEPT ALL
             SELECT split, query_id, gold_id, 1 FROM "{rel}"))""")[0][0]
        if n:
            bad.append(f"{rel}: {n:,} rows differ")
        n = r.rows(f"""SELECT count(*) FROM (
            (SELECT split, query_id, query FROM "{rel}" EXCEPT ALL SELECT split, id, text FROM "{rel}-queries")
            UNION ALL
            (SELECT split, id, text FROM "{rel}-queries" EXCEPT ALL SELECT split, query_id, query FROM "{rel}"))""")[
            0
        ][0]
        if n:
            bad.append(f"{rel}-queries: {n:,} rows differ")
    return CheckResult(
        "qrels match queries",
        not bad,
        "; ".join(bad) or "one score-1 judgment and one (id, text) row in <relation>-queries per query",
    )


def _placed_rows(r: _ReleaseViews) -> str:
    """SQL: (kind, id, split) for every query row and corpus row at its home partition (silver is part of test).

    In cumulative mode a partition's pool repeats the earlier partitions' candidates; a candidate's home is the
    first partition that holds it.
    """
    work = "work_id" if r.has_work_columns() else "NULL AS work_id"
    queries = " UNION ALL ".join(
        f'SELECT paper_id, {work}, split FROM "{rel}" WHERE split IN {PARTITIONS}' for rel in RELATIONS
    )
    ranks = "CASE split " + " ".join(f"WHEN '{p}' THEN {i}" for i, p in enumerate(PARTITIONS)) + " END"
    corpus = f"""SELECT paper_id, {work}, split FROM corpus WHERE split IN {PARTITIONS}
                 QUALIFY row_number() OVER (PARTITION BY id, paper_id ORDER BY {ranks}) = 1"""
    if r.cfg.mode != "cumulative":
        corpus = f"SELECT paper_id, {work}, split FROM corpus WHERE split IN {PARTITIONS}"
    return f"({queries} UNION ALL {corpus})"


def _one_partition(r: _ReleaseViews) -> CheckResult:
    problems = []
    rows = _placed_rows(r)
    for column in ("paper_id", "work_id"):
        twice = r.rows(f"""SELECT {column} || ' (' || string_agg(DISTINCT split, '+' ORDER BY split) || ')'
                           FROM {rows} WHERE {column} IS NOT NULL GROUP BY {column} HAVING count(DISTINCT split) > 1 ORDER BY 1""")
        if twice:
            problems.append(f"{column.split('_')[0]}s in two partitions: {_examples([t[0] for t in twice])}")
    return CheckResult(
        "no paper or work in two partitions",
        not problems,
        "; ".join(problems) or "every paper and work in one",
    )


def _partition_of(cfg: BuildConfig, start: dt.date | None, end: dt.date | None) -> int | None:
    """Where the card's date policy sends a work dated [start, end] (None: nowhere)."""
    if start is None:
        return None if cfg.unknown == "drop" else PARTITIONS.index(cfg.unknown)
    for i, s in enumerate(cfg.splits):
        if s.contains(start) and s.contains(end):
            return i
    by = {"start": start, "end": end}.get(cfg.straddle)
    return next((i for i, s in enumerate(cfg.splits) if by is not None and s.contains(by)), None)


def _time_order(r: _ReleaseViews) -> CheckResult:
    if not r.has_work_columns():
        return CheckResult(
            "partitions in time order",
            False,
            "no work_date_start/work_date_end columns (rebuild the release)",
        )
    sources = [
        f"SELECT split, work_id, work_date_start, work_date_end, '{rel}' AS config FROM \"{rel}\""
        for rel in RELATIONS
    ]
    sources.append("SELECT split, work_id, work_date_start, work_date_end, 'corpus' AS config FROM corpus")
    sources = [f"{s} WHERE split IN {(*PARTITIONS, SILVER)}" for s in sources]  # snapshots: their own check
    intervals = r.rows(
        f"SELECT DISTINCT config, split, work_date_start, work_date_end FROM ({' UNION ALL '.join(sources)})"
    )
    bad = []
    for config, split, start, end in intervals:
        home = PARTITIONS.index(corpus_split(split))
        got = _partition_of(r.cfg, start, end)
        ok = got == home or (
            config == "corpus" and r.cfg.mode == "cumulative" and got is not None and got <= home
        )
        if not ok:
            bad.append(f"{config}/{split} work dated {start}..{end}")
    bounds = ", ".join(f"{s.name} {s.start or 'open'} to {s.end or 'open'}" for s in r.cfg.splits)
    detail = (
        f"outside their partition: {_examples(sorted(bad))}"
        if bad
        else f"work dates within {bounds} (straddle: {r.cfg.straddle})"
    )
    return CheckResult("partitions in time order", not bad, detail)


def _unique_pairs(r: _ReleaseViews) -> CheckResult:
    queries = " UNION ALL ".join(
        f'SELECT query, gold FROM "{rel}" WHERE split IN {PARTITIONS}' for rel in RELATIONS
    )
    dup = r.rows(
        f"SELECT count(*) FROM (SELECT 1 FROM ({queries}) GROUP BY query, gold HAVING count(*) > 1)"
    )[0][0]
    total = r.rows(f"SELECT count(*) FROM ({queries})")[0][0]
    detail = (
        f"{dup:,} (query, gold) pairs occur more than once"
        if dup
        else f"{total:,} distinct (query, gold) pairs"
    )
    return CheckResult("no duplicate (query, gold) pairs", not dup, detail)


SNAPSHOT_COLUMNS = "split, paper_id, work_id, work_date_start, work_date_end"


def _snapshot_rows(r: _ReleaseViews, columns: str) -> str:
    """SQL: ``columns`` of every query and corpus row of the snapshot splits."""
    return " UNION ALL ".join(
        f'SELECT {columns} FROM "{config}" WHERE split IN {_sql_in(r.release.snapshots)}'
        for config in (*RELATIONS, "corpus")
    )


def _sql_in(values) -> str:
    """SQL: a parenthesised list of string literals (``('',)`` is what a one-item Python tuple would give)."""
    return "(" + ", ".join(sql_str(v) for v in (*values, "")) + ")"


def _snapshot_hashes(r: _ReleaseViews) -> CheckResult:
    """Each snapshot's files are the ones it was published with (its sha256 never changes, appends included)."""
    files = r.manifest.get("files") or {}
    problems = []
    for split, entry in r.release.snapshots.items():
        recorded = entry.get("sha256") if isinstance(entry, dict) else None
        if not any(r.files[rel].get(split) for rel in RELATIONS):
            problems.append(f"{split}: listed in the manifest's snapshots but has no query shards")
        elif recorded != split_sha256(files, split):
            problems.append(f"{split}: its files do not match the manifest's snapshot sha256")
    listed = {s for splits in (r.manifest.get("rows") or {}).values() for s in splits if is_snapshot(s)}
    problems += [
        f"{s}: has row counts but is not in the manifest's snapshots"
        for s in sorted(listed - set(r.release.snapshots))
    ]
    n = len(r.release.snapshots)
    return CheckResult(
        "snapshot hashes", not problems, _examples(problems) or f"{n} snapshot(s) match the manifest"
    )


def _snapshot_dates(r: _ReleaseViews) -> CheckResult:
    """Every snapshot row's work date lies inside the snapshot's period (its name says which)."""
    bad = []
    for split in r.release.snapshots:
        period = parse_split(split)
        assert period is not None
        rows = r.rows(f"""SELECT paper_id, work_date_start, work_date_end FROM ({_snapshot_rows(r, SNAPSHOT_COLUMNS)})
                          WHERE split = '{split}' AND (work_date_start IS NULL OR work_date_end IS NULL
                                OR work_date_start < DATE '{period.start}' OR work_date_end > DATE '{period.end}')
                          ORDER BY paper_id LIMIT 1""")
        bad += [f"{split}: paper {p} dated {a}..{b}, outside {period.label}" for p, a, b in rows]
    return CheckResult("snapshots inside their period", not bad, _examples(bad) or "every work date inside")


def _snapshot_papers(r: _ReleaseViews) -> CheckResult:
    """No snapshot's paper or work is in train, validation or another snapshot; one added by an append is not
    in test either (test was cut before it)."""
    versions = r.manifest.get("versions")
    first = (
        versions[0].get("version")
        if isinstance(versions, list) and versions and isinstance(versions[0], dict)
        else None
    )
    appended = [s for s, e in r.release.snapshots.items() if first is not None and e.get("version") != first]
    bad = []
    for split in r.release.snapshots:
        others = [s for s in r.release.snapshots if s != split] + ["train", "validation"]
        others += ["test"] if split in appended else []
        for column in ("paper_id", "work_id"):
            rows = r.rows(f"""
                WITH mine AS (SELECT DISTINCT {column} AS v FROM ({_snapshot_rows(r, SNAPSHOT_COLUMNS)}) WHERE split = '{split}'),
                     elsewhere AS ({" UNION ALL ".join(f'SELECT {column} AS v, split FROM "{c}"' for c in (*RELATIONS, "corpus"))})
                SELECT e.split, e.v FROM elsewhere e JOIN mine USING (v) WHERE e.split IN {_sql_in(others)}
                ORDER BY 1, 2 LIMIT 1""")
            bad += [f"{split}: {column.split('_')[0]} {v} is also in {other}" for other, v in rows]
    return CheckResult(
        "snapshots disjoint",
        not bad,
        _examples(bad) or "no snapshot paper or work in train, validation or another snapshot",
    )


def _mini_split(r: _ReleaseViews) -> CheckResult:
    """The mini split is what the manifest says: its sizes, its files' SHA-256, and drawn from test (every query
    one of test's, every candidate one of test's pool, its golds among them)."""
    recorded = r.manifest.get(MINI)
    has_rows = any(r.files[name].get(MINI) for name in config_names())
    if recorded is None:
        ok = not has_rows
        return CheckResult(
            "mini split", ok, "none (built before mini splits)" if ok else "rows but no manifest entry"
        )
    if not isinstance(recorded, dict):
        return CheckResult("mini split", False, "the manifest's mini is not a mapping")
    problems = []
    if recorded.get("sha256") != split_sha256(r.manifest.get("files") or {}, MINI):
        problems.append("its files do not match the manifest's mini sha256")
    expected = recorded.get("queries_by_relation") or {}
    for rel in RELATIONS:
        n, outside = r.rows(f"""SELECT count(*), count(*) FILTER (WHERE query_id NOT IN
                                (SELECT query_id FROM "{rel}" WHERE split = 'test')) FROM "{rel}" WHERE split = '{MINI}'""")[
            0
        ]
        if n != expected.get(rel, 0):
            problems.append(f"{rel}: {n} mini queries, the manifest says {expected.get(rel, 0)}")
        if outside:
            problems.append(f"{rel}: {outside} mini queries are not test queries")
    pool, outside = r.rows(f"""SELECT count(*), count(*) FILTER (WHERE id NOT IN
                               (SELECT id FROM corpus WHERE split = 'test')) FROM corpus WHERE split = '{MINI}'""")[
        0
    ]
    if pool != recorded.get("candidates"):
        problems.append(f"{pool} mini candidates, the manifest says {recorded.get('candidates')}")
    if outside:
        problems.append(f"{outside} mini candidates are not in test's pool")
    detail = f"{sum(expected.values()) if all(isinstance(v, int) for v in expected.values()) else '?'} queries, {pool} candidates"
    return CheckResult("mini split", not problems, _examples(problems) or detail)


CHECKS: list[tuple[str, Callable[[_ReleaseViews], CheckResult]]] = [
    ("checksums", _checksums),
    ("configs and splits", _configs_and_splits),
    ("schemas", _schemas),
    ("golds in their corpus", _golds_in_corpus),
    ("qrels match queries", _qrels),
    ("no paper or work in two partitions", _one_partition),
    ("partitions in time order", _time_order),
    ("no duplicate (query, gold) pairs", _unique_pairs),
    ("snapshot hashes", _snapshot_hashes),
    ("snapshots inside their period", _snapshot_dates),
    ("snapshots disjoint", _snapshot_papers),
    ("mini split", _mini_split),
]


def check_release(root: str | Path) -> list[CheckResult]:
    """Run every check on the release at ``root``; a check that crashes on damaged files counts as failed."""
    root = Path(root)
    if not root.is_dir():
        raise ReleaseCheckError(f"{root}: no such release folder")
    try:
        release = _ReleaseViews(root)
    except RatioError as exc:
        return [CheckResult("manifest and config", False, str(exc))]
    results = [CheckResult("manifest and config", True, f"{release.cfg.name} {release.cfg.version}")]
    n = sum(len(fs) for splits in release.files.values() for fs in splits.values())
    results.append(
        CheckResult(
            READABLE,
            not release.unreadable,
            f"unreadable: {_examples(release.unreadable)}" if release.unreadable else f"{n} Parquet shards",
        )
    )
    if release.unreadable:  # the data checks cannot run; what changed on disk is still worth naming
        release.con.close()
        return [*results, _checksums(release)]
    try:
        for name, check in CHECKS:
            try:
                results.append(check(release))
            except Exception as exc:  # noqa: BLE001 - a damaged release must fail the check, not crash it
                reason = (str(exc).splitlines() or [""])[0]
                results.append(CheckResult(name, False, f"could not run: {type(exc).__name__}: {reason}"))
    finally:
        release.con.close()
    return results


def require_passing(stage: Path, what: str, target: Path) -> list[CheckResult]:
    """``ratio dataset check`` on a release staged beside ``target``; every check must pass before it is swapped in,
    else ReleaseCheckError naming the failures (``target`` is left as it was)."""
    return all_passing(check_release(stage), what, target)


def all_passing(checks: list[CheckResult], what: str, target: Path) -> list[CheckResult]:
    """``checks`` when every one passed, else ReleaseCheckError naming the failures of ``what`` (``target`` is
    left as it was)."""
    failed = [c for c in checks if not c.passed]
    if failed:
        raise ReleaseCheckError(
            f"{what} fails `ratio dataset check` ({'; '.join(f'{c.name}: {c.detail}' for c in failed)}); "
            f"{target} was left unchanged",
            checks,
        )
    return checks


def print_results(root: Path, results: list[CheckResult]) -> None:
    table = Table(title=f"ratio check {root}")
    table.add_column("check")
    table.add_column("result")
    table.add_column("detail", overflow="fold")
    for res in results:
        table.add_row(res.name, "[green]pass[/green]" if res.passed else "[red]FAIL[/red]", res.detail)
    console = report_console()
    console.print(table)
    console.print(verdict(results), highlight=False)


def verdict(results: list[CheckResult]) -> str:
    """The one line a reader (or a script's grep) looks for under the table."""
    failed = [r.name for r in results if not r.passed]
    if not failed:
        return f"ratio check: PASS ({len(results)} checks)"
    return f"ratio check: FAIL: {len(failed)} of {len(results)} checks ({', '.join(failed)})"


def results_json(root: Path, results: list[CheckResult]) -> dict[str, Any]:
    return {
        "release": str(root),
        "passed": all(r.passed for r in results),
        "checks": [asdict(r) for r in results],
    }
