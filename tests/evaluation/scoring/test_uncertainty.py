"""Bootstrap intervals over queries and paired tests between entries, from entries' per-query gold ranks."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import bootstrap
from tests.helpers.entries import ranked_entry

from ratio_bench.evaluation.entry.ranks import gold_rank_metric
from ratio_bench.evaluation.entry.record import Scored
from ratio_bench.evaluation.scoring import uncertainty


def scored(model, ranks, **kw):
    """The helper's entry document read as the bootstrap reads an entry."""
    return Scored.of_document(ranked_entry(model, ranks, **kw))


PATTERN = [1, 2, 0, 5, 1, 0, 3, 11, 1, 0]  # MRR@10 0.4033: a model that is often right, often lost


def test_the_interval_holds_the_figure_and_narrows_with_more_queries():
    small, large = (scored("m", {"address": PATTERN * k}) for k in (4, 40))
    figure = small.results["address"]["mrr_at_10"]
    assert figure == large.results["address"]["mrr_at_10"]
    narrow, wide = uncertainty.interval(large, "address"), uncertainty.interval(small, "address")
    assert wide.low < figure < wide.high and narrow.low < figure < narrow.high
    # ten times the queries: about sqrt(10) times narrower
    assert (narrow.high - narrow.low) < 0.5 * (wide.high - wide.low)


def test_the_same_seed_gives_the_same_interval_and_the_seed_is_said():
    entry = scored("m", {"address": PATTERN * 10})
    first = uncertainty.interval(entry, "address", settings=uncertainty.Bootstrap(seed=3))
    uncertainty._rank_intervals.cache_clear()
    assert uncertainty.interval(entry, "address", settings=uncertainty.Bootstrap(seed=3)) == first
    assert uncertainty.interval(entry, "address", settings=uncertainty.Bootstrap(seed=4)) != first
    assert uncertainty.DEFAULT.note == "95% bootstrap CI over queries, 1,000 resamples, seed 0"


def test_the_rank_histogram_draw_is_the_query_bootstrap_scipy_runs():
    entry = scored("m", {"address": PATTERN * 30})
    ours = uncertainty.intervals(entry, "address", ["mrr_at_10", "ndcg_at_10", "recall_at_1"])
    for metric, bounds in ours.items():
        values = [gold_rank_metric(metric, r) for r in PATTERN * 30]
        theirs = bootstrap((values,), np.mean, n_resamples=4000, method="percentile", rng=1)
        interval = theirs.confidence_interval
        assert bounds.low == pytest.approx(interval.low, abs=0.01), metric
        assert bounds.high == pytest.approx(interval.high, abs=0.01), metric


def test_an_entry_without_per_query_data_has_no_interval_and_is_never_tied():
    entry = scored("m", {"address": PATTERN * 4})
    bare = Scored(entry.label, entry.results)
    assert uncertainty.interval(bare, "address") is None
    comparison = uncertainty.compare(bare, bare, "address")
    assert not comparison.tied and comparison.reason == "no per-query data on address"


def test_identical_ranks_tie_and_a_far_better_model_does_not():
    base = scored("a", {"address": PATTERN * 10, "broaden": PATTERN * 5})
    same = scored("b", {"address": PATTERN * 10, "broaden": PATTERN * 5})
    tie = uncertainty.compare(base, same, ["address", "broaden"])
    assert tie.tied and tie.p_value == 1.0 and tie.difference == 0.0
    better = scored("c", {"address": [1] * 100, "broaden": PATTERN * 5})
    clear = uncertainty.compare(better, base, ["address", "broaden"])
    assert not clear.tied and clear.p_value < 0.01
    assert 0 < clear.low <= clear.difference <= clear.high
    # one query apart out of 100: inside the noise
    near = scored("d", {"address": [2, *(PATTERN * 10)[1:]], "broaden": PATTERN * 5})
    assert uncertainty.compare(base, near, "address").tied


def test_entries_on_different_queries_are_not_comparable():
    a = scored("a", {"address": PATTERN * 10})
    b = scored("b", {"address": PATTERN * 11})
    comparison = uncertainty.compare(a, b, "address")
    assert not comparison.tied and "different queries" in comparison.reason
