"""Release build configuration (``dataset_scripts/*.yaml``), validated before any work starts.

Every problem is reported as ``<file>: <dotted.field>: <what is wrong>``: unknown keys (with a did-you-mean),
wrong types (a list where a mapping is expected, a string where a list is), out-of-range numbers and dates
that are invalid or out of order. A build therefore never mines for minutes and then fails on a typo.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from ratio_bench.core.config import Checker
from ratio_bench.core.errors import RatioError, UsageError, shown
from ratio_bench.core.relations import RELATION_SPECS, RELATIONS
from ratio_bench.core.snapshots import PERIOD_KINDS, parse_period
from ratio_bench.core.yamlio import SafeLoader, load_yaml, yaml_problem
from ratio_bench.dataset.contract import PARTITIONS
from ratio_bench.dataset.identity import IdentityError, check_name, check_version
from ratio_bench.llm.prompts import PromptError, get_prompt

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
    "snapshots",
    "custody",
)
RELEASE_KEYS = ("name", "version", "license", "publish", "corpus_sha256")
SPLIT_KEYS = ("start", "end")
SAMPLING_KEYS = ("max_queries", "distractors_per_gold")
SILVER_KEYS = ("sample", "prompts", "judge", "seed")
SNAPSHOT_KEYS = ("period", "start", "end", "min_queries", "max_queries", "pool_size")
CUSTODY_KEYS = ("withhold", "embargo_days")
WITHHOLD_NONE, WITHHOLD_NEWEST = "none", "newest"
DEFAULT_EMBARGO_DAYS = 30
MAX_EMBARGO_DAYS = 100_000
MAX_POOL_SIZE = 100_000_000  # candidates of one snapshot; far above any corpus, still a bounded LIMIT
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
class Snapshots:
    """How the test partition is also cut into one self-contained split per period (``snapshots:``)."""

    period: str
    start: dt.date
    end: dt.date | None
    min_queries: int
    max_queries: dict[str, int | None]
    pool_size: int


@dataclass(frozen=True)
class CustodyPolicy:
    """Which snapshot a release withholds (``custody:``; ``--withhold``): ``none``, ``newest`` (the policy
    default once a ``custody:`` block is given: the newest period cut) or one period's split name; and how many
    days after the period's end it stays withheld (``ratio dataset release-withheld`` refuses before)."""

    withhold: str = WITHHOLD_NONE
    embargo_days: int = DEFAULT_EMBARGO_DAYS

    def choose(self, cut: list[str]) -> list[str]:
        """The withheld splits among the snapshot splits ``cut`` (in time order); [] when none is withheld."""
        if self.withhold == WITHHOLD_NONE or not cut:
            return []
        if self.withhold == WITHHOLD_NEWEST:
            return [cut[-1]]
        return [self.withhold] if self.withhold in cut else []


def withhold_value(text: str) -> str:
    """``none``, ``newest`` or the split name of the period ``text`` names (ValueError otherwise)."""
    if text in (WITHHOLD_NONE, WITHHOLD_NEWEST):
        return text
    period = parse_period(text)
    if period is None:
        raise ValueError(
            f"{text!r} is no period: give newest, none, a month YYYY-MM, a quarter YYYYqN or a split name"
        )
    return period.split


@dataclass(frozen=True)
class BuildConfig:
    path: Path
    name: str
    version: str
    license: str
    publish: bool
    corpus: list[Path]
    lexicon: Path
    work_dir: Path | None  # None: beside the output folder (see work_folder)
    seed: int
    splits: list[Split]
    straddle: str
    unknown: str
    mode: str
    sampling: dict[str, Sampling]
    raw: dict[str, Any]
    snapshots: Snapshots | None = None
    corpus_sha256: str | None = None  # the corpus the config was written for (see dataset.identity)
    custody: CustodyPolicy = CustodyPolicy()

    def partition(self, name: str) -> Split:
        return next(s for s in self.splits if s.name == name)

    def work_folder(self, out: Path) -> Path:
        """Where mining and assembly work for a release in ``out``: the config's ``work_dir`` when it sets one,
        else ``<out>.work`` beside the release (not inside it: the release folder is swapped whole at the end,
        and anything in it that its manifest does not list is foreign to ``check`` and ``publish``). Two
        builds into two output folders therefore never share a mining folder."""
        if self.work_dir is not None:
            return self.work_dir
        target = Path(out).expanduser().resolve()
        return target.parent / f"{target.name}.work"


