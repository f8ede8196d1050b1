"""The leaderboard: result files loaded and checked, grouped by release build, rendered as Markdown, HTML, PNG.

Result files are untrusted (anyone can submit one), so loading never stops at a bad file: an unreadable,
non-UTF-8, invalid or wrongly shaped file becomes a :class:`Rejected` entry with its reason. Numbers from
different release builds are not comparable, so entries are grouped by the SHA-256 of the manifest they were
scored on (a :class:`ReleaseEntries`) and ranked only within one release and split. Every text that comes from a
submission (model, dataset name and version, file names, rejection reasons) is escaped for the output it lands
in. :func:`leaderboard_html` returns the whole page as one string, so ``ratio leaderboard --html`` and a web
server's ``/leaderboard`` can serve the same bytes. An entry read from a leaderboard results repository carries a
``provenance`` mark (``verified`` by a worker, or ``self-reported``) set by the loader, never by the file (the
schema has no such field); the tables then show it and the page filters on it.

Every figure is shown with its bootstrap interval and adjacent ranks that a paired test cannot tell apart are
shown tied (``=3``), both from the entry's per-query gold ranks (:mod:`ratio_bench.evaluation.uncertainty`); an
entry without them shows bare figures and is never tied. The trend (:func:`trend_png`) follows MRR@10 over the
release's test snapshots (splits named by period, :mod:`ratio_bench.core.snapshots`).
"""

from __future__ import annotations

import base64
import hashlib
import html
import io
import json
import string
import unicodedata
import warnings
from collections import Counter
from dataclasses import dataclass, replace
from datetime import date, datetime, timezone
from pathlib import Path
from typing import Any

from ratio_bench import __version__
from ratio_bench.core.cutoffs import LEGEND, MARKS, entry_clean
from ratio_bench.core.errors import RatioError
from ratio_bench.core.relations import RELATIONS
from ratio_bench.core.snapshots import Period, is_snapshot, parse_split
from ratio_bench.evaluation import uncertainty
from ratio_bench.evaluation.metrics import AGREEMENTS
from ratio_bench.evaluation.results import (
    MAIN_SCORE,
    TABLE_METRICS,
    SubmissionError,
    entry_label,
    validate_submission,
)

MAX_FILE_BYTES = 1_000_000  # an entry is a few KB; a bigger file is not one
SHORT_SHA = 12
SPLIT_ORDER = ("test", "validation", "train", "silver")  # the schema's splits, headline split first
PROVENANCES = ("verified", "self-reported")
# Markdown: ASCII punctuation that is inert in inline text (tables and headings hold no block structure);
# every other punctuation mark is backslash-escaped, and <, > and & become entities.
_MD_INERT = set(".,-/'\"?;%@")
_MD_ENTITIES = {"<": "&lt;", ">": "&gt;", "&": "&amp;"}


class LeaderboardError(RatioError):
    pass


class PlottingUnavailable(LeaderboardError):
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
    hashes = next(
        (e["dataset"].get("split_hashes") for e in release.entries if "split_hashes" in e["dataset"]), None
    )
    return hashes if isinstance(hashes, dict) else {}


def _carry_forward(releases: list[ReleaseEntries]) -> list[ReleaseEntries]:
    """An entry of an older version of a release whose scored split is unchanged in the newest version (same
    ``split_sha256``, as a snapshot keeps across appends) is also shown in the newest version's group, marked
    ``scored_on`` its version, so an append does not throw earlier snapshot scores away. The newest version is
    the one with the most splits (an append only adds), then the highest version string."""
    out = list(releases)
    for name in sorted({r.name for r in releases}):
        group = [r for r in releases if r.name == name]
        newest = max(group, key=lambda r: (len(_hashes(r)), r.version, r.manifest_sha256))
        hashes = _hashes(newest)
        carried = [
            e | {"scored_on": r.version}
            for r in group
            if r is not newest and r.version != newest.version
            for e in r.entries
            if e["dataset"].get("split_sha256") and hashes.get(e["split"]) == e["dataset"]["split_sha256"]
        ]
        if carried:
            entries = sorted(
                (*newest.entries, *carried),
                key=lambda e: (split_key(e["split"]), -len(e["results"]), -mean_score(e), e["model"]),
            )
            out[out.index(newest)] = replace(newest, entries=tuple(entries))
    return out


def split_key(split: str) -> tuple[int, str]:
    """Table order of splits: the whole test split, then its dated snapshots in time order, then the others."""
    period = parse_split(split)
    if period is not None:
        return 1, period.start.isoformat()
    position = SPLIT_ORDER.index(split)
    return (position + 1 if position else 0), ""


def clean_mark(entry: dict[str, Any]) -> str | None:
    """``clean``, ``contaminated`` or ``unknown`` for a score on a dated snapshot (None for any other split):
    decided here from the entry's cut-off and the snapshot's dates (:mod:`ratio_bench.core.cutoffs`)."""
    return MARKS[entry_clean(entry)] if is_snapshot(entry["split"]) else None


def split_text(entry: dict[str, Any]) -> str:
    """The split as a row shows it: a snapshot with its mark, ``test_2025_03 (contaminated)``; a contaminated
    score is marked, never hidden."""
    mark = clean_mark(entry)
    return entry["split"] + (f" ({mark})" if mark else "")


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


def mean_score(entry: dict[str, Any]) -> float:
    """The ranking key: MRR@10 averaged over the relations the entry was scored on."""
    return sum(m[MAIN_SCORE] for m in entry["results"].values()) / len(entry["results"])


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


