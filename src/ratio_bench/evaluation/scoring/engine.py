"""The one scoring engine: a model against any splits of a release, into leaderboard entries.

``ratio score`` (any ``--split``, ``snapshots`` included), the leaderboard worker's job, ``ratio index`` and the
mteb bridge score through :func:`score`, so every path measures the same way and pays the same costs once:
the model is resolved and loaded once, its weights hashed once (:func:`ratio_bench.retrieval.registry.file_hashes`),
and the union of every split's pool and queries encoded once, in full batches, into the content-addressed
embedding cache (:mod:`ratio_bench.retrieval.cache`), from which each split's index and queries are then read.
A snapshot pool that shares texts with the test pool, an appended month or a re-score encodes only the texts
the cache does not hold.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from ratio_bench.core import cutoffs, extras
from ratio_bench.core.errors import UsageError
from ratio_bench.core.io import report_console, write_json
from ratio_bench.core.relations import RELATIONS
from ratio_bench.dataset.release import DatasetError, Release
from ratio_bench.evaluation.entry import record
from ratio_bench.evaluation.entry.model_meta import reset_peak_memory
from ratio_bench.evaluation.entry.record import Entry
from ratio_bench.evaluation.scoring.evaluate import (
    ScoreResult,
    SplitData,
    load_split,
    measured_meta,
    rank,
    sample_queries,
)
from ratio_bench.evaluation.scoring.metrics import SET_METRICS
from ratio_bench.evaluation.scoring.pool import POOL_MANIFEST, JudgedPool, default_pool_dir, judged_scores
from ratio_bench.evaluation.scoring.results import (
    TASK_NAMES,
    check_results_path,
    leaderboard_entry,
    model_identity,
    mteb_results,
)
from ratio_bench.evaluation.scoring.runs import save_run
from ratio_bench.retrieval.cache import EmbeddingCache
from ratio_bench.retrieval.registry import ModelSetup, resolve
from ratio_bench.retrieval.retriever import Retriever, load_retriever

Say = Callable[[str], None]
SNAPSHOTS = "snapshots"  # --split snapshots: every test snapshot of the release, one entry per split


@dataclass(frozen=True)
class Sample:
    """``--sample``: ``queries`` seeded queries per relation against the whole pool (a fast, unranked look)."""

    queries: int
    seed: int = 0

    def as_entry(self) -> record.Sample:
        """What the entry records of it (its ``sample`` block)."""
        return record.Sample(self.queries, self.seed)


@dataclass
class SplitScore:
    """One split scored: its data, the run's result and the leaderboard entry made from it."""

    split: str
    data: SplitData
    result: ScoreResult
    entry: Entry


@dataclass
class Scored:
    """What :func:`score` did: every split's score, and what it cost (loads, texts encoded, time)."""

    setup: ModelSetup
    splits: list[SplitScore]
    seconds: float = 0.0
    model_loads: int = 0
    texts_encoded: int = 0
    texts_cached: int = 0
    skipped: list[str] = field(default_factory=list)  # optional splits the release does not have


def judged_pool_for(release: str | Path, manifest: dict, given: Path | None, qrels: str) -> JudgedPool | None:
    """The judged pool to score against or report coverage of (``given``, else the release's own); None when
    there is none and none is asked, a one-line error when one is asked and missing."""
    path = given or default_pool_dir(release)
    if (path / POOL_MANIFEST).exists():
        return JudgedPool(path, manifest)
    if qrels != "mined":
        raise UsageError(
            f"--qrels {qrels}: no judged pool at {path}; run `ratio judge candidates` or give --pool DIR"
        )
    if given:
        raise UsageError(f"--pool {given}: no judged pool there ({POOL_MANIFEST} missing)")
    return None


def load_splits(
    release: Release, splits: Sequence[str], relations: Sequence[str], optional: Collection[str]
) -> tuple[dict[str, SplitData], list[str]]:
    """Each split's data; an ``optional`` split the release lacks (silver before it is built) is skipped."""
    datas, skipped = {}, []
    for split in splits:
        try:
            datas[split] = load_split(release, split, relations)
        except DatasetError:
            if split not in optional:
                raise
            skipped.append(split)
    return datas, skipped


