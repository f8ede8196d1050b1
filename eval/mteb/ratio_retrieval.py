"""Ratio (Retrieval Across Typed Ideation Operations): three scientific-retrieval tasks, one per ideation move.

To contribute: copy this file to mteb/tasks/retrieval/eng/ratio_retrieval.py, import the three classes in that
folder's __init__.py, and set "revision" to the commit of the published release. The release's card declares
the configs mteb's stock RetrievalDatasetLoader reads for hf_subset <relation>: <relation>-queries,
<relation>-corpus (the shared candidate corpus) and <relation>-qrels; no custom loader is needed.
"""

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
