"""The index folder: candidates with provenance, one vector file per model, an optional ANN index per model.

Layout (self-describing; ``manifest.json`` says what everything is)::

    IDX/manifest.json          kind "index", format, source (release or corpus), counts, moves -> model key,
                               models (reference, resolved name, kind, fingerprint, prompts, files, ANN):
                               one typed record, :class:`~ratio_bench.serve.manifest.IndexManifest`
    IDX/candidates.parquet     id, text, paper_id, title, date, venue, section (row i = vector row i)
    IDX/vectors/<key>.npy      float32, L2-normalised, one per distinct dense model (not for BM25)
    IDX/ann/<key>.faiss        with --ann: a faiss HNSW or IVF index over the same vectors
    IDX/bm25/<key>/            a BM25 model's bm25s index (score matrix, vocabulary, parameters; no pickle)
    IDX/models/<key>/          a model given as a folder, copied (registered models are named, not copied)

Each distinct model is a :class:`~ratio_bench.retrieval.retriever.Retriever` that describes itself and saves
its own files here (``describe``/``save``; the searcher makes it again with ``restore``), so nothing in this
module or the searcher branches on a model's kind. Candidates are encoded once per distinct model, through the
embedding cache (so a release split that ``ratio score`` already encoded costs nothing, and an interrupted
encoding resumes). BM25's index is built once and saved (an index of an older build without one is rebuilt from the texts when loaded). The folder is built beside its destination
and renamed into place; only an empty folder or an earlier index of ours is ever replaced.

An index may come from someone else, so loading one trusts nothing in its manifest: every path it names must
stay inside the index folder (links included), and a model runs its own code only with the user's
``--trust-remote-code``, never because the manifest says so.
"""

from __future__ import annotations

import os
import re
import shutil
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from ratio_bench import __version__
from ratio_bench.core.errors import UsageError
from ratio_bench.core.io import artefact_kind, folder_files, read_json_file, staged_dir, write_json
from ratio_bench.core.options import parse_assignment
from ratio_bench.retrieval.cache import EmbeddingCache
from ratio_bench.retrieval.registry import ModelSetup, is_registered, resolve
from ratio_bench.retrieval.retriever import RETRIEVERS, load_retriever
from ratio_bench.serve import ann
from ratio_bench.serve.candidates import Candidates
from ratio_bench.serve.manifest import (
    KIND,
    MOVES,
    AnnFile,
    IndexFolderError,
    IndexManifest,
    IndexModel,
)


def _model_ref(text: str) -> str:
    if not text:
        raise ValueError("give a model after '='")
    return text


def parse_model_args(values: list[str]) -> dict[str, str]:
    """``--model REF`` (every move) and/or ``--model MOVE=REF`` to a reference per move."""
    default: str | None = None
    per_move: dict[str, str] = {}
    for value in values:
        if not value:  # Path("") exists: it is the working directory
            raise UsageError("--model '': empty model reference; give a registered name or a model folder")
        if "=" in value and not Path(value).exists():
            move, ref = parse_assignment(value, "--model", MOVES, _model_ref, "MOVE=REF", "move")
            per_move[move] = ref
        elif default is not None:
            raise UsageError(f"--model given twice without a move ({default}, {value}); use MOVE=REF")
        else:
            default = value
    missing = [m for m in MOVES if m not in per_move and default is None]
    if missing:
        raise UsageError(f"--model: no model for {', '.join(missing)}; add --model REF or --model MOVE=REF")
    return {m: per_move.get(m, default) for m in MOVES}  # type: ignore[misc]


TOPICAL_NOTICE = "one model and one prompt for every move: results are topical, not move-specific"


def is_index(folder: Path) -> bool:
    return artefact_kind(folder) == KIND


def _identity(setup: ModelSetup) -> ModelSetup:
    """The setup with its folder made absolute: a folder named relatively for one move and absolutely for
    another (a unified model given per move) is one model, one encoding and one vector file, not two."""
    return replace(setup, path=str(Path(setup.path).resolve())) if setup.path else setup


