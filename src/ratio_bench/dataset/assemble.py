"""Assembly: de-duplicated pairs, temporal partitions and per-partition candidate pools, out of core on DuckDB.

Order of operations follows the spec (section 4.2, appendix B.2):

1. every mined paper gets a partition from its date interval and the config's date policy; papers that are the
   same work under two sources (same normalised title) are kept together, in the earliest partition any of them
   reaches, so no work contributes to two partitions;
2. (query, gold) pairs are de-duplicated over the whole corpus, keeping the earliest occurrence;
3. each partition's candidate pool is its golds plus the distractor sentences of its papers, shared by the three
   relations; capped partitions are sampled deterministically (seeded hashes of content ids), keeping the
   configured distractors-per-gold ratio.

Every id is derived from content (``q`` + hash of relation, query and gold; ``c`` + hash of the text), so ids
are stable across rebuilds and identical sentences share one candidate.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from ratio_bench.core import extras
from ratio_bench.core.errors import RatioError
from ratio_bench.core.relations import RELATIONS
from ratio_bench.core.snapshots import Period, parse_split, periods_between
from ratio_bench.dataset.config import PARTITIONS, BuildConfig
from ratio_bench.dataset.contract import MINI, split_sha256
from ratio_bench.mining.schema import DISTRACTOR_SCHEMA, PAIR_SCHEMA

duckdb = extras.lazy("duckdb")

MINI_QUERIES = 200  # per relation in the mini split (all of test's when it has fewer)
MINI_POOL = 5000  # the mini split's candidates: its queries' golds plus seeded distractors from test's pool
TITLE_KEY_MIN_CHARS = 20  # shorter normalised titles ("introduction", "") are not trusted to identify a work


class AssemblyError(RatioError, ValueError):
    """Unusable mining outputs or an impossible partition; the message names the file or the partition."""


@dataclass
class Assembly:
    """A DuckDB connection holding the assembled tables: ``queries`` and ``candidates`` (per partition)."""

    con: duckdb.DuckDBPyConnection
    report: dict[str, Any]

    @property
    def splits(self) -> list[str]:
        """The query splits to write: the partitions, then the snapshots in time order."""
        return [*PARTITIONS, MINI, *self.report.get("snapshots", {}).get("periods", {})]


def check_shards(folder: Path, schema, what: str) -> list[Path]:
    """Every Parquet shard under ``folder`` must have exactly the mining schema (named errors otherwise)."""
    files = sorted(folder.glob("*.parquet"))
    if not files:
        raise AssemblyError(f"{folder}: no {what} shards (run `ratio mine` first)")
    for f in files:
        got = pq.read_schema(f)
        missing = [n for n in schema.names if n not in got.names]
        if missing:
            raise AssemblyError(
                f"{f}: missing column(s) {missing} (expected the {what} schema of this version)"
            )
        for name in schema.names:
            if not got.field(name).type.equals(schema.field(name).type):
                raise AssemblyError(
                    f"{f}: column {name!r} has type {got.field(name).type}, "
                    f"expected {schema.field(name).type} (mixed schemas)"
                )
    return files


def sql_str(value: str | Path) -> str:
    """A SQL string literal for DuckDB (quotes doubled), so any path works, apostrophes included."""
    return "'" + str(value).replace("'", "''") + "'"


def _sql_list(paths: list[Path]) -> str:
    return "[" + ", ".join(sql_str(p) for p in paths) + "]"


def _within(alias: str, first: str, last: str) -> str:
    """SQL: the interval [first, last] lies inside partition ``alias`` (open-ended bounds are NULL)."""
    return f"({alias}.lo IS NULL OR {first} >= {alias}.lo) AND ({alias}.hi IS NULL OR {last} <= {alias}.hi)"


def _lit(value: Any) -> str:
    return "NULL" if value is None else f"DATE '{value.isoformat()}'"


def assemble(
    cfg: BuildConfig,
    mined: Path,
    temp_dir: Path,
    memory_limit: str = "4GB",
    known: list[Path] | None = None,
    known_works: list[Path] | None = None,
) -> Assembly:
    """The release's tables from the mined shards, in named SQL stages over one DuckDB connection.

    ``known``: the query and corpus shards of an existing release (``ratio dataset append``): before the snapshots
    are cut, pairs and distractors of works, pairs or queries it already holds are removed (``append_excluded``
    counts them), and partitions may be empty (only new periods are wanted). ``known_works``: its works index files
    (every placed work of the corpus it was built from, :func:`.layout.write_works`), also known works.
    """
    pair_files = check_shards(mined / "pairs", PAIR_SCHEMA, "pairs")
    dist_files = check_shards(mined / "distractors", DISTRACTOR_SCHEMA, "distractors")
    con = _connect(pair_files, dist_files, temp_dir, memory_limit)
    for stage in STAGES:
        if stage is _snapshots and known is not None:
            _exclude_known(con, known, known_works or [])
        stage(con, cfg)
    report = _report(con, cfg)
    empty = [p for p in PARTITIONS if report["partitions"][p]["queries"] == 0]
    if empty and known is None:
        raise AssemblyError(
            f"{cfg.path}: partition(s) {empty} received no query; check `splits` and `date_policy` "
            f"against the corpus dates (routing: {report['routing']})"
        )
    return Assembly(con, report)


def _connect(
    pair_files: list[Path], dist_files: list[Path], temp_dir: Path, memory_limit: str
) -> duckdb.DuckDBPyConnection:
    """A DuckDB connection with the mined shards as the views ``pairs_in`` and ``distractors_in``."""
    temp_dir.mkdir(parents=True, exist_ok=True)
    con = duckdb.connect()
    con.execute(f"SET memory_limit={sql_str(memory_limit)}")
    con.execute(f"SET temp_directory={sql_str(temp_dir)}")
    con.execute("SET preserve_insertion_order=true")
    con.execute(f"CREATE VIEW pairs_in AS SELECT * FROM read_parquet({_sql_list(pair_files)})")
    con.execute(f"CREATE VIEW distractors_in AS SELECT * FROM read_parquet({_sql_list(dist_files)})")
    return con


def _route_papers(con: duckdb.DuckDBPyConnection, cfg: BuildConfig) -> None:
    """``paper_part``: each paper's partition by its work's date (the config's splits and date policy)."""
    rows = ", ".join(f"('{s.name}', {i}, {_lit(s.start)}, {_lit(s.end)})" for i, s in enumerate(cfg.splits))
    con.execute(
        f"CREATE TABLE parts(name VARCHAR, rank INTEGER, lo DATE, hi DATE); INSERT INTO parts VALUES {rows}"
    )
    con.execute("""
        CREATE TABLE papers AS
        SELECT paper_id, min(title) AS title, min(date_start) AS date_start, max(date_end) AS date_end,
               min(date_raw) AS date_raw, min(date_precision) AS date_precision, min(source_file) AS source_file
        FROM (SELECT paper_id, title, date_start, date_end, date_raw, date_precision, source_file FROM pairs_in
              UNION ALL
              SELECT paper_id, title, date_start, date_end, date_raw, date_precision, source_file FROM distractors_in)
        GROUP BY paper_id
    """)
    straddle = {"drop": "NULL", "start": "s.rank", "end": "e.rank"}[cfg.straddle]
    unknown = "NULL" if cfg.unknown == "drop" else str(PARTITIONS.index(cfg.unknown))
    con.execute(f"""
        CREATE TABLE paper_rank AS
        SELECT x.paper_id, x.title, x.date_start, x.date_end, x.source_file,
               CASE WHEN x.date_start IS NULL THEN {unknown}
                    WHEN i.rank IS NOT NULL THEN i.rank
                    WHEN s.rank IS NULL AND e.rank IS NULL THEN NULL
                    ELSE {straddle} END AS own_rank,
               CASE WHEN x.date_start IS NULL THEN 'unknown_date'
                    WHEN i.rank IS NOT NULL THEN 'inside'
                    WHEN s.rank IS NULL AND e.rank IS NULL THEN 'out_of_range'
                    ELSE 'straddle_{cfg.straddle}' END AS reason,
               CASE WHEN length(regexp_replace(lower(coalesce(x.title, '')), '[^a-z0-9]+', '', 'g'))
                         >= {TITLE_KEY_MIN_CHARS}
                    THEN 't:' || regexp_replace(lower(x.title), '[^a-z0-9]+', '', 'g')
                    ELSE 'p:' || x.paper_id END AS work_key
        FROM papers x
        LEFT JOIN parts i ON {_within("i", "x.date_start", "x.date_end")}
        LEFT JOIN parts s ON {_within("s", "x.date_start", "x.date_start")}
        LEFT JOIN parts e ON {_within("e", "x.date_end", "x.date_end")}
    """)
    # A work goes where its earliest-reaching copy goes; that copy's date interval is the work date every row of
    # the work carries (work_date_start/end), so a reader can check the routing without the other copies.
    con.execute("""
        CREATE TABLE paper_part AS
        WITH w AS (
            SELECT work_key, own_rank AS work_rank, date_start AS work_date_start, date_end AS work_date_end
            FROM paper_rank
            QUALIFY row_number() OVER (PARTITION BY work_key
                                       ORDER BY own_rank NULLS LAST, date_start NULLS LAST, date_end NULLS LAST,
                                                paper_id) = 1
        )
        SELECT r.*, w.work_rank AS rank, parts.name AS partition,
               'w' || substr(sha256(r.work_key), 1, 16) AS work_id, w.work_date_start, w.work_date_end
        FROM paper_rank r JOIN w USING (work_key) LEFT JOIN parts ON parts.rank = w.work_rank
    """)


def _dedup_pairs(con: duckdb.DuckDBPyConnection, cfg: BuildConfig) -> None:
    """``pairs_dedup``: pairs de-duplicated over the whole corpus (earliest occurrence wins), placed papers only."""
    con.execute("""
        CREATE TABLE pairs_all AS
        SELECT q.*, pp.partition, pp.rank, pp.work_id, pp.work_date_start, pp.work_date_end,
               'q' || substr(sha256(q.relation || chr(10) || q.query || chr(10) || q.gold), 1, 16) AS query_id,
               'c' || substr(sha256(q.gold), 1, 16) AS gold_id,
               row_number() OVER (PARTITION BY q.query, q.gold
                                  ORDER BY pp.rank NULLS LAST, q.date_start NULLS LAST, q.paper_id,
                                           q.paragraph_index, q.sentence_index, q.relation) AS dup_rank
        FROM pairs_in q JOIN paper_part pp USING (paper_id)
    """)
    con.execute(
        "CREATE TABLE pairs_dedup AS SELECT * FROM pairs_all WHERE dup_rank = 1 AND partition IS NOT NULL"
    )


def _sample_queries(con: duckdb.DuckDBPyConnection, cfg: BuildConfig) -> None:
    """``queries``, sampled per capped partition and relation (seeded), and their ``golds``."""
    selects = []
    for part in PARTITIONS:
        sampling = cfg.sampling.get(part)
        for rel in RELATIONS:
            cap = sampling.max_queries.get(rel) if sampling else None
            limit = f"LIMIT {int(cap)}" if cap is not None else ""
            selects.append(f"""(SELECT * FROM pairs_dedup WHERE partition = '{part}' AND relation = '{rel}'
                               ORDER BY md5('{cfg.seed}:' || query_id), query_id {limit})""")
    con.execute("CREATE TABLE queries AS " + " UNION ALL ".join(selects))
    con.execute("""
        CREATE TABLE golds AS
        SELECT partition, gold_id AS id, min(gold) AS text, min_by(paper_id, query_id) AS paper_id,
               min_by(date_raw, query_id) AS date, min_by(date_start, query_id) AS date_start,
               min_by(date_end, query_id) AS date_end, min_by(relation, query_id) AS role,
               min_by(work_id, query_id) AS work_id, min_by(work_date_start, query_id) AS work_date_start,
               min_by(work_date_end, query_id) AS work_date_end
        FROM queries GROUP BY partition, gold_id
    """)


def _sample_distractors(con: duckdb.DuckDBPyConnection, cfg: BuildConfig) -> None:
    """``distractors_kept``: per partition, distractor sentences that are no gold, sampled per gold when capped."""
    con.execute("""
        CREATE TABLE distractor_pool AS
        SELECT pp.partition, 'c' || substr(sha256(d.text), 1, 16) AS id, d.text,
               min_by(d.paper_id, d.occurrence) AS paper_id, min_by(d.date_raw, d.occurrence) AS date,
               min_by(d.date_start, d.occurrence) AS date_start, min_by(d.date_end, d.occurrence) AS date_end,
               min(d.category) AS role, min_by(pp.work_id, d.occurrence) AS work_id,
               min_by(pp.work_date_start, d.occurrence) AS work_date_start,
               min_by(pp.work_date_end, d.occurrence) AS work_date_end
        FROM (SELECT *, paper_id || ':' || paragraph_index || ':' || sentence_index AS occurrence
              FROM distractors_in) d
        JOIN paper_part pp USING (paper_id)
        WHERE pp.partition IS NOT NULL
        GROUP BY pp.partition, d.text
    """)
    dist_selects = []
    for part in PARTITIONS:
        sampling = cfg.sampling.get(part)
        limit = ""
        if sampling and sampling.distractors_per_gold is not None:
            n_gold = con.execute("SELECT count(*) FROM golds WHERE partition = ?", [part]).fetchone()[0]
            limit = f"LIMIT {round(sampling.distractors_per_gold * n_gold)}"
        dist_selects.append(f"""(SELECT d.* FROM distractor_pool d ANTI JOIN golds g
                                    ON g.partition = d.partition AND g.id = d.id
                                 WHERE d.partition = '{part}' ORDER BY md5('{cfg.seed}:' || d.id), d.id {limit})""")
    con.execute("CREATE TABLE distractors_kept AS " + " UNION ALL ".join(dist_selects))


def _candidates(con: duckdb.DuckDBPyConnection, cfg: BuildConfig) -> None:
    """``candidates``: golds and distractors of each partition (cumulative mode: of it and the earlier ones)."""
    con.execute("CREATE TABLE candidates AS SELECT * FROM golds UNION ALL SELECT * FROM distractors_kept")
    if cfg.mode == "cumulative":
        con.execute("""
            CREATE TABLE candidates_cumulative AS
            SELECT p.name AS partition, c.* EXCLUDE (partition)
            FROM parts p JOIN parts q ON q.rank <= p.rank JOIN candidates c ON c.partition = q.name
            QUALIFY row_number() OVER (PARTITION BY p.name, c.id ORDER BY q.rank DESC) = 1
        """)
        con.execute("DROP TABLE candidates; ALTER TABLE candidates_cumulative RENAME TO candidates")


def _exclude_known(con: duckdb.DuckDBPyConnection, known: list[Path], works: list[Path]) -> None:
    """Remove from the test rows what an existing release already holds: its works (papers, and every work of the
    corpus it was built from: ``works``), its (query, gold) pairs and its query texts; ``append_excluded`` counts
    the pairs removed per reason (first reason wins)."""
    rows = f"read_parquet({_sql_list(known)}, union_by_name = true)"
    con.execute(f"CREATE TABLE known_rows AS SELECT DISTINCT paper_id, work_id, query, gold FROM {rows}")
    indexed = f"UNION SELECT work_id FROM read_parquet({_sql_list(works)})" if works else ""
    con.execute(f"CREATE TABLE known_works AS SELECT work_id FROM known_rows {indexed}")
    con.execute("CREATE TABLE append_excluded(reason VARCHAR, n BIGINT)")
    known_work = (
        "work_id IN (SELECT work_id FROM known_works) OR paper_id IN (SELECT paper_id FROM known_rows)"
    )
    for reason, where in (
        ("known_work", known_work),
        ("known_pair", "(query, gold) IN (SELECT (query, gold) FROM known_rows)"),
        ("known_query", "query IN (SELECT query FROM known_rows WHERE query IS NOT NULL)"),
    ):
        n = con.execute(f"SELECT count(*) FROM pairs_dedup WHERE {where}").fetchone()[0]
        con.execute("INSERT INTO append_excluded VALUES (?, ?)", [reason, n])
        con.execute(f"DELETE FROM pairs_dedup WHERE {where}")
    con.execute(f"DELETE FROM distractor_pool WHERE {known_work}")


def _snapshot_periods(con: duckdb.DuckDBPyConnection, cfg: BuildConfig) -> list[Period]:
    """The periods to cut: from ``snapshots.start`` to the last whole period before ``snapshots.end`` (else the
    test split's end; with neither, up to the period where the test partition's latest work starts)."""
    snap = cfg.snapshots
    assert snap is not None
    end = snap.end or cfg.partition("test").end
    if end is None:
        end = con.execute("""SELECT max(work_date_start) FROM (
            SELECT work_date_start FROM pairs_dedup WHERE partition = 'test'
            UNION ALL SELECT work_date_start FROM distractor_pool WHERE partition = 'test')""").fetchone()[0]
        return periods_between(snap.start, end, snap.period) if end else []
    return [p for p in periods_between(snap.start, end, snap.period) if p.end <= end]


def _placement(alias: str) -> str:
    """SQL: why a test row is or is not in a snapshot (its work interval against ``snap_periods``)."""
    return f"""CASE WHEN {alias}.work_date_start IS NULL THEN 'not_in_a_period'
                    WHEN {alias}.work_date_start < (SELECT min(lo) FROM snap_periods) THEN 'before_start'
                    WHEN {alias}.work_date_start > (SELECT max(hi) FROM snap_periods) THEN 'after_end'
                    WHEN per.split IS NULL THEN 'not_in_a_period' ELSE 'in_a_period' END"""


def _snapshots(con: duckdb.DuckDBPyConnection, cfg: BuildConfig) -> None:
    """Snapshot splits: the test partition's pairs and distractors cut by the period of their work's date.

    Every de-duplicated test pair is placed (not only the sampled test queries); per period and relation a seeded
    sample of at most ``max_queries`` is kept, a relation with fewer than ``min_queries`` is left out, and the pool
    is the kept golds plus that period's distractors up to exactly ``pool_size``. The rows go into ``queries``
    and ``candidates`` with the split name as their partition; ``snap_left_out`` says what was left out and why.
    """
    if cfg.snapshots is None:
        return
    snap = cfg.snapshots
    periods = _snapshot_periods(con, cfg)
    con.execute("CREATE TABLE snap_periods(split VARCHAR, label VARCHAR, lo DATE, hi DATE)")
    if periods:
        con.executemany(
            "INSERT INTO snap_periods VALUES (?, ?, ?, ?)",
            [(p.split, p.label, p.start, p.end) for p in periods],
        )
    inside = "per.lo <= {0}.work_date_start AND {0}.work_date_end <= per.hi"
    con.execute(f"""
        CREATE TABLE snap_pairs AS
        SELECT p.*, per.split, {_placement("p")} AS placement
        FROM pairs_dedup p LEFT JOIN snap_periods per ON {inside.format("p")} WHERE p.partition = 'test'""")
    con.execute(f"""
        CREATE TABLE snap_distractors AS
        SELECT d.*, per.split, {_placement("d")} AS placement
        FROM distractor_pool d LEFT JOIN snap_periods per ON {inside.format("d")} WHERE d.partition = 'test'""")
    con.execute("""CREATE TABLE snap_left_out(split VARCHAR, relation VARCHAR, reason VARCHAR, available BIGINT);
                   CREATE TABLE snap_queries AS SELECT * EXCLUDE (placement) FROM snap_pairs WHERE false""")
    for p in periods:
        for rel in RELATIONS:
            where = f"FROM snap_pairs WHERE split = '{p.split}' AND relation = '{rel}'"
            available = con.execute(f"SELECT count(*) {where}").fetchone()[0]
            if 0 < available < snap.min_queries:
                reason = f"fewer than min_queries ({snap.min_queries}) queries"
                con.execute(
                    "INSERT INTO snap_left_out VALUES (?, ?, ?, ?)", [p.split, rel, reason, available]
                )
            if available < snap.min_queries:
                continue
            cap = snap.max_queries.get(rel)
            limit = f"LIMIT {int(cap)}" if cap is not None else ""
            con.execute(f"""INSERT INTO snap_queries SELECT * EXCLUDE (placement) {where}
                            ORDER BY md5('{cfg.seed}:' || query_id), query_id {limit}""")
        _snapshot_pool(con, cfg, p)
    con.execute("""INSERT INTO queries SELECT * EXCLUDE (split) REPLACE (split AS partition) FROM snap_queries
                   WHERE split NOT IN (SELECT split FROM snap_left_out WHERE relation IS NULL)""")


def _snapshot_pool(con: duckdb.DuckDBPyConnection, cfg: BuildConfig, period: Period) -> None:
    """One period's pool in ``candidates``: the kept queries' golds plus seeded distractors up to ``pool_size``
    (a period whose distractors cannot fill it, or with no relation left, is left out with its reason)."""
    assert cfg.snapshots is not None
    size, split = cfg.snapshots.pool_size, period.split
    golds = f"""SELECT '{split}' AS partition, gold_id AS id, min(gold) AS text, min_by(paper_id, query_id),
                       min_by(date_raw, query_id), min_by(date_start, query_id), min_by(date_end, query_id),
                       min_by(relation, query_id), min_by(work_id, query_id), min_by(work_date_start, query_id),
                       min_by(work_date_end, query_id)
                FROM snap_queries WHERE split = '{split}' GROUP BY gold_id"""
    n_golds = con.execute(f"SELECT count(*) FROM ({golds})").fetchone()[0]
    others = f"""FROM snap_distractors d WHERE d.split = '{split}'
                 AND d.id NOT IN (SELECT gold_id FROM snap_queries WHERE split = '{split}')"""
    available = con.execute(f"SELECT count(*) {others}").fetchone()[0]
    reason = (
        f"no relation with at least min_queries ({cfg.snapshots.min_queries}) queries"
        if n_golds == 0
        else f"{n_golds} golds exceed pool_size {size}"
        if n_golds > size
        else f"{available} distractors cannot fill the pool of {size} ({n_golds} golds)"
        if available < size - n_golds
        else None
    )
    pairs = con.execute(f"SELECT count(*) FROM snap_pairs WHERE split = '{split}'").fetchone()[0]
    if (
        reason and not pairs
    ):  # a gap in the corpus (the dev corpus has no paper dated 2025-02): said, not skipped
        reason = "no test pair is dated in this period"
    if reason:
        con.execute("INSERT INTO snap_left_out VALUES (?, NULL, ?, ?)", [split, reason, available])
        return
    con.execute(f"INSERT INTO candidates {golds}")
    con.execute(f"""INSERT INTO candidates
                    SELECT d.* EXCLUDE (split, placement) REPLACE ('{split}' AS partition) {others}
                    ORDER BY md5('{cfg.seed}:' || d.id), d.id LIMIT {size - n_golds}""")


def _withhold(con: duckdb.DuckDBPyConnection, cfg: BuildConfig) -> None:
    """Custody: the snapshot(s) the config's ``custody:`` policy withholds (``withheld``) keep their rows under
    their split name, and every public split loses the rows that would give them away: any row of a withheld
    work, and any query, gold or candidate whose text is a withheld text (a boilerplate sentence of an older
    paper); a public query whose gold went with them goes too. ``withheld_removed`` counts what each public
    config lost, so the test partition (and the mini split, silver and the card's examples drawn from it) holds
    nothing of the withheld period.
    """
    con.execute("CREATE TABLE withheld(split VARCHAR); CREATE TABLE withheld_removed(what VARCHAR, n BIGINT)")
    cut = sorted(
        (p, s)
        for (s,) in con.execute("SELECT DISTINCT partition FROM queries").fetchall()
        if (p := parse_split(s)) is not None
        and con.execute("SELECT count(*) FROM candidates WHERE partition = ?", [s]).fetchone()[0]
    )
    chosen = cfg.custody.choose([s for _, s in cut])
    if not chosen:
        return
    con.executemany("INSERT INTO withheld VALUES (?)", [(s,) for s in chosen])
    held = "partition IN (SELECT split FROM withheld)"
    con.execute(f"""CREATE TABLE withheld_texts AS
                    SELECT query AS text FROM queries WHERE {held} UNION SELECT gold FROM queries WHERE {held}
                    UNION SELECT text FROM candidates WHERE {held}""")
    con.execute(f"""CREATE TABLE withheld_works AS
                    SELECT work_id FROM queries WHERE {held} UNION SELECT work_id FROM candidates WHERE {held}""")
    public = f"NOT ({held})"
    work = "work_id IN (SELECT work_id FROM withheld_works)"
    texts = "(SELECT text FROM withheld_texts)"
    for what, table, where in (
        ("queries", "queries", f"{work} OR query IN {texts} OR gold IN {texts}"),
        ("candidates", "candidates", f"{work} OR text IN {texts}"),
        (
            "queries_without_their_gold",
            "queries",
            "NOT EXISTS (SELECT 1 FROM candidates c WHERE c.partition = queries.partition AND c.id = queries.gold_id)",
        ),
    ):
        n = con.execute(f"SELECT count(*) FROM {table} WHERE {public} AND ({where})").fetchone()[0]
        con.execute("INSERT INTO withheld_removed VALUES (?, ?)", [what, n])
        con.execute(f"DELETE FROM {table} WHERE {public} AND ({where})")


def withheld_report(con: duckdb.DuckDBPyConnection) -> dict[str, Any]:
    """What custody took out of an assembly: the withheld splits and the public rows removed with them."""
    return {
        "withheld": [s for (s,) in con.execute("SELECT split FROM withheld ORDER BY split").fetchall()],
        "public_rows_removed": dict(con.execute("SELECT what, n FROM withheld_removed").fetchall()),
    }


def _mini(con: duckdb.DuckDBPyConnection, cfg: BuildConfig) -> None:
    """The mini split: per relation a seeded ``MINI_QUERIES`` of test's queries, and a pool of ``MINI_POOL``: their
    golds plus seeded candidates of test's pool (its distractors and other queries' golds, as in test itself).

    Why: a dense model on a CPU needs about 15 minutes for test's 40,000-candidate pool and about a minute for
    this one (BEIR users start from NanoBEIR the same way); its figures are a quick look, not the benchmark's.
    """
    order = f"md5('{cfg.seed}:{MINI}:' || query_id), query_id"
    con.execute(f"""INSERT INTO queries SELECT * EXCLUDE (pick) REPLACE ('{MINI}' AS partition) FROM (
                        SELECT *, row_number() OVER (PARTITION BY relation ORDER BY {order}) AS pick
                        FROM queries WHERE partition = 'test') WHERE pick <= {MINI_QUERIES}""")
    golds = f"SELECT gold_id FROM queries WHERE partition = '{MINI}'"
    con.execute(f"""INSERT INTO candidates SELECT * REPLACE ('{MINI}' AS partition) FROM candidates
                    WHERE partition = 'test' AND id IN ({golds})""")
    n_golds = con.execute(f"SELECT count(*) FROM candidates WHERE partition = '{MINI}'").fetchone()[0]
    con.execute(f"""INSERT INTO candidates SELECT * REPLACE ('{MINI}' AS partition) FROM candidates
                    WHERE partition = 'test' AND id NOT IN ({golds})
                    ORDER BY md5('{cfg.seed}:{MINI}:' || id), id LIMIT {max(MINI_POOL - n_golds, 0)}""")


def mini_manifest(report: dict[str, Any], files: dict[str, str]) -> dict[str, Any]:
    """The manifest's ``mini``: its stated and actual sizes and the SHA-256 of its files (``ratio dataset check``)."""
    return {**report, "sha256": split_sha256(files, MINI)}


STAGES = (
    _route_papers, _dedup_pairs, _sample_queries, _sample_distractors, _candidates, _snapshots, _withhold, _mini,
)  # fmt: skip


def _report(con: duckdb.DuckDBPyConnection, cfg: BuildConfig) -> dict[str, Any]:
    def rows(sql: str) -> list[tuple]:
        return con.execute(sql).fetchall()

    routing: dict[str, dict[str, int]] = {}
    for reason, part, n in rows("""SELECT reason, coalesce(partition, 'dropped'), count(*) FROM paper_part
                                   GROUP BY ALL ORDER BY ALL"""):
        routing.setdefault(reason, {})[part] = n
    by_source: dict[str, dict[str, int]] = {}
    for src, part, n in rows("""SELECT source_file, coalesce(partition, 'dropped'), count(*) FROM paper_part
                                GROUP BY ALL ORDER BY ALL"""):
        by_source.setdefault(src, {})[part] = n
    moved = rows("SELECT count(*) FROM paper_part WHERE own_rank IS DISTINCT FROM rank")[0][0]
    partitions = {}
    for part in PARTITIONS:
        q = dict(rows(f"SELECT relation, count(*) FROM queries WHERE partition = '{part}' GROUP BY ALL"))
        d = dict(
            rows(
                f"SELECT role, count(*) FROM candidates WHERE partition = '{part}' AND role NOT IN "
                f"{tuple(RELATIONS)} GROUP BY ALL"
            )
        )
        g = rows(
            f"SELECT count(*) FROM candidates WHERE partition = '{part}' AND role IN {tuple(RELATIONS)}"
        )[0][0]
        avail = dict(
            rows(f"SELECT relation, count(*) FROM pairs_dedup WHERE partition = '{part}' GROUP BY ALL")
        )
        partitions[part] = {
            "queries": sum(q.values()),
            "queries_by_relation": {r: q.get(r, 0) for r in RELATIONS},
            "pairs_available_by_relation": {r: avail.get(r, 0) for r in RELATIONS},
            "gold_candidates": g,
            "distractors_by_category": dict(sorted(d.items())),
            "candidates": g + sum(d.values()),
        }
    dup = rows("SELECT count(*) FROM pairs_all WHERE dup_rank > 1")[0][0]
    unplaced = rows("SELECT count(*) FROM pairs_all WHERE dup_rank = 1 AND partition IS NULL")[0][0]
    total = rows("SELECT count(*) FROM pairs_all")[0][0]
    out = {
        "pairs_mined": total,
        "pairs_duplicate_removed": dup,
        "pairs_unplaced_removed": unplaced,
        "pairs_unique_placed": total - dup - unplaced,
        "papers_moved_to_keep_same_work_together": moved,
        "routing": routing,
        "papers_by_source": by_source,
        "partitions": partitions,
        "mode": cfg.mode,
        "date_policy": {"straddle": cfg.straddle, "unknown": cfg.unknown},
    }
    if cfg.snapshots is not None:
        out["snapshots"] = _snapshot_report(con, cfg)
        custody = withheld_report(con)
        if custody["withheld"]:
            out["custody"] = custody
    out[MINI] = _mini_report(con, cfg)
    return out


def _mini_report(con: duckdb.DuckDBPyConnection, cfg: BuildConfig) -> dict[str, Any]:
    """The mini split's stated sizes, and what it holds (fewer when test has fewer)."""
    kept = dict(
        con.execute(
            f"SELECT relation, count(*) FROM queries WHERE partition = '{MINI}' GROUP BY ALL"
        ).fetchall()
    )
    golds = con.execute(f"""SELECT count(*) FROM candidates WHERE partition = '{MINI}'
                            AND id IN (SELECT gold_id FROM queries WHERE partition = '{MINI}')""").fetchone()[
        0
    ]
    pool = con.execute(f"SELECT count(*) FROM candidates WHERE partition = '{MINI}'").fetchone()[0]
    return {
        "drawn_from": "test",
        "seed": cfg.seed,
        "queries_per_relation": MINI_QUERIES,
        "pool_size": MINI_POOL,
        "queries_by_relation": {r: kept.get(r, 0) for r in RELATIONS},
        "golds": golds,
        "candidates": pool,
    }


def _snapshot_report(con: duckdb.DuckDBPyConnection, cfg: BuildConfig) -> dict[str, Any]:
    """Per snapshot its split, queries (kept and available) by relation and pool; what was left out and why."""
    assert cfg.snapshots is not None

    def counts(sql: str) -> dict[str, int]:
        return dict(con.execute(sql).fetchall())

    left = con.execute("""SELECT l.split, per.label, l.relation, l.reason, l.available FROM snap_left_out l
                          JOIN snap_periods per USING (split) ORDER BY per.lo, l.relation NULLS FIRST""").fetchall()
    dropped = {split for split, _, rel, _, _ in left if rel is None}
    periods = {}
    for split, label, lo, hi in con.execute("SELECT * FROM snap_periods ORDER BY lo").fetchall():
        kept = counts(f"SELECT relation, count(*) FROM queries WHERE partition = '{split}' GROUP BY ALL")
        if split in dropped or not kept:
            continue
        avail = counts(f"SELECT relation, count(*) FROM snap_pairs WHERE split = '{split}' GROUP BY ALL")
        roles = counts(f"""SELECT role IN {tuple(RELATIONS)}, count(*) FROM candidates
                           WHERE partition = '{split}' GROUP BY ALL""")
        golds, distractors = roles.get(True, 0), roles.get(False, 0)
        periods[split] = {
            "period": label,
            "start": lo.isoformat(),
            "end": hi.isoformat(),
            "queries_by_relation": {r: kept[r] for r in RELATIONS if r in kept},
            "available_by_relation": {r: avail.get(r, 0) for r in RELATIONS},
            "golds": golds,
            "distractors": distractors,
            "candidates": golds + distractors,
            "distractors_per_gold": round(distractors / golds, 2),
        }
    snap = cfg.snapshots
    return {
        "period": snap.period,
        "min_queries": snap.min_queries,
        "max_queries": {r: snap.max_queries.get(r) for r in RELATIONS},
        "pool_size": snap.pool_size,
        "pairs_by_placement": counts("SELECT placement, count(*) FROM snap_pairs GROUP BY ALL ORDER BY ALL"),
        "distractors_by_placement": counts(
            "SELECT placement, count(*) FROM snap_distractors GROUP BY ALL ORDER BY ALL"
        ),
        "periods": periods,
        "left_out": [
            {"period": label, "split": split, "relation": rel, "reason": reason, "available": n}
            for split, label, rel, reason, n in left
        ],
    }