def interval_note(settings: uncertainty.Bootstrap = uncertainty.DEFAULT) -> str:
    return f"Figures: value [low-high], the {settings.note}."


def ranked(release: ReleaseEntries, relation: str | None = None) -> list[tuple[Rank, dict[str, Any]]]:
    """(rank within its split, entry) for every entry of a release, in table order. Neighbours whose ranking
    figure (``relation``'s MRR@10, or the mean over an entry's relations) differs inside the noise are tied
    (:func:`uncertainty.compare`); neighbours scored on different relations never are."""
    out: list[tuple[Rank, dict[str, Any]]] = []
    for entry in release.entries:
        if not out or out[-1][1]["split"] != entry["split"]:
            out.append((Rank(1), entry))
            continue
        above_rank, above = out[-1]
        if _tied(above, entry, relation):
            out[-1] = (Rank(above_rank.position, True), above)
            out.append((Rank(above_rank.position, True), entry))
        else:
            out.append((Rank(sum(e["split"] == entry["split"] for _, e in out) + 1), entry))
    return out


def _tied(a: dict[str, Any], b: dict[str, Any], relation: str | None) -> bool:
    if relation is None and set(a["results"]) != set(b["results"]):
        return False
    return uncertainty.compare(a, b, relation or sorted(a["results"])).tied


def entry_detail(entry: dict[str, Any]) -> str:
    """What tells two rows of one name apart: the weights' short fingerprint, the training config, the
    submitter ("" when the entry records none of them)."""
    parts = [f"scored on {entry['scored_on']}"] if entry.get("scored_on") else []
    if entry.get("model_fingerprint"):
        parts.append(f"weights {entry['model_fingerprint'][:8]}")
    if entry.get("trained_from"):
        parts.append(
            f"config {entry['trained_from']['config']} ({entry['trained_from']['config_sha256'][:8]})"
        )
    if entry.get("submitter"):
        parts.append(f"by {entry['submitter']}")
    return ", ".join(parts)


def has_details(release: ReleaseEntries) -> bool:
    return any(entry_detail(e) for e in release.entries)


def relation_ranked(release: ReleaseEntries, relation: str) -> list[tuple[Rank, dict[str, Any]]]:
    """(rank, entry) of every entry scored on ``relation``, by that relation's MRR@10 within each split: the
    board where a specialist scored on one relation competes (the main ranking puts full entries first)."""
    entries = sorted(
        (e for e in release.entries if relation in e["results"]),
        key=lambda e: (split_key(e["split"]), -e["results"][relation][MAIN_SCORE]),
    )
    return ranked(
        ReleaseEntries(release.name, release.version, release.manifest_sha256, tuple(entries)), relation
    )


def metric_cells(entry: dict[str, Any]) -> list[tuple[str, float | None, str]]:
    """(relation, value, shown text) for each table column; None and "-" where the entry has no such
    relation."""
    return [
        (rel, entry["results"][rel][key] if rel in entry["results"] else None, text)
        for rel in RELATIONS
        for key, text in zip((k for k, _ in TABLE_METRICS), relation_figures(entry, rel), strict=True)
    ]


def relation_figures(entry: dict[str, Any], relation: str) -> list[str]:
    """The table's figures of one relation as shown: ``14.5 [12.9-16.1]`` (%, with the bootstrap interval),
    the bare figure without per-query data, "-" when the entry did not score the relation."""
    values = entry["results"].get(relation)
    if values is None:
        return ["-"] * len(TABLE_METRICS)
    bounds = uncertainty.intervals(entry, relation, [key for key, _ in TABLE_METRICS])
    return [figure_text(values[key], bounds.get(key)) for key, _ in TABLE_METRICS]


def figure_text(value: float | None, bounds: uncertainty.Interval | None) -> str:
    if bounds is None:
        return percent(value)
    return f"{percent(value)} [{100 * bounds.low:.1f}-{100 * bounds.high:.1f}]"


def without_per_query(release: ReleaseEntries) -> list[str]:
    """The rows whose figures have no interval (and are never tied): entries without per-query data."""
    return [entry_label(e) for e in release.entries if set(e["results"]) - set(e.get("per_query", {}))]


def bare_note(release: ReleaseEntries) -> str:
    """The line under a release's table naming its rows without per-query data ("" when there are none)."""
    bare = without_per_query(release)
    return f"No per-query data (figures without an interval, never tied): {', '.join(bare)}." if bare else ""


JUDGED_SHOWN = (("mrr", "MRR"), ("precision", "P"))  # of each agreement's metrics, the ones the table shows
JUDGED_HEAD = ["model setup", "split", "relation", "judge", "queries", "judged@10"] + [
    f"{agreement} {short}@10" for agreement in AGREEMENTS for _, short in JUDGED_SHOWN
]
JUDGED_NOTE = (
    "Judged by an LLM (not used for ranking): on the judged pool's queries only, relevant = the mined gold plus "
    "the candidates the judge accepted (hard: every prompt; soft: any), unjudged = not relevant; judged@10 is "
    "the share of the entry's top 10 the judge had read when it was scored."
)


def judged_rows(release: ReleaseEntries) -> list[tuple[dict[str, Any], str, list[str], list[float]]]:
    """(entry, relation, text cells, metric values) for every judged relation of the release's entries."""
    rows = []
    for _, entry in ranked(release):
        for rel in RELATIONS:
            block = entry.get("judged", {}).get(rel)
            if block is None:
                continue
            text = [entry_label(entry), entry["split"], rel, block["judge_model"], str(block["queries"])]
            values = [block["coverage_at_10"]] + [
                block[agreement][f"{metric}_at_10"] for agreement in AGREEMENTS for metric, _ in JUDGED_SHOWN
            ]
            rows.append((entry, rel, text, values))
    return rows


