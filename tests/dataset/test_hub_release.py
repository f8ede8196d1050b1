"""A release by name (``--dataset ORG/NAME[@REV]``) on the loopback Hub: published, then scored, downloaded and
read again offline, with the same figures as the folder it came from (:mod:`ratio_bench.dataset.hub_release`)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from tests.helpers.cli import assert_user_error, run_ratio
from tests.helpers.hub_server import HubServer
from tests.helpers.ports import unused_url

from ratio_bench.dataset.hub_release import HubRef, hub_ref

TOKEN = "hf_stranger_reader_token_45"
MTEB_BY_NAME = """
import json, sys
from ratio_bench.evaluation.scoring.mteb_tasks import ratio_tasks
print(json.dumps(ratio_tasks(["address"], sys.argv[1])[0].metadata.dataset))
"""
REPO = "fixture-org/ratio-small"


def _env(hub: HubServer, tmp_path: Path) -> dict[str, str]:
    hub.state.add_user(TOKEN, "stranger")  # a known user: the dev Hub may refuse unknown tokens
    return {**hub.env(TOKEN, tmp_path / "hf"), "RATIO_CACHE": str(tmp_path / "cache")}


def _score(dataset: str | Path, out: Path, env: dict, cwd: Path) -> dict:
    run = run_ratio("score", "--model", "bm25", "--dataset", dataset, "--split", "test", "--out", out,
                    env=env, cwd=cwd)  # fmt: skip
    assert run.code == 0, run.err
    return json.loads(out.read_text())


def test_a_name_is_a_hub_release_only_when_no_such_path_exists(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert hub_ref("org/name@v1.0") == HubRef("org/name", "v1.0")
    assert hub_ref("org/name") == HubRef("org/name", None)
    (tmp_path / "org" / "name").mkdir(parents=True)
    assert hub_ref("org/name") is None  # an existing folder wins
    for local in ("ratio", "./org/other", "/abs/path", "a/b/c", "~/x/y", "../x", "org/..", "org/-x"):
        assert hub_ref(local) is None, local


def test_score_by_name_equals_the_folder_pinned_to_the_commit(small_release, tmp_path):
    with HubServer() as hub:
        env = _env(hub, tmp_path)
        published = run_ratio("dataset", "publish", small_release, "--repo-id", REPO, env=env, timeout=120)
        assert published.code == 0, published.err
        sha = hub.state.resolve(f"datasets/{REPO}", "main") or hub.state.resolve(REPO, "main")
        by_folder = _score(small_release, tmp_path / "folder.json", env, tmp_path)
        by_name = _score(f"{REPO}@0.0.1-test", tmp_path / "name.json", env, tmp_path)
        assert by_name["dataset"]["hub"] == f"{REPO}@{sha}" and len(sha) == 40
        by_name["dataset"].pop("hub")
        for entry in (by_name, by_folder):
            entry.pop("model_meta")  # measured throughput and memory: this run's, not the release's
        assert by_name == by_folder  # the same release, the same figures and per-query ranks, to the digit
        assert by_name["results"] and by_name["per_query"]
        cached = tmp_path / "cache" / "releases" / REPO / sha
        assert (cached / "manifest.json").is_file() and not list(cached.rglob(".cache"))
        assert not any(p.is_symlink() for p in cached.rglob("*"))  # real files: checked like a local release

        tasks = subprocess.run(  # the mteb tasks by name: the same fetch, the commit as their revision
            [sys.executable, "-c", MTEB_BY_NAME, f"{REPO}@0.0.1-test"], env={**os.environ, **env},
            capture_output=True, text=True, timeout=300,
        )  # fmt: skip
        assert tasks.returncode == 0, tasks.stderr
        assert json.loads(tasks.stdout) == {"path": str(cached), "revision": sha}

        downloaded = run_ratio("dataset", "download", f"{REPO}@{sha}", "--out", tmp_path / "copy", env=env)
        assert downloaded.code == 0, downloaded.err
        assert f"{REPO}@{sha}" in downloaded.out
        check = run_ratio("dataset", "check", tmp_path / "copy")
        assert check.code == 0, check.out + check.err
        assert (tmp_path / "copy" / "manifest.json").read_bytes() == (
            small_release / "manifest.json"
        ).read_bytes()
        refused = run_ratio("dataset", "download", REPO, "--out", small_release.parent / "corpus", env=env)
        assert_user_error(refused, "corpus", "nothing was changed")

    offline = {**env, "HF_HUB_OFFLINE": "1"}  # the Hub is gone: the tag seen before is read from the cache
    again = _score(f"{REPO}@0.0.1-test", tmp_path / "offline.json", offline, tmp_path)
    assert again["dataset"]["hub"] == f"{REPO}@{sha}"


def test_a_missing_name_or_a_repository_without_a_release_is_one_line(small_release, tmp_path):
    with HubServer() as hub:
        env = _env(hub, tmp_path)
        missing = run_ratio(
            "score", "--model", "bm25", "--dataset", "fixture-org/nothing", env=env, cwd=tmp_path
        )
        assert_user_error(missing, "--dataset fixture-org/nothing", "no folder fixture-org/nothing here",
                          "no such dataset repository", "ORG/NAME[@REVISION]")  # fmt: skip
        foreign = tmp_path / "notes"
        foreign.mkdir()
        (foreign / "README.md").write_text("just notes\n")
        env_pub = env
        from huggingface_hub import HfApi

        api = HfApi(endpoint=hub.url, token=TOKEN)
        api.create_repo("fixture-org/notes", repo_type="dataset")
        api.upload_folder(folder_path=str(foreign), repo_id="fixture-org/notes", repo_type="dataset")
        notes = run_ratio("index", "--dataset", "fixture-org/notes", "--model", "bm25", "--out", tmp_path / "idx",
                          env=env_pub, cwd=tmp_path)  # fmt: skip
        assert_user_error(notes, "fixture-org/notes", "holds no Ratio release")
        revision = run_ratio(
            "score", "--model", "bm25", "--dataset", "fixture-org/notes@v9", env=env, cwd=tmp_path
        )
        assert_user_error(revision, "fixture-org/notes@v9", "no such revision")
    assert not (tmp_path / "cache" / "releases" / "fixture-org" / "notes").exists() or not any(
        p.name == "manifest.json"
        for p in (tmp_path / "cache" / "releases" / "fixture-org" / "notes").rglob("*")
    )


@pytest.mark.parametrize("flag", ["--dataset"])
def test_an_existing_folder_of_that_name_wins(small_release, tmp_path, flag):
    (tmp_path / "org").mkdir()
    shutil.copytree(small_release, tmp_path / "org" / "rel")
    run = run_ratio("score", "--model", "bm25", flag, "org/rel", "--split", "test", "--out", tmp_path / "e.json",
                    env={"HF_ENDPOINT": unused_url(), "HF_HUB_OFFLINE": "1"}, cwd=tmp_path)  # fmt: skip
    assert run.code == 0, run.err
    assert "hub" not in json.loads((tmp_path / "e.json").read_text())["dataset"]


def test_a_release_over_the_size_bound_is_refused_before_its_files_are_downloaded(small_release, tmp_path):
    """The Hub's listed sizes are read first: a release over $RATIO_MAX_RELEASE_BYTES (or over the free disk)
    costs one line and no download; a bad bound names the variable."""
    with HubServer() as hub:
        env = _env(hub, tmp_path)
        assert (
            run_ratio("dataset", "publish", small_release, "--repo-id", REPO, env=env, timeout=120).code == 0
        )
        listed = sum(
            p.stat().st_size for p in small_release.rglob("*.parquet")
        )  # the data files alone are over the bound below
        tight = {**env, "RATIO_MAX_RELEASE_BYTES": str(listed // 2)}
        refused = run_ratio("score", "--model", "bm25", "--dataset", REPO, env=tight, cwd=tmp_path)
        assert_user_error(refused, f"--dataset {REPO}", "over the bound", "RATIO_MAX_RELEASE_BYTES")
        bad = run_ratio("score", "--model", "bm25", "--dataset", REPO, cwd=tmp_path,
                        env={**env, "RATIO_MAX_RELEASE_BYTES": "lots"})  # fmt: skip
        assert_user_error(bad, "RATIO_MAX_RELEASE_BYTES='lots'", "positive number of bytes")
        releases = tmp_path / "cache" / "releases"
        assert not any(p.suffix == ".parquet" for p in releases.rglob("*"))  # nothing of the data came down
        fine = run_ratio("score", "--model", "bm25", "--dataset", REPO, env=env, cwd=tmp_path)
        assert fine.code == 0, fine.err  # the default bound takes it
