"""The board from a results repository, with the queue beside it.

Every JSON file of the results repository is an entry, except MTEB documents (``mteb/``), saved runs
(``runs/``) and provenance records. An entry is **verified** when the folder it sits in is the one a worker writes
for a request (``<org>/<model>/<sha>/<setup>/``) and holds the worker's ``provenance.json`` naming that model,
commit and setup and the entry's SHA-256 (an entry edited afterwards is no longer verified). Any other entry is
**self-reported**: a file contributed by hand, checked against the schema like every entry. The results
repository is the maintainers' (only workers and reviewed pull requests write it); what it holds is still read
with a size cap and parsed strictly, and a bad file rejects itself only.
"""

from __future__ import annotations

import hashlib
import html
import json
import time
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from ratio_bench.core.cutoffs import parse_date
from ratio_bench.core.errors import UsageError
from ratio_bench.evaluation import leaderboard as lb
from ratio_bench.evaluation.board_html import leaderboard_html
from ratio_bench.evaluation.board_markdown import md_row
from ratio_bench.evaluation.board_page_assets import CONTENT_SECURITY_POLICY
from ratio_bench.evaluation.escaping import html_text, markdown_text, terminal_text
from ratio_bench.evaluation.results import SubmissionError
from ratio_bench.leaderboard import hub
from ratio_bench.leaderboard.form import FormLimits
from ratio_bench.leaderboard.requests import SHA, Queue, Request, now_utc, parse_time, read_queue
from ratio_bench.leaderboard.worker import PROVENANCE, PROVENANCE_SCHEMA

SKIPPED_FOLDERS = ("mteb", "runs")


def load_board_from_repo(ref: hub.RepoRef) -> lb.Board:
    """The board of the results repository ``ref`` at its revision (default: main)."""
    sha = hub.head(ref.repo_id, "dataset", ref.revision)
    listed = hub.tree(ref.repo_id, "dataset", sha)
    loaded, rejected = [], []
    for path, size in sorted(listed.items()):
        parts = path.split("/")
        if not path.endswith(".json") or parts[-1] == PROVENANCE or set(parts[:-1]) & set(SKIPPED_FOLDERS):
            continue
        try:
            if size > lb.MAX_FILE_BYTES:
                raise SubmissionError(f"file is over the {lb.MAX_FILE_BYTES:,}-byte limit for one entry")
            data = hub.read_small(ref.repo_id, "dataset", sha, path)
            entry = lb.parse_entry(data)
        except SubmissionError as e:
            rejected.append(lb.Rejected(path, str(e)))
            continue
        entry["provenance"] = _provenance(ref, sha, listed, path, data, entry)
        loaded.append((path, entry))
    releases, inconsistent = lb.group_releases(loaded)
    return lb.Board(releases, tuple(sorted(rejected + inconsistent, key=lambda r: r.source)))


def _provenance(
    ref: hub.RepoRef, sha: str, listed: dict[str, int], path: str, data: bytes, entry: dict[str, Any]
) -> dict[str, str]:
    """``verified`` with the worker and the pinned commit, when the folder's provenance vouches for ``data``."""
    folder, _, name = path.rpartition("/")
    parts = folder.split("/")
    record = f"{folder}/{PROVENANCE}"
    if (
        len(parts) != 4
        or not SHA.match(parts[2])
        or listed.get(record, lb.MAX_FILE_BYTES + 1) > lb.MAX_FILE_BYTES
    ):
        return {"status": "self-reported"}
    try:
        doc = json.loads(hub.read_small(ref.repo_id, "dataset", sha, record))
    except (ValueError, hub.LeaderboardError):
        return {"status": "self-reported"}
    model, commit, setup = "/".join(parts[:2]), parts[2], parts[3]
    vouched = (
        isinstance(doc, dict)
        and doc.get("schema") == PROVENANCE_SCHEMA
        and (doc.get("model"), doc.get("sha"), doc.get("setup")) == (model, commit, setup)
        and isinstance(doc.get("entries"), dict)
        and doc["entries"].get(name) == hashlib.sha256(data).hexdigest()
        and entry["model"] == f"{model}:{setup}"
        and isinstance(doc.get("worker"), str)
    )
    if not vouched:
        return {"status": "self-reported"}
    return {"status": "verified", "detail": f"worker {doc['worker'][:80]}, {model}@{commit[:12]}"}


