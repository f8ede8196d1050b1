"""The one shape every retriever has: index a corpus once, rank it for queries of any move, save that index.

Scoring, move sensitivity, the mteb bridge, ``ratio index`` and the search service use BM25, a dense specialist
and a unified model (one set of vectors, one instruction per move) only through :class:`Retriever`, so a new
kind of retriever is one class here and one line in :data:`RETRIEVERS`, where a setup's or an index manifest's
``kind`` is looked up; nowhere else branches on it. A retriever describes itself for an index manifest
(:meth:`Retriever.describe`), writes its index into an index folder (:meth:`Retriever.save`) and is made again
from one (:meth:`Retriever.restore`). Dense vectors go through the embedding cache in one place,
:meth:`DenseRetriever.embed`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar, Protocol

import numpy as np

from ratio_bench.core.errors import RatioError
from ratio_bench.retrieval.adapters import QueryAdapters
from ratio_bench.retrieval.bm25 import BM25Retriever, normalised
from ratio_bench.retrieval.cache import EmbeddingCache
from ratio_bench.retrieval.encoder import DenseEncoder, Role
from ratio_bench.retrieval.kinds import EMBEDS, embeds  # noqa: F401 - embeds: the kinds' flag, re-exported
from ratio_bench.retrieval.registry import ModelSetup
from ratio_bench.retrieval.search import exact_search

Searcher = Callable[[np.ndarray, int], tuple[np.ndarray, np.ndarray]]  # (query vectors, k) -> (scores, rows)
# (vectors, manifest entry) -> a searcher over them: the service's ANN or flat faiss index
SearcherFor = Callable[[np.ndarray, dict[str, Any]], Searcher]


class SavedIndexError(RatioError, ValueError):
    """A saved index (a manifest entry and its files) that cannot be restored; the message starts with the
    entry's field at fault (``bm25 cannot be read ...``), so a caller can prefix where the entry is."""


class Retriever(Protocol):
    """A model that ranks corpus rows for the queries of a move, and whose index can be saved and restored.

    ``embeds`` says whether it represents texts as vectors: what fine-tuning, mteb, ANN indexes and move
    sensitivity need. :meth:`search` returns (scores, corpus rows), both (queries, k), best first.
    ``ENTRY_TEXT`` are the manifest fields an index entry of this kind must hold as strings, ``ENTRY_PATHS``
    the fields naming its files inside the index folder (checked before anything is read).
    """

    name: str
    embeds: ClassVar[bool]
    ENTRY_TEXT: ClassVar[tuple[str, ...]]
    ENTRY_PATHS: ClassVar[tuple[str, ...]]

    @classmethod
    def load(
        cls, setup: ModelSetup, cache: EmbeddingCache | None = None, batch_size: int = 64
    ) -> Retriever: ...

    def warm(self, corpus: Sequence[str], queries: dict[str, Sequence[str]]) -> None: ...

    def index(self, ids: Sequence[str], texts: Sequence[str]) -> None: ...

    def prompt_for(self, move: str) -> str: ...

    def query_variant(self, move: str) -> tuple[str, str]: ...

    def search(
        self, move: str, ids: Sequence[str], texts: Sequence[str], k: int, rows: np.ndarray | None = None
    ) -> tuple[np.ndarray, np.ndarray]: ...

    def describe(self) -> dict[str, Any]: ...

    def save(self, root: Path, key: str) -> dict[str, Any]: ...

    @classmethod
    def restore(
        cls,
        root: Path,
        entry: dict[str, Any],
        setup: ModelSetup,
        texts: Sequence[str],
        searcher_for: SearcherFor | None = None,
    ) -> Retriever: ...


