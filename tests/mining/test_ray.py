"""``--executor ray`` on a real Ray cluster gives the local executor's rows: a private cluster Ray starts for the
run, and one started with ``ray start --head`` on loopback (both on this machine, bounded to two CPUs)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from tests.helpers.corpus import shared_record, write_jsonl

from ratio_bench.corpus.readers import ReaderSettings
from ratio_bench.mining.run import MiningTasksFailedError, run_mining
from ratio_bench.mining.step import MiningSettings

ray = pytest.importorskip("ray", reason="Ray comes with the cluster extra (make install has it)")

# Several tasks from a small sample: its 8 units (row groups) grouped up to 256 KB are 4 tasks.
SETTINGS = MiningSettings(progress=False, task_bytes=256 << 10)
TIMINGS = {"wall_seconds", "mb_per_second", "task_seconds"}


@pytest.fixture(scope="module")
def sample(tmp_path_factory, request) -> Path:
    """Full texts of two shared-corpus files (Nougat and Docling Markdown), 24 papers each, in 3 files."""
    shared = request.getfixturevalue("shared_corpus")
    folder = tmp_path_factory.mktemp("ray-sample")
    for name in ("neurips_2023_2024_fulltext.parquet", "neurips_2025_fulltext.parquet"):
        table = pa.Table.from_batches([next(pq.ParquetFile(shared / name).iter_batches(batch_size=24))])
        pq.write_table(table.slice(0, 12), folder / f"a-{name}", row_group_size=4)
        pq.write_table(table.slice(12, 12), folder / f"b-{name}")
    return folder


@pytest.fixture(scope="module")
def shared_corpus():
    from tests.helpers.corpus import SHARED_CORPUS

    if not SHARED_CORPUS.is_dir():
        pytest.skip(f"shared corpus not found at {SHARED_CORPUS} (set RATIO_SHARED_CORPUS)")
    return SHARED_CORPUS


@pytest.fixture(scope="module")
def local_run(sample, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("local") / "mined"
    run_mining([sample], out, SETTINGS, workers=2)
    return out


def _rows(folder: Path, sub: str) -> list[dict]:
    rows = [r for f in sorted((folder / sub).glob("*.parquet")) for r in pq.read_table(f).to_pylist()]
    return sorted(rows, key=lambda r: json.dumps(r, sort_keys=True, default=str))


def _stats(folder: Path) -> dict:
    return {k: v for k, v in json.loads((folder / "stats.json").read_text()).items() if k not in TIMINGS}


def _assert_same_as_local(ray_out: Path, local_out: Path) -> None:
    pairs = _rows(ray_out, "pairs")
    assert len(pairs) > 20 and pairs == _rows(local_out, "pairs")
    assert _rows(ray_out, "distractors") == _rows(local_out, "distractors")
    stats = _stats(ray_out)
    assert stats == _stats(local_out)
    assert stats["tasks_done"] == stats["tasks_planned"] == 4


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_a_private_ray_cluster_mines_the_local_rows(sample, local_run, tmp_path):
    out = tmp_path / "mined"
    # a task group that outlives 120 s is killed and resubmitted (its finished ranks skipped): no endless wait
    stats = run_mining([sample], out, SETTINGS, workers=2, executor="ray", executor_options={"time": 120})
    assert not ray.is_initialized()  # the cluster it started is gone
    assert stats == json.loads((out / "stats.json").read_text())
    _assert_same_as_local(out, local_run)
    assert len(list((out / "logs" / "completions").iterdir())) == stats["tasks_planned"]


@pytest.mark.slow  # ~6 s (a `ray start --head` cluster of its own); make test-all runs it
def test_mining_on_a_cluster_started_with_ray_start_on_loopback(sample, local_run, tmp_path):
    port = _free_port()
    home = tmp_path / "home"  # a ~/.ray/auth_token of the user's makes the head demand a token we do not send
    home.mkdir()
    env = {**os.environ, "RAY_USAGE_STATS_ENABLED": "0", "HOME": str(home)}
    src = str(Path(__file__).resolve().parents[2] / "src")
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [src, env.get("PYTHONPATH")]))
    ray_bin = Path(sys.executable).with_name("ray")
    temp = tempfile.mkdtemp(prefix="ray-", dir="/tmp")  # short: Ray's socket paths must fit in 107 bytes
    head = subprocess.Popen(
        [str(ray_bin), "start", "--head", "--block", "--node-ip-address=127.0.0.1", f"--port={port}",
         "--num-cpus=2", "--include-dashboard=false", f"--temp-dir={temp}"],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
    )  # fmt: skip
    try:
        address = f"127.0.0.1:{port}"
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            assert head.poll() is None, "ray start --head exited"
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.5)
        out = tmp_path / "mined"
        run_mining([sample], out, SETTINGS, workers=2, executor="ray", executor_options={"address": address})
        _assert_same_as_local(out, local_run)
        assert head.poll() is None  # a cluster we joined is left running
    finally:
        # the head and every process it started share its session; a graceful stop drains for 30 s
        os.killpg(head.pid, signal.SIGKILL)
        head.wait()
        shutil.rmtree(temp, ignore_errors=True)


def test_a_failed_ray_task_is_an_error_naming_its_log(tmp_path):
    """datatrove's Ray executor only logs a failed task; ``ratio mine run`` must not report success."""
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    text = "Dense retrievers miss rare terms. To address this limitation, we add a sparse lexical channel."
    write_jsonl(corpus / "a.jsonl", [shared_record("r/a", text, kind="abstract")])
    (corpus / "b.jsonl").write_text("{broken\n")  # --strict: the task reading it fails
    settings = MiningSettings(progress=False, task_bytes=1, reader=ReaderSettings(strict=True))
    out = tmp_path / "mined"
    with pytest.raises(MiningTasksFailedError, match=r"1 of 2 mining tasks did not finish .*task_00001\.log"):
        run_mining([corpus], out, settings, workers=2, executor="ray")
    assert (out / "logs" / "completions" / "00000").is_file()
    assert not (out / "stats.json").exists()
