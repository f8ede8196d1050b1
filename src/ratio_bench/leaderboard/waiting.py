"""Where a submission stands in the queue and how long it may wait (:func:`wait_for`): the requests ahead in the
Hub's order (:meth:`Queue.claimable`) and the running ones, times the median length of the recent jobs (their
``started_at``/``finished_at``, written by workers on the Hub's clock), shared among the workers seen lately. An
estimate, stated as one. Read by submission (the wait it prints) and the board (the queue page).
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from datetime import datetime

from ratio_bench.leaderboard.requests import Queue, parse_time

RECENT_JOBS = 20  # the jobs whose lengths make the estimate


@dataclass(frozen=True)
class Wait:
    """Where a request stands: requests ahead of it (pending, in the Hub's order), running ones, and the typical
    job length (None: no finished job to time yet) shared among ``workers``."""

    ahead: int
    running: int
    typical_s: float | None
    workers: int
    jobs_timed: int

    @property
    def estimate_s(self) -> float | None:
        if self.typical_s is None:
            return None
        return self.typical_s * (self.ahead + self.running / 2 + 1) / self.workers

    def text(self) -> str:
        where = f"position {self.ahead + 1} ({self.ahead} pending ahead, {self.running} running)"
        if self.estimate_s is None:
            return f"{where}; no estimate of the wait yet (no finished job to time)"
        return (
            f"{where}; about {duration(self.estimate_s)} until its result (median job "
            f"{duration(self.typical_s)} over the last {self.jobs_timed}, {self.workers} worker(s))"
        )


def duration(seconds: float) -> str:
    seconds = max(0, round(seconds))
    if seconds < 90:
        return f"{seconds} s"
    if seconds < 90 * 60:
        return f"{round(seconds / 60)} min"
    return f"{seconds / 3600:.1f} h"


def job_lengths(queue: Queue) -> tuple[list[float], set[str]]:
    """The lengths (s) of the most recent ended jobs, newest first, and the workers that ran them."""
    ended = [
        r for r in queue.requests if r.status in ("FINISHED", "FAILED") and r.started_at and r.finished_at
    ]
    ended.sort(key=lambda r: parse_time(r.finished_at), reverse=True)
    lengths, workers = [], set()
    for r in ended[:RECENT_JOBS]:
        seconds = (parse_time(r.finished_at) - parse_time(r.started_at)).total_seconds()
        if seconds >= 0:
            lengths.append(seconds)
            workers.add(r.worker or "")
    return lengths, workers


def wait_for(queue: Queue, now: datetime, path: str | None = None) -> Wait:
    """The wait of the request at ``path`` (None: of a request admitted now, behind every pending one)."""
    pending = [r for r in queue.claimable(now) if r.status == "PENDING"]
    order = [r.path for r in pending]
    ahead = order.index(path) if path in order else len(order)
    running = [r for r in queue.requests if r.status == "RUNNING" and not r.lease_expired(now)]
    lengths, workers = job_lengths(queue)
    workers |= {r.worker or "" for r in running}
    typical = statistics.median(lengths) if lengths else None
    return Wait(ahead, len(running), typical, max(1, len(workers)), len(lengths))
