"""The model a setup fine-tunes: its weights, its prompts, and which of its layers stay frozen.

Prompts come from the scoring registry (``ratio_bench.retrieval.registry``), so a tuned model is trained with
exactly the prefixes it is scored with; they are stored in the saved model (``model.prompts``, with no default
prompt) so ``encode_query``/``encode_document`` and ``ratio score`` apply them without being told.
"""

from __future__ import annotations

import math
from pathlib import Path

from sentence_transformers import SentenceTransformer
from torch import nn

from ratio_bench.retrieval.model_folder import check_model_folder
from ratio_bench.retrieval.registry import GENERIC, REGISTRY, fingerprint, locate
from ratio_bench.training.config import TrainingConfig, TrainingConfigError

LOCAL_SETUPS = {"none": ("", ""), "generic": GENERIC}


def training_prompts(config: TrainingConfig) -> dict[str, str]:
    """``{"query": ..., "document": ...}`` of the config's backbone and setup (unified: one per relation)."""
    entry = REGISTRY.get(config.backbone)
    query, document = entry.setups[config.setup] if entry else LOCAL_SETUPS[config.setup]
    if config.unified:  # one query prompt per relation, under the relation's name; the document prompt shared
        return {**config.instructions, "document": document}
    return {"query": query, "document": document}


def backbone_path(config: TrainingConfig) -> Path:
    """The weights folder: ``weights:`` if given, else where ``ratio models`` finds the registered model."""
    if config.weights is not None:
        if not config.weights.is_dir():
            raise TrainingConfigError(f"{config.path}: weights: no such folder {config.weights}")
        return config.weights
    entry = REGISTRY.get(config.backbone)
    return locate(entry) if entry else Path(config.backbone)


def load_backbone(config: TrainingConfig, trust_remote_code: bool = False, device: str | None = None):
    """A SentenceTransformer ready to train: weights loaded offline, prompts set, no default prompt."""

    path = backbone_path(config)
    entry = REGISTRY.get(config.backbone)
    remote = bool(entry and entry.trust_remote_code and trust_remote_code)
    check_model_folder(path, trust_remote_code=remote)  # a config's weights: folder is read like any other
    model = SentenceTransformer(str(path), device=device, trust_remote_code=remote, local_files_only=True)
    model.prompts = training_prompts(config)
    model.default_prompt_name = None
    return model, fingerprint(path)


def _encoder(model) -> nn.Module:
    """The transformers model inside the first (Transformer) module."""
    return model[0].auto_model


def encoder_layers(model) -> nn.ModuleList:
    """The stack of encoder blocks, whatever the architecture calls it (``encoder.layer``, ``layers``)."""
    stacks = [
        m
        for name, m in _encoder(model).named_modules()
        if isinstance(m, nn.ModuleList) and name.endswith("layer")
    ] or [
        m
        for name, m in _encoder(model).named_modules()
        if isinstance(m, nn.ModuleList) and name.endswith("layers")
    ]
    if not stacks:
        raise TrainingConfigError(
            f"cannot find the encoder layers of {type(_encoder(model)).__name__} to apply freeze_ratio"
        )
    return max(stacks, key=len)


def freeze(model, ratio: float) -> list[str]:
    """Freeze the embeddings and the lowest ``floor(ratio * layers)`` encoder layers; return frozen names.

    With ``ratio`` 0 nothing is frozen (not even the embeddings): Table 7's "frz" trials are the only ones that
    hold parameters fixed. Rounding down means the frozen share never exceeds the configured one.
    """
    if ratio <= 0:
        return []
    encoder = _encoder(model)
    layers = encoder_layers(model)
    modules: list[nn.Module] = [encoder.get_input_embeddings()]
    embeddings = getattr(encoder, "embeddings", None)
    if isinstance(embeddings, nn.Module):
        modules.append(embeddings)
    modules += list(layers[: math.floor(ratio * len(layers))])
    frozen = {id(p) for m in modules for p in m.parameters()}
    names = []
    for name, param in model.named_parameters():
        if id(param) in frozen:
            param.requires_grad_(False)
            names.append(name)
    return names
