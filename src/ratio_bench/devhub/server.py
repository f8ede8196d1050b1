"""A Hub-compatible server on loopback: enough of the Hugging Face Hub API for ``huggingface_hub`` to work offline.

It speaks what ``huggingface_hub``, ``datasets`` and sentence-transformers use: create a model or dataset repo,
pre-upload, commit (regular base64 files, deletions, ``parentCommit`` checked: a commit whose parent is not the
branch head is refused with 412, as on the Hub), tag, repo info (``model_info`` with ``files_metadata`` and the
``safetensors`` parameter summary), tree listings, paths-info, ``whoami-v2`` and file downloads with ranges
(``get_safetensors_metadata`` reads the headers only). Every commit snapshots the repo's files; tags and
``main`` point at commits. Repos are keyed ``datasets/ORG/NAME`` or ``models/ORG/NAME``.

It is a development tool, not a Hub: there is no access control (any token is accepted; ``whoami`` names the
user the token was registered for with :meth:`HubState.add_user`, else ``dev-user``) and it listens on
127.0.0.1 only. State is in memory, or under ``root`` (blobs by SHA-1 and one ``state.json`` written atomically
after each write) so that a restarted server keeps its repos.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import struct
import threading
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, unquote, urlparse

MAX_BODY_BYTES = 2 << 30  # a commit carries its files base64-encoded in the body
LOOPBACK = "127.0.0.1"
STALE_HEAD = b'{"error":"A commit has happened since. Please refresh and try again."}'


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
        self.conflicts = 0  # commits refused because their parent was not the head
        self.lock = threading.Lock()
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

    def create_repo(self, repo: str) -> None:
        with self.lock:
            if repo not in self.refs:
                sha = hashlib.sha1(f"init:{repo}".encode()).hexdigest()
                self.commits[sha] = {}
                self.refs[repo] = {"main": sha}
                self._save()

    def commit(
        self, repo: str, branch: str, changes: dict[str, bytes | None], parent: str | None = None
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
            sha = hashlib.sha1(json.dumps(sorted(files.items())).encode() + head.encode()).hexdigest()
            self.commits[sha] = files
            self.refs[repo][branch] = sha
            self._save(changed=[files[p] for p, d in changes.items() if d is not None])
            return sha

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
        tmp.write_text(json.dumps({"commits": self.commits, "refs": self.refs}), encoding="utf-8")
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
        if parts == ["api", "whoami-v2"]:
            if token is None:
                return self._send(401, b'{"error":"Invalid credentials in Authorization header"}')
            name = self.state.users.get(token, "dev-user")
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
        if repo not in self.state.refs:
            return self._not_found("Repository not found", "RepoNotFound")
        if sha is None:
            return self._not_found("Revision not found", "RevisionNotFound")
        data = self.state.read(repo, sha, path)
        if data is None:
            return self._not_found("Entry not found", "EntryNotFound")
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
        if repo not in self.state.refs:
            return self._not_found("Repository not found", "RepoNotFound")
        query = parse_qs(urlparse(self.path).query or "")
        rev = rest[3] if len(rest) >= 4 and rest[2] in ("revision", "tree") else "main"
        sha = self.state.resolve(repo, rev)
        if sha is None:
            return self._not_found("Revision not found", "RevisionNotFound")
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
            "private": False,
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
        self._token()
        parts = self._parts()
        try:
            body = self._body()
        except ValueError:
            return self._send(413, b'{"error":"request body too large"}')
        if parts == ["api", "repos", "create"]:
            req = json.loads(body)
            name = req["name"] if "/" in req["name"] else f"{req.get('organization') or 'user'}/{req['name']}"
            kind = "datasets" if req.get("type") == "dataset" else "models"
            self.state.create_repo(f"{kind}/{name}")
            return self._json({"url": f"http://{self.headers['Host']}/{kind}/{name}", "name": name})
        if parts == ["api", "validate-yaml"]:
            import yaml

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
            files = self.state.files(self.state.resolve(repo, rev))
            form = parse_qs(body.decode()) if body and not body.startswith(b"{") else {}
            paths = form.get("paths") or json.loads(body or b"{}").get("paths", [])
            return self._json(
                [
                    {"type": "file", "path": p, "size": len(self.state.blobs[files[p]]), "oid": files[p]}
                    for p in paths
                    if p in files
                ]
            )
        if action == "commit":
            return self._commit(repo, rev or "main", body)
        if action == "tag":
            self.state.tag(repo, json.loads(body)["tag"], rev)
            return self._json({})
        self._send(404, b'{"error":"unknown action"}')

    def _commit(self, repo: str, branch: str, body: bytes) -> None:
        parent, changes = None, {}
        for line in body.splitlines():
            item = json.loads(line)
            if item["key"] == "header":
                parent = item["value"].get("parentCommit")
            elif item["key"] == "file":
                changes[item["value"]["path"]] = base64.b64decode(item["value"]["content"])
            elif item["key"] in ("deletedFile", "deletedFolder"):
                changes[item["value"]["path"]] = None
        sha = self.state.commit(repo, branch, changes, parent)
        if sha is None:
            self.state.conflicts += 1
            return self._send(412, STALE_HEAD)
        host = self.headers["Host"]
        self._json(
            {"commitUrl": f"http://{host}/{repo}/commit/{sha}", "commitOid": sha, "pullRequestUrl": None}
        )


class HubServer:
    """The server on ``127.0.0.1:port`` (0: any free port), in a background thread while the context is open."""

    def __init__(self, port: int = 0, root: Path | None = None) -> None:
        self.state = HubState(root)
        self.httpd = ThreadingHTTPServer((LOOPBACK, port), HubHandler)
        self.httpd.state = self.state
        self.httpd.daemon_threads = True
        self.url = f"http://{LOOPBACK}:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def env(self, token: str, hf_home) -> dict[str, str]:
        """What a client process needs to talk to this server only: endpoint, token, its own cache, no Xet."""
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
