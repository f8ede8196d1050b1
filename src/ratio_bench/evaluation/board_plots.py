"""The board as pictures (matplotlib, the ``eval`` extra): MRR@10 as bars per relation (:func:`plot_png`), and
the trend of MRR@10 over the release's test snapshots (:func:`trend_png`; splits named by period,
:mod:`ratio_bench.core.snapshots`), each with its bootstrap interval.
"""

from __future__ import annotations

import io
import warnings
from datetime import date
from typing import Any

from ratio_bench.core.cutoffs import Cutoff
from ratio_bench.core.relations import RELATIONS
from ratio_bench.core.snapshots import Period, parse_split
from ratio_bench.evaluation import uncertainty
from ratio_bench.evaluation.board_ranks import relation_ranked
from ratio_bench.evaluation.board_view import Row, bar_label, columns
from ratio_bench.evaluation.entry import MAIN_SCORE, Entry
from ratio_bench.evaluation.escaping import plain_text
from ratio_bench.evaluation.leaderboard import SHORT_SHA, Board, LeaderboardError, ReleaseEntries


class PlottingUnavailable(LeaderboardError):
    pass


PLOT_TOP = 15  # bars per panel: the top entries of each relation
_BAR_INCHES = 0.3  # height of one bar's row: a 9-point label fits, so labels never overlap


def plot_figure(board: Board, top: int = PLOT_TOP) -> Any:
    """MRR@10 as horizontal bars, one panel per relation of each release build, its ``top`` entries by that
    relation (full names on the bars' axis, best at the top), so the picture stays legible at 100 entries: the
    height grows with the bars, never the labels' crowding. Returns the matplotlib figure."""
    plt = pyplot("--plot")
    panels = [
        (release, rel, relation_ranked(release, rel)[:top]) for release in board.releases for rel in RELATIONS
    ]
    panels = [p for p in panels if p[2]] or [(None, "no entries", [])]
    heights = [max(len(rows), 1) * _BAR_INCHES + 0.9 for *_, rows in panels]
    fig, axes = plt.subplots(
        len(panels), 1, figsize=(11, sum(heights)), squeeze=False, gridspec_kw={"height_ratios": heights}
    )
    for ax, (release, rel, rows) in zip(axes[:, 0], panels, strict=True):
        shown = columns(release.entries) if release else []
        labels = [plain_text(bar_label(Row(rank, e), shown)) for rank, e in rows]
        values = [100 * e.results[rel][MAIN_SCORE] for _, e in rows]
        bounds = [uncertainty.interval(e, rel) for _, e in rows]
        spread = [  # at least 0: a constant metric's bounds equal the figure up to float rounding
            [max(0.0, v - 100 * b.low) if b else 0 for v, b in zip(values, bounds, strict=True)],
            [max(0.0, 100 * b.high - v) if b else 0 for v, b in zip(values, bounds, strict=True)],
        ]
        ax.barh(range(len(rows)), values, height=0.7, color="#4c72b0", xerr=spread, ecolor="#333333")
        ax.set_yticks(range(len(rows)), labels, fontsize=9, parse_math=False)
        ax.invert_yaxis()  # rank 1 at the top
        for y, (v, up) in enumerate(zip(values, spread[1], strict=True)):
            ax.text(v + up, y, f" {v:.1f}", va="center", fontsize=8)
        where = (
            f"{release.name} {release.version} ({release.manifest_sha256[:SHORT_SHA]})"
            + (f", {release.provenance}" if release.provenance else "")
            if release
            else ""
        )
        ax.set_title(
            plain_text(f"{rel}: top {len(rows)} by MRR@10 (bars: {uncertainty.DEFAULT.note}), {where}"),
            fontsize=10,
            loc="left",
            parse_math=False,
        )
        ax.set_xlabel("MRR@10 (%)", fontsize=9)
        ax.set_xlim(0, max((v + s for v, s in zip(values, spread[1], strict=True)), default=1) * 1.15 or 1)
    fig.tight_layout()
    return fig


def pyplot(flag: str) -> Any:
    """matplotlib's pyplot on the Agg backend (no display), or PlottingUnavailable naming the install."""
    try:
        import matplotlib
    except ImportError as e:
        raise PlottingUnavailable(
            f"plotting needs matplotlib: pip install 'ratio-bench[eval]' (or leave out {flag})"
        ) from e
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def plot_png(board: Board, top: int = PLOT_TOP) -> bytes:
    """:func:`plot_figure` as PNG bytes (reproducible: no software or date metadata)."""
    return png_bytes(plot_figure(board, top))  # the figure first: without matplotlib, PlottingUnavailable


def png_bytes(fig: Any) -> bytes:
    import matplotlib.pyplot as plt

    buf = io.BytesIO()
    with warnings.catch_warnings():  # a name in a script the font lacks draws boxes; that is not an error
        warnings.filterwarnings("ignore", message="Glyph .* missing")
        fig.savefig(buf, format="png", dpi=120, metadata={"Software": None})
    plt.close(fig)
    return buf.getvalue()


