"""The package layers of ``ratio_bench`` import only downwards (ARCHITECTURE.md), no modules import each other
round a circle, the cleaned packages import ``ratio_bench`` at their modules' tops only, and reading a release
needs no DuckDB.

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


def imports(path: Path, root: Path = ROOT) -> list[tuple[int, str]]:
    """Every ``ratio_bench`` module ``path`` imports, with its line (relative imports resolved)."""
    module = ".".join(path.relative_to(root.parent).with_suffix("").parts)
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


def test_relative_and_late_imports_are_seen(tmp_path):
    """The checker itself: a function-local import and a relative one are edges like any other."""
    package = tmp_path / "ratio_bench"
    (package / "corpus").mkdir(parents=True)
    (package / "corpus" / "a.py").write_text("def f():\n    from ratio_bench.serve import app\n")
    (package / "corpus" / "b.py").write_text("from ..mining import x\n")
    assert imports(package / "corpus" / "a.py", package) == [(2, "ratio_bench.serve")]
    assert imports(package / "corpus" / "b.py", package) == [(1, "ratio_bench.mining")]


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
    """The service (leaderboard/, serve/) calls library modules, never a ``cli`` module: a parser module there may
    reach its own package's ``cli`` (the MCP command shares the search options), nothing else may reach any (what
    parsers and handlers share sits in a light ``options.py``)."""
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
KIND_FREE = (
    "serve/index.py",
    "serve/search.py",
    "evaluation/scoring/evaluate.py",
    "evaluation/scoring/engine.py",
)


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


def module_name(path: Path, root: Path) -> str:
    """``<root>/leaderboard/job.py`` -> ``ratio_bench.leaderboard.job`` (a package by its ``__init__``)."""
    parts = path.relative_to(root).with_suffix("").parts
    return ".".join((root.name, *(parts[:-1] if parts[-1] == "__init__" else parts)))


def function_level(tree: ast.AST) -> set[int]:
    """The ids of the import statements inside a function (a late import: run on the first call)."""
    return {
        id(node)
        for fn in ast.walk(tree)
        if isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef)
        for node in ast.walk(fn)
        if isinstance(node, ast.Import | ast.ImportFrom)
    }


def module_graph(root: Path) -> dict[str, dict[str, tuple[str, int, bool]]]:
    """module -> {module it imports: (file, line, whether the import is inside a function)} over every module of
    the package at ``root``. ``from a.b import c`` is an edge to ``a.b.c`` when that is a module, else to
    ``a.b``; top-level and function-level imports alike (a late import hides a circle, it does not break one)."""
    files = {module_name(path, root): path for path in sorted(root.rglob("*.py"))}

    def resolve(name: str) -> str:
        while name and name not in files:
            name = name.rpartition(".")[0]
        return name

    graph: dict[str, dict[str, tuple[str, int, bool]]] = {}
    for module, path in files.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        late, package = function_level(tree), module.split(".")
        package = package if path.name == "__init__.py" else package[:-1]
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    base = ".".join([*package[: len(package) - node.level + 1], *([base] if base else [])])
                targets = [base, *(f"{base}.{alias.name}" for alias in node.names)]
            elif loaded := extras_load(node):
                targets = [loaded]
            else:
                continue
            for target in targets:
                if target == root.name or target.startswith(root.name + "."):
                    dest = resolve(target)
                    if dest and dest != module:
                        where = (
                            str(path.relative_to(root.parent)),
                            node.lineno,
                            id(node) in late or extras_load(node) is not None,
                        )
                        graph.setdefault(module, {}).setdefault(dest, where)
    return graph


def extras_load(node: ast.AST) -> str | None:
    """The module of a ``extras.load("ratio_bench....")`` call (a deferred import of ours), else None."""
    if (
        isinstance(node, ast.Call)
        and getattr(node.func, "attr", getattr(node.func, "id", None)) == "load"
        and node.args
        and isinstance(node.args[0], ast.Constant)
        and isinstance(node.args[0].value, str)
    ):
        return node.args[0].value
    return None


def circles(graph: dict[str, dict[str, tuple[str, int, bool]]]) -> list[tuple[list[str], list[str]]]:
    """(the modules, one shortest way round them with the first repeated at the end) of each strongly connected
    component of more than one module: modules each reachable from every other. Largest first."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    components: list[set[str]] = []

    def visit(v: str) -> None:  # Tarjan's algorithm
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph.get(v, {}):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = set()
            while True:
                w = stack.pop()
                on.discard(w)
                component.add(w)
                if w == v:
                    break
            if len(component) > 1:
                components.append(component)

    old_limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(old_limit, 10_000))
    try:
        for v in sorted(graph):
            if v not in index:
                visit(v)
    finally:
        sys.setrecursionlimit(old_limit)
    found = []
    for component in sorted(components, key=len, reverse=True):
        start = min(component)
        paths, queue = {start: [start]}, [start]
        while queue:  # breadth first inside the component: the shortest way back to ``start``
            v = queue.pop(0)
            for w in sorted(graph.get(v, {})):
                if w == start:
                    queue = []
                    found.append((sorted(component), [*paths[v], start]))
                    break
                if w in component and w not in paths:
                    paths[w] = [*paths[v], w]
                    queue.append(w)
    return found


