"""A command that needs a missing optional extra says which ``pip install`` to run, in one line."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import ratio_bench
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


# Makes the extras' modules absent as on a base install: not importable, and not found by ``find_spec`` or
# ``importlib.metadata``, which libraries (sentence-transformers, transformers) ask before importing one.
HIDE = """
import importlib.abc, importlib.util, sys
BLOCKED = set({blocked!r})
class Hide(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split('.')[0] in BLOCKED:
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
sys.meta_path.insert(0, Hide())
real = importlib.util.find_spec
importlib.util.find_spec = lambda name, *a: None if name.split('.')[0] in BLOCKED else real(name, *a)
import importlib.metadata as md
def absent(real):
    def look(name, *a, **k):
        if name in BLOCKED:
            raise md.PackageNotFoundError(name)
        return real(name, *a, **k)
    return look
md.version, md.metadata, md.distribution = absent(md.version), absent(md.metadata), absent(md.distribution)
"""


def test_the_base_install_needs_no_extra():
    """Every command group registers, and the lexicon loads, with every extra's modules absent."""
    blocked = [m for modules in extras.EXTRAS.values() for m in modules]
    hide = HIDE.format(blocked=blocked)
    for words, expect in ((["mcp", "--help"], "--http HOST:PORT"), (["lexicon", "check"], "sha256=")):
        code = hide + f"from ratio_bench.cli import main\nraise SystemExit(main({words!r}))\n"
        run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=180)
        assert run.returncode == 0 and expect in run.stdout, run.stderr[-2000:]
    words = ("score", "index", "leaderboard", "judge", "train", "dataset", "serve")
    code = hide + (
        "import contextlib, io\nfrom ratio_bench.cli import main\n"
        f"for word in {words!r}:\n"
        "    out = io.StringIO()\n"
        "    with contextlib.redirect_stdout(out), contextlib.suppress(SystemExit):\n"
        "        main([word, '--help'])\n"
        "    print(word, out.getvalue().startswith('usage: ratio'))\n"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=180)
    assert run.stdout.split() == [x for w in words for x in (w, "True")], run.stderr[-2000:]


def test_a_deferred_module_needing_a_missing_extra_names_the_install(monkeypatch):
    """``extras.load`` is how a command reaches a module that imports an extra at its top (the mteb tasks)."""
    import pytest

    for name in [m for m in sys.modules if m == "mteb" or m.startswith("mteb.")] or ["mteb"]:
        monkeypatch.setitem(sys.modules, name, None)  # mteb and its loaded submodules: import fails
    monkeypatch.delitem(sys.modules, "ratio_bench.evaluation.scoring.mteb_tasks", raising=False)
    with pytest.raises(extras.MissingExtraError, match=r"pip install 'ratio-bench\[eval\]'"):
        extras.load("ratio_bench.evaluation.scoring.mteb_tasks")
    with pytest.raises(ModuleNotFoundError):  # not an extra's module: a bug, raised as it is
        extras.load("ratio_bench.no_such_module")


def test_a_heavy_dependency_loads_on_first_use_only():
    """``extras.lazy`` defers torch and its kin until an attribute is read; it refuses our own modules and light
    libraries (those are imported at the top, where the architecture test sees them)."""

    code = (
        "import sys\n"
        "from ratio_bench.core import extras\n"
        "torch = extras.lazy('torch')\n"
        "print('torch' in sys.modules)\n"
        "print(torch.tensor([1, 2]).sum().item(), 'torch' in sys.modules)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.split()
    assert out == ["False", "3", "True"]
    for name in ("ratio_bench.retrieval.encoder", "numpy"):
        with pytest.raises(ValueError, match="only torch"):
            extras.lazy(name)


def test_a_command_that_fails_on_its_arguments_loads_no_encoder(tmp_path):
    """``ratio serve --index MISSING``, ``ratio index`` of a missing release and ``ratio train`` of a missing
    config answer before torch or sentence-transformers is imported: a user's typo costs a fraction of a second,
    not the encoder's import."""

    code = (
        "import sys, contextlib, io\n"
        "from ratio_bench.cli import main\n"
        "with contextlib.redirect_stderr(io.StringIO()):\n"
        "    code = main(sys.argv[1:])\n"
        "print(code, sorted(m for m in ('torch', 'sentence_transformers', 'transformers') if m in sys.modules))\n"
    )
    for words in (
        ["serve", "--index", str(tmp_path / "missing")],
        [
            "index",
            "--dataset",
            str(tmp_path / "missing"),
            "--model",
            "all-MiniLM-L6-v2",
            "--out",
            str(tmp_path / "i"),
        ],
    ):
        out = subprocess.run([sys.executable, "-c", code, *words], capture_output=True, text=True)
        assert out.stdout.split()[-1] == "[]", (words, out.stdout, out.stderr[-400:])
        assert out.stdout.split()[0] in ("1", "2"), (words, out.stdout)


def test_no_stages_handlers_load_a_deferred_library_at_import():
    """Importing every stage's ``commands.py`` (what any ``ratio`` command pays before it reads its arguments)
    loads none of :data:`extras.HEAVY`: the Hub client, DuckDB, bm25s, jsonschema and datatrove's executors wait
    until a command uses them. A top-level ``from huggingface_hub import HfApi`` anywhere below a handler fails
    here, naming the library."""

    stages = sorted(p.parent.name for p in Path(ratio_bench.__file__).parent.glob("*/commands.py"))
    assert len(stages) >= 10, stages
    code = (
        "import importlib, sys\n"
        f"for stage in {stages!r}:\n"
        "    importlib.import_module(f'ratio_bench.{stage}.commands')\n"
        "print(sorted(set(sys.modules) & set(sys.argv[1:])))\n"
    )
    # datatrove's pipeline step class is subclassed, so its base loads; its executors are what wait
    own_part = {"huggingface_hub": "huggingface_hub.hf_api", "datatrove": "datatrove.executor"}
    heavy = [own_part.get(name, name) for name in extras.HEAVY]
    run = subprocess.run([sys.executable, "-c", code, *heavy], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr[-600:]
    assert run.stdout.split("\n")[0] == "[]", run.stdout
