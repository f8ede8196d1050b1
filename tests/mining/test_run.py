import hashlib
import json
import os
import shutil
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path
from subprocess import DEVNULL

import pyarrow.parquet as pq
import pytest
from tests.helpers.cli import assert_user_error, run_ratio
from tests.helpers.corpus import shared_record, write_jsonl, write_shared_parquet

from ratio_bench.core.io import RejectLog
from ratio_bench.lexicon.model import default_lexicon_dir
from ratio_bench.mining.outdir import FolderBusyError
from ratio_bench.mining.run import PlanMismatchError, run_mining
from ratio_bench.mining.schema import DISTRACTOR_SCHEMA, PAIR_SCHEMA
from ratio_bench.mining.step import MineUnits, MiningSettings, _lexicon
from ratio_bench.mining.units import WorkUnit, group_units, plan_units

# One task per unit (the fixture's three units would otherwise be one task), where a test needs several tasks.
PER_UNIT = MiningSettings(progress=False, task_bytes=1)


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
    assert stats["tasks_done"] == stats["tasks_planned"] == 1  # three small units, one task
    assert json.loads((out / "plan.json").read_text())["tasks"] == [[0, 3]]
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
        run_mining([fixture_corpus], out, PER_UNIT)
    assert not (out / "pairs" / "00002.parquet").exists()  # nothing half-written
    assert not list((out / "pairs").glob(".*.tmp"))
    first = _digest(out)
    calls.clear()

    def record(self, data=None, rank=0, world_size=1):
        calls.append(rank)
        return real_run(self, data, rank, world_size)

    monkeypatch.setattr(MineUnits, "run", record)
    stats = run_mining([fixture_corpus], out, PER_UNIT)
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


def _rejects_rows(out):
    return [
        json.loads(x) for f in sorted((out / "rejects").glob("*.jsonl")) for x in f.read_text().splitlines()
    ]


def test_input_edited_in_place_at_the_same_size_is_refused(fixture_corpus, tmp_path):
    out = tmp_path / "mined"
    run_mining([fixture_corpus], out, MiningSettings(progress=False))
    path = fixture_corpus / "abstracts.jsonl"
    before = path.stat()
    data = path.read_bytes()
    edited = data.replace(b"sparse lexical", b"sparse Lexical")
    assert edited != data and len(edited) == len(data)
    path.write_bytes(edited)
    with pytest.raises(
        PlanMismatchError,
        match=r"abstracts\.jsonl changed since it was mined .*delete .*another output folder",
    ):
        run_mining([fixture_corpus], out, MiningSettings(progress=False))
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))  # same size, same mtime: the digest tells
    with pytest.raises(PlanMismatchError, match=r"abstracts\.jsonl changed since it was mined \(digest\)"):
        run_mining([fixture_corpus], out, MiningSettings(progress=False))
    path.write_bytes(data)
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert run_mining([fixture_corpus], out, MiningSettings(progress=False))["tasks_done"] == 1


def test_leftover_temp_files_of_a_killed_task_do_not_break_resume(fixture_corpus, tmp_path):
    clean, out = tmp_path / "clean", tmp_path / "mined"
    run_mining([fixture_corpus], clean, PER_UNIT)
    run_mining([fixture_corpus], out, PER_UNIT)
    # What SIGKILL during task 1 leaves: no completion mark, no shards, temporary files of every writer.
    (out / "logs" / "completions" / "00001").unlink()
    leftovers = []
    for sub, ext in {
        "pairs": "parquet",
        "distractors": "parquet",
        "rejects": "jsonl",
        "stats": "json",
    }.items():
        (out / sub / f"00001.{ext}").unlink()
        leftovers.append(out / sub / f".00001.{ext}.k1ll3d00.tmp")
    leftovers.append(out / ".stats.json.k1ll3d00.tmp")
    for p in leftovers:
        p.write_bytes(b"half-written")
    foreign = out / "pairs" / ".notes.tmp"  # not a name of ours: left alone
    foreign.write_text("mine")
    stats = run_mining([fixture_corpus], out, PER_UNIT)
    assert stats["tasks_done"] == 3
    assert not any(p.exists() for p in leftovers)
    assert foreign.read_text() == "mine"
    assert _digest(out) == _digest(clean)


def _descendants(pid: int) -> set[int]:
    parents = {}
    for proc_stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = proc_stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        parents[int(proc_stat.parent.name)] = int(fields[1])
    found, frontier = set(), {pid}
    while frontier:
        frontier = {p for p, pp in parents.items() if pp in frontier} - found
        found |= frontier
    return found


