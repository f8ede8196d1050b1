"""The leaderboard at scale: a loopback results repository of N entries (default 1,200), read and served.

Builds, on the dev Hub (``ratio_bench.devhub``, in this process), a results repository of N entries synthesised
from one committed entry with varied model names: a fraction signed (a worker's folder with its signed
``provenance.json`` and the FINISHED request in a requests repository), the rest self-reported files. Then measures,
side by side, the old way and the new one:

- ``--from`` read, cold (an empty Hub cache each time): one download per file (``bulk=False``, main's reader)
  against one parallel ``snapshot_download`` of the JSON files; without and with the requests repository;
- the served board (``ratio serve --leaderboard-from``, uvicorn on a loopback port): the first request, a cached
  request, and 4 concurrent requests; "before" renders the page on every request (main's service whenever its
  page had expired, every request at ``--refresh 0``), "after" is the page cached per change of the heads.

Usage: python benchmarks/board_scale.py [--entries 120] [--signed 0.5] [--entry FILE] [--json OUT] [--full]
(``make bench-board``; about two minutes on a 2-core CPU at the default size; ``--entries 1200 --full`` is the
issue's figure and takes many minutes, since main's every request re-reads and re-renders the board).
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from rich.table import Table

from ratio_bench.core.io import report_console

DEFAULT_ENTRY = Path("eval/results/dev-0.2/snapshots/bm25/test_2025_10.json")
TOKEN, KEEPER = "hf_bench_keeper_token", "keeper"
RESULTS, REQUESTS = "bench/results", "bench/requests"
SHA = "b" * 40


def synthesise(entry: dict, n: int, signed: float, key) -> tuple[dict[str, bytes], dict[str, bytes]]:
    """(results repo files, requests repo files): ``n`` entries, every ``1/signed``-th one in a signed folder."""
    from ratio_bench.leaderboard.provenance import PROVENANCE, SCHEMA, TRUSTED_SCHEMA, TRUSTED_WORKERS, sha256
    from ratio_bench.leaderboard.requests import Request, now_utc, stamp

    results = {
        TRUSTED_WORKERS: json.dumps(
            {"schema": TRUSTED_SCHEMA, "workers": [key.listing("bench-worker", KEEPER)]}
        ).encode()
    }
    requests: dict[str, bytes] = {}
    every = round(1 / signed) if signed > 0 else 0
    for i in range(n):
        model = f"org{i % 40:02d}/model-{i:05d}"
        doc = {**entry, "model": f"{model}:generic"}
        doc.pop("submitter", None)
        data = json.dumps(doc).encode()
        if not every or i % every:
            results[f"self/{model.replace('/', '_')}.json"] = data
            continue
        folder, split = f"{model}/{SHA}/generic", entry["split"]
        request = Request(model, "main", SHA, "generic", "", "", "float32", "alice", stamp(now_utc()))
        request = request.ended("FINISHED", now_utc(), result=folder)
        requests[request.path] = request.to_json()
        provenance = {
            "schema": SCHEMA, "worker": "bench-worker", "model": model, "revision": "main", "sha": SHA,
            "setup": "generic", "request": {"repo": REQUESTS, "path": request.path, "attempt": 1},
            "submitter": "alice", "dataset": "bench", "scored_at": stamp(now_utc()),
            "signed_at": stamp(now_utc()), "seconds": {split: 1.0}, "code_version": "bench",
            "entries": {f"{split}.json": sha256(data)}, "files": {},
        }  # fmt: skip
        results[f"{folder}/{split}.json"] = data
        results[f"{folder}/{PROVENANCE}"] = json.dumps(key.sign(provenance)).encode()
    return results, requests


def fresh_cache(root: Path) -> None:
    """An empty Hub cache for the next read (a cold read downloads everything), and no entry known as checked."""
    import huggingface_hub.constants

    from ratio_bench.leaderboard import board

    board._checked.clear()
    folder = Path(tempfile.mkdtemp(prefix="hf-cache-", dir=root))
    huggingface_hub.constants.HF_HUB_CACHE = str(folder)


def timed(fn) -> tuple[float, object]:
    start = time.perf_counter()
    out = fn()
    return time.perf_counter() - start, out


def read_times(root: Path, requests: str | None) -> dict[str, float]:
    """Cold ``--from`` reads: one download per file, then one bulk download."""
    from ratio_bench.leaderboard.board import load_board_from_repo
    from ratio_bench.leaderboard.hub import RepoRef

    ref = RepoRef(RESULTS, None, "--from")
    out = {}
    for name, bulk in (("before", False), ("after", True)):
        fresh_cache(root)
        seconds, board = timed(lambda b=bulk: load_board_from_repo(ref, requests, bulk=b))
        out[name] = seconds
        out[f"{name}_entries"] = sum(len(r.entries) for r in board.releases)
    return out


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def serve(board) -> tuple[str, object]:
    """uvicorn over the board's app on a loopback port, in a thread; (base URL, server)."""
    import uvicorn

    from ratio_bench.serve.app import create_app

    port = free_port()
    config = uvicorn.Config(
        create_app(None, live_board=board), host="127.0.0.1", port=port, log_level="error"
    )
    server = uvicorn.Server(config)
    threading.Thread(target=server.run, daemon=True).start()
    while not server.started:
        time.sleep(0.05)
    return f"http://127.0.0.1:{port}", server


