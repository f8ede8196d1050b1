import json
import shlex
import subprocess
import sys
from pathlib import Path

from ratio_bench.cli import main


def test_segment_reads_stdin_and_prints_one_sentence_per_line():
    text = "First sentence, e.g. with an abbreviation. Second\nsentence wraps.\n\nNew paragraph here. Done."
    out = subprocess.run(
        [sys.executable, "-m", "ratio_bench.cli", "segment"],
        input=text,
        text=True,
        capture_output=True,
        check=True,
    ).stdout
    assert out.splitlines() == [
        "First sentence, e.g. with an abbreviation.",
        "Second sentence wraps.",
        "New paragraph here.",
        "Done.",
    ]


def test_corpus_stats_report_json_and_rejects(fixture_corpus, tmp_path, capsys):
    report, rejects = tmp_path / "report.json", tmp_path / "rejects.jsonl"
    assert (
        main(
            [
                "corpus",
                "stats",
                str(fixture_corpus),
                "--json",
                str(report),
                "--rejects",
                str(rejects),
                "--quiet",
            ]
        )
        == 0
    )
    printed = capsys.readouterr().out
    assert "fulltext.parquet" in printed and "TOTAL" in printed
    data = json.loads(report.read_text())
    total = data["total"]
    assert total["papers_read"] == 5 and total["papers_kept"] == 4
    assert total["rejected"] == {"no_text": 1} and total["flagged"] == {"unparsable_date": 1}
    assert total["date_precision"] == {"day": 1, "month": 1, "range": 1, "unknown": 1}
    assert total["sentences"] > 20 and total["paragraphs_by_category"]["appendix"] == 2
    assert len(rejects.read_text().splitlines()) == 2


def test_mine_cli(fixture_corpus, tmp_path, capsys):
    out = tmp_path / "m"
    assert main(["mine", "--corpus", str(fixture_corpus), "--out", str(out), "--quiet"]) == 0
    assert "Mining: lexicon" in capsys.readouterr().out
    assert json.loads((out / "stats.json").read_text())["tuples"]["address"] == 3
    assert main(["mine-stats", str(out)]) == 0


def test_lexicon_check(capsys, tmp_path, monkeypatch):
    assert main(["lexicon", "check"]) == 0
    out = capsys.readouterr().out
    assert "address" in out and out.splitlines()[-1].startswith("ratio lexicon check: PASS (")
    from ratio_bench.lexicon import Lexicon

    monkeypatch.setattr(Lexicon, "connective_conflicts", lambda self: ["'thus' is both address and specify"])
    assert main(["lexicon", "check"]) == 1
    assert capsys.readouterr().out.splitlines()[-1] == "ratio lexicon check: FAIL: 1 connective conflicts"


def test_corpus_export_writes_the_paper_schema(fixture_corpus, tmp_path):
    import pyarrow.parquet as pq

    from ratio_bench.corpus.records import PAPER_SCHEMA

    out = tmp_path / "papers.parquet"
    assert main(["corpus", "export", str(fixture_corpus), "--out", str(out), "--quiet"]) == 0
    table = pq.read_table(out)
    assert table.schema == PAPER_SCHEMA and table.num_rows == 4
    nougat = next(r for r in table.to_pylist() if r["paper_id"] == "fx/nougat")
    assert nougat["title"] == "Gated Residual Message Passing for Deep Graph Networks"
    first = nougat["paragraphs"][0]
    assert first["category"] == "abstract" and len(first["sentences"]) == 2


def test_user_error_is_one_line_without_traceback(tmp_path):
    from tests.helpers.cli import assert_user_error, run_ratio

    missing = tmp_path / "nope.yaml"
    line = assert_user_error(run_ratio("build", "--config", missing, "--out", tmp_path / "out"), str(missing))
    assert line.startswith("ratio build: error:")


def test_debug_shows_the_traceback(tmp_path):
    from tests.helpers.cli import run_ratio

    run = run_ratio("--debug", "lexicon", "check", "--lexicon", tmp_path)
    assert run.code != 0 and "Traceback" in run.err


def test_stage_commands_sit_under_the_stage_name(capsys):
    from ratio_bench.cli import _subcommands, build_parser

    stages = _subcommands(build_parser())
    assert (
        stages["dataset"]
        == {"build", "check", "publish", "append", "download", "release-withheld", "publish-custody"}
        and "silver" in stages["judge"]
    )
    assert stages["mine"] == {"run", "stats"} and stages["train"] == {
        "run",
        "all",
        "card",
        "publish",
        "adapters",
    }
    assert {"segment", "stats", "export"} <= stages["corpus"]


def test_an_old_spelling_runs_the_new_command_after_one_note(tmp_path, capsys):
    from ratio_bench.cli import _subcommands, build_parser, resolve_alias

    stages = _subcommands(build_parser())
    assert resolve_alias(["mine", "--corpus", "c", "--out", "o"], stages) == (
        ["mine", "run", "--corpus", "c", "--out", "o"],
        "mine",
    )
    assert resolve_alias(["mine", "stats", "o"], stages) == (["mine", "stats", "o"], None)
    assert resolve_alias(["train", "--help"], stages) == (["train", "--help"], None)
    assert resolve_alias(["model-card", "d"], stages) == (["train", "card", "d"], "model-card")
    missing = str(tmp_path / "absent")
    new_code = main(["dataset", "check", missing])
    new_err = capsys.readouterr().err
    old_code = main(["check", missing])
    old_err = capsys.readouterr().err.splitlines()
    assert old_code == new_code == 1
    assert (
        old_err[0]
        == "ratio check: note: `ratio check` is now `ratio dataset check`; the old spelling goes in 0.3"
    )
    assert old_err[1] == new_err.strip().replace("ratio dataset check:", "ratio check:")


