"""The leaderboard's entries: result files loaded and checked, grouped by release build into a :class:`Board`.

Result files are untrusted (anyone can submit one), so loading never stops at a bad file: an unreadable,
non-UTF-8, invalid or wrongly shaped file becomes a :class:`Rejected` entry with its reason. Numbers from
different release builds are not comparable, so entries are grouped by the SHA-256 of the manifest they were
scored on (a :class:`ReleaseEntries`) and ranked only within one release and split (:mod:`.board_ranks`). An
entry read from a leaderboard results repository carries a ``provenance`` mark (``verified``: signed by a
trusted worker for a FINISHED request, or ``self-reported``) set by the loader, never by the file (the schema has
no such field). Verified and self-reported entries are ranked apart (:func:`apart`: one table each, ranks counted
within each), so a self-reported row is never tied with a verified one. A row is a (repository, commit, setup):
the same weights under another name are another row, marked ``same weights as`` the earliest
(:func:`_same_weights`). Figures are checked against the release before ranking (:func:`_against_release`): an
entry whose query counts or query ids are not the build's rejects itself only. Rendering lives above: :mod:`.board_markdown`, :mod:`.board_html`,
:mod:`.board_plots`, :mod:`.board_terminal`.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from pathlib import Path

from ratio_bench.core.errors import RatioError
from ratio_bench.core.io import no_duplicate_keys
from ratio_bench.core.snapshots import is_snapshot, parse_split
from ratio_bench.dataset.release import Release
from ratio_bench.evaluation.entry.record import Entry, SubmissionError
from ratio_bench.evaluation.scoring.results import query_ids_sha256, validate_submission

MAX_FILE_BYTES = 1_000_000  # an entry is a few KB; a bigger file is not one
SHORT_SHA = 12
SPLIT_ORDER = ("test", "mini", "validation", "train", "silver")  # the schema's splits, headline split first
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
    entries: tuple[Entry, ...]
    superseded: tuple[tuple[str, str], ...] = ()  # (file, the newer file of the same model that replaced it)
    provenance: str = ""  # "verified" or "self-reported" when a results repository's build is shown apart

    @property
    def title(self) -> str:
        apart = {"verified": " · verified", "self-reported": " · self-reported (not verified, ranked apart)"}
        return f"{self.name} {self.version} (manifest {self.manifest_sha256[:SHORT_SHA]})" + apart.get(
            self.provenance, ""
        )


@dataclass(frozen=True)
class Board:
    releases: tuple[ReleaseEntries, ...]
    rejected: tuple[Rejected, ...]

    @property
    def summary(self) -> str:
        n, builds = (
            sum(len(r.entries) for r in self.releases),
            len({r.manifest_sha256 for r in self.releases}),
        )
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
        loaded.append((name, entry.marked(scored_at=entry.scored_at or modified)))
    releases, inconsistent = group_releases(loaded)
    return Board(releases, tuple(sorted(rejected + inconsistent, key=lambda r: r.source)))


def read_entry(path: Path) -> Entry:
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


def parse_entry(data: bytes) -> Entry:
    """A submitted entry from its bytes: UTF-8, strict JSON (no NaN or Infinity, no key named twice), the
    submission schema."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise SubmissionError(f"not UTF-8 text (byte 0x{e.object[e.start]:02x} at offset {e.start})") from e
    try:
        entry = json.loads(
            text,
            parse_constant=_reject_constant,
            parse_float=_finite_float,
            object_pairs_hook=no_duplicate_keys,
        )
    except json.JSONDecodeError as e:
        raise SubmissionError(f"not valid JSON: {e.msg} at line {e.lineno} column {e.colno}") from e
    except RecursionError as e:
        raise SubmissionError("not a leaderboard entry: JSON nested too deeply") from e
    except ValueError as e:  # from the hooks below, or an integer too long to convert
        raise SubmissionError(f"not valid JSON: {e}") from e
    return validate_submission(entry)


def _reject_constant(name: str) -> float:
    raise ValueError(f"{name} is not a number in JSON")


def _finite_float(text: str) -> float:
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise ValueError(f"{text[:20]} overflows a double")
    return value


