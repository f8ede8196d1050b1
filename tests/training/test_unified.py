"""Unified training (``relation: all``): balanced draws, one-relation batches, relation prompts saved."""

from __future__ import annotations

import json

import numpy as np
import pytest
import yaml
from tests.helpers.training import REGISTERED, write_release

from ratio_bench.core.relations import RELATIONS
from ratio_bench.training.config import TrainingConfigError, load_config
from ratio_bench.training.run import train
from ratio_bench.training.sampler import text_ids
from ratio_bench.training.unified import RelationBatchSampler, draw_counts, draw_rows, relation_shares


def test_temperature_shares_and_counts():
    sizes = {"address": 6458, "broaden": 292, "specify": 34001}
    assert relation_shares(sizes, 1.0)["broaden"] == pytest.approx(292 / sum(sizes.values()))
    shares = relation_shares(sizes, 3.0)
    assert 0.11 < shares["broaden"] < 0.13 and shares["specify"] < 0.6
    assert relation_shares(sizes, 1e9)["broaden"] == pytest.approx(1 / 3)
    counts = draw_counts(sizes, 6000, 3.0)
    assert sum(counts.values()) == 6000
    rows = draw_rows(292, counts["broaden"], np.random.default_rng(0))
    assert np.bincount(rows).max() - np.bincount(rows).min() <= 1  # repeated as evenly as possible


def test_batches_hold_one_relation_and_no_text_twice():
    from datasets import Dataset

    queries = [f"q{i % 30}" for i in range(90)]
    golds = [f"g{i % 45}" for i in range(90)]
    labels = np.array([i % 3 for i in range(90)])
    sampler = RelationBatchSampler(
        Dataset.from_dict({"query": queries, "document": golds}),
        batch_size=4,
        drop_last=False,
        texts=text_ids([queries, golds]),
        relations=labels,
        seed=1,
    )
    batches = list(sampler)
    assert sorted(i for b in batches for i in b) == list(range(90))
    for b in batches:
        assert len(set(labels[b])) == 1
        assert len({queries[i] for i in b}) == len(b) and len({golds[i] for i in b}) == len(b)


def _config(path, tiny_models, **extra):
    raw = {
        "backbone": REGISTERED["bert"],
        "weights": str(tiny_models["bert"]),
        "setup": "generic",
        "relation": "all",
        "eval_batch_size": 16,
        "max_train_pairs": 60,
        "trials": [{"epochs": 1, "batch_size": 8, "learning_rate": 1e-3}],
        **extra,
    }
    path.write_text(yaml.safe_dump(raw), encoding="utf-8")
    return path


def test_config_defaults_and_errors(tmp_path, tiny_models):
    config = load_config(_config(tmp_path / "u.yaml", tiny_models))
    assert config.relations == RELATIONS and config.temperature == 3.0 and config.negatives == "within"
    assert config.instructions == {r: f"{r}: " for r in RELATIONS}
    with pytest.raises(TrainingConfigError, match="instructions"):
        load_config(_config(tmp_path / "b.yaml", tiny_models, instructions={"adress": "x"}))
    with pytest.raises(TrainingConfigError, match="negatives"):
        load_config(_config(tmp_path / "c.yaml", tiny_models, negatives="mixed"))
    with pytest.raises(TrainingConfigError, match="only for a unified"):
        load_config(_config(tmp_path / "d.yaml", tiny_models, relation="address", temperature=2))


@pytest.mark.parametrize("negatives", ["within", "across"])
def test_unified_train_saves_relation_prompts(tmp_path, tiny_models, negatives):
    release = write_release(tmp_path / "release", n_train=20, n_val=6, relations=RELATIONS)
    instructions = {"address": "solve: ", "broaden": "generalise: ", "specify": "refine: "}
    config = load_config(
        _config(tmp_path / "u.yaml", tiny_models, negatives=negatives, instructions=instructions)
    )
    summary = train(config, release, tmp_path / "out", show_progress=False)
    saved = json.loads((tmp_path / "out" / "best" / "config_sentence_transformers.json").read_text())
    assert saved["prompts"] == {**instructions, "document": "document: "}
    assert summary["unified"]["negatives"] == negatives
    assert summary["data"]["train_pairs_used"] == 60
    assert summary["data"]["validation_queries"] == 18  # every relation's validation queries
    epoch = summary["trials"][0]["epochs"][0]
    assert epoch["mrr_at_10"] == pytest.approx(np.mean([epoch[f"{r}_mrr_at_10"] for r in RELATIONS]))


def test_score_applies_each_relations_saved_instruction(tmp_path, tiny_models):
    from ratio_bench.evaluation.scoring.evaluate import load_split, score
    from ratio_bench.retrieval.cache import EmbeddingCache
    from ratio_bench.retrieval.registry import resolve

    release = write_release(tmp_path / "release", n_train=20, n_val=6, relations=RELATIONS)
    config = load_config(_config(tmp_path / "u.yaml", tiny_models))
    train(config, release, tmp_path / "out", show_progress=False)
    setup = resolve(str(tmp_path / "out" / "best"))
    assert setup.setup == "saved" and setup.document_prompt == "document: "
    assert {r: setup.prompt_for(r) for r in RELATIONS} == config.instructions
    cache = EmbeddingCache(tmp_path / "cache")
    result = score(setup, load_split(release, "validation"), cache)
    assert set(result.metrics) == set(RELATIONS)
    assert result.encode_calls == 4  # the corpus once, then each relation's queries under its own prompt
