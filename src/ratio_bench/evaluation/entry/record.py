"""A leaderboard entry as one typed record: :class:`Entry`, read from and written to its JSON document.

The JSON document (``eval/submission.schema.json``, the published schema) is the exchange format; inside the
program an entry is an :class:`Entry`, so every reader names fields instead of string keys, and the rules that
JSON Schema cannot say (every scored relation has queries, judged figures belong to a scored relation, the cut-off
and ``clean`` agree, per-query ranks give the entry's own figures) live here, beside the fields they relate.
The record's fields and the schema's properties are the same (``tests/evaluation/entry/test_record.py`` checks it,
record by record), so a new field is added to both or the test fails.

Entries are untrusted (anyone can submit one): :meth:`Entry.from_json` checks the whole document first (schema
bounds, then the cross-field rules) and raises :class:`SubmissionError` with the path and reason; only then is a
record built. Every schema version we have written (``schema_version`` 1, with or without the optional blocks that
later code added: cut-offs, per-query ranks, judged figures, fingerprints) reads through :func:`_migrate`, and
:meth:`Entry.to_json` writes it back byte-for-byte equal after ``json.dumps(sort_keys=True)``.

What the board's loader knows of an entry and the file does not say (the results repository's ``provenance`` mark,
the version an entry was ``scored_on`` when carried forward, the repository whose row has the ``same_weights_as``
it) are typed fields too, never written to a file.
"""

from __future__ import annotations

import copy
import json
import math
from collections.abc import Iterator, Mapping
from dataclasses import MISSING, dataclass, field, fields, replace
from functools import lru_cache
from typing import Any

from ratio_bench.core import cutoffs, extras
from ratio_bench.core.cutoffs import Cutoff
from ratio_bench.core.errors import RatioError
from ratio_bench.core.relations import RELATIONS
from ratio_bench.core.resources import data_path
from ratio_bench.core.snapshots import is_snapshot
from ratio_bench.evaluation.entry.model_meta import ModelMeta, check_model_meta
from ratio_bench.evaluation.entry.ranks import gold_rank_metric

jsonschema = extras.lazy("jsonschema")

SCHEMA_VERSION = 1
MAIN_SCORE = "mrr_at_10"
MAX_MESSAGE = 200  # a schema message quotes the offending value, which may be long
# A stored figure is rounded to 6 decimals; its mean over ranks may differ by that rounding and float error.
PER_QUERY_TOLERANCE = 2e-6


class SubmissionError(RatioError, ValueError):
    pass


@dataclass(frozen=True)
class Dataset:
    """The release build an entry was scored on: name, version, manifest checksum, and the split hashes."""

    name: str
    version: str
    manifest_sha256: str
    split_sha256: str | None = None
    split_hashes: Mapping[str, str] | None = None
    hub: str | None = None  # ORG/NAME@<commit sha>: the Hub dataset it was read from, when read by name


@dataclass(frozen=True)
class TrainedFrom:
    """The ``ratio train`` config a model came from."""

    config: str
    config_sha256: str


@dataclass(frozen=True)
class Judged:
    """One relation's figures against the judged pool (not used for ranking)."""

    judge_model: str
    queries: int
    judged_pairs: int
    coverage_at_10: float
    hard: Mapping[str, float]
    soft: Mapping[str, float]


@dataclass(frozen=True)
class PerQuery:
    """One relation's gold ranks in the order of its sorted query ids, with those ids' SHA-256."""

    query_ids_sha256: str
    gold_rank: tuple[int, ...]


@dataclass(frozen=True)
class Withheld:
    """Figures on a withheld snapshot, scored in custody by a worker (``ratio dataset build --withhold``): per
    relation the aggregate metrics, the queries and MRR@10's 95% bootstrap interval, and the split's SHA-256 (the
    public manifest's withheld record), never per-query ranks or ids, which would help rebuild the split's golds.
    Shown and ranked only on a verified entry (a self-reported one cannot have seen the split)."""

    split: str
    split_sha256: str
    results: Mapping[str, Mapping[str, float]]
    n_queries: Mapping[str, int]
    interval: Mapping[str, tuple[float, float]]
    n_candidates: int | None = None

    @property
    def mean_score(self) -> float:
        """The withheld ranking key: MRR@10 averaged over the relations scored on the withheld split."""
        return sum(m[MAIN_SCORE] for m in self.results.values()) / len(self.results)


