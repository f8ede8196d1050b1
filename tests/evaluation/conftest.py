import shutil
from pathlib import Path

import pytest

from conftest import write_jsonl
from dataset.conftest import records, write_config
from ratio_bench.dataset.build import build_release
from ratio_bench.dataset.config import load_config


@pytest.fixture(scope="session")
def small_release(tmp_path_factory) -> Path:
    """The synthetic dataset-test corpus built into a release (test split: 2 Address queries, 3 candidates)."""
    root = tmp_path_factory.mktemp("release")
    (root / "corpus").mkdir()
    a, b = records()
    write_jsonl(root / "corpus" / "a.jsonl", a)
    write_jsonl(root / "corpus" / "b.jsonl", b)
    cfg = load_config(write_config(root / "cfg.yaml", root / "corpus", root / "work"))
    build_release(cfg, root / "ratio", progress=False)
    shutil.rmtree(root / "work")
    return root / "ratio"
