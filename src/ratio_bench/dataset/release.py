"""A release folder, opened once: the one reader of every command that takes a release.

:meth:`Release.open` is the only place that decides whether a folder is a release (its ``manifest.json`` says
``kind: release``), so scoring, training, silver, check, publish, the judge and the search index all refuse a
wrong folder with the same message and fix. Tables are read per config and split through
:meth:`Release.read`, which holds every shard to the column contract of :mod:`ratio_bench.dataset.contract`, so a
damaged or foreign shard is named instead of failing somewhere downstream. The identity that results, runs,
judged pools, model cards and training summaries record is :func:`manifest_sha256`, computed one way, so a model
card's hash can be looked up on the leaderboard.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from fnmatch import fnmatchcase
from pathlib import Path, PurePosixPath
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import yaml

from ratio_bench.core.errors import RatioError, shown
from ratio_bench.core.io import MANIFEST, manifest_kind, read_json_file
from ratio_bench.core.relations import RELATIONS
from ratio_bench.core.snapshots import is_snapshot
from ratio_bench.core.yamlio import load_yaml
from ratio_bench.dataset.contract import config_schema, corpus_split, ordered_splits, split_sha256


class DatasetError(RatioError, ValueError):
    """A release that lacks what a command needs (a split, a column), or a shard that cannot be read."""


class NotAReleaseError(DatasetError):
    """A folder given as a release that is none (missing, no readable manifest, another Ratio artefact)."""


def manifest_sha256(manifest: dict[str, Any]) -> str:
    """A release's identity: SHA-256 of its manifest with keys sorted (independent of the file's formatting)."""
    return hashlib.sha256(json.dumps(manifest, sort_keys=True).encode()).hexdigest()


def split_hashes(manifest: dict[str, Any]) -> dict[str, str]:
    """{split: sha256} of every split with queries in a release's manifest: a snapshot's as recorded when it was
    added, any other split's :func:`~ratio_bench.dataset.contract.split_sha256` over the manifest's checksums."""
    files = manifest.get("files")
    files = {k: v for k, v in files.items() if isinstance(k, str)} if isinstance(files, dict) else {}
    rows = manifest.get("rows") if isinstance(manifest.get("rows"), dict) else {}
    recorded = manifest.get("snapshots") if isinstance(manifest.get("snapshots"), dict) else {}
    out = {}
    for split in ordered_splits(s for s in recorded if is_snapshot(s)):
        if any(isinstance(rows.get(r), dict) and rows[r].get(split) for r in RELATIONS):
            sha = recorded.get(split, {}).get("sha256") if isinstance(recorded.get(split), dict) else None
            out[split] = sha if isinstance(sha, str) else split_sha256(files, split)
    return out


FIX = "build one with `ratio dataset build`, give the folder of one, or a Hub dataset as ORG/NAME[@REVISION]"


@dataclass(frozen=True)
class Release:
    """A release folder's manifest and shards; ``shown`` is how messages name it (errors about it carry its
    ``root`` as their value, so the command line puts the option that gave it in front); ``hub`` the dataset
    repository and commit it was downloaded from, recorded in the entries scored on it."""

    root: Path
    manifest: dict[str, Any]
    manifest_sha256: str
    shown: str
    hub: str | None = None  # ``ORG/NAME@<commit sha>`` when read from the Hub (:mod:`.hub_release`)

    @classmethod
    def open(cls, path: str | Path) -> Release:
        """The release at ``path``, or :class:`NotAReleaseError` saying why it is none."""
        root = Path(path)
        shown = str(path)
        if root.is_file():
            raise NotAReleaseError(f"{shown}: is a file, not a release folder; {FIX}", value=path)
        where = "" if root.is_dir() else ": the folder does not exist"
        try:
            manifest = read_json_file(root / MANIFEST)
        except (OSError, ValueError):
            raise NotAReleaseError(
                f"{shown}: not a Ratio release folder (no readable {MANIFEST}{where}); {FIX}", value=path
            ) from None
        kind = manifest_kind(manifest) if isinstance(manifest, dict) else None
        if kind != "release":
            what = (
                f"a Ratio {kind}"
                if isinstance(kind, str)
                else f"not a Ratio artefact ({MANIFEST} has no kind)"
            )
            raise NotAReleaseError(f"{shown}: is {what}, not a Ratio release folder; {FIX}", value=path)
        return cls(root, manifest, manifest_sha256(manifest), shown)

    @property
    def config(self) -> dict[str, Any]:
        """The build config recorded in the manifest."""
        config = self.manifest.get("config")
        return config if isinstance(config, dict) else {}

    @property
    def terms(self) -> dict[str, Any]:
        """The config's ``release:`` block (name, version, licence, may it be published)."""
        terms = self.config.get("release")
        return terms if isinstance(terms, dict) else {}

    @property
    def name(self) -> str:
        return str(self.manifest.get("name") or self.terms.get("name") or self.root.name)

    @property
    def version(self) -> str:
        return str(self.manifest.get("version") or self.terms.get("version") or "")

    @property
    def relations(self) -> tuple[str, ...]:
        """The relations that have queries in some split."""
        return tuple(r for r in RELATIONS if self.splits(r))

    @property
    def snapshots(self) -> dict[str, dict[str, Any]]:
        """The manifest's snapshot splits (name -> period, dates, queries, candidates, sha256, version), in time
        order; entries whose name is no snapshot name are ignored (the manifest is read, not trusted)."""
        recorded = self.manifest.get("snapshots")
        if not isinstance(recorded, dict):
            return {}
        return {s: recorded[s] for s in ordered_splits(recorded) if s in recorded and is_snapshot(s)}

    @property
    def all_splits(self) -> tuple[str, ...]:
        """Every split a release may have, in reading order: train, validation, test, snapshots, silver."""
        return ordered_splits(self.snapshots)

    def splits(self, config: str) -> tuple[str, ...]:
        """The splits of ``config`` that have shards, in the release's order (train, validation, test, the
        snapshots in time order, silver)."""
        return tuple(s for s in self.all_splits if self.shards(config, s))

    def split_hashes(self) -> dict[str, str]:
        """{split: sha256} of every split with queries (see :func:`split_hashes`)."""
        return split_hashes(self.manifest)

    def own_files(self) -> list[str]:
        """The files the manifest lists (relative paths), each checked to be a plain file inside the folder.

        The manifest is read, not trusted: a path that leaves the folder, or that is a symlink, is refused.
        """
        files = self.manifest.get("files")
        if not isinstance(files, dict):
            raise DatasetError(
                f"{self.shown}: {MANIFEST} lists no files; rebuild it with `ratio dataset build`",
                value=self.root,
            )
        out = []
        for rel in sorted(files):
            path = PurePosixPath(rel) if isinstance(rel, str) else None
            if path is None or path.is_absolute() or ".." in path.parts or not path.parts:
                raise DatasetError(
                    f"{self.shown}: {MANIFEST} lists {rel!r}, a path outside the release", value=self.root
                )
            link = next((p for p in (path, *path.parents[:-1]) if (self.root / p).is_symlink()), None)
            if link is not None:
                raise DatasetError(
                    f"{self.shown}: {link} is a symlink; a release holds only its own files: replace it with "
                    "what it points to, or rebuild the release with `ratio dataset build`",
                    value=self.root,
                )
            out.append(rel)
        return out

    def shards(self, config: str, split: str | None = None) -> list[Path]:
        """The Parquet files of ``config`` (of one ``split``, or of all) that the manifest lists, sorted.

        Files the manifest does not list are not the release's (a stray copy, a half-written run) and are never
        read; a listed one that is missing fails the read. Releases whose manifest lists no files are read by the
        folder.
        """
        pattern = f"{split}-*.parquet" if split else "*.parquet"
        listed = self.manifest.get("files")
        if not isinstance(listed, dict):
            return sorted((self.root / "data" / config).glob(pattern))
        wanted = f"data/{config}/{pattern}"
        inside = (f for f in listed if isinstance(f, str) and ".." not in f.split("/"))
        return sorted(self.root / f for f in inside if fnmatchcase(f, wanted))

    def read(self, config: str, split: str, columns: Sequence[str] | None = None) -> pa.Table:
        """``config``'s ``split`` as one table (no rows when it has no shards), every shard schema-checked.

        ``columns`` (default: the config's whole contract) must be in each shard with the contract's types.
        """
        contract = config_schema(config)
        wanted = list(columns) if columns is not None else contract.names
        expected = pa.schema(
            [contract.field(c) if c in contract.names else pa.field(c, pa.string()) for c in wanted]
        )
        tables = []
        for f in self.shards(config, split):
            try:
                schema = pq.read_schema(f)
                self._check_schema(f, schema, wanted, contract)
                tables.append(pq.read_table(f, columns=wanted))
            except (OSError, pa.ArrowException) as e:
                raise DatasetError(
                    f"{f}: not a readable Parquet shard ({' '.join(str(e).split())}); the release is damaged: "
                    "rebuild it with `ratio dataset build` (or see what `ratio dataset check` says)"
                ) from None
        if not tables:
            return expected.empty_table()
        return pa.concat_tables(tables) if len(tables) > 1 else tables[0]

    def queries(self, relation: str, split: str, columns: Sequence[str] | None = None) -> pa.Table:
        """One relation's queries (with their gold) of one split."""
        return self.read(relation, split, columns)

    def corpus(self, split: str, columns: Sequence[str] | None = None) -> pa.Table:
        """The candidate corpus that ``split``'s queries retrieve from (silver retrieves from test's)."""
        return self.read("corpus", corpus_split(split), columns)

    @staticmethod
    def _check_schema(path: Path, schema: pa.Schema, wanted: list[str], contract: pa.Schema) -> None:
        for column in wanted:
            if column not in schema.names:
                raise DatasetError(
                    f"{path}: has no column {column!r} (it has {', '.join(schema.names)}); the release is damaged "
                    "or from another build: rebuild it with `ratio dataset build`"
                )
            if column in contract.names:
                want, got = contract.field(column).type, schema.field(column).type
                if got != want and not (_stringy(got) and _stringy(want)):
                    raise DatasetError(
                        f"{path}: column {column!r} is {got}, the release schema says {want}; rebuild the release "
                        "with `ratio dataset build`"
                    )


