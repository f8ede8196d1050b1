import os
import stat
from pathlib import Path

from ratio_bench.io import RejectLog, write_json


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
