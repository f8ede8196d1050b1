"""The leaderboard service against the loopback Hub: tiny models published there, a queue and a results repo.

Models are the tiny BERT of the training tests (about a million parameters, random weights, MiniLM's tokenizer)
and copies with one defect each; the dataset is the session's ``small_release``.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest
from tests.helpers.cli import Run, run_ratio
from tests.helpers.models import make_remote_code
from tests.helpers.training import build_tiny

from ratio_bench.devhub.server import HubServer
from ratio_bench.leaderboard.provenance import (
    KEY_ENV,
    TRUSTED_SCHEMA,
    TRUSTED_WORKERS,
    WorkerKey,
    generate_key,
)

TOKEN = "hf_leaderboard_fixture_token"  # a submitter's
USER = "alice"
KEEPER_TOKEN = "hf_leaderboard_keeper_token"  # the maintainers' (admission and workers)
KEEPER = "keeper"
REQUESTS, RESULTS = "board/requests", "board/results"


def _shrink_vocabulary(folder: Path, size: int = 500) -> None:
    """Loads and passes every check, then fails to encode: the tokenizer's ids run past the embedding table."""
    from safetensors.numpy import load_file, save_file

    weights = load_file(folder / "model.safetensors")
    key = next(k for k in weights if k.endswith("word_embeddings.weight"))
    weights[key] = weights[key][:size].copy()
    save_file(weights, folder / "model.safetensors", metadata={"format": "pt"})
    config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    (folder / "config.json").write_text(json.dumps({**config, "vocab_size": size}), encoding="utf-8")


