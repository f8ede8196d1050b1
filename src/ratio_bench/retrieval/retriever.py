"""The one shape every retriever has: index a corpus once, then rank it for queries of any move.

Scoring, move sensitivity, the mteb bridge and the search service use BM25, a dense specialist and a unified
model (one set of vectors, one instruction per move) only through :class:`Retriever`, so a new kind of retriever
is one class here and one entry in :data:`RETRIEVERS`, where a resolved setup's ``kind`` is looked up; nowhere
else branches on it. Dense vectors go through the embedding cache in one place, :meth:`DenseRetriever.embed`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import ClassVar, Protocol

import numpy as np

from ratio_bench.retrieval.adapters import QueryAdapters
from ratio_bench.retrieval.bm25 import BM25Retriever
from ratio_bench.retrieval.cache import EmbeddingCache
from ratio_bench.retrieval.encoder import DenseEncoder, Role
from ratio_bench.retrieval.registry import ModelSetup
from ratio_bench.retrieval.search import exact_search

Searcher = Callable[[np.ndarray, int], tuple[np.ndarray, np.ndarray]]  # (query vectors, k) -> (scores, rows)


class Retriever(Protocol):
    """A model that ranks corpus rows for the queries of a move.

    ``embeds`` says whether it represents texts as vectors: what fine-tuning, mteb, ANN indexes and move
    sensitivity need. :meth:`search` returns (scores, corpus rows), both (queries, k), best first.
    """

    name: str
    embeds: ClassVar[bool]

    def index(self, ids: Sequence[str], texts: Sequence[str]) -> None: ...

    def prompt_for(self, move: str) -> str: ...

    def query_variant(self, move: str) -> tuple[str, str]: ...

    def search(
        self, move: str, ids: Sequence[str], texts: Sequence[str], k: int, rows: np.ndarray | None = None
    ) -> tuple[np.ndarray, np.ndarray]: ...


class LexicalRetriever:
    """BM25 (bm25s) over the corpus, or over a pool of its rows: a pool gets its own index, term statistics
    and all, as if it were the whole corpus; every move reads the same index."""

    embeds: ClassVar[bool] = False

    def __init__(self, name: str, setup: str):
        self.name, self.setup = name, setup
        self.texts: list[str] = []
        self._indexes: dict[bytes, BM25Retriever] = {}  # rows -> its index

    @classmethod
    def load(cls, setup: ModelSetup, cache: EmbeddingCache | None = None, batch_size: int = 64):
        return cls(setup.name, setup.setup)

    def index(self, ids: Sequence[str], texts: Sequence[str]) -> None:
        self.texts, self._indexes = list(texts), {}

    def use_index(self, texts: Sequence[str], bm25: BM25Retriever) -> None:
        """Search the whole corpus ``texts`` with an index built earlier over it (a saved one)."""
        self.texts = list(texts)
        self._indexes = {np.arange(len(self.texts)).tobytes(): bm25}

    def prompt_for(self, move: str) -> str:
        return ""

    def query_variant(self, move: str) -> tuple[str, str]:
        return ("", "")

    def search(self, move, ids, texts, k, rows=None):
        rows = np.arange(len(self.texts)) if rows is None else rows
        key = rows.tobytes()
        if key not in self._indexes:
            self._indexes[key] = BM25Retriever([self.texts[j] for j in rows], self.setup)
        found, scores = self._indexes[key].search(texts, k)
        return scores, rows[found]


class DenseRetriever:
    """A sentence-transformers model: the corpus under the document prompt, queries under the move's prompt
    (a unified model's instruction for that move; a specialist's one query prompt) and, for a model with per-move
    query adapters, mapped by the move's adapter; exact inner-product search unless a ``searcher`` (the service's
    ANN index) is given."""

    embeds: ClassVar[bool] = True

    def __init__(
        self,
        encoder: DenseEncoder,
        name: str,
        document_prompt: str,
        query_prompt: str,
        query_prompts: dict[str, str] | None = None,
        cache: EmbeddingCache | None = None,
        adapters: QueryAdapters | None = None,
    ):
        self.encoder, self.name, self.cache = encoder, name, cache
        self.document_prompt, self.query_prompt = document_prompt, query_prompt
        self.query_prompts = query_prompts or {}
        self.adapters = adapters
        self.vectors: np.ndarray | None = None
        self.searcher: Searcher | None = None

    @classmethod
    def load(cls, setup: ModelSetup, cache: EmbeddingCache | None = None, batch_size: int = 64):
        return cls.of(DenseEncoder.load(setup, batch_size=batch_size), setup, cache)

    @classmethod
    def of(cls, encoder: DenseEncoder, setup: ModelSetup, cache: EmbeddingCache | None = None):
        """A loaded encoder with a resolved setup's prompts."""
        adapters = QueryAdapters.load(setup.adapters) if setup.adapters else None
        return cls(
            encoder,
            setup.name,
            setup.document_prompt,
            setup.query_prompt,
            dict(setup.query_prompts),
            cache,
            adapters,
        )

    def embed(
        self,
        prompt: str,
        ids: Sequence[str],
        texts: Sequence[str],
        label: str = "encoding",
        role: Role = "document",
    ) -> np.ndarray:
        """Vectors of ``texts`` under ``prompt`` (a routed model: through ``role``'s route), from the embedding
        cache when there is one (its progress bar titled ``label``: the corpus and the queries are told apart)."""
        if self.cache is None:
            return self.encoder.encode(texts, prompt, role)
        vectors = self.cache.get_or_encode(
            self.encoder.cache_id(role),
            prompt,
            ids,
            texts,
            lambda t, progress: self.encoder.encode(t, prompt, role, progress),
            label,
            reports_progress=True,
        )
        return np.asarray(vectors)

    def embed_corpus(self, ids: Sequence[str], texts: Sequence[str]) -> np.ndarray:
        return self.embed(self.document_prompt, ids, texts, f"encoding corpus ({len(texts):,} candidates)")

    def index(self, ids: Sequence[str], texts: Sequence[str]) -> None:
        self.use_vectors(self.embed_corpus(ids, texts))

    def use_vectors(self, vectors: np.ndarray, searcher: Searcher | None = None) -> None:
        """Search ``vectors`` (an index's saved corpus) with ``searcher``, or exactly."""
        self.vectors, self.searcher = vectors, searcher

    def prompt_for(self, move: str) -> str:
        return self.query_prompts.get(move, self.query_prompt)

    def query_variant(self, move: str) -> tuple[str, str]:
        """What a move's query vectors depend on besides the text: its prompt, and its adapter (if it has one);
        moves with equal variants rank alike, so a caller may search once for them."""
        adapted = self.adapters is not None and move in self.adapters.weights
        return (self.prompt_for(move), move if adapted else "")

    def encode_queries(self, move: str, ids: Sequence[str], texts: Sequence[str]) -> np.ndarray:
        """The move's query vectors: the base encoding under its prompt (cached; a routed model's query route),
        then its adapter, if any."""
        label = f"encoding {move} queries ({len(texts):,})"
        vectors = self.embed(self.prompt_for(move), ids, texts, label, role="query")
        return self.adapters.apply(move, vectors) if self.adapters is not None else vectors

    def search(self, move, ids, texts, k, rows=None):
        if self.vectors is None:
            raise RuntimeError("index() the corpus before searching it")
        queries = self.encode_queries(move, ids, texts)
        if self.searcher is not None:
            return self.searcher(queries, k)
        if rows is None:
            return exact_search(self.vectors, queries, k)
        scores, found = exact_search(self.vectors[rows], queries, k)
        return scores, rows[found]


RETRIEVERS: dict[str, type[LexicalRetriever] | type[DenseRetriever]] = {
    "bm25": LexicalRetriever,
    "dense": DenseRetriever,
}


def embeds(kind: str) -> bool:
    """Whether a model of this kind (a setup's, a registry entry's or an index manifest's) has vectors."""
    return RETRIEVERS[kind].embeds


def load_retriever(setup: ModelSetup, cache: EmbeddingCache | None = None, batch_size: int = 64) -> Retriever:
    """The retriever of a resolved setup (its weights loaded; nothing indexed yet)."""
    return RETRIEVERS[setup.kind].load(setup, cache, batch_size)
