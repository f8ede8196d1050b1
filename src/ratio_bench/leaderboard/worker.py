"""``ratio leaderboard worker``: claim the oldest pending request, score it, publish the result, repeat.

Claiming is an optimistic lock on the requests repository: the worker reads the queue at commit ``H``, writes the
request as ``RUNNING`` (its id, an attempt more, a lease expiry) in a commit whose parent must be ``H``; when
another writer got there first the Hub refuses the commit, and the worker reads again and takes the next one.
The job runs in a process of its own (:mod:`ratio_bench.leaderboard.job`) killed at ``lease * 0.8`` at the latest,
so a live worker always ends before its lease does and no second worker can claim what it is scoring. A worker
killed at any moment leaves its request ``RUNNING`` with a lease that expires; the next worker claims it again,
up to :data:`~ratio_bench.leaderboard.requests.MAX_ATTEMPTS` attempts, then marks it ``FAILED``. Results go to
``<org>/<model>/<sha>/<setup>/`` in the results repository, one folder per request, so a request scored twice
(a worker killed between publishing and marking ``FINISHED``) still leaves one entry.
"""

from __future__ import annotations

import ctypes
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from ratio_bench import __version__
from ratio_bench.core import extras
from ratio_bench.dataset.custody import Custody, CustodyError, withheld_of
from ratio_bench.dataset.hub_release import HubRef, fetch
from ratio_bench.dataset.release import Release, manifest_sha256
from ratio_bench.evaluation.board.leaderboard import check_against_release, release_queries
from ratio_bench.evaluation.entry.hub_eval import HubEvalError
from ratio_bench.leaderboard import hub, ledger
from ratio_bench.leaderboard.admission import admit
from ratio_bench.leaderboard.failures import INFRASTRUCTURE, MODEL, with_backoff
from ratio_bench.leaderboard.hub import LeaderboardError, RepoRef
from ratio_bench.leaderboard.hub_results import propose_eval_results
from ratio_bench.leaderboard.job import FAILURE, FAILURE_CLASS, SUMMARY
from ratio_bench.leaderboard.judging import Judging, Scored, judge_round
from ratio_bench.leaderboard.limits import DEFAULT_LEASE_S
from ratio_bench.leaderboard.notices import (
    delayed_text,
    failed_text,
    figures,
    finished_text,
    notify,
    request_pr,
)
from ratio_bench.leaderboard.provenance import (
    PROVENANCE,
    SCHEMA,
    TRUSTED_WORKERS,
    WorkerKey,
    read_listing,
    sha256,
    signed_at,
)
from ratio_bench.leaderboard.requests import (
    MAX_ATTEMPTS,
    SHA,
    Request,
    now_utc,
    read_queue,
    stamp,
    write_request,
)
from ratio_bench.leaderboard.submit import MAX_PARAMETERS

hf_constants = extras.lazy("huggingface_hub.constants")

PROVENANCE_SCHEMA = SCHEMA
CLAIM_TRIES = 20
ADMIT_PER_CLAIM = 10  # pull requests a worker with --admit reviews before each claim (the rest: next time)


@dataclass(frozen=True)
class WorkerOptions:
    requests: str
    results: str
    dataset: Path  # a local release folder (a Hub dataset is downloaded first: :func:`local_dataset`)
    dataset_source: str
    worker_id: str
    lease_s: float = DEFAULT_LEASE_S
    max_params: int = MAX_PARAMETERS
    batch_size: int = 64
    cache_dir: Path | None = None
    judging: Judging | None = None  # grow the results repository's judged pool after each result
    key: WorkerKey | None = None  # signs what the worker publishes (:mod:`.provenance`); required to publish
    admit: bool = False  # merge or close the queue's open pull requests before each claim
    log_file: Path | None = None  # the jobs' output and tracebacks (None: the worker's own stderr)
    infra_retries: int = (
        3  # tries of a job or a publish that fails for the infrastructure (Hub 5xx, full disk)
    )
    retry_backoff_s: float = 30.0  # the first wait between them (doubling)
    custody: Path | None = None  # the release's custody folder: every job also scores the withheld split

    @property
    def job_timeout_s(self) -> float:
        return self.lease_s * 0.8  # time left to publish before the lease ends


def default_worker_id(key: WorkerKey) -> str:
    """The worker's public name by default: its key's id (never the host name or process id, which it publishes)."""
    return f"worker-{key.key_id}"


def default_log_file(cache_dir: Path | None) -> Path:
    """Where a worker's jobs write their output: beside its embedding cache (``--cache-dir``, else the default
    one under ``RATIO_CACHE``), one file that every worker there appends to."""
    if cache_dir is not None:
        return cache_dir.parent / "worker.log"
    return Path(os.environ.get("RATIO_CACHE", Path.home() / ".cache" / "ratio")) / "worker.log"


