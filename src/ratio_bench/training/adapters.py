"""``ratio train adapters``: per-move query adapters on a frozen encoder (see ``retrieval/adapters.py``).

Why this shape: a frozen model ranks every move alike; fine-tuning a copy per move costs hours and ships gigabytes.
A map per move on the query vectors costs minutes once the vectors are cached and ships a few MB, and the
documents keep the base model's vectors, so one index serves all moves. Thousands of pairs (Address, Specify) are
enough to learn a map on their own; a few hundred (Broaden) are not, so a second, move-conditioned variant learns a
map shared by all moves plus a per-move part held near zero by weight decay. Each move keeps, by validation MRR@10
(never test), the best of: the base model unchanged, its own map, the shared + per-move map, at the best epoch.

Training is in-batch-negatives cross-entropy over scaled cosines (each query against its batch's golds), seeded and
single-threaded, so the same config, release and model give the same bytes. What makes a map *move*-aware rather
than a better topical ranker is what it is asked to rank below the gold (config switches, all off by default):

- ``mix_moves``: batches mix every move's pairs, so a query's negatives include the golds of the other moves
  (in the benchmark's pool the other moves' golds are the competitors a topical model confuses);
- ``move_loss``: for each query, its gold's in-batch log-probability under every move's map, trained by
  cross-entropy to be highest under the query's own move: a differentiable stand-in for move accuracy;
- ``distractors``: a seeded sample of the train split's distractor sentences (contrast, similarity, irrelevant
  markers) added to every batch as negatives, as they are three quarters of an evaluation pool;
- ``hidden``: a residual one-hidden-layer part per map (``retrieval/adapters.py``), beside the linear map.

Validation ranks each move's sampled validation queries against one pool: every sampled validation gold of every
move plus ``validation_distractors`` validation distractors, so a map that mistakes another move's golds for its
own is marked down. The summary also records each move's validation move accuracy (its gold ranked best under
its own move's map, ties shared) for the chosen maps.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from ratio_bench.core import extras
from ratio_bench.core.config import Checker
from ratio_bench.core.errors import RatioError
from ratio_bench.core.io import write_json
from ratio_bench.core.relations import RELATIONS
from ratio_bench.core.yamlio import load_yaml
from ratio_bench.dataset.release import Release
from ratio_bench.evaluation.analysis.move_sensitivity import gold_ranks, tie_shared_accuracy
from ratio_bench.retrieval.adapters import QueryAdapters
from ratio_bench.retrieval.bm25 import BM25Retriever, normalised
from ratio_bench.retrieval.cache import EmbeddingCache
from ratio_bench.retrieval.registry import resolve
from ratio_bench.retrieval.retriever import DenseRetriever
from ratio_bench.training import lexical as lexical_weights

torch = extras.lazy("torch")
F = extras.lazy("torch.nn.functional")

# a move's own map; a shared + per-move map trained on every move's pairs; a bias alone (W = I: a direction the
# move's queries are pushed towards, the least a move with few pairs can overfit)
VARIANTS = ("own", "shared", "bias")
SELECT = ("mrr", "mrr+move_accuracy")
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
    validation_queries: int = 1000  # per relation, against the pool of all relations' golds
    mix_moves: bool = False  # batches mix every move's pairs (other moves' golds become negatives)
    move_loss: float = 0.0  # weight of the across-move loss (gold likeliest under the query's own move's map)
    distractors: int = 0  # train distractors sampled as extra negatives (each batch draws batch_size of them)
    hidden: int = 0  # width of each map's residual hidden part (0: linear maps)
    validation_distractors: int = 0  # validation distractors added to the validation pool
    variants: tuple[str, ...] = ("own", "shared")  # the variants trained, each move choosing among them
    balance: bool = False  # weigh each move's queries by its inverse share of the train pairs (losses)
    # what picks a move's variant and epoch on validation: its MRR@10, or its MRR@10 plus its move accuracy
    select: str = "mrr"
    # a hybrid model's BM25 weight per move, chosen on validation after the maps (training/lexical.py): None, none
    lexical: lexical_weights.LexicalConfig | None = None


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
        c.boolean(raw.get("mix_moves", False), "mix_moves"),
        c.number(raw.get("move_loss", 0.0), "move_loss", 100.0) or 0.0,
        c.count(raw.get("distractors"), "distractors", 1_000_000) or 0,
        c.count(raw.get("hidden"), "hidden", 4096) or 0,
        c.count(raw.get("validation_distractors"), "validation_distractors", 1_000_000) or 0,
        _variants(c, raw.get("variants", ["own", "shared"])),
        balance=c.boolean(raw.get("balance", False), "balance"),
        select=c.choice(raw.get("select", "mrr"), "select", SELECT),
        lexical=lexical_weights.parse(c, raw.get("lexical")),
    )


def _variants(c: Checker, value: object) -> tuple[str, ...]:
    names = c.string_list(value, "variants")
    for name in names:
        c.choice(name, "variants", VARIANTS)
    if not names:
        raise c.fail("variants", f"name at least one of {', '.join(VARIANTS)}")
    return tuple(dict.fromkeys(names))


@dataclass
class Pairs:
    """One relation's (query, gold) vectors of a split, row-aligned, L2-normalised."""

    queries: np.ndarray
    golds: np.ndarray
    gold_ids: list[str] = field(default_factory=list)
    query_texts: list[str] = field(default_factory=list)  # what BM25 reads (training/lexical.py)
    gold_texts: list[str] = field(default_factory=list)


