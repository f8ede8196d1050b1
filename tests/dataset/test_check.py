"""``ratio check`` passes a fresh release and names the check a tampered copy breaks."""

import json
import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from tests.helpers.cli import run_ratio

from ratio_bench.dataset.check import check_release
from ratio_bench.dataset.contract import file_checksums


@pytest.fixture
def release(small_release: Path, tmp_path: Path) -> Path:
    root = tmp_path / "release"
    shutil.copytree(small_release, root)
    return root


def _shard(root: Path, config: str, split: str) -> Path:
    return next((root / "data" / config).glob(f"{split}-*.parquet"))


def _rewrite(root: Path, config: str, split: str, edit) -> None:
    """Tamper with one shard, then re-sign the manifest so that only the tampered property is wrong."""
    path = _shard(root, config, split)
    table = edit(pq.read_table(path))
    pq.write_table(table, path)
    manifest = json.loads((root / "manifest.json").read_text())
    manifest["rows"][config][split] = table.num_rows
    manifest["files"] = file_checksums(root)
    (root / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")


def _failed(root: Path) -> dict[str, str]:
    return {r.name: r.detail for r in check_release(root) if not r.passed}


def test_a_fresh_release_passes_every_check(release, tmp_path):
    results = check_release(release)
    assert len(results) == 14 and all(r.passed for r in results), results
    run = run_ratio("check", release, "--json", tmp_path / "check.json", timeout=120)
    assert run.code == 0, run.err
    assert "partitions in time order" in run.out and "FAIL" not in run.out
    assert run.out.strip().splitlines()[-1] == "ratio check: PASS (14 checks)"
    report = json.loads((tmp_path / "check.json").read_text())
    assert report["passed"] is True and len(report["checks"]) == 14


def test_a_gold_removed_from_the_corpus_fails_that_check(release):
    gold = pq.read_table(_shard(release, "address", "test")).column("gold_id")[0].as_py()
    _rewrite(release, "corpus", "test", lambda t: t.filter(pc.not_equal(t.column("id"), gold)))
    # the fixture's test queries are all in its mini split, whose pool then holds a candidate test's lacks
    assert list(_failed(release)) == ["golds in their corpus", "mini split"]
    run = run_ratio("check", release, timeout=120)
    assert run.code == 1 and "FAIL" in run.out and "golds in their corpus" in run.out
    assert (
        run.out.strip().splitlines()[-1]
        == "ratio check: FAIL: 2 of 14 checks (golds in their corpus, mini split)"
    )
    assert "Traceback" not in run.err


def test_a_changed_checksum_fails_that_check(release):
    manifest = json.loads((release / "manifest.json").read_text())
    manifest["files"]["README.md"] = "0" * 64
    (release / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    failed = _failed(release)
    assert list(failed) == ["checksums"] and "changed: README.md" in failed["checksums"]


def test_the_judged_pool_in_judgments_is_not_release_content_but_other_extra_files_are(release):
    (release / "judgments").mkdir(exist_ok=True)
    (release / "judgments" / "pool.json").write_text("{}", encoding="utf-8")
    (release / "judgments" / "candidates-address.parquet").write_bytes(b"verdicts")
    assert not _failed(release)  # the pool grows with every judged run; the release stays the same build
    (release / "judgments" / "notes.txt").write_text("mine", encoding="utf-8")
    assert "not in the manifest: judgments/notes.txt" in _failed(release)["checksums"]


def test_a_paper_in_two_splits_fails_that_check(release):
    train_paper = pq.read_table(_shard(release, "address", "train")).column("paper_id")[0].as_py()

    def move(t: pa.Table) -> pa.Table:
        i = t.schema.get_field_index("paper_id")
        return t.set_column(i, "paper_id", pa.array([train_paper] * t.num_rows, pa.string()))

    _rewrite(release, "address", "validation", move)
    failed = _failed(release)
    assert list(failed) == ["no paper or work in two partitions"]
    assert f"{train_paper} (train+validation)" in failed["no paper or work in two partitions"]


def test_a_row_routed_by_the_wrong_date_fails_the_time_order_check(release):
    def backdate(t: pa.Table) -> pa.Table:
        i = t.schema.get_field_index("work_date_start")
        return t.set_column(i, "work_date_start", pa.array([pa.scalar(0, pa.date32()).as_py()] * t.num_rows))

    _rewrite(release, "address", "test", backdate)
    failed = _failed(release)
    assert list(failed) == ["partitions in time order"] and "address/test work dated 1970-01-01" in str(
        failed
    )


def test_a_folder_without_a_manifest_fails_cleanly(tmp_path):
    (tmp_path / "data").mkdir()
    [result] = check_release(tmp_path)
    assert not result.passed and "not a Ratio release" in result.detail
    run = run_ratio("check", tmp_path / "nowhere", timeout=60)
    assert run.code == 1 and "nowhere: no such release folder" in run.err and "Traceback" not in run.err


def test_a_relation_without_any_shard_is_checked_against_the_manifest(release):
    for f in (release / "data" / "broaden").glob("*.parquet"):
        f.unlink()
    manifest = json.loads((release / "manifest.json").read_text())
    manifest["files"] = file_checksums(release)
    (release / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    failed = _failed(release)
    assert list(failed) == ["configs and splits", "qrels match queries"]
    assert "broaden/validation: 0 rows in the shards, 1 in the manifest" in failed["configs and splits"]


def test_a_truncated_shard_is_a_failed_row_naming_it_not_a_crash(release):
    shard = _shard(release, "address", "test")
    shard.write_bytes(shard.read_bytes()[:100])
    failed = _failed(release)
    assert list(failed) == ["shards readable", "checksums"]
    assert "data/address/test-00000-of-00001.parquet" in failed["shards readable"]
    run = run_ratio("check", release, timeout=120)
    assert run.code == 1 and "shards readable" in run.out and "internal error" not in run.err, run.err
