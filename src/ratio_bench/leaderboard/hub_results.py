"""Verified results of a results repository, and the Hub pull request that puts them on a model's page.

A results repository holds one folder per scored request, ``<org>/<model>/<sha>/<setup>/`` (see
:mod:`.worker`); :func:`repo_results` reads every entry with the board's own checks and mark, and names its model,
commit and setup. Which entries count as verified is decided in one place, :func:`is_verified`, so that the way a
run is vouched for (today the worker's provenance record, see :mod:`.board`) can change without touching the
exporters. :func:`eval_results_for` turns one model's verified entries into the Hub's ``.eval_results`` files
(:mod:`ratio_bench.evaluation.entry.hub_eval`), linking the result folder at the repository's commit, and
:func:`open_eval_results_pr` opens the pull request that adds them to the model repo.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ratio_bench.core import extras
from ratio_bench.core.io import atomic_path
from ratio_bench.dataset.release import Release
from ratio_bench.evaluation.entry import hub_eval
from ratio_bench.evaluation.entry.record import Entry
from ratio_bench.leaderboard import board, hub
from ratio_bench.leaderboard.hub import LeaderboardError, RepoRef
from ratio_bench.leaderboard.provenance import PROVENANCE
from ratio_bench.leaderboard.requests import SETUPS, SHA

huggingface_hub = extras.lazy("huggingface_hub")


def is_verified(entry: Entry) -> bool:
    """Whether an entry loaded from a results repository is verified (the loader's mark, never the file's)."""
    return entry.status == "verified"


@dataclass(frozen=True)
class RepoResult:
    """One entry of a results repository: where it is, the entry (with its mark) and the model it scored."""

    path: str
    entry: Entry
    model: str  # a Hub model id for a worker's entry; the entry's own model name otherwise
    revision: str | None  # the model commit a worker scored (None: unknown)
    setup: str | None

    @property
    def folder(self) -> str:
        return self.path.rpartition("/")[0]

    @property
    def verified(self) -> bool:
        return is_verified(self.entry)


@dataclass(frozen=True)
class RepoResults:
    repo_id: str
    commit: str
    results: tuple[RepoResult, ...]

    def folder_url(self, folder: str) -> str:
        """The result folder on the Hub, pinned to the commit read (a later push cannot change what it shows)."""
        return f"{hub.api().endpoint}/datasets/{self.repo_id}/tree/{self.commit}/{folder}"


def repo_results(ref: RepoRef, requests: str | None = None) -> RepoResults:
    """Every entry of the results repository ``ref`` (at its revision, default main), read and marked by the
    board's own loader (:func:`.board.read_entries`; ``requests``: the queue verified entries must be FINISHED in,
    None: nothing is verified), with the model, commit and setup of a worker's folder. A file that is no entry is
    left out (the board lists it as rejected)."""
    repo = board.RepoReader.open(ref, requests)
    loaded, _ = board.read_entries(repo)
    results = []
    for path, entry in loaded:
        parts = path.split("/")
        worker_folder = len(parts) == 5 and SHA.match(parts[2]) and parts[3] in SETUPS
        if worker_folder and entry.model == f"{parts[0]}/{parts[1]}:{parts[3]}":
            results.append(RepoResult(path, entry, f"{parts[0]}/{parts[1]}", parts[2], parts[3]))
        else:
            results.append(RepoResult(path, entry, entry.model, None, None))
    return RepoResults(ref.repo_id, repo.sha, tuple(results))


def provenance_of(results: RepoResults, folder: str) -> dict[str, Any]:
    """The provenance record of a worker's result folder ({} when it cannot be read as one)."""
    try:
        doc = hub.strict_json(
            hub.read_small(results.repo_id, "dataset", results.commit, f"{folder}/{PROVENANCE}")
        )
    except (ValueError, LeaderboardError):
        return {}
    return doc if isinstance(doc, dict) else {}


@dataclass(frozen=True)
class ModelEvalResults:
    """The ``.eval_results`` files of one model commit (its verified entries, every setup)."""

    model: str
    revision: str
    files: dict[str, bytes]
    folders: tuple[str, ...]  # the result folders they link to


def eval_results_for(
    results: RepoResults, dataset_id: str, tasks: list[hub_eval.BenchmarkTask]
) -> list[ModelEvalResults]:
    """Per model commit, the ``.eval_results`` files of its verified entries (one file per relation and setup,
    one item per split with a task in ``tasks``), each item linking its result folder at the commit read."""
    by_folder: dict[str, list[RepoResult]] = {}
    for result in results.results:
        if result.verified and result.revision and result.entry.scored_on is None:
            by_folder.setdefault(result.folder, []).append(result)
    by_model: dict[tuple[str, str], ModelEvalResults] = {}
    for folder, group in sorted(by_folder.items()):
        first = group[0]
        record = provenance_of(results, folder)
        if scored_commit(record, dataset_id) is None:
            continue  # scored on another dataset, or a local release: no claim about this benchmark's commit
        source = hub_eval.ResultSource(
            first.model, first.revision, first.setup, results.folder_url(folder),
            record.get("scored_at") if isinstance(record.get("scored_at"), str) else None,
        )  # fmt: skip
        files = hub_eval.eval_results_files(
            [r.entry for r in group], dataset_id, _dataset_revision(record, first.entry), source, tasks
        )
        key = (first.model, first.revision)
        old = by_model.get(key, ModelEvalResults(first.model, first.revision, {}, ()))
        by_model[key] = ModelEvalResults(
            first.model, first.revision, old.files | files, (*old.folders, folder)
        )
    return [m for m in by_model.values() if m.files]


