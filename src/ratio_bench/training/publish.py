"""``ratio publish-models``: push tuned retrievers to the Hub as ``ORG/ratio-<relation>-<backbone>-<setup>``.

Each training output folder (``summary.json`` + ``best/``) becomes one model repo whose README is the rendered
model card; the commit is tagged with the Ratio release version. A model trained on a release whose config
forbids publishing (the dev release: its sources carry no redistribution licence) is refused unless forced.
``HF_ENDPOINT`` and ``HF_TOKEN`` are honoured through huggingface_hub; the token is never printed or written.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ratio_bench.errors import RatioError
from ratio_bench.training.model_card import render_card, repo_name


class ModelPublishError(RatioError, RuntimeError):
    pass


@dataclass(frozen=True)
class TrainedModel:
    """One training output folder: its summary and the selected model."""

    folder: Path
    summary: dict[str, Any]

    @property
    def best(self) -> Path:
        return self.folder / "best"


def find_trained_models(root: Path) -> list[TrainedModel]:
    """``root`` itself when it is a training output, else every training output below it (sorted)."""
    if not root.is_dir():
        raise ModelPublishError(f"{root}: no such folder (pass a `ratio train` or `ratio train-all` output)")
    summaries = (
        [root / "summary.json"] if (root / "summary.json").is_file() else sorted(root.rglob("summary.json"))
    )
    models = []
    for path in summaries:
        try:
            summary = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise ModelPublishError(f"{path}: unreadable training summary ({exc})") from None
        if summary.get("chosen_trial") is None or not (path.parent / "best").is_dir():
            raise ModelPublishError(
                f"{path.parent}: training not finished (no chosen trial or no best/ model)"
            )
        models.append(TrainedModel(path.parent, summary))
    if not models:
        raise ModelPublishError(f"{root}: no training outputs (summary.json) found")
    return models


def publishable(summary: dict[str, Any]) -> bool:
    """False when the release the model was trained on says it must never be published."""
    return summary["dataset"].get("publish", True) is not False


def scored_entries(summary: dict[str, Any], results: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The leaderboard entries of this model on the release it was trained from."""
    sha = summary["dataset"]["manifest_sha256"]
    model = summary.get("model_name")
    return [e for e in results if e["dataset"]["manifest_sha256"] == sha and e["model"] == model]


def publish_model(
    model: TrainedModel,
    org: str,
    results: list[dict[str, Any]],
    revision: str | None = None,
    private: bool = False,
    force: bool = False,
    dataset_repo: str | None = None,
) -> str:
    """Upload one tuned model with its card; returns the repo URL and tag."""
    from huggingface_hub import CommitOperationAdd, HfApi

    summary = model.summary
    if not publishable(summary) and not force:
        raise ModelPublishError(
            f"{model.folder}: trained on {summary['dataset']['name']} {summary['dataset']['version']}, whose "
            "config forbids publishing (release.publish: false); pass --force only for a private test Hub"
        )
    repo_id = f"{org}/{repo_name(summary)}"
    library_card = (
        (model.best / "README.md").read_text(encoding="utf-8") if (model.best / "README.md").exists() else ""
    )
    card = render_card(
        summary,
        library_card,
        scored_entries(summary, results),
        repo_id,
        licence=summary["dataset"].get("license") or "see the Ratio release card",
        dataset_repo=dataset_repo,
    )
    ops = [
        CommitOperationAdd(path_in_repo=p.relative_to(model.best).as_posix(), path_or_fileobj=str(p))
        for p in sorted(model.best.rglob("*"))
        if p.is_file() and p.name != "README.md"
    ]
    ops.append(CommitOperationAdd(path_in_repo="README.md", path_or_fileobj=card.encode("utf-8")))
    tag = revision or summary["dataset"]["version"]
    api = HfApi()  # endpoint and token from HF_ENDPOINT / HF_TOKEN
    api.create_repo(repo_id, private=private, exist_ok=True)
    commit = api.create_commit(
        repo_id, operations=ops, commit_message=f"Ratio tuned retriever ({summary['relation']}, {tag})"
    )
    api.create_tag(repo_id, tag=tag, revision=commit.oid, exist_ok=True)
    return f"{api.endpoint}/{repo_id} (tag {tag})"
