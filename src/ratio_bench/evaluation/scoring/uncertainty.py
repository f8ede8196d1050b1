"""How sure a figure is: seeded percentile bootstrap intervals over queries, and paired tests between entries.

Queries are the unit of sampling. A split's candidate pool is fixed (every model searches the same corpus), but
its queries are one draw of the sentences the miner could have found; a figure on 275 queries would move by
about two points of MRR@10 on another draw of the same size. So the interval resamples queries with
replacement and reads the 2.5th and 97.5th percentiles of the metric's mean (a 95% percentile bootstrap), and
two entries are compared *paired*, query by query, since the same query is easy or hard for both models.

With one gold per query every metric is a function of the gold's rank (:func:`metrics.gold_rank_metric`), so a
resample of ``n`` queries is, in distribution, a draw of how many queries land on each distinct value:
``Multinomial(n, observed shares)``. Drawing those counts costs resamples x distinct values (at most 101
ranks) whatever ``n``, where ``scipy.stats.bootstrap`` would draw resamples x ``n`` indices per metric (and its
default BCa a jackknife of ``n`` more); the percentiles are the same bootstrap's. Each call seeds its own
generator, so one figure's interval does not depend on what else is on the board.
"""

from __future__ import annotations

import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Protocol

import numpy as np

from ratio_bench.evaluation.entry.ranks import gold_rank_metric
from ratio_bench.evaluation.entry.record import MAIN_SCORE, PerQuery


class HasRanks(Protocol):
    """What the bootstrap reads: per relation, the gold ranks and their query ids' hash (an Entry, a Scored
    row, a clean ranking's pooled queries)."""

    @property
    def per_query(self) -> Mapping[str, PerQuery]: ...


RESAMPLES = 1000
SEED = 0
LEVEL = 0.95
ALPHA = 0.05  # a paired difference with p >= ALPHA is a tie


@dataclass(frozen=True)
class Bootstrap:
    """The bootstrap's settings, stated wherever an interval is shown."""

    resamples: int = RESAMPLES
    seed: int = SEED
    level: float = LEVEL

    @property
    def note(self) -> str:
        return f"{self.level:.0%} bootstrap CI over queries, {self.resamples:,} resamples, seed {self.seed}"


DEFAULT = Bootstrap()


@dataclass(frozen=True)
class Interval:
    """A figure's percentile interval, as a fraction like the figure."""

    low: float
    high: float


@dataclass(frozen=True)
class Comparison:
    """Entry a against entry b on the same queries: the mean per-query difference (a - b), its interval, and
    the two-sided bootstrap p-value; ``reason`` says why two entries cannot be compared (then all are None)."""

    difference: float | None = None
    low: float | None = None
    high: float | None = None
    p_value: float | None = None
    reason: str = ""

    @property
    def tied(self) -> bool:
        """Inside the noise: comparable, and the difference's interval holds 0 (p >= ALPHA)."""
        return self.p_value is not None and self.p_value >= ALPHA


def gold_ranks(entry: HasRanks, relation: str) -> np.ndarray | None:
    """The entry's gold rank per query on ``relation`` (sorted query ids' order), None without per-query data."""
    block = entry.per_query.get(relation)
    return None if block is None else np.asarray(block.gold_rank, dtype=np.int64)


def intervals(
    entry: HasRanks, relation: str, metrics: Sequence[str], settings: Bootstrap = DEFAULT
) -> dict[str, Interval]:
    """The interval of each of ``metrics`` on ``relation`` (one draw serves them all); {} when the entry has
    no per-query data for it."""
    ranks = gold_ranks(entry, relation)
    if ranks is None or not len(ranks):
        return {}
    lows, highs = _rank_intervals(tuple(np.bincount(ranks).tolist()), tuple(metrics), settings)
    return {m: Interval(lo, hi) for m, lo, hi in zip(metrics, lows, highs, strict=True)}


def interval(
    entry: HasRanks, relation: str, metric: str = MAIN_SCORE, settings: Bootstrap = DEFAULT
) -> Interval | None:
    """The interval of one figure, None when the entry has no per-query data for ``relation``."""
    return intervals(entry, relation, [metric], settings).get(metric)


