"""Shipped data files: the package's ``_data`` when installed, the checkout's top-level folders otherwise."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from ratio_bench.core import resources
from ratio_bench.core.errors import RatioError

ROOT = Path(__file__).resolve().parents[1]


def test_the_checkout_reads_its_top_level_folders():
    assert resources.data_root() == ROOT and not resources.installed()
    assert resources.data_path("lexicon", "v1", "lexicon.yaml").is_file()


def test_an_installed_package_reads_its_own_data(tmp_path, monkeypatch):
    (tmp_path / "_data" / "lexicon").mkdir(parents=True)
    monkeypatch.setattr(resources, "files", lambda package: tmp_path)
    assert resources.data_root() == tmp_path / "_data" and resources.installed()


def test_presets_by_name_and_a_users_path_first(tmp_path, monkeypatch):
    assert resources.preset("dataset_scripts", "dev") == ROOT / "dataset_scripts" / "dev.yaml"
    assert resources.preset("training", "dev/all-MiniLM-L6-v2-generic-address").is_file()
    assert resources.preset("training", "stella-en-1.5b-v5-generic-address").is_file()  # a dot in a name
    monkeypatch.chdir(tmp_path)
    (tmp_path / "dev").write_text("mine")  # a file of the user's named like a preset never shadows it
    (tmp_path / "training").mkdir()
    assert resources.preset("dataset_scripts", "dev") == ROOT / "dataset_scripts" / "dev.yaml"
    assert resources.preset("dataset_scripts", "./dev") == Path("dev")  # the user's file, by path
    assert resources.shipped_preset("dataset_scripts", "./dev") is None
    assert resources.preset_dir("training", "dev", top="spec") == ROOT / "training" / "dev"
    assert resources.preset("dataset_scripts", "other.yaml") == Path("other.yaml")
    with pytest.raises(
        RatioError,
        match=r"^\.\./training/all-mpnet-base-v2-generic-address: .*\(one of: dev, s2orc\)",
    ):
        resources.preset("dataset_scripts", "../training/all-mpnet-base-v2-generic-address")
    assert resources.preset_dir("training", "spec", top="spec") == ROOT / "training"
    assert resources.preset_dir("training", "dev/ablations", top="spec").is_dir()


def test_python_m_ratio_bench_is_the_command():
    run = subprocess.run(
        [sys.executable, "-m", "ratio_bench", "--version"], capture_output=True, text=True, timeout=60
    )
    assert run.returncode == 0 and run.stdout.startswith("ratio-bench ")


def test_an_installed_lexicon_is_not_grown_in_place(tmp_path, monkeypatch, capsys):
    from ratio_bench.cli import main

    (tmp_path / "_data").mkdir()
    monkeypatch.setattr(resources, "files", lambda package: tmp_path)
    review = tmp_path / "review.tsv"
    review.write_text("marker\tdecision\n", encoding="utf-8")
    assert main(["lexicon", "accept", str(review)]) == 2
    assert "--lexicon is required" in capsys.readouterr().err
