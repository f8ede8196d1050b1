"""The scale curve (issue 49): each stage at factors 1, 4, 16 (64 where it fits) of a base sample, timed, with
the peak RSS of its process tree and the disk it leaves, fitted exponents, and a projection to the paper's sizes.

The corpus at factor f is f distinct copies of a seeded sample of the shared corpus's full texts, made by
``ratio_bench.corpus.scale`` outside the repository (--data). Each stage runs as a user runs it, one ``ratio``
command in a fresh process:

  mining     ratio mine run --corpus X --out W/mined              (default workers: one per core)
  build      ratio dataset build --config C --work-dir W          (mining reused: assembly + check)
  check      ratio dataset check R
  append     ratio dataset append --dataset R --corpus M          (M: f x base/10 new papers of 2026-07)
  bm25       ratio score --model bm25 --dataset R --split test    (every test query)
  minilm     ratio score --model all-MiniLM-L6-v2 --sample Q      (whole test pool encoded, fresh cache)

C is the dev preset with this corpus, no query caps (so pools grow with the corpus rather than hitting
max_queries) and absolute paths. Usage:
    python benchmarks/scale.py --base 500 --factors 1 4 16 [--minilm-factors 1 4] [--data /work/scale-data]
        [--log benchmarks/results/scale-cpu.json]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import sys
from pathlib import Path

import pyarrow.parquet as pq
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
from measure import disk_mb, run_measured  # noqa: E402
from ratio_bench.corpus.scale import ScaleSpec, base_sample, write_scaled  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
PAPER = {"train": 13_787_834, "validation": 361_172, "test": 404_371}  # the spec's candidate pools
PAPER_TEST_QUERIES = 109_509  # the spec's test golds (Table 6), one query each
PAPER_SENTENCE_PAIRS = 366_600_000  # the spec's consecutive sentence pairs matched against the lexicon (§3)
RATIO = [sys.executable, "-m", "ratio_bench.cli"]


def scale_config(corpus: Path, path: Path) -> Path:
    cfg = yaml.safe_load((REPO / "dataset_scripts" / "dev.yaml").read_text())
    cfg["release"] = {**cfg["release"], "name": "ratio-scale"}
    cfg["release"].pop("corpus_sha256", None)
    cfg["corpus"] = {"paths": [str(corpus)]}
    cfg["lexicon"] = str(REPO / "lexicon" / "v1")
    for split in cfg["sampling"].values():
        split["max_queries"] = {r: None for r in split["max_queries"]}
    path.write_text(yaml.safe_dump(cfg, sort_keys=False))
    return path


def stage(name: str, cmd: list[str], env: dict | None = None, timeout_s: float = 1800) -> dict:
    m = run_measured([*RATIO, *cmd], env=env, timeout_s=timeout_s)
    ok = m.returncode in (0,) or (name == "check" and m.returncode == 1)
    print(f"  {name:8s} {m.wall_s:8.1f} s  {m.peak_rss_mb:7.0f} MB  rc={m.returncode}", flush=True)
    out = {
        "stage": name,
        "wall_s": round(m.wall_s, 2),
        "peak_rss_mb": round(m.peak_rss_mb, 1),
        "rc": m.returncode,
    }
    if not ok:
        out["error"] = m.output[-1500:]
    return out


def pools(release: Path) -> dict[str, int]:
    """Candidates per split of a release (the corpus config's rows)."""
    out = {}
    for split in ("train", "validation", "test"):
        files = sorted((release / "data" / "corpus").glob(f"{split}-*.parquet"))
        out[split] = sum(pq.ParquetFile(f).metadata.num_rows for f in files)
    return out


def test_queries(release: Path) -> int:
    """Queries of the test split (every relation), from the release's manifest."""
    rows = json.loads((release / "manifest.json").read_text())["rows"]
    return sum(rows.get(f"{r}-queries", {}).get("test", 0) for r in ("address", "broaden", "specify"))


def run_factor(base, f: int, args, data: Path) -> dict:
    root = data / f"x{f}"
    corpus, work, release = root / "corpus", root / "work", root / "release"
    if not corpus.is_dir():
        write_scaled(base, ScaleSpec(factor=f, seed=args.seed), corpus)
    for p in (work, release, root / "month", root / "cache", root / "append-work"):
        shutil.rmtree(p, ignore_errors=True)
    cfg = scale_config(corpus, root / "scale.yaml")
    papers = base.num_rows * f
    print(f"factor {f}: {papers:,} papers, corpus {disk_mb(corpus):.0f} MB", flush=True)
    rows = [
        stage("mining", ["mine", "run", "--corpus", str(corpus), "--out", str(work / "mined"), "--quiet"])
    ]
    rows[-1]["disk_mb"] = round(disk_mb(work / "mined"), 1)
    mined = json.loads((work / "mined" / "stats.json").read_text()) if rows[-1]["rc"] == 0 else {}
    rows[-1]["sentence_pairs"] = mined.get("sentence_pairs", 0)
    rows[-1]["tuples"] = sum(mined.get("tuples", {}).values())
    rows.append(
        stage(
            "build",
            [
                "dataset",
                "build",
                "--config",
                str(cfg),
                "--out",
                str(release),
                "--work-dir",
                str(work),
                "--quiet",
            ],
        )
    )
    rows[-1]["disk_mb"] = round(disk_mb(release), 1)
    rows.append(stage("check", ["dataset", "check", str(release)]))
    size = pools(release) if (release / "manifest.json").is_file() else {}
    queries = test_queries(release) if size else 0
    env = {**os.environ, "RATIO_CACHE": str(root / "cache")}
    rows.append(
        stage(
            "bm25",
            [
                "score",
                "--model",
                "bm25",
                "--dataset",
                str(release),
                "--split",
                "test",
                "--out",
                str(root / "bm25.json"),
            ],
            env,
        )
    )
    if f in args.minilm_factors:
        rows.append(
            stage(
                "minilm",
                [
                    "score",
                    "--model",
                    "all-MiniLM-L6-v2",
                    "--dataset",
                    str(release),
                    "--split",
                    "test",
                    "--sample",
                    str(args.minilm_queries),
                    "--cache-dir",
                    str(root / "cache" / "embeddings"),
                    "--out",
                    str(root / "minilm.json"),
                ],
                env,
            )
        )
        rows[-1]["disk_mb"] = round(disk_mb(root / "cache"), 1)
    if args.append:
        month = root / "month"
        n = max(1, base.num_rows // 10)
        write_scaled(base.slice(0, n), ScaleSpec(factor=f, seed=args.seed + 1, dates=("2026-07",)), month)
        rows.append(
            stage(
                "append",
                [
                    "dataset",
                    "append",
                    "--dataset",
                    str(release),
                    "--corpus",
                    str(month),
                    "--version",
                    "0.2.1",
                    "--work-dir",
                    str(root / "append-work"),
                    "--quiet",
                ],
            )
        )
    for r in rows:
        r.update(factor=f, papers=papers, pools=size, test_queries=queries)
    if not args.keep:
        shutil.rmtree(work / "duckdb_tmp", ignore_errors=True)
    return {
        "factor": f,
        "papers": papers,
        "corpus_mb": round(disk_mb(corpus), 1),
        "pools": size,
        "stages": rows,
    }


def fit(xs: list[float], ys: list[float]) -> float | None:
    """The exponent b of y = a x^b, least squares in log-log (None with fewer than two points)."""
    pts = [(math.log(x), math.log(y)) for x, y in zip(xs, ys, strict=True) if x > 0 and y > 0]
    if len(pts) < 2:
        return None
    mx = sum(p[0] for p in pts) / len(pts)
    my = sum(p[1] for p in pts) / len(pts)
    sxx = sum((p[0] - mx) ** 2 for p in pts)
    return round(sum((p[0] - mx) * (p[1] - my) for p in pts) / sxx, 2) if sxx else None


def size_measure(name: str, row: dict) -> tuple[int, int]:
    """(ours, the paper's) size a stage is projected on: the mined sentence pairs for mining, queries x
    candidates for BM25 (every query scored against the pool), the test pool for MiniLM (the encode dominates;
    queries are sampled), all pools for the build, check and append."""
    if name == "mining":
        return row.get("sentence_pairs", 0), PAPER_SENTENCE_PAIRS
    if name == "bm25":
        return row["pools"].get("test", 0) * row.get("test_queries", 0), PAPER["test"] * PAPER_TEST_QUERIES
    if name == "minilm":
        return row["pools"].get("test", 0), PAPER["test"]
    return sum(row["pools"].values()), sum(PAPER.values())


def summarise(factors: list[dict], fit_from: int = 1) -> dict:
    """Per stage: exponents of time and RSS against papers (fitted on factors >= ``fit_from``: at the smallest
    sizes a stage's fixed start-up dominates), and the projection to the paper's pools from the largest factor.

    Hours on 16 cores and on N Ray workers assume the map stages (mining, encoding) divide by the cores they
    get, which is what their design allows (independent tasks; torch's threads), and not the global ones."""
    out = {}
    names = sorted({r["stage"] for f in factors for r in f["stages"]})
    for name in names:
        every = [r for f in factors for r in f["stages"] if r["stage"] == name and "error" not in r]
        rows = [r for r in every if r["factor"] >= fit_from]
        rows = rows if len(rows) >= 2 else every  # a stage measured at one or two small factors only
        if not rows:
            continue
        xs = [r["papers"] for r in rows]
        b_t, b_m = fit(xs, [r["wall_s"] for r in rows]), fit(xs, [r["peak_rss_mb"] for r in rows])
        last = max(rows, key=lambda r: r["papers"])
        # between the two largest factors: what the next factor would cost, start-up costs least in it
        top = sorted(rows, key=lambda r: r["papers"])[-2:]
        b_last = fit([r["papers"] for r in top], [r["wall_s"] for r in top]) if len(top) == 2 else None
        ours, paper = size_measure(name, last)
        # the exponent against the measure the stage is projected on, from the largest two factors
        b_p = (
            fit([size_measure(name, r)[0] for r in top], [r["wall_s"] for r in top]) if len(top) == 2 else b_t
        )
        scale = paper / ours if ours else None
        proj = None
        if scale:
            hours = last["wall_s"] * scale ** max(b_p or 1.0, 1.0) / 3600  # never better than linear
            rss = last["peak_rss_mb"] * scale ** max(b_m or 0.0, 0.0)
            proj = {
                "hours_2_cores": round(hours, 2),
                "peak_rss_gb": round(rss / 1024, 1),
                "scale_from_largest": round(scale, 1),
            }
        out[name] = {
            "time_exponent": b_t,
            "last_step_time_exponent": b_last,
            "projection_exponent": b_p,
            "rss_exponent": b_m,
            "points": len(rows),
            "projection": proj,
        }
    return out


def print_table(result: dict, fit_from: int) -> None:
    """The log as markdown: stage x factor (time s / peak RSS MB / disk MB), exponents, projection."""
    factors = result["factors"]
    print(
        "| stage | "
        + " | ".join(f"x{f['factor']} ({f['papers']:,} papers)" for f in factors)
        + " | time exp. (last step) | RSS exp. | paper's size: h (2 cores) | peak GB |"
    )
    print("| --- " * (len(factors) + 5) + "|")
    fitted = summarise(factors, fit_from)
    for name, s in fitted.items():
        cells = []
        for f in factors:
            r = next((r for r in f["stages"] if r["stage"] == name), None)
            if r is None or "error" in r:
                cells.append("-" if r is None else "failed")
            else:
                disk = f" / {r['disk_mb']:.0f} MB" if r.get("disk_mb") else ""
                cells.append(f"{r['wall_s']:.1f} s / {r['peak_rss_mb']:.0f} MB{disk}")
        p = s["projection"] or {}
        print(
            f"| {name} | "
            + " | ".join(cells)
            + f" | {s['time_exponent']} ({s['last_step_time_exponent']}) | {s['rss_exponent']} | "
            f"{p.get('hours_2_cores', '-')} | {p.get('peak_rss_gb', '-')} |"
        )
    print()
    print("| factor | papers | corpus MB | train pool | validation pool | test pool | test queries |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for f in factors:
        pl = f["pools"]
        print(
            f"| {f['factor']} | {f['papers']:,} | {f['corpus_mb']} | {pl.get('train', 0):,} | "
            f"{pl.get('validation', 0):,} | {pl.get('test', 0):,} | {f.get('test_queries', 0):,} |"
        )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", type=Path, default=REPO.parent / "shared" / "corpus")
    ap.add_argument("--data", type=Path, default=Path("/work/scale-data"))
    ap.add_argument("--base", type=int, default=500, help="full-text papers in the base sample")
    ap.add_argument("--factors", type=int, nargs="+", default=[1, 4, 16])
    ap.add_argument("--minilm-factors", type=int, nargs="*", default=[1, 4])
    ap.add_argument(
        "--minilm-queries", type=int, default=50, help="--sample per relation (the pool is whole)"
    )
    ap.add_argument("--append", action="store_true", help="also time an append of one month")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("--log", type=Path)
    ap.add_argument("--fit-from", type=int, default=1, help="fit exponents on factors from this one up")
    ap.add_argument("--table", type=Path, help="print the markdown table of a log written before, and exit")
    args = ap.parse_args()
    if args.table:
        print_table(json.loads(args.table.read_text()), args.fit_from)
        return
    data = args.data / f"scale-base{args.base}-seed{args.seed}"
    data.mkdir(parents=True, exist_ok=True)
    base_file = data / "base.parquet"
    if not base_file.is_file():
        pq.write_table(base_sample([args.corpus], args.base, seed=args.seed), base_file)
    base = pq.read_table(base_file)
    print(
        f"base: {base.num_rows} full-text papers of {args.corpus} (seed {args.seed}); "
        f"{len(os.sched_getaffinity(0))} cores, load {os.getloadavg()[0]:.1f}",
        flush=True,
    )
    factors = []
    for f in args.factors:
        factors.append(run_factor(base, f, args, data))
        result = {
            "base_papers": base.num_rows,
            "cores": len(os.sched_getaffinity(0)),
            "factors": factors,
            "fit": summarise(factors),
            "paper_pools": PAPER,
        }
        if args.log:
            args.log.write_text(json.dumps(result, indent=2) + "\n")
    for name, s in result["fit"].items():
        print(f"{name:8s} time^{s['time_exponent']}  rss^{s['rss_exponent']}  {s['projection']}")


if __name__ == "__main__":
    main()
