"""The board's model and cost section: each entry's ``model_meta`` (parameters, embedding size, max tokens,
licence, base model, training cut-off, encode throughput, peak memory), one table per hardware class.

Throughput and peak memory are measured on the machine that scored the entry, so they compare only within one
hardware class: the section groups models by it and says so. One row per model setup and class (its test-split
entry when it has one, else its first), the model facts shown as the entry states them, escaped.
"""

from __future__ import annotations

from typing import Any

from ratio_bench.evaluation.board_markdown import md_row
from ratio_bench.evaluation.escaping import html_text, markdown_text
from ratio_bench.evaluation.leaderboard import Board
from ratio_bench.evaluation.model_meta import ModelMeta

COST_NOTE = (
    "Measured cost (encode throughput, peak memory) is comparable only within one hardware class: each table "
    "is one class, as named by the machine that scored the entries."
)
COST_HEAD = ["model setup", "parameters", "dim", "max tokens", "licence", "base model", "cut-off", "texts/s",
             "peak MB"]  # fmt: skip


def _cells(meta: ModelMeta) -> list[str]:
    def number(value: Any, fmt: str = "{:,}") -> str:
        return "" if value is None else fmt.format(value)

    return [
        number(meta.parameters), number(meta.embedding_dim), number(meta.max_tokens), meta.license or "",
        meta.base_model or "", meta.training_cutoff or "", number(meta.throughput_texts_per_s, "{:,.1f}"),
        number(meta.peak_memory_mb, "{:,.0f}"),
    ]  # fmt: skip


def cost_rows(board: Board) -> dict[str, list[list[str]]]:
    """Hardware class -> rows (model setup, then the model and cost cells), classes and rows in name order."""
    chosen: dict[tuple[str, str], tuple[bool, list[str]]] = {}
    for release in board.releases:
        for entry in release.entries:
            meta = entry.model_meta
            if meta is None:
                continue
            key = (meta.hardware or "unknown hardware", entry.label)
            is_test = entry.split == "test"
            if key not in chosen or (is_test and not chosen[key][0]):
                chosen[key] = (is_test, [key[1], *_cells(meta)])
    groups: dict[str, list[list[str]]] = {}
    for (hardware, _), (_, row) in sorted(chosen.items()):
        groups.setdefault(hardware, []).append(row)
    return groups


def cost_markdown(board: Board) -> list[str]:
    """The section's Markdown lines (none when no entry has ``model_meta``)."""
    groups = cost_rows(board)
    if not groups:
        return []
    lines = ["", "## Model and cost", "", markdown_text(COST_NOTE)]
    for hardware, rows in groups.items():
        lines += ["", f"### {markdown_text(hardware)}", "", md_row(COST_HEAD), "|" + "---|" * len(COST_HEAD)]
        lines += [md_row([markdown_text(c) for c in row]) for row in rows]
    return lines


def cost_html(board: Board) -> str:
    """The section's HTML, one table per hardware class (empty when no entry has ``model_meta``)."""
    groups = cost_rows(board)
    if not groups:
        return ""
    parts = ['<section id="cost"><h2>Model and cost</h2>', f"<p>{html_text(COST_NOTE)}</p>"]
    head = "<thead><tr>" + "".join(f"<th>{html_text(h)}</th>" for h in COST_HEAD) + "</tr></thead>"
    for hardware, rows in groups.items():
        parts += [f"<h3>{html_text(hardware)}</h3>", f'<table data-hardware="{html_text(hardware)}">', head]
        parts += [
            "<tbody>",
            *("<tr>" + "".join(f"<td>{html_text(c)}</td>" for c in r) + "</tr>" for r in rows),
        ]
        parts += ["</tbody>", "</table>"]
    return "\n".join([*parts, "</section>"])
