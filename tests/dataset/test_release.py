"""One way to open a release: the same refusal everywhere, schema-checked shards, and one identity for results,
runs and models."""

from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from ratio_bench.cli import main
from ratio_bench.dataset.contract import CORPUS_SCHEMA
from ratio_bench.dataset.release import DatasetError, NotAReleaseError, Release, manifest_sha256
from ratio_bench.evaluation.scoring.evaluate import load_split
from ratio_bench.evaluation.scoring.results import leaderboard_entry
from ratio_bench.training.data import dataset_info


def test_a_built_release_opens_with_its_identity_and_splits(small_release):
    release = Release.open(small_release)
    raw = (small_release / "manifest.json").read_bytes()
    assert (release.name, release.version) == (json.loads(raw)["name"], json.loads(raw)["version"])
    assert "address" in release.relations and release.splits("corpus") == (
        "train",
        "validation",
        "test",
        "mini",
    )
    corpus = release.corpus("test")
    assert [(f.name, f.type) for f in corpus.schema] == [(f.name, f.type) for f in CORPUS_SCHEMA]
    assert corpus.num_rows == json.loads(raw)["rows"]["corpus"]["test"]
    assert release.corpus("silver", ["id"]).num_rows == corpus.num_rows  # silver retrieves from test's corpus
    empty = release.queries("address", "silver", ["query_id", "gold_id"])  # no silver split yet: no rows
    assert empty.num_rows == 0 and empty.schema.names == ["query_id", "gold_id"]


@pytest.mark.parametrize(
    ("manifest", "said"),
    [
        (None, "no readable manifest.json"),
        (b"{not json", "no readable manifest.json"),
        (json.dumps({"kind": "index"}).encode(), "is a Ratio index, not a Ratio release folder"),
        (json.dumps({"config": {}}).encode(), "manifest.json has no kind"),
    ],
)
def test_a_folder_that_is_no_release_is_named_with_the_flag_and_the_fix(tmp_path, manifest, said, capsys):
    if manifest is not None:
        (tmp_path / "manifest.json").write_bytes(manifest)
    with pytest.raises(
        NotAReleaseError, match=f"^{tmp_path}: .*{said}.*`ratio dataset build`, give the folder"
    ) as e:
        Release.open(tmp_path)
    assert e.value.value == tmp_path  # the library names the folder; the command line, the option
    assert main(["score", "--model", "bm25", "--dataset", str(tmp_path)]) == 1
    assert capsys.readouterr().err.startswith(f"ratio score: error: --dataset {tmp_path}: ")
    assert (
        main(["publish", str(tmp_path), "--repo-id", "o/n"]) == 1
    )  # a positional argument: the folder alone
    assert capsys.readouterr().err.splitlines()[-1].startswith(f"ratio publish: error: {tmp_path}: ")


def test_a_missing_folder_or_a_file_is_refused(tmp_path):
    with pytest.raises(NotAReleaseError, match="the folder does not exist"):
        Release.open(tmp_path / "none")
    (tmp_path / "f").write_text("x")
    with pytest.raises(NotAReleaseError, match="is a file, not a release folder"):
        Release.open(tmp_path / "f")


def test_shards_are_held_to_the_release_schema(small_release, tmp_path):
    root = tmp_path / "r"
    shutil.copytree(small_release, root)
    shard = next((root / "data" / "corpus").glob("test-*.parquet"))
    table = pq.read_table(shard)
    pq.write_table(table.drop_columns(["role"]), shard)
    release = Release.open(root)
    assert release.corpus("test", ["id", "text"]).num_rows == table.num_rows  # what is read is there
    with pytest.raises(DatasetError, match=f"{shard}: has no column 'role'.*rebuild"):
        release.corpus("test", ["id", "role"])
    pq.write_table(table.set_column(0, "id", pa.array(range(table.num_rows))), shard)
    with pytest.raises(DatasetError, match="column 'id' is int64, the release schema says string"):
        release.corpus("test", ["id"])
    shard.write_bytes(b"PAR1 damaged")
    with pytest.raises(DatasetError, match=f"{shard}: not a readable Parquet shard.*damaged"):
        release.corpus("test", ["id"])


def test_identity_ignores_formatting_and_is_the_one_results_and_training_record(small_release):
    release = Release.open(small_release)
    raw = json.loads((small_release / "manifest.json").read_text(encoding="utf-8"))
    assert manifest_sha256(dict(reversed(list(raw.items())))) == release.manifest_sha256
    assert dataset_info(small_release).manifest_sha256 == release.manifest_sha256
    data = load_split(small_release, "test", ["address"])
    assert data.manifest == release.manifest

    class Scored:  # the fields of a ScoreResult an entry reads
        model = "m"
        metrics = {"address": {"mrr_at_10": 0.5}}
        n_queries = {"address": 1}
        gold_ranks: dict = {}

    entry = leaderboard_entry(Scored(), data.manifest, "test").to_json()
    assert entry["dataset"] == {
        "name": release.name,
        "version": release.version,
        "manifest_sha256": release.manifest_sha256,
        "split_sha256": release.split_hashes()["test"],
        "split_hashes": release.split_hashes(),
    }


def test_only_the_shards_the_manifest_lists_are_read(small_release, tmp_path):
    root = tmp_path / "r"
    shutil.copytree(small_release, root)
    test = next((root / "data" / "address").glob("test-*.parquet"))
    shutil.copy(test, root / "data" / "address" / "silver-00000-of-00001.parquet")  # a half-done silver run
    shutil.copy(test, root / "data" / "address" / "test-00001-of-00001.parquet")
    release = Release.open(root)
    assert "silver" not in release.splits("address") and release.shards("address", "test") == [test]
    manifest = json.loads((root / "manifest.json").read_text())
    manifest["files"]["../outside/test-0.parquet"] = "0" * 64
    (root / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    assert Release.open(root).shards("address", "test") == [test]
    with pytest.raises(DatasetError, match="a path outside the release"):
        Release.open(root).own_files()


def test_the_documented_command_reproduces_the_manifest_hash(small_release, tmp_path):
    """eval/README.md gives one command for manifest_sha256 (not `sha256sum manifest.json`); it must agree."""
    readme = (Path(__file__).resolve().parents[2] / "eval" / "README.md").read_text(encoding="utf-8")
    (line,) = [x for x in readme.splitlines() if x.startswith("python -c ") and "sort_keys=True" in x]
    manifest = tmp_path / "manifest.json"  # re-indented: the hash is of the content, not the bytes
    data = json.loads((small_release / "manifest.json").read_text(encoding="utf-8"))
    manifest.write_text(json.dumps(data, indent=1), encoding="utf-8")
    argv = [
        sys.executable,
        *shlex.split(re.sub(r"^python ", "", line).replace("ratio/manifest.json", str(manifest))),
    ]
    out = subprocess.run(argv, capture_output=True, text=True, check=True, timeout=60).stdout.strip()
    assert out == manifest_sha256(data)
