"""``ratio leaderboard submit|worker`` and ``ratio leaderboard --from REPO``, on the renderer's ``ratio leaderboard``.

``ratio leaderboard [RESULTS] [options]`` (registered by :mod:`ratio_bench.evaluation.cli`) keeps rendering a
folder of entries; a first word that is a sub-command runs that command instead (:class:`ResultsOrCommand`).
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from pathlib import Path

from ratio_bench.leaderboard.limits import (
    DEFAULT_LEASE_S,
    DEFAULT_SAMPLE,
    DEFAULT_SEED,
    MAX_PARAMETERS,
    POOL_FOLDER,
)
from ratio_bench.leaderboard.options import JUDGE_PREFIX
from ratio_bench.leaderboard.requests import SETUPS
from ratio_bench.llm.options import add_judge_options

COMMANDS = (
    "submit",
    "admit",
    "worker",
    "keygen",
    "verify",
    "export-mteb",
    "eval-results",
    "reproduce",
    "init",
    "workers",
)


class _AnyWord(Mapping):
    """The sub-commands as argparse's choice check sees them: any word passes (RESULTS is a path)."""

    def __init__(self, parsers: dict) -> None:
        self.parsers = parsers

    def __getitem__(self, key: str):
        return self.parsers[key]

    def __iter__(self):
        return iter(self.parsers)

    def __len__(self) -> int:
        return len(self.parsers)

    def __contains__(self, key: object) -> bool:
        return True


class ResultsOrCommand(argparse._SubParsersAction):
    """A sub-command, or else the renderer's positional RESULTS followed by its options."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.choices = _AnyWord(self._name_parser_map)

    def __call__(self, parser, namespace, values, option_string=None) -> None:
        if values[0] in self._name_parser_map:
            return super().__call__(parser, namespace, values, option_string)
        if getattr(namespace, "_results_given", False):
            parser.error(
                f"one RESULTS folder or file, or one of {', '.join(COMMANDS)}; got {values[0]!r} too"
            )
        namespace.results, namespace._results_given = Path(values[0]), True
        parser.parse_args(values[1:], namespace)


def register(sub: argparse._SubParsersAction) -> None:
    board = sub.choices["leaderboard"]
    board.add_argument(
        "--from", dest="from_repo", metavar="REPO[@REV]", help="render a results repository on the Hub"
    )
    board.add_argument(
        "--requests", dest="board_requests", metavar="REPO", help="with --from: also show this requests queue"
    )
    board.set_defaults(func="ratio_bench.leaderboard.commands:cmd_board")
    commands = board.add_subparsers(
        dest="leaderboard_command",
        action=ResultsOrCommand,
        metavar="RESULTS | {submit,admit,worker,keygen,workers,verify,export-mteb,eval-results,reproduce,init}",
    )
    _queue_commands(commands)
    _worker_command(commands)
    _hub_commands(commands)
    _trust_commands(commands)


def _queue_commands(commands: argparse._SubParsersAction) -> None:
    """``init``, ``submit`` and ``admit``: the maintainers' repositories and the way into the queue."""

    p = commands.add_parser(
        "init",
        help="create ORG/requests, ORG/results and the private ORG/custody, the service's dataset repos",
    )
    p.add_argument("org", metavar="ORG", help="the Hub user or organisation (the official one: ratio-bench)")
    p.add_argument("--private", action="store_true", help="create the repositories private")
    p.set_defaults(func="ratio_bench.leaderboard.commands:cmd_init")
    p = commands.add_parser("submit", help="queue a Hub model for scoring by the leaderboard's workers")
    p.add_argument(
        "model", help="a Hub repository OWNER/NAME (a sentence-transformers model) or a registered name"
    )
    p.add_argument("--revision", help="branch, tag or commit (default: main); pinned to its commit")
    p.add_argument("--setup", choices=SETUPS, default="generic", help="prompt setup (default: generic)")
    p.add_argument("--requests", required=True, metavar="REPO", help="the requests dataset repository")
    p.add_argument(
        "--training-cutoff",
        metavar="YYYY-MM-DD",
        help="the last day of the model's training data (backbone included); without it the model's snapshot "
        "scores are marked unknown, never clean",
    )
    p.add_argument("--max-params", type=int, default=MAX_PARAMETERS, help=argparse.SUPPRESS)
    p.set_defaults(func="ratio_bench.leaderboard.commands:cmd_submit")

    p = commands.add_parser(
        "admit", help="review the queue's open pull requests: merge the valid, close the rest"
    )
    p.add_argument("--requests", required=True, metavar="REPO", help="the requests dataset repository")
    p.add_argument("--max-params", type=int, default=MAX_PARAMETERS, help=f"default {MAX_PARAMETERS:,}")
    p.set_defaults(func="ratio_bench.leaderboard.commands:cmd_admit")


