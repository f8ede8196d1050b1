"""The model card (README.md of a tuned model's folder), rendered from ``model_cards/model_card.md``.

Everything comes from the training output folder's ``summary.json`` (relation, backbone, prompts, release
identity, trials and their validation curves), optional ``ratio score --out`` results (test, silver), the
release manifest (the licence its data allows) and the card sentence-transformers wrote when it saved the model
(architecture, hyperparameters, framework versions, citations; its widget and dataset samples are left out,
since they quote training text). Text from those files is escaped for Markdown; the YAML header is written
by ``yaml.safe_dump``. The card carries no timestamp or local path, so the same inputs render the same bytes.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from ratio_bench import __version__
from ratio_bench.core.errors import RatioError
from ratio_bench.core.io import atomic_open, write_json
from ratio_bench.core.relations import BY_NAME
from ratio_bench.core.resources import fill_card_template
from ratio_bench.dataset.release import Release
from ratio_bench.evaluation.board.escaping import markdown_text
from ratio_bench.evaluation.board.leaderboard import parse_entry, read_entry
from ratio_bench.evaluation.entry.record import Entry
from ratio_bench.evaluation.scoring.results import SubmissionError, model_fingerprint
from ratio_bench.retrieval.registry import TRAINING_SCHEMA as SUMMARY_SCHEMA
from ratio_bench.retrieval.registry import TRAINING_SUMMARY as SUMMARY
from ratio_bench.retrieval.registry import summary_cutoff

MARKER = "<!-- ratio-model-card:"
CARD_RESULTS = "card-results.json"  # the results last given to the card, so a re-render keeps them
ST_START, ST_END = "<!-- sentence-transformers card: start -->", "<!-- sentence-transformers card: end -->"
# Sections of sentence-transformers' generated card kept in ours (by exact heading title).
ST_SECTIONS = (
    "Model Description",
    "Full Model Architecture",
    "Non-Default Hyperparameters",
    "Framework Versions",
    "Sentence Transformers",
    "MultipleNegativesRankingLoss",
    "CachedMultipleNegativesRankingLoss",
)


class CardError(RatioError, ValueError):
    """A training folder or results file the card cannot be rendered from."""


def load_summary(folder: str | Path) -> dict[str, Any]:
    """The ``summary.json`` of a training output folder (``ratio train --out``), checked for its schema."""
    path = Path(folder) / SUMMARY
    try:
        summary = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise CardError(
            f"{folder}: not a ratio training output (no {SUMMARY}); pass a `ratio train --out` folder"
        ) from None
    except (OSError, json.JSONDecodeError) as e:
        raise CardError(f"{path}: unreadable ({e}); re-run `ratio train`") from e
    if not isinstance(summary, dict) or summary.get("schema") != SUMMARY_SCHEMA:
        raise CardError(f"{path}: not a {SUMMARY_SCHEMA} summary; re-run `ratio train`")
    return summary


def backbone_short(summary: dict[str, Any]) -> str:
    """The backbone's name as shown and used in repository names (a local folder: its last component)."""
    return Path(summary["backbone"]["name"]).name


def model_name(summary: dict[str, Any]) -> str:
    """``ratio-<relation>-<backbone>-<setup>``: the Hub repository name of a tuned model."""
    raw = f"ratio-{summary['relation']}-{backbone_short(summary)}-{summary['setup']}"
    return re.sub(r"[^A-Za-z0-9._-]+", "-", raw)[:96]


