"""The board as one self-contained HTML page: sortable tables, filters, the plots embedded as PNG.

:func:`leaderboard_html` returns the whole page as one string, so ``ratio leaderboard --html`` and a web
server's ``/leaderboard`` can serve the same bytes. Every submitted text in it is escaped
(:mod:`.escaping`), and its Content-Security-Policy (:mod:`.board_page_assets`) lets nothing else run.
"""

from __future__ import annotations

import base64
import html
from dataclasses import replace

from ratio_bench import __version__
from ratio_bench.core.cutoffs import LEGEND, MARKS
from ratio_bench.core.relations import RELATIONS
from ratio_bench.evaluation.board.cells import (
    JUDGED_HEAD,
    JUDGED_NOTE,
    PLUMBING_NOTE,
    bare_note,
    clean_mark,
    interval_note,
    is_plumbing_judge,
    judged_rows,
    percent,
)
from ratio_bench.evaluation.board.clean_ranking import CLEAN_HEAD, CLEAN_NOTE, clean_cells, clean_ranking
from ratio_bench.evaluation.board.escaping import html_text
from ratio_bench.evaluation.board.leaderboard import (
    PROVENANCES,
    SHORT_SHA,
    Board,
    LeaderboardError,
    ReleaseEntries,
    has_provenance,
    has_snapshots,
    split_key,
)
from ratio_bench.evaluation.board.ranks import RELATION_NOTE, TIE_NOTE, ranked, relation_ranked
from ratio_bench.evaluation.board.render.page_assets import CONTENT_SECURITY_POLICY, PAGE_SCRIPT, PAGE_STYLE
from ratio_bench.evaluation.board.render.plots import CUTOFF_NOTE, PlottingUnavailable, plot_png, trend_png
from ratio_bench.evaluation.board.view import (
    WITHHELD_COLUMNS,
    WITHHELD_NOTE,
    Column,
    Row,
    cells,
    columns,
    withheld_rows,
)
from ratio_bench.evaluation.scoring import uncertainty


def leaderboard_html(
    board: Board,
    extra: str = "",
    policy: str = CONTENT_SECURITY_POLICY,
    clean_only: bool = False,
    nav: str = "",
) -> str:
    """The leaderboard as one self-contained page (no external resources; works offline and from a server).

    ``extra``: HTML sections (already escaped) after the tables, such as a leaderboard service's queue;
    ``policy``: the page's Content-Security-Policy (a server that takes submissions allows its own form);
    ``clean_only``: the ranking on clean snapshots (:func:`clean_ranking`) instead of the entries' tables;
    ``nav``: HTML (already escaped) above the tables, such as a served page's hardware links.
    """
    try:
        plot = None if clean_only else plot_png(board)
    except PlottingUnavailable:
        plot = None
    try:
        trend = trend_png(board)
    except LeaderboardError:  # no snapshot entries, or no matplotlib (the plot's paragraph says so)
        trend = None
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en">',
        "<head>",
        '<meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{html.escape(policy)}">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        "<title>Ratio leaderboard</title>",
        f"<style>{PAGE_STYLE}</style>",
        "</head>",
        "<body>",
        "<h1>Ratio leaderboard</h1>",
        f"<p>{html_text(board.summary)}. Metrics in %; ranked by "
        "MRR@10 averaged over the relations (entries scored on all relations first), only against entries of the same release build and split. "
        "Click a column header to sort.</p>",
        f"<p>{html_text(interval_note())} {html_text(TIE_NOTE)}</p>",
        *([f"<p>{html_text(CLEAN_NOTE)}</p>"] if clean_only else []),
        *([f"<p>{html_text(LEGEND)}</p>"] if has_snapshots(board) or clean_only else []),
        _filters(board),
        *([nav] if nav else []),
    ]
    for release in board.releases:
        parts.append(clean_html(release) if clean_only else _release_section(release))
    parts.append(extra)
    if plot is not None:
        data = base64.b64encode(plot).decode("ascii")
        parts.append(
            '<figure><img alt="MRR@10 per relation for every entry, one panel per release build" '
            f'src="data:image/png;base64,{data}"><figcaption>MRR@10 per relation (%)</figcaption></figure>'
        )
    elif not clean_only:
        parts.append("<p>(No plot: matplotlib is not installed.)</p>")
    if trend is not None:
        parts += [
            "<h2>Trend over test snapshots</h2>",
            '<figure><img alt="MRR@10 per test snapshot for every model, one panel per relation" '
            f'src="data:image/png;base64,{base64.b64encode(trend).decode("ascii")}">'
            f"<figcaption>MRR@10 per snapshot (%), {html_text(uncertainty.DEFAULT.note)} as the band; "
            f"{html_text(CUTOFF_NOTE)}</figcaption></figure>",
        ]
    if board.rejected:
        parts += [
            "<h2>Rejected files</h2>",
            "<table>",
            "<thead><tr><th>file</th><th>reason</th></tr></thead>",
        ]
        parts.append("<tbody>")
        parts += [
            f"<tr><td>{html_text(r.source)}</td><td>{html_text(r.reason)}</td></tr>" for r in board.rejected
        ]
        parts += ["</tbody>", "</table>"]
    parts += [
        f"<p><small>Rendered by ratio-bench {html_text(__version__)} (<code>ratio leaderboard</code>).</small></p>",
        f"<script>{PAGE_SCRIPT}</script>",
        "</body>",
        "</html>",
    ]
    return "\n".join(parts) + "\n"


