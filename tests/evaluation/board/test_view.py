"""The board view: one table of column definitions read by the terminal, Markdown, HTML and PNG renderers."""

from __future__ import annotations

import io

import pytest
from tests.helpers.entries import ranked_record

from ratio_bench.evaluation.board import view as board_view
from ratio_bench.evaluation.board.escaping import markdown_text
from ratio_bench.evaluation.board.leaderboard import Board, ReleaseEntries
from ratio_bench.evaluation.board.ranks import Rank
from ratio_bench.evaluation.board.render.html import leaderboard_html
from ratio_bench.evaluation.board.render.markdown import leaderboard_markdown
from ratio_bench.evaluation.board.render.terminal import terminal_release_table
from ratio_bench.evaluation.entry.record import ModelMeta, Provenance, Withheld

PATTERN = [1, 2, 0, 5, 1, 0, 3, 11, 1, 0]


def release(sha: str, *entries) -> ReleaseEntries:
    return ReleaseEntries("ratio", "1.0", sha, tuple(entries))


def terminal(table) -> str:
    from rich.console import Console

    console = Console(file=io.StringIO(), width=400, record=True)
    console.print(table)
    return console.export_text()


def plot_labels(board: Board) -> list[str]:
    pytest.importorskip("matplotlib")
    from ratio_bench.evaluation.board.render.plots import plot_figure

    fig = plot_figure(board)
    return [t.get_text() for ax in fig.axes for t in ax.get_yticklabels() if t.get_text()]


def test_one_new_column_definition_shows_in_all_four_renderers(monkeypatch):
    entry = ranked_record("m:none", {"address": PATTERN * 4})
    board = Board((release("a" * 64, entry),), ())
    new = board_view.Column("flavour", "flavour", lambda r: f"flavour-of-{r.entry.model}", in_label=True)
    assert "flavour" not in leaderboard_markdown(board)
    monkeypatch.setattr(board_view, "COLUMNS", (*board_view.COLUMNS, new))
    md = leaderboard_markdown(board)
    assert "| flavour |" in md and markdown_text("flavour-of-m:none") in md
    page = leaderboard_html(board)
    assert '<th class="sortable">flavour</th>' in page and "<td>flavour-of-m:none</td>" in page
    shown = terminal(terminal_release_table(board.releases[0]))
    assert "flavour" in shown and "flavour-of-m:none" in shown
    assert any("flavour-of-m:none" in label for label in plot_labels(board))


def test_cost_columns_show_only_where_an_entry_states_them():
    plain = ranked_record("plain:none", {"address": PATTERN * 4})
    meta = ModelMeta(parameters=22_700_000, embedding_dim=384, max_tokens=256, throughput_texts_per_s=850.0,
                     hardware="1x H100")  # fmt: skip
    costly = ranked_record("costly:none", {"address": PATTERN * 4}).marked(model_meta=meta)
    board = Board((release("a" * 64, costly, plain), release("b" * 64, plain)), ())
    md = leaderboard_markdown(board)
    first, second = md.split("## ratio 1.0")[1:3]
    assert "| params | dim | max tokens | texts/s (hardware) |" in first
    assert "| 23M | 384 | 256 | " + markdown_text("850 (1x H100)") + " |" in first
    assert "params" not in second  # a table none of whose entries states them has no cost columns
    assert '<th class="sortable" data-type="number">params</th>' in leaderboard_html(board)


def test_the_provenance_column_is_per_table_in_markdown_as_in_html():
    """Markdown showed the provenance column on every table once any entry had a mark; HTML per release."""
    marked = ranked_record("signed:none", {"address": PATTERN * 4}).marked(
        provenance=Provenance("verified", "worker w, org/m@abc")
    )
    local = ranked_record("local:none", {"address": PATTERN * 4})
    board = Board((release("a" * 64, marked), release("b" * 64, local)), ())
    md = leaderboard_markdown(board)
    first, second = md.split("## ratio 1.0")[1:3]
    assert "| provenance |" in first and markdown_text("verified (worker w, org/m@abc)") in first
    assert "provenance" not in second
    sections = leaderboard_html(board).split('<section class="release"')[1:]
    assert ">provenance</th>" in sections[0] and ">provenance</th>" not in sections[1]


def test_a_withheld_figure_on_few_queries_is_marked_like_every_other():
    """A withheld month of a small field can hold a handful of queries: its figure carries the dagger."""
    column = next(c for c in board_view.COLUMNS if c.name == "withheld")
    verified = Provenance("verified", "worker w, org/m@abc")

    def shown(n: int) -> str:
        held = Withheld("test_2026_05", "a" * 64, {"address": {"mrr_at_10": 0.25}}, {"address": n},
                        {"address": (0.2, 0.3)})  # fmt: skip
        entry = ranked_record("m:none", {"address": PATTERN * 4}).marked(provenance=verified, withheld=held)
        return column.text(board_view.Row(Rank(1), entry))

    assert shown(12) == "25.0\u2020 [20.0-30.0] (n=12, test_2026_05)"
    assert shown(51) == "25.0 [20.0-30.0] (n=51, test_2026_05)"
    assert "\u2020" in board_view.WITHHELD_NOTE


def test_the_html_board_has_the_withheld_view_the_markdown_has():
    """The served board is HTML: its release section ranks the verified entries by the withheld split too."""
    held = Withheld("test_2026_05", "a" * 64, {"address": {"mrr_at_10": 0.25}}, {"address": 40},
                    {"address": (0.2, 0.3)})  # fmt: skip
    verified = Provenance("verified", "worker w, org/m@abc")
    signed = ranked_record("m:none", {"address": PATTERN * 4}).marked(provenance=verified, withheld=held)
    board = Board((release("a" * 64, signed),), ())
    page = leaderboard_html(board)
    assert "<h3>Withheld split</h3>" in page
    assert "<td>25.0 [20.0-30.0] (n=40, test_2026_05)</td>" in page
    plain = Board((release("a" * 64, ranked_record("m:none", {"address": PATTERN * 4})),), ())
    assert "Withheld split" not in leaderboard_html(plain)  # no withheld figures: no view
