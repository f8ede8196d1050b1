"""An entry's ``model_meta`` block: what the model is (size, dimension, context, licence, base model, training
cut-off) and what it cost to score (encode throughput and peak memory on a named hardware class).

The shape comes from the model as loaded for scoring (parameters counted from its tensors, the embedding size and
``max_seq_length`` sentence-transformers reports); licence and base model from the YAML front matter of the
model's card (``README.md``), parsed by ``huggingface_hub``'s ``ModelCard`` and, since a card is the submitter's
text, bounded and reduced to printable text; the cut-off is the one the entry already states. The measured
figures (texts encoded per second while scoring, the process's peak memory) depend on the machine, so each entry
names its ``hardware`` class (``cpu-<cores>core-<arch>`` or the GPU's name, never a host name) and the board
compares cost only within one class. Those figures vary from run to run; every other field of an entry is
reproducible.
"""

from __future__ import annotations

import math
import os
import platform
import re
import sys
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

from ratio_bench.core import extras

huggingface_hub = extras.lazy("huggingface_hub")

torch = extras.lazy("torch")

MAX_TEXT = 200  # a model_meta string (licence, base model, hardware) in an entry
MAX_CARD_BYTES = 1 << 20  # a card bigger than this is not parsed (its metadata is unknown)
_UNPRINTABLE = re.compile(r"[^\x20-\x7e\u00a0-\uffff]")


@dataclass(frozen=True)
class ModelMeta:
    """The ``model_meta`` block of a leaderboard entry; None: unknown (a BM25 model has no parameters)."""

    parameters: int | None = None
    embedding_dim: int | None = None
    max_tokens: int | None = None
    license: str | None = None
    base_model: str | None = None
    training_cutoff: str | None = None
    hardware: str | None = None
    throughput_texts_per_s: float | None = None
    peak_memory_mb: float | None = None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, doc: Any) -> ModelMeta:
        """An entry's block (validated by :func:`check_model_meta` first); unknown keys are ignored."""
        if not isinstance(doc, dict):
            return cls()
        return cls(**{f.name: doc.get(f.name) for f in fields(cls)})


@dataclass(frozen=True)
class EncodeStats:
    """What one scoring run's encoder did: texts encoded (cache misses only) and seconds spent encoding them."""

    texts: int = 0
    seconds: float = 0.0


def bounded_text(value: Any) -> str | None:
    """A card's value as an entry may carry it: printable, single-line, at most :data:`MAX_TEXT` characters; a
    list (a card may name several base models) is joined; anything else (a mapping, a number) is unknown."""
    if isinstance(value, (list, tuple)):
        value = ", ".join(str(v) for v in value if isinstance(v, str))
    if not isinstance(value, str):
        return None
    text = " ".join(_UNPRINTABLE.sub(" ", value).split())
    if not text:
        return None
    return text if len(text) <= MAX_TEXT else text[: MAX_TEXT - 3] + "..."


def card_facts(folder: str | Path | None) -> tuple[str | None, str | None]:
    """(licence, base model) from the front matter of ``folder/README.md``; (None, None) when there is no card,
    it is too big, or its YAML does not parse (a bad card costs the model its card facts, never its score)."""
    if folder is None:
        return None, None
    path = Path(folder) / "README.md"
    try:
        if not path.is_file() or path.stat().st_size > MAX_CARD_BYTES:
            return None, None
        text = path.read_text(encoding="utf-8", errors="replace")

        data = huggingface_hub.ModelCard(text, ignore_metadata_errors=True).data.to_dict()
    except Exception:  # noqa: BLE001 - the card is the submitter's text: any parse failure is "unknown"
        return None, None
    return bounded_text(data.get("license")), bounded_text(data.get("base_model"))


def model_shape(model: Any) -> tuple[int | None, int | None, int | None]:
    """(parameters, embedding dimension, max tokens) of a loaded sentence-transformers model."""
    parameters = sum(int(p.numel()) for p in model.parameters())
    dimension = getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension
    dim = dimension()
    max_tokens = getattr(model, "max_seq_length", None)
    return (
        parameters or None,
        int(dim) if isinstance(dim, int) else None,
        int(max_tokens) if isinstance(max_tokens, int) else None,
    )


