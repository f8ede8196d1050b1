"""``ratio dataset append``: add the newest period(s) from new corpus files to a release, as a new version.

A published snapshot must never change (scores on it stay comparable, its sha256 stays what entries recorded),
so an append mines only the new files, with the release's own lexicon, routes them through the same assembly
stages, and adds only periods strictly after the release's last snapshot: a row dated into an existing or earlier
period is late for a closed period and counted, never added. New rows of works, (query, gold) pairs or queries the
release already holds are excluded and counted; its works are also those of its works index (every placed work of
the corpus files each version read, sampled or not), so a new copy of an already public work stays out as in a
rebuild, and the append adds the new files' works to the index. Every existing file is carried over byte for byte (hard links
where the filesystem allows); only README.md and manifest.json are rewritten, and the release is swapped in only
after ``ratio dataset check`` passes on it (:func:`ratio_bench.core.io.staged_dir`).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import fnmatch
import json
from contextlib import nullcontext
from pathlib import Path
from typing import Any

from ratio_bench.core.errors import RatioError, field_name, shown
from ratio_bench.core.io import MANIFEST, folder_lock, link_or_copy, staged_dir, write_json
from ratio_bench.core.relations import RELATIONS
from ratio_bench.core.snapshots import parse_split
from ratio_bench.corpus.readers import ReaderSettings
from ratio_bench.dataset.assemble import assemble
from ratio_bench.dataset.build import WAIT_FLAG, require_custody, snapshot_manifest
from ratio_bench.dataset.card import snapshot_report, snapshots_section, updated_card
from ratio_bench.dataset.check import check_release, require_passing
from ratio_bench.dataset.config import BuildConfig, Split, parse_config, with_withhold
from ratio_bench.dataset.contract import (
    KEEP,
    KIND,
    file_checksums,
    sha256_file,
)
from ratio_bench.dataset.custody import (
    CUSTODY_KIND,
    Custody,
    CustodyError,
    custody_manifest,
    custody_path,
    split_rows,
    withheld_of,
    withheld_record,
    write_custody_works,
)
from ratio_bench.dataset.custody import WORKS_GLOB as CUSTODY_WORKS
from ratio_bench.dataset.identity import check_version
from ratio_bench.dataset.layout import WORKS_GLOB, works_file, write_data, write_works
from ratio_bench.dataset.release import Release
from ratio_bench.lexicon import Lexicon
from ratio_bench.mining.run import run_mining
from ratio_bench.mining.step import MiningSettings

REWRITTEN = ("README.md", MANIFEST)  # the only files of a release an append replaces


class AppendError(RatioError, ValueError):
    """An append that cannot be made (bad version, other lexicon, a release without snapshots)."""


def _append_config(release: Release, version: str, through: dt.date | None = None) -> BuildConfig:
    """The release's build config, its test split open-ended and its snapshots starting after the last one and
    ending at ``through`` (the last day the new files are complete: a period is closed once appended, so a month
    the files cover only in part must wait for the next append)."""
    if version == release.version:
        raise AppendError(
            f"--version {version!r}: give a new version (the release is {release.version!r}), e.g. "
            f"{release.version}.1"
        )
    seen = [v["version"] for v in release.manifest.get("versions") or []]
    if version in seen:
        raise AppendError(
            f"--version {version!r}: the release already has that version ({', '.join(map(str, seen))})"
        )
    cfg = parse_config(
        release.config, f"{release.shown}/{MANIFEST}: config", release.root / MANIFEST, Path.cwd()
    )
    cut = [
        p for s in (*release.snapshots, *withheld_of(release.manifest)) if (p := parse_split(s)) is not None
    ]
    last = max(cut, default=None)  # a withheld period is closed too: the append starts after it
    if cfg.snapshots is None or last is None:
        raise AppendError(
            f"{release.shown}: has no snapshot splits to append to; rebuild it with a `snapshots:` block in its "
            "config (see the README, Snapshots)",
            value=release.root,
        )
    test = cfg.partition("test")
    if through is not None and through < last.next().start:
        raise AppendError(
            f"--through {through}: the release's snapshots already run to {last.end}; give a later day",
            value=through,
        )
    snapshots = dataclasses.replace(cfg.snapshots, start=last.next().start, end=through)
    splits = [*cfg.splits[:-1], Split("test", test.start, None)]
    return dataclasses.replace(cfg, splits=splits, snapshots=snapshots, version=version)


def append_release(
    dataset: Path,
    corpus: list[Path],
    version: str,
    work_dir: Path | None = None,
    progress: bool = True,
    through: dt.date | None = None,
    wait_s: float = 0.0,
    withhold: str | None = None,
    custody: Path | None = None,
) -> dict[str, Any]:
    """Add the periods after the release's last snapshot from ``corpus`` as ``version``; returns the report
    (``snapshots_added`` empty: nothing new, the release is left unchanged).

    The release's write lock is held from reading it to the swap (:func:`folder_lock`): a second append, build or
    silver run on it is refused naming this one (or waits ``wait_s``), so no version is swapped over.
    """
    check_version(version)
    Release.open(dataset)  # a folder that is no release is refused before a lock file is made beside it
    with folder_lock(dataset, f"ratio dataset append --version {version}", wait_s, WAIT_FLAG):
        return _append(dataset, corpus, version, work_dir, progress, through, withhold, custody)


MANIFEST_FIELDS = {  # field -> (type, what it must be), for the fields an append reads and extends
    "versions": (list, "a list of {version, snapshots_added, ...} records"),
    "rows": (dict, "a mapping of config -> split -> row count"),
    "snapshots": (dict, "a mapping of snapshot split -> record"),
    "snapshots_left_out": (list, "a list"),
    "lexicon_sha256": (str, "the lexicon's sha256"),
}


def check_manifest(release: Release) -> None:
    """The manifest fields an append uses, validated before any is used (the manifest is read, not trusted):
    a damaged one is a one-line error naming manifest.json and the field."""
    where = f"{release.shown}/{MANIFEST}"
    for field, (kind, what) in MANIFEST_FIELDS.items():
        value = release.manifest.get(field)
        if value is not None and not isinstance(value, kind):
            raise AppendError(
                f"{where}: {field}: must be {what}, got {shown(value)}; the manifest is damaged: restore it or "
                "rebuild the release",
                value=release.root,
            )
    for i, entry in enumerate(release.manifest.get("versions") or []):
        if not isinstance(entry, dict) or not isinstance(entry.get("version"), str):
            raise AppendError(
                f"{where}: versions[{i}]: must be a record with a version string, got {shown(entry)}; the "
                "manifest is damaged: restore it or rebuild the release",
                value=release.root,
            )
    for config, splits in (release.manifest.get("rows") or {}).items():
        if not isinstance(splits, dict):
            raise AppendError(
                f"{where}: rows.{field_name(config)}: must be a mapping of split -> row count, got "
                f"{shown(splits)}; the manifest is damaged: restore it or rebuild the release",
                value=release.root,
            )


def _require_passing_before(release: Release) -> None:
    """An append extends a release that passes ``ratio dataset check``; one that fails it is refused with the failures
    (an append would carry the damage into the new version, and its own check would fail at the end)."""
    failed = [c for c in check_release(release.root) if not c.passed]
    if failed:
        raise AppendError(
            f"{release.shown}: fails `ratio dataset check` ({'; '.join(f'{c.name}: {c.detail}' for c in failed)}); "
            f"nothing was appended. Run `ratio dataset check {release.shown}`, and restore or rebuild the release",
            value=release.root,
        )


def _appendable(release: Release, cfg: BuildConfig) -> list[Path]:
    """The release's works indexes, after checking that the append can keep to the release: the same lexicon,
    and a works index to keep already public works out of the new snapshots."""
    lexicon = Lexicon.load(cfg.lexicon)
    if lexicon.fingerprint() != release.manifest.get("lexicon_sha256"):
        raise AppendError(
            f"{cfg.lexicon}: lexicon sha256 {lexicon.fingerprint()} is not the release's "
            f"{release.manifest.get('lexicon_sha256')}; an append mines with the lexicon the release was built with",
            value=cfg.lexicon,
        )
    works = [release.root / f for f in release.own_files() if fnmatch.fnmatch(f, WORKS_GLOB)]
    if not works:
        raise AppendError(
            f"{release.shown}: records no works index ({WORKS_GLOB}), which an append needs to keep copies of "
            "already public works out of the new snapshots; rebuild the release with this version of ratio",
            value=release.root,
        )
    return works


def _append(
    dataset: Path,
    corpus: list[Path],
    version: str,
    work_dir: Path | None,
    progress: bool,
    through: dt.date | None,
    withhold: str | None = None,
    custody_root: Path | None = None,
) -> dict[str, Any]:
    release = Release.open(dataset)  # read again under the lock: the release as it is now
    check_manifest(release)
    cfg = _append_config(release, version, through)
    if withhold is not None:
        cfg = with_withhold(cfg, withhold)
    works = _appendable(release, cfg)
    _require_passing_before(release)
    custody = _custody_of(release, custody_root, cfg)
    root = release.root.resolve()
    work = work_dir or root.parent / f"{root.name}.work" / f"append-{version}"
    run_mining(
        corpus,
        work / "mined",
        MiningSettings(lexicon_dir=str(cfg.lexicon), reader=ReaderSettings(), progress=progress),
    )
    known, works = _known(release, custody, works)
    asm = assemble(cfg, work / "mined", work / "duckdb_tmp", known=known, known_works=works)
    snaps = asm.report["snapshots"]
    excluded = _excluded(asm)
    held = asm.report.get("custody", {}).get("withheld", [])
    added = [s for s in snaps["periods"] if s not in held]
    report = {
        "version": version,
        "snapshots_added": added,
        "excluded": excluded,
        "left_out": snaps["left_out"],
        "withheld": held,
    }
    if not added and not held:
        asm.con.close()
        return report
    old_manifest = release.manifest
    custody_dir = custody.root if custody is not None else custody_path(dataset)
    with (
        staged_dir(dataset, KIND, keep=KEEP) as stage,
        staged_dir(custody_dir, CUSTODY_KIND) if held or custody else nullcontext() as cstage,
    ):
        for rel in release.own_files():
            if rel not in REWRITTEN:
                link_or_copy(release.root / rel, stage / rel)
        new_counts = write_data(asm, stage, splits=added)
        records = withheld_of(old_manifest)
        if cstage is not None:
            records |= _withheld_into(asm, custody, cstage, held, cfg, version)
        history = old_manifest.get("versions") or [
            {"version": release.version, "snapshots_added": list(release.snapshots)}
        ]
        held_works = (
            [custody.root / f for f in custody.files() if fnmatch.fnmatch(f, CUSTODY_WORKS)]
            if custody
            else []
        )
        write_works(asm, stage / works_file(len(history)), exclude=held_works)
        asm.con.close()
        old_rows = old_manifest.get("rows") or {}
        counts = {c: dict(old_rows.get(c, {})) | new_counts.get(c, {}) for c in {**old_rows, **new_counts}}
        files = file_checksums(stage)
        new = snapshot_manifest(snaps | {"periods": {k: v for k, v in snaps["periods"].items() if k not in held}},
                                files, version)  # fmt: skip
        entry = {
            "version": version,
            "snapshots_added": added,
            **({"withheld_added": held} if held else {}),
            "corpus_files": [{"name": p.name, "sha256": sha256_file(p)} for p in _files(corpus)],
            "excluded": excluded,
        }
        manifest = old_manifest | {
            "version": version,
            "rows": counts,
            "snapshots": {**release.snapshots, **new["snapshots"]},
            "snapshots_left_out": [
                *(old_manifest.get("snapshots_left_out") or []),
                *new["snapshots_left_out"],
            ],
            "versions": [*history, entry],
        }
        if records:
            manifest["withheld"] = records
        _write_card(release, manifest, snaps, counts, stage)
        manifest["files"] = file_checksums(stage)
        write_json(stage / MANIFEST, json.loads(json.dumps(manifest, default=str)))
        checks = require_passing(stage, "the appended release", dataset)
        if cstage is not None:
            write_json(cstage / MANIFEST, custody_manifest(release.name, records, cstage))
            checks += require_custody(stage, cstage, dataset)
    write_json(work / "append_report.json", report)
    return report | {"checks": len(checks)}


def _write_card(release: Release, manifest: dict[str, Any], snaps: dict[str, Any],
                counts: dict[str, dict[str, int]], stage: Path) -> None:  # fmt: skip
    """The new version's card: the old one with its header, Snapshots section and title brought up to date."""
    old = (release.root / "README.md").read_text(encoding="utf-8")
    section = snapshots_section(snapshot_report(release.root, manifest, snaps))
    (stage / "README.md").write_text(
        updated_card(old, counts, stage, section, manifest["version"]), encoding="utf-8"
    )


