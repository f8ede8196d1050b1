"""Builds that say who they are: the work folder beside the release, a name and version of their own for other
inputs, a warning and a flag for relations with few test queries."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml
from tests.helpers.cli import assert_user_error, run_ratio
from tests.helpers.dataset import write_config

from ratio_bench.core.resources import data_path
from ratio_bench.dataset.config import ConfigError, load_config
from ratio_bench.dataset.identity import corpus_fingerprint, release_identity

SHA = "a" * 64


def _config(path: Path, corpus: Path, **release) -> Path:
    """The fixture config without a work_dir (the default applies), ``release`` merged into its release block."""
    cfg = write_config(path, corpus, path.parent / "unused")
    raw = yaml.safe_load(cfg.read_text())
    raw.pop("work_dir")
    raw["release"] |= release
    cfg.write_text(yaml.safe_dump(raw))
    return cfg


def test_identity_rules():
    official = release_identity("ratio-dev", "0.2.0-dev", SHA, SHA, own_config=False)
    assert (official.name, official.version, official.official) == ("ratio-dev", "0.2.0-dev", True)
    other = release_identity("ratio-dev", "0.2.0-dev", SHA, "b" * 64, own_config=False)
    assert (other.name, other.version, other.official) == (
        "ratio-dev-custom",
        "0.2.0-dev+corpus.bbbbbbbbbbbb",
        False,
    )
    preset = release_identity(
        "ratio", "1.0.0", None, "c" * 64, own_config=False
    )  # a shipped preset, any corpus
    assert (preset.name, preset.version) == ("ratio-custom", "1.0.0+corpus.cccccccccccc")
    mine = release_identity("my-bench", "0.1", None, "c" * 64, own_config=True)
    assert (mine.name, mine.version, mine.official) == ("my-bench", "0.1", True)
    named = release_identity("ratio-dev", "0.2.0-dev", SHA, "b" * 64, False, "lab-papers", "0.1.0")
    assert (named.name, named.version, named.official) == ("lab-papers", "0.1.0", False)


def test_the_dev_config_declares_the_shared_corpus(shared_corpus):
    """``make demo`` (dataset_scripts/dev.yaml on ../shared/corpus) keeps the official ratio-dev 0.2.0-dev."""
    cfg = load_config(data_path("dataset_scripts", "dev.yaml"))
    assert cfg.corpus_sha256 == corpus_fingerprint([shared_corpus])
    assert (cfg.name, cfg.version, cfg.work_dir) == ("ratio-dev", "0.2.0-dev", None)


@pytest.mark.parametrize(
    ("release", "field"),
    [({"version": "../../x"}, "release.version"), ({"version": "1\n# x"}, "release.version"),
     ({"name": "a/b"}, "release.name"), ({"corpus_sha256": "xyz"}, "release.corpus_sha256")],
)  # fmt: skip
def test_a_config_release_block_is_checked(dataset_corpus, tmp_path, release, field):
    with pytest.raises(ConfigError, match=rf"cfg.yaml: {field}: "):
        load_config(_config(tmp_path / "cfg.yaml", dataset_corpus, **release))


@pytest.mark.slow  # ~5 s (two builds); make test-all runs it
def test_builds_from_one_folder_keep_their_work_beside_their_release(dataset_corpus, tmp_path):
    """Two builds of one config from one working folder, other corpora, other outputs: neither is refused;
    a build from a corpus the config does not declare is named for it; few test queries are warned and flagged."""
    official = _config(
        tmp_path / "official.yaml", dataset_corpus, corpus_sha256=corpus_fingerprint([dataset_corpus])
    )
    cwd = tmp_path / "project"
    cwd.mkdir()
    first = run_ratio("build", "--config", official, "--out", "one", "--quiet", cwd=cwd, timeout=180)
    assert first.code == 0, first.err
    assert (cwd / "one.work" / "mined").is_dir() and (cwd / "one.work" / "build_report.json").is_file()
    manifest = json.loads((cwd / "one" / "manifest.json").read_text())
    assert (manifest["name"], manifest["version"], manifest["official"]) == (
        "ratio-fixture",
        "0.0.1-test",
        True,
    )
    assert manifest["corpus_sha256"] == corpus_fingerprint([dataset_corpus])
    few = manifest["few_test_queries"]
    assert few["min"] == 100 and few["relations"] and all(0 < n < 100 for n in few["relations"].values())
    warning = [line for line in first.err.splitlines() if "warning: few test queries" in line]
    assert len(warning) == 1 and all(r in warning[0] for r in few["relations"])
    assert "**Few test queries**" in (cwd / "one" / "README.md").read_text()

    other = tmp_path / "other-corpus"
    shutil.copytree(dataset_corpus, other)
    (other / "b_source.jsonl").unlink()
    second = run_ratio(
        "build", "--config", official, "--corpus", other, "--out", "two", "--quiet", cwd=cwd, timeout=180
    )
    assert second.code == 0, second.err
    manifest = json.loads((cwd / "two" / "manifest.json").read_text())
    tag = corpus_fingerprint([other])[:12]
    assert (manifest["name"], manifest["version"]) == ("ratio-fixture-custom", f"0.0.1-test+corpus.{tag}")
    assert manifest["official"] is False and manifest["config"]["release"]["name"] == "ratio-fixture-custom"
    assert f"0.0.1-test+corpus.{tag}" in (cwd / "two" / "README.md").read_text()
    assert (cwd / "two.work" / "mined").is_dir()

    named = run_ratio(
        "build", "--config", official, "--corpus", other, "--out", "two", "--name", "lab-papers", "--version",
        "0.1.0", "--work-dir", tmp_path / "w", "--quiet", cwd=cwd, timeout=180,
    )  # fmt: skip
    assert named.code == 0, named.err
    manifest = json.loads((cwd / "two" / "manifest.json").read_text())
    assert (manifest["name"], manifest["version"]) == ("lab-papers", "0.1.0") and (
        tmp_path / "w" / "mined"
    ).is_dir()
    bad = run_ratio(
        "build", "--config", official, "--out", "three", "--version", "../x", cwd=cwd, timeout=180
    )
    assert_user_error(bad, "--version '../x'", "not a version")
    assert not (cwd / "three").exists()
