"""Counts for the corpus stage report (``ratio corpus stats``), per source."""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any

from rich.console import Console
from rich.table import Table

from ratio_bench.core.io import report_console


@dataclass
class SourceCounts:
    papers_read: int = 0
    papers_kept: int = 0
    rejected: Counter[str] = field(default_factory=Counter)
    flagged: Counter[str] = field(default_factory=Counter)
    paragraphs_by_category: Counter[str] = field(default_factory=Counter)
    paragraphs_dropped_by_category: Counter[str] = field(default_factory=Counter)
    blocks_dropped: Counter[str] = field(default_factory=Counter)
    date_precision: Counter[str] = field(default_factory=Counter)
    sentences: int = 0
    raw_bytes: int = 0

    def as_dict(self) -> dict[str, Any]:
        return {
            "papers_read": self.papers_read,
            "papers_kept": self.papers_kept,
            "rejected": dict(sorted(self.rejected.items())),
            "flagged": dict(sorted(self.flagged.items())),
            "paragraphs": sum(self.paragraphs_by_category.values()),
            "paragraphs_by_category": dict(sorted(self.paragraphs_by_category.items())),
            "paragraphs_dropped_by_category": dict(sorted(self.paragraphs_dropped_by_category.items())),
            "blocks_dropped": dict(sorted(self.blocks_dropped.items())),
            "date_precision": dict(sorted(self.date_precision.items())),
            "sentences": self.sentences,
            "raw_bytes": self.raw_bytes,
        }


class CorpusReport:
    """Accumulates :class:`SourceCounts` keyed by source file."""

    def __init__(self) -> None:
        self.sources: dict[str, SourceCounts] = defaultdict(SourceCounts)

    def __getitem__(self, source: str) -> SourceCounts:
        return self.sources[source]

    def total(self) -> SourceCounts:
        tot = SourceCounts()
        for c in self.sources.values():
            tot.papers_read += c.papers_read
            tot.papers_kept += c.papers_kept
            tot.sentences += c.sentences
            tot.raw_bytes += c.raw_bytes
            for name in (
                "rejected",
                "flagged",
                "paragraphs_by_category",
                "paragraphs_dropped_by_category",
                "blocks_dropped",
                "date_precision",
            ):
                getattr(tot, name).update(getattr(c, name))
        return tot

    def as_dict(self) -> dict[str, Any]:
        return {
            "sources": {k: v.as_dict() for k, v in sorted(self.sources.items())},
            "total": self.total().as_dict(),
        }

    def print(self, console: Console | None = None, seconds: float | None = None) -> None:
        if console is None:
            console = report_console()
        rows = sorted(self.sources.items()) + [("TOTAL", self.total())]
        t = Table(title="Corpus stage: papers, paragraphs, sentences")
        for col in ("source", "read", "kept", "rejected", "paragraphs", "sentences", "MB"):
            t.add_column(col, justify="left" if col == "source" else "right")
        for name, c in rows:
            rej = ", ".join(f"{k}={v}" for k, v in sorted(c.rejected.items())) or "0"
            t.add_row(
                name,
                f"{c.papers_read:,}",
                f"{c.papers_kept:,}",
                rej,
                f"{sum(c.paragraphs_by_category.values()):,}",
                f"{c.sentences:,}",
                f"{c.raw_bytes / 1e6:,.1f}",
            )
        console.print(t)
        d = Table(title="Date precision / flags / sections kept")
        for col in ("source", "date precision", "flagged", "paragraphs by category (kept)", "dropped"):
            d.add_column(col)
        for name, c in rows:
            d.add_row(
                name,
                ", ".join(f"{k}={v:,}" for k, v in sorted(c.date_precision.items())),
                ", ".join(f"{k}={v:,}" for k, v in sorted(c.flagged.items())) or "-",
                ", ".join(f"{k}={v:,}" for k, v in sorted(c.paragraphs_by_category.items())),
                ", ".join(
                    f"{k}={v:,}"
                    for k, v in sorted((c.blocks_dropped + c.paragraphs_dropped_by_category).items())
                ),
            )
        console.print(d)
        if seconds:
            mb = self.total().raw_bytes / 1e6
            console.print(f"{mb:,.1f} MB of raw text in {seconds:,.1f} s = {mb / seconds:,.2f} MB/s")
