"""A tiny in-memory Hub-compatible server for tests (loopback only).

It speaks the endpoints ``huggingface_hub`` uses to create a dataset or model repo, pre-upload, commit
(regular, base64 files) and tag, and those that ``datasets`` and sentence-transformers use to read it back (repo
info, tree, paths-info, resolve). Every commit snapshots the repo's files; tags and ``main`` point at commits.
Repos are keyed ``datasets/ORG/NAME`` or ``models/ORG/NAME``.
"""

from __future__ import annotations

import base64
import hashlib
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import unquote, urlparse


class HubState:
    def __init__(self) -> None:
        self.commits: dict[str, dict[str, bytes]] = {}  # sha -> files
        self.refs: dict[str, dict[str, str]] = {}  # repo -> {ref: sha}
        self.tokens_seen: set[str] = set()
        self.lock = threading.Lock()

    def resolve(self, repo: str, rev: str) -> str | None:
        refs = self.refs.get(repo)
        if refs is None:
            return None
        return refs.get(rev) or (rev if rev in self.commits else None)


def make_handler(state: HubState):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

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

        def _body(self) -> bytes:
            n = int(self.headers.get("Content-Length") or 0)
            return self.rfile.read(n) if n else b""

        def _auth(self) -> None:
            auth = self.headers.get("Authorization", "")
            if auth.startswith("Bearer "):
                state.tokens_seen.add(auth[7:])

        # -- reads -----------------------------------------------------------------------------------------
        def do_HEAD(self) -> None:
            self.do_GET()

        def do_GET(self) -> None:
            self._auth()
            parts = [unquote(p) for p in urlparse(self.path).path.strip("/").split("/")]
            if parts[:2] in (["api", "datasets"], ["api", "models"]):
                return self._api_get(parts[1], parts[2:])
            if "resolve" in parts:
                kind, rest = ("datasets", parts[1:]) if parts[0] == "datasets" else ("models", parts)
                i = rest.index("resolve")
                repo, rev, path = f"{kind}/" + "/".join(rest[:i]), rest[i + 1], "/".join(rest[i + 2 :])
                sha = state.resolve(repo, rev)
                files = state.commits.get(sha, {}) if sha else {}
                if path not in files:
                    return self._send(404, b'{"error":"not found"}', {"X-Error-Code": "EntryNotFound"})
                data = files[path]
                etag = '"' + hashlib.sha1(data).hexdigest() + '"'
                rng = self.headers.get("Range")
                headers = {"ETag": etag, "X-Repo-Commit": sha, "Accept-Ranges": "bytes"}
                if rng and rng.startswith("bytes="):
                    a, _, b = rng[6:].partition("-")
                    a = int(a)
                    b = int(b) if b else len(data) - 1
                    headers["Content-Range"] = f"bytes {a}-{b}/{len(data)}"
                    return self._send(206, data[a : b + 1], headers, "application/octet-stream")
                return self._send(200, data, headers, "application/octet-stream")
            self._send(404, b'{"error":"unknown route"}')

        def _api_get(self, kind: str, rest: list[str]) -> None:
            # /api/{datasets|models}/{org}/{name}[/revision/{rev}] | /tree/{rev}/{path...}
            repo = f"{kind}/" + "/".join(rest[:2])
            if repo not in state.refs:
                return self._send(404, b'{"error":"Repository not found"}', {"X-Error-Code": "RepoNotFound"})
            rev = "main"
            if len(rest) >= 4 and rest[2] == "revision":
                rev = rest[3]
            if len(rest) >= 4 and rest[2] == "tree":
                sha = state.resolve(repo, rest[3])
                prefix = "/".join(rest[4:])
                return self._json(
                    self._tree(
                        state.commits.get(sha, {}),
                        prefix,
                        "recursive=true" in (urlparse(self.path).query or ""),
                    )
                )
            sha = state.resolve(repo, rev)
            if sha is None:
                return self._send(
                    404, b'{"error":"Revision not found"}', {"X-Error-Code": "RevisionNotFound"}
                )
            files = state.commits[sha]
            self._json(
                {
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
                    "siblings": [{"rfilename": f} for f in sorted(files)],
                }
            )

        @staticmethod
        def _tree(files: dict[str, bytes], prefix: str, recursive: bool) -> list[dict]:
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
                data = files[path]
                out.append(
                    {"type": "file", "path": path, "size": len(data), "oid": hashlib.sha1(data).hexdigest()}
                )
            out += [
                {"type": "directory", "path": d, "oid": hashlib.sha1(d.encode()).hexdigest(), "size": 0}
                for d in sorted(dirs)
            ]
            return out

        # -- writes ----------------------------------------------------------------------------------------
        def do_POST(self) -> None:
            self._auth()
            parts = [unquote(p) for p in urlparse(self.path).path.strip("/").split("/")]
            body = self._body()
            if parts == ["api", "repos", "create"]:
                req = json.loads(body)
                name = (
                    f"{req.get('organization') or 'user'}/{req['name']}"
                    if "/" not in req["name"]
                    else req["name"]
                )
                kind = "datasets" if req.get("type") == "dataset" else "models"
                repo = f"{kind}/{name}"
                with state.lock:
                    if repo not in state.refs:
                        sha = hashlib.sha1(f"init:{repo}".encode()).hexdigest()
                        state.commits[sha] = {}
                        state.refs[repo] = {"main": sha}
                return self._json({"url": f"http://{self.headers['Host']}/{repo}", "name": name})
            if parts == ["api", "validate-yaml"]:
                import yaml

                content = json.loads(body)["content"]
                header = content.split("---")[1] if content.startswith("---") else ""
                try:
                    yaml.safe_load(header)
                except yaml.YAMLError as e:
                    return self._json({"errors": [{"message": str(e)}], "warnings": []}, code=400)
                return self._json({"errors": [], "warnings": []})
            if parts[:2] not in (["api", "datasets"], ["api", "models"]):
                return self._send(404, b'{"error":"unknown route"}')
            repo, action, rev = f"{parts[1]}/" + "/".join(parts[2:4]), parts[4], "/".join(parts[5:])
            if repo not in state.refs:
                return self._send(404, b'{"error":"Repository not found"}', {"X-Error-Code": "RepoNotFound"})
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
                sha = state.resolve(repo, rev)
                files = state.commits.get(sha, {})
                from urllib.parse import parse_qs

                form = parse_qs(body.decode()) if body and not body.startswith(b"{") else {}
                paths = form.get("paths") or json.loads(body or b"{}").get("paths", [])
                return self._json(
                    [
                        {
                            "type": "file",
                            "path": p,
                            "size": len(files[p]),
                            "oid": hashlib.sha1(files[p]).hexdigest(),
                        }
                        for p in paths
                        if p in files
                    ]
                )
            if action == "commit":
                with state.lock:
                    parent = state.resolve(repo, rev or "main")
                    files = dict(state.commits[parent])
                    for line in body.splitlines():
                        item = json.loads(line)
                        if item["key"] == "file":
                            files[item["value"]["path"]] = base64.b64decode(item["value"]["content"])
                        elif item["key"] == "deletedFile":
                            files.pop(item["value"]["path"], None)
                    sha = hashlib.sha1(
                        json.dumps(
                            sorted((k, hashlib.sha1(v).hexdigest()) for k, v in files.items())
                        ).encode()
                        + parent.encode()
                    ).hexdigest()
                    state.commits[sha] = files
                    state.refs[repo][rev or "main"] = sha
                host = self.headers["Host"]
                return self._json(
                    {
                        "commitUrl": f"http://{host}/{repo}/commit/{sha}",
                        "commitOid": sha,
                        "pullRequestUrl": None,
                    }
                )
            if action == "tag":
                tag = json.loads(body)["tag"]
                with state.lock:
                    state.refs[repo][tag] = state.resolve(repo, rev)
                return self._json({})
            self._send(404, b'{"error":"unknown action"}')

    return Handler


class HubServer:
    def __init__(self) -> None:
        self.state = HubState()
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), make_handler(self.state))
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
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
        self.httpd.shutdown()
        self.httpd.server_close()