def release_terms(summary: dict[str, Any], dataset: str | Path | None = None) -> tuple[str, bool | None]:
    """(licence text, may it be published) from the training release's manifest.

    The manifest is read from ``dataset`` (``--dataset``) or else the release folder training recorded (a
    relative path is relative to where training ran), and trusted only when its hash is the one training
    recorded; otherwise the terms are unknown (None), which publishing treats as a refusal.
    """
    recorded = summary["dataset"]
    release = f"{recorded.get('name')} {recorded.get('version')}"
    where = str(dataset or recorded.get("path") or "")
    try:
        found = Release.open(where)
    except RatioError:
        return f"unknown: the training release ({release}) was not found; pass --dataset DIR", None
    if found.manifest_sha256 != recorded.get("manifest_sha256"):
        return f"unknown: {where} is not the release build this model was trained on ({release})", None
    terms = found.terms
    publish = terms.get("publish")
    return str(terms.get("license") or "unspecified"), (None if publish is None else bool(publish))


def load_results(files: list[Path], summary: dict[str, Any], folder: Path) -> list[Entry]:
    """``ratio score --out`` entries, checked; each must be from the release the model was trained on, and of
    this very model (its weights' fingerprint): another model's scores never go on the card."""
    ours_fp = model_fingerprint(folder / "best")
    entries = []
    for f in files:
        try:
            entry = read_entry(Path(f))
        except SubmissionError as e:
            raise CardError(f"--results {f}: {e}") from None
        ours = (summary["dataset"]["name"], summary["dataset"]["version"])
        theirs = entry.release
        if theirs != ours:
            raise CardError(
                f"--results {f}: scored on {' '.join(theirs)}, but the model was trained on {' '.join(ours)}; "
                "pass results of the training release"
            )
        theirs_fp = entry.model_fingerprint
        if theirs_fp != ours_fp:
            raise CardError(
                f"--results {f}: scored model {entry.model} (fingerprint {(theirs_fp or 'not recorded')[:16]}), "
                f"but this card's model {folder / 'best'} has fingerprint {ours_fp[:16]}; score it with "
                f"`ratio score --model {folder / 'best'} --out FILE` and pass that file"
            )
        entries.append(entry)
    return entries


def stored_results(folder: Path, summary: dict[str, Any]) -> list[Entry]:
    """The results an earlier ``ratio model-card --results`` put on the card (re-checked), or none."""
    path = folder / CARD_RESULTS
    if not path.is_file():
        return []
    try:
        entries = [parse_entry(json.dumps(e).encode()) for e in json.loads(path.read_text(encoding="utf-8"))]
    except (SubmissionError, json.JSONDecodeError, TypeError) as e:
        raise CardError(f"{path}: not a list of result entries ({e}); pass --results FILE again") from None
    return entries


def _table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(" --- " for _ in header) + "|"]
    return "\n".join(lines + ["| " + " | ".join(row) + " |" for row in rows])


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.2f}"


def _code(text: str) -> str:
    """A prompt shown exactly (quotes, escapes and newlines visible) without any Markdown meaning."""
    quoted = json.dumps(text, ensure_ascii=False)
    return markdown_text(quoted) if "`" in quoted else f"`{quoted}`"


def _settings(settings: dict[str, Any]) -> str:
    shown = [(k, v) for k, v in sorted(settings.items()) if k != "rationale" and v is not None]
    return ", ".join(f"{k} {markdown_text(v) if isinstance(v, str) else v}" for k, v in shown) or "-"


def st_details(readme: Path) -> str:
    """The kept sections of sentence-transformers' own card, or of the copy kept in an earlier render of ours."""
    if not readme.is_file():
        return "(sentence-transformers wrote no card for this folder)"
    text = readme.read_text(encoding="utf-8")
    if MARKER in text:
        start, end = text.find(ST_START), text.find(ST_END)
        return text[start + len(ST_START) : end].strip() if 0 <= start < end else "(not recorded)"
    body = text.split("\n---\n", 1)[1] if text.startswith("---\n") and "\n---\n" in text else text
    blocks: list[tuple[str, list[str]]] = []
    fenced = False
    for line in body.splitlines():
        heading = re.match(r"^(#{1,6}) (.+)$", line)
        if heading and not fenced:
            blocks.append((heading.group(2).strip(), []))
        elif blocks and not line.lstrip().startswith("<!--"):
            blocks[-1][1].append(line)
        if line.lstrip().startswith("```"):
            fenced = not fenced
    kept = [
        f"### {'Citation: ' if '```bibtex' in ''.join(lines) else ''}{title}\n\n" + "\n".join(lines).strip()
        for title, lines in blocks
        if title in ST_SECTIONS and "".join(lines).strip()
    ]
    return "\n\n".join(kept) or "(no sections found)"


