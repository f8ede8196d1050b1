"""The corpus stage as one function: read, section, clean blocks, segment - with counts and rejects."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from ratio_bench.corpus.readers import PaperReader
from ratio_bench.corpus.records import Paper
from ratio_bench.corpus.segmentation import split_sentences


@dataclass
class SegmentedPaper:
    """A paper with its sentences, one list per kept paragraph (same order as ``paper.paragraphs``)."""

    paper: Paper
    sentences: list[list[str]]


def segment_papers(reader: PaperReader, paths: Iterable[str | Path]) -> Iterator[SegmentedPaper]:
    """Read and segment every paper under ``paths``, counting sentences into the reader's report."""
    return segment(reader, reader.read(paths))


def segment(reader: PaperReader, papers: Iterable[Paper]) -> Iterator[SegmentedPaper]:
    """Segment papers coming from ``reader``, counting sentences into its report."""
    for paper in papers:
        sentences = [split_sentences(p.text) for p in paper.paragraphs]
        reader.report[paper.source_file].sentences += sum(map(len, sentences))
        yield SegmentedPaper(paper, sentences)


def paper_row(seg: SegmentedPaper) -> dict:
    """One row of :data:`~ratio_bench.corpus.records.PAPER_SCHEMA` (the corpus stage's Parquet output)."""
    return {
        **seg.paper.metadata(),
        "paragraphs": [
            {"section": para.section, "category": para.category.value, "text": para.text, "sentences": sents}
            for para, sents in zip(seg.paper.paragraphs, seg.sentences, strict=True)
        ],
    }