def _uses_cuda(model: Any) -> bool:
    device = getattr(model, "device", None)
    return getattr(device, "type", None) == "cuda"


def hardware_class(model: Any = None) -> str:
    """The class the measured cost belongs to: the GPU's name when the model runs on one, else
    ``cpu-<cores this process may use>core-<architecture>`` (nothing that names the machine)."""
    if model is not None and _uses_cuda(model):
        return bounded_text(torch.cuda.get_device_name(model.device)) or "cuda"
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 0
    return f"cpu-{cores}core-{platform.machine() or 'unknown'}"


def reset_peak_memory() -> None:
    """Start a run's peak-memory measurement afresh (Linux: the resident high-water mark, via ``clear_refs``; the
    GPU's peak statistics when CUDA is in use), so that a second model scored in one process is measured alone."""
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
    except OSError:
        pass  # not Linux: getrusage's lifetime peak is what there is

    torch = sys.modules.get("torch")  # never imported here for a model that does not use it
    if torch is not None and torch.cuda.is_available() and torch.cuda.is_initialized():
        torch.cuda.reset_peak_memory_stats()


def _high_water_kib() -> int | None:
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        return None
    return None


def peak_memory_mb(model: Any = None) -> float | None:
    """The peak memory of scoring: the GPU's peak allocation when the model runs on one, else this process's
    peak resident set since :func:`reset_peak_memory` (Linux ``VmHWM``; elsewhere ``getrusage``'s lifetime peak,
    KiB on Linux, bytes on macOS)."""
    if model is not None and _uses_cuda(model):
        return round(torch.cuda.max_memory_allocated(model.device) / 2**20, 1)
    high = _high_water_kib()
    if high is not None:
        return round(high / 2**10, 1)
    try:
        import resource
    except ImportError:  # Windows
        return None
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return round(peak / (2**20 if platform.system() == "Darwin" else 2**10), 1)


def throughput(stats: EncodeStats | None) -> float | None:
    """Texts per second while encoding; None when nothing was encoded (every text came from the cache)."""
    if stats is None or stats.texts < 1 or stats.seconds <= 0:
        return None
    return round(stats.texts / stats.seconds, 2)


def measure(
    model: Any, stats: EncodeStats | None, folder: str | Path | None, cutoff: str | None
) -> ModelMeta:
    """The block for a run: ``model`` the loaded sentence-transformers model (None for a model without one, such
    as BM25), ``stats`` what its encoder did, ``folder`` its weights (for the card), ``cutoff`` the stated
    training-data cut-off (ISO date)."""
    parameters, dim, max_tokens = model_shape(model) if model is not None else (None, None, None)
    license_, base_model = card_facts(folder)
    return ModelMeta(
        parameters=parameters,
        embedding_dim=dim,
        max_tokens=max_tokens,
        license=license_,
        base_model=base_model,
        training_cutoff=cutoff,
        hardware=hardware_class(model),
        throughput_texts_per_s=throughput(stats) if model is not None else None,
        peak_memory_mb=peak_memory_mb(model),
    )


INTEGER_FIELDS = ("parameters", "embedding_dim", "max_tokens")
NUMBER_FIELDS = ("throughput_texts_per_s", "peak_memory_mb")
TEXT_FIELDS = ("license", "base_model", "training_cutoff", "hardware")


def check_model_meta(block: Any) -> str | None:
    """What is wrong with an (untrusted) entry's ``model_meta``, as ``field: reason``; None when it is sound.
    Beyond the schema: numbers finite and non-negative, texts bounded and printable."""
    if not isinstance(block, dict):
        return "expected an object"
    for name, value in block.items():
        if value is None:
            continue
        if name in INTEGER_FIELDS and (type(value) is not int or value < 0):
            return f"{name}: expected a non-negative integer or null"
        if name in NUMBER_FIELDS and (
            type(value) not in (int, float) or not math.isfinite(value) or value < 0
        ):
            return f"{name}: expected a finite non-negative number or null"
        if name in TEXT_FIELDS and (not isinstance(value, str) or bounded_text(value) != value):
            return f"{name}: expected printable text of at most {MAX_TEXT} characters or null"
        if name not in (*INTEGER_FIELDS, *NUMBER_FIELDS, *TEXT_FIELDS):
            return f"{name}: not a model_meta field"
    return None
