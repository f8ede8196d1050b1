"""``python -m ratio_bench.devhub`` on its own: loopback only, repos kept under --root, parent_commit conflicts."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest


def _start(root: Path) -> tuple[subprocess.Popen, str]:
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "ratio_bench.devhub",
            "--port",
            "0",
            "--root",
            str(root),
            "--user",
            "tok=alice",
        ],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ},
    )
    line = proc.stdout.readline()
    url = re.search(r"http://127\.0\.0\.1:\d+", line)
    assert url, line  # loopback only
    return proc, url.group(0)


def test_devhub_persists_its_repos_and_refuses_a_stale_parent(tmp_path):
    from huggingface_hub import CommitOperationAdd, HfApi
    from huggingface_hub.errors import HfHubHTTPError

    proc, url = _start(tmp_path / "hub")
    try:
        api = HfApi(endpoint=url, token="tok")
        assert api.whoami()["name"] == "alice"
        api.create_repo("org/data", repo_type="dataset")
        first = api.upload_file(
            path_or_fileobj=b"one", path_in_repo="a.txt", repo_id="org/data", repo_type="dataset"
        )
        api.upload_file(path_or_fileobj=b"two", path_in_repo="b.txt", repo_id="org/data", repo_type="dataset")
        with pytest.raises(HfHubHTTPError) as stale:  # written on top of a commit that is no longer the head
            api.create_commit(
                "org/data",
                [CommitOperationAdd("c.txt", b"three")],
                commit_message="late",
                repo_type="dataset",
                parent_commit=first.oid,
            )
        assert stale.value.response.status_code == 412
    finally:
        proc.terminate()
        proc.wait(10)
    proc, url = _start(tmp_path / "hub")  # a restart keeps what was committed
    try:
        api = HfApi(endpoint=url, token="tok")
        assert sorted(api.list_repo_files("org/data", repo_type="dataset")) == ["a.txt", "b.txt"]
        assert api.hf_hub_download("org/data", "b.txt", repo_type="dataset", cache_dir=tmp_path / "c")
    finally:
        proc.terminate()
        proc.wait(10)


def test_an_unknown_token_is_refused_with_401_as_on_the_hub():
    """Issue 43: the dev Hub answered whoami (and took commits) for any token, so a test with a bad token passed."""
    from huggingface_hub import HfApi
    from huggingface_hub.errors import HfHubHTTPError

    from ratio_bench.devhub.server import HubServer

    with HubServer() as hub:
        hub.state.add_user("tok", "alice")
        assert HfApi(endpoint=hub.url, token="tok").whoami()["name"] == "alice"
        stranger = HfApi(endpoint=hub.url, token="hf_nobody_knows_this_one")
        for call in (stranger.whoami, lambda: stranger.create_repo("x/y", repo_type="dataset")):
            with pytest.raises(HfHubHTTPError) as refused:
                call()
            assert refused.value.response.status_code == 401
        assert "datasets/x/y" not in hub.state.refs
