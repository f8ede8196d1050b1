"""Every time the README and the manual state, measured on this machine, with the conditions beside each figure.

Each step runs the command a reader runs (``python -m ratio_bench.cli ...`` in a fresh process) and records its
wall time, the 1-minute load average before and after (the machine may be shared: a figure beside a load of 4
on 2 cores is not an idle figure), and the claim it stands for. A step gets an empty embedding cache of its own
(cold), or the shared one that the steps before it filled, as a reader's next command would. The log
(Markdown and JSON) goes to benchmarks/results/readme_timings.{md,json}. Usage:

    nice -n 10 python benchmarks/readme_timings.py --dataset ratio [--only bm25-mini,minilm-mini] [--timeout 900]

The default steps stay on the ``mini`` split (a few minutes in all on an idle 2-core CPU); ``--heavy`` adds the
claims on the full test split (tens of minutes).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"

STOCK_MTEB = """
import mteb
from sentence_transformers import SentenceTransformer
from ratio_bench.evaluation.scoring.mteb_tasks import ratio_tasks
from ratio_bench.retrieval.registry import REGISTRY, locate
model = SentenceTransformer(str(locate(REGISTRY["all-MiniLM-L6-v2"])))
tasks = ratio_tasks(dataset_path={dataset!r}, splits=["mini"])
for result in mteb.evaluate(model, tasks, cache=None).task_results:
    print(result.task_name, round(100 * result.get_score(), 1))
