"""The leaderboard's Hub access: one client with bounded waits, errors as one line, small files read with a cap.

Endpoint and token come from ``huggingface_hub``'s own resolution (``HF_ENDPOINT``, ``HF_TOKEN``, the saved
login), so the same commands run against huggingface.co, a private Hub or ``python -m ratio_bench.devhub``.
``huggingface_hub``'s HTTP client waits forever by default; every request here is bounded by
:data:`HUB_TIMEOUT_S`. Messages name the endpoint and the repository, never the token.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from fnmatch import fnmatch
from functools import cache
from pathlib import Path

from ratio_bench.core import extras
from ratio_bench.core.errors import RatioError
from ratio_bench.core.io import no_duplicate_keys

hf_errors = extras.lazy("huggingface_hub.errors")
hf_http = extras.lazy("huggingface_hub.utils._http")
hf_utils = extras.lazy("huggingface_hub.utils")
huggingface_hub = extras.lazy("huggingface_hub")

HUB_TIMEOUT_S = 60.0
# The token of the user a served form acts for (:func:`as_user`); None: huggingface_hub's own resolution.
_USER_TOKEN: ContextVar[str | None] = ContextVar("ratio_hub_user_token", default=None)
MAX_SMALL_FILE = 1 << 20  # a request, an entry, a provenance record: a few KB each


class LeaderboardError(RatioError):
    """A submission that is refused, a queue or results repository that cannot be read or written."""


class StaleHead(LeaderboardError):
    """A commit whose parent is no longer the branch head: someone else committed first (re-read, try again)."""


@cache
def _bound_client_waits() -> None:
    def bounded():
        client = hf_http.default_client_factory()
        client.timeout = HUB_TIMEOUT_S  # connect, read, write and pool waits
        return client

    huggingface_hub.set_client_factory(bounded)


def api() -> huggingface_hub.HfApi:
    """A client of the endpoint ``HF_ENDPOINT`` names now (huggingface_hub reads it once, at import), every
    request bounded in time, with the signed-in user's token inside :func:`as_user`."""

    _bound_client_waits()
    return huggingface_hub.HfApi(endpoint=os.environ.get("HF_ENDPOINT") or None, token=_USER_TOKEN.get())


@contextmanager
def as_user(token: str) -> Iterator[None]:
    """Every Hub call inside the block (in this thread or task) made with ``token``: a served form submits as
    the user who pasted it, never with the server's own token (a context variable, so concurrent requests in
    a server's thread pool never see each other's)."""
    reset = _USER_TOKEN.set(token)
    try:
        yield
    finally:
        _USER_TOKEN.reset(reset)


@dataclass(frozen=True)
class RepoRef:
    """``OWNER/NAME[@REVISION]`` of a repository given on the command line."""

    repo_id: str
    revision: str | None
    flag: str

    @classmethod
    def parse(cls, text: str, flag: str) -> RepoRef:
        repo_id, _, revision = text.partition("@")
        try:
            hf_utils.validate_repo_id(repo_id)
        except hf_errors.HFValidationError:
            repo_id = ""
        if repo_id.count("/") != 1:
            raise LeaderboardError(f"{flag} {text!r}: give a Hub repository as OWNER/NAME[@REVISION]")
        return cls(repo_id, revision or None, flag)

    def __str__(self) -> str:
        return self.repo_id + (f"@{self.revision}" if self.revision else "")


@contextmanager
def hub_errors(what: str) -> Iterator[None]:
    """Hub and network failures inside the block as one-line LeaderboardErrors about ``what``."""

    endpoint = api().endpoint
    try:
        yield
    except hf_errors.RepositoryNotFoundError:
        raise LeaderboardError(f"{what}: no such repository on {endpoint} (or it is private)") from None
    except hf_errors.RevisionNotFoundError:
        raise LeaderboardError(f"{what}: no such revision on {endpoint}") from None
    except hf_errors.RemoteEntryNotFoundError:
        raise LeaderboardError(f"{what}: no such file on {endpoint}") from None
    except hf_errors.HfHubHTTPError as e:
        if e.response is not None and e.response.status_code in (409, 412):
            raise StaleHead(f"{what}: the repository changed while we wrote; re-read and try again") from None
        raise LeaderboardError(f"{what}: {endpoint} answered {_first_line(e)}") from None
    except hf_errors.HFValidationError as e:
        raise LeaderboardError(f"{what}: {_first_line(e)}") from None
    except (hf_errors.HTTPError, OSError) as e:
        raise LeaderboardError(
            f"{what}: cannot reach {endpoint} ({type(e).__name__}: {_first_line(e)}); check HF_ENDPOINT"
        ) from None