def provenance_text(entry: dict[str, Any]) -> str | None:
    """``verified (worker ..., model@sha)`` or ``self-reported`` for an entry from a results repository."""
    mark = entry.get("provenance")
    if mark is None:
        return None
    return mark["status"] + (f" ({mark['detail']})" if mark.get("detail") else "")


def has_provenance(board: Board) -> bool:
    return any("provenance" in e for r in board.releases for e in r.entries)


def percent(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}"


# --- clean snapshots only -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class CleanRow:
    """One model on the release's clean snapshots: per relation (query-weighted MRR@10, snapshots, queries)."""

    label: str
    detail: str
    relations: dict[str, tuple[float, int, int]]
    left_out: dict[str, int]  # snapshot entries not counted, by mark (contaminated, unknown)

    @property
    def score(self) -> float:
        return sum(m for m, _, _ in self.relations.values()) / len(self.relations)

    @property
    def note(self) -> str:
        counted = "" if self.relations else "no clean snapshot"
        left = ", ".join(f"{n} {mark}" for mark, n in sorted(self.left_out.items()))
        return "; ".join(filter(None, (counted, f"left out: {left}" if left else "")))


CLEAN_NOTE = (
    "Clean snapshots only (--clean-only): per model, each relation's MRR@10 averaged over the snapshots that start "
    "after the model's training-data cut-off, weighted by their queries; ranked by the mean over relations "
    "(models with every relation first). A model without a clean snapshot is listed, not ranked."
)


def model_key(entry: dict[str, Any]) -> tuple[str, str, str]:
    """What the board tells apart as one model across splits: its weights' fingerprint, its row name (model and
    setup, the relation it was tuned for) and the provenance of its entries."""
    return (
        entry.get("model_fingerprint", ""),
        entry_label(entry),
        entry.get("provenance", {}).get("status", ""),
    )


def clean_ranking(release: ReleaseEntries) -> list[tuple[int | None, CleanRow]]:
    """(rank or None, row) per model scored on the release's snapshots, ranked on its clean snapshots only.

    A model is what the board tells apart (:func:`model_key`). A snapshot entry without a query count for a relation
    cannot be weighted and is not counted for it.
    """
    groups: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
    for e in release.entries:
        if is_snapshot(e["split"]):
            groups.setdefault(model_key(e), []).append(e)
    rows = []
    for entries in groups.values():
        clean = [e for e in entries if entry_clean(e) is True]
        relations = {}
        for rel in RELATIONS:
            counted = [
                (e["results"][rel][MAIN_SCORE], e["n_queries"][rel])
                for e in clean
                if rel in e["results"] and e.get("n_queries", {}).get(rel)
            ]
            queries = sum(n for _, n in counted)
            if queries:
                relations[rel] = (sum(v * n for v, n in counted) / queries, len(counted), queries)
        left_out = Counter(MARKS[entry_clean(e)] for e in entries if entry_clean(e) is not True)
        rows.append(CleanRow(entry_label(entries[0]), entry_detail(entries[0]), relations, dict(left_out)))
    scored = sorted((r for r in rows if r.relations), key=lambda r: (-len(r.relations), -r.score, r.label))
    unscored = sorted((r for r in rows if not r.relations), key=lambda r: r.label)
    return [(i, r) for i, r in enumerate(scored, 1)] + [(None, r) for r in unscored]


CLEAN_HEAD = ["#", "model setup", "model", "mean M@10"] + [f"{rel} M@10" for rel in RELATIONS] + ["note"]


def clean_cells(rank: int | None, row: CleanRow) -> list[str]:
    """A clean-ranking row as plain text cells (escaped by each renderer)."""
    cells = [str(rank) if rank else "-", row.label, row.detail, percent(row.score if row.relations else None)]
    for rel in RELATIONS:
        m = row.relations.get(rel)
        cells.append(f"{percent(m[0])} ({m[1]} snapshots, {m[2]:,} queries)" if m else "-")
    return cells + [row.note]


def clean_markdown(board: Board) -> str:
    """The clean-snapshot ranking of every release build, as Markdown."""
    lines = [
        "# Ratio leaderboard: clean snapshots only",
        "",
        markdown_text(CLEAN_NOTE),
        "",
        markdown_text(LEGEND),
    ]
    for release in board.releases:
        rows = clean_ranking(release)
        lines += ["", f"## {markdown_text(release.title)}", ""]
        if not rows:
            lines.append("No entries on dated snapshots.")
            continue
        lines += [_md_row(CLEAN_HEAD), "|" + "---|" * len(CLEAN_HEAD)]
        lines += [_md_row([markdown_text(c) for c in clean_cells(rank, row)]) for rank, row in rows]
    return "\n".join(lines) + "\n"


def clean_html(release: ReleaseEntries) -> str:
    """One release's clean-snapshot ranking as an HTML section."""
    rows = clean_ranking(release)
    body = [
        "<tr>" + "".join(f"<td>{html_text(c)}</td>" for c in clean_cells(rank, row)) + "</tr>"
        for rank, row in rows
    ] or [f'<tr><td colspan="{len(CLEAN_HEAD)}">No entries on dated snapshots.</td></tr>']
    return "\n".join(
        [
            f'<section class="release" data-release="{html_text(release.manifest_sha256)}">',
            f"<h2>{html_text(release.title)}</h2>",
            "<table>",
            "<thead><tr>" + "".join(f"<th>{html_text(h)}</th>" for h in CLEAN_HEAD) + "</tr></thead>",
            "<tbody>",
            *body,
            "</tbody>",
            "</table>",
            "</section>",
        ]
    )


