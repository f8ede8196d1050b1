import os
import stat
from pathlib import Path

import pytest

from ratio_bench.errors import RatioError
from ratio_bench.io import RejectLog, refuse_foreign_output, write_json


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_outputs_honour_the_umask_not_mkstemps_0600(tmp_path):
    old = os.umask(0o022)
    try:
        write_json(tmp_path / "manifest.json", {"a": 1})
        with RejectLog(tmp_path / "rejects.jsonl") as log:
            log.add("src", "id", "why")
    finally:
        os.umask(old)
    assert _mode(tmp_path / "manifest.json") == 0o644
    assert _mode(tmp_path / "rejects.jsonl") == 0o644
    assert not list(tmp_path.glob(".*.tmp"))


def test_refuse_foreign_output(tmp_path, monkeypatch):
    def ours(p: Path) -> bool:
        return (p / "ours.json").exists()

    refuse_foreign_output(tmp_path / "new", ours, "thing")  # absent: fine
    (tmp_path / "empty").mkdir()
    refuse_foreign_output(tmp_path / "empty", ours, "thing")  # empty: fine
    (tmp_path / "prev").mkdir()
    (tmp_path / "prev" / "ours.json").write_text("{}")
    refuse_foreign_output(tmp_path / "prev", ours, "thing")  # a previous output of ours: fine
    (tmp_path / "user").mkdir()
    (tmp_path / "user" / "notes.txt").write_text("mine")
    with pytest.raises(RatioError, match=r"--index .*user.*not a thing"):
        refuse_foreign_output(tmp_path / "user", ours, "thing", flag="--index")
    (tmp_path / "file").write_text("x")
    with pytest.raises(RatioError, match="not a folder"):
        refuse_foreign_output(tmp_path / "file", ours, "thing")
    monkeypatch.chdir(tmp_path / "empty")
    for protected in (Path("."), Path(".."), Path.home()):
        with pytest.raises(RatioError, match="refusing to replace"):
            refuse_foreign_output(protected, lambda p: True, "thing")
