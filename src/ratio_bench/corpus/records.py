"""The normalised paper record every reader produces and every later stage consumes."""

from __future__ import annotations

from dataclasses import dataclass, field

import pyarrow as pa

from ratio_bench.corpus.dates import PubDate
from ratio_bench.corpus.sections import SectionCategory


@dataclass(slots=True)
class Paragraph:
    """One prose paragraph: whitespace-normalised text in its original casing, with its section."""

    text: str
    section: str | None
    category: SectionCategory


@dataclass(slots=True)
class Paper:
    """One paper from any source, with typed date and sectioned paragraphs."""

    paper_id: str
    source: str
    date: PubDate
    paragraphs: list[Paragraph]
    venue: str | None = None
    title: str | None = None
    kind: str = "fulltext"  # "fulltext" or "abstract"
    license: str | None = None
    fields_of_study: list[str] = field(default_factory=list)
    text_format: str = "plain"  # how the body was parsed: markdown, plain, abstract, s2orc
    source_file: str = ""  # the corpus file it came from (the key of the stage report)

    def metadata(self) -> dict:
        """Every per-paper field as a flat dict (the columns of PAPER_SCHEMA without ``paragraphs``)."""
        return {
            "paper_id": self.paper_id,
            "source": self.source,
            "venue": self.venue,
            "title": self.title,
            "kind": self.kind,
            "license": self.license,
            "fields_of_study": self.fields_of_study,
            "text_format": self.text_format,
            "source_file": self.source_file,
            "date_raw": self.date.raw,
            "date_precision": self.date.precision.value,
            "date_start": self.date.start,
            "date_end": self.date.end,
        }


#: Parquet schema of the corpus stage's output (one row per paper; sentences nested per paragraph).
PAPER_SCHEMA = pa.schema(
    [
        ("paper_id", pa.string()),
        ("source", pa.string()),
        ("venue", pa.string()),
        ("title", pa.string()),
        ("kind", pa.string()),
        ("license", pa.string()),
        ("fields_of_study", pa.list_(pa.string())),
        ("text_format", pa.string()),
        ("source_file", pa.string()),
        ("date_raw", pa.string()),
        ("date_precision", pa.string()),
        ("date_start", pa.date32()),
        ("date_end", pa.date32()),
        (
            "paragraphs",
            pa.list_(
                pa.struct(
                    [
                        ("section", pa.string()),
                        ("category", pa.string()),
                        ("text", pa.string()),
                        ("sentences", pa.list_(pa.string())),
                    ]
                )
            ),
        ),
    ]
)