def local_dataset(text: str) -> tuple[Path, str]:
    """(release folder, how the entries name its source) of ``--dataset``: a folder or a Hub ``REPO[@REV]``. A
    local folder is named by its release and manifest hash, never its path on this machine."""
    if Path(text).is_dir():
        release = Release.open(text)
        named = (
            f"local release {release.name} {release.version} (manifest {manifest_sha256(release.manifest)})"
        )
        return Path(text), named
    ref = RepoRef.parse(text, "--dataset")
    release = fetch(HubRef(ref.repo_id, ref.revision), shown=f"--dataset {ref}")  # pinned, cached, checked
    return release.root, str(release.hub)


def local_custody(text: str, dataset: Path) -> Path:
    """The custody folder of ``--custody``: a folder, or a private Hub dataset ``REPO[@REV]`` downloaded with the
    worker's token (which must be able to read it; nobody else's can). It must go with the release: the same
    withheld records (``ratio dataset check``'s pairing), else a one-line refusal before anything is claimed."""
    if Path(text).is_dir():
        folder = Path(text)
    else:
        ref = RepoRef.parse(text, "--custody")
        with hub.hub_errors(f"--custody {ref}"):
            sha = hub.api().repo_info(ref.repo_id, repo_type="dataset", revision=ref.revision).sha
            folder = custody_home() / ref.repo_id.replace("/", "--") / sha
            folder.mkdir(parents=True, exist_ok=True)
            hub.api().snapshot_download(ref.repo_id, repo_type="dataset", revision=sha, local_dir=folder)
    custody = Custody.open(folder)
    held = withheld_of(Release.open(dataset).manifest)
    if custody.withheld != held:
        raise CustodyError(
            f"--custody {text}: holds {sorted(custody.withheld) or 'nothing'}, the release withholds "
            f"{sorted(held) or 'nothing'}: not this release's custody folder"
        )
    return folder


def custody_home() -> Path:
    """Where a worker keeps custody downloads: plain files (not the Hub cache's symlinks) in a folder only its
    user can read, beside the Hub cache (``HF_HOME``)."""

    home = Path(hf_constants.HF_HOME) / "ratio-custody"
    home.mkdir(parents=True, exist_ok=True)
    home.chmod(0o700)
    return home


def claim(
    repo_id: str,
    worker_id: str,
    lease_s: float,
    log: Callable[[str], None],
    skip: frozenset[str] = frozenset(),
) -> Request | None:
    """Claim the request the Hub admitted first (None when there is none; ``skip``: paths this worker put back
    after an infrastructure error, left to a later pass); a request out of attempts, or of a model whose author
    has opted out since its admission, becomes FAILED. Leases are
    written and read on the Hub's clock (:func:`ledger.hub_time`), never this machine's."""
    for _ in range(CLAIM_TRIES):
        queue = read_queue(repo_id)
        now = ledger.hub_time(repo_id)
        ready = [r for r in queue.claimable(now) if r.path not in skip]
        if not ready:
            return None
        request = ready[0]
        if request.status == "RUNNING" and request.attempts >= MAX_ATTEMPTS:
            new = request.ended(
                "FAILED",
                now,
                reason=f"no result after {MAX_ATTEMPTS} attempts (each worker died or ran out of time)",
            )
            message = f"Give up {request.label}"
        elif request.model.split("/")[0] in queue.policy.opt_out:  # the author opted out after admission
            new = request.ended("FAILED", now, reason=f"its author asked not to be scored ({ledger.OPT_OUT})")
            message = f"Opted out {request.label}"
        else:
            new = request.claimed(worker_id, now, lease_s)
            message = f"Claim {request.label} (attempt {new.attempts}) by {worker_id}"
        try:
            write_request(repo_id, new, queue.sha, message)
        except hub.StaleHead:
            log(f"{request.label}: the queue changed while claiming; reading it again")
            continue
        if new.status == "RUNNING":
            return new
        log(f"{request.label}: FAILED ({new.reason})")
        notify(repo_id, new, f"Failed: {new.label}: {new.reason}.", log)
    raise LeaderboardError(
        f"--requests {repo_id}: the queue kept changing; {CLAIM_TRIES} claims failed in a row"
    )


