"""Leaderboard row names: tuned copies of one backbone never share a name; entries say which model they scored."""

from __future__ import annotations

import json
import re
from types import SimpleNamespace

import pytest
from tests.helpers.entries import ranked_entry

from ratio_bench.evaluation.entry.record import Scored
from ratio_bench.evaluation.scoring.results import (
    SubmissionError,
    leaderboard_entry,
    model_identity,
    query_ids_sha256,
    validate_submission,
)
from ratio_bench.retrieval.registry import TRAINING_SCHEMA, TRAINING_SUMMARY, ModelSetup


def test_row_names_tell_baseline_specialists_and_unified_apart():
    names = [
        Scored.of_document({"model": "all-MiniLM-L6-v2:generic", "results": {}}).label,
        *(
            Scored.of_document(
                {"model": "all-MiniLM-L6-v2 generic-Tuned", "tuned_for": r, "results": {}}
            ).label
            for r in ("address", "all")
        ),
    ]
    assert names == [
        "all-MiniLM-L6-v2:generic",
        "all-MiniLM-L6-v2 generic-Tuned [tuned for address]",
        "all-MiniLM-L6-v2 generic-Tuned [unified, all moves]",
    ]


def test_an_entry_records_the_weights_the_config_and_the_submitter(tmp_path):
    best = tmp_path / "out" / "best"
    best.mkdir(parents=True)
    (best / "model.safetensors").write_bytes(b"weights")
    (tmp_path / "out" / TRAINING_SUMMARY).write_text(
        json.dumps({"schema": TRAINING_SCHEMA, "config": {"file": "/x/smoke.yaml", "sha256": "3" * 64}})
    )
    setup = ModelSetup("m generic-Tuned", "dense", str(best), "generic", "", "")
    result = SimpleNamespace(
        model=setup.name,
        metrics={"address": {"recall_at_1": 0.1, "recall_at_10": 0.2, "mrr_at_10": 0.1, "mrr_at_100": 0.1}},
        n_queries={"address": 3},
        gold_ranks={},
    )
    manifest = {"name": "ratio", "version": "1.0"}
    entry = leaderboard_entry(result, manifest, "test", identity=model_identity(setup), submitter="Ada L")
    validate_submission(entry)
    assert entry["precision"] == "float32"  # the scorer's, recorded (a folder cannot choose it)
    assert entry["trained_from"] == {"config": "smoke.yaml", "config_sha256": "3" * 64}
    assert entry["submitter"] == "Ada L" and len(entry["model_fingerprint"]) == 64
    (best / "README.md").write_text("a card")  # rendering the card does not change the model's identity
    assert model_identity(setup)["model_fingerprint"] == entry["model_fingerprint"]
    (best / "model.safetensors").write_bytes(b"other weights")
    assert model_identity(setup)["model_fingerprint"] != entry["model_fingerprint"]


def test_snapshot_entries_are_clean_after_the_cutoff_contaminated_on_or_before_it_unknown_without_one():
    """Two monthly snapshots around a cut-off of 2025-03-15: March holds it (contaminated), April starts after it
    (clean); an unknown cut-off is null on both, BM25's none is clean on both; an entry may not claim otherwise."""
    import datetime as dt

    import pytest

    from ratio_bench.core.cutoffs import NONE, Cutoff, unknown
    from ratio_bench.evaluation.scoring.results import SubmissionError

    result = SimpleNamespace(
        model="m:none",
        metrics={"address": {"recall_at_1": 0.1, "recall_at_10": 0.2, "mrr_at_10": 0.1, "mrr_at_100": 0.1}},
        n_queries={"address": 3},
        gold_ranks={},
    )
    manifest = {"name": "ratio", "version": "1.0"}
    stated = Cutoff(dt.date(2025, 3, 15), "stated by the scorer")
    marks = {}
    for name, cutoff in (("dated", stated), ("unknown", unknown("not stated")), ("bm25", NONE)):
        for split in ("test_2025_03", "test_2025_04"):
            entry = leaderboard_entry(result, manifest, split, cutoff=cutoff)
            validate_submission(entry)
            marks[name, split] = entry["clean"]
    assert marks == {
        ("dated", "test_2025_03"): False,
        ("dated", "test_2025_04"): True,
        ("unknown", "test_2025_03"): None,
        ("unknown", "test_2025_04"): None,
        ("bm25", "test_2025_03"): True,
        ("bm25", "test_2025_04"): True,
    }
    whole = leaderboard_entry(result, manifest, "test", cutoff=stated)
    assert whole["training_data_cutoff"] == "2025-03-15" and "clean" not in whole
    forged = leaderboard_entry(result, manifest, "test_2025_03", cutoff=stated) | {"clean": True}
    with pytest.raises(SubmissionError, match="clean"):
        validate_submission(forged)
    with pytest.raises(SubmissionError, match="training_data_cutoff"):
        validate_submission(whole | {"training_data_cutoff": "2025-02-30"})


def test_an_entry_keeps_each_querys_gold_rank_aligned_to_its_sorted_query_ids():
    entry = ranked_entry("m:none", {"address": [3, 0, 1, 12]})
    validate_submission(entry)
    ids = [f"address-{i:05d}" for i in range(4)]
    assert entry["per_query"] == {
        "address": {"query_ids_sha256": query_ids_sha256(ids), "gold_rank": [3, 0, 1, 12]}
    }
    assert entry["results"]["address"]["mrr_at_10"] == pytest.approx((1 / 3 + 1) / 4)


@pytest.mark.parametrize(
    "mutate, message",
    [
        (
            lambda pq: pq["address"]["gold_rank"].append(1),
            "per_query/address/gold_rank: 5 ranks for n_queries 4",
        ),
        (lambda pq: pq["address"].update(gold_rank=[3, 0, 1.5, 12]), "per_query/address/gold_rank/2"),
        (lambda pq: pq["address"].update(gold_rank=[3, 0, 101, 12]), "per_query/address/gold_rank/2"),
        (
            lambda pq: pq["address"].update(gold_rank=[1, 0, 1, 12]),
            "per_query/address/gold_rank: the ranks give",
        ),
        (lambda pq: pq.update(broaden=pq["address"]), "per_query/broaden: no results for broaden"),
    ],
)
def test_per_query_data_must_be_bounded_and_agree_with_the_figures(mutate, message):
    entry = ranked_entry("m:none", {"address": [3, 0, 1, 12]})
    mutate(entry["per_query"])
    with pytest.raises(SubmissionError, match=re.escape(message)):
        validate_submission(entry)
    del entry["n_queries"]
    with pytest.raises(SubmissionError, match="n_queries"):
        validate_submission(entry)
