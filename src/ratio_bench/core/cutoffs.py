"""Training-data cut-offs: the last day a model's training data can come from, and whether a snapshot is clean.

Ratio guards against contamination by date. A score on a test snapshot (:mod:`ratio_bench.core.snapshots`) is
*clean* when the snapshot starts after the model's cut-off (``start > cutoff``): none of its papers can have been
in what the model was trained on. A cut-off always travels with its source (a registry entry's published
release, a ``ratio train`` summary, a submitter), so a reader can judge the claim. A model without training data
(BM25) has no cut-off and is clean on every snapshot; an unknown cut-off is never clean, only unknown.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

from ratio_bench.core.errors import UsageError
from ratio_bench.core.snapshots import parse_split

NO_TRAINING_DATA = "no training data (lexical)"  # the source of a model that learnt nothing: clean everywhere
MAX_SOURCE = 300  # a source is one sentence; the schema caps it too
MARKS = {True: "clean", False: "contaminated", None: "unknown"}
LEGEND = (
    "Snapshot marks: clean = the snapshot starts after the model's training-data cut-off; contaminated = it "
    "does not; unknown = the model's cut-off is not known (never counted as clean)."
)


@dataclass(frozen=True)
class Cutoff:
    """A model's training-data cut-off (``date``; None when unknown or when it has no training data) and who or
    what states it (``source``)."""

    date: dt.date | None
    source: str

    @property
    def untrained(self) -> bool:
        return self.source == NO_TRAINING_DATA

    def fields(self) -> dict[str, Any]:
        """The keys a leaderboard entry and a training summary record."""
        return {
            "training_data_cutoff": self.date.isoformat() if self.date else None,
            "training_data_cutoff_source": self.source,
        }

    @property
    def text(self) -> str:
        """How a card or a table says it: ``2021-12-31 (source)``, ``none (...)`` or ``unknown (...)``."""
        if self.untrained:
            return f"none ({self.source})"
        return f"{self.date.isoformat() if self.date else 'unknown'} ({self.source})"


NONE = Cutoff(None, NO_TRAINING_DATA)


def unknown(why: str) -> Cutoff:
    return Cutoff(None, f"unknown: {why}")


def parse_date(text: str, flag: str) -> dt.date:
    """A cut-off given on a command line or a form, as a date; a one-line refusal naming ``flag`` otherwise."""
    try:
        return dt.date.fromisoformat(text.strip())
    except ValueError:
        raise UsageError(
            f"{flag} {text[:40]!r}: not a date; give the last day of the model's training data as YYYY-MM-DD "
            f"(e.g. {flag} 2024-06-30)"
        ) from None


def recorded_date(value: Any) -> dt.date | None:
    """A cut-off as a file records it (an ISO date or null); ValueError for anything else."""
    if value is None:
        return None
    if not isinstance(value, str) or len(value) != 10:
        raise ValueError(f"expected YYYY-MM-DD or null, got {str(value)[:40]!r}")
    return dt.date.fromisoformat(value)


def stated(date: dt.date, by: str, replaces: Cutoff | None = None) -> Cutoff:
    """A cut-off someone gave (``by``: who), saying what it replaces, so an entry records which one it used."""
    over = f"; replaces {replaces.text}" if replaces and (replaces.date or replaces.untrained) else ""
    return Cutoff(date, f"{by}{over}"[:MAX_SOURCE])


def tuned(backbone: Cutoff, partition: Cutoff) -> Cutoff:
    """The cut-off of a model fine-tuned from ``backbone`` on a train ``partition``: it knows what both taught it,
    so the later date. An unknown part makes it unknown, though never earlier than the known part."""
    parts = {"backbone's cut-off": backbone, "train partition's end": partition}
    if backbone.untrained or partition.untrained:
        return partition if backbone.untrained else backbone
    if backbone.date and partition.date:
        dates = " and the ".join(f"{name} ({c.date})" for name, c in parts.items())
        return Cutoff(max(backbone.date, partition.date), f"the later of the {dates}")
    known = {name: c.date for name, c in parts.items() if c.date}
    missing = " and the ".join(name for name, c in parts.items() if not c.date)
    floor = "".join(f"at least the {name} ({day}); " for name, day in known.items())
    return unknown(f"{floor}the {missing} is unknown")


def is_clean(cutoff: Cutoff, split: str) -> bool | None:
    """Clean (True), contaminated (False) or unknown (None) on ``split``; None for a split that is no snapshot."""
    period = parse_split(split)
    if period is None:
        return None
    if cutoff.untrained:
        return True
    return None if cutoff.date is None else period.start > cutoff.date
