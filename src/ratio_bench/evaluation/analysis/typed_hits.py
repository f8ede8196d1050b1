"""Hits of a typed search, and the share of each top k that does the requested move (precision@k).

A hits file (Parquet, :data:`HITS_SCHEMA`) is what ``ratio search --queries FILE --out HITS`` writes: one row per
(system, query, move, rank), the candidate named by its id alone, so the pool's sentences stay in the release
they came from (a hits file can be committed where the corpus may not be). Two readings of "does this hit do the
move" give the same figure, precision@k with a bootstrap interval over queries
(:func:`ratio_bench.evaluation.scoring.uncertainty.mean_interval`):

- *judged*: a labeller's verdict per (query, move, candidate), read from ``ratio judge label`` files
  (``ratio judge typed-search report``);
- *mined role*: the candidate's role in the release is the requested move, i.e. it was mined as the gold of
  that move for some query (``ratio analyze mined-role`` on benchmark runs, and beside the judged figure). It is
  a cheap, automatic proxy: it needs no labels, but a gold of the move for *another* query may not do the move
  for this one, and a distractor may.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from ratio_bench.core.errors import RatioError
from ratio_bench.core.io import atomic_path
from ratio_bench.evaluation.scoring.uncertainty import DEFAULT, Bootstrap, mean_interval

HITS_SCHEMA = pa.schema(
    [
        ("system", pa.string()),
        ("query_id", pa.string()),
        ("move", pa.string()),
        ("rank", pa.int32()),
        ("candidate_id", pa.string()),
        ("score", pa.float64()),
    ]
)
SOURCE_KEY = b"ratio_hits_source"  # Parquet metadata: the index's source (release name, version, split)
MAX_QUERIES_BYTES = 16 * 2**20  # a queries file is a few hundred sentences, not a corpus


class HitsError(RatioError, ValueError):
    """A queries or hits file that cannot be read as one (the message names the file and line or column)."""


@dataclass(frozen=True)
class Query:
    """One query of a typed-search set: its id and sentence (and, as written, where it came from)."""

    query_id: str
    text: str
    inspired_by: str = ""  # the paper whose problem it paraphrases (an id, never its text)
    field: str = ""  # the research area, for the spread of the set


@dataclass(frozen=True)
class Hit:
    system: str
    query_id: str
    move: str
    rank: int  # from 1
    candidate_id: str
    score: float = 0.0


@dataclass(frozen=True)
class PrecisionCell:
    """One system on one move: the mean over queries of (doing hits in the top k) / k, its interval."""

    system: str
    move: str
    k: int
    precision: float
    low: float
    high: float
    queries: int
    hits: int  # hits read (queries x k, less where a list is shorter)
    decided: int  # hits with a verdict; the others count as not doing the move

    def to_json(self) -> dict[str, Any]:
        return self.__dict__.copy()


def read_queries(path: str | Path) -> list[Query]:
    """A JSONL file of queries (``query_id``, ``query``; optional ``inspired_by``, ``field``), ids unique."""
    path = Path(path)
    try:
        size = path.stat().st_size
    except OSError as e:
        raise HitsError(f"--queries {path}: cannot read it ({e.strerror})") from None
    if size > MAX_QUERIES_BYTES:
        raise HitsError(f"--queries {path}: {size:,} bytes; a queries file is at most {MAX_QUERIES_BYTES:,}")
    out, seen = [], set()
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            query = Query(
                str(row["query_id"]), row["query"], str(row.get("inspired_by", "")), str(row.get("field", ""))
            )
        except (json.JSONDecodeError, KeyError, TypeError, AttributeError) as e:
            raise HitsError(f"{path}:{n}: not a query row with query_id and query ({e})") from None
        if not isinstance(query.text, str) or not query.text.strip():
            raise HitsError(f"{path}:{n}: query must be a non-empty sentence")
        if query.query_id in seen:
            raise HitsError(f"{path}:{n}: query_id {query.query_id!r} appears twice; ids must be unique")
        seen.add(query.query_id)
        out.append(query)
    if not out:
        raise HitsError(f"--queries {path}: no queries in it")
    return out


def write_hits(path: str | Path, hits: Sequence[Hit], source: dict[str, Any]) -> None:
    """Hits as Parquet (atomically), with the index's ``source`` in the file's metadata."""
    columns = {name: [getattr(h, name) for h in hits] for name in HITS_SCHEMA.names}
    meta = {SOURCE_KEY: json.dumps(source, sort_keys=True).encode()}
    table = pa.table(columns, schema=HITS_SCHEMA.with_metadata(meta))
    with atomic_path(path) as tmp:
        pq.write_table(table, tmp)


def is_hits_file(path: str | Path) -> bool:
    """Whether ``path`` is a plain file that :func:`write_hits` wrote (the only kind it may replace)."""
    path = Path(path)
    if path.is_symlink() or not path.is_file():
        return False
    try:
        return SOURCE_KEY in (pq.read_schema(path).metadata or {})
    except (OSError, pa.ArrowException):
        return False


def read_hits(paths: Iterable[str | Path]) -> tuple[list[Hit], list[dict[str, Any]]]:
    """The hits of several files (one per system, typically) and each file's source."""
    hits: list[Hit] = []
    sources = []
    for path in paths:
        try:
            table = pq.read_table(path)
        except (OSError, pa.ArrowException) as e:
            raise HitsError(f"--hits {path}: not a readable Parquet file ({e})") from None
        missing = [c for c in HITS_SCHEMA.names if c not in table.column_names]
        if missing:
            raise HitsError(f"--hits {path}: no column {missing[0]}; write it with `ratio search --queries`")
        meta = table.schema.metadata or {}
        try:
            sources.append(json.loads(meta.get(SOURCE_KEY, b"{}")))
        except ValueError:
            raise HitsError(f"--hits {path}: its {SOURCE_KEY.decode()} metadata is not JSON") from None
        rows = table.select(HITS_SCHEMA.names).to_pylist()
        hits += [Hit(**r) for r in rows]
    return hits, sources


