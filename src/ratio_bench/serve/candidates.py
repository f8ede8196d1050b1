"""The sentences an index searches, with their provenance: from a release split or from a user's own papers.

Both sources give one table of :data:`PROVENANCE_SCHEMA` ordered as the vectors are, so a search hit is a row
number and everything shown about it (paper, title, date, venue, section) comes from this table. A release's rows
also carry the role the release mined each sentence as (a relation's gold, or a distractor category), which the
search may use as a prior for the requested move (``serve/search.py``); own papers have none.

A release's corpus config carries ``paper_id`` and ``date`` only; venue and section are joined from the
relation configs (a gold candidate's row gives both, a distractor gets its paper's venue when the paper has a
query). Titles are not part of a release: ``titles_from_corpus`` reads them from the corpus the release was
built from (``ratio index --corpus-meta PATH...``, the same reader as the corpus stage), else they stay empty
and the page says so. Own papers go through the corpus stage
(readers, sectioning, cleaning, segmentation): every kept sentence of at least the spec's 35 characters becomes a
candidate, and what is left out is counted.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
from tqdm import tqdm

from ratio_bench.core import extras
from ratio_bench.core.errors import RatioError
from ratio_bench.core.io import RejectLog
from ratio_bench.core.relations import RELATIONS
from ratio_bench.corpus.cleaning import MIN_SENTENCE_CHARS, is_too_short
from ratio_bench.corpus.pipeline import segment_papers
from ratio_bench.corpus.readers import PaperReader, corpus_files
from ratio_bench.dataset.release import Release

duckdb = extras.lazy("duckdb")

PROVENANCE_SCHEMA = pa.schema(
    [
        pa.field("id", pa.string(), nullable=False),
        pa.field("text", pa.string(), nullable=False),
        ("paper_id", pa.string()),
        ("title", pa.string()),
        ("date", pa.string()),
        ("venue", pa.string()),
        ("section", pa.string()),
        # what the release mined the sentence as: the relation it is the gold of, or its distractor category
        # (null for own papers): the search's role prior, never used by ranked scores
        ("role", pa.string()),
    ]
)


class SourceError(RatioError, ValueError):
    """A release split or corpus that cannot give candidates."""


@dataclass
class Candidates:
    table: pa.Table  # PROVENANCE_SCHEMA, one row per candidate, in vector order
    source: dict[str, Any]  # what the manifest records about where they came from
    counts: dict[str, Any] = field(default_factory=dict)  # what was read and what was left out, by reason

    @property
    def ids(self) -> list[str]:
        return self.table.column("id").to_pylist()

    @property
    def texts(self) -> list[str]:
        return self.table.column("text").to_pylist()


def titles_from_corpus(paths: Sequence[str | Path], wanted: set[str], settings=None) -> dict[str, str]:
    """Each wanted paper's title as the corpus stage reads it (a full text's front-matter title included)."""

    files = corpus_files(paths)
    if not files:
        raise SourceError(
            f"--corpus-meta {' '.join(map(str, paths))}: no corpus files (.parquet, .jsonl) found"
        )
    titles: dict[str, str] = {}
    for paper in tqdm(PaperReader(settings).read(files), unit=" papers", desc="titles", leave=False):
        if paper.paper_id in wanted and paper.title:
            titles.setdefault(paper.paper_id, paper.title)
    return titles


def from_release(
    dataset: str | Path, split: str, corpus_meta: Sequence[str | Path] = (), settings=None
) -> Candidates:
    """The candidate corpus that ``split``'s queries retrieve from, with provenance joined from the release.

    ``corpus_meta``: the corpus files the release was built from, for titles (a release carries none).
    """

    release = Release.open(dataset)
    root = release.root
    corpus = release.corpus(split, ["id", "text", "paper_id", "date", "role"])
    if not corpus.num_rows:
        raise SourceError(f"--dataset {root}: split {split!r} has no corpus; choose another --split")
    columns = ["gold_id", "paper_id", "venue", "section"]
    queries = pa.concat_tables(
        [release.queries(rel, s, columns) for rel in release.relations for s in release.splits(rel)]
        or [release.queries(RELATIONS[0], split, columns)]
    )
    con = duckdb.connect()
    con.execute("SET threads=1")  # one thread: the same row order, so the same bytes, on every build
    con.register("c_rows", corpus)
    con.register("q", queries)
    table = con.sql(
        """
        WITH gold AS (SELECT gold_id, min(venue) AS venue, min(section) AS section FROM q GROUP BY gold_id),
        paper AS (SELECT paper_id, min(venue) AS venue FROM q GROUP BY paper_id)
        SELECT c.id, c.text, c.paper_id, NULL::VARCHAR AS title, c.date,
               coalesce(gold.venue, paper.venue) AS venue, gold.section, c.role
        FROM c_rows c
        LEFT JOIN gold ON gold.gold_id = c.id
        LEFT JOIN paper ON paper.paper_id = c.paper_id
        ORDER BY c.id
        """
    ).to_arrow_table()
    table = table.cast(PROVENANCE_SCHEMA)
    counts: dict[str, Any] = {"candidates": table.num_rows}
    if corpus_meta:
        paper_ids = table.column("paper_id").to_pylist()
        titles = titles_from_corpus(corpus_meta, set(paper_ids), settings)
        table = table.set_column(
            table.schema.get_field_index("title"),
            "title",
            pa.array([titles.get(p) for p in paper_ids], pa.string()),
        )
        counts["papers_with_title"] = len(titles)
        counts["papers_without_title"] = len(set(paper_ids) - titles.keys())
    source = {
        "release": {
            "name": release.manifest.get("name"),
            "version": release.manifest.get("version"),
            "split": split,
            "path": str(root),
        },
        "titles": {"corpus": [str(p) for p in corpus_meta]} if corpus_meta else None,
    }
    return Candidates(table, source, counts)


def from_corpus(paths: Sequence[str | Path], settings=None, rejects: RejectLog | None = None) -> Candidates:
    """Every kept sentence of the papers under ``paths`` (any format the corpus stage reads).

    Ids are ``<paper id>#<paragraph>.<sentence>`` (0-based, over the kept paragraphs), stable for the same
    files and settings. A paper whose id was already read is rejected (its sentences would share ids).
    """

    files = corpus_files(paths)
    if not files:
        raise SourceError(f"--corpus {' '.join(map(str, paths))}: no corpus files (.parquet, .jsonl) found")
    rejects = rejects if rejects is not None else RejectLog()
    reader = PaperReader(settings, rejects=rejects)
    rows: list[dict[str, Any]] = []
    seen: set[str] = set()
    short = papers = 0
    for seg in tqdm(segment_papers(reader, files), unit=" papers", desc="reading", leave=False):
        paper = seg.paper
        if paper.paper_id in seen:
            rejects.add(paper.source_file, paper.paper_id, "duplicate paper id")
            continue
        seen.add(paper.paper_id)
        papers += 1
        for pi, (para, sentences) in enumerate(zip(paper.paragraphs, seg.sentences, strict=True)):
            for si, sentence in enumerate(sentences):
                if is_too_short(sentence):
                    short += 1
                    continue
                rows.append(
                    {
                        "id": f"{paper.paper_id}#{pi}.{si}",
                        "text": sentence,
                        "paper_id": paper.paper_id,
                        "title": paper.title,
                        "date": paper.date.raw,
                        "venue": paper.venue,
                        "section": para.section,
                        "role": None,
                    }
                )
    if not rows:
        raise SourceError(
            f"--corpus {' '.join(map(str, paths))}: no sentence of {MIN_SENTENCE_CHARS}+ characters"
        )
    table = pa.Table.from_pylist(rows, schema=PROVENANCE_SCHEMA)
    counts = {
        "papers": papers,
        "candidates": len(rows),
        f"sentences_under_{MIN_SENTENCE_CHARS}_chars": short,
        "rejected": rejects.by_reason("dropped"),
        "flagged": rejects.by_reason("flagged"),
    }
    return Candidates(table, {"corpus": {"files": [str(f) for f in files]}}, counts)