def _worker_command(commands: argparse._SubParsersAction) -> None:
    """``worker``: claim, score, sign and publish (and, with --judge-model, grow the judged pool)."""

    p = commands.add_parser("worker", help="score pending requests and publish the results")
    p.add_argument("--requests", required=True, metavar="REPO", help="the requests dataset repository")
    p.add_argument("--results", required=True, metavar="REPO", help="the results dataset repository")
    p.add_argument(
        "--dataset", required=True, metavar="REPO[@REV]|DIR", help="the release: a Hub dataset or a folder"
    )
    p.add_argument(
        "--custody", metavar="REPO[@REV]|DIR",
        help="the release's custody (the private dataset repo `ratio leaderboard init` made, or a folder): each "
        "admitted submission is also scored on the withheld split, aggregate figures only",
    )  # fmt: skip
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--once", action="store_true", help="stop when nothing is left to claim (the default)")
    mode.add_argument("--poll", type=float, metavar="SECONDS", help="keep running, looking every SECONDS")
    p.add_argument(
        "--lease",
        type=float,
        default=DEFAULT_LEASE_S,
        metavar="SECONDS",
        help=f"how long a claim holds (default {DEFAULT_LEASE_S}); one model may take 80%% of it",
    )
    p.add_argument("--worker-id", help="this worker's public name (default: worker-KEYID)")
    p.add_argument(
        "--key", type=Path, metavar="FILE",
        help="the worker's private Ed25519 key (ratio leaderboard keygen; default: the file RATIO_WORKER_KEY names)",
    )  # fmt: skip
    p.add_argument(
        "--admit", action="store_true", help="admit open pull requests first (ratio leaderboard admit)"
    )
    p.add_argument(
        "--max-params",
        type=int,
        default=MAX_PARAMETERS,
        help=f"refuse larger models (default {MAX_PARAMETERS:,})",
    )
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--cache-dir", type=Path, help="embedding cache (default: ~/.cache/ratio/embeddings)")
    p.add_argument(
        "--log-file",
        type=Path,
        help="each job's output and a failed job's traceback, appended (default: worker.log beside the "
        "embedding cache); "
        "the console gets one line per request",
    )
    p.add_argument(
        "--infra-retries", type=int, default=3, metavar="N",
        help="tries of a job that fails for the infrastructure (Hub timeout or 5xx, full disk) before it is put "
        "back in the queue, its attempt not spent (default 3)",
    )  # fmt: skip
    p.add_argument(
        "--retry-backoff", type=float, default=30.0, metavar="SECONDS",
        help="the first wait before such a retry, doubling each time (default 30)",
    )  # fmt: skip
    judge = add_judge_options(p, model_required=False, prefix=JUDGE_PREFIX, batch=False)
    judge.description = (
        "with --judge-model, each result's unjudged top 10 on the pool's sampled queries is judged and the "
        f"grown pool committed to the results repository under {POOL_FOLDER}/ (--judge-max-cost caps each "
        "round)"
    )
    judge.add_argument(
        "--judge-sample", dest="pool_sample", type=int, default=DEFAULT_SAMPLE, metavar="N",
        help=f"queries per relation of a new pool (default {DEFAULT_SAMPLE}); an existing pool keeps its own",
    )  # fmt: skip
    judge.add_argument(
        "--judge-seed", dest="pool_seed", type=int, default=DEFAULT_SEED, metavar="SEED",
        help=f"sampling seed of a new pool (default {DEFAULT_SEED})",
    )  # fmt: skip
    p.set_defaults(func="ratio_bench.leaderboard.commands:cmd_worker")


