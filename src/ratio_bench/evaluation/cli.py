"""``ratio models``, ``ratio score``, ``ratio analyze`` and ``ratio leaderboard`` (rendering: ``board_*``)."""

from __future__ import annotations

import argparse
import datetime as dt
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from ratio_bench.core import cutoffs
from ratio_bench.core.errors import UsageError
from ratio_bench.core.relations import RELATIONS
from ratio_bench.evaluation.board_plots import PLOT_TOP
from ratio_bench.evaluation.entry import Scored

if TYPE_CHECKING:  # annotations only: the CLI imports its heavy modules inside the commands
    from rich.console import Console

    from ratio_bench.evaluation.evaluate import ScoreResult, SplitData
    from ratio_bench.evaluation.leaderboard import Board
    from ratio_bench.evaluation.pool import JudgedPool
    from ratio_bench.retrieval.cache import EmbeddingCache
    from ratio_bench.retrieval.registry import ModelSetup


def cmd_models(args: argparse.Namespace) -> int:
    import dataclasses
    import json

    from rich.markup import escape
    from rich.table import Table

    from ratio_bench.core.io import report_console
    from ratio_bench.retrieval.registry import available

    rows = available()
    if args.json:
        print(json.dumps([dataclasses.asdict(r) for r in rows], indent=2))
        return 0
    t = Table(title="Models (NAME[:SETUP] for `ratio score --model`)")
    for col in ("name", "kind", "setups", "move-aware", "weights"):
        t.add_column(col)
    for r in rows:
        aware = "yes" if r.move_aware else "no: ranks every move alike"
        t.add_row(escape(r.name), r.kind, ", ".join(r.setups), aware, escape(r.where))
    report_console().print(t)
    return 0


def results_table(entries: list[Scored], title: str):
    """Entries' figures (%), each with its bootstrap interval beneath it when the entry has per-query data
    (computed here, at display time, from the entry's gold ranks), the bootstrap's settings as the caption. A
    relation's columns are the board view's (its ``n``, then its figures), as on the board."""
    from rich.markup import escape
    from rich.table import Table

    from ratio_bench.core.relations import RELATIONS
    from ratio_bench.evaluation.board_cells import interval_note
    from ratio_bench.evaluation.board_ranks import Rank
    from ratio_bench.evaluation.board_terminal import terminal_figure
    from ratio_bench.evaluation.board_view import Row, figure_columns

    bare = [e.label for e in entries if not e.per_query]
    caption = "" if len(bare) == len(entries) else interval_note()
    if bare and caption:
        caption += f" No per-query data (no interval): {', '.join(bare)}."
    t = Table(title=title, caption=escape(caption) or None)
    t.add_column("model setup")
    shown = [c for rel in RELATIONS for c in figure_columns(rel, short=True)]
    for c in shown:
        t.add_column(f"{(c.relation or '')[:4].capitalize()} {c.header}", justify="right")
    for i, e in enumerate(entries, 1):
        row = Row(Rank(i), e)  # a figure column reads only what a scoring run's Scored has too
        t.add_row(escape(e.label), *(terminal_figure(c.text(row)) for c in shown))
    return t


def _per_model_path(path: Path, model: str, n_models: int) -> Path:
    """``path`` itself for one model; ``<stem>-<model><suffix>`` beside it when several are scored."""
    if n_models == 1:
        return path
    return path.with_name(f"{path.stem}-{model.replace(':', '_').replace('/', '_')}{path.suffix}")


def _results_paths(out: Path | None, models: list[str]) -> list[Path]:
    """The leaderboard entries and MTEB task results ``--out`` writes for ``models``."""
    from ratio_bench.evaluation.results import TASK_NAMES

    paths = []
    for model in models if out else []:
        entry = _per_model_path(out, model, len(models))
        paths += [entry, *(entry.with_suffix("") / "mteb" / f"{t}.json" for t in TASK_NAMES.values())]
    return paths


SNAPSHOTS = "snapshots"  # --split snapshots: every test snapshot of the release, one entry per split


