"""What a submitter reads when a request ends: the worker comments on the pull request that admitted the request
(found by its path among the queue's merged pull requests) with the outcome, the result folder and the model
repo's eval-results pull request, which links back; and the one command that reproduces an entry
(:func:`reproduce_command`, named by every entry the job writes).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ratio_bench.evaluation.scoring.results import MAIN_SCORE
from ratio_bench.leaderboard import hub, ledger
from ratio_bench.leaderboard.hub import LeaderboardError
from ratio_bench.leaderboard.requests import Request

MAX_PRS_SEARCHED = 200  # merged pull requests looked through for a request's own


def request_pr(repo_id: str, path: str) -> tuple[int, str] | None:
    """(number, URL) of the merged pull request of the queue that added ``path`` (the newest, after a resubmission)."""
    merged = [pr for pr in ledger.pull_requests(repo_id) if pr.status == "merged"]
    api = hub.api()
    for pr in sorted(merged, key=lambda p: p.num, reverse=True)[:MAX_PRS_SEARCHED]:
        with hub.hub_errors(f"--requests {repo_id}: pull request #{pr.num}"):
            details = api.get_discussion_details(repo_id, pr.num, repo_type="dataset")
        if path in (details.diff or ""):
            return pr.num, f"{api.endpoint}/datasets/{repo_id}/discussions/{pr.num}"
    return None


def notify(repo_id: str, request: Request, text: str, log: Callable[[str], None]) -> str | None:
    """Comment ``text`` on the request's pull request; its URL, or None (no such pull request, or the Hub
    refused: logged, never failing the request)."""
    try:
        found = request_pr(repo_id, request.path)
        if found is None:
            log(f"{request.label}: no merged pull request adds {request.path}; no notice posted")
            return None
        with hub.hub_errors(f"--requests {repo_id}: pull request #{found[0]}"):
            hub.api().comment_discussion(repo_id, found[0], text, repo_type="dataset")
        return found[1]
    except LeaderboardError as e:
        log(f"{request.label}: the notice could not be posted ({e})")
        return None


def finished_text(request: Request, folder_url: str, figures: str, eval_pr: str | None, command: str) -> str:
    proposed = (
        f"Eval results proposed to {request.model}: {eval_pr} (its authors merge it or not)."
        if eval_pr
        else "No eval-results pull request was opened on the model repo."
    )
    return (
        f"Finished: {request.label} was scored by {request.worker} (attempt {request.attempts}). "
        f"Verified results: {folder_url} ({figures}). {proposed} Reproduce locally: `{command}`"
    )


def failed_text(request: Request, reason: str) -> str:
    return (
        f"Failed: {request.label}: {reason}. This is the model's (or setup's) error: fix it and submit again "
        "(a failed request may be submitted again)."
    )


def delayed_text(request: Request, reason: str) -> str:
    return (
        f"Delayed: {request.label} hit an infrastructure error ({reason}). It is back in the queue and this "
        "does not count against its attempts."
    )


def figures(entry: dict[str, Any]) -> str:
    """``test MRR@10: address 41.2, specify 30.0`` (x 100) of an entry."""
    scores = ", ".join(f"{rel} {100 * m[MAIN_SCORE]:.1f}" for rel, m in sorted(entry["results"].items()))
    return f"{entry['split']} MRR@10: {scores}"


def reproduce_command(model: str, sha: str, setup: str, split: str, release_name: str, version: str) -> str:
    """The one command that scores ``model`` at ``sha`` with ``setup`` on ``split`` of the release again."""
    return (
        f"ratio leaderboard reproduce {model}@{sha} --setup {setup} --split {split} "
        f"--dataset {release_name}@{version}"
    )
