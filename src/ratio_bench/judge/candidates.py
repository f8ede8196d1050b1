"""Candidate judging (spec 5.3, appendix E): the LLM judge reads each sampled query's top-k of saved runs.

Per relation, queries are sampled from the silver split (else test) with equal allocation across markers (the
silver sampler). Every (query, candidate) of every run's top k, and the (query, gold) pair (for Recall@k
conditioned on the judge, Table 13), is judged by the relation's two prompts in their ``candidate`` mode: the
judge sees the two sentences only, never the gold, marker, rank or system. Requests are unique per (query,
candidate, prompt) over all runs, and a verdict already in the judged pool (``evaluation.pool``) is not asked
again, so a second system costs only the candidates the first did not retrieve. The cost of what is left is
estimated before anything is sent.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from ratio_bench.core.errors import RatioError
from ratio_bench.core.io import atomic_open, folder_files, prepare_output_dir, staged_dir, write_json
from ratio_bench.dataset.config import DEFAULT_PROMPTS
from ratio_bench.dataset.contract import SILVER, corpus_split
from ratio_bench.dataset.release import Release
from ratio_bench.evaluation.scoring.pool import JudgedPool, Judgement
from ratio_bench.evaluation.scoring.runs import RunError, SavedRun
from ratio_bench.judge.job import JobEstimate, JudgeJob
from ratio_bench.judge.judged import JudgedSample, judged_report, markdown, plot
from ratio_bench.judge.silver import stratified_sample
from ratio_bench.llm.client import JudgeRequest, JudgeSettings, Outcome
from ratio_bench.llm.prompts import Prompt, get_prompt

MODE = "candidate"
REPORT_KIND = "judged-report"


def relation_prompts(manifest: dict[str, Any], relation: str) -> list[Prompt]:
    """The prompts the release's silver split was judged with (the defaults when it has none)."""
    refs = [
        r
        for r, p in (manifest.get("silver") or {}).get("prompts", {}).items()
        if p.get("relation") == relation
    ]
    ids = [r.split("@", 1)[0] for r in sorted(refs)] or DEFAULT_PROMPTS[relation]
    return [get_prompt(i) for i in ids]


def judge_identity(settings: JudgeSettings) -> tuple[str, str]:
    """(model, settings JSON) as the pool records them: no key, no server address."""
    return settings.model, json.dumps(settings.describe(), sort_keys=True)


@dataclass
class CandidatePlan:
    sample: JudgedSample
    prompts: list[Prompt]
    runs: dict[str, dict[str, list[str]]]  # run name -> query id -> top k
    pairs: list[tuple[str, str]]  # unique (query id, candidate id), golds included, sorted
    per_run_pairs: int  # what judging each run (and the golds) on its own would have asked for


def run_names(runs: list[SavedRun]) -> list[str]:
    """Each run's model name, with its folder added where two runs share one."""
    counts = Counter(r.name for r in runs)
    return [r.name if counts[r.name] == 1 else f"{r.name} ({r.path.name})" for r in runs]


def sample_split(manifest: dict[str, Any], relation: str) -> str:
    return SILVER if (manifest.get("rows", {}).get(relation) or {}).get(SILVER) else "test"


def plan_candidates(
    release: Release,
    runs: list[SavedRun],
    relations: list[str],
    n: int,
    seed: int,
    k: int,
) -> list[CandidatePlan]:
    """One plan per relation with queries: the sample, each run's top k and the unique pairs to judge."""
    plans, names = [], run_names(runs)
    corpora: dict[str, dict[str, list]] = {}
    for rel in relations:
        split = sample_split(release.manifest, rel)
        q = release.queries(rel, split, ["query_id", "query", "gold_id", "marker", "paper_id"]).to_pydict()
        if not q["query_id"]:
            continue
        chosen = stratified_sample(q["query_id"], q["marker"], n, seed)
        row = {qid: i for i, qid in enumerate(q["query_id"])}
        tops: dict[str, dict[str, list[str]]] = {}
        for run, name in zip(runs, names, strict=True):
            scored = run.manifest.get("split")
            if scored != split and not (split == SILVER and scored == "test"):
                raise RunError(
                    f"--run {run.path}: scored on split {scored!r}, but {rel} queries are sampled from "
                    f"{split!r}; score it with `ratio score --split {split} --save-run`"
                )
            ranked = run.ranked.get(rel, {})
            missing = [qid for qid in chosen if qid not in ranked]
            if missing:
                raise RunError(
                    f"--run {run.path}: no {rel} ranking for query {missing[0]} ({len(missing)} missing)"
                )
            tops[name] = {qid: ranked[qid][:k] for qid in chosen}
        split_corpus = corpus_split(split)
        if split_corpus not in corpora:
            corpora[split_corpus] = release.corpus(split, ["id", "text", "paper_id"]).to_pydict()
        corpus = corpora[split_corpus]
        golds = {qid: q["gold_id"][row[qid]] for qid in chosen}
        pairs = sorted(
            {(qid, c) for top in tops.values() for qid in chosen for c in top[qid]} | set(golds.items())
        )
        needed = {c for _, c in pairs}
        texts = {c: t for c, t in zip(corpus["id"], corpus["text"], strict=True) if c in needed}
        papers = {c: p for c, p in zip(corpus["id"], corpus["paper_id"], strict=True) if c in needed}
        unknown = sorted(needed - texts.keys())
        if unknown:
            raise RunError(
                f"--run: candidate {unknown[0]} is not in the {split_corpus} corpus of {release.shown}"
            )
        sample = JudgedSample(
            rel,
            split,
            chosen,
            {qid: q["query"][row[qid]] for qid in chosen},
            golds,
            {qid: q["paper_id"][row[qid]] for qid in chosen},
            texts,
            papers,
        )
        per_run = sum(len(t[qid]) for t in tops.values() for qid in chosen) + len(chosen)
        plans.append(CandidatePlan(sample, relation_prompts(release.manifest, rel), tops, pairs, per_run))
    return plans


