"""Running the mining stage: plan the units, run them on a datatrove executor, merge the task statistics."""

from __future__ import annotations

import contextlib
import dataclasses
import inspect
import json
import os
import threading
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from loguru import logger
from tqdm import tqdm

from ratio_bench import __version__
from ratio_bench.core import extras
from ratio_bench.core.errors import RatioError
from ratio_bench.core.io import sum_nested, write_json
from ratio_bench.core.relations import RELATIONS
from ratio_bench.lexicon import Lexicon
from ratio_bench.mining.children import die_with_parent
from ratio_bench.mining.cluster import pop_address, ray_session
from ratio_bench.mining.outdir import ROOT_FILES, exclusive, remove_stale_temps
from ratio_bench.mining.step import MineUnits, MiningSettings, read_task_stats
from ratio_bench.mining.units import group_units, plan_units

datatrove_executor = extras.lazy("datatrove.executor")

EXECUTORS = ("local", "slurm", "ray")


class PlanMismatchError(RatioError, RuntimeError):
    """The output folder holds a run made from other inputs or settings."""


# Bumped whenever segmentation, matching or cleaning changes what a run produces, so that a folder mined by an
# older version is not silently reused by `ratio dataset build`.
MINER_VERSION = 2


def _plan_record(units, tasks, settings: MiningSettings, lexicon: Lexicon) -> dict[str, Any]:
    return {
        "miner_version": MINER_VERSION,
        "units": [u.as_dict() for u in units],
        "tasks": [list(t) for t in tasks],
        "lexicon_version": lexicon.version,
        "lexicon_sha256": lexicon.fingerprint(),
        "settings": {
            "fmt": settings.reader.fmt,
            "text_format": settings.reader.text_format,
            "keep_categories": sorted(c.value for c in settings.reader.keep_categories),
            "lowercase": settings.lowercase,
            "keep_case": settings.keep_case,
            "min_chars": settings.min_chars,
            "task_bytes": settings.task_bytes,
        },
    }


class ExecutorOptionError(RatioError, ValueError):
    """An executor or executor option that cannot work."""


class MiningInputError(RatioError, FileNotFoundError):
    """No corpus files to mine."""


class MiningTasksFailedError(RatioError, RuntimeError):
    """Tasks of a cluster run ended without finishing (their logs say why); a rerun redoes only them."""


RAY_TASK_SECONDS = (
    4 * 3600
)  # one Ray task group's cap (--executor-option time=SECONDS): tasks are task_bytes big

# Arguments ratio mine sets itself, and the flag that sets each.
_OWN_OPTIONS = {"pipeline": None, "tasks": None, "workers": "--workers", "logging_dir": "--out"}


def _executor_class(kind: str):
    if kind == "local":
        return datatrove_executor.LocalPipelineExecutor
    if kind == "slurm":
        return datatrove_executor.SlurmPipelineExecutor
    if kind == "ray":
        return datatrove_executor.RayPipelineExecutor
    raise ExecutorOptionError(f"unknown executor {kind!r} for --executor; choose from {EXECUTORS}")


def make_executor(
    kind: str,
    pipeline: list,
    tasks: int,
    workers: int,
    logging_dir: Path,
    options: dict[str, Any] | None = None,
):
    """A datatrove executor of ``kind``; ``options`` are passed through (e.g. Slurm ``partition``, ``time``).

    Option names are checked against the executor's own arguments, so a typo is an error naming
    ``--executor-option`` rather than a TypeError from deep inside datatrove.
    """
    options = dict(options or {})
    cls = _executor_class(kind)
    for key in options:
        if key in _OWN_OPTIONS:
            flag = _OWN_OPTIONS[key]
            how = f"use {flag}" if flag else "it is set from the corpus plan"
            raise ExecutorOptionError(f"--executor-option {key}=...: ratio mine sets {key} itself ({how})")
    accepted = set(inspect.signature(cls.__init__).parameters) - {"self", *_OWN_OPTIONS}
    unknown = sorted(set(options) - accepted)
    if unknown:
        raise ExecutorOptionError(
            f"--executor-option {unknown[0]}=...: the {kind} executor has no option {unknown[0]!r}; "
            f"it accepts {', '.join(sorted(accepted))}"
        )
    if kind == "slurm":
        missing = {"partition", "time"} - set(options)
        if missing:
            raise ExecutorOptionError(
                f"the slurm executor needs {' and '.join(f'--executor-option {m}=...' for m in sorted(missing))}"
                " (e.g. --executor-option partition=cpu --executor-option time=04:00:00)"
            )
    if kind == "ray":
        # datatrove's Ray worker runs its ranks in a forked pool inside a threaded actor; a fork that inherits a
        # held lock hangs at the pool's teardown with the rank's work done (seen once in make test). A task group
        # older than this is killed and resubmitted, and its finished ranks are skipped: the wait has a cap.
        options.setdefault("time", RAY_TASK_SECONDS)
    return cls(pipeline=pipeline, tasks=tasks, workers=workers, logging_dir=str(logging_dir), **options)


