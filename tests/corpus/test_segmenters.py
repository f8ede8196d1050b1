import pytest
from tests.helpers.cli import assert_user_error, run_ratio
from tests.helpers.corpus import DATA
from tests.helpers.segmentation_eval import load_gold, score_segmenter

from ratio_bench.corpus.segmenters import SEGMENTERS, get_segmenter


@pytest.mark.parametrize("name", SEGMENTERS)
def test_every_segmenter_scores_on_the_gold_set(name):
    pytest.importorskip(
        {"ratio": "ratio_bench", "blingfire": "blingfire", "pysbd": "pysbd", "syntok": "syntok"}[name]
    )
    scores = score_segmenter(get_segmenter(name), load_gold(DATA / "segmentation_gold.txt"))
    assert scores.tp > 250  # every alternative is a real segmenter, not a stub
    assert 0.0 < scores.f1 <= 1.0


def test_unknown_segmenter():
    with pytest.raises(ValueError, match="unknown segmenter"):
        get_segmenter("nltk-punkt-please")


def test_gold_format_wraps(tmp_path):
    p = tmp_path / "g.txt"
    p.write_text("# c\nOne sentence⏎wraps. ⏎\nTwo here.\nThree.\n\nSolo.\n", encoding="utf-8")
    gold = load_gold(p)
    assert gold[0].text == "One sentence\nwraps.\nTwo here. Three."
    assert gold[0].boundaries == {19, 29}
    assert gold[1].boundaries == frozenset()


def test_unknown_segmenter_is_a_user_error_naming_the_flag():
    assert_user_error(run_ratio("segment", "--segmenter", "nltk"), "--segmenter", "'nltk'", "blingfire")
