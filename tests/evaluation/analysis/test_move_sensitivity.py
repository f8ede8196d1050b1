"""Move sensitivity on a tiny model: a model that ignores the move is at chance; one that follows it is not."""

from __future__ import annotations

import numpy as np
import pytest
from tests.helpers.training import build_tiny, write_release

from ratio_bench.core.relations import RELATIONS
from ratio_bench.evaluation.analysis.move_sensitivity import markdown, measure, model_scorers, vector_scorer
from ratio_bench.evaluation.scoring.evaluate import load_split
from ratio_bench.retrieval.cache import EmbeddingCache
from ratio_bench.retrieval.registry import resolve


@pytest.fixture(scope="module")
def tiny_bert(tmp_path_factory):
    return build_tiny("bert", tmp_path_factory.mktemp("tiny"))


@pytest.fixture
def test_split(tmp_path):
    root = write_release(tmp_path / "r", n_val=20, relations=RELATIONS, splits=("test",))
    return load_split(root, "test")


def test_a_model_that_ignores_the_move_is_at_chance(tmp_path, tiny_bert, test_split):
    setup = resolve(str(tiny_bert), "generic")  # one query prompt for all three moves
    scorers = model_scorers(dict.fromkeys(RELATIONS, setup), test_split, EmbeddingCache(tmp_path / "c"))
    report = measure(test_split, scorers)
    for v in report["relations"].values():
        assert v["move_accuracy_expected"] == pytest.approx(1 / 3, abs=1e-12)  # exact: every rank ties
        assert v["mrr_right_move"] == pytest.approx(v["mrr_wrong_moves"])
        assert 0 <= v["move_accuracy"] <= 1
    accuracy = np.mean([v["move_accuracy"] for v in report["relations"].values()])
    assert 0.15 < accuracy < 0.55  # 60 seeded draws at p = 1/3: well inside 4 standard deviations
    assert "chance" in markdown(report, "tiny") and "0.333" in markdown(report, "tiny")


def test_a_model_that_follows_the_move_scores_full_accuracy(test_split):
    row = {c: j for j, c in enumerate(test_split.corpus_ids)}
    corpus = np.eye(len(row))  # one axis per candidate

    def under(move):
        def queries(rel, ids, texts):  # the right move points at the gold, a wrong one at a distractor
            golds = test_split.queries[rel][2]
            return np.stack([corpus[row[g] if move == rel else row["test-d0"]] for g in golds])

        return vector_scorer(corpus, queries)

    report = measure(test_split, {m: under(m) for m in RELATIONS})
    for v in report["relations"].values():
        assert v["move_accuracy"] == 1.0 and v["move_accuracy_expected"] == 1.0
        assert v["mrr_right_move"] == 1.0 and v["mrr_wrong_moves"] < 1.0
        assert v["cross_move_confusion"] == 0.0


@pytest.mark.slow  # ~8 s (the analysis itself is tested in process); make test-all runs it
def test_cli_trio_writes_json_and_markdown(tmp_path, tiny_bert):
    import json

    from tests.helpers.cli import assert_user_error, run_ratio

    root = write_release(tmp_path / "r", n_val=6, relations=RELATIONS, splits=("test",))
    trio = [f"{r}={tiny_bert}" for r in RELATIONS]
    out = tmp_path / "ms.json"
    common = ["--dataset", root, "--split", "test", "--cache-dir", tmp_path / "c"]
    run = run_ratio("analyze", "move-sensitivity", "--model", *trio, *common, "--out", out)
    assert run.code == 0, run.err
    report = json.loads(out.read_text())
    assert report["chance_accuracy"] == pytest.approx(1 / 3) and set(report["relations"]) == set(RELATIONS)
    assert "move accuracy" in out.with_suffix(".md").read_text()
    bad = run_ratio("analyze", "move-sensitivity", "--model", trio[0], "bm25", *common)
    assert_user_error(bad, "--model", code=2)
