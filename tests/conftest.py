"""Shared fixtures: small corpus files written in every supported format, and the shared corpus location."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.helpers.corpus import (
    DATA,
    SHARED_CORPUS,
    shared_record,
    write_jsonl,
    write_shared_parquet,
)
from tests.helpers.judged import (
    write_judged_release,
)


@pytest.fixture
def nougat_text() -> str:
    return (DATA / "nougat_sample.md").read_text(encoding="utf-8")


@pytest.fixture
def docling_text() -> str:
    return (DATA / "docling_sample.md").read_text(encoding="utf-8")


@pytest.fixture
def fixture_corpus(tmp_path: Path, nougat_text: str, docling_text: str) -> Path:
    """A small corpus folder: Markdown full texts (Parquet, two row groups), an abstract file (JSONL)."""
    folder = tmp_path / "corpus"
    folder.mkdir()
    write_shared_parquet(
        folder / "fulltext.parquet",
        [
            shared_record("fx/nougat", nougat_text, "2024-12", source="nougat-fixture"),
            shared_record("fx/docling", docling_text, "2023/2024", source="docling-fixture"),
            shared_record("fx/empty", "   ", "2024-12"),
        ],
        row_group_size=2,
    )
    write_jsonl(
        folder / "abstracts.jsonl",
        [
            shared_record(
                "fx/abs1",
                "Retrieval models fail on rare technical terms in scientific queries. "
                "To overcome this limitation, we add a sparse lexical channel to the dense retriever.",
                "2025-03-18",
                kind="abstract",
            ),
            shared_record(
                "fx/abs2",
                "Short abstract without any marker in it at all, only plain prose.",
                "sometime",
                kind="abstract",
            ),
        ],
    )
    return folder


@pytest.fixture
def shared_corpus() -> Path:
    if not SHARED_CORPUS.is_dir():
        pytest.skip(f"shared corpus not found at {SHARED_CORPUS} (set RATIO_SHARED_CORPUS)")
    return SHARED_CORPUS


@pytest.fixture(scope="session")
def small_release(tmp_path_factory) -> Path:
    """The synthetic dataset-test corpus built into a release (test split: 2 Address queries, 3 candidates)."""
    import shutil

    from tests.helpers.dataset import records, write_config

    from ratio_bench.dataset.build import build_release
    from ratio_bench.dataset.config import load_config

    root = tmp_path_factory.mktemp("release")
    (root / "corpus").mkdir()
    a, b = records()
    write_jsonl(root / "corpus" / "a.jsonl", a)
    write_jsonl(root / "corpus" / "b.jsonl", b)
    cfg = load_config(write_config(root / "cfg.yaml", root / "corpus", root / "work"))
    build_release(cfg, root / "ratio", progress=False)
    shutil.rmtree(root / "work")
    return root / "ratio"


@pytest.fixture
def fake_server():
    """The fault-injecting OpenAI-compatible server of ``tests/helpers/openai_server.py`` on loopback."""
    from tests.helpers.openai_server import FakeOpenAI

    with FakeOpenAI() as server:
        yield server


@pytest.fixture
def make_judge(tmp_path: Path):
    """A factory of judges against a fake server, sharing one reply cache under ``tmp_path``."""
    from ratio_bench.llm.cache import ReplyCache
    from ratio_bench.llm.client import Judge, JudgeSettings

    def make(server, **overrides) -> Judge:
        settings = JudgeSettings(
            model=overrides.pop("model", "fake-judge"),
            base_url=server.base_url,
            backoff_s=overrides.pop("backoff_s", 0.01),
            timeout_s=overrides.pop("timeout_s", 2.0),
            workers=overrides.pop("workers", 2),
            **overrides,
        )
        return Judge(settings, ReplyCache(tmp_path / "cache.sqlite"), progress=False)

    return make


@pytest.fixture
def judged_release(tmp_path: Path) -> Path:
    return write_judged_release(tmp_path / "tiny")