@pytest.fixture(scope="session")
def tiny_models(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("leaderboard-models")
    good = build_tiny("bert", root)
    folders = {"good": good}
    for name, defect in {
        "encode-fails": _shrink_vocabulary,
        "remote-code": lambda f: make_remote_code(f, root / "remote-code-ran"),
    }.items():
        folders[name] = root / name
        shutil.copytree(good, folders[name])
        defect(folders[name])
    return folders


@dataclass
class Board:
    """A running loopback Hub with the queue and results repos, and what a client process needs to use it."""

    hub: HubServer
    env: dict[str, str]  # the submitter's (alice)
    home: Path
    key: WorkerKey  # the workers' signing key (RATIO_WORKER_KEY in env), listed in the results repo

    @property
    def keeper_env(self) -> dict[str, str]:
        return {**self.env, "HF_TOKEN": KEEPER_TOKEN}

    def api(self, token: str = TOKEN):
        from huggingface_hub import HfApi

        return HfApi(endpoint=self.hub.url, token=token)

    def publish(self, repo_id: str, folder: Path) -> str:
        """Upload a model folder; returns the commit."""
        self.api().create_repo(repo_id, exist_ok=True)
        return self.api().upload_folder(repo_id=repo_id, folder_path=folder).oid

    def ratio(self, *args, timeout: float = 120, env: dict[str, str] | None = None) -> Run:
        return run_ratio(*args, env=env or self.env, timeout=timeout)

    def submit(self, model: str, *more: str, token: str = TOKEN) -> Run:
        """``ratio leaderboard submit`` as the user of ``token``: a pull request on the queue."""
        env = {**self.env, "HF_TOKEN": token}
        return self.ratio("leaderboard", "submit", model, "--requests", REQUESTS, *more, env=env)

    def admit(self) -> Run:
        """``ratio leaderboard admit`` as a maintainer."""
        return self.ratio("leaderboard", "admit", "--requests", REQUESTS, env=self.keeper_env)

    def worker(self, dataset: Path, *more: str, timeout: float = 180) -> Run:
        """A worker pass as a maintainer, admitting open pull requests first."""
        return self.ratio(
            "leaderboard", "worker", "--requests", REQUESTS, "--results", RESULTS, "--dataset", dataset,
            "--cache-dir", self.home / "embeddings", "--admit", *more, timeout=timeout, env=self.keeper_env,
        )  # fmt: skip

    def start_worker(self, dataset: Path, *more: str, home: str = "hf") -> subprocess.Popen:
        """A worker in the background, with its own Hub cache ``home`` (so that its downloads are its own)."""
        command = [sys.executable, "-m", "ratio_bench.cli", "leaderboard", "worker", "--requests", REQUESTS,
                   "--results", RESULTS, "--dataset", str(dataset), "--cache-dir", str(self.home / "embeddings"),
                   *more]  # fmt: skip
        import os

        return subprocess.Popen(
            command,
            env={**os.environ, **self.keeper_env, "HF_HOME": str(self.home / home)},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            stdin=subprocess.DEVNULL,
        )

    def files(self, repo: str) -> dict[str, bytes]:
        """Every file of a dataset repo at its head."""
        state = self.hub.state
        sha = state.resolve(f"datasets/{repo}", "main")
        return {path: state.blobs[blob] for path, blob in state.files(sha).items()}

    def requests(self) -> dict[str, dict]:
        """The queue: every request file on main of the requests repo."""
        return {p: json.loads(d) for p, d in self.files(REQUESTS).items() if "/" in p}

    def pull_requests(self) -> list[dict]:
        """The requests repo's pull requests: num, author, status, the files each changes, its comments."""
        state, repo = self.hub.state, f"datasets/{REQUESTS}"
        return [
            {"num": d["num"], "author": d["author"], "status": d["status"],
             "files": sorted(state.pr_changes(repo, d)),
             "comments": [e["data"]["latest"]["raw"] for e in d["events"] if e["type"] == "comment"][1:]}
            for d in state.discussions.get(repo, []) if d["isPullRequest"]
        ]  # fmt: skip

    def keeper_commit(self, changes: dict[str, bytes], author: str = KEEPER) -> str:
        """A commit straight onto the queue's main, as ``author`` (a maintainer by default)."""
        return self.hub.state.commit(f"datasets/{REQUESTS}", "main", changes, author=author, title="edit")

    def set_policy(self, **policy) -> None:
        self.keeper_commit({"policy.json": json.dumps({"schema": "ratio-queue-policy/1", **policy}).encode()})

    def wait_for(self, condition, timeout: float = 60) -> None:
        end = time.monotonic() + timeout
        while not condition():
            assert time.monotonic() < end, "timed out waiting"
            time.sleep(0.05)


def trusted_workers(*keys: WorkerKey) -> bytes:
    """A results repository's ``trusted_workers.json`` listing ``keys``."""
    listing = [k.listing(f"w-{k.key_id[:6]}", "maintainer") for k in keys]
    return json.dumps({"schema": TRUSTED_SCHEMA, "workers": listing}).encode()


@pytest.fixture
def board(tmp_path: Path):
    with HubServer() as hub:
        hub.state.add_user(TOKEN, USER)
        hub.state.add_user(KEEPER_TOKEN, KEEPER)
        hub.state.create_repo(f"datasets/{REQUESTS}", writers=[KEEPER])  # submitters open pull requests
        hub.state.create_repo(f"datasets/{RESULTS}")
        key = generate_key(tmp_path / "worker.key")
        env = {**hub.env(TOKEN, tmp_path / "hf"), KEY_ENV: str(tmp_path / "worker.key")}
        made = Board(hub, env, tmp_path, key)
        made.api().upload_file(
            path_or_fileobj=trusted_workers(key),
            path_in_repo=TRUSTED_WORKERS,
            repo_id=RESULTS,
            repo_type="dataset",
        )
        yield made


@pytest.fixture
def hub_env(board, monkeypatch, tmp_path):
    """This process as a Hub client of the loopback server (the live board, a judging round in process)."""
    import huggingface_hub.constants

    monkeypatch.setenv("HF_ENDPOINT", board.hub.url)
    monkeypatch.setenv("HF_TOKEN", TOKEN)
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(tmp_path / "hf-cache"))
    return board
