"""Signed provenance: what makes a leaderboard entry *verified*, and the step-by-step check anyone can run.

A worker holds its own Ed25519 key (``ratio leaderboard keygen``; the private key never leaves the worker's
file and is never logged or published). For each request it scores it signs a statement of what it publishes
(:func:`statement`): the request (queue repository, path, attempt), the model repository, revision and commit,
the setup, the release it scored (name, version, manifest SHA-256, where it came from), the SHA-256 of every
entry and every other file of the folder, the code version and the signing time. The statement and its
signature are the folder's ``provenance.json``; the signature covers every field but ``signature`` itself, so a
field added or changed afterwards (a judging round re-signs its own) breaks it.

The maintainers list the keys they trust in the results repository's ``trusted_workers.json`` on main (key id,
public key, name, who added it; :func:`read_listing`: strict, unique by key, capped). An entry is verified only
when every step of :func:`verify_folder` holds: the record is signed, by a listed key, for this folder; the
requests repository (read at its head) has a FINISHED request at the signed path that names this folder, at the
signed attempt, finished after the signing; and the entry's bytes are the signed ones. Anything else is
self-reported, with the first step that failed as its reason. Everything read here is untrusted input: bounded,
parsed strictly, and a bad record makes its own folder self-reported, never breaks the board.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from cryptography.hazmat.primitives.serialization import (
    Encoding,
    NoEncryption,
    PrivateFormat,
    PublicFormat,
    load_pem_private_key,
)

from ratio_bench.core.errors import RatioError
from ratio_bench.leaderboard import trust
from ratio_bench.leaderboard.hub import strict_json
from ratio_bench.leaderboard.repo_files import TRUSTED_SCHEMA, TRUSTED_WORKERS
from ratio_bench.leaderboard.requests import REPO_ID, SETUPS, SHA, Queue
from ratio_bench.leaderboard.trust import KEYGEN, Stage

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

PROVENANCE = "provenance.json"
SCHEMA = "ratio-leaderboard-provenance/2"
KEY_ENV = "RATIO_WORKER_KEY"  # the worker's private key file, when --key is not given
ALGORITHM = "ed25519"
KEY_ID_HEX = 16  # a key's id: the first 16 hex digits of the SHA-256 of its raw public key
MAX_TRUSTED = 1000
MAX_KEY_FILE = 4096
MAX_HASHED_BYTES = 1 << 30  # a saved run is a few MB; a bigger file is reported as too big, never hashed


class ProvenanceError(RatioError):
    """A key file that cannot be used, or a key file that would be overwritten."""


def key_id(public_raw: bytes) -> str:
    return hashlib.sha256(public_raw).hexdigest()[:KEY_ID_HEX]


def canonical(doc: dict[str, Any]) -> bytes:
    """The bytes a signature covers: the record without ``signature``, keys sorted, no spaces, ASCII only."""
    body = {k: v for k, v in doc.items() if k != "signature"}
    return json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode("ascii")


@dataclass(frozen=True)
class WorkerKey:
    """A worker's signing key (the private half stays in this object and its file)."""

    private: Ed25519PrivateKey = field(repr=False)
    key_id: str
    public_key: str  # base64 of the 32 raw bytes: what trusted_workers.json lists

    @classmethod
    def of(cls, private: Ed25519PrivateKey) -> WorkerKey:
        raw = private.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
        return cls(private, key_id(raw), base64.b64encode(raw).decode("ascii"))

    def sign(self, doc: dict[str, Any]) -> dict[str, Any]:
        """``doc`` with its signature (an old one is replaced: the record is signed as it now is)."""
        body = {**{k: v for k, v in doc.items() if k != "signature"}, "key_id": self.key_id}
        value = base64.b64encode(self.private.sign(canonical(body))).decode("ascii")
        return {**body, "signature": {"algorithm": ALGORITHM, "key_id": self.key_id, "value": value}}

    def listing(self, name: str, added_by: str) -> dict[str, str]:
        """This key's line in ``trusted_workers.json`` (for the maintainers to add)."""
        return {"key_id": self.key_id, "public_key": self.public_key, "name": name, "added_by": added_by}


