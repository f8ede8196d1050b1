"""Ratio (Retrieval Across Typed Ideation Operations): three scientific-retrieval tasks, one per ideation move.

To contribute: copy this file to mteb/tasks/retrieval/eng/ratio_retrieval.py, import its task classes in that
folder's __init__.py, and set "revision" to the commit of the published release. The release's card declares
the configs mteb's stock RetrievalDatasetLoader reads for hf_subset <relation>: <relation>-queries,
<relation>-corpus (the shared candidate corpus) and <relation>-qrels; no custom loader is needed. Copy
descriptive_stats/Retrieval/*.json beside this file to mteb/descriptive_stats/Retrieval/, and RATIO (the
benchmark) to mteb/benchmarks/benchmarks/. The Latest tasks score each relation's newest dated test snapshot
(set their splits with the revision); the Mini tasks (RatioAddressMini, ...) score the release's mini split (their
statistics: ratio_bench.evaluation.scoring.mteb_tasks.write_descriptive_stats).
"""

from mteb import Benchmark
from mteb.abstasks.retrieval import AbsTaskRetrieval
from mteb.abstasks.task_metadata import TaskMetadata

_DATASET = {"path": "ratio-bench/ratio", "revision": "1.0.0"}
_BIBTEX = (
    "@misc{ratio2026, title = {Ratio: A Benchmark for Retrieval Across Typed Ideation Operations in "
    "Scientific Literature}, year = {2026}}"
)
_COMMON = dict(
    reference="https://github.com/ratio-bench/ratio",
    dataset=_DATASET,
    type="Retrieval",
    category="t2t",
    modalities=["text"],
    eval_splits=["test"],
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


class RatioAddress(AbsTaskRetrieval):
    metadata = TaskMetadata(
        name="RatioAddress",
        description="Given a sentence stating a problem, retrieve a sentence from other papers with an approach or "
        "insight that can help address it.",
        eval_langs={"address": ["eng-Latn"]},
        **_COMMON,
    )


class RatioBroaden(AbsTaskRetrieval):
    metadata = TaskMetadata(
        name="RatioBroaden",
        description="Given a scientific statement, retrieve a sentence that reformulates it at a broader scope or "
        "greater generality.",
        eval_langs={"broaden": ["eng-Latn"]},
        **_COMMON,
    )


class RatioSpecify(AbsTaskRetrieval):
    metadata = TaskMetadata(
        name="RatioSpecify",
        description="Given a scientific statement, retrieve a sentence that instantiates it through a concrete "
        "case, mechanism or example.",
        eval_langs={"specify": ["eng-Latn"]},
        **_COMMON,
    )


_MINI = (
    " Mini: a seeded sample of the test split (up to 200 queries per relation) against a 5,000-candidate pool "
    "drawn from the test pool, for a quick look; not comparable with test figures."
)


class RatioAddressMini(AbsTaskRetrieval):
    metadata = TaskMetadata(
        name="RatioAddressMini",
        description=RatioAddress.metadata.description + _MINI,
        eval_langs={"address": ["eng-Latn"]},
        **(_COMMON | {"eval_splits": ["mini"]}),
    )


class RatioBroadenMini(AbsTaskRetrieval):
    metadata = TaskMetadata(
        name="RatioBroadenMini",
        description=RatioBroaden.metadata.description + _MINI,
        eval_langs={"broaden": ["eng-Latn"]},
        **(_COMMON | {"eval_splits": ["mini"]}),
    )


class RatioSpecifyMini(AbsTaskRetrieval):
    metadata = TaskMetadata(
        name="RatioSpecifyMini",
        description=RatioSpecify.metadata.description + _MINI,
        eval_langs={"specify": ["eng-Latn"]},
        **(_COMMON | {"eval_splits": ["mini"]}),
    )


_LATEST = " Latest: the newest dated test snapshot, queries and candidates from papers of one recent month."


class RatioAddressLatest(AbsTaskRetrieval):
    metadata = TaskMetadata(
        name="RatioAddressLatest",
        description=RatioAddress.metadata.description + _LATEST,
        eval_langs={"address": ["eng-Latn"]},
        **(_COMMON | {"eval_splits": ["test_2026_06"]}),
    )


class RatioBroadenLatest(AbsTaskRetrieval):
    metadata = TaskMetadata(
        name="RatioBroadenLatest",
        description=RatioBroaden.metadata.description + _LATEST,
        eval_langs={"broaden": ["eng-Latn"]},
        **(_COMMON | {"eval_splits": ["test_2026_05"]}),
    )


class RatioSpecifyLatest(AbsTaskRetrieval):
    metadata = TaskMetadata(
        name="RatioSpecifyLatest",
        description=RatioSpecify.metadata.description + _LATEST,
        eval_langs={"specify": ["eng-Latn"]},
        **(_COMMON | {"eval_splits": ["test_2026_06"]}),
    )


RATIO = Benchmark(
    name="Ratio",
    tasks=[
        RatioAddress(),
        RatioBroaden(),
        RatioSpecify(),
        RatioAddressMini(),
        RatioBroadenMini(),
        RatioSpecifyMini(),
        RatioAddressLatest(),
        RatioBroadenLatest(),
        RatioSpecifyLatest(),
    ],  # fmt: skip
    description="Ratio (Retrieval Across Typed Ideation Operations): given a sentence from a scientific paper, "
    "retrieve a sentence from other papers that addresses its problem, broadens it or specifies it. Three tasks "
    "on the test split, their mini versions for fast checks, and each task's latest dated test snapshot, whose "
    "queries come from papers newer than most models' training data.",
    reference="https://github.com/ratio-bench/ratio",
    citation=_BIBTEX,
    benchmark_hf_repo="ratio-bench/ratio",
)