def mean_interval(values: Sequence[float], settings: Bootstrap = DEFAULT) -> Interval | None:
    """The percentile interval of the mean of per-query ``values`` (say, each query's precision@5), queries
    resampled as everywhere here; None without values. Such values take few distinct levels (0, 0.2, ... 1 for
    precision@5), so, like the rank figures, a resample is a multinomial draw over those levels."""
    if not len(values):
        return None
    levels, counts = np.unique(np.asarray(values, dtype=np.float64), return_counts=True)
    rng = np.random.default_rng(settings.seed)
    means = _resampled_means(counts, levels[:, None], rng, settings.resamples)[:, 0]
    tail = (1 - settings.level) / 2
    low, high = np.quantile(means, [tail, 1 - tail])
    return Interval(float(low), float(high))


@lru_cache(maxsize=4096)
def _rank_intervals(
    histogram: tuple[int, ...], metrics: tuple[str, ...], settings: Bootstrap
) -> tuple[list[float], list[float]]:
    """Percentile bounds per metric from the rank histogram (cached: a board shows each entry many times)."""
    table = np.array([[gold_rank_metric(m, r) for m in metrics] for r in range(len(histogram))])
    rng = np.random.default_rng(settings.seed)
    means = _resampled_means(np.asarray(histogram), table, rng, settings.resamples)
    tail = (1 - settings.level) / 2
    lows, highs = np.quantile(means, [tail, 1 - tail], axis=0)
    return lows.tolist(), highs.tolist()


def _resampled_means(
    counts: np.ndarray, table: np.ndarray, rng: np.random.Generator, resamples: int
) -> np.ndarray:
    """Bootstrap means (resamples x metrics) of queries whose values are ``table``'s rows, ``counts`` of each."""
    n = int(counts.sum())
    draws = rng.multinomial(n, counts / n, size=resamples)
    return draws @ table / n


def compare(
    entry_a: HasRanks,
    entry_b: HasRanks,
    relations: str | Sequence[str],
    metric: str = MAIN_SCORE,
    settings: Bootstrap = DEFAULT,
) -> Comparison:
    """Paired bootstrap of ``metric`` between two entries on the same queries: per query the difference of
    the two golds' metric, queries resampled together (within each relation, independently); with several
    ``relations`` the statistic is the mean over them, as the board's ranking key is. Entries on different
    queries (another query-id hash), or without per-query data, are not comparable and say so."""
    relations = [relations] if isinstance(relations, str) else list(relations)
    if not relations:
        return Comparison(reason="no relation to compare on")
    draws, observed = [], []
    for rel in relations:
        first, second = (e.per_query.get(rel) for e in (entry_a, entry_b))
        if first is None or second is None:
            return Comparison(reason=f"no per-query data on {rel}")
        a, b = (np.asarray(block.gold_rank, dtype=np.int64) for block in (first, second))
        if first.query_ids_sha256 != second.query_ids_sha256 or len(a) != len(b):
            return Comparison(reason=f"different queries on {rel}: not comparable")
        width = int(max(a.max(), b.max())) + 1
        pairs, counts = np.unique(a * width + b, return_counts=True)
        rel_means, rel_observed = _paired_means(
            rel, tuple(pairs.tolist()), tuple(counts.tolist()), width, metric, settings
        )
        draws.append(rel_means)
        observed.append(rel_observed)
    means = np.mean(draws, axis=0)
    tail = (1 - settings.level) / 2
    low, high = np.quantile(means, [tail, 1 - tail])
    p = min(1.0, 2 * min(np.mean(means <= 0), np.mean(means >= 0)))
    return Comparison(float(np.mean(observed)), float(low), float(high), float(p))


@lru_cache(maxsize=4096)
def _paired_means(
    relation: str,
    pairs: tuple[int, ...],
    counts: tuple[int, ...],
    width: int,
    metric: str,
    settings: Bootstrap,
) -> tuple[np.ndarray, float]:
    """Bootstrap means of the per-query difference on one relation, from the histogram of (rank a, rank b)
    pairs coded ``a * width + b`` (cached: a board ranks the same neighbours in several renderings). Each
    relation draws from its own stream (seed, relation), so relations are resampled independently."""
    values = np.array([gold_rank_metric(metric, r) for r in range(width)])
    code = np.asarray(pairs)
    difference = values[code // width] - values[code % width]
    rng = np.random.default_rng([settings.seed, zlib.crc32(relation.encode())])
    n = np.asarray(counts)
    means = _resampled_means(n, difference[:, None], rng, settings.resamples)[:, 0]
    means.flags.writeable = False  # shared by every caller of the cache
    return means, float(difference @ n / n.sum())
