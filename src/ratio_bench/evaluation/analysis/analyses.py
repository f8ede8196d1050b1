"""The spec's analyses: oracle operation filtering (Table 12) and lexical overlap (section 5.4, Figure 4).

Oracle filtering restricts each relation's pool to candidates of that relation (its golds), removing every
distractor and every other relation's gold: if a fine-tuned model only learned to spot operation-style cues, its
advantage would vanish there. Lexical overlap is the Jaccard similarity between the query's and a candidate's
stemmed non-stopword tokens: for the top-k retrieved candidates against the gold, and its rank correlation
(Spearman) with retrieval rank. Mined-role precision is the share of the top k whose role in the release is the
requested move (:mod:`.typed_hits`): a cheap, automatic proxy for how often a model's hits do the move.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ratio_bench.core import extras
from ratio_bench.evaluation.analysis.typed_hits import Hit, PrecisionCell, mined_role_verdict, precision_at_k
from ratio_bench.evaluation.board.render.plots import PlottingUnavailable, pyplot
from ratio_bench.evaluation.scoring.evaluate import ScoreResult, SplitData, score
from ratio_bench.retrieval.bm25 import BM25Tokenizer
from ratio_bench.retrieval.registry import ModelSetup

stats = extras.lazy("scipy.stats")


def relation_pools(data: SplitData) -> dict[str, np.ndarray]:
    """Corpus rows whose role is the relation itself (the oracle pool of each relation)."""
    roles = np.asarray(data.corpus_roles)
    return {rel: np.flatnonzero(roles == rel) for rel in data.queries}


def oracle_filtering(setup: ModelSetup, data: SplitData, **kwargs: Any) -> tuple[ScoreResult, ScoreResult]:
    """(full shared pool, oracle relation-only pool) results for one model."""
    return score(setup, data, **kwargs), score(setup, data, pools=relation_pools(data), **kwargs)


def jaccard(a: set[str], b: set[str]) -> float:
    return len(a & b) / len(a | b) if a or b else 0.0


def lexical_overlap(
    run: dict[str, list[str]], data: SplitData, relation: str, k: int = 10
) -> dict[str, float]:
    """Mean query-candidate Jaccard of the top-k and of the gold, and Spearman(rank, overlap) over the top-k."""

    tok = BM25Tokenizer(1)
    text = dict(zip(data.corpus_ids, data.corpus_texts, strict=True))
    cache: dict[str, set[str]] = {}

    def bag(doc_id: str) -> set[str]:
        if doc_id not in cache:
            cache[doc_id] = set(tok(text[doc_id]))
        return cache[doc_id]

    qids, queries, golds = data.queries[relation]
    top, gold, ranks, overlaps = [], [], [], []
    for qid, query, g in zip(qids, queries, golds, strict=True):
        q = set(tok(query))
        scores = [jaccard(q, bag(d)) for d in run[qid][:k]]
        top.append(float(np.mean(scores)) if scores else 0.0)
        gold.append(jaccard(q, bag(g)))
        ranks += list(range(1, len(scores) + 1))
        overlaps += scores
    rho = stats.spearmanr(ranks, overlaps).statistic if len(set(overlaps)) > 1 else float("nan")
    return {
        f"jaccard_top{k}": float(np.mean(top)),
        "jaccard_gold": float(np.mean(gold)),
        f"top{k}_minus_gold": float(np.mean(top) - np.mean(gold)),
        "spearman_rank_overlap": float(rho),
        "queries": len(qids),
    }


def overlap_table(
    setups: Sequence[ModelSetup], data: SplitData, k: int = 10, **kwargs: Any
) -> dict[str, dict[str, dict[str, float]]]:
    """model -> relation -> overlap statistics (one scoring run per model, ranked lists kept)."""
    out: dict[str, dict[str, dict[str, float]]] = {}
    for setup in setups:
        result = score(setup, data, keep_runs=True, **kwargs)
        out[setup.name] = {rel: lexical_overlap(result.runs[rel], data, rel, k) for rel in result.runs}
    return out


def mined_role_precision(result: ScoreResult, data: SplitData, k: int = 10) -> list[PrecisionCell]:
    """Per relation, the mean share of each query's top ``k`` (of a run kept by ``score(..., keep_runs=True)``)
    whose mined role is that relation; the query's own gold counts when it is retrieved."""
    hits = [
        Hit(result.model, qid, rel, rank, cid)
        for rel, run in result.runs.items()
        for qid, ranked in run.items()
        for rank, cid in enumerate(ranked[:k], 1)
    ]
    roles = dict(zip(data.corpus_ids, data.corpus_roles, strict=True))
    return precision_at_k(hits, mined_role_verdict(roles), k)


def mined_role_table(
    setups: Sequence[ModelSetup], data: SplitData, k: int = 10, **kwargs: Any
) -> dict[str, list[PrecisionCell]]:
    """model -> its mined-role precision@k per relation, with interval and n (one scoring run per model)."""
    return {
        setup.name: mined_role_precision(score(setup, data, keep_runs=True, **kwargs), data, k)
        for setup in setups
    }


def plot_overlap(table: dict[str, dict[str, dict[str, float]]], path, k: int = 10) -> bool:
    """Figure 4 analogue: top-k vs gold overlap per model and relation. Returns False without matplotlib."""
    try:
        plt = pyplot("--plot")
    except PlottingUnavailable:
        return False
    relations = sorted({r for m in table.values() for r in m})
    fig, axes = plt.subplots(1, len(relations), figsize=(4 * len(relations), 3.2), squeeze=False)
    for ax, rel in zip(axes[0], relations, strict=True):
        names = [m for m in table if rel in table[m]]
        x = np.arange(len(names))
        ax.bar(x - 0.2, [table[m][rel][f"jaccard_top{k}"] for m in names], 0.4, label=f"top-{k}")
        ax.bar(x + 0.2, [table[m][rel]["jaccard_gold"] for m in names], 0.4, label="gold")
        ax.set_xticks(x, names, rotation=30, ha="right", fontsize=7)
        ax.set_title(rel)
        ax.set_ylabel("Jaccard with query")
    axes[0][0].legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return True