def _model_index(summary: dict[str, Any], entries: list[Entry], name: str) -> list[dict[str, Any]]:
    """Hub ``model-index``: validation (chosen trial) and each results entry, per relation scored."""
    rel, version = summary["relation"], summary["dataset"]["version"]
    chosen = next(t for t in summary["trials"] if t["trial"] == summary["chosen"]["trial"])
    rows = [(rel, "validation", chosen["best_mrr_at_10"], chosen["best_recall_at_10"])]
    for e in entries:
        rows += [(r, e.split, m["mrr_at_10"], m["recall_at_10"]) for r, m in sorted(e.results.items())]
    results = [
        {
            "task": {"type": "retrieval", "name": "Retrieval"},
            "dataset": {
                "type": f"ratio/{r}",
                "name": f"Ratio {r.capitalize()} ({summary['dataset']['name']} {version}, {split})",
                "split": split,
                "revision": version,
            },
            "metrics": [
                {"type": "mrr_at_10", "value": round(mrr, 6), "name": "MRR@10"},
                {"type": "recall_at_10", "value": round(recall, 6), "name": "Recall@10"},
            ],
        }
        for r, split, mrr, recall in rows
    ]
    return [{"name": name, "results": results}]


@dataclass(frozen=True)
class ModelCard:
    """The fields of the model card template (``model_cards/model_card.md``), one per ``$name`` in it."""

    front_matter: str
    title: str
    relation: str
    relation_title: str
    relation_gloss: str
    backbone: str
    setup: str
    repo_id: str
    prompts: str
    training_info: str
    trials: str
    chosen_trial: str
    chosen_reason: str
    curve: str
    results: str
    max_seq_length: str
    licence: str
    st_details: str
    training_cutoff: str

    def render(self) -> str:
        return fill_card_template("model_card.md", self)


def render_card(
    folder: str | Path,
    results: list[Path] | None = None,
    repo_id: str | None = None,
    dataset: str | Path | None = None,
) -> str:
    """The README.md of ``folder``'s tuned model (``folder`` is a ``ratio train --out`` folder)."""
    folder = Path(folder)
    summary = load_summary(folder)
    entries = load_results(results, summary, folder) if results else stored_results(folder, summary)
    name = model_name(summary)
    rel, setup, backbone = summary["relation"], summary["setup"], backbone_short(summary)
    prompts = summary.get("prompts") or {}
    return ModelCard(
        front_matter=yaml.safe_dump(
            _front_matter(summary, entries, name), sort_keys=False, allow_unicode=True
        ).strip(),
        title=markdown_text(f"{name} - {backbone} {setup}-Tuned for {rel.capitalize()}"),
        relation=rel,
        relation_title=rel.capitalize(),
        relation_gloss=BY_NAME[rel].gloss if rel in BY_NAME else "makes the move",
        backbone=markdown_text(backbone),
        setup=markdown_text(setup),
        repo_id=(repo_id or f"ORG/{name}").replace('"', ""),
        prompts="\n".join(f"- `{k}`: {_code(v)}" for k, v in sorted(prompts.items())) or "- (none)",
        training_info=_training_table(summary),
        trials=_trials_table(summary),
        chosen_trial=str(summary["chosen"]["trial"]),
        chosen_reason=markdown_text(summary["chosen"]["reason"]),
        curve=_curve_table(summary),
        results=_results_section(summary, entries),
        max_seq_length=str(summary["data"]["max_seq_length"]["value"]),
        licence=_licence_section(summary, dataset),
        st_details=f"{ST_START}\n{st_details(folder / 'best' / 'README.md')}\n{ST_END}",
        training_cutoff=markdown_text(summary_cutoff(folder / SUMMARY, summary).text),
    ).render()


