"""The ranking on clean snapshots only (``--clean-only``): per model, each relation's MRR@10 over the dated
snapshots that start after its training-data cut-off (:mod:`ratio_bench.core.cutoffs`), as plain cells.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

from ratio_bench.core.cutoffs import MARKS, entry_clean
from ratio_bench.core.relations import RELATIONS
from ratio_bench.core.snapshots import is_snapshot
from ratio_bench.evaluation.board_cells import entry_detail, percent
from ratio_bench.evaluation.leaderboard import ReleaseEntries, model_key
from ratio_bench.evaluation.results import MAIN_SCORE, entry_label


@dataclass(frozen=True)
class CleanRow:
    """One model on the release's clean snapshots: per relation (query-weighted MRR@10, snapshots, queries)."""

    label: str
    detail: str
    relations: dict[str, tuple[float, int, int]]
    left_out: dict[str, int]  # snapshot entries not counted, by mark (contaminated, unknown)

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
    "(models with every relation first). A model without a clean snapshot is listed, not ranked."
)


def clean_ranking(release: ReleaseEntries) -> list[tuple[int | None, CleanRow]]:
    """(rank or None, row) per model scored on the release's snapshots, ranked on its clean snapshots only.

    A model is what the board tells apart (:func:`leaderboard.model_key`). A snapshot entry without a query count
    for a relation cannot be weighted and is not counted for it.
    """
    groups: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
    for e in release.entries:
        if is_snapshot(e["split"]):
            groups.setdefault(model_key(e), []).append(e)
    rows = []
    for entries in groups.values():
        clean = [e for e in entries if entry_clean(e) is True]
        relations = {}
        for rel in RELATIONS:
            counted = [
                (e["results"][rel][MAIN_SCORE], e["n_queries"][rel])
                for e in clean
                if rel in e["results"] and e.get("n_queries", {}).get(rel)
            ]
            queries = sum(n for _, n in counted)
            if queries:
                relations[rel] = (sum(v * n for v, n in counted) / queries, len(counted), queries)
        left_out = Counter(MARKS[entry_clean(e)] for e in entries if entry_clean(e) is not True)
        rows.append(CleanRow(entry_label(entries[0]), entry_detail(entries[0]), relations, dict(left_out)))
    scored = sorted((r for r in rows if r.relations), key=lambda r: (-len(r.relations), -r.score, r.label))
    unscored = sorted((r for r in rows if not r.relations), key=lambda r: r.label)
    return [(i, r) for i, r in enumerate(scored, 1)] + [(None, r) for r in unscored]


CLEAN_HEAD = ["#", "model setup", "model", "mean M@10"] + [f"{rel} M@10" for rel in RELATIONS] + ["note"]


def clean_cells(rank: int | None, row: CleanRow) -> list[str]:
    """A clean-ranking row as plain text cells (escaped by each renderer)."""
    cells = [str(rank) if rank else "-", row.label, row.detail, percent(row.score if row.relations else None)]
    for rel in RELATIONS:
        m = row.relations.get(rel)
        cells.append(f"{percent(m[0])} ({m[1]} snapshots, {m[2]:,} queries)" if m else "-")
    return cells + [row.note]
