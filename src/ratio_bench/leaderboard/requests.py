"""Evaluation requests: one JSON file per (model, commit, setup) in the requests dataset repository.

A request's path is ``<org>/<model>/<sha>_<setup>.json``, so the same model, weights and setup can be queued
only once, and its life is told by its ``status``: ``PENDING`` (submitted), ``RUNNING`` (claimed by a worker until
``lease_expires``), ``FINISHED`` (``result`` names the entry in the results repository) or ``FAILED``
(``reason``). Every change is one commit whose parent is the commit the writer read (``parent_commit``), so two
writers never both change the queue from the same state: the second is refused and re-reads.

Submitters do not write the queue: they open a pull request that the maintainers' admission merges
(:mod:`ratio_bench.leaderboard.admission`). Its files are still read as untrusted (a size cap, field by field:
:func:`parse_request`; a bad one is listed as rejected and never claimed), and what decides order and trust is the
Hub's ledger (:mod:`ratio_bench.leaderboard.ledger`): a request is ordered by the time of the commit that last
changed it (its admission, for a pending one), never by ``submitted_at``; a change by anyone the policy does not
list is ignored; leases are written and compared on the Hub's clock.
"""

from __future__ import annotations

import glob
import json
import re
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, replace
from datetime import UTC, date, datetime, timedelta

from ratio_bench.leaderboard import hub, ledger

SCHEMA = "ratio-leaderboard-request/1"
STATUSES = ("PENDING", "RUNNING", "FINISHED", "FAILED")
SETUPS = ("none", "generic", "recommended", "saved")
PRECISIONS = ("float32",)
MAX_ATTEMPTS = 3
MAX_REQUEST_BYTES = 64 * 1024
REPO_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,95}/[A-Za-z0-9][A-Za-z0-9._-]{0,95}$")
SHA = re.compile(r"^[0-9a-f]{40}$")
MAX_TEXT = 500


@dataclass(frozen=True)
class Request:
    model: str
    revision: str
    sha: str
    setup: str
    query_prompt: str
    document_prompt: str
    precision: str
    submitter: str
    submitted_at: str
    status: str = "PENDING"
    attempts: int = 0
    worker: str | None = None
    lease_expires: str | None = None
    started_at: str | None = None
    finished_at: str | None = None
    reason: str | None = None
    result: str | None = None
    parameters: int | None = None
    training_cutoff: str | None = None  # YYYY-MM-DD, as the submitter states it (--training-cutoff)

    @property
    def path(self) -> str:
        return request_path(self.model, self.sha, self.setup)

    @property
    def label(self) -> str:
        return f"{self.model}@{self.sha[:12]}:{self.setup}"

    def to_json(self) -> bytes:
        doc = {"schema": SCHEMA, **asdict(self)}
        doc["prompts"] = {"query": doc.pop("query_prompt"), "document": doc.pop("document_prompt")}
        return (json.dumps(doc, indent=2, ensure_ascii=False) + "\n").encode("utf-8")

    def lease_expired(self, now: datetime) -> bool:
        return self.status == "RUNNING" and (
            self.lease_expires is None or parse_time(self.lease_expires) <= now
        )

    def claimed(self, worker: str, now: datetime, lease_s: float) -> Request:
        return replace(
            self,
            status="RUNNING",
            attempts=self.attempts + 1,
            worker=worker,
            started_at=stamp(now),
            lease_expires=stamp(now + timedelta(seconds=lease_s)),
            reason=None,
        )

    def released(self, reason: str) -> Request:
        """Back to PENDING after an infrastructure error, the attempt it was claimed with given back."""
        return replace(self, status="PENDING", attempts=max(0, self.attempts - 1), worker=None,
                       lease_expires=None, started_at=None, finished_at=None, reason=reason[:MAX_TEXT])  # fmt: skip

    def ended(
        self, status: str, now: datetime, reason: str | None = None, result: str | None = None
    ) -> Request:
        return replace(
            self, status=status, finished_at=stamp(now), lease_expires=None, reason=reason, result=result
        )


def request_path(model: str, sha: str, setup: str) -> str:
    return f"{model}/{sha}_{setup}.json"


def now_utc() -> datetime:
    return datetime.now(UTC)


