"""The Retriever protocol: BM25 and dense models index a corpus and search a move's queries the same way."""

from __future__ import annotations

import numpy as np
import pytest

from ratio_bench.retrieval.cache import EmbeddingCache
from ratio_bench.retrieval.registry import REGISTRY, ModelSetup
from ratio_bench.retrieval.retriever import (
    RETRIEVERS,
    DenseRetriever,
    LexicalRetriever,
    Retriever,
    embeds,
    load_retriever,
)

CORPUS = ["graph neural networks for molecules", "protein folding with attention", "molecules and graphs"]


class FakeEncoder:
    """Bag-of-letters vectors, counting calls, with a prompt that shifts the vector (so prompts matter)."""

    fingerprint = "fake"

    def __init__(self):
        self.calls: list[tuple[str, int]] = []

    def cache_id(self, role):
        return self.fingerprint

    def encode(self, texts, prompt, role="document", progress=None):
        self.calls.append((prompt, len(texts)))
        out = np.zeros((len(texts), 27), np.float32)
        for i, t in enumerate(texts):
            for ch in (prompt + t).lower():
                out[i, ord(ch) - 97 if "a" <= ch <= "z" else 26] += 1
        return out / np.linalg.norm(out, axis=1, keepdims=True)


def test_every_registered_kind_has_a_retriever():
    assert {e.kind for e in REGISTRY.values()} <= set(RETRIEVERS)
    assert not embeds("bm25") and embeds("dense")
    assert RETRIEVERS["bm25"] is LexicalRetriever
    from ratio_bench.retrieval.kinds import EMBEDS

    assert set(EMBEDS) == set(RETRIEVERS) and all(RETRIEVERS[k].embeds is EMBEDS[k] for k in EMBEDS)


def test_bm25_searches_a_pool_with_its_own_index_and_answers_corpus_rows():
    setup = ModelSetup("bm25:unigram", "bm25", None, "unigram", "", "")
    r: Retriever = load_retriever(setup)
    r.index(["a", "b", "c"], CORPUS)
    scores, rows = r.search("address", ["q"], ["molecules graphs"], 2)
    assert set(rows[0]) == {0, 2} and scores.shape == (1, 2)
    _, pooled = r.search("address", ["q"], ["molecules graphs"], 2, rows=np.array([1, 2]))
    assert pooled[0][0] == 2  # a row of the corpus, not of the pool


def test_a_unified_model_encodes_the_corpus_once_and_each_move_with_its_instruction(tmp_path):
    encoder = FakeEncoder()
    r = DenseRetriever(encoder, "m", "doc: ", "q: ", {"broaden": "broaden: "}, EmbeddingCache(tmp_path))
    r.index(["a", "b", "c"], CORPUS)
    r.index(["a", "b", "c"], CORPUS)  # from the cache
    r.search("address", ["q1"], ["molecules"], 1)
    r.search("broaden", ["q1"], ["molecules"], 1, rows=np.array([1, 2]))
    assert encoder.calls == [("doc: ", 3), ("q: ", 1), ("broaden: ", 1)]
    assert r.prompt_for("specify") == "q: "


def test_a_pool_of_rows_is_searched_exactly_even_with_an_ann_searcher():
    """The search service's role prior asks for a move's mined golds only: the index's ANN searcher knows no
    pools, so a pool is ranked exactly over its rows (and the answer names corpus rows)."""
    r = DenseRetriever(FakeEncoder(), "m", "", "")
    r.index(["a", "b", "c"], CORPUS)
    whole = r.search("address", ["q"], ["molecules graphs"], 2)

    def ann(queries, k):  # an ANN index that would answer rows outside the pool
        return whole

    r.use_vectors(r.vectors, ann)
    assert r.search("address", ["q"], ["molecules graphs"], 2)[1].tolist() == whole[1].tolist()
    _, pooled = r.search("address", ["q"], ["molecules graphs"], 1, rows=np.array([1]))
    assert pooled.tolist() == [[1]]


def test_dense_search_needs_an_indexed_corpus():
    with pytest.raises(RuntimeError, match="index"):
        DenseRetriever(FakeEncoder(), "m", "", "").search("address", ["q"], ["x"], 1)


# One setup per registered kind: a new kind without a round trip here fails the first assertion.
ROUND_TRIP = {"bm25": "bm25", "dense": "all-MiniLM-L6-v2", "hybrid": "all-MiniLM-L6-v2-moves-lex"}


