"""One table of bad inputs across the commands: each is one error line naming the culprit, no traceback,
nothing of the user's deleted (a sentinel file and folder are snapshotted before and after). A run that
succeeds on dirty input must account for every record: read = kept + rejected, and each rejection is in the
rejects file."""

from __future__ import annotations

import json
import shutil
import sqlite3
from collections import Counter
from pathlib import Path

import pytest
from tests.helpers.cli import assert_user_error, run_ratio
from tests.helpers.entries import ranked_entry
from tests.helpers.ports import unused_url


def fixture_files(tmp: Path) -> dict[str, Path]:
    corpus = tmp / "corpus"
    corpus.mkdir()
    (
        corpus / "a.jsonl"
    ).write_text(  # one good paper, then a line that is no JSON and a text that is a number
        json.dumps({"id": "p1", "text": "A short paper."})
        + "\nnot json\n"
        + json.dumps({"id": "p2", "text": 5})
        + "\n",
        encoding="utf-8",
    )
    bad_yaml = tmp / "bad.yaml"
    bad_yaml.write_text("release: [unclosed\n", encoding="utf-8")
    unknown = tmp / "unknown.yaml"
    unknown.write_text("relase: {name: x}\n", encoding="utf-8")
    (tmp / "dev").write_text("release: [a file named like the dev preset\n", encoding="utf-8")  # never read
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
    old_cache = notrelease / "replies.sqlite"  # a judge cache of schema 1 (keys without the judge's identity)
    with sqlite3.connect(old_cache) as con:
        con.execute("CREATE TABLE replies (key TEXT PRIMARY KEY, model TEXT, content TEXT)")
        con.execute("PRAGMA user_version = 1")
    con.close()
    labels = tmp / "labels.jsonl"
    labels.write_text(
        json.dumps({"relation": "address", "query": "q.", "gold": "g.", "annotator": "a", "label": True})
        + "\n",
        encoding="utf-8",
    )
    # group D: lone surrogates (JSON "\ud800" escapes) in a record's text, title, id and date
    surrogates = tmp / "surrogates"
    surrogates.mkdir()
    good = {"id": "p1", "text": "A paper long enough to be indexed as one candidate sentence."}
    bad = [good | {"text": "A \ud800 paper."}, good | {"title": "\udfff"}, good | {"id": "p\ud800"}]
    lines = [good, *bad, good | {"date": "2020-\ud800"}]
    (surrogates / "s.jsonl").write_text("".join(json.dumps(r) + "\n" for r in lines), encoding="utf-8")
    # group D: alias bombs (10^9 values from nine lines) in an otherwise valid build config
    bomb = "    l0: &l0 [x, x, x, x, x, x, x, x, x, x]\n"
    bomb += "".join(f"    l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * 10)}]\n" for i in range(1, 9))
    rest = "lexicon: lex.yaml\ncorpus: {paths: [corpus]}\nsplits:\n  train: {end: 2020-12-31}\n"
    rest += "  validation: {start: 2021-01-01, end: 2021-12-31}\n  test: {start: 2022-01-01}\n"
    name_bomb, judge_bomb = tmp / "name-bomb.yaml", tmp / "judge-bomb.yaml"
    name_bomb.write_text(f"release:\n  version: '1'\n  name:\n{bomb}{rest}", encoding="utf-8")
    judge_bomb.write_text(
        f"release: {{name: r, version: '1'}}\nsilver:\n  judge:\n{bomb}{rest}", encoding="utf-8"
    )
    (tmp / "list.yaml").write_text("- silver\n- judge\n", encoding="utf-8")
    for name, block in (  # snapshots: a period that is none, an empty pool, a misspelt key
        ("snap-period", "{period: week, pool_size: 10}"),
        ("snap-pool", "{period: month, pool_size: 0}"),
        ("snap-key", "{period: month, pool_size: 10, min_querys: 3}"),
    ):
        (tmp / f"{name}.yaml").write_text(f"release: {{name: r, version: '1'}}\n{rest}snapshots: {block}\n")
    (tmp / "judge-list.yaml").write_text("silver: {judge: [temperature, 0]}\n", encoding="utf-8")
    # analyze drift: an entry on a snapshot the release does not have (scored on another release)
    snapentries = tmp / "snapentries"
    snapentries.mkdir()
    entry = ranked_entry("bm25", {"address": [1, 0, 2]}, split="test_2022_01")
    (snapentries / "test_2022_01.json").write_text(json.dumps(entry), encoding="utf-8")
    return {
        "snapentries": snapentries,
        "corpus": corpus,
        "surrogates": surrogates,
        "name_bomb": name_bomb,
        "judge_bomb": judge_bomb,
        "bad_yaml": bad_yaml,
        "unknown": unknown,
        "mine": notrelease,
        "badjson": badjson,
        "fakerel": fakerel,
        "labels": labels,
    }


