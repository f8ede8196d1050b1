"""Publish round trip against a Hub-compatible server on loopback (tests/helpers/hub_server.py)."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from tests.helpers.cli import assert_user_error, run_ratio
from tests.helpers.dataset import write_config
from tests.helpers.hub_server import HubServer
from tests.helpers.ports import unused_url

from ratio_bench.dataset.build import build_release
from ratio_bench.dataset.config import load_config
from ratio_bench.dataset.publish import publish
from ratio_bench.dataset.release import NotAReleaseError

TOKEN = "hf_fixture_secret_token_123"
READ_BACK = """
import json, sys
from datasets import load_dataset
out = {}
for config, rev in json.loads(sys.argv[1]):
    ds = load_dataset("fixture-org/ratio-fixture", config, revision=rev)
    out[f"{config}@{rev}"] = {s: sorted(json.dumps(r, sort_keys=True, default=str) for r in ds[s]) for s in ds}
print(json.dumps(out))
"""


def _local_rows(root: Path, config: str) -> dict[str, list[str]]:
    out = {}
    for f in sorted((root / "data" / config).glob("*.parquet")):
        split = f.name.split("-")[0]
        out.setdefault(split, []).extend(
            json.dumps(r, sort_keys=True, default=str) for r in pq.read_table(f).to_pylist()
        )
    return {k: sorted(v) for k, v in out.items()}


def test_publish_then_load_dataset_from_the_hub(dataset_corpus, tmp_path):
    cfg = load_config(write_config(tmp_path / "cfg.yaml", dataset_corpus, tmp_path / "work"))
    root = tmp_path / "ratio"
    build_release(cfg, root, progress=False)
    with HubServer() as hub:
        env = {**os.environ, **hub.env(TOKEN, tmp_path / "hf_home")}
        pub = subprocess.run(
            [
                sys.executable,
                "-m",
                "ratio_bench.cli",
                "publish",
                str(root),
                "--repo-id",
                "fixture-org/ratio-fixture",
            ],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert pub.returncode == 0, pub.stderr
        assert "tag 0.0.1-test" in pub.stdout
        assert hub.state.tokens_seen == {TOKEN}  # the token was sent to the Hub ...
        configs = [["address", "main"], ["corpus", "0.0.1-test"], ["specify-qrels", "main"]]
        read = subprocess.run(
            [sys.executable, "-c", READ_BACK, json.dumps(configs)],
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert read.returncode == 0, read.stderr
    got = json.loads(read.stdout.strip().splitlines()[-1])
    for config, rev in configs:
        assert got[f"{config}@{rev}"] == _local_rows(root, config)
    # ... and never printed or written anywhere
    assert TOKEN not in pub.stdout + pub.stderr + read.stdout + read.stderr
    for f in [*root.rglob("*"), *(tmp_path / "hf_home").rglob("*")]:
        if f.is_file() and f.stat().st_size < 50_000_000:
            assert TOKEN.encode() not in f.read_bytes(), f


def test_publish_refuses_a_folder_that_is_not_a_release(tmp_path):
    with pytest.raises(NotAReleaseError, match="not a Ratio release folder .*ratio dataset build"):
        publish(tmp_path, "org/name")


def test_publish_refuses_a_release_marked_never_to_publish_even_forced(dataset_corpus, tmp_path):
    release = {"name": "ratio-fixture", "version": "0.0.1-test", "license": "dev only", "publish": False}
    cfg = load_config(write_config(tmp_path / "cfg.yaml", dataset_corpus, tmp_path / "work", release=release))
    root = tmp_path / "ratio"
    build_release(cfg, root, progress=False)
    with HubServer() as hub:
        env = hub.env(TOKEN, tmp_path / "hf")
        refused = run_ratio("publish", root, "--repo-id", "fixture-org/dev", env=env, timeout=120)
        assert_user_error(refused, str(root), "release.publish: false", "cfg.yaml", "release.publish: true")
        forced = run_ratio("publish", root, "--repo-id", "fixture-org/dev", "--force", env=env, timeout=120)
        assert_user_error(forced, "release.publish: false (--force does not override it)")
        assert (
            hub.state.commits == {} and hub.state.tokens_seen == set()
        )  # nothing was sent, not even the token
    assert TOKEN not in refused.out + refused.err + forced.out + forced.err


def test_an_unreachable_hub_is_a_user_error_without_the_token(small_release, tmp_path):
    endpoint = unused_url()
    env = {"HF_ENDPOINT": endpoint, "HF_TOKEN": TOKEN, "HF_HOME": str(tmp_path / "hf")}
    run = run_ratio("publish", small_release, "--repo-id", "fixture-org/x", env=env, timeout=120)
    assert_user_error(run, endpoint, "HF_ENDPOINT")
    assert TOKEN not in run.out + run.err


def test_publish_uploads_exactly_the_release_never_other_files_or_symlink_targets(small_release, tmp_path):
    root = tmp_path / "ratio"
    shutil.copytree(small_release, root)
    secret = tmp_path / "outside.txt"
    secret.write_text("not for the Hub", encoding="utf-8")
    (root / ".env").write_text(f"HF_TOKEN={TOKEN}\n", encoding="utf-8")
    (root / "data" / "linked.txt").symlink_to(secret)
    (root / "judgments").mkdir()
    (root / "judgments" / "pool.json").write_text("{}", encoding="utf-8")
    listed = set(json.loads((root / "manifest.json").read_text())["files"])
    with HubServer() as hub:
        env = hub.env(TOKEN, tmp_path / "hf")
        refused = run_ratio("publish", root, "--repo-id", "fixture-org/exact", env=env, timeout=120)
        assert_user_error(refused, "not in the manifest: .env, data/linked.txt", "nothing was uploaded")
        assert hub.state.commits == {} and hub.state.tokens_seen == set()
        (root / ".env").unlink()
        (root / "data" / "linked.txt").unlink()
        run = run_ratio("publish", root, "--repo-id", "fixture-org/exact", env=env, timeout=120)
        assert run.code == 0, run.err
        sent = hub.state.commits[hub.state.resolve("datasets/fixture-org/exact", "0.0.1-test")]
        assert set(sent) == listed | {"manifest.json"}  # the judged pool stays home too
        card = root / "README.md"
        card.rename(tmp_path / "card.md")
        card.symlink_to(tmp_path / "card.md")  # same bytes, so its checksum still matches
        refused = run_ratio("publish", root, "--repo-id", "fixture-org/link", env=env, timeout=120)
        assert_user_error(refused, "README.md is a symlink")
        card.unlink()
        (tmp_path / "card.md").rename(card)
        shard = next((root / "data" / "corpus").glob("test-*.parquet"))
        shard.write_bytes(shard.read_bytes()[:-200])
        refused = run_ratio("publish", root, "--repo-id", "fixture-org/cut", env=env, timeout=120)
        line = assert_user_error(
            refused, "fails `ratio dataset check`", "data/corpus/test-", "nothing was uploaded"
        )
        assert "Traceback" not in line and set(hub.state.refs) == {"datasets/fixture-org/exact"}
