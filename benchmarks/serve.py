"""Inspiration search on this CPU: query latency, throughput under concurrent clients, exact vs ANN.

1. p50/p95 latency of one query over every move, in process (encoding + search + provenance);
2. throughput of ``ratio serve`` (uvicorn, started here on a free loopback port) under N concurrent httpx async
   clients for S seconds: answers per second, latency percentiles, errors (must be 0);
3. exact vs HNSW vs IVF over the index's first dense model: build time, recall@10 against exact, ms per query.

Queries are a fixed sample of the index's own sentences (an index of one's own papers has no query set).

Usage: python benchmarks/serve.py --index /tmp/serve-dev-idx [--clients 20] [--seconds 30] [--queries 200]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import socket
import subprocess
import sys
import time

import numpy as np
from rich.table import Table

from ratio_bench.core.io import report_console
from ratio_bench.serve import ann
from ratio_bench.serve.index import load_index
from ratio_bench.serve.search import Searcher


def percentiles(ms: list[float]) -> tuple[float, float]:
    return float(np.percentile(ms, 50)), float(np.percentile(ms, 95))


def in_process_latency(searcher: Searcher, texts: list[str]) -> list[float]:
    for t in texts[:5]:  # warm-up: first calls allocate
        searcher.search(t)
    out = []
    for t in texts:
        start = time.perf_counter()
        searcher.search(t)
        out.append(1000 * (time.perf_counter() - start))
    return out


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def load_test(base: str, texts: list[str], clients: int, seconds: float) -> tuple[list[float], int]:
    import httpx

    latencies: list[float] = []
    errors = 0
    deadline = time.perf_counter() + seconds

    async def client(i: int, c: httpx.AsyncClient) -> None:
        nonlocal errors
        n = i
        while time.perf_counter() < deadline:
            start = time.perf_counter()
            try:
                r = await c.post("/api/search", json={"text": texts[n % len(texts)], "k": 10})
                ok = r.status_code == 200 and len(r.json()["results"]) == 3
            except httpx.HTTPError:
                ok = False
            if ok:
                latencies.append(1000 * (time.perf_counter() - start))
            else:
                errors += 1
            n += clients

    limits = httpx.Limits(max_connections=clients)
    async with httpx.AsyncClient(base_url=base, timeout=60, limits=limits) as c:
        await asyncio.gather(*(client(i, c) for i in range(clients)))
    return latencies, errors


def serve_and_load(index: str, texts: list[str], clients: int, seconds: float):
    import httpx

    port = free_port()
    cmd = [sys.executable, "-m", "ratio_bench.cli", "serve", "--index", index, "--port", str(port)]
    proc = subprocess.Popen([*cmd, "--log-level", "warning"], stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(600):
            if proc.poll() is not None:
                raise SystemExit(f"ratio serve exited with {proc.returncode}")
            try:
                if httpx.get(base + "/api/health", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.2)
        return asyncio.run(load_test(base, texts, clients, seconds))
    finally:
        proc.terminate()
        proc.wait(30)


def ann_table(index, searcher: Searcher, rows: np.ndarray) -> Table:
    from ratio_bench.retrieval.encoder import DenseEncoder
    from ratio_bench.retrieval.registry import resolve

    key, vectors = next(iter(index.vectors.items()))
    entry = index.manifest["models"][key]
    encoder = DenseEncoder.load(resolve(entry["ref"]))
    texts = [searcher.rows[i]["text"] for i in rows]
    queries = encoder.encode(texts, entry["query_prompt"]).astype(np.float32)
    vectors = np.asarray(vectors, dtype=np.float32)
    t = Table(
        title=f"Exact vs ANN, {entry['name']}, {len(vectors):,} candidates, {len(rows)} queries, top-10"
    )
    for col in ("search", "settings", "build s", "recall@10", "ms / query", "speed-up"):
        t.add_column(col, justify="right")
    start = time.perf_counter()
    flat = ann.flat_index(vectors)
    flat_s = time.perf_counter() - start
    exact_ms = ann.per_query_ms(flat, queries, ann.RECALL_K)
    t.add_row("exact (flat IP)", "-", f"{flat_s:.2f}", "1.000", f"{exact_ms:.2f}", "1.0x")
    for kind in ann.ANN_KINDS:
        start = time.perf_counter()
        built = ann.build_ann(vectors, kind)
        report = ann.measure(vectors, built, kind, time.perf_counter() - start, queries, rows)
        settings = ", ".join(f"{k}={v}" for k, v in ann.ann_params(kind, len(vectors)).items())
        t.add_row(
            kind,
            settings,
            f"{report.build_s:.2f}",
            f"{report.recall_at_10:.3f}",
            f"{report.ann_ms:.2f}",
            f"{report.speedup:.1f}x",
        )
    return t


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--index", required=True)
    ap.add_argument("--clients", type=int, default=20)
    ap.add_argument("--seconds", type=float, default=30)
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--skip-ann", action="store_true")
    args = ap.parse_args()
    console = report_console()
    index = load_index(args.index)
    searcher = Searcher(index, exact=True)
    rows = ann.sample_rows(len(index), args.queries)
    texts = [searcher.rows[i]["text"] for i in rows]
    models = ", ".join(f"{m}: {n}" for m, n in searcher.describe()["models"].items())
    console.print(
        f"index {args.index}: {len(index):,} candidates ({models}); {os.cpu_count()} CPUs, "
        f"load average {os.getloadavg()[0]:.1f}"
    )

    p50, p95 = percentiles(in_process_latency(searcher, texts))
    console.print(
        f"in process, one query x {len(searcher.moves)} moves (exact): p50 {p50:.1f} ms, p95 {p95:.1f} ms"
    )

    latencies, errors = serve_and_load(args.index, texts, args.clients, args.seconds)
    p50, p95 = percentiles(latencies) if latencies else (float("nan"), float("nan"))
    console.print(
        f"ratio serve, {args.clients} concurrent clients for {args.seconds:.0f} s on loopback: "
        f"{len(latencies) / args.seconds:.1f} answers/s, p50 {p50:.0f} ms, p95 {p95:.0f} ms, "
        f"{len(latencies):,} answers, {errors} errors"
    )
    if not args.skip_ann and index.vectors:
        console.print(ann_table(index, searcher, rows))


if __name__ == "__main__":
    main()
