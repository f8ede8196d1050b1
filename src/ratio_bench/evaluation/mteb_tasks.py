"""MTEB retrieval tasks ``RatioAddress``, ``RatioBroaden`` and ``RatioSpecify``.

Each task reads a release through ``datasets`` (a local release folder or a Hub repo id, from the task's
``dataset_path``, default ``$RATIO_DATASET`` or ``ratio``): queries from the relation config, the shared corpus
from ``corpus`` and judgments from ``<relation>-qrels``. So ``mteb.evaluate(model, tasks=ratio_tasks())``
works with any MTEB model; ``ratio score --via mteb`` runs the same evaluation through mteb for comparison
(mteb encodes the shared corpus once per task, which is what ``ratio score`` avoids).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from ratio_bench.dataset.layout import corpus_split
from ratio_bench.errors import RatioError
from ratio_bench.evaluation.evaluate import ScoreResult, load_split
from ratio_bench.lexicon import RELATIONS
from ratio_bench.retrieval.registry import ModelSetup, check_model_folder, fingerprint

_DESCRIPTIONS = {
    "address": "Given a sentence stating a problem, retrieve a sentence from other papers with an approach or "
    "insight that can help address it.",
    "broaden": "Given a scientific statement, retrieve a sentence that reformulates it at a broader scope or "
    "greater generality.",
    "specify": "Given a scientific statement, retrieve a sentence that instantiates it through a concrete case, "
    "mechanism or example.",
}
_BIBTEX = (
    "@misc{ratio2026, title = {Ratio: A Benchmark for Retrieval Across Typed Ideation Operations in "
    "Scientific Literature}, year = {2026}}"
)


def _task_class(relation: str):
    from mteb.abstasks.retrieval import AbsTaskRetrieval
    from mteb.abstasks.retrieval_dataset_loaders import RetrievalSplitData
    from mteb.abstasks.task_metadata import TaskMetadata

    class RatioTask(AbsTaskRetrieval):
        metadata = TaskMetadata(
            name=f"Ratio{relation.capitalize()}",
            description=_DESCRIPTIONS[relation],
            reference="https://github.com/ratio-bench/ratio",
            dataset={"path": "ratio", "revision": "local"},
            type="Retrieval",
            category="t2t",
            modalities=["text"],
            eval_splits=["test"],
            eval_langs=["eng-Latn"],
            main_score="mrr_at_10",
            date=("2015-01-01", "2026-05-05"),
            domains=["Academic", "Written"],
            task_subtypes=[],
            license="not specified",
            annotations_creators="derived",
            dialect=[],
            sample_creation="found",
            bibtex_citation=_BIBTEX,
        )

        def __init__(
            self, dataset_path: str | None = None, splits: Sequence[str] | None = None, **kwargs: Any
        ):
            super().__init__(**kwargs)
            self.dataset_path = dataset_path or os.environ.get("RATIO_DATASET", "ratio")
            if splits:
                self.metadata = self.metadata.model_copy(update={"eval_splits": list(splits)})

        def load_data(self, num_proc: int | None = None, **kwargs: Any) -> None:
            if self.data_loaded:
                return
            from datasets import load_dataset

            self.dataset = {"default": {}}
            for split in self.metadata.eval_splits:
                queries = load_dataset(self.dataset_path, relation, split=split)
                corpus = load_dataset(self.dataset_path, "corpus", split=corpus_split(split))
                qrels = load_dataset(self.dataset_path, f"{relation}-qrels", split=split)
                relevant: dict[str, dict[str, int]] = {}
                for row in qrels:
                    relevant.setdefault(row["query-id"], {})[row["corpus-id"]] = int(row["score"])
                self.dataset["default"][split] = RetrievalSplitData(
                    queries=queries.select_columns(["query_id", "query"]).rename_columns(
                        {"query_id": "id", "query": "text"}
                    ),
                    corpus=corpus.select_columns(["id", "text"]),
                    relevant_docs=relevant,
                    top_ranked=None,
                )
            self.data_loaded = True

    RatioTask.__name__ = RatioTask.__qualname__ = f"Ratio{relation.capitalize()}"
    return RatioTask


def ratio_tasks(
    relations: Sequence[str] = RELATIONS, dataset_path: str | None = None, splits: Sequence[str] | None = None
) -> list:
    """Instances of the Ratio MTEB tasks for ``relations``, reading ``dataset_path``."""
    return [_task_class(r)(dataset_path=dataset_path, splits=splits) for r in relations]


def _serve_ratio_embeddings(model: Any, setup: ModelSetup, dataset_path, split: str, relations) -> None:
    """Make ``model`` answer mteb's encode calls from ratio's embedding cache (encoding what is missing).

    With the same vectors on both paths, an agreement check isolates what mteb and ratio each do on their
    own: loading the tasks, searching and computing metrics.
    """
    import numpy as np

    from ratio_bench.retrieval.cache import EmbeddingCache
    from ratio_bench.retrieval.encoder import DenseEncoder

    data = load_split(dataset_path, split, relations)
    encoder, cache = DenseEncoder(model, fingerprint(setup.path)), EmbeddingCache()

    def vectors(prompt: str, ids: list[str], texts: list[str]) -> dict[str, Any]:
        arr = cache.get_or_encode(
            encoder.fingerprint, prompt, ids, texts, lambda t: encoder.encode(t, prompt)
        )
        return dict(zip(texts, np.asarray(arr), strict=True))

    docs = vectors(setup.document_prompt, data.corpus_ids, data.corpus_texts)
    queries: dict[str, Any] = {}
    for rel, (qids, texts, _) in data.queries.items():
        if qids:  # a unified model's instruction for this move (others: the setup's query prompt)
            queries |= vectors(setup.prompt_for(rel), qids, texts)

    def serve(table: dict[str, Any]):
        return lambda sentences, **_: np.stack([table[t] for t in sentences])

    model.encode_query = serve(queries)
    model.encode_document = serve(docs)


def score_with_mteb(
    setup: ModelSetup,
    dataset_path,
    split: str,
    relations: Sequence[str],
    batch_size: int = 64,
    reuse_embeddings: bool = False,
) -> ScoreResult:
    """Run ``mteb.evaluate`` on the Ratio tasks and return the scores in :class:`ScoreResult` form.

    ``reuse_embeddings`` hands mteb the vectors of ratio's embedding cache instead of letting it encode (see
    ``_serve_ratio_embeddings``); by default mteb encodes everything itself, as it would for any user.
    """
    import time

    import mteb
    from sentence_transformers import SentenceTransformer

    if setup.kind != "dense":
        raise RatioError(
            "--via mteb scores dense sentence-transformers models only; score BM25 without --via"
        )
    prompts = {k: v for k, v in (("query", setup.query_prompt), ("document", setup.document_prompt)) if v}
    check_model_folder(setup.path, setup.trust_remote_code)
    model = SentenceTransformer(
        setup.path, prompts=prompts or None, trust_remote_code=setup.trust_remote_code, local_files_only=True
    )
    start = time.perf_counter()
    if reuse_embeddings:
        _serve_ratio_embeddings(model, setup, dataset_path, split, relations)
    tasks = ratio_tasks(relations, str(dataset_path), [split])
    result = mteb.evaluate(
        model, tasks, cache=None, encode_kwargs={"batch_size": batch_size}, show_progress_bar=False
    )
    metrics = {}
    for task_result in result.task_results:
        relation = task_result.task_name.removeprefix("Ratio").lower()
        scores = task_result.scores[split][0]
        metrics[relation] = {
            k: float(v)
            for k, v in scores.items()
            if isinstance(v, (int, float))
            and k.split("_at_")[0] in {"recall", "precision", "mrr", "map", "ndcg", "hit_rate"}
        }
    # mteb unloads the task data after evaluating: count the queries from the release itself
    counts = {r: len(q[0]) for r, q in load_split(dataset_path, split, relations).queries.items()}
    return ScoreResult(f"{setup.name} (via mteb)", metrics, counts, time.perf_counter() - start)
