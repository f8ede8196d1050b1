"""Boundary precision / recall / F1 of a segmenter against a hand-segmented gold file.

Gold format: one sentence per line, blank lines between paragraphs, ``#`` comments. Sentences of a paragraph
are joined with one space, or with a newline after a line ending in `` ⏎``; a ``⏎`` inside a line stands for a
newline inside the sentence (a hard wrap). A boundary is the end offset of every sentence but the last of its
paragraph, so a segmenter is scored only on the decisions it has to make.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ratio_bench.corpus.segmenters import SpanFn

WRAP = "\u23ce"


@dataclass(frozen=True)
class GoldParagraph:
    text: str
    boundaries: frozenset[int]
    n_sentences: int


def load_gold(path: str | Path) -> list[GoldParagraph]:
    paragraphs: list[GoldParagraph] = []
    current: list[str] = []

    def flush() -> None:
        if not current:
            return
        text, ends = "", []
        for i, line in enumerate(current):
            sep_newline = line.endswith(" " + WRAP)
            sentence = line.removesuffix(" " + WRAP).replace(WRAP, "\n")
            text += sentence
            ends.append(len(text))
            if i < len(current) - 1:
                text += "\n" if sep_newline else " "
        paragraphs.append(GoldParagraph(text, frozenset(ends[:-1]), len(current)))
        current.clear()

    for raw in Path(path).read_text(encoding="utf-8").splitlines():
        if raw.startswith("#"):
            continue
        if not raw.strip():
            flush()
        else:
            current.append(raw.rstrip())
    flush()
    return paragraphs


@dataclass(frozen=True)
class BoundaryScores:
    tp: int
    fp: int
    fn: int

    @property
    def precision(self) -> float:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else 1.0

    @property
    def recall(self) -> float:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else 1.0

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0


def score_segmenter(segment: SpanFn, gold: list[GoldParagraph]) -> BoundaryScores:
    tp = fp = fn = 0
    for para in gold:
        spans = segment(para.text)
        predicted = {end for _, end in spans[:-1]}
        # A boundary predicted after trailing closing punctuation or before whitespace counts at the same place.
        predicted = {_snap(para.text, b) for b in predicted}
        tp += len(predicted & para.boundaries)
        fp += len(predicted - para.boundaries)
        fn += len(para.boundaries - predicted)
    return BoundaryScores(tp, fp, fn)


def _snap(text: str, offset: int) -> int:
    """Move an offset left over whitespace, so ``end`` and ``end + 1`` (with the space) compare equal."""
    while offset > 0 and text[offset - 1].isspace():
        offset -= 1
    return offset
