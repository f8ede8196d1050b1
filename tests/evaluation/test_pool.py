"""The judged pool and ``ratio score --qrels judged-hard|judged-soft`` on the tiny judged release.

The pool is filled by hand with the verdicts the fake judge of tests/judge/test_candidates.py gives (prompt 1
accepts "good"/"nice", prompt 2 "good"/"fine") on the 14 pairs the two runs retrieve. BM25 ranks all nine
candidates of every query, so its top 10 holds 27 pairs, 14 of them judged; under judged-hard each query has
its gold plus one accepted candidate in the list (P@10 = 2/10), under judged-soft 2, 3 and 4 (P@10 = 9/30).
"""

import json

import pytest

from cli_helpers import assert_user_error, run_ratio
from conftest import JUDGED_CORPUS, JUDGED_QUERIES, JUDGED_RUNS, write_judged_release
from ratio_bench.evaluation.pool import JudgedPool, PoolError, judged_coverage, judged_qrels

WORDS = {"p1@v1/candidate": {"good", "nice"}, "p2@v1/candidate": {"good", "fine"}}


def rows(judge_model="fake-judge"):
    pairs = {(q, c) for run in JUDGED_RUNS.values() for q, ids in run.items() for c in ids}
    pairs |= {(q, g) for q, (_, g, _) in JUDGED_QUERIES.items()}
    return [
        {"query_id": q, "candidate_id": c, "prompt": prompt, "prompt_sha256": "0" * 64, "judge_model": judge_model,
         "judge_settings": "{}", "status": "ok", "decision": bool(set(JUDGED_CORPUS[c][0].split()) & words),
         "confidence": 0.8}
        for q, c in sorted(pairs) for prompt, words in WORDS.items()
    ]  # fmt: skip


@pytest.fixture
def pool(judged_release):
    manifest = json.loads((judged_release / "manifest.json").read_text())
    p = JudgedPool(judged_release / "judgments", manifest)
    assert p.add("address", rows()) == 28
    return p


def test_pool_keeps_stored_verdicts_and_gives_relevance_by_agreement(pool, judged_release):
    assert pool.add("address", rows()) == 0  # nothing new: the file is left alone
    hard, judged = pool.relevance("address", "hard")
    soft, _ = pool.relevance("address", "soft")
    assert len(judged) == 14
    assert hard == {"q1": {"d1", "g1"}, "q2": {"d5"}, "q3": {"d1"}}
    assert soft == {"q1": {"d1", "g1"}, "q2": {"d2", "d5"}, "q3": {"d1", "d2", "d3", "g3"}}
    qrels = judged_qrels(pool, "address", ["q1", "q2"], ["g1", "g2"], "judged-hard")
    assert qrels == {"q1": {"d1", "g1"}, "q2": {"d5", "g2"}}
    assert judged_coverage(pool, "address", {"q1": ["d1", "d2", "g1", "d4"]}) == 0.75
    manifest = json.loads((judged_release / "manifest.json").read_text())
    reopened = JudgedPool(judged_release / "judgments", manifest)
    assert reopened.relevance("address", "hard") == (hard, judged)


def test_a_pool_of_two_judges_is_not_scored(pool):
    pool.add("address", rows("other-judge"))
    with pytest.raises(PoolError, match="2 judges"):
        pool.relevance("address", "hard")


def test_score_against_judged_qrels_with_coverage(pool, judged_release, tmp_path):
    base = ("score", "--model", "bm25", "--dataset", judged_release, "--relations", "address")
    mined = run_ratio(*base)
    assert mined.code == 0, mined.err
    assert "address judged@10 51.9%" in mined.out  # 14 of 27 pairs
    hard = run_ratio(*base, "--qrels", "judged-hard")
    assert hard.code == 0, hard.err
    assert "address (judged-hard): HR@10 100.0 P@10 20.0" in hard.out and "judged@10 51.9%" in hard.out
    soft = run_ratio(*base, "--qrels", "judged-soft", "--pool", judged_release / "judgments")
    assert "address (judged-soft): HR@10 100.0 P@10 30.0" in soft.out, soft.err
    assert_user_error(
        run_ratio(*base, "--qrels", "judged-hard", "--out", tmp_path / "x.json"), "--out", code=2
    )
    assert_user_error(
        run_ratio(*base, "--qrels", "judged-hard", "--pool", tmp_path / "none"), "--qrels", "--pool", code=2
    )
    other = write_judged_release(tmp_path / "other", version="0.1")
    foreign = run_ratio(*base[:4], other, "--qrels", "judged-hard", "--pool", judged_release / "judgments")
    assert_user_error(foreign, "--pool", "never mixed")
