"""The README's Install, as written, in a fresh virtual environment: tests/wheel_smoke.sh runs the install commands
of the README's first bash block (``make wheel``, ``pip install torch==2.13.0``, the wheel with ``[eval]``) and
then a release by name from a loopback Hub; this test holds the script to the README and runs it (slow: minutes,
pip's cache reused)."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
README = REPO / "README.md"
SMOKE = REPO / "tests" / "wheel_smoke.sh"


def _install_block() -> str:
    """The bash blocks of the README's Install section, one after the other."""
    section = README.read_text(encoding="utf-8").split("## Install", 1)[1].split("\n## ", 1)[0]
    return "".join(re.findall(r"^```bash\n(.*?)^```", section, flags=re.S | re.M))


def test_the_smoke_script_runs_the_readme_install_commands():
    block = _install_block()
    script = SMOKE.read_text(encoding="utf-8")
    commands = [shlex.split(line, comments=True) for line in block.splitlines()]
    commands = [c for c in commands if c]
    assert ["make", "wheel"] in [c[:2] for c in commands]
    assert 'make -s -C "$ROOT" wheel' in script
    assert ["pip", "install", "torch==2.13.0"] in [
        c[:3] for c in commands
    ] and "pip install -q torch==2.13.0" in script
    assert any(c[:2] == ["pip", "install"] and c[-1].endswith("[eval]") for c in commands)
    assert 'pip install -q "$WHEEL[eval]"' in script
    assert "python -m ratio_bench" in block


@pytest.mark.slow
def test_the_readme_install_works_in_a_fresh_virtual_environment():
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    done = subprocess.run(
        ["bash", str(SMOKE)], cwd=REPO, capture_output=True, text=True, timeout=1800, env=env
    )
    assert done.returncode == 0, (done.stdout[-3000:], done.stderr[-3000:])
    assert "CPU build" in done.stdout  # no CUDA torch pulled in where a CPU wheel is on the find-links path
    assert "equals the folder" in done.stdout and "== [" in done.stdout