def _hub_commands(commands: argparse._SubParsersAction) -> None:
    """``export-mteb`` and ``eval-results``: verified results where researchers already look."""
    p = commands.add_parser("export-mteb", help="write entries in the MTEB results repository's layout")
    p.add_argument(
        "--results", required=True, metavar="REPO[@REV]|DIR", help="a results repository or folder"
    )
    p.add_argument(
        "--out", required=True, type=Path, help="a checkout of MTEB's results repository (or any folder)"
    )
    p.add_argument(
        "--release", metavar="VERSION", help="the release version to export (when there are several)"
    )
    p.add_argument(
        "--include-self-reported",
        action="store_true",
        help="export unverified entries too (default: verified)",
    )
    p.add_argument(
        "--requests", metavar="REPO", help="the requests repository (without it nothing is verified)"
    )
    p.set_defaults(func="ratio_bench.leaderboard.commands:cmd_export_mteb")

    p = commands.add_parser("eval-results", help="the Hub's eval.yaml and each model's .eval_results files")
    p.add_argument("--results", required=True, metavar="REPO[@REV]", help="the results repository")
    p.add_argument("--dataset", required=True, type=Path, metavar="DIR", help="the release folder scored")
    p.add_argument(
        "--benchmark", default="ratio-bench/ratio", metavar="REPO", help="the benchmark dataset repo"
    )
    p.add_argument(
        "--out", required=True, type=Path, help="folder for eval.yaml and <model>/<commit>/.eval_results/"
    )
    p.add_argument(
        "--open-prs", action="store_true", help="also open a pull request on each model repository"
    )
    p.add_argument(
        "--requests", metavar="REPO", help="the requests repository (without it nothing is verified)"
    )
    p.set_defaults(func="ratio_bench.leaderboard.commands:cmd_eval_results")


def _trust_commands(commands: argparse._SubParsersAction) -> None:
    """``keygen``, ``reproduce`` and ``verify``: what lets a stranger check a row."""

    p = commands.add_parser(
        "keygen", help="make a worker's signing key (its public half goes in trusted_workers.json)"
    )
    p.add_argument("--out", type=Path, required=True, metavar="FILE", help="where the private key is written")
    p.add_argument("--name", help="the worker's public name in the listing (default: worker-KEYID)")
    p.add_argument("--added-by", help="the maintainer who lists the key")
    p.set_defaults(func="ratio_bench.leaderboard.commands:cmd_keygen")

    p = commands.add_parser(
        "reproduce", help="score a leaderboard row again on this machine (the command each entry names)"
    )
    p.add_argument("model", metavar="ORG/NAME@SHA", help="the model repository at the commit the entry names")
    p.add_argument("--setup", required=True, choices=SETUPS, help="the entry's prompt setup")
    p.add_argument("--split", default="test", help="the entry's split (default: test)")
    p.add_argument(
        "--dataset", required=True, metavar="NAME@VERSION|DIR|REPO@REV",
        help="the release: NAME@VERSION is the folder ./NAME, which must be that version",
    )  # fmt: skip
    p.add_argument("--out", type=Path, help="write the entry here (JSON)")
    p.add_argument("--cache-dir", type=Path, help="embedding cache (default: ~/.cache/ratio/embeddings)")
    p.set_defaults(func="ratio_bench.leaderboard.commands:cmd_reproduce")

    p = commands.add_parser(
        "workers", help="list, add or revoke worker keys in the results repository's trusted_workers.json"
    )
    edits = p.add_subparsers(dest="workers_command", required=True, metavar="{list,add,remove}")
    for name, text in (("list", "the listed keys and the listing's history on main"),
                       ("add", "list a worker's public key (as the signed-in maintainer)"),
                       ("remove", "revoke a key: every row it signed turns self-reported")):  # fmt: skip
        q = edits.add_parser(name, help=text)
        q.add_argument("--results", required=True, metavar="REPO", help="the results dataset repository")
        if name == "add":
            q.add_argument(
                "listing", metavar="LISTING", help="the JSON line keygen printed, or a base64 public key"
            )
            q.add_argument("--name", help="the worker's public name (default: the listing's)")
        if name == "remove":
            q.add_argument("key_id", metavar="KEY_ID", help="the key's id (16 hex digits)")
        q.set_defaults(func="ratio_bench.leaderboard.commands:cmd_workers")

    p = commands.add_parser("verify", help="say whether a result folder or row is verified, step by step")
    p.add_argument(
        "target", help="a local folder, ORG/MODEL/SHA/SETUP in --results, or a row ORG/MODEL[@SHA]:SETUP"
    )
    p.add_argument(
        "--results", metavar="REPO[@REV]", help="the results repository (its trusted_workers.json)"
    )
    p.add_argument(
        "--requests", metavar="REPO", help="the requests repository (without it nothing is verified)"
    )
    p.set_defaults(func="ratio_bench.leaderboard.commands:cmd_verify")
