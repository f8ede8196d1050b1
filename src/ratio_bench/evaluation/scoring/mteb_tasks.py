"""One MTEB retrieval task per relation (``RatioAddress``, ...), loaded by mteb's stock loader.

Each task is a plain ``AbsTaskRetrieval`` with no loader of its own: its hf_subset is the relation, so mteb's
``RetrievalDatasetLoader`` reads the release's ``<relation>-queries``, ``<relation>-corpus`` (the shared corpus's
own shards) and ``<relation>-qrels`` configs, from the Hub repo or local release folder named by
``metadata.dataset``. The classes point at the published release; :func:`ratio_tasks` points instances at any
other (``ratio score --via mteb`` passes the local folder). ``eval/mteb/ratio_retrieval.py`` is the same task file
in the form of a pull request to mteb, rendered from the same relation records and metadata (:mod:`.mteb_file`;
``make generate`` writes it, a test keeps it equal to the render). The classes come from one loop over
:data:`~ratio_bench.core.relations.RELATION_SPECS`: a task, its Mini and its Latest version per relation. A unified
model's per-move instructions reach mteb as ``model_prompts`` keyed ``<task name>-query`` (:func:`model_prompts`).
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from unittest import mock

import datasets.inspect
import datasets.load
import numpy as np
from mteb.abstasks.retrieval import AbsTaskRetrieval
from mteb.abstasks.task_metadata import TaskMetadata
from sentence_transformers import SentenceTransformer

from ratio_bench.core import extras
from ratio_bench.core.errors import RatioError
from ratio_bench.core.relations import BY_NAME, RELATION_SPECS, RELATIONS, Relation
from ratio_bench.dataset.contract import MINI
from ratio_bench.dataset.hub_release import HubRef, fetch, hub_ref
from ratio_bench.dataset.release import Release, card_data_files
from ratio_bench.evaluation.scoring.evaluate import ScoreResult, load_split
from ratio_bench.evaluation.scoring.mteb_file import (
    BENCHMARK_NAME,
    BIBTEX,
    HUB_DATASET,
    LATEST_NOTE,
    LATEST_SNAPSHOTS,
    MINI_NOTE,
    REFERENCE,
    benchmark_description,
    common_metadata,
)
from ratio_bench.retrieval.adapters import QueryAdapters
from ratio_bench.retrieval.cache import EmbeddingCache
from ratio_bench.retrieval.encoder import DenseEncoder, Role
from ratio_bench.retrieval.model_folder import check_model_folder, is_routed
from ratio_bench.retrieval.registry import ModelSetup, fingerprint
from ratio_bench.retrieval.retriever import DenseRetriever, embeds


def _task_class(
    spec: Relation, suffix: str = "", split: str = "test", note: str = ""
) -> type[AbsTaskRetrieval]:
    """The task of ``spec``'s relation over one split (``RatioAddress`` on test, ``RatioAddressMini`` on mini), a
    module-level class named after the task as mteb's task registry expects: mteb keys results by task name, so
    a split scored apart needs a name apart. Its metadata is the standalone file's (:mod:`.mteb_file`)."""
    metadata = TaskMetadata(
        name=spec.task_name + suffix,
        description=spec.description + note,
        eval_langs={spec.name: ["eng-Latn"]},  # the hf_subset: the stock loader reads <relation>-* configs
        **(common_metadata() | {"eval_splits": [split]}),
    )
    return type(metadata.name, (AbsTaskRetrieval,), {"metadata": metadata, "__module__": __name__})


TASKS: dict[str, type[AbsTaskRetrieval]] = {}
# RatioAddressMini, ...: the release's mini split (``eval_splits=["mini"]``), a minute on a CPU for a small model
MINI_TASKS: dict[str, type[AbsTaskRetrieval]] = {}
# RatioAddressLatest, ...: the published release's latest test snapshot of the relation (where it has one)
LATEST_TASKS: dict[str, type[AbsTaskRetrieval]] = {}
for _spec in RELATION_SPECS:
    TASKS[_spec.name] = _task_class(_spec)
    MINI_TASKS[_spec.name] = _task_class(_spec, "Mini", MINI, MINI_NOTE)
    if _spec.name in LATEST_SNAPSHOTS:
        LATEST_TASKS[_spec.name] = _task_class(_spec, "Latest", LATEST_SNAPSHOTS[_spec.name], LATEST_NOTE)
