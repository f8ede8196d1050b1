"""BM25 baselines with bm25s: unigrams, unigrams+bigrams, unigrams+trigrams (spec appendix C).

Tokens are lower-cased words of two or more characters, English stopwords removed, Snowball-stemmed
(PyStemmer); n-grams are formed over that sequence and joined with ``_``, so bigram and trigram variants
only add terms to the unigram index.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import Stemmer

from ratio_bench.core import extras

bm25s = extras.lazy("bm25s")
bm25s_stopwords = extras.lazy("bm25s.stopwords")

NGRAM_SETUPS = {"unigram": 1, "bigram": 2, "trigram": 3}
_TOKEN = re.compile(r"(?u)\b\w\w+\b")


class BM25Tokenizer:
    def __init__(self, max_n: int = 1):
        self.max_n = max_n
        self.stopwords = frozenset(bm25s_stopwords.STOPWORDS_EN)
        self.stemmer = Stemmer.Stemmer("english")

    def __call__(self, text: str) -> list[str]:
        words = [w for w in _TOKEN.findall(text.lower()) if w not in self.stopwords]
        stems = self.stemmer.stemWords(words)
        tokens = list(stems)
        for n in range(2, self.max_n + 1):
            tokens += ["_".join(stems[i : i + n]) for i in range(len(stems) - n + 1)]
        return tokens


def normalised(words: np.ndarray) -> np.ndarray:
    """Each row of BM25 scores divided by its best score in the pool searched (a row with no match stays 0): the
    lexical term a hybrid model adds to a cosine, on the cosine's scale whatever the pool's size or the query's
    length (``HybridRetriever`` and ``training/lexical.py`` alike)."""
    top = words.max(axis=1, keepdims=True)
    return words / np.where(top > 0, top, 1)


class BM25Retriever:
    """Index a corpus once; rank candidates for any number of query sets. An index can be saved to a folder
    and loaded from it (``ratio index`` saves one, so ``ratio search`` and ``ratio serve`` skip re-indexing)."""

    def __init__(self, corpus: Sequence[str], setup: str = "unigram"):
        self._set_setup(setup)
        corpus_tokens = [self.tokenize(t) for t in corpus]
        self.vocab: dict[str, int] = {}
        ids = [[self.vocab.setdefault(tok, len(self.vocab)) for tok in doc] for doc in corpus_tokens]
        self.model = bm25s.BM25()
        self.model.index(
            bm25s.tokenization.Tokenized(ids=ids, vocab=dict(self.vocab)),
            create_empty_token=False,
            show_progress=False,
        )
        self.n_docs = len(corpus)

    def _set_setup(self, setup: str) -> None:
        if setup not in NGRAM_SETUPS:
            raise ValueError(f"unknown BM25 setup {setup!r}; choose from {sorted(NGRAM_SETUPS)}")
        self.setup = setup
        self.tokenize = BM25Tokenizer(NGRAM_SETUPS[setup])

    def save(self, folder: Path) -> None:
        """bm25s's files (score matrix, vocabulary, parameters) into ``folder``; no corpus texts."""
        self.model.save(folder, show_progress=False)

    @classmethod
    def load(cls, folder: Path, setup: str) -> BM25Retriever:
        """An index saved by :meth:`save`, memory-mapped. The folder may be someone else's: the numpy backend
        is pinned (a saved ``backend`` never switches on numba compilation) and arrays load without pickle."""

        self = cls.__new__(cls)
        self._set_setup(setup)
        self.model = bm25s.BM25.load(
            folder,
            mmap=True,
            show_progress=False,
            override_params={"backend": "numpy", "csc_backend": "numpy", "auto_compile": False},
        )
        self.vocab = self.model.vocab_dict
        self.n_docs = int(self.model.scores["num_docs"])
        return self

    def search(self, queries: Sequence[str], k: int) -> tuple[np.ndarray, np.ndarray]:
        """(indices, scores) of the top-``k`` documents per query.

        Query terms absent from the corpus are ignored; a query left with no term scores every document 0 and
        gets the corpus order (documented, deterministic, and as uninformative as it should be).
        """
        k = min(k, self.n_docs)
        q_ids = [[self.vocab[t] for t in self.tokenize(q) if t in self.vocab] for q in queries]
        docs = np.tile(np.arange(k), (len(queries), 1))
        scores = np.zeros((len(queries), k), dtype=np.float32)
        known = [i for i, q in enumerate(q_ids) if q]
        if known:
            d, s = self.model.retrieve([q_ids[i] for i in known], k=k, show_progress=False, n_threads=1)
            docs[known], scores[known] = d, s
        return docs, scores

    def scores(self, queries: Sequence[str]) -> np.ndarray:
        """Every document's BM25 score for each query, (n_queries, n_docs) float32: what a fused ranking adds to
        another score (bm25s sums the query terms' columns of its sparse score matrix; no top-k, no sort)."""
        out = np.zeros((len(queries), self.n_docs), dtype=np.float32)
        for i, q in enumerate(queries):
            ids = [self.vocab[t] for t in self.tokenize(q) if t in self.vocab]
            if ids:
                out[i] = self.model.get_scores(ids)
        return out