@dataclass
class Pool:
    """The validation pool (every sampled gold of every move, then distractors) and each move's gold rows."""

    vectors: np.ndarray
    gold_rows: dict[str, np.ndarray]
    texts: list[str] = field(default_factory=list)  # row-aligned, when the pairs and distractors had texts


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
    validation_move_accuracy: float = 0.0  # of the chosen maps (chance: 1 / number of moves)


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
    return Pairs(
        encode(pick["query_id"], pick["query"]),
        encode(pick["gold_id"], pick["gold"]),
        pick["gold_id"],
        pick["query"],
        pick["gold"],
    )


def distractor_rows(release: Release, split: str, cap: int, seed: int) -> tuple[list[str], list[str]]:
    """(ids, texts) of a seeded ``cap`` of ``split``'s distractor candidates (a role that is no relation)."""
    if not cap:
        return [], []
    table = release.corpus(split, ["id", "text", "role"])
    roles = table.column("role").to_pylist()
    rows = [i for i, role in enumerate(roles) if role not in RELATIONS]
    keep = [rows[i] for i in _sample(len(rows), cap, seed).tolist()]
    ids, texts = table.column("id").to_pylist(), table.column("text").to_pylist()
    return [ids[i] for i in keep], [texts[i] for i in keep]


def read_distractors(release: Release, split: str, cap: int, seed: int, encode: Encode) -> np.ndarray:
    """A seeded ``cap`` of ``split``'s distractor candidates, encoded."""
    if not cap:
        return np.zeros((0, 0), np.float32)
    return encode(*distractor_rows(release, split, cap, seed))


def validation_pool(
    valid: dict[str, Pairs], distractors: np.ndarray, distractor_texts: list[str] | None = None
) -> Pool:
    """One pool of every move's validation golds (a gold of two queries once) and the distractors."""
    rows: dict[str, int] = {}
    vectors, texts = [], []
    gold_rows = {}
    for r, pairs in valid.items():
        at = []
        for i, (gid, vec) in enumerate(zip(pairs.gold_ids, pairs.golds, strict=True)):
            if gid not in rows:
                rows[gid] = len(vectors)
                vectors.append(vec)
                texts.append(pairs.gold_texts[i] if pairs.gold_texts else "")
            at.append(rows[gid])
        gold_rows[r] = np.asarray(at, dtype=np.int64)
    dim = next((len(v) for v in vectors), distractors.shape[1] if distractors.size else 0)
    stacked = np.asarray(vectors, dtype=np.float32).reshape(-1, dim)
    if distractors.size:
        stacked = np.concatenate([stacked, np.asarray(distractors, dtype=np.float32)])
    return Pool(stacked, gold_rows, texts + list(distractor_texts or [""] * len(distractors)))