def terminal_clean_table(release: ReleaseEntries) -> Any:
    from rich.table import Table

    t = Table(title=terminal_text(f"Clean snapshots only: {release.title} (%)"))
    for name in CLEAN_HEAD:
        t.add_column(name)
    for rank, row in clean_ranking(release):
        t.add_row(*map(terminal_text, clean_cells(rank, row)))
    return t


# --- escaping -------------------------------------------------------------------------------------------------


def plain_text(text: str) -> str:
    """One line of visible text: line breaks and other control characters become spaces, format characters
    (bidirectional overrides, zero-width marks) are dropped, so a field cannot reorder or split what follows."""
    out = []
    for ch in str(text):
        category = unicodedata.category(ch)
        if category in ("Cc", "Zl", "Zp"):
            out.append(" ")
        elif category not in ("Cf", "Cs", "Co", "Cn"):
            out.append(ch)
    return "".join(out)


def markdown_text(text: str) -> str:
    """``text`` as literal inline Markdown: no markup, link, HTML tag, code span or table cell boundary."""
    out = []
    for ch in plain_text(text):
        if ch in _MD_ENTITIES:
            out.append(_MD_ENTITIES[ch])
        elif ch in string.punctuation and ch not in _MD_INERT:
            out.append("\\" + ch)
        else:
            out.append(ch)
    return "".join(out)


def html_text(text: str) -> str:
    """``text`` as HTML character data or a quoted attribute value."""
    return html.escape(plain_text(text), quote=True)


def terminal_text(text: str) -> str:
    """``text`` for a rich console: one line, markup brackets escaped."""
    from rich.markup import escape

    return escape(plain_text(text))


def terminal_relation_tables(release: ReleaseEntries) -> list[Any]:
    """The per-relation rankings as rich tables (one per relation with entries), for the console."""
    from rich.table import Table

    detailed, tables = has_details(release), []
    for rel in RELATIONS:
        rows = relation_ranked(release, rel)
        if not rows:
            continue
        t = Table(title=terminal_text(f"{rel}: {RELATION_NOTE} (%)"))
        for name in ["#", "model setup"] + ["model"] * detailed + ["split"]:
            t.add_column(name)
        for _, short in TABLE_METRICS:
            t.add_column(short, justify="right")
        for rank, e in rows:
            text = [str(rank), entry_label(e)] + [entry_detail(e)] * detailed + [split_text(e)]
            t.add_row(*map(terminal_text, text), *map(terminal_figure, relation_figures(e, rel)))
        tables.append(t)
    return tables


def terminal_figure(text: str) -> str:
    """A figure for a narrow console column: the interval on a second line, dimmed."""
    value, _, bounds = text.partition(" ")
    return value + (f"\n[dim]{terminal_text(bounds)}[/dim]" if bounds else "")


# --- Markdown -------------------------------------------------------------------------------------------------


def leaderboard_markdown(board: Board) -> str:
    """One table per release build (entries ranked within their split), then the rejected files."""
    marked = has_provenance(board)
    head = (
        ["#", "model setup", "split"]
        + ["provenance"] * marked
        + [f"{rel} {short}" for rel in RELATIONS for _, short in TABLE_METRICS]
    )
    lines = [
        "# Ratio leaderboard",
        "",
        f"{markdown_text(board.summary)}. Metrics in %; ranked by "
        "MRR@10 averaged over the relations (entries scored on all relations first), only against entries of the same release build and split.",
        "",
        markdown_text(interval_note()),
        "",
        markdown_text(TIE_NOTE),
        *(["", markdown_text(LEGEND)] if has_snapshots(board) else []),
    ]
    for release in board.releases:
        detailed = has_details(release)
        lines += ["", f"## {markdown_text(release.title)}", ""]
        lines += [_md_row(head[:2] + ["model"] * detailed + head[2:]), "|" + "---|" * (len(head) + detailed)]
        for rank, entry in ranked(release):
            cells = [str(rank), markdown_text(entry_label(entry))]
            cells += [markdown_text(entry_detail(entry))] * detailed + [markdown_text(split_text(entry))]
            cells += [markdown_text(provenance_text(entry) or "")] * marked
            lines.append(_md_row(cells + [markdown_text(text) for *_, text in metric_cells(entry)]))
        if bare_note(release):
            lines += ["", markdown_text(bare_note(release))]
        lines += _md_relation_boards(release, detailed)
        judged = judged_rows(release)
        if judged:
            lines += [
                "",
                markdown_text(JUDGED_NOTE),
                "",
                _md_row(JUDGED_HEAD),
                "|" + "---|" * len(JUDGED_HEAD),
            ]
            lines += [
                _md_row([markdown_text(t) for t in text] + [percent(v) for v in values])
                for *_, text, values in judged
            ]
    if board.rejected:
        lines += ["", "## Rejected files", "", _md_row(["file", "reason"]), "|---|---|"]
        lines += [_md_row([markdown_text(r.source), markdown_text(r.reason)]) for r in board.rejected]
    return "\n".join(lines) + "\n"


RELATION_NOTE = "ranked by that relation's MRR@10, every entry scored on it (specialists included)"


