"""Named sentence segmenters behind one signature, for comparison and for choosing one in a build.

``ratio`` is ours (:mod:`ratio_bench.corpus.segmentation`); ``blingfire``, ``pysbd`` and ``syntok`` are the
usual alternatives (installed with the ``compare`` extra). Each adapter maps the library's output back to
offsets in the input so that every segmenter is scored on the same boundaries.
"""

from __future__ import annotations

from collections.abc import Callable

from ratio_bench.core import extras
from ratio_bench.core.errors import RatioError
from ratio_bench.corpus.segmentation import sentence_spans

Spans = list[tuple[int, int]]
SpanFn = Callable[[str], Spans]


def _blingfire() -> SpanFn:
    blingfire = extras.load("blingfire")

    def run(text: str) -> Spans:
        _, offsets = blingfire.text_to_sentences_and_offsets(text)
        return [(a, b) for a, b in offsets]

    return run


def _pysbd() -> SpanFn:
    pysbd = extras.load("pysbd")

    seg = pysbd.Segmenter(language="en", clean=False, char_span=True)

    def run(text: str) -> Spans:
        return [(s.start, s.start + len(s.sent.rstrip())) for s in seg.segment(text)]

    return run


def _syntok() -> SpanFn:
    segmenter = extras.load("syntok.segmenter")

    def run(text: str) -> Spans:
        spans: Spans = []
        for paragraph in segmenter.analyze(text):
            for sentence in paragraph:
                start = sentence[0].offset
                last = sentence[-1]
                spans.append((start, last.offset + len(last.value)))
        return spans

    return run


_FACTORIES: dict[str, Callable[[], SpanFn]] = {
    "ratio": lambda: sentence_spans,
    "blingfire": _blingfire,
    "pysbd": _pysbd,
    "syntok": _syntok,
}

SEGMENTERS = tuple(_FACTORIES)


class UnknownSegmenterError(RatioError, ValueError):
    """A segmenter name that is not one of :data:`SEGMENTERS`."""


class SegmenterUnavailableError(RatioError, ImportError):
    """A comparison segmenter whose library is not installed."""


def get_segmenter(name: str) -> SpanFn:
    """A span function by name; raises a clear error when the library is not installed."""
    try:
        factory = _FACTORIES[name]
    except KeyError:
        raise UnknownSegmenterError(
            f"unknown segmenter {name!r} for --segmenter; choose from {', '.join(SEGMENTERS)}"
        ) from None
    try:
        return factory()
    except ImportError as e:
        raise SegmenterUnavailableError(
            f"--segmenter {name} needs its library: pip install 'ratio-bench[compare]' ({e})"
        ) from e
