"""``ratio judge`` and ``ratio lexicon llm-*`` through the real command line."""

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from ratio_bench.cli import main


def judge_args(server, tmp_path):
    return [
        "--base-url",
        server.base_url,
        "--model",
        "fake-judge",
        "--cache",
        str(tmp_path / "c.sqlite"),
        "--quiet",
    ]


def test_prompts_and_estimate(small_release, capsys):
    assert main(["judge", "prompts"]) == 0
    assert "address-silver-split@v1" in capsys.readouterr().out
    assert main(["judge", "estimate", "--dataset", str(small_release), "--pairs", "100", "0", "0"]) == 0
    out = capsys.readouterr().out
    assert "200 requests" in out and "gpt-5.4" in out


def test_calibrate_cli(tmp_path, fake_server, capsys):
    labels = tmp_path / "labels.jsonl"
    rows = [
        {"relation": "broaden", "query": f"specific finding {i}", "marker": "more generally", "gold": f"broad {i}",
         "annotator": a, "label": (i + len(a)) % 3 != 0}
        for i in range(12) for a in ("x", "yy")
    ]  # fmt: skip
    labels.write_text("\n".join(json.dumps(r) for r in rows))
    out_json = tmp_path / "cal.json"
    assert (
        main(
            [
                "judge",
                "calibrate",
                "--labels",
                str(labels),
                "--out",
                str(out_json),
                *judge_args(fake_server, tmp_path),
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert "| broaden | human annotators |" in out and "broaden: keep" in out
    report = json.loads(out_json.read_text())
    assert len(report["broaden"]["ranking"]) == 2 and report["judge"]["model"] == "fake-judge"


def test_lexicon_llm_commands(tmp_path, fake_server, capsys):
    seeds = tmp_path / "seeds.txt"
    seeds.write_text("more generally\nmore broadly\n")
    review = tmp_path / "r.tsv"
    common = judge_args(fake_server, tmp_path)
    assert (
        main(
            [
                "lexicon",
                "llm-expand",
                "--relation",
                "broaden",
                "--seeds",
                str(seeds),
                "--out",
                str(review),
                *common,
            ]
        )
        == 0
    )
    assert main(["lexicon", "llm-classify", str(review), *common]) == 0
    out = capsys.readouterr().out
    assert "strong-true" in out and "requests sent" in out
    header = review.read_text().splitlines()[0].split("\t")
    assert header[-3:] == ["llm_label", "llm_confidence", "llm_reason"]


def test_judge_errors_are_reported_without_a_traceback(fake_server, tmp_path, capsys, monkeypatch):
    labels = tmp_path / "labels.jsonl"
    labels.write_text(
        json.dumps({"relation": "address", "query": "q", "gold": "g", "annotator": "a", "label": True}) + "\n"
    )
    fake_server.state.require_key = "sk-right"
    monkeypatch.setenv("OPENAI_API_KEY", "sk-wrong")
    assert main(["judge", "calibrate", "--labels", str(labels), *judge_args(fake_server, tmp_path)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("ratio judge calibrate: error: ") and "Traceback" not in err
    assert "refused the credentials" in err and "sk-wrong" not in err


def write_labels(tmp_path, n: int = 1):
    labels = tmp_path / "labels.jsonl"
    rows = [
        {"relation": "address", "query": f"q{i}", "gold": "g", "annotator": "a", "label": True}
        for i in range(n)
    ]
    labels.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return labels


@pytest.mark.parametrize(("fault", "answer"), [("html", "<html><body>Login"), ("badjson", "broken JSON")])
def test_calibrate_refuses_to_rank_on_no_judgments(fake_server, tmp_path, capsys, fault, answer):
    fake_server.state.always = fault
    args = [
        "judge",
        "calibrate",
        "--labels",
        str(write_labels(tmp_path, 3)),
        *judge_args(fake_server, tmp_path),
    ]
    assert main(args) == 1
    out, err = capsys.readouterr()
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("ratio judge calibrate: error: "), err
    assert fake_server.base_url in lines[0] and "judged 0 of 3" in lines[0] and answer in lines[0]
    assert "keep" not in out  # no prompt recommended


def test_a_full_cache_is_one_error_line_naming_it(fake_server, tmp_path, capsys, monkeypatch):
    from ratio_bench.llm import options

    class FullCache(options.ReplyCache):
        def __init__(self, path):
            super().__init__(path)
            pages = self._con.execute("PRAGMA page_count").fetchone()[0]
            self._con.execute(f"PRAGMA max_page_count = {pages}")  # as a full disk answers: SQLITE_FULL

    monkeypatch.setattr(options, "ReplyCache", FullCache)
    fake_server.state.reply_chars = 60_000
    args = ["judge", "calibrate", "--labels", str(write_labels(tmp_path)), *judge_args(fake_server, tmp_path)]
    assert main(args) == 1
    err = capsys.readouterr().err
    assert err.startswith("ratio judge calibrate: error: --cache ") and err.count("\n") == 1, err
    assert str(tmp_path / "c.sqlite") in err and "database or disk is full" in err


def _interrupt_calibrate(server, tmp_path, started) -> tuple[int, float, str]:
    """Run ``judge calibrate`` as a user would, press Ctrl-C once ``started()`` holds, and time the exit."""
    argv = ["judge", "calibrate", "--labels", str(write_labels(tmp_path)), *judge_args(server, tmp_path)]
    env = {k: v for k, v in os.environ.items() if k != "RATIO_DEBUG"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "ratio_bench.cli", *argv], env=env, stderr=subprocess.PIPE, text=True
    )
    try:
        deadline = time.monotonic() + 60
        while not started() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert started()
        time.sleep(0.3)  # the worker is waiting now (on Retry-After, or on the server's reply)
        t0 = time.monotonic()
        proc.send_signal(signal.SIGINT)
        code = proc.wait(timeout=20)
        return code, time.monotonic() - t0, proc.stderr.read()
    finally:
        proc.kill()
        proc.wait()


def test_ctrl_c_ends_a_run_waiting_on_retry_after_at_once(fake_server, tmp_path):
    fake_server.state.always = "429"
    fake_server.state.retry_after = {"Retry-After": "30"}  # under the cap: the judge would wait
    code, took, err = _interrupt_calibrate(
        fake_server, tmp_path, lambda: fake_server.state.faults_served["429"]
    )
    assert took < 5 and code == 130
    assert "interrupted" in err and fake_server.state.faults_served["429"] == 1


def test_ctrl_c_does_not_wait_for_a_request_in_flight(fake_server, tmp_path):
    """A reply that takes 30 s (under the 120 s request timeout) does not hold the process after Ctrl-C."""
    fake_server.state.delay_s = 30
    code, took, err = _interrupt_calibrate(
        fake_server, tmp_path, lambda: sum(fake_server.state.chat_keys.values())
    )
    assert took < 5 and code == 130 and "interrupted" in err