def served_times(board, concurrent: int, full: bool = True, hub=None) -> dict[str, float]:
    """First request, a second (cached) one, ``concurrent`` at once (the slowest answer's wait) and, with ``hub``,
    the first request after one new entry is committed. Without ``full`` only the first request is timed."""
    import httpx

    base, server = serve(board)
    try:
        with httpx.Client(timeout=600) as client:

            def get() -> float:
                seconds, response = timed(lambda: client.get(f"{base}/leaderboard"))
                assert response.status_code == 200, response.text[:300]
                return seconds

            out = {"first": get()}
            if not full:
                return out
            out["cached"] = get()
            with ThreadPoolExecutor(concurrent) as pool:
                out["concurrent_max"] = max(pool.map(lambda _: get(), range(concurrent)))
            if hub is not None:
                entry = json.loads(Path(hub.entry_file).read_text(encoding="utf-8"))
                new = json.dumps({**entry, "model": "new/model:generic"}).encode()
                hub.state.commit(f"datasets/{RESULTS}", "main", {"self/new.json": new}, author=KEEPER)
                time.sleep(board.check_s + 0.1)
                out["after_new_entry"] = get()
    finally:
        server.should_exit = True
    return out


def uncached_board(base):
    """Main's served board on an expired page: everything read (one download per file) and rendered per request."""
    from ratio_bench.evaluation.board.render.html import leaderboard_html
    from ratio_bench.leaderboard.board import queue_html, read_queue

    class Uncached(base):
        def page(self) -> str:
            from ratio_bench.leaderboard.board import load_board_from_repo

            board = load_board_from_repo(self.results, self.requests, bulk=False)
            extra = queue_html(read_queue(self.requests)) if self.requests else ""
            return leaderboard_html(board, extra=extra, policy=self.policy)

    return Uncached


def run(args: argparse.Namespace) -> dict:
    from ratio_bench.devhub.server import HubServer
    from ratio_bench.leaderboard.board import LiveBoard
    from ratio_bench.leaderboard.hub import RepoRef
    from ratio_bench.leaderboard.provenance import generate_key

    entry = json.loads(args.entry.read_text(encoding="utf-8"))
    root = Path(tempfile.mkdtemp(prefix="board-scale-"))
    with HubServer() as hub:
        hub.state.add_user(TOKEN, KEEPER)
        hub.state.create_repo(f"datasets/{RESULTS}", writers=[KEEPER])
        hub.state.create_repo(f"datasets/{REQUESTS}", writers=[KEEPER])
        results, requests = synthesise(entry, args.entries, args.signed, generate_key(root / "worker.key"))
        hub.state.commit(f"datasets/{RESULTS}", "main", results, author=KEEPER, title="entries")
        if requests:
            hub.state.commit(f"datasets/{REQUESTS}", "main", requests, author=KEEPER, title="requests")
        os.environ.update({"HF_ENDPOINT": hub.url, "HF_TOKEN": TOKEN, "HF_HUB_DISABLE_PROGRESS_BARS": "1"})
        figures = {
            "entries": args.entries, "signed": len(requests), "files": len(results),
            "bytes": sum(map(len, results.values())),
            "read": read_times(root, None), "read_verified": read_times(root, REQUESTS),
        }  # fmt: skip
        ref = RepoRef(RESULTS, None, "--from")
        fresh_cache(root)
        before = uncached_board(LiveBoard)(ref, REQUESTS)
        figures["served_before"] = served_times(before, args.concurrent, full=args.full)
        fresh_cache(root)
        hub.entry_file = args.entry
        figures["served_after"] = served_times(
            LiveBoard(ref, REQUESTS, check_s=1.0), args.concurrent, hub=hub
        )
    return figures


def table(f: dict) -> Table:
    t = Table(
        title=f"Board at {f['entries']:,} entries ({f['signed']:,} signed; {f['files']:,} files, "
        f"{f['bytes'] / 2**20:.1f} MiB), seconds",
        caption=f"{os.cpu_count()} CPUs here; loopback dev Hub in this process; shared machine: figures are noisy",
    )
    for col in ("measure", "before", "after", "speed-up"):
        t.add_column(col, justify="left" if col == "measure" else "right")
    rows = [
        ("--from read, cold (results only)", f["read"]["before"], f["read"]["after"]),
        ("--from read, cold (with --requests)", f["read_verified"]["before"], f["read_verified"]["after"]),
    ]
    labels = {"first": "first request", "cached": "cached (2nd) request", "concurrent_max": "4 concurrent (slowest)",
              "after_new_entry": "first request after a new entry"}  # fmt: skip
    first = f["served_before"]["first"]
    for name, label in labels.items():
        # main rendered every request: without --full its other rows are its first request's time (estimated)
        before = f["served_before"].get(
            name, first * (4 / min(4, os.cpu_count() or 1) if "conc" in name else 1)
        )
        rows.append((f"served board, {label}" + ("" if name in f["served_before"] else " (before: estimated)"),
                     before, f["served_after"][name]))  # fmt: skip
    for label, before, after in rows:
        t.add_row(label, f"{before:.2f}", f"{after:.3f}", f"{before / after:.0f}x" if after else "-")
    return t


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--entries", type=int, default=120, help="default 120 (~2 min); the issue's figure: 1200")
    p.add_argument("--signed", type=float, default=0.5, help="fraction of entries in signed worker folders")
    p.add_argument("--entry", type=Path, default=DEFAULT_ENTRY, help="a committed entry to vary")
    p.add_argument("--concurrent", type=int, default=4)
    p.add_argument("--json", type=Path, help="also write the figures here")
    p.add_argument(
        "--full", action="store_true", help="also time main's cached and concurrent requests (slow)"
    )
    args = p.parse_args(argv)
    figures = run(args)
    report_console().print(table(figures))
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
