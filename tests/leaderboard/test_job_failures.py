"""A job whose model gives vectors no score can come from fails with that reason, in one console line; its
output and traceback go to the worker's log file. The worker runs as a command against the loopback Hub."""

from __future__ import annotations

import shutil

import pytest
from tests.helpers.models import with_weights


@pytest.mark.slow  # make test-all (make test stays near 10 minutes)
def test_all_nan_weights_fail_the_job_in_one_console_line(board, tiny_models, small_release, tmp_path):
    folder = with_weights(shutil.copytree(tiny_models["good"], tmp_path / "nan"), float("nan"))
    sha = board.publish("org/nan", folder)
    assert board.submit("org/nan").code == 0  # its files are fine: only its vectors show it
    log = tmp_path / "logs" / "worker.log"
    work = board.worker(small_release, "--once", "--log-file", log)
    assert work.code == 0, work.err
    request = board.requests()[f"org/nan/{sha}_generic.json"]
    assert request["status"] == "FAILED" and request["reason"].startswith("non-finite embeddings: ")
    # no result folder: nothing published, nothing verified (top-level files, trusted_workers.json, are the repo's)
    assert [p for p in board.files("board/results") if "/" in p] == []
    about = [line for line in work.err.splitlines() if "org/nan" in line]
    failed = [line for line in about if "FAILED" in line]
    assert len(failed) == 1 and f"the job's output is in {log}" in failed[0]
    assert "Traceback" not in work.err and "encoding corpus" not in work.err
    text = log.read_text(encoding="utf-8")
    assert f"org/nan@{sha[:12]}" in text and "Traceback" in text and "EncodingError" in text
