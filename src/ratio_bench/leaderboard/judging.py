"""The judged pool grows with every submission: the worker judges each new run's unjudged top 10.

The pool lives in the results repository under ``judged-pool/``: the files of
:class:`~ratio_bench.evaluation.scoring.pool.JudgedPool` and ``sample.json``, the sample size and seed its queries are
drawn with (set by the round that starts the pool, so that every worker judges the same queries). Once a request
is ``FINISHED``, the worker downloads the pool at the head of the results repository, judges the pairs of the
run's top 10 on the sampled queries that the pool lacks for its judge, with the code of ``ratio judge
candidates`` (:mod:`ratio_bench.judge.candidates`), and commits the grown pool together with the entries'
``judged`` blocks recomputed against it and the round's outcome in the provenance record, on top of the commit it
read (``parent_commit``). When another worker committed first, it downloads the pool again, adds its own verdicts
(the pool is append-only and keyed by query, candidate, prompt and judge: nothing is lost or replaced) and tries
again, up to :data:`POOL_TRIES` times.

The scores are published before judging starts: a judge that is down, a spending cap reached or a Hub failure
costs the round (one line in the worker's log, and the provenance record when it can still be written), never
the request.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from ratio_bench.core.relations import RELATIONS
from ratio_bench.dataset.release import Release, manifest_sha256
from ratio_bench.evaluation.scoring.pool import POOL_MANIFEST, JudgedPool, judged_scores
from ratio_bench.evaluation.scoring.runs import SavedRun, load_run
from ratio_bench.judge import candidates as cj
from ratio_bench.leaderboard import hub
from ratio_bench.leaderboard.hub import LeaderboardError
from ratio_bench.leaderboard.job import one_line
from ratio_bench.leaderboard.limits import DEFAULT_SAMPLE, DEFAULT_SEED, POOL_FOLDER
from ratio_bench.llm.client import Judge
from ratio_bench.llm.options import make_judge, renamed_flags

SAMPLE_FILE = "sample.json"
K = 10  # the top k judged, and the k of the entries' judged figures
POOL_TRIES = 5
MAX_POOL_FILE = 256 << 20  # a relation's verdicts: about 100 bytes each, compressed
POOL_FILES = {POOL_MANIFEST, SAMPLE_FILE} | {f"candidates-{r}.parquet" for r in RELATIONS}


@dataclass(frozen=True)
class Judging:
    """The worker's judge options (unprefixed: ``llm.options.prefixed_judge_args``) and a new pool's sample."""

    args: argparse.Namespace
    sample: int = DEFAULT_SAMPLE
    seed: int = DEFAULT_SEED

    def judge(self) -> Judge:
        """A fresh judge for each round: one stopped by its breaker or its spending cap stays stopped."""
        return make_judge(self.args)[0]


@dataclass(frozen=True)
class Scored:
    """A published result as the round rewrites it: the job's files and the provenance record."""

    label: str
    folder: str  # in the results repository
    out: Path  # the job's output: <split>.json entries and runs/<split>/
    provenance: dict[str, Any]
    sign: Callable[[dict[str, Any]], dict[str, Any]] | None = (
        None  # the worker's key: the round re-signs its record
    )


@dataclass
class RepoPool:
    """The results repository's pool at commit ``sha``, copied into a folder of ours."""

    sha: str
    pool: JudgedPool
    sample: dict[str, int] | None  # its sample.json; None before the first round

    def size(self) -> int:
        return sum(self.pool.table(r).num_rows for r in RELATIONS)


def fetch_pool(results: str, sha: str, dest: Path, manifest: dict[str, Any]) -> RepoPool:
    """Download ``judged-pool/`` of ``results`` at ``sha`` into ``dest`` (files with other names are ignored;
    each is size-checked first); a pool of another release is refused, never mixed."""
    listed = {
        path.removeprefix(f"{POOL_FOLDER}/"): size
        for path, size in hub.tree(results, "dataset", sha).items()
        if path.startswith(f"{POOL_FOLDER}/")
    }
    for name, size in sorted(listed.items()):
        if name not in POOL_FILES:
            continue
        if size > MAX_POOL_FILE:
            raise LeaderboardError(f"{results}: {POOL_FOLDER}/{name} is over {MAX_POOL_FILE:,} bytes")
        with hub.hub_errors(f"dataset {results}: {POOL_FOLDER}/{name}"):
            hub.api().hf_hub_download(
                results, f"{POOL_FOLDER}/{name}", repo_type="dataset", revision=sha, local_dir=dest
            )
    folder = dest / POOL_FOLDER
    found = _read_json(folder / POOL_MANIFEST, results)
    if found is not None and (found.get("dataset") or {}).get("manifest_sha256") != manifest_sha256(manifest):
        d = found.get("dataset") or {}
        raise LeaderboardError(
            f"{results}: {POOL_FOLDER}/ holds verdicts of release {d.get('name')} {d.get('version')}, not of "
            f"{manifest.get('name')} {manifest.get('version')} that this worker scores; a results repository "
            "keeps the pool of one release"
        )
    sample = _read_json(folder / SAMPLE_FILE, results)
    if sample is not None and not _valid_sample(sample):
        raise LeaderboardError(
            f"{results}: {POOL_FOLDER}/{SAMPLE_FILE} is not {{sample: N >= 1, seed: N >= 0}}"
        )
    return RepoPool(sha, JudgedPool(folder, manifest), sample)


