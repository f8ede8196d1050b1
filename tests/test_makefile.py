"""The Makefile's demo targets: every ``ratio`` command they run parses, and each ends by naming the next step."""

from __future__ import annotations

import shlex
import shutil
import subprocess
from pathlib import Path

import pytest

from ratio_bench.cli import build_parser, handler

REPO = Path(__file__).resolve().parents[1]


def _dry_run(target: str) -> list[str]:
    """The shell lines ``make -n`` would run for ``target`` (its install step done: VENV points at a stub)."""
    done = subprocess.run(
        [
            "make",
            "-n",
            "--no-print-directory",
            "-C",
            str(REPO),
            target,
            "VENV=.venv",
            "-o",
            ".venv/.installed",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.replace("\\\n", " ").splitlines()


@pytest.mark.skipif(shutil.which("make") is None, reason="no make on this machine")
@pytest.mark.parametrize("target", ["demo", "search-demo"])
def test_demo_targets_parse_and_point_at_the_next_step(target):
    lines = _dry_run(target)
    commands = [shlex.split(line)[1:] for line in lines if line.startswith(".venv/bin/ratio ")]
    assert commands
    for words in commands:
        build_parser().parse_args(words)  # exits 2 on a flag the command does not take
    assert lines[-1].startswith("echo") and "next: " in lines[-1]


def test_search_demo_indexes_the_test_split_with_the_shipped_move_aware_model_without_training():
    lines = _dry_run("search-demo")
    (index,) = (shlex.split(line)[1:] for line in lines if line.startswith(".venv/bin/ratio "))
    args = build_parser().parse_args(index)
    assert args.split == "test" and args.model == ["all-MiniLM-L6-v2-moves-lex"]
    from ratio_bench.retrieval.registry import REGISTRY

    shipped = REGISTRY["all-MiniLM-L6-v2-moves-lex"]  # the adapters in the wheel plus BM25: nothing to train
    assert shipped.move_aware and shipped.adapters and shipped.source.startswith("package:")


def test_search_demo_unified_trains_a_move_aware_model_and_indexes_the_test_split_with_it():
    lines = _dry_run("search-demo-unified")
    train, index = (shlex.split(line)[1:] for line in lines if line.startswith(".venv/bin/ratio "))
    assert train[:2] == ["train", "run"]
    config = build_parser().parse_args(train).config
    text = (REPO / config).read_text()
    assert "negatives: across" in text and "relation: all" in text  # the unified model, across-move negatives
    args = build_parser().parse_args(index)
    assert args.split == "test" and args.model == [f"{build_parser().parse_args(train).out}/best"]


@pytest.mark.skipif(shutil.which("make") is None, reason="no make on this machine")
def test_snapshot_scores_and_board_commands_parse_and_cover_every_snapshot():
    lines = _dry_run("snapshot-scores")  # $(MAKE) board runs under -n too: its lines are included
    commands = [
        build_parser().parse_args(shlex.split(line)[1:])
        for line in lines
        if line.startswith(".venv/bin/ratio ")
    ]
    scores = [c for c in commands if handler(c.func).__name__ == "cmd_score"]
    assert len(scores) == 4 and all(c.split == "snapshots" for c in scores)
    (board,) = [c for c in commands if handler(c.func).__name__ == "cmd_board"]
    assert board.trend is not None and board.strict
