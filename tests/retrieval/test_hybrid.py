"""A hybrid model: the dense model's cosine plus, for the moves given a weight, BM25 normalised by the query's
best BM25 score in the pool; the other moves are searched exactly as the dense model searches them."""

from __future__ import annotations

import numpy as np
import pytest
from tests.retrieval.test_retriever import FakeEncoder

from ratio_bench.retrieval.bm25 import BM25Retriever
from ratio_bench.retrieval.registry import REGISTRY, resolve
from ratio_bench.retrieval.retriever import DenseRetriever, HybridRetriever, SavedIndexError, embeds

CORPUS = [
    "sparse retrieval of rare terms",
    "dense retrieval of sentences",
    "graph neural networks for molecules",
    "rare terms in scientific text",
    "molecules of water at night",
]
QUERIES = ["rare terms retrieval", "molecules graphs", "words no document has"]


def test_bm25_scores_every_document_as_its_search_does():
    bm = BM25Retriever(CORPUS)
    every = bm.scores(QUERIES)
    rows, top = bm.search(QUERIES, len(CORPUS))
    assert every.shape == (3, 5) and every.dtype == np.float32
    assert np.allclose(np.take_along_axis(every, rows, axis=1), top)
    assert not every[2].any()  # a query with no known term scores nothing


def _pair(weight: float) -> tuple[DenseRetriever, HybridRetriever]:
    dense = DenseRetriever(FakeEncoder(), "m", "", "")
    hybrid = HybridRetriever(FakeEncoder(), "m", "", "", lexical_weights={"specify": weight})
    for r in (dense, hybrid):
        r.index([str(i) for i in range(len(CORPUS))], CORPUS)
    return dense, hybrid


def test_the_fused_ranking_is_cosine_plus_weighted_normalised_bm25():
    dense, hybrid = _pair(0.5)
    scores, rows = hybrid.search("specify", ["a", "b", "c"], QUERIES, 5)
    q = dense.encode_queries("specify", ["a", "b", "c"], QUERIES)
    words = BM25Retriever(CORPUS).scores(QUERIES)
    top = np.where(words.max(1, keepdims=True) > 0, words.max(1, keepdims=True), 1)
    want = q @ dense.vectors.T + 0.5 * words / top
    assert np.allclose(scores, np.take_along_axis(want, rows, axis=1), atol=1e-6)
    assert (np.diff(scores, axis=1) <= 1e-7).all()  # best first
    assert np.array_equal(rows[2], dense.search("specify", ["c"], QUERIES[2:], 5)[1][0])  # no term: cosine


def test_moves_without_a_weight_rank_as_the_dense_model_and_a_weight_changes_the_answer():
    dense, hybrid = _pair(2.0)
    for move in ("address", "broaden"):
        d, h = dense.search(move, ["a"], QUERIES[:1], 5), hybrid.search(move, ["a"], QUERIES[:1], 5)
        assert np.array_equal(d[1], h[1]) and np.allclose(d[0], h[0])
    assert hybrid.query_variant("specify") != hybrid.query_variant("address")
    assert not np.array_equal(
        dense.search("specify", ["a"], QUERIES[:1], 5)[1], hybrid.search("specify", ["a"], QUERIES[:1], 5)[1]
    )


def test_a_pool_of_rows_gets_its_own_bm25_and_answers_corpus_rows():
    _, hybrid = _pair(0.5)
    pool = np.array([1, 3, 4])
    scores, rows = hybrid.search("specify", ["a"], QUERIES[:1], 3, rows=pool)
    assert set(rows[0]) == {1, 3, 4} and rows[0][0] == 3  # "rare terms in scientific text"
    words = BM25Retriever([CORPUS[j] for j in pool]).scores(QUERIES[:1])
    assert np.isclose(words.max(), hybrid._bm25(pool).scores(QUERIES[:1]).max())
    # the fused scores use the pool's own BM25 statistics, not the whole corpus's
    cosine = hybrid.encode_queries("specify", ["a"], QUERIES[:1]) @ hybrid.vectors[pool].T
    want = cosine + 0.5 * words / words.max()
    assert np.allclose(scores[0], np.sort(want[0])[::-1], atol=1e-6)


def test_the_registered_hybrid_is_move_aware_and_no_dense_only_path_takes_it():
    entry = REGISTRY["all-MiniLM-L6-v2-moves-lex"]
    assert entry.kind == "hybrid" and entry.move_aware and dict(entry.lexical_weights) == {"specify": 0.08}
    # mteb's dense evaluation and a training backbone take dense models only
    assert not embeds("hybrid")
    assert dict(resolve("all-MiniLM-L6-v2-moves-lex").lexical_weights) == {"specify": 0.08}


def test_an_index_built_with_other_weights_is_refused(tmp_path):
    setup = resolve("all-MiniLM-L6-v2-moves-lex")
    entry = {"name": setup.name, "lexical_weights": {"specify": 0.5}}
    with pytest.raises(SavedIndexError, match="lexical_weights"):
        HybridRetriever.restore(tmp_path, entry, setup, CORPUS)


def test_scores_of_every_candidate_are_what_search_ranks():
    dense, hybrid = _pair(0.5)
    ids = ["a", "b", "c"]
    every = hybrid.scores("specify", ids, QUERIES)
    scores, rows = hybrid.search("specify", ids, QUERIES, 5)
    assert every.shape == (3, 5) and np.allclose(np.take_along_axis(every, rows, axis=1), scores)
    assert np.allclose(hybrid.scores("address", ids, QUERIES), dense.scores("address", ids, QUERIES))
