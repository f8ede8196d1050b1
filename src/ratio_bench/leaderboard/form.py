"""The served submission form's rules that are about people, not HTTP: who submits and how often.

The submitter is the user signed in with a Hub token they paste into the form: the token is checked with the Hub's
``whoami`` at the configured endpoint, the request is written with that token (:func:`hub.as_user`), so the
queue's commit author and the request's ``submitter`` are that user; there is no name to type and the server's own
token is never used for a submission. The token is used for that one submission and never stored, logged or
echoed. Rate limits count attempts (a refused one too) in sliding windows kept in memory: per client address
(:data:`PER_CLIENT`) before anything reaches the Hub, per submitter (:data:`PER_SUBMITTER`, :data:`PER_DAY`)
once ``whoami`` has named them. The HTTP side (Host, Origin, CSRF, framing) is ``ratio_bench.serve.guard``.
"""

from __future__ import annotations

import re
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

from ratio_bench.core import extras
from ratio_bench.leaderboard import hub
from ratio_bench.leaderboard.hub import LeaderboardError

hf_errors = extras.lazy("huggingface_hub.errors")

TOKEN = re.compile(r"^[\x21-\x7e]{8,256}$")  # printable ASCII, no spaces: what a Hub token can be


@dataclass(frozen=True)
class Limit:
    """At most ``count`` attempts per ``window_s`` seconds, stated as the refusal says it."""

    count: int
    window_s: float
    what: str


PER_CLIENT = Limit(5, 60.0, "submissions a minute from one address")
PER_SUBMITTER = Limit(1, 60.0, "submission a minute per Hub user")
PER_DAY = Limit(20, 86400.0, "submissions a day per Hub user")


class RateLimited(LeaderboardError):
    """Too many attempts; ``retry_after_s`` says when the oldest one leaves the window."""

    def __init__(self, message: str, retry_after_s: float):
        super().__init__(message)
        self.retry_after_s = retry_after_s


@dataclass
class SlidingWindow:
    """Attempt times per key within ``limit.window_s``; thread-safe (the server's pool calls it concurrently).
    Keys whose attempts all left the window are dropped, so memory follows the recent clients only."""

    limit: Limit
    clock: Callable[[], float] = time.monotonic
    _seen: dict[str, deque[float]] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def hit(self, key: str) -> None:
        """Count an attempt by ``key``, or raise :class:`RateLimited` (the refused attempt is not counted)."""
        now = self.clock()
        with self._lock:
            for k in [k for k, times in self._seen.items() if times[-1] <= now - self.limit.window_s]:
                del self._seen[k]
            times = self._seen.setdefault(key, deque())
            while times and times[0] <= now - self.limit.window_s:
                times.popleft()
            if len(times) >= self.limit.count:
                wait = times[0] + self.limit.window_s - now
                raise RateLimited(
                    f"too many submissions: at most {self.limit.count} {self.limit.what}; "
                    f"try again in {max(1, round(wait))} s",
                    wait,
                )
            times.append(now)


@dataclass
class FormLimits:
    """The form's three windows (tests pass their own limits)."""

    per_client: SlidingWindow = field(default_factory=lambda: SlidingWindow(PER_CLIENT))
    per_submitter: SlidingWindow = field(default_factory=lambda: SlidingWindow(PER_SUBMITTER))
    per_day: SlidingWindow = field(default_factory=lambda: SlidingWindow(PER_DAY))


def signed_in_user(token: str) -> str:
    """The Hub user name ``token`` belongs to, checked with ``whoami`` at the configured endpoint."""
    if not TOKEN.match(token):
        raise LeaderboardError(
            "Hub token: paste an access token of your Hub account (Settings, Access Tokens) to submit as "
            "yourself; the form has no name to type"
        )

    endpoint = hub.api().endpoint
    try:
        with hub.as_user(token):
            me = hub.api().whoami()
    except hf_errors.HfHubHTTPError:
        raise LeaderboardError(
            f"Hub token: not accepted by {endpoint}; paste a valid token of your account"
        ) from None
    except (hf_errors.HTTPError, OSError) as e:
        raise LeaderboardError(
            f"Hub token: cannot reach {endpoint} to check it ({type(e).__name__})"
        ) from None
    name = me.get("name") if isinstance(me, dict) else None
    if not isinstance(name, str) or me.get("type", "user") != "user":
        raise LeaderboardError(
            f"Hub token: {endpoint} does not name a user for it; use a token of your own account"
        )
    return name
