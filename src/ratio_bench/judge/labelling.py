"""A terminal labelling tool: shows one (query, marker, gold) pair at a time and records a human label.

Each answer is appended to the labels file at once (one JSON line, flushed), so quitting or a crash loses
nothing, and a later session with the same annotator name skips the pairs already labelled. The question
shown per relation is the one the judge prompts ask, so people and prompts label the same thing (the spec's
annotators "received the same prompts as the LLM judge": ``--show-prompt`` prints the relation's first silver
prompt before starting).

A pair may name its gold (or any candidate being judged) by ``gold_id``; the label then records the id, and
with ``store_text=False`` (``--ids-only``) leaves the candidate's text out, so a labels file about a release's
pool can be committed where its sentences may not (they are joined back from the release by id). Resuming then
matches pairs by id.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import IO, Any

from ratio_bench.core.relations import BY_NAME

KEYS = "[y] valid  [n] not valid  [s] skip  [q] quit"


def pair_keys(row: dict[str, Any]) -> set[tuple[str, str, str, str]]:
    """What makes a pair the same pair: relation, query, marker and the gold, by id and by text (whichever the
    row has), so labels recorded by text still count for a pair that now also carries its id."""
    head = (row["relation"], row["query"], row.get("marker", ""))
    golds = ([f"id:{row['gold_id']}"] if row.get("gold_id") else []) + (
        [f"text:{row['gold']}"] if row.get("gold") else []
    )
    return {(*head, g) for g in golds}


def already_labelled(path: Path, annotator: str) -> set[tuple[str, str, str, str]]:
    if not path.exists():
        return set()
    done = set()
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            row = json.loads(line)
            if row.get("annotator") == annotator:
                done |= pair_keys(row)
    return done


def label_pairs(
    pairs: Iterable[dict[str, Any]],
    out: Path,
    annotator: str,
    ask: Callable[[str], str] = input,
    show: Callable[[str], None] = print,
    store_text: bool = True,
) -> dict[str, int]:
    """Ask for a label per pair (dicts with relation, query, marker, gold, optional query_id and gold_id);
    returns counts. ``store_text=False`` records a pair's gold by ``gold_id`` only (every pair must have one)."""
    if not store_text and any(not p.get("gold_id") for p in pairs):
        raise ValueError("labels without the gold's text need a gold_id in every pair")
    done = already_labelled(out, annotator)
    todo = [p for p in pairs if not pair_keys(p) & done]
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
            keys = ("relation", "query_id", "query", "marker") + ("gold",) * store_text
            row = {k: pair.get(k, "") for k in keys} | (
                {"gold_id": pair["gold_id"]} if pair.get("gold_id") else {}
            )
            fh.write(
                json.dumps(row | {"annotator": annotator, "label": answer == "y"}, ensure_ascii=False) + "\n"
            )
            fh.flush()
            counts["labelled"] += 1
    return counts