# --- the queue ------------------------------------------------------------------------------------------------


def _elapsed(since: str | None, now: datetime) -> str:
    if since is None:
        return ""
    seconds = max(0, int((now - parse_time(since)).total_seconds()))
    return (
        f"{seconds // 3600} h {seconds // 60 % 60:02d} min"
        if seconds >= 3600
        else f"{seconds // 60} min {seconds % 60:02d} s"
    )


def queue_rows(queue: Queue, now: datetime) -> list[tuple[str, list[str]]]:
    """(status, cells) per request, pending and running first: model, setup, submitter, submitted, detail."""
    order = {"RUNNING": 0, "PENDING": 1, "FAILED": 2, "FINISHED": 3}
    rows = []
    for r in sorted(queue.requests, key=lambda r: (order[r.status], r.submitted_at, r.path)):
        rows.append(
            (
                r.status,
                [r.status, f"{r.model}@{r.sha[:12]}", r.setup, r.submitter, r.submitted_at, _detail(r, now)],
            )
        )
    return rows


def _detail(r: Request, now: datetime) -> str:
    if r.status == "RUNNING":
        late = " (lease expired: will be claimed again)" if r.lease_expired(now) else ""
        return f"running for {_elapsed(r.started_at, now)} on {r.worker}, attempt {r.attempts}{late}"
    if r.status == "FAILED":
        return r.reason or ""
    if r.status == "FINISHED":
        return f"results: {r.result}"
    return f"waiting for {_elapsed(r.submitted_at, now)}"


QUEUE_HEAD = ["status", "model", "setup", "submitter", "submitted", "detail"]


def queue_table(queue: Queue, now: datetime | None = None):
    """The queue for a terminal (rich), every field escaped."""
    from rich.table import Table

    t = Table(title=terminal_text(f"Queue {queue.repo_id}"))
    for head in QUEUE_HEAD:
        t.add_column(head)
    for _, cells in queue_rows(queue, now or now_utc()):
        t.add_row(*(terminal_text(c) for c in cells))
    for path, why in queue.rejected:
        t.add_row("skipped", terminal_text(path), "", "", "", terminal_text(why))
    return t


def queue_markdown(queue: Queue, now: datetime | None = None) -> str:
    now = now or now_utc()
    lines = ["", f"## Queue ({markdown_text(queue.repo_id)})", ""]
    lines += [md_row(QUEUE_HEAD), "|" + "---|" * len(QUEUE_HEAD)]
    lines += [md_row([markdown_text(c) for c in cells]) for _, cells in queue_rows(queue, now)]
    if queue.rejected:
        lines += [
            "",
            "Request files skipped: " + "; ".join(markdown_text(f"{p}: {w}") for p, w in queue.rejected),
        ]
    return "\n".join(lines) + "\n"


def queue_html(queue: Queue, now: datetime | None = None, form: str = "") -> str:
    now = now or now_utc()
    parts = [f'<section id="queue"><h2>Queue <small>({html_text(queue.repo_id)})</small></h2>', "<table>"]
    parts.append("<thead><tr>" + "".join(f"<th>{h}</th>" for h in QUEUE_HEAD) + "</tr></thead><tbody>")
    for status, cells in queue_rows(queue, now):
        parts.append(
            f'<tr data-status="{status}">' + "".join(f"<td>{html_text(c)}</td>" for c in cells) + "</tr>"
        )
    parts.append("</tbody></table>")
    if queue.rejected:
        parts.append("<p>Request files skipped:</p><ul>")
        parts += [f"<li>{html_text(p)}: {html_text(why)}</li>" for p, why in queue.rejected]
        parts.append("</ul>")
    return "\n".join([*parts, form, "</section>"])