def _key(setup: ModelSetup, taken: set[str]) -> str:
    base = re.sub(r"[^A-Za-z0-9._-]+", "_", setup.name)
    key, n = base, 2
    while key in taken:
        key, n = f"{base}-{n}", n + 1
    return key


@dataclass
class BuildReport:
    out: Path
    candidates: int
    models: dict[str, str]  # key -> model name
    encode_s: dict[str, float] = field(default_factory=dict)
    cache_hits: int = 0
    ann: dict[str, ann.AnnReport] = field(default_factory=dict)


def build_index(
    candidates: Candidates,
    models: dict[str, str],
    out: str | Path,
    cache: EmbeddingCache | None = None,
    ann_kind: str | None = None,
    batch_size: int = 64,
    trust_remote_code: bool = False,
) -> BuildReport:
    """Write an index of ``candidates`` searched by ``models`` (move -> model reference) to ``out``."""
    cache = cache or EmbeddingCache()
    report = BuildReport(Path(out), len(candidates.ids), {})
    with staged_dir(out, KIND) as staging:  # a crashed build leaves nothing; the vectors stay in the cache
        _write(candidates, models, staging, cache, ann_kind, batch_size, trust_remote_code, report)
    return report


def _write(candidates, models, staging, cache, ann_kind, batch_size, trust_remote_code, report) -> None:
    """Candidates, each distinct model's saved index (vectors, ANN files, a BM25 index) and the manifest."""
    (staging / "vectors").mkdir()  # the layout's folder for vector files, present in every index
    ids, texts = candidates.ids, candidates.texts
    pq.write_table(candidates.table, staging / "candidates.parquet", compression="zstd")

    entries: dict[str, IndexModel] = {}
    keys: dict[ModelSetup, str] = {}  # one key, one encoding, per distinct resolved model and prompts
    # model folder -> its copy in the index: one per folder, whatever the prompts it is used with
    copies: dict[str, str] = {}
    moves: dict[str, str] = {}
    for move in MOVES:
        setup = _identity(resolve(models[move], trust_remote_code=trust_remote_code))
        if setup not in keys:
            key = keys[setup] = _key(setup, set(entries))
            retriever = load_retriever(setup, cache, batch_size)
            folder = None
            if setup.path and not is_registered(models[move]):  # a folder: the index keeps a copy
                if setup.path not in copies:
                    copies[setup.path] = f"models/{key}"
                    shutil.copytree(setup.path, staging / copies[setup.path])  # links are copied as files
                folder = copies[setup.path]
            hits, start = cache.hits, time.perf_counter()
            retriever.index(ids, texts)
            report.encode_s[key] = time.perf_counter() - start
            report.cache_hits += cache.hits - hits
            written = retriever.describe() | retriever.save(staging, key)  # the retriever's own fields
            entry = IndexModel.of_document(
                {"ref": models[move], "name": setup.name, "kind": setup.kind, "setup": setup.setup}
                | ({"folder": folder} if folder else {})
                | written
            )
            if ann_kind and retriever.embeds:
                entry = replace(entry, ann=_ann(retriever, setup, texts, staging, report, key, ann_kind))
            entries[key] = entry
            report.models[key] = setup.name
        moves[move] = keys[setup]
    manifest = IndexManifest(
        source=candidates.source,
        moves=moves,
        models=entries,
        ann=ann_kind,
        candidates=len(ids),
        counts=candidates.counts,
        files=tuple(folder_files(staging)),  # what a later build here may replace
        code_version=__version__,
    )
    write_json(staging / "manifest.json", manifest.to_json())


def _ann(retriever, setup, texts, staging, report, key, ann_kind) -> AnnFile:
    """A faiss ANN index over a retriever's vectors, with its recall@10 against exact search measured."""
    vectors = np.asarray(retriever.vectors, dtype=np.float32)
    start = time.perf_counter()
    index = ann.build_ann(vectors, ann_kind)
    build_s = time.perf_counter() - start
    (staging / "ann").mkdir(exist_ok=True)
    file = f"ann/{key}.faiss"
    ann.save(index, staging / file)
    rows = ann.sample_rows(len(texts))
    queries = retriever.encoder.encode([texts[i] for i in rows], setup.query_prompt, "query")
    measured = ann.measure(vectors, index, ann_kind, build_s, queries, rows)
    report.ann[key] = measured
    settings = {**ann.ann_params(ann_kind, len(texts)), "recall_at_10": round(measured.recall_at_10, 4)}
    return AnnFile(ann_kind, file, settings)


