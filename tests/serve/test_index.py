import json
import re
import shutil
from pathlib import Path

import numpy as np
import pytest

from ratio_bench.core.errors import UsageError
from ratio_bench.core.io import OutputDirError, write_json
from ratio_bench.retrieval.cache import EmbeddingCache
from ratio_bench.retrieval.registry import ModelUnavailableError, fingerprint, resolve
from ratio_bench.serve import candidates
from ratio_bench.serve.index import IndexFolderError, build_index, load_index, parse_model_args
from ratio_bench.serve.manifest import IndexManifest

BM25 = {m: "bm25" for m in ("address", "broaden", "specify")}


def test_one_model_or_one_per_move():
    assert parse_model_args(["bm25"]) == BM25
    assert parse_model_args(["bm25", "specify=bm25-bigram"]) == {**BM25, "specify": "bm25-bigram"}
    with pytest.raises(UsageError, match="--model.*unknown move 'expand'"):
        parse_model_args(["expand=bm25"])
    with pytest.raises(UsageError, match="no model for broaden"):
        parse_model_args(["address=bm25", "specify=bm25"])
    with pytest.raises(UsageError, match="twice"):
        parse_model_args(["bm25", "bm25-bigram"])
    with pytest.raises(UsageError, match="--model '': empty model reference"):
        parse_model_args([""])


def test_the_index_folder_describes_itself(bm25_index):
    manifest = json.loads((bm25_index / "manifest.json").read_text())
    assert manifest["kind"] == "index" and manifest["candidates"] == 8
    assert manifest["moves"] == {m: "bm25_unigram" for m in BM25}  # one model shared by the three moves
    assert manifest["models"]["bm25_unigram"]["kind"] == "bm25"
    index = load_index(bm25_index)
    assert len(index) == 8 and index.moves == ["address", "broaden", "specify"] and index.vectors == {}


def test_rebuilding_gives_the_same_bytes_and_replaces_only_our_index(library, tmp_path):
    first, second = tmp_path / "a", tmp_path / "b"
    for out in (first, second):
        build_index(candidates.from_corpus([library]), BM25, out)
    for name in ("manifest.json", "candidates.parquet"):
        assert (first / name).read_bytes() == (second / name).read_bytes()
    build_index(candidates.from_corpus([library]), {**BM25, "specify": "bm25-bigram"}, first)  # over our own
    assert load_index(first).manifest.moves["specify"] == "bm25-bigram_bigram"
    assert not list(tmp_path.glob(".*"))  # no staging or old folder left behind


def test_a_folder_of_the_users_is_never_overwritten(library, tmp_path):
    (tmp_path / "notes.txt").write_text("mine")
    with pytest.raises(OutputDirError, match="not a Ratio index") as refused:
        build_index(candidates.from_corpus([library]), BM25, tmp_path)
    assert refused.value.value == tmp_path  # `ratio index` puts --out in front
    assert (tmp_path / "notes.txt").read_text() == "mine" and sorted(p.name for p in tmp_path.iterdir()) == [
        "notes.txt"
    ]


def test_loading_says_what_is_wrong(tmp_path):
    with pytest.raises(IndexFolderError, match="folder not found"):
        load_index(tmp_path / "missing")
    (tmp_path / "manifest.json").write_text(json.dumps({"kind": "release"}))
    with pytest.raises(IndexFolderError, match="not a Ratio index"):
        load_index(tmp_path)


@pytest.fixture(scope="module")
def minilm():
    pytest.importorskip("sentence_transformers")
    try:
        return resolve("all-MiniLM-L6-v2")
    except ModelUnavailableError as e:
        pytest.skip(str(e))


