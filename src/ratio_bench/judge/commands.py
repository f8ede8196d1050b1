"""The handlers of the ``judge`` commands (``ratio_bench.judge.cli`` builds their parsers and names these
handlers as strings; ``cli.handler`` imports this module when one of them runs, so ``--help`` and argument errors
load none of the libraries below)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from ratio_bench.core.errors import RatioError, UsageError, shown
from ratio_bench.core.io import atomic_open, folder_lock, write_json
from ratio_bench.core.options import parse_assignments, sample_size
from ratio_bench.core.relations import RELATIONS
from ratio_bench.core.yamlio import read_yaml_file
from ratio_bench.dataset.config import DEFAULT_PROMPTS, ConfigError, SilverError, SilverSettings
from ratio_bench.dataset.release import Release, manifest_sha256
from ratio_bench.evaluation.analysis.typed_hits import read_hits, read_queries
from ratio_bench.evaluation.scoring.pool import JudgedPool, default_pool_dir
from ratio_bench.evaluation.scoring.runs import load_run
from ratio_bench.judge.calibrate import calibrate, read_labels, report_table
from ratio_bench.judge.candidates import CandidatesJob, plan_candidates
from ratio_bench.judge.estimate import estimate_candidates, estimate_pairwise, estimate_silver
from ratio_bench.judge.job import run_job
from ratio_bench.judge.labelling import label_pairs
from ratio_bench.judge.pairwise import PairwiseJob, plan_pairwise
from ratio_bench.judge.silver import SilverJob, stratified_sample
from ratio_bench.judge.typed_search import check_source, labelling_pairs, read_verdicts, report
from ratio_bench.llm.options import make_judge, print_run_summary
from ratio_bench.llm.pricing import PriceTable
from ratio_bench.llm.prompts import get_prompt, load_prompts, prompts_for


def cmd_prompts(args: argparse.Namespace) -> int:
    for p in sorted(load_prompts().values(), key=lambda p: (p.purpose, p.relation, p.id)):
        print(
            f"{p.id}@v{p.version}  [{p.purpose}, {p.relation}, modes: {', '.join(p.modes)}]  {p.sha256[:12]}"
        )
        if args.verbose:
            print(f"    {p.description}")
    return 0


_ESTIMATE_FLAGS = {  # flag -> the estimate modes it belongs to
    "pairs": ("silver",),
    "queries": ("candidates", "pairwise"),
    "k": ("candidates", "pairwise"),
    "systems": ("candidates",),
    "prompts": ("candidates",),
}


_ESTIMATE_DEFAULTS = {
    "pairs": [14_020, 1_410, 10_000],
    "queries": [400, 400, 400],
    "k": 10,
    "systems": 2,
    "prompts": 2,
}


def _estimate_counts(args: argparse.Namespace) -> None:
    """Refuse a flag of another mode, fill the mode's defaults and check every count."""
    for name, modes in _ESTIMATE_FLAGS.items():
        flag = "--" + name
        if getattr(args, name) is not None and args.mode not in modes:
            raise UsageError(f"{flag} is for `ratio judge estimate {' / '.join(modes)}`, not {args.mode}")
        if getattr(args, name) is None and args.mode in modes:
            setattr(args, name, _ESTIMATE_DEFAULTS[name])
    for name in ("pairs", "queries"):
        counts = getattr(args, name)
        if counts is not None and any(n < 0 for n in counts):
            raise UsageError(f"--{name} {' '.join(map(str, counts))}: counts must be 0 or more")
    for name, low, high in (("k", 1, None), ("systems", 1, None), ("prompts", 1, 2)):
        value = getattr(args, name)
        if value is not None and (value < low or (high is not None and value > high)):
            bound = f"between {low} and {high}" if high else f"at least {low}"
            raise UsageError(f"--{name} {value}: must be {bound}")
    if args.output_tokens < 0:
        raise UsageError(f"--output-tokens {args.output_tokens}: must be 0 or more")


