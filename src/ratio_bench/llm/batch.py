"""The Batch API path: upload a JSONL of requests, create a batch, poll it, download and map results back.

It is the cheaper path for large runs (half the synchronous price at OpenAI). Results are matched to requests
by ``custom_id`` = the request's cache key, so they land in the same cache as synchronous replies. A batch id
is recorded before polling starts: a run killed while a batch is pending resumes by polling that batch, never
by submitting it again. Items the batch failed or never returned (and those of an expired batch) go through
the synchronous path with its retries; replies that are not valid JSON are re-asked synchronously once. Output
lines are untrusted like any reply: streamed, size-capped, token counts checked (see ``client``).
"""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Iterator
from typing import Any

from tqdm import tqdm

from ratio_bench.core import extras
from ratio_bench.llm.cache import CachedReply
from ratio_bench.llm.client import (
    MAX_BODY_BYTES,
    MAX_REPLY_CHARS,
    BadReply,
    Judge,
    JudgeError,
    JudgeRequest,
    Outcome,
)
from ratio_bench.llm.endpoint import unreachable
from ratio_bench.llm.parse import parse_reply

TERMINAL = frozenset({"completed", "failed", "expired", "cancelled"})
ENDPOINT = "/v1/chat/completions"


class BatchJudge:
    def __init__(
        self, judge: Judge, poll_s: float = 30.0, max_per_batch: int = 50_000, completion_window: str = "24h"
    ):
        self.judge = judge
        self.poll_s = poll_s
        self.max_per_batch = max_per_batch
        self.completion_window = completion_window

    # -- helpers ---------------------------------------------------------------------------------------

    def _estimate_usd(self, req: JudgeRequest) -> float:
        s = self.judge.settings
        prompt_tokens = sum(len(m["content"]) for m in req.messages) // 4 + 8
        return self.judge.meter.prices.cost(s.model, prompt_tokens, s.max_tokens or 256, batch=True)

    def _affordable(self, todo: dict[str, JudgeRequest]) -> list[str]:
        remaining = self.judge.meter.remaining()
        if remaining is None:
            return list(todo)
        keys, spent = [], 0.0
        for key, req in todo.items():
            spent += self._estimate_usd(req)
            if spent > remaining:
                break
            keys.append(key)
        return keys

    def _submit(self, keys: list[str], todo: dict[str, JudgeRequest]) -> str:
        lines = [
            json.dumps(
                {
                    "custom_id": key,
                    "method": "POST",
                    "url": ENDPOINT,
                    "body": self.judge.settings.request_body(todo[key].messages),
                },
                ensure_ascii=False,
            )
            for key in keys
        ]
        openai = extras.load("openai")

        client = self.judge.client
        try:
            upload = client.files.create(
                file=("ratio-judge-batch.jsonl", ("\n".join(lines) + "\n").encode()), purpose="batch"
            )
        except openai.NotFoundError:
            raise JudgeError(
                "this server has no Batch API (files/batches endpoints); run without --batch"
            ) from None
        except openai.APIConnectionError as exc:  # an upload is not retried: a re-run resumes cleanly
            raise JudgeError(
                f"{self.judge.base_url}: {unreachable(exc) or type(exc).__name__} while uploading a batch; "
                "check --base-url and re-run"
            ) from None
        batch = client.batches.create(
            input_file_id=upload.id,
            endpoint=ENDPOINT,
            completion_window=self.completion_window,
            metadata={"tool": "ratio-bench"},
        )
        self.judge.cache.add_batch(batch.id, upload.id, keys)
        self.judge.stats.add(batches=1, batch_requests=len(keys))
        return batch.id

    def _wait(self, batch_id: str) -> Any:
        openai = extras.load("openai")

        bar = tqdm(desc=f"batch {batch_id}", unit=" req", disable=not self.judge.progress)
        while True:
            try:
                batch = self.judge.client.batches.retrieve(batch_id)
                self.judge.connected()
            except (openai.APIConnectionError, openai.InternalServerError, openai.RateLimitError) as exc:
                dead = self.judge.connection_failed(exc)  # raises once the breaker trips
                self.judge.stats.add(retries=1)
                bar.set_postfix_str(f"retrying ({type(exc).__name__})", refresh=True)
                time.sleep(min(self.poll_s, 1.0) if dead else self.poll_s)
                continue
            counts = getattr(batch, "request_counts", None)
            if counts is not None:
                bar.total = counts.total
                bar.n = counts.completed + counts.failed
                bar.set_postfix_str(batch.status)
                bar.refresh()
            if batch.status in TERMINAL:
                bar.close()
                return batch
            time.sleep(self.poll_s)

    def _lines(self, file_id: str | None) -> Iterator[dict[str, Any]]:
        """The rows of a batch output file, streamed; a line over ``MAX_BODY_BYTES`` or no JSON is skipped.

        A skipped row leaves its request unanswered, so it goes through the synchronous path; a file over
        ``MAX_FILE_BYTES`` ends where the cap cut it, with the same effect for the rows after it.
        """
        if not file_id:
            return
        with self.judge.client.files.with_streaming_response.content(file_id) as response:
            try:
                for line in response.iter_lines():
                    if len(line) > MAX_BODY_BYTES or not line.strip():
                        continue
                    with contextlib.suppress(json.JSONDecodeError):
                        row = json.loads(line)
                        if isinstance(row, dict):
                            yield row
            except BadReply:
                return

    def _collect(self, batch_id: str, todo: dict[str, JudgeRequest]) -> set[str]:
        """Wait for a batch and cache its good replies; returns the keys it did not answer."""
        batch = self._wait(batch_id)
        answered: set[str] = set()
        for row in self._lines(getattr(batch, "output_file_id", None)):
            answer = _answer(row)
            if answer is None or answer[0] not in todo:
                continue  # a failed or malformed row: re-sent synchronously
            key, usage, content = answer
            tokens = self.judge.count_tokens(usage, todo[key].messages, content, batch=True)
            if len(content) > MAX_REPLY_CHARS:
                continue  # paid for, but too large to keep: re-sent synchronously, where it fails as such
            reply, _ = self.judge.finish(todo[key], content, tokens, "batch")
            self.judge.cache.put(key, self.judge.settings.identity(), self.judge.settings.model, reply)
            answered.add(key)
        self.judge.cache.close_batch(batch_id, batch.status)
        return set(todo) - answered

    # -- entry point -----------------------------------------------------------------------------------

    def run(self, requests: list[JudgeRequest], desc: str = "judging (batch)") -> list[Outcome]:
        judge = self.judge
        keys = [judge.key(r) for r in requests]
        todo: dict[str, JudgeRequest] = {}
        for req, key in zip(requests, keys, strict=True):
            if key in todo:
                continue
            if judge.cache.get(key) is None:
                todo[key] = req
            else:
                judge.stats.add(cache_hits=1)
        unanswered: set[str] = set()
        for batch_id, batch_keys in judge.cache.open_batches():  # resume what a killed run submitted
            if not set(batch_keys) <= set(todo) | {k for k in batch_keys if judge.cache.get(k)}:
                print(f"batch {batch_id} belongs to another request set; re-run that command to collect it")
                continue
            mine = {k: todo[k] for k in batch_keys if k in todo}
            unanswered |= self._collect(batch_id, mine)
            for k in mine:
                todo.pop(k)
        fresh = self._affordable(todo)
        batch_ids = [
            self._submit(fresh[i : i + self.max_per_batch], todo)
            for i in range(0, len(fresh), self.max_per_batch)
        ]
        for i, batch_id in enumerate(batch_ids):
            chunk = fresh[i * self.max_per_batch : (i + 1) * self.max_per_batch]
            unanswered |= self._collect(batch_id, {k: todo[k] for k in chunk})
        judge.stats.add(batch_failed=len(unanswered))
        leftovers = {k: r for k, r in todo.items() if k in unanswered}
        sync = judge.run_uncached(leftovers, "re-sending failed batch items") if leftovers else {}
        not_sent = {k for k in todo if k not in fresh and k not in unanswered}
        judge.stats.add(skipped_budget=len(not_sent))
        outcomes: list[Outcome] = []
        for req, key in zip(requests, keys, strict=True):
            if key in sync:
                outcomes.append(sync[key])
            elif key in not_sent:
                outcomes.append(Outcome("skipped", None, error="spending cap reached"))
            else:
                hit = judge.cache.get(key)
                outcomes.append(_from_reply(req, hit) if hit else Outcome("error", None, error="lost"))
        return outcomes


def _answer(row: dict[str, Any]) -> tuple[str, Any, str] | None:
    """(custom_id, usage, reply text) of a successful output row; None for a failed or malformed one."""
    try:
        response = row["response"]
        message = response["body"]["choices"][0]["message"]
        ok = response["status_code"] == 200
        usage, content = response["body"].get("usage"), message.get("content") or ""
    except (KeyError, IndexError, TypeError, AttributeError):
        return None
    if not ok or not isinstance(content, str):
        return None
    return str(row.get("custom_id")), usage, content


def _from_reply(req: JudgeRequest, reply: CachedReply) -> Outcome:
    if reply.status == "invalid":
        return Outcome("invalid", None, raw=reply.content, error="invalid reply")
    return Outcome("ok", parse_reply(reply.content, req.output))
