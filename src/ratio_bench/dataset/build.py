"""``ratio dataset build``: corpus -> mining -> assembly -> Hub-ready release folder, reusing finished stages.

The release is written to a staging folder, checked by ``ratio dataset check`` and only then swapped into place, so the
output folder is always either the previous complete release or the new one; a folder that is not a Ratio release
is refused before any work starts (:func:`ratio_bench.core.io.prepare_output_dir`). ``manifest.json`` records the version, config,
lexicon hash, code version, row counts and a SHA-256 per file; it holds no timestamp, so two builds from the
same inputs are byte-identical. Timings and peak memory go to ``<work_dir>/build_report.json`` instead.
"""

from __future__ import annotations

import dataclasses
import json
import resource
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ratio_bench import __version__
from ratio_bench.core.io import MANIFEST, folder_lock, prepare_output_dir, staged_dir, write_json
from ratio_bench.core.relations import RELATIONS
from ratio_bench.corpus.readers import ReaderSettings
from ratio_bench.dataset.assemble import Assembly, assemble, mini_manifest
from ratio_bench.dataset.card import render_card
from ratio_bench.dataset.check import all_passing, require_passing
from ratio_bench.dataset.config import BuildConfig
from ratio_bench.dataset.contract import KEEP, KIND, file_checksums, split_sha256
from ratio_bench.dataset.custody import (
    CUSTODY_KIND,
    WORKS,
    check_custody,
    custody_manifest,
    custody_path,
    split_rows,
    withheld_record,
    write_custody_works,
)
from ratio_bench.dataset.identity import corpus_fingerprint, release_identity
from ratio_bench.dataset.layout import works_file, write_data, write_works
from ratio_bench.lexicon import Lexicon
from ratio_bench.mining.outdir import FolderBusyError
from ratio_bench.mining.run import PlanMismatchError, run_mining
from ratio_bench.mining.step import MiningSettings


def snapshot_manifest(report: dict[str, Any], files: dict[str, str], version: str) -> dict[str, Any]:
    """The manifest's ``snapshots`` (per split: period, dates, queries, candidates, sha256 of its files, and the
    version that introduced it) and ``snapshots_left_out``, from the assembly report's ``snapshots``."""
    return {
        "snapshots": {
            split: {
                "period": p["period"],
                "start": p["start"],
                "end": p["end"],
                "queries": p["queries_by_relation"],
                "candidates": p["candidates"],
                "golds": p["golds"],
                "sha256": split_sha256(files, split),
                "version": version,
            }
            for split, p in report["periods"].items()
        },
        "snapshots_left_out": report["left_out"],
    }


@dataclass(frozen=True)
class BuildOptions:
    """How one build runs and what it is called: ``name``/``version`` (``--name``/``--version``) give a build
    from other inputs its own identity; ``own_config``: the config is the user's file (not a shipped preset);
    ``work_dir`` overrides the config's (default beside the release: :meth:`BuildConfig.work_folder`);
    ``wait_s``: how long to wait for another run that holds the release's lock."""

    name: str | None = None
    version: str | None = None
    own_config: bool = True
    work_dir: Path | None = None
    wait_s: float = 0.0


WAIT_FLAG = "--wait SECONDS"  # how build and append wait for another writer (dataset/cli.py)
MIN_TEST_QUERIES = 100  # fewer test queries for a relation: its figures rest on few queries (warned, flagged)


def few_test_queries(counts: dict[str, dict[str, int]]) -> dict[str, int]:
    """{relation: test queries} of the relations with queries but fewer than :data:`MIN_TEST_QUERIES` on test."""
    tests = {r: counts.get(r, {}).get("test", 0) for r in RELATIONS}
    return {r: n for r, n in tests.items() if 0 < n < MIN_TEST_QUERIES}


def build_release(
    cfg: BuildConfig,
    out: Path,
    workers: int = 1,
    progress: bool = True,
    repo_hint: str | None = None,
    strict: bool = False,
    options: BuildOptions | None = None,
) -> dict[str, Any]:
    """``strict``: fail on malformed corpus input (as ``ratio mine --strict``) instead of rejecting it.

    The release's write lock is held from the first look at ``out`` to the swap (:func:`folder_lock`), so a
    second build, append or silver run on the same release is refused naming this one.
    """
    options = options or BuildOptions()
    prepare_output_dir(out, KIND, keep=KEEP)  # refuse a folder that is not ours before taking its lock
    with folder_lock(out, f"ratio dataset build --out {out}", options.wait_s, WAIT_FLAG):
        return _build(cfg, out, workers, progress, repo_hint, strict, options)


def _mine(
    cfg: BuildConfig, mined: Path, workers: int, progress: bool, strict: bool, options: BuildOptions
) -> dict[str, Any]:
    """Mine the corpus into ``mined`` (resumable); a busy or mismatched work folder is named with where it came
    from (--work-dir, the config's work_dir, or the default beside --out) and the way out."""
    try:
        return run_mining(
            cfg.corpus,
            mined,
            MiningSettings(
                lexicon_dir=str(cfg.lexicon), reader=ReaderSettings(strict=strict), progress=progress
            ),
            workers=workers,
        )
    except (PlanMismatchError, FolderBusyError) as exc:
        where = (
            "--work-dir"
            if options.work_dir
            else "work_dir in " + cfg.path.name
            if cfg.work_dir
            else "the work folder"
        )
        raise type(exc)(f"{where} {mined.parent}: {exc} (or give --work-dir FOLDER)") from None


