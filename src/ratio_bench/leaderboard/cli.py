"""``ratio leaderboard submit|worker`` and ``ratio leaderboard --from REPO``, on the renderer's ``ratio leaderboard``.

``ratio leaderboard [RESULTS] [options]`` (registered by :mod:`ratio_bench.evaluation.cli`) keeps rendering a
folder of entries; a first word that is a sub-command runs that command instead (:class:`ResultsOrCommand`).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Mapping
from pathlib import Path

from ratio_bench.core.cutoffs import parse_date
from ratio_bench.core.errors import UsageError
from ratio_bench.core.io import report_console, write_json
from ratio_bench.evaluation.board.leaderboard import load_board
from ratio_bench.evaluation.board.render.output import render_board
from ratio_bench.leaderboard import listing
from ratio_bench.leaderboard.admission import admit
from ratio_bench.leaderboard.board import (
    load_board_from_repo,
    queue_html,
    queue_markdown,
    queue_table,
    verify,
)
from ratio_bench.leaderboard.hub import RepoRef
from ratio_bench.leaderboard.hub_results import open_eval_results_prs, write_eval_results
from ratio_bench.leaderboard.init import custody_id, init_repos, repo_ids, results_for
from ratio_bench.leaderboard.judging import Judging
from ratio_bench.leaderboard.limits import (
    DEFAULT_LEASE_S,
    DEFAULT_SAMPLE,
    DEFAULT_SEED,
    MAX_PARAMETERS,
    POOL_FOLDER,
)
from ratio_bench.leaderboard.mteb_export import export_mteb
from ratio_bench.leaderboard.notices import figures
from ratio_bench.leaderboard.provenance import KEY_ENV, TRUSTED_WORKERS, generate_key, load_key
from ratio_bench.leaderboard.reproduction import reproduce
from ratio_bench.leaderboard.requests import SETUPS, read_queue
from ratio_bench.leaderboard.submit import submit
from ratio_bench.leaderboard.worker import (
    WorkerOptions,
    default_log_file,
    default_worker_id,
    local_custody,
    local_dataset,
    run,
)
from ratio_bench.llm.options import add_judge_options, make_judge, prefixed_judge_args

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
JUDGE_PREFIX = "judge-"  # the worker's judge options: --judge-model, --judge-base-url, ...


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


def cmd_board(args: argparse.Namespace) -> int:
    if args.from_repo is None:
        if args.board_requests:
            raise UsageError("--requests: the queue is shown with --from REPO (a results repository)")
        return render_board(load_board(args.results), args, str(args.results))
    if getattr(args, "_results_given", False):
        raise UsageError(f"give RESULTS ({args.results}) or --from {args.from_repo}, not both")

    requests = RepoRef.parse(args.board_requests, "--requests").repo_id if args.board_requests else None
    board = load_board_from_repo(RepoRef.parse(args.from_repo, "--from"), requests)
    if not args.board_requests:
        return render_board(board, args, f"--from {args.from_repo}")
    queue = read_queue(RepoRef.parse(args.board_requests, "--requests").repo_id)
    report_console(stderr=args.json).print(queue_table(queue))
    return render_board(board, args, f"--from {args.from_repo}", queue_markdown(queue), queue_html(queue))


def cmd_submit(args: argparse.Namespace) -> int:
    cutoff = parse_date(args.training_cutoff, "--training-cutoff") if args.training_cutoff else None
    repo = RepoRef.parse(args.requests, "--requests").repo_id
    sub = submit(args.model, args.revision, args.setup, repo, args.max_params, cutoff)
    request = sub.request
    stated = f", training data up to {request.training_cutoff}" if request.training_cutoff else ""
    print(
        f"proposed {request.label} ({request.parameters:,} parameters, submitter {request.submitter}{stated}) "
        f"as pull request #{sub.pr_num} on {repo} ({sub.pr_url}), adding {request.path}; the maintainers' "
        "admission queues it"
    )
    if sub.wait is not None:
        print(f"once admitted: {sub.wait.text()}")
        print(
            "you will hear of it on the pull request: admitted or refused (with the reason), then finished "
            "(results, eval-results pull request, reproduce command) or failed (with the reason)"
        )
    results = results_for(repo)
    print(
        f"follow it: ratio leaderboard --from {results} --requests {repo} (status in {repo}: {request.path})"
    )
    print(
        f"the result will appear in {results}: {request.model}/{request.sha}/{request.setup}/ "
        f"(the results repository the workers of {repo} publish to)"
    )
    return 0


def cmd_init(args: argparse.Namespace) -> int:
    for repo in init_repos(args.org, args.private):
        wrote = f"wrote {', '.join(repo.written)}" if repo.written else "nothing to add"
        kept = f"; kept {', '.join(repo.kept)} as they are" if repo.kept else ""
        print(f"{repo.repo_id}: {repo.url} ({wrote}{kept})")
    requests, results = repo_ids(args.org)
    print(f"submit: ratio leaderboard submit ORG/MODEL --requests {requests}")
    print(f"work: ratio leaderboard worker --requests {requests} --results {results} --dataset RELEASE")
    print(
        f"custody (private): ratio dataset publish-custody RELEASE.custody --repo-id {custody_id(args.org)}"
    )
    return 0


def cmd_admit(args: argparse.Namespace) -> int:
    verdicts = admit(RepoRef.parse(args.requests, "--requests").repo_id, args.max_params, print)
    print(f"{sum(v.admitted for v in verdicts)} admitted, {sum(not v.admitted for v in verdicts)} refused")
    return 0


def cmd_worker(args: argparse.Namespace) -> int:
    if args.poll is not None and args.poll <= 0:
        raise UsageError("--poll: give a number of seconds above 0")
    if args.infra_retries < 1 or args.retry_backoff < 0:
        raise UsageError("--infra-retries: 1 or more; --retry-backoff: 0 seconds or more")
    if args.lease < 5:
        raise UsageError("--lease: at least 5 seconds (the time one model may take, with publishing)")
    requests = RepoRef.parse(args.requests, "--requests").repo_id
    results = RepoRef.parse(args.results, "--results").repo_id
    judging = _judging(args)
    if not Path(args.dataset).is_dir():
        RepoRef.parse(args.dataset, "--dataset")  # a bad --dataset is named before the key is asked for
    key = _worker_key(args.key)
    dataset, source = local_dataset(args.dataset)
    custody = local_custody(args.custody, dataset) if args.custody else None
    opts = WorkerOptions(
        requests,
        results,
        dataset,
        source,
        args.worker_id or default_worker_id(key),
        lease_s=args.lease,
        max_params=args.max_params,
        batch_size=args.batch_size,
        cache_dir=args.cache_dir,
        judging=judging,
        key=key,
        admit=args.admit,
        log_file=args.log_file or default_log_file(args.cache_dir),
        infra_retries=args.infra_retries,
        retry_backoff_s=args.retry_backoff,
        custody=custody,
    )

    def log(line: str) -> None:
        print(f"worker {opts.worker_id}: {line}", file=sys.stderr, flush=True)

    done = run(opts, args.poll, log)
    log(f"{done} request(s) handled; the queue has nothing to claim")
    return 0


def cmd_export_mteb(args: argparse.Namespace) -> int:
    requests = _requests_or_note(args.requests)
    done = export_mteb(
        args.results, args.out, include_self_reported=args.include_self_reported, release=args.release,
        requests=requests,
    )  # fmt: skip
    for model in done:
        run = f" [{model.experiment}]" if model.experiment else ""
        print(f"{model.name}@{model.revision}{run}: {', '.join(model.tasks)} -> {model.folder}")
    print(f"{len(done)} model run(s) in MTEB's layout under {args.out / 'results'}")
    return 0


def cmd_eval_results(args: argparse.Namespace) -> int:
    requests = _requests_or_note(args.requests)
    results, models = write_eval_results(args.results, args.dataset, args.benchmark, args.out, requests)
    print(
        f"{len(models)} model commit(s) with verified results; eval.yaml and <model>/<commit>/ under {args.out}"
    )
    for model, opened in open_eval_results_prs(results, models, args.benchmark) if args.open_prs else ():
        print(f"{model}: pull request {opened.url}")
    return 0


def cmd_reproduce(args: argparse.Namespace) -> int:
    entry = reproduce(args.model, args.setup, args.split, args.dataset, args.cache_dir)
    if args.out:
        write_json(args.out, entry)
    print(
        f"{args.model}:{args.setup} on {entry['dataset']['name']} {entry['dataset']['version']}: {figures(entry)}"
    )
    if args.out:
        print(f"entry written to {args.out}; compare its results with the leaderboard's entry")
    return 0


def _requests_or_note(text: str | None) -> str | None:
    """``--requests`` as a repo id; without it, a note that nothing can be verified (every entry self-reported)."""

    if text is None:
        print(
            "note: no --requests REPO given: without the queue nothing is verified (every entry counts as "
            "self-reported)",
            file=sys.stderr,
        )
        return None
    return RepoRef.parse(text, "--requests").repo_id


def _worker_key(path: Path | None):
    """The worker's signing key: ``--key`` or the file ``RATIO_WORKER_KEY`` names (required: results are signed)."""

    if path is not None:
        return load_key(path, "--key")
    if os.environ.get(KEY_ENV):
        return load_key(Path(os.environ[KEY_ENV]), KEY_ENV)
    raise UsageError(
        f"--key: give the worker's private key file (or set {KEY_ENV}); make one with `ratio leaderboard keygen --out FILE`"
    )


