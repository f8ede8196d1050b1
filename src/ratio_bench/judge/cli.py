"""``ratio judge``: prompts, cost estimates, hand labels, calibration, silver, candidates and pairwise runs."""

from __future__ import annotations

import argparse
from pathlib import Path

from ratio_bench.core.relations import RELATIONS
from ratio_bench.judge.job import add_job_options
from ratio_bench.llm.options import add_judge_options


def _add_silver(judge: argparse._SubParsersAction) -> None:
    """``ratio judge silver`` (``ratio silver`` until 0.3): a judge job over a release."""

    p = judge.add_parser(
        "silver", help="judge a test sample with two prompts per relation; add the silver split"
    )
    p.add_argument(
        "--dataset", type=Path, required=True, help="release folder written by ratio dataset build"
    )
    p.add_argument(
        "--config", type=Path, help="build config whose silver: block to use (default: the release's)"
    )
    p.add_argument(
        "--sample", action="append", metavar="RELATION=N", help="override a sample size (N or all)"
    )
    add_job_options(p)
    add_judge_options(p, model_required=False)
    p.set_defaults(func="ratio_bench.judge.commands:cmd_silver")


def _add_typed_search(judge: argparse._SubParsersAction) -> None:
    """``ratio judge typed-search pairs|report``: a judged measure of typed search over saved hits."""
    verbs = judge.add_parser(
        "typed-search", help="label the hits of several search systems blind; precision@k per move"
    ).add_subparsers(dest="typed_command", required=True)
    for name, text in (
        (
            "pairs",
            "pool, deduplicate and shuffle the hits of `ratio search --queries` for `ratio judge label`",
        ),
        ("report", "judged and mined-role precision@k per system and move, with intervals"),
    ):
        p = verbs.add_parser(name, help=text)
        p.add_argument(
            "--hits", type=Path, nargs="+", required=True, help="hits files of `ratio search --queries`"
        )
        p.add_argument("--dataset", type=Path, required=True, help="the release the indexes were built from")
        if name == "pairs":
            p.add_argument("--queries", type=Path, required=True, help="the queries JSONL the hits answer")
            p.add_argument("--seed", type=int, default=0, help="the order of queries and candidates")
            p.add_argument(
                "--out", type=Path, required=True, help="pairs JSONL for `ratio judge label --pairs`"
            )
            p.set_defaults(func="ratio_bench.judge.commands:cmd_typed_pairs")
        else:
            p.add_argument(
                "--labels", type=Path, required=True, help="labels of `ratio judge label --ids-only`"
            )
            p.add_argument(
                "--annotator", help="only this annotator's labels (default: all, which must agree)"
            )
            p.add_argument("--k", type=int, default=5, help="precision at this depth (default: 5)")
            p.add_argument("--out", type=Path, help="write the report as JSON and the table as .md beside it")
            p.set_defaults(func="ratio_bench.judge.commands:cmd_typed_report")


def register(sub: argparse._SubParsersAction) -> None:
    judge = sub.add_parser("judge", help="LLM judge tools").add_subparsers(
        dest="judge_command", required=True
    )
    _add_prompts(judge)
    _add_estimate(judge)
    _add_pairwise(judge)
    _add_label(judge)
    _add_typed_search(judge)
    _add_calibrate(judge)
    _add_candidates(judge)
    _add_silver(judge)


def _add_prompts(judge: argparse._SubParsersAction) -> None:
    """``ratio judge prompts``."""
    p = judge.add_parser("prompts", help="list the versioned judge prompts")
    p.add_argument("-v", "--verbose", action="store_true")
    p.set_defaults(func="ratio_bench.judge.commands:cmd_prompts")


def _add_estimate(judge: argparse._SubParsersAction) -> None:
    """``ratio judge estimate``."""
    p = judge.add_parser(
        "estimate", help="cost of a silver build, candidate or pairwise judging, sized on a release's prompts"
    )
    p.add_argument(
        "mode",
        nargs="?",
        choices=("silver", "candidates", "pairwise"),
        default="silver",
        help="what to price: the silver build (default), top-k candidate judging, or pairwise list judging",
    )
    p.add_argument("--dataset", type=Path, required=True, help="release whose test split sizes the prompts")
    p.add_argument(
        "--pairs",
        type=int,
        nargs=3,
        metavar=("ADDRESS", "BROADEN", "SPECIFY"),
        help="silver: pairs judged per relation (default: the spec's sample, 14020 1410 10000)",
    )
    p.add_argument(
        "--queries",
        type=int,
        nargs=3,
        metavar=("ADDRESS", "BROADEN", "SPECIFY"),
        help="candidates, pairwise: queries judged per relation (default: the spec's 400 400 400)",
    )
    p.add_argument("--k", type=int, help="candidates, pairwise: candidates per list (default 10)")
    p.add_argument("--systems", type=int, help="candidates: systems whose lists are judged (default 2)")
    p.add_argument("--prompts", type=int, help="candidates: prompts per relation, 1 or 2 (default 2)")
    p.add_argument("--model", default="gpt-5.4")
    p.add_argument("--prices", type=Path)
    p.add_argument(
        "--output-tokens", type=int, default=600, help="assumed output (incl. reasoning) tokens/request"
    )
    p.add_argument("--sync", action="store_true", help="price synchronous calls instead of the Batch API")
    p.set_defaults(func="ratio_bench.judge.commands:cmd_estimate")


