"""One evaluation, in a process of its own: ``python -m ratio_bench.leaderboard.job REQUEST PATH DATASET OUT``.

The worker runs each claimed request here, so that a stranger's model that hangs, exhausts memory or crashes the
interpreter costs one request, not the worker: the worker kills the job at its deadline (before its lease ends)
and dies with it (the job is killed when its worker is). The job downloads the model at the pinned commit (configs,
tokenizers and safetensors only), repeats the submission checks on those files, scores the release's test split,
each of its test snapshots (a living benchmark's verified scores are per snapshot) and silver when it has queries through :func:`ratio_bench.evaluation.scoring.engine.score` (the model loaded once for all), the code of ``ratio
score``, and writes under OUT: ``<split>.json`` (the leaderboard entry), ``mteb/<split>/<Task>.json`` and
``runs/<split>/`` (the saved run). A failure writes one line to ``OUT/failure.txt`` and exits 1.
"""

from __future__ import annotations

import argparse
import sys
import traceback
from dataclasses import replace
from datetime import date
from pathlib import Path

from ratio_bench.core import cutoffs
from ratio_bench.core.errors import RatioError
from ratio_bench.core.io import write_json
from ratio_bench.core.snapshots import parse_split
from ratio_bench.dataset.custody import Custody, merged, withheld_of
from ratio_bench.dataset.release import Release
from ratio_bench.evaluation.entry.model_meta import MAX_CARD_BYTES
from ratio_bench.evaluation.entry.record import MAIN_SCORE, Entry, Withheld
from ratio_bench.evaluation.scoring import engine
from ratio_bench.evaluation.scoring.uncertainty import interval
from ratio_bench.leaderboard import hub, trust
from ratio_bench.leaderboard.failures import classify
from ratio_bench.leaderboard.notices import reproduce_command
from ratio_bench.leaderboard.requests import parse_request
from ratio_bench.leaderboard.submit import MODEL_PATTERNS, inspect_model
from ratio_bench.leaderboard.trust import Stage
from ratio_bench.retrieval.cache import EmbeddingCache
from ratio_bench.retrieval.registry import ModelSetup, saved_relation_prompts
from ratio_bench.retrieval.retriever import load_retriever

FAILURE = "failure.txt"
FAILURE_CLASS = (
    "failure_class.txt"  # infrastructure or model (failures.classify()): whether the worker retries
)
SUMMARY = "job.json"
SUBMITTER = "stated by the submitter (ratio leaderboard submit --training-cutoff)"


def run_job(
    request_file: Path,
    path: str,
    dataset: Path,
    out: Path,
    *,
    max_params: int,
    batch_size: int = 64,
    cache_dir: Path | None = None,
    splits: tuple[str, ...] | None = None,
    custody: Path | None = None,
) -> None:
    """Score the request in ``request_file`` (its ``path`` in the requests repo) into ``out`` (``splits``: only
    these, as ``ratio leaderboard reproduce`` asks; default every split a job scores). Each entry names the command
    that reproduces it."""
    request = parse_request(request_file.read_bytes(), path)
    with hub.hub_errors(request.label):
        folder = Path(
            hub.api().snapshot_download(request.model, revision=request.sha, allow_patterns=MODEL_PATTERNS)
        )
    checked = inspect_model(request.model, request.sha, request.setup, max_params, folder=folder)
    refused = trust.check(Stage.JOB, trust.Scoring(request, checked.query_prompt, checked.document_prompt))
    if refused:
        raise hub.LeaderboardError(refused)
    fetch_card(request.model, request.sha)  # after the checks: the card only informs the entry's model_meta
    setup = ModelSetup(
        f"{request.model}:{request.setup}",
        "dense",
        str(folder),
        request.setup,
        request.query_prompt,
        request.document_prompt,
        query_prompts=tuple(saved_relation_prompts(folder).items()) if request.setup == "saved" else (),
        cutoff=cutoffs.Cutoff(date.fromisoformat(request.training_cutoff), SUBMITTER)
        if request.training_cutoff
        else cutoffs.unknown("not stated by the submitter (ratio leaderboard submit --training-cutoff)"),
    )
    release = Release.open(dataset)
    pool = engine.judged_pool_for(dataset, release.manifest, None, "mined")
    cache = EmbeddingCache(cache_dir)
    retriever = load_retriever(setup, cache, batch_size)  # one load for the public splits and the withheld
    scored = (
        engine.score(  # test and every snapshot must load (a verified job never skips one); silver may not
            setup,
            release,
            splits or job_splits(dataset),
            cache=cache,
            batch_size=batch_size,
            keep_runs=True,
            pool=pool,
            optional=() if splits else ("silver",),  # a split reproduce asks for must load
            retriever=retriever,
        )
    )
    held = withheld_blocks(setup, release, custody, cache, batch_size, retriever) if custody else {}
    summary = {  # per split: its ranking; the model load and the encoding are the engine's, once for all
        "seconds": {},
        "n_queries": {},
        "engine": {
            "seconds": round(scored.seconds, 3),
            "model_loads": scored.model_loads,
            "texts_encoded": scored.texts_encoded,
            "texts_cached": scored.texts_cached,
        },
    }
    for split_score in scored.splits:
        split, result = split_score.split, split_score.result
        signed = replace(  # the job's own fields, on the engine's record
            split_score.entry,
            reproduce=reproduce_command(
                request.model, request.sha, request.setup, split, release.name, release.version
            ),
            # the newest withheld split's figures ride on the test entry, signed with it
            withheld=held[max(held, key=parse_split)] if split == "test" and held else None,
        )
        split_score = replace(split_score, entry=signed)
        engine.write_outputs(split_score, out / f"{split}.json", mteb_dir=out / "mteb" / split)
        engine.save_split_run(split_score, out / "runs", per_split=True)
        summary["seconds"][split] = round(result.seconds, 3)
        summary["n_queries"][split] = result.n_queries
    write_json(out / SUMMARY, summary)


