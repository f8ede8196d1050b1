"""A content-addressed embedding cache: one vector per (model fingerprint, prompt, text).

The key is sha256 of those three, so a text shared by a snapshot's pool, the test pool, an appended month,
the mteb path or a re-ordered list is encoded once per model and prompt, whatever list it arrives in; a changed
model file, prompt or text gives a different key, so a stale vector is never read.

Layout (under the cache root, default ``~/.cache/ratio/embeddings``)::

    CURRENT                       the generation in use (absent: 0); ``prune`` writes a new one and swaps it
    lock                          held (flock) by a writer while it appends, and by ``prune``
    index-<gen>.r2.bin            append-only records: key, model tag, dim, shard, row, the row's crc32, crc32
    shards/<gen>/<dim>/<n>.f32    append-only float32 rows (row-major), memory-mapped by readers

Each record carries the CRC-32 of its row's bytes, checked on every read: a row overwritten on disk (noise, a
bad sector, a hand edit) is never used; its text is encoded again and the fresh row appended (the record
written later wins). Indexes of the older layout (``index-<gen>.bin``, without row checksums) are not read:
their texts are encoded again once, and a prune removes the old files.

Why this shape: vectors are float32 exactly as the encoder gave them (scores stay bit-identical to an
uncached run; float16 would halve the size but move ties), rows are appended without rewriting anything, and
a reader needs no lock: a record is appended only after its row is written and synced, so every record a
reader sees points at a complete row. A writer killed mid-append leaves at most a torn shard tail (no record
points at it; the next writer truncates it) or a torn last record (its length or crc is wrong: ignored).
Chunks of :data:`CHUNK_TEXTS` are committed as they finish, so an interrupted encoding resumes from the last.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import re
import shutil
import struct
import sys
import zlib
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from tqdm import tqdm

from ratio_bench.core.io import atomic_open

CHUNK_TEXTS = 4096
SHARD_BYTES = 256 << 20  # a shard is closed for appends past this size; the next one is started
RECORD = struct.Struct("<32s8sIIIII")  # key, model tag, dim, shard, row, the row's crc32, crc32 of all before
_LEGACY = re.compile(r"^[0-9a-f]{2}$")  # folders of the old per-list cache (one .npy per text list)


def default_cache_dir() -> Path:
    return Path(os.environ.get("RATIO_CACHE", Path.home() / ".cache" / "ratio")) / "embeddings"


def text_key(model_fp: str, prompt: str, text: str) -> bytes:
    """The cache key of one text under one model and prompt (NUL-separated: no two triples collide)."""
    return hashlib.sha256(f"{model_fp}\0{prompt}\0{text}".encode()).digest()


def model_tag(model_fp: str) -> bytes:
    """Eight bytes naming the model in each record, so a size report and a prune can tell models apart."""
    return hashlib.sha256(model_fp.encode()).digest()[:8]


@dataclass(frozen=True)
class Slot:
    dim: int
    shard: int
    row: int
    crc: int = 0  # CRC-32 of the row's float32 bytes


def row_crc(row: np.ndarray) -> int:
    return zlib.crc32(np.ascontiguousarray(row, dtype=np.float32).tobytes())


@dataclass
class CacheInfo:
    """What ``ratio cache info`` reports."""

    root: Path
    generation: int
    vectors: int  # live entries (one per key)
    records: int  # index records, duplicates of a key included (a prune drops them)
    shard_bytes: int
    index_bytes: int
    legacy_bytes: int  # the old per-list cache's files, removed by a prune
    per_model: dict[str, int] = field(default_factory=dict)  # model tag (hex) -> vectors

    @property
    def total_bytes(self) -> int:
        return self.shard_bytes + self.index_bytes + self.legacy_bytes


class EmbeddingCache:
    """Vectors by content; :meth:`get_or_encode` encodes only the texts it does not hold.

    ``hits``/``misses`` count calls (served whole / encoded something); ``texts_cached``/``texts_encoded``
    count texts, which is what a re-score should be judged by.
    """

    def __init__(self, root: Path | None = None, chunk_texts: int = CHUNK_TEXTS, progress: bool = True):
        self.root = Path(root) if root else default_cache_dir()
        self.chunk_texts = chunk_texts
        self.progress = progress
        self.hits = self.misses = 0
        self.texts_cached = self.texts_encoded = 0
        self.rows_failed = 0  # rows whose checksum failed on read (encoded again)
        self._generation = -1
        self._slots: dict[bytes, Slot] = {}
        self._read_to = 0  # bytes of the index read so far
        self._maps: dict[tuple[int, int], np.ndarray] = {}

    # --- reading --------------------------------------------------------------------------------------------

    def _current(self) -> int:
        try:
            return int((self.root / "CURRENT").read_text().strip() or 0)
        except (OSError, ValueError):
            return 0

    def _index_path(self, generation: int) -> Path:
        return self.root / f"index-{generation}.r2.bin"

    def _shard_path(self, generation: int, dim: int, shard: int) -> Path:
        return self.root / "shards" / str(generation) / str(dim) / f"{shard:06d}.f32"

    def refresh(self) -> None:
        """Read the index records appended since the last look (all of them after a prune swapped it)."""
        generation = self._current()
        if generation != self._generation:
            self._generation, self._slots, self._read_to, self._maps = generation, {}, 0, {}
        for key, _tag, slot in self._records(self._read_to):
            self._slots[key] = slot

    def _records(self, start: int) -> Iterator[tuple[bytes, bytes, Slot]]:
        """Whole, intact records from byte ``start`` on; a torn or damaged tail ends the reading there."""
        try:
            with open(self._index_path(self._generation), "rb") as fh:
                fh.seek(start)
                data = fh.read()
        except FileNotFoundError:
            return
        for offset in range(0, len(data) - RECORD.size + 1, RECORD.size):
            key, tag, dim, shard, row, rcrc, crc = RECORD.unpack_from(data, offset)
            if zlib.crc32(data[offset : offset + RECORD.size - 4]) != crc:
                return  # a torn append: nothing after it was committed
            self._read_to = start + offset + RECORD.size
            yield key, tag, Slot(dim, shard, row, rcrc)

    def _rows(self, dim: int, shard: int, need: int) -> np.ndarray | None:
        """The shard memory-mapped with at least ``need`` rows, or None when it has fewer (or none)."""
        mapped = self._maps.get((dim, shard))
        if mapped is None or len(mapped) < need:
            path = self._shard_path(self._generation, dim, shard)
            try:
                rows = path.stat().st_size // (4 * dim)
            except FileNotFoundError:
                return None
            if rows < need:
                return None
            mapped = self._maps[(dim, shard)] = np.memmap(path, np.float32, "r", shape=(rows, dim))
        return mapped

    def lookup(self, keys: Sequence[bytes]) -> dict[int, np.ndarray]:
        """Position in ``keys`` -> its vector, for the keys the cache holds with an intact row (a row whose
        checksum fails is left out and its key forgotten, so it is encoded and stored again)."""
        found: dict[int, np.ndarray] = {}
        by_shard: dict[tuple[int, int], list[tuple[int, Slot]]] = {}
        for i, key in enumerate(keys):
            slot = self._slots.get(key)
            if slot is not None:
                by_shard.setdefault((slot.dim, slot.shard), []).append((i, slot))
        for (dim, shard), wanted in by_shard.items():
            rows = self._rows(dim, shard, max(s.row for _, s in wanted) + 1)
            if rows is None:
                continue  # a shard a prune removed under us: those texts are encoded again
            block = np.asarray(rows[[s.row for _, s in wanted]])
            for j, (i, slot) in enumerate(wanted):
                if row_crc(block[j]) == slot.crc:
                    found[i] = block[j]
                elif self._slots.pop(keys[i], None) is not None:
                    self.rows_failed += 1
        return found

    def holds(self, model_fp: str, prompt: str, texts: Sequence[str]) -> bool:
        """Whether every one of ``texts`` has a vector under ``model_fp`` and ``prompt``."""
        self.refresh()
        return all(text_key(model_fp, prompt, t) in self._slots for t in texts)

    # --- writing --------------------------------------------------------------------------------------------

    @contextmanager
    def _locked(self) -> Iterator[None]:
        self.root.mkdir(parents=True, exist_ok=True)
        with open(self.root / "lock", "a+b") as fh:
            fcntl.flock(fh, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(fh, fcntl.LOCK_UN)

    def put(self, model_fp: str, keys: Sequence[bytes], vectors: np.ndarray) -> None:
        """Append ``vectors`` under ``keys``: rows first (synced), then their records, under the writer lock."""
        vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        with self._locked():
            self.refresh()  # another writer may have added some meanwhile
            fresh = [i for i, k in enumerate(keys) if k not in self._slots]
            fresh = list({keys[i]: i for i in fresh}.values())  # a text twice in one list: stored once
            if not fresh:
                return
            dim = int(vectors.shape[1])
            shard, first = self._append_rows(dim, vectors[fresh])
            tag = model_tag(model_fp)
            records = bytearray()
            for n, i in enumerate(fresh):
                head = RECORD.pack(keys[i], tag, dim, shard, first + n, row_crc(vectors[i]), 0)[:-4]
                records += head + struct.pack("<I", zlib.crc32(head))
            with open(self._index_path(self._generation), "ab") as fh:
                if (
                    fh.tell() > self._read_to
                ):  # a torn record of a killed writer: appended after, ours would hide
                    fh.truncate(self._read_to)
                fh.write(records)
                fh.flush()
                os.fsync(fh.fileno())
            self.refresh()

    def _append_rows(self, dim: int, rows: np.ndarray) -> tuple[int, int]:
        """Append ``rows`` to the open shard of ``dim`` (a torn tail cut off first): (shard, first row)."""
        folder = self._shard_path(self._generation, dim, 0).parent
        folder.mkdir(parents=True, exist_ok=True)
        shards = sorted(int(p.stem) for p in folder.glob("*.f32"))
        shard = shards[-1] if shards else 0
        path = self._shard_path(self._generation, dim, shard)
        size = path.stat().st_size if path.exists() else 0
        if size >= SHARD_BYTES:
            shard, size = shard + 1, 0
            path = self._shard_path(self._generation, dim, shard)
        row_bytes = 4 * dim
        with open(path, "ab") as fh:
            if size % row_bytes:  # a writer killed mid-row: no record points past the last whole row
                fh.truncate(size - size % row_bytes)
            first = fh.tell() // row_bytes
            fh.write(rows.tobytes())
            fh.flush()
            os.fsync(fh.fileno())
        return shard, first

    # --- the one entry point --------------------------------------------------------------------------------

    def get_or_encode(
        self,
        model_fp: str,
        prompt: str,
        texts: Sequence[str],
        encode: Callable[..., np.ndarray],
        label: str = "encoding",
        reports_progress: bool = False,
    ) -> np.ndarray:
        """Vectors of ``texts`` (row i: text i): cached ones read, the rest encoded (:meth:`fill`)."""
        found = self.fill(model_fp, prompt, texts, encode, label, reports_progress)
        if reports_progress:
            per_batch = encode

            def encode(rest):  # the rare re-encoding below (a shard pruned under us) has no bar
                return per_batch(rest, lambda n: None)

        keys = [text_key(model_fp, prompt, t) for t in texts]
        failed = self.rows_failed
        found.update({i: v for i, v in self.lookup(keys).items() if i not in found})
        rest = [
            i for i in range(len(texts)) if i not in found
        ]  # pruned under us, or a row that failed its check
        if rest:
            again = np.asarray(encode([texts[i] for i in rest]), dtype=np.float32)
            found.update(zip(rest, again, strict=True))
            if self.rows_failed > failed:  # the damaged rows are replaced: the fresh ones are stored
                self.put(model_fp, [keys[i] for i in rest], again)
                print(
                    f"embedding cache {self.root}: {self.rows_failed - failed:,} vectors failed their checksum "
                    "and were encoded again",
                    file=sys.stderr,
                )
        return _stack(found, len(texts))

    def fill(
        self,
        model_fp: str,
        prompt: str,
        texts: Sequence[str],
        encode: Callable[..., np.ndarray],
        label: str = "encoding",
        reports_progress: bool = False,
    ) -> dict[int, np.ndarray]:
        """Encode the texts the cache lacks, in chunks of :data:`CHUNK_TEXTS`, each stored as soon as it is
        done (an interrupted run resumes), under one bar titled ``label``; those vectors by position.

        ``reports_progress``: ``encode`` takes a second argument, a callback it calls with the number of texts
        of each batch it finishes, so the bar moves per batch (a chunk of 4,096 texts takes minutes on a CPU);
        otherwise the bar moves per chunk."""
        self.refresh()
        keys = [text_key(model_fp, prompt, t) for t in texts]
        held = {k for k in keys if k in self._slots}
        missing = list({keys[i]: i for i in range(len(texts)) if keys[i] not in held}.values())  # distinct
        self.texts_cached += len(texts) - len(missing)
        if not missing:
            self.hits += 1
            return {}
        self.misses += 1
        done: dict[int, np.ndarray] = {}
        with tqdm(
            total=len(missing),
            desc=label,
            unit=" texts",
            unit_scale=True,
            leave=False,
            disable=not self.progress,
        ) as bar:
            for start in range(0, len(missing), self.chunk_texts):
                chunk = missing[start : start + self.chunk_texts]
                batch = [texts[i] for i in chunk]
                encoded = encode(batch, bar.update) if reports_progress else encode(batch)
                vectors = np.asarray(encoded, dtype=np.float32)
                self.put(model_fp, [keys[i] for i in chunk], vectors)
                done.update(zip(chunk, vectors, strict=True))
                self.texts_encoded += len(chunk)
                if not reports_progress:
                    bar.update(len(chunk))
        return done

    # --- size report and prune ------------------------------------------------------------------------------

    def info(self) -> CacheInfo:
        self.refresh()
        live: dict[bytes, bytes] = {}
        records = 0
        for key, tag, _ in self._all_records():
            live[key] = tag
            records += 1
        per_model: dict[str, int] = {}
        for tag in live.values():
            per_model[tag.hex()] = per_model.get(tag.hex(), 0) + 1
        index = self._index_path(self._generation)
        return CacheInfo(
            self.root,
            self._generation,
            len(live),
            records,
            _bytes(self.root / "shards" / str(self._generation)),
            index.stat().st_size if index.exists() else 0,
            sum(_bytes(p) for p in self._legacy()),
            per_model,
        )

    def _all_records(self) -> Iterator[tuple[bytes, bytes, Slot]]:
        read_to = self._read_to
        try:
            yield from self._records(0)
        finally:
            self._read_to = read_to

    def _legacy(self) -> list[Path]:
        if not self.root.is_dir():
            return []
        return [p for p in self.root.iterdir() if p.is_dir() and _LEGACY.match(p.name)]

    def prune(
        self, max_bytes: int | None = None, drop_models: Sequence[str] = ()
    ) -> tuple[CacheInfo, CacheInfo]:
        """Rewrite the cache without duplicates, torn tails, the old per-list files, the models whose tags
        (hex, as ``info`` lists them) are in ``drop_models`` and, past ``max_bytes`` of vectors, the oldest
        entries. The new generation is written beside the old and swapped in with one rename of ``CURRENT``;
        a reader still on the old one finds its shards gone and encodes again, never reads a wrong row."""
        before = self.info()
        with self._locked():
            self.refresh()
            old = self._generation
            live: dict[bytes, tuple[bytes, Slot]] = {}
            for key, tag, slot in self._all_records():
                live.pop(key, None)  # re-inserted: insertion order is the latest write's
                live[key] = (tag, slot)
            keep = [(k, t, s) for k, (t, s) in live.items() if t.hex() not in set(drop_models)]
            if max_bytes is not None:
                keep = _newest_within(keep, max_bytes)
            self._write_generation(old + 1, keep)
            with atomic_open(self.root / "CURRENT", "w") as fh:
                fh.write(f"{old + 1}\n")
            self._index_path(old).unlink(missing_ok=True)
            for stale in self.root.glob("index-*.bin"):  # the older layout's indexes (no row checksums)
                if not stale.name.endswith(".r2.bin"):
                    stale.unlink(missing_ok=True)
            shutil.rmtree(self.root / "shards" / str(old), ignore_errors=True)
            for legacy in self._legacy():
                shutil.rmtree(legacy, ignore_errors=True)
        self._generation = -1
        return before, self.info()

    def _write_generation(self, generation: int, keep: list[tuple[bytes, bytes, Slot]]) -> None:
        """The kept vectors copied into generation ``generation``'s shards and index (not yet current)."""
        shutil.rmtree(self.root / "shards" / str(generation), ignore_errors=True)  # a prune killed earlier
        self._index_path(generation).unlink(missing_ok=True)
        records = bytearray()
        by_dim: dict[int, list[tuple[bytes, bytes, Slot]]] = {}
        for item in keep:
            by_dim.setdefault(item[2].dim, []).append(item)
        for dim, items in by_dim.items():
            rows_per_shard = max(1, SHARD_BYTES // (4 * dim))
            for shard, start in enumerate(range(0, len(items), rows_per_shard)):
                part = items[start : start + rows_per_shard]
                vectors = np.stack([self._vector(s) for _, _, s in part])
                path = self._shard_path(generation, dim, shard)
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(np.ascontiguousarray(vectors, dtype=np.float32).tobytes())
                for row, (key, tag, slot) in enumerate(part):
                    head = RECORD.pack(key, tag, dim, shard, row, slot.crc, 0)[:-4]
                    records += head + struct.pack("<I", zlib.crc32(head))
        path = self._index_path(generation)
        path.write_bytes(bytes(records))
        with open(path, "rb") as fh:
            os.fsync(fh.fileno())

    def _vector(self, slot: Slot) -> np.ndarray:
        rows = self._rows(slot.dim, slot.shard, slot.row + 1)
        if rows is None:
            raise OSError(f"{self.root}: shard {slot.dim}/{slot.shard} is shorter than its index says")
        return np.asarray(rows[slot.row])


def _stack(found: dict[int, np.ndarray], n: int) -> np.ndarray:
    if n == 0:
        return np.zeros((0, 0), dtype=np.float32)
    return np.stack([found[i] for i in range(n)]).astype(np.float32, copy=False)


def _newest_within(items: list[tuple[bytes, bytes, Slot]], max_bytes: int) -> list[tuple[bytes, bytes, Slot]]:
    """The latest-written items whose rows fit in ``max_bytes`` (kept in their order)."""
    kept, used = [], 0
    for item in reversed(items):
        used += 4 * item[2].dim
        if used > max_bytes:
            break
        kept.append(item)
    return kept[::-1]


def _bytes(path: Path) -> int:
    if not path.exists():
        return 0
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())