@dataclass
class Index:
    """A loaded index: its manifest, provenance table, and each dense model's vectors (memory-mapped).

    Every path the manifest names has been checked to lie inside ``root`` (see :func:`load_index`).
    """

    root: Path
    manifest: IndexManifest
    table: pa.Table
    vectors: dict[str, np.ndarray]

    @property
    def moves(self) -> list[str]:
        return list(self.manifest.moves)

    def __len__(self) -> int:
        return self.table.num_rows


def load_index(path: str | Path) -> Index:
    """Open an index folder, or say in one line why it is not one."""
    root = Path(path)
    hint = "build one with `ratio index --dataset DIR --split SPLIT --model NAME --out IDX`"
    if not root.is_dir():
        raise IndexFolderError(f"--index {root}: folder not found; {hint}")
    if not is_index(root):
        raise IndexFolderError(
            f"--index {root}: not a Ratio index (no manifest.json of kind 'index'); {hint}"
        )
    manifest = IndexManifest.from_json(read_json_file(root / "manifest.json"), root)
    _check_paths(root, manifest)
    try:
        table = pq.read_table(root / "candidates.parquet")
        vectors = {
            key: np.load(root / m.vectors, mmap_mode="r") for key, m in manifest.models.items() if m.vectors
        }
    except (OSError, ValueError, KeyError) as e:
        raise IndexFolderError(
            f"--index {root}: incomplete index ({e}); rebuild it with `ratio index`"
        ) from e
    for key, v in vectors.items():
        if v.shape[0] != table.num_rows:
            raise IndexFolderError(
                f"--index {root}: {key} has {v.shape[0]} vectors for {table.num_rows} candidates"
            )
    return Index(root, manifest, table, vectors)


def _check_paths(root: Path, manifest: IndexManifest) -> None:
    """Refuse an index whose manifest would make us read outside its folder (an index may be a stranger's)."""
    named = [("candidates.parquet", "candidates.parquet")]  # not from the manifest, but it may be a link
    for key, m in manifest.models.items():
        paths = ((f, m.value(f)) for f in RETRIEVERS[m.kind].ENTRY_PATHS)
        named += [(f"manifest field models.{key}.{f}", value) for f, value in paths if value is not None]
        if m.ann:
            named.append((f"manifest field models.{key}.ann.file", m.ann.file))
    for what, value in named:
        where = _inside(root, value, what)
        if where.is_dir():
            _check_model_tree(root, where, what)


def _inside(root: Path, value: Any, what: str) -> Path:
    """``value`` as a path under ``root``: relative, no ``..``, no link out, and a plain file or folder."""
    relative = (
        isinstance(value, str) and value and not Path(value).is_absolute() and ".." not in Path(value).parts
    )
    path = root / value if relative else root
    if (
        not relative
        or not path.resolve().is_relative_to(root.resolve())
        or (path.exists() and not (path.is_file() or path.is_dir()))  # a FIFO or device would hang a read
    ):
        raise IndexFolderError(
            f"--index {root}: {what} ({value!r}) must be a file or folder inside the "
            "index folder; rebuild the index with `ratio index`"
        )
    return path


def _check_model_tree(root: Path, folder: Path, what: str) -> None:
    """A model folder in the index holds plain files and folders only: ``ratio index`` copies links as files,
    so a link here was put by hand (and may lead out of the index, or loop)."""
    for dirpath, dirnames, filenames in os.walk(folder):
        for name in dirnames + filenames:
            p = Path(dirpath) / name
            if p.is_symlink() or not (p.is_file() or p.is_dir()):
                raise IndexFolderError(
                    f"--index {root}: {what}: {p} is a link or not a plain file; "
                    "rebuild the index with `ratio index`"
                )
