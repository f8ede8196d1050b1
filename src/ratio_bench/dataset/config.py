"""Release build configuration (``dataset_scripts/*.yaml``), validated before any work starts.

Every problem is reported as ``<file>: <dotted.field>: <what is wrong>``: unknown keys (with a did-you-mean),
wrong types (a list where a mapping is expected, a string where a list is), out-of-range numbers and dates
that are invalid or out of order. A build therefore never mines for minutes and then fails on a typo.
"""

from __future__ import annotations

import datetime as dt
import difflib
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from ratio_bench.errors import RatioError, field_name, shown
from ratio_bench.judge.prompts import PromptError, get_prompt
from ratio_bench.lexicon import RELATIONS
from ratio_bench.yamlio import SafeLoader, load_yaml, yaml_problem

PARTITIONS = ("train", "validation", "test")
STRADDLE_POLICIES = ("drop", "start", "end")
MODES = ("temporal", "cumulative")

TOP_KEYS = (
    "release",
    "corpus",
    "lexicon",
    "work_dir",
    "seed",
    "splits",
    "date_policy",
    "mode",
    "sampling",
    "silver",
)
RELEASE_KEYS = ("name", "version", "license", "publish")
SPLIT_KEYS = ("start", "end")
SAMPLING_KEYS = ("max_queries", "distractors_per_gold")
SILVER_KEYS = ("sample", "prompts", "judge", "seed")
MAX_COUNT = 2**63 - 1  # a query cap becomes a DuckDB LIMIT, a BIGINT
MAX_DISTRACTORS_PER_GOLD = 1_000_000  # times the golds of a partition, still a LIMIT


class ConfigError(RatioError, ValueError):
    """A build configuration that cannot be used; the message names the file and the field."""


@dataclass(frozen=True)
class Split:
    name: str
    start: dt.date | None
    end: dt.date | None

    def contains(self, day: dt.date) -> bool:
        return (self.start is None or day >= self.start) and (self.end is None or day <= self.end)


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
    publish: bool
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


class _Checker:
    """Type and range checks that raise a :class:`ConfigError` naming the file and the dotted field."""

    def __init__(self, source: str):
        self.source = source

    def fail(self, where: str, message: str) -> ConfigError:
        return ConfigError(f"{self.source}: {where}: {message}" if where else f"{self.source}: {message}")

    def mapping(self, value: Any, where: str, allowed: tuple[str, ...] | None, null_ok: bool = True) -> dict:
        """A mapping (null reads as empty unless ``null_ok`` is false) whose keys are in ``allowed`` (None: any)."""
        if value is None and null_ok:
            return {}
        if not isinstance(value, dict):
            raise self.fail(where, f"must be a mapping (key: value), got {_kind(value)} {shown(value)}")
        for key in value:
            if allowed is not None and key not in allowed:
                close = difflib.get_close_matches(str(key), allowed, n=1)
                hint = f"did you mean {close[0]!r}?" if close else f"allowed: {', '.join(allowed)}"
                name = field_name(key)
                raise self.fail(f"{where}.{name}" if where else name, f"unknown field; {hint}")
        return value

    def required(self, mapping: dict, key: str, where: str) -> Any:
        if mapping.get(key) is None:
            raise self.fail(f"{where}.{key}" if where else key, "missing field")
        return mapping[key]

    def string(self, value: Any, where: str) -> str:
        if isinstance(value, bool) or not isinstance(value, (str, int, float)) or str(value).strip() == "":
            raise self.fail(where, f"must be a non-empty string, got {_kind(value)} {shown(value)}")
        return str(value)

    def boolean(self, value: Any, where: str) -> bool:
        if not isinstance(value, bool):
            raise self.fail(where, f"must be true or false, got {_kind(value)} {shown(value)}")
        return value

    def integer(self, value: Any, where: str) -> int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.fail(where, f"must be an integer, got {_kind(value)} {shown(value)}")
        return value

    def count(self, value: Any, where: str) -> int | None:
        """A positive integer a LIMIT can hold, or null."""
        if value is not None and (
            isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_COUNT
        ):
            raise self.fail(
                where, f"must be a positive integer up to {MAX_COUNT:,} or null, got {shown(value)}"
            )
        return value

    def number(self, value: Any, where: str, high: float) -> float | None:
        """A finite number in [0, high], or null (YAML reads ``.nan`` and ``.inf`` as numbers)."""
        if value is not None and (
            isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= high
        ):
            raise self.fail(where, f"must be a number from 0 to {high:,} or null, got {shown(value)}")
        return value

    def plain_data(self, raw: dict[str, Any]) -> None:
        """Every key text, every number finite, every text valid Unicode: the config is copied into the
        release manifest (sorted JSON), which could hold nothing else."""
        stack: list[tuple[str, Any]] = [("", raw)]
        while stack:
            where, value = stack.pop()
            if isinstance(value, float) and not math.isfinite(value):
                raise self.fail(where, f"must be a finite number, got {shown(value)}")
            if isinstance(value, str) and not _is_unicode(value):
                raise self.fail(where, "is not valid Unicode text (a lone surrogate escape such as \\ud800)")
            if isinstance(value, list):
                stack.extend((f"{where}[{i}]", v) for i, v in enumerate(value))
            elif isinstance(value, dict):
                for key in value:
                    if not isinstance(key, str) or not _is_unicode(key):
                        raise self.fail(where, f"field names must be text, got {_kind(key)} {shown(key)}")
                stack.extend(
                    (f"{where}.{field_name(k)}" if where else field_name(k), v) for k, v in value.items()
                )

    def choice(self, value: Any, where: str, choices: tuple[str, ...]) -> str:
        if value not in choices:
            raise self.fail(where, f"must be one of {', '.join(choices)}, got {shown(value)}")
        return value

    def string_list(self, value: Any, where: str) -> list[str]:
        if not isinstance(value, list):
            raise self.fail(where, f"must be a list (e.g. [a, b]), got {_kind(value)} {shown(value)}")
        if not value:
            raise self.fail(where, "must list at least one path")
        return [self.string(v, f"{where}[{i}]") for i, v in enumerate(value)]

    def date(self, value: Any, where: str) -> dt.date | None:
        if value is None:
            return None
        if isinstance(value, dt.datetime):
            return value.date()
        if isinstance(value, dt.date):
            return value
        try:
            return dt.date.fromisoformat(str(value))
        except ValueError:
            raise self.fail(where, f"must be an ISO date (YYYY-MM-DD) or null, got {shown(value)}") from None


