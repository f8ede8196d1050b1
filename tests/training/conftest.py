"""Tiny randomly initialised backbones built in-process (no downloads) and a tiny release folder.

The three architectures are the spec's: BERT-style (all-mpnet-base-v2's family; the MiniLM tokenizer from its
installed package), ModernBERT (ModernBERT-embed-large) and Qwen2 with mean pooling and a Dense projection
(Stella-en-1.5B-v5). Sizes are a few thousand parameters per layer so a training step takes milliseconds.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.helpers.training import (
    build_tiny,
    write_release,
)

TRAIN_END = "2023-06-30"  # the tuned folder's train partition ends after its backbone's cut-off (2021)


@pytest.fixture(scope="session")
def tiny_models(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("tiny-models")
    return {arch: build_tiny(arch, root) for arch in ("bert", "modernbert", "qwen2")}


@pytest.fixture
def tiny_release(tmp_path) -> Path:
    return write_release(tmp_path / "release")


@pytest.fixture(scope="session")
def tuned_folder(tmp_path_factory, tiny_models) -> Path:
    """A finished ``ratio train`` output folder: the tiny BERT tuned for Address, one trial of one epoch."""
    import yaml

    from ratio_bench.training.config import load_config
    from ratio_bench.training.run import train

    root = tmp_path_factory.mktemp("tuned")
    release = write_release(root / "release")
    manifest = json.loads((release / "manifest.json").read_text(encoding="utf-8"))  # what scoring reads too
    manifest |= {"name": "tiny", "version": "0.0.1"}
    manifest["config"]["release"] |= {"license": "development use only", "publish": False}
    manifest["config"]["splits"] = {"train": {"end": TRAIN_END}}  # what the model's cut-off is made of
    (release / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    config = root / "all-mpnet-base-v2-generic-address.yaml"
    raw = {
        "backbone": "all-mpnet-base-v2",
        "weights": str(tiny_models["bert"]),
        "setup": "generic",
        "relation": "address",
        "eval_batch_size": 16,
        "trials": [{"epochs": 1, "batch_size": 8, "learning_rate": 1e-3, "rationale": "tiny | <b>probe</b>"}],
    }
    config.write_text(yaml.safe_dump(raw), encoding="utf-8")
    out = root / "out"
    train(load_config(config), release, out, show_progress=False)
    return out
