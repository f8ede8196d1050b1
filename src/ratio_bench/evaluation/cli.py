"""``ratio models``, ``ratio score``, ``ratio analyze`` and ``ratio leaderboard``: arguments parsed, results printed.

The work is in library modules: scoring in :mod:`.engine`, the analyses in :mod:`.analysis_run`, the board's
output in :mod:`.board_output`.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
from pathlib import Path

from rich.markup import escape
from rich.table import Table

from ratio_bench.core import cutoffs
from ratio_bench.core.errors import UsageError
from ratio_bench.core.io import report_console
from ratio_bench.core.options import add_release_option, add_view_options
from ratio_bench.core.relations import RELATIONS
from ratio_bench.dataset.hub_release import fetched_or_path, open_release
from ratio_bench.evaluation.analysis.run import run_analysis
from ratio_bench.evaluation.board.leaderboard import load_board
from ratio_bench.evaluation.board.render.output import render_board, score_report
from ratio_bench.evaluation.entry.record import Entry
from ratio_bench.evaluation.scoring import engine
from ratio_bench.evaluation.scoring.defaults import DRIFT_RESULTS, PLOT_TOP
from ratio_bench.evaluation.scoring.engine import per_model_path, write_outputs
from ratio_bench.evaluation.scoring.results import check_results_path, check_submitter
from ratio_bench.retrieval.cache import EmbeddingCache
from ratio_bench.retrieval.registry import available, resolve

SCORER = "stated by the scorer (ratio score --training-cutoff)"


def cmd_models(args: argparse.Namespace) -> int:
    rows = available()
    if args.json:
        print(json.dumps([dataclasses.asdict(r) for r in rows], indent=2))
        return 0
    headers = ("name", "kind", "setups", "move-aware", "weights")
    t = Table(*headers, title="Models (NAME[:SETUP] for `ratio score --model`)")
    for r in rows:
        aware = "yes" if r.move_aware else "no: ranks every move alike"
        t.add_row(escape(r.name), r.kind, ", ".join(r.setups), aware, escape(r.where))
    report_console().print(t)
    return 0


def _check_score_args(args: argparse.Namespace) -> None:
    """Flags that contradict each other, refused before any model is resolved."""

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
    if args.training_cutoff is not None and len(args.model) > 1:
        raise UsageError("--training-cutoff: it states one model's cut-off; score the models one at a time")


def cmd_score(args: argparse.Namespace) -> int:
    """Every model on every split asked for, each model loaded once (:func:`.engine.score`)."""

    console = report_console(stderr=args.json)  # --json: the entries alone on stdout
    _check_score_args(args)
    stated = cutoffs.parse_date(args.training_cutoff, "--training-cutoff") if args.training_cutoff else None
    release = open_release(args.dataset)
    args.dataset = release.root  # a Hub release: its checked copy in the cache
    outs = engine.split_outs(release, args.split, args.out)
    setups = [resolve(ref, args.setup, trust_remote_code=args.trust_remote_code) for ref in args.model]
    if stated is not None:
        setups = [engine.with_stated_cutoff(s, stated, SCORER) for s in setups]
    for path in (p for out in outs.values() for p in engine.results_paths(out, [s.name for s in setups])):
        check_results_path(path)  # every path checked before minutes of scoring
    cache = EmbeddingCache(args.cache_dir)
    pool = (
        engine.judged_pool_for(args.dataset, release.manifest, args.pool, args.qrels)
        if args.via == "ratio"
        else None
    )
    entries: dict[str, list[Entry]] = {split: [] for split in outs}
    queries = {}  # each split's (sampled) queries, whose true counts a sample's title names
    for setup in setups:
        for scored in _score_model(args, setup, release, list(outs), cache, pool, console):
            _report(args, scored, setup.name, len(setups), outs[scored.split], console)
            entries[scored.split].append(scored.entry)
            queries[scored.split] = scored.data.queries
    score_report(entries, queries, release, args, console)
    return 0


def _score_model(args, setup, release, splits, cache, pool, console):
    """One model on ``splits``: the ratio path (one load for all splits) or mteb's, split by split."""

    if args.via == "mteb":
        return [
            engine.score_via_mteb(
                setup, args.dataset, split, args.relations, cache=cache, batch_size=args.batch_size,
                reuse_embeddings=args.reuse_embeddings, submitter=args.submitter, hub=release.hub,
            )
            for split in splits
        ]  # fmt: skip
    scored = engine.score(
        setup, release, splits, relations=args.relations, cache=cache, batch_size=args.batch_size,
        keep_runs=bool(args.save_run), pool=pool, qrels=args.qrels, submitter=args.submitter,
        sample=engine.Sample(args.sample, args.seed) if args.sample is not None else None,
        say=console.print,
    )  # fmt: skip
    console.print(
        f"{setup.name}: {len(scored.splits)} split(s) in {scored.seconds:.1f} s, model loaded "
        f"{scored.model_loads}x, {scored.texts_encoded:,} texts encoded, {scored.texts_cached:,} from the cache"
    )
    return scored.splits