def _running(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"  # a zombie has exited (only its exit status waits for a reaper)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="uses /proc and PR_SET_PDEATHSIG")
def test_sigkilled_mine_leaves_no_process_behind_and_resumes(tmp_path, nougat_text):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for i in range(40):
        write_jsonl(corpus / f"p{i:02d}.jsonl", [shared_record(f"k/{i}", nougat_text)])
    out = tmp_path / "mined"
    env = {k: v for k, v in os.environ.items() if k != "RATIO_DEBUG"}
    cmd = [sys.executable, "-m", "ratio_bench.cli", "mine", "--corpus", str(corpus), "--out", str(out)]
    proc = subprocess.Popen(
        [*cmd, "--quiet", "--workers", "2", "--task-mb", "1e-6"], env=env, stdout=DEVNULL, stderr=DEVNULL
    )
    completions = out / "logs" / "completions"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not (completions.is_dir() and any(completions.iterdir())):
        time.sleep(0.005)
    children = _descendants(proc.pid)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert children, "the run had started its executor's processes"
    assert len(list(completions.iterdir())) < 40, "killed before the end"
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and any(map(_running, children)):
        time.sleep(0.05)
    assert not [p for p in children if _running(p)], "orphaned processes of the killed run"
    stats = run_mining([corpus], out, PER_UNIT, workers=2)
    assert stats["tasks_done"] == 40
    assert not list(out.rglob("*.tmp"))


def test_a_second_local_run_on_the_same_folder_is_refused(fixture_corpus, tmp_path):
    out = tmp_path / "mined"
    out.mkdir()
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import fcntl, os, sys, time; fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT); "
            "fcntl.lockf(fd, fcntl.LOCK_EX); print('locked', flush=True); time.sleep(60)",
            str(out / ".lock"),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "locked"
        with pytest.raises(
            FolderBusyError, match=r"being written by another ratio mine.*another output folder"
        ):
            run_mining([fixture_corpus], out, MiningSettings(progress=False))
    finally:
        holder.kill()
        holder.wait()
    assert run_mining([fixture_corpus], out, MiningSettings(progress=False))["tasks_done"] == 1


@pytest.mark.parametrize("umask", [0o022, 0o027])
def test_rejects_files_honour_the_umask(fixture_corpus, tmp_path, umask):
    previous = os.umask(umask)
    try:
        run_mining([fixture_corpus], tmp_path / "mined", MiningSettings(progress=False))
        with RejectLog(tmp_path / "corpus-rejects.jsonl") as log:
            log.add("x.jsonl", "1", "no_text")
    finally:
        os.umask(previous)
    files = [*sorted((tmp_path / "mined" / "rejects").glob("*.jsonl")), tmp_path / "corpus-rejects.jsonl"]
    assert {stat.S_IMODE(f.stat().st_mode) for f in files} == {0o666 & ~umask}


def test_a_failing_block_leaves_no_rejects_file(tmp_path):
    with pytest.raises(RuntimeError), RejectLog(tmp_path / "r.jsonl") as log:
        log.add("x.jsonl", "1", "no_text")
        raise RuntimeError("crash")
    assert list(tmp_path.iterdir()) == []


def test_mine_console_and_stats_agree_with_the_rejects_files(fixture_corpus, tmp_path):
    (fixture_corpus / "broken.parquet").write_bytes(b"PAR1 not really")
    with (fixture_corpus / "odd.jsonl").open("w") as fh:
        fh.write(json.dumps(shared_record("odd/1", 12345)) + "\n[1]\n{broken\n")
        fh.write(
            json.dumps(shared_record("odd/2", "Fine text here.", "when pigs fly", kind="abstract")) + "\n"
        )
    out = tmp_path / "mined"
    run = run_ratio("mine", "--corpus", fixture_corpus, "--out", out, "--quiet")
    assert run.code == 0 and "Traceback" not in run.err, run.err
    stats = json.loads((out / "stats.json").read_text())
    rows = _rejects_rows(out)
    assert stats["rejects_logged"]["rows"] == len(rows) > 0
    assert f"rejects: {len(rows):,} rows in rejects/*.jsonl" in run.out
    total = stats["corpus"]["total"]
    assert total["papers_read"] == total["papers_kept"] + sum(total["rejected"].values())
    for name, counts in stats["corpus"]["sources"].items():
        assert counts["papers_read"] == counts["papers_kept"] + sum(counts["rejected"].values()), name
    assert {k: total["rejected"][k] for k in ("file_unreadable", "wrong_type:text", "malformed_json")} == {
        "file_unreadable": 1,
        "wrong_type:text": 1,
        "malformed_json": 1,
    }
    by_action = {
        a: sum(1 for r in rows if r["action"] == a and "marker" not in r) for a in ("dropped", "flagged")
    }
    assert by_action == {
        "dropped": sum(total["rejected"].values()),
        "flagged": sum(total["flagged"].values()),
    }
    assert sum(1 for r in rows if "marker" in r) == sum(stats["rejects"].values())

    strict = run_ratio(
        "mine", "--corpus", fixture_corpus, "--out", tmp_path / "strict", "--quiet", "--strict"
    )
    assert_user_error(strict, str(fixture_corpus / "broken.parquet"), "--strict")