class LexicalRetriever:
    """BM25 (bm25s) over the corpus, or over a pool of its rows: a pool gets its own index, term statistics
    and all, as if it were the whole corpus; every move reads the same index."""

    embeds: ClassVar[bool] = EMBEDS["bm25"]
    ENTRY_TEXT: ClassVar[tuple[str, ...]] = ("name", "setup")
    ENTRY_PATHS: ClassVar[tuple[str, ...]] = ("bm25",)

    def __init__(self, name: str, setup: str):
        self.name, self.setup = name, setup
        self.texts: list[str] = []
        self._indexes: dict[bytes, BM25Retriever] = {}  # rows -> its index

    @classmethod
    def load(cls, setup: ModelSetup, cache: EmbeddingCache | None = None, batch_size: int = 64):
        return cls(setup.name, setup.setup)

    def warm(self, corpus: Sequence[str], queries: dict[str, Sequence[str]]) -> None:
        """Nothing to compute ahead: an index is built per corpus when it is searched."""

    def index(self, ids: Sequence[str], texts: Sequence[str]) -> None:
        self.texts, self._indexes = list(texts), {}

    def _whole(self) -> BM25Retriever:
        key = np.arange(len(self.texts)).tobytes()
        if key not in self._indexes:
            self._indexes[key] = BM25Retriever(self.texts, self.setup)
        return self._indexes[key]

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

    def describe(self) -> dict[str, Any]:
        return {}

    def save(self, root: Path, key: str) -> dict[str, Any]:
        """The whole corpus's bm25s index in ``root/bm25/<key>``: loaded by every search, never rebuilt."""
        folder = f"bm25/{key}"
        self._whole().save(root / folder)
        return {"bm25": folder}

    @classmethod
    def restore(cls, root, entry, setup, texts, searcher_for=None):
        """BM25 from the index's saved bm25s files (an index without them, from an older build: rebuilt)."""
        lexical = cls(entry["name"], entry["setup"])
        lexical.index([], texts)
        if "bm25" not in entry:
            return lexical
        lexical._indexes = {
            np.arange(len(texts)).tobytes(): _saved_bm25(root, entry["bm25"], entry["setup"], texts)
        }
        return lexical


def _saved_bm25(root: Path, folder: str, setup: str, texts: Sequence[str]) -> BM25Retriever:
    """An index's saved bm25s files (the caller checked that ``folder`` lies inside the index), which must index
    exactly its ``texts``."""
    try:
        saved = BM25Retriever.load(root / folder, setup)
    except (OSError, ValueError, TypeError, KeyError) as e:
        raise SavedIndexError(f"bm25 cannot be read ({e})") from e
    if saved.n_docs != len(texts):
        raise SavedIndexError(f"bm25 indexes {saved.n_docs} documents for {len(texts)} candidates")
    return saved