def _stringy(t: pa.DataType) -> bool:
    return pa.types.is_string(t) or pa.types.is_large_string(t)


CARD = "README.md"
MAX_CARD_BYTES = 4 * 1024 * 1024  # a release card with every snapshot's table is tens of KB


def card_data_files(release: Release) -> list[str]:
    """The ``data_files`` patterns the release card's ``configs:`` declares, each confined to the folder.

    ``datasets.load_dataset`` (mteb's stock loader) follows whatever the card says, so a card from a folder we
    did not write is read, not trusted: a pattern that is absolute, holds ``..``, a URL or a backslash, or that
    matches a file outside the folder or reached through a symlink is a DatasetError naming the card and the
    field; a card without configs declares nothing to load and is refused too.
    """
    card = release.root / CARD
    where = f"{release.shown}/{CARD}"
    if card.is_symlink() or not card.is_file():
        raise DatasetError(f"{where}: missing or a symlink; {FIX}", value=release.root)
    if card.stat().st_size > MAX_CARD_BYTES:
        raise DatasetError(
            f"{where}: over {MAX_CARD_BYTES:,} bytes, not a card Ratio wrote", value=release.root
        )
    header = _card_yaml(card.read_text(encoding="utf-8", errors="replace"), where, release.root)
    configs = header.get("configs") if isinstance(header, dict) else None
    if not isinstance(configs, list) or not configs:
        raise DatasetError(
            f"{where}: configs: the card declares no configs to load; {FIX}", value=release.root
        )
    patterns = []
    for i, config in enumerate(configs):
        files = config.get("data_files") if isinstance(config, dict) else None
        entries = files if isinstance(files, list) else [files]
        for j, entry in enumerate(entries):
            paths = entry.get("path") if isinstance(entry, dict) else entry
            for pattern in paths if isinstance(paths, list) else [paths]:
                _confine(release, pattern, f"{where}: configs[{i}].data_files[{j}]")
                patterns.append(pattern)
    return patterns


