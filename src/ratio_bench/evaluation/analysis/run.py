"""``ratio analyze``'s work: oracle operation filtering, lexical overlap, mined-role precision, move sensitivity
and drift over the test snapshots, each printed as tables and written as JSON (``--out``); the CLI only parses its arguments."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.table import Table

from ratio_bench.core.errors import RatioError, UsageError
from ratio_bench.core.io import atomic_open, report_console, write_json
from ratio_bench.core.relations import RELATIONS
from ratio_bench.dataset.release import Release
from ratio_bench.evaluation.analysis import analyses, drift, move_sensitivity
from ratio_bench.evaluation.analysis.typed_hits import PrecisionCell
from ratio_bench.evaluation.board import leaderboard as lb
from ratio_bench.evaluation.board.escaping import terminal_text
from ratio_bench.evaluation.board.render.output import results_table
from ratio_bench.evaluation.entry.record import Scored
from ratio_bench.evaluation.scoring.defaults import DRIFT_RESULTS
from ratio_bench.evaluation.scoring.evaluate import TOP_K, load_split
from ratio_bench.evaluation.scoring.uncertainty import DEFAULT
from ratio_bench.retrieval.cache import EmbeddingCache
from ratio_bench.retrieval.registry import resolve

if TYPE_CHECKING:
    from rich.console import Console


def run_analysis(args: Any) -> int:
    """``ratio analyze``: oracle filtering, lexical overlap, move sensitivity or drift, printed and written."""

    console = report_console()
    _check_analysis_args(args)
    if args.out:
        _check_analysis_out(args.out, args.analysis)
    if args.analysis == "drift":
        return _drift(args, console)
    data = load_split(args.dataset, args.split, args.relations)
    cache = EmbeddingCache(args.cache_dir)
    if args.analysis == "move-sensitivity":
        return _move_sensitivity(args, data, cache, console)
    setups = [resolve(m) for m in args.model]
    if args.analysis == "oracle":
        report, entries = {}, []
        for setup in setups:
            full, oracle = analyses.oracle_filtering(setup, data, cache=cache)
            report[setup.name] = {"shared_pool": full.metrics, "oracle_pool": oracle.metrics}
            entries += [
                Scored(f"{setup.name} shared pool", full.metrics),
                Scored(f"{setup.name} oracle pool", oracle.metrics),
            ]
        console.print(results_table(entries, f"Oracle operation filtering, split {args.split} (%)"))
    elif args.analysis == "mined-role":
        cells = analyses.mined_role_table(setups, data, k=args.k, cache=cache)
        console.print(_mined_role_table(cells, args.k, args.split))
        report = {model: {c.move: c.to_json() for c in row} for model, row in cells.items()}
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
        write_json(args.out, {ANALYSIS_KEY: args.analysis, **report})
    return 0


def _mined_role_table(cells: dict[str, list[PrecisionCell]], k: int, split: str):
    """Mined-role precision@k per model and relation, with its interval and the queries it averages."""

    t = Table(
        title=f"Mined-role precision@{k}, split {split}: share of the top {k} mined as the requested move (%)",
        caption=DEFAULT.note,
    )
    for col in ("model", "relation", f"P@{k}", "95% CI", "queries"):
        t.add_column(col)
    for model, row in cells.items():
        for c in row:
            t.add_row(
                model,
                c.move,
                f"{100 * c.precision:.1f}",
                f"{100 * c.low:.1f}-{100 * c.high:.1f}",
                f"{c.queries:,}",
            )
    return t


def _check_analysis_args(args: Any) -> None:
    """Drift reads scored entries (``--results``) over every snapshot; the others score ``--model`` on a
    ``--split`` (default test). Each refuses the other's flags rather than ignoring them."""
    if args.analysis == "drift":
        for flag, given in (("--model", args.model), ("--split", args.split)):
            if given:
                raise UsageError(
                    f"{flag}: `ratio analyze drift` reads the entries under --results on every test snapshot; "
                    f"drop {flag}"
                )
        args.results = args.results or DRIFT_RESULTS
        return
    if not args.model:
        raise UsageError(f"--model: `ratio analyze {args.analysis}` needs the models to analyse")

    if args.analysis in ("overlap", "mined-role") and not 1 <= args.k <= TOP_K:
        raise UsageError(f"--k {args.k}: the runs keep the top {TOP_K}; choose 1 to {TOP_K}")
    if args.results:
        raise UsageError(f"--results: only `ratio analyze drift` reads entries; drop it for {args.analysis}")
    args.split = args.split or "test"


