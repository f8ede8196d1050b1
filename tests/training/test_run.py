"""``train`` end to end on tiny models: best epoch restored, best trial chosen, killed runs resumed."""

from __future__ import annotations

import json

import pytest
import torch
import yaml
from safetensors.torch import load_file
from sentence_transformers import SentenceTransformer
from tests.helpers.training import REGISTERED
from transformers import TrainerCallback

from ratio_bench.evaluation.scoring.evaluate import load_split, score
from ratio_bench.retrieval.cache import EmbeddingCache
from ratio_bench.retrieval.registry import ModelSetup
from ratio_bench.training.config import load_config
from ratio_bench.training.outputs import OutputError
from ratio_bench.training.run import choose, train, train_all


def _write(path, arch, tiny_models, trials, **extra):
    raw = {
        "backbone": REGISTERED[arch],
        "weights": str(tiny_models[arch]),
        "setup": "generic",
        "relation": "address",
        "eval_batch_size": 16,
        "trials": trials,
        **extra,
    }
    path.write_text(yaml.safe_dump(raw), encoding="utf-8")
    return path


class ScrambleLastEpoch(TrainerCallback):
    """Overwrite the weights with noise at the end of the final epoch, so that epoch validates worst."""

    def on_epoch_end(self, args, state, control, model=None, **kwargs):
        if round(state.epoch) == args.num_train_epochs:
            with torch.no_grad():
                for p in model.parameters():
                    p.normal_(0, 1)


class KillAfterFirstSave(TrainerCallback):
    def on_save(self, args, state, control, **kwargs):
        raise KeyboardInterrupt


def _weights(folder):
    return load_file(str(folder / "model.safetensors"))


def test_best_epoch_restored_and_best_trial_chosen(tmp_path, tiny_models, tiny_release):
    trials = [
        {"epochs": 2, "batch_size": 8, "learning_rate": 1e-3},
        {
            "epochs": 2,
            "batch_size": 8,
            "learning_rate": 3e-4,
            "freeze_ratio": 0.5,
            "rationale": "anti-overfit",
        },
    ]
    config = load_config(_write(tmp_path / "tiny-generic-address.yaml", "bert", tiny_models, trials))
    out = tmp_path / "out"
    summary = train(config, tiny_release, out, callbacks=[ScrambleLastEpoch()], show_progress=False)
    for result in summary["trials"]:
        first, last = result["epochs"]
        assert result["best_epoch"] == 1.0 and first["mrr_at_10"] > last["mrr_at_10"]
        # the saved model is epoch 1's, not the scrambled final weights: it re-scores epoch 1's MRR@10
        data = load_split(tiny_release, "validation", ["address"])
        folder = out / "trials" / str(result["trial"]) / "model"
        setup = ModelSetup("t", "dense", str(folder), "generic", "query: ", "document: ")
        rescored = score(setup, data, cache=EmbeddingCache(tmp_path / f"c{result['trial']}", progress=False))
        assert rescored.metrics["address"]["mrr_at_10"] == pytest.approx(first["mrr_at_10"], abs=1e-9)
    chosen = max(summary["trials"], key=lambda r: (r["best_mrr_at_10"], -r["trial"]))["trial"]
    assert summary["chosen"]["trial"] == chosen
    best, picked = _weights(out / "best"), _weights(out / "trials" / str(chosen) / "model")
    assert all(torch.equal(best[k], picked[k]) for k in picked)
    # freeze ratio .5: embeddings and layers 0-1 unchanged by training, layer 3 trained
    start, frozen_run = _weights(tiny_models["bert"]), _weights(out / "trials" / "1" / "model")
    assert torch.equal(
        start["embeddings.word_embeddings.weight"], frozen_run["embeddings.word_embeddings.weight"]
    )
    assert torch.equal(
        start["encoder.layer.1.output.dense.weight"], frozen_run["encoder.layer.1.output.dense.weight"]
    )
    assert not torch.equal(
        start["encoder.layer.3.output.dense.weight"], frozen_run["encoder.layer.3.output.dense.weight"]
    )
    # prompts saved with the model, no default prompt
    reloaded = SentenceTransformer(str(out / "best"), device="cpu")
    assert reloaded.prompts == {"query": "query: ", "document": "document: "}
    assert reloaded.default_prompt_name is None
    saved = json.loads((out / "summary.json").read_text())
    assert (
        saved["relation"] == "address" and saved["dataset"]["name"] == "tiny" and not saved["test_split_read"]
    )
    assert saved["data"]["max_seq_length"]["percentile"] == 99.9 and saved["data"]["train_pairs_used"] == 48


def test_choose_prefers_higher_mrr_then_lower_trial():
    results = [
        {"trial": 0, "best_mrr_at_10": 0.2, "best_epoch": 1},
        {"trial": 1, "best_mrr_at_10": 0.3, "best_epoch": 2},
    ]
    assert choose(results)["trial"] == 1
    results.append({"trial": 2, "best_mrr_at_10": 0.3, "best_epoch": 1})
    assert choose(results)["trial"] == 1 and "trial 0 0.2000" in choose(results)["reason"]


