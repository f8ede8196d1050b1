"""``ratio leaderboard submit``: check a Hub model, then propose it to the queue as a pull request.

The checks read the model's file list, its small JSON and tokenizer files and its safetensors headers, never its
weights: the revision is pinned to a commit, the repo must be a sentence-transformers model (``modules.json``)
that loads with the stock classes (no remote code: :func:`model_folder.check_model_folder` with the flag off), has
safetensors weights (pickles are refused), and has at most ``max_params`` parameters. The worker repeats the same
checks on the files it downloads (:func:`inspect_model`), since anyone can write a request by hand.
"""

from __future__ import annotations

import re
import tempfile
from dataclasses import dataclass
from datetime import date
from fnmatch import fnmatch
from pathlib import Path

from ratio_bench.core import extras
from ratio_bench.leaderboard import hub, trust
from ratio_bench.leaderboard.hub import LeaderboardError
from ratio_bench.leaderboard.ledger import hub_time, open_request_of
from ratio_bench.leaderboard.limits import MAX_PARAMETERS
from ratio_bench.leaderboard.requests import SETUPS, Request, now_utc, read_queue, request_path, stamp
from ratio_bench.leaderboard.trust import Stage
from ratio_bench.leaderboard.waiting import Wait, wait_for
from ratio_bench.retrieval.model_folder import check_loadable, check_model_folder
from ratio_bench.retrieval.registry import GENERIC, REGISTRY, ModelUnavailableError, saved_prompts

hf_errors = extras.lazy("huggingface_hub.errors")
huggingface_hub = extras.lazy("huggingface_hub")

MAX_MODEL_BYTES = 10 << 30
MAX_CONFIG_BYTES = 64 << 20
MAX_PROMPT_CHARS = 2000  # what a request's prompts may hold (requests.parse_request)
# What is downloaded of a model: configs, tokenizers and safetensors weights; never code or pickles.
CONFIG_PATTERNS = ["*.json", "*.txt", "*.model"]
MODEL_PATTERNS = [*CONFIG_PATTERNS, "*.safetensors"]
PICKLES = re.compile(r"(^|/)(pytorch_model.*\.bin|.*\.(pt|pth|pkl|ckpt))$")


@dataclass(frozen=True)
class ModelCheck:
    """A model that passed the checks: where it is, at which commit, with which prompts, how big."""

    repo_id: str
    revision: str
    sha: str
    setup: str
    query_prompt: str
    document_prompt: str
    parameters: int

    @property
    def label(self) -> str:
        return f"{self.repo_id}@{self.sha[:12]}"


def hub_model(ref: str) -> tuple[str, dict[str, tuple[str, str]] | None]:
    """(Hub repo id, the registry's setups or None) of ``MODEL``: a registered name or a repo id."""
    entry = REGISTRY.get(ref)
    if entry is None:
        hub.RepoRef.parse(ref, "MODEL")  # a valid repo id, or a one-line error
        return ref, None
    kind, _, repo_id = entry.source.partition(":")
    if kind != "hub":
        raise LeaderboardError(
            f"MODEL {ref}: a built-in baseline whose weights do not come from the Hub; it is scored by the "
            "maintainers with `ratio score`. Submit a Hub repository OWNER/NAME"
        )
    if entry.trust_remote_code:
        raise LeaderboardError(
            f"MODEL {ref} ({repo_id}): needs remote code (its config maps classes to its own files), which "
            "the leaderboard never runs"
        )
    return repo_id, entry.setups


def inspect_model(
    ref: str, revision: str | None, setup: str, max_params: int = MAX_PARAMETERS, folder: Path | None = None
) -> ModelCheck:
    """Check ``ref`` at ``revision`` (default: main) without its weights; ``folder``: a full download to check."""
    repo_id, registered = hub_model(ref)
    what = f"MODEL {ref}" + (f" --revision {revision}" if revision else "")
    with hub.hub_errors(what):
        info = hub.api().model_info(repo_id, revision=revision, files_metadata=True)
    sha = info.sha
    sizes = {s.rfilename: s.size or 0 for s in info.siblings or []}
    label = f"{repo_id}@{sha[:12]}"
    if "modules.json" not in sizes:
        raise LeaderboardError(
            f"{label}: not a sentence-transformers model (no modules.json); save it with "
            "SentenceTransformer.save_pretrained and push that folder"
        )
    if not any(p.endswith(".safetensors") for p in sizes):
        pickled = sorted(p for p in sizes if PICKLES.search(p))
        found = f"only {pickled[0]}, a pickle, which is never loaded" if pickled else "none"
        raise LeaderboardError(f"{label}: no safetensors weights ({found}); push model.safetensors")
    weights = sum(size for path, size in sizes.items() if path.endswith(".safetensors"))
    configs = sum(size for path, size in sizes.items() if _matches(path, CONFIG_PATTERNS))
    if weights + configs > MAX_MODEL_BYTES or configs > MAX_CONFIG_BYTES:
        raise LeaderboardError(f"{label}: {weights + configs:,} bytes of model files, over the cap")
    parameters = _parameters(repo_id, sha, label, sorted(p for p in sizes if p.endswith(".safetensors")))
    if parameters > max_params:
        raise LeaderboardError(f"{label}: {parameters:,} parameters, over the cap of {max_params:,}")
    if folder is not None:
        prompts = _check_folder(folder, label, setup, registered)
    else:
        with tempfile.TemporaryDirectory(prefix="ratio-submit-") as tmp:
            with hub.hub_errors(label):
                hub.api().snapshot_download(
                    repo_id, revision=sha, allow_patterns=CONFIG_PATTERNS, local_dir=tmp
                )
            prompts = _check_folder(Path(tmp), label, setup, registered)
    return ModelCheck(repo_id, revision or "main", sha, setup, *prompts, parameters)


