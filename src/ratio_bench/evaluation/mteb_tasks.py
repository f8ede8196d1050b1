"""MTEB retrieval tasks ``RatioAddress``, ``RatioBroaden`` and ``RatioSpecify``, loaded by mteb's stock loader.

Each task is a plain ``AbsTaskRetrieval`` with no loader of its own: its hf_subset is the relation, so mteb's
``RetrievalDatasetLoader`` reads the release's ``<relation>-queries``, ``<relation>-corpus`` (the shared corpus's
own shards) and ``<relation>-qrels`` configs, from the Hub repo or local release folder named by
``metadata.dataset``. The classes point at the published release; :func:`ratio_tasks` points instances at any
other (``ratio score --via mteb`` passes the local folder). ``eval/mteb/ratio_retrieval.py`` is the same task file
in the form of a pull request to mteb, kept identical by a test. A unified model's per-move instructions reach
mteb as ``model_prompts`` keyed ``<task name>-query`` (:func:`model_prompts`).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from mteb.abstasks.retrieval import AbsTaskRetrieval
from mteb.abstasks.task_metadata import TaskMetadata

from ratio_bench.core.errors import RatioError
from ratio_bench.core.relations import BY_NAME, RELATIONS
from ratio_bench.dataset.release import Release
from ratio_bench.evaluation.evaluate import ScoreResult, load_split
from ratio_bench.retrieval.cache import EmbeddingCache
from ratio_bench.retrieval.registry import ModelSetup, check_model_folder, fingerprint

# The published release (``ratio publish`` tags it with its version); a task for another release or a local
# folder is made by ratio_tasks(dataset_path=..., revision=...).
HUB_DATASET = {"path": "ratio-bench/ratio", "revision": "1.0.0"}
_BIBTEX = (
    "@misc{ratio2026, title = {Ratio: A Benchmark for Retrieval Across Typed Ideation Operations in "
    "Scientific Literature}, year = {2026}}"
)


def _metadata(relation: str) -> TaskMetadata:
    return TaskMetadata(
        name=BY_NAME[relation].task_name,
        description=BY_NAME[relation].description,
        reference="https://github.com/ratio-bench/ratio",
        dataset=dict(HUB_DATASET),
        type="Retrieval",
        category="t2t",
        modalities=["text"],
        eval_splits=["test"],
        eval_langs={relation: ["eng-Latn"]},  # the hf_subset: the stock loader reads <relation>-* configs
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


def _task_class(relation: str) -> type[AbsTaskRetrieval]:
    """A module-level class named after the task (``RatioAddress``), as mteb's task registry expects."""
    name = BY_NAME[relation].task_name
    return type(name, (AbsTaskRetrieval,), {"metadata": _metadata(relation), "__module__": __name__})


TASKS: dict[str, type[AbsTaskRetrieval]] = {r: _task_class(r) for r in RELATIONS}
globals().update({cls.__name__: cls for cls in TASKS.values()})  # RatioAddress, RatioBroaden, RatioSpecify


def ratio_tasks(
    relations: Sequence[str] = RELATIONS,
    dataset_path: str | Path | None = None,
    splits: Sequence[str] | None = None,
    revision: str | None = None,
) -> list[AbsTaskRetrieval]:
    """Task instances for ``relations`` reading ``dataset_path`` (a Hub repo id or a local release folder) at
    ``revision`` (a tag or commit; a local folder has none), default the published release."""
    tasks = []
    for relation in relations:
        task = TASKS[relation]()
        update: dict[str, Any] = {}
        if dataset_path is not None:
            update["dataset"] = {"path": str(dataset_path), "revision": revision or "local"}
        if splits:
            update["eval_splits"] = list(splits)
        task.metadata = task.metadata.model_copy(update=update)
        tasks.append(task)
    return tasks


def snapshot_tasks(release: str | Path, relations: Sequence[str] = RELATIONS) -> list[AbsTaskRetrieval]:
    """One task per relation over a local release's snapshot splits (``eval_splits=["test_2025_03", ...]``, in
    time order); a relation without snapshot queries gets none. mteb's stock loader reads each snapshot's own pool
    (the card points ``<relation>-corpus``'s split at ``corpus/<snapshot>``)."""
    opened = Release.open(release)
    tasks = []
    for relation in relations:
        splits = [s for s in opened.splits(relation) if s in opened.snapshots]
        if splits:
            tasks += ratio_tasks([relation], opened.root, splits)
    return tasks


