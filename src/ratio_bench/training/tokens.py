"""Tokens for training: a maximum length read off the data, and every text tokenised once.

The plain trainer tokenises each batch again in every epoch; here each distinct text is tokenised once
(with its prompt, truncated to the chosen length) and the collator only pads. The features are the ones the
model's own ``preprocess`` would produce for the same batch (the tests check this), so nothing learned
changes. The maximum length is the configured percentile of the train texts' token counts, never above the
model's own limit; it applies to training only (the saved model keeps its inference length).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from sentence_transformers.sentence_transformer.data_collator import SentenceTransformerDataCollator


@dataclass(frozen=True)
class LengthChoice:
    value: int  # tokens, prompt and special tokens included
    percentile: float | None  # None: fixed in the config
    texts: int  # distinct train texts measured
    cut: int  # how many of them are longer than ``value`` (truncated in training)
    model_max: int | None

    def as_dict(self) -> dict[str, Any]:
        return {
            "value": self.value,
            "percentile": self.percentile,
            "texts": self.texts,
            "cut": self.cut,
            "model_max_seq_length": self.model_max,
        }


def token_counts(model, texts: Sequence[str], prompt: str) -> np.ndarray:
    """Untruncated token count of each text with its prompt (special tokens included)."""
    enc = model.tokenizer([prompt + t for t in texts], truncation=False, return_attention_mask=False)
    return np.array([len(ids) for ids in enc["input_ids"]], dtype=np.int64)


def choose_max_length(
    counts: np.ndarray, setting: int | str, percentile: float, model_max: int | None
) -> LengthChoice:
    """``setting`` tokens, or (``"auto"``) the ``percentile`` of ``counts`` rounded up, capped by the model."""
    if setting == "auto":
        value = int(np.ceil(np.percentile(counts, percentile)))
        chosen_percentile: float | None = percentile
    else:
        value, chosen_percentile = int(setting), None
    if model_max:
        value = min(value, model_max)
    return LengthChoice(value, chosen_percentile, int(len(counts)), int((counts > value).sum()), model_max)


class PretokenizedCollator(SentenceTransformerDataCollator):
    """Pads cached token ids; a text not in the cache (none in training) goes through ``preprocess``."""

    def __init__(self, model, prompts: dict[str, str], max_length: int, texts: dict[str, Sequence[str]]):
        super().__init__(preprocess_fn=model.preprocess, prompts=prompts, max_length=max_length)
        self.tokenizer = model.tokenizer
        self.cache: dict[str, dict[str, dict[str, list[int]]]] = {}
        self.extras: dict[str, dict[str, Any]] = {}
        for column, column_texts in texts.items():
            prompt = prompts.get(column, "")
            unique = list(dict.fromkeys(column_texts))
            enc = self.tokenizer(
                [prompt + t for t in unique], truncation="longest_first", max_length=max_length, padding=False
            )
            keys = list(enc.keys())
            self.cache[column] = {t: {k: enc[k][i] for k in keys} for i, t in enumerate(unique)}
            probe = model.preprocess(unique[:1], prompt=prompt or None, max_length=max_length)
            self.extras[column] = {k: v for k, v in probe.items() if k not in keys}

    def __call__(self, features: list[dict[str, Any]]) -> dict[str, Any]:
        columns = list(features[0].keys())
        if any(c not in self.cache or any(row[c] not in self.cache[c] for row in features) for c in columns):
            return super().__call__(features)
        batch: dict[str, Any] = {}
        for column in columns:
            padded = self.tokenizer.pad(
                [self.cache[column][row[column]] for row in features], return_tensors="pt"
            )
            for key, value in {**padded, **self.extras[column]}.items():
                batch[f"{column}_{key}"] = value
        return batch
