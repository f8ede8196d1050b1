"""``ratio judge candidates`` against the fake judge, whose verdicts are fixed by a word in the candidate.

Hand-checked figures (tests/conftest.py: JUDGED_*; k = 3, three queries): hard agreement accepts "good"
(d1, d5, g1), soft also "nice" and "fine" (d2, d3, g3). Run A's top 3 holds 2, 1, 0 hard-accepted candidates
(q1: ranks 1-2, q2: rank 3), run B's 1, 0, 1 (q1: rank 3, q3: rank 2).
"""

import json
import math

import pyarrow.parquet as pq
import pytest
from tests.helpers.cli import assert_user_error, run_ratio
from tests.helpers.judged import (
    JUDGED_CORPUS,
    JUDGED_QUERIES,
    judged_decide,
    save_judged_run,
    write_judged_release,
)

from ratio_bench.cli import main


@pytest.fixture
def setup(judged_release, fake_server, tmp_path):
    fake_server.state.decide = judged_decide
    runs = [save_judged_run(judged_release, n, tmp_path / f"run-{n}") for n in "AB"]
    return judged_release, runs, fake_server


def judge_cmd(release, runs, server, tmp_path, *extra):
    args = ["judge", "candidates", "--dataset", str(release), "--k", "3", "--out", str(tmp_path / "report")]
    for r in runs:
        args += ["--run", str(r)]
    return [
        *args,
        "--base-url",
        server.base_url,
        "--model",
        "fake-judge",
        "--cache",
        str(tmp_path / "c.sqlite"),
        "--quiet",
        "--timeout",
        "5",
        *extra,
    ]


def sent(server) -> int:
    return sum(server.state.chat_keys.values())


def test_dry_run_estimates_and_sends_nothing(setup, tmp_path, capsys):
    release, runs, server = setup
    assert main(judge_cmd(release, runs, server, tmp_path, "--dry-run")) == 0
    out = capsys.readouterr().out
    # 14 unique (query, candidate) pairs x 2 prompts; judging A, B and the golds apart: (9 + 9 + 3) x 2 = 42
    assert "28 unique (14 saved by judging shared candidates once, 0 already in the pool" in out
    assert "28 to send" in out and "--dry-run: nothing sent" in out
    assert sent(server) == 0
    assert not (release / "judgments").exists() and not (tmp_path / "report").exists()