def precision_at_k(
    hits: Iterable[Hit],
    verdict: Callable[[Hit], bool | None],
    k: int,
    settings: Bootstrap = DEFAULT,
) -> list[PrecisionCell]:
    """Per (system, move): each query's share of its top ``k`` for which ``verdict`` is True, averaged over
    queries, with its bootstrap interval. A None verdict (not judged) counts as not doing the move and is
    reported in ``decided``, so missing labels lower a figure rather than silently shrinking its sample."""
    lists: dict[tuple[str, str], dict[str, list[Hit]]] = defaultdict(lambda: defaultdict(list))
    for h in hits:
        lists[(h.system, h.move)][h.query_id].append(h)
    cells = []
    for (system, move), per_query in lists.items():
        shares, read, decided = [], 0, 0
        for qid in sorted(per_query):
            top = sorted(per_query[qid], key=lambda h: h.rank)[:k]
            verdicts = [verdict(h) for h in top]
            read += len(top)
            decided += sum(v is not None for v in verdicts)
            shares.append(sum(v is True for v in verdicts) / k)
        band = mean_interval(shares, settings)
        assert band is not None  # every group has at least one query
        cells.append(
            PrecisionCell(
                system, move, k, sum(shares) / len(shares), band.low, band.high, len(shares), read, decided
            )
        )
    return sorted(cells, key=lambda c: (c.system, c.move))


def mined_role_verdict(roles: dict[str, str]) -> Callable[[Hit], bool | None]:
    """The proxy's verdict: the hit's role in the release (``corpus.role``) is the move; None if not in it."""

    def verdict(hit: Hit) -> bool | None:
        role = roles.get(hit.candidate_id)
        return None if role is None else role == hit.move

    return verdict


def precision_markdown(
    tables: dict[str, list[PrecisionCell]], systems: Sequence[str], moves: Sequence[str]
) -> str:
    """One Markdown table: a row per system, per move a column per measure (``judged``, ``mined role``...),
    each cell the precision with its interval in percent, and n (queries) per move."""
    index = {(name, c.system, c.move): c for name, cells in tables.items() for c in cells}
    header = ["system"] + [f"{m} {name}" for m in moves for name in tables] + [f"n ({m})" for m in moves]
    lines = ["| " + " | ".join(header) + " |", "|" + " --- |" * len(header)]
    for system in systems:
        cells = []
        for m in moves:
            for name in tables:
                c = index.get((name, system, m))
                cells.append(
                    "—" if c is None else f"{100 * c.precision:.1f} [{100 * c.low:.1f}, {100 * c.high:.1f}]"
                )
        for m in moves:
            ns = {c.queries for (name, s, mv), c in index.items() if s == system and mv == m}
            cells.append("/".join(str(n) for n in sorted(ns)) or "—")
        lines.append("| " + " | ".join([system] + cells) + " |")
    return "\n".join(lines) + "\n"