def _read_json(path: Path, results: str) -> Any:
    if not path.is_file():
        return None
    try:
        return hub.strict_json(path.read_bytes())  # the results repository's file: untrusted (no key twice)
    except ValueError as e:
        raise LeaderboardError(f"{results}: {POOL_FOLDER}/{path.name} is not strict JSON ({e})") from None


def _valid_sample(doc: Any) -> bool:
    return (
        isinstance(doc, dict)
        and type(doc.get("sample")) is int
        and doc["sample"] >= 1
        and type(doc.get("seed")) is int
        and doc["seed"] >= 0
    )


def judge_run(release: Release, run: SavedRun, repo: RepoPool, judge: Judge, sample: dict[str, int]) -> dict:
    """Judge what ``repo``'s pool lacks of ``run``'s top 10 on the sampled queries, into that pool; the
    round's counts. A pool of another judge is refused: its judged figures would mix two judges' verdicts."""
    mine = cj.judge_identity(judge.settings)
    for rel in RELATIONS:
        other = {(j.judge_model, j.judge_settings) for j in repo.pool.judgements(rel)} - {mine}
        if other:
            model, settings = sorted(other)[0]
            raise LeaderboardError(
                f"{POOL_FOLDER}/ holds {rel} verdicts of another judge ({model}, {settings}); a pool keeps one "
                "judge: start the worker with that judge's options"
            )
    plans = cj.plan_candidates(release, [run], list(RELATIONS), sample["sample"], sample["seed"], K)
    work = cj.missing_requests(plans, repo.pool, judge.settings)
    outcomes = judge.run([w.request for w in work.pending], desc="judging the new run's top 10")
    stored = cj.store(repo.pool, work, outcomes, judge.settings)
    summary = judge.summary()
    return {
        "status": "partial" if stored["left"] else "judged",
        "queries": sum(len(p.sample.query_ids) for p in plans),
        "requests": work.unique,
        "in_pool": work.in_pool,
        "added": stored["stored"],
        "left": stored["left"],
        "sent": summary["requests"],
        "cost_usd": round(summary["cost_usd"], 6),
    }


def judged_entries(
    release: Release, runs: dict[str, SavedRun], entries: dict[str, dict], pool: JudgedPool
) -> dict[str, dict]:
    """The entries with their ``judged`` block recomputed against ``pool`` (``evaluation.pool.judged_scores``,
    as ``ratio score --pool`` makes it); an entry none of whose queries the pool has judged keeps no block."""
    fresh = {}
    for split, entry in entries.items():
        blocks = {}
        for rel, ranked in runs[split].ranked.items():
            q = release.queries(rel, split, ["query_id", "gold_id"]).to_pydict()
            block = judged_scores(pool, rel, ranked, dict(zip(q["query_id"], q["gold_id"], strict=True)))
            if block is not None:
                blocks[rel] = block
        fresh[split] = {k: v for k, v in entry.items() if k != "judged"} | (
            {"judged": blocks} if blocks else {}
        )
    return fresh


def commit_pool(
    results: str,
    repo: RepoPool,
    files: Callable[[RepoPool], dict[str, bytes]],
    message: str,
    work: Path,
    manifest: dict[str, Any],
) -> RepoPool:
    """Commit ``repo``'s pool and ``files(repo)`` on top of the commit the pool was read at; when another
    writer got there first, add the verdicts to the pool at the new head and try again. Returns what was
    committed."""
    for attempt in range(1, POOL_TRIES + 1):
        pool_files = {f"{POOL_FOLDER}/{p.name}": p.read_bytes() for p in sorted(repo.pool.path.glob("*"))
                      if p.name in POOL_FILES - {SAMPLE_FILE}}  # fmt: skip
        try:
            hub.commit(results, "dataset", pool_files | files(repo), message, parent=repo.sha)
            return repo
        except hub.StaleHead:
            if attempt == POOL_TRIES:
                break
        fresh = fetch_pool(results, hub.head(results, "dataset"), work / f"retry-{attempt}", manifest)
        for rel in RELATIONS:
            fresh.pool.add(rel, repo.pool.table(rel).to_pylist())
        fresh.sample = fresh.sample or repo.sample
        repo = fresh
    raise LeaderboardError(f"--results {results}: the repository kept changing; {POOL_TRIES} commits refused")