def mrr_at_10(queries: np.ndarray, pool: np.ndarray, gold_rows: np.ndarray | None = None) -> float:
    """MRR@10 of each query against ``pool`` (query i's gold is row ``gold_rows[i]``, default i; a tie with
    another candidate goes the gold's way, as in ``gold_ranks``)."""
    if not len(queries):
        return 0.0
    gold_rows = np.arange(len(queries)) if gold_rows is None else gold_rows
    ranks, _ = gold_ranks(pool, queries, gold_rows)
    return float(np.where(ranks <= 10, 1.0 / ranks, 0.0).mean())


def move_accuracy(adapters: QueryAdapters, valid: dict[str, Pairs], pool: Pool) -> dict[str, float]:
    """Per move, the share of its validation queries whose gold ranks best under its own move's map among all
    moves' maps (ties shared: the expectation of a random tie-break)."""
    out = {}
    for r, pairs in valid.items():
        if not len(pairs.queries):
            continue
        table = np.stack(
            [gold_ranks(pool.vectors, adapters.apply(m, pairs.queries), pool.gold_rows[r])[0] for m in valid],
            axis=1,
        )
        out[r] = round(tie_shared_accuracy(table, list(valid).index(r)), 6)
    return out


def train_adapters(
    config: AdapterConfig, release: Release, encode: Encode
) -> tuple[QueryAdapters, list[Choice]]:
    """Train the config's variants, pick per move by validation, return the adapters and what was chosen."""

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
        pool = validation_pool(
            valid, read_distractors(release, "validation", config.validation_distractors, config.seed, encode)
        )
        negatives = read_distractors(release, "train", config.distractors, config.seed, encode)
        moves = [r for r in RELATIONS if len(train[r].queries)]
        trained: dict[str, dict[str, Fit]] = {}
        for variant in config.variants:
            if variant == "own" and not config.mix_moves:  # each move alone, as its own batches
                trained[variant] = {
                    r: _fit(config, {r: train[r]}, valid, pool, negatives, variant)[r] for r in moves
                }
            else:  # every move's maps in one fit: one batch order (mixed with mix_moves), one optimiser
                trained[variant] = _fit(config, train, valid, pool, negatives, variant)
    finally:
        torch.set_num_threads(threads)
    dim = next(iter(train.values())).queries.shape[1]
    chosen: dict[str, tuple[str, Fit | None, dict[str, float]]] = {}
    for r in RELATIONS:
        fits = {v: trained[v].get(r) for v in config.variants}
        scores = {"base": mrr_at_10(valid[r].queries, pool.vectors, pool.gold_rows[r])}
        scores |= {v: f.best_mrr for v, f in fits.items() if f is not None}
        picks = {"base": scores["base"] + (1 / len(moves) if config.select != "mrr" else 0.0)}
        picks |= {v: f.best_score for v, f in fits.items() if f is not None}
        best = max(picks, key=lambda v: (picks[v], v == "base"))  # a tie keeps the base
        chosen[r] = (best, fits.get(best), scores)
    adapters = QueryAdapters(
        config.base,
        dim,
        {r: f.weight for r, (_, f, _) in chosen.items() if f is not None},
        {r: f.bias for r, (_, f, _) in chosen.items() if f is not None},
        hidden={r: f.hidden for r, (_, f, _) in chosen.items() if f is not None and f.hidden},
    )
    accuracy = move_accuracy(adapters, valid, pool)
    choices = []
    for r, (best, fit, scores) in chosen.items():
        fits = {v: trained[v].get(r) for v in config.variants}
        choices.append(
            Choice(
                r,
                best,
                fit.best_epoch if fit is not None else 0,
                {v: round(x, 6) for v, x in scores.items()},
                len(train[r].queries),
                {v: round(f.losses[0], 6) for v, f in fits.items() if f is not None},
                {v: round(f.losses[-1], 6) for v, f in fits.items() if f is not None},
                accuracy.get(r, 0.0),
            )
        )
    return adapters, choices


