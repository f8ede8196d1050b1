import time

import pytest
from tests.helpers.openai_server import expected_decision

from ratio_bench.llm.client import JudgeError, JudgeRequest
from ratio_bench.llm.pricing import PriceTable
from ratio_bench.llm.prompts import get_prompt


def requests(n: int, tag: str = "") -> list[JudgeRequest]:
    p = get_prompt("specify-silver-compact")
    return [
        JudgeRequest(
            p.messages("silver", query=f"general claim {tag}{i}", marker="for example", gold=f"case {i}")
        )
        for i in range(n)
    ]


def test_verdicts_match_the_server_and_a_rerun_sends_nothing(fake_server, make_judge):
    reqs = requests(12)
    judge = make_judge(fake_server)
    outs = judge.run(reqs + reqs[:3])  # duplicates are sent once
    assert [o.verdict.decision for o in outs[:12]] == [expected_decision(r.messages) for r in reqs]
    assert judge.stats.requests == 12 and sum(fake_server.state.chat_keys.values()) == 12
    again = make_judge(fake_server)
    outs2 = again.run(reqs)
    assert again.stats.requests == 0 and again.stats.cache_hits == 12
    assert [o.verdict for o in outs2] == [o.verdict for o in outs[:12]] and all(o.cached for o in outs2)


def test_faults_are_retried_and_malformed_replies_reasked_then_recorded(fake_server, make_judge):
    fake_server.state.script = ["429", "500", "timeout", "drop", "malformed"]
    fake_server.state.timeout_sleep_s = 1.5
    fake_server.state.malformed_if = "claim 3"
    judge = make_judge(fake_server, timeout_s=0.5, workers=1)
    reqs = requests(6)
    t0 = time.perf_counter()
    outs = judge.run(reqs)
    assert time.perf_counter() - t0 < 10
    assert [o.status for o in outs] == ["ok", "ok", "ok", "invalid", "ok", "ok"]
    assert outs[3].raw.startswith("Sure!")  # the raw text is kept for audit
    s = judge.stats
    assert s.retries == 4 and s.reasks == 2 and s.invalid == 1 and s.errors == 0
    assert dict(fake_server.state.faults_served) == {
        "429": 1,
        "500": 1,
        "timeout": 1,
        "drop": 1,
        "malformed": 1,
    }
    # the invalid verdict is cached too: a re-run asks nothing
    rerun = make_judge(fake_server)
    assert [o.status for o in rerun.run(reqs)] == [o.status for o in outs] and rerun.stats.requests == 0


def test_retry_after_is_honoured(fake_server, make_judge):
    fake_server.state.script = ["429"]
    judge = make_judge(fake_server, backoff_s=5.0)  # backoff alone would wait 2.5 s or more
    t0 = time.perf_counter()
    judge.run(requests(1))
    assert time.perf_counter() - t0 < 1.5  # the server's retry-after-ms (50 ms) was used


def test_exhausted_retries_are_errors_that_a_rerun_retries(fake_server, make_judge):
    fake_server.state.script = ["500"] * 3
    judge = make_judge(fake_server, max_retries=2, workers=1)
    outs = judge.run(requests(2))
    assert outs[0].status == "error" and "500" in outs[0].error and outs[1].status == "ok"
    rerun = make_judge(fake_server)
    assert [o.status for o in rerun.run(requests(2))] == ["ok", "ok"] and rerun.stats.cache_hits == 1


def test_spending_cap_stops_cleanly(fake_server, make_judge, tmp_path):
    judge = make_judge(fake_server, model="pricey", max_cost_usd=0.002, workers=1)
    judge.meter.prices = PriceTable({"pricey": (10.0, 40.0)})
    outs = judge.run(requests(20))
    sent = sum(o.status == "ok" for o in outs)
    assert 0 < sent < 20 and all(o.status in ("ok", "skipped") for o in outs)
    assert judge.stats.skipped_budget == 20 - sent
    assert judge.meter.usd >= 0.002 and judge.meter.usd < 0.002 + 2 * judge.meter.usd / sent