def test_dense_vectors_are_encoded_once_per_model_and_reused_from_the_cache(library, tmp_path, minilm):
    cands = candidates.from_corpus([library])
    models = {"address": "all-MiniLM-L6-v2", "broaden": "all-MiniLM-L6-v2", "specify": "bm25"}
    cache = EmbeddingCache(tmp_path / "cache", progress=False)
    report = build_index(cands, models, tmp_path / "idx", cache=cache, ann_kind="hnsw")
    assert cache.misses == 1 and report.cache_hits == 0  # two moves, one encoding
    index = load_index(tmp_path / "idx")
    vectors = index.vectors["all-MiniLM-L6-v2_none"]
    assert vectors.shape == (8, 384) and np.allclose(np.linalg.norm(vectors, axis=1), 1, atol=1e-4)
    entry = index.manifest.models["all-MiniLM-L6-v2_none"]
    assert entry.ann.kind == "hnsw" and (tmp_path / "idx" / entry.ann.file).is_file()
    assert report.ann["all-MiniLM-L6-v2_none"].recall_at_10 == 1.0  # 8 vectors: HNSW is exact here
    again = build_index(cands, models, tmp_path / "idx2", cache=EmbeddingCache(tmp_path / "cache"))
    assert again.cache_hits == 1
    assert (tmp_path / "idx" / entry.vectors).read_bytes() == (tmp_path / "idx2" / entry.vectors).read_bytes()


def test_an_index_built_with_other_weights_is_refused_at_load(library, tmp_path, minilm):
    from ratio_bench.serve.search import Searcher

    models = {"address": "all-MiniLM-L6-v2", "broaden": "bm25", "specify": "bm25"}
    build_index(
        candidates.from_corpus([library]), models, tmp_path / "idx", cache=EmbeddingCache(tmp_path / "c")
    )
    manifest_path = tmp_path / "idx" / "manifest.json"
    manifest = json.loads(manifest_path.read_text())
    entry = manifest["models"]["all-MiniLM-L6-v2_none"]
    assert entry["fingerprint"] == fingerprint(minilm.path)  # recorded from the weights that encoded it
    entry["fingerprint"] = "0" * len(entry["fingerprint"])
    manifest_path.write_text(json.dumps(manifest))
    with pytest.raises(IndexFolderError, match="differs from the one the index was built with"):
        Searcher(load_index(tmp_path / "idx"))


def test_a_model_folder_is_copied_into_the_index(tiny_index, tmp_path):
    from ratio_bench.serve.search import Searcher

    index = tmp_path / "moved"
    shutil.copytree(tiny_index, index)
    manifest = json.loads((index / "manifest.json").read_text())
    entry = manifest["models"][manifest["moves"]["address"]]
    model = Path(entry["ref"])  # the folder it was built from, kept as a record only
    assert entry["folder"] == "models/bert_none" and fingerprint(index / entry["folder"]) == fingerprint(
        model
    )
    assert (
        manifest["moves"]["broaden"] == manifest["moves"]["address"]
        and len(list((index / "models").iterdir())) == 1
    )
    entry["ref"] = str(tmp_path / "gone")  # the index works without the original folder
    (index / "manifest.json").write_text(json.dumps(manifest))
    hits = Searcher(load_index(index)).search("gradient updates leak private data", ["address"], k=1)
    assert len(hits["address"]) == 1


def _outside(index: Path, rel: str) -> str:
    """A copy of the index's file ``rel`` beside the index (a file a manifest must not reach)."""
    target = index.parent / f"outside-{Path(rel).name}"
    shutil.copyfile(index / rel, target)
    return str(target)