def short(module: str) -> str:
    return module.removeprefix("ratio_bench.")


def describe(circle: list[str], graph: dict[str, dict[str, tuple[str, int, bool]]]) -> str:
    edges = []
    for a, b in zip(circle, circle[1:], strict=False):
        file, line, late = graph[a][b]
        edges.append(f"  {short(a)} -> {short(b)} ({file}:{line}{', inside a function' if late else ''})")
    return "\n".join(edges)


def test_no_module_import_circle():
    """No two modules of ``ratio_bench`` import each other, directly or round a circle, counting the imports
    inside functions: a circle closed by a late import is still a circle (the modules cannot be read, tested or
    changed one without the other). The shared piece goes into a module of its own below them."""
    graph = module_graph(ROOT)
    found = circles(graph)
    assert not found, (
        "modules that import each other round a circle (give the shared piece its own module below them):\n"
        + "\n\n".join(
            f"{len(modules)} modules: {', '.join(map(short, modules))}; one way round:\n{describe(way, graph)}"
            for modules, way in found
        )
    )


def test_the_circle_check_sees_one_closed_by_a_late_import(tmp_path):
    """The checker itself, on a package of three modules whose circle only a function-level import closes."""
    package = tmp_path / "ratio_bench"
    (package / "sub").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "sub" / "__init__.py").write_text("")
    (package / "sub" / "a.py").write_text("from ratio_bench.sub import b\n")
    (package / "sub" / "b.py").write_text("from . import c\n")
    (package / "sub" / "c.py").write_text("def f():\n    from ratio_bench.sub.a import x\n")
    graph = module_graph(package)
    (modules, way), *others = circles(graph)
    assert not others and modules == ["ratio_bench.sub.a", "ratio_bench.sub.b", "ratio_bench.sub.c"]
    assert way == [*modules, "ratio_bench.sub.a"]
    assert "sub.c -> sub.a (ratio_bench/sub/c.py:2, inside a function)" in describe(way, graph)
    (package / "sub" / "c.py").write_text("def f():\n    import json\n")
    assert circles(module_graph(package)) == []
    (package / "sub" / "c.py").write_text('def f():\n    return extras.load("ratio_bench.sub.a")\n')
    assert [m for m, _ in circles(module_graph(package))] == [modules]  # a deferred load closes it too


