"""Every trust rule of the leaderboard as data: what a submission, admission, a worker, the board and ``verify``
check before they trust a record, each rule one :class:`TrustRule` in :data:`RULES` with the stages it applies
at, its check and the test that shows it.

A place that trusts something builds its stage's context (:data:`CONTEXTS`: one typed record per stage, holding
what the checks read) and asks :func:`check` for the first rule that fails (``None``: every rule holds); it
raises or reports the message in its own way (a ``LeaderboardError`` at submit, ``Refused`` at admission, a failed
step of a verdict at the board and ``verify``). The checks are pure: the place reads the Hub, the rules judge what
it read, in the order of :data:`RULES`, so a new rule is one entry here plus its test
(``tests/leaderboard/test_trust_rules.py`` checks that every rule's test exists and that every place asks).

Stages, by the place that asks and when:

- ``SUBMIT``: ``ratio leaderboard submit``, the queue read, before the pull request is opened;
- ``ADMIT``: admission's review of the one request a pull request adds, once it is parsed;
- ``MERGE``: admission, just before it merges what it reviewed;
- ``KEY``: a worker's private key file, opened but not yet read;
- ``JOB``: the job, once the model at the pinned commit is downloaded and checked;
- ``BOARD``: the results repository at the revision read (the board, exports, ``verify``): may it verify at all;
- ``VERIFY``: one folder's signed record against the queue (each board row's folder, ``ratio leaderboard verify``).
"""

from __future__ import annotations

import stat
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from enum import Enum
from pathlib import Path
from typing import Any

from ratio_bench.leaderboard.requests import Queue, Request, parse_time, stamp

DAY = timedelta(days=1)
CLOCK_SKEW_S = 60  # how far a worker's signing clock may run ahead of the Hub's finishing time
KEYGEN = "make one with `ratio leaderboard keygen`"


class Stage(Enum):
    SUBMIT = "submit"
    ADMIT = "admit"
    MERGE = "merge"
    KEY = "key"
    JOB = "job"
    BOARD = "board"
    VERIFY = "verify"


# --- what each stage's checks read ------------------------------------------------------------------------


@dataclass(frozen=True)
class Submitting:
    """A submission about to be proposed: the model checked, the queue as read."""

    label: str  # MODEL@SHA12, as the model checks name it
    model: str  # the model repository, OWNER/NAME
    path: str  # the request's path in the queue
    queue: Queue


@dataclass(frozen=True)
class Admitting:
    """The request a pull request adds, parsed, with who opened it and when (the Hub's word) and the queue."""

    request: Request
    author: str
    opened: datetime
    queue: Queue
    recent: Mapping[str, int]  # author -> pull requests merged in the last 24 hours


@dataclass(frozen=True)
class Merging:
    """The pull request's head as reviewed and as it is now, just before the merge."""

    reviewed: str
    head: str


@dataclass(frozen=True)
class KeyFile:
    """A private key file, opened without waiting (``mode``: its ``st_mode``), named as the user gave it."""

    flag: str
    path: Path
    mode: int


@dataclass(frozen=True)
class Scoring:
    """The job's request and the prompts the model at its commit really has."""

    request: Request
    query_prompt: str
    document_prompt: str


@dataclass(frozen=True)
class Revision:
    """The results repository's revision being read: as named, its commit, main's head, main's history (read
    only when a rule asks)."""

    revision: str | None
    sha: str
    main: str
    main_commits: Callable[[], Collection[str]]


@dataclass(frozen=True)
class Record:
    """One result folder's signed record (parsed, signature checked) and the queue it names a request of."""

    folder: str
    record: Mapping[str, Any]
    queue: Queue | None

    @property
    def signed(self) -> Mapping[str, Any]:
        return self.record["request"]

    @property
    def request(self) -> Request | None:
        return self.queue.find(self.signed["path"]) if self.queue is not None else None


