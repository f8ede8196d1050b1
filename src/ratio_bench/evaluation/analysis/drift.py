"""Drift over a release's test snapshots: does a model's score move with time beyond what the query mix explains?

Every snapshot of a release has a candidate pool of the same size, but not the same kind of queries: months are
dominated by different sources (one by ICLR submissions, one by NeurIPS full texts, the rest by arXiv abstracts;
a query's source is its ``paper_id`` up to the first "/"), and sources differ in difficulty. A rising MRR@10
over the months can then be an easier source concentrated in later months, not time. So per model and relation
:func:`analyze` fits two slopes of the per-query reciprocal rank@10 on the snapshot's month:

- the raw trend, ``RR ~ month`` (OLS);
- the trend after the query mix, ``RR ~ month + one dummy per source`` (OLS with source fixed effects),

each with a two-sided permutation p-value (:func:`trend`): the month labels of the queries are shuffled, for the
second one within each source only, so a source that is both easier and concentrated in some months keeps its
months under the null and cannot make a trend. :func:`verdict` reads the two p-values. The source mix per
snapshot and each source's mean RR@10 per model show where a raw trend comes from.

The gold ranks come from leaderboard entries' ``per_query`` blocks (read through the board's loader, so a bad
file rejects itself only). They are aligned to queries by recomputing each snapshot's sorted query ids from the
release and checking the entry's hash of them: an entry of another build is skipped with its reason, never
mis-aligned.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
from rich.table import Table

from ratio_bench.core import extras
from ratio_bench.core.errors import RatioError
from ratio_bench.core.relations import RELATIONS
from ratio_bench.core.snapshots import Period, parse_split
from ratio_bench.dataset.release import Release
from ratio_bench.evaluation.board.cells import entry_detail
from ratio_bench.evaluation.board.escaping import plain_text, terminal_text
from ratio_bench.evaluation.board.leaderboard import Board, Rejected, model_key
from ratio_bench.evaluation.board.render.plots import png_bytes, pyplot
from ratio_bench.evaluation.entry.ranks import gold_rank_metric
from ratio_bench.evaluation.entry.record import Entry
from ratio_bench.evaluation.scoring import uncertainty
from ratio_bench.evaluation.scoring.results import MAIN_SCORE, query_ids_sha256

PERMUTATIONS = 9999  # p-values in steps of 1/10,000
SEED = 0
CHUNK = 1000  # permutations drawn at once: a block is CHUNK x queries floats, a few MB for a whole release
NO_SOURCE = "(none)"  # the source of a paper id without a "/"

NO_DRIFT = "no drift beyond noise"
MIX = "drift explained by the query mix"
BEYOND = "drift beyond the mix"
UNRESOLVED = "raw drift, not resolved by the mix"
MIX_SHARE = 0.5  # "explained by the mix": the source dummies take at least this share of the raw slope away
NO_ENTRIES = (
    "no entries on test snapshots (test_YYYY_MM); score models on every snapshot of the release with "
    "`ratio score --split snapshots --out DIR`"
)


class DriftError(RatioError):
    pass


@dataclass(frozen=True)
class Settings:
    """The tests' settings, stated under every table and in the report."""

    permutations: int = PERMUTATIONS
    seed: int = SEED
    alpha: float = uncertainty.ALPHA
    bootstrap: uncertainty.Bootstrap = uncertainty.DEFAULT

    @property
    def note(self) -> str:
        return (
            "Slope: OLS of per-query RR@10 on the snapshot's month, in MRR@10 points per year; after mix: with one "
            "dummy per query source (paper_id up to '/'). p: two-sided permutation test, "
            f"{self.permutations:,} shuffles of the queries' months (after mix: within each source), seed "
            f"{self.seed}. Verdict at p < {self.alpha} per row (not corrected for the number of rows): a "
            f"slope after mix -> {BEYOND}; else a raw slope -> {MIX} when the mix takes at least "
            f"{MIX_SHARE:.0%} of it away, {UNRESOLVED} when not; else {NO_DRIFT}. Per snapshot: MRR@10 "
            f"with its {self.bootstrap.note}."
        )


DEFAULT = Settings()


