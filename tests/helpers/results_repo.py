"""A results repository as workers leave it: per request ``<org>/<model>/<sha>/<setup>/<split>.json`` entries and
the worker's signed ``provenance.json`` vouching for their bytes, with the FINISHED request in the queue that names
the folder (what makes it verified, :mod:`ratio_bench.leaderboard.provenance`); plus a hand-written
(self-reported) entry.

The record is signed with the key the ``board`` fixture lists in the results repository's ``trusted_workers.json``
(:meth:`WorkerKey.sign`, the worker's own signing), so these folders are verified exactly as a worker's are.
"""

from __future__ import annotations

import json
from dataclasses import replace

from tests.helpers.entries import ranked_entry

from ratio_bench.leaderboard.provenance import SCHEMA, WorkerKey, sha256, signed_at
from ratio_bench.leaderboard.requests import Request, parse_time, request_path

SHA = "c0ffee" + "0" * 34
DATASET_SHA = "d" * 40
SCORED_AT = "2026-11-30T12:00:00Z"
REQUESTS = "board/requests"  # the board fixture's queue (tests/leaderboard/conftest.py)


def worker_folder(
    key: WorkerKey, model: str, setup: str, ranks: dict[str, dict[str, list[int]]], sha: str = SHA
) -> dict[str, bytes]:
    """The files a worker publishes for ``model`` at ``sha`` with ``setup``: one entry per split of ``ranks``,
    and the provenance record signed with ``key``."""
    folder = f"{model}/{sha}/{setup}"
    files = {
        f"{folder}/{split}.json": json.dumps(
            ranked_entry(f"{model}:{setup}", by_relation, split=split)
        ).encode()
        for split, by_relation in ranks.items()
    }
    record = {
        "schema": SCHEMA, "worker": "w1", "model": model, "revision": "main", "sha": sha, "setup": setup,
        "request": {"repo": REQUESTS, "path": request_path(model, sha, setup), "attempt": 1},
        "submitter": "bob", "dataset": f"ratio-bench/ratio@{DATASET_SHA}", "scored_at": SCORED_AT,
        "signed_at": signed_at(), "seconds": {split: 1.0 for split in ranks}, "code_version": "test",
        "entries": {path.rpartition("/")[2]: sha256(data) for path, data in files.items()}, "files": {},
    }  # fmt: skip
    files[f"{folder}/provenance.json"] = json.dumps(key.sign(record)).encode()
    return files


def finished_requests(files: dict[str, bytes]) -> dict[str, bytes]:
    """The queue's FINISHED request for every signed worker folder among ``files`` (path -> request bytes)."""
    out = {}
    for path, data in files.items():
        if not path.endswith("/provenance.json"):
            continue
        record = json.loads(data)
        request = Request(
            record["model"], record["revision"], record["sha"], record["setup"], "", "", "float32",
            record["submitter"], SCORED_AT,
        )  # fmt: skip
        ran = replace(
            request, attempts=record["request"]["attempt"]
        )  # finished at the signed attempt, once signed
        done = ran.ended("FINISHED", parse_time(record["signed_at"]), result=path.rpartition("/")[0])
        out[request.path] = done.to_json()
    return out


def publish(board, results: str, *parts: dict[str, bytes]) -> dict[str, bytes]:
    """Commit ``parts`` to the results repository ``results`` and each worker folder's FINISHED request to the
    queue (as the maintainers' ledger holds it); returns the files committed to the results repository."""
    files = {path: data for part in parts for path, data in part.items()}
    board.keeper_commit(finished_requests(files))
    board.hub.state.commit(f"datasets/{results}", "main", files)
    return files


def self_reported(model: str = "my model", ranks: dict[str, list[int]] | None = None) -> dict[str, bytes]:
    entry = ranked_entry(model, ranks or {"address": [1, 1]}, model_fingerprint="f" * 64)
    return {"hand/entry.json": json.dumps(entry).encode()}