def generate_key(out: Path) -> WorkerKey:
    """A new key written to ``out`` (PEM, readable by its owner only); an existing file is never replaced."""

    private = Ed25519PrivateKey.generate()
    pem = private.private_bytes(Encoding.PEM, PrivateFormat.PKCS8, NoEncryption())
    try:
        fd = os.open(out, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        raise ProvenanceError(
            f"--out {out}: exists; a key is never overwritten (choose another path)"
        ) from None
    except OSError as e:
        raise ProvenanceError(f"--out {out}: cannot create it ({e.strerror})") from None
    with os.fdopen(fd, "wb") as fh:
        fh.write(pem)
    return WorkerKey.of(private)


def load_key(path: Path, flag: str = "--key") -> WorkerKey:
    """The worker's key from its PEM file; a missing, unreadable, non-regular (a FIFO would block for ever), group-
    or world-readable or non-Ed25519 file is one line naming it."""

    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)  # opening a FIFO never waits for a writer
    except OSError as e:
        raise ProvenanceError(f"{flag} {path}: cannot read it ({e.strerror}); {KEYGEN}") from None
    with os.fdopen(fd, "rb") as fh:
        refused = trust.check(Stage.KEY, trust.KeyFile(flag, path, os.fstat(fh.fileno()).st_mode))
        if refused:
            raise ProvenanceError(refused)
        data = fh.read(MAX_KEY_FILE + 1)
    try:
        private = load_pem_private_key(data, password=None)
    except (ValueError, TypeError):
        raise ProvenanceError(f"{flag} {path}: not an unencrypted PEM private key; {KEYGEN}") from None
    if not isinstance(private, Ed25519PrivateKey):
        raise ProvenanceError(f"{flag} {path}: not an Ed25519 key; {KEYGEN}")
    return WorkerKey.of(private)


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def signed_at() -> str:
    """The signing time, to the microsecond: it orders two signed results of the same weights."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


# --- the trusted keys --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class TrustedWorker:
    key_id: str
    public_key: str
    name: str
    added_by: str


@dataclass(frozen=True)
class Listing:
    """The trusted keys as the maintainers' main lists them: by id, notes on listings ignored, and ``problem``
    when the file as a whole cannot be used (then no key is trusted and every row says why)."""

    trusted: dict[str, TrustedWorker]
    notes: tuple[str, ...] = ()
    problem: str | None = None


def read_listing(data: bytes | None) -> Listing:
    """``trusted_workers.json``'s bytes, parsed strictly: unique by key (a key listed again, under any name, is
    ignored with a note: the first listing stands), at most :data:`MAX_TRUSTED` listings (the rest ignored, with
    a note that says so)."""
    if data is None:
        return Listing({}, (), f"no {TRUSTED_WORKERS} in the results repository's main: no worker is trusted")
    try:
        doc = strict_json(data)
    except ValueError as e:
        return Listing({}, (), f"{TRUSTED_WORKERS} on main is unreadable ({e}): no worker is trusted")
    if (
        not isinstance(doc, dict)
        or doc.get("schema") != TRUSTED_SCHEMA
        or not isinstance(doc.get("workers"), list)
    ):
        return Listing(
            {}, (), f"{TRUSTED_WORKERS} on main is not {{schema: {TRUSTED_SCHEMA!r}, workers: [...]}}: no worker "
            "is trusted",
        )  # fmt: skip
    trusted: dict[str, TrustedWorker] = {}
    notes = []
    for i, item in enumerate(doc["workers"][:MAX_TRUSTED]):
        worker = _listing(item)
        if worker is None:
            notes.append(
                f"{TRUSTED_WORKERS}: workers[{i}] ignored (key_id, public_key, name, added_by; the id must be the key's)"
            )
        elif worker.key_id in trusted:
            notes.append(
                f"{TRUSTED_WORKERS}: workers[{i}] ignored: key {worker.key_id} is listed already as "
                f"{trusted[worker.key_id].name!r} (one listing per key; the first stands)"
            )
        else:
            trusted[worker.key_id] = worker
    if len(doc["workers"]) > MAX_TRUSTED:
        notes.append(
            f"{TRUSTED_WORKERS}: {len(doc['workers']):,} listings, over the cap of {MAX_TRUSTED:,}: those past "
            f"the {MAX_TRUSTED:,}th are ignored"
        )
    return Listing(trusted, tuple(notes))


def parse_trusted(data: bytes | None) -> tuple[dict[str, TrustedWorker], list[str]]:
    """The listed keys by id, and why any listing (or the whole file) was ignored."""
    listing = read_listing(data)
    return listing.trusted, [*([listing.problem] if listing.problem else []), *listing.notes]


def _listing(item: Any) -> TrustedWorker | None:
    if not isinstance(item, dict) or not all(
        isinstance(item.get(k), str) for k in ("key_id", "public_key", "name", "added_by")
    ):
        return None
    try:
        raw = base64.b64decode(item["public_key"], validate=True)
    except ValueError:
        return None
    if len(raw) != 32 or key_id(raw) != item["key_id"]:
        return None
    return TrustedWorker(item["key_id"], item["public_key"], item["name"][:100], item["added_by"][:100])


def signature_valid(doc: dict[str, Any], public_key: str) -> bool:
    sig = doc.get("signature")
    if (
        not isinstance(sig, dict)
        or sig.get("algorithm") != ALGORITHM
        or not isinstance(sig.get("value"), str)
    ):
        return False
    try:
        key = Ed25519PublicKey.from_public_bytes(base64.b64decode(public_key))
        key.verify(base64.b64decode(sig["value"], validate=True), canonical(doc))
    except (InvalidSignature, ValueError):
        return False
    return True


# --- the check ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Step:
    """One step of a verification: what was checked, whether it held, and what was found."""

    name: str
    ok: bool
    detail: str


@dataclass(frozen=True)
class Verdict:
    """A folder's verification: ``verified`` when every step holds (then the signed record), else the steps up to
    the first that failed."""

    folder: str
    steps: tuple[Step, ...]
    record: dict[str, Any] | None = None  # the signed provenance, when every folder-level step holds
    worker: TrustedWorker | None = None

    @property
    def verified(self) -> bool:
        return self.record is not None and all(s.ok for s in self.steps)

    @property
    def reason(self) -> str:
        failed = next((s for s in self.steps if not s.ok), None)
        return "" if failed is None else f"{failed.name}: {failed.detail}"

    def entry_step(self, name: str, data: bytes, model: str) -> Step:
        """Whether entry file ``name`` of this folder, with bytes ``data`` and model field ``model``, is signed."""
        if self.record is None:
            return Step(f"entry {name}", False, "the folder is not verified")
        want = self.record["entries"].get(name)
        if want is None:
            return Step(f"entry {name}", False, "not among the signed entries")
        if want != sha256(data):
            return Step(
                f"entry {name}",
                False,
                f"SHA-256 {sha256(data)[:12]}... is not the signed {want[:12]}... (changed after signing)",
            )
        if model != f"{self.record['model']}:{self.record['setup']}":
            return Step(
                f"entry {name}",
                False,
                f"names model {model[:80]!r}, not {self.record['model']}:{self.record['setup']}",
            )
        return Step(f"entry {name}", True, f"SHA-256 {want[:12]}... as signed")


def folder_parts(folder: str) -> tuple[str, str, str] | None:
    """(model repo, commit, setup) of a worker's folder ``<org>/<model>/<sha>/<setup>``; None for any other."""
    parts = folder.split("/")
    if (
        len(parts) != 4
        or not SHA.match(parts[2])
        or parts[3] not in SETUPS
        or not REPO_ID.match("/".join(parts[:2]))
    ):
        return None
    return "/".join(parts[:2]), parts[2], parts[3]


