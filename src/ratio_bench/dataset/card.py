"""The dataset card (README.md of the release), rendered from ``model_cards/dataset_card.md``.

Everything in it is computed from the build (examples, Table 1/6 analogues, markers, routing, sources), and it
carries no timestamp, so rebuilding from the same inputs renders the same bytes.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from ratio_bench import __version__
from ratio_bench.core.relations import RELATIONS
from ratio_bench.core.resources import fill_card_template
from ratio_bench.dataset.assemble import Assembly
from ratio_bench.dataset.config import PARTITIONS, BuildConfig
from ratio_bench.dataset.contract import configs_yaml, dataset_info_yaml
from ratio_bench.lexicon import DISTRACTOR_CATEGORIES


def _table(header: list[str], rows: list[list[Any]]) -> str:
    def fmt(v: Any) -> str:
        return f"{v:,}" if isinstance(v, int) else str(v)

    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(" --- " for _ in header) + "|"]
    lines += ["| " + " | ".join(fmt(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)


def _examples(asm: Assembly, cfg: BuildConfig) -> str:
    out = []
    for rel in RELATIONS:
        row = asm.con.execute(
            f"""SELECT query, marker, gold FROM queries WHERE relation = '{rel}' AND partition = 'test'
                ORDER BY md5('{cfg.seed}:example:' || query_id), query_id LIMIT 1"""
        ).fetchone()
        if row:
            q, marker, g = (x.replace("|", "\\|") for x in row)
            out.append(f'- **{rel.capitalize()}** (marker *"{marker},"*)  \n  query: {q}  \n  gold: {g}')
    return "\n".join(out) or "(no test queries)"


def _sources(cfg: BuildConfig, report: dict[str, Any]) -> str:
    licences: dict[str, Counter[str]] = {}
    for path in sorted({p for c in cfg.corpus for p in (c.glob("*.parquet") if c.is_dir() else [c])}):
        if path.suffix == ".parquet" and "license" in pq.read_schema(path).names:
            values = pq.read_table(path, columns=["license"]).column("license").to_pylist()
            licences[path.name] = Counter(v or "unspecified" for v in values)
    rows = []
    for src, parts in sorted(report["papers_by_source"].items()):
        lic = "; ".join(f"{k}" for k, _ in licences.get(src, Counter()).most_common(2)) or cfg.license
        rows.append([src, *(parts.get(p, 0) for p in (*PARTITIONS, "dropped")), lic])
    return (
        _table(
            ["source file", "train papers", "validation papers", "test papers", "dropped", "licence"], rows
        )
        + f"\n\nRelease licence note: {cfg.license}"
    )


@dataclass(frozen=True)
class DatasetCard:
    """The fields of the dataset card template (``model_cards/dataset_card.md``), one per ``$name`` in it."""

    pretty_name: str
    license_name: str
    version: str
    size_category: str
    configs: str
    examples: str
    repo_hint: str
    table1: str
    table6: str
    markers: str
    split_policy: str
    snapshots: str
    sources: str
    build_info: str

    def render(self) -> str:
        return fill_card_template("dataset_card.md", self)


def render_card(
    asm: Assembly,
    cfg: BuildConfig,
    root: Path,
    counts: dict[str, dict[str, int]],
    mining_stats: dict[str, Any],
    lexicon_sha: str,
    repo_hint: str,
    few: dict[str, int] | None = None,
) -> str:
    rep = asm.report
    return DatasetCard(
        pretty_name=f"Ratio ({cfg.name})",
        license_name=cfg.license.split(" ")[0] or "other",
        version=cfg.version,
        size_category=_size_category(counts),
        configs=configs_yaml(counts) + "\n" + dataset_info_yaml(root, counts),
        examples=_examples(asm, cfg),
        repo_hint=repo_hint,
        table1=_queries_table(rep["partitions"]) + few_queries_note(few),
        table6=_candidates_table(rep["partitions"]),
        markers=_markers_table(mining_stats),
        split_policy=_split_policy(cfg, rep),
        snapshots=snapshots_section(rep.get("snapshots")),
        sources=_sources(cfg, rep),
        build_info=_build_info(cfg, rep, mining_stats, lexicon_sha),
    ).render()


def few_queries_note(few: dict[str, int] | None) -> str:
    """The card's flag on relations whose test figures rest on few queries (wide intervals, unstable ranks)."""
    if not few:
        return ""
    listed = ", ".join(f"{r.capitalize()} {n:,}" for r, n in few.items())
    return (
        f"\n\n**Few test queries**: {listed} (fewer than 100 each). Figures on these relations rest on few "
        "queries: read them with their intervals, and do not rank models on them alone."
    )


def _size_category(counts: dict[str, dict[str, int]]) -> str:
    """The Hub's size bucket of all rows of all configs."""
    total = sum(n for split in counts.values() for n in split.values())
    return "1M<n<10M" if total >= 1_000_000 else "100K<n<1M" if total >= 100_000 else "10K<n<100K"


