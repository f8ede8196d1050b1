"""Pairwise inspiration judging of two saved runs (spec 5.5, appendix H): which top-k list inspires more.

For each relation, queries are drawn from the split with equal allocation across markers (the silver split's
sampler); the judge sees only the query and the two systems' top-k candidate sentences, labelled List A and
List B (never a system name, the gold or the marker), once in each order. ``pairwise_stats`` turns the two
replies per query into Table 16. Both runs must come from ``ratio score --save-run`` on this release and on
the same split; the queries are the silver split's when the runs were scored on test and the release has one.
Every request goes through the judge's cache, so a re-run sends nothing; the outputs (tables as Markdown and
JSON, every reply as Parquet) are written only when every request was answered or recorded invalid.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from ratio_bench.core.errors import RatioError
from ratio_bench.core.io import atomic_open, atomic_path, prepare_output_dir, staged_dir, write_json
from ratio_bench.dataset.contract import SILVER, corpus_split
from ratio_bench.dataset.release import Release, manifest_sha256
from ratio_bench.evaluation.scoring.runs import SavedRun, load_run
from ratio_bench.judge.job import JobEstimate, JudgeJob
from ratio_bench.judge.pairwise_stats import FIRST, SECOND, TIE, preferred_system, relation_stats
from ratio_bench.judge.silver import stratified_sample
from ratio_bench.llm.client import JudgeRequest, JudgeSettings, Outcome
from ratio_bench.llm.prompts import Prompt, get_prompt

PROMPT_ID = "inspiration-pairwise"
KIND = "pairwise"
ORDERS = ("first-as-A", "first-as-B")
JUDGMENT_SCHEMA = pa.schema(
    [
        ("relation", pa.string()),
        ("query_id", pa.string()),
        ("order", pa.string()),  # first-as-A | first-as-B
        ("status", pa.string()),  # ok | invalid
        ("winner", pa.string()),  # A | B | tie; null when invalid
        ("preferred", pa.string()),  # the run's name, or "tie"; null when invalid
        ("confidence", pa.float64()),
        ("reason", pa.string()),
        ("raw_reply", pa.string()),  # the unusable reply, kept for audit
    ]
)


class PairwiseError(RatioError, ValueError):
    """Runs that cannot be compared (other release or split, missing queries) or a bad sample request."""


@dataclass
class RelationPlan:
    relation: str
    query_ids: list[str]
    queries: list[str]
    lists: tuple[list[list[str]], list[list[str]]]  # per run, per query: candidate texts, best first

    def requests(self, prompt: Prompt) -> list[JudgeRequest]:
        """Two requests per query, the first run's list as List A and then as List B."""
        out = []
        for query, first, second in zip(self.queries, *self.lists, strict=True):
            for list_a, list_b in ((first, second), (second, first)):
                messages = prompt.messages(
                    self.relation, query=query, list_a=numbered(list_a), list_b=numbered(list_b)
                )
                out.append(JudgeRequest(messages, prompt.output))
        return out


@dataclass
class PairwisePlan:
    runs: tuple[SavedRun, SavedRun]
    release: dict[str, Any]
    split: str  # the split the queries come from
    k: int
    per_relation: int
    seed: int
    relations: list[RelationPlan]

    @property
    def names(self) -> tuple[str, str]:
        return self.runs[0].name, self.runs[1].name

    def requests(self, prompt: Prompt) -> list[JudgeRequest]:
        return [r for rel in self.relations for r in rel.requests(prompt)]


def numbered(texts: list[str]) -> str:
    """A candidate list as the judge sees it: "1. ..." per line (spec listing 9)."""
    return "\n".join(f"{i}. {t}" for i, t in enumerate(texts, 1))


def load_runs(release: Release, paths: list[Path]) -> tuple[dict[str, Any], tuple[SavedRun, SavedRun]]:
    """The release manifest and the two runs, refused unless both were scored on it and on one split."""
    manifest = release.manifest
    if len(paths) != 2 or Path(paths[0]).resolve() == Path(paths[1]).resolve():
        raise PairwiseError("--runs: give exactly two different run folders (from `ratio score --save-run`)")
    first, second = (load_run(p, manifest) for p in paths)
    if first.manifest.get("split") != second.manifest.get("split"):
        raise PairwiseError(
            f"--runs: {first.path} was scored on split {first.manifest.get('split')!r} and {second.path} on "
            f"{second.manifest.get('split')!r}; score both on one split with `ratio score --save-run`"
        )
    if first.name == second.name:
        raise PairwiseError(f"--runs: both runs are of {first.name!r}; compare two different systems")
    return manifest, (first, second)


