import pytest
from tests.helpers.cli import assert_user_error, run_ratio


@pytest.mark.parametrize(
    ("args", "culprits", "code"),
    [
        (["--executor-option", "partition"], ["--executor-option", "KEY=VALUE", "'partition'"], 2),
        (["--executor-option", "=cpu"], ["--executor-option", "'=cpu'"], 2),
        (["--executor-option", "x=[1,"], ["--executor-option", "not valid YAML"], 2),
        (["--executor-option", "bogus=1"], ["--executor-option bogus=", "no option 'bogus'"], 1),
        (["--executor-option", "workers=4"], ["--executor-option workers=", "--workers"], 1),
        (["--executor", "slurm"], ["--executor-option partition=", "--executor-option time="], 1),
        (["--workers", "0"], ["--workers", "0"], 2),
    ],
    ids=["no-equals", "no-key", "bad-yaml", "unknown-key", "own-option", "slurm-needs", "workers"],
)
def test_mine_option_errors_name_the_flag(fixture_corpus, tmp_path, args, culprits, code):
    run = run_ratio("mine", "--corpus", fixture_corpus, "--out", tmp_path / "m", "--quiet", *args)
    assert_user_error(run, *culprits, code=code)
    assert not (tmp_path / "m" / "plan.json").exists()  # refused before anything was written


def test_missing_corpus_and_non_mining_folder(tmp_path):
    missing = tmp_path / "nope"
    assert_user_error(
        run_ratio("mine", "--corpus", missing, "--out", tmp_path / "m"), str(missing), "--corpus"
    )
    empty = tmp_path / "empty"
    empty.mkdir()
    assert_user_error(run_ratio("mine", "--corpus", empty, "--out", tmp_path / "m"), str(empty), "--corpus")
    assert_user_error(run_ratio("mine-stats", empty), str(empty), "plan.json", "ratio mine --out")