@dataclass(frozen=True)
class Pending:
    relation: str
    query_id: str
    candidate_id: str
    prompt: Prompt
    request: JudgeRequest


@dataclass
class Work:
    pending: list[Pending]
    unique: int  # unique (query, candidate, prompt) requests of the plans
    per_run: int  # what judging every run separately would have sent
    in_pool: int  # of ``unique``, already in the pool


def missing_requests(plans: list[CandidatePlan], pool: JudgedPool, settings: JudgeSettings) -> Work:
    """The requests whose verdict the pool lacks for this judge."""
    model, described = judge_identity(settings)
    pending, unique, per_run, in_pool = [], 0, 0, 0
    for plan in plans:
        have = pool.keys(plan.sample.relation)
        s = plan.sample
        per_run += plan.per_run_pairs * len(plan.prompts)
        for p in plan.prompts:
            for q, c in plan.pairs:
                unique += 1
                if (q, c, p.ref(MODE), p.sha256, model, described) in have:
                    in_pool += 1
                    continue
                messages = p.messages(MODE, query=s.queries[q], candidate=s.texts[c])
                pending.append(Pending(s.relation, q, c, p, JudgeRequest(messages, p.output)))
    return Work(pending, unique, per_run, in_pool)


def other_settings(
    plans: list[CandidatePlan], pool: JudgedPool, settings: JudgeSettings
) -> list[tuple[str, int]]:
    """The pool's verdicts on this plan's (query, candidate, prompt) that the current judge will not reuse, per
    judge identity that splits them off: (what differs from the current settings, how many). A verdict is
    reused only under the exact judge it was given by (model, temperature, max tokens, JSON mode, params, and the
    prompt's text), so ``--max-tokens 128`` against a pool judged with 256 reuses nothing; this says so."""
    model, described = judge_identity(settings)
    counts: Counter[tuple[bool, str, str]] = Counter()
    for plan in plans:
        shas = {p.ref(MODE): p.sha256 for p in plan.prompts}
        wanted = {(q, c, ref) for ref in shas for q, c in plan.pairs}
        for q, c, ref, sha, m, d in pool.keys(plan.sample.relation):
            if (q, c, ref) in wanted and (sha, m, d) != (shas[ref], model, described):
                counts[(sha != shas[ref], m, d)] += 1
    now = settings.describe()
    return sorted(
        ((_difference(now, prompt_changed, m, d), n) for (prompt_changed, m, d), n in counts.items()),
        key=lambda item: (-item[1], item[0]),
    )


def _difference(now: dict[str, Any], prompt_changed: bool, model: str, described: str) -> str:
    """``max_tokens 128 (now 256), prompt text changed``: how a pool's judge differs from the current one."""
    try:
        then = json.loads(described)
    except ValueError:
        then = {}
    then = then if isinstance(then, dict) else {}
    then.setdefault("model", model)
    diffs = [
        f"{key} {then.get(key)!r} (now {now.get(key)!r})"
        for key in sorted(set(now) | set(then))
        if then.get(key) != now.get(key)
    ]
    return ", ".join(diffs + ["prompt text changed"] * prompt_changed) or "same settings"


def store(pool: JudgedPool, work: Work, outcomes: list[Outcome], settings: JudgeSettings) -> dict[str, int]:
    """Add every judged outcome (ok or invalid) to the pool; failed and skipped ones are left for a re-run."""
    model, described = judge_identity(settings)
    rows: dict[str, list[dict[str, Any]]] = {}
    left = 0
    for w, o in zip(work.pending, outcomes, strict=True):
        if o.status not in ("ok", "invalid"):
            left += 1
            continue
        v = o.verdict
        rows.setdefault(w.relation, []).append(
            {
                "query_id": w.query_id,
                "candidate_id": w.candidate_id,
                "prompt": w.prompt.ref(MODE),
                "prompt_sha256": w.prompt.sha256,
                "judge_model": model,
                "judge_settings": described,
                "status": o.status,
                "decision": v.decision if v else None,
                "confidence": v.confidence if v else None,
            }
        )
    added = sum(pool.add(rel, r) for rel, r in sorted(rows.items()))
    return {"stored": added, "left": left}


