"""Leaderboard row names: tuned copies of one backbone never share a name."""

from __future__ import annotations

from ratio_bench.evaluation.results import entry_label


def test_row_names_tell_baseline_specialists_and_unified_apart():
    names = [
        entry_label({"model": "all-MiniLM-L6-v2:generic"}),
        *(
            entry_label({"model": "all-MiniLM-L6-v2 generic-Tuned", "tuned_for": r})
            for r in ("address", "all")
        ),
    ]
    assert names == [
        "all-MiniLM-L6-v2:generic",
        "all-MiniLM-L6-v2 generic-Tuned [tuned for address]",
        "all-MiniLM-L6-v2 generic-Tuned [unified, all moves]",
    ]