def scored_commit(record: dict[str, Any], dataset_id: str) -> str | None:
    """The commit of ``dataset_id`` the worker scored (its signed ``dataset``, ``repo@sha``); None when it scored
    another dataset or a local release (whose entries name a version, not a commit of the benchmark)."""
    source = record.get("dataset")
    if not isinstance(source, str):
        return None
    repo, _, sha = source.rpartition("@")
    return sha if repo == dataset_id and SHA.match(sha) else None


def _dataset_revision(record: dict[str, Any], entry: Entry) -> str:
    """The dataset commit the worker read (``repo@sha`` in its record; :func:`scored_commit` checked it)."""
    return str(record["dataset"]).rpartition("@")[2]


@dataclass(frozen=True)
class OpenedPR:
    url: str
    num: int | None


def open_eval_results_pr(
    model_repo: str, commit: str, files: dict[str, bytes], *, results_link: str | None = None,
    benchmark: str = "ratio-bench/ratio", request_link: str | None = None,
) -> OpenedPR:  # fmt: skip
    """Open a pull request on ``model_repo`` adding ``files`` (``.eval_results/*.yaml``, checked again here),
    the scores of its commit ``commit``; the description links the verified result folder and, from a worker, the
    request's pull request on the queue. The model's authors merge it or not: until then the Hub shows the scores
    as community-provided."""

    if not files:
        raise LeaderboardError(f"{model_repo}: no eval results to propose")
    for path, data in files.items():
        folder, _, name = path.rpartition("/")
        if folder != hub_eval.EVAL_RESULTS_FOLDER or not name.endswith(".yaml"):
            raise LeaderboardError(f"{model_repo}: {path} is not a file of {hub_eval.EVAL_RESULTS_FOLDER}/")
        hub_eval.validate_eval_results(data, path)
    title = f"Add Ratio evaluation results ({commit[:12]})"
    body = (
        f"Scores of `{model_repo}` at commit `{commit}` on the [Ratio benchmark]"
        f"({hub.api().endpoint}/datasets/{benchmark}), in the Hub's `.eval_results` format "
        "(https://huggingface.co/docs/hub/eval-results). Each score was computed by a Ratio leaderboard worker"
        + (f"; the verified run: {results_link}" if results_link else "")
        + (f"; the submission: {request_link}" if request_link else "")
        + ". Merge to show them on the model page; close to decline."
    )
    operations = [huggingface_hub.CommitOperationAdd(path, data) for path, data in sorted(files.items())]
    with hub.hub_errors(f"model {model_repo}"):
        info = hub.api().create_commit(
            model_repo, operations, commit_message=title, commit_description=body, repo_type="model",
            create_pr=True,
        )  # fmt: skip
    return OpenedPR(str(info.pr_url), info.pr_num)


def write_eval_results(
    results_repo: str, release: Path, benchmark: str, out: Path, requests: str | None = None
) -> tuple[RepoResults, list[ModelEvalResults]]:
    """``ratio leaderboard eval-results``: the release's ``eval.yaml`` and each model commit's ``.eval_results``
    files (under ``<model>/<commit>/``) written to ``out``, for review before any pull request. ``requests``: the
    queue whose FINISHED requests make entries verified (None: nothing is, so no model gets files)."""
    manifest = Release.open(release).manifest
    results = repo_results(RepoRef.parse(results_repo, "--results"), requests)
    models = eval_results_for(results, benchmark, hub_eval.benchmark_tasks(manifest))
    files = {hub_eval.EVAL_FILE: hub_eval.eval_yaml(manifest)}
    files |= {f"{m.model}/{m.revision}/{path}": data for m in models for path, data in m.files.items()}
    for path, data in files.items():
        (out / path).parent.mkdir(parents=True, exist_ok=True)
        with atomic_path(out / path) as tmp:
            tmp.write_bytes(data)
    return results, models


def open_eval_results_prs(
    results: RepoResults, models: list[ModelEvalResults], benchmark: str
) -> list[tuple[str, OpenedPR]]:
    """One pull request per model commit, linking its first verified result folder."""
    return [
        (m.model, open_eval_results_pr(m.model, m.revision, m.files, results_link=results.folder_url(m.folders[0]),
                                       benchmark=benchmark))
        for m in models
    ]  # fmt: skip


def propose_eval_results(
    results_repo: str, model: str, revision: str, release: Path, benchmark: str = "ratio-bench/ratio",
    *, requests: str, request_link: str | None = None,
) -> OpenedPR | None:  # fmt: skip
    """What the worker calls after publishing a result: the verified results of ``model`` at ``revision`` in the
    results repository (read again with the queue ``requests``, so the pull request carries only what the board
    verifies) proposed to the model repository; None when it has none on a benchmark task. ``request_link``: the
    request's pull request on the queue, which the description links back to."""
    results = repo_results(RepoRef.parse(results_repo, "--results"), requests)
    tasks = hub_eval.benchmark_tasks(Release.open(release).manifest)
    for found in eval_results_for(results, benchmark, tasks):
        if (found.model, found.revision) == (model, revision):
            link = results.folder_url(found.folders[0])
            return open_eval_results_pr(
                model,
                revision,
                found.files,
                results_link=link,
                benchmark=benchmark,
                request_link=request_link,
            )
    return None
