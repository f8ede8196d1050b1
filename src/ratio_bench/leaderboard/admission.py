"""``ratio leaderboard admit``: the maintainers' gate between a submitter's pull request and the queue.

Submitters propose requests as pull requests on the requests repository (``ratio leaderboard submit``); only
maintainers and workers write its main branch. Admission reads each open pull request and re-runs every check
of ``submit`` on what the pull request really contains, not on what the submitter's tool said:

- it adds exactly one file, at a request's path (``OWNER/MODEL/SHA_SETUP.json``), and changes nothing else (a
  pull request of 1,000 requests, or one that edits someone's request or the policy, is refused whole);
- the file parses (:func:`requests.parse_request`) and is a new request: ``PENDING``, no attempt, no worker,
  lease, times or result (a forged ``RUNNING`` or ``FINISHED`` never enters);
- its ``submitter`` is the pull request's author (the Hub account that opened it);
- the model exists at that commit and passes the model checks (:func:`submit.inspect_model`), with the setup's
  own prompts and parameter count;
- it is not queued already (a ``FAILED`` request may start over), and no other pending request of the same
  setup has the same weights (one job per set of weights, whatever the repo is called);
- the model's author is not on the opt-out list (``opt_out.json``);
- the submitter is within the limits (``policy.json``: at most ``max_pending`` requests pending or running, at most
  ``max_per_day`` admitted in 24 hours of Hub time).

A valid pull request is merged (the merge commit's time on the Hub orders the queue); an invalid one is closed
with a one-line comment giving the reason.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime

from ratio_bench.core import extras
from ratio_bench.leaderboard import hub, ledger, trust
from ratio_bench.leaderboard.hub import LeaderboardError
from ratio_bench.leaderboard.requests import (
    MAX_REQUEST_BYTES,
    Queue,
    Request,
    RequestError,
    is_request_path,
    parse_request,
    read_queue,
)
from ratio_bench.leaderboard.submit import inspect_model
from ratio_bench.leaderboard.trust import DAY, Stage

huggingface_hub = extras.lazy("huggingface_hub")


@dataclass(frozen=True)
class Verdict:
    """What admission did with one pull request."""

    num: int
    author: str
    path: str | None
    admitted: bool
    reason: str

    def __str__(self) -> str:
        what = "merged" if self.admitted else "closed"
        return f"#{self.num} by {self.author}: {what} ({self.reason})" + (
            f": {self.path}" if self.path else ""
        )


class Refused(LeaderboardError):
    """A pull request admission closes (the message is the one-line reason commented on it)."""


@dataclass
class Round:
    """One admission pass: the queue as merged so far, main's history, what each submitter has had admitted."""

    repo_id: str
    queue: Queue
    main: list[tuple[str, ledger.Change]]
    recent: dict[str, int]  # author -> pull requests merged in the last 24 hours
    max_params: int
    weights: dict[tuple[str, str], str]  # (model, sha) -> weights fingerprint, fetched once


def weights_fingerprint(model: str, sha: str) -> str:
    """SHA-256 over the model's safetensors files' own SHA-256 (as the Hub lists them): same weights, same print."""
    with hub.hub_errors(f"{model}@{sha[:12]}"):
        info = hub.api().model_info(model, revision=sha, files_metadata=True)
    parts = sorted(
        (s.lfs.sha256 if s.lfs else s.blob_id) or ""
        for s in info.siblings or []
        if s.rfilename.endswith(".safetensors")
    )
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()


@dataclass(frozen=True)
class Reviewed:
    """What admission reviewed: the request, the pull request's head commit, and the one file's blob id there."""

    request: Request
    head: str
    blob: str


def _the_request(r: Round, num: int, author: str) -> Reviewed:
    """The one new request pull request ``num`` adds, checked as a file; Refused otherwise."""
    head, changed = ledger.pull_request_changes(r.repo_id, num, r.main)
    if len(changed) != 1:
        raise Refused(
            f"a pull request adds exactly one request file; this one changes {len(changed):,} files"
        )
    ((path, blob),) = changed.items()
    if blob is None or not is_request_path(path) or len(path) > 400:
        raise Refused(f"{path[:200]}: a pull request may only add a request file OWNER/MODEL/SHA_SETUP.json")
    current = r.queue.find(path)  # a FAILED request starts over; an ignored (untrusted) file is replaced
    if current is not None and current.status != "FAILED":
        raise Refused(f"{path}: already {current.status} in the queue")
    sizes = hub.tree(r.repo_id, "dataset", head)
    if sizes.get(path, 0) > MAX_REQUEST_BYTES:
        raise Refused(f"{path}: over {MAX_REQUEST_BYTES:,} bytes")
    try:
        request = parse_request(hub.read_small(r.repo_id, "dataset", head, path), path)
    except RequestError as e:
        raise Refused(f"{path}: {e}") from None
    return Reviewed(request, head, blob)


