"""A sentence-transformers model as the dense encoder of every Ratio retriever, with a stable identity.

The identity (``fingerprint``) keys the embedding cache: for a model folder it is the folder's
:func:`~ratio_bench.retrieval.registry.fingerprint`; a model still in memory (training-time validation) is
wrapped with a fingerprint its caller chooses, which must change whenever the weights do (e.g. run id and step).
Batches are length-sorted by sentence-transformers' ``encode`` itself (longest texts first, original order
restored), so padding waste is already minimal and nothing is re-sorted here.

The scorer chooses how weights are loaded, never the model folder: float32 (:data:`PRECISION`, which entries
record), no device map, offload folder, quantization or attention choice from the folder's configs (it is
loaded through :func:`~ratio_bench.retrieval.model_folder.loading_view`). An asymmetric model (a ``Router`` with a
query and a document route) encodes queries with its query route and documents with its document route. What
comes out is checked: non-finite values, a dimension other than the model's, or one vector for every text
(weights that carry no information) is an :class:`EncodingError`, never a score.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import numpy as np

from ratio_bench.core import extras
from ratio_bench.core.errors import RatioError
from ratio_bench.retrieval.model_folder import check_model_folder, is_routed, loading_view
from ratio_bench.retrieval.registry import ModelSetup, fingerprint

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer


torch = extras.lazy("torch")
sentence_transformers = extras.lazy("sentence_transformers")

PRECISION = "float32"  # the weights' dtype of every dense model we score, whatever its folder asks for
Role = Literal["query", "document"]


class EncodingError(RatioError):
    """Vectors no score can come from (non-finite, of the wrong dimension, or all the same)."""


class DenseEncoder:
    """Texts to L2-normalised float32 vectors, with an explicit prompt per call (and, for a routed model, the
    route of the texts' role)."""

    def __init__(
        self, model: SentenceTransformer, fingerprint: str, batch_size: int = 64, routed: bool = False
    ):
        self.model = model
        self.fingerprint = fingerprint
        self.batch_size = batch_size
        self.routed = routed
        self.dimension = model.get_embedding_dimension()
        self.texts_encoded, self.encode_seconds = 0, 0.0  # what encoding cost (the entry's model_meta)

    @classmethod
    def load(cls, setup: ModelSetup, batch_size: int = 64, device: str | None = None) -> DenseEncoder:
        """Load a resolved dense setup's weights (local files only; remote code only if the setup allows it)."""
        check_model_folder(setup.path, setup.trust_remote_code)  # before the import: a refusal is quick

        with tempfile.TemporaryDirectory(prefix="ratio-model-") as view:
            model = sentence_transformers.SentenceTransformer(
                str(loading_view(setup.path, Path(view))),
                device=device,
                trust_remote_code=setup.trust_remote_code,
                local_files_only=True,
                model_kwargs={"dtype": getattr(torch, PRECISION)},
            )
        return cls(model, fingerprint(setup.path), batch_size, routed=is_routed(setup.path))

    def cache_id(self, role: Role) -> str:
        """What keys this encoder's vectors in the embedding cache: a routed model's two routes differ."""
        return f"{self.fingerprint}:{role}" if self.routed else self.fingerprint

    def encode(
        self,
        texts: Sequence[str],
        prompt: str,
        role: Role = "document",
        progress: Callable[[int], object] | None = None,
    ) -> np.ndarray:
        """Vectors of ``texts`` with ``prompt`` prepended, through the route of ``role`` for a routed model;
        ``progress(n)`` after each batch of ``n`` texts.

        The prompt is passed even when empty: ``None`` would let sentence-transformers fall back to the model's
        ``default_prompt_name``, and a setup named ``none`` must mean no prompt. With ``progress``, the texts
        are cut into batches here, longest first as sentence-transformers would (so padding stays minimal), and
        each batch is encoded on its own so that a progress bar can move per batch.
        """
        began = time.perf_counter()
        texts = list(texts)
        if progress is None or not texts:
            vectors = self._encode(texts, prompt, role)
        else:
            order = sorted(range(len(texts)), key=lambda i: -len(texts[i]))
            parts = []
            for first in range(0, len(order), self.batch_size):
                batch = [texts[i] for i in order[first : first + self.batch_size]]
                parts.append(self._encode(batch, prompt, role))
                progress(len(batch))
            vectors = np.empty((len(texts), parts[0].shape[1]), dtype=np.float32)
            vectors[order] = np.concatenate(parts)
        self._check(texts, vectors, role)
        self.texts_encoded += len(texts)
        self.encode_seconds += time.perf_counter() - began
        return vectors

    def _encode(self, texts: list[str], prompt: str, role: Role) -> np.ndarray:
        return self.model.encode(
            texts,
            prompt=prompt,
            batch_size=self.batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
            **({"task": role} if self.routed else {}),
        ).astype(np.float32, copy=False)

    def _check(self, texts: Sequence[str], vectors: np.ndarray, role: Role) -> None:
        """Refuse vectors no ranking can come from, naming what is wrong with them."""
        if vectors.ndim != 2 or len(vectors) != len(texts):
            raise EncodingError(f"{role} embeddings of shape {vectors.shape} for {len(texts)} texts")
        if not np.isfinite(vectors).all():
            bad = int((~np.isfinite(vectors)).any(axis=1).sum())
            raise EncodingError(
                f"non-finite embeddings: {bad:,} of {len(texts):,} {role} vectors hold NaN or infinity "
                "(weights with NaN or infinite values?)"
            )
        if self.dimension is not None and vectors.shape[1] != self.dimension:
            raise EncodingError(
                f"{role} embeddings have {vectors.shape[1]} dimensions; the model states {self.dimension}"
            )
        if len(set(texts)) > 1 and not np.ptp(vectors, axis=0).any():
            raise EncodingError(
                f"constant embeddings: every one of {len(texts):,} {role} texts gets one vector"
            )
