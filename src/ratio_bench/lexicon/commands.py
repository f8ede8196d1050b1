"""The handlers of the ``lexicon`` commands (``ratio_bench.lexicon.cli`` builds their parsers and names these
handlers as strings; ``cli.handler`` imports this module when one of them runs, so ``--help`` and argument errors
load none of the libraries below)."""

from __future__ import annotations

import argparse
import itertools

from tqdm import tqdm

from ratio_bench.core import extras
from ratio_bench.core.errors import UsageError
from ratio_bench.core.resources import data_path, installed
from ratio_bench.corpus.pipeline import segment_papers
from ratio_bench.corpus.readers import PaperReader
from ratio_bench.lexicon import Lexicon, default_lexicon_dir
from ratio_bench.lexicon.discover import count_spans, embedding_neighbours, top_spans, write_spans
from ratio_bench.lexicon.expand import accept_reviewed, expand, write_review
from ratio_bench.lexicon.llm import llm_classify, llm_expand
from ratio_bench.llm.options import make_judge, print_run_summary

sentence_transformers = extras.lazy("sentence_transformers")


def cmd_lexicon_check(args: argparse.Namespace) -> int:
    lex = Lexicon.load(args.lexicon)
    conflicts = lex.connective_conflicts()
    print(f"lexicon {lex.version} sha256={lex.fingerprint()} ({args.lexicon or default_lexicon_dir()})")
    for label, n in lex.labels().items():
        print(f"  {label:22s} {n:5d}")
    print(f"  connective rules       {len(lex.connectives):5d}")
    for c in conflicts:
        print(f"CONFLICT {c}")
    markers = sum(lex.labels().values())
    if conflicts:
        print(f"ratio lexicon check: FAIL: {len(conflicts)} connective conflicts")
        return 1
    print(
        f"ratio lexicon check: PASS ({markers:,} markers, {len(lex.connectives)} connective rules, no conflicts)"
    )
    return 0


def cmd_lexicon_expand(args: argparse.Namespace) -> int:
    candidates = expand(args.templates or data_path("lexicon", "templates"), args.relation)
    counts = write_review(args.out, candidates, Lexicon.load(args.lexicon))
    print(
        f"{len(candidates):,} candidates -> {args.out} (new {counts['new']:,}, already in the lexicon "
        f"{counts['known']:,}, conflicting with another label {counts['conflict']:,})"
    )
    print("mark rows 'accept' in the decision column, then: ratio lexicon accept " + str(args.out))
    return 0


def cmd_lexicon_accept(args: argparse.Namespace) -> int:
    if args.lexicon is None and installed():
        raise UsageError(
            "--lexicon is required: the shipped lexicon is part of the installed package; copy it "
            "(ratio lexicon check prints where it is) and pass --lexicon COPY"
        )
    added = accept_reviewed(args.review, args.lexicon or default_lexicon_dir(), args.stage)
    print(
        f"added with stage {args.stage!r}: " + (", ".join(f"{r}={n}" for r, n in added.items()) or "nothing")
    )
    return 0


def cmd_lexicon_llm_expand(args: argparse.Namespace) -> int:
    lexicon = Lexicon.load(args.lexicon)
    if args.seeds:
        seeds = [s.strip() for s in args.seeds.read_text(encoding="utf-8").splitlines() if s.strip()]
    else:  # the relation's manual markers
        seeds = [m for m in lexicon.markers(args.relation) if lexicon.entries[m].stage == "manual"]
    seeds = seeds[: args.max_seeds] if args.max_seeds else seeds
    judge, _ = make_judge(args)
    counts = llm_expand(args.relation, seeds, judge, lexicon, args.out, args.per_seed)
    print(
        f"{counts['seeds']} seeds -> {args.out}: new {counts['new']}, already in the lexicon {counts['known']}, "
        f"conflicting {counts['conflict']}, malformed dropped {counts['dropped_malformed']}"
    )
    print_run_summary(judge.summary())
    print(f"next: ratio lexicon llm-classify {args.out} --model ...")
    return 0


def cmd_lexicon_llm_classify(args: argparse.Namespace) -> int:
    judge, _ = make_judge(args)
    counts = llm_classify(args.review, judge, args.strong_threshold)
    print(", ".join(f"{k} {v}" for k, v in counts.items()))
    print_run_summary(judge.summary())
    print(
        f"strong-true rows are marked accept; review them, then: ratio lexicon accept --stage llm {args.review}"
    )
    return 0


def cmd_lexicon_discover(args: argparse.Namespace) -> int:
    lexicon = Lexicon.load(args.lexicon)
    papers = segment_papers(PaperReader(), args.corpus)
    if args.limit:
        papers = itertools.islice(papers, args.limit)
    counts, n = count_spans(tqdm(papers, unit=" papers", disable=args.quiet), args.max_words)
    rows = top_spans(counts, lexicon, args.top)
    write_spans(args.out, rows)
    covered = sum(1 for r in rows if r.label)
    print(
        f"{n:,} sentences, {len(counts):,} distinct spans; top {len(rows)} -> {args.out} "
        f"({covered} already in the lexicon)"
    )
    if args.embed_model:
        seeds = [s.strip().lower() for s in args.seeds.read_text(encoding="utf-8").splitlines() if s.strip()]
        pool = [span for span, _ in counts.most_common(args.neighbour_pool)]
        model = sentence_transformers.SentenceTransformer(args.embed_model, trust_remote_code=False)
        for seed, nbrs in embedding_neighbours(seeds, pool, model, args.k).items():
            print(f"{seed}: " + "; ".join(f"{s} ({sim:.2f})" for s, sim in nbrs))
    return 0