def withheld_blocks(setup, release, custody: Path, cache, batch_size: int, retriever) -> dict[str, Withheld]:
    """{split: the entry's ``withheld`` block} of every split the release withholds, scored on the release with
    its custody folder put back (:func:`ratio_bench.dataset.custody.merged`, a temporary folder): aggregate
    metrics, queries, MRR@10's bootstrap interval and the split's SHA-256; the run, its per-query ranks and its
    mteb files are dropped here and never leave this process."""
    splits = list(withheld_of(release.manifest))
    if not splits:
        return {}
    with merged(release, Custody.open(custody)) as whole:
        scored = engine.score(setup, whole, splits, cache=cache, batch_size=batch_size, retriever=retriever)
    return {s.split: withheld_block(s.entry) for s in scored.splits}


def withheld_block(entry: Entry) -> Withheld:
    """The ``withheld`` block of an entry scored on a withheld split (its aggregates, none of its per-query data)."""
    bounds = {rel: interval(entry, rel, MAIN_SCORE) for rel in entry.results}
    return Withheld(
        entry.split,
        entry.dataset.split_sha256 or "",
        entry.results,
        {rel: entry.n_queries[rel] for rel in entry.results},
        {rel: (round(b.low, 6), round(b.high, 6)) for rel, b in bounds.items() if b is not None},
        entry.n_candidates,
    )


def fetch_card(model: str, sha: str) -> None:
    """The model's card (``README.md``) into its snapshot folder beside the weights, for the licence and base model
    of the entry's ``model_meta``; skipped when it is missing or over the size a card is read at."""
    size = hub.tree(model, "model", sha).get("README.md")
    if size is not None and size <= MAX_CARD_BYTES:
        with hub.hub_errors(f"{model}: README.md"):
            hub.api().hf_hub_download(model, "README.md", revision=sha)


def job_splits(dataset: Path) -> tuple[str, ...]:
    """What a job scores: test, the release's snapshots in time order (each a verified entry of its own, so a
    submission is marked clean or not per snapshot), then silver."""
    return ("test", *Release.open(dataset).snapshots, "silver")


def one_line(exc: BaseException) -> str:
    """The reason a request failed, as its submitter reads it: the message of a refusal, else the exception."""
    text = str(exc) if isinstance(exc, RatioError) else f"{type(exc).__name__}: {exc}"
    return " ".join(text.split())[:400] or type(exc).__name__


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m ratio_bench.leaderboard.job")
    p.add_argument("request", type=Path, help="the request file, as the worker read it")
    p.add_argument("path", help="its path in the requests repository")
    p.add_argument("dataset", type=Path)
    p.add_argument("out", type=Path)
    p.add_argument("--max-params", type=int, required=True)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--cache-dir", type=Path)
    p.add_argument("--custody", type=Path, help="the release's custody folder: score its withheld split too")
    args = p.parse_args(argv)
    try:
        run_job(
            args.request,
            args.path,
            args.dataset,
            args.out,
            max_params=args.max_params,
            batch_size=args.batch_size,
            cache_dir=args.cache_dir,
            custody=args.custody,
        )
    except Exception as exc:  # noqa: BLE001 - any failure of a stranger's model is that request's FAILED reason
        traceback.print_exc()
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / FAILURE).write_text(one_line(exc) + "\n", encoding="utf-8")
        (args.out / FAILURE_CLASS).write_text(classify(exc) + "\n", encoding="utf-8")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
