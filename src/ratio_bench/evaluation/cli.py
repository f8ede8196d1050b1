"""``ratio models``, ``ratio score``, ``ratio analyze`` and ``ratio leaderboard``: arguments parsed, results printed.

The work is in library modules: scoring in :mod:`.engine`, the analyses in :mod:`.analysis_run`, the board's
output in :mod:`.board_output`.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from ratio_bench.core.options import add_release_option, add_view_options
from ratio_bench.core.relations import RELATIONS
from ratio_bench.evaluation.scoring.defaults import DRIFT_RESULTS, PLOT_TOP


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
    p.set_defaults(func="ratio_bench.evaluation.commands:cmd_models")
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
    p.set_defaults(func="ratio_bench.evaluation.commands:cmd_score")


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
    p.set_defaults(func="ratio_bench.evaluation.commands:cmd_analyze")


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
    p.set_defaults(func="ratio_bench.evaluation.commands:cmd_leaderboard")
