"""Move sensitivity: does a model rank a query's gold best under the move the query asks for?

For each test query of relation r with gold g, g is ranked in the split's shared candidate pool under each move
m: a unified model with m's instruction, or a trio of specialists with m's model. Per relation we report move
accuracy (g ranks best under r; ties between moves broken at random, seeded, with the exact expectation of
that draw next to it), g's mean reciprocal rank under the right move and under the wrong ones, and cross-move
confusion (the share of queries whose top-1 under r is the gold of another relation's query). Ranks, not
scores, are compared, so specialists with different score scales compare fairly. A model that ignores the move
ranks g equally under every move: accuracy is chance (1 / number of moves) and right and wrong MRR are equal.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ratio_bench.evaluation.scoring.evaluate import SplitData
from ratio_bench.retrieval.cache import EmbeddingCache
from ratio_bench.retrieval.registry import ModelSetup
from ratio_bench.retrieval.retriever import DenseRetriever


def gold_ranks(corpus: np.ndarray, queries: np.ndarray, gold_rows: np.ndarray, chunk: int = 1024):
    """(1-based rank of each query's gold, each query's top-1 corpus row); ties count against the gold."""
    ranks, top1 = np.empty(len(queries), np.int64), np.empty(len(queries), np.int64)
    for s in range(0, len(queries), chunk):
        sims = queries[s : s + chunk] @ corpus.T
        gold = sims[np.arange(len(sims)), gold_rows[s : s + chunk]]
        ranks[s : s + chunk] = (sims > gold[:, None]).sum(axis=1) + 1
        top1[s : s + chunk] = sims.argmax(axis=1)
    return ranks, top1


def measure(
    data: SplitData,
    vectors: dict[str, tuple[np.ndarray, Callable[[str, list[str], list[str]], np.ndarray]]],
    seed: int = 13,
) -> dict[str, Any]:
    """``vectors`` maps each move to (corpus vectors, queries(relation, ids, texts) -> vectors) under it."""
    moves = list(vectors)
    row = {cid: j for j, cid in enumerate(data.corpus_ids)}
    owner = {row[g]: rel for rel, (_, _, golds) in data.queries.items() for g in golds}
    rng = np.random.default_rng(seed)
    report: dict[str, Any] = {"moves": moves, "chance_accuracy": 1 / len(moves), "relations": {}}
    for rel, (qids, texts, golds) in data.queries.items():
        if not qids or rel not in vectors:
            continue
        gold_rows = np.array([row[g] for g in golds])
        ranks, tops = {}, {}
        for m in moves:
            corpus, encode_queries = vectors[m]
            ranks[m], tops[m] = gold_ranks(corpus, encode_queries(rel, qids, texts), gold_rows)
        table = np.stack([ranks[m] for m in moves], axis=1)  # (queries, moves)
        best = table == table.min(axis=1, keepdims=True)
        right = moves.index(rel)
        expected = float(np.mean(best[:, right] / best.sum(axis=1)))
        drawn = np.array([rng.choice(np.flatnonzero(b)) for b in best])
        wrong = [m for m in moves if m != rel]
        report["relations"][rel] = {
            "queries": len(qids),
            "move_accuracy": float(np.mean(drawn == right)),
            "move_accuracy_expected": expected,
            "mrr_right_move": float(np.mean(1 / ranks[rel])),
            "mrr_wrong_moves": float(np.mean([np.mean(1 / ranks[m]) for m in wrong])),
            "cross_move_confusion": float(np.mean([owner.get(j, rel) != rel for j in tops[rel]])),
        }
    return report


def model_vectors(
    setups: dict[str, ModelSetup], data: SplitData, cache: EmbeddingCache, batch_size: int = 64
) -> dict[str, tuple[np.ndarray, Callable]]:
    """Per move: the corpus under the move's model (encoded once per model) and its query encoder.

    ``setups`` maps each move to a unified model (the same setup for every move: its instruction for that
    move is used) or to that move's specialist.
    """
    retrievers: dict[ModelSetup, DenseRetriever] = {}  # one per distinct setup, its corpus encoded once
    out = {}
    for move, setup in setups.items():
        if setup not in retrievers:
            retrievers[setup] = DenseRetriever.load(setup, cache, batch_size)
            retrievers[setup].index(data.corpus_ids, data.corpus_texts)
        r = retrievers[setup]

        def queries(rel, ids, texts, r=r, move=move):
            return r.encode_queries(move, ids, texts)

        out[move] = (r.vectors, queries)
    return out


def markdown(report: dict[str, Any], title: str) -> str:
    chance = report["chance_accuracy"]
    lines = [
        f"## Move sensitivity: {title}",
        "",
        f"A model that ignores the move scores chance accuracy ({chance:.3f}) and equal right/wrong MRR.",
        "",
        "| relation | queries | move accuracy | chance | expected (ties) | MRR right move | MRR wrong moves "
        "| cross-move confusion |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for rel, v in report["relations"].items():
        lines.append(
            f"| {rel} | {v['queries']} | {v['move_accuracy']:.3f} | {chance:.3f} | "
            f"{v['move_accuracy_expected']:.3f} | {v['mrr_right_move']:.4f} | {v['mrr_wrong_moves']:.4f} | "
            f"{v['cross_move_confusion']:.3f} |"
        )
    return "\n".join(lines) + "\n"