def query_split(release: Release, run_split: str, requested: str | None) -> str:
    """``--split`` if given, else the runs' split, except test -> silver when the release has a silver split."""
    if requested is not None:
        if requested not in (run_split, SILVER) or (requested == SILVER and run_split != "test"):
            raise PairwiseError(
                f"--split {requested}: the runs were scored on {run_split!r}, which does not cover it; "
                f"use --split {run_split}"
            )
        return requested
    if run_split == "test" and any(release.shards(r, SILVER) for r in release.relations):
        return SILVER
    return run_split


def plan_pairwise(
    release: str | Path,
    run_paths: list[Path],
    per_relation: int,
    k: int,
    seed: int = 0,
    split: str | None = None,
    relations: list[str] | None = None,
) -> PairwisePlan:
    """Sample the queries and look up both runs' top-k candidate texts; nothing is sent."""
    if per_relation < 1:
        raise PairwiseError(f"--sample {per_relation}: must be at least 1")
    release = Release.open(release)
    manifest, runs = load_runs(release, run_paths)
    depth = min(int(r.manifest.get("k") or 0) for r in runs)
    if not 1 <= k <= depth:
        raise PairwiseError(f"--k {k}: must be between 1 and the runs' depth ({depth})")
    split = query_split(release, runs[0].manifest["split"], split)
    common = [r for r in runs[0].ranked if r in runs[1].ranked and (relations is None or r in relations)]
    if not common:
        raise PairwiseError("--runs: the two runs share no relation to compare (or none given by --relation)")
    corpus = release.corpus(split, ["id", "text"])
    if corpus.num_rows == 0:
        raise PairwiseError(
            f"{release.shown}: no corpus for split {split!r} (data/corpus/)", value=release.root
        )
    plans, wanted = [], set()
    for rel in common:
        table = release.queries(rel, split, ["query_id", "query", "marker"])
        if table.num_rows == 0:
            continue
        ids = stratified_sample(
            table.column("query_id").to_pylist(), table.column("marker").to_pylist(), per_relation, seed
        )
        for run in runs:
            missing = [q for q in ids if not run.ranked[rel].get(q)]
            if missing:
                raise PairwiseError(
                    f"--runs {run.path}: no ranked list for {len(missing)} of the {len(ids)} sampled {rel} "
                    f"{split} queries (e.g. {missing[0]}); re-score with `ratio score --save-run`"
                )
        query = dict(
            zip(table.column("query_id").to_pylist(), table.column("query").to_pylist(), strict=True)
        )
        tops = tuple([run.ranked[rel][q][:k] for q in ids] for run in runs)
        wanted.update(c for top in tops for lst in top for c in lst)
        plans.append((rel, ids, [query[q] for q in ids], tops))
    if not plans:
        raise PairwiseError(
            f"{release.shown}: no queries in split {split!r} for the runs' relations", value=release.root
        )
    found = corpus.filter(pc.is_in(corpus.column("id"), pa.array(sorted(wanted), pa.string())))
    text = dict(zip(found.column("id").to_pylist(), found.column("text").to_pylist(), strict=True))
    if len(text) < len(wanted):
        unknown = sorted(wanted - text.keys())[0]
        raise PairwiseError(
            f"--runs: candidate {unknown} is not in the release's {corpus_split(split)} corpus; were the runs "
            f"scored on split {split}?"
        )
    return PairwisePlan(
        runs,
        manifest,
        split,
        k,
        per_relation,
        seed,
        [
            RelationPlan(rel, ids, queries, tuple([[text[c] for c in lst] for lst in top] for top in tops))
            for rel, ids, queries, tops in plans
        ],
    )


def _judgments(plan: PairwisePlan, outcomes: list[Outcome]) -> tuple[pa.Table, dict[str, list]]:
    """Every reply as a row, and per relation each query's (winner with first as A, winner with first as B)."""
    names = {FIRST: plan.names[0], SECOND: plan.names[1], TIE: TIE}
    rows, pairs = [], {}
    it = iter(outcomes)
    for rel in plan.relations:
        pairs[rel.relation] = []
        for qid in rel.query_ids:
            winners = []
            for order, first_is_a in zip(ORDERS, (True, False), strict=True):
                o = next(it)
                winner = o.verdict.winner if o.status == "ok" and o.verdict else None
                winners.append(winner)
                pref = preferred_system(winner, first_is_a)
                rows.append(
                    {
                        "relation": rel.relation,
                        "query_id": qid,
                        "order": order,
                        "status": o.status,
                        "winner": winner,
                        "preferred": names[pref] if pref else None,
                        "confidence": o.verdict.confidence if o.verdict else None,
                        "reason": o.verdict.reason if o.verdict else "",
                        "raw_reply": o.raw if o.status == "invalid" else "",
                    }
                )
            pairs[rel.relation].append(tuple(winners))
    return pa.Table.from_pylist(rows, schema=JUDGMENT_SCHEMA), pairs


