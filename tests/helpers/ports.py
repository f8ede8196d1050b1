"""Ports for tests that must not meet another program: a server binds port 0 (any free port); a URL meant to
find nothing listening takes a port just released by the kernel, never a fixed one (``:9``, ``:8000``) that a
program on a shared machine may hold."""

from __future__ import annotations

import socket


def unused_url(path: str = "") -> str:
    """``http://127.0.0.1:<port><path>`` where nothing listens: a port the kernel handed out and took back."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}{path}"
