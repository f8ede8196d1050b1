"""A Hub-compatible server on loopback: enough of the Hugging Face Hub API for ``huggingface_hub`` to work offline.

It speaks what ``huggingface_hub``, ``datasets`` and sentence-transformers use: create a model or dataset repo,
pre-upload, commit (regular base64 files, deletions, ``parentCommit`` checked: a commit whose parent is not the
branch head is refused with 412, as on the Hub), tag, repo info (``model_info`` with ``files_metadata`` and the
``safetensors`` parameter summary), tree listings, paths-info, ``whoami-v2`` and file downloads with ranges
(``get_safetensors_metadata`` reads the headers only). Every commit snapshots the repo's files; tags and
``main`` point at commits. Repos are keyed ``datasets/ORG/NAME`` or ``models/ORG/NAME``.

It also keeps what the Hub keeps about people and time: each commit's author (the user of the token that made
it) and date (the server's clock, :attr:`HubState.clock`, also sent as every response's ``Date``), listed by
``list_repo_commits`` and ``get_paths_info(expand=True)``'s ``lastCommit``; and pull requests and discussions
(``create_commit(create_pr=True)`` opens ``refs/pr/N``; ``get_repo_discussions``, ``get_discussion_details``,
``comment_discussion``, ``change_discussion_status``, ``merge_pull_request``, ``create_discussion``), on any repo type.

Users are tokens (:meth:`HubState.add_user`; :meth:`HubServer.env` adds its token as ``dev-user``); a request
carrying any other token is refused with 401, as the Hub refuses an invalid token. A repo with writers (its creator
through the API, or ``create_repo(..., writers=...)``, or its namespace's user) takes commits to its branches, tags,
merges and status changes from them only (403 otherwise, 401 without a token); anyone with a token may open a
pull request, comment, and push to a pull request of their own. A repo without writers is open to every token
(the development default). It listens on 127.0.0.1 only. State is in memory, or under ``root`` (blobs by SHA-1 and one ``state.json`` written atomically
after each write) so that a restarted server keeps its repos.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import struct
import threading
import time
from collections import Counter
from collections.abc import Callable
from datetime import UTC, datetime
from email.utils import format_datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, unquote, urlparse

import yaml

MAX_BODY_BYTES = 2 << 30  # a commit carries its files base64-encoded in the body
LOOPBACK = "127.0.0.1"
# How often the serving loop looks for a stop: shutdown() waits up to this long (the library default, 0.5 s, was
# half a second at the end of every test and demo that starts a dev Hub).
POLL_S = 0.05
STALE_HEAD = b'{"error":"A commit has happened since. Please refresh and try again."}'
PAGE = 50  # discussions per page, as on the Hub


INVALID_TOKEN = b'{"error":"Invalid credentials in Authorization header"}'


def _iso(t: datetime) -> str:
    return t.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _blob_id(data: bytes) -> str:
    return hashlib.sha1(data).hexdigest()


class HubState:
    """Commits (sha -> path -> blob id), blobs, refs per repo; persisted under ``root`` when given."""

    def __init__(self, root: Path | None = None) -> None:
        self.blobs: dict[str, bytes] = {}
        self.commits: dict[str, dict[str, str]] = {}
        self.refs: dict[str, dict[str, str]] = {}  # repo -> {ref: sha}
        self.users: dict[str, str] = {}  # token -> user name (whoami)
        self.tokens_seen: set[str] = set()
        self.holds: dict[str, threading.Event] = {}  # path in repo -> released (tests: a download in flight)
        self.waiting: Counter[str] = Counter()  # path -> downloads held so far
        self.faults: Counter[str] = Counter()  # "org/name/path" -> downloads still to answer 503 (outages)
        self.conflicts = 0  # commits refused because their parent was not the head
        self.meta: dict[str, dict] = {}  # sha -> {parent, author, date, title}
        self.writers: dict[str, list[str]] = {}  # repo -> users who may write its branches (none: open)
        self.private: set[str] = set()  # repos only their writers may read (others get 404, as on the Hub)
        self.discussions: dict[str, list[dict]] = {}  # repo -> discussions and pull requests, num = index + 1
        self.clock: Callable[[], datetime] = lambda: datetime.now(UTC)  # the server's time (tests move it)
        self.lock = threading.RLock()
        self.root = root
        if root is not None:
            self._load()

    # -- reading ----------------------------------------------------------------------------------------------
    def resolve(self, repo: str, rev: str) -> str | None:
        refs = self.refs.get(repo)
        if refs is None:
            return None
        return refs.get(rev) or (rev if rev in self.commits else None)

    def files(self, sha: str | None) -> dict[str, str]:
        return self.commits.get(sha, {}) if sha else {}

    def read(self, repo: str, rev: str, path: str) -> bytes | None:
        blob = self.files(self.resolve(repo, rev)).get(path)
        return None if blob is None else self.blobs[blob]

    # -- writing ----------------------------------------------------------------------------------------------
    def add_user(self, token: str, name: str) -> None:
        self.users[token] = name

    def user(self, token: str | None) -> str | None:
        return None if token is None else self.users.get(token)

    def known(self, token: str | None) -> bool:
        """No token (an anonymous read) or a user's; any other token is refused (401), as on the Hub."""
        return token is None or token in self.users

    def can_write(self, repo: str, user: str | None) -> bool:
        """May ``user`` write ``repo``'s branches? Its writers and its namespace's user; everyone when none."""
        writers = self.writers.get(repo)
        if not writers:
            return True
        return user is not None and (user in writers or repo.split("/")[1] == user)

    def can_read(self, repo: str, user: str | None) -> bool:
        """May ``user`` read ``repo``? Anyone a public one; a private one only its writers (a custody repo)."""
        return repo not in self.private or (
            user is not None and bool(self.writers.get(repo)) and self.can_write(repo, user)
        )

    def create_repo(
        self, repo: str, writers: list[str] | tuple[str, ...] = (), private: bool = False
    ) -> None:
        with self.lock:
            if private and repo not in self.refs:
                self.private.add(repo)
            if repo not in self.refs:
                sha = hashlib.sha1(f"init:{repo}".encode()).hexdigest()
                self.commits[sha] = {}
                self.meta[sha] = {
                    "parent": None,
                    "author": None,
                    "date": _iso(self.clock()),
                    "title": "initial commit",
                }
                self.refs[repo] = {"main": sha}
                self.writers[repo] = list(writers)
                self._save()

    def history(self, repo: str, rev: str) -> list[str]:
        """Commit shas from ``rev`` back to the repo's first, newest first."""
        out, sha = [], self.resolve(repo, rev)
        while sha is not None and len(out) < 100_000:
            out.append(sha)
            sha = self.meta.get(sha, {}).get("parent")
        return out

    def last_commit(self, repo: str, rev: str, path: str) -> str | None:
        """The newest commit on ``rev`` that changed ``path`` (``lastCommit`` of paths-info)."""
        chain = self.history(repo, rev)
        for sha, parent in zip(chain, [*chain[1:], None], strict=True):
            if self.files(sha).get(path) != (self.files(parent).get(path) if parent else None):
                return sha
        return None

    def commit(
        self,
        repo: str,
        branch: str,
        changes: dict[str, bytes | None],
        parent: str | None = None,
        author: str | None = None,
        title: str = "",
    ) -> str | None:
        """Apply ``changes`` (path -> bytes, None deletes) on ``branch``; None when ``parent`` is not its head."""
        with self.lock:
            head = self.refs[repo].get(branch) or self.refs[repo]["main"]
            if parent is not None and parent != head:
                return None
            files = dict(self.commits[head])
            for path, data in changes.items():
                if data is None:
                    files.pop(path, None)
                    for p in [p for p in files if p.startswith(path.rstrip("/") + "/")]:
                        files.pop(p)  # a folder deletion
                else:
                    self.blobs[_blob_id(data)] = data
                    files[path] = _blob_id(data)
            date = _iso(self.clock())
            stamp = json.dumps([sorted(files.items()), head, author, title, date, time.time_ns()])
            sha = hashlib.sha1(stamp.encode()).hexdigest()
            self.commits[sha] = files
            self.meta[sha] = {"parent": head, "author": author, "date": date, "title": title}
            self.refs[repo][branch] = sha
            self._save(changed=[files[p] for p, d in changes.items() if d is not None])
            return sha

    # -- discussions and pull requests ------------------------------------------------------------------
    def open_discussion(self, repo: str, author: str, title: str, description: str, pr: bool) -> dict:
        """A new discussion (``pr``: a pull request whose ``refs/pr/N`` starts at main's head)."""
        with self.lock:
            found = self.discussions.setdefault(repo, [])
            d = {"num": len(found) + 1, "title": title[:200], "author": author, "status": "open",
                 "createdAt": _iso(self.clock()), "isPullRequest": pr, "events": [], "base": None,
                 "mergeCommitId": None}  # fmt: skip
            if pr:
                d["base"] = self.refs[repo]["main"]
                self.refs[repo][f"refs/pr/{d['num']}"] = d["base"]
            found.append(d)
            self.event(repo, d, "comment", author, description)
            return d

    def event(self, repo: str, d: dict, kind: str, author: str | None, value: str) -> dict:
        """Append an event (comment, status-change, commit) to discussion ``d``; returns it as the Hub shows it."""
        data = {
            "comment": lambda: {"edited": False, "hidden": False, "latest": {"raw": value, "html": value}},
            "status-change": lambda: {"status": value},
            "commit": lambda: {"subject": self.meta[value]["title"], "oid": value},
        }[kind]()
        with self.lock:
            n = len(d["events"])
            evt = {"id": hashlib.sha1(f"{repo}:{d['num']}:{n}".encode()).hexdigest()[:24], "type": kind,
                   "createdAt": _iso(self.clock()), "author": {"name": author or "deleted"}, "data": data}  # fmt: skip
            d["events"].append(evt)
            self._save()
            return evt

    def pr_changes(self, repo: str, d: dict) -> dict[str, str | None]:
        """What pull request ``d`` changes: path -> blob id at its head (None: deleted), against its base."""
        base, head = self.files(d["base"]), self.files(self.refs[repo][f"refs/pr/{d['num']}"])
        return {p: head.get(p) for p in sorted(set(base) | set(head)) if base.get(p) != head.get(p)}

    def merge(self, repo: str, d: dict, user: str | None) -> tuple[str | None, list[str]]:
        """Apply pull request ``d``'s changes on main in one commit by ``user``: (sha, []), or (None, the
        files main changed since the pull request's base too)."""
        with self.lock:
            changes = self.pr_changes(repo, d)
            base, main = self.files(d["base"]), self.files(self.refs[repo]["main"])
            conflicts = [p for p in changes if main.get(p) != base.get(p)]
            if conflicts:
                return None, conflicts
            data = {p: (None if b is None else self.blobs[b]) for p, b in changes.items()}
            sha = self.commit(repo, "main", data, author=user, title=f"{d['title']} (#{d['num']})")
            d["status"], d["mergeCommitId"] = "merged", sha
            self.event(repo, d, "status-change", user, "merged")
            return sha, []

    def tag(self, repo: str, tag: str, rev: str) -> None:
        with self.lock:
            self.refs[repo][tag] = self.resolve(repo, rev)
            self._save()

    # -- persistence ------------------------------------------------------------------------------------------
    def _load(self) -> None:
        state = self.root / "state.json"
        if not state.is_file():
            return
        doc = json.loads(state.read_text(encoding="utf-8"))
        self.commits, self.refs = doc["commits"], doc["refs"]
        self.meta, self.writers = doc.get("meta", {}), doc.get("writers", {})
        self.discussions = doc.get("discussions", {})
        self.private = set(doc.get("private", []))
        for blob in {b for files in self.commits.values() for b in files.values()}:
            self.blobs[blob] = (self.root / "blobs" / blob).read_bytes()

    def _save(self, changed: list[str] = ()) -> None:
        if self.root is None:
            return
        (self.root / "blobs").mkdir(parents=True, exist_ok=True)
        for blob in changed:
            path = self.root / "blobs" / blob
            if not path.exists():
                tmp = path.with_suffix(".tmp")
                tmp.write_bytes(self.blobs[blob])
                os.replace(tmp, path)
        tmp = self.root / "state.json.tmp"
        doc = {"commits": self.commits, "refs": self.refs, "meta": self.meta, "writers": self.writers,
               "discussions": self.discussions, "private": sorted(self.private)}  # fmt: skip
        tmp.write_text(json.dumps(doc), encoding="utf-8")
        os.replace(tmp, self.root / "state.json")


