"""Measuring one command for the scale benchmarks: wall time, peak RSS of its whole process tree (summed over
the processes alive at each sample: a mining run's workers, a Ray cluster's raylet and actors), disk written.

``resource.getrusage(RUSAGE_CHILDREN).ru_maxrss`` (what benchmarks/mining.py reports) is the largest single
process; a run with two workers or a cluster holds several at once, so the tree is sampled from /proc here.
"""

from __future__ import annotations

import os
import subprocess
import threading
import time
from dataclasses import dataclass
from pathlib import Path

PAGE = os.sysconf("SC_PAGE_SIZE")


@dataclass
class Measured:
    wall_s: float
    peak_rss_mb: float
    returncode: int
    output: str


def _tree(pid: int) -> list[int]:
    parents: dict[int, int] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            parents[int(stat.parent.name)] = int(stat.read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
    found, frontier = {pid}, {pid}
    while frontier:
        frontier = {p for p, pp in parents.items() if pp in frontier} - found
        found |= frontier
    return sorted(found)


def _rss_bytes(pids: list[int]) -> int:
    total = 0
    for pid in pids:
        try:
            total += int(Path(f"/proc/{pid}/statm").read_text().split()[1]) * PAGE
        except (OSError, ValueError, IndexError):
            continue
    return total


def run_measured(
    cmd: list[str], env: dict[str, str] | None = None, every_s: float = 0.2, timeout_s: float | None = None
) -> Measured:
    """Run ``cmd``, sampling its process tree's RSS every ``every_s`` seconds."""
    began = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    peak = 0
    done = threading.Event()

    def sample() -> None:
        nonlocal peak
        while not done.wait(every_s):
            peak = max(peak, _rss_bytes(_tree(proc.pid)))

    thread = threading.Thread(target=sample, daemon=True)
    thread.start()
    try:
        out, _ = proc.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, _ = proc.communicate()
    done.set()
    thread.join()
    return Measured(time.perf_counter() - began, peak / 2**20, proc.returncode, out)


def disk_mb(*paths: Path) -> float:
    """Bytes on disk under ``paths`` (files only), in MB."""
    total = 0
    for root in paths:
        if root.is_file():
            total += root.stat().st_size
        elif root.is_dir():
            total += sum(f.stat().st_size for f in root.rglob("*") if f.is_file() and not f.is_symlink())
    return total / 1e6


def file_count(root: Path) -> int:
    return sum(1 for f in root.rglob("*") if f.is_file())
