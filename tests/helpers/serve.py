"""Papers and a tiny index over them, for the search service tests."""

from __future__ import annotations

from pathlib import Path

from tests.helpers.corpus import shared_record

from ratio_bench.serve import candidates
from ratio_bench.serve.index import build_index

PAPERS = [
    shared_record(
        "arxiv/2503.01234",
        "Dense retrievers miss rare technical terms in scientific queries. "
        "We add a sparse lexical channel that matches exact technical terms. Too short here.",
        "2025-03-18",
        kind="abstract",
        title="Sparse channels for dense retrieval",
        venue="arXiv",
    ),
    shared_record(
        "acl/2020.acl.main.371",
        "Graph neural networks oversmooth node features as layers are stacked. "
        "Gated residual connections keep deep graph networks from oversmoothing.",
        "2020-07",
        kind="abstract",
        title="Deep graphs without oversmoothing",
        venue="ACL 2020",
    ),
    shared_record(
        "iclr26/AbCdEfGh12",
        "Federated learning leaks private training data through shared gradient updates. "
        "Clipping and noising each client update before aggregation bounds that leakage.",
        "2025-09",
        kind="abstract",
        title="Private federated updates",
        venue="ICLR 2026 Conference Submission",
    ),
    shared_record(
        "lab/notes-7",
        "Quantised language models lose accuracy because of a few outlier activation channels. "
        "<script>alert('x')</script> markup in a sentence must be shown as text, never run.",
        "2024",
        kind="abstract",
        title="Lab notes <b>7</b>",
        venue=None,
    ),
]


def build_tiny_index(root: Path, library: Path) -> Path:
    """A dense index of the library: the training tests' tiny BERT (a folder) for two moves, BM25 for one, HNSW."""
    from tests.helpers.training import build_tiny

    from ratio_bench.retrieval.cache import EmbeddingCache

    model = build_tiny("bert", root)
    out = root / "index"
    models = {"address": str(model), "broaden": str(model), "specify": "bm25"}
    build_index(
        candidates.from_corpus([library]), models, out, EmbeddingCache(root / "cache"), ann_kind="hnsw"
    )
    return out
