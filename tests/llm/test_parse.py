import pytest

from ratio_bench.llm.parse import InvalidReply, parse_reply


@pytest.mark.parametrize(
    "text, decision",
    [
        ('{"decision": true, "confidence": 0.9, "reason": "ok"}', True),
        ('```json\n{"decision": false, "reason": "x"}\n```', False),
        ('Here it is: {"decision": "True", "reason": "x"} hope that helps', True),
        ('{"decision": "no"}', False),
    ],
)
def test_verdicts_in_the_shapes_models_produce(text, decision):
    assert parse_reply(text, "verdict").decision is decision


def test_extra_fields_and_confidence_words_are_kept():
    v = parse_reply(
        '{"decision": true, "problem_valid": false, "confidence": "high", "reason": " r "}', "verdict"
    )
    assert v.extra == {"problem_valid": False} and v.confidence == 0.9 and v.reason == "r"
    assert parse_reply('{"decision": true, "confidence": 7}', "verdict").confidence == 1.0


@pytest.mark.parametrize(
    "text", ["not json at all", '{"label": true}', '{"decision": "maybe"}', "[true]", '{"decision": tru']
)
def test_unusable_replies_raise(text):
    with pytest.raises(InvalidReply):
        parse_reply(text, "verdict")


def test_pairwise_and_marker_lists():
    assert parse_reply('{"winner": "b", "confidence": 0.5}', "pairwise").winner == "B"
    assert parse_reply('{"winner": "Tie"}', "pairwise").winner == "tie"
    with pytest.raises(InvalidReply):
        parse_reply('{"winner": "C"}', "pairwise")
    assert parse_reply('{"markers": ["a", " ", "b "]}', "markers").markers == ("a", "b")
    with pytest.raises(InvalidReply):
        parse_reply('{"markers": "a"}', "markers")