def _queries_table(parts: dict[str, Any]) -> str:
    """The spec's Table 1: queries per relation and partition, and the shared candidates."""
    return _table(
        ["relation", *(f"{p} queries" for p in PARTITIONS)],
        [[r, *(parts[p]["queries_by_relation"][r] for p in PARTITIONS)] for r in RELATIONS]
        + [["candidates (shared)", *(parts[p]["candidates"] for p in PARTITIONS)]],
    )


def _candidates_table(parts: dict[str, Any]) -> str:
    """The spec's Table 6: the candidate pool of each partition by role."""
    return _table(
        ["", *PARTITIONS],
        [[f"golds: {r}", *(parts[p]["queries_by_relation"][r] for p in PARTITIONS)] for r in RELATIONS]
        + [["distinct gold candidates", *(parts[p]["gold_candidates"] for p in PARTITIONS)]]
        + [
            [
                f"distractors: {c.replace('_', ' ')}",
                *(parts[p]["distractors_by_category"].get(c, 0) for p in PARTITIONS),
            ]
            for c in DISTRACTOR_CATEGORIES
        ]
        + [["all candidates", *(parts[p]["candidates"] for p in PARTITIONS)]],
    )


def _markers_table(mining_stats: dict[str, Any]) -> str:
    """How many markers yielded pairs, and the most productive ones, per relation."""
    kept = mining_stats.get("marker_kept", {})
    return _table(
        ["relation", "markers that yielded pairs", "most productive"],
        [
            [
                r,
                len(kept.get(r, {})),
                ", ".join(f"*{m}* ({n:,})" for m, n in Counter(kept.get(r, {})).most_common(5)),
            ]
            for r in RELATIONS
        ],
    )


def _split_policy(cfg: BuildConfig, rep: dict[str, Any]) -> str:
    """How papers were routed to partitions, de-duplicated and sampled."""
    bounds = "\n".join(f"- **{s.name}**: {s.start or 'open'} to {s.end or 'open'}" for s in cfg.splits)
    routing = _table(
        ["routing reason", *PARTITIONS, "dropped"],
        [
            [reason, *(v.get(p, 0) for p in (*PARTITIONS, "dropped"))]
            for reason, v in sorted(rep["routing"].items())
        ],
    )
    sampling = (
        "; ".join(
            f"{p}: at most {', '.join(f'{r} {n:,}' for r, n in s.max_queries.items() if n is not None) or 'all'} queries, "
            f"{s.distractors_per_gold} distractors per gold"
            for p, s in cfg.sampling.items()
        )
        or "none (full sizes)"
    )
    return (
        f"Papers are routed by publication date; a paper's date is an interval (day, month, year or range).\n\n"
        f"{bounds}\n\nA date inside one partition goes there; one that straddles a boundary is handled by the "
        f"policy `straddle: {cfg.straddle}`; papers without a date: `unknown: {cfg.unknown}`. Copies of one work "
        f"under several sources (same normalised title) stay together in the earliest partition any of them reaches "
        f"({rep['papers_moved_to_keep_same_work_together']:,} papers moved); every row carries that deciding copy's "
        f"interval as `work_date_start`/`work_date_end`. (query, gold) pairs were de-duplicated "
        f"over the whole corpus before partitioning ({rep['pairs_duplicate_removed']:,} duplicates removed, "
        f"{rep['pairs_unplaced_removed']:,} pairs of unplaced papers removed). Mode: `{cfg.mode}`. "
        f"Sampling: {sampling}.\n\nPapers by routing reason:\n\n{routing}"
    )


COMPARABLE = (
    "Every snapshot retrieves from a pool of the same size, so the number of competing candidates (the difficulty "
    "of search) is the same in every period; what still differs between periods is the query mix and sources, the "
    "number of queries (fewer queries, noisier scores) and the distractors per gold, shown per period."
)


def snapshots_section(report: dict[str, Any] | None) -> str:
    """The snapshot splits (one per period of the test partition) and what was left out, with the reason; after
    an append (``report["versions"]``), which version added which splits."""
    if not report:
        return "This release has no snapshot splits (its build config has no `snapshots:` block)."
    held = report.get("withheld") or {}
    rows = [
        [p["period"], f"`{split}`" + (f" (withheld until {held[split]})" if split in held else "")]
        + [
            *(p["queries_by_relation"].get(r, 0) for r in RELATIONS),
            p["candidates"],
            p["distractors_per_gold"],
        ]
        for split, p in report["periods"].items()
    ]
    table = _table(["period", "split", *RELATIONS, "candidates", "distractors per gold"], rows)
    left = "\n".join(
        f"- {x['period']}"
        + (f" {x['relation']}" if x["relation"] else "")
        + f": {x['reason']} ({x['available']:,} available)"
        for x in report["left_out"]
    )
    placement = ", ".join(f"{k.replace('_', ' ')} {v:,}" for k, v in report["pairs_by_placement"].items())
    return (
        f"Besides `test`, each {report['period']} of the test partition is a split of its own (`test_2026_03`, or "
        f"`test_2026q1` for quarters), a self-contained task: at most {_caps(report['max_queries'])} queries per "
        f"relation (seeded sample; a relation with fewer than {report['min_queries']} is left out of that period) "
        f"and a pool of exactly {report['pool_size']:,} candidates (its golds plus that period's distractors). "
        f"Rows are placed by their work's date interval; test pairs by placement: {placement}. {COMPARABLE}\n\n"
        f"{table}{_withheld_note(held)}\n\nLeft out:\n\n{left or '- nothing'}{_versions(report.get('versions'))}"
    )