def _add_pairwise(judge: argparse._SubParsersAction) -> None:
    """``ratio judge pairwise``."""

    p = judge.add_parser(
        "pairwise", help="judge which of two saved runs' top-k lists inspires more (spec 5.5, Table 16)"
    )
    p.add_argument("--dataset", type=Path, required=True, help="the release both runs were scored on")
    p.add_argument(
        "--runs", type=Path, nargs=2, required=True, metavar=("FIRST", "SECOND"),
        help="two run folders from `ratio score --save-run`; the win rate is the first's",
    )  # fmt: skip
    p.add_argument(
        "--sample", "--queries", dest="sample", type=int, default=400,
        help="queries per relation, equal allocation across markers (as in `judge candidates`)",
    )  # fmt: skip
    p.add_argument("--k", type=int, default=10, help="candidates per list (default 10)")
    p.add_argument("--seed", type=int, default=0, help="sampling seed (default 0)")
    p.add_argument(
        "--split",
        help="query split (default: the runs' split; silver when they were scored on test and it exists)",
    )
    p.add_argument(
        "--relations", "--relation", dest="relations", nargs="+", action="extend", choices=RELATIONS,
        help="only these relations (default: all three)",
    )  # fmt: skip
    p.add_argument("--out", type=Path, help="folder for pairwise.md, pairwise.json and judgments.parquet")
    add_job_options(p)
    add_judge_options(p)
    p.set_defaults(func="ratio_bench.judge.commands:cmd_pairwise")


def _add_label(judge: argparse._SubParsersAction) -> None:
    """``ratio judge label``."""
    p = judge.add_parser("label", help="label (query, gold) pairs by hand in the terminal")
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--dataset", type=Path, help="release folder to sample pairs from")
    src.add_argument(
        "--pairs", type=Path, help="JSONL of pairs (relation, query, marker, gold, optional gold_id)"
    )
    p.add_argument("--relation", choices=RELATIONS, default="address")
    p.add_argument("--split", default="test")
    p.add_argument(
        "--sample", type=int, default=100, help="pairs to sample (equal allocation across markers)"
    )
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--annotator", required=True)
    p.add_argument("--out", type=Path, required=True, help="labels JSONL (appended; resumable)")
    p.add_argument("--show-prompt", action="store_true", help="print the judge prompt annotators follow")
    p.add_argument(
        "--ids-only",
        action="store_true",
        help="record each gold by its gold_id, not its text (labels about a pool that may not be copied)",
    )
    p.set_defaults(func="ratio_bench.judge.commands:cmd_label")


def _add_calibrate(judge: argparse._SubParsersAction) -> None:
    """``ratio judge calibrate``."""

    p = judge.add_parser("calibrate", help="score candidate prompts against human labels (spec Table 10)")
    p.add_argument("--labels", type=Path, required=True)
    p.add_argument("--relation", action="append", choices=RELATIONS)
    p.add_argument("--prompts", nargs="+", help="prompt ids to compare (default: every silver prompt)")
    p.add_argument("--reference", help="the single annotator (default: the one with most labels)")
    p.add_argument("--out", type=Path, help="write the report as JSON")
    add_judge_options(p)
    p.set_defaults(func="ratio_bench.judge.commands:cmd_calibrate")


def _add_candidates(judge: argparse._SubParsersAction) -> None:
    """``ratio judge candidates``."""

    p = judge.add_parser(
        "candidates", help="judge the top-k of saved runs on sampled queries (spec 5.3) into the judged pool"
    )
    p.add_argument("--dataset", type=Path, required=True, help="release folder the runs were scored on")
    p.add_argument(
        "--run",
        type=Path,
        action="append",
        required=True,
        help="saved run folder (`ratio score --save-run`); repeatable",
    )
    p.add_argument("--out", type=Path, required=True, help="report folder (Markdown, JSON, plots)")
    p.add_argument("--pool", type=Path, help="judged pool folder (default: DATASET/judgments)")
    p.add_argument("--relations", nargs="+", default=list(RELATIONS), choices=list(RELATIONS))
    p.add_argument(
        "--sample", type=int, default=400, help="queries per relation (equal allocation across markers)"
    )
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--k", type=int, default=10, help="candidates judged per query and run")
    add_job_options(p)
    add_judge_options(p)
    p.set_defaults(func="ratio_bench.judge.commands:cmd_candidates")