@dataclass(frozen=True)
class JobFiles:
    """The job's entries and saved runs, read back: what the round judges and rewrites."""

    release: Release
    entries: dict[str, dict]  # split -> leaderboard entry
    runs: dict[str, SavedRun]  # split -> its saved run

    @classmethod
    def read(cls, dataset: Path, out: Path) -> JobFiles:
        release = Release.open(dataset)
        splits = [p.stem for p in sorted(out.glob("*.json")) if (out / "runs" / p.stem).is_dir()]
        return cls(
            release,
            {s: json.loads((out / f"{s}.json").read_bytes()) for s in splits},
            {s: load_run(out / "runs" / s, release.manifest) for s in splits},
        )


def round_files(
    scored: Scored, record: dict[str, Any], job: JobFiles | None, at: RepoPool | None
) -> dict[str, bytes]:
    """The provenance with the round's outcome and, when ``at``'s pool has verdicts, the entries re-judged
    against it (with their hashes in the provenance) and the pool's sample."""
    out, provenance = {}, {**scored.provenance, "judging": record}
    if job is not None and at is not None and at.size():
        for split, entry in judged_entries(job.release, job.runs, job.entries, at.pool).items():
            out[f"{scored.folder}/{split}.json"] = data = _json(entry, sort_keys=True)
            provenance["entries"] = {**provenance["entries"], f"{split}.json": _sha256(data)}
        if at.sample is not None:
            out[f"{POOL_FOLDER}/{SAMPLE_FILE}"] = _json(at.sample, sort_keys=True)
    if (
        scored.sign is not None
    ):  # the record changed (the round's outcome, re-judged entries): sign it as it is
        provenance = scored.sign(provenance)
    out[f"{scored.folder}/provenance.json"] = _json(provenance, sort_keys=False)
    return out


def judge_round(results: str, dataset: Path, scored: Scored, judging: Judging) -> str:
    """Grow the pool with ``scored``'s run and publish it; the line the worker logs. Never raises for a
    failure of the judge, the pool or the Hub: the request is FINISHED and its scores stand."""
    record: dict[str, Any] = {"pool": f"{POOL_FOLDER}/", "k": K, "judge": None}
    job: JobFiles | None = None
    repo: RepoPool | None = None
    with tempfile.TemporaryDirectory(prefix="ratio-judging-") as tmp:
        try:
            job = JobFiles.read(dataset, scored.out)
            repo = fetch_pool(results, hub.head(results, "dataset"), Path(tmp) / "pool", job.release.manifest)
            judge = judging.judge()
            repo.sample = repo.sample or {"sample": judging.sample, "seed": judging.seed}
            record |= {"judge": judge.settings.describe(), "sample": repo.sample}
            record |= judge_run(job.release, job.runs["test"], repo, judge, repo.sample)
        except Exception as exc:  # noqa: BLE001 - whatever stops the round, the request's scores stand
            record |= {"status": "failed", "reason": renamed_flags(one_line(exc), judging.args)}
        try:
            if job is None or repo is None or (record["status"] == "failed" and not repo.size()):
                files = round_files(scored, record, job, repo)  # the outcome, and entries if a pool is there
                hub.commit(results, "dataset", files, f"Judging of {scored.label} failed")
            else:
                message = f"Judged pool: {scored.label}'s top {K}"
                repo = commit_pool(results, repo, partial(round_files, scored, record, job), message, Path(tmp),
                                   job.release.manifest)  # fmt: skip
        except Exception as exc:  # noqa: BLE001 - as above
            return f"{scored.label}: {POOL_FOLDER}/ not committed ({one_line(exc)}); the scores stand"
    return _outcome_line(scored.label, results, record, repo)


def _outcome_line(label: str, results: str, record: dict[str, Any], repo: RepoPool | None) -> str:
    if record["status"] == "failed":
        return f"{label}: judging failed ({record['reason']}); the scores stand"
    left = (
        f"; {record['left']:,} left unjudged (failed or over --judge-max-cost): the next round asks again"
        if record["left"]
        else ""
    )
    return (
        f"{label}: judged its top {K} on {record['queries']:,} sampled queries: {record['added']:,} verdicts "
        f"added ({record['in_pool']:,} of {record['requests']:,} already in the pool, {record['sent']:,} requests "
        f"sent, ${record['cost_usd']:.4f}){left} -> {results}: {POOL_FOLDER}/ ({repo.size():,} verdicts)"
    )


def _json(doc: dict[str, Any], sort_keys: bool) -> bytes:
    return (json.dumps(doc, indent=2, sort_keys=sort_keys, ensure_ascii=False) + "\n").encode("utf-8")


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()
