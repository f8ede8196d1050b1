"""The model card (README.md) of a tuned retriever, rendered from ``model_cards/model_card.md``.

The card is sentence-transformers' generated card data plus ours: its front matter keeps the library's keys
(library name, pipeline tag, tags, base model) and adds the Ratio release, the licence the training data allows
and ``model-index`` results so the Hub shows them; the body states relation, backbone, prefixes, trials and
results from the run's ``summary.json`` and the leaderboard entries it was scored in. Nothing in it is timed
or random, so the same run renders the same bytes.
"""

from __future__ import annotations

import string
from pathlib import Path
from typing import Any

import yaml

from ratio_bench.evaluation.leaderboard import markdown_text as md_escape

TEMPLATE = Path(__file__).resolve().parents[3] / "model_cards" / "model_card.md"

RELATION_GOALS = {
    "address": "offer an approach or insight that can help address the problem it states",
    "broaden": "reformulate it at a broader scope or greater generality",
    "specify": "instantiate it through a concrete case, mechanism or example",
}
# Front-matter keys of sentence-transformers' own card that stay true for a tuned model.
KEPT_LIBRARY_KEYS = ("language", "library_name", "pipeline_tag", "tags", "base_model")
METRICS = (
    ("mrr_at_10", "MRR@10"),
    ("recall_at_10", "R@10"),
    ("recall_at_1", "R@1"),
    ("mrr_at_100", "MRR@100"),
)


def repo_name(summary: dict[str, Any]) -> str:
    """``ratio-<relation>-<backbone>-<setup>``, the Hub name of a tuned model (lower case, Hub-safe)."""
    backbone = summary["backbone"].split("/")[-1]
    name = f"ratio-{summary['relation']}-{backbone}-{summary['setup']}".lower()
    return "".join(c if c.isalnum() or c in "-_." else "-" for c in name)


def split_front_matter(text: str) -> tuple[dict[str, Any], str]:
    """A Markdown card's YAML header and its body (an empty header when there is none)."""
    if text.startswith("---\n"):
        head, sep, body = text[4:].partition("\n---\n")
        if sep:
            return yaml.safe_load(head) or {}, body
    return {}, text


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}"


def _results_rows(summary: dict[str, Any], entries: list[dict[str, Any]]) -> list[list[str]]:
    rel = summary["relation"]
    chosen = summary["trials"][summary["chosen_trial"]]
    best = next(e for e in chosen["epochs"] if e["epoch"] == chosen["best_epoch"])
    rows = [
        ["validation (best epoch)", _pct(best.get("mrr_at_10")), _pct(best.get("recall_at_10")), "-", "-"]
    ]
    for entry in entries:
        metrics = entry["results"].get(rel)
        if metrics:
            label = f"{entry['split']} ({md_escape(entry['model'])})"
            rows.append([label, *(_pct(metrics.get(k)) for k, _ in METRICS)])
    return rows


def _table(header: list[str], rows: list[list[Any]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(" --- " for _ in header) + "|"]
    return "\n".join(lines + ["| " + " | ".join(str(c) for c in row) + " |" for row in rows])


def _trials_table(summary: dict[str, Any]) -> str:
    rows = []
    for t in summary["trials"]:
        s = t["settings"]
        curve = " / ".join(_pct(e.get("mrr_at_10")) for e in t["epochs"])
        rows.append(
            [
                t["trial"],
                s.get("epochs"),
                s.get("batch_size"),
                s.get("learning_rate"),
                s.get("weight_decay", 0),
                s.get("warmup_ratio", 0),
                s.get("max_grad_norm", "-"),
                s.get("freeze_ratio", 0),
                md_escape(str(s.get("rationale", ""))),
                curve,
            ]
        )
    header = [
        "trial",
        "epochs",
        "batch",
        "LR",
        "wd",
        "warmup",
        "mgn",
        "freeze",
        "rationale",
        "val MRR@10 per epoch",
    ]
    return _table(header, rows)


def model_index(
    summary: dict[str, Any], entries: list[dict[str, Any]], dataset_repo: str | None
) -> list[dict]:
    """``model-index`` metadata: one result per scored split, MRR@10 first (the Hub shows the first metric)."""
    rel = summary["relation"]
    results = []
    for entry in entries:
        metrics = entry["results"].get(rel)
        if not metrics:
            continue
        results.append(
            {
                "task": {"type": "retrieval", "name": "Retrieval"},
                "dataset": {
                    "name": f"Ratio {rel.capitalize()}",
                    "type": dataset_repo or entry["dataset"]["name"],
                    "config": rel,
                    "split": entry["split"],
                    "revision": entry["dataset"]["version"],
                },
                "metrics": [
                    {"type": key, "value": round(100 * metrics[key], 2), "name": name}
                    for key, name in METRICS
                    if key in metrics
                ],
            }
        )
    return [{"name": repo_name(summary), "results": results}] if results else []


def render_card(
    summary: dict[str, Any],
    library_card: str,
    entries: list[dict[str, Any]],
    repo_id: str,
    licence: str,
    dataset_repo: str | None = None,
) -> str:
    """The full README.md: ``library_card`` is the card sentence-transformers saved with the model."""
    library_meta, library_body = split_front_matter(library_card)
    meta: dict[str, Any] = {k: library_meta[k] for k in KEPT_LIBRARY_KEYS if k in library_meta}
    meta["tags"] = sorted(
        {*meta.get("tags", []), "ratio", "inspiration-retrieval", f"ratio-{summary['relation']}"}
    )
    meta["license"] = "other"
    meta["license_name"] = licence
    if dataset_repo:
        meta["datasets"] = [dataset_repo]
    index = model_index(summary, entries, dataset_repo)
    if index:
        meta["model-index"] = index
    dataset = summary["dataset"]
    generated = ""
    if "generated_from_trainer" in library_meta.get("tags", []):
        generated = "## Training details (generated by sentence-transformers)\n\n" + library_body.strip()
    chosen = summary["chosen_trial"]
    values = {
        "front_matter": yaml.safe_dump(meta, sort_keys=True, allow_unicode=True).strip(),
        "title": md_escape(repo_name(summary)),
        "relation": summary["relation"],
        "relation_title": summary["relation"].capitalize(),
        "relation_goal": RELATION_GOALS[summary["relation"]],
        "dataset_link": f"https://huggingface.co/datasets/{dataset_repo}" if dataset_repo else "#",
        "backbone": md_escape(summary["backbone"]),
        "setup": summary["setup"],
        "query_prompt": summary["prompts"].get("query", ""),
        "document_prompt": summary["prompts"].get("document", ""),
        "dataset_name": md_escape(dataset["name"]),
        "dataset_version": md_escape(dataset["version"]),
        "manifest_short": dataset["manifest_sha256"][:12],
        "train_pairs": f"{summary['train_pairs']:,}",
        "n_trials": len(summary["trials"]),
        "chosen_trial": chosen,
        "repo_id": repo_id,
        "results_table": _table(["split", *(n for _, n in METRICS)], _results_rows(summary, entries)),
        "trials_table": _trials_table(summary),
        "chosen_reason": md_escape(summary.get("chosen_reason", "")),
        "scale_note": summary.get("scale_note")
        or "Trained at the scale stated above; figures on a small development release are not the spec's.",
        "licence": md_escape(licence),
        "generated_section": generated,
    }
    return string.Template(TEMPLATE.read_text(encoding="utf-8")).substitute(values).rstrip() + "\n"
