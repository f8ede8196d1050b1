"""One way to open a release: the same refusal everywhere, and one identity for results, runs and models."""

from __future__ import annotations

import json

import pytest

from ratio_bench.dataset.release import ReleaseError, manifest_sha256, open_release
from ratio_bench.evaluation.evaluate import load_split
from ratio_bench.evaluation.results import leaderboard_entry
from ratio_bench.training.data import dataset_info


def test_a_folder_without_manifest_or_of_another_kind_is_refused_naming_flag_and_folder(tmp_path):
    with pytest.raises(
        ReleaseError, match=rf"^--dataset {tmp_path}: not a Ratio release folder .*ratio build"
    ):
        open_release(tmp_path)
    (tmp_path / "manifest.json").write_text(json.dumps({"kind": "run"}), encoding="utf-8")
    with pytest.raises(ReleaseError, match=r"kind 'run'"):
        open_release(tmp_path, flag="")


def test_identity_ignores_formatting_and_is_the_one_results_and_training_record(small_release, tmp_path):
    release = open_release(small_release)
    assert release.name and release.version
    raw = json.loads((small_release / "manifest.json").read_text(encoding="utf-8"))
    assert manifest_sha256(dict(reversed(list(raw.items())))) == release.manifest_sha256
    assert dataset_info(small_release).manifest_sha256 == release.manifest_sha256
    data = load_split(small_release, "test", ["address"])
    assert data.manifest == release.manifest

    class Scored:  # the fields of a ScoreResult an entry reads
        model = "m"
        metrics = {"address": {"mrr_at_10": 0.5}}
        n_queries = {"address": 1}

    entry = leaderboard_entry(Scored(), data.manifest, "test")
    assert entry["dataset"] == {
        "name": release.name,
        "version": release.version,
        "manifest_sha256": release.manifest_sha256,
    }