# --- trend over test snapshots ----------------------------------------------------------------------------------

NO_SNAPSHOTS = (
    "no entries on test snapshot splits (test_YYYY_MM or test_YYYYqN); score models on the release's snapshot "
    "splits (ratio score --split test_YYYY_MM)"
)
CUTOFF_NOTE = "dashed line: the model's training-data cut-off (its colour)"


def snapshot_entries(release: ReleaseEntries) -> list[tuple[Period, Entry]]:
    """The release's entries scored on a test snapshot, with its period (other splits are not in the trend)."""
    return [(period, e) for e in release.entries if (period := parse_split(e.split)) is not None]


def trend_figure(board: Board) -> Any:
    """MRR@10 per test snapshot, one panel per relation of each release build: one line per model over the
    periods in time order, its 95% bootstrap interval a shaded band, its training-data cut-off a dashed line in
    its colour (a snapshot after the cut-off holds papers the model cannot have seen). A model keeps its colour
    across panels, and one legend below the panels names every model once."""
    panels = [
        (release, rel, [(p, e) for p, e in snapshot_entries(release) if rel in e.results])
        for release in board.releases
        for rel in RELATIONS
    ]
    panels = [panel for panel in panels if panel[2]]
    if not panels:
        raise LeaderboardError(NO_SNAPSHOTS)
    plt = pyplot("--trend")
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    labels = sorted({e.label for *_, rows in panels for _, e in rows})
    palette = plt.get_cmap("tab10" if len(labels) <= 10 else "tab20").colors
    colour = {label: palette[i % len(palette)] for i, label in enumerate(labels)}
    fig, axes = plt.subplots(
        len(panels), 1, figsize=(11, 3.2 * len(panels) + 0.3 * len(labels)), squeeze=False
    )
    legend: dict[str, Any] = {}
    for ax, (release, rel, rows) in zip(axes[:, 0], panels, strict=True):
        periods = sorted({p for p, _ in rows})
        by_model: dict[str, dict[Period, Entry]] = {}
        for period, e in rows:  # one point per model and period: the entry the board lists last
            by_model.setdefault(e.label, {})[period] = e
        for label in sorted(by_model):
            points = sorted(by_model[label].items())
            x = [_middle(p) for p, _ in points]
            y = [100 * e.results[rel][MAIN_SCORE] for _, e in points]
            ax.plot(x, y, marker="o", color=colour[label])
            bounds = [uncertainty.interval(e, rel) for _, e in points]
            if all(bounds):
                ax.fill_between(
                    x,
                    [100 * b.low for b in bounds],
                    [100 * b.high for b in bounds],
                    color=colour[label],
                    alpha=0.2,
                )
            cutoff = points[-1][1].cutoff
            if cutoff.date is not None and periods[0].start <= cutoff.date <= periods[-1].end:
                ax.axvline(cutoff.date, color=colour[label], linestyle="--", linewidth=1)
            legend.setdefault(
                label,
                Line2D(
                    [],
                    [],
                    color=colour[label],
                    marker="o",
                    label=plain_text(f"{label} ({_cutoff_text(cutoff)})"),
                ),
            )
        step = max(1, -(-len(periods) // 12))  # at most 12 labels: a monthly axis stays legible
        ax.set_xticks([_middle(p) for p in periods[::step]], [p.label for p in periods[::step]], fontsize=8)
        ax.set_ylabel("MRR@10 (%)", fontsize=9)
        ax.set_title(
            plain_text(
                f"{rel}: MRR@10 per test snapshot, {release.name} {release.version} "
                f"({release.manifest_sha256[:SHORT_SHA]}){', ' + release.provenance if release.provenance else ''}"
            ),
            fontsize=10,
            loc="left",
            parse_math=False,
        )
    handles = [legend[label] for label in sorted(legend)] + [
        Patch(color="grey", alpha=0.2, label=uncertainty.DEFAULT.note),
        Line2D([], [], color="grey", linestyle="--", label=CUTOFF_NOTE),
    ]
    fig.legend(handles=handles, fontsize=8, loc="lower left", bbox_to_anchor=(0.01, 0), frameon=False)
    fig.tight_layout(rect=(0, 0.25 * len(handles) / fig.get_figheight(), 1, 1))
    return fig


def _cutoff_text(cutoff: Cutoff) -> str:
    """The legend's word on a model's cut-off: its date, none (no training data) or unknown."""
    if cutoff.untrained:
        return "no training data"
    return f"cut-off {cutoff.date.isoformat()}" if cutoff.date else "cut-off unknown"


def _middle(period: Period) -> date:
    return period.start + (period.end - period.start) / 2


def trend_png(board: Board) -> bytes:
    """:func:`trend_figure` as PNG bytes (reproducible, like :func:`plot_png`); LeaderboardError without
    snapshot entries."""
    return png_bytes(trend_figure(board))
