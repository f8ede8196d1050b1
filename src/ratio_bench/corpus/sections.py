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

# Ordered rules: the first that matches the normalised heading wins, so specific rules come first
# ("conclusion and related work" is a conclusion; "related work" alone is related work). Each rule is
# (category, words that may open the heading, words that may appear anywhere, phrases that may appear anywhere);
# word-set look-ups keep classification cheap on the many headings that occur only once in a corpus.
_RULES: list[tuple[SectionCategory, frozenset[str], frozenset[str], tuple[str, ...]]] = [
    (
        SectionCategory.REFERENCES,
        frozenset({"references", "reference", "bibliography", "citations"}),
        frozenset(),
        ("literature cited", "works cited"),
    ),
    (
        SectionCategory.ACKNOWLEDGMENTS,
        frozenset({"acknowledgments", "acknowledgment", "acknowledgements", "acknowledgement", "funding"}),
        frozenset(),
        ("disclosure of funding",),
    ),
    (
        SectionCategory.CHECKLIST,
        frozenset({"checklist"}),
        frozenset(),
        ("paper checklist", "reproducibility checklist"),
    ),
    (
        SectionCategory.APPENDIX,
        frozenset({"appendix", "appendices", "supplementary", "supplemental"}),
        frozenset(),
        ("technical appendix",),
    ),
    (SectionCategory.ABSTRACT, frozenset({"abstract"}), frozenset(), ()),
    (
        SectionCategory.CONCLUSION,
        frozenset(),
        frozenset({"conclusion", "conclusions", "concluding", "summary"}),
        ("closing remarks", "final remarks"),
    ),
    (
        SectionCategory.INTRODUCTION,
        frozenset({"introduction", "motivation"}),
        frozenset(),
        ("overview and motivation",),
    ),
    (
        SectionCategory.RELATED_WORK,
        frozenset(),
        frozenset({"background"}),
        ("related work", "prior work", "previous work", "related literature", "literature review"),
    ),
    (
        SectionCategory.DISCUSSION,
        frozenset(),
        frozenset({"discussion", "discussions", "limitation", "limitations", "ethics", "ethical"}),
        ("broader impact", "societal impact", "future work"),
    ),
    (
        SectionCategory.EXPERIMENTS,
        frozenset(),
        frozenset(
            {
                "experiment",
                "experiments",
                "experimental",
                "evaluation",
                "evaluations",
                "result",
                "results",
                "ablation",
                "ablations",
                "empirical",
                "benchmark",
                "benchmarks",
                "performance",
                "comparison",
                "comparisons",
                "dataset",
                "datasets",
                "baseline",
                "baselines",
                "setup",
                "setting",
                "settings",
                "metric",
                "metrics",
            }
        ),
        ("case study", "case studies", "implementation details"),
    ),
    (
        SectionCategory.METHOD,
        frozenset(),
        frozenset(
            {
                "method",
                "methods",
                "methodology",
                "approach",
                "approaches",
                "model",
                "models",
                "framework",
                "algorithm",
                "algorithms",
                "architecture",
                "proposed",
                "preliminary",
                "preliminaries",
                "formulation",
                "definition",
                "definitions",
                "notation",
                "notations",
                "theory",
                "theoretical",
                "analysis",
                "design",
                "training",
                "objective",
                "our",
            }
        ),
        ("problem formulation", "problem setup", "problem setting", "problem statement"),
    ),
]
_WORD = re.compile(r"[a-z]+")
_MARKUP = re.compile(r"[*_`#]+")

_NUMBERING = re.compile(
    r"^(?:(?:section|chapter)\s+)?(?:[ivxlc]+|[a-z]|\d+)(?:\.\d+)*\.?\s+(?=\S)", re.IGNORECASE
)
_LETTER_TOP = re.compile(r"^[A-Z](?:\.\d+)*\.?\s+\S")
_NUMBER_DEPTH = re.compile(r"^(\d+|[A-Z])((?:\.\d+)*)\.?\s")


def normalise_heading(heading: str) -> str:
    """Lower-case a heading and strip numbering, markup and trailing punctuation."""
    h = (
        _MARKUP.sub("", heading).strip()
        if ("*" in heading or "_" in heading or "`" in heading or "#" in heading)
        else heading.strip()
    )
    h = _NUMBERING.sub("", h)
    return " ".join(h.split()).strip(" .:").lower()


@lru_cache(maxsize=1 << 16)
def classify_heading(heading: str) -> SectionCategory:
    """Map one heading to its category; unrecognised headings are OTHER."""
    h = normalise_heading(heading)
    words = _WORD.findall(h)
    if not words:
        return SectionCategory.OTHER
    first, bag = words[0], set(words)
    for category, openers, anywhere, phrases in _RULES:
        if first in openers or not anywhere.isdisjoint(bag):
            return category
        for phrase in phrases:
            if phrase in h:
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
