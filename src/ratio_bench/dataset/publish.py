"""Publishing a release folder to a Hugging Face Hub dataset repository with ``huggingface_hub``.

``HF_ENDPOINT`` (a mirror or a private Hub) and ``HF_TOKEN`` are honoured through huggingface_hub itself; the
token is never printed, logged or written anywhere by this module.
"""

from __future__ import annotations

import json
from pathlib import Path

from ratio_bench.errors import RatioError


class PublishError(RatioError, RuntimeError):
    pass


def publish(folder: Path, repo_id: str, revision: str | None = None, private: bool = False) -> str:
    """Upload ``folder`` (a built release) to ``repo_id`` and tag the commit with the release version."""
    from huggingface_hub import HfApi

    manifest_path = folder / "manifest.json"
    if not manifest_path.exists():
        raise PublishError(f"{folder}: not a release folder (no manifest.json); build it with `ratio build`")
    manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    tag = revision or manifest["version"]
    api = HfApi()  # endpoint and token from HF_ENDPOINT / HF_TOKEN
    api.create_repo(repo_id, repo_type="dataset", private=private, exist_ok=True)
    commit = api.upload_folder(
        folder_path=str(folder),
        repo_id=repo_id,
        repo_type="dataset",
        commit_message=f"Ratio release {manifest['name']} {manifest['version']}",
    )
    api.create_tag(repo_id, tag=tag, repo_type="dataset", revision=commit.oid, exist_ok=True)
    return f"{api.endpoint}/datasets/{repo_id} (tag {tag})"
