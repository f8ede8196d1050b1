"""The board on a rich console: by default one compact table per release build (MRR@10 per move, n, interval:
:func:`compact_table`, also the table ``ratio score`` prints); with ``--wide`` each release build's table, the per-relation rankings and the clean-snapshot
ranking as tables, and a figure's interval on its own line for narrow columns. The columns are the board view's
(:mod:`.board_view`), as in Markdown and HTML.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.table import Table

from ratio_bench.core.relations import RELATIONS
from ratio_bench.evaluation.board.cells import figure_text, interval_note, query_count
from ratio_bench.evaluation.board.clean_ranking import CLEAN_HEAD, clean_cells, clean_ranking
from ratio_bench.evaluation.board.escaping import terminal_text
from ratio_bench.evaluation.board.leaderboard import ReleaseEntries
from ratio_bench.evaluation.board.ranks import RELATION_NOTE, ranked, relation_ranked
from ratio_bench.evaluation.board.view import (
    WITHHELD_COLUMNS,
    WITHHELD_NOTE,
    Column,
    Row,
    columns,
    withheld_rows,
)
from ratio_bench.evaluation.entry.record import Entry, Scored
from ratio_bench.evaluation.scoring import uncertainty


def terminal_clean_table(release: ReleaseEntries) -> Any:
    t = Table(title=terminal_text(f"Clean snapshots only: {release.title} (%)"))
    for name in CLEAN_HEAD:
        t.add_column(name)
    for rank, row in clean_ranking(release):
        t.add_row(*map(terminal_text, clean_cells(rank, row)))
    return t


def _table(title: str, shown: list[Column], rows: list[Row], caption: str = "") -> Any:
    """A rich table of the view's ``shown`` columns: numbers right-aligned, a figure's interval beneath it."""

    t = Table(title=terminal_text(title), caption=terminal_text(caption) or None)
    for c in shown:
        t.add_column(terminal_text(c.header), justify="right" if c.relation else "left")
    for row in rows:
        t.add_row(
            *(terminal_figure(c.text(row)) if c.relation else terminal_text(c.text(row)) for c in shown)
        )
    return t


def terminal_release_table(release: ReleaseEntries) -> Any:
    """A release build's main table (every relation's figures), ranked within each split."""
    rows = [Row(rank, e) for rank, e in ranked(release)]
    caption = interval_note() if any(e.per_query for e in release.entries) else ""
    return _table(f"Leaderboard {release.title} (%)", columns(release.entries), rows, caption)


def terminal_withheld_table(release: ReleaseEntries) -> Any | None:
    """The withheld view (None when no verified entry has withheld figures): ranked by the withheld split."""
    rows = withheld_rows(release.entries)
    if not rows:
        return None
    shown = WITHHELD_COLUMNS
    return _table(f"Withheld split: {release.title} (%)", shown, rows, WITHHELD_NOTE)


def terminal_relation_tables(release: ReleaseEntries) -> list[Any]:
    """The per-relation rankings as rich tables (one per relation with entries), for the console."""
    tables = []
    for rel in RELATIONS:
        rows = relation_ranked(release, rel)
        if rows:
            title = f"{rel}: {RELATION_NOTE} (%)"
            shown = columns(release.entries, rel)
            tables.append(_table(title, shown, [Row(*r) for r in rows], interval_note()))
    return tables


def terminal_figure(text: str) -> str:
    """A figure for a narrow console column: the interval on a second line, dimmed."""
    value, _, bounds = text.partition(" ")
    return terminal_text(value) + (f"\n[dim]{terminal_text(bounds)}[/dim]" if bounds else "")


# The compact default of `ratio score` and `ratio leaderboard` on a console: the figure a researcher reads first
# (MRR@10 per move, its queries and its 95% interval), one line per model; the full table is behind --wide.
COMPACT_METRIC, COMPACT_LABEL = "mrr_at_10", "MRR@10"
COMPACT_NOTE = "Every metric: --wide or --json."


def compact_figure(entry: Entry | Scored, relation: str, with_n: bool = False) -> str:
    """``14.5 [12.9-16.1]`` (the interval when the entry keeps per-query ranks), ``-`` when not scored;
    ``with_n``: the relation's query count after it (when the rows of a table do not share one)."""
    value = entry.results.get(relation, {}).get(COMPACT_METRIC)
    if value is None:
        return "-"
    n = query_count(entry, relation)
    bounds = uncertainty.intervals(entry, relation, [COMPACT_METRIC]).get(COMPACT_METRIC)
    text = figure_text(value, bounds, n)
    return f"{text} n={n:,}" if with_n and n is not None else text


def compact_table(title: str, rows: Sequence[tuple[str, Entry | Scored]]) -> Any:
    """One line per row (``rank``, name, then per move MRR@10 with its interval), each move's ``n`` in its
    header when every row shares it (else in the cell). The figures are never cut: a narrow console folds the
    name instead."""

    t = Table(title=terminal_text(title), caption=terminal_text(interval_note() + " " + COMPACT_NOTE))
    entries = [e for _, e in rows]
    ranks = any(rank for rank, _ in rows)
    if ranks:
        t.add_column("#", no_wrap=True)
    t.add_column("model setup", overflow="fold", min_width=12)
    moves = [r for r in RELATIONS if any(r in e.results for e in entries)]
    shared = {}
    for rel in moves:
        counts = {query_count(e, rel) for e in entries if rel in e.results}
        shared[rel] = counts.pop() if len(counts) == 1 else None
        n = f"n={shared[rel]:,}" if shared[rel] is not None else "n varies"
        cells = [compact_figure(e, rel, shared[rel] is None) for e in entries]
        width = max(len(c) for c in [*cells, rel + " " + COMPACT_LABEL])
        t.add_column(f"{rel} {COMPACT_LABEL}\n{n}", justify="right", no_wrap=True, min_width=width)
    for rank, entry in rows:
        cells = ([rank] if ranks else []) + [terminal_text(entry.label)]
        cells += [terminal_text(compact_figure(entry, rel, shared[rel] is None)) for rel in moves]
        t.add_row(*cells)
    return t


def terminal_compact_tables(release: ReleaseEntries) -> list[Any]:
    """A release build's board, compact: one table per split (ranks are within a split), rank, name, MRR@10
    per move."""
    by_split: dict[str, list[tuple[str, Entry]]] = {}
    for rank, entry in ranked(release):
        by_split.setdefault(entry.split, []).append((str(rank), entry))
    return [
        compact_table(f"Leaderboard {release.title}, split {split}", rows) for split, rows in by_split.items()
    ]


def compact_json(release: ReleaseEntries) -> list[dict[str, Any]]:
    """The board's rows as data (``ratio leaderboard --json``): every metric per move, n and the MRR@10 interval."""
    out = []
    for rank, entry in ranked(release):
        moves = {}
        for rel, values in entry.results.items():
            bounds = uncertainty.intervals(entry, rel, [COMPACT_METRIC]).get(COMPACT_METRIC)
            moves[rel] = {
                "n": query_count(entry, rel),
                **dict(values),
                "mrr_at_10_interval": [bounds.low, bounds.high] if bounds else None,
            }
        row = {
            "release": release.name,
            "version": release.version,
            "manifest_sha256": release.manifest_sha256,
        }
        row |= {"rank": str(rank), "model": entry.label, "split": entry.split, "relations": moves}
        row |= {"provenance": entry.provenance.text} if entry.provenance is not None else {}
        out.append(row)
    return out