def report(plans: list[CandidatePlan], pool: JudgedPool, settings: JudgeSettings, k: int) -> dict[str, Any]:
    """Per relation and run: the judged metrics, conditioned recall and discovered positives."""
    model, described = judge_identity(settings)
    relations = {}
    for plan in plans:
        rel = plan.sample.relation
        decisions = {
            p.ref(MODE): pool.decisions(rel, Judgement(p.ref(MODE), p.sha256, model, described))
            for p in plan.prompts
        }
        missing = sum((q, c) not in d for d in decisions.values() for q, c in plan.pairs)
        if missing:
            raise RatioError(f"{pool.path}: {missing} {rel} verdicts are missing; re-run to judge them")
        relations[rel] = {
            "split": plan.sample.split,
            "queries": len(plan.sample.query_ids),
            "prompts": list(decisions),
            "prompt_sha256": {p.ref(MODE): p.sha256 for p in plan.prompts},
            "runs": {name: judged_report(plan.sample, top, decisions, k) for name, top in plan.runs.items()},
        }
    return {"k": k, "judge": settings.describe(), "relations": relations}


class CandidatesJob(JudgeJob):
    """The top k of saved runs judged into the pool (only what it lacks); the report written to ``out``."""

    name, output = "candidates", "candidates report"

    def __init__(
        self,
        plans: list[CandidatePlan],
        runs: list[SavedRun],
        pool: JudgedPool,
        judge: JudgeSettings,
        k: int,
        out: Path,
    ):
        prepare_output_dir(out, REPORT_KIND)  # before paying for a single request
        self.plans, self.runs, self.pool, self.judge, self.k, self.out = plans, runs, pool, judge, k, out
        self.work = missing_requests(plans, pool, judge)

    def plan(self) -> list[str]:
        w = self.work
        return [
            f"{p.sample.relation}: {len(p.sample.query_ids)} queries from {p.sample.split}, {len(p.pairs)} "
            f"(query, candidate) pairs x {len(p.prompts)} prompts ({', '.join(q.ref(MODE) for q in p.prompts)})"
            for p in self.plans
        ] + [
            f"candidates: {w.unique:,} unique ({w.per_run - w.unique:,} saved by judging shared candidates once, "
            f"{w.in_pool:,} already in the pool {self.pool.path})",
            *self._pool_split(),
        ]

    def _pool_split(self) -> list[str]:
        """Why verdicts in the pool are not reused: the judge settings that split them off, and how many each."""
        w, others = self.work, other_settings(self.plans, self.pool, self.judge)
        lines = [
            f"pool reuse: {w.in_pool:,} verdicts reused under the current judge settings, "
            f"{w.unique - w.in_pool:,} to judge (verdicts are reused only under the exact judge: model, prompt "
            "text, temperature, max tokens, JSON mode, params)"
        ]
        lines += [f"  {n:,} verdicts in the pool not reused, judged with {diff}" for diff, n in others]
        return lines + (["  pass those settings to reuse them"] if others else [])

    def requests(self) -> list[JudgeRequest]:
        return [w.request for w in self.work.pending]

    def keep(self, outcomes: list[Outcome]) -> list[str]:
        stored = store(self.pool, self.work, outcomes, self.judge)
        return [f"pool {self.pool.path}: {stored['stored']:,} verdicts added"]

    def write(self, outcomes: list[Outcome], est: JobEstimate) -> list[str]:
        found = report(self.plans, self.pool, self.judge, self.k)
        found["runs"] = {name: str(r.path) for name, r in zip(run_names(self.runs), self.runs, strict=True)}
        w = self.work
        found["requests"] = {
            "unique_requests": w.unique,
            "saved_by_dedup": w.per_run - w.unique,
            "saved_by_pool": w.in_pool,
        } | asdict(est)
        text = markdown(found)
        return [text, *write_report(self.out, found, text, self.pool.release, self.k)]


def write_report(out: Path, found: dict[str, Any], text: str, dataset: dict[str, Any], k: int) -> list[str]:
    """``candidates.json``, ``candidates.md`` and a plot per relation, swapped in as one judged report."""
    skipped = []
    with staged_dir(out, REPORT_KIND) as stage:
        write_json(stage / "candidates.json", found)
        with atomic_open(stage / "candidates.md", "w", encoding="utf-8", newline="\n") as fh:
            fh.write(text)
        for rel, r in found["relations"].items():
            png = plot(r, k, f"{rel}: judged top-{k}")
            if png is None:
                skipped.append(rel)
                continue
            with atomic_open(stage / f"candidates-{rel}.png", "wb") as fh:
                fh.write(png)
        manifest = {"kind": REPORT_KIND, "dataset": dataset, "k": k, "files": folder_files(stage)}
        write_json(stage / "manifest.json", manifest)
    lines = ["plots skipped: matplotlib is not installed"] if skipped else []
    return [*lines, f"report written to {out}"]
