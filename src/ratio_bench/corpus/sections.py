"""Section headings to section categories.

Categories let a build keep or drop whole kinds of text (the default keeps the nine prose categories,
appendices included and tagged) and travel as provenance on every mined pair. Non-prose categories
(front matter, references, acknowledgments, checklists) are recognised so that they can be removed by the same
setting rather than by special cases.
"""

from __future__ import annotations

import re
from enum import Enum
from functools import lru_cache


class SectionCategory(str, Enum):
    ABSTRACT = "abstract"
    INTRODUCTION = "introduction"
    RELATED_WORK = "related_work"
    METHOD = "method"
    EXPERIMENTS = "experiments"
    DISCUSSION = "discussion"
    CONCLUSION = "conclusion"
    APPENDIX = "appendix"
    OTHER = "other"
    # Non-prose: recognised so they can be dropped (never kept by default).
    FRONT_MATTER = "front_matter"
    REFERENCES = "references"
    ACKNOWLEDGMENTS = "acknowledgments"
    CHECKLIST = "checklist"


PROSE_CATEGORIES: frozenset[SectionCategory] = frozenset(
    {
        SectionCategory.ABSTRACT,
        SectionCategory.INTRODUCTION,
        SectionCategory.RELATED_WORK,
        SectionCategory.METHOD,
        SectionCategory.EXPERIMENTS,
        SectionCategory.DISCUSSION,
        SectionCategory.CONCLUSION,
        SectionCategory.APPENDIX,
        SectionCategory.OTHER,
    }
)

# Ordered: the first pattern that matches the normalised heading wins, so specific rules come first
# ("conclusion and related work" is a conclusion; "related work" alone is related work).
_RULES: list[tuple[SectionCategory, re.Pattern[str]]] = [
    (SectionCategory.REFERENCES, re.compile(r"^(references?|bibliography|literature cited|works cited|citations)$")),
    (SectionCategory.ACKNOWLEDGMENTS, re.compile(r"^(acknowledge?ments?|acknowledgments? and disclosure.*|funding.*|disclosure of funding.*)$")),
    (SectionCategory.CHECKLIST, re.compile(r"(paper checklist|reproducibility checklist|^checklist$|^neurips .*checklist)")),
    (SectionCategory.APPENDIX, re.compile(r"^(appendix|appendices|supplementary|supplemental|technical appendix)\b")),
    (SectionCategory.ABSTRACT, re.compile(r"^abstract\b")),
    (SectionCategory.CONCLUSION, re.compile(r"\b(conclusions?|concluding|summary|closing remarks|final remarks)\b")),
    (SectionCategory.INTRODUCTION, re.compile(r"^(introduction|overview and motivation|motivation)\b|\bintroduction$")),
    (SectionCategory.RELATED_WORK, re.compile(r"\b(related work|related works|prior work|previous work|related literature|literature review|background)\b")),
    (SectionCategory.DISCUSSION, re.compile(r"\b(discussion|discussions|limitations?|broader impacts?|societal impacts?|future work|ethics|ethical)\b")),
    (SectionCategory.EXPERIMENTS, re.compile(r"\b(experiments?|experimental|evaluations?|results?|ablations?|empirical|benchmarks?|case stud(y|ies)|analysis of results|performance|comparisons?|datasets?|baselines?|setup|settings?|implementation details|metrics?)\b")),
    (SectionCategory.METHOD, re.compile(r"\b(method|methods|methodology|approach|approaches|model|models|framework|algorithms?|architecture|proposed|preliminar(y|ies)|problem (formulation|setup|setting|statement|definition)|formulation|definitions?|notations?|theory|theoretical|analysis|design|training|objective|our)\b")),
]

_NUMBERING = re.compile(r"^(?:(?:section|chapter)\s+)?(?:[ivxlc]+|[a-z]|\d+)(?:\.\d+)*\.?\s+(?=\S)", re.IGNORECASE)
_LETTER_TOP = re.compile(r"^[A-Z](?:\.\d+)*\.?\s+\S")
_NUMBER_DEPTH = re.compile(r"^(\d+|[A-Z])((?:\.\d+)*)\.?\s")


def normalise_heading(heading: str) -> str:
    """Lower-case a heading and strip numbering, markup and trailing punctuation."""
    h = re.sub(r"[*_`#]+", "", heading).strip()
    h = _NUMBERING.sub("", h)
    h = re.sub(r"\s+", " ", h).strip(" .:").lower()
    return h


@lru_cache(maxsize=1 << 16)
def classify_heading(heading: str) -> SectionCategory:
    """Map one heading to its category; unrecognised headings are OTHER."""
    h = normalise_heading(heading)
    for category, pattern in _RULES:
        if pattern.search(h):
            return category
    return SectionCategory.OTHER


def heading_depth(heading: str) -> int | None:
    """Depth from the heading's numbering (``3`` -> 1, ``3.2`` -> 2, ``A.1`` -> 2); None when unnumbered."""
    m = _NUMBER_DEPTH.match(heading.strip())
    if not m:
        return None
    return 1 + m.group(2).count(".")


def is_lettered_top_heading(heading: str) -> bool:
    """``A Proofs`` / ``B.2 Extra results``: the lettered numbering that appendices use."""
    return bool(_LETTER_TOP.match(heading.strip()))
