import pytest

from ratio_bench.judge.pairwise_stats import preferred_system, query_preference, relation_stats


def test_a_reply_names_a_system_through_its_order():
    assert preferred_system("A", first_is_a=True) == "first"
    assert preferred_system("A", first_is_a=False) == "second"
    assert preferred_system("B", first_is_a=False) == "first"
    assert preferred_system("tie", first_is_a=True) == "tie"
    assert preferred_system(None, first_is_a=True) is None


def test_a_query_prefers_a_system_only_when_both_orders_agree():
    assert query_preference("A", "B") == "first"
    assert query_preference("B", "A") == "second"
    assert query_preference("tie", "tie") == "tie"
    assert query_preference("A", "A") is None  # the same slot twice: position, not preference
    assert query_preference("A", "tie") is None
    assert query_preference("A", None) is None


def test_rates_leave_out_queries_with_an_unusable_reply():
    replies = [("A", "B")] * 6 + [("B", "A")] * 2 + [("A", "A")] * 2 + [("tie", "tie")] + [(None, "B")]
    s = relation_stats(replies)
    assert (s["queries"], s["judged"], s["unusable"]) == (12, 11, 1)
    assert (s["preferred_first"], s["preferred_second"], s["stable"], s["stable_ties"]) == (6, 2, 9, 1)
    assert s["stable_share"] == pytest.approx(9 / 11)
    assert s["win_rate_first"] == pytest.approx(6 / 8)
    assert s["win_p_value"] == pytest.approx(2 * (1 + 8 + 28) / 256)  # P(X <= 2) + P(X >= 6), n = 8
    assert (s["tie_replies"], s["slot_a_replies"]) == (2, 12)  # A: 6 + 2 + 4 of the 20 decisive replies
    assert s["slot_a_rate"] == pytest.approx(12 / 20)


def test_no_decisive_query_has_no_win_rate():
    s = relation_stats([("tie", "tie"), ("A", "A")])
    assert s["win_rate_first"] is None and s["win_p_value"] is None and s["stable_share"] == 0.5
