import pytest

from ratio_bench.core.relations import RELATIONS
from ratio_bench.llm.prompts import PromptError, get_prompt, load_prompts, prompts_for


def test_every_prompt_file_loads_with_its_metadata():
    prompts = load_prompts()
    assert {p.purpose for p in prompts.values()} >= {
        "pair-verdict",
        "marker-classifier",
        "list-preference",
        "marker-generation",
    }
    for p in prompts.values():
        assert p.version >= 1 and len(p.sha256) == 64 and p.description


@pytest.mark.parametrize("relation", RELATIONS)
def test_each_relation_has_two_silver_prompts_with_both_modes(relation):
    silver = prompts_for(relation, "pair-verdict")
    assert len(silver) >= 2
    for p in silver:
        s = p.messages("silver", query="q", marker="to address this", gold="g")
        c = p.messages("candidate", query="q", candidate="c")
        assert s[1]["content"] == "q. to address this, g"
        assert c[1]["content"] == "s1: q\ns2: c"
        # the candidate mode drops the note about the connecting phrase (spec I.3)
        assert "connecting" in s[0]["content"] and "connecting" not in c[0]["content"]
        for msgs in (s, c):
            assert "$" not in msgs[0]["content"] and '"decision"' in msgs[0]["content"]


def test_pairwise_prompt_differs_per_relation_only_in_its_goal():
    p = get_prompt("inspiration-pairwise")
    texts = {r: p.messages(r, query="q", list_a="1. a", list_b="1. b")[0]["content"] for r in RELATIONS}
    assert len(set(texts.values())) == 3
    assert all('"winner"' in t for t in texts.values())
    assert "broadening or generalising the query" in texts["broaden"]


def test_missing_fields_and_unknown_modes_are_clear_errors():
    p = get_prompt("address-silver-split")
    with pytest.raises(PromptError, match="missing field"):
        p.messages("silver", query="q")
    with pytest.raises(PromptError, match="no mode"):
        p.messages("pairwise", query="q")
    with pytest.raises(PromptError, match="unknown prompt"):
        get_prompt("nope")
    gen = get_prompt("marker-generator")
    with pytest.raises(PromptError, match="missing field"):
        gen.messages("address", marker="to address this")  # $n must be supplied
    assert "up to 5 other" in gen.messages("address", {"n": 5}, marker="x")[0]["content"]
