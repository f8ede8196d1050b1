"""A results repository as workers leave it: per request ``<org>/<model>/<sha>/<setup>/<split>.json`` entries and
the worker's ``provenance.json`` vouching for their bytes; plus a hand-written (self-reported) entry."""

from __future__ import annotations

import hashlib
import json

from tests.helpers.entries import ranked_entry

SHA = "c0ffee" + "0" * 34
DATASET_SHA = "d" * 40
SCORED_AT = "2026-11-30T12:00:00Z"


def worker_folder(
    model: str, setup: str, ranks: dict[str, dict[str, list[int]]], sha: str = SHA
) -> dict[str, bytes]:
    """The files a worker publishes for ``model`` at ``sha`` with ``setup``: one entry per split of ``ranks``."""
    folder = f"{model}/{sha}/{setup}"
    files = {
        f"{folder}/{split}.json": json.dumps(
            ranked_entry(f"{model}:{setup}", by_relation, split=split)
        ).encode()
        for split, by_relation in ranks.items()
    }
    provenance = {
        "schema": "ratio-leaderboard-provenance/1", "worker": "w1", "model": model, "revision": "main",
        "sha": sha, "setup": setup, "request": {"repo": "board/requests", "path": f"{model}/{sha}_{setup}.json"},
        "submitter": "bob", "dataset": f"ratio-bench/ratio@{DATASET_SHA}", "scored_at": SCORED_AT,
        "entries": {path.rpartition("/")[2]: hashlib.sha256(data).hexdigest() for path, data in files.items()},
    }  # fmt: skip
    files[f"{folder}/provenance.json"] = json.dumps(provenance).encode()
    return files


def self_reported(model: str = "my model", ranks: dict[str, list[int]] | None = None) -> dict[str, bytes]:
    entry = ranked_entry(model, ranks or {"address": [1, 1]}, model_fingerprint="f" * 64)
    return {"hand/entry.json": json.dumps(entry).encode()}
