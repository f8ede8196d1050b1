"""The judge client: chat completions with JSON output against any OpenAI-compatible server.

Requests go through the ``openai`` client with its own retries switched off, because the judge counts and
paces them itself: rate limits (429), server errors (5xx), timeouts and dropped connections are retried with
exponential backoff that honours the server's ``Retry-After`` / ``retry-after-ms``; a refused connection or
an unresolvable host is no such fault, and ``breaker`` of them in a row (over all workers) stop the run with
one error naming the base URL. A reply that is not the
JSON the prompt asks for is re-asked once (the model sees its reply and a reminder), then recorded as invalid
with its raw text. Every finished reply goes to the content-addressed cache before anything else happens, so a
re-run or a resumed run sends nothing twice; its keys include the judge's identity (``judge_id`` or the
normalised base URL). The API key is read from the environment (see ``endpoint.api_key_for``) and is only
ever handed to the ``openai`` client.

Replies are untrusted. Every retry wait is capped at ``MAX_RETRY_WAIT_S``: a server asking for longer is
refusing for now, and that request fails with that reason instead of sleeping for a day; a ``Retry-After`` that
is no number of seconds or date (``nan``, ``-5``, ``soon``) falls back to the backoff. Waits are on the judge's
``stop`` event, which an interrupt (or a fatal error) sets, so Ctrl-C ends a run at once. A reply body over
``MAX_BODY_BYTES`` (a batch output file: ``MAX_FILE_BYTES``) is cut off while it is read, and a reply over
``MAX_REPLY_CHARS`` of content, an HTML page or broken JSON is a failed request, never cached.
"""

from __future__ import annotations

import email.utils
import functools
import json
import math
import random
import threading
import time
from collections.abc import Iterable
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from dataclasses import asdict, dataclass, field, fields
from typing import Any

from tqdm import tqdm

from ratio_bench.core import extras
from ratio_bench.core.errors import RatioError
from ratio_bench.llm.cache import CachedReply, ReplyCache, request_key
from ratio_bench.llm.endpoint import api_key_for, normalise_base_url, unreachable
from ratio_bench.llm.parse import InvalidReply, Verdict, parse_reply
from ratio_bench.llm.pricing import (
    CHARS_PER_TOKEN,
    BudgetExhausted,
    CostMeter,
    PriceTable,
    prompt_tokens,
    token_count,
)

RETRYABLE_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504})
FATAL_STATUS = frozenset({401, 403})
REASK = (
    "Your previous reply could not be used: {problem}. Reply again with only the JSON object the instructions "
    "ask for, with no other text."
)
_OPENAI_ARGS = frozenset({"model", "messages", "temperature", "max_tokens", "response_format", "seed"})
MAX_RETRY_WAIT_S = 60.0  # the longest wait before a retry; a server asking for more refuses for now
MAX_REPLY_CHARS = 64 * 1024  # a verdict is a small JSON object: a longer reply is broken, not cached
MAX_BODY_BYTES = 1024 * 1024  # one chat completion's HTTP body (the reply JSON-escaped, plus the envelope)
MAX_FILE_BYTES = 1024**3  # one Batch API output file


class JudgeError(RatioError, RuntimeError):
    """A failure that no retry can fix (bad credentials, unknown model): the run stops with this message."""


class BadReply(Exception):
    """A reply that is no usable chat completion (HTML, broken JSON, too large): this request fails."""


class ServerRefusing(Exception):
    """The server asks for a wait over ``MAX_RETRY_WAIT_S``: this request fails instead of sleeping."""


class Interrupted(Exception):
    """The run was stopped (Ctrl-C or a fatal error elsewhere): a worker gives up its request at once."""