CSRF_SLOT = "@@ratio-csrf-token@@"  # replaced per visitor by the server (LiveBoard.page)
SUBMIT_FORM = f"""<form method="post" action="/leaderboard/submit" autocomplete="off">
<h3>Submit a model</h3>
<input type="hidden" name="csrf" value="{CSRF_SLOT}">
<label>Hub model <input name="model" required maxlength="200" placeholder="OWNER/NAME"></label>
<label>Revision <input name="revision" maxlength="200" placeholder="main"></label>
<label>Setup <select name="setup"><option>generic</option><option>none</option><option>saved</option>
<option>recommended</option></select></label>
<label>Training-data cut-off <input name="training_cutoff" type="date"
 title="the last day of the model's training data; without it, its snapshot scores are marked unknown"></label>
<label>Your Hub token <input name="token" type="password" required maxlength="256"
 title="an access token of your Hub account: the submission is made as you, with it, once; it is not stored"></label>
<button type="submit">Queue it</button>
</form>"""
FORM_POLICY = CONTENT_SECURITY_POLICY.replace("form-action 'none'", "form-action 'self'")


@dataclass
class LiveBoard:
    """The page of ``ratio serve --leaderboard-from``: rebuilt from the repositories at most every ``refresh_s``."""

    results: hub.RepoRef
    requests: str | None
    refresh_s: float = 60.0
    allow_submissions: bool = False
    limits: FormLimits = field(default_factory=FormLimits)
    _page: str | None = None
    _built: float = 0.0

    @property
    def policy(self) -> str:
        return FORM_POLICY if self.allow_submissions else CONTENT_SECURITY_POLICY

    def page(self, csrf: str = "") -> str:
        """The page, its form carrying ``csrf`` (the visitor's token: the page is cached, the token is not)."""
        if self._page is None or time.monotonic() - self._built > self.refresh_s:
            self._page, self._built = self.render(), time.monotonic()
        return self._page.replace(CSRF_SLOT, html.escape(csrf, quote=True))

    def render(self) -> str:
        board = load_board_from_repo(self.results)
        extra = ""
        if self.requests:
            extra = queue_html(read_queue(self.requests), form=SUBMIT_FORM if self.allow_submissions else "")
        return leaderboard_html(board, extra=extra, policy=self.policy)

    def submit(self, form: dict[str, str], client: str) -> tuple[int, str]:
        """(HTTP status, HTML page) for a submission from the form, made as the Hub user whose token it carries
        (``client``: the sender's address, for its rate limit): the checks of ``ratio leaderboard submit``."""
        from ratio_bench.leaderboard.form import RateLimited, signed_in_user
        from ratio_bench.leaderboard.submit import submit

        try:
            self.limits.per_client.hit(client)
            token = form.get("token", "").strip()
            user = signed_in_user(token)
            self.limits.per_submitter.hit(user.lower())
            self.limits.per_day.hit(user.lower())
            cutoff = form.get("training_cutoff", "").strip()
            with hub.as_user(token):
                request = submit(
                    form.get("model", "").strip(),
                    form.get("revision", "").strip() or None,
                    form.get("setup", "generic"),
                    self.requests,
                    submitter=user,
                    training_cutoff=parse_date(cutoff, "training-data cut-off") if cutoff else None,
                )
        except RateLimited as e:
            return 429, message_page("Not queued", str(e))
        except (hub.LeaderboardError, UsageError) as e:
            return 422, message_page("Not queued", str(e))
        self._page = None  # show it at once
        return 200, message_page("Queued", f"{request.label} is PENDING as {self.requests}: {request.path}")


def message_page(title: str, text: str) -> str:
    return (
        f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>{html.escape(title)}</title></head>'
        f"<body><h1>{html.escape(title)}</h1><p>{html_text(text)}</p>"
        '<p><a href="/leaderboard">Back to the leaderboard</a></p></body></html>\n'
    )
