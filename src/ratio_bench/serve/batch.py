"""Many queries at once: every query of a file searched on every move, the hits written by candidate id.

This is what a judged measure of typed search reads (``ratio search --queries FILE --out HITS``): one searcher,
loaded once, answers each query the way ``ratio search`` and the search page do, and the file names each hit by
its candidate id, the system and the index's source, not by its text (see
:mod:`ratio_bench.evaluation.typed_hits`).
"""

from __future__ import annotations

from collections.abc import Sequence

from ratio_bench.evaluation.typed_hits import Hit, Query
from ratio_bench.serve.search import Searcher


def search_queries(
    searcher: Searcher, queries: Sequence[Query], k: int, moves: Sequence[str] | None = None, system: str = ""
) -> list[Hit]:
    """Top ``k`` per move for each query; ``system`` names them (default: the index's model of each move)."""
    models = searcher.describe()["models"]
    hits = []
    for q in queries:
        for move, found in searcher.search(q.text, moves, k).items():
            name = system or models[move]
            hits += [Hit(name, q.query_id, move, h["rank"], h["id"], h["score"]) for h in found]
    return hits