def _md_relation_boards(release: ReleaseEntries, detailed: bool) -> list[str]:
    """One small table per relation: where a specialist is ranked against everything scored on its move."""
    head = ["#", "model setup"] + ["model"] * detailed + ["split"] + [short for _, short in TABLE_METRICS]
    lines = []
    for rel in RELATIONS:
        rows = relation_ranked(release, rel)
        if not rows:
            continue
        lines += [
            "",
            f"### {rel} ({markdown_text(RELATION_NOTE)})",
            "",
            _md_row(head),
            "|" + "---|" * len(head),
        ]
        for rank, entry in rows:
            cells = [str(rank), markdown_text(entry_label(entry))]
            cells += [markdown_text(entry_detail(entry))] * detailed + [markdown_text(split_text(entry))]
            lines.append(_md_row(cells + [markdown_text(t) for t in relation_figures(entry, rel)]))
    return lines


def _md_row(cells: list[str]) -> str:
    return "| " + " | ".join(cells) + " |"


# --- plot -----------------------------------------------------------------------------------------------------


PLOT_TOP = 15  # bars per panel: the top entries of each relation
_BAR_INCHES = 0.3  # height of one bar's row: a 9-point label fits, so labels never overlap


def plot_figure(board: Board, top: int = PLOT_TOP) -> Any:
    """MRR@10 as horizontal bars, one panel per relation of each release build, its ``top`` entries by that
    relation (full names on the bars' axis, best at the top), so the picture stays legible at 100 entries: the
    height grows with the bars, never the labels' crowding. Returns the matplotlib figure."""
    plt = pyplot("--plot")
    panels = [
        (release, rel, relation_ranked(release, rel)[:top]) for release in board.releases for rel in RELATIONS
    ]
    panels = [p for p in panels if p[2]] or [(None, "no entries", [])]
    heights = [max(len(rows), 1) * _BAR_INCHES + 0.9 for *_, rows in panels]
    fig, axes = plt.subplots(
        len(panels), 1, figsize=(11, sum(heights)), squeeze=False, gridspec_kw={"height_ratios": heights}
    )
    for ax, (release, rel, rows) in zip(axes[:, 0], panels, strict=True):
        labels = [plain_text(f"{rank}. {entry_label(e)} ({split_text(e)})") for rank, e in rows]
        values = [100 * e["results"][rel][MAIN_SCORE] for _, e in rows]
        bounds = [uncertainty.interval(e, rel) for _, e in rows]
        spread = [
            [v - 100 * b.low if b else 0 for v, b in zip(values, bounds, strict=True)],
            [100 * b.high - v if b else 0 for v, b in zip(values, bounds, strict=True)],
        ]
        ax.barh(range(len(rows)), values, height=0.7, color="#4c72b0", xerr=spread, ecolor="#333333")
        ax.set_yticks(range(len(rows)), labels, fontsize=9, parse_math=False)
        ax.invert_yaxis()  # rank 1 at the top
        for y, (v, up) in enumerate(zip(values, spread[1], strict=True)):
            ax.text(v + up, y, f" {v:.1f}", va="center", fontsize=8)
        where = f"{release.name} {release.version} ({release.manifest_sha256[:SHORT_SHA]})" if release else ""
        ax.set_title(
            plain_text(f"{rel}: top {len(rows)} by MRR@10 (bars: {uncertainty.DEFAULT.note}), {where}"),
            fontsize=10,
            loc="left",
            parse_math=False,
        )
        ax.set_xlabel("MRR@10 (%)", fontsize=9)
        ax.set_xlim(0, max((v + s for v, s in zip(values, spread[1], strict=True)), default=1) * 1.15 or 1)
    fig.tight_layout()
    return fig


def pyplot(flag: str) -> Any:
    """matplotlib's pyplot on the Agg backend (no display), or PlottingUnavailable naming the install."""
    try:
        import matplotlib
    except ImportError as e:
        raise PlottingUnavailable(
            f"plotting needs matplotlib: pip install 'ratio-bench[eval]' (or leave out {flag})"
        ) from e
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def plot_png(board: Board, top: int = PLOT_TOP) -> bytes:
    """:func:`plot_figure` as PNG bytes (reproducible: no software or date metadata)."""
    return png_bytes(plot_figure(board, top))  # the figure first: without matplotlib, PlottingUnavailable


def png_bytes(fig: Any) -> bytes:
    import matplotlib.pyplot as plt

    buf = io.BytesIO()
    with warnings.catch_warnings():  # a name in a script the font lacks draws boxes; that is not an error
        warnings.filterwarnings("ignore", message="Glyph .* missing")
        fig.savefig(buf, format="png", dpi=120, metadata={"Software": None})
    plt.close(fig)
    return buf.getvalue()


# --- trend over test snapshots ----------------------------------------------------------------------------------

NO_SNAPSHOTS = (
    "no entries on test snapshot splits (test_YYYY_MM or test_YYYYqN); score models on the release's snapshot "
    "splits (ratio score --split test_YYYY_MM)"
)
CUTOFF_NOTE = "dashed line: the model's training-data cut-off (its colour)"


def snapshot_entries(release: ReleaseEntries) -> list[tuple[Period, dict[str, Any]]]:
    """The release's entries scored on a test snapshot, with its period (other splits are not in the trend)."""
    return [(period, e) for e in release.entries if (period := parse_split(e["split"])) is not None]


def training_cutoff(entry: dict[str, Any]) -> date | None:
    """The entry's ``training_data_cutoff`` as a date (``YYYY-MM``: the month's first day), None if unknown."""
    text = entry.get("training_data_cutoff")
    for candidate in (text, f"{text}-01") if isinstance(text, str) else ():
        try:
            return date.fromisoformat(candidate)
        except ValueError:
            continue
    return None


