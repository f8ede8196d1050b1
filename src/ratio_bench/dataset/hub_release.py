"""A release named on the Hugging Face Hub (``ORG/NAME[@REV]``) as a local, checked release folder.

Every command that takes a release (``ratio score``, ``index``, ``analyze``, ``train``, the mteb tasks, the
leaderboard worker) opens it through :func:`open_release`, so a folder and a Hub name are told apart one way: a
path that exists is a folder; text shaped ``ORG/NAME[@REV]`` that names no folder here is a Hub dataset
repository; anything else is a folder that is missing (and the error says which reading was taken).

A Hub release is downloaded once per commit with ``huggingface_hub`` (the tag or branch resolved to its commit sha
first, so the figures are pinned to bytes that cannot move) into ``$RATIO_CACHE/releases/ORG/NAME/<sha>``: the
manifest first, then exactly the files it lists (nothing else the repository holds), then the release's own
``ratio dataset check`` before the folder is put in place. An entry scored on it records ``ORG/NAME@<sha>`` beside the
manifest hash. A later run at the same commit reads the cache without the network (a tag seen before is looked
up in the cache's refs when the Hub is offline).
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path

from ratio_bench.core import extras
from ratio_bench.core.errors import RatioError
from ratio_bench.core.io import MANIFEST, atomic_open, prepare_output_dir, staged_dir
from ratio_bench.dataset.check import check_release
from ratio_bench.dataset.contract import KIND
from ratio_bench.dataset.release import CARD, NotAReleaseError, Release

hf_constants = extras.lazy("huggingface_hub.constants")
hf_errors = extras.lazy("huggingface_hub.errors")
huggingface_hub = extras.lazy("huggingface_hub")

# ORG/NAME as the Hub spells repository ids (letters, digits, '-', '_', '.'), then an optional @REVISION
HUB_NAME = re.compile(
    r"(?P<repo>[A-Za-z0-9][\w.-]{0,95}/[A-Za-z0-9][\w.-]{0,95})(?:@(?P<rev>[\w./-]{1,200}))?"
)
SHA = re.compile(r"[0-9a-f]{40}")
FORM = "a release folder, or a Hub dataset as ORG/NAME[@REVISION]"
MAX_HEAD_BYTES = 16 << 20  # the manifest and the card, read before anything else is trusted
MAX_RELEASE_BYTES = 64 << 30  # a paper-scale release is a few GB; $RATIO_MAX_RELEASE_BYTES raises the bound
DISK_MARGIN = 1.05  # free space asked for beyond the files themselves


class HubReleaseError(NotAReleaseError):
    """A Hub release that cannot be reached, resolved, downloaded or that fails its own checks."""


@dataclass(frozen=True)
class HubRef:
    """``ORG/NAME[@REVISION]`` of a dataset repository holding a release."""

    repo_id: str
    revision: str | None

    def __str__(self) -> str:
        return self.repo_id + (f"@{self.revision}" if self.revision else "")


def hub_ref(text: str | os.PathLike) -> HubRef | None:
    """The Hub name ``text`` spells, or None when it is a local path: an existing path always wins, and so does
    anything that cannot be a repository id (``./x``, ``/abs``, ``~``, more than one ``/`` before ``@``)."""
    text = os.fspath(text)
    if Path(text).expanduser().exists():
        return None
    match = HUB_NAME.fullmatch(text)
    if match is None or ".." in match["repo"] or match["repo"].endswith((".", "-")):
        return None
    return HubRef(match["repo"], match["rev"])


def cache_root() -> Path:
    """Where Hub releases are kept: ``$RATIO_CACHE/releases`` (default ``~/.cache/ratio/releases``)."""
    return Path(os.environ.get("RATIO_CACHE", Path.home() / ".cache" / "ratio")) / "releases"


def open_release(text: str | os.PathLike) -> Release:
    """The release ``text`` names: a local folder (:meth:`Release.open`), or a Hub dataset fetched, pinned and
    checked by :func:`fetch` (its :attr:`Release.hub` is ``ORG/NAME@<sha>``)."""
    ref = hub_ref(text)
    if ref is None:
        return Release.open(text)
    return fetch(ref, shown=os.fspath(text))


def release_folder(text: str | os.PathLike) -> Path:
    """The local folder of the release ``text`` names (a Hub release: its checked copy in the cache), for the
    commands whose work reads a folder."""
    return open_release(text).root


def fetched_or_path(text: str | os.PathLike) -> Path:
    """A Hub name's checked copy (fetched now), or ``text`` as a path left for the command to open (after its
    own usage checks)."""
    return release_folder(text) if hub_ref(text) else Path(text)


def fetch(ref: HubRef, shown: str | None = None) -> Release:
    """``ref``'s release in the cache (downloaded and checked on first use), pinned to its commit."""
    shown = shown or str(ref)
    sha = _resolve_sha(ref, shown)
    folder = cache_root() / ref.repo_id / sha
    if not (folder / MANIFEST).is_file():
        _download(ref, sha, folder, shown)
    release = Release.open(folder)
    return replace(release, shown=f"{ref.repo_id}@{sha[:12]}", hub=f"{ref.repo_id}@{sha}")