@dataclass(frozen=True)
class Sample:
    """``ratio score --sample``: a seeded sample of queries (never ranked)."""

    queries_per_relation: int
    seed: int


@dataclass(frozen=True)
class Provenance:
    """The results repository loader's mark (never in a file): ``verified`` or ``self-reported`` with why, and
    the row's repository and commit when its folder is a worker's."""

    status: str
    detail: str = ""
    repo: str | None = None
    commit: str | None = None
    signed_at: str | None = None

    @property
    def verified(self) -> bool:
        return self.status == "verified"

    @property
    def text(self) -> str:
        return self.status + (f" ({self.detail})" if self.detail else "")


@dataclass(frozen=True)
class Scored:
    """Figures under a row name, with their per-query ranks when known: what a table and the bootstrap read of
    an entry, also of a scoring run's own document (a ``--sample`` one included) or an analysis's pools."""

    label: str
    results: Mapping[str, Mapping[str, float]]
    per_query: Mapping[str, PerQuery] = field(default_factory=dict)
    n_queries: Mapping[str, int] = field(default_factory=dict)

    @classmethod
    def of_document(cls, doc: Mapping[str, Any]) -> Scored:
        """Our own writer's document (``results.leaderboard_entry``), read without the board's checks."""
        label = row_label(doc["model"], doc.get("tuned_for"))
        per_query = {
            rel: PerQuery(b["query_ids_sha256"], tuple(b["gold_rank"]))
            for rel, b in doc.get("per_query", {}).items()
        }
        return cls(label, doc["results"], per_query, dict(doc.get("n_queries", {})))

    def queries(self, relation: str) -> int | None:
        return self.n_queries.get(relation)


# The loader's fields: typed, never read from or written to a file.
LOADER_FIELDS = ("provenance", "scored_on", "same_weights_as")
# what the record keeps of how its file was written (so it writes the same bytes back); no schema property
BOOKKEEPING = ("clean_recorded", "model_meta_nulls")


