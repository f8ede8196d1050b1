import datetime as dt

import pytest

from ratio_bench.corpus.dates import DatePrecision, parse_date


@pytest.mark.parametrize(
    "raw, precision, start, end",
    [
        ("2025-03-18", DatePrecision.DAY, dt.date(2025, 3, 18), dt.date(2025, 3, 18)),
        ("2025/03/18", DatePrecision.DAY, dt.date(2025, 3, 18), dt.date(2025, 3, 18)),
        ("2024-02-01T10:00:00Z", DatePrecision.DAY, dt.date(2024, 2, 1), dt.date(2024, 2, 1)),
        ("2024-02", DatePrecision.MONTH, dt.date(2024, 2, 1), dt.date(2024, 2, 29)),
        ("2023-12", DatePrecision.MONTH, dt.date(2023, 12, 1), dt.date(2023, 12, 31)),
        ("2010", DatePrecision.YEAR, dt.date(2010, 1, 1), dt.date(2010, 12, 31)),
        (2019, DatePrecision.YEAR, dt.date(2019, 1, 1), dt.date(2019, 12, 31)),
        ("2023/2024", DatePrecision.RANGE, dt.date(2023, 1, 1), dt.date(2024, 12, 31)),
        (dt.date(2026, 1, 5), DatePrecision.DAY, dt.date(2026, 1, 5), dt.date(2026, 1, 5)),
    ],
)
def test_parse_date_interval_and_precision(raw, precision, start, end):
    d = parse_date(raw)
    assert (d.precision, d.start, d.end, d.parse_error) == (precision, start, end, False)


@pytest.mark.parametrize("raw", [None, "", "   "])
def test_missing_dates_are_unknown_without_error(raw):
    d = parse_date(raw)
    assert d.precision is DatePrecision.UNKNOWN and d.start is None and not d.parse_error


@pytest.mark.parametrize("raw", ["sometime", "2022-02-30", "2024-13", "3024", "2024/2023", "12/05/2021", 3.5])
def test_unparsable_dates_are_flagged_never_guessed(raw):
    d = parse_date(raw)
    assert d.precision is DatePrecision.UNKNOWN and d.start is None and d.parse_error


def test_year_is_only_certain_within_one_year():
    assert parse_date("2024-05").year == 2024
    assert parse_date("2023/2024").year is None
