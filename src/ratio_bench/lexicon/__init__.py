"""The marker lexicon: loading, validation, matching, pattern expansion and candidate discovery."""

from ratio_bench.lexicon.model import (
    DISTRACTOR_CATEGORIES,
    ConnectiveRule,
    Lexicon,
    LexiconError,
    MarkerEntry,
    MarkerMatch,
    default_lexicon_dir,
)

__all__ = [
    "DISTRACTOR_CATEGORIES",
    "ConnectiveRule",
    "Lexicon",
    "LexiconError",
    "MarkerEntry",
    "MarkerMatch",
    "default_lexicon_dir",
]
