"""The marker lexicon as loaded from ``lexicon/<version>/`` and matched against sentences.

Matching costs one dictionary look-up per comma-terminated leading span of a sentence (usually one or two),
plus the extendable-connective rules indexed by their first word; it never scans the marker list. The longest
span that matches wins, and at equal length an exact entry beats a connective rule.
"""

from __future__ import annotations

import csv
import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

from ratio_bench.core.errors import RatioError
from ratio_bench.core.relations import RELATIONS
from ratio_bench.core.resources import data_path
from ratio_bench.core.yamlio import load_yaml
from ratio_bench.corpus.cleaning import MAX_MARKER_WORDS

DISTRACTOR_CATEGORIES: tuple[str, ...] = (
    "explicit_contrast",
    "implicit_similarity",
    "explicit_similarity",
    "common_irrelevant",
)
STAGES: tuple[str, ...] = ("manual", "connective", "pattern", "llm", "embedding")


class LexiconError(RatioError, ValueError):
    """A lexicon file that is malformed or breaks the lexicon's invariants (e.g. overlapping labels)."""


def normalise_marker(text: str) -> str:
    """The lookup key of a marker: lower-case, single spaces, no trailing comma."""
    return " ".join(text.lower().split()).rstrip(",").strip()


def default_lexicon_dir() -> Path:
    """``lexicon/v1``, the published lexicon, as shipped with the package."""
    return data_path("lexicon", "v1")


@dataclass(frozen=True)
class MarkerEntry:
    marker: str
    label: str  # a relation or a distractor category
    stage: str
    rationale: str

    @property
    def is_target(self) -> bool:
        return self.label in RELATIONS


@dataclass(frozen=True)
class ConnectiveRule:
    prefix: str
    label: str
    max_extra_words: int
    rationale: str


class MarkerMatch(NamedTuple):
    """A marker found at the start of a sentence (a tuple: built once per hit on the hot path)."""

    marker: str  # the matched span, normalised (for a connective: the whole extended span)
    label: str
    stage: str
    end: int  # offset just after the marker's comma in the sentence
    entry: str  # the lexicon entry that fired: the marker itself, or "<prefix> …" for a connective rule

    @property
    def is_target(self) -> bool:
        return self.label in RELATIONS


