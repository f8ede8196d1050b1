"""What one unified model saves over three specialists: encode time, index size, memory, serving latency.

Two indexes of the same seeded sample of a release split's candidates, built by ``ratio index``'s own code
(``serve.index.build_index``, a fresh embedding cache each, so nothing is reused):

* unified: one model for all three moves (each move's saved query prompt, one shared document prompt), so the
  candidates are encoded once and the index holds one vector file;
* specialists: one model per move (``--model MOVE=REF``), three encodings and three vector files.

Then, per arm: the split's test queries of each move encoded in a batch with that move's model and prompt
(texts/s), and served one at a time through the FastAPI app in process (starlette's TestClient, warm, exact
search): p50/p95 latency per move and for one request over all three moves. Each arm's build and serving
run in their own subprocess, so peak RSS is per phase and per arm. Prints a Markdown table; ``--json FILE``
writes it all. Usage (models as ``ratio train`` writes them, or see ``make bench-unified``)::

    python benchmarks/unified_cost.py --dataset ratio \\
        --unified models/dev/all-MiniLM-L6-v2-generic-unified/best \\
        --specialists address=models/dev/all-MiniLM-L6-v2-generic-address/best \\
                      broaden=models/dev/all-MiniLM-L6-v2-generic-broaden/best \\
                      specify=models/dev/all-MiniLM-L6-v2-generic-specify/best \\
        [--sample 5000] [--queries 200] [--threads 1] [--json eval/unified_cost.json]

Specialists that resolve to one model folder are one model to the index (encoded once); the table's "distinct
models" row says so. A stand-in trio made of one model must therefore differ on disk (its own copy of the
weights and its own saved prompts or README each: the fingerprint covers every file, and shared weight files
would be shared pages, hiding the memory cost). On a CPU other jobs are using, pass ``--threads 1``.
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
from typing import Any

import numpy as np

from ratio_bench.core.errors import RatioError, UsageError
from ratio_bench.core.io import write_json
from ratio_bench.core.options import parse_assignment
from ratio_bench.serve.index import MOVES

ARMS = ("unified", "specialists")
PHASES = ("build", "serve")
WARM_UP = 5
ERROR = "unified_cost.py: error: "


def specialist_models(values: list[str]) -> dict[str, str]:
    """``--specialists address=DIR broaden=DIR specify=DIR`` to a reference per move (all three needed)."""
    models = dict(parse_assignment(v, "--specialists", MOVES, str, "MOVE=DIR", "move") for v in values)
    missing = [m for m in MOVES if m not in models]
    if missing:
        raise UsageError(f"--specialists: no model for {', '.join(missing)}; add {missing[0]}=DIR")
    return models


def arm_models(args: argparse.Namespace, arm: str) -> dict[str, str]:
    return dict.fromkeys(MOVES, args.unified) if arm == "unified" else specialist_models(args.specialists)


def sample_candidates(args: argparse.Namespace):
    """A seeded sample of ``--sample`` candidates of the split, in the release's order."""
    from ratio_bench.serve import candidates

    full = candidates.from_release(args.dataset, args.split)
    n = full.table.num_rows
    rows = np.sort(np.random.default_rng(args.seed).choice(n, min(args.sample, n), replace=False))
    source = {**full.source, "sample": {"candidates": len(rows), "of": n, "seed": args.seed}}
    return candidates.Candidates(full.table.take(rows), source, {"candidates": len(rows)})


def sample_queries(args: argparse.Namespace) -> dict[str, list[str]]:
    """Up to ``--queries`` seeded test queries of each move (the same texts for both arms)."""
    from ratio_bench.evaluation.scoring.evaluate import load_split

    data = load_split(args.dataset, args.split)
    out = {}
    for move in MOVES:
        texts = data.queries[move][1]
        if not texts:  # a split without queries of this move: nothing of it to time
            continue
        rows = np.random.default_rng([args.seed, MOVES.index(move)]).permutation(len(texts))
        out[move] = [texts[i] for i in rows[: args.queries]]
    return out


def folder_bytes(path: Path) -> int:
    """Bytes of every file under ``path`` (linked files counted at their target's size)."""
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def peak_rss_mib() -> float:
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)  # Linux: kB