@dataclass
class JudgeSettings:
    """Everything that decides what is sent, plus how hard to try. Only ``request_body`` reaches the cache key."""

    model: str
    base_url: str | None = None  # None: the OpenAI API
    api_key_env: str | None = None  # None: $OPENAI_API_KEY, sent to the OpenAI API only
    judge_id: str | None = None  # shares a cache between endpoints on purpose; default: the base URL
    temperature: float | None = 0.0
    max_tokens: int | None = 512
    json_mode: bool = True  # response_format = json_object
    params: dict[str, Any] = field(default_factory=dict)  # e.g. reasoning_effort, verbosity, seed
    timeout_s: float = 120.0
    max_retries: int = 6
    breaker: int = 3  # consecutive refused connections / unresolvable hosts that stop the run
    backoff_s: float = 1.0
    backoff_max_s: float = 60.0
    workers: int = 4
    max_cost_usd: float | None = None

    def request_body(self, messages: list[dict[str, str]]) -> dict[str, Any]:
        body: dict[str, Any] = {"model": self.model, "messages": messages}
        if self.temperature is not None:
            body["temperature"] = self.temperature
        if self.max_tokens is not None:
            body["max_tokens"] = self.max_tokens
        if self.json_mode:
            body["response_format"] = {"type": "json_object"}
        return body | self.params

    def identity(self) -> str:
        """What the cache key holds besides the body: replies of one judge never answer for another."""
        return self.judge_id or normalise_base_url(self.base_url)

    def describe(self) -> dict[str, Any]:
        """What a release records about its judge (no key, no server address)."""
        keep = ("model", "temperature", "max_tokens", "json_mode", "params")
        return {k: v for k, v in asdict(self).items() if k in keep}


@dataclass(frozen=True)
class JudgeRequest:
    """One instance to judge: its messages and the output kind of its prompt."""

    messages: list[dict[str, str]]
    output: str = "verdict"


@dataclass(frozen=True)
class Outcome:
    status: str  # ok | invalid | error | skipped (budget)
    verdict: Verdict | None
    raw: str = ""
    error: str = ""
    cached: bool = False


@dataclass
class RunStats:
    """Counters of one run, safe to update from worker threads."""

    requests: int = 0  # HTTP requests sent for chat completions (retries and re-asks included)
    cache_hits: int = 0
    retries: int = 0
    reasks: int = 0
    invalid: int = 0
    errors: int = 0
    skipped_budget: int = 0
    batches: int = 0
    batch_requests: int = 0
    batch_failed: int = 0  # batch items that failed and were re-sent synchronously
    usage_anomalies: int = 0  # token counts missing or implausible in a reply (charged by estimate)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def add(self, **counts: int) -> None:
        with self._lock:
            for k, v in counts.items():
                setattr(self, k, getattr(self, k) + v)

    def as_dict(self, meter: CostMeter) -> dict[str, Any]:
        out = {f.name: getattr(self, f.name) for f in fields(self) if not f.name.startswith("_")}
        out |= {
            "prompt_tokens": meter.prompt_tokens,
            "completion_tokens": meter.completion_tokens,
            "cost_usd": round(meter.usd, 6),
            "priced": meter.prices.is_priced(meter.model),
        }
        return out


def _retry_after(response: Any) -> float | None:
    """Seconds the server asks to wait (``retry-after-ms``, else ``Retry-After``: seconds or an HTTP date).

    None when it names none or nothing sensible (``nan``, ``-5``, ``soon``): the normal backoff applies then.
    """
    headers = getattr(response, "headers", None) or {}
    for name, unit in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        value = (headers.get(name) or "").strip()
        if not value:
            continue
        try:
            seconds = float(value) / unit
        except ValueError:
            seconds = _seconds_until(value) if unit == 1.0 else None
        if seconds is not None and math.isfinite(seconds) and seconds >= 0:
            return seconds
    return None


def _seconds_until(http_date: str) -> float | None:
    try:
        when = email.utils.parsedate_to_datetime(http_date)
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    return max(0.0, when.timestamp() - time.time())


