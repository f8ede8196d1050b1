"""Append benchmark: `ratio dataset append` on the real corpus, as if the release were built on 2026-03-31 and the
arXiv months after it arrived as a new monthly drop.

A temporary "as of 2026-03-31" corpus is made from the corpus folder: every file whose dates run past the cut-off
is split by its ``date`` column into a base part (up to the cut-off) and the drop (after it); the other files are
symlinked. A base release is built from dataset_scripts/dev.yaml on the base corpus (this mines the whole corpus
once), the drop is appended as the next version (``<base version>+drop``), and the script prints what the append mined (vs the build's
mining), the snapshots it added, what it excluded, which files of the base release stayed byte-identical, the
`ratio check` verdict and whether the old snapshots' sha256 in the manifest are unchanged. With ``--rebuild``
it also times a full rebuild of the release from the whole corpus (base + drop), the alternative to an append.

Prints figures; asserts nothing. Nothing is written into the repository: everything lives in a temporary folder
that is removed at the end (``--keep`` leaves it). About 1 minute on a 2-core CPU shared with other work (mostly
the base build's mining), about 2 with ``--rebuild`` (`make bench-append`). With
``--rescore all-MiniLM-L6-v2 [--before OTHER/src]`` it scores the snapshots before and after the append on one
embedding cache per code tree and prints the texts each run encoded (a few minutes more). Usage:
    python benchmarks/append_snapshots.py [--corpus ../shared/corpus] [--cutoff 2026-03-31] [--rebuild] [--keep]
        [--rescore MODEL [--before SRC]]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

import pyarrow.compute as pc
import pyarrow.parquet as pq
import yaml
from rich.console import Console
from rich.table import Table

from ratio_bench.core.io import MANIFEST
from ratio_bench.core.relations import RELATIONS
from ratio_bench.dataset.append import REWRITTEN, append_release
from ratio_bench.dataset.build import build_release
from ratio_bench.dataset.check import check_release
from ratio_bench.dataset.config import load_config, read_config
from ratio_bench.dataset.contract import file_checksums, sha256_file
from ratio_bench.dataset.release import Release

REPO = Path(__file__).resolve().parents[1]


def default_corpus() -> Path:
    """The corpus as the tests find it: RATIO_SHARED_CORPUS, else ../shared/corpus from the repo root."""
    return Path(os.environ.get("RATIO_SHARED_CORPUS") or REPO.parent / "shared" / "corpus")


def split_corpus(corpus: Path, cutoff: str, base: Path, drop: Path) -> list[str]:
    """Symlink every Parquet file of ``corpus`` into ``base``, except those with dates after ``cutoff``: their
    rows up to it go to ``base``, the rest to ``drop`` (ISO date strings sort like the dates, and a partial date
    such as 2026-04 sorts after 2026-03-31). Returns the names of the split files."""
    base.mkdir()
    drop.mkdir()
    split = []
    for f in sorted(corpus.glob("*.parquet")):
        dates = pq.read_table(f, columns=["date"]).column("date")
        late = pc.fill_null(pc.greater(dates, cutoff), False)
        if not pc.any(late).as_py():
            (base / f.name).symlink_to(f.resolve())
            continue
        table = pq.read_table(f)
        pq.write_table(table.filter(pc.invert(late)), base / f.name, compression="zstd")
        pq.write_table(table.filter(late), drop / f"{f.stem}.after-{cutoff}.parquet", compression="zstd")
        split.append(f.name)
    return split


def write_config(tmp: Path, corpus: Path, work: Path, name: str) -> Path:
    """dataset_scripts/dev.yaml with its corpus and work_dir moved into the temporary folder."""
    raw = read_config(REPO / "dataset_scripts" / "dev.yaml")
    raw |= {"corpus": {"paths": [str(corpus)]}, "work_dir": str(work), "lexicon": str(REPO / raw["lexicon"])}
    path = tmp / name
    path.write_text(yaml.safe_dump(raw, sort_keys=False), encoding="utf-8")
    return path


def mined(folder: Path) -> dict[str, Any]:
    """Files, documents read, MB of raw text and wall seconds of one mining folder (its stats.json)."""
    stats = json.loads((folder / "stats.json").read_text(encoding="utf-8"))
    total = stats["corpus"]["total"]
    return {
        "files": len(stats["corpus"]["sources"]),
        "docs": total["papers_read"],
        "mb": total["raw_bytes"] / 1e6,
        "seconds": stats.get("wall_seconds") or 0.0,
    }


def checksums(release: Path) -> dict[str, str]:
    return file_checksums(release) | {MANIFEST: sha256_file(release / MANIFEST)}


def timed(fn, *args, **kwargs) -> tuple[Any, float]:
    t = time.perf_counter()
    out = fn(*args, **kwargs)
    return out, time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", type=Path, default=None, help="corpus folder (default: RATIO_SHARED_CORPUS)")
    ap.add_argument("--cutoff", default="2026-03-31", help="last day of the base corpus (ISO date)")
    ap.add_argument("--rebuild", action="store_true", help="also time a full rebuild with the drop included")
    ap.add_argument("--keep", action="store_true", help="keep the temporary folder (its path is printed)")
    ap.add_argument(
        "--rescore", metavar="MODEL", help="also score the snapshots with MODEL before the append and after it, "
        "on one embedding cache (what a re-score after a monthly drop encodes)",
    )  # fmt: skip
    ap.add_argument(
        "--before", type=Path, help="with --rescore: also the code of this src folder, side by side"
    )
    args = ap.parse_args()
    corpus = (args.corpus or default_corpus()).resolve()
    console = Console(width=120)
    tmp = Path(tempfile.mkdtemp(prefix="ratio-append-bench-"))
    try:
        run(console, corpus, args.cutoff, tmp, args.rebuild, Rescore(args.rescore, args.before, tmp))
    finally:
        if args.keep:
            console.print(f"kept {tmp}")
        else:
            shutil.rmtree(tmp)


class Rescore:
    """``ratio score --split snapshots`` on the release before the append and again after it, each code tree on an
    embedding cache of its own that the second run finds warm: the second run's texts encoded are what an append
    costs a re-score (with the per-text cache: only the new snapshots' texts no earlier pool held)."""

    def __init__(self, model: str | None, before: Path | None, tmp: Path) -> None:
        self.model, self.tmp, self.rows = model, tmp, []
        self.trees = [("after", REPO / "src")] + ([("before", before.resolve())] if before else [])

    def score(self, release: Path, when: str) -> None:
        if not self.model:
            return
        from engine_scoring import arm  # the same counting arms as benchmarks/engine_scoring.py

        argv = [
            "ratio_bench.cli",
            "score",
            "--model",
            self.model,
            "--dataset",
            str(release),
            "--split",
            "snapshots",
        ]
        for code, src in self.trees:
            cache = ["--cache-dir", str(self.tmp / f"embeddings-{code}")]
            self.rows.append(arm(f"{code} code, {when}", src, [*argv, *cache], self.tmp / "rescore.log"))

    def report(self, console: Console) -> None:
        if not self.rows:
            return
        t = Table(title=f"ratio score --split snapshots, {self.model}, one embedding cache per code tree")
        for col in ("run", "wall s", "model loads", "texts encoded"):
            t.add_column(col, justify="left" if col == "run" else "right")
        for r in self.rows:
            t.add_row(r["arm"], f"{r['wall_s']:.1f}", str(r["model_loads"]), f"{r['texts_encoded']:,}")
        console.print(t)


def run(console: Console, corpus: Path, cutoff: str, tmp: Path, rebuild: bool, rescore: Rescore) -> None:
    split = split_corpus(corpus, cutoff, tmp / "base", tmp / "drop")
    drop = sorted((tmp / "drop").iterdir())
    console.print(f"corpus {corpus}: split at {cutoff}: {', '.join(split) or 'nothing to split'}")
    cfg = load_config(write_config(tmp, tmp / "base", tmp / "work", "dev-base.yaml"))
    release = tmp / "ratio"
    build, build_s = timed(build_release, cfg, release, progress=False)
    before_manifest = json.loads((release / MANIFEST).read_text(encoding="utf-8"))
    before = checksums(release)
    rescore.score(release, "base release (cold cache)")
    version = f"{cfg.version}+drop"
    through = cfg.snapshots.end if cfg.snapshots else None  # the drop is complete to the config's end
    report, append_s = timed(
        append_release, release, drop, version, tmp / "append", progress=False, through=through
    )
    after_manifest = json.loads((release / MANIFEST).read_text(encoding="utf-8"))
    after = checksums(release)
    rescore.score(release, "after the append (same cache)")

    t = Table(title=f"What was mined (one worker): base build vs append of the drop after {cutoff}")
    for col in ("run", "files", "documents", "MB", "mining s", "total s"):
        t.add_column(col, justify="left" if col == "run" else "right")
    for name, m, total in (
        (f"build {cfg.version} (base corpus)", mined(cfg.work_dir / "mined"), build_s),
        (f"append {version} (the drop only)", mined(tmp / "append" / "mined"), append_s),
    ):
        t.add_row(
            name, str(m["files"]), f"{m['docs']:,}", f"{m['mb']:.1f}", f"{m['seconds']:.1f}", f"{total:.1f}"
        )
    console.print(t)
    console.print(f"build stages (s): {build['timings_seconds']}")

    snaps = after_manifest["snapshots"]
    t = Table(title="Snapshot splits after the append")
    for col in ("split", "version", *RELATIONS, "golds", "pool", "sha256 unchanged"):
        t.add_column(col, justify="left" if col in ("split", "version") else "right")
    for split_name, s in snaps.items():
        old = before_manifest["snapshots"].get(split_name)
        same = "-" if old is None else ("yes" if old == s else "NO")
        counts = [str(s["queries"].get(r, 0)) for r in RELATIONS]
        t.add_row(split_name, s["version"], *counts, f"{s['golds']:,}", f"{s['candidates']:,}", same)
    console.print(t)
    left = [
        x
        for x in after_manifest.get("snapshots_left_out") or []
        if x not in before_manifest.get("snapshots_left_out", [])
    ]
    console.print(
        f"added: {', '.join(report['snapshots_added']) or 'none'}; left out by the append: {left or 'none'}"
    )
    console.print("excluded by the append: " + ", ".join(f"{k} {n:,}" for k, n in report["excluded"].items()))

    kept = {f for f in before if f in after and before[f] == after[f]}
    changed = sorted(f for f in before if f not in kept and f not in REWRITTEN)
    console.print(
        f"files of the base release: {len(before)}; byte-identical after the append: {len(kept)} "
        f"(rewritten: {', '.join(sorted(f for f in REWRITTEN if f in before and f not in kept))}); "
        f"other files changed or gone: {changed or 'none'}; new files: {len(set(after) - set(before))}"
    )
    old_ok = all(after_manifest["snapshots"].get(k) == v for k, v in before_manifest["snapshots"].items())
    checks, check_s = timed(check_release, release)
    failed = [f"{c.name}: {c.detail}" for c in checks if not c.passed]
    console.print(
        f"ratio check: {len(checks) - len(failed)}/{len(checks)} passed ({check_s:.1f} s){'; ' if failed else ''}"
        + "; ".join(failed)
    )
    console.print(
        f"old snapshots' manifest entries (sha256, counts, version) unchanged: {'yes' if old_ok else 'NO'}"
    )
    console.print(f"versions: {[v['version'] for v in after_manifest['versions']]}")
    rescore.report(console)

    if rebuild:
        full = load_config(write_config(tmp, corpus, tmp / "work-full", "dev-full.yaml"))
        _, full_s = timed(build_release, full, tmp / "ratio-full", progress=False)
        console.print(
            f"append {append_s:.1f} s vs full rebuild with the drop included {full_s:.1f} s "
            f"({full_s / append_s:.1f}x)"
        )
        compare(console, Release.open(release), Release.open(tmp / "ratio-full"), report["snapshots_added"])
    else:
        console.print(
            f"append {append_s:.1f} s vs the base build {build_s:.1f} s ({build_s / append_s:.1f}x; a rebuild with "
            "the drop included mines more: run with --rebuild to time it)"
        )


def ids(release: Release, config: str, split: str) -> set[str]:
    if split not in release.splits(config):
        return set()
    return set(
        release.read(config, split, ["query_id" if config in RELATIONS else "id"]).column(0).to_pylist()
    )


def compare(console: Console, appended: Release, rebuilt: Release, added: list[str]) -> None:
    """The appended snapshots against the same periods of the full rebuild: an append should give what a rebuild
    gives (same queries, same pool), less only what the release already held."""
    t = Table(
        title="Appended snapshots vs the same periods in the full rebuild (rows in both / append only / rebuild only)"
    )
    t.add_column("split")
    for col in (*RELATIONS, "corpus", "same rows", "same sha256"):
        t.add_column(col, justify="right")
    for split in sorted(set(added) | {s for s in rebuilt.snapshots if s > min(added, default="")}):
        cells = []
        for config in (*RELATIONS, "corpus"):
            a, b = ids(appended, config, split), ids(rebuilt, config, split)
            cells.append(f"{len(a & b)} / {len(a - b)} / {len(b - a)}")
        rows = all(content(appended, c, split) == content(rebuilt, c, split) for c in (*RELATIONS, "corpus"))
        same = appended.snapshots.get(split, {}).get("sha256") == rebuilt.snapshots.get(split, {}).get(
            "sha256"
        )
        t.add_row(split, *cells, "yes" if rows else "no", "yes" if same else "no")
    console.print(t)
    console.print(
        "same rows but another sha256: the Parquet schema differs, not the data (DuckDB writes a column without "
        "nulls in its input as `not null`)"
    )


def content(release: Release, config: str, split: str) -> list[tuple]:
    """A split's rows, sorted, as plain values (equal tables compare equal whatever their Parquet schema)."""
    if split not in release.splits(config):
        return []
    return sorted(tuple(map(str, r.values())) for r in release.read(config, split).to_pylist())


if __name__ == "__main__":
    main()
