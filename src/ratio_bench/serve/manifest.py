"""An index folder's ``manifest.json`` as one typed record: :class:`IndexManifest`, read and written only here.

``ratio index`` makes the record and writes it (:meth:`IndexManifest.to_json`, through ``write_json``); the
loader, the searcher, the service and the CLI read its fields by name. An index folder may come from someone
else, so :meth:`IndexManifest.from_json` checks the whole document before a record is built: bounded (its
known fields only, at most one model per move), every field the shape the searcher reads, each model's kind one
we have and the fields its kind's ``restore`` reads strings. A bad one is an :class:`IndexFolderError` of one
line naming the field and the fix (``rebuild it with `ratio index```).

A model entry has the fields the searcher reads (kind, name, setup, reference, folder, prompts, adapters, ANN
file, vectors), and the rest of what its retriever wrote (``describe`` and ``save``: a fingerprint, BM25's
saved folder, the vectors' width) kept as written in :attr:`IndexModel.saved`; the retriever gets its entry
back as one document (:meth:`IndexModel.to_json`), so each kind reads the format it writes.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from ratio_bench.core.errors import RatioError, field_name, shown
from ratio_bench.core.relations import RELATIONS
from ratio_bench.retrieval.retriever import RETRIEVERS

KIND = "index"
FORMAT = 1
MOVES = tuple(RELATIONS)  # the three ideation moves: address, broaden, specify
# every field an index manifest may hold (``ratio index`` writes each of them)
FIELDS = ("kind", "format", "code_version", "source", "counts", "candidates", "moves", "models", "ann", "files")  # fmt: skip


class IndexFolderError(RatioError, ValueError):
    """A folder that is not (or cannot become) an index."""


@dataclass(frozen=True)
class AnnFile:
    """A model's approximate faiss index: its kind, its file in the index, and the settings it was built and
    searched with and its measured recall@10 (:func:`ratio_bench.serve.ann.ann_params`, ``recall_at_10``)."""

    kind: str
    file: str
    settings: Mapping[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "file": self.file, **self.settings}


# IndexModel's typed fields that a document holds only when set (``setup`` is always written, null or not)
_OPTIONAL = ("ref", "folder", "query_prompt", "document_prompt", "query_prompts", "adapters_sha256",
             "trust_remote_code", "vectors")  # fmt: skip


@dataclass(frozen=True)
class IndexModel:
    """One distinct model of an index (see the module's docstring); None: the entry does not say."""

    kind: str
    name: str
    setup: str | None = None
    ref: str | None = None  # the reference it was built from: a registered name, or a folder (a record only)
    folder: str | None = None  # a model given as a folder: its copy inside the index
    query_prompt: str | None = None
    document_prompt: str | None = None
    query_prompts: Mapping[str, str] | None = None  # a unified model: one query prompt per move
    adapters_sha256: str | None = None  # per-move query adapters
    trust_remote_code: bool | None = None  # what the builder allowed (never what a search allows)
    vectors: str | None = None  # a dense model's vector file
    ann: AnnFile | None = None
    saved: Mapping[str, Any] = field(default_factory=dict)  # the retriever's other fields, as it wrote them

    @classmethod
    def of_document(cls, doc: Mapping[str, Any]) -> IndexModel:
        """The record of a model entry (checked by :meth:`IndexManifest.from_json`, or our own writer's)."""
        typed = {f.name for f in fields(cls)} - {"ann", "saved"}
        ann = doc.get("ann")
        return cls(
            **{k: v for k, v in doc.items() if k in typed},
            ann=AnnFile(ann["kind"], ann["file"], {k: v for k, v in ann.items() if k not in ("kind", "file")})
            if ann
            else None,
            saved={k: v for k, v in doc.items() if k not in typed and k != "ann"},
        )

    def to_json(self) -> dict[str, Any]:
        """The entry as written: what its retriever's ``restore`` reads."""
        doc: dict[str, Any] = {"kind": self.kind, "name": self.name, "setup": self.setup}
        doc |= {k: v for k in _OPTIONAL if (v := getattr(self, k)) is not None}
        if self.query_prompts is not None:
            doc["query_prompts"] = dict(self.query_prompts)
        if self.ann is not None:
            doc["ann"] = self.ann.to_json()
        return doc | dict(self.saved)

    def value(self, name: str) -> Any:
        """A field of the entry by the name its retriever class gives (``ENTRY_TEXT``, ``ENTRY_PATHS``)."""
        return self.to_json().get(name)

    def query_prompt_for(self, move: str) -> str | None:
        return (self.query_prompts or {}).get(move, self.query_prompt)


@dataclass(frozen=True)
class IndexManifest:
    """What an index folder holds (see the module's docstring): where its candidates came from and how many,
    each move's model key, each distinct model, the ANN kind, and the files a later build may replace."""

    source: Mapping[str, Any]
    moves: Mapping[str, str]
    models: Mapping[str, IndexModel]
    ann: str | None = None
    candidates: int | None = None
    counts: Mapping[str, Any] | None = None
    files: tuple[str, ...] | None = None
    code_version: str | None = None
    kind: str = KIND
    format: int = FORMAT

    @classmethod
    def from_json(cls, doc: Any, root: Path) -> IndexManifest:
        """The (untrusted) manifest of the index at ``root``, checked; IndexFolderError in one line otherwise."""
        _check(doc, root)
        return cls(
            source=dict(doc["source"]),
            moves=dict(doc["moves"]),
            models={key: IndexModel.of_document(m) for key, m in doc["models"].items()},
            ann=doc.get("ann"),
            candidates=doc.get("candidates"),
            counts=doc.get("counts"),
            files=tuple(doc["files"]) if doc.get("files") is not None else None,
            code_version=doc.get("code_version"),
            kind=doc["kind"],
            format=doc["format"],
        )

    def to_json(self) -> dict[str, Any]:
        """The manifest's document (``ratio index`` writes it with ``write_json``)."""
        doc: dict[str, Any] = {"kind": self.kind, "format": self.format}
        if self.code_version is not None:
            doc["code_version"] = self.code_version
        doc["source"] = dict(self.source)
        if self.counts is not None:
            doc["counts"] = dict(self.counts)
        if self.candidates is not None:
            doc["candidates"] = self.candidates
        doc["moves"] = dict(self.moves)
        doc["models"] = {key: m.to_json() for key, m in self.models.items()}
        doc["ann"] = self.ann
        if self.files is not None:
            doc["files"] = list(self.files)
        return doc

    @property
    def move_aware(self) -> bool:
        """Whether the index's moves can rank differently: different models, or one model with a different query
        prompt per move (a unified model), or per-move query adapters. One model with one prompt (BM25, an
        untuned encoder) ranks every move alike, which a user should be told rather than left to infer from three
        identical columns."""
        if len(self.moves) < 2 or len(set(self.moves.values())) > 1:
            return True
        model = self.models[next(iter(self.moves.values()))]
        if model.adapters_sha256:
            return True
        return len({model.query_prompt_for(m) for m in self.moves}) > 1

    def model_for(self, move: str) -> IndexModel:
        return self.models[self.moves[move]]


def _check(manifest: Any, root: Path) -> None:
    """The manifest's fields have the shapes the searcher reads, or one line naming the field.

    An index folder may come from someone else: a wrong type here would otherwise surface as a TypeError
    deep in the searcher."""

    def fail(where: str, what: str, value: Any) -> IndexFolderError:
        return IndexFolderError(
            f"--index {root}: manifest.json: {where} must be {what}, not {shown(value)}; rebuild it with `ratio index`"
        )

    if not isinstance(manifest, dict):
        raise fail("the document", "a JSON object", manifest)
    if manifest.get("format") != FORMAT:  # another format's fields are not these
        raise IndexFolderError(
            f"--index {root}: index format {shown(manifest.get('format'))}, expected {FORMAT}; rebuild it"
        )
    unknown = [k for k in manifest if k not in FIELDS]
    if unknown:
        raise IndexFolderError(
            f"--index {root}: manifest.json: unknown field {field_name(unknown[0])} (an index manifest has "
            f"{', '.join(FIELDS)}); rebuild it with `ratio index`"
        )
    if manifest.get("kind") != KIND:
        raise fail("kind", repr(KIND), manifest.get("kind"))
    models, moves = manifest.get("models"), manifest.get("moves")
    if not isinstance(models, dict) or not all(isinstance(m, dict) for m in models.values()):
        raise fail("models", "a mapping of model entries", models)
    if len(models) > len(MOVES):
        raise fail("models", f"at most {len(MOVES)} entries (one per move)", f"{len(models)} entries")
    if not isinstance(moves, dict) or not moves:
        raise fail("moves", "a mapping of moves to model keys", moves)
    for move, key in moves.items():
        if move not in MOVES:
            raise fail("moves", f"keyed by {', '.join(MOVES)}", move)
        if not isinstance(key, str) or key not in models:
            raise fail(f"moves.{field_name(move)}", "the key of one of its models", key)
    if not isinstance(manifest.get("source"), dict):
        raise fail("source", "a mapping", manifest.get("source"))
    if manifest.get("ann") is not None and not isinstance(manifest["ann"], str):
        raise fail("ann", "null or a string", manifest["ann"])
    _check_counts(manifest, fail)
    for name, entry in models.items():
        _check_model(field_name(name), entry, fail)


def _check_counts(manifest: dict[str, Any], fail: Any) -> None:
    """The bookkeeping fields, when present: counts a mapping, the candidate count a whole number, the files
    a list of names, the code version a string."""
    candidates = manifest.get("candidates")
    if candidates is not None and (type(candidates) is not int or candidates < 0):
        raise fail("candidates", "a whole number", candidates)
    if manifest.get("counts") is not None and not isinstance(manifest["counts"], dict):
        raise fail("counts", "a mapping", manifest["counts"])
    files = manifest.get("files")
    if files is not None and not (isinstance(files, list) and all(isinstance(f, str) for f in files)):
        raise fail("files", "a list of file names", files)
    if manifest.get("code_version") is not None and not isinstance(manifest["code_version"], str):
        raise fail("code_version", "a string", manifest["code_version"])


def _check_model(key: str, entry: dict[str, Any], fail: Any) -> None:
    """One model entry: a kind we have, the strings its kind's ``restore`` reads, the paths it names."""
    kind = entry.get("kind")
    if not isinstance(kind, str) or kind not in RETRIEVERS:
        raise fail(f"models.{key}.kind", " or ".join(RETRIEVERS), kind)
    for text in ("name", *RETRIEVERS[kind].ENTRY_TEXT):  # the fields its kind's restore reads
        if not isinstance(entry.get(text), str):
            raise fail(f"models.{key}.{text}", "a string", entry.get(text))
    for path in RETRIEVERS[kind].ENTRY_PATHS:  # the files it names, if any
        if not isinstance(entry.get(path, ""), str):
            raise fail(f"models.{key}.{path}", "a file or folder name", entry[path])
    for text in ("ref", "setup", "query_prompt", "document_prompt", "vectors", "folder"):
        if entry.get(text) is not None and not isinstance(entry[text], str):
            raise fail(f"models.{key}.{text}", "a string", entry[text])
    prompts = entry.get("query_prompts", {})
    if not isinstance(prompts, dict) or not all(isinstance(v, str) for v in prompts.values()):
        raise fail(f"models.{key}.query_prompts", "a mapping of moves to prompts", prompts)
    if not isinstance(entry.get("adapters_sha256", ""), str):
        raise fail(f"models.{key}.adapters_sha256", "a SHA-256 text", entry["adapters_sha256"])
    if not isinstance(entry.get("trust_remote_code", False), bool):
        raise fail(f"models.{key}.trust_remote_code", "true or false", entry["trust_remote_code"])
    ann_entry = entry.get("ann")
    if ann_entry is not None and not (
        isinstance(ann_entry, dict) and all(isinstance(ann_entry.get(f), str) for f in ("kind", "file"))
    ):
        raise fail(f"models.{key}.ann", "null or a mapping with a kind and a file", ann_entry)