def provenance(plan: PairwisePlan, prompt: Prompt, judge: JudgeSettings) -> dict[str, Any]:
    """What a pairwise report records about its inputs (no server address, no key)."""
    return {
        "dataset": {
            "name": plan.release.get("name"),
            "version": plan.release.get("version"),
            "manifest_sha256": manifest_sha256(plan.release),
        },
        "split": plan.split,
        "runs": {"first": plan.names[0], "second": plan.names[1]},
        "k": plan.k,
        "queries_per_relation": plan.per_relation,
        "seed": plan.seed,
        "sampling": "equal allocation across markers, capped (judge.silver.stratified_sample)",
        "rule": "a query prefers a system only when both list orders pick it; invalid replies leave it out",
        "prompt": {"ref": prompt.ref("<relation>"), "sha256": prompt.sha256},
        "judge": judge.describe(),
    }


class PairwiseJob(JudgeJob):
    """Two runs' top-k lists judged in both orders; Table 16 printed, and written to ``out`` when given."""

    name, output = "pairwise", "pairwise tables"

    def __init__(self, plan: PairwisePlan, judge: JudgeSettings, out: Path | None = None):
        if out is not None:
            prepare_output_dir(out, KIND)  # before paying for a single request
        self.pairwise, self.judge, self.out = plan, judge, out
        self.prompt = get_prompt(PROMPT_ID)

    def plan(self) -> list[str]:
        p = self.pairwise
        return [
            f"pairwise: {p.names[0]} vs {p.names[1]}, {p.split} split, top-{p.k}: "
            + ", ".join(f"{r.relation} {len(r.query_ids):,}" for r in p.relations)
            + " queries x 2 list orders"
        ]

    def requests(self) -> list[JudgeRequest]:
        return self.pairwise.requests(self.prompt)

    def write(self, outcomes: list[Outcome], est: JobEstimate) -> list[str]:
        table, pairs = _judgments(self.pairwise, outcomes)
        result = provenance(self.pairwise, self.prompt, self.judge) | {
            "relations": {rel: relation_stats(replies) for rel, replies in pairs.items()}
        }
        lines = [markdown_table(result).rstrip("\n")]
        if self.out is not None:
            write_outputs(self.out, result, table)
            lines.append(f"written to {self.out}: pairwise.md, pairwise.json, judgments.parquet")
        return lines


def markdown_table(result: dict[str, Any]) -> str:
    """Table 16 for one pair of runs: preferred counts, win rate, stable share, ties, Slot-A rate, p-values."""
    first, second = result["runs"]["first"], result["runs"]["second"]

    def pct(x: float | None) -> str:
        return "n/a" if x is None else f"{100 * x:.1f}"

    def p(x: float | None) -> str:
        return "n/a" if x is None else f"{x:.3g}"

    lines = [
        f"Pairwise inspiration judge: **{first}** (first) vs **{second}** (second), top-{result['k']}, "
        f"{result['split']} split, judge {result['judge']['model']}.",
        "",
        "| relation | queries | preferred first | preferred second | win first (%) | p (win) | stable (%) "
        "| stable ties | tie replies | slot A (%) | p (slot A) | unusable |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for rel, s in result["relations"].items():
        lines.append(
            f"| {rel} | {s['queries']} | {s['preferred_first']} | {s['preferred_second']} | "
            f"{pct(s['win_rate_first'])} | {p(s['win_p_value'])} | {pct(s['stable_share'])} | "
            f"{s['stable_ties']} | {s['tie_replies']} | {pct(s['slot_a_rate'])} | {p(s['slot_a_p_value'])} | "
            f"{s['unusable']} |"
        )
    lines += [
        "",
        "Win: share of stable, decisive queries preferring the first run; stable: same system under both list "
        "orders; slot A: share of decisive replies choosing List A (50% = no position bias). p: two-sided "
        "exact binomial test against 0.5.",
    ]
    return "\n".join(lines) + "\n"


def write_outputs(out: Path, result: dict[str, Any], judgments: pa.Table) -> None:
    """``manifest.json``, ``pairwise.json``, ``pairwise.md`` and ``judgments.parquet`` in ``out``, swapped in."""
    with staged_dir(out, KIND) as stage:
        write_json(stage / "pairwise.json", result)
        with atomic_open(stage / "pairwise.md", "w", encoding="utf-8", newline="\n") as fh:
            fh.write(markdown_table(result))
        with atomic_path(stage / "judgments.parquet") as tmp:
            pq.write_table(judgments, tmp, compression="zstd")
        write_json(
            stage / "manifest.json",
            {"kind": KIND, "files": ["judgments.parquet", "pairwise.json", "pairwise.md"]}
            | {k: result[k] for k in ("dataset", "split", "runs", "k")},
        )