@dataclass(frozen=True)
class LexicalChoice:
    """The BM25 weight per move that validation chose (``lexical:`` in the config), and every point tried."""

    weights: dict[str, float]  # moves given no weight are left out
    pool: int  # candidates in the validation pool the weights were chosen on
    points: list[lexical_weights.Point]


def choose_lexical(
    config: AdapterConfig, release: Release, encode: Encode, adapters: QueryAdapters
) -> LexicalChoice | None:
    """The config's BM25 weights for the trained ``adapters`` (None without a ``lexical:`` section), chosen on a
    validation pool of every move's sampled validation golds and ``lexical.validation_distractors`` distractors,
    the same queries the maps were chosen on, by the rule of ``training/lexical.py``."""
    spec = config.lexical
    if spec is None:
        return None
    valid = {
        r: read_pairs(release, r, "validation", config.validation_queries, config.seed, encode)
        for r in RELATIONS
    }
    ids, texts = distractor_rows(release, "validation", spec.validation_distractors, config.seed)
    pool = validation_pool(valid, encode(ids, texts) if ids else np.zeros((0, 0), np.float32), texts)
    moves = [r for r in RELATIONS if len(valid[r].queries)]
    bm25 = BM25Retriever(pool.texts)
    words = {r: normalised(bm25.scores(valid[r].query_texts)) for r in moves}
    cosines = {r: {m: adapters.apply(m, valid[r].queries) @ pool.vectors.T for m in moves} for r in moves}
    weights, points = lexical_weights.choose(spec, cosines, words, pool.gold_rows)
    return LexicalChoice(weights, len(pool.vectors), points)


@dataclass
class Fit:
    """One move's trained map at its best validation epoch, and the mean train loss of each epoch."""

    weight: np.ndarray
    bias: np.ndarray
    hidden: tuple[np.ndarray, np.ndarray, np.ndarray] | tuple[()] = ()  # (V, c, U), or () for a linear map
    best_mrr: float = -1.0
    best_score: float = -1.0  # what selection compares: the MRR@10, or it plus the move accuracy
    best_epoch: int = 0
    losses: list[float] = field(default_factory=list)


class _Maps:
    """The trainable maps of one fit: ``W_m = I + S + D_m`` (``shared``) or ``W_m = I + D_m``, a bias per move,
    and with ``hidden`` a residual ``U_m relu(V_m q + c_m)`` per move (``U_m`` starts at zero: the identity)."""

    def __init__(self, moves: list[str], dim: int, hidden: int, variant: str):
        def zeros(*shape: int) -> torch.Tensor:
            return torch.zeros(*shape, requires_grad=True)

        self.shared, self.bias_only, self.eye = variant == "shared", variant == "bias", torch.eye(dim)
        self.common = zeros(dim, dim)
        self.delta = {m: zeros(dim, dim) for m in moves}
        self.bias = {m: zeros(dim) for m in moves}
        self.hidden = {
            m: (
                (torch.randn(hidden, dim) / dim**0.5).requires_grad_(),
                zeros(hidden),
                zeros(dim, hidden),
            )
            for m in (moves if hidden and variant != "bias" else [])
        }

    def params(self) -> list:
        if self.bias_only:
            return list(self.bias.values())
        extra = [t for part in self.hidden.values() for t in part]
        return [*self.delta.values(), *self.bias.values(), *extra] + ([self.common] if self.shared else [])

    def weight(self, m: str):
        return self.eye + self.delta[m] + (self.common if self.shared else 0)

    def apply(self, m: str, q):
        out = q @ self.weight(m).T + self.bias[m]
        if m in self.hidden:
            v, c, u = self.hidden[m]
            out = out + torch.relu(q @ v.T + c) @ u.T
        return torch.nn.functional.normalize(out, dim=1)

    def penalty(self, moves) -> object:
        total = self.common.pow(2).sum() if self.shared else 0
        for m in moves:
            total = total + self.delta[m].pow(2).sum()
            if m in self.hidden:
                total = total + self.hidden[m][2].pow(2).sum()
        return total

    def snapshot(self, m: str) -> tuple[np.ndarray, np.ndarray, tuple]:
        hidden = tuple(t.detach().numpy().astype(np.float32) for t in self.hidden.get(m, ()))
        return self.weight(m).detach().numpy(), self.bias[m].detach().numpy(), hidden