def test_judged_metrics_by_hand_and_a_rerun_sends_nothing(setup, tmp_path, capsys):
    release, runs, server = setup
    server.state.script = ["500", "500"]  # retried, not fatal
    assert main(judge_cmd(release, runs, server, tmp_path)) == 0
    assert len(server.state.chat_keys) == 28 and server.state.faults_served["500"] == 2
    report = json.loads((tmp_path / "report" / "candidates.json").read_text())
    a, b = (report["relations"]["address"]["runs"][f"model-{n}"] for n in "AB")
    assert a["metrics"]["hard"] == pytest.approx(
        {
            "hit_rate_at_3": 2 / 3,
            "precision_at_3": 1 / 3,
            "mrr_at_3": 4 / 9,
            "map_at_3": 4 / 9,
            "ndcg_at_3": 0.5,
        },
        abs=1e-6,
    )
    assert b["metrics"]["hard"] == pytest.approx(
        {
            "hit_rate_at_3": 2 / 3,
            "precision_at_3": 2 / 9,
            "mrr_at_3": 5 / 18,
            "map_at_3": 5 / 18,
            "ndcg_at_3": (0.5 + 1 / math.log2(3)) / 3,
        },
        abs=1e-6,
    )
    soft_a, soft_b = a["metrics"]["soft"], b["metrics"]["soft"]
    assert (soft_a["hit_rate_at_3"], soft_a["precision_at_3"], soft_a["mrr_at_3"]) == pytest.approx(
        (1, 2 / 3, 5 / 6)
    )
    assert (soft_b["hit_rate_at_3"], soft_b["precision_at_3"], soft_b["mrr_at_3"]) == pytest.approx(
        (2 / 3, 4 / 9, 4 / 9)
    )
    p1, p2 = report["relations"]["address"]["prompts"]
    assert p1.startswith("address-silver-split@v1/candidate")
    assert a["metrics"][p1]["precision_at_3"] == pytest.approx(4 / 9)  # good or nice: 2 + 2 + 0
    assert a["metrics"][p2]["precision_at_3"] == pytest.approx(5 / 9)  # good or fine: 2 + 1 + 2
    # gold-only vs any accepted (hard) MRR@3
    assert (a["gold_only"]["mrr_at_3"], a["mrr_any_accepted"]["hard"]) == pytest.approx((1 / 2, 7 / 9))
    assert (b["gold_only"]["mrr_at_3"], b["mrr_any_accepted"]["hard"]) == pytest.approx((4 / 9, 11 / 18))
    # Table 13: only g1 is hard-accepted; A retrieves it, B does not; of q2, q3 A retrieves one gold, B both
    assert a["conditioned_recall"]["hard"] | {"odds_ratio": None} == {
        "accepted": 1.0, "rejected": 0.5, "delta": 0.5, "odds_ratio": None, "n_accepted": 1, "n_rejected": 2,
    }  # fmt: skip
    assert (b["conditioned_recall"]["hard"]["accepted"], b["conditioned_recall"]["hard"]["rejected"]) == (
        0.0,
        1.0,
    )
    # appendix G: A's q2 has d5 (same paper as q2) with its gold absent; B's q1 has d1 (paper P9)
    da, db = a["discovered"]["hard"], b["discovered"]["hard"]
    assert (da["queries_with_discovered_gold_absent"], da["accepted_non_gold"], da["cross_paper"]) == (
        pytest.approx(1 / 3),
        2,
        0.5,
    )
    assert (db["queries_with_discovered_gold_absent"], db["accepted_non_gold"], db["cross_paper"]) == (
        pytest.approx(1 / 3),
        2,
        1.0,
    )
    assert da["p_value"] is not None and -1 <= da["rank_biserial"] <= 1
    md = (tmp_path / "report" / "candidates.md").read_text()
    assert "| model-A | 66.7 | 33.3 | 50.0 | 44.4 | 44.4 | 100.0 | 66.7 |" in md
    assert (tmp_path / "report" / "candidates-address.png").read_bytes()[:4] == b"\x89PNG"

    pool = pq.read_table(release / "judgments" / "candidates-address.parquet").to_pylist()
    assert len(pool) == 28 and {r["judge_model"] for r in pool} == {"fake-judge"}
    assert {(r["query_id"], r["candidate_id"]) for r in pool if r["decision"]} >= {("q1", "g1"), ("q2", "d5")}
    assert all(len(r["prompt_sha256"]) == 64 and r["status"] == "ok" for r in pool)
    before = (release / "judgments" / "candidates-address.parquet").read_bytes()
    first = (tmp_path / "report" / "candidates.json").read_text()

    # again with a fresh cache: the pool answers everything; nothing is sent, the verdicts are unchanged
    capsys.readouterr()
    n = sent(server)
    again = judge_cmd(release, runs, server, tmp_path, "--cache", str(tmp_path / "other.sqlite"))
    assert main(again) == 0
    assert sent(server) == n
    assert "28 already in the pool" in capsys.readouterr().out
    assert (release / "judgments" / "candidates-address.parquet").read_bytes() == before
    second = json.loads((tmp_path / "report" / "candidates.json").read_text())
    assert second["relations"] == json.loads(first)["relations"]


def test_a_later_run_is_judged_only_on_what_the_pool_lacks(setup, tmp_path, capsys):
    release, runs, server = setup
    pool = tmp_path / "pool"
    assert main(judge_cmd(release, runs[:1], server, tmp_path, "--pool", str(pool))) == 0
    assert len(server.state.chat_keys) == 2 * 10  # A's 9 pairs and g2, x 2 prompts
    capsys.readouterr()
    assert main(judge_cmd(release, runs, server, tmp_path, "--pool", str(pool))) == 0
    assert "20 already in the pool" in capsys.readouterr().out
    assert len(server.state.chat_keys) == 28  # only B's 4 new pairs were sent
    assert not (release / "judgments").exists()