def download(text: str, out: Path) -> Release:
    """``ratio dataset download``: the Hub release ``text`` (fetched through the cache) copied into ``out`` (a new
    or empty folder, or a release folder, replaced atomically; nothing else of the user's is touched)."""
    ref = hub_ref(text)
    if ref is None:
        raise HubReleaseError(
            f"{text}: is a local path or not a Hub name; give a Hub dataset as ORG/NAME[@REVISION]",
            value=text,
        )
    prepare_output_dir(
        out, KIND
    )  # a folder that may not be replaced is refused before anything is downloaded
    release = fetch(ref, text)
    with staged_dir(out, KIND) as stage:
        for rel in [*release.own_files(), MANIFEST, CARD]:
            if (release.root / rel).is_file():
                (stage / rel).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(release.root / rel, stage / rel)
    return release


def _refs_file(ref: HubRef) -> Path:
    return cache_root() / ref.repo_id / "refs" / (ref.revision or "main").replace("/", "%2F")


def _resolve_sha(ref: HubRef, shown: str) -> str:
    """The commit ``ref`` names now (a full sha as given; offline, the commit seen last for that tag)."""
    if ref.revision and SHA.fullmatch(ref.revision):
        return ref.revision

    refs = _refs_file(ref)
    seen = refs.read_text(encoding="utf-8").strip() if refs.is_file() else ""
    if hf_constants.HF_HUB_OFFLINE and SHA.fullmatch(seen):
        return seen  # offline (HF_HUB_OFFLINE): the commit this tag or branch named when last fetched
    with _hub_errors(shown):
        sha = huggingface_hub.HfApi().repo_info(ref.repo_id, repo_type="dataset", revision=ref.revision).sha
    refs.parent.mkdir(parents=True, exist_ok=True)
    with atomic_open(refs, "w", encoding="utf-8") as fh:
        fh.write(sha + "\n")
    return sha


def _download(ref: HubRef, sha: str, folder: Path, shown: str) -> None:
    """The manifest and card, then the files the manifest lists, at ``sha`` into a staging folder; checked with
    ``ratio dataset check``; then renamed into place (a killed download leaves only a staging folder behind)."""

    folder.parent.mkdir(parents=True, exist_ok=True)
    stage = Path(tempfile.mkdtemp(prefix=f".{sha}.", suffix=".partial", dir=folder.parent))
    try:
        with _hub_errors(shown):
            get = dict(repo_type="dataset", revision=sha, local_dir=stage)
            _check_sizes(ref, sha, [MANIFEST, CARD], MAX_HEAD_BYTES, stage, shown)
            huggingface_hub.snapshot_download(ref.repo_id, allow_patterns=[MANIFEST, CARD], **get)
            try:
                files = Release.open(stage).own_files()  # paths inside the folder, no symlinks
            except NotAReleaseError:
                raise HubReleaseError(
                    f"{shown}: the dataset repository {ref.repo_id} at {sha[:12]} holds no Ratio release "
                    f"(its {MANIFEST} is missing or of another kind); give {FORM}",
                    value=shown,
                ) from None
            _check_sizes(ref, sha, files, max_release_bytes(), stage, shown)
            huggingface_hub.snapshot_download(ref.repo_id, allow_patterns=files, **get)
        shutil.rmtree(stage / ".cache", ignore_errors=True)  # huggingface_hub's download bookkeeping
        failed = [c for c in check_release(stage) if not c.passed]
        if failed:
            raise HubReleaseError(
                f"{shown}: the release at {ref.repo_id}@{sha[:12]} fails `ratio dataset check` ("
                + "; ".join(f"{c.name}: {c.detail}" for c in failed[:3])
                + "); not used. Tell its maintainers, or give another revision",
                value=shown,
            )
        try:
            os.replace(stage, folder)
        except OSError:
            if not (folder / MANIFEST).is_file():
                raise
            # another process put the same commit in place first: its copy is the same checked bytes
    finally:
        if stage.exists():
            shutil.rmtree(stage, ignore_errors=True)


