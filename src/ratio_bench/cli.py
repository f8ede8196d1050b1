"""The ``ratio`` command line: each pipeline stage's commands under its name (``ratio corpus``, ``mine``,
``lexicon``, ``dataset``, ``judge``, ``train``), and what a benchmark user runs at the top (``score``,
``models``, ``analyze``, ``leaderboard``, ``index``, ``search``, ``serve``, ``mcp``)."""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import tempfile
import threading
import traceback
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

from ratio_bench import __version__
from ratio_bench.core import faults
from ratio_bench.core.errors import RatioError
from ratio_bench.core.extras import missing_extra
from ratio_bench.core.faults import forget_outputs
from ratio_bench.core.options import OneLineParser

# The command groups, in the order ``ratio --help`` lists them: word -> (the modules whose ``register(sub)`` add
# it, its line in ``ratio --help``). Only the chosen word's modules are imported, so ``ratio --help`` and
# ``ratio --version`` load no stage; each stage module imports its library at its top. A module may add several
# words (``evaluation.cli``: models, score, analyze, leaderboard); ``leaderboard.cli`` adds the service's commands
# under ``ratio leaderboard`` after ``evaluation.cli`` has made it. ``tests/test_cli.py`` checks that each line
# here is the one its module registers.
COMMANDS: dict[str, tuple[tuple[str, ...], str]] = {
    "corpus": (("corpus.cli",), "corpus stage: stats, export, segment"),
    "mine": (("mining.cli",), "mining stage: run, stats"),
    "lexicon": (("lexicon.cli",), "marker lexicon tools"),
    "dataset": (
        ("dataset.cli",),
        "release stage: build, append, check, publish, download, release-withheld (silver: ratio judge silver)",
    ),
    "cache": (("retrieval.cli",), "the embedding cache: size report (info) and clean-up (prune)"),
    "models": (("evaluation.cli",), "list the models that can be scored and where their weights are"),
    "score": (("evaluation.cli",), "score models on a release split (shared corpus, all three relations)"),
    "analyze": (
        ("evaluation.cli",),
        "analyses: oracle filtering, lexical overlap, mined-role precision, move sensitivity, drift",
    ),
    "leaderboard": (
        ("evaluation.cli", "leaderboard.cli"),
        "validate and render leaderboard results, one table per release",
    ),
    "judge": (("judge.cli",), "LLM judge tools"),
    "index": (("serve.cli",), "build a search index over a release split or your own papers"),
    "search": (("serve.cli",), "find inspirations for one sentence in an index"),
    "serve": (("serve.cli",), "serve an index: JSON API, OpenAPI docs and a search page"),
    "mcp": (("serve.cli",), "serve an index's search as MCP tools for agents (stdio, or --http)"),
    "train": (("training.cli",), "training stage: run, all, card, publish"),
}


INSTALL_CHECK = "retrieval.install_check"  # python -m ratio_bench with no arguments: loaded like a group


def install_check() -> int:
    """The install report of ``python -m ratio_bench`` (its module loaded only then, as a command group is)."""
    return importlib.import_module(f"ratio_bench.{INSTALL_CHECK}").print_install_check()


def build_parser(words: Iterable[str] | None = None) -> argparse.ArgumentParser:
    """The ``ratio`` parser with the command groups of ``words`` (default: every group) registered in full.

    The other groups are listed by name and help line only; ``main`` passes the words the user typed, so a
    command imports its own stage and nothing else.
    """
    parser = OneLineParser(prog="ratio", description=__doc__)
    parser.add_argument("--version", action="version", version=f"ratio-bench {__version__}")
    parser.add_argument(
        "--debug", action="store_true", help="show full tracebacks (also RATIO_DEBUG=1); accepted anywhere"
    )
    sub = parser.add_subparsers(dest="command", required=True)
    chosen = set(COMMANDS) if words is None else set(words) & set(COMMANDS)
    modules = [m for word in chosen for m in COMMANDS[word][0]]
    for name in dict.fromkeys(m for _, (ms, _) in COMMANDS.items() for m in ms):  # table order, each once
        if name in modules:
            importlib.import_module(f"ratio_bench.{name}").register(sub)
    for word, (_, line) in COMMANDS.items():
        if word not in sub.choices:
            sub.add_parser(word, help=line, add_help=False)
    return parser


