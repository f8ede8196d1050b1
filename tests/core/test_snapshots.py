import datetime as dt

import pytest

from ratio_bench.core.snapshots import is_snapshot, parse_split, period_of, periods_between


def test_month_and_quarter_names_round_trip():
    march = period_of(dt.date(2026, 3, 17), "month")
    assert (march.start, march.end, march.split, march.label) == (
        dt.date(2026, 3, 1),
        dt.date(2026, 3, 31),
        "test_2026_03",
        "2026-03",
    )
    q4 = period_of(dt.date(2025, 12, 31), "quarter")
    assert (q4.start, q4.end, q4.split, q4.label) == (
        dt.date(2025, 10, 1),
        dt.date(2025, 12, 31),
        "test_2025q4",
        "2025 Q4",
    )
    assert parse_split(march.split) == march and parse_split(q4.split) == q4
    assert period_of(dt.date(2024, 2, 10), "month").end == dt.date(2024, 2, 29)


@pytest.mark.parametrize(
    "name",
    ["test", "silver", "train", "test_2026_13", "test_2026q5", "test_26_01", "test_0000_01", "test_9999q4"],
)
def test_other_splits_are_no_snapshot(name):
    assert not is_snapshot(name)


def test_periods_between_crosses_the_year():
    months = periods_between(dt.date(2025, 11, 5), dt.date(2026, 2, 1), "month")
    assert [p.split for p in months] == ["test_2025_11", "test_2025_12", "test_2026_01", "test_2026_02"]
    quarter = months[0].next().next()
    assert quarter.split == "test_2026_01"
