"""A command that needs a missing optional extra says which ``pip install`` to run, in one line."""

from __future__ import annotations

import subprocess
import sys

from ratio_bench.cli import main
from ratio_bench.core import extras


def test_a_missing_extra_module_names_the_install(tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "uvicorn", None)  # import uvicorn now fails as if not installed
    assert main(["serve", "--index", str(tmp_path)]) == 1
    assert capsys.readouterr().err == (
        "ratio serve: error: this needs uvicorn, which comes with the serve extra: pip install 'ratio-bench[serve]'\n"
    )


def test_training_checks_its_extra_before_anything_else(tmp_path, monkeypatch, capsys):
    real = extras.importlib.util.find_spec
    monkeypatch.setattr(extras.importlib.util, "find_spec", lambda m: None if m == "accelerate" else real(m))
    assert main(["train", "--config", "nope", "--dataset", str(tmp_path), "--out", str(tmp_path / "t")]) == 1
    assert "pip install 'ratio-bench[train]'" in capsys.readouterr().err


def test_the_base_install_needs_no_extra():
    """Every command registers, and the lexicon loads, with every extra's modules unimportable."""
    blocked = [m for modules in extras.EXTRAS.values() for m in modules]
    code = (
        f"import sys; sys.modules.update(dict.fromkeys({blocked!r})); from ratio_bench.cli import main; "
        "assert main(['mcp', '--help']) == 0"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert "--http HOST:PORT" in run.stdout, run.stderr
    code = code.replace("['mcp', '--help']", "['lexicon', 'check']")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0 and "sha256=" in run.stdout, run.stderr
