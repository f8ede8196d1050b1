"""Run ``ratio`` as a user would (a subprocess) and check the one-line error contract."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path


@dataclass
class Run:
    code: int
    out: str
    err: str


def run_ratio(
    *args: str | Path, cwd: Path | None = None, env: dict | None = None, timeout: float = 300
) -> Run:
    """``python -m ratio_bench.cli ARGS`` in a fresh process (no debug flag inherited from the environment)."""
    full_env = {**os.environ, **(env or {})}
    full_env.pop("RATIO_DEBUG", None)
    proc = subprocess.run(
        [sys.executable, "-m", "ratio_bench.cli", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=full_env,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )
    return Run(proc.returncode, proc.stdout, proc.stderr)


def assert_user_error(run: Run, *culprits: str, code: int = 1) -> str:
    """The command failed with ``code``, printed no traceback, and its error line names every culprit."""
    assert run.code == code, (run.code, run.out, run.err)
    assert "Traceback" not in run.err and "Traceback" not in run.out, run.err
    lines = [line for line in run.err.splitlines() if ": error: " in line]
    assert lines, run.err
    for culprit in culprits:
        assert culprit in lines[-1], (culprit, lines[-1])
    return lines[-1]
