"""A link to a candidate's source paper, where its paper id says where the paper lives.

The shared corpus prefixes ids by source: ``arxiv/<arXiv id>``, ``iclr26/``, ``neurips25/`` and ``neurips/``
followed by an OpenReview forum id, and ``acl/`` followed by an ACL Anthology id with its hyphens written as
dots (``2020.acl.main.371`` is ``2020.acl-main.371``, ``P17.2.8`` is ``P17-2008``) or, for ScisummNet papers,
as published (``C10-2104``). Any other id gets no link rather than a guessed one.
"""

from __future__ import annotations

import re

OPENREVIEW_PREFIXES = ("iclr26", "neurips25", "neurips")
_ARXIV = re.compile(r"^(\d{4}\.\d{4,5}(v\d+)?|[a-z-]+(\.[A-Z]{2})?/\d{7})$")
_OPENREVIEW = re.compile(r"^[A-Za-z0-9_-]{8,16}$")
_ACL_NEW = re.compile(r"^(\d{4})\.([a-z0-9]+)\.([a-z0-9]+)\.(\d+)$")  # 2020.acl.main.371
_ACL_OLD_DOTTED = re.compile(r"^([A-Z]\d{2})\.(\d{1,2})\.(\d{1,3})$")  # P17.2.8
_ACL_OLD = re.compile(r"^[A-Z]\d{2}-\d{4}$")  # C10-2104


def anthology_id(ref: str) -> str | None:
    """The ACL Anthology id of the part after ``acl/``, or None if it is not one."""
    if m := _ACL_NEW.match(ref):
        year, venue, volume, number = m.groups()
        return f"{year}.{venue}-{volume}.{number}"
    if m := _ACL_OLD_DOTTED.match(ref):
        letter_year, volume, number = m.groups()
        return f"{letter_year}-{volume}{int(number):0{4 - len(volume)}d}"
    return ref if _ACL_OLD.match(ref) else None


def source_url(paper_id: str | None) -> str | None:
    """``https://`` link to the paper behind ``paper_id``, or None when the id does not identify one."""
    if not paper_id or "/" not in paper_id:
        return None
    prefix, ref = paper_id.split("/", 1)
    if prefix == "arxiv" and _ARXIV.match(ref):
        return f"https://arxiv.org/abs/{ref}"
    if prefix in OPENREVIEW_PREFIXES and _OPENREVIEW.match(ref):
        return f"https://openreview.net/forum?id={ref}"
    if prefix == "acl" and (aid := anthology_id(ref)):
        return f"https://aclanthology.org/{aid}/"
    return None