def max_release_bytes() -> int:
    """The bound on a release's files: ``$RATIO_MAX_RELEASE_BYTES`` (bytes) or 64 GiB."""
    text = os.environ.get("RATIO_MAX_RELEASE_BYTES", "").strip()
    if not text:
        return MAX_RELEASE_BYTES
    if not text.isdigit() or int(text) <= 0:
        raise HubReleaseError(
            f"RATIO_MAX_RELEASE_BYTES={text!r}: give a positive number of bytes (unset: 64 GiB)", value=text
        )
    return int(text)


def _check_sizes(ref: HubRef, sha: str, paths: list[str], bound: int, stage: Path, shown: str) -> None:
    """Refuse, before a byte is downloaded, files whose sizes (as the Hub lists them) sum over ``bound`` or over
    the free space where they would go: a repository we did not write decides neither our disk nor our wait."""

    infos = huggingface_hub.HfApi().get_paths_info(ref.repo_id, paths, repo_type="dataset", revision=sha)
    total = sum(int(getattr(i, "size", 0) or 0) for i in infos)
    where = f"{ref.repo_id}@{sha[:12]}"
    if total > bound:
        raise HubReleaseError(
            f"{shown}: {where} lists {total:,} bytes in {len(infos)} files, over the bound of {bound:,}; not "
            "downloaded. If you trust it, raise RATIO_MAX_RELEASE_BYTES",
            value=shown,
        )
    free = shutil.disk_usage(stage).free
    if total * DISK_MARGIN > free:
        raise HubReleaseError(
            f"{shown}: {where} needs {total:,} bytes and {stage.parent} has {free:,} free; not downloaded. "
            "Free some space, or point RATIO_CACHE at a larger disk",
            value=shown,
        )


@contextmanager
def _hub_errors(shown: str) -> Iterator[None]:
    """Hub and network failures as one line naming the text, the endpoint and both readings of it."""

    endpoint = hf_constants.ENDPOINT
    local = f"no folder {shown} here, so it was read as a Hub dataset"
    try:
        yield
    except hf_errors.GatedRepoError:
        raise HubReleaseError(
            f"{shown}: {local}, which is gated on {endpoint}: accept its terms there and set HF_TOKEN",
            value=shown,
        ) from None
    except hf_errors.RepositoryNotFoundError:
        raise HubReleaseError(
            f"{shown}: {local}, and {endpoint} has no such dataset repository (or it is private: set HF_TOKEN); "
            f"give {FORM}",
            value=shown,
        ) from None
    except hf_errors.RevisionNotFoundError:
        raise HubReleaseError(
            f"{shown}: {local}, and {endpoint} has no such revision (a tag, branch or commit sha)",
            value=shown,
        ) from None
    except (hf_errors.OfflineModeIsEnabled, hf_errors.LocalEntryNotFoundError):
        raise HubReleaseError(
            f"{shown}: {local}, which is not in the cache ({cache_root()}) and the Hub is offline "
            "(HF_HUB_OFFLINE); connect once, or give a release folder",
            value=shown,
        ) from None
    except hf_errors.HFValidationError as exc:
        raise HubReleaseError(f"{shown}: {_first_line(exc)}; give {FORM}", value=shown) from None
    except (hf_errors.HfHubHTTPError, hf_errors.HTTPError, OSError) as exc:
        if isinstance(exc, RatioError):
            raise
        raise HubReleaseError(
            f"{shown}: {local}, but {endpoint} cannot be read ({type(exc).__name__}: {_first_line(exc)}); "
            "check HF_ENDPOINT and the network, or give a release folder",
            value=shown,
        ) from None


def _first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0][:200]
