"""Fuzzing the three parsers of files we did not write: a leaderboard submission, an index manifest and a
build config. Each gets structured mutations of a valid document (wrong types, huge, negative and non-finite
numbers, deep nesting, long strings, unknown keys, path traversal, lone surrogates, cut-off text) and must end
in either a valid result or one :class:`RatioError` whose message is one line, quickly; any other exception is
a bug. Deterministic (``derandomize``), a few thousand examples in all."""

from __future__ import annotations

import copy
import json
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.helpers.corpus import shared_record, write_jsonl

from ratio_bench.core.errors import RatioError
from ratio_bench.dataset.config import load_config
from ratio_bench.evaluation.board.cells import judged_rows
from ratio_bench.evaluation.board.leaderboard import Board, group_releases, parse_entry
from ratio_bench.evaluation.board.ranks import ranked
from ratio_bench.evaluation.board.render.markdown import leaderboard_markdown
from ratio_bench.evaluation.board.view import Row, cells, columns
from ratio_bench.serve import candidates
from ratio_bench.serve.index import build_index, load_index

REPO = Path(__file__).resolve().parents[1]
FUZZ = settings(
    max_examples=600,
    deadline=5000,  # ms per example: generous for a shared machine, far below a hang
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

HOSTILE_STRINGS = [
    "",
    " ",
    "../../../../etc/passwd",
    "/etc/passwd",
    "..",
    "\ud800",
    "x\udfffy",
    "a\nb\r\nc",
    "\x00",
    "\u202e",
    "x" * 100_000,
    "~/x",
    "C:\\Windows\\x",
    "nan",
    "1e30",
    "-1",
    "<script>alert(1)</script>",
    "!!python/object/apply:os.system",
]
HOSTILE_NUMBERS = [-1, 0, 10**30, -(10**30), 2**63, 2**64, float("nan"), float("inf"), float("-inf"), 1e30]
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from(HOSTILE_NUMBERS),
    st.sampled_from(HOSTILE_STRINGS),
    st.text(st.characters(exclude_categories=()), max_size=20),  # surrogates included
)
keys = st.one_of(st.text(max_size=12), st.sampled_from(HOSTILE_STRINGS[:10]))
values = st.recursive(
    scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(keys, inner, max_size=4)),
    max_leaves=8,
)
deep = st.integers(1, 200).map(lambda depth: _nest(depth))
# (operation, path into the document, value, key): applied one to three times
mutations = st.lists(
    st.tuples(
        st.sampled_from(["replace", "delete", "add_key", "wrap"]),
        st.lists(st.integers(0, 40), max_size=6),
        st.one_of(values, deep),
        keys,
    ),
    min_size=1,
    max_size=3,
)


def _nest(depth: int) -> Any:
    value: Any = "x"
    for i in range(depth):
        value = [value] if i % 2 else {"k": value}
    return value


def mutate(doc: Any, ops: list[tuple[str, list[int], Any, str]]) -> Any:
    """``doc`` changed by each (operation, path, value, key); a path picks children modulo their number."""
    doc = copy.deepcopy(doc)
    for op, steps, value, key in ops:
        parent, slot, node = None, None, doc
        for step in steps:
            if isinstance(node, dict) and node:
                child = list(node)[step % len(node)]
            elif isinstance(node, list) and node:
                child = step % len(node)
            else:
                break
            parent, slot, node = node, child, node[child]
        if op == "add_key" and isinstance(node, dict):
            node[key] = value
            continue
        if op == "delete" and parent is not None:
            del parent[slot]
            continue
        new = [node] if op == "wrap" else value
        if parent is None:
            doc = new
        else:
            parent[slot] = new
    return doc


def assert_one_line(error: RatioError) -> None:
    message = str(error)
    assert message and "\n" not in message and "\r" not in message, repr(message[:300])


# --- submissions ----------------------------------------------------------------------------------------------

SUBMISSION = json.loads(
    (REPO / "eval/results/dev-test-all-MiniLM-L6-v2-generic-tuned-address.json").read_text()
)
OTHER = json.loads((REPO / "eval/results/dev-test-all-MiniLM-L6-v2-generic.json").read_text())


def check_submission(data: bytes) -> None:
    try:
        entry = parse_entry(data)
    except RatioError as e:
        assert_one_line(e)
        return
    # a valid entry goes on the board beside real ones, is ranked and rendered
    releases, rejected = group_releases(
        [("fuzz.json", entry), ("real.json", parse_entry(json.dumps(OTHER).encode()))]
    )
    board = Board(releases, tuple())
    for release in releases:
        for rank, e in ranked(release):
            cells(Row(rank, e), columns(release.entries))
        judged_rows(release)
    leaderboard_markdown(board)
    assert len(rejected) + sum(len(r.entries) for r in releases) == 2


@FUZZ
@given(mutations)
def test_fuzzed_submissions(ops):
    check_submission(json.dumps(mutate(SUBMISSION, ops)).encode("utf-8", "surrogatepass"))


