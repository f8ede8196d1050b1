"""The training evaluator scores exactly what ``ratio score`` scores on the same split."""

from __future__ import annotations

from sentence_transformers import SentenceTransformer

from ratio_bench.evaluation.evaluate import load_split, score
from ratio_bench.evaluation.metrics import evaluate_run
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
