"""A submission's life as its submitter sees it: where it stands in the queue and how long it may wait, why it
failed (and whose fault that was), a notice on its pull request when it ends, and the command that reproduces it.

- **Position and wait** (:func:`wait_for`): the requests ahead in the Hub's order (:meth:`Queue.claimable`) and the
  running ones, times the median length of the recent jobs (their ``started_at``/``finished_at``, written by
  workers on the Hub's clock), shared among the workers seen lately. An estimate, stated as one.
- **Failure classes** (:func:`classify`): a Hub timeout or 5xx, a lost connection or a full disk is the
  infrastructure's fault: the worker retries it with backoff and, if it persists, puts the request back in the
  queue without spending one of its attempts. Anything else is the model's: the request ends ``FAILED`` with a
  one-line reason the submitter can act on.
- **Notices** (:func:`notify`): the worker comments on the pull request that admitted the request (found by its
  path among the queue's merged pull requests) with the outcome, the result folder and the model repo's
  eval-results pull request, which links back.
- **Reproduce** (:func:`reproduce_command`, :func:`reproduce`): every entry names ``ratio leaderboard reproduce
  MODEL@SHA --setup S --split SPLIT --dataset NAME@VERSION``, which scores the same commit with the same setup and
  the worker's own scoring code on a local copy of the release.
"""

from __future__ import annotations

import errno
import json
import re
import statistics
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, TypeVar

from ratio_bench.leaderboard import hub
from ratio_bench.leaderboard.hub import LeaderboardError
from ratio_bench.leaderboard.requests import SETUPS, SHA, Queue, Request, parse_time

INFRASTRUCTURE, MODEL = "infrastructure", "model"
RECENT_JOBS = 20  # the jobs whose lengths make the estimate
MAX_PRS_SEARCHED = 200  # merged pull requests looked through for a request's own
INFRA_ERRNOS = {errno.ENOSPC, errno.EDQUOT, errno.EIO, errno.EROFS, errno.EAGAIN}
RETRY_STATUSES = {408, 429, 500, 502, 503, 504}
T = TypeVar("T")

# --- position and wait ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Wait:
    """Where a request stands: requests ahead of it (pending, in the Hub's order), running ones, and the typical
    job length (None: no finished job to time yet) shared among ``workers``."""

    ahead: int
    running: int
    typical_s: float | None
    workers: int
    jobs_timed: int

    @property
    def estimate_s(self) -> float | None:
        if self.typical_s is None:
            return None
        return self.typical_s * (self.ahead + self.running / 2 + 1) / self.workers

    def text(self) -> str:
        where = f"position {self.ahead + 1} ({self.ahead} pending ahead, {self.running} running)"
        if self.estimate_s is None:
            return f"{where}; no estimate of the wait yet (no finished job to time)"
        return (
            f"{where}; about {duration(self.estimate_s)} until its result (median job "
            f"{duration(self.typical_s)} over the last {self.jobs_timed}, {self.workers} worker(s))"
        )


def duration(seconds: float) -> str:
    seconds = max(0, round(seconds))
    if seconds < 90:
        return f"{seconds} s"
    if seconds < 90 * 60:
        return f"{round(seconds / 60)} min"
    return f"{seconds / 3600:.1f} h"


def job_lengths(queue: Queue) -> tuple[list[float], set[str]]:
    """The lengths (s) of the most recent ended jobs, newest first, and the workers that ran them."""
    ended = [
        r for r in queue.requests if r.status in ("FINISHED", "FAILED") and r.started_at and r.finished_at
    ]
    ended.sort(key=lambda r: parse_time(r.finished_at), reverse=True)
    lengths, workers = [], set()
    for r in ended[:RECENT_JOBS]:
        seconds = (parse_time(r.finished_at) - parse_time(r.started_at)).total_seconds()
        if seconds >= 0:
            lengths.append(seconds)
            workers.add(r.worker or "")
    return lengths, workers


def wait_for(queue: Queue, now: datetime, path: str | None = None) -> Wait:
    """The wait of the request at ``path`` (None: of a request admitted now, behind every pending one)."""
    pending = [r for r in queue.claimable(now) if r.status == "PENDING"]
    order = [r.path for r in pending]
    ahead = order.index(path) if path in order else len(order)
    running = [r for r in queue.requests if r.status == "RUNNING" and not r.lease_expired(now)]
    lengths, workers = job_lengths(queue)
    workers |= {r.worker or "" for r in running}
    typical = statistics.median(lengths) if lengths else None
    return Wait(ahead, len(running), typical, max(1, len(workers)), len(lengths))


