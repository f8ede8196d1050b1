"""Candidate discovery: the most frequent sentence-initial, comma-terminated spans of a corpus.

This is how the manual lexicon stage starts on a new corpus (the paper inspected the top 400 spans), and how a
maintainer sees which frequent openers the lexicon does not cover yet. Optionally, the nearest neighbours of
seed markers among those spans under a sentence-embedding model suggest further candidates.
"""

from __future__ import annotations

import csv
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ratio_bench.corpus.cleaning import MAX_MARKER_WORDS, leading_span
from ratio_bench.corpus.pipeline import SegmentedPaper
from ratio_bench.lexicon.model import Lexicon


def count_spans(
    papers: Iterable[SegmentedPaper], max_words: int = MAX_MARKER_WORDS
) -> tuple[Counter[str], int]:
    """Span counts over every sentence, and the number of sentences seen."""
    counts: Counter[str] = Counter()
    n = 0
    for sp in papers:
        for sentences in sp.sentences:
            for s in sentences:
                n += 1
                lead = leading_span(s, max_words)
                if lead:
                    counts[lead[0]] += 1
    return counts, n


@dataclass(frozen=True)
class SpanRow:
    span: str
    count: int
    label: str  # the lexicon label it already has, or ""


def top_spans(counts: Counter[str], lexicon: Lexicon, top: int) -> list[SpanRow]:
    rows = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:top]
    return [
        SpanRow(span, n, lexicon.entries[span].label if span in lexicon.entries else "") for span, n in rows
    ]


def write_spans(path: Path, rows: list[SpanRow]) -> None:
    with path.open("w", encoding="utf-8", newline="") as fh:
        w = csv.writer(fh, delimiter="\t", lineterminator="\n")
        w.writerow(("span", "count", "in_lexicon"))
        for r in rows:
            w.writerow((r.span, r.count, r.label))


def embedding_neighbours(
    seeds: list[str], spans: list[str], model, k: int = 10
) -> dict[str, list[tuple[str, float]]]:
    """The ``k`` spans closest to each seed marker by cosine similarity (``model``: a SentenceTransformer)."""

    vectors = model.encode(seeds + spans, normalize_embeddings=True, convert_to_numpy=True)
    seed_vecs, span_vecs = vectors[: len(seeds)], vectors[len(seeds) :]
    sims = seed_vecs @ span_vecs.T
    out = {}
    for i, seed in enumerate(seeds):
        order = np.argsort(-sims[i], kind="stable")
        out[seed] = [(spans[j], float(sims[i, j])) for j in order if spans[j] != seed][:k]
    return out
