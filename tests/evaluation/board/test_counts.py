"""n everywhere it matters: every board table shows the queries under a relation's figures, and an interval
from fewer than 30 queries is marked (a dagger, with its legend), in the terminal, Markdown and HTML alike."""

from __future__ import annotations

import json
from pathlib import Path

from rich.console import Console
from tests.helpers.entries import ranked_entry

from ratio_bench.evaluation.board.cells import FEW_MARK, figure_text, interval_note
from ratio_bench.evaluation.board.leaderboard import load_board
from ratio_bench.evaluation.board.render.html import leaderboard_html
from ratio_bench.evaluation.board.render.markdown import leaderboard_markdown
from ratio_bench.evaluation.board.render.terminal import terminal_relation_tables
from ratio_bench.evaluation.scoring.uncertainty import Interval


def small_board(tmp_path: Path):
    """One model: Address on 200 queries, Broaden on 6 that all miss (the issue's `0.0 [0.0-0.0]`), and Specify
    on 29, one under the line."""
    entry = ranked_entry(
        "few:none", {"address": [1, 3, 0, 2] * 50, "broaden": [0] * 6, "specify": [1, 0, 2] * 9 + [1, 1]}
    )
    folder = tmp_path / "results"
    folder.mkdir()
    (folder / "few.json").write_text(json.dumps(entry))
    board = load_board(folder)
    assert not board.rejected
    return board


def test_a_figure_from_few_queries_is_marked():
    bounds = Interval(0.0, 0.0)
    assert figure_text(0.0, bounds, 6) == f"0.0{FEW_MARK} [0.0-0.0]"
    assert figure_text(0.5, Interval(0.4, 0.6), 30) == "50.0 [40.0-60.0]"
    assert figure_text(0.5, None, 6) == "50.0"  # no interval, nothing to mark
    assert FEW_MARK in interval_note() and "fewer than 30 queries" in interval_note()


def test_markdown_shows_n_and_marks_small_intervals(tmp_path):
    md = leaderboard_markdown(small_board(tmp_path))
    main = md.split("\n### ")[0]
    head = next(line for line in main.splitlines() if line.startswith("| # |"))
    assert "address n" in head and "broaden n" in head and "specify n" in head
    (row,) = [line.split(" | ") for line in main.splitlines() if "few\\:none" in line]
    assert "200" in row and "6" in row and "29" in row
    assert f"0.0{FEW_MARK} \\[0.0-0.0\\]" in md  # never an unmarked 0.0 [0.0-0.0]
    assert "0.0 \\[0.0-0.0\\]" not in md
    address_cells = row[3:8]
    assert not any(FEW_MARK in cell for cell in address_cells)  # 200 queries: no mark
    assert f"{FEW_MARK}\\: an interval from fewer than 30 queries" in md
    broaden = next(b for b in md.split("\n### ") if b.startswith("broaden"))
    assert "| n |" in broaden and " | 6 | " in broaden


def test_html_shows_n_and_marks_small_intervals(tmp_path):
    page = leaderboard_html(small_board(tmp_path))
    assert '<th class="sortable" data-type="number" data-relation="broaden">broaden n</th>' in page
    assert 'data-relation="broaden" data-value="6">6</td>' in page
    assert f"0.0{FEW_MARK} [0.0-0.0]" in page and "0.0 [0.0-0.0]" not in page
    assert "fewer than 30 queries" in page


def test_terminal_shows_n_and_marks_small_intervals(tmp_path):
    console = Console(width=200, record=True, color_system=None)
    (release,) = small_board(tmp_path).releases
    for table in terminal_relation_tables(release):
        console.print(table)
    text = console.export_text()
    assert text.count(" n ") >= 3  # a column per relation table
    assert f"0.0{FEW_MARK}" in text and "fewer than 30 queries" in text
    broaden = text[text.index("broaden:") : text.index("specify:")]
    assert " 6 " in broaden