"""


@dataclass(frozen=True)
class Step:
    name: str
    claim: str  # where the figure is stated, and what it says
    words: tuple[str, ...]  # the ratio command, or ("python", CODE) for a Python snippet
    cache: str = "own"  # own: an empty cache of its own (cold); shared: the one earlier steps filled
    heavy: bool = False
    before: tuple[str, ...] = ()  # a command run first, untimed (what the step needs on disk)


def steps(dataset: str, corpus: str) -> list[Step]:
    d = dataset
    sample = (sys.executable, str(ROOT / "tests" / "wheel_smoke.py"), "sample", corpus, "{tmp}/papers")
    search_demo = ("index", "--dataset", d, "--split", "test", "--model", "all-MiniLM-L6-v2-moves-lex",
                   "--corpus-meta", corpus, "--out", "{tmp}/idx-test")  # fmt: skip
    return [
        Step("tutorial-build", "docs/tutorial.md step 2: `ratio dataset build` on 120 papers of the shared corpus",
             ("dataset", "build", "--config", "dev", "--corpus", "{tmp}/papers", "--out", "{tmp}/small", "--quiet"),
             before=sample),
        Step("self-test", "docs/install.md: `python -m ratio_bench` ... a one-second self-test", ("__main__",)),
        Step("bm25-mini", "README quick start 1: BM25 on mini",
             ("score", "--model", "bm25", "--dataset", d, "--split", "mini")),
        Step("minilm-mini", "README quick start 1 / docs/mini-split.md: MiniLM on mini, cold (fills the shared cache)",
             ("score", "--model", "all-MiniLM-L6-v2", "--dataset", d, "--split", "mini"), "shared"),
        Step("via-mteb-mini", "README: `--via mteb` on mini (the per-text cache, cold)",
             ("score", "--model", "all-MiniLM-L6-v2", "--dataset", d, "--split", "mini", "--via", "mteb")),
        Step("index-mini", "README quick start 3: `ratio index --split mini ... all-MiniLM-L6-v2-moves-lex` after "
             "the steps before it (the corpus vectors in the cache)",
             ("index", "--dataset", d, "--split", "mini", "--model", "all-MiniLM-L6-v2-moves-lex", "--out",
              "{tmp}/idx"), "shared"),
        Step("tutorial-walk", "docs/tutorial.md steps 2-5 as written (benchmarks/tutorial_walk.sh; no serve)",
             ("bash", str(ROOT / "benchmarks" / "tutorial_walk.sh")), heavy=True),
        Step("stock-mteb-mini", "README: stock mteb on mini (the README's Python block)",
             ("python", STOCK_MTEB.format(dataset=d)), heavy=True),
        Step("index-test", "README quick start 3 / docs/search.md: `make search-demo`'s index of the full test pool, "
             "cold (fills the shared cache)", search_demo, "shared", heavy=True),
        Step("index-test-warm", "README quick start 3 / docs/search.md: the same once the vectors are cached",
             search_demo, "shared", heavy=True),
    ]  # fmt: skip


@dataclass
class Measured:
    name: str
    claim: str
    command: str
    cache: str
    seconds: float | None
    load_before: float
    load_after: float
    peak_rss_mb: float
    exit_code: int | None
    note: str = ""
    started_utc: str = ""


def run_step(step: Step, tmp: Path, warm_cache: Path, timeout: float, corpus: str) -> Measured:
    cache = (
        warm_cache
        if step.cache == "shared"
        else Path(tempfile.mkdtemp(dir=tmp, prefix=f"{step.name}-cache-"))
    )
    env = {**os.environ, "RATIO_CACHE": str(cache), "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}
    env["PYTHONPATH"] = str(ROOT / "src") + os.pathsep + env.get("PYTHONPATH", "")
    words = [w.replace("{tmp}", str(tmp)) for w in step.words]
    if words[0] == "__main__":
        argv, shown = [sys.executable, "-m", "ratio_bench"], "python -m ratio_bench"
    elif words[0] == "bash":
        argv, shown = ["bash", words[1]], f"bash {Path(words[1]).relative_to(ROOT)}"
        env |= {"PY": sys.executable, "CORPUS": corpus, "HF_HUB_OFFLINE": "0"}  # its own loopback Hub
    elif words[0] == "python":
        argv, shown = [sys.executable, "-c", words[1]], "python -c <the README's mteb block>"
    else:
        argv, shown = [sys.executable, "-m", "ratio_bench.cli", *words], "ratio " + " ".join(step.words)
    rss_file = tmp / f"{step.name}.rss"
    if shutil.which("time") or Path("/usr/bin/time").exists():  # GNU time: the step's own peak RSS
        argv = ["/usr/bin/time", "-f", "%M", "-o", str(rss_file), *argv]
    if step.before:
        subprocess.run(
            [w.replace("{tmp}", str(tmp)) for w in step.before], env=env, check=True, timeout=timeout
        )
    load_before = os.getloadavg()[0]
    started = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
    start = time.perf_counter()
    try:
        done = subprocess.run(argv, env=env, cwd=tmp, capture_output=True, text=True, timeout=timeout)
        seconds, code, note = time.perf_counter() - start, done.returncode, ""
        if code:
            note = (done.stderr.strip().splitlines() or [""])[-1][:300]
        elif found := re.search(r"self-test +passed in ([0-9.]+ s)", done.stdout):
            note = f"the self-test itself: {found[1]}"  # the rest is start-up: imports, the model list
    except subprocess.TimeoutExpired:
        seconds, code, note = None, None, f"stopped after {timeout:.0f} s (--timeout)"
    text = rss_file.read_text().strip().splitlines() if rss_file.is_file() else []
    rss = int(text[-1]) / 1024 if text and text[-1].isdigit() else float("nan")
    return Measured(step.name, step.claim, shown, step.cache, seconds and round(seconds, 1), round(load_before, 2),
                    round(os.getloadavg()[0], 2), round(rss, 1), code, note, started)  # fmt: skip


def conditions(dataset: str) -> dict:
    import torch

    manifest = json.loads((Path(dataset) / "manifest.json").read_text()) if Path(dataset).is_dir() else {}
    return {
        "date_utc": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "host": platform.node(),
        "cpus": os.cpu_count(),
        "cpu": platform.processor() or platform.machine(),
        "python": platform.python_version(),
        "torch": torch.__version__,
        "torch_threads": torch.get_num_threads(),
        "dataset": f"{dataset} ({manifest.get('name')} {manifest.get('version')})",
        "nice": os.nice(0),
        "note": "a shared machine: the load average beside each figure says how many other jobs ran",
    }


def write_log(cond: dict, measured: list[Measured], out: Path) -> None:
    out.parent.mkdir(parents=True, exist_ok=True)
    out.with_suffix(".json").write_text(
        json.dumps({"conditions": cond, "steps": [asdict(m) for m in measured]}, indent=2) + "\n"
    )
    lines = ["# README and manual timings, measured", "", "Written by `benchmarks/readme_timings.py`.", ""]
    lines += [f"- {k}: {v}" for k, v in cond.items()]
    lines += ["", "| step | wall s | load 1-min before / after | cache | peak RSS MB | started (UTC) | the claim | command |",
              "| --- | ---: | --- | --- | ---: | --- | --- | --- |"]  # fmt: skip
    for m in measured:
        wall = f"{m.seconds}" if m.seconds is not None else "-"
        wall += f" (exit {m.exit_code}: {m.note})" if m.exit_code else f" ({m.note})" if m.note else ""
        lines.append(
            f"| {m.name} | {wall} | {m.load_before} / {m.load_after} | {m.cache} | {m.peak_rss_mb} | {m.started_utc} | {m.claim} "
            f"| `{m.command}` |"
        )
    out.write_text("\n".join(lines) + "\n")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dataset", default="ratio", help="a release folder (make demo's ./ratio)")
    ap.add_argument(
        "--corpus", default=str(ROOT.parent / "shared" / "corpus"), help="for the tutorial's sample"
    )
    ap.add_argument("--only", help="comma-separated step names")
    ap.add_argument("--heavy", action="store_true", help="also the full-test-split and stock-mteb claims")
    ap.add_argument("--timeout", type=float, default=1200, help="seconds per step (default 1200)")
    ap.add_argument("--out", type=Path, default=RESULTS / "readme_timings.md")
    args = ap.parse_args()
    dataset = str(Path(args.dataset).resolve())
    every = steps(dataset, str(Path(args.corpus).resolve()))
    chosen = [s for s in every if (args.heavy or not s.heavy)]
    if args.only:
        chosen = [s for s in every if s.name in args.only.split(",")]
    cond = conditions(dataset)
    tmp = Path(tempfile.mkdtemp(prefix="ratio-timings-"))
    warm = tmp / "warm-cache"
    measured = []
    kept = args.out.with_suffix(".json")
    if args.only and kept.is_file():  # a partial run replaces its own steps in the log and keeps the others
        earlier = json.loads(kept.read_text())
        measured = [Measured(**m) for m in earlier["steps"] if m["name"] not in {s.name for s in chosen}]
        runs = earlier["conditions"].get("earlier_runs_utc", []) + [earlier["conditions"]["date_utc"]]
        cond["earlier_runs_utc"] = sorted(set(runs))  # a step without a start time ran in the first of them
    try:
        for step in chosen:
            m = run_step(step, tmp, warm, args.timeout, str(Path(args.corpus).resolve()))
            print(f"{m.name}: {m.seconds} s (load {m.load_before} -> {m.load_after}){' ' + m.note if m.note else ''}",
                  flush=True)  # fmt: skip
            measured.append(m)
            write_log(cond, measured, args.out)  # after every step: a stopped run keeps what it measured
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
