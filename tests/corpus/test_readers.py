import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from tests.helpers.corpus import DATA, shared_record, write_jsonl, write_shared_parquet

from ratio_bench.core.errors import RatioError
from ratio_bench.core.io import RejectLog
from ratio_bench.corpus.dates import DatePrecision
from ratio_bench.corpus.readers import CorpusFormatError, PaperReader, ReaderSettings, detect_format
from ratio_bench.corpus.sections import PROSE_CATEGORIES, SectionCategory


def test_s2orc_records(tmp_path):
    rejects_path = tmp_path / "rejects.jsonl"
    with RejectLog(rejects_path) as rejects:
        reader = PaperReader(rejects=rejects)
        papers = list(reader.read([DATA / "s2orc_sample.jsonl"]))
    assert detect_format(DATA / "s2orc_sample.jsonl") == "s2orc"
    ids = [p.paper_id for p in papers]
    assert ids == ["90001", "90002", "legacy-77"]
    p = papers[0]
    assert p.title == "Gated Residual Message Passing" and p.venue == "Fixture Conference"
    assert p.date.precision is DatePrecision.DAY and p.fields_of_study == ["Computer Science"]
    cats = [para.category for para in p.paragraphs]
    assert cats[:2] == [SectionCategory.ABSTRACT, SectionCategory.INTRODUCTION]
    assert SectionCategory.ACKNOWLEDGMENTS not in cats  # dropped by the default keep setting
    assert not any(para.text.startswith("Table 1") for para in p.paragraphs)  # caption removed
    assert papers[1].date.precision is DatePrecision.YEAR
    assert papers[2].date.precision is DatePrecision.MONTH and papers[2].kind == "abstract"
    rows = [json.loads(line) for line in rejects_path.read_text().splitlines()]
    assert {(r["record_id"], r["reason"], r["action"]) for r in rows} == {("90003", "no_text", "dropped")}
    counts = reader.report["s2orc_sample.jsonl"]
    assert counts.papers_read == 4 and counts.papers_kept == 3 and counts.rejected == {"no_text": 1}
    assert counts.paragraphs_dropped_by_category == {"acknowledgments": 1}


def test_bad_jsonl_lines_are_logged_not_fatal(tmp_path):
    path = tmp_path / "bad.jsonl"
    good = shared_record(
        "ok/1", "A perfectly fine paragraph of text about retrieval.", "2024-01", kind="abstract"
    )
    with path.open("wb") as fh:
        fh.write((json.dumps(good) + "\n").encode())
        fh.write(b'{"id": "broken", "text": \n')
        fh.write(b"[1, 2, 3]\n")
        fh.write(
            json.dumps(shared_record("bytes/1", "Text with a bad byte here.", "2024")).encode()[:-2]
            + b"\xff\xfe"
            + b'"}\n'
        )
        fh.write(
            (
                json.dumps(
                    shared_record("nodate/1", "Another fine abstract.", "next spring", kind="abstract")
                )
                + "\n"
            ).encode()
        )
        fh.write((json.dumps(shared_record(None, "No id at all.", "2024")) + "\n").encode())
        fh.write((json.dumps(shared_record("notext/1", None, "2024")) + "\n").encode())
    rejects = RejectLog(tmp_path / "rejects.jsonl")
    reader = PaperReader(rejects=rejects)
    papers = list(reader.read([path]))
    rejects.close()
    assert [p.paper_id for p in papers] == ["ok/1", "bytes/1", "nodate/1"]
    assert papers[2].date.precision is DatePrecision.UNKNOWN
    assert rejects.by_reason("dropped") == {
        "malformed_json": 1,
        "missing_id": 1,
        "no_text": 1,
        "not_an_object": 1,
    }
    assert rejects.by_reason("flagged") == {"non_utf8_bytes": 1, "unparsable_date": 1}
    logged = [json.loads(x) for x in (tmp_path / "rejects.jsonl").read_text().splitlines()]
    assert len(logged) == 6 and all(r["source"] == "bad.jsonl" for r in logged)


def test_parquet_shared_schema_and_keep_sections(tmp_path, nougat_text):
    path = write_shared_parquet(tmp_path / "c.parquet", [shared_record("n/1", nougat_text, "2024-12")])
    assert detect_format(path) == "shared"
    default = list(PaperReader().read([path]))[0]
    assert SectionCategory.APPENDIX in {p.category for p in default.paragraphs}
    only_intro = ReaderSettings(keep_categories=frozenset({SectionCategory.INTRODUCTION}))
    reader = PaperReader(only_intro)
    paper = list(reader.read([path]))[0]
    assert {p.category for p in paper.paragraphs} == {SectionCategory.INTRODUCTION}
    assert reader.report["c.parquet"].paragraphs_dropped_by_category["appendix"] == 2
    assert paper.text_format == "markdown" and paper.source_file == "c.parquet"


