"""Prompt calibration against human labels (spec 4.3 and Table 10).

Human labels are JSON lines ``{relation, query, marker, gold, annotator, label}``. Each candidate prompt
judges every labelled pair of its relation (through the cached judge); an invalid reply counts as a rejection,
as it does in the silver rule. Two views, as in the spec's Table 10:

- **single annotator** (the reference, by default the one with most labels): agreement, F1, Cohen's kappa,
  precision and recall of each prompt against that annotator's labels;
- **panel** (pairs labelled by two or more annotators): agreement, F1 and Krippendorff's alpha averaged over
  annotator pairs (the human row) and over prompt-annotator pairs (each prompt's row), so they are comparable.

Prompts are ranked by F1 against the reference, then by kappa: the spec keeps the top two per relation. They are
ranked only on a full set of judgments: a pair the judge did not answer (a server that answers HTML, broken JSON
or errors; the spending cap) stops calibration with one error naming the endpoint and its answer, since a
ranking on fewer (or zero) judgments would recommend prompts on no evidence. A re-run sends only what is missing.
"""

from __future__ import annotations

import itertools
import json
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from statistics import mean
from typing import Any

from ratio_bench.core import extras
from ratio_bench.core.errors import RatioError
from ratio_bench.core.relations import RELATIONS
from ratio_bench.llm.client import Judge, JudgeRequest, Outcome
from ratio_bench.llm.prompts import Prompt

Pair = tuple[str, str, str]  # query, marker, gold


class LabelError(RatioError, ValueError):
    pass


class CalibrationError(RatioError):
    """The judge left pairs unjudged, so no prompt can be ranked."""


@dataclass(frozen=True)
class Label:
    relation: str
    query: str
    marker: str
    gold: str
    annotator: str
    label: bool

    @property
    def pair(self) -> Pair:
        return (self.query, self.marker, self.gold)


def read_labels(path: str | Path) -> list[Label]:
    """Labels from a JSONL file; a malformed line is an error naming the line (labels are too costly to skip)."""
    out = []
    for n, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            label = Label(
                row["relation"],
                row["query"],
                row.get("marker", ""),
                row["gold"],
                str(row["annotator"]),
                row["label"],
            )
        except (json.JSONDecodeError, KeyError, TypeError) as exc:
            raise LabelError(f"{path}:{n}: not a label row ({exc})") from None
        if label.relation not in RELATIONS or not isinstance(label.label, bool):
            raise LabelError(f"{path}:{n}: relation must be one of {RELATIONS} and label a boolean")
        out.append(label)
    return out


def binary_agreement(ref: list[bool], pred: list[bool]) -> dict[str, float]:
    """Agreement, precision, recall, F1 (positive class: accept) and Cohen's kappa of ``pred`` against ``ref``."""
    n = len(ref)
    if n == 0:
        return {"n": 0}
    tp = sum(r and p for r, p in zip(ref, pred, strict=True))
    fp = sum(p and not r for r, p in zip(ref, pred, strict=True))
    fn = sum(r and not p for r, p in zip(ref, pred, strict=True))
    tn = n - tp - fp - fn
    agree = (tp + tn) / n
    expected = ((tp + fn) * (tp + fp) + (tn + fp) * (tn + fn)) / (n * n)
    return {
        "n": n,
        "agreement": agree,
        "precision": tp / (tp + fp) if tp + fp else 0.0,
        "recall": tp / (tp + fn) if tp + fn else 0.0,
        "f1": 2 * tp / (2 * tp + fp + fn) if tp + fp + fn else 1.0,
        "kappa": (agree - expected) / (1 - expected) if expected < 1 else 1.0,
    }


def krippendorff_alpha(a: list[bool], b: list[bool]) -> float:
    """Nominal Krippendorff's alpha of two raters (the ``krippendorff`` package)."""
    krippendorff = extras.load("krippendorff")

    if len(set(a) | set(b)) < 2:  # no variation at all: alpha is undefined; perfect agreement
        return 1.0
    return float(
        krippendorff.alpha(
            reliability_data=[list(map(int, a)), list(map(int, b))], level_of_measurement="nominal"
        )
    )


def _pairwise(raters: dict[str, dict[Pair, bool]], left: list[str], right: list[str]) -> dict[str, float]:
    rows = []
    for x, y in itertools.product(left, right):
        if x == y or (x in right and y in left and x > y):
            continue
        common = sorted(set(raters[x]) & set(raters[y]))
        if not common:
            continue
        a, b = [raters[x][p] for p in common], [raters[y][p] for p in common]
        s = binary_agreement(a, b)
        rows.append({"agreement": s["agreement"], "f1": s["f1"], "alpha": krippendorff_alpha(a, b)})
    return {k: mean(r[k] for r in rows) for k in ("agreement", "f1", "alpha")} if rows else {}


