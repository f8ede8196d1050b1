"""Judged top-k evaluation (spec 5.3-5.5, appendices F.3 and G): metrics where judge-accepted candidates count.

A query may have several valid candidates besides its mined gold, so each run's top k is scored against the
candidates the judge accepted in it: under hard agreement (every prompt accepts), soft agreement (any prompt
accepts) and per prompt (Tables 4, 14, 15). The metrics are :mod:`ratio_bench.evaluation.scoring.metrics`' own, on
relevance sets made of accepted candidates. Beside them: Recall@k of the gold split by whether the judge
accepts the (query, gold) pair (Table 13), and the discovered positives of appendix G (accepted candidates
other than the gold): how often they stand in for an absent gold, how many come from another paper, and how
much they overlap the query lexically against the mined golds (Mann-Whitney U).
"""

from __future__ import annotations

import io
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ratio_bench.core import extras
from ratio_bench.evaluation.analysis.analyses import jaccard
from ratio_bench.evaluation.board.render.plots import PlottingUnavailable, pyplot
from ratio_bench.evaluation.scoring.metrics import AGREEMENTS, SET_METRICS, evaluate_run
from ratio_bench.retrieval.bm25 import BM25Tokenizer

stats = extras.lazy("scipy.stats")

Decisions = Mapping[str, Mapping[tuple[str, str], bool]]  # prompt ref -> (query id, candidate id) -> accepted


@dataclass
class JudgedSample:
    """The sampled queries of one relation and what the report needs to know about their candidates."""

    relation: str
    split: str
    query_ids: list[str]
    queries: dict[str, str]  # query id -> text
    golds: dict[str, str]  # query id -> gold id
    query_papers: dict[str, str]
    texts: dict[str, str]  # candidate id -> text (every top-k candidate and gold)
    papers: dict[str, str]  # candidate id -> paper id


def accepted(decisions: Decisions, mode: str, query_id: str, candidate_id: str) -> bool | None:
    """The verdict under ``mode`` (hard, soft or a prompt ref); None when a prompt has not judged the pair."""
    refs = list(decisions) if mode in AGREEMENTS else [mode]
    votes = [decisions[r].get((query_id, candidate_id)) for r in refs]
    if any(v is None for v in votes):
        return None
    return all(votes) if mode == "hard" else any(votes)


def _metrics(ranked: Mapping[str, list[str]], relevant: dict[str, set[str]], k: int) -> dict[str, float]:
    scores = evaluate_run(ranked, relevant, (k,))
    return {f"{name}_at_{k}": round(scores[f"{name}_at_{k}"], 6) for name, _ in SET_METRICS}


def _share(part: int, whole: int) -> float | None:
    return round(part / whole, 6) if whole else None


def conditioned_recall(
    sample: JudgedSample, top: Mapping[str, list[str]], decisions: Decisions, mode: str
) -> dict[str, Any]:
    """Recall@k of the gold for queries whose (query, gold) pair the judge accepts vs rejects (Table 13)."""
    groups: dict[bool, list[bool]] = {True: [], False: []}
    for q in sample.query_ids:
        verdict = accepted(decisions, mode, q, sample.golds[q])
        if verdict is not None:
            groups[verdict].append(sample.golds[q] in top[q])
    acc, rej = (_share(sum(groups[b]), len(groups[b])) for b in (True, False))
    odds = None
    if acc is not None and rej is not None and 0 < rej < 1 and acc < 1:
        odds = round((acc / (1 - acc)) / (rej / (1 - rej)), 6)
    return {
        "accepted": acc,
        "rejected": rej,
        "delta": round(acc - rej, 6) if acc is not None and rej is not None else None,
        "odds_ratio": odds,
        "n_accepted": len(groups[True]),
        "n_rejected": len(groups[False]),
    }


def discovered_positives(
    sample: JudgedSample, top: Mapping[str, list[str]], relevant: dict[str, set[str]]
) -> dict[str, Any]:
    """Accepted candidates other than the gold (appendix G): stand-ins, cross-paper share, query overlap."""

    tok = BM25Tokenizer(1)
    bags: dict[str, set[str]] = {}

    def bag(text: str) -> set[str]:
        if text not in bags:
            bags[text] = set(tok(text))
        return bags[text]

    stand_ins = cross = 0
    discovered, mined = [], []
    for q in sample.query_ids:
        gold = sample.golds[q]
        others = sorted(relevant.get(q, set()) - {gold})
        if others and gold not in top[q]:
            stand_ins += 1
        cross += sum(sample.papers.get(c) != sample.query_papers[q] for c in others)
        discovered += [jaccard(bag(sample.queries[q]), bag(sample.texts[c])) for c in others]
        mined.append(jaccard(bag(sample.queries[q]), bag(sample.texts[gold])))
    out: dict[str, Any] = {
        "queries_with_discovered_gold_absent": _share(stand_ins, len(sample.query_ids)),
        "accepted_non_gold": len(discovered),
        "cross_paper": _share(cross, len(discovered)),
        "jaccard_discovered": round(sum(discovered) / len(discovered), 6) if discovered else None,
        "jaccard_mined": round(sum(mined) / len(mined), 6) if mined else None,
        "mann_whitney_u": None,
        "p_value": None,
        "rank_biserial": None,
    }
    if discovered and mined:
        test = stats.mannwhitneyu(discovered, mined, alternative="two-sided")
        out |= {
            "mann_whitney_u": round(float(test.statistic), 6),
            "p_value": float(test.pvalue),
            # positive when discovered positives overlap the query less than mined ones (the spec's sign)
            "rank_biserial": round(1 - 2 * float(test.statistic) / (len(discovered) * len(mined)), 6),
        }
    return out


