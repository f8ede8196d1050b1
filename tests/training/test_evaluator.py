"""The training evaluator (one class for a specialist and a unified model) scores exactly what ``ratio score``
scores on the same split, and reports the figures the two former evaluators reported."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from sentence_transformers import SentenceTransformer

from ratio_bench.evaluation.scoring.evaluate import load_split, score
from ratio_bench.evaluation.scoring.metrics import evaluate_run
from ratio_bench.retrieval import encoder as encoder_module
from ratio_bench.retrieval.cache import EmbeddingCache
from ratio_bench.retrieval.registry import ModelSetup
from ratio_bench.retrieval.search import exact_search
from ratio_bench.training.evaluator import RetrievalEvaluator

PROMPTS = {"query": "query: ", "document": "document: "}


def test_evaluator_equals_the_scorer(tmp_path, tiny_models, tiny_release):
    data = load_split(tiny_release, "validation", ["address"])
    qids, _, golds = data.queries["address"]
    evaluator = RetrievalEvaluator(
        data.corpus_ids, data.corpus_texts, data.queries, PROMPTS, batch_size=8, show_progress_bar=False
    )
    model = SentenceTransformer(str(tiny_models["bert"]), device="cpu")
    ours = evaluator(model)
    setup = ModelSetup("tiny:generic", "dense", str(tiny_models["bert"]), "generic", *PROMPTS.values())
    theirs = score(setup, data, cache=EmbeddingCache(tmp_path / "cache", progress=False), keep_runs=True)
    assert ours["validation_mrr_at_10"] == theirs.metrics["address"]["mrr_at_10"]
    assert ours["validation_recall_at_10"] == theirs.metrics["address"]["recall_at_10"]
    run = evaluator.run(model)
    assert run == {q: ranked[:10] for q, ranked in theirs.runs["address"].items()}
    assert (
        evaluate_run(run, {q: {g} for q, g in zip(qids, golds, strict=True)})["mrr_at_10"]
        == ours["validation_mrr_at_10"]
    )
    assert evaluator.primary_metric == "validation_mrr_at_10"


def _old_validation(model, corpus_texts, corpus_ids, queries, prompts):
    """What the evaluators computed before they went through the engine: their own encode and search."""

    def encode(texts, prompt):
        return model.encode(texts, prompt=prompt or None, batch_size=8, normalize_embeddings=True)

    corpus = encode(corpus_texts, prompts["document"])
    out = {}
    for rel, (qids, texts, golds) in queries.items():
        _, idx = exact_search(np.asarray(corpus), np.asarray(encode(texts, prompts[rel])), 10)
        run = {q: [corpus_ids[j] for j in row] for q, row in zip(qids, idx, strict=True)}
        out[rel] = evaluate_run(run, {q: {g} for q, g in zip(qids, golds, strict=True)}, (1, 10))
    return out


def _former_specialist_figures(old: dict) -> dict[str, float]:
    """What the former single-relation ``RetrievalEvaluator`` reported: its relation's three figures."""
    return {f"validation_{key}": old[key] for key in ("mrr_at_10", "recall_at_10", "mrr_at_1")}


def _former_unified_figures(old: dict[str, dict]) -> dict[str, float]:
    """What the former ``UnifiedEvaluator`` reported: each relation's figures, then their mean (the selector)."""
    keys = ("mrr_at_10", "recall_at_10", "mrr_at_1")
    scores = {f"{rel}_{key}": old[rel][key] for rel in old for key in keys}
    scores |= {key: float(np.mean([old[rel][key] for rel in old])) for key in keys}
    return {f"validation_{key}": value for key, value in scores.items()}


def test_validation_figures_are_those_of_the_old_evaluators(tiny_models, tiny_release):
    """One evaluator for both training paths, scored through the engine's rank: for a specialist and for a
    unified model it reports exactly the figures (names, order and values, to the last digit) the two former
    evaluators reported from their own encode-and-search, so checkpoint selection picks the same step."""
    data = load_split(tiny_release, "validation", ["address"])
    rels = ["address", "specify"]  # the tiny release validates Address only: its queries twice, two prompts
    data.queries["specify"] = data.queries["address"]
    model = SentenceTransformer(str(tiny_models["bert"]), device="cpu")
    prompts = {"document": "document: ", **{r: f"{r}: " for r in rels}}
    old = _old_validation(model, data.corpus_texts, data.corpus_ids, data.queries, prompts)
    specialist = RetrievalEvaluator(
        data.corpus_ids,
        data.corpus_texts,
        {"address": data.queries["address"]},
        {"query": "address: ", "document": "document: "},
        batch_size=8,
    )
    single = specialist(model)
    assert list(single.items()) == list(_former_specialist_figures(old["address"]).items())
    unified = RetrievalEvaluator(
        data.corpus_ids, data.corpus_texts, {r: data.queries[r] for r in rels}, prompts, batch_size=8
    )
    figures = unified(model)
    assert list(figures.items()) == list(_former_unified_figures({r: old[r] for r in rels}).items())
    assert specialist.primary_metric == unified.primary_metric == "validation_mrr_at_10"
    assert figures["validation_mrr_at_10"] == (old["address"]["mrr_at_10"] + old["specify"]["mrr_at_10"]) / 2
    assert unified.query_ids == data.queries["address"].ids * 2
    with pytest.raises(ValueError, match="name the relation"):
        unified.run(model)  # several relations: the caller names one
    assert unified.run(model, "address") == specialist.run(model)  # same queries, same prompt, same run


def test_validation_uses_the_model_in_memory_and_no_cache(tiny_models, tiny_release, tmp_path, monkeypatch):
    """The weights the trainer holds are scored as they are now (changed weights, changed figures: nothing is
    loaded from disk or served from the embedding cache), and no cache is written."""
    monkeypatch.setenv("RATIO_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(encoder_module.DenseEncoder, "load", None)  # loading from disk would fail
    checked = []  # the engine's encoder checks every pass's vectors (constant, non-finite: refused)
    check = encoder_module.DenseEncoder._check
    monkeypatch.setattr(
        encoder_module.DenseEncoder, "_check", lambda self, *a: checked.append(a[-1]) or check(self, *a)
    )
    data = load_split(tiny_release, "validation", ["address"])
    evaluator = RetrievalEvaluator(data.corpus_ids, data.corpus_texts, data.queries, PROMPTS, 8)
    model = SentenceTransformer(str(tiny_models["bert"]), device="cpu")
    before = evaluator.run(model)
    with torch.no_grad():
        for p in model.parameters():
            p.add_(torch.randn_like(p) * 0.5, alpha=1.0)
    after = evaluator.run(model)
    assert before != after
    assert checked == ["document", "query"] * 2
    assert not (tmp_path / "cache").exists()