globals().update({cls.__name__: cls for group in (TASKS, MINI_TASKS, LATEST_TASKS) for cls in group.values()})


def ratio_tasks(
    relations: Sequence[str] = RELATIONS,
    dataset_path: str | Path | None = None,
    splits: Sequence[str] | None = None,
    revision: str | None = None,
) -> list[AbsTaskRetrieval]:
    """Task instances for ``relations`` reading ``dataset_path`` (a local release folder, or a Hub dataset
    ``ORG/NAME[@REV]``) at ``revision``, default the published release (left to mteb's loader).

    A Hub name is fetched once through :mod:`ratio_bench.dataset.hub_release` (``revision`` or ``@REV`` resolved
    to its commit, which the tasks record; the files checked as a release), and the tasks read that checked copy.
    A local folder must be a Ratio release whose card points only at its own files (mteb's loader follows the
    card's ``data_files``): see :func:`local_release`."""
    ref = hub_ref(dataset_path) if dataset_path is not None else None
    if ref is not None:
        fetched = fetch(HubRef(ref.repo_id, revision or ref.revision), shown=str(dataset_path))
        dataset_path, revision = fetched.root, fetched.hub.rpartition("@")[2]
    if dataset_path is not None:
        local_release(dataset_path)
    tasks = []
    for relation in relations:
        task = (MINI_TASKS if list(splits or ()) == [MINI] else TASKS)[relation]()
        update: dict[str, Any] = {}
        if dataset_path is not None:
            update["dataset"] = {"path": str(dataset_path), "revision": revision or "local"}
        if splits:
            update["eval_splits"] = list(splits)
        task.metadata = task.metadata.model_copy(update=update)
        tasks.append(task)
    return tasks


def local_release(dataset_path: str | Path) -> Path | None:
    """``dataset_path`` when it names a local folder (a ``Path``, or text naming one that exists): checked to be a
    Ratio release (its manifest's kind) with every card ``data_files`` pattern inside it (no ``..``, absolute
    path or symlink out; :func:`~ratio_bench.dataset.release.card_data_files`); None for a Hub repo id."""
    if not isinstance(dataset_path, Path) and not Path(dataset_path).exists():
        return None
    release = Release.open(dataset_path)
    card_data_files(release)
    return release.root


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


def _encoder(model: Any, setup: ModelSetup, batch_size: int = 64) -> DenseEncoder:
    """mteb's loaded model as ratio's encoder: the same cache keys as ``ratio score`` (a Router model's two
    routes apart)."""
    return DenseEncoder(model, fingerprint(setup.path), batch_size, routed=is_routed(setup.path))


def cache_encoders(model: Any, setup: ModelSetup, cache: EmbeddingCache, batch_size: int = 64) -> None:
    """Answer mteb's encode calls (``encode_query``/``encode_document``, a whole task's texts at once) from
    the embedding cache, encoding only the texts it lacks.

    mteb's own ``CachedEmbeddingWrapper`` keys its store by task, so the corpus the three Ratio tasks share
    would still be encoded once per task; keyed by (model, prompt, text), it is encoded once for all three, and
    not at all when ``ratio score`` encoded it already (the keys are the same: mteb passes the setup's prompts).
    """
    encoder = _encoder(model, setup, batch_size)

    def cached(role: Role):
        def encode(sentences, prompt: str | None = None, **_: Any):
            texts, text_prompt = list(sentences), prompt or ""
            label = f"encoding {len(texts):,} {role} texts (mteb)"
            return cache.get_or_encode(  # a routed model: each role through its route, cached apart
                encoder.cache_id(role),
                text_prompt,
                texts,
                lambda t, progress: encoder.encode(t, text_prompt, role, progress),
                label,
                reports_progress=True,  # the bar moves per batch
            )

        return encode

    model.encode_query = cached("query")
    model.encode_document = cached("document")


