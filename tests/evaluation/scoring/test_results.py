"""Leaderboard row names: tuned copies of one backbone never share a name; entries say which model they scored."""

from __future__ import annotations

import datetime as dt
import json
import re
from dataclasses import replace
from types import SimpleNamespace

import pytest
from tests.helpers.entries import ranked_entry, ranking

from ratio_bench.core.cutoffs import Cutoff
from ratio_bench.core.io import write_json
from ratio_bench.evaluation.entry.model_meta import ModelMeta
from ratio_bench.evaluation.entry.record import Entry, Sample, Scored
from ratio_bench.evaluation.scoring.evaluate import Queries, result_of_runs
from ratio_bench.evaluation.scoring.metrics import SET_METRICS
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
    assert validate_submission(entry.to_json()) == entry  # the record made is the one its document reads as
    assert entry.precision == "float32"  # the scorer's, recorded (a folder cannot choose it)
    assert entry.to_json()["trained_from"] == {"config": "smoke.yaml", "config_sha256": "3" * 64}
    assert entry.submitter == "Ada L" and len(entry.model_fingerprint) == 64
    (best / "README.md").write_text("a card")  # rendering the card does not change the model's identity
    assert model_identity(setup)["model_fingerprint"] == entry.model_fingerprint
    (best / "model.safetensors").write_bytes(b"other weights")
    assert model_identity(setup)["model_fingerprint"] != entry.model_fingerprint


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
            validate_submission(entry.to_json())
            marks[name, split] = entry.to_json()["clean"]
    assert marks == {
        ("dated", "test_2025_03"): False,
        ("dated", "test_2025_04"): True,
        ("unknown", "test_2025_03"): None,
        ("unknown", "test_2025_04"): None,
        ("bm25", "test_2025_03"): True,
        ("bm25", "test_2025_04"): True,
    }
    whole = leaderboard_entry(result, manifest, "test", cutoff=stated).to_json()
    assert whole["training_data_cutoff"] == "2025-03-15" and "clean" not in whole
    forged = leaderboard_entry(result, manifest, "test_2025_03", cutoff=stated).to_json() | {"clean": True}
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


def _full_entry(**kw) -> Entry:
    """An entry of a run with every optional block our writer fills: identity, a cut-off on a snapshot (so
    ``clean``), per-query ranks, judged figures, the pool size, submitter, tuning, the Hub release, model facts
    with unknowns (nulls the file states)."""
    ids = [f"address-{i}" for i in range(4)]
    golds = [f"gold-{q}" for q in ids]
    runs = {"address": {q: ranking(g, r) for q, g, r in zip(ids, golds, (1, 3, 0, 12), strict=True)}}
    result = result_of_runs("org/m:generic", runs, {"address": Queries(ids, [""] * 4, golds)})
    result = replace(result, model_meta=ModelMeta(parameters=22_000_000, embedding_dim=384, hardware="cpu"))
    figures = {f"{name}_at_10": 0.5 for name, _ in SET_METRICS}
    judged = {
        "address": {"judge_model": "j", "queries": 2, "judged_pairs": 9, "coverage_at_10": 0.25,
                    "hard": figures, "soft": figures}
    }  # fmt: skip
    identity = {"model_fingerprint": "f" * 64, "precision": "float32",
                "trained_from": {"config": "c.yaml", "config_sha256": "a" * 64}}  # fmt: skip
    return leaderboard_entry(
        result, {"name": "ratio", "version": "1.0"}, "test_2025_04", "address", judged, identity=identity,
        submitter="Ada L", cutoff=Cutoff(dt.date(2025, 3, 15), "stated"), candidates=40,
        hub="org/ratio@" + "b" * 40, **kw,
    )  # fmt: skip


def test_an_entry_made_by_a_run_is_a_record_that_writes_and_reads_back_to_the_same_bytes(tmp_path):
    """``leaderboard_entry`` makes the record itself; its document, written, read back (with the board's
    checks) and written again, is the same file, and the record read is the record made."""
    entry = _full_entry()
    assert (
        isinstance(entry, Entry)
        and entry.clean is True
        and entry.per_query["address"].gold_rank == (1, 3, 0, 12)
    )
    write_json(tmp_path / "made.json", entry.to_json())
    made = (tmp_path / "made.json").read_bytes()
    again = Entry.from_json(json.loads(made))
    assert again == entry
    write_json(tmp_path / "again.json", again.to_json())
    assert (tmp_path / "again.json").read_bytes() == made
    doc = json.loads(made)
    assert (
        doc["model_meta"]["license"] is None and doc["model_meta"]["parameters"] == 22_000_000
    )  # nulls kept
    # ``ratio score --json`` prints the document unsorted: its keys in the order the scorer has always written
    assert list(entry.to_json()) == [
        "schema_version", "model", "dataset", "split", "code_version", "main_score", "results", "n_queries",
        "model_fingerprint", "precision", "trained_from", "training_data_cutoff", "training_data_cutoff_source",
        "clean", "per_query", "n_candidates", "submitter", "tuned_for", "judged", "model_meta",
    ]  # fmt: skip


def test_a_sample_entry_is_a_record_its_checks_refuse_for_the_board():
    """A ``--sample`` run is a record like any other (written with its sample block), never a board entry."""
    entry = _full_entry(sample=Sample(2, 7))
    assert entry.to_json()["sample"] == {"queries_per_relation": 2, "seed": 7}
    with pytest.raises(SubmissionError, match="sample of 2 queries"):
        validate_submission(entry.to_json())