def verify_folder(
    folder: str,
    record: bytes | None,
    trusted: dict[str, TrustedWorker],
    queue: Queue | None,
    files: dict[str, bytes] | None = None,
    trust_problem: str | None = None,
    too_big: dict[str, int] | None = None,
) -> Verdict:
    """The folder-level steps: a worker's folder, a signed record, by a listed key, naming this folder, a FINISHED
    request naming it; with ``files`` (name in the folder -> bytes) also every published file's hash."""
    steps: list[Step] = []

    def done(step: Step) -> Verdict:
        steps.append(step)
        return Verdict(folder, tuple(steps))

    named = folder_parts(folder)
    if named is None:
        return done(Step("folder", False, "not a worker's folder <org>/<model>/<commit>/<setup>"))
    steps.append(Step("folder", True, f"{named[0]}@{named[1][:12]}, setup {named[2]}"))
    doc = _record(record)
    if isinstance(doc, str):
        return done(Step("record", False, doc))
    steps.append(Step("record", True, f"{PROVENANCE} ({SCHEMA})"))
    kid = doc.get("key_id")
    worker = trusted.get(kid) if isinstance(kid, str) else None
    if worker is None:
        why = f" ({trust_problem})" if trust_problem else ""
        return done(Step("key listed", False, f"key {str(kid)[:40]} is not in {TRUSTED_WORKERS}{why}"))
    steps.append(Step("key listed", True, f"key {kid} ({worker.name}, added by {worker.added_by})"))
    if not signature_valid(doc, worker.public_key):
        return done(Step("signature", False, f"not a valid Ed25519 signature by key {kid} over the record"))
    steps.append(Step("signature", True, f"Ed25519 by {kid}, signed {doc.get('signed_at')}"))
    if (doc.get("model"), doc.get("sha"), doc.get("setup")) != named:
        return done(
            Step(
                "names this folder",
                False,
                f"signed for {doc.get('model')}@{str(doc.get('sha'))[:12]}:{doc.get('setup')}",
            )
        )
    steps.append(Step("names this folder", True, f"{named[0]}@{named[1][:12]}:{named[2]}"))
    steps.append(_request_step(folder, doc, queue))
    if files is not None:
        steps += _file_steps(doc, files, too_big or {})
    ok = all(s.ok for s in steps)
    return Verdict(folder, tuple(steps), doc if ok else None, worker if ok else None)


