"""The board as pictures (matplotlib, the ``eval`` extra): MRR@10 as bars per relation and split
(:func:`plot_png`), and the trend of MRR@10 over the release's test snapshots (:func:`trend_png`; splits named by
period, :mod:`ratio_bench.core.snapshots`), each with its bootstrap interval where one exists.

A picture is read faster than a table and trusted more, so each says what its figures rest on (queries, pool
size), draws an interval only where one was computed, breaks a line where nothing was measured, and stays the
same size at 5 or 500 models (top k per panel, a bounded number of panels).
"""

from __future__ import annotations

import io
import math
import textwrap
import warnings
from dataclasses import dataclass
from datetime import date
from typing import Any

from ratio_bench.core import extras
from ratio_bench.core.cutoffs import Cutoff
from ratio_bench.core.relations import RELATIONS
from ratio_bench.core.snapshots import Period, parse_split
from ratio_bench.evaluation.board.cells import FEW_MARK, FEW_QUERIES, query_count
from ratio_bench.evaluation.board.escaping import plain_text
from ratio_bench.evaluation.board.leaderboard import SHORT_SHA, Board, LeaderboardError, ReleaseEntries
from ratio_bench.evaluation.board.ranks import relation_ranked
from ratio_bench.evaluation.board.view import Row, bar_label, columns
from ratio_bench.evaluation.entry.record import MAIN_SCORE, Entry
from ratio_bench.evaluation.scoring import uncertainty
from ratio_bench.evaluation.scoring.defaults import PLOT_TOP


class PlottingUnavailable(LeaderboardError):
    pass


_BAR_INCHES = 0.3  # height of one bar's row: a 9-point label fits, so labels never overlap
MAX_PANELS = 12  # bar panels per picture (in the board's order): its height stays bounded
TITLE_CHARS = 72  # a panel title's lines are wrapped here (release names are untrusted and may be long)
LABEL_CHARS = 80  # a model name longer than this is shortened on the axis (the tables have it in full)
FIGURE_INCHES = 11


@dataclass(frozen=True)
class BarPanel:
    """One (release build, relation, split) of the bar picture and its top rows: scores on different splits
    (a 41,516-candidate test pool, a 1,200-candidate snapshot) never share an axis."""

    release: ReleaseEntries
    relation: str
    split: str
    rows: tuple[tuple[Any, Entry], ...]  # (rank, entry), best first
    total: int  # entries scored on this relation and split, before the top k


def bar_panels(board: Board, top: int = PLOT_TOP) -> tuple[list[BarPanel], int]:
    """The bar picture's panels (snapshot splits are the trend picture's) and how many were left out past
    :data:`MAX_PANELS`."""
    panels = []
    for release in board.releases:
        for rel in RELATIONS:
            by_split: dict[str, list] = {}
            for rank, e in relation_ranked(release, rel):
                if parse_split(e.split) is None:
                    by_split.setdefault(e.split, []).append((rank, e))
            panels += [
                BarPanel(release, rel, split, tuple(rows[:top]), len(rows))
                for split, rows in by_split.items()
            ]
    return panels[:MAX_PANELS], max(0, len(panels) - MAX_PANELS)


def pool_text(entries: list[Entry], relation: str) -> str:
    """``275 queries, pool of 41,516 candidates``: what a panel's figures rest on, as the entries record it."""
    counts = sorted({n for e in entries if (n := query_count(e, relation)) is not None})
    pools = sorted({e.n_candidates for e in entries if e.n_candidates is not None})
    few = f" ({FEW_MARK} fewer than {FEW_QUERIES})" if counts and counts[0] < FEW_QUERIES else ""
    queries = "queries not recorded" if not counts else f"{_span(counts)} queries{few}"
    pool = f"pool of {_span(pools)} candidates" if pools else "pool size not recorded"
    return f"{queries}, {pool}"


def _span(values: list[int]) -> str:
    return f"{values[0]:,}" if values[0] == values[-1] else f"{values[0]:,}-{values[-1]:,}"


def panel_title(*lines: str) -> str:
    """Plain text (no mathtext, no markup), each line wrapped to :data:`TITLE_CHARS`."""
    return "\n".join(textwrap.fill(plain_text(line), TITLE_CHARS) for line in lines)


def _short(label: str) -> str:
    label = plain_text(label)
    return label if len(label) <= LABEL_CHARS else label[: LABEL_CHARS - 1] + "\u2026"


