"""The ``ratio`` command line: one sub-command per stage, each runnable on its own."""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from ratio_bench import __version__

DEFAULT_CORPUS = Path("../shared/corpus")


def _add_reader_options(p: argparse.ArgumentParser) -> None:
    from ratio_bench.corpus.readers import FORMATS, TEXT_FORMATS
    from ratio_bench.corpus.sections import PROSE_CATEGORIES, SectionCategory

    p.add_argument(
        "--format",
        dest="fmt",
        choices=FORMATS,
        default=None,
        help="record schema (default: detected per file)",
    )
    p.add_argument(
        "--text-format",
        choices=TEXT_FORMATS,
        default="auto",
        help="how bodies are parsed (default: Markdown if it has headings, else plain)",
    )
    p.add_argument(
        "--keep-sections",
        nargs="+",
        metavar="CATEGORY",
        choices=[c.value for c in SectionCategory],
        default=sorted(c.value for c in PROSE_CATEGORIES),
        help="section categories to keep (default: all prose categories, appendices included)",
    )
    p.add_argument(
        "--strict",
        action="store_true",
        help="fail on malformed input (bad JSON, wrong field types, unreadable files) instead of rejecting it",
    )


def _reader_settings(args: argparse.Namespace):
    from ratio_bench.corpus.readers import ReaderSettings
    from ratio_bench.corpus.sections import SectionCategory

    return ReaderSettings(
        fmt=args.fmt,
        text_format=args.text_format,
        keep_categories=frozenset(SectionCategory(c) for c in args.keep_sections),
        strict=args.strict,
    )


def cmd_segment(args: argparse.Namespace) -> int:
    """stdin paragraphs (blank-line separated) -> one sentence per line, verbatim."""
    import re

    from ratio_bench.corpus.segmenters import get_segmenter

    spans = get_segmenter(args.segmenter)
    text = sys.stdin.read()
    out = sys.stdout
    for para in re.split(r"\n[ \t]*\n", text):
        for a, b in spans(para):
            out.write(" ".join(para[a:b].split("\n")) + "\n")
    return 0