@pytest.mark.parametrize(
    ("case", "culprit"),
    [
        ("absolute vectors", "manifest field models.bert_none.vectors"),
        ("dotdot vectors", "manifest field models.bert_none.vectors"),
        ("dotdot model folder", "manifest field models.bert_none.folder"),
        ("ann file linked out", "manifest field models.bert_none.ann.file"),
        ("candidates linked out", "candidates.parquet"),
        ("model file linked out", "manifest field models.bert_none.folder"),
    ],
)
def test_every_path_of_the_manifest_stays_inside_the_index(tiny_index, tmp_path, case, culprit):
    index = tmp_path / "index"
    shutil.copytree(tiny_index, index)
    manifest = json.loads((index / "manifest.json").read_text())
    entry = manifest["models"]["bert_none"]
    if case == "absolute vectors":
        entry["vectors"] = _outside(index, entry["vectors"])
    elif case == "dotdot vectors":
        entry["vectors"] = "vectors/../../" + Path(_outside(index, entry["vectors"])).name
    elif case == "dotdot model folder":
        shutil.copytree(index / entry["folder"], tmp_path / "model")
        entry["folder"] = "../model"
    else:  # a file of the index replaced by a link to a copy outside it
        rel = {
            "ann file linked out": entry["ann"]["file"],
            "candidates linked out": "candidates.parquet",
            "model file linked out": f"{entry['folder']}/config.json",
        }[case]
        outside = _outside(index, rel)
        (index / rel).unlink()
        (index / rel).symlink_to(outside)
    (index / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(IndexFolderError, match=re.escape(f"--index {index}: {culprit}")):
        load_index(index)


@pytest.mark.parametrize(
    ("edit", "words"),
    [
        (
            lambda m: m["models"]["bm25_unigram"].update(kind=["dense"]),
            "models.bm25_unigram.kind must be bm25",
        ),
        (
            lambda m: m["models"]["bm25_unigram"].update(setup=None),
            "models.bm25_unigram.setup must be a string",
        ),
        (lambda m: m["moves"].update(address="nope"), "moves.address must be the key of one of its models"),
        (lambda m: m["moves"].update({"a\nb": "bm25_unigram"}), "moves must be keyed by address"),
        (lambda m: m.update(models=[1]), "models must be a mapping"),
        (lambda m: m.update(source="x" * 500), "source must be a mapping, not 'xxx"),
        (lambda m: m.update(extra=1), "unknown field extra (an index manifest has kind, format"),
        (
            lambda m: m["models"].update({f"m{i}": m["models"]["bm25_unigram"] for i in range(3)}),
            "models must be at most 3 entries (one per move), not '4 entries'",
        ),
        (lambda m: m.update(candidates="8"), "candidates must be a whole number, not '8'"),
        (lambda m: m["models"]["bm25_unigram"].update(ref=7), "models.bm25_unigram.ref must be a string"),
    ],
    ids=[
        "kind",
        "setup",
        "move-target",
        "move-name",
        "models",
        "source",
        "unknown",
        "too-many",
        "count",
        "ref",
    ],
)
def test_a_malformed_manifest_is_one_line_naming_its_field(bm25_index, tmp_path, edit, words):
    """An index folder may come from someone else: a wrong type is named at load, not a TypeError later."""
    folder = tmp_path / "idx"
    shutil.copytree(bm25_index, folder)
    manifest = json.loads((folder / "manifest.json").read_text())
    edit(manifest)
    (folder / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(IndexFolderError) as caught:
        load_index(folder)
    message = str(caught.value)
    assert words in message and "\n" not in message and len(message) < 300 and "rebuild it" in message


def test_a_manifest_read_into_its_record_writes_back_its_files_bytes(bm25_index, tiny_index, tmp_path):
    """The record is the whole manifest: a BM25 index and a dense one (a model folder copied in, an ANN file)
    read into :class:`IndexManifest` and written again with ``write_json`` are their files' bytes."""
    for folder in (bm25_index, tiny_index):
        written = (folder / "manifest.json").read_bytes()
        manifest = IndexManifest.from_json(json.loads(written), folder)
        assert manifest == load_index(folder).manifest
        write_json(tmp_path / "again.json", manifest.to_json())
        assert (tmp_path / "again.json").read_bytes() == written, folder
    dense = manifest.model_for("address")
    assert dense.folder == "models/bert_none" and dense.ann.kind and dense.value("fingerprint")
