"""Backbones: prompts from the registry, freeze ratio, and the tiny ModernBERT / Stella-like models."""

from __future__ import annotations

import re

import pytest
import yaml
from tests.helpers.training import REGISTERED

from ratio_bench.retrieval.registry import STELLA_QUERY
from ratio_bench.training.backbone import encoder_layers, freeze, load_backbone
from ratio_bench.training.config import load_config

# The embeddings and the first two of four layers (freeze ratio .5), per architecture's parameter names.
FROZEN = {
    "bert": r"\.(embeddings\.|encoder\.layer\.[01]\.)",
    "modernbert": r"\.(embeddings\.|layers\.[01]\.)",
    "qwen2": r"\.(embed_tokens\.|layers\.[01]\.)",
}


def _config(tmp_path, arch, tiny_models, setup="generic"):
    path = tmp_path / f"{arch}.yaml"
    raw = {
        "backbone": REGISTERED[arch],
        "weights": str(tiny_models[arch]),
        "setup": setup,
        "relation": "address",
        "trials": [{"epochs": 1, "batch_size": 4, "learning_rate": 1e-4}],
    }
    path.write_text(yaml.safe_dump(raw), encoding="utf-8")
    return load_config(path)


@pytest.mark.parametrize("arch", sorted(FROZEN))
@pytest.mark.parametrize("ratio", [0.5, 0.6])
def test_freeze_ratio_freezes_embeddings_and_lowest_layers(tmp_path, tiny_models, arch, ratio):
    model, _ = load_backbone(_config(tmp_path, arch, tiny_models))
    assert len(encoder_layers(model)) == 4
    frozen = set(freeze(model, ratio))  # floor(.6 * 4) = 2, as for .5
    names = {name for name, _ in model.named_parameters()}
    expected = {n for n in names if re.search(FROZEN[arch], n)}
    assert expected and frozen == expected
    assert {n for n, p in model.named_parameters() if not p.requires_grad} == expected
    assert any(re.search(r"layers?\.3\.", n) for n in names - frozen)


def test_no_freeze_ratio_trains_everything(tmp_path, tiny_models):
    model, _ = load_backbone(_config(tmp_path, "bert", tiny_models))
    assert freeze(model, 0.0) == [] and all(p.requires_grad for p in model.parameters())


@pytest.mark.parametrize(
    ("arch", "setup", "prompts"),
    [
        ("modernbert", "recommended", {"query": "search_query: ", "document": "search_document: "}),
        ("qwen2", "recommended", {"query": STELLA_QUERY, "document": ""}),
        ("qwen2", "generic", {"query": "query: ", "document": "document: "}),
    ],
)
def test_registered_prompts_on_tiny_weights(tmp_path, tiny_models, arch, setup, prompts):
    model, _ = load_backbone(_config(tmp_path, arch, tiny_models, setup))
    assert model.prompts == prompts and model.default_prompt_name is None


def test_a_config_weights_folder_is_checked_before_it_is_loaded(tmp_path, tiny_models):
    """``weights:`` in a training config is a model folder like any other: one that would load every word as
    [UNK] (no tokenizer files) is refused by name, not trained on."""
    import shutil

    from ratio_bench.core.errors import RatioError

    broken = tmp_path / "no-tokenizer"
    shutil.copytree(tiny_models["bert"], broken)
    (broken / "tokenizer.json").unlink()
    config = _config(tmp_path, "bert", {"bert": broken})
    with pytest.raises(RatioError, match="no tokenizer files"):
        load_backbone(config)
