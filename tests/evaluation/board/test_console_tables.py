"""The console tables a researcher reads first: ``ratio score`` and ``ratio leaderboard`` print one line per
model with MRR@10 per move, its n and its 95% interval (whole, never cut), the full table behind ``--wide``, the
rows as JSON behind ``--json``."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

from rich.console import Console
from tests.helpers.cli import run_ratio

from ratio_bench.evaluation.board.leaderboard import load_board
from ratio_bench.evaluation.board.render.terminal import terminal_compact_tables

ROOT = Path(__file__).resolve().parents[3]
FIGURE = re.compile(r"\d+\.\d\u2020? \[\d+\.\d-\d+\.\d\]")  # 14.5 [12.9-16.1], whole on one line


def _rows(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("│")]


def test_score_prints_mrr_n_and_the_interval_per_move_by_default(small_release, tmp_path):
    out = tmp_path / "bm25.json"
    run = run_ratio("score", "--model", "bm25", "--dataset", small_release, "--split", "test", "--out", out)
    assert run.code == 0, run.err
    heads = " ".join(line for line in run.out.splitlines() if line.startswith("┃"))
    assert "address MRR@10" in heads and "n=" in heads and "M@100" not in heads
    [row] = _rows(run.out)  # one model, one line
    entry = json.loads(out.read_text())
    for block in entry["per_query"].values():
        assert f"n={len(block['gold_rank'])}" in heads
    assert len(FIGURE.findall(row)) == len(entry["results"])  # every move's figure with its interval
    mrr = 100 * entry["results"]["address"]["mrr_at_10"]
    assert f"{mrr:.1f}" in row

    wide = run_ratio("score", "--model", "bm25", "--dataset", small_release, "--split", "test", "--wide")
    assert wide.code == 0 and "Addr R@1" in wide.out and "Spec M@100" in wide.out

    as_json = run_ratio("score", "--model", "bm25", "--dataset", small_release, "--split", "test", "--json")
    assert as_json.code == 0, as_json.err
    [doc] = json.loads(as_json.out)  # stdout is the JSON alone; the progress went to stderr
    assert "1 split(s)" in as_json.err
    for d in (doc, entry):
        d.pop("model_meta")
    assert doc == entry


def test_no_figure_or_interval_is_cut_at_80_columns():
    board = load_board(ROOT / "eval" / "results")
    release = next(r for r in board.releases if any(e.per_query for e in r.entries))
    tables = terminal_compact_tables(release)
    assert len(tables) == len({e.split for e in release.entries})  # one table per split: ranks are within one
    console = Console(width=80, record=True, file=io.StringIO())
    for table in tables:
        console.print(table)
    text = console.export_text()
    ranked_lines = [line for line in _rows(text) if line[1:].strip()[:1].isdigit() or line[2:3] == "="]
    assert len(ranked_lines) == len(release.entries)  # one line per row (a long name folds below it)
    for line in ranked_lines:
        assert len(FIGURE.findall(line)) >= 2, line  # whole figures with their intervals
    assert "\u2026" not in text  # nothing cut with an ellipsis
    assert max(len(line) for line in text.splitlines()) <= 80


def test_leaderboard_default_wide_and_json(tmp_path):
    results = ROOT / "eval" / "results"
    compact = run_ratio("leaderboard", results)
    wide = run_ratio("leaderboard", results, "--wide")
    as_json = run_ratio("leaderboard", results, "--json")
    for run in (compact, wide, as_json):
        assert run.code == 0, run.err
    assert "address MRR@10" in compact.out and "address R@1" not in compact.out
    assert "R@1" in wide.out and len(wide.out) > 2 * len(compact.out)
    rows = json.loads(as_json.out)
    entries = sum(len(r.entries) for r in load_board(results).releases)
    assert len(rows) == entries
    # one table per release build (two builds may share a version) and split
    assert compact.out.count("Leaderboard ratio-dev") == len(
        {(r["manifest_sha256"], r["split"]) for r in rows}
    )
    first = rows[0]["relations"]["address"]
    assert {"n", "mrr_at_10", "hit_rate_at_1", "mrr_at_10_interval"} <= set(first)
