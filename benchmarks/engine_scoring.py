"""The scoring engine before and after, side by side in one run: `ratio score`, the mteb path, a worker pass.

Each arm is the real command in a process of its own, with its own source tree first on ``PYTHONPATH`` (the
"before" arm: another checkout's ``src``, e.g. the commit before the engine) and a fresh embedding cache, so both
pay the same costs from cold; each is then run again on its warm cache (a re-score). ``counting/sitecustomize.py``
counts, in every process of an arm (the worker runs each job in a child process), the sentence-transformers models
constructed (model loads), the texts handed to ``encode`` (texts encoded) and the sha256 objects the model registry
makes (weights hashing)::

    python benchmarks/engine_scoring.py --before /work/wt-before/src --dataset ratio --split snapshots [--snapshots 3]
    python benchmarks/engine_scoring.py --before /work/wt-before/src --dataset ratio --split test_2025_09 --mteb
    python benchmarks/engine_scoring.py --before /work/wt-before/src --dataset ratio --worker   # one submission

The worker arms each start a loopback Hub (:mod:`ratio_bench.devhub`) holding the model and one admitted request,
and run ``ratio leaderboard worker --once``: download, checks, test, every snapshot and silver, publishing.
Nothing here re-implements scoring: both arms run the CLI of their own tree.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

HERE = Path(__file__).resolve().parent
AFTER_SRC = HERE.parent / "src"


COUNTING = HERE / "counting"  # its sitecustomize counts loads, texts encoded and hashes in every process


def arm(label: str, src: Path, command: list[str], log: Path, env: dict[str, str] | None = None) -> dict:
    """One run of ``command`` (a Python module and its arguments) with ``src`` first on the path; the counts of
    every process it started, summed, and its wall time."""
    with tempfile.TemporaryDirectory() as tmp:
        counts = Path(tmp) / "counts.jsonl"
        env = {
            **os.environ,
            **(env or {}),
            "PYTHONPATH": f"{src}{os.pathsep}{COUNTING}",
            "RATIO_COUNTS": str(counts),
        }
        cmd = [sys.executable, "-m", *command]
        start = time.perf_counter()
        with open(log, "a") as fh:
            fh.write(f"\n=== {label}: PYTHONPATH={src} {' '.join(cmd)}\n")
            fh.flush()
            done = subprocess.run(cmd, env=env, stdout=fh, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        wall = time.perf_counter() - start
        if done.returncode != 0:
            raise SystemExit(f"{label}: exit {done.returncode}; see {log}")
        lines = [json.loads(line) for line in counts.read_text().splitlines()]
    main_process = lines[-1]  # the first process started writes last (its children exit before it)
    summed = {
        k: sum(line[k] for line in lines) for k in ("model_loads", "texts_encoded", "encode_calls", "sha256")
    }
    return {
        "arm": label,
        **summed,
        "processes": len(lines),
        "seconds": main_process["seconds"],
        "wall_s": round(wall, 1),
    }


def trimmed_release(release: Path, snapshots: int, work: Path) -> Path:
    """A view of ``release`` whose manifest lists only its first ``snapshots`` snapshots (data linked, not
    copied), for a machine too slow to score all of them twice in one sitting."""
    view = work / f"release-first-{snapshots}-snapshots"
    view.mkdir(parents=True, exist_ok=True)
    manifest = json.loads((release / "manifest.json").read_text())
    kept = list(manifest["snapshots"])[:snapshots]
    manifest["snapshots"] = {name: manifest["snapshots"][name] for name in kept}
    (view / "manifest.json").write_text(json.dumps(manifest))
    for item in release.iterdir():
        if item.name != "manifest.json" and not (view / item.name).exists():
            (view / item.name).symlink_to(item.resolve())
    return view


def score_arms(args, dataset: Path, work: Path, log: Path) -> list[dict]:
    """``ratio score`` (or ``--via mteb``) before and after, each from a cold cache of its own, then warm."""
    argv = [
        "ratio_bench.cli",
        "score",
        "--model",
        args.model,
        "--dataset",
        str(dataset),
        "--split",
        args.split,
    ]
    if args.mteb:  # the mteb path against ratio's on one split, each from a cold cache of its own
        arms = [
            *(
                [("before --via mteb (cold cache)", args.before, ["--via", "mteb"], "mteb-before")]
                if args.before
                else []
            ),
            ("after --via ratio (cold cache)", AFTER_SRC, [], "ratio-after"),
            ("after --via mteb (cold cache)", AFTER_SRC, ["--via", "mteb"], "mteb-after"),
            ("after --via ratio (warm cache)", AFTER_SRC, [], "ratio-after"),
            ("after --via mteb (warm cache)", AFTER_SRC, ["--via", "mteb"], "mteb-after"),
        ]
    else:
        arms = [
            ("before (cold cache)", args.before, [], "cache-before"),
            ("after (cold cache)", AFTER_SRC, [], "cache-after"),
            ("before (warm cache, re-score)", args.before, [], "cache-before"),
            ("after (warm cache, re-score)", AFTER_SRC, [], "cache-after"),
        ]
    return [
        arm(label, src, [*argv, *extra, "--cache-dir", str(work / cache)], log)
        for label, src, extra, cache in arms
    ]


KEEPER, KEEPER_TOKEN = "keeper", "hf_bench_keeper_token"  # the maintainer who runs the worker
REQUESTS, RESULTS = "bench/requests", "bench/results"


def worker_arm(label: str, src: Path, model: Path, dataset: Path, cache: Path, work: Path, log: Path) -> dict:
    """One worker pass over a queue holding one request (``model`` as ``bench/model``, setup none), on a loopback
    Hub of its own and a fresh Hub cache (so each arm downloads the model), scoring into ``cache``."""
    from huggingface_hub import HfApi

    from ratio_bench.devhub.server import HubServer
    from ratio_bench.leaderboard.provenance import KEY_ENV, TRUSTED_SCHEMA, TRUSTED_WORKERS, generate_key
    from ratio_bench.leaderboard.requests import Request, stamp

    home = Path(tempfile.mkdtemp(prefix="worker-arm-", dir=work))
    with HubServer() as hub:
        hub.state.add_user(KEEPER_TOKEN, KEEPER)
        hub.state.create_repo(f"datasets/{REQUESTS}", writers=[KEEPER])
        hub.state.create_repo(f"datasets/{RESULTS}")
        api = HfApi(endpoint=hub.url, token=KEEPER_TOKEN)
        api.create_repo("bench/model", exist_ok=True)
        sha = api.upload_folder(repo_id="bench/model", folder_path=model).oid
        key = generate_key(home / "worker.key")
        request = Request(
            "bench/model", "main", sha, "none", "", "", "float32", KEEPER, stamp(datetime.now(UTC))
        )
        policy = {"schema": "ratio-queue-policy/1", "maintainers": [KEEPER], "workers": [KEEPER]}
        listing = {"schema": TRUSTED_SCHEMA, "workers": [key.listing("bench", KEEPER)]}
        hub.state.commit(f"datasets/{REQUESTS}", "main", {"policy.json": json.dumps(policy).encode(),
                         request.path: request.to_json()}, author=KEEPER, title="bench request")  # fmt: skip
        hub.state.commit(f"datasets/{RESULTS}", "main", {TRUSTED_WORKERS: json.dumps(listing).encode()},
                         author=KEEPER, title="trusted workers")  # fmt: skip
        env = {**hub.env(KEEPER_TOKEN, home / "hf"), KEY_ENV: str(home / "worker.key")}
        command = ["ratio_bench.cli", "leaderboard", "worker", "--requests", REQUESTS, "--results", RESULTS,
                   "--dataset", str(dataset), "--cache-dir", str(cache), "--once"]  # fmt: skip
        row = arm(label, src, command, log, env)
        status = json.loads(
            hub.state.blobs[hub.state.files(hub.state.resolve(f"datasets/{REQUESTS}", "main"))[request.path]]
        )
        published = [
            p
            for p in hub.state.files(hub.state.resolve(f"datasets/{RESULTS}", "main"))
            if p.endswith(".json")
        ]
    if status["status"] != "FINISHED":
        raise SystemExit(f"{label}: the request ended {status['status']} ({status.get('reason')}); see {log}")
    return {**row, "entries_published": sum(1 for p in published if p.count("/") == 3 and "/mteb/" not in p)}


def worker_arms(args, dataset: Path, work: Path, log: Path) -> list[dict]:
    """A worker pass for one submission, before and after, cold; then each again on its warm cache."""
    from ratio_bench.retrieval.registry import resolve

    model = Path(resolve(args.model).path)
    arms = [
        ("worker before (cold cache)", args.before, "cache-before"),
        ("worker after (cold cache)", AFTER_SRC, "cache-after"),
        ("worker before (warm cache)", args.before, "cache-before"),
        ("worker after (warm cache)", AFTER_SRC, "cache-after"),
    ]
    return [worker_arm(label, src, model, dataset, work / cache, work, log) for label, src, cache in arms]


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument(
        "--before",
        type=Path,
        help="the src folder of the code before (without it, --mteb runs its after arms)",
    )
    p.add_argument("--dataset", type=Path, required=True)
    p.add_argument("--model", default="all-MiniLM-L6-v2")
    p.add_argument("--split", default="snapshots")
    p.add_argument(
        "--mteb", action="store_true", help="arms: mteb before, ratio after, mteb after (give one --split)"
    )
    p.add_argument("--worker", action="store_true", help="arms: a leaderboard worker pass for one submission")
    p.add_argument("--snapshots", type=int, help="only the release's first N snapshots (a trimmed view)")
    p.add_argument("--work", type=Path, help="where the caches and the log go (default: a temporary folder)")
    p.add_argument("--json", type=Path, help="also write the figures as JSON")
    args = p.parse_args()
    if not args.before and not args.mteb:
        p.error("--before: give the src folder of the code to compare against")
    work = args.work or Path(tempfile.mkdtemp(prefix="engine-scoring-"))
    work.mkdir(parents=True, exist_ok=True)
    dataset = trimmed_release(args.dataset, args.snapshots, work) if args.snapshots else args.dataset
    log = work / "runs.log"
    rows = (worker_arms if args.worker else score_arms)(args, dataset, work, log)
    what = "a worker pass, one submission" if args.worker else f"ratio score --split {args.split}"
    print(f"{what}, {args.model}, {dataset} (log: {log}); arms run back-to-back on one machine")
    print(
        f"{'arm':32} {'wall s':>8} {'main proc s':>11} {'model loads':>11} {'texts encoded':>13} {'sha256':>7}"
    )
    for r in rows:
        print(
            f"{r['arm']:32} {r['wall_s']:>8.1f} {r['seconds']:>11.1f} {r['model_loads']:>11} "
            f"{r['texts_encoded']:>13,} {r['sha256']:>7}"
        )
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
