"""``ratio leaderboard init ORG``: the two dataset repositories a leaderboard service runs on, created once.

A submitter needs to know where to queue a model and where its result will appear; a maintainer needs both
repositories to exist before the first ``submit`` or worker. This creates ``ORG/requests`` (the queue) and
``ORG/results`` (what the workers publish) as dataset repositories, each with a README that says what it holds
and a POLICY.md that says what is accepted, and the JSON file that says what each repository is: the queue's
``policy.json`` (schema ``ratio-queue-policy/1``; empty lists of maintainers and workers: every writer of main,
until the maintainers name them) and the results repository's ``trusted_workers.json`` (no key listed yet: add
one with ``ratio leaderboard workers add``), so that ``admit``, ``submit`` and ``worker`` refuse a repository
given for the other. It is idempotent and never overwrites: a file the maintainers have since edited is kept,
and a second run only adds what is missing. Neither JSON file sits at a request's or an entry's path.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from ratio_bench.core.errors import UsageError
from ratio_bench.leaderboard import hub
from ratio_bench.leaderboard.ledger import MAX_PENDING, MAX_PER_DAY, POLICY, POLICY_SCHEMA
from ratio_bench.leaderboard.provenance import TRUSTED_SCHEMA, TRUSTED_WORKERS
from ratio_bench.leaderboard.submit import MAX_PARAMETERS

REQUESTS_NAME, RESULTS_NAME, CUSTODY_NAME = "requests", "results", "custody"
OFFICIAL_ORG = "ratio-bench"
_ORG = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,95}")


@dataclass(frozen=True)
class CreatedRepo:
    repo_id: str
    url: str
    written: tuple[str, ...]  # files this run added
    kept: tuple[str, ...]  # files that were there already (left as they are)


def repo_ids(org: str) -> tuple[str, str]:
    """``(ORG/requests, ORG/results)``; the official service's are ``ratio-bench/requests`` and
    ``ratio-bench/results``."""
    if not _ORG.fullmatch(org):
        raise UsageError(
            f"ORG {org!r}: a Hub user or organisation name (letters, digits, '.', '_', '-'; no '/'), e.g. ratio-bench"
        )
    return f"{org}/{REQUESTS_NAME}", f"{org}/{RESULTS_NAME}"


def results_for(requests: str) -> str:
    """The results repository that goes with a requests queue under :func:`repo_ids`' naming
    (``ORG/requests`` -> ``ORG/results``; ``ORG/ratio-requests`` -> ``ORG/ratio-results``)."""
    owner, _, name = requests.partition("/")
    return (
        f"{owner}/{name.removesuffix(REQUESTS_NAME)}{RESULTS_NAME}"
        if name.endswith(REQUESTS_NAME)
        else f"{owner}/{RESULTS_NAME}"
    )


def custody_id(org: str) -> str:
    """``ORG/custody``: the private dataset repo of the release's withheld split (its custody folder)."""
    repo_ids(org)  # the same check of ORG
    return f"{org}/{CUSTODY_NAME}"


def init_repos(org: str, private: bool = False) -> tuple[CreatedRepo, CreatedRepo, CreatedRepo]:
    """Create (or complete) the requests and results repositories of ``org``, and its custody repository, which
    is always private (only the maintainers and their workers' tokens read it)."""
    requests, results = repo_ids(org)
    custody = custody_id(org)
    return (
        _ensure(requests, requests_files(requests, results), private),
        _ensure(results, results_files(requests, results), private),
        _ensure(custody, custody_files(custody, results), True),
    )


def _ensure(repo_id: str, files: dict[str, str], private: bool) -> CreatedRepo:
    """The dataset repo exists afterwards and holds every file of ``files`` (those already there untouched); a
    repo that must be private and is not is refused before anything is written to it."""
    with hub.hub_errors(f"dataset {repo_id}"):
        url = str(hub.api().create_repo(repo_id, repo_type="dataset", private=private, exist_ok=True))
        public = private and not hub.api().repo_info(repo_id, repo_type="dataset").private
    if public:
        raise hub.LeaderboardError(
            f"{repo_id}: exists and is public; the custody repository must be private (make it so in its settings "
            "on the Hub, or delete it), then run init again; nothing was written to it"
        )
    sha = hub.head(repo_id, "dataset")
    present = set(hub.tree(repo_id, "dataset", sha))
    missing = {path: text.encode("utf-8") for path, text in files.items() if path not in present}
    if missing:
        hub.commit(repo_id, "dataset", missing, "ratio leaderboard init: README and policy", parent=sha)
    return CreatedRepo(repo_id, url, tuple(sorted(missing)), tuple(sorted(set(files) & present)))


