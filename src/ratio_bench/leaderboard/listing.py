"""``ratio leaderboard workers add|remove|list``: the maintainers' edits of ``trusted_workers.json``.

The results repository's main holds the one listing every verification reads (:mod:`.board`'s root of trust).
Each edit is one commit on main by the maintainer's own Hub account (``added_by`` is that account, from
``whoami``, never typed), made only on top of the head it read (``parent_commit``), so two maintainers never
overwrite each other; the file's history on main is the record of who listed or revoked which key when
(:func:`history`). A key is listed once and a name names one key: a second listing of either is refused, as is
a listing past :data:`~.provenance.MAX_TRUSTED`. Removing a key revokes it at every revision, old ones included.
"""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass
from datetime import datetime

from ratio_bench.leaderboard import hub, ledger
from ratio_bench.leaderboard.hub import LeaderboardError
from ratio_bench.leaderboard.provenance import (
    MAX_TRUSTED,
    TRUSTED_SCHEMA,
    TRUSTED_WORKERS,
    Listing,
    TrustedWorker,
    key_id,
    read_listing,
)

HISTORY_STEPS = 50  # how many changes of the listing ``workers list`` shows, newest first


@dataclass(frozen=True)
class ListingAt:
    """The listing on main at commit ``sha`` (None listing bytes: no file yet)."""

    sha: str
    listing: Listing
    exists: bool


def read_main(results: str) -> ListingAt:
    """The results repository's listing at main's head; a repository that holds a queue's policy is refused."""
    sha = hub.head(results, "dataset")
    listed = hub.tree(results, "dataset", sha)
    if ledger.POLICY in listed:
        raise LeaderboardError(
            f"--results {results}: it holds {ledger.POLICY}, so it is a queue, not a results repository"
        )
    if TRUSTED_WORKERS not in listed:
        return ListingAt(sha, read_listing(None), False)
    if listed[TRUSTED_WORKERS] > hub.MAX_SMALL_FILE:
        raise LeaderboardError(f"--results {results}: {TRUSTED_WORKERS} is over {hub.MAX_SMALL_FILE:,} bytes")
    return ListingAt(sha, read_listing(hub.read_small(results, "dataset", sha, TRUSTED_WORKERS)), True)


def parse_new(text: str, name: str | None) -> tuple[str, str | None]:
    """(public key, name) from ``--listing``: the JSON line ``keygen`` prints, or a bare base64 public key."""
    text = text.strip()
    if text.startswith("{"):
        try:
            doc = hub.strict_json(text.encode())
        except ValueError as e:
            raise LeaderboardError(
                f"--listing: {e}; give the line `ratio leaderboard keygen` printed"
            ) from None
        if not isinstance(doc, dict) or not isinstance(doc.get("public_key"), str):
            raise LeaderboardError("--listing: expected the JSON line `ratio leaderboard keygen` printed")
        stated = doc.get("name") if isinstance(doc.get("name"), str) else None
        return doc["public_key"], name or stated
    return text, name


def _checked(public_key: str, name: str, added_by: str) -> TrustedWorker:
    try:
        raw = base64.b64decode(public_key, validate=True)
    except ValueError:
        raw = b""
    if len(raw) != 32:
        raise LeaderboardError("--listing: not an Ed25519 public key (base64 of 32 bytes)")
    if not name or len(name) > 100 or not name.isprintable():
        raise LeaderboardError("--name: give the worker's public name (printable, at most 100 characters)")
    return TrustedWorker(key_id(raw), public_key, name, added_by)


def _document(workers: list[TrustedWorker]) -> bytes:
    items = [
        {"key_id": w.key_id, "public_key": w.public_key, "name": w.name, "added_by": w.added_by}
        for w in workers
    ]
    return (json.dumps({"schema": TRUSTED_SCHEMA, "workers": items}, indent=2) + "\n").encode()


def _refuse_unusable(results: str, at: ListingAt) -> None:
    if at.exists and at.listing.problem:
        raise LeaderboardError(
            f"--results {results}: {at.listing.problem}; fix the file by hand (nothing is overwritten)"
        )


def add(results: str, public_key: str, name: str) -> TrustedWorker:
    """List a key on main, as the signed-in maintainer; refused when the key or the name is listed already."""
    me = _me()
    at = read_main(results)
    _refuse_unusable(results, at)
    new = _checked(public_key, name, me)
    listed = list(at.listing.trusted.values())
    if new.key_id in at.listing.trusted:
        old = at.listing.trusted[new.key_id]
        raise LeaderboardError(
            f"key {new.key_id} is listed already as {old.name!r} (added by {old.added_by})"
        )
    if any(w.name == new.name for w in listed):
        raise LeaderboardError(f"--name {new.name!r}: another key is listed under that name; choose another")
    if len(listed) >= MAX_TRUSTED:
        raise LeaderboardError(f"{TRUSTED_WORKERS} lists {MAX_TRUSTED:,} keys, its cap; remove one first")
    message = f"List worker key {new.key_id} ({new.name}) by {me}"
    hub.commit(results, "dataset", {TRUSTED_WORKERS: _document([*listed, new])}, message, parent=at.sha)
    return new


def remove(results: str, kid: str) -> TrustedWorker:
    """Revoke a listed key on main (every row it signed, at every revision, turns self-reported)."""
    me = _me()
    at = read_main(results)
    _refuse_unusable(results, at)
    gone = at.listing.trusted.get(kid)
    if gone is None:
        raise LeaderboardError(f"key {kid[:40]}: not listed in {results}'s {TRUSTED_WORKERS}")
    kept = [w for w in at.listing.trusted.values() if w.key_id != kid]
    message = f"Revoke worker key {kid} ({gone.name}) by {me}"
    hub.commit(results, "dataset", {TRUSTED_WORKERS: _document(kept)}, message, parent=at.sha)
    return gone


@dataclass(frozen=True)
class Edit:
    """One change of the listing on main: the commit, who made it (the Hub's record), when, and its title."""

    commit: str
    authors: tuple[str, ...]
    date: datetime
    title: str


def history(results: str, steps: int = HISTORY_STEPS) -> list[Edit]:
    """The commits of main that changed ``trusted_workers.json``, newest first (the Hub's own authors and dates)."""
    chain = ledger.history(results)
    titles = _titles(results)
    index = {sha: i for i, (sha, _) in enumerate(chain)}
    out, at = [], chain[0][0] if chain else None
    while at is not None and len(out) < steps:
        change = ledger.last_changes(results, at, [TRUSTED_WORKERS], dict(chain)).get(TRUSTED_WORKERS)
        if change is None:
            break
        out.append(Edit(change.commit, change.authors, change.date, titles.get(change.commit, "")))
        i = index.get(change.commit)
        at = chain[i + 1][0] if i is not None and i + 1 < len(chain) else None
    return out


def _titles(results: str) -> dict[str, str]:
    with hub.hub_errors(f"--results {results}"):
        return {c.commit_id: c.title for c in hub.api().list_repo_commits(results, repo_type="dataset")}


def _me() -> str:
    """The signed-in Hub account (the maintainer whose name goes in ``added_by``)."""
    with hub.hub_errors("whoami"):
        me = hub.api().whoami()
    name = me.get("name") if isinstance(me, dict) else None
    if not isinstance(name, str):
        raise LeaderboardError("HF_TOKEN: the Hub names no user for it; sign in as a maintainer")
    return name