def run_job(request: Request, opts: WorkerOptions, out: Path) -> str | None:
    """Run the job for ``request`` into ``out``; None on success, else the one-line reason it failed."""
    request_file = out.parent / f"request-{out.name}.json"
    request_file.write_bytes(request.to_json())
    command = [sys.executable, "-m", "ratio_bench.leaderboard.job", str(request_file), request.path,
               str(opts.dataset), str(out), "--max-params", str(opts.max_params),
               "--batch-size", str(opts.batch_size)]  # fmt: skip
    if opts.cache_dir:
        command += ["--cache-dir", str(opts.cache_dir)]
    if opts.custody:
        command += ["--custody", str(opts.custody)]
    out.mkdir(parents=True)
    with _job_log(opts.log_file, request) as log:
        proc = subprocess.Popen(
            command, stdout=log, stderr=log, preexec_fn=_die_with_parent if sys.platform == "linux" else None
        )
        return _wait(proc, opts, out)


@contextmanager
def _job_log(path: Path | None, request: Request) -> Iterator[IO[bytes] | None]:
    """The job's output (progress, warnings, a failure's traceback) appended to ``path`` under a header naming
    the request, so the console keeps one line per request; None: the worker's own stderr."""
    if path is None:
        yield None
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "ab") as log:
        log.write(
            f"\n== {stamp(now_utc())} {request.label} {request.setup} attempt {request.attempts}\n".encode()
        )
        log.flush()
        yield log


