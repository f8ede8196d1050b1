"""``ratio judge``: list prompts, estimate costs, label pairs by hand, calibrate prompts against labels."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from ratio_bench.errors import RatioError, UsageError
from ratio_bench.lexicon import RELATIONS


def cmd_prompts(args: argparse.Namespace) -> int:
    from ratio_bench.judge.prompts import load_prompts

    for p in sorted(load_prompts().values(), key=lambda p: (p.purpose, p.relation, p.id)):
        print(
            f"{p.id}@v{p.version}  [{p.purpose}, {p.relation}, modes: {', '.join(p.modes)}]  {p.sha256[:12]}"
        )
        if args.verbose:
            print(f"    {p.description}")
    return 0


def cmd_estimate(args: argparse.Namespace) -> int:
    from ratio_bench.dataset.config import DEFAULT_PROMPTS
    from ratio_bench.judge.estimate import estimate_silver
    from ratio_bench.judge.pricing import PriceTable

    if any(n < 0 for n in args.pairs):
        raise UsageError(f"--pairs {' '.join(map(str, args.pairs))}: pair counts must be 0 or more")
    if args.output_tokens < 0:
        raise UsageError(f"--output-tokens {args.output_tokens}: must be 0 or more")
    prices = PriceTable.load(args.prices)
    if not prices.is_priced(args.model):
        raise UsageError(f"--model {args.model!r} has no price in the price table; pass --prices FILE")
    pairs = {r: n for r, n in zip(RELATIONS, args.pairs, strict=True) if n}
    rows = estimate_silver(
        args.dataset, pairs, DEFAULT_PROMPTS, args.model, prices, args.output_tokens, not args.sync
    )
    p_in, p_out = prices.models[args.model]
    mode = "synchronous" if args.sync else f"Batch API ({prices.batch_discount:.0%} of list)"
    print(
        f"{args.model}: ${p_in}/M input, ${p_out}/M output, {mode}; {args.output_tokens} output tokens/request assumed"
    )
    for e in rows:
        print(
            f"  {e.relation:8s} {e.pairs:7,} pairs x 2 prompts = {e.requests:7,} requests | "
            f"in {e.input_tokens:12,} tok | out {e.output_tokens:11,} tok | ${e.usd:,.2f}"
        )
    print(f"  total   ${sum(e.usd for e in rows):,.2f} for {sum(e.requests for e in rows):,} requests")
    return 0


def cmd_label(args: argparse.Namespace) -> int:
    from ratio_bench.dataset.release import Release
    from ratio_bench.dataset.silver import stratified_sample
    from ratio_bench.judge.labelling import label_pairs
    from ratio_bench.judge.prompts import get_prompt

    if args.sample < 1:
        raise UsageError(f"--sample {args.sample}: must be at least 1")
    if args.pairs:
        pairs = [json.loads(x) for x in args.pairs.read_text(encoding="utf-8").splitlines() if x.strip()]
    else:
        table = Release.open(args.dataset).queries(
            args.relation, args.split, ["query_id", "query", "marker", "gold"]
        )
        if not table.num_rows:
            raise RatioError(f"--dataset {args.dataset}: no {args.relation} {args.split} split")
        ids = stratified_sample(
            table.column("query_id").to_pylist(), table.column("marker").to_pylist(), args.sample, args.seed
        )
        keep = set(ids)
        pairs = [r | {"relation": args.relation} for r in table.to_pylist() if r["query_id"] in keep]
    if args.show_prompt:
        rel = pairs[0]["relation"] if pairs else args.relation
        from ratio_bench.dataset.config import DEFAULT_PROMPTS

        print(
            get_prompt(DEFAULT_PROMPTS[rel][0]).messages("silver", query="S1", marker="marker", gold="S2")[0][
                "content"
            ]
        )
    counts = label_pairs(pairs, args.out, args.annotator)
    print(f"labelled {counts['labelled']}, skipped {counts['skipped']}, left {counts['left']} -> {args.out}")
    return 0


def cmd_calibrate(args: argparse.Namespace) -> int:
    from ratio_bench.io import write_json
    from ratio_bench.judge.calibrate import calibrate, read_labels, report_table
    from ratio_bench.judge.options import make_judge, print_run_summary
    from ratio_bench.judge.prompts import get_prompt, prompts_for

    labels = read_labels(args.labels)
    relations = args.relation or sorted({lab.relation for lab in labels})
    if args.prompts:
        chosen = [get_prompt(p) for p in args.prompts]
        prompts = {r: [p for p in chosen if p.relation == r] for r in relations}
    else:
        prompts = {r: prompts_for(r, "pair-verdict") for r in relations}
    judge, _ = make_judge(args)
    report = calibrate(labels, prompts, judge, args.reference)
    print(report_table(report))
    for rel, r in report.items():
        print(f"{rel}: keep {', '.join(r['ranking'][:2])} (reference annotator: {r['reference']})")
    print_run_summary(judge.summary())
    if args.out:
        write_json(args.out, report | {"judge": judge.settings.describe()})
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    from ratio_bench.judge.options import add_judge_options

    judge = sub.add_parser("judge", help="LLM judge tools").add_subparsers(
        dest="judge_command", required=True
    )
    p = judge.add_parser("prompts", help="list the versioned judge prompts")
    p.add_argument("-v", "--verbose", action="store_true")
    p.set_defaults(func=cmd_prompts)

    p = judge.add_parser("estimate", help="cost of a silver build, sized on a release's rendered prompts")
    p.add_argument("--dataset", type=Path, required=True, help="release whose test pairs size the prompts")
    p.add_argument(
        "--pairs",
        type=int,
        nargs=3,
        metavar=("ADDRESS", "BROADEN", "SPECIFY"),
        default=[14_020, 1_410, 10_000],
        help="pairs judged per relation (default: the spec's sample)",
    )
    p.add_argument("--model", default="gpt-5.4")
    p.add_argument("--prices", type=Path)
    p.add_argument(
        "--output-tokens", type=int, default=600, help="assumed output (incl. reasoning) tokens/request"
    )
    p.add_argument("--sync", action="store_true", help="price synchronous calls instead of the Batch API")
    p.set_defaults(func=cmd_estimate)

    p = judge.add_parser("label", help="label (query, gold) pairs by hand in the terminal")
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--dataset", type=Path, help="release folder to sample pairs from")
    src.add_argument("--pairs", type=Path, help="JSONL of pairs (relation, query, marker, gold)")
    p.add_argument("--relation", choices=RELATIONS, default="address")
    p.add_argument("--split", default="test")
    p.add_argument(
        "--sample", type=int, default=100, help="pairs to sample (equal allocation across markers)"
    )
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--annotator", required=True)
    p.add_argument("--out", type=Path, required=True, help="labels JSONL (appended; resumable)")
    p.add_argument("--show-prompt", action="store_true", help="print the judge prompt annotators follow")
    p.set_defaults(func=cmd_label)

    p = judge.add_parser("calibrate", help="score candidate prompts against human labels (spec Table 10)")
    p.add_argument("--labels", type=Path, required=True)
    p.add_argument("--relation", action="append", choices=RELATIONS)
    p.add_argument("--prompts", nargs="+", help="prompt ids to compare (default: every silver prompt)")
    p.add_argument("--reference", help="the single annotator (default: the one with most labels)")
    p.add_argument("--out", type=Path, help="write the report as JSON")
    add_judge_options(p)
    p.set_defaults(func=cmd_calibrate)
