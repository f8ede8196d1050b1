"""One writer per release: the release lock, checked versions, validated manifests, append on a passing release."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from tests.dataset.test_append import base  # noqa: F401 (the module-scoped release with snapshots)
from tests.helpers.cli import assert_user_error, run_ratio
from tests.helpers.corpus import write_jsonl
from tests.helpers.dataset import dated_paper

from ratio_bench.core.io import FolderLockedError, folder_lock, lock_file
from ratio_bench.dataset.contract import file_checksums


def _append(release: Path, corpus: Path, version: str, work: Path, *more: str) -> list[str]:
    return [
        sys.executable, "-m", "ratio_bench.cli", "dataset", "append", "--dataset", str(release),
        "--corpus", str(corpus), "--version", version, "--work-dir", str(work), "--quiet", *more,
    ]  # fmt: skip


def _holder(release: Path, command: str) -> subprocess.Popen:
    """Another process holding the release's lock (as a running append does) until its stdin closes."""
    code = (
        "import sys; from ratio_bench.core.io import folder_lock\n"
        f"with folder_lock({str(release)!r}, {command!r}):\n"
        "    print('held', flush=True); sys.stdin.read()\n"
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout.readline().strip() == "held"
    return proc


def test_two_appends_at_once_lose_no_version(base, tmp_path):  # noqa: F811
    """Both start together on one release: each run that says it made a version finds it in the release."""
    release = tmp_path / "ratio"
    shutil.copytree(base / "ratio", release)
    april, may = tmp_path / "apr.jsonl", tmp_path / "may.jsonl"
    write_jsonl(
        april, [dated_paper("s/apr", "2022-04-05", {"address": 3}, 6, "April paper on dense indexes")]
    )
    write_jsonl(may, [dated_paper("s/may", "2022-05-09", {"address": 2}, 6, "May paper on long documents")])
    env = {k: v for k, v in os.environ.items() if k != "RATIO_DEBUG"}
    runs = [
        subprocess.Popen(
            _append(release, corpus, version, tmp_path / version),
            env=env,
            text=True,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
        )  # fmt: skip
        for corpus, version in ((april, "0.0.2-test"), (may, "0.0.3-test"))
    ]
    outs = [(p.wait(timeout=300), *p.communicate()) for p in runs]
    made = [
        v
        for (code, out, _), v in zip(outs, ("0.0.2-test", "0.0.3-test"), strict=True)
        if "is now version" in out
    ]
    manifest = json.loads((release / "manifest.json").read_text())
    assert set(made) <= {v["version"] for v in manifest["versions"]}, outs  # no reported version is gone
    for code, out, err in outs:
        assert code == 0 or "another run is writing it" in err, (code, out, err)
    assert made, outs


def test_a_second_writer_is_refused_naming_the_holder_and_the_release_is_unchanged(base, tmp_path):  # noqa: F811
    release = tmp_path / "ratio"
    shutil.copytree(base / "ratio", release)
    before = file_checksums(release)
    holder = _holder(release, "ratio dataset append --version 0.0.2-test")
    try:
        run = run_ratio(*_append(release, base / "new.jsonl", "0.0.3-test", tmp_path / "w")[3:])
        line = assert_user_error(run, str(release), "another run is writing it", f"pid {holder.pid}")
        assert "ratio dataset append --version 0.0.2-test" in line and "--wait" in line
        started = time.monotonic()
        waited = run_ratio(
            *_append(release, base / "new.jsonl", "0.0.3-test", tmp_path / "w")[3:], "--wait", "1"
        )
        assert_user_error(waited, "another run is writing it", "waited 1 s")
        assert time.monotonic() - started < 60
        assert file_checksums(release) == before and not (tmp_path / "w").exists()
    finally:
        holder.stdin.close()
        holder.wait(timeout=30)
    assert not lock_file(release.resolve()).exists()  # released and removed
    run = run_ratio(*_append(release, base / "new.jsonl", "0.0.3-test", tmp_path / "w")[3:])
    assert run.code == 0 and "is now version 0.0.3-test" in run.out, run.err


def test_a_killed_holders_lock_is_taken_over_and_the_lock_is_reentrant(tmp_path):
    folder = tmp_path / "ratio"
    holder = _holder(folder, "ratio dataset build")
    with (
        pytest.raises(FolderLockedError, match=rf"pid {holder.pid} on .*`ratio dataset build`"),
        folder_lock(folder, "test"),
    ):
        pass
    holder.kill()  # SIGKILL: no clean-up, its lock file stays behind
    holder.wait(timeout=30)
    assert lock_file(folder).exists()
    with folder_lock(folder, "test") as out, folder_lock(folder, "test again"):  # stale: taken over
        assert out == folder.resolve()
        info = json.loads(lock_file(folder).read_text())
        assert info["pid"] == os.getpid() and info["command"] == "test"
    assert not lock_file(folder).exists()


@pytest.mark.parametrize("version", ["../../x", "0.3.0\n## injected", "", "1.0/x", "0.3.0 dev", "v" * 70])
def test_append_version_must_be_a_version(base, tmp_path, version):  # noqa: F811
    release = tmp_path / "nest" / "ratio"
    shutil.copytree(base / "ratio", release)
    before = file_checksums(release)
    run = run_ratio(
        "dataset", "append", "--dataset", release, "--corpus", base / "new.jsonl", "--version", version
    )
    line = assert_user_error(run, "--version", "not a version")
    assert "\n" not in line and file_checksums(release) == before
    assert sorted(p.name for p in (tmp_path / "nest").iterdir()) == ["ratio"]  # no work folder anywhere
    assert not (tmp_path / "x").exists()


@pytest.mark.parametrize(
    ("field", "value"),
    [("versions", "0.0.1-test"), ("versions", [{"version": 3}]), ("rows", []), ("snapshots_left_out", {})],
)
def test_append_validates_the_manifest_fields_it_uses(base, tmp_path, field, value):  # noqa: F811
    release = tmp_path / "ratio"
    shutil.copytree(base / "ratio", release)
    manifest = json.loads((release / "manifest.json").read_text())
    (release / "manifest.json").write_text(json.dumps(manifest | {field: value}))
    run = run_ratio(
        "dataset", "append", "--dataset", release, "--corpus", base / "new.jsonl", "--version", "0.0.2-test",
        "--work-dir", tmp_path / "w",
    )  # fmt: skip
    assert_user_error(run, "manifest.json", field, "damaged")


def test_append_refuses_a_release_that_fails_check(base, tmp_path):  # noqa: F811
    release = tmp_path / "ratio"
    shutil.copytree(base / "ratio", release)
    shard = next((release / "data" / "address").glob("test-*.parquet"))
    shard.write_bytes(shard.read_bytes() + b"tampered")
    run = run_ratio(
        "dataset", "append", "--dataset", release, "--corpus", base / "new.jsonl", "--version", "0.0.2-test",
        "--work-dir", tmp_path / "w",
    )  # fmt: skip
    line = assert_user_error(run, "fails `ratio dataset check`", "checksums", shard.name)
    assert "no new period" not in run.out + line and not (tmp_path / "w").exists()


def test_silver_and_build_are_refused_while_another_run_writes_the_release(
    silver_release, dataset_corpus, fake_server, make_judge, tmp_path
):
    from tests.helpers.dataset import write_config

    from ratio_bench.dataset.build import build_release
    from ratio_bench.dataset.config import SilverSettings, load_config
    from ratio_bench.judge.silver import run_silver

    before = file_checksums(silver_release)
    holder = _holder(silver_release, "ratio dataset append --version 9")
    try:
        with pytest.raises(FolderLockedError, match="append --version 9"):
            run_silver(silver_release, SilverSettings.from_config({}), make_judge(fake_server))
        cfg = load_config(write_config(tmp_path / "cfg.yaml", dataset_corpus, tmp_path / "work"))
        with pytest.raises(FolderLockedError, match=f"pid {holder.pid}"):
            build_release(cfg, silver_release, progress=False)
    finally:
        holder.stdin.close()
        holder.wait(timeout=30)
    assert file_checksums(silver_release) == before and not (tmp_path / "work").exists()
    assert not fake_server.state.chat_keys  # refused before a single judge request was sent
