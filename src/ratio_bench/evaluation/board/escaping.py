"""Text from a submission made inert for the output it lands in: one visible line, then Markdown, HTML or a
rich console's markup escaped. Every text that comes from a submission (model, dataset name and version, file
names, rejection reasons) passes through one of these before it is rendered.
"""

from __future__ import annotations

import html
import string
import unicodedata

from rich.markup import escape

# Markdown: ASCII punctuation that is inert in inline text (tables and headings hold no block structure);
# every other punctuation mark is backslash-escaped, and <, > and & become entities.
_MD_INERT = set(".,-/'\"?;%@")
_MD_ENTITIES = {"<": "&lt;", ">": "&gt;", "&": "&amp;"}


def plain_text(text: str) -> str:
    """One line of visible text: line breaks and other control characters become spaces, format characters
    (bidirectional overrides, zero-width marks) are dropped, so a field cannot reorder or split what follows."""
    out = []
    for ch in str(text):
        category = unicodedata.category(ch)
        if category in ("Cc", "Zl", "Zp"):
            out.append(" ")
        elif category not in ("Cf", "Cs", "Co", "Cn"):
            out.append(ch)
    return "".join(out)


def markdown_text(text: str) -> str:
    """``text`` as literal inline Markdown: no markup, link, HTML tag, code span or table cell boundary."""
    out = []
    for ch in plain_text(text):
        if ch in _MD_ENTITIES:
            out.append(_MD_ENTITIES[ch])
        elif ch in string.punctuation and ch not in _MD_INERT:
            out.append("\\" + ch)
        else:
            out.append(ch)
    return "".join(out)


def html_text(text: str) -> str:
    """``text`` as HTML character data or a quoted attribute value."""
    return html.escape(plain_text(text), quote=True)


def terminal_text(text: str) -> str:
    """``text`` for a rich console: one line, markup brackets escaped."""

    return escape(plain_text(text))