def _fill_from_release(model: Any, setup: ModelSetup, dataset_path, split, relations, cache) -> None:
    """Encode the split's corpus and queries into the cache through ratio's retriever (``--reuse-embeddings``:
    mteb then reads every vector from the cache, so an agreement check isolates loading, search and metrics)."""

    data = load_split(dataset_path, split, relations)
    retriever = DenseRetriever.of(_encoder(model, setup), setup, cache)
    retriever.warm(data.corpus_texts, {rel: q.texts for rel, q in data.queries.items()})


def mteb_encoder(model: Any, setup: ModelSetup) -> Any:
    """mteb's wrapper of a sentence-transformers model; for a model with per-move query adapters, one whose
    query vectors are mapped by the adapter of the task's move (its hf_subset is the relation)."""
    mteb = extras.load("mteb")

    if not setup.adapters:
        return mteb.SentenceTransformerEncoderWrapper(model)
    adapters = QueryAdapters.load(setup.adapters)

    class AdaptedEncoder(mteb.SentenceTransformerEncoderWrapper):
        def encode(self, inputs, *, task_metadata, hf_split, hf_subset, prompt_type=None, **kwargs):
            vectors = super().encode(
                inputs,
                task_metadata=task_metadata,
                hf_split=hf_split,
                hf_subset=hf_subset,
                prompt_type=prompt_type,
                **kwargs,
            )
            if getattr(prompt_type, "value", prompt_type) != "query":
                return vectors
            vectors = np.asarray(vectors, dtype=np.float32)
            vectors /= np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
            return adapters.apply(hf_subset, vectors)

    return AdaptedEncoder(model)


@contextmanager
def release_resolved_once(dataset_path) -> Iterator[None]:
    """While it is open, ``datasets`` resolves the local release ``dataset_path`` twice, not once per config.

    mteb's stock loader asks ``datasets`` for the config names and, per task, for three configs and their split
    names: 21 resolutions of the same folder for the three tasks, each parsing the release card's YAML (some 1,200
    lines, pure Python) and globbing every config's ``data_files``: 7.7 s of a 20 s warm run of one snapshot. The
    folder does not change during a run, so the module ``datasets`` builds for it is reused (one per form of the
    call: config names, builders); every other path, and
    everything after this block, goes to ``datasets`` untouched. The data read is the same: only where the files
    are is remembered, not what they hold."""

    real = datasets.load.dataset_module_factory
    local = str(dataset_path)
    memo: dict[tuple, Any] = {}

    def once(path, *args, **kwargs):
        if str(path) != local:
            return real(path, *args, **kwargs)
        key = (args, tuple(sorted((k, repr(v)) for k, v in kwargs.items())))
        if key not in memo:
            memo[key] = real(path, *args, **kwargs)
        # a fresh record each time: load_dataset_builder pops entries of builder_kwargs from what it is given
        return dataclasses.replace(memo[key], builder_kwargs=dict(memo[key].builder_kwargs))

    datasets.load.dataset_module_factory = datasets.inspect.dataset_module_factory = once
    try:
        yield
    finally:
        datasets.load.dataset_module_factory = datasets.inspect.dataset_module_factory = real


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

    mteb = extras.load("mteb")

    if not embeds(setup.kind):
        raise RatioError(
            f"--via mteb scores dense sentence-transformers models only, not {setup.kind} ones; score {setup.name} without --via"
        )
    check_model_folder(setup.path, setup.trust_remote_code)
    model = SentenceTransformer(setup.path, trust_remote_code=setup.trust_remote_code, local_files_only=True)
    model.prompts = {}  # the setup's prompts, not those saved with the model (setup `none` means none)
    encoder = mteb_encoder(model, setup)
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
    with release_resolved_once(dataset_path):
        result = mteb.evaluate(
            encoder, tasks, cache=None, encode_kwargs={"batch_size": batch_size}, show_progress_bar=False
        )
    metrics = {}
    for task_result in result.task_results:
        relation = relation_of_task(task_result.task_name)
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


