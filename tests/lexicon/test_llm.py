import csv
import shutil

import pytest
from tests.helpers.openai_server import expected_decision

from ratio_bench.lexicon import Lexicon, default_lexicon_dir
from ratio_bench.lexicon.expand import accept_reviewed
from ratio_bench.lexicon.llm import classify_label, llm_classify, llm_expand
from ratio_bench.lexicon.model import LexiconError
from ratio_bench.llm.prompts import get_prompt

SEEDS = ["to address this issue", "to remedy this shortcoming of prior work here"]


def read(path):
    with path.open(encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh, delimiter="\t"))


def test_classify_label_thresholds():
    assert classify_label(True, 0.95, 0.8) == "strong-true"
    assert classify_label(True, 0.5, 0.8) == "weak-true"
    assert classify_label(True, None, 0.8) == "weak-true"
    assert classify_label(False, 0.99, 0.8) == "false"
    assert classify_label(None, None, 0.8) == "invalid"


@pytest.mark.parametrize("threshold, strong", [(0.8, True), (0.9, False)])
def test_expand_classify_accept(tmp_path, fake_server, make_judge, threshold, strong):
    judge = make_judge(fake_server)
    review = tmp_path / "llm.tsv"
    counts = llm_expand("address", SEEDS, judge, Lexicon.load(), review)
    rows = read(review)
    # the fake model returns "<seed> in practice", "in response to <seed>" and the seed itself: the seed is
    # dropped, and so is any candidate longer than seven words
    assert {r["marker"] for r in rows} == {
        "to address this issue in practice",
        "in response to to address this issue",
    }
    assert counts["dropped_malformed"] == 4 and counts["new"] == 2
    assert all(r["template"].startswith("llm-expand seed: ") for r in rows)

    labels = llm_classify(review, judge, strong=threshold)
    rows = read(review)
    classifier = get_prompt("address-marker-classifier")
    for r in rows:
        accepted = expected_decision(classifier.messages("default", marker=r["marker"]))
        want = ("strong-true" if strong else "weak-true") if accepted else "false"
        assert r["llm_label"] == want and (r["decision"] == "accept") == (want == "strong-true")
    assert sum(labels[k] for k in ("strong-true", "weak-true", "false")) == 2

    lexdir = tmp_path / "lexicon"
    shutil.copytree(default_lexicon_dir(), lexdir)
    added = accept_reviewed(review, lexdir, stage="llm")
    n_strong = sum(r["llm_label"] == "strong-true" for r in rows)
    assert sum(added.values()) == n_strong
    lex = Lexicon.load(lexdir)
    for r in rows:
        if r["llm_label"] == "strong-true":
            assert lex.entries[r["marker"]].stage == "llm" and lex.entries[r["marker"]].label == "address"


def test_accepting_a_row_that_is_not_strong_true_is_refused(tmp_path):
    review = tmp_path / "r.tsv"
    review.write_text(
        "marker\trelation\ttemplate\tin_lexicon\tdecision\tllm_label\tllm_confidence\tllm_reason\n"
        "to fix the above problem\taddress\tllm-expand seed: x\t\taccept\tweak-true\t0.5\tunsure\n"
    )
    lexdir = tmp_path / "lexicon"
    shutil.copytree(default_lexicon_dir(), lexdir)
    with pytest.raises(LexiconError, match="not labelled strong-true"):
        accept_reviewed(review, lexdir, stage="llm")