class _Loader(SafeLoader):
    """Safe YAML that leaves dates as text, so an impossible date is reported with its field, not by PyYAML."""


_Loader.add_constructor("tag:yaml.org,2002:timestamp", yaml.SafeLoader.construct_scalar)


def _is_unicode(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


_KINDS = {
    dict: "a mapping",
    list: "a list",
    str: "a string",
    bool: "a boolean",
    int: "an integer",
    float: "a number",
    type(None): "null",
}


def _kind(value: Any) -> str:
    return _KINDS.get(type(value), f"a {type(value).__name__}")


def _resolve(root: Path, p: str) -> Path:
    return Path(p) if Path(p).is_absolute() else (root / p).resolve()


def _splits(c: _Checker, raw: Any) -> list[Split]:
    spec = c.mapping(raw, "splits", PARTITIONS, null_ok=False)
    missing = [p for p in PARTITIONS if p not in spec]
    if missing:
        raise c.fail("splits", f"must define {', '.join(PARTITIONS)}; missing {', '.join(missing)}")
    splits = []
    for name in PARTITIONS:
        where = f"splits.{name}"
        s = c.mapping(spec[name], where, SPLIT_KEYS)
        split = Split(name, c.date(s.get("start"), f"{where}.start"), c.date(s.get("end"), f"{where}.end"))
        if split.start and split.end and split.start > split.end:
            raise c.fail(f"{where}.end", f"{split.end} is before start {split.start}")
        splits.append(split)
    for a, b in zip(splits, splits[1:], strict=False):
        if a.end is None or b.start is None or a.end >= b.start:
            raise c.fail(
                f"splits.{a.name}.end",
                f"splits.{a.name} and splits.{b.name} overlap or are unbounded between them "
                f"({a.name}.end={a.end}, {b.name}.start={b.start}); {a.name} must end before {b.name} starts",
            )
    return splits


def _sampling(c: _Checker, raw: Any) -> dict[str, Sampling]:
    out = {}
    for part, spec in c.mapping(raw, "sampling", PARTITIONS).items():
        where = f"sampling.{part}"
        spec = c.mapping(spec, where, SAMPLING_KEYS)
        caps = {
            rel: c.count(cap, f"{where}.max_queries.{rel}")
            for rel, cap in c.mapping(spec.get("max_queries"), f"{where}.max_queries", RELATIONS).items()
        }
        dpg = c.number(
            spec.get("distractors_per_gold"), f"{where}.distractors_per_gold", MAX_DISTRACTORS_PER_GOLD
        )
        out[part] = Sampling(caps, dpg)
    return out


DEFAULT_PROMPTS = {
    "address": ["address-silver-split", "address-silver-stepwise"],
    "broaden": ["broaden-silver-inclusive", "broaden-silver-directional"],
    "specify": ["specify-silver-anchored", "specify-silver-compact"],
}
SPEC_SAMPLE: dict[str, int | None] = {"address": None, "broaden": None, "specify": 10_000}  # spec 4.3


class SilverError(RatioError, RuntimeError):
    pass


@dataclass(frozen=True)
class SilverSettings:
    sample: dict[str, int | None]  # relation -> sample size (None: every test pair)
    prompts: dict[str, list[str]]
    seed: int

    @classmethod
    def from_config(cls, raw: dict[str, Any]) -> SilverSettings:
        spec = raw.get("silver") or {}
        if not isinstance(spec, dict):
            raise SilverError(f"silver: must be a mapping, got {shown(spec)}")
        judge = spec.get("judge") or {}
        if not isinstance(judge, dict) or not all(isinstance(k, str) for k in judge):
            raise SilverError(
                f"silver.judge: must be a mapping of judge settings by name, got {shown(judge)}"
            )
        given = {name: spec.get(name) or {} for name in ("sample", "prompts")}
        for name, by_relation in given.items():
            if not isinstance(by_relation, dict):
                raise SilverError(f"silver.{name}: must be a mapping of relations, got {shown(by_relation)}")
            bad = [r for r in by_relation if r not in RELATIONS]
            if bad:
                raise SilverError(
                    f"silver.{name}: unknown relations {shown(bad)}; the relations are {', '.join(RELATIONS)}"
                )
        sample = dict(SPEC_SAMPLE) | given["sample"]
        for r, n in sample.items():
            if n is not None and (isinstance(n, bool) or not isinstance(n, int) or n < 1):
                raise SilverError(
                    f"silver.sample.{r}: must be a positive integer or null (every pair), got {shown(n)}"
                )
        prompts = {r: given["prompts"].get(r) or DEFAULT_PROMPTS[r] for r in RELATIONS}
        for r, ids in prompts.items():
            if not isinstance(ids, list) or len(ids) != 2 or not all(isinstance(pid, str) for pid in ids):
                raise SilverError(
                    f"silver.prompts.{r}: the silver rule needs a list of exactly two prompt ids, got {shown(ids)}"
                )
            for pid in ids:
                try:
                    prompt = get_prompt(pid)
                except PromptError as e:
                    raise SilverError(f"silver.prompts.{r}: {e}") from None
                if prompt.relation != r or "silver" not in prompt.modes:
                    raise SilverError(f"silver.prompts.{r}: {pid} is not a silver prompt for {r}")
        seed_field = "silver.seed" if "seed" in spec else "seed"  # the release's seed unless silver has one
        seed = spec.get("seed", raw.get("seed", 0))
        if isinstance(seed, bool) or not isinstance(seed, int):
            raise SilverError(f"{seed_field}: must be an integer, got {shown(seed)}")
        return cls(sample, {r: list(ids) for r, ids in prompts.items()}, seed)


def _silver(c: _Checker, raw: dict[str, Any]) -> None:
    """Checked now so that a typo fails the build, not a judge run days later."""
    c.mapping(raw["silver"], "silver", SILVER_KEYS)
    try:
        SilverSettings.from_config(raw)
    except SilverError as exc:
        raise c.fail("", str(exc)) from None


def parse_config(raw: Any, source: str, path: Path, root: Path) -> BuildConfig:
    """Validate a config's parsed YAML (``source`` names it in messages); relative paths resolve against root."""
    c = _Checker(source)
    raw = c.mapping(raw, "", TOP_KEYS, null_ok=False)
    release = c.mapping(c.required(raw, "release", ""), "release", RELEASE_KEYS, null_ok=False)
    corpus = c.mapping(c.required(raw, "corpus", ""), "corpus", ("paths",), null_ok=False)
    paths = c.string_list(c.required(corpus, "paths", "corpus"), "corpus.paths")
    policy = c.mapping(raw.get("date_policy"), "date_policy", ("straddle", "unknown"))
    splits = _splits(c, c.required(raw, "splits", ""))
    sampling = _sampling(c, raw.get("sampling"))
    if "silver" in raw:
        _silver(c, raw)
    c.plain_data(raw)
    return BuildConfig(
        path=path,
        name=c.string(c.required(release, "name", "release"), "release.name"),
        version=c.string(c.required(release, "version", "release"), "release.version"),
        license=c.string(release["license"], "release.license") if release.get("license") else "",
        publish=c.boolean(release.get("publish", True), "release.publish"),
        corpus=[_resolve(root, p) for p in paths],
        lexicon=_resolve(root, c.string(c.required(raw, "lexicon", ""), "lexicon")),
        work_dir=_resolve(root, c.string(raw.get("work_dir", "build"), "work_dir")),
        seed=c.integer(raw.get("seed", 0), "seed"),
        splits=splits,
        straddle=c.choice(policy.get("straddle", "drop"), "date_policy.straddle", STRADDLE_POLICIES),
        unknown=c.choice(policy.get("unknown", "drop"), "date_policy.unknown", ("drop", *PARTITIONS)),
        mode=c.choice(raw.get("mode", "temporal"), "mode", MODES),
        sampling=sampling,
        raw=raw,
    )


def read_config(path: str | Path) -> Any:
    """A config file's parsed YAML (size- and alias-bounded), or a ConfigError naming the file and the line."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"{path}: config file not found", value=path) from None
    except (IsADirectoryError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: not a readable YAML file: {exc}", value=path) from None
    try:
        return load_yaml(text, _Loader)
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}: {yaml_problem(exc)}") from None


def load_config(path: str | Path, root: Path | None = None) -> BuildConfig:
    """Load and validate a build config; relative paths are resolved against ``root`` (default: the cwd)."""
    path = Path(path)
    return parse_config(read_config(path), str(path), path, root or Path.cwd())