def _wait(proc: subprocess.Popen, opts: WorkerOptions, out: Path) -> str | None:
    try:
        code = proc.wait(timeout=opts.job_timeout_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        return f"timed out after {opts.job_timeout_s:.0f} s (the worker's limit for one model)"
    except BaseException:  # Ctrl-C or the worker's own end: the job goes with it
        proc.kill()
        proc.wait()
        raise
    if code == 0 and (out / SUMMARY).is_file():
        return None
    if (out / FAILURE).is_file():
        return (out / FAILURE).read_text(encoding="utf-8").strip()[:400]
    return f"the scoring process died ({_exit_reason(code)})"


def failure_class(out: Path) -> str:
    """How the job in ``out`` failed: ``infrastructure`` (retried) or ``model`` (the default: the request fails)."""
    found = out / FAILURE_CLASS
    return INFRASTRUCTURE if found.is_file() and found.read_text().strip() == INFRASTRUCTURE else MODEL


def run_with_retries(request: Request, opts: WorkerOptions, tmp: Path, log: Callable[[str], None]):
    """(output folder, failure reason or None, whether it was the infrastructure's) of the job, retried with
    backoff while it fails for the infrastructure; the claim, and so the submitter's attempt, stays the same."""
    for attempt in range(1, opts.infra_retries + 1):
        out = tmp / f"out-{attempt}"
        reason = run_job(request, opts, out)
        infra = reason is not None and failure_class(out) == INFRASTRUCTURE
        if not infra or attempt == opts.infra_retries:
            return out, reason, infra
        wait = opts.retry_backoff_s * 2 ** (attempt - 1)
        log(
            f"{request.label}: infrastructure error ({reason}); retry {attempt}/{opts.infra_retries - 1} in {wait:g} s"
        )
        time.sleep(wait)
    raise AssertionError("unreachable")


def _die_with_parent() -> None:
    """In the job's process before it runs: the kernel kills it when its worker dies (Linux prctl)."""

    ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


def _exit_reason(code: int) -> str:
    if code < 0:
        return f"killed by {signal.Signals(-code).name}, e.g. out of memory"
    return f"exit status {code}"


class BadResult(LeaderboardError):
    """A job's output the worker will not publish (figures out of bounds or not of this release): the request
    fails with this reason."""


def result_files(request: Request, opts: WorkerOptions, out: Path) -> tuple[str, dict[str, bytes]]:
    """(folder, path -> bytes) to publish: the job's files, each entry checked against its bounds and the release
    (:class:`BadResult` otherwise), and the signed provenance record binding them to the request."""
    if opts.key is None:
        raise LeaderboardError(
            "the worker has no signing key (--key FILE or RATIO_WORKER_KEY); nothing published"
        )
    folder = f"{request.model}/{request.sha}/{request.setup}"
    files = {
        p.relative_to(out).as_posix(): p.read_bytes()
        for p in sorted(out.rglob("*"))
        if p.is_file() and p.name != SUMMARY
    }
    summary = json.loads((out / SUMMARY).read_bytes())
    entries = {
        name: sha256(files[name]) for name in (f"{s}.json" for s in summary["seconds"]) if name in files
    }
    for name in entries:
        try:
            check_against_release(files[name], release_queries(opts.dataset, name.removesuffix(".json")))
        except ValueError as e:  # a SubmissionError: the reason the entry is not a result
            raise BadResult(f"{name}: {e}; not published") from None
    provenance = {
        "schema": PROVENANCE_SCHEMA,
        "worker": opts.worker_id,
        "model": request.model,
        "revision": request.revision,
        "sha": request.sha,
        "setup": request.setup,
        "request": {"repo": opts.requests, "path": request.path, "attempt": request.attempts},
        "submitter": request.submitter,
        "dataset": opts.dataset_source,
        "scored_at": stamp(now_utc()),
        "signed_at": signed_at(),
        "seconds": summary["seconds"],
        "code_version": __version__,
        "entries": entries,
        "files": {name: sha256(data) for name, data in files.items() if name not in entries},
    }
    files[PROVENANCE] = (json.dumps(opts.key.sign(provenance), indent=2) + "\n").encode()
    return folder, {f"{folder}/{name}": data for name, data in files.items()}


def finish(opts: WorkerOptions, mine: Request, status: str, reason: str | None, result: str | None) -> bool:
    """Mark ``mine`` ended, if it is still ours (same worker, same attempt); False when another worker has it."""
    return _rewrite(
        opts, mine, lambda current, now: current.ended(status, now, reason=reason, result=result),
        f"{status.capitalize()} {mine.label}",
    )  # fmt: skip


def put_back(opts: WorkerOptions, mine: Request, reason: str) -> bool:
    """Return ``mine`` to the queue, PENDING, its attempt given back (an infrastructure error is nobody's
    submission's fault); False when another worker has it."""
    return _rewrite(opts, mine, lambda current, _: current.released(reason), f"Put back {mine.label}")


def _rewrite(opts: WorkerOptions, mine: Request, change, message: str) -> bool:
    """Write ``change(current, hub time)`` over ``mine`` if it is still ours, on top of the queue's head."""
    for _ in range(CLAIM_TRIES):
        queue = read_queue(opts.requests)
        current = queue.find(mine.path)
        if current is None or (current.worker, current.attempts, current.status) != (
            mine.worker,
            mine.attempts,
            "RUNNING",
        ):
            return False
        try:
            write_request(opts.requests, change(current, ledger.hub_time(opts.requests)), queue.sha, message)
            return True
        except hub.StaleHead:
            continue
    raise LeaderboardError(
        f"--requests {opts.requests}: the queue kept changing; could not mark {mine.label}"
    )


def still_mine(opts: WorkerOptions, mine: Request) -> bool:
    current = read_queue(opts.requests).find(mine.path)
    return current is not None and (current.worker, current.attempts, current.status) == (
        mine.worker,
        mine.attempts,
        "RUNNING",
    )


def process(request: Request, opts: WorkerOptions, log: Callable[[str], None]) -> str:
    """Score one claimed request and record how it ended; returns its final status (``RETRY``: put back after an
    infrastructure error). The submitter hears of the end on the request's pull request."""
    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="ratio-worker-") as tmp:
        out, reason, infra = run_with_retries(request, opts, Path(tmp), log)
        if reason is not None and infra:
            back = put_back(opts, request, f"infrastructure error, retried later: {reason}")
            log(f"{request.label}: put back in the queue, attempt not spent ({reason})" + _lost(back))
            if back:
                notify(opts.requests, request, delayed_text(request, reason), log)
            return "RETRY"
        try:
            if reason is not None:
                raise BadResult(reason)
            folder, files = result_files(request, opts, out)
        except BadResult as e:
            ended = finish(opts, request, "FAILED", str(e), None)
            where = f"; the job's output is in {opts.log_file}" if opts.log_file else ""
            log(f"{request.label}: FAILED ({e}){where}" + _lost(ended))
            if ended:
                notify(opts.requests, request, failed_text(request, str(e)), log)
            return "FAILED"
        if not still_mine(opts, request):  # our lease ran out and another worker has it: it publishes
            log(f"{request.label}: the lease ran out before publishing; the result is dropped")
            return "DROPPED"
        publish(request, opts, folder, files, log)
        log(f"{request.label}: FINISHED in {time.monotonic() - start:.1f} s -> {opts.results}: {folder}/")
        if opts.judging is not None:  # after FINISHED: judging never costs the request its scores
            provenance = json.loads(files[f"{folder}/{PROVENANCE}"])
            scored = Scored(request.label, folder, out, provenance, sign=opts.key.sign)
            log(judge_round(opts.results, opts.dataset, scored, opts.judging))
    return "FINISHED"


def _lost(recorded: bool) -> str:
    return "" if recorded else " [no longer ours: not recorded]"


