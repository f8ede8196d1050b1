"""Pattern expansion: Hearst-style templates with typed slots, filled from term lists and inflected.

A template is text with ``{slot:TAG}`` (a term from ``terms/<slot>.txt`` inflected with lemminflect to the
Penn tag TAG; a noun slot without a tag yields singular and plural), ``{dem}`` (a demonstrative agreeing in
number with the next noun: this/that or these/those), ``(...)`` for an optional part and ``{a|b}`` for a
choice. Expansion is exhaustive and deterministic; the candidates go to a review file, and only the rows a
reviewer marks ``accept`` join the lexicon (stage ``pattern``).
"""

from __future__ import annotations

import csv
import itertools
import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from ratio_bench.core import extras
from ratio_bench.core.relations import RELATIONS
from ratio_bench.core.yamlio import load_yaml
from ratio_bench.lexicon.model import Lexicon, LexiconError, normalise_marker

lemminflect = extras.lazy("lemminflect")

_TOKEN = re.compile(r"\(|\)|\{[^}]*\}|[^\s(){}]+")
_SINGULAR_DEM = ("this", "that")
_PLURAL_DEM = ("these", "those")
_NOUN_TAGS = ("NN", "NNS")


@dataclass(frozen=True)
class Candidate:
    marker: str
    relation: str
    template: str


@cache
def inflect(word: str, tag: str) -> tuple[str, ...]:
    """The inflection of ``word`` (a lemma; multi-word terms inflect their first word) for a Penn tag."""

    head, _, rest = word.partition(" ")
    forms = lemminflect.getInflection(head, tag=tag) or (head,)
    return (f"{forms[0]} {rest}".strip(),)  # the preferred form only (lemminflect also lists rare variants)


def _parse(tokens: list[str], pos: int = 0) -> tuple[list, int]:
    """Template tokens to a tree: strings, ('opt', subtree), ('slot', name, tag), ('choice', options), 'DEM'."""
    out: list = []
    while pos < len(tokens):
        tok = tokens[pos]
        if tok == "(":
            sub, pos = _parse(tokens, pos + 1)
            out.append(("opt", sub))
        elif tok == ")":
            return out, pos + 1
        elif tok.startswith("{"):
            body = tok[1:-1]
            if body == "dem":
                out.append("DEM")
            elif "|" in body:
                out.append(("choice", tuple(x.strip() for x in body.split("|"))))
            else:
                name, _, tag = body.partition(":")
                out.append(("slot", name.strip(), tag.strip() or None))
            pos += 1
            continue
        else:
            out.append(tok)
        if tok != "(":
            pos += 1
    return out, pos


def _sequences(tree: list, terms: dict[str, list[str]]) -> Iterator[list[tuple[str, str | None]]]:
    """Every filled word sequence; each word carries 'NN'/'NNS' when it came from a noun slot."""
    if not tree:
        yield []
        return
    head, rest = tree[0], tree[1:]
    options: list[list[tuple[str, str | None]]]
    if isinstance(head, str):
        options = [[(head, None)]]
    elif head[0] == "opt":
        options = [[], *list(_sequences(head[1], terms))]
    elif head[0] == "choice":
        options = [[(c, None)] for c in head[1]]
    else:
        _, name, tag = head
        if name not in terms:
            raise LexiconError(f"template slot {{{name}}} has no term list terms/{name}.txt")
        tags = (tag,) if tag else _NOUN_TAGS
        options = [
            [(form, t if t in _NOUN_TAGS else None)]
            for w in terms[name]
            for t in tags
            for form in inflect(w, t)
        ]
    for first in options:
        for tail in _sequences(rest, terms):
            yield first + tail


def _resolve_demonstratives(words: list[tuple[str, str | None]]) -> Iterator[str]:
    slots = []
    for i, (w, _) in enumerate(words):
        if w == "DEM":
            number = next((t for _, t in words[i + 1 :] if t in _NOUN_TAGS), "NN")
            slots.append(_PLURAL_DEM if number == "NNS" else _SINGULAR_DEM)
    for choice in itertools.product(*slots):
        it = iter(choice)
        yield " ".join(next(it) if w == "DEM" else w for w, _ in words)


