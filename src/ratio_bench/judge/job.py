"""One driver for every paid LLM job: plan -> estimate -> cost cap -> dry run -> send -> keep -> write.

Silver, candidate and pairwise judging differ in what they ask and what they write, not in how a paid run goes,
so that part is written once here and a job supplies only its own steps (:class:`JudgeJob`). The estimate
prices what would really be sent: identical requests once, none that the reply cache already answers, so a
re-run after a failure is priced at what is left. A job's outputs are all-or-nothing: when a request failed or
the spending cap skipped it, ``write`` is not called and the command ends with one error saying to re-run it;
the answered requests stay in the cache (and in whatever ``keep`` stored), so the re-run sends only the rest.
"""

from __future__ import annotations

import argparse
from abc import ABC, abstractmethod
from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ratio_bench.core.errors import RatioError
from ratio_bench.core.io import report_console
from ratio_bench.llm.client import Judge, JudgeRequest, Outcome
from ratio_bench.llm.options import print_run_summary
from ratio_bench.llm.pricing import prompt_tokens

if TYPE_CHECKING:
    from ratio_bench.llm.batch import BatchJudge

DEFAULT_OUTPUT_TOKENS = 600  # per request, when neither --output-tokens nor a reply limit says more


class JobIncomplete(RatioError):
    """Requests failed or were skipped by the spending cap: the outputs were not written; a re-run resumes."""


class JudgeJob(ABC):
    """What one job asks the judge and what it makes of the replies; :func:`run_job` does the rest."""

    name: str  # the command, in the progress bar
    output: str  # what ``write`` produces, in the message when it is not written

    @abstractmethod
    def plan(self) -> list[str]:
        """Lines saying what will be judged, printed before the estimate."""

    @abstractmethod
    def requests(self) -> list[JudgeRequest]:
        """Every request of the job, in the order ``keep`` and ``write`` read the outcomes."""

    def keep(self, outcomes: list[Outcome]) -> list[str]:
        """Store what was answered even when the run is incomplete (a judged pool); lines to print."""
        return []

    @abstractmethod
    def write(self, outcomes: list[Outcome], est: JobEstimate) -> list[str]:
        """Write the outputs of a run whose every request was answered (ok or invalid); lines to print."""


@dataclass(frozen=True)
class JobEstimate:
    """What a run would send and cost, before anything is sent."""

    requests: int  # as the job asks them
    distinct: int  # identical requests are sent once
    cached: int  # of ``distinct``, already in the reply cache
    to_send: int
    input_tokens: int  # of those to send
    output_tokens: int
    output_per_request: int
    output_basis: str  # where ``output_per_request`` comes from
    priced: bool
    usd: float


@dataclass(frozen=True)
class JobResult:
    by_status: dict[str, int]  # outcomes of the job's requests: ok, invalid, error, skipped
    kept: list[str]  # the lines of ``keep``
    written: list[str] | None  # the lines of ``write``; None when it was not called

    @property
    def complete(self) -> bool:
        return self.written is not None


def estimate(
    requests: list[JudgeRequest], judge: Judge, output_tokens: int | None, batch: bool
) -> JobEstimate:
    """Tokens and price of the distinct requests the cache lacks; output tokens per request are assumed."""
    distinct = {judge.key(r): r for r in requests}
    todo = [r for key, r in distinct.items() if judge.cache.get(key) is None]
    if output_tokens is not None:
        per, basis = output_tokens, "--output-tokens"
    elif judge.settings.max_tokens:
        per, basis = judge.settings.max_tokens, "the --max-tokens limit"
    else:
        per, basis = DEFAULT_OUTPUT_TOKENS, "assumed"
    tokens_in = sum(prompt_tokens(r.messages) for r in todo)
    model, prices = judge.settings.model, judge.meter.prices
    return JobEstimate(
        requests=len(requests),
        distinct=len(distinct),
        cached=len(distinct) - len(todo),
        to_send=len(todo),
        input_tokens=tokens_in,
        output_tokens=per * len(todo),
        output_per_request=per,
        output_basis=basis,
        priced=prices.is_priced(model),
        usd=round(prices.cost(model, tokens_in, per * len(todo), batch), 6),
    )