def _fingerprint(r: Round, model: str, sha: str) -> str:
    if (model, sha) not in r.weights:
        r.weights[model, sha] = weights_fingerprint(model, sha)
    return r.weights[model, sha]


def _check_model(r: Round, request: Request) -> None:
    """The model at the request's commit passes ``submit``'s checks, with the same prompts and parameters, and its
    weights are not pending under another name; Refused otherwise."""
    try:
        checked = inspect_model(request.model, request.sha, request.setup, r.max_params)
    except LeaderboardError as e:
        raise Refused(str(e).splitlines()[0][:300]) from None
    stated = (request.sha, request.query_prompt, request.document_prompt, request.parameters)
    if stated != (checked.sha, checked.query_prompt, checked.document_prompt, checked.parameters):
        raise Refused(f"{request.label}: its commit, prompts or parameter count differ from the model's")
    mine = _fingerprint(r, request.model, request.sha)
    for other in r.queue.requests:
        same = other.status in ("PENDING", "RUNNING") and other.setup == request.setup
        if same and _fingerprint(r, other.model, other.sha) == mine:
            raise Refused(f"{request.label}: the same weights are queued already as {other.label}")


def review(r: Round, num: int, author: str, opened: datetime) -> Reviewed:
    """Every check on pull request ``num`` (by ``author``, opened at ``opened`` on the Hub's clock); the request it
    adds (with the head and blob reviewed), or Refused with the reason."""
    reviewed = _the_request(r, num, author)
    refused = trust.check(Stage.ADMIT, trust.Admitting(reviewed.request, author, opened, r.queue, r.recent))
    if refused:
        raise Refused(refused)
    _check_model(r, reviewed.request)
    return reviewed


def _act(r: Round, verdict: Verdict, reviewed: Reviewed | None = None) -> Verdict:
    """Merge (admitted: only the head that was reviewed, and the merge checked to change exactly the reviewed file,
    else reverted) or close with the reason as a comment (refused). Returns what was done."""
    api = hub.api()
    with hub.hub_errors(f"--requests {r.repo_id}: pull request #{verdict.num}"):
        if not verdict.admitted:
            api.change_discussion_status(
                r.repo_id, verdict.num, "closed", comment=f"Refused: {verdict.reason}", repo_type="dataset"
            )
            return verdict
        assert reviewed is not None
        now = hub.head(r.repo_id, "dataset", f"refs/pr/{verdict.num}")
        moved = trust.check(Stage.MERGE, trust.Merging(reviewed.head, now))
        if moved:
            return _act(r, replace(verdict, admitted=False, path=None, reason=moved))
        api.merge_pull_request(
            r.repo_id, verdict.num, comment=f"Admitted: {verdict.reason}", repo_type="dataset"
        )
        merged = api.get_discussion_details(r.repo_id, verdict.num, repo_type="dataset").merge_commit_oid
    return _check_merge(r, verdict, reviewed, merged)


def _check_merge(r: Round, verdict: Verdict, reviewed: Reviewed, merged: str | None) -> Verdict:
    """The merge commit changes exactly the reviewed file to the reviewed bytes; anything else is reverted (every
    path it changed back to its parent's version) and the reason commented on the pull request."""
    chain = ledger.history(r.repo_id, merged) if merged else []
    if len(chain) < 2:
        return verdict  # nothing to compare with (a Hub that names no merge commit)
    after, before = ledger.files_at(r.repo_id, chain[0][0]), ledger.files_at(r.repo_id, chain[1][0])
    changed = {p: after.get(p) for p in set(after) | set(before) if after.get(p) != before.get(p)}
    if changed == {reviewed.request.path: reviewed.blob}:
        return verdict
    reason = (
        f"the merge changed {', '.join(sorted(changed)[:5])[:300]} ({len(changed)} files), not only the reviewed "
        f"{reviewed.request.path}; reverted"
    )
    _revert(r, chain[1][0], changed, f"Revert #{verdict.num}: not what admission reviewed")
    with hub.hub_errors(f"--requests {r.repo_id}: pull request #{verdict.num}"):
        hub.api().comment_discussion(r.repo_id, verdict.num, f"Reverted: {reason}", repo_type="dataset")
    return replace(verdict, admitted=False, path=None, reason=reason)


