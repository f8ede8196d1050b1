"""Publishing a release folder to a Hugging Face Hub dataset repository with ``huggingface_hub``.

``HF_ENDPOINT`` (a mirror or a private Hub) and ``HF_TOKEN`` are honoured through huggingface_hub itself; the
token is never printed, logged or written anywhere by this module.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ratio_bench.core import extras
from ratio_bench.core.errors import RatioError, shown
from ratio_bench.core.io import MANIFEST
from ratio_bench.dataset.check import check_release
from ratio_bench.dataset.custody import Custody
from ratio_bench.dataset.release import Release

hf_errors = extras.lazy("huggingface_hub.errors")
huggingface_hub = extras.lazy("huggingface_hub")


class PublishError(RatioError, RuntimeError):
    """A folder that must not or cannot be published; the message says why and what to do."""


def publish(
    folder: Path, repo_id: str, revision: str | None = None, private: bool = False, force: bool = False
) -> str:
    """Upload ``folder`` (a built release) to ``repo_id`` and tag the commit with the release version.

    Exactly the release is sent: the files its manifest lists and the manifest, once the release's own
    ``ratio dataset check`` passes; anything else in the folder (a ``.env``, the judged pool, a symlink's target) stays
    home. A release whose build config says ``release.publish: false`` (the dev release: sources without a
    licence to redistribute) is refused before anything is sent, whatever ``force`` says: the licence terms are
    the sources', not ours to waive (``force`` is kept so old scripts get this message, not a usage error).
    """

    found = Release.open(folder)
    manifest, release = found.manifest, found.terms
    if release.get("publish") is not True and "publish" in release:
        forced = " (--force does not override it)" if force else ""
        said = "false" if release.get("publish") is False else shown(release.get("publish"))
        raise PublishError(
            f"{folder}: its build config ({manifest.get('config_file', 'config')}) says release.publish: "
            f"{said}{forced} (licence: {shown(release.get('license') or 'unspecified')});"
            " nothing was uploaded. Only a release built from a config that may be published can be: rebuild it "
            "from one with release.publish: true and sources you may redistribute"
        )
    files = [*found.own_files(), MANIFEST]
    if (found.root / MANIFEST).is_symlink():
        raise PublishError(f"{folder}: {MANIFEST} is a symlink; nothing was uploaded. Rebuild the release")
    failed = [c for c in check_release(found.root) if not c.passed]
    if failed:
        raise PublishError(
            f"{folder}: fails `ratio dataset check` ({'; '.join(f'{c.name}: {c.detail}' for c in failed)}); nothing was "
            "uploaded. Run `ratio dataset check` on it, and rebuild it with `ratio dataset build`"
        )
    tag = revision or found.version
    api = huggingface_hub.HfApi()  # endpoint and token from HF_ENDPOINT / HF_TOKEN
    with hub_errors(api, repo_id):
        api.create_repo(repo_id, repo_type="dataset", private=private, exist_ok=True)
        commit = api.create_commit(
            repo_id,
            [
                huggingface_hub.CommitOperationAdd(path_in_repo=f, path_or_fileobj=str(found.root / f))
                for f in files
            ],
            repo_type="dataset",
            commit_message=f"Ratio release {found.name} {found.version}",
        )
        api.create_tag(repo_id, tag=tag, repo_type="dataset", revision=commit.oid, exist_ok=True)
    return f"{api.endpoint}/datasets/{repo_id} (tag {tag})"


@contextmanager
def hub_errors(api, repo_id: str) -> Iterator[None]:
    """Hub and network failures inside the block as one-line PublishErrors naming the endpoint, never the token.

    A name the Hub rejects is the error's value, so the command line names the option that gave it.
    """

    try:
        yield
    except hf_errors.HFValidationError as exc:
        raise PublishError(f"{repo_id}: {_first_line(exc)}", value=repo_id) from None
    except (
        hf_errors.HfHubHTTPError,
        hf_errors.HTTPError,
    ) as exc:  # the HTTP client's errors: URLs and server text, never the token
        raise PublishError(
            f"{api.endpoint}: publishing to {repo_id} failed ({type(exc).__name__}: {_first_line(exc)}); "
            "check HF_ENDPOINT, HF_TOKEN and the repository name"
        ) from None


def _first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [""])[0]


def publish_custody(folder: Path, repo_id: str) -> str:
    """Upload a custody folder (``ratio dataset build --withhold``) to ``repo_id``, which must exist and be
    private (``ratio leaderboard init`` creates ``ORG/custody`` so): a withheld split is never sent to a repository
    anyone could read. Exactly the files its manifest lists and the manifest are sent."""

    custody = Custody.open(folder)
    files = [*custody.files(), MANIFEST]
    api = huggingface_hub.HfApi()
    with hub_errors(api, repo_id):
        private = api.repo_info(repo_id, repo_type="dataset").private
    if not private:
        raise PublishError(
            f"--repo-id {repo_id}: is not a private repository; a custody folder goes only to one (create it with "
            "`ratio leaderboard init ORG`: ORG/custody); nothing was uploaded",
            value=repo_id,
        )
    with hub_errors(api, repo_id):
        commit = api.create_commit(
            repo_id,
            [
                huggingface_hub.CommitOperationAdd(path_in_repo=f, path_or_fileobj=str(custody.root / f))
                for f in files
            ],
            repo_type="dataset",
            commit_message=f"Custody of {custody.manifest.get('release')}: {', '.join(custody.withheld) or 'nothing withheld'}",
        )
    return f"{api.endpoint}/datasets/{repo_id} (commit {commit.oid[:12]}, private)"
