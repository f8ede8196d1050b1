"""Saved retrieval runs: each relation's ranked lists as Parquet and TREC run files, with a manifest.

A run folder is what the judge commands read: the manifest names the model, its prompt setup and the release
(name, version, manifest SHA-256) and split it was scored on, so a run is never judged against another release.
Parquet (query_id, rank, candidate_id, score) is for our tools; the TREC file (``qid Q0 docid rank score tag``)
is for trec_eval, ranx and the like.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from ratio_bench.core.errors import RatioError
from ratio_bench.core.io import atomic_open, atomic_path, folder_files, read_manifest, staged_dir, write_json
from ratio_bench.dataset.release import manifest_sha256
from ratio_bench.evaluation.scoring.evaluate import ScoreResult

RUN_KIND = "run"
RUN_DEPTH = 100
_SCHEMA = pa.schema(
    [("query_id", pa.string()), ("rank", pa.int32()), ("candidate_id", pa.string()), ("score", pa.float32())]
)


class RunError(RatioError, ValueError):
    """A run folder that is missing, malformed, or scored on another release."""


@dataclass
class SavedRun:
    path: Path
    manifest: dict[str, Any]
    ranked: dict[str, dict[str, list[str]]]  # relation -> query id -> candidate ids, best first

    @property
    def name(self) -> str:
        return self.manifest["model"]


def save_run(
    result: ScoreResult, release_manifest: dict[str, Any], split: str, out: Path, depth: int = RUN_DEPTH
) -> Path:
    """Write ``result``'s ranked lists (needs ``score(..., keep_runs=True)``) as a run folder at ``out``."""
    tag = result.model.replace(" ", "_")
    with staged_dir(out, RUN_KIND) as stage:
        rows = {}
        for rel, ranked in sorted(result.runs.items()):
            scores = result.run_scores[rel]
            cols: dict[str, list] = {"query_id": [], "rank": [], "candidate_id": [], "score": []}
            for qid in sorted(ranked):
                for r, (cid, s) in enumerate(zip(ranked[qid][:depth], scores[qid][:depth], strict=True), 1):
                    cols["query_id"].append(qid)
                    cols["rank"].append(r)
                    cols["candidate_id"].append(cid)
                    cols["score"].append(s)
            with atomic_path(stage / f"{rel}.parquet") as tmp:
                pq.write_table(pa.table(cols, schema=_SCHEMA), tmp)
            with atomic_open(stage / f"{rel}.trec", "w", encoding="utf-8", newline="\n") as fh:
                columns = (cols["query_id"], cols["rank"], cols["candidate_id"], cols["score"])
                for q, r, c, s in zip(*columns, strict=True):
                    fh.write(f"{q} Q0 {c} {r} {s:.6f} {tag}\n")
            rows[rel] = len(cols["query_id"])
        write_json(
            stage / "manifest.json",
            {
                "kind": RUN_KIND,
                "model": result.model,
                "dataset": {
                    "name": release_manifest["name"],
                    "version": release_manifest["version"],
                    "manifest_sha256": manifest_sha256(release_manifest),
                },
                "split": split,
                "k": depth,
                "relations": rows,
                "files": folder_files(stage),  # what a later --save-run here may replace
            },
        )
    return out


def load_run(path: Path, release_manifest: dict[str, Any] | None = None) -> SavedRun:
    """Read a run folder; with ``release_manifest``, refuse a run scored on another release."""
    path = Path(path)
    manifest = read_manifest(path)
    if manifest is None or manifest.get("kind") != RUN_KIND:
        raise RunError(
            f"{path}: not a saved run (no run manifest.json); write one with `ratio score --save-run`",
            value=path,
        )
    if release_manifest is not None:
        want = manifest_sha256(release_manifest)
        got = manifest.get("dataset", {}).get("manifest_sha256")
        if got != want:
            raise RunError(
                f"{path}: scored on release {manifest.get('dataset', {}).get('name')} "
                f"{manifest.get('dataset', {}).get('version')} ({str(got)[:12]}), not on this one "
                f"({want[:12]}); re-score with `ratio score --save-run` on this release",
                value=path,
            )
    ranked: dict[str, dict[str, list[str]]] = {}
    for rel in manifest.get("relations", {}):
        table = pq.read_table(path / f"{rel}.parquet").sort_by(
            [("query_id", "ascending"), ("rank", "ascending")]
        )
        per: dict[str, list[str]] = {}
        for q, c in zip(
            table.column("query_id").to_pylist(), table.column("candidate_id").to_pylist(), strict=True
        ):
            per.setdefault(q, []).append(c)
        ranked[rel] = per
    return SavedRun(path, manifest, ranked)
