"""Config mistakes are reported before any work starts, naming the file and the dotted field (via the CLI)."""

import shlex
from pathlib import Path

import pytest
import yaml
from tests.helpers.cli import assert_user_error, run_ratio
from tests.helpers.dataset import write_config

from ratio_bench.dataset.config import ConfigError, load_config

SPLITS = {
    "train": {"end": "2020-12-31"},
    "validation": {"start": "2021-01-01", "end": "2021-12-31"},
    "test": {"start": "2022-01-01"},
}
RELEASE = {"name": "ratio-fixture", "version": "0.0.1-test"}


def _edit(raw: dict, dotted: str, value) -> dict:
    *parents, leaf = dotted.split(".")
    node = raw
    for key in parents:
        node = node.setdefault(key, {})
    node[leaf] = value
    return raw


CASES = [
    # (dotted field to set, value, words the error line must contain)
    ("sampleing", {}, ["sampleing", "did you mean 'sampling'"]),
    ("release.publsh", False, ["release.publsh", "did you mean 'publish'"]),
    ("sampling.test.max_querys", {"address": 1}, ["sampling.test.max_querys", "did you mean 'max_queries'"]),
    ("splits", ["train", "validation", "test"], ["splits:", "must be a mapping", "a list"]),
    ("corpus.paths", "/data/corpus", ["corpus.paths", "must be a list", "a string"]),
    (
        "sampling.test.max_queries.address",
        -5,
        ["sampling.test.max_queries.address", "positive integer", "-5"],
    ),
    ("sampling.test.max_queries.adress", 5, ["sampling.test.max_queries.adress", "did you mean 'address'"]),
    ("sampling.validation.distractors_per_gold", -1, ["sampling.validation.distractors_per_gold", "from 0"]),
    ("splits.validation.start", "2021-02-30", ["splits.validation.start", "ISO date", "2021-02-30"]),
    ("splits.validation", {"start": "2021-06-01", "end": "2021-01-31"}, ["splits.validation.end", "before"]),
    ("splits.train.end", "2021-06-30", ["splits.train.end", "overlap"]),
    ("seed", "x", ["seed", "must be an integer", "'x'"]),
    ("date_policy.straddle", "guess", ["date_policy.straddle", "drop, start, end", "'guess'"]),
    ("mode", "rolling", ["mode", "temporal, cumulative"]),
    ("release.publish", "no", ["release.publish", "true or false"]),
    ("release", {"version": "1"}, ["release.name", "missing field"]),
    # numbers YAML reads that no count can be: each named before mining, not an internal error after it
    ("sampling.test.distractors_per_gold", float("nan"), ["sampling.test.distractors_per_gold", "nan"]),
    ("sampling.train.distractors_per_gold", float("inf"), ["sampling.train.distractors_per_gold", "inf"]),
    ("sampling.validation.distractors_per_gold", 1e30, ["distractors_per_gold", "from 0 to 1,000,000"]),
    ("sampling.test.max_queries.broaden", 10**30, ["sampling.test.max_queries.broaden", "up to"]),
    ("silver.seed", float("nan"), ["silver.seed", "must be an integer", "nan"]),
    # the config is copied into the manifest (JSON): nothing JSON cannot hold, wherever it is
    ("silver.judge", {"temperature": float("inf")}, ["silver.judge.temperature", "finite number"]),
    ("silver.judge", {1: "x"}, ["silver.judge", "judge settings by name", "{1: 'x'}"]),
    ("release.license", "MIT \ud800", ["release.license", "not valid Unicode"]),
    ("silver.prompts.address", ["a\nb", "x"], ["silver.prompts.address", "unknown prompt 'a\\nb'"]),
    ("silver.sample", {"adress": 3, 1: 2}, ["silver.sample", "unknown relations", "'adress'"]),
]


@pytest.mark.parametrize(("field", "value", "words"), CASES, ids=[c[0] for c in CASES])
def test_build_refuses_a_bad_config_before_mining(dataset_corpus, tmp_path, field, value, words):
    cfg = write_config(tmp_path / "bad.yaml", dataset_corpus, tmp_path / "work")
    raw = _edit(yaml.safe_load(cfg.read_text()), field, value)
    cfg.write_text(yaml.safe_dump(raw), encoding="utf-8")
    run = run_ratio("build", "--config", cfg, "--out", tmp_path / "out", "--quiet", timeout=60)
    assert_user_error(run, "bad.yaml", *words)
    assert (
        not (tmp_path / "work").exists() and not (tmp_path / "out").exists()
    )  # nothing was mined or written


def test_invalid_yaml_names_the_line(tmp_path):
    path = tmp_path / "broken.yaml"
    path.write_text("release:\n  name: x\n splits: [\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"broken\.yaml: line \d+: invalid YAML"):
        load_config(path)


def test_missing_config_names_the_flag(tmp_path):
    assert_user_error(
        run_ratio("build", "--config", tmp_path / "nope.yaml", timeout=60), "nope.yaml", "--config"
    )


def test_workers_must_be_positive(tmp_path):
    assert_user_error(
        run_ratio("build", "--workers", "0", "--out", tmp_path / "o", timeout=60), "--workers", code=2
    )


def test_dev_configs_are_valid_and_dev_is_never_published():
    root = Path(__file__).resolve().parents[2]
    dev = load_config(root / "dataset_scripts" / "dev.yaml", root)
    assert (
        dev.publish is False
        and dev.seed == 13
        and [s.name for s in dev.splits] == ["train", "validation", "test"]
    )
    assert dev.sampling["test"].max_queries == {"address": 3000, "broaden": None, "specify": 8000}
    assert load_config(root / "dataset_scripts" / "s2orc.yaml", root).publish is True


def test_a_work_dir_with_an_apostrophe_and_a_space_builds(dataset_corpus, tmp_path):
    odd = tmp_path / "it's a folder"
    cfg = write_config(tmp_path / "c.yaml", dataset_corpus, odd / "work dir")
    run = run_ratio("build", "--config", cfg, "--out", odd / "rel'ease", "--quiet", timeout=300)
    assert run.code == 0, run.err
    assert "14 checks passed" in " ".join(run.out.split())  # a long path may wrap the line
    release = shlex.quote(str(odd / "rel'ease"))
    next_step = f"next: ratio score --model bm25 --dataset {release}"
    assert next_step in " ".join(run.out.split())  # the obvious next command, quoted for the shell
    assert (odd / "rel'ease" / "manifest.json").is_file() and (odd / "work dir" / "mined").is_dir()


def test_an_unquoted_impossible_date_names_its_field(dataset_corpus, tmp_path):
    path = write_config(tmp_path / "c.yaml", dataset_corpus, tmp_path / "w")
    text = path.read_text().replace("'2021-01-01'", "2021-02-30")  # unquoted: a YAML timestamp
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError, match=r"c\.yaml: splits\.validation\.start: must be an ISO date"):
        load_config(path)
