"""The board from a results repository, with the queue beside it.

Every JSON file of the results repository is an entry, except MTEB documents (``mteb/``), saved runs
(``runs/``), provenance records and the trusted keys. An entry is **verified** only when every step of
:func:`ratio_bench.leaderboard.provenance.verify_folder` holds: its folder is a worker's
(``<org>/<model>/<sha>/<setup>/``), holding a ``provenance.json`` signed by a key the maintainers list in
``trusted_workers.json`` (read at the results repository's main, whatever revision is read: :func:`trust_root`),
naming that model, commit and setup and the entry's SHA-256; and the requests repository, read at its head, has
the FINISHED request the record names, pointing at that folder, at the signed attempt. Read without the requests
repository, or at a revision that is no commit of main (``refs/pr/N``), nothing is verified. Any other entry is **self-reported** (the first step
that failed is its reason) and ranked apart. What the results repository holds is read with a size cap and
parsed strictly, and a bad file rejects itself only.
"""

from __future__ import annotations

import glob
import hashlib
import html
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from rich.table import Table

from ratio_bench.core.cutoffs import parse_date
from ratio_bench.core.errors import UsageError
from ratio_bench.evaluation.board import leaderboard as lb
from ratio_bench.evaluation.board.cost import hardware_classes, hardware_links, on_hardware
from ratio_bench.evaluation.board.escaping import html_text, markdown_text, terminal_text
from ratio_bench.evaluation.board.page_cache import PageCache
from ratio_bench.evaluation.board.render.html import leaderboard_html
from ratio_bench.evaluation.board.render.markdown import md_row
from ratio_bench.evaluation.board.render.page_assets import CONTENT_SECURITY_POLICY
from ratio_bench.evaluation.entry.record import Entry, Provenance
from ratio_bench.evaluation.scoring.results import SubmissionError
from ratio_bench.leaderboard import hub, ledger, trust
from ratio_bench.leaderboard.authorship import submitted_by, third_party
from ratio_bench.leaderboard.form import FormLimits, RateLimited, signed_in_user
from ratio_bench.leaderboard.provenance import (
    MAX_HASHED_BYTES,
    PROVENANCE,
    TRUSTED_WORKERS,
    Listing,
    Step,
    TrustedWorker,
    Verdict,
    folder_parts,
    read_listing,
    verify_folder,
)
from ratio_bench.leaderboard.requests import Queue, Request, now_utc, parse_time, read_queue
from ratio_bench.leaderboard.submit import submit
from ratio_bench.leaderboard.trust import Stage
from ratio_bench.leaderboard.waiting import wait_for

SKIPPED_FOLDERS = ("mteb", "runs")
MAX_REASON = 300


@dataclass
class RepoReader:
    """The results repository at one commit, and what verification needs from it (the trusted keys, the queue),
    each read once; folders' verdicts are kept, one per folder."""

    ref: hub.RepoRef
    sha: str
    listed: dict[str, int]
    trusted: dict[str, TrustedWorker]
    queue: Queue | None
    verdicts: dict[str, Verdict]
    local: Path | None = None  # the JSON files downloaded at once (None: each file read on its own)
    listing: Listing = Listing(
        {}
    )  # the trusted keys, read at the results repository's main, never at ``sha``
    refused: str | None = None  # why nothing at this revision can be verified (a pull request's, off main)

    @classmethod
    def open(cls, ref: hub.RepoRef, requests: str | None, bulk: bool = True) -> RepoReader:
        """The repository at ``ref``; ``bulk``: its JSON files fetched in one parallel ``snapshot_download``
        (what a board of a thousand entries needs) instead of one download per file."""

        # the queue is read while the results download: both mostly wait on the Hub
        with ThreadPoolExecutor(1) as pool:
            queue = pool.submit(read_queue, requests) if requests else None
            sha = hub.head(ref.repo_id, "dataset", ref.revision)
            listed = hub.tree(ref.repo_id, "dataset", sha)
            local = download_json(ref, sha, listed) if bulk else None
            reader = cls(ref, sha, listed, {}, None, {}, local)
            reader.queue = queue.result() if queue else None
        reader.listing, reader.refused = trust_root(ref, sha, listed)
        reader.trusted = reader.listing.trusted
        return reader

    def fetch(self, path: str) -> bytes:
        """A listed file's bytes (its size already checked by the caller); a Hub failure is a LeaderboardError."""
        if self.local is not None:
            data = hub.read_local(self.local, path)
            if data is not None:
                return data
        return hub.read_small(self.ref.repo_id, "dataset", self.sha, path)

    def read(self, path: str) -> bytes | None:
        """A small listed file, or None when it is missing, too big or cannot be read."""
        if self.listed.get(path, lb.MAX_FILE_BYTES + 1) > lb.MAX_FILE_BYTES:
            return None
        try:
            return self.fetch(path)
        except hub.LeaderboardError:
            return None

    def verdict(self, folder: str) -> Verdict:
        if folder not in self.verdicts:
            record = self.read(f"{folder}/{PROVENANCE}") if folder_parts(folder) else None
            self.verdicts[folder] = self.check(folder, record)
        return self.verdicts[folder]

    def check(
        self, folder: str, record: bytes | None, files: dict[str, bytes] | None = None,
        too_big: dict[str, int] | None = None,
    ) -> Verdict:  # fmt: skip
        """:func:`verify_folder` with this reader's root of trust (a refused revision verifies nothing)."""
        if self.refused:
            return Verdict(folder, (Step("revision", False, self.refused),))
        return verify_folder(
            folder,
            record,
            self.trusted,
            self.queue,
            files,
            trust_problem=self.listing.problem,
            too_big=too_big,
        )


