"""``ratio build``: corpus -> mining -> assembly -> Hub-ready release folder, reusing finished stages.

The release is written to a staging folder and swapped into place at the end, so the output folder is
always either the previous complete release or the new one. ``manifest.json`` records the version, config,
lexicon hash, code version, row counts and a SHA-256 per file; it holds no timestamp, so two builds from the
same inputs are byte-identical. Timings and peak memory go to ``<work_dir>/build_report.json`` instead.
"""

from __future__ import annotations

import hashlib
import json
import resource
import shutil
import time
from pathlib import Path
from typing import Any

from ratio_bench import __version__
from ratio_bench.dataset.assemble import assemble
from ratio_bench.dataset.card import render_card
from ratio_bench.dataset.config import BuildConfig
from ratio_bench.dataset.layout import write_data
from ratio_bench.io import refuse_foreign_output, write_json
from ratio_bench.lexicon import Lexicon
from ratio_bench.mining.run import run_mining
from ratio_bench.mining.step import MiningSettings


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def file_checksums(root: Path) -> dict[str, str]:
    return {
        p.relative_to(root).as_posix(): sha256_file(p)
        for p in sorted(root.rglob("*"))
        if p.is_file() and p.name != "manifest.json"
    }


def is_release(folder: Path) -> bool:
    """A folder written by ``ratio build``: its manifest names a release (config, version and file checksums)."""
    try:
        manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return False
    return isinstance(manifest, dict) and {"config", "version", "files"} <= manifest.keys()


def _swap_into_place(stage: Path, out: Path) -> None:
    old = out.with_name(f".{out.name}.old")
    if old.exists():
        shutil.rmtree(old)
    if out.exists():
        out.rename(old)
    stage.rename(out)
    if old.exists():
        shutil.rmtree(old)


def build_release(
    cfg: BuildConfig, out: Path, workers: int = 1, progress: bool = True, repo_hint: str | None = None
) -> dict[str, Any]:
    refuse_foreign_output(out, is_release, "Ratio release")  # before any work: fail fast, delete nothing
    timings: dict[str, float] = {}
    t0 = time.perf_counter()
    lexicon = Lexicon.load(cfg.lexicon)
    mined = cfg.work_dir / "mined"
    stats = run_mining(
        cfg.corpus,
        mined,
        MiningSettings(lexicon_dir=str(cfg.lexicon), progress=progress),
        workers=workers,
        out_flag=f"work_dir in {cfg.path.name}",
    )
    timings["mining"] = round(time.perf_counter() - t0, 2)

    t1 = time.perf_counter()
    asm = assemble(cfg, mined, cfg.work_dir / "duckdb_tmp")
    timings["assembly"] = round(time.perf_counter() - t1, 2)

    t2 = time.perf_counter()
    out = out.resolve()
    stage = out.with_name(f".{out.name}.building")
    if stage.exists():
        shutil.rmtree(stage)
    stage.mkdir(parents=True)
    counts = write_data(asm, stage)
    (stage / "README.md").write_text(
        render_card(asm, cfg, stage, counts, stats, lexicon.fingerprint(), repo_hint or out.name),
        encoding="utf-8",
    )
    write_json(stage / "reports" / "assembly.json", asm.report)
    write_json(
        stage / "reports" / "mining.json",
        {k: v for k, v in stats.items() if k not in ("wall_seconds", "mb_per_second", "task_seconds")},
    )
    manifest = {
        "name": cfg.name,
        "version": cfg.version,
        "code_version": __version__,
        "config_file": cfg.path.name,
        "config": cfg.raw,
        "lexicon_version": lexicon.version,
        "lexicon_sha256": lexicon.fingerprint(),
        "rows": counts,
        "files": file_checksums(stage),
    }
    write_json(stage / "manifest.json", json.loads(json.dumps(manifest, default=str)))
    _swap_into_place(stage, out)
    asm.con.close()
    timings["write"] = round(time.perf_counter() - t2, 2)
    report = {
        "release": str(out),
        "timings_seconds": timings,
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "rows": counts,
        "assembly": asm.report,
    }
    write_json(cfg.work_dir / "build_report.json", report)
    return report