def cmd_score(args: argparse.Namespace) -> int:
    """One split, or (``--split snapshots``) each of the release's snapshots in time order, with ``--out`` a
    folder that gets ``<split>.json`` per snapshot (``<split>-<model>.json`` for several models)."""
    if args.split != SNAPSHOTS:
        return _score_split(args)
    from ratio_bench.dataset.release import Release
    from ratio_bench.evaluation.results import check_results_path
    from ratio_bench.retrieval.registry import resolve

    splits = list(Release.open(args.dataset).snapshots)
    if not splits:
        raise UsageError(
            f"--split snapshots: {args.dataset} has no test snapshots; build it with a `snapshots:` block in its "
            "config (README: Snapshots)"
        )
    if args.out is not None and (
        args.out.is_file() or (not args.out.is_dir() and args.out.suffix == ".json")
    ):
        raise UsageError(f"--out {args.out}: with --split snapshots, give a folder (one entry per snapshot)")
    runs = [
        argparse.Namespace(**{**vars(args), "split": split, "out": args.out and args.out / f"{split}.json"})
        for split in splits
    ]
    names = [resolve(ref, args.setup, trust_remote_code=args.trust_remote_code).name for ref in args.model]
    for run in runs:  # every path checked before minutes of scoring
        for out in _results_paths(run.out, names):
            check_results_path(out)
    for run in runs:
        _score_split(run)
    return 0


def _score_split(args: argparse.Namespace) -> int:
    from ratio_bench.core.io import report_console, write_json
    from ratio_bench.evaluation.evaluate import load_split, sample_queries
    from ratio_bench.evaluation.results import (
        check_results_path,
        check_submitter,
        leaderboard_entry,
        model_identity,
        mteb_results,
    )
    from ratio_bench.retrieval.cache import EmbeddingCache
    from ratio_bench.retrieval.registry import resolve

    console = report_console()
    if args.save_run and args.via == "mteb":
        raise UsageError("--save-run: runs are saved by the ratio path; drop --via mteb")
    if args.qrels != "mined" and args.via == "mteb":
        raise UsageError(f"--qrels {args.qrels}: judged scores come from the ratio path; drop --via mteb")
    check_submitter(args.submitter)
    if args.sample is not None and (args.sample < 1 or args.via == "mteb"):
        raise UsageError(
            f"--sample {args.sample}: give a positive number of queries per relation"
            if args.sample < 1
            else "--sample: a sample is scored by the ratio path; drop --via mteb"
        )
    stated = _stated_cutoff(args)
    setups = [resolve(ref, args.setup, trust_remote_code=args.trust_remote_code) for ref in args.model]
    if stated is not None:
        setups = [replace(s, cutoff=cutoffs.stated(stated, SCORER, s.cutoff)) for s in setups]
    for out in _results_paths(args.out, [setup.name for setup in setups]):
        check_results_path(out)  # before minutes of scoring: nothing of the user's is overwritten
    data = load_split(args.dataset, args.split, args.relations)
    sample = None
    if args.sample is not None:
        data = sample_queries(data, args.sample, args.seed)
        sample = {"queries_per_relation": args.sample, "seed": args.seed}
    pool = _judged_pool(args, data.manifest) if args.via == "ratio" else None
    cache = EmbeddingCache(args.cache_dir)
    entries = []
    for setup in setups:
        if args.via == "mteb":
            from ratio_bench.evaluation.mteb_tasks import score_with_mteb

            result = score_with_mteb(
                setup,
                args.dataset,
                args.split,
                args.relations,
                batch_size=args.batch_size,
                reuse_embeddings=args.reuse_embeddings,
                cache=cache,
            )
            entry = leaderboard_entry(
                result,
                data.manifest,
                args.split,
                setup.tuned_for,
                identity=model_identity(setup),
                submitter=args.submitter,
                cutoff=setup.cutoff,
                candidates=len(data.corpus_ids),
            )
        else:
            result, entry = score_entry(
                setup,
                data,
                args.split,
                cache=cache,
                batch_size=args.batch_size,
                keep_runs=bool(args.save_run),
                pool=pool,
                qrels=args.qrels,
                submitter=args.submitter,
                sample=sample,
            )
        if args.save_run:
            from ratio_bench.evaluation.runs import save_run

            run_dir = _per_model_path(args.save_run, setup.name, len(args.model))
            save_run(result, data.manifest, args.split, run_dir)
            console.print(f"{setup.name}: run saved to {run_dir}")
        entries.append(entry)
        encoded = (
            "encoded by mteb (no embedding cache)"
            if args.via == "mteb" and not args.reuse_embeddings
            else f"encode calls {result.encode_calls}, cache hits {result.cache_hits}"
        )
        console.print(
            f"{setup.name}: {result.seconds:.1f} s, corpus {len(data.corpus_ids):,} candidates, {encoded}"
        )
        if args.out:
            out = _per_model_path(args.out, setup.name, len(args.model))
            docs = {
                out.with_suffix("") / "mteb" / f"{task}.json": doc
                for task, doc in mteb_results(result, data.manifest, args.split).items()
            }
            for path in (out, *docs):
                check_results_path(path)
            write_json(out, entry)
            for path, doc in docs.items():
                write_json(path, doc)
            console.print(
                f"{setup.name}: wrote {out} (and {len(docs)} MTEB result files in {out.with_suffix('') / 'mteb'})"
            )
    console.print(
        results_table(
            [Scored.of_document(e) for e in entries],
            f"Ratio {data.manifest['name']} {data.manifest['version']}, split {args.split}, mined gold (%)"
            + (sample_title(args.sample, args.seed, data.queries) if sample else ""),
        )
    )
    return 0