Context = Submitting | Admitting | Merging | KeyFile | Scoring | Revision | Record
CONTEXTS: dict[Stage, type] = {
    Stage.SUBMIT: Submitting,
    Stage.ADMIT: Admitting,
    Stage.MERGE: Merging,
    Stage.KEY: KeyFile,
    Stage.JOB: Scoring,
    Stage.BOARD: Revision,
    Stage.VERIFY: Record,
}


@dataclass(frozen=True)
class TrustRule:
    """One rule: its name, the stages it applies at, its check (the message of a failure, None when it holds),
    and the test that shows it (``tests/...py::test_name``)."""

    name: str
    applies: frozenset[Stage]
    check: Callable[[Any], str | None]
    test: str


# --- submit and admission ----------------------------------------------------------------------------------


def _queued_once(c: Submitting) -> str | None:
    earlier = c.queue.find(c.path)
    if earlier is None or earlier.status == "FAILED":
        return None  # a failed request may be submitted again (it starts over)
    result = f"; results at {earlier.result}" if earlier.result else ""
    return (
        f"already {earlier.status} since {stamp(c.queue.since(earlier))} (submitted by {earlier.submitter}): "
        f"--requests {c.queue.repo_id}: {c.path}{result}"
    )


def _opted_out(c: Submitting | Admitting) -> str | None:
    if isinstance(c, Submitting):
        if c.model.split("/")[0] in c.queue.policy.opt_out:
            return f"{c.label}: its author asked not to be scored ({c.queue.repo_id}: opt_out.json)"
        return None
    owner = c.request.model.split("/")[0]
    if owner in c.queue.policy.opt_out:
        return f"{c.request.model}: its author {owner} asked not to be scored (opt_out.json)"
    return None


def _new_pending(c: Admitting) -> str | None:
    fresh = replace(c.request, status="PENDING", attempts=0, worker=None, lease_expires=None, started_at=None,
                    finished_at=None, reason=None, result=None)  # fmt: skip
    if c.request == fresh:
        return None
    return f"{c.request.path}: only a new PENDING request (no attempts, worker, lease, times or result) is admitted"


def _submitter_is_author(c: Admitting) -> str | None:
    if c.request.submitter == c.author:
        return None
    return (
        f"{c.request.path}: field submitter {c.request.submitter[:100]!r} is not the pull request's author "
        f"{c.author}"
    )


def _submitted_when_opened(c: Admitting) -> str | None:
    if abs(parse_time(c.request.submitted_at) - c.opened) <= DAY:
        return None
    return (
        f"{c.request.path}: field submitted_at {c.request.submitted_at} is not when the pull request was opened "
        f"({stamp(c.opened)})"
    )


def _max_pending(c: Admitting) -> str | None:
    who, limit = c.request.submitter, c.queue.policy.max_pending
    pending = [q for q in c.queue.requests if q.submitter == who and q.status in ("PENDING", "RUNNING")]
    if len(pending) < limit:
        return None
    return (
        f"{who} has {len(pending)} requests pending or running, the limit is {limit}; "
        "submit again when one has finished"
    )


def _max_per_day(c: Admitting) -> str | None:
    who, limit = c.request.submitter, c.queue.policy.max_per_day
    if c.recent.get(who, 0) < limit:
        return None
    return f"{who} had {c.recent[who]} requests admitted in the last 24 hours, the limit is {limit}"


def _reviewed_head(c: Merging) -> str | None:
    if c.head == c.reviewed:
        return None
    return f"it changed after it was reviewed (head {c.head[:12]}, reviewed {c.reviewed[:12]}); submit again"


# --- the worker --------------------------------------------------------------------------------------------


def _regular_key_file(c: KeyFile) -> str | None:
    if stat.S_ISREG(c.mode):
        return None
    return f"{c.flag} {c.path}: not a regular file; give the key file itself ({KEYGEN})"


