"""A small OpenAI-compatible server for tests (loopback only), with fault injection.

It speaks ``POST /v1/chat/completions``, the files endpoints (``POST /v1/files`` multipart, ``GET
/v1/files/{id}``, ``GET /v1/files/{id}/content``) and the batches endpoints (``POST /v1/batches``, ``GET
/v1/batches/{id}``). Its "model" answers deterministically from a hash of the messages, in the JSON shape the
system prompt asks for (``decision``, ``winner`` or ``markers``), so tests can predict every verdict with
``expected_decision``.

Faults, set on ``FakeOpenAI.state``: ``script`` (one fault per chat request, consumed in order: ``429``,
``500``, ``timeout``, ``malformed``, ``drop``, ``html`` (a 200 HTML page), ``badjson`` (a 200 that is cut-off
JSON)), ``always`` (the fault of every chat request once the script is used up), ``retry_after`` (the headers of
a 429), ``usage`` (fields that replace the reported token usage, such as a negative count), ``reply_chars``
(every reply's content padded to that many characters), ``malformed_if`` (a substring: any request whose user message
holds it is always answered with non-JSON text), ``batch_fail_every`` (every n-th batch item fails with a 500),
``delay_s`` (added to every chat request), ``require_key`` (answer 401 unless that bearer token is sent),
``decide`` (a function of the messages that gives the verdicts instead of the hash).
``answer_with`` replaces the model: a function of the messages returning the reply object (a judging policy a
test can predict, such as "always A").

Run ``python tests/helpers/openai_server.py --port 8089 --script 429,500,malformed`` to try the CLI against it by hand.
"""

from __future__ import annotations

import argparse
import contextlib
import email.parser
import hashlib
import json
import threading
import time
from collections import Counter
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

# shutdown() waits for the serving loop to look for a stop, up to this long (the default 0.5 s, in 43 tests)
POLL_S = 0.05
REASK_CUE = "previous reply could not be used"


def _digest(messages: list[dict[str, str]]) -> str:
    """Hash of the system prompt and the *first* user message (a re-ask gets the same answer)."""
    first_user = next(m["content"] for m in messages if m["role"] == "user")
    return hashlib.sha256((messages[0]["content"] + "\x00" + first_user).encode()).hexdigest()


def expected_decision(messages: list[dict[str, str]]) -> bool:
    """The fake model's verdict for a request (about 70% accept)."""
    return int(_digest(messages)[:4], 16) % 10 < 7


def answer(
    messages: list[dict[str, str]], decide: Callable[[list[dict[str, str]]], bool] | None = None
) -> dict[str, Any]:
    system, digest = messages[0]["content"], _digest(messages)
    if '"winner"' in system:
        return {"winner": "AB"[int(digest[0], 16) % 2], "confidence": 0.6, "reason": "fake"}
    if '"markers"' in system:
        seed = messages[1]["content"].split(":", 1)[-1].strip()
        return {"markers": [f"{seed} in practice", f"in response to {seed}", seed]}
    decision = decide(messages) if decide else expected_decision(messages)
    return {"decision": decision, "confidence": 0.8, "reason": "fake verdict"}