# The spellings before stages had their own names, kept for one release: old word -> the new words.
ALIASES: dict[str, tuple[str, ...]] = {
    "segment": ("corpus", "segment"),
    "mine": ("mine", "run"),
    "mine-stats": ("mine", "stats"),
    "build": ("dataset", "build"),
    "check": ("dataset", "check"),
    "publish": ("dataset", "publish"),
    "silver": ("judge", "silver"),
    "train": ("train", "run"),
    "train-all": ("train", "all"),
    "model-card": ("train", "card"),
    "publish-models": ("train", "publish"),
}
ALIASES_REMOVED_IN = "0.3"
GROUP_WORDS = ("-h", "--help")  # after a stage's name: its own help, not an old spelling's


def resolve_alias(words: list[str], subcommands: dict[str, set[str]]) -> tuple[list[str], str | None]:
    """(the words in the new spelling, the old spelling or None) of a command line without ``--debug``.

    ``mine`` and ``train`` were commands and are now stages: followed by one of the stage's commands (or by
    ``-h``) they are the stage, followed by anything else they are the old command.
    """
    if not words or words[0] not in ALIASES:
        return words, None
    old, new = words[0], ALIASES[words[0]]
    if old == new[0] and len(words) > 1 and (words[1] in subcommands.get(old, ()) or words[1] in GROUP_WORDS):
        return words, None
    if old == new[0] and len(words) == 1:
        return words, None
    return [*new, *words[1:]], old


def handler(func: Callable[[argparse.Namespace], int] | str) -> Callable[[argparse.Namespace], int]:
    """A command's handler: ``"ratio_bench.judge.commands:cmd_label"`` (what a stage's parser names, so building
    it imports no library: ``ratio judge label --help`` stays quick) imported now, or a function as it is."""
    if not isinstance(func, str):
        return func
    module, _, name = func.partition(":")
    return getattr(importlib.import_module(module), name)


def _groups(words: Sequence[str]) -> set[str]:
    """The command groups a command line needs: its first word's, and the group an old spelling of it is now."""
    first = next((w for w in words if not w.startswith("-")), None)
    return {first, *ALIASES.get(first, ())[:1]} - {None}


def _subcommands(parser: argparse.ArgumentParser) -> dict[str, set[str]]:
    """Each stage's command names, read from the parser (so the aliases cannot drift from it)."""
    found: dict[str, set[str]] = {}
    for action in parser._subparsers._group_actions:  # the one sub-parsers action of `ratio`
        for name, stage in action.choices.items():
            nested = [a for a in stage._actions if isinstance(a, argparse._SubParsersAction)]
            if nested:
                found[name] = set(nested[0].choices)
    return found


def _leaf_parser(parser: argparse.ArgumentParser, words: Sequence[str]) -> argparse.ArgumentParser:
    """The parser of the command ``words`` chose (``dataset build``: the ``build`` parser of ``dataset``)."""
    for word in words:
        nested = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        if not nested or word not in nested[0].choices:
            break
        parser = nested[0].choices[word]
    return parser


def with_option(exc: BaseException, args: argparse.Namespace, parser: argparse.ArgumentParser) -> str:
    """``exc``'s message, led by the option that gave the value it is about (``--out DIR: ...``).

    Library errors name the value (:attr:`RatioError.value`); only the command line knows which option held
    it. A positional argument, or a value from a config file, is shown as the library wrote it.
    """
    value = getattr(exc, "value", None)
    if value is not None:
        for action in _leaf_parser(parser, _command_name(args).split())._actions:
            given = getattr(args, action.dest, None) if action.option_strings else None
            given = given if isinstance(given, list) else [given]
            if any(g is not None and str(g) == str(value) for g in given):
                return f"{max(action.option_strings, key=len)} {exc}"
    return str(exc)