def _record(data: bytes | None) -> dict[str, Any] | str:
    """The parsed record, or why it is none."""
    if data is None:
        return f"no {PROVENANCE} in the folder"
    try:
        doc = strict_json(data)
    except ValueError as e:
        return f"{PROVENANCE}: {e}"
    if not isinstance(doc, dict) or doc.get("schema") != SCHEMA:
        return f"{PROVENANCE}: not a signed record (schema {SCHEMA!r})"
    sig = doc.get("signature")
    if not isinstance(sig, dict) or sig.get("key_id") != doc.get("key_id"):
        return f"{PROVENANCE}: signature.key_id is not the record's key_id (one key signs a record)"
    entries, request = doc.get("entries"), doc.get("request")
    if not isinstance(entries, dict) or not all(isinstance(v, str) for v in entries.values()):
        return f"{PROVENANCE}: field entries: expected file -> SHA-256"
    if (
        not isinstance(request, dict)
        or not isinstance(request.get("path"), str)
        or not isinstance(request.get("repo"), str)
    ):
        return f"{PROVENANCE}: field request: expected {{repo, path, attempt}}"
    return doc


def _request_step(folder: str, doc: dict[str, Any], queue: Queue | None) -> Step:
    """The queue's word (:data:`trust.RULES` at ``VERIFY``): a FINISHED request at the signed path, for this
    model, commit and setup, naming this folder as its result, finished at the signed attempt, after the record
    was signed."""
    name = "request FINISHED"
    refused = trust.check(Stage.VERIFY, trust.Record(folder, doc, queue))
    if refused:
        return Step(name, False, refused)
    assert queue is not None
    request = queue.find(doc["request"]["path"])
    assert request is not None
    return Step(
        name,
        True,
        f"{queue.repo_id}: {request.path} is FINISHED -> {folder} at attempt {request.attempts}, "
        f"{request.finished_at} (queue at {queue.sha[:12]})",
    )


def _file_steps(doc: dict[str, Any], files: dict[str, bytes], too_big: dict[str, int]) -> list[Step]:
    """Every signed entry and file present with its signed hash (what ``verify`` adds for a whole folder)."""
    signed = {**(doc.get("files") if isinstance(doc.get("files"), dict) else {}), **doc["entries"]}
    steps = []
    for name, want in sorted(signed.items()):
        data = files.get(name)
        if data is None and name in too_big:
            steps.append(
                Step(
                    f"hash {name}",
                    False,
                    f"{too_big[name]:,} bytes, over the {MAX_HASHED_BYTES:,} bytes verify hashes",
                )
            )
        elif data is None:
            steps.append(Step(f"hash {name}", False, "signed but missing from the folder"))
        elif sha256(data) != want:
            steps.append(
                Step(
                    f"hash {name}",
                    False,
                    f"SHA-256 {sha256(data)[:12]}... is not the signed {str(want)[:12]}...",
                )
            )
        else:
            steps.append(Step(f"hash {name}", True, f"{want[:12]}... as signed"))
    unsigned = sorted((set(files) | set(too_big)) - set(signed) - {PROVENANCE})
    if unsigned:
        steps.append(
            Step(
                "unsigned files",
                True,
                f"not covered by the signature, never shown as verified: {', '.join(unsigned[:5])}",
            )
        )
    return steps
