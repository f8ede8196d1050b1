"""The board on a rich console: each release build's table, the per-relation rankings and the clean-snapshot
ranking as tables, and a figure's interval on its own line for narrow columns. The columns are the board view's
(:mod:`.board_view`), as in Markdown and HTML.
"""

from __future__ import annotations

from typing import Any

from ratio_bench.core.relations import RELATIONS
from ratio_bench.evaluation.board_cells import interval_note
from ratio_bench.evaluation.board_ranks import RELATION_NOTE, ranked, relation_ranked
from ratio_bench.evaluation.board_view import COLUMNS, WITHHELD_NOTE, Column, Row, columns, withheld_rows
from ratio_bench.evaluation.clean_ranking import CLEAN_HEAD, clean_cells, clean_ranking
from ratio_bench.evaluation.escaping import terminal_text
from ratio_bench.evaluation.leaderboard import ReleaseEntries


def terminal_clean_table(release: ReleaseEntries) -> Any:
    from rich.table import Table

    t = Table(title=terminal_text(f"Clean snapshots only: {release.title} (%)"))
    for name in CLEAN_HEAD:
        t.add_column(name)
    for rank, row in clean_ranking(release):
        t.add_row(*map(terminal_text, clean_cells(rank, row)))
    return t


def _table(title: str, shown: list[Column], rows: list[Row], caption: str = "") -> Any:
    """A rich table of the view's ``shown`` columns: numbers right-aligned, a figure's interval beneath it."""
    from rich.table import Table

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
    shown = [c for c in COLUMNS if c.name in ("rank", "model_setup", "withheld")]
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
