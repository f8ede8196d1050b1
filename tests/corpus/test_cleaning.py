import pytest

from ratio_bench.corpus.cleaning import (
    CleanedPair,
    Cleaner,
    is_too_short,
    leading_span,
    remove_noise,
    strip_leading_clause,
    strip_list_marker,
    strip_ordinal_prefix,
)


def test_remove_noise_drops_invalid_characters_and_normalises():
    assert (
        remove_noise("Dropout\x00 helps \ufb01ne-tuning\ufffd  a lot .") == "Dropout helps fine-tuning a lot."
    )
    assert remove_noise("zero\u200bwidth\u00a0space") == "zerowidth space"


@pytest.mark.parametrize(
    "raw, clean",
    [
        ("[12] The model overfits.", "The model overfits."),
        ("1) The model overfits.", "The model overfits."),
        ("(b) The model overfits.", "The model overfits."),
        ("2. The model overfits.", "The model overfits."),
        ("• The model overfits.", "The model overfits."),
        ("1.5 times faster than before.", "1.5 times faster than before."),
        ("A model overfits.", "A model overfits."),
    ],
)
def test_strip_list_marker(raw, clean):
    assert strip_list_marker(raw) == clean


@pytest.mark.parametrize(
    "raw, clean",
    [
        ("Second, we apply dropout.", "we apply dropout."),
        ("firstly: we apply dropout.", "we apply dropout."),
        ("Finally, we apply dropout.", "Finally, we apply dropout."),  # not an ordinal: left for the lexicon
        ("(ii) we apply dropout.", "we apply dropout."),
        ("Third, (a) we apply dropout.", "we apply dropout."),
    ],
)
def test_strip_ordinal_prefix(raw, clean):
    assert strip_ordinal_prefix(raw) == clean


def test_leading_span_up_to_the_first_comma_within_the_word_limit():
    assert leading_span("To address this issue, we, in turn, apply dropout.") == ("to address this issue", 22)
    assert leading_span("One two three four five six seven eight, nine.") is None
    assert leading_span("One two three four five six seven, eight.") == (
        "one two three four five six seven",
        34,
    )
    assert leading_span("For  example , the model.") == ("for example", 14)
    assert leading_span("No comma at all.") is None
    assert leading_span(", leading comma") is None


def test_strip_leading_clause():
    markers = {"however", "in particular"}
    assert strip_leading_clause("However, the model overfits.", markers) == ("the model overfits.", "however")
    assert strip_leading_clause("However the model overfits.", markers) == (
        "However the model overfits.",
        None,
    )


def test_short_sentence_threshold():
    assert is_too_short("x" * 34) and not is_too_short("x" * 35)


def test_cleaner_pair_lowercases_and_keeps_cased_forms():
    c = Cleaner(clause_markers={"however"})
    pair = c.clean_pair(
        "However, the model overfits badly on small data.", "second, we apply dropout to all hidden layers."
    )
    assert isinstance(pair, CleanedPair)
    assert pair.query == "the model overfits badly on small data."
    assert pair.query_cased == "The model overfits badly on small data."
    assert pair.gold == "we apply dropout to all hidden layers."
    assert pair.gold_cased == "We apply dropout to all hidden layers."
    assert pair.query_clause == "however"
    assert (
        Cleaner(lowercase=False)
        .clean_pair("The model overfits badly on small data.", "we apply dropout to all hidden layers.")
        .gold
        == "We apply dropout to all hidden layers."
    )


def test_cleaner_rejects_short_sides():
    c = Cleaner()
    assert c.clean_pair("Too short.", "we apply dropout to every single layer.") == "short_query"
    assert c.clean_pair("The model overfits badly on small data.", "we do.") == "short_gold"