def trust_root(ref: hub.RepoRef, sha: str, listed: dict[str, int]) -> tuple[Listing, str | None]:
    """(the trusted keys, why nothing at ``sha`` verifies or None). The keys are read at the results repository's
    main head, whatever revision is being read, so a pull request cannot list its own key and a key removed from
    main is revoked at every revision (an old revision is judged by today's listing; main's history of
    ``trusted_workers.json`` is the record). A revision that is no commit of main's history (``refs/pr/N``, a
    pull request's commit, another branch) verifies nothing."""
    main = sha if ref.revision is None else hub.head(ref.repo_id, "dataset")  # no revision: main, as read
    history = trust.Revision(
        ref.revision, sha, main, lambda: {c for c, _ in ledger.history(ref.repo_id, main)}
    )
    refused = trust.check(Stage.BOARD, history)
    return _main_listing(
        ref.repo_id, main, listed if sha == main else hub.tree(ref.repo_id, "dataset", main)
    ), refused


def _main_listing(repo_id: str, main: str, listed: dict[str, int]) -> Listing:
    """``trusted_workers.json`` at main's head; one that is too big or cannot be read trusts nobody, and says so."""
    if TRUSTED_WORKERS in listed and listed[TRUSTED_WORKERS] > hub.MAX_SMALL_FILE:
        return Listing(
            {}, (), f"{TRUSTED_WORKERS} on main is over {hub.MAX_SMALL_FILE:,} bytes: no worker is trusted"
        )
    try:
        data = (
            hub.read_small(repo_id, "dataset", main, TRUSTED_WORKERS) if TRUSTED_WORKERS in listed else None
        )
    except hub.LeaderboardError as e:
        return Listing({}, (), f"{TRUSTED_WORKERS} on main cannot be read ({e}): no worker is trusted")
    return read_listing(data)


def download_json(ref: hub.RepoRef, sha: str, listed: dict[str, int]) -> Path:
    """Every JSON file the board may read (entries, provenance records, the trusted keys), in one download: MTEB
    documents, saved runs and files over the entry size cap stay on the Hub."""
    skipped = [f"{folder}/*" for folder in SKIPPED_FOLDERS] + [f"*/{folder}/*" for folder in SKIPPED_FOLDERS]
    skipped += [
        glob.escape(p) for p, size in listed.items() if p.endswith(".json") and size > lb.MAX_FILE_BYTES
    ]
    return hub.download_files(ref.repo_id, "dataset", sha, listed, ["*.json"], skipped)


def load_board_from_repo(ref: hub.RepoRef, requests: str | None = None, bulk: bool = True) -> lb.Board:
    """The board of the results repository ``ref`` at its revision (default: main); ``requests``: the requests
    repository whose FINISHED requests verified entries must be (None: every entry is self-reported); ``bulk``
    False: one download per file, as before (benchmarks/board_scale.py compares the two)."""
    return board_of(RepoReader.open(ref, requests, bulk))