def _revert(r: Round, parent: str, changed: dict[str, str | None], message: str) -> None:
    """Put every path in ``changed`` back to its version at ``parent`` in one commit on main's head."""

    for _ in range(10):
        base = hub.head(r.repo_id, "dataset")
        ops = []
        for path in sorted(changed):
            old = hub.read_small(r.repo_id, "dataset", parent, path) if _exists(r, parent, path) else None
            ops.append(
                huggingface_hub.CommitOperationAdd(path, old)
                if old is not None
                else huggingface_hub.CommitOperationDelete(path)
            )
        try:
            with hub.hub_errors(f"--requests {r.repo_id}"):
                hub.api().create_commit(
                    r.repo_id, ops, commit_message=message, repo_type="dataset", parent_commit=base
                )
            return
        except hub.StaleHead:
            continue
    raise LeaderboardError(f"--requests {r.repo_id}: could not revert ({message}); the maintainers must")


def _exists(r: Round, sha: str, path: str) -> bool:
    return path in ledger.files_at(r.repo_id, sha)


def _still_open(r: Round, num: int) -> bool:
    with hub.hub_errors(f"--requests {r.repo_id}: pull request #{num}"):
        return hub.api().get_discussion_details(r.repo_id, num, repo_type="dataset").status == "open"


def _decide(r: Round, pr) -> Verdict:
    """Review pull request ``pr`` and merge or close it on the Hub (another admission that decided it first, a
    second worker with ``--admit``, wins: this one reports that and goes on)."""
    if not _still_open(r, pr.num):
        return Verdict(pr.num, pr.author, None, False, "decided by another admission meanwhile")
    reviewed = None
    try:
        reviewed = review(r, pr.num, pr.author, pr.created_at)
        request = reviewed.request
        verdict = Verdict(pr.num, pr.author, request.path, True, f"{request.label} is queued")
    except Refused as e:
        verdict = Verdict(pr.num, pr.author, None, False, str(e))
    try:
        verdict = _act(r, verdict, reviewed)
    except hub.StaleHead:  # main changed the same file since the pull request began
        verdict = replace(
            verdict, admitted=False, reason="it conflicts with the queue's main branch; submit again"
        )
        _act(r, verdict)
    except LeaderboardError:
        if _still_open(r, pr.num):
            raise
        return replace(verdict, admitted=False, reason="decided by another admission meanwhile")
    if verdict.admitted:
        r.recent[pr.author] = r.recent.get(pr.author, 0) + 1
    return verdict


def _over_cap(pr, seen: dict[str, int], cap: int) -> Verdict | None:
    """A refusal, before any review, of an author's pull request past ``cap`` open ones (oldest first count)."""
    seen[pr.author] = seen.get(pr.author, 0) + 1
    if seen[pr.author] <= cap:
        return None
    return Verdict(pr.num, pr.author, None, False, (
        f"{pr.author} has more than {cap} pull requests open; at most {cap} are reviewed at once, close the "
        "others or wait for them"
    ))  # fmt: skip


def admit(
    repo_id: str, max_params: int, log: Callable[[str], None], max_reviews: int | None = None
) -> list[Verdict]:
    """Review every open pull request of the requests repository, oldest first: merge the valid, close the rest.
    A queue whose policy cannot be read is not acted on (fail closed); an author's pull requests past the cap
    are closed before any review; the queue is read again only when main moved (after a merge). ``max_reviews``:
    at most this many full reviews this round (a worker's, so that a flood of pull requests never holds up its
    claims); the rest stay open for the next round."""
    prs = ledger.pull_requests(repo_id)
    now = ledger.hub_time(repo_id)
    recent: dict[str, int] = {}
    for pr in prs:
        if pr.status == "merged" and now - pr.created_at < DAY:
            recent[pr.author] = recent.get(pr.author, 0) + 1
    queue = read_queue(repo_id)
    queue.require_policy(f"--requests {repo_id}: admission")
    cap = max(1, queue.policy.max_open)
    verdicts, weights, seen, reviewed = [], {}, {}, 0
    r = Round(repo_id, queue, ledger.history(repo_id, queue.sha), recent, max_params, weights)
    for pr in (p for p in prs if p.status == "open"):
        capped = _over_cap(pr, seen, cap)
        if capped is not None:  # closed unread: no queue read, no model download
            if _still_open(r, pr.num):
                _act(r, capped)
                log(str(capped))
                verdicts.append(capped)
            continue
        if max_reviews is not None and reviewed >= max_reviews:
            log(f"#{pr.num} and later: left open for the next round (at most {max_reviews} reviews a round)")
            break
        reviewed += 1
        if hub.head(repo_id, "dataset") != r.queue.sha:  # a merge (ours or anyone's): read it again
            queue = read_queue(repo_id)
            queue.require_policy(f"--requests {repo_id}: admission")
            r = Round(repo_id, queue, ledger.history(repo_id, queue.sha), recent, max_params, weights)
        verdict = _decide(r, pr)
        log(str(verdict))
        verdicts.append(verdict)
    return verdicts