def test_the_dry_run_names_the_judge_settings_that_split_the_pool(setup, tmp_path, capsys):
    """Verdicts are reused only under the exact judge; a dry run with other settings says which and how many."""
    release, runs, server = setup
    pool = tmp_path / "pool"
    assert (
        main(judge_cmd(release, runs[:1], server, tmp_path, "--pool", str(pool), "--max-tokens", "128")) == 0
    )
    capsys.readouterr()
    assert main(judge_cmd(release, runs, server, tmp_path, "--pool", str(pool), "--dry-run")) == 0
    out = capsys.readouterr().out
    assert "pool reuse: 0 verdicts reused under the current judge settings, 28 to judge" in out
    assert "20 verdicts in the pool not reused, judged with max_tokens 128 (now " in out
    assert (
        main(
            judge_cmd(
                release, runs, server, tmp_path, "--pool", str(pool), "--max-tokens", "128", "--dry-run"
            )
        )
        == 0
    )
    out = capsys.readouterr().out
    assert "pool reuse: 20 verdicts reused under the current judge settings, 8 to judge" in out
    assert "not reused" not in out


def test_a_pool_of_another_release_is_refused(setup, tmp_path):
    release, runs, server = setup
    pool = tmp_path / "pool"
    assert main(judge_cmd(release, runs[:1], server, tmp_path, "--pool", str(pool))) == 0
    other = write_judged_release(tmp_path / "other", version="0.1")
    run = save_judged_run(other, "A", tmp_path / "run-other")
    bad = run_ratio(
        *judge_cmd(other, [run], server, tmp_path, "--pool", str(pool), "--out", str(tmp_path / "r2"))
    )
    assert_user_error(bad, "--pool", "another --pool")
    foreign = run_ratio(*judge_cmd(other, runs[:1], server, tmp_path, "--out", str(tmp_path / "r3")))
    assert_user_error(foreign, "--run", "re-score")


def test_failed_requests_keep_what_was_judged_and_resume(setup, tmp_path):
    release, runs, server = setup
    server.state.script = ["429"] * 4  # one request exhausts its retries (429: Retry-After 50 ms)
    bad = run_ratio(*judge_cmd(release, runs, server, tmp_path, "--max-retries", "3", "--workers", "1"))
    assert_user_error(bad, "re-run")
    stored = pq.read_table(release / "judgments" / "candidates-address.parquet").num_rows
    assert stored == 27 and not (tmp_path / "report").exists()
    assert main(judge_cmd(release, runs, server, tmp_path)) == 0
    assert pq.read_table(release / "judgments" / "candidates-address.parquet").num_rows == 28
    assert len(server.state.chat_keys) == 28


def test_the_judge_sees_two_sentences_only(setup, tmp_path):
    release, runs, server = setup
    seen = []
    server.state.decide = lambda messages: seen.append(messages) or judged_decide(messages)
    assert main(judge_cmd(release, runs, server, tmp_path)) == 0
    users = {m[1]["content"] for m in seen}
    texts = {q: t for q, (t, _, _) in JUDGED_QUERIES.items()}
    expected = {f"s1: {texts[q]}\ns2: {JUDGED_CORPUS[c][0]}" for q, c in pool_pairs(release)}
    assert users == expected and len(seen) == 28
    everything = json.dumps(seen)
    assert not any(word in everything for word in ("to address this", "model-A", "model-B", "gold", "rank"))


def pool_pairs(release):
    table = pq.read_table(release / "judgments" / "candidates-address.parquet")
    return set(
        zip(table.column("query_id").to_pylist(), table.column("candidate_id").to_pylist(), strict=True)
    )


def test_max_cost_holds(setup, tmp_path):
    release, runs, server = setup
    prices = tmp_path / "prices.yaml"
    prices.write_text("models:\n  fake-judge: {input: 100000, output: 100000}\n")  # $0.1 per 1k tokens
    extra = ("--prices", str(prices), "--max-cost", "0.05", "--workers", "1")
    dry = run_ratio(*judge_cmd(release, runs, server, tmp_path, *extra, "--dry-run"))
    assert dry.code == 0 and "exceeds --max-cost 0.05" in dry.out, dry.err
    capped = run_ratio(*judge_cmd(release, runs, server, tmp_path, *extra))
    assert_user_error(capped, "--max-cost", "re-run")
    assert 0 < len(server.state.chat_keys) < 28
    assert pq.read_table(release / "judgments" / "candidates-address.parquet").num_rows == len(
        server.state.chat_keys
    )