def strict_json(data: bytes) -> object:
    """Untrusted bytes as JSON: UTF-8, no NaN or Infinity, no object naming a key twice (ValueError otherwise,
    with the reason; RecursionError for absurd nesting is a ValueError too)."""

    def constant(name: str) -> object:
        raise ValueError(f"{name} is not JSON")

    try:
        return json.loads(data.decode("utf-8"), object_pairs_hook=no_duplicate_keys, parse_constant=constant)
    except UnicodeDecodeError:
        raise ValueError("not UTF-8") from None
    except RecursionError:
        raise ValueError("nested too deeply") from None
    except json.JSONDecodeError as e:
        raise ValueError(f"not JSON ({e.msg} at line {e.lineno})") from None


def _first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0][:300]


def head(repo_id: str, repo_type: str, revision: str | None = None) -> str:
    """The commit ``revision`` (default: main) of a repository points at."""
    with hub_errors(f"{repo_type} {repo_id}" + (f"@{revision}" if revision else "")):
        return api().repo_info(repo_id, repo_type=repo_type, revision=revision).sha


def tree(repo_id: str, repo_type: str, sha: str) -> dict[str, int]:
    """Every file of the repository at ``sha`` with its size."""

    with hub_errors(f"{repo_type} {repo_id}"):
        items = api().list_repo_tree(repo_id, repo_type=repo_type, revision=sha, recursive=True)
        return {f.path: f.size for f in items if isinstance(f, huggingface_hub.RepoFile)}


def read_small(repo_id: str, repo_type: str, sha: str, path: str) -> bytes:
    """A small file's bytes (the caller checked its listed size against its own cap)."""

    with hub_errors(f"{repo_type} {repo_id}: {path}"):
        local = api().hf_hub_download(repo_id, path, repo_type=repo_type, revision=sha)
    with open(Path(local), "rb") as fh:
        data = fh.read(MAX_SMALL_FILE + 1)
    if len(data) > MAX_SMALL_FILE:
        raise LeaderboardError(f"{repo_type} {repo_id}: {path} is over {MAX_SMALL_FILE:,} bytes")
    return data


MAX_BULK_BYTES = 1 << 30  # what one read of a results repository may download (1,200 entries are ~100 MB)
BULK_WORKERS = 16


def download_files(
    repo_id: str, repo_type: str, sha: str, listed: dict[str, int], wanted: list[str], skipped: list[str]
) -> Path:
    """The ``wanted`` files of the repository at ``sha`` in one ``snapshot_download`` (fetched in parallel into the
    Hub cache), checked first against the listing: together at most :data:`MAX_BULK_BYTES`. ``wanted`` and
    ``skipped`` are glob patterns (``*.json``, a folder's ``*/runs/*``); a listed file the caller will not read
    (too big) goes in ``skipped`` by its escaped name. Returns the local snapshot folder."""

    total = sum(
        size
        for path, size in listed.items()
        if any(fnmatch(path, w) for w in wanted) and not any(fnmatch(path, s) for s in skipped)
    )
    if total > MAX_BULK_BYTES:
        raise LeaderboardError(
            f"{repo_type} {repo_id}@{sha[:12]}: {total:,} bytes to read, over the {MAX_BULK_BYTES:,}-byte limit"
        )
    with hub_errors(f"{repo_type} {repo_id}"):
        folder = api().snapshot_download(
            repo_id, repo_type=repo_type, revision=sha, allow_patterns=wanted, ignore_patterns=skipped,
            max_workers=BULK_WORKERS, tqdm_class=_quiet(),
        )  # fmt: skip
    return Path(folder)


def _quiet():
    """A progress-bar class that draws nothing (a board read is no download the user asked to watch)."""

    class Quiet(hf_utils.tqdm):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **{**kwargs, "disable": True})

    return Quiet


def read_local(folder: Path, path: str, cap: int = MAX_SMALL_FILE) -> bytes | None:
    """A file of a downloaded snapshot (None when it is not there or over ``cap``); a path that climbs out of the
    folder is never read."""
    if ".." in path.split("/") or path.startswith("/"):
        return None
    try:
        with open(folder / path, "rb") as fh:
            data = fh.read(cap + 1)
    except OSError:
        return None
    return data if len(data) <= cap else None


def commit(
    repo_id: str, repo_type: str, files: dict[str, bytes], message: str, parent: str | None = None
) -> str:
    """Write ``files`` in one commit; with ``parent``, only if the branch head is still ``parent`` (StaleHead)."""

    ops = [huggingface_hub.CommitOperationAdd(path, data) for path, data in files.items()]
    with hub_errors(f"{repo_type} {repo_id}"):
        info = api().create_commit(
            repo_id, ops, commit_message=message, repo_type=repo_type, parent_commit=parent
        )
    return info.oid
