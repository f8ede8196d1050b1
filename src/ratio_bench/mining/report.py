"""Rendering a mining run's ``stats.json`` for people."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.table import Table

from ratio_bench.core.relations import BY_NAME, RELATIONS
from ratio_bench.lexicon import DISTRACTOR_CATEGORIES


def _rejects_line(stats: dict[str, Any], corpus: dict[str, Any]) -> str:
    """One line that adds up to the rows of ``rejects/*.jsonl``: corpus drops and flags, then mining rejects."""
    logged = stats["rejects_logged"]
    if not logged["rows"]:
        return "rejects: none"

    def listed(counts: dict[str, int]) -> str:
        return ", ".join(f"{k}={v:,}" for k, v in sorted(counts.items()))

    parts = [
        (f"corpus dropped {logged['corpus_dropped']:,}", corpus.get("rejected", {})),
        (f"corpus flagged {logged['corpus_flagged']:,}", corpus.get("flagged", {})),
        (f"mining {logged['mining']:,}", stats["rejects"]),
    ]
    body = "; ".join(f"{head} ({listed(counts)})" for head, counts in parts if counts)
    return f"rejects: {logged['rows']:,} rows in rejects/*.jsonl: {body}"


def print_mining_report(stats: dict[str, Any], console: Console) -> None:
    t = Table(title=f"Mining: lexicon {stats['lexicon_version']} ({stats['lexicon_sha256'][:12]})")
    for col in ("relation", "tuples", "markers fired", "markers kept", "paper: markers found"):
        t.add_column(col, justify="left" if col == "relation" else "right")
    for r in RELATIONS:
        t.add_row(
            r,
            f"{stats['tuples'].get(r, 0):,}",
            str(stats["markers_fired"][r]),
            str(stats["markers_kept"][r]),
            str(BY_NAME[r].paper_markers_found),
        )
    console.print(t)
    d = Table(title="Distractors by category")
    d.add_column("category")
    d.add_column("sentences", justify="right")
    for c in DISTRACTOR_CATEGORIES:
        d.add_row(c, f"{stats['distractors'].get(c, 0):,}")
    console.print(d)
    top = Table(title="Most productive markers")
    for r in RELATIONS:
        top.add_column(r)
    lists = [stats["top_markers"][r][:10] for r in RELATIONS]
    for i in range(max(map(len, lists), default=0)):
        top.add_row(*[f"{x[i][0]} ({x[i][1]:,})" if i < len(x) else "" for x in lists])
    console.print(top)
    corpus = stats.get("corpus", {}).get("total", {})
    console.print(_rejects_line(stats, corpus))
    console.print(
        f"papers kept {corpus.get('papers_kept', 0):,} of {corpus.get('papers_read', 0):,}; "
        f"sentence pairs {stats['sentence_pairs']:,}; tasks {stats['tasks_done']}/{stats['tasks_planned']}"
    )
    if "wall_seconds" in stats:
        console.print(
            f"{corpus.get('raw_bytes', 0) / 1e6:,.1f} MB in {stats['wall_seconds']:,.1f} s "
            f"= {stats['mb_per_second']:,.2f} MB/s"
        )
