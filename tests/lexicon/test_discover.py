from collections import Counter

from ratio_bench.corpus.dates import parse_date
from ratio_bench.corpus.pipeline import SegmentedPaper
from ratio_bench.corpus.records import Paper
from ratio_bench.lexicon import Lexicon
from ratio_bench.lexicon.discover import count_spans, first_span, top_spans


def test_first_span():
    assert first_span("In this paper, we study X.") == "in this paper"
    assert first_span("One two three four five six seven eight, nine.") is None
    assert first_span("No comma here.") is None
    assert first_span(", leading comma") is None


def test_counts_and_lexicon_marking():
    sents = [["However, a.", "In our view, b.", "However, c."], ["In our view, d.", "However, e.", "Plain."]]
    paper = SegmentedPaper(Paper("p", "s", parse_date(None), []), sents)
    counts, n = count_spans([paper])
    assert n == 6 and counts == Counter({"however": 3, "in our view": 2})
    rows = top_spans(counts, Lexicon.load(), top=5)
    assert [(r.span, r.count, r.label) for r in rows] == [
        ("however", 3, "explicit_contrast"),
        ("in our view", 2, ""),
    ]
