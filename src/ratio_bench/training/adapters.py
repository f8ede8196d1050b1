"""``ratio train-adapters``: per-move query adapters on a frozen encoder (see ``retrieval/adapters.py``).

Why this shape: a frozen model ranks every move alike; fine-tuning a copy per move costs hours and ships gigabytes.
A linear map per move on the query vectors costs seconds once the vectors are cached and ships a few MB, and the
documents keep the base model's vectors, so one index serves all moves. Thousands of pairs (Address, Specify) are
enough to learn a map on their own; a few hundred (Broaden) are not, so a second, move-conditioned variant learns a
map shared by all moves plus a per-move part held near zero by weight decay. Each move keeps, by validation MRR@10
(never test), the best of: the base model unchanged, its own map, the shared + per-move map, at the best epoch.

Training is in-batch-negatives cross-entropy over scaled cosines (each query against its batch's golds), seeded and
single-threaded, so the same config, release and model give the same bytes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from ratio_bench.core.config import Checker
from ratio_bench.core.errors import RatioError
from ratio_bench.core.io import write_json
from ratio_bench.core.relations import RELATIONS
from ratio_bench.core.yamlio import load_yaml
from ratio_bench.dataset.release import Release
from ratio_bench.retrieval.adapters import QueryAdapters

VARIANTS = ("own", "shared")  # a move's own map; a shared + per-move map trained on every move's pairs
SUMMARY = "summary.json"
SCHEMA = "ratio-adapters-summary/1"


class AdapterConfigError(RatioError, ValueError):
    """A mistake in an adapter training config."""


@dataclass(frozen=True)
class AdapterConfig:
    """What ``training/adapters/<model>.yaml`` sets (every field has a default but ``base`` and ``name``)."""

    file: str
    base: str  # a registered dense model
    name: str  # the adapted model's registered name, and the weights' file stem
    seed: int = 13
    epochs: int = 8
    batch_size: int = 256
    lr: float = 1e-3
    scale: float = 20.0
    decay: float = 1e-3  # L2 pull of each map towards the identity (own) / of the per-move part towards zero
    max_pairs: dict[str, int | None] = field(default_factory=dict)  # relation -> train pairs (null: all)
    validation_queries: int = 1000  # per relation, against the pool of their golds


FIELDS = tuple(AdapterConfig.__dataclass_fields__)


def load_config(path: str | Path) -> AdapterConfig:
    """Read and check a config (one line naming the file and field on a mistake)."""
    path = Path(path)
    try:
        raw = load_yaml(path.read_text(encoding="utf-8"))
    except OSError as e:
        raise AdapterConfigError(f"{path}: cannot read ({e.strerror})", value=path) from e
    c = Checker(str(path), AdapterConfigError)
    raw = c.mapping(raw, "", tuple(f for f in FIELDS if f != "file"), null_ok=False)
    max_pairs = c.mapping(raw.get("max_pairs"), "max_pairs", RELATIONS)
    return AdapterConfig(
        str(path.name),
        c.string(c.required(raw, "base", ""), "base"),
        c.string(c.required(raw, "name", ""), "name"),
        c.integer(raw.get("seed", 13), "seed"),
        c.count(raw.get("epochs", 8), "epochs", 1000) or 8,
        c.count(raw.get("batch_size", 256), "batch_size", 65536) or 256,
        c.number(raw.get("lr", 1e-3), "lr", 1.0) or 1e-3,
        c.number(raw.get("scale", 20.0), "scale", 1000.0) or 20.0,
        c.number(raw.get("decay", 1e-3), "decay", 100.0) or 0.0,
        {r: c.count(max_pairs.get(r), f"max_pairs.{r}") for r in RELATIONS},
        c.count(raw.get("validation_queries", 1000), "validation_queries", 1_000_000) or 1000,
    )


@dataclass
class Pairs:
    """One relation's (query, gold) vectors of a split, row-aligned, L2-normalised."""

    queries: np.ndarray
    golds: np.ndarray


@dataclass(frozen=True)
class Choice:
    """What validation chose for one move."""

    relation: str
    variant: str  # "base", "own" or "shared"
    epoch: int  # 0 for the base
    validation_mrr_at_10: dict[str, float]  # variant -> its best validation MRR@10
    train_pairs: int
    train_loss_first: dict[str, float]  # variant -> mean loss of its first epoch
    train_loss_last: dict[str, float]


Encode = Callable[[list[str], list[str]], np.ndarray]  # (ids, texts) -> L2-normalised vectors


