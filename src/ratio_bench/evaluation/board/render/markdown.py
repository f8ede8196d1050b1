"""The board as Markdown: one table per release build, a small table per relation, the judged figures and the
rejected files; or the clean-snapshot ranking.
"""

from __future__ import annotations

from ratio_bench.core.cutoffs import LEGEND
from ratio_bench.core.relations import RELATIONS
from ratio_bench.evaluation.board.cells import (
    JUDGED_HEAD,
    JUDGED_NOTE,
    PLUMBING_NOTE,
    bare_note,
    interval_note,
    is_plumbing_judge,
    judged_rows,
    percent,
)
from ratio_bench.evaluation.board.clean_ranking import CLEAN_HEAD, CLEAN_NOTE, clean_cells, clean_ranking
from ratio_bench.evaluation.board.escaping import markdown_text
from ratio_bench.evaluation.board.leaderboard import Board, ReleaseEntries, has_snapshots
from ratio_bench.evaluation.board.ranks import RELATION_NOTE, TIE_NOTE, ranked, relation_ranked
from ratio_bench.evaluation.board.view import (
    WITHHELD_COLUMNS,
    WITHHELD_NOTE,
    Column,
    Row,
    cells,
    columns,
    withheld_rows,
)


def leaderboard_markdown(board: Board) -> str:
    """One table per release build (entries ranked within their split), then the rejected files."""
    lines = [
        "# Ratio leaderboard",
        "",
        f"{markdown_text(board.summary)}. Metrics in %; ranked by "
        "MRR@10 averaged over the relations (entries scored on all relations first), only against entries of the same release build and split.",
        "",
        markdown_text(interval_note()),
        "",
        markdown_text(TIE_NOTE),
        *(["", markdown_text(LEGEND)] if has_snapshots(board) else []),
    ]
    for release in board.releases:
        lines += ["", f"## {markdown_text(release.title)}", ""]
        lines += _md_table(columns(release.entries), [Row(*r) for r in ranked(release)])
        if held := withheld_rows(release.entries):
            shown = WITHHELD_COLUMNS
            lines += ["", "### Withheld split", "", markdown_text(WITHHELD_NOTE), "", *_md_table(shown, held)]
        if bare_note(release):
            lines += ["", markdown_text(bare_note(release))]
        lines += _md_relation_boards(release)
        judged = judged_rows(release)
        if judged:
            plumbing = any(is_plumbing_judge(e.judged[r].judge_model) for e, r, *_ in judged)
            lines += [
                "",
                markdown_text(JUDGED_NOTE),
                *(["", f"**{markdown_text(PLUMBING_NOTE)}**"] if plumbing else []),
                "",
                md_row(JUDGED_HEAD),
                "|" + "---|" * len(JUDGED_HEAD),
            ]
            lines += [
                md_row([markdown_text(t) for t in text] + [percent(v) for v in values])
                for *_, text, values in judged
            ]
    if board.rejected:
        lines += ["", "## Rejected files", "", md_row(["file", "reason"]), "|---|---|"]
        lines += [md_row([markdown_text(r.source), markdown_text(r.reason)]) for r in board.rejected]
    return "\n".join(lines) + "\n"


def _md_table(shown: list[Column], rows: list[Row]) -> list[str]:
    """A table of the view's ``shown`` columns (:mod:`.board_view`), one line per row."""
    lines = [md_row([c.header for c in shown]), "|" + "---|" * len(shown)]  # our own words
    return lines + [
        md_row([markdown_text(t) if c.escaped else t for c, t in zip(shown, cells(row, shown), strict=True)])
        for row in rows
    ]


def _md_relation_boards(release: ReleaseEntries) -> list[str]:
    """One small table per relation: where a specialist is ranked against everything scored on its move."""
    lines = []
    for rel in RELATIONS:
        rows = relation_ranked(release, rel)
        if not rows:
            continue
        lines += [
            "",
            f"### {rel} ({markdown_text(RELATION_NOTE)})",
            "",
            *_md_table(columns(release.entries, rel), [Row(*r) for r in rows]),
        ]
    return lines


def md_row(cells: list[str]) -> str:
    return "| " + " | ".join(cells) + " |"


def clean_markdown(board: Board) -> str:
    """The clean-snapshot ranking of every release build, as Markdown."""
    lines = [
        "# Ratio leaderboard: clean snapshots only",
        "",
        markdown_text(CLEAN_NOTE),
        "",
        markdown_text(LEGEND),
    ]
    for release in board.releases:
        rows = clean_ranking(release)
        lines += ["", f"## {markdown_text(release.title)}", ""]
        if not rows:
            lines.append("No entries on dated snapshots.")
            continue
        lines += [md_row(CLEAN_HEAD), "|" + "---|" * len(CLEAN_HEAD)]
        lines += [md_row([markdown_text(c) for c in clean_cells(rank, row)]) for rank, row in rows]
    return "\n".join(lines) + "\n"