def group_releases(
    loaded: list[tuple[str, Entry]],
) -> tuple[tuple[ReleaseEntries, ...], list[Rejected]]:
    """Entries grouped by manifest hash, best first within each split.

    The hash covers the manifest's name and version, so an entry that shares a hash with others but names a
    different release was edited by hand. Anyone can submit a file, so such an entry rejects itself only: the
    release a hash belongs to is the one most of its entries name (on a tie, the one the first file in path
    order names), and only the entries that name another are rejected.
    """
    by_sha: dict[str, list[tuple[str, Entry]]] = {}
    for source, entry in loaded:
        by_sha.setdefault(entry.dataset.manifest_sha256, []).append((source, entry))
    releases, rejected = [], []
    for sha, group in by_sha.items():
        claim = _authoritative_release(group)
        kept = [(source, e) for source, e in group if e.release == claim]
        rejected += [
            Rejected(
                source,
                f"dataset names {' '.join(e.release)}, but manifest_sha256 {sha[:SHORT_SHA]}... is "
                f"{' '.join(claim)} (named by {len(kept)} other {'entry' if len(kept) == 1 else 'entries'})",
            )
            for source, e in group
            if e.release != claim
        ]
        kept, wrong = _against_release(kept)
        rejected += wrong
        kept, superseded = _newest_only(kept)
        kept = _same_weights(kept)
        entries = sorted(
            kept,
            key=lambda item: (
                split_key(item[1].split),
                -len(item[1].results),  # a specialist scored on one relation never outranks a full entry
                -item[1].mean_score,
                item[0],
            ),
        )
        releases.append(ReleaseEntries(*claim, sha, tuple(e for _, e in entries), superseded))
    releases.sort(key=lambda r: (r.name, r.version, r.manifest_sha256))
    return tuple(apart(_carry_forward(releases))), rejected


def apart(releases: list[ReleaseEntries]) -> list[ReleaseEntries]:
    """Each build whose entries carry a provenance mark as two tables, verified then self-reported, each ranked
    on its own: a self-reported figure, however equal, is never ranked (or tied) beside a verified one."""
    out = []
    for release in releases:
        if not any(e.provenance is not None for e in release.entries):
            out.append(release)
            continue
        superseded = release.superseded
        for status in PROVENANCES:
            part = tuple(e for e in release.entries if e.status == status)
            if part:
                out.append(replace(release, entries=part, superseded=superseded, provenance=status))
                superseded = ()  # listed once
    return out


ReleaseQueries = dict[tuple[str, str], tuple[int, str | None]]  # (split, relation) -> (queries, ids' SHA-256)


def release_queries(dataset: Path, split: str) -> dict[str, tuple[int, str]]:
    """Per relation with queries in ``split`` of the release folder ``dataset``: (query count, SHA-256 of the
    sorted query ids), what an entry of that split must record."""

    release = Release.open(dataset)
    out = {}
    for rel in release.relations:
        ids = release.queries(rel, split, ["query_id"]).column("query_id").to_pylist()
        if ids:
            out[rel] = (len(ids), query_ids_sha256(ids))
    return out


def check_against_release(data: bytes, queries: dict[str, tuple[int, str]]) -> Entry:
    """An entry's bytes checked as the board checks them (strict JSON, schema, bounds, its own per-query data)
    and against its release split's ``queries`` (:func:`release_queries`); SubmissionError with the reason. A
    relation the split has no queries of cannot have been scored."""
    entry = parse_entry(data)
    unknown = sorted(set(entry.results) - set(queries))
    if unknown:
        raise SubmissionError(f"scores {unknown[0]}, which has no queries in split {entry.split}")
    wrong = _query_mismatch(entry, {(entry.split, r): q for r, q in queries.items()}, "the release")
    if wrong:
        raise SubmissionError(wrong)
    return entry


def _query_mismatch(entry: Entry, truth: ReleaseQueries, whose: str) -> str | None:
    """Why ``entry``'s counts or query ids are not ``truth``'s (None when they are, or truth knows nothing)."""
    split = entry.split
    for rel in sorted(entry.results):
        if (split, rel) not in truth:
            continue
        count, ids = truth[split, rel]
        n = entry.queries(rel)
        if n != count:
            shown = "missing" if n is None else n
            return f"n_queries/{rel} is {shown}, but split {split} has {count} {rel} queries ({whose})"
        block = entry.per_query.get(rel)
        if block is not None and ids is not None and block.query_ids_sha256 != ids:
            return f"per_query/{rel}: its query ids are not the {rel} queries of split {split} ({whose})"
    return None


def _build_queries(group: list[tuple[str, Entry]], verified: bool) -> ReleaseQueries:
    """Per (split, relation), the query count and ids most of ``group``'s entries (only the verified ones, with
    ``verified``) record."""
    voters = [e for _, e in group if not verified or e.status == "verified"]
    counts: dict[tuple[str, str], Counter] = {}
    ids: dict[tuple[str, str], Counter] = {}
    for e in voters:
        for rel in e.results:
            key = (e.split, rel)
            counts.setdefault(key, Counter())[e.queries(rel)] += 1
            if rel in e.per_query:
                ids.setdefault(key, Counter())[e.per_query[rel].query_ids_sha256] += 1
    out: ReleaseQueries = {}
    for key, votes in counts.items():
        count = votes.most_common(1)[0][0]
        if count is not None:
            out[key] = (count, ids[key].most_common(1)[0][0] if key in ids else None)
    return out


