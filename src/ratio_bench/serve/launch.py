"""What the commands that serve an index share (``ratio serve``, ``ratio mcp``, ``ratio search``): their query
options, the searcher they build from them, and a socket bound before models load. A library module, so that no
command module imports another's CLI."""

from __future__ import annotations

import argparse
import socket

from ratio_bench.core import extras
from ratio_bench.core.errors import RatioError
from ratio_bench.serve.index import load_index
from ratio_bench.serve.options import add_query_options  # noqa: F401 - the serving commands' options
from ratio_bench.serve.search import Searcher


def searcher_of(args: argparse.Namespace):
    """The index of ``--index`` loaded into a searcher (``--exact``, ``--trust-remote-code``)."""

    return Searcher(load_index(args.index), exact=args.exact, trust_remote_code=args.trust_remote_code)


def listen(host: str, port: int):
    """A bound socket, before minutes of loading models: a taken port is a one-line error, not a log."""

    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as e:
        sock.close()
        raise RatioError(
            f"--host {host} --port {port}: cannot listen there ({e.strerror}); choose another --port"
        ) from e
    return sock


def server_config(app, log_level: str = "info", trust_proxy: list[str] | None = None):
    """uvicorn's configuration for ``app``: a client is the socket's peer, never a header, unless ``trust_proxy``
    names the proxies whose ``X-Forwarded-For`` counts (uvicorn's default trusts it from any loopback peer, so
    every client of a pass-through proxy on the host could name itself anew on each request and leave the
    form's per-client limit behind)."""
    uvicorn = extras.load("uvicorn")

    if trust_proxy:
        return uvicorn.Config(
            app, log_level=log_level, proxy_headers=True, forwarded_allow_ips=",".join(trust_proxy)
        )
    return uvicorn.Config(app, log_level=log_level, proxy_headers=False, forwarded_allow_ips="")