def test_venues_given_as_lists_are_clean_strings(tmp_path):
    """A venue list, or one printed into the string (as the arXiv dump has it), reads as plain text."""
    venues = [["cs.CL"], ["cs.CL", " cs.AI "], "arXiv ['cs.CV', 'cs.AI']", "arXiv ['cs.CL']", "ACL [main]"]
    records = [shared_record(f"v/{i}", "A fine abstract.", venue=v) for i, v in enumerate(venues)]
    records.append(shared_record("v/bad", "A fine abstract.", venue={"name": "x"}))
    rejects = RejectLog(tmp_path / "rejects.jsonl")
    papers = list(PaperReader(rejects=rejects).read([write_jsonl(tmp_path / "v.jsonl", records)]))
    rejects.close()
    assert [p.venue for p in papers] == [
        "cs.CL",
        "cs.CL, cs.AI",
        "arXiv cs.CV, cs.AI",
        "arXiv cs.CL",
        "ACL [main]",
    ]
    assert rejects.by_reason("dropped") == {"wrong_type:venue": 1}


def test_format_detection_errors_and_overrides(tmp_path):
    odd = write_jsonl(tmp_path / "odd.jsonl", [{"foo": 1}])
    with pytest.raises(CorpusFormatError, match="cannot detect"):
        detect_format(odd)
    with pytest.raises(ValueError, match="unknown corpus format"):
        ReaderSettings(fmt="xml")
    plain = write_jsonl(
        tmp_path / "p.jsonl", [shared_record("p/1", "# Not a heading really\n\nProse here.", "2020")]
    )
    paper = list(PaperReader(ReaderSettings(text_format="plain")).read([plain]))[0]
    assert paper.text_format == "plain" and paper.paragraphs[0].text == "# Not a heading really"


def test_missing_path_is_a_clear_error(tmp_path):
    with pytest.raises(RatioError, match="corpus path not found: .*nope .*--corpus"):
        list(PaperReader().read([tmp_path / "nope"]))
    with pytest.raises(RatioError, match="--text-format"):
        ReaderSettings(text_format="html")


def test_prose_categories_exclude_non_prose():
    assert SectionCategory.REFERENCES not in PROSE_CATEGORIES and SectionCategory.APPENDIX in PROSE_CATEGORIES
    assert Path(DATA / "s2orc_sample.jsonl").exists()


def test_lone_surrogates_reject_their_record_with_the_field(tmp_path):
    text = "A perfectly fine paragraph of text about retrieval."
    s2orc_bad = {
        "corpusid": 7,
        "metadata": {"title": "Fine"},
        "pdf_parse": {"body_text": [{"text": text, "section": "Intro"}, {"text": "x\ud800"}]},
    }
    path = write_jsonl(  # json.dumps writes "\ud800" as an escape, which json.loads reads back as a surrogate
        tmp_path / "s.jsonl",
        [
            shared_record("ok/1", text),
            shared_record("t/1", text + "\ud800"),
            shared_record("ti/1", text, title="T\udfff"),
            shared_record("\ud800", text),
            shared_record("d/1", text, date="2020-\ud800"),
            shared_record("k/1", text) | {"\ud800": 1},
        ],
    )
    s2orc = write_jsonl(tmp_path / "t.jsonl", [s2orc_bad])
    rejects_path = tmp_path / "rejects.jsonl"
    with RejectLog(rejects_path) as rejects:
        reader = PaperReader(rejects=rejects)
        papers = list(reader.read([path, s2orc]))
    assert [p.paper_id for p in papers] == ["ok/1"]
    rows = [json.loads(line) for line in rejects_path.read_text(encoding="utf-8").splitlines()]
    assert [(r["record_id"], r["reason"]) for r in rows] == [
        ("t/1", "invalid_unicode:text"),
        ("ti/1", "invalid_unicode:title"),
        ("line:4", "invalid_unicode:id"),  # the id itself cannot be written, so its line stands for it
        ("d/1", "invalid_unicode:date"),
        ("k/1", "invalid_unicode:field_name"),
        ("7", "invalid_unicode:pdf_parse.body_text.text"),
    ]
    assert reader.report["s.jsonl"].papers_read == 6 and reader.report["s.jsonl"].papers_kept == 1
    with pytest.raises(RatioError, match=r"s\.jsonl: t/1: invalid_unicode:text; fix or remove it"):
        list(PaperReader(ReaderSettings(strict=True)).read([path]))


def test_invalid_utf8_in_a_parquet_string_rejects_its_row(tmp_path):
    """Arrow validates strings it builds, but a Parquet file from another writer can hold any bytes."""
    text = b"A perfectly fine paragraph of text about retrieval."
    raw = pa.array([text, text[:-1] + b"\xed\xa0\x80", text], pa.binary())
    table = pa.table({"id": ["a", "b", "c"], "text": pa.Array.from_buffers(pa.string(), 3, raw.buffers())})
    pq.write_table(table, tmp_path / "c.parquet")
    rejects = RejectLog()
    reader = PaperReader(rejects=rejects)
    assert [p.paper_id for p in reader.read([tmp_path / "c.parquet"])] == ["a", "c"]
    assert rejects.by_reason("dropped") == {"invalid_unicode:text": 1}
    assert reader.report["c.parquet"].papers_read == 3
