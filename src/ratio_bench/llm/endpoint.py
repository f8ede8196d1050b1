"""Who the judge is talking to: the normalised base URL, which API key it may receive, and dead endpoints.

The base URL is the judge's identity in the reply cache (replies from one server never answer for another),
so it is normalised: scheme, lowercased host, port (default ports dropped), path without a trailing slash,
and never any user:password part. The OpenAI key (``OPENAI_API_KEY``) goes only to the OpenAI API: any other
server gets the key of the variable named by ``--api-key-env``, or none, so a key is never handed to a server
the user did not mean it for. A connection that is refused or a host name that does not resolve is not a
transient fault like a 429: retrying it for minutes only hides the mistake, so it trips a breaker instead.
"""

from __future__ import annotations

import ipaddress
import os
import socket
import sys
from urllib.parse import urlsplit

from ratio_bench.core.errors import UsageError

OPENAI_URL = "https://api.openai.com/v1"
OPENAI_HOST = "api.openai.com"
NO_KEY = "no-key"  # what a server without a key of ours sees as bearer token (the openai client needs one)
_DEFAULT_PORTS = {"http": 80, "https": 443}
_warned: set[str] = set()


def normalise_base_url(url: str | None) -> str:
    """``scheme://host[:port]/path`` of a base URL; ``UsageError`` naming ``--base-url`` when it is not one."""
    url = (url or OPENAI_URL).strip()
    parts = urlsplit(url)
    if parts.scheme not in _DEFAULT_PORTS or not parts.hostname:
        raise UsageError(
            f"--base-url {url!r} is not an http(s) URL; give scheme and host, e.g. http://127.0.0.1:8080/v1"
        )
    try:
        port = parts.port
    except ValueError:
        raise UsageError(f"--base-url {url!r} has an invalid port") from None
    host = parts.hostname.lower()
    netloc = f"[{host}]" if ":" in host else host
    if port is not None and port != _DEFAULT_PORTS[parts.scheme]:
        netloc += f":{port}"
    return f"{parts.scheme}://{netloc}{parts.path.rstrip('/')}"


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def api_key_for(base_url: str, api_key_env: str | None) -> str:
    """The key this server may receive: ``$api_key_env`` if named, else ``$OPENAI_API_KEY`` for OpenAI only.

    Warns once per server (on stderr, without the key) before a key goes over plain http to a host that is
    not this machine.
    """
    parts = urlsplit(base_url)
    if api_key_env:
        key = os.environ.get(api_key_env) or ""
    else:
        key = os.environ.get("OPENAI_API_KEY", "") if parts.hostname == OPENAI_HOST else ""
    if key and parts.scheme == "http" and not is_loopback(parts.hostname or "") and base_url not in _warned:
        _warned.add(base_url)
        print(
            f"warning: sending the API key of ${api_key_env or 'OPENAI_API_KEY'} over plain http to {base_url}",
            file=sys.stderr,
        )
    return key or NO_KEY


def unreachable(exc: BaseException) -> str | None:
    """'connection refused' / 'name resolution failed' when ``exc`` says nobody answers there, else None."""
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if isinstance(exc, ConnectionRefusedError):
            return "connection refused"
        if isinstance(exc, socket.gaierror):
            return "name resolution failed"
        exc = exc.__cause__ or exc.__context__
    return None