def _report(args, scored, name: str, n_models: int, out: Path | None, console) -> None:
    """One split's line, its saved run and its written entry."""

    result = scored.result
    if args.save_run:
        run_dir = per_model_path(args.save_run, name, n_models)
        run_dir = engine.save_split_run(scored, run_dir, per_split=args.split == engine.SNAPSHOTS)
        console.print(f"{name}: run saved to {run_dir}")
    console.print(
        f"{name} {scored.split}: {result.seconds:.1f} s, corpus {len(scored.data.corpus_ids):,} candidates, "
        f"{result.texts_encoded:,} texts encoded, encode calls {result.encode_calls}, cache hits {result.cache_hits}"
    )
    if out:
        written = write_outputs(scored, per_model_path(out, name, n_models))
        console.print(
            f"{name}: wrote {written[0]} (and {len(written) - 1} MTEB result files in "
            f"{written[0].with_suffix('') / 'mteb'})"
        )


def cmd_leaderboard(args: argparse.Namespace) -> int:
    return render_board(load_board(args.results), args, str(args.results))


def cmd_analyze(args: argparse.Namespace) -> int:
    args.dataset = fetched_or_path(args.dataset)
    return run_analysis(args)


def _add_scoring_args(p: argparse.ArgumentParser, models_required: bool = True) -> None:
    """Arguments shared by the commands that score models on a release split."""
    p.add_argument(
        "--model", nargs="+", required=models_required, help="NAME[:SETUP] (see `ratio models`) or a folder"
    )
    add_release_option(p, default="ratio")
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
    _score_parser(sub)
    _analyze_parser(sub)
    _leaderboard_parser(sub)


def _score_parser(sub: argparse._SubParsersAction) -> None:
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
        help="with --via mteb: fill the embedding cache through ratio's retriever first (mteb then encodes nothing)",
    )
    p.add_argument(
        "--sample",
        type=int,
        metavar="N",
        help="a fast look: N seeded queries per relation against the whole candidate pool (the entry says "
        "so and is never ranked)",
    )
    p.add_argument("--seed", type=int, default=0, help="with --sample: the sampling seed (default 0)")
    add_view_options(p, "the entries (as --out writes them) as a JSON list on stdout, the progress on stderr")
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--trust-remote-code", action="store_true", help="allow a model's own code to run")
    p.set_defaults(func=cmd_score)


def _analyze_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "analyze",
        help="analyses: oracle filtering, lexical overlap, mined-role precision, move sensitivity, drift",
    )
    p.add_argument("analysis", choices=["oracle", "overlap", "mined-role", "move-sensitivity", "drift"])
    _add_scoring_args(p, models_required=False)
    p.set_defaults(split=None)  # test, except for drift (every snapshot), which refuses --split
    p.add_argument(
        "--results",
        type=Path,
        help=f"drift: the snapshot entries of `ratio score --split snapshots --out DIR` (default: {DRIFT_RESULTS})",
    )
    p.add_argument("--k", type=int, default=10, help="top-k for the overlap and mined-role analyses")
    p.add_argument("--out", type=Path, help="write the table as JSON (move-sensitivity: and .md beside it)")
    p.add_argument(
        "--plot",
        type=Path,
        help="overlap: write the Figure 4 analogue (PNG); drift: MRR@10 per snapshot per model over the source mix",
    )
    p.set_defaults(func=cmd_analyze)


def _leaderboard_parser(sub: argparse._SubParsersAction) -> None:
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
    add_view_options(p, "every row as JSON on stdout (every metric per move, n, the MRR@10 interval)")
    p.add_argument("--hardware", metavar="NAME", help="only the entries measured on this hardware class")
    p.add_argument(
        "--clean-only",
        action="store_true",
        help="rank models on the dated test snapshots that are clean for them (starting after their "
        "training-data cut-off): query-weighted MRR@10 per relation; models without one are listed, not ranked",
    )
    p.set_defaults(func=cmd_leaderboard)
