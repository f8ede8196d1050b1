"""``python -m ratio_bench`` checks the install on one screen instead of printing a usage error."""

from __future__ import annotations

import os
import subprocess
import sys

from ratio_bench.retrieval import install_check
from ratio_bench.retrieval.install_check import TorchBuild


def test_python_m_ratio_bench_checks_the_install():
    done = subprocess.run(
        [sys.executable, "-m", "ratio_bench"],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "HF_HUB_OFFLINE": "1"},
    )
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "usage:" not in out + done.stderr
    for package in ("ratio-bench", "torch", "sentence-transformers", "mteb"):
        assert f"\n  {package} " in out, package
    assert "CPU build" in out or "CUDA" in out  # which torch build it is, the usual surprise
    for extra in ("eval", "train", "serve", "judge"):
        assert f"\n  {extra} " in out
    assert "all-MiniLM-L6-v2" in out and "bm25" in out
    assert "self-test  passed" in out
    assert len(out.splitlines()) <= 40  # one screen


def test_python_m_ratio_bench_with_arguments_is_still_the_cli():
    done = subprocess.run(
        [sys.executable, "-m", "ratio_bench", "--version"], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0 and done.stdout.startswith("ratio-bench ")


def test_the_self_test_fails_when_a_gold_is_not_first(monkeypatch):
    assert install_check.self_test().passed
    query, _ = install_check.TOY_QUERIES["address"]
    monkeypatch.setitem(install_check.TOY_QUERIES, "address", (query, 5))
    failed = install_check.self_test()
    assert not failed.passed and "address ranked #0 first, not #5" in failed.detail


def test_a_missing_extra_names_its_modules(monkeypatch):
    real = install_check.importlib.util.find_spec
    monkeypatch.setattr(
        install_check.importlib.util, "find_spec", lambda name: None if name == "mcp" else real(name)
    )
    (serve,) = install_check.extras_status(("serve",))
    assert not serve.present and serve.missing == ("mcp",)


def test_the_torch_build_is_told():
    assert TorchBuild("2.13.0+cpu", None, False).describe() == "2.13.0+cpu, CPU build"
    assert "no GPU visible" in TorchBuild("2.13.0", "12.8", False).describe()
    assert "download.pytorch.org/whl/cpu" in TorchBuild(None, None, False).describe()
