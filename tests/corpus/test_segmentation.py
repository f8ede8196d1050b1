import pytest
from tests.helpers.corpus import DATA
from tests.helpers.segmentation_eval import load_gold, score_segmenter

from ratio_bench.corpus.segmentation import sentence_spans, split_sentences

GOLD = DATA / "segmentation_gold.txt"


def test_gold_set_size():
    gold = load_gold(GOLD)
    assert sum(p.n_sentences for p in gold) >= 300


def test_f1_on_gold_set_meets_target():
    scores = score_segmenter(sentence_spans, load_gold(GOLD))
    assert scores.f1 >= 0.97, scores


@pytest.mark.parametrize(
    "text, expected",
    [
        (
            "We use dropout (Smith et al., 2021). It helps.",
            ["We use dropout (Smith et al., 2021).", "It helps."],
        ),
        (
            "See Fig. 3 and Eq. (2) for details. Then stop.",
            ["See Fig. 3 and Eq. (2) for details.", "Then stop."],
        ),
        (
            "Results, e.g. the loss, improve. We i.e. stop.",
            ["Results, e.g. the loss, improve.", "We i.e. stop."],
        ),
        ("As in Smith et al. [4], we train. Done here.", ["As in Smith et al. [4], we train.", "Done here."]),
        (
            "It was proposed by Lee et al. The idea works.",
            ["It was proposed by Lee et al.", "The idea works."],
        ),
        ("We use v1.2.3 with a rate of 0.5. It works.", ["We use v1.2.3 with a rate of 0.5.", "It works."]),
        ("Let \\(x. Y\\) be given. Then go.", ["Let \\(x. Y\\) be given.", "Then go."]),
        ("Let $a. B$ hold. Then go.", ["Let $a. B$ hold.", "Then go."]),
        ("1. We train. 2. We test.", ["1. We train.", "2. We test."]),
        ("Is it true? Yes! It is.", ["Is it true?", "Yes!", "It is."]),
        ('He said "stop." Then left.', ['He said "stop."', "Then left."]),
        ("A line that wraps\nin the middle. Next one.", ["A line that wraps\nin the middle.", "Next one."]),
        ("See App. B for more. The app. Crashed.", ["See App. B for more.", "The app.", "Crashed."]),
        ("", []),
    ],
)
def test_cases(text, expected):
    assert split_sentences(text) == expected


def test_sentences_are_exact_slices():
    text = "  First sentence here.   Second one follows.\n"
    spans = sentence_spans(text)
    assert [text[a:b] for a, b in spans] == ["First sentence here.", "Second one follows."]