def _owners_key_file(c: KeyFile) -> str | None:
    if not c.mode & 0o077:
        return None
    return (
        f"{c.flag} {c.path}: readable by others (mode {stat.S_IMODE(c.mode):04o}); a private key must be "
        f"its owner's only: chmod 600 {c.path}"
    )


def _setup_prompts(c: Scoring) -> str | None:
    if (c.query_prompt, c.document_prompt) == (c.request.query_prompt, c.request.document_prompt):
        return None
    return f"{c.request.label}: the request's prompts are not those of the {c.request.setup} setup; submit it again"


# --- the board and verify ----------------------------------------------------------------------------------


def _not_a_pull_request(c: Revision) -> str | None:
    if c.revision and c.revision.startswith("refs/pr/"):
        return f"{c.revision} is a pull request: nothing in it is verified until a maintainer merges it"
    return None


def _of_main(c: Revision) -> str | None:
    if c.sha == c.main or c.sha in c.main_commits():
        return None
    return f"{c.revision} ({c.sha[:12]}) is not a commit of main: only what main holds or held verifies"


def _queue_given(c: Record) -> str | None:
    if c.queue is not None:
        return None
    return "no requests repository given (--requests): nothing can be verified without it"


def _queue_readable(c: Record) -> str | None:
    return c.queue.problem if c.queue is not None and c.queue.problem else None


def _signed_for_this_queue(c: Record) -> str | None:
    assert c.queue is not None
    if c.signed["repo"] == c.queue.repo_id:
        return None
    return f"signed for requests repository {c.signed['repo'][:100]}, not {c.queue.repo_id}"


def _request_exists(c: Record) -> str | None:
    assert c.queue is not None
    if c.request is not None:
        return None
    return f"{c.queue.repo_id} has no request {c.signed['path'][:200]}"


def _request_of_this_model(c: Record) -> str | None:
    request = c.request
    assert request is not None
    if (request.model, request.sha, request.setup) == (c.record["model"], c.record["sha"], c.record["setup"]):
        return None
    return f"{request.path} is a request for {request.label}"


def _finished_with_this_folder(c: Record) -> str | None:
    request = c.request
    assert request is not None
    if request.status == "FINISHED" and request.result == c.folder:
        return None
    return f"{request.path} is {request.status} with result {request.result}, not FINISHED with {c.folder}"


def _the_finished_attempt(c: Record) -> str | None:
    request, attempt = c.request, c.signed.get("attempt")
    assert request is not None
    if type(attempt) is int and attempt == request.attempts:
        return None
    return (
        f"signed at attempt {str(attempt)[:20]}, but {request.path} FINISHED at attempt {request.attempts} "
        "(a record of an earlier run)"
    )


def _signed_before_finished(c: Record) -> str | None:
    request = c.request
    assert request is not None
    late = signed_after(c.record.get("signed_at"), request.finished_at)
    return f"{request.path}: {late}" if late else None


def signed_after(signed: Any, finished: str | None) -> str:
    """Why the signing time does not come before the request's finish ("" when it does)."""

    try:
        at = parse_time(signed) if isinstance(signed, str) else None
        end = parse_time(finished) if finished else None
    except ValueError:
        at = end = None
    if at is None or end is None:
        return f"signed_at {str(signed)[:40]!r} or finished_at {finished!r} is not a time"
    if at > end + timedelta(seconds=CLOCK_SKEW_S):
        return f"signed at {signed[:40]}, after the request FINISHED at {finished} (not this run's record)"
    return ""


# --- the list ------------------------------------------------------------------------------------------------

S, A, M, K, J, B, V = Stage  # the order of Stage's members
T, L, P = (
    "tests/leaderboard/test_trust_chain.py::",
    "tests/leaderboard/test_queue_ledger.py::",
    "tests/leaderboard/test_provenance.py::",
)


def _rule(name: str, applies: set[Stage], check: Callable[[Any], str | None], test: str) -> TrustRule:
    return TrustRule(name, frozenset(applies), check, test)