def sample_title(n: int, seed: int, queries: dict) -> str:
    """The table title's word on a sample: ``n`` per relation, and the true count of a relation that has fewer
    (``--sample 200`` on a 33-query relation scores 33, and says so)."""
    short = [f"{rel}: only {len(q.ids)}" for rel, q in queries.items() if len(q.ids) < n]
    fewer = f" ({', '.join(short)})" if short else ""
    return f", SAMPLE of {n} queries per relation{fewer} (seed {seed}; not a full result)"


SCORER = "stated by the scorer (ratio score --training-cutoff)"


def _stated_cutoff(args: argparse.Namespace) -> dt.date | None:
    """The cut-off the scorer states (``--training-cutoff``), checked before any model is resolved; it replaces
    what a registry entry or training summary says, and the entry's source records both."""
    if args.training_cutoff is None:
        return None
    day = cutoffs.parse_date(args.training_cutoff, "--training-cutoff")
    if len(args.model) > 1:
        raise UsageError("--training-cutoff: it states one model's cut-off; score the models one at a time")
    return day


def score_entry(
    setup: ModelSetup,
    data: SplitData,
    split: str,
    *,
    cache: EmbeddingCache | None = None,
    batch_size: int = 64,
    keep_runs: bool = False,
    pool: JudgedPool | None = None,
    qrels: str = "mined",
    submitter: str | None = None,
    sample: dict[str, int] | None = None,
) -> tuple[ScoreResult, dict]:
    """Score one setup the ratio way and make its leaderboard entry (with the pool's judged figures when there
    is a pool): what `ratio score` runs and the leaderboard worker runs, so both measure the same way."""
    from ratio_bench.core.io import report_console
    from ratio_bench.evaluation.evaluate import score
    from ratio_bench.evaluation.results import leaderboard_entry, model_identity

    result = score(setup, data, cache=cache, batch_size=batch_size, keep_runs=keep_runs or pool is not None)
    judged = _judged_scores(result, data, pool, qrels, report_console()) if pool is not None else None
    identity = model_identity(setup)
    return result, leaderboard_entry(
        result,
        data.manifest,
        split,
        setup.tuned_for,
        judged,
        sample,
        identity=identity,
        submitter=submitter,
        cutoff=setup.cutoff,
        candidates=len(data.corpus_ids),
    )


def _judged_pool(args: argparse.Namespace, manifest: dict):
    """The judged pool to score against or report coverage of; None when there is none and none is asked."""
    from ratio_bench.evaluation.pool import POOL_MANIFEST, JudgedPool, default_pool_dir

    path = args.pool or default_pool_dir(args.dataset)
    if args.qrels == "mined" and not (path / POOL_MANIFEST).exists():
        if args.pool:
            raise UsageError(f"--pool {args.pool}: no judged pool there ({POOL_MANIFEST} missing)")
        return None
    if not (path / POOL_MANIFEST).exists():
        raise UsageError(
            f"--qrels {args.qrels}: no judged pool at {path}; run `ratio judge candidates` or give --pool DIR"
        )
    return JudgedPool(path, manifest)