def test_local_mining_shows_one_bar_for_the_stage_not_one_per_task(fixture_corpus, tmp_path, capfd):
    settings = MiningSettings(progress=True, task_bytes=1)
    stats = run_mining([fixture_corpus], tmp_path / "m", settings, workers=2)
    err = capfd.readouterr().err
    assert stats["tasks_done"] == 3
    assert "mining (3 tasks)" in err and "3/3" in err  # the stage's bar reached its end
    assert "task 1/3" not in err and "papers" not in err  # no bar per task


def _unit(name: str, nbytes: int, row_group: int | None = None) -> WorkUnit:
    return WorkUnit(name, row_group, None, nbytes, 0, "d", nbytes=nbytes)


def test_small_units_are_grouped_up_to_the_target_and_a_large_one_stands_alone():
    units = [
        _unit("a", 3),
        _unit("b", 3),
        _unit("c", 3),
        _unit("big", 50, 0),
        _unit("big", 50, 1),
        _unit("d", 1),
    ]
    assert group_units(units, 7) == [(0, 2), (2, 3), (3, 4), (4, 5), (5, 6)]
    assert group_units(units, 1000) == [(0, 6)]
    assert group_units(units, 1) == [(i, i + 1) for i in range(6)]
    assert group_units([], 7) == []
    with pytest.raises(ValueError):
        group_units(units, 0)


def test_many_one_paper_files_are_a_few_tasks_with_a_few_files_each(tmp_path, nougat_text):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for i in range(24):
        write_shared_parquet(corpus / f"p{i:02d}.parquet", [shared_record(f"k/{i}", nougat_text)])
    unit_bytes = max(u.nbytes for u in plan_units([corpus]))  # compressed bytes of a file's one row group
    settings = MiningSettings(progress=False, task_bytes=unit_bytes * 8)  # 8 files per task
    out = tmp_path / "grouped"
    stats = run_mining([corpus], out, settings, workers=None)
    assert stats["tasks_done"] == stats["tasks_planned"] == 3
    assert stats["corpus"]["total"]["papers_kept"] == 24
    assert sorted(p.name for p in (out / "pairs").iterdir()) == [
        "00000.parquet",
        "00001.parquet",
        "00002.parquet",
    ]
    one_each = run_mining([corpus], tmp_path / "per-file", PER_UNIT, workers=2)
    assert one_each["tasks_done"] == 24
    assert {k: v for k, v in stats.items() if k not in ("wall_seconds", "mb_per_second", "task_seconds",
            "tasks_done", "tasks_planned")} == {
        k: v for k, v in one_each.items() if k not in ("wall_seconds", "mb_per_second", "task_seconds",
        "tasks_done", "tasks_planned")}  # fmt: skip
    rows = sorted(
        map(str, (r for f in sorted((out / "pairs").glob("*.parquet")) for r in pq.read_table(f).to_pylist()))
    )
    per_file = sorted(
        map(
            str,
            (
                r
                for f in sorted((tmp_path / "per-file" / "pairs").glob("*.parquet"))
                for r in pq.read_table(f).to_pylist()
            ),
        )
    )
    assert rows == per_file and rows


def test_a_quiet_run_on_several_workers_prints_no_datatrove_logs(fixture_corpus, tmp_path):
    out = tmp_path / "mined"
    args = ("--corpus", fixture_corpus, "--out", out, "--quiet", "--task-mb", "1e-6", "--workers", "2")
    run = run_ratio("mine", "run", *args)
    assert run.code == 0, run.err
    assert "datatrove" not in run.err and "Launching pipeline" not in run.err, run.err
    assert json.loads((out / "stats.json").read_text())["tasks_done"] == 3
