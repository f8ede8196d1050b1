"""Whose fault a failure was: a Hub timeout or 5xx, a lost connection or a full disk is the infrastructure's (the
worker retries it with backoff and, if it persists, puts the request back in the queue without spending one of its
attempts); anything else is the model's (the request ends ``FAILED`` with a one-line reason the submitter can act
on). At the bottom of ``leaderboard/``: the job (which writes the class) and the worker (which acts on it) read it.
"""

from __future__ import annotations

import errno
import time
from collections.abc import Callable
from typing import TypeVar

from ratio_bench.core import extras

httpx = extras.lazy("httpx")


INFRASTRUCTURE, MODEL = "infrastructure", "model"
INFRA_ERRNOS = {errno.ENOSPC, errno.EDQUOT, errno.EIO, errno.EROFS, errno.EAGAIN}
RETRY_STATUSES = {408, 429, 500, 502, 503, 504}
T = TypeVar("T")


def classify(exc: BaseException) -> str:
    """``infrastructure`` for a Hub timeout or 5xx, a connection error or a full/failing disk anywhere in the
    exception's chain (a message re-raised as one line keeps its cause as ``__context__``), else ``model``."""

    seen = 0
    while exc is not None and seen < 10:
        if isinstance(exc, OSError) and exc.errno in INFRA_ERRNOS:
            return INFRASTRUCTURE
        if isinstance(exc, ConnectionError | TimeoutError | httpx.TransportError):
            return INFRASTRUCTURE
        response = getattr(exc, "response", None)
        if getattr(response, "status_code", None) in RETRY_STATUSES:
            return INFRASTRUCTURE
        exc, seen = exc.__cause__ or exc.__context__, seen + 1
    return MODEL


def with_backoff(
    what: str, action: Callable[[], T], tries: int, base_s: float, log: Callable[[str], None]
) -> T:
    """``action()``, retried after ``base_s``, 2x, 4x ... seconds while it fails for the infrastructure; a model
    error, or the last infrastructure error, is raised."""
    for attempt in range(1, tries + 1):
        try:
            return action()
        except Exception as e:
            if classify(e) != INFRASTRUCTURE or attempt == tries:
                raise
            wait = base_s * 2 ** (attempt - 1)
            log(f"{what}: infrastructure error ({str(e)[:200]}); retry {attempt}/{tries - 1} in {wait:g} s")
            time.sleep(wait)
    raise AssertionError("unreachable")
