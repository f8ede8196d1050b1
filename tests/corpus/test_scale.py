"""The scale-corpus generator: N distinct, mineable copies of a base corpus, reproducible from the seed."""

from __future__ import annotations

import hashlib

import duckdb
import pyarrow.parquet as pq
import pytest

from ratio_bench.corpus.scale import ScaleSpec, base_sample, recombine, write_scaled
from ratio_bench.mining.run import run_mining
from ratio_bench.mining.step import MiningSettings


def _pairs(folder):
    return duckdb.sql(
        f"SELECT relation, marker, paper_id, query, gold FROM read_parquet('{folder}/pairs/*.parquet')"
    ).fetchall()


def test_scaled_copies_are_new_papers_that_mining_still_finds_pairs_in(fixture_corpus, tmp_path):
    base = base_sample([fixture_corpus], 10, seed=3)
    assert sorted(base["id"].to_pylist()) == ["fx/docling", "fx/empty", "fx/nougat"]  # full texts only
    files = write_scaled(
        base, ScaleSpec(factor=3, seed=3, papers_per_file=4, row_group_papers=2), tmp_path / "x3"
    )
    rows = pq.read_table(tmp_path / "x3").to_pylist()
    assert len(files) == 3 and len(rows) == 9
    assert len({r["id"] for r in rows}) == 9 and not {r["id"] for r in rows} & set(base["id"].to_pylist())
    assert {r["date"] for r in rows} <= set(base["date"].to_pylist())
    assert len({r["title"] for r in rows}) == 9  # assembly groups works by title: each copy is its own work
    texts = [r["text"] for r in rows if r["text"].strip()]
    assert len(set(texts)) == len(texts) == 6 and not set(texts) & set(base["text"].to_pylist())

    pq.write_table(base, tmp_path / "base.parquet")
    settings = MiningSettings(progress=False)
    run_mining([tmp_path / "base.parquet"], tmp_path / "m1", settings)
    run_mining([tmp_path / "x3"], tmp_path / "m3", settings)
    found, scaled = _pairs(tmp_path / "m1"), _pairs(tmp_path / "m3")
    # every copy of the Nougat paper keeps its markers adjacent to their sentences: the same relations and
    # markers are mined from it, with queries and golds that no other copy (and not the base) has
    for copy in range(3):
        mine = [p for p in scaled if p[2] == f"fx/nougat~s3c{copy}"]
        assert sorted(p[:2] for p in mine) == sorted(p[:2] for p in found if p[2] == "fx/nougat")
    assert len({(q, g) for *_, q, g in scaled}) == len(scaled) > 2 * len(found)
    assert not {(q, g) for *_, q, g in scaled} & {(q, g) for *_, q, g in found}


def test_the_same_seed_gives_the_same_bytes_and_another_seed_other_texts(fixture_corpus, tmp_path):
    base = base_sample([fixture_corpus], 10)
    for name, seed in (("a", 0), ("b", 0), ("c", 1)):
        write_scaled(base, ScaleSpec(factor=2, seed=seed), tmp_path / name)

    def digest(name):
        return hashlib.sha256((tmp_path / name / "part-00000.parquet").read_bytes()).hexdigest()

    assert digest("a") == digest("b") != digest("c")
    with pytest.raises(FileExistsError, match="not empty"):
        write_scaled(base, ScaleSpec(factor=2), tmp_path / "a")


def test_recombination_keeps_layout_and_sentence_initial_markers():
    import random

    text = (
        "# 1 Introduction\n\nDense retrievers miss rare terms in long scientific queries today. "
        "To address this limitation, we add a sparse lexical channel to the dense model.\n\n"
        "| a | b |\n|---|---|\n\n$$x = y$$"
    )
    out = recombine(text, random.Random(0))
    blocks = out.split("\n\n")
    assert blocks[0] == "# 1 Introduction" and blocks[2:] == ["| a | b |\n|---|---|", "$$x = y$$"]
    first, second = blocks[1].split(". ", 1)
    assert first.startswith("Dense retrievers miss") and second.startswith("To address this limitation,")
