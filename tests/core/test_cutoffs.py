"""A tuned model's cut-off from its backbone's and its train partition's."""

from __future__ import annotations

import datetime as dt

from ratio_bench.core.cutoffs import NONE, Cutoff, is_clean, tuned, unknown


def test_a_tuned_models_cutoff_is_the_later_part_and_unknown_when_a_part_is():
    backbone, partition = Cutoff(dt.date(2021, 12, 31), "card"), Cutoff(dt.date(2023, 6, 30), "manifest")
    assert tuned(backbone, partition).date == dt.date(2023, 6, 30)
    assert tuned(Cutoff(dt.date(2024, 1, 1), "card"), partition).date == dt.date(2024, 1, 1)
    floor = tuned(unknown("not stated"), partition)
    assert floor.date is None and floor.source == (
        "unknown: at least the train partition's end (2023-06-30); the backbone's cut-off is unknown"
    )
    assert is_clean(floor, "test_2023q3") is None and tuned(NONE, partition) == partition
