"""Many queries at once: every query of a file searched on every move, the hits written by candidate id.

This is what a judged measure of typed search reads (``ratio search --queries FILE --out HITS``): one searcher,
loaded once, answers each query the way ``ratio search`` and the search page do, and the file names each hit by
its candidate id, the system and the index's source, not by its text (see
:mod:`ratio_bench.evaluation.analysis.typed_hits`).
"""

from __future__ import annotations

from collections.abc import Sequence

from ratio_bench.evaluation.analysis.typed_hits import Hit, Query
from ratio_bench.serve.search import Searcher

PRIOR_SUFFIX = " + role prior"  # a default system name says that the role prior ranked its hits


def search_queries(
    searcher: Searcher,
    queries: Sequence[Query],
    k: int,
    moves: Sequence[str] | None = None,
    system: str = "",
    role_prior: bool = False,
) -> list[Hit]:
    """Top ``k`` per move for each query, as ``ratio search`` answers it (``role_prior`` as there); ``system``
    names them (default: the index's model of each move, with ``PRIOR_SUFFIX`` when the prior was used)."""
    models = searcher.describe()["models"]
    suffix = PRIOR_SUFFIX if searcher.prior_used(role_prior) else ""
    hits = []
    for q in queries:
        for move, found in searcher.search(q.text, moves, k, role_prior).items():
            name = system or models[move] + suffix
            hits += [Hit(name, q.query_id, move, h["rank"], h["id"], h["score"]) for h in found]
    return hits
