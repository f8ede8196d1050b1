"""The lexicon's LLM stage (spec appendix A): generate marker candidates from seeds, label them, accept.

``llm_expand`` asks the judge model for markers like each seed (prompt ``marker-generator``) and writes them
to the same review TSV as pattern expansion, with the seed as provenance. ``llm_classify`` labels the open
rows of a review file with the relation's marker classifier (``address-marker-classifier``,
``broaden-marker-classifier``; the spec reviewed Specify by hand only): **strong-true** (accepted with
confidence at or above the threshold), **weak-true** (accepted with less), **false**, or **invalid**. Only
strong-true rows get ``decision = accept``; ``ratio lexicon accept --stage llm`` then adds them with stage
``llm`` and refuses any accepted row that the classifier did not label strong-true.
"""

from __future__ import annotations

import csv
from pathlib import Path

from ratio_bench.core.relations import RELATION_SPECS
from ratio_bench.lexicon.expand import REVIEW_COLUMNS, Candidate, write_review
from ratio_bench.lexicon.model import Lexicon, normalise_marker
from ratio_bench.llm.client import Judge, JudgeRequest
from ratio_bench.llm.prompts import get_prompt

LLM_COLUMNS = ("llm_label", "llm_confidence", "llm_reason")
CLASSIFIERS = {r.name: r.marker_classifier for r in RELATION_SPECS if r.marker_classifier}
MAX_WORDS = 7


def llm_expand(
    relation: str, seeds: list[str], judge: Judge, lexicon: Lexicon, out: Path, per_seed: int = 10
) -> dict[str, int]:
    """Generate candidates for ``relation`` from ``seeds`` into a review file; returns its counts."""
    prompt = get_prompt("marker-generator")
    reqs = [JudgeRequest(prompt.messages(relation, {"n": per_seed}, marker=s), prompt.output) for s in seeds]
    candidates: dict[str, Candidate] = {}
    dropped = 0
    for seed, outcome in zip(seeds, judge.run(reqs, desc="generating markers"), strict=True):
        for raw in outcome.verdict.markers if outcome.verdict else ():
            marker = normalise_marker(raw)
            if (
                not marker
                or "," in marker
                or len(marker.split()) > MAX_WORDS
                or marker == normalise_marker(seed)
            ):
                dropped += 1
                continue
            candidates.setdefault(marker, Candidate(marker, relation, f"llm-expand seed: {seed}"))
    counts = write_review(out, list(candidates.values()), lexicon)
    return counts | {"dropped_malformed": dropped, "seeds": len(seeds)}


def classify_label(decision: bool | None, confidence: float | None, strong: float) -> str:
    if decision is None:
        return "invalid"
    if not decision:
        return "false"
    return "strong-true" if (confidence if confidence is not None else 0.0) >= strong else "weak-true"


def llm_classify(review: Path, judge: Judge, strong: float = 0.8) -> dict[str, int]:
    """Label the undecided rows of a review file in place; strong-true rows are marked ``accept``."""
    with review.open(encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh, delimiter="\t"))
    todo = [r for r in rows if not (r.get("decision") or "").strip() and r["relation"] in CLASSIFIERS]
    reqs = []
    for r in todo:
        prompt = get_prompt(CLASSIFIERS[r["relation"]])
        reqs.append(JudgeRequest(prompt.messages("default", marker=r["marker"]), prompt.output))
    counts: dict[str, int] = {"strong-true": 0, "weak-true": 0, "false": 0, "invalid": 0}
    for r, outcome in zip(todo, judge.run(reqs, desc="classifying markers"), strict=True):
        v = outcome.verdict
        label = (
            "error"
            if outcome.status in ("error", "skipped")
            else classify_label(v.decision if v else None, v.confidence if v else None, strong)
        )
        counts[label] = counts.get(label, 0) + 1
        r["llm_label"] = label
        r["llm_confidence"] = "" if v is None or v.confidence is None else f"{v.confidence:.2f}"
        r["llm_reason"] = (v.reason if v else outcome.error).replace("\t", " ").replace("\n", " ")
        if label == "strong-true":
            r["decision"] = "accept"
    columns = [*REVIEW_COLUMNS, *LLM_COLUMNS]
    tmp = review.with_suffix(review.suffix + ".tmp")
    with tmp.open("w", encoding="utf-8", newline="") as fh:
        w = csv.DictWriter(fh, columns, delimiter="\t", lineterminator="\n", extrasaction="ignore")
        w.writeheader()
        for r in rows:
            w.writerow({c: r.get(c) or "" for c in columns})
    tmp.replace(review)
    return counts | {"not_classifiable": sum(1 for r in rows if r["relation"] not in CLASSIFIERS)}