def _command_name(args: argparse.Namespace) -> str:
    """``corpus stats``, ``judge label``, ``build``: the words that chose the command, for error messages."""
    words = [args.command]
    nested = getattr(args, f"{args.command}_command", None)
    if nested:
        words.append(nested)
    return " ".join(words)


def _write_traceback() -> Path | None:
    """Save the current exception's traceback to a private file so the console shows one line only."""
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
    given = sys.argv[1:] if argv is None else list(argv)
    words = [w for w in given if w != "--debug"]  # accepted anywhere, not only before the command
    debug = len(words) < len(given) or os.environ.get("RATIO_DEBUG", "") not in ("", "0")
    parser = build_parser(_groups(words))
    words, old = resolve_alias(words, _subcommands(parser))
    if old is not None:
        parser = build_parser(_groups(words))
    if old is not None:
        print(
            f"ratio {old}: note: `ratio {old}` is now `ratio {' '.join(ALIASES[old])}`; the old spelling goes "
            f"in {ALIASES_REMOVED_IN}",
            file=sys.stderr,
        )
    args, unknown = parser.parse_known_args(words)
    if unknown:  # said by the command's own parser, so the message names `ratio search`, not `ratio`
        _leaf_parser(parser, _command_name(args).split()).error(
            f"unrecognized arguments: {' '.join(unknown)}"
        )
    forget_outputs()  # outputs noted by an earlier command of this process are not this one's
    if debug:
        return handler(args.func)(args)
    name = f"ratio {old or _command_name(args)}"
    try:
        return handler(args.func)(args)
    except RatioError as exc:
        print(f"{name}: error: {with_option(exc, args, parser)}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print(
            f"{name}: interrupted (finished outputs are kept; re-run the same command to resume)",
            file=sys.stderr,
        )
        return 130
    except BrokenPipeError:  # the reader stopped early (`| head`): it has what it asked for
        _quiet_stdout()
        return 141  # as a command killed by SIGPIPE exits
    except ModuleNotFoundError as exc:  # an optional extra that is not installed: say which to install
        missing = missing_extra(exc)
        if missing is None:
            return _internal_error(name, exc)
        print(f"{name}: error: {missing}", file=sys.stderr)
        return missing.exit_code
    except Exception as exc:
        message = faults.describe(exc, args)
        if message is None and isinstance(exc, OSError) and exc.filename is not None:
            message = f"{exc.filename}: {exc.strerror or exc}"
        if message is None:
            return _internal_error(name, exc)
        print(f"{name}: error: {message}", file=sys.stderr)
        return 1


def _quiet_stdout() -> None:
    """Point stdout at /dev/null, so that the interpreter's last flush at exit finds no closed pipe either."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)


def _internal_error(name: str, exc: BaseException) -> int:
    where = _write_traceback()
    saved = f"traceback saved to {where}" if where else "re-run with --debug for the traceback"
    print(f"{name}: internal error: {type(exc).__name__}: {exc} ({saved}; please report it)", file=sys.stderr)
    return 1


def run() -> None:
    """The ``ratio`` program: :func:`main`, then exit at once after Ctrl-C.

    Python joins worker threads before it exits, so a judge request in flight would hold an interrupted run for
    up to its timeout. Every output is already finished or rolled back when :func:`main` returns (atomic
    writes, replies cached one by one), so the process ends without waiting for them.
    """
    code = main()
    if code == 130 and any(t.is_alive() and not t.daemon for t in threading.enumerate()[1:]):
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    sys.exit(code)


if __name__ == "__main__":
    run()