def cmd_keygen(args: argparse.Namespace) -> int:
    key = generate_key(args.out)
    print(f"wrote the private key to {args.out} (keep it secret; the worker reads it with --key)")
    print(
        f"key id {key.key_id}; for the maintainers to add to the results repository's {TRUSTED_WORKERS} workers:"
    )
    print(json.dumps(key.listing(args.name or f"worker-{key.key_id}", args.added_by or "MAINTAINER")))
    return 0


def cmd_workers(args: argparse.Namespace) -> int:
    results = RepoRef.parse(args.results, "--results").repo_id
    if args.workers_command == "add":
        public_key, name = listing.parse_new(args.listing, args.name)
        added = listing.add(results, public_key, name or "")
        print(f"listed key {added.key_id} ({added.name}, added by {added.added_by}) in {results}")
        return 0
    if args.workers_command == "remove":
        gone = listing.remove(results, args.key_id)
        print(
            f"revoked key {gone.key_id} ({gone.name}) in {results}: every row it signed is self-reported now"
        )
        return 0
    at = listing.read_main(results)
    if at.listing.problem:
        print(at.listing.problem)
    for w in at.listing.trusted.values():
        print(f"{w.key_id}  {w.name}  (added by {w.added_by})")
    for note in at.listing.notes:
        print(f"note: {note}")
    print(f"{len(at.listing.trusted)} key(s) listed on main ({at.sha[:12]}); changes, newest first:")
    for edit in listing.history(results):
        who = ", ".join(edit.authors) or "unknown"
        print(f"  {edit.date:%Y-%m-%d %H:%M} {edit.commit[:12]} by {who}: {edit.title}")
    return 0