def _options(choices: list[tuple[str, str]]) -> str:
    rows = ['<option value="">all</option>']
    rows += [f'<option value="{html_text(value)}">{html_text(label)}</option>' for value, label in choices]
    return "".join(rows)


def _filters(board: Board) -> str:
    splits = sorted({e.split for r in board.releases for e in r.entries}, key=split_key)
    releases = list({r.manifest_sha256: replace(r, provenance="").title for r in board.releases}.items())
    return (
        "<p>"
        f'<label>Release <select id="filter-release">{_options(releases)}</select></label>'
        f'<label>Split <select id="filter-split">{_options([(s, s) for s in splits])}</select></label>'
        f'<label>Relation <select id="filter-relation">{_options([(r, r) for r in RELATIONS])}</select></label>'
        + (
            f'<label>Provenance <select id="filter-provenance">{_options([(p, p) for p in PROVENANCES])}'
            "</select></label>"
            if has_provenance(board)
            else ""
        )
        + (
            f'<label>Snapshot score <select id="filter-clean">{_options([(m, m) for m in MARKS.values()])}'
            "</select></label>"
            if has_snapshots(board)
            else ""
        )
        + "</p>"
    )


def _head(column: Column) -> str:
    """A sortable header cell; a figure's carries its relation, for the relation filter."""
    kind = ""
    if column.relation is not None:
        kind = f' data-type="number" data-relation="{column.relation}"'
    elif column.numeric:
        kind = ' data-type="number"'
    return f'<th class="sortable"{kind}>{html_text(column.header)}</th>'


def _cell(column: Column, row: Row) -> str:
    """A cell: a number's sort value in ``data-value`` (the shown text may carry an interval or a tie)."""
    text = html_text(column.text(row))
    if not column.numeric:
        return f"<td>{text}</td>"
    value = column.value(row) if column.value else None
    shown = "" if value is None else str(value) if isinstance(value, int) else repr(float(value))
    where = f' data-relation="{column.relation}"' if column.relation else ""
    return f'<td class="num"{where} data-value="{shown}">{text}</td>'


def _release_section(release: ReleaseEntries) -> str:
    shown = columns(release.entries)
    head = [_head(c) for c in shown]
    rows = []
    for rank, entry in ranked(release):
        status = html_text(entry.provenance.status if entry.provenance else "")
        rows.append(
            f'<tr data-split="{html_text(entry.split)}" data-provenance="{status}" '
            f'data-clean="{clean_mark(entry) or ""}">{"".join(_cell(c, Row(rank, entry)) for c in shown)}</tr>'
        )
    return "\n".join(
        [
            f'<section class="release" data-release="{html_text(release.manifest_sha256)}">',
            f"<h2>{html_text(release.name)} {html_text(release.version)} "
            f'<span class="hash" title="manifest SHA-256 {html_text(release.manifest_sha256)}">'
            f"(manifest {html_text(release.manifest_sha256[:SHORT_SHA])})</span>"
            f"{html_text(release.title[len(replace(release, provenance='').title) :])}</h2>",
            "<table>",
            f"<thead><tr>{''.join(head)}</tr></thead>",
            "<tbody>",
            *rows,
            "</tbody>",
            "</table>",
            *_withheld_table(release),
            *([f"<p>{html_text(bare_note(release))}</p>"] if bare_note(release) else []),
            *_html_relation_boards(release),
            *_judged_table(release),
            "</section>",
        ]
    )


