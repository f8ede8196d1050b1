"""`ratio score --split snapshots` before and after the scoring engine, side by side in one run.

Each arm is the real command in a process of its own, with its own source tree first on ``PYTHONPATH`` (the
"before" arm: another checkout's ``src``, e.g. the main branch) and a fresh embedding cache, so both pay the
same costs from cold; the "after" arm is then run again on its warm cache (a re-score). The child process
counts, around ``ratio_bench.cli.main``, the sentence-transformers models constructed (model loads), the texts
handed to the model's ``encode`` (texts encoded) and the sha256 objects the model registry makes (weights
hashing), and reports them with its wall time::

    python benchmarks/engine_scoring.py --before /work/main/src --dataset /work/main/ratio \\
        --model all-MiniLM-L6-v2 --split snapshots [--snapshots 3]
    python benchmarks/engine_scoring.py --before /work/main/src --dataset /work/main/ratio \\
        --split test_2025_09 --mteb      # mteb before, ratio after, mteb after (its cached encoder)

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
from pathlib import Path

HERE = Path(__file__).resolve().parent
AFTER_SRC = HERE.parent / "src"


def child(out: Path, argv: list[str]) -> int:
    """Run ``ratio`` with ``argv`` in this process, counting loads, texts encoded and hashes into ``out``."""
    from sentence_transformers import SentenceTransformer

    from ratio_bench.cli import main
    from ratio_bench.retrieval import registry

    counts = {"model_loads": 0, "texts_encoded": 0, "encode_calls": 0, "sha256": 0}
    real_init, real_encode, real_sha = (
        SentenceTransformer.__init__,
        SentenceTransformer.encode,
        registry.hashlib.sha256,
    )

    def init(self, *args, **kwargs):
        counts["model_loads"] += 1
        real_init(self, *args, **kwargs)

    def encode(self, *args, **kwargs):  # positional, or by keyword (encode_query passes ``sentences=``)
        texts = args[0] if args else kwargs.get("sentences", kwargs.get("inputs", []))
        counts["encode_calls"] += 1
        counts["texts_encoded"] += 1 if isinstance(texts, str) else len(texts)
        return real_encode(self, *args, **kwargs)

    class Hashlib:
        def sha256(self, *args):
            counts["sha256"] += 1
            return real_sha(*args)

    SentenceTransformer.__init__, SentenceTransformer.encode = init, encode
    registry.hashlib = Hashlib()
    start = time.perf_counter()
    code = main(argv)
    counts["seconds"] = round(time.perf_counter() - start, 1)
    counts["exit"] = code
    out.write_text(json.dumps(counts))
    return code


def arm(label: str, src: Path, argv: list[str], cache: Path, log: Path) -> dict:
    """One ``ratio`` run in a child process with ``src`` first on its path; its counts and wall time."""
    with tempfile.TemporaryDirectory() as tmp:
        counts = Path(tmp) / "counts.json"
        env = {**os.environ, "PYTHONPATH": str(src)}
        cmd = [sys.executable, __file__, "--child", str(counts), "--", *argv, "--cache-dir", str(cache)]
        start = time.perf_counter()
        with open(log, "a") as fh:
            fh.write(f"\n=== {label}: PYTHONPATH={src} {' '.join(cmd)}\n")
            fh.flush()
            done = subprocess.run(cmd, env=env, stdout=fh, stderr=subprocess.STDOUT)
        wall = time.perf_counter() - start
        if done.returncode != 0:
            raise SystemExit(f"{label}: exit {done.returncode}; see {log}")
        result = json.loads(counts.read_text())
    result["wall_s"] = round(wall, 1)
    return {"arm": label, **result}


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


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--before", type=Path, required=True, help="the src folder of the code before (main's)")
    p.add_argument("--dataset", type=Path, required=True)
    p.add_argument("--model", default="all-MiniLM-L6-v2")
    p.add_argument("--split", default="snapshots")
    p.add_argument(
        "--mteb", action="store_true", help="arms: mteb before, ratio after, mteb after (give one --split)"
    )
    p.add_argument("--snapshots", type=int, help="only the release's first N snapshots (a trimmed view)")
    p.add_argument("--work", type=Path, help="where the caches and the log go (default: a temporary folder)")
    p.add_argument("--json", type=Path, help="also write the figures as JSON")
    args = p.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="engine-scoring-"))
    work.mkdir(parents=True, exist_ok=True)
    dataset = trimmed_release(args.dataset, args.snapshots, work) if args.snapshots else args.dataset
    argv = ["score", "--model", args.model, "--dataset", str(dataset), "--split", args.split]
    log = work / "runs.log"
    if args.mteb:  # the mteb path against ratio's on one split, each from a cold cache of its own
        arms = [
            ("before --via mteb (cold cache)", args.before, ["--via", "mteb"], "mteb-before"),
            ("after --via ratio (cold cache)", AFTER_SRC, [], "ratio-after"),
            ("after --via mteb (cold cache)", AFTER_SRC, ["--via", "mteb"], "mteb-after"),
        ]
    else:
        arms = [
            ("before (cold cache)", args.before, [], "cache-before"),
            ("after (cold cache)", AFTER_SRC, [], "cache-after"),
            ("before (warm cache, re-score)", args.before, [], "cache-before"),
            ("after (warm cache, re-score)", AFTER_SRC, [], "cache-after"),
        ]
    rows = [arm(label, src, [*argv, *extra], work / cache, log) for label, src, extra, cache in arms]
    print(f"`ratio {' '.join(argv)}` (log: {log}); arms run back-to-back on one (shared) machine")
    print(
        f"{'arm':32} {'wall s':>8} {'in-process s':>12} {'model loads':>11} {'texts encoded':>13} {'sha256':>7}"
    )
    for r in rows:
        print(
            f"{r['arm']:32} {r['wall_s']:>8.1f} {r['seconds']:>12.1f} {r['model_loads']:>11} "
            f"{r['texts_encoded']:>13,} {r['sha256']:>7}"
        )
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2))
    return 0


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--child":
        sys.exit(child(Path(sys.argv[2]), sys.argv[4:]))
    sys.exit(main())
