"""Running the mining stage: plan the units, run them on a datatrove executor, merge the task statistics."""

from __future__ import annotations

import json
import time
from collections import Counter
from pathlib import Path
from typing import Any

from ratio_bench import __version__
from ratio_bench.errors import RatioError
from ratio_bench.io import sum_nested, write_json
from ratio_bench.lexicon import RELATIONS, Lexicon
from ratio_bench.mining.step import MineUnits, MiningSettings, read_task_stats
from ratio_bench.mining.units import plan_units

EXECUTORS = ("local", "slurm", "ray")


class PlanMismatchError(RatioError, RuntimeError):
    """The output folder holds a run made from other inputs or settings."""


# Bumped whenever segmentation, matching or cleaning changes what a run produces, so that a folder mined by an
# older version is not silently reused by `ratio build`.
MINER_VERSION = 2


def _plan_record(units, settings: MiningSettings, lexicon: Lexicon) -> dict[str, Any]:
    return {
        "miner_version": MINER_VERSION,
        "units": [u.as_dict() for u in units],
        "lexicon_version": lexicon.version,
        "lexicon_sha256": lexicon.fingerprint(),
        "settings": {
            "fmt": settings.reader.fmt,
            "text_format": settings.reader.text_format,
            "keep_categories": sorted(c.value for c in settings.reader.keep_categories),
            "lowercase": settings.lowercase,
            "keep_case": settings.keep_case,
            "min_chars": settings.min_chars,
        },
    }


def make_executor(
    kind: str,
    pipeline: list,
    tasks: int,
    workers: int,
    logging_dir: Path,
    options: dict[str, Any] | None = None,
):
    """A datatrove executor of ``kind``; ``options`` are passed through (e.g. Slurm ``partition``, ``time``)."""
    options = dict(options or {})
    if kind == "local":
        from datatrove.executor import LocalPipelineExecutor

        return LocalPipelineExecutor(
            pipeline=pipeline, tasks=tasks, workers=workers, logging_dir=str(logging_dir), **options
        )
    if kind == "slurm":
        from datatrove.executor import SlurmPipelineExecutor

        missing = {"partition", "time"} - set(options)
        if missing:
            raise ValueError(
                f"the slurm executor needs options {sorted(missing)} (e.g. --executor-option partition=cpu)"
            )
        return SlurmPipelineExecutor(
            pipeline=pipeline, tasks=tasks, workers=workers, logging_dir=str(logging_dir), **options
        )
    if kind == "ray":
        from datatrove.executor import RayPipelineExecutor

        return RayPipelineExecutor(
            pipeline=pipeline, tasks=tasks, workers=workers, logging_dir=str(logging_dir), **options
        )
    raise ValueError(f"unknown executor {kind!r}; choose from {EXECUTORS}")


def run_mining(
    corpus: list[str | Path],
    out_dir: str | Path,
    settings: MiningSettings,
    workers: int = 1,
    executor: str = "local",
    executor_options: dict[str, Any] | None = None,
    verbose: bool = False,
) -> dict[str, Any] | None:
    """Mine ``corpus`` into ``out_dir``; returns the merged statistics (None when jobs were only submitted)."""
    out = Path(out_dir)
    lexicon = Lexicon.load(settings.lexicon_dir)
    units = plan_units(corpus)
    if not units:
        raise FileNotFoundError(f"no corpus files under {[str(c) for c in corpus]}")
    plan = _plan_record(units, settings, lexicon)
    plan_path = out / "plan.json"
    if plan_path.exists():
        if json.loads(plan_path.read_text(encoding="utf-8")) != json.loads(json.dumps(plan, sort_keys=True)):
            raise PlanMismatchError(
                f"{out} holds a mining run of other inputs or settings; use another --out or delete it"
            )
    else:
        write_json(plan_path, plan)
    if not verbose:
        from loguru import logger

        logger.disable("datatrove")
    start = time.perf_counter()
    ex = make_executor(
        executor,
        [MineUnits(units, out, settings)],
        tasks=len(units),
        workers=workers,
        logging_dir=out / "logs",
        options=executor_options,
    )
    ex.run()
    if executor != "local":
        return None
    return merge_stats(out, wall_seconds=time.perf_counter() - start)


def merge_stats(out_dir: str | Path, wall_seconds: float | None = None) -> dict[str, Any]:
    """Sum the per-task statistics into ``stats.json`` (also the entry point after a cluster run)."""
    out = Path(out_dir)
    tasks = read_task_stats(out)
    plan = json.loads((out / "plan.json").read_text(encoding="utf-8"))
    merged = sum_nested([{k: v for k, v in t.items() if k != "units"} for t in tasks])
    mining = merged.get("mining", {})
    kept = mining.get("marker_kept", {})
    fired = mining.get("marker_fired", {})
    stats = {
        "code_version": __version__,
        "lexicon_version": plan["lexicon_version"],
        "lexicon_sha256": plan["lexicon_sha256"],
        "tasks_done": len(tasks),
        "tasks_planned": len(plan["units"]),
        "corpus": merged.get("corpus", {}),
        **mining,
        "markers_fired": {r: len(fired.get(r, {})) for r in RELATIONS},
        "markers_kept": {r: len(kept.get(r, {})) for r in RELATIONS},
        "top_markers": {r: [[m, n] for m, n in Counter(kept.get(r, {})).most_common(20)] for r in RELATIONS},
        "task_seconds": round(merged.get("seconds", 0.0), 2),
    }
    raw = stats["corpus"].get("total", {}).get("raw_bytes", 0)
    if wall_seconds:
        stats["wall_seconds"] = round(wall_seconds, 2)
        stats["mb_per_second"] = round(raw / 1e6 / wall_seconds, 2)
    write_json(out / "stats.json", stats)
    return stats