def _card_yaml(text: str, where: str, root: Path) -> Any:
    if not text.startswith("---\n") or "\n---" not in text[4:]:
        raise DatasetError(f"{where}: has no YAML header; {FIX}", value=root)
    try:
        return load_yaml(text[4 : text.index("\n---", 4)])
    except yaml.YAMLError as exc:  # YAMLLimitError too
        raise DatasetError(f"{where}: unreadable YAML header ({type(exc).__name__})", value=root) from None


def _confine(release: Release, pattern: Any, field: str) -> None:
    """One ``data_files`` pattern: relative, inside the folder, and matching only plain files inside it."""
    bad = not isinstance(pattern, str) or not pattern or "\\" in pattern or ":" in pattern
    path = PurePosixPath(pattern) if isinstance(pattern, str) else None
    if bad or path.is_absolute() or ".." in path.parts or pattern.startswith("~"):
        raise DatasetError(
            f"{field}: {shown(pattern)} is not a path inside the release; a card may point only at its own "
            f"files; {FIX}",
            value=release.root,
        )
    root = release.root.resolve()
    for match in release.root.glob(pattern):
        rel = match.relative_to(release.root)
        link = next((p for p in (rel, *rel.parents[:-1]) if (release.root / p).is_symlink()), None)
        if link is not None or not match.resolve().is_relative_to(root):
            raise DatasetError(
                f"{field}: {shown(pattern)} reaches {link or rel}, a symlink or a file outside the release; a "
                f"card may point only at its own files; {FIX}",
                value=release.root,
            )