def _drift(args: Any, console: Console) -> int:
    """``ratio analyze drift``: one table per relation, the source mix beneath it, the settings under both."""

    release = Release.open(args.dataset)
    try:  # errors about the entries lead with --results (see ratio_bench.cli.with_option)
        board = lb.load_board(args.results)
    except lb.LeaderboardError as e:
        raise lb.LeaderboardError(str(e), value=args.results) from None
    try:
        report = drift.analyze(release, board, tuple(args.relations))
    except drift.DriftError as e:
        raise drift.DriftError(f"{args.results}: {e}", value=args.results) from None
    for rel in dict.fromkeys(r.relation for r in report.rows):
        console.print(drift.trend_table(report, rel))
        console.print(drift.source_table(report, rel))
    console.print(terminal_text(report.settings.note))
    for s in report.skipped:
        where = f"{s.split}{' ' + s.relation if s.relation else ''}"
        console.print(f"[yellow]skipped[/yellow] {terminal_text(f'{s.model} {where}: {s.reason}')}")
    for r in report.rejected:
        console.print(f"[red]rejected[/red] {terminal_text(r.source)}: {terminal_text(r.reason)}")
    if args.plot:
        with atomic_open(args.plot, "wb") as fh:
            fh.write(drift.plot_png(report))
    if args.out:
        write_json(args.out, {ANALYSIS_KEY: args.analysis, **report.to_json()})
    return 0


ANALYSIS_KEY = "ratio_analysis"  # marks a report ``analyze --out`` wrote, the only JSON it may replace


def _check_analysis_out(out: Path, analysis: str) -> None:
    """Refuse, before any work, an ``--out`` (or the Markdown beside it) that holds something of the user's."""

    ours = False
    if out.is_file():
        try:
            ours = json.loads(out.read_bytes()).get(ANALYSIS_KEY) == analysis
        except (OSError, ValueError, AttributeError):
            ours = False
    markdown = out.with_suffix(".md") if analysis == "move-sensitivity" else None
    for path in (out, markdown):
        if path is not None and (path.exists() or path.is_symlink()) and not ours:
            raise RatioError(
                f"--out {out}: {path.name} exists and is not a report of `ratio analyze {analysis}`; nothing was "
                "overwritten. Choose another path, or remove that file yourself"
            )


def _move_sensitivity(args: Any, data, cache, console) -> int:
    """One unified model (``--model M``) or a specialist trio (``--model address=A broaden=B specify=C``)."""

    named = dict(m.split("=", 1) for m in args.model if "=" in m and m.split("=", 1)[0] in RELATIONS)
    if len(args.model) == 1 and not named:
        setups = dict.fromkeys(args.relations, resolve(args.model[0]))
        title = setups[args.relations[0]].name
    elif set(named) == set(args.relations) and len(named) == len(args.model):
        setups = {rel: resolve(named[rel]) for rel in args.relations}
        title = "specialists " + ", ".join(f"{r}={s.name}" for r, s in setups.items())
    else:
        raise UsageError(
            "--model: one unified model, or one specialist per relation as "
            + " ".join(f"{r}=MODEL" for r in args.relations)
        )
    if any(s.kind == "bm25" for s in setups.values()):
        raise UsageError(
            "--model: move sensitivity needs dense or hybrid models (BM25 has no move to follow)"
        )
    report = move_sensitivity.measure(data, move_sensitivity.model_scorers(setups, data, cache))
    report["model"], report["split"] = title, args.split
    text = move_sensitivity.markdown(report, f"{title}, split {args.split}")
    console.print(text)
    if args.out:
        write_json(args.out, {ANALYSIS_KEY: args.analysis, **report})
        with atomic_open(args.out.with_suffix(".md")) as fh:
            fh.write(text)
    return 0
