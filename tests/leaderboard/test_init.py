"""``ratio leaderboard init ORG`` on the loopback Hub: the two dataset repos with README and policy, idempotent,
never overwriting; and ``submit`` says where to follow the request and where the result will appear."""

from __future__ import annotations

import json

import pytest
from tests.helpers.cli import assert_user_error
from tests.leaderboard.conftest import RESULTS

from ratio_bench.leaderboard.init import repo_ids, results_for


def _files(board, repo: str) -> dict[str, bytes]:
    state = board.hub.state
    return {p: state.blobs[b] for p, b in state.files(state.resolve(f"datasets/{repo}", "main")).items()}


def test_init_creates_the_requests_and_results_repos_with_readme_and_policy(board):
    run = board.ratio("leaderboard", "init", "ratio-bench")
    assert run.code == 0, run.err
    for repo, says in (
        ("ratio-bench/requests", "policy.json"),
        ("ratio-bench/results", "trusted_workers.json"),
    ):
        files = _files(board, repo)
        assert set(files) == {"README.md", "POLICY.md", says}, (
            repo
        )  # the file that says what it is (issue 43)
        assert files["README.md"].startswith(b"---\npretty_name: Ratio leaderboard")
        assert f"{repo}: " in run.out and f"wrote POLICY.md, README.md, {says}" in run.out
    assert (
        json.loads(_files(board, "ratio-bench/requests")["policy.json"])["schema"] == "ratio-queue-policy/1"
    )
    assert json.loads(_files(board, "ratio-bench/results")["trusted_workers.json"])["workers"] == []
    readme = _files(board, "ratio-bench/requests")["README.md"].decode()
    assert "ratio leaderboard submit ORG/MODEL --requests ratio-bench/requests" in readme
    assert "`ratio-bench/results`" in readme
    assert "2,000,000,000 parameters" in _files(board, "ratio-bench/requests")["POLICY.md"].decode()
    assert "ratio leaderboard submit ORG/MODEL --requests ratio-bench/requests" in run.out


def test_init_again_keeps_what_the_maintainers_edited(board):
    assert board.ratio("leaderboard", "init", "lab").code == 0
    board.hub.state.commit("datasets/lab/results", "main", {"README.md": b"our own words"})
    again = board.ratio("leaderboard", "init", "lab")
    assert again.code == 0, again.err
    assert _files(board, "lab/results")["README.md"] == b"our own words"
    assert "nothing to add; kept POLICY.md, README.md, trusted_workers.json as they are" in again.out


@pytest.mark.slow  # make test-all (make test stays near 10 minutes)
def test_init_on_existing_repos_adds_only_the_files_and_the_board_still_reads(board, tiny_models):
    """The fixture's board/requests and board/results exist and hold work: init adds README and policy, and
    neither is taken for a request or an entry."""
    board.publish("org/tiny", tiny_models["good"])
    assert board.submit("org/tiny").code == 0
    assert board.admit().code == 0  # the request is on the queue's main only once admitted
    # the queue's writers are the maintainers
    init = board.ratio("leaderboard", "init", "board", env=board.keeper_env)
    assert init.code == 0, init.err
    queue = board.ratio("leaderboard", "--from", RESULTS, "--requests", "board/requests")
    assert queue.code == 0, queue.err
    assert "README" not in queue.out + queue.err and "POLICY" not in queue.out + queue.err
    assert "org/tiny" in queue.out


def test_init_refuses_a_name_that_is_no_organisation(board):
    assert_user_error(board.ratio("leaderboard", "init", "a/b"), "ORG 'a/b'", code=2)


@pytest.mark.slow  # ~7 s (submit's checks run in test_flow); make test-all runs it
def test_submit_says_where_to_follow_the_request_and_where_the_result_appears(board, tiny_models):
    sha = board.publish("org/tiny", tiny_models["good"])
    sub = board.submit("org/tiny")
    assert sub.code == 0, sub.err
    assert (
        f"follow it: ratio leaderboard --from {RESULTS} --requests board/requests "
        f"(status in board/requests: org/tiny/{sha}_generic.json)" in sub.out
    )
    assert f"the result will appear in {RESULTS}: org/tiny/{sha}/generic/" in sub.out


def test_the_results_repo_goes_with_its_queue():
    assert repo_ids("ratio-bench") == ("ratio-bench/requests", "ratio-bench/results")
    assert results_for("ratio-bench/requests") == "ratio-bench/results"
    assert results_for("org/ratio-requests") == "org/ratio-results"
    assert results_for("org/queue") == "org/results"
