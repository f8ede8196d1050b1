import copy
import fcntl
import os
import stat
import time
from pathlib import Path

import pytest

from ratio_bench.core.io import (
    MAX_MANIFEST_BYTES,
    FileTooLargeError,
    OutputDirError,
    RejectLog,
    folder_files,
    prepare_output_dir,
    read_manifest,
    staged_dir,
    sum_nested,
    write_json,
)
from ratio_bench.corpus.report import CorpusReport


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_outputs_honour_the_umask_not_mkstemps_0600(tmp_path):
    old = os.umask(0o022)
    try:
        write_json(tmp_path / "manifest.json", {"a": 1})
        with RejectLog(tmp_path / "rejects.jsonl") as log:
            log.add("src", "id", "why")
    finally:
        os.umask(old)
    assert _mode(tmp_path / "manifest.json") == 0o644
    assert _mode(tmp_path / "rejects.jsonl") == 0o644
    assert not list(tmp_path.glob(".*.tmp"))


def _artefact(folder: Path, kind: str, files: list[str], listed: list[str] | None = None) -> Path:
    for rel in files:
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_text(rel, encoding="utf-8")
    write_json(folder / "manifest.json", {"kind": kind, **({"files": listed} if listed is not None else {})})
    return folder


def test_replacing_an_artefact_refuses_files_its_manifest_does_not_list(tmp_path):
    out = _artefact(tmp_path / "run", "run", ["address.parquet", "notes.txt"], listed=["address.parquet"])
    with (
        pytest.raises(
            OutputDirError, match=r"^\S*run: holds files .*: notes.txt; .*Move them away"
        ) as refused,
        staged_dir(out, "run") as stage,
    ):
        (stage / "address.parquet").write_text("new", encoding="utf-8")
    assert refused.value.value == out  # the command line names the option that gave it
    assert (out / "notes.txt").read_text() == "notes.txt" and (out / "address.parquet").read_text() != "new"
    legacy = _artefact(tmp_path / "index", "index", ["candidates.parquet"])  # a manifest listing nothing
    with pytest.raises(OutputDirError, match="candidates.parquet"):
        prepare_output_dir(legacy, "index")
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []  # no staging left


def test_a_replaced_artefact_carries_its_keep_folder_over_but_not_its_own_files_there(tmp_path):
    out = _artefact(
        tmp_path / "rel", "release", ["a.txt", "judgments/silver.parquet", "judgments/pool.json"],
        listed=["a.txt", "judgments/silver.parquet"],
    )  # fmt: skip
    with staged_dir(out, "release", keep=("judgments",)) as stage:
        write_json(stage / "manifest.json", {"kind": "release", "files": []})
    assert folder_files(out) == ["judgments/pool.json", "manifest.json"]
    assert (out / "judgments" / "pool.json").read_text() == "judgments/pool.json"


def _stage_name(out: Path, token: str) -> Path:
    return out.parent / f".{out.name}.{token}.building"


def test_staging_folders_of_killed_runs_are_removed_by_the_next_run_unless_in_use(tmp_path, capsys):
    out = tmp_path / "idx"
    stale, busy = _stage_name(out, "abcd_123"), _stage_name(out, "efgh4567")
    other = [
        _stage_name(tmp_path / "other", "abcd1234"),
        tmp_path / ".idx.abc.building",
        tmp_path / ".idx.old",
    ]
    for folder in (stale, busy, *other):
        (folder / "vectors").mkdir(parents=True)
        (folder / "vectors" / "v.npy").write_bytes(b"0" * 10)
    fd = os.open(busy, os.O_RDONLY)
    fcntl.flock(fd, fcntl.LOCK_EX)  # a build still running holds its staging folder
    try:
        with staged_dir(out, "index") as stage:
            assert not stale.exists() and busy.exists()
            write_json(stage / "manifest.json", {"kind": "index", "files": []})
    finally:
        os.close(fd)
    assert busy.exists() and all(p.exists() for p in other)
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "removed 1 staging folder" in err and stale.name in err
    with staged_dir(out, "index") as stage:  # unlocked now: the next run removes it too
        write_json(stage / "manifest.json", {"kind": "index", "files": []})
    assert not busy.exists() and busy.name in capsys.readouterr().err


def test_a_planted_giant_manifest_is_refused_by_its_size_before_it_is_read(tmp_path: Path) -> None:
    """A manifest larger than any Ratio writes (a sparse 65 MiB file here) is one error line naming it, for a
    release, an index and a judged pool alike; nothing is read into memory."""
    from tests.helpers.cli import assert_user_error, run_ratio

    folder = tmp_path / "planted"
    folder.mkdir()
    with (folder / "manifest.json").open("wb") as fh:
        fh.truncate(MAX_MANIFEST_BYTES + 1)
    with pytest.raises(FileTooLargeError, match="manifest.json"):
        read_manifest(folder)
    for argv in (["score", "--model", "bm25", "--dataset", folder], ["search", "--index", folder, "q"]):
        assert_user_error(run_ratio(*argv, cwd=tmp_path, timeout=60), "manifest.json", "limit")


def test_sum_nested_adds_numbers_key_by_key_at_every_depth():
    a = {"z": 1, "corpus": {"b.jsonl": {"read": 2, "why": {"x": 1}}}, "name": "first", "ok": True}
    b = {
        "corpus": {"a.jsonl": {"read": 5}, "b.jsonl": {"read": 1.5, "why": {"x": 2, "y": 1}}},
        "name": "second",
    }
    inputs = copy.deepcopy([a, b, {}])
    merged = sum_nested(inputs)
    assert merged == {
        "corpus": {"a.jsonl": {"read": 5}, "b.jsonl": {"read": 3.5, "why": {"x": 3, "y": 1}}},
        "name": "first",  # not a number: the first value stays
        "ok": True,  # a boolean is not a count
        "z": 1,
    }
    assert list(merged) == sorted(merged) and list(merged["corpus"]) == ["a.jsonl", "b.jsonl"]
    assert list(merged["corpus"]["b.jsonl"]["why"]) == ["x", "y"]
    assert inputs == [a, b, {}]  # merged into a fresh accumulator: no input was changed
    merged["corpus"]["a.jsonl"]["read"] = 0
    assert inputs[1]["corpus"]["a.jsonl"]["read"] == 5


def _task_stats(i: int) -> dict:
    """One mining task's statistics as ``MineUnits`` writes them: the corpus report of its one file."""
    report = CorpusReport()
    counts = report[f"part-{i:05d}.jsonl"]
    counts.papers_read, counts.papers_kept, counts.sentences, counts.raw_bytes = 3, 2, 40, 9000
    counts.rejected["no_text"] += 1
    counts.paragraphs_by_category["introduction"] += 4
    counts.date_precision["day"] += 2
    mining = {"sentence_pairs": 7, "rejects": {"too_short": 2}, "marker_kept": {"address": {"to address": 1}}}
    return {"corpus": report.as_dict(), "mining": mining, "seconds": 0.01}


def test_sum_nested_merges_the_stats_of_5000_files_in_linear_time():
    """Every task adds one file under ``corpus.sources``; re-copying the merged part per task was quadratic
    (minutes for 5,000 files, after every task had finished)."""
    tasks = [_task_stats(i) for i in range(5000)]
    start = time.perf_counter()
    merged = sum_nested(tasks)
    elapsed = time.perf_counter() - start
    assert len(merged["corpus"]["sources"]) == 5000
    assert merged["corpus"]["total"]["papers_read"] == 15000 and merged["mining"]["sentence_pairs"] == 35000
    assert elapsed < 2, f"{elapsed:.1f} s to merge 5,000 task statistics"