def model_prompts(setup: ModelSetup, relations: Sequence[str]) -> dict[str, str]:
    """mteb's ``model_prompts`` for ``setup``: its query and document prompts, and for a unified model each
    move's instruction under ``<task name>-query``, which mteb prefers over the plain query prompt."""
    prompts = {"query": setup.query_prompt, "document": setup.document_prompt}
    for relation in relations:
        if setup.prompt_for(relation) != setup.query_prompt:
            prompts[f"{TASKS[relation].metadata.name}-query"] = setup.prompt_for(relation)
    return {key: text for key, text in prompts.items() if text}


def cache_encoders(model: Any, setup: ModelSetup, cache: EmbeddingCache, batch_size: int = 64) -> None:
    """Answer mteb's encode calls (``encode_query``/``encode_document``, a whole task's texts at once) from
    the embedding cache, encoding only the texts it lacks.

    mteb's own ``CachedEmbeddingWrapper`` keys its store by task, so the corpus the three Ratio tasks share
    would still be encoded once per task; keyed by (model, prompt, text), it is encoded once for all three, and
    not at all when ``ratio score`` encoded it already (the keys are the same: mteb passes the setup's prompts).
    """
    from ratio_bench.retrieval.encoder import DenseEncoder

    encoder = DenseEncoder(model, fingerprint(setup.path), batch_size)

    def cached(role: str):
        def encode(sentences, prompt: str | None = None, **_: Any):
            texts = list(sentences)
            label = f"encoding {len(texts):,} {role} texts (mteb)"
            return cache.get_or_encode(
                encoder.fingerprint, prompt or "", texts, lambda t: encoder.encode(t, prompt or ""), label
            )

        return encode

    model.encode_query = cached("query")
    model.encode_document = cached("document")


def _fill_from_release(model: Any, setup: ModelSetup, dataset_path, split, relations, cache) -> None:
    """Encode the split's corpus and queries into the cache through ratio's retriever (``--reuse-embeddings``:
    mteb then reads every vector from the cache, so an agreement check isolates loading, search and metrics)."""
    from ratio_bench.retrieval.encoder import DenseEncoder
    from ratio_bench.retrieval.retriever import DenseRetriever

    data = load_split(dataset_path, split, relations)
    retriever = DenseRetriever.of(DenseEncoder(model, fingerprint(setup.path)), setup, cache)
    retriever.warm(data.corpus_texts, {rel: q.texts for rel, q in data.queries.items()})


def score_with_mteb(
    setup: ModelSetup,
    dataset_path,
    split: str,
    relations: Sequence[str],
    batch_size: int = 64,
    reuse_embeddings: bool = False,
    cache: EmbeddingCache | None = None,
) -> ScoreResult:
    """Run ``mteb.evaluate`` on the Ratio tasks and return the scores in :class:`ScoreResult` form.

    mteb's encoder is answered from the embedding cache (:func:`cache_encoders`; ``cache``, default
    ~/.cache/ratio/embeddings, its hits and misses the result's): the shared corpus is encoded once for the three
    tasks. ``reuse_embeddings`` fills the cache through ratio's own retriever first.
    """
    import time

    import mteb
    from sentence_transformers import SentenceTransformer

    from ratio_bench.retrieval.retriever import embeds

    if not embeds(setup.kind):
        raise RatioError(
            "--via mteb scores dense sentence-transformers models only; score BM25 without --via"
        )
    check_model_folder(setup.path, setup.trust_remote_code)
    model = SentenceTransformer(setup.path, trust_remote_code=setup.trust_remote_code, local_files_only=True)
    model.prompts = {}  # the setup's prompts, not those saved with the model (setup `none` means none)
    encoder = mteb.SentenceTransformerEncoderWrapper(model)
    # Set after construction: mteb validates prompt keys against the task names it ships, which lists the Ratio
    # tasks only once eval/mteb/ratio_retrieval.py is merged there; until then it would drop the per-move keys.
    encoder.model_prompts = model_prompts(setup, relations)
    start = time.perf_counter()
    cache = cache or EmbeddingCache()
    misses, hits = cache.misses, cache.hits
    if reuse_embeddings:
        _fill_from_release(model, setup, dataset_path, split, relations, cache)
    cache_encoders(model, setup, cache, batch_size)
    tasks = ratio_tasks(relations, dataset_path, [split])
    result = mteb.evaluate(
        encoder, tasks, cache=None, encode_kwargs={"batch_size": batch_size}, show_progress_bar=False
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
    counts = {r: len(q.ids) for r, q in load_split(dataset_path, split, relations).queries.items()}
    return ScoreResult(
        f"{setup.name} (via mteb)",
        metrics,
        counts,
        time.perf_counter() - start,
        cache.misses - misses,
        cache.hits - hits,
    )
