"""The worker grows the judged pool in the results repository.

In process (a judging round against the loopback Hub and the fake judge, on the judged release of
tests/conftest.py: three Address queries, runs A and B, the judge accepting by a word of the candidate) and end to
end (``ratio leaderboard worker --judge-...`` on the tiny model and ``small_release``).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import socket
import threading
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from tests.helpers.judged import judged_decide, save_judged_run
from tests.leaderboard.conftest import RESULTS

from ratio_bench.leaderboard.judging import Judging, Scored, judge_round
from ratio_bench.llm.options import add_judge_options, prefixed_judge_args

POOL = "judged-pool/candidates-address.parquet"
RUN_C = {"q1": ["d2", "d3", "d5"], "q2": ["d1", "d3", "g2"], "q3": ["d4", "d5", "g3"]}  # 7 pairs A lacks


def judging(server, cache: Path) -> Judging:
    """The worker's judge options, parsed as ``ratio leaderboard worker`` parses them."""
    p = argparse.ArgumentParser()
    add_judge_options(p, model_required=False, prefix="judge-", batch=False)
    args = p.parse_args(["--judge-base-url", server.base_url, "--judge-model", "fake-judge", "--judge-cache",
                         str(cache), "--judge-quiet", "--judge-timeout", "5"])  # fmt: skip
    return Judging(prefixed_judge_args(args, "judge-"))


def scored(release: Path, name: str, tmp: Path, ranked: dict | None = None) -> Scored:
    """What a job leaves for run ``name``: its entry and saved run; and its provenance record."""
    out = tmp / f"out-{name}"
    save_judged_run(release, name, out / "runs" / "test", ranked)
    (out / "test.json").write_text(json.dumps({"model": f"model-{name}", "split": "test"}), encoding="utf-8")
    return Scored(
        f"org/{name}:generic", f"org/{name}/{'a' * 40}/generic", out, {"worker": "w1", "entries": {}}
    )


def pool_rows(board) -> list[dict]:
    return pq.read_table(pa.BufferReader(board.files(RESULTS)[POOL])).to_pylist()


def sent(server) -> int:
    return sum(server.state.chat_keys.values())


def test_each_result_grows_the_pool_by_what_it_lacks(hub_env, judged_release, fake_server, tmp_path):
    fake_server.state.decide = judged_decide
    a = scored(judged_release, "A", tmp_path)
    line = judge_round(RESULTS, judged_release, a, judging(fake_server, tmp_path / "a.sqlite"))
    # A's 9 (query, candidate) pairs and the gold it missed (q2's g2), x 2 prompts
    assert "judged its top 10 on 3 sampled queries: 20 verdicts added (0 of 20 already in the pool" in line
    assert sent(fake_server) == 20 and len(pool_rows(hub_env)) == 20
    files = hub_env.files(RESULTS)
    assert json.loads(files["judged-pool/sample.json"]) == {"sample": 400, "seed": 0}
    entry = json.loads(files[f"{a.folder}/test.json"])
    judged = entry["judged"]["address"]
    assert (judged["queries"], judged["coverage_at_10"]) == (3, 1.0)
    # hard agreement accepts g1, d1 (q1), g2, d5 (q2), g3 (q3): A's first relevant at ranks 1, 3, 1
    assert judged["hard"]["mrr_at_10"] == round((1 + 1 / 3 + 1) / 3, 6)
    provenance = json.loads(files[f"{a.folder}/provenance.json"])
    assert provenance["worker"] == "w1" and provenance["judging"]["status"] == "judged"
    assert provenance["judging"]["added"] == 20 and provenance["judging"]["judge"]["model"] == "fake-judge"
    assert provenance["entries"]["test.json"] == hashlib.sha256(files[f"{a.folder}/test.json"]).hexdigest()

    b = scored(judged_release, "B", tmp_path)  # a fresh reply cache: only the pool can spare requests
    line = judge_round(RESULTS, judged_release, b, judging(fake_server, tmp_path / "b.sqlite"))
    assert "8 verdicts added (12 of 20 already in the pool, 8 requests sent" in line  # 10 pairs x 2
    assert sent(fake_server) == 28 and len(pool_rows(hub_env)) == 28  # B's 4 new pairs only
    assert hub_env.files(RESULTS)[f"{a.folder}/test.json"] == files[f"{a.folder}/test.json"]


