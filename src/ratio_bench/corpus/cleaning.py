"""Sentence cleaning rules of the spec's appendix B.1, each a named function.

The mining stage applies them to every (query, gold) pair: noise and list-marker removal on both sides, the
antecedent's leading discourse clause, ordinal prefixes on the gold, normalisation (lower-casing, with the
original casing optionally kept alongside) and the 35-character minimum.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Container
from dataclasses import dataclass

MIN_SENTENCE_CHARS = 35
MAX_MARKER_WORDS = 7

# C0/C1 controls, replacement characters, zero-width and bidi marks, private-use debris from PDF fonts.
_INVALID_RANGES = [
    (0x00, 0x08),
    (0x0B, 0x1F),
    (0x7F, 0x9F),
    (0xFFFD, 0xFFFF),
    (0x200B, 0x200F),
    (0x202A, 0x202E),
    (0x2060, 0x2064),
    (0xFEFF, 0xFEFF),
    (0xE000, 0xF8FF),
]
_INVALID = re.compile("[" + "".join(f"\\U{a:08x}-\\U{b:08x}" for a, b in _INVALID_RANGES) + "]")
_LIST_MARKER = re.compile(
    r"^(?:[\u2022\u25cf\u25aa\u2023\u2043\u25e6\-\u2013\u2014*+>]\s+"  # bullets
    r"|\[\d{1,3}\]\s*"  # [12]
    r"|\(?(?:\d{1,2}|[ivx]{1,4}|[a-h])\)\s+"  # 1)  (a)  (iv)
    r"|\d{1,2}\.(?!\d)\s+"  # 1.
    r")+",
    re.IGNORECASE,
)
_ORDINAL_PREFIX = re.compile(
    r"^(?:first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|last|"
    r"firstly|secondly|thirdly|fourthly|fifthly|lastly|"
    r"1st|2nd|3rd|4th|5th)\s*(?:,|:|\.)\s*",
    re.IGNORECASE,
)
_GOLD_PREFIX = re.compile(f"(?:{_ORDINAL_PREFIX.pattern}|{_LIST_MARKER.pattern[1:]})+", re.IGNORECASE)
_SPACE_BEFORE_PUNCT = re.compile(r" ([,;:.?!])")  # applied after whitespace is single spaces


def remove_invalid_characters(text: str) -> str:
    """Drop control characters, U+FFFD and similar debris left by PDF extraction."""
    return _INVALID.sub("", text) if _INVALID.search(text) else text


def normalise_unicode(text: str) -> str:
    """NFKC-normalise (ligatures such as ``ﬁ`` become ``fi``) and collapse whitespace."""
    if not unicodedata.is_normalized("NFKC", text):
        text = unicodedata.normalize("NFKC", text)
    return " ".join(text.split())


def remove_noise(text: str) -> str:
    """Invalid characters, redundant whitespace and space before punctuation."""
    text = remove_invalid_characters(text)
    if text.isascii() and "  " not in text and "\t" not in text and "\n" not in text:
        text = text.strip()  # ASCII is already NFKC; whitespace already single (the common case)
    else:
        text = normalise_unicode(text)
    return _SPACE_BEFORE_PUNCT.sub(_first_group, text) if _SPACE_BEFORE_PUNCT.search(text) else text


def _first_group(m: re.Match[str]) -> str:
    return m.group(1)


def strip_list_marker(text: str) -> str:
    """Leading bullets and enumerators: ``[3]``, ``1)``, ``(a)``, ``2.``, ``-``, ``•``."""
    m = _LIST_MARKER.match(text)
    return text[m.end() :] if m else text


def leading_span(sentence: str, max_words: int = MAX_MARKER_WORDS) -> tuple[str, int] | None:
    """The sentence's leading span up to its first comma, if it has at most ``max_words`` words.

    Returns the lower-cased, whitespace-normalised span and the offset just after the comma. Sentence-initial
    discourse markers are comma-delimited, so this is the only string a marker lexicon needs to look up.
    """
    comma = sentence.find(",")
    if comma <= 0:
        return None
    words = sentence[:comma].split()
    if not words or len(words) > max_words:
        return None
    return " ".join(words).lower(), comma + 1


def strip_leading_clause(sentence: str, markers: Container[str]) -> tuple[str, str | None]:
    """Remove a leading discourse clause (``However,`` / ``In particular,``) found in ``markers``.

    Returns the remainder and the clause removed (None when nothing matched).
    """
    lead = leading_span(sentence)
    if lead is not None and lead[0] in markers:
        return sentence[lead[1] :].lstrip(), lead[0]
    return sentence, None


def strip_ordinal_prefix(sentence: str) -> str:
    """Ordinal and list prefixes on a gold sentence: ``Second, ...``, ``Firstly: ...``, ``(ii) ...``."""
    m = _GOLD_PREFIX.match(sentence)
    return sentence[m.end() :] if m else sentence


def is_too_short(sentence: str, min_chars: int = MIN_SENTENCE_CHARS) -> bool:
    """The spec drops sentences under 35 characters (after cleaning)."""
    return len(sentence) < min_chars


def capitalise_first(sentence: str) -> str:
    """Upper-case the first letter of a cased remainder (``we apply dropout`` -> ``We apply dropout``)."""
    return sentence[:1].upper() + sentence[1:] if sentence[:1].islower() else sentence


@dataclass(frozen=True)
class CleanedPair:
    query: str
    gold: str
    query_cased: str
    gold_cased: str
    query_clause: str | None


@dataclass(frozen=True)
class Cleaner:
    """Applies the B.1 rules to a (query, gold-remainder) pair.

    ``lowercase`` follows the spec; the cased forms are always computed so that a build can keep them
    alongside (``keep_case``) at no extra pass over the data.
    """

    clause_markers: Container[str] = frozenset()
    lowercase: bool = True
    min_chars: int = MIN_SENTENCE_CHARS

    def clean_query(self, sentence: str) -> tuple[str, str | None]:
        text = strip_list_marker(remove_noise(sentence))
        text, clause = strip_leading_clause(text, self.clause_markers)
        return capitalise_first(text), clause

    def clean_gold(self, remainder: str) -> str:
        return capitalise_first(strip_ordinal_prefix(remove_noise(remainder)))

    def normalise(self, text: str) -> str:
        return text.lower() if self.lowercase else text

    def clean_pair(self, query: str, gold_remainder: str) -> CleanedPair | str:
        """Return the cleaned pair, or the reject reason (``short_query`` / ``short_gold``)."""
        q, clause = self.clean_query(query)
        g = self.clean_gold(gold_remainder)
        if is_too_short(q, self.min_chars):
            return "short_query"
        if is_too_short(g, self.min_chars):
            return "short_gold"
        return CleanedPair(self.normalise(q), self.normalise(g), q, g, clause)
