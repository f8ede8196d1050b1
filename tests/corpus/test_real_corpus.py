"""Samples of the real development corpus (../shared/corpus): every reader path on real text."""

from collections import Counter
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from ratio_bench.corpus.dates import DatePrecision
from ratio_bench.corpus.pipeline import segment_papers
from ratio_bench.corpus.readers import PaperReader
from ratio_bench.corpus.sections import SectionCategory as C

FILES = {
    "neurips_2023_2024_fulltext.parquet": "markdown",
    "neurips_2025_fulltext.parquet": "markdown",
    "scisummnet_acl_fulltext.parquet": "plain",
    "arxiv_abstracts_2025_2026.parquet": "abstract",
    "acl_anthology_abstracts.parquet": "abstract",
    "iclr_2026_abstracts.parquet": "abstract",
}
N = 40


@pytest.fixture(scope="module")
def samples(tmp_path_factory, request):
    corpus = request.getfixturevalue("shared_corpus_module")
    out = tmp_path_factory.mktemp("samples")
    for name in FILES:
        batch = next(pq.ParquetFile(corpus / name).iter_batches(batch_size=N))
        pq.write_table(pa.Table.from_batches([batch]), out / name)
    return out


@pytest.fixture(scope="module")
def shared_corpus_module():
    from tests.helpers.corpus import SHARED_CORPUS

    if not SHARED_CORPUS.is_dir():
        pytest.skip(f"shared corpus not found at {SHARED_CORPUS} (set RATIO_SHARED_CORPUS)")
    return SHARED_CORPUS


@pytest.fixture(scope="module")
def segmented(samples):
    reader = PaperReader()
    papers = {name: list(segment_papers(reader, [samples / name])) for name in FILES}
    return papers, reader.report


def test_every_sample_is_read_with_its_text_format(segmented):
    papers, report = segmented
    for name, fmt in FILES.items():
        counts = report[name]
        assert counts.papers_read == N
        assert counts.papers_kept + sum(counts.rejected.values()) == N
        assert counts.papers_kept >= N - 3, (name, counts.rejected)
        assert {p.paper.text_format for p in papers[name]} == {fmt}
        assert counts.sentences > counts.papers_kept


def test_full_text_sections_are_found(segmented):
    papers, _ = segmented
    for name in ("neurips_2023_2024_fulltext.parquet", "neurips_2025_fulltext.parquet"):
        cats = Counter(para.category for sp in papers[name] for para in sp.paper.paragraphs)
        assert cats[C.INTRODUCTION] > N and cats[C.ABSTRACT] >= N // 2 and cats[C.CONCLUSION] > 0
        with_intro = sum(
            any(p.category is C.INTRODUCTION for p in sp.paper.paragraphs) for sp in papers[name]
        )
        assert with_intro >= 0.9 * len(papers[name])


def test_no_markup_or_non_prose_leaks_into_paragraphs(segmented):
    papers, _ = segmented
    for name in ("neurips_2023_2024_fulltext.parquet", "neurips_2025_fulltext.parquet"):
        for sp in papers[name]:
            for para in sp.paper.paragraphs:
                t = para.text
                assert not t.startswith("#") and "\\begin{" not in t and "<!--" not in t and "&amp;" not in t
                assert not t.lower().startswith(("figure 1:", "table 1:"))
                assert "\n" not in t


def test_dates_have_the_documented_precisions(segmented):
    papers, _ = segmented
    precision = {name: Counter(sp.paper.date.precision for sp in papers[name]) for name in FILES}
    assert set(precision["arxiv_abstracts_2025_2026.parquet"]) == {DatePrecision.DAY}
    assert set(precision["neurips_2025_fulltext.parquet"]) == {DatePrecision.MONTH}
    assert precision["scisummnet_acl_fulltext.parquet"][DatePrecision.YEAR] >= N - 5


def test_sentences_look_like_sentences(segmented):
    papers, _ = segmented
    sentences = [s for sp in papers["neurips_2025_fulltext.parquet"] for para in sp.sentences for s in para]
    lengths = sorted(len(s) for s in sentences)
    median = lengths[len(lengths) // 2]
    assert 60 <= median <= 250
    # abbreviations do not end sentences
    assert not any(s.endswith((" e.g.", " i.e.", " et al. [", " Fig.", " Eq.")) for s in sentences)


def test_file_paths_exist(shared_corpus_module):
    for name in FILES:
        assert (Path(shared_corpus_module) / name).exists()
