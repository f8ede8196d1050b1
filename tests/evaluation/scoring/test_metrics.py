import math

import pytest

from ratio_bench.evaluation.scoring.metrics import evaluate_run, query_metrics


def test_single_gold_identities():
    m = query_metrics(["a", "b", "g", "c"], {"g"}, ks=(1, 3, 10))
    assert m["recall_at_1"] == 0 and m["recall_at_3"] == 1 and m["hit_rate_at_3"] == 1
    assert m["mrr_at_3"] == pytest.approx(1 / 3) and m["mrr_at_1"] == 0
    assert m["map_at_10"] == m["mrr_at_10"]  # one relevant document: MAP = MRR
    assert m["precision_at_10"] == pytest.approx(m["recall_at_10"] / 10)
    assert m["ndcg_at_10"] == pytest.approx(1 / math.log2(4))


def test_several_relevant_documents():
    m = query_metrics(["x", "r1", "y", "r2"], {"r1", "r2", "r3"}, ks=(4,))
    assert m["recall_at_4"] == pytest.approx(2 / 3) and m["precision_at_4"] == pytest.approx(0.5)
    assert m["map_at_4"] == pytest.approx((1 / 2 + 2 / 4) / 3)
    ideal = 1 + 1 / math.log2(3) + 1 / math.log2(4)
    assert m["ndcg_at_4"] == pytest.approx((1 / math.log2(3) + 1 / math.log2(5)) / ideal)


def test_evaluate_run_averages_and_missing_queries_score_zero():
    run = {"q1": ["g1", "x"], "q2": ["x", "y"]}
    res = evaluate_run(run, {"q1": {"g1"}, "q2": {"g2"}, "q3": {"g3"}}, ks=(1, 10))
    assert res["recall_at_1"] == pytest.approx(1 / 3) and res["mrr_at_10"] == pytest.approx(1 / 3)
    with pytest.raises(ValueError):
        evaluate_run(run, {})


def test_with_one_gold_every_metric_is_a_function_of_its_rank():
    from ratio_bench.evaluation.entry.ranks import gold_rank_metric

    ks = (1, 3, 10, 100)
    for rank in range(0, 102):
        ranked = [f"x{i}" for i in range(100)]
        if 1 <= rank <= 100:
            ranked[rank - 1] = "g"
        for name, value in query_metrics(ranked, {"g"}, ks).items():
            assert gold_rank_metric(name, rank if rank <= 100 else 0) == pytest.approx(value), (name, rank)