@dataclass(frozen=True)
class Entry:
    """One model setup scored on one split of one release build (see the module's docstring)."""

    model: str
    dataset: Dataset
    split: str
    results: Mapping[str, Mapping[str, float]]
    schema_version: int = SCHEMA_VERSION
    main_score: str = MAIN_SCORE
    code_version: str | None = None
    n_queries: Mapping[str, int] = field(default_factory=dict)
    tuned_for: str | None = None
    model_fingerprint: str | None = None
    precision: str | None = None  # the dtype the weights were loaded in (the scorer's choice)
    trained_from: TrainedFrom | None = None
    n_candidates: int | None = None  # the split's candidate pool (the pictures name it)
    submitter: str | None = None
    training_data_cutoff: str | None = None
    training_data_cutoff_source: str | None = None
    clean: bool | None = None
    clean_recorded: bool = False  # whether the file says ``clean`` (true, false or null) at all
    # the model_meta keys the file states as null (the worker writes every key, unknowns as null; a hand-written
    # block may leave them out): kept so that an entry read and written again is the file's bytes
    model_meta_nulls: tuple[str, ...] = field(default=(), compare=False)
    scored_at: str | None = None
    judged: Mapping[str, Judged] = field(default_factory=dict)
    per_query: Mapping[str, PerQuery] = field(default_factory=dict)
    sample: Sample | None = None
    withheld: Withheld | None = None
    reproduce: str | None = None
    model_meta: ModelMeta | None = None
    provenance: Provenance | None = None
    scored_on: str | None = None
    same_weights_as: str | None = None

    # --- reading and writing ----------------------------------------------------------------------------

    @classmethod
    def from_json(cls, doc: Any) -> Entry:
        """An (untrusted) entry document, checked (schema bounds, then the cross-field rules) and migrated;
        SubmissionError naming the path and the reason otherwise."""
        _check_schema(doc)
        entry = _build(_migrate(doc))
        entry.check()
        return entry

    def to_json(self) -> dict[str, Any]:
        """The entry's document (what a results file holds; the loader's fields are left out), its keys in the
        order ``ratio score`` has always written them (a file sorts them; ``ratio score --json`` does not)."""
        doc: dict[str, Any] = {"schema_version": self.schema_version, "model": self.model}
        doc["dataset"] = _drop_none(_plain(self.dataset))
        doc["split"] = self.split
        _put(doc, code_version=self.code_version)
        doc["main_score"] = self.main_score
        doc["results"] = {rel: dict(m) for rel, m in self.results.items()}
        if self.n_queries:
            doc["n_queries"] = dict(self.n_queries)
        _put(
            doc,
            model_fingerprint=self.model_fingerprint,
            precision=self.precision,
            trained_from=_plain(self.trained_from) if self.trained_from else None,
        )
        if self.training_data_cutoff_source is not None:
            doc["training_data_cutoff"] = self.training_data_cutoff
            doc["training_data_cutoff_source"] = self.training_data_cutoff_source
        if self.clean_recorded:
            doc["clean"] = self.clean
        if self.per_query:
            doc["per_query"] = {rel: _plain(b) for rel, b in self.per_query.items()}
        _put(doc, n_candidates=self.n_candidates, submitter=self.submitter, tuned_for=self.tuned_for)
        if self.judged:
            doc["judged"] = {rel: _plain(b) for rel, b in self.judged.items()}
        _put(
            doc,
            sample=_plain(self.sample) if self.sample else None,
            model_meta=self._model_meta_doc(),
            scored_at=self.scored_at,
            reproduce=self.reproduce,
            withheld=withheld_doc(self.withheld) if self.withheld is not None else None,
        )
        return doc

    def _model_meta_doc(self) -> dict[str, Any] | None:
        """The model_meta block as the file had it: its known values, and the nulls it stated."""
        if self.model_meta is None:
            return None
        return {
            k: v for k, v in _plain(self.model_meta).items() if v is not None or k in self.model_meta_nulls
        }

    def marked(self, **marks: Any) -> Entry:
        """A copy with loader fields set (``provenance``, ``scored_on``, ``same_weights_as``, ``scored_at``)."""
        return replace(self, **marks)

    # --- what readers ask -------------------------------------------------------------------------------

    @property
    def label(self) -> str:
        return row_label(self.model, self.tuned_for)

    @property
    def cutoff(self) -> Cutoff:
        """The recorded training-data cut-off; an entry from before cut-offs were recorded: unknown."""
        if self.training_data_cutoff_source is None:
            return cutoffs.unknown("not recorded in this entry")
        return Cutoff(cutoffs.recorded_date(self.training_data_cutoff), self.training_data_cutoff_source)

    @property
    def is_clean(self) -> bool | None:
        """Clean, contaminated or unknown on a dated snapshot (decided from the cut-off, never the claim)."""
        return cutoffs.is_clean(self.cutoff, self.split)

    @property
    def status(self) -> str:
        """``verified`` only for an entry the loader verified; everything else is self-reported."""
        return "verified" if self.provenance is not None and self.provenance.verified else "self-reported"

    @property
    def commit(self) -> str | None:
        return self.provenance.commit if self.provenance else None

    @property
    def repository(self) -> str:
        """The repository a row names: the signed folder's, else the model name before its setup."""
        return (self.provenance.repo if self.provenance else None) or self.model.split(":")[0]

    @property
    def mean_score(self) -> float:
        """The ranking key: MRR@10 averaged over the relations the entry was scored on."""
        return sum(m[MAIN_SCORE] for m in self.results.values()) / len(self.results)

    def score(self, relation: str, metric: str = MAIN_SCORE) -> float | None:
        values = self.results.get(relation)
        return None if values is None else values[metric]

    def queries(self, relation: str) -> int | None:
        return self.n_queries.get(relation)

    @property
    def release(self) -> tuple[str, str]:
        return self.dataset.name, self.dataset.version

    def scored(self, label: str | None = None) -> Scored:
        return Scored(self.label if label is None else label, self.results, self.per_query, self.n_queries)

    @property
    def bare_relations(self) -> set[str]:
        """Scored relations without per-query data (figures without an interval)."""
        return set(self.results) - set(self.per_query)

    # --- the rules JSON Schema cannot say ---------------------------------------------------------------

    def check(self) -> None:
        """Every cross-field rule; SubmissionError with the path and reason."""
        unknown = set(self.results) - set(RELATIONS)
        if unknown:
            raise SubmissionError(f"invalid submission: unknown relations {sorted(unknown)}")
        if self.sample is not None:  # a fast look, not a result: its scores come from a few queries
            raise SubmissionError(
                f"a sample of {self.sample.queries_per_relation} queries per relation (ratio score --sample), "
                "never ranked; score without --sample for the board"
            )
        self._check_counts()
        if self.model_meta is not None and (problem := check_model_meta(_plain(self.model_meta))):
            raise SubmissionError(f"invalid submission at model_meta/{problem}")
        self._check_judged()
        self._check_cutoff()
        self._check_per_query()
        self._check_withheld()

    def _check_withheld(self) -> None:
        """A withheld block is another snapshot's figures: a dated split other than the entry's, every scored
        relation with queries and an interval that holds its MRR@10."""
        held = self.withheld
        if held is None:
            return
        where = "invalid submission at withheld"
        if not is_snapshot(held.split) or held.split == self.split:
            raise SubmissionError(f"{where}/split: {held.split} is no other dated snapshot than {self.split}")
        unknown = (set(held.results) | set(held.n_queries) | set(held.interval)) - set(RELATIONS)
        if unknown or set(held.results) != set(held.interval) or set(held.results) != set(held.n_queries):
            raise SubmissionError(f"{where}: results, n_queries and interval must name the same relations")
        for rel, (low, high) in held.interval.items():
            if held.n_queries[rel] < 1:
                raise SubmissionError(f"{where}/n_queries/{rel}: a figure needs at least one query")
            if not low - PER_QUERY_TOLERANCE <= held.results[rel][MAIN_SCORE] <= high + PER_QUERY_TOLERANCE:
                raise SubmissionError(
                    f"{where}/interval/{rel}: [{low}, {high}] does not hold its {MAIN_SCORE}"
                )

    def _check_counts(self) -> None:
        """Every scored relation was scored on some queries (a figure over no query is no figure)."""
        for rel in self.results:
            if rel in self.n_queries and self.n_queries[rel] < 1:
                raise SubmissionError(
                    f"invalid submission at n_queries/{rel}: {self.n_queries[rel]} queries; a figure needs at least one"
                )

    def _check_judged(self) -> None:
        """Judged figures belong to a relation the entry scored, on at most its queries."""
        for rel, block in self.judged.items():
            if rel not in self.results:
                raise SubmissionError(
                    f"invalid submission at judged/{rel}: no results for {rel} to go with it"
                )
            scored = self.n_queries.get(rel)
            if scored is not None and block.queries > scored:
                raise SubmissionError(
                    f"invalid submission at judged/{rel}/queries: {block.queries} judged of {scored} scored queries"
                )

    def _check_cutoff(self) -> None:
        """The cut-off is a real date, and ``clean`` is what the cut-off and the snapshot's dates make it (the
        board decides cleanness itself; an entry may not claim otherwise)."""
        try:
            cutoff = self.cutoff
        except ValueError as e:
            raise SubmissionError(f"invalid submission at training_data_cutoff: {e}") from None
        if cutoff.untrained and self.training_data_cutoff is not None:
            raise SubmissionError(
                f"invalid submission at training_data_cutoff_source: {cutoffs.NO_TRAINING_DATA!r} goes with a "
                f"null cut-off, not {self.training_data_cutoff}"
            )
        if not self.clean_recorded:
            return
        if not is_snapshot(self.split):
            raise SubmissionError(
                f"invalid submission at clean: split {self.split} is no dated test snapshot"
            )
        if self.clean != cutoffs.is_clean(cutoff, self.split):
            raise SubmissionError(
                f"invalid submission at clean: {self.clean} does not follow from training_data_cutoff "
                f"{self.training_data_cutoff} and split {self.split}"
            )

    def _check_per_query(self) -> None:
        """One rank per scored query, and ranks that give the entry's own figures (else an interval would be
        drawn around numbers its data does not support)."""
        for rel, block in self.per_query.items():
            where = f"invalid submission at per_query/{rel}"
            if rel not in self.results:
                raise SubmissionError(f"{where}: no results for {rel} to go with it")
            ranks, scored = block.gold_rank, self.n_queries.get(rel)
            if scored != len(ranks):
                raise SubmissionError(f"{where}/gold_rank: {len(ranks)} ranks for n_queries {scored}")
            histogram: dict[int, int] = {}
            for r in ranks:
                histogram[r] = histogram.get(r, 0) + 1
            for name, value in self.results[rel].items():
                mean = sum(n * gold_rank_metric(name, r) for r, n in histogram.items()) / len(ranks)
                if abs(mean - value) > PER_QUERY_TOLERANCE:
                    raise SubmissionError(
                        f"{where}/gold_rank: the ranks give {name} {mean:.6f}, the results say {value}"
                    )


