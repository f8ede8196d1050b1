"""Model cards rendered from a tiny training run: our facts, the Hub's model-index, safe text, stable bytes."""

from __future__ import annotations

import json

import pytest
import yaml
from tests.helpers.cli import assert_user_error, run_ratio

from ratio_bench.evaluation.scoring.results import model_fingerprint
from ratio_bench.training.card import CardError, model_name, render_card, write_card


def _front(card: str) -> dict:
    return yaml.safe_load(card.split("---\n")[1])


def test_card_from_summary_has_our_facts_and_model_index(tuned_folder):
    card = write_card(tuned_folder).read_text(encoding="utf-8")
    summary = json.loads((tuned_folder / "summary.json").read_text())
    front = _front(card)
    (index,) = front["model-index"]
    assert index["name"] == model_name(summary) == "ratio-address-all-mpnet-base-v2-generic"
    (val,) = index["results"]
    assert val["task"]["type"] == "retrieval" and val["dataset"]["type"] == "ratio/address"
    assert val["dataset"]["split"] == "validation"
    mrr = {m["type"]: m["value"] for m in val["metrics"]}
    assert mrr["mrr_at_10"] == round(summary["chosen"]["mrr_at_10"], 6) and "recall_at_10" in mrr
    assert summary["dataset"]["manifest_sha256"] in card and "1 / 1" in card  # trials finished/configured
    assert '- `query`: `"query: "`' in card and "48 / 48" in card  # prompts; train pairs used / available
    assert "Full Model Architecture" in card and "source_sentence" not in card  # ST details, no widget
    # the trial's rationale is escaped: no HTML, no extra table cell
    assert "<b>" not in card and "tiny \\| &lt;b&gt;probe&lt;/b&gt;" in card
    # re-rendering over our own card keeps the sentence-transformers section and the same bytes
    assert render_card(tuned_folder) == card


def test_card_with_test_results_and_the_release_licence(tuned_folder, tmp_path):
    manifest = json.loads((tuned_folder.parent / "release" / "manifest.json").read_text())
    summary = json.loads((tuned_folder / "summary.json").read_text())
    entry = {
        "schema_version": 1,
        "model": "all-mpnet-base-v2 generic-Tuned",
        "dataset": {"name": "tiny", "version": "0.0.1", "manifest_sha256": "a" * 64},
        "split": "test",
        "main_score": "mrr_at_10",
        "results": {
            r: {"recall_at_1": 0.1, "recall_at_10": 0.5, "mrr_at_10": v, "mrr_at_100": 0.3}
            for r, v in (("address", 0.25), ("specify", 0.125))
        },
        "n_queries": {"address": 12, "specify": 7},
        "model_fingerprint": model_fingerprint(tuned_folder / "best"),
    }
    results = tmp_path / "test.json"
    results.write_text(json.dumps(entry))
    card = render_card(tuned_folder, [results], repo_id="fixture-org/x")
    splits = [
        (r["dataset"]["type"], r["dataset"]["split"]) for r in _front(card)["model-index"][0]["results"]
    ]
    assert splits == [("ratio/address", "validation"), ("ratio/address", "test"), ("ratio/specify", "test")]
    assert "| test | address (tuned for) | 12 | 25.00 | 50.00 |" in card
    assert 'SentenceTransformer("fixture-org/x")' in card
    assert manifest["config"]["release"]["license"] == "development use only"
    assert "*development use only*" in card and "does **not** allow publishing" in card
    assert summary["dataset"]["path"] not in card  # no local paths
    # results given to the command stay on the card when it is re-rendered without them (e.g. by publishing)
    write_card(tuned_folder, [results], repo_id="fixture-org/x")
    assert render_card(tuned_folder, repo_id="fixture-org/x") == card
    (tuned_folder / "card-results.json").unlink()
    other = tmp_path / "other.json"
    other.write_text(json.dumps({**entry, "dataset": {**entry["dataset"], "version": "9"}}))
    with pytest.raises(CardError, match="--results .*other.json: scored on tiny 9"):
        render_card(tuned_folder, [other])


def test_card_refuses_another_models_results(tuned_folder, tmp_path):
    """Results of other weights (an untuned backbone, another run) never go on a card; one line names both."""
    entry = {
        "schema_version": 1,
        "model": "all-MiniLM-L6-v2:none",
        "dataset": {"name": "tiny", "version": "0.0.1", "manifest_sha256": "a" * 64},
        "split": "test",
        "main_score": "mrr_at_10",
        "results": {
            "address": {"recall_at_1": 0.1, "recall_at_10": 0.5, "mrr_at_10": 0.2, "mrr_at_100": 0.3}
        },
    }
    ours = model_fingerprint(tuned_folder / "best")
    for name, fp in (("other.json", "b" * 64), ("legacy.json", None)):
        path = tmp_path / name
        path.write_text(json.dumps(entry | ({"model_fingerprint": fp} if fp else {})))
        run = run_ratio("train", "card", tuned_folder, "--results", path, timeout=120)
        line = assert_user_error(run, str(path), "all-MiniLM-L6-v2:none", ours[:16])
        assert (fp or "not recorded")[:16] in line
    # the card itself is no part of the fingerprint: re-rendering it keeps results of this model valid
    (tuned_folder / "best" / "README.md").write_text("edited", encoding="utf-8")
    assert model_fingerprint(tuned_folder / "best") == ours


def test_model_card_command(tuned_folder, tmp_path):
    run = run_ratio("model-card", tuned_folder, timeout=120)
    assert run.code == 0, run.err
    assert (tuned_folder / "best" / "README.md").read_text(encoding="utf-8").startswith("---\n")
    assert_user_error(run_ratio("model-card", tmp_path, timeout=120), str(tmp_path), "summary.json")


@pytest.mark.slow  # ~9 s (the card's facts are also checked from a summary); make test-all runs it
def test_ratio_train_writes_the_card(tuned_folder, tmp_path):
    config = tuned_folder.parent / "all-mpnet-base-v2-generic-address.yaml"
    out = tmp_path / "out"
    run = run_ratio(
        "train", "--config", config, "--dataset", tuned_folder.parent / "release", "--out", out, "--quiet"
    )
    assert run.code == 0, run.err
    card = (out / "best" / "README.md").read_text(encoding="utf-8")
    assert "ratio-model-card" in card and "does **not** allow publishing" in card