def trend_figure(board: Board) -> Any:
    """MRR@10 per test snapshot, one panel per relation of each release build: one line per model over the
    periods in time order, its 95% bootstrap interval a shaded band, its training-data cut-off a dashed line in
    its colour (a snapshot after the cut-off holds papers the model cannot have seen). A model keeps its colour
    across panels."""
    panels = [
        (release, rel, [(p, e) for p, e in snapshot_entries(release) if rel in e["results"]])
        for release in board.releases
        for rel in RELATIONS
    ]
    panels = [panel for panel in panels if panel[2]]
    if not panels:
        raise LeaderboardError(NO_SNAPSHOTS)
    plt = pyplot("--trend")
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    labels = sorted({entry_label(e) for *_, rows in panels for _, e in rows})
    palette = plt.get_cmap("tab10" if len(labels) <= 10 else "tab20").colors
    colour = {label: palette[i % len(palette)] for i, label in enumerate(labels)}
    fig, axes = plt.subplots(len(panels), 1, figsize=(11, 3.6 * len(panels)), squeeze=False)
    for ax, (release, rel, rows) in zip(axes[:, 0], panels, strict=True):
        periods = sorted({p for p, _ in rows})
        by_model: dict[str, dict[Period, dict[str, Any]]] = {}
        for period, e in rows:  # one point per model and period: the entry the board lists last
            by_model.setdefault(entry_label(e), {})[period] = e
        handles = []
        for label in sorted(by_model):
            points = sorted(by_model[label].items())
            x = [_middle(p) for p, _ in points]
            y = [100 * e["results"][rel][MAIN_SCORE] for _, e in points]
            ax.plot(x, y, marker="o", color=colour[label])
            bounds = [uncertainty.interval(e, rel) for _, e in points]
            if all(bounds):
                ax.fill_between(
                    x,
                    [100 * b.low for b in bounds],
                    [100 * b.high for b in bounds],
                    color=colour[label],
                    alpha=0.2,
                )
            cutoff = next(filter(None, (training_cutoff(e) for _, e in points)), None)
            shown = _cutoff_text(cutoff, periods)
            if cutoff is not None and periods[0].start <= cutoff <= periods[-1].end:
                ax.axvline(cutoff, color=colour[label], linestyle="--", linewidth=1)
            handles.append(
                Line2D([], [], color=colour[label], marker="o", label=plain_text(f"{label} ({shown})"))
            )
        handles += [
            Patch(color="grey", alpha=0.2, label=uncertainty.DEFAULT.note),
            Line2D([], [], color="grey", linestyle="--", label=CUTOFF_NOTE),
        ]
        ax.set_xticks([_middle(p) for p in periods], [p.label for p in periods], fontsize=8)
        ax.set_ylabel("MRR@10 (%)", fontsize=9)
        ax.set_title(
            plain_text(
                f"{rel}: MRR@10 per test snapshot, {release.name} {release.version} "
                f"({release.manifest_sha256[:SHORT_SHA]})"
            ),
            fontsize=10,
            loc="left",
            parse_math=False,
        )
        ax.legend(handles=handles, fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1), borderaxespad=0)
    fig.tight_layout()
    return fig


def _cutoff_text(cutoff: date | None, periods: list[Period]) -> str:
    """The legend's word on a cut-off; one outside the snapshots is said, not drawn (it would squeeze the axis)."""
    if cutoff is None:
        return "cut-off unknown"
    where = (
        ", before the first snapshot"
        if cutoff < periods[0].start
        else ", after the last snapshot"
        if cutoff > periods[-1].end
        else ""
    )
    return f"cut-off {cutoff.isoformat()}{where}"


def _middle(period: Period) -> date:
    return period.start + (period.end - period.start) / 2


def trend_png(board: Board) -> bytes:
    """:func:`trend_figure` as PNG bytes (reproducible, like :func:`plot_png`); LeaderboardError without
    snapshot entries."""
    return png_bytes(trend_figure(board))


# --- HTML -----------------------------------------------------------------------------------------------------

_STYLE = """
body { font: 14px/1.4 system-ui, sans-serif; margin: 1.5em; color: #1b1b1b; }
table { border-collapse: collapse; margin: 0.5em 0 1.5em; }
th, td { border: 1px solid #ccc; padding: 0.2em 0.5em; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
th.sortable { cursor: pointer; background: #f3f3f3; }
th[aria-sort="ascending"]::after { content: " \\25B2"; }
th[aria-sort="descending"]::after { content: " \\25BC"; }
label { margin-right: 1em; }
img { max-width: 100%; }
.hash { font-family: monospace; }
"""

