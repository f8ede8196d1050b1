"""Sectioned paragraphs from Markdown full text (Nougat ``#`` headings, Docling ``##`` headings) and from plain
paragraphs without headings.

Headings become section categories with three rules that hold across parsers: text before the first anchor
heading (abstract, introduction or a ``1 ...`` section) is front matter; numbered subsections and unrecognised
headings inherit their parent's category; once an appendix (``Appendix``, or a lettered ``A ...`` section after
numbered ones) or a checklist starts, it lasts to the end of the paper.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

from ratio_bench.corpus import blocks
from ratio_bench.corpus.records import Paragraph
from ratio_bench.corpus.sections import (
    SectionCategory,
    classify_heading,
    heading_depth,
    is_lettered_top_heading,
)

_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_HEADING_OPENERS = "# \t"  # ("" is in it too: empty blocks take the slow path, harmlessly)
_BLANK_LINES = re.compile(r"\n[ \t]*\n+")
_ANCHORS = {SectionCategory.ABSTRACT, SectionCategory.INTRODUCTION}
_STICKY = {SectionCategory.APPENDIX, SectionCategory.CHECKLIST}
_NON_PROSE = {SectionCategory.REFERENCES, SectionCategory.ACKNOWLEDGMENTS, SectionCategory.CHECKLIST}


@dataclass
class ParsedBody:
    """Paragraphs kept from a body, and blocks dropped by reason (for the stage report)."""

    paragraphs: list[Paragraph] = field(default_factory=list)
    dropped: Counter[str] = field(default_factory=Counter)
    title: str | None = None  # the first line of the front matter (PDF parsers put the paper title there)


class SectionTracker:
    """Assigns a category to each heading in document order (see module docstring for the rules)."""

    def __init__(self) -> None:
        self.current = SectionCategory.OTHER
        self.top: SectionCategory | None = None
        self.top_level = 99
        self.seen_numbered = False
        self.sticky: SectionCategory | None = None

    def enter(self, heading: str, level: int) -> SectionCategory:
        own = classify_heading(heading)
        depth = heading_depth(heading)
        if self.seen_numbered and depth == 1 and is_lettered_top_heading(heading):
            own = SectionCategory.APPENDIX
        if own in _STICKY:
            self.sticky = own  # an appendix after the checklist ends the checklist, and vice versa
        if self.sticky is not None:
            # Inside an appendix, references and acknowledgments are still removed.
            self.current = own if own in _NON_PROSE else self.sticky
            return self.current
        if depth == 1 and heading.strip()[:1].isdigit():
            self.seen_numbered = True
        if depth == 1:
            is_sub = False  # a numbered top-level section always starts afresh
        elif depth is not None:
            is_sub = True
        else:
            is_sub = level > self.top_level or own is SectionCategory.OTHER
        if self.top is not None and own not in _NON_PROSE and is_sub:
            self.current = self.top
        else:
            self.current, self.top, self.top_level = own, own, level
        return self.current


def _is_anchor(heading: str) -> bool:
    return classify_heading(heading) in _ANCHORS or (
        heading_depth(heading) == 1 and heading.strip()[:1] == "1"
    )


# First characters that can open a caption, a footnote or a run-in heading: blocks starting with anything else
# (most prose) skip those regular expressions entirely.
_CAPTION_OPENERS = frozenset("FfTtAaLlSs*_ \t")
_FOOTNOTE_OPENERS = frozenset("Ff\\^*\u2217\u2020\u2021\u00a7\u00b60123456789 \t")


def _clean_block(block: str, markdown: bool, dropped: Counter[str]) -> str | None:
    """Return the prose of one block, or None (counting why) when it is not prose."""
    first = block[:1]
    if "|" in block and blocks.is_table(block):
        dropped["table"] += 1
        return None
    if first in _CAPTION_OPENERS and blocks.is_caption(block):
        dropped["caption"] += 1
        return None
    if first in _FOOTNOTE_OPENERS and blocks.is_footnote(block, numbered=markdown):
        dropped["footnote"] += 1
        return None
    if "\\begin{" in block:  # an environment the parser never closed (truncated table): drop the rest
        block = block[: block.index("\\begin{")]
        dropped["unterminated_latex"] += 1
    if markdown:
        if first == "*" or first == " ":
            block, _ = blocks.strip_run_in_heading(block)
        if "\n" in block:
            block = "\n".join(line for line in block.split("\n") if not blocks.is_footnote(line))
        block = blocks.strip_emphasis(block)
    text = blocks.unwrap(block)
    if not text:
        dropped["empty"] += 1
        return None
    return text


def _prepare(text: str) -> str:
    text = blocks.strip_parser_artefacts(text)
    text = blocks.strip_latex_environments(text)
    return blocks.strip_display_math(text)


def _split_heading(block: str) -> tuple[re.Match[str] | None, str]:
    """Separate a leading heading line from the text that may follow it in the same block."""
    if block[:1] != "#" and (block[:1] not in " \t\n" or block.lstrip()[:1] != "#"):
        return None, block
    first, _, rest = block.strip().partition("\n")
    m = _HEADING.match(first)
    return (m, rest) if m else (None, block)


def parse_markdown(text: str) -> ParsedBody:
    """Parse PDF-parser Markdown into categorised paragraphs."""
    out = ParsedBody()
    # Only blocks that can start with a heading pay for the heading check.
    split = [
        _split_heading(b) if b[:1] in _HEADING_OPENERS else (None, b)
        for b in _BLANK_LINES.split(_prepare(text))
    ]
    has_anchor = any(m and _is_anchor(m.group(2)) for m, _ in split)
    tracker = SectionTracker()
    section: str | None = None
    category = SectionCategory.FRONT_MATTER if has_anchor else SectionCategory.OTHER
    if has_anchor and split:
        first = split[0][0].group(2) if split[0][0] else split[0][1].strip().partition("\n")[0]
        if first and not _is_anchor(first):
            out.title = blocks.strip_emphasis(first).strip() or None
    for heading, block in split:
        if heading is not None:
            title = blocks.strip_emphasis(heading.group(2)).strip()
            if not (category is SectionCategory.FRONT_MATTER and not _is_anchor(title)):
                section = title
                category = tracker.enter(title, len(heading.group(1)))
            # else: paper title or author names before the first anchor heading, still front matter
        if not block.strip():
            continue
        if category is SectionCategory.FRONT_MATTER or (section is None and blocks.is_author_block(block)):
            out.dropped["front_matter"] += 1
            continue
        prose = _clean_block(block, markdown=True, dropped=out.dropped)
        if prose is not None:
            out.paragraphs.append(Paragraph(prose, section, category))
    return out


def parse_plain(text: str) -> ParsedBody:
    """Parse blank-line separated paragraphs without headings (all OTHER)."""
    out = ParsedBody()
    for block in _BLANK_LINES.split(_prepare(text)):
        if not block.strip():
            continue
        prose = _clean_block(block, markdown=False, dropped=out.dropped)
        if prose is not None:
            out.paragraphs.append(Paragraph(prose, None, SectionCategory.OTHER))
    return out


def looks_like_markdown(text: str) -> bool:
    """True when the text has at least one Markdown heading line."""
    return bool(re.search(r"(?m)^#{1,6}\s+\S", text))