class _Loader(SafeLoader):
    """Safe YAML that leaves dates as text, so an impossible date is reported with its field, not by PyYAML."""


_Loader.add_constructor("tag:yaml.org,2002:timestamp", yaml.SafeLoader.construct_scalar)


def _resolve(root: Path, p: str) -> Path:
    return Path(p) if Path(p).is_absolute() else (root / p).resolve()


def _splits(c: Checker, raw: Any) -> list[Split]:
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


def _sampling(c: Checker, raw: Any) -> dict[str, Sampling]:
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


def _snapshots(c: Checker, raw: Any, test: Split) -> Snapshots | None:
    """The ``snapshots:`` block; its start defaults to the test split's, and must lie inside it."""
    if raw is None:
        return None
    spec = c.mapping(raw, "snapshots", SNAPSHOT_KEYS, null_ok=False)
    start = c.date(spec.get("start"), "snapshots.start") or test.start
    if start is None:
        raise c.fail("snapshots.start", "missing field (the test split has no start to default to)")
    if test.start and start < test.start:
        raise c.fail("snapshots.start", f"{start} is before the test split's start {test.start}")
    end = c.date(spec.get("end"), "snapshots.end")
    if end and end < start:
        raise c.fail("snapshots.end", f"{end} is before start {start}")
    return Snapshots(
        period=c.choice(c.required(spec, "period", "snapshots"), "snapshots.period", PERIOD_KINDS),
        start=start,
        end=end,
        min_queries=c.count(spec.get("min_queries", 1), "snapshots.min_queries") or 1,
        max_queries={
            rel: c.count(cap, f"snapshots.max_queries.{rel}")
            for rel, cap in c.mapping(spec.get("max_queries"), "snapshots.max_queries", RELATIONS).items()
        },
        pool_size=c.count(c.required(spec, "pool_size", "snapshots"), "snapshots.pool_size", MAX_POOL_SIZE),
    )


def _custody(c: Checker, raw: Any, snapshots: Snapshots | None) -> CustodyPolicy:
    """The ``custody:`` block: which snapshot is withheld (default: the newest) and for how many days."""
    if raw is None:
        return CustodyPolicy()
    spec = c.mapping(raw, "custody", CUSTODY_KEYS)
    text = c.string(spec.get("withhold", WITHHOLD_NEWEST), "custody.withhold")
    try:
        withhold = withhold_value(text)
    except ValueError as e:
        raise c.fail("custody.withhold", str(e)) from None
    if withhold != WITHHOLD_NONE and snapshots is None:
        raise c.fail("custody.withhold", "only a snapshot can be withheld: add a `snapshots:` block")
    days = c.integer(spec.get("embargo_days", DEFAULT_EMBARGO_DAYS), "custody.embargo_days")
    if not 0 <= days <= MAX_EMBARGO_DAYS:
        raise c.fail("custody.embargo_days", f"must be 0 to {MAX_EMBARGO_DAYS:,} days, got {days}")
    return CustodyPolicy(withhold, days)


DEFAULT_PROMPTS = {r.name: list(r.silver_prompts) for r in RELATION_SPECS}
SPEC_SAMPLE: dict[str, int | None] = {r.name: r.silver_sample for r in RELATION_SPECS}  # spec 4.3


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


def _silver(c: Checker, raw: dict[str, Any]) -> None:
    """Checked now so that a typo fails the build, not a judge run days later."""
    c.mapping(raw["silver"], "silver", SILVER_KEYS)
    try:
        SilverSettings.from_config(raw)
    except SilverError as exc:
        raise c.fail("", str(exc)) from None