def plot_figure(board: Board, top: int = PLOT_TOP) -> Any:
    """MRR@10 as horizontal bars, one panel per (release build, relation, split) with what its figures rest on
    (queries, pool size) in its title, its ``top`` entries (best at the top); error bars only on entries whose
    intervals exist (per-query data), said in the title. Constrained layout keeps every title and label inside
    the picture; the height grows with the bars and is bounded by :data:`MAX_PANELS`."""
    plt = pyplot("--plot")
    panels, left_out = bar_panels(board, top)
    heights = [max(len(p.rows), 1) * _BAR_INCHES + 1.2 for p in panels] or [1.5]
    fig, axes = plt.subplots(
        max(len(panels), 1),
        1,
        figsize=(FIGURE_INCHES, sum(heights) + 0.4),
        squeeze=False,
        gridspec_kw={"height_ratios": heights},
        layout="constrained",
    )
    if not panels:
        axes[0, 0].set_title("no entries on a test, silver or validation split", loc="left", fontsize=10)
        axes[0, 0].set_axis_off()
    for ax, panel in zip(axes[: len(panels), 0], panels, strict=True):
        _bar_panel(ax, panel)
    notes = [f"MRR@10 (%); error bars: the {uncertainty.DEFAULT.note}, where an entry keeps per-query ranks."]
    if any(parse_split(e.split) for r in board.releases for e in r.entries):
        notes.append("Scores on test snapshots are in the trend picture.")
    if left_out:
        notes.append(
            f"{left_out} more panel(s) not drawn (at most {MAX_PANELS}); the tables list every entry."
        )
    fig.get_layout_engine().set(h_pad=0.1)
    fig.supxlabel(panel_title(" ".join(notes)), fontsize=8, x=0.01, ha="left")
    return fig


def _bar_panel(ax: Any, panel: BarPanel) -> None:
    rel, rows = panel.relation, panel.rows
    entries = [e for _, e in rows]
    values = [100 * e.results[rel][MAIN_SCORE] for e in entries]
    bounds = [uncertainty.interval(e, rel) for e in entries]
    ax.barh(range(len(rows)), values, height=0.7, color="#4c72b0")
    with_ci = [i for i, b in enumerate(bounds) if b is not None]
    if with_ci:  # at least 0: a constant metric's bounds equal the figure up to float rounding
        spread = [
            [max(0.0, values[i] - 100 * bounds[i].low) for i in with_ci],
            [max(0.0, 100 * bounds[i].high - values[i]) for i in with_ci],
        ]
        ax.errorbar([values[i] for i in with_ci], with_ci, xerr=spread, fmt="none", ecolor="#333333")
    ends = [100 * b.high if b else v for v, b in zip(values, bounds, strict=True)]
    for y, (v, end) in enumerate(zip(values, ends, strict=True)):
        ax.text(max(v, end), y, f" {v:.1f}", va="center", fontsize=8)
    shown = columns(panel.release.entries)  # the board view's label columns (parameters, throughput, ...)
    labels = [_short(bar_label(Row(rank, e), shown)) for rank, e in rows]
    ax.set_yticks(range(len(rows)), labels, fontsize=9)
    for label in ax.get_yticklabels():
        label.set_parse_math(False)
    ax.invert_yaxis()  # rank 1 at the top
    release = panel.release
    ci = (
        "no intervals (no per-query data)"
        if not with_ci
        else (
            "error bars: 95% CI"
            if len(with_ci) == len(rows)
            else f"error bars on {len(with_ci)} of {len(rows)}"
        )
    )
    shown = f"top {len(rows)} of {panel.total}" if panel.total > len(rows) else f"all {len(rows)}"
    ax.set_title(
        panel_title(
            f"{rel} on {panel.split}: {pool_text(entries, rel)}",
            f"{release.name} {release.version} ({release.manifest_sha256[:SHORT_SHA]}){_provenance(release)}: {shown} by MRR@10, {ci}",
        ),
        fontsize=10,
        loc="left",
        parse_math=False,
    )
    ax.set_xlabel("MRR@10 (%)", fontsize=9)
    ax.set_xlim(0, max(ends, default=1) * 1.15 or 1)


def pyplot(flag: str) -> Any:
    """matplotlib's pyplot on the Agg backend (no display), or PlottingUnavailable naming the install."""
    try:
        matplotlib = extras.load("matplotlib")
    except (ImportError, extras.MissingExtraError) as e:
        raise PlottingUnavailable(
            f"plotting needs matplotlib: pip install 'ratio-bench[eval]' (or leave out {flag})"
        ) from e
    matplotlib.use("Agg")
    plt = extras.load("matplotlib.pyplot")

    return plt


def plot_png(board: Board, top: int = PLOT_TOP) -> bytes:
    """:func:`plot_figure` as PNG bytes (reproducible: no software or date metadata)."""
    return png_bytes(plot_figure(board, top))  # the figure first: without matplotlib, PlottingUnavailable


def png_bytes(fig: Any) -> bytes:
    plt = extras.load("matplotlib.pyplot")

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