# --- failure classes -----------------------------------------------------------------------------------------


def classify(exc: BaseException) -> str:
    """``infrastructure`` for a Hub timeout or 5xx, a connection error or a full/failing disk anywhere in the
    exception's chain (a message re-raised as one line keeps its cause as ``__context__``), else ``model``."""
    import httpx

    seen = 0
    while exc is not None and seen < 10:
        if isinstance(exc, OSError) and exc.errno in INFRA_ERRNOS:
            return INFRASTRUCTURE
        if isinstance(exc, ConnectionError | TimeoutError | httpx.TransportError):
            return INFRASTRUCTURE
        response = getattr(exc, "response", None)
        if getattr(response, "status_code", None) in RETRY_STATUSES:
            return INFRASTRUCTURE
        exc, seen = exc.__cause__ or exc.__context__, seen + 1
    return MODEL


def with_backoff(
    what: str, action: Callable[[], T], tries: int, base_s: float, log: Callable[[str], None]
) -> T:
    """``action()``, retried after ``base_s``, 2x, 4x ... seconds while it fails for the infrastructure; a model
    error, or the last infrastructure error, is raised."""
    for attempt in range(1, tries + 1):
        try:
            return action()
        except Exception as e:
            if classify(e) != INFRASTRUCTURE or attempt == tries:
                raise
            wait = base_s * 2 ** (attempt - 1)
            log(f"{what}: infrastructure error ({str(e)[:200]}); retry {attempt}/{tries - 1} in {wait:g} s")
            time.sleep(wait)
    raise AssertionError("unreachable")


# --- notices on the request's pull request -------------------------------------------------------------------


def request_pr(repo_id: str, path: str) -> tuple[int, str] | None:
    """(number, URL) of the merged pull request of the queue that added ``path`` (the newest, after a resubmission)."""
    from ratio_bench.leaderboard import ledger

    merged = [pr for pr in ledger.pull_requests(repo_id) if pr.status == "merged"]
    api = hub.api()
    for pr in sorted(merged, key=lambda p: p.num, reverse=True)[:MAX_PRS_SEARCHED]:
        with hub.hub_errors(f"--requests {repo_id}: pull request #{pr.num}"):
            details = api.get_discussion_details(repo_id, pr.num, repo_type="dataset")
        if path in (details.diff or ""):
            return pr.num, f"{api.endpoint}/datasets/{repo_id}/discussions/{pr.num}"
    return None


def notify(repo_id: str, request: Request, text: str, log: Callable[[str], None]) -> str | None:
    """Comment ``text`` on the request's pull request; its URL, or None (no such pull request, or the Hub
    refused: logged, never failing the request)."""
    try:
        found = request_pr(repo_id, request.path)
        if found is None:
            log(f"{request.label}: no merged pull request adds {request.path}; no notice posted")
            return None
        with hub.hub_errors(f"--requests {repo_id}: pull request #{found[0]}"):
            hub.api().comment_discussion(repo_id, found[0], text, repo_type="dataset")
        return found[1]
    except LeaderboardError as e:
        log(f"{request.label}: the notice could not be posted ({e})")
        return None


def finished_text(request: Request, folder_url: str, figures: str, eval_pr: str | None, command: str) -> str:
    proposed = (
        f"Eval results proposed to {request.model}: {eval_pr} (its authors merge it or not)."
        if eval_pr
        else "No eval-results pull request was opened on the model repo."
    )
    return (
        f"Finished: {request.label} was scored by {request.worker} (attempt {request.attempts}). "
        f"Verified results: {folder_url} ({figures}). {proposed} Reproduce locally: `{command}`"
    )


def failed_text(request: Request, reason: str) -> str:
    return (
        f"Failed: {request.label}: {reason}. This is the model's (or setup's) error: fix it and submit again "
        "(a failed request may be submitted again)."
    )


def delayed_text(request: Request, reason: str) -> str:
    return (
        f"Delayed: {request.label} hit an infrastructure error ({reason}). It is back in the queue and this "
        "does not count against its attempts."
    )


