"""``ratio judge pairwise`` against the loopback judge: predictable judging policies, faults, cache, dry run."""

import json
import math
import re

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from tests.helpers.cli import assert_user_error, run_ratio
from tests.helpers.ports import unused_url

from ratio_bench.cli import build_parser, main
from ratio_bench.core.io import write_json
from ratio_bench.evaluation.scoring.evaluate import ScoreResult
from ratio_bench.evaluation.scoring.runs import save_run

K = 3
MARK = "marked idea"
# per relation: queries whose first-run top-K holds the marked candidate, and those whose second-run top-K does
FIRST_MARKED = {"address": range(0, 9), "broaden": range(0, 4)}
SECOND_MARKED = {"address": range(9, 12), "broaden": range(0, 0)}
SIZES = {"address": 12, "broaden": 5}  # broaden's last query has the mark in neither list: a stable tie


def _parquet(path, columns):
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.table(columns), path)


@pytest.fixture(scope="module")
def release_and_runs(tmp_path_factory):
    """A hand-written two-relation release and two runs over it, the mark placed where the sets above say."""
    root = tmp_path_factory.mktemp("pairwise")
    release = root / "ratio"
    plain = [f"plain candidate sentence {i} about retrieval" for i in range(8)]
    corpus = {f"c{i}": t for i, t in enumerate(plain)}
    runs = {"first": {}, "second": {}}
    rows = {}
    for rel, n in SIZES.items():
        qids = [f"{rel[0]}{i:02d}" for i in range(n)]
        for i, q in enumerate(qids):
            corpus[f"m-{q}"] = f"{MARK} for query {q}"
            base = [f"c{(i + j) % 8}" for j in range(5)]
            for system, marked in (("first", FIRST_MARKED[rel]), ("second", SECOND_MARKED[rel])):
                top = list(base)
                if i in marked:
                    top[1] = f"m-{q}"
                elif system == "second" and rel == "address":
                    top[4] = f"m-{q}"  # below the top K: must not count
                runs[system].setdefault(rel, {})[q] = top
        markers = ["to address this" if i % 2 else "to solve this" for i in range(n)]
        _parquet(
            release / "data" / rel / "test-00000-of-00001.parquet",
            {"query_id": qids, "query": [f"problem statement {q}" for q in qids], "gold_id": ["c0"] * n,
             "marker": markers},
        )  # fmt: skip
        rows[rel] = {"test": n}
    _parquet(
        release / "data" / "corpus" / "test-00000-of-00001.parquet",
        {"id": list(corpus), "text": list(corpus.values()), "role": ["distractor"] * len(corpus)},
    )
    manifest = {
        "kind": "release",
        "name": "tiny",
        "version": "0.0.1",
        "rows": rows | {"corpus": {"test": len(corpus)}},
    }
    write_json(release / "manifest.json", manifest)
    folders = []
    for system, ranked in runs.items():
        scores = {rel: {q: [1.0 - 0.1 * r for r in range(5)] for q in per} for rel, per in ranked.items()}
        result = ScoreResult(system, {}, {}, 0.0, runs=ranked, run_scores=scores)
        folders.append(save_run(result, manifest, "test", root / f"run-{system}"))
    return release, folders


def _command(server, tmp_path, release, runs, *extra):
    return [
        "judge", "pairwise", "--dataset", str(release), "--runs", *map(str, runs), "--k", str(K),
        "--sample", "20", "--base-url", server.base_url, "--model", "fake-judge",
        "--cache", str(tmp_path / "cache.sqlite"), "--quiet", "--workers", "2", *extra,
    ]  # fmt: skip


def always_a(messages):
    return {"winner": "A", "confidence": 0.9, "reason": "first is best"}


def prefers_marked(messages):
    """List A or B, whichever alone holds a marked candidate; else a tie."""
    user = messages[1]["content"]
    list_a, list_b = user.split("Candidate List A:")[1].split("Candidate List B:")
    if (MARK in list_a) == (MARK in list_b):
        return {"winner": "tie", "confidence": 0.5, "reason": "same"}
    return {"winner": "A" if MARK in list_a else "B", "confidence": 0.9, "reason": "marked"}


def two_sided_p(wins: int, n: int) -> float:
    """Exact two-sided binomial p against 0.5 (symmetric, so twice the tail of the larger count)."""
    tail = sum(math.comb(n, i) for i in range(max(wins, n - wins), n + 1)) / 2**n
    return min(1.0, 2 * tail)


def test_a_judge_that_always_answers_a_is_never_stable(release_and_runs, fake_server, tmp_path, capsys):
    release, runs = release_and_runs
    fake_server.state.answer_with = always_a
    out = tmp_path / "out"
    assert main([*_command(fake_server, tmp_path, release, runs), "--out", str(out)]) == 0
    result = json.loads((out / "pairwise.json").read_text())
    for rel, n in SIZES.items():
        s = result["relations"][rel]
        assert (s["queries"], s["judged"], s["stable"], s["stable_share"]) == (n, n, 0, 0.0)
        assert s["win_rate_first"] is None and s["slot_a_rate"] == 1.0
        assert s["slot_a_p_value"] == pytest.approx(two_sided_p(2 * n, 2 * n))
    judgments = pq.read_table(out / "judgments.parquet").to_pylist()
    assert len(judgments) == 2 * sum(SIZES.values())
    assert {(j["order"], j["preferred"]) for j in judgments} == {
        ("first-as-A", "first"),
        ("first-as-B", "second"),
    }
    assert "| address | 12 | 0 | 0 | n/a |" in (out / "pairwise.md").read_text()