class DenseRetriever:
    """A sentence-transformers model: the corpus under the document prompt, queries under the move's prompt
    (a unified model's instruction for that move; a specialist's one query prompt) and, for a model with per-move
    query adapters, mapped by the move's adapter; exact inner-product search unless a ``searcher`` (the service's
    ANN index) is given."""

    embeds: ClassVar[bool] = EMBEDS["dense"]
    ENTRY_TEXT: ClassVar[tuple[str, ...]] = ("name", "ref", "fingerprint", "vectors", "query_prompt")
    ENTRY_PATHS: ClassVar[tuple[str, ...]] = ("vectors", "folder")

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
        self.trust_remote_code = False
        self.vectors: np.ndarray | None = None
        self.searcher: Searcher | None = None

    @classmethod
    def load(cls, setup: ModelSetup, cache: EmbeddingCache | None = None, batch_size: int = 64):
        return cls.of(DenseEncoder.load(setup, batch_size=batch_size), setup, cache)

    @classmethod
    def of(cls, encoder: DenseEncoder, setup: ModelSetup, cache: EmbeddingCache | None = None):
        """A loaded encoder with a resolved setup's prompts."""
        adapters = QueryAdapters.load(setup.adapters) if setup.adapters else None
        dense = cls(
            encoder,
            setup.name,
            setup.document_prompt,
            setup.query_prompt,
            dict(setup.query_prompts),
            cache,
            adapters,
        )
        dense.trust_remote_code = setup.trust_remote_code
        return dense

    def embed(
        self, prompt: str, texts: Sequence[str], label: str = "encoding", role: Role = "document"
    ) -> np.ndarray:
        """Vectors of ``texts`` under ``prompt`` (a routed model: through ``role``'s route, cached apart), from
        the embedding cache when there is one (its progress bar titled ``label``: the corpus and the queries
        are told apart; it moves per batch the encoder finishes)."""
        if self.cache is None:
            return self.encoder.encode(texts, prompt, role)
        return self.cache.get_or_encode(
            self.encoder.cache_id(role),
            prompt,
            texts,
            lambda t, progress: self.encoder.encode(t, prompt, role, progress),
            label,
            reports_progress=True,
        )

    def embed_corpus(self, ids: Sequence[str], texts: Sequence[str]) -> np.ndarray:
        return self.embed(self.document_prompt, texts, f"encoding corpus ({len(texts):,} candidates)")

    def warm(self, corpus: Sequence[str], queries: dict[str, Sequence[str]]) -> None:
        """Encode into the cache, in one pass per prompt, every text later calls will ask for (the union of
        several splits' pools and queries): each text once, in full batches. Without a cache, nothing."""
        if self.cache is None:
            return
        # one pass per (cache key, prompt): a routed model's query and document routes are keyed apart
        wanted: dict[tuple[str, str], tuple[Role, dict[str, None]]] = {}
        for role, prompt, texts in [("document", self.document_prompt, corpus)] + [
            ("query", self.prompt_for(move), texts) for move, texts in queries.items()
        ]:
            wanted.setdefault((self.encoder.cache_id(role), prompt), (role, {}))[1].update(
                dict.fromkeys(texts)
            )
        for (key, prompt), (role, texts) in wanted.items():
            self.cache.fill(
                key,
                prompt,
                list(texts),
                lambda t, progress, p=prompt, r=role: self.encoder.encode(t, p, r, progress),
                f"encoding {len(texts):,} texts",
                reports_progress=True,
            )

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
        """The move's query vectors: the base encoding under its prompt (cached, and warmed, as base vectors;
        a routed model's query route), then its adapter, if any: a small matrix product, never cached, so the
        cache's keys stay (model, prompt, text) and an adapter retrained is used at once."""
        label = f"encoding {move} queries ({len(texts):,})"
        vectors = self.embed(self.prompt_for(move), texts, label, role="query")
        return self.adapters.apply(move, vectors) if self.adapters is not None else vectors

    def scores(self, move: str, ids: Sequence[str], texts: Sequence[str]) -> np.ndarray:
        """Every indexed candidate's score for each query under ``move``, (n_queries, n_candidates): what move
        sensitivity ranks a gold in."""
        if self.vectors is None:
            raise RuntimeError("index() the corpus before scoring it")
        return self.encode_queries(move, ids, texts) @ np.asarray(self.vectors, dtype=np.float32).T

    def search(self, move, ids, texts, k, rows=None):
        if self.vectors is None:
            raise RuntimeError("index() the corpus before searching it")
        queries = self.encode_queries(move, ids, texts)
        if self.searcher is not None and rows is None:  # a pool of rows is searched exactly, ANN or not
            return self.searcher(queries, k)
        if rows is None:
            return exact_search(self.vectors, queries, k)
        scores, found = exact_search(self.vectors[rows], queries, k)
        return scores, rows[found]

    def describe(self) -> dict[str, Any]:
        """Prompts (a unified model: one instruction per move) and the weights' fingerprint."""
        entry: dict[str, Any] = {
            "query_prompt": self.query_prompt,
            "document_prompt": self.document_prompt,
            "trust_remote_code": self.trust_remote_code,
            "fingerprint": self.encoder.fingerprint,
        }
        if self.query_prompts:
            entry["query_prompts"] = dict(self.query_prompts)
        if self.adapters is not None:  # per-move query adapters, shipped with the registered model
            entry["adapters_sha256"] = self.adapters.sha256
        return entry

    def save(self, root: Path, key: str) -> dict[str, Any]:
        """The indexed corpus's vectors as ``root/vectors/<key>.npy`` (float32, L2-normalised)."""
        if self.vectors is None:
            raise RuntimeError("index() the corpus before saving it")
        vectors = np.asarray(self.vectors, dtype=np.float32)
        (root / "vectors").mkdir(exist_ok=True)
        np.save(root / "vectors" / f"{key}.npy", vectors)
        return {"vectors": f"vectors/{key}.npy", "dim": int(vectors.shape[1])}

    @classmethod
    def restore(cls, root, entry, setup, texts, searcher_for=None):
        """The saved vectors (memory-mapped) searched by ``searcher_for``'s index (default exact), queries
        encoded by the model of ``setup``, which must be the one the index was built with."""
        try:  # the caller checked that the file lies inside the index
            vectors = np.load(root / entry["vectors"], mmap_mode="r")
        except (OSError, ValueError) as e:
            raise SavedIndexError(f"vectors cannot be read ({e})") from e
        if vectors.ndim != 2 or vectors.shape[0] != len(texts):
            raise SavedIndexError(f"vectors: {vectors.shape} vectors for {len(texts)} candidates")
        searcher = (
            searcher_for(vectors, entry) if searcher_for else None
        )  # a damaged ANN file: before the model
        encoder = DenseEncoder.load(setup, batch_size=1)
        if encoder.fingerprint != entry["fingerprint"]:
            raise SavedIndexError(
                f"fingerprint: model {entry['name']} on this machine differs from the one the index was built with"
            )
        adapters = QueryAdapters.load(setup.adapters) if setup.adapters else None
        if (adapters.sha256 if adapters else "") != entry.get("adapters_sha256", ""):
            raise SavedIndexError(
                f"adapters_sha256: model {entry['name']}'s query adapters on this machine differ from those the "
                "index was built with"
            )
        dense = cls(
            encoder,
            entry["name"],
            "",
            entry["query_prompt"],
            entry.get("query_prompts", {}),
            adapters=adapters,
        )
        dense.use_vectors(vectors, searcher)  # queries only, never cached: the corpus is the index's vectors
        return dense