def expand_template(template: str, terms: dict[str, list[str]]) -> list[str]:
    tree, _ = _parse(_TOKEN.findall(template))
    out = dict.fromkeys(
        normalise_marker(m) for seq in _sequences(tree, terms) for m in _resolve_demonstratives(seq)
    )
    return [m for m in out if m]


def load_terms(folder: Path) -> dict[str, list[str]]:
    terms = {}
    for f in sorted(folder.glob("*.txt")):
        terms[f.stem] = [
            w.strip()
            for w in f.read_text(encoding="utf-8").splitlines()
            if w.strip() and not w.startswith("#")
        ]
    return terms


def expand(templates_dir: Path, relations: list[str] | None = None) -> list[Candidate]:
    """All candidates from ``templates_dir/<relation>.yaml`` and ``templates_dir/terms``."""
    terms = load_terms(templates_dir / "terms")
    out: dict[tuple[str, str], Candidate] = {}
    for path in sorted(templates_dir.glob("*.yaml")):
        spec = load_yaml(path.read_text(encoding="utf-8"))
        relation = spec["relation"]
        if relation not in RELATIONS:
            raise LexiconError(f"{path}: unknown relation {relation!r}")
        if relations and relation not in relations:
            continue
        for template in spec["templates"]:
            for marker in expand_template(template, terms):
                out.setdefault((relation, marker), Candidate(marker, relation, template))
    return list(out.values())


REVIEW_COLUMNS = ("marker", "relation", "template", "in_lexicon", "decision")


def write_review(path: Path, candidates: list[Candidate], lexicon: Lexicon) -> dict[str, int]:
    """Write the review file (``decision`` left empty for a person, or prefilled ``known`` / ``conflict``)."""
    counts = {"new": 0, "known": 0, "conflict": 0}
    with path.open("w", encoding="utf-8", newline="") as fh:
        w = csv.writer(fh, delimiter="\t", lineterminator="\n")
        w.writerow(REVIEW_COLUMNS)
        for c in sorted(candidates, key=lambda c: (c.relation, c.marker)):
            entry = lexicon.entries.get(c.marker)
            if entry is None:
                decision, counts["new"] = "", counts["new"] + 1
            elif entry.label == c.relation:
                decision, counts["known"] = "known", counts["known"] + 1
            else:
                decision, counts["conflict"] = "conflict", counts["conflict"] + 1
            w.writerow((c.marker, c.relation, c.template, entry.label if entry else "", decision))
    return counts


def accept_reviewed(review: Path, lexicon_dir: Path, stage: str = "pattern") -> dict[str, int]:
    """Append rows marked ``accept`` to their relation's TSV with ``stage``; the result must load.

    For stage ``llm`` every accepted row must carry the classifier label ``strong-true`` (spec appendix A).
    """
    if stage not in ("pattern", "llm"):
        raise LexiconError(f"review files add markers of stage pattern or llm, not {stage!r}")
    manifest = load_yaml((lexicon_dir / "lexicon.yaml").read_text(encoding="utf-8"))
    lexicon = Lexicon.load(lexicon_dir)
    added: dict[str, list[tuple[str, str]]] = {}
    with review.open(encoding="utf-8", newline="") as fh:
        for n, row in enumerate(csv.DictReader(fh, delimiter="\t"), 2):
            if (row.get("decision") or "").strip().lower() != "accept":
                continue
            if stage == "llm" and row.get("llm_label") != "strong-true":
                raise LexiconError(
                    f"{review}:{n}: {row['marker']!r} is accepted but not labelled strong-true"
                )
            marker = normalise_marker(row["marker"])
            if marker in lexicon.entries:
                continue
            why = (
                f"LLM candidate ({row['template']}); classifier: {row.get('llm_reason', '')}"
                if stage == "llm"
                else f"pattern expansion of: {row['template']}"
            )
            added.setdefault(row["relation"], []).append((marker, " ".join(why.split())))
    for relation, rows in added.items():
        path = lexicon_dir / manifest["labels"][relation]["file"]
        with path.open("a", encoding="utf-8", newline="") as fh:
            for marker, rationale in rows:
                fh.write(f"{marker}\t{stage}\t{rationale}\n")
    Lexicon.load(lexicon_dir)  # re-validate: disjointness and file format
    return {r: len(v) for r, v in sorted(added.items())}
