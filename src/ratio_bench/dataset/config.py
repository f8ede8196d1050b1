"""Release build configuration (``dataset_scripts/*.yaml``), validated up front with errors that name the field."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from ratio_bench.errors import RatioError
from ratio_bench.lexicon import RELATIONS

PARTITIONS = ("train", "validation", "test")


class ConfigError(RatioError, ValueError):
    """A build configuration that cannot be used; the message names the file and the field."""


@dataclass(frozen=True)
class Split:
    name: str
    start: dt.date | None
    end: dt.date | None


@dataclass(frozen=True)
class Sampling:
    max_queries: dict[str, int | None] = field(default_factory=dict)
    distractors_per_gold: float | None = None


@dataclass(frozen=True)
class BuildConfig:
    path: Path
    name: str
    version: str
    license: str
    corpus: list[Path]
    lexicon: Path
    work_dir: Path
    seed: int
    splits: list[Split]
    straddle: str
    unknown: str
    mode: str
    sampling: dict[str, Sampling]
    raw: dict[str, Any]

    def partition(self, name: str) -> Split:
        return next(s for s in self.splits if s.name == name)


def _date(value: Any, where: str) -> dt.date | None:
    if value is None:
        return None
    if isinstance(value, dt.date):
        return value
    try:
        return dt.date.fromisoformat(str(value))
    except ValueError:
        raise ConfigError(f"{where}: not an ISO date: {value!r}") from None


def load_config(path: str | Path, root: Path | None = None) -> BuildConfig:
    """Load and validate a build config; relative paths are resolved against ``root`` (default: the cwd)."""
    path = Path(path)
    root = root or Path.cwd()
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except FileNotFoundError:
        raise ConfigError(f"{path}: config file not found") from None

    def need(key: str) -> Any:
        if key not in raw:
            raise ConfigError(f"{path}: missing field {key!r}")
        return raw[key]

    release = need("release")
    splits_raw = need("splits")
    if set(splits_raw) != set(PARTITIONS):
        raise ConfigError(
            f"{path}: field 'splits' must define exactly {PARTITIONS}, got {sorted(splits_raw)}"
        )
    splits = []
    for name in PARTITIONS:
        spec = splits_raw[name] or {}
        s = Split(
            name,
            _date(spec.get("start"), f"{path}: splits.{name}.start"),
            _date(spec.get("end"), f"{path}: splits.{name}.end"),
        )
        if s.start and s.end and s.start > s.end:
            raise ConfigError(f"{path}: splits.{name}: start {s.start} is after end {s.end}")
        splits.append(s)
    for a, b in zip(splits, splits[1:], strict=False):
        if a.end is None or b.start is None or a.end >= b.start:
            raise ConfigError(
                f"{path}: splits.{a.name} and splits.{b.name} overlap or are unbounded between them "
                f"({a.name}.end={a.end}, {b.name}.start={b.start})"
            )
    policy = raw.get("date_policy", {}) or {}
    straddle, unknown = policy.get("straddle", "drop"), policy.get("unknown", "drop")
    if straddle not in ("drop", "start", "end"):
        raise ConfigError(f"{path}: date_policy.straddle must be drop, start or end, got {straddle!r}")
    if unknown not in ("drop", *PARTITIONS):
        raise ConfigError(f"{path}: date_policy.unknown must be drop or a partition name, got {unknown!r}")
    mode = raw.get("mode", "temporal")
    if mode not in ("temporal", "cumulative"):
        raise ConfigError(f"{path}: mode must be temporal or cumulative, got {mode!r}")
    sampling = {}
    for part, spec in (raw.get("sampling") or {}).items():
        if part not in PARTITIONS:
            raise ConfigError(f"{path}: sampling.{part}: unknown partition")
        mq = (spec or {}).get("max_queries") or {}
        bad = set(mq) - set(RELATIONS)
        if bad:
            raise ConfigError(f"{path}: sampling.{part}.max_queries: unknown relations {sorted(bad)}")
        dpg = (spec or {}).get("distractors_per_gold")
        if dpg is not None and (not isinstance(dpg, (int, float)) or dpg < 0):
            raise ConfigError(f"{path}: sampling.{part}.distractors_per_gold must be a non-negative number")
        sampling[part] = Sampling(dict(mq), dpg)
    corpus = (raw.get("corpus") or {}).get("paths")
    if not corpus:
        raise ConfigError(f"{path}: missing field 'corpus.paths'")
    for key in ("name", "version"):
        if key not in release:
            raise ConfigError(f"{path}: missing field 'release.{key}'")
    if "silver" in raw:  # validated now so that a typo fails the build, not a later judge run
        from ratio_bench.dataset.silver import SilverError, SilverSettings

        try:
            SilverSettings.from_config(raw)
        except (SilverError, TypeError, ValueError, AttributeError) as exc:
            raise ConfigError(f"{path}: silver: {exc}") from None
    return BuildConfig(
        path=path,
        name=str(release["name"]),
        version=str(release["version"]),
        license=str(release.get("license", "")),
        corpus=[(root / p).resolve() if not Path(p).is_absolute() else Path(p) for p in corpus],
        lexicon=(root / need("lexicon")).resolve(),
        work_dir=(root / raw.get("work_dir", "build")).resolve(),
        seed=int(raw.get("seed", 0)),
        splits=splits,
        straddle=straddle,
        unknown=unknown,
        mode=mode,
        sampling=sampling,
        raw=raw,
    )
