"""Validating a config's parsed YAML: types, ranges and unknown keys with a did-you-mean, every problem one
error naming the file and the dotted field (``<file>: <field>: <what is wrong>``).

The release build config uses :class:`Checker` throughout; the training config, the silver settings and the
command-line ``KEY=VALUE`` options share :func:`closest` for their did-you-mean.
"""

from __future__ import annotations

import datetime as dt
import difflib
import math
from collections.abc import Iterable
from typing import Any

from ratio_bench.core.errors import RatioError, field_name, shown

MAX_COUNT = 2**63 - 1  # a count that becomes a DuckDB LIMIT, a BIGINT


def closest(key: str, allowed: Iterable[str]) -> str | None:
    """The allowed name a mistyped ``key`` most likely meant, if any is close enough."""
    close = difflib.get_close_matches(key, list(allowed), n=1)
    return close[0] if close else None


def is_unicode(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


KINDS = {
    dict: "a mapping",
    list: "a list",
    str: "a string",
    bool: "a boolean",
    int: "an integer",
    float: "a number",
    type(None): "null",
}


def kind_of(value: Any) -> str:
    return KINDS.get(type(value), f"a {type(value).__name__}")


class Checker:
    """Type and range checks that raise ``error`` (a :class:`RatioError`) naming the file and the dotted field."""

    def __init__(self, source: str, error: type[RatioError] = RatioError):
        self.source = source
        self.error = error

    def fail(self, where: str, message: str) -> RatioError:
        return self.error(f"{self.source}: {where}: {message}" if where else f"{self.source}: {message}")

    def mapping(self, value: Any, where: str, allowed: tuple[str, ...] | None, null_ok: bool = True) -> dict:
        """A mapping (null reads as empty unless ``null_ok`` is false) whose keys are in ``allowed`` (None: any)."""
        if value is None and null_ok:
            return {}
        if not isinstance(value, dict):
            raise self.fail(where, f"must be a mapping (key: value), got {kind_of(value)} {shown(value)}")
        for key in value:
            if allowed is not None and key not in allowed:
                close = closest(str(key), allowed)
                hint = f"did you mean {close!r}?" if close else f"allowed: {', '.join(allowed)}"
                name = field_name(key)
                raise self.fail(f"{where}.{name}" if where else name, f"unknown field; {hint}")
        return value

    def required(self, mapping: dict, key: str, where: str) -> Any:
        if mapping.get(key) is None:
            raise self.fail(f"{where}.{key}" if where else key, "missing field")
        return mapping[key]

    def string(self, value: Any, where: str) -> str:
        if isinstance(value, bool) or not isinstance(value, (str, int, float)) or str(value).strip() == "":
            raise self.fail(where, f"must be a non-empty string, got {kind_of(value)} {shown(value)}")
        return str(value)

    def boolean(self, value: Any, where: str) -> bool:
        if not isinstance(value, bool):
            raise self.fail(where, f"must be true or false, got {kind_of(value)} {shown(value)}")
        return value

    def integer(self, value: Any, where: str) -> int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.fail(where, f"must be an integer, got {kind_of(value)} {shown(value)}")
        return value

    def count(self, value: Any, where: str, high: int = MAX_COUNT) -> int | None:
        """A positive integer up to ``high`` (default: what a DuckDB LIMIT, a BIGINT, holds), or null."""
        if value is not None and (
            isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= high
        ):
            raise self.fail(where, f"must be a positive integer up to {high:,} or null, got {shown(value)}")
        return value

    def number(self, value: Any, where: str, high: float) -> float | None:
        """A finite number in [0, high], or null (YAML reads ``.nan`` and ``.inf`` as numbers)."""
        if value is not None and (
            isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= high
        ):
            raise self.fail(where, f"must be a number from 0 to {high:,} or null, got {shown(value)}")
        return value

    def plain_data(self, raw: dict[str, Any]) -> None:
        """Every key text, every number finite, every text valid Unicode: the config is copied into the
        release manifest (sorted JSON), which could hold nothing else."""
        stack: list[tuple[str, Any]] = [("", raw)]
        while stack:
            where, value = stack.pop()
            if isinstance(value, float) and not math.isfinite(value):
                raise self.fail(where, f"must be a finite number, got {shown(value)}")
            if isinstance(value, str) and not is_unicode(value):
                raise self.fail(where, "is not valid Unicode text (a lone surrogate escape such as \\ud800)")
            if isinstance(value, list):
                stack.extend((f"{where}[{i}]", v) for i, v in enumerate(value))
            elif isinstance(value, dict):
                for key in value:
                    if not isinstance(key, str) or not is_unicode(key):
                        raise self.fail(where, f"field names must be text, got {kind_of(key)} {shown(key)}")
                stack.extend(
                    (f"{where}.{field_name(k)}" if where else field_name(k), v) for k, v in value.items()
                )

    def choice(self, value: Any, where: str, choices: tuple[str, ...]) -> str:
        if value not in choices:
            raise self.fail(where, f"must be one of {', '.join(choices)}, got {shown(value)}")
        return value

    def string_list(self, value: Any, where: str) -> list[str]:
        if not isinstance(value, list):
            raise self.fail(where, f"must be a list (e.g. [a, b]), got {kind_of(value)} {shown(value)}")
        if not value:
            raise self.fail(where, "must list at least one path")
        return [self.string(v, f"{where}[{i}]") for i, v in enumerate(value)]

    def date(self, value: Any, where: str) -> dt.date | None:
        if value is None:
            return None
        if isinstance(value, dt.datetime):
            return value.date()
        if isinstance(value, dt.date):
            return value
        try:
            return dt.date.fromisoformat(str(value))
        except ValueError:
            raise self.fail(where, f"must be an ISO date (YYYY-MM-DD) or null, got {shown(value)}") from None