def _plan_differences(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    """What differs between a folder's recorded plan and this run's, in words (most telling first)."""
    if old.get("miner_version") != new["miner_version"] or set(old) != set(new):
        return ["it was mined by another version of ratio"]
    out = []
    if old["lexicon_sha256"] != new["lexicon_sha256"]:
        out.append(f"the lexicon changed ({old['lexicon_version']} -> {new['lexicon_version']})")
    for key in sorted(set(old["settings"]) | set(new["settings"])):
        if old["settings"].get(key) != new["settings"].get(key):
            out.append(f"setting {key} was {old['settings'].get(key)!r}, now {new['settings'].get(key)!r}")

    def files(plan: dict[str, Any]) -> dict[str, list[dict]]:
        by_file: dict[str, list[dict]] = {}
        for unit in plan["units"]:
            by_file.setdefault(unit["path"], []).append(unit)
        return by_file

    before, now = files(old), files(new)
    for path in sorted(set(before) | set(now)):
        if path not in now:
            out.append(f"{path} is no longer an input")
        elif path not in before:
            out.append(f"{path} is a new input")
        elif before[path] != now[path]:
            b, n = before[path][0], now[path][0]
            what = [k for k in ("size", "mtime_ns", "digest") if b.get(k) != n.get(k)] or ["row groups"]
            out.append(f"{path} changed since it was mined ({', '.join(what)})")
    return out or ["its plan differs"]


def check_plan(plan_path: Path, plan: dict[str, Any]) -> None:
    """Refuse a folder whose recorded plan is not this run's, naming what changed and the fix."""
    old = json.loads(plan_path.read_text(encoding="utf-8"))
    if old == json.loads(json.dumps(plan, sort_keys=True)):
        return
    diffs = _plan_differences(old, plan)
    more = f" (and {len(diffs) - 1} more differences)" if len(diffs) > 1 else ""
    raise PlanMismatchError(
        f"{plan_path.parent} holds a mining run of other inputs or settings: {diffs[0]}{more}; "
        f"delete {plan_path.parent} to mine again, or use another output folder"
    )


def available_cores() -> int:
    """The CPUs this process may run on (its affinity mask, which a container or ``taskset`` narrows)."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def _workers(workers: int | None, executor: str, address: str | None, tasks: int) -> int:
    """Tasks at once: as asked (at most one per task); by default one per core of this machine where it runs
    them (local, a private Ray cluster), else every task, the cluster's scheduler deciding what runs."""
    if workers:
        return max(1, min(workers, tasks))
    if executor == "local" or (executor == "ray" and not address):
        return max(1, min(available_cores(), tasks))
    return tasks


def run_mining(
    corpus: list[str | Path],
    out_dir: str | Path,
    settings: MiningSettings,
    workers: int | None = 1,
    executor: str = "local",
    executor_options: dict[str, Any] | None = None,
    verbose: bool = False,
) -> dict[str, Any] | None:
    """Mine ``corpus`` into ``out_dir``; returns the merged statistics (None when jobs were only submitted).

    ``workers``: tasks at once (None: see :func:`_workers`). A folder is reused only
    when its plan (inputs by content fingerprint, their grouping into tasks, lexicon, settings) is this run's.
    On Ray the run waits for its tasks like a local one (see :mod:`ratio_bench.mining.cluster` for which
    cluster); on Slurm it only submits them.
    """
    out = Path(out_dir)
    lexicon = Lexicon.load(settings.lexicon_dir)
    units = plan_units(corpus, strict=settings.reader.strict)
    if not units:
        raise MiningInputError(f"no corpus files under {', '.join(map(str, corpus))} (check --corpus)")
    tasks = group_units(units, settings.task_bytes)
    plan = _plan_record(units, tasks, settings, lexicon)
    options = dict(executor_options or {})
    address = pop_address(options) if executor == "ray" else None
    workers = _workers(workers, executor, address, len(tasks))
    waits = executor in ("local", "ray")  # the run itself waits for its tasks (Slurm only submits them)
    # one bar for the stage (tasks done, with its ETA) instead of one per task
    task_settings = dataclasses.replace(settings, progress=False) if waits else settings
    step = MineUnits(units, out, task_settings, tasks)
    step.quiet_logs = executor == "local" and not verbose  # a cluster's task logs stay (its only trace)
    ex = make_executor(
        executor,
        [step],
        tasks=len(tasks),
        workers=workers,
        logging_dir=out / "logs",
        options=options,
    )
    if not verbose:
        logger.disable("datatrove")
    with exclusive(out) if waits else contextlib.nullcontext():
        if waits:
            remove_stale_temps([out / name for name in ROOT_FILES])
        plan_path = out / "plan.json"
        if plan_path.exists():
            check_plan(plan_path, plan)
        else:
            write_json(plan_path, plan)
        start = time.perf_counter()
        pending = waits and bool(ex.get_incomplete_ranks())
        bar = _stage_bar(out / "logs" / "completions", len(tasks)) if waits and settings.progress else None
        cluster = (
            ray_session(address, workers, verbose)
            if executor == "ray" and pending
            else contextlib.nullcontext()
        )
        with die_with_parent(), cluster, bar or contextlib.nullcontext():
            ex.run()
        if not waits:
            return None
        failed = ex.get_incomplete_ranks() if pending else []
        if failed:  # the local executor raises itself; datatrove's Ray executor only logs a warning
            raise MiningTasksFailedError(
                f"{len(failed)} of {len(tasks)} mining tasks did not finish (first: task {failed[0]}, log "
                f"{out / 'logs' / 'logs' / f'task_{failed[0]:05d}.log'}); run the same command again to redo them"
            )
        # A run that found every task done keeps the wall time of the run that did them.
        wall = time.perf_counter() - start if pending else _previous_wall_seconds(out)
        return merge_stats(out, wall_seconds=wall)


@contextlib.contextmanager
def _stage_bar(completions: Path, tasks: int, every_s: float = 0.5) -> Iterator[None]:
    """One progress bar over the mining tasks while they run, read from datatrove's completion markers (one
    file per finished task, whichever process ran it), so tasks run in worker processes count too."""

    def done() -> int:
        return sum(1 for _ in completions.iterdir()) if completions.is_dir() else 0

    bar = tqdm(total=tasks, initial=done(), desc=f"mining ({tasks:,} tasks)", unit=" task")
    stop = threading.Event()

    def poll() -> None:
        while not stop.wait(every_s):
            bar.update(done() - bar.n)

    thread = threading.Thread(target=poll, daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()
        bar.update(done() - bar.n)
        bar.close()


def _previous_wall_seconds(out: Path) -> float | None:
    path = out / "stats.json"
    return json.loads(path.read_text(encoding="utf-8")).get("wall_seconds") if path.is_file() else None


def rejects_logged(stats: dict[str, Any]) -> dict[str, int]:
    """How many rows ``rejects/*.jsonl`` holds, by origin: records the corpus stage dropped or flagged
    (``corpus.total``) and candidates the miner rejected (``rejects``), which together are every row."""
    total = stats["corpus"].get("total", {})
    out = {
        "corpus_dropped": sum(total.get("rejected", {}).values()),
        "corpus_flagged": sum(total.get("flagged", {}).values()),
        "mining": sum(stats.get("rejects", {}).values()),
    }
    return {**out, "rows": sum(out.values())}


def merge_stats(out_dir: str | Path, wall_seconds: float | None = None) -> dict[str, Any]:
    """Sum the per-task statistics into ``stats.json`` (also the entry point after a cluster run)."""
    out = Path(out_dir)
    if not (out / "plan.json").is_file():
        raise MiningInputError(
            f"{out} is not a mining folder (no plan.json); run ratio mine --out {out} first"
        )
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
        "tasks_planned": len(plan["tasks"]),
        "corpus": merged.get("corpus", {}),
        **mining,
        "markers_fired": {r: len(fired.get(r, {})) for r in RELATIONS},
        "markers_kept": {r: len(kept.get(r, {})) for r in RELATIONS},
        "top_markers": {r: [[m, n] for m, n in Counter(kept.get(r, {})).most_common(20)] for r in RELATIONS},
        "task_seconds": round(merged.get("seconds", 0.0), 2),
    }
    stats["rejects_logged"] = rejects_logged(stats)
    raw = stats["corpus"].get("total", {}).get("raw_bytes", 0)
    if wall_seconds:
        stats["wall_seconds"] = round(wall_seconds, 2)
        stats["mb_per_second"] = round(raw / 1e6 / wall_seconds, 2)
    write_json(out / "stats.json", stats)
    return stats