def _front_matter(summary: dict[str, Any], entries: list[Entry], name: str) -> dict[str, Any]:
    """The Hub's metadata: library, task, licence, tags and the model-index of the results."""
    rel = summary["relation"]
    return {
        "library_name": "sentence-transformers",
        "pipeline_tag": "sentence-similarity",
        "language": ["en"],
        "license": "other",
        "license_name": "ratio-training-data",
        "tags": [
            "sentence-transformers",
            "feature-extraction",
            "ratio",
            "inspiration-retrieval",
            f"ratio-{rel}",
        ],
        "datasets": [f"ratio/{rel}"],
        "metrics": ["mrr_at_10", "recall_at_10"],
        "model-index": _model_index(summary, entries, name),
    }


def _training_table(summary: dict[str, Any]) -> str:
    """What was trained on what: backbone, release, config, data used, length cut, trials."""
    rel, setup, backbone = summary["relation"], summary["setup"], backbone_short(summary)
    data, ds = summary["data"], summary["dataset"]
    length = data["max_seq_length"]
    return _table(
        ["", "value"],
        [
            ["relation", rel],
            [
                "backbone",
                f"{markdown_text(backbone)} (weights sha256 {summary['backbone']['fingerprint'][:16]}...)",
            ],
            ["prompt setup", markdown_text(setup)],
            ["release", f"{markdown_text(ds['name'])} {markdown_text(ds['version'])}"],
            ["release manifest sha256", f"{ds['manifest_sha256']}"],
            ["code", f"ratio-bench {markdown_text(summary.get('code_version', ''))} (card: {__version__})"],
            [
                "training config",
                f"{markdown_text(Path(summary['config']['file']).name)} (sha256 {summary['config']['sha256'][:16]}...)",
            ],
            [
                "train pairs used / available",
                f"{data['train_pairs_used']:,} / {data['train_pairs_available']:,}",
            ],
            ["hard negatives", markdown_text(str(data["hard_negatives"]))],
            [
                "training max length",
                f"{length['value']} tokens ({length['percentile']}th percentile of {length['texts']:,} texts, "
                f"{length['cut']:,} cut; the model keeps {length['model_max_seq_length']} at inference)",
            ],
            [
                "validation",
                f"{data['validation_queries']:,} queries, {data['validation_candidates']:,} candidates"
                + _smoke(data.get("validation_sample")),
            ],
            ["trials finished / configured", f"{len(summary['trials'])} / {summary['trials_configured']}"],
            *_cutoff_rows(summary),
        ],
    )


def _cutoff_rows(summary: dict[str, Any]) -> list[list[str]]:
    """The two cut-offs a tuned model's own is the later of, each with its source (none in an older summary)."""
    parts = summary.get("training_data_cutoffs")
    if not isinstance(parts, dict):
        return []
    return [
        [
            f"training-data cut-off: {name.replace('_', ' ')}",
            markdown_text(
                f"{part.get('training_data_cutoff') or 'unknown'} ({part.get('training_data_cutoff_source')})"
            ),
        ]
        for name, part in parts.items()
        if isinstance(part, dict)
    ]


def _trials_table(summary: dict[str, Any]) -> str:
    """One row per finished trial, the chosen one in bold."""
    return _table(
        ["trial", "settings", "rationale", "best epoch", "val MRR@10", "val R@10", "pairs/s", "peak RSS MB"],
        [
            [
                f"**{t['trial']}**" if t["trial"] == summary["chosen"]["trial"] else str(t["trial"]),
                _settings(t["settings"]),
                markdown_text(str(t["settings"].get("rationale") or "-")),
                f"{t['best_epoch']:g}",
                _pct(t["best_mrr_at_10"]),
                _pct(t["best_recall_at_10"]),
                f"{t['pairs_per_second']:.1f}",
                f"{t['peak_rss_mb']:,.0f}",
            ]
            for t in summary["trials"]
        ],
    )