def test_api_key_reaches_the_server_but_never_the_cache(fake_server, make_judge, tmp_path, monkeypatch):
    secret = "sk-test-SENTINEL-0123456789"
    monkeypatch.setenv("OPENAI_API_KEY", secret)
    assert all(o.status == "ok" for o in make_judge(fake_server).run(requests(2, tag="o")))
    assert not any(secret in a for a in fake_server.state.auth_seen)  # OpenAI's key goes to OpenAI only
    monkeypatch.setenv("LOCAL_KEY", secret)
    fake_server.state.require_key = secret
    judge = make_judge(fake_server, api_key_env="LOCAL_KEY")
    assert all(o.status == "ok" for o in judge.run(requests(3)))
    assert f"Bearer {secret}" in fake_server.state.auth_seen
    for f in tmp_path.rglob("*"):
        if f.is_file():
            assert secret.encode() not in f.read_bytes(), f
    monkeypatch.setenv("LOCAL_KEY", "sk-wrong")
    with pytest.raises(JudgeError, match="refused the credentials") as err:
        make_judge(fake_server, api_key_env="LOCAL_KEY").run(requests(1, tag="x"))
    assert "sk-wrong" not in str(err.value)


@pytest.mark.parametrize("wait", ["86400", "Fri, 01 Jan 2100 00:00:00 GMT"])
def test_a_retry_after_over_the_cap_fails_the_request_instead_of_sleeping(
    fake_server, make_judge, wait, monkeypatch
):
    def no_long_sleep(
        seconds: float,
    ) -> None:  # fail fast, rather than hang, if anything sleeps for the server
        raise AssertionError(f"slept {seconds} s")

    monkeypatch.setattr(time, "sleep", no_long_sleep)
    fake_server.state.script = ["429"]
    fake_server.state.retry_after = {"Retry-After": wait}
    judge = make_judge(fake_server, workers=1)
    t0 = time.perf_counter()
    outs = judge.run(requests(2))
    assert time.perf_counter() - t0 < 5
    assert outs[0].status == "error" and "over the 60 s cap" in outs[0].error and "refuses" in outs[0].error
    assert (
        outs[1].status == "ok" and len(judge.cache) == 1
    )  # the refused request is not cached: a re-run asks


@pytest.mark.parametrize("wait", ["nan", "-5", "soon", "inf"])
def test_a_nonsense_retry_after_falls_back_to_the_backoff(fake_server, make_judge, wait):
    fake_server.state.script = ["429"]
    fake_server.state.retry_after = {"Retry-After": wait}
    judge = make_judge(fake_server)
    assert [o.status for o in judge.run(requests(1))] == ["ok"] and judge.stats.retries == 1


def test_misreported_token_counts_never_lower_the_cost_and_the_cap_still_stops(fake_server, make_judge):
    fake_server.state.usage = {"prompt_tokens": -(10**9), "completion_tokens": 2.5}
    judge = make_judge(fake_server, model="pricey", max_cost_usd=0.002, workers=1)
    judge.meter.prices = PriceTable({"pricey": (10.0, 40.0)})
    outs = judge.run(requests(20))
    sent = sum(o.status == "ok" for o in outs)
    assert 0 < sent < 20 and judge.meter.usd >= 0.002  # charged by the character estimate
    assert judge.meter.prompt_tokens > 0 and judge.stats.usage_anomalies == 2 * sent
    fake_server.state.usage = {"prompt_tokens": 10**12}  # absurd: estimated too
    big = make_judge(fake_server)
    big.run(requests(1, tag="b"))
    assert 0 < big.meter.prompt_tokens < 1000 and big.stats.usage_anomalies == 1


@pytest.mark.parametrize(
    ("fault", "reply_chars", "reason"),
    [
        ("", 100_000, "over the 65,536 limit"),
        ("", 2_000_000, "over 1,048,576 bytes"),
        ("html", 0, "'<html><body>Login</body></html>', not a chat completion"),
        ("badjson", 0, "broken JSON"),
    ],
)
def test_oversized_and_non_json_replies_fail_and_are_never_cached(
    fake_server, make_judge, fault, reply_chars, reason
):
    fake_server.state.always = fault
    fake_server.state.reply_chars = reply_chars
    judge = make_judge(fake_server)
    outs = judge.run(requests(2))
    assert [o.status for o in outs] == ["error", "error"] and reason in outs[0].error, outs[0].error
    assert len(judge.cache) == 0 and judge.stats.retries == 0  # a broken server is not asked again and again
