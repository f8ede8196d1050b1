"""Bad corpus inputs, table-driven: none crashes a run, each is counted and logged, ``--strict`` fails on it.

Every case writes one bad file next to a good one into a corpus folder (the bad file sorts first, so the run
has to go on past it to keep the good paper), runs ``ratio corpus stats`` as a user would, and checks that the
report adds up (read = kept + rejected, per file and in total) and agrees with the rejects file.
"""

from __future__ import annotations

import gzip
import io
import json
from collections import Counter
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from tests.helpers.cli import Run, assert_user_error, run_ratio
from tests.helpers.corpus import SHARED_SCHEMA, shared_record, write_jsonl

from ratio_bench.cli import main

GOOD_TEXT = (
    "Retrieval fails on rare terms. To address this limitation, we add a sparse lexical channel to it."
)


def _lines(path: Path, lines: list[bytes]) -> None:
    path.write_bytes(b"".join(line + b"\n" for line in lines))


def _good_parquet_bytes() -> bytes:
    buf = io.BytesIO()
    table = pa.Table.from_pylist(
        [shared_record(f"pq/{i}", GOOD_TEXT * 20, "2024") for i in range(50)],
        schema=SHARED_SCHEMA,
    )
    pq.write_table(table, buf)
    return buf.getvalue()


def _one(**fields) -> bytes:
    return json.dumps({**shared_record("bad/1", GOOD_TEXT, "2024"), **fields}).encode()


def int_text(d):
    _lines(d / "bad.jsonl", [_one(text=12345)])


def null_text(d):
    _lines(d / "bad.jsonl", [_one(text=None)])


def list_text(d):
    _lines(d / "bad.jsonl", [_one(text=["a", "list"])])


def dict_id(d):
    _lines(d / "bad.jsonl", [_one(id={"nested": 1})])


def non_object_lines(d):
    _lines(d / "bad.jsonl", [b"[1, 2, 3]", b"null", b'"a string"', b"42"])


def malformed_json(d):
    _lines(d / "bad.jsonl", [b'{"id": "cut", "text": ', b"{not json at all}", _one()])


def empty_jsonl(d):
    (d / "bad.jsonl").write_bytes(b"")


def empty_parquet(d):
    (d / "bad.parquet").write_bytes(b"")