def stamp(t: datetime) -> str:
    return t.astimezone(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def parse_time(text: str) -> datetime:
    t = datetime.fromisoformat(text.replace("Z", "+00:00"))
    return t if t.tzinfo else t.replace(tzinfo=UTC)


class RequestError(hub.LeaderboardError, ValueError):
    """A request file that is not a valid request (the message is the reason it is skipped)."""


def _text(doc: dict, key: str, limit: int = MAX_TEXT, optional: bool = False) -> str | None:
    value = doc.get(key)
    if value is None and optional:
        return None
    if not isinstance(value, str) or len(value) > limit:
        raise RequestError(f"field {key}: expected text of at most {limit} characters")
    return value


def parse_request(data: bytes, path: str) -> Request:
    """A request file's bytes, checked: strict JSON, known fields, the path it must be at."""
    if len(data) > MAX_REQUEST_BYTES:
        raise RequestError(f"over {MAX_REQUEST_BYTES:,} bytes")
    try:
        doc = hub.strict_json(data)
    except ValueError as e:
        raise RequestError(str(e)) from None
    if not isinstance(doc, dict) or doc.get("schema") != SCHEMA:
        raise RequestError(f"not a request (field schema must be {SCHEMA!r})")
    prompts = doc.get("prompts")
    if not isinstance(prompts, dict):
        raise RequestError("field prompts: expected {query, document}")
    known = {"schema", "prompts", *Request.__dataclass_fields__} - {"query_prompt", "document_prompt"}
    unknown = sorted(set(doc) - known)
    if unknown:
        raise RequestError(f"unknown field {unknown[0][:40]!r}")
    model = _text(doc, "model", 200)
    if not REPO_ID.match(model):
        raise RequestError("field model: expected a Hub repository id OWNER/NAME")
    sha = _text(doc, "sha", 40)
    if not SHA.match(sha):
        raise RequestError("field sha: expected a 40-character commit hash")
    choices = {"setup": SETUPS, "precision": PRECISIONS, "status": STATUSES}
    for key, allowed in choices.items():
        if doc.get(key) not in allowed:
            raise RequestError(f"field {key}: expected one of {', '.join(allowed)}")
    attempts, parameters = doc.get("attempts", 0), doc.get("parameters")
    if type(attempts) is not int or not 0 <= attempts <= MAX_ATTEMPTS:
        raise RequestError(f"field attempts: expected 0 to {MAX_ATTEMPTS}")
    if parameters is not None and (type(parameters) is not int or parameters < 0):
        raise RequestError("field parameters: expected a count")
    times = {k: _text(doc, k, 40, optional=k != "submitted_at") for k in ("submitted_at", "lease_expires",
                                                                         "started_at", "finished_at")}  # fmt: skip
    for key, value in times.items():
        try:
            if value is not None:
                parse_time(value)
        except ValueError:
            raise RequestError(f"field {key}: expected an ISO 8601 time") from None
    cutoff = _text(doc, "training_cutoff", 10, optional=True)
    try:
        if cutoff is not None:
            date.fromisoformat(cutoff)
    except ValueError:
        raise RequestError("field training_cutoff: expected a date YYYY-MM-DD") from None
    request = Request(
        model=model,
        revision=_text(doc, "revision", 200),
        sha=sha,
        setup=doc["setup"],
        query_prompt=_text(prompts, "query", 2000),
        document_prompt=_text(prompts, "document", 2000),
        precision=doc["precision"],
        submitter=_text(doc, "submitter", 100),
        status=doc["status"],
        attempts=attempts,
        worker=_text(doc, "worker", 200, optional=True),
        reason=_text(doc, "reason", optional=True),
        result=_text(doc, "result", optional=True),
        parameters=parameters,
        training_cutoff=cutoff,
        **times,
    )
    if request.path != path:
        raise RequestError(f"its fields say it belongs at {request.path}, not here")
    return request


@dataclass(frozen=True)
class Queue:
    """The requests repository at one commit: valid requests, the files that are not (with reasons), and the
    Hub's record of each request's last trusted change (``changes``: path -> who and when)."""

    repo_id: str
    sha: str
    requests: tuple[Request, ...]
    rejected: tuple[tuple[str, str], ...]
    changes: Mapping[str, ledger.Change] = field(default_factory=dict)
    policy: ledger.Policy = ledger.Policy()
    problem: str | None = None  # the policy on main cannot be read: nothing in the queue is trusted

    def require_policy(self, what: str) -> None:
        """Refuse to act on a queue whose policy cannot be read (fail closed: admission, claims)."""
        if self.problem:
            raise hub.LeaderboardError(f"{what}: {self.problem}; nothing done")

    def find(self, path: str) -> Request | None:
        return next((r for r in self.requests if r.path == path), None)

    def since(self, request: Request) -> datetime:
        """When the Hub recorded ``request``'s current state (a pending one: its admission)."""
        change = self.changes.get(request.path)
        return change.date if change else datetime.max.replace(tzinfo=UTC)

    def claimable(self, now: datetime) -> list[Request]:
        """Pending requests and running ones whose lease has expired (``now``: the Hub's time), in the order the
        Hub recorded them; a time a submitter wrote (``submitted_at``) orders nothing."""
        ready = [r for r in self.requests if r.status == "PENDING" or r.lease_expired(now)]
        return sorted(ready, key=lambda r: (self.since(r), r.path))


def is_request_path(path: str) -> bool:
    """Requests sit at ``OWNER/MODEL/SHA_SETUP.json``; the policy files at the top are no requests."""
    return path.endswith(".json") and "/" in path


def read_queue(repo_id: str, sha: str | None = None) -> Queue:
    """Every request file of the repository at ``sha`` (default: the head of main), each at its newest version
    written by a maintainer or worker (:func:`ledger.trusted_version`). Who those are is always read at main's
    head, the maintainers' own state, never at the revision being read; a policy that cannot be read makes
    every request untrusted (``problem``), it never stops the reader."""
    main = hub.head(repo_id, "dataset")
    sha = sha or main
    listed = hub.tree(repo_id, "dataset", sha)
    ledger.check_is_queue(repo_id, listed if sha == main else hub.tree(repo_id, "dataset", main))
    try:
        policy, problem = ledger.read_policy(repo_id, main, listed if sha == main else None), None
    except hub.LeaderboardError as e:
        policy, problem = (
            ledger.Policy(maintainers=("\0nobody",)),
            f"{e} (every request is untrusted until then)",
        )
    paths = sorted(p for p in listed if is_request_path(p))
    chain = ledger.history(repo_id, sha) if paths else []
    changes = ledger.last_changes(repo_id, sha, paths, dict(chain)) if paths else {}
    versions, rejected, trusted = {}, [], {}
    for path in paths:
        try:
            if listed[path] > MAX_REQUEST_BYTES:
                raise RequestError(f"over {MAX_REQUEST_BYTES:,} bytes")
            if problem:
                raise RequestError(problem)
            found = changes.get(path) and ledger.trusted_version(repo_id, path, changes[path], policy, chain)
            if not found:
                who = ", ".join(changes[path].authors) if path in changes else "nobody known"
                raise RequestError(f"written by {who or 'nobody known'}, not a maintainer or worker: ignored")
            versions[path], trusted[path] = found
        except RequestError as e:
            rejected.append((path, str(e)[:MAX_TEXT]))
    requests = []
    for path, data in _request_bytes(repo_id, sha, listed, versions, changes).items():
        try:
            requests.append(parse_request(data, path))
        except RequestError as e:
            rejected.append((path, str(e)))
    rejected.sort()
    return Queue(repo_id, sha, tuple(requests), tuple(rejected), trusted, policy, problem)


def _request_bytes(
    repo_id: str,
    sha: str,
    listed: dict[str, int],
    versions: dict[str, str],
    changes: dict[str, ledger.Change],
) -> dict[str, bytes]:
    """Each request's bytes at its trusted version, in path order. A request whose trusted version is its last
    change on main holds the same bytes at ``sha``: those come in one parallel ``snapshot_download`` (a queue of
    600 requests was 600 downloads); the few whose last change is untrusted are read at their version one by one."""

    at_head = {p for p, version in versions.items() if version == changes[p].commit}
    folder = None
    if len(at_head) > 1:  # every request-shaped file but the oversized (two patterns, not one per file)
        big = [glob.escape(p) for p, size in listed.items() if size > MAX_REQUEST_BYTES]
        folder = hub.download_files(repo_id, "dataset", sha, listed, ["*/*.json"], big)
    out = {}
    for path, version in versions.items():
        data = hub.read_local(folder, path, MAX_REQUEST_BYTES) if folder and path in at_head else None
        out[path] = data if data is not None else hub.read_small(repo_id, "dataset", version, path)
    return out


def write_request(repo_id: str, request: Request, parent: str, message: str) -> str:
    """Commit ``request`` at its path, only on top of ``parent`` (:class:`hub.StaleHead` otherwise)."""
    return hub.commit(repo_id, "dataset", {request.path: request.to_json()}, message, parent=parent)
