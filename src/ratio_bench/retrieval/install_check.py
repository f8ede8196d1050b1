"""What ``python -m ratio_bench`` reports: is this install able to score, and with what?

A new user's first question after ``pip install`` is whether it worked, and the two usual surprises are a torch
build that is not the one they meant (a multi-GB CUDA build on a CPU machine, or a CPU build on a GPU one) and an
extra they did not install. This module gathers the answers as records (versions, the torch build, extras,
registered models) and runs a self-test that needs no download: BM25 over a built-in toy corpus, each move's
query ranking its own gold first. The ``__main__`` module prints them on one screen.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import platform
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ratio_bench.core import extras
from ratio_bench.core.extras import EXTRAS
from ratio_bench.retrieval.bm25 import BM25Retriever
from ratio_bench.retrieval.registry import available

torch = extras.lazy("torch")

if TYPE_CHECKING:
    from ratio_bench.retrieval.registry import Availability

PACKAGES = ("ratio-bench", "torch", "sentence-transformers", "mteb", "bm25s", "huggingface-hub")
# Extras a user installs (compare is a developer's benchmark extra), each with the modules that make it present.
USER_EXTRAS = ("eval", "train", "serve", "judge")

# The self-test's corpus: written for it, one gold per move plus distractors that share the topic's words.
TOY_CORPUS = (
    "we cache key and value tensors across decoding steps so that each token is processed only once",
    "sparse attention lets transformers read documents far longer than their training context",
    "the same memory bottleneck appears in any sequence model that keeps per token state",
    "for instance, a seven billion parameter model needs forty gigabytes of cache at long context",
    "weather forecasts improve when ensembles of numerical models are averaged",
    "protein structures can be predicted from sequence alone with deep networks",
)
TOY_QUERIES = {
    "address": (
        "transformers are slow at decoding because every step recomputes the key and value tensors",
        0,
    ),
    "broaden": ("transformers keep a per token memory that grows with the sequence length", 2),
    "specify": ("the key value cache of a large model needs many gigabytes of memory at long context", 3),
}


@dataclass(frozen=True)
class PackageVersion:
    name: str
    version: str | None  # None: not installed


@dataclass(frozen=True)
class TorchBuild:
    version: str | None
    cuda: str | None  # the CUDA version torch was built for; None for a CPU build
    gpu: bool  # whether torch sees a GPU now

    def describe(self) -> str:
        if self.version is None:
            return "not installed (pip install torch --index-url https://download.pytorch.org/whl/cpu)"
        if self.cuda is None:
            return f"{self.version}, CPU build"
        seen = "a GPU is visible" if self.gpu else "no GPU visible: the CPU build is far smaller"
        return f"{self.version}, CUDA {self.cuda} build ({seen})"


@dataclass(frozen=True)
class ExtraStatus:
    name: str
    missing: tuple[str, ...]  # modules of the extra that are not importable

    @property
    def present(self) -> bool:
        return not self.missing


@dataclass(frozen=True)
class SelfTest:
    passed: bool
    seconds: float
    detail: str


@dataclass(frozen=True)
class InstallReport:
    python: str
    packages: tuple[PackageVersion, ...]
    torch: TorchBuild
    extras: tuple[ExtraStatus, ...]
    models: tuple[Availability, ...]  # as `ratio models`: name, kind, setups, where or why not
    self_test: SelfTest


def package_versions(names=PACKAGES) -> tuple[PackageVersion, ...]:
    """Installed distribution versions, by their metadata (no import, so a broken package still reports)."""
    found = []
    for name in names:
        try:
            found.append(PackageVersion(name, importlib.metadata.version(name)))
        except importlib.metadata.PackageNotFoundError:
            found.append(PackageVersion(name, None))
    return tuple(found)


def torch_build() -> TorchBuild:
    """torch's version and whether it is a CUDA build (the one import here that takes a second or two)."""
    if importlib.util.find_spec("torch") is None:
        return TorchBuild(None, None, False)

    cuda = torch.version.cuda
    return TorchBuild(torch.__version__, cuda, bool(cuda) and torch.cuda.is_available())


def extras_status(names=USER_EXTRAS) -> tuple[ExtraStatus, ...]:
    return tuple(
        ExtraStatus(name, tuple(m for m in EXTRAS[name] if importlib.util.find_spec(m) is None))
        for name in names
    )


def self_test() -> SelfTest:
    """BM25 on the toy corpus: each move's query must rank its gold first; proves bm25s, the tokenizer and the
    stemmer work without touching a release, a model or the network."""

    start = time.perf_counter()
    try:
        retriever = BM25Retriever(TOY_CORPUS)
        docs, _ = retriever.search([q for q, _ in TOY_QUERIES.values()], k=3)
    except Exception as e:  # the point is to report any failure on the screen, not to raise it
        return SelfTest(False, time.perf_counter() - start, f"BM25 failed: {type(e).__name__}: {e}")
    seconds = time.perf_counter() - start
    wrong = [
        f"{move} ranked #{int(row[0])} first, not #{gold}"
        for move, (_, gold), row in zip(TOY_QUERIES, TOY_QUERIES.values(), docs, strict=True)
        if int(row[0]) != gold
    ]
    if wrong:
        return SelfTest(False, seconds, "BM25 on the toy corpus: " + "; ".join(wrong))
    return SelfTest(
        True, seconds, f"BM25 on a {len(TOY_CORPUS)}-sentence toy corpus: every move's gold first"
    )


def check_install() -> InstallReport:
    return InstallReport(
        f"{platform.python_version()} ({platform.system()} {platform.machine()})",
        package_versions(),
        torch_build(),
        extras_status(),
        tuple(available()),
        self_test(),
    )


def print_install_check() -> int:
    """The install report, one screen; exit 1 when the self-test fails (the install cannot score)."""

    report = check_install()
    print(f"Ratio install check (Python {report.python})")
    print("\nversions")
    for package in report.packages:
        shown = report.torch.describe() if package.name == "torch" else package.version or "not installed"
        print(f"  {package.name:<22} {shown}")
    print("\nextras")
    for extra in report.extras:
        state = (
            "present"
            if extra.present
            else f"missing {', '.join(extra.missing)}: pip install 'ratio-bench[{extra.name}]'"
        )
        print(f"  {extra.name:<22} {state}")
    print("\nmodels (ratio models; NAME[:SETUP] for --model)")
    for model in report.models:
        state = "available" if model.available else "unavailable"
        print(f"  {model.name:<22} {model.kind:<7} {state:<12} setups: {', '.join(model.setups)}")
    test = report.self_test
    print(f"\nself-test  {'passed' if test.passed else 'FAILED'} in {test.seconds:.2f} s: {test.detail}")
    if test.passed:
        print("next: ratio score --model bm25 --dataset RELEASE --split test (see README.md's quick starts)")
    return 0 if test.passed else 1
