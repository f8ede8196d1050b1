"""The relation lists of ``eval/submission.schema.json``, written from :data:`~ratio_bench.core.relations.RELATIONS`.

The published schema is hand-written JSON (one line per short object, so a reviewer reads it as a table); only its
relation lists are ours to generate: the ``propertyNames`` enum of every object keyed by relation (the results,
the judged figures, the query counts, the per-query ranks, a withheld snapshot's counts and intervals) and the
``tuned_for`` enum (the relations and ``all``). :func:`render_schema` rewrites exactly those lists in the
committed text and leaves every other byte alone, so the file is its own template: a new relation is one record in
``core/relations.py`` and ``make generate`` (``python -m ratio_bench.evaluation.generated``), and a test keeps the
committed file equal to its render.

The slots are found in the text and then checked in the parsed document: every ``propertyNames`` enum must sit at
one of :data:`RELATION_KEYED`, so an enum of another kind added under ``propertyNames`` stops the render with its
path rather than being overwritten with relation names.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence
from typing import Any

from ratio_bench.core.errors import RatioError
from ratio_bench.core.relations import RELATIONS

# The schema's objects keyed by relation (``/`` joins property names under ``properties``).
RELATION_KEYED = ("results", "judged", "n_queries", "per_query", "withheld/n_queries", "withheld/interval")
TUNED_FOR_EXTRA = ("all",)  # tuned_for: a relation, or one unified model for every move

_KEYED = re.compile(r'("propertyNames": \{"enum": )\[[^\]\n]*\]')
_TUNED_FOR = re.compile(r'("tuned_for": \{[^\n]*?"enum": )\[[^\]\n]*\]')


class SchemaTemplateError(RatioError):
    """The committed schema no longer has the relation slots the render rewrites (or has one too many)."""


def render_schema(text: str, relations: Sequence[str] = RELATIONS) -> str:
    """``text`` (the committed schema) with its relation lists set to ``relations``; every other byte kept."""
    names = json.dumps(list(relations))
    out, keyed = _KEYED.subn(lambda m: m.group(1) + names, text)
    out, tuned = _TUNED_FOR.subn(lambda m: m.group(1) + json.dumps([*relations, *TUNED_FOR_EXTRA]), out)
    found = sorted(_keyed_paths(json.loads(out)))
    if tuned != 1 or keyed != len(RELATION_KEYED) or found != sorted(RELATION_KEYED):
        raise SchemaTemplateError(
            f"eval/submission.schema.json: relation slots at {found} (+{tuned} tuned_for), expected "
            f"{sorted(RELATION_KEYED)} (+1): update RELATION_KEYED in evaluation/entry/schema.py"
        )
    return out


def _keyed_paths(schema: dict[str, Any], prefix: str = "") -> Iterator[str]:
    """The property paths (``withheld/n_queries``) whose value has a ``propertyNames`` enum."""
    for name, sub in schema.get("properties", {}).items():
        path = f"{prefix}{name}"
        if "enum" in sub.get("propertyNames", {}):
            yield path
        yield from _keyed_paths(sub, path + "/")
