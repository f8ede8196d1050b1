"""The three ideation moves (relations) Ratio benchmarks, described once.

Every stage that needs to know something per relation (the lexicon's marker file, the silver prompts and sample,
the MTEB task, the model card's gloss, the labelling question, the paper's marker counts) reads it from
:data:`RELATION_SPECS` here, so adding a relation is one record (plus its lexicon file and prompts).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Relation:
    """One relation (move) between a query sentence and its gold sentence from another paper."""

    name: (
        str  # the release config, the lexicon marker file (``lexicon/<version>/<name>.tsv``), the mteb subset
    )
    task_name: str  # the MTEB task, and the submission's per-task result file
    description: str  # the MTEB task description: what to retrieve for a query
    gloss: str  # the model card: what a gold does relative to its query
    headline: str  # the search page: the line under the move's column
    move_phrase: str  # the MTEB benchmark's description: what a gold does to its query, in a few words
    question: str  # the human labelling question (``ratio judge label``)
    silver_prompts: tuple[str, str]  # the two default silver judge prompts (spec 4.3)
    silver_sample: int | None  # the default silver sample size (None: every test pair; spec 4.3)
    marker_classifier: str | None  # the prompt that classifies candidate markers (None: reviewed by hand)
    paper_markers_found: int  # the paper's Table 2 "found in data" total, printed beside ours


RELATION_SPECS: tuple[Relation, ...] = (
    Relation(
        name="address",
        task_name="RatioAddress",
        description="Given a sentence stating a problem, retrieve a sentence from other papers with an approach "
        "or insight that can help address it.",
        gloss="offers an approach or insight that can help address the problem the query states",
        headline="solves the stated problem",
        move_phrase="addresses its problem",
        question="Does S2 propose a concrete remedy aimed directly at the problem that S1 states?",
        silver_prompts=("address-silver-split", "address-silver-stepwise"),
        silver_sample=None,
        marker_classifier="address-marker-classifier",
        paper_markers_found=717,
    ),
    Relation(
        name="broaden",
        task_name="RatioBroaden",
        description="Given a scientific statement, retrieve a sentence that reformulates it at a broader scope or "
        "greater generality.",
        gloss="reformulates the query at a broader scope or greater generality",
        headline="a more general view of it",
        move_phrase="broadens it",
        question="Is S2 a genuine broadening of S1 (same topic, higher level, references resolve to S1)?",
        silver_prompts=("broaden-silver-inclusive", "broaden-silver-directional"),
        silver_sample=None,
        marker_classifier="broaden-marker-classifier",
        paper_markers_found=38,
    ),
    Relation(
        name="specify",
        task_name="RatioSpecify",
        description="Given a scientific statement, retrieve a sentence that instantiates it through a concrete "
        "case, mechanism or example.",
        gloss="instantiates the query through a concrete case, mechanism or example",
        headline="a concrete instance of it",
        move_phrase="specifies it",
        question="Is S2 a concrete instance or finer-grained account of the very claim S1 makes?",
        silver_prompts=("specify-silver-anchored", "specify-silver-compact"),
        silver_sample=10_000,
        marker_classifier=None,
        paper_markers_found=54,
    ),
)
BY_NAME: dict[str, Relation] = {r.name: r for r in RELATION_SPECS}
RELATIONS: tuple[str, ...] = tuple(BY_NAME)
