"""Custody: the newest snapshot withheld from the public release, kept in a folder of its own until its embargo ends.

A public test set ends up in training data; a withheld one cannot, as long as nobody outside the maintainers'
workers reads it. ``ratio dataset build --withhold PERIOD`` (or ``append``, or a ``custody:`` block in the config:
the policy default withholds the newest period) writes the withheld split's shards, every config of it, to
``<release>.custody/`` beside the release (its own artefact kind, ``custody``, swapped in atomically like a
release), and keeps in the public release only what describes it: the split's name, period, sizes, the SHA-256
over its files and the day its embargo ends (``manifest.json: withheld``, and the card's Snapshots table). Assembly
has already taken out of every public split each row of a withheld work and each sentence a withheld split holds
(:func:`ratio_bench.dataset.assemble._withhold`), so no public file carries a withheld text or an id derived from
one; :func:`leak_scan` checks that over every public file's bytes and decompressed Parquet values.

The two halves together make the release as it will be once the split is released: :func:`merge` writes that
folder (hard links), which is how ``ratio dataset check`` holds the withheld half to the release contract, how
a worker scores submissions on it, and what ``ratio dataset release-withheld`` swaps in as a new version after the
embargo (the split's files unchanged byte for byte, so its SHA-256 and every withheld score stay what they were).
"""

from __future__ import annotations

import datetime as dt
import fnmatch
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from ratio_bench.core.errors import RatioError
from ratio_bench.core.io import MANIFEST, folder_lock, link_or_copy, read_json_file, staged_dir, write_json
from ratio_bench.core.relations import RELATIONS
from ratio_bench.core.snapshots import parse_split
from ratio_bench.dataset.assemble import sql_str
from ratio_bench.dataset.card import snapshot_report, snapshots_section, updated_card
from ratio_bench.dataset.check import CheckResult, check_release, require_passing
from ratio_bench.dataset.config import BuildConfig, parse_config
from ratio_bench.dataset.contract import KEEP, KIND, config_names, file_checksums, split_sha256
from ratio_bench.dataset.identity import check_version
from ratio_bench.dataset.release import Release

CUSTODY_KIND = "custody"  # manifest kind of a custody folder (never a release: no reader takes it for one)
SUFFIX = ".custody"
WORKS = "reports/works-withheld.parquet"  # the withheld splits' works (an append keeps their copies out)
WORKS_GLOB = "reports/works-withheld*.parquet"  # the build's and each append's
# what a withheld record in the public manifest says (sizes and dates, never a text or an id)
RECORD_KEYS = ("period", "start", "end", "queries", "candidates", "golds", "sha256", "version")


class CustodyError(RatioError, ValueError):
    """A custody folder that is missing, not ours, or does not go with its release."""


def custody_path(release: str | Path) -> Path:
    """Where a release's custody folder lives: ``<release>.custody`` beside it (never inside: the release folder
    is swapped whole, published whole, and must not hold a withheld byte)."""
    root = Path(release).expanduser().resolve()
    return root.parent / f"{root.name}{SUFFIX}"


def embargo_until(end: str | dt.date, days: int) -> str:
    """The first day a withheld split may be released: ``days`` after its period's last day (a date, not a clock
    time, so that two builds from the same inputs stay byte-identical)."""
    last = end if isinstance(end, dt.date) else dt.date.fromisoformat(end)
    return (last + dt.timedelta(days=days)).isoformat()


def withheld_record(period: dict[str, Any], files: dict[str, str], split: str, version: str,
                    rows: dict[str, int], days: int) -> dict[str, Any]:  # fmt: skip
    """The public manifest's record of one withheld split: its snapshot record (sizes, dates, the SHA-256 over
    its custody files), its row counts per config and the day its embargo ends."""
    return {
        "period": period["period"],
        "start": period["start"],
        "end": period["end"],
        "queries": period["queries_by_relation"],
        "candidates": period["candidates"],
        "golds": period["golds"],
        "sha256": split_sha256(files, split),
        "version": version,
        "rows": rows,
        "embargo_until": embargo_until(period["end"], days),
    }


def split_rows(counts: dict[str, dict[str, int]], splits: list[str]) -> dict[str, dict[str, int]]:
    """{split: {config: rows}} of ``splits`` from row counts per config and split."""
    return {s: {c: n[s] for c, n in counts.items() if s in n} for s in splits}


