"""A sentence-transformers model as the dense encoder of every Ratio retriever, with a stable identity.

The identity (``fingerprint``) keys the embedding cache: for a model folder it is the folder's
:func:`~ratio_bench.retrieval.registry.fingerprint`; a model still in memory (training-time validation) is
wrapped with a fingerprint its caller chooses, which must change whenever the weights do (e.g. run id and step).
Batches are length-sorted by sentence-transformers' ``encode`` itself (longest texts first, original order
restored), so padding waste is already minimal and nothing is re-sorted here.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from ratio_bench.retrieval.registry import ModelSetup, check_model_folder, fingerprint

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer


class DenseEncoder:
    """Texts to L2-normalised float32 vectors, with an explicit prompt per call."""

    def __init__(self, model: SentenceTransformer, fingerprint: str, batch_size: int = 64):
        self.model = model
        self.fingerprint = fingerprint
        self.batch_size = batch_size
        self.texts_encoded, self.encode_seconds = 0, 0.0  # what encoding cost (the entry's model_meta)

    @classmethod
    def load(cls, setup: ModelSetup, batch_size: int = 64, device: str | None = None) -> DenseEncoder:
        """Load a resolved dense setup's weights (local files only; remote code only if the setup allows it)."""
        check_model_folder(setup.path, setup.trust_remote_code)  # before the import: a refusal is quick
        from sentence_transformers import SentenceTransformer

        model = SentenceTransformer(
            setup.path, device=device, trust_remote_code=setup.trust_remote_code, local_files_only=True
        )
        return cls(model, fingerprint(setup.path), batch_size)

    def encode(self, texts: Sequence[str], prompt: str) -> np.ndarray:
        """Vectors of ``texts`` with ``prompt`` prepended.

        The prompt is passed even when empty: ``None`` would let sentence-transformers fall back to the model's
        ``default_prompt_name``, and a setup named ``none`` must mean no prompt.
        """
        start = time.perf_counter()
        vectors = self.model.encode(
            list(texts),
            prompt=prompt,
            batch_size=self.batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        ).astype(np.float32, copy=False)
        self.texts_encoded += len(texts)
        self.encode_seconds += time.perf_counter() - start
        return vectors
