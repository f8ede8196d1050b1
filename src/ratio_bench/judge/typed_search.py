"""A judged measure of typed search: hits of several systems labelled blind, then precision@k per system and move.

The steps (``ratio judge typed-search pairs|report``; eval/judged/typed-search/README.md has the protocol):

1. ``ratio search --queries Q --out HITS`` per system writes each system's top k per move, by candidate id.
2. :func:`labelling_pairs` pools every system's hits, keeps each (query, candidate) once, whatever system or
   move found it, shuffles queries and candidates with a seed and asks all three moves of each: the labeller
   cannot tell which system, rank or move brought a candidate. The candidates' text is joined from the release
   here, for the labeller's eyes only; the pairs file is not meant to be kept.
3. ``ratio judge label --pairs PAIRS --ids-only`` records the verdicts by candidate id.
4. :func:`report` joins verdicts back to each system's hits: judged precision@k with intervals, and the
   mined-role proxy (:mod:`ratio_bench.evaluation.analysis.typed_hits`) on the same hits beside it.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ratio_bench.core.errors import RatioError
from ratio_bench.core.relations import RELATIONS
from ratio_bench.dataset.release import Release
from ratio_bench.evaluation.analysis.typed_hits import (
    Hit,
    PrecisionCell,
    Query,
    mined_role_verdict,
    precision_at_k,
    precision_markdown,
)

Verdicts = dict[tuple[str, str, str], bool]  # (query_id, move, candidate_id) -> does the move


class TypedSearchError(RatioError, ValueError):
    """Hits, queries, labels and a release that do not belong together."""


def check_source(sources: Sequence[dict[str, Any]], release: Release) -> str:
    """The split all hits files searched, after checking each was an index of this release (name, version)."""
    splits = set()
    for s in sources:
        rel = s.get("release") or {}
        if (rel.get("name"), rel.get("version")) != (release.manifest.get("name"), release.version):
            raise TypedSearchError(
                f"--hits: searched an index of {rel.get('name')} {rel.get('version')}, not of --dataset "
                f"{release.shown} ({release.manifest.get('name')} {release.version}); index that release"
            )
        splits.add(rel.get("split"))
    if len(splits) != 1:
        raise TypedSearchError(f"--hits: the files searched different splits ({sorted(map(str, splits))})")
    return str(splits.pop())


def labelling_pairs(
    hits: Sequence[Hit], queries: Sequence[Query], texts: dict[str, str], seed: int
) -> list[dict[str, Any]]:
    """The pairs to label, blind: each (query, candidate) once, all three moves asked, in a seeded order.

    Queries are shuffled, then each query's candidates; a query's pairs stay together (the labeller reads the
    query once) with the moves in a fixed order per candidate. Nothing in a pair says which system found it."""
    by_id = {q.query_id: q for q in queries}
    unknown = sorted({h.query_id for h in hits} - by_id.keys())
    if unknown:
        raise TypedSearchError(f"--hits: query {unknown[0]} is not in --queries")
    missing = sorted({h.candidate_id for h in hits} - texts.keys())
    if missing:
        raise TypedSearchError(f"--hits: candidate {missing[0]} is not in the release's pool")
    found: dict[str, set[str]] = {}
    for h in hits:
        found.setdefault(h.query_id, set()).add(h.candidate_id)
    rng = np.random.default_rng(seed)
    pairs = []
    for qid in rng.permutation(sorted(found)).tolist():
        for cid in rng.permutation(sorted(found[qid])).tolist():
            for move in RELATIONS:
                pairs.append(
                    {
                        "relation": move,
                        "query_id": qid,
                        "query": by_id[qid].text,
                        "marker": "",
                        "gold_id": cid,
                        "gold": texts[cid],
                    }
                )
    return pairs


def read_verdicts(path: str | Path, annotator: str | None = None) -> tuple[Verdicts, list[str]]:
    """Labels of ``ratio judge label --ids-only`` as verdicts, and the annotators they came from. Two labels of
    one pair that disagree are an error (relabel it or keep one): a measure must not depend on file order."""
    verdicts: Verdicts = {}
    annotators: set[str] = set()
    for n, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            key = (str(row["query_id"]), row["relation"], str(row["gold_id"]))
            label, who = row["label"], str(row["annotator"])
        except (json.JSONDecodeError, KeyError, TypeError) as e:
            raise TypedSearchError(
                f"{path}:{n}: not a label with query_id, relation, gold_id ({e})"
            ) from None
        if annotator is not None and who != annotator:
            continue
        if not isinstance(label, bool):
            raise TypedSearchError(f"{path}:{n}: label must be true or false")
        if verdicts.get(key, label) != label:
            raise TypedSearchError(f"{path}:{n}: {key} is labelled both ways; keep one label per pair")
        verdicts[key] = label
        annotators.add(who)
    return verdicts, sorted(annotators)


@dataclass
class TypedSearchReport:
    k: int
    judged: list[PrecisionCell]
    mined_role: list[PrecisionCell]
    systems: list[str]
    annotators: list[str]
    release: dict[str, Any]

    def markdown(self) -> str:
        tables = {"judged": self.judged, "mined role": self.mined_role}
        return precision_markdown(tables, self.systems, list(RELATIONS))

    def to_json(self) -> dict[str, Any]:
        return {
            "k": self.k,
            "release": self.release,
            "annotators": self.annotators,
            "systems": self.systems,
            "judged": [c.to_json() for c in self.judged],
            "mined_role": [c.to_json() for c in self.mined_role],
        }


def report(
    hits: Sequence[Hit], verdicts: Verdicts, roles: dict[str, str], k: int, annotators: Sequence[str] = ()
) -> TypedSearchReport:
    """Judged and mined-role precision@k of each system's hits (systems in the order first seen)."""
    systems = list(dict.fromkeys(h.system for h in hits))
    judged = precision_at_k(hits, lambda h: verdicts.get((h.query_id, h.move, h.candidate_id)), k)
    mined = precision_at_k(hits, mined_role_verdict(roles), k)
    return TypedSearchReport(k, judged, mined, systems, list(annotators), {})
