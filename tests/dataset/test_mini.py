"""The mini split: a seeded slice of test with stated sizes, its own pool, recorded in the manifest and checked."""

import json

import pyarrow.parquet as pq
import pytest
from tests.helpers.dataset import write_config

from ratio_bench.core.relations import RELATIONS
from ratio_bench.dataset import assemble
from ratio_bench.dataset.build import build_release
from ratio_bench.dataset.check import check_release
from ratio_bench.dataset.config import load_config
from ratio_bench.dataset.contract import file_checksums, split_sha256
from ratio_bench.dataset.release import Release


def _ids(root, config, split, column):
    return [
        r[column]
        for f in sorted((root / "data" / config).glob(f"{split}-*.parquet"))
        for r in pq.read_table(f).to_pylist()
    ]


@pytest.fixture
def small_mini(dataset_corpus, tmp_path, monkeypatch):
    """A release whose mini split keeps 1 query per relation and a pool of 3 (so both limits bite)."""
    monkeypatch.setattr(assemble, "MINI_QUERIES", 1)
    monkeypatch.setattr(assemble, "MINI_POOL", 3)
    cfg = load_config(write_config(tmp_path / "cfg.yaml", dataset_corpus, tmp_path / "work"))
    build_release(cfg, tmp_path / "ratio", progress=False)
    return cfg, tmp_path / "ratio"


def test_mini_is_a_seeded_slice_of_test_with_stated_sizes_recorded_and_checked(small_mini, tmp_path):
    cfg, root = small_mini
    manifest = json.loads((root / "manifest.json").read_text())
    mini = manifest["mini"]
    assert (mini["queries_per_relation"], mini["pool_size"], mini["drawn_from"]) == (1, 3, "test")
    assert mini["sha256"] == split_sha256(manifest["files"], "mini")
    test_pool = set(_ids(root, "corpus", "test", "id"))
    pool = _ids(root, "corpus", "mini", "id")
    assert len(pool) == mini["candidates"] == min(3, len(test_pool)) and set(pool) <= test_pool
    for rel in RELATIONS:
        queries = _ids(root, rel, "mini", "query_id")
        test = _ids(root, rel, "test", "query_id")
        assert len(queries) == mini["queries_by_relation"][rel] == min(1, len(test))
        assert set(queries) <= set(test) and set(_ids(root, rel, "mini", "gold_id")) <= set(pool)
    assert "mini" in Release.open(root).splits("corpus")
    assert all(r.passed for r in check_release(root))
    again = tmp_path / "elsewhere" / "ratio"
    build_release(cfg, again, progress=False)  # seeded: the same slice, byte for byte
    assert file_checksums(again) == file_checksums(root)


def test_ratio_check_fails_a_mini_split_that_differs_from_its_manifest(small_mini):
    _, root = small_mini
    manifest = json.loads((root / "manifest.json").read_text())
    manifest["mini"]["candidates"] += 1
    (root / "manifest.json").write_text(json.dumps(manifest))
    failed = [r for r in check_release(root) if not r.passed]
    assert [r.name for r in failed] == ["mini split"] and "mini candidates, the manifest says" in failed[
        0
    ].detail