def _known(release: Release, custody: Custody | None, works: list[Path]) -> tuple[list[Path], list[Path]]:
    """The shards and works indexes whose rows no new period may hold: the release's, and its custody folder's
    (the withheld rows and works are the release's too)."""
    known = [f for config in (*RELATIONS, "corpus") for f in release.shards(config)]
    if custody is None:
        return known, works
    own = [f for f in custody.files() if f.startswith("data/") and f.split("/")[1] in (*RELATIONS, "corpus")]
    held = [custody.root / f for f in custody.files() if fnmatch.fnmatch(f, CUSTODY_WORKS)]
    return known + [custody.root / f for f in own], works + held


def _excluded(asm) -> dict[str, int]:
    """What the new files held that no new period takes, counted by reason."""
    snaps = asm.report["snapshots"]
    excluded = dict(asm.con.execute("SELECT reason, n FROM append_excluded").fetchall())
    placement = snaps["pairs_by_placement"]
    late = asm.con.execute("SELECT count(*) FROM pairs_dedup WHERE partition <> 'test'").fetchone()[0]
    return excluded | {
        "late_for_closed_period": late + placement.get("before_start", 0),
        "not_in_a_period": placement.get("not_in_a_period", 0),
        "duplicate_in_new_files": asm.report["pairs_duplicate_removed"],
        "unplaced": asm.report["pairs_unplaced_removed"],
    }