def score(
    model: ModelSetup | str,
    release: str | Path | Release,
    splits: Sequence[str],
    *,
    relations: Sequence[str] = RELATIONS,
    cache: EmbeddingCache | None = None,
    batch_size: int = 64,
    keep_runs: bool = False,
    pool: JudgedPool | None = None,
    qrels: str = "mined",
    submitter: str | None = None,
    sample: Sample | None = None,
    optional: Collection[str] = (),
    retriever: Retriever | None = None,
    say: Say | None = None,
) -> Scored:
    """Score ``model`` on every split of ``splits`` (in order) into leaderboard entries.

    ``pool``: the judged pool whose figures (and coverage) each entry records; ``optional``: splits skipped
    when the release lacks them; ``retriever``: one already loaded (weights in memory), else it is loaded here,
    once. ``say`` prints judged coverage (default: the report console)."""
    start = time.perf_counter()
    setup = resolve(model) if isinstance(model, str) else model
    opened = release if isinstance(release, Release) else Release.open(release)
    cache = cache or EmbeddingCache()
    encoded, cached = cache.texts_encoded, cache.texts_cached
    datas, skipped = load_splits(opened, splits, relations, optional)
    if sample is not None:
        datas = {s: sample_queries(d, sample.queries, sample.seed) for s, d in datas.items()}
    identity = model_identity(setup)  # the weights hashed once, shared with the encoder's cache key
    loads = 0
    reset_peak_memory()  # the entries' peak memory is this run's
    if retriever is None:
        retriever, loads = load_retriever(setup, cache, batch_size), 1
    retriever.warm(
        [t for d in datas.values() for t in d.corpus_texts],
        {rel: [t for d in datas.values() for t in d.queries[rel].texts] for rel in relations},
    )
    meta = measured_meta(setup, retriever)  # every split's texts were encoded above: one measurement
    out = []
    for split, data in datas.items():
        result = rank(retriever, setup.name, data, cache, keep_runs=keep_runs or pool is not None)
        result = replace(result, model_meta=meta)
        judged = judged_figures(result, data, pool, qrels, say or _console()) if pool is not None else None
        entry = leaderboard_entry(
            result,
            data.manifest,
            split,
            setup.tuned_for,
            judged,
            sample.as_entry() if sample else None,
            identity=identity,
            submitter=submitter,
            cutoff=setup.cutoff,
            candidates=len(data.corpus_ids),
            hub=opened.hub,
        )
        out.append(SplitScore(split, data, result, entry))
    return Scored(
        setup,
        out,
        time.perf_counter() - start,
        loads,
        cache.texts_encoded - encoded,
        cache.texts_cached - cached,
        skipped,
    )


def _console() -> Say:
    return report_console().print


def judged_figures(
    result: ScoreResult, data: SplitData, pool: JudgedPool, qrels: str, say: Say
) -> dict | None:
    """The run's judged figures per relation (for its leaderboard entry), said: judged@10 coverage, and with
    judged qrels that agreement's metrics on the judged queries."""

    judged, cover = {}, []
    for rel, (qids, _, golds) in data.queries.items():
        block = (
            judged_scores(pool, rel, result.runs[rel], dict(zip(qids, golds, strict=True))) if qids else None
        )
        if block is None:
            continue
        judged[rel] = block
        coverage = f"judged@10 {100 * block['coverage_at_10']:.1f}% of {block['queries']} judged queries"
        cover.append(f"{rel} {coverage}")
        if qrels != "mined":
            m = block[qrels.removeprefix("judged-")]
            say(
                f"{result.model} {rel} ({qrels}): "
                + " ".join(f"{short}@10 {100 * m[f'{name}_at_10']:.1f}" for name, short in SET_METRICS)
                + f" | {coverage}"
            )
    if cover:
        say(f"{result.model}: coverage of the judged pool {pool.path}: {', '.join(cover)}")
    elif qrels != "mined":
        say(
            f"{result.model} ({qrels}): the pool {pool.path} has judged none of these queries (it was sampled "
            "from another split or other relations); only mined-gold results"
        )
    return judged or None


