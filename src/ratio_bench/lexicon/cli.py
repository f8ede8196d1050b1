"""``ratio lexicon``: inspect, expand and grow the marker lexicon."""

from __future__ import annotations

import argparse


def cmd_lexicon_check(args: argparse.Namespace) -> int:
    from ratio_bench.lexicon import Lexicon

    lex = Lexicon.load(args.lexicon)
    conflicts = lex.connective_conflicts()
    print(f"lexicon {lex.version} sha256={lex.fingerprint()}")
    for label, n in lex.labels().items():
        print(f"  {label:22s} {n:5d}")
    print(f"  connective rules       {len(lex.connectives):5d}")
    for c in conflicts:
        print(f"CONFLICT {c}")
    return 1 if conflicts else 0


def add_lexicon_commands(sub: argparse._SubParsersAction) -> None:
    from pathlib import Path

    lex = sub.add_parser("lexicon", help="marker lexicon tools").add_subparsers(dest="lexicon_command", required=True)
    p = lex.add_parser("check", help="load the lexicon, verify its invariants and print counts")
    p.add_argument("--lexicon", type=Path, help="lexicon folder (default: lexicon/v1)")
    p.set_defaults(func=cmd_lexicon_check)