def board_of(repo: RepoReader) -> lb.Board:
    """The board of an opened repository (its queue, when it has one, is the one its entries were checked with)."""
    loaded, rejected = read_entries(repo)
    releases, inconsistent = lb.group_releases(loaded)
    return lb.Board(releases, tuple(sorted(rejected + inconsistent, key=lambda r: r.source)))


def read_entries(repo: RepoReader) -> tuple[list[tuple[str, Entry]], list[lb.Rejected]]:
    """Every entry file of the repository, parsed with the size cap and schema and given the loader's provenance
    mark; a file that is no entry is rejected with its reason (the one reading loop of the board and exports)."""
    loaded, rejected = [], []
    for path, size in sorted(repo.listed.items()):
        parts = path.split("/")
        if (
            not path.endswith(".json")
            or parts[-1] == PROVENANCE
            or path == TRUSTED_WORKERS
            or set(parts[:-1]) & set(SKIPPED_FOLDERS)
        ):
            continue
        try:
            if size > lb.MAX_FILE_BYTES:
                raise SubmissionError(f"file is over the {lb.MAX_FILE_BYTES:,}-byte limit for one entry")
            data = repo.fetch(path)
            entry = parse_checked(data)
        except SubmissionError as e:
            rejected.append(lb.Rejected(path, str(e)))
            continue
        loaded.append((path, entry.marked(provenance=provenance_mark(repo, path, data, entry))))
    return loaded, rejected


MAX_CHECKED = 100_000
_checked: dict[str, Entry] = {}  # SHA-256 of entry bytes -> the record they passed lb.parse_entry as, here


def parse_checked(data: bytes) -> Entry:
    """:func:`lb.parse_entry`, its checks skipped for bytes that already passed them here (the record is frozen,
    so it is shared): a served board re-read after one new entry checks that entry, not the thousand it had."""
    digest = hashlib.sha256(data).hexdigest()
    if digest in _checked:
        return _checked[digest]
    entry = lb.parse_entry(data)
    if len(_checked) >= MAX_CHECKED:
        _checked.clear()
    _checked[digest] = entry
    return entry


def entry_verdict(repo: RepoReader, path: str, data: bytes, entry: Entry) -> tuple[Verdict, str]:
    """The folder's verdict and, for this entry, why it is not verified ("" when it is)."""
    folder, _, name = path.rpartition("/")
    verdict = repo.verdict(folder)
    if not verdict.verified:
        return verdict, verdict.reason
    step = verdict.entry_step(name, data, entry.model)
    return verdict, "" if step.ok else f"{step.name}: {step.detail}"


def provenance_mark(repo: RepoReader, path: str, data: bytes, entry: Entry) -> Provenance:
    """The loader's mark: ``verified`` (worker, model@commit, signing time) or ``self-reported`` with the reason;
    a worker-shaped folder names the row's repository and commit either way (a row is repo, commit, setup)."""
    folder = path.rpartition("/")[0]
    named = folder_parts(folder)
    repo_name, commit = named[:2] if named else (None, None)
    verdict, why = entry_verdict(repo, path, data, entry)
    if why or verdict.record is None or verdict.worker is None:
        return Provenance("self-reported", why[:MAX_REASON], repo_name, commit)
    record = verdict.record
    submitter = record.get("submitter") if isinstance(record.get("submitter"), str) else None
    whose = submitted_by(record["model"], submitter[:100] if submitter else None)
    detail = f"worker {verdict.worker.name[:80]}, {record['model']}@{record['sha'][:12]}" + (
        f"; {whose}" if whose else ""
    )
    return Provenance("verified", detail, repo_name, commit, str(record.get("signed_at", ""))[:40])


# --- ratio leaderboard verify ----------------------------------------------------------------------------

MAX_FOLDER_FILES = 10_000
MAX_TARGET_SHOWN = 200  # a row name echoed back is cut here (a name of 5,000 characters is not repeated)


