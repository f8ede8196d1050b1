"""Test snapshots in the release: one self-contained split per period of the test partition."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from tests.helpers.cli import assert_user_error, run_ratio
from tests.helpers.dataset import SNAPSHOTS, build_snapshots, snapshot_records

from ratio_bench.dataset.check import check_release
from ratio_bench.dataset.contract import file_checksums, split_sha256
from ratio_bench.dataset.release import Release


@pytest.fixture(scope="module")
def snap_release(tmp_path_factory) -> tuple[dict, Path]:
    root = tmp_path_factory.mktemp("snap")
    return build_snapshots(root, snapshot_records(), root / "ratio"), root / "ratio"


def _rows(root: Path, config: str, split: str) -> list[dict]:
    return [
        r
        for f in sorted((root / "data" / config).glob(f"{split}-*.parquet"))
        for r in pq.read_table(f).to_pylist()
    ]


def test_snapshot_splits_counts_pools_and_left_out(snap_release):
    report, root = snap_release
    snaps = report["assembly"]["snapshots"]
    assert list(snaps["periods"]) == ["test_2022_01", "test_2022_02"]
    jan, feb = snaps["periods"]["test_2022_01"], snaps["periods"]["test_2022_02"]
    # January: address capped at 2 of 3, specify 2 of 2; February: specify (1 query) below min_queries 2
    assert (jan["queries_by_relation"], jan["available_by_relation"]) == (
        {"address": 2, "specify": 2},
        {"address": 3, "broaden": 0, "specify": 2},
    )
    assert (jan["golds"], jan["distractors"], jan["candidates"]) == (4, 4, 8)
    assert (feb["queries_by_relation"], feb["golds"], feb["distractors"], feb["distractors_per_gold"]) == (
        {"address": 2},
        2,
        6,
        3.0,
    )
    assert [(x["split"], x["relation"], x["available"]) for x in snaps["left_out"]] == [
        ("test_2022_02", "specify", 1),
        ("test_2022_03", None, 1),  # one distractor cannot fill 8 - 2 golds
    ]
    assert "cannot fill" in snaps["left_out"][1]["reason"]
    # the year-dated paper's pair and distractor are counted, not silently dropped
    assert snaps["pairs_by_placement"] == {"in_a_period": 11, "not_in_a_period": 1}
    assert snaps["distractors_by_placement"] == {"in_a_period": 13, "not_in_a_period": 1}
    for split in ("test_2022_01", "test_2022_02"):
        corpus = _rows(root, "corpus", split)
        assert len(corpus) == SNAPSHOTS["pool_size"] == len({c["id"] for c in corpus})
        queries = _rows(root, "address", split)
        assert {q["gold_id"] for q in queries} <= {c["id"] for c in corpus}
        assert {q["paper_id"] for q in queries} == {
            "s/" + split[-2:].replace("01", "jan").replace("02", "feb")
        }
    # a snapshot takes every de-duplicated test pair, not only the sampled test queries
    assert not (root / "data" / "specify" / "test_2022_02-00000-of-00001.parquet").exists()


def test_manifest_card_release_and_rebuild(snap_release, tmp_path):
    report, root = snap_release
    manifest = json.loads((root / "manifest.json").read_text())
    jan = manifest["snapshots"]["test_2022_01"]
    assert jan == {
        "period": "2022-01",
        "start": "2022-01-01",
        "end": "2022-01-31",
        "queries": {"address": 2, "specify": 2},
        "candidates": 8,
        "golds": 4,
        "sha256": split_sha256(manifest["files"], "test_2022_01"),
        "version": "0.0.1-test",
    }
    assert [x["split"] for x in manifest["snapshots_left_out"]] == ["test_2022_02", "test_2022_03"]
    release = Release.open(root)
    assert release.splits("address") == (
        "train",
        "validation",
        "test",
        "mini",
        "test_2022_01",
        "test_2022_02",
    )
    assert release.splits("specify") == ("test", "mini", "test_2022_01")
    assert release.corpus("test_2022_02", ["id"]).num_rows == 8
    assert release.split_hashes()["test_2022_01"] == jan["sha256"] != release.split_hashes()["test"]
    card = (root / "README.md").read_text()
    assert "## Snapshots" in card and "| 2022-01 | `test_2022_01` | 2 | 0 | 2 | 8 | 1.0 |" in card
    assert "- 2022-02 specify: fewer than min_queries (2) queries (1 available)" in card
    assert "- split: test_2022_01\n    path: data/corpus/test_2022_01-*.parquet" in card
    again = build_snapshots(tmp_path, snapshot_records(), tmp_path / "again" / "ratio")
    assert again["rows"] == report["rows"]
    assert file_checksums(tmp_path / "again" / "ratio") == file_checksums(root)


def test_check_passes_and_catches_a_snapshot_paper_in_train(snap_release, tmp_path):
    _, root = snap_release
    results = {c.name: c for c in check_release(root)}
    assert all(c.passed for c in results.values()), results
    assert results["snapshots disjoint"].detail.startswith("no snapshot paper")
    import shutil

    bad = tmp_path / "bad"
    shutil.copytree(root, bad)
    train = next((bad / "data" / "address").glob("train-*.parquet"))
    row = pq.read_table(next((bad / "data" / "address").glob("test_2022_01-*.parquet"))).slice(0, 1)
    pq.write_table(pa.concat_tables([pq.read_table(train), row]), train)
    manifest = json.loads((bad / "manifest.json").read_text())
    manifest["files"] = file_checksums(bad)
    (bad / "manifest.json").write_text(json.dumps(manifest))
    failed = {c.name: c.detail for c in check_release(bad) if not c.passed}
    assert "test_2022_01: paper s/jan is also in train" in failed["snapshots disjoint"]


def test_check_catches_a_rewritten_snapshot(snap_release, tmp_path):
    import shutil

    _, root = snap_release
    bad = tmp_path / "bad"
    shutil.copytree(root, bad)
    shard = next((bad / "data" / "corpus").glob("test_2022_02-*.parquet"))
    pq.write_table(pq.read_table(shard).slice(0, 7), shard)
    manifest = json.loads((bad / "manifest.json").read_text())
    manifest["files"] = file_checksums(bad)
    manifest["rows"]["corpus"]["test_2022_02"] = 7
    (bad / "manifest.json").write_text(json.dumps(manifest))
    failed = {c.name: c.detail for c in check_release(bad) if not c.passed}
    assert failed == {
        "snapshot hashes": "test_2022_02: its files do not match the manifest's snapshot sha256"
    }


def test_load_dataset_and_score_a_snapshot(snap_release, tmp_path):
    datasets = pytest.importorskip("datasets")
    _, root = snap_release
    ds = datasets.load_dataset(str(root), "address", split="test_2022_01", cache_dir=str(tmp_path / "hf"))
    assert sorted(ds["paper_id"]) == ["s/jan", "s/jan"]
    corpus = datasets.load_dataset(
        str(root), "address-corpus", split="test_2022_01", cache_dir=str(tmp_path / "hf")
    )
    assert len(corpus) == 8
    run = run_ratio(
        "score",
        "--model",
        "bm25",
        "--dataset",
        root,
        "--split",
        "test_2022_02",
        "--out",
        tmp_path / "s.json",
    )
    assert run.code == 0, run.err
    entry = json.loads((tmp_path / "s.json").read_text())
    entry = entry[0] if isinstance(entry, list) else entry
    assert entry["split"] == "test_2022_02" and entry["n_queries"]["address"] == 2
    snapshots = json.loads((root / "manifest.json").read_text())["snapshots"]
    assert entry["dataset"]["split_sha256"] == snapshots["test_2022_02"]["sha256"]
    assert entry["dataset"]["split_hashes"] == Release.open(root).split_hashes()
    assert sorted(entry["dataset"]["split_hashes"]) == [
        "mini",
        "test",
        "test_2022_01",
        "test_2022_02",
        "train",
        "validation",
    ]


def test_score_every_snapshot_in_one_call_and_refuse_a_file_as_the_folder(snap_release, tmp_path):
    """``--split snapshots``: one entry per snapshot, in a folder; a file given as that folder is refused first."""
    _, root = snap_release
    out = tmp_path / "results-0.2" / "snaps-1.0"  # dots in folder names: still folders
    run = run_ratio("score", "--model", "bm25", "--dataset", root, "--split", "snapshots", "--out", out)
    assert run.code == 0, run.err
    snapshots = Release.open(root).snapshots
    assert sorted(p.name for p in out.glob("*.json")) == [f"{s}.json" for s in snapshots]
    for split, recorded in snapshots.items():
        entry = json.loads((out / f"{split}.json").read_text())
        assert entry["split"] == split and entry["dataset"]["split_sha256"] == recorded["sha256"]
    mine = tmp_path / "mine.json"
    mine.write_text("{}")
    bad = run_ratio("score", "--model", "bm25", "--dataset", root, "--split", "snapshots", "--out", mine)
    assert_user_error(bad, "--out", "give a folder", code=2)
    assert mine.read_text() == "{}"


def test_a_month_without_any_test_pair_is_listed_as_left_out_not_skipped(tmp_path):
    """A gap in the corpus (no February paper) leaves a hole in the monthly series: the card says why."""
    records = [r for r in snapshot_records() if r["id"] != "s/feb"]
    build_snapshots(tmp_path, records, tmp_path / "ratio")
    manifest = json.loads((tmp_path / "ratio" / "manifest.json").read_text())
    assert "test_2022_02" not in manifest["snapshots"]
    gap = [e for e in manifest["snapshots_left_out"] if e["split"] == "test_2022_02"]
    assert gap == [
        {
            "period": "2022-02",
            "split": "test_2022_02",
            "relation": None,
            "reason": "no test pair is dated in this period",
            "available": 0,
        }
    ]
    assert "2022-02: no test pair is dated in this period" in (tmp_path / "ratio" / "README.md").read_text()
