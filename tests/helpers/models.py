"""Model folders with one defect each, made from the tiny BERT of the training tests (no downloads)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from tests.helpers.training import build_tiny


def make_remote_code(folder: Path, marker: Path) -> Path:
    """Make ``folder`` a model whose architecture is its own code (``auto_map``), code that writes ``marker``."""
    config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    config["model_type"] = "ratio-remote"  # not a transformers architecture: only the folder's code knows it
    config["auto_map"] = {
        "AutoConfig": "modeling_remote.RemoteConfig",
        "AutoModel": "modeling_remote.RemoteModel",
    }
    (folder / "config.json").write_text(json.dumps(config), encoding="utf-8")
    (folder / "modeling_remote.py").write_text(f"open({str(marker)!r}, 'w').write('ran')\n", encoding="utf-8")
    return folder


def _pickled(folder: Path) -> None:
    import torch
    from safetensors.torch import load_file

    torch.save(load_file(folder / "model.safetensors"), folder / "pytorch_model.bin")
    (folder / "model.safetensors").unlink()


def _truncated(folder: Path) -> None:
    weights = (folder / "model.safetensors").read_bytes()
    (folder / "model.safetensors").write_bytes(weights[: len(weights) // 2])


def write_broken_models(root: Path) -> dict[str, Path]:
    """A good tiny model (``good``) and copies of it with one defect each, named by the defect.

    ``remote-code`` writes ``root/remote-code-ran`` if its code is ever run.
    """
    good = build_tiny("bert", root)
    defects = {
        "no-tokenizer": lambda f: (f / "tokenizer.json").unlink(),  # tokenizer_config.json alone: all [UNK]
        "remote-code": lambda f: make_remote_code(f, root / "remote-code-ran"),
        "pickle": _pickled,
        "broken-config": lambda f: (f / "config.json").write_text("{bad", encoding="utf-8"),
        "truncated": _truncated,
    }
    folders = {"good": good}
    for name, defect in defects.items():
        folders[name] = root / name
        shutil.copytree(good, folders[name])
        defect(folders[name])
    return folders


def with_loading_options(folder: Path, offload: Path) -> Path:
    """Make ``folder`` ask for the loader's options: a device map that offloads to ``offload`` and bfloat16
    (in its sentence-transformers config, old and new key names, and in config.json)."""
    for name in ("sentence_bert_config.json", "config.json"):
        path = folder / name
        doc = json.loads(path.read_text(encoding="utf-8"))
        if name == "config.json":
            doc |= {"torch_dtype": "bfloat16", "dtype": "bfloat16", "attn_implementation": "eager"}
        else:
            options = {"device_map": {"": "disk"}, "offload_folder": str(offload), "torch_dtype": "bfloat16"}
            doc |= {"model_args": options, "config_kwargs": {"dtype": "bfloat16"}}
        path.write_text(json.dumps(doc), encoding="utf-8")
    return folder


def with_weights(folder: Path, value: float) -> Path:
    """Every floating-point weight of ``folder`` set to ``value`` (NaN, infinity)."""
    import numpy as np
    from safetensors.numpy import load_file, save_file

    for path in folder.rglob("*.safetensors"):
        weights = load_file(path)
        filled = {k: np.full_like(v, value) if v.dtype.kind == "f" else v for k, v in weights.items()}
        save_file(filled, path, metadata={"format": "pt"})
    return folder


def make_router(good: Path, out: Path) -> Path:
    """An asymmetric model: ``good`` as its query route, a copy with other weights as its document route."""
    import torch
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.base.modules import Router

    query = SentenceTransformer(str(good), device="cpu")
    document = SentenceTransformer(str(good), device="cpu")
    with torch.no_grad():
        for p in document.parameters():
            p.mul_(0.5).add_(0.01)
    router = Router.for_query_document(
        query_modules=list(query.children()), document_modules=list(document.children())
    )
    SentenceTransformer(modules=[router], device="cpu").save(str(out))
    return out


def write_unloadable_models(root: Path, good: Path) -> dict[str, Path]:
    """Copies of ``good`` that pass the file checks but can only fail to load or to be queued, by defect."""

    def config(f: Path, **fields) -> None:
        doc = json.loads((f / "config.json").read_text(encoding="utf-8"))
        (f / "config.json").write_text(json.dumps(doc | fields), encoding="utf-8")

    def module_type(f: Path) -> None:
        doc = json.loads((f / "modules.json").read_text(encoding="utf-8"))
        doc[0]["type"] = "sentence_transformers.evil.NoSuchModule"
        (f / "modules.json").write_text(json.dumps(doc), encoding="utf-8")

    def long_prompt(f: Path) -> None:
        doc = json.loads((f / "config_sentence_transformers.json").read_text(encoding="utf-8"))
        doc["prompts"] = {"query": "q" * 5000, "document": ""}
        (f / "config_sentence_transformers.json").write_text(json.dumps(doc), encoding="utf-8")

    defects = {
        "vocab-400m": lambda f: config(f, vocab_size=400_000_000),
        "bad-tokenizer": lambda f: (f / "tokenizer.json").write_text(
            '{"version": "1.0", "model": 7', "utf-8"
        ),
        "unknown-model-type": lambda f: config(f, model_type="ratio-nonsense"),
        "module-type": module_type,
        "long-prompt": long_prompt,
    }
    folders = {}
    for name, defect in defects.items():
        folders[name] = root / name
        shutil.copytree(good, folders[name])
        defect(folders[name])
    return folders
