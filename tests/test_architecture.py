"""The package layers of ``ratio_bench`` import only downwards (ARCHITECTURE.md), and reading a release needs no
DuckDB.

Every ``import`` and ``from ... import`` is read with ``ast``, function-local ones included (most of the
package imports late to keep ``ratio --help`` fast, and a late import is still a dependency). A failure names the
offending file, line and edge.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import ratio_bench

ROOT = Path(ratio_bench.__file__).resolve().parent

# Lowest first. A package may import its own modules and any package of a lower layer, never one of its own
# layer or above. ``ratio_bench/__init__.py`` (the version) counts as core; ``cli.py`` and ``__main__.py`` are cli.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("core", "devhub"),
    ("llm",),
    ("corpus",),
    ("lexicon",),
    ("mining",),
    ("dataset",),
    ("retrieval",),
    ("evaluation",),
    ("training", "judge"),
    ("leaderboard",),
    ("serve",),
    ("cli",),
)
RANK = {package: rank for rank, layer in enumerate(LAYERS) for package in layer}


def package_of(module: str) -> str:
    """``ratio_bench.dataset.release`` -> ``dataset``; the top-level modules -> their layer's name."""
    parts = module.split(".")
    if len(parts) == 1:
        return "core"  # ``from ratio_bench import __version__``
    if parts[1] in ("cli", "__main__"):
        return "cli"
    return parts[1]


def imports(path: Path) -> list[tuple[int, str]]:
    """Every ``ratio_bench`` module ``path`` imports, with its line (relative imports resolved)."""
    module = ".".join(path.relative_to(ROOT.parent).with_suffix("").parts)
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # ``from . import x`` in a.b.c means a.b; each further dot goes one package up
                package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
                anchor = package[: len(package) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            found.append((node.lineno, base))
    return [(line, name) for line, name in found if name == "ratio_bench" or name.startswith("ratio_bench.")]


def edges() -> list[tuple[str, str, str, int]]:
    """(from package, to package, file, line) for every import that crosses a package boundary."""
    out = []
    for path in sorted(ROOT.rglob("*.py")):
        source = package_of(".".join(path.relative_to(ROOT.parent).with_suffix("").parts))
        for line, target in imports(path):
            dest = package_of(target)
            if dest != source:
                out.append((source, dest, str(path.relative_to(ROOT.parent.parent)), line))
    return out


def test_every_package_has_a_layer():
    packages = {p.name for p in ROOT.iterdir() if p.is_dir() and any(p.glob("*.py"))}
    modules = {p.stem for p in ROOT.glob("*.py")} - {"__init__", "__main__", "cli"}
    assert not modules, f"top-level modules outside any layer (move them into a package): {sorted(modules)}"
    assert packages <= set(RANK), f"packages with no layer in LAYERS: {sorted(packages - set(RANK))}"


def test_imports_go_only_downwards():
    upward = [
        f"{file}:{line}: {a} -> {b} ({a} is layer {RANK[a]}, {b} is layer {RANK[b]})"
        for a, b, file, line in edges()
        if RANK.get(b, -1) >= RANK[a]
    ]
    assert not upward, "imports that go sideways or up the layers:\n" + "\n".join(upward)


def test_no_package_level_cycle():
    graph: dict[str, set[str]] = {}
    for a, b, _, _ in edges():
        graph.setdefault(a, set()).add(b)

    def reaches(start: str, goal: str, seen: set[str]) -> bool:
        return any(
            n == goal or (n not in seen and reaches(n, goal, seen | {n})) for n in graph.get(start, ())
        )

    cycles = sorted(p for p in graph if reaches(p, p, {p}))
    assert not cycles, f"packages on an import cycle: {cycles}"


def test_relative_and_late_imports_are_seen():
    """The checker itself: a function-local import is an edge like any other."""
    late = [(a, b) for a, b, file, _ in edges() if file.endswith("ratio_bench/cli.py")]
    assert ("cli", "serve") in late and ("cli", "corpus") in late  # both imported inside build_parser


def test_reading_a_release_loads_no_duckdb():
    """The release contract (schemas, splits, layout) is read by training, scoring and serving; DuckDB is the
    builder's alone."""
    code = (
        "import sys, ratio_bench.dataset.release, ratio_bench.dataset.contract; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('duckdb', 'ratio_bench') and "
        "m.startswith(('duckdb', 'ratio_bench.dataset.assemble', 'ratio_bench.mining', 'ratio_bench.llm'))))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]", f"importing ratio_bench.dataset.release loaded: {out.strip()}"


def defines_register(path: Path) -> bool:
    """Whether ``path`` is a command module: it adds subcommands with a top-level ``register(subparsers)``."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    return any(isinstance(n, ast.FunctionDef) and n.name == "register" for n in tree.body)


def test_no_service_module_uses_a_cli_module_as_its_library():
    """The service (leaderboard/, serve/) calls library modules, never a ``cli`` module: a command module there
    may reach its own package's ``cli`` (the MCP command shares the search options), nothing else may reach any."""
    found = []
    for package in ("leaderboard", "serve"):
        for path in sorted((ROOT / package).rglob("*.py")):
            for line, target in imports(path):
                if target.split(".")[-1] != "cli":
                    continue
                own = target == f"ratio_bench.{package}.cli"
                if not (own and defines_register(path)):
                    found.append(f"{path.relative_to(ROOT.parent.parent)}:{line}: imports {target}")
    assert not found, "service modules importing a CLI module:\n" + "\n".join(found)


# Where models are indexed, searched and scored: a retriever's kind is looked up in retrieval/retriever.py's
# RETRIEVERS (its class describes, saves and restores itself), never branched on here.
KIND_FREE = ("serve/index.py", "serve/search.py", "evaluation/evaluate.py", "evaluation/engine.py")


def test_indexing_serving_and_scoring_hold_no_retriever_kind_checks():
    from ratio_bench.retrieval.retriever import RETRIEVERS

    found = []
    for name in KIND_FREE:
        path = ROOT / name
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.Constant) and node.value in RETRIEVERS:
                found.append(f"{name}:{node.lineno}: the kind {node.value!r}")
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "embeds":
                found.append(f"{name}:{node.lineno}: embeds(kind)")
            named = (
                node.name if isinstance(node, ast.alias) else getattr(node, "id", getattr(node, "attr", None))
            )
            if named in ("DenseRetriever", "LexicalRetriever", "BM25Retriever", "DenseEncoder"):
                found.append(f"{name}:{node.lineno}: {named}, a kind's class, named")
    assert not found, "kind checks outside the retriever registry:\n" + "\n".join(found)


MAX_FUNCTION_LINES = 100  # short functions: a longer one is split into steps that say what they do


def test_no_function_is_over_a_hundred_lines():
    found = []
    for path in sorted(ROOT.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                lines = node.end_lineno - node.lineno + 1
                if lines > MAX_FUNCTION_LINES:
                    found.append(
                        f"{path.relative_to(ROOT.parent.parent)}:{node.lineno}: {node.name} ({lines})"
                    )
    assert not found, f"functions over {MAX_FUNCTION_LINES} lines:\n" + "\n".join(found)


def test_the_scoring_cli_only_parses_and_prints():
    """``evaluation/cli.py`` was the service's library (684 lines); its logic lives in ``evaluation.engine``,
    ``board_output`` and ``analysis_run`` now, and the module stays small enough to read as a parser."""
    lines = len((ROOT / "evaluation" / "cli.py").read_text(encoding="utf-8").splitlines())
    assert lines < 300, f"evaluation/cli.py has {lines} lines; move the logic into a library module"