def publish(
    request: Request, opts: WorkerOptions, folder: str, files: dict[str, bytes], log: Callable[[str], None]
) -> None:
    """Commit the folder (retried with backoff on an infrastructure error), mark the request FINISHED, propose the
    verified results to the model repo and tell the submitter on the request's pull request."""
    message = f"Scores of {request.label} by {opts.worker_id}"
    with_backoff(
        f"{request.label}: publishing",
        lambda: hub.commit(opts.results, "dataset", files, message),
        opts.infra_retries, opts.retry_backoff_s, log,
    )  # fmt: skip
    if not finish(opts, request, "FINISHED", None, folder):
        return
    test = json.loads(files.get(f"{folder}/test.json", b"{}") or b"{}")
    eval_pr = _propose(request, opts, _pr_url(request_pr, opts, request, log), log)
    url = f"{hub.api().endpoint}/datasets/{opts.results}/tree/main/{folder}"
    shown = figures(test) if test.get("results") else "see the folder"
    notify(
        opts.requests, request, finished_text(request, url, shown, eval_pr, test.get("reproduce", "")), log
    )


def _pr_url(find, opts: WorkerOptions, request: Request, log: Callable[[str], None]) -> str | None:
    try:
        found = find(opts.requests, request.path)
    except LeaderboardError as e:
        log(f"{request.label}: its pull request could not be found ({e})")
        return None
    return found[1] if found else None


def _propose(request: Request, opts: WorkerOptions, request_link: str | None, log) -> str | None:
    """The model repo's eval-results pull request for the verified results (None when none or refused: logged)."""
    benchmark, _, commit = opts.dataset_source.rpartition("@")
    if not benchmark or not SHA.match(commit):
        log(
            f"{request.label}: no eval-results pull request (the release scored is a local folder, not a Hub "
            "dataset at a commit: its results name no benchmark)"
        )
        return None
    try:
        opened = propose_eval_results(
            opts.results, request.model, request.sha, opts.dataset, benchmark, requests=opts.requests,
            request_link=request_link,
        )  # fmt: skip
    except (LeaderboardError, HubEvalError) as e:
        log(f"{request.label}: no eval-results pull request ({e})")
        return None
    if opened is None:
        log(f"{request.label}: no verified result on a benchmark task to propose to {request.model}")
        return None
    log(f"{request.label}: eval results proposed to {request.model}: {opened.url}")
    return opened.url


def preflight(opts: WorkerOptions, log: Callable[[str], None]) -> None:
    """Before the first claim: the two repositories are what they say they are (a results repository holds the
    trusted keys' listing, a queue its policy; never one repository for both), and a warning when this worker's
    key is not listed on the results repository's main (what it publishes would show as self-reported)."""
    if opts.requests == opts.results:
        raise LeaderboardError(
            f"--requests and --results both name {opts.results}: the queue and the results are two repositories"
        )
    main = hub.head(opts.results, "dataset")
    listed = hub.tree(opts.results, "dataset", main)
    if ledger.POLICY in listed:
        raise LeaderboardError(
            f"--results {opts.results}: it holds {ledger.POLICY}, so it is a queue, not a results repository"
        )
    small = TRUSTED_WORKERS in listed and listed[TRUSTED_WORKERS] <= hub.MAX_SMALL_FILE
    listing = read_listing(hub.read_small(opts.results, "dataset", main, TRUSTED_WORKERS) if small else None)
    if opts.key is not None and opts.key.key_id not in listing.trusted:
        why = f" ({listing.problem})" if listing.problem else ""
        log(
            f"warning: key {opts.key.key_id} is not listed in {opts.results}'s {TRUSTED_WORKERS}{why}: what this "
            "worker publishes shows as self-reported until a maintainer lists it (ratio leaderboard workers add)"
        )


def run(opts: WorkerOptions, poll_s: float | None, log: Callable[[str], None]) -> int:
    """Claim and score until the queue is empty (``poll_s`` None), or for ever, looking every ``poll_s`` seconds."""
    preflight(opts, log)
    done, put_back_now = 0, set()
    while True:
        if opts.admit:
            admit(opts.requests, opts.max_params, log, max_reviews=ADMIT_PER_CLAIM)
        request = claim(opts.requests, opts.worker_id, opts.lease_s, log, frozenset(put_back_now))
        if request is None:
            if poll_s is None:
                return done
            time.sleep(poll_s)
            put_back_now.clear()  # what was put back is tried again after a pause
            continue
        log(f"{request.label}: claimed by {opts.worker_id} (attempt {request.attempts}/{MAX_ATTEMPTS})")
        if process(request, opts, log) == "RETRY":
            put_back_now.add(request.path)  # a later pass (or another worker) takes it again
        done += 1