class State:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.script: list[str] = []
        self.always = ""
        self.retry_after = {"Retry-After": "1", "retry-after-ms": "50"}
        self.usage: dict[str, Any] = {}
        self.reply_chars = 0
        self.malformed_if: str | None = None
        self.batch_fail_every = 0
        self.batch_polls = 2
        self.delay_s = 0.0
        self.timeout_sleep_s = 3.0
        self.require_key: str | None = None
        self.decide: Callable[[list[dict[str, str]]], bool] | None = None  # verdicts a test chose
        self.answer_with: Callable[[list[dict[str, str]]], dict[str, Any]] | None = None
        self.no_batch_api = False  # answer 404 on files/batches, like llama.cpp's server
        self.chat_keys: Counter[str] = Counter()  # body hash -> times received
        self.faults_served: Counter[str] = Counter()
        self.auth_seen: set[str] = set()
        self.files: dict[str, bytes] = {}
        self.batches: dict[str, dict[str, Any]] = {}

    def completion(self, body: dict[str, Any], fault: str = "") -> tuple[int, dict[str, Any]]:
        messages = body["messages"]
        last_user = [m for m in messages if m["role"] == "user"][-1]["content"]
        first_user = next(m["content"] for m in messages if m["role"] == "user")
        bad = fault == "malformed" and REASK_CUE not in last_user
        if self.malformed_if and self.malformed_if in first_user:
            bad = True
        content = (
            "Sure! Here is my verdict: looks fine."
            if bad
            else json.dumps(self.answer_with(messages) if self.answer_with else answer(messages, self.decide))
        )
        content = content.ljust(self.reply_chars)  # JSON with trailing blanks: still parses, only too large
        prompt_tokens = sum(len(m["content"]) for m in messages) // 4
        return 200, {
            "id": "chatcmpl-" + hashlib.sha1(content.encode()).hexdigest()[:12],
            "object": "chat.completion",
            "created": 0,
            "model": body.get("model", "fake"),
            "choices": [
                {"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}
            ],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": len(content) // 4,
                "total_tokens": prompt_tokens + len(content) // 4,
            }
            | self.usage,
        }

    def run_batch(self, batch: dict[str, Any]) -> None:
        out, err = [], []
        lines = self.files[batch["input_file_id"]].decode().splitlines()
        for i, line in enumerate(x for x in lines if x.strip()):
            req = json.loads(line)
            if self.batch_fail_every and (i + 1) % self.batch_fail_every == 0:
                err.append(
                    {
                        "id": f"r{i}",
                        "custom_id": req["custom_id"],
                        "response": {"status_code": 500, "body": {"error": {"message": "injected"}}},
                        "error": None,
                    }
                )
                continue
            code, body = self.completion(req["body"])
            out.append(
                {
                    "id": f"r{i}",
                    "custom_id": req["custom_id"],
                    "response": {"status_code": code, "body": body},
                    "error": None,
                }
            )
        for kind, rows in (("output_file_id", out), ("error_file_id", err)):
            if rows:
                fid = f"file-{len(self.files) + 1}"
                self.files[fid] = ("\n".join(json.dumps(r) for r in rows) + "\n").encode()
                batch[kind] = fid
        batch["status"] = "completed"
        batch["request_counts"] = {"total": len(out) + len(err), "completed": len(out), "failed": len(err)}


def _file_object(fid: str, data: bytes) -> dict[str, Any]:
    return {"id": fid, "object": "file", "bytes": len(data), "created_at": 0, "filename": "batch.jsonl",
            "purpose": "batch", "status": "processed"}  # fmt: skip