def _judged_scores(
    result: ScoreResult, data: SplitData, pool: JudgedPool, qrels: str, console: Console
) -> dict | None:
    """The run's judged figures per relation (for its leaderboard entry), printed: judged@10 coverage, and with
    judged qrels that agreement's metrics on the judged queries."""
    from ratio_bench.evaluation.metrics import SET_METRICS
    from ratio_bench.evaluation.pool import judged_scores

    judged, cover = {}, []
    for rel, (qids, _, golds) in data.queries.items():
        block = (
            judged_scores(pool, rel, result.runs[rel], dict(zip(qids, golds, strict=True))) if qids else None
        )
        if block is None:
            continue
        judged[rel] = block
        coverage = f"judged@10 {100 * block['coverage_at_10']:.1f}% of {block['queries']} judged queries"
        cover.append(f"{rel} {coverage}")
        if qrels != "mined":
            m = block[qrels.removeprefix("judged-")]
            console.print(
                f"{result.model} {rel} ({qrels}): "
                + " ".join(f"{short}@10 {100 * m[f'{name}_at_10']:.1f}" for name, short in SET_METRICS)
                + f" | {coverage}"
            )
    if cover:
        console.print(f"{result.model}: coverage of the judged pool {pool.path}: {', '.join(cover)}")
    elif qrels != "mined":
        console.print(
            f"{result.model} ({qrels}): the pool {pool.path} has judged none of these queries (it was sampled "
            "from another split or other relations); only mined-gold results"
        )
    return judged or None


def cmd_leaderboard(args: argparse.Namespace) -> int:
    from ratio_bench.evaluation.leaderboard import load_board

    return render_board(load_board(args.results), args, str(args.results))