def test_a_bad_choice_is_one_line_naming_the_value_and_the_choices(capsys):
    import pytest

    from ratio_bench.cli import main

    for argv, line in (
        (
            ["score", "--model", "bm25", "--via", "xx"],
            "ratio score: error: --via 'xx': not one of ratio, mteb",
        ),
        (
            ["score", "--relations", "adress"],
            "ratio score: error: --relations 'adress': not one of address, broaden",
        ),
        (["dataset", "nope"], "ratio dataset: error: command 'nope': not one of build, append"),
        (["analyze", "oracel"], "ratio analyze: error: analysis 'oracel': not one of oracle, overlap"),
    ):
        with pytest.raises(SystemExit) as exit_:
            main(argv)
        err = capsys.readouterr().err
        assert exit_.value.code == 2
        assert err.count("\n") == 1 and err.startswith(line) and "usage:" not in err, err
        assert err.rstrip().endswith(f"(see `{line.split(': ')[0]} --help`)")


def test_a_reader_that_stops_early_gets_no_error_and_no_traceback():
    """``ratio leaderboard --json | head -1``: the pipe closes under a long output; the command ends quietly with
    the status of a command killed by SIGPIPE, not an "internal error"."""
    results = Path(__file__).resolve().parents[1] / "eval" / "results"
    proc = subprocess.run(
        f"{shlex.quote(sys.executable)} -m ratio_bench.cli leaderboard {shlex.quote(str(results))} --json | head -1;"
        " exit ${PIPESTATUS[0]}",
        shell=True, executable="/bin/bash", capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert proc.stdout.startswith("[") and proc.stderr == "", proc.stderr
    assert proc.returncode == 141


def test_the_command_table_is_what_the_stages_register():
    """``cli.COMMANDS`` lists each group without importing it; its help lines must be the ones the stages add."""
    from ratio_bench.cli import COMMANDS, build_parser

    full = build_parser()._subparsers._group_actions[0]
    registered = {a.dest: a.help for a in full._choices_actions}
    assert registered == {word: line for word, (_, line) in COMMANDS.items()}
    lazy = build_parser([])._subparsers._group_actions[0]
    assert [a.dest for a in lazy._choices_actions] == list(COMMANDS)  # the same list, in the same order


def test_help_and_version_load_no_stage():
    """``ratio --help`` and ``ratio --version`` import the command table only; ``ratio corpus`` only its stage."""
    code = (
        "import sys, contextlib, io\n"
        "from ratio_bench.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    try: main(sys.argv[1:])\n"
        "    except SystemExit: pass\n"
        "stages = ('corpus', 'mining', 'lexicon', 'dataset', 'retrieval', 'evaluation', 'judge', 'serve', "
        "'training', 'leaderboard')\n"
        "print(sorted({m.split('.')[1] for m in sys.modules if m.startswith('ratio_bench.') and "
        "m.split('.')[1] in stages}))\n"
    )
    for words, loaded in ((["--help"], "[]"), (["--version"], "[]"), (["corpus", "--help"], "['corpus']")):
        out = subprocess.run([sys.executable, "-c", code, *words], capture_output=True, text=True, check=True)
        assert out.stdout.strip().splitlines()[-1] == loaded, (words, out.stdout, out.stderr)


def test_an_unknown_flag_is_named_by_the_command_it_was_given_to(tmp_path):
    from tests.helpers.cli import run_ratio

    run = run_ratio("judge", "prompts", "--no-such-flag")
    assert run.code == 2 and run.err.strip().splitlines()[-1] == (
        "ratio judge prompts: error: unrecognized arguments: --no-such-flag (see `ratio judge prompts --help`)"
    )


def _parsers(parser):
    """Every parser below ``parser`` (itself included), depth first."""
    yield parser
    for action in parser._actions:
        for sub in getattr(action, "choices", None) or {}:
            if isinstance(action.choices, dict):
                yield from _parsers(action.choices[sub])


def test_every_command_names_a_handler_that_exists():
    """A parser names its handler as ``module:function`` (so building it imports no library); each must resolve
    to a function of the stage's ``commands`` module."""
    from ratio_bench.cli import build_parser, handler

    named = {p.get_default("func") for p in _parsers(build_parser())} - {None}
    assert len(named) > 40
    for func in named:
        assert isinstance(func, str) and func.split(":")[0].endswith(".commands"), func
        assert callable(handler(func)), func


def test_a_sub_commands_help_loads_no_library():
    """``ratio score --help`` and every other group's help import the stage's parsers, not torch, the encoder,
    DuckDB, faiss or FastAPI (the handlers import those when the command runs)."""
    code = (
        "import sys, contextlib, io\n"
        "from ratio_bench.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    try: main(sys.argv[1:])\n"
        "    except SystemExit: pass\n"
        "heavy = ('torch', 'sentence_transformers', 'transformers', 'duckdb', 'faiss', 'fastapi')\n"
        "print(sorted(m for m in heavy if m in sys.modules))\n"
    )
    from ratio_bench.cli import COMMANDS

    for word in COMMANDS:
        out = subprocess.run([sys.executable, "-c", code, word, "--help"], capture_output=True, text=True)
        assert out.stdout.strip().splitlines()[-1] == "[]", (word, out.stdout[-300:], out.stderr[-500:])
