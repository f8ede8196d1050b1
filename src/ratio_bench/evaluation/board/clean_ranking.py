"""The ranking on clean snapshots only (``--clean-only``): per model, each relation's MRR@10 over the dated
snapshots that start after its training-data cut-off (:mod:`ratio_bench.core.cutoffs`), as plain cells.

A model's clean queries are pooled: its snapshot entries' per-query gold ranks, concatenated in split order, are
one sample, so the query-weighted MRR@10 gets a bootstrap interval like any figure, and two neighbours clean on
the same snapshots (the same pooled queries) get the board's paired test and are tied inside the noise.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from ratio_bench.core.cutoffs import MARKS
from ratio_bench.core.relations import RELATIONS
from ratio_bench.core.snapshots import is_snapshot
from ratio_bench.evaluation.board.cells import entry_detail, figure_text, percent
from ratio_bench.evaluation.board.leaderboard import ReleaseEntries, model_key, split_key
from ratio_bench.evaluation.board.ranks import Rank
from ratio_bench.evaluation.entry.record import Entry, PerQuery, Scored
from ratio_bench.evaluation.scoring import uncertainty
from ratio_bench.evaluation.scoring.results import query_ids_sha256


@dataclass(frozen=True)
class CleanRow:
    """One model on the release's clean snapshots: per relation (query-weighted MRR@10, snapshots, queries)."""

    label: str
    detail: str
    relations: dict[str, tuple[float, int, int]]
    left_out: dict[str, int]  # snapshot entries not counted, by mark (contaminated, unknown)
    pooled: Scored = field(default_factory=lambda: Scored("", {}))  # the pooled clean queries

    def interval(self, relation: str) -> uncertainty.Interval | None:
        return uncertainty.interval(self.pooled, relation) if relation in self.pooled.per_query else None

    @property
    def score(self) -> float:
        return sum(m for m, _, _ in self.relations.values()) / len(self.relations)

    @property
    def note(self) -> str:
        counted = "" if self.relations else "no clean snapshot"
        left = ", ".join(f"{n} {mark}" for mark, n in sorted(self.left_out.items()))
        return "; ".join(filter(None, (counted, f"left out: {left}" if left else "")))


CLEAN_NOTE = (
    "Clean snapshots only (--clean-only): per model, each relation's MRR@10 averaged over the snapshots that start "
    "after the model's training-data cut-off, weighted by their queries; ranked by the mean over relations "
    "(models with every relation first). A model without a clean snapshot is listed, not ranked. Each figure's "
    f"interval pools the model's clean queries ({uncertainty.DEFAULT.note}); =k: neighbours clean on the same "
    "snapshots whose paired bootstrap finds no difference (p >= 0.05)."
)


def clean_ranking(release: ReleaseEntries) -> list[tuple[Rank | None, CleanRow]]:
    """(rank or None, row) per model scored on the release's snapshots, ranked on its clean snapshots only;
    neighbours that the paired test cannot tell apart share a rank (``=2``).

    A model is what the board tells apart (:func:`leaderboard.model_key`). A snapshot entry without a query count
    for a relation cannot be weighted and is not counted for it.
    """
    groups: dict[tuple[str, str, str, str], list[Entry]] = {}
    for e in release.entries:
        if is_snapshot(e.split):
            groups.setdefault(model_key(e), []).append(e)
    rows = []
    for entries in groups.values():
        clean = sorted((e for e in entries if e.is_clean is True), key=lambda e: split_key(e.split))
        relations = {}
        for rel in RELATIONS:
            counted = [(e.score(rel), e.n_queries[rel]) for e in clean if rel in e.results and e.queries(rel)]
            queries = sum(n for _, n in counted)
            if queries:
                relations[rel] = (sum(v * n for v, n in counted) / queries, len(counted), queries)
        left_out = Counter(MARKS[e.is_clean] for e in entries if e.is_clean is not True)
        rows.append(
            CleanRow(
                entries[0].label,
                entry_detail(entries[0]),
                relations,
                dict(left_out),
                _pooled(clean, relations),
            )
        )
    scored = sorted((r for r in rows if r.relations), key=lambda r: (-len(r.relations), -r.score, r.label))
    unscored = sorted((r for r in rows if not r.relations), key=lambda r: r.label)
    ranks: list[tuple[Rank | None, CleanRow]] = []
    for i, row in enumerate(scored, 1):
        above = ranks[-1] if ranks else None
        if above and set(above[1].relations) == set(row.relations) and _tied(above[1], row):
            ranks[-1] = (Rank(above[0].position, True), above[1])
            ranks.append((Rank(above[0].position, True), row))
        else:
            ranks.append((Rank(i), row))
    return ranks + [(None, r) for r in unscored]


def _pooled(clean: list[Entry], relations: dict[str, tuple[float, int, int]]) -> Scored:
    """The clean entries of one model as one entry-like record per relation: their per-query gold ranks in split
    order, and a query-id hash over the splits' own (the paired test's alignment); a relation any clean entry
    lacks per-query data for is left out (no interval, never tied)."""
    per_query = {}
    for rel in relations:
        blocks = [(e.split, e.per_query.get(rel)) for e in clean if rel in e.results]
        if blocks and all(block is not None for _, block in blocks):
            per_query[rel] = PerQuery(
                query_ids_sha256([f"{split}:{b.query_ids_sha256}" for split, b in blocks]),
                tuple(rank for _, b in blocks for rank in b.gold_rank),
            )
    return Scored(
        "pooled clean queries", {rel: {"mrr_at_10": m} for rel, (m, _, _) in relations.items()}, per_query
    )


def _tied(a: CleanRow, b: CleanRow) -> bool:
    return uncertainty.compare(a.pooled, b.pooled, sorted(a.relations)).tied


CLEAN_HEAD = ["#", "model setup", "model", "mean M@10"] + [f"{rel} M@10" for rel in RELATIONS] + ["note"]


def clean_cells(rank: Rank | None, row: CleanRow) -> list[str]:
    """A clean-ranking row as plain text cells (escaped by each renderer): each relation's figure with the
    bootstrap interval of its pooled clean queries."""
    cells = [str(rank) if rank else "-", row.label, row.detail, percent(row.score if row.relations else None)]
    for rel in RELATIONS:
        m = row.relations.get(rel)
        shown = figure_text(m[0], row.interval(rel), m[2]) if m else ""
        cells.append(f"{shown} ({m[1]} snapshots, {m[2]:,} queries)" if m else "-")
    return cells + [row.note]