@settings(FUZZ, max_examples=300)
@given(cut=st.integers(0, 10_000), junk=st.binary(max_size=8), truncate=st.booleans())
def test_fuzzed_submission_bytes(cut, junk, truncate):
    """Cut short, or with a few bytes overwritten (invalid UTF-8, stray brackets, NUL)."""
    text = json.dumps(SUBMISSION, indent=2).encode()
    cut %= len(text) + 1
    check_submission(text[:cut] if truncate else text[:cut] + junk + text[cut + len(junk) :])


# --- index manifests ------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def index_folder(tmp_path_factory) -> Path:
    """A BM25 index of two papers, plus a dense model's vector file (load_index does not load the model)."""
    library = tmp_path_factory.mktemp("library")
    write_jsonl(
        library / "papers.jsonl",
        [
            shared_record(
                "a/1", "Graph neural networks oversmooth node features as layers are stacked.", "2020"
            ),
            shared_record(
                "a/2", "Clipping each client update before aggregation bounds the leakage.", "2021"
            ),
        ],
    )
    out = tmp_path_factory.mktemp("indexes") / "idx"
    build_index(
        candidates.from_corpus([library]), {m: "bm25" for m in ("address", "broaden", "specify")}, out
    )
    np.save(out / "vectors" / "dense.npy", np.eye(2, 4, dtype=np.float32))
    manifest = json.loads((out / "manifest.json").read_text())
    manifest["models"]["dense"] = {
        "ref": "m",
        "name": "m",
        "kind": "dense",
        "setup": "generic",
        "query_prompt": "",
        "document_prompt": "",
        "trust_remote_code": False,
        "fingerprint": "0" * 64,
        "vectors": "vectors/dense.npy",
        "dim": 4,
    }
    manifest["moves"]["address"] = "dense"
    (out / "manifest.json").write_text(json.dumps(manifest))
    return out


def test_the_index_fixture_loads(index_folder):
    index = load_index(index_folder)
    assert index.vectors["dense"].shape == (2, 4) and index.moves == ["address", "broaden", "specify"]


@FUZZ
@given(ops=mutations)
def test_fuzzed_index_manifests(index_folder, tmp_path_factory, ops):
    folder = tmp_path_factory.getbasetemp() / "fuzzed-index"
    if not folder.exists():
        shutil.copytree(index_folder, folder)
    manifest = mutate(json.loads((index_folder / "manifest.json").read_text()), ops)
    (folder / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8", errors="surrogatepass")
    try:
        index = load_index(folder)
    except RatioError as e:
        assert_one_line(e)
        return
    for key in index.manifest.moves.values():  # every move names a model the searcher can set up
        model = index.manifest.models[key]
        assert model.kind in ("bm25", "dense") and isinstance(model.name, str)
        if model.kind == "dense":
            assert isinstance(model.ref, str) and isinstance(model.value("fingerprint"), str)
            assert isinstance(model.query_prompt, str) and index.vectors[key].shape[0] == len(index)


# --- build configs --------------------------------------------------------------------------------------------

CONFIG = yaml.safe_load((REPO / "dataset_scripts" / "dev.yaml").read_text(encoding="utf-8"))
YAML_SNIPPETS = [
    "a: &a [x, x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
    + "".join(f"c{i}: &c{i} [{', '.join(['*b' if i == 0 else f'*c{i - 1}'] * 10)}]\n" for i in range(8)),
    "x: &x [*x]\n",
    "[" * 1100 + "]" * 1100,  # past the recursion limit
    "!!python/object/apply:os.system [echo hi]\n",
    "release: !!binary aGk=\n",
    "\t- tab\n",
    "? [a, b]\n: c\n",
    'release:\n  name: "\\ud800"\n',
    "{\n",
]


def check_config(path: Path, root: Path) -> None:
    try:
        cfg = load_config(path, root)
    except RatioError as e:
        assert_one_line(e)
        return
    json.dumps(cfg.raw, sort_keys=True, allow_nan=False).encode()  # what the manifest will hold


@settings(FUZZ, max_examples=400)
@given(ops=mutations)
def test_fuzzed_build_configs(tmp_path_factory, ops):
    root = tmp_path_factory.getbasetemp()
    path = root / "fuzzed.yaml"
    path.write_text(yaml.safe_dump(mutate(CONFIG, ops), allow_unicode=False), encoding="utf-8")
    check_config(path, root)


@settings(FUZZ, max_examples=100)
@given(cut=st.integers(0, 5000), snippet=st.sampled_from(YAML_SNIPPETS), alone=st.booleans())
def test_fuzzed_build_config_text(tmp_path_factory, cut, snippet, alone):
    root = tmp_path_factory.getbasetemp()
    text = yaml.safe_dump(CONFIG)
    cut %= len(text) + 1
    path = root / "fuzzed-text.yaml"
    path.write_text(snippet if alone else text[:cut] + snippet + text[cut:], encoding="utf-8")
    check_config(path, root)