def row_label(model: str, tuned_for: str | None) -> str:
    """A row's name: the model, and for a tuned model the relation it was tuned for (three tuned copies of one
    backbone and setup would otherwise share a name); a unified model is one model for every move."""
    if not tuned_for:
        return model
    return model + (" [unified, all moves]" if tuned_for == "all" else f" [tuned for {tuned_for}]")


# --- the document <-> the record ---------------------------------------------------------------------------


def _migrate(doc: dict[str, Any]) -> dict[str, Any]:
    """A checked document in the current shape. Every version we have written is ``schema_version`` 1; its
    optional blocks arrived over time (cut-offs, per-query ranks, judged figures, fingerprints, model facts),
    and an older file simply lacks them, which the record's defaults say. A future version 2 adds its step
    here, so readers never see an old shape."""
    return doc


def _build(doc: dict[str, Any]) -> Entry:
    """The record from a checked, migrated document."""
    kw: dict[str, Any] = {k: v for k, v in doc.items() if k in _SCALARS}
    kw["dataset"] = Dataset(**doc["dataset"])
    kw["results"] = {rel: dict(m) for rel, m in doc["results"].items()}
    kw["n_queries"] = dict(doc.get("n_queries", {}))
    if "trained_from" in doc:
        kw["trained_from"] = TrainedFrom(**doc["trained_from"])
    if "model_meta" in doc:
        kw["model_meta"] = ModelMeta(**doc["model_meta"])
        kw["model_meta_nulls"] = tuple(k for k, v in doc["model_meta"].items() if v is None)
    if "sample" in doc:
        kw["sample"] = Sample(**doc["sample"])
    if "withheld" in doc:
        held = doc["withheld"]
        kw["withheld"] = Withheld(
            held["split"],
            held["split_sha256"],
            {rel: dict(m) for rel, m in held["results"].items()},
            dict(held["n_queries"]),
            {rel: (b[0], b[1]) for rel, b in held["interval"].items()},
            held.get("n_candidates"),
        )
    kw["judged"] = {rel: Judged(**b) for rel, b in doc.get("judged", {}).items()}
    kw["per_query"] = {
        rel: PerQuery(b["query_ids_sha256"], tuple(b["gold_rank"]))
        for rel, b in doc.get("per_query", {}).items()
    }
    kw["clean_recorded"] = "clean" in doc
    return Entry(**kw)


