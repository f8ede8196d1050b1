"""``ratio publish-models``: tuned models (``ratio train --out`` folders) to Hugging Face Hub model repositories.

Each model's ``best/`` goes to ``ORG/ratio-<relation>-<backbone>-<setup>`` with its card re-rendered for that
repository, and the commit is tagged with the Ratio version (or ``--revision``). A model trained on a release
whose config says ``release.publish: false`` (the dev release), or whose release cannot be checked, is refused
before anything is sent, unless forced. Endpoint and token come from huggingface_hub's own resolution
(``HF_ENDPOINT``, ``HF_TOKEN``, the saved login); the token is never printed, logged or written here.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ratio_bench import __version__
from ratio_bench.core import extras
from ratio_bench.dataset.publish import PublishError, hub_errors
from ratio_bench.retrieval.registry import TRAINING_SUMMARY
from ratio_bench.training.card import load_summary, model_name, release_terms, write_card

huggingface_hub = extras.lazy("huggingface_hub")


@dataclass(frozen=True)
class ModelToPublish:
    folder: Path  # the training output folder
    name: str  # the Hub repository name (without the organisation)
    licence: str
    publishable: bool | None  # the release config's release.publish; None when it cannot be checked


def find_models(folder: str | Path, dataset: str | Path | None = None) -> list[ModelToPublish]:
    """The training output folder ``folder``, or every one directly inside it (e.g. ``models/dev``)."""
    folder = Path(folder)
    if (folder / TRAINING_SUMMARY).is_file():
        found = [folder]
    elif folder.is_dir():
        found = sorted(p for p in folder.iterdir() if (p / TRAINING_SUMMARY).is_file())
    else:
        found = []
    if not found:
        raise PublishError(
            f"{folder}: no trained model (no {TRAINING_SUMMARY} in it or in its subfolders); "
            "pass a `ratio train --out` or `ratio train-all --out` folder"
        )
    models = []
    for out in found:
        summary = load_summary(out)
        if not (out / "best").is_dir():
            raise PublishError(f"{out}: no best/ model folder; finish `ratio train --out {out}` first")
        licence, publishable = release_terms(summary, dataset)
        models.append(ModelToPublish(out, model_name(summary), licence, publishable))
    names = [m.name for m in models]
    if len(set(names)) != len(names):
        twice = sorted({n for n in names if names.count(n) > 1})
        raise PublishError(f"{folder}: several models would be published as {', '.join(twice)}; publish one")
    return models


def refusal(model: ModelToPublish) -> str | None:
    """Why ``model`` must not be published (without --force), or None."""
    if model.publishable is True:
        return None
    if model.publishable is False:
        return f"its training release's config says release.publish: false (licence: {model.licence})"
    return f"its training release's terms cannot be checked ({model.licence})"


def publish_models(
    folder: str | Path,
    org: str,
    revision: str | None = None,
    private: bool = False,
    force: bool = False,
    dataset: str | Path | None = None,
) -> list[str]:
    """Publish every model found under ``folder`` to ``org``; return one line per repository (URL and tag).

    Every model is checked before the first upload, so a refusal leaves the Hub untouched.
    """

    models = find_models(folder, dataset)
    refused = [(m, why) for m in models if (why := refusal(m))]
    if refused and not force:
        listed = "; ".join(f"{m.folder}: {why}" for m, why in refused)
        raise PublishError(f"{listed}; nothing was uploaded. Pass --force to publish anyway")
    tag = revision or __version__
    api = huggingface_hub.HfApi()  # endpoint and token from HF_ENDPOINT / HF_TOKEN / the saved login
    done = []
    for model in models:
        repo_id = f"{org}/{model.name}"
        write_card(model.folder, repo_id=repo_id, dataset=dataset)  # the usage example names the repository
        with hub_errors(api, repo_id):
            api.create_repo(repo_id, repo_type="model", private=private, exist_ok=True)
            commit = api.upload_folder(
                folder_path=str(model.folder / "best"),
                repo_id=repo_id,
                repo_type="model",
                commit_message=f"Ratio tuned retriever {model.name} (ratio-bench {__version__})",
            )
            api.create_tag(repo_id, tag=tag, repo_type="model", revision=commit.oid, exist_ok=True)
        done.append(f"{api.endpoint}/{repo_id} (tag {tag})")
    return done
