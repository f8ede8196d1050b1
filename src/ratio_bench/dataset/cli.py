"""``ratio dataset build|append|check|publish|download`` (the silver split is a judge job: ``ratio judge silver``, judge/cli.py)."""

from __future__ import annotations

import argparse
import dataclasses
import datetime as dt
import shlex
import sys
from pathlib import Path

from ratio_bench.core.errors import UsageError
from ratio_bench.core.faults import note_output
from ratio_bench.core.io import prepare_output_dir, report_console, write_json
from ratio_bench.core.options import add_strict_option
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


def _iso_day(text: str) -> dt.date:
    try:
        return dt.date.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a day as YYYY-MM-DD") from None


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


def add_wait_option(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--wait",
        type=float,
        default=0.0,
        metavar="SECONDS",
        help="if another run is writing the release, wait up to this long for it (default: refuse at once)",
    )


def add_withhold_option(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--withhold", metavar="PERIOD",
        help="withhold a snapshot from the public release into <release>.custody: newest, a month YYYY-MM, a "
        "quarter YYYYqN, or none (default: the config's custody: block; none without one)",
    )  # fmt: skip


def register(sub: argparse._SubParsersAction) -> None:
    stage = sub.add_parser(
        "dataset",
        help="release stage: build, append, check, publish, download, release-withheld (silver: ratio judge silver)",
    ).add_subparsers(dest="dataset_command", required=True)

    p = stage.add_parser("build", help="build a release: corpus -> mining -> assembly -> Hub-ready folder")
    p.add_argument(
        "--config",
        default="dev",
        help="a build config file, or a shipped preset: dev (default) or s2orc (both need --corpus)",
    )
    p.add_argument("--out", type=Path, default=Path("ratio"), help="release folder (default: ./ratio)")
    p.add_argument("--corpus", type=Path, nargs="+", help="corpus files or folders (overrides the config's)")
    p.add_argument("--workers", type=int, default=1)
    p.add_argument(
        "--name",
        help="the release's name (default: the config's for its declared corpus, else <name>-custom; "
        "see docs/releases.md)",
    )
    p.add_argument(
        "--version",
        help="the release's version, e.g. 0.1.0 (default: the config's for its declared corpus, else "
        "<version>+corpus.<hash>)",
    )
    p.add_argument(
        "--work-dir", type=Path, help="mining and assembly folder (default: the config's, else <out>.work)"
    )
    add_wait_option(p)
    add_withhold_option(p)
    p.add_argument("--quiet", action="store_true")
    add_strict_option(p)
    p.set_defaults(func=cmd_build)

    p = stage.add_parser(
        "append",
        help="add the periods after a release's last snapshot from new corpus files, as a new version",
    )
    p.add_argument(
        "--dataset", type=Path, required=True, help="release folder (built with a snapshots: block)"
    )
    p.add_argument(
        "--corpus", type=Path, nargs="+", required=True, help="the NEW corpus files or folders only"
    )
    p.add_argument(
        "--version", required=True, help="the new version, e.g. 0.2.1 (digits and dots, then -labels)"
    )
    p.add_argument("--work-dir", type=Path, help="mining folder (default: <dataset>.work/append-<version>)")
    add_wait_option(p)
    p.add_argument(
        "--through",
        type=_iso_day,
        metavar="YYYY-MM-DD",
        help="the last day the new files are complete: periods after it wait for the next append "
        "(default: every period the files reach, a partial last one included)",
    )
    add_withhold_option(p)
    p.add_argument(
        "--custody",
        type=Path,
        metavar="DIR",
        help="the release's custody folder (default: <dataset>.custody)",
    )
    p.add_argument("--quiet", action="store_true")
    p.set_defaults(func=cmd_append)

    _custody_commands(stage)

    _hub_commands(stage)

    p = stage.add_parser("check", help="check a release folder against the contract its card states")
    p.add_argument("folder", type=Path, help="release folder written by ratio dataset build")
    p.add_argument("--json", type=Path, metavar="FILE", help="also write the results as JSON")
    p.add_argument(
        "--custody", type=Path, metavar="DIR",
        help="the custody folder of a release that withholds a split (default: <folder>.custody, when it exists)",
    )  # fmt: skip
    p.set_defaults(func=cmd_check)


def _hub_commands(stage: argparse._SubParsersAction) -> None:
    """``publish`` and ``download``: a release to and from a Hub dataset repository."""
    p = stage.add_parser(
        "publish", help="upload a release folder to a Hugging Face Hub dataset repo and tag it"
    )
    p.add_argument("folder", type=Path)
    p.add_argument("--repo-id", required=True, help="ORG/NAME")
    p.add_argument("--revision", help="tag to create (default: the manifest's version)")
    p.add_argument("--private", action="store_true")
    p.add_argument(
        "--force",
        action="store_true",
        help="accepted for old scripts; it overrides nothing: a release whose config says release.publish: "
        "false is never published",
    )
    p.set_defaults(func=cmd_publish)

    p = stage.add_parser(
        "download",
        help="download a published release (a Hub dataset) into a folder, pinned to its commit and checked",
    )
    p.add_argument(
        "name", metavar="ORG/NAME[@REV]", help="the dataset repository, at a tag, branch or commit"
    )
    p.add_argument(
        "--out", type=Path, required=True, help="the release folder to write (new, empty, or a release)"
    )
    p.set_defaults(func=cmd_download)


def _custody_commands(stage: argparse._SubParsersAction) -> None:
    """``release-withheld`` and ``publish-custody``: the withheld half of a release."""
    p = stage.add_parser(
        "release-withheld",
        help="after the embargo, publish the withheld split(s) into the release as a new version",
    )
    p.add_argument("--dataset", type=Path, required=True, help="release folder that withholds a split")
    p.add_argument("--version", required=True, help="the new version, e.g. 0.2.1")
    p.add_argument(
        "--custody", type=Path, metavar="DIR", help="its custody folder (default: <dataset>.custody)"
    )
    p.add_argument("--today", type=_iso_day, help=argparse.SUPPRESS)  # the clock, for tests and replays
    add_wait_option(p)
    p.set_defaults(func=cmd_release_withheld)

    p = stage.add_parser(
        "publish-custody", help="upload a custody folder (the withheld split) to a private Hub dataset repo"
    )
    p.add_argument("folder", type=Path, help="the custody folder, <release>.custody")
    p.add_argument("--repo-id", required=True, help="ORG/custody (must be private: ratio leaderboard init)")
    p.set_defaults(func=cmd_publish_custody)
