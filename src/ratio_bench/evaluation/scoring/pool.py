"""The judged pool: every candidate verdict of the LLM judge, stored with the release it judged.

A pool folder holds ``candidates-<relation>.parquet`` (one row per query, candidate, prompt and judge) and
``pool.json`` naming the release (name, version, manifest SHA-256). By default it is the release's own
``judgments/`` folder, next to the silver verdicts (outside the release's checksums and identity:
``dataset.contract.POOL_FILES``); ``--pool DIR`` puts it elsewhere when the release is
read-only or shared. A pool of another release is refused, never mixed: candidate ids are content-derived, but
the queries and golds a verdict was read against are the release's. Rows are kept sorted by their key, so the
same verdicts always give the same bytes, and a verdict once stored is never replaced: a later run judges only
what the pool lacks.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from ratio_bench.core.errors import RatioError
from ratio_bench.core.io import atomic_path, read_json_file, write_json
from ratio_bench.dataset.release import manifest_sha256
from ratio_bench.evaluation.scoring.metrics import SET_METRICS, evaluate_run

POOL_KIND = "judged-pool"
POOL_MANIFEST = "pool.json"
POOL_SCHEMA = pa.schema(
    [
        ("query_id", pa.string()),
        ("candidate_id", pa.string()),
        ("prompt", pa.string()),  # <prompt id>@v<version>/candidate
        ("prompt_sha256", pa.string()),  # of the prompt file: a reworded prompt is another prompt
        ("judge_model", pa.string()),
        ("judge_settings", pa.string()),  # JSON of JudgeSettings.describe(), keys sorted
        ("status", pa.string()),  # ok | invalid (invalid counts as a rejection)
        ("decision", pa.bool_()),  # null when invalid
        ("confidence", pa.float64()),
    ]
)
KEY = ("query_id", "candidate_id", "prompt", "prompt_sha256", "judge_model", "judge_settings")
VerdictKey = tuple[str, str, str, str, str, str]


class PoolError(RatioError, ValueError):
    """A pool folder of another release, or verdicts that cannot be told apart by judge."""


def default_pool_dir(release: Path) -> Path:
    return Path(release) / "judgments"


@dataclass(frozen=True)
class Judgement:
    """Which prompt and which judge a verdict came from (what makes two verdicts comparable)."""

    prompt: str
    prompt_sha256: str
    judge_model: str
    judge_settings: str


class JudgedPool:
    """Verdicts of one release, per relation; ``add`` merges new ones and rewrites the relation's file."""

    def __init__(self, path: Path, release_manifest: dict[str, Any]):
        self.path = Path(path)
        self.release = {
            "name": release_manifest.get("name"),
            "version": release_manifest.get("version"),
            "manifest_sha256": manifest_sha256(release_manifest),
        }
        found = self._read_manifest()
        if (
            found is not None
            and found.get("dataset", {}).get("manifest_sha256") != self.release["manifest_sha256"]
        ):
            d = found.get("dataset", {})
            raise PoolError(
                f"{self.path}: holds verdicts of release {d.get('name')} {d.get('version')} "
                f"({str(d.get('manifest_sha256'))[:12]}), not of this one ({self.release['manifest_sha256'][:12]}); "
                "pools of different releases are never mixed: give another --pool",
                value=self.path,
            )
        self._tables: dict[str, pa.Table] = {}
        # relation -> judgement -> (query id, candidate id) -> accepted: read once, dropped by add
        self._decided: dict[str, dict[Judgement, dict[tuple[str, str], bool]]] = {}

    def _read_manifest(self) -> dict[str, Any] | None:
        file = self.path / POOL_MANIFEST
        if not file.exists():
            if any(self.path.glob("candidates-*.parquet")):
                raise PoolError(
                    f"{self.path}: candidate verdicts without {POOL_MANIFEST}; give another --pool",
                    value=self.path,
                )
            return None
        try:
            data = read_json_file(file)
        except (OSError, ValueError) as exc:
            raise PoolError(f"{self.path}: unreadable {POOL_MANIFEST} ({exc})", value=self.path) from None
        if not isinstance(data, dict) or data.get("kind") != POOL_KIND:
            raise PoolError(f"{self.path}: {POOL_MANIFEST} is not a judged-pool manifest", value=self.path)
        return data

    def file(self, relation: str) -> Path:
        return self.path / f"candidates-{relation}.parquet"

    def table(self, relation: str) -> pa.Table:
        if relation not in self._tables:
            f = self.file(relation)
            self._tables[relation] = (
                pq.read_table(f, schema=POOL_SCHEMA) if f.exists() else POOL_SCHEMA.empty_table()
            )
        return self._tables[relation]

    def keys(self, relation: str) -> set[VerdictKey]:
        t = self.table(relation)
        return set(zip(*(t.column(c).to_pylist() for c in KEY), strict=True)) if t.num_rows else set()

    def add(self, relation: str, rows: Iterable[dict[str, Any]]) -> int:
        """Store verdicts the pool lacks (existing ones win); returns how many were new."""
        have = self.keys(relation)
        new = [r for r in rows if tuple(r[c] for c in KEY) not in have]
        if not new:
            return 0
        merged = pa.concat_tables([self.table(relation), pa.Table.from_pylist(new, schema=POOL_SCHEMA)])
        merged = merged.sort_by([(c, "ascending") for c in KEY])
        self.path.mkdir(parents=True, exist_ok=True)
        write_json(self.path / POOL_MANIFEST, {"kind": POOL_KIND, "dataset": self.release})
        with atomic_path(self.file(relation)) as tmp:
            pq.write_table(merged, tmp, compression="zstd")
        self._tables[relation] = merged
        self._decided.pop(relation, None)
        return len(new)

    def judgements(self, relation: str) -> list[Judgement]:
        """The distinct (prompt, judge) combinations the relation's verdicts come from, sorted."""
        t = self.table(relation)
        cols = [t.column(c).to_pylist() for c in KEY[2:]]
        return sorted(
            {Judgement(*row) for row in zip(*cols, strict=True)}, key=lambda j: (j.prompt, j.judge_model)
        )

    def decisions(self, relation: str, which: Judgement) -> dict[tuple[str, str], bool]:
        """(query id, candidate id) -> accepted, for one prompt and judge (invalid replies: False)."""
        if relation not in self._decided:
            by: dict[Judgement, dict[tuple[str, str], bool]] = {}
            for row in self.table(relation).to_pylist():
                judgement = Judgement(
                    row["prompt"], row["prompt_sha256"], row["judge_model"], row["judge_settings"]
                )
                by.setdefault(judgement, {})[(row["query_id"], row["candidate_id"])] = bool(
                    row["status"] == "ok" and row["decision"]
                )
            self._decided[relation] = by
        return dict(self._decided[relation].get(which, {}))

    def relevance(self, relation: str, mode: str) -> tuple[dict[str, set[str]], set[tuple[str, str]]]:
        """Accepted candidates per query under ``mode`` (hard: every prompt; soft: any) and the judged pairs.

        A pair counts as judged only when every prompt of the pool gave it a verdict. A relation judged by two
        judges (models or settings) is refused: whose verdicts count would be a guess.
        """
        js = self.judgements(relation)
        if not js:
            return {}, set()
        judges = {(j.judge_model, j.judge_settings) for j in js}
        if len(judges) > 1:
            models = ", ".join(sorted({m for m, _ in judges}))
            raise PoolError(
                f"{self.path}: {relation} verdicts come from {len(judges)} judges ({models}); "
                "score against a pool of one judge (give another --pool)",
                value=self.path,
            )
        per_prompt = [self.decisions(relation, j) for j in js]
        judged = set.intersection(*(set(d) for d in per_prompt))
        combine = all if mode == "hard" else any
        accepted: dict[str, set[str]] = {}
        for q, c in sorted(judged):
            if combine(d[(q, c)] for d in per_prompt):
                accepted.setdefault(q, set()).add(c)
        return accepted, judged