@dataclass(frozen=True)
class Snapshot:
    """One snapshot split's queries of one relation, in sorted query-id order (the order of an entry's ranks)."""

    split: str
    period: Period
    query_ids_sha256: str
    sources: tuple[str, ...]

    @property
    def month(self) -> float:
        """Months since year 0 at the period's middle (a quarter sits on its middle month), so a month without
        a snapshot keeps its length in the slope."""
        span = 1 if self.period.kind == "month" else 3
        return 12 * self.period.start.year + self.period.start.month - 1 + (span - 1) / 2


@dataclass(frozen=True)
class Trend:
    """A slope in MRR@10 points per year and its permutation p-value; ``reason`` when none can be fitted."""

    slope: float | None
    p_value: float | None
    reason: str = ""

    @property
    def text(self) -> str:
        if self.slope is None:
            return "-"
        return f"{self.slope:+.1f} (p {self.p_value:.4f})"


@dataclass(frozen=True)
class SnapshotScore:
    split: str
    period: str
    queries: int
    mrr_at_10: float
    low: float | None
    high: float | None


@dataclass(frozen=True)
class Row:
    """One model on one relation over the snapshots it was scored on."""

    model: str
    detail: str
    relation: str
    snapshots: tuple[SnapshotScore, ...]
    raw: Trend
    after_mix: Trend
    verdict: str
    sources: dict[str, dict[str, float]]  # source -> {"queries": n, "mrr_at_10": mean RR@10}

    @property
    def queries(self) -> int:
        return sum(s.queries for s in self.snapshots)


@dataclass(frozen=True)
class Skipped:
    """A snapshot entry (one relation of it, or all: ``relation`` "") left out, and why."""

    model: str
    split: str
    relation: str
    reason: str


@dataclass(frozen=True)
class Report:
    release: dict[str, str]
    settings: Settings
    mix: dict[
        str, dict[str, dict[str, Any]]
    ]  # relation -> split -> {"queries": n, "shares": {source: share}}
    rows: tuple[Row, ...]
    skipped: tuple[Skipped, ...] = ()
    rejected: tuple[Rejected, ...] = field(default=())

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def source_of(paper_id: str | None) -> str:
    """A query's source: its paper id up to the first "/" (``arxiv/2511.08455`` -> ``arxiv``)."""
    head, slash, _ = (paper_id or "").partition("/")
    return head if slash and head else NO_SOURCE


def release_snapshots(release: Release, relations: tuple[str, ...]) -> dict[str, list[Snapshot]]:
    """Each relation's snapshots with queries, in time order, their sorted ids hashed as entries hash them."""
    out: dict[str, list[Snapshot]] = {}
    for rel in relations:
        for split in release.snapshots:
            table = release.queries(rel, split, ["query_id", "paper_id"])
            if not table.num_rows:
                continue
            pairs = sorted(zip(table["query_id"].to_pylist(), table["paper_id"].to_pylist(), strict=True))
            snapshot = Snapshot(
                split,
                parse_split(split),
                query_ids_sha256([q for q, _ in pairs]),
                tuple(source_of(p) for _, p in pairs),
            )
            out.setdefault(rel, []).append(snapshot)
    return out


def trend(rr: np.ndarray, months: np.ndarray, strata: np.ndarray, settings: Settings = DEFAULT) -> Trend:
    """OLS slope of ``rr`` on ``months`` with one intercept per stratum (one stratum: the plain slope), and its
    two-sided permutation p-value with months shuffled within strata.

    Centring both within each stratum absorbs the intercepts (Frisch-Waugh-Lovell). A shuffle within strata
    keeps each stratum's months, so the denominator sum(t^2) is fixed and a permutation costs one dot product of
    its shuffled months with the centred RRs; each stratum's block is shuffled row-wise by
    ``Generator.permuted``. (``scipy.stats.permutation_test`` has no strata; one code path draws both tests.)
    A stratum within one month adds nothing under any shuffle and is not drawn.
    """
    t = months - _group_means(months, strata)
    y = rr - _group_means(rr, strata)
    denominator = float(t @ t)
    if denominator <= 0:
        return Trend(None, None, "one snapshot" if np.ptp(months) == 0 else "no source in two snapshots")
    observed = float(t @ y)
    tolerance = 1e-9 * np.sqrt(denominator * float(y @ y))  # float noise must not split ties with 0
    blocks = [b for b in (np.flatnonzero(strata == s) for s in np.unique(strata)) if np.ptp(t[b]) > 0]
    rng = np.random.default_rng(settings.seed)
    extreme = 0
    for start in range(0, settings.permutations, CHUNK):
        rows = min(CHUNK, settings.permutations - start)
        numerators = sum(rng.permuted(np.tile(t[b], (rows, 1)), axis=1) @ y[b] for b in blocks)
        extreme += int(np.count_nonzero(np.abs(numerators) >= abs(observed) - tolerance))
    slope = observed / denominator * 12 * 100  # per month, as a fraction -> points per year
    return Trend(slope, (1 + extreme) / (1 + settings.permutations))


