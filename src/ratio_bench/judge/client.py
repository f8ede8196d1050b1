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
"""

from __future__ import annotations

import email.utils
import random
import threading
import time
from collections.abc import Iterable
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from dataclasses import asdict, dataclass, field, fields
from typing import Any

from tqdm import tqdm

from ratio_bench.errors import RatioError
from ratio_bench.judge.cache import CachedReply, ReplyCache, request_key
from ratio_bench.judge.endpoint import api_key_for, normalise_base_url, unreachable
from ratio_bench.judge.parse import InvalidReply, Verdict, parse_reply
from ratio_bench.judge.pricing import BudgetExhausted, CostMeter, PriceTable

RETRYABLE_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504})
FATAL_STATUS = frozenset({401, 403})
REASK = (
    "Your previous reply could not be used: {problem}. Reply again with only the JSON object the instructions "
    "ask for, with no other text."
)
_OPENAI_ARGS = frozenset({"model", "messages", "temperature", "max_tokens", "response_format", "seed"})


class JudgeError(RatioError, RuntimeError):
    """A failure that no retry can fix (bad credentials, unknown model): the run stops with this message."""


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
    headers = getattr(response, "headers", None) or {}
    ms = headers.get("retry-after-ms")
    if ms:
        try:
            return float(ms) / 1000
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return float(value)
    except ValueError:
        parsed = email.utils.parsedate_to_datetime(value)
        return max(0.0, parsed.timestamp() - time.time()) if parsed else None


class Judge:
    """Judges requests through the cache, then the server; ``run`` is the synchronous path."""

    def __init__(
        self,
        settings: JudgeSettings,
        cache: ReplyCache,
        prices: PriceTable | None = None,
        progress: bool = True,
    ):
        import openai

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
        self.client = openai.OpenAI(
            base_url=self.base_url,
            api_key=api_key_for(self.base_url, settings.api_key_env),
            max_retries=0,
            timeout=settings.timeout_s,
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
            except openai.APIConnectionError as exc:  # includes timeouts
                dead = self.connection_failed(exc)
                if attempt == s.max_retries:
                    raise
                delay = min(s.backoff_s, 1.0) if dead else None  # the breaker decides soon enough
                why = type(exc).__name__
            if delay is None:
                delay = min(s.backoff_max_s, s.backoff_s * 2**attempt) * (0.5 + random.random() / 2)
            self._note(f"retrying ({why})")
            self.stats.add(retries=1)
            time.sleep(delay)
        usage = resp.usage
        pt, ct = (usage.prompt_tokens or 0, usage.completion_tokens or 0) if usage else (0, 0)
        self.meter.add(pt, ct)
        content = (resp.choices[0].message.content or "") if resp.choices else ""
        return content, pt, ct

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
        with ThreadPoolExecutor(max_workers=max(1, self.settings.workers)) as pool:
            running: dict[Any, str] = {}

            def submit_next() -> None:
                for key, req in items:
                    running[pool.submit(self._judge_one, req, key)] = key
                    return

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
                    except JudgeError:
                        raise
                    except Exception as exc:  # retries exhausted or a request the server rejects
                        self.stats.add(errors=1)
                        out[key] = Outcome("error", None, error=f"{type(exc).__name__}: {exc}"[:500])
                    bar.update(1)
                    if not stop:
                        submit_next()
        bar.close()
        self._bar = None
        for key, _ in items:  # left unsent after the cap was reached
            out[key] = Outcome("skipped", None, error="spending cap reached")
        skipped = sum(1 for o in out.values() if o.status == "skipped")
        self.stats.add(skipped_budget=skipped)
        return out

    def summary(self) -> dict[str, Any]:
        return self.stats.as_dict(self.meter)