def _fit(
    config: AdapterConfig,
    train: dict[str, Pairs],
    valid: dict[str, Pairs],
    pool: Pool,
    negatives: np.ndarray,
    variant: str,
) -> dict[str, Fit]:
    """Train maps for the moves of ``train`` together (one batch order, one optimiser)."""

    torch.manual_seed(config.seed)
    moves = [r for r in train if len(train[r].queries)]
    dim = train[moves[0]].queries.shape[1]
    maps = _Maps(moves, dim, config.hidden, variant)
    optimiser = torch.optim.Adam(maps.params(), lr=config.lr)
    rng = np.random.default_rng(config.seed)
    queries = torch.from_numpy(np.concatenate([np.asarray(train[m].queries, np.float32) for m in moves]))
    golds = torch.from_numpy(np.concatenate([np.asarray(train[m].golds, np.float32) for m in moves]))
    labels = np.concatenate([np.full(len(train[m].queries), i) for i, m in enumerate(moves)])
    starts = np.cumsum([0] + [len(train[m].queries) for m in moves])
    extra = torch.from_numpy(np.asarray(negatives, np.float32)) if negatives.size else None
    fits = {m: Fit(np.eye(dim, dtype=np.float32), np.zeros(dim, dtype=np.float32)) for m in moves}
    across = config.move_loss > 0 and len(moves) > 1
    counts = np.array([len(train[m].queries) for m in moves], dtype=np.float64)
    # balance: each move's queries weigh as much in total as any other move's (a move with few pairs is heard)
    row_weight = torch.from_numpy(
        (counts.sum() / (len(moves) * counts) if config.balance else np.ones(len(moves))).astype(np.float32)
    )
    for epoch in range(1, config.epochs + 1):
        if config.mix_moves:
            batches = _batches(len(labels), config.batch_size, rng)
        else:
            batches = [
                starts[i] + b
                for i, m in enumerate(moves)
                for b in _batches(len(train[m].queries), config.batch_size, rng)
            ]
        order = rng.permutation(len(batches))
        totals = dict.fromkeys(moves, 0.0)
        for i in order:
            rows = batches[i]
            lab = labels[rows]
            present = [m for j, m in enumerate(moves) if (lab == j).any()]
            q, cols = queries[rows], golds[rows]
            if extra is not None:
                draw = rng.choice(len(extra), min(config.batch_size, len(extra)), replace=False)
                cols = torch.cat([cols, extra[np.sort(draw)]])
            under = {m: maps.apply(m, q) for m in (moves if across else present)}
            mapped = torch.zeros(len(rows), dim)
            for j, m in enumerate(moves):
                if m in present:
                    mask = torch.from_numpy(lab == j)
                    mapped = torch.where(mask[:, None], under[m], mapped)
            target = torch.arange(len(rows))
            each = F.cross_entropy(config.scale * mapped @ cols.T, target, reduction="none")
            weights = row_weight[torch.from_numpy(lab)]
            loss = (each * weights).sum() / weights.sum()
            if across:
                gold_logp = torch.stack(
                    [F.log_softmax(config.scale * under[m] @ cols.T, dim=1)[target, target] for m in moves],
                    dim=1,
                )
                across_each = F.cross_entropy(gold_logp, torch.from_numpy(lab), reduction="none")
                loss = loss + config.move_loss * (across_each * weights).sum() / weights.sum()
            optimiser.zero_grad()
            (loss + config.decay * maps.penalty(present)).backward()
            optimiser.step()
            for j, m in enumerate(moves):
                totals[m] += float(each.detach()[torch.from_numpy(lab == j)].sum())
        snapshots = {m: maps.snapshot(m) for m in moves}
        epoch_maps = QueryAdapters(
            "", dim, {m: w for m, (w, _, _) in snapshots.items()}, {m: b for m, (_, b, _) in snapshots.items()},
            hidden={m: h for m, (_, _, h) in snapshots.items() if h},
        )  # fmt: skip
        accuracy = move_accuracy(epoch_maps, valid, pool) if config.select != "mrr" else {}
        for m in moves:
            fits[m].losses.append(totals[m] / len(train[m].queries))
            if m in valid and len(valid[m].queries):
                mrr = mrr_at_10(epoch_maps.apply(m, valid[m].queries), pool.vectors, pool.gold_rows[m])
                if mrr + accuracy.get(m, 0.0) > fits[m].best_score:
                    w, b, h = snapshots[m]
                    fits[m].weight, fits[m].bias, fits[m].hidden = (
                        w.astype(np.float32),
                        b.astype(np.float32),
                        h,
                    )
                    fits[m].best_mrr, fits[m].best_score = mrr, mrr + accuracy.get(m, 0.0)
                    fits[m].best_epoch = epoch
    return fits