_SCALARS = frozenset(
    {
        "schema_version", "model", "split", "main_score", "code_version", "tuned_for", "model_fingerprint", "precision",
        "n_candidates",
        "submitter", "training_data_cutoff", "training_data_cutoff_source", "clean", "scored_at", "reproduce",
    }
)  # fmt: skip


def _plain(record: Any) -> dict[str, Any]:
    """A nested record as JSON values (tuples as lists, mappings as dicts)."""
    out = {}
    for f in fields(record):
        value = getattr(record, f.name)
        out[f.name] = (
            list(value) if isinstance(value, tuple) else dict(value) if isinstance(value, Mapping) else value
        )
    return out


def withheld_doc(held: Withheld) -> dict[str, Any]:
    """A withheld block as its document (what the entry file holds)."""
    doc = {
        "split": held.split,
        "split_sha256": held.split_sha256,
        "results": {rel: dict(m) for rel, m in held.results.items()},
        "n_queries": dict(held.n_queries),
        "interval": {rel: list(b) for rel, b in held.interval.items()},
    }
    return doc | ({"n_candidates": held.n_candidates} if held.n_candidates is not None else {})


def _put(doc: dict[str, Any], **values: Any) -> None:
    """Add the values that are set (an optional field left unset is no key in the document)."""
    doc.update({k: v for k, v in values.items() if v is not None})


