"""Which optional extra of ``ratio-bench`` a missing module belongs to, so the fix is one ``pip install`` line.

The base install reads releases, builds them and scores BM25 and sentence-transformers models; the rest comes
with extras (``pyproject.toml``). A command that imports a module of a missing extra fails with
:class:`MissingExtraError` naming the extra, whether the import is checked up front (:func:`require`) or
fails deep inside a command (``ratio``'s main loop turns that ``ModuleNotFoundError`` into the same error).
:func:`lazy` is the other deferral here: a heavy base dependency (torch and its kin) imported on first use.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from types import ModuleType

from ratio_bench.core.errors import RatioError

EXTRAS: dict[str, tuple[str, ...]] = {
    "eval": ("mteb", "matplotlib"),
    "train": ("accelerate",),
    "serve": ("fastapi", "uvicorn", "starlette", "mcp"),
    "judge": ("openai", "krippendorff"),
    "compare": ("blingfire", "pysbd", "syntok"),
    "cluster": ("ray",),
}
_EXTRA_OF = {module: extra for extra, modules in EXTRAS.items() for module in modules}


class MissingExtraError(RatioError):
    """A command needs an optional dependency that is not installed."""

    def __init__(self, module: str, extra: str):
        super().__init__(
            f"this needs {module}, which comes with the {extra} extra: pip install 'ratio-bench[{extra}]'"
        )
        self.module, self.extra = module, extra


def missing_extra(exc: ModuleNotFoundError) -> MissingExtraError | None:
    """The extra whose module ``exc`` failed to import, or None when the module belongs to no extra (a bug)."""
    top = (exc.name or "").split(".")[0]
    return MissingExtraError(top, _EXTRA_OF[top]) if top in _EXTRA_OF else None


def require(extra: str) -> None:
    """Fail now, with the install line, if a module of ``extra`` is missing (before minutes of loading data).

    For modules whose absence would otherwise surface as another library's own ImportError (``transformers``
    asks for accelerate in its own words) or only after a long first stage.
    """
    for module in EXTRAS[extra]:
        if importlib.util.find_spec(module) is None:
            raise MissingExtraError(module, extra)


def load(module: str) -> ModuleType:
    """``module`` imported when a command reaches the code that needs an optional extra: for a module (ours or the
    extra's own) that imports an extra at its top (``lazy`` defers the heavy base dependencies; ``cli.handler`` a
    command's handler module). A missing extra raises :class:`MissingExtraError` naming it; any other missing module is a bug and
    raises as it is. ``tests/test_architecture.py`` counts ``load("ratio_bench...")`` as an import of that module.
    """
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as exc:
        missing = missing_extra(exc)
        if missing is None:
            raise
        raise missing from exc


# The base dependencies whose import costs seconds (sentence-transformers pulls transformers, torch and sklearn:
# about 3 s on a 2-core machine; lemminflect pulls spaCy, 1.6 s; scipy.stats 0.5 s) or a tenth of one each
# (huggingface_hub's client and errors with httpx 0.2 s, bm25s with scipy.sparse 0.16 s, DuckDB 0.09 s,
# jsonschema 0.05 s; datatrove's executors, which pull huggingface_hub's client, 0.25 s). A module that needs one
# names it through :func:`lazy` at its top, so a command that stops on its arguments or a missing file, or never
# talks to the Hub, never pays for them: each ``ratio`` command imported its stage's handlers in 0.4-0.85 s with
# all of them loaded, 0.25-0.6 s without (0.2-0.4 s with Python's bytecode cache).
HEAVY = (
    "torch", "sentence_transformers", "transformers", "faiss", "scipy", "lemminflect",
    "huggingface_hub", "httpx", "bm25s", "duckdb", "jsonschema", "datatrove",
)  # fmt: skip


class LazyModule(ModuleType):
    """A module imported on first attribute access: ``torch = lazy("torch")`` reads as ``import torch``."""

    def __init__(self, name: str):
        super().__init__(name)
        self._loaded: ModuleType | None = None

    def __getattr__(self, attr: str):  # called only for names this proxy lacks: the real module's
        if self._loaded is None:
            self._loaded = importlib.import_module(self.__name__)
        return getattr(self._loaded, attr)

    def __repr__(self) -> str:
        state = "loaded" if self._loaded is not None else "not loaded yet"
        return f"<lazy module {self.__name__!r} ({state})>"


def lazy(module: str) -> ModuleType:
    """One of :data:`HEAVY` (or a submodule of one), imported when first used, not when the caller is imported.

    The only deferral of a base dependency: our own modules are never loaded this way (``load`` is for those that
    need an extra), so the import graph the architecture test reads stays the graph that runs.
    """
    if module.split(".")[0] not in HEAVY:
        raise ValueError(f"lazy({module!r}): only {', '.join(HEAVY)} load on first use")
    loaded = sys.modules.get(module)
    return loaded if loaded is not None else LazyModule(module)
