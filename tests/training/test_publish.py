"""``ratio publish-models`` round trip against the loopback Hub (tests/helpers/hub_server.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest
import yaml
from tests.helpers.cli import assert_user_error, run_ratio
from tests.helpers.hub_server import HubServer
from tests.helpers.ports import unused_url

from ratio_bench import __version__

TOKEN = "hf_fixture_model_token_456"
NAME = "ratio-address-all-mpnet-base-v2-generic"
READ_BACK = """
import json, sys
from sentence_transformers import SentenceTransformer
from huggingface_hub import hf_hub_download
texts = ["a query about sparse graph kernels.", "we propose a dense retrieval index."]
out = {}
local, tag, repo = sys.argv[1:]
for ref, rev in ((repo, None), (repo, tag), (local, None)):
    model = SentenceTransformer(ref, revision=rev, device="cpu")
    out[f"{ref}@{rev}"] = {
        "prompts": model.prompts,
        "query": model.encode_query(texts).tolist(),
        "document": model.encode_document(texts).tolist(),
    }
out["card"] = open(hf_hub_download(repo, "README.md"), encoding="utf-8").read()
print(json.dumps(out))
"""


@pytest.mark.slow  # make test-all (make test stays near 10 minutes)
def test_publish_models_refuses_the_dev_release_then_round_trips_when_forced(tuned_folder, tmp_path):
    with HubServer() as hub:
        env = hub.env(TOKEN, tmp_path / "hf")
        refused = run_ratio(
            "publish-models", tuned_folder.parent, "--org", "fixture-org", env=env, timeout=120
        )
        assert_user_error(
            refused, str(tuned_folder), "release.publish: false", "development use only", "--force"
        )
        assert hub.state.commits == {} and hub.state.tokens_seen == set()  # nothing sent, not even the token
        pub = run_ratio(
            "publish-models", tuned_folder, "--org", "fixture-org", "--force", env=env, timeout=120
        )
        assert pub.code == 0, pub.err
        assert f"fixture-org/{NAME} (tag {__version__})" in pub.out
        assert hub.state.resolve(f"models/fixture-org/{NAME}", __version__)
        read = subprocess.run(
            [sys.executable, "-c", READ_BACK, str(tuned_folder / "best"), __version__, f"fixture-org/{NAME}"],
            env={**os.environ, **env},
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert read.returncode == 0, read.stderr
    got = json.loads(read.stdout.strip().splitlines()[-1])
    local = got.pop(f"{tuned_folder / 'best'}@None")
    card = got.pop("card")
    assert local["prompts"] == {"query": "query: ", "document": "document: "}
    for hub_copy in got.values():  # main and the version tag
        assert hub_copy["prompts"] == local["prompts"]
        for kind in ("query", "document"):
            diff = float(np.abs(np.array(hub_copy[kind]) - np.array(local[kind])).max())
            assert diff <= 1e-6, (kind, diff)
    front = yaml.safe_load(card.split("---\n")[1])
    assert front["model-index"][0]["name"] == NAME and f'SentenceTransformer("fixture-org/{NAME}")' in card
    assert TOKEN not in refused.out + refused.err + pub.out + pub.err + read.stdout + read.stderr
    for f in [*tuned_folder.rglob("*"), *(tmp_path / "hf").rglob("*")]:
        if f.is_file() and f.stat().st_size < 50_000_000:
            assert TOKEN.encode() not in f.read_bytes(), f


def test_publish_models_errors_name_the_folder_and_the_endpoint(tuned_folder, tmp_path):
    missing = run_ratio("publish-models", tmp_path, "--org", "x", timeout=120)
    assert_user_error(missing, str(tmp_path), "summary.json")
    endpoint = unused_url()
    env = {"HF_ENDPOINT": endpoint, "HF_TOKEN": TOKEN, "HF_HOME": str(tmp_path / "hf")}
    down = run_ratio("publish-models", tuned_folder, "--org", "x", "--force", env=env, timeout=120)
    assert_user_error(down, endpoint, "HF_ENDPOINT")
    assert TOKEN not in down.out + down.err