def test_a_judge_preferring_the_marked_list_gives_the_known_win_rate(
    release_and_runs, fake_server, tmp_path, capsys
):
    release, runs = release_and_runs
    fake_server.state.answer_with = prefers_marked
    out = tmp_path / "out"
    assert main([*_command(fake_server, tmp_path, release, runs), "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert re.search(
        r"\| address \| 12 \| 9 \| 3 \| 75\.0 \| 0\.146 \| 100\.0 \| 0 \| 0 \| 50\.0 \| 1 \|", printed
    )
    assert re.search(
        r"\| broaden \| 5 \| 4 \| 0 \| 100\.0 \| 0\.125 \| 100\.0 \| 1 \| 2 \| 50\.0 \| 1 \|", printed
    )
    stats = json.loads((out / "pairwise.json").read_text())["relations"]
    assert stats["address"]["win_p_value"] == pytest.approx(two_sided_p(9, 12))
    assert stats["broaden"]["win_p_value"] == pytest.approx(two_sided_p(4, 4))
    assert (stats["broaden"]["stable_ties"], stats["broaden"]["tie_replies"]) == (1, 2)


def test_the_judge_sees_neither_system_names_nor_gold_nor_marker(release_and_runs, fake_server, tmp_path):
    release, runs = release_and_runs
    seen = []
    fake_server.state.answer_with = lambda messages: seen.append(messages) or always_a(messages)
    assert main(_command(fake_server, tmp_path, release, runs, "--relations", "broaden")) == 0
    assert len(seen) == 2 * SIZES["broaden"] - 1  # the tie query's two lists are equal: one request
    for messages in seen:
        text = " ".join(m["content"] for m in messages)
        assert "first" not in text and "second" not in text and "to solve this" not in text
        assert "List A:\n1. " in text and "\n3. " in text and "\n4. " not in text  # top-K only


def test_faults_recover_and_a_rerun_or_a_dry_run_sends_nothing(
    release_and_runs, fake_server, tmp_path, capsys
):
    release, runs = release_and_runs
    fake_server.state.answer_with = prefers_marked
    fake_server.state.script = ["500", "500", "500"]
    dry = _command(fake_server, tmp_path, release, runs, "--dry-run", "--model", "gpt-5.4")
    assert main(dry) == 0
    printed = capsys.readouterr().out
    assert "34 requests (33 distinct), 0 already answered" in printed and "--dry-run: nothing sent" in printed
    assert not fake_server.state.chat_keys
    estimated = int(re.search(r"to send: ([\d,]+) input tokens", printed).group(1).replace(",", ""))
    out = tmp_path / "out"
    assert main([*_command(fake_server, tmp_path, release, runs), "--out", str(out)]) == 0
    metered = int(re.search(r"tokens: prompt ([\d,]+)", capsys.readouterr().out).group(1).replace(",", ""))
    assert (
        33 * 7 <= estimated - metered <= 33 * 8
    )  # the same text; we add 4 tokens per message for the template
    assert fake_server.state.faults_served["500"] == 3
    sent = sum(fake_server.state.chat_keys.values())
    first = {f: (out / f).read_bytes() for f in ("pairwise.json", "pairwise.md", "judgments.parquet")}
    capsys.readouterr()
    assert main([*_command(fake_server, tmp_path, release, runs), "--out", str(out)]) == 0
    assert "33 already answered" in capsys.readouterr().out
    assert sum(fake_server.state.chat_keys.values()) == sent
    assert first == {f: (out / f).read_bytes() for f in first}  # byte-identical outputs


def test_a_spending_cap_stops_cleanly_and_writes_no_tables(release_and_runs, fake_server, tmp_path, capsys):
    release, runs = release_and_runs
    prices = tmp_path / "prices.yaml"
    prices.write_text("models:\n  fake-judge: {input: 1000, output: 1000}\n")
    out = tmp_path / "out"
    cmd = [*_command(fake_server, tmp_path, release, runs), "--workers", "1", "--max-cost", "0.01"]
    assert main([*cmd, "--prices", str(prices), "--out", str(out)]) == 1
    assert "NOT written" in capsys.readouterr().out
    assert sum(fake_server.state.chat_keys.values()) == 1 and not out.exists()


def test_runs_of_another_release_or_split_are_refused(release_and_runs, tmp_path):
    release, runs = release_and_runs
    other = tmp_path / "other-split"
    other.mkdir()
    manifest = json.loads((runs[1] / "manifest.json").read_text()) | {"split": "validation"}
    for f in runs[1].iterdir():
        (other / f.name).write_bytes(f.read_bytes())
    write_json(other / "manifest.json", manifest)
    common = ["--base-url", unused_url("/v1"), "--model", "m", "--cache", tmp_path / "c.sqlite"]
    bad = run_ratio("judge", "pairwise", "--dataset", release, "--runs", runs[0], other, *common)
    assert_user_error(bad, "--runs", "split")
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "manifest.json").write_text(
        json.dumps(json.loads((release / "manifest.json").read_text()) | {"version": "9"})
    )
    bad = run_ratio("judge", "pairwise", "--dataset", foreign, "--runs", *runs, *common)
    assert_user_error(bad, "--runs", "re-score")


def test_pairwise_takes_the_flags_of_judge_candidates_and_its_old_spellings():
    common = ["judge", "pairwise", "--dataset", "r", "--runs", "a", "b", "--model", "m"]
    args = build_parser().parse_args([*common, "--sample", "5", "--relations", "broaden", "specify"])
    old = build_parser().parse_args(
        [*common, "--queries", "5", "--relation", "broaden", "--relation", "specify"]
    )
    assert (args.sample, args.relations) == (old.sample, old.relations) == (5, ["broaden", "specify"])
    assert build_parser().parse_args(common).relations is None  # all three
