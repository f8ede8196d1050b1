"""``ratio models``, ``ratio score`` and ``ratio leaderboard``."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from ratio_bench.lexicon import RELATIONS

TABLE_METRICS = (
    ("recall_at_1", "R@1"),
    ("recall_at_10", "R@10"),
    ("mrr_at_10", "M@10"),
    ("mrr_at_100", "M@100"),
)


def cmd_models(args: argparse.Namespace) -> int:
    from rich.table import Table

    from ratio_bench.io import report_console
    from ratio_bench.retrieval.registry import available

    t = Table(title="Models (NAME[:SETUP] for `ratio score --model`)")
    for col in ("name", "kind", "setups", "weights"):
        t.add_column(col)
    for row in available():
        t.add_row(*row)
    report_console().print(t)
    return 0


def results_table(entries: list[dict], title: str):
    from rich.table import Table

    from ratio_bench.lexicon import RELATIONS

    t = Table(title=title)
    t.add_column("model setup")
    for rel in RELATIONS:
        for _, short in TABLE_METRICS:
            t.add_column(f"{rel[:4].capitalize()} {short}", justify="right")
    for e in entries:
        cells = []
        for rel in RELATIONS:
            m = e["results"].get(rel)
            cells += [f"{100 * m[k]:.1f}" if m else "-" for k, _ in TABLE_METRICS]
        t.add_row(e["model"], *cells)
    return t


def cmd_score(args: argparse.Namespace) -> int:
    from ratio_bench.evaluation.evaluate import load_split, score
    from ratio_bench.evaluation.results import leaderboard_entry, mteb_results
    from ratio_bench.io import report_console, write_json
    from ratio_bench.retrieval.cache import EmbeddingCache
    from ratio_bench.retrieval.registry import resolve

    console = report_console()
    data = load_split(args.dataset, args.split, args.relations)
    cache = EmbeddingCache(args.cache_dir)
    entries = []
    for ref in args.model:
        setup = resolve(ref, args.setup, trust_remote_code=args.trust_remote_code)
        if args.via == "mteb":
            from ratio_bench.evaluation.mteb_tasks import score_with_mteb

            result = score_with_mteb(
                setup,
                args.dataset,
                args.split,
                args.relations,
                batch_size=args.batch_size,
                reuse_embeddings=args.reuse_embeddings,
            )
        else:
            result = score(setup, data, cache=cache, batch_size=args.batch_size)
        entry = leaderboard_entry(result, data.manifest, args.split)
        entries.append(entry)
        console.print(
            f"{setup.name}: {result.seconds:.1f} s, corpus {len(data.corpus_ids):,} candidates, "
            f"encode calls {result.encode_calls}, cache hits {result.cache_hits}"
        )
        if args.out:
            out = (
                args.out
                if len(args.model) == 1
                else args.out.with_name(
                    f"{args.out.stem}-{setup.name.replace(':', '_').replace('/', '_')}{args.out.suffix}"
                )
            )
            write_json(out, entry)
            for task, doc in mteb_results(result, data.manifest, args.split).items():
                write_json(out.with_suffix("") / "mteb" / f"{task}.json", doc)
    console.print(
        results_table(
            entries, f"Ratio {data.manifest['name']} {data.manifest['version']}, split {args.split} (%)"
        )
    )
    return 0


def cmd_leaderboard(args: argparse.Namespace) -> int:
    from ratio_bench.evaluation.results import SubmissionError, validate_submission
    from ratio_bench.io import report_console

    entries, bad = [], []
    for path in sorted(args.results.rglob("*.json")) if args.results.is_dir() else [args.results]:
        if path.parent.name == "mteb":
            continue
        try:
            entry = json.loads(path.read_text(encoding="utf-8"))
            validate_submission(entry)
            entries.append(entry)
        except (json.JSONDecodeError, SubmissionError) as e:
            bad.append(f"{path}: {e}")
    entries.sort(key=lambda e: -sum(m["mrr_at_10"] for m in e["results"].values()) / len(e["results"]))
    console = report_console()
    console.print(results_table(entries, f"Leaderboard ({args.results})"))
    for b in bad:
        console.print(f"[red]rejected[/red] {b}")
    if args.markdown:
        args.markdown.write_text(leaderboard_markdown(entries), encoding="utf-8")
    if args.plot:
        plot_leaderboard(entries, args.plot)
    return 1 if bad and args.strict else 0


def plot_leaderboard(entries: list[dict], path: Path) -> None:
    """MRR@10 per relation for every entry, as grouped bars (PNG)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    from ratio_bench.lexicon import RELATIONS

    fig, ax = plt.subplots(figsize=(max(6, 1.2 * len(entries) + 2), 3.5))
    x = np.arange(len(entries))
    width = 0.8 / len(RELATIONS)
    for i, rel in enumerate(RELATIONS):
        values = [100 * e["results"].get(rel, {}).get("mrr_at_10", 0.0) for e in entries]
        ax.bar(x + (i - 1) * width, values, width, label=rel)
    ax.set_xticks(x, [e["model"] for e in entries], rotation=20, ha="right", fontsize=8)
    ax.set_ylabel("MRR@10 (%)")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def leaderboard_markdown(entries: list[dict]) -> str:
    from ratio_bench.lexicon import RELATIONS

    head = ["model setup", "dataset", "split"] + [f"{r} {s}" for r in RELATIONS for _, s in TABLE_METRICS]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for e in entries:
        cells = [e["model"], f"{e['dataset']['name']} {e['dataset']['version']}", e["split"]]
        for rel in RELATIONS:
            m = e["results"].get(rel)
            cells += [f"{100 * m[k]:.1f}" if m else "-" for k, _ in TABLE_METRICS]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def cmd_analyze(args: argparse.Namespace) -> int:
    from rich.table import Table

    from ratio_bench.evaluation import analyses
    from ratio_bench.evaluation.evaluate import load_split
    from ratio_bench.io import report_console, write_json
    from ratio_bench.retrieval.cache import EmbeddingCache
    from ratio_bench.retrieval.registry import resolve

    console = report_console()
    data = load_split(args.dataset, args.split, args.relations)
    setups = [resolve(m) for m in args.model]
    cache = EmbeddingCache(args.cache_dir)
    if args.analysis == "oracle":
        report, entries = {}, []
        for setup in setups:
            full, oracle = analyses.oracle_filtering(setup, data, cache=cache)
            report[setup.name] = {"shared_pool": full.metrics, "oracle_pool": oracle.metrics}
            entries += [
                {"model": f"{setup.name} shared pool", "results": full.metrics},
                {"model": f"{setup.name} oracle pool", "results": oracle.metrics},
            ]
        console.print(results_table(entries, f"Oracle operation filtering, split {args.split} (%)"))
    else:
        report = analyses.overlap_table(setups, data, k=args.k, cache=cache)
        t = Table(
            title=f"Lexical overlap with the query (Jaccard, stemmed non-stopword tokens), top-{args.k}"
        )
        for col in ("model", "relation", f"top-{args.k}", "gold", "difference", "Spearman(rank, overlap)"):
            t.add_column(col)
        for model, rels in report.items():
            for rel, v in rels.items():
                t.add_row(
                    model,
                    rel,
                    f"{v[f'jaccard_top{args.k}']:.3f}",
                    f"{v['jaccard_gold']:.3f}",
                    f"{v[f'top{args.k}_minus_gold']:+.3f}",
                    f"{v['spearman_rank_overlap']:.2f}",
                )
        console.print(t)
        if args.plot and not analyses.plot_overlap(report, args.plot, args.k):
            console.print("plot skipped: matplotlib is not installed")
    if args.out:
        write_json(args.out, report)
    return 0


