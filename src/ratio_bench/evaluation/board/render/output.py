"""A board printed and written (``ratio leaderboard`` and ``ratio leaderboard --from``): the terminal tables, and
its ``--markdown``/``--plot``/``--html``/``--trend`` files. A library module, so the service and the CLI share it
(no service module imports a CLI module)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from rich.markup import escape
from rich.table import Table

from ratio_bench.core import cutoffs
from ratio_bench.core.errors import UsageError
from ratio_bench.core.io import atomic_open, report_console
from ratio_bench.core.relations import RELATIONS
from ratio_bench.evaluation.board.cells import bare_note, interval_note
from ratio_bench.evaluation.board.cost import on_hardware
from ratio_bench.evaluation.board.escaping import terminal_text
from ratio_bench.evaluation.board.leaderboard import LeaderboardError, has_snapshots
from ratio_bench.evaluation.board.ranks import TIE_NOTE, Rank
from ratio_bench.evaluation.board.render.html import leaderboard_html
from ratio_bench.evaluation.board.render.markdown import clean_markdown, leaderboard_markdown
from ratio_bench.evaluation.board.render.plots import NO_SNAPSHOTS, plot_png, snapshot_entries, trend_png
from ratio_bench.evaluation.board.render.terminal import (
    compact_json,
    compact_table,
    terminal_clean_table,
    terminal_compact_tables,
    terminal_figure,
    terminal_relation_tables,
    terminal_release_table,
    terminal_withheld_table,
)
from ratio_bench.evaluation.board.view import Row, figure_columns
from ratio_bench.evaluation.entry.record import Entry, Scored

if TYPE_CHECKING:
    from ratio_bench.evaluation.board.leaderboard import Board


def compact_results_table(entries: list[Scored], title: str):
    """``ratio score``'s default table: one line per model, MRR@10 per move with n and its interval."""

    return compact_table(title, [("", e) for e in entries])


def results_table(entries: list[Scored], title: str):
    """Entries' figures (%), each with its bootstrap interval beneath it when the entry has per-query data
    (computed here, at display time, from the entry's gold ranks), the bootstrap's settings as the caption. A
    relation's columns are the board view's (its ``n``, then its figures), as on the board."""

    bare = [e.label for e in entries if not e.per_query]
    caption = "" if len(bare) == len(entries) else interval_note()
    if bare and caption:
        caption += f" No per-query data (no interval): {', '.join(bare)}."
    t = Table(title=title, caption=escape(caption) or None)
    t.add_column("model setup")
    shown = [c for rel in RELATIONS for c in figure_columns(rel, short=True)]
    for c in shown:
        t.add_column(f"{(c.relation or '')[:4].capitalize()} {c.header}", justify="right")
    for i, e in enumerate(entries, 1):
        row = Row(Rank(i), e)  # a figure column reads only what a scoring run's Scored has too
        t.add_row(escape(e.label), *(terminal_figure(c.text(row)) for c in shown))
    return t


def score_report(
    entries: dict[str, list[Entry]], queries: dict, release: Any, args: Any, console: Any
) -> None:
    """``ratio score``'s last output: each split's table (compact, or ``--wide``), or ``--json``: the entries
    alone on stdout (the console then writes to stderr)."""
    if args.json:
        print(json.dumps([e.to_json() for rows in entries.values() for e in rows], indent=2))
        return
    table = results_table if args.wide else compact_results_table
    for split, rows in entries.items():
        hub = f" from {release.hub}" if release.hub else ""  # the commit a release by name was read at
        title = f"Ratio {release.name} {release.version}{hub}, split {split}, mined gold (%)"
        sample = sample_title(args.sample, args.seed, queries[split]) if args.sample else ""
        console.print(table([e.scored() for e in rows], title + sample))


def sample_title(n: int, seed: int, queries: dict) -> str:
    """The table title's word on a sample: ``n`` per relation, and the true count of a relation that has fewer
    (``--sample 200`` on a 33-query relation scores 33, and says so)."""
    short = [f"{rel}: only {len(q.ids)}" for rel, q in queries.items() if len(q.ids) < n]
    fewer = f" ({', '.join(short)})" if short else ""
    return f", SAMPLE of {n} queries per relation{fewer} (seed {seed}; not a full result)"


def render_board(board: Board, args: Any, source: str, markdown_extra: str = "", html_extra: str = "") -> int:
    """Print ``board`` and write its ``--markdown``/``--plot``/``--html`` (``*_extra``: sections appended, such as
    the leaderboard service's queue); ``source`` names where the entries came from."""

    if getattr(args, "hardware", None):
        board = on_hardware(board, args.hardware)  # measured cost compares within one hardware class

    as_json, wide = getattr(args, "json", False), getattr(args, "wide", False)
    console = report_console(stderr=as_json)  # --json: the rows alone on stdout, the notes on stderr
    if args.trend and not any(snapshot_entries(r) for r in board.releases):
        raise LeaderboardError(f"--trend {args.trend}: {source} has {NO_SNAPSHOTS}")
    clean_only = getattr(args, "clean_only", False)
    if as_json:
        print(json.dumps([row for release in board.releases for row in compact_json(release)], indent=2))
    for release in board.releases if clean_only and not as_json else ():
        console.print(terminal_clean_table(release))
    for release in board.releases if not (clean_only or as_json or wide) else ():
        for table in terminal_compact_tables(release):
            console.print(table)
    for release in board.releases if wide and not (clean_only or as_json) else ():
        console.print(terminal_release_table(release))
        if (held := terminal_withheld_table(release)) is not None:
            console.print(held)
        for table in terminal_relation_tables(release):
            console.print(table)
        if bare_note(release):
            console.print(terminal_text(bare_note(release)))
    if board.releases:
        console.print(terminal_text(TIE_NOTE))
    if clean_only or has_snapshots(board):
        console.print(terminal_text(cutoffs.LEGEND))
    for r in board.rejected:
        console.print(f"[red]rejected[/red] {terminal_text(r.source)}: {terminal_text(r.reason)}")
    console.print(board.summary)
    if args.plot_top < 1:
        raise UsageError(f"--plot-top {args.plot_top}: give at least 1 bar per panel")
    if args.markdown:
        with atomic_open(args.markdown, "w", encoding="utf-8", newline="\n") as fh:
            fh.write((clean_markdown(board) if clean_only else leaderboard_markdown(board)) + markdown_extra)
    if args.plot:
        with atomic_open(args.plot, "wb") as fh:
            fh.write(plot_png(board, args.plot_top))
    if args.html:
        with atomic_open(args.html, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(leaderboard_html(board, extra=html_extra, clean_only=clean_only))
    if args.trend:
        with atomic_open(args.trend, "wb") as fh:
            fh.write(trend_png(board, tuple(getattr(args, "highlight", None) or ())))
    if board.rejected and args.strict:
        raise LeaderboardError(
            f"--strict: {len(board.rejected)} result file(s) under {source} rejected (listed above); "
            "fix or remove them"
        )
    return 0
