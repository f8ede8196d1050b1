"""The query path: one text, up to three moves, a ranked list of candidates with provenance per move.

Moves that share a model (and its query prompt) share one encoding and one search. With the role prior (asked
for per search; off by default, since on judged queries it lowered precision), a move's candidates that the release mined as that move's gold are ranked
first, by the model's scores, and the rest follow: the paper's oracle filter, used to make search useful, never in a
ranked benchmark score (those never reach this module); the answer says whether it was used. Models are loaded once,
when the searcher is made; dense vectors sit in a faiss index in memory (exact by default, or the index's
HNSW/IVF file), BM25's index is the one ``ratio index`` saved (memory-mapped). The searcher is safe to call from many threads
(a server's worker pool): encoders and indexes are used under one lock, since tokenizers are not re-entrant.
"""

from __future__ import annotations

import threading
import unicodedata
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ratio_bench.core.errors import RatioError
from ratio_bench.core.relations import BY_NAME
from ratio_bench.retrieval.registry import ModelSetup, is_registered, resolve
from ratio_bench.retrieval.retriever import RETRIEVERS, Retriever, SavedIndexError
from ratio_bench.serve import ann
from ratio_bench.serve.index import TOPICAL_NOTICE, Index, IndexFolderError
from ratio_bench.serve.links import source_url
from ratio_bench.serve.manifest import IndexModel
from ratio_bench.serve.options import DEFAULT_K

MAX_QUERY_CHARS = 2000
MAX_K = 100
PROVENANCE = ("paper_id", "title", "date", "venue", "section")
ROLE_PRIOR = (
    "role prior: sentences this release mined as the move's gold are ranked first (by the model), the rest "
    "after; leave it off to rank by the model alone"
)


class QueryError(RatioError, ValueError):
    """A query that cannot be answered as asked; ``field`` names the part at fault (text, moves or k)."""

    def __init__(self, message: str, field: str):
        super().__init__(message)
        self.field = field


EMPTY_TEXT = "text is empty: type a sentence (a problem, a claim, an idea) to search for"


def is_blank(text: str) -> bool:
    """Whether ``text`` has nothing to search for: only separators (spaces, line breaks, no-break and ideographic
    spaces) and control or format characters (zero-width spaces, BOMs), which ``str.strip`` partly keeps."""
    return all(unicodedata.category(c)[0] in "ZC" for c in text)


def check_query(text: str, moves: Sequence[str] | None, k: int, available: Sequence[str]) -> list[str]:
    """The moves to answer (de-duplicated, default all), or a :class:`QueryError` saying what is wrong."""
    if not isinstance(text, str) or is_blank(text):
        raise QueryError(EMPTY_TEXT, "text")
    if len(text) > MAX_QUERY_CHARS:
        raise QueryError(f"text is {len(text):,} characters; the limit is {MAX_QUERY_CHARS:,}", "text")
    if not isinstance(k, int) or isinstance(k, bool) or not 1 <= k <= MAX_K:
        raise QueryError(f"k must be an integer from 1 to {MAX_K}, not {k!r}", "k")
    unknown = [m for m in moves or () if m not in available]
    if unknown:
        raise QueryError(f"unknown move {unknown[0]!r}; this index has {', '.join(available)}", "moves")
    return list(dict.fromkeys(moves or available))


