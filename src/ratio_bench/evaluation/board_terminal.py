"""The board on a rich console: the per-relation rankings and the clean-snapshot ranking as tables, and a
figure's interval on its own line for narrow columns.
"""

from __future__ import annotations

from typing import Any

from ratio_bench.core.relations import RELATIONS
from ratio_bench.evaluation.board_cells import (
    entry_detail,
    has_details,
    interval_note,
    relation_cells,
    relation_heads,
    split_text,
)
from ratio_bench.evaluation.board_ranks import RELATION_NOTE, relation_ranked
from ratio_bench.evaluation.clean_ranking import CLEAN_HEAD, clean_cells, clean_ranking
from ratio_bench.evaluation.escaping import terminal_text
from ratio_bench.evaluation.leaderboard import ReleaseEntries
from ratio_bench.evaluation.results import entry_label


def terminal_clean_table(release: ReleaseEntries) -> Any:
    from rich.table import Table

    t = Table(title=terminal_text(f"Clean snapshots only: {release.title} (%)"))
    for name in CLEAN_HEAD:
        t.add_column(name)
    for rank, row in clean_ranking(release):
        t.add_row(*map(terminal_text, clean_cells(rank, row)))
    return t


def terminal_relation_tables(release: ReleaseEntries) -> list[Any]:
    """The per-relation rankings as rich tables (one per relation with entries), for the console."""
    from rich.table import Table

    detailed, tables = has_details(release), []
    for rel in RELATIONS:
        rows = relation_ranked(release, rel)
        if not rows:
            continue
        t = Table(title=terminal_text(f"{rel}: {RELATION_NOTE} (%)"), caption=terminal_text(interval_note()))
        for name in ["#", "model setup"] + ["model"] * detailed + ["split"]:
            t.add_column(name)
        for short in relation_heads():
            t.add_column(short, justify="right")
        for rank, e in rows:
            text = [str(rank), entry_label(e)] + [entry_detail(e)] * detailed + [split_text(e)]
            t.add_row(*map(terminal_text, text), *map(terminal_figure, relation_cells(e, rel)))
        tables.append(t)
    return tables


def terminal_figure(text: str) -> str:
    """A figure for a narrow console column: the interval on a second line, dimmed."""
    value, _, bounds = text.partition(" ")
    return value + (f"\n[dim]{terminal_text(bounds)}[/dim]" if bounds else "")
