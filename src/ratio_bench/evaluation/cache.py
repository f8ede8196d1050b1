"""On-disk embedding cache keyed by model fingerprint, prompt and text fingerprint.

A partition's corpus is encoded once per model and prompt and reused by all three relations and every later
run; a changed model file, prompt or corpus text gives a different key, so a stale entry is never read.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from ratio_bench.io import atomic_path


def default_cache_dir() -> Path:
    return Path(os.environ.get("RATIO_CACHE", Path.home() / ".cache" / "ratio")) / "embeddings"


def texts_fingerprint(ids: Sequence[str], texts: Sequence[str]) -> str:
    h = hashlib.sha256()
    for i, t in zip(ids, texts, strict=True):
        h.update(i.encode())
        h.update(b"\0")
        h.update(t.encode())
        h.update(b"\n")
    return h.hexdigest()


class EmbeddingCache:
    def __init__(self, root: Path | None = None):
        self.root = Path(root) if root else default_cache_dir()
        self.hits = 0
        self.misses = 0

    def path(self, model_fp: str, prompt: str, texts_fp: str) -> Path:
        key = hashlib.sha256(f"{model_fp}\n{prompt}\n{texts_fp}".encode()).hexdigest()
        return self.root / key[:2] / f"{key}.npy"

    def get_or_encode(
        self,
        model_fp: str,
        prompt: str,
        ids: Sequence[str],
        texts: Sequence[str],
        encode: Callable[[Sequence[str]], np.ndarray],
    ) -> np.ndarray:
        path = self.path(model_fp, prompt, texts_fingerprint(ids, texts))
        if path.exists():
            self.hits += 1
            return np.load(path, mmap_mode="r")
        self.misses += 1
        vectors = np.asarray(encode(texts), dtype=np.float32)
        with atomic_path(path) as tmp, open(tmp, "wb") as fh:
            np.save(fh, vectors)
        return vectors
