"""The one driver of judge jobs (``judge.job``): estimate, dry run, keep and write, one failure rule."""

import pytest

from ratio_bench.judge.job import JobIncomplete, JudgeJob, run_job
from ratio_bench.llm.client import JudgeRequest


class Echo(JudgeJob):
    """A job of one request per text; records what the driver handed to ``keep`` and ``write``."""

    name, output = "echo", "echo report"

    def __init__(self, texts):
        self.texts, self.kept, self.written = texts, None, None

    def plan(self):
        return [f"echo: {len(self.texts)} texts"]

    def requests(self):
        return [
            JudgeRequest([{"role": "system", "content": "judge"}, {"role": "user", "content": t}])
            for t in self.texts
        ]

    def keep(self, outcomes):
        self.kept = [o.status for o in outcomes]
        return [f"kept {self.kept.count('ok')}"]

    def write(self, outcomes, est):
        self.written = est
        return ["echo report written"]


def sent(server) -> int:
    return sum(server.state.chat_keys.values())


def test_identical_and_cached_requests_are_priced_and_sent_once_and_a_dry_run_sends_nothing(
    fake_server, make_judge, capsys
):
    make_judge(fake_server, max_tokens=100).run(Echo(["b"]).requests())  # "b" is in the cache already
    judge, job = make_judge(fake_server, max_tokens=100), Echo(["a", "a", "b", "c"])
    assert run_job(job, judge, dry_run=True) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[:2] == ["echo: 4 texts", "4 requests (3 distinct), 1 already answered, 2 to send"]
    assert (
        "200 output tokens (100/request: the --max-tokens limit)" in out and "--dry-run: nothing sent" in out
    )
    assert sent(fake_server) == 1 and job.kept is job.written is None
    assert run_job(job, judge, output_tokens=7) == 0
    assert sent(fake_server) == 3 and job.kept == ["ok"] * 4
    assert (job.written.to_send, job.written.output_tokens, job.written.output_basis) == (
        2,
        14,
        "--output-tokens",
    )
    assert capsys.readouterr().out.endswith("kept 4\necho report written\n")


def test_a_failed_request_keeps_what_was_answered_writes_nothing_and_a_rerun_sends_the_rest(
    fake_server, make_judge, capsys
):
    fake_server.state.script = ["500"]  # the first request fails for good (no retry)
    job = Echo(["a", "b", "c"])
    with pytest.raises(JobIncomplete, match=r"^of 3 requests, 1 failed; re-run the same command"):
        run_job(job, make_judge(fake_server, max_retries=0, workers=1))
    assert sorted(job.kept) == ["error", "ok", "ok"] and job.written is None
    assert "echo report NOT written: requests by status {'error': 1, 'ok': 2}" in capsys.readouterr().out
    assert run_job(job, make_judge(fake_server)) == 0
    assert job.written.to_send == 1 and sent(fake_server) == 4  # the failed one, and nothing else, again
