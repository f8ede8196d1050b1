"""The devhub speaks the Hub's protocol for who wrote what and when: writers, pull requests, discussions, commit
authors and dates (through ``huggingface_hub.HfApi``, as the leaderboard uses it)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from huggingface_hub import CommitOperationAdd, HfApi
from huggingface_hub.errors import HfHubHTTPError

from ratio_bench.devhub.server import HubServer


@pytest.fixture
def hub():
    with HubServer() as server:
        server.state.add_user("tok-keeper", "keeper")
        server.state.add_user("tok-alice", "alice")
        server.state.create_repo("datasets/org/queue", writers=["keeper"])
        yield server


def _api(hub, token: str) -> HfApi:
    return HfApi(endpoint=hub.url, token=token)


def _code(call) -> int:
    with pytest.raises(HfHubHTTPError) as e:
        call()
    return e.value.response.status_code


def test_only_writers_push_to_main_anyone_opens_a_pull_request(hub):
    keeper, alice = _api(hub, "tok-keeper"), _api(hub, "tok-alice")
    push = CommitOperationAdd("a.json", b"1")
    assert (
        _code(lambda: alice.create_commit("org/queue", [push], commit_message="x", repo_type="dataset"))
        == 403
    )
    anonymous = HfApi(endpoint=hub.url, token=False)
    assert _code(lambda: anonymous.create_commit(
        "org/queue", [push], commit_message="x", repo_type="dataset", create_pr=True
    )) == 401  # fmt: skip
    pr = alice.create_commit("org/queue", [push], commit_message="Add a", repo_type="dataset", create_pr=True)
    assert (pr.pr_num, pr.pr_revision) == (1, "refs/pr/1") and pr.pr_url.endswith(
        "/datasets/org/queue/discussions/1"
    )
    alice.create_commit(  # the author pushes to their own pull request
        "org/queue", [CommitOperationAdd("b.json", b"2")], commit_message="Add b", repo_type="dataset",
        revision="refs/pr/1",
    )  # fmt: skip
    assert keeper.list_repo_files("org/queue", repo_type="dataset") == []
    assert sorted(keeper.list_repo_files("org/queue", repo_type="dataset", revision="refs/pr/1")) == [
        "a.json",
        "b.json",
    ]
    (listed,) = keeper.get_repo_discussions("org/queue", repo_type="dataset", discussion_status="open")
    assert (listed.num, listed.author, listed.is_pull_request, listed.title) == (1, "alice", True, "Add a")
    keeper.comment_discussion("org/queue", 1, "checking", repo_type="dataset")
    assert _code(lambda: alice.merge_pull_request("org/queue", 1, repo_type="dataset")) == 403
    keeper.merge_pull_request("org/queue", 1, comment="Admitted", repo_type="dataset")
    details = keeper.get_discussion_details("org/queue", 1, repo_type="dataset")
    assert details.status == "merged" and details.target_branch == "refs/heads/main"
    assert [e.content for e in details.events if e.type == "comment"][1:] == ["checking", "Admitted"]
    assert sorted(keeper.list_repo_files("org/queue", repo_type="dataset")) == ["a.json", "b.json"]
    assert details.merge_commit_oid == keeper.repo_info("org/queue", repo_type="dataset").sha


def test_commits_carry_their_author_and_the_servers_time(hub):
    keeper, alice = _api(hub, "tok-keeper"), _api(hub, "tok-alice")
    later = datetime(2030, 1, 2, 3, 4, 5, tzinfo=UTC)
    hub.state.clock = lambda: later
    keeper.upload_file(path_or_fileobj=b"x", path_in_repo="q.json", repo_id="org/queue", repo_type="dataset")
    num = alice.create_commit(
        "org/queue",
        [CommitOperationAdd("r.json", b"y")],
        commit_message="mine",
        repo_type="dataset",
        create_pr=True,
    ).pr_num
    hub.state.clock = lambda: later + timedelta(hours=1)
    keeper.merge_pull_request("org/queue", num, repo_type="dataset")
    commits = keeper.list_repo_commits("org/queue", repo_type="dataset")
    assert [(c.authors, c.created_at) for c in commits[:2]] == [
        (["keeper"], later + timedelta(hours=1)),  # the merge, by the maintainer who merged
        (["keeper"], later),
    ]
    (info,) = keeper.get_paths_info("org/queue", ["r.json"], repo_type="dataset", expand=True)
    assert (info.last_commit.oid, info.last_commit.date) == (commits[0].commit_id, later + timedelta(hours=1))
    import httpx

    assert httpx.head(f"{hub.url}/api/datasets/org/queue").headers["date"] == "Wed, 02 Jan 2030 04:04:05 GMT"


def test_the_author_may_close_their_pull_request_others_may_not(hub):
    keeper, alice = _api(hub, "tok-keeper"), _api(hub, "tok-alice")
    hub.state.add_user("tok-bob", "bob")
    num = alice.create_commit(
        "org/queue",
        [CommitOperationAdd("a.json", b"1")],
        commit_message="a",
        repo_type="dataset",
        create_pr=True,
    ).pr_num
    bob = _api(hub, "tok-bob")
    assert _code(lambda: bob.change_discussion_status("org/queue", num, "closed", repo_type="dataset")) == 403
    assert _code(lambda: bob.create_commit(
        "org/queue", [CommitOperationAdd("z.json", b"2")], commit_message="z", repo_type="dataset",
        revision=f"refs/pr/{num}",
    )) == 403  # fmt: skip
    alice.change_discussion_status("org/queue", num, "closed", comment="withdrawn", repo_type="dataset")
    assert keeper.get_discussion_details("org/queue", num, repo_type="dataset").status == "closed"
    assert _code(lambda: keeper.merge_pull_request("org/queue", num, repo_type="dataset")) == 400


def test_discussions_and_empty_pull_requests_on_a_model_repo(hub):
    """What results pull requests and request comments need: any repo type, a pull request opened empty and
    pushed to, a plain discussion with comments."""
    keeper, alice = _api(hub, "tok-keeper"), _api(hub, "tok-alice")
    keeper.create_repo("keeper/model")
    talk = alice.create_discussion("keeper/model", "a question", description="why?")
    assert (talk.num, talk.is_pull_request, [e.content for e in talk.events]) == (1, False, ["why?"])
    pr = alice.create_pull_request("keeper/model", "results", description="scores")
    alice.create_commit(
        "keeper/model",
        [CommitOperationAdd("eval.json", b"{}")],
        commit_message="scores",
        revision=pr.git_reference,
    )
    found = keeper.get_repo_discussions("keeper/model", discussion_type="pull_request")
    assert [(d.num, d.author) for d in found] == [(2, "alice")]
    assert _code(lambda: alice.merge_pull_request("keeper/model", 2)) == 403
    keeper.merge_pull_request("keeper/model", 2)
    assert keeper.list_repo_files("keeper/model") == ["eval.json"]
