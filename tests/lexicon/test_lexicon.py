import shutil

import pytest

from ratio_bench.core.relations import RELATIONS
from ratio_bench.lexicon import DISTRACTOR_CATEGORIES, Lexicon, LexiconError, default_lexicon_dir


@pytest.fixture(scope="module")
def lexicon() -> Lexicon:
    return Lexicon.load()


def test_published_lexicon_sizes(lexicon):
    labels = lexicon.labels()
    manual = {
        r: sum(1 for m in lexicon.markers(r) if lexicon.entries[m].stage == "manual") for r in RELATIONS
    }
    # at least the paper's manual counts (84 / 13 / 72)
    assert manual["address"] >= 84 and manual["broaden"] >= 13 and manual["specify"] >= 72
    assert sum(labels[c] for c in DISTRACTOR_CATEGORIES) >= 500
    assert all(labels[c] > 0 for c in DISTRACTOR_CATEGORIES)


def test_labels_are_pairwise_disjoint(lexicon):
    seen = {}
    for label in RELATIONS + DISTRACTOR_CATEGORIES:
        for m in lexicon.markers(label):
            assert m not in seen, f"{m!r} in both {seen[m]} and {label}"
            seen[m] = label
    assert lexicon.connective_conflicts() == []


def test_every_entry_has_a_rationale(lexicon):
    assert all(e.rationale.strip() for e in lexicon.entries.values())


def test_overlapping_labels_are_rejected(tmp_path):
    d = tmp_path / "lex"
    shutil.copytree(default_lexicon_dir(), d)
    with (d / "broaden.tsv").open("a", encoding="utf-8") as fh:
        fh.write("however\tmanual\tdeliberately wrong\n")
    with pytest.raises(LexiconError, match="not disjoint.*however"):
        Lexicon.load(d)


def test_malformed_lexicon_files(tmp_path):
    d = tmp_path / "lex"
    shutil.copytree(default_lexicon_dir(), d)
    (d / "specify.tsv").write_text("marker\tstage\trationale\nfor example\tguessed\tx\n", encoding="utf-8")
    with pytest.raises(LexiconError, match="unknown stage"):
        Lexicon.load(d)
    with pytest.raises(LexiconError, match="missing lexicon manifest"):
        Lexicon.load(tmp_path)


@pytest.mark.parametrize(
    "sentence, marker, label, stage",
    [
        ("To address this issue, we apply dropout.", "to address this issue", "address", "manual"),
        ("TO ADDRESS THIS ISSUE, we apply dropout.", "to address this issue", "address", "manual"),
        ("To address  this\tissue , we apply dropout.", "to address this issue", "address", "manual"),
        (
            "To address the lack of labels, we pretrain.",
            "to address the lack of labels",
            "address",
            "connective",
        ),
        ("More generally, any proxy breaks under pressure.", "more generally", "broaden", "manual"),
        ("For example, in this setting, the loss diverges.", "for example", "specify", "manual"),
        (
            "To address these limitations, we propose QuantEvolver, a framework.",
            "to address these limitations",
            "address",
            "manual",
        ),
        ("For example, the loss diverges.", "for example", "specify", "manual"),
        ("However, to address this issue, we go.", "however", "explicit_contrast", "manual"),
        ("In general, models overfit.", "in general", "common_irrelevant", "manual"),
    ],
)
def test_match(lexicon, sentence, marker, label, stage):
    m = lexicon.match(sentence)
    assert (m.marker, m.label, m.stage) == (marker, label, stage)
    assert sentence[m.end - 1] == ","


@pytest.mark.parametrize(
    "sentence",
    [
        "For example the loss diverges quickly.",  # marker not followed by a comma
        "To address the lack of labelled data in many settings, we pretrain.",  # connective: > 5 extra words
        "To address the data gap in many fields, to our surprise, we pretrain.",  # over 7 words to the first comma
        "The model, which is large, overfits.",
        "One two three four five six seven eight, nine.",
        "",
    ],
)
def test_no_match(lexicon, sentence):
    assert lexicon.match(sentence) is None


def test_fingerprint_is_stable_and_content_based(lexicon, tmp_path):
    assert lexicon.fingerprint() == Lexicon.load().fingerprint()
    d = tmp_path / "lex"
    shutil.copytree(default_lexicon_dir(), d)
    with (d / "specify.tsv").open("a", encoding="utf-8") as fh:
        fh.write("as a worked example\tmanual\tadded in a test\n")
    assert Lexicon.load(d).fingerprint() != lexicon.fingerprint()
