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
