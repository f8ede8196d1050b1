"""Tokenised once: the collator's features equal the model's own preprocessing; the length choice."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from sentence_transformers import SentenceTransformer
from sentence_transformers.sentence_transformer.data_collator import SentenceTransformerDataCollator

from ratio_bench.training.tokens import PretokenizedCollator, choose_max_length, token_counts

TEXTS = {
    "query": ["a short query.", "a much longer query " * 12, "mid length query about kernels."],
    "document": ["the gold.", "another gold sentence with more words in it.", "gold " * 40],
}
PROMPTS = {"query": "query: ", "document": "document: "}


@pytest.mark.parametrize("arch", ["bert", "modernbert", "qwen2"])
@pytest.mark.parametrize("max_length", [12, 64])
def test_collator_matches_preprocess(tiny_models, arch, max_length):
    model = SentenceTransformer(str(tiny_models[arch]), device="cpu")
    rows = [dict(zip(TEXTS, values, strict=True)) for values in zip(*TEXTS.values(), strict=True)]
    ours = PretokenizedCollator(model, PROMPTS, max_length, TEXTS)(rows)
    plain = SentenceTransformerDataCollator(model.preprocess, prompts=PROMPTS, max_length=max_length)(rows)
    assert ours.keys() == plain.keys()
    for key, value in plain.items():
        if isinstance(value, torch.Tensor):
            assert torch.equal(ours[key], value), key
        else:
            assert ours[key] == value, key
    assert ours["query_input_ids"].shape[1] <= max_length


def test_token_counts_include_prompt_and_special_tokens(tiny_models):
    model = SentenceTransformer(str(tiny_models["bert"]), device="cpu")
    plain, prompted = (
        token_counts(model, ["one two three"], ""),
        token_counts(model, ["one two three"], "query: "),
    )
    assert plain[0] == 5 and prompted[0] == 7  # [CLS] one two three [SEP]; "query", ":" added


def test_max_length_from_percentile_capped_by_model():
    counts = np.arange(1, 1001)
    choice = choose_max_length(counts, "auto", 99.0, model_max=2048)
    assert choice.value == int(np.ceil(np.percentile(counts, 99.0))) == 991
    assert choice.cut == int((counts > choice.value).sum()) and choice.percentile == 99.0
    capped = choose_max_length(counts, "auto", 99.0, model_max=256)
    assert capped.value == 256 and capped.cut == 1000 - 256
    fixed = choose_max_length(counts, 100, 99.9, model_max=512)
    assert fixed.value == 100 and fixed.percentile is None and fixed.cut == 900
