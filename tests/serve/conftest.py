"""A small library of one's own papers (abstracts written for these tests) and BM25 indexes over it."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.helpers.corpus import write_jsonl
from tests.helpers.serve import PAPERS, build_tiny_index

from ratio_bench.serve import candidates
from ratio_bench.serve.index import build_index, load_index
from ratio_bench.serve.search import Searcher


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


@pytest.fixture(scope="session")
def tiny_index(library, tmp_path_factory) -> Path:
    return build_tiny_index(tmp_path_factory.mktemp("tiny-index"), library)
