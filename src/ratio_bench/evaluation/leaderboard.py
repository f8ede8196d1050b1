"""The leaderboard's entries: result files loaded and checked, grouped by release build into a :class:`Board`.

Result files are untrusted (anyone can submit one), so loading never stops at a bad file: an unreadable,
non-UTF-8, invalid or wrongly shaped file becomes a :class:`Rejected` entry with its reason. Numbers from
different release builds are not comparable, so entries are grouped by the SHA-256 of the manifest they were
scored on (a :class:`ReleaseEntries`) and ranked only within one release and split (:mod:`.board_ranks`). An
entry read from a leaderboard results repository carries a ``provenance`` mark (``verified`` by a worker, or
``self-reported``) set by the loader, never by the file (the schema has no such field); the tables then show it
and the page filters on it. Rendering lives above: :mod:`.board_markdown`, :mod:`.board_html`,
:mod:`.board_plots`, :mod:`.board_terminal`.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from ratio_bench.core.errors import RatioError
from ratio_bench.core.snapshots import is_snapshot, parse_split
from ratio_bench.evaluation.results import MAIN_SCORE, SubmissionError, entry_label, validate_submission

MAX_FILE_BYTES = 1_000_000  # an entry is a few KB; a bigger file is not one
SHORT_SHA = 12
SPLIT_ORDER = ("test", "validation", "train", "silver")  # the schema's splits, headline split first
PROVENANCES = ("verified", "self-reported")


class LeaderboardError(RatioError):
    pass


@dataclass(frozen=True)
class Rejected:
    """A result file that is not on the board, and why (shown to the submitter)."""

    source: str
    reason: str


@dataclass(frozen=True)
class ReleaseEntries:
    """The entries scored on one release build (one manifest), best first within each split."""

    name: str
    version: str
    manifest_sha256: str
    entries: tuple[dict[str, Any], ...]
    superseded: tuple[tuple[str, str], ...] = ()  # (file, the newer file of the same model that replaced it)

    @property
    def title(self) -> str:
        return f"{self.name} {self.version} (manifest {self.manifest_sha256[:SHORT_SHA]})"


@dataclass(frozen=True)
class Board:
    releases: tuple[ReleaseEntries, ...]
    rejected: tuple[Rejected, ...]

    @property
    def summary(self) -> str:
        n, builds = sum(len(r.entries) for r in self.releases), len(self.releases)
        superseded = [f"{old} by {new}" for r in self.releases for old, new in r.superseded]
        return (
            f"{n} {'entry' if n == 1 else 'entries'} on {builds} release {'build' if builds == 1 else 'builds'}, "
            f"{len(self.rejected)} rejected"
            + (
                f", {len(superseded)} re-scored {'entry' if len(superseded) == 1 else 'entries'} superseded by the "
                f"newest of the same model ({'; '.join(superseded)})"
                if superseded
                else ""
            )
        )


def load_board(results: Path) -> Board:
    """Every ``*.json`` entry under ``results`` (a folder or one file; ``mteb/`` folders are MTEB's)."""
    if results.is_dir():
        paths = sorted(p for p in results.rglob("*.json") if "mteb" not in p.relative_to(results).parts[:-1])
        names = [p.relative_to(results).as_posix() for p in paths]
    elif results.is_file():
        paths, names = [results], [results.name]
    else:
        raise LeaderboardError(f"{results}: no such file or folder; give a folder of result JSON files")
    loaded, rejected = [], []
    for path, name in zip(paths, names, strict=True):
        try:
            entry = read_entry(path)
        except SubmissionError as e:
            rejected.append(Rejected(name, str(e)))
            continue
        # entries carry no clock time (same model, same bytes): a re-scored one is newer by its file's time
        modified = datetime.fromtimestamp(path.stat().st_mtime, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
        loaded.append((name, {"scored_at": modified, **entry}))
    releases, inconsistent = group_releases(loaded)
    return Board(releases, tuple(sorted(rejected + inconsistent, key=lambda r: r.source)))


def read_entry(path: Path) -> dict[str, Any]:
    """One result file, checked; any problem is a SubmissionError whose message is the reason."""
    if not path.is_file():
        raise SubmissionError("not a regular file")
    try:
        with path.open("rb") as fh:
            data = fh.read(MAX_FILE_BYTES + 1)
    except OSError as e:
        raise SubmissionError(f"cannot read the file: {e.strerror}") from e
    if len(data) > MAX_FILE_BYTES:
        raise SubmissionError(f"file is over the {MAX_FILE_BYTES:,}-byte limit for one entry")
    return parse_entry(data)


def parse_entry(data: bytes) -> dict[str, Any]:
    """A submitted entry from its bytes: UTF-8, strict JSON (no NaN or Infinity), the submission schema."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise SubmissionError(f"not UTF-8 text (byte 0x{e.object[e.start]:02x} at offset {e.start})") from e
    try:
        entry = json.loads(text, parse_constant=_reject_constant, parse_float=_finite_float)
    except json.JSONDecodeError as e:
        raise SubmissionError(f"not valid JSON: {e.msg} at line {e.lineno} column {e.colno}") from e
    except RecursionError as e:
        raise SubmissionError("not a leaderboard entry: JSON nested too deeply") from e
    except ValueError as e:  # from the hooks below, or an integer too long to convert
        raise SubmissionError(f"not valid JSON: {e}") from e
    validate_submission(entry)
    return entry


def _reject_constant(name: str) -> float:
    raise ValueError(f"{name} is not a number in JSON")


def _finite_float(text: str) -> float:
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise ValueError(f"{text[:20]} overflows a double")
    return value


def group_releases(
    loaded: list[tuple[str, dict[str, Any]]],
) -> tuple[tuple[ReleaseEntries, ...], list[Rejected]]:
    """Entries grouped by manifest hash, best first within each split.

    The hash covers the manifest's name and version, so an entry that shares a hash with others but names a
    different release was edited by hand. Anyone can submit a file, so such an entry rejects itself only: the
    release a hash belongs to is the one most of its entries name (on a tie, the one the first file in path
    order names), and only the entries that name another are rejected.
    """
    by_sha: dict[str, list[tuple[str, dict[str, Any]]]] = {}
    for source, entry in loaded:
        by_sha.setdefault(entry["dataset"]["manifest_sha256"], []).append((source, entry))
    releases, rejected = [], []
    for sha, group in by_sha.items():
        claim = _authoritative_release(group)
        kept = [(source, e) for source, e in group if _release_of(e) == claim]
        rejected += [
            Rejected(
                source,
                f"dataset names {' '.join(_release_of(e))}, but manifest_sha256 {sha[:SHORT_SHA]}... is "
                f"{' '.join(claim)} (named by {len(kept)} other {'entry' if len(kept) == 1 else 'entries'})",
            )
            for source, e in group
            if _release_of(e) != claim
        ]
        kept, superseded = _newest_only(kept)
        entries = sorted(
            kept,
            key=lambda item: (
                split_key(item[1]["split"]),
                -len(item[1]["results"]),  # a specialist scored on one relation never outranks a full entry
                -mean_score(item[1]),
                item[0],
            ),
        )
        releases.append(ReleaseEntries(*claim, sha, tuple(e for _, e in entries), superseded))
    releases.sort(key=lambda r: (r.name, r.version, r.manifest_sha256))
    return tuple(_carry_forward(releases)), rejected


def _hashes(release: ReleaseEntries) -> dict[str, str]:
    """The split hashes most of a build's entries record (entries are untrusted: one cannot speak for the build)."""
    votes = Counter(
        json.dumps(e["dataset"]["split_hashes"], sort_keys=True)
        for e in release.entries
        if isinstance(e["dataset"].get("split_hashes"), dict)
    )
    return json.loads(votes.most_common(1)[0][0]) if votes else {}


def _carry_forward(releases: list[ReleaseEntries]) -> list[ReleaseEntries]:
    """An entry of a build is also shown in every later build of the same release (one with more splits, as an
    append makes) where its own split is unchanged (same ``split_sha256``): an append does not throw earlier
    snapshot scores away. A build's split hashes are what most of its entries record, so one forged entry cannot
    redirect the copies. The copy is marked ``scored_on`` its version, and skipped
    where the later build already has an entry of that model on that split (never counted twice)."""
    hashes = {r.manifest_sha256: _hashes(r) for r in releases}
    out = []
    for later in releases:
        have = hashes[later.manifest_sha256]
        carried = []
        for earlier in releases:
            had = hashes[earlier.manifest_sha256]
            if earlier.name != later.name or len(had) >= len(have):
                continue
            present = {(model_key(e), e["split"]) for e in (*later.entries, *carried)}
            carried += [
                e | {"scored_on": earlier.version}
                for e in earlier.entries
                if e["dataset"].get("split_sha256") == have.get(e["split"])
                and (model_key(e), e["split"]) not in present
            ]
        entries = sorted(
            (*later.entries, *carried),
            key=lambda e: (split_key(e["split"]), -len(e["results"]), -mean_score(e), e["model"]),
        )
        out.append(replace(later, entries=tuple(entries)) if carried else later)
    return out


def split_key(split: str) -> tuple[int, str]:
    """Table order of splits: the whole test split, then its dated snapshots in time order, then the others."""
    period = parse_split(split)
    if period is not None:
        return 1, period.start.isoformat()
    position = SPLIT_ORDER.index(split)
    return (position + 1 if position else 0), ""


def has_snapshots(board: Board) -> bool:
    return any(is_snapshot(e["split"]) for r in board.releases for e in r.entries)


def _newest_only(
    group: list[tuple[str, dict[str, Any]]],
) -> tuple[list[tuple[str, dict[str, Any]]], tuple[tuple[str, str], ...]]:
    """One entry per model (weights fingerprint), split and relations scored: the newest (``scored_at``: for a
    local file its modification time, see :func:`load_board`; then the name), so scoring a model again replaces its row instead of adding a second one with another rank.
    Entries without a fingerprint (BM25, older files) cannot be told to be the same model and all stay. A
    results repository's provenance is part of the key: a self-reported copy never replaces a verified entry."""
    newest: dict[tuple[str, str, tuple[str, ...], str], tuple[str, dict[str, Any]]] = {}
    kept, superseded = [], []
    for source, entry in sorted(group, key=lambda item: (item[1].get("scored_at", ""), item[0])):
        fp = entry.get("model_fingerprint")
        if fp is None:
            kept.append((source, entry))
            continue
        key = (
            fp,
            entry["split"],
            tuple(sorted(entry["results"])),
            entry.get("provenance", {}).get("status", ""),
        )
        if key in newest:
            superseded.append((newest[key][0], source))
        newest[key] = (source, entry)
    return kept + list(newest.values()), tuple(sorted(superseded))


def _authoritative_release(group: list[tuple[str, dict[str, Any]]]) -> tuple[str, str]:
    """The (name, version) most entries of one manifest hash name; a tie goes to the first file's."""
    counts = Counter(_release_of(e) for _, e in group)
    first: dict[tuple[str, str], str] = {}
    for source, e in sorted(group, key=lambda item: item[0]):
        first.setdefault(_release_of(e), source)
    return min(counts, key=lambda claim: (-counts[claim], first[claim]))


def _release_of(entry: dict[str, Any]) -> tuple[str, str]:
    return entry["dataset"]["name"], entry["dataset"]["version"]


def model_key(entry: dict[str, Any]) -> tuple[str, str, str]:
    """What the board tells apart as one model across splits: its weights' fingerprint, its row name (model and
    setup, the relation it was tuned for) and the provenance of its entries."""
    return (
        entry.get("model_fingerprint", ""),
        entry_label(entry),
        entry.get("provenance", {}).get("status", ""),
    )


def mean_score(entry: dict[str, Any]) -> float:
    """The ranking key: MRR@10 averaged over the relations the entry was scored on."""
    return sum(m[MAIN_SCORE] for m in entry["results"].values()) / len(entry["results"])


def has_provenance(board: Board) -> bool:
    return any("provenance" in e for r in board.releases for e in r.entries)
