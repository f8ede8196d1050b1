"""A tuned model is scored with its saved prompts and named like the spec's rows, next to the baselines."""

from __future__ import annotations

import json

import pytest
from tests.helpers.cli import run_ratio

from ratio_bench.evaluation.board.cells import entry_detail
from ratio_bench.evaluation.board.escaping import markdown_text
from ratio_bench.evaluation.board.leaderboard import load_board
from ratio_bench.evaluation.board.render.markdown import leaderboard_markdown
from ratio_bench.evaluation.entry.record import Entry
from ratio_bench.retrieval.registry import resolve


def test_a_training_folder_and_its_best_resolve_to_the_tuned_name(tuned_folder):
    for ref in (tuned_folder, tuned_folder / "best"):
        setup = resolve(str(ref))
        assert setup.name == "all-mpnet-base-v2 generic-Tuned" and setup.tuned_for == "address"
        assert (setup.setup, setup.query_prompt, setup.document_prompt) == ("saved", "query: ", "document: ")
    other = resolve(str(tuned_folder), "none")
    assert other.name == "all-mpnet-base-v2 generic-Tuned:none" and other.query_prompt == ""


def test_an_ablation_is_named_apart_from_its_setups_default(tuned_folder, tmp_path):
    """Two models of one backbone and setup, one trained with hard negatives, must not share a row name."""
    ablation = tmp_path / "ablation"
    ablation.mkdir()
    (ablation / "best").symlink_to(tuned_folder / "best")
    summary = json.loads((tuned_folder / "summary.json").read_text())
    summary["config"]["content"]["hard_negatives"] = "bm25"
    (ablation / "summary.json").write_text(json.dumps(summary))
    assert resolve(str(ablation)).name == "all-mpnet-base-v2 generic-Tuned (bm25 hard negatives)"
    assert resolve(str(tuned_folder)).name == "all-mpnet-base-v2 generic-Tuned"
    summary["config"]["content"] |= {"hard_negatives": "none", "relation": "all", "negatives": "across"}
    (ablation / "summary.json").write_text(json.dumps(summary))
    assert resolve(str(ablation)).name == "all-mpnet-base-v2 generic-Tuned (across-move negatives)"


@pytest.mark.slow  # make test-all (make test stays near 10 minutes)
def test_score_tuned_and_baseline_rows_on_one_leaderboard(tuned_folder, tiny_models, tmp_path):
    release = tuned_folder.parent / "release"
    summary = json.loads((tuned_folder / "summary.json").read_text())
    results = tmp_path / "results"
    common = ["--dataset", release, "--split", "validation", "--relations", "address"]
    for name, model in (("tuned", tuned_folder / "best"), ("baseline", tiny_models["bert"])):
        run = run_ratio(
            "score",
            "--model",
            model,
            *common,
            "--cache-dir",
            tmp_path / "c",
            "--out",
            results / f"{name}.json",
        )
        assert run.code == 0, run.err
    tuned = json.loads((results / "tuned.json").read_text())
    assert tuned["model"] == "all-mpnet-base-v2 generic-Tuned" and tuned["tuned_for"] == "address"
    # scored with the saved prompts: the validation MRR@10 training selected on
    assert tuned["results"]["address"]["mrr_at_10"] == pytest.approx(summary["chosen"]["mrr_at_10"], abs=1e-5)
    board = load_board(results)
    assert not board.rejected and len(board.releases[0].entries) == 2
    md = leaderboard_markdown(board)
    tuned_row = markdown_text("all-mpnet-base-v2 generic-Tuned [tuned for address]")
    # the model column tells the rows apart by their weights' fingerprints
    for row, path in ((tuned_row, "tuned.json"), (markdown_text("bert:none"), "baseline.json")):
        entry = Entry.from_json(json.loads((results / path).read_text()))
        assert f"| {row} | {markdown_text(entry_detail(entry))} | validation |" in md
    assert f"weights {tuned['model_fingerprint'][:8]}, config all-mpnet-base-v2-generic-address.yaml" in md


@pytest.mark.slow  # ~13 s (mteb end to end; the wheel check covers the loader); make test-all runs it
def test_the_mteb_path_scores_a_tuned_model_like_ours(tuned_folder, small_release, tmp_path):
    pytest.importorskip("mteb")
    entries = {}
    for via in ("ratio", "mteb"):
        out = tmp_path / f"{via}.json"
        run = run_ratio(
            "score", "--model", tuned_folder, "--dataset", small_release, "--relations", "address",
            "--via", via, "--cache-dir", tmp_path / "c", "--out", out,
        )  # fmt: skip
        assert run.code == 0, run.err
        entries[via] = json.loads(out.read_text())
    assert entries["mteb"]["model"] == "all-mpnet-base-v2 generic-Tuned (via mteb)"
    assert entries["mteb"]["tuned_for"] == entries["ratio"]["tuned_for"] == "address"
    ours, theirs = entries["ratio"]["results"]["address"], entries["mteb"]["results"]["address"]
    assert theirs["mrr_at_10"] == pytest.approx(ours["mrr_at_10"], abs=1e-4)
    assert not load_board(tmp_path / "mteb.json").rejected  # "(via mteb)" names are valid entries now
