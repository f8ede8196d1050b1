"""The handlers of the ``leaderboard`` commands (``ratio_bench.leaderboard.cli`` builds their parsers and names these
handlers as strings; ``cli.handler`` imports this module when one of them runs, so ``--help`` and argument errors
load none of the libraries below)."""

from __future__ import annotations

import argparse
import json
import os
import sys
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
from ratio_bench.leaderboard.mteb_export import export_mteb
from ratio_bench.leaderboard.notices import figures
from ratio_bench.leaderboard.options import JUDGE_PREFIX
from ratio_bench.leaderboard.provenance import KEY_ENV, TRUSTED_WORKERS, generate_key, load_key
from ratio_bench.leaderboard.reproduction import reproduce
from ratio_bench.leaderboard.requests import read_queue
from ratio_bench.leaderboard.submit import submit
from ratio_bench.leaderboard.worker import (
    WorkerOptions,
    default_log_file,
    default_worker_id,
    local_custody,
    local_dataset,
    run,
)
from ratio_bench.llm.options import make_judge, prefixed_judge_args


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