def _curve_table(summary: dict[str, Any]) -> str:
    """Validation after each epoch of each trial."""
    return _table(
        ["trial", "epoch", "step", "MRR@10", "R@10"],
        [
            [
                str(t["trial"]),
                f"{e['epoch']:g}",
                str(e["step"]),
                _pct(e["mrr_at_10"]),
                _pct(e["recall_at_10"]),
            ]
            for t in summary["trials"]
            for e in t["epochs"]
        ],
    )


def _smoke(sample: dict[str, int] | None) -> str:
    """The card's word that validation used a sample (a config's ``validation_sample``): a smoke run."""
    if not sample:
        return ""
    pool = f"{sample['candidates']:,} sampled candidates" if "candidates" in sample else "the whole pool"
    return (
        f" (a SAMPLE for a smoke run: {sample['queries']:,} queries per relation, {pool}; "
        "not a model selection to report)"
    )


def _results_section(summary: dict[str, Any], entries: list[Entry]) -> str:
    """The scored results when given, else the chosen trial's validation score and how to add them."""
    rel = summary["relation"]
    if entries:
        results_md = _table(
            ["split", "relation", "queries", "MRR@10", "R@10", "R@1", "MRR@100"],
            [
                [
                    e.split,
                    r + (" (tuned for)" if r == rel else ""),
                    f"{e.queries(r) or 0:,}",
                    *(_pct(m.get(k)) for k in ("mrr_at_10", "recall_at_10", "recall_at_1", "mrr_at_100")),
                ]
                for e in entries
                for r, m in sorted(e.results.items())
            ],
        )
        return f"Scored with `ratio score` (exact search over each split's shared corpus), %:\n\n{results_md}"
    return (
        f"Validation (the chosen trial's best epoch): MRR@10 {_pct(summary['chosen']['mrr_at_10'])} %. "
        "No test results were given; render with `ratio model-card DIR --results FILE` to add them."
    )


def _licence_section(summary: dict[str, Any], dataset: str | Path | None) -> str:
    """The training data's licence and whether its release allows publishing."""
    licence, publishable = release_terms(summary, dataset)
    backbone = backbone_short(summary)
    allowed = {
        True: "allows publishing",
        False: "does **not** allow publishing",
        None: "could not be checked for whether it allows publishing",
    }
    return (
        f"The training data's licence, from the release config: *{markdown_text(licence)}*. The release config "
        f"{allowed[publishable]} (`release.publish`). The model's weights derive from the backbone "
        f"`{markdown_text(backbone)}` (see its own licence) and from this training data, so this model may be used "
        "only as both allow."
    )


def write_card(
    folder: str | Path,
    results: list[Path] | None = None,
    repo_id: str | None = None,
    dataset: str | Path | None = None,
) -> Path:
    """Render the card and write it as ``folder/best/README.md`` (atomically); return its path.

    ``results`` given are kept in ``folder/card-results.json`` (outside ``best/``), so a later render without
    them (after training resumes, or when publishing) keeps them on the card.
    """
    folder = Path(folder)
    load_summary(folder)  # a folder that is not a training output is named as such first
    if not (folder / "best").is_dir():
        raise CardError(f"{folder}: no best/ model folder; finish `ratio train --out {folder}` first")
    text = render_card(folder, results, repo_id, dataset)
    target = folder / "best" / "README.md"
    with atomic_open(target, "w", encoding="utf-8", newline="\n") as fh:
        fh.write(text)
    if results:
        write_json(
            folder / CARD_RESULTS, [e.to_json() for e in load_results(results, load_summary(folder), folder)]
        )
    return target