def _batches(n: int, size: int, rng: np.random.Generator) -> list[np.ndarray]:
    """A shuffled epoch of ``n`` rows in batches of ``size`` (a last batch of one query has no negative: dropped)."""
    perm = rng.permutation(n)
    return [perm[i : i + size] for i in range(0, n, size) if len(perm[i : i + size]) > 1]


def write_outputs(
    out: Path,
    config: AdapterConfig,
    release: Release,
    adapters: QueryAdapters,
    choices: list[Choice],
    lexical: LexicalChoice | None = None,
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
    if lexical is not None:
        summary["lexical"] = asdict(lexical)
    write_json(out / SUMMARY, summary)
    return weights


def encoder_for(base: str, cache_dir: str | Path | None, batch_size: int = 64) -> Encode:
    """The base model's (ids, texts) -> vectors, through the embedding cache (queries and documents alike have no
    prompt: the registered adapted model uses the base's setup ``none``)."""

    setup = resolve(base, "none")
    cache = EmbeddingCache(Path(cache_dir) if cache_dir else None)
    retriever = DenseRetriever.load(setup, cache, batch_size)
    return lambda ids, texts: np.asarray(retriever.embed("", texts, f"encoding {len(texts):,} texts"))


def describe(choices: list[Choice], lexical: LexicalChoice | None = None) -> list[str]:
    """One line per move for the command to print (and one for the BM25 weights, when chosen)."""
    weights = ", ".join(f"{m} {w:g}" for m, w in lexical.weights.items()) if lexical else ""
    tail = [f"BM25 weights (validation pool of {lexical.pool:,}): {weights or 'none'}"] if lexical else []
    return [
        f"{c.relation}: {c.variant}"
        + (f" (epoch {c.epoch})" if c.epoch else "")
        + ", validation MRR@10 "
        + ", ".join(f"{v} {s:.4f}" for v, s in c.validation_mrr_at_10.items())
        for c in choices
    ] + tail