def _sample(n: int, cap: int | None, seed: int) -> np.ndarray:
    """Rows kept of ``n`` (all, or a seeded sample of ``cap`` in file order)."""
    if cap is None or cap >= n:
        return np.arange(n)
    return np.sort(np.random.default_rng(seed).choice(n, cap, replace=False))


def read_pairs(
    release: Release, relation: str, split: str, cap: int | None, seed: int, encode: Encode
) -> Pairs:
    """A relation's pairs of ``split`` (a seeded ``cap`` of them), encoded by the base model."""
    table = release.queries(relation, split, ["query_id", "query", "gold_id", "gold"])
    rows = _sample(table.num_rows, cap, seed).tolist()
    col = {c: table.column(c).to_pylist() for c in ("query_id", "query", "gold_id", "gold")}
    pick = {c: [v[i] for i in rows] for c, v in col.items()}
    return Pairs(encode(pick["query_id"], pick["query"]), encode(pick["gold_id"], pick["gold"]))


def mrr_at_10(queries: np.ndarray, golds: np.ndarray) -> float:
    """MRR@10 of each query against the pool of all golds (query i's gold is row i; equal vectors tie)."""
    if not len(queries):
        return 0.0
    sims = queries @ golds.T
    own = sims[np.arange(len(sims)), np.arange(len(sims))]
    rank = (sims > own[:, None]).sum(axis=1) + 1
    return float(np.where(rank <= 10, 1.0 / rank, 0.0).mean())


def train_adapters(
    config: AdapterConfig, release: Release, encode: Encode
) -> tuple[QueryAdapters, list[Choice]]:
    """Train both variants, pick per move by validation, return the adapters and what was chosen."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # one thread: float sums in one order, the same bytes on every run
    try:
        train = {
            r: read_pairs(release, r, "train", config.max_pairs.get(r), config.seed, encode)
            for r in RELATIONS
        }
        valid = {
            r: read_pairs(release, r, "validation", config.validation_queries, config.seed, encode)
            for r in RELATIONS
        }
        own = {
            r: _fit(config, {r: train[r]}, {r: valid[r]}, shared=False)
            for r in RELATIONS
            if len(train[r].queries)
        }
        shared = _fit(config, train, valid, shared=True)
    finally:
        torch.set_num_threads(threads)
    weights, biases, choices = {}, {}, []
    dim = next(iter(train.values())).queries.shape[1]
    for r in RELATIONS:
        fits = {"own": own[r][r] if r in own else None, "shared": shared.get(r)}
        scores = {"base": mrr_at_10(valid[r].queries, valid[r].golds)}
        scores |= {v: f.best_mrr for v, f in fits.items() if f is not None}
        best = max(scores, key=lambda v: (scores[v], v == "base"))  # a tie keeps the base
        if best != "base":
            weights[r], biases[r] = fits[best].weight, fits[best].bias
        choices.append(
            Choice(
                r,
                best,
                fits[best].best_epoch if best != "base" else 0,
                {v: round(s, 6) for v, s in scores.items()},
                len(train[r].queries),
                {v: round(f.losses[0], 6) for v, f in fits.items() if f is not None},
                {v: round(f.losses[-1], 6) for v, f in fits.items() if f is not None},
            )
        )
    return QueryAdapters(config.base, dim, weights, biases), choices


@dataclass
class Fit:
    """One move's trained map at its best validation epoch, and the mean train loss of each epoch."""

    weight: np.ndarray
    bias: np.ndarray
    best_mrr: float = -1.0
    best_epoch: int = 0
    losses: list[float] = field(default_factory=list)


