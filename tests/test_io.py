import copy
import os
import stat
import time
from pathlib import Path

from ratio_bench.corpus.report import CorpusReport
from ratio_bench.io import RejectLog, sum_nested, write_json


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