@functools.cache
def _bounded_body_class(base: type) -> type:
    """A byte stream of ``base``'s kind (httpx or httpx2, whichever the openai client uses) with a size cap."""

    class BoundedBody(base):
        def __init__(self, stream: Any, limit: int):
            self._stream, self._limit = stream, limit

        def __iter__(self):
            seen = 0
            for chunk in self._stream:
                seen += len(chunk)
                if seen > self._limit:
                    raise BadReply(f"the server's reply is over {self._limit:,} bytes")
                yield chunk

        def close(self) -> None:
            self._stream.close()

    return BoundedBody


def _bound_body(response: Any) -> None:
    """HTTP response hook, run before the body is read: caps what a server can make us hold in memory."""
    limit = MAX_FILE_BYTES if response.request.url.path.endswith("/content") else MAX_BODY_BYTES
    base = next(c for c in type(response.stream).__mro__ if c.__name__ == "SyncByteStream")
    response.stream = _bounded_body_class(base)(response.stream, limit)


def _bad_reply_in(exc: BaseException) -> BadReply | None:
    """The ``BadReply`` that the openai client wrapped into a connection error, if that is what ``exc`` is."""
    cause = exc.__cause__
    return cause if isinstance(cause, BadReply) else None


def _reported(usage: Any, name: str) -> Any:
    """A usage field from the openai client's object or a batch output line's dict."""
    return usage.get(name) if isinstance(usage, dict) else getattr(usage, name, None)


def _content(resp: Any) -> str:
    """The reply text of a chat completion; ``BadReply`` for anything else (an HTML page, a list)."""
    choices = getattr(resp, "choices", None)
    if not isinstance(choices, list):
        shown = resp if isinstance(resp, str) else type(resp).__name__
        raise BadReply(f"the server answered {str(shown)[:80]!r}, not a chat completion")
    content = (choices[0].message.content or "") if choices else ""
    if not isinstance(content, str):
        raise BadReply(f"the server answered a {type(content).__name__} as the reply text")
    return content


def check_size(content: str) -> None:
    """``BadReply`` for a reply over ``MAX_REPLY_CHARS`` (counted first: it was paid for, but is not kept)."""
    if len(content) > MAX_REPLY_CHARS:
        raise BadReply(f"a reply of {len(content):,} characters, over the {MAX_REPLY_CHARS:,} limit")