# Every module imports ratio_bench at its top. The two places that defer work on purpose take no import statement:
# ``cli.COMMANDS`` (importlib, by name: ``ratio --help`` loads no stage) and ``core.extras.load`` (a module that
# needs an optional extra, loaded when a command reaches it; counted as an edge by ``module_graph``).
def late_imports(path: Path) -> list[tuple[int, str]]:
    """(line, module) of each import of ``ratio_bench`` inside a function of ``path``."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    late = function_level(tree)
    found = []
    for node in ast.walk(tree):
        if id(node) not in late:
            continue
        names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
        if isinstance(node, ast.ImportFrom) and node.level:
            names = ["ratio_bench"]  # relative: one of our own
        found += [(node.lineno, n) for n in names if n == "ratio_bench" or n.startswith("ratio_bench.")]
    return found


def test_no_function_level_import_of_ratio_bench():
    """Imports at the top of every module: what a module needs is read in its first lines, and a circle cannot
    hide behind a late import. ``ratio --help`` stays fast through ``cli.COMMANDS``, not through late imports."""
    found = [
        f"{ROOT.name}/{path.relative_to(ROOT)}:{line}: imports {target} inside a function"
        for path in sorted(ROOT.rglob("*.py"))
        for line, target in late_imports(path)
    ]
    assert not found, "function-level imports of ratio_bench (move them to the module's top):\n" + "\n".join(
        found
    )


# Function-level imports of other packages kept on purpose: (file, module) -> why. An optional extra is not one of
# them: it is reached through ``core.extras.load``, which names the install when it is missing.
LATE_THIRD_PARTY = {
    ("evaluation/entry/model_meta.py", "resource"): "POSIX only: Windows has no resource module",
}


def test_no_function_level_import_of_another_package():
    """The same rule for third-party modules: an import inside a function is either a platform fallback listed in
    ``LATE_THIRD_PARTY`` or an optional extra's, which goes through ``extras.load``."""
    found = []
    for path in sorted(ROOT.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        name, late = str(path.relative_to(ROOT)), function_level(tree)
        for node in ast.walk(tree):
            if id(node) in late:
                modules = (
                    [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
                )
                found += [
                    f"{ROOT.name}/{name}:{node.lineno}: imports {m} inside a function"
                    for m in modules
                    if (name, m) not in LATE_THIRD_PARTY and not m.startswith("ratio_bench")
                ]
    assert not found, "function-level imports (move them up, or use extras.load for an extra):\n" + "\n".join(
        found
    )


def test_the_late_import_check_sees_one(tmp_path):
    """The checker itself: imports of ours inside a function, however deep, relative ones included."""
    path = tmp_path / "m.py"
    path.write_text(
        "import json\n"
        "from ratio_bench.core import io\n"
        "\n"
        "\n"
        "def f():\n"
        "    import os\n"
        "    from ratio_bench.core.errors import RatioError\n"
        "\n"
        "    class C:\n"
        "        def g(self):\n"
        "            from . import x\n"
    )
    assert late_imports(path) == [(7, "ratio_bench.core.errors"), (11, "ratio_bench")]


# evaluation/'s rooms, lowest first: a room imports only rooms below it (its own modules too).
EVALUATION_ROOMS = ("entry", "scoring", "board", "analysis")


def test_evaluation_rooms_import_only_downwards():
    rank = {room: i for i, room in enumerate(EVALUATION_ROOMS)}
    found = []
    for room in EVALUATION_ROOMS:
        for path in sorted((ROOT / "evaluation" / room).rglob("*.py")):
            for line, target in imports(path):
                parts = [*target.split("."), ""]
                if parts[:2] == ["ratio_bench", "evaluation"] and rank.get(parts[2], -1) > rank[room]:
                    found.append(f"{path.relative_to(ROOT.parent.parent)}:{line}: {room} -> {parts[2]}")
    assert not found, f"evaluation rooms importing upwards ({' < '.join(EVALUATION_ROOMS)}):\n" + "\n".join(
        found
    )
    rooms = {p.name for p in (ROOT / "evaluation").iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    assert rooms == set(EVALUATION_ROOMS), f"a room with no place in EVALUATION_ROOMS: {sorted(rooms)}"
