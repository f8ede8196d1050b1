"""The batch sampler: no text twice in a batch, every pair once per epoch, seeded, length-grouped."""

from __future__ import annotations

import random

import numpy as np
import pytest

from ratio_bench.training.sampler import NoSharedTextBatchSampler, text_ids


def _random_pairs(rng: random.Random, n: int, vocabulary: int) -> tuple[list[str], list[str]]:
    """Pairs drawn from a small pool of texts, so texts recur across pairs and across the two columns."""
    pool = [f"text {i}" for i in range(vocabulary)]
    queries, golds = [], []
    for _ in range(n):
        q, g = rng.sample(pool, 2)
        queries.append(q)
        golds.append(g)
    return queries, golds


@pytest.mark.parametrize("seed", range(12))
def test_no_text_twice_and_every_pair_once(seed):
    rng = random.Random(seed)
    n, batch = rng.randint(20, 300), rng.choice([2, 4, 8, 16, 32])
    queries, golds = _random_pairs(rng, n, vocabulary=rng.randint(n // 2, 3 * n))
    texts = text_ids([queries, golds])
    lengths = np.array([rng.randint(5, 80) for _ in range(n)]) if seed % 2 else None
    sampler = NoSharedTextBatchSampler(
        list(range(n)), batch, False, texts, lengths, pool_batches=4, seed=seed
    )
    for epoch in range(2):
        sampler.set_epoch(epoch)
        batches = list(sampler)
        assert len(batches) == len(sampler)
        for b in batches:
            seen = [t for i in b for t in (queries[i], golds[i])]
            assert len(seen) == len(set(seen)), b
            assert len(b) <= batch
        assert sorted(i for b in batches for i in b) == list(range(n))


def test_seeded_per_epoch_and_resumable():
    rng = random.Random(0)
    queries, golds = _random_pairs(rng, 200, 1000)
    texts = text_ids([queries, golds])

    def batches(seed: int, epoch: int) -> list[list[int]]:
        s = NoSharedTextBatchSampler(list(range(200)), 16, False, texts, seed=seed)
        s.set_epoch(epoch)
        return list(s)

    assert batches(1, 0) == batches(1, 0)  # a resumed run replays the same order
    assert batches(1, 0) != batches(1, 1)
    assert batches(1, 0) != batches(2, 0)


def test_drop_last_keeps_only_full_batches():
    texts = text_ids([[f"q{i}" for i in range(50)], [f"g{i}" for i in range(50)]])
    batches = list(NoSharedTextBatchSampler(list(range(50)), 8, True, texts))
    assert len(batches) == 6 and all(len(b) == 8 for b in batches)


def test_length_grouping_reduces_padding():
    rng = np.random.default_rng(0)
    n, batch = 2000, 32
    lengths = rng.integers(10, 200, size=n)
    texts = text_ids([[f"q{i}" for i in range(n)], [f"g{i}" for i in range(n)]])

    def padded_tokens(group: bool) -> int:
        s = NoSharedTextBatchSampler(list(range(n)), batch, False, texts, lengths if group else None, seed=3)
        return sum(len(b) * int(lengths[b].max()) for b in s)

    assert padded_tokens(True) < 0.7 * padded_tokens(False)
    assert padded_tokens(True) >= lengths.sum()
