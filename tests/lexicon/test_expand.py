import shutil

import pytest

from ratio_bench.core.resources import data_path
from ratio_bench.lexicon import Lexicon, LexiconError, default_lexicon_dir
from ratio_bench.lexicon.expand import accept_reviewed, expand, expand_template, write_review

TERMS = {
    "response": ["address", "mitigate"],
    "problem": ["issue", "analysis"],
    "generalize": ["generalize"],
    "case": ["observation"],
    "report": ["suggest"],
}


TEMPLATES = data_path("lexicon", "templates")


def test_slots_inflection_and_demonstrative_agreement():
    got = expand_template("(in order) to {response:VB} {dem} ({problem})", TERMS)
    assert "to address this issue" in got and "to mitigate those analyses" in got
    assert "in order to address these issues" in got and "to address that" in got
    assert "to address these issue" not in got and "to address this issues" not in got  # number agreement
    assert expand_template("{response:VBG} {dem}", TERMS) == [
        "addressing this",
        "addressing that",
        "mitigating this",
        "mitigating that",
    ]
    assert expand_template("{dem} {report:VBZ} {in general|a more general}", TERMS) == [
        "this suggests in general",
        "that suggests in general",
        "this suggests a more general",
        "that suggests a more general",
    ]


def test_unknown_slot_is_a_clear_error():
    with pytest.raises(LexiconError, match="no term list"):
        expand_template("to {fix:VB} {dem}", TERMS)


def test_published_templates_expand_deterministically():
    a, b = expand(TEMPLATES), expand(TEMPLATES)
    assert a == b and {c.relation for c in a} == {"address", "broaden"}
    markers = {c.marker for c in a}
    assert {
        "to mitigate these risks",
        "addressing this challenge",
        "a possible solution for this issue",
        "to generalize these observations",
        "generalizing this",
    } <= markers


def test_review_then_accept_joins_the_lexicon_with_stage_pattern(tmp_path):
    lex_dir = tmp_path / "lex"
    shutil.copytree(default_lexicon_dir(), lex_dir)
    review = tmp_path / "review.tsv"
    counts = write_review(review, expand(TEMPLATES, ["broaden"]), Lexicon.load(lex_dir))
    assert counts["new"] > 0
    lines = review.read_text().splitlines()
    # a reviewer accepts two rows
    accepted = [
        i
        for i, line in enumerate(lines)
        if line.startswith(("to generalize these findings\t", "generalizing these results\t"))
    ]
    assert len(accepted) == 2
    for i in accepted:
        lines[i] += "accept"  # the decision column is the last one, left empty for new candidates
    review.write_text("\n".join(lines) + "\n")
    assert accept_reviewed(review, lex_dir) == {"broaden": 2}
    lex = Lexicon.load(lex_dir)
    assert lex.entries["to generalize these findings"].stage == "pattern"
    assert lex.match("To generalize these findings, we look at any contraction.").label == "broaden"
    assert accept_reviewed(review, lex_dir) == {}  # idempotent