def requests_files(requests: str, results: str) -> dict[str, str]:
    readme = f"""---
pretty_name: Ratio leaderboard requests
tags: [ratio-bench, leaderboard]
---
# Ratio leaderboard: requests

The queue of the Ratio leaderboard. One JSON file per model, commit and prompt setup, at
`<org>/<model>/<sha>_<setup>.json`, written by `ratio leaderboard submit` (or the served submission form) and
updated by the maintainers' workers: `PENDING`, then `RUNNING` (claimed by a worker, with a lease), then
`FINISHED` or `FAILED` with a one-line reason.

```bash
ratio leaderboard submit ORG/MODEL --requests {requests}
ratio leaderboard --from {results} --requests {requests} --html board.html   # the queue and the board
```

Results appear in `{results}` under `<org>/<model>/<sha>/<setup>/`. What is accepted: POLICY.md.
"""
    policy = f"""# Submission policy

- A sentence-transformers model on the Hub (`modules.json`) that loads with the stock classes: no code of its
  own (`trust_remote_code` is never passed), safetensors weights only (pickles are refused), at most
  {MAX_PARAMETERS:,} parameters (read from the safetensors headers, without downloading the weights).
- The revision is pinned to its commit: the result belongs to exact weights. The same model, commit and setup is
  queued once; re-submitting a pending, running or finished one is refused with where to find it.
- The submitter is the token's Hub user. A training-data cut-off (`--training-cutoff`) is the submitter's
  statement and is shown as such; scores on snapshots before it are marked contaminated.
- A request file that is not a valid request is listed with its reason and never claimed. Maintainers may close
  a request (status `FAILED`, with the reason) that breaks these rules or the Hub's terms.
"""
    return {"README.md": readme, "POLICY.md": policy, **_identity_file(requests)}


def custody_files(custody: str, results: str) -> dict[str, str]:
    readme = f"""---
pretty_name: Ratio custody (private)
tags: [ratio-bench, leaderboard]
---
# Ratio custody: the withheld split

Private. The release's newest snapshot, withheld from the public release (`ratio dataset build --withhold
newest`): its custody folder (`<release>.custody/`, kind `custody`), readable by the maintainers and their
workers' tokens alone. Workers score every admitted submission on it too and publish in `{results}` only its
aggregate figures (metrics, queries, interval), signed with the test entry.

```bash
ratio dataset publish-custody ratio.custody --repo-id {custody}        # refused unless this repo is private
ratio leaderboard worker ... --dataset ORG/ratio --custody {custody}
ratio dataset release-withheld --dataset ratio --version NEW           # after the embargo: the split goes public
```

What may leak and how a token that reads this repo is rotated: docs/security-custody.md.
"""
    policy = """# Custody policy

- Readers: the maintainers and the workers' Hub tokens (write access to this repository). Nobody else; no token
  that reads it goes into a log, a cache, a card or a result.
- Only the custody folder is published here; its files are exactly those its manifest lists.
- The withheld split is released into the public release by `ratio dataset release-withheld` once its embargo
  (the config's `custody.embargo_days` after the period's end) has passed; its files do not change, so every
  withheld score becomes reproducible to the digit.
"""
    return {"README.md": readme, "POLICY.md": policy}


def results_files(requests: str, results: str) -> dict[str, str]:
    readme = f"""---
pretty_name: Ratio leaderboard results
tags: [ratio-bench, leaderboard]
---
# Ratio leaderboard: results

What the leaderboard's workers measured. One folder per request of `{requests}`:
`<org>/<model>/<sha>/<setup>/` holds `test.json` (and one entry per test snapshot, `silver.json` when the release
has a silver split), `mteb/`, `runs/` and the worker's `provenance.json`, which binds each entry to the worker and
the pinned commit by its SHA-256.

```bash
ratio leaderboard --from {results} --requests {requests} --html board.html
```

Entries written by a worker are **verified**; any other entry (a pull request with a `ratio score --out` file) is
**self-reported**, still checked against the submission schema. What is accepted: POLICY.md.
"""
    policy = """# Results policy

- Workers write here; their token needs write access to this repository and the requests queue.
- An entry is verified only when `provenance.json` in its folder names it by SHA-256; the board marks every other
  entry self-reported and can filter on it.
- Self-reported entries come by pull request with a `ratio score --out` file. An entry that fails the submission
  schema, or contradicts the other entries of its release (same manifest hash, another name), rejects itself
  alone, with its reason; it never hides the rest of the board.
- `judged-pool/` holds the LLM judge's verdicts when the workers judge; they are reported beside the mined gold and
  never change the ranking.
"""
    return {"README.md": readme, "POLICY.md": policy, **_identity_file(None)}


def _identity_file(queue: str | None) -> dict[str, str]:
    """What says the repository is a queue (``policy.json``) or a results repository (``trusted_workers.json``)."""

    if queue is not None:
        doc = {"schema": POLICY_SCHEMA, "maintainers": [], "workers": [], "max_pending": MAX_PENDING,
               "max_per_day": MAX_PER_DAY}  # fmt: skip
        return {POLICY: json.dumps(doc, indent=2) + "\n"}
    return {TRUSTED_WORKERS: json.dumps({"schema": TRUSTED_SCHEMA, "workers": []}, indent=2) + "\n"}