@dataclass(frozen=True)
class FolderReport:
    """``ratio leaderboard verify``'s answer for one folder: the folder's steps, then one step per entry."""

    verdict: Verdict
    entries: tuple[tuple[str, bool, str], ...]  # (entry file, verified, why / what was found)
    notes: tuple[str, ...] = ()  # what the trusted keys' listing ignored (a key listed twice, past the cap)
    custody: tuple[
        tuple[str, bool, str], ...
    ] = ()  # (custody check, passed, detail): entries with withheld figures

    @property
    def verified(self) -> bool:
        return self.verdict.verified and all(ok for _, ok, _ in (*self.entries, *self.custody))

    def lines(self) -> list[str]:
        word = "VERIFIED" if self.verified else "SELF-REPORTED"
        out = [f"{self.verdict.folder}: {word}", *(f"  note {n}" for n in self.notes)]
        out += [f"  {'ok  ' if s.ok else 'FAIL'} {s.name}: {s.detail}" for s in self.verdict.steps]
        out += [f"  {'ok  ' if ok else 'FAIL'} entry {name}: {why}" for name, ok, why in self.entries]
        out += [f"  {'ok  ' if ok else 'FAIL'} custody: {name}: {why}" for name, ok, why in self.custody]
        return out


def verify(target: str, results: hub.RepoRef | None, requests: str | None) -> list[FolderReport]:
    """Verify ``target``: a local folder (as downloaded from the results repository: its last four path parts
    are its place there), a folder of ``results`` (``ORG/MODEL/SHA/SETUP``) or a row ``ORG/MODEL[@SHA]:SETUP``
    (every folder of that row). The trusted keys are ``results``'; the queue is ``requests`` at its head."""

    if results is None:
        raise UsageError(
            f"--results: give the results repository whose {TRUSTED_WORKERS} lists the trusted keys"
        )
    repo = RepoReader.open(results, requests, bulk=False)  # one folder's files: no need for all of them
    local = Path(target)
    if _is_dir(local):
        files, too_big = _local_files(local)
        folder = "/".join(local.resolve().parts[-4:])
        return [_report(repo, folder, files, too_big)]
    folders = _folders_of(repo, target)
    return [_report(repo, folder, *_repo_files(repo, folder)) for folder in folders]


def _report(repo: RepoReader, folder: str, files: dict[str, bytes], too_big: dict[str, int]) -> FolderReport:
    verdict = repo.check(folder, files.get(PROVENANCE), files, too_big)
    signed = set(verdict.record["entries"]) if verdict.record else set()
    entries, custody = [], []
    for name, data in sorted(files.items()):
        if "/" in name or not name.endswith(".json") or name == PROVENANCE:
            continue
        try:
            entry = lb.parse_entry(data)
        except SubmissionError as e:
            if name in signed:
                entries.append((name, False, f"not an entry the board shows ({e})"[:300]))
            continue  # an unsigned file that is no entry shows nothing: the folder's step "unsigned files" names it
        step = verdict.entry_step(name, data, entry.model)
        entries.append((name, step.ok, step.detail))
        if entry.withheld is not None:
            custody += custody_steps(name, entry, step.ok, files)
    return FolderReport(verdict, tuple(entries), repo.listing.notes, tuple(custody))


def custody_steps(name: str, entry, signed: bool, files: dict[str, bytes]) -> list[tuple[str, bool, str]]:
    """What a stranger can check of an entry's withheld figures before the split is released: they are signed
    with the entry, and the folder holds no per-query material of the withheld split (no run, no mteb file, no
    ranks); after ``ratio dataset release-withheld``, the command that reproduces them."""
    held = entry.withheld
    leaked = sorted(p for p in files if held.split in p)
    return [
        (f"{name} withheld {held.split}", signed,
         "figures signed with the entry (its SHA-256 in provenance.json)" if signed else "the entry is not signed"),
        ("no per-query data", not leaked,
         f"the folder holds {', '.join(leaked[:3])}" if leaked else f"no run, mteb file or ranks of {held.split}; "
         f"aggregates over {sum(held.n_queries.values())} queries only"),
        ("reproducible after the embargo", True,
         f"split sha256 {held.split_sha256[:12]}; once released: {_reproduce_withheld(entry)}"),
    ]  # fmt: skip