def _add_scoring_args(p: argparse.ArgumentParser) -> None:
    """Arguments shared by the commands that score models on a release split."""
    p.add_argument("--model", nargs="+", required=True, help="NAME[:SETUP] (see `ratio models`) or a folder")
    p.add_argument("--dataset", type=Path, default=Path("ratio"), help="release folder (default: ./ratio)")
    p.add_argument("--split", default="test", choices=["train", "validation", "test", "silver"])
    p.add_argument("--relations", nargs="+", default=list(RELATIONS), choices=list(RELATIONS))
    p.add_argument("--cache-dir", type=Path, help="embedding cache (default: ~/.cache/ratio/embeddings)")


def add_evaluation_commands(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("models", help="list the models that can be scored and where their weights are")
    p.set_defaults(func=cmd_models)

    p = sub.add_parser("score", help="score models on a release split (shared corpus, all three relations)")
    _add_scoring_args(p)
    p.add_argument(
        "--setup",
        help="prompt setup, overrides NAME:SETUP (none, generic, recommended; a folder saved with prompts: saved)",
    )
    p.add_argument("--out", type=Path, help="leaderboard JSON to write (MTEB results go next to it)")
    p.add_argument("--via", choices=["ratio", "mteb"], default="ratio", help="run through mteb instead")
    p.add_argument(
        "--reuse-embeddings",
        action="store_true",
        help="with --via mteb: give mteb ratio's cached vectors (checks search and metrics, skips re-encoding)",
    )
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--trust-remote-code", action="store_true", help="allow a model's own code to run")
    p.set_defaults(func=cmd_score)

    p = sub.add_parser("analyze", help="the spec's analyses: oracle operation filtering, lexical overlap")
    p.add_argument("analysis", choices=["oracle", "overlap"])
    _add_scoring_args(p)
    p.add_argument("--k", type=int, default=10, help="top-k for the overlap analysis")
    p.add_argument("--out", type=Path, help="write the table as JSON")
    p.add_argument("--plot", type=Path, help="overlap: write the Figure 4 analogue (PNG)")
    p.set_defaults(func=cmd_analyze)

    p = sub.add_parser("leaderboard", help="validate and render leaderboard results")
    p.add_argument("results", type=Path, nargs="?", default=Path("eval/results"))
    p.add_argument("--markdown", type=Path, help="also write the table as Markdown")
    p.add_argument("--plot", type=Path, help="also plot MRR@10 per relation (PNG)")
    p.add_argument("--strict", action="store_true", help="exit non-zero when a submission is rejected")
    p.set_defaults(func=cmd_leaderboard)
