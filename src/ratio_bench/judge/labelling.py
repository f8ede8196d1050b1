"""A terminal labelling tool: shows one (query, marker, gold) pair at a time and records a human label.

Each answer is appended to the labels file at once (one JSON line, flushed), so quitting or a crash loses
nothing, and a later session with the same annotator name skips the pairs already labelled. The question
shown per relation is the one the judge prompts ask, so people and prompts label the same thing (the spec's
annotators "received the same prompts as the LLM judge": ``--show-prompt`` prints the relation's first silver
prompt before starting).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import IO, Any

from ratio_bench.core.relations import BY_NAME

KEYS = "[y] valid  [n] not valid  [s] skip  [q] quit"


def already_labelled(path: Path, annotator: str) -> set[tuple[str, str, str, str]]:
    if not path.exists():
        return set()
    done = set()
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            row = json.loads(line)
            if row.get("annotator") == annotator:
                done.add((row["relation"], row["query"], row.get("marker", ""), row["gold"]))
    return done


def label_pairs(
    pairs: Iterable[dict[str, Any]],
    out: Path,
    annotator: str,
    ask: Callable[[str], str] = input,
    show: Callable[[str], None] = print,
) -> dict[str, int]:
    """Ask for a label per pair (dicts with relation, query, marker, gold, optional query_id); returns counts."""
    done = already_labelled(out, annotator)
    todo = [p for p in pairs if (p["relation"], p["query"], p.get("marker", ""), p["gold"]) not in done]
    counts = {"labelled": 0, "skipped": 0, "already": 0, "left": len(todo)}
    counts["already"] = len(done)
    out.parent.mkdir(parents=True, exist_ok=True)
    fh: IO[str]
    with out.open("a", encoding="utf-8") as fh:
        for i, pair in enumerate(todo, 1):
            show(
                f"\n[{i}/{len(todo)}] {pair['relation'].upper()}: {BY_NAME[pair['relation']].question}\n"
                f"  S1: {pair['query']}\n  marker: {pair.get('marker', '')}\n  S2: {pair['gold']}\n{KEYS}"
            )
            while True:
                answer = ask("> ").strip().lower()
                if answer in ("y", "n", "s", "q"):
                    break
                show(f"please answer one of: {KEYS}")
            if answer == "q":
                break
            counts["left"] -= 1
            if answer == "s":
                counts["skipped"] += 1
                continue
            row = {k: pair.get(k, "") for k in ("relation", "query_id", "query", "marker", "gold")}
            fh.write(
                json.dumps(row | {"annotator": annotator, "label": answer == "y"}, ensure_ascii=False) + "\n"
            )
            fh.flush()
            counts["labelled"] += 1
    return counts