def cmd_estimate(args: argparse.Namespace) -> int:
    _estimate_counts(args)
    prices = PriceTable.load(args.prices)
    if not prices.is_priced(args.model):
        raise UsageError(f"--model {args.model!r} has no price in the price table; pass --prices FILE")
    batch = not args.sync
    counts = args.pairs if args.mode == "silver" else args.queries
    wanted = {r: n for r, n in zip(RELATIONS, counts, strict=True) if n}
    if args.mode == "silver":
        rows = estimate_silver(
            args.dataset, wanted, DEFAULT_PROMPTS, args.model, prices, args.output_tokens, batch
        )
        shape = "{n:7,} pairs x 2 prompts"
    elif args.mode == "candidates":
        prompts = {r: DEFAULT_PROMPTS[r][: args.prompts] for r in RELATIONS}
        rows = estimate_candidates(
            args.dataset, wanted, args.k, args.systems, prompts, args.model, prices, args.output_tokens, batch
        )
        shape = f"{{n:6,}} queries x {args.k} candidates x {args.systems} systems x {args.prompts} prompts"
    else:
        rows = estimate_pairwise(args.dataset, wanted, args.k, args.model, prices, args.output_tokens, batch)
        shape = f"{{n:6,}} queries x 2 list orders (top-{args.k} lists)"
    p_in, p_out = prices.models[args.model]
    how = "synchronous" if args.sync else f"Batch API ({prices.batch_discount:.0%} of list)"
    print(
        f"{args.mode}: {args.model}: ${p_in}/M input, ${p_out}/M output, {how}; input tokens measured on "
        f"rendered prompts of {args.dataset}'s test split; {args.output_tokens} output tokens/request assumed"
    )
    for e in rows:
        print(
            f"  {e.relation:8s} {shape.format(n=e.items)} = {e.requests:7,} requests | "
            f"in {e.input_tokens:12,} tok | out {e.output_tokens:11,} tok | ${e.usd:,.2f}"
        )
    print(f"  total   ${sum(e.usd for e in rows):,.2f} for {sum(e.requests for e in rows):,} requests")
    return 0


def cmd_pairwise(args: argparse.Namespace) -> int:
    plan = plan_pairwise(args.dataset, args.runs, args.sample, args.k, args.seed, args.split, args.relations)
    judge, batch = make_judge(args)
    job = PairwiseJob(plan, judge.settings, args.out)
    return run_job(job, judge, batch, args.dry_run, args.output_tokens)