def rss_mib() -> float:
    with open("/proc/self/statm") as fh:
        return round(int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20, 1)


def percentiles(ms: list[float]) -> dict[str, float]:
    return {
        "p50_ms": round(float(np.percentile(ms, 50)), 2),
        "p95_ms": round(float(np.percentile(ms, 95)), 2),
    }


def build_phase(args: argparse.Namespace, arm: str, work: Path) -> dict[str, Any]:
    """Index the sample (timed, corpus texts counted), then encode each move's queries in one batch."""
    from ratio_bench.retrieval.cache import EmbeddingCache
    from ratio_bench.retrieval.encoder import DenseEncoder
    from ratio_bench.retrieval.registry import resolve
    from ratio_bench.serve.index import build_index, load_index

    cands, queries = sample_candidates(args), sample_queries(args)
    encoded = {"texts": 0}
    real_encode = DenseEncoder.encode

    def counting(self, texts, prompt, role="document", progress=None):  # DenseEncoder.encode's signature
        encoded["texts"] += len(texts)
        return real_encode(self, texts, prompt, role, progress)

    DenseEncoder.encode = counting  # count what the index code encodes; the real encoder runs
    cache = EmbeddingCache(work / arm / "cache", progress=False)
    out = work / arm / "index"
    start = time.perf_counter()
    try:
        report = build_index(cands, arm_models(args, arm), out, cache=cache, batch_size=args.batch_size)
    finally:
        DenseEncoder.encode = real_encode
    build_s = time.perf_counter() - start
    corpus_s = sum(report.encode_s.values())

    manifest = load_index(out).manifest
    setups = {key: resolve(m["ref"]) for key, m in manifest["models"].items()}
    encoders = {key: DenseEncoder.load(s, batch_size=args.batch_size) for key, s in setups.items()}
    query_s = 0.0
    for move, texts in queries.items():
        key = manifest["moves"][move]
        encoders[key].encode(texts[:WARM_UP], setups[key].prompt_for(move), "query")
        start = time.perf_counter()
        encoders[key].encode(texts, setups[key].prompt_for(move), "query")
        query_s += time.perf_counter() - start
    n_queries = sum(len(t) for t in queries.values())
    return {
        "models": {move: manifest["models"][key]["name"] for move, key in manifest["moves"].items()},
        "distinct_models": len(manifest["models"]),
        "model_bytes": sum(folder_bytes(Path(s.path)) for s in setups.values()),
        "candidates": len(cands.ids),
        "split_candidates": cands.source["sample"]["of"],
        "corpus_texts_encoded": encoded["texts"],
        "corpus_encode_s": round(corpus_s, 2),
        "corpus_texts_per_s": round(encoded["texts"] / corpus_s, 1),
        "candidates_per_s": round(len(cands.ids) / corpus_s, 1),
        "build_s": round(build_s, 2),
        "queries_encoded": n_queries,
        "query_encode_s": round(query_s, 2),
        "queries_per_s": round(n_queries / query_s, 1),
        "index_bytes": folder_bytes(out) - folder_bytes(out / "models"),  # its model copies: model_bytes
        "vector_bytes": folder_bytes(out / "vectors"),
        "build_peak_rss_mib": peak_rss_mib(),
    }