def _withheld_table(release: ReleaseEntries) -> list[str]:
    """The withheld view, as the Markdown and terminal boards show it: the verified entries ranked by the
    withheld split (nothing when no entry has withheld figures)."""
    rows = withheld_rows(release.entries)
    if not rows:
        return []
    shown = WITHHELD_COLUMNS
    return [
        '<div class="withheld"><h3>Withheld split</h3>',
        f"<p>{html_text(WITHHELD_NOTE)}</p><table>",
        "<thead><tr>" + "".join(f"<th>{html_text(c.header)}</th>" for c in shown) + "</tr></thead>",
        "<tbody>",
        *("<tr>" + "".join(f"<td>{html_text(t)}</td>" for t in cells(row, shown)) + "</tr>" for row in rows),
        "</tbody></table></div>",
    ]


def _html_relation_boards(release: ReleaseEntries) -> list[str]:
    """The per-relation rankings (see :func:`relation_ranked`), one table per relation, hidden by the relation
    filter like the main table's columns."""
    parts = []
    for rel in RELATIONS:
        rows = relation_ranked(release, rel)
        if not rows:
            continue
        shown = columns(release.entries, rel)
        head = [c.header for c in shown]
        body = [
            f'<tr data-split="{html_text(entry.split)}" '
            f'data-provenance="{html_text(entry.provenance.status if entry.provenance else "")}" '
            f'data-clean="{clean_mark(entry) or ""}">'
            + "".join(
                f'<td class="num">{html_text(t)}</td>' if c.numeric else f"<td>{html_text(t)}</td>"
                for c, t in zip(shown, cells(Row(rank, entry), shown), strict=True)
            )
            + "</tr>"
            for rank, entry in rows
        ]
        parts += [
            f'<div data-relation="{rel}"><h3>{rel} <small>({html_text(RELATION_NOTE)})</small></h3><table>',
            "<thead><tr>" + "".join(f"<th>{html_text(h)}</th>" for h in head) + "</tr></thead>",
            "<tbody>",
            *body,
            "</tbody></table></div>",
        ]
    return parts


def _judged_table(release: ReleaseEntries) -> list[str]:
    """The judged figures of a release's entries: one tbody per relation, so the relation filter applies."""
    rows = judged_rows(release)
    if not rows:
        return []
    parts = [f"<p>{html_text(JUDGED_NOTE)}</p>"]
    if any(is_plumbing_judge(entry.judged[rel].judge_model) for entry, rel, *_ in rows):
        parts.append(f'<p class="plumbing"><strong>{html_text(PLUMBING_NOTE)}</strong></p>')
    parts.append("<table>")
    parts.append("<thead><tr>" + "".join(f"<th>{html_text(h)}</th>" for h in JUDGED_HEAD) + "</tr></thead>")
    for rel in RELATIONS:
        body = [
            f'<tr data-split="{html_text(entry.split)}">'
            + "".join(f"<td>{html_text(t)}</td>" for t in text)
            + "".join(f'<td class="num">{percent(v)}</td>' for v in values)
            + "</tr>"
            for entry, r, text, values in rows
            if r == rel
        ]
        if body:
            parts += [f'<tbody data-relation="{rel}">', *body, "</tbody>"]
    return parts + ["</table>"]


def clean_html(release: ReleaseEntries) -> str:
    """One release's clean-snapshot ranking as an HTML section."""
    rows = clean_ranking(release)
    body = [
        "<tr>" + "".join(f"<td>{html_text(c)}</td>" for c in clean_cells(rank, row)) + "</tr>"
        for rank, row in rows
    ] or [f'<tr><td colspan="{len(CLEAN_HEAD)}">No entries on dated snapshots.</td></tr>']
    return "\n".join(
        [
            f'<section class="release" data-release="{html_text(release.manifest_sha256)}">',
            f"<h2>{html_text(release.title)}</h2>",
            "<table>",
            "<thead><tr>" + "".join(f"<th>{html_text(h)}</th>" for h in CLEAN_HEAD) + "</tr></thead>",
            "<tbody>",
            *body,
            "</tbody>",
            "</table>",
            "</section>",
        ]
    )
