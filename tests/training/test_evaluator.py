"""The training evaluator scores exactly what ``ratio score`` scores on the same split."""

from __future__ import annotations

from sentence_transformers import SentenceTransformer

from ratio_bench.evaluation.scoring.evaluate import load_split, score
from ratio_bench.evaluation.scoring.metrics import evaluate_run
from ratio_bench.retrieval.cache import EmbeddingCache
from ratio_bench.retrieval.registry import ModelSetup
from ratio_bench.training.evaluator import RetrievalEvaluator

PROMPTS = {"query": "query: ", "document": "document: "}


def test_evaluator_equals_the_scorer(tmp_path, tiny_models, tiny_release):
    data = load_split(tiny_release, "validation", ["address"])
    qids, texts, golds = data.queries["address"]
    evaluator = RetrievalEvaluator(
        data.corpus_ids, data.corpus_texts, qids, texts, golds, PROMPTS, batch_size=8, show_progress_bar=False
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
    import numpy as np

    from ratio_bench.retrieval.search import exact_search

    def encode(texts, prompt):
        return model.encode(texts, prompt=prompt or None, batch_size=8, normalize_embeddings=True)

    corpus = encode(corpus_texts, prompts["document"])
    out = {}
    for rel, (qids, texts, golds) in queries.items():
        _, idx = exact_search(np.asarray(corpus), np.asarray(encode(texts, prompts[rel])), 10)
        run = {q: [corpus_ids[j] for j in row] for q, row in zip(qids, idx, strict=True)}
        out[rel] = evaluate_run(run, {q: {g} for q, g in zip(qids, golds, strict=True)}, (1, 10))
    return out


def test_validation_figures_are_those_of_the_old_evaluators(tiny_models, tiny_release):
    """Scored through the engine's rank, the single-relation and unified evaluators give the figures their own
    encode-and-search gave before, to the last digit."""
    from ratio_bench.training.unified import UnifiedEvaluator

    data = load_split(tiny_release, "validation", ["address"])
    rels = ["address", "specify"]  # the tiny release validates Address only: its queries twice, two prompts
    data.queries["specify"] = data.queries["address"]
    model = SentenceTransformer(str(tiny_models["bert"]), device="cpu")
    prompts = {"document": "document: ", **{r: f"{r}: " for r in rels}}
    old = _old_validation(model, data.corpus_texts, data.corpus_ids, data.queries, prompts)
    qids, texts, golds = data.queries["address"]
    single = RetrievalEvaluator(
        data.corpus_ids,
        data.corpus_texts,
        qids,
        texts,
        golds,
        {"query": "address: ", "document": "document: "},
        batch_size=8,
    )(model)
    assert single["validation_mrr_at_10"] == old["address"]["mrr_at_10"]
    assert single["validation_recall_at_10"] == old["address"]["recall_at_10"]
    unified = UnifiedEvaluator(
        data.corpus_ids, data.corpus_texts, {r: tuple(data.queries[r]) for r in rels}, prompts, batch_size=8
    )(model)
    for rel in rels:
        assert unified[f"validation_{rel}_mrr_at_10"] == old[rel]["mrr_at_10"]
        assert unified[f"validation_{rel}_mrr_at_1"] == old[rel]["mrr_at_1"]


def test_validation_uses_the_model_in_memory_and_no_cache(tiny_models, tiny_release, tmp_path, monkeypatch):
    """The weights the trainer holds are scored as they are now (changed weights, changed figures: nothing is
    loaded from disk or served from the embedding cache), and no cache is written."""
    import torch

    from ratio_bench.retrieval import encoder as encoder_module

    monkeypatch.setenv("RATIO_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(encoder_module.DenseEncoder, "load", None)  # loading from disk would fail
    checked = []  # the engine's encoder checks every pass's vectors (constant, non-finite: refused)
    check = encoder_module.DenseEncoder._check
    monkeypatch.setattr(
        encoder_module.DenseEncoder, "_check", lambda self, *a: checked.append(a[-1]) or check(self, *a)
    )
    data = load_split(tiny_release, "validation", ["address"])
    qids, texts, golds = data.queries["address"]
    evaluator = RetrievalEvaluator(data.corpus_ids, data.corpus_texts, qids, texts, golds, PROMPTS, 8)
    model = SentenceTransformer(str(tiny_models["bert"]), device="cpu")
    before = evaluator.run(model)
    with torch.no_grad():
        for p in model.parameters():
            p.add_(torch.randn_like(p) * 0.5, alpha=1.0)
    after = evaluator.run(model)
    assert before != after
    assert checked == ["document", "query"] * 2
    assert not (tmp_path / "cache").exists()