def judged_report(
    sample: JudgedSample, ranked: Mapping[str, list[str]], decisions: Decisions, k: int
) -> dict[str, Any]:
    """Everything the report shows for one run on one relation's sampled queries."""
    top = {q: list(ranked[q][:k]) for q in sample.query_ids}
    modes = [*AGREEMENTS, *decisions]
    relevant = {
        mode: {q: {c for c in top[q] if accepted(decisions, mode, q, c)} for q in sample.query_ids}
        for mode in modes
    }
    gold_only = _metrics(top, {q: {sample.golds[q]} for q in sample.query_ids}, k)
    judged = sum(accepted(decisions, "hard", q, c) is not None for q in sample.query_ids for c in top[q])
    return {
        "queries": len(sample.query_ids),
        "judged_at_k": _share(judged, sum(len(top[q]) for q in sample.query_ids)),
        "metrics": {mode: _metrics(top, relevant[mode], k) for mode in modes},
        "gold_only": gold_only,
        "mrr_any_accepted": {
            mode: _metrics(top, {q: relevant[mode][q] | {sample.golds[q]} for q in top}, k)[f"mrr_at_{k}"]
            for mode in AGREEMENTS
        },
        "conditioned_recall": {mode: conditioned_recall(sample, top, decisions, mode) for mode in AGREEMENTS},
        "discovered": {mode: discovered_positives(sample, top, relevant[mode]) for mode in AGREEMENTS},
    }


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}"


def markdown(report: dict[str, Any]) -> str:
    """The report's tables (values in %, Jaccard as fractions), one section per relation."""
    k = report["k"]
    lines = [f"# Judged top-{k} evaluation", "", f"Judge: `{report['judge']['model']}`.", ""]
    for rel, r in report["relations"].items():
        prompts = r["prompts"]
        lines += [f"## {rel} ({r['queries']} queries, split {r['split']})", ""]
        head = " | ".join(short for _, short in SET_METRICS)
        for title, modes in (
            ("Hard agreement / soft agreement", AGREEMENTS),
            ("Per prompt: " + " / ".join(f"`{p}`" for p in prompts), prompts),
        ):
            lines += [
                f"{title} (@{k}, %):",
                "",
                "| run | " + " | ".join(head for _ in modes) + " |",
                "| --- |" + " --- |" * (len(SET_METRICS) * len(modes)),
            ]
            for name, run in r["runs"].items():
                cells = [_pct(run["metrics"][m][f"{n}_at_{k}"]) for m in modes for n, _ in SET_METRICS]
                lines.append(f"| {name} | " + " | ".join(cells) + " |")
            lines.append("")
        lines += [
            f"Recall@{k} of the gold by judge verdict on (query, gold), hard agreement (Table 13, %):",
            "",
            "| run | accepted | rejected | delta | odds ratio | n accepted | n rejected |",
            "| --- | --- | --- | --- | --- | --- | --- |",
        ]
        for name, run in r["runs"].items():
            c = run["conditioned_recall"]["hard"]
            ratio = "-" if c["odds_ratio"] is None else f"{c['odds_ratio']:.2f}"
            lines.append(
                f"| {name} | {_pct(c['accepted'])} | {_pct(c['rejected'])} | {_pct(c['delta'])} | {ratio} | "
                f"{c['n_accepted']} | {c['n_rejected']} |"
            )
        lines += [
            "",
            "Discovered positives, hard agreement (appendix G):",
            "",
            f"| run | gold-only MRR@{k} | any-accepted MRR@{k} | accepted, gold absent (% queries) | "
            "accepted non-gold | cross-paper (%) | Jaccard discovered | Jaccard mined | rank-biserial | p |",
            "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
        ]
        for name, run in r["runs"].items():
            d = run["discovered"]["hard"]
            jd, jm = (
                ("-" if v is None else f"{v:.3f}") for v in (d["jaccard_discovered"], d["jaccard_mined"])
            )
            rb = "-" if d["rank_biserial"] is None else f"{d['rank_biserial']:.2f}"
            p = "-" if d["p_value"] is None else f"{d['p_value']:.3g}"
            lines.append(
                f"| {name} | {_pct(run['gold_only'][f'mrr_at_{k}'])} | {_pct(run['mrr_any_accepted']['hard'])} | "
                f"{_pct(d['queries_with_discovered_gold_absent'])} | {d['accepted_non_gold']} | "
                f"{_pct(d['cross_paper'])} | {jd} | {jm} | {rb} | {p} |"
            )
        lines.append("")
    return "\n".join(lines)


def plot(relation_report: dict[str, Any], k: int, title: str) -> bytes | None:
    """A PNG of each run's hard and soft metrics; None when matplotlib is not installed."""
    try:
        plt = pyplot("--plot")
    except PlottingUnavailable:
        return None

    runs = relation_report["runs"]
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.6), sharey=True)
    width = 0.8 / max(1, len(runs))
    for ax, mode in zip(axes, AGREEMENTS, strict=True):
        for i, (name, run) in enumerate(runs.items()):
            values = [100 * run["metrics"][mode][f"{n}_at_{k}"] for n, _ in SET_METRICS]
            ax.bar([j + i * width for j in range(len(SET_METRICS))], values, width, label=name)
        ax.set_xticks([j + width * (len(runs) - 1) / 2 for j in range(len(SET_METRICS))])
        ax.set_xticklabels([f"{short}@{k}" for _, short in SET_METRICS])
        ax.set_title(f"{mode} agreement")
    axes[0].set_ylabel("%")
    axes[0].legend(fontsize=8)
    fig.suptitle(title)
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100, metadata={"Software": None})
    plt.close(fig)
    return buf.getvalue()