class Lexicon:
    """Markers by label plus extendable-connective rules, with O(1) matching per sentence."""

    def __init__(
        self,
        entries: list[MarkerEntry],
        connectives: list[ConnectiveRule],
        version: str = "dev",
        max_words: int = MAX_MARKER_WORDS,
    ):
        self.version = version
        self.max_words = max_words
        self.connectives = connectives
        self.entries: dict[str, MarkerEntry] = {}
        clashes = []
        for e in entries:
            prev = self.entries.get(e.marker)
            if prev is not None and prev.label != e.label:
                clashes.append(f"{e.marker!r}: {prev.label} vs {e.label}")
            self.entries.setdefault(e.marker, e)
        if clashes:
            raise LexiconError("labels are not disjoint: " + "; ".join(clashes[:20]))
        self._first_words = frozenset(m.split(" ", 1)[0] for m in self.entries) | frozenset(
            r.prefix.split(" ", 1)[0] for r in connectives
        )
        self._prebuilt = {m: MarkerMatch(m, e.label, e.stage, len(m) + 1, m) for m, e in self.entries.items()}
        self._rules_by_first: dict[str, list[ConnectiveRule]] = {}
        for rule in sorted(connectives, key=lambda r: -len(r.prefix)):
            self._rules_by_first.setdefault(rule.prefix.split()[0], []).append(rule)

    # -- loading ---------------------------------------------------------------------------------------

    @classmethod
    def load(cls, directory: str | Path | None = None) -> Lexicon:
        root = Path(directory) if directory else default_lexicon_dir()
        manifest_path = root / "lexicon.yaml"
        if not manifest_path.exists():
            raise LexiconError(
                f"{root}: not a lexicon folder (missing lexicon manifest lexicon.yaml); "
                "give a folder laid out like the shipped lexicon/v1 (--lexicon)"
            )
        manifest = load_yaml(manifest_path.read_text(encoding="utf-8"))
        entries: list[MarkerEntry] = []
        for label, spec in manifest["labels"].items():
            if label not in RELATIONS + DISTRACTOR_CATEGORIES:
                raise LexiconError(f"{manifest_path}: unknown label {label!r}")
            entries.extend(_read_markers(root / spec["file"], label))
        connectives = _read_connectives(root / manifest["connectives"]) if manifest.get("connectives") else []
        return cls(
            entries,
            connectives,
            version=str(manifest.get("version", "dev")),
            max_words=int(manifest.get("max_marker_words", MAX_MARKER_WORDS)),
        )

    # -- queries ---------------------------------------------------------------------------------------

    def labels(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for e in self.entries.values():
            out[e.label] = out.get(e.label, 0) + 1
        return dict(sorted(out.items()))

    def markers(self, label: str | None = None) -> list[str]:
        return sorted(m for m, e in self.entries.items() if label is None or e.label == label)

    def __contains__(self, span: object) -> bool:
        """Whether ``span`` is any marker (used to strip an antecedent's leading discourse clause)."""
        return span in self.entries

    def __len__(self) -> int:
        return len(self.entries)

    def fingerprint(self) -> str:
        """SHA-256 over the sorted entries and rules: identifies the lexicon a build used."""
        h = hashlib.sha256()
        for m in sorted(self.entries):
            e = self.entries[m]
            h.update(f"{m}\t{e.label}\t{e.stage}\n".encode())
        for r in sorted(self.connectives, key=lambda r: (r.prefix, r.label)):
            h.update(f"connective\t{r.prefix}\t{r.label}\t{r.max_extra_words}\n".encode())
        return h.hexdigest()

    def match(self, sentence: str) -> MarkerMatch | None:
        """The marker that opens ``sentence``: its leading span up to the first comma, or None.

        Markers never contain a comma (checked on load) and connective extensions run "up to a comma" (spec
        4.1), so the span before the first comma is the only candidate; at equal span an exact entry beats a
        connective rule, which is how "To address this issue," stays a manual marker while "To address the
        lack of labels," is an extended connective.
        """
        return self.match_at(sentence, 0, len(sentence))

    def match_at(self, text: str, start: int, end: int) -> MarkerMatch | None:
        """``match`` for the sentence ``text[start:end]`` without slicing it out (``end`` of the result is
        relative to ``start``). This runs once per sentence of the corpus, so the common cases are decided with
        C-level string methods on offsets before any span is built: no comma within the first ``max_words``
        words, or a first word that opens no marker ("The", "We", ...).
        """
        comma = text.find(",", start, end)
        if comma < 0 or text.count(" ", start, comma) >= self.max_words:
            return None
        space = text.find(" ", start, comma)
        if text[start : space if space > 0 else comma].lower() not in self._first_words:
            return None
        raw = text[start:comma].lower()
        hit = self._prebuilt.get(raw)
        if hit is not None:
            return hit
        span = " ".join(raw.split())  # odd spacing ("For example ,"): normalise
        entry = self.entries.get(span)
        if entry is not None:
            return MarkerMatch(span, entry.label, entry.stage, comma - start + 1, span)
        rule = self._connective_for(span)
        if rule is not None:
            return MarkerMatch(span, rule.label, "connective", comma - start + 1, rule.prefix + " …")
        return None

    def _connective_for(self, span: str) -> ConnectiveRule | None:
        rules = self._rules_by_first.get(span.split(" ", 1)[0])
        if rules:
            words = span.count(" ")
            for rule in rules:
                if (
                    span.startswith(rule.prefix + " ")
                    and words - rule.prefix.count(" ") <= rule.max_extra_words
                ):
                    return rule
        return None

    def connective_conflicts(self) -> list[str]:
        """Markers of another label that a connective rule would also match (must be empty)."""
        out = []
        for m, e in self.entries.items():
            for r in self.connectives:
                if (
                    r.label != e.label
                    and m.startswith(r.prefix + " ")
                    and m.count(" ") - r.prefix.count(" ") <= r.max_extra_words
                ):
                    out.append(f"{m!r} ({e.label}) vs connective {r.prefix!r} ({r.label})")
        return out


def _read_markers(path: Path, label: str) -> list[MarkerEntry]:
    if not path.exists():
        raise LexiconError(f"{path}: missing marker file for {label!r}")
    out = []
    with path.open(encoding="utf-8", newline="") as fh:
        reader = csv.DictReader(fh, delimiter="\t")
        missing = {"marker", "stage", "rationale"} - set(reader.fieldnames or ())
        if missing:
            raise LexiconError(f"{path}: missing columns {sorted(missing)}")
        for lineno, row in enumerate(reader, start=2):
            marker = normalise_marker(row["marker"] or "")
            if not marker:
                raise LexiconError(f"{path}:{lineno}: empty marker")
            if row["stage"] not in STAGES:
                raise LexiconError(
                    f"{path}:{lineno}: unknown stage {row['stage']!r}; expected one of {STAGES}"
                )
            if "," in marker:
                raise LexiconError(f"{path}:{lineno}: marker {marker!r} contains a comma")
            out.append(MarkerEntry(marker, label, row["stage"], row["rationale"] or ""))
    return out


def _read_connectives(path: Path) -> list[ConnectiveRule]:
    out = []
    with path.open(encoding="utf-8", newline="") as fh:
        for lineno, row in enumerate(csv.DictReader(fh, delimiter="\t"), start=2):
            label = row["label"]
            if label not in RELATIONS + DISTRACTOR_CATEGORIES:
                raise LexiconError(f"{path}:{lineno}: unknown label {label!r}")
            out.append(
                ConnectiveRule(
                    normalise_marker(row["prefix"]),
                    label,
                    int(row["max_extra_words"]),
                    row["rationale"] or "",
                )
            )
    return out