# Constant: the page's data lives in the HTML tables, never in the script, so no submitted text reaches it.
_SCRIPT = """
(function () {
  "use strict";
  function byId(id) { return document.getElementById(id); }
  function applyFilters() {
    var release = byId("filter-release").value;
    var split = byId("filter-split").value;
    var relation = byId("filter-relation").value;
    document.querySelectorAll("section.release").forEach(function (s) {
      s.hidden = release !== "" && s.getAttribute("data-release") !== release;
    });
    var provenance = byId("filter-provenance") ? byId("filter-provenance").value : "";
    var clean = byId("filter-clean") ? byId("filter-clean").value : "";
    document.querySelectorAll("tr[data-split]").forEach(function (r) {
      r.hidden = (split !== "" && r.getAttribute("data-split") !== split) ||
        (provenance !== "" && r.getAttribute("data-provenance") !== provenance) ||
        (clean !== "" && r.getAttribute("data-clean") !== clean);
    });
    document.querySelectorAll("[data-relation]").forEach(function (c) {
      c.hidden = relation !== "" && c.getAttribute("data-relation") !== relation;
    });
  }
  function cellKey(row, index, numeric) {
    var cell = row.cells[index];
    if (!numeric) { return cell.textContent; }
    var value = cell.getAttribute("data-value");
    return value === null || value === "" ? -Infinity : parseFloat(value);
  }
  function sortBy(th) {
    var table = th.closest("table");
    var body = table.tBodies[0];
    var index = th.cellIndex;
    var numeric = th.getAttribute("data-type") === "number";
    var descending = th.getAttribute("aria-sort") !== "descending";
    table.querySelectorAll("th.sortable").forEach(function (h) { h.removeAttribute("aria-sort"); });
    th.setAttribute("aria-sort", descending ? "descending" : "ascending");
    var rows = Array.prototype.slice.call(body.rows);
    rows.sort(function (a, b) {
      var ka = cellKey(a, index, numeric), kb = cellKey(b, index, numeric);
      var order = ka < kb ? -1 : ka > kb ? 1 : 0;
      return descending ? -order : order;
    });
    rows.forEach(function (r) { body.appendChild(r); });
  }
  document.querySelectorAll("th.sortable").forEach(function (th) {
    th.addEventListener("click", function () { sortBy(th); });
  });
  ["filter-release", "filter-split", "filter-relation", "filter-provenance", "filter-clean"].forEach(function (id) {
    if (byId(id)) { byId(id).addEventListener("change", applyFilters); }
  });
})();
"""


def _csp_hash(source: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(source.encode()).digest()).decode() + "'"


# Only the page's own script and style may run and nothing may be fetched: even a text that escaped escaping
# could not load or execute anything. A server can send the same policy as a header.
CONTENT_SECURITY_POLICY = (
    f"default-src 'none'; img-src data:; style-src {_csp_hash(_STYLE)}; script-src {_csp_hash(_SCRIPT)}; "
    "base-uri 'none'; form-action 'none'"
)


def leaderboard_html(
    board: Board, extra: str = "", policy: str = CONTENT_SECURITY_POLICY, clean_only: bool = False
) -> str:
    """The leaderboard as one self-contained page (no external resources; works offline and from a server).

    ``extra``: HTML sections (already escaped) after the tables, such as a leaderboard service's queue;
    ``policy``: the page's Content-Security-Policy (a server that takes submissions allows its own form);
    ``clean_only``: the ranking on clean snapshots (:func:`clean_ranking`) instead of the entries' tables.
    """
    try:
        plot = None if clean_only else plot_png(board)
    except PlottingUnavailable:
        plot = None
    try:
        trend = trend_png(board)
    except LeaderboardError:  # no snapshot entries, or no matplotlib (the plot's paragraph says so)
        trend = None
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en">',
        "<head>",
        '<meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{html.escape(policy)}">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        "<title>Ratio leaderboard</title>",
        f"<style>{_STYLE}</style>",
        "</head>",
        "<body>",
        "<h1>Ratio leaderboard</h1>",
        f"<p>{html_text(board.summary)}. Metrics in %; ranked by "
        "MRR@10 averaged over the relations (entries scored on all relations first), only against entries of the same release build and split. "
        "Click a column header to sort.</p>",
        f"<p>{html_text(interval_note())} {html_text(TIE_NOTE)}</p>",
        *([f"<p>{html_text(CLEAN_NOTE)}</p>"] if clean_only else []),
        *([f"<p>{html_text(LEGEND)}</p>"] if has_snapshots(board) or clean_only else []),
        _filters(board),
    ]
    for release in board.releases:
        parts.append(clean_html(release) if clean_only else _release_section(release))
    parts.append(extra)
    if plot is not None:
        data = base64.b64encode(plot).decode("ascii")
        parts.append(
            '<figure><img alt="MRR@10 per relation for every entry, one panel per release build" '
            f'src="data:image/png;base64,{data}"><figcaption>MRR@10 per relation (%)</figcaption></figure>'
        )
    elif not clean_only:
        parts.append("<p>(No plot: matplotlib is not installed.)</p>")
    if trend is not None:
        parts += [
            "<h2>Trend over test snapshots</h2>",
            '<figure><img alt="MRR@10 per test snapshot for every model, one panel per relation" '
            f'src="data:image/png;base64,{base64.b64encode(trend).decode("ascii")}">'
            f"<figcaption>MRR@10 per snapshot (%), {html_text(uncertainty.DEFAULT.note)} as the band; "
            f"{html_text(CUTOFF_NOTE)}</figcaption></figure>",
        ]
    if board.rejected:
        parts += [
            "<h2>Rejected files</h2>",
            "<table>",
            "<thead><tr><th>file</th><th>reason</th></tr></thead>",
        ]
        parts.append("<tbody>")
        parts += [
            f"<tr><td>{html_text(r.source)}</td><td>{html_text(r.reason)}</td></tr>" for r in board.rejected
        ]
        parts += ["</tbody>", "</table>"]
    parts += [
        f"<p><small>Rendered by ratio-bench {html_text(__version__)} (<code>ratio leaderboard</code>).</small></p>",
        f"<script>{_SCRIPT}</script>",
        "</body>",
        "</html>",
    ]
    return "\n".join(parts) + "\n"


def _options(choices: list[tuple[str, str]]) -> str:
    rows = ['<option value="">all</option>']
    rows += [f'<option value="{html_text(value)}">{html_text(label)}</option>' for value, label in choices]
    return "".join(rows)


