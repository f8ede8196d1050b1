"""Opening a release folder: the one check that a folder is a Ratio release, shared by every command reading one.

Scoring, training, silver, the search service's candidates, judging, ``check`` and ``publish`` all open a
release here, so a folder that is not one gets the same one-line message everywhere, and the identity that
results, runs, judged pools, model cards and training summaries record (the manifest's SHA-256) is computed one
way: a model card's hash can be looked up on the leaderboard.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ratio_bench.errors import RatioError
from ratio_bench.io import MANIFEST, artefact_kind, read_manifest


class ReleaseError(RatioError, ValueError):
    """A folder given as a release that is not one."""


def manifest_sha256(manifest: dict[str, Any]) -> str:
    """A release's identity: SHA-256 of its manifest with keys sorted (independent of the file's formatting)."""
    return hashlib.sha256(json.dumps(manifest, sort_keys=True).encode()).hexdigest()


@dataclass(frozen=True)
class Release:
    root: Path
    manifest: dict[str, Any]

    @property
    def release_config(self) -> dict[str, Any]:
        return (self.manifest.get("config") or {}).get("release") or {}

    @property
    def name(self) -> str:
        return self.manifest.get("name") or self.release_config.get("name", self.root.name)

    @property
    def version(self) -> str:
        return self.manifest.get("version") or self.release_config.get("version", "")

    @property
    def manifest_sha256(self) -> str:
        return manifest_sha256(self.manifest)


def open_release(root: str | Path, flag: str = "--dataset") -> Release:
    """The release at ``root``, or a :class:`ReleaseError` naming ``flag`` (empty for a positional argument),
    the folder and the fix."""
    root = Path(root)
    where = f"{flag} {root}" if flag else str(root)
    manifest = read_manifest(root)
    if manifest is None:
        raise ReleaseError(
            f"{where}: not a Ratio release folder (no readable {MANIFEST}); build one with `ratio build`"
        )
    if artefact_kind(root) != "release":
        raise ReleaseError(
            f"{where}: not a Ratio release folder ({MANIFEST} says kind {manifest.get('kind')!r}); "
            "give a folder written by `ratio build`"
        )
    return Release(root, manifest)
