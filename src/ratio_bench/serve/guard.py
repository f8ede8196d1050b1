"""The served submission form's HTTP protections: its own address, its own origin, its own page, no frames.

* **Host** (DNS rebinding): a server that takes submissions answers only requests whose ``Host`` is one of its
  own addresses (:class:`SiteAddress`: the bound address and port, ``localhost`` too on loopback, and each
  ``--public-host``); a page from ``evil.example`` whose name resolves to 127.0.0.1 gets 421.
* **Origin**: a submission's ``Origin`` (or, when a browser sends none, its ``Referer``) must be this site;
  a POST from any other page, or one naming no page at all, is refused (403).
* **CSRF**: the form carries a token bound to the visitor's session cookie (HMAC of a random session id under
  a key made when the server starts; the cookie is ``HttpOnly; SameSite=Strict``), checked on each POST, so
  even a same-site page that never loaded the form cannot post it.
* **Framing**: every response says ``Content-Security-Policy: frame-ancestors 'none'`` (added to a page's own
  policy) and ``X-Frame-Options: DENY``, so no page can frame the board and click through its form.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import re
import secrets
from collections.abc import Sequence
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from starlette.datastructures import Headers, MutableHeaders
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ratio_bench.core.errors import UsageError

SESSION_COOKIE = "ratio_session"
SESSION = re.compile(r"^[0-9a-f]{32}$")
NO_FRAMES = "frame-ancestors 'none'"
LOOPBACK_NAMES = ("localhost", "127.0.0.1", "[::1]")


def _host_port(host: str, port: int) -> str:
    """``host:port`` as a ``Host`` header writes it (IPv6 in brackets)."""
    host = host.lower()
    if ":" in host and not host.startswith("["):
        host = f"[{host}]"
    return f"{host}:{port}"


@dataclass(frozen=True)
class SiteAddress:
    """The ``Host`` values (``name:port``, or ``name`` for a default port) this server answers to."""

    hosts: frozenset[str]

    @classmethod
    def for_bind(cls, host: str, port: int, public: Sequence[str] = ()) -> SiteAddress:
        """The addresses of a server bound to ``host:port``, plus ``public`` (the names clients use through a
        proxy, ``--public-host``). A wildcard bind (0.0.0.0, ::) has no name of its own: it needs ``public``."""
        names = {p.strip().lower() for p in public if p.strip()}
        bad = [p for p in names if not re.fullmatch(r"(\[[0-9a-f:.]+\]|[a-z0-9.-]+)(:\d{1,5})?", p)]
        if bad:
            raise UsageError(f"--public-host {bad[0]}: give HOST or HOST:PORT as browsers reach this server")
        try:
            address = ipaddress.ip_address(host.strip("[]"))
        except ValueError:
            address = None
        if host.lower() == "localhost" or (address is not None and address.is_loopback):
            names |= {_host_port(n.strip("[]"), port) for n in LOOPBACK_NAMES}
        elif address is not None and address.is_unspecified:
            if not public:
                raise UsageError(
                    f"--host {host} --allow-submissions: the form answers only its own address; name it with "
                    "--public-host HOST[:PORT] (what browsers type to reach this server)"
                )
        else:
            names.add(_host_port(host, port))
        return cls(frozenset(names))

    @property
    def origins(self) -> frozenset[str]:
        return frozenset(f"{scheme}://{h}" for h in self.hosts for scheme in ("http", "https"))

    def knows_host(self, value: str) -> bool:
        return value.lower() in self.hosts


class HostCheck:
    """ASGI middleware: a request whose ``Host`` is not one of ``site``'s answers 421, before any route."""

    def __init__(self, app: ASGIApp, site: SiteAddress):
        self.app = app
        self.site = site

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and not self.site.knows_host(Headers(scope=scope).get("host", "")):
            message = "Host: not this server's address (requests must name it as browsers reach it)"
            return await JSONResponse({"error": message}, status_code=421)(scope, receive, send)
        await self.app(scope, receive, send)


class NoFrames:
    """ASGI middleware: every response forbids framing (``frame-ancestors 'none'`` joins a page's own
    Content-Security-Policy, or is the whole policy of a response without one; and ``X-Frame-Options``)."""

    def __init__(self, app: ASGIApp):
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                policy = headers.get("content-security-policy")
                if policy is None:
                    headers["Content-Security-Policy"] = NO_FRAMES
                elif "frame-ancestors" not in policy:
                    headers["Content-Security-Policy"] = f"{policy.rstrip('; ')}; {NO_FRAMES}"
                headers["X-Frame-Options"] = "DENY"
            await send(message)

        await self.app(scope, receive, send_with_headers)


def same_origin(headers: Headers, site: SiteAddress) -> bool:
    """Whether a POST comes from one of ``site``'s pages: its ``Origin``, else its ``Referer``'s origin."""
    origin = headers.get("origin")
    if origin is None:
        referer = urlsplit(headers.get("referer", ""))
        origin = f"{referer.scheme}://{referer.netloc}" if referer.scheme and referer.netloc else None
    return origin is not None and origin.lower() in site.origins


@dataclass(frozen=True)
class CsrfTokens:
    """Form tokens bound to a session cookie: ``HMAC(key, session)``, the key random per server start."""

    key: bytes = field(default_factory=lambda: secrets.token_bytes(32))

    @staticmethod
    def session(cookie: str | None) -> tuple[str, bool]:
        """(session id, whether it is new): the visitor's cookie when well-formed, else a fresh one."""
        if cookie and SESSION.match(cookie):
            return cookie, False
        return secrets.token_hex(16), True

    def token(self, session: str) -> str:
        return hmac.new(self.key, f"submit-form:{session}".encode(), hashlib.sha256).hexdigest()

    def valid(self, cookie: str | None, token: str | None) -> bool:
        if not cookie or not token or not SESSION.match(cookie):
            return False
        return hmac.compare_digest(self.token(cookie), token)