def cmd_label(args: argparse.Namespace) -> int:
    if args.sample < 1:
        raise UsageError(f"--sample {args.sample}: must be at least 1")
    if args.pairs:
        pairs = [json.loads(x) for x in args.pairs.read_text(encoding="utf-8").splitlines() if x.strip()]
    else:
        table = Release.open(args.dataset).queries(
            args.relation, args.split, ["query_id", "query", "marker", "gold", "gold_id"]
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

        print(
            get_prompt(DEFAULT_PROMPTS[rel][0]).messages("silver", query="S1", marker="marker", gold="S2")[0][
                "content"
            ]
        )
    if args.ids_only and any(not p.get("gold_id") for p in pairs):
        raise UsageError(
            "--ids-only: every pair needs a gold_id (give --pairs with gold_id, or drop --ids-only)"
        )
    counts = label_pairs(pairs, args.out, args.annotator, store_text=not args.ids_only)
    print(f"labelled {counts['labelled']}, skipped {counts['skipped']}, left {counts['left']} -> {args.out}")
    return 0


def cmd_typed_pairs(args: argparse.Namespace) -> int:
    """``ratio judge typed-search pairs``: every system's hits pooled, deduplicated and shuffled for labelling."""

    if args.out.exists() or args.out.is_symlink():
        raise UsageError(f"--out {args.out}: exists; nothing was overwritten. Choose another path")
    release = Release.open(args.dataset)
    hits, sources = read_hits(args.hits)
    split = check_source(sources, release)
    corpus = release.corpus(split, ["id", "text"])
    texts = dict(zip(corpus.column("id").to_pylist(), corpus.column("text").to_pylist(), strict=True))
    pairs = labelling_pairs(hits, read_queries(args.queries), texts, args.seed)
    with atomic_open(args.out, encoding="utf-8") as fh:
        fh.writelines(json.dumps(p, ensure_ascii=False) + "\n" for p in pairs)
    asked = len({(p["query_id"], p["gold_id"]) for p in pairs})
    print(
        f"{len(hits):,} hits -> {asked:,} distinct (query, candidate) x {len(pairs) // max(asked, 1)} moves = "
        f"{len(pairs):,} pairs -> {args.out}\n"
        f"next: ratio judge label --pairs {args.out} --ids-only --annotator NAME --out LABELS.jsonl"
    )
    return 0


TYPED_KEY = (
    "ratio_typed_search"  # marks a report `typed-search report --out` wrote, the only JSON it replaces
)


def cmd_typed_report(args: argparse.Namespace) -> int:
    """``ratio judge typed-search report``: judged and mined-role precision@k per system and move."""

    if args.k < 1:
        raise UsageError(f"--k {args.k}: must be at least 1")
    if args.out:
        _check_typed_out(args.out)
    release = Release.open(args.dataset)
    hits, sources = read_hits(args.hits)
    split = check_source(sources, release)
    corpus = release.corpus(split, ["id", "role"])
    roles = dict(zip(corpus.column("id").to_pylist(), corpus.column("role").to_pylist(), strict=True))
    verdicts, annotators = read_verdicts(args.labels, args.annotator)
    result = report(hits, verdicts, roles, args.k, annotators)
    result.release = {
        "name": release.manifest.get("name"),
        "version": release.version,
        "manifest_sha256": manifest_sha256(release.manifest),
        "split": split,
    }
    text = result.markdown()
    print(
        f"precision@{args.k} (%), 95% bootstrap CI over queries; judged by {', '.join(annotators) or 'nobody'}"
    )
    print(text)
    undecided = sum(c.hits - c.decided for c in result.judged)
    if undecided:
        print(f"{undecided:,} hits have no label and count as not doing the move")
    if args.out:
        write_json(args.out, {TYPED_KEY: True, **result.to_json()})
        with atomic_open(args.out.with_suffix(".md")) as fh:
            fh.write(text)
    return 0


def _check_typed_out(out: Path) -> None:
    """Refuse an ``--out`` (or the .md beside it) that is not an earlier report of this command."""
    ours = False
    if out.is_file():
        try:
            ours = json.loads(out.read_bytes()).get(TYPED_KEY) is True
        except (OSError, ValueError, AttributeError):
            ours = False
    for path in (out, out.with_suffix(".md")):
        if (path.exists() or path.is_symlink()) and not ours:
            raise UsageError(
                f"--out {out}: {path.name} exists and is not a typed-search report; nothing was overwritten"
            )


def cmd_calibrate(args: argparse.Namespace) -> int:
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


def cmd_candidates(args: argparse.Namespace) -> int:
    """Judge the sampled queries' top-k of saved runs; store verdicts in the pool; write the report."""

    for flag, value in (("--sample", args.sample), ("--k", args.k)):
        if value < 1:
            raise UsageError(f"{flag} {value}: must be at least 1")
    release = Release.open(args.dataset)
    runs = [load_run(r, release.manifest) for r in args.run]
    pool = JudgedPool(args.pool or default_pool_dir(args.dataset), release.manifest)
    judge, batch = make_judge(args)
    plans = plan_candidates(release, runs, args.relations, args.sample, args.seed, args.k)
    if not plans:
        raise RatioError(f"--dataset {args.dataset}: no queries to sample for {', '.join(args.relations)}")
    job = CandidatesJob(plans, runs, pool, judge.settings, args.k, args.out)
    return run_job(job, judge, batch, args.dry_run, args.output_tokens)


def cmd_silver(args: argparse.Namespace) -> int:
    sample = parse_assignments(
        args.sample, "--sample", RELATIONS, sample_size, example="RELATION=N (N or all)"
    )
    Release.open(args.dataset)  # no lock file beside a folder that is no release
    with folder_lock(args.dataset, "ratio judge silver"):  # one writer, from reading the release to the swap
        release = Release.open(args.dataset)
        raw, source = release.config, str(release.root / "manifest.json")
        if args.config:
            raw, source = read_yaml_file(args.config) or {}, f"--config {args.config}"
        if not isinstance(raw, dict):
            raise ConfigError(
                f"{source}: must be a mapping (key: value) with a silver block, got {shown(raw)}"
            )
        try:
            settings = SilverSettings.from_config(raw)
        except SilverError as e:
            raise SilverError(f"{source}: {e}") from None
        settings.sample.update(sample)
        judge, batch = make_judge(args, (raw.get("silver") or {}).get("judge"))
        return run_job(
            SilverJob(release, settings, judge.settings), judge, batch, args.dry_run, args.output_tokens
        )
