"""Readers: any supported corpus file to normalised :class:`Paper` records.

Supported inputs, detected from the file's columns or first JSON object (override with ``fmt``):

* ``shared`` - the project's corpus schema ``id, title, date, venue, kind, text, source, license`` (Parquet or
  JSONL); the body is Markdown (PDF parsers), plain paragraphs, or an abstract.
* ``s2orc`` - S2ORC-style records: ``corpusid`` (or ``paper_id``), ``metadata`` (title, publication date or
  year, venue, fields of study) and ``pdf_parse`` with ``abstract`` and ``body_text`` paragraphs carrying
  ``section`` (and ``sec_num``).

Bad input never raises: malformed lines, records without id or text, bodies with no prose are dropped and
logged to the :class:`~ratio_bench.io.RejectLog`; non-UTF-8 bytes and unparsable dates are kept and flagged.
"""

from __future__ import annotations

import gzip
import json
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from ratio_bench.corpus import blocks
from ratio_bench.corpus.dates import parse_date
from ratio_bench.corpus.markdown import SectionTracker, looks_like_markdown, parse_markdown, parse_plain
from ratio_bench.corpus.records import Paper, Paragraph
from ratio_bench.corpus.report import CorpusReport
from ratio_bench.corpus.sections import PROSE_CATEGORIES, SectionCategory
from ratio_bench.errors import RatioError
from ratio_bench.io import RejectLog

FORMATS = ("shared", "s2orc")
TEXT_FORMATS = ("auto", "markdown", "plain", "abstract")
_PARQUET_BATCH = 64


class CorpusFormatError(RatioError, ValueError):
    """A file whose format cannot be determined or that lacks the fields its format needs."""


def corpus_files(paths: Iterable[str | Path]) -> list[Path]:
    """Expand folders into their corpus files (``*.parquet``, ``*.jsonl``, ``*.jsonl.gz``, ``*.json``), sorted."""
    out: list[Path] = []
    for p in map(Path, paths):
        if p.is_dir():
            out.extend(sorted(f for f in p.iterdir() if _is_corpus_file(f)))
        elif p.exists():
            out.append(p)
        else:
            raise FileNotFoundError(f"corpus path not found: {p}")
    return out


def _is_corpus_file(p: Path) -> bool:
    return p.is_file() and (p.suffix in {".parquet", ".jsonl", ".json"} or p.name.endswith(".jsonl.gz"))


def _format_of_keys(keys: Iterable[str], path: Path) -> str:
    keys = set(keys)
    if "pdf_parse" in keys or "corpusid" in keys:
        return "s2orc"
    if {"id", "text"} <= keys:
        return "shared"
    raise CorpusFormatError(f"{path}: cannot detect the corpus format from fields {sorted(keys)}; pass fmt=")


def _open_lines(path: Path) -> Iterator[bytes]:
    opener = gzip.open if path.name.endswith(".gz") else open
    with opener(path, "rb") as fh:
        yield from fh


def detect_format(path: Path) -> str:
    """``shared`` or ``s2orc``, from Parquet column names or the first parsable JSON object."""
    if path.suffix == ".parquet":
        return _format_of_keys(pq.read_schema(path).names, path)
    for line in _open_lines(path):
        try:
            obj = json.loads(line)
        except (json.JSONDecodeError, UnicodeDecodeError):
            continue
        if isinstance(obj, dict):
            return _format_of_keys(obj.keys(), path)
    raise CorpusFormatError(f"{path}: no JSON object found to detect the format")


def iter_raw_records(
    path: Path, rejects: RejectLog, row_group: int | None = None
) -> Iterator[dict[str, Any]]:
    """Yield raw dicts from a Parquet file (optionally one row group) or a JSONL file.

    JSONL lines that are not JSON objects are logged and skipped.
    """
    source = path.name
    if path.suffix == ".parquet":
        pf = pq.ParquetFile(path)
        groups = None if row_group is None else [row_group]
        for batch in pf.iter_batches(batch_size=_PARQUET_BATCH, row_groups=groups):
            yield from batch.to_pylist()
        return
    for lineno, raw in enumerate(_open_lines(path), start=1):
        if not raw.strip():
            continue
        try:
            line = raw.decode("utf-8")
            bad_bytes = False
        except UnicodeDecodeError:
            line = raw.decode("utf-8", errors="replace")
            bad_bytes = True
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as e:
            rejects.add(source, f"line:{lineno}", "malformed_json", detail=str(e)[:200])
            continue
        if not isinstance(obj, dict):
            rejects.add(source, f"line:{lineno}", "not_an_object")
            continue
        if bad_bytes:
            obj["__non_utf8__"] = True
        obj["__line__"] = lineno
        yield obj