def test_two_workers_committing_at_once_lose_no_verdict(hub_env, judged_release, fake_server, tmp_path):
    fake_server.state.decide = judged_decide
    judge_round(
        RESULTS, judged_release, scored(judged_release, "A", tmp_path), judging(fake_server, tmp_path / "a")
    )
    hub_env.hub.state.holds["judged-pool/pool.json"] = threading.Event()  # both read the same pool, then race
    rounds = {"B": None, "C": RUN_C}
    lines: dict[str, str] = {}

    def run(name: str) -> None:
        one = scored(judged_release, name, tmp_path, rounds[name])
        lines[name] = judge_round(RESULTS, judged_release, one, judging(fake_server, tmp_path / name))

    threads = [threading.Thread(target=run, args=(n,)) for n in rounds]
    for t in threads:
        t.start()
    try:
        hub_env.wait_for(lambda: hub_env.hub.state.waiting["judged-pool/pool.json"] >= 2)
    finally:
        hub_env.hub.state.holds.pop("judged-pool/pool.json").set()
    for t in threads:
        t.join(60)
    assert hub_env.hub.state.conflicts >= 1, (
        lines
    )  # one commit was refused: its parent was no longer the head
    assert "8 verdicts added" in lines["B"] and "14 verdicts added" in lines["C"], lines
    rows = pool_rows(hub_env)
    keys = {(r["query_id"], r["candidate_id"], r["prompt"]) for r in rows}
    assert len(rows) == len(keys) == 20 + 8 + 14  # A's, then B's and C's, none lost, none twice
    files = hub_env.files(RESULTS)
    for name in rounds:
        provenance = json.loads(files[f"org/{name}/{'a' * 40}/generic/provenance.json"])
        assert provenance["judging"]["status"] == "judged"
        assert (
            json.loads(files[f"org/{name}/{'a' * 40}/generic/test.json"])["judged"]["address"]["queries"] == 3
        )


def _judge_flags(server_url: str, cache: Path) -> list[str]:
    return ["--judge-base-url", server_url, "--judge-model", "fake-judge", "--judge-cache", str(cache),
            "--judge-quiet", "--judge-timeout", "5"]  # fmt: skip


@pytest.mark.slow  # ~17 s (two worker passes with a judge); make test-all runs it
def test_a_worker_with_a_judge_grows_the_pool_and_reuses_it(board, tiny_models, small_release, fake_server):
    sha = board.publish("org/tiny", tiny_models["good"])
    for setup in ("generic", "none"):
        assert board.submit("org/tiny", "--setup", setup).code == 0
    work = board.worker(
        small_release, "--once", *_judge_flags(fake_server.base_url, board.home / "judge.sqlite")
    )
    assert work.code == 0, work.err
    assert {r["status"] for r in board.requests().values()} == {"FINISHED"}
    rows = pool_rows(board)
    assert rows and sent(fake_server) == len(rows)  # every verdict asked once, over both requests
    files = board.files(RESULTS)
    records = [
        json.loads(files[f"org/tiny/{sha}/{s}/provenance.json"])["judging"] for s in ("generic", "none")
    ]
    second, first = sorted(records, key=lambda r: r["added"])  # whichever was claimed first grew the pool
    assert (first["added"], first["in_pool"]) == (len(rows), 0)
    assert (second["added"], second["in_pool"], second["sent"]) == (0, len(rows), 0)  # the pool, reused
    for setup in ("generic", "none"):
        judged = json.loads(files[f"org/tiny/{sha}/{setup}/test.json"])["judged"]["address"]
        assert judged["coverage_at_10"] == 1.0
    assert (
        work.err.count("verdicts added") == 2
        and f"-> {RESULTS}: judged-pool/ ({len(rows)} verdicts)" in work.err
    )


@pytest.mark.slow  # make test-all (make test stays near 10 minutes)
def test_a_judge_that_is_down_leaves_the_request_finished_with_its_scores(board, tiny_models, small_release):
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        down = f"http://127.0.0.1:{s.getsockname()[1]}/v1"
    sha = board.publish("org/tiny", tiny_models["good"])
    assert board.submit("org/tiny").code == 0
    work = board.worker(small_release, "--once", *_judge_flags(down, board.home / "judge.sqlite"))
    assert work.code == 0, work.err
    folder = f"org/tiny/{sha}/generic"
    request = board.requests()[f"org/tiny/{sha}_generic.json"]
    assert (request["status"], request["result"]) == ("FINISHED", folder)
    files = board.files(RESULTS)
    assert json.loads(files[f"{folder}/test.json"])["results"] and POOL not in files
    judging_record = json.loads(files[f"{folder}/provenance.json"])["judging"]
    assert judging_record["status"] == "failed" and "connection refused" in judging_record["reason"]
    assert "--judge-base-url" in judging_record["reason"]  # the worker's flag, not `ratio judge`'s --base-url
    (line,) = [x for x in work.err.splitlines() if "judging failed" in x]
    assert "connection refused" in line and line.endswith("the scores stand")
