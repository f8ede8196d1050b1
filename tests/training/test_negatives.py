"""Hard negatives: BM25 hits from the train partition, never the gold, the query or the query's own paper."""

from __future__ import annotations

import pyarrow.parquet as pq
import pytest

from ratio_bench.core.relations import RELATIONS
from ratio_bench.training.data import load_train_pairs
from ratio_bench.training.negatives import mine


@pytest.mark.parametrize("source", ["bm25", "distractors"])
def test_hard_negatives_are_admissible(tiny_release, source):
    pairs = load_train_pairs(tiny_release, "address")
    corpus = pq.read_table(tiny_release / "data" / "corpus" / "train-00000-of-00001.parquet").to_pylist()
    by_text = {row["text"]: row for row in corpus}
    hard = mine(tiny_release, pairs, source)
    assert len(hard.texts) == len(pairs)
    for i, negative in enumerate(hard.texts):
        row = by_text[negative]
        assert negative not in (pairs.golds[i], pairs.queries[i])
        assert row["paper_id"] != pairs.paper_ids[i] and row["id"] != pairs.gold_ids[i]
        if source == "distractors":
            assert row["role"] not in RELATIONS
    # bm25 ranks other pairs' golds too: they share words with the query ("train", "gold" excluded by paper)
    if source == "bm25":
        assert any(by_text[n]["role"] == "address" for n in hard.texts)