def execute(
    job: JudgeJob,
    requests: list[JudgeRequest],
    est: JobEstimate,
    judge: Judge,
    batch: BatchJudge | None = None,
) -> JobResult:
    """Send (through the cache; the Batch API when ``batch``), keep what was answered, write if complete."""
    outcomes = (batch or judge).run(requests, desc=f"{job.name} judging")
    by_status = dict(sorted(Counter(o.status for o in outcomes).items()))
    kept = job.keep(outcomes)
    complete = not by_status.get("error") and not by_status.get("skipped")
    return JobResult(by_status, kept, job.write(outcomes, est) if complete else None)


def run_job(
    job: JudgeJob,
    judge: Judge,
    batch: BatchJudge | None = None,
    dry_run: bool = False,
    output_tokens: int | None = None,
) -> int:
    """A judge command from its plan to its outputs, with one wording; ``JobIncomplete`` when not written."""
    requests = job.requests()
    est = estimate(requests, judge, output_tokens, batch is not None)
    for line in [*job.plan(), *describe(est, judge, batch is not None)]:
        print(line)
    if dry_run:
        print("--dry-run: nothing sent")
        return 0
    result = execute(job, requests, est, judge, batch)
    print_run_summary(judge.summary())
    for line in result.kept:
        print(line)
    if result.written is None:
        raise incomplete(job, result, judge)
    for line in result.written:
        print(line)
    return 0


def describe(est: JobEstimate, judge: Judge, batch: bool) -> list[str]:
    """The estimate, and whether the spending cap will stop the run."""
    model = judge.settings.model
    how = "Batch API" if batch else "synchronous"
    cost = (
        f"${est.usd:,.4f} at {model}'s {how} price"
        if est.priced
        else f"$0: {model} has no price in the price table (--prices FILE gives one)"
    )
    lines = [
        f"{est.requests:,} requests ({est.distinct:,} distinct), {est.cached:,} already answered, "
        f"{est.to_send:,} to send",
        f"estimate for the {est.to_send:,} to send: {est.input_tokens:,} input tokens, {est.output_tokens:,} "
        f"output tokens ({est.output_per_request:,}/request: {est.output_basis}) = {cost}",
    ]
    cap = judge.settings.max_cost_usd
    if cap is not None and est.priced and est.usd > cap:
        lines.append(f"the estimate exceeds --max-cost {cap}: sending stops there, and a re-run resumes")
    return lines


def incomplete(job: JudgeJob, result: JobResult, judge: Judge) -> JobIncomplete:
    """Say what was not written (on the report) and return the one error that says what to do."""
    report_console().print(
        f"{job.output} NOT written: requests by status {result.by_status}",
        style="red",
        markup=False,
        highlight=False,
    )
    left = []
    if result.by_status.get("error"):
        left.append(f"{result.by_status['error']:,} failed")
    if result.by_status.get("skipped"):
        cap = judge.settings.max_cost_usd
        left.append(f"{result.by_status['skipped']:,} were not sent (--max-cost {cap} reached)")
    return JobIncomplete(
        f"of {sum(result.by_status.values()):,} requests, {' and '.join(left)}; re-run the same command to "
        "judge the rest (answered requests are not sent again)"
    )


def add_job_options(p: argparse.ArgumentParser) -> None:
    """The flags of every :class:`JudgeJob` command (the judge's own come from ``llm.options``)."""
    p.add_argument("--dry-run", action="store_true", help="print the plan and cost estimate, send nothing")
    p.add_argument(
        "--output-tokens",
        type=_token_count,
        help=f"output (incl. reasoning) tokens per request the estimate assumes (default: --max-tokens, "
        f"else {DEFAULT_OUTPUT_TOKENS})",
    )


def _token_count(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        n = -1
    if n < 0:
        raise argparse.ArgumentTypeError(f"{text!r}: must be a whole number, 0 or more")
    return n