def score_via_mteb(
    setup: ModelSetup,
    release: str | Path,
    split: str,
    relations: Sequence[str],
    *,
    cache: EmbeddingCache | None = None,
    batch_size: int = 64,
    reuse_embeddings: bool = False,
    submitter: str | None = None,
    hub: str | None = None,
) -> SplitScore:
    """One split through ``mteb.evaluate`` (its encoder answered from the embedding cache), as an entry;
    ``hub``: the Hub repository and commit the release folder was downloaded from."""
    mteb_tasks = extras.load("ratio_bench.evaluation.scoring.mteb_tasks")  # the eval extra
    data = load_split(release, split, relations)
    result = mteb_tasks.score_with_mteb(
        setup,
        release,
        split,
        relations,
        batch_size=batch_size,
        reuse_embeddings=reuse_embeddings,
        cache=cache,
    )
    entry = leaderboard_entry(
        result,
        data.manifest,
        split,
        setup.tuned_for,
        identity=model_identity(setup),
        submitter=submitter,
        cutoff=setup.cutoff,
        candidates=len(data.corpus_ids),
        hub=hub,
    )
    return SplitScore(split, data, result, entry)


def split_outs(release: Release, split: str, out: Path | None) -> dict[str, Path | None]:
    """Each split ``ratio score --split`` names, with its ``--out``: one split, or (``--split snapshots``) each
    of the release's snapshots in time order, ``--out`` then a folder that gets ``<split>.json`` per snapshot."""
    if split != SNAPSHOTS:
        # an --out without .json would put the entry at NAME and its MTEB results in NAME/mteb/: a collision
        if out is not None and out.suffix != ".json":
            raise UsageError(
                f"--out {out}: name the entry's .json file (e.g. --out {out}.json); its MTEB task results go "
                f"into {out.with_suffix('')}/mteb/ beside it"
            )
        return {split: out}
    if not release.snapshots:
        raise UsageError(
            f"--split snapshots: {release.shown} has no test snapshots; build it with a `snapshots:` block in its "
            "config (README: Snapshots)"
        )
    if out is not None and (out.is_file() or (not out.is_dir() and out.suffix == ".json")):
        raise UsageError(f"--out {out}: with --split snapshots, give a folder (one entry per snapshot)")
    return {name: out and out / f"{name}.json" for name in release.snapshots}


def per_model_path(path: Path, model: str, n_models: int) -> Path:
    """``path`` itself for one model; ``<stem>-<model><suffix>`` beside it when several are scored."""
    if n_models == 1:
        return path
    return path.with_name(f"{path.stem}-{model.replace(':', '_').replace('/', '_')}{path.suffix}")


def results_paths(out: Path | None, models: Sequence[str]) -> list[Path]:
    """The leaderboard entries and MTEB task results ``--out`` writes for ``models``."""

    paths = []
    for model in models if out else []:
        entry = per_model_path(out, model, len(models))
        paths += [entry, *(entry.with_suffix("") / "mteb" / f"{t}.json" for t in TASK_NAMES.values())]
    return paths


def write_outputs(scored: SplitScore, out: Path, mteb_dir: Path | None = None) -> list[Path]:
    """The entry at ``out`` and its MTEB task results in ``mteb_dir`` (default ``<out stem>/mteb/``; the
    leaderboard job's folder keeps one per split), each checked to be ours first. ``ratio score`` and the job
    both write through here."""

    mteb_dir = out.with_suffix("") / "mteb" if mteb_dir is None else mteb_dir
    docs = {
        mteb_dir / f"{task}.json": doc
        for task, doc in mteb_results(scored.result, scored.data.manifest, scored.split).items()
    }
    for path in (out, *docs):
        check_results_path(path)
    write_json(out, scored.entry.to_json())
    for path, doc in docs.items():
        write_json(path, doc)
    return [out, *docs]


def save_split_run(scored: SplitScore, folder: Path, per_split: bool) -> Path:
    """The split's saved run (ranked lists, for ``ratio judge`` and analyses) in ``folder``, or in a folder of
    its own under it when one command scores several splits (``per_split``); returns where it went."""

    run_dir = folder / scored.split if per_split else folder
    save_run(scored.result, scored.data.manifest, scored.split, run_dir)
    return run_dir


def with_stated_cutoff(setup: ModelSetup, stated, source: str) -> ModelSetup:
    """``setup`` with the cut-off its scorer states (recorded over what its registry entry says)."""

    return replace(setup, cutoff=cutoffs.stated(stated, source, setup.cutoff))