WORKER = ["leaderboard", "worker", "--requests", "o/q", "--results", "o/r", "--dataset", "{tmp}"]

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
    (  # a file named dev in the working folder does not shadow the dev preset
        "build-preset-not-shadowed",
        ["build", "--config", "dev", "--out", "{tmp}/r"],
        ["--config dev", "shipped preset needs --corpus"],
        2,
    ),
    (
        "append-version-outside",
        ["dataset", "append", "--dataset", "{strayrel}", "--corpus", "{corpus}", "--version", "../../x"],
        ["--version '../../x'", "not a version"],
        1,
    ),
    (
        "append-version-newline",
        ["dataset", "append", "--dataset", "{strayrel}", "--corpus", "{corpus}", "--version", "0.3\n## x"],
        ["--version '0.3\\n## x'", "not a version"],
        1,
    ),
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
        ["judge", "estimate", "--dataset", "{tmp}/none"],
        ["--dataset", "none", "ratio dataset build"],
        1,
    ),
    (
        "judge-estimate-pairs-missing-release",
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
    (
        "score-release-no-split",
        ["score", "--model", "bm25", "--dataset", "{fakerel}"],
        ["fakerel", "test"],
        1,
    ),
    ("score-qrels-typo", ["score", "--model", "bm25", "--qrels", "judged-medium"], ["--qrels"], 2),
    (
        "judge-estimate-not-release",
        ["judge", "estimate", "--dataset", "{mine}"],
        ["--dataset", "mine", "manifest.json"],
        1,
    ),
    (
        "silver-base-url-no-scheme",
        ["silver", "--dataset", "{fakerel}", "--model", "m", "--base-url", "localhost:8080/v1"],
        ["--base-url", "localhost:8080/v1", "http://"],
        2,
    ),
    (
        "calibrate-base-url-no-scheme",
        ["judge", "calibrate", "--labels", "{labels}", "--model", "m", "--base-url", "127.0.0.1:8080"],
        ["--base-url", "127.0.0.1:8080"],
        2,
    ),
    (
        "silver-old-cache",
        [
            "silver",
            "--dataset",
            "{fakerel}",
            "--model",
            "m",
            "--base-url",
            unused_url("/v1"),
            "--cache",
            "{mine}/replies.sqlite",
        ],
        ["--cache", "replies.sqlite", "new --cache"],
        1,
    ),
    (
        "silver-workers-0",
        ["silver", "--dataset", "{fakerel}", "--model", "m", "--workers", "0"],
        ["--workers", "0"],
        2,
    ),
    (
        "calibrate-workers-0",
        ["judge", "calibrate", "--labels", "{labels}", "--model", "m", "--workers", "0"],
        ["--workers"],
        2,
    ),
    (
        "calibrate-missing-labels",
        ["judge", "calibrate", "--labels", "{tmp}/none.jsonl", "--model", "m"],
        ["none.jsonl"],
        1,
    ),
    (
        "silver-missing-config",
        ["silver", "--dataset", "{fakerel}", "--model", "m", "--config", "{tmp}/none.yaml"],
        ["none.yaml"],
        1,
    ),
    (
        "score-not-release",
        ["score", "--model", "bm25", "--dataset", "{mine}"],
        ["--dataset", "mine", "ratio dataset build"],
        1,
    ),
    (
        "score-missing-model",
        ["score", "--model", "{tmp}/nomodel", "--dataset", "{release}", "--cache-dir", "{tmp}/cache"],
        ["--model", "nomodel"],
        1,
    ),
    (
        "score-unknown-relation",
        ["score", "--model", "bm25", "--dataset", "{release}", "--relations", "adress"],
        ["--relations", "adress"],
        2,
    ),
    (
        "index-not-release",
        ["index", "--dataset", "{mine}", "--model", "bm25", "--out", "{tmp}/i"],
        ["--dataset", "mine"],
        1,
    ),
    ("check-tampered", ["check", "{tampered}"], ["checksums", "changed: README.md"], 1),
    (
        "stats-strict-dirty",
        ["corpus", "stats", "{corpus}", "--strict", "--quiet"],
        ["a.jsonl", "line:2", "--strict"],
        1,
    ),
    (
        "mine-strict-dirty",
        ["mine", "--corpus", "{corpus}", "--out", "{tmp}/m", "--strict", "--quiet"],
        ["a.jsonl", "line:2"],
        1,
    ),
    (
        "stats-dirty-report",
        [
            "corpus",
            "stats",
            "{corpus}",
            "--quiet",
            "--json",
            "{tmp}/stats.json",
            "--rejects",
            "{tmp}/rejects.jsonl",
        ],
        [],
        0,
    ),
    # group B
    ("check-truncated-shard", ["check", "{truncated}"], ["shards readable", "data/address/test-"], 1),
    (
        "publish-truncated-shard",
        ["publish", "{truncated}", "--repo-id", "org/name"],
        ["ratio dataset check", "shards readable", "data/address/test-", "nothing was uploaded"],
        1,
    ),
    (
        "rebuild-over-a-user-file",
        ["build", "--config", "dev", "--corpus", "{corpus}", "--out", "{strayrel}", "--quiet"],
        ["--out", "notes.txt", "not the release's own", "Move them away"],
        1,
    ),
    (
        "score-out-user-json",
        ["score", "--model", "bm25", "--dataset", "{release}", "--out", "{strayrel}/settings.json"],
        ["--out", "settings.json", "not a Ratio results file", "another path"],
        1,
    ),
    # group C
    (
        "estimate-prices-bad-yaml",
        ["judge", "estimate", "--dataset", "{fakerel}", "--prices", "{bad_yaml}"],
        ["--prices", "bad.yaml", "line 2", "invalid YAML"],
        1,
    ),
    (
        "estimate-prices-not-a-table",
        ["judge", "estimate", "--dataset", "{fakerel}", "--prices", "{mine}/sub/data.csv"],
        ["--prices", "data.csv", "models:"],
        1,
    ),
    (
        "calibrate-prices-bad-yaml",
        [
            "judge",
            "calibrate",
            "--labels",
            "{labels}",
            "--model",
            "m",
            "--prices",
            "{bad_yaml}",
            "--cache",
            "{tmp}/c.sqlite",
        ],
        ["--prices", "bad.yaml", "invalid YAML"],
        1,
    ),  # fmt: skip
    (
        "silver-config-bad-yaml",
        ["silver", "--dataset", "{fakerel}", "--model", "m", "--config", "{bad_yaml}"],
        ["--config", "bad.yaml", "invalid YAML"],
        1,
    ),
    (
        "silver-config-not-a-mapping",
        ["silver", "--dataset", "{fakerel}", "--model", "m", "--config", "{mine}/sub/data.csv"],
        ["--config", "data.csv", "mapping"],
        1,
    ),
    # group A: model folders and indexes from strangers (broken_inputs below makes {models} and {indexes})
    (
        "score-model-empty",
        ["score", "--model", "", "--dataset", "{release}", "--cache-dir", "{tmp}/cache"],
        ["--model ''", "empty model reference"],
        2,
    ),
    (
        "score-model-not-a-model-folder",
        ["score", "--model", "{mine}", "--dataset", "{release}", "--cache-dir", "{tmp}/cache"],
        ["mine is not a model folder"],
        1,
    ),
    (
        "score-model-no-tokenizer",
        ["score", "--model", "{models}/no-tokenizer", "--dataset", "{release}", "--cache-dir", "{tmp}/cache"],
        ["no-tokenizer: no tokenizer files"],
        1,
    ),
    (
        "score-model-remote-code",
        ["score", "--model", "{models}/remote-code", "--dataset", "{release}", "--cache-dir", "{tmp}/cache"],
        ["remote-code: this model runs its own code", "--trust-remote-code"],
        1,
    ),
    (
        "score-model-pickle",
        ["score", "--model", "{models}/pickle", "--dataset", "{release}", "--cache-dir", "{tmp}/cache"],
        ["pickle/pytorch_model.bin", "pickle"],
        1,
    ),
    (
        "score-model-broken-config",
        [
            "score",
            "--model",
            "{models}/broken-config",
            "--dataset",
            "{release}",
            "--cache-dir",
            "{tmp}/cache",
        ],
        ["broken-config/config.json", "not valid JSON"],
        1,
    ),
    (
        "score-model-truncated-weights",
        ["score", "--model", "{models}/truncated", "--dataset", "{release}", "--cache-dir", "{tmp}/cache"],
        ["truncated/model.safetensors", "damaged weights"],
        1,
    ),
    (
        "index-model-remote-code",
        ["index", "--dataset", "{release}", "--model", "{models}/remote-code", "--out", "{tmp}/i"],
        ["remote-code", "--trust-remote-code"],
        1,
    ),
    (
        "search-index-remote-code",
        ["search", "graph networks", "--index", "{indexes}/remote-code"],
        ["models/bert_none", "--trust-remote-code"],
        1,
    ),
    (
        "serve-index-remote-code",
        ["serve", "--index", "{indexes}/remote-code", "--port", "0"],
        ["models/bert_none", "--trust-remote-code"],
        1,
    ),
    (
        "search-index-path-outside",
        ["search", "graph networks", "--index", "{indexes}/outside"],
        ["manifest field models.bert_none.vectors", "inside the index folder"],
        1,
    ),
    (
        "search-index-truncated-ann",
        ["search", "graph networks", "--index", "{indexes}/truncated-ann"],
        ["ann/bert_none.faiss", "not a readable faiss index"],
        1,
    ),
    # group D
    (
        "build-alias-bomb-name",
        ["build", "--config", "{name_bomb}", "--out", "{tmp}/r"],
        ["name-bomb.yaml", "alias"],
        1,
    ),
    (
        "build-alias-bomb-judge",
        ["build", "--config", "{judge_bomb}", "--out", "{tmp}/r"],
        ["judge-bomb.yaml", "alias bomb"],
        1,
    ),
    (
        "stats-surrogates",
        [
            "corpus",
            "stats",
            "{surrogates}",
            "--quiet",
            "--json",
            "{tmp}/stats.json",
            "--rejects",
            "{tmp}/r.jsonl",
        ],
        [],
        0,
    ),
    ("mine-surrogates", ["mine", "--corpus", "{surrogates}", "--out", "{tmp}/m", "--quiet"], [], 0),
    (
        "export-surrogates",
        [
            "corpus",
            "export",
            "{surrogates}",
            "--out",
            "{tmp}/o.parquet",
            "--rejects",
            "{tmp}/r.jsonl",
            "--quiet",
        ],
        [],
        0,
    ),
    (
        "index-corpus-surrogates",
        [
            "index",
            "--corpus",
            "{surrogates}",
            "--model",
            "bm25",
            "--out",
            "{tmp}/i",
            "--rejects",
            "{tmp}/r.jsonl",
        ],
        [],
        0,
    ),
    (
        "stats-surrogates-strict",
        ["corpus", "stats", "{surrogates}", "--strict", "--quiet"],
        ["s.jsonl", "p1", "invalid_unicode:text", "--strict"],
        1,
    ),
    (
        "silver-config-alias-bomb",
        ["silver", "--dataset", "{fakerel}", "--model", "m", "--config", "{judge_bomb}"],
        ["judge-bomb.yaml", "alias bomb"],
        1,
    ),
    (
        "silver-config-not-mapping",
        ["silver", "--dataset", "{fakerel}", "--model", "m", "--config", "{tmp}/list.yaml"],
        ["list.yaml", "must be a mapping"],
        1,
    ),
    (
        "silver-config-judge-list",
        ["silver", "--dataset", "{fakerel}", "--model", "m", "--config", "{tmp}/judge-list.yaml"],
        ["judge-list.yaml", "silver.judge", "must be a mapping"],
        1,
    ),
    # installed package: shipped presets, no default corpus outside the checkout
    (
        "build-preset-without-corpus",
        ["build", "--config", "dev", "--out", "{tmp}/r"],
        ["--config dev", "--corpus"],
        2,
    ),
    (
        "build-unknown-preset",
        ["build", "--config", "devv", "--out", "{tmp}/r"],
        ["--config devv", "dev, s2orc"],
        1,
    ),
    ("stats-without-corpus", ["corpus", "stats", "--quiet"], ["paths"], 2),
    ("mine-without-corpus", ["mine", "--out", "{tmp}/m"], ["--corpus"], 2),
    (
        "train-unknown-preset",
        ["train", "--config", "nope", "--dataset", "{tmp}", "--out", "{tmp}/t"],
        ["--config nope", "dev/all-MiniLM-L6-v2-generic-address"],
        1,
    ),
    (
        "train-all-unknown-dir",
        ["train-all", "--dir", "devel", "--dataset", "{tmp}", "--out", "{tmp}/t"],
        ["--dir devel", "one of: spec, dev, dev/ablations"],
        1,
    ),
    ("mcp-bad-http", ["mcp", "--index", "{tmp}", "--http", "8000"], ["--http 8000", "HOST:PORT"], 2),
    # leaderboard service (refused before any Hub request)
    (
        "leaderboard-submit-not-a-repo",
        ["leaderboard", "submit", "not a repo", "--requests", "o/q"],
        ["MODEL 'not a repo'", "OWNER/NAME"],
        1,
    ),
    (
        "leaderboard-submit-builtin",
        ["leaderboard", "submit", "bm25", "--requests", "o/q"],
        ["MODEL bm25", "built-in baseline", "ratio score"],
        1,
    ),
    (
        "leaderboard-submit-registered-remote-code",
        ["leaderboard", "submit", "stella-en-1.5b-v5", "--requests", "o/q"],
        ["stella-en-1.5b-v5", "remote code", "never runs"],
        1,
    ),
    (
        "leaderboard-submit-bad-requests",
        ["leaderboard", "submit", "o/m", "--requests", "{tmp}"],
        ["--requests", "OWNER/NAME"],
        1,
    ),
    (
        "leaderboard-worker-short-lease",
        [
            "leaderboard",
            "worker",
            "--requests",
            "o/q",
            "--results",
            "o/r",
            "--dataset",
            "{tmp}",
            "--lease",
            "1",
        ],
        ["--lease", "5 seconds"],
        2,
    ),
    (
        "leaderboard-worker-bad-dataset",
        ["leaderboard", "worker", "--requests", "o/q", "--results", "o/r", "--dataset", "no/such/folder"],
        ["--dataset 'no/such/folder'", "OWNER/NAME"],
        1,
    ),
    ("leaderboard-worker-without-key", WORKER, ["--key", "RATIO_WORKER_KEY", "ratio leaderboard keygen"], 2),
    ("leaderboard-verify-without-results", ["leaderboard", "verify", "o/m:generic"], ["--results"], 2),
    ("leaderboard-queue-without-from", ["leaderboard", "--requests", "o/q"], ["--requests", "--from"], 2),
    ("leaderboard-two-results", ["leaderboard", "{tmp}", "{tmp}/b"], ["one RESULTS", "b'"], 2),
    ("serve-nothing-to-serve", ["serve"], ["--index", "--leaderboard-from"], 2),
    (
        "serve-submissions-without-board",
        ["serve", "--index", "{tmp}", "--allow-submissions"],
        ["--allow-submissions", "--leaderboard-from"],
        2,
    ),
    # leaderboard worker judging (refused before anything is claimed)
    (
        "leaderboard-worker-judge-url-without-model",
        [*WORKER, "--judge-base-url", unused_url("/v1")],
        ["--judge-base-url", "--judge-model NAME"],
        2,
    ),
    (
        "leaderboard-worker-judge-workers-0",
        [*WORKER, "--judge-model", "m", "--judge-workers", "0"],
        ["--judge-workers 0"],
        2,
    ),
    (
        "leaderboard-worker-judge-bad-url",
        [*WORKER, "--judge-model", "m", "--judge-base-url", "ftp://x"],
        ["--judge-base-url 'ftp://x'", "http(s)"],
        2,
    ),
    (
        "leaderboard-worker-judge-sample-0",
        [*WORKER, "--judge-model", "m", "--judge-sample", "0"],
        ["--judge-sample 0"],
        2,
    ),
    # cards and entries tied to their model
    (
        "score-bad-submitter",
        ["score", "--model", "bm25", "--dataset", "{release}", "--submitter", "<b>me</b>"],
        ["--submitter", "letters"],
        2,
    ),
    # group L: the fast path
    (
        "score-sample-0",
        ["score", "--model", "bm25", "--dataset", "{release}", "--sample", "0"],
        ["--sample 0"],
        2,
    ),
    (
        "score-sample-via-mteb",
        ["score", "--model", "all-MiniLM-L6-v2", "--dataset", "{release}", "--sample", "5", "--via", "mteb"],
        ["--sample", "--via mteb"],
        2,
    ),  # training-data cut-offs (refused before any model is resolved or any Hub request)
    (
        "score-training-cutoff-not-a-date",
        ["score", "--model", "bm25", "--dataset", "{release}", "--training-cutoff", "2024-13-01"],
        ["--training-cutoff '2024-13-01'", "YYYY-MM-DD"],
        2,
    ),
    (
        "score-training-cutoff-several-models",
        [
            "score",
            "--model",
            "bm25",
            "bm25-bigram",
            "--dataset",
            "{release}",
            "--training-cutoff",
            "2024-01-01",
        ],
        ["--training-cutoff", "one model"],
        2,
    ),
    (
        "leaderboard-submit-training-cutoff-not-a-date",
        ["leaderboard", "submit", "o/m", "--requests", "o/q", "--training-cutoff", "last June"],
        ["--training-cutoff 'last June'", "YYYY-MM-DD"],
        2,
    ),
    # snapshots
    (
        "build-snapshots-bad-period",
        ["build", "--config", "{tmp}/snap-period.yaml"],
        ["snapshots.period", "week"],
        1,
    ),
    (
        "build-snapshots-pool-0",
        ["build", "--config", "{tmp}/snap-pool.yaml"],
        ["snapshots.pool_size", "0"],
        1,
    ),
    (
        "build-snapshots-unknown-key",
        ["build", "--config", "{tmp}/snap-key.yaml"],
        ["min_querys", "min_queries"],
        1,
    ),
    (
        "score-unknown-split",
        ["score", "--model", "bm25", "--dataset", "{release}", "--split", "test_2030_01"],
        ["test_2030_01", "train, validation, test, mini, silver"],
        1,
    ),
    (
        "score-snapshots-of-a-release-without-any",
        ["score", "--model", "bm25", "--dataset", "{release}", "--split", "snapshots"],
        ["--split snapshots", "no test snapshots", "snapshots:"],
        2,
    ),
    (
        "append-release-without-snapshots",
        ["dataset", "append", "--dataset", "{release}", "--corpus", "{corpus}", "--version", "9"],
        ["no snapshot splits", "snapshots:"],
        1,
    ),
    # uncertainty and the trend
    (
        "leaderboard-trend-without-snapshots",
        ["leaderboard", "{mine}", "--trend", "{tmp}/trend.png"],
        ["--trend", "trend.png", "no entries on test snapshot splits", "ratio score --split test_YYYY_MM"],
        1,
    ),
    # analyze drift
    (
        "drift-no-entries",
        ["analyze", "drift", "--dataset", "{release}", "--results", "{mine}"],
        ["--results", "ratio score --split snapshots --out DIR"],
        1,
    ),
    (
        "drift-another-release",
        ["analyze", "drift", "--dataset", "{release}", "--results", "{snapentries}"],
        ["--results", "results of another release build", "no snapshot test_2022_01"],
        1,
    ),
    (
        "drift-missing-results",
        ["analyze", "drift", "--dataset", "{release}", "--results", "{tmp}/none"],
        ["--results", "none", "no such file or folder"],
        1,
    ),
    (
        "drift-not-release",
        ["analyze", "drift", "--dataset", "{mine}", "--results", "{snapentries}"],
        ["--dataset", "not a Ratio release"],
        1,
    ),
    (
        "drift-with-model",
        ["analyze", "drift", "--model", "bm25", "--dataset", "{tmp}"],
        ["--model", "drop --model"],
        2,
    ),
    (
        "drift-with-split",
        ["analyze", "drift", "--split", "test", "--dataset", "{tmp}"],
        ["--split", "drop --split"],
        2,
    ),
    ("oracle-without-model", ["analyze", "oracle", "--dataset", "{tmp}"], ["--model", "needs the models"], 2),
    (
        "overlap-with-results",
        ["analyze", "overlap", "--model", "bm25", "--results", "{tmp}"],
        ["--results", "only `ratio analyze drift`"],
        2,
    ),
]

