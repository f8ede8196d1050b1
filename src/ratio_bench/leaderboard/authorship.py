"""Who submitted it: a submission by someone other than the model repo's owner is a third party's, and the board
says so beside the entry and the queued request."""

from __future__ import annotations


def third_party(model: str, submitter: str | None) -> bool:
    """Whether ``submitter`` is not the model repo's owner (user or organisation name)."""
    return bool(submitter) and submitter != model.split("/")[0]


def submitted_by(model: str, submitter: str | None) -> str:
    """What the board says of a submission of someone else's model ("" for the author's own)."""
    return f"submitted by {submitter}, not the model's author" if third_party(model, submitter) else ""
