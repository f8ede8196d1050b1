"""Ranks within a release build's split, and ties: adjacent ranks that a paired test cannot tell apart are
shown tied (``=3``), from the entries' per-query gold ranks (:mod:`ratio_bench.evaluation.scoring.uncertainty`); an
entry without them is never tied. Besides the main ranking, each relation has its own, where a specialist
scored on one relation competes.
"""

from __future__ import annotations

from dataclasses import dataclass

from ratio_bench.evaluation.board.leaderboard import ReleaseEntries, split_key
from ratio_bench.evaluation.entry.record import Entry
from ratio_bench.evaluation.scoring import uncertainty


@dataclass(frozen=True)
class Rank:
    """A row's place within its split; ``tied``: a paired test cannot tell it from a neighbour, and a tied
    group shares its first row's place (``=3``, ``=3``, then ``5``)."""

    position: int
    tied: bool = False

    def __str__(self) -> str:
        return f"={self.position}" if self.tied else str(self.position)


TIE_NOTE = (
    f"=k: a tie, the row cannot be told from its neighbour: a paired bootstrap of per-query MRR@10 on the same "
    f"queries (the main table: its mean over the relations) finds no difference (p >= {uncertainty.ALPHA}); "
    "rows without per-query data are never tied."
)


def ranked(release: ReleaseEntries, relation: str | None = None) -> list[tuple[Rank, Entry]]:
    """(rank within its split, entry) for every entry of a release, in table order. Neighbours whose ranking
    figure (``relation``'s MRR@10, or the mean over an entry's relations) differs inside the noise are tied
    (:func:`uncertainty.compare`); neighbours scored on different relations never are."""
    out: list[tuple[Rank, Entry]] = []
    for entry in release.entries:
        if not out or out[-1][1].split != entry.split:
            out.append((Rank(1), entry))
            continue
        above_rank, above = out[-1]
        if _tied(above, entry, relation):
            out[-1] = (Rank(above_rank.position, True), above)
            out.append((Rank(above_rank.position, True), entry))
        else:
            out.append((Rank(sum(e.split == entry.split for _, e in out) + 1), entry))
    return out


def _tied(a: Entry, b: Entry, relation: str | None) -> bool:
    if relation is None and set(a.results) != set(b.results):
        return False
    return uncertainty.compare(a, b, relation or sorted(a.results)).tied


def relation_ranked(release: ReleaseEntries, relation: str) -> list[tuple[Rank, Entry]]:
    """(rank, entry) of every entry scored on ``relation``, by that relation's MRR@10 within each split: the
    board where a specialist scored on one relation competes (the main ranking puts full entries first)."""
    entries = sorted(
        (e for e in release.entries if relation in e.results),
        key=lambda e: (split_key(e.split), -(e.score(relation) or 0.0)),
    )
    return ranked(
        ReleaseEntries(release.name, release.version, release.manifest_sha256, tuple(entries)), relation
    )


RELATION_NOTE = "ranked by that relation's MRR@10, every entry scored on it (specialists included)"
