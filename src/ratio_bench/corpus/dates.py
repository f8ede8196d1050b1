"""Publication dates with an explicit precision.

Corpus metadata gives days, months, bare years, ranges such as ``2023/2024`` or nothing at all. The split
step must never guess: each date keeps the interval it really denotes (``start``..``end``) and a precision, and
the date policy decides later what to do with a year or a range that straddles a split boundary.
"""

from __future__ import annotations

import calendar
import datetime as dt
import re
from dataclasses import dataclass
from enum import Enum


class DatePrecision(str, Enum):
    DAY = "day"
    MONTH = "month"
    YEAR = "year"
    RANGE = "range"
    UNKNOWN = "unknown"


@dataclass(frozen=True)
class PubDate:
    """A publication date as the interval it denotes; ``start``/``end`` are None when unknown."""

    raw: str | None
    precision: DatePrecision
    start: dt.date | None = None
    end: dt.date | None = None
    parse_error: bool = False  # True when a non-empty raw value could not be understood

    @property
    def year(self) -> int | None:
        """The year when it is certain (start and end fall in the same year)."""
        if self.start and self.end and self.start.year == self.end.year:
            return self.start.year
        return None


_DAY = re.compile(r"^(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})(?:[T ].*)?$")
_MONTH = re.compile(r"^(\d{4})[-/.](\d{1,2})$")
_YEAR = re.compile(r"^(\d{4})$")
_RANGE = re.compile(r"^(\d{4})\s*(?:/|-|–|\.\.)\s*(\d{4})$")
_MIN_YEAR, _MAX_YEAR = 1900, 2100


def _month_end(year: int, month: int) -> dt.date:
    return dt.date(year, month, calendar.monthrange(year, month)[1])


def _plausible(year: int) -> bool:
    return _MIN_YEAR <= year <= _MAX_YEAR


def parse_date(raw: object) -> PubDate:
    """Parse a metadata date into a :class:`PubDate`; never raises.

    Accepts ``YYYY-MM-DD`` (also with ``/`` or ``.`` and a time suffix), ``YYYY-MM``, ``YYYY``, year ranges
    ``YYYY/YYYY``, integers (a year) and ``datetime.date`` objects. Anything else becomes UNKNOWN with
    ``parse_error=True`` so the caller can count and log it.
    """
    if raw is None:
        return PubDate(None, DatePrecision.UNKNOWN)
    if isinstance(raw, dt.datetime):
        raw = raw.date()
    if isinstance(raw, dt.date):
        return PubDate(raw.isoformat(), DatePrecision.DAY, raw, raw)
    if isinstance(raw, int) and not isinstance(raw, bool):
        raw = str(raw)
    if not isinstance(raw, str):
        return PubDate(repr(raw), DatePrecision.UNKNOWN, parse_error=True)
    text = raw.strip()
    if not text:
        return PubDate(None, DatePrecision.UNKNOWN)
    try:
        if m := _DAY.match(text):
            d = dt.date(int(m[1]), int(m[2]), int(m[3]))
            if _plausible(d.year):
                return PubDate(raw, DatePrecision.DAY, d, d)
        elif m := _MONTH.match(text):
            y, mo = int(m[1]), int(m[2])
            if _plausible(y):
                return PubDate(raw, DatePrecision.MONTH, dt.date(y, mo, 1), _month_end(y, mo))
        elif m := _YEAR.match(text):
            y = int(m[1])
            if _plausible(y):
                return PubDate(raw, DatePrecision.YEAR, dt.date(y, 1, 1), dt.date(y, 12, 31))
        elif m := _RANGE.match(text):
            a, b = int(m[1]), int(m[2])
            if _plausible(a) and _plausible(b) and a < b:
                return PubDate(raw, DatePrecision.RANGE, dt.date(a, 1, 1), dt.date(b, 12, 31))
            if a == b and _plausible(a):
                return PubDate(raw, DatePrecision.YEAR, dt.date(a, 1, 1), dt.date(a, 12, 31))
    except ValueError:  # month 13, February 30th, ...
        pass
    return PubDate(raw, DatePrecision.UNKNOWN, parse_error=True)
