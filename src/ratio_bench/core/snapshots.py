"""Test snapshots: the periods (months or quarters) a release's test partition is also cut into, and their names.

A snapshot is a self-contained retrieval task of one period's queries and a pool of that period's candidates.
Its split name carries the period, ``test_2026_03`` (a month) or ``test_2026q1`` (a quarter), so any reader
(scoring, the leaderboard's clean/contaminated marking, mteb's ``eval_splits``, the trend plot) knows its dates
from the name alone; both forms are valid Hugging Face split names (``\\w+``).
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass

PERIOD_KINDS = ("month", "quarter")
SNAPSHOT_PREFIX = "test_"
_MONTH = re.compile(r"^test_(\d{4})_(\d{2})$")
_QUARTER = re.compile(r"^test_(\d{4})q([1-4])$")


@dataclass(frozen=True, order=True)
class Period:
    """One calendar month or quarter: ``start`` and ``end`` are its first and last day."""

    start: dt.date
    end: dt.date
    kind: str

    @property
    def label(self) -> str:
        """How people read it: ``2026-03`` or ``2026 Q1``."""
        if self.kind == "month":
            return f"{self.start.year}-{self.start.month:02d}"
        return f"{self.start.year} Q{(self.start.month - 1) // 3 + 1}"

    @property
    def split(self) -> str:
        """The release split that holds this period's snapshot."""
        if self.kind == "month":
            return f"{SNAPSHOT_PREFIX}{self.start.year}_{self.start.month:02d}"
        return f"{SNAPSHOT_PREFIX}{self.start.year}q{(self.start.month - 1) // 3 + 1}"

    def next(self) -> Period:
        return period_of(self.end + dt.timedelta(days=1), self.kind)


def _months(kind: str) -> int:
    if kind not in PERIOD_KINDS:
        raise ValueError(f"unknown period {kind!r}; the periods are {', '.join(PERIOD_KINDS)}")
    return 1 if kind == "month" else 3


def period_of(day: dt.date, kind: str) -> Period:
    """The month or quarter that holds ``day``."""
    months = _months(kind)
    first_month = (day.month - 1) // months * months + 1
    start = dt.date(day.year, first_month, 1)
    after = dt.date(start.year + (first_month + months - 1) // 12, (first_month + months - 1) % 12 + 1, 1)
    return Period(start, after - dt.timedelta(days=1), kind)


def periods_between(first: dt.date, last: dt.date, kind: str) -> list[Period]:
    """Every period from the one holding ``first`` to the one holding ``last``, in time order."""
    out: list[Period] = []
    period = period_of(first, kind)
    while period.start <= last:
        out.append(period)
        period = period.next()
    return out


FIRST_YEAR, LAST_YEAR = (
    1900,
    2999,
)  # a name outside is no snapshot (year 0000 or 9999 would break date arithmetic)


def parse_split(name: str) -> Period | None:
    """The period a snapshot split name stands for, or None for any other split (``test``, ``silver``...)."""
    if m := _MONTH.match(name):
        year, month = int(m[1]), int(m[2])
        ok = 1 <= month <= 12 and FIRST_YEAR <= year <= LAST_YEAR
        return period_of(dt.date(year, month, 1), "month") if ok else None
    if (m := _QUARTER.match(name)) and FIRST_YEAR <= int(m[1]) <= LAST_YEAR:
        return period_of(dt.date(int(m[1]), (int(m[2]) - 1) * 3 + 1, 1), "quarter")
    return None


def is_snapshot(split: str) -> bool:
    return parse_split(split) is not None


_MONTH_LABEL = re.compile(r"^(\d{4})-(\d{2})$")
_QUARTER_LABEL = re.compile(r"^(\d{4}) ?[qQ]([1-4])$")


def parse_period(text: str) -> Period | None:
    """A period as people write it: a split name (``test_2026_03``), a month ``2026-03`` or a quarter
    ``2026q1``/``2026 Q1``; None for anything else (``--withhold`` names the period it withholds this way)."""
    if (period := parse_split(text)) is not None:
        return period
    if m := _MONTH_LABEL.match(text):
        return parse_split(f"{SNAPSHOT_PREFIX}{m[1]}_{m[2]}")
    if m := _QUARTER_LABEL.match(text):
        return parse_split(f"{SNAPSHOT_PREFIX}{m[1]}q{m[2]}")
    return None
