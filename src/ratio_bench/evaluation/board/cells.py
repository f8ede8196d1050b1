"""What a board's row shows, as plain text (each renderer escapes it): the split with its snapshot mark, the
entry's detail and provenance, every figure with its bootstrap interval, and the judged rows.
"""

from __future__ import annotations

from ratio_bench.core.cutoffs import MARKS
from ratio_bench.core.relations import RELATIONS
from ratio_bench.core.snapshots import is_snapshot
from ratio_bench.evaluation.board.leaderboard import ReleaseEntries
from ratio_bench.evaluation.board.ranks import ranked
from ratio_bench.evaluation.entry.record import Entry, Scored
from ratio_bench.evaluation.scoring import uncertainty
from ratio_bench.evaluation.scoring.metrics import AGREEMENTS
from ratio_bench.evaluation.scoring.results import TABLE_METRICS


def clean_mark(entry: Entry) -> str | None:
    """``clean``, ``contaminated`` or ``unknown`` for a score on a dated snapshot (None for any other split):
    decided here from the entry's cut-off and the snapshot's dates (:mod:`ratio_bench.core.cutoffs`)."""
    return MARKS[entry.is_clean] if is_snapshot(entry.split) else None


# How a worker records a cut-off the submitter typed (ratio_bench.leaderboard.job.SUBMITTER begins so).
SUBMITTER_STATED = "stated by the submitter"


def split_text(entry: Entry) -> str:
    """The split as a row shows it: a snapshot with its mark, ``test_2025_03 (contaminated)``; a contaminated
    score is marked, never hidden. A mark decided from a cut-off the submitter typed says so (nobody checked
    the date: 1900-01-01 would make every snapshot clean)."""
    mark = clean_mark(entry)
    source = entry.training_data_cutoff_source or ""
    if mark and mark != MARKS[None] and source.startswith(SUBMITTER_STATED):
        mark += f" by the cut-off {entry.training_data_cutoff} the submitter stated"
    return entry.split + (f" ({mark})" if mark else "")


# An interval from fewer queries than this is marked: a bootstrap over a handful of queries is as unstable as the
# figure itself (over 6 queries, all misses print 0.0 [0.0-0.0], which looks certain and is not).
FEW_QUERIES = 30
FEW_MARK = "\u2020"  # a dagger, legend in :func:`interval_note`


def interval_note(settings: uncertainty.Bootstrap = uncertainty.DEFAULT) -> str:
    return (
        f"Figures: value [low-high], the {settings.note}; n: the queries under a relation's figures; "
        f"{FEW_MARK}: an interval from fewer than {FEW_QUERIES} queries (too few to tell models apart)."
    )


def query_count(entry: Entry | Scored, relation: str) -> int | None:
    """The queries under an entry's figures on ``relation``: its per-query ranks when it keeps them (what the
    interval is computed from), else its ``n_queries``; None when it scored no such relation or records neither."""
    if relation not in entry.results:
        return None
    block = entry.per_query.get(relation)
    if block is not None:
        return len(block.gold_rank)
    return entry.queries(relation)


def count_text(n: int | None) -> str:
    return "-" if n is None else f"{n:,}"


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
    n = query_count(entry, relation)
    return [figure_text(values[key], bounds.get(key), n) for key, _ in TABLE_METRICS]


def figure_text(value: float | None, bounds: uncertainty.Interval | None, n: int | None = None) -> str:
    """``14.5 [12.9-16.1]``; ``0.0\u2020 [0.0-0.0]`` when the interval rests on fewer than FEW_QUERIES queries."""
    if bounds is None:
        return percent(value)
    mark = FEW_MARK if n is not None and n < FEW_QUERIES else ""
    return f"{percent(value)}{mark} [{100 * bounds.low:.1f}-{100 * bounds.high:.1f}]"


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


# Judges too small for their verdicts to mean anything: the local development judge (SmolLM2-135M-Instruct, served
# as "smollm2" by `make judge-server`) fills judged pools to test the plumbing. Matched on the lower-cased name.
PLUMBING_JUDGES = ("smollm",)
PLUMBING_NOTE = (
    "plumbing test: a 135M-parameter development judge filled these verdicts to exercise the code; they are not "
    "evidence about the models."
)


def is_plumbing_judge(model: str) -> bool:
    return any(known in model.lower() for known in PLUMBING_JUDGES)


def judge_text(model: str) -> str:
    """The judge column: the model's name, with ``(plumbing test)`` for a development judge."""
    return f"{model} (plumbing test)" if is_plumbing_judge(model) else model


def judged_rows(release: ReleaseEntries) -> list[tuple[Entry, str, list[str], list[float]]]:
    """(entry, relation, text cells, metric values) for every judged relation of the release's entries."""
    rows = []
    for _, entry in ranked(release):
        for rel in RELATIONS:
            block = entry.judged.get(rel)
            if block is None:
                continue
            text = [entry.label, entry.split, rel, judge_text(block.judge_model), str(block.queries)]
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