def public_counts(counts: dict[str, dict[str, int]], withheld: list[str]) -> dict[str, dict[str, int]]:
    return {c: {s: n for s, n in splits.items() if s not in withheld} for c, splits in counts.items()}


def custody_manifest(release_name: str, withheld: dict[str, dict[str, Any]], root: Path) -> dict[str, Any]:
    """A custody folder's manifest: whose release it holds back, the withheld records (equal to the public
    manifest's, which is how the two halves are paired) and every file's SHA-256."""
    return {
        "kind": CUSTODY_KIND,
        "release": release_name,
        "withheld": withheld,
        "files": file_checksums(root),
    }


@dataclass(frozen=True)
class Custody:
    """A custody folder, opened: its manifest, checked to be ours."""

    root: Path
    manifest: dict[str, Any]

    @classmethod
    def open(cls, path: str | Path) -> Custody:
        root = Path(path)
        try:
            manifest = read_json_file(root / MANIFEST)
        except (OSError, ValueError):
            raise CustodyError(
                f"{path}: no custody folder (no readable {MANIFEST}); it is written by `ratio dataset build "
                "--withhold` beside the release", value=root,
            ) from None  # fmt: skip
        if not isinstance(manifest, dict) or manifest.get("kind") != CUSTODY_KIND:
            raise CustodyError(f"{path}: is not a Ratio custody folder (its {MANIFEST} kind)", value=root)
        return cls(root, manifest)

    @property
    def withheld(self) -> dict[str, dict[str, Any]]:
        held = self.manifest.get("withheld")
        return {s: r for s, r in held.items() if parse_split(s)} if isinstance(held, dict) else {}

    def files(self) -> list[str]:
        """The data files the manifest lists, each a plain relative path inside the folder."""
        listed = self.manifest.get("files")
        out = []
        for rel in sorted(listed) if isinstance(listed, dict) else []:
            parts = rel.split("/") if isinstance(rel, str) else [".."]
            if ".." in parts or rel.startswith("/") or (self.root / rel).is_symlink():
                raise CustodyError(f"{self.root}/{MANIFEST}: lists {rel!r}, not a file inside the folder")
            out.append(rel)
        return out

    def texts(self) -> tuple[set[str], set[str]]:
        """(every withheld text: queries, golds, candidates; every id of a withheld row: its query, gold and
        candidate ids, which hash its texts, and its paper and work ids, which say which papers it was cut from)."""
        texts, ids = set(), set()
        for rel in self.files():
            if not rel.endswith(".parquet"):
                continue
            table = pq.read_table(self.root / rel)
            for name in ("query", "gold", "text"):
                if name in table.column_names:
                    texts.update(v for v in table.column(name).to_pylist() if v)
            for name in ("query_id", "gold_id", "id", "query-id", "corpus-id", "paper_id", "work_id"):
                if name in table.column_names:
                    ids.update(v for v in table.column(name).to_pylist() if v)
        return texts, ids


def public_record(record: dict[str, Any]) -> dict[str, Any]:
    """A withheld record as a snapshot record (what the manifest's ``snapshots`` holds once it is released)."""
    return {k: record[k] for k in RECORD_KEYS if k in record}