class Judge:
    """Judges requests through the cache, then the server; ``run`` is the synchronous path."""

    def __init__(
        self,
        settings: JudgeSettings,
        cache: ReplyCache,
        prices: PriceTable | None = None,
        progress: bool = True,
    ):
        openai = extras.load("openai")

        self.settings = settings
        self.cache = cache
        self.stats = RunStats()
        self.meter = CostMeter(settings.model, prices or PriceTable.load(), settings.max_cost_usd)
        self.progress = progress
        self._openai = openai
        self.base_url = normalise_base_url(settings.base_url)
        self._identity = settings.identity()
        self._dead_in_a_row = 0
        self._bar: tqdm | None = None
        self.stop = threading.Event()  # set on Ctrl-C or a fatal error: every wait and worker ends
        self.client = openai.OpenAI(
            base_url=self.base_url,
            api_key=api_key_for(self.base_url, settings.api_key_env),
            max_retries=0,
            timeout=settings.timeout_s,
            http_client=openai.DefaultHttpxClient(event_hooks={"response": [_bound_body]}),
        )

    def connection_failed(self, exc: BaseException) -> bool:
        """Count a failed connection; raise ``JudgeError`` once ``breaker`` in a row found nobody there.

        Returns whether it was such a failure (a timeout or dropped connection is not, and resets nothing).
        """
        reason = unreachable(exc)
        if reason is None:
            return False
        with self.stats._lock:
            self._dead_in_a_row += 1
            tripped = self._dead_in_a_row >= max(1, self.settings.breaker)
        if tripped:
            raise JudgeError(
                f"{self.base_url}: {reason} ({self._dead_in_a_row} attempts in a row); is the judge server "
                "running? Check --base-url"
            ) from None
        return True

    def connected(self) -> None:
        with self.stats._lock:
            self._dead_in_a_row = 0

    def _note(self, text: str) -> None:
        """Say on the progress bar why nothing moves (a retry's wait can be a minute)."""
        if self._bar is not None:
            self._bar.set_postfix_str(text, refresh=True)

    # -- one request -----------------------------------------------------------------------------------

    def _send(self, body: dict[str, Any]) -> tuple[str, int, int]:
        """POST one chat completion with retries; returns (content, prompt tokens, completion tokens)."""
        s, openai = self.settings, self._openai
        kwargs = {k: v for k, v in body.items() if k in _OPENAI_ARGS}
        extra = {k: v for k, v in body.items() if k not in _OPENAI_ARGS}
        for attempt in range(s.max_retries + 1):
            self.meter.check()
            if self.stop.is_set():
                raise Interrupted("the run was stopped")
            self.stats.add(requests=1)
            try:
                resp = self.client.chat.completions.create(**kwargs, extra_body=extra or None)
                self.connected()
                break
            except openai.APIStatusError as exc:
                self.connected()
                if exc.status_code in FATAL_STATUS:
                    raise JudgeError(f"the server refused the credentials (HTTP {exc.status_code})") from None
                if exc.status_code not in RETRYABLE_STATUS or attempt == s.max_retries:
                    raise
                delay, why = _retry_after(exc.response), f"HTTP {exc.status_code}"
                if delay is not None and delay > MAX_RETRY_WAIT_S:
                    raise ServerRefusing(
                        f"HTTP {exc.status_code} asking to wait {delay:,.0f} s before a retry, over the "
                        f"{MAX_RETRY_WAIT_S:.0f} s cap: the server refuses for now; re-run later"
                    ) from None
            except json.JSONDecodeError as exc:
                raise BadReply(f"the server answered broken JSON ({exc})") from None
            except openai.APIConnectionError as exc:  # includes timeouts
                if (bad := _bad_reply_in(exc)) is not None:
                    raise bad from None
                dead = self.connection_failed(exc)
                if attempt == s.max_retries:
                    raise
                delay = min(s.backoff_s, 1.0) if dead else None  # the breaker decides soon enough
                why = type(exc).__name__
            if delay is None:
                delay = min(s.backoff_max_s, MAX_RETRY_WAIT_S, s.backoff_s * 2**attempt)
                delay *= 0.5 + random.random() / 2
            self._note(f"retrying ({why})")
            self.stats.add(retries=1)
            if self.stop.wait(delay):
                raise Interrupted("the run was stopped")
        content = _content(resp)
        pt, ct = self.count_tokens(getattr(resp, "usage", None), body["messages"], content)
        check_size(content)
        return content, pt, ct

    def count_tokens(
        self, usage: Any, messages: list[dict[str, str]], content: str, batch: bool = False
    ) -> tuple[int, int]:
        """Charge a reply's tokens; a count the server misreports is estimated instead (see ``pricing``)."""
        counts = []
        for name, estimate in (
            ("prompt_tokens", prompt_tokens(messages)),
            ("completion_tokens", len(content) // CHARS_PER_TOKEN),
        ):
            count = token_count(_reported(usage, name))
            if count is None:
                self.stats.add(usage_anomalies=1)
                count = estimate
            counts.append(count)
        self.meter.add(*counts, batch=batch)
        return counts[0], counts[1]

    def finish(
        self, req: JudgeRequest, content: str, tokens: tuple[int, int], via: str
    ) -> tuple[CachedReply, Outcome]:
        """Parse a first reply; re-ask once if it is unusable; cache and return the final outcome."""
        try:
            verdict = parse_reply(content, req.output)
            reply = CachedReply("ok", content, "", *tokens, via)
            return reply, Outcome("ok", verdict)
        except InvalidReply as exc:
            problem = str(exc)
        self.stats.add(reasks=1)
        body = self.settings.request_body(
            [
                *req.messages,
                {"role": "assistant", "content": content},
                {"role": "user", "content": REASK.format(problem=problem)},
            ]
        )
        second, pt, ct = self._send(body)
        tokens = (tokens[0] + pt, tokens[1] + ct)
        try:
            verdict = parse_reply(second, req.output)
            return CachedReply("ok", second, content, *tokens, via), Outcome("ok", verdict)
        except InvalidReply as exc:
            self.stats.add(invalid=1)
            return CachedReply("invalid", second, content, *tokens, via), Outcome(
                "invalid", None, raw=second, error=str(exc)
            )

    def from_cache(self, req: JudgeRequest, key: str) -> Outcome | None:
        hit = self.cache.get(key)
        if hit is None:
            return None
        self.stats.add(cache_hits=1)
        if hit.status == "invalid":
            return Outcome("invalid", None, raw=hit.content, error="invalid reply (cached)", cached=True)
        return Outcome("ok", parse_reply(hit.content, req.output), cached=True)

    def _judge_one(self, req: JudgeRequest, key: str) -> Outcome:
        content, pt, ct = self._send(self.settings.request_body(req.messages))
        reply, outcome = self.finish(req, content, (pt, ct), "sync")
        self.cache.put(key, self._identity, self.settings.model, reply)
        return outcome

    def key(self, req: JudgeRequest) -> str:
        return request_key(self.settings.request_body(req.messages), self._identity)

    # -- many requests ---------------------------------------------------------------------------------

    def run(self, requests: Iterable[JudgeRequest], desc: str = "judging") -> list[Outcome]:
        """Outcomes in request order; identical requests are sent once; a spending cap stops cleanly."""
        reqs = list(requests)
        keys = [self.key(r) for r in reqs]
        outcomes: dict[str, Outcome] = {}
        todo: dict[str, JudgeRequest] = {}
        for req, key in zip(reqs, keys, strict=True):
            if key in outcomes or key in todo:
                continue
            hit = self.from_cache(req, key)
            if hit is not None:
                outcomes[key] = hit
            else:
                todo[key] = req
        outcomes |= self.run_uncached(todo, desc)
        return [outcomes[k] for k in keys]

    def run_uncached(self, todo: dict[str, JudgeRequest], desc: str) -> dict[str, Outcome]:
        """Send requests known to be missing from the cache (by key), ``workers`` at a time."""
        out: dict[str, Outcome] = {}
        if not todo:
            return out
        items = iter(todo.items())
        stop = False
        bar = self._bar = tqdm(total=len(todo), desc=desc, unit=" req", disable=not self.progress)
        pool = ThreadPoolExecutor(max_workers=max(1, self.settings.workers))
        running: dict[Any, str] = {}

        def submit_next() -> None:
            for key, req in items:
                running[pool.submit(self._judge_one, req, key)] = key
                return

        try:
            for _ in range(max(1, self.settings.workers)):
                submit_next()
            while running:
                done, _ = wait(running, return_when=FIRST_COMPLETED)
                for fut in done:
                    key = running.pop(fut)
                    try:
                        out[key] = fut.result()
                    except BudgetExhausted:
                        stop = True
                        out[key] = Outcome("skipped", None, error="spending cap reached")
                    except RatioError:  # the judge or the cache cannot go on: no retry fixes it
                        raise
                    except Exception as exc:  # retries exhausted or a request the server rejects
                        self.stats.add(errors=1)
                        out[key] = Outcome("error", None, error=f"{type(exc).__name__}: {exc}"[:500])
                    bar.update(1)
                    if not stop:
                        submit_next()
        except (
            BaseException
        ):  # Ctrl-C or a fatal error: waiting workers wake and give up, queued ones never run
            self.stop.set()
            pool.shutdown(wait=False, cancel_futures=True)
            raise
        pool.shutdown()
        bar.close()
        self._bar = None
        for key, _ in items:  # left unsent after the cap was reached
            out[key] = Outcome("skipped", None, error="spending cap reached")
        skipped = sum(1 for o in out.values() if o.status == "skipped")
        self.stats.add(skipped_budget=skipped)
        return out

    def summary(self) -> dict[str, Any]:
        return self.stats.as_dict(self.meter)
