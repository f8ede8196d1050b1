from collections import Counter

from ratio_bench.corpus.dates import parse_date
from ratio_bench.corpus.pipeline import SegmentedPaper
from ratio_bench.corpus.records import Paper
from ratio_bench.lexicon import Lexicon
from ratio_bench.lexicon.discover import count_spans, top_spans


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
