import pytest
from tests.helpers.corpus import shared_record, write_jsonl

from ratio_bench.core.io import RejectLog
from ratio_bench.dataset.release import NotAReleaseError
from ratio_bench.serve import candidates


def test_corpus_sentences_keep_their_provenance_and_short_ones_are_counted(library):
    c = candidates.from_corpus([library])
    rows = c.table.to_pylist()
    assert c.counts["papers"] == 4 and c.counts["sentences_under_35_chars"] == 1  # "Too short here."
    assert c.counts["candidates"] == len(rows) == 8
    first = rows[0]
    assert first["id"] == "arxiv/2503.01234#0.0"
    assert first["text"] == "Dense retrievers miss rare technical terms in scientific queries."
    assert (first["paper_id"], first["title"], first["date"], first["venue"]) == (
        "arxiv/2503.01234",
        "Sparse channels for dense retrieval",
        "2025-03-18",
        "arXiv",
    )
    assert len({r["id"] for r in rows}) == len(rows)
    assert c.source == {"corpus": {"files": [str(library / "papers.jsonl")]}}


def test_a_repeated_paper_id_is_rejected_not_merged(tmp_path):
    text = "A sentence that is comfortably longer than the minimum length."
    write_jsonl(tmp_path / "a.jsonl", [shared_record("p/1", text, kind="abstract")])
    write_jsonl(tmp_path / "b.jsonl", [shared_record("p/1", text, kind="abstract")])
    rejects = RejectLog()
    c = candidates.from_corpus([tmp_path], rejects=rejects)
    assert c.table.num_rows == 1 and rejects.by_reason() == {"duplicate paper id": 1}
    assert c.counts["rejected"] == {"duplicate paper id": 1}


def test_a_corpus_without_usable_sentences_is_refused(tmp_path):
    write_jsonl(tmp_path / "a.jsonl", [shared_record("p/1", "Tiny.", kind="abstract")])
    with pytest.raises(candidates.SourceError, match="--corpus"):
        candidates.from_corpus([tmp_path])


def test_release_candidates_get_venue_and_section_from_the_relation_configs(small_release):
    c = candidates.from_release(small_release, "test")
    rows = c.table.to_pylist()
    assert c.table.schema == candidates.PROVENANCE_SCHEMA and len(rows) == 3
    assert [r["id"] for r in rows] == sorted(r["id"] for r in rows)
    golds = [r for r in rows if r["section"] is not None]  # the two Address golds carry their query's section
    assert len(golds) == 2 and all(r["venue"] for r in rows)
    assert c.source["release"]["split"] == "test"
    # each row keeps the role the release mined it as (the search's role prior): the golds' relation, else
    # the distractor's category
    assert [r["role"] for r in golds] == ["address", "address"]
    assert all(r["role"] not in (None, "address") for r in rows if r["section"] is None)


def test_a_folder_that_is_no_release_is_refused(tmp_path):
    with pytest.raises(NotAReleaseError, match="not a Ratio release folder .*ratio dataset build"):
        candidates.from_release(tmp_path, "test")


def test_release_titles_come_from_the_corpus_it_was_built_from(small_release):
    from ratio_bench.corpus.readers import PaperReader, corpus_files

    source = small_release.parent / "corpus"
    c = candidates.from_release(small_release, "test", corpus_meta=[source])
    rows = c.table.to_pylist()
    expected = {p.paper_id: p.title for p in PaperReader().read(corpus_files([source]))}
    assert rows and all(r["title"] == expected[r["paper_id"]] and r["title"] for r in rows)
    assert c.counts["papers_without_title"] == 0 and c.counts["papers_with_title"] == len(
        {r["paper_id"] for r in rows}
    )
    assert c.source["titles"] == {"corpus": [str(source)]}
    assert all(r["title"] is None for r in candidates.from_release(small_release, "test").table.to_pylist())