def _build(
    cfg: BuildConfig,
    out: Path,
    workers: int,
    progress: bool,
    repo_hint: str | None,
    strict: bool,
    options: BuildOptions,
) -> dict[str, Any]:
    target = prepare_output_dir(out, KIND, keep=KEEP)  # refuse a folder that is not ours before mining
    identity = release_identity(
        cfg.name,
        cfg.version,
        cfg.corpus_sha256,
        corpus_fingerprint(cfg.corpus),
        options.own_config,
        options.name,
        options.version,
    )
    raw = cfg.raw | {"release": cfg.raw["release"] | {"name": identity.name, "version": identity.version}}
    cfg = dataclasses.replace(cfg, name=identity.name, version=identity.version, raw=raw)
    work = options.work_dir or cfg.work_folder(out)
    timings: dict[str, float] = {}
    t0 = time.perf_counter()
    lexicon = Lexicon.load(cfg.lexicon)
    mined = work / "mined"
    stats = _mine(cfg, mined, workers, progress, strict, options)
    timings["mining"] = round(time.perf_counter() - t0, 2)

    t1 = time.perf_counter()
    asm = assemble(cfg, mined, work / "duckdb_tmp")
    timings["assembly"] = round(time.perf_counter() - t1, 2)

    t2 = time.perf_counter()
    withheld = asm.report.get("custody", {}).get("withheld", [])
    public = [s for s in asm.splits if s not in withheld]
    with staged_dir(out, KIND, keep=KEEP) as stage, _custody_stage(out, withheld) as held:
        counts = write_data(asm, stage, splits=public)
        few = few_test_queries(counts)
        write_works(asm, stage / works_file(0))
        records = _write_withheld(asm, held, withheld, cfg) if held else {}
        (stage / "README.md").write_text(
            render_card(asm, cfg, stage, counts, stats, lexicon.fingerprint(), repo_hint or target.name, few),
            encoding="utf-8",
        )
        write_json(stage / "reports" / "assembly.json", asm.report)
        write_json(
            stage / "reports" / "mining.json",
            {k: v for k, v in stats.items() if k not in ("wall_seconds", "mb_per_second", "task_seconds")},
        )
        manifest = {
            "kind": KIND,
            "name": cfg.name,
            "version": cfg.version,
            "code_version": __version__,
            "config_file": cfg.path.name,
            "config": cfg.raw,
            "lexicon_version": lexicon.version,
            "lexicon_sha256": lexicon.fingerprint(),
            "corpus_sha256": identity.corpus_sha256,
            "official": identity.official,
            "rows": counts,
            "files": file_checksums(stage),
        }
        if few:  # recorded so that scoring and the board can flag figures resting on few queries
            manifest["few_test_queries"] = {"min": MIN_TEST_QUERIES, "relations": few}
        if cfg.snapshots is not None:
            snaps = asm.report["snapshots"]
            shown = snaps | {"periods": {k: v for k, v in snaps["periods"].items() if k not in withheld}}
            manifest |= snapshot_manifest(shown, manifest["files"], cfg.version)
        if records:  # sizes, dates and a hash of the withheld split's files: never a text, an id or a qrel
            manifest["withheld"] = records
        manifest["mini"] = mini_manifest(asm.report["mini"], manifest["files"])
        write_json(stage / "manifest.json", json.loads(json.dumps(manifest, default=str)))
        asm.con.close()
        timings["write"] = round(time.perf_counter() - t2, 2)
        t3 = time.perf_counter()
        checks = require_passing(stage, "the new release", out)
        if held:
            write_json(held / MANIFEST, custody_manifest(cfg.name, records, held))
            checks += require_custody(stage, held, out)
        timings["check"] = round(time.perf_counter() - t3, 2)
    report = {
        "release": str(target),
        "timings_seconds": timings,
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "rows": counts,
        "name": cfg.name,
        "version": cfg.version,
        "identity": identity.reason,
        "work_dir": str(work),
        "few_test_queries": few,
        "checks": [dataclasses.asdict(c) for c in checks],
        "assembly": asm.report,
    }
    if withheld:
        report["withheld"] = withheld
        report["custody"] = str(custody_path(out))
    write_json(work / "build_report.json", report)
    return report


@contextmanager
def _custody_stage(out: Path, withheld: list[str]) -> Iterator[Path | None]:
    """The custody folder beside ``out``, staged and swapped in with the release (None: nothing withheld)."""
    if not withheld:
        yield None
        return
    with staged_dir(custody_path(out), CUSTODY_KIND) as stage:
        yield stage


def _write_withheld(asm: Assembly, held: Path, withheld: list[str], cfg: BuildConfig) -> dict[str, Any]:
    """The withheld splits' shards and works into the custody stage; returns their public records."""
    counts = write_data(asm, held, splits=withheld)
    write_custody_works(asm.con, held / WORKS)
    files = file_checksums(held)
    periods = asm.report["snapshots"]["periods"]
    rows = split_rows(counts, withheld)
    records = {
        s: withheld_record(periods[s], files, s, cfg.version, rows[s], cfg.custody.embargo_days)
        for s in withheld
    }
    asm.report["snapshots"]["withheld"] = {s: r["embargo_until"] for s, r in records.items()}
    return records


def require_custody(stage: Path, held: Path, target: Path) -> list[Any]:
    """The custody checks on the staged pair (the same as ``ratio dataset check``'s), all passing, else
    ReleaseCheckError and neither folder is swapped in."""

    return all_passing(check_custody(stage, held), "the withheld half", target)