def _filters(board: Board) -> str:
    splits = sorted({e["split"] for r in board.releases for e in r.entries}, key=split_key)
    releases = [(r.manifest_sha256, r.title) for r in board.releases]
    return (
        "<p>"
        f'<label>ReleaseEntries <select id="filter-release">{_options(releases)}</select></label>'
        f'<label>Split <select id="filter-split">{_options([(s, s) for s in splits])}</select></label>'
        f'<label>Relation <select id="filter-relation">{_options([(r, r) for r in RELATIONS])}</select></label>'
        + (
            f'<label>Provenance <select id="filter-provenance">{_options([(p, p) for p in PROVENANCES])}'
            "</select></label>"
            if has_provenance(board)
            else ""
        )
        + (
            f'<label>Snapshot score <select id="filter-clean">{_options([(m, m) for m in MARKS.values()])}'
            "</select></label>"
            if has_snapshots(board)
            else ""
        )
        + "</p>"
    )


def _release_section(release: ReleaseEntries) -> str:
    detailed = has_details(release)
    head = ['<th class="sortable" data-type="number">#</th>', '<th class="sortable">model setup</th>']
    head += ['<th class="sortable">model</th>'] * detailed
    head.append('<th class="sortable">split</th>')
    marked = any("provenance" in e for e in release.entries)
    head += ['<th class="sortable">provenance</th>'] * marked
    head += [
        f'<th class="sortable" data-type="number" data-relation="{rel}">{rel} {html_text(short)}</th>'
        for rel in RELATIONS
        for _, short in TABLE_METRICS
    ]
    rows = []
    for rank, entry in ranked(release):
        cells = [
            f'<td class="num" data-value="{rank.position}">{rank}</td>',
            f"<td>{html_text(entry_label(entry))}</td>",
            *[f"<td>{html_text(entry_detail(entry))}</td>"] * detailed,
            f"<td>{html_text(split_text(entry))}</td>",
        ]
        cells += [f"<td>{html_text(provenance_text(entry) or '')}</td>"] * marked
        cells += [
            f'<td class="num" data-relation="{rel}" data-value="{"" if v is None else repr(float(v))}">'
            f"{html_text(text)}</td>"
            for rel, v, text in metric_cells(entry)
        ]
        status = html_text(entry.get("provenance", {}).get("status", ""))
        rows.append(
            f'<tr data-split="{html_text(entry["split"])}" data-provenance="{status}" '
            f'data-clean="{clean_mark(entry) or ""}">{"".join(cells)}</tr>'
        )
    return "\n".join(
        [
            f'<section class="release" data-release="{html_text(release.manifest_sha256)}">',
            f"<h2>{html_text(release.name)} {html_text(release.version)} "
            f'<span class="hash" title="manifest SHA-256 {html_text(release.manifest_sha256)}">'
            f"(manifest {html_text(release.manifest_sha256[:SHORT_SHA])})</span></h2>",
            "<table>",
            f"<thead><tr>{''.join(head)}</tr></thead>",
            "<tbody>",
            *rows,
            "</tbody>",
            "</table>",
            *([f"<p>{html_text(bare_note(release))}</p>"] if bare_note(release) else []),
            *_html_relation_boards(release, detailed),
            *_judged_table(release),
            "</section>",
        ]
    )


def _html_relation_boards(release: ReleaseEntries, detailed: bool) -> list[str]:
    """The per-relation rankings (see :func:`relation_ranked`), one table per relation, hidden by the relation
    filter like the main table's columns."""
    head = ["#", "model setup"] + ["model"] * detailed + ["split"] + [short for _, short in TABLE_METRICS]
    parts = []
    for rel in RELATIONS:
        rows = relation_ranked(release, rel)
        if not rows:
            continue
        body = [
            f'<tr data-split="{html_text(entry["split"])}" '
            f'data-provenance="{html_text(entry.get("provenance", {}).get("status", ""))}" '
            f'data-clean="{clean_mark(entry) or ""}">'
            + f'<td class="num">{rank}</td><td>{html_text(entry_label(entry))}</td>'
            + f"<td>{html_text(entry_detail(entry))}</td>" * detailed
            + f"<td>{html_text(split_text(entry))}</td>"
            + "".join(f'<td class="num">{html_text(text)}</td>' for text in relation_figures(entry, rel))
            + "</tr>"
            for rank, entry in rows
        ]
        parts += [
            f'<div data-relation="{rel}"><h3>{rel} <small>({html_text(RELATION_NOTE)})</small></h3><table>',
            "<thead><tr>" + "".join(f"<th>{html_text(h)}</th>" for h in head) + "</tr></thead>",
            "<tbody>",
            *body,
            "</tbody></table></div>",
        ]
    return parts


def _judged_table(release: ReleaseEntries) -> list[str]:
    """The judged figures of a release's entries: one tbody per relation, so the relation filter applies."""
    rows = judged_rows(release)
    if not rows:
        return []
    parts = [f"<p>{html_text(JUDGED_NOTE)}</p>", "<table>"]
    parts.append("<thead><tr>" + "".join(f"<th>{html_text(h)}</th>" for h in JUDGED_HEAD) + "</tr></thead>")
    for rel in RELATIONS:
        body = [
            f'<tr data-split="{html_text(entry["split"])}">'
            + "".join(f"<td>{html_text(t)}</td>" for t in text)
            + "".join(f'<td class="num">{percent(v)}</td>' for v in values)
            + "</tr>"
            for entry, r, text, values in rows
            if r == rel
        ]
        if body:
            parts += [f'<tbody data-relation="{rel}">', *body, "</tbody>"]
    return parts + ["</table>"]
