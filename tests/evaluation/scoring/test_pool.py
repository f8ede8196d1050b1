"""The judged pool and ``ratio score --qrels judged-hard|judged-soft`` on the tiny judged release.

The pool is filled by hand with the verdicts the fake judge of tests/judge/test_candidates.py gives (prompt 1
accepts "good"/"nice", prompt 2 "good"/"fine") on the 14 pairs the two runs retrieve. BM25 ranks all nine
candidates of every query, so its top 10 holds 27 pairs, 14 of them judged; under judged-hard each query has
its gold plus one accepted candidate in the list (P@10 = 2/10), under judged-soft 2, 3 and 4 (P@10 = 9/30).
"""

import json

import pytest
from tests.helpers.cli import assert_user_error, run_ratio
from tests.helpers.judged import JUDGED_CORPUS, JUDGED_QUERIES, JUDGED_RUNS, write_judged_release

from ratio_bench.evaluation.board.leaderboard import load_board
from ratio_bench.evaluation.board.render.markdown import leaderboard_markdown
from ratio_bench.evaluation.scoring.pool import JudgedPool, PoolError, judged_scores

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
    golds = {q: g for q, (_, g, _) in JUDGED_QUERIES.items()} | {"q9": "g1"}
    coverage = lambda run: judged_scores(pool, "address", run, golds)["coverage_at_10"]  # noqa: E731
    assert coverage({"q1": ["d1", "d2", "g1", "d4"]}) == 0.75  # (q1, d2): unjudged
    assert coverage({"q1": ["d1"], "q9": ["d2", "d3"]}) == 1.0  # q9: not sampled, not counted
    manifest = json.loads((judged_release / "manifest.json").read_text())
    reopened = JudgedPool(judged_release / "judgments", manifest)
    assert reopened.relevance("address", "hard") == (hard, judged)


def test_judged_scores_count_the_gold_and_accepted_candidates_on_the_judged_queries_only(pool):
    golds = {q: g for q, (_, g, _) in JUDGED_QUERIES.items()} | {"q4": "g1"}
    run = JUDGED_RUNS["A"] | {"q4": ["d6"]}  # q4 has no verdict: not one of the judged queries
    block = judged_scores(pool, "address", run, golds)
    assert block["judge_model"] == "fake-judge" and block["queries"] == 3 and block["judged_pairs"] == 14
    assert block["coverage_at_10"] == 1.0  # every pair of run A was judged
    # hard: q1 {g1, d1} first at rank 1, q2 {g2, d5} at rank 3, q3 {g3, d1} at rank 1
    assert block["hard"]["mrr_at_10"] == round((1 + 1 / 3 + 1) / 3, 6)
    assert block["hard"]["precision_at_10"] == round(4 / 30, 6) and block["hard"]["hit_rate_at_10"] == 1.0
    # soft adds d2 (q2, rank 2) and d3 (q3)
    assert block["soft"]["mrr_at_10"] == round((1 + 1 / 2 + 1) / 3, 6)
    assert block["soft"]["precision_at_10"] == 0.2
    assert judged_scores(pool, "broaden", run, golds) is None  # no verdicts of that relation
    # a run on queries the pool never sampled (another split): no block, rather than one of zeros
    assert judged_scores(pool, "address", {"v1": ["d1", "d2"]}, {"v1": "g1"}) is None


def test_a_pool_of_two_judges_is_not_scored(pool):
    assert pool.relevance("address", "hard")[1]  # read (and kept) before the new verdicts arrive
    pool.add("address", rows("other-judge"))
    with pytest.raises(PoolError, match="2 judges"):
        pool.relevance("address", "hard")


@pytest.mark.slow  # ~6 s (judged qrels are also read in the pool tests); make test-all runs it
def test_score_against_judged_qrels_with_coverage(pool, judged_release, tmp_path):
    base = ("score", "--model", "bm25", "--dataset", judged_release, "--relations", "address")
    mined = run_ratio(*base)
    assert mined.code == 0, mined.err
    assert "address judged@10 51.9%" in mined.out  # 14 of 27 pairs
    hard = run_ratio(*base, "--qrels", "judged-hard")
    assert hard.code == 0, hard.err
    assert "address (judged-hard): HR@10 100.0 P@10 20.0" in hard.out
    assert "judged@10 51.9% of 3 judged queries" in hard.out
    soft = run_ratio(*base, "--qrels", "judged-soft", "--pool", judged_release / "judgments")
    assert "address (judged-soft): HR@10 100.0 P@10 30.0" in soft.out, soft.err
    assert_user_error(run_ratio(*base, "--qrels", "judged-hard", "--via", "mteb"), "--via mteb", code=2)
    # an entry keeps the mined gold for ranking and records both agreements with their coverage
    written = run_ratio(*base, "--qrels", "judged-hard", "--out", tmp_path / "x.json")
    assert written.code == 0, written.err
    fresh = write_judged_release(tmp_path / "fresh")  # the same release, no pool
    plain = run_ratio(*base[:4], fresh, *base[5:], "--out", tmp_path / "plain.json")
    entry, mined_only = (json.loads((tmp_path / f).read_text()) for f in ("x.json", "plain.json"))
    assert entry["results"] == mined_only["results"] and "judged" not in mined_only, plain.err
    judged = entry["judged"]["address"]
    assert judged["queries"] == 3 and judged["coverage_at_10"] == round(14 / 27, 6)
    assert judged["hard"]["precision_at_10"] == 0.2 and judged["soft"]["precision_at_10"] == 0.3
    board = load_board(tmp_path / "x.json")
    assert not board.rejected
    assert r"| bm25\:unigram | test | address | fake-judge | 3 | 51.9 | 100.0 | 20.0 | 100.0 | 30.0 |" in (
        leaderboard_markdown(board)
    )
    assert_user_error(
        run_ratio(*base, "--qrels", "judged-hard", "--pool", tmp_path / "none"), "--qrels", "--pool", code=2
    )
    other = write_judged_release(tmp_path / "other", version="0.1")
    foreign = run_ratio(*base[:4], other, "--qrels", "judged-hard", "--pool", judged_release / "judgments")
    assert_user_error(foreign, "--pool", "never mixed")