def parse_config(raw: Any, source: str, path: Path, root: Path) -> BuildConfig:
    """Validate a config's parsed YAML (``source`` names it in messages); relative paths resolve against root."""
    c = Checker(source, ConfigError)
    raw = c.mapping(raw, "", TOP_KEYS, null_ok=False)
    release = c.mapping(c.required(raw, "release", ""), "release", RELEASE_KEYS, null_ok=False)
    corpus = c.mapping(c.required(raw, "corpus", ""), "corpus", ("paths",), null_ok=False)
    paths = c.string_list(c.required(corpus, "paths", "corpus"), "corpus.paths")
    policy = c.mapping(raw.get("date_policy"), "date_policy", ("straddle", "unknown"))
    splits = _splits(c, c.required(raw, "splits", ""))
    sampling = _sampling(c, raw.get("sampling"))
    snapshots = _snapshots(c, raw.get("snapshots"), splits[-1])
    custody = _custody(c, raw.get("custody"), snapshots)
    if "silver" in raw:
        _silver(c, raw)
    c.plain_data(raw)
    name, version, declared = _identity(c, release)
    return BuildConfig(
        path=path,
        name=name,
        version=version,
        license=c.string(release["license"], "release.license") if release.get("license") else "",
        publish=c.boolean(release.get("publish", True), "release.publish"),
        corpus=[_resolve(root, p) for p in paths],
        lexicon=_resolve(root, c.string(c.required(raw, "lexicon", ""), "lexicon")),
        work_dir=_resolve(root, c.string(raw["work_dir"], "work_dir")) if "work_dir" in raw else None,
        seed=c.integer(raw.get("seed", 0), "seed"),
        splits=splits,
        straddle=c.choice(policy.get("straddle", "drop"), "date_policy.straddle", STRADDLE_POLICIES),
        unknown=c.choice(policy.get("unknown", "drop"), "date_policy.unknown", ("drop", *PARTITIONS)),
        mode=c.choice(raw.get("mode", "temporal"), "mode", MODES),
        sampling=sampling,
        raw=raw,
        snapshots=snapshots,
        corpus_sha256=declared,
        custody=custody,
    )


def _identity(c: Checker, release: dict[str, Any]) -> tuple[str, str, str | None]:
    """The ``release:`` block's name, version and declared corpus fingerprint, each checked (see
    :mod:`ratio_bench.dataset.identity`): a version becomes a folder name, a tag and a card title."""
    name = c.string(c.required(release, "name", "release"), "release.name")
    version = c.string(c.required(release, "version", "release"), "release.version")
    for where, value, check in (
        ("release.name", name, check_name),
        ("release.version", version, check_version),
    ):
        try:
            check(value)
        except IdentityError as exc:
            raise c.fail(where, str(exc)) from None
    declared = release.get("corpus_sha256")
    if declared is not None and not (isinstance(declared, str) and re.fullmatch(r"[0-9a-f]{64}", declared)):
        raise c.fail("release.corpus_sha256", f"must be 64 lowercase hex digits, got {shown(declared)}")
    return name, version, declared


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


def with_withhold(cfg: BuildConfig, text: str) -> BuildConfig:
    """The config with ``--withhold``'s policy (its ``custody.withhold``; the embargo stays the config's)."""
    try:
        withhold = withhold_value(text)
    except ValueError as e:
        raise UsageError(f"--withhold {text}: {e}") from None
    if cfg.snapshots is None and withhold != WITHHOLD_NONE:
        raise UsageError(
            f"--withhold {text}: only a snapshot can be withheld; the config has no `snapshots:` block"
        )
    custody = dict(cfg.raw.get("custody") or {}) | {"withhold": withhold}
    return dataclasses.replace(
        cfg, custody=dataclasses.replace(cfg.custody, withhold=withhold), raw=cfg.raw | {"custody": custody}
    )
