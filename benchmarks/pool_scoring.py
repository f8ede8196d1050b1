"""Scoring a spec-sized pool (issue 49, item 4) on a CPU, in parts that fit this machine:

  encode   MiniLM texts/s on N real sentences of a release's test pool (the rate a full encode would run at)
  cache    the per-text embedding cache filled with N vectors in its chunks (a stand-in encoder gives seeded
           unit vectors at no cost, so what is timed is the cache: writes, index, read-back of the pool)
  search   exact top-100 of Q queries over N cached vectors: faiss's flat index (what `ratio score` uses on a
           CPU), and torch in blocks bounded by --max-mb (ratio_bench.retrieval.search's blocked path)

Each case runs in its own process, so its peak RSS (ru_maxrss) is its own. The spec's test pool is 404,371
candidates; an encode of it by MiniLM on two loaded cores is projected from the measured rate, not run.
Usage:
    python benchmarks/pool_scoring.py --release /work/main/ratio [--sizes 50000 404371] [--queries 2000]
        [--encode-texts 512] [--json benchmarks/results/pool-scoring-cpu.json]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

DIM = 384  # MiniLM's


def _unit(seed: int, n: int) -> np.ndarray:
    v = np.random.default_rng(seed).standard_normal((n, DIM), dtype=np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def case_encode(release: Path, n: int) -> dict:
    import pyarrow.parquet as pq

    from ratio_bench.retrieval.encoder import DenseEncoder
    from ratio_bench.retrieval.registry import resolve

    files = sorted((release / "data" / "corpus").glob("test-*.parquet"))
    texts = pq.read_table(files[0], columns=["text"]).column("text").to_pylist()[:n]
    enc = DenseEncoder.load(resolve("all-MiniLM-L6-v2"))
    enc.encode(texts[:32], "")  # warm-up
    began = time.perf_counter()
    enc.encode(texts, "")
    secs = time.perf_counter() - began
    return {"texts": len(texts), "seconds": round(secs, 2), "texts_per_s": round(len(texts) / secs, 1)}


def case_cache(n: int, root: Path) -> dict:
    from ratio_bench.retrieval.cache import EmbeddingCache

    cache = EmbeddingCache(root, progress=False)
    texts = [f"candidate sentence number {i}" for i in range(n)]
    calls = []

    def encode(batch):  # a seeded stand-in: the cache, not a model, is what is timed
        calls.append(len(batch))
        return _unit(len(calls), len(batch))

    began = time.perf_counter()
    cache.fill("bench-model", "", texts, encode)
    filled = time.perf_counter() - began
    began = time.perf_counter()
    vectors = EmbeddingCache(root, progress=False).get_or_encode("bench-model", "", texts, encode)
    read = time.perf_counter() - began
    size = sum(f.stat().st_size for f in root.rglob("*") if f.is_file())
    return {
        "n": n,
        "chunks": len(calls),
        "fill_s": round(filled, 2),
        "fill_per_s": round(n / filled),
        "read_back_s": round(read, 2),
        "shape": list(vectors.shape),
        "cache_mb": round(size / 1e6, 1),
    }


def case_search(n: int, queries: int, backend: str, max_mb: int) -> dict:
    from ratio_bench.retrieval.search import exact_search

    corpus, q = _unit(1, n), _unit(2, queries)
    began = time.perf_counter()
    kwargs = {"max_bytes": max_mb << 20, "device": "cpu"} if backend == "torch" else {}
    scores, ids = exact_search(corpus, q, 100, backend=backend, **kwargs)
    secs = time.perf_counter() - began
    return {
        "n": n,
        "queries": queries,
        "backend": backend,
        "max_mb": max_mb if backend == "torch" else None,
        "seconds": round(secs, 2),
        "queries_per_s": round(queries / secs, 1),
        "top": int(ids[0, 0]),
    }


def run_case(argv: list[str]) -> dict:
    out = subprocess.run(
        [sys.executable, __file__, "--case", *argv], capture_output=True, text=True, check=False
    )
    if out.returncode:
        raise SystemExit(out.stderr[-2000:])
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--case", nargs="+", help=argparse.SUPPRESS)
    ap.add_argument("--release", type=Path, default=Path("/work/main/ratio"))
    ap.add_argument("--sizes", type=int, nargs="+", default=[50_000, 404_371])
    ap.add_argument("--queries", type=int, default=2000)
    ap.add_argument("--encode-texts", type=int, default=512)
    ap.add_argument("--max-mb", type=int, default=256)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    if args.case:
        kind, *rest = args.case
        if kind == "encode":
            res = case_encode(Path(rest[0]), int(rest[1]))
        elif kind == "cache":
            res = case_cache(int(rest[0]), Path(rest[1]))
        else:
            res = case_search(int(rest[0]), int(rest[1]), rest[2], int(rest[3]))
        res["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
        print(json.dumps(res))
        return
    rows = []
    if args.encode_texts:
        rows.append({"case": "encode", **run_case(["encode", str(args.release), str(args.encode_texts)])})
        print(rows[-1], flush=True)
    for n in args.sizes:
        with tempfile.TemporaryDirectory(dir=os.environ.get("RATIO_BENCH_TMP")) as tmp:
            rows.append({"case": "cache", **run_case(["cache", str(n), tmp])})
            print(rows[-1], flush=True)
        for backend in ("faiss", "torch"):
            rows.append(
                {
                    "case": "search",
                    **run_case(["search", str(n), str(args.queries), backend, str(args.max_mb)]),
                }
            )
            print(rows[-1], flush=True)
    rate = next((r["texts_per_s"] for r in rows if r["case"] == "encode"), None)
    result = {
        "cores": len(os.sched_getaffinity(0)),
        "load": round(os.getloadavg()[0], 1),
        "runs": rows,
        "projected_404k_encode_hours": round(404_371 / rate / 3600, 2) if rate else None,
    }
    print(json.dumps(result, indent=2))
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