def _coverage(judged: set[tuple[str, str]], run: dict[str, list[str]], k: int) -> float:
    sampled = {q for q, _ in judged}
    pairs = [(q, c) for q, ranked in run.items() if q in sampled for c in ranked[:k]]
    return sum(p in judged for p in pairs) / len(pairs) if pairs else 0.0


def judged_scores(
    pool: JudgedPool, relation: str, run: dict[str, list[str]], golds: dict[str, str]
) -> dict[str, Any] | None:
    """A run's judged figures for one relation at k = 10, as a leaderboard entry records them (the submission
    schema's ``judged`` block); None when none of the run's queries has been judged (no verdict of the relation,
    or a pool sampled from another split: a block of zeros would read as a result).

    Only the judged queries count (the pool's sample, as in the spec's judged tables: a query with at least one
    candidate judged by every prompt): relevant = the mined gold plus what the judge accepted under hard or soft
    agreement, an unjudged candidate counting as not relevant. ``coverage_at_10`` says how much of the run's top
    10 the judge has read, so a score made against a pool that has since grown (or that never saw this run's
    candidates) is read for what it is.
    """
    judgements = pool.judgements(relation)
    if not judgements:
        return None
    hard, judged = pool.relevance(relation, "hard")
    sampled = sorted({q for q, _ in judged} & run.keys() & golds.keys())
    if not sampled:
        return None
    soft = pool.relevance(relation, "soft")[0]
    ranked = {q: run[q] for q in sampled}

    def scores(accepted: dict[str, set[str]]) -> dict[str, float]:
        qrels = {q: {golds[q]} | accepted.get(q, set()) for q in sampled}
        m = evaluate_run(ranked, qrels, (10,))
        return {f"{name}_at_10": round(m[f"{name}_at_10"], 6) for name, _ in SET_METRICS}

    return {
        "judge_model": judgements[0].judge_model,
        "queries": len(sampled),
        "judged_pairs": len(judged),
        "coverage_at_10": round(_coverage(judged, ranked, 10), 6),
        "hard": scores(hard),
        "soft": scores(soft),
    }