def withheld_of(manifest: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The public manifest's withheld records (read, not trusted: entries of no snapshot name are ignored)."""
    held = manifest.get("withheld")
    return (
        {s: r for s, r in held.items() if parse_split(s) and isinstance(r, dict)}
        if isinstance(held, dict)
        else {}
    )


def _listed(release: Release) -> list[str]:
    """The files the release's manifest lists, each a relative path without ``..`` (a Hub snapshot's may be
    symlinks into its cache, which are followed here; a folder of our own has none: ``Release.own_files``)."""
    files = release.manifest.get("files")
    out = []
    for rel in sorted(files) if isinstance(files, dict) else []:
        if not isinstance(rel, str) or rel.startswith("/") or ".." in rel.split("/"):
            raise CustodyError(f"{release.shown}/{MANIFEST}: lists {rel!r}, a path outside the release")
        out.append(rel)
    return out


def merged_manifest(public: dict[str, Any], custody: Custody, splits: list[str]) -> dict[str, Any]:
    """The public manifest with ``splits`` moved from ``withheld`` into ``rows`` and ``snapshots`` (files are
    recomputed by the caller over the merged folder)."""
    held = withheld_of(public)
    rows = {c: dict(n) for c, n in (public.get("rows") or {}).items()}
    for split in splits:
        for config, n in held[split].get("rows", {}).items():
            rows.setdefault(config, {})[split] = n
    snapshots = {**(public.get("snapshots") or {}), **{s: public_record(held[s]) for s in splits}}
    order = sorted(snapshots, key=lambda s: parse_split(s) or parse_split("test_1900_01"))
    rest = {s: r for s, r in held.items() if s not in splits}
    out = public | {"rows": rows, "snapshots": {s: snapshots[s] for s in order}}
    if rest:
        out["withheld"] = rest
    else:
        out.pop("withheld", None)
    return out


def merge(release: Release, custody: Custody, dest: Path, splits: list[str] | None = None,
          version: str | None = None) -> Path:  # fmt: skip
    """Write into the empty folder ``dest`` the release with the withheld ``splits`` (default: all) put back:
    hard links of both halves' files, the merged manifest and card; ``version``: a new version (release-withheld),
    else the release's own. Returns ``dest``."""

    held = withheld_of(release.manifest)
    splits = list(held) if splits is None else splits
    for rel in _listed(release):
        if rel not in ("README.md",):
            link_or_copy((release.root / rel).resolve(), dest / rel)  # a Hub snapshot's files are symlinks
    for rel in custody.files():
        if any(fnmatch.fnmatch(rel, f"data/*/{s}-*.parquet") for s in splits):
            link_or_copy(custody.root / rel, dest / rel)
    manifest = merged_manifest(release.manifest, custody, splits)
    if version is not None and version != release.version:
        history = manifest.get("versions") or [
            {"version": release.version, "snapshots_added": list(release.snapshots)}
        ]
        entry = {"version": version, "snapshots_added": [], "released_from_custody": splits}
        manifest |= {"version": version, "versions": [*history, entry]}
    cfg = parse_config(
        release.config, f"{release.shown}/{MANIFEST}: config", release.root / MANIFEST, Path.cwd()
    )
    report = snapshot_report(release.root, manifest, _snapshot_policy(cfg))
    card = (release.root / "README.md").read_text(encoding="utf-8")
    (dest / "README.md").write_text(
        updated_card(card, manifest["rows"], dest, snapshots_section(report), manifest["version"]),
        encoding="utf-8",
    )
    manifest["files"] = file_checksums(dest)
    write_json(dest / MANIFEST, manifest)
    return dest


def _snapshot_policy(cfg: BuildConfig) -> dict[str, Any]:
    """The snapshot settings the card's Snapshots section states."""
    snap = cfg.snapshots
    assert snap is not None
    return {
        "period": snap.period,
        "min_queries": snap.min_queries,
        "max_queries": {r: snap.max_queries.get(r) for r in RELATIONS},
        "pool_size": snap.pool_size,
    }


@contextmanager
def merged(release: Release, custody: Custody) -> Iterator[Release]:
    """The release with every withheld split put back, in a temporary folder for the block (what a worker
    scores on and what the custody checks hold to the contract)."""
    with tempfile.TemporaryDirectory(prefix=".ratio-custody-") as tmp:
        dest = Path(tmp) / release.root.name
        dest.mkdir()
        merge(release, custody, dest)
        yield Release.open(dest)


# --- checks ------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class LeakScan:
    """Every public file searched for every withheld text and id: how many files, texts, ids, and the hits."""

    files: int
    texts: int
    ids: int
    hits: list[tuple[str, str]]  # (public file, what of it: the first 40 characters of the text or the id)


def public_haystack(path: Path) -> str:
    """What a public file says, as text: its bytes (decoded leniently) and, for a Parquet file, every value of
    every column decompressed (a compressed page would hide a text from a byte search)."""
    data = path.read_bytes()
    parts = [data.decode("utf-8", errors="ignore")]
    if path.suffix == ".parquet":
        table = pq.read_table(path)
        for column in table.columns:
            if pa.types.is_string(column.type) or pa.types.is_large_string(column.type):
                parts.append("\n".join(v for v in column.to_pylist() if v is not None))
    return "\n".join(parts)


def leak_scan(release_root: Path, custody: Custody) -> LeakScan:
    """Search every file of the public release folder (the manifest and card included, whatever the manifest
    lists) for every withheld text and every id of a withheld row."""
    texts, ids = custody.texts()
    public = sorted(p for p in Path(release_root).rglob("*") if p.is_file())
    hits = []
    for path in public:
        hay = public_haystack(path)
        rel = path.relative_to(release_root).as_posix()
        hits += [(rel, t[:40]) for t in sorted(texts) if t in hay]
        hits += [(rel, i) for i in sorted(ids - texts) if i in hay]
    return LeakScan(len(public), len(texts), len(ids - texts), hits)


def check_custody(release_root: Path, custody_root: Path | None = None) -> list[Any]:
    """``ratio dataset check`` of the withheld half: the custody folder is ours and goes with the release (the
    same withheld records), its files match its manifest, each split's SHA-256 and sizes are the public record's,
    the merged release passes every contract check, and no public file holds a withheld text or id."""

    release = Release.open(release_root)
    held = withheld_of(release.manifest)
    where = custody_root or custody_path(release_root)
    if not held and not Path(where).exists():
        return []
    absent = _absent(release, held)
    if custody_root is None and not Path(where).exists():  # a stranger's copy of the public half
        note = f"not here ({where}); the maintainers check the withheld half with --custody DIR"
        return [absent, CheckResult("custody: folder", True, note)]
    try:
        custody = Custody.open(where)
    except CustodyError as exc:
        return [absent, CheckResult("custody: folder", False, str(exc))]
    results = [
        absent,
        _paired(release, custody, held),
        _custody_checksums(custody),
        _custody_splits(custody, held),
    ]
    if not all(r.passed for r in results):
        return results
    with merged(release, custody) as whole:
        for r in check_release(whole.root):
            results.append(CheckResult(f"custody: merged {r.name}", r.passed, r.detail))
    scan = leak_scan(release.root, custody)
    detail = f"{scan.files} public files x {scan.texts:,} withheld texts and {scan.ids:,} ids: " + (
        f"{len(scan.hits)} hits, e.g. {scan.hits[0][0]}" if scan.hits else "0 hits"
    )
    results.append(CheckResult("custody: no withheld text in a public file", not scan.hits, detail))
    return results


def _absent(release: Release, held: dict[str, dict[str, Any]]):
    """The public half holds no file, row count or card entry of a withheld split (checkable without custody)."""

    card = (release.root / "README.md").read_text(encoding="utf-8", errors="replace")
    found = [p.relative_to(release.root).as_posix() for s in held for p in release.root.rglob(f"*{s}-*")]
    found += [
        f"rows {c}/{s}" for c, n in (release.manifest.get("rows") or {}).items() for s in held if s in n
    ]
    found += [f"card split {s}" for s in held if f"split: {s}\n" in card]
    detail = (
        f"found: {', '.join(found[:3])}"
        if found
        else f"{', '.join(held) or 'nothing'} withheld; no file of it here"
    )
    return CheckResult("custody: withheld split absent from the public half", not found, detail)


def _paired(release: Release, custody: Custody, held: dict[str, dict[str, Any]]):
    ok = custody.withheld == held and custody.manifest.get("release") == release.name
    detail = (
        f"{custody.root.name} holds {', '.join(held) or 'nothing'} of {release.name}"
        if ok
        else f"{custody.root.name} holds {sorted(custody.withheld)} of {custody.manifest.get('release')!r}, the "
        f"release withholds {sorted(held)} ({release.name!r}): not this release's custody folder"
    )
    return CheckResult("custody: goes with the release", ok, detail)


def _custody_checksums(custody: Custody):
    recorded = custody.manifest.get("files") or {}
    actual = file_checksums(custody.root)
    bad = sorted(f for f in recorded.keys() | actual.keys() if recorded.get(f) != actual.get(f))
    return CheckResult(
        "custody: checksums",
        not bad,
        f"differ: {', '.join(bad[:3])}" if bad else f"{len(actual)} files match",
    )


def _custody_splits(custody: Custody, held: dict[str, dict[str, Any]]):
    files = custody.manifest.get("files") or {}
    problems = []
    for split, record in held.items():
        if record.get("sha256") != split_sha256(files, split):
            problems.append(f"{split}: its files do not match the withheld record's sha256")
        for config in config_names():
            shards = [
                custody.root / f for f in files if fnmatch.fnmatch(f, f"data/{config}/{split}-*.parquet")
            ]
            got = sum(pq.ParquetFile(f).metadata.num_rows for f in shards)
            if got != (record.get("rows") or {}).get(config, 0):
                problems.append(
                    f"{split}: {config} has {got} rows, the record says {record['rows'].get(config, 0)}"
                )
    detail = "; ".join(problems[:3]) or f"{len(held)} withheld split(s) match their public records"
    return CheckResult("custody: withheld splits", not problems, detail)


# --- release after the embargo -----------------------------------------------------------------------------


class EmbargoError(CustodyError):
    """A withheld split asked to be released before its embargo ends."""


def release_withheld(dataset: Path, version: str, custody_root: Path | None = None,
                     today: dt.date | None = None, wait_s: float = 0.0) -> dict[str, Any]:  # fmt: skip
    """Publish every withheld split whose embargo has ended into the release, as ``version`` (one writer: the
    release's write lock, as for an append); the custody folder keeps what is still withheld. The split's files
    are the custody files unchanged, so its SHA-256, and every score on it, stay what they were."""

    check_version(version)
    today = today or dt.date.today()
    Release.open(dataset)
    with folder_lock(
        dataset, f"ratio dataset release-withheld --version {version}", wait_s, "--wait SECONDS"
    ):
        release = Release.open(dataset)
        where = custody_root or custody_path(dataset)
        custody = Custody.open(where)
        held = withheld_of(release.manifest)
        if not held:
            raise CustodyError(f"{release.shown}: withholds no split; nothing to release", value=release.root)
        due = [s for s, r in held.items() if dt.date.fromisoformat(r["embargo_until"]) <= today]
        if not due:
            first = min(r["embargo_until"] for r in held.values())
            raise EmbargoError(
                f"{release.shown}: {', '.join(held)} is withheld until {first} (embargo); nothing was changed. "
                f"Run again on or after {first}",
                value=release.root,
            )
        if version == release.version or version in [
            v.get("version") for v in release.manifest.get("versions") or []
        ]:
            raise CustodyError(
                f"--version {version!r}: give a new version (the release is {release.version!r})"
            )
        with staged_dir(dataset, KIND, keep=KEEP) as stage:
            merge(release, custody, stage, due, version)
            checks = require_passing(stage, "the released release", dataset)
        _rewrite_custody(custody, release.name, {s: r for s, r in held.items() if s not in due})
    return {"version": version, "released": due, "checks": len(checks)}


def _rewrite_custody(custody: Custody, name: str, still: dict[str, dict[str, Any]]) -> None:
    """The custody folder with only the splits still withheld (and their works)."""
    with staged_dir(custody.root, CUSTODY_KIND) as stage:
        for rel in custody.files():
            keep = any(fnmatch.fnmatch(rel, f"data/*/{s}-*.parquet") for s in still) or (
                fnmatch.fnmatch(rel, WORKS_GLOB) and bool(still)
            )
            if keep:
                link_or_copy(custody.root / rel, stage / rel)
        write_json(stage / MANIFEST, custody_manifest(name, still, stage))


def write_custody_works(con: Any, path: Path) -> None:
    """The withheld splits' works (``withheld_works`` of the assembly) into the custody folder."""

    path.parent.mkdir(parents=True, exist_ok=True)
    con.execute("SET threads=1")
    con.execute(
        f"COPY (SELECT DISTINCT work_id FROM withheld_works ORDER BY work_id) TO {sql_str(path)} "
        "(FORMAT parquet, COMPRESSION zstd)"
    )


def describe(release: Release) -> list[str]:
    """One line per withheld split for a person: name, period, sizes and the embargo's end."""
    return [
        f"{s} ({r['period']}): {sum(r['queries'].values())} queries, {r['candidates']} candidates, withheld until "
        f"{r['embargo_until']}"
        for s, r in withheld_of(release.manifest).items()
    ]
