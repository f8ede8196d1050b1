"""Per-move query adapters: a small map per move applied to a frozen encoder's query vectors.

Documents are encoded by the base model alone, so one set of corpus vectors (one embedding-cache entry, one
index) serves every move; a move's queries are the base model's query vectors mapped by that move's map and
re-normalised. That is the smallest artefact that makes a frozen model move-aware: 384 x 384 floats per move for
all-MiniLM-L6-v2, shipped in the wheel (``training/adapters/``) and trained by ``ratio train adapters``.

A map is linear, ``W q + b``, or linear plus a residual one-hidden-layer part, ``W q + b + U relu(V q + c)``: the
move's bias is a direction every query of the move is pushed towards (what an approach, a generalisation or an
example sentence looks like), and the hidden part lets that push depend on the query.

The file is safetensors (no pickle, a header checked before any tensor is read, and written byte-identically for
identical tensors): ``W.<move>`` (d, d) and ``b.<move>`` (d,) per adapted move, optionally ``V.<move>`` (h, d),
``c.<move>`` (h,) and ``U.<move>`` (d, h), and metadata naming the base model and the format. A move without a map
is the base model unchanged (validation may choose that).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from safetensors import SafetensorError, safe_open

from ratio_bench.core.errors import RatioError
from ratio_bench.core.io import atomic_path

FORMAT = "ratio-query-adapters/1"
MAX_DIM = 8192  # a map larger than this is not an adapter of any encoder we know: refuse it before reading


class AdapterError(RatioError, ValueError):
    """A query-adapter file that cannot be used (missing, damaged, or for another model)."""


@dataclass(frozen=True)
class QueryAdapters:
    """Each adapted move's map: ``q' = normalise(W q + b)``."""

    base: str  # the base model's registered name, e.g. "all-MiniLM-L6-v2"
    dim: int
    weights: dict[str, np.ndarray] = field(default_factory=dict)  # move -> W (dim, dim)
    biases: dict[str, np.ndarray] = field(default_factory=dict)  # move -> b (dim,)
    sha256: str = ""  # the file's bytes: an index records it, a search checks it
    # move -> (V (h, dim), c (h,), U (dim, h)): the residual hidden part of a non-linear map; none: linear
    hidden: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]] = field(default_factory=dict)

    @property
    def moves(self) -> tuple[str, ...]:
        return tuple(sorted(self.weights))

    def apply(self, move: str, vectors: np.ndarray) -> np.ndarray:
        """``vectors`` (n, dim), L2-normalised, mapped for ``move`` (unchanged for a move without a map)."""
        if move not in self.weights:
            return np.asarray(vectors, dtype=np.float32)
        vectors = np.asarray(vectors, dtype=np.float32)
        mapped = vectors @ self.weights[move].T + self.biases[move]
        if move in self.hidden:
            v, c, u = self.hidden[move]
            mapped = mapped + np.maximum(vectors @ v.T + c, 0.0) @ u.T
        norms = np.linalg.norm(mapped, axis=1, keepdims=True)
        return (mapped / np.maximum(norms, 1e-12)).astype(np.float32, copy=False)

    def save(self, path: str | Path, extra: dict[str, str] | None = None) -> None:
        """Write the adapters as safetensors (atomic; identical tensors and metadata give identical bytes)."""

        tensors = {}
        for move in self.moves:
            tensors[f"W.{move}"] = self.weights[move]
            tensors[f"b.{move}"] = self.biases[move]
            if move in self.hidden:
                tensors[f"V.{move}"], tensors[f"c.{move}"], tensors[f"U.{move}"] = self.hidden[move]
        metadata = {"format": FORMAT, "base": self.base, **(extra or {})}
        with atomic_path(Path(path)) as tmp:
            Path(tmp).write_bytes(safetensors_bytes(tensors, metadata))

    @classmethod
    def load(cls, path: str | Path, moves: tuple[str, ...] | None = None) -> QueryAdapters:
        """Read and check an adapter file: the format, square finite maps of one size, moves known."""

        path = Path(path)
        try:
            data = path.read_bytes()
            with safe_open(str(path), framework="np") as fh:
                metadata = fh.metadata() or {}
                tensors = {k: fh.get_tensor(k) for k in fh.keys()}  # noqa: SIM118 (safe_open is not a dict)
        except (OSError, SafetensorError) as e:
            raise AdapterError(f"{path}: unreadable query adapters ({e}); reinstall or retrain them") from e
        if metadata.get("format") != FORMAT:
            raise AdapterError(f"{path}: metadata format is {metadata.get('format')!r}, expected {FORMAT!r}")
        weights, biases, hidden = _maps(path, tensors, moves)
        dim = next(iter(weights.values())).shape[0] if weights else 0
        return cls(metadata.get("base", ""), dim, weights, biases, hashlib.sha256(data).hexdigest(), hidden)


def safetensors_bytes(tensors: dict[str, np.ndarray], metadata: dict[str, str]) -> bytes:
    """float32 ``tensors`` in the safetensors layout (8-byte header length, JSON header, data) with the header's
    keys sorted: the safetensors library writes its metadata from a hash map, in an order that varies by run."""
    header: dict[str, object] = {"__metadata__": dict(sorted(metadata.items()))}
    blobs, offset = [], 0
    for name in sorted(tensors):
        blob = np.ascontiguousarray(tensors[name], dtype="<f4").tobytes()
        header[name] = {
            "dtype": "F32",
            "shape": list(tensors[name].shape),
            "data_offsets": [offset, offset + len(blob)],
        }
        blobs.append(blob)
        offset += len(blob)
    text = json.dumps(header, separators=(",", ":"), sort_keys=True).encode()
    text += b" " * (-len(text) % 8)  # the data starts 8-byte aligned
    return len(text).to_bytes(8, "little") + text + b"".join(blobs)


def _maps(path: Path, tensors: dict[str, np.ndarray], moves: tuple[str, ...] | None):
    """The (W, b) and hidden (V, c, U) of each move in ``tensors``, each checked (a bad file names its tensor and
    is refused)."""
    parts: dict[str, dict[str, np.ndarray]] = {k: {} for k in "WbVcU"}
    dims = set()
    for key, value in tensors.items():
        kind, _, move = key.partition(".")
        if kind not in parts or (moves is not None and move not in moves):
            raise AdapterError(
                f"{path}: unexpected tensor {key!r}; expected W.<move> and b.<move> (and V, c, U.<move>)"
            )
        if not np.isfinite(value).all():
            raise AdapterError(f"{path}: tensor {key!r} is not finite")
        parts[kind][move] = value.astype(np.float32)
    weights, biases = parts["W"], parts["b"]
    for move, w in weights.items():
        if w.ndim != 2 or w.shape[0] != w.shape[1] or w.shape[0] > MAX_DIM:
            raise AdapterError(f"{path}: W.{move} must be square (at most {MAX_DIM}), not {w.shape}")
        if biases.get(move, np.empty(0)).shape != (w.shape[0],):
            raise AdapterError(f"{path}: b.{move} must have shape ({w.shape[0]},)")
        dims.add(w.shape[0])
    if len(dims) > 1 or set(biases) - set(weights):
        raise AdapterError(f"{path}: every move needs a W and a b of one size")
    return weights, biases, _hidden(path, parts, weights)


def _hidden(path: Path, parts: dict[str, dict[str, np.ndarray]], weights: dict[str, np.ndarray]):
    """Each move's residual hidden part (V, c, U), all three or none, shaped to fit its W."""
    hidden = {}
    for move in sorted(set(parts["V"]) | set(parts["c"]) | set(parts["U"])):
        v, c, u = (parts[k].get(move) for k in "VcU")
        dim = weights[move].shape[0] if move in weights else -1
        h = v.shape[0] if v is not None and v.ndim == 2 else -1
        if (
            v is None
            or c is None
            or u is None
            or dim < 0
            or not 0 < h <= MAX_DIM
            or v.shape != (h, dim)
            or c.shape != (h,)
            or u.shape != (dim, h)
        ):
            raise AdapterError(
                f"{path}: V.{move}, c.{move} and U.{move} must have shapes (h, d), (h,) and (d, h) for W.{move}"
            )
        hidden[move] = (v, c, u)
    return hidden