def figures(entry: dict[str, Any]) -> str:
    """``test MRR@10: address 41.2, specify 30.0`` (x 100) of an entry."""
    from ratio_bench.evaluation.results import MAIN_SCORE

    scores = ", ".join(f"{rel} {100 * m[MAIN_SCORE]:.1f}" for rel, m in sorted(entry["results"].items()))
    return f"{entry['split']} MRR@10: {scores}"


# --- who submitted it ----------------------------------------------------------------------------------------


def third_party(model: str, submitter: str | None) -> bool:
    """Whether ``submitter`` is not the model repo's owner (user or organisation name)."""
    return bool(submitter) and submitter != model.split("/")[0]


def submitted_by(model: str, submitter: str | None) -> str:
    """What the board says of a submission of someone else's model ("" for the author's own)."""
    return f"submitted by {submitter}, not the model's author" if third_party(model, submitter) else ""


# --- reproduce -----------------------------------------------------------------------------------------------

NAME_AT_VERSION = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]{0,99})@([A-Za-z0-9][A-Za-z0-9._-]{0,49})$")


def reproduce_command(model: str, sha: str, setup: str, split: str, release_name: str, version: str) -> str:
    """The one command that scores ``model`` at ``sha`` with ``setup`` on ``split`` of the release again."""
    return (
        f"ratio leaderboard reproduce {model}@{sha} --setup {setup} --split {split} "
        f"--dataset {release_name}@{version}"
    )


def release_folder(text: str) -> Path:
    """``--dataset`` of reproduce: a release folder, or ``NAME@VERSION`` (the release of that name and version in
    the current folder: ``./NAME`` or a folder beside it), or a Hub dataset ``REPO@REV``."""
    if Path(text).is_dir():
        return Path(text)
    named = NAME_AT_VERSION.match(text)
    if not named:
        from ratio_bench.leaderboard.worker import local_dataset

        return local_dataset(text)[0]
    name, version = named.groups()
    found = {}
    for folder in [Path(name), *sorted(Path(".").iterdir())[:MAX_FOLDERS_LOOKED_AT]]:
        opened = _release_at(folder)
        if opened is not None and opened[0] == name:
            found.setdefault(opened[1], folder)
    if version in found:
        return found[version]
    other = f" (found version {', '.join(sorted(found))}: get release {version})" if found else ""
    raise LeaderboardError(
        f"--dataset {text}: no release {name} {version} in this folder{other}; run from the folder that holds it, "
        "or give the release folder's path"
    )


MAX_FOLDERS_LOOKED_AT = 200


def _release_at(folder: Path) -> tuple[str, str] | None:
    """(name, version) of the release in ``folder``, None when it holds none that opens."""
    from ratio_bench.dataset.release import Release

    if not (folder / "manifest.json").is_file():
        return None
    try:
        release = Release.open(folder)
    except Exception:  # noqa: BLE001 - a folder that is no release is skipped, whatever is wrong with it
        return None
    return release.name, release.version


def reproduce(model_at: str, setup: str, split: str, dataset: str, cache_dir: Path | None = None) -> dict:
    """Score ``MODEL@SHA`` with ``setup`` on ``split`` as the worker's job does (:func:`.job.run_job`: the pinned
    commit, the submission checks, the setup's prompts); returns the entry."""
    from ratio_bench.leaderboard.job import run_job
    from ratio_bench.leaderboard.submit import MAX_PARAMETERS, inspect_model

    model, _, sha = model_at.partition("@")
    if not SHA.match(sha):
        raise LeaderboardError(
            f"MODEL {model_at}: give ORG/NAME@SHA, the 40-character commit the entry names"
        )
    if setup not in SETUPS:
        raise LeaderboardError(f"--setup {setup}: choose one of {', '.join(SETUPS)}")
    folder = release_folder(dataset)
    checked = inspect_model(model, sha, setup)
    request = Request(model, sha, sha, setup, checked.query_prompt, checked.document_prompt, "float32",
                      "local", "1970-01-01T00:00:00Z", parameters=checked.parameters)  # fmt: skip
    with tempfile.TemporaryDirectory(prefix="ratio-reproduce-") as tmp:
        request_file = Path(tmp) / "request.json"
        request_file.write_bytes(request.to_json())
        out = Path(tmp) / "out"
        run_job(request_file, request.path, folder, out, max_params=MAX_PARAMETERS, cache_dir=cache_dir,
                splits=(split,))  # fmt: skip
        return json.loads((out / f"{split}.json").read_text(encoding="utf-8"))
