"""A model folder read before anyone loads it: its modules, weights, config and tokenizer checked with the stock
classes (no remote code), and the loading view of a folder whose modules sit in sub-folders.

Its own module because it needs torch, transformers and sentence-transformers, and the registry (names, setups,
cut-offs) is read by commands that must answer in a fraction of a second (a training config's validation).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from safetensors import SafetensorError, safe_open

from ratio_bench.core import extras
from ratio_bench.retrieval.registry import ModelUnavailableError

torch = extras.lazy("torch")
transformers = extras.lazy("transformers")
st_util = extras.lazy("sentence_transformers.util")

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
            module = st_util.import_module_class(kind)
        except (ImportError, AttributeError, ValueError):
            module = None
        if not (isinstance(module, type) and issubclass(module, torch.nn.Module)):
            raise ModelUnavailableError(
                f"{folder}: module type {kind[:120]!r} is not a sentence-transformers module"
            )
        if not kind.endswith("Transformer"):
            continue
        try:
            config = transformers.AutoConfig.from_pretrained(
                folder, local_files_only=True, trust_remote_code=False
            )
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
            transformers.AutoTokenizer.from_pretrained(folder, local_files_only=True, trust_remote_code=False)
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
