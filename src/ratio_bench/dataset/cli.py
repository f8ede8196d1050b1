"""``ratio dataset build|append|check|publish|download`` (the silver split is a judge job: ``ratio judge silver``, judge/cli.py)."""

from __future__ import annotations

import argparse
import datetime as dt
from pathlib import Path

from ratio_bench.core.options import add_strict_option


def _iso_day(text: str) -> dt.date:
    try:
        return dt.date.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a day as YYYY-MM-DD") from None


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
    p.set_defaults(func="ratio_bench.dataset.commands:cmd_build")

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
    p.set_defaults(func="ratio_bench.dataset.commands:cmd_append")

    _custody_commands(stage)

    _hub_commands(stage)

    p = stage.add_parser("check", help="check a release folder against the contract its card states")
    p.add_argument("folder", type=Path, help="release folder written by ratio dataset build")
    p.add_argument("--json", type=Path, metavar="FILE", help="also write the results as JSON")
    p.add_argument(
        "--custody", type=Path, metavar="DIR",
        help="the custody folder of a release that withholds a split (default: <folder>.custody, when it exists)",
    )  # fmt: skip
    p.set_defaults(func="ratio_bench.dataset.commands:cmd_check")


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
    p.set_defaults(func="ratio_bench.dataset.commands:cmd_publish")

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
    p.set_defaults(func="ratio_bench.dataset.commands:cmd_download")


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
    p.set_defaults(func="ratio_bench.dataset.commands:cmd_release_withheld")

    p = stage.add_parser(
        "publish-custody", help="upload a custody folder (the withheld split) to a private Hub dataset repo"
    )
    p.add_argument("folder", type=Path, help="the custody folder, <release>.custody")
    p.add_argument("--repo-id", required=True, help="ORG/custody (must be private: ratio leaderboard init)")
    p.set_defaults(func="ratio_bench.dataset.commands:cmd_publish_custody")