@pytest.mark.parametrize("kind", sorted(ROUND_TRIP))
def test_every_kind_saves_its_index_and_restores_it_searching_alike(kind, tmp_path):
    from ratio_bench.retrieval.registry import resolve
    from ratio_bench.retrieval.retriever import retriever_class

    assert set(ROUND_TRIP) == set(RETRIEVERS)
    setup = resolve(ROUND_TRIP[kind])
    built = load_retriever(setup, EmbeddingCache(tmp_path / "c", progress=False))
    built.index(["a", "b", "c"], CORPUS)
    entry = {"kind": kind, "name": setup.name, "ref": ROUND_TRIP[kind], "setup": setup.setup}
    entry |= built.describe() | built.save(tmp_path, "k")
    assert all(isinstance(entry[f], str) for f in retriever_class(kind).ENTRY_TEXT)
    assert all((tmp_path / entry[f]).exists() for f in retriever_class(kind).ENTRY_PATHS if f in entry)
    restored = retriever_class(kind).restore(tmp_path, entry, setup, CORPUS)
    for move in ("address", "broaden", "specify"):  # the hybrid fuses BM25 into Specify's score only
        want, got = (
            built.search(move, ["q"], ["graphs of molecules"], 3),
            restored.search(move, ["q"], ["graphs of molecules"], 3),
        )
        assert np.array_equal(want[1], got[1]) and np.allclose(want[0], got[0], atol=1e-5)


def test_a_saved_index_that_does_not_fit_is_refused_with_the_field(tmp_path):
    from ratio_bench.retrieval.registry import resolve
    from ratio_bench.retrieval.retriever import SavedIndexError, retriever_class

    setup = resolve("bm25")
    built = load_retriever(setup)
    built.index(["a", "b", "c"], CORPUS)
    entry = {"kind": "bm25", "name": setup.name, "setup": setup.setup} | built.save(tmp_path, "k")
    with pytest.raises(SavedIndexError, match=r"^bm25 indexes 3 documents for 2 candidates"):
        retriever_class("bm25").restore(tmp_path, entry, setup, CORPUS[:2])
    with pytest.raises(SavedIndexError, match="^kind: 'sparse'"):
        retriever_class("sparse")


class RoutedEncoder(FakeEncoder):
    """A Router model's stand-in: each role has its own route, so its own cache key; ``routes`` counts calls."""

    def __init__(self):
        super().__init__()
        self.routes: list[tuple[str, int]] = []

    def cache_id(self, role):
        return f"{self.fingerprint}:{role}"

    def encode(self, texts, prompt, role="document", progress=None):
        self.routes.append((role, len(texts)))
        return super().encode(texts, prompt, role, progress)


def test_warming_a_routed_model_caches_its_query_and_document_routes_apart(tmp_path):
    """The engine's one pass over the union of texts keeps a Router model's routes apart: a query that is also a
    candidate is encoded again by the query route, and the index and the search then read both from the cache."""
    encoder = RoutedEncoder()
    r = DenseRetriever(encoder, "m", "", "", cache=EmbeddingCache(tmp_path))
    r.warm(CORPUS, {"address": [CORPUS[0]]})
    assert encoder.routes == [("document", 3), ("query", 1)]
    r.index(["a", "b", "c"], CORPUS)
    r.search("address", ["q"], [CORPUS[0]], 1)
    assert encoder.routes == [("document", 3), ("query", 1)]  # nothing more encoded


def test_warming_an_unrouted_model_encodes_a_text_once_whatever_its_role(tmp_path):
    encoder = RoutedEncoder()
    encoder.cache_id = lambda role: encoder.fingerprint  # one route: queries and documents share vectors
    r = DenseRetriever(encoder, "m", "", "", cache=EmbeddingCache(tmp_path))
    r.warm(CORPUS, {"address": [CORPUS[0], "a new query"]})
    assert encoder.routes == [("document", 4)]  # one pass: the corpus and the one query it lacks


def test_adapters_map_the_cached_base_query_vectors_and_are_recorded_in_the_index(tmp_path):
    """The cache stores the base query vectors (keyed by model, prompt, text); a move's adapter is applied after
    it, so an adapted and a plain retriever share one cache entry, and an index names the adapters' hash."""
    from ratio_bench.retrieval.adapters import QueryAdapters

    swap = np.eye(27, dtype=np.float32)[::-1]  # address: a map that reverses the letters' axes
    adapters = QueryAdapters("fake", 27, {"address": swap}, {"address": np.zeros(27, np.float32)}, "ab" * 32)
    cache = EmbeddingCache(tmp_path, progress=False)
    plain = DenseRetriever(FakeEncoder(), "m", "", "", cache=cache)
    adapted = DenseRetriever(FakeEncoder(), "m", "", "", cache=cache, adapters=adapters)
    base = plain.encode_queries("address", ["q"], ["graph networks"])
    mapped = adapted.encode_queries("address", ["q"], ["graph networks"])
    assert adapted.encoder.calls == []  # the base vector came from the cache the plain one filled
    assert np.allclose(mapped, base[:, ::-1]) and not np.allclose(mapped, base)
    assert np.array_equal(adapted.encode_queries("broaden", ["q"], ["graph networks"]), base)  # no map: base
    assert adapted.query_variant("address") != adapted.query_variant("broaden")
    assert adapted.describe()["adapters_sha256"] == "ab" * 32 and "adapters_sha256" not in plain.describe()
