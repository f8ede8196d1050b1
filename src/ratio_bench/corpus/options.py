"""The corpus reader flags (``--format``, ``--text-format``, ``--keep-sections``, ``--strict``) that every
command reading corpus files shares (``ratio segment``, ``ratio mine``, ``ratio index``)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from ratio_bench.core.options import add_strict_option
from ratio_bench.corpus.readers import (  # imported late: keeps `ratio --help` fast
    FORMATS,
    TEXT_FORMATS,
    ReaderSettings,
)
from ratio_bench.corpus.sections import PROSE_CATEGORIES, SectionCategory

if TYPE_CHECKING:
    from ratio_bench.corpus.readers import ReaderSettings


def add_reader_options(p: argparse.ArgumentParser) -> None:
    """How corpus files are read: schema, body format, kept sections and ``--strict``."""

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


def reader_settings(args: argparse.Namespace) -> ReaderSettings:
    """The ``ReaderSettings`` chosen by :func:`add_reader_options`' flags."""

    return ReaderSettings(
        fmt=args.fmt,
        text_format=args.text_format,
        keep_categories=frozenset(SectionCategory(c) for c in args.keep_sections),
        strict=args.strict,
    )
