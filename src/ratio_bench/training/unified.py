"""One retriever for all three moves: relation-balanced pairs, per-relation batches, mean validation MRR@10.

A unified config (``relation: all``) trains one model on every relation's train pairs with the move's
instruction in front of the query (``instructions:``; default ``"<relation>: "``); the document prompt is the
setup's and is shared, so the candidate corpus is encoded once per validation pass. Relations are balanced by
temperature sampling over their sizes, p_r proportional to n_r^(1/T) (default T = 3: on the dev release
Address/Broaden/Specify hold 16/1/83% of the pairs and are drawn 33/12/56%); an epoch is ``max_train_pairs``
such draws (each pair of a relation repeated as evenly as its share needs). With ``negatives: within`` every
batch comes from one relation; with ``across`` batches mix relations, so a query's negatives include other
moves' golds (which teaches the model to tell the moves apart). The no-text-twice rule holds in both. Validation
is the specialists' evaluator over every relation (:class:`~ratio_bench.training.evaluator.RetrievalEvaluator`:
each relation's figures and their mean, which selects the checkpoint).
"""

from __future__ import annotations

import numpy as np

from ratio_bench.training.data import TrainPairs, load_train_pairs
from ratio_bench.training.sampler import NoSharedTextBatchSampler, fill_batches


def relation_shares(sizes: dict[str, int], temperature: float) -> dict[str, float]:
    """p_r proportional to n_r^(1/T): T = 1 keeps the natural mix, large T tends to uniform."""
    weights = {r: n ** (1.0 / temperature) for r, n in sizes.items()}
    total = sum(weights.values())
    return {r: w / total for r, w in weights.items()}


def draw_counts(sizes: dict[str, int], total: int, temperature: float) -> dict[str, int]:
    """Pairs drawn per relation, summing to ``total`` (largest remainders get the leftover draws)."""
    shares = relation_shares(sizes, temperature)
    raw = {r: total * p for r, p in shares.items()}
    counts = {r: int(v) for r, v in raw.items()}
    for r in sorted(raw, key=lambda r: counts[r] - raw[r])[: total - sum(counts.values())]:
        counts[r] += 1
    return counts


def draw_rows(n: int, m: int, rng: np.random.Generator) -> np.ndarray:
    """``m`` row numbers of ``n``: every row m // n times, the remainder without replacement (sorted)."""
    rows = np.concatenate([np.tile(np.arange(n), m // n), rng.choice(n, size=m % n, replace=False)])
    return np.sort(rows)


class RelationBatchSampler(NoSharedTextBatchSampler):
    """No-text-twice batches, each from one relation (``relations`` holds each row's relation number)."""

    def __init__(self, *args, relations: np.ndarray, **kwargs):
        super().__init__(*args, **kwargs)
        self.relations = np.asarray(relations)

    def _batches(self, epoch: int) -> list[list[int]]:
        if self._cache is not None and self._cache[0] == epoch:
            return self._cache[1]
        rng = np.random.default_rng([self.seed, epoch])
        stream = np.array(self._stream(rng), dtype=np.int64)
        batches: list[list[int]] = []
        for r in np.unique(self.relations):
            own = stream[self.relations[stream] == r].tolist()
            batches += fill_batches(own, self.texts, self.batch_size, self.drop_last)
        batches = [batches[j] for j in rng.permutation(len(batches))]
        self._cache = (epoch, batches)
        return batches


def load_unified_pairs(root, config) -> tuple[TrainPairs, np.ndarray]:
    """The epoch's drawn pairs of every relation, each query behind its relation's instruction.

    Returns the pairs and each row's relation number (its index in ``config.relations``). The epoch holds
    ``max_train_pairs`` draws (default: as many as the relations have pairs), shared out by temperature.
    """
    parts = {r: load_train_pairs(root, r) for r in config.relations}
    sizes = {r: len(p) for r, p in parts.items()}
    counts = draw_counts(sizes, config.max_train_pairs or sum(sizes.values()), config.temperature)
    rng = np.random.default_rng(config.seed)
    cols: dict[str, list[str]] = {
        "query_ids": [],
        "queries": [],
        "gold_ids": [],
        "golds": [],
        "paper_ids": [],
    }
    labels: list[int] = []
    for k, rel in enumerate(config.relations):
        pairs, prompt = parts[rel], config.instructions[rel]
        for i in draw_rows(sizes[rel], counts[rel], rng).tolist():
            cols["query_ids"].append(f"{rel}/{pairs.query_ids[i]}")
            cols["queries"].append(prompt + pairs.queries[i])
            cols["gold_ids"].append(pairs.gold_ids[i])
            cols["golds"].append(pairs.golds[i])
            cols["paper_ids"].append(pairs.paper_ids[i])
            labels.append(k)
    return TrainPairs(**cols, available=sum(sizes.values())), np.array(labels)
