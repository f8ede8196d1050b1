"""The scoring engine: one model load and one weights hash for any number of splits, each text encoded once."""

from __future__ import annotations

import json

import pytest

from ratio_bench.evaluation.scoring import engine
from ratio_bench.evaluation.scoring.evaluate import load_split, score
from ratio_bench.retrieval import registry
from ratio_bench.retrieval.cache import EmbeddingCache
from ratio_bench.retrieval.registry import resolve

pytest.importorskip("sentence_transformers")


@pytest.fixture(scope="module")
def snapshots_release(tmp_path_factory):
    from tests.helpers.dataset import build_snapshots, snapshot_records

    root = tmp_path_factory.mktemp("snap")
    build_snapshots(root, snapshot_records(), root / "ratio")
    return root / "ratio"


@pytest.fixture
def counted(monkeypatch):
    """Model loads (sentence-transformers constructions) and sha256 objects made by the weights' hashing."""
    from sentence_transformers import SentenceTransformer

    counts = {"loads": 0, "hashes": 0}
    real_init, real_sha = SentenceTransformer.__init__, registry.hashlib.sha256

    def init(self, *args, **kwargs):
        counts["loads"] += 1
        real_init(self, *args, **kwargs)

    class Hashlib:
        def sha256(self, *args):
            counts["hashes"] += 1
            return real_sha(*args)

    monkeypatch.setattr(SentenceTransformer, "__init__", init)
    monkeypatch.setattr(registry, "hashlib", Hashlib())
    monkeypatch.setattr(registry, "_FILE_HASHES", {})
    return counts


def test_score_snapshots_loads_and_hashes_the_model_once(snapshots_release, tmp_path, counted):
    from ratio_bench.cli import main

    args = [
        "score",
        "--model",
        "all-MiniLM-L6-v2",
        "--dataset",
        str(snapshots_release),
        "--split",
        "snapshots",
    ]
    assert main([*args, "--cache-dir", str(tmp_path / "c"), "--out", str(tmp_path / "out")]) == 0
    written = sorted(p.name for p in (tmp_path / "out").glob("*.json"))
    assert written == ["test_2022_01.json", "test_2022_02.json"]  # two snapshots, one entry each
    assert counted["loads"] == 1  # was one per snapshot
    files = sum(1 for p in registry.Path(resolve("all-MiniLM-L6-v2").path).rglob("*") if p.is_file())
    assert counted["hashes"] <= files + 2  # each file once, then two combinations (cache key, entry identity)
    entry = json.loads((tmp_path / "out" / "test_2022_02.json").read_text())
    assert entry["split"] == "test_2022_02" and entry["model_fingerprint"]


def test_engine_encodes_the_union_once_and_scores_each_split_as_alone(snapshots_release, tmp_path, counted):
    splits = ["test", "test_2022_01", "test_2022_02"]
    setup = resolve("all-MiniLM-L6-v2")
    cache = EmbeddingCache(tmp_path / "c", progress=False)
    scored = engine.score(setup, snapshots_release, splits, cache=cache)
    assert [s.split for s in scored.splits] == splits and scored.model_loads == 1 and counted["loads"] == 1
    datas = [load_split(snapshots_release, s) for s in splits]
    texts = {t for d in datas for t in d.corpus_texts} | {
        t for d in datas for q in d.queries.values() for t in q.texts
    }
    assert scored.texts_encoded == len(texts)  # a text in several pools is encoded once (one prompt: none)
    for s, data in zip(scored.splits, datas, strict=True):
        assert s.entry.n_candidates == len(data.corpus_ids)  # each entry names its own pool's size
        alone = score(setup, data, cache=EmbeddingCache(tmp_path / "alone", progress=False))
        for (
            rel,
            metrics,
        ) in alone.metrics.items():  # batches differ (one union, or one split): floats may, a hair
            assert s.result.metrics[rel] == pytest.approx(metrics, abs=1e-6), (s.split, rel)

    again = engine.score(
        setup, snapshots_release, splits, cache=EmbeddingCache(tmp_path / "c", progress=False)
    )
    assert again.texts_encoded == 0 and again.texts_cached >= len(texts)  # a re-score reads every vector
    assert [s.entry.results for s in again.splits] == [s.entry.results for s in scored.splits]


def test_an_optional_split_the_release_lacks_is_skipped_others_are_not(snapshots_release, tmp_path):
    from ratio_bench.dataset.release import DatasetError

    cache = EmbeddingCache(tmp_path / "c", progress=False)
    scored = engine.score("bm25", snapshots_release, ["test", "silver"], cache=cache, optional=("silver",))
    assert [s.split for s in scored.splits] == ["test"] and scored.skipped == ["silver"]
    with pytest.raises(DatasetError, match="silver"):
        engine.score("bm25", snapshots_release, ["test", "silver"], cache=cache)