@pytest.mark.slow  # ~26 s (kills and resumes real training); make test-all runs it
def test_killed_trial_resumes_from_checkpoint_and_finished_trials_are_skipped(
    tmp_path, tiny_models, tiny_release
):
    trials = [
        {"epochs": 1, "batch_size": 8, "learning_rate": 1e-3},
        {"epochs": 2, "batch_size": 8, "learning_rate": 1e-3},
    ]
    config = load_config(_write(tmp_path / "tiny-generic-address.yaml", "bert", tiny_models, trials))
    out = tmp_path / "out"
    train(config, tiny_release, out, trial=0, show_progress=False)
    done = (out / "trials" / "0" / "result.json").read_text()
    with pytest.raises(KeyboardInterrupt):
        train(config, tiny_release, out, trial=1, callbacks=[KillAfterFirstSave()], show_progress=False)
    assert list((out / "trials" / "1" / "checkpoints").glob("checkpoint-*"))
    assert not (out / "trials" / "1" / "result.json").exists()
    summary = train(config, tiny_release, out, show_progress=False)
    assert (out / "trials" / "0" / "result.json").read_text() == done  # skipped, not retrained
    resumed = summary["trials"][1]
    assert resumed["resumed_from"] == "checkpoint-6" and len(resumed["epochs"]) == 2
    assert not (out / "trials" / "1" / "checkpoints").exists()
    # the resumed trial learned exactly what an uninterrupted one learns
    fresh = train(config, tiny_release, tmp_path / "fresh", trial=1, show_progress=False)["trials"][0]
    assert [e["mrr_at_10"] for e in fresh["epochs"]] == [e["mrr_at_10"] for e in resumed["epochs"]]
    a, b = _weights(out / "trials" / "1" / "model"), _weights(tmp_path / "fresh" / "trials" / "1" / "model")
    assert all(torch.allclose(a[k], b[k], atol=1e-6) for k in a)


@pytest.mark.parametrize("arch", ["modernbert", "qwen2"])
def test_train_all_on_tiny_modernbert_and_stella(tmp_path, tiny_models, tiny_release, arch):
    folder = tmp_path / "configs"
    folder.mkdir()
    trial = [{"epochs": 1, "batch_size": 8, "learning_rate": 1e-3, "freeze_ratio": 0.25}]
    _write(
        folder / f"{arch}-recommended-address.yaml",
        arch,
        tiny_models,
        trial,
        setup="recommended",
        bf16=True,  # as the spec configs ask; this CPU must train in fp32 and say so
        tf32=True,
    )
    out = tmp_path / "models"
    (summary,) = train_all(folder, tiny_release, out, show_progress=False)
    model = SentenceTransformer(str(out / f"{arch}-recommended-address" / "best"), device="cpu")
    assert model.prompts == summary["prompts"] and model.prompts["query"] != "query: "
    assert summary["trials"][0]["frozen_parameters"] > 0
    if not torch.cuda.is_available():
        assert summary["trials"][0]["precision"] == {"bf16": False, "tf32": False, "device": "cpu"}
    data = load_split(tiny_release, "validation", ["address"])
    setup = ModelSetup(
        arch,
        "dense",
        str(out / f"{arch}-recommended-address" / "best"),
        "recommended",
        model.prompts["query"],
        model.prompts["document"],
    )
    rescored = score(setup, data, cache=EmbeddingCache(tmp_path / "cache", progress=False))
    assert rescored.metrics["address"]["mrr_at_10"] == pytest.approx(summary["chosen"]["mrr_at_10"], abs=1e-6)
    mtime = (out / f"{arch}-recommended-address" / "summary.json").stat().st_mtime_ns
    train_all(folder, tiny_release, out, show_progress=False)  # complete: skipped
    assert (out / f"{arch}-recommended-address" / "summary.json").stat().st_mtime_ns == mtime


def test_foreign_or_other_runs_output_folder_refused(tmp_path, tiny_models, tiny_release):
    trials = [{"epochs": 1, "batch_size": 8, "learning_rate": 1e-3}]
    config = load_config(_write(tmp_path / "a.yaml", "bert", tiny_models, trials))
    user = tmp_path / "mine"
    user.mkdir()
    (user / "notes.txt").write_text("keep me")
    with pytest.raises(OutputError, match="not a ratio training output"):
        train(config, tiny_release, user, show_progress=False)
    assert (user / "notes.txt").read_text() == "keep me"
    train(config, tiny_release, tmp_path / "out", show_progress=False)
    other = load_config(
        _write(tmp_path / "a.yaml", "bert", tiny_models, [{**trials[0], "learning_rate": 1e-4}])
    )
    with pytest.raises(OutputError, match="config_sha256"):
        train(other, tiny_release, tmp_path / "out", show_progress=False)


