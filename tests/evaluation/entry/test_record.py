"""The typed leaderboard entry: every committed result file reads into it and writes back the same document, its
fields are the published schema's, and bad documents are refused with the reason."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from ratio_bench.core.snapshots import is_snapshot
from ratio_bench.evaluation.entry.record import (
    Entry,
    ModelMeta,
    SubmissionError,
    published_schema,
    record_fields,
)

ROOT = Path(__file__).resolve().parents[3]
COMMITTED = sorted(
    p for p in (ROOT / "eval" / "results").rglob("*.json") if "schema_version" in json.loads(p.read_bytes())
)


def test_every_committed_entry_reads_into_the_record_and_round_trips():
    assert (
        len(COMMITTED) >= 80
    )  # every schema shape we have written: with and without cut-offs, ranks, judged
    for path in COMMITTED:
        doc = json.loads(path.read_bytes())
        entry = Entry.from_json(doc)
        assert json.dumps(entry.to_json(), sort_keys=True) == json.dumps(doc, sort_keys=True), path


def _at(schema: dict, where: str) -> dict:
    node = schema
    for part in where.split("/"):
        if part == "#":
            continue
        node = node["additionalProperties"] if part == "*" else node["properties"][part]
    return node


def test_the_records_fields_are_the_published_schemas_properties():
    schema = published_schema()
    for where, (record, names, required) in record_fields().items():
        node = _at(schema, where)
        assert set(names) == set(node["properties"]), (where, record.__name__)
        assert set(required) == set(node.get("required", [])), (where, record.__name__)


def test_model_meta_and_reproduce_round_trip_and_are_bounded():
    doc = json.loads(COMMITTED[0].read_bytes())
    doc |= {
        "reproduce": "ratio score --model m",
        "model_meta": {"parameters": 22_000_000, "hardware": "1x H100"},
    }
    entry = Entry.from_json(doc)
    assert entry.model_meta == ModelMeta(parameters=22_000_000, hardware="1x H100")
    assert entry.to_json() == doc
    with pytest.raises(SubmissionError, match="model_meta/parameters"):
        Entry.from_json(doc | {"model_meta": {"parameters": -1}})
    with pytest.raises(SubmissionError, match="model_meta"):
        Entry.from_json(doc | {"model_meta": {"flops": 1}})


def test_a_claimed_clean_mark_that_the_cutoff_does_not_give_is_refused():
    doc = next(
        json.loads(p.read_bytes()) for p in COMMITTED if json.loads(p.read_bytes()).get("clean") is not None
    )
    with pytest.raises(SubmissionError, match="invalid submission at clean"):
        Entry.from_json(doc | {"clean": not doc["clean"]})


READERS = ("evaluation", "leaderboard", "serve", "training", "judge")
ENTRY_KEYS = {
    "per_query", "n_queries", "judged", "tuned_for", "model_fingerprint", "trained_from", "training_data_cutoff",
    "training_data_cutoff_source", "scored_on", "same_weights_as", "provenance", "split_hashes", "split_sha256",
    "main_score", "schema_version", "model_meta", "reproduce", "n_candidates", "precision",
}  # fmt: skip
OWNERS = {
    "evaluation/entry/record.py",
    "evaluation/scoring/results.py",
}  # the record, and the writer of its document
OTHER_DOCUMENTS = {  # the same key names in documents that are not entries
    ("leaderboard/job.py", "n_queries"),  # the worker job's summary
    ("leaderboard/requests.py", "precision"),  # a queue request's loading dtype
    (
        "leaderboard/job.py",
        "reproduce",
    ),  # the worker's own document, as it writes it (before it is published)
    ("leaderboard/worker.py", "reproduce"),
    ("training/card.py", "training_data_cutoff"),  # a training summary's cut-offs
    ("training/card.py", "training_data_cutoff_source"),
}


def test_no_reader_takes_an_entry_apart_by_string_keys():
    """The entry document is read in one place: outside the record and its writer, no module subscripts or
    ``.get``s a key only an entry has."""
    src = ROOT / "src" / "ratio_bench"
    found = []
    for package in READERS:
        for path in sorted((src / package).rglob("*.py")):
            rel = path.relative_to(src).as_posix()
            if rel in OWNERS:
                continue
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                key = None
                if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant):
                    key = node.slice.value
                elif (
                    isinstance(node, ast.Call)
                    and isinstance(node.func, ast.Attribute)
                    and node.func.attr == "get"
                    and node.args
                    and isinstance(node.args[0], ast.Constant)
                ):
                    key = node.args[0].value
                if key in ENTRY_KEYS and (rel, key) not in OTHER_DOCUMENTS:
                    found.append(f"{rel}:{node.lineno} {key}")
    assert found == []


def test_the_schema_fast_path_skips_the_full_validator_only_for_sure_ranks(monkeypatch):
    from tests.helpers.entries import ranked_entry

    from ratio_bench.evaluation.entry import record as entry_module
    from ratio_bench.evaluation.scoring.results import SubmissionError

    good = ranked_entry("m", {"address": [1, 3, 0]})
    full = entry_module._validator()
    calls = []
    monkeypatch.setattr(entry_module, "_validator", lambda: calls.append(1) or full)
    entry_module._check_schema(good)
    assert calls == []  # a thousand entries' rank lists are not walked by jsonschema
    for bad, message in ((101, "101 is greater than the maximum of 100"), (True, "True is not of type 'integer'"),
                         ("1", "'1' is not of type 'integer'"), (-1, "-1 is less than the minimum of 0")):  # fmt: skip
        doc = ranked_entry("m", {"address": [1, 3, 0]})
        doc["per_query"]["address"]["gold_rank"][1] = bad
        with pytest.raises(SubmissionError, match=f"per_query/address/gold_rank/1: {message}"):
            entry_module._check_schema(doc)
    assert len(calls) == 4  # each doubt went to the full validator, whose message stands


def _written(path: Path, doc: dict) -> bytes:
    from ratio_bench.core.io import write_json

    write_json(path, doc)
    return path.read_bytes()


def test_an_entry_read_and_written_again_is_its_files_bytes(tmp_path, small_release):
    """Signed hashes are over file bytes: whatever re-writes an entry (read into the record, written with
    ``write_json``) must give back every committed file's bytes and a worker-written entry's, whose
    model_meta states unknowns as null."""
    from ratio_bench.evaluation.scoring.engine import score
    from ratio_bench.retrieval.cache import EmbeddingCache

    for path in COMMITTED:
        again = _written(tmp_path / "again.json", Entry.from_json(json.loads(path.read_bytes())).to_json())
        assert again == path.read_bytes(), path
    cache = EmbeddingCache(tmp_path / "cache", progress=False)
    worker_doc = score("all-MiniLM-L6-v2", small_release, ["test"], cache=cache).splits[0].entry.to_json()
    assert None in worker_doc["model_meta"].values()  # the null keys the old writer dropped
    worker = _written(tmp_path / "worker.json", worker_doc)
    again = _written(tmp_path / "again.json", Entry.from_json(json.loads(worker)).to_json())
    assert again == worker


def test_a_withheld_block_round_trips_and_its_rules_hold():
    """The withheld figures: aggregates with an interval that holds them, on another dated snapshot; no ranks."""
    doc = json.loads(COMMITTED[0].read_bytes())
    held = {
        "split": "test_2026_05",
        "split_sha256": "a" * 64,
        "results": {
            "address": {"recall_at_1": 0.1, "recall_at_10": 0.5, "mrr_at_10": 0.2, "mrr_at_100": 0.21}
        },
        "n_queries": {"address": 40},
        "interval": {"address": [0.15, 0.26]},
        "n_candidates": 1000,
    }
    entry = Entry.from_json(doc | {"withheld": held})
    assert entry.withheld.mean_score == 0.2 and entry.withheld.interval["address"] == (0.15, 0.26)
    assert entry.to_json()["withheld"] == held
    bad = {
        "gold_rank": held | {"gold_rank": {"address": [1, 2]}},
        "interval/address": held | {"interval": {"address": [0.3, 0.4]}},
        "withheld/split": held | {"split": doc["split"]}
        if is_snapshot(doc["split"])
        else held | {"split": "test"},
        "withheld: results": held | {"n_queries": {"address": 40, "specify": 3}},
    }
    for block in bad.values():  # keyed by what each one breaks
        with pytest.raises(SubmissionError, match="withheld"):
            Entry.from_json(doc | {"withheld": block})
