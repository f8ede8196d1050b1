"""A small library of one's own papers (abstracts written for these tests) and BM25 indexes over it."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import shared_record, write_jsonl
from ratio_bench.serve import candidates
from ratio_bench.serve.index import build_index, load_index
from ratio_bench.serve.search import Searcher

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


@pytest.fixture(scope="session")
def library(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("library")
    write_jsonl(folder / "papers.jsonl", PAPERS)
    return folder


@pytest.fixture(scope="session")
def bm25_index(library, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("indexes") / "bm25"
    build_index(
        candidates.from_corpus([library]), {m: "bm25" for m in ("address", "broaden", "specify")}, out
    )
    return out


@pytest.fixture(scope="session")
def searcher(bm25_index) -> Searcher:
    return Searcher(load_index(bm25_index))


@pytest.fixture
def live_server(searcher):
    """The app on a free loopback port, served by uvicorn in a thread; yields its base URL."""
    from tests.helpers.browser import serve_in_thread

    from ratio_bench.serve.app import create_app

    with serve_in_thread(create_app(searcher)) as url:
        yield url


def build_tiny_index(root: Path, library: Path) -> Path:
    """A dense index of the library: the training tests' tiny BERT (a folder) for two moves, BM25 for one, HNSW."""
    from tests.training.conftest import build_tiny

    from ratio_bench.retrieval.cache import EmbeddingCache

    model = build_tiny("bert", root)
    out = root / "index"
    models = {"address": str(model), "broaden": str(model), "specify": "bm25"}
    build_index(
        candidates.from_corpus([library]), models, out, EmbeddingCache(root / "cache"), ann_kind="hnsw"
    )
    return out


@pytest.fixture(scope="session")
def tiny_index(library, tmp_path_factory) -> Path:
    return build_tiny_index(tmp_path_factory.mktemp("tiny-index"), library)