def _reproduce_withheld(entry) -> str:
    """The entry's reproduce command, on the withheld split and the release's next version."""
    command = entry.reproduce or f"ratio leaderboard reproduce {entry.model} --split test"
    return (
        command.replace("--split test ", f"--split {entry.withheld.split} ").rsplit("@", 1)[0]
        + "@NEXT_VERSION"
    )


def _folders_of(repo: RepoReader, target: str) -> list[str]:
    """The folders a target names: one folder, or every folder of a row ``ORG/MODEL[@SHA]:SETUP``."""
    if folder_parts(target.strip("/")):
        folder = target.strip("/")
        if not any(p.startswith(folder + "/") for p in repo.listed):
            raise UsageError(f"{_shown(target)}: no such folder in {repo.ref}")
        return [folder]
    model, _, setup = target.partition(":")
    model, _, commit = model.partition("@")
    folders = sorted(
        {
            p.rsplit("/", 1)[0]
            for p in repo.listed
            if (parts := folder_parts(p.rsplit("/", 1)[0]))
            and parts[0] == model
            and parts[2] == setup
            and parts[1].startswith(commit)
        }
    )
    if not folders:
        raise UsageError(
            f"{_shown(target)}: no folder of that row in {repo.ref}; give a local folder, ORG/MODEL/SHA/SETUP or "
            "ORG/MODEL[@SHA]:SETUP"
        )
    return folders


def _is_dir(path) -> bool:
    try:
        return path.is_dir()
    except OSError:  # a name too long for a path is no local folder
        return False


def _shown(target: str) -> str:
    """A target as echoed in a message: cut, with its length said, when it is long."""
    if len(target) <= MAX_TARGET_SHOWN:
        return repr(target)
    return f"{target[:MAX_TARGET_SHOWN]!r}... ({len(target):,} characters)"


def _local_files(folder) -> tuple[dict[str, bytes], dict[str, int]]:
    """(name -> bytes, name -> size of each file too big to hash) of a downloaded folder."""
    paths = [p for p in sorted(folder.rglob("*")) if p.is_file()][:MAX_FOLDER_FILES]
    files, too_big = {}, {}
    for p in paths:
        name, size = p.relative_to(folder).as_posix(), p.stat().st_size
        if size > MAX_HASHED_BYTES:
            too_big[name] = size
        else:
            files[name] = p.read_bytes()
    return files, too_big


def _repo_files(repo: RepoReader, folder: str) -> tuple[dict[str, bytes], dict[str, int]]:
    out, too_big = {}, {}
    names = [p for p in sorted(repo.listed) if p.startswith(folder + "/")][:MAX_FOLDER_FILES]
    for path in names:
        if repo.listed[path] > MAX_HASHED_BYTES:
            too_big[path[len(folder) + 1 :]] = repo.listed[path]
            continue
        with hub.hub_errors(f"dataset {repo.ref.repo_id}: {path}"):
            local = hub.api().hf_hub_download(repo.ref.repo_id, path, repo_type="dataset", revision=repo.sha)
        out[path[len(folder) + 1 :]] = Path(local).read_bytes()
    return out, too_big


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
                [
                    r.status,
                    f"{r.model}@{r.sha[:12]}",
                    r.setup,
                    _submitter(r),
                    r.submitted_at,
                    _detail(r, now, queue),
                ],  # fmt: skip
            )
        )
    return rows


def _submitter(r: Request) -> str:
    return f"{r.submitter} (not the model's author)" if third_party(r.model, r.submitter) else r.submitter


def _detail(r: Request, now: datetime, queue: Queue) -> str:
    if r.status == "RUNNING":
        late = " (lease expired: will be claimed again)" if r.lease_expired(now) else ""
        return f"running for {_elapsed(r.started_at, now)} on {r.worker}, attempt {r.attempts}{late}"
    if r.status == "FAILED":
        return r.reason or ""
    if r.status == "FINISHED":
        return f"results: {r.result}"
    return f"waiting for {_elapsed(r.submitted_at, now)}; {wait_for(queue, now, r.path).text()}"


QUEUE_HEAD = ["status", "model", "setup", "submitter", "submitted", "detail"]