def test_hard_negatives_train_as_a_third_column(tmp_path, tiny_models, tiny_release):
    trials = [{"epochs": 1, "batch_size": 8, "learning_rate": 1e-3}]
    config = load_config(_write(tmp_path / "h.yaml", "bert", tiny_models, trials, hard_negatives="bm25"))
    summary = train(config, tiny_release, tmp_path / "out", show_progress=False)
    assert summary["data"]["hard_negatives"] == "bm25" and summary["trials"][0]["epochs"]


def test_mini_batch_size_learns_what_the_full_batch_learns(tmp_path, tiny_models, tiny_release):
    """CachedMultipleNegativesRankingLoss in chunks of 4 learns what MNRL on the whole batch of 8 learns."""
    trials = [
        {"epochs": 1, "batch_size": 8, "learning_rate": 1e-3},
        {"epochs": 1, "batch_size": 8, "learning_rate": 1e-3, "mini_batch_size": 4},
    ]
    config = load_config(_write(tmp_path / "m.yaml", "bert", tiny_models, trials))
    train(config, tiny_release, tmp_path / "out", show_progress=False)
    a, b = (
        _weights(tmp_path / "out" / "trials" / "0" / "model"),
        _weights(tmp_path / "out" / "trials" / "1" / "model"),
    )
    start = _weights(tiny_models["bert"])
    # equal up to float noise (Adam rescales tiny gradient differences): < 1% of what training moved
    moved = torch.cat([(a[k] - start[k]).flatten() for k in a]).norm()
    assert torch.cat([(a[k] - b[k]).flatten() for k in a]).norm() < 0.01 * moved


def test_validation_sample_is_used_recorded_and_said_on_the_card(tmp_path, tiny_models, tiny_release):
    from ratio_bench.training.card import render_card
    from ratio_bench.training.data import load_validation

    whole = load_validation(tiny_release, "address")
    sample = {"queries": 1, "candidates": 3}
    drawn = load_validation(tiny_release, "address", sample, seed=13)
    (gold,) = drawn.queries["address"].golds
    assert len(drawn.queries["address"].ids) == 1 and len(drawn.corpus_ids) == 3 and gold in drawn.corpus_ids
    assert len(whole.corpus_ids) > 3 and set(drawn.corpus_ids) <= set(whole.corpus_ids)
    assert load_validation(tiny_release, "address", {"queries": 1}, seed=13).corpus_ids == whole.corpus_ids

    trials = [{"epochs": 1, "batch_size": 8, "learning_rate": 1e-3}]
    config = load_config(_write(tmp_path / "s.yaml", "bert", tiny_models, trials, validation_sample=sample))
    summary = train(config, tiny_release, tmp_path / "out", show_progress=False)
    assert summary["data"]["validation_sample"] == sample
    assert (summary["data"]["validation_queries"], summary["data"]["validation_candidates"]) == (1, 3)
    card = " ".join(render_card(tmp_path / "out").split())
    assert "a SAMPLE for a smoke run: 1 queries per relation, 3 sampled candidates" in card


def test_training_prints_our_bar_and_lines_not_the_trainers_dicts(tmp_path, tiny_models, tiny_release, capfd):
    trials = [{"epochs": 1, "batch_size": 8, "learning_rate": 1e-3}]
    config = load_config(_write(tmp_path / "p.yaml", "bert", tiny_models, trials))
    train(config, tiny_release, tmp_path / "out", show_progress=True)
    out, err = capfd.readouterr()
    assert "{'" not in out + err  # no raw log dicts (transformers' PrinterCallback / ProgressCallback)
    assert "p trial 0: epoch 1: validation MRR@10 " in out and "p trial 0: trained " in out
    assert "p trial 0: training: 100%" in err  # one labelled bar over the steps, with its ETA


def test_the_summary_the_card_and_scoring_carry_the_tuned_models_cutoff(tuned_folder):
    """The later of the backbone's (all-mpnet-base-v2: 2021) and the train partition's end, both recorded."""
    import datetime as dt

    from tests.training.conftest import TRAIN_END

    from ratio_bench.retrieval.registry import resolve
    from ratio_bench.training.card import render_card

    summary = json.loads((tuned_folder / "summary.json").read_text(encoding="utf-8"))
    assert summary["training_data_cutoff"] == TRAIN_END
    assert summary["training_data_cutoff_source"] == (
        f"the later of the backbone's cut-off (2021-12-31) and the train partition's end ({TRAIN_END})"
    )
    parts = summary["training_data_cutoffs"]
    assert parts["train_partition"] == {
        "training_data_cutoff": TRAIN_END,
        "training_data_cutoff_source": "train partition end of tiny 0.0.1 (config.splits.train.end)",
    }
    assert parts["backbone"]["training_data_cutoff"] == "2021-12-31"
    assert f"**Training-data cut-off:** {TRAIN_END} \\(the later of" in render_card(tuned_folder)
    assert resolve(str(tuned_folder)).cutoff.date == dt.date.fromisoformat(TRAIN_END)