def safetensors_summary(data: bytes) -> dict[str, int] | None:
    """Parameters per dtype from a safetensors file's header (what the Hub shows as ``safetensors``)."""
    if len(data) < 8:
        return None
    (size,) = struct.unpack("<Q", data[:8])
    try:
        header = json.loads(data[8 : 8 + size])
    except ValueError:
        return None
    counts: dict[str, int] = {}
    for name, info in header.items():
        if name == "__metadata__" or not isinstance(info, dict):
            continue
        n = 1
        for dim in info.get("shape", []):
            n *= int(dim)
        counts[info.get("dtype", "?")] = counts.get(info.get("dtype", "?"), 0) + n
    return counts


class HubHandler(BaseHTTPRequestHandler):
    """One request against the server's :class:`HubState` (``self.server.state``)."""

    protocol_version = "HTTP/1.1"

    @property
    def state(self) -> HubState:
        return self.server.state

    def log_message(self, *args) -> None:  # quiet
        pass

    def date_time_string(self, timestamp=None) -> str:
        """The ``Date`` header from the server's clock (:attr:`HubState.clock`), as a client sees the Hub's time."""
        return format_datetime(self.state.clock().astimezone(UTC), usegmt=True)

    def _send(
        self, code: int, body: bytes = b"", headers: dict | None = None, ctype="application/json"
    ) -> None:
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _json(self, obj, code=200) -> None:
        self._send(code, json.dumps(obj).encode())

    def _not_found(self, what: str, code: str) -> None:
        self._send(404, json.dumps({"error": what}).encode(), {"X-Error-Code": code})

    def _body(self) -> bytes:
        n = int(self.headers.get("Content-Length") or 0)
        if n > MAX_BODY_BYTES:
            raise ValueError("body too large")
        return self.rfile.read(n) if n else b""

    def _token(self) -> str | None:
        auth = self.headers.get("Authorization", "")
        if auth.startswith("Bearer "):
            self.state.tokens_seen.add(auth[7:])
            return auth[7:]
        return None

    def _parts(self) -> list[str]:
        return [unquote(p) for p in urlparse(self.path).path.strip("/").split("/")]

    # -- reads -----------------------------------------------------------------------------------------
    def do_HEAD(self) -> None:
        self.do_GET()

    def do_GET(self) -> None:
        token = self._token()
        parts = self._parts()
        if not self.state.known(token):
            return self._send(401, INVALID_TOKEN)
        if parts == ["api", "whoami-v2"]:
            if token is None:
                return self._send(401, INVALID_TOKEN)
            name = self.state.users[token]
            return self._json({"type": "user", "name": name, "fullname": name, "orgs": []})
        if parts[:2] in (["api", "datasets"], ["api", "models"]):
            return self._api_get(parts[1], parts[2:])
        if "resolve" in parts:
            return self._resolve(parts)
        self._send(404, b'{"error":"unknown route"}')

    def _resolve(self, parts: list[str]) -> None:
        kind, rest = ("datasets", parts[1:]) if parts[0] == "datasets" else ("models", parts)
        i = rest.index("resolve")
        repo, rev, path = f"{kind}/" + "/".join(rest[:i]), rest[i + 1], "/".join(rest[i + 2 :])
        sha = self.state.resolve(repo, rev)
        if repo not in self.state.refs or not self.state.can_read(repo, self.state.user(self._token())):
            return self._not_found("Repository not found", "RepoNotFound")
        if sha is None:
            return self._not_found("Revision not found", "RevisionNotFound")
        data = self.state.read(repo, sha, path)
        if data is None:
            return self._not_found("Entry not found", "EntryNotFound")
        where = f"{repo.split('/', 1)[1]}/{path}"
        if self.state.faults[where] > 0 and self.command == "GET":
            self.state.faults[where] -= 1
            return self._send(503, b'{"error":"Service Unavailable"}')
        if path in self.state.holds and self.command == "GET":
            self.state.waiting[path] += 1
            self.state.holds[path].wait(timeout=60)
        headers = {"ETag": f'"{_blob_id(data)}"', "X-Repo-Commit": sha, "Accept-Ranges": "bytes"}
        rng = self.headers.get("Range")
        if rng and rng.startswith("bytes="):
            a, _, b = rng[6:].partition("-")
            a, b = int(a), min(int(b) if b else len(data) - 1, len(data) - 1)
            headers["Content-Range"] = f"bytes {a}-{b}/{len(data)}"
            return self._send(206, data[a : b + 1], headers, "application/octet-stream")
        self._send(200, data, headers, "application/octet-stream")

    def _api_get(self, kind: str, rest: list[str]) -> None:
        # /api/{datasets|models}/{org}/{name}[/revision/{rev}] | /tree/{rev}/{path...}
        repo = f"{kind}/" + "/".join(rest[:2])
        if repo not in self.state.refs or not self.state.can_read(repo, self.state.user(self._token())):
            return self._not_found("Repository not found", "RepoNotFound")
        query = parse_qs(urlparse(self.path).query or "")
        rev = rest[3] if len(rest) >= 4 and rest[2] in ("revision", "tree", "commits") else "main"
        sha = self.state.resolve(repo, rev)
        if sha is None:
            return self._not_found("Revision not found", "RevisionNotFound")
        if len(rest) >= 3 and rest[2] == "commits":
            return self._json(self._commits(repo, sha))
        if len(rest) >= 3 and rest[2] == "discussions":
            return self._discussions(repo, kind, rest[3:], query)
        files = self.state.files(sha)
        if len(rest) >= 4 and rest[2] == "tree":
            recursive = query.get("recursive", ["false"])[0].lower() == "true"
            return self._json(self._tree(files, "/".join(rest[4:]), recursive))
        blobs = query.get("blobs", ["false"])[0].lower() == "true"
        info = {
            "id": repo.split("/", 1)[1],
            "_id": repo,
            "modelId": repo.split("/", 1)[1],
            "sha": sha,
            "private": repo in self.state.private,
            "disabled": False,
            "gated": False,
            "downloads": 0,
            "likes": 0,
            "tags": [],
            "lastModified": "2026-01-01T00:00:00.000Z",
            "siblings": [self._sibling(p, files[p], blobs) for p in sorted(files)],
        }
        params = self._parameters(files)
        if params:
            info["safetensors"] = {"parameters": params, "total": sum(params.values())}
        self._json(info)

    def _commits(self, repo: str, sha: str) -> list[dict]:
        """``list_repo_commits``: newest first, each with its author (the token's user) and date (server time)."""
        out = []
        for c in self.state.history(repo, sha):
            meta = self.state.meta.get(c, {})
            author = meta.get("author")
            out.append({"id": c, "title": meta.get("title", ""), "message": meta.get("title", ""),
                        "authors": [{"user": author}] if author else [], "date": meta.get("date")})  # fmt: skip
        return out

    def _discussion(self, repo: str, kind: str, d: dict, details: bool = False) -> dict:
        out = {"num": d["num"], "title": d["title"], "author": {"name": d["author"]}, "createdAt": d["createdAt"],
               "status": d["status"], "isPullRequest": d["isPullRequest"],
               "repo": {"name": repo.split("/", 1)[1], "type": kind[:-1]}}  # fmt: skip
        if details:
            out["events"] = d["events"]
            out["filesWithConflicts"] = []
            out["diff"] = ""
            if d["isPullRequest"]:
                out["changes"] = {"base": "refs/heads/main", "mergeCommitId": d["mergeCommitId"]}
                out["diff"] = "".join(f"{p}\n" for p in self.state.pr_changes(repo, d))
        return out

    def _discussions(self, repo: str, kind: str, rest: list[str], query: dict) -> None:
        found = self.state.discussions.get(repo, [])
        if rest:
            if not rest[0].isdigit() or not 0 < int(rest[0]) <= len(found):
                return self._not_found("Discussion not found", "DiscussionNotFound")
            return self._json(self._discussion(repo, kind, found[int(rest[0]) - 1], details=True))
        want = {k: query[k][0] for k in ("type", "status", "author") if k in query and query[k][0] != "all"}
        keep = [
            d for d in reversed(found)  # newest first, as on the Hub
            if want.get("type") in (None, "pull_request" if d["isPullRequest"] else "discussion")
            and want.get("status") in (None, d["status"])
            and want.get("author") in (None, d["author"])
        ]  # fmt: skip
        start = int(query.get("p", ["0"])[0]) * PAGE
        page = [self._discussion(repo, kind, d) for d in keep[start : start + PAGE]]
        self._json({"discussions": page, "count": len(keep), "start": start, "numClosedDiscussions": 0})

    def _sibling(self, path: str, blob: str, blobs: bool) -> dict:
        if not blobs:
            return {"rfilename": path}
        data = self.state.blobs[blob]
        out = {"rfilename": path, "size": len(data), "blobId": blob}
        if path.endswith(".safetensors"):
            out["lfs"] = {
                "size": len(data),
                "sha256": hashlib.sha256(data).hexdigest(),
                "pointerSize": 134,
            }
        return out

    def _parameters(self, files: dict[str, str]) -> dict[str, int]:
        total: dict[str, int] = {}
        for path, blob in files.items():
            if path.endswith(".safetensors"):
                for dtype, n in (safetensors_summary(self.state.blobs[blob]) or {}).items():
                    total[dtype] = total.get(dtype, 0) + n
        return total

    def _tree(self, files: dict[str, str], prefix: str, recursive: bool) -> list[dict]:
        out, dirs = [], set()
        pre = prefix.rstrip("/") + "/" if prefix else ""
        for path in sorted(files):
            if not path.startswith(pre):
                continue
            rel = path[len(pre) :]
            if "/" in rel and not recursive:
                dirs.add(pre + rel.split("/")[0])
                continue
            if recursive:
                segs = rel.split("/")[:-1]
                for i in range(1, len(segs) + 1):
                    dirs.add(pre + "/".join(segs[:i]))
            out.append(
                {"type": "file", "path": path, "size": len(self.state.blobs[files[path]]), "oid": files[path]}
            )
        out += [
            {"type": "directory", "path": d, "oid": hashlib.sha1(d.encode()).hexdigest(), "size": 0}
            for d in sorted(dirs)
        ]
        return out

    # -- writes ----------------------------------------------------------------------------------------
    def do_POST(self) -> None:
        token = self._token()
        if not self.state.known(token):
            return self._send(401, INVALID_TOKEN)
        user = self.state.user(token)
        parts = self._parts()
        try:
            body = self._body()
        except ValueError:
            return self._send(413, b'{"error":"request body too large"}')
        if parts == ["api", "repos", "create"]:
            req = json.loads(body)
            name = req["name"] if "/" in req["name"] else f"{req.get('organization') or 'user'}/{req['name']}"
            kind = "datasets" if req.get("type") == "dataset" else "models"
            self.state.create_repo(
                f"{kind}/{name}",
                writers=[user] if user else [],
                private=bool(req.get("private")) or req.get("visibility") == "private",
            )
            return self._json({"url": f"http://{self.headers['Host']}/{kind}/{name}", "name": name})
        if parts == ["api", "validate-yaml"]:
            content = json.loads(body)["content"]
            header = content.split("---")[1] if content.startswith("---") else ""
            try:
                yaml.safe_load(header)
            except yaml.YAMLError as e:
                return self._json({"errors": [{"message": str(e)}], "warnings": []}, code=400)
            return self._json({"errors": [], "warnings": []})
        if parts[:2] not in (["api", "datasets"], ["api", "models"]) or len(parts) < 5:
            return self._send(404, b'{"error":"unknown route"}')
        repo, action, rev = f"{parts[1]}/" + "/".join(parts[2:4]), parts[4], "/".join(parts[5:])
        if repo not in self.state.refs:
            return self._not_found("Repository not found", "RepoNotFound")
        if action == "preupload":
            files = json.loads(body)["files"]
            return self._json(
                {
                    "files": [
                        {"path": f["path"], "uploadMode": "regular", "shouldIgnore": False} for f in files
                    ]
                }
            )
        if action == "paths-info":
            if not self.state.can_read(repo, user):
                return self._not_found("Repository not found", "RepoNotFound")
            return self._paths_info(repo, rev, body)
        if action == "discussions":
            return self._discuss(repo, parts[1], parts[5:], json.loads(body or b"{}") or {}, user)
        if action == "commit":
            create_pr = parse_qs(urlparse(self.path).query or "").get("create_pr", ["0"])[0] == "1"
            return self._commit(repo, rev or "main", body, user, create_pr)
        if action == "tag":
            if not self.state.can_write(repo, user):
                return self._forbidden(repo, user)
            self.state.tag(repo, json.loads(body)["tag"], rev)
            return self._json({})
        self._send(404, b'{"error":"unknown action"}')

    def _forbidden(self, repo: str, user: str | None) -> None:
        if user is None:
            return self._send(401, b'{"error":"Invalid credentials in Authorization header"}')
        msg = f"You don't have the rights to write to {repo.split('/', 1)[1]} ({user} is not one of its writers)"
        self._send(403, json.dumps({"error": msg}).encode(), {"X-Error-Message": msg})

    def _paths_info(self, repo: str, rev: str, body: bytes) -> None:
        files = self.state.files(self.state.resolve(repo, rev))
        form = parse_qs(body.decode()) if body and not body.startswith(b"{") else {}
        doc = {} if form else json.loads(body or b"{}")
        paths = form.get("paths") or doc.get("paths", [])
        expand = form.get("expand", ["False"])[0].lower() == "true" or doc.get("expand") is True
        out = []
        for p in paths:
            if p not in files:
                continue
            item = {"type": "file", "path": p, "size": len(self.state.blobs[files[p]]), "oid": files[p]}
            last = self.state.last_commit(repo, rev, p) if expand else None
            if last is not None:
                meta = self.state.meta[last]
                item["lastCommit"] = {"id": last, "title": meta["title"], "date": meta["date"]}
            out.append(item)
        self._json(out)

    def _discuss(self, repo: str, kind: str, rest: list[str], body: dict, user: str | None) -> None:
        """Open a discussion, or comment on, close/reopen or merge discussion ``rest[0]``."""
        if user is None:
            return self._forbidden(repo, user)
        if not rest:
            d = self.state.open_discussion(
                repo,
                user,
                str(body.get("title", "")),
                str(body.get("description", "")),
                bool(body.get("pullRequest")),
            )
            return self._json({"num": d["num"], "pullRequest": d["isPullRequest"]})
        found = self.state.discussions.get(repo, [])
        if not rest[0].isdigit() or not 0 < int(rest[0]) <= len(found) or len(rest) != 2:
            return self._not_found("Discussion not found", "DiscussionNotFound")
        d, what = found[int(rest[0]) - 1], rest[1]
        if what == "comment":
            return self._json(
                {"newMessage": self.state.event(repo, d, "comment", user, str(body.get("comment", "")))}
            )
        if (what == "merge" or (what == "status" and user != d["author"])) and not self.state.can_write(
            repo, user
        ):
            return self._forbidden(repo, user)  # the author may close their own; merging is the writers'
        if what == "status":
            if body.get("status") not in ("open", "closed") or d["status"] == "merged":
                return self._send(400, b'{"error":"status: open or closed, of a discussion not merged"}')
            d["status"] = body["status"]
            evt = self.state.event(repo, d, "status-change", user, body["status"])
            if body.get("comment"):
                self.state.event(repo, d, "comment", user, str(body["comment"]))
            return self._json({"newStatus": evt})
        if what == "merge":
            if not d["isPullRequest"] or d["status"] != "open":
                return self._send(400, b'{"error":"only an open pull request can be merged"}')
            if body.get("comment"):
                self.state.event(repo, d, "comment", user, str(body["comment"]))
            sha, conflicts = self.state.merge(repo, d, user)
            if sha is None:
                return self._send(409, json.dumps({"error": f"conflicting files: {conflicts}"}).encode())
            return self._json({})
        self._send(404, b'{"error":"unknown discussion action"}')

    def _commit(self, repo: str, branch: str, body: bytes, user: str | None, create_pr: bool) -> None:
        parent, changes = None, {}
        for line in body.splitlines():
            item = json.loads(line)
            if item["key"] == "header":
                parent = item["value"].get("parentCommit")
            elif item["key"] == "file":
                changes[item["value"]["path"]] = base64.b64decode(item["value"]["content"])
            elif item["key"] in ("deletedFile", "deletedFolder"):
                changes[item["value"]["path"]] = None
        header = next((json.loads(x)["value"] for x in body.splitlines()[:1]), {})
        title = header.get("summary", "")
        pr = None
        # from main's head, whatever parentCommit says (as on the Hub); the commit description opens it
        if create_pr:
            if user is None:
                return self._forbidden(repo, user)
            pr = self.state.open_discussion(repo, user, title, str(header.get("description", "")), pr=True)
            branch, parent = f"refs/pr/{pr['num']}", None
        elif branch.startswith("refs/pr/"):
            found = self.state.discussions.get(repo, [])
            n = branch.rsplit("/", 1)[-1]
            if branch not in self.state.refs[repo] or not n.isdigit():
                return self._not_found("Revision not found", "RevisionNotFound")
            if user != found[int(n) - 1]["author"] and not self.state.can_write(repo, user):
                return self._forbidden(repo, user)
        elif not self.state.can_write(repo, user):
            return self._forbidden(repo, user)
        sha = self.state.commit(repo, branch, changes, parent, author=user, title=title)
        if sha is None:
            self.state.conflicts += 1
            return self._send(412, STALE_HEAD)
        if branch.startswith("refs/pr/"):
            n = int(branch.rsplit("/", 1)[-1])
            self.state.event(repo, self.state.discussions[repo][n - 1], "commit", user, sha)
        host = self.headers["Host"]
        prefix = f"http://{host}/" + ("" if repo.startswith("models/") else repo.split("/", 1)[0] + "/")
        pr_url = f"{prefix}{repo.split('/', 1)[1]}/discussions/{pr['num']}" if pr else None
        self._json(
            {"commitUrl": f"http://{host}/{repo}/commit/{sha}", "commitOid": sha, "pullRequestUrl": pr_url}
        )


class HubServer:
    """The server on ``127.0.0.1:port`` (0: any free port), in a background thread while the context is open."""

    def __init__(self, port: int = 0, root: Path | None = None) -> None:
        self.state = HubState(root)
        self.httpd = ThreadingHTTPServer((LOOPBACK, port), HubHandler)
        self.httpd.state = self.state
        self.httpd.daemon_threads = True
        self.url = f"http://{LOOPBACK}:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": POLL_S}, daemon=True
        )

    def env(self, token: str, hf_home) -> dict[str, str]:
        """What a client process needs to talk to this server only: endpoint, token (a user of this server:
        ``dev-user`` unless added under another name), its own cache, no Xet."""
        if token not in self.state.users:
            self.state.add_user(token, "dev-user")
        return {
            "HF_ENDPOINT": self.url,
            "HF_TOKEN": token,
            "HF_HOME": str(hf_home),
            "HF_HUB_DISABLE_TELEMETRY": "1",
            "HF_HUB_DISABLE_XET": "1",
        }

    def __enter__(self) -> HubServer:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        for event in self.state.holds.values():
            event.set()
        self.httpd.shutdown()
        self.httpd.server_close()