def _group_means(values: np.ndarray, strata: np.ndarray) -> np.ndarray:
    return (np.bincount(strata, weights=values) / np.bincount(strata))[strata]


def verdict(raw: Trend, after_mix: Trend, alpha: float = uncertainty.ALPHA) -> str:
    """A slope after the mix (p < alpha) is drift within sources, whatever the raw slope; neither slope is
    noise. A raw slope alone is the mix's only when the source dummies also shrink it (by ``MIX_SHARE`` at
    least): a slope that keeps its size but loses significance lost power (fewer months per source), not its
    cause, and is called unresolved."""
    if raw.p_value is None or raw.slope is None:
        return f"undetermined: {raw.reason}"
    if after_mix.p_value is not None and after_mix.p_value < alpha:
        return BEYOND
    if raw.p_value >= alpha:
        return NO_DRIFT
    if after_mix.slope is None:
        return f"{UNRESOLVED}: {after_mix.reason}"
    return MIX if abs(after_mix.slope) <= (1 - MIX_SHARE) * abs(raw.slope) else UNRESOLVED


def analyze(
    release: Release, board: Board, relations: tuple[str, ...] = RELATIONS, settings: Settings = DEFAULT
) -> Report:
    """Every model's drift on each relation of ``release`` from ``board``'s snapshot entries (see the module)."""
    snapshots = release_snapshots(release, relations)
    hashes = release.split_hashes()
    groups, skipped = _model_entries(board, hashes)
    if not groups:
        raise DriftError(NO_ENTRIES)
    rows = []
    for by_split in groups:
        skipped += [
            Skipped(e.label, split, "", f"the release {release.shown} has no snapshot {split}")
            for split, e in by_split.items()
            if split not in release.snapshots
        ]
        for rel in relations:
            aligned = []
            for snapshot in snapshots.get(rel, []):
                entry = by_split.get(snapshot.split)
                if entry is None or rel not in entry.results:
                    continue
                reason = _misaligned(entry, snapshot, rel)
                if reason:
                    skipped.append(Skipped(entry.label, snapshot.split, rel, reason))
                else:
                    aligned.append((snapshot, entry))
            if aligned:
                rows.append(_row(rel, aligned, settings))
    if not rows:
        reasons = "; ".join(dict.fromkeys(s.reason for s in skipped)) or "none of their relations is in it"
        raise DriftError(
            f"no snapshot entry matches the release {release.shown} ({release.name} {release.version}): results "
            f"of another release build? ({reasons})"
        )
    rows.sort(key=lambda r: (RELATIONS.index(r.relation), r.model, r.detail))
    return Report(
        {"name": release.name, "version": release.version, "manifest_sha256": release.manifest_sha256},
        settings,
        _mix(snapshots),
        tuple(rows),
        tuple(skipped),
        board.rejected,
    )


def _model_entries(board: Board, hashes: dict[str, str]) -> tuple[list[dict[str, Entry]], list[Skipped]]:
    """Per model (:func:`leaderboard.model_key`), its snapshot entries by split: on two entries of one split
    the newer (``scored_at``) counts and the other is skipped; an entry that names another build of its split
    (``split_sha256``) is left out before that choice, so it never displaces the entry of this build. A copy
    the board carries forward from an older version (``scored_on``) is the same file as its original and is not
    counted twice."""
    groups: dict[tuple[str, str, str, str], dict[str, Entry]] = {}
    entries, skipped = [], []
    for e in (e for r in board.releases for e in r.entries if parse_split(e.split) and e.scored_on is None):
        build = e.dataset.split_sha256 or hashes.get(e.split)
        if build == hashes.get(e.split):
            entries.append(e)
        else:
            reason = f"scored on another build of {e.split} (split sha256 {str(build)[:12]})"
            skipped.append(Skipped(e.label, e.split, "", reason))
    for entry in sorted(entries, key=lambda e: e.scored_at or ""):
        by_split = groups.setdefault(model_key(entry), {})
        if entry.split in by_split:
            skipped.append(
                Skipped(entry.label, entry.split, "", "a newer entry of the same model on this split")
            )
        by_split[entry.split] = entry
    return list(groups.values()), skipped