# --- the Ratio benchmark: the tasks, their mini versions and the latest dated test snapshots -----------------

MINI_SPLIT = MINI  # a small fixed sample of test queries (a release may not have it: see ratio_benchmark)
BENCHMARK_DESCRIPTION = benchmark_description()


def relation_of_task(name: str) -> str:
    """The relation a task scores (``RatioAddressMini`` and ``RatioAddressLatest``: ``address``, their split
    being the run's), so results are keyed by relation whatever the split's task is called."""
    for group in (TASKS, MINI_TASKS, LATEST_TASKS):
        for relation, cls in group.items():
            if cls.metadata.name == name:
                return relation
    raise ValueError(f"{name}: not a Ratio task")


def _pointed(task: AbsTaskRetrieval, dataset_path: str | Path, splits: Sequence[str]) -> AbsTaskRetrieval:
    """``task`` reading the local release ``dataset_path`` (no revision), scored on ``splits``."""
    task.metadata = task.metadata.model_copy(
        update={"dataset": {"path": str(dataset_path), "revision": "local"}, "eval_splits": list(splits)}
    )
    return task


def benchmark_tasks(release: str | Path | None = None) -> list[AbsTaskRetrieval]:
    """The benchmark's tasks: for the published release (``release`` None) every class; for a local release
    the three tasks, each relation's mini task only where the release has a mini split, and its latest-snapshot
    task (on the release's own latest snapshot of that relation) only where it has snapshots."""
    if release is None:
        return [cls() for group in (TASKS, MINI_TASKS, LATEST_TASKS) for cls in group.values()]
    opened = Release.open(release)
    tasks = [
        _pointed(TASKS[r](), opened.root, ["test"]) for r in opened.relations if "test" in opened.splits(r)
    ]
    for relation in opened.relations:
        splits = opened.splits(relation)
        if MINI_SPLIT in splits:
            tasks.append(_pointed(MINI_TASKS[relation](), opened.root, [MINI_SPLIT]))
        snapshots = [s for s in splits if s in opened.snapshots]
        if snapshots:
            # a relation the published release lacks has no Latest class: one for this release's snapshot
            latest = LATEST_TASKS.get(relation) or _task_class(
                BY_NAME[relation], "Latest", snapshots[-1], LATEST_NOTE
            )
            tasks.append(_pointed(latest(), opened.root, [snapshots[-1]]))
    return tasks


def ratio_benchmark(release: str | Path | None = None):
    """mteb's ``Benchmark`` of Ratio (see :func:`benchmark_tasks`), for ``mteb.evaluate`` and mteb's board."""
    Benchmark = extras.load("mteb").Benchmark

    return Benchmark(
        name=BENCHMARK_NAME,
        tasks=benchmark_tasks(release),
        description=BENCHMARK_DESCRIPTION,
        reference=REFERENCE,
        citation=BIBTEX,
        benchmark_hf_repo=HUB_DATASET["path"],
    )


def write_descriptive_stats(release: str | Path, out: str | Path) -> list[Path]:
    """mteb's descriptive statistics of each benchmark task with a split in ``release``, computed by mteb's own
    ``calculate_descriptive_statistics`` and written to ``out/<type>/<Task>.json`` (mteb keeps them in its
    package folder, ``mteb/descriptive_stats/``; the path is redirected for the call so nothing is written
    into an installed mteb). Returns the files written."""

    written = []
    for task in benchmark_tasks(release):
        path = Path(out) / str(task.metadata.type) / f"{task.metadata.name}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        staged = path.with_suffix(".json.tmp")
        with mock.patch.object(TaskMetadata, "descriptive_stat_path", property(lambda _meta, at=staged: at)):
            task.calculate_descriptive_statistics(overwrite_results=True)
        staged.replace(path)  # atomic: a stats file is whole or absent
        written.append(path)
    return written
