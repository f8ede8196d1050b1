"""Shared fixtures: small corpus files written in every supported format, and the shared corpus location."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

DATA = Path(__file__).parent / "data"
SHARED_CORPUS = Path(
    os.environ.get("RATIO_SHARED_CORPUS", Path(__file__).resolve().parents[1] / ".." / "shared" / "corpus")
)

SHARED_SCHEMA = pa.schema(
    [(c, pa.string()) for c in ("id", "title", "date", "venue", "kind", "text", "source", "license")]
)


def shared_record(
    id: str, text: str | None, date: str | None = "2024-12", kind: str = "fulltext", **kw
) -> dict:
    return {
        "id": id,
        "title": kw.get("title"),
        "date": date,
        "venue": kw.get("venue", "Fixture Venue"),
        "kind": kind,
        "text": text,
        "source": kw.get("source", "fixture"),
        "license": "CC BY 4.0",
    }


def write_shared_parquet(path: Path, records: list[dict], row_group_size: int | None = None) -> Path:
    pq.write_table(pa.Table.from_pylist(records, schema=SHARED_SCHEMA), path, row_group_size=row_group_size)
    return path


def write_jsonl(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


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

    from dataset.conftest import records, write_config
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
    from ratio_bench.judge.cache import ReplyCache
    from ratio_bench.judge.client import Judge, JudgeSettings

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


# A release small enough to judge by hand (tests/judge/test_candidates.py, tests/evaluation/test_pool.py):
# three Address test queries, nine candidates, two saved runs. The fake judge's two Address prompts accept a
# candidate by a word in it: prompt 1 ("address-silver-split") on "good" or "nice", prompt 2 on "good" or
# "fine"; so hard agreement accepts "good", soft agreement any of the three.
JUDGED_QUERIES = {  # query id -> (query, gold id, paper)
    "q1": ("dense retrievers miss rare technical terms", "g1", "P1"),
    "q2": ("training data for the parser is scarce", "g2", "P2"),
    "q3": ("labels from crowd workers are noisy", "g3", "P3"),
}
JUDGED_CORPUS = {  # candidate id -> (text, paper)
    "g1": ("a lexical channel works good for rare terms", "P1"),
    "g2": ("we synthesise plain parses from a grammar", "P2"),
    "g3": ("a fine grained agreement model reweights labels", "P3"),
    "d1": ("good results follow from contrastive pretraining", "P9"),
    "d2": ("a nice trick is to cache the encoder", "P1"),
    "d3": ("fine tuning on clean subsets helps", "P8"),
    "d4": ("plain baselines remain strong", "P7"),
    "d5": ("good parsers transfer across languages", "P2"),
    "d6": ("plain averaging of votes is common", "P6"),
}
JUDGED_RUNS = {
    "A": {"q1": ["d1", "g1", "d4"], "q2": ["d4", "d2", "d5"], "q3": ["g3", "d3", "d6"]},
    "B": {"q1": ["d4", "d6", "d1"], "q2": ["g2", "d4", "d6"], "q3": ["d2", "d1", "g3"]},
}


def judged_decide(messages: list[dict[str, str]]) -> bool:
    """The fake judge's verdict on a candidate-mode request (see JUDGED_CORPUS)."""
    from ratio_bench.judge.prompts import get_prompt

    first = get_prompt("address-silver-split").messages("candidate", query="", candidate="")[0]["content"]
    words = set(messages[1]["content"].split("\ns2: ", 1)[1].split())
    return bool(words & ({"good", "nice"} if messages[0]["content"] == first else {"good", "fine"}))


def write_judged_release(root: Path, version: str = "0.0") -> Path:
    """The release above (manifest, Address test queries, test corpus) at ``root``."""
    import json

    import pyarrow as pa
    import pyarrow.parquet as pq

    from ratio_bench.dataset.layout import CORPUS_SCHEMA, QUERY_SCHEMA

    queries = [
        {"query_id": q, "query": t, "gold_id": g, "gold": JUDGED_CORPUS[g][0], "relation": "address",
         "marker": "to address this", "paper_id": p}
        for q, (t, g, p) in JUDGED_QUERIES.items()
    ]  # fmt: skip
    corpus = [
        {"id": c, "text": t, "paper_id": p, "role": "address" if c.startswith("g") else "distractor"}
        for c, (t, p) in JUDGED_CORPUS.items()
    ]
    for config, rows, schema in (("address", queries, QUERY_SCHEMA), ("corpus", corpus, CORPUS_SCHEMA)):
        (root / "data" / config).mkdir(parents=True)
        pq.write_table(
            pa.Table.from_pylist(rows, schema=schema), root / "data" / config / "test-00000-of-00001.parquet"
        )
    from ratio_bench.dataset.layout import file_checksums

    manifest = {"kind": "release", "name": "tiny", "version": version, "lexicon_sha256": "-",
                "files": file_checksums(root), "rows": {"address": {"test": 3}, "corpus": {"test": 9}}}  # fmt: skip
    (root / "manifest.json").write_text(json.dumps(manifest))
    return root


def save_judged_run(release: Path, name: str, out: Path, ranked: dict[str, list[str]] | None = None) -> Path:
    """A saved run of ``release`` whose Address rankings are ``ranked`` (default: JUDGED_RUNS[name])."""
    import json

    from ratio_bench.evaluation.evaluate import ScoreResult
    from ratio_bench.evaluation.runs import save_run

    ranked = ranked or JUDGED_RUNS[name]
    scores = {q: [1.0 - i / 10 for i in range(len(ids))] for q, ids in ranked.items()}
    result = ScoreResult(
        f"model-{name}", {}, {}, 0.0, runs={"address": ranked}, run_scores={"address": scores}
    )
    return save_run(result, json.loads((release / "manifest.json").read_text()), "test", out)


@pytest.fixture
def judged_release(tmp_path: Path) -> Path:
    return write_judged_release(tmp_path / "tiny")