def truncated_parquet(d):
    data = _good_parquet_bytes()
    (d / "bad.parquet").write_bytes(data[: len(data) // 2])


def not_parquet(d):
    (d / "bad.parquet").write_text("id,text\n1,this is a CSV file with a .parquet name\n")


def integer_columns(d):
    table = pa.table({"id": pa.array([1, 2], pa.int64()), "text": pa.array([10, 20], pa.int64())})
    pq.write_table(table, d / "bad.parquet")


def missing_text_column(d):
    pq.write_table(pa.table({"id": ["m/1", "m/2", "m/3"], "title": ["a", "b", "c"]}), d / "bad.parquet")


def unknown_format(d):
    write_jsonl(d / "bad.jsonl", [{"foo": 1, "bar": "baz"}])


def bom_jsonl(d):
    (d / "bad.jsonl").write_bytes(b"\xef\xbb\xbf" + _one() + b"\n")


def non_utf8_jsonl(d):
    _lines(d / "bad.jsonl", [_one().replace(b"sparse", b"sp\xffrse")])


def truncated_gzip(d):
    data = gzip.compress(b"".join(_one(id=f"gz/{i}") + b"\n" for i in range(200)))
    (d / "bad.jsonl.gz").write_bytes(data[: len(data) // 2])


def s2orc_wrong_types(d):
    good_para = {"text": GOOD_TEXT, "section": "Introduction"}
    write_jsonl(
        d / "bad.jsonl",
        [
            {"corpusid": 1, "metadata": {"title": "ok"}, "pdf_parse": "not an object"},
            {"corpusid": 2, "metadata": {"title": ["a", "list"]}, "pdf_parse": {"body_text": [good_para]}},
            {"corpusid": 3, "metadata": {}, "pdf_parse": {"body_text": {"not": "a list"}}},
            {"corpusid": 4, "metadata": {}, "pdf_parse": {"body_text": [{"text": 7}, 5, good_para]}},
        ],
    )


# case -> (expected rejected reasons, expected flags, kept from the bad file, fails under --strict)
CASES = {
    int_text: ({"wrong_type:text": 1}, {}, 0, True),
    null_text: ({"no_text": 1}, {}, 0, False),
    list_text: ({"wrong_type:text": 1}, {}, 0, True),
    dict_id: ({"wrong_type:id": 1}, {}, 0, True),
    non_object_lines: ({"not_an_object": 4}, {}, 0, True),
    malformed_json: ({"malformed_json": 2}, {}, 1, True),
    empty_jsonl: ({"file_empty": 1}, {}, 0, True),
    empty_parquet: ({"file_empty": 1}, {}, 0, True),
    truncated_parquet: ({"file_unreadable": 1}, {}, 0, True),
    not_parquet: ({"file_unreadable": 1}, {}, 0, True),
    integer_columns: ({"wrong_type:text": 2}, {}, 0, True),
    missing_text_column: ({"no_text": 3}, {}, 0, False),
    unknown_format: ({"file_unknown_format": 1}, {}, 0, True),
    bom_jsonl: ({}, {}, 1, False),
    non_utf8_jsonl: ({}, {"non_utf8_bytes": 1}, 1, True),
    truncated_gzip: ({"file_unreadable": 1}, {}, None, True),
    s2orc_wrong_types: (
        {"wrong_type:pdf_parse": 1, "wrong_type:metadata.title": 1, "wrong_type:pdf_parse.body_text": 1},
        {},
        1,
        True,
    ),
}


@pytest.fixture(params=list(CASES), ids=lambda f: f.__name__)
def bad_corpus(request, tmp_path):
    folder = tmp_path / "corpus"
    folder.mkdir()
    request.param(folder)
    write_jsonl(folder / "good.jsonl", [shared_record("good/1", GOOD_TEXT, "2024-05", kind="abstract")])
    bad = next(p for p in sorted(folder.iterdir()) if p.name.startswith("bad"))
    return folder, bad, CASES[request.param]


def _assert_adds_up(report: dict, rejects_rows: list[dict]) -> None:
    for name, counts in [*report["sources"].items(), ("TOTAL", report["total"])]:
        assert counts["papers_read"] == counts["papers_kept"] + sum(counts["rejected"].values()), name
    actions = Counter(r["action"] for r in rejects_rows)
    assert actions["dropped"] == sum(report["total"]["rejected"].values())
    assert actions["flagged"] == sum(report["total"]["flagged"].values())
    assert len(rejects_rows) == actions["dropped"] + actions["flagged"]


def test_bad_input_is_rejected_counted_and_the_run_goes_on(bad_corpus, tmp_path):
    folder, bad, (reasons, flags, kept, _) = bad_corpus
    report_path, rejects_path = tmp_path / "report.json", tmp_path / "rejects.jsonl"
    run = run_ratio("corpus", "stats", folder, "--json", report_path, "--rejects", rejects_path, "--quiet")
    assert run.code == 0, run.err
    assert "Traceback" not in run.err + run.out
    report = json.loads(report_path.read_text())
    rows = [json.loads(line) for line in rejects_path.read_text().splitlines()]
    _assert_adds_up(report, rows)
    counts = report["sources"][bad.name]
    assert counts["rejected"] == reasons and counts["flagged"] == flags
    if kept is not None:
        assert counts["papers_kept"] == kept
    assert report["sources"]["good.jsonl"]["papers_kept"] == 1  # read after the bad file
    assert {r["source"] for r in rows} <= {bad.name}
    assert Counter(r["reason"] for r in rows if r["action"] == "dropped") == reasons


def test_strict_fails_on_malformed_input_naming_the_file(bad_corpus, capsys):
    folder, bad, (_, _, _, fails) = bad_corpus
    code = main(["corpus", "stats", str(folder), "--strict", "--quiet"])
    captured = capsys.readouterr()
    run = Run(code, captured.out, captured.err)
    if fails:
        line = assert_user_error(run, str(bad))
        assert "--strict" in line or "--format" in line  # the fix
        assert len(run.err.strip().splitlines()) == 1, line
    else:
        assert run.code == 0, run.err