def serve_phase(args: argparse.Namespace, arm: str, work: Path) -> dict[str, Any]:
    """Load the index into the app, then time single requests per move and over all moves (warm)."""
    from starlette.testclient import TestClient

    from ratio_bench.serve.app import create_app
    from ratio_bench.serve.index import load_index
    from ratio_bench.serve.search import Searcher

    queries = sample_queries(args)
    base_rss = rss_mib()
    start = time.perf_counter()
    searcher = Searcher(load_index(work / arm / "index"), exact=True)
    load_s = time.perf_counter() - start
    loaded_rss = rss_mib()
    latency: dict[str, dict[str, float]] = {}
    with TestClient(create_app(searcher)) as client:

        def timed(texts: list[str], moves: list[str] | None) -> list[float]:
            ms = []
            warm_up = len(texts[:WARM_UP])  # fewer than WARM_UP queries: each once to warm up, then timed
            for i, text in enumerate(texts[:WARM_UP] + texts):
                start = time.perf_counter()
                r = client.post("/api/search", json={"text": text, "moves": moves, "k": 10})
                if r.status_code != 200 or len(r.json()["results"]) != len(moves or MOVES):
                    raise RatioError(f"{arm}: /api/search answered {r.status_code}: {r.text[:200]}")
                if i >= warm_up:
                    ms.append(1000 * (time.perf_counter() - start))
            return ms

        for move, texts in queries.items():
            latency[move] = percentiles(timed(texts, [move]))
        mixed = [t for group in zip(*queries.values(), strict=False) for t in group][: args.queries]
        latency["all"] = percentiles(timed(mixed, None))
    return {
        "load_s": round(load_s, 2),
        "base_rss_mib": base_rss,
        "loaded_rss_mib": loaded_rss,
        "serve_peak_rss_mib": peak_rss_mib(),
        "latency": latency,
        "queries_per_move": {m: len(t) for m, t in queries.items()},
    }


def run_worker(args: argparse.Namespace, work: Path, arm: str, phase: str) -> dict[str, Any]:
    cmd = [sys.executable, __file__, *sys.argv[1:], "--worker", f"{arm}:{phase}", "--work", str(work)]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT ")]
    if proc.returncode or not lines:
        tail = proc.stderr.strip().splitlines()[-15:]
        if proc.returncode in (1, 2) and tail and tail[-1].startswith(ERROR):  # a user error: its one line
            raise RatioError(tail[-1][len(ERROR) :])
        raise RatioError(f"{arm} {phase} failed (exit {proc.returncode}):\n" + "\n".join(tail))
    return json.loads(lines[-1][len("RESULT ") :])


def ratio(a: float, b: float) -> str:
    return f"{b / a:.2f}x" if a else "-"


