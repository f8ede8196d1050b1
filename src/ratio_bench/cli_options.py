"""Command-line option groups and value parsers shared by several stages' commands.

Each stage registers its own commands (``<stage>/cli.py: register(subparsers)``); what more than one stage
needs lives here, so no stage imports another's command module and ``cli.py`` only assembles them.
"""

from __future__ import annotations

import argparse
import difflib
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from ratio_bench.errors import UsageError


def add_reader_options(p: argparse.ArgumentParser) -> None:
    """How corpus files are read: schema, body format, kept sections and ``--strict``."""
    from ratio_bench.corpus.readers import FORMATS, TEXT_FORMATS
    from ratio_bench.corpus.sections import PROSE_CATEGORIES, SectionCategory

    p.add_argument(
        "--format",
        dest="fmt",
        choices=FORMATS,
        default=None,
        help="record schema (default: detected per file)",
    )
    p.add_argument(
        "--text-format",
        choices=TEXT_FORMATS,
        default="auto",
        help="how bodies are parsed (default: Markdown if it has headings, else plain)",
    )
    p.add_argument(
        "--keep-sections",
        nargs="+",
        metavar="CATEGORY",
        choices=[c.value for c in SectionCategory],
        default=sorted(c.value for c in PROSE_CATEGORIES),
        help="section categories to keep (default: all prose categories, appendices included)",
    )
    add_strict_option(p)


def add_strict_option(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--strict",
        action="store_true",
        help="fail on malformed input (bad JSON, wrong field types, unreadable files) instead of rejecting it",
    )


def reader_settings(args: argparse.Namespace):
    """The ``ReaderSettings`` chosen by :func:`add_reader_options`' flags."""
    from ratio_bench.corpus.readers import ReaderSettings
    from ratio_bench.corpus.sections import SectionCategory

    return ReaderSettings(
        fmt=args.fmt,
        text_format=args.text_format,
        keep_categories=frozenset(SectionCategory(c) for c in args.keep_sections),
        strict=args.strict,
    )


def parse_assignment(
    item: str,
    flag: str,
    keys: Sequence[str] | None = None,
    value_type: Callable[[str], Any] = str,
    example: str = "KEY=VALUE",
    key_name: str = "key",
) -> tuple[str, Any]:
    """One ``KEY=VALUE``; a bad item is a usage error naming ``flag`` and the item (did-you-mean for keys).

    ``value_type`` converts the text after ``=`` and raises ``ValueError`` (its message is shown) if it is bad.
    """
    key, sep, raw = item.partition("=")
    key = key.strip()
    if not sep or not key.isidentifier():
        raise UsageError(f"{flag} expects {example}, got {item!r}")
    if keys is not None and key not in keys:
        close = difflib.get_close_matches(key, keys, n=1)
        hint = f"did you mean {close[0]!r}? " if close else ""
        raise UsageError(f"{flag} {item}: unknown {key_name} {key!r}; {hint}known: {', '.join(keys)}")
    try:
        return key, value_type(raw)
    except (TypeError, ValueError) as exc:
        raise UsageError(f"{flag} {item}: {exc}") from None


def parse_assignments(
    values: Iterable[str] | None,
    flag: str,
    keys: Sequence[str] | None = None,
    value_type: Callable[[str], Any] = str,
    example: str = "KEY=VALUE",
    key_name: str = "key",
) -> dict[str, Any]:
    """Every ``KEY=VALUE`` of a repeatable flag, in order (a later key wins), via :func:`parse_assignment`."""
    return dict(parse_assignment(item, flag, keys, value_type, example, key_name) for item in values or ())


def yaml_scalar(text: str) -> Any:
    """``8``, ``true``, ``04:00:00`` as YAML reads them."""
    import yaml

    from ratio_bench.yamlio import load_yaml

    try:
        return load_yaml(text)
    except yaml.YAMLError as e:
        reason = " ".join(str(getattr(e, "problem", None) or e).split())
        raise ValueError(f"the value is not valid YAML ({reason})") from None


def json_or_text(text: str) -> Any:
    """A JSON value when it parses as one (``0.5``, ``{"a": 1}``), else the text itself."""
    import json

    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def sample_size(text: str) -> int | None:
    """``N`` (a positive integer) or ``all`` (every pair): 0 would judge nothing and write an empty split."""
    if text in ("all", ""):
        return None
    try:
        n = int(text)
    except ValueError:
        raise ValueError(f"N must be a positive integer or 'all', got {text!r}") from None
    if n < 1:
        raise ValueError(
            f"N must be a positive integer or 'all', got {n} (leave the relation out to keep its default)"
        )
    return n