@dataclass
class ReaderSettings:
    """What to read and keep. ``keep_categories`` defaults to every prose category (appendices included)."""

    fmt: str | None = None  # None: detect per file
    text_format: str = "auto"
    keep_categories: frozenset[SectionCategory] = field(default_factory=lambda: PROSE_CATEGORIES)

    def __post_init__(self) -> None:
        if self.fmt is not None and self.fmt not in FORMATS:
            raise ValueError(f"unknown corpus format {self.fmt!r}; expected one of {FORMATS}")
        if self.text_format not in TEXT_FORMATS:
            raise ValueError(f"unknown text format {self.text_format!r}; expected one of {TEXT_FORMATS}")


def _str(v: Any) -> str | None:
    if v is None:
        return None
    s = str(v).strip()
    return s or None


def _fields_of_study(meta: dict[str, Any]) -> list[str]:
    raw = meta.get("fields_of_study") or meta.get("s2fieldsofstudy") or meta.get("fieldsOfStudy") or []
    out = []
    for f in raw if isinstance(raw, list) else [raw]:
        name = f.get("category") if isinstance(f, dict) else f
        if name and str(name) not in out:
            out.append(str(name))
    return out


class PaperReader:
    """Turns corpus files into :class:`Paper` records and fills the stage report and the rejects log."""

    def __init__(
        self,
        settings: ReaderSettings | None = None,
        rejects: RejectLog | None = None,
        report: CorpusReport | None = None,
    ):
        self.settings = settings or ReaderSettings()
        self.rejects = rejects if rejects is not None else RejectLog()
        self.report = report if report is not None else CorpusReport()

    def read(self, paths: Iterable[str | Path]) -> Iterator[Paper]:
        for path in corpus_files(paths):
            yield from self.read_file(path)

    def read_file(self, path: Path, row_group: int | None = None) -> Iterator[Paper]:
        """Papers of one file, or of one Parquet row group of it (the unit of parallel work)."""
        fmt = self.settings.fmt or detect_format(path)
        for rec in iter_raw_records(path, self.rejects, row_group):
            paper = self.to_paper(rec, fmt, path.name)
            if paper is not None:
                yield paper

    # -- one record -------------------------------------------------------------------------------------

    def to_paper(self, rec: dict[str, Any], fmt: str, source_file: str) -> Paper | None:
        counts = self.report[source_file]
        counts.papers_read += 1
        paper, dropped, reason = (self._from_s2orc if fmt == "s2orc" else self._from_shared)(rec, source_file)
        counts.raw_bytes += self._raw_size(rec, fmt)
        counts.blocks_dropped.update(dropped)
        rid = (
            _str(rec.get("id") or rec.get("corpusid") or rec.get("paper_id")) or f"line:{rec.get('__line__')}"
        )
        if paper is None:
            counts.rejected[reason] += 1
            self.rejects.add(source_file, rid, reason)
            return None
        if rec.get("__non_utf8__"):
            counts.flagged["non_utf8_bytes"] += 1
            self.rejects.add(source_file, rid, "non_utf8_bytes", action="flagged")
        if paper.date.parse_error:
            counts.flagged["unparsable_date"] += 1
            self.rejects.add(source_file, rid, "unparsable_date", action="flagged", date=paper.date.raw)
        kept = []
        for para in paper.paragraphs:
            if para.category in self.settings.keep_categories:
                kept.append(para)
                counts.paragraphs_by_category[para.category.value] += 1
            else:
                counts.paragraphs_dropped_by_category[para.category.value] += 1
        if not kept:
            counts.rejected["no_prose_kept"] += 1
            self.rejects.add(source_file, rid, "no_prose_kept")
            return None
        paper.paragraphs = kept
        paper.source_file = source_file
        counts.papers_kept += 1
        counts.date_precision[paper.date.precision.value] += 1
        return paper

    @staticmethod
    def _raw_size(rec: dict[str, Any], fmt: str) -> int:
        if fmt == "shared":
            return len((rec.get("text") or "").encode("utf-8"))
        parse = rec.get("pdf_parse") or {}
        paras = (parse.get("abstract") or []) + (parse.get("body_text") or [])
        return sum(len(str(p.get("text") or "").encode("utf-8")) for p in paras if isinstance(p, dict))

    def _body(self, text: str, kind: str) -> tuple[list[Paragraph], Counter[str], str, str | None]:
        tf = self.settings.text_format
        if tf == "auto":
            tf = "abstract" if kind == "abstract" else ("markdown" if looks_like_markdown(text) else "plain")
        if tf == "abstract":
            prose = blocks.unwrap(blocks.strip_parser_artefacts(text))
            return (
                [Paragraph(prose, "Abstract", SectionCategory.ABSTRACT)] if prose else [],
                Counter(),
                tf,
                None,
            )
        parsed = parse_markdown(text) if tf == "markdown" else parse_plain(text)
        return parsed.paragraphs, parsed.dropped, tf, parsed.title

    def _from_shared(self, rec: dict[str, Any], source_file: str) -> tuple[Paper | None, Counter[str], str]:
        pid = _str(rec.get("id"))
        if pid is None:
            return None, Counter(), "missing_id"
        text = rec.get("text")
        if not isinstance(text, str) or not text.strip():
            return None, Counter(), "no_text"
        kind = _str(rec.get("kind")) or "fulltext"
        paragraphs, dropped, tf, front_title = self._body(text, kind)
        if not paragraphs:
            return None, dropped, "no_prose"
        paper = Paper(
            paper_id=pid,
            source=_str(rec.get("source")) or source_file,
            date=parse_date(rec.get("date")),
            paragraphs=paragraphs,
            venue=_str(rec.get("venue")),
            title=_str(rec.get("title")) or front_title,
            kind=kind,
            license=_str(rec.get("license")),
            text_format=tf,
        )
        return paper, dropped, ""

    def _from_s2orc(self, rec: dict[str, Any], source_file: str) -> tuple[Paper | None, Counter[str], str]:
        pid = _str(rec.get("corpusid") if rec.get("corpusid") is not None else rec.get("paper_id"))
        if pid is None:
            return None, Counter(), "missing_id"
        meta = rec.get("metadata") or {}
        parse = rec.get("pdf_parse") or {}
        if not isinstance(meta, dict) or not isinstance(parse, dict):
            return None, Counter(), "malformed_record"
        dropped: Counter[str] = Counter()
        paragraphs: list[Paragraph] = []
        abstract = parse.get("abstract") or []
        if not abstract and isinstance(meta.get("abstract"), str):
            abstract = [{"text": meta["abstract"], "section": "Abstract"}]
        for p in abstract:
            text = blocks.unwrap(str(p.get("text") or "")) if isinstance(p, dict) else ""
            if text:
                paragraphs.append(Paragraph(text, "Abstract", SectionCategory.ABSTRACT))
        tracker = SectionTracker()
        last_heading = None
        category = SectionCategory.OTHER
        for p in parse.get("body_text") or []:
            if not isinstance(p, dict):
                dropped["malformed_paragraph"] += 1
                continue
            section = _str(p.get("section"))
            heading = " ".join(x for x in (_str(p.get("sec_num")), section) if x) or None
            if heading != last_heading:
                category = tracker.enter(heading, 2) if heading else SectionCategory.OTHER
                last_heading = heading
            raw = str(p.get("text") or "")
            if blocks.is_caption(raw) or blocks.is_table(raw):
                dropped["caption" if blocks.is_caption(raw) else "table"] += 1
                continue
            text = blocks.unwrap(raw)
            if not text:
                dropped["empty"] += 1
                continue
            paragraphs.append(Paragraph(text, section, category))
        if not paragraphs:
            return None, dropped, "no_text"
        date_raw = (
            meta.get("publication_date") or meta.get("pub_date") or meta.get("date") or meta.get("year")
        )
        paper = Paper(
            paper_id=pid,
            source=_str(rec.get("source")) or "s2orc",
            date=parse_date(date_raw),
            paragraphs=paragraphs,
            venue=_str(meta.get("venue") or meta.get("journal")),
            title=_str(meta.get("title")),
            kind="fulltext" if parse.get("body_text") else "abstract",
            license=_str(meta.get("license") or rec.get("license")),
            fields_of_study=_fields_of_study(meta),
            text_format="s2orc",
        )
        return paper, dropped, ""