def _withheld_note(held: dict[str, str]) -> str:
    """What a reader of the card needs to know of the withheld splits: that they exist, and until when."""
    if not held:
        return ""
    names = ", ".join(f"`{s}` (until {d})" for s, d in held.items())
    return (
        f"\n\n**Withheld**: {names}. Its sizes and dates are above; its texts and golds are in custody, scored only "
        "by the leaderboard's workers (aggregate figures, no per-query data) and published into this release as a "
        "new version once the embargo ends (`ratio dataset release-withheld`)."
    )


def _versions(versions: list[dict[str, Any]] | None) -> str:
    """Which version added which snapshots (an append never changes an earlier one)."""
    if not versions:
        return ""
    lines = [
        f"- {v['version']}: {', '.join(f'`{s}`' for s in v['snapshots_added']) or 'none'}"
        + (
            f" (excluded: {', '.join(f'{k} {n:,}' for k, n in v['excluded'].items() if n)})"
            if v.get("excluded")
            else ""
        )
        for v in versions
    ]
    return "\n\nVersions (an append adds periods and never changes an earlier snapshot):\n\n" + "\n".join(
        lines
    )


def _caps(caps: dict[str, int | None]) -> str:
    return ", ".join(f"{r} {'all' if n is None else f'{n:,}'}" for r, n in caps.items())


def _build_info(cfg: BuildConfig, rep: dict[str, Any], mining_stats: dict[str, Any], lexicon_sha: str) -> str:
    """What built the release: config, lexicon, code, seed."""
    return _table(
        ["", "value"],
        [
            ["release", f"{cfg.name} {cfg.version}"],
            ["build config", cfg.path.name],
            ["lexicon", f"{mining_stats.get('lexicon_version')} (sha256 {lexicon_sha[:16]}...)"],
            ["code", f"ratio-bench {__version__}"],
            ["seed", cfg.seed],
            ["pairs mined (before de-duplication)", rep["pairs_mined"]],
        ],
    )


def updated_card(
    old: str, counts: dict[str, dict[str, int]], stage: Path, snapshots: dict[str, Any], version: str
) -> str:
    """The card with its YAML header's configs and sizes, its version and its Snapshots section brought up to date
    (the rest describes the build and stays as it was)."""
    head_end = old.index("\n---\n", 4)
    configs_at = old.index("\nconfigs:\n")
    header = old[: configs_at + 1] + configs_yaml(counts) + "\n" + dataset_info_yaml(stage, counts)
    body = old[head_end:]
    start = body.index("## Snapshots\n\n") + len("## Snapshots\n\n")
    end = body.find("\n## ", start)
    body = body[:start] + snapshots + "\n" + body[end:]
    title_at = body.index("\n# ")
    title_end = body.index("\n", title_at + 1)
    title = body[title_at:title_end]
    body = body[:title_at] + title[: title.rindex("(")] + f"({version})" + body[title_end:]
    return header + body


def snapshot_report(root: Path, manifest: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    """The card's snapshot report over every version: the build's pair placement, every period and left-out."""
    periods = {
        split: {
            "period": s["period"],
            "queries_by_relation": s["queries"],
            "candidates": s["candidates"],
            "distractors_per_gold": round((s["candidates"] - s["golds"]) / s["golds"], 2),
        }
        for split, s in {**manifest["snapshots"], **(manifest.get("withheld") or {})}.items()
    }
    periods = dict(sorted(periods.items(), key=lambda kv: kv[1]["period"]))
    try:
        build = json.loads((root / "reports" / "assembly.json").read_text(encoding="utf-8"))["snapshots"]
        placement = dict(build["pairs_by_placement"])
    except (OSError, ValueError, KeyError, TypeError):
        placement = {}
    return new | {
        "pairs_by_placement": placement,
        "periods": periods,
        "left_out": manifest["snapshots_left_out"],
        "versions": manifest.get("versions"),
        "withheld": {s: r["embargo_until"] for s, r in (manifest.get("withheld") or {}).items()},
    }