def _handler(state: State):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: Any) -> None:
            pass

        def _send(self, code: int, obj: Any, headers: dict[str, str] | None = None, raw: bytes | None = None):
            data = raw if raw is not None else json.dumps(obj).encode()
            headers = {"Content-Type": "application/json"} | (headers or {})
            self.send_response(code)
            self.send_header("Content-Length", str(len(data)))
            for k, v in headers.items():
                self.send_header(k, v)
            self.end_headers()
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):  # client gave up (timeout)
                self.wfile.write(data)

        def _body(self) -> bytes:
            return self.rfile.read(int(self.headers.get("Content-Length") or 0))

        def _authorised(self) -> bool:
            auth = self.headers.get("Authorization", "")
            with state.lock:
                state.auth_seen.add(auth)
            if state.require_key and auth != f"Bearer {state.require_key}":
                self._send(401, {"error": {"message": "invalid api key", "type": "invalid_request_error"}})
                return False
            return True

        def do_POST(self) -> None:
            body = self._body()
            if not self._authorised():
                return
            if self.path.endswith("/chat/completions"):
                return self._chat(json.loads(body))
            if state.no_batch_api and not self.path.endswith("/chat/completions"):
                return self._send(404, {"error": {"message": "not found"}})
            if self.path.endswith("/files"):
                msg = email.parser.BytesParser().parsebytes(
                    b"Content-Type: " + self.headers["Content-Type"].encode() + b"\r\n\r\n" + body
                )
                data = next(p.get_payload(decode=True) for p in msg.get_payload() if p.get_filename())
                with state.lock:
                    fid = f"file-{len(state.files) + 1}"
                    state.files[fid] = data
                return self._send(200, _file_object(fid, data))
            if self.path.endswith("/batches"):
                req = json.loads(body)
                with state.lock:
                    bid = f"batch_{len(state.batches) + 1}"
                    state.batches[bid] = {
                        "id": bid,
                        "object": "batch",
                        "endpoint": req["endpoint"],
                        "errors": None,
                        "input_file_id": req["input_file_id"],
                        "completion_window": req["completion_window"],
                        "status": "validating",
                        "created_at": 0,
                        "output_file_id": None,
                        "error_file_id": None,
                        "request_counts": {"total": 0, "completed": 0, "failed": 0},
                        "polls": 0,
                        "metadata": req.get("metadata") or {},
                    }
                    return self._send(200, state.batches[bid])
            self._send(404, {"error": {"message": "not found"}})

        def do_GET(self) -> None:
            if not self._authorised():
                return
            parts = self.path.rstrip("/").split("/")
            if "batches" in parts:
                with state.lock:
                    batch = state.batches.get(parts[-1])
                    if batch is None:
                        return self._send(404, {"error": {"message": "no such batch"}})
                    batch["polls"] += 1
                    if batch["status"] != "completed":
                        batch["status"] = "in_progress"
                        if batch["polls"] >= state.batch_polls:
                            state.run_batch(batch)
                    return self._send(200, batch)
            if "files" in parts:
                fid = parts[-2] if parts[-1] == "content" else parts[-1]
                data = state.files.get(fid)
                if data is None:
                    return self._send(404, {"error": {"message": "no such file"}})
                if parts[-1] == "content":
                    return self._send(200, None, raw=data)
                return self._send(200, _file_object(fid, data))
            self._send(404, {"error": {"message": "not found"}})

        def _chat(self, body: dict[str, Any]) -> None:
            key = hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()
            with state.lock:
                state.chat_keys[key] += 1
                fault = state.script.pop(0) if state.script else state.always
                if fault:
                    state.faults_served[fault] += 1
            if state.delay_s:
                time.sleep(state.delay_s)
            if fault == "429":
                return self._send(
                    429,
                    {"error": {"message": "rate limited", "type": "rate_limit"}},
                    headers=state.retry_after,
                )
            if fault == "html":
                return self._send(
                    200, None, {"Content-Type": "text/html"}, raw=b"<html><body>Login</body></html>"
                )
            if fault == "badjson":
                return self._send(200, None, raw=b'{"choices": [')
            if fault == "500":
                return self._send(500, {"error": {"message": "injected server error"}})
            if fault == "timeout":
                time.sleep(state.timeout_sleep_s)
            if fault == "drop":
                self.close_connection = True
                self.wfile.flush()
                self.connection.shutdown(2)
                return
            code, obj = state.completion(body, fault)
            self._send(code, obj)

    return Handler


class FakeOpenAI:
    """``with FakeOpenAI() as server: server.base_url``; tune faults through ``server.state``."""

    def __init__(self, port: int = 0):
        self.state = State()
        self.httpd = ThreadingHTTPServer(("127.0.0.1", port), _handler(self.state))
        self.base_url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self._thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": POLL_S}, daemon=True
        )

    def __enter__(self) -> FakeOpenAI:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--port", type=int, default=8089)
    ap.add_argument("--script", default="", help="comma-separated faults for the first requests")
    ap.add_argument("--malformed-if", default=None)
    ap.add_argument("--batch-fail-every", type=int, default=0)
    args = ap.parse_args()
    server = FakeOpenAI(args.port)
    server.state.script = [f for f in args.script.split(",") if f]
    server.state.malformed_if = args.malformed_if
    server.state.batch_fail_every = args.batch_fail_every
    print(f"fake OpenAI-compatible server on {server.base_url}", flush=True)
    server.httpd.serve_forever()
