"""Parquet schemas of the mining stage's outputs (``pairs/*.parquet`` and ``distractors/*.parquet``).

Pairs: one row per (query, gold) tuple. ``relation`` is ``address``, ``broaden`` or ``specify``; ``query`` and
``gold`` are cleaned and normalised (lower-cased, spec B.1), ``query_cased``/``gold_cased`` keep the original
casing (null unless the build keeps case); ``marker`` is the matched marker (lower-case, no comma) and
``marker_stage`` how it entered the lexicon; ``query_clause`` is the leading discourse clause removed from the
query, if any. Provenance: paper, source, date (raw, interval and precision), venue, section heading and
category, paragraph index and the index of the query sentence within its paragraph (the gold is the next one).

Distractors: one row per sentence introduced by a distractor marker, ``category`` being the distractor category.
"""

from __future__ import annotations

import pyarrow as pa

from ratio_bench.corpus.records import PAPER_SCHEMA

# Paper-level provenance copied onto every row: the same fields, with the same types, as the corpus stage's
# PAPER_SCHEMA (one definition of each column).
PAPER_PROVENANCE: tuple[str, ...] = (
    "paper_id",
    "source",
    "source_file",
    "venue",
    "title",
    "kind",
    "date_raw",
    "date_start",
    "date_end",
    "date_precision",
    "fields_of_study",
)
_PROVENANCE = [
    *(PAPER_SCHEMA.field(name) for name in PAPER_PROVENANCE),
    pa.field("section", pa.string()),
    pa.field("section_category", pa.string()),
    pa.field("paragraph_index", pa.int32()),
    pa.field("sentence_index", pa.int32()),
]

PAIR_SCHEMA = pa.schema(
    [
        ("relation", pa.string()),
        ("query", pa.string()),
        ("gold", pa.string()),
        ("marker", pa.string()),
        ("marker_stage", pa.string()),
        ("query_clause", pa.string()),
        ("query_cased", pa.string()),
        ("gold_cased", pa.string()),
        *_PROVENANCE,
    ]
)

DISTRACTOR_SCHEMA = pa.schema(
    [
        ("category", pa.string()),
        ("text", pa.string()),
        ("marker", pa.string()),
        ("marker_stage", pa.string()),
        ("text_cased", pa.string()),
        *_PROVENANCE,
    ]
)
