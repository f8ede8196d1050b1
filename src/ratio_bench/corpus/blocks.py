"""Block-level removal of what is not prose in PDF-parser output.

PDF parsers (Nougat, Docling, GROBID-era plain text) leave tables, display math, captions, footnotes and
markup in the text. Each rule here is a named function so that the reason a block was removed can be counted.
"""

from __future__ import annotations

import html
import re

_LATEX_ENV = re.compile(r"\\begin\{([A-Za-z]+\*?)\}.*?\\end\{\1\}", re.DOTALL)
_BRACKET_MATH = re.compile(r"\\\[.*?\\\]", re.DOTALL)
_DOLLAR_MATH = re.compile(r"\$\$.*?\$\$", re.DOTALL)
_PARSER_ARTEFACT = re.compile(r"\[MISSING_PAGE[^\]]*\]|<!--.*?-->", re.DOTALL)
_CAPTION = re.compile(
    r"^\s*(?:\*\*|_)?(?:figure|fig\.|table|tab\.|algorithm|listing|supplementary figure)\s*[A-Z]?\d+[a-z]?(?:\.\d+)?\s*(?:\*\*|_)?\s*[:.|]",
    re.IGNORECASE,
)
_TABLE_LINE = re.compile(r"^\s*\|.*\|\s*$")
_FOOTNOTE = re.compile(
    r"^\s*(?:Footnote\s*\d*\s*:"  # Nougat
    r"|\\\(\{\}\^\{[^}]*\}\\\)|\^\{?\d+\}?\s"  # superscript-led notes
    r"|[\u2217\u2020\u2021\u00a7\u00b6]"  # ∗ † ‡ § ¶ notes
    r"|\*\s*(?:equal|corresponding|work done|these authors|project lead|code))",
    re.IGNORECASE,
)
_NUMBERED_FOOTNOTE = re.compile(r"^\d{1,2}\s+[A-Z][a-z]")
_EMAIL = re.compile(r"[\w.+-]+@[\w-]+\.[\w.-]+|\{[\w.,\s]+\}@")
_BOLD_RUN_IN = re.compile(r"^\s*\*\*([^*\n]{1,120}?)\*\*[.:]?\s*")
# Each pattern starts with its literal delimiter (checked before the look-behind) so the regex engine can
# jump between delimiters instead of trying every position; this matters on math-heavy Nougat text.
_BOLD = re.compile(r"\*\*([^*\n]+?)\*\*")
_ITALIC_UNDERSCORE = re.compile(r"_(?<![\w\\]_)([^_\n]+?)_(?!\w)")
_ITALIC_STAR = re.compile(r"\*(?<![\w*\\]\*)([^*\n]+?)\*(?![\w*])")
_HYPHEN_WRAP = re.compile(r"(?<=[a-z])-\n(?=[a-z])")


def strip_latex_environments(text: str) -> str:
    """Remove ``\\begin{...}...\\end{...}`` blocks (tables, tabulars, aligned math, algorithms)."""
    return _LATEX_ENV.sub(" ", text) if "\\begin{" in text else text


def strip_display_math(text: str) -> str:
    """Remove display math ``\\[...\\]`` and ``$$...$$``; inline math stays (it is part of the sentence)."""
    if "\\[" in text:
        text = _BRACKET_MATH.sub(" ", text)
    if "$$" in text:
        text = _DOLLAR_MATH.sub(" ", text)
    return text


def strip_parser_artefacts(text: str) -> str:
    """Remove Nougat ``[MISSING_PAGE...]`` markers and Docling ``<!-- image -->`` comments; unescape HTML."""
    if "&" in text:
        text = html.unescape(text)
    return _PARSER_ARTEFACT.sub(" ", text) if ("[MISSING" in text or "<!--" in text) else text


def is_caption(block: str) -> bool:
    """Figure, table and algorithm captions (``Figure 3: ...``, ``Table 2. ...``)."""
    return bool(_CAPTION.match(block))


def is_table(block: str) -> bool:
    """A Markdown pipe table: most of its lines are ``| ... |`` rows."""
    if "|" not in block:
        return False
    lines = block.splitlines()
    rows = sum(1 for line in lines if _TABLE_LINE.match(line))
    return rows > 0 and rows * 2 >= len(lines)


def is_footnote(block: str, numbered: bool = False) -> bool:
    """Footnote debris: ``Footnote 2: ...``, superscript-led notes, and (in Markdown) ``3 The code is ...``."""
    if _FOOTNOTE.match(block):
        return True
    return numbered and bool(_NUMBERED_FOOTNOTE.match(block))


def is_author_block(block: str) -> bool:
    """Affiliation and e-mail lines that front matter leaves when a parser misses the title area."""
    return bool(_EMAIL.search(block)) and len(block) < 600


def strip_run_in_heading(block: str) -> tuple[str, str | None]:
    """Split ``**Limitations.** We note ...`` into the prose and its run-in heading."""
    m = _BOLD_RUN_IN.match(block)
    if not m:
        return block, None
    return block[m.end() :], m.group(1).strip()


def strip_emphasis(text: str) -> str:
    """Drop Markdown bold/italic markers, keeping their content."""
    if "*" in text:
        if "**" in text:
            text = _BOLD.sub(r"\1", text)
        if "*" in text:
            text = _ITALIC_STAR.sub(r"\1", text)
    if "_" in text:
        text = _ITALIC_UNDERSCORE.sub(r"\1", text)
    return text


def unwrap(text: str) -> str:
    """Join hard-wrapped lines (``exam-\\nple`` -> ``example``) and collapse whitespace runs to one space.

    The membership tests run in C and skip the split/join for the many paragraphs that need nothing.
    """
    if "-\n" in text:
        text = _HYPHEN_WRAP.sub("", text)
    if "\n" in text or "  " in text or "\t" in text or "\r" in text or "\xa0" in text:
        return " ".join(text.split())
    return text.strip()