def _drop_none(doc: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in doc.items() if v is not None}


def _check_schema(doc: Any) -> None:
    """The published schema's bounds (and strict numbers: Python's ``json`` reads NaN and Infinity, which
    compare as neither below 0 nor above 1)."""
    for where in _non_finite_numbers(doc, ()):
        raise SubmissionError(
            f"invalid submission at {'/'.join(where) or '(root)'}: NaN and infinities are not numbers in JSON"
        )
    if _fast_valid(doc):
        return
    errors = sorted(_validator().iter_errors(doc), key=lambda e: list(map(str, e.path)))
    if errors:
        e = errors[0]
        where = "/".join(map(str, e.path)) or "(root)"
        message = e.message if len(e.message) <= MAX_MESSAGE else e.message[: MAX_MESSAGE - 3] + "..."
        raise SubmissionError(f"invalid submission at {where}: {message}")


@lru_cache(maxsize=1)
def _validator() -> Any:
    return jsonschema.Draft202012Validator(published_schema())


MAX_RANK = 100  # the schema's bound on a gold rank (checked equal to it by _rank_validator)


def _fast_valid(doc: Any) -> bool:
    """True when ``doc`` surely passes the schema: the schema without the per-rank items rule, then every gold
    rank checked in one plain loop. Most of a board's read was jsonschema descending into each of a thousand
    entries' rank lists; a document this does not pass goes to the full validator, whose verdict and message
    stand, so the outcome is the schema's either way."""
    if next(_rank_validator().iter_errors(doc), None) is not None:
        return False
    blocks = doc.get("per_query", {}).values()
    return all(type(r) is int and 0 <= r <= MAX_RANK for block in blocks for r in block["gold_rank"])


@lru_cache(maxsize=1)
def _rank_validator() -> Any:
    """The published schema less the items rule of ``per_query.*.gold_rank`` (checked to be what _fast_valid
    checks by hand)."""

    schema = copy.deepcopy(published_schema())
    ranks = schema["properties"]["per_query"]["additionalProperties"]["properties"]["gold_rank"]
    if ranks.pop("items") != {"type": "integer", "minimum": 0, "maximum": MAX_RANK}:
        raise AssertionError("the schema's gold_rank items changed: update _fast_valid")
    return jsonschema.Draft202012Validator(schema)


def published_schema() -> dict[str, Any]:
    """``eval/submission.schema.json``, the schema we publish (its properties are the record's fields)."""

    return json.loads(data_path("eval", "submission.schema.json").read_text(encoding="utf-8"))


def record_fields() -> dict[str, tuple[type, tuple[str, ...], tuple[str, ...]]]:
    """Per JSON object of the schema (``#`` the entry, ``dataset``, ...), the record behind it with its field
    names and its required ones (no default): what the schema test compares with the published schema."""
    records = {
        "#": Entry, "dataset": Dataset, "trained_from": TrainedFrom, "judged/*": Judged,
        "per_query/*": PerQuery, "sample": Sample, "model_meta": ModelMeta, "withheld": Withheld,
    }  # fmt: skip
    out = {}
    for where, record in records.items():
        names = [f.name for f in fields(record) if f.name not in (*LOADER_FIELDS, *BOOKKEEPING)]
        required = [f.name for f in fields(record) if _required(f)]
        out[where] = (record, tuple(names), tuple(required))
    return out


def _required(f: Any) -> bool:
    if f.default is not MISSING or f.default_factory is not MISSING:
        return f.name in ("schema_version", "main_score")  # defaults for the writer; every file says them
    return True


def _non_finite_numbers(value: Any, where: tuple[str, ...]) -> Iterator[tuple[str, ...]]:
    """Paths of the NaN and infinite floats anywhere in a parsed JSON document."""
    if isinstance(value, float) and not math.isfinite(value):
        yield where
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from _non_finite_numbers(v, (*where, str(k)))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _non_finite_numbers(v, (*where, str(i)))