def cmd_corpus_stats(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    from ratio_bench.corpus.pipeline import segment_papers
    from ratio_bench.corpus.readers import PaperReader
    from ratio_bench.io import RejectLog, write_json

    start = time.perf_counter()
    with RejectLog(args.rejects) as rejects:
        reader = PaperReader(_reader_settings(args), rejects=rejects)
        for i, _ in enumerate(tqdm(segment_papers(reader, args.paths), unit=" papers", disable=args.quiet)):
            if args.limit and i + 1 >= args.limit:
                break
    seconds = time.perf_counter() - start
    reader.report.print(seconds=seconds)
    if args.json:
        write_json(args.json, {**reader.report.as_dict(), "seconds": round(seconds, 2)})
    if args.rejects:
        print(f"rejects: {args.rejects}")
    return 0


def cmd_corpus_export(args: argparse.Namespace) -> int:
    """Write the corpus stage's output (one row per paper, paragraphs with sentences) as Parquet."""
    from tqdm import tqdm

    from ratio_bench.corpus.pipeline import paper_row, segment_papers
    from ratio_bench.corpus.readers import PaperReader
    from ratio_bench.corpus.records import PAPER_SCHEMA
    from ratio_bench.io import RejectLog
    from ratio_bench.mining.writer import ShardWriter

    writer = ShardWriter(args.out, PAPER_SCHEMA, rows_per_group=2_000)
    try:
        with RejectLog(args.rejects) as rejects:
            reader = PaperReader(_reader_settings(args), rejects=rejects)
            for seg in tqdm(segment_papers(reader, args.paths), unit=" papers", disable=args.quiet):
                writer.extend([paper_row(seg)])
    except BaseException:
        writer.abort()
        raise
    writer.close()
    print(f"{writer.count:,} papers -> {args.out}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="ratio", description=__doc__)
    parser.add_argument("--version", action="version", version=f"ratio-bench {__version__}")
    parser.add_argument(
        "--debug", action="store_true", help="show full tracebacks (also RATIO_DEBUG=1); accepted anywhere"
    )
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("segment", help="split stdin paragraphs into sentences, one per line (verbatim)")
    p.add_argument("--segmenter", default="ratio", help="ratio (default), blingfire, pysbd or syntok")
    p.set_defaults(func=cmd_segment)

    corpus = sub.add_parser("corpus", help="corpus stage").add_subparsers(
        dest="corpus_command", required=True
    )
    p = corpus.add_parser("stats", help="read, section and segment a corpus; print the stage report")
    p.add_argument("paths", nargs="*", type=Path, default=[DEFAULT_CORPUS], help="files or folders")
    _add_reader_options(p)
    p.add_argument("--rejects", type=Path, help="write one JSON line per rejected or flagged record here")
    p.add_argument("--json", type=Path, help="also write the report as JSON")
    p.add_argument("--limit", type=int, default=0, help="stop after N papers (0: all)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=cmd_corpus_stats)

    p = corpus.add_parser("export", help="write normalised, sectioned, segmented papers as Parquet")
    p.add_argument("paths", nargs="*", type=Path, default=[DEFAULT_CORPUS], help="files or folders")
    p.add_argument(
        "--out", type=Path, required=True, help="Parquet file (schema: corpus.records.PAPER_SCHEMA)"
    )
    p.add_argument("--rejects", type=Path, help="write one JSON line per rejected or flagged record here")
    p.add_argument("--quiet", action="store_true")
    _add_reader_options(p)
    p.set_defaults(func=cmd_corpus_export)

    from ratio_bench.dataset.cli import add_dataset_commands
    from ratio_bench.evaluation.cli import add_evaluation_commands
    from ratio_bench.judge.cli import add_judge_commands
    from ratio_bench.lexicon.cli import add_lexicon_commands
    from ratio_bench.mining.cli import add_mining_commands
    from ratio_bench.serve.cli import add_serve_commands
    from ratio_bench.training.cli import add_training_commands

    add_mining_commands(sub)
    add_lexicon_commands(sub)
    add_dataset_commands(sub)
    add_evaluation_commands(sub)
    add_judge_commands(sub)
    add_serve_commands(sub)
    add_training_commands(sub)
    return parser


def _command_name(args: argparse.Namespace) -> str:
    """``corpus stats``, ``judge label``, ``build``: the words that chose the command, for error messages."""
    words = [args.command]
    nested = getattr(args, f"{args.command}_command", None)
    if nested:
        words.append(nested)
    return " ".join(words)


def _write_traceback() -> Path | None:
    """Save the current exception's traceback to a private file so the console shows one line only."""
    import tempfile
    import traceback

    try:
        fd, name = tempfile.mkstemp(prefix="ratio-traceback-", suffix=".txt")
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(f"ratio-bench {__version__}, argv {sys.argv!r}\n\n")
            traceback.print_exc(file=fh)
        return Path(name)
    except OSError:
        return None


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command. User mistakes print one line and exit 1 (2 for usage); ``--debug`` re-raises."""
    from ratio_bench.errors import RatioError

    given = sys.argv[1:] if argv is None else list(argv)
    words = [w for w in given if w != "--debug"]  # accepted anywhere, not only before the command
    debug = len(words) < len(given) or os.environ.get("RATIO_DEBUG", "") not in ("", "0")
    args = build_parser().parse_args(words)
    if debug:
        return args.func(args)
    name = f"ratio {_command_name(args)}"
    try:
        return args.func(args)
    except RatioError as exc:
        print(f"{name}: error: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print(
            f"{name}: interrupted (finished outputs are kept; re-run the same command to resume)",
            file=sys.stderr,
        )
        return 130
    except OSError as exc:
        if exc.filename is None:  # not about a path the user gave
            return _internal_error(name, exc)
        print(f"{name}: error: {exc.filename}: {exc.strerror or exc}", file=sys.stderr)
        return 1
    except Exception as exc:
        return _internal_error(name, exc)


def _internal_error(name: str, exc: BaseException) -> int:
    where = _write_traceback()
    saved = f"traceback saved to {where}" if where else "re-run with --debug for the traceback"
    print(f"{name}: internal error: {type(exc).__name__}: {exc} ({saved}; please report it)", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
