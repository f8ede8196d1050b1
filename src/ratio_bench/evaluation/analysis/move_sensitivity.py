"""Move sensitivity: does a model rank a query's gold best under the move the query asks for?

For each test query of relation r with gold g, g is ranked in the split's shared candidate pool under each move
m: a unified model with m's instruction, a move-aware model with m's adapter (and, a hybrid one, m's BM25
weight), or a trio of specialists with m's model. Per relation we report move
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
from ratio_bench.retrieval.retriever import DenseRetriever, retriever_class

Scorer = Callable[[str, list[str], list[str]], np.ndarray]  # (relation, ids, texts) -> (queries, pool) scores


def gold_ranks(corpus: np.ndarray, queries: np.ndarray, gold_rows: np.ndarray, chunk: int = 1024):
    """(1-based rank of each query's gold, each query's top-1 corpus row); a rank counts the strictly higher
    scores, so a tie with another candidate goes the gold's way."""
    return _ranks(lambda s: queries[s] @ corpus.T, len(queries), gold_rows, chunk)


def score_ranks(sims: np.ndarray, gold_rows: np.ndarray) -> np.ndarray:
    """The 1-based rank of each row's gold column in a (queries, pool) score block: the strictly higher scores
    plus one, so a tie with another candidate goes the gold's way."""
    gold = sims[np.arange(len(sims)), gold_rows]
    return (sims > gold[:, None]).sum(axis=1) + 1


def tie_shared_accuracy(table: np.ndarray, right: int) -> float:
    """The share of rows whose column ``right`` holds the best (lowest) rank of a (queries, moves) rank table,
    a tie between moves counting 1 / (moves tied): the mean of a random tie-break."""
    best = table == table.min(axis=1, keepdims=True)
    return float(np.mean(best[:, right] / best.sum(axis=1)))


def _ranks(scores: Callable[[slice], np.ndarray], n: int, gold_rows: np.ndarray, chunk: int):
    ranks, top1 = np.empty(n, np.int64), np.empty(n, np.int64)
    for s in range(0, n, chunk):
        sims = scores(slice(s, s + chunk))
        ranks[s : s + chunk] = score_ranks(sims, gold_rows[s : s + chunk])
        top1[s : s + chunk] = sims.argmax(axis=1)
    return ranks, top1


def _ranks_under(scorer: Scorer, rel: str, ids, texts, gold_rows: np.ndarray, chunk: int):
    """Gold ranks and top-1 rows of a relation's queries under one move's scorer, ``chunk`` queries at a time."""
    return _ranks(lambda s: scorer(rel, list(ids[s]), list(texts[s])), len(ids), gold_rows, chunk)


def vector_scorer(corpus: np.ndarray, queries: Callable[[str, list[str], list[str]], np.ndarray]) -> Scorer:
    """A move's scores as inner products of its query vectors (``queries``) with the pool's vectors."""
    return lambda rel, ids, texts: queries(rel, ids, texts) @ corpus.T


def measure(data: SplitData, scorers: dict[str, Scorer], seed: int = 13, chunk: int = 1024) -> dict[str, Any]:
    """``scorers`` maps each move to its scores of the split's pool for a relation's queries, ``chunk`` queries
    at a time (a dense model: :func:`vector_scorer`; a hybrid model adds BM25 to some moves' scores)."""
    moves = list(scorers)
    row = {cid: j for j, cid in enumerate(data.corpus_ids)}
    owner = {row[g]: rel for rel, (_, _, golds) in data.queries.items() for g in golds}
    rng = np.random.default_rng(seed)
    report: dict[str, Any] = {"moves": moves, "chance_accuracy": 1 / len(moves), "relations": {}}
    for rel, (qids, texts, golds) in data.queries.items():
        if not qids or rel not in scorers:
            continue
        gold_rows = np.array([row[g] for g in golds])
        ranks, tops = {}, {}
        for m in moves:
            ranks[m], tops[m] = _ranks_under(scorers[m], rel, qids, texts, gold_rows, chunk)
        table = np.stack([ranks[m] for m in moves], axis=1)  # (queries, moves)
        best = table == table.min(axis=1, keepdims=True)
        right = moves.index(rel)
        expected = tie_shared_accuracy(table, right)
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


def model_scorers(
    setups: dict[str, ModelSetup], data: SplitData, cache: EmbeddingCache, batch_size: int = 64
) -> dict[str, Scorer]:
    """Per move: its model's scores of the split's pool (each distinct model loaded and its corpus encoded once).

    ``setups`` maps each move to a unified model (the same setup for every move: its instruction for that
    move is used), to that move's specialist, or to one hybrid model (BM25 fused into some moves' scores).
    """
    retrievers: dict[ModelSetup, DenseRetriever] = {}
    out = {}
    for move, setup in setups.items():
        if setup not in retrievers:
            retrievers[setup] = retriever_class(setup.kind).load(setup, cache, batch_size)
            retrievers[setup].index(data.corpus_ids, data.corpus_texts)
        r = retrievers[setup]
        out[move] = lambda rel, ids, texts, r=r, move=move: r.scores(move, ids, texts)
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
