"""What a board's row shows, as plain text (each renderer escapes it): the split with its snapshot mark, the
entry's detail and provenance, every figure with its bootstrap interval, and the judged rows.
"""

from __future__ import annotations

from ratio_bench.core.cutoffs import MARKS
from ratio_bench.core.relations import RELATIONS
from ratio_bench.core.snapshots import is_snapshot
from ratio_bench.evaluation import uncertainty
from ratio_bench.evaluation.board_ranks import ranked
from ratio_bench.evaluation.entry import Entry, Scored
from ratio_bench.evaluation.leaderboard import ReleaseEntries
from ratio_bench.evaluation.metrics import AGREEMENTS
from ratio_bench.evaluation.results import TABLE_METRICS


def clean_mark(entry: Entry) -> str | None:
    """``clean``, ``contaminated`` or ``unknown`` for a score on a dated snapshot (None for any other split):
    decided here from the entry's cut-off and the snapshot's dates (:mod:`ratio_bench.core.cutoffs`)."""
    return MARKS[entry.is_clean] if is_snapshot(entry.split) else None


def split_text(entry: Entry) -> str:
    """The split as a row shows it: a snapshot with its mark, ``test_2025_03 (contaminated)``; a contaminated
    score is marked, never hidden."""
    mark = clean_mark(entry)
    return entry.split + (f" ({mark})" if mark else "")


def interval_note(settings: uncertainty.Bootstrap = uncertainty.DEFAULT) -> str:
    return f"Figures: value [low-high], the {settings.note}."


def entry_detail(entry: Entry) -> str:
    """What tells two rows of one name apart: the weights' short fingerprint, the training config, the
    submitter ("" when the entry records none of them)."""
    parts = [f"scored on {entry.scored_on}"] if entry.scored_on else []
    if entry.model_fingerprint:
        parts.append(f"weights {entry.model_fingerprint[:8]}")
    if entry.trained_from:
        parts.append(f"config {entry.trained_from.config} ({entry.trained_from.config_sha256[:8]})")
    if entry.submitter:
        parts.append(f"by {entry.submitter}")
    if entry.same_weights_as:  # another repository's row came first with these weights
        parts.append(f"same weights as {entry.same_weights_as}")
    return ", ".join(parts)


def relation_figures(entry: Entry | Scored, relation: str) -> list[str]:
    """The table's figures of one relation as shown: ``14.5 [12.9-16.1]`` (%, with the bootstrap interval),
    the bare figure without per-query data, "-" when the entry did not score the relation."""
    values = entry.results.get(relation)
    if values is None:
        return ["-"] * len(TABLE_METRICS)
    bounds = uncertainty.intervals(entry, relation, [key for key, _ in TABLE_METRICS])
    return [figure_text(values[key], bounds.get(key)) for key, _ in TABLE_METRICS]


def figure_text(value: float | None, bounds: uncertainty.Interval | None) -> str:
    if bounds is None:
        return percent(value)
    return f"{percent(value)} [{100 * bounds.low:.1f}-{100 * bounds.high:.1f}]"


def without_per_query(release: ReleaseEntries) -> list[str]:
    """The rows whose figures have no interval (and are never tied): entries without per-query data."""
    return [e.label for e in release.entries if e.bare_relations]


def bare_note(release: ReleaseEntries) -> str:
    """The line under a release's table naming its rows without per-query data ("" when there are none)."""
    bare = without_per_query(release)
    return f"No per-query data (figures without an interval, never tied): {', '.join(bare)}." if bare else ""


JUDGED_SHOWN = (("mrr", "MRR"), ("precision", "P"))  # of each agreement's metrics, the ones the table shows
JUDGED_HEAD = ["model setup", "split", "relation", "judge", "queries", "judged@10"] + [
    f"{agreement} {short}@10" for agreement in AGREEMENTS for _, short in JUDGED_SHOWN
]
JUDGED_NOTE = (
    "Judged by an LLM (not used for ranking): on the judged pool's queries only, relevant = the mined gold plus "
    "the candidates the judge accepted (hard: every prompt; soft: any), unjudged = not relevant; judged@10 is "
    "the share of the entry's top 10 the judge had read when it was scored."
)


def judged_rows(release: ReleaseEntries) -> list[tuple[Entry, str, list[str], list[float]]]:
    """(entry, relation, text cells, metric values) for every judged relation of the release's entries."""
    rows = []
    for _, entry in ranked(release):
        for rel in RELATIONS:
            block = entry.judged.get(rel)
            if block is None:
                continue
            text = [entry.label, entry.split, rel, block.judge_model, str(block.queries)]
            values = [block.coverage_at_10] + [
                getattr(block, agreement)[f"{metric}_at_10"]
                for agreement in AGREEMENTS
                for metric, _ in JUDGED_SHOWN
            ]
            rows.append((entry, rel, text, values))
    return rows


def provenance_text(entry: Entry) -> str | None:
    """``verified (worker ..., model@sha)`` or ``self-reported`` for an entry from a results repository."""
    return None if entry.provenance is None else entry.provenance.text


def percent(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}"