def cmd_verify(args: argparse.Namespace) -> int:
    results = RepoRef.parse(args.results, "--results") if args.results else None
    requests = RepoRef.parse(args.requests, "--requests").repo_id if args.requests else None
    reports = verify(args.target, results, requests)
    for report in reports:
        print("\n".join(report.lines()))
    return 0 if all(r.verified for r in reports) else 1


def _judging(args: argparse.Namespace):
    """The worker's judge (None without ``--judge-model``), checked before anything is claimed."""

    judge_args = prefixed_judge_args(args, JUDGE_PREFIX)
    if judge_args is None:
        return None
    for flag, value, low in (("--judge-sample", args.pool_sample, 1), ("--judge-seed", args.pool_seed, 0)):
        if value < low:
            raise UsageError(f"{flag} {value}: must be {low} or more")
    make_judge(judge_args)  # a bad option, price table or cache is refused now, not after the first model
    return Judging(judge_args, args.pool_sample, args.pool_seed)


def register(sub: argparse._SubParsersAction) -> None:
    board = sub.choices["leaderboard"]
    board.add_argument(
        "--from", dest="from_repo", metavar="REPO[@REV]", help="render a results repository on the Hub"
    )
    board.add_argument(
        "--requests", dest="board_requests", metavar="REPO", help="with --from: also show this requests queue"
    )
    board.set_defaults(func=cmd_board)
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
    p.set_defaults(func=cmd_init)
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
    p.set_defaults(func=cmd_submit)

    p = commands.add_parser(
        "admit", help="review the queue's open pull requests: merge the valid, close the rest"
    )
    p.add_argument("--requests", required=True, metavar="REPO", help="the requests dataset repository")
    p.add_argument("--max-params", type=int, default=MAX_PARAMETERS, help=f"default {MAX_PARAMETERS:,}")
    p.set_defaults(func=cmd_admit)


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
    p.set_defaults(func=cmd_worker)


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
    p.set_defaults(func=cmd_export_mteb)

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
    p.set_defaults(func=cmd_eval_results)


def _trust_commands(commands: argparse._SubParsersAction) -> None:
    """``keygen``, ``reproduce`` and ``verify``: what lets a stranger check a row."""

    p = commands.add_parser(
        "keygen", help="make a worker's signing key (its public half goes in trusted_workers.json)"
    )
    p.add_argument("--out", type=Path, required=True, metavar="FILE", help="where the private key is written")
    p.add_argument("--name", help="the worker's public name in the listing (default: worker-KEYID)")
    p.add_argument("--added-by", help="the maintainer who lists the key")
    p.set_defaults(func=cmd_keygen)

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
    p.set_defaults(func=cmd_reproduce)

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
        q.set_defaults(func=cmd_workers)

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
    p.set_defaults(func=cmd_verify)