TREND_TOP = (
    12  # lines per trend panel: the best by mean MRR@10 over the panel's snapshots, plus highlighted ones
)
_TREND_PANEL_INCHES = 3.4


@dataclass(frozen=True)
class TrendPanel:
    release: ReleaseEntries
    relation: str
    by_model: dict[str, dict[Period, Entry]]  # the drawn models' points
    periods: tuple[Period, ...]  # every period with a point in this panel, drawn or not
    total: int  # models with a point in this panel
    highlighted: int = 0  # drawn because highlighted, outside the top


def trend_panels(board: Board, top: int = TREND_TOP, highlight: tuple[str, ...] = ()) -> list[TrendPanel]:
    """One panel per (release build, relation) with snapshot scores, keeping its ``top`` models by mean MRR@10
    over their snapshots and every model named in ``highlight``."""
    panels = []
    for release in board.releases:
        for rel in RELATIONS:
            by_model: dict[str, dict[Period, Entry]] = {}
            for period, e in snapshot_entries(release):
                if rel in e.results:  # one point per model and period: the entry the board lists last
                    by_model.setdefault(e.label, {})[period] = e
            if not by_model:
                continue
            mean = {
                label: sum(e.results[rel][MAIN_SCORE] for e in points.values()) / len(points)
                for label, points in by_model.items()
            }
            best = sorted(by_model, key=lambda label: (-mean[label], label))[:top]
            kept = sorted(set(best) | {label for label in highlight if label in by_model})
            periods = tuple(sorted({p for points in by_model.values() for p in points}))
            extra = len(kept) - len(best)
            panels.append(
                TrendPanel(release, rel, {k: by_model[k] for k in kept}, periods, len(by_model), extra)
            )
    return panels


def broken_at_gaps(points: list[tuple[Period, float]]) -> tuple[list[date], list[float]]:
    """x and y of a model's line, with a NaN between two periods that are not consecutive (matplotlib breaks a
    line at NaN): a line drawn across eight empty months would claim a trend nobody measured."""
    x: list[date] = []
    y: list[float] = []
    for i, (period, value) in enumerate(points):
        if i and points[i - 1][0].next() != period:
            x.append(_middle(points[i - 1][0]) + (_middle(period) - _middle(points[i - 1][0])) / 2)
            y.append(math.nan)
        x.append(_middle(period))
        y.append(value)
    return x, y


def trend_figure(board: Board, top: int = TREND_TOP, highlight: tuple[str, ...] = ()) -> Any:
    """MRR@10 per test snapshot, one panel per relation of each release build: one line per model over the
    periods in time order, broken where periods are missing, its 95% bootstrap interval a shaded band, its
    training-data cut-off a dashed line in its colour when it falls on the axis; a hollow marker for a point
    resting on fewer than FEW_QUERIES queries. At most ``top`` models per panel (plus ``highlight``): the
    picture's height depends on the panels, not on the number of models. One legend below the panels names
    only what was drawn."""
    panels = trend_panels(board, top, highlight)
    if not panels:
        raise LeaderboardError(NO_SNAPSHOTS)
    plt = pyplot("--trend")
    labels = sorted({label for panel in panels for label in panel.by_model})
    palette = plt.get_cmap("tab10" if len(labels) <= 10 else "tab20").colors
    colour = {label: palette[i % len(palette)] for i, label in enumerate(labels)}
    legend_rows = len(labels) + 4
    fig, axes = plt.subplots(
        len(panels),
        1,
        figsize=(FIGURE_INCHES, _TREND_PANEL_INCHES * len(panels) + 0.22 * legend_rows),
        squeeze=False,
        layout="constrained",
    )
    drawn: dict[str, Any] = {}  # legend entries, only for what some panel drew
    for ax, panel in zip(axes[:, 0], panels, strict=True):
        _trend_panel(ax, panel, colour, drawn)
    _trend_legend(fig, drawn)
    return fig


