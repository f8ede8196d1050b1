"""One table of bad inputs across the commands: each is one error line naming the culprit, no traceback,
nothing of the user's deleted (a sentinel file and folder are snapshotted before and after)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cli_helpers import assert_user_error, run_ratio


def fixture_files(tmp: Path) -> dict[str, Path]:
    corpus = tmp / "corpus"
    corpus.mkdir()
    (corpus / "a.jsonl").write_text(
        json.dumps({"id": "p1", "text": "A short paper."}) + "\n", encoding="utf-8"
    )
    bad_yaml = tmp / "bad.yaml"
    bad_yaml.write_text("release: [unclosed\n", encoding="utf-8")
    unknown = tmp / "unknown.yaml"
    unknown.write_text("relase: {name: x}\n", encoding="utf-8")
    notrelease = tmp / "mine"
    notrelease.mkdir()
    (notrelease / "thesis.txt").write_text("my thesis", encoding="utf-8")
    (notrelease / "sub").mkdir()
    (notrelease / "sub" / "data.csv").write_text("a,b\n1,2\n", encoding="utf-8")
    fakerel = tmp / "fakerel"
    fakerel.mkdir()
    (fakerel / "manifest.json").write_text(json.dumps({"kind": "release", "config": {}}), encoding="utf-8")
    (tmp / "empty.parquet").write_bytes(b"")
    badjson = tmp / "sub.json"
    badjson.write_bytes(b"\xff\xfe not json")
    return {
        "corpus": corpus,
        "bad_yaml": bad_yaml,
        "unknown": unknown,
        "mine": notrelease,
        "badjson": badjson,
        "fakerel": fakerel,
    }


# (case id, argv with {placeholders}, culprits in the error line, exit code)
CASES = [
    ("stats-missing-path", ["corpus", "stats", "{tmp}/nope", "--quiet"], ["nope"], 1),
    ("stats-bad-format", ["corpus", "stats", "{corpus}", "--format", "xml"], ["--format"], 2),
    ("export-missing-path", ["corpus", "export", "{tmp}/nope", "--out", "{tmp}/o.parquet"], ["nope"], 1),
    (
        "mine-workers-0",
        ["mine", "--corpus", "{corpus}", "--out", "{tmp}/m", "--workers", "0"],
        ["--workers"],
        2,
    ),
    (
        "mine-option-no-eq",
        ["mine", "--corpus", "{corpus}", "--out", "{tmp}/m", "--executor-option", "x"],
        ["--executor-option", "'x'"],
        2,
    ),
    (
        "mine-option-bad-yaml",
        ["mine", "--corpus", "{corpus}", "--out", "{tmp}/m", "--executor-option", "x=[1,"],
        ["--executor-option", "YAML"],
        2,
    ),
    ("mine-into-user-folder", ["mine", "--corpus", "{corpus}", "--out", "{mine}", "--quiet"], [], 0),
    ("build-missing-config", ["build", "--config", "{tmp}/none.yaml", "--out", "{tmp}/r"], ["none.yaml"], 1),
    ("build-bad-yaml", ["build", "--config", "{bad_yaml}", "--out", "{tmp}/r"], ["bad.yaml"], 1),
    ("build-unknown-key", ["build", "--config", "{unknown}", "--out", "{tmp}/r"], ["relase", "release"], 1),
    ("build-workers-0", ["build", "--config", "{unknown}", "--workers", "0"], ["--workers"], 2),
    ("check-not-release", ["check", "{mine}"], ["no readable manifest.json"], 1),
    ("check-missing", ["check", "{tmp}/none"], ["none"], 1),
    ("publish-not-release", ["publish", "{mine}", "--repo-id", "o/n"], ["mine"], 1),
    ("silver-not-release", ["silver", "--dataset", "{mine}", "--model", "m"], ["--dataset", "mine"], 1),
    (
        "silver-sample-zero",
        ["silver", "--dataset", "{mine}", "--sample", "broaden=0"],
        ["--sample", "broaden=0"],
        2,
    ),
    (
        "silver-sample-typo",
        ["silver", "--dataset", "{mine}", "--sample", "broaen=5"],
        ["broaen", "broaden"],
        2,
    ),
    (
        "silver-sample-text",
        ["silver", "--dataset", "{mine}", "--sample", "specify=many"],
        ["specify=many"],
        2,
    ),
    (
        "judge-param-no-eq",
        ["silver", "--dataset", "{fakerel}", "--model", "m", "--param", "effort"],
        ["--param", "'effort'"],
        2,
    ),
    ("silver-no-model", ["silver", "--dataset", "{fakerel}"], ["--model"], 2),
    (
        "build-strict-bad-yaml",
        ["build", "--strict", "--config", "{bad_yaml}", "--out", "{tmp}/r"],
        ["bad.yaml"],
        1,
    ),
    (
        "index-model-empty",
        ["index", "--dataset", "{mine}", "--model", "address=", "--out", "{tmp}/i"],
        ["--model", "address="],
        2,
    ),
    ("segment-unknown", ["segment", "--segmenter", "nope"], ["nope"], 1),
    ("score-missing-results", ["leaderboard", "{tmp}/none"], ["none"], 1),
    (
        "index-model-typo",
        ["index", "--dataset", "{mine}", "--model", "adress=x", "--out", "{tmp}/i"],
        ["--model", "adress", "address"],
        2,
    ),
    ("search-no-index", ["search", "--index", "{tmp}/none", "q"], ["none"], 1),
    ("search-not-index", ["search", "--index", "{mine}", "q"], ["mine"], 1),
    ("leaderboard-not-utf8", ["leaderboard", "{badjson}"], [], 0),
    ("models-bad-flag", ["models", "--bogus"], ["--bogus"], 2),
    (
        "train-missing-config",
        ["train", "--config", "{tmp}/none.yaml", "--dataset", "{mine}", "--out", "{tmp}/t"],
        ["none.yaml"],
        1,
    ),
    (
        "stats-empty-parquet",
        ["corpus", "stats", "{tmp}/empty.parquet", "--quiet", "--strict"],
        ["empty.parquet"],
        1,
    ),
    ("serve-no-index", ["serve", "--index", "{tmp}/none"], ["none"], 1),
    (
        "train-unknown-config-key",
        ["train", "--config", "{unknown}", "--dataset", "{mine}", "--out", "{tmp}/t"],
        ["unknown.yaml", "relase"],
        1,
    ),
    (
        "judge-estimate-missing-release",
        ["judge", "estimate", "--dataset", "{tmp}/none", "--pairs", "1", "1", "1"],
        ["--dataset", "none"],
        1,
    ),
    (
        "judge-estimate-negative",
        ["judge", "estimate", "--dataset", "{fakerel}", "--pairs", "-5", "0", "0"],
        ["--pairs"],
        2,
    ),
    (
        "judge-candidates-not-release",
        [
            "judge",
            "candidates",
            "--dataset",
            "{mine}",
            "--run",
            "{tmp}/r",
            "--out",
            "{tmp}/j",
            "--model",
            "m",
        ],
        ["--dataset", "mine"],
        1,
    ),
    ("score-not-release", ["score", "--model", "bm25", "--dataset", "{mine}"], ["mine"], 1),
    (
        "score-release-no-split",
        ["score", "--model", "bm25", "--dataset", "{fakerel}"],
        ["fakerel", "test"],
        1,
    ),
    ("score-relation-typo", ["score", "--model", "bm25", "--relations", "adress"], ["adress"], 2),
    ("score-qrels-typo", ["score", "--model", "bm25", "--qrels", "judged-medium"], ["--qrels"], 2),
    (
        "silver-workers-0",
        ["silver", "--dataset", "{fakerel}", "--model", "m", "--workers", "0"],
        ["--workers"],
        2,
    ),
    (
        "silver-base-url-no-scheme",
        ["silver", "--dataset", "{fakerel}", "--model", "m", "--base-url", "localhost:8080/v1"],
        ["--base-url", "localhost:8080/v1"],
        2,
    ),
]


def snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.mark.parametrize(("argv", "culprits", "code"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_bad_input(tmp_path: Path, argv: list[str], culprits: list[str], code: int) -> None:
    files = fixture_files(tmp_path)
    before = snapshot(files["mine"])
    args = [a.format(tmp=tmp_path, **files) for a in argv]
    run = run_ratio(*args, cwd=tmp_path, timeout=120)
    if code == 0:  # mine writes its outputs beside the user's files and touches none of them
        assert run.code == 0 and "Traceback" not in run.err, run.err
    elif args[0] == "check":  # a pass/fail table, not an error line
        assert (
            run.code == code and "Traceback" not in run.err and all(c in run.out + run.err for c in culprits)
        )
    else:
        assert_user_error(run, *culprits, code=code)
    after = snapshot(files["mine"])
    assert {k: after.get(k) for k in before} == before  # every file of the user's, byte for byte
