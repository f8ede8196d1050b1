"""Reproduce an entry: every entry names ``ratio leaderboard reproduce MODEL@SHA --setup S --split SPLIT --dataset
NAME@VERSION`` (:func:`.notices.reproduce_command`), which scores the same commit with the same setup and the
worker's own scoring code (:func:`.job.run_job`) on a local copy of the release. At the top of ``leaderboard/``:
it sits on the job, the submission checks and the worker's reading of ``--dataset``.
"""

from __future__ import annotations

import json
import re
import tempfile
from pathlib import Path

from ratio_bench.dataset.release import Release
from ratio_bench.leaderboard.hub import LeaderboardError
from ratio_bench.leaderboard.job import run_job
from ratio_bench.leaderboard.requests import SETUPS, SHA, Request
from ratio_bench.leaderboard.submit import MAX_PARAMETERS, inspect_model
from ratio_bench.leaderboard.worker import local_dataset

NAME_AT_VERSION = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]{0,99})@([A-Za-z0-9][A-Za-z0-9._-]{0,49})$")


def release_folder(text: str) -> Path:
    """``--dataset`` of reproduce: a release folder, or ``NAME@VERSION`` (the release of that name and version in
    the current folder: ``./NAME`` or a folder beside it), or a Hub dataset ``REPO@REV``."""
    if Path(text).is_dir():
        return Path(text)
    named = NAME_AT_VERSION.match(text)
    if not named:
        return local_dataset(text)[0]
    name, version = named.groups()
    found = {}
    for folder in [Path(name), *sorted(Path(".").iterdir())[:MAX_FOLDERS_LOOKED_AT]]:
        opened = _release_at(folder)
        if opened is not None and opened[0] == name:
            found.setdefault(opened[1], folder)
    if version in found:
        return found[version]
    other = f" (found version {', '.join(sorted(found))}: get release {version})" if found else ""
    raise LeaderboardError(
        f"--dataset {text}: no release {name} {version} in this folder{other}; run from the folder that holds it, "
        "or give the release folder's path"
    )


MAX_FOLDERS_LOOKED_AT = 200


def _release_at(folder: Path) -> tuple[str, str] | None:
    """(name, version) of the release in ``folder``, None when it holds none that opens."""
    if not (folder / "manifest.json").is_file():
        return None
    try:
        release = Release.open(folder)
    except Exception:  # noqa: BLE001 - a folder that is no release is skipped, whatever is wrong with it
        return None
    return release.name, release.version


def reproduce(model_at: str, setup: str, split: str, dataset: str, cache_dir: Path | None = None) -> dict:
    """Score ``MODEL@SHA`` with ``setup`` on ``split`` as the worker's job does (:func:`.job.run_job`: the pinned
    commit, the submission checks, the setup's prompts); returns the entry."""
    model, _, sha = model_at.partition("@")
    if not SHA.match(sha):
        raise LeaderboardError(
            f"MODEL {model_at}: give ORG/NAME@SHA, the 40-character commit the entry names"
        )
    if setup not in SETUPS:
        raise LeaderboardError(f"--setup {setup}: choose one of {', '.join(SETUPS)}")
    folder = release_folder(dataset)
    checked = inspect_model(model, sha, setup)
    request = Request(model, sha, sha, setup, checked.query_prompt, checked.document_prompt, "float32",
                      "local", "1970-01-01T00:00:00Z", parameters=checked.parameters)  # fmt: skip
    with tempfile.TemporaryDirectory(prefix="ratio-reproduce-") as tmp:
        request_file = Path(tmp) / "request.json"
        request_file.write_bytes(request.to_json())
        out = Path(tmp) / "out"
        run_job(request_file, request.path, folder, out, max_params=MAX_PARAMETERS, cache_dir=cache_dir,
                splits=(split,))  # fmt: skip
        return json.loads((out / f"{split}.json").read_text(encoding="utf-8"))
