"""``python -m ratio_bench.devhub --port N [--root DIR] [--user TOKEN=NAME]``: serve until Ctrl-C or SIGTERM."""

from __future__ import annotations

import argparse
import contextlib
import signal
import sys
import threading
from pathlib import Path

from ratio_bench.devhub.server import HubServer


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m ratio_bench.devhub", description=__doc__)
    p.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (default: any free port)")
    p.add_argument("--root", type=Path, help="keep the repos in this folder (default: in memory)")
    p.add_argument(
        "--user", action="append", default=[], metavar="TOKEN=NAME", help="whoami answers NAME for TOKEN"
    )
    args = p.parse_args(argv)
    users = [u.partition("=") for u in args.user]
    if any(not token or not name for token, _, name in users):
        p.error("--user: give TOKEN=NAME")
    try:
        server = HubServer(args.port, args.root)
    except OSError as e:
        print(f"devhub: error: --port {args.port}: cannot listen there ({e.strerror})", file=sys.stderr)
        return 1
    for token, _, name in users:
        server.state.add_user(token, name)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    with server:
        where = f", repos kept in {args.root}" if args.root else ", in memory"
        print(
            f"devhub: serving on {server.url} (HF_ENDPOINT={server.url} HF_HUB_DISABLE_XET=1{where})",
            flush=True,
        )
        with contextlib.suppress(KeyboardInterrupt):
            stop.wait()
    return 0


if __name__ == "__main__":
    sys.exit(main())
