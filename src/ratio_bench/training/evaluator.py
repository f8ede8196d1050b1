"""Validation MRR@10 during training, computed exactly as the leaderboard computes it.

The evaluator encodes the validation partition's whole shared candidate corpus (documents with the document
prompt) and the relation's validation queries (query prompt), ranks with the project's exact search and
scores with :func:`ratio_bench.evaluation.metrics.evaluate_run`: no second implementation of either.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

import numpy as np
from sentence_transformers.base.evaluation import BaseEvaluator

from ratio_bench.evaluation.metrics import evaluate_run
from ratio_bench.retrieval.search import exact_search

KS = (1, 10)
PRIMARY = "mrr_at_10"


def encode_for_validation(
    model, texts: list[str], prompt: str, batch_size: int, progress: bool
) -> np.ndarray:
    """Normalised vectors as the leaderboard's exact search expects them (shared by every validation pass)."""
    return model.encode(
        texts,
        prompt=prompt or None,
        batch_size=batch_size,
        normalize_embeddings=True,
        convert_to_numpy=True,
        show_progress_bar=progress,
    )


class RetrievalEvaluator(BaseEvaluator):
    """A sentence-transformers evaluator (``BaseEvaluator``, formerly ``SentenceEvaluator``) over one split."""

    def __init__(
        self,
        corpus_ids: Sequence[str],
        corpus_texts: Sequence[str],
        query_ids: Sequence[str],
        query_texts: Sequence[str],
        gold_ids: Sequence[str],
        prompts: dict[str, str],
        batch_size: int = 64,
        name: str = "validation",
        show_progress_bar: bool = True,
    ):
        super().__init__()
        self.corpus_ids, self.corpus_texts = list(corpus_ids), list(corpus_texts)
        self.query_ids, self.query_texts = list(query_ids), list(query_texts)
        self.qrels = {q: {g} for q, g in zip(query_ids, gold_ids, strict=True)}
        self.prompts = prompts
        self.batch_size = batch_size
        self.name = name
        self.show_progress_bar = show_progress_bar
        self.primary_metric = PRIMARY
        self.seconds = 0.0  # time spent evaluating, so training throughput can leave it out

    def _encode(self, model, texts: list[str], prompt: str) -> np.ndarray:
        return encode_for_validation(model, texts, prompt, self.batch_size, self.show_progress_bar)

    def run(self, model) -> dict[str, list[str]]:
        """Top-10 corpus ids per validation query."""
        corpus = self._encode(model, self.corpus_texts, self.prompts.get("document", ""))
        queries = self._encode(model, self.query_texts, self.prompts.get("query", ""))
        _, idx = exact_search(corpus, queries, max(KS))
        return {q: [self.corpus_ids[j] for j in row] for q, row in zip(self.query_ids, idx, strict=True)}

    def __call__(
        self, model, output_path: str | None = None, epoch: int = -1, steps: int = -1
    ) -> dict[str, float]:
        start = time.perf_counter()
        metrics = evaluate_run(self.run(model), self.qrels, KS)
        self.seconds += time.perf_counter() - start
        scores = {key: metrics[key] for key in (PRIMARY, "recall_at_10", "mrr_at_1")}
        scores = self.prefix_name_to_metrics(scores, self.name)
        self.store_metrics_in_model_card_data(model, scores, epoch, steps)
        return scores
