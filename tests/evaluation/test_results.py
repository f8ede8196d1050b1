"""Leaderboard row names: tuned copies of one backbone never share a name; entries say which model they scored."""

from __future__ import annotations

import json
from types import SimpleNamespace

from ratio_bench.evaluation.results import entry_label, leaderboard_entry, model_identity, validate_submission
from ratio_bench.retrieval.registry import TRAINING_SCHEMA, TRAINING_SUMMARY, ModelSetup


def test_row_names_tell_baseline_specialists_and_unified_apart():
    names = [
        entry_label({"model": "all-MiniLM-L6-v2:generic"}),
        *(
            entry_label({"model": "all-MiniLM-L6-v2 generic-Tuned", "tuned_for": r})
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
    )
    manifest = {"name": "ratio", "version": "1.0"}
    entry = leaderboard_entry(result, manifest, "test", identity=model_identity(setup), submitter="Ada L")
    validate_submission(entry)
    assert entry["trained_from"] == {"config": "smoke.yaml", "config_sha256": "3" * 64}
    assert entry["submitter"] == "Ada L" and len(entry["model_fingerprint"]) == 64
    (best / "README.md").write_text("a card")  # rendering the card does not change the model's identity
    assert model_identity(setup)["model_fingerprint"] == entry["model_fingerprint"]
    (best / "model.safetensors").write_bytes(b"other weights")
    assert model_identity(setup)["model_fingerprint"] != entry["model_fingerprint"]