def _misaligned(entry: Entry, snapshot: Snapshot, relation: str) -> str:
    """Why the entry's ranks on ``relation`` cannot be read as this snapshot's queries ("" when they can; an
    entry of another build of the split was already left out by :func:`_model_entries`)."""
    block = entry.per_query.get(relation)
    if block is None:
        return "no per-query ranks (an older entry, or --via mteb): score it again"
    if block.query_ids_sha256 != snapshot.query_ids_sha256 or len(block.gold_rank) != len(snapshot.sources):
        return (
            f"query ids sha256 {block.query_ids_sha256[:12]} is not the release's "
            f"{snapshot.query_ids_sha256[:12]} (another release build)"
        )
    return ""


def _row(relation: str, aligned: list[tuple[Snapshot, Entry]], settings: Settings) -> Row:
    """Pool the aligned snapshots' queries and fit both trends."""
    ranks = np.concatenate([uncertainty.gold_ranks(e, relation) for _, e in aligned])
    table = np.array([gold_rank_metric(MAIN_SCORE, r) for r in range(int(ranks.max()) + 1)])
    rr = table[ranks]
    months = np.concatenate([np.full(len(s.sources), s.month) for s, _ in aligned])
    names = [source for s, _ in aligned for source in s.sources]
    codes, strata = np.unique(names, return_inverse=True)
    raw = trend(rr, months, np.zeros(len(rr), dtype=np.int64), settings)
    after_mix = trend(rr, months, strata, settings)
    counts = np.bincount(strata)
    sources = {
        str(code): {"queries": int(n), MAIN_SCORE: float(rr[strata == i].mean())}
        for i, (code, n) in enumerate(zip(codes, counts, strict=True))
    }
    scores = []
    for snapshot, entry in aligned:
        bounds = uncertainty.interval(entry, relation, settings=settings.bootstrap)
        scores.append(
            SnapshotScore(
                snapshot.split,
                snapshot.period.label,
                len(snapshot.sources),
                entry.results[relation][MAIN_SCORE],
                bounds and bounds.low,
                bounds and bounds.high,
            )
        )
    entry = aligned[0][1]
    return Row(
        entry.label,
        entry_detail(entry),
        relation,
        tuple(scores),
        raw,
        after_mix,
        verdict(raw, after_mix, settings.alpha),
        sources,
    )


def _mix(snapshots: dict[str, list[Snapshot]]) -> dict[str, dict[str, dict[str, Any]]]:
    """Per relation and snapshot: its queries and each source's share of them (largest first)."""
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for rel, snaps in snapshots.items():
        for s in snaps:
            n = len(s.sources)
            shares = {src: k / n for src, k in Counter(s.sources).most_common()}
            out.setdefault(rel, {})[s.split] = {"period": s.period.label, "queries": n, "shares": shares}
    return out


# --- rendering ------------------------------------------------------------------------------------------------

TREND_HEAD = ["model", "snapshots", "queries", "raw slope (p)", "slope after mix (p)", "verdict"]


def _name(row: Row) -> str:
    return row.model + (f" ({row.detail})" if row.detail else "")


def trend_table(report: Report, relation: str) -> Any:
    """One relation's rows as a rich table (slopes in MRR@10 points per year)."""

    t = Table(title=terminal_text(f"{relation}: drift of MRR@10 over the test snapshots, {_title(report)}"))
    for name in TREND_HEAD:
        t.add_column(name, justify="right" if name in ("snapshots", "queries") else "left")
    for row in (r for r in report.rows if r.relation == relation):
        cells = [_name(row), str(len(row.snapshots)), f"{row.queries:,}", row.raw.text, row.after_mix.text]
        t.add_row(*map(terminal_text, [*cells, row.verdict]))
    return t


