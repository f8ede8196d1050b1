"""The objective: MNRL at scale 20; cross-device negatives under DDP equal one process on the whole batch."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from sentence_transformers import SentenceTransformer
from sentence_transformers.sentence_transformer.losses import (
    CachedMultipleNegativesRankingLoss,
    MultipleNegativesRankingLoss,
)

from ratio_bench.training.loss import build_loss

WORKER = Path(__file__).with_name("ddp_loss_worker.py")


def test_loss_choice(tiny_models):
    model = SentenceTransformer(str(tiny_models["bert"]), device="cpu")
    plain, cached = build_loss(model), build_loss(model, mini_batch_size=4)
    assert type(plain) is MultipleNegativesRankingLoss and plain.scale == 20.0
    assert type(cached) is CachedMultipleNegativesRankingLoss and cached.mini_batch_size == 4


@pytest.mark.slow
def test_two_processes_of_b_equal_one_process_of_2b(tmp_path, tiny_models):
    out = tmp_path / "loss.json"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path), "OMP_NUM_THREADS": "1"}
    cmd = [
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--nproc_per_node",
        "2",
        "--master_port",
        "29533",
        str(WORKER),
        str(tiny_models["bert"]),
        str(out),
        "4",
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    losses = json.loads(out.read_text())
    assert losses["ddp"] == pytest.approx(losses["single"], abs=1e-5)
    # without gathering each process only sees its own B negatives: a different (smaller) loss
    assert losses["without_gather"] < losses["single"] - 1e-3


def test_one_process_does_not_gather_so_nothing_warns_about_a_missing_process_group(tiny_models, monkeypatch):
    model = SentenceTransformer(str(tiny_models["bert"]), device="cpu")
    monkeypatch.delenv("WORLD_SIZE", raising=False)
    assert build_loss(model).gather_across_devices is False
    assert build_loss(model, mini_batch_size=4).gather_across_devices is False
    monkeypatch.setenv("WORLD_SIZE", "2")  # under torchrun: the negatives of every process
    assert build_loss(model).gather_across_devices is True
    assert build_loss(model, gather_across_devices=False).gather_across_devices is False
