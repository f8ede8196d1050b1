"""The board's measured cost, compared within one hardware class.

Throughput and peak memory are measured on the machine that scored an entry (``model_meta.hardware``), so they
compare only within one class. The board shows them once, as columns of its view (:mod:`.board_view`); this
module narrows a board to one class (``ratio leaderboard --hardware NAME``, the served page's
``?hardware=NAME``) and names the classes a board holds, for the page's links.
"""

from __future__ import annotations

from dataclasses import replace
from urllib.parse import quote

from ratio_bench.evaluation.board.escaping import html_text
from ratio_bench.evaluation.board.leaderboard import Board, LeaderboardError

COST_NOTE = (
    "Measured cost (encode throughput, peak memory) is comparable only within one hardware class, as named by "
    "the machine that scored the entry."
)
MAX_HARDWARE_NAME = 200


class UnknownHardware(LeaderboardError):
    """A hardware class the board holds no entry of (the served page answers 400)."""


def hardware_classes(board: Board) -> list[str]:
    """The hardware classes the board's entries were measured on, in name order."""
    return sorted(
        {
            e.model_meta.hardware
            for r in board.releases
            for e in r.entries
            if e.model_meta and e.model_meta.hardware
        }
    )


def on_hardware(board: Board, name: str) -> Board:
    """The board of the entries measured on ``name`` (a release build without any is left out); a name the board
    does not hold is a LeaderboardError listing the ones it does."""
    classes = hardware_classes(board)
    if name not in classes:
        shown = name if len(name) <= MAX_HARDWARE_NAME else name[:MAX_HARDWARE_NAME] + "..."
        raise UnknownHardware(
            f"hardware {shown!r}: no entry was measured on it; use one of: {', '.join(classes) or '(none)'}"
        )
    releases = []
    for release in board.releases:
        kept = tuple(e for e in release.entries if e.model_meta and e.model_meta.hardware == name)
        if kept:
            releases.append(replace(release, entries=kept))
    return Board(tuple(releases), board.rejected)


def hardware_links(classes: list[str], current: str | None) -> str:
    """The served page's hardware filter: a link per class (``?hardware=NAME``) and one to every entry, the
    current one marked; empty when no entry states its hardware."""
    if not classes:
        return ""

    def link(label: str, href: str, here: bool) -> str:
        return (
            f"<strong>{html_text(label)}</strong>"
            if here
            else f'<a href="{html_text(href)}">{html_text(label)}</a>'
        )

    links = [link("all", "?", current is None)]
    links += [link(c, f"?hardware={quote(c, safe='')}", c == current) for c in classes]
    return f'<p id="hardware">Measured on: {" · ".join(links)}. {html_text(COST_NOTE)}</p>'
