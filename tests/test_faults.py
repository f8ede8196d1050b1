"""Machine faults (a full disk, a read-only folder) become one line naming the cause and where it happened."""

from __future__ import annotations

import argparse
import contextlib
import errno
import sqlite3
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.helpers.cli import assert_user_error, run_ratio
from tests.helpers.corpus import write_jsonl
from tests.helpers.dataset import records, write_config

from ratio_bench.core import faults


def test_an_os_error_with_a_file_name_names_that_file() -> None:
    exc = OSError(errno.ENOSPC, "No space left on device", "/data/out/shard-0.parquet")
    assert faults.describe(exc) == (
        "/data/out/shard-0.parquet: no space left on device; free some space or write elsewhere"
    )


def test_a_fault_without_a_path_names_the_full_output_of_the_command_line(tmp_path: Path) -> None:
    """Arrow and DuckDB report a full disk with no path: the command's outputs are named instead."""
    args = argparse.Namespace(out=tmp_path / "release", dataset=tmp_path / "in", quiet=True)
    wrapped = RuntimeError("write failed")
    wrapped.__cause__ = OSError(errno.ENOSPC, "No space left on device")
    message = faults.describe(wrapped, args)
    # tmp_path's disk is not full: the line says so through the temporary folder rather than blaming --out
    assert message is not None and message.startswith("no space left on device")
    assert "free some space" in message


def test_library_wordings_of_a_full_disk_are_recognised() -> None:
    for exc in (
        sqlite3.OperationalError("database or disk is full"),
        RuntimeError('IO Error: Could not write file "x.tmp": No space left on device'),
        sqlite3.OperationalError("attempt to write a readonly database"),
    ):
        assert faults.describe(exc) is not None, exc


def test_other_errors_are_left_to_the_internal_error_path() -> None:
    assert faults.describe(ValueError("shapes do not match")) is None
    assert faults.describe(OSError(errno.ENOENT, "No such file", "x")) is None


def test_a_read_only_output_is_named_with_its_flag() -> None:
    args = argparse.Namespace(out=Path("/ro/rel"), json=None)
    message = faults.describe(OSError(errno.EROFS, "Read-only file system"), args)
    assert message == "read-only file system (outputs: --out /ro/rel); check the path's permissions and mount"


@pytest.fixture(scope="module")
def full_disk(tmp_path_factory) -> Iterator[Path]:
    """A 2 MB tmpfs filled to the last byte (needs root, as on CI; skipped where mounting is not allowed)."""
    mount = tmp_path_factory.mktemp("full")
    if subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(mount)], capture_output=True
    ).returncode:
        pytest.skip("cannot mount a tmpfs here (not root)")
    try:
        with (mount / "filler").open("wb") as fh, contextlib.suppress(OSError):
            while True:
                fh.write(b"\0" * 65536)
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


FULL_DISK_CASES = [
    ("corpus-stats", ["corpus", "stats", "{corpus}", "--quiet", "--json", "{full}/s.json"], ["--json"]),
    ("corpus-export", ["corpus", "export", "{corpus}", "--out", "{full}/e.parquet"], ["--out"]),
    ("mine", ["mine", "--corpus", "{corpus}", "--out", "{full}/m", "--quiet"], ["--out"]),
    ("build", ["build", "--config", "{config}", "--out", "{full}/r", "--quiet"], ["--out"]),
    ("index", ["index", "--dataset", "{release}", "--model", "bm25", "--out", "{full}/i"], ["--out"]),
    ("score", ["score", "--model", "bm25", "--dataset", "{release}", "--out", "{full}/s.json"], ["--out"]),
]


@pytest.mark.parametrize(
    ("argv", "flags"), [c[1:] for c in FULL_DISK_CASES], ids=[c[0] for c in FULL_DISK_CASES]
)
def test_a_full_disk_is_one_line_naming_the_output(
    full_disk: Path, small_release: Path, tmp_path: Path, argv: list[str], flags: list[str]
) -> None:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for name, papers in zip("ab", records(), strict=True):  # the dataset tests' corpus: every split has pairs
        write_jsonl(corpus / f"{name}.jsonl", papers)
    config = tmp_path / "cfg.yaml"
    write_config(config, corpus, tmp_path / "work")
    values = {"corpus": corpus, "full": full_disk, "config": config, "release": small_release}
    run = run_ratio(*[a.format(**values) for a in argv], cwd=tmp_path, timeout=120)
    line = assert_user_error(run, "no space left on device", str(full_disk), *flags)
    assert "0 B free" in line
