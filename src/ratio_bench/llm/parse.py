"""One parser for every judge reply: a JSON object with ``decision``, ``winner`` or ``markers``.

Models wrap JSON in markdown fences, add a sentence before it, or write booleans as strings ("True"); all of
that is accepted. A reply from which the expected field cannot be read raises ``InvalidReply``, which the
client answers with one re-ask before recording the reply as invalid.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

_FENCE = re.compile(r"^```(?:json)?\s*|\s*```$", re.IGNORECASE)
_TRUE = {"true", "yes", "1"}
_FALSE = {"false", "no", "0"}
WINNERS = ("A", "B", "tie")


class InvalidReply(ValueError):
    """The reply holds no JSON object with the field the prompt asks for."""


@dataclass(frozen=True)
class Verdict:
    decision: bool | None = None  # verdict prompts
    winner: str | None = None  # pairwise prompt: A, B or tie
    markers: tuple[str, ...] = ()  # generation prompt
    confidence: float | None = None
    reason: str = ""
    extra: dict[str, Any] = field(default_factory=dict)


def _json_object(text: str) -> dict[str, Any]:
    text = _FENCE.sub("", text.strip())
    try:
        obj = json.loads(text)
    except json.JSONDecodeError:
        start, end = text.find("{"), text.rfind("}")
        if start < 0 or end <= start:
            raise InvalidReply("no JSON object in the reply") from None
        try:
            obj = json.loads(text[start : end + 1])
        except json.JSONDecodeError as exc:
            raise InvalidReply(f"malformed JSON ({exc.msg})") from None
    if not isinstance(obj, dict):
        raise InvalidReply("the reply is JSON but not an object")
    return obj


def as_bool(value: Any) -> bool | None:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in _TRUE | _FALSE:
        return value.strip().lower() in _TRUE
    return None


def _confidence(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return min(1.0, max(0.0, float(value)))
    words = {"high": 0.9, "medium": 0.6, "low": 0.3}
    if isinstance(value, str):
        try:
            return min(1.0, max(0.0, float(value)))
        except ValueError:
            return words.get(value.strip().lower())
    return None


def parse_reply(text: str, output: str) -> Verdict:
    """The verdict in ``text`` for a prompt whose output kind is ``output`` (verdict/pairwise/markers)."""
    obj = _json_object(text)
    known = {"decision", "winner", "markers", "confidence", "reason"}
    common = {
        "confidence": _confidence(obj.get("confidence")),
        "reason": str(obj.get("reason") or "").strip(),
        "extra": {k: v for k, v in obj.items() if k not in known},
    }
    if output == "verdict":
        decision = as_bool(obj.get("decision"))
        if decision is None:
            raise InvalidReply('no boolean "decision" in the reply')
        return Verdict(decision=decision, **common)
    if output == "pairwise":
        winner = str(obj.get("winner", "")).strip()
        winner = {"a": "A", "b": "B", "tie": "tie"}.get(winner.lower(), "")
        if not winner:
            raise InvalidReply('"winner" must be "A", "B" or "tie"')
        return Verdict(winner=winner, **common)
    if output == "markers":
        markers = obj.get("markers")
        if not isinstance(markers, list) or not all(isinstance(m, str) for m in markers):
            raise InvalidReply('"markers" must be a list of strings')
        return Verdict(markers=tuple(m.strip() for m in markers if m.strip()), **common)
    raise ValueError(f"unknown output kind {output!r}")