def source_table(report: Report, relation: str) -> Any:
    """Where a raw trend comes from: each source's share of the relation's queries per snapshot it dominates,
    and its mean RR@10 (%) for each model."""

    rows = [r for r in report.rows if r.relation == relation]
    mix = report.mix[relation]
    totals = Counter()
    for snapshot in mix.values():
        totals.update({src: share * snapshot["queries"] for src, share in snapshot["shares"].items()})
    t = Table(title=terminal_text(f"{relation}: query sources (mean RR@10 per model, %)"))
    for name in ["source", "queries", "largest share"] + [r.model for r in rows]:
        t.add_column(terminal_text(name))
    for src, n in totals.most_common():
        top = max(mix.values(), key=lambda snap: snap["shares"].get(src, 0))
        where = f"{100 * top['shares'][src]:.0f}% of {top['period']}"
        means = [r.sources.get(src, {}).get(MAIN_SCORE) for r in rows]
        cells = [src, f"{round(n):,}", where] + ["-" if m is None else f"{100 * m:.1f}" for m in means]
        t.add_row(*map(terminal_text, cells))
    return t


def _title(report: Report) -> str:
    r = report.release
    return f"{r['name']} {r['version']} (manifest {r['manifest_sha256'][:12]})"


def plot_png(report: Report) -> bytes:
    """Per relation: MRR@10 per snapshot per model (its bootstrap interval as a band) above the source mix of
    each snapshot as stacked bars, on one time axis; a model keeps its colour across relations, named once in
    the legend under the figure (long names would squeeze the axes). PNG bytes, reproducible."""
    plt = pyplot("--plot")
    Line2D = extras.load("matplotlib.lines").Line2D

    relations = list(dict.fromkeys(r.relation for r in report.rows))
    names = sorted({_name(r) for r in report.rows})
    palette = plt.get_cmap("tab10" if len(names) <= 10 else "tab20").colors
    colour = {name: palette[i % len(palette)] for i, name in enumerate(names)}
    legend_inches = 0.3 + 0.18 * len(names)
    height = 5.5 * len(relations) + legend_inches
    fig, axes = plt.subplots(
        2 * len(relations),
        1,
        figsize=(11, height),
        squeeze=False,
        gridspec_kw={"height_ratios": [3, 1.4] * len(relations)},
    )
    for i, rel in enumerate(relations):
        top, bottom = axes[2 * i, 0], axes[2 * i + 1, 0]
        mix = report.mix[rel]
        x = {split: k for k, split in enumerate(mix)}
        for row in (r for r in report.rows if r.relation == rel):
            xs, c = [x[s.split] for s in row.snapshots], colour[_name(row)]
            top.plot(xs, [100 * s.mrr_at_10 for s in row.snapshots], marker="o", color=c)
            if all(s.low is not None and s.high is not None for s in row.snapshots):
                low, high = ([100 * getattr(s, b) for s in row.snapshots] for b in ("low", "high"))
                top.fill_between(xs, low, high, color=c, alpha=0.15)
        top.set_ylabel("MRR@10 (%)", fontsize=9)
        title = f"{rel}: MRR@10 per test snapshot (bands: {report.settings.bootstrap.note}), {_title(report)}"
        top.set_title(plain_text(title), fontsize=9, loc="left", parse_math=False)
        base = np.zeros(len(mix))
        for src in sorted({src for snap in mix.values() for src in snap["shares"]}):
            share = np.array([100 * snap["shares"].get(src, 0) for snap in mix.values()])
            bottom.bar(range(len(mix)), share, bottom=base, label=plain_text(src))
            base += share
        bottom.set_ylabel("source (% queries)", fontsize=9)
        bottom.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1), borderaxespad=0)
        for ax in (top, bottom):
            ax.set_xticks(range(len(mix)), [snap["period"] for snap in mix.values()], fontsize=8, rotation=45)
    handles = [Line2D([], [], color=colour[n], marker="o", label=plain_text(n)) for n in names]
    fig.legend(handles=handles, loc="lower left", fontsize=7, frameon=False)
    fig.tight_layout(rect=(0, legend_inches / height, 1, 1))
    return png_bytes(fig)
