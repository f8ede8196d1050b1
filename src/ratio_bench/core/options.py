"""Command-line option parsers shared by several stages' commands (``KEY=VALUE`` flags, ``--strict``).

Each stage registers its own commands (``<stage>/cli.py: register(subparsers)``); what more than one stage
needs lives here (or, for the corpus reader flags, in :mod:`ratio_bench.corpus.options`), so no stage imports
another's command module and ``cli.py`` only assembles them.
"""

from __future__ import annotations

import argparse
import json
import re
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import yaml

from ratio_bench.core.config import closest
from ratio_bench.core.errors import UsageError
from ratio_bench.core.yamlio import load_yaml


def add_strict_option(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--strict",
        action="store_true",
        help="fail on malformed input (bad JSON, wrong field types, unreadable files) instead of rejecting it",
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
        close = closest(key, keys)
        hint = f"did you mean {close!r}? " if close else ""
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

    try:
        return load_yaml(text)
    except yaml.YAMLError as e:
        reason = " ".join(str(getattr(e, "problem", None) or e).split())
        raise ValueError(f"the value is not valid YAML ({reason})") from None


def json_or_text(text: str) -> Any:
    """A JSON value when it parses as one (``0.5``, ``{"a": 1}``), else the text itself."""

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


class OneLineParser(argparse.ArgumentParser):
    """The ``ratio`` parser (every stage's sub-parser inherits it): a command-line mistake is one line naming the
    argument, the bad value and what it may be, then where the usage is; not the whole usage first.

    ``argument --via: invalid choice: 'x' (choose from 'ratio', 'mteb')`` becomes ``--via 'x': not one of
    ratio, mteb (ratio score --help)``; other argparse errors keep their own text, on one line.
    """

    def error(self, message: str):  # type: ignore[override]

        match = re.fullmatch(r"argument (\S+?): invalid choice: (.+?) \(choose from (.+)\)", message)
        if match:
            flag, value, choices = match.groups()
            shown_choices = ", ".join(c.strip().strip("'\"") for c in choices.split(","))
            name = flag.split("/")[-1]
            name = "command" if name.endswith("command") else name  # a sub-command's dest (dataset_command)
            message = f"{name} {value}: not one of {shown_choices}"
        self.exit(2, f"{self.prog}: error: {message} (see `{self.prog} --help`)\n")
        raise AssertionError("unreachable")  # argparse's exit raises SystemExit


RELEASE_METAVAR = "DIR|ORG/NAME[@REV]"


def add_release_option(p: argparse.ArgumentParser, what: str = "", **kwargs: Any) -> None:
    """``--dataset``: a release folder or a Hub dataset by name (resolved by ``dataset.hub_release``)."""
    default = kwargs.get("default")
    shown = f" (default: ./{default})" if default else ""
    p.add_argument(
        "--dataset",
        metavar=RELEASE_METAVAR,
        help=f"a release folder{shown}{what}, or a Hub dataset ORG/NAME[@REVISION] (downloaded once, pinned to "
        "its commit, checked; an existing folder of that name wins)",
        **kwargs,
    )


def add_view_options(p: argparse.ArgumentParser, json_help: str) -> None:
    """The console table: compact by default (MRR@10 per move, n, 95% interval), ``--wide`` or ``--json``."""
    view = p.add_mutually_exclusive_group()
    view.add_argument(
        "--wide", action="store_true", help="the full table: every metric per move (R@1, R@10, M@10, M@100)"
    )
    view.add_argument("--json", action="store_true", help=json_help)
