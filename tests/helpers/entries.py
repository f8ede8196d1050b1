"""Leaderboard entries of chosen per-query gold ranks, made by the real code (``result_of_runs`` then
``leaderboard_entry``): a run is built for each query with its gold at the wanted rank."""

from __future__ import annotations

from typing import Any

from ratio_bench.evaluation.entry.record import Entry
from ratio_bench.evaluation.scoring.evaluate import Queries, result_of_runs
from ratio_bench.evaluation.scoring.results import leaderboard_entry

MANIFEST = {"name": "ratio", "version": "1.0"}


def ranking(gold: str, rank: int, length: int = 100) -> list[str]:
    """``length`` candidate ids with ``gold`` at ``rank`` (1-based; 0: not among them)."""
    ids = [f"other-{i}" for i in range(length - (rank > 0))]
    if rank:
        ids.insert(rank - 1, gold)
    return ids


def ranked_entry(
    model: str, ranks: dict[str, list[int]], split: str = "test", **extra: Any
) -> dict[str, Any]:
    """The entry of ``model`` whose gold sits at ``ranks[relation][i]`` for query i of each relation."""
    runs, queries = {}, {}
    for rel, wanted in ranks.items():
        ids = [f"{rel}-{i:05d}" for i in range(len(wanted))]
        golds = [f"gold-{q}" for q in ids]
        runs[rel] = {q: ranking(g, r) for q, g, r in zip(ids, golds, wanted, strict=True)}
        queries[rel] = Queries(ids, [""] * len(ids), golds)
    return {**leaderboard_entry(result_of_runs(model, runs, queries), MANIFEST, split).to_json(), **extra}


def ranked_record(model: str, ranks: dict[str, list[int]], split: str = "test", **extra: Any) -> Entry:
    """:func:`ranked_entry` read into its record, as the board's loader reads a file."""
    return Entry.from_json(ranked_entry(model, ranks, split, **extra))