class Searcher:
    def __init__(self, index: Index, exact: bool = False, trust_remote_code: bool = False):
        """Load every model of ``index``; ``exact`` ignores the index's ANN files.

        ``trust_remote_code`` is the user's own ``--trust-remote-code``: the manifest's field of that name is
        ignored, since whoever wrote the index chose it.
        """
        self.index = index
        self.trust_remote_code = trust_remote_code
        self.rows = index.table.to_pylist()
        self.urls = [source_url(r["paper_id"]) for r in self.rows]
        self.lock = threading.Lock()
        self.models = {key: self._load(key, model, exact) for key, model in index.manifest.models.items()}
        self.mode = "exact" if exact or not index.manifest.ann else index.manifest.ann
        # each move's candidates mined as its gold (a release's index; own papers and older indexes have none)
        roles = [r.get("role") for r in self.rows]
        self.role_rows = {m: np.flatnonzero([role == m for role in roles]) for m in self.moves}

    @property
    def has_roles(self) -> bool:
        """Whether the index knows mined roles, so that the role prior can be used."""
        return any(len(rows) for rows in self.role_rows.values())

    def prior_used(self, role_prior: bool) -> bool:
        """Whether a search asked with ``role_prior`` uses it (only an index with mined roles can)."""
        return bool(role_prior) and self.has_roles

    @property
    def moves(self) -> list[str]:
        return self.index.moves

    def _load(self, key: str, model: IndexModel, exact: bool) -> Retriever:
        """The retriever of one model entry, restored from its saved files by its kind's class (which reads the
        entry it wrote)."""
        root = self.index.root
        try:
            return RETRIEVERS[model.kind].restore(
                root,
                model.to_json(),
                self._setup(key, model),
                [r["text"] for r in self.rows],
                self._searcher_for(exact, model),
            )
        except SavedIndexError as e:
            raise IndexFolderError(f"--index {root}: models.{key}.{e}; rebuild it with `ratio index`") from e

    def _searcher_for(self, exact: bool, model: IndexModel):
        """Vectors to a faiss searcher: the model's ANN file, or (``exact``, or none saved) a flat index."""

        def searcher(vectors: np.ndarray, _entry: dict) -> Callable:
            if model.ann and not exact:
                index = ann.load(self.index.root / model.ann.file, model.ann.kind, vectors.shape)
            else:
                index = ann.flat_index(vectors)
            return lambda q, k: index.search(q.astype(np.float32), min(k, len(self.rows)))

        return searcher

    def _setup(self, key: str, model: IndexModel) -> ModelSetup:
        """A model's folder inside the index, or a model registered on this machine; never a path
        elsewhere (a manifest's reference is a name, not something to look for on disk). An entry with neither
        (an older index's BM25) is a setup without weights."""
        if model.folder is not None:  # load_index checked that it lies inside the index
            return ModelSetup(
                model.name,
                model.kind,
                str(self.index.root / model.folder),
                model.setup,
                model.query_prompt or "",
                model.document_prompt or "",
                self.trust_remote_code,
            )
        if model.ref is None:
            return ModelSetup(model.name, model.kind, None, model.setup, "", "")
        if not is_registered(model.ref):
            raise IndexFolderError(
                f"--index {self.index.root}: manifest field models.{key}.ref ({model.ref!r}) is not a "
                "registered model name (a model folder is read only from the field folder, inside the index); rebuild "
                "it with `ratio index`"
            )
        return resolve(model.ref, trust_remote_code=self.trust_remote_code)

    def search(
        self, text: str, moves: Sequence[str] | None = None, k: int = DEFAULT_K, role_prior: bool = False
    ) -> dict[str, list[dict]]:
        """Top-``k`` candidates per move: rank (from 1), score (descending), text, provenance and mined role.

        ``role_prior``: the move's mined golds first (see the module's docstring; :meth:`prior_used` says whether
        it applies to this index)."""
        moves = check_query(text, moves, k, self.moves)
        keys = {}  # move -> (model key, query prompt and adapter): one search per distinct variant
        for m in moves:
            key = self.index.manifest.moves[m]
            keys[m] = (key, *self.models[key].query_variant(m))
        prior = self.prior_used(role_prior)
        found: dict[tuple[str, str], tuple[np.ndarray, np.ndarray]] = {}
        first: dict[str, tuple[np.ndarray, np.ndarray]] = {}  # move -> its mined golds' top hits (the prior)
        with self.lock:
            for m, pair in keys.items():
                if pair not in found:
                    found[pair] = self.models[pair[0]].search(m, [""], [text], MAX_K)
                pool = self.role_rows[m]
                if prior and len(pool):
                    first[m] = self.models[pair[0]].search(m, [""], [text], min(MAX_K, len(pool)), pool)
        return {m: self._ranked(found[pair], first.get(m), k) for m, pair in keys.items()}

    def _ranked(self, found, first, k: int) -> list[dict]:
        """The model's hits, or with the prior: the move's mined golds by score, then the others by score."""
        if first is None:
            return self._hits(*found, k)
        scores = np.concatenate([first[0][0], found[0][0]])[None]
        rows = np.concatenate([first[1][0], found[1][0]])
        _, keep = np.unique(rows, return_index=True)  # a mined gold the plain search found too: listed once
        keep = np.sort(keep[rows[keep] >= 0])
        return self._hits(scores[:, keep], rows[None, keep], k)

    def _hits(self, scores: np.ndarray, idx: np.ndarray, k: int) -> list[dict]:
        hits = []
        for i, s in zip(idx[0], scores[0], strict=True):
            if i < 0 or len(hits) == k:  # faiss pads with -1 when an ANN index finds fewer than asked
                continue
            row = self.rows[int(i)]
            hits.append(
                {
                    "rank": len(hits) + 1,
                    "score": round(float(s), 6),
                    "id": row["id"],
                    "text": row["text"],
                    **{f: row[f] for f in PROVENANCE},
                    "role": row.get("role"),
                    "url": self.urls[int(i)],
                }
            )
        return hits

    def describe(self) -> dict[str, Any]:
        """What a client may want to know about this index (the health endpoint's body)."""
        manifest = self.index.manifest
        aware = manifest.move_aware
        return {
            "moves": self.moves,
            "move_glosses": {
                m: BY_NAME[m].headline for m in self.moves if m in BY_NAME
            },  # the page's columns
            "candidates": len(self.rows),
            "models": {move: manifest.model_for(move).name for move in manifest.moves},
            "search": self.mode,
            "source": dict(manifest.source),
            "max_chars": MAX_QUERY_CHARS,
            "max_k": MAX_K,
            "titles": any(
                row["title"] for row in self.rows
            ),  # a release index without --corpus-meta has none
            "move_aware": aware,
            "notice": None if aware else TOPICAL_NOTICE,
            "role_prior": self.has_roles,  # whether a search may use the role prior (when asked for)
            "role_prior_note": ROLE_PRIOR if self.has_roles else None,
        }