def queue_table(queue: Queue, now: datetime | None = None):
    """The queue for a terminal (rich), every field escaped."""

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
    refresh_s: float = (
        60.0  # the page is rendered again after this long even when nothing changed (queue times)
    )
    allow_submissions: bool = False
    limits: FormLimits = field(default_factory=FormLimits)
    check_s: float = 5.0  # the repositories' heads are looked up at most this often
    cache: PageCache | None = None

    def __post_init__(self) -> None:
        self.cache = self.cache or PageCache(self.check_s, self.refresh_s)
        self._pages: dict[str, PageCache] = {}  # hardware class -> its page (a class the board holds)
        self._read: tuple[tuple[str | None, ...], lb.Board, str] | None = None  # (key, board, queue HTML)
        self._reading = threading.Lock()

    @property
    def policy(self) -> str:
        return FORM_POLICY if self.allow_submissions else CONTENT_SECURITY_POLICY

    def page(self, csrf: str = "", hardware: str | None = None) -> str:
        """The page, its form carrying ``csrf`` (the visitor's token: the page is cached, the token is not),
        rendered again only when a repository's head moved (or the page is ``refresh_s`` old); ``hardware``:
        only the entries measured on that class (:class:`UnknownHardware` for one the board does not hold)."""
        if hardware is None:
            page = self.cache.page(self.key, self.render)
        else:
            on_hardware(self._board()[0], hardware)  # checked against the board's classes before it is a key
            cache = self._pages.setdefault(hardware, PageCache(self.check_s, self.refresh_s))
            page = cache.page(self.key, lambda: self.render(hardware))
        return page.replace(CSRF_SLOT, html.escape(csrf, quote=True))

    def key(self) -> tuple[str | None, ...]:
        """What the page is a function of: both heads and the options (two small Hub calls, no file read)."""
        results = hub.head(self.results.repo_id, "dataset", self.results.revision)
        # the keys are main's: a board served at a pinned revision is read again when main (the listing) moves
        trust = hub.head(self.results.repo_id, "dataset") if self.results.revision else results
        requests = hub.head(self.requests, "dataset") if self.requests else None
        return (results, trust, requests, str(self.allow_submissions))

    def render(self, hardware: str | None = None) -> str:
        board, extra = self._board()
        shown = on_hardware(board, hardware) if hardware is not None else board
        nav = hardware_links(hardware_classes(board), hardware)
        return leaderboard_html(shown, extra=extra, policy=self.policy, nav=nav)

    def _board(self) -> tuple[lb.Board, str]:
        """(the board, the queue's HTML) at the repositories' heads, read once per change of them: the whole page
        and each hardware class's page are rendered from the one read."""
        with self._reading:
            key = self.key()
            if self._read is None or self._read[0] != key:
                repo = RepoReader.open(self.results, self.requests)  # the queue read once: marks and table
                extra = ""
                if repo.queue is not None:
                    extra = queue_html(repo.queue, form=SUBMIT_FORM if self.allow_submissions else "")
                self._read = (key, board_of(repo), extra)
            return self._read[1], self._read[2]

    def submit(self, form: dict[str, str], client: str) -> tuple[int, str]:
        """(HTTP status, HTML page) for a submission from the form, made as the Hub user whose token it carries
        (``client``: the sender's address, for its rate limit): the checks of ``ratio leaderboard submit``."""
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
                    training_cutoff=parse_date(cutoff, "training-data cut-off") if cutoff else None,
                )
        except RateLimited as e:
            return 429, message_page("Not queued", str(e))
        except (hub.LeaderboardError, UsageError) as e:
            return 422, message_page("Not queued", str(e))
        self._read = None  # show it at once, on every page
        for cache in (self.cache, *self._pages.values()):
            cache.invalidate()
        return 200, message_page(
            "Proposed",
            f"{request.label}: pull request #{request.pr_num} on {self.requests} adds {request.path}; the "
            "maintainers' admission queues it"
            + (f"; once admitted: {request.wait.text()}" if request.wait else ""),
        )


def message_page(title: str, text: str) -> str:
    return (
        f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>{html.escape(title)}</title></head>'
        f"<body><h1>{html.escape(title)}</h1><p>{html_text(text)}</p>"
        '<p><a href="/leaderboard">Back to the leaderboard</a></p></body></html>\n'
    )