def _trend_panel(ax: Any, panel: TrendPanel, colour: dict[str, Any], drawn: dict[str, Any]) -> None:
    Line2D = extras.load("matplotlib.lines").Line2D
    Patch = extras.load("matplotlib.patches").Patch

    rel, periods = panel.relation, panel.periods
    for label, by_period in sorted(panel.by_model.items()):
        points = sorted(by_period.items())
        x, y = broken_at_gaps([(p, 100 * e.results[rel][MAIN_SCORE]) for p, e in points])
        ax.plot(x, y, color=colour[label], linewidth=1.5)
        few = [(p, e) for p, e in points if (query_count(e, rel) or 0) < FEW_QUERIES]
        full = [(p, e) for p, e in points if (p, e) not in few]
        for group, face in ((full, colour[label]), (few, "white")):
            if group:
                ax.plot(
                    [_middle(p) for p, _ in group],
                    [100 * e.results[rel][MAIN_SCORE] for _, e in group],
                    linestyle="none",
                    marker="o",
                    color=colour[label],
                    markerfacecolor=face,
                )
        if few:
            drawn.setdefault(
                "few",
                Line2D(
                    [],
                    [],
                    linestyle="none",
                    marker="o",
                    color="grey",
                    markerfacecolor="white",
                    label=f"hollow: fewer than {FEW_QUERIES} queries",
                ),
            )
        bounds = [uncertainty.interval(e, rel) for _, e in points]
        if any(bounds):
            bx, low = broken_at_gaps(
                [(p, 100 * b.low if b else math.nan) for (p, _), b in zip(points, bounds, strict=True)]
            )
            _, high = broken_at_gaps(
                [(p, 100 * b.high if b else math.nan) for (p, _), b in zip(points, bounds, strict=True)]
            )
            ax.fill_between(bx, low, high, color=colour[label], alpha=0.2, linewidth=0)
            _isolated_intervals(ax, points, bounds, colour[label])
            drawn.setdefault("band", Patch(color="grey", alpha=0.2, label=uncertainty.DEFAULT.note))
        cutoff = points[-1][1].cutoff
        if cutoff.date is not None and periods[0].start <= cutoff.date <= periods[-1].end:
            ax.axvline(cutoff.date, color=colour[label], linestyle="--", linewidth=1)
            drawn.setdefault("cutoff", Line2D([], [], color="grey", linestyle="--", label=CUTOFF_NOTE))
        drawn.setdefault(
            f"model:{label}",
            Line2D(
                [], [], color=colour[label], marker="o", label=plain_text(f"{label} ({_cutoff_text(cutoff)})")
            ),
        )
    step = max(1, -(-len(periods) // 12))  # at most 12 labels: a monthly axis stays legible
    ax.set_xticks([_middle(p) for p in periods[::step]], [p.label for p in periods[::step]], fontsize=8)
    ax.set_ylabel("MRR@10 (%)", fontsize=9)
    entries = [e for points in panel.by_model.values() for e in points.values()]
    shown = f"{panel.total} model(s)"
    if panel.total > len(panel.by_model) or panel.highlighted:
        best = len(panel.by_model) - panel.highlighted
        extra = f" (+{panel.highlighted} highlighted)" if panel.highlighted else ""
        shown = f"top {best} of {panel.total} models by mean MRR@10{extra}"
    release = panel.release
    ax.set_title(
        panel_title(
            f"{rel} per test snapshot: {pool_text(entries, rel)} per snapshot",
            f"{release.name} {release.version} ({release.manifest_sha256[:SHORT_SHA]}){_provenance(release)}: {shown}; "
            "lines break where a period has no score",
        ),
        fontsize=10,
        loc="left",
        parse_math=False,
    )


def _isolated_intervals(ax: Any, points: list, bounds: list, colour: Any) -> None:
    """A point with no consecutive neighbour has no band to show (a band needs two periods): its interval is
    drawn as a vertical bar in the band's colour instead."""
    for i, ((period, _), b) in enumerate(zip(points, bounds, strict=True)):
        joined_before = i > 0 and points[i - 1][0].next() == period
        joined_after = i + 1 < len(points) and period.next() == points[i + 1][0]
        if b is not None and not joined_before and not joined_after:
            ax.vlines(_middle(period), 100 * b.low, 100 * b.high, color=colour, alpha=0.45, linewidth=4)


def _trend_legend(fig: Any, drawn: dict[str, Any]) -> None:
    """Models first (sorted), then the marks that were drawn somewhere; nothing that no panel shows."""
    models = [drawn[k] for k in sorted(k for k in drawn if k.startswith("model:"))]
    marks = [drawn[k] for k in ("band", "cutoff", "few") if k in drawn]
    fig.legend(handles=models + marks, fontsize=8, loc="outside lower left", frameon=False, ncols=1)


def _provenance(release: Any) -> str:
    """The suffix ", verified" or ", self-reported" after a build's name: the two tables of one build are ranked apart."""
    return f", {release.provenance}" if release.provenance else ""


def _cutoff_text(cutoff: Cutoff) -> str:
    """The legend's word on a model's cut-off: its date, none (no training data) or unknown."""
    if cutoff.untrained:
        return "no training data"
    return f"cut-off {cutoff.date.isoformat()}" if cutoff.date else "cut-off unknown"


def _middle(period: Period) -> date:
    return period.start + (period.end - period.start) / 2


def trend_png(board: Board, highlight: tuple[str, ...] = ()) -> bytes:
    """:func:`trend_figure` as PNG bytes (reproducible, like :func:`plot_png`); LeaderboardError without
    snapshot entries."""
    return png_bytes(trend_figure(board, highlight=highlight))
