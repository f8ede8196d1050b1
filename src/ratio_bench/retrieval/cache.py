"""On-disk embedding cache keyed by model fingerprint, prompt and text fingerprint.

A partition's corpus is encoded once per model and prompt and reused by all three relations and every later
run; a changed model file, prompt or corpus text gives a different key, so a stale entry is never read.
Long lists are encoded in chunks, each saved as soon as it is done, so an interrupted encoding (a large model
on a CPU takes hours) resumes from its last chunk; the chunks are joined into one file at the end.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
from tqdm import tqdm

from ratio_bench.core.io import atomic_path

CHUNK_TEXTS = 4096


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


def _save(path: Path, vectors: np.ndarray) -> None:
    with atomic_path(path) as tmp, open(tmp, "wb") as fh:
        np.save(fh, vectors)


class EmbeddingCache:
    def __init__(self, root: Path | None = None, chunk_texts: int = CHUNK_TEXTS, progress: bool = True):
        self.root = Path(root) if root else default_cache_dir()
        self.chunk_texts = chunk_texts
        self.progress = progress
        self.hits = 0
        self.misses = 0  # text lists encoded (a chunked list counts once)
        self.chunks_resumed = 0

    def path(self, model_fp: str, prompt: str, texts_fp: str) -> Path:
        key = hashlib.sha256(f"{model_fp}\n{prompt}\n{texts_fp}".encode()).hexdigest()
        return self.root / key[:2] / f"{key}.npy"

    def get_or_encode(
        self,
        model_fp: str,
        prompt: str,
        ids: Sequence[str],
        texts: Sequence[str],
        encode: Callable[..., np.ndarray],
        label: str = "encoding",
        reports_progress: bool = False,
    ) -> np.ndarray:
        """Cached vectors of ``texts``, else encoded (in resumable chunks) under one bar titled ``label``.

        ``reports_progress``: ``encode`` takes a second argument, a callback it calls with the number of texts
        of each batch it finishes, so the bar moves per batch (a chunk of 4,096 texts takes minutes on a CPU);
        otherwise the bar moves per chunk."""
        path = self.path(model_fp, prompt, texts_fingerprint(ids, texts))
        if path.exists():
            self.hits += 1
            return np.load(path, mmap_mode="r")
        self.misses += 1
        bar = tqdm(
            total=len(texts),
            desc=label,
            unit=" texts",
            unit_scale=True,
            leave=False,
            disable=not self.progress,
        )
        if reports_progress:
            per_batch = encode

            def encode(chunk):  # the batches move the bar; the chunk's own update below is skipped
                return per_batch(chunk, bar.update)

        step = bar.update if not reports_progress else (lambda n: None)
        with bar:
            if len(texts) <= self.chunk_texts:
                vectors = np.asarray(encode(texts), dtype=np.float32)
                step(len(texts))
            else:
                vectors = self._encode_chunks(path.with_suffix(".parts"), texts, encode, bar, step)
        _save(path, vectors)
        shutil.rmtree(path.with_suffix(".parts"), ignore_errors=True)
        return vectors

    def _encode_chunks(self, parts: Path, texts: Sequence[str], encode, bar, step) -> np.ndarray:
        """Encode ``texts`` chunk by chunk, each saved as it finishes, so an interrupted run resumes."""
        chunks = []
        for start in range(0, len(texts), self.chunk_texts):
            part = parts / f"{start:010d}.npy"
            if part.exists():
                self.chunks_resumed += 1
                chunk = np.load(part)
                bar.update(len(chunk))  # resumed: no batch reported it
            else:
                chunk = np.asarray(encode(texts[start : start + self.chunk_texts]), dtype=np.float32)
                _save(part, chunk)
                step(len(chunk))
            chunks.append(chunk)
        return np.concatenate(chunks)
