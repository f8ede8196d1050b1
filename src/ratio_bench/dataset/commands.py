"""The handlers of the ``dataset`` commands (``ratio_bench.dataset.cli`` builds their parsers and names these
handlers as strings; ``cli.handler`` imports this module when one of them runs, so ``--help`` and argument errors
load none of the libraries below)."""

from __future__ import annotations

import argparse
import dataclasses
import shlex
import sys

from ratio_bench.core.errors import UsageError
from ratio_bench.core.faults import note_output
from ratio_bench.core.io import prepare_output_dir, report_console, write_json
from ratio_bench.core.resources import data_path, preset, shipped_preset
from ratio_bench.dataset.append import append_release
from ratio_bench.dataset.build import BuildOptions, build_release
from ratio_bench.dataset.check import ReleaseCheckError, check_release, print_results, results_json
from ratio_bench.dataset.config import load_config, with_withhold
from ratio_bench.dataset.contract import KEEP, KIND
from ratio_bench.dataset.custody import check_custody, release_withheld
from ratio_bench.dataset.hub_release import download
from ratio_bench.dataset.publish import publish, publish_custody


def cmd_build(args: argparse.Namespace) -> int:
    if args.workers < 1:
        raise UsageError(f"--workers {args.workers}: must be at least 1")
    shipped = shipped_preset("dataset_scripts", args.config) is not None
    cfg = load_config(preset("dataset_scripts", args.config))
    if shipped:  # a shipped preset: its lexicon is the shipped one, its corpus a placeholder
        if not args.corpus:
            raise UsageError(f"--config {args.config}: a shipped preset needs --corpus PATH... (your papers)")
        cfg = dataclasses.replace(cfg, lexicon=data_path(cfg.raw["lexicon"]))
    work = args.work_dir.resolve() if args.work_dir else cfg.work_folder(args.out)
    note_output("the work folder", work)
    prepare_output_dir(args.out, KIND, keep=KEEP)  # before the corpus is read: nothing of the user's is lost
    if args.corpus:
        cfg = dataclasses.replace(cfg, corpus=[p.resolve() for p in args.corpus])
    if args.withhold is not None:
        cfg = with_withhold(cfg, args.withhold)
    config_file = preset("dataset_scripts", args.config).resolve()
    own = not config_file.is_relative_to(
        data_path("dataset_scripts").resolve()
    )  # a shipped config, by any name
    options = BuildOptions(args.name, args.version, own, work if args.work_dir else None, args.wait)
    try:
        report = build_release(
            cfg, args.out, workers=args.workers, progress=not args.quiet, strict=args.strict, options=options
        )
    except ReleaseCheckError as exc:
        if exc.results:
            print_results(args.out, exc.results)
        raise
    if report["few_test_queries"]:
        few = ", ".join(f"{r} {n}" for r, n in report["few_test_queries"].items())
        print(
            f"ratio dataset build: warning: few test queries ({few}; under 100 each): figures on them are noisy "
            "(flagged in the card and manifest)",
            file=sys.stderr,
        )
    console = report_console()
    t = report["timings_seconds"]
    console.print(
        f"release written to {report['release']} (mining {t['mining']}s, assembly {t['assembly']}s, "
        f"write {t['write']}s, check {t['check']}s, peak RSS {report['peak_rss_mb']} MB); "
        f"{len(report['checks'])} checks passed; {report['name']} {report['version']} ({report['identity']})",
        highlight=False,
    )
    for config, splits in report["rows"].items():
        console.print(f"  {config:16s} " + "  ".join(f"{s}={n:,}" for s, n in splits.items()))
    if report.get("withheld"):
        console.print(
            f"withheld {', '.join(report['withheld'])} -> {report['custody']} (publish it only to a private repo)",
            highlight=False,
        )
    console.print(f"next: ratio score --model bm25 --dataset {shlex.quote(str(args.out))}", highlight=False)
    return 0


def cmd_check(args: argparse.Namespace) -> int:
    results = check_release(args.folder)
    if results[0].passed:  # the folder is a release: its withheld half too, when it has one
        results += check_custody(args.folder, args.custody)
    print_results(args.folder, results)
    if args.json:
        write_json(args.json, results_json(args.folder, results))
    return 0 if all(r.passed for r in results) else 1


def cmd_append(args: argparse.Namespace) -> int:
    try:
        report = append_release(
            args.dataset,
            [p.resolve() for p in args.corpus],
            args.version,
            args.work_dir,
            not args.quiet,
            through=args.through,
            wait_s=args.wait,
            withhold=args.withhold,
            custody=args.custody,
        )
    except ReleaseCheckError as exc:
        if exc.results:
            print_results(args.dataset, exc.results)
        raise
    excluded = ", ".join(f"{k} {n:,}" for k, n in report["excluded"].items() if n) or "none"
    if not report["snapshots_added"]:  # exit 0: no new period yet is a normal outcome of a scheduled append
        print(
            f"ratio dataset append: note: no new period to add; {args.dataset} is unchanged (excluded: {excluded})"
        )
        return 0
    report_console().print(
        f"{args.dataset} is now version {args.version}: added {', '.join(report['snapshots_added'])} "
        f"(excluded: {excluded}); {report['checks']} checks passed",
        highlight=False,
    )
    return 0


def cmd_release_withheld(args: argparse.Namespace) -> int:
    report = release_withheld(args.dataset, args.version, args.custody, args.today, args.wait)
    print(
        f"{args.dataset} is now version {args.version}: released {', '.join(report['released'])} from custody; "
        f"{report['checks']} checks passed"
    )
    return 0


def cmd_publish_custody(args: argparse.Namespace) -> int:
    print(f"published {args.folder} to {publish_custody(args.folder, args.repo_id)}")
    return 0


def cmd_publish(args: argparse.Namespace) -> int:
    url = publish(args.folder, args.repo_id, revision=args.revision, private=args.private, force=args.force)
    print(f"published {args.folder} to {url}")
    return 0


def cmd_download(args: argparse.Namespace) -> int:
    release = download(args.name, args.out)
    report_console().print(
        f"{release.hub}: {release.name} {release.version} (manifest {release.manifest_sha256[:12]}) checked and "
        f"written to {args.out}\nnext: ratio score --model bm25 --dataset {shlex.quote(str(args.out))} --split mini",
        highlight=False,
    )
    return 0
