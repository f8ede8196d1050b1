"""Readers: any supported corpus file to normalised :class:`Paper` records.

Supported inputs, detected from the file's columns or first JSON object (override with ``fmt``):

* ``shared`` - the project's corpus schema ``id, title, date, venue, kind, text, source, license`` (Parquet or
  JSONL); the body is Markdown (PDF parsers), plain paragraphs, or an abstract.
* ``s2orc`` - S2ORC-style records: ``corpusid`` (or ``paper_id``), ``metadata`` (title, publication date or
  year, venue, fields of study) and ``pdf_parse`` with ``abstract`` and ``body_text`` paragraphs carrying
  ``section`` (and ``sec_num``).

Bad input never raises: malformed lines, fields of the wrong type, text that is not valid Unicode (a lone
surrogate such as a JSON ``"\\ud800"``, which no UTF-8 output can hold), records without id or text, bodies with
no prose are dropped and logged to the :class:`~ratio_bench.core.io.RejectLog`, a file that cannot be read is logged as
one rejected row and skipped, and non-UTF-8 bytes and unparsable dates are kept and flagged. Under
``ReaderSettings(strict=True)`` (``--strict``) malformed input is an error naming the file instead.
Reading the bytes is :mod:`ratio_bench.corpus.sources`; this module turns raw records into papers.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ratio_bench.core.errors import RatioError
from ratio_bench.core.io import RejectLog
from ratio_bench.corpus import blocks
from ratio_bench.corpus.dates import parse_date
from ratio_bench.corpus.markdown import SectionTracker, looks_like_markdown, parse_markdown, parse_plain
from ratio_bench.corpus.records import Paper, Paragraph
from ratio_bench.corpus.report import CorpusReport
from ratio_bench.corpus.sections import PROSE_CATEGORIES, SectionCategory
from ratio_bench.corpus.sources import (
    STRICT_HINT,
    BadRecord,
    CorpusFileError,
    CorpusFormatError,
    corpus_files,
    detect_format,
    format_of_keys,
    iter_raw_records,
)

FORMATS = ("shared", "s2orc")
TEXT_FORMATS = ("auto", "markdown", "plain", "abstract")
# Rejects that say the input is malformed rather than merely without usable prose: fatal under ``strict``.
MALFORMED_REASONS = frozenset({"malformed_json", "not_an_object", "non_utf8_bytes"})
MALFORMED_PREFIXES = ("wrong_type:", "invalid_unicode:", "file_")


def is_malformed(reason: str) -> bool:
    return reason in MALFORMED_REASONS or reason.startswith(MALFORMED_PREFIXES)


class ReaderSettingsError(RatioError, ValueError):
    """A reader setting outside its choices."""


class CorpusRecordError(RatioError):
    """A malformed record met under ``--strict``."""


@dataclass
class ReaderSettings:
    """What to read and keep. ``keep_categories`` defaults to every prose category (appendices included).

    ``strict`` turns malformed input (see :func:`is_malformed`: bad JSON, wrong field types, invalid UTF-8, a
    file that cannot be read) into an error naming the file, instead of a reject; records that are merely
    without id, text or prose are rejected either way.
    """

    fmt: str | None = None  # None: detect per file
    text_format: str = "auto"
    keep_categories: frozenset[SectionCategory] = field(default_factory=lambda: PROSE_CATEGORIES)
    strict: bool = False

    def __post_init__(self) -> None:
        if self.fmt is not None and self.fmt not in FORMATS:
            raise ReaderSettingsError(
                f"unknown corpus format {self.fmt!r} for --format; expected one of {FORMATS}"
            )
        if self.text_format not in TEXT_FORMATS:
            raise ReaderSettingsError(
                f"unknown text format {self.text_format!r} for --text-format; expected one of {TEXT_FORMATS}"
            )


_SCALARS = (str, int, float)


def _is_scalar(v: Any) -> bool:
    return v is None or (isinstance(v, _SCALARS) and not isinstance(v, bool))


def _str(v: Any) -> str | None:
    if v is None:
        return None
    s = str(v).strip()
    return s or None


# A Python list printed into a string (``arXiv ['cs.CL', 'cs.AI']``, as some corpus dumps carry categories)
_LIST_REPR = re.compile(r"""\[\s*((?:'[^'\[\]]*'|"[^"\[\]]*")(?:\s*,\s*(?:'[^'\[\]]*'|"[^"\[\]]*"))*)\s*\]""")
_QUOTED = re.compile(r"'([^']*)'|\"([^\"]*)\"")


def _venue(v: Any) -> str | None:
    """A venue as a clean string, fixed here so every layer above (release column, search tables) shows it so:
    a list (``["cs.CL", "cs.AI"]``) or a list printed into the string (``arXiv ['cs.CL']``) becomes its items
    joined with ``, `` (``cs.CL, cs.AI``; ``arXiv cs.CL``)."""
    if isinstance(v, list):
        return _str(", ".join(item for x in v if (item := _str(x))))
    text = _str(v)
    if text is None:
        return None
    joined = _LIST_REPR.sub(
        lambda m: ", ".join(a or b for a, b in _QUOTED.findall(m.group(1)) if (a or b).strip()), text
    )
    return _str(" ".join(joined.split()))


def _is_unicode(text: str) -> bool:
    """False for a string with a lone surrogate: JSON's ``\\ud800`` escapes make one, UTF-8 cannot encode it."""
    if text.isascii():
        return True
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _first_invalid_unicode(rec: dict[str, Any]) -> str | None:
    """The reject reason for the first field (dotted; list items under their list's name) whose name or text is
    not valid Unicode (None: all are). Iterative, since a record may nest as deep as JSON allows."""
    stack: list[tuple[str, Any]] = [("", rec)]
    while stack:
        where, value = stack.pop()
        if isinstance(value, str) and not _is_unicode(value):
            return f"invalid_unicode:{where}"
        if isinstance(value, list):
            stack.extend((where, v) for v in reversed(value))
        elif isinstance(value, dict):
            items = [(str(k), v) for k, v in value.items() if where or not str(k).startswith("__")]
            prefix = f"{where}." if where else ""
            if not all(_is_unicode(k) for k, _ in items):
                return f"invalid_unicode:{prefix}field_name"
            stack.extend((prefix + k, v) for k, v in reversed(items))
    return None


def _first_wrong_type(rec: dict[str, Any], names: Iterable[str], prefix: str = "") -> str | None:
    """The reject reason for the first field that is not a string or a number (None: all are); a venue may
    also be a list of them (see :func:`_venue`)."""
    for name in names:
        value = rec.get(name)
        if name == "venue" and isinstance(value, list) and all(map(_is_scalar, value)):
            continue
        if not _is_scalar(value):
            return f"wrong_type:{prefix}{name}"
    return None


_SHARED_SCALARS = ("id", "title", "venue", "kind", "source", "license")
_S2ORC_META_SCALARS = ("title", "venue", "journal", "license")


def _is_paragraph(p: Any) -> bool:
    """An S2ORC paragraph: an object whose text, section and section number are strings or numbers."""
    return (
        isinstance(p, dict)
        and (p.get("text") is None or isinstance(p.get("text"), str))
        and _is_scalar(p.get("section"))
        and _is_scalar(p.get("sec_num"))
    )


def _record_id(rec: dict[str, Any]) -> str:
    """The record's id when it has a usable one (valid Unicode, so the rejects file can hold it), else where it
    is (``line:N`` or ``row:N``)."""
    for key in ("id", "corpusid", "paper_id"):
        if _is_scalar(rec.get(key)) and (rid := _str(rec.get(key))) and _is_unicode(rid):
            return rid
    return f"line:{rec['__line__']}" if "__line__" in rec else f"row:{rec.get('__row__')}"


def _fields_of_study(meta: dict[str, Any]) -> list[str]:
    raw = meta.get("fields_of_study") or meta.get("s2fieldsofstudy") or meta.get("fieldsOfStudy") or []
    out = []
    for f in raw if isinstance(raw, list) else [raw]:
        name = f.get("category") if isinstance(f, dict) else f
        if name and _is_scalar(name) and str(name) not in out:
            out.append(str(name))
    return out


class PaperReader:
    """Turns corpus files into :class:`Paper` records and fills the stage report and the rejects log.

    Every row read is counted under ``papers_read`` of its file and ends up either kept or rejected, and a file
    that cannot be read (any further) counts as one row read and rejected with a ``file_*`` reason, so every
    report has ``papers_read == papers_kept + sum(rejected)`` per file, and the rejects file holds one
    ``dropped`` row per rejected count plus one ``flagged`` row per flag.
    """

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
        """Papers of one file, or of one Parquet row group of it (the unit of parallel work).

        The format is detected from a Parquet file's columns, or from a JSONL file's first object while it
        streams (so the file is read once).
        """
        fmt = self.settings.fmt
        try:
            if fmt is None and path.suffix == ".parquet":
                fmt = detect_format(path)
            for rec in iter_raw_records(path, row_group):
                if isinstance(rec, BadRecord):
                    self.report[path.name].papers_read += 1
                    self._reject(path, rec.record_id, rec.reason, detail=rec.detail)
                    continue
                if fmt is None:
                    keys = [k for k in rec if not k.startswith("__")]
                    fmt = format_of_keys(keys)
                    if fmt is None:
                        raise CorpusFormatError(
                            path, f"cannot detect the corpus format from fields {sorted(keys)}"
                        )
                paper = self.to_paper(rec, fmt, path)
                if paper is not None:
                    yield paper
        except CorpusFileError as e:
            if self.settings.strict:
                raise
            self.report[path.name].papers_read += 1
            where = {"row_group": row_group} if row_group is not None else {}
            self._reject(path, None, e.reason, detail=e.detail, **where)

    def _reject(
        self, path: Path, record_id: str | None, reason: str, action: str = "dropped", **extra: Any
    ) -> None:
        """Count and log one reject of ``path``; under ``strict`` a malformed one is an error instead."""
        if self.settings.strict and is_malformed(reason):
            detail = extra.get("detail")
            where = f"{record_id}: " if record_id else ""
            raise CorpusRecordError(
                f"{path}: {where}{reason}" + (f" ({detail})" if detail else "") + f"; {STRICT_HINT}"
            )
        counts = self.report[path.name]
        (counts.rejected if action == "dropped" else counts.flagged)[reason] += 1
        self.rejects.add(path.name, record_id, reason, action=action, **extra)

    # -- one record -------------------------------------------------------------------------------------

    def to_paper(self, rec: dict[str, Any], fmt: str, path: Path) -> Paper | None:
        source_file = path.name
        counts = self.report[source_file]
        counts.papers_read += 1
        invalid = _first_invalid_unicode(rec)
        if invalid is not None:
            self._reject(path, _record_id(rec), invalid)
            return None
        paper, dropped, reason = (self._from_s2orc if fmt == "s2orc" else self._from_shared)(rec, source_file)
        counts.raw_bytes += self._raw_size(rec, fmt)
        counts.blocks_dropped.update(dropped)
        rid = _record_id(rec)
        if paper is None:
            self._reject(path, rid, reason)
            return None
        if rec.get("__non_utf8__"):
            self._reject(path, rid, "non_utf8_bytes", action="flagged")
        if paper.date.parse_error:
            self._reject(path, rid, "unparsable_date", action="flagged", date=paper.date.raw)
        kept = []
        for para in paper.paragraphs:
            if para.category in self.settings.keep_categories:
                kept.append(para)
                counts.paragraphs_by_category[para.category.value] += 1
            else:
                counts.paragraphs_dropped_by_category[para.category.value] += 1
        if not kept:
            self._reject(path, rid, "no_prose_kept")
            return None
        paper.paragraphs = kept
        paper.source_file = source_file
        counts.papers_kept += 1
        counts.date_precision[paper.date.precision.value] += 1
        return paper

    @staticmethod
    def _raw_size(rec: dict[str, Any], fmt: str) -> int:
        """Bytes of body text, counting only text of the types the record's format allows."""
        if fmt == "shared":
            text = rec.get("text")
            return len(text.encode("utf-8")) if isinstance(text, str) else 0
        parse = rec.get("pdf_parse")
        if not isinstance(parse, dict):
            return 0
        paras = [p for key in ("abstract", "body_text") if isinstance(ps := parse.get(key), list) for p in ps]
        return sum(
            len(p["text"].encode("utf-8"))
            for p in paras
            if isinstance(p, dict) and isinstance(p.get("text"), str)
        )

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
        wrong = _first_wrong_type(rec, _SHARED_SCALARS)
        if wrong is not None:
            return None, Counter(), wrong
        pid = _str(rec.get("id"))
        if pid is None:
            return None, Counter(), "missing_id"
        text = rec.get("text")
        if text is not None and not isinstance(text, str):
            return None, Counter(), "wrong_type:text"
        if text is None or not text.strip():
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
            venue=_venue(rec.get("venue")),
            title=_str(rec.get("title")) or front_title,
            kind=kind,
            license=_str(rec.get("license")),
            text_format=tf,
        )
        return paper, dropped, ""

    def _from_s2orc(self, rec: dict[str, Any], source_file: str) -> tuple[Paper | None, Counter[str], str]:
        wrong = _first_wrong_type(rec, ("corpusid", "paper_id", "source", "license"))
        if wrong is not None:
            return None, Counter(), wrong
        pid = _str(rec.get("corpusid") if rec.get("corpusid") is not None else rec.get("paper_id"))
        if pid is None:
            return None, Counter(), "missing_id"
        meta = rec.get("metadata") or {}
        parse = rec.get("pdf_parse") or {}
        for name, value in (("metadata", meta), ("pdf_parse", parse)):
            if not isinstance(value, dict):
                return None, Counter(), f"wrong_type:{name}"
        for name in ("abstract", "body_text"):
            if not isinstance(parse.get(name) or [], list):
                return None, Counter(), f"wrong_type:pdf_parse.{name}"
        wrong = _first_wrong_type(meta, _S2ORC_META_SCALARS, prefix="metadata.")
        if wrong is not None:
            return None, Counter(), wrong
        dropped: Counter[str] = Counter()
        paragraphs: list[Paragraph] = []
        abstract = parse.get("abstract") or []
        if not abstract and isinstance(meta.get("abstract"), str):
            abstract = [{"text": meta["abstract"], "section": "Abstract"}]
        for p in abstract:
            if not _is_paragraph(p):
                dropped["malformed_paragraph"] += 1
                continue
            text = blocks.unwrap(p.get("text") or "")
            if text:
                paragraphs.append(Paragraph(text, "Abstract", SectionCategory.ABSTRACT))
        tracker = SectionTracker()
        last_heading = None
        category = SectionCategory.OTHER
        for p in parse.get("body_text") or []:
            if not _is_paragraph(p):
                dropped["malformed_paragraph"] += 1
                continue
            section = _str(p.get("section"))
            heading = " ".join(x for x in (_str(p.get("sec_num")), section) if x) or None
            if heading != last_heading:
                category = tracker.enter(heading, 2) if heading else SectionCategory.OTHER
                last_heading = heading
            raw = p.get("text") or ""
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
            venue=_venue(meta.get("venue") or meta.get("journal")),
            title=_str(meta.get("title")),
            kind="fulltext" if parse.get("body_text") else "abstract",
            license=_str(meta.get("license") or rec.get("license")),
            fields_of_study=_fields_of_study(meta),
            text_format="s2orc",
        )
        return paper, dropped, ""
