import hashlib
import json
import shutil

import pyarrow.parquet as pq
import pytest

from ratio_bench.lexicon.model import default_lexicon_dir
from ratio_bench.mining.run import PlanMismatchError, run_mining
from ratio_bench.mining.schema import DISTRACTOR_SCHEMA, PAIR_SCHEMA
from ratio_bench.mining.step import MineUnits, MiningSettings, _lexicon
from ratio_bench.mining.units import plan_units


def _digest(folder):
    return {
        p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*.parquet"))
    }


def test_run_mining_outputs_schema_stats_and_rejects(fixture_corpus, tmp_path):
    out = tmp_path / "mined"
    stats = run_mining([fixture_corpus], out, MiningSettings(progress=False))
    units = plan_units([fixture_corpus])
    assert [u.label for u in units] == ["abstracts.jsonl", "fulltext.parquet#rg0", "fulltext.parquet#rg1"]
    assert stats["tasks_done"] == stats["tasks_planned"] == 3
    pairs = [r for f in sorted((out / "pairs").glob("*.parquet")) for r in pq.read_table(f).to_pylist()]
    assert pq.read_schema(out / "pairs" / "00000.parquet") == PAIR_SCHEMA
    assert pq.read_schema(out / "distractors" / "00000.parquet") == DISTRACTOR_SCHEMA
    got = {(r["relation"], r["marker"], r["paper_id"]) for r in pairs}
    assert got == {
        ("address", "to overcome this limitation", "fx/abs1"),
        ("address", "to address this issue", "fx/nougat"),
        ("broaden", "more generally", "fx/nougat"),
        ("specify", "for example", "fx/nougat"),
        ("address", "to mitigate this problem", "fx/docling"),
    }
    assert stats["tuples"] == {"address": 3, "broaden": 1, "specify": 1}
    assert stats["distractors"] == {"explicit_contrast": 1}
    assert stats["corpus"]["total"]["rejected"] == {"no_text": 1}
    assert stats["corpus"]["total"]["flagged"] == {"unparsable_date": 1}
    assert stats["by_source"]["fulltext.parquet"] == {
        "address": 2,
        "broaden": 1,
        "explicit_contrast": 1,
        "specify": 1,
    }
    assert json.loads((out / "stats.json").read_text()) == stats
    rejects = [
        json.loads(x) for f in sorted((out / "rejects").glob("*.jsonl")) for x in f.read_text().splitlines()
    ]
    assert {r["reason"] for r in rejects} == {"no_text", "unparsable_date"}


def test_rebuild_is_byte_identical(fixture_corpus, tmp_path):
    run_mining([fixture_corpus], tmp_path / "a", MiningSettings(progress=False))
    run_mining([fixture_corpus], tmp_path / "b", MiningSettings(progress=False))
    assert _digest(tmp_path / "a") == _digest(tmp_path / "b") != {}


def test_resume_skips_completed_tasks_and_redoes_the_killed_one(fixture_corpus, tmp_path, monkeypatch):
    out = tmp_path / "mined"
    real_run = MineUnits.run
    calls = []

    def crash_on_rank_2(self, data=None, rank=0, world_size=1):
        calls.append(rank)
        if rank == 2:
            raise KeyboardInterrupt("simulated kill")
        return real_run(self, data, rank, world_size)

    monkeypatch.setattr(MineUnits, "run", crash_on_rank_2)
    with pytest.raises(KeyboardInterrupt):
        run_mining([fixture_corpus], out, MiningSettings(progress=False))
    assert not (out / "pairs" / "00002.parquet").exists()  # nothing half-written
    assert not list((out / "pairs").glob(".*.tmp"))
    first = _digest(out)
    calls.clear()

    def record(self, data=None, rank=0, world_size=1):
        calls.append(rank)
        return real_run(self, data, rank, world_size)

    monkeypatch.setattr(MineUnits, "run", record)
    stats = run_mining([fixture_corpus], out, MiningSettings(progress=False))
    assert calls == [2]  # only the unfinished task ran again
    assert stats["tasks_done"] == 3
    assert {k: v for k, v in _digest(out).items() if k in first} == first


def test_plan_mismatch_is_refused(fixture_corpus, tmp_path):
    out = tmp_path / "mined"
    run_mining([fixture_corpus], out, MiningSettings(progress=False))
    with pytest.raises(PlanMismatchError):
        run_mining([fixture_corpus], out, MiningSettings(progress=False, keep_case=True))


def test_lexicon_is_loaded_once_per_process_until_its_files_change(tmp_path):
    lex_dir = tmp_path / "lexicon"
    shutil.copytree(default_lexicon_dir(), lex_dir)
    first = _lexicon(str(lex_dir))
    assert _lexicon(str(lex_dir)) is first
    with (lex_dir / "address.tsv").open("a", encoding="utf-8") as fh:
        fh.write("by way of a cheap cure\tmanual\ta marker added after the first load\n")
    edited = _lexicon(str(lex_dir))
    assert edited is not first
    assert edited.match("By way of a cheap cure, we add a marker.").label == "address"
    assert first.match("By way of a cheap cure, we add a marker.") is None
