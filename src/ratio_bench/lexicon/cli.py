"""``ratio lexicon``: inspect, expand and grow the marker lexicon."""

from __future__ import annotations

import argparse
from pathlib import Path

from ratio_bench.core.relations import RELATIONS
from ratio_bench.llm.options import add_judge_options


def register(sub: argparse._SubParsersAction) -> None:
    lex = sub.add_parser("lexicon", help="marker lexicon tools").add_subparsers(
        dest="lexicon_command", required=True
    )
    p = lex.add_parser("check", help="load the lexicon, verify its invariants and print counts")
    p.add_argument("--lexicon", type=Path, help="lexicon folder (default: lexicon/v1)")
    p.set_defaults(func="ratio_bench.lexicon.commands:cmd_lexicon_check")

    p = lex.add_parser("expand", help="expand Hearst-style templates into a review file of candidates")
    p.add_argument(
        "--templates", type=Path, help="templates folder with terms/ (default: the shipped lexicon/templates)"
    )
    p.add_argument(
        "--relation",
        action="append",
        choices=RELATIONS,
        help="only these relations (repeatable; default all with templates)",
    )
    p.add_argument("--lexicon", type=Path, help="lexicon folder used to mark known candidates")
    p.add_argument("--out", type=Path, required=True, help="review TSV to write")
    p.set_defaults(func="ratio_bench.lexicon.commands:cmd_lexicon_expand")

    p = lex.add_parser("accept", help="add the rows of a review file marked 'accept' (stage pattern)")
    p.add_argument("review", type=Path)
    p.add_argument("--lexicon", type=Path, help="lexicon folder to extend (default: lexicon/v1)")
    p.add_argument(
        "--stage", choices=["pattern", "llm"], default="pattern", help="stage of the added markers"
    )
    p.set_defaults(func="ratio_bench.lexicon.commands:cmd_lexicon_accept")

    p = lex.add_parser("llm-expand", help="generate marker candidates from seeds with an LLM (review file)")
    p.add_argument("--relation", choices=RELATIONS, required=True)
    p.add_argument(
        "--seeds", type=Path, help="seed markers, one per line (default: the relation's manual ones)"
    )
    p.add_argument("--max-seeds", type=int, default=0)
    p.add_argument("--per-seed", type=int, default=10, help="candidates asked per seed")
    p.add_argument("--lexicon", type=Path)
    p.add_argument("--out", type=Path, required=True, help="review TSV to write")
    add_judge_options(p)
    p.set_defaults(func="ratio_bench.lexicon.commands:cmd_lexicon_llm_expand")

    p = lex.add_parser("llm-classify", help="label review-file candidates strong-true / weak-true / false")
    p.add_argument("review", type=Path)
    p.add_argument("--strong-threshold", type=float, default=0.8, help="confidence for strong-true")
    add_judge_options(p)
    p.set_defaults(func="ratio_bench.lexicon.commands:cmd_lexicon_llm_classify")

    p = lex.add_parser("discover", help="most frequent sentence-initial comma-terminated spans of a corpus")
    p.add_argument("--corpus", nargs="+", type=Path, required=True, help="corpus files or folders")
    p.add_argument("--top", type=int, default=400)
    p.add_argument("--max-words", type=int, default=7)
    p.add_argument("--limit", type=int, default=0, help="stop after N papers (0: all)")
    p.add_argument("--lexicon", type=Path)
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--embed-model", help="sentence-transformers model name or path for neighbour search")
    p.add_argument("--seeds", type=Path, help="file of seed markers, one per line (with --embed-model)")
    p.add_argument("--k", type=int, default=10, help="neighbours per seed")
    p.add_argument("--neighbour-pool", type=int, default=20000, help="most frequent spans searched")
    p.add_argument("--quiet", action="store_true")
    p.set_defaults(func="ratio_bench.lexicon.commands:cmd_lexicon_discover")
