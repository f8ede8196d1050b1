"""Processes a local mining run forks die with it, even when it is killed with SIGKILL.

datatrove's local executor starts a ``multiprocess.Manager()`` (for its queue of free worker slots) by
forking the main process, and that server process has no watch on its parent: when ``ratio mine`` is killed
with SIGKILL it lives on, an orphan, forever. (The pool's workers come from a forkserver, which exits when its
parent is gone, and the workers with it.) The executor offers no hook to start its manager differently, so
while :func:`die_with_parent` is active every process forked from this one asks the kernel to send it SIGTERM
when its parent dies (Linux ``prctl(PR_SET_PDEATHSIG)``), and exits at once if the parent died before that
request took effect. Elsewhere (macOS) this is a no-op and the orphan remains possible. A child started with
``subprocess`` is not affected (fork hooks do not run for it).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import sys
from collections.abc import Iterator

_PR_SET_PDEATHSIG = 1
_active = False
_forking_pid = 0


def _before_fork() -> None:
    global _forking_pid
    _forking_pid = os.getpid()


def _in_child() -> None:
    if not _active:
        return
    ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    if os.getppid() != _forking_pid:  # the parent died between fork() and prctl()
        os._exit(1)


if sys.platform.startswith("linux"):
    os.register_at_fork(before=_before_fork, after_in_child=_in_child)


@contextlib.contextmanager
def die_with_parent() -> Iterator[None]:
    """While active, processes forked from this one are killed when it dies."""
    global _active
    previous, _active = _active, True
    try:
        yield
    finally:
        _active = previous