def render_board(
    board: Board, args: argparse.Namespace, source: str, markdown_extra: str = "", html_extra: str = ""
) -> int:
    """Print ``board`` and write its ``--markdown``/``--plot``/``--html`` (``*_extra``: sections appended, such as
    the leaderboard service's queue); ``source`` names where the entries came from."""
    from ratio_bench.core.io import atomic_open, report_console
    from ratio_bench.evaluation.board_cells import bare_note
    from ratio_bench.evaluation.board_html import leaderboard_html
    from ratio_bench.evaluation.board_markdown import clean_markdown, leaderboard_markdown
    from ratio_bench.evaluation.board_plots import NO_SNAPSHOTS, plot_png, snapshot_entries, trend_png
    from ratio_bench.evaluation.board_ranks import TIE_NOTE
    from ratio_bench.evaluation.board_terminal import (
        terminal_clean_table,
        terminal_relation_tables,
        terminal_release_table,
    )
    from ratio_bench.evaluation.escaping import terminal_text
    from ratio_bench.evaluation.leaderboard import LeaderboardError, has_snapshots

    console = report_console()
    if args.trend and not any(snapshot_entries(r) for r in board.releases):
        raise LeaderboardError(f"--trend {args.trend}: {source} has {NO_SNAPSHOTS}")
    clean_only = getattr(args, "clean_only", False)
    for release in board.releases if clean_only else ():
        console.print(terminal_clean_table(release))
    for release in () if clean_only else board.releases:
        console.print(terminal_release_table(release))
        for table in terminal_relation_tables(release):
            console.print(table)
        if bare_note(release):
            console.print(terminal_text(bare_note(release)))
    if board.releases:
        console.print(terminal_text(TIE_NOTE))
    if clean_only or has_snapshots(board):
        console.print(terminal_text(cutoffs.LEGEND))
    for r in board.rejected:
        console.print(f"[red]rejected[/red] {terminal_text(r.source)}: {terminal_text(r.reason)}")
    console.print(board.summary)
    if args.plot_top < 1:
        raise UsageError(f"--plot-top {args.plot_top}: give at least 1 bar per panel")
    if args.markdown:
        with atomic_open(args.markdown, "w", encoding="utf-8", newline="\n") as fh:
            fh.write((clean_markdown(board) if clean_only else leaderboard_markdown(board)) + markdown_extra)
    if args.plot:
        with atomic_open(args.plot, "wb") as fh:
            fh.write(plot_png(board, args.plot_top))
    if args.html:
        with atomic_open(args.html, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(leaderboard_html(board, extra=html_extra, clean_only=clean_only))
    if args.trend:
        with atomic_open(args.trend, "wb") as fh:
            fh.write(trend_png(board, tuple(args.highlight or ())))
    if board.rejected and args.strict:
        raise LeaderboardError(
            f"--strict: {len(board.rejected)} result file(s) under {source} rejected (listed above); "
            "fix or remove them"
        )
    return 0


def cmd_analyze(args: argparse.Namespace) -> int:
    from rich.table import Table

    from ratio_bench.core.io import report_console, write_json
    from ratio_bench.evaluation import analyses
    from ratio_bench.evaluation.evaluate import load_split
    from ratio_bench.retrieval.cache import EmbeddingCache
    from ratio_bench.retrieval.registry import resolve

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


DRIFT_RESULTS = Path("eval/results/snapshots")  # where `ratio score --split snapshots --out` is told to write


def _check_analysis_args(args: argparse.Namespace) -> None:
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
    if args.results:
        raise UsageError(f"--results: only `ratio analyze drift` reads entries; drop it for {args.analysis}")
    args.split = args.split or "test"


def _drift(args: argparse.Namespace, console: Console) -> int:
    """``ratio analyze drift``: one table per relation, the source mix beneath it, the settings under both."""
    from ratio_bench.core.io import atomic_open, write_json
    from ratio_bench.dataset.release import Release
    from ratio_bench.evaluation import drift
    from ratio_bench.evaluation import leaderboard as lb
    from ratio_bench.evaluation.escaping import terminal_text

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
    import json

    from ratio_bench.core.errors import RatioError

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


def _move_sensitivity(args: argparse.Namespace, data, cache, console) -> int:
    """One unified model (``--model M``) or a specialist trio (``--model address=A broaden=B specify=C``)."""
    from ratio_bench.core.errors import UsageError
    from ratio_bench.core.io import atomic_open, write_json
    from ratio_bench.evaluation import move_sensitivity
    from ratio_bench.retrieval.registry import resolve
    from ratio_bench.retrieval.retriever import embeds

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
    if not all(embeds(s.kind) for s in setups.values()):
        raise UsageError("--model: move sensitivity needs dense models (BM25 has no move to follow)")
    report = move_sensitivity.measure(data, move_sensitivity.model_vectors(setups, data, cache))
    report["model"], report["split"] = title, args.split
    text = move_sensitivity.markdown(report, f"{title}, split {args.split}")
    console.print(text)
    if args.out:
        write_json(args.out, {ANALYSIS_KEY: args.analysis, **report})
        with atomic_open(args.out.with_suffix(".md")) as fh:
            fh.write(text)
    return 0


def _add_scoring_args(p: argparse.ArgumentParser, models_required: bool = True) -> None:
    """Arguments shared by the commands that score models on a release split."""
    p.add_argument(
        "--model", nargs="+", required=models_required, help="NAME[:SETUP] (see `ratio models`) or a folder"
    )
    p.add_argument("--dataset", type=Path, default=Path("ratio"), help="release folder (default: ./ratio)")
    p.add_argument(
        "--split",
        default="test",
        help="train, validation, test, silver, one of the release's snapshots (e.g. test_2026_03), or snapshots: "
        "each of them, --out a folder (default: test)",
    )
    p.add_argument("--relations", nargs="+", default=list(RELATIONS), choices=list(RELATIONS))
    p.add_argument("--cache-dir", type=Path, help="embedding cache (default: ~/.cache/ratio/embeddings)")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("models", help="list the models that can be scored and where their weights are")
    p.add_argument(
        "--json",
        action="store_true",
        help="one object per model (name, kind, setups, default_setup, available, where, move_aware, note)",
    )
    p.set_defaults(func=cmd_models)

    p = sub.add_parser("score", help="score models on a release split (shared corpus, all three relations)")
    _add_scoring_args(p)
    p.add_argument(
        "--setup",
        help="prompt setup, overrides NAME:SETUP (none, generic, recommended; a folder saved with prompts: saved)",
    )
    p.add_argument("--out", type=Path, help="leaderboard JSON to write (MTEB results go next to it)")
    p.add_argument("--submitter", metavar="NAME", help="who scored it, recorded in the entry (optional)")
    p.add_argument(
        "--training-cutoff",
        metavar="YYYY-MM-DD",
        help="the last day of the model's training data, recorded in the entry over what its registry entry or "
        "training summary says (a plain model folder's is unknown otherwise); decides which snapshots are clean",
    )
    p.add_argument(
        "--save-run",
        type=Path,
        metavar="DIR",
        help="save each relation's top-100 as Parquet and TREC run files (DIR-<model> for several models)",
    )
    p.add_argument("--via", choices=["ratio", "mteb"], default="ratio", help="run through mteb instead")
    p.add_argument(
        "--qrels",
        choices=["mined", "judged-hard", "judged-soft"],
        default="mined",
        help="also print metrics on the pool's judged queries with the gold plus judge-accepted candidates as "
        "relevant (unjudged: not relevant); --out records both agreements whenever a pool exists (not with --via mteb)",
    )
    p.add_argument("--pool", type=Path, metavar="DIR", help="judged pool (default: DATASET/judgments)")
    p.add_argument(
        "--reuse-embeddings",
        action="store_true",
        help="with --via mteb: give mteb ratio's cached vectors (checks search and metrics, skips re-encoding)",
    )
    p.add_argument(
        "--sample",
        type=int,
        metavar="N",
        help="a fast look: N seeded queries per relation against the whole candidate pool (the entry says "
        "so and is never ranked)",
    )
    p.add_argument("--seed", type=int, default=0, help="with --sample: the sampling seed (default 0)")
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--trust-remote-code", action="store_true", help="allow a model's own code to run")
    p.set_defaults(func=cmd_score)

    p = sub.add_parser(
        "analyze",
        help="analyses: oracle operation filtering, lexical overlap, move sensitivity, drift over test snapshots",
    )
    p.add_argument("analysis", choices=["oracle", "overlap", "move-sensitivity", "drift"])
    _add_scoring_args(p, models_required=False)
    p.set_defaults(split=None)  # test, except for drift (every snapshot), which refuses --split
    p.add_argument(
        "--results",
        type=Path,
        help=f"drift: the snapshot entries of `ratio score --split snapshots --out DIR` (default: {DRIFT_RESULTS})",
    )
    p.add_argument("--k", type=int, default=10, help="top-k for the overlap analysis")
    p.add_argument("--out", type=Path, help="write the table as JSON (move-sensitivity: and .md beside it)")
    p.add_argument(
        "--plot",
        type=Path,
        help="overlap: write the Figure 4 analogue (PNG); drift: MRR@10 per snapshot per model over the source mix",
    )
    p.set_defaults(func=cmd_analyze)

    p = sub.add_parser("leaderboard", help="validate and render leaderboard results, one table per release")
    p.set_defaults(results=Path("eval/results"))  # the positional RESULTS: see ratio_bench.leaderboard.cli
    p.add_argument("--markdown", type=Path, help="also write the tables as Markdown")
    p.add_argument("--plot", type=Path, help="also plot MRR@10 per relation (PNG)")
    p.add_argument(
        "--plot-top",
        type=int,
        default=PLOT_TOP,
        metavar="K",
        help=f"bars per relation panel of --plot (default: {PLOT_TOP})",
    )
    p.add_argument("--html", type=Path, help="also write a self-contained HTML page (sortable, filterable)")
    p.add_argument(
        "--trend",
        type=Path,
        metavar="FILE.png",
        help="also plot MRR@10 per test snapshot (test_YYYY_MM) per model, with intervals and training cut-offs",
    )
    p.add_argument(
        "--highlight",
        action="append",
        metavar="MODEL",
        help="with --trend: always draw this model (its row's name, e.g. bm25:unigram) beside the top 12 per "
        "panel; repeatable",
    )
    p.add_argument("--strict", action="store_true", help="exit 1 when a result file is rejected")
    p.add_argument(
        "--clean-only",
        action="store_true",
        help="rank models on the dated test snapshots that are clean for them (starting after their "
        "training-data cut-off): query-weighted MRR@10 per relation; models without one are listed, not ranked",
    )
    p.set_defaults(func=cmd_leaderboard)