def _fit(
    config: AdapterConfig, train: dict[str, Pairs], valid: dict[str, Pairs], shared: bool
) -> dict[str, Fit]:
    """Train maps for the moves of ``train`` together: ``W_m = I + S + D_m`` (``shared``) or ``W_m = I + D_m``."""
    import torch

    torch.manual_seed(config.seed)
    moves = [r for r in train if len(train[r].queries)]
    dim = train[moves[0]].queries.shape[1]
    eye = torch.eye(dim)
    common = torch.zeros(dim, dim, requires_grad=True)
    delta = {m: torch.zeros(dim, dim, requires_grad=True) for m in moves}
    bias = {m: torch.zeros(dim, requires_grad=True) for m in moves}
    params = [*delta.values(), *bias.values()] + ([common] if shared else [])
    optimiser = torch.optim.Adam(params, lr=config.lr)
    rng = np.random.default_rng(config.seed)
    tensors = {
        m: (torch.from_numpy(np.array(train[m].queries)), torch.from_numpy(np.array(train[m].golds)))
        for m in moves
    }
    fits = {m: Fit(np.eye(dim, dtype=np.float32), np.zeros(dim, dtype=np.float32)) for m in moves}

    def weight(m: str) -> torch.Tensor:
        return eye + delta[m] + (common if shared else 0)

    for epoch in range(1, config.epochs + 1):
        batches = [(m, b) for m in moves for b in _batches(len(tensors[m][0]), config.batch_size, rng)]
        order = rng.permutation(len(batches))
        totals = dict.fromkeys(moves, 0.0)
        for i in order:
            m, rows = batches[i]
            q, g = tensors[m][0][rows], tensors[m][1][rows]
            mapped = torch.nn.functional.normalize(q @ weight(m).T + bias[m], dim=1)
            logits = config.scale * mapped @ g.T
            loss = torch.nn.functional.cross_entropy(logits, torch.arange(len(rows)))
            penalty = config.decay * (delta[m].pow(2).sum() + (common.pow(2).sum() if shared else 0))
            optimiser.zero_grad()
            (loss + penalty).backward()
            optimiser.step()
            totals[m] += loss.item() * len(rows)
        for m in moves:
            fits[m].losses.append(totals[m] / len(tensors[m][0]))
            if m in valid:
                _keep_best(fits[m], epoch, weight(m).detach().numpy(), bias[m].detach().numpy(), valid[m])
    return fits


def _batches(n: int, size: int, rng: np.random.Generator) -> list[np.ndarray]:
    """A shuffled epoch of ``n`` rows in batches of ``size`` (a last batch of one query has no negative: dropped)."""
    perm = rng.permutation(n)
    return [perm[i : i + size] for i in range(0, n, size) if len(perm[i : i + size]) > 1]


def _keep_best(fit: Fit, epoch: int, weight: np.ndarray, bias: np.ndarray, valid: Pairs) -> None:
    adapters = QueryAdapters("", weight.shape[0], {"m": weight}, {"m": bias})
    score = mrr_at_10(adapters.apply("m", valid.queries), valid.golds)
    if score > fit.best_mrr:
        fit.weight, fit.bias = weight.astype(np.float32), bias.astype(np.float32)
        fit.best_mrr, fit.best_epoch = score, epoch


def write_outputs(
    out: Path, config: AdapterConfig, release: Release, adapters: QueryAdapters, choices: list[Choice]
) -> Path:
    """``<out>/<name>.safetensors`` and ``<out>/summary.json`` (no timings or paths: reruns give the same bytes)."""
    out.mkdir(parents=True, exist_ok=True)
    weights = out / f"{config.name}.safetensors"
    dataset = f"{release.name} {release.version}"
    adapters.save(weights, {"name": config.name, "dataset": dataset, "config": config.file})
    summary = {
        "schema": SCHEMA,
        "name": config.name,
        "base": config.base,
        "dataset": dataset,
        "config": asdict(config),
        "weights_sha256": QueryAdapters.load(weights).sha256,
        "moves": [asdict(c) for c in choices],
    }
    write_json(out / SUMMARY, summary)
    return weights


def encoder_for(base: str, cache_dir: str | Path | None, batch_size: int = 64) -> Encode:
    """The base model's (ids, texts) -> vectors, through the embedding cache (queries and documents alike have no
    prompt: the registered adapted model uses the base's setup ``none``)."""
    from ratio_bench.retrieval.cache import EmbeddingCache
    from ratio_bench.retrieval.registry import resolve
    from ratio_bench.retrieval.retriever import DenseRetriever

    setup = resolve(base, "none")
    cache = EmbeddingCache(Path(cache_dir) if cache_dir else None)
    retriever = DenseRetriever.load(setup, cache, batch_size)
    return lambda ids, texts: np.asarray(retriever.embed("", texts, f"encoding {len(texts):,} texts"))


def describe(choices: list[Choice]) -> list[str]:
    """One line per move for the command to print."""
    return [
        f"{c.relation}: {c.variant}"
        + (f" (epoch {c.epoch})" if c.epoch else "")
        + ", validation MRR@10 "
        + ", ".join(f"{v} {s:.4f}" for v, s in c.validation_mrr_at_10.items())
        for c in choices
    ]
