"""Training configs: the shipped files are valid and complete; mistakes get one error line naming the culprit."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from tests.helpers.cli import assert_user_error, run_ratio

from ratio_bench.training.config import config_files, load_config

ROOT = Path(__file__).resolve().parents[2]
SPEC_SETUPS = {
    "all-mpnet-base-v2": ["generic"],
    "modernbert-embed-large": ["generic", "recommended"],
    "stella-en-1.5b-v5": ["generic", "recommended"],
}
TABLE7_TRIALS = {"broaden": 5, "address": 4, "specify": 3}


def test_spec_configs_cover_the_fifteen_setups_with_table7_trials():
    files = sorted((ROOT / "training").glob("*.yaml"))
    expected = {f"{b}-{s}-{r}" for b, setups in SPEC_SETUPS.items() for s in setups for r in TABLE7_TRIALS}
    assert {f.stem for f in files} == expected and len(files) == 15
    for f in files:
        config = load_config(f)
        assert f.stem == f"{config.backbone}-{config.setup}-{config.relation}"
        assert len(config.trials) == TABLE7_TRIALS[config.relation]
        assert all(t.rationale for t in config.trials) and config.max_train_pairs is None
        assert config.validation_sample is None  # validation on the whole split: selections worth reporting
        assert config.bf16 and config.tf32  # GPU runs; a CPU run of the file trains in fp32


def test_dev_configs_say_how_they_are_scaled():
    files = sorted((ROOT / "training" / "dev").glob("*.yaml"))
    assert len(files) == 8  # 2 backbones x (3 specialists + 1 unified)
    for f in files:
        config = load_config(f)
        assert config.backbone in ("all-MiniLM-L6-v2", "all-mpnet-base-v2") and config.setup == "generic"
        assert config.scaling and ("Scaled to fit" if config.unified else "Scaled from") in f.read_text()


def _config(tmp_path, **change) -> Path:
    raw = {
        "backbone": "all-MiniLM-L6-v2",
        "setup": "generic",
        "relation": "address",
        "trials": [{"epochs": 1, "batch_size": 8, "learning_rate": 2e-5}],
    }
    raw.update(change)
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(raw), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("change", "culprits"),
    [
        (
            {"trials": [{"epochs": 1, "batch_size": 8, "learning_rte": 2e-5}]},
            ["learning_rte", "'learning_rate'"],
        ),
        ({"backbone": "all-mpnet-base"}, ["backbone", "'all-mpnet-base-v2'"]),
        ({"bf16": "yes"}, ["c.yaml: bf16", "expected bool"]),
        ({"validation_sample": 200}, ["c.yaml: validation_sample", "queries: 200"]),
        ({"validation_sample": {"queries": 0}}, ["validation_sample.queries"]),
        ({"validation_sample": {"queries": 5, "pool": 9}}, ["validation_sample", "pool"]),
    ],
)
def test_config_mistakes_are_one_line_errors(tmp_path, change, culprits):
    run = run_ratio(
        "train", "--config", _config(tmp_path, **change), "--dataset", tmp_path, "--out", tmp_path / "o"
    )
    assert_user_error(run, "c.yaml", *culprits)


def test_library_errors_name_the_field(tmp_path):
    with pytest.raises(ValueError, match="unknown field 'seeed'; did you mean 'seed'"):
        load_config(_config(tmp_path, seeed=3))
    with pytest.raises(ValueError, match="no such folder of training configs"):
        config_files(tmp_path / "none")
    with pytest.raises(ValueError, match=r"relation: one of address, broaden, specify"):
        load_config(_config(tmp_path, relation="generalise"))
    with pytest.raises(ValueError, match=r"trials\[0\]\.freeze_ratio: a share"):
        load_config(
            _config(
                tmp_path, trials=[{"epochs": 1, "batch_size": 8, "learning_rate": 1e-5, "freeze_ratio": 2}]
            )
        )
    with pytest.raises(ValueError, match="setup: modernbert-embed-large has setups generic, recommended"):
        load_config(_config(tmp_path, backbone="modernbert-embed-large", setup="none"))
    with pytest.raises(ValueError, match="learning_rate: expected float"):
        load_config(_config(tmp_path, trials=[{"epochs": 1, "batch_size": 8, "learning_rate": "fast"}]))


def test_missing_dataset(tmp_path):
    run = run_ratio(
        "train", "--config", _config(tmp_path), "--dataset", tmp_path / "nope", "--out", tmp_path / "o"
    )
    assert_user_error(run, "nope", "manifest.json", "--dataset")
    assert not (tmp_path / "o").exists()


def test_validating_a_config_never_imports_torch(tmp_path):
    """A typo must fail in a fraction of a second: validation (and `ratio train run` up to it) loads no torch."""
    code = (
        "import sys; from ratio_bench.training.config import load_config; "
        f"load_config({str(_config(tmp_path, relation='all'))!r}); print('torch' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"


def test_train_all_neither_lists_nor_reads_the_adapter_folder(tmp_path, capsys):
    """``train all --dir`` names the shipped folders of fine-tuning configs; ``adapters`` holds an adapter
    config, so it is refused with the command that trains it, and missing folders' hints leave it out."""
    from ratio_bench.cli import main
    from ratio_bench.core.errors import RatioError
    from ratio_bench.core.resources import preset_dir
    from ratio_bench.training.config import NOT_FINE_TUNING

    with pytest.raises(RatioError, match=r"^adapters: .*`ratio train adapters --config adapters/<name>`"):
        preset_dir("training", "adapters", top="spec", other=NOT_FINE_TUNING)
    with pytest.raises(RatioError, match=r"\(one of: spec, dev, dev/ablations\)$"):
        preset_dir("training", "devel", top="spec", other=NOT_FINE_TUNING)
    for bad in ("adapters", "devel"):
        code = main(["train", "all", "--dir", bad, "--dataset", str(tmp_path), "--out", str(tmp_path / "o")])
        err = capsys.readouterr().err
        assert code == 1 and "adapters," not in err and "Traceback" not in err