def markdown(result: dict[str, Any]) -> str:
    u, s = result["unified"], result["specialists"]
    rows: list[tuple[str, Any, Any, str]] = []

    def row(label: str, key: str, fmt: str = "{:,}", ratio_of: bool = True) -> None:
        rows.append(
            (label, fmt.format(u[key]), fmt.format(s[key]), ratio(u[key], s[key]) if ratio_of else "")
        )

    row("distinct models", "distinct_models")
    row("model files (bytes)", "model_bytes")
    row("corpus texts encoded", "corpus_texts_encoded")
    row("corpus encode (s)", "corpus_encode_s", "{:.2f}")
    row("corpus texts / s", "corpus_texts_per_s", "{:,.1f}")
    row("candidates indexed / s (encoding)", "candidates_per_s", "{:,.1f}")
    row("index build, total (s)", "build_s", "{:.2f}")
    row("queries encoded (3 moves)", "queries_encoded", ratio_of=False)
    row("query encode (s)", "query_encode_s", "{:.2f}")
    row("queries / s", "queries_per_s", "{:,.1f}")
    row("index size on disk (bytes)", "index_bytes")
    row("  of which vectors (bytes)", "vector_bytes")
    row("peak RSS, build (MiB)", "build_peak_rss_mib", "{:,.1f}")
    row("serving: index + models load (s)", "load_s", "{:.2f}")
    row("serving: RSS before load (MiB)", "base_rss_mib", "{:,.1f}")
    row("serving: RSS after load (MiB)", "loaded_rss_mib", "{:,.1f}")
    row("peak RSS, serving (MiB)", "serve_peak_rss_mib", "{:,.1f}")
    for move in (*(m for m in MOVES if m in u["latency"]), "all"):  # moves the split has queries of
        lu, ls = u["latency"][move], s["latency"][move]
        label = "all three moves, one request" if move == "all" else move
        rows.append(
            (
                f"latency {label}, p50 / p95 (ms)",
                f"{lu['p50_ms']:.1f} / {lu['p95_ms']:.1f}",
                f"{ls['p50_ms']:.1f} / {ls['p95_ms']:.1f}",
                ratio(lu["p50_ms"], ls["p50_ms"]),
            )
        )
    st = result["settings"]
    lines = [
        f"Unified vs specialists, {st['candidates']:,} of {st['split_candidates']:,} {st['split']} "
        f"candidates of {st['dataset']}, {st['queries']} queries per move; {st['cpus']} CPUs, "
        f"torch threads {st['torch_threads']}, load average {st['load_average']:.1f} at start",
        "",
        f"- unified: {u['models']['address']}",
        "- specialists: " + ", ".join(f"{m}: {n}" for m, n in s["models"].items()),
        "",
        "| | unified | specialists | specialists / unified |",
        "| --- | ---: | ---: | ---: |",
        *(f"| {a} | {b} | {c} | {d} |" for a, b, c, d in rows),
    ]
    if s["distinct_models"] < len(MOVES):
        lines += ["", f"Note: the specialists are {s['distinct_models']} distinct model(s), not three."]
    return "\n".join(lines)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--unified", required=True, help="the unified model: a folder or NAME[:SETUP]")
    ap.add_argument(
        "--specialists",
        nargs=3,
        required=True,
        metavar="MOVE=DIR",
        help="address=DIR broaden=DIR specify=DIR",
    )
    ap.add_argument("--dataset", type=Path, default=Path("ratio"), help="a release folder (default: ./ratio)")
    ap.add_argument("--split", default="test", help="the split whose candidates and queries are used")
    ap.add_argument(
        "--sample", type=int, default=5000, help="candidates indexed (seeded sample; default 5000)"
    )
    ap.add_argument("--queries", type=int, default=200, help="queries per move (default 200)")
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--seed", type=int, default=13)
    ap.add_argument(
        "--threads",
        type=int,
        default=0,
        help="torch threads per worker (default: torch's). On a busy shared CPU use 1: two threads fighting "
        "other jobs for the cores made single-query latency ~30x worse in our runs",
    )
    ap.add_argument("--json", type=Path, metavar="FILE", help="also write the figures as JSON")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ap.add_argument("--work", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.sample < 1 or args.queries < 1:
        raise UsageError("--sample and --queries must be at least 1")
    return args


def main() -> int:
    args = parse_args()
    if args.worker:
        arm, phase = args.worker.split(":")
        if args.threads:
            import torch

            torch.set_num_threads(args.threads)
        run = build_phase if phase == "build" else serve_phase
        print("RESULT " + json.dumps(run(args, arm, args.work)))
        return 0
    from ratio_bench.retrieval.registry import REGISTRY, resolve

    # the cheap checks first: a bad flag must not wait for a build
    refs = [("--unified", args.unified)] + [
        ("--specialists", r) for r in specialist_models(args.specialists).values()
    ]
    for flag, ref in refs:
        if not Path(ref).is_dir() and ref.partition(":")[0] not in REGISTRY:
            raise UsageError(
                f"{flag} {ref}: no such model folder (a `ratio train` output, its best/, "
                "or a name from `ratio models`)"
            )
        if resolve(ref).kind != "dense":
            raise UsageError(f"{flag} {ref}: a dense model is needed (BM25 encodes nothing)")
    load = os.getloadavg()[0]
    result: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="ratio-unified-cost-") as tmp:
        for arm in ARMS:
            result[arm] = {}
            for phase in PHASES:
                print(f"{arm}: {phase} ...", file=sys.stderr, flush=True)
                result[arm] |= run_worker(args, Path(tmp), arm, phase)
    result["settings"] = {
        "dataset": str(args.dataset),
        "split": args.split,
        "split_candidates": result["unified"]["split_candidates"],
        "candidates": result["unified"]["candidates"],
        "queries": args.queries,
        "seed": args.seed,
        "batch_size": args.batch_size,
        "torch_threads": args.threads or "default",
        "cpus": os.cpu_count(),
        "load_average": round(load, 2),
        "unified": args.unified,
        "specialists": specialist_models(args.specialists),
    }
    print(markdown(result))
    if args.json:
        write_json(args.json, result)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except RatioError as e:
        print(f"{ERROR}{e}", file=sys.stderr)
        sys.exit(2 if isinstance(e, UsageError) else 1)
