"""A served board rendered once per change of its inputs, not once per request.

Rendering a board of a thousand entries takes seconds (every entry parsed and checked, every interval
bootstrapped), while its inputs (a results folder's files, a results repository's and a queue's head commits)
change rarely. :class:`PageCache` keeps the rendered page with the key of the inputs it was rendered from, looks
the key up at most every ``check_s`` seconds, and renders again only when the key changed (or, with ``max_age_s``,
when the page grew that old, so that relative times on it move). One request renders at a time; the others are
answered with the page they would have got a moment earlier, or wait for the first page when there is none.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Hashable
from pathlib import Path


class PageCache:
    """The last page and the key of its inputs; ``page(key, render)`` answers from it while the key holds."""

    def __init__(self, check_s: float = 5.0, max_age_s: float | None = None):
        self.check_s, self.max_age_s = check_s, max_age_s
        self._lock = threading.Lock()
        self._page: str | None = None
        self._key: Hashable = None
        self._checked = self._built = 0.0
        self.renders = 0  # how many times a page was rendered (the benchmark and tests read it)

    def invalidate(self) -> None:
        """Render again on the next request (an input changed here, e.g. a submission was just queued)."""
        self._page = None

    def _fresh(self) -> bool:
        return self._page is not None and time.monotonic() - self._checked < self.check_s

    def page(self, key: Callable[[], Hashable], render: Callable[[], str]) -> str:
        """The page for the inputs ``key()`` names now, rendered by ``render()`` only when they changed."""
        if self._fresh():
            return self._page  # type: ignore[return-value]
        stale = self._page
        if stale is None:
            self._lock.acquire()  # nothing to answer with yet: wait for the one render
        elif not self._lock.acquire(blocking=False):
            return stale  # another request is re-rendering: this one gets the page of a moment ago
        try:
            if self._fresh():
                return self._page  # type: ignore[return-value]
            now = key()
            aged = self.max_age_s is not None and time.monotonic() - self._built > self.max_age_s
            if self._page is None or now != self._key or aged:
                self._page, self._key = render(), now
                self._built = time.monotonic()
                self.renders += 1
            self._checked = time.monotonic()
            return self._page
        finally:
            self._lock.release()


def folder_key(folder: Path) -> tuple[tuple[str, int, int], ...]:
    """A results folder's inputs: every JSON file's path, size and modification time (a stat per file, no read)."""
    out = []
    for path in sorted(folder.rglob("*.json")) if folder.is_dir() else [folder]:
        try:
            st = path.stat()
        except OSError:
            continue
        out.append((str(path), st.st_size, st.st_mtime_ns))
    return tuple(out)