def _against_release(
    group: list[tuple[str, Entry]],
) -> tuple[list[tuple[str, Entry]], list[Rejected]]:
    """Entries of one build whose query counts and ids are the build's; the others rejected. The board has no
    release, so the build's counts are what its verified entries record (their worker checked them against the
    release before signing), or, where none is verified, what most of its entries record (so one entry alone
    cannot be checked, and a self-reported majority decides only among self-reported entries)."""
    signed = _build_queries([item for item in group if item[1].provenance is not None], verified=True)
    voted = _build_queries(group, verified=False)
    kept, rejected = [], []
    for source, entry in group:
        wrong = _query_mismatch(entry, signed, "by its verified entries") or _query_mismatch(
            entry, {k: v for k, v in voted.items() if k not in signed}, "by most entries of this build"
        )
        if wrong:
            rejected.append(Rejected(source, f"not this release build's queries: {wrong}"))
        else:
            kept.append((source, entry))
    return kept, rejected


def _hashes(release: ReleaseEntries) -> dict[str, str]:
    """The split hashes most of a build's entries record (entries are untrusted: one cannot speak for the build)."""
    votes = Counter(
        json.dumps(dict(e.dataset.split_hashes), sort_keys=True)
        for e in release.entries
        if e.dataset.split_hashes is not None
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
            present = {(model_key(e), e.split) for e in (*later.entries, *carried)}
            carried += [
                e.marked(scored_on=earlier.version)
                for e in earlier.entries
                if e.dataset.split_sha256 == have.get(e.split) and (model_key(e), e.split) not in present
            ]
        entries = sorted(
            (*later.entries, *carried),
            key=lambda e: (split_key(e.split), -len(e.results), -e.mean_score, e.model),
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
    return any(is_snapshot(e.split) for r in board.releases for e in r.entries)


def _newest_only(
    group: list[tuple[str, Entry]],
) -> tuple[list[tuple[str, Entry]], tuple[tuple[str, str], ...]]:
    """One entry per row (its name, i.e. repository and setup, and its commit or, for a local file, its weights
    fingerprint), split, relations scored and provenance: the newest (``scored_at``: for a local file its
    modification time, see :func:`load_board`; then the name), so scoring a model again replaces its row instead
    of adding a second one with another rank. The row's name is part of the key: the same weights under another
    repository, or scored with another setup, are another row and replace nothing. Entries with neither a commit
    nor a fingerprint (BM25, older files) cannot be told to be the same and all stay."""
    newest: dict[tuple[str, str, str, tuple[str, ...], str], tuple[str, Entry]] = {}
    kept, superseded = [], []
    for source, entry in sorted(group, key=lambda item: (item[1].scored_at or "", item[0])):
        version = entry.commit or entry.model_fingerprint
        if version is None:
            kept.append((source, entry))
            continue
        key = (entry.label, version, entry.split, tuple(sorted(entry.results)), _mark_status(entry))
        if key in newest:
            superseded.append((newest[key][0], source))
        newest[key] = (source, entry)
    return kept + list(newest.values()), tuple(sorted(superseded))


def _mark_status(entry: Entry) -> str:
    """The loader's status, "" for an entry read without one (a local file)."""
    return entry.provenance.status if entry.provenance else ""


def _same_weights(group: list[tuple[str, Entry]]) -> list[tuple[str, Entry]]:
    """Entries whose weights (fingerprint) an earlier row of another repository already has, marked
    ``same_weights_as`` that repository. Earliest: verified rows first, by their signing time (a signature fixes
    it), then the others by their time and file name; a later copy never removes or relabels the original."""

    def order(item: tuple[str, Entry]) -> tuple[bool, str, str]:
        source, entry = item
        signed = entry.provenance.signed_at if entry.provenance else None
        return entry.status != "verified", signed or entry.scored_at or "", source

    first: dict[str, str] = {}
    for _, entry in sorted(group, key=order):
        if entry.model_fingerprint:
            first.setdefault(entry.model_fingerprint, entry.repository)
    return [
        (source, entry.marked(same_weights_as=first[fp]))
        if (fp := entry.model_fingerprint) and first[fp] != entry.repository
        else (source, entry)
        for source, entry in group
    ]


def _authoritative_release(group: list[tuple[str, Entry]]) -> tuple[str, str]:
    """The (name, version) most entries of one manifest hash name; a tie goes to the first file's."""
    counts = Counter(e.release for _, e in group)
    first: dict[tuple[str, str], str] = {}
    for source, e in sorted(group, key=lambda item: item[0]):
        first.setdefault(e.release, source)
    return min(counts, key=lambda claim: (-counts[claim], first[claim]))


def model_key(entry: Entry) -> tuple[str, str, str, str]:
    """What the board tells apart as one model across splits: its weights' fingerprint, its row name (model and
    setup, the relation it was tuned for), its commit and the provenance of its entries."""
    return entry.model_fingerprint or "", entry.label, entry.commit or "", _mark_status(entry)


def mean_score(entry: Entry) -> float:
    """The ranking key: MRR@10 averaged over the relations the entry was scored on."""
    return entry.mean_score


def has_provenance(board: Board) -> bool:
    return any(e.provenance is not None for r in board.releases for e in r.entries)