# What each dirty corpus of the fixture rejects (reason: records).
EXPECTED_REJECTS = {
    "corpus": {"malformed_json": 1, "wrong_type:text": 1},
    "surrogates": {f"invalid_unicode:{field}": 1 for field in ("text", "title", "id", "date")},
}


@pytest.fixture(scope="session")
def broken_inputs(tmp_path_factory) -> dict[str, Path]:
    """Group A: ``models``, tiny model folders with one defect each (``tests/helpers/models.py``), and
    ``indexes``, a tiny dense index copied and made unsafe: a model that runs code although the manifest says to
    trust it, vectors named by an absolute path, a truncated ANN file."""
    from tests.helpers.corpus import write_jsonl
    from tests.helpers.models import make_remote_code, write_broken_models
    from tests.helpers.serve import PAPERS, build_tiny_index

    root = tmp_path_factory.mktemp("group-a")
    models = write_broken_models(root / "models")
    (root / "library").mkdir()
    write_jsonl(root / "library" / "papers.jsonl", PAPERS)
    built = build_tiny_index(root / "built", root / "library")
    indexes = root / "indexes"
    for case in ("remote-code", "outside", "truncated-ann"):
        shutil.copytree(built, indexes / case)
    manifest = json.loads((built / "manifest.json").read_text(encoding="utf-8"))
    entry = manifest["models"]["bert_none"]
    make_remote_code(indexes / "remote-code" / entry["folder"], root / "remote-code-ran")
    for case, edit in (
        ("remote-code", {"trust_remote_code": True}),
        ("outside", {"vectors": str(built / entry["vectors"])}),
    ):
        (indexes / case / "manifest.json").write_text(
            json.dumps({**manifest, "models": {**manifest["models"], "bert_none": {**entry, **edit}}}),
            encoding="utf-8",
        )
    ann_file = indexes / "truncated-ann" / entry["ann"]["file"]
    ann_file.write_bytes(ann_file.read_bytes()[:100])
    return {"models": models["good"].parent, "indexes": indexes}


def snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def assert_every_record_counted(args: list[str], tmp: Path) -> None:
    """The corpus report of a run on dirty input (where it writes one): read = kept + rejected, and every
    rejection has a row in the rejects file."""
    corpus = next(Path(a).name for a in args if Path(a).parent == tmp and Path(a).name in EXPECTED_REJECTS)
    expected = EXPECTED_REJECTS[corpus]
    if args[0] == "mine":
        out = Path(args[args.index("--out") + 1])
        report = json.loads((out / "stats.json").read_text())["corpus"]
        files = sorted((out / "rejects").glob("*.jsonl"))
    else:
        report = json.loads(Path(args[args.index("--json") + 1]).read_text()) if "--json" in args else None
        files = [Path(args[args.index("--rejects") + 1])]
    rows = [json.loads(x) for f in files for x in f.read_text(encoding="utf-8").splitlines()]
    if report is not None:
        for counts in [*report["sources"].values(), report["total"]]:
            assert counts["papers_read"] == counts["papers_kept"] + sum(counts["rejected"].values()), counts
        assert report["total"]["rejected"] == expected
    assert Counter(r["reason"] for r in rows if r["action"] == "dropped") == expected


@pytest.mark.parametrize(("argv", "culprits", "code"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_bad_input(
    tmp_path: Path, request: pytest.FixtureRequest, argv: list[str], culprits: list[str], code: int
) -> None:
    files = fixture_files(tmp_path)
    if any("{release}" in a or "{tampered}" in a for a in argv):  # the small built release, only where needed
        files["release"] = request.getfixturevalue("small_release")
        files["tampered"] = tmp_path / "tampered"
        shutil.copytree(files["release"], files["tampered"])
        with (files["tampered"] / "README.md").open("a", encoding="utf-8") as fh:
            fh.write("\nA line added after the build.\n")
    for name in (
        "truncated",
        "strayrel",
    ):  # group B: a release with a shard cut short, one with the user's files
        if any(f"{{{name}}}" in a for a in argv):
            files[name] = tmp_path / name
            shutil.copytree(request.getfixturevalue("small_release"), files[name])
    if "truncated" in files:
        shard = next((files["truncated"] / "data" / "address").glob("test-*.parquet"))
        shard.write_bytes(shard.read_bytes()[:100])
    if "strayrel" in files:
        (files["strayrel"] / "notes.txt").write_text("my notes", encoding="utf-8")
        (files["strayrel"] / "settings.json").write_text('{"theme": "dark"}', encoding="utf-8")
    if any("{models}" in a or "{indexes}" in a for a in argv):  # group A
        files |= request.getfixturevalue("broken_inputs")
    sentinels = [files["mine"], *(files[k] for k in ("tampered", "truncated", "strayrel") if k in files)]
    before = [snapshot(s) for s in sentinels]
    args = [a.format(tmp=tmp_path, **files) for a in argv]
    run = run_ratio(*args, cwd=tmp_path, timeout=120)
    if code == 0:  # writes its outputs beside the user's files, touches none of them, and loses no record
        assert run.code == 0 and "Traceback" not in run.err, run.err
        if args[0] in ("corpus", "mine") or "--corpus" in args:
            assert_every_record_counted(args, tmp_path)
    elif args[0] == "check":  # a pass/fail table, not an error line
        assert (
            run.code == code and "Traceback" not in run.err and all(c in run.out + run.err for c in culprits)
        ), (run.out, run.err)
    else:
        assert_user_error(run, *culprits, code=code)
    for sentinel, was in zip(sentinels, before, strict=True):
        now = snapshot(sentinel)
        assert {k: now.get(k) for k in was} == was  # every file of the user's, byte for byte
