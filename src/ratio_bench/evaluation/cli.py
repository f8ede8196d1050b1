"""``ratio models``, ``ratio score``, ``ratio analyze`` and ``ratio leaderboard`` (rendering: ``leaderboard``)."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

from ratio_bench.evaluation.results import TABLE_METRICS, entry_label
from ratio_bench.lexicon import RELATIONS


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
    from rich.markup import escape
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
        t.add_row(escape(entry_label(e)), *cells)
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
        entry = leaderboard_entry(result, data.manifest, args.split, setup.tuned_for)
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
                    f"{args.out.stem}-{re.sub(r'[^A-Za-z0-9._-]+', '_', setup.name)}{args.out.suffix}"
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
    from ratio_bench.evaluation import leaderboard as lb
    from ratio_bench.io import atomic_open, report_console

    board = lb.load_board(args.results)
    console = report_console()
    for release in board.releases:
        rows = [
            {"model": f"{entry_label(e)} ({e['split']})", "results": e["results"]} for e in release.entries
        ]
        console.print(results_table(rows, lb.terminal_text(f"Leaderboard {release.title} (%)")))
    for r in board.rejected:
        console.print(f"[red]rejected[/red] {lb.terminal_text(r.source)}: {lb.terminal_text(r.reason)}")
    console.print(board.summary)
    if args.markdown:
        with atomic_open(args.markdown, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(lb.leaderboard_markdown(board))
    if args.plot:
        with atomic_open(args.plot, "wb") as fh:
            fh.write(lb.plot_png(board))
    if args.html:
        with atomic_open(args.html, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(lb.leaderboard_html(board))
    if board.rejected and args.strict:
        raise lb.LeaderboardError(
            f"--strict: {len(board.rejected)} result file(s) under {args.results} rejected (listed above); "
            "fix or remove them"
        )
    return 0


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

    p = sub.add_parser("leaderboard", help="validate and render leaderboard results, one table per release")
    p.add_argument(
        "results", type=Path, nargs="?", default=Path("eval/results"), help="folder of entries (or one file)"
    )
    p.add_argument("--markdown", type=Path, help="also write the tables as Markdown")
    p.add_argument("--plot", type=Path, help="also plot MRR@10 per relation (PNG)")
    p.add_argument("--html", type=Path, help="also write a self-contained HTML page (sortable, filterable)")
    p.add_argument("--strict", action="store_true", help="exit 1 when a result file is rejected")
    p.set_defaults(func=cmd_leaderboard)
