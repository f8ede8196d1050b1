"""Pictures that tell the truth at 5 and at 500 models: a bar panel per (relation, split) naming its queries and
pool, error bars only where intervals exist, nothing cut off; trend lines broken at gaps, a legend of only what
is drawn, at most TREND_TOP lines per panel and a bounded height."""

from __future__ import annotations

import math
from datetime import date

import pytest
from tests.helpers.entries import ranked_entry

from ratio_bench.core.cutoffs import Cutoff
from ratio_bench.core.snapshots import parse_split
from ratio_bench.evaluation.board.leaderboard import Board, ReleaseEntries
from ratio_bench.evaluation.board.render.plots import (
    MAX_PANELS,
    TREND_TOP,
    broken_at_gaps,
    plot_figure,
    trend_figure,
    trend_png,
)
from ratio_bench.evaluation.entry.record import Entry

pytest.importorskip("matplotlib")
SHA = "c" * 64
LONG_NAME = "an-untrusted-release-name-that-goes-on-" * 3


def _board(entries, name: str = "ratio") -> Board:
    """A board of one build holding ``entries`` (documents, read into records as the loader reads files)."""
    return Board((ReleaseEntries(name, "1.0", SHA, tuple(map(Entry.from_json, entries))),), ())


def _inside(fig) -> None:
    """Every title and tick label lies inside the picture (constrained layout: no cut titles)."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    width, height = fig.canvas.get_width_height()
    for ax in fig.axes:
        low, high = ax.get_xlim()
        shown = [t for t in ax.get_xticklabels() if min(low, high) <= t.get_position()[0] <= max(low, high)]
        for text in [ax.title, ax._left_title, *ax.get_yticklabels(), *shown, *fig.texts]:
            if text.get_text():
                box = text.get_window_extent(renderer)
                assert box.x0 >= 0 and box.x1 <= width and box.y0 >= 0 and box.y1 <= height, text.get_text()


def test_one_bar_panel_per_relation_and_split_with_queries_and_pool():
    test = [ranked_entry(f"m{i}:none", {"address": [1, 2, 0, 3] * 60}, n_candidates=41516) for i in range(3)]
    silver = [ranked_entry("m0:none", {"address": [1, 0] * 10}, "silver", n_candidates=900)]
    bare = {k: v for k, v in ranked_entry("old:none", {"address": [1] * 240}).items() if k != "per_query"}
    snapshot = [ranked_entry("m0:none", {"address": [1] * 40}, "test_2025_01", n_candidates=1200)]
    fig = plot_figure(_board(test + silver + [bare] + snapshot, LONG_NAME))
    titles = [ax.get_title(loc="left") for ax in fig.axes]
    assert len(titles) == 2  # address on test, address on silver; the snapshot is the trend's
    assert titles[0].startswith("address on test: 240 queries, pool of 41,516 candidates")
    assert titles[1].startswith(
        "address on silver: 20 queries (\u2020 fewer than 30), pool of 900 candidates"
    )
    assert "error bars on 3 of 4" in " ".join(
        titles[0].split()
    )  # the bare entry has no interval: no bar claimed
    errorbars = [c for c in fig.axes[0].containers if type(c).__name__ == "ErrorbarContainer"]
    assert len(errorbars) == 1 and len(errorbars[0].lines[2][0].get_segments()) == 3
    _inside(fig)


def test_bar_panels_are_bounded_and_say_so():
    entries = [
        ranked_entry("m:none", {rel: [1, 0] * 20 for rel in ("address", "broaden", "specify")}, split)
        for split in ("test", "silver", "validation", "train", "test")
    ]
    board = Board(
        tuple(
            ReleaseEntries(f"r{i}", "1.0", f"{i}" * 64, tuple(map(Entry.from_json, entries)))
            for i in range(3)
        ),
        (),
    )  # 3 builds x 3 relations x 4 splits = 36 panels
    fig = plot_figure(board)
    assert len(fig.axes) == MAX_PANELS
    assert "24 more panel(s) not drawn" in " ".join(fig.get_supxlabel().split())


def test_trend_lines_break_at_gaps():
    jan, feb, sep = (parse_split(s) for s in ("test_2025_01", "test_2025_02", "test_2025_09"))
    x, y = broken_at_gaps([(jan, 1.0), (feb, 2.0), (sep, 3.0)])
    assert y[:2] == [1.0, 2.0] and math.isnan(y[2]) and y[3] == 3.0 and len(x) == 4
    board = _board(
        [
            ranked_entry("m:none", {"broaden": [1, 0, 2] * 15}, "test_2025_01", n_candidates=1200),
            ranked_entry("m:none", {"broaden": [1, 0, 2] * 15}, "test_2025_02", n_candidates=1200),
            ranked_entry("m:none", {"broaden": [1, 0] * 3}, "test_2025_09", n_candidates=1200),
        ]
    )
    fig = trend_figure(board)
    (ax,) = fig.axes
    (line,) = [ln for ln in ax.get_lines() if ln.get_linestyle() == "-"]
    assert sum(math.isnan(v) for v in line.get_ydata()) == 1  # January-February joined, September apart
    assert "6-45 queries (\u2020 fewer than 30), pool of 1,200 candidates" in " ".join(
        ax.get_title(loc="left").split()
    )
    legend = [t.get_text() for t in fig.legends[0].get_texts()]
    assert legend[-1] == "hollow: fewer than 30 queries"  # September's 6 queries are drawn hollow
    assert not any("dashed" in text for text in legend)  # no cut-off line was drawn: none promised
    _inside(fig)


def test_the_legend_promises_a_cutoff_line_only_when_one_is_on_the_axis():
    stated = Cutoff(date(2025, 1, 20), "stated").fields()
    board = _board(
        [
            ranked_entry("m:none", {"address": [1] * 40}, "test_2025_01", **stated),
            ranked_entry("m:none", {"address": [2] * 40}, "test_2025_02", **stated),
        ]
    )
    legend = [t.get_text() for t in trend_figure(board).legends[0].get_texts()]
    assert any("dashed line" in text for text in legend)


def test_the_trend_at_400_models_keeps_the_top_and_the_highlighted_and_a_bounded_height():
    entries = [
        ranked_entry(f"model-{i:03d}:none", {"address": [1 + i % 7, 0, 2] * 12}, split)
        for i in range(400)
        for split in ("test_2025_01", "test_2025_02")
    ]
    board = _board(entries)
    fig = trend_figure(board, highlight=("model-399:none",))
    (ax,) = fig.axes
    drawn = {ln.get_label() for ln in fig.legends[0].get_lines()}
    models = [t.get_text() for t in fig.legends[0].get_texts() if ":none" in t.get_text()]
    assert len(models) == TREND_TOP + 1 and any(m.startswith("model-399:none") for m in models)
    assert "top 12 of 400 models by mean MRR@10 (+1 highlighted)" in " ".join(
        ax.get_title(loc="left").split()
    )
    assert drawn
    png = trend_png(board)
    height = int.from_bytes(png[20:24], "big")
    assert height < 1500  # was 15,168 px at 400 models


def test_ratio_leaderboard_highlight_reaches_the_trend(tmp_path, monkeypatch):
    import json

    from ratio_bench.cli import main
    from ratio_bench.evaluation.board.render import plots as board_plots

    folder = tmp_path / "results"
    folder.mkdir()
    for i, split in enumerate(("test_2025_01", "test_2025_02")):
        entry = ranked_entry("low:none", {"address": [0, 1] * 20}, split)
        (folder / f"{i}.json").write_text(json.dumps(entry))
    seen = []
    real = board_plots.trend_figure
    monkeypatch.setattr(board_plots, "trend_figure", lambda board, **kw: seen.append(kw) or real(board, **kw))
    out = tmp_path / "trend.png"
    assert main(["leaderboard", str(folder), "--trend", str(out), "--highlight", "low:none"]) == 0
    assert seen == [{"highlight": ("low:none",)}] and out.read_bytes()[:4] == b"\x89PNG"


def test_a_board_with_no_bar_entries_still_draws():
    snapshot_only = _board([ranked_entry("m:none", {"address": [1] * 40}, "test_2025_01")])
    for board in (Board((), ()), snapshot_only):
        fig = plot_figure(board)
        assert len(fig.axes) == 1 and "no entries" in fig.axes[0].get_title(loc="left")
