"""The queue's ledger: what the Hub itself records about the requests repository, never what a file says.

Submitters cannot write the queue (main of the requests repository): they open pull requests, and the maintainers'
admission (:mod:`ratio_bench.leaderboard.admission`) merges the valid ones. So the Hub's own records are the
ledger: the commit that last changed a request (``get_paths_info(expand=True)``'s ``lastCommit``) gives its
order (the admission's merge time, on the Hub's clock) and its author (``list_repo_commits``); a change by anyone
the policy does not list as a maintainer or worker is ignored (the request's last trusted version counts). The
time a lease is measured on is the Hub's (its responses' ``Date``), so a worker's own clock never decides.

The policy lives in the repository too, written by maintainers only: ``policy.json`` (who the maintainers and
workers are, the per-submitter limits) and ``opt_out.json`` (model authors who asked not to be scored).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime

from ratio_bench.core import extras
from ratio_bench.leaderboard import hub
from ratio_bench.leaderboard.hub import LeaderboardError
from ratio_bench.leaderboard.repo_files import TRUSTED_WORKERS

hf_utils = extras.lazy("huggingface_hub.utils")
huggingface_hub = extras.lazy("huggingface_hub")

POLICY, OPT_OUT = "policy.json", "opt_out.json"
POLICY_SCHEMA = "ratio-queue-policy/1"
MAX_PENDING = 3  # requests of one submitter PENDING or RUNNING at once
MAX_PER_DAY = 5  # requests of one submitter admitted in 24 hours (Hub time)
MAX_OPEN = 5  # open pull requests of one author reviewed in one admission round; the rest are closed unread
MAX_NAMES = 1000
PATHS_PER_CALL = 100
TRUST_STEPS = 5  # how far back a request's last trusted version is looked for


@dataclass(frozen=True)
class Policy:
    """Who may change the queue and how much one submitter may queue; empty lists: everyone who can write main."""

    maintainers: tuple[str, ...] = ()
    workers: tuple[str, ...] = ()
    max_pending: int = MAX_PENDING
    max_per_day: int = MAX_PER_DAY
    max_open: int = MAX_OPEN
    opt_out: tuple[str, ...] = ()

    def trusted(self, author: str | None) -> bool:
        if not self.maintainers and not self.workers:
            return True
        return author is not None and (author in self.maintainers or author in self.workers)

    def trusts(self, change: Change) -> bool:
        """A commit counts when every author is a maintainer or worker (anyone's, when the policy lists nobody)."""
        if not self.maintainers and not self.workers:
            return True
        return bool(change.authors) and all(self.trusted(a) for a in change.authors)


@dataclass(frozen=True)
class Change:
    """The commit that last changed a file on main: its id, its authors, its date on the Hub's clock."""

    commit: str
    authors: tuple[str, ...]
    date: datetime


def _names(doc: dict, key: str, where: str) -> tuple[str, ...]:
    value = doc.get(key, [])
    if not isinstance(value, list) or len(value) > MAX_NAMES or not all(isinstance(v, str) for v in value):
        raise LeaderboardError(f"{where}: field {key}: expected a list of user names")
    return tuple(value)


def _count(doc: dict, key: str, default: int, where: str) -> int:
    value = doc.get(key, default)
    if type(value) is not int or value < 0:
        raise LeaderboardError(f"{where}: field {key}: expected a count")
    return value


def check_is_queue(repo_id: str, listed: dict[str, int]) -> None:
    """Refuse a repository that says it is a results repository (it holds the trusted keys' listing): admission,
    submission and workers never act on the wrong one."""
    if TRUSTED_WORKERS in listed:
        raise LeaderboardError(
            f"--requests {repo_id}: it holds {TRUSTED_WORKERS}, so it is a results repository, not a queue; "
            "give the requests repository"
        )


def read_policy(repo_id: str, sha: str, listed: dict[str, int] | None = None) -> Policy:
    """The policy of the requests repository at ``sha`` (main's head: the maintainers'), defaults where a file is
    absent (``listed``: its files, None to list them). A file that is there but cannot be read is an error,
    never the defaults: who may write the queue is not guessed."""
    listed = hub.tree(repo_id, "dataset", sha) if listed is None else listed
    docs = {}
    for name in (POLICY, OPT_OUT):
        if name in listed:
            where = f"--requests {repo_id}: {name}"
            if listed[name] > hub.MAX_SMALL_FILE:
                raise LeaderboardError(
                    f"{where}: over {hub.MAX_SMALL_FILE:,} bytes; the maintainers must fix it"
                )
            try:
                docs[name] = hub.strict_json(hub.read_small(repo_id, "dataset", sha, name))
            except ValueError as e:
                raise LeaderboardError(f"{where}: {e}; the maintainers must fix it") from None
            if not isinstance(docs[name], dict):
                raise LeaderboardError(f"{where}: expected an object; the maintainers must fix it")
    policy, opt = docs.get(POLICY, {}), docs.get(OPT_OUT, {})
    where = f"--requests {repo_id}: {POLICY}"
    if POLICY in docs and policy.get("schema") != POLICY_SCHEMA:
        raise LeaderboardError(
            f"{where}: field schema must be {POLICY_SCHEMA!r} (the file that says this is a queue); the "
            "maintainers must fix it"
        )
    return Policy(
        maintainers=_names(policy, "maintainers", where),
        workers=_names(policy, "workers", where),
        max_pending=_count(policy, "max_pending", MAX_PENDING, where),
        max_per_day=_count(policy, "max_per_day", MAX_PER_DAY, where),
        max_open=_count(policy, "max_open", MAX_OPEN, where),
        opt_out=_names(opt, "authors", f"--requests {repo_id}: {OPT_OUT}"),
    )


def hub_time(repo_id: str, repo_type: str = "dataset") -> datetime:
    """The Hub's time now (its response's ``Date``): leases are measured on it, never on this machine's clock."""

    api = hub.api()
    with hub.hub_errors(f"{repo_type} {repo_id}"):
        resp = hf_utils.get_session().head(
            f"{api.endpoint}/api/{repo_type}s/{repo_id}", headers=hf_utils.build_hf_headers()
        )
        hf_utils.hf_raise_for_status(resp)
    try:
        return parsedate_to_datetime(resp.headers["Date"]).astimezone(UTC)
    except (KeyError, TypeError, ValueError):
        raise LeaderboardError(
            f"{repo_type} {repo_id}: {api.endpoint} sent no Date header to time leases"
        ) from None


def history(repo_id: str, revision: str = "main", repo_type: str = "dataset") -> list[tuple[str, Change]]:
    """``revision``'s commits, newest first: (id, who and when)."""
    with hub.hub_errors(f"{repo_type} {repo_id}"):
        commits = hub.api().list_repo_commits(repo_id, repo_type=repo_type, revision=revision)
    return [(c.commit_id, Change(c.commit_id, tuple(c.authors), c.created_at)) for c in commits]


def last_changes(repo_id: str, sha: str, paths: list[str], commits: dict[str, Change]) -> dict[str, Change]:
    """The commit that last changed each of ``paths`` at ``sha`` (``commits``: main's, by id)."""

    out: dict[str, Change] = {}
    for i in range(0, len(paths), PATHS_PER_CALL):
        with hub.hub_errors(f"dataset {repo_id}"):
            infos = hub.api().get_paths_info(
                repo_id, paths[i : i + PATHS_PER_CALL], repo_type="dataset", revision=sha, expand=True
            )
        for f in infos:
            if isinstance(f, huggingface_hub.RepoFile) and f.last_commit is not None:
                known = commits.get(f.last_commit.oid)
                out[f.path] = Change(f.last_commit.oid, known.authors if known else (), f.last_commit.date)
    return out


def trusted_version(
    repo_id: str, path: str, change: Change, policy: Policy, chain: list[tuple[str, Change]]
) -> tuple[str, Change] | None:
    """(commit, change) of ``path``'s newest version written by a maintainer or worker; None when there is none
    within :data:`TRUST_STEPS` untrusted changes (then the file is ignored)."""
    index = {sha: i for i, (sha, _) in enumerate(chain)}
    for _ in range(TRUST_STEPS):
        if policy.trusts(change):
            return change.commit, change
        i = index.get(change.commit)
        if i is None or i + 1 >= len(chain):
            return None
        parent = chain[i + 1][0]
        earlier = last_changes(repo_id, parent, [path], dict(chain)).get(path)
        if earlier is None:
            return None  # the file did not exist before the untrusted change
        change = earlier
    return None


def pull_requests(repo_id: str) -> list:
    """Every pull request of the requests repository (any status), oldest first."""
    with hub.hub_errors(f"--requests {repo_id}"):
        found = hub.api().get_repo_discussions(repo_id, repo_type="dataset", discussion_type="pull_request")
        return sorted(found, key=lambda d: d.num)


def open_request_of(repo_id: str, user: str, path: str) -> int | None:
    """The number of ``user``'s open pull request that adds ``path``, if any."""
    for pr in pull_requests(repo_id):
        if pr.status == "open" and pr.author == user:
            with hub.hub_errors(f"--requests {repo_id}"):
                details = hub.api().get_discussion_details(repo_id, pr.num, repo_type="dataset")
            if path in (details.diff or ""):
                return pr.num
    return None


def files_at(repo_id: str, revision: str) -> dict[str, str]:
    """path -> blob id of every file at ``revision`` (a branch, ``refs/pr/N`` or a commit)."""

    with hub.hub_errors(f"dataset {repo_id}@{revision}"):
        items = hub.api().list_repo_tree(repo_id, repo_type="dataset", revision=revision, recursive=True)
        return {f.path: f.blob_id for f in items if isinstance(f, huggingface_hub.RepoFile)}


def pull_request_changes(
    repo_id: str, num: int, main: list[tuple[str, Change]]
) -> tuple[str, dict[str, str | None]]:
    """(its head commit, path -> blob id at its head or None when deleted) of pull request ``num`` against the
    main commit it starts from."""
    ref = f"refs/pr/{num}"
    on_main = {sha for sha, _ in main}
    commits = history(repo_id, ref)
    base = next((sha for sha, _ in commits if sha in on_main), None)
    if base is None:
        raise LeaderboardError(f"pull request #{num}: it does not start from a commit of main")
    head, before = files_at(repo_id, commits[0][0]), files_at(repo_id, base)
    changed = {p: head.get(p) for p in sorted(set(head) | set(before)) if head.get(p) != before.get(p)}
    return commits[0][0], changed
