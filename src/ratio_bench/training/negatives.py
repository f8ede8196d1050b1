"""Hard negatives (off by default): one per train pair, from the train partition's candidates.

``bm25`` takes the query's best BM25 hit in the whole train corpus (golds of every relation and distractors);
``distractors`` its best hit among the distractor sentences only. Either way a hit is skipped when it is the
gold, has the gold's or the query's text, or comes from the query's own paper (a sentence next to the query
is often a valid positive, not a negative). A query whose top hits are all excluded gets a seeded random
admissible candidate, and the count is reported.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ratio_bench.core.relations import RELATIONS
from ratio_bench.dataset.release import DatasetError, Release
from ratio_bench.retrieval.bm25 import BM25Retriever
from ratio_bench.training.data import TrainPairs

TOP_K = 32


@dataclass
class HardNegatives:
    texts: list[str]
    random_fallbacks: int


def _train_corpus(root: Path) -> dict[str, list]:
    release = Release.open(root)
    columns = ["id", "text", "paper_id", "role"]
    table = release.corpus("train", columns)
    if not table.num_rows:
        raise DatasetError(
            f"{release.shown}: no train corpus (data/corpus/train-*.parquet) to mine hard negatives from",
            value=release.root,
        )
    return {c: table.column(c).to_pylist() for c in columns}


def mine(root: str | Path, pairs: TrainPairs, source: str, seed: int = 13) -> HardNegatives:
    corpus = _train_corpus(Path(root))
    rows = [i for i, role in enumerate(corpus["role"]) if source == "bm25" or role not in RELATIONS]
    texts = [corpus["text"][i] for i in rows]
    idx, _ = BM25Retriever(texts).search(pairs.queries, TOP_K)
    rng = np.random.default_rng(seed)

    def admissible(j: int, p: int) -> bool:
        row = rows[j]
        return (
            corpus["id"][row] != pairs.gold_ids[p]
            and corpus["paper_id"][row] != pairs.paper_ids[p]
            and texts[j] not in (pairs.golds[p], pairs.queries[p])
        )

    out, fallbacks = [], 0
    for p, hits in enumerate(idx):
        pick = next((int(j) for j in hits if admissible(int(j), p)), None)
        while pick is None:
            j = int(rng.integers(len(rows)))
            pick = j if admissible(j, p) else None
            fallbacks += pick is not None
        out.append(texts[pick])
    return HardNegatives(out, fallbacks)