def _parameters(repo_id: str, sha: str, label: str, files: list[str]) -> int:
    """Parameters of the repo's safetensors weights, from their headers: the repo's weights at its root (one
    file or an index of shards), else every safetensors file wherever it sits (a Router keeps each route's
    weights in the route's own folder)."""

    try:
        with hub.hub_errors(label):
            try:
                return sum(hub.api().get_safetensors_metadata(repo_id, revision=sha).parameter_count.values())
            except hf_errors.NotASafetensorsRepoError:
                return sum(
                    sum(
                        hub.api()
                        .parse_safetensors_file_metadata(repo_id, f, revision=sha)
                        .parameter_count.values()
                    )
                    for f in files
                )
    except (hf_errors.NotASafetensorsRepoError, hf_errors.SafetensorsParsingError) as e:
        raise LeaderboardError(f"{label}: unreadable safetensors header ({str(e)[:200]})") from None


def _matches(path: str, patterns: list[str]) -> bool:
    return any(fnmatch(path, p) for p in patterns)


def _check_folder(
    folder: Path, label: str, setup: str, registered: dict[str, tuple[str, str]] | None
) -> tuple[str, str]:
    """The folder's refusal (remote code, broken configs, no tokenizer, damaged weights), then the setup's prompts."""
    try:
        check_model_folder(folder, trust_remote_code=False)
        check_loadable(folder)
        saved = saved_prompts(folder)
    except ModelUnavailableError as e:
        reason = str(e).replace(str(folder), label).split("; pass --trust-remote-code")[0]
        if "runs its own code" in reason:
            reason += ", which the leaderboard never runs"
        raise LeaderboardError(reason) from None
    longest = max(saved or ("",), key=len)
    if len(longest) > MAX_PROMPT_CHARS:
        raise LeaderboardError(
            f"{label}: config_sentence_transformers.json: a saved prompt of {len(longest):,} characters; "
            f"at most {MAX_PROMPT_CHARS:,} (a request carries it)"
        )
    setups = dict(registered or {"none": ("", ""), "generic": GENERIC})
    if saved and registered is None:
        setups["saved"] = saved
    if setup not in setups:
        raise LeaderboardError(
            f"--setup {setup}: {label} has no such setup; choose one of {', '.join(sorted(setups))}"
            + (
                ""
                if registered
                else " (recommended: registered models only; saved: a model saved with prompts)"
            )
        )
    return setups[setup]


@dataclass(frozen=True)
class Submission:
    """A request proposed to the queue: the pull request that carries it (the admission merges or closes it)."""

    request: Request
    pr_num: int
    pr_url: str
    wait: Wait | None = None  # where it would stand if admitted now, and the estimated wait

    @property
    def label(self) -> str:
        return self.request.label

    @property
    def path(self) -> str:
        return self.request.path


def submit(
    ref: str,
    revision: str | None,
    setup: str,
    requests_repo: str,
    max_params: int = MAX_PARAMETERS,
    training_cutoff: date | None = None,
    token: str | None = None,
) -> Submission:
    """Check ``ref`` and propose it to the queue as a pull request on ``requests_repo`` (submitters never write
    the queue: the maintainers' admission re-checks and merges it). The submitter is the Hub user of ``token``
    (default: the saved login), never a name typed in. ``training_cutoff``: the last day of the model's training
    data, as the submitter states it (the worker's entries record it, so the board can tell clean snapshot
    scores from contaminated ones)."""
    if setup not in SETUPS:
        raise LeaderboardError(f"--setup {setup}: choose one of {', '.join(SETUPS)}")
    checked = inspect_model(ref, revision, setup, max_params)
    submitter = whoami(token)
    path = request_path(checked.repo_id, checked.sha, setup)
    queue = read_queue(requests_repo)
    refused = trust.check(Stage.SUBMIT, trust.Submitting(checked.label, checked.repo_id, path, queue))
    if refused:
        raise LeaderboardError(refused)
    mine = open_request_of(requests_repo, submitter, path)
    if mine is not None:
        raise LeaderboardError(f"already proposed by you in pull request #{mine} of {requests_repo}: {path}")
    request = Request(
        checked.repo_id,
        checked.revision,
        checked.sha,
        setup,
        checked.query_prompt,
        checked.document_prompt,
        "float32",
        submitter,
        stamp(now_utc()),  # shown only: the queue's order is the Hub's admission time
        parameters=checked.parameters,
        training_cutoff=training_cutoff.isoformat() if training_cutoff else None,
    )

    with hub.hub_errors(f"--requests {requests_repo}"):
        info = hub.api().create_commit(
            requests_repo,
            [huggingface_hub.CommitOperationAdd(path, request.to_json())],
            commit_message=f"Submit {request.label}",
            repo_type="dataset",
            create_pr=True,
            token=token,
        )
    return Submission(request, info.pr_num, info.pr_url, wait_for(queue, hub_time(requests_repo)))


def whoami(token: str | None = None) -> str:
    """The Hub user of ``token`` (default: the saved login): the only name a submission carries."""

    try:
        with hub.hub_errors("whoami"):
            return hub.api().whoami(token=token)["name"]
    except (hf_errors.LocalTokenNotFoundError, LeaderboardError):
        raise LeaderboardError(
            "no Hub login to name the submitter: set HF_TOKEN (or `hf auth login`) to your own token"
        ) from None
