"""Content-addressed store of judge replies (SQLite), so that no request is ever sent twice.

The key is the SHA-256 of the judge's identity (the normalised base URL, or ``--judge-id``) and the exact
request body (model, messages, sampling parameters): the same prompt on the same instance with the same
settings and the same judge is one entry, whichever path (synchronous or Batch API) produced it, and replies
of one server never answer for another that serves a model of the same name. The identity is stored with
each reply for audit; the API key is never stored.

Caches written before the identity was part of the key (schema 1) are refused, not migrated: their replies
cannot be attributed to a server after the fact, and guessing one is exactly the mix-up the identity
prevents. The old file is left as it is; the message says to pass a new ``--cache``. Each reply is committed as
soon as it arrives, so a run killed at any point resumes with everything it had received. Failed requests are
not stored (a re-run retries them); invalid replies are (re-asking the same request would waste money).
Open Batch API jobs are recorded too, so a resumed run polls them instead of submitting them again. A cache that
cannot be written (a full disk) or read stops the run with one error naming it: judging on without storing
would pay for replies that are then lost.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import sqlite3
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ratio_bench.core.errors import RatioError

SCHEMA_VERSION = 2  # 1: keys without the judge's identity


class CacheError(RatioError):
    """The reply cache cannot be read or written (full disk, damaged file): no request may go on."""


def request_key(body: dict[str, Any], judge: str) -> str:
    """The cache key of ``body`` sent to the judge ``judge`` (a normalised base URL or a ``--judge-id``)."""
    text = json.dumps({"judge": judge, "body": body}, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()


@dataclass(frozen=True)
class CachedReply:
    status: str  # ok | invalid
    content: str  # the reply text that was parsed (for invalid: the re-asked reply)
    first_content: str  # the first reply when a re-ask happened, else ""
    prompt_tokens: int
    completion_tokens: int
    via: str  # sync | batch


_SCHEMA = """
CREATE TABLE IF NOT EXISTS replies (
    key TEXT PRIMARY KEY, judge TEXT, model TEXT, status TEXT, content TEXT, first_content TEXT,
    prompt_tokens INTEGER, completion_tokens INTEGER, via TEXT);
CREATE TABLE IF NOT EXISTS batches (
    batch_id TEXT PRIMARY KEY, input_file_id TEXT, keys TEXT, state TEXT);
"""


class ReplyCache:
    """Thread-safe; one connection guarded by a lock (SQLite in WAL mode, one commit per reply)."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self._con = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
            version = self._con.execute("PRAGMA user_version").fetchone()[0]
            tables = {r[0] for r in self._con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        except sqlite3.DatabaseError as exc:
            raise RatioError(
                f"--cache {self.path}: not a judge reply cache ({exc}); pass another --cache"
            ) from None
        if tables and version < SCHEMA_VERSION:
            self._con.close()
            raise RatioError(
                f"--cache {self.path}: written by an older ratio whose keys do not name the judge server, so its "
                "replies cannot be trusted for this one; pass a new --cache PATH (the old file is left as is)"
            )
        self._lock = threading.Lock()
        with self._locked():
            self._con.execute("PRAGMA journal_mode=WAL")
            self._con.executescript(_SCHEMA)
            self._con.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        """The connection, one thread at a time; an SQLite failure becomes one error line naming the file."""
        with self._lock:
            try:
                yield
            except sqlite3.Error as exc:
                raise CacheError(
                    f"--cache {self.path}: cannot use the reply cache ({exc}); free disk space or pass another "
                    "--cache (replies received so far are kept)"
                ) from None

    def get(self, key: str) -> CachedReply | None:
        with self._locked():
            row = self._con.execute(
                "SELECT status, content, first_content, prompt_tokens, completion_tokens, via "
                "FROM replies WHERE key = ?",
                (key,),
            ).fetchone()
        return CachedReply(*row) if row else None

    def put(self, key: str, judge: str, model: str, reply: CachedReply) -> None:
        with self._locked():
            self._con.execute(
                "INSERT OR REPLACE INTO replies VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    key,
                    judge,
                    model,
                    reply.status,
                    reply.content,
                    reply.first_content,
                    reply.prompt_tokens,
                    reply.completion_tokens,
                    reply.via,
                ),
            )

    def __len__(self) -> int:
        with self._locked():
            return self._con.execute("SELECT count(*) FROM replies").fetchone()[0]

    # -- Batch API jobs --------------------------------------------------------------------------------

    def add_batch(self, batch_id: str, input_file_id: str, keys: list[str]) -> None:
        with self._locked():
            self._con.execute(
                "INSERT OR REPLACE INTO batches VALUES (?, ?, ?, 'open')",
                (batch_id, input_file_id, json.dumps(keys)),
            )

    def open_batches(self) -> list[tuple[str, list[str]]]:
        with self._locked():
            rows = self._con.execute(
                "SELECT batch_id, keys FROM batches WHERE state = 'open' ORDER BY rowid"
            ).fetchall()
        return [(b, json.loads(k)) for b, k in rows]

    def close_batch(self, batch_id: str, state: str) -> None:
        with self._locked():
            self._con.execute("UPDATE batches SET state = ? WHERE batch_id = ?", (state, batch_id))

    def close(self) -> None:
        self._con.close()