def _custody_of(release: Release, given: Path | None, cfg: BuildConfig) -> Custody | None:
    """The release's custody folder: required when it withholds a split (its rows and works must stay out of the
    new periods), else only when one is there (or given)."""
    where = given or custody_path(release.root)
    if withheld_of(release.manifest) or given is not None or Path(where).exists():
        try:
            return Custody.open(where)
        except CustodyError as e:
            raise AppendError(
                f"--custody {where}: {e}; an append to a release that withholds a split needs its custody folder",
                value=where,
            ) from None
    return None


def _withheld_into(asm, custody: Custody | None, cstage: Path, held: list[str], cfg: BuildConfig,
                   version: str) -> dict[str, Any]:  # fmt: skip
    """The custody folder of the new version in ``cstage``: the old one's files and the newly withheld splits'
    shards and works; returns the new splits' public records."""
    for rel in custody.files() if custody is not None else []:
        link_or_copy(custody.root / rel, cstage / rel)
    if not held:
        return {}
    counts = write_data(asm, cstage, splits=held)
    write_custody_works(asm.con, cstage / f"reports/works-withheld-{version}.parquet")
    files = file_checksums(cstage)
    rows = split_rows(counts, held)
    periods = asm.report["snapshots"]["periods"]
    return {
        s: withheld_record(periods[s], files, s, version, rows[s], cfg.custody.embargo_days) for s in held
    }


def _files(corpus: list[Path]) -> list[Path]:
    return sorted(
        {p for c in corpus for p in (sorted(x for x in c.rglob("*") if x.is_file()) if c.is_dir() else [c])}
    )
