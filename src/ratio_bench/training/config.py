"""Training setups (``training/*.yaml``): one backbone, prompt setup and relation with its trials (spec Table 7).

Every key is checked up front; an unknown one is refused with the nearest valid name, so a typo never trains
with a silently ignored setting. Table 7's "-" means the library default: no weight decay, no warmup, gradient
norm clipped at 1.0, nothing frozen.
"""

from __future__ import annotations

import difflib
import hashlib
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import yaml

from ratio_bench.core.config import closest
from ratio_bench.core.errors import RatioError
from ratio_bench.core.relations import RELATIONS
from ratio_bench.core.yamlio import load_yaml
from ratio_bench.retrieval.kinds import embeds
from ratio_bench.retrieval.registry import REGISTRY


class TrainingConfigError(RatioError, ValueError):
    """A training config that cannot be used; the message names the file and the field."""


HARD_NEGATIVES = ("none", "bm25", "distractors")
# A unified model's defaults (training/unified.py): here, so that validating a config never imports torch.
DEFAULT_TEMPERATURE = 3.0
NEGATIVES = ("within", "across")


def default_instructions(relations: Sequence[str]) -> dict[str, str]:
    return {r: f"{r}: " for r in relations}


@dataclass(frozen=True)
class Trial:
    epochs: int
    batch_size: int
    learning_rate: float
    weight_decay: float = 0.0
    warmup_ratio: float = 0.0
    max_grad_norm: float = 1.0
    freeze_ratio: float = 0.0
    mini_batch_size: int | None = None  # set: CachedMultipleNegativesRankingLoss with this forward chunk
    rationale: str = ""

    def settings(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class TrainingConfig:
    path: Path
    backbone: str  # a registered model name (ratio models) or a local sentence-transformers folder
    setup: str  # prompt setup: generic, recommended, none
    relation: str  # one of RELATIONS, or "all" (a unified model; see training/unified.py)
    trials: list[Trial]
    weights: Path | None = None  # a folder with the backbone's weights, overriding the registry's location
    seed: int = 13
    max_train_pairs: int | None = None  # a seeded sample of the train pairs (dev configs say why)
    # smoke runs only: {"queries": N per relation, "candidates": M or absent (the whole pool)}, seeded by seed
    validation_sample: dict[str, int] | None = None
    max_seq_length: int | str = "auto"  # "auto": the length_percentile of the train texts' token counts
    length_percentile: float = 99.9
    length_grouping: bool = True
    pretokenize: bool = True
    hard_negatives: str = "none"
    gather_across_devices: bool = True
    bf16: bool = False  # bf16 autocast where a GPU supports it (training/precision.py); fp32 elsewhere
    tf32: bool = False  # TF32 matmuls on Ampere or newer GPUs
    eval_batch_size: int = 64
    description: str = ""
    scaling: str = ""
    relations: tuple[str, ...] = ()  # unified only: the relations trained (default all three)
    instructions: dict[str, str] = field(default_factory=dict)  # unified only: relation -> query prompt
    temperature: float = 3.0  # unified only: p_r proportional to n_r^(1/T)
    negatives: str = "within"  # unified only: in-batch negatives within one relation or across relations
    raw: dict[str, Any] = field(default_factory=dict, repr=False)

    @property
    def unified(self) -> bool:
        return self.relation == "all"

    @property
    def name(self) -> str:
        return self.path.stem

    def sha256(self) -> str:
        """Identity of what the config asks for (its parsed content, not its comments or layout)."""
        return hashlib.sha256(yaml.safe_dump(self.raw, sort_keys=True).encode()).hexdigest()


_TOP_KEYS = {f for f in TrainingConfig.__dataclass_fields__ if f not in ("path", "raw")}
_TRIAL_KEYS = set(Trial.__dataclass_fields__)


def _unknown(keys: set[str], valid: set[str], where: str) -> None:
    for key in sorted(keys - valid):
        near = closest(key, sorted(valid))
        hint = f"; did you mean {near!r}?" if near else f"; valid fields: {', '.join(sorted(valid))}"
        raise TrainingConfigError(f"{where}: unknown field {key!r}{hint}")


def _typed(value: Any, kind: type | tuple[type, ...], where: str, minimum: float | None = None) -> Any:
    if isinstance(value, bool) and kind is not bool:
        ok = False
    elif kind is float:
        ok = isinstance(value, (int, float))
    else:
        ok = isinstance(value, kind)
    if not ok:
        names = kind.__name__ if isinstance(kind, type) else " or ".join(k.__name__ for k in kind)
        raise TrainingConfigError(f"{where}: expected {names}, got {value!r}")
    if minimum is not None and value < minimum:
        raise TrainingConfigError(f"{where}: must be at least {minimum}, got {value!r}")
    return float(value) if kind is float else value


def _trial(raw: Any, where: str) -> Trial:
    if not isinstance(raw, dict):
        raise TrainingConfigError(f"{where}: a trial is a mapping of settings, got {raw!r}")
    _unknown(set(raw), _TRIAL_KEYS, where)
    for key in ("epochs", "batch_size", "learning_rate"):
        if key not in raw:
            raise TrainingConfigError(f"{where}: missing field {key!r}")
    trial = Trial(
        epochs=_typed(raw["epochs"], int, f"{where}.epochs", 1),
        batch_size=_typed(raw["batch_size"], int, f"{where}.batch_size", 2),
        learning_rate=_typed(raw["learning_rate"], float, f"{where}.learning_rate", 0),
        weight_decay=_typed(raw.get("weight_decay", 0.0), float, f"{where}.weight_decay", 0),
        warmup_ratio=_typed(raw.get("warmup_ratio", 0.0), float, f"{where}.warmup_ratio", 0),
        max_grad_norm=_typed(raw.get("max_grad_norm", 1.0), float, f"{where}.max_grad_norm", 0),
        freeze_ratio=_typed(raw.get("freeze_ratio", 0.0), float, f"{where}.freeze_ratio", 0),
        mini_batch_size=(
            None
            if raw.get("mini_batch_size") is None
            else _typed(raw["mini_batch_size"], int, f"{where}.mini_batch_size", 1)
        ),
        rationale=str(raw.get("rationale", "")),
    )
    if trial.warmup_ratio >= 1:
        raise TrainingConfigError(
            f"{where}.warmup_ratio: a share of the steps below 1, got {trial.warmup_ratio}"
        )
    if trial.freeze_ratio > 1:
        raise TrainingConfigError(f"{where}.freeze_ratio: a share between 0 and 1, got {trial.freeze_ratio}")
    return trial


def load_config(path: str | Path) -> TrainingConfig:
    """Read and validate one training config."""
    path = Path(path)
    try:
        raw = load_yaml(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise TrainingConfigError(f"{path}: config file not found (--config)") from None
    except yaml.YAMLError as exc:
        raise TrainingConfigError(f"{path}: not valid YAML ({exc})") from None
    if not isinstance(raw, dict):
        raise TrainingConfigError(f"{path}: expected a mapping of fields at the top level")
    _unknown(set(raw), _TOP_KEYS, str(path))
    for key in ("backbone", "setup", "relation", "trials"):
        if key not in raw:
            raise TrainingConfigError(f"{path}: missing field {key!r}")
    relation = raw["relation"]
    if relation not in (*RELATIONS, "all"):
        raise TrainingConfigError(
            f"{path}: relation: one of {', '.join(RELATIONS)} or all (one model for every move), "
            f"not {relation!r}"
        )
    unified = _unified_fields(raw, path, relation)
    if not isinstance(raw["trials"], list) or not raw["trials"]:
        raise TrainingConfigError(f"{path}: trials: a non-empty list of trial settings")
    trials = [_trial(t, f"{path}: trials[{i}]") for i, t in enumerate(raw["trials"])]
    hard = raw.get("hard_negatives", "none")
    if hard not in HARD_NEGATIVES:
        raise TrainingConfigError(f"{path}: hard_negatives: one of {', '.join(HARD_NEGATIVES)}, not {hard!r}")
    msl = raw.get("max_seq_length", "auto")
    if msl != "auto":
        _typed(msl, int, f"{path}: max_seq_length (an integer or 'auto')", 8)
    percentile = _typed(raw.get("length_percentile", 99.9), float, f"{path}: length_percentile", 50)
    if percentile > 100:
        raise TrainingConfigError(f"{path}: length_percentile: at most 100, got {percentile}")
    cap = raw.get("max_train_pairs")
    config = TrainingConfig(
        validation_sample=_validation_sample(raw.get("validation_sample"), f"{path}: validation_sample"),
        path=path,
        backbone=_typed(raw["backbone"], str, f"{path}: backbone"),
        setup=_typed(raw["setup"], str, f"{path}: setup"),
        relation=relation,
        trials=trials,
        weights=Path(raw["weights"]) if raw.get("weights") else None,
        seed=_typed(raw.get("seed", 13), int, f"{path}: seed"),
        max_train_pairs=None if cap is None else _typed(cap, int, f"{path}: max_train_pairs", 2),
        max_seq_length=msl,
        length_percentile=percentile,
        length_grouping=_typed(raw.get("length_grouping", True), bool, f"{path}: length_grouping"),
        pretokenize=_typed(raw.get("pretokenize", True), bool, f"{path}: pretokenize"),
        hard_negatives=hard,
        gather_across_devices=_typed(
            raw.get("gather_across_devices", True), bool, f"{path}: gather_across_devices"
        ),
        bf16=_typed(raw.get("bf16", False), bool, f"{path}: bf16"),
        tf32=_typed(raw.get("tf32", False), bool, f"{path}: tf32"),
        eval_batch_size=_typed(raw.get("eval_batch_size", 64), int, f"{path}: eval_batch_size", 1),
        description=str(raw.get("description", "")),
        scaling=str(raw.get("scaling", "")),
        **unified,
        raw=raw,
    )
    check_backbone(config)
    return config


def _validation_sample(raw: Any, where: str) -> dict[str, int] | None:
    """``{queries: N, candidates: M}`` (M optional: the whole pool). For smoke runs: validating on a sample
    makes a run fast but its selection noisy, and a sampled pool makes every query easier."""
    if raw is None:
        return None
    if not isinstance(raw, dict) or "queries" not in raw:
        raise TrainingConfigError(
            f"{where}: a mapping like {{queries: 200, candidates: 5000}} (candidates optional), not {raw!r}"
        )
    _unknown(set(raw), {"queries", "candidates"}, where)
    return {
        key: _typed(raw[key], int, f"{where}.{key}", 1) for key in ("queries", "candidates") if key in raw
    }


def _unified_fields(raw: dict[str, Any], path: Path, relation: str) -> dict[str, Any]:
    """Validate the fields of a unified config (``relation: all``); refuse them on a specialist one."""

    keys = ("relations", "instructions", "temperature", "negatives")
    if relation != "all":
        for key in keys:
            if key in raw:
                raise TrainingConfigError(f"{path}: {key}: only for a unified config (relation: all)")
        return {}
    relations = raw.get("relations", list(RELATIONS))
    if (
        not isinstance(relations, list)
        or len(relations) < 2
        or any(r not in RELATIONS for r in relations)
        or len(set(relations)) != len(relations)
    ):
        raise TrainingConfigError(f"{path}: relations: two or more distinct of {', '.join(RELATIONS)}")
    instructions = {**default_instructions(relations), **(raw.get("instructions") or {})}
    extra = set(instructions) - set(relations)
    if extra or not all(isinstance(v, str) for v in instructions.values()):
        raise TrainingConfigError(
            f"{path}: instructions: a mapping of {', '.join(relations)} to query prompts (strings)"
            + (f"; {', '.join(sorted(extra))} is not trained" if extra else "")
        )
    negatives = raw.get("negatives", "within")
    if negatives not in NEGATIVES:
        raise TrainingConfigError(f"{path}: negatives: one of {', '.join(NEGATIVES)}, not {negatives!r}")
    if raw.get("hard_negatives", "none") != "none":
        raise TrainingConfigError(f"{path}: hard_negatives: not supported with relation: all; use none")
    temperature = _typed(raw.get("temperature", DEFAULT_TEMPERATURE), float, f"{path}: temperature", 0)
    if temperature <= 0:
        raise TrainingConfigError(f"{path}: temperature: must be above 0, got {temperature}")
    return {
        "relations": tuple(relations),
        "instructions": {r: instructions[r] for r in relations},
        "temperature": temperature,
        "negatives": negatives,
    }


def check_backbone(config: TrainingConfig) -> None:
    """Refuse an unknown backbone or prompt setup now, not after the data is loaded."""

    entry = REGISTRY.get(config.backbone)
    if entry is None:
        if Path(config.backbone).is_dir():
            if config.setup not in ("none", "generic"):
                raise TrainingConfigError(
                    f"{config.path}: setup: a local backbone folder takes 'none' or 'generic', "
                    f"not {config.setup!r}"
                )
            return
        dense = sorted(n for n, e in REGISTRY.items() if embeds(e.kind))
        near = difflib.get_close_matches(config.backbone, dense, n=1, cutoff=0.4)
        hint = f"did you mean {near[0]!r}? " if near else ""
        raise TrainingConfigError(
            f"{config.path}: backbone: unknown model {config.backbone!r}; {hint}"
            f"registered dense models: {', '.join(dense)} (or a local sentence-transformers folder)"
        )
    if not embeds(entry.kind):
        raise TrainingConfigError(f"{config.path}: backbone: {config.backbone} is not a dense model")
    if config.setup not in entry.setups:
        raise TrainingConfigError(
            f"{config.path}: setup: {config.backbone} has setups {', '.join(entry.setups)}, "
            f"not {config.setup!r}"
        )


# shipped training subfolders that hold no fine-tuning configs (``train all --dir`` refuses and never lists them)
NOT_FINE_TUNING = {
    "adapters": "that shipped folder holds query-adapter configs, not fine-tuning ones; train one with "
    "`ratio train adapters --config adapters/<name>`",
}


def config_files(folder: str | Path) -> list[Path]:
    """The configs of a folder (``train-all --dir``), in name order."""
    folder = Path(folder)
    if not folder.is_dir():
        raise TrainingConfigError(f"{folder}: no such folder of training configs (--dir)")
    files = sorted(folder.glob("*.yaml"))
    if not files:
        raise TrainingConfigError(f"{folder}: no *.yaml training configs in this folder (--dir)")
    return files