class HybridRetriever(DenseRetriever):
    """A dense model (its per-move adapters too) whose score, for the moves given a weight, adds BM25:
    ``cos(q_move, d) + w_move * bm25(q, d) / max_d' bm25(q, d')``, the maximum taken over the pool searched.

    Why: an instance shares the words of the problem it instantiates (on the dev release's test split BM25 alone
    nearly matches the adapters on Specify, 21.1 against 21.8 MRR@10, and is far behind on the other moves), so a
    lexical term on Specify alone makes Specify's ranking both better and more unlike the other moves'. Search is
    exact over the pool: every document's BM25 score (``BM25Retriever.scores``; a pool of rows gets its own
    index, as :class:`LexicalRetriever` does) plus the cosine, then the top k. Moves without a weight are
    searched as the dense model searches them.
    """

    embeds: ClassVar[bool] = EMBEDS["hybrid"]
    ENTRY_PATHS: ClassVar[tuple[str, ...]] = ("vectors", "folder", "bm25")
    FUSE_CHUNK: ClassVar[int] = 256  # queries fused at a time: a (256, pool) score block

    def __init__(self, *args: Any, lexical_weights: Mapping[str, float] | None = None, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.lexical_weights = dict(lexical_weights or {})
        self.texts: list[str] = []
        self._lexical: dict[bytes, BM25Retriever] = {}  # rows -> its BM25 index

    @classmethod
    def of(cls, encoder: DenseEncoder, setup: ModelSetup, cache: EmbeddingCache | None = None):
        hybrid = super().of(encoder, setup, cache)
        hybrid.lexical_weights = dict(setup.lexical_weights)
        return hybrid

    def index(self, ids: Sequence[str], texts: Sequence[str]) -> None:
        super().index(ids, texts)
        self.texts, self._lexical = list(texts), {}

    def _bm25(self, rows: np.ndarray) -> BM25Retriever:
        key = rows.tobytes()
        if key not in self._lexical:
            self._lexical[key] = BM25Retriever([self.texts[j] for j in rows])
        return self._lexical[key]

    def query_variant(self, move: str) -> tuple[str, str]:
        prompt, adapter = super().query_variant(move)
        weight = self.lexical_weights.get(move, 0.0)
        return (prompt, f"{adapter}+bm25*{weight:g}" if weight else adapter)

    def search(self, move, ids, texts, k, rows=None):
        weight = self.lexical_weights.get(move, 0.0)
        if not weight:
            return super().search(move, ids, texts, k, rows)
        if self.vectors is None:
            raise RuntimeError("index() the corpus before searching it")
        queries = self.encode_queries(move, ids, texts)
        pool = np.arange(len(self.vectors)) if rows is None else np.asarray(rows)
        k = min(k, len(pool))
        scores, found = [np.empty((0, k), np.float32)], [np.empty((0, k), np.int64)]
        for at in range(0, len(queries), self.FUSE_CHUNK):
            chunk = slice(at, at + self.FUSE_CHUNK)
            fused = self._fused(queries[chunk], list(texts[chunk]), pool, weight)
            best = np.argsort(-fused, axis=1, kind="stable")[:, :k]  # ties: the lower row first
            scores.append(np.take_along_axis(fused, best, axis=1))
            found.append(pool[best])
        return np.concatenate(scores), np.concatenate(found)

    def scores(self, move: str, ids: Sequence[str], texts: Sequence[str]) -> np.ndarray:
        weight = self.lexical_weights.get(move, 0.0)
        if not weight:
            return super().scores(move, ids, texts)
        if self.vectors is None:
            raise RuntimeError("index() the corpus before scoring it")
        pool = np.arange(len(self.vectors))
        return self._fused(self.encode_queries(move, ids, texts), list(texts), pool, weight)

    def _fused(self, queries: np.ndarray, texts: list[str], pool: np.ndarray, weight: float) -> np.ndarray:
        """``cos + weight * bm25 / max bm25`` of ``queries`` (their vectors and texts) against the pool's rows."""
        words = normalised(self._bm25(pool).scores(texts))
        cosine = queries @ np.asarray(self.vectors[pool], dtype=np.float32).T
        return (cosine + weight * words).astype(np.float32)

    def describe(self) -> dict[str, Any]:
        return super().describe() | {"lexical_weights": dict(self.lexical_weights)}

    def save(self, root: Path, key: str) -> dict[str, Any]:
        """The dense vectors (``root/vectors/<key>.npy``) and the whole corpus's bm25s index (``root/bm25/<key>``)."""
        saved = super().save(root, key)
        self._bm25(np.arange(len(self.texts))).save(root / f"bm25/{key}")
        return saved | {"bm25": f"bm25/{key}"}

    @classmethod
    def restore(cls, root, entry, setup, texts, searcher_for=None):
        """The dense part as :meth:`DenseRetriever.restore` reads it, the saved BM25, and the weights of the model
        registered on this machine, which must be those the index records."""
        if dict(setup.lexical_weights) != entry.get("lexical_weights"):
            raise SavedIndexError(
                f"lexical_weights: model {entry['name']}'s BM25 weights on this machine differ from those the "
                "index was built with"
            )
        dense = super().restore(root, entry, setup, texts, searcher_for)
        dense.texts, dense.lexical_weights = list(texts), dict(setup.lexical_weights)
        dense._lexical = {np.arange(len(texts)).tobytes(): _saved_bm25(root, entry["bm25"], "unigram", texts)}
        return dense


# The one registry of retriever kinds: a setup's, a model registry entry's and an index manifest's ``kind``.
RETRIEVERS: dict[str, type[LexicalRetriever] | type[DenseRetriever]] = {
    "bm25": LexicalRetriever,
    "dense": DenseRetriever,
    "hybrid": HybridRetriever,
}


def retriever_class(kind: str) -> type[LexicalRetriever] | type[DenseRetriever]:
    """The class of ``kind``; an unknown kind (a stranger's manifest) is a :class:`SavedIndexError`."""
    try:
        return RETRIEVERS[kind]
    except (KeyError, TypeError):
        raise SavedIndexError(f"kind: {kind!r} is not one of {', '.join(RETRIEVERS)}") from None


def load_retriever(setup: ModelSetup, cache: EmbeddingCache | None = None, batch_size: int = 64) -> Retriever:
    """The retriever of a resolved setup (its weights loaded; nothing indexed yet)."""
    return RETRIEVERS[setup.kind].load(setup, cache, batch_size)
