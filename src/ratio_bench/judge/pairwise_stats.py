"""Statistics of a list preference judged in both orders (spec 5.5 and Table 16).

Every query is judged twice: once with the first system's list as List A, once with it as List B. A reply
names a slot (A, B or tie); mapped back through its order it names a system. The query counts as a
preference only when both orders name the same system (*stable, decisive*); a judge that always picks one
slot is therefore never stable, and shows up in the Slot-A rate instead (the share of decisive replies that
chose List A: 50% means no position bias). Both the win rate and the Slot-A rate are tested against 0.5 with
a two-sided exact binomial test (``scipy.stats.binomtest``), as the spec does.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ratio_bench.core import extras

stats = extras.lazy("scipy.stats")


FIRST, SECOND, TIE = "first", "second", "tie"


def preferred_system(winner: str | None, first_is_a: bool) -> str | None:
    """The system a reply prefers (first, second, tie), or None for a reply that could not be used."""
    if winner is None:
        return None
    if winner == "tie":
        return TIE
    return FIRST if (winner == "A") == first_is_a else SECOND


def query_preference(first_as_a: str | None, first_as_b: str | None) -> str | None:
    """A query's verdict from its two replies: first, second or tie when both orders agree, else None."""
    a, b = preferred_system(first_as_a, True), preferred_system(first_as_b, False)
    return a if a is not None and a == b else None


def _p_value(successes: int, trials: int) -> float | None:
    return float(stats.binomtest(successes, trials, 0.5).pvalue) if trials else None


def _rate(part: int, whole: int) -> float | None:
    return part / whole if whole else None


def relation_stats(replies: Sequence[tuple[str | None, str | None]]) -> dict[str, Any]:
    """Table 16's row for one relation from each query's (winner with first as A, winner with first as B).

    A winner is "A", "B", "tie", or None when that order's reply was invalid; a query with an invalid reply
    is counted under ``unusable`` and left out of every rate, so rates are over ``judged`` queries.
    """
    judged = [(a, b) for a, b in replies if a is not None and b is not None]
    verdicts = [query_preference(a, b) for a, b in judged]
    first, second = verdicts.count(FIRST), verdicts.count(SECOND)
    stable_ties = verdicts.count(TIE)
    stable = first + second + stable_ties
    slots = [w for pair in judged for w in pair]
    slot_a, slot_b = slots.count("A"), slots.count("B")
    return {
        "queries": len(replies),
        "judged": len(judged),
        "unusable": len(replies) - len(judged),
        "preferred_first": first,
        "preferred_second": second,
        "stable": stable,
        "stable_ties": stable_ties,
        "stable_share": _rate(stable, len(judged)),
        "win_rate_first": _rate(first, first + second),
        "win_p_value": _p_value(first, first + second),
        "tie_replies": slots.count("tie"),
        "slot_a_replies": slot_a,
        "slot_a_rate": _rate(slot_a, slot_a + slot_b),
        "slot_a_p_value": _p_value(slot_a, slot_a + slot_b),
    }
