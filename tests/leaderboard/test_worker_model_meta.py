"""The worker measures the model it scores: its published entries carry ``model_meta`` (shape of the loaded model,
the card's licence and base model, the request's stated cut-off, the cost on the worker's hardware class)."""

from __future__ import annotations

import json
import shutil

import pytest
from tests.leaderboard.conftest import RESULTS

CARD = "---\nlicense: mit\nbase_model: org/base\n---\n# tiny\n"


@pytest.mark.slow  # ~50 s (a worker pass); make test-all runs it
def test_the_workers_entries_carry_the_measured_model_meta(board, tiny_models, small_release, tmp_path):
    from sentence_transformers import SentenceTransformer

    folder = tmp_path / "carded"
    shutil.copytree(tiny_models["good"], folder)
    (folder / "README.md").write_text(CARD, encoding="utf-8")
    sha = board.publish("org/tiny", folder)
    assert board.submit("org/tiny", "--training-cutoff", "2024-01-31").code == 0
    work = board.worker(small_release, "--once")
    assert work.code == 0, work.err
    files = board.files(RESULTS)
    meta = json.loads(files[f"org/tiny/{sha}/generic/test.json"])["model_meta"]
    model = SentenceTransformer(str(folder), device="cpu")
    assert meta["parameters"] == sum(p.numel() for p in model.parameters())
    assert (meta["embedding_dim"], meta["max_tokens"]) == (model.get_embedding_dimension(), 64)
    assert (meta["license"], meta["base_model"], meta["training_cutoff"]) == ("mit", "org/base", "2024-01-31")
    assert meta["hardware"].startswith("cpu-") and meta["peak_memory_mb"] > 0
    assert meta["throughput_texts_per_s"] > 0  # the test split is encoded from scratch
