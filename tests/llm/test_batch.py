import pytest
from tests.helpers.openai_server import expected_decision

from ratio_bench.llm.batch import BatchJudge
from ratio_bench.llm.client import JudgeError, JudgeRequest
from ratio_bench.llm.pricing import PriceTable
from ratio_bench.llm.prompts import get_prompt


def requests(n: int) -> list[JudgeRequest]:
    p = get_prompt("broaden-silver-directional")
    return [
        JudgeRequest(p.messages("candidate", query=f"specific {i}", candidate=f"general {i}"))
        for i in range(n)
    ]


def test_batch_maps_results_back_and_resends_failed_items(fake_server, make_judge):
    fake_server.state.batch_fail_every = 4
    fake_server.state.malformed_if = "specific 5"
    judge = make_judge(fake_server)
    reqs = requests(17)
    outs = BatchJudge(judge, poll_s=0.01).run(reqs)
    assert [o.verdict.decision for i, o in enumerate(outs) if i != 5] == [
        expected_decision(r.messages) for i, r in enumerate(reqs) if i != 5
    ]
    assert outs[5].status == "invalid"
    s = judge.stats
    assert s.batches == 1 and s.batch_requests == 17 and s.batch_failed == 4
    # 4 failed items re-sent synchronously, plus the re-ask of the malformed one (and of its re-send, if failed)
    assert s.requests >= 5 and s.invalid == 1
    assert judge.meter.prompt_tokens > 0
    rerun = make_judge(fake_server)
    BatchJudge(rerun, poll_s=0.01).run(reqs)
    assert rerun.stats.batches == 0 and rerun.stats.requests == 0


def test_a_killed_run_resumes_its_open_batch_instead_of_resubmitting(fake_server, make_judge):
    reqs = requests(6)
    first = make_judge(fake_server)
    batcher = BatchJudge(first, poll_s=0.01)
    todo = {first.key(r): r for r in reqs}
    batcher._submit(list(todo), todo)  # submitted, then the process "dies" before polling
    assert len(fake_server.state.batches) == 1
    second = make_judge(fake_server)
    outs = BatchJudge(second, poll_s=0.01).run(reqs)
    assert all(o.status == "ok" for o in outs)
    assert len(fake_server.state.batches) == 1 and second.stats.batches == 0
    assert sum(fake_server.state.chat_keys.values()) == 0  # nothing went through the synchronous path
    assert second.cache.open_batches() == []


def test_a_server_without_batch_endpoints_is_a_clear_error(fake_server, make_judge):
    fake_server.state.no_batch_api = True
    with pytest.raises(JudgeError, match="no Batch API"):
        BatchJudge(make_judge(fake_server), poll_s=0.01).run(requests(2))


def test_batch_token_counts_are_checked_and_oversized_lines_resent(fake_server, make_judge):
    fake_server.state.usage = {"prompt_tokens": -(10**9), "completion_tokens": "many"}
    fake_server.state.reply_chars = 100_000  # every reply, batch or not, over the 64 KiB limit
    judge = make_judge(fake_server)
    outs = BatchJudge(judge, poll_s=0.01).run(requests(3))
    assert [o.status for o in outs] == ["error"] * 3 and "65,536" in outs[0].error
    assert judge.stats.batch_failed == 3 and len(judge.cache) == 0
    assert judge.stats.usage_anomalies == 12  # each reply is still counted: 3 batch lines, 3 re-sends
    assert judge.meter.prompt_tokens > 0 and judge.meter.completion_tokens > 6 * 100_000 // 4 - 1


def test_batch_usage_anomalies_are_charged_by_estimate(fake_server, make_judge):
    fake_server.state.usage = {"prompt_tokens": -(10**9), "completion_tokens": "many"}
    judge = make_judge(fake_server, model="pricey")
    judge.meter.prices = PriceTable({"pricey": (10.0, 40.0)})
    outs = BatchJudge(judge, poll_s=0.01).run(requests(3))
    assert all(o.status == "ok" for o in outs) and judge.stats.usage_anomalies == 6
    assert judge.meter.prompt_tokens > 0 and judge.meter.completion_tokens > 0 and judge.meter.usd > 0