RULES: tuple[TrustRule, ...] = (
    _rule("queued once", {S}, _queued_once, "tests/leaderboard/test_flow.py::test_submit_worker_results_board"),
    _rule("only a new pending request", {A}, _new_pending, L + "test_a_forged_finished_request_cannot_enter"),
    _rule("the submitter is the author", {A}, _submitter_is_author,
          L + "test_the_submitter_is_the_pull_requests_author"),
    _rule("submitted when opened", {A}, _submitted_when_opened,
          L + "test_a_submitted_at_that_is_not_when_the_pull_request_was_opened_is_refused"),
    _rule("the author's opt-out", {S, A}, _opted_out, L + "test_opt_out_list_of_model_authors"),
    _rule("max pending", {A}, _max_pending, L + "test_submitter_limits_pending_and_per_day"),
    _rule("max per day", {A}, _max_per_day, L + "test_submitter_limits_pending_and_per_day"),
    _rule("merge the reviewed head", {M}, _reviewed_head, T + "test_a_push_after_review_is_not_merged"),
    _rule("a key file is a regular file", {K}, _regular_key_file,
          T + "test_a_key_file_readable_by_others_or_not_a_file_is_refused_in_one_line"),
    _rule("a key file is its owner's only", {K}, _owners_key_file,
          T + "test_a_key_file_readable_by_others_or_not_a_file_is_refused_in_one_line"),
    _rule("the setup's prompts", {J}, _setup_prompts,
          "tests/leaderboard/test_trust_rules.py::test_a_job_whose_request_prompts_are_not_the_setups_is_refused"),
    _rule("a pull request verifies nothing", {B}, _not_a_pull_request, T + "test_a_pull_request_cannot_verify_itself"),
    _rule("only main verifies", {B}, _of_main, T + "test_a_pull_request_cannot_verify_itself"),
    _rule("a queue is given", {V}, _queue_given,
          P + "test_a_valid_signature_without_a_finished_request_naming_the_folder_is_self_reported"),
    _rule("the queue's policy is readable", {V}, _queue_readable,
          T + "test_a_malformed_policy_makes_rows_self_reported_and_admission_refuses_to_act"),
    _rule("signed for this queue", {V}, _signed_for_this_queue,
          "tests/leaderboard/test_trust_rules.py::test_a_record_signed_for_another_queue_or_model_is_refused"),
    _rule("the signed request exists", {V}, _request_exists,
          P + "test_a_valid_signature_without_a_finished_request_naming_the_folder_is_self_reported"),
    _rule("the request is for this model", {V}, _request_of_this_model,
          "tests/leaderboard/test_trust_rules.py::test_a_record_signed_for_another_queue_or_model_is_refused"),
    _rule("finished with this folder", {V}, _finished_with_this_folder,
          P + "test_a_valid_signature_without_a_finished_request_naming_the_folder_is_self_reported"),
    _rule("the finished attempt", {V}, _the_finished_attempt,
          T + "test_a_record_of_an_earlier_attempt_is_not_the_finished_run"),
    _rule("signed before it finished", {V}, _signed_before_finished,
          T + "test_a_record_signed_after_the_request_finished_is_not_its_run"),
)  # fmt: skip


def rules(stage: Stage) -> tuple[TrustRule, ...]:
    """The rules that apply at ``stage``, in :data:`RULES`' order (the order their failures are reported in)."""
    return tuple(rule for rule in RULES if stage in rule.applies)


def check(stage: Stage, context: Context) -> str | None:
    """The first failing rule's message at ``stage``, or None when every rule holds (later rules are not run:
    they may read what earlier ones checked, and a rule may read the Hub lazily through its context)."""
    _expect(stage, context)
    for rule in rules(stage):
        message = rule.check(context)
        if message:
            return message
    return None


def _expect(stage: Stage, context: Context) -> None:
    if not isinstance(context, CONTEXTS[stage]):
        raise TypeError(
            f"{stage.name} rules read a {CONTEXTS[stage].__name__}, not a {type(context).__name__}"
        )
