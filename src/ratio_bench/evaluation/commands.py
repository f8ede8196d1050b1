"""The handlers of the ``evaluation`` commands (``ratio_bench.evaluation.cli`` builds their parsers and names these
handlers as strings; ``cli.handler`` imports this module when one of them runs, so ``--help`` and argument errors
load none of the libraries below)."""

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
from ratio_bench.dataset.hub_release import fetched_or_path, open_release
from ratio_bench.evaluation.analysis.run import run_analysis
from ratio_bench.evaluation.board.leaderboard import load_board
from ratio_bench.evaluation.board.render.output import render_board, score_report
from ratio_bench.evaluation.entry.record import Entry
from ratio_bench.evaluation.scoring import engine
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
