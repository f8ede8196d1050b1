"""Validation MRR@10 during training, scored by the leaderboard's own engine functions: one evaluator for a
specialist (one relation) and a unified model (several).

sentence-transformers has one evaluator per kind of evaluation (``NanoBEIREvaluator`` scores many datasets, one
figure each and their mean); so does Ratio. :class:`RetrievalEvaluator` validates every relation it is given
against one shared candidate corpus, encoded once per pass. With one relation (``ratio train`` on a specialist
config) it reports that relation's figures as ``validation_mrr_at_10`` and so on; with several (``relation:
all``) it reports each relation's as ``validation_<relation>_mrr_at_10`` and their mean as
``validation_mrr_at_10``, which selects the checkpoint either way.

The evaluator wraps the model object the trainer holds (weights in memory, never re-loaded from disk) as the
engine's :class:`~ratio_bench.retrieval.encoder.DenseEncoder` inside a
:class:`~ratio_bench.retrieval.retriever.DenseRetriever`, and ranks and scores with
:func:`ratio_bench.evaluation.scoring.evaluate.rank`, the function :func:`ratio_bench.evaluation.scoring.engine.score` scores
every split with: the same prompts (passed even when empty), the same normalised float32 vectors, the same exact
search, the same metrics and the same refusal of constant or non-finite embeddings. No second implementation of
any of them.

The content-addressed embedding cache is *bypassed* (the retriever gets no cache) rather than keyed by a
per-step fingerprint: the weights change at every optimiser step, so a vector written at one evaluation could
never be read at another, and each pass would only append the whole validation corpus to the user's cache as
garbage. Without a cache nothing stale can be served, whatever the fingerprint says; the encoder's fingerprint
(``in-training:<object id>``) is a label only.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence

import numpy as np
from sentence_transformers.base.evaluation import BaseEvaluator

from ratio_bench.evaluation.scoring.evaluate import Queries, ScoreResult, SplitData, rank
from ratio_bench.retrieval.encoder import DenseEncoder
from ratio_bench.retrieval.retriever import DenseRetriever

KS = (1, 10)
PRIMARY = "mrr_at_10"
REPORTED = (PRIMARY, "recall_at_10", "mrr_at_1")


def in_memory_retriever(model, prompts: dict[str, str], batch_size: int) -> DenseRetriever:
    """The engine's dense retriever over ``model`` as it is now (no load, no cache: see the module's note).

    ``prompts`` holds ``document``, and either ``query`` (one relation) or one query prompt per relation."""
    encoder = DenseEncoder(model, f"in-training:{id(model)}", batch_size)
    per_move = {k: v for k, v in prompts.items() if k not in ("query", "document")}
    return DenseRetriever(
        encoder, "validation", prompts.get("document", ""), prompts.get("query", ""), per_move, cache=None
    )


def validate(
    model,
    corpus: tuple[list[str], list[str]],
    queries: dict[str, Queries],
    prompts: dict[str, str],
    batch_size: int,
) -> ScoreResult:
    """Every relation of ``queries`` against the shared ``corpus`` (ids, texts), scored by the engine's ``rank``
    (the corpus encoded once per pass, each relation's queries under its prompt)."""
    data = SplitData(corpus[0], corpus[1], [""] * len(corpus[0]), queries, {})
    return rank(in_memory_retriever(model, prompts, batch_size), "validation", data, None, KS, keep_runs=True)


class RetrievalEvaluator(BaseEvaluator):
    """A sentence-transformers evaluator (``BaseEvaluator``, formerly ``SentenceEvaluator``) over one split.

    ``queries`` maps each relation to its (query ids, texts, gold ids); ``prompts`` holds ``document`` and either
    ``query`` (a specialist's one query prompt) or one query prompt per relation (a unified model's instructions).
    """

    def __init__(
        self,
        corpus_ids: Sequence[str],
        corpus_texts: Sequence[str],
        queries: Mapping[str, Sequence[Sequence[str]]],
        prompts: dict[str, str],
        batch_size: int = 64,
        name: str = "validation",
        show_progress_bar: bool = True,
    ):
        super().__init__()
        if not queries:
            raise ValueError("a validation evaluator needs the queries of at least one relation")
        self.corpus_ids, self.corpus_texts = list(corpus_ids), list(corpus_texts)
        self.queries = {rel: Queries(*(list(column) for column in q)) for rel, q in queries.items()}
        self.query_ids = [qid for q in self.queries.values() for qid in q.ids]
        self.prompts = prompts
        self.batch_size = batch_size
        self.name = name
        self.show_progress_bar = show_progress_bar  # kept for callers; the engine's encoder shows no bar here
        self.primary_metric = PRIMARY
        self.seconds = 0.0  # time spent evaluating, so training throughput can leave it out

    def _result(self, model) -> ScoreResult:
        return validate(
            model, (self.corpus_ids, self.corpus_texts), self.queries, self.prompts, self.batch_size
        )

    def run(self, model, relation: str | None = None) -> dict[str, list[str]]:
        """Top-10 corpus ids per validation query of ``relation`` (default: the one relation validated)."""
        if relation is None:
            if len(self.queries) != 1:
                raise ValueError(
                    f"validating {', '.join(self.queries)}: name the relation whose run is wanted"
                )
            (relation,) = self.queries
        return self._result(model).runs[relation]

    def figures(self, result: ScoreResult) -> dict[str, float]:
        """The reported figures (unprefixed): one relation's own, or each relation's and their mean."""
        if len(self.queries) == 1:
            (metrics,) = (result.metrics[rel] for rel in self.queries)
            return {key: metrics[key] for key in REPORTED}
        scores = {f"{rel}_{key}": result.metrics[rel][key] for rel in self.queries for key in REPORTED}
        for key in REPORTED:  # the mean over relations selects the model
            scores[key] = float(np.mean([scores[f"{rel}_{key}"] for rel in self.queries]))
        return scores

    def __call__(
        self, model, output_path: str | None = None, epoch: int = -1, steps: int = -1
    ) -> dict[str, float]:
        start = time.perf_counter()
        scores = self.figures(self._result(model))
        self.seconds += time.perf_counter() - start
        scores = self.prefix_name_to_metrics(scores, self.name)
        self.store_metrics_in_model_card_data(model, scores, epoch, steps)
        return scores