def calibrate(
    labels: list[Label], prompts: dict[str, list[Prompt]], judge: Judge, reference: str | None = None
) -> dict[str, Any]:
    """Per relation: each prompt's scores (single annotator and panel), the human panel row, the ranking."""
    report: dict[str, Any] = {}
    for rel, candidates in prompts.items():
        humans: dict[str, dict[Pair, bool]] = defaultdict(dict)
        for lab in labels:
            if lab.relation == rel:
                humans[lab.annotator][lab.pair] = lab.label
        if not humans or not candidates:
            continue
        pairs = sorted({p for h in humans.values() for p in h})
        ref = reference if reference in humans else max(sorted(humans), key=lambda a: len(humans[a]))
        machine: dict[str, dict[Pair, bool]] = {}
        for prompt in candidates:
            reqs = [
                JudgeRequest(prompt.messages("silver", query=q.rstrip().rstrip("."), marker=m, gold=g))
                for q, m, g in pairs
            ]
            outs = judge.run(reqs, desc=f"calibrating {prompt.id}")
            _require_judgments(judge, rel, prompt, outs)
            machine[prompt.ref("silver")] = {
                p: bool(o.verdict and o.verdict.decision)
                for p, o in zip(pairs, outs, strict=True)
                if o.status in ("ok", "invalid")
            }
        panel = [a for a in humans if sum(1 for p in humans[a] if sum(p in h for h in humans.values()) >= 2)]
        rows = {}
        for name, verdicts in machine.items():
            ref_pairs = [p for p in humans[ref] if p in verdicts]
            single = binary_agreement([humans[ref][p] for p in ref_pairs], [verdicts[p] for p in ref_pairs])
            both = {**humans, name: verdicts}
            rows[name] = {
                "single": single,
                "panel": _pairwise(both, [name], panel) if len(panel) >= 2 else {},
            }
        ranking = sorted(
            rows, key=lambda n: (-rows[n]["single"].get("f1", 0), -rows[n]["single"].get("kappa", 0), n)
        )
        report[rel] = {
            "pairs": len(pairs),
            "annotators": {a: len(h) for a, h in sorted(humans.items())},
            "reference": ref,
            "human_panel": _pairwise(dict(humans), panel, panel) if len(panel) >= 2 else {},
            "prompts": rows,
            "ranking": ranking,
        }
    return report


def _require_judgments(judge: Judge, relation: str, prompt: Prompt, outs: list[Outcome]) -> None:
    """``CalibrationError`` when any pair got no verdict (an invalid reply is a verdict: a rejection)."""
    missing = [o for o in outs if o.status not in ("ok", "invalid")]
    if missing:
        answer = " ".join(missing[0].error.split())[:200]
        raise CalibrationError(
            f"{judge.base_url} judged {len(outs) - len(missing)} of {len(outs)} {relation} pairs with "
            f"{prompt.ref('silver')}; it answered: {answer}. No prompt is ranked on missing judgments: check "
            "--base-url and --model, then re-run (judged pairs are cached)"
        )


def report_table(report: dict[str, Any]) -> str:
    """The report as a Markdown table shaped like the spec's Table 10."""

    def f(d: dict[str, float], k: str, pct: bool = False) -> str:
        return "-" if k not in d else (f"{100 * d[k]:.1f}" if pct else f"{d[k]:.2f}")

    lines = [
        "| relation | source | panel agr. | panel F1 | panel alpha | agr. | F1 | kappa | P | R |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for rel, r in report.items():
        h = r["human_panel"]
        lines.append(
            f"| {rel} | human annotators | {f(h, 'agreement', True)} | {f(h, 'f1')} | {f(h, 'alpha')} | - | - | - | - | - |"
        )
        for name in r["ranking"]:
            p, s = r["prompts"][name]["panel"], r["prompts"][name]["single"]
            lines.append(
                f"| {rel} | `{name}` | {f(p, 'agreement', True)} | {f(p, 'f1')} | {f(p, 'alpha')} | "
                f"{f(s, 'agreement', True)} | {f(s, 'f1')} | {f(s, 'kappa')} | {f(s, 'precision')} | {f(s, 'recall')} |"
            )
    return "\n".join(lines)
